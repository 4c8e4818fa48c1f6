/*
 * Layer-norm and RMS-norm backward (F32) over the last norm_dims dims.
 *
 * Pass 1, one task per block of rows: each row's statistics are recomputed
 * from x as the forward kernel computes them (norm.c: the mean as a sum in
 * double, then the biased variance as a sum of squared deviations in
 * double; RMS: the mean of squares), then g = dy * gain and the sums
 * sum(g) and sum(g * (x - mean)) in double, and dx in one more sweep:
 *   dx = inv * g + B * (x - mean) + c0,  B = -inv^3 * sum(g (x - mean)) / D,
 *   c0 = -inv * sum(g) / D (0 for RMS),
 * which is doc/ops.md's inv * (g - mean(g) - xhat * mean(g * xhat))
 * regrouped. The mean enters float arithmetic as a pair hi + lo. When dgain
 * or dbias is wanted, the row's mean and inv_std are kept (in double) in the
 * workspace.
 *
 * Pass 2 (only with dgain or dbias): the columns are cut into fixed chunks;
 * one task per chunk walks every row in order and accumulates
 * dgain[j] += dy * (x - mean) * inv and dbias[j] += dy in double. The order
 * of every sum depends on the problem alone, so results are bitwise
 * identical run to run and for any thread count.
 *
 * Path: the normalized dims must collapse to one unit-stride run in x, dy and
 * dx (any strides of the leading dims); other layouts are left to the
 * reference loops (supports() says why).
 */
#ifdef ADNN_SIMD_VECTOR_PART

static double NAME(nbw_sum)(const float *x, size_t n) {
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
static double NAME(nbw_dev2)(const float *x, size_t n, float mh, float ml) {
  const VF vh = NAME(vset)(mh), vl = NAME(vset)(ml);
  VDH q = {0};
  size_t i = 0;
  for (; i + VL <= n; i += VL) {
    VF v = (NAME(vload)(x + i) - vh) - vl;
    VDH lo = NAME(vcvt_lo)(v), hi = NAME(vcvt_hi)(v);
    q += lo * lo + hi * hi;
  }
  if (i < n) {
    VF v = (NAME(vload_n)(x + i, n - i, mh) - vh) - vl;
    for (size_t k = n - i; k < VL; k++) v[k] = 0.0f;
    VDH lo = NAME(vcvt_lo)(v), hi = NAME(vcvt_hi)(v);
    q += lo * lo + hi * hi;
  }
  return NAME(vdhsum)(q);
}

/* With g = dy * gain (dy when gain is NULL): sum(g) and sum(g * ((x - mh) -
 * ml)) in double. */
static void NAME(nbw_gsums)(const float *x, const float *dy, const float *gain, size_t n,
                            float mh, float ml, double *sg, double *sgx) {
  const VF vh = NAME(vset)(mh), vl = NAME(vset)(ml);
  VDH s = {0}, q = {0};
  size_t i = 0;
  for (; i < n; i += VL) {
    const size_t r = n - i < VL ? n - i : VL;
    VF d = (NAME(vload_n)(x + i, r, mh) - vh) - vl;
    VF g = NAME(vload_n)(dy + i, r, 0.0f);
    if (gain) g = g * NAME(vload_n)(gain + i, r, 0.0f);
    VDH glo = NAME(vcvt_lo)(g), ghi = NAME(vcvt_hi)(g);
    s += glo + ghi;
    q += glo * NAME(vcvt_lo)(d) + ghi * NAME(vcvt_hi)(d);
  }
  *sg += NAME(vdhsum)(s);
  *sgx += NAME(vdhsum)(q);
}

/* dx = A * (dy * gain) + (B * ((x - mh) - ml) + c0). */
static void NAME(nbw_dx)(const float *x, const float *dy, const float *gain, float *dx, size_t n,
                         float mh, float ml, float A, float B, float c0) {
  const VF vh = NAME(vset)(mh), vl = NAME(vset)(ml), va = NAME(vset)(A), vb = NAME(vset)(B),
           vc = NAME(vset)(c0);
  size_t i = 0;
  for (; i < n; i += VL) {
    const size_t r = n - i < VL ? n - i : VL;
    VF d = (NAME(vload_n)(x + i, r, 0.0f) - vh) - vl;
    VF g = NAME(vload_n)(dy + i, r, 0.0f);
    if (gain) g = g * NAME(vload_n)(gain + i, r, 0.0f);
    VF v = va * g + (vb * d + vc);
    if (r == VL)
      NAME(vstore)(dx + i, v);
    else
      NAME(vstore_n)(dx + i, v, r);
  }
}

/* accg[j] += dy[j] * ((x[j] - mh) - ml) * inv; accb[j] += dy[j] (doubles). */
static void NAME(nbw_colacc)(double *accg, double *accb, const float *x, const float *dy,
                             size_t n, float mh, float ml, double inv) {
  const VF vh = NAME(vset)(mh), vl = NAME(vset)(ml);
  const VDH vi = (VDH){0} + inv;
  size_t i = 0;
  for (; i + VL <= n; i += VL) {
    VF d = (NAME(vload)(x + i) - vh) - vl, g = NAME(vload)(dy + i);
    VDH glo = NAME(vcvt_lo)(g), ghi = NAME(vcvt_hi)(g), a, b;
    memcpy(&a, accg + i, sizeof a);
    memcpy(&b, accg + i + VL / 2, sizeof b);
    a += glo * NAME(vcvt_lo)(d) * vi;
    b += ghi * NAME(vcvt_hi)(d) * vi;
    memcpy(accg + i, &a, sizeof a);
    memcpy(accg + i + VL / 2, &b, sizeof b);
    memcpy(&a, accb + i, sizeof a);
    memcpy(&b, accb + i + VL / 2, sizeof b);
    a += glo;
    b += ghi;
    memcpy(accb + i, &a, sizeof a);
    memcpy(accb + i + VL / 2, &b, sizeof b);
  }
  for (; i < n; i++) {
    const double g = (double)dy[i];
    accg[i] += g * (double)((x[i] - mh) - ml) * inv;
    accb[i] += g;
  }
}

static const nbw_fns NAME(adnn_f32_nbw) = {NAME(nbw_sum), NAME(nbw_dev2), NAME(nbw_gsums),
                                           NAME(nbw_dx), NAME(nbw_colacc)};

#else /* the dispatch part */

#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/simd.h"

typedef struct nbw_fns {
  double (*sum)(const float *x, size_t n);
  double (*dev2)(const float *x, size_t n, float mh, float ml);
  void (*gsums)(const float *x, const float *dy, const float *gain, size_t n, float mh, float ml,
                double *sg, double *sgx);
  void (*dx)(const float *x, const float *dy, const float *gain, float *dx, size_t n, float mh,
             float ml, float A, float B, float c0);
  void (*colacc)(double *accg, double *accb, const float *x, const float *dy, size_t n, float mh,
                 float ml, double inv);
} nbw_fns;

#define ADNN_SIMD_KERNEL "kernels/cpu/norm_backward.c"
#include "kernels/cpu/simd_instantiate.h"

static const nbw_fns *const nbw_by_isa[ADNN_CPU_ISA_COUNT] = ADNN_CPU_ISA_TABLE(adnn_f32_nbw);

/* Columns per pass-2 task (and its stack accumulators). */
#define COLS 256

typedef struct nbw_state {
  const nbw_fns *fn;
  adnn_nd rows; /* the leading dims: [0] dx, [1] x, [2] dy */
  int rms;
  int keep_stats; /* dgain or dbias wanted */
  double epsilon;
  int64_t outer, inner; /* rows and D */
  int64_t grain;        /* rows per pass-1 task */
} nbw_state;

/* dx, x and dy descriptors of the problem. */
static void tensors_of(const adnn_plugin_norm_backward *p, const adnn_tensor_desc *t[3]) {
  t[0] = &p->fwd.x; /* dx has x's layout */
  t[1] = &p->fwd.x;
  t[2] = &p->fwd.y; /* dy has y's layout */
}

static int nbw_supports(const void *problem, const adnn_cpu_env *env, char *why,
                        size_t why_size) {
  (void)env;
  const adnn_plugin_norm_backward *p = problem;
  const adnn_tensor_desc *t[3];
  tensors_of(p, t);
  const int split = p->fwd.x.rank - p->fwd.norm_dims;
  adnn_tensor_desc c[3];
  const adnn_tensor_desc *cp[3];
  for (int k = 0; k < 3; k++) {
    adnn_cpu_sub_desc(t[k], split, t[k]->rank, &c[k]);
    cp[k] = &c[k];
  }
  adnn_nd cols;
  adnn_cpu_loop_init(&cols, 3, cp);
  int ok = cols.rank == 1;
  for (int k = 0; k < 3; k++)
    if (cols.strides[k][0] != 1) ok = 0;
  if (!ok && why) snprintf(why, why_size, "needs the normalized dims packed in x and dy");
  return ok;
}

static void nbw_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                        size_t *workspace_bytes) {
  const adnn_plugin_norm_backward *p = problem;
  nbw_state *s = state;
  const adnn_tensor_desc *t[3];
  tensors_of(p, t);
  const int split = p->fwd.x.rank - p->fwd.norm_dims;
  adnn_tensor_desc r[3];
  const adnn_tensor_desc *rp[3];
  for (int k = 0; k < 3; k++) {
    adnn_cpu_sub_desc(t[k], 0, split, &r[k]);
    rp[k] = &r[k];
  }
  adnn_cpu_loop_init(&s->rows, 3, rp);
  s->fn = nbw_by_isa[env->isa];
  s->rms = p->fwd.kind == ADNN_NORM_RMS;
  s->keep_stats = p->fwd.has_gain || p->fwd.has_bias;
  s->epsilon = p->fwd.epsilon;
  s->outer = p->fwd.rows;
  s->inner = p->fwd.D;
  const int64_t grain = ADNN_CPU_GRAIN / s->inner;
  s->grain = grain > 1 ? grain : 1;
  *workspace_bytes = s->keep_stats ? (size_t)s->outer * 2 * sizeof(double) : 0;
}

typedef struct nbw_task {
  const nbw_state *s;
  const float *x, *dy, *gain;
  float *dx, *dgain, *dbias;
  double *stats; /* mean, inv per row (keep_stats) */
} nbw_task;

static void split_pair(double v, float *hi, float *lo) {
  *hi = (float)v;
  *lo = isfinite(v) && isfinite(*hi) ? (float)(v - (double)*hi) : 0.0f;
}

static void run_rows(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const nbw_task *t = arg;
  const nbw_state *s = t->s;
  const size_t D = (size_t)s->inner;
  const double dd = (double)s->inner;
  for (int64_t row = begin; row < end; row++) {
    int64_t off[ADNN_ND_MAX_TENSORS];
    adnn_nd_offsets(&s->rows, row, off);
    const float *x = t->x + off[1], *dy = t->dy + off[2];
    float *dx = t->dx + off[0];
    double mean = 0.0;
    float mh = 0.0f, ml = 0.0f;
    if (!s->rms) {
      mean = s->fn->sum(x, D) / dd;
      split_pair(mean, &mh, &ml);
    }
    const double inv = 1.0 / sqrt(s->fn->dev2(x, D, mh, ml) / dd + s->epsilon);
    double sg = 0.0, sgx = 0.0;
    s->fn->gsums(x, dy, t->gain, D, mh, ml, &sg, &sgx);
    const float A = (float)inv, B = (float)(-inv * inv * inv * sgx / dd),
                c0 = s->rms ? 0.0f : (float)(-inv * sg / dd);
    s->fn->dx(x, dy, t->gain, dx, D, mh, ml, A, B, c0);
    if (s->keep_stats) {
      t->stats[2 * row] = mean;
      t->stats[2 * row + 1] = inv;
    }
  }
}

/* Column chunks [begin, end) of COLS columns: dgain and dbias summed over
 * every row in row order. */
static void run_cols(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const nbw_task *t = arg;
  const nbw_state *s = t->s;
  double accg[COLS], accb[COLS];
  for (int64_t chunk = begin; chunk < end; chunk++) {
    const int64_t j0 = chunk * COLS;
    const size_t n = (size_t)(s->inner - j0 < COLS ? s->inner - j0 : COLS);
    memset(accg, 0, n * sizeof *accg);
    memset(accb, 0, n * sizeof *accb);
    for (int64_t row = 0; row < s->outer; row++) {
      int64_t off[ADNN_ND_MAX_TENSORS];
      adnn_nd_offsets(&s->rows, row, off);
      float mh, ml;
      split_pair(t->stats[2 * row], &mh, &ml);
      s->fn->colacc(accg, accb, t->x + off[1] + j0, t->dy + off[2] + j0, n, mh, ml,
                    t->stats[2 * row + 1]);
    }
    for (size_t j = 0; j < n; j++) {
      if (t->dgain) t->dgain[j0 + (int64_t)j] = (float)accg[j];
      if (t->dbias) t->dbias[j0 + (int64_t)j] = (float)accb[j];
    }
  }
}

/* Inputs {x, dy[, gain]}; outputs {dx[, dgain][, dbias]}. */
static void nbw_run(const void *problem, const void *state, const void *const *inputs,
                    void *const *outputs, void *workspace) {
  const adnn_plugin_norm_backward *p = problem;
  const nbw_state *s = state;
  nbw_task t = {.s = s,
                .x = inputs[0],
                .dy = inputs[1],
                .gain = p->fwd.has_gain ? inputs[2] : NULL,
                .dx = outputs[0],
                .dgain = p->fwd.has_gain ? outputs[1] : NULL,
                .dbias = p->fwd.has_bias ? outputs[1 + p->fwd.has_gain] : NULL,
                .stats = workspace};
  adnn_cpu_parallel_for(s->outer, s->grain, run_rows, &t);
  if (!s->keep_stats) return;
  const int64_t chunks = (s->inner + COLS - 1) / COLS;
  /* A chunk walks every row; split chunks across threads only when they are
   * big enough to pay for the wake-up. */
  int64_t g = ADNN_CPU_GRAIN / (s->outer * COLS);
  adnn_cpu_parallel_for(chunks, g > 1 ? g : 1, run_cols, &t);
}

const adnn_cpu_impl adnn_cpu_norm_backward_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32),
    .supports = nbw_supports,
    .state_size = sizeof(nbw_state),
    .reshape = nbw_reshape,
    .run = nbw_run,
};

#endif
