/*
 * The AVX-512 microkernel of the GEMM engine (gemm_kernel.h): a 12 x 32 tile
 * of C in 24 ZMM registers. Each step of k loads two vectors of the B panel
 * (32 columns) and broadcasts the 12 values of the A panel's column, 24 FMAs
 * for 2 loads and 12 broadcasts, which keeps both FMA ports of a Skylake-SP
 * or later core busy (24 accumulators cover the 4-cycle FMA latency times 2
 * ports three times over). 12 x 32 rather than 14 x 32 or 28 x 16: 24 + 2 B
 * vectors + 1 broadcast leave registers for the compiler, and 32 columns make
 * the B panel row a whole cache line pair.
 *
 * Only the functions get the AVX-512 target (function attributes), so this
 * file compiles into a binary that runs on any x86-64; gemm.c calls it only
 * when the CPU and the OS support AVX-512F.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "kernels/cpu/gemm_kernel.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f")))
#define MR 12
#define NR 32

/* The first n bits set (n <= 16). */
TARGET static inline __mmask16 lanes(int n) {
  return n >= 16 ? (__mmask16)0xffff : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1u);
}

/* One row of the tile: v = alpha * acc (+ beta * C), stored under the
 * column masks. */
#define STORE_ROW(i)                                                               \
  if ((i) < rows) {                                                                \
    float *ci = c + (int64_t)(i) * ldc;                                            \
    __m512 v0 = _mm512_mul_ps(va, acc##i##_0), v1 = _mm512_mul_ps(va, acc##i##_1); \
    if (beta != 0.0f) {                                                            \
      v0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, ci), v0);                 \
      v1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, ci + 16), v1);            \
    }                                                                              \
    _mm512_mask_storeu_ps(ci, m0, v0);                                             \
    _mm512_mask_storeu_ps(ci + 16, m1, v1);                                        \
  }

#define FMA_ROW(i)                                           \
  {                                                          \
    const __m512 ai = _mm512_set1_ps(ap[i]);                 \
    acc##i##_0 = _mm512_fmadd_ps(ai, b0, acc##i##_0);        \
    acc##i##_1 = _mm512_fmadd_ps(ai, b1, acc##i##_1);        \
  }

#define DECL_ROW(i) __m512 acc##i##_0 = _mm512_setzero_ps(), acc##i##_1 = _mm512_setzero_ps();

#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

TARGET static void kernel_12x32(int64_t kc, const float *restrict ap, const float *restrict bp,
                                float *c, int64_t ldc, int rows, int cols, float alpha,
                                float beta) {
  ROWS(DECL_ROW)
  for (int64_t p = 0; p < kc; p++) {
    const __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);
    /* The B panel is read once per tile; fetching it a few steps ahead hides
     * the L2 latency of its lines. */
    _mm_prefetch((const char *)(bp + 8 * NR), _MM_HINT_T0);
    ROWS(FMA_ROW)
    ap += MR;
    bp += NR;
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  const __mmask16 m0 = lanes(cols), m1 = lanes(cols - 16);
  ROWS(STORE_ROW)
}

/* Rows of op(A) into a panel of MR (ap[p * MR + i]). */
TARGET static void pack_a(int ta, const float *a, int64_t lda, int rows, int64_t kc, float *ap) {
  if (ta) {
    /* op(A)[i][p] = a[p * lda + i]: each column of the panel is contiguous
     * in A; one masked load and one 12-lane store per column. */
    const __mmask16 m = lanes(rows);
    for (int64_t p = 0; p < kc; p++)
      _mm512_mask_storeu_ps(ap + p * MR, (__mmask16)0x0fff, _mm512_maskz_loadu_ps(m, a + p * lda));
    return;
  }
  /* op(A)[i][p] = a[i * lda + p]: rows are contiguous. Sixteen columns at a
   * time: one vector load per row, then the 12 x 16 block is written column
   * by column through a small transposing scatter. */
  int64_t p = 0;
  if (rows == MR) {
    const __m512i idx = _mm512_setr_epi32(0, MR, 2 * MR, 3 * MR, 4 * MR, 5 * MR, 6 * MR, 7 * MR,
                                          8 * MR, 9 * MR, 10 * MR, 11 * MR, 12 * MR, 13 * MR,
                                          14 * MR, 15 * MR);
    for (; p + 16 <= kc; p += 16)
      for (int i = 0; i < MR; i++)
        _mm512_i32scatter_ps(ap + p * MR + i, idx, _mm512_loadu_ps(a + i * lda + p), 4);
  }
  for (; p < kc; p++) {
    float *d = ap + p * MR;
    int i = 0;
    for (; i < rows; i++) d[i] = a[i * lda + p];
    for (; i < MR; i++) d[i] = 0.0f;
  }
}

/* Columns of op(B) into a panel of NR (bp[p * NR + j]). */
TARGET static void pack_b(int tb, const float *b, int64_t ldb, int cols, int64_t kc, float *bp) {
  if (!tb) {
    /* op(B)[p][j] = b[p * ldb + j]: each row of the panel is contiguous. */
    const __mmask16 m0 = lanes(cols), m1 = lanes(cols - 16);
    for (int64_t p = 0; p < kc; p++) {
      const float *s = b + p * ldb;
      _mm512_storeu_ps(bp + p * NR, _mm512_maskz_loadu_ps(m0, s));
      _mm512_storeu_ps(bp + p * NR + 16, _mm512_maskz_loadu_ps(m1, s + 16));
    }
    return;
  }
  /* op(B)[p][j] = b[j * ldb + p]: columns are contiguous in B. */
  if (cols < NR) memset(bp, 0, (size_t)(kc * NR) * sizeof(float));
  int j = 0;
  const __m512i idx = _mm512_setr_epi32(0, NR, 2 * NR, 3 * NR, 4 * NR, 5 * NR, 6 * NR, 7 * NR,
                                        8 * NR, 9 * NR, 10 * NR, 11 * NR, 12 * NR, 13 * NR,
                                        14 * NR, 15 * NR);
  for (; j < cols; j++) {
    const float *s = b + j * ldb;
    int64_t p = 0;
    for (; p + 16 <= kc; p += 16) _mm512_i32scatter_ps(bp + p * NR + j, idx, _mm512_loadu_ps(s + p), 4);
    for (; p < kc; p++) bp[p * NR + j] = s[p];
  }
}

const adnn_cpu_gemm_ukr adnn_cpu_gemm_ukr_avx512 = {MR, NR, kernel_12x32, pack_a, pack_b, NULL, NULL, NULL, NULL};

#else
/* Not x86: no microkernel; gemm.c never selects it (the ISA is never AVX-512). */
const adnn_cpu_gemm_ukr adnn_cpu_gemm_ukr_avx512 = {0, 0, 0, 0, 0, 0, 0, 0, 0};
#endif
