/* conv2d in the conformance harness: its traits, its oracle (doc/ops.md,
 * "conv2d"), its cases and the oracle's self-tests. Every case runs with AUTO
 * and then with every algorithm of ADNN_CONV2D_ALGO_LIST forced in turn. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Traits                                                                    */
/* ------------------------------------------------------------------------ */

static int is_int8(adnn_dtype t) { return t == ADNN_DTYPE_I8 || t == ADNN_DTYPE_U8; }

static int conv2d_inputs(const harness_desc *hd, harness_tensor *in) {
  const adnn_conv2d_desc *d = &hd->conv2d;
  int n = 0;
  in[n++] = (harness_tensor){"x", d->x};
  in[n++] = (harness_tensor){"w", d->w};
  if (d->has_bias) in[n++] = (harness_tensor){"bias", d->bias};
  if (is_int8(d->x.dtype) && is_int8(d->y.dtype) && d->has_requant_scales)
    in[n++] = (harness_tensor){"requant_scales", d->requant_scales};
  return n;
}

static adnn_tensor_desc conv2d_output(const harness_desc *hd) { return hd->conv2d.y; }

/* dt is x's dtype (adnn-bench's --dtype). Integer inputs take an I8 w and
 * an I32 bias, and y is requantized to x's dtype, the inference layer:
 * x_zero_point 128 for a u8 x (0 for s8), a per-tensor scale of
 * 1 / (64 sqrt(taps)) (most outputs inside y's range for conv2d_fill's
 * inputs), y_zero_point 0. */
static void conv2d_set_dtype(harness_desc *hd, adnn_dtype dt) {
  adnn_conv2d_desc *d = &hd->conv2d;
  d->x.dtype = d->w.dtype = d->bias.dtype = d->y.dtype = dt;
  if (is_int8(dt)) {
    d->w.dtype = ADNN_DTYPE_I8;
    d->bias.dtype = ADNN_DTYPE_I32;
    d->x_zero_point = dt == ADNN_DTYPE_U8 ? 128 : 0;
    d->requant_scale = 1.0 / (64.0 * sqrt((double)(d->w.dims[1] * d->w.dims[2] * d->w.dims[3])));
  }
}

/* Winograd F(4x4, 3x3) amplifies the rounding errors of its transform-domain
 * products M more than F(2x2, 3x3) does, by the ratio of the root-mean-square
 * gains of their output transforms A^T M A on independent errors in M: the
 * mean over output positions (a, b) of sqrt(r_a r_b), r_a the sum of squares of
 * row a of A^T, which is the mean of sqrt(r_a) squared: F(2x2, 3x3) has
 * r = {3, 3}, gain 3; F(4x4, 3x3) has r = {5, 10, 34, 131}, gain
 * ((sqrt 5 + sqrt 10 + sqrt 34 + sqrt 131) / 4)^2 = 32.1. The dot-product
 * bound covers F(2x2, 3x3), so F(4x4, 3x3) gets 32.1 / 3 = 10.7 times it
 * (doc/numerics.md, "Winograd F(4x4, 3x3)", with the errors measured). */
#define WINOGRAD_F4X3_ERROR_FACTOR 10.7

/* The terms of each output's sum: C/G * R * S. */
static harness_tolerance conv2d_tolerance(const harness_desc *hd, adnn_dtype dt) {
  const adnn_conv2d_desc *d = &hd->conv2d;
  if (is_int8(dt)) return (harness_tolerance){0.0, 0.0}; /* exact (doc/numerics.md) */
  const int64_t terms = d->w.dims[1] * d->w.dims[2] * d->w.dims[3];
  harness_tolerance t = harness_dot_tolerance(dt, terms);
  harness_tolerance f32 = harness_dot_tolerance(ADNN_DTYPE_F32, terms);
  if (d->algorithm == ADNN_CONV2D_ALGO_WINOGRAD_F4X3) {
    t = harness_scale_tolerance(t, WINOGRAD_F4X3_ERROR_FACTOR);
    f32 = harness_scale_tolerance(f32, WINOGRAD_F4X3_ERROR_FACTOR);
  }
  /* F16/BF16 (rounded inputs, F32 accumulation): the F32 bound plus one
   * rounding of y (doc/numerics.md, "conv2d in F16/BF16"). */
  return harness_lowp_tolerance(dt, t, f32, 1.0);
}

static void fill_ints(harness_buffer *b, tap_rng *r, int lo, int hi);

static void conv2d_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  const adnn_conv2d_desc *d = &hd->conv2d;
  if (!is_int8(d->x.dtype)) {
    for (int i = 0; i < n_in; i++) harness_fill_uniform(&in[i], r, -1.0, 1.0);
    return;
  }
  /* Integers over each tensor's range; scales around 1 / (64 * terms). */
  const double terms = (double)(d->w.dims[1] * d->w.dims[2] * d->w.dims[3]);
  fill_ints(&in[0], r, d->x.dtype == ADNN_DTYPE_U8 ? 0 : -128, d->x.dtype == ADNN_DTYPE_U8 ? 255 : 127);
  fill_ints(&in[1], r, -128, 127);
  for (int i = 2; i < n_in; i++) {
    if (i == 2 && d->has_bias)
      fill_ints(&in[i], r, -1000, 1000);
    else
      harness_fill_uniform(&in[i], r, 0.5 / (64.0 * terms), 2.0 / (64.0 * terms));
  }
}

/* The variants: ADNN_CONV2D_ALGO_LIST in order, AUTO first. */
static const adnn_conv2d_algorithm algorithms[] = {
#define ALGORITHM_(NAME, name, value, def) ADNN_CONV2D_ALGO_##NAME,
    ADNN_CONV2D_ALGO_LIST(ALGORITHM_)
#undef ALGORITHM_
};
static const char *const algorithm_names[] = {
#define ALGORITHM_NAME_(NAME, name, value, def) #name,
    ADNN_CONV2D_ALGO_LIST(ALGORITHM_NAME_)
#undef ALGORITHM_NAME_
};
#define N_ALGORITHMS ((int)(sizeof algorithms / sizeof algorithms[0]))

static const char *conv2d_set_variant(harness_desc *hd, int v) {
  hd->conv2d.algorithm = algorithms[v];
  return algorithm_names[v];
}

/* The CPU plugin implements every algorithm (doc/cpu.md; direct since the
 * channel-vectorized kernel of kernels/cpu/conv2d-direct.c): each must pass
 * on some case there. */
static int conv2d_variant_expected(const char *backend, int v) {
  return strcmp(backend, "cpu") == 0 && algorithms[v] != ADNN_CONV2D_ALGO_AUTO;
}

/* ------------------------------------------------------------------------ */
/* Oracle                                                                    */
/* ------------------------------------------------------------------------ */

/* Integer inputs (adnn/ops.h): acc = the exact sum of (x - x_zero_point) w
 * over the taps inside the image (long double holds these integers below
 * 2^64 exactly), plus the bias, relu or the identity, then I32 saturation
 * or saturate(round_half_even(v * s[k]) + y_zero_point) with the product
 * in F64. Shapes are checked by the caller. */
static void conv2d_int_oracle(const adnn_conv2d_desc *d, const double *const *in, double *y,
                              int64_t P, int64_t Q) {
  const adnn_tensor_desc *xd = &d->x, *wd = &d->w, *yd = &d->y;
  const int64_t N = xd->dims[0], H = xd->dims[2], W = xd->dims[3];
  const int64_t K = wd->dims[0], CG = wd->dims[1], R = wd->dims[2], S = wd->dims[3];
  const int64_t KG = K / d->groups;
  const int requant = is_int8(yd->dtype);
  const double *scales = requant && d->has_requant_scales ? in[2 + d->has_bias] : NULL;
  for (int64_t n = 0; n < N; n++)
    for (int64_t k = 0; k < K; k++)
      for (int64_t p = 0; p < P; p++)
        for (int64_t q = 0; q < Q; q++) {
          long double acc = 0.0L;
          for (int64_t c = 0; c < CG; c++)
            for (int64_t r = 0; r < R; r++) {
              const int64_t h = p * d->stride_h - d->pad_top + r * d->dilation_h;
              if (h < 0 || h >= H) continue;
              for (int64_t s = 0; s < S; s++) {
                const int64_t v = q * d->stride_w - d->pad_left + s * d->dilation_w;
                if (v < 0 || v >= W) continue;
                const double xv = in[0][n * xd->strides[0] + (k / KG * CG + c) * xd->strides[1] +
                                        h * xd->strides[2] + v * xd->strides[3]];
                acc += (long double)(xv - d->x_zero_point) *
                       in[1][k * wd->strides[0] + c * wd->strides[1] + r * wd->strides[2] +
                             s * wd->strides[3]];
              }
            }
          if (d->has_bias) acc += in[2][k * d->bias.strides[0]];
          if (d->activation.kind == ADNN_ACTIVATION_RELU && acc < 0) acc = 0;
          double out;
          if (requant) {
            const double scale = scales ? scales[k * d->requant_scales.strides[0]] : d->requant_scale;
            const double lo = yd->dtype == ADNN_DTYPE_I8 ? -128 : 0;
            const double hi = yd->dtype == ADNN_DTYPE_I8 ? 127 : 255;
            /* A NaN product (a NaN per-channel scale) gives the zero point. */
            const double prod = (double)acc * scale;
            out = (prod != prod ? 0.0 : nearbyint(prod)) + d->y_zero_point;
            out = out < lo ? lo : out > hi ? hi : out;
          } else {
            out = acc < -2147483648.0L ? -2147483648.0
                  : acc > 2147483647.0L ? 2147483647.0 : (double)acc;
          }
          y[n * yd->strides[0] + k * yd->strides[1] + p * yd->strides[2] + q * yd->strides[3]] = out;
        }
}

/* y[n, k, p, q] = act(bias[k] + sum over c < C/G, r < R, s < S of
 *   X(n, g*C/G + c, p*sh - pt + r*dh, q*sw - pl + s*dw) * w[k, c, r, s])
 * with g = k / (K/G) and X zero outside the image (doc/ops.md). Taps in the
 * padding add nothing and are skipped. */
static int conv2d_oracle(const harness_desc *hd, const double *const *in, double *y, char *why,
                         size_t why_len) {
  const adnn_conv2d_desc *d = &hd->conv2d;
  const adnn_tensor_desc *xd = &d->x, *wd = &d->w, *yd = &d->y;
  const int64_t N = xd->dims[0], C = xd->dims[1], H = xd->dims[2], W = xd->dims[3];
  const int64_t K = wd->dims[0], CG = wd->dims[1], R = wd->dims[2], S = wd->dims[3];
  const int64_t G = d->groups;
  if (G < 1 || C % G != 0 || K % G != 0 || CG != C / G) {
    snprintf(why, why_len, "conv2d: C %lld, K %lld, groups %lld and filter channels %lld do not "
             "fit", (long long)C, (long long)K, (long long)G, (long long)CG);
    return -1;
  }
  const int64_t P = (H + d->pad_top + d->pad_bottom - d->dilation_h * (R - 1) - 1) / d->stride_h + 1;
  const int64_t Q = (W + d->pad_left + d->pad_right - d->dilation_w * (S - 1) - 1) / d->stride_w + 1;
  if (yd->dims[0] != N || yd->dims[1] != K || yd->dims[2] != P || yd->dims[3] != Q) {
    snprintf(why, why_len, "conv2d: y is [%lld, %lld, %lld, %lld], doc/ops.md gives [%lld, %lld, "
             "%lld, %lld]", (long long)yd->dims[0], (long long)yd->dims[1], (long long)yd->dims[2],
             (long long)yd->dims[3], (long long)N, (long long)K, (long long)P, (long long)Q);
    return -1;
  }
  const double *x = in[0], *w = in[1], *bias = d->has_bias ? in[2] : NULL;
  const int64_t KG = K / G;
  if (is_int8(xd->dtype)) {
    conv2d_int_oracle(d, in, y, P, Q);
    return 0;
  }
  for (int64_t n = 0; n < N; n++)
    for (int64_t k = 0; k < K; k++) {
      const int64_t g = k / KG;
      for (int64_t p = 0; p < P; p++)
        for (int64_t q = 0; q < Q; q++) {
          harness_sum sum;
          harness_sum_init(&sum);
          for (int64_t c = 0; c < CG; c++) {
            const double *xc = x + n * xd->strides[0] + (g * CG + c) * xd->strides[1];
            const double *wc = w + k * wd->strides[0] + c * wd->strides[1];
            for (int64_t r = 0; r < R; r++) {
              const int64_t h = p * d->stride_h - d->pad_top + r * d->dilation_h;
              if (h < 0 || h >= H) continue;
              for (int64_t s = 0; s < S; s++) {
                const int64_t v = q * d->stride_w - d->pad_left + s * d->dilation_w;
                if (v < 0 || v >= W) continue;
                harness_sum_add(&sum, (long double)xc[h * xd->strides[2] + v * xd->strides[3]] *
                                          wc[r * wd->strides[2] + s * wd->strides[3]]);
              }
            }
          }
          long double acc = harness_sum_value(&sum);
          if (bias) acc += bias[k * d->bias.strides[0]];
          y[n * yd->strides[0] + k * yd->strides[1] + p * yd->strides[2] + q * yd->strides[3]] =
              (double)harness_activation_oracle(&d->activation, acc);
        }
    }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

/* Layouts of x, w and y. */
enum conv_layout {
  NCHW,      /* x, y NCHW; w KCRS */
  NHWC,      /* x, y NHWC; w KRSC */
  PADDED,    /* every tensor row-major with gaps */
  NCHW_KRSC, /* x, y NCHW; w KRSC */
  NHWC_KCRS, /* x, y NHWC; w KCRS */
  Y_PITCH    /* x, y NCHW, w KCRS, y's rows 3 elements longer than Q */
};
static const char *const layout_names[] = {" nchw",      " nhwc",      " padded",
                                           " nchw krsc", " nhwc kcrs", " y pitch+3"};

typedef struct conv_spec {
  const char *name;
  int64_t n, c, h, w, k, r, s;
  int64_t sh, sw, pt, pb, pl, pr, dh, dw, g;
  int bias;
  adnn_activation_kind act;
  double alpha, beta;
  enum conv_layout layout;
  adnn_dtype dt;
} conv_spec;

static void conv_case(harness_suite *suite, const conv_spec *s) {
  harness_case c;
  const adnn_dtype dt = s->dt ? s->dt : ADNN_DTYPE_F32;
  harness_case_init(&c, harness_op_find("conv2d"), dt,
                    "%s n%lld c%lld %lldx%lld k%lld f%lldx%lld s%lld,%lld p%lld,%lld,%lld,%lld "
                    "d%lld,%lld g%lld%s%s",
                    s->name, (long long)s->n, (long long)s->c, (long long)s->h, (long long)s->w,
                    (long long)s->k, (long long)s->r, (long long)s->s, (long long)s->sh,
                    (long long)s->sw, (long long)s->pt, (long long)s->pb, (long long)s->pl,
                    (long long)s->pr, (long long)s->dh, (long long)s->dw, (long long)s->g,
                    s->bias ? " bias" : "", layout_names[s->layout]);
  if (s->act) {
    char a[64];
    snprintf(a, sizeof a, " %s(%g,%g)", adnn_activation_name(s->act), s->alpha, s->beta);
    strncat(c.name, a, sizeof c.name - strlen(c.name) - 1);
  }
  adnn_conv2d_desc *d = &c.desc.conv2d;
  adnn_conv2d_desc_init(d);
  const int x_nhwc = s->layout == NHWC || s->layout == NHWC_KCRS;
  const int w_krsc = s->layout == NHWC || s->layout == NCHW_KRSC;
  const enum harness_layout xl = x_nhwc ? HARNESS_NHWC
                                 : s->layout == PADDED ? HARNESS_PADDED : HARNESS_PACKED;
  const enum harness_layout wl = w_krsc ? HARNESS_NHWC
                                 : s->layout == PADDED ? HARNESS_PADDED : HARNESS_PACKED;
  d->x = harness_tensor_desc4(dt, s->n, s->c, s->h, s->w, xl);
  d->w = harness_tensor_desc4(dt, s->k, s->c / s->g, s->r, s->s, wl);
  d->stride_h = s->sh;
  d->stride_w = s->sw;
  d->pad_top = s->pt;
  d->pad_bottom = s->pb;
  d->pad_left = s->pl;
  d->pad_right = s->pr;
  d->dilation_h = s->dh;
  d->dilation_w = s->dw;
  d->groups = s->g;
  d->activation.kind = s->act;
  d->activation.alpha = s->alpha;
  d->activation.beta = s->beta;
  int64_t yd[4];
  if (adnn_conv2d_output_dims(d, yd) != ADNN_STATUS_SUCCESS) {
    snprintf(c.name + strlen(c.name), sizeof c.name - strlen(c.name), ": adnn_conv2d_output_dims "
             "failed: %s", adnn_last_error());
    d->y = harness_tensor_desc4(dt, 0, 0, 0, 0, HARNESS_PACKED); /* the oracle rejects it */
  } else {
    d->y = harness_tensor_desc4(dt, yd[0], yd[1], yd[2], yd[3], xl);
  }
  if (s->layout == Y_PITCH && d->y.rank == 4) {
    d->y.strides[2] = d->y.dims[3] + 3;
    d->y.strides[1] = d->y.strides[2] * d->y.dims[2];
    d->y.strides[0] = d->y.strides[1] * d->y.dims[1];
  }
  if (s->bias) {
    d->has_bias = 1;
    d->bias = harness_vector_desc(dt, s->k);
  }
  if (harness_case_alloc(&c) != 0) return;
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  harness_fill_mixed(&c.in[0], &r);
  const double wscale = 1.0 / sqrt((double)(s->c / s->g * s->r * s->s));
  harness_fill_uniform(&c.in[1], &r, -2 * wscale, 2 * wscale);
  if (s->bias) harness_fill_uniform(&c.in[2], &r, -0.5, 0.5);
  harness_submit(suite, &c);
}

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64
#define F16 ADNN_DTYPE_F16
#define BF16 ADNN_DTYPE_BF16
#define A_RELU ADNN_ACTIVATION_RELU
#define A_CLAMP ADNN_ACTIVATION_CLAMP
#define A_GELU ADNN_ACTIVATION_GELU
#define A_SILU ADNN_ACTIVATION_SILU
#define A_HARDSWISH ADNN_ACTIVATION_HARDSWISH
#define A_ELU ADNN_ACTIVATION_ELU
#define A_LEAKY ADNN_ACTIVATION_LEAKY_RELU
#define A_TANH ADNN_ACTIVATION_TANH

static const conv_spec conv_specs[] = {
    /* name      n  c   h   w   k  r  s  sh sw pt pb pl pr dh dw g  bias act alpha beta layout dt */
    {"1x1",      1, 8,  5,  7,  6, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, NCHW, F32},
    {"1x1",      3, 5,  4,  6,  7, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, NHWC, F32},
    {"1x1",      1, 4,  7,  7,  3, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, NCHW, F32},
    {"1x1 pad",  1, 3,  4,  4,  2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NCHW, F32},
    {"1x1 g2",   1, 6,  5,  5,  4, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2, 1, 0, 0, 0, NCHW, F32},
    {"1x1 big",  1, 64, 14, 14, 48, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, A_RELU, 0, 0, NHWC, F32},
    {"3x3",      1, 4,  8,  8,  5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_RELU, 0, 0, NCHW, F32},
    {"3x3",      3, 6,  9,  7,  8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NHWC, F32},
    {"3x3 odd",  1, 3,  7,  5,  4, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, NCHW, F32},
    {"3x3 s2",   3, 4,  9, 10,  6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NCHW, F32},
    {"3x3 s3 asym", 1, 5, 11, 8, 4, 3, 3, 3, 3, 0, 2, 1, 0, 1, 1, 1, 1, 0, 0, 0, NCHW, F32},
    {"3x3 asym", 1, 4,  8,  9,  4, 3, 3, 1, 1, 0, 1, 2, 0, 1, 1, 1, 1, 0, 0, 0, NHWC, F32},
    {"3x3 s1,2", 1, 3,  9,  9,  4, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, NCHW, F32},
    {"3x3 dil2", 1, 4,  9,  9,  4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 1, 0, 0, 0, NCHW, F32},
    {"3x3 dil2 s2 g2", 3, 4, 11, 10, 6, 3, 3, 2, 2, 2, 1, 1, 2, 2, 2, 2, 1, 0, 0, 0, NHWC, F32},
    {"3x3 g2",   1, 8,  6,  6,  6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 0, 0, 0, NCHW, F32},
    {"3x3 g2",   3, 8,  7,  6,  4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 0, 0, 0, NHWC, F32},
    {"dw 3x3",   1, 8,  9,  9,  8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8, 1, A_CLAMP, 0, 6, NCHW, F32},
    {"dw 3x3 s2", 3, 16, 10, 10, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 16, 1, 0, 0, 0, NHWC, F32},
    {"dw 3x3 asym", 1, 5, 7, 6, 5, 3, 3, 1, 1, 0, 2, 2, 1, 1, 1, 5, 0, 0, 0, 0, NHWC, F32},
    {"dw 5x5",   1, 6,  8,  8,  6, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 6, 1, 0, 0, 0, NCHW, F32},
    {"dw 3x3 dil2", 1, 4, 9, 9, 4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 4, 1, 0, 0, 0, NHWC, F32},
    {"dw x2",    1, 4,  6,  6,  8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, 1, 0, 0, 0, NCHW, F32},
    {"dw big",   1, 64, 28, 28, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 64, 1, A_RELU, 0, 0, NHWC, F32},
    /* Depthwise on the channel-vector path (channels in the vector lanes)
     * and on the NCHW spatial one (few channels, wide rows): odd channel
     * counts leave a partial vector, 5x5 and stride 2 take the fixed-width
     * kernels, dilation the generic one, 7x7x1024 is MobileNet's last layer. */
    {"dw 5x5 s2", 2, 24, 13, 12, 24, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1, 24, 1, A_RELU, 0, 0, NHWC, F32},
    {"dw 5x5 s2 odd", 2, 19, 11, 13, 19, 5, 5, 2, 2, 2, 1, 2, 1, 1, 1, 19, 1, A_CLAMP, 0, 6, NCHW, F32},
    {"dw 7x7x1024", 1, 1024, 7, 7, 1024, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1024, 1, A_CLAMP, 0, 6, NHWC, F32},
    {"dw 7x7x1024", 2, 1024, 7, 7, 1024, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1024, 0, 0, 0, 0, NCHW, F32},
    {"dw odd c", 3, 37, 9, 10, 37, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 37, 1, A_GELU, 0, 0, NHWC, F32},
    {"dw odd c s2,1 asym", 2, 21, 8, 9, 21, 3, 3, 2, 1, 1, 0, 0, 1, 1, 1, 21, 1, A_HARDSWISH, 0, 0, NCHW, F32},
    {"dw dil2 asym", 1, 20, 12, 11, 20, 3, 3, 1, 2, 2, 1, 0, 2, 2, 2, 20, 1, A_SILU, 0, 0, NCHW, F32},
    {"dw 5x5 dil2", 2, 13, 12, 12, 13, 5, 5, 1, 1, 4, 4, 4, 4, 2, 2, 13, 0, 0, 0, 0, NHWC, F32},
    {"dw 3x5 s2", 1, 33, 10, 17, 33, 3, 5, 2, 2, 1, 1, 2, 2, 1, 1, 33, 1, A_LEAKY, 0.1, 0, NHWC, F32},
    {"dw 1x1 img", 2, 17, 1, 1, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 17, 1, A_RELU, 0, 0, NHWC, F32},
    {"dw spatial", 2, 3, 40, 70, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1, A_RELU, 0, 0, NCHW, F32},
    {"dw spatial 5x5 s2", 1, 5, 37, 70, 5, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1, 5, 0, 0, 0, 0, NCHW, F32},
    {"dw krsc", 2, 24, 9, 9, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 24, 1, A_RELU, 0, 0, NCHW_KRSC, F32},
    /* NCHW rows too wide for the whole-chunk buffer (the row ring), 1001
     * outputs wide: every output row ends in a partial vector of pixels. */
    {"dw ring 5x5", 1, 12, 20, 1001, 12, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 12, 1, A_RELU, 0, 0, NCHW, F32},
    {"dw kcrs", 2, 24, 9, 9, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 24, 1, 0, 0, 0, NHWC_KCRS, F32},
    /* The NCHW plane kernel (W in the lanes): odd widths against the vector
     * length, padding 0 and 2, strides 1 to 3, dilation, batches. */
    {"dw nchw s2 odd p0", 2, 7, 15, 31, 7, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, 7, 1, A_RELU, 0, 0, NCHW, F32},
    {"dw nchw p2 wide", 2, 5, 13, 37, 5, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1, 5, 1, 0, 0, 0, NCHW, F32},
    {"dw nchw 5x5 p1", 1, 6, 11, 29, 6, 5, 5, 1, 1, 1, 1, 1, 1, 1, 1, 6, 0, A_CLAMP, 0, 6, NCHW, F32},
    {"dw nchw s2 dil2", 2, 4, 17, 23, 4, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 4, 1, 0, 0, 0, NCHW, F32},
    {"dw nchw s3", 1, 3, 14, 20, 3, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 3, 1, 0, 0, 0, NCHW, F32},
    {"dw nchw 112 s2", 2, 3, 112, 112, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3, 1, A_RELU, 0, 0, NCHW, F32},
    /* Column stride 2 on the plane kernel (at least 56x56 outputs: the
     * vectorized even/odd column split): odd and even sizes, padding 0, 1
     * (TensorFlow's asymmetric SAME) and 2, 5x5, row stride 1, dilation,
     * many channels, batches, KRSC filters (repacked). */
    {"dw nchw s2 plane odd", 2, 6, 113, 115, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 6, 1, A_CLAMP, 0, 6, NCHW, F32},
    {"dw nchw s2 plane p0", 1, 5, 114, 128, 5, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, 5, 0, 0, 0, 0, NCHW, F32},
    {"dw nchw s2 plane same", 1, 9, 112, 112, 9, 3, 3, 2, 2, 0, 1, 0, 1, 1, 1, 9, 1, A_RELU, 0, 0, NCHW, F32},
    {"dw nchw 5x5 s2 plane", 2, 3, 116, 117, 3, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1, 3, 1, A_GELU, 0, 0, NCHW, F32},
    {"dw nchw s1,2 plane", 1, 4, 56, 112, 4, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 4, 1, 0, 0, 0, NCHW, F32},
    {"dw nchw s2 dil2 plane", 1, 3, 118, 119, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 3, 0, 0, 0, 0, NCHW, F32},
    {"dw nchw s2 plane krsc", 2, 40, 112, 112, 40, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 40, 1, A_RELU, 0, 0, NCHW_KRSC, F32},
    {"5x5",      1, 3, 10, 10,  4, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, A_GELU, 0, 0, NCHW, F32},
    {"5x5 s2",   3, 3, 11,  9,  5, 5, 5, 2, 2, 2, 1, 2, 1, 1, 1, 1, 0, 0, 0, 0, NHWC, F32},
    {"7x7 s2",   1, 3, 17, 17,  8, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, A_RELU, 0, 0, NCHW, F32},
    {"7x7",      1, 2,  9,  9,  3, 7, 7, 1, 1, 3, 3, 3, 3, 1, 1, 1, 0, 0, 0, 0, NHWC, F32},
    {"1x7",      1, 3,  5,  9,  4, 1, 7, 1, 1, 0, 0, 3, 3, 1, 1, 1, 1, 0, 0, 0, NCHW, F32},
    {"pad>=k/2", 1, 2,  5,  5,  3, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, NCHW, F32},
    {"pad>k",    1, 2,  5,  6,  2, 3, 3, 1, 1, 3, 0, 0, 3, 1, 1, 1, 1, 0, 0, 0, NHWC, F32},
    {"tiny 1x1 img", 1, 3, 1, 1, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NCHW, F32},
    {"tiny 2x3 img", 3, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NHWC, F32},
    {"tiny 2x3 1x1", 1, 4, 2, 3, 5, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, NCHW, F32},
    {"3x3 padded", 2, 3, 6, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, PADDED, F32},
    {"1x1 padded", 1, 4, 5, 6, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, PADDED, F32},
    {"3x3 big",  1, 32, 28, 28, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_RELU, 0, 0, NCHW, F32},
    {"3x3 big",  3, 16, 15, 17, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NHWC, F32},
    {"3x3 resnet", 2, 64, 28, 28, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_RELU, 0, 0, NHWC, F32},
    {"1x1 resnet", 2, 128, 14, 14, 256, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, NCHW, F32},
    /* From the former CUDA-only test: a rectangular dilated filter, y rows
     * with a pitch, the two mixed filter layouts, more epilogues. */
    {"3x2 dil2 s2 g2 asym", 2, 4, 11, 10, 6, 3, 2, 2, 2, 0, 2, 1, 0, 2, 2, 2, 1, A_GELU, 0, 0, NHWC, F32},
    {"3x3 asym", 2, 3,  6,  7,  4, 3, 3, 1, 1, 1, 0, 1, 2, 1, 1, 1, 1, A_SILU, 0, 0, Y_PITCH, F32},
    {"3x3 s2,1 asym", 1, 3, 6, 6, 2, 3, 3, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, A_HARDSWISH, 0, 0, NCHW, F32},
    {"3x3 g2",   1, 4,  5,  6,  4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, A_ELU, 0.1, 0, NHWC, F32},
    {"3x3 g2",   2, 6,  5,  5,  4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, A_RELU, 0, 0, NCHW_KRSC, F32},
    {"3x3 asym", 1, 4,  6,  7,  8, 3, 3, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, A_LEAKY, 0.1, 0, NHWC_KCRS, F32},
    {"3x3 k16",  2, 8,  9,  9, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NCHW, F32},
    /* For Winograd F(4x4, 3x3): P and Q not multiples of 4 (partial edge
     * tiles), more tile columns than one AVX-512 vector (19, 24: a full
     * vector and a partial one), asymmetric and zero padding, several
     * images, C and K not multiples of 8 or 16 (partial channel vectors in
     * NHWC), groups, and few tiles with many output channels (one block,
     * split over chunks of output channels across the threads). */
    {"3x3 wf4 edges", 2, 19, 13, 22, 21, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_RELU, 0, 0, NCHW, F32},
    {"3x3 wf4 wide", 1, 9, 10, 75, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NCHW, F32},
    {"3x3 wf4 wide", 2, 5, 6, 96, 7, 3, 3, 1, 1, 0, 2, 2, 0, 1, 1, 1, 0, 0, 0, 0, NCHW, F32},
    {"3x3 wf4 edges", 3, 21, 11, 14, 19, 3, 3, 1, 1, 0, 2, 1, 0, 1, 1, 1, 1, A_SILU, 0, 0, NHWC, F32},
    {"3x3 wf4 nopad", 2, 17, 9, 10, 35, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, NHWC, F32},
    {"3x3 wf4 g3", 2, 12, 9, 10, 18, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1, 0, 0, 0, NCHW_KRSC, F32},
    {"3x3 wf4 g3", 1, 12, 10, 9, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1, A_RELU, 0, 0, NHWC_KCRS, F32},
    {"3x3 wf4 kchunks", 1, 64, 7, 7, 96, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_RELU, 0, 0, NCHW, F32},
    {"3x3 wf4 kchunks", 1, 48, 7, 7, 80, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NHWC, F32},
    {"3x3 wf4 big", 1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_RELU, 0, 0, NCHW, F32},
    /* The CPU direct kernel (kernels/cpu/conv2d-direct.c; every case above
     * runs it too where it applies): output rows whose width is not a
     * multiple of any tile width, channel counts that leave partial filter
     * blocks and an odd number of blocks (a pair and a single), padding on
     * every side (the border columns of an NHWC x are clipped, an NCHW x is
     * copied padded), padding wider than the filter (pixels without a tap),
     * stride 2 with 7x7 as a network's first layer, dilation, groups,
     * batches, both filter layouts, bias and epilogues. Names start with
     * "direct" for t/conformance-simd.sh. */
    {"direct edge q", 2, 5, 9, 23, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_RELU, 0, 0, NHWC, F32},
    {"direct edge q", 2, 5, 9, 23, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_RELU, 0, 0, NCHW, F32},
    {"direct 7x7 s2", 2, 3, 29, 31, 20, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, A_RELU, 0, 0, NCHW, F32},
    {"direct 7x7 s2 asym", 2, 3, 29, 31, 20, 7, 7, 2, 2, 3, 2, 1, 3, 1, 1, 1, 1, 0, 0, 0, NHWC, F32},
    {"direct dil2,3", 1, 10, 12, 13, 9, 3, 3, 1, 1, 2, 1, 3, 2, 2, 3, 1, 1, A_CLAMP, -0.3, 0.4, NCHW, F32},
    {"direct dil2,3", 2, 10, 12, 13, 9, 3, 3, 2, 1, 2, 1, 3, 2, 2, 3, 1, 0, 0, 0, 0, NHWC, F32},
    {"direct g3 s2", 2, 12, 7, 11, 18, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3, 1, A_SILU, 0, 0, NHWC, F32},
    {"direct g2 k40", 1, 16, 9, 9, 80, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 0, 0, 0, NCHW, F32},
    {"direct k40 s2", 1, 40, 10, 15, 40, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, A_GELU, 0, 0, NCHW, F32},
    {"direct 1x1 s2", 2, 17, 9, 9, 24, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, NHWC, F32},
    {"direct wide", 1, 8, 5, 37, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_LEAKY, 0.1, 0, NCHW_KRSC, F32},
    {"direct wide", 1, 9, 4, 53, 33, 3, 3, 1, 1, 1, 1, 2, 2, 1, 1, 1, 1, A_TANH, 0, 0, NHWC_KCRS, F32},
    {"direct pad>k", 1, 3, 4, 5, 9, 5, 5, 1, 1, 4, 4, 4, 5, 1, 1, 1, 1, A_RELU, 0, 0, NHWC, F32},
    {"direct 5x3 s3,2", 3, 7, 14, 16, 12, 5, 3, 3, 2, 2, 1, 0, 1, 1, 1, 1, 1, A_ELU, 1.0, 0, NHWC, F32},
    /* gemm_1x1 with a stride (x subsampled first) and the GEMM engine's
     * narrow calls (n <= 128 output pixels per image: A read in place):
     * 7x7 = 49 outputs, odd channel counts, k above the engine's kc (512),
     * batch 1 and 3, groups, NCHW and NHWC (issue 15). */
    {"1x1 s2 n49", 1, 70, 14, 14, 130, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, A_RELU, 0, 0, NCHW, F32},
    {"1x1 s2 n49", 3, 33, 13, 13, 20, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, NHWC, F32},
    {"1x1 s2,3 g2", 2, 12, 9, 11, 10, 1, 1, 2, 3, 0, 0, 0, 0, 1, 1, 2, 1, A_RELU, 0, 0, NCHW, F32},
    {"1x1 s2,3 g2", 2, 12, 9, 11, 10, 1, 1, 2, 3, 0, 0, 0, 0, 1, 1, 2, 0, 0, 0, 0, NHWC, F32},
    {"1x1 n49 k600", 1, 600, 7, 7, 37, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, NCHW, F32},
    {"1x1 n116", 2, 20, 4, 29, 50, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, A_RELU, 0, 0, NCHW, F32},
    {"1x1 s2 n196", 1, 64, 28, 28, 100, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, NCHW, F32},
    /* F64: the CPU plugin runs these on its reference kernels, which the
     * oracle does not share. */
    {"3x3",      1, 3,  6,  6,  4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_RELU, 0, 0, NCHW, F64},
    {"5x5 s2 g2", 3, 4, 9, 8, 6, 5, 5, 2, 2, 2, 1, 1, 2, 1, 1, 2, 1, 0, 0, 0, NHWC, F64},
    {"dw 3x3",   1, 6,  7,  7,  6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6, 0, 0, 0, 0, NCHW, F64},
    {"3x3",      2, 3,  7,  6,  4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_TANH, 0, 0, NCHW, F64},
    {"1x1",      3, 5,  4,  6,  7, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, NHWC, F64},
    {"3x3 dil2 s2 g2", 3, 4, 11, 10, 6, 3, 3, 2, 2, 2, 1, 1, 2, 2, 2, 2, 1, 0, 0, 0, NHWC, F64},
    {"3x3 padded", 2, 3, 6, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_CLAMP, -0.5, 0.5, PADDED, F64},
    {"7x7 s2",   1, 3, 17, 17,  8, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, A_GELU, 0, 0, NCHW, F64},
    /* F16 and BF16 (rounded inputs, F32 arithmetic, one rounding of y): the CPU's
     * lowp path on each F32 algorithm it picks, the reference loops for the
     * padded layout. */
    {"1x1",      3, 5,  4,  6,  7, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, NHWC, F16},
    {"1x1 resnet", 2, 64, 14, 14, 96, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, A_RELU, 0, 0, NCHW, F16},
    {"3x3",      2, 6,  9,  7,  8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_SILU, 0, 0, NCHW, F16},
    {"3x3 big",  1, 32, 28, 28, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_RELU, 0, 0, NHWC, F16},
    {"3x3 s2 g2", 3, 8, 11, 10, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2, 1, 0, 0, 0, NHWC, F16},
    {"7x7 s2",   1, 3, 17, 17,  8, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, A_RELU, 0, 0, NCHW, F16},
    {"dw 3x3 s2", 3, 16, 10, 10, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 16, 1, A_CLAMP, 0, 6, NHWC, F16},
    {"dw 5x5 odd", 2, 19, 11, 13, 19, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 19, 0, 0, 0, 0, NCHW, F16},
    {"3x3 padded", 2, 3, 6, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, PADDED, F16},
    {"3x3 krsc", 2, 6,  5,  5,  4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_GELU, 0, 0, NCHW_KRSC, F16},
    {"1x1 s2",   2, 16, 9,  9, 24, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, A_RELU, 0, 0, NCHW, F16},
    {"1x1",      3, 5,  4,  6,  7, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, NHWC, BF16},
    {"1x1 resnet", 2, 64, 14, 14, 96, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, A_RELU, 0, 0, NCHW, BF16},
    {"3x3",      2, 6,  9,  7,  8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_SILU, 0, 0, NCHW, BF16},
    {"3x3 big",  1, 32, 28, 28, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_RELU, 0, 0, NHWC, BF16},
    {"3x3 s2 g2", 3, 8, 11, 10, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2, 1, 0, 0, 0, NHWC, BF16},
    {"7x7 s2",   1, 3, 17, 17,  8, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, A_RELU, 0, 0, NCHW, BF16},
    {"dw 3x3 s2", 3, 16, 10, 10, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 16, 1, A_CLAMP, 0, 6, NHWC, BF16},
    {"dw 5x5 odd", 2, 19, 11, 13, 19, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 19, 0, 0, 0, 0, NCHW, BF16},
    {"3x3 padded", 2, 3, 6, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, PADDED, BF16},
    {"3x3 krsc", 2, 6,  5,  5,  4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_GELU, 0, 0, NCHW_KRSC, BF16},
    /* BF16 convolutions are a matmul on a CPU with AVX-512-BF16
     * (kernels/cpu/conv2d-lowp.c): 1x1 on x in place (NHWC and NCHW, KRSC
     * filters, wider than a 256-column tile), and NCHW with KCRS filters
     * on gathered columns (strides, padding, dilation, asymmetric padding);
     * strided NHWC 1x1, groups and KRSC 3x3 keep the widening route. */
    {"1x1 s2",   2, 16, 9,  9, 24, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, A_RELU, 0, 0, NCHW, BF16},
    {"1x1 s2",   2, 13, 9, 10, 20, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, NHWC, BF16},
    {"1x1 wide", 1, 70, 6,  7, 300, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, A_GELU, 0, 0, NHWC, BF16},
    {"1x1 wide", 2, 33, 5,  9, 270, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, A_SILU, 0, 0, NCHW_KRSC, BF16},
    {"1x1 pad",  1, 3,  4,  4,  2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NCHW, BF16},
    {"3x3 dil2 s2", 2, 5, 11, 10, 12, 3, 3, 2, 2, 2, 1, 1, 2, 2, 2, 1, 1, A_RELU, 0, 0, NCHW, BF16},
    {"3x3 s3 asym", 1, 5, 11, 8, 4, 3, 3, 3, 3, 0, 2, 1, 0, 1, 1, 1, 1, 0, 0, 0, NCHW, BF16},
    {"5x5 wide", 1, 7, 24, 20, 300, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, A_GELU, 0, 0, NCHW, BF16},
    {"1x1 g2",   1, 6,  5,  5,  4, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2, 1, 0, 0, 0, NCHW, BF16},
};

/* Seeded integers in [lo, hi] into every element of b. */
static void fill_ints(harness_buffer *b, tap_rng *r, int lo, int hi) {
  for (int64_t i = 0; i < b->span; i++) {
    if (!b->member[i]) continue;
    double v = floor(tap_rng_uniform(r, (double)lo, (double)hi + 1.0));
    b->v[i] = v > hi ? hi : v;
  }
}

/* The integer settings of a case with I8/U8 inputs. */
typedef struct conv_quant {
  adnn_dtype yt;   /* I32, I8 or U8 */
  int32_t zx, zy;  /* x_zero_point, y_zero_point */
  int per_channel; /* requant_scales [K] instead of requant_scale */
  int fill;        /* 0 random over the ranges; 1 small (|v| <= 4) with scale 1/2, for ties;
                      2 extreme (x and w at the ends of their ranges, bias `bias`);
                      3 random, with every third per-channel scale NaN */
  int32_t bias;
} conv_quant;

/* A convolution with integer inputs (s->dt I8 or U8, w I8): exact against
 * the oracle. Integer outputs cannot hold the NaN poison, so each case runs
 * twice, as matmul's do: on y filled with 0xFF bytes, then ("poison0") on y
 * preset to 0; an element left unwritten fails one of the two. y is packed
 * (the harness checks that a strided y's gaps stay NaN). */
static void conv_int_case(harness_suite *suite, const conv_spec *s, const conv_quant *qz) {
  const adnn_dtype dt = s->dt, yt = qz->yt;
  const int requant = is_int8(yt);
  const int64_t terms = s->c / s->g * s->r * s->s;
  double scale = 32.0 / (8000.0 * sqrt((double)terms));
  if (qz->fill == 1) scale = 0.5;
  for (int poison = 0; poison < 2; poison++) {
    harness_case c;
    char q[128];
    snprintf(q, sizeof q, " %s->%s zx %d", adnn_dtype_name(dt), adnn_dtype_name(yt), (int)qz->zx);
    if (requant)
      snprintf(q + strlen(q), sizeof q - strlen(q), " %s %g zy %d",
               qz->per_channel ? "scales~" : "scale", scale, (int)qz->zy);
    if (qz->fill)
      snprintf(q + strlen(q), sizeof q - strlen(q), " %s",
               qz->fill == 1 ? "small" : qz->fill == 2 ? "extreme" : "nan scales");
    harness_case_init(&c, harness_op_find("conv2d"), dt,
                      "%s n%lld c%lld %lldx%lld k%lld f%lldx%lld s%lld,%lld p%lld,%lld,%lld,%lld "
                      "d%lld,%lld g%lld%s%s%s%s%s",
                      s->name, (long long)s->n, (long long)s->c, (long long)s->h, (long long)s->w,
                      (long long)s->k, (long long)s->r, (long long)s->s, (long long)s->sh,
                      (long long)s->sw, (long long)s->pt, (long long)s->pb, (long long)s->pl,
                      (long long)s->pr, (long long)s->dh, (long long)s->dw, (long long)s->g,
                      s->bias ? " bias" : "", layout_names[s->layout],
                      s->act == A_RELU ? " relu" : "", q, poison ? " poison0" : "");
    adnn_conv2d_desc *d = &c.desc.conv2d;
    adnn_conv2d_desc_init(d);
    const int x_nhwc = s->layout == NHWC || s->layout == NHWC_KCRS;
    const int w_krsc = s->layout == NHWC || s->layout == NCHW_KRSC;
    const enum harness_layout xl = x_nhwc ? HARNESS_NHWC : HARNESS_PACKED;
    d->x = harness_tensor_desc4(dt, s->n, s->c, s->h, s->w, xl);
    d->w = harness_tensor_desc4(ADNN_DTYPE_I8, s->k, s->c / s->g, s->r, s->s,
                                w_krsc ? HARNESS_NHWC : HARNESS_PACKED);
    d->stride_h = s->sh;
    d->stride_w = s->sw;
    d->pad_top = s->pt;
    d->pad_bottom = s->pb;
    d->pad_left = s->pl;
    d->pad_right = s->pr;
    d->dilation_h = s->dh;
    d->dilation_w = s->dw;
    d->groups = s->g;
    d->activation.kind = s->act;
    d->x_zero_point = qz->zx;
    int64_t yd[4] = {0, 0, 0, 0};
    if (adnn_conv2d_output_dims(d, yd) != ADNN_STATUS_SUCCESS)
      snprintf(c.name + strlen(c.name), sizeof c.name - strlen(c.name),
               ": adnn_conv2d_output_dims failed: %s", adnn_last_error());
    d->y = harness_tensor_desc4(yt, yd[0], yd[1], yd[2], yd[3], xl);
    if (s->bias) {
      d->has_bias = 1;
      d->bias = harness_vector_desc(ADNN_DTYPE_I32, s->k);
    }
    if (requant) {
      d->requant_scale = scale;
      d->y_zero_point = qz->zy;
      if (qz->per_channel) {
        d->has_requant_scales = 1;
        d->requant_scales = harness_vector_desc(ADNN_DTYPE_F32, s->k);
      }
    }
    if (harness_case_alloc(&c) != 0) return;
    tap_rng r = tap_rng_seed(harness_seed(c.name));
    const int xlo = dt == ADNN_DTYPE_U8 ? 0 : -128, xhi = dt == ADNN_DTYPE_U8 ? 255 : 127;
    for (int i = 0; i < c.n_in; i++) {
      harness_buffer *b = &c.in[i];
      if (i == 2 && s->bias) {
        if (qz->fill == 2)
          for (int64_t e = 0; e < b->span; e++) b->v[e] = qz->bias;
        else
          fill_ints(b, &r, -3000, 3000);
      } else if (i >= 2) {
        /* The per-channel scales: F32 values around the per-tensor one
         * (exact in F32, so the oracle reads what the kernel reads). */
        for (int64_t e = 0; e < b->span; e++)
          b->v[e] = qz->fill == 3 && e % 3 == 1 ? NAN
                                                : (double)(float)(scale * tap_rng_uniform(&r, 0.25, 2.0));
      } else if (qz->fill == 2) {
        /* u8 x: 255 with zero point 0; i8 x: -128 with zero point 127 (x -
         * zx = -255); w: -128. */
        for (int64_t e = 0; e < b->span; e++)
          if (b->member[e]) b->v[e] = i == 0 && dt == ADNN_DTYPE_U8 ? 255 : -128;
      } else if (qz->fill == 1 && i < 2) {
        fill_ints(b, &r, i == 0 ? (int)qz->zx - 4 : -4, i == 0 ? (int)qz->zx + 4 : 4);
      } else {
        fill_ints(b, &r, i == 0 ? xlo : -128, i == 0 ? xhi : 127);
      }
    }
    if (poison) {
      c.inout = 1u;
      for (int64_t e = 0; e < c.out.span; e++)
        if (c.out.member[e]) c.out.v[e] = 0.0;
    }
    harness_submit(suite, &c);
  }
}

#define U8 ADNN_DTYPE_U8
#define I8 ADNN_DTYPE_I8
#define I32 ADNN_DTYPE_I32

/* Integer convolutions: the geometry (dt is x's dtype), then the output
 * dtype, zero points and per-channel flag. The CPU runs them on its int8
 * algorithm (kernels/cpu/conv2d-int8.c): 1x1 on x in place (NHWC, and NCHW
 * through the generic packer), gathered columns in (r, s, c) order for
 * NHWC x and (c, r, s) order otherwise, chunks of several small images,
 * more output channels than one 256-column tile, groups and depthwise,
 * both filter layouts under both x layouts. */
static const struct {
  conv_spec geo;
  conv_quant q;
} conv_int_specs[] = {
    /* name   n  c   h   w   k  r  s  sh sw pt pb pl pr dh dw g  bias act a b layout dt    y    zx   zy pc */
    {{"1x1",  2, 16, 5,  7, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, NHWC, U8}, {U8, 128, 100, 1, 0, 0}},
    {{"1x1",  2, 16, 5,  7, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, NCHW, U8}, {I8, 3, -5, 0, 0, 0}},
    {{"1x1 wide", 1, 70, 6, 7, 300, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, A_RELU, 0, 0, NHWC, I8}, {U8, -7, 0, 1, 0, 0}},
    {{"1x1 s2", 2, 13, 9, 10, 20, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, NHWC, U8}, {I32, 17, 0, 0, 0, 0}},
    {{"1x1 pad", 1, 3, 4, 4, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NCHW, U8}, {U8, 200, 10, 0, 0, 0}},
    {{"3x3",  2, 5,  9,  7,  8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_RELU, 0, 0, NHWC, U8}, {U8, 128, 0, 1, 0, 0}},
    {{"3x3",  2, 5,  9,  7,  8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NCHW, U8}, {I8, 90, -3, 1, 0, 0}},
    {{"3x3",  2, 5,  9,  7,  8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NHWC, I8}, {I8, -20, 4, 0, 0, 0}},
    {{"3x3",  2, 5,  9,  7,  8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, A_RELU, 0, 0, NCHW, I8}, {I32, 0, 0, 0, 0, 0}},
    {{"3x3",  1, 6,  8,  8,  4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NHWC, U8}, {I32, 128, 0, 0, 0, 0}},
    {{"3x3 s2 asym", 3, 4, 9, 10, 6, 3, 3, 2, 2, 0, 2, 1, 0, 1, 1, 1, 1, 0, 0, 0, NCHW, U8}, {U8, 60, 128, 1, 0, 0}},
    {{"3x3 dil2 s2 g2", 3, 4, 11, 10, 6, 3, 3, 2, 2, 2, 1, 1, 2, 2, 2, 2, 1, 0, 0, 0, NHWC, U8}, {U8, 128, 128, 1, 0, 0}},
    {{"3x3 g2", 2, 6, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, A_RELU, 0, 0, NCHW_KRSC, I8}, {I8, 11, 0, 1, 0, 0}},
    {{"3x3 kcrs", 1, 8, 6, 7, 8, 3, 3, 1, 1, 1, 0, 1, 2, 1, 1, 1, 1, 0, 0, 0, NHWC_KCRS, U8}, {U8, 255, 7, 0, 0, 0}},
    {{"dw 3x3", 2, 16, 10, 10, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16, 1, A_RELU, 0, 0, NHWC, U8}, {U8, 128, 0, 1, 0, 0}},
    {{"dw 3x3 s2", 1, 9, 11, 12, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 9, 1, 0, 0, 0, NCHW, I8}, {I8, 0, 0, 1, 0, 0}},
    {{"5x5",  1, 3, 10, 10,  4, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, NCHW, U8}, {U8, 10, 20, 0, 0, 0}},
    {{"7x7 s2", 2, 3, 29, 31, 20, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, A_RELU, 0, 0, NHWC, U8}, {U8, 128, 0, 1, 0, 0}},
    {{"7x7 batch", 6, 24, 7, 7, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NHWC, U8}, {I8, 100, 0, 1, 0, 0}},
    {{"3x3 resnet", 2, 64, 28, 28, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_RELU, 0, 0, NHWC, U8}, {U8, 128, 0, 1, 0, 0}},
    {{"3x3 resnet", 1, 64, 28, 28, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_RELU, 0, 0, NCHW, U8}, {U8, 128, 0, 1, 0, 0}},
    {{"1x1 resnet", 2, 128, 14, 14, 288, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, NHWC, I8}, {I8, -2, 1, 1, 0, 0}},
    /* Ties: small integers and a scale of 1/2 put many products exactly
     * halfway between two integers. */
    {{"3x3 ties", 1, 2, 6, 6, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, NHWC, U8}, {U8, 50, 20, 0, 1, 0}},
    {{"3x3 ties", 1, 2, 6, 6, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, NCHW, I8}, {I8, 0, 0, 1, 1, 0}},
    /* NaN per-channel scales (run-time values the core cannot check) give
     * the zero point, in every lane position of the vector epilogues (K = 40
     * channels: 16-, 8- and 4-wide blocks and tails). */
    {{"3x3 nan", 2, 6, 7, 7, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NHWC, U8}, {U8, 128, 77, 1, 3, 0}},
    {{"3x3 nan", 1, 6, 7, 7, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_RELU, 0, 0, NCHW, I8}, {I8, 5, -9, 1, 3, 0}},
    /* The most taps the core accepts (2^16) at the ends of the ranges:
     * u8 x 255 (zero point 0) by w -128 sums to -2139095040, and a bias of
     * -2^23 reaches INT32_MIN exactly; i8 x -128 with zero point 127 (-255)
     * by -128 sums to 2139095040, a bias of 2^23 - 1 reaches INT32_MAX and
     * one of 2^23 saturates there. */
    {{"taps 2^16", 1, 4096, 4, 4, 2, 4, 4, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, NHWC, U8}, {I32, 0, 0, 0, 2, -8388608}},
    {{"taps 2^16", 1, 4096, 4, 4, 2, 4, 4, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, NCHW, I8}, {I32, 127, 0, 0, 2, 8388607}},
    {{"taps 2^16", 1, 4096, 4, 4, 2, 4, 4, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, NHWC, I8}, {I32, 127, 0, 0, 2, 8388608}},
};

static void conv2d_cases(harness_suite *suite) {
  for (size_t i = 0; i < sizeof conv_specs / sizeof conv_specs[0]; i++)
    conv_case(suite, &conv_specs[i]);
  for (size_t i = 0; i < sizeof conv_int_specs / sizeof conv_int_specs[0]; i++)
    conv_int_case(suite, &conv_int_specs[i].geo, &conv_int_specs[i].q);
  /* Every activation as the fused epilogue. */
  static const struct {
    adnn_activation_kind k;
    double a, b;
  } acts[] = {{ADNN_ACTIVATION_IDENTITY, 0, 0},  {ADNN_ACTIVATION_LEAKY_RELU, 0.1, 0},
              {ADNN_ACTIVATION_ELU, 1.0, 0},     {ADNN_ACTIVATION_CLAMP, -0.5, 0.75},
              {ADNN_ACTIVATION_SIGMOID, 0, 0},   {ADNN_ACTIVATION_TANH, 0, 0},
              {ADNN_ACTIVATION_GELU_TANH, 0, 0}, {ADNN_ACTIVATION_SILU, 0, 0},
              {ADNN_ACTIVATION_SOFTPLUS, 0, 0},  {ADNN_ACTIVATION_HARDSWISH, 0, 0}};
  for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
    conv_spec s = {"3x3 epilogue", 1, 4, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                   acts[i].k, acts[i].a, acts[i].b, i % 2 ? NHWC : NCHW, F32};
    conv_case(suite, &s);
  }
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracle                                                  */
/* ------------------------------------------------------------------------ */

static int run_oracle(const adnn_conv2d_desc *d, const double *x, const double *w,
                      const double *bias, double *y) {
  harness_desc hd;
  hd.conv2d = *d;
  const double *in[3] = {x, w, bias};
  char why[256];
  return conv2d_oracle(&hd, in, y, why, sizeof why) == 0;
}

static void conv2d_oracle_selftests(const harness_report *rep) {
  const adnn_dtype dt = ADNN_DTYPE_F64;
  /* 1. A 1x1 convolution is the matrix product W[K, C] * X[C, H*W], computed
   * here with a plain loop of its own. */
  {
    enum { C = 5, K = 4, H = 3, W = 6 };
    double x[C * H * W], w[K * C], y[K * H * W], want[K * H * W];
    tap_rng r = tap_rng_seed(11);
    for (int i = 0; i < C * H * W; i++) x[i] = tap_rng_uniform(&r, -1, 1);
    for (int i = 0; i < K * C; i++) w[i] = tap_rng_uniform(&r, -1, 1);
    for (int k = 0; k < K; k++)
      for (int p = 0; p < H * W; p++) {
        double s = 0;
        for (int c = 0; c < C; c++) s += w[k * C + c] * x[c * H * W + p];
        want[k * H * W + p] = s;
      }
    adnn_conv2d_desc d;
    adnn_conv2d_desc_init(&d);
    d.x = harness_tensor_desc4(dt, 1, C, H, W, HARNESS_PACKED);
    d.w = harness_tensor_desc4(dt, K, C, 1, 1, HARNESS_PACKED);
    d.y = harness_tensor_desc4(dt, 1, K, H, W, HARNESS_PACKED);
    int good = run_oracle(&d, x, w, NULL, y);
    for (int i = 0; i < K * H * W; i++) good &= harness_close(y[i], want[i], 1e-14);
    harness_ok(rep, good, "oracle: a 1x1 conv2d equals the matrix product");
  }
  /* 2. x = 1..16 (4x4), w = 1..9, no padding. By hand, y[0, 0] = 1*1 + 2*2 +
   * 3*3 + 5*4 + 6*5 + 7*6 + 9*7 + 10*8 + 11*9 = 348, and each step right adds
   * sum(w) = 45, each step down 4 * 45 = 180: 348 393 528 573. The centre-tap
   * filter with padding 1 is the identity. */
  {
    double x[16], w[9], y[16];
    for (int i = 0; i < 16; i++) x[i] = i + 1;
    for (int i = 0; i < 9; i++) w[i] = i + 1;
    adnn_conv2d_desc d;
    adnn_conv2d_desc_init(&d);
    d.x = harness_tensor_desc4(dt, 1, 1, 4, 4, HARNESS_PACKED);
    d.w = harness_tensor_desc4(dt, 1, 1, 3, 3, HARNESS_PACKED);
    d.y = harness_tensor_desc4(dt, 1, 1, 2, 2, HARNESS_PACKED);
    int good = run_oracle(&d, x, w, NULL, y);
    harness_ok(rep, good && y[0] == 348 && y[1] == 393 && y[2] == 528 && y[3] == 573,
               "oracle: hand-computed 3x3 cross-correlation (got %g %g %g %g)", y[0], y[1], y[2],
               y[3]);
    for (int i = 0; i < 9; i++) w[i] = i == 4;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    d.y = harness_tensor_desc4(dt, 1, 1, 4, 4, HARNESS_PACKED);
    good = run_oracle(&d, x, w, NULL, y);
    for (int i = 0; i < 16; i++) good &= y[i] == x[i];
    harness_ok(rep, good, "oracle: the centre-tap 3x3 filter with padding 1 is the identity");
    /* Stride 2, dilation 2 on x = 0..24 (5x5), w all 1: one output whose taps
     * are rows and columns 0, 2 and 4, the elements 0 2 4 10 12 14 20 22 24,
     * whose sum is 6 + 36 + 66 = 108; then the bias -1000. */
    double x5[25], y1[1];
    for (int i = 0; i < 25; i++) x5[i] = i;
    for (int i = 0; i < 9; i++) w[i] = 1;
    double bias = -1000.0;
    d.x = harness_tensor_desc4(dt, 1, 1, 5, 5, HARNESS_PACKED);
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 0;
    d.dilation_h = d.dilation_w = 2;
    d.stride_h = d.stride_w = 2;
    d.has_bias = 1;
    d.bias = harness_vector_desc(dt, 1);
    d.y = harness_tensor_desc4(dt, 1, 1, 1, 1, HARNESS_PACKED);
    good = run_oracle(&d, x5, w, &bias, y1);
    harness_ok(rep, good && y1[0] == 108 - 1000,
               "oracle: dilation 2 taps every other element (got %g)", y1[0]);
    d.activation.kind = ADNN_ACTIVATION_RELU;
    good = run_oracle(&d, x5, w, &bias, y1);
    harness_ok(rep, good && y1[0] == 0, "oracle: the fused relu comes after the bias (got %g)",
               y1[0]);
    /* A y of the wrong shape is refused, not computed. */
    d.y = harness_tensor_desc4(dt, 1, 1, 2, 2, HARNESS_PACKED);
    harness_ok(rep, !run_oracle(&d, x5, w, &bias, y1),
               "oracle: a y whose dims contradict doc/ops.md is refused");
  }
}

/* ------------------------------------------------------------------------ */
/* Bad descriptors                                                           */
/* ------------------------------------------------------------------------ */

static void conv2d_bad_descriptors(const harness_report *rep, adnn_context *ctx,
                                   const char *bn) {
  adnn_plan *plan = NULL;
  adnn_conv2d_desc cd;
  adnn_conv2d_desc_init(&cd);
  cd.x = harness_tensor_desc4(F32, 1, 4, 5, 5, HARNESS_PACKED);
  cd.w = harness_tensor_desc4(F32, 6, 4 / 2, 3, 3, HARNESS_PACKED);
  cd.groups = 3; /* 4 channels in 3 groups */
  cd.y = harness_tensor_desc4(F32, 1, 6, 3, 3, HARNESS_PACKED);
  harness_is_status(rep, adnn_plan_create_conv2d(ctx, &cd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s conv2d: groups not dividing C is BAD_PARAM", bn);
  harness_contains(rep, adnn_last_error(), "divisible",
                   "%s conv2d: the message says \"divisible\"", bn);
  cd.groups = 2;
  cd.w = harness_tensor_desc4(F32, 6, 2, 3, 3, HARNESS_PACKED);
  cd.y = harness_tensor_desc4(F32, 1, 6, 5, 5, HARNESS_PACKED); /* should be 3x3 */
  harness_is_status(rep, adnn_plan_create_conv2d(ctx, &cd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s conv2d: y of the wrong shape is BAD_PARAM", bn);
  harness_contains(rep, adnn_last_error(), "[1, 6, 3, 3]",
                   "%s conv2d: the message names the right shape", bn);
  cd.y = harness_tensor_desc4(F32, 1, 6, 3, 3, HARNESS_PACKED);
  cd.y.strides[1] = 1; /* channels overlap the rows */
  harness_is_status(rep, adnn_plan_create_conv2d(ctx, &cd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s conv2d: overlapping y strides are BAD_PARAM", bn);
  cd.y = harness_tensor_desc4(F32, 1, 6, 3, 3, HARNESS_PACKED);
  cd.w = harness_tensor_desc4(F32, 6, 3, 3, 3, HARNESS_PACKED); /* 3 != 4/2 channels per group */
  harness_is_status(rep, adnn_plan_create_conv2d(ctx, &cd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s conv2d: filter channels != C/groups is BAD_PARAM", bn);

  /* Integer inputs (adnn/ops.h): each rule broken on its own. */
  adnn_conv2d_desc qd;
  adnn_conv2d_desc_init(&qd);
  qd.x = harness_tensor_desc4(U8, 1, 4, 5, 5, HARNESS_NHWC);
  qd.w = harness_tensor_desc4(U8, 6, 4, 3, 3, HARNESS_NHWC);
  qd.y = harness_tensor_desc4(U8, 1, 6, 3, 3, HARNESS_NHWC);
  harness_is_status(rep, adnn_plan_create_conv2d(ctx, &qd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s conv2d: a u8 w under a u8 x is BAD_PARAM", bn);
  harness_contains(rep, adnn_last_error(), "w is i8", "%s conv2d: the message says w is i8", bn);
  qd.w.dtype = I8;
  qd.y.dtype = ADNN_DTYPE_F32;
  harness_is_status(rep, adnn_plan_create_conv2d(ctx, &qd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s conv2d: an f32 y of u8 inputs is BAD_PARAM", bn);
  qd.y.dtype = U8;
  qd.has_bias = 1;
  qd.bias = harness_vector_desc(ADNN_DTYPE_F32, 6);
  harness_is_status(rep, adnn_plan_create_conv2d(ctx, &qd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s conv2d: an f32 bias of u8 inputs is BAD_PARAM", bn);
  harness_contains(rep, adnn_last_error(), "bias is i32", "%s conv2d: the message says the "
                   "bias is i32", bn);
  qd.bias.dtype = I32;
  qd.activation.kind = A_GELU;
  harness_is_status(rep, adnn_plan_create_conv2d(ctx, &qd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s conv2d: gelu with integer inputs is BAD_PARAM", bn);
  harness_contains(rep, adnn_last_error(), "identity or relu", "%s conv2d: the message names "
                   "the activations an integer convolution fuses", bn);
  qd.activation.kind = A_RELU;
  qd.x_zero_point = 256;
  harness_is_status(rep, adnn_plan_create_conv2d(ctx, &qd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s conv2d: x_zero_point 256 for a u8 x is BAD_PARAM", bn);
  harness_contains(rep, adnn_last_error(), "x_zero_point", "%s conv2d: the message names "
                   "x_zero_point", bn);
  qd.x_zero_point = 128;
  qd.y_zero_point = -1;
  harness_is_status(rep, adnn_plan_create_conv2d(ctx, &qd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s conv2d: y_zero_point -1 for a u8 y is BAD_PARAM", bn);
  qd.y_zero_point = 0;
  qd.requant_scale = 0.0;
  harness_is_status(rep, adnn_plan_create_conv2d(ctx, &qd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s conv2d: requant_scale 0 is BAD_PARAM", bn);
  qd.has_requant_scales = 1;
  qd.requant_scales = harness_vector_desc(ADNN_DTYPE_F32, 5); /* K is 6 */
  harness_is_status(rep, adnn_plan_create_conv2d(ctx, &qd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s conv2d: requant_scales of 5 elements for K = 6 is BAD_PARAM", bn);
  harness_contains(rep, adnn_last_error(), "[K]", "%s conv2d: the message says [K]", bn);
  qd.has_requant_scales = 0;
  qd.requant_scale = 0.01;
  qd.y.dtype = I32;
  qd.has_requant_scales = 1;
  qd.requant_scales = harness_vector_desc(ADNN_DTYPE_F32, 6);
  harness_is_status(rep, adnn_plan_create_conv2d(ctx, &qd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s conv2d: requant_scales with an i32 y is BAD_PARAM", bn);
  qd.has_requant_scales = 0;
  /* 4097 channels x 4 x 4 = 65552 taps, beyond 2^16. */
  qd.x = harness_tensor_desc4(U8, 1, 4097, 4, 4, HARNESS_NHWC);
  qd.w = harness_tensor_desc4(I8, 1, 4097, 4, 4, HARNESS_NHWC);
  qd.y = harness_tensor_desc4(I32, 1, 1, 1, 1, HARNESS_NHWC);
  qd.bias = harness_vector_desc(I32, 1);
  harness_is_status(rep, adnn_plan_create_conv2d(ctx, &qd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s conv2d: 65552 taps with integer inputs is BAD_PARAM", bn);
  harness_contains(rep, adnn_last_error(), "overflow", "%s conv2d: the message says why "
                   "(overflow)", bn);
  /* A float convolution with an integer field set. */
  cd.w = harness_tensor_desc4(F32, 6, 2, 3, 3, HARNESS_PACKED);
  cd.x_zero_point = 3;
  harness_is_status(rep, adnn_plan_create_conv2d(ctx, &cd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s conv2d: x_zero_point on an f32 convolution is BAD_PARAM", bn);
  harness_contains(rep, adnn_last_error(), "i8/u8 inputs only", "%s conv2d: the message says "
                   "zero points are for integer inputs", bn);
}

const harness_op_traits harness_conv2d_traits = {
    .inputs = conv2d_inputs,
    .output = conv2d_output,
    .set_dtype = conv2d_set_dtype,
    .oracle = conv2d_oracle,
    .tolerance = conv2d_tolerance,
    .fill = conv2d_fill,
    .variant_count = N_ALGORITHMS,
    .set_variant = conv2d_set_variant,
    .variant_expected = conv2d_variant_expected,
    .cases = conv2d_cases,
    .oracle_selftests = conv2d_oracle_selftests,
    .bad_descriptors = conv2d_bad_descriptors,
};
