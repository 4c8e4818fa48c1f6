/* pool2d backward in the conformance harness: traits, oracle (doc/ops.md,
 * "pool2d backward"), cases, the oracle's self-tests and the bad
 * descriptors. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The forward descriptors the cases point to (see t/ops/activation_backward.c). */
#define FORWARD_SLOTS 16
static adnn_pool2d_desc forward_slots[FORWARD_SLOTS];
static unsigned forward_next;

adnn_pool2d_desc *harness_pool2d_backward_forward(harness_desc *hd) {
  adnn_pool2d_desc *f = &forward_slots[forward_next++ % FORWARD_SLOTS];
  adnn_pool2d_desc_init(f);
  adnn_pool2d_backward_desc_init(&hd->pool2d_backward);
  hd->pool2d_backward.forward = f;
  return f;
}

static const adnn_pool2d_desc *fwd(const harness_desc *hd) { return hd->pool2d_backward.forward; }

static int pb_inputs(const harness_desc *hd, harness_tensor *in) {
  in[0] = (harness_tensor){"x", fwd(hd)->x};
  in[1] = (harness_tensor){"y", fwd(hd)->y};
  in[2] = (harness_tensor){"dy", fwd(hd)->y};
  return 3;
}

static adnn_tensor_desc pb_output(const harness_desc *hd) { return fwd(hd)->x; }

static void pb_set_dtype(harness_desc *hd, adnn_dtype dt) {
  adnn_pool2d_desc *f = (adnn_pool2d_desc *)fwd(hd); /* one of forward_slots */
  f->x.dtype = f->y.dtype = dt;
}

/* Max pooling routes dy unchanged, but overlapping windows add several dy
 * into one dx (in float on the CPU); averages divide once per term.
 * F16/BF16: that F32 bound plus one rounding of dx. */
static harness_tolerance pb_tolerance(const harness_desc *hd, adnn_dtype dt) {
  (void)hd;
  const harness_tolerance f32 = {2e-6, 2e-6};
  return harness_lowp_tolerance(dt, dt == ADNN_DTYPE_F64 ? (harness_tolerance){1e-14, 1e-14} : f32,
                                f32, 1.0);
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* The geometry of doc/ops.md's pool2d (PyTorch's rule for ceil_mode). */
static int64_t windows(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t kernel,
                       int64_t stride, int ceil_mode) {
  const int64_t span = in + pad_begin + pad_end - kernel;
  if (!ceil_mode) return span / stride + 1;
  int64_t n = (span + stride - 1) / stride + 1;
  if ((n - 1) * stride >= in + pad_begin) n--;
  return n;
}

/* Visits every window of every plane: calls fn with the window's in-image
 * extent, its divisor and the offsets of its plane in x and of its output. */
typedef void window_fn(void *arg, const adnn_pool2d_desc *d, int64_t xplane, int64_t yoff,
                       int64_t hb, int64_t he, int64_t vb, int64_t ve, int64_t count);
static int each_window(const adnn_pool2d_desc *d, window_fn *fn, void *arg, char *why,
                       size_t why_len) {
  const adnn_tensor_desc *xd = &d->x, *yd = &d->y;
  const int64_t N = xd->dims[0], C = xd->dims[1], H = xd->dims[2], W = xd->dims[3];
  const int64_t kh = d->kernel_h, kw = d->kernel_w;
  const int64_t P = windows(H, d->pad_top, d->pad_bottom, kh, d->stride_h, d->ceil_mode);
  const int64_t Q = windows(W, d->pad_left, d->pad_right, kw, d->stride_w, d->ceil_mode);
  if (yd->dims[0] != N || yd->dims[1] != C || yd->dims[2] != P || yd->dims[3] != Q) {
    snprintf(why, why_len, "pool2d_backward: y is not [%lld, %lld, %lld, %lld] as doc/ops.md "
             "gives", (long long)N, (long long)C, (long long)P, (long long)Q);
    return -1;
  }
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t p = 0; p < P; p++)
        for (int64_t q = 0; q < Q; q++) {
          const int64_t h0 = p * d->stride_h - d->pad_top, v0 = q * d->stride_w - d->pad_left;
          const int64_t hb = max64(h0, 0), he = min64(h0 + kh, H);
          const int64_t vb = max64(v0, 0), ve = min64(v0 + kw, W);
          const int64_t count =
              d->kind == ADNN_POOL_AVG_INCLUDE_PAD
                  ? (min64(h0 + kh, H + d->pad_bottom) - h0) * (min64(v0 + kw, W + d->pad_right) - v0)
                  : (he - hb) * (ve - vb);
          fn(arg, d, n * xd->strides[0] + c * xd->strides[1],
             n * yd->strides[0] + c * yd->strides[1] + p * yd->strides[2] + q * yd->strides[3], hb,
             he, vb, ve, count);
        }
  return 0;
}

/* The forward op (for the y input): max with NaN winning, or the average. */
typedef struct forward_arg {
  const double *x;
  double *y;
} forward_arg;

static void forward_window(void *arg, const adnn_pool2d_desc *d, int64_t xplane, int64_t yoff,
                           int64_t hb, int64_t he, int64_t vb, int64_t ve, int64_t count) {
  forward_arg *a = arg;
  long double r = d->kind == ADNN_POOL_MAX ? -INFINITY : 0.0L;
  for (int64_t h = hb; h < he; h++)
    for (int64_t v = vb; v < ve; v++) {
      const double e = a->x[xplane + h * d->x.strides[2] + v * d->x.strides[3]];
      if (d->kind != ADNN_POOL_MAX) r += e;
      else if (isnan(e) || isnan((double)r)) r = NAN;
      else if (e > r) r = e;
    }
  if (d->kind != ADNN_POOL_MAX) r /= (long double)count;
  a->y[yoff] = harness_round(d->y.dtype, (double)r);
}

static void compute_y(const adnn_pool2d_desc *d, const harness_buffer *x, harness_buffer *y) {
  forward_arg a = {x->v, y->v};
  char why[128];
  (void)each_window(d, forward_window, &a, why, sizeof why);
}

static void pb_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  (void)n_in;
  harness_fill_uniform(&in[0], r, -1.0, 1.0);
  compute_y(fwd(hd), &in[0], &in[1]);
  harness_fill_uniform(&in[2], r, -1.0, 1.0);
}

/* ------------------------------------------------------------------------ */
/* Oracle                                                                    */
/* ------------------------------------------------------------------------ */

/* Scatter form (the library's reference gathers): every window sends its dy
 * to the element that doc/ops.md names (max: the first NaN of the window in
 * row-major order, else the first element equal to its maximum) or dy /
 * divisor to each in-image element (averages); the sums are in long double. */
typedef struct backward_arg {
  const double *x, *dy;
  long double *acc;
} backward_arg;

static void backward_window(void *arg, const adnn_pool2d_desc *d, int64_t xplane, int64_t yoff,
                            int64_t hb, int64_t he, int64_t vb, int64_t ve, int64_t count) {
  backward_arg *a = arg;
  const int64_t sh = d->x.strides[2], sw = d->x.strides[3];
  const long double g = a->dy[yoff];
  if (d->kind != ADNN_POOL_MAX) {
    for (int64_t h = hb; h < he; h++)
      for (int64_t v = vb; v < ve; v++) a->acc[xplane + h * sh + v * sw] += g / count;
    return;
  }
  int64_t first_nan = -1, first_max = -1;
  double best = 0.0;
  for (int64_t h = hb; h < he && first_nan < 0; h++)
    for (int64_t v = vb; v < ve; v++) {
      const int64_t off = xplane + h * sh + v * sw;
      const double e = a->x[off];
      if (isnan(e)) {
        first_nan = off;
        break;
      }
      if (first_max < 0 || e > best) {
        first_max = off;
        best = e;
      }
    }
  a->acc[first_nan >= 0 ? first_nan : first_max] += g;
}

static int pb_oracle(const harness_desc *hd, const double *const *in, double *dx, char *why,
                     size_t why_len) {
  const adnn_pool2d_desc *d = fwd(hd);
  const int64_t span = harness_span(&d->x);
  long double *acc = calloc((size_t)(span > 0 ? span : 1), sizeof *acc);
  if (!acc) {
    snprintf(why, why_len, "pool2d_backward: out of memory");
    return -1;
  }
  backward_arg a = {in[0], in[2], acc};
  int st = each_window(d, backward_window, &a, why, why_len);
  if (st == 0) {
    harness_index it;
    for (harness_index_first(&it, &d->x); it.valid; harness_index_next(&it, &d->x))
      dx[it.offset] = (double)acc[it.offset];
  }
  free(acc);
  return st;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct pb_spec {
  const char *name;
  adnn_pool_kind kind;
  int64_t n, c, h, w, kh, kw, sh, sw, pt, pb, pl, pr;
  int ceil;
  enum harness_layout layout;
  adnn_dtype dt;
  int values; /* 0 uniform; 1 small integers (many ties); 2 NaN and +-inf sprinkled in */
} pb_spec;

static const char *const kind_labels[] = {"max", "avg_include", "avg_exclude"};
static const char *const layout_labels[] = {" nchw", " nhwc", " padded"};
static const char *const value_labels[] = {"", " ties", " nan/inf"};

static void pb_case(harness_suite *suite, const pb_spec *s) {
  harness_case c;
  harness_case_init(&c, harness_op_find("pool2d_backward"), s->dt,
                    "%s %s n%lld c%lld %lldx%lld k%lldx%lld s%lld,%lld p%lld,%lld,%lld,%lld%s%s%s",
                    kind_labels[s->kind], s->name, (long long)s->n, (long long)s->c,
                    (long long)s->h, (long long)s->w, (long long)s->kh, (long long)s->kw,
                    (long long)s->sh, (long long)s->sw, (long long)s->pt, (long long)s->pb,
                    (long long)s->pl, (long long)s->pr, s->ceil ? " ceil" : "",
                    layout_labels[s->layout], value_labels[s->values]);
  adnn_pool2d_desc *d = harness_pool2d_backward_forward(&c.desc);
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
  const int64_t n = harness_element_count(&d->x);
  if (s->values == 1) {
    for (int64_t i = 0; i < n; i++)
      harness_set_element(&c.in[0], i, floor(tap_rng_uniform(&r, -2.0, 2.0)));
  } else {
    harness_fill_mixed(&c.in[0], &r);
  }
  if (s->values == 2) {
    for (int64_t i = 3; i < n; i += 17) harness_set_element(&c.in[0], i, NAN);
    for (int64_t i = 4; i < n; i += 29) harness_set_element(&c.in[0], i, NAN); /* two in a window */
    for (int64_t i = 7; i < n; i += 11) harness_set_element(&c.in[0], i, -INFINITY);
    for (int64_t i = 5; i < n; i += 23) harness_set_element(&c.in[0], i, INFINITY);
  }
  compute_y(d, &c.in[0], &c.in[1]);
  harness_fill_uniform(&c.in[2], &r, -1.0, 1.0);
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

static const pb_spec pb_specs[] = {
    /* name kind n c h w kh kw sh sw pt pb pl pr ceil layout dt values */
    {"2x2", PMAX, 2, 3, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, 0, NCHW, F32, 0},
    {"2x2 ties", PMAX, 2, 3, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, 0, NCHW, F32, 1},
    {"3x3 s1 overlap", PMAX, 1, 4, 9, 10, 3, 3, 1, 1, 1, 1, 1, 1, 0, NCHW, F32, 1},
    {"3x3 s2", PMAX, 2, 5, 10, 11, 3, 3, 2, 2, 1, 1, 1, 1, 1, NHWC, F32, 1},
    {"3x3 s2", PMAX, 1, 70, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 0, NHWC, F32, 0},
    {"3x3 s2", PMAX, 1, 4, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 0, PADDED, F32, 0},
    {"asym", PMAX, 1, 3, 7, 8, 3, 3, 2, 2, 1, 0, 0, 1, 1, NCHW, F32, 0},
    {"5x5 s3", PMAX, 1, 2, 11, 13, 5, 5, 3, 3, 2, 1, 2, 0, 1, NCHW, F32, 0},
    {"s3 gaps", PMAX, 1, 3, 10, 10, 2, 2, 3, 3, 0, 0, 0, 0, 0, NHWC, F32, 0},
    {"nan", PMAX, 1, 3, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 0, NCHW, F32, 2},
    {"nan", PMAX, 2, 17, 9, 9, 3, 3, 1, 1, 1, 1, 1, 1, 0, NHWC, F32, 2},
    {"1x1 img", PMAX, 1, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, NCHW, F32, 0},
    /* Rows long enough for the vector passes of the NCHW max path (16
     * outputs per vector and a tail), with ties and NaN across columns. */
    {"wide s2", PMAX, 1, 3, 7, 101, 3, 3, 2, 2, 1, 1, 1, 1, 1, NCHW, F32, 1},
    {"wide s1", PMAX, 1, 2, 6, 77, 3, 3, 1, 1, 1, 1, 1, 1, 0, NCHW, F32, 2},
    {"wide s1 ties", PMAX, 1, 2, 6, 77, 3, 2, 1, 1, 1, 1, 1, 1, 0, NCHW, F32, 1},
    {"wide s3", PMAX, 1, 2, 6, 80, 3, 3, 3, 3, 0, 0, 0, 0, 0, PADDED, F32, 1},
    {"wide s2", PMAX, 2, 2, 5, 64, 2, 2, 2, 2, 0, 0, 0, 0, 0, NCHW, F32, 2},
    {"3x3 s1", PINC, 1, 3, 6, 7, 3, 3, 1, 1, 1, 1, 1, 1, 0, NCHW, F32, 0},
    {"3x3 s2 edges", PINC, 1, 3, 8, 10, 3, 3, 2, 2, 0, 0, 0, 0, 1, NCHW, F32, 0},
    {"asym", PINC, 3, 4, 9, 7, 3, 3, 2, 2, 0, 1, 1, 0, 1, NHWC, F32, 0},
    {"5x5 s3", PINC, 1, 2, 11, 13, 5, 5, 3, 3, 2, 1, 2, 0, 1, NHWC, F32, 0},
    {"global 7x7", PINC, 3, 8, 7, 7, 7, 7, 1, 1, 0, 0, 0, 0, 0, NCHW, F32, 0},
    {"padded", PINC, 2, 3, 7, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, PADDED, F32, 0},
    {"3x3 s1", PEXC, 1, 3, 6, 7, 3, 3, 1, 1, 1, 1, 1, 1, 0, NCHW, F32, 0},
    {"3x3 s2 edges", PEXC, 1, 3, 8, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, NHWC, F32, 0},
    {"asym", PEXC, 1, 3, 7, 8, 3, 3, 2, 2, 1, 0, 0, 1, 1, NCHW, F32, 0},
    {"drop last", PEXC, 1, 2, 5, 5, 2, 2, 2, 2, 1, 1, 1, 1, 1, NCHW, F32, 0},
    {"wide", PEXC, 1, 2, 4, 300, 3, 3, 1, 1, 1, 1, 1, 1, 0, NCHW, F32, 0},
    {"3x3 s2", PMAX, 2, 3, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, NCHW, F64, 1},
    {"nan", PMAX, 1, 3, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 0, NHWC, F64, 2},
    {"3x3 s1", PINC, 1, 3, 6, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, PADDED, F64, 0},
    {"asym", PEXC, 2, 3, 7, 8, 3, 3, 2, 2, 1, 0, 0, 1, 1, NHWC, F64, 0},
    /* F16 and BF16 (x and dy rounded to the type, so more ties): every path
     * (NCHW separable max and average, NHWC channel vectors, padded and
     * strided W), NaN and infinities, overlapping windows. */
    {"2x2 ties", PMAX, 2, 3, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, 0, NCHW, F16, 1},
    {"3x3 s2", PMAX, 1, 70, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 0, NHWC, F16, 0},
    {"nan", PMAX, 2, 17, 9, 9, 3, 3, 1, 1, 1, 1, 1, 1, 0, NHWC, F16, 2},
    {"wide s1", PMAX, 1, 2, 6, 77, 3, 3, 1, 1, 1, 1, 1, 1, 0, NCHW, F16, 2},
    {"wide s3", PMAX, 1, 2, 6, 80, 3, 3, 3, 3, 0, 0, 0, 0, 0, PADDED, F16, 1},
    {"3x3 s1", PINC, 1, 3, 6, 7, 3, 3, 1, 1, 1, 1, 1, 1, 0, NCHW, F16, 0},
    {"asym", PINC, 3, 4, 9, 7, 3, 3, 2, 2, 0, 1, 1, 0, 1, NHWC, F16, 0},
    {"padded", PINC, 2, 3, 7, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, PADDED, F16, 0},
    {"3x3 s2 edges", PEXC, 1, 3, 8, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, NHWC, F16, 0},
    {"wide", PEXC, 1, 2, 4, 300, 3, 3, 1, 1, 1, 1, 1, 1, 0, NCHW, F16, 0},
    {"2x2 ties", PMAX, 2, 3, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, 0, NCHW, BF16, 1},
    {"3x3 s2", PMAX, 1, 70, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 0, NHWC, BF16, 0},
    {"nan", PMAX, 2, 17, 9, 9, 3, 3, 1, 1, 1, 1, 1, 1, 0, NHWC, BF16, 2},
    {"wide s1", PMAX, 1, 2, 6, 77, 3, 3, 1, 1, 1, 1, 1, 1, 0, NCHW, BF16, 2},
    {"wide s3", PMAX, 1, 2, 6, 80, 3, 3, 3, 3, 0, 0, 0, 0, 0, PADDED, BF16, 1},
    {"3x3 s1", PINC, 1, 3, 6, 7, 3, 3, 1, 1, 1, 1, 1, 1, 0, NCHW, BF16, 0},
    {"asym", PINC, 3, 4, 9, 7, 3, 3, 2, 2, 0, 1, 1, 0, 1, NHWC, BF16, 0},
    {"padded", PINC, 2, 3, 7, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, PADDED, BF16, 0},
    {"3x3 s2 edges", PEXC, 1, 3, 8, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, NHWC, BF16, 0},
    {"wide", PEXC, 1, 2, 4, 300, 3, 3, 1, 1, 1, 1, 1, 1, 0, NCHW, BF16, 0},
};

static void pb_cases(harness_suite *suite) {
  for (size_t i = 0; i < sizeof pb_specs / sizeof pb_specs[0]; i++) pb_case(suite, &pb_specs[i]);
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracle                                                  */
/* ------------------------------------------------------------------------ */

static void pb_oracle_selftests(const harness_report *rep) {
  /* One plane 2x3, kernel 2x2 stride 1: windows (0,0) and (0,1). x = [[1, 5,
   * 5], [2, 5, 0]]: window 0 holds 1 5 2 5 (first maximum: (0,1)), window 1
   * holds 5 5 5 0 (first maximum: (0,1) again), so dx[0][1] = dy0 + dy1 and
   * the rest is 0. With a NaN at (1,1) both windows send to it. Average
   * (exclude pad, no padding): every window divides by 4; dx[0][1] =
   * (dy0 + dy1) / 4, dx[0][0] = dy0 / 4. */
  harness_desc hd;
  adnn_pool2d_desc *d = harness_pool2d_backward_forward(&hd);
  d->x = harness_tensor_desc4(F64, 1, 1, 2, 3, HARNESS_PACKED);
  d->y = harness_tensor_desc4(F64, 1, 1, 1, 2, HARNESS_PACKED);
  d->kernel_h = d->kernel_w = 2;
  double x[6] = {1, 5, 5, 2, 5, 0}, dy[2] = {1.0, 10.0}, dx[6];
  const double *in[3] = {x, NULL, dy};
  char why[256];
  int good = pb_oracle(&hd, in, dx, why, sizeof why) == 0;
  good = good && dx[0] == 0 && dx[1] == 11 && dx[2] == 0 && dx[3] == 0 && dx[4] == 0 && dx[5] == 0;
  harness_ok(rep, good, "oracle: max pooling sends dy to the first of equal maxima");
  x[4] = NAN;
  good = pb_oracle(&hd, in, dx, why, sizeof why) == 0 && dx[4] == 11 && dx[1] == 0;
  harness_ok(rep, good, "oracle: a NaN in the window receives dy");
  d->kind = ADNN_POOL_AVG_EXCLUDE_PAD;
  good = pb_oracle(&hd, in, dx, why, sizeof why) == 0 && dx[0] == 0.25 && dx[1] == 2.75 &&
         dx[2] == 2.5 && dx[5] == 2.5;
  harness_ok(rep, good, "oracle: average pooling spreads dy / 4");
}

/* ------------------------------------------------------------------------ */
/* Bad descriptors and execute-time checks                                   */
/* ------------------------------------------------------------------------ */

static void pb_bad_descriptors(const harness_report *rep, adnn_context *ctx, const char *bn) {
  adnn_plan *plan = NULL;
  adnn_pool2d_desc f;
  adnn_pool2d_desc_init(&f);
  f.kernel_h = f.kernel_w = f.stride_h = f.stride_w = 2;
  f.x = harness_tensor_desc4(F32, 1, 2, 4, 4, HARNESS_PACKED);
  f.y = harness_tensor_desc4(F32, 1, 2, 2, 2, HARNESS_PACKED);
  adnn_pool2d_backward_desc d;
  adnn_pool2d_backward_desc_init(&d);
  harness_is_status(rep, adnn_plan_create_pool2d_backward(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM_NULL, "%s pool2d_backward: NULL forward", bn);
  d.forward = &f;
  f.y = harness_tensor_desc4(F32, 1, 2, 3, 2, HARNESS_PACKED);
  harness_is_status(rep, adnn_plan_create_pool2d_backward(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s pool2d_backward: forward y of the wrong shape (dy mismatches)", bn);
  harness_contains(rep, adnn_last_error(), "forward", "%s: the message says it is the forward's",
                   bn);
  f.y = harness_tensor_desc4(F32, 1, 2, 2, 2, HARNESS_PACKED);
  f.pad_top = 2;
  harness_is_status(rep, adnn_plan_create_pool2d_backward(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s pool2d_backward: forward padding above kernel/2", bn);
  f.pad_top = 0;
  f.x.strides[2] = 0;
  harness_is_status(rep, adnn_plan_create_pool2d_backward(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s pool2d_backward: dx (x's layout) overlapping", bn);
  f.x = harness_tensor_desc4(F32, 1, 2, 4, 4, HARNESS_PACKED);
  adnn_status st = adnn_plan_create_pool2d_backward(ctx, &d, &plan);
  if (st == ADNN_STATUS_NOT_SUPPORTED) {
    harness_skip(rep, "%s: no pool2d_backward plan: %s", bn, adnn_last_error());
    return;
  }
  if (!harness_ok(rep, st == ADNN_STATUS_SUCCESS, "%s pool2d_backward plan", bn)) return;
  void *x = NULL, *y = NULL, *dy = NULL, *dx = NULL;
  adnn_malloc(ctx, 32 * sizeof(float), &x);
  adnn_malloc(ctx, 8 * sizeof(float), &y);
  adnn_malloc(ctx, 32 * sizeof(float), &dy); /* large enough to hold a dx */
  adnn_malloc(ctx, 32 * sizeof(float), &dx);
  /* The plan runs once below (execute_multi with its one output): its
   * inputs hold defined values, so that valgrind sees no uninitialised read. */
  adnn_memset(ctx, x, 0, 32 * sizeof(float));
  adnn_memset(ctx, y, 0, 8 * sizeof(float));
  adnn_memset(ctx, dy, 0, 32 * sizeof(float));
  const void *ins[3] = {x, y, dy};
  harness_is_status(rep, adnn_plan_execute(plan, ins, 2, dx), ADNN_STATUS_BAD_PARAM,
                    "%s execute: 2 inputs for a 3-input plan is BAD_PARAM", bn);
  harness_is_status(rep, adnn_plan_execute(plan, ins, 3, dy), ADNN_STATUS_BAD_PARAM,
                    "%s execute: dx == dy is BAD_PARAM (pooling never runs in place)", bn);
  harness_is_status(rep, adnn_plan_execute(plan, ins, 3, x), ADNN_STATUS_BAD_PARAM,
                    "%s execute: dx == x is BAD_PARAM", bn);
  void *outs[2] = {dx, dy};
  harness_is_status(rep, adnn_plan_execute_multi(plan, ins, 3, outs, 2), ADNN_STATUS_BAD_PARAM,
                    "%s execute_multi: 2 outputs for a 1-output plan is BAD_PARAM", bn);
  harness_is_status(rep, adnn_plan_execute_multi(plan, ins, 3, outs, 1), ADNN_STATUS_SUCCESS,
                    "%s execute_multi with its one output runs", bn);
  adnn_plan_destroy(plan);
  adnn_free(ctx, x);
  adnn_free(ctx, y);
  adnn_free(ctx, dy);
  adnn_free(ctx, dx);
}

const harness_op_traits harness_pool2d_backward_traits = {
    .inputs = pb_inputs,
    .output = pb_output,
    .set_dtype = pb_set_dtype,
    .oracle = pb_oracle,
    .tolerance = pb_tolerance,
    .fill = pb_fill,
    .variant_count = 1,
    .cases = pb_cases,
    .oracle_selftests = pb_oracle_selftests,
    .bad_descriptors = pb_bad_descriptors,
};
