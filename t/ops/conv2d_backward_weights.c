/* conv2d backward weights in the conformance harness: its traits, its
 * oracle (doc/ops.md, "conv2d backward weights"), its cases (the geometry
 * table of conv2d_backward.h in F32 and F64) and the oracle's self-tests.
 * Every case runs with AUTO and then with every algorithm forced in turn. */
#include "t/ops/conv2d_backward.h"

#include <stdint.h>

static const adnn_conv2d_desc *fwd_of(const harness_desc *hd) {
  return hd->conv2d_backward_weights.forward;
}

/* ------------------------------------------------------------------------ */
/* Traits                                                                    */
/* ------------------------------------------------------------------------ */

static int bwd_weights_inputs(const harness_desc *hd, harness_tensor *in) {
  const adnn_conv2d_desc *f = fwd_of(hd);
  in[0] = (harness_tensor){"x", f->x};
  in[1] = (harness_tensor){"dy", f->y};
  return 2;
}

static adnn_tensor_desc bwd_weights_output(const harness_desc *hd) { return fwd_of(hd)->w; }

/* {dw} or {dw, db}: db exists iff the forward op has a bias. */
static int bwd_weights_outputs(const harness_desc *hd, harness_tensor *out) {
  const adnn_conv2d_desc *f = fwd_of(hd);
  out[0] = (harness_tensor){"dw", f->w};
  if (!f->has_bias) return 1;
  out[1] = (harness_tensor){"db", f->bias};
  return 2;
}

/* Every output is read and updated when beta != 0. */
static unsigned bwd_weights_inout(const harness_desc *hd) {
  if (hd->conv2d_backward_weights.beta == 0.0) return 0u;
  return fwd_of(hd)->has_bias ? 3u : 1u;
}

static void bwd_weights_fill_outputs(const harness_desc *hd, harness_buffer *out, int n_out,
                                     tap_rng *r) {
  (void)hd;
  for (int i = 0; i < n_out; i++) harness_fill_uniform(&out[i], r, -1.0, 1.0);
}

static void bwd_weights_set_dtype(harness_desc *hd, adnn_dtype dt) {
  conv_bwd_set_forward_dtype(fwd_of(hd), dt);
}

/* Each dw element sums N * P * Q products, each db element N * P * Q
 * values. */
static harness_tolerance bwd_weights_tolerance(const harness_desc *hd, adnn_dtype dt) {
  const adnn_conv2d_desc *f = fwd_of(hd);
  const harness_tolerance t = harness_dot_tolerance(dt, f->y.dims[0] * f->y.dims[2] * f->y.dims[3]);
  /* F16/BF16: the F32 bound plus one rounding of dw and db (doc/numerics.md). */
  return harness_lowp_tolerance(dt, t, t, 1.0);
}

static void bwd_weights_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  (void)hd;
  for (int i = 0; i < n_in; i++) harness_fill_uniform(&in[i], r, -1.0, 1.0);
}

static const char *bwd_weights_set_variant(harness_desc *hd, int v) {
  hd->conv2d_backward_weights.algorithm = conv_bwd_algorithms[v];
  return conv_bwd_algorithm_names[v];
}

/* The CPU plugin implements reference, im2col_gemm, gemm_1x1 and
 * depthwise_direct for backward weights (doc/cpu.md). */
static int bwd_weights_variant_expected(const char *backend, int v) {
  if (strcmp(backend, "cpu") != 0) return 0;
  const adnn_conv2d_algorithm a = conv_bwd_algorithms[v];
  return a == ADNN_CONV2D_ALGO_REFERENCE || a == ADNN_CONV2D_ALGO_IM2COL_GEMM ||
         a == ADNN_CONV2D_ALGO_GEMM_1X1 || a == ADNN_CONV2D_ALGO_DEPTHWISE_DIRECT;
}

/* ------------------------------------------------------------------------ */
/* Oracle                                                                    */
/* ------------------------------------------------------------------------ */

/* dw[k, c, r, s] = beta * dw[k, c, r, s] + sum over n < N, p < P, q < Q of
 * dy[n, k, p, q] * X(n, g * C/G + c, p * sh - pt + r * dh, q * sw - pl + s *
 * dw) with g = k / (K/G) and X zero outside the image (doc/ops.md): the
 * forward sum's derivative with respect to each filter tap. */
static void weights_oracle(const adnn_conv2d_desc *d, double beta, const double *x,
                           const double *dy, double *dw) {
  const adnn_tensor_desc *xd = &d->x, *wd = &d->w, *yd = &d->y;
  const int64_t N = xd->dims[0], C = xd->dims[1], H = xd->dims[2], W = xd->dims[3];
  const int64_t K = wd->dims[0], R = wd->dims[2], S = wd->dims[3];
  const int64_t P = yd->dims[2], Q = yd->dims[3];
  const int64_t G = d->groups, CG = C / G, KG = K / G;
  for (int64_t k = 0; k < K; k++) {
    const int64_t g = k / KG;
    for (int64_t c = 0; c < CG; c++)
      for (int64_t r = 0; r < R; r++)
        for (int64_t s = 0; s < S; s++) {
          harness_sum sum;
          harness_sum_init(&sum);
          for (int64_t n = 0; n < N; n++)
            for (int64_t p = 0; p < P; p++) {
              const int64_t h = p * d->stride_h - d->pad_top + r * d->dilation_h;
              if (h < 0 || h >= H) continue;
              for (int64_t q = 0; q < Q; q++) {
                const int64_t v = q * d->stride_w - d->pad_left + s * d->dilation_w;
                if (v < 0 || v >= W) continue;
                harness_sum_add(&sum, (long double)dy[n * yd->strides[0] + k * yd->strides[1] +
                                                      p * yd->strides[2] + q * yd->strides[3]] *
                                          x[n * xd->strides[0] + (g * CG + c) * xd->strides[1] +
                                            h * xd->strides[2] + v * xd->strides[3]]);
              }
            }
          const int64_t off = k * wd->strides[0] + c * wd->strides[1] + r * wd->strides[2] +
                              s * wd->strides[3];
          long double acc = harness_sum_value(&sum);
          if (beta != 0.0) acc += (long double)beta * dw[off];
          dw[off] = (double)acc;
        }
  }
}

/* db[k] = beta * db[k] + the sum of dy[n, k, p, q] over n, p, q. */
static void bias_oracle(const adnn_conv2d_desc *d, double beta, const double *dy, double *db) {
  const adnn_tensor_desc *yd = &d->y;
  for (int64_t k = 0; k < yd->dims[1]; k++) {
    harness_sum sum;
    harness_sum_init(&sum);
    for (int64_t n = 0; n < yd->dims[0]; n++)
      for (int64_t p = 0; p < yd->dims[2]; p++)
        for (int64_t q = 0; q < yd->dims[3]; q++)
          harness_sum_add(&sum, dy[n * yd->strides[0] + k * yd->strides[1] + p * yd->strides[2] +
                                   q * yd->strides[3]]);
    const int64_t off = k * d->bias.strides[0];
    long double acc = harness_sum_value(&sum);
    if (beta != 0.0) acc += (long double)beta * db[off];
    db[off] = (double)acc;
  }
}

static int bwd_weights_oracle(const harness_desc *hd, const double *const *in, double *dw,
                              char *why, size_t why_len) {
  const adnn_conv2d_backward_weights_desc *b = &hd->conv2d_backward_weights;
  if (conv_bwd_check_forward(b->forward, why, why_len) != 0) return -1;
  weights_oracle(b->forward, b->beta, in[0], in[1], dw);
  return 0;
}

static int bwd_weights_oracle_outputs(const harness_desc *hd, const double *const *in,
                                      double *const *out, char *why, size_t why_len) {
  const adnn_conv2d_backward_weights_desc *b = &hd->conv2d_backward_weights;
  if (conv_bwd_check_forward(b->forward, why, why_len) != 0) return -1;
  weights_oracle(b->forward, b->beta, in[0], in[1], out[0]);
  if (b->forward->has_bias) bias_oracle(b->forward, b->beta, in[1], out[1]);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

static void bwd_weights_case(harness_suite *suite, const conv_bwd_spec *s, double beta) {
  harness_case c;
  char name[200];
  conv_bwd_case_name(name, sizeof name, s, beta);
  harness_case_init(&c, harness_op_find("conv2d_backward_weights"), s->dt, "%s", name);
  adnn_conv2d_desc *f = &c.forward.conv2d;
  if (conv_bwd_forward(s, f) != 0) {
    harness_case_free(&c);
    return;
  }
  adnn_conv2d_backward_weights_desc *d = &c.desc.conv2d_backward_weights;
  adnn_conv2d_backward_weights_desc_init(d);
  d->forward = f;
  d->beta = beta;
  if (harness_case_alloc(&c) != 0) return;
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  harness_fill_mixed(&c.in[0], &r);
  harness_fill_uniform(&c.in[1], &r, -1.0, 1.0);
  conv_bwd_fill_initial(&c, &r);
  harness_submit(suite, &c);
}

/* Every geometry with beta 0 and beta 1; with a forward bias (db) where the
 * spec has one. */
static void bwd_weights_cases(harness_suite *suite) {
  for (size_t i = 0; i < CONV_BWD_SPEC_COUNT; i++) {
    bwd_weights_case(suite, &conv_bwd_specs[i], 0.0);
    bwd_weights_case(suite, &conv_bwd_specs[i], 1.0);
  }
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracle                                                  */
/* ------------------------------------------------------------------------ */

static void bwd_weights_oracle_selftests(const harness_report *rep) {
  const adnn_dtype dt = ADNN_DTYPE_F64;
  /* 1. x = 1..16 (4x4), a 3x3 filter without padding, dy all 1: dw[r, s] is
   * the sum of the 2x2 block of x starting at (r, s). By hand: dw[0, 0] =
   * 1 + 2 + 5 + 6 = 14; a step right adds 1 to each of the four elements
   * (+4), a step down adds 4 to each (+16), so dw = 14 18 22 / 30 34 38 /
   * 46 50 54. db = 4 (four outputs). */
  {
    adnn_conv2d_desc f;
    adnn_conv2d_desc_init(&f);
    f.x = harness_tensor_desc4(dt, 1, 1, 4, 4, HARNESS_PACKED);
    f.w = harness_tensor_desc4(dt, 1, 1, 3, 3, HARNESS_PACKED);
    f.y = harness_tensor_desc4(dt, 1, 1, 2, 2, HARNESS_PACKED);
    f.has_bias = 1;
    f.bias = harness_vector_desc(dt, 1);
    double x[16], dy[4] = {1, 1, 1, 1}, dw[9], db[1];
    for (int i = 0; i < 16; i++) x[i] = i + 1;
    const double want[9] = {14, 18, 22, 30, 34, 38, 46, 50, 54};
    weights_oracle(&f, 0.0, x, dy, dw);
    bias_oracle(&f, 0.0, dy, db);
    int good = db[0] == 4;
    for (int i = 0; i < 9; i++) good &= dw[i] == want[i];
    harness_ok(rep, good, "oracle: hand-computed 3x3 filter gradient and bias gradient");
    /* beta = 1 adds to the old values (all 1000). */
    for (int i = 0; i < 9; i++) dw[i] = 1000;
    db[0] = 1000;
    weights_oracle(&f, 1.0, x, dy, dw);
    bias_oracle(&f, 1.0, dy, db);
    good = db[0] == 1004;
    for (int i = 0; i < 9; i++) good &= dw[i] == 1000 + want[i];
    harness_ok(rep, good, "oracle: beta 1 adds the gradients to dw and db");
  }
  /* 2. Padding 1 with a 3x3 filter on a 1x1 image x = 5 and dy = 2: only the
   * centre tap sees the image, dw = 10 there and 0 elsewhere. */
  {
    adnn_conv2d_desc f;
    adnn_conv2d_desc_init(&f);
    f.x = harness_tensor_desc4(dt, 1, 1, 1, 1, HARNESS_PACKED);
    f.w = harness_tensor_desc4(dt, 1, 1, 3, 3, HARNESS_PACKED);
    f.y = harness_tensor_desc4(dt, 1, 1, 1, 1, HARNESS_PACKED);
    f.pad_top = f.pad_bottom = f.pad_left = f.pad_right = 1;
    double x[1] = {5}, dy[1] = {2}, dw[9];
    weights_oracle(&f, 0.0, x, dy, dw);
    int good = 1;
    for (int i = 0; i < 9; i++) good &= dw[i] == (i == 4 ? 10 : 0);
    harness_ok(rep, good, "oracle: taps in the padding get a zero gradient");
    harness_desc hd;
    adnn_conv2d_backward_weights_desc_init(&hd.conv2d_backward_weights);
    hd.conv2d_backward_weights.forward = &f;
    f.y = harness_tensor_desc4(dt, 1, 1, 3, 3, HARNESS_PACKED);
    const double *in[2] = {x, dy};
    char why[256];
    harness_ok(rep, bwd_weights_oracle(&hd, in, dw, why, sizeof why) != 0,
               "oracle: a forward y whose dims contradict doc/ops.md is refused");
  }
}

/* ------------------------------------------------------------------------ */
/* Bad descriptors                                                           */
/* ------------------------------------------------------------------------ */

static void bwd_weights_bad_descriptors(const harness_report *rep, adnn_context *ctx,
                                        const char *bn) {
  adnn_plan *plan = NULL;
  adnn_conv2d_desc f;
  adnn_conv2d_desc_init(&f);
  f.x = harness_tensor_desc4(ADNN_DTYPE_F32, 1, 4, 5, 5, HARNESS_PACKED);
  f.w = harness_tensor_desc4(ADNN_DTYPE_F32, 6, 4, 3, 3, HARNESS_PACKED);
  f.y = harness_tensor_desc4(ADNN_DTYPE_F32, 1, 6, 3, 3, HARNESS_PACKED);
  adnn_conv2d_backward_weights_desc d;
  adnn_conv2d_backward_weights_desc_init(&d);
  harness_is_status(rep, adnn_plan_create_conv2d_backward_weights(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM_NULL, "%s conv2d_backward_weights: NULL forward", bn);
  harness_contains(rep, adnn_last_error(), "desc->forward is NULL",
                   "%s conv2d_backward_weights: the message names desc->forward", bn);
  d.forward = &f;
  f.w = harness_tensor_desc4(ADNN_DTYPE_F32, 6, 3, 3, 3, HARNESS_PACKED);
  harness_is_status(rep, adnn_plan_create_conv2d_backward_weights(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s conv2d_backward_weights: a bad forward "
                    "descriptor (filter channels)", bn);
  harness_contains(rep, adnn_last_error(), "desc->forward: w has 3 input channels",
                   "%s conv2d_backward_weights: the forward validator's message", bn);
  f.w = harness_tensor_desc4(ADNN_DTYPE_F32, 6, 4, 3, 3, HARNESS_PACKED);
  f.w.strides[0] = 1; /* dw's filters overlap */
  harness_is_status(rep, adnn_plan_create_conv2d_backward_weights(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s conv2d_backward_weights: overlapping dw strides",
                    bn);
  harness_contains(rep, adnn_last_error(), "dw",
                   "%s conv2d_backward_weights: the message names dw", bn);
  f.w = harness_tensor_desc4(ADNN_DTYPE_F32, 6, 4, 3, 3, HARNESS_PACKED);
  f.has_bias = 1;
  f.bias = harness_vector_desc(ADNN_DTYPE_F32, 5);
  harness_is_status(rep, adnn_plan_create_conv2d_backward_weights(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s conv2d_backward_weights: db of the wrong length",
                    bn);
  f.bias = harness_vector_desc(ADNN_DTYPE_F32, 6);
  f.bias.strides[0] = 0; /* every db element at one address */
  f.bias.dims[0] = 6;
  harness_is_status(rep, adnn_plan_create_conv2d_backward_weights(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s conv2d_backward_weights: a zero-stride db", bn);
  harness_contains(rep, adnn_last_error(), "db",
                   "%s conv2d_backward_weights: the message names db", bn);
  f.has_bias = 0;
  d.beta = INFINITY;
  harness_is_status(rep, adnn_plan_create_conv2d_backward_weights(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s conv2d_backward_weights: beta infinite", bn);
  d.beta = 0.0;
  f.x.dtype = f.w.dtype = ADNN_DTYPE_I8; /* the forward's integer form has no backward */
  f.y.dtype = ADNN_DTYPE_I32;
  harness_is_status(rep, adnn_plan_create_conv2d_backward_weights(ctx, &d, &plan),
                    ADNN_STATUS_NOT_SUPPORTED, "%s conv2d_backward_weights: i8 is NOT_SUPPORTED",
                    bn);
  f.x.dtype = f.w.dtype = f.y.dtype = ADNN_DTYPE_F32;

  /* At execution: dw may overlap neither x nor dy. */
  adnn_status st = adnn_plan_create_conv2d_backward_weights(ctx, &d, &plan);
  if (st == ADNN_STATUS_NOT_SUPPORTED) {
    harness_skip(rep, "%s conv2d_backward_weights: aliasing checks: %s", bn, adnn_last_error());
    return;
  }
  if (!harness_is_status(rep, st, ADNN_STATUS_SUCCESS, "%s conv2d_backward_weights: a good plan",
                         bn))
    return;
  void *buf = NULL;
  const size_t floats = 100 + 54 + 216; /* x, dy, dw */
  if (adnn_malloc(ctx, floats * sizeof(float), &buf) == ADNN_STATUS_SUCCESS) {
    (void)adnn_memset(ctx, buf, 0, floats * sizeof(float));
    float *base = buf;
    const void *in[2] = {base, base + 100};
    harness_is_status(rep, adnn_plan_execute(plan, in, 2, base + 100), ADNN_STATUS_BAD_PARAM,
                      "%s conv2d_backward_weights: dw aliasing dy is refused", bn);
    harness_contains(rep, adnn_last_error(), "overlaps inputs[1]",
                     "%s conv2d_backward_weights: the message names the input", bn);
    adnn_free(ctx, buf);
  }
  adnn_plan_destroy(plan);

  /* With a forward bias the plan has two outputs, {dw, db}: one or three
   * are refused, adnn_plan_execute (one) included, and db may not overlap
   * dw. */
  f.has_bias = 1;
  f.bias = harness_vector_desc(ADNN_DTYPE_F32, 6);
  plan = NULL;
  st = adnn_plan_create_conv2d_backward_weights(ctx, &d, &plan);
  if (!harness_is_status(rep, st, ADNN_STATUS_SUCCESS,
                         "%s conv2d_backward_weights: a good plan with db", bn))
    return;
  const size_t floats2 = 100 + 54 + 216 + 6 + 16;
  if (adnn_malloc(ctx, floats2 * sizeof(float), &buf) == ADNN_STATUS_SUCCESS) {
    (void)adnn_memset(ctx, buf, 0, floats2 * sizeof(float));
    float *base = buf;
    const void *in[2] = {base, base + 100};
    void *outs[3] = {base + 154, base + 370, base + 380};
    harness_is_status(rep, adnn_plan_execute(plan, in, 2, outs[0]), ADNN_STATUS_BAD_PARAM,
                      "%s conv2d_backward_weights: adnn_plan_execute (one output) on {dw, db}",
                      bn);
    harness_contains(rep, adnn_last_error(), "adnn_plan_execute_multi",
                     "%s conv2d_backward_weights: the message points to execute_multi", bn);
    harness_is_status(rep, adnn_plan_execute_multi(plan, in, 2, outs, 3), ADNN_STATUS_BAD_PARAM,
                      "%s conv2d_backward_weights: three outputs for {dw, db}", bn);
    harness_contains(rep, adnn_last_error(), "2 output(s)",
                     "%s conv2d_backward_weights: the message says how many", bn);
    void *overlapping[2] = {base + 154, base + 160};
    harness_is_status(rep, adnn_plan_execute_multi(plan, in, 2, overlapping, 2),
                      ADNN_STATUS_BAD_PARAM, "%s conv2d_backward_weights: db overlapping dw",
                      bn);
    harness_is_status(rep, adnn_plan_execute_multi(plan, in, 2, outs, 2), ADNN_STATUS_SUCCESS,
                      "%s conv2d_backward_weights: {dw, db} run", bn);
    adnn_free(ctx, buf);
  }
  adnn_plan_destroy(plan);
}

const harness_op_traits harness_conv2d_backward_weights_traits = {
    .inputs = bwd_weights_inputs,
    .output = bwd_weights_output,
    .set_dtype = bwd_weights_set_dtype,
    .oracle = bwd_weights_oracle,
    .tolerance = bwd_weights_tolerance,
    .fill = bwd_weights_fill,
    .variant_count = CONV_BWD_N_ALGORITHMS,
    .set_variant = bwd_weights_set_variant,
    .variant_expected = bwd_weights_variant_expected,
    .cases = bwd_weights_cases,
    .oracle_selftests = bwd_weights_oracle_selftests,
    .bad_descriptors = bwd_weights_bad_descriptors,
    .outputs = bwd_weights_outputs,
    .inout = bwd_weights_inout,
    .fill_outputs = bwd_weights_fill_outputs,
    .oracle_outputs = bwd_weights_oracle_outputs,
};
