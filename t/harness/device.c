/* Running a harness case on a backend through the public API: buffers on the
 * context, a NaN-poisoned y, execution, and y back on the host. */
#include "t/harness/harness.h"

#include "kernels/common/float16.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* `span` host values v in dtype t, ready for adnn_memcpy. NULL when out of
 * memory. */
static void *values_to_dtype(adnn_dtype t, const double *v, int64_t span) {
  const size_t n = span > 0 ? (size_t)span : 1;
  if (t == ADNN_DTYPE_I32) {
    /* Class labels: integer values; a gap (NaN) becomes INT32_MIN. */
    int32_t *p = malloc(n * sizeof *p);
    if (p)
      for (int64_t i = 0; i < span; i++) p[i] = v[i] == v[i] ? (int32_t)v[i] : INT32_MIN;
    return p;
  }
  if (t == ADNN_DTYPE_I8 || t == ADNN_DTYPE_U8) {
    /* The values are already integers of the type's range (harness_round);
     * a gap becomes the type's minimum. */
    unsigned char *p = malloc(n);
    if (p)
      for (int64_t i = 0; i < span; i++) {
        const double e = v[i] == v[i] ? v[i] : (t == ADNN_DTYPE_I8 ? -128.0 : 0.0);
        p[i] = t == ADNN_DTYPE_I8 ? (unsigned char)(int8_t)e : (unsigned char)e;
      }
    return p;
  }
  if (t == ADNN_DTYPE_F16 || t == ADNN_DTYPE_BF16) {
    /* Values were rounded to the type by harness_round, so the narrowing here
     * is exact; a gap's NaN stays a NaN. */
    uint16_t *p = malloc(n * sizeof *p);
    if (p)
      for (int64_t i = 0; i < span; i++)
        p[i] = t == ADNN_DTYPE_F16 ? adnn_f64_to_f16(v[i]) : adnn_f64_to_bf16(v[i]);
    return p;
  }
  if (t == ADNN_DTYPE_F64) {
    double *p = malloc(n * sizeof *p);
    if (p) memcpy(p, v, (size_t)span * sizeof *p);
    return p;
  }
  float *p = malloc(n * sizeof *p);
  if (p)
    for (int64_t i = 0; i < span; i++) p[i] = (float)v[i];
  return p;
}

static void *to_dtype(const harness_buffer *b) {
  return values_to_dtype(b->desc.dtype, b->v, b->span);
}

static size_t bytes_of(const harness_buffer *b) {
  return (size_t)b->span * adnn_dtype_size(b->desc.dtype);
}

/* Whether the case's outputs differ in dtype (batch-norm training's F16 y
 * with F32 statistics, attention's F16 o with an F32 lse). */
static int mixed_outputs(const harness_case *c) {
  for (int o = 1; o < c->n_out; o++)
    if (c->out_desc[o].dtype != c->out_desc[0].dtype) return 1;
  return 0;
}

/* Where each output starts in the device buffer y, in bytes, and that
 * buffer's size: output o at its element offset in `out` times the largest
 * element size of the outputs, so that outputs of one dtype lie exactly as
 * in `out` (the gaps between them poisoned and checked) and outputs of
 * mixed dtypes do not overlap and start 64-byte aligned. */
static size_t output_layout(const harness_case *c, size_t *offset) {
  const int n_out = c->n_out > 0 ? c->n_out : 1;
  size_t esize = 0, total = 0;
  for (int o = 0; o < n_out; o++)
    if (adnn_dtype_size(c->out_desc[o].dtype) > esize) esize = adnn_dtype_size(c->out_desc[o].dtype);
  if (!mixed_outputs(c)) esize = adnn_dtype_size(c->out.desc.dtype);
  for (int o = 0; o < n_out; o++) {
    offset[o] = (size_t)c->out_offset[o] * esize;
    const int64_t span = harness_span(&c->out_desc[o]);
    const size_t end = offset[o] + (size_t)span * adnn_dtype_size(c->out_desc[o].dtype);
    if (end > total) total = end;
  }
  return mixed_outputs(c) ? total : bytes_of(&c->out);
}

adnn_status harness_upload(adnn_context *ctx, const harness_case *c, harness_device *dev,
                           const char **step) {
  memset(dev, 0, sizeof *dev);
  adnn_status st = ADNN_STATUS_SUCCESS;
  *step = NULL;
  for (int i = 0; i < c->n_in && st == ADNN_STATUS_SUCCESS; i++) {
    const size_t bytes = bytes_of(&c->in[i]);
    void *host = to_dtype(&c->in[i]);
    if (!host) {
      st = ADNN_STATUS_OUT_OF_MEMORY;
    } else {
      st = adnn_malloc(ctx, bytes ? bytes : 1, &dev->in[i]);
      if (st == ADNN_STATUS_SUCCESS)
        st = adnn_memcpy(ctx, dev->in[i], host, bytes, ADNN_MEMCPY_HOST_TO_DEVICE);
    }
    free(host);
    if (st != ADNN_STATUS_SUCCESS) *step = "input allocation or copy";
  }
  const int n_out = c->n_out > 0 ? c->n_out : 1;
  if (st == ADNN_STATUS_SUCCESS) {
    if (c->inplace >= 0 && n_out == 1) {
      dev->y = dev->in[c->inplace];
    } else {
      /* 0xFF bytes are a NaN in F32 and F64: an element the backend does not
       * write stays NaN and fails the comparison, and so does a write into
       * the gaps between outputs. Outputs read before they are written start
       * from their initial values instead (the rest is still NaN). */
      size_t offset[HARNESS_MAX_OUTPUTS];
      const size_t bytes = output_layout(c, offset);
      st = adnn_malloc(ctx, bytes ? bytes : 1, &dev->y);
      if (st == ADNN_STATUS_SUCCESS) {
        if (c->inout && !mixed_outputs(c)) {
          void *host = to_dtype(&c->out);
          st = host ? adnn_memcpy(ctx, dev->y, host, bytes, ADNN_MEMCPY_HOST_TO_DEVICE)
                    : ADNN_STATUS_OUT_OF_MEMORY;
          free(host);
        } else {
          /* 0xFFFF is a NaN in F16 and BF16 as well. */
          st = adnn_memset(ctx, dev->y, 0xFF, bytes);
          /* Mixed dtypes: each in-out output's initial values in its own. */
          for (int o = 0; c->inout && o < n_out && st == ADNN_STATUS_SUCCESS; o++) {
            if (!(c->inout & (1u << o))) continue;
            const int64_t span = harness_span(&c->out_desc[o]);
            void *host = values_to_dtype(c->out_desc[o].dtype, c->out.v + c->out_offset[o], span);
            st = host ? adnn_memcpy(ctx, (char *)dev->y + offset[o], host,
                                    (size_t)span * adnn_dtype_size(c->out_desc[o].dtype),
                                    ADNN_MEMCPY_HOST_TO_DEVICE)
                      : ADNN_STATUS_OUT_OF_MEMORY;
            free(host);
          }
        }
      }
      if (st != ADNN_STATUS_SUCCESS) *step = "output allocation or poisoning";
    }
  }
  if (st == ADNN_STATUS_SUCCESS) {
    size_t offset[HARNESS_MAX_OUTPUTS];
    output_layout(c, offset);
    for (int o = 0; o < n_out; o++) dev->out[o] = (char *)dev->y + offset[o];
    if (c->inplace >= 0) dev->out[0] = dev->in[c->inplace];
  }
  if (st != ADNN_STATUS_SUCCESS) harness_release(ctx, c, dev);
  return st;
}

adnn_status harness_execute(adnn_plan *plan, const harness_case *c, const harness_device *dev) {
  if (c->op != NULL && c->op->traits->outputs != NULL)
    return adnn_plan_execute_multi(plan, (const void *const *)dev->in, (size_t)c->n_in,
                                   (void *const *)dev->out, (size_t)c->n_out);
  return adnn_plan_execute(plan, (const void *const *)dev->in, (size_t)c->n_in, dev->out[0]);
}

/* Host values of `count` elements of dtype t at src into dst. */
static void from_dtype(adnn_dtype t, const void *src, double *dst, int64_t count) {
  for (int64_t i = 0; i < count; i++) {
    switch (t) {
      case ADNN_DTYPE_F64: dst[i] = ((const double *)src)[i]; break;
      case ADNN_DTYPE_F16: dst[i] = adnn_f16_to_f64(((const uint16_t *)src)[i]); break;
      case ADNN_DTYPE_BF16: dst[i] = adnn_bf16_to_f64(((const uint16_t *)src)[i]); break;
      case ADNN_DTYPE_I8: dst[i] = ((const int8_t *)src)[i]; break;
      case ADNN_DTYPE_I32: dst[i] = ((const int32_t *)src)[i]; break;
      default:
        if (t == ADNN_DTYPE_U8) dst[i] = ((const uint8_t *)src)[i];
        else dst[i] = ((const float *)src)[i];
        break;
    }
  }
}

adnn_status harness_download(adnn_context *ctx, const harness_case *c, const harness_device *dev,
                             double *y_out) {
  size_t offset[HARNESS_MAX_OUTPUTS];
  const size_t bytes = output_layout(c, offset);
  void *host = malloc(bytes ? bytes : 1);
  if (!host) return ADNN_STATUS_OUT_OF_MEMORY;
  adnn_status st = adnn_memcpy(ctx, host, dev->y, bytes, ADNN_MEMCPY_DEVICE_TO_HOST);
  if (st == ADNN_STATUS_SUCCESS && !mixed_outputs(c)) {
    from_dtype(c->out.desc.dtype, host, y_out, c->out.span);
  } else if (st == ADNN_STATUS_SUCCESS) {
    /* Each output in its own dtype; the elements between outputs stay NaN. */
    for (int64_t i = 0; i < c->out.span; i++) y_out[i] = NAN;
    for (int o = 0; o < c->n_out; o++)
      from_dtype(c->out_desc[o].dtype, (const char *)host + offset[o], y_out + c->out_offset[o],
                 harness_span(&c->out_desc[o]));
  }
  /* An output computed in place lives in its input's buffer. */
  if (st == ADNN_STATUS_SUCCESS && c->inplace >= 0 && c->n_out > 1) {
    const int64_t span = harness_span(&c->out_desc[0]);
    const adnn_dtype t0 = c->out_desc[0].dtype;
    const size_t b0 = (size_t)span * adnn_dtype_size(t0);
    st = adnn_memcpy(ctx, host, dev->out[0], b0, ADNN_MEMCPY_DEVICE_TO_HOST);
    if (st == ADNN_STATUS_SUCCESS) from_dtype(t0, host, y_out, span);
  }
  free(host);
  return st;
}

void harness_release(adnn_context *ctx, const harness_case *c, harness_device *dev) {
  for (int i = 0; i < c->n_in; i++)
    if (dev->in[i]) adnn_free(ctx, dev->in[i]);
  const int y_is_input = c->inplace >= 0 && (c->n_out > 0 ? c->n_out : 1) == 1;
  if (!y_is_input && dev->y) adnn_free(ctx, dev->y);
  memset(dev, 0, sizeof *dev);
}

void harness_run_with(adnn_context *ctx, const harness_case *c, harness_executor execute,
                      void *arg, harness_run *r) {
  memset(r, 0, sizeof *r);
  harness_device dev;
  const char *step = NULL;
  adnn_status st = harness_upload(ctx, c, &dev, &step);
  if (st == ADNN_STATUS_SUCCESS) {
    st = execute(arg, c, &dev);
    /* A plan runs as many times as wanted: the second run must give the same
     * y (it catches kernels that accumulate into y or consume plan state).
     * In place, or with outputs that are read and updated, a second run
     * would apply the op twice. */
    if (st == ADNN_STATUS_SUCCESS && c->inplace < 0 && !c->inout) st = execute(arg, c, &dev);
    if (st == ADNN_STATUS_SUCCESS) st = adnn_context_synchronize(ctx);
    if (st != ADNN_STATUS_SUCCESS) step = "execution";
    if (st == ADNN_STATUS_SUCCESS) {
      r->y = malloc((size_t)(c->out.span > 0 ? c->out.span : 1) * sizeof *r->y);
      st = r->y ? harness_download(ctx, c, &dev, r->y) : ADNN_STATUS_OUT_OF_MEMORY;
      if (st != ADNN_STATUS_SUCCESS) step = "copy back";
    }
    harness_release(ctx, c, &dev);
  }
  r->status = st;
  if (st == ADNN_STATUS_SUCCESS) {
    r->outcome = HARNESS_RAN;
    return;
  }
  free(r->y);
  r->y = NULL;
  r->outcome = HARNESS_FAILED;
  snprintf(r->message, sizeof r->message, "%s failed: %s: %s", step, adnn_status_name(st),
           adnn_last_error());
}

static adnn_status execute_plan(void *plan, const harness_case *c, const harness_device *dev) {
  return harness_execute(plan, c, dev);
}

void harness_run_plan(adnn_context *ctx, adnn_plan *plan, const harness_case *c, harness_run *r) {
  harness_run_with(ctx, c, execute_plan, plan, r);
  snprintf(r->algorithm, sizeof r->algorithm, "%s", adnn_plan_get_algorithm(plan));
}

void harness_run_case(adnn_context *ctx, const harness_case *c, harness_run *r) {
  adnn_plan *plan = NULL;
  adnn_status st = c->op->create(ctx, &c->desc, &plan);
  if (st != ADNN_STATUS_SUCCESS) {
    memset(r, 0, sizeof *r);
    r->status = st;
    r->outcome = st == ADNN_STATUS_NOT_SUPPORTED ? HARNESS_NOT_SUPPORTED : HARNESS_FAILED;
    snprintf(r->message, sizeof r->message, "plan creation: %s: %s", adnn_status_name(st),
             adnn_last_error());
    return;
  }
  harness_run_plan(ctx, plan, c, r);
  adnn_plan_destroy(plan);
}
