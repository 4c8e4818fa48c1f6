/*
 * Low-precision GEMM blocks (gemm_lowp.h): the conversion packers, the
 * driver of one tile, the INT8 microkernels and the dispatch table.
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
 * element otherwise. Measured (perf, one thread of the loaded build
 * machine, 1024^3 BF16/F16) the packing took about a third of the
 * microkernel's time: more than the 0.9x target allows, still to
 * be tuned (fewer re-widenings of A, wider tiles along N).
 *
 * INT8 path: A and B are widened to int16 in pairs along k (a zero pads an
 * odd k), so one vpmaddwd lane multiplies a pair of A by a pair of B and
 * sums the two exact products into 32 bits; the accumulators are 32-bit
 * adds, exact while K stays below the core's bound (doc/numerics.md).
 *
 * The dispatch table lists every path the issue names, best first. The
 * AMX, AVX-512-BF16, AVX512-FP16 and VNNI slots are placeholders, to be
 * written on an Intel machine: this build machine cannot run them, so they
 * are never usable and adnn_cpu_lowp_choose passes over them; the first
 * usable path for the ISA level (env->isa, which ADNN_CPU_SIMD caps) wins.
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

static void int_block(int_kernel_fn kernel, adnn_dtype at, adnn_dtype bt, const void *a,
                      int64_t a_rs, int64_t a_cs, const void *b, int64_t b_rs, int64_t b_cs,
                      int64_t rows, int64_t cols, int64_t k, void *cv, int64_t ldc,
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
      pack_int_panel(bt, b, p0 * b_rs + j * b_cs, b_cs, b_rs, nq, kc, INR, bp + j * kc2);
    }
    for (int64_t i = 0; i < rows; i += IMR) {
      const int mi = (int)(rows - i < IMR ? rows - i : IMR);
      pack_int_panel(at, a, i * a_rs + p0 * a_cs, a_rs, a_cs, mi, kc, IMR, ap);
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
  int_block(int_kernel_base, at, bt, a, a_rs, a_cs, b, b_rs, b_cs, rows, cols, k, c, ldc,
            scratch);
}

#if LOWP_X86
static void int_block_avx2(const adnn_cpu_lowp_path *path, adnn_dtype at, adnn_dtype bt,
                           const void *a, int64_t a_rs, int64_t a_cs, const void *b, int64_t b_rs,
                           int64_t b_cs, int64_t rows, int64_t cols, int64_t k, void *c,
                           int64_t ldc, void *scratch) {
  (void)path;
  int_block(int_kernel_avx2, at, bt, a, a_rs, a_cs, b, b_rs, b_cs, rows, cols, k, c, ldc,
            scratch);
}
#endif

/* ---- the dispatch table ---------------------------------------------------- */

/* The placeholder slots (AMX-BF16/INT8, AVX-512-BF16, AVX512-FP16,
 * AVX-512-VNNI / AVX-VNNI): to be written on an Intel machine, where they
 * can be tested. Never usable until then. */
static int never(int isa, const adnn_cpu_features *f) {
  (void)isa;
  (void)f;
  return 0;
}

static int usable_f32_avx512(int isa, const adnn_cpu_features *f) {
  (void)f;
  return LOWP_X86 && isa >= ADNN_CPU_ISA_AVX512 && adnn_cpu_gemm_ukr_avx512.kernel != NULL;
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

static const adnn_cpu_lowp_path paths[] = {
    /* To be written on an Intel machine (see above). */
    {"amx_bf16", ADNN_CPU_LOWP_FLOAT, never, 0, 0, NULL, NULL},
    {"avx512_bf16", ADNN_CPU_LOWP_FLOAT, never, 0, 0, NULL, NULL},
    {"avx512_fp16", ADNN_CPU_LOWP_FLOAT, never, 0, 0, NULL, NULL},
    {"amx_int8", ADNN_CPU_LOWP_INT8, never, 0, 0, NULL, NULL},
    {"avx512_vnni", ADNN_CPU_LOWP_INT8, never, 0, 0, NULL, NULL},
    {"avx_vnni", ADNN_CPU_LOWP_INT8, never, 0, 0, NULL, NULL},
    /* Widening into the F32 engine's panels. The AVX-512 row uses the
     * engine's 12 x 32 microkernel with the AVX2/F16C widening (AVX-512
     * CPUs have both); it cannot run on this build machine. */
    {"f32_avx512", ADNN_CPU_LOWP_FLOAT, usable_f32_avx512, 12, 32,
     X86_BLOCK(float_block_avx2), &adnn_cpu_gemm_ukr_avx512},
    {"f32_avx2", ADNN_CPU_LOWP_FLOAT, usable_f32_avx2, 6, 16, X86_BLOCK(float_block_avx2),
     &adnn_cpu_gemm_ukr_avx2},
    /* INT8 widened to int16 pairs. */
    {"i16_avx2", ADNN_CPU_LOWP_INT8, usable_avx2, IMR, INR, X86_BLOCK(int_block_avx2), NULL},
    {"i16_base", ADNN_CPU_LOWP_INT8, always, IMR, INR, int_block_base, NULL},
};

const adnn_cpu_lowp_path *adnn_cpu_lowp_choose(adnn_dtype at, int isa,
                                               const adnn_cpu_features *f) {
  adnn_cpu_lowp_kind kind;
  if (at == ADNN_DTYPE_F16 || at == ADNN_DTYPE_BF16)
    kind = ADNN_CPU_LOWP_FLOAT;
  else if (at == ADNN_DTYPE_I8 || at == ADNN_DTYPE_U8)
    kind = ADNN_CPU_LOWP_INT8;
  else
    return NULL;
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
    if (paths[i].kind == kind && paths[i].block != NULL && paths[i].usable(isa, f))
      return &paths[i];
  return NULL;
}

size_t adnn_cpu_lowp_thread_bytes(const adnn_cpu_lowp_path *path) {
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
