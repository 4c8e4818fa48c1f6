/*
 * Finite-difference gradient checks of pool2d, activation and softmax
 * backward, in F64 on every ready backend, through the public API only.
 *
 * For a forward op f and a seeded random weight tensor w, the scalar
 * L(x) = sum_j w_j f(x)_j has the gradient dL/dx = backward(x, y, dy = w),
 * which each backward plan computes. The test compares it with central
 * differences of the forward plan:
 *     fd_i = sum_j w_j (f(x + h e_i)_j - f(x - h e_i)_j) / (2 h),
 * with the difference taken element by element before the weighted sum, so
 * that outputs which x_i does not touch cancel exactly. For activations each
 * y_j depends on x_j alone, so every element is perturbed at once.
 *
 * Step and tolerance (doc/numerics.md, "Gradient checks"): h = 1e-5 *
 * max(1, |x_i|); the check is |dx_i - fd_i| <= 1e-7 * (1 + |fd_i|). In F64 the
 * truncation error of central differences is h^2 |f'''| / 6 (below 1e-10 for
 * these functions on these ranges) and the rounding error about
 * 1e-16 |y| / h (1e-11); the worst errors measured are 3e-11, and 1e-9 for
 * softplus above 20, where the backward follows PyTorch's threshold (f' = 1)
 * while the forward is exact (f' = 1 - 2e-9 at 20). The bound still fails a
 * gradient that is wrong in the 7th digit (the self-test shows it fails one
 * scaled by 1 + 1e-6).
 *
 * Non-differentiable points are skipped, never tested here (their values are
 * those of doc/ops.md, checked exactly by t/conformance): activation inputs
 * within 2h of a kink (0, the clamp bounds, +-3 for hardswish, 20 for
 * softplus's threshold); max pooling gets inputs whose values are at least
 * 0.01 apart, so no window's maximum changes within h.
 *
 * Last, the recipe of doc/ops.md for training through a fused activation:
 * for the activations whose derivative depends only on the side of the kinks
 * (identity, relu, leaky relu with alpha > 0, clamp with alpha < beta),
 * activation_backward given y in place of x must give exactly the same dx.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "t/rng.h"
#include "t/tap.h"

#define F64 ADNN_DTYPE_F64
#define STEP 1e-5
#define TOL 1e-7

static adnn_context *ctx;
static const char *backend;

/* ---- buffers --------------------------------------------------------------- */

static int64_t count_of(const adnn_tensor_desc *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->dims[i];
  return n;
}

static size_t span_bytes(const adnn_tensor_desc *t) {
  size_t bytes = 0;
  if (adnn_tensor_desc_span_bytes(t, &bytes) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  return bytes;
}

static void *dev_alloc(size_t bytes) {
  void *p = NULL;
  if (adnn_malloc(ctx, bytes, &p) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  return p;
}

static void upload(void *d, const double *h, size_t bytes) {
  if (adnn_memcpy(ctx, d, h, bytes, ADNN_MEMCPY_HOST_TO_DEVICE) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
}

static void download(double *h, const void *d, size_t bytes) {
  if (adnn_memcpy(ctx, h, d, bytes, ADNN_MEMCPY_DEVICE_TO_HOST) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
}

/* The element offset of row-major element `lin` of t. */
static int64_t offset_of(const adnn_tensor_desc *t, int64_t lin) {
  int64_t off = 0;
  for (int i = t->rank - 1; i >= 0; i--) {
    off += (lin % t->dims[i]) * t->strides[i];
    lin /= t->dims[i];
  }
  return off;
}

/* A forward plan with x and y on the device, run on host values. */
typedef struct forward_run {
  adnn_plan *plan;
  const adnn_tensor_desc *x, *y;
  size_t xb, yb;
  void *dx, *dy; /* device x and y */
} forward_run;

static void forward_open(forward_run *f, adnn_plan *plan, const adnn_tensor_desc *x,
                         const adnn_tensor_desc *y) {
  f->plan = plan;
  f->x = x;
  f->y = y;
  f->xb = span_bytes(x);
  f->yb = span_bytes(y);
  f->dx = dev_alloc(f->xb);
  f->dy = dev_alloc(f->yb);
}

static void forward_close(forward_run *f) {
  adnn_free(ctx, f->dx);
  adnn_free(ctx, f->dy);
  adnn_plan_destroy(f->plan);
}

static void forward_eval(forward_run *f, const double *x, double *y) {
  upload(f->dx, x, f->xb);
  const void *in[1] = {f->dx};
  if (adnn_plan_execute(f->plan, in, 1, f->dy) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  download(y, f->dy, f->yb);
}

/* Compares the analytic gradient g with fd over the elements not skipped;
 * one TAP line. */
static void compare(const char *what, const adnn_tensor_desc *x, const double *g, const double *fd,
                    const unsigned char *skip) {
  int64_t n = count_of(x), checked = 0, bad = 0, worst_i = -1;
  double worst = 0.0;
  for (int64_t i = 0; i < n; i++) {
    const int64_t o = offset_of(x, i);
    if (skip && skip[i]) continue;
    checked++;
    const double err = fabs(g[o] - fd[o]) / (1.0 + fabs(fd[o]));
    if (!(err <= TOL)) bad++;
    if (!(err <= worst)) {
      worst = err;
      worst_i = i;
    }
  }
  ok(bad == 0 && checked > 0, "%s %s: %lld of %lld elements within %g (worst %.2g)", backend, what,
     (long long)(checked - bad), (long long)checked, TOL, worst);
  if (bad && worst_i >= 0) {
    const int64_t o = offset_of(x, worst_i);
    diag("  element %lld: backward %.17g, central difference %.17g", (long long)worst_i, g[o], fd[o]);
  }
}

/* ---- activations ------------------------------------------------------------ */

/* Whether x lies within `h` of a point where activation a is not
 * differentiable (or, for softplus, where the PyTorch threshold switches). */
static int near_kink(const adnn_activation *a, double x, double h) {
  switch (a->kind) {
    case ADNN_ACTIVATION_RELU:
    case ADNN_ACTIVATION_LEAKY_RELU: return fabs(x) <= h;
    case ADNN_ACTIVATION_ELU: return fabs(x) <= h; /* differentiable only for alpha 1 */
    case ADNN_ACTIVATION_CLAMP: return fabs(x - a->alpha) <= h || fabs(x - a->beta) <= h;
    case ADNN_ACTIVATION_HARDSWISH: return fabs(x - 3.0) <= h || fabs(x + 3.0) <= h;
    case ADNN_ACTIVATION_SOFTPLUS: return fabs(x - 20.0) <= h;
    default: return 0;
  }
}

static void check_activation(adnn_activation act, double lo, double hi, int n) {
  char what[128];
  snprintf(what, sizeof what, "activation %s(%g,%g) on [%g, %g)", adnn_activation_name(act.kind),
           act.alpha, act.beta, lo, hi);
  adnn_activation_desc f;
  adnn_activation_desc_init(&f);
  const int64_t dims[1] = {n};
  adnn_tensor_desc_init(&f.x, F64, 1, dims);
  f.y = f.x;
  f.activation = act;
  adnn_activation_backward_desc b;
  adnn_activation_backward_desc_init(&b);
  b.forward = &f;
  adnn_plan *fp = NULL, *bp = NULL;
  if (adnn_plan_create_activation(ctx, &f, &fp) != ADNN_STATUS_SUCCESS ||
      adnn_plan_create_activation_backward(ctx, &b, &bp) != ADNN_STATUS_SUCCESS) {
    ok(0, "%s %s: plans: %s", backend, what, adnn_last_error());
    adnn_plan_destroy(fp);
    return;
  }
  tap_rng r = tap_rng_seed(0x9e3779b97f4a7c15ull ^ (uint64_t)act.kind ^ (uint64_t)(act.alpha * 64));
  double *x = malloc(n * sizeof *x), *w = malloc(n * sizeof *w), *g = malloc(n * sizeof *g);
  double *xp = malloc(n * sizeof *xp), *xm = malloc(n * sizeof *xm), *yp = malloc(n * sizeof *yp),
         *ym = malloc(n * sizeof *ym), *fd = malloc(n * sizeof *fd);
  unsigned char *skip = calloc(n, 1);
  if (!x || !w || !g || !xp || !xm || !yp || !ym || !fd || !skip) tap_bail("out of memory");
  for (int i = 0; i < n; i++) {
    x[i] = tap_rng_uniform(&r, lo, hi);
    w[i] = tap_rng_uniform(&r, -1.0, 1.0);
    const double h = STEP * fmax(1.0, fabs(x[i]));
    xp[i] = x[i] + h;
    xm[i] = x[i] - h;
    skip[i] = near_kink(&act, x[i], 2 * h);
  }
  forward_run fr;
  forward_open(&fr, fp, &f.x, &f.y);
  forward_eval(&fr, xp, yp);
  forward_eval(&fr, xm, ym);
  for (int i = 0; i < n; i++) fd[i] = w[i] * (yp[i] - ym[i]) / (xp[i] - xm[i]);
  /* Backward with dy = w: {x, dy} -> dx. */
  void *ddy = dev_alloc(fr.yb), *ddx = dev_alloc(fr.xb);
  upload(fr.dx, x, fr.xb);
  upload(ddy, w, fr.yb);
  const void *in[2] = {fr.dx, ddy};
  if (adnn_plan_execute(bp, in, 2, ddx) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  download(g, ddx, fr.xb);
  compare(what, &f.x, g, fd, skip);
  adnn_free(ctx, ddy);
  adnn_free(ctx, ddx);
  adnn_plan_destroy(bp);
  forward_close(&fr);
  free(x), free(w), free(g), free(xp), free(xm), free(yp), free(ym), free(fd), free(skip);
}

/* ---- one perturbation at a time (softmax, pooling) ------------------------------ */

/* fd[offset of i] for every element i of x by central differences of L. */
static void central_differences(forward_run *fr, const double *x, const double *w, double *fd) {
  const size_t xs = fr->xb / sizeof(double), ys = fr->yb / sizeof(double);
  double *xt = malloc(xs * sizeof *xt), *yp = malloc(ys * sizeof *yp), *ym = malloc(ys * sizeof *ym);
  if (!xt || !yp || !ym) tap_bail("out of memory");
  memcpy(xt, x, xs * sizeof *xt);
  const int64_t n = count_of(fr->x), m = count_of(fr->y);
  for (int64_t i = 0; i < n; i++) {
    const int64_t o = offset_of(fr->x, i);
    const double h = STEP * fmax(1.0, fabs(x[o]));
    xt[o] = x[o] + h;
    forward_eval(fr, xt, yp);
    xt[o] = x[o] - h;
    forward_eval(fr, xt, ym);
    xt[o] = x[o];
    double s = 0.0;
    for (int64_t j = 0; j < m; j++) {
      const int64_t q = offset_of(fr->y, j);
      s += w[q] * (yp[q] - ym[q]);
    }
    fd[o] = s / (2 * h);
  }
  free(xt), free(yp), free(ym);
}

/* Host values for every offset of t's span (0 in the gaps). */
static double *host_buffer(const adnn_tensor_desc *t) {
  double *p = calloc(span_bytes(t) / sizeof(double) + 1, sizeof *p);
  if (!p) tap_bail("out of memory");
  return p;
}

static void check_softmax(int rank, const int64_t *dims, int axis, int log, int nhwc_like) {
  char what[128];
  snprintf(what, sizeof what, "%s rank %d axis %d%s", log ? "log_softmax" : "softmax", rank, axis,
           nhwc_like ? " (x strided)" : "");
  adnn_softmax_desc f;
  adnn_softmax_desc_init(&f);
  adnn_tensor_desc_init(&f.x, F64, rank, dims);
  f.y = f.x;
  if (nhwc_like) {
    /* x with its first dim innermost in memory: a layout unlike y's. */
    int64_t s = 1;
    for (int i = 0; i < rank; i++) {
      const int d = (i + 1) % rank;
      f.x.strides[d] = s;
      s *= dims[d];
    }
  }
  f.axis = axis;
  f.log = log;
  adnn_softmax_backward_desc b;
  adnn_softmax_backward_desc_init(&b);
  b.forward = &f;
  adnn_plan *fp = NULL, *bp = NULL;
  if (adnn_plan_create_softmax(ctx, &f, &fp) != ADNN_STATUS_SUCCESS ||
      adnn_plan_create_softmax_backward(ctx, &b, &bp) != ADNN_STATUS_SUCCESS) {
    ok(0, "%s %s: plans: %s", backend, what, adnn_last_error());
    adnn_plan_destroy(fp);
    return;
  }
  forward_run fr;
  forward_open(&fr, fp, &f.x, &f.y);
  double *x = host_buffer(&f.x), *y = host_buffer(&f.y), *w = host_buffer(&f.y);
  double *g = host_buffer(&f.x), *fd = host_buffer(&f.x);
  tap_rng r = tap_rng_seed(0x50f7 + (uint64_t)(axis * 4 + log * 2 + nhwc_like));
  for (int64_t i = 0; i < count_of(&f.x); i++) x[offset_of(&f.x, i)] = tap_rng_uniform(&r, -3, 3);
  for (int64_t i = 0; i < count_of(&f.y); i++) w[offset_of(&f.y, i)] = tap_rng_uniform(&r, -1, 1);
  central_differences(&fr, x, w, fd);
  forward_eval(&fr, x, y);
  /* Backward from y: {y, dy} -> dx. */
  void *dyv = dev_alloc(fr.yb), *dwv = dev_alloc(fr.yb), *dxv = dev_alloc(fr.xb);
  upload(dyv, y, fr.yb);
  upload(dwv, w, fr.yb);
  const void *in[2] = {dyv, dwv};
  if (adnn_plan_execute(bp, in, 2, dxv) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  download(g, dxv, fr.xb);
  compare(what, &f.x, g, fd, NULL);
  adnn_free(ctx, dyv), adnn_free(ctx, dwv), adnn_free(ctx, dxv);
  adnn_plan_destroy(bp);
  forward_close(&fr);
  free(x), free(y), free(w), free(g), free(fd);
}

static void check_pool(adnn_pool_kind kind, int64_t n, int64_t c, int64_t h, int64_t wd,
                       int64_t k, int64_t s, int64_t pad, int ceil_mode, int nhwc) {
  char what[160];
  snprintf(what, sizeof what, "pool2d %s %lldx%lld k%lld s%lld p%lld%s%s", adnn_pool_kind_name(kind),
           (long long)h, (long long)wd, (long long)k, (long long)s, (long long)pad,
           ceil_mode ? " ceil" : "", nhwc ? " nhwc" : "");
  adnn_pool2d_desc f;
  adnn_pool2d_desc_init(&f);
  f.kind = kind;
  f.kernel_h = f.kernel_w = k;
  f.stride_h = f.stride_w = s;
  f.pad_top = f.pad_bottom = f.pad_left = f.pad_right = pad;
  f.ceil_mode = ceil_mode;
  const int64_t xd[4] = {n, c, h, wd};
  adnn_tensor_desc_init(&f.x, F64, 4, xd);
  int64_t yd[4];
  if (adnn_pool2d_output_dims(&f, yd) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  adnn_tensor_desc_init(&f.y, F64, 4, yd);
  if (nhwc) {
    const int64_t xs[4] = {h * wd * c, 1, wd * c, c}, ys[4] = {yd[2] * yd[3] * c, 1, yd[3] * c, c};
    adnn_tensor_desc_init_strided(&f.x, F64, 4, xd, xs);
    adnn_tensor_desc_init_strided(&f.y, F64, 4, yd, ys);
  }
  adnn_pool2d_backward_desc b;
  adnn_pool2d_backward_desc_init(&b);
  b.forward = &f;
  adnn_plan *fp = NULL, *bp = NULL;
  if (adnn_plan_create_pool2d(ctx, &f, &fp) != ADNN_STATUS_SUCCESS ||
      adnn_plan_create_pool2d_backward(ctx, &b, &bp) != ADNN_STATUS_SUCCESS) {
    ok(0, "%s %s: plans: %s", backend, what, adnn_last_error());
    adnn_plan_destroy(fp);
    return;
  }
  forward_run fr;
  forward_open(&fr, fp, &f.x, &f.y);
  double *x = host_buffer(&f.x), *y = host_buffer(&f.y), *w = host_buffer(&f.y);
  double *g = host_buffer(&f.x), *fd = host_buffer(&f.x);
  tap_rng r = tap_rng_seed(0x9001 + (uint64_t)(kind * 97 + k * 13 + s * 7 + pad + nhwc));
  /* Distinct values 0.01 apart in a random order: no window's maximum is
   * within a step of another element. */
  const int64_t nx = count_of(&f.x);
  for (int64_t i = 0; i < nx; i++) x[offset_of(&f.x, i)] = 0.01 * (double)(i - nx / 2);
  for (int64_t i = nx - 1; i > 0; i--) {
    const int64_t j = (int64_t)tap_rng_uniform(&r, 0, (double)(i + 1)) % (i + 1);
    const int64_t a = offset_of(&f.x, i), bo = offset_of(&f.x, j);
    const double t = x[a];
    x[a] = x[bo];
    x[bo] = t;
  }
  for (int64_t i = 0; i < count_of(&f.y); i++) w[offset_of(&f.y, i)] = tap_rng_uniform(&r, -1, 1);
  central_differences(&fr, x, w, fd);
  forward_eval(&fr, x, y);
  /* {x, y, dy} -> dx. */
  void *dyv = dev_alloc(fr.yb), *dwv = dev_alloc(fr.yb), *dxv = dev_alloc(fr.xb);
  upload(fr.dx, x, fr.xb);
  upload(dyv, y, fr.yb);
  upload(dwv, w, fr.yb);
  const void *in[3] = {fr.dx, dyv, dwv};
  if (adnn_plan_execute(bp, in, 3, dxv) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  download(g, dxv, fr.xb);
  compare(what, &f.x, g, fd, NULL);
  adnn_free(ctx, dyv), adnn_free(ctx, dwv), adnn_free(ctx, dxv);
  adnn_plan_destroy(bp);
  forward_close(&fr);
  free(x), free(y), free(w), free(g), free(fd);
}

/* doc/ops.md's recipe for a fused activation: for identity, relu, leaky
 * relu with alpha > 0 and clamp with alpha < beta, activation_backward with
 * the forward's y passed as x gives exactly the dx it gives from x. Checked
 * on kinks, bounds, infinities and NaN, in F32 (the vector kernels) and F64,
 * element by element for equality (NaN where NaN). */
static void check_from_y(adnn_activation act, adnn_dtype dt) {
  enum { N = 1031 };
  const int64_t dims[1] = {N};
  adnn_activation_desc f;
  adnn_activation_desc_init(&f);
  adnn_tensor_desc_init(&f.x, dt, 1, dims);
  f.y = f.x;
  f.activation = act;
  adnn_activation_backward_desc b;
  adnn_activation_backward_desc_init(&b);
  b.forward = &f;
  adnn_plan *fp = NULL, *bp = NULL;
  if (adnn_plan_create_activation(ctx, &f, &fp) != ADNN_STATUS_SUCCESS ||
      adnn_plan_create_activation_backward(ctx, &b, &bp) != ADNN_STATUS_SUCCESS) {
    ok(0, "%s from-y %s: plans: %s", backend, adnn_activation_name(act.kind), adnn_last_error());
    adnn_plan_destroy(fp);
    return;
  }
  static const double specials[] = {0.0, -0.0, 1e-30, -1e-30, 6.0, -1.5, 2.5, 5.999, 6.001,
                                    -1.4999, INFINITY, -INFINITY, NAN};
  const size_t es = dt == F64 ? sizeof(double) : sizeof(float), bytes = N * es;
  double hx[N], hg[N];
  tap_rng r = tap_rng_seed(0xf7 + (uint64_t)act.kind * 3 + (dt == F64));
  for (int i = 0; i < N; i++) {
    hx[i] = i < (int)(sizeof specials / sizeof specials[0]) ? specials[i]
                                                              : tap_rng_uniform(&r, -8, 8);
    hg[i] = tap_rng_uniform(&r, -2, 2);
  }
  unsigned char hostx[N * sizeof(double)], hostg[N * sizeof(double)];
  for (int i = 0; i < N; i++) {
    if (dt == F64) {
      memcpy(hostx + i * es, &hx[i], es);
      memcpy(hostg + i * es, &hg[i], es);
    } else {
      const float fx = (float)hx[i], fg = (float)hg[i];
      memcpy(hostx + i * es, &fx, es);
      memcpy(hostg + i * es, &fg, es);
    }
  }
  void *x = dev_alloc(bytes), *y = dev_alloc(bytes), *g = dev_alloc(bytes);
  void *d1 = dev_alloc(bytes), *d2 = dev_alloc(bytes);
  if (adnn_memcpy(ctx, x, hostx, bytes, ADNN_MEMCPY_HOST_TO_DEVICE) != ADNN_STATUS_SUCCESS ||
      adnn_memcpy(ctx, g, hostg, bytes, ADNN_MEMCPY_HOST_TO_DEVICE) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
  const void *fin[1] = {x}, *from_x[2] = {x, g}, *from_y[2] = {y, g};
  if (adnn_plan_execute(fp, fin, 1, y) != ADNN_STATUS_SUCCESS ||
      adnn_plan_execute(bp, from_x, 2, d1) != ADNN_STATUS_SUCCESS ||
      adnn_plan_execute(bp, from_y, 2, d2) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
  unsigned char a1[N * sizeof(double)], a2[N * sizeof(double)];
  if (adnn_memcpy(ctx, a1, d1, bytes, ADNN_MEMCPY_DEVICE_TO_HOST) != ADNN_STATUS_SUCCESS ||
      adnn_memcpy(ctx, a2, d2, bytes, ADNN_MEMCPY_DEVICE_TO_HOST) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
  int bad = 0, first = -1;
  for (int i = 0; i < N; i++) {
    double v1, v2;
    if (dt == F64) {
      memcpy(&v1, a1 + i * es, es);
      memcpy(&v2, a2 + i * es, es);
    } else {
      float f1, f2;
      memcpy(&f1, a1 + i * es, es);
      memcpy(&f2, a2 + i * es, es);
      v1 = f1, v2 = f2;
    }
    if (!(v1 == v2 || (isnan(v1) && isnan(v2)))) {
      bad++;
      if (first < 0) first = i;
    }
  }
  ok(bad == 0, "%s from-y %s(%g,%g) %s: dx from y equals dx from x on %d elements", backend,
     adnn_activation_name(act.kind), act.alpha, act.beta, adnn_dtype_name(dt), N - bad);
  if (bad) diag("  first difference at element %d (x = %g)", first, hx[first]);
  adnn_free(ctx, x), adnn_free(ctx, y), adnn_free(ctx, g), adnn_free(ctx, d1), adnn_free(ctx, d2);
  adnn_plan_destroy(fp);
  adnn_plan_destroy(bp);
}

/* The comparison can fail: a gradient off by a relative 1e-6 is caught. */
static void self_test(void) {
  const int64_t dims[1] = {4};
  adnn_tensor_desc t;
  adnn_tensor_desc_init(&t, F64, 1, dims);
  const double fd[4] = {0.5, -1.0, 2.0, 0.0};
  double g[4];
  for (int i = 0; i < 4; i++) g[i] = fd[i] * (1.0 + 1e-6);
  int bad = 0;
  for (int i = 0; i < 4; i++) bad += !(fabs(g[i] - fd[i]) / (1.0 + fabs(fd[i])) <= TOL);
  ok(bad >= 2, "self-test: a gradient scaled by 1 + 1e-6 fails the bound on %d of 4 elements",
     bad);
}

static void check_backend(void) {
  static const adnn_activation acts[] = {
      {ADNN_ACTIVATION_IDENTITY, 0, 0},     {ADNN_ACTIVATION_RELU, 0, 0},
      {ADNN_ACTIVATION_LEAKY_RELU, 0.1, 0}, {ADNN_ACTIVATION_ELU, 1.0, 0},
      {ADNN_ACTIVATION_ELU, 0.5, 0},        {ADNN_ACTIVATION_CLAMP, -1.5, 2.5},
      {ADNN_ACTIVATION_SIGMOID, 0, 0},      {ADNN_ACTIVATION_TANH, 0, 0},
      {ADNN_ACTIVATION_GELU, 0, 0},         {ADNN_ACTIVATION_GELU_TANH, 0, 0},
      {ADNN_ACTIVATION_SILU, 0, 0},         {ADNN_ACTIVATION_SOFTPLUS, 0, 0},
      {ADNN_ACTIVATION_HARDSWISH, 0, 0}};
  for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
    check_activation(acts[i], -6.0, 6.0, 2000);
    if (acts[i].kind == ADNN_ACTIVATION_SOFTPLUS) check_activation(acts[i], 15.0, 25.0, 500);
  }
  const int64_t d2[2] = {3, 7}, d3[3] = {4, 3, 5};
  for (int log = 0; log <= 1; log++) {
    check_softmax(2, d2, 1, log, 0);
    check_softmax(3, d3, 0, log, 0);
    check_softmax(3, d3, 1, log, 1);
    check_softmax(3, d3, -1, log, 1);
  }
  check_pool(ADNN_POOL_MAX, 1, 2, 6, 7, 2, 2, 0, 0, 0);
  check_pool(ADNN_POOL_MAX, 2, 2, 7, 7, 3, 2, 1, 1, 0);
  check_pool(ADNN_POOL_MAX, 1, 3, 5, 6, 3, 1, 1, 0, 1);
  check_pool(ADNN_POOL_AVG_INCLUDE_PAD, 1, 2, 6, 5, 3, 1, 1, 0, 0);
  check_pool(ADNN_POOL_AVG_INCLUDE_PAD, 1, 3, 7, 7, 3, 2, 1, 1, 1);
  check_pool(ADNN_POOL_AVG_EXCLUDE_PAD, 2, 2, 7, 6, 3, 2, 1, 1, 0);
  check_pool(ADNN_POOL_AVG_EXCLUDE_PAD, 1, 3, 5, 5, 2, 1, 1, 0, 1);
  static const adnn_activation from_y[] = {{ADNN_ACTIVATION_IDENTITY, 0, 0},
                                           {ADNN_ACTIVATION_RELU, 0, 0},
                                           {ADNN_ACTIVATION_LEAKY_RELU, 0.1, 0},
                                           {ADNN_ACTIVATION_CLAMP, 0, 6},
                                           {ADNN_ACTIVATION_CLAMP, -1.5, 2.5}};
  for (size_t i = 0; i < sizeof from_y / sizeof from_y[0]; i++) {
    check_from_y(from_y[i], ADNN_DTYPE_F32);
    check_from_y(from_y[i], F64);
  }
}

int main(void) {
  self_test();
  size_t count = 0;
  if (adnn_backend_count(&count) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  int ran = 0;
  for (size_t i = 0; i < count; i++) {
    const adnn_backend_info *info = NULL;
    if (adnn_backend_get(i, &info) != ADNN_STATUS_SUCCESS) continue;
    if (info->state != ADNN_BACKEND_READY) {
      diag("backend %s is not ready (%s): not checked", info->name, info->reason);
      continue;
    }
    if (adnn_context_create(info->name, &ctx) != ADNN_STATUS_SUCCESS) {
      ok(0, "context on ready backend %s: %s", info->name, adnn_last_error());
      continue;
    }
    backend = info->name;
    check_backend();
    adnn_context_destroy(ctx);
    ran++;
  }
  if (!ran) diag("no ready backend: only the self-test ran");
  return tap_done();
}
