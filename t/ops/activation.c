/* activation in the conformance harness: traits, oracle (doc/ops.md,
 * "Activations", also the epilogue of conv2d and batch norm), cases, the
 * oracle's self-tests, and the bad descriptors and execute-time checks. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int activation_inputs(const harness_desc *hd, harness_tensor *in) {
  in[0] = (harness_tensor){"x", hd->activation.x};
  return 1;
}

static adnn_tensor_desc activation_output(const harness_desc *hd) { return hd->activation.y; }

static void activation_set_dtype(harness_desc *hd, adnn_dtype dt) {
  hd->activation.x.dtype = hd->activation.y.dtype = dt;
}

static harness_tolerance activation_tolerance(const harness_desc *hd, adnn_dtype dt) {
  /* F16/BF16: the F32 bound plus one rounding of y (doc/numerics.md). */
  const harness_tolerance f32 = {4e-6, 1e-5};
  return harness_lowp_tolerance(dt, dt == ADNN_DTYPE_F64 ? (harness_tolerance){1e-13, 1e-12} : f32,
                                f32, 1.0);
}

/* [-4, 4): both sides of every knee (hardswish at +-3, clamp(0, 6)). */
static void activation_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  harness_fill_uniform(&in[0], r, -4.0, 4.0);
}

/* ------------------------------------------------------------------------ */
/* Oracle                                                                    */
/* ------------------------------------------------------------------------ */

/* doc/ops.md's table, with its limits at +-inf written out where the formula
 * would give inf * 0 or inf / inf. */
long double harness_activation_oracle(const adnn_activation *a, long double x) {
  if (isnan(x)) return x; /* NaN maps to NaN for every kind */
  /* Compared with INFINITY rather than isinf(): under valgrind, which runs
   * long double arithmetic in double, isinf's comparison with LDBL_MAX fails. */
  const int infinite = x == INFINITY || x == -INFINITY;
  const long double alpha = a->alpha, beta = a->beta;
  const long double pi = acosl(-1.0L);
  switch (a->kind) {
    case ADNN_ACTIVATION_IDENTITY: return x;
    case ADNN_ACTIVATION_RELU: return x < 0 ? 0.0L : x;
    case ADNN_ACTIVATION_LEAKY_RELU:
      if (x >= 0) return x;
      return infinite && alpha == 0 ? 0.0L : alpha * x;
    case ADNN_ACTIVATION_ELU: return x < 0 ? alpha * expm1l(x) : x;
    case ADNN_ACTIVATION_CLAMP: return x < alpha ? alpha : (x > beta ? beta : x);
    case ADNN_ACTIVATION_SIGMOID: return 1.0L / (1.0L + expl(-x));
    case ADNN_ACTIVATION_TANH: return tanhl(x);
    case ADNN_ACTIVATION_GELU:
      if (infinite) return x > 0 ? x : 0.0L;
      /* x * Phi(x) with Phi(x) = (1 + erf(x / sqrt 2)) / 2 = erfc(-x / sqrt 2) / 2,
       * the second form keeping its relative accuracy for negative x */
      return x * erfcl(-x / sqrtl(2.0L)) / 2.0L;
    case ADNN_ACTIVATION_GELU_TANH:
      if (infinite) return x > 0 ? x : 0.0L;
      return x * (1.0L + tanhl(sqrtl(2.0L / pi) * (x + 0.044715L * x * x * x))) / 2.0L;
    case ADNN_ACTIVATION_SILU:
      if (infinite) return x > 0 ? x : 0.0L;
      return x / (1.0L + expl(-x));
    case ADNN_ACTIVATION_SOFTPLUS: return (x > 0 ? x : 0.0L) + log1pl(expl(-fabsl(x)));
    case ADNN_ACTIVATION_HARDSWISH: return x <= -3 ? 0.0L : (x >= 3 ? x : x * (x + 3) / 6.0L);
  }
  return NAN; /* not an activation of doc/ops.md */
}

static int same_dims(const adnn_tensor_desc *a, const adnn_tensor_desc *b) {
  if (a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return 0;
  return 1;
}

static int activation_oracle(const harness_desc *hd, const double *const *in, double *y,
                             char *why, size_t why_len) {
  const adnn_activation_desc *d = &hd->activation;
  if (!same_dims(&d->x, &d->y)) {
    snprintf(why, why_len, "activation: x and y dims differ");
    return -1;
  }
  harness_index ix, iy;
  for (harness_index_first(&ix, &d->x), harness_index_first(&iy, &d->y); ix.valid;
       harness_index_next(&ix, &d->x), harness_index_next(&iy, &d->y))
    y[iy.offset] = (double)harness_activation_oracle(&d->activation, in[0][ix.offset]);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

/* Values that exercise every branch and the edges: near 0, the hardswish and
 * clamp knees, large positive and negative, and non-finite values. Written
 * into the first elements of every case. */
static const double specials[] = {
    0.0, -0.0, 1e-7, -1e-7, 1e-3, -1e-3, 0.25, -0.25, 0.5, -0.5, 1.0, -1.0, 2.9, -2.9,
    3.0, -3.0, 3.1, -3.1, 6.0, -6.0, 6.5, 10.0, -10.0, 15.0, -15.0, 20.0, -20.0, 30.0,
    -30.0, 50.0, -50.0, 88.0, -88.0, 100.0, -100.0, NAN, INFINITY, -INFINITY};

static void act_case(harness_suite *suite, adnn_activation_kind k, double alpha, double beta,
                     int rank, const int64_t *dims, enum harness_layout layout, adnn_dtype dt,
                     int inplace, double scale, const char *tag) {
  harness_case c;
  harness_case_init(&c, harness_op_find("activation"), dt, "%s(%g,%g) %s",
                    adnn_activation_name(k), alpha, beta, tag);
  adnn_activation_desc *d = &c.desc.activation;
  adnn_activation_desc_init(d);
  d->activation.kind = k;
  d->activation.alpha = alpha;
  d->activation.beta = beta;
  d->x = harness_tensor_desc(dt, rank, dims, layout);
  d->y = inplace ? d->x : harness_tensor_desc(dt, rank, dims, HARNESS_PACKED);
  if (harness_case_alloc(&c) != 0) return;
  c.inplace = inplace ? 0 : -1;
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  harness_fill_uniform(&c.in[0], &r, -scale, scale);
  const int64_t n = harness_element_count(&d->x);
  const int64_t ns = (int64_t)(sizeof specials / sizeof specials[0]);
  for (int64_t i = 0; i < n && i < ns; i++) harness_set_element(&c.in[0], i, specials[i]);
  harness_submit(suite, &c);
}

/* x [7, 9] in the rows of a [7, 16] buffer, y [7, 9] stored transposed
 * (strides 1, 7), with huge values among the specials at every third
 * element: odd strides on both sides. */
static void act_strided_case(harness_suite *suite, adnn_activation_kind k, double alpha,
                             double beta, adnn_dtype dt) {
  static const double huge_specials[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0,
                                         -3.0, 3.0, 1e30, -1e30};
  const int64_t dims[2] = {7, 9};
  harness_case c;
  harness_case_init(&c, harness_op_find("activation"), dt, "%s(%g,%g) [7,9] in [7,16] to [9,7]^T",
                    adnn_activation_name(k), alpha, beta);
  adnn_activation_desc *d = &c.desc.activation;
  adnn_activation_desc_init(d);
  d->activation.kind = k;
  d->activation.alpha = alpha;
  d->activation.beta = beta;
  d->x = d->y = harness_tensor_desc(dt, 2, dims, HARNESS_PACKED);
  d->x.strides[0] = 16;
  d->y.strides[0] = 1;
  d->y.strides[1] = 7;
  if (harness_case_alloc(&c) != 0) return;
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  harness_fill_uniform(&c.in[0], &r, -8.0, 8.0);
  for (int i = 0; i < 9; i++) harness_set_element(&c.in[0], 3 * i + 1, huge_specials[i]);
  harness_submit(suite, &c);
}

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64

static void activation_cases(harness_suite *suite) {
  static const struct {
    adnn_activation_kind k;
    double a, b;
  } acts[] = {{ADNN_ACTIVATION_IDENTITY, 0, 0},     {ADNN_ACTIVATION_RELU, 0, 0},
              {ADNN_ACTIVATION_LEAKY_RELU, 0.1, 0}, {ADNN_ACTIVATION_LEAKY_RELU, 2.5, 0},
              {ADNN_ACTIVATION_ELU, 1.0, 0},        {ADNN_ACTIVATION_ELU, 0.3, 0},
              {ADNN_ACTIVATION_CLAMP, 0, 6},        {ADNN_ACTIVATION_CLAMP, -1.5, 2.5},
              {ADNN_ACTIVATION_SIGMOID, 0, 0},      {ADNN_ACTIVATION_TANH, 0, 0},
              {ADNN_ACTIVATION_GELU, 0, 0},         {ADNN_ACTIVATION_GELU_TANH, 0, 0},
              {ADNN_ACTIVATION_SILU, 0, 0},         {ADNN_ACTIVATION_SOFTPLUS, 0, 0},
              {ADNN_ACTIVATION_HARDSWISH, 0, 0}};
  const size_t n_acts = sizeof acts / sizeof acts[0];
  const int64_t d2[2] = {7, 33}, d4[4] = {2, 3, 5, 7}, d1[1] = {100003}, d5[5] = {2, 3, 2, 4, 3},
                d1003[1] = {1003};
  for (size_t i = 0; i < n_acts; i++) {
    /* specials + values in [-8, 8): every branch near the knees */
    act_case(suite, acts[i].k, acts[i].a, acts[i].b, 2, d2, HARNESS_PACKED, F32, 0, 8.0,
             "[7,33] specials");
    /* wide range: large positive and negative */
    act_case(suite, acts[i].k, acts[i].a, acts[i].b, 4, d4, HARNESS_PADDED, F32, 0, 120.0,
             "[2,3,5,7] wide padded");
  }
  for (size_t i = 0; i < n_acts; i++)
    act_case(suite, acts[i].k, acts[i].a, acts[i].b, 1, d1, HARNESS_PACKED, F32, i % 2, 4.0,
             i % 2 ? "[100003] in-place" : "[100003]");
  act_case(suite, ADNN_ACTIVATION_RELU, 0, 0, 0, NULL, HARNESS_PACKED, F32, 0, 1.0, "scalar");
  act_case(suite, ADNN_ACTIVATION_GELU, 0, 0, 5, d5, HARNESS_PADDED, F32, 1, 3.0,
           "[2,3,2,4,3] padded in-place");
  /* From the former CUDA-only test: odd strides on both sides, F32 and F64. */
  for (size_t i = 0; i < n_acts; i++) {
    act_strided_case(suite, acts[i].k, acts[i].a, acts[i].b, F32);
    act_strided_case(suite, acts[i].k, acts[i].a, acts[i].b, F64);
  }
  /* F64: every activation on the CPU plugin's reference kernels. */
  for (size_t i = 0; i < n_acts; i++) {
    act_case(suite, acts[i].k, acts[i].a, acts[i].b, 2, d2, HARNESS_PACKED, F64, 0, 8.0,
             "[7,33] specials x8");
    act_case(suite, acts[i].k, acts[i].a, acts[i].b, 1, d1003, HARNESS_PACKED, F64, 1, 120.0,
             "[1003] in-place");
  }
  act_case(suite, ADNN_ACTIVATION_SIGMOID, 0, 0, 2, d2, HARNESS_PACKED, F64, 0, 40.0,
           "[7,33] specials");
  act_case(suite, ADNN_ACTIVATION_GELU, 0, 0, 2, d2, HARNESS_PACKED, F64, 0, 8.0,
           "[7,33] specials");
  act_case(suite, ADNN_ACTIVATION_SOFTPLUS, 0, 0, 2, d2, HARNESS_PACKED, F64, 1, 40.0,
           "[7,33] specials in-place");
  act_case(suite, ADNN_ACTIVATION_HARDSWISH, 0, 0, 4, d4, HARNESS_PADDED, F64, 0, 8.0,
           "[2,3,5,7] padded");
  /* F16 and BF16: every activation on the specials (rounded to the type,
   * NaN and infinities included), a wide padded range, and a long vector in
   * place whose length leaves a vector tail. */
  static const adnn_dtype lowp[2] = {ADNN_DTYPE_F16, ADNN_DTYPE_BF16};
  for (int t = 0; t < 2; t++)
    for (size_t i = 0; i < n_acts; i++) {
      act_case(suite, acts[i].k, acts[i].a, acts[i].b, 2, d2, HARNESS_PACKED, lowp[t], 0, 8.0,
               "[7,33] specials");
      act_case(suite, acts[i].k, acts[i].a, acts[i].b, 4, d4, HARNESS_PADDED, lowp[t], 0, 120.0,
               "[2,3,5,7] wide padded");
      act_case(suite, acts[i].k, acts[i].a, acts[i].b, 1, d1003, HARNESS_PACKED, lowp[t], 1, 4.0,
               "[1003] in-place");
    }
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracle                                                  */
/* ------------------------------------------------------------------------ */

static void activation_oracle_selftests(const harness_report *rep) {
  /* Values from the definitions by hand or from standard tables:
   * Phi(1) = 0.841344746068543 (normal table); tanh(sqrt(2/pi) * 1.044715) =
   * 0.682383981216554, so gelu_tanh(1) = 0.841191990608277; sigma(1) =
   * 1 / (1 + 1/e) = 0.731058578630005; log(2) = 0.693147180559945;
   * softplus(-100) = log1p(e^-100) = e^-100 = 3.720075976020836e-44;
   * hardswish(1) = 1 * 4 / 6. */
  static const struct {
    adnn_activation_kind k;
    double a, b, x, want;
  } v[] = {
      {ADNN_ACTIVATION_RELU, 0, 0, -1, 0},
      {ADNN_ACTIVATION_RELU, 0, 0, NAN, NAN},
      {ADNN_ACTIVATION_LEAKY_RELU, 0.1, 0, -2, -0.2},
      {ADNN_ACTIVATION_LEAKY_RELU, 0, 0, -INFINITY, 0},
      {ADNN_ACTIVATION_ELU, 0.5, 0, -INFINITY, -0.5},
      {ADNN_ACTIVATION_CLAMP, 0, 6, 7, 6},
      {ADNN_ACTIVATION_CLAMP, 0, 6, NAN, NAN},
      {ADNN_ACTIVATION_SIGMOID, 0, 0, 0, 0.5},
      {ADNN_ACTIVATION_SIGMOID, 0, 0, -INFINITY, 0},
      {ADNN_ACTIVATION_TANH, 0, 0, INFINITY, 1},
      {ADNN_ACTIVATION_GELU, 0, 0, 1, 0.8413447460685429},
      {ADNN_ACTIVATION_GELU, 0, 0, -INFINITY, 0},
      {ADNN_ACTIVATION_GELU_TANH, 0, 0, 1, 0.8411919906082768},
      {ADNN_ACTIVATION_GELU_TANH, 0, 0, -INFINITY, 0},
      {ADNN_ACTIVATION_SILU, 0, 0, 1, 0.7310585786300049},
      {ADNN_ACTIVATION_SILU, 0, 0, -INFINITY, 0},
      {ADNN_ACTIVATION_SOFTPLUS, 0, 0, 100, 100},
      {ADNN_ACTIVATION_SOFTPLUS, 0, 0, -100, 3.720075976020836e-44},
      {ADNN_ACTIVATION_SOFTPLUS, 0, 0, 0, 0.6931471805599453},
      {ADNN_ACTIVATION_HARDSWISH, 0, 0, 1, 4.0 / 6.0},
      {ADNN_ACTIVATION_HARDSWISH, 0, 0, -4, 0},
      {ADNN_ACTIVATION_HARDSWISH, 0, 0, -INFINITY, 0},
      {ADNN_ACTIVATION_HARDSWISH, 0, 0, NAN, NAN},
  };
  int good = 1;
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    const adnn_activation a = {v[i].k, v[i].a, v[i].b};
    const double got = (double)harness_activation_oracle(&a, v[i].x);
    if (!harness_close(got, v[i].want, 1e-15)) {
      good = 0;
      harness_diag(rep, "  %s(%g) = %.17g, expected %.17g", adnn_activation_name(v[i].k), v[i].x,
                   got, v[i].want);
    }
  }
  harness_ok(rep, good, "oracle: activation values by hand");
}

/* ------------------------------------------------------------------------ */
/* Bad descriptors and execute-time checks                                   */
/* ------------------------------------------------------------------------ */

static void activation_bad_descriptors(const harness_report *rep, adnn_context *ctx,
                                       const char *bn) {
  adnn_plan *plan = NULL;
  adnn_activation_desc ad;
  adnn_activation_desc_init(&ad);
  const int64_t dims[2] = {3, 4};
  ad.activation.kind = ADNN_ACTIVATION_RELU;
  ad.x = harness_tensor_desc(F32, 2, dims, HARNESS_PACKED);
  ad.y = ad.x;
  ad.y.strides[0] = ad.y.strides[1] = 1;
  harness_is_status(rep, adnn_plan_create_activation(ctx, &ad, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s activation: overlapping y strides are BAD_PARAM", bn);
  /* Mixed dtypes (an F16 x, an F32 y), with the 16-bit types on every
   * backend: the core refuses them before any backend sees the op. */
  ad.x = harness_tensor_desc(ADNN_DTYPE_F16, 2, dims, HARNESS_PACKED);
  ad.y = harness_tensor_desc(F32, 2, dims, HARNESS_PACKED);
  harness_is_status(rep, adnn_plan_create_activation(ctx, &ad, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s activation: an f16 x with an f32 y is BAD_PARAM", bn);
  harness_contains(rep, adnn_last_error(), "y has dtype f32 but x has f16",
                   "%s activation: the message names both dtypes", bn);
  ad.x = harness_tensor_desc(F32, 2, dims, HARNESS_PACKED);

  /* The wrong number of inputs, and overlaps, at execution: needs a plan. */
  ad.y = ad.x;
  adnn_status st = adnn_plan_create_activation(ctx, &ad, &plan);
  if (st == ADNN_STATUS_NOT_SUPPORTED) {
    harness_skip(rep, "%s: wrong n_inputs: no activation plan: %s", bn, adnn_last_error());
    return;
  }
  if (!harness_ok(rep, st == ADNN_STATUS_SUCCESS, "%s activation plan for the n_inputs checks",
                  bn))
    return;
  void *x = NULL, *y = NULL;
  /* x has one float more than the tensor, so that y = x + 1 float still lies
   * inside x's allocation (the pointer checks pass) and only overlaps it. */
  adnn_malloc(ctx, 13 * sizeof(float), &x);
  adnn_malloc(ctx, 12 * sizeof(float), &y);
  const void *ins[2] = {x, x};
  harness_is_status(rep, adnn_plan_execute(plan, ins, 2, y), ADNN_STATUS_BAD_PARAM,
                    "%s execute: 2 inputs for a 1-input plan is BAD_PARAM", bn);
  harness_is_status(rep, adnn_plan_execute(plan, ins, 0, y), ADNN_STATUS_BAD_PARAM,
                    "%s execute: 0 inputs for a 1-input plan is BAD_PARAM", bn);
  harness_is_status(rep, adnn_plan_execute(plan, ins, 1, (char *)x + 4), ADNN_STATUS_BAD_PARAM,
                    "%s execute: y partly overlapping x is BAD_PARAM", bn);
  adnn_plan_destroy(plan);
  adnn_free(ctx, x);
  adnn_free(ctx, y);
}

const harness_op_traits harness_activation_traits = {
    .inputs = activation_inputs,
    .output = activation_output,
    .set_dtype = activation_set_dtype,
    .oracle = activation_oracle,
    .tolerance = activation_tolerance,
    .fill = activation_fill,
    .variant_count = 1,
    .cases = activation_cases,
    .oracle_selftests = activation_oracle_selftests,
    .bad_descriptors = activation_bad_descriptors,
};
