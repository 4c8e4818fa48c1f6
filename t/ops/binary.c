/* Elementwise binary ops with broadcasting in the conformance harness:
 * traits, oracle (doc/ops.md, "Elementwise binary ops"), cases and the
 * oracle's self-tests. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int binary_inputs(const harness_desc *hd, harness_tensor *in) {
  in[0] = (harness_tensor){"a", hd->binary.a};
  in[1] = (harness_tensor){"b", hd->binary.b};
  return 2;
}

static adnn_tensor_desc binary_output(const harness_desc *hd) { return hd->binary.y; }

static void binary_set_dtype(harness_desc *hd, adnn_dtype dt) {
  hd->binary.a.dtype = hd->binary.b.dtype = hd->binary.y.dtype = dt;
}

static harness_tolerance binary_tolerance(const harness_desc *hd, adnn_dtype dt) {
  /* F16/BF16: the F32 bound plus one rounding of y (doc/numerics.md). */
  const harness_tolerance f32 = {1e-6, 1e-6};
  return harness_lowp_tolerance(dt, dt == ADNN_DTYPE_F64 ? (harness_tolerance){4e-15, 4e-15} : f32,
                                f32, 1.0);
}

/* Values in [-1, 1); a divisor in +-[0.5, 1.5), away from 0. */
static void binary_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  harness_fill_uniform(&in[0], r, -1.0, 1.0);
  harness_fill_uniform(&in[1], r, -1.0, 1.0);
  if (hd->binary.op != ADNN_BINARY_DIV) return;
  for (int64_t i = 0; i < in[1].span; i++)
    if (in[1].member[i])
      in[1].v[i] = harness_round(in[1].desc.dtype, in[1].v[i] + (in[1].v[i] < 0 ? -0.5 : 0.5));
}

/* ------------------------------------------------------------------------ */
/* Oracle                                                                    */
/* ------------------------------------------------------------------------ */

/* The offset of the element of operand t that y's element idx reads: dims
 * aligned from the right, a missing or size-1 dim repeated (NumPy). */
static int64_t broadcast_offset(const adnn_tensor_desc *t, int y_rank, const int64_t *idx) {
  int64_t off = 0;
  for (int j = 0; j < t->rank; j++)
    if (t->dims[j] != 1) off += idx[y_rank - t->rank + j] * t->strides[j];
  return off;
}

/* Whether t broadcasts to y exactly: each dim equal to y's or 1, and y's dim
 * the larger of the two operands' (checked by the caller with both). */
static int broadcasts(const adnn_tensor_desc *t, const adnn_tensor_desc *y) {
  if (t->rank > y->rank) return 0;
  for (int j = 0; j < t->rank; j++) {
    const int64_t yd = y->dims[y->rank - t->rank + j];
    if (t->dims[j] != yd && t->dims[j] != 1) return 0;
  }
  return 1;
}

static long double apply(adnn_binary_op op, long double a, long double b) {
  switch (op) {
    case ADNN_BINARY_ADD: return a + b;
    case ADNN_BINARY_SUB: return a - b;
    case ADNN_BINARY_MUL: return a * b;
    case ADNN_BINARY_DIV: return a / b;
    case ADNN_BINARY_MAX: return isnan(a) || isnan(b) ? NAN : (a > b ? a : b);
    case ADNN_BINARY_MIN: return isnan(a) || isnan(b) ? NAN : (a < b ? a : b);
  }
  return NAN;
}

static int binary_oracle(const harness_desc *hd, const double *const *in, double *y, char *why,
                         size_t why_len) {
  const adnn_binary_desc *d = &hd->binary;
  const adnn_tensor_desc *a = &d->a, *b = &d->b, *yd = &d->y;
  int shape_ok = broadcasts(a, yd) && broadcasts(b, yd) &&
                 yd->rank == (a->rank > b->rank ? a->rank : b->rank);
  for (int i = 0; shape_ok && i < yd->rank; i++) {
    const int ia = i - (yd->rank - a->rank), ib = i - (yd->rank - b->rank);
    const int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    shape_ok = yd->dims[i] == (da > db ? da : db);
  }
  if (!shape_ok) {
    snprintf(why, why_len, "binary: y is not the broadcast shape of a and b");
    return -1;
  }
  harness_index iy;
  for (harness_index_first(&iy, yd); iy.valid; harness_index_next(&iy, yd)) {
    const long double va = (long double)d->alpha * in[0][broadcast_offset(a, yd->rank, iy.idx)];
    const long double vb = (long double)d->beta * in[1][broadcast_offset(b, yd->rank, iy.idx)];
    y[iy.offset] = (double)apply(d->op, va, vb);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct bin_operand {
  int rank;
  int64_t dims[ADNN_MAX_RANK];
  enum harness_layout layout;
  const int64_t *strides; /* explicit strides (overrides layout) */
} bin_operand;

static adnn_tensor_desc operand_desc(const bin_operand *o, adnn_dtype dt) {
  adnn_tensor_desc t = harness_tensor_desc(dt, o->rank, o->dims, o->layout);
  if (o->strides)
    for (int i = 0; i < o->rank; i++) t.strides[i] = o->strides[i];
  return t;
}

static void fmt_shape(char *buf, size_t size, const adnn_tensor_desc *t) {
  snprintf(buf, size, "[");
  for (int i = 0; i < t->rank; i++)
    snprintf(buf + strlen(buf), size - strlen(buf), "%s%lld", i ? "," : "", (long long)t->dims[i]);
  snprintf(buf + strlen(buf), size - strlen(buf), "]");
}

/* inplace: 0 none, 1 y is a, 2 y is b. */
static void bin_case(harness_suite *suite, adnn_binary_op op, bin_operand a, bin_operand b,
                     bin_operand y, double alpha, double beta, adnn_dtype dt, int inplace,
                     int specials, const char *tag) {
  harness_case c;
  const adnn_tensor_desc ad = operand_desc(&a, dt), bd = operand_desc(&b, dt),
                         yd = operand_desc(&y, dt);
  char sa[64], sb[64];
  fmt_shape(sa, sizeof sa, &ad);
  fmt_shape(sb, sizeof sb, &bd);
  harness_case_init(&c, harness_op_find("binary"), dt, "%s %s %s %s alpha %g beta %g%s%s",
                    adnn_binary_op_name(op), tag, sa, sb, alpha, beta,
                    inplace == 1 ? " y=a" : (inplace == 2 ? " y=b" : ""),
                    specials ? " nan/inf" : "");
  adnn_binary_desc *d = &c.desc.binary;
  adnn_binary_desc_init(d);
  d->op = op;
  d->alpha = alpha;
  d->beta = beta;
  d->a = ad;
  d->b = bd;
  d->y = inplace == 1 ? ad : (inplace == 2 ? bd : yd);
  if (harness_case_alloc(&c) != 0) return;
  c.inplace = inplace == 1 ? 0 : (inplace == 2 ? 1 : -1);
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  harness_fill_mixed(&c.in[0], &r);
  if (op == ADNN_BINARY_DIV) { /* denominators away from 0: +-[0.25, 4) */
    for (int64_t i = 0; i < c.in[1].span; i++)
      if (c.in[1].member[i]) {
        const double m = tap_rng_uniform(&r, 0.25, 4.0);
        c.in[1].v[i] = harness_round(dt, tap_rng_uniform(&r, 0, 1) < 0.5 ? -m : m);
      }
  } else {
    harness_fill_mixed(&c.in[1], &r);
  }
  if (specials) {
    const int64_t na = harness_element_count(&d->a), nb = harness_element_count(&d->b);
    for (int64_t i = 0; i < na; i += 7) harness_set_element(&c.in[0], i, NAN);
    for (int64_t i = 2; i < na; i += 9) harness_set_element(&c.in[0], i, INFINITY);
    for (int64_t i = 1; i < nb; i += 5) harness_set_element(&c.in[1], i, NAN);
    for (int64_t i = 3; i < nb; i += 8) harness_set_element(&c.in[1], i, -INFINITY);
  }
  harness_submit(suite, &c);
}

#define OPND(...)                                                                     \
  ((bin_operand){.rank = (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
                 .dims = {__VA_ARGS__}})
static const bin_operand scalar0 = {0, {0}, HARNESS_PACKED, NULL};

static bin_operand with_layout(bin_operand o, enum harness_layout layout) {
  o.layout = layout;
  return o;
}

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64

static void binary_cases(harness_suite *s) {
  static const int64_t bcast_strides[2] = {0, 1}; /* a [3,4] that repeats one row */
  for (int op = ADNN_BINARY_ADD; op <= ADNN_BINARY_MIN; op++) {
    const adnn_binary_op o = (adnn_binary_op)op;
    bin_case(s, o, OPND(3, 4, 5), OPND(3, 4, 5), OPND(3, 4, 5), 1, 1, F32, 0, 0, "equal");
    bin_case(s, o, OPND(3, 4), scalar0, OPND(3, 4), 1, 1, F32, 0, 0, "rank-0");
    bin_case(s, o, OPND(3, 4), OPND(1), OPND(3, 4), 1, 1, F32, 0, 0, "[1]");
    bin_case(s, o, OPND(3, 4), OPND(4), OPND(3, 4), 1, 1, F32, 0, 0, "row");
    bin_case(s, o, OPND(3, 4), OPND(3, 1), OPND(3, 4), 1, 1, F32, 0, 0, "column");
    bin_case(s, o, OPND(4), OPND(3, 4), OPND(3, 4), 1, 1, F32, 0, 0, "a row");
    bin_case(s, o, OPND(2, 5, 3, 4), OPND(1, 5, 1, 1), OPND(2, 5, 3, 4), 1, 1, F32, 0, 0,
             "bias-add");
    bin_case(s, o, OPND(3, 1), OPND(1, 4), OPND(3, 4), 1, 1, F32, 0, 0, "both");
    bin_case(s, o, OPND(5, 1, 6), OPND(4, 1), OPND(5, 4, 6), 1, 1, F32, 0, 0, "both 3d");
    bin_case(s, o, OPND(6, 7), OPND(6, 7), OPND(6, 7), 0.5, -2.0, F32, 0, 0, "scaled");
    bin_case(s, o, OPND(6, 7), OPND(7), OPND(6, 7), 1.5, 0.25, F32, 1, 0, "in-place");
    bin_case(s, o, OPND(1), OPND(6, 7), OPND(6, 7), 1, 1, F32, 2, 0, "in-place");
    bin_case(s, o, OPND(6, 7), OPND(6, 7), OPND(6, 7), 1, 1, F32, 0, 1, "equal");
    bin_case(s, o, OPND(6, 7), OPND(7), OPND(6, 7), 1, 1, F32, 0, 1, "row");
  }
  bin_operand a = OPND(3, 4);
  a.strides = bcast_strides;
  bin_case(s, ADNN_BINARY_SUB, a, OPND(3, 4), OPND(3, 4), 1, 1, F32, 0, 0, "stride-0 a");
  bin_case(s, ADNN_BINARY_ADD, with_layout(OPND(2, 6, 5, 4), HARNESS_NHWC), OPND(1, 6, 1, 1),
           with_layout(OPND(2, 6, 5, 4), HARNESS_NHWC), 1, 1, F32, 0, 0, "bias-add nhwc");
  bin_case(s, ADNN_BINARY_ADD, with_layout(OPND(2, 6, 5, 4), HARNESS_NHWC), OPND(6, 1, 1),
           with_layout(OPND(2, 6, 5, 4), HARNESS_NHWC), 1, 1, F32, 1, 0, "bias-add nhwc");
  bin_case(s, ADNN_BINARY_MUL, with_layout(OPND(4, 5, 6), HARNESS_PADDED), OPND(5, 1),
           with_layout(OPND(4, 5, 6), HARNESS_PADDED), 1, 1, F32, 0, 0, "padded");
  bin_case(s, ADNN_BINARY_ADD, OPND(2, 1, 2, 1, 3, 1), OPND(2, 1, 4, 1, 2),
           OPND(2, 2, 2, 4, 3, 2), 1, 1, F32, 0, 0, "rank-6");
  bin_case(s, ADNN_BINARY_ADD, OPND(64, 1031), OPND(64, 1031), OPND(64, 1031), 1, 1, F32, 0, 0,
           "big");
  bin_case(s, ADNN_BINARY_MUL, OPND(64, 1031), OPND(1031), OPND(64, 1031), 1, 1, F32, 1, 0, "big");
  /* From the former CUDA-only test. */
  bin_case(s, ADNN_BINARY_ADD, OPND(1003), OPND(1003), OPND(1003), 1.5, -0.5, F32, 0, 0, "1003");
  bin_case(s, ADNN_BINARY_MUL, OPND(4, 1, 5), OPND(3, 1), OPND(4, 3, 5), 1.5, -0.5, F32, 0, 0,
           "both 3d");
  bin_case(s, ADNN_BINARY_MAX, OPND(1003), OPND(1003), OPND(1003), 1.5, -0.5, F32, 1, 1, "1003");
  bin_case(s, ADNN_BINARY_MIN, OPND(6, 5), OPND(5), OPND(6, 5), 1.5, -0.5, F32, 0, 1, "row");
  /* F64: every op on the CPU plugin's reference kernels against the oracle. */
  for (int op = ADNN_BINARY_ADD; op <= ADNN_BINARY_MIN; op++) {
    const adnn_binary_op o = (adnn_binary_op)op;
    bin_case(s, o, OPND(6, 7), OPND(7), OPND(6, 7), 1.5, -0.5, F64, 0, 1, "row");
    bin_case(s, o, OPND(3, 1), OPND(1, 4), OPND(3, 4), 1, 1, F64, 0, 0, "both");
    bin_case(s, o, with_layout(OPND(4, 5, 6), HARNESS_PADDED), OPND(5, 1),
             with_layout(OPND(4, 5, 6), HARNESS_PADDED), 0.5, 2, F64, 0, 0, "padded");
  }
  bin_case(s, ADNN_BINARY_SUB, OPND(4, 1, 5), OPND(3, 1), OPND(4, 3, 5), 1.5, -0.5, F64, 0, 0,
           "both 3d");
  bin_case(s, ADNN_BINARY_DIV, OPND(5, 6), OPND(5, 1), OPND(5, 6), 1, 1, F64, 0, 0, "column");
  bin_case(s, ADNN_BINARY_MAX, OPND(5, 6), OPND(6), OPND(5, 6), 1, 1, F64, 0, 1, "row");
  bin_case(s, ADNN_BINARY_ADD, OPND(2, 3, 4, 5), OPND(1, 3, 1, 1), OPND(2, 3, 4, 5), 1, -1, F64, 1,
           0, "bias-add");
  /* F16 and BF16: every op, equal shapes and broadcasts, scaled, in place,
   * with the specials, and a long one with a vector tail. */
  static const adnn_dtype lowp[2] = {ADNN_DTYPE_F16, ADNN_DTYPE_BF16};
  for (int t = 0; t < 2; t++) {
    const adnn_dtype dt = lowp[t];
    for (int op = ADNN_BINARY_ADD; op <= ADNN_BINARY_MIN; op++) {
      const adnn_binary_op o = (adnn_binary_op)op;
      bin_case(s, o, OPND(3, 4, 5), OPND(3, 4, 5), OPND(3, 4, 5), 1, 1, dt, 0, 0, "equal");
      bin_case(s, o, OPND(6, 7), OPND(7), OPND(6, 7), 1.5, -0.5, dt, 0, 1, "row");
      bin_case(s, o, OPND(3, 1), OPND(1, 4), OPND(3, 4), 1, 1, dt, 0, 0, "both");
      bin_case(s, o, OPND(2, 5, 3, 4), OPND(1, 5, 1, 1), OPND(2, 5, 3, 4), 0.5, 2, dt, 1, 0,
               "bias-add");
      bin_case(s, o, OPND(1003), OPND(1003), OPND(1003), 1.5, -0.5, dt, 0, 1, "1003");
    }
    bin_case(s, ADNN_BINARY_ADD, with_layout(OPND(2, 6, 5, 4), HARNESS_NHWC), OPND(1, 6, 1, 1),
             with_layout(OPND(2, 6, 5, 4), HARNESS_NHWC), 1, 1, dt, 0, 0, "bias-add nhwc");
    bin_case(s, ADNN_BINARY_MUL, with_layout(OPND(4, 5, 6), HARNESS_PADDED), OPND(5, 1),
             with_layout(OPND(4, 5, 6), HARNESS_PADDED), 1, 1, dt, 0, 0, "padded");
    bin_case(s, ADNN_BINARY_ADD, OPND(64, 1031), OPND(1031), OPND(64, 1031), 1, 1, dt, 1, 0,
             "big");
  }
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracle                                                  */
/* ------------------------------------------------------------------------ */

static int run_oracle(const adnn_binary_desc *d, const double *a, const double *b, double *y) {
  harness_desc hd;
  hd.binary = *d;
  const double *in[2] = {a, b};
  char why[256];
  return binary_oracle(&hd, in, y, why, sizeof why) == 0;
}

static void binary_oracle_selftests(const harness_report *rep) {
  const adnn_dtype dt = ADNN_DTYPE_F64;
  /* 2 * a - 0.5 * b with a [3, 1] = 1 2 3 and b [1, 4] = 10 20 NaN 40: y[0, 0]
   * = 2 - 5 = -3, y[1, 3] = 4 - 20 = -16. The same operands pre-broadcast with
   * stride-0 dims must give the same y. */
  double a[3] = {1, 2, 3}, b[4] = {10, 20, NAN, 40}, y1[12], y2[12];
  const int64_t da[2] = {3, 1}, db[2] = {1, 4}, dy[2] = {3, 4};
  adnn_binary_desc d;
  adnn_binary_desc_init(&d);
  d.op = ADNN_BINARY_SUB;
  d.alpha = 2.0;
  d.beta = 0.5;
  d.a = harness_tensor_desc(dt, 2, da, HARNESS_PACKED);
  d.b = harness_tensor_desc(dt, 2, db, HARNESS_PACKED);
  d.y = harness_tensor_desc(dt, 2, dy, HARNESS_PACKED);
  int good = run_oracle(&d, a, b, y1);
  d.a.dims[1] = 4;
  d.a.strides[1] = 0;
  d.b.dims[0] = 3;
  d.b.strides[0] = 0;
  good &= run_oracle(&d, a, b, y2);
  for (int i = 0; i < 12; i++) good &= (y1[i] == y2[i]) || (isnan(y1[i]) && isnan(y2[i]));
  harness_ok(rep, good && y1[0] == -3 && y1[7] == -16,
             "oracle: raw and pre-broadcast operands give the same result (got %g %g)", y1[0],
             y1[7]);
  /* max(2a, 0.5b): NaN in the column of b's NaN; max(2, 5) = 5. NaN on
   * either side wins for max and min, unlike C's fmax and fmin. */
  d.op = ADNN_BINARY_MAX;
  good = run_oracle(&d, a, b, y1);
  harness_ok(rep, good && isnan(y1[2]) && isnan(y1[6]) && y1[0] == 5,
             "oracle: max with a NaN is NaN");
  harness_ok(rep, isnan((double)apply(ADNN_BINARY_MAX, NAN, 1)) &&
                      isnan((double)apply(ADNN_BINARY_MAX, 1, NAN)) &&
                      isnan((double)apply(ADNN_BINARY_MIN, NAN, -1)) &&
                      isnan((double)apply(ADNN_BINARY_MIN, -1, NAN)) &&
                      apply(ADNN_BINARY_MIN, -1, 2) == -1 && apply(ADNN_BINARY_DIV, 1, 0) == INFINITY,
             "oracle: max and min with NaN on either side are NaN; 1 / 0 is +inf");
  /* A rank-0 b of 3 times 0..11: y[11] = 33, y[1] = 3. */
  double sc = 3, a12[12];
  for (int i = 0; i < 12; i++) a12[i] = i;
  d.op = ADNN_BINARY_MUL;
  d.alpha = d.beta = 1;
  d.a = harness_tensor_desc(dt, 2, dy, HARNESS_PACKED);
  d.b = harness_tensor_desc(dt, 0, NULL, HARNESS_PACKED);
  good = run_oracle(&d, a12, &sc, y1);
  harness_ok(rep, good && y1[11] == 33 && y1[1] == 3,
             "oracle: a rank-0 operand broadcasts everywhere");
  /* [3, 4] and [3] do not broadcast. */
  d.b = harness_vector_desc(dt, 3);
  harness_ok(rep, !run_oracle(&d, a12, b, y1), "oracle: operands that do not broadcast are refused");
}

static void binary_bad_descriptors(const harness_report *rep, adnn_context *ctx, const char *bn) {
  adnn_plan *plan = NULL;
  adnn_binary_desc bd;
  adnn_binary_desc_init(&bd);
  const int64_t a3[2] = {3, 4}, b3[1] = {3};
  bd.a = harness_tensor_desc(F32, 2, a3, HARNESS_PACKED);
  bd.b = harness_tensor_desc(F32, 1, b3, HARNESS_PACKED);
  bd.y = bd.a;
  harness_is_status(rep, adnn_plan_create_binary(ctx, &bd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s binary: [3,4] and [3] do not broadcast: BAD_PARAM", bn);
  /* Mixed 16-bit dtypes (an F16 a, a BF16 b): refused by the core. */
  bd.a = harness_tensor_desc(ADNN_DTYPE_F16, 2, a3, HARNESS_PACKED);
  bd.b = harness_tensor_desc(ADNN_DTYPE_BF16, 2, a3, HARNESS_PACKED);
  bd.y = bd.a;
  harness_is_status(rep, adnn_plan_create_binary(ctx, &bd, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s binary: an f16 a with a bf16 b is BAD_PARAM", bn);
  harness_contains(rep, adnn_last_error(), "has dtype bf16",
                   "%s binary: the message names b's dtype", bn);
}

const harness_op_traits harness_binary_traits = {
    .inputs = binary_inputs,
    .output = binary_output,
    .set_dtype = binary_set_dtype,
    .oracle = binary_oracle,
    .tolerance = binary_tolerance,
    .fill = binary_fill,
    .variant_count = 1,
    .cases = binary_cases,
    .oracle_selftests = binary_oracle_selftests,
    .bad_descriptors = binary_bad_descriptors,
};
