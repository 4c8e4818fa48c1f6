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

/* The edge tile's store: masked loads and stores for the valid columns. */
#define STORE_ROW_MASKED(i)                                                            \
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

/* A whole row of 16 columns: plain loads and stores. On Zen3 VMASKMOVPS
 * stores are microcoded; with them on every tile, the store took a quarter
 * of the kernel's time at 1024^3 (perf annotate, issue 15). The arithmetic
 * is the same as the masked store's, so the bits do not depend on which one
 * a tile takes. */
#define STORE_ROW_FULL(i)                                                              \
  if ((i) < rows) {                                                                    \
    float *ci = c + (int64_t)(i) * ldc;                                                \
    __m256 v0 = _mm256_mul_ps(va, acc##i##_0), v1 = _mm256_mul_ps(va, acc##i##_1);     \
    if (beta != 0.0f) {                                                                \
      v0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci), v0);                               \
      v1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci + 8), v1);                           \
    }                                                                                  \
    _mm256_storeu_ps(ci, v0);                                                          \
    _mm256_storeu_ps(ci + 8, v1);                                                      \
  }

/* Fetches the tile's rows of C into L1 while the k loop runs (its two
 * lines: 16 floats may straddle a line boundary). */
#define PREFETCH_C(i)                                                  \
  if ((i) < rows) {                                                    \
    _mm_prefetch((const char *)(c + (int64_t)(i) * ldc), _MM_HINT_T0);      \
    _mm_prefetch((const char *)(c + (int64_t)(i) * ldc + 15), _MM_HINT_T0); \
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
  ROWS(PREFETCH_C)
  for (int64_t p = 0; p < kc; p++) {
    const __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
    _mm_prefetch((const char *)(bp + 8 * NR), _MM_HINT_T0);
    ROWS(FMA_ROW)
    ap += MR;
    bp += NR;
  }
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
  if (cols == NR) {
    ROWS(STORE_ROW_FULL)
    return;
  }
  const __m256i m0 = lanes(cols), m1 = lanes(cols - 8);
  ROWS(STORE_ROW_MASKED)
}

/* The edge tile of at most 8 columns (n = 49 leaves one column in the last
 * 16-column panel: the full kernel would spend 12 FMAs per step of k on it,
 * this one 6). Six accumulators, one per row, summed in the same order as in
 * kernel_6x16, so the bits are the same; six chains do not hide the FMA
 * latency as twelve do, but cost two thirds of the full kernel's time. */
#define FMA_HALF(i) acc##i = _mm256_fmadd_ps(_mm256_broadcast_ss(ap + (i)), b0, acc##i);
#define DECL_HALF(i) __m256 acc##i = _mm256_setzero_ps();
#define STORE_HALF(i)                                                          \
  if ((i) < rows) {                                                            \
    float *ci = c + (int64_t)(i) * ldc;                                        \
    __m256 v = _mm256_mul_ps(va, acc##i);                                      \
    if (full) {                                                                \
      if (beta != 0.0f) v = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci), v);       \
      _mm256_storeu_ps(ci, v);                                                 \
    } else {                                                                   \
      if (beta != 0.0f) v = _mm256_fmadd_ps(vb, _mm256_maskload_ps(ci, m0), v); \
      _mm256_maskstore_ps(ci, m0, v);                                          \
    }                                                                          \
  }

TARGET static void kernel_6x8(int64_t kc, const float *restrict ap, const float *restrict bp,
                              float *c, int64_t ldc, int rows, int cols, float alpha,
                              float beta) {
  ROWS(DECL_HALF)
  ROWS(PREFETCH_C)
  for (int64_t p = 0; p < kc; p++) {
    const __m256 b0 = _mm256_loadu_ps(bp);
    ROWS(FMA_HALF)
    ap += MR;
    bp += NR;
  }
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
  const __m256i m0 = lanes(cols);
  const int full = cols == 8;
  ROWS(STORE_HALF)
}

/* The two kernels again, reading untransposed A where it lies (row i of
 * the tile at a + i * lda) instead of from a packed panel: for a call
 * with few columns (n = 49 pixels of a 1x1 convolution at batch 1)
 * each A element is used by only a few microkernel calls, and packing it
 * cost a quarter of 2048 x 49 x 512 (perf, issue 15). The broadcasts are
 * the same loads from other addresses, and each element's sum is formed in
 * the same order as in the packed kernels, so the bits are the same. Rows
 * past `rows` read the last valid row again (their sums are not stored).
 * The first call on a strip meets its rows in L3 or memory: each row is
 * prefetched A_AHEAD floats ahead once per line. */
#define A_AHEAD 128
#define AROW_PTR(i) const float *a##i = a + (int64_t)((i) < rows ? (i) : rows - 1) * lda;
#define FMA_AROW(i)                                   \
  {                                                   \
    const __m256 ai = _mm256_broadcast_ss(a##i + p);  \
    acc##i##_0 = _mm256_fmadd_ps(ai, b0, acc##i##_0); \
    acc##i##_1 = _mm256_fmadd_ps(ai, b1, acc##i##_1); \
  }
#define FMA_AROW_HALF(i) acc##i = _mm256_fmadd_ps(_mm256_broadcast_ss(a##i + p), b0, acc##i);
#define PREFETCH_AROW(i) _mm_prefetch((const char *)(a##i + p0 + A_AHEAD), _MM_HINT_T0);

TARGET static void kernel_6x16_arows(int64_t kc, const float *a, int64_t lda,
                                     const float *restrict bp, float *c, int64_t ldc, int rows,
                                     int cols, float alpha, float beta) {
  ROWS(DECL_ROW)
  ROWS(PREFETCH_C)
  ROWS(AROW_PTR)
  for (int64_t p0 = 0; p0 < kc; p0 += 16) {
    const int64_t p1 = kc - p0 < 16 ? kc : p0 + 16;
    ROWS(PREFETCH_AROW)
    for (int64_t p = p0; p < p1; p++) {
      const __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
      _mm_prefetch((const char *)(bp + 8 * NR), _MM_HINT_T0);
      ROWS(FMA_AROW)
      bp += NR;
    }
  }
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
  if (cols == NR) {
    ROWS(STORE_ROW_FULL)
    return;
  }
  const __m256i m0 = lanes(cols), m1 = lanes(cols - 8);
  ROWS(STORE_ROW_MASKED)
}

TARGET static void kernel_6x8_arows(int64_t kc, const float *a, int64_t lda,
                                    const float *restrict bp, float *c, int64_t ldc, int rows,
                                    int cols, float alpha, float beta) {
  ROWS(DECL_HALF)
  ROWS(PREFETCH_C)
  ROWS(AROW_PTR)
  for (int64_t p0 = 0; p0 < kc; p0 += 16) {
    const int64_t p1 = kc - p0 < 16 ? kc : p0 + 16;
    ROWS(PREFETCH_AROW)
    for (int64_t p = p0; p < p1; p++) {
      const __m256 b0 = _mm256_loadu_ps(bp);
      ROWS(FMA_AROW_HALF)
      bp += NR;
    }
  }
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
  const __m256i m0 = lanes(cols);
  const int full = cols == 8;
  ROWS(STORE_HALF)
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
  /* Rows are contiguous in A. Eight columns at a time: the 6 rows' 8 floats
   * (zeros for missing rows) transposed as an 8 x 8 block with two zero
   * rows, each of the 8 result vectors giving one column's 6 floats (a
   * 4-float and a 2-float store, so nothing is written past the panel).
   * The scalar loop this replaces wrote with stride MR one float at a time
   * and took 16% of 256^3 (perf, issue 15). */
  int64_t p = 0;
  if (rows == MR) {
    const __m256 z = _mm256_setzero_ps();
    for (; p + 8 <= kc; p += 8) {
      const __m256 r0 = _mm256_loadu_ps(a + p), r1 = _mm256_loadu_ps(a + lda + p),
                   r2 = _mm256_loadu_ps(a + 2 * lda + p), r3 = _mm256_loadu_ps(a + 3 * lda + p),
                   r4 = _mm256_loadu_ps(a + 4 * lda + p), r5 = _mm256_loadu_ps(a + 5 * lda + p);
      /* t0 = r0[0] r1[0] r0[1] r1[1] | r0[4] r1[4] r0[5] r1[5], ... */
      const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1),
                   t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3),
                   t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
      /* u0 = column 0 rows 0-3 | column 4 rows 0-3, ... */
      const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee),
                   u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
      /* v0 = column 0 rows 4-5 (and two zeros) | column 4 rows 4-5, ... */
      const __m256 v0 = _mm256_shuffle_ps(t4, z, 0x44), v1 = _mm256_shuffle_ps(t4, z, 0xee),
                   v2 = _mm256_shuffle_ps(t5, z, 0x44), v3 = _mm256_shuffle_ps(t5, z, 0xee);
      float *d = ap + p * MR;
#define COL(q, u, v, hi)                                                              \
  _mm_storeu_ps(d + (q) * MR, hi ? _mm256_extractf128_ps(u, 1) : _mm256_castps256_ps128(u)); \
  _mm_storel_pi((__m64 *)(d + (q) * MR + 4),                                          \
                hi ? _mm256_extractf128_ps(v, 1) : _mm256_castps256_ps128(v));
      COL(0, u0, v0, 0) COL(1, u1, v1, 0) COL(2, u2, v2, 0) COL(3, u3, v3, 0)
      COL(4, u0, v0, 1) COL(5, u1, v1, 1) COL(6, u2, v2, 1) COL(7, u3, v3, 1)
#undef COL
    }
  } else {
    memset(ap, 0, (size_t)(kc * MR) * sizeof(float));
  }
  for (int i = 0; i < rows; i++) {
    const float *s = a + i * lda;
    for (int64_t q = p; q < kc; q++) ap[q * MR + i] = s[q];
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

/* Untransposed B over several panels: eight rows at a time, panel by
 * panel, so that each of the eight rows is read as one contiguous run
 * across the panels and each panel receives eight whole consecutive lines.
 * Packing panel by panel read one 64-byte run per row, each a row stride
 * apart: with an NCHW image's pixel count as ldb that is a new page per
 * row, and pack_b took a third of 64 x 3136 x 256 (perf, issue 15). */
TARGET static void pack_b_rows(const float *b, int64_t ldb, int64_t cols, int64_t kc, float *bp) {
  const int64_t full = cols / NR, tail = cols - full * NR;
  const __m256i m0 = lanes((int)tail), m1 = lanes((int)tail - 8);
  for (int64_t p0 = 0; p0 < kc; p0 += 8) {
    const int64_t p1 = kc - p0 < 8 ? kc : p0 + 8;
    for (int64_t q = 0; q < full; q++) {
      float *d = bp + q * kc * NR;
      for (int64_t p = p0; p < p1; p++) {
        const float *s = b + p * ldb + q * NR;
        _mm256_storeu_ps(d + p * NR, _mm256_loadu_ps(s));
        _mm256_storeu_ps(d + p * NR + 8, _mm256_loadu_ps(s + 8));
      }
    }
    if (tail) {
      float *d = bp + full * kc * NR;
      for (int64_t p = p0; p < p1; p++) {
        const float *s = b + p * ldb + full * NR;
        _mm256_storeu_ps(d + p * NR, _mm256_maskload_ps(s, m0));
        _mm256_storeu_ps(d + p * NR + 8, _mm256_maskload_ps(s + 8, m1));
      }
    }
  }
}

const adnn_cpu_gemm_ukr adnn_cpu_gemm_ukr_avx2 = {
    MR, NR, kernel_6x16, pack_a, pack_b, pack_b_rows, kernel_6x8, kernel_6x16_arows,
    kernel_6x8_arows};

#else
const adnn_cpu_gemm_ukr adnn_cpu_gemm_ukr_avx2 = {0, 0, 0, 0, 0, 0, 0, 0, 0};
#endif
