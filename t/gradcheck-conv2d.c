/*
 * Finite-difference gradient checks of conv2d backward data and backward
 * weights in F64, through the public API only, on every ready backend and
 * for every algorithm the backend has for the problem.
 *
 * For a forward convolution y = conv(x, w) + bias and a fixed random
 * upstream gradient g of y's shape, the scalar L(x, w, bias) = sum g * y has
 * the gradients dL/dx = conv2d_backward_data(g, w), dL/dw and dL/dbias =
 * conv2d_backward_weights(x, g). Every element of x, w and bias is checked
 * against the central difference
 *     (L(v + h) - L(v - h)) / (2 h),   h = 1e-3,
 * where L is evaluated with the backend's forward conv2d plan and summed in
 * long double on the host. L is linear in each variable, so the central
 * difference has no truncation error; what is left is rounding, about
 * eps * sum |g * y| / h, below 1e-10 for these shapes. The tolerance is
 * |analytic - fd| <= 1e-7 * (1 + |fd|) (doc/numerics.md), far above that
 * rounding and far below any real mistake (a wrong tap or a missed element is
 * off by O(1)); a control checks that comparing each analytic element with
 * its neighbour's difference fails, so the check can fail.
 *
 * beta = 1 (accumulation) is checked too: the backward outputs start from
 * random values, and what they gain must be the finite-difference gradient.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "t/tap.h"

/* A status check usable in conditions: prints adnn_last_error() when the
 * status is not the expected one. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int status_is(adnn_status got, adnn_status want, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  const int good = ok(got == want, "%s", what);
  if (!good) diag("  got %s, expected %s: %s", adnn_status_name(got), adnn_status_name(want),
                  adnn_last_error());
  return good;
}


#define STEP 1e-3
#define TOL 1e-7

typedef struct geom {
  const char *name;
  int64_t n, c, h, w, k, r, s, sh, sw, pt, pb, pl, pr, dh, dw, g;
  int bias, nhwc;
} geom;

static const geom geoms[] = {
    /* name            n  c  h  w  k  r  s sh sw pt pb pl pr dh dw g bias nhwc */
    {"3x3 pad1",        2, 3, 5, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},
    {"3x3 s2 asym",     2, 3, 7, 6, 4, 3, 3, 2, 2, 0, 2, 1, 0, 1, 1, 1, 1, 1},
    {"3x3 dil2 g2",     1, 4, 7, 7, 6, 3, 3, 1, 1, 2, 1, 1, 2, 2, 2, 2, 1, 0},
    {"2x2 s3 (stride > kernel)", 2, 2, 8, 7, 3, 2, 2, 3, 3, 0, 1, 1, 0, 1, 1, 1, 1, 1},
    {"1x1",             2, 4, 4, 5, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1},
    {"dw 3x3 s2",       2, 4, 6, 6, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4, 1, 0},
    {"dw 3x3 nhwc",     1, 3, 5, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, 0, 1},
};

static const adnn_conv2d_algorithm algos[] = {
    ADNN_CONV2D_ALGO_AUTO, ADNN_CONV2D_ALGO_REFERENCE, ADNN_CONV2D_ALGO_IM2COL_GEMM,
    ADNN_CONV2D_ALGO_GEMM_1X1, ADNN_CONV2D_ALGO_DEPTHWISE_DIRECT, ADNN_CONV2D_ALGO_DIRECT};
#define N_ALGOS (sizeof algos / sizeof algos[0])

/* A packed 4-d F64 descriptor, [d0, d1, d2, d3] stored in order `perm`
 * (perm lists the dims from outermost to innermost). */
static adnn_tensor_desc desc4(int64_t d0, int64_t d1, int64_t d2, int64_t d3, int nhwc) {
  adnn_tensor_desc t;
  memset(&t, 0, sizeof t);
  t.dtype = ADNN_DTYPE_F64;
  t.rank = 4;
  t.dims[0] = d0, t.dims[1] = d1, t.dims[2] = d2, t.dims[3] = d3;
  if (nhwc) {
    t.strides[1] = 1, t.strides[3] = d1, t.strides[2] = d1 * d3, t.strides[0] = d1 * d2 * d3;
  } else {
    t.strides[3] = 1, t.strides[2] = d3, t.strides[1] = d2 * d3, t.strides[0] = d1 * d2 * d3;
  }
  return t;
}

static int64_t count4(const adnn_tensor_desc *t) {
  return t->dims[0] * t->dims[1] * t->dims[2] * t->dims[3];
}

typedef struct dev {
  adnn_context *ctx;
  double *buf[8];
} dev;

static double *dalloc(dev *d, int slot, int64_t n) {
  void *p = NULL;
  if (adnn_malloc(d->ctx, (size_t)n * sizeof(double), &p) != ADNN_STATUS_SUCCESS) return NULL;
  d->buf[slot] = p;
  return p;
}

static int put(dev *d, double *dst, const double *src, int64_t n) {
  return adnn_memcpy(d->ctx, dst, src, (size_t)n * sizeof(double), ADNN_MEMCPY_HOST_TO_DEVICE) ==
         ADNN_STATUS_SUCCESS;
}

static int get(dev *d, double *dst, const double *src, int64_t n) {
  return adnn_memcpy(d->ctx, dst, src, (size_t)n * sizeof(double), ADNN_MEMCPY_DEVICE_TO_HOST) ==
             ADNN_STATUS_SUCCESS &&
         adnn_context_synchronize(d->ctx) == ADNN_STATUS_SUCCESS;
}

/* The problem's host data and its forward plan. */
typedef struct problem {
  adnn_conv2d_desc f;
  int64_t nx, nw, ny, nb;
  double *x, *w, *b, *g;
  adnn_plan *fwd;
  double *dx_, *dw_, *db_, *dy_, *dyv; /* device buffers */
  double *ybuf;                        /* host copy of y */
} problem;

/* L = sum g * conv(x, w) + bias, with the host values uploaded first. */
static long double loss(dev *d, problem *p, int *good) {
  double *xd = d->buf[0], *wd = d->buf[1], *bd = d->buf[2], *yd = d->buf[3];
  *good &= put(d, xd, p->x, p->nx) && put(d, wd, p->w, p->nw);
  if (p->f.has_bias) *good &= put(d, bd, p->b, p->nb);
  const void *in[3] = {xd, wd, bd};
  *good &= adnn_plan_execute(p->fwd, in, p->f.has_bias ? 3 : 2, yd) == ADNN_STATUS_SUCCESS;
  *good &= get(d, p->ybuf, yd, p->ny);
  long double l = 0.0L;
  for (int64_t i = 0; i < p->ny; i++) l += (long double)p->g[i] * p->ybuf[i];
  return l;
}

/* Central differences of L in every element of v (n of them). */
static void differences(dev *d, problem *p, double *v, int64_t n, double *fd, int *good) {
  for (int64_t i = 0; i < n; i++) {
    const double keep = v[i];
    v[i] = keep + STEP;
    long double lp = loss(d, p, good);
    v[i] = keep - STEP;
    long double lm = loss(d, p, good);
    v[i] = keep;
    fd[i] = (double)((lp - lm) / (2.0L * STEP));
  }
}

/* The worst |a - fd| / (1 + |fd|), with `shift` comparing a[i] with
 * fd[i + shift] (the control). */
static double worst(const double *a, const double *base, const double *fd, int64_t n, int shift) {
  double m = 0.0;
  for (int64_t i = 0; i < n; i++) {
    const double got = a[i] - (base ? base[i] : 0.0), want = fd[(i + shift) % n];
    const double e = fabs(got - want) / (1.0 + fabs(want));
    if (!(e <= m)) m = e; /* NaN propagates */
  }
  return m;
}

static void check_geometry(const char *backend, dev *d, const geom *gm) {
  problem p;
  memset(&p, 0, sizeof p);
  adnn_conv2d_desc_init(&p.f);
  p.f.x = desc4(gm->n, gm->c, gm->h, gm->w, gm->nhwc);
  p.f.w = desc4(gm->k, gm->c / gm->g, gm->r, gm->s, gm->nhwc);
  p.f.stride_h = gm->sh, p.f.stride_w = gm->sw;
  p.f.pad_top = gm->pt, p.f.pad_bottom = gm->pb, p.f.pad_left = gm->pl, p.f.pad_right = gm->pr;
  p.f.dilation_h = gm->dh, p.f.dilation_w = gm->dw;
  p.f.groups = gm->g;
  int64_t yd[4];
  if (!status_is(adnn_conv2d_output_dims(&p.f, yd), ADNN_STATUS_SUCCESS, "%s %s: output dims",
                 backend, gm->name))
    return;
  p.f.y = desc4(yd[0], yd[1], yd[2], yd[3], gm->nhwc);
  if (gm->bias) {
    p.f.has_bias = 1;
    adnn_tensor_desc_init(&p.f.bias, ADNN_DTYPE_F64, 1, &gm->k);
  }
  p.nx = count4(&p.f.x), p.nw = count4(&p.f.w), p.ny = count4(&p.f.y), p.nb = gm->k;
  const int64_t most = p.nx > p.nw ? (p.nx > p.ny ? p.nx : p.ny) : (p.nw > p.ny ? p.nw : p.ny);
  double *host = calloc((size_t)(8 * most + 8 * p.nb), sizeof(double));
  if (!host) tap_bail("out of memory");
  p.x = host, p.w = p.x + most, p.g = p.w + most, p.ybuf = p.g + most;
  double *fdx = p.ybuf + most, *fdw = fdx + most, *got = fdw + most, *init = got + most;
  p.b = init + most;
  double *fdb = p.b + p.nb, *gotb = fdb + p.nb, *initb = gotb + p.nb;
  tap_rng r = tap_rng_seed(0x9e3779b97f4a7c15ull ^ (uint64_t)(gm - geoms));
  for (int64_t i = 0; i < p.nx; i++) p.x[i] = tap_rng_uniform(&r, -1, 1);
  for (int64_t i = 0; i < p.nw; i++) p.w[i] = tap_rng_uniform(&r, -1, 1);
  for (int64_t i = 0; i < p.nb; i++) p.b[i] = tap_rng_uniform(&r, -1, 1);
  for (int64_t i = 0; i < p.ny; i++) p.g[i] = tap_rng_uniform(&r, -1, 1);

  int good = 1;
  good &= dalloc(d, 0, p.nx) && dalloc(d, 1, p.nw) && dalloc(d, 2, p.nb) && dalloc(d, 3, p.ny) &&
          dalloc(d, 4, p.ny) && dalloc(d, 5, p.nx) && dalloc(d, 6, p.nw) && dalloc(d, 7, p.nb);
  if (!ok(good, "%s %s: device buffers", backend, gm->name)) goto out;
  if (!status_is(adnn_plan_create_conv2d(d->ctx, &p.f, &p.fwd), ADNN_STATUS_SUCCESS,
                 "%s %s: forward plan", backend, gm->name))
    goto out;
  differences(d, &p, p.x, p.nx, fdx, &good);
  differences(d, &p, p.w, p.nw, fdw, &good);
  if (gm->bias) differences(d, &p, p.b, p.nb, fdb, &good);
  (void)loss(d, &p, &good); /* leaves the unperturbed x, w, bias on the device */
  good &= put(d, d->buf[4], p.g, p.ny);
  if (!ok(good, "%s %s: finite differences through the forward plan", backend, gm->name)) goto out;

  for (size_t a = 0; a < N_ALGOS; a++)
    for (int beta = 0; beta <= 1; beta++) {
      const char *an = adnn_conv2d_algorithm_name(algos[a]);
      /* Backward data: dx = beta * init + dL/dx. */
      adnn_conv2d_backward_data_desc bd;
      adnn_conv2d_backward_data_desc_init(&bd);
      bd.forward = &p.f;
      bd.beta = beta;
      bd.algorithm = algos[a];
      adnn_plan *plan = NULL;
      adnn_status st = adnn_plan_create_conv2d_backward_data(d->ctx, &bd, &plan);
      if (st == ADNN_STATUS_NOT_SUPPORTED) {
        diag("%s %s: backward data %s: %s", backend, gm->name, an, adnn_last_error());
      } else if (status_is(st, ADNN_STATUS_SUCCESS, "%s %s: backward data plan (%s)", backend,
                           gm->name, an)) {
        for (int64_t i = 0; i < p.nx; i++) init[i] = beta ? tap_rng_uniform(&r, -1, 1) : NAN;
        int run = put(d, d->buf[5], init, p.nx);
        const void *in[2] = {d->buf[4], d->buf[1]};
        run &= adnn_plan_execute(plan, in, 2, d->buf[5]) == ADNN_STATUS_SUCCESS;
        run &= get(d, got, d->buf[5], p.nx);
        const double e = worst(got, beta ? init : NULL, fdx, p.nx, 0);
        ok(run && e <= TOL, "%s %s: dx (%s, %s, beta %d) matches central differences (worst "
           "%.2g, tolerance %.0e)", backend, gm->name, adnn_plan_get_algorithm(plan), an, beta, e,
           TOL);
        if (a == 0 && beta == 0)
          ok(worst(got, NULL, fdx, p.nx, 1) > TOL, "%s %s: control: dx against its neighbours' "
             "differences fails", backend, gm->name);
        adnn_plan_destroy(plan);
      }
      /* Backward weights: dw (and db) = beta * init + the gradients. */
      adnn_conv2d_backward_weights_desc wd;
      adnn_conv2d_backward_weights_desc_init(&wd);
      wd.forward = &p.f;
      wd.beta = beta;
      wd.algorithm = algos[a];
      plan = NULL;
      st = adnn_plan_create_conv2d_backward_weights(d->ctx, &wd, &plan);
      if (st == ADNN_STATUS_NOT_SUPPORTED) {
        diag("%s %s: backward weights %s: %s", backend, gm->name, an, adnn_last_error());
        continue;
      }
      if (!status_is(st, ADNN_STATUS_SUCCESS, "%s %s: backward weights plan (%s)", backend,
                     gm->name, an))
        continue;
      for (int64_t i = 0; i < p.nw; i++) init[i] = beta ? tap_rng_uniform(&r, -1, 1) : NAN;
      for (int64_t i = 0; i < p.nb; i++) initb[i] = beta ? tap_rng_uniform(&r, -1, 1) : NAN;
      int run = put(d, d->buf[6], init, p.nw) && put(d, d->buf[7], initb, p.nb);
      const void *in[2] = {d->buf[0], d->buf[4]};
      void *outs[2] = {d->buf[6], d->buf[7]};
      run &= adnn_plan_execute_multi(plan, in, 2, outs, gm->bias ? 2 : 1) == ADNN_STATUS_SUCCESS;
      run &= get(d, got, d->buf[6], p.nw) && get(d, gotb, d->buf[7], p.nb);
      const double e = worst(got, beta ? init : NULL, fdw, p.nw, 0);
      ok(run && e <= TOL, "%s %s: dw (%s, %s, beta %d) matches central differences (worst %.2g, "
         "tolerance %.0e)", backend, gm->name, adnn_plan_get_algorithm(plan), an, beta, e, TOL);
      if (a == 0 && beta == 0)
        ok(worst(got, NULL, fdw, p.nw, 1) > TOL, "%s %s: control: dw against its neighbours' "
           "differences fails", backend, gm->name);
      if (gm->bias) {
        const double eb = worst(gotb, beta ? initb : NULL, fdb, p.nb, 0);
        ok(run && eb <= TOL, "%s %s: db (%s, beta %d) matches central differences (worst %.2g)",
           backend, gm->name, an, beta, eb);
      }
      adnn_plan_destroy(plan);
    }
out:
  adnn_plan_destroy(p.fwd);
  for (int i = 0; i < 8; i++)
    if (d->buf[i]) adnn_free(d->ctx, d->buf[i]);
  memset(d->buf, 0, sizeof d->buf);
  free(host);
}

int main(void) {
  size_t count = 0;
  if (adnn_backend_count(&count) != ADNN_STATUS_SUCCESS) tap_bail("adnn_backend_count failed");
  int tested = 0;
  for (size_t b = 0; b < count; b++) {
    const adnn_backend_info *info = NULL;
    if (adnn_backend_get(b, &info) != ADNN_STATUS_SUCCESS || info->state != ADNN_BACKEND_READY)
      continue;
    dev d;
    memset(&d, 0, sizeof d);
    if (!status_is(adnn_context_create(info->name, &d.ctx), ADNN_STATUS_SUCCESS,
                   "context on %s", info->name))
      continue;
    tested++;
    for (size_t i = 0; i < sizeof geoms / sizeof geoms[0]; i++)
      check_geometry(info->name, &d, &geoms[i]);
    adnn_context_destroy(d.ctx);
  }
  if (!tested) return tap_skip_all("no ready backend");
  return tap_done();
}
