/*
 * Finite-difference gradient checks of attention backward in F64, through
 * the public API only, on every ready backend.
 *
 * For the forward o = attention(q, k, v) (with the shape's options: causal
 * masks aligned to the bottom right with Sq != Skv, grouped-query heads, a
 * broadcast bias with -inf entries, key lengths including 0) and a fixed
 * random weight W of o's shape, the scalar L(q, k, v) = sum W * o has the
 * gradients dL/dq, dL/dk, dL/dv that attention backward computes from q, k,
 * v, o, lse and do = W. Every element of q, k and v is checked against the
 * central difference
 *     (L(x + h) - L(x - h)) / (2 h),   h = 1e-5,
 * with L evaluated by the backend's forward attention plan and summed in
 * long double on the host. L is linear in v (no truncation error) and smooth
 * in q and k (the masks do not depend on them); the central difference's
 * truncation error is h^2 / 6 * |L'''|, about 1e-10 * |L'''| here, and its
 * rounding about eps * sum |W * o| / h, below 1e-9 for these shapes. The
 * tolerance is |analytic - fd| <= 1e-7 * (1 + |fd|) (doc/numerics.md), far
 * above both and far below any real mistake (a missed group head, a wrong
 * mask or scale is off by O(1e-2) or more); a control checks that comparing
 * each analytic element with its neighbour's difference fails, so the check
 * can fail.
 *
 * A backend whose attention plans are not implemented yet (NOT_SUPPORTED) is
 * skipped with a note, except the CPU backend, which must run every shape.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "t/tap.h"

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

#define STEP 1e-5
#define TOL 1e-7

enum { BIAS_NONE, BIAS_HEADS /* [1, H, Sq, Skv] */, MASK_2D /* [Sq, Skv] with -inf */ };

typedef struct shape {
  const char *name;
  int64_t B, H, Hkv, Sq, Skv, D, Dv;
  int causal, bias, bshd;
  int32_t key_lengths[2]; /* used when the first is >= 0 */
  double scale;
} shape;

static const shape shapes[] = {
    /* name                                 B  H Hkv Sq Skv D Dv causal bias  bshd lengths scale */
    {"plain",                               1, 2, 2, 5, 7, 4, 4, 0, BIAS_NONE, 0, {-1, 0}, 0},
    {"causal Sq > Skv, MQA (masked rows)",  1, 2, 1, 6, 4, 3, 5, 1, BIAS_NONE, 0, {-1, 0}, 0},
    {"GQA, bias [1,H,Sq,Skv], key lengths", 2, 4, 2, 4, 6, 4, 3, 0, BIAS_HEADS, 0, {4, 6}, 0.7},
    {"causal Sq < Skv, mask, lengths 0",    2, 2, 2, 3, 8, 3, 3, 1, MASK_2D, 0, {0, 5}, 0},
    {"bshd, GQA, causal Sq == Skv",         2, 4, 2, 5, 5, 4, 4, 1, BIAS_NONE, 1, {-1, 0}, 0},
};

static adnn_tensor_desc desc4(int64_t d0, int64_t d1, int64_t d2, int64_t d3, int bshd) {
  const int64_t dims[4] = {d0, d1, d2, d3};
  int64_t strides[4] = {d1 * d2 * d3, d2 * d3, d3, 1};
  if (bshd) strides[1] = d3, strides[2] = d1 * d3;
  adnn_tensor_desc t;
  adnn_tensor_desc_init_strided(&t, ADNN_DTYPE_F64, 4, dims, strides);
  return t;
}

typedef struct problem {
  adnn_attention_desc f;
  int64_t nq, nk, nv, no, nl, nb;
  double *q, *k, *v, *w, *bias, *o, *lse; /* host */
  void *dq_, *dk_, *dv_, *do_;            /* device */
  void *dev[8];                           /* q, k, v, bias, key_lengths, o, lse, spare */
  adnn_plan *fwd;
  adnn_context *ctx;
} problem;

static int put(adnn_context *ctx, void *dst, const void *src, size_t bytes) {
  return adnn_memcpy(ctx, dst, src, bytes, ADNN_MEMCPY_HOST_TO_DEVICE) == ADNN_STATUS_SUCCESS;
}
static int get(adnn_context *ctx, void *dst, const void *src, size_t bytes) {
  return adnn_memcpy(ctx, dst, src, bytes, ADNN_MEMCPY_DEVICE_TO_HOST) == ADNN_STATUS_SUCCESS &&
         adnn_context_synchronize(ctx) == ADNN_STATUS_SUCCESS;
}

/* The forward's execute inputs (q, k, v[, bias][, key_lengths]). */
static int fwd_inputs(const problem *p, const void **in) {
  int n = 0;
  in[n++] = p->dev[0], in[n++] = p->dev[1], in[n++] = p->dev[2];
  if (p->f.has_bias) in[n++] = p->dev[3];
  if (p->f.has_key_lengths) in[n++] = p->dev[4];
  return n;
}

/* L = sum W * o after uploading the host q, k, v; o and lse stay on the
 * device and o is copied to the host. */
static long double loss(problem *p, int *good) {
  *good &= put(p->ctx, p->dev[0], p->q, (size_t)p->nq * sizeof(double)) &&
           put(p->ctx, p->dev[1], p->k, (size_t)p->nk * sizeof(double)) &&
           put(p->ctx, p->dev[2], p->v, (size_t)p->nv * sizeof(double));
  const void *in[5];
  const int n = fwd_inputs(p, in);
  void *out[2] = {p->dev[5], p->dev[6]};
  *good &= adnn_plan_execute_multi(p->fwd, in, (size_t)n, out, 2) == ADNN_STATUS_SUCCESS;
  *good &= get(p->ctx, p->o, p->dev[5], (size_t)p->no * sizeof(double));
  long double l = 0.0L;
  for (int64_t i = 0; i < p->no; i++) l += (long double)p->w[i] * p->o[i];
  return l;
}

static void differences(problem *p, double *x, int64_t n, double *fd, int *good) {
  for (int64_t i = 0; i < n; i++) {
    const double keep = x[i];
    x[i] = keep + STEP;
    const long double lp = loss(p, good);
    x[i] = keep - STEP;
    const long double lm = loss(p, good);
    x[i] = keep;
    fd[i] = (double)((lp - lm) / (2.0L * STEP));
  }
}

/* The worst |a - fd| / (1 + |fd|); `shift` compares a[i] with fd[i + shift]
 * (the control). NaN propagates. */
static double worst(const double *a, const double *fd, int64_t n, int shift) {
  double m = 0.0;
  for (int64_t i = 0; i < n; i++) {
    const double e = fabs(a[i] - fd[(i + shift) % n]) / (1.0 + fabs(fd[(i + shift) % n]));
    if (!(e <= m)) m = e;
  }
  return m;
}

static void check_shape(const char *backend, adnn_context *ctx, const shape *sh, size_t index) {
  problem p;
  memset(&p, 0, sizeof p);
  p.ctx = ctx;
  adnn_attention_desc *f = &p.f;
  adnn_attention_desc_init(f);
  f->q = desc4(sh->B, sh->H, sh->Sq, sh->D, sh->bshd);
  f->k = desc4(sh->B, sh->Hkv, sh->Skv, sh->D, sh->bshd);
  f->v = desc4(sh->B, sh->Hkv, sh->Skv, sh->Dv, sh->bshd);
  f->o = desc4(sh->B, sh->H, sh->Sq, sh->Dv, sh->bshd);
  const int64_t ld[3] = {sh->B, sh->H, sh->Sq};
  adnn_tensor_desc_init(&f->lse, ADNN_DTYPE_F64, 3, ld);
  f->causal = sh->causal;
  f->scale = sh->scale;
  p.nb = 1;
  if (sh->bias == BIAS_HEADS) {
    const int64_t bd[4] = {1, sh->H, sh->Sq, sh->Skv};
    adnn_tensor_desc_init(&f->bias, ADNN_DTYPE_F64, 4, bd);
    p.nb = sh->H * sh->Sq * sh->Skv;
  } else if (sh->bias == MASK_2D) {
    const int64_t bd[2] = {sh->Sq, sh->Skv};
    adnn_tensor_desc_init(&f->bias, ADNN_DTYPE_F64, 2, bd);
    p.nb = sh->Sq * sh->Skv;
  }
  f->has_bias = sh->bias != BIAS_NONE;
  if (sh->key_lengths[0] >= 0) {
    f->has_key_lengths = 1;
    adnn_tensor_desc_init(&f->key_lengths, ADNN_DTYPE_I32, 1, &sh->B);
  }
  p.nq = sh->B * sh->H * sh->Sq * sh->D, p.nk = sh->B * sh->Hkv * sh->Skv * sh->D;
  p.nv = sh->B * sh->Hkv * sh->Skv * sh->Dv, p.no = sh->B * sh->H * sh->Sq * sh->Dv;
  p.nl = sh->B * sh->H * sh->Sq;
  const int64_t most = p.nq > p.nk ? (p.nq > p.nv ? p.nq : p.nv) : (p.nk > p.nv ? p.nk : p.nv);
  double *host = calloc((size_t)(3 * most + 2 * p.no + p.nl + p.nb + 6 * most), sizeof(double));
  if (!host) tap_bail("out of memory");
  p.q = host, p.k = p.q + most, p.v = p.k + most, p.w = p.v + most, p.o = p.w + p.no;
  p.lse = p.o + p.no, p.bias = p.lse + p.nl;
  double *fdq = p.bias + p.nb, *fdk = fdq + most, *fdv = fdk + most;
  double *gq = fdv + most, *gk = gq + most, *gv = gk + most;
  tap_rng r = tap_rng_seed(0x5deece66dull ^ (uint64_t)index);
  for (int64_t i = 0; i < p.nq; i++) p.q[i] = tap_rng_uniform(&r, -1, 1);
  for (int64_t i = 0; i < p.nk; i++) p.k[i] = tap_rng_uniform(&r, -1, 1);
  for (int64_t i = 0; i < p.nv; i++) p.v[i] = tap_rng_uniform(&r, -1, 1);
  for (int64_t i = 0; i < p.no; i++) p.w[i] = tap_rng_uniform(&r, -1, 1);
  for (int64_t i = 0; i < p.nb; i++)
    p.bias[i] = sh->bias == MASK_2D && tap_rng_uniform(&r, 0, 1) < 0.25 ? -INFINITY
                                                                        : tap_rng_uniform(&r, -1, 1);

  const size_t bytes[8] = {(size_t)p.nq * 8, (size_t)p.nk * 8, (size_t)p.nv * 8,
                           (size_t)p.nb * 8, 2 * sizeof(int32_t), (size_t)p.no * 8,
                           (size_t)p.nl * 8, 0};
  int good = 1;
  for (int i = 0; i < 7; i++) good &= adnn_malloc(ctx, bytes[i], &p.dev[i]) == ADNN_STATUS_SUCCESS;
  good &= adnn_malloc(ctx, bytes[0], &p.dq_) == ADNN_STATUS_SUCCESS &&
          adnn_malloc(ctx, bytes[1], &p.dk_) == ADNN_STATUS_SUCCESS &&
          adnn_malloc(ctx, bytes[2], &p.dv_) == ADNN_STATUS_SUCCESS &&
          adnn_malloc(ctx, bytes[5], &p.do_) == ADNN_STATUS_SUCCESS;
  if (!ok(good, "%s %s: device buffers", backend, sh->name)) goto out;
  if (f->has_bias) good &= put(ctx, p.dev[3], p.bias, bytes[3]);
  if (f->has_key_lengths) good &= put(ctx, p.dev[4], sh->key_lengths, bytes[4]);

  adnn_attention_backward_desc bd;
  adnn_attention_backward_desc_init(&bd);
  bd.forward = f;
  adnn_plan *bwd = NULL;
  const adnn_status fs = adnn_plan_create_attention(ctx, f, &p.fwd);
  const adnn_status bs = fs == ADNN_STATUS_SUCCESS
                             ? adnn_plan_create_attention_backward(ctx, &bd, &bwd)
                             : fs;
  if (bs == ADNN_STATUS_NOT_SUPPORTED && strcmp(backend, "cpu") != 0) {
    char why[640];
    snprintf(why, sizeof why, "%s %s: not supported there: %s", backend, sh->name,
             adnn_last_error());
    tap_skip(why);
    goto out;
  }
  if (!status_is(fs, ADNN_STATUS_SUCCESS, "%s %s: forward plan", backend, sh->name) ||
      !status_is(bs, ADNN_STATUS_SUCCESS, "%s %s: backward plan", backend, sh->name))
    goto out;

  differences(&p, p.q, p.nq, fdq, &good);
  differences(&p, p.k, p.nk, fdk, &good);
  differences(&p, p.v, p.nv, fdv, &good);
  (void)loss(&p, &good); /* the unperturbed q, k, v, their o and lse on the device */
  good &= put(ctx, p.do_, p.w, bytes[5]);
  if (!ok(good, "%s %s: finite differences through the forward plan", backend, sh->name))
    goto out;
  {
    const void *in[8] = {p.dev[0], p.dev[1], p.dev[2], p.dev[5], p.do_, p.dev[6]};
    int n = 6;
    if (f->has_bias) in[n++] = p.dev[3];
    if (f->has_key_lengths) in[n++] = p.dev[4];
    void *out[3] = {p.dq_, p.dk_, p.dv_};
    /* Poison: an element the backward does not write fails. */
    double *nan = calloc((size_t)most, sizeof(double));
    if (!nan) tap_bail("out of memory");
    for (int64_t i = 0; i < most; i++) nan[i] = NAN;
    int run = put(ctx, p.dq_, nan, bytes[0]) && put(ctx, p.dk_, nan, bytes[1]) &&
              put(ctx, p.dv_, nan, bytes[2]);
    free(nan);
    run &= status_is(adnn_plan_execute_multi(bwd, in, (size_t)n, out, 3), ADNN_STATUS_SUCCESS,
                     "%s %s: backward runs (%s)", backend, sh->name,
                     adnn_plan_get_algorithm(bwd));
    run &= get(ctx, gq, p.dq_, bytes[0]) && get(ctx, gk, p.dk_, bytes[1]) &&
           get(ctx, gv, p.dv_, bytes[2]);
    const double eq = worst(gq, fdq, p.nq, 0), ek = worst(gk, fdk, p.nk, 0),
                 ev = worst(gv, fdv, p.nv, 0);
    ok(run && eq <= TOL, "%s %s: dq matches central differences (worst %.2g, tolerance %.0e)",
       backend, sh->name, eq, TOL);
    ok(run && ek <= TOL, "%s %s: dk matches central differences (worst %.2g, tolerance %.0e)",
       backend, sh->name, ek, TOL);
    ok(run && ev <= TOL, "%s %s: dv matches central differences (worst %.2g, tolerance %.0e)",
       backend, sh->name, ev, TOL);
    ok(worst(gq, fdq, p.nq, 1) > TOL && worst(gk, fdk, p.nk, 1) > TOL &&
           worst(gv, fdv, p.nv, 1) > TOL,
       "%s %s: control: gradients against their neighbours' differences fail", backend,
       sh->name);
  }
out:
  adnn_plan_destroy(bwd);
  adnn_plan_destroy(p.fwd);
  for (int i = 0; i < 8; i++)
    if (p.dev[i]) adnn_free(ctx, p.dev[i]);
  if (p.dq_) adnn_free(ctx, p.dq_);
  if (p.dk_) adnn_free(ctx, p.dk_);
  if (p.dv_) adnn_free(ctx, p.dv_);
  if (p.do_) adnn_free(ctx, p.do_);
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
    adnn_context *ctx = NULL;
    if (!status_is(adnn_context_create(info->name, &ctx), ADNN_STATUS_SUCCESS, "context on %s",
                   info->name))
      continue;
    tested++;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
      check_shape(info->name, ctx, &shapes[i], i);
    adnn_context_destroy(ctx);
  }
  if (!tested) return tap_skip_all("no ready backend");
  return tap_done();
}
