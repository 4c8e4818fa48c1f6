/* softmax and log-softmax in the conformance harness: traits, oracle
 * (doc/ops.md, "softmax and log-softmax"), cases and the oracle's self-tests. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int softmax_inputs(const harness_desc *hd, harness_tensor *in) {
  in[0] = (harness_tensor){"x", hd->softmax.x};
  return 1;
}

static adnn_tensor_desc softmax_output(const harness_desc *hd) { return hd->softmax.y; }

static void softmax_set_dtype(harness_desc *hd, adnn_dtype dt) {
  hd->softmax.x.dtype = hd->softmax.y.dtype = dt;
}

static harness_tolerance softmax_tolerance(const harness_desc *hd, adnn_dtype dt) {
  /* F16/BF16: the F32 bound (F32 exponentials and sums) plus one rounding
   * of y (doc/numerics.md). */
  const harness_tolerance f32 = {4e-6, 1e-5};
  return harness_lowp_tolerance(dt, dt == ADNN_DTYPE_F64 ? (harness_tolerance){1e-13, 1e-12} : f32,
                                f32, 1.0);
}

/* [-8, 8): slices whose largest element dominates, and others. */
static void softmax_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  harness_fill_uniform(&in[0], r, -8.0, 8.0);
}

/* ------------------------------------------------------------------------ */
/* Oracle                                                                    */
/* ------------------------------------------------------------------------ */

/* One slice s of length L (stride xs in x, ys in y):
 *   m = max s;  softmax: y_j = exp(s_j - m) / sum_i exp(s_i - m)
 *               log:     y_j = (s_j - m) - log(sum_i exp(s_i - m))
 * with doc/ops.md's rules for special values: NaN or +inf anywhere gives NaN
 * everywhere, and so does a slice of only -inf. */
static void slice(const double *x, int64_t xs, double *y, int64_t ys, int64_t L, int log) {
  long double m = -INFINITY;
  int poisoned = 0;
  for (int64_t j = 0; j < L; j++) {
    const long double v = x[j * xs];
    if (isnan(v) || v == INFINITY) poisoned = 1;
    if (v > m) m = v;
  }
  if (poisoned || m == -INFINITY) {
    for (int64_t j = 0; j < L; j++) y[j * ys] = NAN;
    return;
  }
  harness_sum sum;
  harness_sum_init(&sum);
  for (int64_t j = 0; j < L; j++) harness_sum_add(&sum, expl(x[j * xs] - m));
  const long double total = harness_sum_value(&sum);
  for (int64_t j = 0; j < L; j++) {
    const long double shifted = x[j * xs] - m;
    y[j * ys] = (double)(log ? shifted - logl(total) : expl(shifted) / total);
  }
}

static int softmax_oracle(const harness_desc *hd, const double *const *in, double *y, char *why,
                          size_t why_len) {
  const adnn_softmax_desc *d = &hd->softmax;
  const int rank = d->x.rank;
  const int axis = d->axis < 0 ? d->axis + rank : d->axis; /* negative counts from the end */
  int same = d->y.rank == rank;
  for (int i = 0; same && i < rank; i++) same = d->x.dims[i] == d->y.dims[i];
  if (axis < 0 || axis >= rank || !same) {
    snprintf(why, why_len, "softmax: axis %d out of range for rank %d, or x and y dims differ",
             (int)d->axis, rank);
    return -1;
  }
  /* Every slice starts at an element of x (and y) whose index along `axis`
   * is 0: walk those as tensors with that dim reduced to 1. */
  adnn_tensor_desc xs = d->x, ys = d->y;
  xs.dims[axis] = ys.dims[axis] = 1;
  harness_index ix, iy;
  for (harness_index_first(&ix, &xs), harness_index_first(&iy, &ys); ix.valid;
       harness_index_next(&ix, &xs), harness_index_next(&iy, &ys))
    slice(in[0] + ix.offset, d->x.strides[axis], y + iy.offset, d->y.strides[axis],
          d->x.dims[axis], d->log);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

static void softmax_case(harness_suite *suite, int rank, const int64_t *dims, int axis, int log,
                         enum harness_layout layout, adnn_dtype dt, int inplace, double scale,
                         int specials) {
  harness_case c;
  char shape[64] = "[";
  for (int i = 0; i < rank; i++)
    snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", i ? "," : "",
             (long long)dims[i]);
  strncat(shape, "]", sizeof shape - strlen(shape) - 1);
  harness_case_init(&c, harness_op_find("softmax"), dt, "%s %s axis %d x%g%s%s%s",
                    log ? "log_softmax" : "softmax", shape, axis, scale,
                    layout == HARNESS_PADDED ? " padded" : "", inplace ? " in-place" : "",
                    specials ? " nan/inf" : "");
  adnn_softmax_desc *d = &c.desc.softmax;
  adnn_softmax_desc_init(d);
  d->axis = axis;
  d->log = log;
  d->x = harness_tensor_desc(dt, rank, dims, layout);
  d->y = inplace ? d->x : harness_tensor_desc(dt, rank, dims, HARNESS_PACKED);
  if (harness_case_alloc(&c) != 0) return;
  c.inplace = inplace ? 0 : -1;
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  harness_fill_uniform(&c.in[0], &r, -scale, scale);
  if (specials) {
    /* rank 2; slices along `axis`: slice 0 has a NaN, slice 1 a +inf, slice 2
     * two -inf, slice 3 only -inf, slice 4 a -inf and a large value. */
    const int ax = axis < 0 ? axis + rank : axis;
    const int64_t L = dims[ax], other = dims[1 - ax];
#define AT(slice, j) (ax == 1 ? (slice) * L + (j) : (j) * other + (slice))
    harness_set_element(&c.in[0], AT(0, 1), NAN);
    harness_set_element(&c.in[0], AT(1, 2), INFINITY);
    harness_set_element(&c.in[0], AT(2, 0), -INFINITY);
    harness_set_element(&c.in[0], AT(2, 3), -INFINITY);
    for (int64_t j = 0; j < L; j++) harness_set_element(&c.in[0], AT(3, j), -INFINITY);
    harness_set_element(&c.in[0], AT(4, 1), -INFINITY);
    harness_set_element(&c.in[0], AT(4, 2), 80.0);
#undef AT
  }
  harness_submit(suite, &c);
}

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64

static void softmax_cases(harness_suite *s) {
  const int64_t a[2] = {4, 10}, b[3] = {6, 5, 7}, nchw[4] = {2, 3, 4, 5}, wide[2] = {3, 1000},
                one[1] = {1}, sp[2] = {5, 6}, spt[2] = {6, 5}, pd[3] = {4, 9, 3},
                big[2] = {64, 4099}, rows[2] = {37, 129}, tall[3] = {3, 50, 7},
                cols[3] = {2, 16, 9000};
  for (int log = 0; log <= 1; log++) {
    softmax_case(s, 2, a, -1, log, HARNESS_PACKED, F32, 0, 3.0, 0);
    softmax_case(s, 3, b, 0, log, HARNESS_PACKED, F32, 0, 3.0, 0);
    softmax_case(s, 3, b, 1, log, HARNESS_PACKED, F32, 0, 3.0, 0);
    softmax_case(s, 3, b, 2, log, HARNESS_PACKED, F32, 0, 3.0, 0);
    softmax_case(s, 3, b, -2, log, HARNESS_PACKED, F32, 0, 3.0, 0);
    softmax_case(s, 4, nchw, 1, log, HARNESS_PADDED, F32, 0, 2.0, 0);
    softmax_case(s, 2, wide, 1, log, HARNESS_PACKED, F32, 0, 10.0, 0);
    softmax_case(s, 2, wide, 0, log, HARNESS_PACKED, F32, 0, 100.0, 0);
    softmax_case(s, 1, one, 0, log, HARNESS_PACKED, F32, 0, 1.0, 0);
    softmax_case(s, 2, sp, 1, log, HARNESS_PACKED, F32, 0, 3.0, 1);
    softmax_case(s, 2, spt, 0, log, HARNESS_PACKED, F32, 0, 3.0, 1);
    softmax_case(s, 2, a, -1, log, HARNESS_PACKED, F32, 1, 5.0, 0);
    softmax_case(s, 3, pd, 1, log, HARNESS_PADDED, F32, 1, 3.0, 0);
    softmax_case(s, 2, big, -1, log, HARNESS_PACKED, F32, 0, 5.0, 0);
    /* From the former CUDA-only test: special values in many rows, in
     * place too; a long strided axis; many short strided slices. */
    softmax_case(s, 2, rows, -1, log, HARNESS_PACKED, F32, 0, 20.0, 1);
    softmax_case(s, 2, rows, -1, log, HARNESS_PACKED, F32, 1, 20.0, 1);
    softmax_case(s, 3, tall, 1 - log, log, HARNESS_PACKED, F32, 0, 20.0, 0);
    softmax_case(s, 3, cols, 1, log, HARNESS_PACKED, F32, 0, 20.0, 0);
    /* F64: the CPU plugin's reference kernels against the oracle. */
    softmax_case(s, 3, b, 1, log, HARNESS_PACKED, F64, 0, 3.0, 0);
    softmax_case(s, 2, sp, 1, log, HARNESS_PACKED, F64, 0, 3.0, 1);
    softmax_case(s, 2, rows, -1, log, HARNESS_PACKED, F64, 1, 20.0, 1);
    softmax_case(s, 4, nchw, 1, log, HARNESS_PADDED, F64, 0, 2.0, 0);
    softmax_case(s, 2, wide, 0, log, HARNESS_PACKED, F64, 0, 100.0, 0);
    /* F16 and BF16: F32 exponentials and sums, one rounding of y. */
    static const adnn_dtype lowp[2] = {ADNN_DTYPE_F16, ADNN_DTYPE_BF16};
    for (int t = 0; t < 2; t++) {
      softmax_case(s, 2, a, -1, log, HARNESS_PACKED, lowp[t], 0, 3.0, 0);
      softmax_case(s, 3, b, 1, log, HARNESS_PACKED, lowp[t], 0, 3.0, 0);
      softmax_case(s, 4, nchw, 1, log, HARNESS_PADDED, lowp[t], 0, 2.0, 0);
      softmax_case(s, 2, sp, 1, log, HARNESS_PACKED, lowp[t], 0, 3.0, 1);
      softmax_case(s, 2, rows, -1, log, HARNESS_PACKED, lowp[t], 1, 20.0, 1);
      softmax_case(s, 2, big, -1, log, HARNESS_PACKED, lowp[t], 0, 5.0, 0);
      softmax_case(s, 2, wide, 0, log, HARNESS_PACKED, lowp[t], 0, 10.0, 0);
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracle                                                  */
/* ------------------------------------------------------------------------ */

static int run_oracle(const adnn_softmax_desc *d, const double *x, double *y) {
  harness_desc hd;
  hd.softmax = *d;
  const double *in[1] = {x};
  char why[256];
  return softmax_oracle(&hd, in, y, why, sizeof why) == 0;
}

static void softmax_oracle_selftests(const harness_report *rep) {
  const adnn_dtype dt = ADNN_DTYPE_F64;
  /* softmax([0, ln 3]) = [1, 3] / 4 by hand; log_softmax = [-ln 4, ln 3 - ln 4]. */
  {
    const double x[2] = {0.0, log(3.0)};
    double y[2], yl[2];
    adnn_softmax_desc d;
    adnn_softmax_desc_init(&d);
    d.x = d.y = harness_vector_desc(dt, 2);
    int good = run_oracle(&d, x, y);
    d.log = 1;
    good &= run_oracle(&d, x, yl);
    harness_ok(rep, good && harness_close(y[0], 0.25, 1e-15) && harness_close(y[1], 0.75, 1e-15) &&
                        harness_close(yl[0], -log(4.0), 1e-15) &&
                        harness_close(yl[1], log(3.0) - log(4.0), 1e-15),
               "oracle: softmax and log_softmax of [0, ln 3] by hand (got %g %g, %g %g)", y[0],
               y[1], yl[0], yl[1]);
  }
  /* Along the middle axis of [3, 5, 4]: each slice sums to 1, so does
   * exp(log_softmax), and axis -2 is axis 1. */
  {
    enum { A = 3, B = 5, C = 4 };
    double x[A * B * C], y[A * B * C], yl[A * B * C], yn[A * B * C];
    tap_rng r = tap_rng_seed(5);
    for (int i = 0; i < A * B * C; i++) x[i] = tap_rng_uniform(&r, -20, 20);
    const int64_t dims[3] = {A, B, C};
    adnn_softmax_desc d;
    adnn_softmax_desc_init(&d);
    d.x = d.y = harness_tensor_desc(dt, 3, dims, HARNESS_PACKED);
    d.axis = 1;
    int ran = run_oracle(&d, x, y);
    d.log = 1;
    ran &= run_oracle(&d, x, yl);
    d.axis = -2;
    ran &= run_oracle(&d, x, yn);
    int good = ran, good_log = ran, good_neg = ran;
    for (int a = 0; a < A; a++)
      for (int c = 0; c < C; c++) {
        double s = 0, sl = 0;
        for (int b = 0; b < B; b++) {
          s += y[(a * B + b) * C + c];
          sl += exp(yl[(a * B + b) * C + c]);
        }
        good &= harness_close(s, 1.0, 1e-14);
        good_log &= harness_close(sl, 1.0, 1e-14);
      }
    for (int i = 0; i < A * B * C; i++) good_neg &= yn[i] == yl[i];
    harness_ok(rep, good, "oracle: softmax sums to 1 along the middle axis");
    harness_ok(rep, good_log, "oracle: exp(log_softmax) sums to 1");
    harness_ok(rep, good_neg, "oracle: axis -2 is axis 1");
  }
  /* Special values: three equal maxima of 1000 and a -inf give 1/3 and 0. */
  {
    double s4[4] = {1000, 1000, -INFINITY, 1000}, o4[4];
    adnn_softmax_desc d;
    adnn_softmax_desc_init(&d);
    d.x = d.y = harness_vector_desc(dt, 4);
    int good = run_oracle(&d, s4, o4);
    harness_ok(rep, good && harness_close(o4[0], 1.0 / 3, 1e-15) && o4[2] == 0.0,
               "oracle: softmax is stable for 1000 and -inf gives 0");
    double allinf[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    good = run_oracle(&d, allinf, o4);
    harness_ok(rep, good && isnan(o4[0]) && isnan(o4[3]), "oracle: an all -inf slice gives NaN");
    double pinf[4] = {1, INFINITY, 2, 3};
    good = run_oracle(&d, pinf, o4);
    harness_ok(rep, good && isnan(o4[0]) && isnan(o4[1]), "oracle: a slice with +inf gives NaN");
  }
}

static void softmax_bad_descriptors(const harness_report *rep, adnn_context *ctx,
                                    const char *bn) {
  adnn_plan *plan = NULL;
  adnn_softmax_desc sd;
  adnn_softmax_desc_init(&sd);
  const int64_t dims[2] = {3, 4};
  sd.x = sd.y = harness_tensor_desc(F32, 2, dims, HARNESS_PACKED);
  sd.axis = 2;
  harness_is_status(rep, adnn_plan_create_softmax(ctx, &sd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s softmax: axis out of range is BAD_PARAM", bn);
}

const harness_op_traits harness_softmax_traits = {
    .inputs = softmax_inputs,
    .output = softmax_output,
    .set_dtype = softmax_set_dtype,
    .oracle = softmax_oracle,
    .tolerance = softmax_tolerance,
    .fill = softmax_fill,
    .variant_count = 1,
    .cases = softmax_cases,
    .oracle_selftests = softmax_oracle_selftests,
    .bad_descriptors = softmax_bad_descriptors,
};
