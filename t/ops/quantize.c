/* quantize and dequantize in the conformance harness: traits, oracles written
 * from doc/ops.md's definition in double and long double arithmetic (not
 * kernels/common/quantize.h), cases per tensor and per channel over packed,
 * NHWC and padded layouts with ties at .5, saturation, NaN and infinities,
 * the oracles' self-tests and the bad descriptors with their exact statuses.
 *
 * The comparison is exact (tolerance 0). Unwritten elements: the harness
 * poisons y with 0xFF bytes, NaN for dequantize's F32 y but -1 (I8) or 255
 * (U8) for quantize's; those are values quantize can produce, so an element
 * left alone is caught only where the expected value differs, which the
 * random data makes almost every element. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define F32 ADNN_DTYPE_F32
#define I8 ADNN_DTYPE_I8
#define U8 ADNN_DTYPE_U8

/* Both descriptors have the same fields; these helpers take them apart. */
typedef struct qfields {
  const adnn_tensor_desc *x, *y;
  int32_t axis;
  float scale;
  int32_t zp;
} qfields;

static qfields q_of(const harness_desc *hd, int quantize) {
  if (quantize)
    return (qfields){&hd->quantize.x, &hd->quantize.y, hd->quantize.axis, hd->quantize.scale,
                     hd->quantize.zero_point};
  return (qfields){&hd->dequantize.x, &hd->dequantize.y, hd->dequantize.axis,
                   hd->dequantize.scale, hd->dequantize.zero_point};
}

static int common_inputs(const qfields *f, harness_tensor *in) {
  in[0] = (harness_tensor){"x", *f->x};
  if (f->axis < 0) return 1;
  const int64_t c = f->x->dims[f->axis];
  in[1] = (harness_tensor){"scales", harness_vector_desc(F32, c)};
  in[2] = (harness_tensor){"zero_points", harness_vector_desc(ADNN_DTYPE_I32, c)};
  return 3;
}

static int quantize_inputs(const harness_desc *hd, harness_tensor *in) {
  const qfields f = q_of(hd, 1);
  return common_inputs(&f, in);
}
static int dequantize_inputs(const harness_desc *hd, harness_tensor *in) {
  const qfields f = q_of(hd, 0);
  return common_inputs(&f, in);
}
static adnn_tensor_desc quantize_output(const harness_desc *hd) { return hd->quantize.y; }
static adnn_tensor_desc dequantize_output(const harness_desc *hd) { return hd->dequantize.y; }
static void quantize_set_dtype(harness_desc *hd, adnn_dtype dt) {
  hd->quantize.x.dtype = dt;
  if (hd->quantize.y.dtype != I8 && hd->quantize.y.dtype != U8) hd->quantize.y.dtype = I8;
}
static void dequantize_set_dtype(harness_desc *hd, adnn_dtype dt) {
  hd->dequantize.x.dtype = dt;
  hd->dequantize.y.dtype = F32;
}

static harness_tolerance exact(const harness_desc *hd, adnn_dtype dt) {
  (void)hd;
  (void)dt;
  return (harness_tolerance){0.0, 0.0};
}

/* The definition, independently: x / scale in double rounded to F32 is the
 * correctly rounded F32 quotient (53 >= 2 * 24 + 2 bits, so the double
 * rounding is innocuous); rintl rounds to nearest even under the default
 * mode the tests run in; the sum and the saturation are in long double. */
static long double harness_quantize_element(double x, double scale, double zp, int u8) {
  const long double lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
  if (isnan(x)) return zp;
  const float q = (float)(x / scale);
  if (isinf(q)) return q > 0 ? hi : lo;
  long double v = rintl((long double)q) + zp;
  return v < lo ? lo : v > hi ? hi : v;
}

/* (float)(x - zp) * scale: the difference is exact in double, the product of
 * two F32 values is exact in double and then rounded once to F32. */
static double dequantize_element(double x, double scale, double zp) {
  return (double)(float)((double)(float)(x - zp) * scale);
}

static int common_oracle(const qfields *f, int quantize, const double *const *in, double *y,
                         char *why, size_t why_len) {
  if (f->x->rank != f->y->rank) {
    snprintf(why, why_len, "y's rank differs from x's");
    return -1;
  }
  for (int i = 0; i < f->x->rank; i++)
    if (f->x->dims[i] != f->y->dims[i]) {
      snprintf(why, why_len, "y's dims differ from x's");
      return -1;
    }
  const int64_t n = harness_element_count(f->x);
  int64_t inner = 1;
  if (f->axis >= 0)
    for (int i = f->axis + 1; i < f->x->rank; i++) inner *= f->x->dims[i];
  const int u8 = (quantize ? f->y->dtype : f->x->dtype) == U8;
  for (int64_t i = 0; i < n; i++) {
    double scale = f->scale, zp = f->zp;
    if (f->axis >= 0) {
      const int64_t c = (i / inner) % f->x->dims[f->axis];
      scale = in[1][c];
      zp = in[2][c];
    }
    const double x = in[0][harness_offset(f->x, i)];
    y[harness_offset(f->y, i)] = quantize ? (double)harness_quantize_element(x, scale, zp, u8)
                                          : dequantize_element(x, scale, zp);
  }
  return 0;
}

static int quantize_oracle(const harness_desc *hd, const double *const *in, double *y, char *why,
                           size_t why_len) {
  const qfields f = q_of(hd, 1);
  return common_oracle(&f, 1, in, y, why, why_len);
}
static int dequantize_oracle(const harness_desc *hd, const double *const *in, double *y,
                             char *why, size_t why_len) {
  const qfields f = q_of(hd, 0);
  return common_oracle(&f, 0, in, y, why, why_len);
}

/* Per-channel scales in [0.01, 0.2), zero points inside the type's range. */
static void fill_params(harness_buffer *in, int n_in, int u8, tap_rng *r) {
  if (n_in < 3) return;
  harness_fill_uniform(&in[1], r, 0.01, 0.2);
  harness_fill_uniform(&in[2], r, u8 ? 100.0 : -20.0, u8 ? 160.0 : 20.0);
}

static void quantize_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  harness_fill_uniform(&in[0], r, -30.0, 30.0);
  fill_params(in, n_in, hd->quantize.y.dtype == U8, r);
}
static void dequantize_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  const int u8 = hd->dequantize.x.dtype == U8;
  harness_fill_uniform(&in[0], r, u8 ? 0.0 : -128.0, u8 ? 255.0 : 127.0);
  fill_params(in, n_in, u8, r);
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

static void q_case(harness_suite *s, int quantize, adnn_dtype it, int rank, const int64_t *dims,
                   enum harness_layout lx, enum harness_layout ly, int32_t axis, float scale, int32_t zp,
                   const char *tag) {
  harness_case c;
  const adnn_dtype xt = quantize ? F32 : it, yt = quantize ? it : F32;
  harness_case_init(&c, harness_op_find(quantize ? "quantize" : "dequantize"), xt,
                    "%s->%s %s", adnn_dtype_name(xt), adnn_dtype_name(yt), tag);
  adnn_quantize_desc q;
  adnn_quantize_desc_init(&q);
  q.x = harness_tensor_desc(xt, rank, dims, lx);
  q.y = harness_tensor_desc(yt, rank, dims, ly);
  q.axis = axis;
  q.scale = scale;
  q.zero_point = zp;
  if (quantize) {
    c.desc.quantize = q;
  } else {
    adnn_dequantize_desc *d = &c.desc.dequantize;
    adnn_dequantize_desc_init(d);
    d->x = q.x;
    d->y = q.y;
    d->axis = q.axis;
    d->scale = q.scale;
    d->zero_point = q.zero_point;
  }
  if (harness_case_alloc(&c) != 0) return;
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  const int u8 = it == U8;
  const int64_t n = harness_element_count(&q.x);
  if (quantize) {
    /* Mostly in range, 10% far out (saturation); every fifth element an
     * exact tie k + 0.5 of a power-of-two scale's quotient (the per-tensor
     * tie cases use scale 0.25, so that x = (k + 0.5) / 4 is exact). */
    harness_fill_uniform(&c.in[0], &r, -40.0, 40.0);
    for (int64_t i = 0; i < n; i++) {
      const double u = tap_rng_uniform(&r, 0.0, 1.0);
      if (u < 0.1) harness_set_element(&c.in[0], i, tap_rng_uniform(&r, -1e4, 1e4));
      else if (u < 0.3) {
        const double k = floor(tap_rng_uniform(&r, -200.0, 200.0));
        harness_set_element(&c.in[0], i, (k + 0.5) * (double)scale);
      }
    }
    const double specials[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e-45, -1e-45,
                               3.4e38, -3.4e38, 0.5 * scale, -0.5 * scale, 1.5 * scale,
                               2.5 * scale, -2.5 * scale};
    for (int64_t i = 0; i < n && i < (int64_t)(sizeof specials / sizeof specials[0]); i++)
      harness_set_element(&c.in[0], i, specials[i]);
  } else {
    harness_fill_uniform(&c.in[0], &r, u8 ? 0.0 : -128.0, u8 ? 255.0 : 127.0);
    const double ends[] = {u8 ? 0.0 : -128.0, u8 ? 255.0 : 127.0, 0.0, 1.0};
    for (int64_t i = 0; i < n && i < 4; i++) harness_set_element(&c.in[0], i, ends[i]);
  }
  fill_params(c.in, c.n_in, u8, &r);
  /* A ragged first channel's scale is a power of two, for exact ties too. */
  if (c.n_in == 3) harness_set_element(&c.in[1], 0, 0.25);
  harness_submit(s, &c);
}

static void quant_cases(harness_suite *s, int quantize) {
  const int64_t vec[1] = {1003}, img[4] = {2, 5, 7, 9}, big[2] = {3, 100003};
  const adnn_dtype types[2] = {I8, U8};
  for (int t = 0; t < 2; t++) {
    const adnn_dtype it = types[t];
    const int32_t zp = it == U8 ? 128 : -3;
    q_case(s, quantize, it, 1, vec, HARNESS_PACKED, HARNESS_PACKED, -1, 0.25f, zp,
           "[1003] scale 0.25");
    q_case(s, quantize, it, 1, vec, HARNESS_PACKED, HARNESS_PACKED, -1, 0.0731f, zp,
           "[1003] scale 0.0731");
    q_case(s, quantize, it, 1, vec, HARNESS_PACKED, HARNESS_PACKED, -1, 1e-40f, zp,
           "[1003] subnormal scale");
    q_case(s, quantize, it, 4, img, HARNESS_PACKED, HARNESS_NHWC, -1, 0.1f, zp,
           "[2,5,7,9] nchw->nhwc");
    /* A padded y only for dequantize: the harness expects the gaps of y to
     * stay NaN, which the 0xFF poison of an integer y does not read as. */
    q_case(s, quantize, it, 4, img, HARNESS_PADDED, quantize ? HARNESS_PACKED : HARNESS_PADDED,
           -1, 0.3f, zp, "[2,5,7,9] padded x");
    q_case(s, quantize, it, 4, img, HARNESS_PACKED, HARNESS_PACKED, 1, 1.0f, 0,
           "[2,5,7,9] axis 1");
    q_case(s, quantize, it, 4, img, HARNESS_PACKED, HARNESS_PACKED, 3, 1.0f, 0,
           "[2,5,7,9] axis 3");
    q_case(s, quantize, it, 4, img, HARNESS_NHWC, HARNESS_PACKED, 1, 1.0f, 0,
           "[2,5,7,9] nhwc axis 1");
    q_case(s, quantize, it, 2, big, HARNESS_PACKED, HARNESS_PACKED, 0, 1.0f, 0,
           "[3,100003] axis 0 (threads)");
    q_case(s, quantize, it, 0, NULL, HARNESS_PACKED, HARNESS_PACKED, -1, 0.5f, zp, "rank 0");
  }
}

static void quantize_cases(harness_suite *s) { quant_cases(s, 1); }
static void dequantize_cases(harness_suite *s) { quant_cases(s, 0); }

/* ------------------------------------------------------------------------ */
/* Oracle self-tests and bad descriptors                                     */
/* ------------------------------------------------------------------------ */

static void quantize_oracle_selftests(const harness_report *r) {
  /* By hand: 0.5 / 1 = 0.5 -> 0 (even); 1.5 -> 2; 2.5 -> 2; -2.5 -> -2;
   * 2.5 + zp 1 = 3; 1000 saturates to 127 (I8) and 255 (U8); -1000 to -128
   * and 0; NaN gives zp; 0.3 / 0.1: the F32 quotient of 0.3f by 0.1f is
   * 3.0000001 (0x1.800002p+1), which rounds to 3. */
  const struct {
    double x, scale, zp;
    int u8;
    long double want;
  } k[] = {
      {0.5, 1, 0, 0, 0},     {1.5, 1, 0, 0, 2},      {2.5, 1, 0, 0, 2},
      {-2.5, 1, 0, 0, -2},   {2.5, 1, 1, 0, 3},      {1000, 1, 0, 0, 127},
      {1000, 1, 0, 1, 255},  {-1000, 1, 0, 0, -128}, {-1000, 1, 0, 1, 0},
      {NAN, 1, 7, 0, 7},     {(double)0.3f, (double)0.1f, 0, 0, 3},
      {INFINITY, 1, 0, 1, 255},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    const long double got = harness_quantize_element(k[i].x, k[i].scale, k[i].zp, k[i].u8);
    harness_ok(r, got == k[i].want, "quantize oracle: %g / %g + %g = %Lg (want %Lg)", k[i].x,
               k[i].scale, k[i].zp, got, k[i].want);
  }
}

static void dequantize_oracle_selftests(const harness_report *r) {
  /* By hand: (5 - 3) * 0.5 = 1; (-128 - 0) * 0.25 = -32; (255 - 128) * 0.1f
   * = 127 * 0.100000001490116 = 12.7000001892, whose nearest F32 is
   * 12.699999809265137 (3.8e-7 below; the next F32 up is 5.7e-7 above). */
  harness_ok(r, dequantize_element(5, 0.5, 3) == 1.0, "dequantize oracle: (5-3)*0.5 = 1");
  harness_ok(r, dequantize_element(-128, 0.25, 0) == -32.0, "dequantize oracle: -128*0.25");
  harness_ok(r, dequantize_element(255, (double)0.1f, 128) == (double)12.699999809265137f,
             "dequantize oracle: (255-128)*0.1f = %.17g", dequantize_element(255, (double)0.1f, 128));
}

static void quantize_bad_descriptors(const harness_report *rep, adnn_context *ctx,
                                     const char *bn) {
  adnn_plan *plan = NULL;
  const int64_t dims[2] = {3, 4}, other[2] = {4, 3};
  adnn_quantize_desc d;
  adnn_quantize_desc_init(&d);
  harness_is_status(rep, adnn_plan_create_quantize(ctx, NULL, &plan), ADNN_STATUS_BAD_PARAM_NULL,
                    "%s quantize: a NULL desc is BAD_PARAM_NULL", bn);
  d.x = harness_tensor_desc(F32, 2, dims, HARNESS_PACKED);
  d.y = harness_tensor_desc(I8, 2, dims, HARNESS_PACKED);
  d.y.dtype = ADNN_DTYPE_I32;
  harness_is_status(rep, adnn_plan_create_quantize(ctx, &d, &plan), ADNN_STATUS_NOT_SUPPORTED,
                    "%s quantize: f32 -> i32 is NOT_SUPPORTED", bn);
  harness_contains(rep, adnn_last_error(), "no quantization from f32 to i32", "%s message", bn);
  d.y.dtype = I8;
  d.x.dtype = ADNN_DTYPE_F64;
  harness_is_status(rep, adnn_plan_create_quantize(ctx, &d, &plan), ADNN_STATUS_NOT_SUPPORTED,
                    "%s quantize: f64 -> i8 is NOT_SUPPORTED", bn);
  d.x = harness_tensor_desc(F32, 2, dims, HARNESS_PACKED);
  const float bad_scales[4] = {0.0f, -1.0f, INFINITY, NAN};
  for (int i = 0; i < 4; i++) {
    d.scale = bad_scales[i];
    harness_is_status(rep, adnn_plan_create_quantize(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                      "%s quantize: scale %g is BAD_PARAM", bn, (double)bad_scales[i]);
    harness_contains(rep, adnn_last_error(), "must be finite and > 0", "%s message", bn);
  }
  d.scale = 1.0f;
  d.zero_point = 128;
  harness_is_status(rep, adnn_plan_create_quantize(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s quantize: zero point 128 for i8 is BAD_PARAM", bn);
  harness_contains(rep, adnn_last_error(), "outside i8's range -128..127", "%s message", bn);
  d.y.dtype = U8;
  d.zero_point = -1;
  harness_is_status(rep, adnn_plan_create_quantize(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s quantize: zero point -1 for u8 is BAD_PARAM", bn);
  d.zero_point = 0;
  d.axis = 2;
  harness_is_status(rep, adnn_plan_create_quantize(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s quantize: axis 2 of rank 2 is BAD_PARAM", bn);
  harness_contains(rep, adnn_last_error(), "axis 2 is out of range", "%s message", bn);
  d.axis = -2;
  harness_is_status(rep, adnn_plan_create_quantize(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s quantize: axis -2 is BAD_PARAM (only -1 means per tensor)", bn);
  d.axis = -1;
  d.y = harness_tensor_desc(I8, 2, other, HARNESS_PACKED);
  harness_is_status(rep, adnn_plan_create_quantize(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s quantize: y dims [4,3] for x [3,4] is BAD_PARAM", bn);
  /* Per channel the per-tensor scale is ignored (a bad one is not refused),
   * and execute wants three inputs. */
  d.y = harness_tensor_desc(I8, 2, dims, HARNESS_PACKED);
  d.axis = 1;
  d.scale = 0.0f;
  adnn_status st = adnn_plan_create_quantize(ctx, &d, &plan);
  if (!harness_ok(rep, st == ADNN_STATUS_SUCCESS, "%s quantize axis 1 plan", bn)) return;
  void *x = NULL;
  adnn_malloc(ctx, 12 * sizeof(float) + 64, &x);
  const void *ins[1] = {x};
  harness_is_status(rep, adnn_plan_execute(plan, ins, 1, (char *)x + 48),
                    ADNN_STATUS_BAD_PARAM, "%s quantize axis 1: one input is BAD_PARAM", bn);
  adnn_plan_destroy(plan);
  adnn_free(ctx, x);
}

static void dequantize_bad_descriptors(const harness_report *rep, adnn_context *ctx,
                                       const char *bn) {
  adnn_plan *plan = NULL;
  const int64_t dims[2] = {3, 4};
  adnn_dequantize_desc d;
  adnn_dequantize_desc_init(&d);
  harness_is_status(rep, adnn_plan_create_dequantize(ctx, NULL, &plan),
                    ADNN_STATUS_BAD_PARAM_NULL, "%s dequantize: a NULL desc is BAD_PARAM_NULL", bn);
  d.x = harness_tensor_desc(I8, 2, dims, HARNESS_PACKED);
  d.y = harness_tensor_desc(ADNN_DTYPE_F16, 2, dims, HARNESS_PACKED);
  harness_is_status(rep, adnn_plan_create_dequantize(ctx, &d, &plan), ADNN_STATUS_NOT_SUPPORTED,
                    "%s dequantize: i8 -> f16 is NOT_SUPPORTED", bn);
  d.y.dtype = F32;
  d.x.dtype = F32;
  harness_is_status(rep, adnn_plan_create_dequantize(ctx, &d, &plan), ADNN_STATUS_NOT_SUPPORTED,
                    "%s dequantize: f32 -> f32 is NOT_SUPPORTED", bn);
  d.x.dtype = U8;
  d.scale = -0.5f;
  harness_is_status(rep, adnn_plan_create_dequantize(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s dequantize: scale -0.5 is BAD_PARAM", bn);
  d.scale = 1.0f;
  d.zero_point = 256;
  harness_is_status(rep, adnn_plan_create_dequantize(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s dequantize: zero point 256 for u8 is BAD_PARAM", bn);
  d.zero_point = 0;
  d.axis = 5;
  harness_is_status(rep, adnn_plan_create_dequantize(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s dequantize: axis 5 of rank 2 is BAD_PARAM", bn);
}

const harness_op_traits harness_quantize_traits = {
    .inputs = quantize_inputs,
    .output = quantize_output,
    .set_dtype = quantize_set_dtype,
    .oracle = quantize_oracle,
    .tolerance = exact,
    .fill = quantize_fill,
    .variant_count = 1,
    .cases = quantize_cases,
    .oracle_selftests = quantize_oracle_selftests,
    .bad_descriptors = quantize_bad_descriptors,
};

const harness_op_traits harness_dequantize_traits = {
    .inputs = dequantize_inputs,
    .output = dequantize_output,
    .set_dtype = dequantize_set_dtype,
    .oracle = dequantize_oracle,
    .tolerance = exact,
    .fill = dequantize_fill,
    .variant_count = 1,
    .cases = dequantize_cases,
    .oracle_selftests = dequantize_oracle_selftests,
    .bad_descriptors = dequantize_bad_descriptors,
};
