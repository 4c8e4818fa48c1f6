/*
 * matmul with its fused epilogue on the CPU: OpenBLAS GEMMs over tiles of y,
 * each tile's epilogue (bias, scaled residual, activation:
 * matmul_epilogue.h) applied right after its GEMM, while the tile is still
 * in cache.
 *
 * Layouts: each of a, b and y must be a BLAS matrix per batch: a unit stride
 * in one of its last two dims and a leading dimension at least the other
 * dim (a transpose is just the other unit dim, e.g. PyTorch's Linear weight
 * W [N, K] as b with strides [1, K]); batch dims may have any stride (b's
 * broadcast ones 0). When y is column-major the kernel computes y^T = b^T a^T
 * instead, so the GEMM always writes row-major tiles. Other layouts go to the
 * reference implementation.
 *
 * Tiles: each batch matrix's (possibly transposed) output is cut along ONE
 * dim into `parts` tiles (full width along the other). Every OpenBLAS call
 * packs the A rows and B columns of its tile, so cutting the rows repacks
 * all of B once per tile and cutting the columns repacks all of A: the cut
 * goes across the dim whose other operand is the smaller (rows when N < M,
 * i.e. B = K x N smaller than A = M x K). There are as many tiles as
 * threads over all batch matrices (each extra tile packs the larger operand
 * once more), and enough that a tile holds at most TILE_ELEMS elements (16
 * MiB of floats, about a last-level cache, for the epilogue that follows its
 * GEMM), but no tile is thinner than MIN_CUT (thinner GEMMs lose more to
 * packing than the cache gains). On BERT-base's shapes, one tile per thread
 * measured faster than two or four per thread on the shared 2-core build
 * machine, though within its noise (doc/performance.md); the rest follows
 * the packing arithmetic above.
 *
 * Threading: the tiles of every batch matrix are the tasks of one
 * adnn_cpu_parallel_for, each running its GEMM and its epilogue on the same
 * core. OpenBLAS is made single-threaded for the duration
 * (blas_threads.h): threaded again inside the pool's tasks it would run
 * twice as many threads as cores. A problem of fewer tiles than threads runs
 * its tiles one after the other on the calling thread, each GEMM threaded by
 * OpenBLAS.
 *
 * In-place residual (r is exactly y): the GEMM reads r as its C operand with
 * beta = residual_scale (y = alpha a b + residual_scale r), and the epilogue
 * adds the bias and applies the activation. A separate residual is added by
 * the epilogue. The result is deterministic for a fixed thread count and
 * OpenBLAS core type: the tiles depend on the problem and the thread count
 * only, and each is one single-threaded OpenBLAS call whichever pool thread
 * runs it. (Another thread count cuts other tiles, which may change the last
 * bit where OpenBLAS treats tile edges differently.)
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <cblas.h>

#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/matmul_epilogue.h"

#define TILE_ELEMS ((int64_t)1 << 22)
#define MIN_CUT 64

/* A batch matrix as BLAS sees it: row-major with leading dimension ld,
 * transposed or not. */
typedef struct blas_mat {
  int trans;
  int64_t ld;
} blas_mat;

static size_t dtype_bytes(adnn_dtype dt) { return dt == ADNN_DTYPE_F64 ? sizeof(double) : sizeof(float); }

static int fits_int(int64_t v) { return v >= 1 && v <= INT_MAX; }

/* Whether rows x cols with strides (sr, sc) is a BLAS matrix: unit stride
 * along the columns (row-major, ld = sr) or along the rows (column-major:
 * the transpose of a row-major matrix with ld = sc). A dim of size 1 takes
 * any stride. */
static int as_blas(int64_t rows, int64_t cols, int64_t sr, int64_t sc, blas_mat *m) {
  if (cols == 1 || sc == 1) {
    m->trans = 0;
    m->ld = rows == 1 ? cols : sr;
    if (fits_int(m->ld) && m->ld >= cols) return 1;
  }
  if (rows == 1 || sr == 1) {
    m->trans = 1;
    m->ld = cols == 1 ? rows : sc;
    if (fits_int(m->ld) && m->ld >= rows) return 1;
  }
  return 0;
}

/* The plan's view of the problem: the GEMM C[m x n] = A[m x k] B[k x n] per
 * batch, which is y = a b, or y^T = b^T a^T when y is column-major. */
typedef struct mm_state {
  int transposed;         /* computing y^T */
  int64_t m, n, k;
  blas_mat A, B, C;       /* A = a (or b^T), B = b (or a^T), C = y (or y^T) */
  int64_t sA[2], sB[2], sC[2], sR[2]; /* batch strides (elements) */
  int64_t r_rs, r_cs;     /* residual strides in C's orientation */
  int64_t tile_m, tile_n;  /* a tile's rows and columns */
  int64_t tiles_m, tiles_n, tiles; /* per batch matrix */
  int bias_packed;        /* bias has a stride other than 1: packed into the workspace */
  adnn_cpu_matmul_epilogue epi;
  int threads;
  int isa;                /* engine_epilogue: the instruction set for adnn_cpu_sgemm_with */
  size_t pack_off, pack_bytes; /* engine_epilogue: its pack slices in the workspace */
} mm_state;

/* The transpose of a BLAS matrix view (rows and columns swapped). */
static blas_mat flip(blas_mat m) {
  m.trans = !m.trans;
  return m;
}

static int layouts(const adnn_plugin_matmul *p, mm_state *s) {
  blas_mat a, b, y;
  if (!as_blas(p->M, p->K, p->a.strides[2], p->a.strides[3], &a)) return 0;
  if (!as_blas(p->K, p->N, p->b.strides[2], p->b.strides[3], &b)) return 0;
  if (!as_blas(p->M, p->N, p->y.strides[2], p->y.strides[3], &y)) return 0;
  if (!fits_int(p->M) || !fits_int(p->N) || !fits_int(p->K)) return 0;
  if (s) {
    s->transposed = y.trans;
    const adnn_tensor_desc *A = &p->a, *B = &p->b;
    if (!y.trans) {
      s->m = p->M, s->n = p->N;
      s->A = a, s->B = b;
      s->C = y;
      s->r_rs = p->residual.strides[2], s->r_cs = p->residual.strides[3];
    } else {
      /* y^T [N x M] = b^T [N x K] a^T [K x M]. */
      s->m = p->N, s->n = p->M;
      s->A = flip(b), s->B = flip(a);
      A = &p->b, B = &p->a;
      y.trans = 0;
      s->C = y;
      s->r_rs = p->residual.strides[3], s->r_cs = p->residual.strides[2];
    }
    s->k = p->K;
    for (int i = 0; i < 2; i++) {
      s->sA[i] = A->strides[i];
      s->sB[i] = B->strides[i];
      s->sC[i] = p->y.strides[i];
      s->sR[i] = p->has_residual ? p->residual.strides[i] : 0;
    }
  }
  return 1;
}

static int mm_supports(const void *problem, const adnn_cpu_env *env, char *why,
                       size_t why_size) {
  (void)env;
  if (layouts(problem, NULL)) return 1;
  snprintf(why, why_size, "needs a, b and y with a unit stride in one of their last two dims, "
           "leading dimensions that fit, and sizes under 2^31");
  return 0;
}

static void mm_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                       size_t *workspace_bytes) {
  const adnn_plugin_matmul *p = problem;
  mm_state *s = state;
  layouts(p, s);
  /* The cut (see the top): parts for one tile per thread over all batch
   * matrices, and for the cache, at most one per MIN_CUT rows or columns. */
  const int64_t batches = p->batch0 * p->batch1;
  int64_t parts = ((int64_t)env->threads + batches - 1) / batches;
  const int64_t cache_parts = (s->m * s->n + TILE_ELEMS - 1) / TILE_ELEMS;
  if (parts < cache_parts) parts = cache_parts;
  const int cut_rows = s->n < s->m;
  const int64_t len = cut_rows ? s->m : s->n;
  int64_t most = len / MIN_CUT;
  if (most < 1) most = 1;
  if (parts > most) parts = most;
  int64_t tile = (len + parts - 1) / parts;
  tile = (tile + 15) / 16 * 16; /* whole cache lines of a row */
  if (tile > len) tile = len;
  s->tile_m = cut_rows ? tile : s->m;
  s->tile_n = cut_rows ? s->n : tile;
  s->tiles_m = (s->m + s->tile_m - 1) / s->tile_m;
  s->tiles_n = (s->n + s->tile_n - 1) / s->tile_n;
  s->tiles = s->tiles_m * s->tiles_n;
  s->threads = env->threads;
  adnn_cpu_matmul_epilogue_init(&s->epi, &p->activation, p->y.dtype, s->transposed, env->isa);
  s->bias_packed = p->has_bias && p->N > 1 && p->bias.strides[0] != 1;
  *workspace_bytes = s->bias_packed ? (size_t)p->N * dtype_bytes(p->y.dtype) : 0;
}

typedef struct mm_job {
  const adnn_plugin_matmul *p;
  const mm_state *s;
  const char *a, *b, *r; /* a and b: the GEMM's A and B operands */
  const void *bias;
  char *y;
  size_t esize;
  int r_in_place; /* r is y: read by the GEMM as C with beta */
} mm_job;

static void run_tile(const mm_job *j, int64_t t) {
  const mm_state *s = j->s;
  const adnn_plugin_matmul *p = j->p;
  const int64_t per = s->tiles, bt = t / per, tile = t % per;
  const int64_t b0 = bt / p->batch1, b1 = bt % p->batch1;
  const int64_t i0 = tile / s->tiles_n * s->tile_m, j0 = tile % s->tiles_n * s->tile_n;
  const int64_t mt = s->m - i0 < s->tile_m ? s->m - i0 : s->tile_m;
  const int64_t nt = s->n - j0 < s->tile_n ? s->n - j0 : s->tile_n;
  const size_t es = j->esize;
  /* The tile's rows of A, columns of B and block of C. */
  const char *A = j->a + (size_t)(b0 * s->sA[0] + b1 * s->sA[1]) * es;
  const char *B = j->b + (size_t)(b0 * s->sB[0] + b1 * s->sB[1]) * es;
  char *C = j->y + (size_t)(b0 * s->sC[0] + b1 * s->sC[1]) * es;
  A += (size_t)(s->A.trans ? i0 : i0 * s->A.ld) * es;
  B += (size_t)(s->B.trans ? j0 * s->B.ld : j0) * es;
  char *Ct = C + (size_t)(i0 * s->C.ld + j0) * es;
  const enum CBLAS_TRANSPOSE ta = s->A.trans ? CblasTrans : CblasNoTrans;
  const enum CBLAS_TRANSPOSE tb = s->B.trans ? CblasTrans : CblasNoTrans;
  const double beta = j->r_in_place ? p->residual_scale : 0.0;
  if (p->alpha == 0.0) {
    /* a and b are not read (doc/ops.md): C = beta C, without calling a BLAS
     * whose alpha = 0 shortcut might skip the beta = 0 overwrite of C. */
    for (int64_t i = 0; i < mt; i++)
      for (int64_t q = 0; q < nt; q++) {
        const size_t at = (size_t)(i * s->C.ld + q);
        if (p->y.dtype == ADNN_DTYPE_F64) {
          double *c = (double *)Ct + at;
          *c = beta == 0.0 ? 0.0 : beta * *c;
        } else {
          float *c = (float *)Ct + at;
          *c = beta == 0.0 ? 0.0f : (float)beta * *c;
        }
      }
  } else if (p->y.dtype == ADNN_DTYPE_F64)
    cblas_dgemm(CblasRowMajor, ta, tb, (int)mt, (int)nt, (int)s->k, p->alpha,
                (const double *)A, (int)s->A.ld, (const double *)B, (int)s->B.ld, beta,
                (double *)Ct, (int)s->C.ld);
  else
    cblas_sgemm(CblasRowMajor, ta, tb, (int)mt, (int)nt, (int)s->k, (float)p->alpha,
                (const float *)A, (int)s->A.ld, (const float *)B, (int)s->B.ld, (float)beta,
                (float *)Ct, (int)s->C.ld);
  adnn_cpu_matmul_epilogue e = s->epi;
  const char *r = j->r && !j->r_in_place
                      ? j->r + (size_t)(b0 * s->sR[0] + b1 * s->sR[1]) * es
                      : NULL;
  adnn_cpu_matmul_epilogue_bind(&e, j->bias, r, s->r_rs, s->r_cs, p->residual_scale);
  if (adnn_cpu_matmul_epilogue_active(&e))
    adnn_cpu_matmul_epilogue_apply(&e, Ct, s->C.ld, mt, nt, i0, j0);
}

static void tile_task(void *arg, int64_t t0, int64_t t1, int thread) {
  (void)thread;
  for (int64_t t = t0; t < t1; t++) run_tile(arg, t);
}

/* Inputs {a, b[, bias][, r]}, outputs {y}. */
static void mm_run(const void *problem, const void *state, const void *const *inputs,
                   void *const *outputs, void *workspace) {
  const adnn_plugin_matmul *p = problem;
  const mm_state *s = state;
  mm_job j = {p, s, inputs[0], inputs[1], NULL, NULL, outputs[0],
              dtype_bytes(p->y.dtype), 0};
  if (s->transposed) { /* y^T = b^T a^T: A is b, B is a */
    j.a = inputs[1];
    j.b = inputs[0];
  }
  if (p->has_bias) {
    j.bias = inputs[2];
    if (s->bias_packed) {
      const size_t es = j.esize;
      for (int64_t i = 0; i < p->N; i++)
        memcpy((char *)workspace + (size_t)i * es,
               (const char *)inputs[2] + (size_t)(i * p->bias.strides[0]) * es, es);
      j.bias = workspace;
    }
  }
  /* A residual scaled by 0 is not read at all (doc/ops.md). In place, it is
   * the GEMM's C with beta = residual_scale (a BLAS beta of 0 does not read
   * C either). */
  if (p->has_residual && p->residual_scale != 0.0) {
    j.r = inputs[2 + p->has_bias];
    j.r_in_place = (const void *)j.r == outputs[0];
  }
  const int64_t total = p->batch0 * p->batch1 * s->tiles;
  if (s->threads > 1 && total >= s->threads) {
    adnn_cpu_blas_serial_begin();
    adnn_cpu_parallel_for(total, 1, tile_task, &j);
    adnn_cpu_blas_serial_end();
  } else {
    tile_task(&j, 0, total, 0);
  }
}

const adnn_cpu_impl adnn_cpu_matmul_blas = {
    .name = "blas_epilogue",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPES_FLOAT,
    .supports = mm_supports,
    .state_size = sizeof(mm_state),
    .reshape = mm_reshape,
    .run = mm_run,
};

/* ---- F32 through adnn's GEMM engine, the epilogue in its store ------------------
 *
 * The same layouts (and the same y^T = b^T a^T view of a column-major y) as
 * blas_epilogue, but each batch matrix is ONE adnn_cpu_sgemm call whose
 * per-tile hook (gemm.h) runs the matmul epilogue on every finished tile of
 * C while it is still in the L1 cache: no second pass over y and no per-tile
 * repacking of the operands (the engine packs each panel once per call).
 *
 * The in-place residual (r is exactly y) is the engine's C with beta =
 * residual_scale: the engine forms alpha a b + beta C before the hook sees
 * the tile, so the residual is read before y is overwritten, and the hook
 * adds only the bias and the activation. A separate residual is added by
 * the hook. alpha = 0 is the engine's k = 0 case (a and b not read, C =
 * beta C, then the hook), as doc/ops.md asks.
 *
 * Threading: the engine tasks over its tiles of C on the pool when called
 * from the caller, and runs on the calling thread inside a pool task. With
 * at least as many batch matrices as threads, the batch matrices are the
 * pool's tasks (each engine call then single-threaded, on the engine, never
 * OpenBLAS: the dispatcher never picks OpenBLAS inside a pool task);
 * otherwise the batch matrices run one after the other, each call threaded
 * over its tiles. Deterministic whatever the thread count: the engine forms
 * every sum in the same order (gemm.h) and the epilogue is elementwise, so
 * the result does not depend on scheduling or on the thread count.
 * Claimed wherever the engine has a microkernel (AVX2+FMA, AVX-512); it
 * always runs the engine (adnn_cpu_sgemm_with), with its pack space taken
 * from the plan's workspace, so run allocates nothing. Which of it and
 * blas_epilogue runs a shape is the tuner's measurement (the matmul op is
 * tunable, doc/tuning.md), or without the tuner the dispatcher's heuristic
 * (mm_engine_preferred). */

typedef struct mm_engine_job {
  const adnn_plugin_matmul *p;
  const mm_state *s;
  int isa;
  const float *a, *b, *r; /* a and b: the GEMM's A and B operands */
  const float *bias;
  float *y;
  int r_in_place;
  char *packs; /* the engine's pack space: s->threads slices of s->pack_bytes */
} mm_engine_job;

static void engine_hook(const void *arg, float *c, int64_t ldc, int64_t row0, int64_t col0,
                        int64_t rows, int64_t cols) {
  adnn_cpu_matmul_epilogue_apply(arg, c, ldc, rows, cols, row0, col0);
}

/* One batch matrix: inside a pool task (batches as tasks) on the thread's
 * own pack slice, else over the pool with every slice. */
static void engine_batch(const mm_engine_job *j, int64_t bt, int thread, int in_task) {
  const mm_state *s = j->s;
  const adnn_plugin_matmul *p = j->p;
  const int64_t b0 = bt / p->batch1, b1 = bt % p->batch1;
  const float *A = j->a + b0 * s->sA[0] + b1 * s->sA[1];
  const float *B = j->b + b0 * s->sB[0] + b1 * s->sB[1];
  float *C = j->y + b0 * s->sC[0] + b1 * s->sC[1];
  adnn_cpu_matmul_epilogue e = s->epi;
  const float *r = j->r && !j->r_in_place ? j->r + b0 * s->sR[0] + b1 * s->sR[1] : NULL;
  adnn_cpu_matmul_epilogue_bind(&e, j->bias, r, s->r_rs, s->r_cs, p->residual_scale);
  const adnn_cpu_gemm_epilogue hook = {engine_hook, &e};
  const float beta = j->r_in_place ? (float)p->residual_scale : 0.0f;
  const adnn_cpu_gemm_pack pack =
      in_task ? adnn_cpu_gemm_pack_slice(j->packs, s->pack_bytes, thread)
              : (adnn_cpu_gemm_pack){j->packs, s->pack_bytes, s->threads};
  /* Always the engine: where OpenBLAS is faster the tuner (or the plugin's
   * heuristic, mm_engine_preferred) takes blas_epilogue instead. */
  adnn_cpu_sgemm_with(ADNN_CPU_SGEMM_ENGINE, j->isa, s->A.trans, s->B.trans, s->m, s->n, s->k,
                      (float)p->alpha, A, s->A.ld, B, s->B.ld, beta, C, s->C.ld,
                      adnn_cpu_matmul_epilogue_active(&e) ? &hook : NULL, &pack);
}

static void engine_task(void *arg, int64_t t0, int64_t t1, int thread) {
  for (int64_t t = t0; t < t1; t++) engine_batch(arg, t, thread, 1);
}

static int mm_engine_supports(const void *problem, const adnn_cpu_env *env, char *why,
                              size_t why_size) {
  if (!adnn_cpu_sgemm_engine_isa(env->isa)) {
    snprintf(why, why_size, "needs the GEMM engine's AVX2+FMA or AVX-512 microkernel");
    return 0;
  }
  return mm_supports(problem, env, why, why_size);
}

/* The plugin's own choice without the tuner (ADNN_TUNE=off): the engine
 * wherever the GEMM dispatcher's heuristic would run it. Where it would hand
 * the whole GEMM to OpenBLAS (its AVX kernels on the largest shapes, outside
 * a pool task), blas_epilogue, whose tiles each run their epilogue on their
 * own core, is taken instead (measured on BERT-base's shapes,
 * doc/performance.md). With the batch matrices as pool tasks the engine is
 * always preferred. With the tuner on, both are measured (doc/tuning.md). */
static int mm_engine_preferred(const void *problem, const adnn_cpu_env *env) {
  const adnn_plugin_matmul *p = problem;
  mm_state s;
  layouts(p, &s);
  const int64_t batches = p->batch0 * p->batch1;
  if (env->threads > 1 && batches >= env->threads) return 1;
  return adnn_cpu_sgemm_choose(env->isa, s.A.trans, s.B.trans, s.m, s.n, s.k) ==
         ADNN_CPU_SGEMM_ENGINE;
}

static void mm_engine_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                              size_t *workspace_bytes) {
  const adnn_plugin_matmul *p = problem;
  mm_state *s = state;
  layouts(p, s);
  s->threads = env->threads;
  s->isa = env->isa;
  adnn_cpu_matmul_epilogue_init(&s->epi, &p->activation, p->y.dtype, s->transposed, env->isa);
  s->bias_packed = p->has_bias && p->N > 1 && p->bias.strides[0] != 1;
  /* The packed bias, then one engine pack slice per thread (a batch matrix
   * per task, or one call over the pool: either way at most threads). */
  const size_t bias_bytes = s->bias_packed ? (size_t)p->N * sizeof(float) : 0;
  s->pack_off = (bias_bytes + 63) / 64 * 64;
  s->pack_bytes = adnn_cpu_sgemm_pack_bytes(env->isa, s->m, s->n, s->k);
  *workspace_bytes = s->pack_off + s->pack_bytes * (size_t)env->threads;
}

static void mm_engine_run(const void *problem, const void *state, const void *const *inputs,
                          void *const *outputs, void *workspace) {
  const adnn_plugin_matmul *p = problem;
  const mm_state *s = state;
  mm_engine_job j = {p, s, s->isa, inputs[0], inputs[1], NULL, NULL, outputs[0], 0,
                     (char *)workspace + s->pack_off};
  if (s->transposed) { /* y^T = b^T a^T: A is b, B is a */
    j.a = inputs[1];
    j.b = inputs[0];
  }
  if (p->has_bias) {
    j.bias = inputs[2];
    if (s->bias_packed) {
      float *packed = workspace;
      for (int64_t i = 0; i < p->N; i++) packed[i] = j.bias[i * p->bias.strides[0]];
      j.bias = packed;
    }
  }
  /* A residual scaled by 0 is not read at all (doc/ops.md); the engine's
   * beta = 0 does not read C either. */
  if (p->has_residual && p->residual_scale != 0.0) {
    j.r = inputs[2 + p->has_bias];
    j.r_in_place = (const void *)j.r == outputs[0];
  }
  const int64_t batches = p->batch0 * p->batch1;
  if (s->threads > 1 && batches >= s->threads)
    adnn_cpu_parallel_for(batches, 1, engine_task, &j);
  else
    for (int64_t t = 0; t < batches; t++) engine_batch(&j, t, 0, 0);
}

const adnn_cpu_impl adnn_cpu_matmul_engine = {
    .name = "engine_epilogue",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32),
    .supports = mm_engine_supports,
    .preferred = mm_engine_preferred,
    .state_size = sizeof(mm_state),
    .reshape = mm_engine_reshape,
    .run = mm_engine_run,
};
