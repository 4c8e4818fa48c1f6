/* Layer and RMS normalization in the conformance harness: traits, oracle
 * (doc/ops.md, "Layer normalization and RMS normalization"), cases and the
 * oracle's self-tests. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>

/* D: the product of the last norm_dims dims (1 when norm_dims is out of
 * range, which the oracle refuses). */
static int64_t row_length(const adnn_norm_desc *d) {
  int64_t D = 1;
  if (d->norm_dims < 1 || d->norm_dims > d->x.rank) return 1;
  for (int i = d->x.rank - d->norm_dims; i < d->x.rank; i++) D *= d->x.dims[i];
  return D;
}

/* x, then gain if has_gain, then bias if has_bias: packed vectors of D. */
static int norm_inputs(const harness_desc *hd, harness_tensor *in) {
  const adnn_norm_desc *d = &hd->norm;
  const adnn_tensor_desc v = harness_vector_desc(ADNN_OP_PARAM_DTYPE(d->x.dtype), row_length(d));
  int n = 0;
  in[n++] = (harness_tensor){"x", d->x};
  if (d->has_gain) in[n++] = (harness_tensor){"gain", v};
  if (d->has_bias) in[n++] = (harness_tensor){"bias", v};
  return n;
}

static adnn_tensor_desc norm_output(const harness_desc *hd) { return hd->norm.y; }

static void norm_set_dtype(harness_desc *hd, adnn_dtype dt) {
  hd->norm.x.dtype = hd->norm.y.dtype = dt;
}

static harness_tolerance norm_tolerance(const harness_desc *hd, adnn_dtype dt) {
  /* F16/BF16: the F32 bound (F32 statistics, F32 gain and bias) plus one
   * rounding of y (doc/numerics.md). */
  const harness_tolerance f32 = {1e-5, 5e-5};
  return harness_lowp_tolerance(dt, dt == ADNN_DTYPE_F64 ? (harness_tolerance){1e-12, 1e-11} : f32,
                                f32, 1.0);
}

static void norm_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  for (int i = 0; i < n_in; i++) harness_fill_uniform(&in[i], r, -1.0, 1.0);
}

/* ------------------------------------------------------------------------ */
/* Oracle                                                                    */
/* ------------------------------------------------------------------------ */

/* One row: D elements of x starting at x0 and of y starting at y0, walked in
 * the row-major order of the normalized dims (xr, yr: those dims with x's and
 * y's strides), so that element j meets gain[j] and bias[j].
 *   LAYER: mu = sum v / D, var = sum (v - mu)^2 / D (biased),
 *          y = (v - mu) / sqrt(var + eps) * gain + bias
 *   RMS:   ms = sum v^2 / D, y = v / sqrt(ms + eps) * gain + bias */
static void row(const adnn_norm_desc *d, const adnn_tensor_desc *xr, const adnn_tensor_desc *yr,
                const double *x0, double *y0, const double *gain, const double *bias) {
  const long double D = (long double)harness_element_count(xr);
  harness_index i, o;
  long double mu = 0.0L;
  if (d->kind == ADNN_NORM_LAYER) {
    harness_sum sum;
    harness_sum_init(&sum);
    for (harness_index_first(&i, xr); i.valid; harness_index_next(&i, xr))
      harness_sum_add(&sum, x0[i.offset]);
    mu = harness_sum_value(&sum) / D;
  }
  /* The variance around the mean (LAYER), or the mean square (RMS: mu = 0). */
  harness_sum squares;
  harness_sum_init(&squares);
  for (harness_index_first(&i, xr); i.valid; harness_index_next(&i, xr)) {
    const long double dev = x0[i.offset] - mu;
    harness_sum_add(&squares, dev * dev);
  }
  const long double inv = 1.0L / sqrtl(harness_sum_value(&squares) / D + d->epsilon);
  int64_t j = 0;
  for (harness_index_first(&i, xr), harness_index_first(&o, yr); i.valid;
       harness_index_next(&i, xr), harness_index_next(&o, yr), j++) {
    long double v = (x0[i.offset] - mu) * inv;
    if (gain) v *= gain[j];
    if (bias) v += bias[j];
    y0[o.offset] = (double)v;
  }
}

static int norm_oracle(const harness_desc *hd, const double *const *in, double *y, char *why,
                       size_t why_len) {
  const adnn_norm_desc *d = &hd->norm;
  const int rank = d->x.rank, nd = d->norm_dims;
  int same = d->y.rank == rank;
  for (int i = 0; same && i < rank; i++) same = d->x.dims[i] == d->y.dims[i];
  if (nd < 1 || nd > rank || !same ||
      (d->kind != ADNN_NORM_LAYER && d->kind != ADNN_NORM_RMS)) {
    snprintf(why, why_len, "norm: norm_dims %d out of 1..%d, x and y dims differ, or an unknown "
             "kind", nd, rank);
    return -1;
  }
  /* The leading dims index the rows; the last nd dims are a row. */
  adnn_tensor_desc xl = d->x, yl = d->y, xr = d->x, yr = d->y;
  xl.rank = yl.rank = rank - nd;
  xr.rank = yr.rank = nd;
  for (int i = 0; i < nd; i++) {
    xr.dims[i] = d->x.dims[rank - nd + i];
    xr.strides[i] = d->x.strides[rank - nd + i];
    yr.dims[i] = d->y.dims[rank - nd + i];
    yr.strides[i] = d->y.strides[rank - nd + i];
  }
  int k = 1;
  const double *gain = d->has_gain ? in[k++] : NULL;
  const double *bias = d->has_bias ? in[k++] : NULL;
  harness_index il, ol;
  for (harness_index_first(&il, &xl), harness_index_first(&ol, &yl); il.valid;
       harness_index_next(&il, &xl), harness_index_next(&ol, &yl))
    row(d, &xr, &yr, in[0] + il.offset, y + ol.offset, gain, bias);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

static void norm_case(harness_suite *suite, adnn_norm_kind kind, int rank, const int64_t *dims,
                      int norm_dims, int gain, int bias, enum harness_layout layout,
                      adnn_dtype dt, int inplace, double offset, double eps, const char *tag) {
  harness_case c;
  harness_case_init(&c, harness_op_find("norm"), dt, "%s %s over %d%s%s offset %g eps %g%s%s",
                    kind == ADNN_NORM_LAYER ? "layer" : "rms", tag, norm_dims,
                    gain ? " gain" : "", bias ? " bias" : "", offset, eps,
                    layout == HARNESS_PADDED ? " padded" : "", inplace ? " in-place" : "");
  adnn_norm_desc *d = &c.desc.norm;
  adnn_norm_desc_init(d);
  d->kind = kind;
  d->norm_dims = norm_dims;
  d->epsilon = eps;
  d->has_gain = gain;
  d->has_bias = bias;
  d->x = harness_tensor_desc(dt, rank, dims, layout);
  d->y = inplace ? d->x : harness_tensor_desc(dt, rank, dims, HARNESS_PACKED);
  if (harness_case_alloc(&c) != 0) return;
  c.inplace = inplace ? 0 : -1;
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  harness_fill_mixed(&c.in[0], &r);
  for (int64_t i = 0; i < c.in[0].span; i++)
    if (c.in[0].member[i]) c.in[0].v[i] = harness_round(dt, c.in[0].v[i] + offset);
  int k = 1;
  if (gain) harness_fill_uniform(&c.in[k++], &r, 0.5, 1.5);
  if (bias) harness_fill_uniform(&c.in[k++], &r, -1.0, 1.0);
  harness_submit(suite, &c);
}

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64

static void norm_cases(harness_suite *s) {
  const int64_t d1[2] = {4, 1}, odd[3] = {3, 5, 7}, big[2] = {3, 4099}, r4[4] = {2, 3, 4, 5},
                wide[2] = {16, 768}, two[3] = {5, 7, 33}, long_rows[2] = {3, 3000};
  const enum harness_layout P = HARNESS_PACKED;
  for (int k = ADNN_NORM_LAYER; k <= ADNN_NORM_RMS; k++) {
    const adnn_norm_kind kind = (adnn_norm_kind)k;
    norm_case(s, kind, 2, d1, 1, 0, 0, P, F32, 0, 0.0, 1e-5, "[4,1] D=1");
    norm_case(s, kind, 2, d1, 1, 1, 1, P, F32, 0, 0.0, 1e-5, "[4,1] D=1");
    norm_case(s, kind, 3, odd, 1, 0, 0, P, F32, 0, 0.0, 1e-5, "[3,5,7] D=7");
    norm_case(s, kind, 3, odd, 1, 1, 0, P, F32, 0, 0.0, 1e-5, "[3,5,7] D=7");
    norm_case(s, kind, 3, odd, 1, 0, 1, P, F32, 0, 0.0, 1e-5, "[3,5,7] D=7");
    norm_case(s, kind, 3, odd, 2, 1, 1, HARNESS_PADDED, F32, 0, 0.0, 1e-5, "[3,5,7] D=35");
    norm_case(s, kind, 3, odd, 3, 1, 1, P, F32, 1, 0.0, 1e-6, "[3,5,7] D=105");
    norm_case(s, kind, 2, big, 1, 1, 1, P, F32, 0, 0.0, 1e-5, "[3,4099] D=4099");
    norm_case(s, kind, 2, big, 1, 0, 0, P, F32, 1, 8.0, 1e-5, "[3,4099] D=4099");
    norm_case(s, kind, 4, r4, 3, 1, 1, P, F32, 0, 0.0, 1e-5, "[2,3,4,5] D=60");
    norm_case(s, kind, 2, wide, 1, 1, 1, P, F32, 0, 2.0, 1e-5, "[16,768] D=768");
    /* From the former CUDA-only test. */
    norm_case(s, kind, 3, two, 2, 1, 1, P, F32, 0, 0.0, 1e-5, "[5,7,33] D=231");
    norm_case(s, kind, 2, long_rows, 1, 0, 1, P, F32, 0, 0.5, 1e-5, "[3,3000] D=3000");
    /* F64: the CPU plugin's reference kernels against the oracle. */
    norm_case(s, kind, 3, odd, 1, 1, 1, P, F64, 0, 0.0, 1e-5, "[3,5,7] D=7");
    norm_case(s, kind, 2, big, 1, 1, 0, P, F64, 0, 1.0, 1e-5, "[3,4099] D=4099");
    norm_case(s, kind, 3, two, 2, 1, 1, P, F64, 0, 0.0, 1e-5, "[5,7,33] D=231");
    norm_case(s, kind, 3, odd, 2, 0, 1, HARNESS_PADDED, F64, 1, 0.0, 1e-6, "[3,5,7] D=35");
    norm_case(s, kind, 2, d1, 1, 1, 1, P, F64, 0, 0.0, 1e-5, "[4,1] D=1");
    /* F16 and BF16 data with F32 gain and bias (ADNN_OP_PARAM_DTYPE), F32
     * statistics, one rounding of y. */
    static const adnn_dtype lowp[2] = {ADNN_DTYPE_F16, ADNN_DTYPE_BF16};
    for (int t = 0; t < 2; t++) {
      norm_case(s, kind, 3, odd, 1, 1, 1, P, lowp[t], 0, 0.0, 1e-5, "[3,5,7] D=7");
      norm_case(s, kind, 3, odd, 2, 0, 1, HARNESS_PADDED, lowp[t], 1, 0.0, 1e-6, "[3,5,7] D=35");
      norm_case(s, kind, 2, big, 1, 1, 0, P, lowp[t], 0, 1.0, 1e-5, "[3,4099] D=4099");
      norm_case(s, kind, 2, wide, 1, 1, 1, P, lowp[t], 0, 2.0, 1e-5, "[16,768] D=768");
      norm_case(s, kind, 2, d1, 1, 1, 1, P, lowp[t], 0, 0.0, 1e-5, "[4,1] D=1");
    }
  }
  /* A mean far larger than the spread (doc/ops.md: no E[x^2] - E[x]^2). */
  norm_case(s, ADNN_NORM_LAYER, 2, long_rows, 1, 1, 0, P, F32, 0, 1000.0, 1e-5,
            "[3,3000] D=3000");
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracle                                                  */
/* ------------------------------------------------------------------------ */

static int run_oracle(const adnn_norm_desc *d, const double *x, double *y) {
  harness_desc hd;
  hd.norm = *d;
  const double *in[1] = {x};
  char why[256];
  return norm_oracle(&hd, in, y, why, sizeof why) == 0;
}

static void norm_oracle_selftests(const harness_report *rep) {
  /* Layer norm of 1 2 3 4: mean 2.5, biased variance (2.25 + 0.25) * 2 / 4 =
   * 1.25, so y = (x - 2.5) / sqrt(1.25). */
  double x[4] = {1, 2, 3, 4}, y[4], x2[2] = {3, 4}, y2[2];
  adnn_norm_desc d;
  adnn_norm_desc_init(&d);
  d.epsilon = 0;
  d.x = d.y = harness_vector_desc(ADNN_DTYPE_F64, 4);
  const double s = 1.0 / sqrt(1.25);
  int good = run_oracle(&d, x, y);
  harness_ok(rep, good && harness_close(y[0], -1.5 * s, 1e-15) &&
                      harness_close(y[3], 1.5 * s, 1e-15),
             "oracle: layer norm of 1 2 3 4 (biased variance)");
  /* RMS norm of 3 4: mean square (9 + 16) / 2 = 12.5. */
  d.kind = ADNN_NORM_RMS;
  d.x = d.y = harness_vector_desc(ADNN_DTYPE_F64, 2);
  good = run_oracle(&d, x2, y2);
  harness_ok(rep, good && harness_close(y2[0], 3 / sqrt(12.5), 1e-15) &&
                      harness_close(y2[1], 4 / sqrt(12.5), 1e-15),
             "oracle: rms norm of 3 4");
}

const harness_op_traits harness_norm_traits = {
    .inputs = norm_inputs,
    .output = norm_output,
    .set_dtype = norm_set_dtype,
    .oracle = norm_oracle,
    .tolerance = norm_tolerance,
    .fill = norm_fill,
    .variant_count = 1,
    .cases = norm_cases,
    .oracle_selftests = norm_oracle_selftests,
};
