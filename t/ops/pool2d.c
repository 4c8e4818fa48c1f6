/* pool2d in the conformance harness: traits, oracle (doc/ops.md, "pool2d"),
 * cases and the oracle's self-tests. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int pool2d_inputs(const harness_desc *hd, harness_tensor *in) {
  in[0] = (harness_tensor){"x", hd->pool2d.x};
  return 1;
}

static adnn_tensor_desc pool2d_output(const harness_desc *hd) { return hd->pool2d.y; }

static void pool2d_set_dtype(harness_desc *hd, adnn_dtype dt) {
  hd->pool2d.x.dtype = hd->pool2d.y.dtype = dt;
}

/* Max pooling selects an element: exact. Averages add at most kh * kw values
 * and divide once. */
static harness_tolerance pool2d_tolerance(const harness_desc *hd, adnn_dtype dt) {
  if (hd->pool2d.kind == ADNN_POOL_MAX) return (harness_tolerance){0.0, 0.0};
  /* F16/BF16: the F32 bound plus one rounding of y (doc/numerics.md); max
   * pooling stays exact (above). */
  const harness_tolerance f32 = {1e-6, 1e-6};
  return harness_lowp_tolerance(dt, dt == ADNN_DTYPE_F64 ? (harness_tolerance){1e-14, 1e-14} : f32,
                                f32, 1.0);
}

static void pool2d_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  harness_fill_uniform(&in[0], r, -1.0, 1.0);
}

/* ------------------------------------------------------------------------ */
/* Oracle                                                                    */
/* ------------------------------------------------------------------------ */

/* The number of windows along one dim, as doc/ops.md gives it (PyTorch's
 * rule). */
static int64_t windows(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t kernel,
                       int64_t stride, int ceil_mode) {
  const int64_t span = in + pad_begin + pad_end - kernel;
  if (!ceil_mode) return span / stride + 1;
  int64_t n = (span + stride - 1) / stride + 1;
  if ((n - 1) * stride >= in + pad_begin) n--; /* a last window starting in the padding */
  return n;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static int pool2d_oracle(const harness_desc *hd, const double *const *in, double *y, char *why,
                         size_t why_len) {
  const adnn_pool2d_desc *d = &hd->pool2d;
  const adnn_tensor_desc *xd = &d->x, *yd = &d->y;
  const int64_t N = xd->dims[0], C = xd->dims[1], H = xd->dims[2], W = xd->dims[3];
  const int64_t kh = d->kernel_h, kw = d->kernel_w;
  if (2 * d->pad_top > kh || 2 * d->pad_bottom > kh || 2 * d->pad_left > kw ||
      2 * d->pad_right > kw || H + d->pad_top + d->pad_bottom < kh ||
      W + d->pad_left + d->pad_right < kw) {
    snprintf(why, why_len, "pool2d: padding above half the kernel or a kernel larger than the "
             "padded image");
    return -1;
  }
  const int64_t P = windows(H, d->pad_top, d->pad_bottom, kh, d->stride_h, d->ceil_mode);
  const int64_t Q = windows(W, d->pad_left, d->pad_right, kw, d->stride_w, d->ceil_mode);
  if (yd->dims[0] != N || yd->dims[1] != C || yd->dims[2] != P || yd->dims[3] != Q) {
    snprintf(why, why_len, "pool2d: y is [%lld, %lld, %lld, %lld], doc/ops.md gives [%lld, %lld, "
             "%lld, %lld]", (long long)yd->dims[0], (long long)yd->dims[1], (long long)yd->dims[2],
             (long long)yd->dims[3], (long long)N, (long long)C, (long long)P, (long long)Q);
    return -1;
  }
  const double *x = in[0];
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t p = 0; p < P; p++)
        for (int64_t q = 0; q < Q; q++) {
          const int64_t h0 = p * d->stride_h - d->pad_top, v0 = q * d->stride_w - d->pad_left;
          const int64_t hb = max64(h0, 0), he = min64(h0 + kh, H);
          const int64_t vb = max64(v0, 0), ve = min64(v0 + kw, W);
          long double result;
          if (d->kind == ADNN_POOL_MAX) {
            result = -INFINITY;
            for (int64_t h = hb; h < he; h++)
              for (int64_t v = vb; v < ve; v++) {
                const double e = x[n * xd->strides[0] + c * xd->strides[1] + h * xd->strides[2] +
                                   v * xd->strides[3]];
                if (isnan(e) || isnan((double)result))
                  result = NAN; /* NaN wins */
                else if (e > result)
                  result = e;
              }
          } else {
            harness_sum sum;
            harness_sum_init(&sum);
            for (int64_t h = hb; h < he; h++)
              for (int64_t v = vb; v < ve; v++)
                harness_sum_add(&sum, x[n * xd->strides[0] + c * xd->strides[1] +
                                        h * xd->strides[2] + v * xd->strides[3]]);
            /* include: the window clipped to the padded image; exclude: its
             * in-image part */
            const int64_t count =
                d->kind == ADNN_POOL_AVG_INCLUDE_PAD
                    ? (min64(h0 + kh, H + d->pad_bottom) - h0) * (min64(v0 + kw, W + d->pad_right) - v0)
                    : (he - hb) * (ve - vb);
            result = harness_sum_value(&sum) / (long double)count;
          }
          y[n * yd->strides[0] + c * yd->strides[1] + p * yd->strides[2] + q * yd->strides[3]] =
              (double)result;
        }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct pool_spec {
  const char *name;
  adnn_pool_kind kind;
  int64_t n, c, h, w, kh, kw, sh, sw, pt, pb, pl, pr;
  int ceil;
  enum harness_layout layout;
  adnn_dtype dt;
  int specials; /* NaN and -inf sprinkled in (max pooling: NaN wins) */
} pool_spec;

/* Labels of the case names (kept from the first version of the suite, so that
 * the names, hence the seeds, stay the same). */
static const char *const kind_labels[] = {"max", "avg_include", "avg_exclude"};
static const char *const layout_labels[] = {" nchw", " nhwc", " padded"};

static void pool_case(harness_suite *suite, const pool_spec *s) {
  harness_case c;
  harness_case_init(&c, harness_op_find("pool2d"), s->dt,
                    "%s %s n%lld c%lld %lldx%lld k%lldx%lld s%lld,%lld p%lld,%lld,%lld,%lld%s%s%s",
                    kind_labels[s->kind], s->name, (long long)s->n, (long long)s->c,
                    (long long)s->h, (long long)s->w, (long long)s->kh, (long long)s->kw,
                    (long long)s->sh, (long long)s->sw, (long long)s->pt, (long long)s->pb,
                    (long long)s->pl, (long long)s->pr, s->ceil ? " ceil" : "",
                    layout_labels[s->layout], s->specials ? " nan" : "");
  adnn_pool2d_desc *d = &c.desc.pool2d;
  adnn_pool2d_desc_init(d);
  d->kind = s->kind;
  d->x = harness_tensor_desc4(s->dt, s->n, s->c, s->h, s->w, s->layout);
  d->kernel_h = s->kh;
  d->kernel_w = s->kw;
  d->stride_h = s->sh;
  d->stride_w = s->sw;
  d->pad_top = s->pt;
  d->pad_bottom = s->pb;
  d->pad_left = s->pl;
  d->pad_right = s->pr;
  d->ceil_mode = s->ceil;
  int64_t yd[4] = {0, 0, 0, 0};
  if (adnn_pool2d_output_dims(d, yd) != ADNN_STATUS_SUCCESS)
    snprintf(c.name + strlen(c.name), sizeof c.name - strlen(c.name),
             ": adnn_pool2d_output_dims failed: %s", adnn_last_error());
  d->y = harness_tensor_desc4(s->dt, yd[0], yd[1], yd[2], yd[3], s->layout);
  if (harness_case_alloc(&c) != 0) return;
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  harness_fill_mixed(&c.in[0], &r);
  if (s->specials) {
    const int64_t n = harness_element_count(&d->x);
    for (int64_t i = 3; i < n; i += 17) harness_set_element(&c.in[0], i, NAN);
    for (int64_t i = 7; i < n; i += 11) harness_set_element(&c.in[0], i, -INFINITY);
    for (int64_t i = 5; i < n; i += 23) harness_set_element(&c.in[0], i, INFINITY);
  }
  harness_submit(suite, &c);
}

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64
#define F16 ADNN_DTYPE_F16
#define BF16 ADNN_DTYPE_BF16
#define PMAX ADNN_POOL_MAX
#define PINC ADNN_POOL_AVG_INCLUDE_PAD
#define PEXC ADNN_POOL_AVG_EXCLUDE_PAD
#define NCHW HARNESS_PACKED
#define NHWC HARNESS_NHWC
#define PADDED HARNESS_PADDED

static const pool_spec pool_specs[] = {
    /* name kind n c h w kh kw sh sw pt pb pl pr ceil layout dt specials */
    {"2x2", PMAX, 1, 3, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, 0, NCHW, F32, 0},
    {"2x2 odd", PMAX, 3, 4, 7, 9, 2, 2, 2, 2, 0, 0, 0, 0, 0, NHWC, F32, 0},
    {"3x3 s2", PMAX, 1, 4, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 0, NCHW, F32, 0},
    {"3x3 s2", PMAX, 3, 5, 10, 11, 3, 3, 2, 2, 1, 1, 1, 1, 1, NHWC, F32, 0},
    {"3x3 s2 both edges", PMAX, 1, 3, 8, 10, 3, 3, 2, 2, 0, 0, 0, 0, 1, NCHW, F32, 0},
    {"drop last", PMAX, 1, 2, 5, 5, 2, 2, 2, 2, 1, 1, 1, 1, 1, NCHW, F32, 0},
    {"asym", PMAX, 1, 3, 7, 8, 3, 3, 2, 2, 1, 0, 0, 1, 1, NCHW, F32, 0},
    {"5x5 s3", PMAX, 1, 2, 11, 13, 5, 5, 3, 3, 2, 1, 2, 0, 1, NCHW, F32, 0},
    {"nan", PMAX, 1, 3, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 0, NCHW, F32, 1},
    {"tiny 1x1 img", PMAX, 1, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, NCHW, F32, 0},
    {"tiny 2x3 img", PMAX, 3, 2, 2, 3, 2, 2, 2, 2, 1, 0, 0, 1, 1, NHWC, F32, 0},
    {"padded", PMAX, 2, 3, 7, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, PADDED, F32, 0},
    {"3x3 s1", PINC, 1, 3, 6, 7, 3, 3, 1, 1, 1, 1, 1, 1, 0, NCHW, F32, 0},
    {"3x3 s2 both edges", PINC, 1, 3, 8, 10, 3, 3, 2, 2, 0, 0, 0, 0, 1, NCHW, F32, 0},
    {"asym", PINC, 1, 3, 7, 8, 3, 3, 2, 2, 1, 0, 0, 1, 1, NCHW, F32, 0},
    {"asym", PINC, 3, 4, 9, 7, 3, 3, 2, 2, 0, 1, 1, 0, 1, NHWC, F32, 0},
    {"drop last", PINC, 1, 2, 5, 5, 2, 2, 2, 2, 1, 1, 1, 1, 1, NCHW, F32, 0},
    {"5x5 s3", PINC, 1, 2, 11, 13, 5, 5, 3, 3, 2, 1, 2, 0, 1, NHWC, F32, 0},
    {"global 7x7", PINC, 3, 8, 7, 7, 7, 7, 1, 1, 0, 0, 0, 0, 0, NCHW, F32, 0},
    {"tiny 2x3 img", PINC, 1, 2, 2, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, NCHW, F32, 0},
    {"3x3 s1", PEXC, 1, 3, 6, 7, 3, 3, 1, 1, 1, 1, 1, 1, 0, NHWC, F32, 0},
    {"3x3 s2 both edges", PEXC, 1, 3, 8, 10, 3, 3, 2, 2, 0, 0, 0, 0, 1, NCHW, F32, 0},
    {"asym", PEXC, 1, 3, 7, 8, 3, 3, 2, 2, 1, 0, 0, 1, 1, NCHW, F32, 0},
    {"asym", PEXC, 3, 4, 9, 7, 3, 3, 2, 2, 0, 1, 1, 0, 1, NHWC, F32, 0},
    {"drop last", PEXC, 1, 2, 5, 5, 2, 2, 2, 2, 1, 1, 1, 1, 1, NCHW, F32, 0},
    {"5x5 s3", PEXC, 1, 2, 11, 13, 5, 5, 3, 3, 2, 1, 2, 0, 1, NCHW, F32, 0},
    {"padded", PEXC, 2, 3, 7, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, PADDED, F32, 0},
    {"big", PMAX, 2, 32, 56, 56, 3, 3, 2, 2, 1, 1, 1, 1, 0, NHWC, F32, 0},
    {"big", PEXC, 2, 32, 56, 56, 3, 3, 2, 2, 1, 1, 1, 1, 1, NCHW, F32, 0},
    /* From the former CUDA-only test: rectangular kernels, unequal strides. */
    {"nan", PMAX, 2, 3, 9, 8, 3, 3, 2, 2, 1, 1, 1, 1, 0, NCHW, F32, 1},
    {"3x2 asym", PMAX, 2, 3, 10, 7, 3, 2, 2, 2, 0, 1, 1, 0, 1, NHWC, F32, 0},
    {"3x3 s2 asym", PINC, 2, 3, 10, 11, 3, 3, 2, 2, 1, 1, 1, 0, 1, NCHW, F32, 0},
    {"3x4 s2,3 asym", PEXC, 2, 3, 7, 9, 3, 4, 2, 3, 0, 1, 2, 1, 1, NHWC, F32, 0},
    /* F64: the CPU plugin's reference kernels against the oracle. */
    {"3x3 s2", PMAX, 1, 3, 7, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, NCHW, F64, 0},
    {"asym", PINC, 1, 3, 7, 8, 3, 3, 2, 2, 1, 0, 0, 1, 1, NHWC, F64, 0},
    {"asym", PEXC, 1, 3, 7, 8, 3, 3, 2, 2, 1, 0, 0, 1, 1, NCHW, F64, 0},
    {"nan", PMAX, 1, 3, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 0, NCHW, F64, 1},
    {"2x2 s2", PINC, 2, 3, 8, 8, 2, 2, 2, 2, 1, 1, 1, 1, 1, NCHW, F64, 0},
    {"padded", PEXC, 2, 3, 7, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, PADDED, F64, 0},
    {"3x2 asym", PMAX, 2, 3, 10, 7, 3, 2, 2, 2, 0, 1, 1, 0, 1, NHWC, F64, 0},
    /* F16 and BF16: max exact, averages summed in F32 and rounded once. */
    {"3x3 s2", PMAX, 1, 4, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 0, NCHW, F16, 0},
    {"nan", PMAX, 1, 3, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 0, NHWC, F16, 1},
    {"asym", PINC, 3, 4, 9, 7, 3, 3, 2, 2, 0, 1, 1, 0, 1, NHWC, F16, 0},
    {"3x3 s2 asym", PINC, 2, 3, 10, 11, 3, 3, 2, 2, 1, 1, 1, 0, 1, NCHW, F16, 0},
    {"padded", PEXC, 2, 3, 7, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, PADDED, F16, 0},
    {"big", PEXC, 2, 32, 56, 56, 3, 3, 2, 2, 1, 1, 1, 1, 1, NHWC, F16, 0},
    {"global 7x7", PINC, 3, 8, 7, 7, 7, 7, 1, 1, 0, 0, 0, 0, 0, NCHW, F16, 0},
    {"3x3 s2", PMAX, 1, 4, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 0, NCHW, BF16, 0},
    {"nan", PMAX, 1, 3, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 0, NHWC, BF16, 1},
    {"asym", PINC, 3, 4, 9, 7, 3, 3, 2, 2, 0, 1, 1, 0, 1, NHWC, BF16, 0},
    {"3x3 s2 asym", PINC, 2, 3, 10, 11, 3, 3, 2, 2, 1, 1, 1, 0, 1, NCHW, BF16, 0},
    {"padded", PEXC, 2, 3, 7, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, PADDED, BF16, 0},
    {"big", PEXC, 2, 32, 56, 56, 3, 3, 2, 2, 1, 1, 1, 1, 1, NHWC, BF16, 0},
    {"global 7x7", PINC, 3, 8, 7, 7, 7, 7, 1, 1, 0, 0, 0, 0, 0, NCHW, BF16, 0},
};

static void pool2d_cases(harness_suite *suite) {
  for (size_t i = 0; i < sizeof pool_specs / sizeof pool_specs[0]; i++)
    pool_case(suite, &pool_specs[i]);
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracle                                                  */
/* ------------------------------------------------------------------------ */

static int run_oracle(const adnn_pool2d_desc *d, const double *x, double *y) {
  harness_desc hd;
  hd.pool2d = *d;
  const double *in[1] = {x};
  char why[256];
  return pool2d_oracle(&hd, in, y, why, sizeof why) == 0;
}

static void pool2d_oracle_selftests(const harness_report *rep) {
  const adnn_dtype dt = ADNN_DTYPE_F64;
  /* x = 0..24 (5x5), 2x2 windows, stride 2, ceil_mode: 3x3 windows, the last
   * row and column of windows hold one image row / column. */
  double x[25], y[9];
  for (int i = 0; i < 25; i++) x[i] = i;
  adnn_pool2d_desc d;
  adnn_pool2d_desc_init(&d);
  d.x = harness_tensor_desc4(dt, 1, 1, 5, 5, HARNESS_PACKED);
  d.kernel_h = d.kernel_w = d.stride_h = d.stride_w = 2;
  d.ceil_mode = 1;
  d.y = harness_tensor_desc4(dt, 1, 1, 3, 3, HARNESS_PACKED);
  int64_t od[4] = {0, 0, 0, 0};
  adnn_pool2d_output_dims(&d, od);
  harness_ok(rep, od[2] == 3 && od[3] == 3, "oracle: ceil_mode 5 -> 3 windows (core says %lldx%lld)",
             (long long)od[2], (long long)od[3]);
  /* The maxima by hand: the bottom-right element of each window. */
  const double want_max[9] = {6, 8, 9, 16, 18, 19, 21, 23, 24};
  int good = run_oracle(&d, x, y);
  for (int i = 0; i < 9; i++) good &= y[i] == want_max[i];
  harness_ok(rep, good, "oracle: hand-computed max pool with a partial last window");
  /* (0 + 1 + 5 + 6) / 4 = 3; (4 + 9) / 2 = 6.5 (the window clipped to the
   * unpadded image: 2 elements); 24 / 1. */
  d.kind = ADNN_POOL_AVG_INCLUDE_PAD;
  good = run_oracle(&d, x, y);
  harness_ok(rep, good && y[2] == 6.5 && y[8] == 24 && y[0] == 3,
             "oracle: average of partial windows divides by the clipped area (got %g %g %g)",
             y[0], y[2], y[8]);
  adnn_pool2d_desc floor_dims = d;
  floor_dims.y = harness_tensor_desc4(dt, 1, 1, 2, 2, HARNESS_PACKED); /* 2x2 without ceil_mode */
  harness_ok(rep, !run_oracle(&floor_dims, x, y),
             "oracle: a y whose dims contradict doc/ops.md is refused");
  /* Include vs exclude padding on a constant 3x3 image of 2 with padding 1:
   * the corner window has 4 of its 9 elements in the image (2 * 4 / 9), an
   * edge window 6 (2 * 6 / 9), the centre all 9. */
  double twos[9], yi[9], ye[9];
  for (int i = 0; i < 9; i++) twos[i] = 2.0;
  d.x = harness_tensor_desc4(dt, 1, 1, 3, 3, HARNESS_PACKED);
  d.kernel_h = d.kernel_w = 3;
  d.stride_h = d.stride_w = 1;
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
  d.ceil_mode = 0;
  d.y = harness_tensor_desc4(dt, 1, 1, 3, 3, HARNESS_PACKED);
  d.kind = ADNN_POOL_AVG_EXCLUDE_PAD;
  good = run_oracle(&d, twos, ye);
  d.kind = ADNN_POOL_AVG_INCLUDE_PAD;
  good &= run_oracle(&d, twos, yi);
  for (int i = 0; i < 9; i++) good &= ye[i] == 2.0;
  harness_ok(rep, good, "oracle: exclude-pad average of a constant is the constant");
  harness_ok(rep, harness_close(yi[0], 2.0 * 4 / 9, 1e-15) &&
                      harness_close(yi[1], 2.0 * 6 / 9, 1e-15) && yi[4] == 2.0,
             "oracle: include-pad average counts the padding (got %g %g %g)", yi[0], yi[1], yi[4]);
  /* NaN wins in both windows that hold it. */
  double xn[9] = {1, NAN, 3, 4, 5, 6, 7, 8, 9};
  d.kind = ADNN_POOL_MAX;
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 0;
  d.kernel_h = d.kernel_w = 2;
  d.y = harness_tensor_desc4(dt, 1, 1, 2, 2, HARNESS_PACKED);
  good = run_oracle(&d, xn, y);
  harness_ok(rep, good && isnan(y[0]) && isnan(y[1]) && y[2] == 8 && y[3] == 9,
             "oracle: max pooling: NaN wins");
}

static void pool2d_bad_descriptors(const harness_report *rep, adnn_context *ctx,
                                   const char *bn) {
  adnn_plan *plan = NULL;
  adnn_pool2d_desc pd;
  adnn_pool2d_desc_init(&pd);
  pd.x = harness_tensor_desc4(F32, 1, 2, 6, 6, HARNESS_PACKED);
  pd.kernel_h = pd.kernel_w = 3;
  pd.pad_top = 2; /* > kernel/2 */
  pd.y = harness_tensor_desc4(F32, 1, 2, 6, 4, HARNESS_PACKED);
  harness_is_status(rep, adnn_plan_create_pool2d(ctx, &pd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s pool2d: padding above kernel/2 is BAD_PARAM", bn);
  /* Mixed dtypes (a BF16 x, an F32 y) on a valid window: refused by the
   * core. */
  pd.pad_top = 1;
  pd.x = harness_tensor_desc4(BF16, 1, 2, 6, 6, HARNESS_PACKED);
  pd.y = harness_tensor_desc4(F32, 1, 2, 5, 4, HARNESS_PACKED); /* P = (6 + 1 - 3) + 1 */
  harness_is_status(rep, adnn_plan_create_pool2d(ctx, &pd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s pool2d: a bf16 x with an f32 y is BAD_PARAM", bn);
  harness_contains(rep, adnn_last_error(), "y has dtype f32 but x has bf16",
                   "%s pool2d: the message names both dtypes", bn);
}

const harness_op_traits harness_pool2d_traits = {
    .inputs = pool2d_inputs,
    .output = pool2d_output,
    .set_dtype = pool2d_set_dtype,
    .oracle = pool2d_oracle,
    .tolerance = pool2d_tolerance,
    .fill = pool2d_fill,
    .variant_count = 1,
    .cases = pool2d_cases,
    .oracle_selftests = pool2d_oracle_selftests,
    .bad_descriptors = pool2d_bad_descriptors,
};
