/* The workload of t/core-verbose.sh: on the cpu backend, one conv2d plan
 * (f32 NCHW, x 2x3x9x7, w 4x3x3x3, stride 2, padding 1, dilation 2 in
 * width) executed three times, then two GEMMs (m 5, n 6, k 7, the second
 * with A transposed). With ADNN_VERBOSE=2 that is 1 create line, 3 exec
 * lines for the conv and 2 for the GEMMs. Exits 0 when every call
 * succeeded; the verbose lines are on stderr. Seeded data (t/rng.h): the
 * values do not matter to the lines, but a run on zeros could hide a
 * backend's shortcut. */
#include <stdio.h>
#include <stdlib.h>

#include <adnn.h>

#include "t/rng.h"

#define CHECK(call)                                                                \
  do {                                                                             \
    adnn_status st_ = (call);                                                      \
    if (st_ != ADNN_STATUS_SUCCESS) {                                              \
      fprintf(stdout, "%s failed: %s: %s\n", #call, adnn_status_name(st_),         \
              adnn_last_error());                                                  \
      return 1;                                                                    \
    }                                                                              \
  } while (0)

static void fill(float *v, size_t n, tap_rng *r) {
  for (size_t i = 0; i < n; i++) v[i] = (float)tap_rng_uniform(r, -1.0, 1.0);
}

int main(void) {
  adnn_context *ctx;
  CHECK(adnn_context_create("cpu", &ctx));
  tap_rng r = tap_rng_seed(20240611);

  adnn_conv2d_desc d;
  adnn_conv2d_desc_init(&d);
  int64_t xd[4] = {2, 3, 9, 7}, wd[4] = {4, 3, 3, 3}, yd[4];
  adnn_tensor_desc_init(&d.x, ADNN_DTYPE_F32, 4, xd);
  adnn_tensor_desc_init(&d.w, ADNN_DTYPE_F32, 4, wd);
  d.stride_h = d.stride_w = 2;
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
  d.dilation_w = 2;
  CHECK(adnn_conv2d_output_dims(&d, yd));
  adnn_tensor_desc_init(&d.y, ADNN_DTYPE_F32, 4, yd);
  size_t xn = 2 * 3 * 9 * 7, wn = 4 * 3 * 3 * 3, yn = (size_t)(yd[0] * yd[1] * yd[2] * yd[3]);
  float *hx = malloc(xn * 4), *hw = malloc(wn * 4);
  if (hx == NULL || hw == NULL) return 1;
  fill(hx, xn, &r);
  fill(hw, wn, &r);
  void *x, *w, *y;
  CHECK(adnn_malloc(ctx, xn * 4, &x));
  CHECK(adnn_malloc(ctx, wn * 4, &w));
  CHECK(adnn_malloc(ctx, yn * 4, &y));
  CHECK(adnn_memcpy(ctx, x, hx, xn * 4, ADNN_MEMCPY_HOST_TO_DEVICE));
  CHECK(adnn_memcpy(ctx, w, hw, wn * 4, ADNN_MEMCPY_HOST_TO_DEVICE));
  adnn_plan *plan;
  CHECK(adnn_plan_create_conv2d(ctx, &d, &plan));
  const void *in[2] = {x, w};
  for (int i = 0; i < 3; i++) CHECK(adnn_plan_execute(plan, in, 2, y));
  adnn_plan_destroy(plan);

  float ha[35], hb[42];
  fill(ha, 35, &r);
  fill(hb, 42, &r);
  void *a, *b, *c;
  CHECK(adnn_malloc(ctx, sizeof ha, &a));
  CHECK(adnn_malloc(ctx, sizeof hb, &b));
  CHECK(adnn_malloc(ctx, 30 * 4, &c));
  CHECK(adnn_memcpy(ctx, a, ha, sizeof ha, ADNN_MEMCPY_HOST_TO_DEVICE));
  CHECK(adnn_memcpy(ctx, b, hb, sizeof hb, ADNN_MEMCPY_HOST_TO_DEVICE));
  CHECK(adnn_gemm(ctx, ADNN_DTYPE_F32, ADNN_NO_TRANS, ADNN_NO_TRANS, 5, 6, 7, 1.0, a, 7, b, 6,
                  0.0, c, 6));
  CHECK(adnn_gemm(ctx, ADNN_DTYPE_F32, ADNN_TRANS, ADNN_NO_TRANS, 5, 6, 7, 1.0, a, 5, b, 6,
                  0.5, c, 6));
  adnn_free(ctx, a);
  adnn_free(ctx, b);
  adnn_free(ctx, c);
  adnn_free(ctx, x);
  adnn_free(ctx, w);
  adnn_free(ctx, y);
  adnn_context_destroy(ctx);
  free(hx);
  free(hw);
  return 0;
}
