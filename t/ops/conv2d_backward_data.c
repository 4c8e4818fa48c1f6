/* conv2d backward data in the conformance harness: its traits, its oracle
 * (doc/ops.md, "conv2d backward data"), its cases (the geometry table of
 * conv2d_backward.h in F32, F64, F16 and BF16) and the oracle's self-tests. Every case
 * runs with AUTO and then with every algorithm forced in turn. */
#include "t/ops/conv2d_backward.h"

#include <stdint.h>

static const adnn_conv2d_desc *fwd_of(const harness_desc *hd) {
  return hd->conv2d_backward_data.forward;
}

/* ------------------------------------------------------------------------ */
/* Traits                                                                    */
/* ------------------------------------------------------------------------ */

static int bwd_data_inputs(const harness_desc *hd, harness_tensor *in) {
  const adnn_conv2d_desc *f = fwd_of(hd);
  in[0] = (harness_tensor){"dy", f->y};
  in[1] = (harness_tensor){"w", f->w};
  return 2;
}

static adnn_tensor_desc bwd_data_output(const harness_desc *hd) { return fwd_of(hd)->x; }

static void bwd_data_set_dtype(harness_desc *hd, adnn_dtype dt) {
  conv_bwd_set_forward_dtype(fwd_of(hd), dt);
}

/* Each dx element sums at most K/G * R * S products (fewer with a stride
 * above 1). */
static harness_tolerance bwd_data_tolerance(const harness_desc *hd, adnn_dtype dt) {
  const adnn_conv2d_desc *f = fwd_of(hd);
  const harness_tolerance t =
      harness_dot_tolerance(dt, f->w.dims[0] / f->groups * f->w.dims[2] * f->w.dims[3]);
  /* F16/BF16: the F32 bound (harness_dot_tolerance gives it for them) plus
   * one rounding of dx (doc/numerics.md). */
  return harness_lowp_tolerance(dt, t, t, 1.0);
}

static void bwd_data_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  (void)hd;
  for (int i = 0; i < n_in; i++) harness_fill_uniform(&in[i], r, -1.0, 1.0);
}

/* dx is read and updated when beta != 0. */
static unsigned bwd_data_inout(const harness_desc *hd) {
  return hd->conv2d_backward_data.beta != 0.0 ? 1u : 0u;
}

static void bwd_data_fill_outputs(const harness_desc *hd, harness_buffer *out, int n_out,
                                  tap_rng *r) {
  (void)hd;
  for (int i = 0; i < n_out; i++) harness_fill_uniform(&out[i], r, -1.0, 1.0);
}

static const char *bwd_data_set_variant(harness_desc *hd, int v) {
  hd->conv2d_backward_data.algorithm = conv_bwd_algorithms[v];
  return conv_bwd_algorithm_names[v];
}

/* The CPU plugin implements reference, im2col_gemm, gemm_1x1 and
 * depthwise_direct for backward data (doc/cpu.md). */
static int bwd_data_variant_expected(const char *backend, int v) {
  if (strcmp(backend, "cpu") != 0) return 0;
  const adnn_conv2d_algorithm a = conv_bwd_algorithms[v];
  return a == ADNN_CONV2D_ALGO_REFERENCE || a == ADNN_CONV2D_ALGO_IM2COL_GEMM ||
         a == ADNN_CONV2D_ALGO_GEMM_1X1 || a == ADNN_CONV2D_ALGO_DEPTHWISE_DIRECT;
}

/* ------------------------------------------------------------------------ */
/* Oracle                                                                    */
/* ------------------------------------------------------------------------ */

/* dx[n, c, h, w] = beta * dx[n, c, h, w] + sum over the filters k of c's
 * group g = c / (C/G), and the taps (r, s), of dy[n, k, p, q] * w[k, c - g *
 * C/G, r, s] where h = p * sh - pt + r * dh and w = q * sw - pl + s * dw for
 * some output position 0 <= p < P, 0 <= q < Q (doc/ops.md): the transpose of
 * the forward sum, gathered per dx element (for each tap, the one output
 * position that reads this element, when the stride lets one). */
static int bwd_data_oracle(const harness_desc *hd, const double *const *in, double *dx,
                           char *why, size_t why_len) {
  const adnn_conv2d_backward_data_desc *b = &hd->conv2d_backward_data;
  const adnn_conv2d_desc *d = b->forward;
  if (conv_bwd_check_forward(d, why, why_len) != 0) return -1;
  const adnn_tensor_desc *xd = &d->x, *wd = &d->w, *yd = &d->y;
  const int64_t N = xd->dims[0], C = xd->dims[1], H = xd->dims[2], W = xd->dims[3];
  const int64_t K = wd->dims[0], R = wd->dims[2], S = wd->dims[3];
  const int64_t P = yd->dims[2], Q = yd->dims[3];
  const int64_t G = d->groups, CG = C / G, KG = K / G;
  const double *dy = in[0], *w = in[1];
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++) {
      const int64_t g = c / CG;
      for (int64_t h = 0; h < H; h++)
        for (int64_t v = 0; v < W; v++) {
          harness_sum sum;
          harness_sum_init(&sum);
          for (int64_t r = 0; r < R; r++) {
            /* The output row p whose tap r lands on row h, if any. */
            const int64_t ph = h + d->pad_top - r * d->dilation_h;
            if (ph < 0 || ph % d->stride_h != 0 || ph / d->stride_h >= P) continue;
            const int64_t p = ph / d->stride_h;
            for (int64_t s = 0; s < S; s++) {
              const int64_t qw = v + d->pad_left - s * d->dilation_w;
              if (qw < 0 || qw % d->stride_w != 0 || qw / d->stride_w >= Q) continue;
              const int64_t q = qw / d->stride_w;
              for (int64_t k = g * KG; k < (g + 1) * KG; k++)
                harness_sum_add(&sum, (long double)dy[n * yd->strides[0] + k * yd->strides[1] +
                                                      p * yd->strides[2] + q * yd->strides[3]] *
                                          w[k * wd->strides[0] + (c - g * CG) * wd->strides[1] +
                                            r * wd->strides[2] + s * wd->strides[3]]);
            }
          }
          const int64_t off = n * xd->strides[0] + c * xd->strides[1] + h * xd->strides[2] +
                              v * xd->strides[3];
          long double acc = harness_sum_value(&sum);
          if (b->beta != 0.0) acc += (long double)b->beta * dx[off];
          dx[off] = (double)acc;
        }
    }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

static void bwd_data_case(harness_suite *suite, const conv_bwd_spec *s, double beta) {
  harness_case c;
  char name[200];
  conv_bwd_case_name(name, sizeof name, s, beta);
  harness_case_init(&c, harness_op_find("conv2d_backward_data"), s->dt, "%s", name);
  adnn_conv2d_desc *f = &c.forward.conv2d;
  if (conv_bwd_forward(s, f) != 0) {
    harness_case_free(&c);
    return;
  }
  /* The bias of the forward op plays no part in backward data; keeping it
   * in the descriptor checks that it is ignored. */
  adnn_conv2d_backward_data_desc *d = &c.desc.conv2d_backward_data;
  adnn_conv2d_backward_data_desc_init(d);
  d->forward = f;
  d->beta = beta;
  if (harness_case_alloc(&c) != 0) return;
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  harness_fill_mixed(&c.in[0], &r);
  const double wscale = 1.0 / sqrt((double)(s->c / s->g * s->r * s->s));
  harness_fill_uniform(&c.in[1], &r, -2 * wscale, 2 * wscale);
  conv_bwd_fill_initial(&c, &r);
  harness_submit(suite, &c);
}

/* Every geometry with beta 0 (dx overwritten, its NaN poison never read)
 * and with beta 1 (the gradient added to dx's initial values). */
static void bwd_data_cases(harness_suite *suite) {
  for (size_t i = 0; i < CONV_BWD_SPEC_COUNT; i++) {
    bwd_data_case(suite, &conv_bwd_specs[i], 0.0);
    bwd_data_case(suite, &conv_bwd_specs[i], 1.0);
  }
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracle                                                  */
/* ------------------------------------------------------------------------ */

static int run_oracle(const adnn_conv2d_desc *f, double beta, const double *dy, const double *w,
                      double *dx) {
  harness_desc hd;
  adnn_conv2d_backward_data_desc_init(&hd.conv2d_backward_data);
  hd.conv2d_backward_data.forward = f;
  hd.conv2d_backward_data.beta = beta;
  const double *in[2] = {dy, w};
  char why[256];
  return bwd_data_oracle(&hd, in, dx, why, sizeof why) == 0;
}

static void bwd_data_oracle_selftests(const harness_report *rep) {
  const adnn_dtype dt = ADNN_DTYPE_F64;
  /* 1. A 3x3 filter without padding on a 3x3 image has one output: dx is
   * dy * w, the filter itself scaled (dy = 2, w = 1..9 gives 2..18). */
  {
    adnn_conv2d_desc f;
    adnn_conv2d_desc_init(&f);
    f.x = harness_tensor_desc4(dt, 1, 1, 3, 3, HARNESS_PACKED);
    f.w = harness_tensor_desc4(dt, 1, 1, 3, 3, HARNESS_PACKED);
    f.y = harness_tensor_desc4(dt, 1, 1, 1, 1, HARNESS_PACKED);
    double dy[1] = {2}, w[9], dx[9];
    for (int i = 0; i < 9; i++) w[i] = i + 1;
    int good = run_oracle(&f, 0.0, dy, w, dx);
    for (int i = 0; i < 9; i++) good &= dx[i] == 2.0 * (i + 1);
    harness_ok(rep, good, "oracle: one output position spreads dy over the filter's taps");
    /* With beta = 1 the old dx (all 100) is kept and added to. */
    for (int i = 0; i < 9; i++) dx[i] = 100;
    good = run_oracle(&f, 1.0, dy, w, dx);
    for (int i = 0; i < 9; i++) good &= dx[i] == 100 + 2.0 * (i + 1);
    harness_ok(rep, good, "oracle: beta 1 adds the gradient to dx");
  }
  /* 2. A 1x1 filter with stride 2 on a 3x3 image reads x at (0,0), (0,2),
   * (2,0), (2,2): dx is w * dy there and 0 elsewhere (w = 3, dy = 1 2 3 4). */
  {
    adnn_conv2d_desc f;
    adnn_conv2d_desc_init(&f);
    f.x = harness_tensor_desc4(dt, 1, 1, 3, 3, HARNESS_PACKED);
    f.w = harness_tensor_desc4(dt, 1, 1, 1, 1, HARNESS_PACKED);
    f.y = harness_tensor_desc4(dt, 1, 1, 2, 2, HARNESS_PACKED);
    f.stride_h = f.stride_w = 2;
    double dy[4] = {1, 2, 3, 4}, w[1] = {3}, dx[9];
    const double want[9] = {3, 0, 6, 0, 0, 0, 9, 0, 12};
    int good = run_oracle(&f, 0.0, dy, w, dx);
    for (int i = 0; i < 9; i++) good &= dx[i] == want[i];
    harness_ok(rep, good, "oracle: stride 2 leaves the skipped pixels' gradient 0");
  }
  /* 3. Two groups of one channel each (depthwise): channel 1's dx depends
   * only on filter 1. x 1x2x1x1, w 2x1x1x1 = {5, 7}, dy = {1, 10}: dx = {5,
   * 70}. A y of the wrong shape is refused. */
  {
    adnn_conv2d_desc f;
    adnn_conv2d_desc_init(&f);
    f.x = harness_tensor_desc4(dt, 1, 2, 1, 1, HARNESS_PACKED);
    f.w = harness_tensor_desc4(dt, 2, 1, 1, 1, HARNESS_PACKED);
    f.y = harness_tensor_desc4(dt, 1, 2, 1, 1, HARNESS_PACKED);
    f.groups = 2;
    double dy[2] = {1, 10}, w[2] = {5, 7}, dx[2];
    int good = run_oracle(&f, 0.0, dy, w, dx);
    harness_ok(rep, good && dx[0] == 5 && dx[1] == 70,
               "oracle: groups keep the channels apart (got %g %g)", dx[0], dx[1]);
    f.y = harness_tensor_desc4(dt, 1, 2, 2, 1, HARNESS_PACKED);
    harness_ok(rep, !run_oracle(&f, 0.0, dy, w, dx),
               "oracle: a forward y whose dims contradict doc/ops.md is refused");
  }
}

/* ------------------------------------------------------------------------ */
/* Bad descriptors                                                           */
/* ------------------------------------------------------------------------ */

static void bwd_data_bad_descriptors(const harness_report *rep, adnn_context *ctx,
                                     const char *bn) {
  adnn_plan *plan = NULL;
  adnn_conv2d_desc f;
  adnn_conv2d_desc_init(&f);
  f.x = harness_tensor_desc4(ADNN_DTYPE_F32, 1, 4, 5, 5, HARNESS_PACKED);
  f.w = harness_tensor_desc4(ADNN_DTYPE_F32, 6, 4, 3, 3, HARNESS_PACKED);
  f.y = harness_tensor_desc4(ADNN_DTYPE_F32, 1, 6, 3, 3, HARNESS_PACKED);
  adnn_conv2d_backward_data_desc d;
  adnn_conv2d_backward_data_desc_init(&d);
  harness_is_status(rep, adnn_plan_create_conv2d_backward_data(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM_NULL, "%s conv2d_backward_data: NULL forward", bn);
  harness_contains(rep, adnn_last_error(), "desc->forward is NULL",
                   "%s conv2d_backward_data: the message names desc->forward", bn);
  d.forward = &f;
  f.groups = 3; /* 4 channels in 3 groups */
  harness_is_status(rep, adnn_plan_create_conv2d_backward_data(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s conv2d_backward_data: a bad forward descriptor",
                    bn);
  harness_contains(rep, adnn_last_error(), "desc->forward: input channels (4) not divisible",
                   "%s conv2d_backward_data: the forward validator's message, under "
                   "desc->forward", bn);
  f.groups = 1;
  f.y = harness_tensor_desc4(ADNN_DTYPE_F32, 1, 6, 5, 5, HARNESS_PACKED);
  harness_is_status(rep, adnn_plan_create_conv2d_backward_data(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s conv2d_backward_data: dy (forward y) of the "
                    "wrong shape", bn);
  harness_contains(rep, adnn_last_error(), "[1, 6, 3, 3]",
                   "%s conv2d_backward_data: the message names the right shape", bn);
  f.y = harness_tensor_desc4(ADNN_DTYPE_F32, 1, 6, 3, 3, HARNESS_PACKED);
  f.x.strides[1] = 1; /* dx's channels overlap its rows */
  harness_is_status(rep, adnn_plan_create_conv2d_backward_data(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s conv2d_backward_data: overlapping dx strides",
                    bn);
  harness_contains(rep, adnn_last_error(), "dx",
                   "%s conv2d_backward_data: the message names dx", bn);
  f.x = harness_tensor_desc4(ADNN_DTYPE_F32, 1, 4, 5, 5, HARNESS_PACKED);
  f.struct_size = 8;
  harness_is_status(rep, adnn_plan_create_conv2d_backward_data(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s conv2d_backward_data: forward struct_size too "
                    "small", bn);
  f.struct_size = sizeof f;
  d.beta = NAN;
  harness_is_status(rep, adnn_plan_create_conv2d_backward_data(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s conv2d_backward_data: beta NaN", bn);
  harness_contains(rep, adnn_last_error(), "beta",
                   "%s conv2d_backward_data: the message names beta", bn);
  d.beta = 0.0;
  d.algorithm = (adnn_conv2d_algorithm)99;
  harness_is_status(rep, adnn_plan_create_conv2d_backward_data(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s conv2d_backward_data: unknown algorithm", bn);
  /* The CPU plugin has no backward Winograd; the CUDA plugin maps
   * winograd_f2x3 to cuDNN's backward Winograd algorithms, which may run this
   * 3x3 problem, so the refusal is checked on the CPU only. */
  d.algorithm = ADNN_CONV2D_ALGO_WINOGRAD_F2X3;
  if (strcmp(bn, "cpu") == 0)
    harness_is_status(rep, adnn_plan_create_conv2d_backward_data(ctx, &d, &plan),
                      ADNN_STATUS_NOT_SUPPORTED, "%s conv2d_backward_data: a forced "
                      "forward-only algorithm (winograd_f2x3) is NOT_SUPPORTED", bn);

  /* At execution: dx may overlap neither dy nor w. */
  d.algorithm = ADNN_CONV2D_ALGO_AUTO;
  adnn_status st = adnn_plan_create_conv2d_backward_data(ctx, &d, &plan);
  if (st == ADNN_STATUS_NOT_SUPPORTED) {
    harness_skip(rep, "%s conv2d_backward_data: aliasing checks: %s", bn, adnn_last_error());
    return;
  }
  if (!harness_is_status(rep, st, ADNN_STATUS_SUCCESS, "%s conv2d_backward_data: a good plan",
                         bn))
    return;
  void *buf = NULL;
  const size_t bytes = (size_t)(1 * 4 * 5 * 5 + 6 * 4 * 3 * 3) * sizeof(float);
  if (adnn_malloc(ctx, bytes, &buf) == ADNN_STATUS_SUCCESS) {
    (void)adnn_memset(ctx, buf, 0, bytes);
    float *base = buf;
    const void *in[2] = {base, base + 100}; /* dy (54 floats), w (216 floats) */
    harness_is_status(rep, adnn_plan_execute(plan, in, 2, base), ADNN_STATUS_BAD_PARAM,
                      "%s conv2d_backward_data: dx aliasing dy is refused", bn);
    harness_contains(rep, adnn_last_error(), "overlaps inputs[0]",
                     "%s conv2d_backward_data: the message names the input", bn);
    adnn_free(ctx, buf);
  }
  adnn_plan_destroy(plan);
}

const harness_op_traits harness_conv2d_backward_data_traits = {
    .inputs = bwd_data_inputs,
    .output = bwd_data_output,
    .set_dtype = bwd_data_set_dtype,
    .oracle = bwd_data_oracle,
    .tolerance = bwd_data_tolerance,
    .fill = bwd_data_fill,
    .variant_count = CONV_BWD_N_ALGORITHMS,
    .set_variant = bwd_data_set_variant,
    .variant_expected = bwd_data_variant_expected,
    .cases = bwd_data_cases,
    .oracle_selftests = bwd_data_oracle_selftests,
    .bad_descriptors = bwd_data_bad_descriptors,
    .inout = bwd_data_inout,
    .fill_outputs = bwd_data_fill_outputs,
};
