/*
 * Forward DNN operations: descriptor validation, output shapes, and the plan
 * lifecycle (create, execute, destroy). Every check that does not need the
 * device happens here, so a plugin receives only well-formed problems (see
 * adnn_plugin_op in include/adnn/plugin.h).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/loader.h"
#include "core/tuner.h"

#define MAX_INPUTS 5

struct adnn_plan {
  adnn_context *ctx;
  adnn_plugin_plan *pplan;
  adnn_plugin_op op;
  const char *op_name;
  /* Spans in bytes, for the aliasing checks at execution. */
  size_t input_bytes[MAX_INPUTS];
  size_t output_bytes;
  /* Bit i set: the output may be exactly input i (same pointer; the layouts
   * were checked to be identical at creation). */
  unsigned inplace_inputs;
  /* NULL, or why the algorithm is fixed (set by the op's create function). */
  const char *forced;
  /* How the algorithm was chosen: the candidates and the reason. */
  adnn__tune_record tune;
};

/* ------------------------------------------------------------------------ */
/* Shared checks                                                             */
/* ------------------------------------------------------------------------ */

static adnn_status check_struct_size(const char *func, size_t have, size_t need) {
  if (have < need)
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "%s: desc->struct_size is %zu but at least %zu is needed; initialize the "
                      "descriptor with its *_init() function", func, have, need);
  return ADNN_STATUS_SUCCESS;
}

/* Validates one tensor and optionally its rank; returns its span in bytes. */
static adnn_status check_tensor(const char *func, const char *name, const adnn_tensor_desc *t,
                                int rank_lo, int rank_hi, size_t *bytes) {
  char prefix[128];
  snprintf(prefix, sizeof prefix, "%s: %s", func, name);
  int64_t span;
  adnn_status st = adnn__tensor_check(prefix, t, &span, NULL);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (t->rank < rank_lo || t->rank > rank_hi) {
    if (rank_lo == rank_hi)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s has rank %d, expected %d", func, name,
                        (int)t->rank, rank_lo);
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s has rank %d, expected %d..%d", func, name,
                      (int)t->rank, rank_lo, rank_hi);
  }
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] < 1)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s dims[%d] is %lld; sizes must be >= 1",
                        func, name, i, (long long)t->dims[i]);
  if (bytes) *bytes = (size_t)span * adnn_dtype_size(t->dtype);
  return ADNN_STATUS_SUCCESS;
}

static adnn_status check_output(const char *func, const char *name, const adnn_tensor_desc *t) {
  if (!adnn__tensor_strides_disjoint(t))
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "%s: the strides of %s make different elements share memory; an output "
                      "needs distinct addresses", func, name);
  return ADNN_STATUS_SUCCESS;
}

static adnn_status check_dtype(const char *func, const char *name, const adnn_tensor_desc *t,
                               adnn_dtype want) {
  if (t->dtype != want)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s has dtype %s but x has %s; all tensors of "
                      "an op share one dtype", func, name, adnn_dtype_name(t->dtype),
                      adnn_dtype_name(want));
  if (want != ADNN_DTYPE_F32 && want != ADNN_DTYPE_F64)
    return adnn__fail(ADNN_STATUS_NOT_SUPPORTED, "%s: dtype %s is not supported (f32 and f64 are)",
                      func, adnn_dtype_name(want));
  return ADNN_STATUS_SUCCESS;
}

static void format_dims(const adnn_tensor_desc *t, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  used += (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < t->rank && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
  if (used < size) snprintf(buf + used, size - used, "]");
}

static int same_dims(const adnn_tensor_desc *a, const adnn_tensor_desc *b) {
  if (a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return 0;
  return 1;
}

static int same_layout(const adnn_tensor_desc *a, const adnn_tensor_desc *b) {
  if (!same_dims(a, b) || a->dtype != b->dtype) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] > 1 && a->strides[i] != b->strides[i]) return 0;
  return 1;
}

static adnn_status check_same_dims(const char *func, const char *name, const adnn_tensor_desc *y,
                                   const adnn_tensor_desc *x) {
  if (same_dims(y, x)) return ADNN_STATUS_SUCCESS;
  char a[160], b[160];
  format_dims(y, a, sizeof a);
  format_dims(x, b, sizeof b);
  return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s has dims %s but must match x %s", func, name,
                    a, b);
}

static adnn_status check_activation(const char *func, const adnn_activation *a) {
  if ((int)a->kind < ADNN_ACTIVATION_IDENTITY || (int)a->kind > ADNN_ACTIVATION_HARDSWISH)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: activation kind %d is not an "
                      "adnn_activation_kind", func, (int)a->kind);
  if (!isfinite(a->alpha) || !isfinite(a->beta))
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: activation alpha (%g) and beta (%g) must be "
                      "finite", func, a->alpha, a->beta);
  if (a->kind == ADNN_ACTIVATION_CLAMP && a->alpha > a->beta)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: clamp lower bound alpha (%g) is above the "
                      "upper bound beta (%g)", func, a->alpha, a->beta);
  return ADNN_STATUS_SUCCESS;
}

static adnn_status check_epsilon(const char *func, double eps) {
  if (!(eps >= 0.0) || !isfinite(eps))
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: epsilon (%g) must be finite and >= 0", func, eps);
  return ADNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Output shapes                                                             */
/* ------------------------------------------------------------------------ */

const char *adnn_conv2d_algorithm_name(adnn_conv2d_algorithm algo) {
  return adnn_plugin_conv2d_algorithm_name(algo);
}

static adnn_status conv2d_params(const char *func, const adnn_conv2d_desc *d, int64_t out[4]) {
  adnn_status st;
  if ((st = check_tensor(func, "x", &d->x, 4, 4, NULL)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_tensor(func, "w", &d->w, 4, 4, NULL)) != ADNN_STATUS_SUCCESS) return st;
  int64_t n = d->x.dims[0], c = d->x.dims[1], h = d->x.dims[2], w = d->x.dims[3];
  int64_t k = d->w.dims[0], cg = d->w.dims[1], r = d->w.dims[2], s = d->w.dims[3];
  if (d->groups < 1)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: groups (%lld) must be >= 1", func,
                      (long long)d->groups);
  if (c % d->groups != 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: input channels (%lld) not divisible by groups "
                      "(%lld)", func, (long long)c, (long long)d->groups);
  if (k % d->groups != 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: output channels (%lld, w dims[0]) not divisible "
                      "by groups (%lld)", func, (long long)k, (long long)d->groups);
  if (cg != c / d->groups)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: w has %lld input channels per group (dims[1]) "
                      "but x has %lld channels in %lld group(s), i.e. %lld per group", func,
                      (long long)cg, (long long)c, (long long)d->groups,
                      (long long)(c / d->groups));
  if (d->stride_h < 1 || d->stride_w < 1)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: strides (%lld, %lld) must be >= 1", func,
                      (long long)d->stride_h, (long long)d->stride_w);
  if (d->dilation_h < 1 || d->dilation_w < 1)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: dilations (%lld, %lld) must be >= 1", func,
                      (long long)d->dilation_h, (long long)d->dilation_w);
  if (d->pad_top < 0 || d->pad_bottom < 0 || d->pad_left < 0 || d->pad_right < 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: padding (top %lld, bottom %lld, left %lld, "
                      "right %lld) must be >= 0", func, (long long)d->pad_top,
                      (long long)d->pad_bottom, (long long)d->pad_left, (long long)d->pad_right);
  /* All these are bounded by validated tensor sizes, but the user controls
   * pads and dilation freely: compute in checked arithmetic. */
  int64_t eff_r, eff_s, ph, pw;
  if (!adnn__mul_i64(d->dilation_h, r - 1, &eff_r) || !adnn__mul_i64(d->dilation_w, s - 1, &eff_s) ||
      !adnn__add_i64(h, d->pad_top, &ph) || !adnn__add_i64(ph, d->pad_bottom, &ph) ||
      !adnn__add_i64(w, d->pad_left, &pw) || !adnn__add_i64(pw, d->pad_right, &pw))
    return adnn__fail(ADNN_STATUS_BAD_PARAM_OVERFLOW, "%s: padding or dilation overflows", func);
  int64_t p = ph - eff_r - 1 >= 0 ? (ph - eff_r - 1) / d->stride_h + 1 : 0;
  int64_t q = pw - eff_s - 1 >= 0 ? (pw - eff_s - 1) / d->stride_w + 1 : 0;
  if (p < 1 || q < 1)
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "%s: the output would be empty (%lld x %lld): the dilated filter (%lld x "
                      "%lld) is larger than the padded input (%lld x %lld)", func, (long long)p,
                      (long long)q, (long long)(eff_r + 1), (long long)(eff_s + 1),
                      (long long)ph, (long long)pw);
  out[0] = n;
  out[1] = k;
  out[2] = p;
  out[3] = q;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_conv2d_output_dims(const adnn_conv2d_desc *desc, int64_t dims[4]) {
  const char *func = "adnn_conv2d_output_dims";
  if (desc == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: desc is NULL", func);
  if (dims == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: dims is NULL", func);
  adnn_status st = check_struct_size(func, desc->struct_size, sizeof *desc);
  if (st != ADNN_STATUS_SUCCESS) return st;
  return conv2d_params(func, desc, dims);
}

static adnn_status pool2d_params(const char *func, const adnn_pool2d_desc *d, int64_t out[4]) {
  adnn_status st;
  if ((st = check_tensor(func, "x", &d->x, 4, 4, NULL)) != ADNN_STATUS_SUCCESS) return st;
  if ((int)d->kind < ADNN_POOL_MAX || (int)d->kind > ADNN_POOL_AVG_EXCLUDE_PAD)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: kind %d is not an adnn_pool_kind", func,
                      (int)d->kind);
  if (d->kernel_h < 1 || d->kernel_w < 1)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: kernel (%lld x %lld) must be >= 1", func,
                      (long long)d->kernel_h, (long long)d->kernel_w);
  if (d->stride_h < 1 || d->stride_w < 1)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: strides (%lld, %lld) must be >= 1", func,
                      (long long)d->stride_h, (long long)d->stride_w);
  const int64_t pads[4] = {d->pad_top, d->pad_bottom, d->pad_left, d->pad_right};
  const int64_t kern[4] = {d->kernel_h, d->kernel_h, d->kernel_w, d->kernel_w};
  static const char *const names[4] = {"pad_top", "pad_bottom", "pad_left", "pad_right"};
  for (int i = 0; i < 4; i++)
    if (pads[i] < 0 || pads[i] > kern[i] / 2)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s (%lld) must be in 0..kernel/2 (%lld), so "
                        "that every window overlaps the image", func, names[i],
                        (long long)pads[i], (long long)(kern[i] / 2));
  int64_t h = d->x.dims[2], w = d->x.dims[3];
  /* Pads are at most half the kernel, so H + kernel bounds every position the
   * kernels compute (window ends included); checked like conv2d's. */
  int64_t ext;
  if (!adnn__add_i64(h, d->kernel_h, &ext) || !adnn__add_i64(w, d->kernel_w, &ext))
    return adnn__fail(ADNN_STATUS_BAD_PARAM_OVERFLOW, "%s: the kernel (%lld x %lld) plus the "
                      "input size overflows", func, (long long)d->kernel_h,
                      (long long)d->kernel_w);
  int64_t span_h = h + d->pad_top + d->pad_bottom - d->kernel_h;
  int64_t span_w = w + d->pad_left + d->pad_right - d->kernel_w;
  if (span_h < 0 || span_w < 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: the kernel (%lld x %lld) is larger than the "
                      "padded input (%lld x %lld)", func, (long long)d->kernel_h,
                      (long long)d->kernel_w, (long long)(span_h + d->kernel_h),
                      (long long)(span_w + d->kernel_w));
  int64_t p, q;
  if (d->ceil_mode) {
    /* ceil(span / stride), and the drop test (p - 1) * stride >= h + pad as
     * p - 1 > (h + pad - 1) / stride: no overflow even with a huge stride. */
    p = span_h / d->stride_h + (span_h % d->stride_h != 0) + 1;
    q = span_w / d->stride_w + (span_w % d->stride_w != 0) + 1;
    /* A last window that starts in the bottom/right padding is dropped. */
    if (p - 1 > (h + d->pad_top - 1) / d->stride_h) p--;
    if (q - 1 > (w + d->pad_left - 1) / d->stride_w) q--;
  } else {
    p = span_h / d->stride_h + 1;
    q = span_w / d->stride_w + 1;
  }
  out[0] = d->x.dims[0];
  out[1] = d->x.dims[1];
  out[2] = p;
  out[3] = q;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_pool2d_output_dims(const adnn_pool2d_desc *desc, int64_t dims[4]) {
  const char *func = "adnn_pool2d_output_dims";
  if (desc == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: desc is NULL", func);
  if (dims == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: dims is NULL", func);
  adnn_status st = check_struct_size(func, desc->struct_size, sizeof *desc);
  if (st != ADNN_STATUS_SUCCESS) return st;
  return pool2d_params(func, desc, dims);
}

static adnn_status check_output_dims(const char *func, const adnn_tensor_desc *y,
                                     const int64_t want[4]) {
  adnn_tensor_desc w;
  memset(&w, 0, sizeof w);
  w.rank = 4;
  for (int i = 0; i < 4; i++) w.dims[i] = want[i];
  if (same_dims(y, &w)) return ADNN_STATUS_SUCCESS;
  char a[160], b[160];
  format_dims(y, a, sizeof a);
  format_dims(&w, b, sizeof b);
  return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: y has dims %s but the op produces %s", func, a, b);
}

/* ------------------------------------------------------------------------ */
/* Plan creation                                                             */
/* ------------------------------------------------------------------------ */

static adnn_status plan_begin(const char *func, adnn_context *ctx, const void *desc,
                              adnn_plan **plan) {
  adnn_status st = adnn__check_context(func, ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (desc == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: desc is NULL", func);
  if (plan == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: plan is NULL", func);
  return ADNN_STATUS_SUCCESS;
}

/* Hands a validated op to the plugin and wraps the result. */
static adnn_status plan_finish(const char *func, adnn_context *ctx, adnn_plan *proto,
                               adnn_plan **out) {
  const adnn_plugin *t = ctx->table;
  if (!ADNN_PLUGIN_HAS(t, plan_create) || !ADNN_PLUGIN_HAS(t, plan_execute) ||
      !ADNN_PLUGIN_HAS(t, plan_destroy))
    return adnn__fail(ADNN_STATUS_NOT_SUPPORTED, "%s: backend %s does not implement DNN "
                      "operations", func, adnn_context_backend(ctx));
  adnn_plan *p = malloc(sizeof *p);
  if (p == NULL) return adnn__fail(ADNN_STATUS_OUT_OF_MEMORY, "%s: out of host memory", func);
  *p = *proto;
  p->ctx = ctx;
  p->op_name = func;
  p->op.struct_size = sizeof p->op;
  p->op.flags = ctx->flags;
  /* The tuner picks the candidate (measuring on scratch buffers when needed)
   * and creates the plugin plan. */
  adnn_status st = adnn__tuner_plan_create(ctx, &p->op, p->input_bytes, p->output_bytes,
                                           p->forced, &p->tune, &p->pplan);
  if (st != ADNN_STATUS_SUCCESS) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", adnn_last_error());
    adnn__tune_record_free(&p->tune);
    free(p);
    /* Plugins usually name the function already; avoid saying it twice. */
    if (strncmp(msg, func, strlen(func)) == 0) return adnn__fail(st, "%s", msg);
    return adnn__fail(st, "%s: backend %s: %s", func, adnn_context_backend(ctx), msg);
  }
  *out = p;
  return ADNN_STATUS_SUCCESS;
}

static adnn_conv2d_algorithm conv2d_algo_from_env(void) {
  const char *v = getenv("ADNN_CONV2D_ALGO");
  if (v == NULL || *v == '\0') return ADNN_CONV2D_ALGO_AUTO;
  for (int a = ADNN_CONV2D_ALGO_AUTO; a <= ADNN_CONV2D_ALGO_DIRECT; a++)
    if (strcmp(v, adnn_conv2d_algorithm_name((adnn_conv2d_algorithm)a)) == 0)
      return (adnn_conv2d_algorithm)a;
  adnn__log(ADNN_LOG_WARN, "core", "ignoring ADNN_CONV2D_ALGO=\"%s\": not an algorithm name", v);
  return ADNN_CONV2D_ALGO_AUTO;
}

adnn_status adnn_plan_create_conv2d(adnn_context *ctx, const adnn_conv2d_desc *desc,
                                    adnn_plan **plan) {
  const char *func = "adnn_plan_create_conv2d";
  adnn_status st = plan_begin(func, ctx, desc, plan);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_struct_size(func, desc->struct_size, sizeof *desc)) != ADNN_STATUS_SUCCESS) return st;
  adnn_plan proto;
  memset(&proto, 0, sizeof proto);
  adnn_conv2d_desc *d = &proto.op.desc.conv2d;
  *d = *desc;
  d->struct_size = sizeof *d;
  int64_t want[4];
  if ((st = conv2d_params(func, d, want)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_tensor(func, "x", &d->x, 4, 4, &proto.input_bytes[0])) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_tensor(func, "w", &d->w, 4, 4, &proto.input_bytes[1])) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_tensor(func, "y", &d->y, 4, 4, &proto.output_bytes)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_output_dims(func, &d->y, want)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_output(func, "y", &d->y)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "x", &d->x, d->x.dtype)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "w", &d->w, d->x.dtype)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "y", &d->y, d->x.dtype)) != ADNN_STATUS_SUCCESS) return st;
  proto.op.n_inputs = 2;
  if (d->has_bias) {
    d->has_bias = 1;
    if ((st = check_tensor(func, "bias", &d->bias, 1, 1, &proto.input_bytes[2])) != ADNN_STATUS_SUCCESS) return st;
    if (d->bias.dims[0] != want[1])
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: bias has %lld elements but there are %lld "
                        "output channels", func, (long long)d->bias.dims[0], (long long)want[1]);
    if ((st = check_dtype(func, "bias", &d->bias, d->x.dtype)) != ADNN_STATUS_SUCCESS) return st;
    proto.op.n_inputs = 3;
  }
  if ((st = check_activation(func, &d->activation)) != ADNN_STATUS_SUCCESS) return st;
  if ((int)d->algorithm < ADNN_CONV2D_ALGO_AUTO || (int)d->algorithm > ADNN_CONV2D_ALGO_DIRECT)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: algorithm %d is not an adnn_conv2d_algorithm",
                      func, (int)d->algorithm);
  if (d->algorithm != ADNN_CONV2D_ALGO_AUTO) {
    proto.forced = "forced by the descriptor";
  } else {
    d->algorithm = conv2d_algo_from_env();
    if (d->algorithm != ADNN_CONV2D_ALGO_AUTO) proto.forced = "forced by ADNN_CONV2D_ALGO";
  }
  proto.op.kind = ADNN_PLUGIN_OP_CONV2D;
  return plan_finish(func, ctx, &proto, plan);
}

adnn_status adnn_plan_create_pool2d(adnn_context *ctx, const adnn_pool2d_desc *desc,
                                    adnn_plan **plan) {
  const char *func = "adnn_plan_create_pool2d";
  adnn_status st = plan_begin(func, ctx, desc, plan);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_struct_size(func, desc->struct_size, sizeof *desc)) != ADNN_STATUS_SUCCESS) return st;
  adnn_plan proto;
  memset(&proto, 0, sizeof proto);
  adnn_pool2d_desc *d = &proto.op.desc.pool2d;
  *d = *desc;
  d->struct_size = sizeof *d;
  d->ceil_mode = d->ceil_mode ? 1 : 0;
  int64_t want[4];
  if ((st = pool2d_params(func, d, want)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_tensor(func, "x", &d->x, 4, 4, &proto.input_bytes[0])) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_tensor(func, "y", &d->y, 4, 4, &proto.output_bytes)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_output_dims(func, &d->y, want)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_output(func, "y", &d->y)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "x", &d->x, d->x.dtype)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "y", &d->y, d->x.dtype)) != ADNN_STATUS_SUCCESS) return st;
  proto.op.kind = ADNN_PLUGIN_OP_POOL2D;
  proto.op.n_inputs = 1;
  return plan_finish(func, ctx, &proto, plan);
}

/* The checks shared by ops whose y has x's dims (activation, softmax, batch
 * norm, norm): both tensors valid with rank >= rank_lo, same dims, a disjoint
 * y, one dtype; records the spans, and allows running in place when y has x's
 * exact layout. */
static adnn_status check_elementwise_io(const char *func, const adnn_tensor_desc *x,
                                       const adnn_tensor_desc *y, int rank_lo, adnn_plan *proto) {
  adnn_status st;
  if ((st = check_tensor(func, "x", x, rank_lo, ADNN_MAX_RANK, &proto->input_bytes[0])) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_tensor(func, "y", y, rank_lo, ADNN_MAX_RANK, &proto->output_bytes)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_same_dims(func, "y", y, x)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_output(func, "y", y)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "x", x, x->dtype)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "y", y, x->dtype)) != ADNN_STATUS_SUCCESS) return st;
  if (same_layout(x, y)) proto->inplace_inputs = 1u << 0;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_plan_create_activation(adnn_context *ctx, const adnn_activation_desc *desc,
                                        adnn_plan **plan) {
  const char *func = "adnn_plan_create_activation";
  adnn_status st = plan_begin(func, ctx, desc, plan);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_struct_size(func, desc->struct_size, sizeof *desc)) != ADNN_STATUS_SUCCESS) return st;
  adnn_plan proto;
  memset(&proto, 0, sizeof proto);
  adnn_activation_desc *d = &proto.op.desc.activation;
  *d = *desc;
  d->struct_size = sizeof *d;
  if ((st = check_elementwise_io(func, &d->x, &d->y, 0, &proto)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_activation(func, &d->activation)) != ADNN_STATUS_SUCCESS) return st;
  proto.op.kind = ADNN_PLUGIN_OP_ACTIVATION;
  proto.op.n_inputs = 1;
  return plan_finish(func, ctx, &proto, plan);
}

adnn_status adnn_plan_create_softmax(adnn_context *ctx, const adnn_softmax_desc *desc,
                                     adnn_plan **plan) {
  const char *func = "adnn_plan_create_softmax";
  adnn_status st = plan_begin(func, ctx, desc, plan);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_struct_size(func, desc->struct_size, sizeof *desc)) != ADNN_STATUS_SUCCESS) return st;
  adnn_plan proto;
  memset(&proto, 0, sizeof proto);
  adnn_softmax_desc *d = &proto.op.desc.softmax;
  *d = *desc;
  d->struct_size = sizeof *d;
  d->log = d->log ? 1 : 0;
  if ((st = check_elementwise_io(func, &d->x, &d->y, 1, &proto)) != ADNN_STATUS_SUCCESS) return st;
  if (d->axis < -d->x.rank || d->axis >= d->x.rank)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: axis %d is out of range for rank %d (use "
                      "-%d..%d)", func, (int)d->axis, (int)d->x.rank, (int)d->x.rank,
                      (int)d->x.rank - 1);
  if (d->axis < 0) d->axis += d->x.rank;
  proto.op.kind = ADNN_PLUGIN_OP_SOFTMAX;
  proto.op.n_inputs = 1;
  return plan_finish(func, ctx, &proto, plan);
}

adnn_status adnn_plan_create_batchnorm(adnn_context *ctx, const adnn_batchnorm_desc *desc,
                                       adnn_plan **plan) {
  const char *func = "adnn_plan_create_batchnorm";
  adnn_status st = plan_begin(func, ctx, desc, plan);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_struct_size(func, desc->struct_size, sizeof *desc)) != ADNN_STATUS_SUCCESS) return st;
  adnn_plan proto;
  memset(&proto, 0, sizeof proto);
  adnn_batchnorm_desc *d = &proto.op.desc.batchnorm;
  *d = *desc;
  d->struct_size = sizeof *d;
  if ((st = check_elementwise_io(func, &d->x, &d->y, 2, &proto)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_epsilon(func, d->epsilon)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_activation(func, &d->activation)) != ADNN_STATUS_SUCCESS) return st;
  size_t vec = (size_t)d->x.dims[1] * adnn_dtype_size(d->x.dtype);
  for (int i = 1; i < 5; i++) proto.input_bytes[i] = vec;
  proto.op.kind = ADNN_PLUGIN_OP_BATCHNORM;
  proto.op.n_inputs = 5;
  return plan_finish(func, ctx, &proto, plan);
}

adnn_status adnn_plan_create_norm(adnn_context *ctx, const adnn_norm_desc *desc, adnn_plan **plan) {
  const char *func = "adnn_plan_create_norm";
  adnn_status st = plan_begin(func, ctx, desc, plan);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_struct_size(func, desc->struct_size, sizeof *desc)) != ADNN_STATUS_SUCCESS) return st;
  adnn_plan proto;
  memset(&proto, 0, sizeof proto);
  adnn_norm_desc *d = &proto.op.desc.norm;
  *d = *desc;
  d->struct_size = sizeof *d;
  d->has_gain = d->has_gain ? 1 : 0;
  d->has_bias = d->has_bias ? 1 : 0;
  if ((st = check_elementwise_io(func, &d->x, &d->y, 1, &proto)) != ADNN_STATUS_SUCCESS) return st;
  if ((int)d->kind != ADNN_NORM_LAYER && (int)d->kind != ADNN_NORM_RMS)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: kind %d is not an adnn_norm_kind", func, (int)d->kind);
  if (d->norm_dims < 1 || d->norm_dims > d->x.rank)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: norm_dims (%d) must be in 1..rank (%d)", func,
                      (int)d->norm_dims, (int)d->x.rank);
  if ((st = check_epsilon(func, d->epsilon)) != ADNN_STATUS_SUCCESS) return st;
  int64_t dsize = 1;
  for (int i = d->x.rank - d->norm_dims; i < d->x.rank; i++) dsize *= d->x.dims[i];
  size_t vec = (size_t)dsize * adnn_dtype_size(d->x.dtype);
  proto.op.n_inputs = 1 + d->has_gain + d->has_bias;
  for (int i = 1; i < proto.op.n_inputs; i++) proto.input_bytes[i] = vec;
  proto.op.kind = ADNN_PLUGIN_OP_NORM;
  return plan_finish(func, ctx, &proto, plan);
}

/* Right-aligns `t` to rank `rank` for broadcasting: missing leading dims and
 * size-1 dims get stride 0. Fails if a dim is neither 1 nor y's. */
static adnn_status broadcast_to(const char *func, const char *name, adnn_tensor_desc *t,
                                const adnn_tensor_desc *y) {
  adnn_tensor_desc out = *t;
  int shift = y->rank - t->rank;
  out.rank = y->rank;
  for (int i = 0; i < y->rank; i++) {
    int src = i - shift;
    int64_t dim = src >= 0 ? t->dims[src] : 1;
    int64_t stride = src >= 0 ? t->strides[src] : 0;
    if (dim != y->dims[i] && dim != 1) {
      char a[160], b[160];
      format_dims(t, a, sizeof a);
      format_dims(y, b, sizeof b);
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s %s does not broadcast to y %s: dim %d is "
                        "%lld, expected 1 or %lld", func, name, a, b, i, (long long)dim,
                        (long long)y->dims[i]);
    }
    out.dims[i] = y->dims[i];
    out.strides[i] = dim == 1 ? 0 : stride;
  }
  *t = out;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_plan_create_binary(adnn_context *ctx, const adnn_binary_desc *desc,
                                    adnn_plan **plan) {
  const char *func = "adnn_plan_create_binary";
  adnn_status st = plan_begin(func, ctx, desc, plan);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_struct_size(func, desc->struct_size, sizeof *desc)) != ADNN_STATUS_SUCCESS) return st;
  adnn_plan proto;
  memset(&proto, 0, sizeof proto);
  adnn_binary_desc *d = &proto.op.desc.binary;
  *d = *desc;
  d->struct_size = sizeof *d;
  if ((st = check_tensor(func, "a", &d->a, 0, ADNN_MAX_RANK, &proto.input_bytes[0])) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_tensor(func, "b", &d->b, 0, ADNN_MAX_RANK, &proto.input_bytes[1])) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_tensor(func, "y", &d->y, 0, ADNN_MAX_RANK, &proto.output_bytes)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_output(func, "y", &d->y)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "a", &d->a, d->a.dtype)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "b", &d->b, d->a.dtype)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "y", &d->y, d->a.dtype)) != ADNN_STATUS_SUCCESS) return st;
  if ((int)d->op < ADNN_BINARY_ADD || (int)d->op > ADNN_BINARY_MIN)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: op %d is not an adnn_binary_op", func, (int)d->op);
  if (!isfinite(d->alpha) || !isfinite(d->beta))
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: alpha (%g) and beta (%g) must be finite", func,
                      d->alpha, d->beta);
  int rank = d->a.rank > d->b.rank ? d->a.rank : d->b.rank;
  if (d->y.rank != rank)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: y has rank %d but broadcasting a (rank %d) and "
                      "b (rank %d) gives rank %d", func, (int)d->y.rank, (int)d->a.rank,
                      (int)d->b.rank, rank);
  if (same_layout(&d->a, &d->y)) proto.inplace_inputs |= 1u << 0;
  if (same_layout(&d->b, &d->y)) proto.inplace_inputs |= 1u << 1;
  const adnn_tensor_desc a0 = d->a, b0 = d->b;
  if ((st = broadcast_to(func, "a", &d->a, &d->y)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = broadcast_to(func, "b", &d->b, &d->y)) != ADNN_STATUS_SUCCESS) return st;
  /* y must be exactly the broadcast shape: a dim of y > 1 needs a or b to have
   * it (broadcast_to accepted 1 on both sides). */
  for (int i = 0; i < rank; i++) {
    int ia = i - (rank - a0.rank), ib = i - (rank - b0.rank);
    int64_t da = ia >= 0 ? a0.dims[ia] : 1, db = ib >= 0 ? b0.dims[ib] : 1;
    if (d->y.dims[i] != (da > db ? da : db)) {
      char ya[160];
      format_dims(&d->y, ya, sizeof ya);
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: y %s is not the broadcast shape of a and b: "
                        "dim %d is %lld but a and b have %lld and %lld there", func, ya, i,
                        (long long)d->y.dims[i], (long long)da, (long long)db);
    }
  }
  proto.op.kind = ADNN_PLUGIN_OP_BINARY;
  proto.op.n_inputs = 2;
  return plan_finish(func, ctx, &proto, plan);
}

/* ------------------------------------------------------------------------ */
/* Execution                                                                 */
/* ------------------------------------------------------------------------ */

static int overlaps(const void *a, size_t na, const void *b, size_t nb) {
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return na > 0 && nb > 0 && x < y + nb && y < x + na;
}

adnn_status adnn_plan_execute(adnn_plan *plan, const void *const *inputs, size_t n_inputs,
                              void *output) {
  const char *func = "adnn_plan_execute";
  if (plan == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: plan is NULL", func);
  size_t want = (size_t)plan->op.n_inputs;
  if (n_inputs != want)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: the %s plan takes %zu input(s), got %zu", func,
                      plan->op_name + strlen("adnn_plan_create_"), want, n_inputs);
  if (inputs == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: inputs is NULL", func);
  for (size_t i = 0; i < want; i++)
    if (inputs[i] == NULL)
      return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: inputs[%zu] is NULL", func, i);
  if (output == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: output is NULL", func);
  for (size_t i = 0; i < want; i++) {
    if (!overlaps(inputs[i], plan->input_bytes[i], output, plan->output_bytes)) continue;
    if (inputs[i] == output && (plan->inplace_inputs & (1u << i))) continue;
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "%s: the output overlaps inputs[%zu]; this op runs in place only when the "
                      "output is exactly that input with the same layout", func, i);
  }
  return plan->ctx->table->plan_execute(plan->pplan, inputs, output);
}

void adnn_plan_destroy(adnn_plan *plan) {
  if (plan == NULL) return;
  plan->ctx->table->plan_destroy(plan->pplan);
  adnn__tune_record_free(&plan->tune);
  free(plan);
}

adnn_status adnn_plan_candidate_count(const adnn_plan *plan, size_t *count) {
  if (plan == NULL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "adnn_plan_candidate_count: plan is NULL");
  if (count == NULL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "adnn_plan_candidate_count: count is NULL");
  *count = plan->tune.count;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_plan_candidate_get(const adnn_plan *plan, size_t index,
                                    const adnn_plan_candidate **candidate) {
  const char *func = "adnn_plan_candidate_get";
  if (plan == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: plan is NULL", func);
  if (candidate == NULL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: candidate is NULL", func);
  if (index >= plan->tune.count)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: index %zu is out of range (the plan has %zu "
                      "candidate%s)", func, index, plan->tune.count,
                      plan->tune.count == 1 ? "" : "s");
  *candidate = &plan->tune.results[index].pub;
  return ADNN_STATUS_SUCCESS;
}

const char *adnn_plan_choice_reason(const adnn_plan *plan) {
  return plan ? plan->tune.reason : "";
}

const char *adnn_plan_algorithm(const adnn_plan *plan) {
  if (plan == NULL) return "";
  const char *name = NULL;
  size_t ws = 0;
  if (ADNN_PLUGIN_HAS(plan->ctx->table, plan_describe))
    plan->ctx->table->plan_describe(plan->pplan, &name, &ws);
  return name ? name : "";
}

size_t adnn_plan_workspace_bytes(const adnn_plan *plan) {
  if (plan == NULL) return 0;
  const char *name = NULL;
  size_t ws = 0;
  if (ADNN_PLUGIN_HAS(plan->ctx->table, plan_describe))
    plan->ctx->table->plan_describe(plan->pplan, &name, &ws);
  return ws;
}
