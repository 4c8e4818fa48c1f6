/*
 * The fused multi-tensor optimizer step (SGD with momentum, dampening,
 * Nesterov and weight decay; Adam; AdamW), F32 (vectorized) and F64, in
 * place.
 *
 * Work split: every tensor is cut into fixed chunks of OPT_CHUNK elements
 * (the last one of a tensor shorter), and the chunks of all tensors, numbered
 * tensor after tensor, are spread over the pool. The update is elementwise,
 * so the result is the same for any thread count. The chunk numbering (a
 * prefix count per tensor) is rebuilt in the workspace at every run: it
 * costs O(T) and keeps the state a fixed size.
 *
 * lr and step are read from the problem at every run (the plugin passes the
 * core's live problem for this op; see impl_list.h), since
 * adnn_plan_set_optimizer_step changes them between executions.
 *
 * Arithmetic follows PyTorch's foreach kernels in the parameters' precision:
 * SGD: g = grad + wd * p; buf = momentum * buf + (1 - dampening) * g (buf = g
 * at step 1); g = nesterov ? g + momentum * buf : buf; p -= lr * g.
 * Adam(W): m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g^2;
 * p -= (lr / bc1) * m / (sqrt(v) / sqrt(bc2) + eps), bc_i = 1 - beta_i^t,
 * the bias corrections computed in double once per step.
 *
 * Master weights (model_dtype F16/BF16, F32 parameters and states): a chunk
 * runs in blocks of ADNN_CPU_LOWP_BLOCK elements; each block's gradients are
 * widened into an F32 stack buffer (exact), the F32 kernel updates the block,
 * and the updated parameters are rounded into the model copy (kernels/cpu/
 * lowp.c, the bits of kernels/common/float16.h), so the master weights are
 * those of the F32 step on the widened gradients.
 */
#ifdef ADNN_SIMD_VECTOR_PART

/* sqrt of every lane, with the instruction where the target has one. */
SIMD_INLINE VF NAME(opt_vsqrt)(VF v) {
#if ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX512
  return (VF)_mm512_sqrt_ps((__m512)v);
#elif ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX2
  return (VF)_mm256_sqrt_ps((__m256)v);
#elif defined(__SSE2__) && VL == 4
  return (VF)_mm_sqrt_ps((__m128)v);
#else
  for (int i = 0; i < VL; i++) v[i] = __builtin_sqrtf(v[i]);
  return v;
#endif
}

/* Loads / stores n <= VL floats (n == VL: a whole vector). */
SIMD_INLINE VF NAME(opt_ld)(const float *p, size_t n) {
  return n == VL ? NAME(vload)(p) : NAME(vload_n)(p, n, 0.0f);
}
SIMD_INLINE void NAME(opt_st)(float *p, VF v, size_t n) {
  if (n == VL)
    NAME(vstore)(p, v);
  else
    NAME(vstore_n)(p, v, n);
}

static void NAME(opt_sgd)(const opt_consts *k, float *p, const float *g, float *buf, size_t n) {
  const VF lr = NAME(vset)(k->lr), wd = NAME(vset)(k->wd), mom = NAME(vset)(k->momentum),
           damp1 = NAME(vset)(k->one_minus_dampening);
  for (size_t i = 0; i < n; i += VL) {
    const size_t w = n - i < VL ? n - i : VL;
    VF pv = NAME(opt_ld)(p + i, w), gv = NAME(opt_ld)(g + i, w);
    if (k->has_wd) gv = gv + wd * pv;
    if (buf) {
      VF b = k->first ? gv : mom * NAME(opt_ld)(buf + i, w) + damp1 * gv;
      NAME(opt_st)(buf + i, b, w);
      gv = k->nesterov ? gv + mom * b : b;
    }
    NAME(opt_st)(p + i, pv - lr * gv, w);
  }
}

static void NAME(opt_adam)(const opt_consts *k, float *p, const float *g, float *m, float *v,
                           size_t n) {
  const VF wd = NAME(vset)(k->wd), b1 = NAME(vset)(k->beta1), b2 = NAME(vset)(k->beta2),
           c1 = NAME(vset)(k->one_minus_beta1), c2 = NAME(vset)(k->one_minus_beta2),
           decay = NAME(vset)(k->decoupled_decay), step = NAME(vset)(k->step_size),
           sbc2 = NAME(vset)(k->sqrt_bc2), eps = NAME(vset)(k->epsilon);
  for (size_t i = 0; i < n; i += VL) {
    const size_t w = n - i < VL ? n - i : VL;
    VF pv = NAME(opt_ld)(p + i, w), gv = NAME(opt_ld)(g + i, w);
    if (k->adamw) pv = pv * decay;
    else if (k->has_wd) gv = gv + wd * pv;
    const VF mv = b1 * NAME(opt_ld)(m + i, w) + c1 * gv;
    const VF vv = b2 * NAME(opt_ld)(v + i, w) + c2 * (gv * gv);
    NAME(opt_st)(m + i, mv, w);
    NAME(opt_st)(v + i, vv, w);
    const VF denom = NAME(opt_vsqrt)(vv) / sbc2 + eps;
    NAME(opt_st)(p + i, pv - step * (mv / denom), w);
  }
}

static const opt_fns NAME(adnn_f32_optimizer) = {NAME(opt_sgd), NAME(opt_adam)};

#else /* the dispatch part */

#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/lowp.h"
#include "kernels/cpu/simd.h"

/* The step's constants, computed once per run from the live problem, in the
 * parameters' precision (the F32 copies) and in double (the F64 path). */
typedef struct opt_consts {
  float lr, wd, momentum, one_minus_dampening;
  float beta1, beta2, one_minus_beta1, one_minus_beta2;
  float decoupled_decay, step_size, sqrt_bc2, epsilon;
  double dlr, dwd, dmomentum, done_minus_dampening;
  double dbeta1, dbeta2, done_minus_beta1, done_minus_beta2;
  double ddecoupled_decay, dstep_size, dsqrt_bc2, depsilon;
  int has_wd, first, nesterov, adamw;
} opt_consts;

typedef struct opt_fns {
  void (*sgd)(const opt_consts *k, float *p, const float *g, float *buf, size_t n);
  void (*adam)(const opt_consts *k, float *p, const float *g, float *m, float *v, size_t n);
} opt_fns;

#define ADNN_SIMD_KERNEL "kernels/cpu/optimizer.c"
#include "kernels/cpu/simd_instantiate.h"

static const opt_fns *const opt_by_isa[ADNN_CPU_ISA_COUNT] = ADNN_CPU_ISA_TABLE(adnn_f32_optimizer);

/* Elements per chunk: large enough that a task is worth waking a thread for
 * (Adam streams 4 arrays in and 3 out), small enough to balance a few
 * tensors over the pool. */
#define OPT_CHUNK 16384

typedef struct opt_state {
  const opt_fns *fn;
  int isa; /* for the model copies' conversions */
} opt_state;

static void opt_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                        size_t *workspace_bytes) {
  const adnn_plugin_optimizer *p = problem;
  opt_state *s = state;
  s->fn = opt_by_isa[env->isa];
  s->isa = env->isa;
  /* The chunk prefix counts: T + 1 of them. */
  *workspace_bytes = (size_t)(p->tensor_count + 1) * sizeof(int64_t);
}

typedef struct opt_task {
  const opt_state *s;
  const adnn_plugin_optimizer *p;
  const opt_consts *k;
  const int64_t *first_chunk; /* T + 1: chunk number of each tensor's first chunk */
  const void *const *inputs;
  void *const *outputs;
} opt_task;

static void opt_f64(const opt_consts *k, int kind, double *p, const double *g, double *a,
                    double *b, size_t n) {
  if (kind == ADNN_OPTIMIZER_SGD) {
    for (size_t i = 0; i < n; i++) {
      double gv = g[i];
      if (k->has_wd) gv += k->dwd * p[i];
      if (a) {
        const double buf = k->first ? gv : k->dmomentum * a[i] + k->done_minus_dampening * gv;
        a[i] = buf;
        gv = k->nesterov ? gv + k->dmomentum * buf : buf;
      }
      p[i] -= k->dlr * gv;
    }
    return;
  }
  for (size_t i = 0; i < n; i++) {
    double pv = p[i], gv = g[i];
    if (k->adamw) pv *= k->ddecoupled_decay;
    else if (k->has_wd) gv += k->dwd * pv;
    const double mv = k->dbeta1 * a[i] + k->done_minus_beta1 * gv;
    const double vv = k->dbeta2 * b[i] + k->done_minus_beta2 * (gv * gv);
    a[i] = mv;
    b[i] = vv;
    p[i] = pv - k->dstep_size * (mv / (sqrt(vv) / k->dsqrt_bc2 + k->depsilon));
  }
}

static void opt_chunks(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const opt_task *t = arg;
  const adnn_plugin_optimizer *p = t->p;
  const int64_t T = p->tensor_count;
  /* The tensor of chunk `begin`: the last i with first_chunk[i] <= begin. */
  int64_t lo = 0, hi = T - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (t->first_chunk[mid] <= begin) lo = mid;
    else hi = mid - 1;
  }
  const int f64 = p->dtype == ADNN_DTYPE_F64;
  const size_t es = f64 ? sizeof(double) : sizeof(float);
  const int sgd = p->kind == ADNN_OPTIMIZER_SGD, with_buf = sgd && p->momentum != 0.0;
  const adnn_dtype md = p->model_dtype;
  const int64_t states = sgd ? with_buf : 2;
  for (int64_t c = begin, i = lo; c < end; c++) {
    while (c >= t->first_chunk[i + 1]) i++;
    const int64_t off = (c - t->first_chunk[i]) * OPT_CHUNK;
    const int64_t n = p->sizes[i] - off < OPT_CHUNK ? p->sizes[i] - off : OPT_CHUNK;
    char *pp = (char *)t->outputs[i] + off * es;
    char *ap = NULL, *bp = NULL;
    if (with_buf || !sgd) ap = (char *)t->outputs[T + i] + off * es;
    if (!sgd) bp = (char *)t->outputs[2 * T + i] + off * es;
    if (md != 0) {
      const uint16_t *g16 = (const uint16_t *)t->inputs[i] + off;
      uint16_t *w16 = (uint16_t *)t->outputs[(1 + states) * T + i] + off;
      float gbuf[ADNN_CPU_LOWP_BLOCK];
      for (int64_t b0 = 0; b0 < n; b0 += ADNN_CPU_LOWP_BLOCK) {
        const size_t m = (size_t)(n - b0 < ADNN_CPU_LOWP_BLOCK ? n - b0 : ADNN_CPU_LOWP_BLOCK);
        float *pb = (float *)pp + b0;
        float *ab = ap ? (float *)ap + b0 : NULL, *bb = bp ? (float *)bp + b0 : NULL;
        adnn_cpu_lowp_to_f32(t->s->isa, md, g16 + b0, gbuf, m);
        if (sgd) t->s->fn->sgd(t->k, pb, gbuf, ab, m);
        else t->s->fn->adam(t->k, pb, gbuf, ab, bb, m);
        adnn_cpu_lowp_from_f32(t->s->isa, md, pb, w16 + b0, m);
      }
      continue;
    }
    const char *gp = (const char *)t->inputs[i] + off * es;
    if (f64)
      opt_f64(t->k, (int)p->kind, (double *)pp, (const double *)gp, (double *)ap, (double *)bp,
              (size_t)n);
    else if (sgd)
      t->s->fn->sgd(t->k, (float *)pp, (const float *)gp, (float *)ap, (size_t)n);
    else
      t->s->fn->adam(t->k, (float *)pp, (const float *)gp, (float *)ap, (float *)bp, (size_t)n);
  }
}

static void opt_run(const void *problem, const void *state, const void *const *inputs,
                    void *const *outputs, void *workspace) {
  const adnn_plugin_optimizer *p = problem;
  const opt_state *s = state;
  opt_consts k;
  k.dlr = p->lr;
  k.dwd = p->weight_decay;
  k.dmomentum = p->momentum;
  k.done_minus_dampening = 1.0 - p->dampening;
  k.dbeta1 = p->beta1;
  k.dbeta2 = p->beta2;
  k.done_minus_beta1 = 1.0 - p->beta1;
  k.done_minus_beta2 = 1.0 - p->beta2;
  k.ddecoupled_decay = 1.0 - p->lr * p->weight_decay;
  k.dstep_size = p->lr / (1.0 - pow(p->beta1, (double)p->step));
  k.dsqrt_bc2 = sqrt(1.0 - pow(p->beta2, (double)p->step));
  k.depsilon = p->epsilon;
  k.lr = (float)k.dlr;
  k.wd = (float)k.dwd;
  k.momentum = (float)k.dmomentum;
  k.one_minus_dampening = (float)k.done_minus_dampening;
  k.beta1 = (float)k.dbeta1;
  k.beta2 = (float)k.dbeta2;
  k.one_minus_beta1 = (float)k.done_minus_beta1;
  k.one_minus_beta2 = (float)k.done_minus_beta2;
  k.decoupled_decay = (float)k.ddecoupled_decay;
  k.step_size = (float)k.dstep_size;
  k.sqrt_bc2 = (float)k.dsqrt_bc2;
  k.epsilon = (float)k.depsilon;
  k.has_wd = p->weight_decay != 0.0;
  k.first = p->step == 1;
  k.nesterov = p->nesterov != 0;
  k.adamw = p->kind == ADNN_OPTIMIZER_ADAMW;
  int64_t *first_chunk = workspace;
  first_chunk[0] = 0;
  int64_t elements = 0;
  for (int64_t i = 0; i < p->tensor_count; i++) {
    first_chunk[i + 1] = first_chunk[i] + (p->sizes[i] + OPT_CHUNK - 1) / OPT_CHUNK;
    elements += p->sizes[i];
  }
  const int64_t chunks = first_chunk[p->tensor_count];
  /* Many small tensors make many short chunks: below two grains of work in
   * all, one thread does everything rather than waking the pool. */
  const int64_t grain = elements < 2 * ADNN_CPU_GRAIN ? chunks : 1;
  opt_task t = {s, p, &k, first_chunk, inputs, outputs};
  adnn_cpu_parallel_for(chunks, grain, opt_chunks, &t);
}

const adnn_cpu_impl adnn_cpu_optimizer_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPES_FLOAT,
    .state_size = sizeof(opt_state),
    .reshape = opt_reshape,
    .run = opt_run,
};

#endif
