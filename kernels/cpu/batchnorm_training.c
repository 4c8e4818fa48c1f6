/*
 * Batch normalization in training mode and its backward pass (F32), both in
 * this file because they share the layouts, the statistics passes and the
 * per-channel reduction scheme.
 *
 * Training: per channel c, mean and the biased variance over N and every
 * spatial position, two passes accumulated in double (the sum, then the sum
 * of squared deviations from the mean, so there is no E[x^2] - E[x]^2
 * cancellation); y = scale * (x - mean) * inv_std + shift; saved mean and
 * inv_std; running statistics updated with the unbiased variance.
 * Backward: sums of dy and dy * (x - mean) per channel in double, then
 * dx = A dy + B (x - mean) + C0 with per-channel A = scale * inv_std,
 * B = -A * inv_std * dscale / n, C0 = -A * dshift / n (doc/ops.md's formula
 * regrouped). The mean enters float arithmetic as a pair hi + lo, so that
 * (x - hi) - lo keeps the deviation accurate to an ulp of itself even when
 * the mean is large next to the spread (as in norm.c).
 *
 * Paths (reshape time):
 *   planes: the dims after C collapse to one unit-stride run in every tensor
 *           (packed NCHW and relatives): one task per channel walks its N
 *           planes with vector loops, computes its statistics and writes its
 *           outputs; channels split across threads. No workspace.
 *   pixels: C has unit stride in every tensor (NHWC, [N, C]): the pixels (all
 *           dims but C) are cut into a fixed number of blocks that depends
 *           only on the problem; each block accumulates per-channel partial
 *           sums into its own workspace row, and the rows are added in block
 *           order. Blocks split across threads.
 * Any other layout is left to the reference loops (supports() says why).
 *
 * Determinism: every sum is formed in an order fixed by the problem alone
 * (a channel's planes in order; the pixel blocks and their rows in order),
 * so results are bitwise identical run to run and for any thread count.
 */
#ifdef ADNN_SIMD_VECTOR_PART

/* sum(x) in double. */
static double NAME(bnt_sum)(const float *x, size_t n) {
  VDH s = {0};
  size_t i = 0;
  for (; i + VL <= n; i += VL) {
    VF v = NAME(vload)(x + i);
    s += NAME(vcvt_lo)(v) + NAME(vcvt_hi)(v);
  }
  if (i < n) {
    VF v = NAME(vload_n)(x + i, n - i, 0.0f);
    s += NAME(vcvt_lo)(v) + NAME(vcvt_hi)(v);
  }
  return NAME(vdhsum)(s);
}

/* sum(((x - mh) - ml)^2) in double. */
static double NAME(bnt_dev2)(const float *x, size_t n, float mh, float ml) {
  const VF vh = NAME(vset)(mh), vl = NAME(vset)(ml);
  VDH q = {0};
  size_t i = 0;
  for (; i + VL <= n; i += VL) {
    VF v = (NAME(vload)(x + i) - vh) - vl;
    VDH lo = NAME(vcvt_lo)(v), hi = NAME(vcvt_hi)(v);
    q += lo * lo + hi * hi;
  }
  if (i < n) {
    /* Missing lanes load mh and give about -ml; zero them exactly. */
    VF v = (NAME(vload_n)(x + i, n - i, mh) - vh) - vl;
    for (size_t k = n - i; k < VL; k++) v[k] = 0.0f;
    VDH lo = NAME(vcvt_lo)(v), hi = NAME(vcvt_hi)(v);
    q += lo * lo + hi * hi;
  }
  return NAME(vdhsum)(q);
}

/* sum(dy) and sum(dy * ((x - mh) - ml)), both in double. */
static void NAME(bnt_bsums)(const float *x, const float *dy, size_t n, float mh, float ml,
                            double *sdy, double *sdyx) {
  const VF vh = NAME(vset)(mh), vl = NAME(vset)(ml);
  VDH s = {0}, q = {0};
  size_t i = 0;
  for (; i + VL <= n; i += VL) {
    VF d = (NAME(vload)(x + i) - vh) - vl, g = NAME(vload)(dy + i);
    VDH glo = NAME(vcvt_lo)(g), ghi = NAME(vcvt_hi)(g);
    s += glo + ghi;
    q += glo * NAME(vcvt_lo)(d) + ghi * NAME(vcvt_hi)(d);
  }
  if (i < n) {
    VF d = (NAME(vload_n)(x + i, n - i, mh) - vh) - vl, g = NAME(vload_n)(dy + i, n - i, 0.0f);
    VDH glo = NAME(vcvt_lo)(g), ghi = NAME(vcvt_hi)(g);
    s += glo + ghi;
    q += glo * NAME(vcvt_lo)(d) + ghi * NAME(vcvt_hi)(d);
  }
  *sdy += NAME(vdhsum)(s);
  *sdyx += NAME(vdhsum)(q);
}

/* y = a * ((x - mh) - ml) + b. x may equal y. */
static void NAME(bnt_apply)(const float *x, float *y, size_t n, float mh, float ml, float a,
                            float b) {
  const VF vh = NAME(vset)(mh), vl = NAME(vset)(ml), va = NAME(vset)(a), vb = NAME(vset)(b);
  size_t i = 0;
  for (; i + VL <= n; i += VL) NAME(vstore)(y + i, va * ((NAME(vload)(x + i) - vh) - vl) + vb);
  if (i < n)
    NAME(vstore_n)(y + i, va * ((NAME(vload_n)(x + i, n - i, 0.0f) - vh) - vl) + vb, n - i);
}

/* dx = A * dy + B * ((x - mh) - ml) + c0. */
static void NAME(bnt_dx)(const float *x, const float *dy, float *dx, size_t n, float mh,
                         float ml, float A, float B, float c0) {
  const VF vh = NAME(vset)(mh), vl = NAME(vset)(ml), va = NAME(vset)(A), vb = NAME(vset)(B),
           vc = NAME(vset)(c0);
  size_t i = 0;
  for (; i + VL <= n; i += VL)
    NAME(vstore)(dx + i,
                 va * NAME(vload)(dy + i) + (vb * ((NAME(vload)(x + i) - vh) - vl) + vc));
  if (i < n) {
    const size_t r = n - i;
    NAME(vstore_n)(dx + i,
                   va * NAME(vload_n)(dy + i, r, 0.0f) +
                       (vb * ((NAME(vload_n)(x + i, r, 0.0f) - vh) - vl) + vc),
                   r);
  }
}

/* The per-channel forms over a contiguous run of n channels (pixels path).
 * acc and acc2 are double arrays of n elements; mh, ml, a, b per channel. */
SIMD_INLINE VDH NAME(bnt_ldd)(const double *p) {
  VDH v;
  memcpy(&v, p, sizeof v);
  return v;
}
SIMD_INLINE void NAME(bnt_std)(double *p, VDH v) { memcpy(p, &v, sizeof v); }

/* acc[c] += x[c]. */
static void NAME(bnt_acc_sum)(double *acc, const float *x, size_t n) {
  size_t i = 0;
  for (; i + VL <= n; i += VL) {
    VF v = NAME(vload)(x + i);
    NAME(bnt_std)(acc + i, NAME(bnt_ldd)(acc + i) + NAME(vcvt_lo)(v));
    NAME(bnt_std)(acc + i + VL / 2, NAME(bnt_ldd)(acc + i + VL / 2) + NAME(vcvt_hi)(v));
  }
  for (; i < n; i++) acc[i] += (double)x[i];
}

/* acc[c] += ((x[c] - mh[c]) - ml[c])^2. */
static void NAME(bnt_acc_dev2)(double *acc, const float *x, const float *mh, const float *ml,
                               size_t n) {
  size_t i = 0;
  for (; i + VL <= n; i += VL) {
    VF v = (NAME(vload)(x + i) - NAME(vload)(mh + i)) - NAME(vload)(ml + i);
    VDH lo = NAME(vcvt_lo)(v), hi = NAME(vcvt_hi)(v);
    NAME(bnt_std)(acc + i, NAME(bnt_ldd)(acc + i) + lo * lo);
    NAME(bnt_std)(acc + i + VL / 2, NAME(bnt_ldd)(acc + i + VL / 2) + hi * hi);
  }
  for (; i < n; i++) {
    const double d = (double)((x[i] - mh[i]) - ml[i]);
    acc[i] += d * d;
  }
}

/* sdy[c] += dy[c]; sdyx[c] += dy[c] * ((x[c] - mh[c]) - ml[c]). */
static void NAME(bnt_acc_bsums)(double *sdy, double *sdyx, const float *x, const float *dy,
                                const float *mh, const float *ml, size_t n) {
  size_t i = 0;
  for (; i + VL <= n; i += VL) {
    VF d = (NAME(vload)(x + i) - NAME(vload)(mh + i)) - NAME(vload)(ml + i);
    VF g = NAME(vload)(dy + i);
    VDH glo = NAME(vcvt_lo)(g), ghi = NAME(vcvt_hi)(g);
    NAME(bnt_std)(sdy + i, NAME(bnt_ldd)(sdy + i) + glo);
    NAME(bnt_std)(sdy + i + VL / 2, NAME(bnt_ldd)(sdy + i + VL / 2) + ghi);
    NAME(bnt_std)(sdyx + i, NAME(bnt_ldd)(sdyx + i) + glo * NAME(vcvt_lo)(d));
    NAME(bnt_std)(sdyx + i + VL / 2, NAME(bnt_ldd)(sdyx + i + VL / 2) + ghi * NAME(vcvt_hi)(d));
  }
  for (; i < n; i++) {
    const double g = (double)dy[i];
    sdy[i] += g;
    sdyx[i] += g * (double)((x[i] - mh[i]) - ml[i]);
  }
}

/* y[c] = a[c] * ((x[c] - mh[c]) - ml[c]) + b[c]. x may equal y. */
static void NAME(bnt_apply_vec)(const float *x, float *y, size_t n, const float *mh,
                                const float *ml, const float *a, const float *b) {
  size_t i = 0;
  for (; i + VL <= n; i += VL)
    NAME(vstore)(y + i, NAME(vload)(a + i) *
                                ((NAME(vload)(x + i) - NAME(vload)(mh + i)) - NAME(vload)(ml + i)) +
                            NAME(vload)(b + i));
  for (; i < n; i++) y[i] = a[i] * ((x[i] - mh[i]) - ml[i]) + b[i];
}

/* dx[c] = A[c] dy[c] + B[c] ((x[c] - mh[c]) - ml[c]) + c0[c]. */
static void NAME(bnt_dx_vec)(const float *x, const float *dy, float *dx, size_t n,
                             const float *mh, const float *ml, const float *A, const float *B,
                             const float *c0) {
  size_t i = 0;
  for (; i + VL <= n; i += VL) {
    VF d = (NAME(vload)(x + i) - NAME(vload)(mh + i)) - NAME(vload)(ml + i);
    NAME(vstore)(dx + i, NAME(vload)(A + i) * NAME(vload)(dy + i) +
                             (NAME(vload)(B + i) * d + NAME(vload)(c0 + i)));
  }
  for (; i < n; i++) dx[i] = A[i] * dy[i] + (B[i] * ((x[i] - mh[i]) - ml[i]) + c0[i]);
}

static const bnt_fns NAME(adnn_f32_bnt) = {
    NAME(bnt_sum),      NAME(bnt_dev2),      NAME(bnt_bsums),     NAME(bnt_apply),
    NAME(bnt_dx),       NAME(bnt_acc_sum),   NAME(bnt_acc_dev2),  NAME(bnt_acc_bsums),
    NAME(bnt_apply_vec), NAME(bnt_dx_vec)};

#else /* the dispatch part */

#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/simd.h"

/* One instruction set's copy of the vector code. */
typedef struct bnt_fns {
  double (*sum)(const float *x, size_t n);
  double (*dev2)(const float *x, size_t n, float mh, float ml);
  void (*bsums)(const float *x, const float *dy, size_t n, float mh, float ml, double *sdy,
                double *sdyx);
  void (*apply)(const float *x, float *y, size_t n, float mh, float ml, float a, float b);
  void (*dx)(const float *x, const float *dy, float *dx, size_t n, float mh, float ml, float A,
             float B, float c0);
  void (*acc_sum)(double *acc, const float *x, size_t n);
  void (*acc_dev2)(double *acc, const float *x, const float *mh, const float *ml, size_t n);
  void (*acc_bsums)(double *sdy, double *sdyx, const float *x, const float *dy, const float *mh,
                    const float *ml, size_t n);
  void (*apply_vec)(const float *x, float *y, size_t n, const float *mh, const float *ml,
                    const float *a, const float *b);
  void (*dx_vec)(const float *x, const float *dy, float *dx, size_t n, const float *mh,
                 const float *ml, const float *A, const float *B, const float *c0);
} bnt_fns;

#define ADNN_SIMD_KERNEL "kernels/cpu/batchnorm_training.c"
#include "kernels/cpu/simd_instantiate.h"

static const bnt_fns *const bnt_by_isa[ADNN_CPU_ISA_COUNT] = ADNN_CPU_ISA_TABLE(adnn_f32_bnt);

enum { PATH_PLANES = 0, PATH_PIXELS = 1 };

/* The most pixel blocks (workspace rows): enough to feed every thread of a
 * large machine, few enough that the ordered reduction over them is cheap. */
#define MAX_BLOCKS 64

typedef struct bnt_state {
  const bnt_fns *fn;
  int path;
  int backward;
  double epsilon, momentum;
  int64_t C, N, count;
  /* planes: the plane length and the strides of dims 0 and 1 of each tensor
   * ([0] the output y / dx, [1] x, [2] dy). */
  int64_t plane;
  int64_t s_n[3], s_c[3];
  /* pixels: every dim but C, coalesced ([0] output, [1] x, [2] dy), cut into
   * `blocks` blocks of `per_block` pixels (the last one shorter). */
  adnn_nd pix;
  int64_t pixels, blocks, per_block;
  int64_t grain; /* channels (planes) or blocks per task */
} bnt_state;

/* The tensors of a problem: [0] output, [1] x, [2] dy (backward only). */
static int tensors_of(const void *problem, int backward, const adnn_plugin_batchnorm **fwd,
                      const adnn_tensor_desc *t[3]) {
  if (backward) {
    const adnn_plugin_batchnorm_backward *p = problem;
    *fwd = &p->fwd;
    t[0] = &p->fwd.x; /* dx has x's layout */
    t[1] = &p->fwd.x;
    t[2] = &p->fwd.y; /* dy has y's layout */
    return 3;
  }
  const adnn_plugin_batchnorm_training *p = problem;
  *fwd = &p->fwd;
  t[0] = &p->fwd.y;
  t[1] = &p->fwd.x;
  return 2;
}

/* The dims of every tensor without dim 1 (pixels) or after it (planes). */
static void rest_of(const adnn_tensor_desc *const *t, int nt, int pixels, adnn_nd *L) {
  adnn_tensor_desc r[3];
  const adnn_tensor_desc *rp[3];
  for (int k = 0; k < nt; k++) {
    r[k] = *t[k];
    int n = 0;
    for (int i = pixels ? 0 : 2; i < t[k]->rank; i++) {
      if (i == 1) continue;
      r[k].dims[n] = t[k]->dims[i];
      r[k].strides[n] = t[k]->strides[i];
      n++;
    }
    r[k].rank = n;
    rp[k] = &r[k];
  }
  adnn_cpu_loop_init(L, nt, rp);
}

static int choose_path(const void *problem, int backward, char *why, size_t why_size) {
  const adnn_plugin_batchnorm *f;
  const adnn_tensor_desc *t[3];
  const int nt = tensors_of(problem, backward, &f, t);
  adnn_nd L;
  rest_of(t, nt, 0, &L);
  int planes = L.rank == 1, pixels = f->C > 1;
  for (int k = 0; k < nt; k++) {
    if (L.strides[k][0] != 1) planes = 0;
    if (t[k]->strides[1] != 1) pixels = 0;
  }
  /* Small planes ([N, C], 1x1 images) vectorize better across C. */
  if (planes && !(pixels && L.dims[0] < 64)) return PATH_PLANES;
  if (pixels) return PATH_PIXELS;
  if (why) snprintf(why, why_size, "needs the dims after C packed, or C of unit stride");
  return -1;
}

static int bnt_supports_training(const void *problem, const adnn_cpu_env *env, char *why,
                                 size_t why_size) {
  (void)env;
  return choose_path(problem, 0, why, why_size) >= 0;
}

static int bnt_supports_backward(const void *problem, const adnn_cpu_env *env, char *why,
                                 size_t why_size) {
  (void)env;
  return choose_path(problem, 1, why, why_size) >= 0;
}

/* Workspace of the pixels path: blocks rows of 2 C doubles (two sums), then
 * per-channel float coefficients (6 C). */
static size_t pixels_workspace(const bnt_state *s) {
  const size_t per_channel = (size_t)s->blocks * 2 * sizeof(double) + 6 * sizeof(float);
  /* A C whose workspace does not fit in size_t asks for SIZE_MAX, which no
   * allocation grants (OUT_OF_MEMORY), rather than a wrapped, too small size. */
  if ((size_t)s->C > SIZE_MAX / per_channel) return SIZE_MAX;
  return (size_t)s->C * per_channel;
}

static void bnt_reshape_common(const void *problem, int backward, const adnn_cpu_env *env,
                               void *state, size_t *workspace_bytes) {
  bnt_state *s = state;
  const adnn_plugin_batchnorm *f;
  const adnn_tensor_desc *t[3];
  const int nt = tensors_of(problem, backward, &f, t);
  s->fn = bnt_by_isa[env->isa];
  s->backward = backward;
  s->path = choose_path(problem, backward, NULL, 0);
  s->epsilon = f->epsilon;
  s->C = f->C;
  s->N = f->x.dims[0];
  if (backward) {
    s->count = ((const adnn_plugin_batchnorm_backward *)problem)->count;
  } else {
    const adnn_plugin_batchnorm_training *p = problem;
    s->count = p->count;
    s->momentum = p->momentum;
  }
  *workspace_bytes = 0;
  if (s->path == PATH_PLANES) {
    adnn_nd L;
    rest_of(t, nt, 0, &L);
    s->plane = L.dims[0];
    for (int k = 0; k < nt; k++) {
      s->s_n[k] = t[k]->strides[0];
      s->s_c[k] = t[k]->strides[1];
    }
    const int64_t g = ADNN_CPU_GRAIN / (s->count > 0 ? s->count : 1);
    s->grain = g > 1 ? g : 1;
    return;
  }
  rest_of(t, nt, 1, &s->pix);
  s->pixels = adnn_nd_count(&s->pix);
  /* Blocks of at least a grain's worth of elements, at most MAX_BLOCKS: the
   * cut depends on the problem only, never on the thread count. */
  int64_t per = (ADNN_CPU_GRAIN + s->C - 1) / s->C;
  if (per < 1) per = 1;
  if ((s->pixels + per - 1) / per > MAX_BLOCKS) per = (s->pixels + MAX_BLOCKS - 1) / MAX_BLOCKS;
  s->per_block = per;
  s->blocks = (s->pixels + per - 1) / per;
  s->grain = 1;
  *workspace_bytes = pixels_workspace(s);
}

static void bnt_reshape_training(const void *problem, const adnn_cpu_env *env, void *state,
                                 size_t *workspace_bytes) {
  bnt_reshape_common(problem, 0, env, state, workspace_bytes);
}

static void bnt_reshape_backward(const void *problem, const adnn_cpu_env *env, void *state,
                                 size_t *workspace_bytes) {
  bnt_reshape_common(problem, 1, env, state, workspace_bytes);
}

/* A double split into a float pair hi + lo (lo 0 when not finite). */
static void split(double v, float *hi, float *lo) {
  *hi = (float)v;
  *lo = isfinite(v) && isfinite(*hi) ? (float)(v - (double)*hi) : 0.0f;
}

typedef struct bnt_task {
  const bnt_state *s;
  /* training: inputs x, scale, shift; outputs y, saved mean, saved inv_std,
   * running mean, running var. backward: x, dy, scale, mean, inv_std; dx,
   * dscale, dshift. */
  const float *x, *dy, *scale, *shift, *mean_in, *inv_in;
  float *out, *saved_mean, *saved_inv, *run_mean, *run_var, *dscale, *dshift;
  double *acc;   /* pixels: blocks rows of C doubles, twice */
  float *coef;   /* pixels: 6 C floats */
  int pass;      /* pixels: which pass run_blocks does */
} bnt_task;

/* The statistics of channel c from its sums, into the saved and running
 * statistics; returns mean and inv_std in double. */
static void finish_channel(const bnt_task *t, int64_t c, double mean, double dev2, double *inv) {
  const bnt_state *s = t->s;
  const double n = (double)s->count, var = dev2 / n;
  *inv = 1.0 / sqrt(var + s->epsilon);
  t->saved_mean[c] = (float)mean;
  t->saved_inv[c] = (float)*inv;
  /* Momentum 0 leaves the running statistics untouched (doc/ops.md). */
  if (s->momentum != 0.0) {
    const double m = s->momentum, unbiased = dev2 / (n - 1.0);
    t->run_mean[c] = (float)((1.0 - m) * (double)t->run_mean[c] + m * mean);
    t->run_var[c] = (float)((1.0 - m) * (double)t->run_var[c] + m * unbiased);
  }
}

/* Backward coefficients of channel c: dx = A dy + B d + c0 with d = x - mean. */
static void backward_coef(const bnt_task *t, int64_t c, double sdy, double sdyx, float *A,
                          float *B, float *c0) {
  const double n = (double)t->s->count, inv = (double)t->inv_in[c];
  const double a = (double)t->scale[c] * inv;
  const double dscale = sdyx * inv; /* sum dy * xhat */
  t->dscale[c] = (float)dscale;
  t->dshift[c] = (float)sdy;
  *A = (float)a;
  *B = (float)(-a * inv * dscale / n);
  *c0 = (float)(-a * sdy / n);
}

/* ---- planes: one task per channel ---------------------------------------- */

static void run_planes(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const bnt_task *t = arg;
  const bnt_state *s = t->s;
  const size_t HW = (size_t)s->plane;
  for (int64_t c = begin; c < end; c++) {
    const float *x0 = t->x + c * s->s_c[1];
    float *o0 = t->out + c * s->s_c[0];
    float mh, ml;
    if (!s->backward) {
      double sum = 0.0, dev2 = 0.0, inv;
      for (int64_t n = 0; n < s->N; n++) sum += s->fn->sum(x0 + n * s->s_n[1], HW);
      const double mean = sum / (double)s->count;
      split(mean, &mh, &ml);
      for (int64_t n = 0; n < s->N; n++) dev2 += s->fn->dev2(x0 + n * s->s_n[1], HW, mh, ml);
      finish_channel(t, c, mean, dev2, &inv);
      const float a = (float)((double)t->scale[c] * inv), b = t->shift[c];
      for (int64_t n = 0; n < s->N; n++)
        s->fn->apply(x0 + n * s->s_n[1], o0 + n * s->s_n[0], HW, mh, ml, a, b);
    } else {
      const float *g0 = t->dy + c * s->s_c[2];
      split((double)t->mean_in[c], &mh, &ml);
      double sdy = 0.0, sdyx = 0.0;
      for (int64_t n = 0; n < s->N; n++)
        s->fn->bsums(x0 + n * s->s_n[1], g0 + n * s->s_n[2], HW, mh, ml, &sdy, &sdyx);
      float A, B, c0;
      backward_coef(t, c, sdy, sdyx, &A, &B, &c0);
      for (int64_t n = 0; n < s->N; n++)
        s->fn->dx(x0 + n * s->s_n[1], g0 + n * s->s_n[2], o0 + n * s->s_n[0], HW, mh, ml, A, B,
                  c0);
    }
  }
}

/* ---- pixels: fixed blocks of pixels, per-block partial sums -------------- */

enum { PASS_SUM, PASS_DEV2, PASS_APPLY, PASS_BSUMS, PASS_DX };

static void run_blocks(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const bnt_task *t = arg;
  const bnt_state *s = t->s;
  const int64_t C = s->C;
  const size_t nc = (size_t)C;
  const float *mh = t->coef, *ml = t->coef + C, *a = t->coef + 2 * C, *b = t->coef + 3 * C,
              *c0 = t->coef + 4 * C;
  for (int64_t blk = begin; blk < end; blk++) {
    double *acc = t->acc + blk * C, *acc2 = t->acc + (s->blocks + blk) * C;
    const int64_t p0 = blk * s->per_block;
    const int64_t p1 = p0 + s->per_block < s->pixels ? p0 + s->per_block : s->pixels;
    if (t->pass == PASS_SUM || t->pass == PASS_DEV2 || t->pass == PASS_BSUMS) {
      memset(acc, 0, nc * sizeof *acc);
      if (t->pass == PASS_BSUMS) memset(acc2, 0, nc * sizeof *acc2);
    }
    for (int64_t px = p0; px < p1; px++) {
      int64_t o[ADNN_ND_MAX_TENSORS];
      adnn_nd_offsets(&s->pix, px, o);
      const float *x = t->x + o[1];
      switch (t->pass) {
        case PASS_SUM: s->fn->acc_sum(acc, x, nc); break;
        case PASS_DEV2: s->fn->acc_dev2(acc, x, mh, ml, nc); break;
        case PASS_APPLY: s->fn->apply_vec(x, t->out + o[0], nc, mh, ml, a, b); break;
        case PASS_BSUMS: s->fn->acc_bsums(acc, acc2, x, t->dy + o[2], mh, ml, nc); break;
        default: s->fn->dx_vec(x, t->dy + o[2], t->out + o[0], nc, mh, ml, a, b, c0); break;
      }
    }
  }
}

/* The per-channel total of a workspace section (row `first` .. first +
 * blocks), added in block order into out[c]. */
static void reduce_blocks(const bnt_task *t, int64_t first, double *out) {
  const bnt_state *s = t->s;
  const int64_t C = s->C;
  for (int64_t c = 0; c < C; c++) out[c] = 0.0;
  for (int64_t blk = 0; blk < s->blocks; blk++) {
    const double *row = t->acc + (first + blk) * C;
    for (int64_t c = 0; c < C; c++) out[c] += row[c];
  }
}

static void run_pixels(bnt_task *t) {
  const bnt_state *s = t->s;
  const int64_t C = s->C;
  float *mh = t->coef, *ml = t->coef + C, *a = t->coef + 2 * C, *b = t->coef + 3 * C,
        *c0 = t->coef + 4 * C;
  /* The totals go into the last workspace row of the second section, which
   * the passes that follow no longer need (a dedicated row would cost a
   * block's worth of workspace for nothing). */
  double *tot = t->acc + (2 * s->blocks - 1) * C;
  if (!s->backward) {
    t->pass = PASS_SUM;
    adnn_cpu_parallel_for(s->blocks, 1, run_blocks, t);
    reduce_blocks(t, 0, tot);
    for (int64_t c = 0; c < C; c++) {
      tot[c] /= (double)s->count;
      split(tot[c], &mh[c], &ml[c]);
    }
    /* Pass DEV2 rewrites section 0 only; the means stay in tot. */
    t->pass = PASS_DEV2;
    adnn_cpu_parallel_for(s->blocks, 1, run_blocks, t);
    for (int64_t c = 0; c < C; c++) {
      double dev2 = 0.0, inv;
      for (int64_t blk = 0; blk < s->blocks; blk++) dev2 += t->acc[blk * C + c];
      finish_channel(t, c, tot[c], dev2, &inv);
      a[c] = (float)((double)t->scale[c] * inv);
      b[c] = t->shift[c];
    }
    t->pass = PASS_APPLY;
    adnn_cpu_parallel_for(s->blocks, 1, run_blocks, t);
    return;
  }
  for (int64_t c = 0; c < C; c++) split((double)t->mean_in[c], &mh[c], &ml[c]);
  t->pass = PASS_BSUMS;
  adnn_cpu_parallel_for(s->blocks, 1, run_blocks, t);
  for (int64_t c = 0; c < C; c++) {
    double sdy = 0.0, sdyx = 0.0;
    for (int64_t blk = 0; blk < s->blocks; blk++) {
      sdy += t->acc[blk * C + c];
      sdyx += t->acc[(s->blocks + blk) * C + c];
    }
    backward_coef(t, c, sdy, sdyx, &a[c], &b[c], &c0[c]);
  }
  t->pass = PASS_DX;
  adnn_cpu_parallel_for(s->blocks, 1, run_blocks, t);
}

static void bnt_run_training(const void *problem, const void *state, const void *const *inputs,
                             void *const *outputs, void *workspace) {
  (void)problem;
  const bnt_state *s = state;
  bnt_task t = {.s = s, .x = inputs[0], .scale = inputs[1], .shift = inputs[2],
                .out = outputs[0], .saved_mean = outputs[1], .saved_inv = outputs[2],
                .run_mean = outputs[3], .run_var = outputs[4]};
  if (s->path == PATH_PLANES) {
    adnn_cpu_parallel_for(s->C, s->grain, run_planes, &t);
    return;
  }
  t.acc = workspace;
  t.coef = (float *)(t.acc + 2 * s->blocks * s->C);
  run_pixels(&t);
}

static void bnt_run_backward(const void *problem, const void *state, const void *const *inputs,
                             void *const *outputs, void *workspace) {
  (void)problem;
  const bnt_state *s = state;
  bnt_task t = {.s = s, .x = inputs[0], .dy = inputs[1], .scale = inputs[2],
                .mean_in = inputs[3], .inv_in = inputs[4], .out = outputs[0],
                .dscale = outputs[1], .dshift = outputs[2]};
  if (s->path == PATH_PLANES) {
    adnn_cpu_parallel_for(s->C, s->grain, run_planes, &t);
    return;
  }
  t.acc = workspace;
  t.coef = (float *)(t.acc + 2 * s->blocks * s->C);
  run_pixels(&t);
}

const adnn_cpu_impl adnn_cpu_batchnorm_training_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32),
    .supports = bnt_supports_training,
    .state_size = sizeof(bnt_state),
    .reshape = bnt_reshape_training,
    .run = bnt_run_training,
};

const adnn_cpu_impl adnn_cpu_batchnorm_backward_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32),
    .supports = bnt_supports_backward,
    .state_size = sizeof(bnt_state),
    .reshape = bnt_reshape_backward,
    .run = bnt_run_backward,
};

#endif
