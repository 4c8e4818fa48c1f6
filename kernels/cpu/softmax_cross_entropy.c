/*
 * Softmax cross-entropy, forward (loss) and backward (d logits), F32.
 *
 * Each row of logits is read once from memory for the loss: it is walked in
 * blocks of up to XE_BLOCK floats (a block stays in L1), and an online
 * logsumexp keeps the running maximum m and the sum s of exp(x - m) in
 * double: a block's maximum b (NaN-propagating) rescales s by exp(m - b)
 * when it raises m, then the block's exp(x - m) are added. A row holding NaN
 * or +inf, or only -inf, has no finite logsumexp and gives NaN, as softmax
 * does. loss_n = (m - x_t) + log(s), the terms formed in double.
 *
 * The gradient of row n is g_n * (exp((x - m) - log s) - [c == t]); the
 * label's element is g_n * expm1(x_t - lse) in double, which keeps its
 * accuracy when the prediction is nearly certain. Rows with a unit stride
 * along C are read in place; other rows go through a stack buffer.
 *
 * Threads take contiguous ranges of rows. MEAN and SUM add the losses of
 * fixed blocks of rows (XE_ROWS, more when that would make more than
 * XE_MAX_BLOCKS blocks, so the workspace stays small for any N) in row order
 * into one partial sum per block (the workspace), and the calling thread
 * adds the partials in block order, so the result does not depend on the
 * thread count (bitwise identical across thread counts, not only run to
 * run).
 */
#ifdef ADNN_SIMD_VECTOR_PART

/* The NaN-propagating maximum of n floats. */
static float NAME(xe_max)(const float *x, size_t n) {
  const VF ninf = NAME(vset)(-__builtin_inff());
  VF m0 = ninf, m1 = ninf;
  size_t i = 0;
  for (; i + 2 * VL <= n; i += 2 * VL) {
    m0 = NAME(vmax_nan)(m0, NAME(vload)(x + i));
    m1 = NAME(vmax_nan)(m1, NAME(vload)(x + i + VL));
  }
  for (; i + VL <= n; i += VL) m0 = NAME(vmax_nan)(m0, NAME(vload)(x + i));
  if (i < n) m1 = NAME(vmax_nan)(m1, NAME(vload_n)(x + i, n - i, -__builtin_inff()));
  return NAME(vhmax)(NAME(vmax_nan)(m0, m1));
}

/* The sum of exp(x[i] - m), in double. */
static double NAME(xe_expsum)(const float *x, size_t n, float m) {
  const VF vm = NAME(vset)(m);
  VDH lo = {0}, hi = {0};
  size_t i = 0;
  for (; i + VL <= n; i += VL) {
    const VF t = NAME(vexp)(NAME(vload)(x + i) - vm);
    lo += NAME(vcvt_lo)(t);
    hi += NAME(vcvt_hi)(t);
  }
  if (i < n) {
    const VF t = NAME(vexp)(NAME(vload_n)(x + i, n - i, -__builtin_inff()) - vm);
    lo += NAME(vcvt_lo)(t);
    hi += NAME(vcvt_hi)(t);
  }
  return NAME(vdhsum)(lo + hi);
}

/* dx[i] = g * exp((x[i] - m) - ls): the softmax scaled by g. */
static void NAME(xe_grad)(const float *x, float *dx, size_t n, float m, float ls, float g) {
  const VF vm = NAME(vset)(m), vl = NAME(vset)(ls), vg = NAME(vset)(g);
  size_t i = 0;
  for (; i + VL <= n; i += VL)
    NAME(vstore)(dx + i, vg * NAME(vexp)((NAME(vload)(x + i) - vm) - vl));
  if (i < n)
    NAME(vstore_n)(dx + i, vg * NAME(vexp)((NAME(vload_n)(x + i, n - i, 0.0f) - vm) - vl), n - i);
}

/* dx[i] = v for n floats. */
static void NAME(xe_fill)(float *dx, size_t n, float v) {
  const VF vv = NAME(vset)(v);
  size_t i = 0;
  for (; i + VL <= n; i += VL) NAME(vstore)(dx + i, vv);
  if (i < n) NAME(vstore_n)(dx + i, vv, n - i);
}

static const xe_fns NAME(adnn_f32_xent) = {NAME(xe_max), NAME(xe_expsum), NAME(xe_grad),
                                           NAME(xe_fill)};

#else /* the dispatch part */

#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/simd.h"

/* One instruction set's copy of the vector code. */
typedef struct xe_fns {
  float (*max)(const float *x, size_t n);
  double (*expsum)(const float *x, size_t n, float m);
  void (*grad)(const float *x, float *dx, size_t n, float m, float ls, float g);
  void (*fill)(float *dx, size_t n, float v);
} xe_fns;

#define ADNN_SIMD_KERNEL "kernels/cpu/softmax_cross_entropy.c"
#include "kernels/cpu/simd_instantiate.h"

static const xe_fns *const xe_by_isa[ADNN_CPU_ISA_COUNT] = ADNN_CPU_ISA_TABLE(adnn_f32_xent);

/* Floats per block of the online logsumexp (4 KiB: well inside L1), and the
 * stack buffer of a strided row. */
#define XE_BLOCK 1024
/* Rows per partial sum of MEAN and SUM (at least), and the most partials. */
#define XE_ROWS 64
#define XE_MAX_BLOCKS 4096

typedef struct xe_state {
  const xe_fns *fn;
  int64_t N, C;
  int64_t xs0, xs1;  /* logits (and dlogits) strides */
  int64_t lab_s;     /* labels stride */
  int64_t loss_s;    /* loss / dloss stride (NONE) */
  int64_t ignore;
  int reduction;
  int64_t block_rows, blocks; /* forward: rows per block of rows, and blocks */
  int64_t grain;     /* forward: blocks per task; backward: rows per task */
} xe_state;

/* a / b rounded up, without overflow for any a >= 0. */
static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

static void xe_reshape_common(const adnn_plugin_softmax_cross_entropy *p, const adnn_cpu_env *env,
                              xe_state *s) {
  s->fn = xe_by_isa[env->isa];
  s->N = p->N;
  s->C = p->C;
  s->xs0 = p->logits.strides[0];
  s->xs1 = p->logits.strides[1];
  s->lab_s = p->labels.strides[0];
  s->loss_s = p->loss.rank == 1 ? p->loss.strides[0] : 0;
  s->ignore = p->ignore_index;
  s->reduction = (int)p->reduction;
  /* Blocks of rows, and enough of them per task for ADNN_CPU_GRAIN logits. */
  s->block_rows = XE_ROWS;
  if (ceil_div(s->N, XE_ROWS) > XE_MAX_BLOCKS) s->block_rows = ceil_div(s->N, XE_MAX_BLOCKS);
  s->blocks = ceil_div(s->N, s->block_rows);
  const int64_t per_block = s->C > ADNN_CPU_GRAIN / s->block_rows ? ADNN_CPU_GRAIN
                                                                  : s->C * s->block_rows;
  const int64_t grain = ADNN_CPU_GRAIN / per_block;
  s->grain = grain > 1 ? grain : 1;
}

/* The online logsumexp of one row: *m the maximum, *s the sum of exp(x - m).
 * Returns 0 when the row has no finite logsumexp (NaN, +inf, or only -inf). */
static int xe_row_lse(const xe_state *st, const float *x, float *m_out, double *s_out) {
  const int64_t C = st->C, xs = st->xs1;
  float buf[XE_BLOCK];
  float m = -INFINITY;
  double s = 0.0;
  for (int64_t c0 = 0; c0 < C; c0 += XE_BLOCK) {
    const int64_t n = C - c0 < XE_BLOCK ? C - c0 : XE_BLOCK;
    const float *b = x + c0 * xs;
    if (xs != 1) {
      for (int64_t j = 0; j < n; j++) buf[j] = x[(c0 + j) * xs];
      b = buf;
    }
    const float bm = st->fn->max(b, (size_t)n);
    if (!(bm < INFINITY)) return 0; /* NaN or +inf */
    if (bm > m) {
      s = m == -INFINITY ? 0.0 : s * exp((double)m - (double)bm);
      m = bm;
    }
    if (m > -INFINITY) s += st->fn->expsum(b, (size_t)n, m);
  }
  *m_out = m;
  *s_out = s;
  return m > -INFINITY;
}

/* ---- forward ------------------------------------------------------------- */

typedef struct xe_task {
  const xe_state *s;
  const float *x;
  const int32_t *labels;
  const float *dloss; /* backward */
  float *out;         /* loss (NONE) or dlogits */
  double *partials;   /* forward MEAN / SUM: the sum of each block of rows */
  double scale;       /* backward MEAN / SUM: dloss / count or dloss */
} xe_task;

static double xe_row_loss(const xe_state *s, const float *x, int64_t t) {
  if (t < 0 || t >= s->C) return NAN;
  float m;
  double sum;
  if (!xe_row_lse(s, x, &m, &sum)) return NAN;
  return ((double)m - (double)x[t * s->xs1]) + log(sum);
}

/* Blocks [begin, end) of block_rows rows. */
static void xe_forward_blocks(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const xe_task *k = arg;
  const xe_state *s = k->s;
  for (int64_t b = begin; b < end; b++) {
    const int64_t n0 = b * s->block_rows;
    const int64_t n1 = s->N - n0 > s->block_rows ? n0 + s->block_rows : s->N;
    double sum = 0.0;
    for (int64_t n = n0; n < n1; n++) {
      const int64_t t = k->labels[n * s->lab_s];
      const double v = t == s->ignore ? 0.0 : xe_row_loss(s, k->x + n * s->xs0, t);
      if (k->partials) sum += v;
      else k->out[n * s->loss_s] = (float)v;
    }
    if (k->partials) k->partials[b] = sum;
  }
}

static int64_t xe_counted(const xe_state *s, const int32_t *labels) {
  int64_t k = 0;
  for (int64_t n = 0; n < s->N; n++) k += labels[n * s->lab_s] != s->ignore;
  return k;
}

static void xe_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                       size_t *workspace_bytes) {
  const adnn_plugin_softmax_cross_entropy *p = problem;
  xe_state *s = state;
  xe_reshape_common(p, env, s);
  *workspace_bytes = p->reduction == ADNN_LOSS_REDUCTION_NONE ? 0
                                                              : (size_t)s->blocks * sizeof(double);
}

static void xe_run(const void *problem, const void *state, const void *const *inputs,
                   void *const *outputs, void *workspace) {
  (void)problem;
  const xe_state *s = state;
  const int none = s->reduction == ADNN_LOSS_REDUCTION_NONE;
  xe_task k = {s, inputs[0], inputs[1], NULL, outputs[0], none ? NULL : workspace, 0.0};
  const int64_t blocks = s->blocks;
  adnn_cpu_parallel_for(blocks, s->grain, xe_forward_blocks, &k);
  if (none) return;
  /* In block order on this thread: the same sum for every thread count. */
  double total = 0.0;
  for (int64_t b = 0; b < blocks; b++) total += k.partials[b];
  if (s->reduction == ADNN_LOSS_REDUCTION_MEAN) total /= (double)xe_counted(s, k.labels);
  *(float *)outputs[0] = (float)total;
}

const adnn_cpu_impl adnn_cpu_softmax_cross_entropy_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32),
    .state_size = sizeof(xe_state),
    .reshape = xe_reshape,
    .run = xe_run,
};

/* ---- backward ------------------------------------------------------------ */

static void xe_backward_rows(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const xe_task *k = arg;
  const xe_state *s = k->s;
  const int64_t C = s->C, xs = s->xs1;
  float buf[XE_BLOCK];
  for (int64_t n = begin; n < end; n++) {
    const float *x = k->x + n * s->xs0;
    float *dx = k->out + n * s->xs0;
    const int64_t t = k->labels[n * s->lab_s];
    float m = 0.0f;
    double sum = 0.0;
    float fill = 0.0f;
    int rows_ok = 0;
    double g = 0.0;
    if (t == s->ignore) {
      fill = 0.0f;
    } else {
      g = s->reduction == ADNN_LOSS_REDUCTION_NONE ? (double)k->dloss[n * s->loss_s] : k->scale;
      rows_ok = t >= 0 && t < C && xe_row_lse(s, x, &m, &sum);
      fill = NAN;
    }
    if (!rows_ok) {
      if (xs == 1) s->fn->fill(dx, (size_t)C, fill);
      else
        for (int64_t c = 0; c < C; c++) dx[c * xs] = fill;
      continue;
    }
    const double ls = log(sum);
    const double xt = (double)x[t * xs]; /* read before dx may overwrite it */
    for (int64_t c0 = 0; c0 < C; c0 += XE_BLOCK) {
      const int64_t nb = C - c0 < XE_BLOCK ? C - c0 : XE_BLOCK;
      if (xs == 1) {
        s->fn->grad(x + c0, dx + c0, (size_t)nb, m, (float)ls, (float)g);
      } else {
        for (int64_t j = 0; j < nb; j++) buf[j] = x[(c0 + j) * xs];
        s->fn->grad(buf, buf, (size_t)nb, m, (float)ls, (float)g);
        for (int64_t j = 0; j < nb; j++) dx[(c0 + j) * xs] = buf[j];
      }
    }
    dx[t * xs] = (float)(g * expm1((xt - (double)m) - ls));
  }
}

static void xe_backward_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                                size_t *workspace_bytes) {
  const adnn_plugin_softmax_cross_entropy_backward *b = problem;
  xe_state *s = state;
  xe_reshape_common(&b->fwd, env, s);
  const int64_t grain = ADNN_CPU_GRAIN / s->C; /* rows per task */
  s->grain = grain > 1 ? grain : 1;
  *workspace_bytes = 0;
}

static void xe_backward_run(const void *problem, const void *state, const void *const *inputs,
                            void *const *outputs, void *workspace) {
  (void)problem;
  (void)workspace;
  const xe_state *s = state;
  xe_task k = {s, inputs[0], inputs[1], inputs[2], outputs[0], NULL, 0.0};
  if (s->reduction != ADNN_LOSS_REDUCTION_NONE) {
    k.scale = (double)k.dloss[0];
    if (s->reduction == ADNN_LOSS_REDUCTION_MEAN) k.scale /= (double)xe_counted(s, k.labels);
  }
  adnn_cpu_parallel_for(s->N, s->grain, xe_backward_rows, &k);
}

const adnn_cpu_impl adnn_cpu_softmax_cross_entropy_backward_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32),
    .state_size = sizeof(xe_state),
    .reshape = xe_backward_reshape,
    .run = xe_backward_run,
};

#endif
