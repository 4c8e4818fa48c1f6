/* reorder in the conformance harness: traits, an oracle that rounds in long
 * double by its own arithmetic (not kernels/common/float16.h), cases over
 * every dtype pair and the layouts frameworks use, the oracle's self-tests
 * and the bad descriptors.
 *
 * Unwritten elements: the harness poisons y with 0xFF bytes, a NaN for the
 * floating types but -1 (I8, I32) or 255 (U8) for the integers. The integer
 * cases therefore never put -1 or 255 into x (their values are drawn from
 * 0..100 and the extremes -128, 127, 254, INT32_MIN, INT32_MAX), so an
 * element the backend leaves alone reads as a value the oracle never
 * produces and fails the comparison. */
#include "t/harness/harness.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int reorder_inputs(const harness_desc *hd, harness_tensor *in) {
  in[0] = (harness_tensor){"x", hd->reorder.x};
  return 1;
}

static adnn_tensor_desc reorder_output(const harness_desc *hd) { return hd->reorder.y; }

static void reorder_set_dtype(harness_desc *hd, adnn_dtype dt) {
  hd->reorder.x.dtype = hd->reorder.y.dtype = dt;
}

/* Exact: a conversion rounds once by definition, and the oracle does too. */
static harness_tolerance reorder_tolerance(const harness_desc *hd, adnn_dtype dt) {
  (void)hd;
  (void)dt;
  return (harness_tolerance){0.0, 0.0};
}

static int is_int(adnn_dtype t) {
  return t == ADNN_DTYPE_I8 || t == ADNN_DTYPE_U8 || t == ADNN_DTYPE_I32;
}

static void reorder_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  (void)n_in;
  if (is_int(hd->reorder.x.dtype)) harness_fill_uniform(&in[0], r, 0.0, 100.0);
  else harness_fill_mixed(&in[0], r);
}

/* ------------------------------------------------------------------------ */
/* Oracle                                                                    */
/* ------------------------------------------------------------------------ */

/* v rounded to nearest even into a binary format with p significand bits,
 * smallest normal exponent emin and largest finite value max (beyond it:
 * infinity), in long double (64 significand bits hold every F64 exactly). */
static long double round_format(long double v, int p, int emin, long double max) {
  if (isnan(v) || v == 0 || v == INFINITY || v == -INFINITY) return v;
  int e = ilogbl(v);
  if (e < emin) e = emin;
  const long double q = rintl(ldexpl(v, p - 1 - e));
  const long double res = ldexpl(q, e - (p - 1));
  if (fabsl(res) > max) return v > 0 ? INFINITY : -INFINITY;
  return res;
}

long double harness_reorder_round(adnn_dtype t, long double v) {
  switch (t) {
    case ADNN_DTYPE_F32: return round_format(v, 24, -126, FLT_MAX);
    case ADNN_DTYPE_F16: return round_format(v, 11, -14, 65504.0L);
    case ADNN_DTYPE_BF16: return round_format(v, 8, -126, ldexpl(255.0L, 120));
    default: return v; /* F64 from a narrower type, and the integer copies: exact */
  }
}

static int same_dims(const adnn_tensor_desc *a, const adnn_tensor_desc *b) {
  if (a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return 0;
  return 1;
}

static int reorder_oracle(const harness_desc *hd, const double *const *in, double *y, char *why,
                          size_t why_len) {
  const adnn_reorder_desc *d = &hd->reorder;
  if (!same_dims(&d->x, &d->y)) {
    snprintf(why, why_len, "reorder: x and y dims differ");
    return -1;
  }
  harness_index ix, iy;
  for (harness_index_first(&ix, &d->x), harness_index_first(&iy, &d->y); ix.valid;
       harness_index_next(&ix, &d->x), harness_index_next(&iy, &d->y))
    y[iy.offset] = (double)harness_reorder_round(d->y.dtype, in[0][ix.offset]);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64
#define F16 ADNN_DTYPE_F16
#define BF16 ADNN_DTYPE_BF16

/* The boundaries of every narrowing, as F64 values (an F32 input gets them
 * rounded to F32 by the harness first, which is what the library sees). */
static double specials[64];
static int n_specials;

static void init_specials(void) {
  if (n_specials) return;
  const double s[] = {
      0.0, -0.0, 1.0, -1.0, NAN, -NAN, INFINITY, -INFINITY,
      1.0 + 0x1p-11, 1.0 + 3 * 0x1p-11, -(1.0 + 0x1p-11), 1.0 + 0x1p-11 + 0x1p-40, /* F16 ties */
      1.0 + 0x1p-8, 1.0 + 3 * 0x1p-8, 1.0 + 0x1p-8 + 0x1p-30, -(1.0 + 3 * 0x1p-8), /* BF16 ties */
      65504.0, 65519.0, 65519.99, 65520.0, -65520.0, 65536.0, 1e6, -1e6,
      (double)FLT_MAX, -(double)FLT_MAX, 0x1.fffp127, 0x1.fep127, 3.4e38,
      0x1p-24, 0x1p-25, 3 * 0x1p-26, 0x1p-14, 0x1.ff8p-15, -0x1p-24, 0x1p-26, /* F16 subnormals */
      0x1p-126, 0x1p-133, 0x1p-134, 3 * 0x1p-135, 0x1p-149, 0x1.fep-127,      /* BF16/F32 subnormals */
      1e-300, -1e-300, 1e300, 0.1, -0.3, 3.14159265358979,
      0x1.0000000000001p0 + 0x1p-11, 0x1.002p0 - 0x1p-52, /* F64 near-ties of F16 */
      0x1.01p0 + 0x1p-52, 0x1.01p0 - 0x1p-52};            /* and of BF16 */
  for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) specials[n_specials++] = s[i];
}

static const int64_t int_specials[] = {0, 1, 127, -128, 100, 254, 2147483647,
                                       -2147483647 - 1, 42};

static int64_t int_special(adnn_dtype t, int i) {
  int64_t v = int_specials[i % 9];
  if (t == ADNN_DTYPE_I8 && (v > 127 || v < -128)) v = 7;
  if (t == ADNN_DTYPE_U8 && (v > 254 || v < 0)) v = 9;
  return v;
}

/* One case: x of dims in layout lx (strides overridden by xs when given), y
 * in layout ly (or ys). */
static void reorder_case(harness_suite *suite, adnn_dtype xt, adnn_dtype yt, int rank,
                         const int64_t *dims, enum harness_layout lx, const int64_t *xs,
                         enum harness_layout ly, const int64_t *ys, int inplace, const char *tag) {
  harness_case c;
  harness_case_init(&c, harness_op_find("reorder"), xt, "%s->%s %s", adnn_dtype_name(xt),
                    adnn_dtype_name(yt), tag);
  adnn_reorder_desc *d = &c.desc.reorder;
  adnn_reorder_desc_init(d);
  d->x = harness_tensor_desc(xt, rank, dims, lx);
  if (xs) memcpy(d->x.strides, xs, sizeof(int64_t) * (size_t)rank);
  d->y = inplace ? d->x : harness_tensor_desc(yt, rank, dims, ly);
  if (ys && !inplace) memcpy(d->y.strides, ys, sizeof(int64_t) * (size_t)rank);
  if (harness_case_alloc(&c) != 0) return;
  c.inplace = inplace ? 0 : -1;
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  const int64_t n = harness_element_count(&d->x);
  if (is_int(xt)) {
    harness_fill_uniform(&c.in[0], &r, 0.0, 100.0);
    for (int64_t i = 0; i < n && i < 9; i++)
      harness_set_element(&c.in[0], i, (double)int_special(xt, (int)i));
  } else {
    harness_fill_mixed(&c.in[0], &r);
    /* Values near every rounding boundary of the narrow types: random
     * significands with the last bits set to ties and near-ties. */
    for (int64_t i = 0; i < n; i += 3) {
      const double u = tap_rng_uniform(&r, 0.0, 1.0);
      const int e = (int)(tap_rng_uniform(&r, 0.0, 1.0) * 40.0) - 30;
      double v = ldexp(1.0 + floor(u * 1024.0) / 1024.0 + 0x1p-11, e);
      harness_set_element(&c.in[0], i, (i & 4) ? -v : v);
    }
    init_specials();
    for (int64_t i = 0; i < n && i < n_specials; i++)
      harness_set_element(&c.in[0], i, specials[i]);
  }
  harness_submit(suite, &c);
}

static void reorder_cases(harness_suite *s) {
  static const adnn_dtype floats[4] = {F32, F64, F16, BF16};
  const int64_t img[4] = {2, 5, 7, 9}, big[4] = {2, 40, 33, 35}, vec[1] = {1000};
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) {
      const adnn_dtype a = floats[i], b = floats[j];
      reorder_case(s, a, b, 1, vec, HARNESS_PACKED, NULL, HARNESS_PACKED, NULL, 0, "[1000]");
      reorder_case(s, a, b, 4, img, HARNESS_PACKED, NULL, HARNESS_NHWC, NULL, 0,
                   "[2,5,7,9] nchw->nhwc");
      reorder_case(s, a, b, 4, img, HARNESS_NHWC, NULL, HARNESS_PACKED, NULL, 0,
                   "[2,5,7,9] nhwc->nchw");
      reorder_case(s, a, b, 4, img, HARNESS_PADDED, NULL, HARNESS_PADDED, NULL, 0,
                   "[2,5,7,9] padded->padded");
    }
  /* The transposes large enough for whole 32 x 32 tiles and edges, threads. */
  reorder_case(s, F32, F32, 4, big, HARNESS_PACKED, NULL, HARNESS_NHWC, NULL, 0,
               "[2,40,33,35] nchw->nhwc");
  reorder_case(s, F32, BF16, 4, big, HARNESS_NHWC, NULL, HARNESS_PACKED, NULL, 0,
               "[2,40,33,35] nhwc->nchw");
  /* The AVX2 8 x 8 register transposes of 4-byte copies, with ragged edges
   * on both sides of the tiles (40 = 32 + 8, 1155 = 36 * 32 + 3). */
  reorder_case(s, F32, F32, 4, big, HARNESS_NHWC, NULL, HARNESS_PACKED, NULL, 0,
               "[2,40,33,35] nhwc->nchw");
  const int64_t odd[4] = {1, 13, 17, 11};
  reorder_case(s, F32, F32, 4, odd, HARNESS_PACKED, NULL, HARNESS_NHWC, NULL, 0,
               "[1,13,17,11] nchw->nhwc");
  reorder_case(s, F32, F32, 4, odd, HARNESS_NHWC, NULL, HARNESS_PACKED, NULL, 0,
               "[1,13,17,11] nhwc->nchw");
  reorder_case(s, F16, F32, 4, big, HARNESS_NHWC, NULL, HARNESS_PACKED, NULL, 0,
               "[2,40,33,35] nhwc->nchw");
  reorder_case(s, ADNN_DTYPE_I32, ADNN_DTYPE_I32, 4, big, HARNESS_PACKED, NULL, HARNESS_NHWC,
               NULL, 0, "[2,40,33,35] nchw->nhwc");
  reorder_case(s, F64, F16, 4, big, HARNESS_PACKED, NULL, HARNESS_NHWC, NULL, 0,
               "[2,40,33,35] nchw->nhwc");
  const int64_t large[1] = {300001};
  reorder_case(s, F32, F16, 1, large, HARNESS_PACKED, NULL, HARNESS_PACKED, NULL, 0, "[300001]");
  reorder_case(s, BF16, F32, 1, large, HARNESS_PACKED, NULL, HARNESS_PACKED, NULL, 0,
               "[300001]");
  /* A permutation that is no transpose of two dims ([2,3,4] to y stored
   * [4][2][3]), a broadcast x (stride 0), rank 0, rank 8, in place. */
  const int64_t d3[3] = {2, 3, 4}, ys3[3] = {3, 1, 6}, bx[3] = {0, 4, 1};
  reorder_case(s, F32, F16, 3, d3, HARNESS_PACKED, NULL, HARNESS_PACKED, ys3, 0, "[2,3,4] ->(2,0,1)");
  reorder_case(s, F16, F64, 3, d3, HARNESS_PACKED, bx, HARNESS_PACKED, ys3, 0,
               "[2,3,4] broadcast x ->(2,0,1)");
  reorder_case(s, F64, BF16, 0, NULL, HARNESS_PACKED, NULL, HARNESS_PACKED, NULL, 0, "rank 0");
  const int64_t d8[8] = {2, 1, 3, 2, 1, 2, 3, 2};
  reorder_case(s, BF16, F16, 8, d8, HARNESS_PADDED, NULL, HARNESS_PACKED, NULL, 0, "rank 8");
  reorder_case(s, F32, F32, 4, img, HARNESS_NHWC, NULL, HARNESS_NHWC, NULL, 1, "in place");
  /* The integer copies, in every layout. */
  static const adnn_dtype ints[3] = {ADNN_DTYPE_I8, ADNN_DTYPE_U8, ADNN_DTYPE_I32};
  for (int i = 0; i < 3; i++) {
    reorder_case(s, ints[i], ints[i], 4, img, HARNESS_PACKED, NULL, HARNESS_NHWC, NULL, 0,
                 "[2,5,7,9] nchw->nhwc");
    reorder_case(s, ints[i], ints[i], 4, img, HARNESS_PADDED, NULL, HARNESS_PACKED, NULL, 0,
                 "[2,5,7,9] padded->nchw");
    reorder_case(s, ints[i], ints[i], 1, vec, HARNESS_PACKED, NULL, HARNESS_PACKED, NULL, 0,
                 "[1000]");
  }
}

/* ------------------------------------------------------------------------ */
/* Oracle self-tests and bad descriptors                                     */
/* ------------------------------------------------------------------------ */

static void reorder_oracle_selftests(const harness_report *r) {
  const struct {
    adnn_dtype t;
    long double in, want;
  } k[] = {
      {F16, 1.0L + 0x1p-11L, 1.0L},               /* tie to even (down) */
      {F16, 1.0L + 3 * 0x1p-11L, 1.0L + 0x1p-9L}, /* tie to even (up) */
      {F16, 65519.0L, 65504.0L},
      {F16, 65520.0L, INFINITY},
      {F16, 0x1p-25L, 0.0L},                      /* half the smallest subnormal: even */
      {F16, 3 * 0x1p-26L, 0x1p-24L},
      {BF16, 1.0L + 0x1p-8L, 1.0L},
      {BF16, 1.0L + 3 * 0x1p-8L, 1.0L + 0x1p-6L},
      {BF16, (long double)FLT_MAX, INFINITY},
      {BF16, 0x1p-134L, 0.0L},
      {BF16, 3 * 0x1p-135L, 0x1p-133L},
      {F32, 1.0L + 0x1p-24L, 1.0L},
      {F32, 0x1p-150L, 0.0L},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    const long double got = harness_reorder_round(k[i].t, k[i].in);
    harness_ok(r, got == k[i].want, "reorder oracle: %s(%.21Lg) = %.21Lg (want %.21Lg)",
               adnn_dtype_name(k[i].t), k[i].in, got, k[i].want);
  }
}

static void reorder_bad_descriptors(const harness_report *rep, adnn_context *ctx, const char *bn) {
  adnn_plan *plan = NULL;
  adnn_reorder_desc d;
  const int64_t dims[2] = {3, 4}, other[2] = {4, 3};
  adnn_reorder_desc_init(&d);
  d.x = harness_tensor_desc(F32, 2, dims, HARNESS_PACKED);
  d.y = harness_tensor_desc(ADNN_DTYPE_I8, 2, dims, HARNESS_PACKED);
  harness_is_status(rep, adnn_plan_create_reorder(ctx, &d, &plan), ADNN_STATUS_NOT_SUPPORTED,
                    "%s reorder: f32 -> i8 is NOT_SUPPORTED (quantization)", bn);
  harness_contains(rep, adnn_last_error(), "no conversion from f32 to i8", "%s message", bn);
  d.x.dtype = ADNN_DTYPE_I32;
  d.y.dtype = ADNN_DTYPE_U8;
  harness_is_status(rep, adnn_plan_create_reorder(ctx, &d, &plan), ADNN_STATUS_NOT_SUPPORTED,
                    "%s reorder: i32 -> u8 is NOT_SUPPORTED", bn);
  d.x.dtype = d.y.dtype = F32;
  d.y = harness_tensor_desc(F32, 2, other, HARNESS_PACKED);
  harness_is_status(rep, adnn_plan_create_reorder(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s reorder: y dims [4,3] for x [3,4] is BAD_PARAM", bn);
  harness_contains(rep, adnn_last_error(), "must match x", "%s message", bn);
  d.y = harness_tensor_desc(F16, 2, dims, HARNESS_PACKED);
  d.y.strides[0] = d.y.strides[1] = 1;
  harness_is_status(rep, adnn_plan_create_reorder(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s reorder: overlapping y strides are BAD_PARAM", bn);
  harness_contains(rep, adnn_last_error(), "share memory", "%s message", bn);
  d.y = harness_tensor_desc(F16, 2, dims, HARNESS_PACKED);
  d.y.dtype = (adnn_dtype)99;
  harness_is_status(rep, adnn_plan_create_reorder(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s reorder: an unknown y dtype is BAD_PARAM", bn);
  /* At execution: y overlapping x without being x (a dtype change) is
   * refused. */
  d.y = harness_tensor_desc(F16, 2, dims, HARNESS_PACKED);
  adnn_status st = adnn_plan_create_reorder(ctx, &d, &plan);
  if (!harness_ok(rep, st == ADNN_STATUS_SUCCESS, "%s reorder f32->f16 plan", bn)) return;
  void *x = NULL;
  adnn_malloc(ctx, 12 * sizeof(float), &x);
  const void *ins[1] = {x};
  harness_is_status(rep, adnn_plan_execute(plan, ins, 1, x), ADNN_STATUS_BAD_PARAM,
                    "%s execute: f16 y in f32 x's memory is BAD_PARAM", bn);
  adnn_plan_destroy(plan);
  adnn_free(ctx, x);
}

const harness_op_traits harness_reorder_traits = {
    .inputs = reorder_inputs,
    .output = reorder_output,
    .set_dtype = reorder_set_dtype,
    .oracle = reorder_oracle,
    .tolerance = reorder_tolerance,
    .fill = reorder_fill,
    .variant_count = 1,
    .cases = reorder_cases,
    .oracle_selftests = reorder_oracle_selftests,
    .bad_descriptors = reorder_bad_descriptors,
};
