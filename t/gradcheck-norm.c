/*
 * Finite-difference gradient checks, in F64, of the normalization training
 * ops on every ready backend (the CPU plugin, and the CUDA plugin when it
 * can make a context, e.g. under t/cuda-emu.sh):
 *   - batchnorm_backward against the training forward pass's y: with the
 *     scalar L = sum(w * y) (w random, so dL/dy = w), the backward op's dx,
 *     dscale and dshift from dy = w and the statistics the forward pass saved
 *     must match central differences of L computed by batchnorm_training
 *     itself, NCHW and NHWC, rank 2 and 4;
 *   - norm_backward against the norm forward op, layer and RMS, with and
 *     without gain and bias, for dx, dgain and dbias.
 * Central differences (L(v + h) - L(v - h)) / 2h with h = 1e-5 relative to
 * max(1, |v|): the truncation error is h^2 / 6 * |L'''| (about 1e-10 here,
 * with O(1) data) and the rounding error about 1e-16 * |L| / h (about 1e-10),
 * so a gradient must agree within 1e-7 * max(1, |g|) (doc/numerics.md).
 * Also checks that two runs of the F32 CPU backward kernels give bitwise
 * identical gradients.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "t/rng.h"
#include "t/tap.h"

#define STEP 1e-5
#define TOL 1e-7

static adnn_context *ctx;
static const char *backend;

/* A device buffer of n elements of `size` bytes each and its host copy. */
typedef struct buf {
  void *dev;
  double *host;
  size_t n;
} buf;

static void buf_new(buf *b, size_t n) {
  b->n = n;
  b->host = calloc(n ? n : 1, sizeof(double));
  if (adnn_malloc(ctx, (n ? n : 1) * sizeof(double), &b->dev) != ADNN_STATUS_SUCCESS ||
      !b->host)
    tap_bail(adnn_last_error());
}

static void buf_free(buf *b) {
  adnn_free(ctx, b->dev);
  free(b->host);
}

static void up(buf *b) {
  if (adnn_memcpy(ctx, b->dev, b->host, b->n * sizeof(double), ADNN_MEMCPY_HOST_TO_DEVICE) !=
      ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
}

static void down(buf *b) {
  if (adnn_memcpy(ctx, b->host, b->dev, b->n * sizeof(double), ADNN_MEMCPY_DEVICE_TO_HOST) !=
      ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
}

static void fill(buf *b, tap_rng *r, double lo, double hi) {
  for (size_t i = 0; i < b->n; i++) b->host[i] = tap_rng_uniform(r, lo, hi);
}

/* [N, C, H, W] dims in NCHW or NHWC strides (rank 4), or [N, C] (rank 2). */
static adnn_tensor_desc image(adnn_dtype dt, int rank, const int64_t *dims, int nhwc) {
  adnn_tensor_desc t;
  adnn_tensor_desc_init(&t, dt, rank, dims);
  if (rank == 4 && nhwc) {
    t.strides[1] = 1;
    t.strides[3] = dims[1];
    t.strides[2] = dims[1] * dims[3];
    t.strides[0] = dims[1] * dims[2] * dims[3];
  }
  return t;
}

static long double dot(const buf *w, const buf *y) {
  long double s = 0.0L;
  for (size_t i = 0; i < y->n; i++) s += (long double)w->host[i] * y->host[i];
  return s;
}

/* Counts the disagreements of an analytic gradient with central differences
 * of loss() over the elements of v; reports the worst. */
typedef long double (*loss_fn)(void *arg);

static int check_grad(const char *what, buf *v, const double *grad, loss_fn loss, void *arg) {
  int bad = 0;
  double worst = 0.0;
  size_t worst_i = 0;
  for (size_t i = 0; i < v->n; i++) {
    const double keep = v->host[i];
    const double h = STEP * (fabs(keep) > 1.0 ? fabs(keep) : 1.0);
    v->host[i] = keep + h;
    up(v);
    const long double lp = loss(arg);
    v->host[i] = keep - h;
    up(v);
    const long double lm = loss(arg);
    v->host[i] = keep;
    const double num = (double)((lp - lm) / (2.0L * h));
    const double err = fabs(num - grad[i]) / (fabs(grad[i]) > 1.0 ? fabs(grad[i]) : 1.0);
    if (err > worst) worst = err, worst_i = i;
    if (!(err <= TOL)) bad++;
  }
  up(v);
  ok(bad == 0, "%s %s: %zu elements within %g of central differences (worst %.2g at %zu)",
     backend, what, v->n, TOL, worst, worst_i);
  return bad;
}

/* ---- batch norm ---------------------------------------------------------- */

typedef struct bn_run {
  adnn_plan *fwd;
  buf x, scale, shift, y, mean, inv, rm, rv, w;
} bn_run;

static long double bn_loss(void *arg) {
  bn_run *r = arg;
  const void *in[3] = {r->x.dev, r->scale.dev, r->shift.dev};
  void *out[5] = {r->y.dev, r->mean.dev, r->inv.dev, r->rm.dev, r->rv.dev};
  if (adnn_plan_execute_multi(r->fwd, in, 3, out, 5) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
  down(&r->y);
  return dot(&r->w, &r->y);
}

static void bn_check(int rank, const int64_t *dims, int nhwc, const char *tag) {
  adnn_batchnorm_desc f;
  adnn_batchnorm_desc_init(&f);
  f.epsilon = 1e-3;
  f.x = f.y = image(ADNN_DTYPE_F64, rank, dims, nhwc);
  adnn_batchnorm_training_desc td;
  adnn_batchnorm_training_desc_init(&td);
  td.forward = &f;
  td.momentum = 0.0;
  adnn_batchnorm_backward_desc bd;
  adnn_batchnorm_backward_desc_init(&bd);
  bd.forward = &f;
  bn_run r;
  adnn_plan *bwd = NULL;
  if (adnn_plan_create_batchnorm_training(ctx, &td, &r.fwd) != ADNN_STATUS_SUCCESS ||
      adnn_plan_create_batchnorm_backward(ctx, &bd, &bwd) != ADNN_STATUS_SUCCESS) {
    ok(0, "%s batchnorm %s: plans: %s", backend, tag, adnn_last_error());
    return;
  }
  size_t n = 1;
  for (int i = 0; i < rank; i++) n *= (size_t)dims[i];
  const size_t C = (size_t)dims[1];
  buf dx, ds, db;
  buf_new(&r.x, n), buf_new(&r.y, n), buf_new(&r.w, n), buf_new(&dx, n);
  buf_new(&r.scale, C), buf_new(&r.shift, C), buf_new(&r.mean, C), buf_new(&r.inv, C);
  buf_new(&r.rm, C), buf_new(&r.rv, C), buf_new(&ds, C), buf_new(&db, C);
  tap_rng rng = tap_rng_seed(0x5eed + n);
  fill(&r.x, &rng, -2.0, 2.0), fill(&r.w, &rng, -1.0, 1.0);
  fill(&r.scale, &rng, 0.5, 1.5), fill(&r.shift, &rng, -1.0, 1.0);
  up(&r.x), up(&r.w), up(&r.scale), up(&r.shift), up(&r.rm), up(&r.rv);
  (void)bn_loss(&r); /* the saved statistics of x */
  const void *in[5] = {r.x.dev, r.w.dev, r.scale.dev, r.mean.dev, r.inv.dev};
  void *out[3] = {dx.dev, ds.dev, db.dev};
  if (!ok(adnn_plan_execute_multi(bwd, in, 5, out, 3) == ADNN_STATUS_SUCCESS,
          "%s batchnorm %s: backward runs", backend, tag))
    diag("  %s", adnn_last_error());
  down(&dx), down(&ds), down(&db);
  char what[128];
  snprintf(what, sizeof what, "batchnorm %s dx", tag);
  check_grad(what, &r.x, dx.host, bn_loss, &r);
  snprintf(what, sizeof what, "batchnorm %s dscale", tag);
  check_grad(what, &r.scale, ds.host, bn_loss, &r);
  snprintf(what, sizeof what, "batchnorm %s dshift", tag);
  check_grad(what, &r.shift, db.host, bn_loss, &r);
  buf *all[12] = {&r.x, &r.y, &r.w, &dx, &r.scale, &r.shift, &r.mean, &r.inv, &r.rm, &r.rv, &ds, &db};
  for (int i = 0; i < 12; i++) buf_free(all[i]);
  adnn_plan_destroy(r.fwd);
  adnn_plan_destroy(bwd);
}

/* ---- layer / RMS norm ----------------------------------------------------- */

typedef struct nm_run {
  adnn_plan *fwd;
  int has_gain, has_bias;
  buf x, gain, bias, y, w;
} nm_run;

static long double nm_loss(void *arg) {
  nm_run *r = arg;
  const void *in[3];
  size_t k = 0;
  in[k++] = r->x.dev;
  if (r->has_gain) in[k++] = r->gain.dev;
  if (r->has_bias) in[k++] = r->bias.dev;
  if (adnn_plan_execute(r->fwd, in, k, r->y.dev) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
  down(&r->y);
  return dot(&r->w, &r->y);
}

static void nm_check(adnn_norm_kind kind, int rank, const int64_t *dims, int norm_dims, int gain,
                     int bias) {
  adnn_norm_desc f;
  adnn_norm_desc_init(&f);
  f.kind = kind;
  f.norm_dims = norm_dims;
  f.epsilon = 1e-3;
  f.has_gain = gain;
  f.has_bias = bias;
  adnn_tensor_desc_init(&f.x, ADNN_DTYPE_F64, rank, dims);
  f.y = f.x;
  adnn_norm_backward_desc bd;
  adnn_norm_backward_desc_init(&bd);
  bd.forward = &f;
  nm_run r = {.has_gain = gain, .has_bias = bias};
  adnn_plan *bwd = NULL;
  char tag[96];
  snprintf(tag, sizeof tag, "%s rank %d over %d%s%s", kind == ADNN_NORM_LAYER ? "layer" : "rms",
           rank, norm_dims, gain ? " gain" : "", bias ? " bias" : "");
  if (adnn_plan_create_norm(ctx, &f, &r.fwd) != ADNN_STATUS_SUCCESS ||
      adnn_plan_create_norm_backward(ctx, &bd, &bwd) != ADNN_STATUS_SUCCESS) {
    ok(0, "%s norm %s: plans: %s", backend, tag, adnn_last_error());
    return;
  }
  size_t n = 1, D = 1;
  for (int i = 0; i < rank; i++) {
    n *= (size_t)dims[i];
    if (i >= rank - norm_dims) D *= (size_t)dims[i];
  }
  buf dx, dg, dbias;
  buf_new(&r.x, n), buf_new(&r.y, n), buf_new(&r.w, n), buf_new(&dx, n);
  buf_new(&r.gain, D), buf_new(&r.bias, D), buf_new(&dg, D), buf_new(&dbias, D);
  tap_rng rng = tap_rng_seed(0xabc + n + (size_t)kind);
  fill(&r.x, &rng, -2.0, 2.0), fill(&r.w, &rng, -1.0, 1.0);
  fill(&r.gain, &rng, 0.5, 1.5), fill(&r.bias, &rng, -1.0, 1.0);
  up(&r.x), up(&r.w), up(&r.gain), up(&r.bias);
  const void *in[3] = {r.x.dev, r.w.dev, r.gain.dev};
  void *out[3];
  size_t k = 0;
  out[k++] = dx.dev;
  if (gain) out[k++] = dg.dev;
  if (bias) out[k++] = dbias.dev;
  if (!ok(adnn_plan_execute_multi(bwd, in, 2 + (size_t)gain, out, k) == ADNN_STATUS_SUCCESS,
          "%s norm %s: backward runs", backend, tag))
    diag("  %s", adnn_last_error());
  down(&dx), down(&dg), down(&dbias);
  char what[160];
  snprintf(what, sizeof what, "norm %s dx", tag);
  check_grad(what, &r.x, dx.host, nm_loss, &r);
  if (gain) {
    snprintf(what, sizeof what, "norm %s dgain", tag);
    check_grad(what, &r.gain, dg.host, nm_loss, &r);
  }
  if (bias) {
    snprintf(what, sizeof what, "norm %s dbias", tag);
    check_grad(what, &r.bias, dbias.host, nm_loss, &r);
  }
  buf *all[8] = {&r.x, &r.y, &r.w, &dx, &r.gain, &r.bias, &dg, &dbias};
  for (int i = 0; i < 8; i++) buf_free(all[i]);
  adnn_plan_destroy(r.fwd);
  adnn_plan_destroy(bwd);
}

/* ---- determinism: F32 CPU gradients twice --------------------------------- */

static void f32_twice(void) {
  const int64_t dims[4] = {8, 24, 17, 19};
  adnn_batchnorm_desc f;
  adnn_batchnorm_desc_init(&f);
  f.x = f.y = image(ADNN_DTYPE_F32, 4, dims, 1);
  adnn_batchnorm_backward_desc bd;
  adnn_batchnorm_backward_desc_init(&bd);
  bd.forward = &f;
  adnn_plan *bwd = NULL;
  if (adnn_plan_create_batchnorm_backward(ctx, &bd, &bwd) != ADNN_STATUS_SUCCESS) {
    ok(0, "%s f32 batchnorm backward plan: %s", backend, adnn_last_error());
    return;
  }
  const size_t n = 8 * 24 * 17 * 19, C = 24, total = 3 * n + 5 * C;
  float *h = malloc(total * sizeof *h), *a = malloc((n + 2 * C) * sizeof *a),
        *b = malloc((n + 2 * C) * sizeof *b);
  void *d = NULL;
  if (!h || !a || !b || adnn_malloc(ctx, total * sizeof *h, &d) != ADNN_STATUS_SUCCESS)
    tap_bail("out of memory");
  tap_rng rng = tap_rng_seed(42);
  for (size_t i = 0; i < total; i++) h[i] = (float)tap_rng_uniform(&rng, 0.5, 1.5);
  adnn_memcpy(ctx, d, h, total * sizeof *h, ADNN_MEMCPY_HOST_TO_DEVICE);
  float *x = d, *dy = x + n, *dx = dy + n, *v = dx + n;
  const void *in[5] = {x, dy, v, v + C, v + 2 * C};
  void *out[3] = {dx, v + 3 * C, v + 4 * C};
  int ran = adnn_plan_execute_multi(bwd, in, 5, out, 3) == ADNN_STATUS_SUCCESS;
  adnn_memcpy(ctx, a, dx, (n + 2 * C) * sizeof *a, ADNN_MEMCPY_DEVICE_TO_HOST);
  ran &= adnn_plan_execute_multi(bwd, in, 5, out, 3) == ADNN_STATUS_SUCCESS;
  adnn_memcpy(ctx, b, dx, (n + 2 * C) * sizeof *b, ADNN_MEMCPY_DEVICE_TO_HOST);
  ok(ran && memcmp(a, b, (n + 2 * C) * sizeof *a) == 0,
     "%s f32 batchnorm backward [8,24,17,19] nhwc: two runs give bitwise identical dx, dscale, "
     "dshift", backend);
  adnn_free(ctx, d);
  free(h), free(a), free(b);
  adnn_plan_destroy(bwd);
}

int main(void) {
  static const char *const backends[2] = {"cpu", "cuda"};
  int ran = 0;
  for (int k = 0; k < 2; k++) {
    backend = backends[k];
    if (adnn_context_create(backend, &ctx) != ADNN_STATUS_SUCCESS) {
      if (k == 0) tap_bail(adnn_last_error());
      diag("%s: not available (%s)", backend, adnn_last_error());
      continue;
    }
    ran++;
    const int64_t img[4] = {2, 3, 2, 3}, img2[4] = {3, 2, 2, 2}, mat[2] = {5, 3};
    bn_check(4, img, 0, "[2,3,2,3] nchw");
    bn_check(4, img2, 1, "[3,2,2,2] nhwc");
    bn_check(2, mat, 0, "[5,3]");
    const int64_t rows[2] = {3, 5}, r3[3] = {2, 3, 4};
    for (int kind = ADNN_NORM_LAYER; kind <= ADNN_NORM_RMS; kind++) {
      nm_check((adnn_norm_kind)kind, 2, rows, 1, 1, 1);
      nm_check((adnn_norm_kind)kind, 2, rows, 1, 0, 0);
      nm_check((adnn_norm_kind)kind, 3, r3, 2, 1, 0);
      nm_check((adnn_norm_kind)kind, 3, r3, 1, 0, 1);
    }
    if (k == 0) f32_twice();
    adnn_context_destroy(ctx);
  }
  ok(ran >= 1, "ran on %d backend(s)", ran);
  return tap_done();
}
