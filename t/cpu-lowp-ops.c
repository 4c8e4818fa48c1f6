/* The CPU plugin's F16/BF16 softmax, log-softmax, layer / RMS norm, batch
 * norm (inference, NCHW [2, rows, 1, L]) and pool2d (max and both averages,
 * NCHW and NHWC with padded pixels, strides 1 and 2, a global window) against
 * their contract (kernels/cpu/softmax.c, norm.c, batchnorm.c, pool2d.c): on
 * packed rows (pool2d: the same layouts) the 16-bit
 * result is, bit for bit, the F32 kernel's result on the widened input
 * rounded once to the 16-bit type (round to nearest even, float16.h). Sizes
 * are odd so that the converters' and the F32 kernels' vector tails run;
 * outputs are poisoned with a NaN pattern the kernels never produce, so an
 * unwritten element fails. The plan must report the vector implementation
 * (cpu_simd), so a fall back to the reference loops fails too. Run it under
 * ADNN_CPU_SIMD=avx2 / base for the other levels (the plugin caps the level
 * to what the CPU has). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "kernels/common/float16.h"
#include "t/rng.h"
#include "t/tap.h"

#define POISON 0x7d5bu /* a signalling-NaN pattern: never a converter's output */

static adnn_context *ctx;

static void *dev(size_t bytes) {
  void *p = NULL;
  if (adnn_malloc(ctx, bytes, &p) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  return p;
}

static void put(void *d, const void *h, size_t bytes) {
  if (adnn_memcpy(ctx, d, h, bytes, ADNN_MEMCPY_HOST_TO_DEVICE) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
}

static void get(void *h, const void *d, size_t bytes) {
  if (adnn_memcpy(ctx, h, d, bytes, ADNN_MEMCPY_DEVICE_TO_HOST) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
}

/* op 0 softmax, 1 log-softmax, 2 layer norm (gain, bias), 3 RMS norm (gain),
 * 4 batch norm over [2, rows, 1, L] (scale, shift, mean, var of rows). */
static adnn_plan *make_plan(int op, adnn_dtype dt, int64_t rows, int64_t L) {
  const int64_t dims[2] = {rows, L};
  adnn_plan *plan = NULL;
  adnn_status st;
  if (op == 4) {
    const int64_t d4[4] = {2, rows, 1, L};
    adnn_batchnorm_desc d;
    adnn_batchnorm_desc_init(&d);
    adnn_tensor_desc_init(&d.x, dt, 4, d4);
    d.y = d.x;
    st = adnn_plan_create_batchnorm(ctx, &d, &plan);
  } else if (op < 2) {
    adnn_softmax_desc d;
    adnn_softmax_desc_init(&d);
    d.axis = 1;
    d.log = op == 1;
    adnn_tensor_desc_init(&d.x, dt, 2, dims);
    d.y = d.x;
    st = adnn_plan_create_softmax(ctx, &d, &plan);
  } else {
    adnn_norm_desc d;
    adnn_norm_desc_init(&d);
    d.kind = op == 2 ? ADNN_NORM_LAYER : ADNN_NORM_RMS;
    d.has_gain = 1;
    d.has_bias = op == 2;
    adnn_tensor_desc_init(&d.x, dt, 2, dims);
    d.y = d.x;
    st = adnn_plan_create_norm(ctx, &d, &plan);
  }
  if (st != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  return plan;
}

static void check(int op, adnn_dtype dt, int64_t rows, int64_t L, tap_rng *r) {
  static const char *names[5] = {"softmax", "log_softmax", "layer norm", "rms norm", "batchnorm"};
  const char *tn = dt == ADNN_DTYPE_F16 ? "f16" : "bf16";
  const size_t n = (size_t)(rows * L) * (op == 4 ? 2 : 1);
  const size_t np = (size_t)(rows > L ? rows : L); /* parameter vector length */
  uint16_t *xh = malloc(n * 2), *yh = malloc(n * 2);
  float *xf = malloc(n * 4), *yf = malloc(n * 4), *gb = malloc(np * 16);
  if (!xh || !yh || !xf || !yf || !gb) tap_bail("out of memory");
  /* Rows with a large offset test the norms' hi + lo mean; softmax gets a
   * spread wide enough that exponentials underflow in F16. */
  for (size_t i = 0; i < n; i++) {
    const double v = tap_rng_uniform(r, -1.0, 1.0) * (op < 2 ? 12.0 : 3.0) + (op >= 2 ? 5.0 : 0.0);
    xh[i] = dt == ADNN_DTYPE_F16 ? adnn_f32_to_f16((float)v) : adnn_f32_to_bf16((float)v);
    xf[i] = dt == ADNN_DTYPE_F16 ? adnn_f16_to_f32(xh[i]) : adnn_bf16_to_f32(xh[i]);
  }
  for (size_t j = 0; j < 4 * np; j++) gb[j] = (float)tap_rng_uniform(r, 0.5, 1.5);
  adnn_plan *p16 = make_plan(op, dt, rows, L), *p32 = make_plan(op, ADNN_DTYPE_F32, rows, L);
  const char *alg = adnn_plan_algorithm(p16);
  ok(alg && strcmp(alg, "cpu_simd") == 0, "%s %s [%lld,%lld]: plan runs cpu_simd (%s)", names[op],
     tn, (long long)rows, (long long)L, alg ? alg : "null");
  void *dx16 = dev(n * 2), *dy16 = dev(n * 2), *dx32 = dev(n * 4), *dy32 = dev(n * 4);
  void *dg = dev(np * 4), *db = dev(np * 4), *dm = dev(np * 4), *dv = dev(np * 4);
  put(dx16, xh, n * 2);
  put(dx32, xf, n * 4);
  put(dg, gb, np * 4);
  put(db, gb + np, np * 4);
  put(dm, gb + 2 * np, np * 4);
  put(dv, gb + 3 * np, np * 4);
  for (size_t i = 0; i < n; i++) yh[i] = POISON;
  put(dy16, yh, n * 2);
  const void *in16[5] = {dx16, dg, db, dm, dv}, *in32[5] = {dx32, dg, db, dm, dv};
  const size_t nin = op == 4 ? 5 : op < 2 ? 1 : op == 2 ? 3 : 2;
  if (adnn_plan_execute(p16, in16, nin, dy16) != ADNN_STATUS_SUCCESS ||
      adnn_plan_execute(p32, in32, nin, dy32) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
  get(yh, dy16, n * 2);
  get(yf, dy32, n * 4);
  size_t bad = 0, first = n;
  for (size_t i = 0; i < n; i++) {
    const uint16_t want = dt == ADNN_DTYPE_F16 ? adnn_f32_to_f16(yf[i]) : adnn_f32_to_bf16(yf[i]);
    if (yh[i] != want) {
      if (!bad) first = i;
      bad++;
    }
  }
  ok(bad == 0, "%s %s [%lld,%lld]: equals the F32 kernel on the widened input, rounded once "
     "(%zu of %zu differ%s)", names[op], tn, (long long)rows, (long long)L, bad, n,
     bad ? ", see below" : "");
  if (bad)
    diag("first at %zu: got 0x%04x want 0x%04x (f32 %.9g)", first, yh[first],
         dt == ADNN_DTYPE_F16 ? adnn_f32_to_f16(yf[first]) : adnn_f32_to_bf16(yf[first]),
         (double)yf[first]);
  adnn_free(ctx, dx16);
  adnn_free(ctx, dy16);
  adnn_free(ctx, dx32);
  adnn_free(ctx, dy32);
  adnn_free(ctx, dg);
  adnn_free(ctx, db);
  adnn_free(ctx, dm);
  adnn_free(ctx, dv);
  adnn_plan_destroy(p16);
  adnn_plan_destroy(p32);
  free(xh);
  free(yh);
  free(xf);
  free(yf);
  free(gb);
}

/* [N, C, H, W] in NCHW, or NHWC with `pad` spare elements after each
 * pixel's C channels. */
static void image_desc(adnn_tensor_desc *t, adnn_dtype dt, int64_t N, int64_t C, int64_t H,
                       int64_t W, int nhwc, int64_t pad) {
  const int64_t dims[4] = {N, C, H, W};
  if (!nhwc) {
    adnn_tensor_desc_init(t, dt, 4, dims);
    return;
  }
  const int64_t px = C + pad, strides[4] = {H * W * px, 1, W * px, px};
  adnn_tensor_desc_init_strided(t, dt, 4, dims, strides);
}

/* The span of a descriptor in elements. */
static size_t span(const adnn_tensor_desc *t) {
  size_t s = 1;
  for (int i = 0; i < t->rank; i++) s += (size_t)((t->dims[i] - 1) * t->strides[i]);
  return s;
}

static void check_pool(adnn_pool_kind kind, adnn_dtype dt, int nhwc, int64_t N, int64_t C,
                       int64_t H, int64_t W, int64_t k, int64_t stride, int64_t pad,
                       tap_rng *r) {
  static const char *kinds[] = {"max", "avg_include_pad", "avg_exclude_pad"};
  const char *tn = dt == ADNN_DTYPE_F16 ? "f16" : "bf16";
  const int64_t P = (H + 2 * pad - k) / stride + 1, Q = (W + 2 * pad - k) / stride + 1;
  adnn_pool2d_desc d16, d32;
  adnn_pool2d_desc_init(&d16);
  d16.kind = kind;
  d16.kernel_h = d16.kernel_w = k;
  d16.stride_h = d16.stride_w = stride;
  d16.pad_top = d16.pad_bottom = d16.pad_left = d16.pad_right = pad;
  d32 = d16;
  image_desc(&d16.x, dt, N, C, H, W, nhwc, nhwc ? 3 : 0);
  image_desc(&d16.y, dt, N, C, P, Q, nhwc, nhwc ? 1 : 0);
  image_desc(&d32.x, ADNN_DTYPE_F32, N, C, H, W, nhwc, nhwc ? 3 : 0);
  image_desc(&d32.y, ADNN_DTYPE_F32, N, C, P, Q, nhwc, nhwc ? 1 : 0);
  adnn_plan *p16 = NULL, *p32 = NULL;
  if (adnn_plan_create_pool2d(ctx, &d16, &p16) != ADNN_STATUS_SUCCESS ||
      adnn_plan_create_pool2d(ctx, &d32, &p32) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
  const char *alg = adnn_plan_algorithm(p16);
  char what[160];
  snprintf(what, sizeof what, "pool2d %s %s %s [%lld,%lld,%lld,%lld] k%lld s%lld p%lld", kinds[kind],
           tn, nhwc ? "nhwc" : "nchw", (long long)N, (long long)C, (long long)H, (long long)W,
           (long long)k, (long long)stride, (long long)pad);
  ok(alg && strcmp(alg, "cpu_simd") == 0, "%s: plan runs cpu_simd (%s)", what, alg ? alg : "null");
  const size_t nx = span(&d16.x), ny = span(&d16.y);
  uint16_t *xh = malloc(nx * 2), *yh = malloc(ny * 2);
  float *xf = malloc(nx * 4), *yf = malloc(ny * 4);
  if (!xh || !yh || !xf || !yf) tap_bail("out of memory");
  for (size_t i = 0; i < nx; i++) {
    const float v = (float)tap_rng_uniform(r, -4.0, 4.0);
    xh[i] = dt == ADNN_DTYPE_F16 ? adnn_f32_to_f16(v) : adnn_f32_to_bf16(v);
    xf[i] = dt == ADNN_DTYPE_F16 ? adnn_f16_to_f32(xh[i]) : adnn_bf16_to_f32(xh[i]);
  }
  for (size_t i = 0; i < ny; i++) yh[i] = POISON;
  void *dx16 = dev(nx * 2), *dy16 = dev(ny * 2), *dx32 = dev(nx * 4), *dy32 = dev(ny * 4);
  put(dx16, xh, nx * 2);
  put(dx32, xf, nx * 4);
  put(dy16, yh, ny * 2);
  const void *in16[1] = {dx16}, *in32[1] = {dx32};
  if (adnn_plan_execute(p16, in16, 1, dy16) != ADNN_STATUS_SUCCESS ||
      adnn_plan_execute(p32, in32, 1, dy32) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
  get(yh, dy16, ny * 2);
  get(yf, dy32, ny * 4);
  /* Every element of y (NHWC's spare element after each pixel stays the
   * poison: the kernel must not write it). */
  size_t bad = 0, checked = 0, first = ny;
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t p = 0; p < P; p++)
        for (int64_t q = 0; q < Q; q++) {
          const size_t i = (size_t)(n * d16.y.strides[0] + c * d16.y.strides[1] +
                                    p * d16.y.strides[2] + q * d16.y.strides[3]);
          const uint16_t want =
              dt == ADNN_DTYPE_F16 ? adnn_f32_to_f16(yf[i]) : adnn_f32_to_bf16(yf[i]);
          checked++;
          if (yh[i] != want) {
            if (!bad) first = i;
            bad++;
          }
        }
  size_t gaps_written = 0;
  if (nhwc)
    for (size_t i = (size_t)C; i < ny; i += (size_t)(C + 1)) gaps_written += yh[i] != POISON;
  ok(bad == 0 && gaps_written == 0,
     "%s: equals the F32 kernel on the widened input, rounded once (%zu of %zu differ, %zu gap "
     "elements written)",
     what, bad, checked, gaps_written);
  if (bad) diag("first at %zu: got 0x%04x, f32 %.9g", first, yh[first], (double)yf[first]);
  adnn_free(ctx, dx16);
  adnn_free(ctx, dy16);
  adnn_free(ctx, dx32);
  adnn_free(ctx, dy32);
  adnn_plan_destroy(p16);
  adnn_plan_destroy(p32);
  free(xh);
  free(yh);
  free(xf);
  free(yf);
}

int main(void) {
  if (adnn_context_create("cpu", &ctx) != ADNN_STATUS_SUCCESS) {
    return tap_skip_all("no cpu backend");
  }
  tap_rng r = tap_rng_seed(20261202);
  static const int64_t shapes[][2] = {{3, 1}, {5, 7}, {4, 33}, {3, 1027}, {2, 4099}};
  for (int op = 0; op < 5; op++)
    for (int t = 0; t < 2; t++)
      for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        check(op, t ? ADNN_DTYPE_BF16 : ADNN_DTYPE_F16, shapes[k][0], shapes[k][1], &r);
  /* pool2d: {kind, nhwc, N, C, H, W, k, stride, pad}; odd sizes for the
   * vector tails, stride 2 for the even-lane pass, a global 7x7 window. */
  static const int64_t pools[][9] = {
      {ADNN_POOL_MAX, 0, 2, 3, 17, 19, 3, 2, 1},
      {ADNN_POOL_AVG_INCLUDE_PAD, 0, 1, 4, 9, 37, 3, 1, 1},
      {ADNN_POOL_AVG_EXCLUDE_PAD, 0, 2, 2, 8, 8, 2, 2, 0},
      {ADNN_POOL_AVG_EXCLUDE_PAD, 0, 1, 5, 7, 7, 7, 1, 0},
      {ADNN_POOL_MAX, 1, 2, 19, 11, 13, 3, 2, 1},
      {ADNN_POOL_AVG_EXCLUDE_PAD, 1, 1, 37, 6, 9, 3, 1, 1},
      {ADNN_POOL_AVG_INCLUDE_PAD, 1, 2, 8, 7, 7, 7, 1, 0},
  };
  for (size_t k = 0; k < sizeof pools / sizeof pools[0]; k++)
    for (int t = 0; t < 2; t++) {
      const int64_t *v = pools[k];
      check_pool((adnn_pool_kind)v[0], t ? ADNN_DTYPE_BF16 : ADNN_DTYPE_F16, (int)v[1], v[2], v[3],
                 v[4], v[5], v[6], v[7], v[8], &r);
    }
  adnn_context_destroy(ctx);
  return tap_done();
}
