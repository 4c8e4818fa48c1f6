/* Batch normalization in training mode in the conformance harness: traits,
 * the long-double oracle (doc/ops.md, "Batch-norm training"), cases, the
 * oracle's self-test and the bad descriptors.
 *
 * A case's descriptor points to its forward (inference) descriptor, which
 * lives in the case builder's frame: harness_submit runs the case before the
 * builder returns. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const adnn_batchnorm_desc *fwd_of(const harness_desc *hd) {
  return hd->batchnorm_training.forward;
}

static int64_t channels(const adnn_batchnorm_desc *f) { return f->x.rank >= 2 ? f->x.dims[1] : 1; }

/* x, then scale and shift: packed vectors of C elements. */
static int bnt_inputs(const harness_desc *hd, harness_tensor *in) {
  const adnn_batchnorm_desc *f = fwd_of(hd);
  const adnn_tensor_desc v = harness_vector_desc(ADNN_OP_PARAM_DTYPE(f->x.dtype), channels(f));
  in[0] = (harness_tensor){"x", f->x};
  in[1] = (harness_tensor){"scale", v};
  in[2] = (harness_tensor){"shift", v};
  return 3;
}

static adnn_tensor_desc bnt_output(const harness_desc *hd) { return fwd_of(hd)->y; }

static int bnt_outputs(const harness_desc *hd, harness_tensor *out) {
  const adnn_batchnorm_desc *f = fwd_of(hd);
  const adnn_tensor_desc v = harness_vector_desc(ADNN_OP_PARAM_DTYPE(f->x.dtype), channels(f));
  out[0] = (harness_tensor){"y", f->y};
  out[1] = (harness_tensor){"saved_mean", v};
  out[2] = (harness_tensor){"saved_inv_std", v};
  out[3] = (harness_tensor){"running_mean", v};
  out[4] = (harness_tensor){"running_var", v};
  return 5;
}

/* The running statistics are read and updated. */
static unsigned bnt_inout(const harness_desc *hd) {
  (void)hd;
  return (1u << 3) | (1u << 4);
}

static void bnt_set_dtype(harness_desc *hd, adnn_dtype dt) {
  adnn_batchnorm_desc *f = (adnn_batchnorm_desc *)fwd_of(hd); /* the case's own storage */
  f->x.dtype = f->y.dtype = dt;
}

/* y is scale * (x - mean) * inv_std + shift with the statistics in double
 * and one float rounding of the coefficient and of the result; the saved
 * and running statistics are double sums rounded once (doc/numerics.md). */
static harness_tolerance bnt_tolerance(const harness_desc *hd, adnn_dtype dt) {
  (void)hd;
  const harness_tolerance f32 = {5e-6, 2e-5};
  /* F16/BF16 x and y with F32 parameters and statistics: the F32 bound plus
   * one rounding of y (doc/numerics.md). */
  return harness_lowp_tolerance(dt, dt == ADNN_DTYPE_F64 ? (harness_tolerance){1e-12, 1e-11} : f32,
                                f32, 1.0);
}

static void bnt_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  (void)hd;
  (void)n_in;
  harness_fill_mixed(&in[0], r);
  harness_fill_uniform(&in[1], r, -2.0, 2.0);
  harness_fill_uniform(&in[2], r, -1.0, 1.0);
}

static void bnt_fill_outputs(const harness_desc *hd, harness_buffer *out, int n_out, tap_rng *r) {
  (void)hd;
  (void)n_out;
  harness_fill_uniform(&out[3], r, -1.0, 1.0);
  harness_fill_uniform(&out[4], r, 0.5, 2.0);
}

/* Per channel c (dim 1), over N and every spatial position, n elements:
 *   mean = sum x / n, var_b = sum (x - mean)^2 / n, inv = 1 / sqrt(var_b + eps),
 *   y = scale * (x - mean) * inv + shift,
 *   running_mean = (1 - m) running_mean + m mean,
 *   running_var = (1 - m) running_var + m var_b n / (n - 1)  (unchanged when m = 0). */
static int bnt_oracle_outputs(const harness_desc *hd, const double *const *in,
                              double *const *out, char *why, size_t why_len) {
  const adnn_batchnorm_training_desc *d = &hd->batchnorm_training;
  const adnn_batchnorm_desc *f = d->forward;
  int same = f->x.rank >= 2 && f->y.rank == f->x.rank;
  for (int i = 0; same && i < f->x.rank; i++) same = f->x.dims[i] == f->y.dims[i];
  const int64_t C = channels(f), n = same ? harness_element_count(&f->x) / C : 0;
  if (!same || n < 2) {
    snprintf(why, why_len, "batchnorm_training: x of rank below 2, x and y dims differ, or "
             "fewer than 2 elements per channel");
    return -1;
  }
  harness_sum *sums = malloc((size_t)C * sizeof *sums);
  long double *mean = malloc((size_t)C * sizeof *mean), *inv = malloc((size_t)C * sizeof *inv);
  if (!sums || !mean || !inv) {
    free(sums), free(mean), free(inv);
    snprintf(why, why_len, "out of memory");
    return -1;
  }
  harness_index ix, iy;
  for (int64_t c = 0; c < C; c++) harness_sum_init(&sums[c]);
  for (harness_index_first(&ix, &f->x); ix.valid; harness_index_next(&ix, &f->x))
    harness_sum_add(&sums[ix.idx[1]], in[0][ix.offset]);
  for (int64_t c = 0; c < C; c++) {
    mean[c] = harness_sum_value(&sums[c]) / (long double)n;
    harness_sum_init(&sums[c]);
  }
  for (harness_index_first(&ix, &f->x); ix.valid; harness_index_next(&ix, &f->x)) {
    const long double e = in[0][ix.offset] - mean[ix.idx[1]];
    harness_sum_add(&sums[ix.idx[1]], e * e);
  }
  const long double m = d->momentum;
  for (int64_t c = 0; c < C; c++) {
    const long double dev2 = harness_sum_value(&sums[c]);
    inv[c] = 1.0L / sqrtl(dev2 / (long double)n + f->epsilon);
    out[1][c] = (double)mean[c];
    out[2][c] = (double)inv[c];
    if (m != 0.0L) {
      out[3][c] = (double)((1.0L - m) * out[3][c] + m * mean[c]);
      out[4][c] = (double)((1.0L - m) * out[4][c] + m * dev2 / (long double)(n - 1));
    }
  }
  const double *scale = in[1], *shift = in[2];
  for (harness_index_first(&ix, &f->x), harness_index_first(&iy, &f->y); ix.valid;
       harness_index_next(&ix, &f->x), harness_index_next(&iy, &f->y)) {
    const int64_t c = ix.idx[1];
    out[0][iy.offset] =
        (double)(scale[c] * ((in[0][ix.offset] - mean[c]) * inv[c]) + (long double)shift[c]);
  }
  free(sums), free(mean), free(inv);
  return 0;
}

/* The single-output form is not used (the op has `outputs`). */
static int bnt_oracle(const harness_desc *hd, const double *const *in, double *y, char *why,
                      size_t why_len) {
  (void)hd, (void)in, (void)y;
  snprintf(why, why_len, "batchnorm_training has several outputs");
  return -1;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

static void bnt_case(harness_suite *suite, int rank, const int64_t *dims,
                     enum harness_layout layout, adnn_dtype dt, double momentum, int inplace,
                     double offset, double eps, const char *tag) {
  harness_case c;
  adnn_batchnorm_desc f;
  adnn_batchnorm_desc_init(&f);
  harness_case_init(&c, harness_op_find("batchnorm_training"), dt, "%s momentum %g offset %g eps %g%s",
                    tag, momentum, offset, eps, inplace ? " in-place" : "");
  f.epsilon = eps;
  f.x = harness_tensor_desc(dt, rank, dims, layout);
  f.y = inplace ? f.x
                : harness_tensor_desc(dt, rank, dims,
                                      layout == HARNESS_NHWC ? HARNESS_NHWC : HARNESS_PACKED);
  adnn_batchnorm_training_desc *d = &c.desc.batchnorm_training;
  adnn_batchnorm_training_desc_init(d);
  d->forward = &f;
  d->momentum = momentum;
  if (harness_case_alloc(&c) != 0) return;
  c.inplace = inplace ? 0 : -1;
  harness_case_fill(&c); /* inputs and the running statistics' initial values */
  if (offset != 0.0)
    for (int64_t i = 0; i < c.in[0].span; i++)
      if (c.in[0].member[i]) c.in[0].v[i] = harness_round(dt, c.in[0].v[i] + offset);
  harness_submit(suite, &c);
}

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64
#define F16 ADNN_DTYPE_F16
#define BF16 ADNN_DTYPE_BF16

static void bnt_cases(harness_suite *s) {
  const int64_t nchw[4] = {3, 8, 5, 7}, r2[2] = {9, 16}, r3[3] = {2, 5, 11},
                r5[5] = {2, 3, 2, 3, 4}, big[4] = {4, 32, 28, 28}, two[2] = {2, 3},
                wide[4] = {2, 80, 3, 3}, pix[4] = {1, 3, 1, 2};
  const enum harness_layout P = HARNESS_PACKED, NHWC = HARNESS_NHWC, PAD = HARNESS_PADDED;
  bnt_case(s, 4, nchw, P, F32, 0.1, 0, 0.0, 1e-5, "[3,8,5,7] nchw");
  bnt_case(s, 4, nchw, NHWC, F32, 0.1, 0, 0.0, 1e-5, "[3,8,5,7] nhwc");
  bnt_case(s, 4, nchw, PAD, F32, 0.1, 0, 0.0, 1e-5, "[3,8,5,7] padded");
  bnt_case(s, 4, nchw, P, F32, 0.0, 1, 0.0, 1e-5, "[3,8,5,7] nchw");
  bnt_case(s, 4, nchw, NHWC, F32, 0.0, 1, 0.0, 1e-3, "[3,8,5,7] nhwc");
  bnt_case(s, 4, nchw, P, F32, 1.0, 0, 0.0, 1e-5, "[3,8,5,7] nchw");
  bnt_case(s, 2, r2, P, F32, 0.1, 0, 0.0, 0.0, "[9,16]");
  bnt_case(s, 2, r2, P, F32, 0.1, 1, 0.0, 1e-5, "[9,16]");
  bnt_case(s, 2, two, P, F32, 0.1, 0, 0.0, 1e-5, "[2,3] two per channel");
  bnt_case(s, 4, pix, P, F32, 0.1, 0, 0.0, 1e-5, "[1,3,1,2] two per channel");
  bnt_case(s, 3, r3, P, F32, 0.1, 0, 0.0, 1e-5, "[2,5,11]");
  bnt_case(s, 5, r5, P, F32, 0.1, 0, 0.0, 1e-5, "[2,3,2,3,4]");
  bnt_case(s, 4, big, NHWC, F32, 0.1, 0, 0.0, 1e-5, "[4,32,28,28] nhwc");
  bnt_case(s, 4, big, P, F32, 0.1, 0, 0.0, 1e-5, "[4,32,28,28] nchw");
  bnt_case(s, 4, wide, NHWC, F32, 0.1, 0, 0.0, 1e-5, "[2,80,3,3] nhwc");
  /* A mean far larger than the spread: two-pass statistics, no cancellation. */
  bnt_case(s, 4, big, P, F32, 0.1, 0, 300.0, 1e-5, "[4,32,28,28] nchw");
  bnt_case(s, 4, big, NHWC, F32, 0.1, 0, 300.0, 1e-5, "[4,32,28,28] nhwc");
  /* F64: the CPU plugin's reference kernels against the oracle. */
  bnt_case(s, 4, nchw, P, F64, 0.1, 0, 0.0, 1e-5, "[3,8,5,7] nchw");
  bnt_case(s, 4, nchw, NHWC, F64, 0.0, 0, 0.0, 1e-5, "[3,8,5,7] nhwc");
  bnt_case(s, 4, nchw, PAD, F64, 0.1, 1, 0.0, 1e-5, "[3,8,5,7] padded");
  bnt_case(s, 2, r2, P, F64, 0.1, 0, 0.0, 1e-5, "[9,16]");
  bnt_case(s, 3, r3, P, F64, 0.1, 1, 2.0, 0.0, "[2,5,11]");
  /* F16 and BF16 x and y; scale, shift and the statistics F32. */
  static const adnn_dtype lowp[2] = {F16, BF16};
  for (int t = 0; t < 2; t++) {
    bnt_case(s, 4, nchw, P, lowp[t], 0.1, 0, 0.0, 1e-5, "[3,8,5,7] nchw");
    bnt_case(s, 4, nchw, NHWC, lowp[t], 0.1, 0, 0.0, 1e-5, "[3,8,5,7] nhwc");
    bnt_case(s, 4, nchw, PAD, lowp[t], 0.1, 0, 0.0, 1e-5, "[3,8,5,7] padded");
    bnt_case(s, 4, nchw, P, lowp[t], 0.0, 1, 0.0, 1e-5, "[3,8,5,7] nchw");
    bnt_case(s, 2, r2, P, lowp[t], 0.1, 1, 0.0, 1e-5, "[9,16]");
    bnt_case(s, 2, two, P, lowp[t], 0.1, 0, 0.0, 1e-5, "[2,3] two per channel");
    bnt_case(s, 4, big, NHWC, lowp[t], 0.1, 0, 0.0, 1e-5, "[4,32,28,28] nhwc");
    bnt_case(s, 4, big, P, lowp[t], 0.1, 0, 0.0, 1e-5, "[4,32,28,28] nchw");
    bnt_case(s, 4, wide, NHWC, lowp[t], 0.1, 0, 0.0, 1e-5, "[2,80,3,3] nhwc");
    bnt_case(s, 4, big, P, lowp[t], 0.1, 0, 300.0, 1e-5, "[4,32,28,28] nchw");
  }
}

/* ------------------------------------------------------------------------ */
/* Self-test of the oracle                                                   */
/* ------------------------------------------------------------------------ */

static void bnt_oracle_selftests(const harness_report *rep) {
  /* x [2, 2] (N = 2, C = 2): channel 0 holds 1 and 3 (mean 2, biased
   * variance 1, unbiased 2), channel 1 holds 10 and 10 (mean 10, variance
   * 0). epsilon 0: channel 0 normalizes to -1 and 1, then scale 2 and shift
   * 1 give -1 and 3. Channel 1 has inv_std 1/0 = inf, so y = 0 * inf = NaN.
   * Momentum 0.5 with running mean 0 and var 1: channel 0's become 1 and 1.5. */
  double x[4] = {1, 10, 3, 10}, sc[2] = {2, 1}, sh[2] = {1, 0};
  double y[4], mu[2], inv[2], rm[2] = {0, 0}, rv[2] = {1, 1};
  adnn_batchnorm_desc f;
  adnn_batchnorm_desc_init(&f);
  f.epsilon = 0;
  const int64_t dims[2] = {2, 2};
  f.x = f.y = harness_tensor_desc(ADNN_DTYPE_F64, 2, dims, HARNESS_PACKED);
  harness_desc hd;
  adnn_batchnorm_training_desc_init(&hd.batchnorm_training);
  hd.batchnorm_training.forward = &f;
  hd.batchnorm_training.momentum = 0.5;
  const double *in[3] = {x, sc, sh};
  double *out[5] = {y, mu, inv, rm, rv};
  char why[256];
  const int ran = bnt_oracle_outputs(&hd, in, out, why, sizeof why) == 0;
  harness_ok(rep, ran && y[0] == -1 && y[2] == 3 && isnan(y[1]) && mu[0] == 2 && mu[1] == 10 &&
                      inv[0] == 1 && isinf(inv[1]) && rm[0] == 1 && rv[0] == 1.5 && rm[1] == 5 &&
                      rv[1] == 0.5,
             "oracle: batch-norm training by hand (unbiased running variance, var 0)");
}

/* ------------------------------------------------------------------------ */
/* Bad descriptors and executions                                            */
/* ------------------------------------------------------------------------ */

static void bnt_bad_descriptors(const harness_report *rep, adnn_context *ctx, const char *bn) {
  adnn_plan *plan = NULL;
  adnn_batchnorm_desc f;
  adnn_batchnorm_desc_init(&f);
  f.x = f.y = harness_tensor_desc4(F32, 2, 3, 2, 2, HARNESS_PACKED);
  adnn_batchnorm_training_desc d;
  adnn_batchnorm_training_desc_init(&d);
  harness_is_status(rep, adnn_plan_create_batchnorm_training(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM_NULL, "%s batchnorm_training: NULL forward", bn);
  harness_contains(rep, adnn_last_error(), "desc->forward",
                   "%s batchnorm_training: the message names desc->forward", bn);
  d.forward = &f;
  f.activation.kind = ADNN_ACTIVATION_RELU;
  harness_is_status(rep, adnn_plan_create_batchnorm_training(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s batchnorm_training: a fused activation", bn);
  harness_contains(rep, adnn_last_error(), "identity",
                   "%s batchnorm_training: the message says identity", bn);
  f.activation.kind = ADNN_ACTIVATION_IDENTITY;
  const double moms[3] = {-0.1, 1.5, NAN};
  for (int i = 0; i < 3; i++) {
    d.momentum = moms[i];
    harness_is_status(rep, adnn_plan_create_batchnorm_training(ctx, &d, &plan),
                      ADNN_STATUS_BAD_PARAM, "%s batchnorm_training: momentum %g", bn, moms[i]);
    harness_contains(rep, adnn_last_error(), "momentum",
                     "%s batchnorm_training: the message names momentum", bn);
  }
  d.momentum = 0.1;
  f.x = f.y = harness_tensor_desc4(F32, 1, 3, 1, 1, HARNESS_PACKED);
  harness_is_status(rep, adnn_plan_create_batchnorm_training(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s batchnorm_training: one element per channel", bn);
  harness_contains(rep, adnn_last_error(), "at least 2",
                   "%s batchnorm_training: the message says at least 2", bn);
  f.x = f.y = harness_tensor_desc4(F32, 2, 3, 2, 2, HARNESS_PACKED);
  f.y.dims[3] = 3;
  harness_is_status(rep, adnn_plan_create_batchnorm_training(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s batchnorm_training: y dims differ from x", bn);
  f.y = f.x;
  f.y.dtype = ADNN_DTYPE_F64;
  harness_is_status(rep, adnn_plan_create_batchnorm_training(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s batchnorm_training: mixed dtypes", bn);
  f.y = f.x;
  f.struct_size = 8;
  harness_is_status(rep, adnn_plan_create_batchnorm_training(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s batchnorm_training: forward struct_size too small",
                    bn);
  harness_contains(rep, adnn_last_error(), "adnn_batchnorm_desc_init",
                   "%s batchnorm_training: the message names adnn_batchnorm_desc_init", bn);
  adnn_batchnorm_desc_init(&f);
  f.x = f.y = harness_tensor_desc4(F32, 2, 3, 2, 2, HARNESS_PACKED);

  /* Execution: the output count, and outputs that overlap. */
  if (!harness_is_status(rep, adnn_plan_create_batchnorm_training(ctx, &d, &plan),
                         ADNN_STATUS_SUCCESS, "%s batchnorm_training: a valid plan", bn))
    return;
  void *buf = NULL;
  /* x (24), scale, shift (3 each), y (24), then four vectors of 3. */
  const size_t bytes = 72 * sizeof(float);
  if (adnn_malloc(ctx, bytes, &buf) != ADNN_STATUS_SUCCESS) {
    adnn_plan_destroy(plan);
    return;
  }
  float *b = buf;
  const void *in[3] = {b, b + 24, b + 27};
  void *out[5] = {b + 32, b + 56, b + 59, b + 62, b + 62}; /* the last two the same */
  harness_is_status(rep, adnn_plan_execute_multi(plan, in, 3, out, 4), ADNN_STATUS_BAD_PARAM,
                    "%s batchnorm_training: 4 outputs instead of 5", bn);
  harness_is_status(rep, adnn_plan_execute(plan, in, 3, out[0]), ADNN_STATUS_BAD_PARAM,
                    "%s batchnorm_training: adnn_plan_execute refuses a multi-output op", bn);
  harness_is_status(rep, adnn_plan_execute_multi(plan, in, 3, out, 5), ADNN_STATUS_BAD_PARAM,
                    "%s batchnorm_training: running_mean and running_var overlap", bn);
  adnn_free(ctx, buf);
  adnn_plan_destroy(plan);
}

const harness_op_traits harness_batchnorm_training_traits = {
    .inputs = bnt_inputs,
    .output = bnt_output,
    .set_dtype = bnt_set_dtype,
    .oracle = bnt_oracle,
    .tolerance = bnt_tolerance,
    .fill = bnt_fill,
    .variant_count = 1,
    .cases = bnt_cases,
    .oracle_selftests = bnt_oracle_selftests,
    .bad_descriptors = bnt_bad_descriptors,
    .outputs = bnt_outputs,
    .inout = bnt_inout,
    .fill_outputs = bnt_fill_outputs,
    .oracle_outputs = bnt_oracle_outputs,
};
