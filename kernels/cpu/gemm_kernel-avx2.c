/*
 * The AVX2+FMA microkernel of the GEMM engine (gemm_kernel.h): a 6 x 16 tile
 * of C in 12 YMM registers. Each step of k loads two vectors of the B panel
 * and broadcasts the 6 values of the A panel's column: 12 FMAs for 2 loads
 * and 6 broadcasts. 12 accumulators + 2 B vectors + 1 broadcast = 15 of the
 * 16 YMM registers, and 12 independent FMAs cover the FMA latency (4-5
 * cycles) on the two FMA ports of Haswell and later cores and of Zen.
 *
 * Only the functions get the AVX2/FMA target (function attributes), so the
 * file compiles into a binary that runs on any x86-64; gemm.c calls it only
 * when the CPU and the OS support AVX2 and FMA.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "kernels/cpu/gemm_kernel.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define TARGET __attribute__((target("avx2,fma")))
#define MR 6
#define NR 16

/* The mask of the first n of 8 lanes (n may be <= 0 or >= 8). */
TARGET static inline __m256i lanes(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

#define STORE_ROW(i)                                                                   \
  if ((i) < rows) {                                                                    \
    float *ci = c + (int64_t)(i) * ldc;                                                \
    __m256 v0 = _mm256_mul_ps(va, acc##i##_0), v1 = _mm256_mul_ps(va, acc##i##_1);     \
    if (beta != 0.0f) {                                                                \
      v0 = _mm256_fmadd_ps(vb, _mm256_maskload_ps(ci, m0), v0);                        \
      v1 = _mm256_fmadd_ps(vb, _mm256_maskload_ps(ci + 8, m1), v1);                    \
    }                                                                                  \
    _mm256_maskstore_ps(ci, m0, v0);                                                   \
    _mm256_maskstore_ps(ci + 8, m1, v1);                                               \
  }

#define FMA_ROW(i)                                    \
  {                                                   \
    const __m256 ai = _mm256_broadcast_ss(ap + (i));  \
    acc##i##_0 = _mm256_fmadd_ps(ai, b0, acc##i##_0); \
    acc##i##_1 = _mm256_fmadd_ps(ai, b1, acc##i##_1); \
  }

#define DECL_ROW(i) __m256 acc##i##_0 = _mm256_setzero_ps(), acc##i##_1 = _mm256_setzero_ps();

#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)

TARGET static void kernel_6x16(int64_t kc, const float *restrict ap, const float *restrict bp,
                               float *c, int64_t ldc, int rows, int cols, float alpha,
                               float beta) {
  ROWS(DECL_ROW)
  for (int64_t p = 0; p < kc; p++) {
    const __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
    _mm_prefetch((const char *)(bp + 8 * NR), _MM_HINT_T0);
    ROWS(FMA_ROW)
    ap += MR;
    bp += NR;
  }
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
  const __m256i m0 = lanes(cols), m1 = lanes(cols - 8);
  ROWS(STORE_ROW)
}

/* Rows of op(A) into a panel of MR (ap[p * MR + i]). */
TARGET static void pack_a(int ta, const float *a, int64_t lda, int rows, int64_t kc, float *ap) {
  if (ta) {
    /* Each column of the panel is contiguous in A. */
    for (int64_t p = 0; p < kc; p++) {
      const float *s = a + p * lda;
      float *d = ap + p * MR;
      int i = 0;
      for (; i < rows; i++) d[i] = s[i];
      for (; i < MR; i++) d[i] = 0.0f;
    }
    return;
  }
  /* Rows are contiguous in A: read each row once, write with stride MR. */
  if (rows < MR) memset(ap, 0, (size_t)(kc * MR) * sizeof(float));
  for (int i = 0; i < rows; i++) {
    const float *s = a + i * lda;
    for (int64_t p = 0; p < kc; p++) ap[p * MR + i] = s[p];
  }
}

/* Columns of op(B) into a panel of NR (bp[p * NR + j]). */
TARGET static void pack_b(int tb, const float *b, int64_t ldb, int cols, int64_t kc, float *bp) {
  if (!tb) {
    const __m256i m0 = lanes(cols), m1 = lanes(cols - 8);
    for (int64_t p = 0; p < kc; p++) {
      const float *s = b + p * ldb;
      _mm256_storeu_ps(bp + p * NR, _mm256_maskload_ps(s, m0));
      _mm256_storeu_ps(bp + p * NR + 8, _mm256_maskload_ps(s + 8, m1));
    }
    return;
  }
  if (cols < NR) memset(bp, 0, (size_t)(kc * NR) * sizeof(float));
  for (int j = 0; j < cols; j++) {
    const float *s = b + j * ldb;
    for (int64_t p = 0; p < kc; p++) bp[p * NR + j] = s[p];
  }
}

const adnn_cpu_gemm_ukr adnn_cpu_gemm_ukr_avx2 = {MR, NR, kernel_6x16, pack_a, pack_b};

#else
const adnn_cpu_gemm_ukr adnn_cpu_gemm_ukr_avx2 = {0, 0, 0, 0, 0};
#endif
