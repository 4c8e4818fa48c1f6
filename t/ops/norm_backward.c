/* Layer-norm and RMS-norm backward in the conformance harness: traits, the
 * long-double oracle (doc/ops.md, "Layer / RMS norm backward"), cases, the
 * oracle's self-tests and the bad descriptors. The forward descriptor lives
 * in the case builder's frame (harness_submit runs the case before it
 * returns). */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const adnn_norm_desc *fwd_of(const harness_desc *hd) { return hd->norm_backward.forward; }

static int64_t row_length(const adnn_norm_desc *d) {
  int64_t D = 1;
  if (d->norm_dims < 1 || d->norm_dims > d->x.rank) return 1;
  for (int i = d->x.rank - d->norm_dims; i < d->x.rank; i++) D *= d->x.dims[i];
  return D;
}

/* x, dy (y's layout), then gain when the forward op has one. */
static int nb_inputs(const harness_desc *hd, harness_tensor *in) {
  const adnn_norm_desc *f = fwd_of(hd);
  int n = 0;
  in[n++] = (harness_tensor){"x", f->x};
  in[n++] = (harness_tensor){"dy", f->y};
  if (f->has_gain) in[n++] = (harness_tensor){"gain", harness_vector_desc(ADNN_OP_PARAM_DTYPE(f->x.dtype), row_length(f))};
  return n;
}

static adnn_tensor_desc nb_output(const harness_desc *hd) { return fwd_of(hd)->x; }

/* dx (x's layout), then dgain and dbias as the forward op has gain and bias. */
static int nb_outputs(const harness_desc *hd, harness_tensor *out) {
  const adnn_norm_desc *f = fwd_of(hd);
  const adnn_tensor_desc v = harness_vector_desc(ADNN_OP_PARAM_DTYPE(f->x.dtype), row_length(f));
  int n = 0;
  out[n++] = (harness_tensor){"dx", f->x};
  if (f->has_gain) out[n++] = (harness_tensor){"dgain", v};
  if (f->has_bias) out[n++] = (harness_tensor){"dbias", v};
  return n;
}

static void nb_set_dtype(harness_desc *hd, adnn_dtype dt) {
  adnn_norm_desc *f = (adnn_norm_desc *)fwd_of(hd); /* the case's own storage */
  f->x.dtype = f->y.dtype = dt;
}

static harness_tolerance nb_tolerance(const harness_desc *hd, adnn_dtype dt) {
  (void)hd;
  const harness_tolerance f32 = {1e-5, 5e-5};
  /* F16/BF16 x, dy and dx with an F32 gain and F32 dgain and dbias: the F32
   * bound plus one rounding of dx (doc/numerics.md). */
  return harness_lowp_tolerance(dt, dt == ADNN_DTYPE_F64 ? (harness_tolerance){1e-12, 1e-11} : f32,
                                f32, 1.0);
}

static void nb_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  (void)hd;
  harness_fill_mixed(&in[0], r);
  harness_fill_uniform(&in[1], r, -1.0, 1.0);
  if (n_in > 2) harness_fill_uniform(&in[2], r, 0.5, 1.5);
}

/* Per row of D elements: mean (0 for RMS) and inv = 1 / sqrt(var + eps) as
 * the forward op defines them, xhat = (x - mean) * inv, g = dy * gain;
 *   LAYER: dx = inv * (g - mean(g) - xhat * mean(g * xhat))
 *   RMS:   dx = inv * (g - xhat * mean(g * xhat))
 * and over the rows dgain[j] = sum dy * xhat, dbias[j] = sum dy. */
static int nb_oracle_outputs(const harness_desc *hd, const double *const *in, double *const *out,
                             char *why, size_t why_len) {
  const adnn_norm_desc *f = fwd_of(hd);
  const int rank = f->x.rank, nd = f->norm_dims;
  int same = f->y.rank == rank;
  for (int i = 0; same && i < rank; i++) same = f->x.dims[i] == f->y.dims[i];
  if (nd < 1 || nd > rank || !same || (f->kind != ADNN_NORM_LAYER && f->kind != ADNN_NORM_RMS)) {
    snprintf(why, why_len, "norm_backward: norm_dims out of range, x and y dims differ, or an "
             "unknown kind");
    return -1;
  }
  const int64_t D = row_length(f);
  const double *x = in[0], *dy = in[1], *gain = f->has_gain ? in[2] : NULL;
  double *dx = out[0], *dgain = f->has_gain ? out[1] : NULL;
  double *dbias = f->has_bias ? out[1 + f->has_gain] : NULL;
  harness_sum *cg = malloc((size_t)D * sizeof *cg), *cb = malloc((size_t)D * sizeof *cb);
  if (!cg || !cb) {
    free(cg), free(cb);
    snprintf(why, why_len, "out of memory");
    return -1;
  }
  for (int64_t j = 0; j < D; j++) harness_sum_init(&cg[j]), harness_sum_init(&cb[j]);
  adnn_tensor_desc xl = f->x, yl = f->y, xr = f->x, yr = f->y;
  xl.rank = yl.rank = rank - nd;
  xr.rank = yr.rank = nd;
  for (int i = 0; i < nd; i++) {
    xr.dims[i] = yr.dims[i] = f->x.dims[rank - nd + i];
    xr.strides[i] = f->x.strides[rank - nd + i];
    yr.strides[i] = f->y.strides[rank - nd + i];
  }
  const int layer = f->kind == ADNN_NORM_LAYER;
  harness_index il, ol;
  for (harness_index_first(&il, &xl), harness_index_first(&ol, &yl); il.valid;
       harness_index_next(&il, &xl), harness_index_next(&ol, &yl)) {
    const double *x0 = x + il.offset, *g0 = dy + ol.offset;
    double *dx0 = dx + il.offset;
    harness_index i, o;
    long double mu = 0.0L;
    if (layer) {
      harness_sum s;
      harness_sum_init(&s);
      for (harness_index_first(&i, &xr); i.valid; harness_index_next(&i, &xr))
        harness_sum_add(&s, x0[i.offset]);
      mu = harness_sum_value(&s) / (long double)D;
    }
    harness_sum q;
    harness_sum_init(&q);
    for (harness_index_first(&i, &xr); i.valid; harness_index_next(&i, &xr)) {
      const long double e = x0[i.offset] - mu;
      harness_sum_add(&q, e * e);
    }
    const long double inv = 1.0L / sqrtl(harness_sum_value(&q) / (long double)D + f->epsilon);
    harness_sum sg, sgx;
    harness_sum_init(&sg);
    harness_sum_init(&sgx);
    int64_t j = 0;
    for (harness_index_first(&i, &xr), harness_index_first(&o, &yr); i.valid;
         harness_index_next(&i, &xr), harness_index_next(&o, &yr), j++) {
      const long double xhat = (x0[i.offset] - mu) * inv;
      long double g = g0[o.offset];
      harness_sum_add(&cg[j], g * xhat);
      harness_sum_add(&cb[j], g);
      if (gain) g *= gain[j];
      harness_sum_add(&sg, g);
      harness_sum_add(&sgx, g * xhat);
    }
    const long double mg = layer ? harness_sum_value(&sg) / (long double)D : 0.0L;
    const long double mgx = harness_sum_value(&sgx) / (long double)D;
    j = 0;
    for (harness_index_first(&i, &xr), harness_index_first(&o, &yr); i.valid;
         harness_index_next(&i, &xr), harness_index_next(&o, &yr), j++) {
      const long double xhat = (x0[i.offset] - mu) * inv;
      long double g = g0[o.offset];
      if (gain) g *= gain[j];
      dx0[i.offset] = (double)(inv * (g - mg - xhat * mgx));
    }
  }
  for (int64_t j = 0; j < D; j++) {
    if (dgain) dgain[j] = (double)harness_sum_value(&cg[j]);
    if (dbias) dbias[j] = (double)harness_sum_value(&cb[j]);
  }
  free(cg), free(cb);
  return 0;
}

static int nb_oracle(const harness_desc *hd, const double *const *in, double *y, char *why,
                     size_t why_len) {
  (void)hd, (void)in, (void)y;
  snprintf(why, why_len, "norm_backward runs through its outputs");
  return -1;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

static void nb_case(harness_suite *suite, adnn_norm_kind kind, int rank, const int64_t *dims,
                    int norm_dims, int gain, int bias, enum harness_layout layout, adnn_dtype dt,
                    double offset, double eps, const char *tag) {
  harness_case c;
  adnn_norm_desc f;
  adnn_norm_desc_init(&f);
  harness_case_init(&c, harness_op_find("norm_backward"), dt, "%s %s over %d%s%s offset %g eps %g%s",
                    kind == ADNN_NORM_LAYER ? "layer" : "rms", tag, norm_dims,
                    gain ? " gain" : "", bias ? " bias" : "", offset, eps,
                    layout == HARNESS_PADDED ? " padded" : "");
  f.kind = kind;
  f.norm_dims = norm_dims;
  f.epsilon = eps;
  f.has_gain = gain;
  f.has_bias = bias;
  f.x = harness_tensor_desc(dt, rank, dims, layout);
  f.y = harness_tensor_desc(dt, rank, dims, HARNESS_PACKED);
  adnn_norm_backward_desc *d = &c.desc.norm_backward;
  adnn_norm_backward_desc_init(d);
  d->forward = &f;
  if (harness_case_alloc(&c) != 0) return;
  harness_case_fill(&c);
  if (offset != 0.0)
    for (int64_t i = 0; i < c.in[0].span; i++)
      if (c.in[0].member[i]) c.in[0].v[i] = harness_round(dt, c.in[0].v[i] + offset);
  harness_submit(suite, &c);
}

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64
#define F16 ADNN_DTYPE_F16
#define BF16 ADNN_DTYPE_BF16

static void nb_cases(harness_suite *s) {
  const int64_t d2[2] = {4, 2}, odd[3] = {3, 5, 7}, big[2] = {3, 1031}, r4[4] = {2, 3, 4, 5},
                wide[2] = {16, 300};
  const enum harness_layout P = HARNESS_PACKED;
  for (int k = ADNN_NORM_LAYER; k <= ADNN_NORM_RMS; k++) {
    const adnn_norm_kind kind = (adnn_norm_kind)k;
    nb_case(s, kind, 2, d2, 1, 1, 1, P, F32, 0.0, 1e-5, "[4,2] D=2");
    nb_case(s, kind, 3, odd, 1, 0, 0, P, F32, 0.0, 1e-5, "[3,5,7] D=7");
    nb_case(s, kind, 3, odd, 1, 1, 0, P, F32, 0.0, 1e-5, "[3,5,7] D=7");
    nb_case(s, kind, 3, odd, 1, 0, 1, P, F32, 0.0, 1e-5, "[3,5,7] D=7");
    nb_case(s, kind, 3, odd, 2, 1, 1, HARNESS_PADDED, F32, 0.0, 1e-5, "[3,5,7] D=35");
    nb_case(s, kind, 3, odd, 3, 1, 1, P, F32, 0.0, 1e-6, "[3,5,7] D=105");
    nb_case(s, kind, 2, big, 1, 1, 1, P, F32, 0.0, 1e-5, "[3,1031] D=1031");
    nb_case(s, kind, 4, r4, 2, 1, 1, P, F32, 0.0, 1e-5, "[2,3,4,5] D=20");
    nb_case(s, kind, 2, wide, 1, 1, 1, P, F32, 2.0, 1e-5, "[16,300] D=300");
    nb_case(s, kind, 3, odd, 1, 1, 1, P, F64, 0.0, 1e-5, "[3,5,7] D=7");
    nb_case(s, kind, 3, odd, 2, 1, 1, HARNESS_PADDED, F64, 0.0, 1e-5, "[3,5,7] D=35");
    nb_case(s, kind, 2, big, 1, 0, 1, P, F64, 1.0, 1e-5, "[3,1031] D=1031");
    /* F16 and BF16 x, dy and dx; the gain, dgain and dbias F32. */
    static const adnn_dtype lowp[2] = {F16, BF16};
    for (int t = 0; t < 2; t++) {
      nb_case(s, kind, 2, d2, 1, 1, 1, P, lowp[t], 0.0, 1e-5, "[4,2] D=2");
      nb_case(s, kind, 3, odd, 1, 1, 0, P, lowp[t], 0.0, 1e-5, "[3,5,7] D=7");
      nb_case(s, kind, 3, odd, 2, 1, 1, HARNESS_PADDED, lowp[t], 0.0, 1e-5, "[3,5,7] D=35");
      nb_case(s, kind, 2, big, 1, 1, 1, P, lowp[t], 0.0, 1e-5, "[3,1031] D=1031");
      nb_case(s, kind, 4, r4, 2, 0, 1, P, lowp[t], 0.0, 1e-5, "[2,3,4,5] D=20");
      nb_case(s, kind, 2, wide, 1, 1, 1, P, lowp[t], 2.0, 1e-5, "[16,300] D=300");
    }
  }
  /* A mean far larger than the spread. */
  nb_case(s, ADNN_NORM_LAYER, 2, wide, 1, 1, 1, P, F32, 300.0, 1e-5, "[16,300] D=300");
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracle                                                  */
/* ------------------------------------------------------------------------ */

static void nb_oracle_selftests(const harness_report *rep) {
  /* Layer norm of one row x = -1, 0, 1 with epsilon 0: mean 0, var 2/3,
   * inv = sqrt(3/2), xhat = x * inv. dy = 1, 1, 1 (no gain): mean(g) = 1,
   * mean(g xhat) = 0, so dx = inv * (1 - 1) = 0; dbias = dy; dgain = xhat.
   * dy = 0, 0, 1: mean(g) = 1/3, mean(g xhat) = xhat_2 / 3 = inv / 3, so
   * dx_0 = inv * (0 - 1/3 + inv * inv / 3) = inv * (-1/3 + 1/2) = inv / 6. */
  double x[3] = {-1, 0, 1}, dy1[3] = {1, 1, 1}, dy2[3] = {0, 0, 1}, dx[3], dgain[3], dbias[3];
  adnn_norm_desc f;
  adnn_norm_desc_init(&f);
  f.epsilon = 0;
  f.has_gain = f.has_bias = 1;
  f.x = f.y = harness_vector_desc(ADNN_DTYPE_F64, 3);
  double gain[3] = {1, 1, 1};
  harness_desc hd;
  adnn_norm_backward_desc_init(&hd.norm_backward);
  hd.norm_backward.forward = &f;
  const double inv = sqrt(1.5);
  char why[256];
  const double *in1[3] = {x, dy1, gain};
  double *out[3] = {dx, dgain, dbias};
  int ran = nb_oracle_outputs(&hd, in1, out, why, sizeof why) == 0;
  harness_ok(rep, ran && harness_close(dx[0], 0, 1e-15) && harness_close(dx[2], 0, 1e-15) &&
                      dbias[1] == 1 && harness_close(dgain[2], inv, 1e-15),
             "oracle: layer norm backward of a constant dy");
  const double *in2[3] = {x, dy2, gain};
  ran = nb_oracle_outputs(&hd, in2, out, why, sizeof why) == 0;
  harness_ok(rep, ran && harness_close(dx[0], inv / 6, 1e-15), "oracle: layer norm backward by hand");
  /* RMS norm of x = 3, 4 (mean square 12.5, inv = 1/sqrt(12.5)), dy = 1, 0,
   * no gain: mean(g xhat) = 3 inv / 2, dx_1 = inv * (0 - 4 inv * 3 inv / 2)
   * = -6 inv^3. */
  double xr[2] = {3, 4}, dyr[2] = {1, 0}, dxr[2];
  f.kind = ADNN_NORM_RMS;
  f.has_gain = f.has_bias = 0;
  f.x = f.y = harness_vector_desc(ADNN_DTYPE_F64, 2);
  const double *in3[2] = {xr, dyr};
  double *out3[1] = {dxr};
  const double ir = 1 / sqrt(12.5);
  ran = nb_oracle_outputs(&hd, in3, out3, why, sizeof why) == 0;
  harness_ok(rep, ran && harness_close(dxr[1], -6 * ir * ir * ir, 1e-15),
             "oracle: rms norm backward by hand");
}

/* ------------------------------------------------------------------------ */
/* Bad descriptors                                                           */
/* ------------------------------------------------------------------------ */

static void nb_bad_descriptors(const harness_report *rep, adnn_context *ctx, const char *bn) {
  adnn_plan *plan = NULL;
  adnn_norm_desc f;
  adnn_norm_desc_init(&f);
  const int64_t dims[2] = {4, 6};
  f.x = f.y = harness_tensor_desc(F32, 2, dims, HARNESS_PACKED);
  adnn_norm_backward_desc d;
  adnn_norm_backward_desc_init(&d);
  harness_is_status(rep, adnn_plan_create_norm_backward(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM_NULL, "%s norm_backward: NULL forward", bn);
  d.forward = &f;
  f.norm_dims = 3;
  harness_is_status(rep, adnn_plan_create_norm_backward(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s norm_backward: norm_dims beyond the rank", bn);
  harness_contains(rep, adnn_last_error(), "adnn_plan_create_norm_backward",
                   "%s norm_backward: the message names the backward function", bn);
  f.norm_dims = 1;
  f.kind = (adnn_norm_kind)7;
  harness_is_status(rep, adnn_plan_create_norm_backward(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s norm_backward: an unknown kind", bn);
  f.kind = ADNN_NORM_LAYER;
  f.x.strides[0] = 0; /* x broadcast over the rows: dx would share memory */
  harness_is_status(rep, adnn_plan_create_norm_backward(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s norm_backward: x with stride 0", bn);
  f.x = f.y;
  f.has_gain = f.has_bias = 1;
  if (!harness_is_status(rep, adnn_plan_create_norm_backward(ctx, &d, &plan), ADNN_STATUS_SUCCESS,
                         "%s norm_backward: a valid plan", bn))
    return;
  void *buf = NULL;
  if (adnn_malloc(ctx, 128 * sizeof(float), &buf) != ADNN_STATUS_SUCCESS) {
    adnn_plan_destroy(plan);
    return;
  }
  float *b = buf;
  const void *in[3] = {b, b + 24, b + 48};
  void *out[3] = {b + 64, b + 88, b + 94};
  harness_is_status(rep, adnn_plan_execute_multi(plan, in, 3, out, 2), ADNN_STATUS_BAD_PARAM,
                    "%s norm_backward: 2 outputs where dgain and dbias make 3", bn);
  harness_is_status(rep, adnn_plan_execute_multi(plan, in, 2, out, 3), ADNN_STATUS_BAD_PARAM,
                    "%s norm_backward: gain missing from the inputs", bn);
  out[0] = b + 24; /* dx on dy */
  harness_is_status(rep, adnn_plan_execute_multi(plan, in, 3, out, 3), ADNN_STATUS_BAD_PARAM,
                    "%s norm_backward: dx aliasing dy is refused", bn);
  adnn_free(ctx, buf);
  adnn_plan_destroy(plan);
}

const harness_op_traits harness_norm_backward_traits = {
    .inputs = nb_inputs,
    .output = nb_output,
    .set_dtype = nb_set_dtype,
    .oracle = nb_oracle,
    .tolerance = nb_tolerance,
    .fill = nb_fill,
    .variant_count = 1,
    .cases = nb_cases,
    .oracle_selftests = nb_oracle_selftests,
    .bad_descriptors = nb_bad_descriptors,
    .outputs = nb_outputs,
    .oracle_outputs = nb_oracle_outputs,
};
