/* activation backward in the conformance harness: traits, oracle (doc/ops.md,
 * "Activation backward": the derivative table with its kink, NaN and
 * infinity rules), cases, the oracle's self-tests and the bad descriptors. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The forward descriptors that the cases' backward descriptors point to. A
 * case is run by harness_submit before the next one is built, so a small
 * ring of them outlives every case that uses one. */
#define FORWARD_SLOTS 16
static adnn_activation_desc forward_slots[FORWARD_SLOTS];
static unsigned forward_next;

adnn_activation_desc *harness_activation_backward_forward(harness_desc *hd) {
  adnn_activation_desc *f = &forward_slots[forward_next++ % FORWARD_SLOTS];
  adnn_activation_desc_init(f);
  adnn_activation_backward_desc_init(&hd->activation_backward);
  hd->activation_backward.forward = f;
  return f;
}

static const adnn_activation_desc *fwd(const harness_desc *hd) {
  return hd->activation_backward.forward;
}

static int actb_inputs(const harness_desc *hd, harness_tensor *in) {
  in[0] = (harness_tensor){"x", fwd(hd)->x};
  in[1] = (harness_tensor){"dy", fwd(hd)->y};
  return 2;
}

static adnn_tensor_desc actb_output(const harness_desc *hd) { return fwd(hd)->x; }

static void actb_set_dtype(harness_desc *hd, adnn_dtype dt) {
  adnn_activation_desc *f = (adnn_activation_desc *)fwd(hd); /* one of forward_slots */
  f->x.dtype = f->y.dtype = dt;
}

/* A few operations per element, exp / erfc of float accuracy (doc/numerics.md);
 * F16/BF16: that F32 bound plus one rounding of dx. */
static harness_tolerance actb_tolerance(const harness_desc *hd, adnn_dtype dt) {
  (void)hd;
  const harness_tolerance f32 = {4e-6, 1e-5};
  return harness_lowp_tolerance(dt, dt == ADNN_DTYPE_F64 ? (harness_tolerance){1e-13, 1e-12} : f32,
                                f32, 1.0);
}

/* x in [-4, 4): both sides of every kink; dy in [-2, 2). */
static void actb_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  (void)hd;
  (void)n_in;
  harness_fill_uniform(&in[0], r, -4.0, 4.0);
  harness_fill_uniform(&in[1], r, -2.0, 2.0);
}

/* ------------------------------------------------------------------------ */
/* Oracle                                                                    */
/* ------------------------------------------------------------------------ */

static long double sigmoidl(long double x) { return 1.0L / (1.0L + expl(-x)); }

/* dx for x and dy, from doc/ops.md's table, in long double. NaN x gives NaN;
 * where the derivative is 0 on a whole region (relu for x <= 0, clamp at or
 * outside its bounds, hardswish below -3) dx is 0 whatever dy is; elsewhere
 * dx = dy * f'(x). Kinks as PyTorch: relu'(0) = 0, leaky_relu'(0) = alpha,
 * elu'(0) = alpha, hardswish'(-3) = -1/2 and hardswish'(3) = 3/2; softplus
 * follows PyTorch's threshold (f' = 1 above 20); the smooth kinds take their
 * limits at +-inf. */
long double harness_activation_grad_oracle(const adnn_activation *a, long double x,
                                           long double g) {
  if (isnan(x)) return x;
  const int infinite = x == INFINITY || x == -INFINITY;
  const long double alpha = a->alpha, beta = a->beta;
  const long double pi = acosl(-1.0L);
  switch (a->kind) {
    case ADNN_ACTIVATION_IDENTITY: return g;
    case ADNN_ACTIVATION_RELU: return x > 0 ? g : 0.0L;
    case ADNN_ACTIVATION_LEAKY_RELU: return x > 0 ? g : alpha * g;
    case ADNN_ACTIVATION_ELU: return x > 0 ? g : g * alpha * expl(x);
    case ADNN_ACTIVATION_CLAMP: return (x > alpha && x < beta) ? g : 0.0L;
    case ADNN_ACTIVATION_SIGMOID: return g * (sigmoidl(x) * sigmoidl(-x));
    case ADNN_ACTIVATION_TANH: {
      /* sech^2: 1 - tanh^2 would cancel to 0 for |x| > 22 in long double. */
      const long double ch = coshl(x);
      return g * (1.0L / (ch * ch));
    }
    case ADNN_ACTIVATION_GELU:
      if (infinite) return g * (x > 0 ? 1.0L : 0.0L);
      return g * (erfcl(-x / sqrtl(2.0L)) / 2.0L + x * expl(-x * x / 2.0L) / sqrtl(2.0L * pi));
    case ADNN_ACTIVATION_GELU_TANH: {
      if (infinite) return g * (x > 0 ? 1.0L : 0.0L);
      const long double k = sqrtl(2.0L / pi), c = 0.044715L;
      const long double t = tanhl(k * (x + c * x * x * x));
      return g * ((1.0L + t) / 2.0L + x / 2.0L * (1.0L - t) * (1.0L + t) * k * (1.0L + 3.0L * c * x * x));
    }
    case ADNN_ACTIVATION_SILU:
      if (infinite) return g * (x > 0 ? 1.0L : 0.0L);
      return g * (sigmoidl(x) * (1.0L + x * sigmoidl(-x)));
    case ADNN_ACTIVATION_SOFTPLUS: return x > 20 ? g : g * sigmoidl(x);
    case ADNN_ACTIVATION_HARDSWISH:
      if (x < -3) return 0.0L;
      return x <= 3 ? g * (x / 3.0L + 0.5L) : g;
  }
  return NAN;
}

static int same_dims(const adnn_tensor_desc *a, const adnn_tensor_desc *b) {
  if (a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return 0;
  return 1;
}

static int actb_oracle(const harness_desc *hd, const double *const *in, double *dx, char *why,
                       size_t why_len) {
  const adnn_activation_desc *d = fwd(hd);
  if (!same_dims(&d->x, &d->y)) {
    snprintf(why, why_len, "activation_backward: x and y dims differ");
    return -1;
  }
  /* The derivative is a value of the arithmetic's dtype (F32 for F16/BF16
   * tensors, which are widened to F32) before it multiplies dy: where it
   * underflows (gelu'(-30) is 1e-194, 0 in F32) an infinite dy gives NaN, as
   * in any F32 arithmetic. Where the rule selects 0 (the result for a NaN dy
   * is 0) dx is 0 whatever dy is. */
  const adnn_activation *a = &d->activation;
  const adnn_dtype compute = d->x.dtype == ADNN_DTYPE_F64 ? ADNN_DTYPE_F64 : ADNN_DTYPE_F32;
  harness_index ix, iy;
  for (harness_index_first(&ix, &d->x), harness_index_first(&iy, &d->y); ix.valid;
       harness_index_next(&ix, &d->x), harness_index_next(&iy, &d->y)) {
    const long double x = in[0][ix.offset], g = in[1][iy.offset];
    const int selects_zero = harness_activation_grad_oracle(a, x, NAN) == 0.0L;
    const long double slope = harness_round(compute, (double)harness_activation_grad_oracle(a, x, 1.0L));
    dx[ix.offset] = selects_zero ? 0.0 : (double)(slope * g);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

/* x values at every kink and edge: 0 and -0, the hardswish kinks +-3, the
 * clamp bounds of the cases (0, 6, -1.5, 2.5), softplus's threshold 20,
 * large values, infinities and NaN. Written into the first elements of x. */
static const double x_specials[] = {
    0.0, -0.0, 1e-7, -1e-7, 0.5, -0.5, 1.0, -1.0, 2.5, -1.5, 2.9, -2.9, 3.0, -3.0, 3.1, -3.1,
    6.0, -6.0, 5.9, 6.1, 10.0, -10.0, 13.0, -13.0, 14.0, -14.0, 19.5, 20.0, 20.5, -20.0,
    30.0, -30.0, 88.0, -88.0, 100.0, -100.0, NAN, INFINITY, -INFINITY};

/* (x, dy) pairs with a non-finite dy in a zero-derivative region and outside
 * it: where the rule selects 0 the result is 0, elsewhere NaN or inf. */
static const double pair_specials[][2] = {
    {-1.0, NAN}, {1.0, NAN}, {-1.0, INFINITY}, {1.0, -INFINITY}, {-5.0, NAN}, {5.0, NAN},
    {0.0, NAN},  {-4.0, INFINITY}, {25.0, NAN}, {-30.0, INFINITY}, {2.0, 0.0}, {-2.0, -0.0}};

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64

static void actb_case(harness_suite *suite, adnn_activation_kind k, double alpha, double beta,
                      int rank, const int64_t *dims, enum harness_layout layout, adnn_dtype dt,
                      int inplace, double scale, const char *tag) {
  harness_case c;
  harness_case_init(&c, harness_op_find("activation_backward"), dt, "%s(%g,%g) %s",
                    adnn_activation_name(k), alpha, beta, tag);
  adnn_activation_desc *f = harness_activation_backward_forward(&c.desc);
  f->activation.kind = k;
  f->activation.alpha = alpha;
  f->activation.beta = beta;
  f->x = harness_tensor_desc(dt, rank, dims, layout);
  f->y = inplace ? f->x : harness_tensor_desc(dt, rank, dims, HARNESS_PACKED);
  if (harness_case_alloc(&c) != 0) return;
  c.inplace = inplace ? 1 : -1; /* dx is dy's buffer */
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  harness_fill_uniform(&c.in[0], &r, -scale, scale);
  harness_fill_uniform(&c.in[1], &r, -2.0, 2.0);
  const int64_t n = harness_element_count(&f->x);
  const int64_t nx = (int64_t)(sizeof x_specials / sizeof x_specials[0]);
  const int64_t np = (int64_t)(sizeof pair_specials / sizeof pair_specials[0]);
  for (int64_t i = 0; i < n && i < nx; i++) harness_set_element(&c.in[0], i, x_specials[i]);
  for (int64_t i = 0; nx + i < n && i < np; i++) {
    harness_set_element(&c.in[0], nx + i, pair_specials[i][0]);
    harness_set_element(&c.in[1], nx + i, pair_specials[i][1]);
  }
  harness_submit(suite, &c);
}

/* x [7, 9] in the rows of a [7, 16] buffer, dy (y's layout) stored
 * transposed: dx and dy have different layouts. */
static void actb_strided_case(harness_suite *suite, adnn_activation_kind k, double alpha,
                              double beta, adnn_dtype dt) {
  const int64_t dims[2] = {7, 9};
  harness_case c;
  harness_case_init(&c, harness_op_find("activation_backward"), dt,
                    "%s(%g,%g) [7,9] x in [7,16], dy [9,7]^T", adnn_activation_name(k), alpha,
                    beta);
  adnn_activation_desc *f = harness_activation_backward_forward(&c.desc);
  f->activation.kind = k;
  f->activation.alpha = alpha;
  f->activation.beta = beta;
  f->x = f->y = harness_tensor_desc(dt, 2, dims, HARNESS_PACKED);
  f->x.strides[0] = 16;
  f->y.strides[0] = 1;
  f->y.strides[1] = 7;
  if (harness_case_alloc(&c) != 0) return;
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  harness_fill_uniform(&c.in[0], &r, -8.0, 8.0);
  harness_fill_uniform(&c.in[1], &r, -3.0, 3.0);
  static const double huge[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, -3.0, 3.0, 1e30, -1e30};
  for (int i = 0; i < 9; i++) harness_set_element(&c.in[0], 3 * i + 1, huge[i]);
  harness_submit(suite, &c);
}

static void actb_cases(harness_suite *suite) {
  static const struct {
    adnn_activation_kind k;
    double a, b;
  } acts[] = {{ADNN_ACTIVATION_IDENTITY, 0, 0},     {ADNN_ACTIVATION_RELU, 0, 0},
              {ADNN_ACTIVATION_LEAKY_RELU, 0.1, 0}, {ADNN_ACTIVATION_LEAKY_RELU, 0, 0},
              {ADNN_ACTIVATION_LEAKY_RELU, 2.5, 0}, {ADNN_ACTIVATION_ELU, 1.0, 0},
              {ADNN_ACTIVATION_ELU, 0.5, 0},        {ADNN_ACTIVATION_CLAMP, 0, 6},
              {ADNN_ACTIVATION_CLAMP, -1.5, 2.5},   {ADNN_ACTIVATION_CLAMP, 2.5, 2.5},
              {ADNN_ACTIVATION_SIGMOID, 0, 0},      {ADNN_ACTIVATION_TANH, 0, 0},
              {ADNN_ACTIVATION_GELU, 0, 0},         {ADNN_ACTIVATION_GELU_TANH, 0, 0},
              {ADNN_ACTIVATION_SILU, 0, 0},         {ADNN_ACTIVATION_SOFTPLUS, 0, 0},
              {ADNN_ACTIVATION_HARDSWISH, 0, 0}};
  const size_t n_acts = sizeof acts / sizeof acts[0];
  const int64_t d2[2] = {7, 33}, d4[4] = {2, 3, 5, 7}, d1[1] = {100003}, d5[5] = {2, 3, 2, 4, 3},
                d1003[1] = {1003}, dn[4] = {2, 5, 4, 3};
  for (size_t i = 0; i < n_acts; i++) {
    actb_case(suite, acts[i].k, acts[i].a, acts[i].b, 2, d2, HARNESS_PACKED, F32, 0, 8.0,
              "[7,33] specials");
    actb_case(suite, acts[i].k, acts[i].a, acts[i].b, 4, d4, HARNESS_PADDED, F32, 0, 120.0,
              "[2,3,5,7] wide padded");
    actb_case(suite, acts[i].k, acts[i].a, acts[i].b, 4, dn, HARNESS_NHWC, F32, i % 2, 5.0,
              i % 2 ? "[2,5,4,3] nhwc dx=dy" : "[2,5,4,3] nhwc");
    actb_case(suite, acts[i].k, acts[i].a, acts[i].b, 1, d1, HARNESS_PACKED, F32, (i + 1) % 2,
              4.0, (i + 1) % 2 ? "[100003] dx=dy" : "[100003]");
    actb_strided_case(suite, acts[i].k, acts[i].a, acts[i].b, F32);
    actb_strided_case(suite, acts[i].k, acts[i].a, acts[i].b, F64);
    actb_case(suite, acts[i].k, acts[i].a, acts[i].b, 2, d2, HARNESS_PACKED, F64, 0, 8.0,
              "[7,33] specials");
    actb_case(suite, acts[i].k, acts[i].a, acts[i].b, 1, d1003, HARNESS_PACKED, F64, 1, 120.0,
              "[1003] dx=dy");
  }
  actb_case(suite, ADNN_ACTIVATION_RELU, 0, 0, 0, NULL, HARNESS_PACKED, F32, 0, 1.0, "scalar");
  actb_case(suite, ADNN_ACTIVATION_GELU, 0, 0, 5, d5, HARNESS_PADDED, F32, 1, 3.0,
            "[2,3,2,4,3] padded dx=dy");
  actb_case(suite, ADNN_ACTIVATION_SILU, 0, 0, 5, d5, HARNESS_PADDED, F64, 0, 30.0,
            "[2,3,2,4,3] padded");
  /* F16 and BF16: every kind on the specials (rounded to the type: 1e-7
   * is 0 in F16's subnormals' reach, 1e30 an infinity), a wide padded range,
   * NHWC in place, a long vector whose length leaves a vector tail, and the
   * gathered layouts. */
  static const adnn_dtype lowp[2] = {ADNN_DTYPE_F16, ADNN_DTYPE_BF16};
  for (int t = 0; t < 2; t++)
    for (size_t i = 0; i < n_acts; i++) {
      actb_case(suite, acts[i].k, acts[i].a, acts[i].b, 2, d2, HARNESS_PACKED, lowp[t], 0, 8.0,
                "[7,33] specials");
      actb_case(suite, acts[i].k, acts[i].a, acts[i].b, 4, d4, HARNESS_PADDED, lowp[t], 0, 120.0,
                "[2,3,5,7] wide padded");
      actb_case(suite, acts[i].k, acts[i].a, acts[i].b, 4, dn, HARNESS_NHWC, lowp[t], 1, 5.0,
                "[2,5,4,3] nhwc dx=dy");
      actb_case(suite, acts[i].k, acts[i].a, acts[i].b, 1, d1003, HARNESS_PACKED, lowp[t], i % 2,
                4.0, i % 2 ? "[1003] dx=dy" : "[1003]");
      actb_strided_case(suite, acts[i].k, acts[i].a, acts[i].b, lowp[t]);
    }
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracle                                                  */
/* ------------------------------------------------------------------------ */

static void actb_oracle_selftests(const harness_report *rep) {
  /* Derivatives by hand (dy = 1 unless said): elu(0.5)'(-1) = 0.5 / e;
   * sigmoid'(0) = 1/4; tanh'(1) = 1 - tanh(1)^2 = 0.419974341614026;
   * gelu'(1) = Phi(1) + phi(1) = 0.841344746068543 + 0.241970724519143;
   * silu'(1) = s (1 + (1 - s)) with s = sigma(1) = 0.731058578630005, i.e.
   * 0.927670511871487; softplus'(20) = sigma(20) = 1 - 2.06115361819e-9;
   * hardswish'(1) = 1/3 + 1/2. gelu_tanh'(1) = 1.0829640838457826 is
   * PyTorch 1.13.1's value (torch.nn.functional.gelu(approximate='tanh')),
   * as are the kink values, which the same run printed: relu'(0) = 0,
   * leaky_relu(0.1)'(0) = 0.1, elu(0.5)'(0) = 0.5, hardtanh(0, 6)' = 0 at 0
   * and 6, hardswish'(-3) = -0.5, softplus'(25) = 1; hardswish'(3) = 1.5 is
   * PyTorch's scalar (and CUDA) formula, x <= 3 ? x / 3 + 1/2 (its CPU vector
   * path gives 1 there: doc/ops.md). */
  static const struct {
    adnn_activation_kind k;
    double a, b, x, dy, want;
  } v[] = {
      {ADNN_ACTIVATION_RELU, 0, 0, 0, 1, 0},
      {ADNN_ACTIVATION_RELU, 0, 0, 2, 3, 3},
      {ADNN_ACTIVATION_RELU, 0, 0, -1, NAN, 0},
      {ADNN_ACTIVATION_RELU, 0, 0, NAN, 1, NAN},
      {ADNN_ACTIVATION_LEAKY_RELU, 0.1, 0, 0, 1, 0.1},
      {ADNN_ACTIVATION_LEAKY_RELU, 0.1, 0, -1, NAN, NAN},
      {ADNN_ACTIVATION_ELU, 0.5, 0, 0, 1, 0.5},
      {ADNN_ACTIVATION_ELU, 0.5, 0, -1, 1, 0.18393972058572117},
      {ADNN_ACTIVATION_ELU, 0.5, 0, -INFINITY, 1, 0},
      {ADNN_ACTIVATION_CLAMP, 0, 6, 0, 1, 0},
      {ADNN_ACTIVATION_CLAMP, 0, 6, 6, 1, 0},
      {ADNN_ACTIVATION_CLAMP, 0, 6, 3, 2, 2},
      {ADNN_ACTIVATION_CLAMP, 0, 6, 7, NAN, 0},
      {ADNN_ACTIVATION_SIGMOID, 0, 0, 0, 1, 0.25},
      {ADNN_ACTIVATION_SIGMOID, 0, 0, INFINITY, 1, 0},
      {ADNN_ACTIVATION_TANH, 0, 0, 1, 1, 0.41997434161402614},
      {ADNN_ACTIVATION_TANH, 0, 0, 0, 2, 2},
      {ADNN_ACTIVATION_GELU, 0, 0, 0, 1, 0.5},
      {ADNN_ACTIVATION_GELU, 0, 0, 1, 1, 1.0833154705876863},
      {ADNN_ACTIVATION_GELU, 0, 0, -INFINITY, 1, 0},
      {ADNN_ACTIVATION_GELU, 0, 0, INFINITY, 1, 1},
      {ADNN_ACTIVATION_GELU_TANH, 0, 0, 1, 1, 1.0829640838457826},
      {ADNN_ACTIVATION_GELU_TANH, 0, 0, 0, 1, 0.5},
      {ADNN_ACTIVATION_SILU, 0, 0, 1, 1, 0.9276705118714869},
      {ADNN_ACTIVATION_SILU, 0, 0, INFINITY, 1, 1},
      {ADNN_ACTIVATION_SILU, 0, 0, -INFINITY, 1, 0},
      {ADNN_ACTIVATION_SOFTPLUS, 0, 0, 0, 1, 0.5},
      {ADNN_ACTIVATION_SOFTPLUS, 0, 0, 20, 1, 0.9999999979388464},
      {ADNN_ACTIVATION_SOFTPLUS, 0, 0, 25, 1, 1},
      {ADNN_ACTIVATION_HARDSWISH, 0, 0, -3, 1, -0.5},
      {ADNN_ACTIVATION_HARDSWISH, 0, 0, 3, 1, 1.5},
      {ADNN_ACTIVATION_HARDSWISH, 0, 0, -3.5, NAN, 0},
      {ADNN_ACTIVATION_HARDSWISH, 0, 0, 1, 1, 5.0 / 6.0},
      {ADNN_ACTIVATION_IDENTITY, 0, 0, NAN, 1, NAN},
  };
  int good = 1;
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    const adnn_activation a = {v[i].k, v[i].a, v[i].b};
    const double got = (double)harness_activation_grad_oracle(&a, v[i].x, v[i].dy);
    if (!harness_close(got, v[i].want, 1e-15)) {
      good = 0;
      harness_diag(rep, "  %s'(%g) * %g = %.17g, expected %.17g", adnn_activation_name(v[i].k),
                   v[i].x, v[i].dy, got, v[i].want);
    }
  }
  harness_ok(rep, good, "oracle: activation derivatives by hand and from PyTorch");
}

/* ------------------------------------------------------------------------ */
/* Bad descriptors and execute-time checks                                   */
/* ------------------------------------------------------------------------ */

static void actb_bad_descriptors(const harness_report *rep, adnn_context *ctx, const char *bn) {
  adnn_plan *plan = NULL;
  adnn_activation_desc f;
  adnn_activation_desc_init(&f);
  const int64_t dims[2] = {3, 4}, other[2] = {4, 3};
  f.activation.kind = ADNN_ACTIVATION_RELU;
  f.x = f.y = harness_tensor_desc(F32, 2, dims, HARNESS_PACKED);
  adnn_activation_backward_desc d;
  adnn_activation_backward_desc_init(&d);
  harness_is_status(rep, adnn_plan_create_activation_backward(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM_NULL, "%s activation_backward: NULL forward", bn);
  harness_contains(rep, adnn_last_error(), "forward", "%s: the message names the forward", bn);
  d.forward = &f;
  f.struct_size = 8;
  harness_is_status(rep, adnn_plan_create_activation_backward(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s activation_backward: forward struct_size too small",
                    bn);
  f.struct_size = sizeof f;
  f.y = harness_tensor_desc(F32, 2, other, HARNESS_PACKED);
  harness_is_status(rep, adnn_plan_create_activation_backward(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s activation_backward: forward y of other dims", bn);
  harness_contains(rep, adnn_last_error(), "forward", "%s: the message says it is the forward's",
                   bn);
  f.y = f.x;
  f.activation.kind = (adnn_activation_kind)99;
  harness_is_status(rep, adnn_plan_create_activation_backward(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s activation_backward: unknown activation kind", bn);
  f.activation.kind = ADNN_ACTIVATION_RELU;
  /* x with zero strides is a fine forward input but cannot be dx. */
  f.x.strides[0] = f.x.strides[1] = 0;
  harness_is_status(rep, adnn_plan_create_activation_backward(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s activation_backward: dx (x's layout) overlapping",
                    bn);
  harness_contains(rep, adnn_last_error(), "dx", "%s: the message names dx", bn);
  f.x = f.y;
  f.x.dtype = F64;
  harness_is_status(rep, adnn_plan_create_activation_backward(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s activation_backward: x and y dtypes differ", bn);
  f.x.dtype = F32;

  /* Execution: dy transposed (another layout than x), so dx may not be dy. */
  f.y.strides[0] = 1;
  f.y.strides[1] = 3;
  adnn_status st = adnn_plan_create_activation_backward(ctx, &d, &plan);
  if (st == ADNN_STATUS_NOT_SUPPORTED) {
    harness_skip(rep, "%s: no activation_backward plan: %s", bn, adnn_last_error());
    return;
  }
  if (!harness_ok(rep, st == ADNN_STATUS_SUCCESS, "%s activation_backward plan for the execute "
                  "checks", bn))
    return;
  void *x = NULL, *dy = NULL, *dx = NULL;
  adnn_malloc(ctx, 12 * sizeof(float), &x);
  adnn_malloc(ctx, 13 * sizeof(float), &dy);
  adnn_malloc(ctx, 12 * sizeof(float), &dx);
  const void *ins[2] = {x, dy};
  harness_is_status(rep, adnn_plan_execute(plan, ins, 1, dx), ADNN_STATUS_BAD_PARAM,
                    "%s execute: 1 input for a 2-input plan is BAD_PARAM", bn);
  harness_is_status(rep, adnn_plan_execute(plan, ins, 2, dy), ADNN_STATUS_BAD_PARAM,
                    "%s execute: dx == dy with another layout is BAD_PARAM", bn);
  harness_is_status(rep, adnn_plan_execute(plan, ins, 2, (char *)dy + 4), ADNN_STATUS_BAD_PARAM,
                    "%s execute: dx partly overlapping dy is BAD_PARAM", bn);
  harness_is_status(rep, adnn_plan_execute(plan, ins, 2, x), ADNN_STATUS_BAD_PARAM,
                    "%s execute: dx == x is BAD_PARAM", bn);
  harness_is_status(rep, adnn_plan_execute(plan, ins, 2, dx), ADNN_STATUS_SUCCESS,
                    "%s execute: a separate dx runs", bn);
  adnn_plan_destroy(plan);
  adnn_free(ctx, x);
  adnn_free(ctx, dy);
  adnn_free(ctx, dx);
}

const harness_op_traits harness_activation_backward_traits = {
    .inputs = actb_inputs,
    .output = actb_output,
    .set_dtype = actb_set_dtype,
    .oracle = actb_oracle,
    .tolerance = actb_tolerance,
    .fill = actb_fill,
    .variant_count = 1,
    .cases = actb_cases,
    .oracle_selftests = actb_oracle_selftests,
    .bad_descriptors = actb_bad_descriptors,
};
