/*
 * Finite-difference gradient check of softmax cross-entropy in F64, on every
 * ready backend: the backward op's d logits against central differences of
 * the forward op's loss,
 *     dJ/dx[n, c] ~ (J(x + h e_nc) - J(x - h e_nc)) / (2 h),  h = 1e-5,
 * where J is the loss (MEAN, SUM) or sum_n w_n loss_n with random weights
 * w = dloss (NONE), and the backward gets dloss = 0.7 (MEAN, SUM) or w.
 * The error of central differences is h^2 / 6 * |J'''| (about 1e-11 here,
 * the logits being O(1)) plus the rounding of J, eps * |J| / h (about
 * 1e-10): each element must agree within 1e-8 + 1e-6 * |dJ/dx|. Shapes:
 * [5, 7] packed and transposed (class axis strided), one label ignored, one
 * ignore_index that is a valid class (the samples of that class drop out).
 * Then: a fixed seed gives bitwise-identical F32 CPU losses and gradients
 * twice.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <adnn.h>

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

enum { N = 5, C = 7 };
#define STEP 1e-5

static adnn_context *ctx;

static void *dev(size_t bytes) {
  void *p = NULL;
  if (adnn_malloc(ctx, bytes, &p) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  return p;
}

static void put(void *d, const void *h, size_t bytes) {
  if (adnn_memcpy(ctx, d, h, bytes, ADNN_MEMCPY_HOST_TO_DEVICE) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
}

static void get(void *h, const void *d, size_t bytes) {
  if (adnn_memcpy(ctx, h, d, bytes, ADNN_MEMCPY_DEVICE_TO_HOST) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
}

/* J(x): the forward plan's loss, weighted by w for NONE. */
static double objective(adnn_plan *fwd, adnn_loss_reduction red, void *dx, void *dlab,
                        void *dloss, const double *x, const double *w) {
  put(dx, x, N * C * sizeof(double));
  const void *in[2] = {dx, dlab};
  if (adnn_plan_execute(fwd, in, 2, dloss) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  double loss[N];
  get(loss, dloss, (red == ADNN_LOSS_REDUCTION_NONE ? N : 1) * sizeof(double));
  if (red != ADNN_LOSS_REDUCTION_NONE) return loss[0];
  double j = 0;
  for (int n = 0; n < N; n++) j += w[n] * loss[n];
  return j;
}

static void check(const char *bn, adnn_loss_reduction red, int transposed, int64_t ignore) {
  const char *rn = adnn_loss_reduction_name(red);
  const char *ln = transposed ? " transposed" : "";
  adnn_softmax_cross_entropy_desc f;
  adnn_softmax_cross_entropy_desc_init(&f);
  const int64_t dims[2] = {N, C}, tstrides[2] = {1, N}, n1 = N;
  if (transposed) adnn_tensor_desc_init_strided(&f.logits, ADNN_DTYPE_F64, 2, dims, tstrides);
  else adnn_tensor_desc_init(&f.logits, ADNN_DTYPE_F64, 2, dims);
  adnn_tensor_desc_init(&f.labels, ADNN_DTYPE_I32, 1, &n1);
  if (red == ADNN_LOSS_REDUCTION_NONE) adnn_tensor_desc_init(&f.loss, ADNN_DTYPE_F64, 1, &n1);
  else adnn_tensor_desc_init(&f.loss, ADNN_DTYPE_F64, 0, NULL);
  f.reduction = red;
  f.ignore_index = ignore;
  adnn_softmax_cross_entropy_backward_desc b;
  adnn_softmax_cross_entropy_backward_desc_init(&b);
  b.forward = &f;
  adnn_plan *fwd = NULL, *bwd = NULL;
  if (!status_is(adnn_plan_create_softmax_cross_entropy(ctx, &f, &fwd), ADNN_STATUS_SUCCESS,
                 "%s %s%s: forward plan", bn, rn, ln) ||
      !status_is(adnn_plan_create_softmax_cross_entropy_backward(ctx, &b, &bwd),
                 ADNN_STATUS_SUCCESS, "%s %s%s: backward plan", bn, rn, ln)) {
    adnn_plan_destroy(fwd);
    return;
  }
  /* Logits at element offsets (the layout's), labels with sample 1 ignored
   * when ignore_index is -100, and the weights. */
  tap_rng r = tap_rng_seed(20261201u + (unsigned)red * 3u + (unsigned)transposed);
  double x[N * C], w[N], dl[N];
  int32_t labels[N];
  for (int i = 0; i < N * C; i++) x[i] = tap_rng_uniform(&r, -2, 2);
  for (int n = 0; n < N; n++) {
    labels[n] = (int32_t)(n * 3 % C);
    w[n] = tap_rng_uniform(&r, 0.5, 1.5);
  }
  if (ignore == -100) labels[1] = -100;
  void *dx = dev(sizeof x), *dlab = dev(sizeof labels), *dloss = dev(sizeof dl),
       *dgrad = dev(sizeof x);
  put(dlab, labels, sizeof labels);
  /* The backward's gradient. */
  for (int n = 0; n < N; n++) dl[n] = red == ADNN_LOSS_REDUCTION_NONE ? w[n] : 0.7;
  put(dx, x, sizeof x);
  put(dloss, dl, sizeof dl);
  const void *bin[3] = {dx, dlab, dloss};
  int good = adnn_plan_execute(bwd, bin, 3, dgrad) == ADNN_STATUS_SUCCESS;
  double grad[N * C];
  get(grad, dgrad, sizeof grad);
  /* Central differences of J (times 0.7 for MEAN and SUM). */
  const double k = red == ADNN_LOSS_REDUCTION_NONE ? 1.0 : 0.7;
  double worst_err = 0, worst_ratio = 0, worst_num = 0;
  int worst_i = 0;
  for (int i = 0; i < N * C; i++) {
    double xp[N * C];
    memcpy(xp, x, sizeof x);
    xp[i] = x[i] + STEP;
    const double jp = objective(fwd, red, dx, dlab, dloss, xp, w);
    xp[i] = x[i] - STEP;
    const double jm = objective(fwd, red, dx, dlab, dloss, xp, w);
    const double num = k * (jp - jm) / (2 * STEP);
    const double err = fabs(num - grad[i]), ratio = err / (1e-8 + 1e-6 * fabs(num));
    if (!(ratio <= worst_ratio)) {
      worst_ratio = isnan(ratio) ? INFINITY : ratio;
      worst_err = err;
      worst_i = i;
      worst_num = num;
    }
  }
  ok(good && worst_ratio <= 1.0,
     "%s %s%s ign%lld: d logits match central differences (largest error %.2g, %.2g of its bound, "
     "at offset %d: backward %.12g, numeric %.12g)", bn, rn, ln, (long long)ignore, worst_err,
     worst_ratio, worst_i, grad[worst_i], worst_num);
  /* Rows of ignored samples are exactly zero. */
  int zero = 1;
  for (int n = 0; n < N; n++)
    if (labels[n] == ignore)
      for (int c = 0; c < C; c++)
        zero &= grad[transposed ? c * N + n : n * C + c] == 0.0;
  ok(zero, "%s %s%s ign%lld: ignored samples get zero gradient rows", bn, rn, ln,
     (long long)ignore);
  adnn_free(ctx, dx);
  adnn_free(ctx, dlab);
  adnn_free(ctx, dloss);
  adnn_free(ctx, dgrad);
  adnn_plan_destroy(fwd);
  adnn_plan_destroy(bwd);
}

/* A fixed seed gives bitwise-identical F32 losses and gradients twice on the
 * cpu backend (doc/numerics.md: fixed row blocks, summed in order). */
static void reproducible(void) {
  enum { RN = 300, RC = 1000 };
  adnn_context *c = NULL;
  if (adnn_context_create("cpu", &c) != ADNN_STATUS_SUCCESS) {
    tap_skip("no cpu backend for the reproducibility check");
    return;
  }
  adnn_softmax_cross_entropy_desc f;
  adnn_softmax_cross_entropy_desc_init(&f);
  const int64_t dims[2] = {RN, RC}, n1 = RN;
  adnn_tensor_desc_init(&f.logits, ADNN_DTYPE_F32, 2, dims);
  adnn_tensor_desc_init(&f.labels, ADNN_DTYPE_I32, 1, &n1);
  adnn_tensor_desc_init(&f.loss, ADNN_DTYPE_F32, 0, NULL);
  adnn_softmax_cross_entropy_backward_desc b;
  adnn_softmax_cross_entropy_backward_desc_init(&b);
  b.forward = &f;
  adnn_plan *fwd = NULL, *bwd = NULL;
  static float x[RN * RC], g1[RN * RC], g2[RN * RC];
  int32_t labels[RN];
  tap_rng r = tap_rng_seed(77);
  for (int i = 0; i < RN * RC; i++) x[i] = (float)tap_rng_uniform(&r, -10, 10);
  for (int n = 0; n < RN; n++) labels[n] = (int32_t)(tap_rng_next(&r) % RC);
  void *dx = NULL, *dl = NULL, *dloss = NULL, *dg = NULL;
  const float one = 1.0f;
  float l1 = 0, l2 = 0;
  int good = adnn_plan_create_softmax_cross_entropy(c, &f, &fwd) == ADNN_STATUS_SUCCESS &&
             adnn_plan_create_softmax_cross_entropy_backward(c, &b, &bwd) == ADNN_STATUS_SUCCESS &&
             adnn_malloc(c, sizeof x, &dx) == ADNN_STATUS_SUCCESS &&
             adnn_malloc(c, sizeof labels, &dl) == ADNN_STATUS_SUCCESS &&
             adnn_malloc(c, sizeof one, &dloss) == ADNN_STATUS_SUCCESS &&
             adnn_malloc(c, sizeof x, &dg) == ADNN_STATUS_SUCCESS;
  if (good) {
    adnn_memcpy(c, dx, x, sizeof x, ADNN_MEMCPY_HOST_TO_DEVICE);
    adnn_memcpy(c, dl, labels, sizeof labels, ADNN_MEMCPY_HOST_TO_DEVICE);
    const void *in[2] = {dx, dl}, *bin[3] = {dx, dl, dloss};
    for (int k = 0; k < 2 && good; k++) {
      good &= adnn_plan_execute(fwd, in, 2, dloss) == ADNN_STATUS_SUCCESS;
      adnn_memcpy(c, k ? &l2 : &l1, dloss, sizeof one, ADNN_MEMCPY_DEVICE_TO_HOST);
      adnn_memcpy(c, dloss, &one, sizeof one, ADNN_MEMCPY_HOST_TO_DEVICE);
      good &= adnn_plan_execute(bwd, bin, 3, dg) == ADNN_STATUS_SUCCESS;
      adnn_memcpy(c, k ? g2 : g1, dg, sizeof x, ADNN_MEMCPY_DEVICE_TO_HOST);
    }
  }
  ok(good && memcmp(&l1, &l2, sizeof l1) == 0 && memcmp(g1, g2, sizeof g1) == 0,
     "cpu f32 [%d, %d]: a fixed seed gives bitwise-identical losses (%.9g) and gradients twice",
     RN, RC, (double)l1);
  adnn_free(c, dx);
  adnn_free(c, dl);
  adnn_free(c, dloss);
  adnn_free(c, dg);
  adnn_plan_destroy(fwd);
  adnn_plan_destroy(bwd);
  adnn_context_destroy(c);
}

int main(void) {
  size_t count = 0;
  if (adnn_backend_count(&count) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  int tested = 0;
  for (size_t i = 0; i < count; i++) {
    const adnn_backend_info *info = NULL;
    if (adnn_backend_get(i, &info) != ADNN_STATUS_SUCCESS || info->state != ADNN_BACKEND_READY)
      continue;
    if (!status_is(adnn_context_create(info->name, &ctx), ADNN_STATUS_SUCCESS, "context on %s",
                   info->name))
      continue;
    tested++;
    const adnn_loss_reduction reds[3] = {ADNN_LOSS_REDUCTION_MEAN, ADNN_LOSS_REDUCTION_SUM,
                                         ADNN_LOSS_REDUCTION_NONE};
    for (int k = 0; k < 3; k++)
      for (int t = 0; t <= 1; t++) check(info->name, reds[k], t, -100);
    check(info->name, ADNN_LOSS_REDUCTION_MEAN, 0, 3);
    adnn_context_destroy(ctx);
  }
  if (!tested) return tap_skip_all("no ready backend");
  reproducible();
  return tap_done();
}
