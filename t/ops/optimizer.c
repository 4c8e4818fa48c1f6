/* The fused optimizer step in the conformance harness: traits, oracle
 * (doc/ops.md, "Optimizer step"), cases, the oracle's self-tests and bad
 * descriptors. Every output (parameters and states) is read and updated, so
 * each case runs once, from initial values the traits give. Plans start at
 * step 1; several steps with a changing learning rate are t/optimizer-steps's
 * job (adnn_plan_set_optimizer_step). */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64

/* States per parameter tensor: SGD's momentum buffer, Adam's m and v. */
static int opt_states(const adnn_optimizer_desc *d) {
  if (d->kind == ADNN_OPTIMIZER_SGD) return d->momentum != 0.0 ? 1 : 0;
  return 2;
}

static int opt_inputs(const harness_desc *hd, harness_tensor *in) {
  const adnn_optimizer_desc *d = &hd->optimizer;
  for (size_t i = 0; i < d->tensor_count; i++)
    in[i] = (harness_tensor){"grad", harness_vector_desc(d->dtype, d->sizes[i])};
  return (int)d->tensor_count;
}

static int opt_outputs(const harness_desc *hd, harness_tensor *out) {
  const adnn_optimizer_desc *d = &hd->optimizer;
  static const char *const names[3] = {"p", "buf", "m"};
  const int states = opt_states(d);
  const size_t T = d->tensor_count;
  for (int k = 0; k <= states; k++)
    for (size_t i = 0; i < T; i++) {
      const char *name = k == 0 ? names[0] : d->kind == ADNN_OPTIMIZER_SGD ? names[1]
                                           : k == 1                        ? "m"
                                                                           : "v";
      out[k * T + i] = (harness_tensor){name, harness_vector_desc(d->dtype, d->sizes[i])};
    }
  return (int)(T * (size_t)(1 + states));
}

static adnn_tensor_desc opt_output(const harness_desc *hd) {
  return harness_vector_desc(hd->optimizer.dtype, hd->optimizer.sizes[0]);
}

static unsigned opt_inout(const harness_desc *hd) {
  const int n = (int)(hd->optimizer.tensor_count * (size_t)(1 + opt_states(&hd->optimizer)));
  return n >= 32 ? ~0u : (1u << n) - 1u;
}

static void opt_set_dtype(harness_desc *hd, adnn_dtype dt) { hd->optimizer.dtype = dt; }

/* Per step the update is a few operations per element in the parameters'
 * precision (doc/numerics.md). */
static harness_tolerance opt_tolerance(const harness_desc *hd, adnn_dtype dt) {
  (void)hd;
  return dt == F64 ? (harness_tolerance){1e-14, 1e-14} : (harness_tolerance){2e-6, 4e-6};
}

static void opt_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  (void)hd;
  for (int i = 0; i < n_in; i++) harness_fill_uniform(&in[i], r, -1.0, 1.0);
}

/* Parameters in [-1, 1), momentum buffers and first moments in [-0.5, 0.5),
 * second moments in [0, 0.5) (they are never negative). */
static void opt_fill_outputs(const harness_desc *hd, harness_buffer *out, int n_out, tap_rng *r) {
  const adnn_optimizer_desc *d = &hd->optimizer;
  const int T = (int)d->tensor_count;
  for (int o = 0; o < n_out; o++) {
    const int k = o / T;
    if (k == 0) harness_fill_uniform(&out[o], r, -1.0, 1.0);
    else if (k == 1) harness_fill_uniform(&out[o], r, -0.5, 0.5);
    else harness_fill_uniform(&out[o], r, 0.0, 0.5);
  }
}

/* One step of d at step number t (1 at the first) and learning rate lr, on
 * element arrays p, g and the states a (buf or m) and b (v), of n elements,
 * in long double: PyTorch's rules as doc/ops.md writes them. */
void harness_optimizer_oracle_step(const adnn_optimizer_desc *d, long double lr, int64_t t,
                                   double *p, const double *g, double *a, double *b, int64_t n,
                                   adnn_dtype dt);
void harness_optimizer_oracle_step(const adnn_optimizer_desc *d, long double lr, int64_t t,
                                   double *p, const double *g, double *a, double *b, int64_t n,
                                   adnn_dtype dt) {
  const long double wd = d->weight_decay;
  const long double bc1 = 1.0L - powl(d->beta1, (long double)t);
  const long double bc2 = 1.0L - powl(d->beta2, (long double)t);
  for (int64_t k = 0; k < n; k++) {
    long double w = p[k], gr = g[k];
    if (d->kind == ADNN_OPTIMIZER_SGD) {
      if (wd != 0.0L) gr += wd * w;
      if (d->momentum != 0.0) {
        const long double buf =
            t == 1 ? gr : (long double)d->momentum * a[k] + (1.0L - d->dampening) * gr;
        a[k] = harness_round(dt, (double)buf);
        gr = d->nesterov ? gr + (long double)d->momentum * buf : buf;
      }
      w -= lr * gr;
    } else {
      if (d->kind == ADNN_OPTIMIZER_ADAMW) w *= 1.0L - lr * wd;
      else if (wd != 0.0L) gr += wd * w;
      const long double m = (long double)d->beta1 * a[k] + (1.0L - d->beta1) * gr;
      const long double v = (long double)d->beta2 * b[k] + (1.0L - d->beta2) * gr * gr;
      a[k] = harness_round(dt, (double)m);
      b[k] = harness_round(dt, (double)v);
      w -= lr * (m / bc1) / (sqrtl(v / bc2) + (long double)d->epsilon);
    }
    p[k] = harness_round(dt, (double)w);
  }
}

static int opt_oracle_outputs(const harness_desc *hd, const double *const *in,
                              double *const *out, char *why, size_t why_len) {
  const adnn_optimizer_desc *d = &hd->optimizer;
  if (d->tensor_count == 0 || d->sizes == NULL) {
    snprintf(why, why_len, "optimizer: no tensors");
    return -1;
  }
  const size_t T = d->tensor_count;
  const int states = opt_states(d);
  for (size_t i = 0; i < T; i++)
    harness_optimizer_oracle_step(d, d->lr, 1, out[i], in[i], states >= 1 ? out[T + i] : NULL,
                                  states >= 2 ? out[2 * T + i] : NULL, d->sizes[i], d->dtype);
  return 0;
}

static int opt_oracle(const harness_desc *hd, const double *const *in, double *y, char *why,
                      size_t why_len) {
  (void)hd;
  (void)in;
  (void)y;
  snprintf(why, why_len, "optimizer: the harness calls oracle_outputs");
  return -1;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct opt_shape {
  const char *label;
  adnn_optimizer_kind kind;
  double lr, weight_decay, momentum, dampening;
  int nesterov;
  double beta1, beta2, epsilon;
  size_t T;
  const int64_t *sizes;
} opt_shape;

static const int64_t sz_one[1] = {1};
static const int64_t sz_three[3] = {7, 1, 33};
static const int64_t sz_five[5] = {40000, 5, 16384, 16385, 64};
static const int64_t sz_two[2] = {100, 3};

static const opt_shape opt_table[] = {
    {"sgd", ADNN_OPTIMIZER_SGD, 0.1, 0, 0, 0, 0, 0.9, 0.999, 1e-8, 3, sz_three},
    {"sgd wd", ADNN_OPTIMIZER_SGD, 0.05, 0.01, 0, 0, 0, 0.9, 0.999, 1e-8, 5, sz_five},
    {"sgd momentum", ADNN_OPTIMIZER_SGD, 0.1, 0.001, 0.9, 0.1, 0, 0.9, 0.999, 1e-8, 3, sz_three},
    {"sgd nesterov", ADNN_OPTIMIZER_SGD, 0.1, 0.01, 0.9, 0, 1, 0.9, 0.999, 1e-8, 5, sz_five},
    {"sgd momentum one", ADNN_OPTIMIZER_SGD, 1.0, 0, 0.5, 0, 0, 0.9, 0.999, 1e-8, 1, sz_one},
    {"adam", ADNN_OPTIMIZER_ADAM, 1e-3, 0, 0, 0, 0, 0.9, 0.999, 1e-8, 3, sz_three},
    {"adam wd", ADNN_OPTIMIZER_ADAM, 1e-2, 0.1, 0, 0, 0, 0.8, 0.99, 1e-6, 5, sz_five},
    {"adamw", ADNN_OPTIMIZER_ADAMW, 1e-2, 0.01, 0, 0, 0, 0.9, 0.999, 1e-8, 5, sz_five},
    {"adamw beta0", ADNN_OPTIMIZER_ADAMW, 0.1, 0.5, 0, 0, 0, 0.0, 0.0, 1e-3, 2, sz_two},
};

static void opt_case(harness_suite *suite, const opt_shape *s, adnn_dtype dt) {
  harness_case c;
  harness_case_init(&c, harness_op_find("optimizer"), dt, "optimizer %s T%zu lr%g", s->label,
                    s->T, s->lr);
  adnn_optimizer_desc *d = &c.desc.optimizer;
  adnn_optimizer_desc_init(d);
  d->kind = s->kind;
  d->dtype = dt;
  d->tensor_count = s->T;
  d->sizes = s->sizes;
  d->lr = s->lr;
  d->weight_decay = s->weight_decay;
  d->momentum = s->momentum;
  d->dampening = s->dampening;
  d->nesterov = s->nesterov;
  d->beta1 = s->beta1;
  d->beta2 = s->beta2;
  d->epsilon = s->epsilon;
  if (harness_case_alloc(&c) != 0) return;
  harness_case_fill(&c);
  harness_submit(suite, &c);
}

static void opt_cases(harness_suite *s) {
  for (size_t i = 0; i < sizeof opt_table / sizeof opt_table[0]; i++) {
    opt_case(s, &opt_table[i], F32);
    opt_case(s, &opt_table[i], F64);
  }
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracle                                                  */
/* ------------------------------------------------------------------------ */

static void opt_oracle_selftests(const harness_report *rep) {
  adnn_optimizer_desc d;
  /* SGD, lr 0.5, weight decay 0.1, p = 2, grad = 1: g = 1.2, p = 2 - 0.6 =
   * 1.4. With momentum 0.9 at step 1 the buffer is g itself (1.2), at step 2
   * with buffer 1 and dampening 0.5 it is 0.9 + 0.6 = 1.5 and p = 2 - 0.75;
   * Nesterov at step 2 (dampening 0) uses g + 0.9 * (0.9 + 1.2) = 3.09. */
  adnn_optimizer_desc_init(&d);
  d.kind = ADNN_OPTIMIZER_SGD;
  d.weight_decay = 0.1;
  double p = 2, g = 1, buf = 7;
  harness_optimizer_oracle_step(&d, 0.5L, 1, &p, &g, NULL, NULL, 1, F64);
  int good = harness_close(p, 1.4, 1e-15);
  d.momentum = 0.9;
  p = 2;
  harness_optimizer_oracle_step(&d, 0.5L, 1, &p, &g, &buf, NULL, 1, F64);
  good &= harness_close(buf, 1.2, 1e-15) && harness_close(p, 1.4, 1e-15);
  d.dampening = 0.5;
  p = 2;
  buf = 1;
  harness_optimizer_oracle_step(&d, 0.5L, 2, &p, &g, &buf, NULL, 1, F64);
  good &= harness_close(buf, 1.5, 1e-15) && harness_close(p, 1.25, 1e-15);
  d.dampening = 0;
  d.nesterov = 1;
  p = 2;
  buf = 1;
  harness_optimizer_oracle_step(&d, 0.5L, 2, &p, &g, &buf, NULL, 1, F64);
  good &= harness_close(buf, 2.1, 1e-15) && harness_close(p, 2 - 0.5 * 3.09, 1e-15);
  harness_ok(rep, good, "oracle: SGD with weight decay, momentum, dampening, Nesterov by hand");

  /* Adam at step 1 from zero states: m = (1 - b1) g, v = (1 - b2) g^2, and
   * the bias corrections make the step lr * g / (|g| + eps): p = 1 - 0.1 *
   * 4 / (4 + 1e-8)... with eps = 0 exactly 0.9. AdamW with weight decay 0.5
   * first scales p by 1 - 0.1 * 0.5 = 0.95: 0.95 - 0.1 = 0.85. */
  adnn_optimizer_desc_init(&d);
  d.kind = ADNN_OPTIMIZER_ADAM;
  d.epsilon = 0.0;
  double m = 0, v = 0;
  p = 1;
  g = 4;
  harness_optimizer_oracle_step(&d, 0.1L, 1, &p, &g, &m, &v, 1, F64);
  good = harness_close(p, 0.9, 1e-15) && harness_close(m, 0.4, 1e-15) &&
         harness_close(v, 0.016, 1e-14);
  d.kind = ADNN_OPTIMIZER_ADAMW;
  d.weight_decay = 0.5;
  m = v = 0;
  p = 1;
  harness_optimizer_oracle_step(&d, 0.1L, 1, &p, &g, &m, &v, 1, F64);
  good &= harness_close(p, 0.85, 1e-15);
  /* Adam (coupled) with the same weight decay: g = 4 + 0.5 = 4.5, still a
   * unit step: p = 0.9. */
  d.kind = ADNN_OPTIMIZER_ADAM;
  m = v = 0;
  p = 1;
  harness_optimizer_oracle_step(&d, 0.1L, 1, &p, &g, &m, &v, 1, F64);
  good &= harness_close(p, 0.9, 1e-15) && harness_close(m, 0.45, 1e-15);
  harness_ok(rep, good, "oracle: Adam and AdamW first steps by hand (p %g)", p);
}

/* ------------------------------------------------------------------------ */
/* Bad descriptors                                                           */
/* ------------------------------------------------------------------------ */

static void opt_bad_descriptors(const harness_report *rep, adnn_context *ctx, const char *bn) {
  adnn_optimizer_desc d;
  adnn_plan *plan = NULL;
  const int64_t sizes[2] = {4, 3};
#define RESET()                    \
  do {                             \
    adnn_optimizer_desc_init(&d);  \
    d.tensor_count = 2;            \
    d.sizes = sizes;               \
  } while (0)
#define BAD(status, needle, what)                                                              \
  do {                                                                                         \
    plan = NULL;                                                                               \
    harness_is_status(rep, adnn_plan_create_optimizer(ctx, &d, &plan), status,                 \
                      "%s optimizer: %s", bn, what);                                           \
    harness_contains(rep, adnn_last_error(), needle, "%s optimizer: %s: message", bn, what);   \
    harness_ok(rep, plan == NULL, "%s optimizer: %s: no plan", bn, what);                      \
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
  d.momentum = 0.0;
  d.nesterov = 1;
  BAD(ADNN_STATUS_BAD_PARAM, "nesterov needs momentum", "Nesterov without momentum");
  d.momentum = 0.9;
  d.dampening = 0.1;
  d.nesterov = 1;
  BAD(ADNN_STATUS_BAD_PARAM, "dampening 0", "Nesterov with dampening");
  d.kind = ADNN_OPTIMIZER_ADAM;
  d.beta1 = 1.0;
  BAD(ADNN_STATUS_BAD_PARAM, "beta1 (1)", "beta1 = 1");
  d.kind = ADNN_OPTIMIZER_ADAMW;
  d.beta2 = -0.1;
  BAD(ADNN_STATUS_BAD_PARAM, "beta2", "beta2 < 0");
  d.kind = ADNN_OPTIMIZER_ADAM;
  d.epsilon = 0.0;
  BAD(ADNN_STATUS_BAD_PARAM, "epsilon", "epsilon 0");
  d.lr = NAN;
  BAD(ADNN_STATUS_BAD_PARAM, "lr", "lr NaN");
  d.weight_decay = -1;
  BAD(ADNN_STATUS_BAD_PARAM, "weight_decay", "negative weight decay");
  d.momentum = -0.5;
  BAD(ADNN_STATUS_BAD_PARAM, "momentum", "negative momentum");
  d.kind = (adnn_optimizer_kind)9;
  BAD(ADNN_STATUS_BAD_PARAM, "not an adnn_optimizer_kind", "an unknown kind");
  d.dtype = ADNN_DTYPE_I32;
  BAD(ADNN_STATUS_BAD_PARAM, "dtype i32", "i32 parameters");
#undef BAD

  /* Executions with the wrong number of tensors, and the step setter. */
  RESET();
  d.momentum = 0.9;
  if (!harness_is_status(rep, adnn_plan_create_optimizer(ctx, &d, &plan), ADNN_STATUS_SUCCESS,
                         "%s optimizer: SGD with momentum, 2 tensors", bn))
    return;
  void *buf = NULL;
  if (adnn_malloc(ctx, 1024, &buf) == ADNN_STATUS_SUCCESS) {
    char *b = buf;
    const void *in[2] = {b, b + 64};
    void *out[4] = {b + 128, b + 192, b + 256, b + 320};
    harness_is_status(rep, adnn_plan_execute_multi(plan, in, 2, out, 2), ADNN_STATUS_BAD_PARAM,
                      "%s optimizer: 2 outputs instead of 4 (p and buf) are refused", bn);
    harness_contains(rep, adnn_last_error(), "4 output(s)",
                     "%s optimizer: the message gives the output count", bn);
    harness_is_status(rep, adnn_plan_execute_multi(plan, in, 1, out, 4), ADNN_STATUS_BAD_PARAM,
                      "%s optimizer: 1 gradient instead of 2 is refused", bn);
    harness_is_status(rep, adnn_plan_execute(plan, in, 2, out[0]), ADNN_STATUS_BAD_PARAM,
                      "%s optimizer: adnn_plan_execute (one output) is refused", bn);
    out[3] = b + 130; /* overlaps out[0] */
    harness_is_status(rep, adnn_plan_execute_multi(plan, in, 2, out, 4), ADNN_STATUS_BAD_PARAM,
                      "%s optimizer: overlapping states are refused", bn);
    adnn_free(ctx, buf);
  }
  harness_is_status(rep, adnn_plan_set_optimizer_step(plan, 0.1, 0), ADNN_STATUS_BAD_PARAM,
                    "%s optimizer: step 0 is refused", bn);
  harness_contains(rep, adnn_last_error(), "step (0)", "%s optimizer: step 0: message", bn);
  harness_is_status(rep, adnn_plan_set_optimizer_step(plan, -1.0, 2), ADNN_STATUS_BAD_PARAM,
                    "%s optimizer: a negative lr is refused", bn);
  harness_is_status(rep, adnn_plan_set_optimizer_step(plan, INFINITY, 2), ADNN_STATUS_BAD_PARAM,
                    "%s optimizer: an infinite lr is refused", bn);
  harness_is_status(rep, adnn_plan_set_optimizer_step(plan, 0.01, 5), ADNN_STATUS_SUCCESS,
                    "%s optimizer: lr 0.01 at step 5 is accepted", bn);
  harness_is_status(rep, adnn_plan_set_optimizer_step(NULL, 0.01, 5), ADNN_STATUS_BAD_PARAM_NULL,
                    "%s optimizer: a NULL plan is refused", bn);
  adnn_plan_destroy(plan);
#undef RESET
}

const harness_op_traits harness_optimizer_traits = {
    .inputs = opt_inputs,
    .output = opt_output,
    .set_dtype = opt_set_dtype,
    .oracle = opt_oracle,
    .tolerance = opt_tolerance,
    .fill = opt_fill,
    .variant_count = 1,
    .cases = opt_cases,
    .oracle_selftests = opt_oracle_selftests,
    .bad_descriptors = opt_bad_descriptors,
    .outputs = opt_outputs,
    .inout = opt_inout,
    .fill_outputs = opt_fill_outputs,
    .oracle_outputs = opt_oracle_outputs,
};
