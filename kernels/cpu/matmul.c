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
 * Tiles: TILE_ROWS x TILE_COLS blocks of the (possibly transposed) output of
 * every batch matrix. Each OpenBLAS call packs its A rows and B columns once,
 * so the tile's two sides must both be a few hundred long for the packing to
 * pay off (its cost relative to the multiply-adds is about 1/rows + 1/cols),
 * while the tile (256 x 256 floats, 256 KiB) still fits in the L2 cache for
 * the epilogue that follows.
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
 * OpenBLAS core type, and independent of the thread count: every tile's sums
 * are the same single-threaded OpenBLAS call whichever thread runs it (the
 * sequential path for small problems uses OpenBLAS's threads and may differ
 * in the last bit).
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <cblas.h>

#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/matmul_epilogue.h"

#define TILE_ROWS 256
#define TILE_COLS 256

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
  int64_t tiles_m, tiles_n, tiles; /* per batch matrix */
  int bias_packed;        /* bias has a stride other than 1: packed into the workspace */
  adnn_cpu_matmul_epilogue epi;
  int threads;
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
  s->tiles_m = (s->m + TILE_ROWS - 1) / TILE_ROWS;
  s->tiles_n = (s->n + TILE_COLS - 1) / TILE_COLS;
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
  const int64_t i0 = tile / s->tiles_n * TILE_ROWS, j0 = tile % s->tiles_n * TILE_COLS;
  const int64_t mt = s->m - i0 < TILE_ROWS ? s->m - i0 : TILE_ROWS;
  const int64_t nt = s->n - j0 < TILE_COLS ? s->n - j0 : TILE_COLS;
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
  if (p->y.dtype == ADNN_DTYPE_F64)
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
  if (p->has_residual) {
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
