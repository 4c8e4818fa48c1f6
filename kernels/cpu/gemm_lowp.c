/*
 * Low-precision GEMM blocks (gemm_lowp.h): the conversion packers, the
 * driver of one tile, the AVX-512 dot-product microkernels, the INT8
 * microkernels and the dispatch table.
 *
 * Float path (F16/BF16): each k block of B (kc x cols) is widened into the
 * F32 engine's B panels once per tile, each MR-row panel of A right before
 * the microkernel calls that use it, and the engine's microkernel
 * (gemm_kernel.h, through the adnn_cpu_gemm_ukr table, never its source)
 * accumulates into the F32 tile with beta = 1 after the first k block. The
 * widening is exact (every F16 and BF16 value is an F32 value), so the only
 * roundings are the F32 microkernel's. A tile of 384 x 256 with kc = 256
 * keeps the B block (256 KiB) in a 512 KiB L2 (the C tile is streamed one
 * 6-row panel at a time); each B element is widened once per 384 rows of C
 * and each A element once per 256 columns: about one widening per 200
 * multiply-adds. The widening is vector code where the source is
 * contiguous along the panel's lanes or along k, and gathered element by
 * element otherwise.
 *
 * AVX-512-BF16 path (BF16 only): the same tile and k blocks, but the panels
 * stay BF16, interleaved in pairs along k (pack_bf16_pairs), and the 12 x 32
 * microkernel issues one vdpbf16ps per 16 columns, row and pair of k: 32
 * multiply-adds per instruction where the F32 kernel's vfmadd231ps does 16,
 * with half the bytes packed. vdpbf16ps rounds each of its two additions to
 * nearest even, like the F32 kernel's fused multiply-adds (the products of
 * two BF16 values are exact in F32), so the F32 bound holds, but it reads
 * subnormal inputs as zero and flushes subnormal results. The packed panels
 * are therefore scanned for subnormal BF16 values (one vector pass over data
 * in L1), and a tile that has one is recomputed by the widening path
 * (f32_avx512), which keeps them; what remains is the flush of subnormal
 * partial sums, at most 2^-126 per addition (doc/numerics.md).
 *
 * INT8 paths. AVX-512-VNNI: A and B stay 8-bit, interleaved in quads along
 * k, and the 12 x 32 microkernel issues one vpdpbusd per 16 columns, row
 * and quad: four u8 x s8 products added into each 32-bit lane without
 * saturation. vpdpbusd wants an unsigned A, so an I8 A is packed as a + 128
 * (its sign bit flipped) and 128 * sum_k b[k][j] is subtracted from each
 * column after the k loop: every step is two's-complement arithmetic,
 * exact modulo 2^32, so the result is the exact sum wherever that fits in
 * I32 (which the core's K limit guarantees for the final sum; a partial sum
 * may wrap and unwrap on the way). Otherwise A and B are widened to int16
 * in pairs along k (a zero pads an odd k), so one vpmaddwd lane multiplies a
 * pair of A by a pair of B and sums the two exact products into 32 bits;
 * the accumulators are 32-bit adds, exact while K stays below the core's
 * bound (doc/numerics.md).
 *
 * The dispatch table lists every path the issue names, best first; the
 * first usable path for the ISA level (env->isa, which ADNN_CPU_SIMD caps)
 * and the features (env->features, whose AVX-512 extensions such a cap
 * clears) wins. The AMX, AVX512-FP16 and AVX-VNNI slots are placeholders:
 * no machine this project has run on so far has those instructions, so they
 * are never usable and adnn_cpu_lowp_choose passes over them.
 */
#include "config.h"

#include <string.h>

#include "kernels/common/float16.h"
#include "kernels/cpu/gemm_kernel.h"
#include "kernels/cpu/gemm_lowp.h"
#include "kernels/cpu/lowp.h"
#include "kernels/cpu/simd_isa.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define LOWP_X86 1
#else
#define LOWP_X86 0
#endif

#define RM ADNN_CPU_LOWP_RM
#define NC ADNN_CPU_LOWP_NC
#define KC ADNN_CPU_LOWP_KC

/* ---- widening F16/BF16 runs to F32 --------------------------------------- */

/* The conversions are kernels/cpu/lowp.c's (the same bits as
 * kernels/common/float16.h, shared with every low-precision op). The
 * FLOAT paths run AVX2 + F16C code at both the avx2 and avx512 levels. */
typedef void (*widen_fn)(adnn_dtype, const uint16_t *, int64_t, float *);

#if LOWP_X86
static void widen_run_avx2(adnn_dtype t, const uint16_t *src, int64_t n, float *dst) {
  adnn_cpu_lowp_to_f32(ADNN_CPU_ISA_AVX2, t, src, dst, (size_t)n);
}
#endif

/* One panel of W (MR or NR) lanes over kc steps: dst[p * W + q] = X(q, p)
 * for q < nq (zeros beyond), where X(q, p) is src[q * qs + p * ps]. A unit
 * stride along q widens each step's lanes straight into the panel; a unit
 * stride along p widens each lane's run into tmp first; anything else is
 * gathered. */
static void pack_float_panel(widen_fn widen, adnn_dtype t, const uint16_t *src, int64_t qs,
                             int64_t ps, int nq, int64_t kc, int W, float *dst, float *tmp) {
  if (qs == 1 || nq == 1) {
    for (int64_t p = 0; p < kc; p++) {
      widen(t, src + p * ps, nq, dst + p * W);
      for (int q = nq; q < W; q++) dst[p * W + q] = 0.0f;
    }
    return;
  }
  if (ps == 1) {
    for (int q = 0; q < nq; q++) {
      widen(t, src + q * qs, kc, tmp);
      for (int64_t p = 0; p < kc; p++) dst[p * W + q] = tmp[p];
    }
  } else {
    for (int q = 0; q < nq; q++)
      for (int64_t p = 0; p < kc; p++) {
        const uint16_t h = src[q * qs + p * ps];
        dst[p * W + q] = t == ADNN_DTYPE_F16 ? adnn_f16_to_f32(h) : adnn_bf16_to_f32(h);
      }
  }
  for (int64_t p = 0; p < kc; p++)
    for (int q = nq; q < W; q++) dst[p * W + q] = 0.0f;
}

#if LOWP_X86
/* 8 F16 or BF16 values at src widened to F32 (as adnn_cpu_lowp_to_f32). */
__attribute__((target("avx2,f16c"))) static inline __m256 widen8(adnn_dtype t,
                                                                  const uint16_t *src) {
  const __m128i h = _mm_loadu_si128((const __m128i *)src);
  if (t == ADNN_DTYPE_F16) return _mm256_cvtph_ps(h);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

/* pack_float_panel with the two contiguous cases inlined in vector code:
 * full panels whose lanes are contiguous (B row-major, A column-major) are
 * two or one loads per step; lanes contiguous along k (A row-major, B
 * transposed) are widened 8 steps at a time and scattered into the panel. */
__attribute__((target("avx2,f16c"))) static void pack_float_panel_avx2(
    widen_fn widen, adnn_dtype t, const uint16_t *src, int64_t qs, int64_t ps, int nq,
    int64_t kc, int W, float *dst, float *tmp) {
  if (qs == 1 && nq == W && W % 8 == 0) {
    for (int64_t p = 0; p < kc; p++)
      for (int q = 0; q < W; q += 8) _mm256_storeu_ps(dst + p * W + q, widen8(t, src + p * ps + q));
    return;
  }
  if (ps == 1 && qs != 1 && nq > 1) {
    for (int q = 0; q < nq; q++) {
      const uint16_t *row = src + q * qs;
      int64_t p = 0;
      for (; p + 8 <= kc; p += 8) {
        float v[8];
        _mm256_storeu_ps(v, widen8(t, row + p));
        for (int e = 0; e < 8; e++) dst[(p + e) * W + q] = v[e];
      }
      for (; p < kc; p++)
        dst[p * W + q] = t == ADNN_DTYPE_F16 ? adnn_f16_to_f32(row[p]) : adnn_bf16_to_f32(row[p]);
    }
    for (int64_t p = 0; p < kc; p++)
      for (int q = nq; q < W; q++) dst[p * W + q] = 0.0f;
    return;
  }
  pack_float_panel(widen, t, src, qs, ps, nq, kc, W, dst, tmp);
}
#endif

/* The float paths exist on x86 only (the F32 microkernels do). */
#if LOWP_X86
#define PACK_FLOAT_PANEL pack_float_panel_avx2
#else
#define PACK_FLOAT_PANEL pack_float_panel
#endif

static void float_block(const adnn_cpu_lowp_path *path, widen_fn widen, adnn_dtype at,
                        adnn_dtype bt, const void *a, int64_t a_rs, int64_t a_cs, const void *b,
                        int64_t b_rs, int64_t b_cs, int64_t rows, int64_t cols, int64_t k,
                        void *cv, int64_t ldc, void *scratch) {
  const adnn_cpu_gemm_ukr *u = path->ukr;
  const int mr = u->mr, nr = u->nr;
  float *c = cv;
  float *bp = scratch;         /* KC x NC (whole NR panels) */
  float *ap = bp + KC * NC;    /* one MR x KC panel */
  float *tmp = ap + (int64_t)mr * KC; /* one widened run of at most KC */
  const uint16_t *A = a, *B = b;
  if (k == 0) {
    for (int64_t i = 0; i < rows; i++) memset(c + i * ldc, 0, (size_t)cols * sizeof(float));
    return;
  }
  for (int64_t p0 = 0; p0 < k; p0 += KC) {
    const int64_t kc = k - p0 < KC ? k - p0 : KC;
    for (int64_t j = 0; j < cols; j += nr) {
      const int nq = (int)(cols - j < nr ? cols - j : nr);
      PACK_FLOAT_PANEL(widen, bt, B + p0 * b_rs + j * b_cs, b_cs, b_rs, nq, kc, nr,
                       bp + j * kc, tmp);
    }
    const float beta = p0 == 0 ? 0.0f : 1.0f;
    for (int64_t i = 0; i < rows; i += mr) {
      const int mi = (int)(rows - i < mr ? rows - i : mr);
      PACK_FLOAT_PANEL(widen, at, A + i * a_rs + p0 * a_cs, a_rs, a_cs, mi, kc, mr, ap, tmp);
      for (int64_t j = 0; j < cols; j += nr) {
        const int nq = (int)(cols - j < nr ? cols - j : nr);
        u->kernel(kc, ap, bp + j * kc, c + i * ldc + j, ldc, mi, nq, 1.0f, beta);
      }
    }
  }
}

#if LOWP_X86
static void float_block_avx2(const adnn_cpu_lowp_path *path, adnn_dtype at, adnn_dtype bt,
                             const void *a, int64_t a_rs, int64_t a_cs, const void *b,
                             int64_t b_rs, int64_t b_cs, int64_t rows, int64_t cols, int64_t k,
                             void *c, int64_t ldc, void *scratch) {
  float_block(path, widen_run_avx2, at, bt, a, a_rs, a_cs, b, b_rs, b_cs, rows, cols, k, c, ldc,
              scratch);
}
#endif

/* ---- INT8 ------------------------------------------------------------------ */

#define IMR 6
#define INR 16

static inline int16_t load_int8(adnn_dtype t, const void *base, int64_t off) {
  return t == ADNN_DTYPE_U8 ? (int16_t)((const uint8_t *)base)[off]
                            : (int16_t)((const int8_t *)base)[off];
}

/* One panel of W lanes over kc steps widened to int16 pairs along k:
 * dst[(p / 2) * 2W + 2q + p % 2] = X(q, p), zeros for q >= nq and for the
 * pad step of an odd kc. */
static void pack_int_panel(adnn_dtype t, const void *src, int64_t off, int64_t qs, int64_t ps,
                           int nq, int64_t kc, int W, int16_t *dst) {
  const int64_t kc2 = (kc + 1) / 2 * 2;
  for (int64_t p = 0; p < kc2; p++) {
    int16_t *d = dst + (p >> 1) * 2 * W + (p & 1);
    if (p >= kc) {
      for (int q = 0; q < W; q++) d[2 * q] = 0;
      continue;
    }
    const int64_t o = off + p * ps;
    int q = 0;
    for (; q < nq; q++) d[2 * q] = load_int8(t, src, o + q * qs);
    for (; q < W; q++) d[2 * q] = 0;
  }
}

/* The microkernel: C[i][j] (+)= sum over the kc2 / 2 pairs of
 * ap pair(i) . bp pair(j), i < rows, j < cols; accumulate = 0 overwrites. */
typedef void (*int_kernel_fn)(int64_t pairs, const int16_t *ap, const int16_t *bp, int32_t *c,
                              int64_t ldc, int rows, int cols, int accumulate);

static void int_kernel_base(int64_t pairs, const int16_t *ap, const int16_t *bp, int32_t *c,
                            int64_t ldc, int rows, int cols, int accumulate) {
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) {
      int32_t s = 0;
      for (int64_t p = 0; p < pairs; p++)
        s += (int32_t)ap[p * 2 * IMR + 2 * i] * bp[p * 2 * INR + 2 * j] +
             (int32_t)ap[p * 2 * IMR + 2 * i + 1] * bp[p * 2 * INR + 2 * j + 1];
      c[i * ldc + j] = accumulate ? c[i * ldc + j] + s : s;
    }
}

#if LOWP_X86
#define ITARGET __attribute__((target("avx2")))

ITARGET static inline __m256i int_lanes(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

#define IROW_STEP(i)                                                                       \
  {                                                                                        \
    int32_t pair;                                                                          \
    memcpy(&pair, ap + 2 * (i), sizeof pair);                                              \
    const __m256i av = _mm256_set1_epi32(pair);                                            \
    acc##i##_0 = _mm256_add_epi32(acc##i##_0, _mm256_madd_epi16(av, b0));                  \
    acc##i##_1 = _mm256_add_epi32(acc##i##_1, _mm256_madd_epi16(av, b1));                  \
  }

#define IROW_STORE(i)                                                                      \
  if ((i) < rows) {                                                                        \
    int32_t *ci = c + (int64_t)(i) * ldc;                                                  \
    __m256i v0 = acc##i##_0, v1 = acc##i##_1;                                              \
    if (accumulate) {                                                                      \
      v0 = _mm256_add_epi32(v0, _mm256_maskload_epi32(ci, m0));                            \
      v1 = _mm256_add_epi32(v1, _mm256_maskload_epi32(ci + 8, m1));                        \
    }                                                                                      \
    _mm256_maskstore_epi32(ci, m0, v0);                                                    \
    _mm256_maskstore_epi32(ci + 8, m1, v1);                                                \
  }

/* 6 x 16 tile in 12 YMM accumulators of 8 int32 lanes; per pair of k: two
 * B loads (16 columns of int16 pairs), six broadcasts of an A pair and 12
 * vpmaddwd + vpaddd. */
ITARGET static void int_kernel_avx2(int64_t pairs, const int16_t *ap, const int16_t *bp,
                                    int32_t *c, int64_t ldc, int rows, int cols,
                                    int accumulate) {
  __m256i acc0_0 = _mm256_setzero_si256(), acc0_1 = acc0_0, acc1_0 = acc0_0, acc1_1 = acc0_0;
  __m256i acc2_0 = acc0_0, acc2_1 = acc0_0, acc3_0 = acc0_0, acc3_1 = acc0_0;
  __m256i acc4_0 = acc0_0, acc4_1 = acc0_0, acc5_0 = acc0_0, acc5_1 = acc0_0;
  for (int64_t p = 0; p < pairs; p++) {
    const __m256i b0 = _mm256_loadu_si256((const __m256i *)bp);
    const __m256i b1 = _mm256_loadu_si256((const __m256i *)(bp + 16));
    IROW_STEP(0) IROW_STEP(1) IROW_STEP(2) IROW_STEP(3) IROW_STEP(4) IROW_STEP(5)
    ap += 2 * IMR;
    bp += 2 * INR;
  }
  const __m256i m0 = int_lanes(cols), m1 = int_lanes(cols - 8);
  IROW_STORE(0) IROW_STORE(1) IROW_STORE(2) IROW_STORE(3) IROW_STORE(4) IROW_STORE(5)
}
#endif

#if LOWP_X86
/* 16 bytes at p widened to 16 int16 (sign- or zero-extended by t). */
ITARGET static inline __m256i widen16(adnn_dtype t, const void *p) {
  const __m128i v = _mm_loadu_si128((const __m128i *)p);
  return t == ADNN_DTYPE_U8 ? _mm256_cvtepu8_epi16(v) : _mm256_cvtepi8_epi16(v);
}

/* pack_int_panel for W = IMR lanes that are contiguous along k (A
 * row-major, qs the row stride, ps = 1): per block of 16 k steps, each lane's
 * 16 bytes widened are 8 int16 pairs (dwords), and the 8 x 8 dword matrix of
 * lanes (6 real, 2 zero) by pairs is transposed by unpacks and lane
 * exchanges, so that each pair's 6 lanes are stored as 24 contiguous bytes
 * (a 16- and an 8-byte store). The remaining steps go through the scalar
 * packer's rules. */
ITARGET static void pack_int_kmajor_avx2(adnn_dtype t, const void *src, int64_t off, int64_t qs,
                                         int nq, int64_t kc, int16_t *dst) {
  const int64_t blocks = kc / 16;
  const char *base = (const char *)src + off;
  for (int64_t b = 0; b < blocks; b++) {
    __m256i r[8];
    for (int q = 0; q < 8; q++)
      r[q] = q < nq ? widen16(t, base + q * qs + b * 16) : _mm256_setzero_si256();
    const __m256i t0 = _mm256_unpacklo_epi32(r[0], r[1]), t1 = _mm256_unpackhi_epi32(r[0], r[1]);
    const __m256i t2 = _mm256_unpacklo_epi32(r[2], r[3]), t3 = _mm256_unpackhi_epi32(r[2], r[3]);
    const __m256i t4 = _mm256_unpacklo_epi32(r[4], r[5]), t5 = _mm256_unpackhi_epi32(r[4], r[5]);
    const __m256i t6 = _mm256_unpacklo_epi32(r[6], r[7]), t7 = _mm256_unpackhi_epi32(r[6], r[7]);
    const __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
    const __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
    const __m256i u4 = _mm256_unpacklo_epi64(t4, t6), u5 = _mm256_unpackhi_epi64(t4, t6);
    const __m256i u6 = _mm256_unpacklo_epi64(t5, t7), u7 = _mm256_unpackhi_epi64(t5, t7);
    /* g[j]: pair j of the block, lanes 0..7. */
    const __m256i g[8] = {_mm256_permute2x128_si256(u0, u4, 0x20),
                          _mm256_permute2x128_si256(u1, u5, 0x20),
                          _mm256_permute2x128_si256(u2, u6, 0x20),
                          _mm256_permute2x128_si256(u3, u7, 0x20),
                          _mm256_permute2x128_si256(u0, u4, 0x31),
                          _mm256_permute2x128_si256(u1, u5, 0x31),
                          _mm256_permute2x128_si256(u2, u6, 0x31),
                          _mm256_permute2x128_si256(u3, u7, 0x31)};
    int16_t *d = dst + b * 8 * 2 * IMR;
    for (int j = 0; j < 8; j++) {
      _mm_storeu_si128((__m128i *)(d + j * 2 * IMR), _mm256_castsi256_si128(g[j]));
      _mm_storel_epi64((__m128i *)(d + j * 2 * IMR + 8), _mm256_extracti128_si256(g[j], 1));
    }
  }
  if (blocks * 16 < kc)
    pack_int_panel(t, src, off + blocks * 16, qs, 1, nq, kc - blocks * 16, IMR,
                   dst + blocks * 8 * 2 * IMR);
}

/* pack_int_panel for W = INR = 16 full lanes contiguous along the lanes (B
 * row-major: qs = 1, ps the row stride): each pair of k rows is two 16-byte
 * loads widened and interleaved by 16-bit unpacks and a lane exchange. */
ITARGET static void pack_int_lanes16_avx2(adnn_dtype t, const void *src, int64_t off,
                                          int64_t ps, int64_t kc, int16_t *dst) {
  const char *base = (const char *)src + off;
  for (int64_t p = 0; p < kc; p += 2) {
    const __m256i lo = widen16(t, base + p * ps);
    const __m256i hi = p + 1 < kc ? widen16(t, base + (p + 1) * ps) : _mm256_setzero_si256();
    const __m256i a = _mm256_unpacklo_epi16(lo, hi), b = _mm256_unpackhi_epi16(lo, hi);
    int16_t *d = dst + (p >> 1) * 2 * INR;
    _mm256_storeu_si256((__m256i *)d, _mm256_permute2x128_si256(a, b, 0x20));
    _mm256_storeu_si256((__m256i *)(d + 16), _mm256_permute2x128_si256(a, b, 0x31));
  }
}
#endif

/* The packers of int_block: the vector ones where the layout and the ISA
 * allow (vec: the AVX2 block), else pack_int_panel. */
static void pack_int_a(int vec, adnn_dtype t, const void *src, int64_t off, int64_t qs,
                       int64_t ps, int nq, int64_t kc, int16_t *dst) {
#if LOWP_X86
  if (vec && ps == 1 && kc >= 16) {
    pack_int_kmajor_avx2(t, src, off, qs, nq, kc, dst);
    return;
  }
#endif
  (void)vec;
  pack_int_panel(t, src, off, qs, ps, nq, kc, IMR, dst);
}

static void pack_int_b(int vec, adnn_dtype t, const void *src, int64_t off, int64_t qs,
                       int64_t ps, int nq, int64_t kc, int16_t *dst) {
#if LOWP_X86
  if (vec && qs == 1 && nq == INR) {
    pack_int_lanes16_avx2(t, src, off, ps, kc, dst);
    return;
  }
#endif
  (void)vec;
  pack_int_panel(t, src, off, qs, ps, nq, kc, INR, dst);
}

static void int_block(int_kernel_fn kernel, int vec, adnn_dtype at, adnn_dtype bt,
                      const void *a, int64_t a_rs, int64_t a_cs, const void *b, int64_t b_rs,
                      int64_t b_cs, int64_t rows, int64_t cols, int64_t k, void *cv, int64_t ldc,
                      void *scratch) {
  int32_t *c = cv;
  int16_t *bp = scratch;          /* KC x NC */
  int16_t *ap = bp + KC * NC;     /* one IMR x KC panel */
  if (k == 0) {
    for (int64_t i = 0; i < rows; i++) memset(c + i * ldc, 0, (size_t)cols * sizeof(int32_t));
    return;
  }
  for (int64_t p0 = 0; p0 < k; p0 += KC) {
    const int64_t kc = k - p0 < KC ? k - p0 : KC, kc2 = (kc + 1) / 2 * 2;
    for (int64_t j = 0; j < cols; j += INR) {
      const int nq = (int)(cols - j < INR ? cols - j : INR);
      pack_int_b(vec, bt, b, p0 * b_rs + j * b_cs, b_cs, b_rs, nq, kc, bp + j * kc2);
    }
    for (int64_t i = 0; i < rows; i += IMR) {
      const int mi = (int)(rows - i < IMR ? rows - i : IMR);
      pack_int_a(vec, at, a, i * a_rs + p0 * a_cs, a_rs, a_cs, mi, kc, ap);
      for (int64_t j = 0; j < cols; j += INR) {
        const int nq = (int)(cols - j < INR ? cols - j : INR);
        kernel(kc2 / 2, ap, bp + j * kc2, c + i * ldc + j, ldc, mi, nq, p0 != 0);
      }
    }
  }
}

static void int_block_base(const adnn_cpu_lowp_path *path, adnn_dtype at, adnn_dtype bt,
                           const void *a, int64_t a_rs, int64_t a_cs, const void *b, int64_t b_rs,
                           int64_t b_cs, int64_t rows, int64_t cols, int64_t k, void *c,
                           int64_t ldc, void *scratch) {
  (void)path;
  int_block(int_kernel_base, 0, at, bt, a, a_rs, a_cs, b, b_rs, b_cs, rows, cols, k, c, ldc,
            scratch);
}

#if LOWP_X86
static void int_block_avx2(const adnn_cpu_lowp_path *path, adnn_dtype at, adnn_dtype bt,
                           const void *a, int64_t a_rs, int64_t a_cs, const void *b, int64_t b_rs,
                           int64_t b_cs, int64_t rows, int64_t cols, int64_t k, void *c,
                           int64_t ldc, void *scratch) {
  (void)path;
  int_block(int_kernel_avx2, 1, at, bt, a, a_rs, a_cs, b, b_rs, b_cs, rows, cols, k, c, ldc,
            scratch);
}
#endif

/* ---- AVX-512 dot-product paths (AVX-512-BF16, AVX-512-VNNI) --------------- */

/* The compilers that know the two extensions' intrinsics and target names. */
#if LOWP_X86 && ((defined(__clang__) && __clang_major__ >= 9) || \
                 (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 10))
#define LOWP_DOT 1
#else
#define LOWP_DOT 0
#endif

#define DMR 12 /* rows of C in one microkernel tile */
#define DNR 32 /* columns: two ZMM of 16 lanes */

/* Generic packer of the dot-product panels, whose groups of E consecutive
 * k steps of one lane fill 4 bytes: for elements of `es` bytes (2: BF16
 * pairs, E = 2; 1: byte quads, E = 4) dst[(g * W + q) * E + e] =
 * X(q, g E + e), zero for q >= nq and for the pad steps past kc, where
 * X(q, p) is the element at src + (q * qs + p * ps) * es. flip is XORed into
 * every byte read (0x80 turns an I8 into a + 128), never into the padding's
 * zeros. */
static void pack_dot_generic(const void *src, int es, int E, int64_t qs, int64_t ps, int nq,
                             int64_t kc, int W, uint8_t flip, void *dst) {
  const int64_t groups = (kc + E - 1) / E;
  for (int64_t g = 0; g < groups; g++)
    for (int q = 0; q < W; q++)
      for (int e = 0; e < E; e++) {
        const int64_t p = g * E + e, o = (g * W + q) * E + e;
        const int real = q < nq && p < kc;
        if (es == 2)
          ((uint16_t *)dst)[o] = real ? ((const uint16_t *)src)[q * qs + p * ps] : 0;
        else
          ((uint8_t *)dst)[o] = real ? (uint8_t)(((const uint8_t *)src)[q * qs + p * ps] ^ flip) : 0;
      }
}

/* A panel whose lanes are contiguous along k (A row-major): each group of E
 * steps of a lane is one 4-byte copy; the last group of an odd kc (kc not a
 * multiple of E) and the lanes past nq go through the generic packer's
 * rules. */
static void pack_dot_kmajor(const void *src, int es, int E, int64_t qs, int nq, int64_t kc,
                            int W, uint8_t flip, void *dst) {
  const int64_t full = kc / E;
  const uint32_t flip4 = 0x01010101u * flip;
  uint32_t *d = dst;
  for (int q = 0; q < nq; q++) {
    const char *row = (const char *)src + q * qs * es;
    for (int64_t g = 0; g < full; g++) {
      uint32_t v;
      memcpy(&v, row + g * 4, 4);
      d[g * W + q] = v ^ flip4;
    }
  }
  for (int q = nq; q < W; q++)
    for (int64_t g = 0; g < full; g++) d[g * W + q] = 0;
  if (full * E < kc)
    pack_dot_generic((const char *)src + full * E * es, es, E, qs, 1, nq, kc - full * E, W, flip,
                     d + full * W);
}

#if LOWP_DOT
#define BTARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#define VTARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

/* pack_dot_kmajor for a whole panel of W = DMR or DNR lanes (A row-major, or
 * a transposed B), 16 groups at a time for each block of up to 16 lanes:
 * the lanes' next 64 bytes (16 groups of 4 bytes each) are up to 16 ZMM of
 * 16 dwords, transposed as a 16 x 16 dword matrix (zero rows for a short
 * block) by three rounds of unpacks and lane shuffles, and each group's
 * dwords stored with a mask (the stores of consecutive groups abut). Where
 * the scalar copy moved one dword per load and store, this moves 16. */
__attribute__((target("avx512f"))) static void pack_dot_kmajor_avx512(const void *src, int es,
                                                                     int E, int64_t qs,
                                                                     int64_t kc, int W,
                                                                     uint8_t flip, void *dst) {
  const int64_t full = kc / E, chunks = full / 16;
  const __m512i flipv = _mm512_set1_epi32((int)(0x01010101u * flip));
  const __m512i zero = _mm512_setzero_si512();
  uint32_t *d = dst;
  for (int l0 = 0; l0 < W; l0 += 16) {
    const int lanes = W - l0 < 16 ? W - l0 : 16;
    const __mmask16 m = (__mmask16)((1u << lanes) - 1);
    for (int64_t g0 = 0; g0 < chunks * 16; g0 += 16) {
      __m512i r[16];
      for (int q = 0; q < lanes; q++)
        r[q] = _mm512_xor_si512(
            _mm512_loadu_si512((const char *)src + ((l0 + q) * qs * es) + g0 * 4), flipv);
      for (int q = lanes; q < 16; q++) r[q] = zero;
      __m512i t[16], u[16];
      for (int q = 0; q < 16; q += 2) {
        t[q] = _mm512_unpacklo_epi32(r[q], r[q + 1]);
        t[q + 1] = _mm512_unpackhi_epi32(r[q], r[q + 1]);
      }
      /* u[4b + c] holds, in each 128-bit lane L, lanes 4b..4b+3 of group 4L + c. */
      for (int b = 0; b < 4; b++) {
        u[4 * b + 0] = _mm512_unpacklo_epi64(t[4 * b], t[4 * b + 2]);
        u[4 * b + 1] = _mm512_unpackhi_epi64(t[4 * b], t[4 * b + 2]);
        u[4 * b + 2] = _mm512_unpacklo_epi64(t[4 * b + 1], t[4 * b + 3]);
        u[4 * b + 3] = _mm512_unpackhi_epi64(t[4 * b + 1], t[4 * b + 3]);
      }
      uint32_t *o = d + g0 * W + l0;
      for (int c = 0; c < 4; c++) {
        const __m512i v0 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x88);
        const __m512i v1 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xdd);
        const __m512i w0 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x88);
        const __m512i w1 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xdd);
        /* Groups c, c + 4, c + 8, c + 12 of this chunk. */
        _mm512_mask_storeu_epi32(o + c * W, m, _mm512_shuffle_i32x4(v0, w0, 0x88));
        _mm512_mask_storeu_epi32(o + (c + 4) * W, m, _mm512_shuffle_i32x4(v1, w1, 0x88));
        _mm512_mask_storeu_epi32(o + (c + 8) * W, m, _mm512_shuffle_i32x4(v0, w0, 0xdd));
        _mm512_mask_storeu_epi32(o + (c + 12) * W, m, _mm512_shuffle_i32x4(v1, w1, 0xdd));
      }
    }
  }
  /* The remaining groups (and an incomplete last one) as pack_dot_kmajor. */
  const int64_t done = chunks * 16 * E;
  if (done < kc)
    pack_dot_kmajor((const char *)src + done * es, es, E, qs, W, kc - done, W, flip,
                    d + chunks * 16 * W);
}

/* The mask of the first n of 16 lanes (n <= 0: none, n >= 16: all): the
 * two halves of a 32-column tile's row are lanes16(cols), lanes16(cols - 16). */
static inline __mmask16 lanes16(int n) {
  return n >= 16 ? (__mmask16)0xffff : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}

/* ---- BF16 pairs ---- */

/* Pair panels of W <= 32 lanes that are contiguous along the lanes (B
 * row-major, A column-major): two rows of k, loaded with a mask, are
 * interleaved by one vpermt2w per 16 lanes. */
BTARGET static void pack_bf16_lanes(const uint16_t *src, int64_t ps, int nq, int64_t kc, int W,
                                    uint16_t *dst) {
  static const uint16_t lo[32] = {0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39,
                                  8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  const __m512i ilo = _mm512_loadu_si512(lo);
  const __m512i ihi = _mm512_add_epi16(ilo, _mm512_set1_epi16(16));
  const __mmask32 m = nq >= 32 ? 0xffffffffu : (1u << nq) - 1;
  /* W = 12 stores 24 of lo's 32 values; W = 32 both halves whole. */
  const __mmask32 mlo = W >= 16 ? 0xffffffffu : (1u << (2 * W)) - 1;
  const int64_t pairs = (kc + 1) / 2;
  for (int64_t g = 0; g < pairs; g++) {
    const __m512i r0 = _mm512_maskz_loadu_epi16(m, src + 2 * g * ps);
    const __m512i r1 = 2 * g + 1 < kc ? _mm512_maskz_loadu_epi16(m, src + (2 * g + 1) * ps)
                                      : _mm512_setzero_si512();
    uint16_t *d = dst + g * 2 * W;
    _mm512_mask_storeu_epi16(d, mlo, _mm512_permutex2var_epi16(r0, ilo, r1));
    if (W > 16) _mm512_storeu_si512(d + 32, _mm512_permutex2var_epi16(r0, ihi, r1));
  }
}

static void pack_bf16_panel(const uint16_t *src, int64_t qs, int64_t ps, int nq, int64_t kc,
                            int W, uint16_t *dst) {
  if (qs == 1 || nq == 1)
    pack_bf16_lanes(src, ps, nq, kc, W, dst);
  else if (ps == 1 && nq == W)
    pack_dot_kmajor_avx512(src, 2, 2, qs, kc, W, 0, dst);
  else if (ps == 1)
    pack_dot_kmajor(src, 2, 2, qs, nq, kc, W, 0, dst);
  else
    pack_dot_generic(src, 2, 2, qs, ps, nq, kc, W, 0, dst);
}

/* 1 when one of the n BF16 values at p is subnormal (exponent field 0,
 * fraction not 0): vdpbf16ps would read it as zero. */
BTARGET static int bf16_any_subnormal(const uint16_t *p, int64_t n) {
  const __m512i expo = _mm512_set1_epi16(0x7f80), frac = _mm512_set1_epi16(0x007f);
  __mmask32 any = 0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512i v = _mm512_loadu_si512(p + i);
    any |= _mm512_test_epi16_mask(v, frac) & ~_mm512_test_epi16_mask(v, expo);
  }
  int tail = 0;
  for (; i < n; i++) tail |= (p[i] & 0x7f80) == 0 && (p[i] & 0x7f) != 0;
  return any != 0 || tail;
}

#define BF_ROW(i)                                                                           \
  {                                                                                         \
    uint32_t pair;                                                                          \
    memcpy(&pair, ap + 2 * (i), sizeof pair);                                               \
    const __m512bh av = (__m512bh)_mm512_set1_epi32((int)pair);                             \
    c##i##_0 = _mm512_dpbf16_ps(c##i##_0, av, b0);                                          \
    c##i##_1 = _mm512_dpbf16_ps(c##i##_1, av, b1);                                          \
  }

#define BF_LOAD(i)                                                                          \
  __m512 c##i##_0 = _mm512_setzero_ps(), c##i##_1 = c##i##_0;                               \
  if (accumulate && (i) < rows) {                                                           \
    c##i##_0 = _mm512_maskz_loadu_ps(m0, c + (int64_t)(i) * ldc);                           \
    c##i##_1 = _mm512_maskz_loadu_ps(m1, c + (int64_t)(i) * ldc + 16);                      \
  }

#define BF_STORE(i)                                                                         \
  if ((i) < rows) {                                                                         \
    _mm512_mask_storeu_ps(c + (int64_t)(i) * ldc, m0, c##i##_0);                            \
    _mm512_mask_storeu_ps(c + (int64_t)(i) * ldc + 16, m1, c##i##_1);                       \
  }

/* C[i][j] (+)= sum over the pairs of ap pair(i) . bp pair(j) for i < rows,
 * j < cols: 24 ZMM accumulators; per pair two B loads, 12 broadcasts of an
 * A pair, 24 vdpbf16ps. A partial sum from an earlier k block is loaded
 * into the accumulators, so the sum stays one chain of roundings. */
BTARGET static void bf16_kernel_12x32(int64_t pairs, const uint16_t *ap, const uint16_t *bp,
                                      float *c, int64_t ldc, int rows, int cols,
                                      int accumulate) {
  const __mmask16 m0 = lanes16(cols), m1 = lanes16(cols - 16);
  BF_LOAD(0) BF_LOAD(1) BF_LOAD(2) BF_LOAD(3) BF_LOAD(4) BF_LOAD(5)
  BF_LOAD(6) BF_LOAD(7) BF_LOAD(8) BF_LOAD(9) BF_LOAD(10) BF_LOAD(11)
  for (int64_t p = 0; p < pairs; p++) {
    const __m512bh b0 = (__m512bh)_mm512_loadu_si512(bp);
    const __m512bh b1 = (__m512bh)_mm512_loadu_si512(bp + 32);
    BF_ROW(0) BF_ROW(1) BF_ROW(2) BF_ROW(3) BF_ROW(4) BF_ROW(5)
    BF_ROW(6) BF_ROW(7) BF_ROW(8) BF_ROW(9) BF_ROW(10) BF_ROW(11)
    ap += 2 * DMR;
    bp += 2 * DNR;
  }
  BF_STORE(0) BF_STORE(1) BF_STORE(2) BF_STORE(3) BF_STORE(4) BF_STORE(5)
  BF_STORE(6) BF_STORE(7) BF_STORE(8) BF_STORE(9) BF_STORE(10) BF_STORE(11)
}

/* The tile: B's k block packed into pair panels (KC x NC BF16, 128 KiB),
 * each 12-row A panel right before its 8 microkernel calls. Scratch as the
 * float path's (which is larger), so that a tile with a subnormal operand
 * can be recomputed by float_block in the same buffer. */
static void bf16_block_avx512(const adnn_cpu_lowp_path *path, adnn_dtype at, adnn_dtype bt,
                              const void *a, int64_t a_rs, int64_t a_cs, const void *b,
                              int64_t b_rs, int64_t b_cs, int64_t rows, int64_t cols, int64_t k,
                              void *cv, int64_t ldc, void *scratch) {
  float *c = cv;
  uint16_t *bp = scratch;     /* KC x NC, whole DNR panels */
  uint16_t *ap = bp + KC * NC; /* one DMR x KC panel */
  const uint16_t *A = a, *B = b;
  if (k == 0) {
    for (int64_t i = 0; i < rows; i++) memset(c + i * ldc, 0, (size_t)cols * sizeof(float));
    return;
  }
  for (int64_t p0 = 0; p0 < k; p0 += KC) {
    const int64_t kc = k - p0 < KC ? k - p0 : KC, kc2 = (kc + 1) / 2 * 2;
    const int64_t panels = (cols + DNR - 1) / DNR;
    for (int64_t j = 0; j < cols; j += DNR) {
      const int nq = (int)(cols - j < DNR ? cols - j : DNR);
      pack_bf16_panel(B + p0 * b_rs + j * b_cs, b_cs, b_rs, nq, kc, DNR, bp + j * kc2);
    }
    if (bf16_any_subnormal(bp, panels * DNR * kc2)) goto widen;
    for (int64_t i = 0; i < rows; i += DMR) {
      const int mi = (int)(rows - i < DMR ? rows - i : DMR);
      pack_bf16_panel(A + i * a_rs + p0 * a_cs, a_rs, a_cs, mi, kc, DMR, ap);
      if (bf16_any_subnormal(ap, DMR * kc2)) goto widen;
      for (int64_t j = 0; j < cols; j += DNR) {
        const int nq = (int)(cols - j < DNR ? cols - j : DNR);
        bf16_kernel_12x32(kc2 / 2, ap, bp + j * kc2, c + i * ldc + j, ldc, mi, nq, p0 != 0);
      }
    }
  }
  return;
widen:
  float_block(path, widen_run_avx2, at, bt, a, a_rs, a_cs, b, b_rs, b_cs, rows, cols, k, c, ldc,
              scratch);
}

/* ---- byte quads (VNNI) ---- */

/* Quad panels of 32 lanes contiguous along the lanes (B row-major): four
 * rows of k (masked byte loads, zeros past kc) interleaved by two rounds of
 * unpacks within 128-bit halves and one exchange of halves. */
VTARGET static void pack_i8_lanes32(const int8_t *src, int64_t ps, int nq, int64_t kc,
                                    int8_t *dst) {
  const __mmask32 m = nq >= 32 ? 0xffffffffu : (1u << nq) - 1;
  const int64_t quads = (kc + 3) / 4;
  for (int64_t g = 0; g < quads; g++) {
    __m256i r[4];
    for (int e = 0; e < 4; e++)
      r[e] = 4 * g + e < kc ? _mm256_maskz_loadu_epi8(m, src + (4 * g + e) * ps)
                            : _mm256_setzero_si256();
    const __m256i t01l = _mm256_unpacklo_epi8(r[0], r[1]), t01h = _mm256_unpackhi_epi8(r[0], r[1]);
    const __m256i t23l = _mm256_unpacklo_epi8(r[2], r[3]), t23h = _mm256_unpackhi_epi8(r[2], r[3]);
    /* q0 = lanes 0-3 | 16-19, q1 = 4-7 | 20-23, q2 = 8-11 | 24-27, q3 = 12-15 | 28-31. */
    const __m256i q0 = _mm256_unpacklo_epi16(t01l, t23l), q1 = _mm256_unpackhi_epi16(t01l, t23l);
    const __m256i q2 = _mm256_unpacklo_epi16(t01h, t23h), q3 = _mm256_unpackhi_epi16(t01h, t23h);
    int8_t *d = dst + g * 4 * DNR;
    _mm256_storeu_si256((__m256i *)d, _mm256_permute2x128_si256(q0, q1, 0x20));
    _mm256_storeu_si256((__m256i *)(d + 32), _mm256_permute2x128_si256(q2, q3, 0x20));
    _mm256_storeu_si256((__m256i *)(d + 64), _mm256_permute2x128_si256(q0, q1, 0x31));
    _mm256_storeu_si256((__m256i *)(d + 96), _mm256_permute2x128_si256(q2, q3, 0x31));
  }
}

/* The A panel (DMR = 12 lanes) of an A whose rows are contiguous along the
 * lanes (a_rs = 1: a transposed A, e.g. convolution columns gathered one
 * tap per row): four rows of k (masked 16-byte loads of the lanes, zeros
 * past kc) interleaved by two rounds of unpacks into three 16-byte groups
 * of four lanes' quads; `flip` XORed into every real byte (0x80: an I8 A
 * read as a + 128), never into the padding's zeros. */
VTARGET static void pack_u8_lanes12(const uint8_t *src, int64_t ps, int nq, int64_t kc,
                                    uint8_t flip, uint8_t *dst) {
  const __mmask16 m = (__mmask16)((1u << (nq < DMR ? nq : DMR)) - 1);
  const __m128i flipv = _mm_maskz_set1_epi8(m, (char)flip);
  const int64_t quads = (kc + 3) / 4;
  for (int64_t g = 0; g < quads; g++) {
    __m128i r[4];
    for (int e = 0; e < 4; e++)
      r[e] = 4 * g + e < kc ? _mm_xor_si128(_mm_maskz_loadu_epi8(m, src + (4 * g + e) * ps), flipv)
                            : _mm_setzero_si128();
    const __m128i t01l = _mm_unpacklo_epi8(r[0], r[1]), t01h = _mm_unpackhi_epi8(r[0], r[1]);
    const __m128i t23l = _mm_unpacklo_epi8(r[2], r[3]), t23h = _mm_unpackhi_epi8(r[2], r[3]);
    uint8_t *d = dst + g * 4 * DMR;
    _mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi16(t01l, t23l));        /* lanes 0-3 */
    _mm_storeu_si128((__m128i *)(d + 16), _mm_unpackhi_epi16(t01l, t23l)); /* lanes 4-7 */
    _mm_storeu_si128((__m128i *)(d + 32), _mm_unpacklo_epi16(t01h, t23h)); /* lanes 8-11 */
  }
}

/* sums[j] += sum over the quads of the 32-lane B panel's column j (the
 * compensation of an I8 A): vpdpbusd with an all-ones A. */
VTARGET static void i8_panel_sums(const int8_t *bp, int64_t quads, int32_t *sums) {
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i s0 = _mm512_loadu_si512(sums), s1 = _mm512_loadu_si512(sums + 16);
  for (int64_t g = 0; g < quads; g++) {
    s0 = _mm512_dpbusd_epi32(s0, ones, _mm512_loadu_si512(bp + g * 4 * DNR));
    s1 = _mm512_dpbusd_epi32(s1, ones, _mm512_loadu_si512(bp + g * 4 * DNR + 64));
  }
  _mm512_storeu_si512(sums, s0);
  _mm512_storeu_si512(sums + 16, s1);
}

/* acc += the four u8 x s8 products of each dword of a and b. In inline
 * assembly: GCC 12 compiles the _mm512_dpbusd_epi32 intrinsic with a copy of
 * the accumulator around every instruction and spilled half of the 24
 * accumulators to the stack (measured: 2048^3 at 340 GOP/s; perf annotate
 * showed the moves as the hot instructions), while the same loop written
 * with vdpbf16ps kept them all in registers. */
#define VN_DPBUSD(acc, a, b) __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b))

#define VN_ROW(i)                                                                           \
  {                                                                                         \
    uint32_t quad;                                                                          \
    memcpy(&quad, ap + 4 * (i), sizeof quad);                                               \
    const __m512i av = _mm512_set1_epi32((int)quad);                                        \
    VN_DPBUSD(c##i##_0, av, b0);                                                            \
    VN_DPBUSD(c##i##_1, av, b1);                                                            \
  }

#define VN_LOAD(i)                                                                          \
  __m512i c##i##_0 = _mm512_setzero_si512(), c##i##_1 = c##i##_0;                           \
  if (accumulate && (i) < rows) {                                                           \
    c##i##_0 = _mm512_maskz_loadu_epi32(m0, c + (int64_t)(i) * ldc);                        \
    c##i##_1 = _mm512_maskz_loadu_epi32(m1, c + (int64_t)(i) * ldc + 16);                   \
  }

#define VN_STORE(i)                                                                         \
  if ((i) < rows) {                                                                         \
    _mm512_mask_storeu_epi32(c + (int64_t)(i) * ldc, m0, c##i##_0);                         \
    _mm512_mask_storeu_epi32(c + (int64_t)(i) * ldc + 16, m1, c##i##_1);                    \
  }

/* C[i][j] (+)= sum over the quads of ap quad(i) (unsigned) . bp quad(j)
 * (signed), i < rows, j < cols: 24 ZMM accumulators, per quad two B loads,
 * 12 broadcasts and 24 vpdpbusd. */
VTARGET static void i8_kernel_12x32(int64_t quads, const uint8_t *ap, const int8_t *bp,
                                    int32_t *c, int64_t ldc, int rows, int cols, int accumulate) {
  const __mmask16 m0 = lanes16(cols), m1 = lanes16(cols - 16);
  VN_LOAD(0) VN_LOAD(1) VN_LOAD(2) VN_LOAD(3) VN_LOAD(4) VN_LOAD(5)
  VN_LOAD(6) VN_LOAD(7) VN_LOAD(8) VN_LOAD(9) VN_LOAD(10) VN_LOAD(11)
  for (int64_t g = 0; g < quads; g++) {
    const __m512i b0 = _mm512_loadu_si512(bp), b1 = _mm512_loadu_si512(bp + 64);
    VN_ROW(0) VN_ROW(1) VN_ROW(2) VN_ROW(3) VN_ROW(4) VN_ROW(5)
    VN_ROW(6) VN_ROW(7) VN_ROW(8) VN_ROW(9) VN_ROW(10) VN_ROW(11)
    ap += 4 * DMR;
    bp += 4 * DNR;
  }
  VN_STORE(0) VN_STORE(1) VN_STORE(2) VN_STORE(3) VN_STORE(4) VN_STORE(5)
  VN_STORE(6) VN_STORE(7) VN_STORE(8) VN_STORE(9) VN_STORE(10) VN_STORE(11)
}

/* The tile: B's k block in quad panels (KC x NC bytes), each 12-row A
 * panel right before its microkernel calls; for an I8 A the column sums of
 * B (all k blocks) in `sums`, subtracted 128 times at the end. */
static void i8_block_vnni(const adnn_cpu_lowp_path *path, adnn_dtype at, adnn_dtype bt,
                          const void *a, int64_t a_rs, int64_t a_cs, const void *b, int64_t b_rs,
                          int64_t b_cs, int64_t rows, int64_t cols, int64_t k, void *cv,
                          int64_t ldc, void *scratch) {
  (void)path;
  (void)bt;
  int32_t *c = cv;
  int8_t *bp = scratch;                      /* KC x NC */
  uint8_t *ap = (uint8_t *)(bp + KC * NC);   /* one DMR x KC panel */
  int32_t *sums = (int32_t *)(ap + DMR * KC); /* NC column sums (64-byte aligned offset) */
  const int signed_a = at == ADNN_DTYPE_I8;
  const uint8_t flip = signed_a ? 0x80 : 0;
  if (k == 0) {
    for (int64_t i = 0; i < rows; i++) memset(c + i * ldc, 0, (size_t)cols * sizeof(int32_t));
    return;
  }
  if (signed_a) memset(sums, 0, NC * sizeof(int32_t));
  for (int64_t p0 = 0; p0 < k; p0 += KC) {
    const int64_t kc = k - p0 < KC ? k - p0 : KC, kc4 = (kc + 3) / 4 * 4;
    for (int64_t j = 0; j < cols; j += DNR) {
      const int nq = (int)(cols - j < DNR ? cols - j : DNR);
      const int8_t *src = (const int8_t *)b + p0 * b_rs + j * b_cs;
      if (b_cs == 1 || nq == 1)
        pack_i8_lanes32(src, b_rs, nq, kc, bp + j * kc4);
      else if (b_rs == 1 && nq == DNR)
        pack_dot_kmajor_avx512(src, 1, 4, b_cs, kc, DNR, 0, bp + j * kc4);
      else
        pack_dot_generic(src, 1, 4, b_cs, b_rs, nq, kc, DNR, 0, bp + j * kc4);
      if (signed_a) i8_panel_sums(bp + j * kc4, kc4 / 4, sums + j);
    }
    for (int64_t i = 0; i < rows; i += DMR) {
      const int mi = (int)(rows - i < DMR ? rows - i : DMR);
      const uint8_t *src = (const uint8_t *)a + i * a_rs + p0 * a_cs;
      if (a_cs == 1 && mi == DMR)
        pack_dot_kmajor_avx512(src, 1, 4, a_rs, kc, DMR, flip, ap);
      else if (a_cs == 1 && mi > 1)
        pack_dot_kmajor(src, 1, 4, a_rs, mi, kc, DMR, flip, ap);
      else if (a_rs == 1 && mi > 1)
        pack_u8_lanes12(src, a_cs, mi, kc, flip, ap);
      else
        pack_dot_generic(src, 1, 4, a_rs, a_cs, mi, kc, DMR, flip, ap);
      for (int64_t j = 0; j < cols; j += DNR) {
        const int nq = (int)(cols - j < DNR ? cols - j : DNR);
        i8_kernel_12x32(kc4 / 4, ap, bp + j * kc4, c + i * ldc + j, ldc, mi, nq, p0 != 0);
      }
    }
  }
  if (signed_a)
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++)
        c[i * ldc + j] = (int32_t)((uint32_t)c[i * ldc + j] - 128u * (uint32_t)sums[j]);
}
#endif /* LOWP_DOT */

/* ---- the dispatch table ---------------------------------------------------- */

/* The placeholder slots (AMX-BF16/INT8, AVX512-FP16, AVX-VNNI): no machine
 * this project has been built on had them, so they cannot be tested and are
 * never usable. */
static int never(int isa, const adnn_cpu_features *f) {
  (void)isa;
  (void)f;
  return 0;
}

static int usable_f32_avx512(int isa, const adnn_cpu_features *f) {
  (void)f;
  return LOWP_X86 && isa >= ADNN_CPU_ISA_AVX512 && adnn_cpu_gemm_ukr_avx512.kernel != NULL;
}

/* The dot-product paths also need AVX512BW and VL (their packers' masked
 * 16- and 8-bit loads); every CPU with either extension has both. */
static int usable_avx512_bf16(int isa, const adnn_cpu_features *f) {
  return LOWP_DOT && f != NULL && f->avx512_bf16 && f->avx512bw && f->avx512vl &&
         usable_f32_avx512(isa, f);
}

static int usable_avx512_vnni(int isa, const adnn_cpu_features *f) {
  return LOWP_DOT && isa >= ADNN_CPU_ISA_AVX512 && f != NULL && f->avx512_vnni &&
         f->avx512bw && f->avx512vl;
}

static int usable_f32_avx2(int isa, const adnn_cpu_features *f) {
  return LOWP_X86 && isa >= ADNN_CPU_ISA_AVX2 && f != NULL && f->f16c &&
         adnn_cpu_gemm_ukr_avx2.kernel != NULL;
}

static int usable_avx2(int isa, const adnn_cpu_features *f) {
  (void)f;
  return LOWP_X86 && isa >= ADNN_CPU_ISA_AVX2;
}

static int always(int isa, const adnn_cpu_features *f) {
  (void)isa;
  (void)f;
  return 1;
}

#if LOWP_X86
#define X86_BLOCK(fn) fn
#else
#define X86_BLOCK(fn) NULL
#endif
#if LOWP_DOT
#define DOT_BLOCK(fn) fn
#else
#define DOT_BLOCK(fn) NULL
#endif

#define DT(t) (1u << (unsigned)ADNN_DTYPE_##t)
#define DT_FLOAT (DT(F16) | DT(BF16))
#define DT_INT8 (DT(I8) | DT(U8))

static const adnn_cpu_lowp_path paths[] = {
    /* Slots only (see above). */
    {"amx_bf16", ADNN_CPU_LOWP_FLOAT, DT(BF16), never, 0, 0, NULL, NULL},
    /* BF16 pairs into vdpbf16ps; f32_avx512 recomputes tiles with
     * subnormal operands. */
    {"avx512_bf16", ADNN_CPU_LOWP_FLOAT, DT(BF16), usable_avx512_bf16, DMR, DNR,
     DOT_BLOCK(bf16_block_avx512), &adnn_cpu_gemm_ukr_avx512},
    {"avx512_fp16", ADNN_CPU_LOWP_FLOAT, DT(F16), never, 0, 0, NULL, NULL},
    {"amx_int8", ADNN_CPU_LOWP_INT8, DT_INT8, never, 0, 0, NULL, NULL},
    /* Byte quads into vpdpbusd. */
    {"avx512_vnni", ADNN_CPU_LOWP_INT8, DT_INT8, usable_avx512_vnni, DMR, DNR,
     DOT_BLOCK(i8_block_vnni), NULL},
    {"avx_vnni", ADNN_CPU_LOWP_INT8, DT_INT8, never, 0, 0, NULL, NULL},
    /* Widening into the F32 engine's panels. The AVX-512 row uses the
     * engine's 12 x 32 microkernel with the AVX2/F16C widening (AVX-512
     * CPUs have both). */
    {"f32_avx512", ADNN_CPU_LOWP_FLOAT, DT_FLOAT, usable_f32_avx512, 12, 32,
     X86_BLOCK(float_block_avx2), &adnn_cpu_gemm_ukr_avx512},
    {"f32_avx2", ADNN_CPU_LOWP_FLOAT, DT_FLOAT, usable_f32_avx2, 6, 16,
     X86_BLOCK(float_block_avx2), &adnn_cpu_gemm_ukr_avx2},
    /* INT8 widened to int16 pairs. */
    {"i16_avx2", ADNN_CPU_LOWP_INT8, DT_INT8, usable_avx2, IMR, INR, X86_BLOCK(int_block_avx2),
     NULL},
    {"i16_base", ADNN_CPU_LOWP_INT8, DT_INT8, always, IMR, INR, int_block_base, NULL},
};

#define PATH_COUNT ((int)(sizeof paths / sizeof paths[0]))

int adnn_cpu_lowp_path_count(void) { return PATH_COUNT; }

int adnn_cpu_lowp_widens(const adnn_cpu_lowp_path *path) {
#if LOWP_X86
  return path->block == float_block_avx2;
#else
  (void)path;
  return 0;
#endif
}

const adnn_cpu_lowp_path *adnn_cpu_lowp_path_at(int i) {
  return i >= 0 && i < PATH_COUNT ? &paths[i] : NULL;
}

const adnn_cpu_lowp_path *adnn_cpu_lowp_choose(adnn_dtype at, int isa,
                                               const adnn_cpu_features *f) {
  if ((unsigned)at >= 32) return NULL;
  for (int i = 0; i < PATH_COUNT; i++)
    if ((paths[i].dtypes & (1u << (unsigned)at)) && paths[i].block != NULL &&
        paths[i].usable(isa, f))
      return &paths[i];
  return NULL;
}

size_t adnn_cpu_lowp_thread_bytes(const adnn_cpu_lowp_path *path) {
  /* INT8: the int16 pair panels, which also hold the VNNI path's byte
   * panels and column sums (KC NC + DMR KC + 4 NC bytes). Float: the F32
   * panels, which also hold the BF16 pair panels of avx512_bf16 (whose
   * fallback, float_block, needs the F32 ones with its mr = DMR). */
  if (path->kind == ADNN_CPU_LOWP_INT8)
    return (size_t)(KC * NC + IMR * KC) * sizeof(int16_t);
  return (size_t)(KC * NC + (int64_t)path->mr * KC + KC) * sizeof(float);
}

void adnn_cpu_lowp_narrow(const adnn_cpu_lowp_path *path, adnn_dtype t, const float *src,
                          int64_t n, uint16_t *dst) {
  /* lowp.c's narrowing: F16C's vcvtps2ph with round to nearest even, or
   * BF16's integer rounding in AVX2 lanes, on the FLOAT paths; float16.h's
   * rules otherwise (the same bits). */
#if LOWP_X86
  const int isa = path->kind == ADNN_CPU_LOWP_FLOAT ? ADNN_CPU_ISA_AVX2 : ADNN_CPU_ISA_BASE;
#else
  (void)path;
  const int isa = ADNN_CPU_ISA_BASE;
#endif
  adnn_cpu_lowp_from_f32(isa, t, src, dst, (size_t)n);
}
