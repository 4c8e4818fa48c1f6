/*
 * Test doubles of cuBLAS's GEMMs and of the cuBLASLt calls the CUDA plugin
 * makes (backends/cuda/cuda_matmul.c and cuda_gemm.c), for the host
 * emulation (t/cuda-emu/build.sh). Device memory is host memory there, so
 * each double computes on the host exactly what the cuBLAS and cuBLASLt
 * documentation says the call computes:
 *
 *  - cublasGemmStridedBatchedEx (and _64): for each batch i,
 *      C_i = alpha op(A_i) op(B_i) + beta C_i, column-major, A_i = A + i
 *    strideA (likewise B, C), C not read when beta is 0;
 *  - cublasSscal / cublasDscal: x = alpha x over n elements of stride incx;
 *  - cublasLtMatmul: D = epilogue(alpha op(A) op(B) + beta C) per batch,
 *    column-major, with every matrix's rows, cols, ld, batch count and
 *    strided batch offset from its cublasLtMatrixLayout_t; the epilogues
 *    DEFAULT, RELU, BIAS, RELU_BIAS, GELU, GELU_BIAS, where BIAS adds
 *    bias[row] (CUBLASLT_MATMUL_DESC_BIAS_POINTER, the length of D's rows,
 *    broadcast along the columns) before the activation, and GELU is the tanh
 *    approximation x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); C is not
 *    read when beta is 0, and C may be D (in place);
 *  - the descriptor, layout and preference calls, which only record their
 *    attributes, and cublasLtMatmulAlgoGetHeuristic, which checks that the
 *    shapes agree and offers one algorithm that needs no workspace.
 * Only 32F and 64F data are emulated (what the plugin uses); anything else,
 * and every attribute the plugin does not set, is refused with
 * CUBLAS_STATUS_NOT_SUPPORTED, so that a new use shows up here first.
 * Products are summed in double in the order k = 0, 1, ... (cuBLAS documents
 * no order); rounding to the data type happens once, at the store.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cublas_v2.h>

/* ---- element access --------------------------------------------------------- */

static int emu_type_ok(cudaDataType t) { return t == CUDA_R_32F || t == CUDA_R_64F; }

static double emu_load(const void *p, cudaDataType t, int64_t i) {
  return t == CUDA_R_64F ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static void emu_store(void *p, cudaDataType t, int64_t i, double v) {
  if (t == CUDA_R_64F)
    ((double *)p)[i] = v;
  else
    ((float *)p)[i] = (float)v;
}

/* op(M)(i, j) of a column-major matrix with leading dimension ld. */
static double emu_op(const void *m, cudaDataType t, int trans, int64_t ld, int64_t i, int64_t j) {
  return trans ? emu_load(m, t, j + i * ld) : emu_load(m, t, i + j * ld);
}

/* The scale type of a compute type: alpha and beta point to that. */
static double emu_scalar(const void *s, cudaDataType t) { return emu_load(s, t, 0); }

/* ---- cuBLAS GEMM ------------------------------------------------------------- */

static cublasStatus_t emu_gemm(cublasOperation_t transa, cublasOperation_t transb, int64_t m,
                               int64_t n, int64_t k, const void *alpha, const void *A,
                               cudaDataType Atype, int64_t lda, long long strideA, const void *B,
                               cudaDataType Btype, int64_t ldb, long long strideB,
                               const void *beta, void *C, cudaDataType Ctype, int64_t ldc,
                               long long strideC, int64_t batch) {
  if (!emu_type_ok(Atype) || Atype != Btype || Atype != Ctype) return CUBLAS_STATUS_NOT_SUPPORTED;
  const int ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N;
  if (m < 0 || n < 0 || k < 0 || batch < 0) return CUBLAS_STATUS_INVALID_VALUE;
  if (lda < (ta ? k : m) || ldb < (tb ? n : k) || ldc < m || lda < 1 || ldb < 1 || ldc < 1)
    return CUBLAS_STATUS_INVALID_VALUE;
  /* Scalars have the data type for the compute types the plugin uses (32F
   * and 64F, with TF32 inputs treated as 32F). */
  const double al = emu_scalar(alpha, Ctype), be = emu_scalar(beta, Ctype);
  for (int64_t b = 0; b < batch; b++) {
    const char *a = (const char *)A + (size_t)(b * strideA) * (Atype == CUDA_R_64F ? 8 : 4);
    const char *bb = (const char *)B + (size_t)(b * strideB) * (Btype == CUDA_R_64F ? 8 : 4);
    char *c = (char *)C + (size_t)(b * strideC) * (Ctype == CUDA_R_64F ? 8 : 4);
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < m; i++) {
        double s = 0.0;
        for (int64_t l = 0; l < k; l++)
          s += emu_op(a, Atype, ta, lda, i, l) * emu_op(bb, Btype, tb, ldb, l, j);
        double v = al * s;
        if (be != 0.0) v += be * emu_load(c, Ctype, i + j * ldc);
        emu_store(c, Ctype, i + j * ldc, v);
      }
  }
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const void *alpha, const void *A, cudaDataType Atype,
                                          int lda, long long int strideA, const void *B,
                                          cudaDataType Btype, int ldb, long long int strideB,
                                          const void *beta, void *C, cudaDataType Ctype, int ldc,
                                          long long int strideC, int batchCount,
                                          cublasComputeType_t computeType,
                                          cublasGemmAlgo_t algo) {
  (void)handle, (void)computeType, (void)algo;
  return emu_gemm(transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB,
                  beta, C, Ctype, ldc, strideC, batchCount);
}

cublasStatus_t cublasGemmStridedBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const void *alpha, const void *A, cudaDataType Atype, int64_t lda,
    long long int strideA, const void *B, cudaDataType Btype, int64_t ldb, long long int strideB,
    const void *beta, void *C, cudaDataType Ctype, int64_t ldc, long long int strideC,
    int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  (void)handle, (void)computeType, (void)algo;
  return emu_gemm(transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB,
                  beta, C, Ctype, ldc, strideC, batchCount);
}

cublasStatus_t cublasSscal(cublasHandle_t handle, int n, const float *alpha, float *x, int incx) {
  (void)handle;
  if (incx <= 0) return CUBLAS_STATUS_SUCCESS;
  for (int64_t i = 0; i < n; i++) x[i * incx] *= *alpha;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDscal(cublasHandle_t handle, int n, const double *alpha, double *x,
                           int incx) {
  (void)handle;
  if (incx <= 0) return CUBLAS_STATUS_SUCCESS;
  for (int64_t i = 0; i < n; i++) x[i * incx] *= *alpha;
  return CUBLAS_STATUS_SUCCESS;
}

/* ---- cuBLASLt descriptors ------------------------------------------------------ */

typedef struct emu_lt_desc {
  cublasComputeType_t compute;
  cudaDataType scale;
  int32_t transa, transb;
  uint32_t epilogue;
  const void *bias;
} emu_lt_desc;

typedef struct emu_lt_layout {
  cudaDataType type;
  uint64_t rows, cols;
  int64_t ld;
  int32_t count;
  int64_t stride;
} emu_lt_layout;

typedef struct emu_lt_pref {
  uint64_t max_workspace;
} emu_lt_pref;

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc,
                                        cublasComputeType_t computeType, cudaDataType_t scaleType) {
  if (!emu_type_ok(scaleType)) return CUBLAS_STATUS_NOT_SUPPORTED;
  emu_lt_desc *d = calloc(1, sizeof *d);
  if (d == NULL) return CUBLAS_STATUS_ALLOC_FAILED;
  d->compute = computeType;
  d->scale = scaleType;
  d->transa = d->transb = CUBLAS_OP_N;
  d->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  *matmulDesc = (cublasLtMatmulDesc_t)d;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc) {
  free(matmulDesc);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                              cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t sizeInBytes) {
  emu_lt_desc *d = (emu_lt_desc *)matmulDesc;
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA:
    case CUBLASLT_MATMUL_DESC_TRANSB:
      if (sizeInBytes != sizeof(int32_t)) return CUBLAS_STATUS_INVALID_VALUE;
      memcpy(attr == CUBLASLT_MATMUL_DESC_TRANSA ? &d->transa : &d->transb, buf, sizeof(int32_t));
      return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
      if (sizeInBytes != sizeof(uint32_t)) return CUBLAS_STATUS_INVALID_VALUE;
      memcpy(&d->epilogue, buf, sizeof(uint32_t));
      return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
      if (sizeInBytes != sizeof(void *)) return CUBLAS_STATUS_INVALID_VALUE;
      memcpy(&d->bias, buf, sizeof(void *));
      return CUBLAS_STATUS_SUCCESS;
    default:
      return CUBLAS_STATUS_NOT_SUPPORTED;
  }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
  if (!emu_type_ok(type)) return CUBLAS_STATUS_NOT_SUPPORTED;
  /* Column-major (the default order): ld covers a column. */
  if (ld < (int64_t)rows || ld < 1) return CUBLAS_STATUS_INVALID_VALUE;
  emu_lt_layout *l = calloc(1, sizeof *l);
  if (l == NULL) return CUBLAS_STATUS_ALLOC_FAILED;
  l->type = type;
  l->rows = rows;
  l->cols = cols;
  l->ld = ld;
  l->count = 1;
  *matLayout = (cublasLtMatrixLayout_t)l;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout) {
  free(matLayout);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void *buf, size_t sizeInBytes) {
  emu_lt_layout *l = (emu_lt_layout *)matLayout;
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
      if (sizeInBytes != sizeof(int32_t)) return CUBLAS_STATUS_INVALID_VALUE;
      memcpy(&l->count, buf, sizeof(int32_t));
      return l->count >= 1 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
      if (sizeInBytes != sizeof(int64_t)) return CUBLAS_STATUS_INVALID_VALUE;
      memcpy(&l->stride, buf, sizeof(int64_t));
      return CUBLAS_STATUS_SUCCESS;
    default:
      return CUBLAS_STATUS_NOT_SUPPORTED;
  }
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref) {
  emu_lt_pref *p = calloc(1, sizeof *p);
  if (p == NULL) return CUBLAS_STATUS_ALLOC_FAILED;
  *pref = (cublasLtMatmulPreference_t)p;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  free(pref);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void *buf, size_t sizeInBytes) {
  emu_lt_pref *p = (emu_lt_pref *)pref;
  switch (attr) {
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
      if (sizeInBytes != sizeof(uint64_t)) return CUBLAS_STATUS_INVALID_VALUE;
      memcpy(&p->max_workspace, buf, sizeof(uint64_t));
      return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
      /* Host memory has no alignment rule to emulate. */
      return sizeInBytes == sizeof(uint32_t) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    default:
      return CUBLAS_STATUS_NOT_SUPPORTED;
  }
}

/* ---- cuBLASLt matmul -------------------------------------------------------------- */

static int emu_epilogue_known(uint32_t e) {
  return e == CUBLASLT_EPILOGUE_DEFAULT || e == CUBLASLT_EPILOGUE_RELU ||
         e == CUBLASLT_EPILOGUE_BIAS || e == CUBLASLT_EPILOGUE_RELU_BIAS ||
         e == CUBLASLT_EPILOGUE_GELU || e == CUBLASLT_EPILOGUE_GELU_BIAS;
}

/* Whether the four layouts make one product: op(A) is D's rows x k, op(B)
 * is k x D's cols, C is D's shape, every batch count the same. */
static cublasStatus_t emu_lt_check(const emu_lt_desc *d, const emu_lt_layout *a,
                                   const emu_lt_layout *b, const emu_lt_layout *c,
                                   const emu_lt_layout *dd) {
  if (!emu_epilogue_known(d->epilogue)) return CUBLAS_STATUS_NOT_SUPPORTED;
  const uint64_t am = d->transa != CUBLAS_OP_N ? a->cols : a->rows;
  const uint64_t ak = d->transa != CUBLAS_OP_N ? a->rows : a->cols;
  const uint64_t bk = d->transb != CUBLAS_OP_N ? b->cols : b->rows;
  const uint64_t bn = d->transb != CUBLAS_OP_N ? b->rows : b->cols;
  if (am != dd->rows || bn != dd->cols || ak != bk || c->rows != dd->rows || c->cols != dd->cols)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (a->count != dd->count || b->count != dd->count || c->count != dd->count)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (a->type != dd->type || b->type != dd->type || c->type != dd->type)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t lightHandle,
                                              cublasLtMatmulDesc_t operationDesc,
                                              cublasLtMatrixLayout_t Adesc,
                                              cublasLtMatrixLayout_t Bdesc,
                                              cublasLtMatrixLayout_t Cdesc,
                                              cublasLtMatrixLayout_t Ddesc,
                                              cublasLtMatmulPreference_t preference,
                                              int requestedAlgoCount,
                                              cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
                                              int *returnAlgoCount) {
  (void)lightHandle, (void)preference;
  *returnAlgoCount = 0;
  if (requestedAlgoCount < 1) return CUBLAS_STATUS_INVALID_VALUE;
  cublasStatus_t st = emu_lt_check((const emu_lt_desc *)operationDesc, (const emu_lt_layout *)Adesc,
                                   (const emu_lt_layout *)Bdesc, (const emu_lt_layout *)Cdesc,
                                   (const emu_lt_layout *)Ddesc);
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  memset(&heuristicResultsArray[0], 0, sizeof heuristicResultsArray[0]);
  heuristicResultsArray[0].workspaceSize = 0;
  heuristicResultsArray[0].state = CUBLAS_STATUS_SUCCESS;
  heuristicResultsArray[0].wavesCount = 1.0f;
  *returnAlgoCount = 1;
  return CUBLAS_STATUS_SUCCESS;
}

static double emu_gelu_tanh(double x) {
  if (isinf(x)) return x > 0 ? x : 0.0;
  return 0.5 * x * (1.0 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                              const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
                              const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
                              const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
                              void *workspace, size_t workspaceSizeInBytes, cudaStream_t stream) {
  (void)lightHandle, (void)algo, (void)workspace, (void)workspaceSizeInBytes, (void)stream;
  const emu_lt_desc *d = (const emu_lt_desc *)computeDesc;
  const emu_lt_layout *la = (const emu_lt_layout *)Adesc, *lb = (const emu_lt_layout *)Bdesc;
  const emu_lt_layout *lc = (const emu_lt_layout *)Cdesc, *ld = (const emu_lt_layout *)Ddesc;
  cublasStatus_t st = emu_lt_check(d, la, lb, lc, ld);
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  const uint32_t e = d->epilogue;
  const int has_bias = e == CUBLASLT_EPILOGUE_BIAS || e == CUBLASLT_EPILOGUE_RELU_BIAS ||
                       e == CUBLASLT_EPILOGUE_GELU_BIAS;
  const int relu = e == CUBLASLT_EPILOGUE_RELU || e == CUBLASLT_EPILOGUE_RELU_BIAS;
  const int gelu = e == CUBLASLT_EPILOGUE_GELU || e == CUBLASLT_EPILOGUE_GELU_BIAS;
  if (has_bias && d->bias == NULL) return CUBLAS_STATUS_INVALID_VALUE;
  const cudaDataType t = ld->type;
  const size_t es = t == CUDA_R_64F ? 8 : 4;
  const double al = emu_scalar(alpha, d->scale), be = emu_scalar(beta, d->scale);
  const int ta = d->transa != CUBLAS_OP_N, tb = d->transb != CUBLAS_OP_N;
  const int64_t m = (int64_t)ld->rows, n = (int64_t)ld->cols;
  const int64_t k = (int64_t)(ta ? la->rows : la->cols);
  for (int64_t bt = 0; bt < ld->count; bt++) {
    const char *a = (const char *)A + (size_t)(bt * la->stride) * es;
    const char *b = (const char *)B + (size_t)(bt * lb->stride) * es;
    const char *c = (const char *)C + (size_t)(bt * lc->stride) * es;
    char *dd = (char *)D + (size_t)(bt * ld->stride) * es;
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < m; i++) {
        double s = 0.0;
        for (int64_t l = 0; l < k; l++)
          s += emu_op(a, t, ta, la->ld, i, l) * emu_op(b, t, tb, lb->ld, l, j);
        double v = al * s;
        if (be != 0.0) v += be * emu_load(c, t, i + j * lc->ld);
        if (has_bias) v += emu_load(d->bias, t, i);
        if (relu) v = v < 0.0 ? 0.0 : v;
        if (gelu) v = emu_gelu_tanh(v);
        emu_store(dd, t, i + j * ld->ld, v);
      }
  }
  return CUBLAS_STATUS_SUCCESS;
}
