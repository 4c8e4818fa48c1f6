/* Batch-norm backward in the conformance harness: traits, the long-double
 * oracle (doc/ops.md, "Batch-norm backward"), cases, the oracle's self-test
 * and the bad descriptors. The forward descriptor lives in the case
 * builder's frame (harness_submit runs the case before it returns). */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const adnn_batchnorm_desc *fwd_of(const harness_desc *hd) {
  return hd->batchnorm_backward.forward;
}

static int64_t channels(const adnn_batchnorm_desc *f) { return f->x.rank >= 2 ? f->x.dims[1] : 1; }

/* x, dy (y's layout), scale, saved_mean, saved_inv_std. */
static int bnb_inputs(const harness_desc *hd, harness_tensor *in) {
  const adnn_batchnorm_desc *f = fwd_of(hd);
  const adnn_tensor_desc v = harness_vector_desc(ADNN_OP_PARAM_DTYPE(f->x.dtype), channels(f));
  in[0] = (harness_tensor){"x", f->x};
  in[1] = (harness_tensor){"dy", f->y};
  in[2] = (harness_tensor){"scale", v};
  in[3] = (harness_tensor){"saved_mean", v};
  in[4] = (harness_tensor){"saved_inv_std", v};
  return 5;
}

static adnn_tensor_desc bnb_output(const harness_desc *hd) { return fwd_of(hd)->x; }

/* dx (x's layout), dscale, dshift. */
static int bnb_outputs(const harness_desc *hd, harness_tensor *out) {
  const adnn_batchnorm_desc *f = fwd_of(hd);
  const adnn_tensor_desc v = harness_vector_desc(ADNN_OP_PARAM_DTYPE(f->x.dtype), channels(f));
  out[0] = (harness_tensor){"dx", f->x};
  out[1] = (harness_tensor){"dscale", v};
  out[2] = (harness_tensor){"dshift", v};
  return 3;
}

static void bnb_set_dtype(harness_desc *hd, adnn_dtype dt) {
  adnn_batchnorm_desc *f = (adnn_batchnorm_desc *)fwd_of(hd); /* the case's own storage */
  f->x.dtype = f->y.dtype = dt;
}

/* dx sums three terms of the size of scale * inv_std * dy in the element
 * type (one rounding each); dscale and dshift are double sums rounded once. */
static harness_tolerance bnb_tolerance(const harness_desc *hd, adnn_dtype dt) {
  (void)hd;
  const harness_tolerance f32 = {1e-5, 5e-5};
  /* F16/BF16 x, dy and dx with F32 parameters: the F32 bound plus one
   * rounding of dx (doc/numerics.md). */
  return harness_lowp_tolerance(dt, dt == ADNN_DTYPE_F64 ? (harness_tolerance){1e-12, 1e-11} : f32,
                                f32, 1.0);
}

static void bnb_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  (void)hd;
  (void)n_in;
  harness_fill_mixed(&in[0], r);
  harness_fill_uniform(&in[1], r, -1.0, 1.0);
  harness_fill_uniform(&in[2], r, -2.0, 2.0);
  harness_fill_uniform(&in[3], r, -0.5, 0.5);
  harness_fill_uniform(&in[4], r, 0.5, 2.0);
}

/* Per channel c, n elements: xhat = (x - mean) * inv_std, dshift = sum dy,
 * dscale = sum dy * xhat, dx = scale * inv_std / n * (n dy - dshift - xhat
 * dscale). */
static int bnb_oracle_outputs(const harness_desc *hd, const double *const *in,
                              double *const *out, char *why, size_t why_len) {
  const adnn_batchnorm_desc *f = fwd_of(hd);
  int same = f->x.rank >= 2 && f->y.rank == f->x.rank;
  for (int i = 0; same && i < f->x.rank; i++) same = f->x.dims[i] == f->y.dims[i];
  const int64_t C = channels(f), n = same ? harness_element_count(&f->x) / C : 0;
  if (!same || n < 2) {
    snprintf(why, why_len, "batchnorm_backward: x of rank below 2, x and y dims differ, or "
             "fewer than 2 elements per channel");
    return -1;
  }
  harness_sum *sdy = malloc((size_t)C * sizeof *sdy), *sdx = malloc((size_t)C * sizeof *sdx);
  long double *tdy = malloc((size_t)C * sizeof *tdy), *tdx = malloc((size_t)C * sizeof *tdx);
  if (!sdy || !sdx || !tdy || !tdx) {
    free(sdy), free(sdx), free(tdy), free(tdx);
    snprintf(why, why_len, "out of memory");
    return -1;
  }
  const double *x = in[0], *dy = in[1], *scale = in[2], *mean = in[3], *inv = in[4];
  for (int64_t c = 0; c < C; c++) harness_sum_init(&sdy[c]), harness_sum_init(&sdx[c]);
  harness_index ix, iy;
  for (harness_index_first(&ix, &f->x), harness_index_first(&iy, &f->y); ix.valid;
       harness_index_next(&ix, &f->x), harness_index_next(&iy, &f->y)) {
    const int64_t c = ix.idx[1];
    const long double g = dy[iy.offset];
    harness_sum_add(&sdy[c], g);
    harness_sum_add(&sdx[c], g * (((long double)x[ix.offset] - mean[c]) * inv[c]));
  }
  for (int64_t c = 0; c < C; c++) {
    tdy[c] = harness_sum_value(&sdy[c]);
    tdx[c] = harness_sum_value(&sdx[c]);
    out[1][c] = (double)tdx[c];
    out[2][c] = (double)tdy[c];
  }
  const long double nn = (long double)n;
  for (harness_index_first(&ix, &f->x), harness_index_first(&iy, &f->y); ix.valid;
       harness_index_next(&ix, &f->x), harness_index_next(&iy, &f->y)) {
    const int64_t c = ix.idx[1];
    const long double xhat = ((long double)x[ix.offset] - mean[c]) * inv[c];
    out[0][ix.offset] = (double)((long double)scale[c] * inv[c] / nn *
                                 (nn * dy[iy.offset] - tdy[c] - xhat * tdx[c]));
  }
  free(sdy), free(sdx), free(tdy), free(tdx);
  return 0;
}

static int bnb_oracle(const harness_desc *hd, const double *const *in, double *y, char *why,
                      size_t why_len) {
  (void)hd, (void)in, (void)y;
  snprintf(why, why_len, "batchnorm_backward has several outputs");
  return -1;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

/* The saved statistics of a case are those of its x (what the training
 * forward pass would save), computed here in long double and rounded to the
 * dtype, so the data are what a network feeds the backward pass. */
static void saved_stats(const adnn_batchnorm_desc *f, const harness_buffer *x, harness_buffer *mu,
                        harness_buffer *inv) {
  const int64_t C = channels(f), n = harness_element_count(&f->x) / C;
  for (int64_t c = 0; c < C; c++) {
    long double s = 0.0L, q = 0.0L;
    harness_index i;
    for (harness_index_first(&i, &f->x); i.valid; harness_index_next(&i, &f->x))
      if (i.idx[1] == c) s += x->v[i.offset];
    const long double m = s / (long double)n;
    for (harness_index_first(&i, &f->x); i.valid; harness_index_next(&i, &f->x))
      if (i.idx[1] == c) q += (x->v[i.offset] - m) * (x->v[i.offset] - m);
    const adnn_dtype vt = ADNN_OP_PARAM_DTYPE(f->x.dtype); /* F32 for F16/BF16 x */
    mu->v[c] = harness_round(vt, (double)m);
    inv->v[c] = harness_round(vt, (double)(1.0L / sqrtl(q / (long double)n + f->epsilon)));
  }
}

static void bnb_case(harness_suite *suite, int rank, const int64_t *dims,
                     enum harness_layout layout, enum harness_layout dy_layout, adnn_dtype dt,
                     double offset, const char *tag) {
  harness_case c;
  adnn_batchnorm_desc f;
  adnn_batchnorm_desc_init(&f);
  harness_case_init(&c, harness_op_find("batchnorm_backward"), dt, "%s offset %g", tag, offset);
  f.x = harness_tensor_desc(dt, rank, dims, layout);
  f.y = harness_tensor_desc(dt, rank, dims, dy_layout);
  adnn_batchnorm_backward_desc *d = &c.desc.batchnorm_backward;
  adnn_batchnorm_backward_desc_init(d);
  d->forward = &f;
  if (harness_case_alloc(&c) != 0) return;
  harness_case_fill(&c);
  if (offset != 0.0)
    for (int64_t i = 0; i < c.in[0].span; i++)
      if (c.in[0].member[i]) c.in[0].v[i] = harness_round(dt, c.in[0].v[i] + offset);
  saved_stats(&f, &c.in[0], &c.in[3], &c.in[4]);
  harness_submit(suite, &c);
}

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64
#define F16 ADNN_DTYPE_F16
#define BF16 ADNN_DTYPE_BF16

static void bnb_cases(harness_suite *s) {
  const int64_t nchw[4] = {3, 8, 5, 7}, r2[2] = {9, 16}, r3[3] = {2, 5, 11},
                big[4] = {4, 32, 28, 28}, two[2] = {2, 3}, wide[4] = {2, 80, 3, 3};
  const enum harness_layout P = HARNESS_PACKED, NHWC = HARNESS_NHWC, PAD = HARNESS_PADDED;
  bnb_case(s, 4, nchw, P, P, F32, 0.0, "[3,8,5,7] nchw");
  bnb_case(s, 4, nchw, NHWC, NHWC, F32, 0.0, "[3,8,5,7] nhwc");
  bnb_case(s, 4, nchw, PAD, P, F32, 0.0, "[3,8,5,7] padded x");
  bnb_case(s, 4, nchw, P, NHWC, F32, 0.0, "[3,8,5,7] nchw x nhwc dy");
  bnb_case(s, 2, r2, P, P, F32, 0.0, "[9,16]");
  bnb_case(s, 2, two, P, P, F32, 0.0, "[2,3] two per channel");
  bnb_case(s, 3, r3, P, P, F32, 0.0, "[2,5,11]");
  bnb_case(s, 4, big, NHWC, NHWC, F32, 0.0, "[4,32,28,28] nhwc");
  bnb_case(s, 4, big, P, P, F32, 100.0, "[4,32,28,28] nchw");
  bnb_case(s, 4, wide, NHWC, NHWC, F32, 0.0, "[2,80,3,3] nhwc");
  bnb_case(s, 4, nchw, P, P, F64, 0.0, "[3,8,5,7] nchw");
  bnb_case(s, 4, nchw, NHWC, NHWC, F64, 0.0, "[3,8,5,7] nhwc");
  bnb_case(s, 4, nchw, PAD, PAD, F64, 0.0, "[3,8,5,7] padded");
  bnb_case(s, 2, r2, P, P, F64, 1.0, "[9,16]");
  /* F16 and BF16 x, dy and dx with F32 parameters and statistics. */
  static const adnn_dtype lowp[2] = {F16, BF16};
  for (int t = 0; t < 2; t++) {
    bnb_case(s, 4, nchw, P, P, lowp[t], 0.0, "[3,8,5,7] nchw");
    bnb_case(s, 4, nchw, NHWC, NHWC, lowp[t], 0.0, "[3,8,5,7] nhwc");
    bnb_case(s, 4, nchw, PAD, P, lowp[t], 0.0, "[3,8,5,7] padded x");
    bnb_case(s, 4, nchw, P, NHWC, lowp[t], 0.0, "[3,8,5,7] nchw x nhwc dy");
    bnb_case(s, 2, r2, P, P, lowp[t], 0.0, "[9,16]");
    bnb_case(s, 4, big, NHWC, NHWC, lowp[t], 0.0, "[4,32,28,28] nhwc");
    bnb_case(s, 4, big, P, P, lowp[t], 0.0, "[4,32,28,28] nchw");
    bnb_case(s, 4, wide, NHWC, NHWC, lowp[t], 0.0, "[2,80,3,3] nhwc");
  }
}

/* ------------------------------------------------------------------------ */
/* Self-test of the oracle                                                   */
/* ------------------------------------------------------------------------ */

static void bnb_oracle_selftests(const harness_report *rep) {
  /* One channel of 3 elements (the 2-element case is too special: every dy
   * is then linear in xhat and dx vanishes). x = -1, 0, 1 with mean 0 and
   * inv_std given as 1 (xhat = x), dy = 0, 1, 0, scale 1: dshift = 1,
   * dscale = 0, dx = 1/3 * (3 dy - 1) = -1/3, 2/3, -1/3. */
  double x[3] = {-1, 0, 1}, dy[3] = {0, 1, 0}, sc[1] = {1}, mu[1] = {0}, inv[1] = {1};
  double dx[3], ds[1], db[1];
  adnn_batchnorm_desc f;
  adnn_batchnorm_desc_init(&f);
  const int64_t dims[2] = {3, 1};
  f.x = f.y = harness_tensor_desc(ADNN_DTYPE_F64, 2, dims, HARNESS_PACKED);
  harness_desc hd;
  adnn_batchnorm_backward_desc_init(&hd.batchnorm_backward);
  hd.batchnorm_backward.forward = &f;
  const double *in[5] = {x, dy, sc, mu, inv};
  double *out[3] = {dx, ds, db};
  char why[256];
  const int ran = bnb_oracle_outputs(&hd, in, out, why, sizeof why) == 0;
  harness_ok(rep, ran && db[0] == 1 && ds[0] == 0 && harness_close(dx[0], -1.0 / 3, 1e-15) &&
                      harness_close(dx[1], 2.0 / 3, 1e-15) && harness_close(dx[2], -1.0 / 3, 1e-15),
             "oracle: batch-norm backward by hand");
}

/* ------------------------------------------------------------------------ */
/* Bad descriptors                                                           */
/* ------------------------------------------------------------------------ */

static void bnb_bad_descriptors(const harness_report *rep, adnn_context *ctx, const char *bn) {
  adnn_plan *plan = NULL;
  adnn_batchnorm_desc f;
  adnn_batchnorm_desc_init(&f);
  f.x = f.y = harness_tensor_desc4(F32, 2, 3, 2, 2, HARNESS_PACKED);
  adnn_batchnorm_backward_desc d;
  adnn_batchnorm_backward_desc_init(&d);
  harness_is_status(rep, adnn_plan_create_batchnorm_backward(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM_NULL, "%s batchnorm_backward: NULL forward", bn);
  d.forward = &f;
  f.activation.kind = ADNN_ACTIVATION_SIGMOID;
  harness_is_status(rep, adnn_plan_create_batchnorm_backward(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s batchnorm_backward: a fused activation", bn);
  f.activation.kind = ADNN_ACTIVATION_IDENTITY;
  f.x = f.y = harness_tensor_desc4(F32, 1, 3, 1, 1, HARNESS_PACKED);
  harness_is_status(rep, adnn_plan_create_batchnorm_backward(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s batchnorm_backward: one element per channel", bn);
  /* x broadcast along N (stride 0): dx, in x's layout, would share memory. */
  f.x = f.y = harness_tensor_desc4(F32, 2, 3, 2, 2, HARNESS_PACKED);
  f.x.strides[0] = 0;
  harness_is_status(rep, adnn_plan_create_batchnorm_backward(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s batchnorm_backward: x with stride 0", bn);
  harness_contains(rep, adnn_last_error(), "dx", "%s batchnorm_backward: the message names dx",
                   bn);
  f.x = f.y;
  if (!harness_is_status(rep, adnn_plan_create_batchnorm_backward(ctx, &d, &plan),
                         ADNN_STATUS_SUCCESS, "%s batchnorm_backward: a valid plan", bn))
    return;
  void *buf = NULL;
  if (adnn_malloc(ctx, 128 * sizeof(float), &buf) != ADNN_STATUS_SUCCESS) {
    adnn_plan_destroy(plan);
    return;
  }
  float *b = buf;
  const void *in[5] = {b, b + 24, b + 48, b + 51, b + 54};
  void *out[3] = {b + 24, b + 64, b + 67}; /* dx on dy: not allowed */
  harness_is_status(rep, adnn_plan_execute_multi(plan, in, 5, out, 3), ADNN_STATUS_BAD_PARAM,
                    "%s batchnorm_backward: dx aliasing dy is refused", bn);
  out[0] = b + 70;
  harness_is_status(rep, adnn_plan_execute_multi(plan, in, 4, out, 3), ADNN_STATUS_BAD_PARAM,
                    "%s batchnorm_backward: 4 inputs instead of 5", bn);
  adnn_free(ctx, buf);
  adnn_plan_destroy(plan);
}

const harness_op_traits harness_batchnorm_backward_traits = {
    .inputs = bnb_inputs,
    .output = bnb_output,
    .set_dtype = bnb_set_dtype,
    .oracle = bnb_oracle,
    .tolerance = bnb_tolerance,
    .fill = bnb_fill,
    .variant_count = 1,
    .cases = bnb_cases,
    .oracle_selftests = bnb_oracle_selftests,
    .bad_descriptors = bnb_bad_descriptors,
    .outputs = bnb_outputs,
    .oracle_outputs = bnb_oracle_outputs,
};
