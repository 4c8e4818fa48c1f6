/*
 * The CPU plugin's public GEMM (row-major). F32 goes through adnn_cpu_sgemm
 * (kernels/cpu/gemm.h), which runs adnn's own engine or OpenBLAS per shape,
 * so that an OpenBLAS that misdetects the CPU (and runs SSE3 kernels) does
 * not make adnn_gemm slow; F64 calls OpenBLAS's cblas_dgemm. Batched GEMM is
 * a loop of single calls: each call is already multi-threaded, and Debian's
 * OpenBLAS 0.3.21 has no batched interface.
 */
#include <stddef.h>
#include "config.h"

#include <cblas.h>
#include <limits.h>

#include "backends/cpu/cpu_plugin.h"
#include "kernels/cpu/gemm.h"

static int fits_blasint(int64_t v) { return v <= (int64_t)INT_MAX; }

adnn_status adnn_cpu__gemm(adnn_plugin_context *ctx, const adnn_plugin_gemm_args *g) {
  (void)ctx;
  /* OpenBLAS as Debian builds it takes 32-bit integers. */
  if (!fits_blasint(g->m) || !fits_blasint(g->n) || !fits_blasint(g->k) ||
      !fits_blasint(g->lda) || !fits_blasint(g->ldb) || !fits_blasint(g->ldc))
    return adnn_cpu__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                "adnn_gemm: cpu backend: sizes and leading dimensions must be at "
                                "most %d for OpenBLAS (m=%lld n=%lld k=%lld lda=%lld ldb=%lld "
                                "ldc=%lld)",
                                INT_MAX, (long long)g->m, (long long)g->n, (long long)g->k,
                                (long long)g->lda, (long long)g->ldb, (long long)g->ldc);
  enum CBLAS_TRANSPOSE ta = g->ta == ADNN_TRANS ? CblasTrans : CblasNoTrans;
  enum CBLAS_TRANSPOSE tb = g->tb == ADNN_TRANS ? CblasTrans : CblasNoTrans;
  int m = (int)g->m, n = (int)g->n, k = (int)g->k;
  int lda = (int)g->lda, ldb = (int)g->ldb, ldc = (int)g->ldc;
  if (g->dtype == ADNN_DTYPE_F32) {
    const float *a = g->a, *b = g->b;
    float *c = g->c;
    const int isa = adnn_cpu__env.isa, tra = g->ta == ADNN_TRANS, trb = g->tb == ADNN_TRANS;
    /* The core's measured choice (adnn_cpu__gemm_impl_name's order), else the
     * dispatcher's heuristic. An older core's args end before impl. */
    const int32_t impl = g->struct_size >= offsetof(adnn_plugin_gemm_args, impl) + sizeof g->impl
                             ? g->impl
                             : 0;
    adnn_cpu_sgemm_impl which = adnn_cpu_sgemm_choose(isa, tra, trb, m, n, k);
    if (impl == 1 && adnn_cpu_sgemm_engine_isa(isa)) which = ADNN_CPU_SGEMM_ENGINE;
    else if (impl == 2 && adnn_cpu_sgemm_engine_isa(isa)) which = ADNN_CPU_SGEMM_OPENBLAS;
    for (int64_t i = 0; i < g->batch; i++)
      adnn_cpu_sgemm_with(which, isa, tra, trb, m, n, k, (float)g->alpha, a + i * g->stride_a, lda,
                          b + i * g->stride_b, ldb, (float)g->beta, c + i * g->stride_c, ldc, NULL,
                          NULL);
    return ADNN_STATUS_SUCCESS;
  }
  if (g->dtype == ADNN_DTYPE_F64) {
    const double *a = g->a, *b = g->b;
    double *c = g->c;
    for (int64_t i = 0; i < g->batch; i++)
      cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, g->alpha, a + i * g->stride_a, lda,
                  b + i * g->stride_b, ldb, g->beta, c + i * g->stride_c, ldc);
    return ADNN_STATUS_SUCCESS;
  }
  return adnn_cpu__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                              "adnn_gemm: cpu backend: dtype %d is not supported", (int)g->dtype);
}

const char *adnn_cpu__gemm_impl_name(adnn_plugin_context *ctx, adnn_dtype dtype, int32_t impl) {
  (void)ctx;
  /* F32 has two when the engine has a microkernel for this CPU: the engine
   * and OpenBLAS (whatever kernels OpenBLAS detected: a misdetecting OpenBLAS
   * simply loses the measurement). F64 has OpenBLAS alone. */
  if (dtype != ADNN_DTYPE_F32 || !adnn_cpu_sgemm_engine_isa(adnn_cpu__env.isa)) return NULL;
  return impl == 1 ? "engine" : impl == 2 ? "openblas" : NULL;
}
