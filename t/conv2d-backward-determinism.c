/*
 * conv2d backward on the CPU plugin is deterministic: with a fixed seed, dw
 * and db (and dx) are bitwise identical when computed twice, by two
 * separate plans on the same data, for every CPU algorithm that runs the
 * problem, in F32 (where the order of additions shows in the last bits).
 * Batches of 8 and more make the weight gradient's reduction use several
 * chunks (kernels/cpu/conv2d_backward_weights-gemm.c).
 *
 * Each result's FNV-1a hash is printed as a diagnostic ("dw hash ..."), so
 * that runs under different ADNN_NUM_THREADS can be compared as well
 * (doc/numerics.md records that comparison).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "t/tap.h"

/* A status check usable in conditions: prints adnn_last_error() when the
 * status is not the expected one. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int status_is(adnn_status got, adnn_status want, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  const int good = ok(got == want, "%s", what);
  if (!good) diag("  got %s, expected %s: %s", adnn_status_name(got), adnn_status_name(want),
                  adnn_last_error());
  return good;
}


typedef struct geom {
  const char *name;
  int64_t n, c, h, w, k, r, s, sh, pad, g;
  int nhwc;
} geom;

static const geom geoms[] = {
    {"3x3 nchw", 8, 16, 14, 14, 32, 3, 3, 1, 1, 1, 0},
    {"3x3 s2 nhwc", 12, 16, 15, 15, 24, 3, 3, 2, 1, 1, 1},
    {"1x1 nchw", 16, 32, 7, 7, 64, 1, 1, 1, 0, 1, 0},
    {"1x1 nhwc", 16, 32, 7, 7, 64, 1, 1, 1, 0, 1, 1},
    {"dw 3x3 nhwc", 8, 32, 12, 12, 32, 3, 3, 1, 1, 32, 1},
    {"dw 3x3 nchw", 8, 32, 12, 12, 32, 3, 3, 2, 1, 32, 0},
    {"5x5 g2 nchw", 9, 8, 11, 11, 8, 5, 5, 1, 2, 2, 0},
};

static const adnn_conv2d_algorithm algos[] = {
    ADNN_CONV2D_ALGO_AUTO, ADNN_CONV2D_ALGO_IM2COL_GEMM, ADNN_CONV2D_ALGO_GEMM_1X1,
    ADNN_CONV2D_ALGO_DEPTHWISE_DIRECT};

static adnn_tensor_desc desc4(int64_t d0, int64_t d1, int64_t d2, int64_t d3, int nhwc) {
  adnn_tensor_desc t;
  memset(&t, 0, sizeof t);
  t.dtype = ADNN_DTYPE_F32;
  t.rank = 4;
  t.dims[0] = d0, t.dims[1] = d1, t.dims[2] = d2, t.dims[3] = d3;
  if (nhwc) {
    t.strides[1] = 1, t.strides[3] = d1, t.strides[2] = d1 * d3, t.strides[0] = d1 * d2 * d3;
  } else {
    t.strides[3] = 1, t.strides[2] = d3, t.strides[1] = d2 * d3, t.strides[0] = d1 * d2 * d3;
  }
  return t;
}

static uint64_t fnv(const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* One backward-weights (with db) or backward-data run on a fresh plan;
 * writes the result bytes into out (dw then db, or dx). Returns the status
 * of plan creation (NOT_SUPPORTED: the algorithm does not run it). */
static adnn_status run_once(adnn_context *ctx, const adnn_conv2d_desc *f, int weights,
                            adnn_conv2d_algorithm algo, void *const *dev, size_t out_bytes,
                            size_t db_bytes, unsigned char *out, const char **algo_name) {
  adnn_plan *plan = NULL;
  adnn_status st;
  if (weights) {
    adnn_conv2d_backward_weights_desc d;
    adnn_conv2d_backward_weights_desc_init(&d);
    d.forward = f;
    d.algorithm = algo;
    st = adnn_plan_create_conv2d_backward_weights(ctx, &d, &plan);
  } else {
    adnn_conv2d_backward_data_desc d;
    adnn_conv2d_backward_data_desc_init(&d);
    d.forward = f;
    d.algorithm = algo;
    st = adnn_plan_create_conv2d_backward_data(ctx, &d, &plan);
  }
  if (st != ADNN_STATUS_SUCCESS) return st;
  static char name[64];
  snprintf(name, sizeof name, "%s", adnn_plan_get_algorithm(plan));
  *algo_name = name;
  /* dev: x, w, dy, dx, dw, db. Outputs poisoned with NaN first. */
  if (weights) {
    (void)adnn_memset(ctx, dev[4], 0xff, out_bytes);
    (void)adnn_memset(ctx, dev[5], 0xff, db_bytes);
    const void *in[2] = {dev[0], dev[2]};
    void *outs[2] = {dev[4], dev[5]};
    st = adnn_plan_execute_multi(plan, in, 2, outs, 2);
    if (st == ADNN_STATUS_SUCCESS)
      st = adnn_memcpy(ctx, out, dev[4], out_bytes, ADNN_MEMCPY_DEVICE_TO_HOST);
    if (st == ADNN_STATUS_SUCCESS)
      st = adnn_memcpy(ctx, out + out_bytes, dev[5], db_bytes, ADNN_MEMCPY_DEVICE_TO_HOST);
  } else {
    (void)adnn_memset(ctx, dev[3], 0xff, out_bytes);
    const void *in[2] = {dev[2], dev[1]};
    st = adnn_plan_execute(plan, in, 2, dev[3]);
    if (st == ADNN_STATUS_SUCCESS)
      st = adnn_memcpy(ctx, out, dev[3], out_bytes, ADNN_MEMCPY_DEVICE_TO_HOST);
  }
  if (st == ADNN_STATUS_SUCCESS) st = adnn_context_synchronize(ctx);
  adnn_plan_destroy(plan);
  return st == ADNN_STATUS_SUCCESS ? ADNN_STATUS_SUCCESS : ADNN_STATUS_EXECUTION_FAILED;
}

int main(void) {
  adnn_context *ctx = NULL;
  if (adnn_context_create("cpu", &ctx) != ADNN_STATUS_SUCCESS)
    return tap_skip_all("the cpu backend is not available");
  for (size_t i = 0; i < sizeof geoms / sizeof geoms[0]; i++) {
    const geom *gm = &geoms[i];
    adnn_conv2d_desc f;
    adnn_conv2d_desc_init(&f);
    f.x = desc4(gm->n, gm->c, gm->h, gm->w, gm->nhwc);
    f.w = desc4(gm->k, gm->c / gm->g, gm->r, gm->s, gm->nhwc);
    f.stride_h = f.stride_w = gm->sh;
    f.pad_top = f.pad_bottom = f.pad_left = f.pad_right = gm->pad;
    f.groups = gm->g;
    f.has_bias = 1;
    adnn_tensor_desc_init(&f.bias, ADNN_DTYPE_F32, 1, &gm->k);
    int64_t yd[4];
    if (!status_is(adnn_conv2d_output_dims(&f, yd), ADNN_STATUS_SUCCESS, "%s: dims", gm->name))
      continue;
    f.y = desc4(yd[0], yd[1], yd[2], yd[3], gm->nhwc);
    const size_t nx = (size_t)(gm->n * gm->c * gm->h * gm->w);
    const size_t nw = (size_t)(gm->k * (gm->c / gm->g) * gm->r * gm->s);
    const size_t ny = (size_t)(yd[0] * yd[1] * yd[2] * yd[3]), nb = (size_t)gm->k;
    const size_t sizes[6] = {nx, nw, ny, nx, nw, nb};
    void *dev[6] = {0};
    int good = 1;
    for (int b = 0; b < 6; b++)
      good &= adnn_malloc(ctx, sizes[b] * sizeof(float), &dev[b]) == ADNN_STATUS_SUCCESS;
    float *host = malloc((nx > ny ? nx : ny) * sizeof(float));
    unsigned char *first = malloc((nx + nw + nb) * sizeof(float));
    unsigned char *second = malloc((nx + nw + nb) * sizeof(float));
    if (!good || !host || !first || !second) tap_bail("out of memory");
    /* A fixed seed per geometry; x, w and dy uniform in [-1, 1). */
    tap_rng r = tap_rng_seed(1234 + i);
    for (int b = 0; b < 3; b++) {
      for (size_t e = 0; e < sizes[b]; e++) host[e] = (float)tap_rng_uniform(&r, -1, 1);
      (void)adnn_memcpy(ctx, dev[b], host, sizes[b] * sizeof(float), ADNN_MEMCPY_HOST_TO_DEVICE);
    }
    for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++)
      for (int weights = 0; weights <= 1; weights++) {
        const size_t out_bytes = (weights ? nw : nx) * sizeof(float);
        const size_t db_bytes = weights ? nb * sizeof(float) : 0;
        const char *an = adnn_conv2d_algorithm_name(algos[a]), *ran = "";
        adnn_status s1 = run_once(ctx, &f, weights, algos[a], dev, out_bytes, db_bytes ? db_bytes : 0,
                                  first, &ran);
        if (s1 == ADNN_STATUS_NOT_SUPPORTED) continue;
        adnn_status s2 = run_once(ctx, &f, weights, algos[a], dev, out_bytes, db_bytes, second,
                                  &ran);
        const size_t total = out_bytes + db_bytes;
        ok(s1 == ADNN_STATUS_SUCCESS && s2 == ADNN_STATUS_SUCCESS &&
               memcmp(first, second, total) == 0,
           "%s: %s (%s, %s) is bitwise identical on a second plan", gm->name,
           weights ? "dw and db" : "dx", an, ran);
        diag("%s %s %s hash %016llx", gm->name, weights ? "dw+db" : "dx", ran,
             (unsigned long long)fnv(first, total));
      }
    for (int b = 0; b < 6; b++) adnn_free(ctx, dev[b]);
    free(host);
    free(first);
    free(second);
  }
  adnn_context_destroy(ctx);
  return tap_done();
}
