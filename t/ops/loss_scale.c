/* Loss scaling in the conformance harness: traits, oracle (doc/ops.md "Loss
 * scaling"), cases, the oracle's self-tests and bad descriptors. The tensors
 * and found_inf are outputs read and updated, so each case runs once from
 * the initial values fill_outputs gives; a case may then plant infinities
 * and NaNs in them, or start found_inf at 1, before it is submitted. The
 * scale (input 0, one F32) is set per case: powers of two (the usual dynamic
 * scales), 3 (UNSCALE's factor then is a rounded reciprocal), 0 (UNSCALE's
 * factor infinite), 65536 (F16 products overflow) and scales just below the
 * F16 and BF16 overflow thresholds. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int ls_inputs(const harness_desc *hd, harness_tensor *in) {
  (void)hd;
  in[0] = (harness_tensor){"scale", harness_vector_desc(ADNN_DTYPE_F32, 1)};
  return 1;
}

static int ls_outputs(const harness_desc *hd, harness_tensor *out) {
  const adnn_loss_scale_desc *d = &hd->loss_scale;
  for (size_t i = 0; i < d->tensor_count; i++)
    out[i] = (harness_tensor){"t", harness_vector_desc(d->dtype, d->sizes[i])};
  out[d->tensor_count] = (harness_tensor){"found_inf", harness_vector_desc(d->dtype, 1)};
  return (int)d->tensor_count + 1;
}

static adnn_tensor_desc ls_output(const harness_desc *hd) {
  return harness_vector_desc(hd->loss_scale.dtype, hd->loss_scale.sizes[0]);
}

static unsigned ls_inout(const harness_desc *hd) {
  const int n = (int)hd->loss_scale.tensor_count + 1;
  return n >= 32 ? ~0u : (1u << n) - 1u;
}

static void ls_set_dtype(harness_desc *hd, adnn_dtype dt) { hd->loss_scale.dtype = dt; }

/* One product and its rounding, as the oracle computes them: the result is
 * the library's to the last bit for F32, F16 and BF16 (a product of two
 * F32 values is exact in long double, then rounded as the kernels round
 * it); F64's product of a double and a float can round twice through long
 * double, hence one ulp. */
static harness_tolerance ls_tolerance(const harness_desc *hd, adnn_dtype dt) {
  (void)hd;
  (void)dt;
  return dt == ADNN_DTYPE_F64 ? (harness_tolerance){3e-16, 3e-16}
                              : (harness_tolerance){1e-12, 1e-12};
}

/* The default scale (adnn-bench's correctness mode): 1024. */
static void ls_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  (void)hd;
  (void)r;
  for (int i = 0; i < n_in; i++) harness_set_element(&in[i], 0, 1024.0);
}

/* Tensors uniform in [-1, 1); found_inf 0. */
static void ls_fill_outputs(const harness_desc *hd, harness_buffer *out, int n_out, tap_rng *r) {
  (void)hd;
  for (int o = 0; o < n_out - 1; o++) harness_fill_uniform(&out[o], r, -1.0, 1.0);
  harness_set_element(&out[n_out - 1], 0, 0.0);
}

/* The factor: the scale, or 1 / scale in double rounded to F32. */
static float oracle_factor(adnn_loss_scale_kind kind, double scale) {
  return kind == ADNN_LOSS_SCALE_UNSCALE ? (float)(1.0 / scale) : (float)scale;
}

/* t[k] *= f for n elements of dtype dt; 1 when a result is not finite. */
static int oracle_scale(adnn_dtype dt, float f, double *t, int64_t n) {
  int bad = 0;
  for (int64_t k = 0; k < n; k++) {
    const long double prod = (long double)t[k] * (long double)f;
    double v;
    if (dt == ADNN_DTYPE_F64) v = (double)prod;
    else v = harness_round(dt, (double)(float)prod);
    t[k] = v;
    if (!isfinite(v)) bad = 1;
  }
  return bad;
}

static int ls_oracle_outputs(const harness_desc *hd, const double *const *in,
                             double *const *out, char *why, size_t why_len) {
  const adnn_loss_scale_desc *d = &hd->loss_scale;
  if (d->tensor_count == 0 || d->sizes == NULL) {
    snprintf(why, why_len, "loss_scale: no tensors");
    return -1;
  }
  const float f = oracle_factor(d->kind, in[0][0]);
  int bad = 0;
  for (size_t i = 0; i < d->tensor_count; i++) bad |= oracle_scale(d->dtype, f, out[i], d->sizes[i]);
  if (bad) out[d->tensor_count][0] = 1.0;
  return 0;
}

static int ls_oracle(const harness_desc *hd, const double *const *in, double *y, char *why,
                     size_t why_len) {
  (void)hd;
  (void)in;
  (void)y;
  snprintf(why, why_len, "loss_scale: the harness calls oracle_outputs");
  return -1;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

static const int64_t sz_three[3] = {7, 1, 33};
static const int64_t sz_five[5] = {40000, 5, 32768, 32769, 64};

/* Plants: none, an infinity, a NaN, found_inf already 1, or a 1 (the
 * largest magnitude, exact in every dtype, for the threshold cases). */
enum { PLANT_NONE, PLANT_INF, PLANT_NAN, PLANT_FOUND, PLANT_ONE };

static void ls_case(harness_suite *suite, adnn_loss_scale_kind kind, adnn_dtype dt,
                    size_t T, const int64_t *sizes, double scale, int plant) {
  static const char *const plants[] = {"", " inf", " nan", " found1", " one"};
  harness_case c;
  harness_case_init(&c, harness_op_find("loss_scale"), dt, "loss_scale %s T%zu s%g%s",
                    adnn_loss_scale_kind_name(kind), T, scale, plants[plant]);
  adnn_loss_scale_desc *d = &c.desc.loss_scale;
  adnn_loss_scale_desc_init(d);
  d->kind = kind;
  d->dtype = dt;
  d->tensor_count = T;
  d->sizes = sizes;
  if (harness_case_alloc(&c) != 0) return;
  harness_case_fill(&c);
  harness_set_element(&c.in[0], 0, scale);
  /* The outputs live one after the other in c.out: plant into the last
   * tensor (the one furthest from the first chunk) and into found_inf. */
  const int last = (int)T - 1;
  const int64_t at = c.out_offset[last] + sizes[last] / 2;
  if (plant == PLANT_INF) c.out.v[at] = -INFINITY;
  if (plant == PLANT_NAN) c.out.v[at] = NAN;
  if (plant == PLANT_FOUND) c.out.v[c.out_offset[T]] = 1.0;
  if (plant == PLANT_ONE) c.out.v[at] = 1.0;
  harness_submit(suite, &c);
}

static void ls_cases(harness_suite *s) {
  static const adnn_dtype dts[] = {ADNN_DTYPE_F32, ADNN_DTYPE_F64, ADNN_DTYPE_F16,
                                   ADNN_DTYPE_BF16};
  for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
    const adnn_dtype dt = dts[k];
    ls_case(s, ADNN_LOSS_SCALE_UNSCALE, dt, 3, sz_three, 1024.0, PLANT_NONE);
    ls_case(s, ADNN_LOSS_SCALE_UNSCALE, dt, 5, sz_five, 3.0, PLANT_NONE);
    ls_case(s, ADNN_LOSS_SCALE_UNSCALE, dt, 5, sz_five, 65536.0, PLANT_INF);
    ls_case(s, ADNN_LOSS_SCALE_UNSCALE, dt, 3, sz_three, 8.0, PLANT_NAN);
    ls_case(s, ADNN_LOSS_SCALE_UNSCALE, dt, 3, sz_three, 0.0, PLANT_NONE);
    ls_case(s, ADNN_LOSS_SCALE_UNSCALE, dt, 3, sz_three, 2.0, PLANT_FOUND);
    ls_case(s, ADNN_LOSS_SCALE_SCALE, dt, 3, sz_three, 3.0, PLANT_NONE);
    /* 65536 * [-1, 1) overflows F16 (its largest is 65504), not the others. */
    ls_case(s, ADNN_LOSS_SCALE_SCALE, dt, 5, sz_five, 65536.0, PLANT_NONE);
    ls_case(s, ADNN_LOSS_SCALE_SCALE, dt, 5, sz_five, 0.5, PLANT_NAN);
    /* Just below the 16-bit types' overflow thresholds, with a planted 1:
     * 1 * 65512 is below 65520, where F16 starts to round to infinity, and
     * 1 * 0x1.fe8p127 below 0x1.ffp127, where BF16 does, so neither
     * overflows in its own type (found_inf stays 0) though both round to
     * the type's largest finite value. The values are compared here; the
     * harness measures errors relative to the largest value (3e38 in the
     * BF16 case), which hides a wrong found_inf of 1, so the flag itself is
     * checked bit for bit at both thresholds by ls_thresholds below. */
    ls_case(s, ADNN_LOSS_SCALE_SCALE, dt, 5, sz_five, 65512.0, PLANT_ONE);
    ls_case(s, ADNN_LOSS_SCALE_SCALE, dt, 5, sz_five, 0x1.fe8p127, PLANT_ONE);
  }
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracle                                                  */
/* ------------------------------------------------------------------------ */

static void ls_oracle_selftests(const harness_report *rep) {
  /* UNSCALE by 3: the factor is float(1/3) = 0x1.555556p-2, so 3 * factor
   * is 1 + 2^-24 before F32 rounding, which rounds (ties to even) to 1. */
  double t[3] = {3.0, -1.5, 65504.0};
  const float f = oracle_factor(ADNN_LOSS_SCALE_UNSCALE, 3.0);
  int good = f == 0x1.555556p-2f;
  good &= oracle_scale(ADNN_DTYPE_F32, f, t, 2) == 0 && t[0] == 1.0 && t[1] == -0.5;
  /* SCALE of 65504 (F16's largest) by 2 overflows F16, not F32. */
  double h = 65504.0, g = 65504.0;
  good &= oracle_scale(ADNN_DTYPE_F16, 2.0f, &h, 1) == 1 && isinf(h);
  good &= oracle_scale(ADNN_DTYPE_F32, 2.0f, &g, 1) == 0 && g == 131008.0;
  /* UNSCALE by 0: an infinite factor; 0 * inf is NaN. */
  double z[2] = {0.0, 1.0};
  good &= oracle_scale(ADNN_DTYPE_F32, oracle_factor(ADNN_LOSS_SCALE_UNSCALE, 0.0), z, 2) == 1 &&
          isnan(z[0]) && isinf(z[1]);
  harness_ok(rep, good, "oracle: loss scaling's factor, rounding and overflow by hand");
}

/* ------------------------------------------------------------------------ */
/* The overflow thresholds, bit for bit                                      */
/* ------------------------------------------------------------------------ */

/* {1, -1, 0.5} of F16 or BF16 scaled just below the threshold where the
 * product rounds to infinity (65512, 0x1.fe8p127: the type's largest finite
 * value, found_inf 0) and exactly at it (65520, 0x1.ffp127: a tie, rounded
 * to even, which is infinity: found_inf 1), through the public API on the
 * backend under test. */
static void ls_thresholds(const harness_report *rep, adnn_context *ctx, const char *bn) {
  static const struct {
    adnn_dtype dt;
    float below, at;
    uint16_t t[3], max, inf, half_below, half_at, one;
  } k[2] = {
      /* 0.5 * 65512 = 32756 lies between 32752 (0x77ff) and 32768: the nearer. */
      {ADNN_DTYPE_F16, 65512.0f, 65520.0f, {0x3c00, 0xbc00, 0x3800}, 0x7bff, 0x7c00, 0x77ff,
       0x7800, 0x3c00},
      {ADNN_DTYPE_BF16, 0x1.fe8p127f, 0x1.ffp127f, {0x3f80, 0xbf80, 0x3f00}, 0x7f7f, 0x7f80,
       0x7eff, 0x7f00, 0x3f80},
  };
  for (int i = 0; i < 2; i++) {
    const int64_t n = 3;
    adnn_loss_scale_desc d;
    adnn_loss_scale_desc_init(&d);
    d.kind = ADNN_LOSS_SCALE_SCALE;
    d.dtype = k[i].dt;
    d.tensor_count = 1;
    d.sizes = &n;
    adnn_plan *plan = NULL;
    void *buf = NULL;
    if (!harness_is_status(rep, adnn_plan_create_loss_scale(ctx, &d, &plan), ADNN_STATUS_SUCCESS,
                           "%s loss_scale %s: threshold plan", bn, adnn_dtype_name(k[i].dt)))
      continue;
    if (adnn_malloc(ctx, 64, &buf) != ADNN_STATUS_SUCCESS) {
      adnn_plan_destroy(plan);
      continue;
    }
    char *b = buf;
    for (int at = 0; at < 2; at++) {
      const float scale = at ? k[i].at : k[i].below;
      uint16_t host[4] = {k[i].t[0], k[i].t[1], k[i].t[2], 0};
      adnn_status st = adnn_memcpy(ctx, b, host, 8, ADNN_MEMCPY_HOST_TO_DEVICE);
      if (st == ADNN_STATUS_SUCCESS)
        st = adnn_memcpy(ctx, b + 32, &scale, sizeof scale, ADNN_MEMCPY_HOST_TO_DEVICE);
      const void *in[1] = {b + 32};
      void *out[2] = {b, b + 6};
      if (st == ADNN_STATUS_SUCCESS) st = adnn_plan_execute_multi(plan, in, 1, out, 2);
      if (st == ADNN_STATUS_SUCCESS) st = adnn_context_synchronize(ctx);
      if (st == ADNN_STATUS_SUCCESS) st = adnn_memcpy(ctx, host, b, 8, ADNN_MEMCPY_DEVICE_TO_HOST);
      const uint16_t big = at ? k[i].inf : k[i].max;
      const uint16_t half = at ? k[i].half_at : k[i].half_below;
      const uint16_t flag = at ? k[i].one : 0;
      harness_ok(rep, st == ADNN_STATUS_SUCCESS && host[0] == big &&
                          host[1] == (uint16_t)(big | 0x8000u) && host[2] == half &&
                          host[3] == flag,
                 "%s loss_scale %s: {1, -1, 0.5} * %a -> %04x %04x %04x, found_inf %04x "
                 "(want %04x %04x %04x, %04x)", bn, adnn_dtype_name(k[i].dt), (double)scale,
                 host[0], host[1], host[2], host[3], big, (unsigned)(big | 0x8000u), half, flag);
    }
    adnn_free(ctx, buf);
    adnn_plan_destroy(plan);
  }
}

/* ------------------------------------------------------------------------ */
/* Bad descriptors                                                           */
/* ------------------------------------------------------------------------ */

static void ls_bad_descriptors(const harness_report *rep, adnn_context *ctx, const char *bn) {
  adnn_loss_scale_desc d;
  adnn_plan *plan = NULL;
  const int64_t sizes[2] = {4, 3};
#define RESET()                      \
  do {                               \
    adnn_loss_scale_desc_init(&d);   \
    d.tensor_count = 2;              \
    d.sizes = sizes;                 \
  } while (0)
#define BAD(status, needle, what)                                                              \
  do {                                                                                         \
    plan = NULL;                                                                               \
    harness_is_status(rep, adnn_plan_create_loss_scale(ctx, &d, &plan), status,                \
                      "%s loss_scale: %s", bn, what);                                          \
    harness_contains(rep, adnn_last_error(), needle, "%s loss_scale: %s: message", bn, what);  \
    harness_ok(rep, plan == NULL, "%s loss_scale: %s: no plan", bn, what);                     \
    RESET();                                                                                   \
  } while (0)
  RESET();
  d.tensor_count = 0;
  BAD(ADNN_STATUS_BAD_PARAM, "tensor_count is 0", "T = 0");
  d.sizes = NULL;
  BAD(ADNN_STATUS_BAD_PARAM_NULL, "sizes is NULL", "sizes NULL");
  const int64_t zero[2] = {4, 0};
  d.sizes = zero;
  BAD(ADNN_STATUS_BAD_PARAM, "sizes[1] is 0", "a size of 0");
  d.kind = (adnn_loss_scale_kind)7;
  BAD(ADNN_STATUS_BAD_PARAM, "not an adnn_loss_scale_kind", "an unknown kind");
  d.dtype = (adnn_dtype)42;
  BAD(ADNN_STATUS_BAD_PARAM, "dtype 42 is not an adnn_dtype", "dtype 42");
  d.dtype = ADNN_DTYPE_I32;
  BAD(ADNN_STATUS_NOT_SUPPORTED, "dtype i32 is not supported", "i32 tensors");
  plan = NULL;
  harness_is_status(rep, adnn_plan_create_loss_scale(ctx, NULL, &plan),
                    ADNN_STATUS_BAD_PARAM_NULL, "%s loss_scale: a NULL descriptor", bn);
  harness_is_status(rep, adnn_plan_create_loss_scale(ctx, &d, NULL), ADNN_STATUS_BAD_PARAM_NULL,
                    "%s loss_scale: a NULL plan pointer", bn);
#undef BAD

  /* Executions: found_inf missing, the scale missing, overlapping tensors. */
  if (!harness_is_status(rep, adnn_plan_create_loss_scale(ctx, &d, &plan), ADNN_STATUS_SUCCESS,
                         "%s loss_scale: 2 tensors", bn))
    return;
  void *buf = NULL;
  if (adnn_malloc(ctx, 1024, &buf) == ADNN_STATUS_SUCCESS) {
    char *b = buf;
    const void *in[1] = {b};
    void *out[3] = {b + 64, b + 128, b + 192};
    harness_is_status(rep, adnn_plan_execute_multi(plan, in, 1, out, 2), ADNN_STATUS_BAD_PARAM,
                      "%s loss_scale: the tensors without found_inf are refused", bn);
    harness_contains(rep, adnn_last_error(), "3 output(s)",
                     "%s loss_scale: the message gives the output count", bn);
    harness_is_status(rep, adnn_plan_execute_multi(plan, in, 0, out, 3), ADNN_STATUS_BAD_PARAM,
                      "%s loss_scale: no scale is refused", bn);
    out[2] = b + 70; /* found_inf inside t_0 */
    harness_is_status(rep, adnn_plan_execute_multi(plan, in, 1, out, 3), ADNN_STATUS_BAD_PARAM,
                      "%s loss_scale: found_inf overlapping a tensor is refused", bn);
    adnn_free(ctx, buf);
  }
  adnn_plan_destroy(plan);
#undef RESET
  ls_thresholds(rep, ctx, bn);
}

const harness_op_traits harness_loss_scale_traits = {
    .inputs = ls_inputs,
    .output = ls_output,
    .set_dtype = ls_set_dtype,
    .oracle = ls_oracle,
    .tolerance = ls_tolerance,
    .fill = ls_fill,
    .variant_count = 1,
    .cases = ls_cases,
    .oracle_selftests = ls_oracle_selftests,
    .bad_descriptors = ls_bad_descriptors,
    .outputs = ls_outputs,
    .inout = ls_inout,
    .fill_outputs = ls_fill_outputs,
    .oracle_outputs = ls_oracle_outputs,
};
