/*
 * The fused optimizer step over several steps, on every ready backend:
 * SGD (plain, weight decay, momentum with dampening, Nesterov), Adam with
 * coupled weight decay and AdamW, in F32 and F64, each over 30 parameter
 * tensors of sizes from 1 to 40,000 (more than the core keeps inline, more
 * than one CUDA launch group, more than one CPU chunk per tensor) for
 * STEPS steps whose learning rate changes every step through
 * adnn_plan_set_optimizer_step, against a long-double oracle that follows
 * PyTorch's rules (doc/ops.md) and rounds every state to the dtype after
 * each step, as the library stores it. A plugin that read a stale lr or
 * step, mixed up tensors or states, or skipped a chunk fails here.
 *
 * Tolerances (doc/numerics.md): after STEPS steps, ||got - want||_2 /
 * ||want||_2 <= 2e-6 (F32) or 1e-13 (F64) over every parameter and state,
 * and every element within 2e-5 (F32) or 1e-12 (F64) of (1 + |want|).
 * Master weights (model_dtype F16 and BF16, every config): the gradients
 * are F16/BF16 (the oracle reads the same rounded values), the parameters and
 * states F32 with the F32 tolerances above, and every model copy must be
 * bit for bit the rounding to nearest even of the F32 parameter the plugin
 * stored (kernels/common/float16.h's rule, exhaustively tested by
 * t/lowp-convert); the copies start poisoned (NaN), so one left unwritten
 * fails. Also: the model_dtype refusals.
 *
 * Also: the step setter's refusals, and an orphan plan.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "kernels/common/float16.h"
#include "t/rng.h"
#include "t/tap.h"

/* is_status as an expression: 1 when got is want (the check passes). */
#define status_is(got, want, ...) status_is_((got), (want), __VA_ARGS__)
static int status_is_(adnn_status got, adnn_status want, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int status_is_(adnn_status got, adnn_status want, const char *fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  if (!ok(got == want, "%s", text)) {
    diag("  got %s, expected %s; last error: %s", adnn_status_name(got), adnn_status_name(want),
         adnn_last_error());
    return 0;
  }
  return 1;
}

enum { T = 30, STEPS = 6 };

static int64_t sizes[T];

typedef struct config {
  const char *label;
  adnn_optimizer_kind kind;
  double lr, weight_decay, momentum, dampening;
  int nesterov;
  double beta1, beta2, epsilon;
} config;

static const config configs[] = {
    {"sgd", ADNN_OPTIMIZER_SGD, 0.1, 0, 0, 0, 0, 0, 0, 0},
    {"sgd wd", ADNN_OPTIMIZER_SGD, 0.05, 0.01, 0, 0, 0, 0, 0, 0},
    {"sgd momentum dampening", ADNN_OPTIMIZER_SGD, 0.1, 1e-3, 0.9, 0.2, 0, 0, 0, 0},
    {"sgd nesterov", ADNN_OPTIMIZER_SGD, 0.05, 0.01, 0.8, 0, 1, 0, 0, 0},
    {"adam wd", ADNN_OPTIMIZER_ADAM, 1e-2, 0.05, 0, 0, 0, 0.9, 0.999, 1e-8},
    {"adamw", ADNN_OPTIMIZER_ADAMW, 1e-2, 0.1, 0, 0, 0, 0.85, 0.99, 1e-6},
};

static int states_of(const config *c) {
  return c->kind == ADNN_OPTIMIZER_SGD ? (c->momentum != 0 ? 1 : 0) : 2;
}

static double round_to(adnn_dtype dt, long double v) {
  return dt == ADNN_DTYPE_F32 ? (double)(float)v : (double)v;
}

/* The 16-bit model types: a float's bits after one rounding, and back. */
static uint16_t narrow16(adnn_dtype md, float v) {
  return md == ADNN_DTYPE_F16 ? adnn_f32_to_f16(v) : adnn_f32_to_bf16(v);
}
static double widen16(adnn_dtype md, uint16_t b) {
  return md == ADNN_DTYPE_F16 ? (double)adnn_f16_to_f32(b) : (double)adnn_bf16_to_f32(b);
}

/* One step of the oracle on element k of a tensor: p, and the states a (buf
 * or m) and b (v), in long double, rounded to dt when stored. */
static void oracle_step(const config *c, adnn_dtype dt, long double lr, int64_t t, double *p,
                        double g_, double *a, double *b) {
  long double w = *p, g = g_;
  const long double wd = c->weight_decay;
  if (c->kind == ADNN_OPTIMIZER_SGD) {
    if (wd != 0) g += wd * w;
    if (c->momentum != 0) {
      const long double buf = t == 1 ? g : (long double)c->momentum * *a + (1.0L - c->dampening) * g;
      *a = round_to(dt, buf);
      g = c->nesterov ? g + (long double)c->momentum * buf : buf;
    }
    w -= lr * g;
  } else {
    if (c->kind == ADNN_OPTIMIZER_ADAMW) w *= 1.0L - lr * wd;
    else if (wd != 0) g += wd * w;
    const long double m = (long double)c->beta1 * *a + (1.0L - c->beta1) * g;
    const long double v = (long double)c->beta2 * *b + (1.0L - c->beta2) * g * g;
    *a = round_to(dt, m);
    *b = round_to(dt, v);
    const long double bc1 = 1.0L - powl(c->beta1, (long double)t);
    const long double bc2 = 1.0L - powl(c->beta2, (long double)t);
    w -= lr * (m / bc1) / (sqrtl(v / bc2) + (long double)c->epsilon);
  }
  *p = round_to(dt, w);
}

/* The learning rate of step t (1-based): a schedule that changes every step. */
static double lr_at(const config *c, int t) { return c->lr * (1.0 + 0.5 * sin(1.3 * t)); }

static void *dev_alloc(adnn_context *ctx, size_t bytes) {
  void *p = NULL;
  if (adnn_malloc(ctx, bytes, &p) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  return p;
}

/* v holds values of dt (F16/BF16 ones exactly representable); NULL uploads
 * NaN bits (0xffff, a NaN in both 16-bit types), the poison of outputs. */
static void upload(adnn_context *ctx, void *dst, const double *v, int64_t n, adnn_dtype dt) {
  const size_t es = adnn_dtype_size(dt);
  void *h = malloc((size_t)n * es);
  if (!h) tap_bail("out of memory");
  for (int64_t i = 0; i < n; i++) {
    if (dt == ADNN_DTYPE_F32) ((float *)h)[i] = (float)v[i];
    else if (dt == ADNN_DTYPE_F64) ((double *)h)[i] = v[i];
    else ((uint16_t *)h)[i] = v ? narrow16(dt, (float)v[i]) : 0xffffu;
  }
  if (adnn_memcpy(ctx, dst, h, (size_t)n * es, ADNN_MEMCPY_HOST_TO_DEVICE) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
  free(h);
}

static void download(adnn_context *ctx, double *v, const void *src, int64_t n, adnn_dtype dt) {
  const size_t es = adnn_dtype_size(dt);
  void *h = malloc((size_t)n * es);
  if (!h) tap_bail("out of memory");
  if (adnn_memcpy(ctx, h, src, (size_t)n * es, ADNN_MEMCPY_DEVICE_TO_HOST) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
  for (int64_t i = 0; i < n; i++)
    v[i] = dt == ADNN_DTYPE_F32 ? (double)((float *)h)[i] : ((double *)h)[i];
  free(h);
}

/* One config in dt, or with md (F16/BF16, dt F32) F32 master weights with
 * model copies of md. */
static void run_config(adnn_context *ctx, const char *bn, const config *c, adnn_dtype dt,
                       adnn_dtype md) {
  char dn[48];
  if (md) snprintf(dn, sizeof dn, "%s master, %s model", adnn_dtype_name(dt), adnn_dtype_name(md));
  else snprintf(dn, sizeof dn, "%s", adnn_dtype_name(dt));
  const adnn_dtype gdt = md ? md : dt; /* the gradients' dtype */
  adnn_optimizer_desc d;
  adnn_optimizer_desc_init(&d);
  d.kind = c->kind;
  d.dtype = dt;
  d.tensor_count = T;
  d.sizes = sizes;
  d.lr = c->lr;
  d.weight_decay = c->weight_decay;
  d.momentum = c->momentum;
  d.dampening = c->dampening;
  d.nesterov = c->nesterov;
  d.model_dtype = md;
  if (c->kind != ADNN_OPTIMIZER_SGD) {
    d.beta1 = c->beta1;
    d.beta2 = c->beta2;
    d.epsilon = c->epsilon;
  }
  adnn_plan *plan = NULL;
  if (!status_is(adnn_plan_create_optimizer(ctx, &d, &plan), ADNN_STATUS_SUCCESS,
                 "%s %s %s: plan", bn, c->label, dn))
    return;
  const int S = states_of(c);
  const int n_out = T * (1 + S);
  /* Host copies: the oracle's (want) and the device's (got), per output;
   * gradients per step. */
  double *want[T * 3], *grad[T];
  void *dout[T * 4], *dgrad[T];
  tap_rng r = tap_rng_seed(20261201u + (unsigned)c->kind * 7u + (unsigned)dt + 101u * (unsigned)md);
  for (int i = 0; i < T; i++) {
    grad[i] = malloc((size_t)sizes[i] * sizeof(double));
    dgrad[i] = dev_alloc(ctx, (size_t)sizes[i] * adnn_dtype_size(gdt));
  }
  /* The model copies, poisoned: outputs n_out .. n_out + T - 1. */
  const int n_copies = md ? T : 0;
  for (int i = 0; i < n_copies; i++) {
    dout[n_out + i] = dev_alloc(ctx, (size_t)sizes[i] * 2);
    upload(ctx, dout[n_out + i], NULL, sizes[i], md);
  }
  for (int o = 0; o < n_out; o++) {
    const int i = o % T, k = o / T;
    want[o] = malloc((size_t)sizes[i] * sizeof(double));
    if (!want[o]) tap_bail("out of memory");
    /* Parameters in [-1, 1); states start at zero, as the API asks. */
    for (int64_t e = 0; e < sizes[i]; e++)
      want[o][e] = k == 0 ? round_to(dt, tap_rng_uniform(&r, -1, 1)) : 0.0;
    dout[o] = dev_alloc(ctx, (size_t)sizes[i] * adnn_dtype_size(dt));
    upload(ctx, dout[o], want[o], sizes[i], dt);
  }
  int ran = 1;
  for (int t = 1; t <= STEPS && ran; t++) {
    for (int i = 0; i < T; i++) {
      for (int64_t e = 0; e < sizes[i]; e++) {
        const double u = round_to(dt, tap_rng_uniform(&r, -1, 1));
        grad[i][e] = md ? widen16(md, narrow16(md, (float)u)) : u;
      }
      upload(ctx, dgrad[i], grad[i], sizes[i], gdt);
    }
    const double lr = lr_at(c, t);
    ran &= adnn_plan_set_optimizer_step(plan, lr, t) == ADNN_STATUS_SUCCESS;
    ran &= adnn_plan_execute_multi(plan, (const void *const *)dgrad, T, dout,
                                   (size_t)(n_out + n_copies)) == ADNN_STATUS_SUCCESS;
    for (int i = 0; i < T; i++)
      for (int64_t e = 0; e < sizes[i]; e++)
        oracle_step(c, dt, (long double)lr, t, &want[i][e], grad[i][e],
                    S >= 1 ? &want[T + i][e] : NULL, S >= 2 ? &want[2 * T + i][e] : NULL);
  }
  ok(ran, "%s %s %s: %d steps set and executed%s%s", bn, c->label, dn, STEPS, ran ? "" : ": ",
     ran ? "" : adnn_last_error());
  adnn_context_synchronize(ctx);
  long double err2 = 0, ref2 = 0;
  double worst = 0;
  int64_t worst_o = -1, worst_e = -1;
  double worst_got = 0, worst_want = 0;
  for (int o = 0; o < n_out; o++) {
    const int i = o % T;
    double *got = malloc((size_t)sizes[i] * sizeof(double));
    if (!got) tap_bail("out of memory");
    download(ctx, got, dout[o], sizes[i], dt);
    for (int64_t e = 0; e < sizes[i]; e++) {
      const double w = want[o][e], g = got[e];
      const double rel = fabs(g - w) / (1.0 + fabs(w));
      err2 += (long double)(g - w) * (g - w);
      ref2 += (long double)w * w;
      if (!(rel <= worst)) {
        worst = isnan(rel) ? INFINITY : rel;
        worst_o = o;
        worst_e = e;
        worst_got = g;
        worst_want = w;
      }
    }
    free(got);
  }
  /* Each model copy against the rounding of the master weight the plugin
   * stored (downloaded as F32, so the comparison is of bits). */
  int64_t copy_bad = 0, copy_first = -1;
  uint16_t copy_got = 0, copy_want = 0;
  for (int i = 0; i < n_copies; i++) {
    float *master = malloc((size_t)sizes[i] * sizeof(float));
    uint16_t *copy = malloc((size_t)sizes[i] * 2);
    if (!master || !copy) tap_bail("out of memory");
    if (adnn_memcpy(ctx, master, dout[i], (size_t)sizes[i] * sizeof(float),
                    ADNN_MEMCPY_DEVICE_TO_HOST) != ADNN_STATUS_SUCCESS ||
        adnn_memcpy(ctx, copy, dout[n_out + i], (size_t)sizes[i] * 2,
                    ADNN_MEMCPY_DEVICE_TO_HOST) != ADNN_STATUS_SUCCESS)
      tap_bail(adnn_last_error());
    for (int64_t e = 0; e < sizes[i]; e++) {
      const uint16_t w = narrow16(md, master[e]);
      if (copy[e] != w) {
        if (copy_bad++ == 0) {
          copy_first = e + 100000 * (int64_t)i;
          copy_got = copy[e];
          copy_want = w;
        }
      }
    }
    free(master);
    free(copy);
  }
  if (md)
    ok(copy_bad == 0, "%s %s %s: every model copy is the %s rounding of its F32 master weight "
       "(%lld wrong)", bn, c->label, dn, adnn_dtype_name(md), (long long)copy_bad);
  if (copy_bad)
    diag("  first wrong copy: tensor %lld element %lld: bits 0x%04x, want 0x%04x",
         (long long)(copy_first / 100000), (long long)(copy_first % 100000), copy_got, copy_want);
  const double rel_l2 = ref2 > 0 ? (double)sqrtl(err2 / ref2) : (double)sqrtl(err2);
  const double tol_l2 = dt == ADNN_DTYPE_F32 ? 2e-6 : 1e-13;
  const double tol_max = dt == ADNN_DTYPE_F32 ? 2e-5 : 1e-12;
  ok(rel_l2 <= tol_l2 && worst <= tol_max,
     "%s %s %s: %d tensors after %d steps match the oracle (rel_l2 %.2g <= %g, max %.2g <= %g)",
     bn, c->label, dn, T, STEPS, rel_l2, tol_l2, worst, tol_max);
  if (worst > tol_max)
    diag("  worst: output %lld element %lld: got %.17g want %.17g", (long long)worst_o,
         (long long)worst_e, worst_got, worst_want);
  for (int o = 0; o < n_out; o++) {
    free(want[o]);
    adnn_free(ctx, dout[o]);
  }
  for (int i = 0; i < n_copies; i++) adnn_free(ctx, dout[n_out + i]);
  for (int i = 0; i < T; i++) {
    free(grad[i]);
    adnn_free(ctx, dgrad[i]);
  }
  adnn_plan_destroy(plan);
}

/* The step setter's refusals and an orphan plan. */
static void bad_input(adnn_context *ctx, const char *bn) {
  adnn_optimizer_desc d;
  adnn_optimizer_desc_init(&d);
  d.tensor_count = T;
  d.sizes = sizes;
  d.kind = ADNN_OPTIMIZER_ADAM;
  adnn_plan *plan = NULL;
  if (!status_is(adnn_plan_create_optimizer(ctx, &d, &plan), ADNN_STATUS_SUCCESS, "%s adam plan",
                 bn))
    return;
  is_status(adnn_plan_set_optimizer_step(plan, NAN, 2), ADNN_STATUS_BAD_PARAM,
            "%s: lr NaN is refused", bn);
  contains(adnn_last_error(), "lr (nan)", "%s: lr NaN: the message names lr", bn);
  is_status(adnn_plan_set_optimizer_step(plan, 0.1, -3), ADNN_STATUS_BAD_PARAM,
            "%s: a negative step is refused", bn);
  is_status(adnn_plan_set_optimizer_step(plan, 0.0, 1), ADNN_STATUS_SUCCESS,
            "%s: lr 0 at step 1 is accepted", bn);
  /* Every tensor's gradient but one: refused before anything runs. */
  void *buf = dev_alloc(ctx, 64);
  const void *in[T];
  void *out[3 * T];
  for (int i = 0; i < T; i++) in[i] = buf;
  for (int o = 0; o < 3 * T; o++) out[o] = buf;
  is_status(adnn_plan_execute_multi(plan, in, T - 1, out, 3 * T), ADNN_STATUS_BAD_PARAM,
            "%s: %d gradients for %d tensors are refused", bn, T - 1, T);
  contains(adnn_last_error(), "grad_0..grad_{T-1}", "%s: the message lists the inputs", bn);

  /* Master weights: model_dtype must be F16 or BF16 and dtype F32; a plan
   * with copies wants T more outputs. */
  adnn_plan *bad = NULL;
  d.model_dtype = ADNN_DTYPE_I8;
  is_status(adnn_plan_create_optimizer(ctx, &d, &bad), ADNN_STATUS_BAD_PARAM,
            "%s: model_dtype i8 is refused", bn);
  contains(adnn_last_error(), "model_dtype i8", "%s: model_dtype i8: the message names it", bn);
  d.model_dtype = (adnn_dtype)99;
  is_status(adnn_plan_create_optimizer(ctx, &d, &bad), ADNN_STATUS_BAD_PARAM,
            "%s: model_dtype 99 is refused", bn);
  contains(adnn_last_error(), "not an adnn_dtype", "%s: model_dtype 99: the message says why", bn);
  d.model_dtype = ADNN_DTYPE_BF16;
  d.dtype = ADNN_DTYPE_F64;
  is_status(adnn_plan_create_optimizer(ctx, &d, &bad), ADNN_STATUS_BAD_PARAM,
            "%s: bf16 model copies of f64 parameters are refused", bn);
  contains(adnn_last_error(), "needs dtype f32", "%s: f64 masters: the message says f32", bn);
  ok(bad == NULL, "%s: no plan from a refused model_dtype", bn);
  d.dtype = ADNN_DTYPE_F32;
  if (status_is(adnn_plan_create_optimizer(ctx, &d, &bad), ADNN_STATUS_SUCCESS,
                "%s: adam with bf16 model copies", bn)) {
    is_status(adnn_plan_execute_multi(bad, in, T, out, 3 * T), ADNN_STATUS_BAD_PARAM,
              "%s: model copies missing from the outputs are refused", bn);
    contains(adnn_last_error(), "120 output(s)",
             "%s: the message counts p, m, v and the copies", bn);
    adnn_plan_destroy(bad);
  }
  d.model_dtype = 0;

  adnn_free(ctx, buf);

  /* An orphan: its context destroyed, the plan refuses the setter. */
  adnn_context *other = NULL;
  if (adnn_context_create(bn, &other) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  adnn_plan *orphan = NULL;
  if (status_is(adnn_plan_create_optimizer(other, &d, &orphan), ADNN_STATUS_SUCCESS,
                "%s: a plan on a second context", bn)) {
    adnn_context_destroy(other);
    is_status(adnn_plan_set_optimizer_step(orphan, 0.1, 2), ADNN_STATUS_BAD_PARAM_HANDLE,
              "%s: an orphan plan refuses adnn_plan_set_optimizer_step", bn);
    adnn_plan_destroy(orphan);
  } else {
    adnn_context_destroy(other);
  }
  adnn_plan_destroy(plan);
}

int main(void) {
  for (int i = 0; i < T; i++) sizes[i] = 1 + (i * 7919) % 3001;
  sizes[3] = 40000; /* three CPU chunks, ten CUDA chunks */
  sizes[7] = 1;
  sizes[25] = 16385;
  size_t count = 0;
  if (adnn_backend_count(&count) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  int tested = 0;
  for (size_t b = 0; b < count; b++) {
    const adnn_backend_info *info = NULL;
    if (adnn_backend_get(b, &info) != ADNN_STATUS_SUCCESS || info->state != ADNN_BACKEND_READY)
      continue;
    adnn_context *ctx = NULL;
    if (!status_is(adnn_context_create(info->name, &ctx), ADNN_STATUS_SUCCESS, "context on %s",
                   info->name))
      continue;
    tested++;
    for (size_t k = 0; k < sizeof configs / sizeof configs[0]; k++) {
      run_config(ctx, info->name, &configs[k], ADNN_DTYPE_F32, 0);
      run_config(ctx, info->name, &configs[k], ADNN_DTYPE_F64, 0);
      run_config(ctx, info->name, &configs[k], ADNN_DTYPE_F32, ADNN_DTYPE_F16);
      run_config(ctx, info->name, &configs[k], ADNN_DTYPE_F32, ADNN_DTYPE_BF16);
    }
    bad_input(ctx, info->name);
    adnn_context_destroy(ctx);
  }
  if (!tested) return tap_skip_all("no ready backend");
  return tap_done();
}
