/*
 * Attention backward (doc/ops.md, "Attention backward"), F32 and F64, any
 * strides, flash-style: no Sq x Skv matrix is ever formed. The method:
 *
 *   1. D_i = sum_d do[i,d] * o[i,d] for every query row, in double, into the
 *      workspace (B * H * Sq values);
 *   2. tasks over (batch b, key/value head g, key chunk c), no atomics: a
 *      task packs its chunk's keys and values once (K row-major, K and V
 *      transposed), then for each query head h of g's group and each block
 *      of Br query rows walks the chunk's blocks of Bc keys, recomputing per
 *      Br x Bc tile
 *        S  = Q K^T,  P = exp(scale S + bias - lse)  (0 where masked),
 *        dP = dO V^T, dS = scale P (dP - D_i),
 *      and accumulating dV += P^T dO and dK += dS^T Q for the chunk's keys
 *      (summed over the group's heads in place) and dQ += dS K for the
 *      query block. Five tile products per tile against the forward's two,
 *      plus one exp per element as in the forward.
 *   3. With one chunk (the usual case) a query block's dQ is complete after
 *      its walk and is written straight out. When there are too few (b, g)
 *      pairs to keep the threads busy (multi-query attention, batch 1,
 *      decoding with Skv >> Sq), the keys are split into NC chunks, each
 *      task writes its dQ part into its own slice of the workspace, and a
 *      last pass adds the NC parts in chunk order. Every sum is thus formed
 *      in a fixed order whichever thread runs what, so the results are
 *      bit-identical run to run for a fixed thread count (NC depends on it).
 *
 * Tiles: Br = Bc = 64; the five products are one register-blocked kernel
 * (4 rows x up to 4 vectors in registers over the reduction) reading its
 * left operand through two strides, so P^T and dS^T need no copy. A causal
 * mask and key lengths bound each query block's keys: blocks of keys that no
 * row of the block sees are skipped, and so are chunks beyond a batch's key
 * length (their dk and dv are zero). Rows whose lse is -inf were fully masked
 * and contribute nothing (their dq is zero).
 *
 * Extra memory per thread: the chunk's packed K, K^T, V^T and its dK and dV
 * accumulators (5 x Lc x D, Lc <= Skv), and the query block's Q, dO, S, dS
 * and dQ tiles (O(Br x (D + Bc))): O((Sq + Skv) x D) as doc/cpu.md promises.
 * Vectorized per instruction set (simd_instantiate.h) and per element type
 * (attention_backward_tile.h included twice).
 */
#ifdef ADNN_SIMD_VECTOR_PART

#define AB_F64 0
#include "kernels/cpu/attention_backward_tile.h"
#define AB_F64 1
#include "kernels/cpu/attention_backward_tile.h"

static const ab_fns NAME(adnn_attention_backward) = {
    {NAME(ab_task_f), NAME(ab_task_d)},
    VL,
};

#else /* the dispatch part */

#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/simd.h"

/* What reshape computes once (sizes, strides, tiling, workspace layout). */
typedef struct ab_state {
  const struct ab_fns *fn;
  int f64;
  int64_t B, H, Hkv, group, Sq, Skv, D, Dv;
  double scale;
  int causal, has_bias, has_key_lengths;
  int64_t qs[4], ks[4], vs[4], os[4], bs[4], lses[3], kls;
  /* Tiling: query and key blocks, padded widths (multiples of the vector
   * width), the key chunk and the number of chunks, the rounding of a
   * tile's column count (a multiple of the vector width and of the register
   * block's 4 rows). */
  int64_t Br, Bc, Dp, Dvp, Lc, NC, cu, tasks;
  /* Workspace: D_i, the dQ parts (NC > 1), then one slice per thread with
   * the byte offsets of its buffers. */
  size_t ws_delta_all, ws_partial, ws_threads, thread_bytes;
  size_t ws_kp, ws_kt, ws_vt, ws_dk, ws_dv, ws_q, ws_do, ws_s, ws_ds, ws_dq, ws_lse, ws_delta,
      ws_lim;
} ab_state;

/* One execution's tensors. */
typedef struct ab_exec {
  const ab_state *s;
  const void *q, *k, *v, *o, *dout, *lse, *bias;
  const int32_t *key_lengths;
  void *dq, *dk, *dv;
  char *ws;
  void *delta, *partial;
} ab_exec;

typedef void (*ab_task_fn)(const ab_state *s, const ab_exec *e, int64_t task, char *ws);

typedef struct ab_fns {
  ab_task_fn task[2]; /* F32, F64 */
  int lanes;          /* floats per vector */
} ab_fns;

/* The keys batch b sees at most: key_lengths[b] clamped to 0..Skv. */
static inline int64_t ab_key_limit(const ab_state *s, const ab_exec *e, int64_t b) {
  if (!s->has_key_lengths) return s->Skv;
  const int64_t n = e->key_lengths[b * s->kls];
  return n < 0 ? 0 : n > s->Skv ? s->Skv : n;
}

#define ADNN_SIMD_KERNEL "kernels/cpu/attention_backward.c"
#include "kernels/cpu/simd_instantiate.h"

static const ab_fns *const ab_by_isa[ADNN_CPU_ISA_COUNT] =
    ADNN_CPU_ISA_TABLE(adnn_attention_backward);

static int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

/* Hands out 64-byte-aligned byte offsets. */
static size_t carve(size_t *at, size_t bytes) {
  const size_t off = *at;
  *at += (bytes + 63) / 64 * 64;
  return off;
}

static void ab_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                       size_t *workspace_bytes) {
  const adnn_plugin_attention *p = &((const adnn_plugin_attention_backward *)problem)->fwd;
  ab_state *s = state;
  s->fn = ab_by_isa[env->isa];
  s->f64 = p->q.dtype == ADNN_DTYPE_F64;
  s->B = p->B, s->H = p->H, s->Hkv = p->Hkv, s->group = p->group;
  s->Sq = p->Sq, s->Skv = p->Skv, s->D = p->D, s->Dv = p->Dv;
  s->scale = p->scale;
  s->causal = p->causal, s->has_bias = p->has_bias, s->has_key_lengths = p->has_key_lengths;
  for (int i = 0; i < 4; i++) {
    s->qs[i] = p->q.strides[i], s->ks[i] = p->k.strides[i], s->vs[i] = p->v.strides[i];
    s->os[i] = p->o.strides[i];
    s->bs[i] = p->has_bias ? p->bias.strides[i] : 0;
  }
  for (int i = 0; i < 3; i++) s->lses[i] = p->lse.strides[i];
  s->kls = p->has_key_lengths ? p->key_lengths.strides[0] : 0;

  const size_t es = s->f64 ? sizeof(double) : sizeof(float);
  const int64_t lanes = s->f64 ? s->fn->lanes / 2 : s->fn->lanes;
  s->Br = 64;
  s->Bc = 64;
  s->cu = lanes > 4 ? lanes : 4;
  s->Dp = round_up(s->D, lanes);
  s->Dvp = round_up(s->Dv, lanes);
  /* Split the keys when the (batch, kv head) pairs alone cannot give every
   * thread about two tasks; at most 16 chunks, none shorter than a block. */
  const int64_t pairs = s->B * s->Hkv, blocks = (s->Skv + s->Bc - 1) / s->Bc;
  int64_t nc = 1;
  if (env->threads > 1 && pairs < 2 * (int64_t)env->threads) {
    nc = (4 * (int64_t)env->threads + pairs - 1) / pairs;
    if (nc > 16) nc = 16;
    if (nc > blocks) nc = blocks;
    /* The dQ parts take nc times q's size: at most 64 MiB or twice q,
     * whichever is larger, so that the split never costs more than a
     * small multiple of the data. */
    const double part = (double)(s->B * s->H * s->Sq * s->Dp) * (double)es;
    const double cap = part * 2.0 > 64.0 * 1048576.0 ? part * 2.0 : 64.0 * 1048576.0;
    while (nc > 1 && (double)nc * part > cap) nc--;
  }
  s->Lc = (blocks + nc - 1) / nc * s->Bc;
  s->NC = (blocks * s->Bc + s->Lc - 1) / s->Lc;
  s->tasks = pairs * s->NC;

  size_t at = 0;
  s->ws_delta_all = carve(&at, (size_t)(s->B * s->H * s->Sq) * es);
  s->ws_partial = s->NC > 1 ? carve(&at, (size_t)(s->NC * s->B * s->H * s->Sq * s->Dp) * es) : 0;
  s->ws_threads = at;
  size_t t = 0;
  s->ws_kp = carve(&t, (size_t)(s->Lc * s->Dp) * es);
  s->ws_kt = carve(&t, (size_t)(s->D * s->Lc) * es);
  s->ws_vt = carve(&t, (size_t)(s->Dv * s->Lc) * es);
  s->ws_dk = carve(&t, (size_t)(s->Lc * s->Dp) * es);
  s->ws_dv = carve(&t, (size_t)(s->Lc * s->Dvp) * es);
  s->ws_q = carve(&t, (size_t)(s->Br * s->Dp) * es);
  s->ws_do = carve(&t, (size_t)(s->Br * s->Dvp) * es);
  s->ws_s = carve(&t, (size_t)(s->Br * s->Bc) * es);
  s->ws_ds = carve(&t, (size_t)(s->Br * s->Bc) * es);
  s->ws_dq = carve(&t, (size_t)(s->Br * s->Dp) * es);
  s->ws_lse = carve(&t, (size_t)s->Br * es);
  s->ws_delta = carve(&t, (size_t)s->Br * es);
  s->ws_lim = carve(&t, (size_t)s->Br * sizeof(int64_t));
  s->thread_bytes = t;
  *workspace_bytes = s->ws_threads + (size_t)env->threads * t;
}

/* D_i = sum_d do * o over rows [begin, end) of the B * H * Sq rows, in
 * double, rounded once to the element type. */
static void ab_delta_rows(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const ab_exec *e = arg;
  const ab_state *s = e->s;
  for (int64_t row = begin; row < end; row++) {
    const int64_t i = row % s->Sq, bh = row / s->Sq, h = bh % s->H, b = bh / s->H;
    const int64_t off = b * s->os[0] + h * s->os[1] + i * s->os[2];
    double acc = 0.0;
    if (s->f64) {
      const double *o = (const double *)e->o + off, *g = (const double *)e->dout + off;
      for (int64_t d = 0; d < s->Dv; d++) acc += o[d * s->os[3]] * g[d * s->os[3]];
      ((double *)e->delta)[row] = acc;
    } else {
      const float *o = (const float *)e->o + off, *g = (const float *)e->dout + off;
      for (int64_t d = 0; d < s->Dv; d++) acc += (double)o[d * s->os[3]] * g[d * s->os[3]];
      ((float *)e->delta)[row] = (float)acc;
    }
  }
}

static void ab_tasks(void *arg, int64_t begin, int64_t end, int thread) {
  const ab_exec *e = arg;
  const ab_state *s = e->s;
  char *ws = e->ws + s->ws_threads + (size_t)thread * s->thread_bytes;
  for (int64_t t = begin; t < end; t++) s->fn->task[s->f64](s, e, t, ws);
}

/* dq = the sum of the NC chunk parts in chunk order, rows [begin, end) of
 * the B * H * Sq rows. */
static void ab_reduce_rows(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const ab_exec *e = arg;
  const ab_state *s = e->s;
  const int64_t rows = s->B * s->H * s->Sq;
  for (int64_t row = begin; row < end; row++) {
    const int64_t i = row % s->Sq, bh = row / s->Sq, h = bh % s->H, b = bh / s->H;
    const int64_t off = b * s->qs[0] + h * s->qs[1] + i * s->qs[2];
    for (int64_t d = 0; d < s->D; d++) {
      if (s->f64) {
        const double *part = (const double *)e->partial + row * s->Dp + d;
        double acc = part[0];
        for (int64_t c = 1; c < s->NC; c++) acc += part[c * rows * s->Dp];
        ((double *)e->dq)[off + d * s->qs[3]] = acc;
      } else {
        const float *part = (const float *)e->partial + row * s->Dp + d;
        float acc = part[0];
        for (int64_t c = 1; c < s->NC; c++) acc += part[c * rows * s->Dp];
        ((float *)e->dq)[off + d * s->qs[3]] = acc;
      }
    }
  }
}

/* Inputs {q, k, v, o, do, lse[, bias][, key_lengths]}; outputs {dq, dk, dv}. */
static void ab_run(const void *problem, const void *state, const void *const *inputs,
                   void *const *outputs, void *workspace) {
  (void)problem;
  const ab_state *s = state;
  ab_exec e = {0};
  e.s = s;
  e.q = inputs[0], e.k = inputs[1], e.v = inputs[2], e.o = inputs[3], e.dout = inputs[4];
  e.lse = inputs[5];
  int n = 6;
  if (s->has_bias) e.bias = inputs[n++];
  if (s->has_key_lengths) e.key_lengths = inputs[n++];
  e.dq = outputs[0], e.dk = outputs[1], e.dv = outputs[2];
  e.ws = workspace;
  e.delta = e.ws + s->ws_delta_all;
  e.partial = s->NC > 1 ? e.ws + s->ws_partial : NULL;
  const int64_t rows = s->B * s->H * s->Sq;
  const int64_t row_grain = ADNN_CPU_GRAIN / (s->Dv > 0 ? s->Dv : 1);
  adnn_cpu_parallel_for(rows, row_grain > 1 ? row_grain : 1, ab_delta_rows, &e);
  adnn_cpu_parallel_for(s->tasks, 1, ab_tasks, &e);
  if (s->NC > 1) {
    const int64_t grain = ADNN_CPU_GRAIN / (s->D * s->NC);
    adnn_cpu_parallel_for(rows, grain > 1 ? grain : 1, ab_reduce_rows, &e);
  }
}

const adnn_cpu_impl adnn_cpu_attention_backward_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPES_FLOAT,
    .state_size = sizeof(ab_state),
    .reshape = ab_reshape,
    .run = ab_run,
};

#endif
