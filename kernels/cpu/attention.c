/*
 * Scaled-dot-product attention, forward, F32 and F64: one tiled kernel with
 * an online softmax (the flash-attention method) that never forms the
 * Sq x Skv score matrix.
 *
 * The rows of one key/value head g of batch b are the pairs (query i, query
 * head h of g's group), ordered i-major, so that the heads of a group share
 * every packed block of K and V (grouped-query and multi-query attention
 * read k and v once per row block, not once per head) and the rows of a
 * block have nearby causal limits. A task is a block of up to BQ of these
 * rows; the thread pool runs the tasks over (b, g, row block). For each task:
 *   1. Q's rows are packed into a contiguous [BQ, D] tile, and each row gets
 *      its key limit: every mask is a prefix of the keys (the key length of
 *      the batch, clamped to 0..Skv, and the causal bound j <= i + Skv - Sq,
 *      aligned to the bottom right), so one number per row describes both,
 *      and the key loop stops at the block's largest limit: causal blocks
 *      above the diagonal, and keys past the key length, are never touched;
 *   2. per block of ATT_BK keys: K^T and V are packed ([D, ATT_BK] and
 *      [ATT_BK, Dv] padded to whole vectors), S = scale * Q K^T is formed
 *      in register tiles (AT_MR rows x AT_NR vectors, the accumulators held
 *      over the whole reduction over D), the bias is added and the masked
 *      scores set to -inf; each row's running maximum m and sum l (in
 *      double) are updated, S becomes P = exp(S - m) in place, the row's
 *      accumulator O is rescaled by exp(m_old - m_new), and O += P V in
 *      register tiles;
 *   3. o = O / l and lse = m + log l; a row that saw no finite score (no key
 *      left, or a bias of -inf on every key it may see) gives o = 0 and
 *      lse = -inf, never NaN (a row with no score yet uses 0 as its shift,
 *      so its P is exp(-inf) = 0).
 * Extra memory per thread (the workspace, one slice per pool thread): the
 * tiles Q [BQ, D], K^T [D, ATT_BK], V [ATT_BK, Dv], S [BQ, ATT_BK], O [BQ,
 * Dv] and the row statistics: O((BQ + ATT_BK) (D + Dv)), independent of the
 * sequence lengths.
 *
 * Every row is computed by one task in a fixed order (the key blocks in
 * order, each tile's reductions in order), whatever the row block size and
 * the thread count, so results are bitwise identical run to run and across
 * thread counts. F32 accumulates S and O in float (rows of O are rescaled,
 * never summed over more than ATT_BK terms between rescalings) and m, l in
 * double; F64 is double throughout, with libm's exp.
 */
#ifdef ADNN_SIMD_VECTOR_PART

/* Register tiles: AT_MR rows by AT_NR vectors of S (32 vector registers on
 * AVX-512 hold 4 x 4 accumulators and the loads; 16 on AVX2 and SSE hold
 * 4 x 2). */
#define AT_MR 4
#if ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX512
#define AT_NR 4
#else
#define AT_NR 2
#endif

#define AT_T float
#define AT_V VF
#define AT_I VI
#define AT_L VL
#define AT_SFX f32
#define AT_IS_F32 1
#include "kernels/cpu/attention_tile.h"
#undef AT_T
#undef AT_V
#undef AT_I
#undef AT_L
#undef AT_SFX
#undef AT_IS_F32

typedef int64_t NAME(at_vdi_t) __attribute__((vector_size(VL * 4)));
#define AT_T double
#define AT_V VDH
#define AT_I NAME(at_vdi_t)
#define AT_L (VL / 2)
#define AT_SFX f64
#define AT_IS_F32 0
#include "kernels/cpu/attention_tile.h"
#undef AT_T
#undef AT_V
#undef AT_I
#undef AT_L
#undef AT_SFX
#undef AT_IS_F32

#undef AT_MR
#undef AT_NR

static const att_fns NAME(adnn_att) = {{NAME(att_layout_f32), NAME(att_layout_f64)},
                                       {NAME(att_task_f32), NAME(att_task_f64)}};

#else /* the dispatch part */

#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/simd.h"

/* Keys per block: a multiple of every register tile's width (AT_NR vectors
 * of every instruction set and type). */
#define ATT_BK 64
/* Rows per task at most; fewer when that would leave threads idle. */
#define ATT_BQ 128
/* The most bytes of packed K and V one thread keeps for one (b, g) pair
 * (16384 keys at D = Dv = 64 in F32 take 8 MiB). */
#define ATT_CACHE_BYTES ((size_t)32 << 20)

/* The plan's state: the problem's sizes and strides, the blocking, and the
 * workspace layout of one thread's slice (byte offsets). */
typedef struct att_state {
  int64_t B, H, Hkv, group, Sq, Skv, D, Dv;
  int64_t R;          /* rows per (b, g): group * Sq */
  int64_t BQ, bqp;    /* rows per task, padded to whole register tiles */
  int64_t row_blocks; /* tasks per (b, g) */
  int64_t tasks;
  int64_t mr, dvp;    /* the tile's rows, Dv padded to whole vectors */
  int64_t qs[4], ks[4], vs[4], os[4], ls[3], bs[4], kls;
  double scale;
  int causal, has_bias, has_kl, has_lse, f64;
  /* 1: each thread's slice holds every packed K and V block of one (b, g)
   * pair (the Skv keys), reused by the thread's next tasks of that pair;
   * 0: one block, packed for every task (when the pair's blocks would pass
   * ATT_CACHE_BYTES). */
  int kv_cache;
  int threads; /* workspace slices */
  size_t off_q, off_k, off_v, off_s, off_o, off_m, off_l, off_lim, off_h, off_tag, per_thread;
  const struct att_fns *fn;
} att_state;

/* The buffers of one execution. */
typedef struct att_args {
  const void *q, *k, *v, *bias;
  const int32_t *key_lengths;
  void *o, *lse;
} att_args;

/* One instruction set's copies: [0] F32, [1] F64. */
typedef struct att_fns {
  void (*layout[2])(att_state *s);
  void (*task[2])(const att_state *s, const att_args *a, int64_t task, char *ws);
} att_fns;

static size_t att_align(size_t n) { return (n + 63) / 64 * 64; }

/* The slice of one thread: the tiles in elements of `es` bytes, then the
 * row statistics (doubles) and the row limits and heads (int64). */
static void att_ws_layout(att_state *s, size_t es) {
  size_t at = 0;
  const size_t bqp = (size_t)s->bqp, D = (size_t)s->D, dvp = (size_t)s->dvp;
  const size_t blocks = (size_t)((s->Skv + ATT_BK - 1) / ATT_BK);
  const size_t block_bytes = (D + dvp) * ATT_BK * es;
  s->kv_cache = s->row_blocks > 1 && blocks <= ATT_CACHE_BYTES / block_bytes;
  const size_t nb = s->kv_cache ? blocks : 1;
  s->off_q = at, at += att_align(bqp * D * es);
  s->off_k = at, at += att_align(nb * D * ATT_BK * es);
  s->off_v = at, at += att_align(nb * ATT_BK * dvp * es);
  s->off_s = at, at += att_align(bqp * ATT_BK * es);
  s->off_o = at, at += att_align(bqp * dvp * es);
  s->off_m = at, at += att_align(bqp * sizeof(double));
  s->off_l = at, at += att_align(bqp * sizeof(double));
  s->off_lim = at, at += att_align(bqp * sizeof(int64_t));
  s->off_h = at, at += att_align(bqp * sizeof(int64_t));
  s->off_tag = at, at += att_align(2 * sizeof(int64_t));
  s->per_thread = at;
}

#define ADNN_SIMD_KERNEL "kernels/cpu/attention.c"
#include "kernels/cpu/simd_instantiate.h"

static const att_fns *const att_by_isa[ADNN_CPU_ISA_COUNT] = ADNN_CPU_ISA_TABLE(adnn_att);

static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

static void att_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                        size_t *workspace_bytes) {
  const adnn_plugin_attention *p = problem;
  att_state *s = state;
  s->B = p->B, s->H = p->H, s->Hkv = p->Hkv, s->group = p->group;
  s->Sq = p->Sq, s->Skv = p->Skv, s->D = p->D, s->Dv = p->Dv;
  s->R = p->group * p->Sq;
  for (int i = 0; i < 4; i++) {
    s->qs[i] = p->q.strides[i];
    s->ks[i] = p->k.strides[i];
    s->vs[i] = p->v.strides[i];
    s->os[i] = p->o.strides[i];
    s->bs[i] = p->has_bias ? p->bias.strides[i] : 0;
  }
  for (int i = 0; i < 3; i++) s->ls[i] = p->has_lse ? p->lse.strides[i] : 0;
  s->kls = p->has_key_lengths ? p->key_lengths.strides[0] : 0;
  s->scale = p->scale;
  s->causal = p->causal;
  s->has_bias = p->has_bias;
  s->has_kl = p->has_key_lengths;
  s->has_lse = p->has_lse;
  s->f64 = p->q.dtype == ADNN_DTYPE_F64;
  s->fn = att_by_isa[env->isa];
  /* Blocks of ATT_BQ rows, halved (down to one register tile's 4 rows)
   * while there would be fewer than two tasks per thread. */
  const int64_t pairs = p->B * p->Hkv;
  int64_t bq = ATT_BQ;
  while (bq > 4 && pairs * ceil_div(s->R, bq) < 2 * (int64_t)env->threads) bq /= 2;
  if (bq > s->R) bq = s->R;
  s->BQ = bq;
  s->row_blocks = ceil_div(s->R, bq);
  s->tasks = pairs * s->row_blocks;
  s->fn->layout[s->f64](s);
  s->threads = env->threads > 0 ? env->threads : 1;
  *workspace_bytes = s->per_thread * (size_t)s->threads;
}

typedef struct att_job {
  const att_state *s;
  att_args a;
  char *ws;
} att_job;

static void att_tasks(void *arg, int64_t begin, int64_t end, int thread) {
  const att_job *j = arg;
  const att_state *s = j->s;
  char *ws = j->ws + (size_t)thread * s->per_thread;
  for (int64_t t = begin; t < end; t++) s->fn->task[s->f64](s, &j->a, t, ws);
}

static void att_run(const void *problem, const void *state, const void *const *inputs,
                    void *const *outputs, void *workspace) {
  (void)problem;
  const att_state *s = state;
  att_job j = {s, {inputs[0], inputs[1], inputs[2], NULL, NULL, outputs[0], NULL}, workspace};
  int at = 3;
  if (s->has_bias) j.a.bias = inputs[at++];
  if (s->has_kl) j.a.key_lengths = inputs[at++];
  if (s->has_lse) j.a.lse = outputs[1];
  /* The packed K and V of an earlier run are of other inputs: forget them. */
  char *ws = workspace;
  for (int t = 0; t < s->threads; t++) {
    int64_t *tag = (int64_t *)(ws + (size_t)t * s->per_thread + s->off_tag);
    tag[0] = tag[1] = 0;
  }
  adnn_cpu_parallel_for(s->tasks, 1, att_tasks, &j);
}

const adnn_cpu_impl adnn_cpu_attention_flash = {
    .name = "cpu_flash",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32) | ADNN_OP_DTYPE(ADNN_DTYPE_F64),
    .state_size = sizeof(att_state),
    .reshape = att_reshape,
    .run = att_run,
};

#endif
