/*
 * matmul (GEMM with a fused epilogue) on the CUDA plugin. Three paths, the
 * first that applies is the plugin's choice:
 *
 *   cuda:cublaslt        cublasLtMatmul with its epilogue, when cuBLASLt's
 *                        epilogue is exactly ours: DEFAULT / BIAS (identity),
 *                        RELU / RELU_BIAS (relu), GELU / GELU_BIAS (the tanh
 *                        GELU only: cuBLASLt's GELU is the tanh
 *                        approximation, so it never stands in for the erf
 *                        GELU); the residual is cuBLASLt's C with beta =
 *                        residual_scale (D = act(alpha op(A) op(B) + beta C +
 *                        bias), cuBLASLt's documented order, which is ours).
 *                        Needs y row-major (unit stride along N: cuBLASLt's
 *                        bias runs along the rows of its column-major D,
 *                        which are y's columns), a packed bias and a residual
 *                        of y's orientation.
 *   cuda:gemm_epilogue   cublasGemmStridedBatchedEx writing alpha a b into y
 *                        (with the in-place residual as C, beta =
 *                        residual_scale), then our epilogue kernel
 *                        (kernels/cuda/matmul_epilogue.cu) for the bias, a
 *                        separate residual and any activation.
 *   cuda:matmul_direct   our kernel for layouts cuBLAS cannot take (no unit
 *                        stride in either of the last two dims of a, b or y,
 *                        or sizes beyond 32-bit ints), and for every
 *                        low-precision matmul (F16/BF16 or INT8 inputs,
 *                        doc/ops.md "Matmul dtypes"): cuBLAS's and
 *                        cuBLASLt's F16/BF16/INT8 GEMMs are not used yet,
 *                        because the host emulation (t/cuda-emu) cannot
 *                        compute them, so they could not be tested here.
 * The cuBLASLt plan falls back to the GEMM path at execution when a pointer
 * is not 16-byte aligned (the alignment its algorithm was chosen for).
 * cuBLASLt runs on the context's cuBLAS handle: a cublasHandle_t may be
 * used as a cublasLtHandle_t with a cast (cuBLAS documents this for
 * cublasLtHandle_t), so the plan needs no handle of its own; cublasLtMatmul
 * takes the context's stream explicitly.
 *
 * Layouts: adnn's matrices are indexed row-major and cuBLAS's column-major.
 * Each of a, b, y is read column-major with the leading dimension of its
 * unit-stride dim; y row-major is the column-major y^T = b^T a^T, y
 * column-major is y = a b, and each operand's op (N or T) follows from
 * whether its column-major view is the matrix or its transpose (see
 * mm_gemm_setup). Batches: the core gave every tensor rank 4 [B0, B1, r, c];
 * one strided batch covers B0 x B1 when every tensor's dim-0 stride is B1
 * times its dim-1 stride (or a batch dim is 1), otherwise the plan issues
 * B0 calls of B1 each.
 */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cublasLt.h>

#include "backends/cuda/cuda_op.h"

enum { MM_LT = 0, MM_GEMM = 1, MM_DIRECT = 2 };
static const char *const mm_names[] = {"cuda:cublaslt", "cuda:gemm_epilogue",
                                       "cuda:matmul_direct"};

/* The cuBLASLt workspace the plan asks for at most (within the op's limit). */
#define MM_LT_WORKSPACE ((uint64_t)32 << 20)

/* A matrix read column-major: `view_t` says the column-major view (ld) is the
 * transpose of the row-major-indexed matrix (its unit stride is along the
 * columns); otherwise it is the matrix itself. */
typedef struct mm_col {
  int view_t;
  int64_t ld;
} mm_col;

/* The column-major GEMM D[mc x nc] = op(X)[mc x k] op(Y)[k x nc] that
 * computes y (or y^T), with the strided-batch layout of every operand. */
typedef struct mm_gemm {
  int y_t;                     /* D is y^T (y row-major) */
  int64_t mc, nc, k;
  int op_x, op_y;              /* 1: transpose */
  int64_t rows_x, cols_x, ld_x; /* X's stored column-major matrix */
  int64_t rows_y, cols_y, ld_y;
  int64_t ld_d, ld_c;          /* y's and the residual's leading dimensions */
  int x_is_b;                  /* X is b (and Y is a), else X is a */
  /* Batches: `outer` calls of `count` matrices; per operand the stride
   * between matrices of a call and between calls (elements). */
  int64_t outer, count;
  int64_t stride_x, stride_y, stride_d, stride_c;
  int64_t outer_x, outer_y, outer_d, outer_c;
  int c_ok;                    /* the residual fits as C (y's orientation) */
} mm_gemm;

typedef struct mm_plan {
  adnn_plugin_matmul p;
  int gemm_ok;     /* cuBLAS can take the layouts (mm_gemm below is valid) */
  int lt_ok;       /* the epilogue is cuBLASLt's, and its layouts fit */
  mm_gemm g;
  int path;        /* the selected MM_* */
  /* cuBLASLt, when lt_ok: descriptors made at creation, the algorithm at
   * selection. */
  cublasLtMatmulDesc_t lt_desc;
  cublasLtMatrixLayout_t lt_x, lt_y, lt_c, lt_d;
  cublasLtMatmulPreference_t lt_pref;
  cublasLtMatmulAlgo_t lt_algo;
  size_t lt_workspace;
  int lt_have_algo;
} mm_plan;

static int fits_int(int64_t v) { return v >= 1 && v <= INT_MAX; }

/* The column-major view of rows x cols with strides (sr, sc), if any. A dim
 * of size 1 takes any stride. */
static int col_view(int64_t rows, int64_t cols, int64_t sr, int64_t sc, mm_col *v) {
  if (cols == 1 || sc == 1) {
    v->view_t = 1;
    v->ld = rows == 1 ? cols : sr;
    if (v->ld >= cols && fits_int(v->ld)) return 1;
  }
  if (rows == 1 || sr == 1) {
    v->view_t = 0;
    v->ld = cols == 1 ? rows : sc;
    if (v->ld >= rows && fits_int(v->ld)) return 1;
  }
  return 0;
}

/* One strided batch over B0 x B1 when the tensor's dim-0 stride is B1 times
 * its dim-1 stride (or a batch dim is 1). */
static int batch_merges(const adnn_plugin_matmul *p, const int64_t *s) {
  return p->batch0 == 1 || p->batch1 == 1 || s[0] == p->batch1 * s[1];
}

static int mm_gemm_setup(const adnn_plugin_matmul *p, mm_gemm *g) {
  mm_col va, vb, vy, vr;
  if (!col_view(p->M, p->K, p->a.strides[2], p->a.strides[3], &va)) return 0;
  if (!col_view(p->K, p->N, p->b.strides[2], p->b.strides[3], &vb)) return 0;
  if (!col_view(p->M, p->N, p->y.strides[2], p->y.strides[3], &vy)) return 0;
  if (!fits_int(p->M) || !fits_int(p->N) || !fits_int(p->K)) return 0;
  memset(g, 0, sizeof *g);
  g->y_t = vy.view_t;
  g->k = p->K;
  g->ld_d = vy.ld;
  /* D = y^T = b^T a^T (X = b, Y = a) or D = y = a b (X = a, Y = b); an
   * operand's op is N when its column-major view already is what the
   * product needs (the transpose when D is y^T, the matrix when D is y). */
  const mm_col vx = g->y_t ? vb : va, vyy = g->y_t ? va : vb;
  const adnn_tensor_desc *tx = g->y_t ? &p->b : &p->a, *ty = g->y_t ? &p->a : &p->b;
  g->x_is_b = g->y_t;
  g->mc = g->y_t ? p->N : p->M;
  g->nc = g->y_t ? p->M : p->N;
  g->op_x = vx.view_t != g->y_t;
  g->op_y = vyy.view_t != g->y_t;
  /* The stored column-major matrices: op(X) is mc x k. */
  g->rows_x = g->op_x ? g->k : g->mc;
  g->cols_x = g->op_x ? g->mc : g->k;
  g->ld_x = vx.ld;
  g->rows_y = g->op_y ? g->nc : g->k;
  g->cols_y = g->op_y ? g->k : g->nc;
  g->ld_y = vyy.ld;
  g->c_ok = p->has_residual &&
            col_view(p->M, p->N, p->residual.strides[2], p->residual.strides[3], &vr) &&
            vr.view_t == g->y_t;
  g->ld_c = g->c_ok ? vr.ld : g->ld_d;
  const int merge = batch_merges(p, tx->strides) && batch_merges(p, ty->strides) &&
                    batch_merges(p, p->y.strides) &&
                    (!p->has_residual || batch_merges(p, p->residual.strides));
  /* With one batch dim of 1 its stride is irrelevant: the other one's
   * stride steps the merged batch. */
  const int inner = p->batch1 > 1 || p->batch0 == 1 ? 1 : 0;
  if (merge) {
    g->outer = 1;
    g->count = p->batch0 * p->batch1;
    g->stride_x = tx->strides[inner];
    g->stride_y = ty->strides[inner];
    g->stride_d = p->y.strides[inner];
    g->stride_c = p->has_residual ? p->residual.strides[inner] : 0;
  } else {
    g->outer = p->batch0;
    g->count = p->batch1;
    g->stride_x = tx->strides[1], g->outer_x = tx->strides[0];
    g->stride_y = ty->strides[1], g->outer_y = ty->strides[0];
    g->stride_d = p->y.strides[1], g->outer_d = p->y.strides[0];
    if (p->has_residual) g->stride_c = p->residual.strides[1], g->outer_c = p->residual.strides[0];
  }
  return fits_int(g->count);
}

/* ---- cuBLASLt ------------------------------------------------------------ */

/* cuBLASLt's epilogue for ours, or -1 when it has none that computes exactly
 * our definition. */
static int lt_epilogue(const adnn_plugin_matmul *p) {
  const int bias = p->has_bias;
  switch (p->activation.kind) {
    case ADNN_ACTIVATION_IDENTITY: return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    case ADNN_ACTIVATION_RELU: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case ADNN_ACTIVATION_GELU_TANH:
      return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    default: return -1;
  }
}

static void lt_release(mm_plan *m) {
  if (m->lt_pref) cublasLtMatmulPreferenceDestroy(m->lt_pref);
  if (m->lt_d) cublasLtMatrixLayoutDestroy(m->lt_d);
  if (m->lt_c) cublasLtMatrixLayoutDestroy(m->lt_c);
  if (m->lt_y) cublasLtMatrixLayoutDestroy(m->lt_y);
  if (m->lt_x) cublasLtMatrixLayoutDestroy(m->lt_x);
  if (m->lt_desc) cublasLtMatmulDescDestroy(m->lt_desc);
  m->lt_pref = NULL, m->lt_d = m->lt_c = m->lt_y = m->lt_x = NULL, m->lt_desc = NULL;
}

static cublasStatus_t lt_layout(cublasLtMatrixLayout_t *l, cudaDataType_t t, int64_t rows,
                                int64_t cols, int64_t ld, int64_t count, int64_t stride) {
  cublasStatus_t e = cublasLtMatrixLayoutCreate(l, t, (uint64_t)rows, (uint64_t)cols, ld);
  if (e != CUBLAS_STATUS_SUCCESS) return e;
  const int32_t c = (int32_t)count;
  e = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &c, sizeof c);
  if (e != CUBLAS_STATUS_SUCCESS) return e;
  return cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                          &stride, sizeof stride);
}

/* The cuBLASLt descriptors of the plan (no device work); 0 when cuBLASLt
 * refuses them (the GEMM path then runs). */
static int lt_create(adnn_plugin_plan *plan, mm_plan *m) {
  const mm_gemm *g = &m->g;
  const int f64 = plan->op->dtype == ADNN_DTYPE_F64;
  const cudaDataType_t t = f64 ? CUDA_R_64F : CUDA_R_32F;
  const cublasComputeType_t compute =
      f64 ? CUBLAS_COMPUTE_64F
          : ((plan->op->flags & ADNN_CONTEXT_ALLOW_TF32) ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                         : CUBLAS_COMPUTE_32F);
  cublasStatus_t e = cublasLtMatmulDescCreate(&m->lt_desc, compute, t);
  const int32_t op_x = g->op_x ? CUBLAS_OP_T : CUBLAS_OP_N, op_y = g->op_y ? CUBLAS_OP_T : CUBLAS_OP_N;
  const uint32_t epi = (uint32_t)lt_epilogue(&m->p);
  if (e == CUBLAS_STATUS_SUCCESS)
    e = cublasLtMatmulDescSetAttribute(m->lt_desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_x, sizeof op_x);
  if (e == CUBLAS_STATUS_SUCCESS)
    e = cublasLtMatmulDescSetAttribute(m->lt_desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_y, sizeof op_y);
  if (e == CUBLAS_STATUS_SUCCESS)
    e = cublasLtMatmulDescSetAttribute(m->lt_desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
  if (e == CUBLAS_STATUS_SUCCESS)
    e = lt_layout(&m->lt_x, t, g->rows_x, g->cols_x, g->ld_x, g->count, g->stride_x);
  if (e == CUBLAS_STATUS_SUCCESS)
    e = lt_layout(&m->lt_y, t, g->rows_y, g->cols_y, g->ld_y, g->count, g->stride_y);
  if (e == CUBLAS_STATUS_SUCCESS)
    e = lt_layout(&m->lt_d, t, g->mc, g->nc, g->ld_d, g->count, g->stride_d);
  /* C is the residual, or y itself (not read: beta 0) without one or with
   * residual_scale 0. */
  const int c_is_r = m->p.has_residual && m->p.residual_scale != 0.0;
  if (e == CUBLAS_STATUS_SUCCESS)
    e = lt_layout(&m->lt_c, t, g->mc, g->nc, c_is_r ? g->ld_c : g->ld_d, g->count,
                  c_is_r ? g->stride_c : g->stride_d);
  if (e == CUBLAS_STATUS_SUCCESS) e = cublasLtMatmulPreferenceCreate(&m->lt_pref);
  uint64_t ws = plan->op->workspace_limit < MM_LT_WORKSPACE ? plan->op->workspace_limit
                                                            : MM_LT_WORKSPACE;
  if (e == CUBLAS_STATUS_SUCCESS)
    e = cublasLtMatmulPreferenceSetAttribute(m->lt_pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &ws, sizeof ws);
  /* The pointers are only known at execution: ask for algorithms that need
   * 16-byte alignment, and check it there. */
  const uint32_t align = 16;
  const cublasLtMatmulPreferenceAttributes_t aligns[4] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  for (int i = 0; i < 4 && e == CUBLAS_STATUS_SUCCESS; i++)
    e = cublasLtMatmulPreferenceSetAttribute(m->lt_pref, aligns[i], &align, sizeof align);
  if (e != CUBLAS_STATUS_SUCCESS) {
    lt_release(m);
    return 0;
  }
  return 1;
}

/* cuBLASLt's choice for the plan (its heuristic); 0 when it has none. */
static int lt_choose(adnn_plugin_plan *plan, mm_plan *m) {
  if (m->lt_have_algo) return 1;
  cublasLtMatmulHeuristicResult_t result;
  int returned = 0;
  memset(&result, 0, sizeof result);
  /* A bias pointer is part of the problem cuBLASLt plans for; any aligned
   * address stands in until execution. */
  cublasStatus_t e = cublasLtMatmulAlgoGetHeuristic(
      (cublasLtHandle_t)plan->ctx->cublas, m->lt_desc, m->lt_x, m->lt_y, m->lt_c, m->lt_d,
      m->lt_pref, 1, &result, &returned);
  if (e != CUBLAS_STATUS_SUCCESS || returned < 1 || result.state != CUBLAS_STATUS_SUCCESS) return 0;
  m->lt_algo = result.algo;
  m->lt_workspace = result.workspaceSize;
  m->lt_have_algo = 1;
  return 1;
}

/* ---- the plan -------------------------------------------------------------- */

static void mm_destroy(adnn_plugin_plan *plan) {
  mm_plan *m = plan->impl;
  if (m) lt_release(m);
  adnn_cuda__plan_free_impl(plan);
}

static adnn_status mm_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(mm_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  mm_plan *m = plan->impl;
  adnn_plugin_op_problem(plan->op, &m->p, sizeof m->p);
  const adnn_plugin_matmul *p = &m->p;
  /* Low-precision inputs run on the direct kernel only (see above). */
  const int lowp = plan->op->dtype != ADNN_DTYPE_F32 && plan->op->dtype != ADNN_DTYPE_F64;
  m->gemm_ok = !lowp && mm_gemm_setup(p, &m->g);
  m->lt_ok = m->gemm_ok && lt_epilogue(p) >= 0 && m->g.y_t && m->g.outer == 1 &&
             (!p->has_bias || p->N == 1 || p->bias.strides[0] == 1) &&
             (!p->has_residual || m->g.c_ok);
  if (m->lt_ok) m->lt_ok = lt_create(plan, m);
  return ADNN_STATUS_SUCCESS;
}

static adnn_status mm_select(adnn_plugin_plan *plan, int32_t candidate) {
  mm_plan *m = plan->impl;
  if (candidate != 0)
    return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                 "cuda: matmul has one algorithm (the plugin's choice) and no "
                                 "candidate %d", (int)candidate);
  adnn_status st = adnn_cuda__context_enter(plan->ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  m->path = MM_DIRECT;
  if (m->gemm_ok) m->path = MM_GEMM;
  if (m->lt_ok && lt_choose(plan, m)) m->path = MM_LT;
  snprintf(plan->algorithm, sizeof plan->algorithm, "%s", mm_names[m->path]);
  return adnn_cuda__plan_workspace(plan, m->path == MM_LT ? m->lt_workspace : 0,
                                   "cuBLASLt matmul");
}

static int aligned16(const void *ptr) { return ((uintptr_t)ptr & 15u) == 0; }

static cudaDataType_t data_type(adnn_dtype dt) { return dt == ADNN_DTYPE_F64 ? CUDA_R_64F : CUDA_R_32F; }

/* D = alpha op(X) op(Y) + beta C through cublasGemmStridedBatchedEx, with C
 * = D = y (beta = residual_scale for the in-place residual, else 0). */
static adnn_status run_gemm(adnn_plugin_plan *plan, const mm_plan *m, const char *x,
                            const char *y_op, char *d, double beta) {
  const mm_gemm *g = &m->g;
  const int f64 = plan->op->dtype == ADNN_DTYPE_F64;
  const size_t es = f64 ? sizeof(double) : sizeof(float);
  const cudaDataType_t t = data_type(plan->op->dtype);
  const cublasComputeType_t compute =
      f64 ? CUBLAS_COMPUTE_64F
          : ((plan->op->flags & ADNN_CONTEXT_ALLOW_TF32) ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                         : CUBLAS_COMPUTE_32F);
  const float alpha_f = (float)m->p.alpha, beta_f = (float)beta;
  const void *alpha = f64 ? (const void *)&m->p.alpha : (const void *)&alpha_f;
  const void *betap = f64 ? (const void *)&beta : (const void *)&beta_f;
  for (int64_t o = 0; o < g->outer; o++) {
    cublasStatus_t e = cublasGemmStridedBatchedEx(
        plan->ctx->cublas, g->op_x ? CUBLAS_OP_T : CUBLAS_OP_N, g->op_y ? CUBLAS_OP_T : CUBLAS_OP_N,
        (int)g->mc, (int)g->nc, (int)g->k, alpha, x + (size_t)(o * g->outer_x) * es, t,
        (int)g->ld_x, (long long)g->stride_x, y_op + (size_t)(o * g->outer_y) * es, t,
        (int)g->ld_y, (long long)g->stride_y, betap, d + (size_t)(o * g->outer_d) * es, t,
        (int)g->ld_d, (long long)g->stride_d, (int)g->count, compute, CUBLAS_GEMM_DEFAULT);
    if (e != CUBLAS_STATUS_SUCCESS) return adnn_cuda__fail_cublas(e, "cublasGemmStridedBatchedEx (matmul)");
  }
  return ADNN_STATUS_SUCCESS;
}

/* Inputs {a, b[, bias][, r]}, output {y}. */
static adnn_status mm_execute(adnn_plugin_plan *plan, const void *const *in, void *const *out) {
  mm_plan *m = plan->impl;
  const adnn_plugin_matmul *p = &m->p;
  const void *a = in[0], *b = in[1];
  const void *bias = p->has_bias ? in[2] : NULL;
  /* A residual scaled by 0 is not read (doc/ops.md): no C, beta 0. */
  const void *r = p->has_residual && p->residual_scale != 0.0 ? in[2 + p->has_bias] : NULL;
  void *y = out[0];
  const int r_in_place = r != NULL && r == (const void *)y;
  const adnn_dtype dt = plan->op->dtype;
  if (dt != ADNN_DTYPE_F32 && dt != ADNN_DTYPE_F64) {
    /* INT8 has no residual; its per-channel scales follow bias (and r). */
    const void *scales = p->has_requant_scales ? in[2 + p->has_bias + p->has_residual] : NULL;
    return adnn_cuda__check_launch(
        adnn_cuda_matmul_lowp_launch(&plan->launch, p, a, b, bias, r, scales, y),
        "matmul direct (low precision)");
  }
  /* alpha 0 leaves a and b unread (doc/ops.md); cuBLAS does not promise
   * that, our kernel does. */
  if (m->path == MM_DIRECT || p->alpha == 0.0)
    return adnn_cuda__check_launch(
        adnn_cuda_matmul_direct_launch(&plan->launch, dt, p, a, b, bias, r, y), "matmul direct");
  const char *x = m->g.x_is_b ? b : a, *yy = m->g.x_is_b ? a : b;
  if (m->path == MM_LT && aligned16(a) && aligned16(b) && aligned16(y) &&
      (r == NULL || aligned16(r)) && (bias == NULL || aligned16(bias))) {
    if (bias) {
      cublasStatus_t e = cublasLtMatmulDescSetAttribute(
          m->lt_desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
      if (e != CUBLAS_STATUS_SUCCESS)
        return adnn_cuda__fail_cublas(e, "cublasLtMatmulDescSetAttribute (matmul bias)");
    }
    const float alpha_f = (float)p->alpha, beta_f = (float)(r ? p->residual_scale : 0.0);
    const double beta_d = r ? p->residual_scale : 0.0;
    const int f64 = dt == ADNN_DTYPE_F64;
    const void *alpha = f64 ? (const void *)&p->alpha : (const void *)&alpha_f;
    const void *beta = f64 ? (const void *)&beta_d : (const void *)&beta_f;
    cublasStatus_t e = cublasLtMatmul(
        (cublasLtHandle_t)plan->ctx->cublas, m->lt_desc, alpha, x, m->lt_x, yy, m->lt_y, beta,
        r ? r : y, m->lt_c, y, m->lt_d, &m->lt_algo, plan->workspace, plan->workspace_bytes,
        plan->ctx->stream);
    if (e != CUBLAS_STATUS_SUCCESS) return adnn_cuda__fail_cublas(e, "cublasLtMatmul (matmul)");
    return ADNN_STATUS_SUCCESS;
  }
  /* The GEMM path (also the cuBLASLt plan's fallback for unaligned pointers). */
  adnn_status st = run_gemm(plan, m, x, yy, y, r_in_place ? p->residual_scale : 0.0);
  if (st != ADNN_STATUS_SUCCESS) return st;
  const void *r_sep = r_in_place ? NULL : r;
  if (bias == NULL && r_sep == NULL && p->activation.kind == ADNN_ACTIVATION_IDENTITY)
    return ADNN_STATUS_SUCCESS;
  return adnn_cuda__check_launch(
      adnn_cuda_matmul_epilogue_launch(&plan->launch, dt, p, bias, r_sep, y), "matmul epilogue");
}

const adnn_cuda__op_impl adnn_cuda__matmul_op = {
    .create = mm_create,
    .select = mm_select,
    .execute = mm_execute,
    .destroy = mm_destroy,
    /* F16/BF16/I8/U8 inputs (a's dtype) run on the direct kernel. */
    .dtypes = ADNN_OP_DTYPES_MATMUL,
};
