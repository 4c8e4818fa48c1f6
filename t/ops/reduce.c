/* reduce (sum, mean, max, min over a set of axes) in the conformance harness:
 * traits, oracle (doc/ops.md, "reduce"), cases and the oracle's self-tests. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int reduce_inputs(const harness_desc *hd, harness_tensor *in) {
  in[0] = (harness_tensor){"x", hd->reduce.x};
  return 1;
}

static adnn_tensor_desc reduce_output(const harness_desc *hd) { return hd->reduce.y; }

static void reduce_set_dtype(harness_desc *hd, adnn_dtype dt) {
  hd->reduce.x.dtype = hd->reduce.y.dtype = dt;
}

/* Sums accumulate in double and round once (doc/ops.md), so an F32 result
 * is within a rounding or two of the exact one; the bound leaves room for
 * cancellation in the scaled max-abs measure. Max and min select an element:
 * exact. */
static harness_tolerance reduce_tolerance(const harness_desc *hd, adnn_dtype dt) {
  if (hd->reduce.kind == ADNN_REDUCE_MAX || hd->reduce.kind == ADNN_REDUCE_MIN)
    return (harness_tolerance){0.0, 0.0};
  /* F16/BF16: the F32 accumulation bound plus one rounding of y
   * (doc/numerics.md); max and min stay exact (above). */
  const harness_tolerance f32 = {1e-6, 1e-6};
  return harness_lowp_tolerance(dt, dt == ADNN_DTYPE_F64 ? (harness_tolerance){1e-13, 1e-13} : f32,
                                f32, 1.0);
}

static void reduce_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  harness_fill_mixed(&in[0], r);
}

/* ------------------------------------------------------------------------ */
/* Oracle                                                                    */
/* ------------------------------------------------------------------------ */

/* y[o] = the reduction of every element of x whose kept indices are o's:
 *   sum   the sum;        mean  the sum / the number of reduced elements;
 *   max   the largest;    min   the smallest; NaN if any element is NaN.
 * The oracle derives y's shape from x, axes and keep_dims by itself and
 * refuses a descriptor whose y disagrees. */
static int reduce_oracle(const harness_desc *hd, const double *const *in, double *y, char *why,
                         size_t why_len) {
  const adnn_reduce_desc *d = &hd->reduce;
  const int rank = d->x.rank;
  if (rank < 1 || d->axes == 0 || (rank < 32 && (d->axes >> rank) != 0)) {
    snprintf(why, why_len, "reduce: axes 0x%x do not name dims of a rank-%d x", d->axes, rank);
    return -1;
  }
  /* The walk over outputs: x's dims with the reduced ones set to 1, and the
   * matching y strides (0 along reduced dims). */
  adnn_tensor_desc outer = d->x, yk = d->x, inner = d->x;
  int j = 0, shape_ok = 1;
  for (int i = 0; i < rank; i++) {
    const int reduced = (d->axes >> i) & 1u;
    if (reduced) {
      outer.dims[i] = yk.dims[i] = 1;
      yk.strides[i] = 0;
      if (d->keep_dims) {
        shape_ok &= j < d->y.rank && d->y.dims[j] == 1;
        j++;
      }
    } else {
      inner.dims[i] = 1;
      shape_ok &= j < d->y.rank && d->y.dims[j] == d->x.dims[i];
      yk.strides[i] = j < d->y.rank ? d->y.strides[j] : 0;
      j++;
    }
  }
  if (!shape_ok || j != d->y.rank) {
    snprintf(why, why_len, "reduce: y does not have the shape x, axes and keep_dims give");
    return -1;
  }
  harness_index io, iy;
  for (harness_index_first(&io, &outer), harness_index_first(&iy, &yk); io.valid;
       harness_index_next(&io, &outer), harness_index_next(&iy, &yk)) {
    harness_sum sum;
    harness_sum_init(&sum);
    long double best = 0.0L;
    int64_t n = 0, nan = 0;
    harness_index ir;
    for (harness_index_first(&ir, &inner); ir.valid; harness_index_next(&ir, &inner)) {
      const long double v = in[0][io.offset + ir.offset];
      if (isnan(v)) nan = 1;
      harness_sum_add(&sum, v);
      if (n == 0 || (d->kind == ADNN_REDUCE_MAX && v > best) ||
          (d->kind == ADNN_REDUCE_MIN && v < best))
        best = v;
      n++;
    }
    long double r;
    switch (d->kind) {
      case ADNN_REDUCE_SUM: r = harness_sum_value(&sum); break;
      case ADNN_REDUCE_MEAN: r = harness_sum_value(&sum) / (long double)n; break;
      case ADNN_REDUCE_MAX:
      case ADNN_REDUCE_MIN: r = nan ? (long double)NAN : best; break;
      default:
        snprintf(why, why_len, "reduce: kind %d is not an adnn_reduce_kind", (int)d->kind);
        return -1;
    }
    y[iy.offset] = (double)r;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

enum { SPECIALS_NONE, SPECIALS_NAN, SPECIALS_INF };

/* y's dims and a layout for them, from x's dims, axes and keep_dims. */
static adnn_tensor_desc y_of(adnn_dtype dt, int rank, const int64_t *dims, uint32_t axes,
                             int keep, enum harness_layout layout) {
  int64_t yd[ADNN_MAX_RANK];
  int r = 0;
  for (int i = 0; i < rank; i++) {
    if (!((axes >> i) & 1u)) yd[r++] = dims[i];
    else if (keep) yd[r++] = 1;
  }
  return harness_tensor_desc(dt, r, yd, layout);
}

static void reduce_case(harness_suite *suite, adnn_reduce_kind kind, int rank,
                        const int64_t *dims, uint32_t axes, int keep,
                        enum harness_layout x_layout, enum harness_layout y_layout, adnn_dtype dt,
                        int specials) {
  harness_case c;
  char shape[96] = "[";
  for (int i = 0; i < rank; i++)
    snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", i ? "," : "",
             (long long)dims[i]);
  strncat(shape, "]", sizeof shape - strlen(shape) - 1);
  char ax[40] = "";
  for (int i = 0; i < rank; i++)
    if ((axes >> i) & 1u)
      snprintf(ax + strlen(ax), sizeof ax - strlen(ax), "%s%d", ax[0] ? "," : "", i);
  harness_case_init(&c, harness_op_find("reduce"), dt, "%s %s axes {%s}%s%s%s%s",
                    adnn_reduce_kind_name(kind), shape, ax, keep ? " keep" : "",
                    x_layout == HARNESS_PADDED ? " x padded" : "",
                    y_layout == HARNESS_PADDED ? " y padded" : "",
                    specials == SPECIALS_NAN ? " nan" : specials == SPECIALS_INF ? " inf" : "");
  adnn_reduce_desc *d = &c.desc.reduce;
  adnn_reduce_desc_init(d);
  d->kind = kind;
  d->axes = axes;
  d->keep_dims = keep;
  d->x = harness_tensor_desc(dt, rank, dims, x_layout);
  d->y = y_of(dt, rank, dims, axes, keep, y_layout);
  if (harness_case_alloc(&c) != 0) return;
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  harness_fill_mixed(&c.in[0], &r);
  const int64_t n = harness_element_count(&d->x);
  if (specials == SPECIALS_NAN) {
    /* A NaN in a few places: every output that reads one must be NaN. */
    harness_set_element(&c.in[0], 0, NAN);
    harness_set_element(&c.in[0], n / 2, NAN);
  } else if (specials == SPECIALS_INF) {
    /* +inf and -inf: a slice that holds both sums to NaN, one that holds
     * only +inf to +inf; max and min pass them through. */
    harness_set_element(&c.in[0], 0, INFINITY);
    harness_set_element(&c.in[0], 1, -INFINITY);
    harness_set_element(&c.in[0], n - 1, INFINITY);
  }
  harness_submit(suite, &c);
}

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64
#define P HARNESS_PACKED
#define PAD HARNESS_PADDED
#define AX(i) (1u << (i))

static void reduce_cases(harness_suite *s) {
  static const adnn_reduce_kind kinds[4] = {ADNN_REDUCE_SUM, ADNN_REDUCE_MEAN, ADNN_REDUCE_MAX,
                                            ADNN_REDUCE_MIN};
  const int64_t rows[2] = {7, 300}, b[3] = {6, 5, 7}, nchw[4] = {2, 16, 7, 9},
                one[1] = {1}, v[1] = {1000}, bert[3] = {4, 33, 768}, c4[4] = {3, 4, 5, 6},
                unit[3] = {5, 1, 4};
  for (int k = 0; k < 4; k++) {
    const adnn_reduce_kind kind = kinds[k];
    /* Rows (the innermost dim reduced), columns (the outermost), the middle. */
    reduce_case(s, kind, 2, rows, AX(1), 0, P, P, F32, SPECIALS_NONE);
    reduce_case(s, kind, 2, rows, AX(0), 1, P, P, F32, SPECIALS_NONE);
    reduce_case(s, kind, 3, b, AX(1), 0, P, P, F32, SPECIALS_NONE);
    reduce_case(s, kind, 3, b, AX(1), 1, PAD, PAD, F32, SPECIALS_NONE);
    /* Two axes that are not neighbours; every axis (rank 0 and kept). */
    reduce_case(s, kind, 3, b, AX(0) | AX(2), 0, P, P, F32, SPECIALS_NONE);
    reduce_case(s, kind, 3, b, AX(0) | AX(1) | AX(2), 0, P, P, F32, SPECIALS_NONE);
    reduce_case(s, kind, 3, b, AX(0) | AX(1) | AX(2), 1, PAD, P, F32, SPECIALS_NONE);
    /* NCHW: global pooling (H, W), a bias gradient (N, H, W), channels. */
    reduce_case(s, kind, 4, nchw, AX(2) | AX(3), 1, P, P, F32, SPECIALS_NONE);
    reduce_case(s, kind, 4, nchw, AX(0) | AX(2) | AX(3), 0, P, P, F32, SPECIALS_NONE);
    reduce_case(s, kind, 4, nchw, AX(1), 0, PAD, PAD, F32, SPECIALS_NONE);
    reduce_case(s, kind, 4, c4, AX(0) | AX(3), 1, P, PAD, F32, SPECIALS_NONE);
    /* A layer's last dim (BERT hidden size); a single element; a vector;
     * a dim of size 1 reduced. */
    reduce_case(s, kind, 3, bert, AX(2), 1, P, P, F32, SPECIALS_NONE);
    reduce_case(s, kind, 1, one, AX(0), 0, P, P, F32, SPECIALS_NONE);
    reduce_case(s, kind, 1, v, AX(0), 1, P, P, F32, SPECIALS_NONE);
    reduce_case(s, kind, 3, unit, AX(1), 0, P, P, F32, SPECIALS_NONE);
    /* Special values. */
    reduce_case(s, kind, 2, rows, AX(1), 0, P, P, F32, SPECIALS_NAN);
    reduce_case(s, kind, 2, rows, AX(0), 0, P, P, F32, SPECIALS_INF);
    /* F64: the CPU plugin's reference path and the F64 kernels. */
    reduce_case(s, kind, 2, rows, AX(1), 0, P, P, F64, SPECIALS_NONE);
    reduce_case(s, kind, 4, nchw, AX(0) | AX(2) | AX(3), 1, PAD, P, F64, SPECIALS_NONE);
    reduce_case(s, kind, 3, b, AX(0) | AX(1) | AX(2), 0, P, P, F64, SPECIALS_NAN);
    /* F16 and BF16: F32 accumulation, one rounding of y. */
    static const adnn_dtype lowp[2] = {ADNN_DTYPE_F16, ADNN_DTYPE_BF16};
    for (int t = 0; t < 2; t++) {
      reduce_case(s, kind, 2, rows, AX(1), 0, P, P, lowp[t], SPECIALS_NONE);
      reduce_case(s, kind, 2, rows, AX(0), 1, P, P, lowp[t], SPECIALS_NONE);
      reduce_case(s, kind, 4, nchw, AX(0) | AX(2) | AX(3), 1, PAD, P, lowp[t], SPECIALS_NONE);
      reduce_case(s, kind, 3, bert, AX(2), 1, P, P, lowp[t], SPECIALS_NONE);
      reduce_case(s, kind, 3, b, AX(0) | AX(1) | AX(2), 0, P, P, lowp[t], SPECIALS_NONE);
      reduce_case(s, kind, 2, rows, AX(1), 0, P, P, lowp[t], SPECIALS_NAN);
      reduce_case(s, kind, 2, rows, AX(0), 0, P, P, lowp[t], SPECIALS_INF);
    }
  }
  /* Long sums, where the accumulation order and precision show (and where
   * the CPU cuts each output's elements into parts). */
  const int64_t long_row[2] = {3, 100003}, long_col[2] = {100003, 3};
  reduce_case(s, ADNN_REDUCE_SUM, 2, long_row, AX(1), 0, P, P, F32, SPECIALS_NONE);
  reduce_case(s, ADNN_REDUCE_MEAN, 2, long_col, AX(0), 0, P, P, F32, SPECIALS_NONE);
  reduce_case(s, ADNN_REDUCE_SUM, 2, long_col, AX(0) | AX(1), 0, P, P, F64, SPECIALS_NONE);
  /* Long extremes (the CPU cuts them into parts reduced in parallel). */
  reduce_case(s, ADNN_REDUCE_MAX, 2, long_col, AX(0), 1, P, P, F32, SPECIALS_NONE);
  reduce_case(s, ADNN_REDUCE_MIN, 2, long_row, AX(1), 0, P, P, F32, SPECIALS_NAN);
  reduce_case(s, ADNN_REDUCE_SUM, 2, long_row, AX(0) | AX(1), 1, P, P, F32, SPECIALS_INF);
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracle                                                  */
/* ------------------------------------------------------------------------ */

static int run_oracle(const adnn_reduce_desc *d, const double *x, double *y) {
  harness_desc hd;
  hd.reduce = *d;
  const double *in[1] = {x};
  char why[256];
  return reduce_oracle(&hd, in, y, why, sizeof why) == 0;
}

static void reduce_oracle_selftests(const harness_report *rep) {
  const adnn_dtype dt = ADNN_DTYPE_F64;
  /* x = [[1, 2, 3], [4, 5, 6]] by hand: sums over dim 1 are [6, 15], means
   * over dim 0 [2.5, 3.5, 4.5], the max of everything 6, the min 1. */
  const double x[6] = {1, 2, 3, 4, 5, 6};
  const int64_t dims[2] = {2, 3}, two[1] = {2}, three[1] = {3};
  adnn_reduce_desc d;
  adnn_reduce_desc_init(&d);
  d.x = harness_tensor_desc(dt, 2, dims, HARNESS_PACKED);
  d.axes = AX(1);
  d.y = harness_tensor_desc(dt, 1, two, HARNESS_PACKED);
  double y[3] = {0, 0, 0};
  int good = run_oracle(&d, x, y);
  harness_ok(rep, good && y[0] == 6 && y[1] == 15, "oracle: row sums of [[1,2,3],[4,5,6]] are "
             "[6, 15] (got %g %g)", y[0], y[1]);
  d.kind = ADNN_REDUCE_MEAN;
  d.axes = AX(0);
  d.y = harness_tensor_desc(dt, 1, three, HARNESS_PACKED);
  good = run_oracle(&d, x, y);
  harness_ok(rep, good && y[0] == 2.5 && y[1] == 3.5 && y[2] == 4.5,
             "oracle: column means are [2.5, 3.5, 4.5] (got %g %g %g)", y[0], y[1], y[2]);
  d.kind = ADNN_REDUCE_MAX;
  d.axes = AX(0) | AX(1);
  d.y = harness_tensor_desc(dt, 0, NULL, HARNESS_PACKED);
  good = run_oracle(&d, x, y);
  harness_ok(rep, good && y[0] == 6, "oracle: the max of everything is 6 (got %g)", y[0]);
  d.kind = ADNN_REDUCE_MIN;
  d.keep_dims = 1;
  const int64_t ones[2] = {1, 1};
  d.y = harness_tensor_desc(dt, 2, ones, HARNESS_PACKED);
  good = run_oracle(&d, x, y);
  harness_ok(rep, good && y[0] == 1, "oracle: the min with kept dims is 1 (got %g)", y[0]);
  /* NaN anywhere makes max and min NaN; inf - inf in a sum is NaN. */
  const double xn[3] = {1, NAN, 3}, xi[3] = {INFINITY, 1, -INFINITY};
  adnn_reduce_desc_init(&d);
  d.x = harness_vector_desc(dt, 3);
  d.axes = AX(0);
  d.y = harness_tensor_desc(dt, 0, NULL, HARNESS_PACKED);
  d.kind = ADNN_REDUCE_MAX;
  good = run_oracle(&d, xn, y);
  harness_ok(rep, good && isnan(y[0]), "oracle: max with a NaN is NaN");
  d.kind = ADNN_REDUCE_MIN;
  good = run_oracle(&d, xn, y);
  harness_ok(rep, good && isnan(y[0]), "oracle: min with a NaN is NaN");
  d.kind = ADNN_REDUCE_SUM;
  good = run_oracle(&d, xi, y);
  harness_ok(rep, good && isnan(y[0]), "oracle: inf + 1 - inf is NaN");
  d.kind = ADNN_REDUCE_MAX;
  good = run_oracle(&d, xi, y);
  harness_ok(rep, good && y[0] == INFINITY, "oracle: max passes +inf through");
  /* A y of the wrong shape is refused. */
  d.y = harness_vector_desc(dt, 3);
  harness_ok(rep, !run_oracle(&d, xn, y), "oracle: refuses a y that is not the reduced shape");
}

static void reduce_bad_descriptors(const harness_report *rep, adnn_context *ctx,
                                   const char *bn) {
  adnn_plan *plan = NULL;
  adnn_reduce_desc d;
  adnn_reduce_desc_init(&d);
  const int64_t dims[2] = {3, 4}, three[1] = {3}, four[1] = {4};
  d.x = harness_tensor_desc(F32, 2, dims, HARNESS_PACKED);
  d.y = harness_tensor_desc(F32, 1, three, HARNESS_PACKED);
  d.axes = 0;
  harness_is_status(rep, adnn_plan_create_reduce(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s reduce: no axis is BAD_PARAM", bn);
  /* Mixed dtypes (an F16 x, a BF16 y) on a valid reduction: refused by the
   * core. */
  d.axes = AX(1);
  d.x = harness_tensor_desc(ADNN_DTYPE_F16, 2, dims, HARNESS_PACKED);
  d.y = harness_tensor_desc(ADNN_DTYPE_BF16, 1, three, HARNESS_PACKED);
  harness_is_status(rep, adnn_plan_create_reduce(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s reduce: an f16 x with a bf16 y is BAD_PARAM", bn);
  harness_contains(rep, adnn_last_error(), "y has dtype bf16 but x has f16",
                   "%s reduce: the message names both dtypes", bn);
  d.x = harness_tensor_desc(F32, 2, dims, HARNESS_PACKED);
  d.y = harness_tensor_desc(F32, 1, three, HARNESS_PACKED);
  d.axes = 0;
  d.axes = AX(2);
  harness_is_status(rep, adnn_plan_create_reduce(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s reduce: an axis beyond the rank is BAD_PARAM", bn);
  d.axes = AX(0);
  harness_is_status(rep, adnn_plan_create_reduce(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s reduce: y [3] for x [3, 4] reduced over dim 0 is BAD_PARAM", bn);
  harness_contains(rep, adnn_last_error(), "[4]", "%s reduce: the message names the shape", bn);
  d.y = harness_tensor_desc(F32, 1, four, HARNESS_PACKED);
  d.kind = (adnn_reduce_kind)9;
  harness_is_status(rep, adnn_plan_create_reduce(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s reduce: an unknown kind is BAD_PARAM", bn);
  d.kind = ADNN_REDUCE_SUM;
  d.keep_dims = 1;
  harness_is_status(rep, adnn_plan_create_reduce(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s reduce: keep_dims with a y of the reduced rank is BAD_PARAM", bn);
}

const harness_op_traits harness_reduce_traits = {
    .inputs = reduce_inputs,
    .output = reduce_output,
    .set_dtype = reduce_set_dtype,
    .oracle = reduce_oracle,
    .tolerance = reduce_tolerance,
    .fill = reduce_fill,
    .variant_count = 1,
    .cases = reduce_cases,
    .oracle_selftests = reduce_oracle_selftests,
    .bad_descriptors = reduce_bad_descriptors,
};
