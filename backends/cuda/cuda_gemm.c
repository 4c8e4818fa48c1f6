/*
 * GEMM through cuBLAS.
 *
 * adnn's matrices are row-major and cuBLAS's are column-major. A row-major
 * matrix with leading dimension ld is, read column-major with the same ld, its
 * transpose. So instead of C = op(A) op(B) we ask cuBLAS for
 *   C^T = op(B)^T op(A)^T,
 * an (n x m) result with k inner, first operand B, second A, and the transpose
 * flags and leading dimensions passed through unchanged. No data moves.
 */
#include "config.h"

#include <limits.h>

#include "cuda_internal.h"

static int fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

adnn_status adnn_cuda__gemm(adnn_plugin_context *ctx, const adnn_plugin_gemm_args *args) {
  cudaDataType_t data_type;
  cublasComputeType_t compute;
  float alpha_f = (float)args->alpha, beta_f = (float)args->beta;
  const void *alpha, *beta;
  switch (args->dtype) {
  case ADNN_DTYPE_F32:
    data_type = CUDA_R_32F;
    /* Plain FP32 by default, so results match the CPU within adnn's tolerance;
     * TF32 tensor cores only when the context explicitly allows them. */
    compute = (args->flags & ADNN_CONTEXT_ALLOW_TF32) ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                     : CUBLAS_COMPUTE_32F;
    alpha = &alpha_f;
    beta = &beta_f;
    break;
  case ADNN_DTYPE_F64:
    data_type = CUDA_R_64F;
    compute = CUBLAS_COMPUTE_64F;
    alpha = &args->alpha;
    beta = &args->beta;
    break;
  default:
    /* The plugin cannot call adnn_dtype_name (plugins never link the core). */
    return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                 "cuda: gemm supports f32 and f64, not dtype %d", (int)args->dtype);
  }
  /* Nothing to compute: an empty C (or no matrices) is left alone. */
  if (args->m == 0 || args->n == 0 || args->batch == 0) return ADNN_STATUS_SUCCESS;

  adnn_status status = adnn_cuda__context_enter(ctx);
  if (status != ADNN_STATUS_SUCCESS) return status;

  /* k == 0 means C = beta * C. The BLAS convention covers it, but adnn spells it
   * out instead of relying on every cuBLAS path to agree: a zero fill when beta
   * is 0 (so NaNs in C vanish, as documented), nothing when beta is 1, and a
   * scaling of every row otherwise. Rows of C are n elements at a pitch of ldc. */
  if (args->k == 0) {
    size_t esize = args->dtype == ADNN_DTYPE_F32 ? sizeof(float) : sizeof(double);
    for (int64_t i = 0; i < args->batch; i++) {
      char *c = (char *)args->c + (size_t)(i * args->stride_c) * esize;
      if (args->beta == 0.0) {
        cudaError_t e = cudaMemset2DAsync(c, (size_t)args->ldc * esize, 0, (size_t)args->n * esize,
                                          (size_t)args->m, ctx->stream);
        if (e != cudaSuccess)
          return adnn_cuda__fail_runtime(e, "cudaMemset2DAsync (gemm with k = 0)");
      } else if (args->beta != 1.0) {
        /* Scale each row with ?scal (one call when the rows are contiguous):
         * unlike geam with a zero-scaled second operand, scal never computes
         * 0 * C, so infinities in C scale as IEEE says. */
        int64_t rows = args->ldc == args->n ? 1 : args->m;
        int64_t len = args->ldc == args->n ? args->m * args->n : args->n;
        if (!fits_int(len))
          return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                       "cuda: gemm with k = 0 scales rows of at most %d elements",
                                       INT_MAX);
        for (int64_t r = 0; r < rows; r++) {
          char *row = c + (size_t)(r * args->ldc) * esize;
          cublasStatus_t e = args->dtype == ADNN_DTYPE_F32
                                 ? cublasSscal(ctx->cublas, (int)len, (const float *)beta,
                                               (float *)row, 1)
                                 : cublasDscal(ctx->cublas, (int)len, (const double *)beta,
                                               (double *)row, 1);
          if (e != CUBLAS_STATUS_SUCCESS)
            return adnn_cuda__fail_cublas(e, "cublasXscal (gemm with k = 0)");
        }
      }
    }
    return ADNN_STATUS_SUCCESS;
  }

  cublasOperation_t op_b = args->tb == ADNN_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t op_a = args->ta == ADNN_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasStatus_t err;
  /* The 32-bit interface covers almost every call; the _64 one exists for the
   * rest (cuBLAS 12 and newer), so no size the core accepts is refused. */
  if (fits_int(args->m) && fits_int(args->n) && fits_int(args->k) && fits_int(args->lda) &&
      fits_int(args->ldb) && fits_int(args->ldc) && fits_int(args->batch)) {
    err = cublasGemmStridedBatchedEx(
        ctx->cublas, op_b, op_a, (int)args->n, (int)args->m, (int)args->k, alpha, args->b,
        data_type, (int)args->ldb, (long long)args->stride_b, args->a, data_type, (int)args->lda,
        (long long)args->stride_a, beta, args->c, data_type, (int)args->ldc,
        (long long)args->stride_c, (int)args->batch, compute, CUBLAS_GEMM_DEFAULT);
  } else {
    err = cublasGemmStridedBatchedEx_64(
        ctx->cublas, op_b, op_a, args->n, args->m, args->k, alpha, args->b, data_type, args->ldb,
        (long long)args->stride_b, args->a, data_type, args->lda, (long long)args->stride_a, beta,
        args->c, data_type, args->ldc, (long long)args->stride_c, args->batch, compute,
        CUBLAS_GEMM_DEFAULT);
  }
  if (err != CUBLAS_STATUS_SUCCESS) {
    if (err == CUBLAS_STATUS_NOT_SUPPORTED || err == CUBLAS_STATUS_INVALID_VALUE)
      return adnn_cuda__host->fail(
          adnn_cuda__status_from_cublas(err),
          "cuda: cublasGemmStridedBatchedEx refused m=%lld n=%lld k=%lld lda=%lld ldb=%lld "
          "ldc=%lld batch=%lld: %s (%d)",
          (long long)args->m, (long long)args->n, (long long)args->k, (long long)args->lda,
          (long long)args->ldb, (long long)args->ldc, (long long)args->batch,
          cublasGetStatusName(err), (int)err);
    return adnn_cuda__fail_cublas(err, "cublasGemmStridedBatchedEx");
  }
  return ADNN_STATUS_SUCCESS;
}
