/*
 * F16 and BF16 blocks to and from F32, for the CPU kernels' low-precision
 * paths (kernels/cpu/lowp.h). The results are those of the scalar rules in
 * kernels/common/float16.h, bit for bit, NaN included:
 *
 *   - F16 uses F16C's vcvtph2ps (exact; a NaN keeps its payload and gets the
 *     quiet bit, as adnn_f16_to_f32 does) and vcvtps2ph with the immediate 0
 *     (round to nearest even whatever MXCSR says; overflow to infinity,
 *     subnormal results kept, NaN quieted with its top payload bits: the
 *     rules float16.h was checked against over all 2^32 inputs). F16C works
 *     on the integer bits, so MXCSR's DAZ and FTZ do not change it.
 *   - BF16 is done in integer lanes: widening is a zero extension and a shift
 *     by 16; narrowing adds 0x7fff plus the lowest kept bit (round to nearest
 *     even) and takes the top half, a NaN instead keeps its top half with the
 *     quiet bit set. AVX512-BF16's vcvtneps2bf16 is not used: it flushes
 *     subnormal inputs to zero, which the scalar rules do not.
 *
 * Every body is a function with its own target attribute (GCC and clang both
 * accept it), called only for the instruction set the environment chose
 * (env->isa): the AVX2 level requires F16C (simd_isa.h), and AVX-512F has the
 * 512-bit forms of both F16C instructions. The baseline uses the scalar
 * functions of float16.h; a vector loop's tail goes through an 8-element
 * stack block and one more vector conversion, because the scalar F16 rules
 * are branchy integer code that cost more than the whole vector loop on the
 * short rows (14 or 28 elements) of small feature maps.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "kernels/common/float16.h"
#include "kernels/cpu/lowp.h"
#include "kernels/cpu/simd_isa.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define LOWP_X86 1
#endif

static void to_f32_scalar(adnn_dtype t, const uint16_t *src, float *dst, size_t n) {
  if (t == ADNN_DTYPE_F16)
    for (size_t i = 0; i < n; i++) dst[i] = adnn_f16_to_f32(src[i]);
  else
    for (size_t i = 0; i < n; i++) dst[i] = adnn_bf16_to_f32(src[i]);
}

static void from_f32_scalar(adnn_dtype t, const float *src, uint16_t *dst, size_t n) {
  if (t == ADNN_DTYPE_F16)
    for (size_t i = 0; i < n; i++) dst[i] = adnn_f32_to_f16(src[i]);
  else
    for (size_t i = 0; i < n; i++) dst[i] = adnn_f32_to_bf16(src[i]);
}

#ifdef LOWP_X86
/* ---- AVX2 + F16C ---------------------------------------------------------- */

/* Eight elements at src, widened to dst. */
__attribute__((target("avx2,f16c"))) static inline void to_f32_8_avx2(adnn_dtype t,
                                                                     const uint16_t *src,
                                                                     float *dst) {
  const __m128i h = _mm_loadu_si128((const __m128i *)src);
  if (t == ADNN_DTYPE_F16)
    _mm256_storeu_ps(dst, _mm256_cvtph_ps(h));
  else
    _mm256_storeu_ps(dst, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)));
}

__attribute__((target("avx2,f16c"))) static void to_f32_avx2(adnn_dtype t, const uint16_t *src,
                                                             float *dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) to_f32_8_avx2(t, src + i, dst + i);
  if (i < n) { /* the tail through a block: reads and writes stay inside n */
    uint16_t h[8] = {0};
    float f[8];
    for (size_t j = 0; j < n - i; j++) h[j] = src[i + j];
    to_f32_8_avx2(t, h, f);
    for (size_t j = 0; j < n - i; j++) dst[i + j] = f[j];
  }
}

/* Eight F32 lanes to BF16 bits in the low 16 bits of each 32-bit lane. */
__attribute__((target("avx2"))) static inline __m256i bf16_round_avx2(__m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i mag = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
  /* Both sides are non-negative as int32, so the signed compare is exact. */
  const __m256i nan = _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7f800000));
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb)), 16);
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  return _mm256_blendv_epi8(rounded, quiet, nan);
}

/* Eight floats at src, rounded to dst. */
__attribute__((target("avx2,f16c"))) static inline void from_f32_8_avx2(adnn_dtype t,
                                                                       const float *src,
                                                                       uint16_t *dst) {
  if (t == ADNN_DTYPE_F16) {
    _mm_storeu_si128((__m128i *)dst,
                     _mm256_cvtps_ph(_mm256_loadu_ps(src), _MM_FROUND_TO_NEAREST_INT));
  } else {
    const __m256i r = bf16_round_avx2(_mm256_loadu_ps(src));
    /* Every lane is <= 0xffff, so the unsigned saturating pack is exact;
     * it packs within 128-bit halves, the permute puts them in order. */
    const __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0xd8);
    _mm_storeu_si128((__m128i *)dst, _mm256_castsi256_si128(p));
  }
}

__attribute__((target("avx2,f16c"))) static void from_f32_avx2(adnn_dtype t, const float *src,
                                                               uint16_t *dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) from_f32_8_avx2(t, src + i, dst + i);
  if (i < n) { /* the tail through a block: reads and writes stay inside n */
    float f[8] = {0};
    uint16_t h[8];
    for (size_t j = 0; j < n - i; j++) f[j] = src[i + j];
    from_f32_8_avx2(t, f, h);
    for (size_t j = 0; j < n - i; j++) dst[i + j] = h[j];
  }
}

/* ---- AVX-512F (compiled here, not run: this machine has no AVX-512) -------- */

__attribute__((target("avx512f"))) static void to_f32_avx512(adnn_dtype t, const uint16_t *src,
                                                             float *dst, size_t n) {
  size_t i = 0;
  if (t == ADNN_DTYPE_F16) {
    for (; i + 16 <= n; i += 16)
      _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + i))));
  } else {
    for (; i + 16 <= n; i += 16) {
      const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(src + i)));
      _mm512_storeu_ps(dst + i, _mm512_castsi512_ps(_mm512_slli_epi32(w, 16)));
    }
  }
  /* The tail: AVX-512F CPUs have AVX2 and F16C. */
  to_f32_avx2(t, src + i, dst + i, n - i);
}

__attribute__((target("avx512f"))) static void from_f32_avx512(adnn_dtype t, const float *src,
                                                               uint16_t *dst, size_t n) {
  size_t i = 0;
  if (t == ADNN_DTYPE_F16) {
    for (; i + 16 <= n; i += 16)
      _mm256_storeu_si256((__m256i *)(dst + i),
                          _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  } else {
    for (; i + 16 <= n; i += 16) {
      const __m512i u = _mm512_castps_si512(_mm512_loadu_ps(src + i));
      const __m512i mag = _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
      const __mmask16 nan = _mm512_cmpgt_epi32_mask(mag, _mm512_set1_epi32(0x7f800000));
      const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
      __m512i r = _mm512_srli_epi32(
          _mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb)), 16);
      r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
      /* vpmovdw truncates each lane to 16 bits: exact, the lanes are <= 0xffff. */
      _mm256_storeu_si256((__m256i *)(dst + i), _mm512_cvtepi32_epi16(r));
    }
  }
  from_f32_avx2(t, src + i, dst + i, n - i);
}
#endif /* LOWP_X86 */

void adnn_cpu_lowp_to_f32(int isa, adnn_dtype t, const uint16_t *src, float *dst, size_t n) {
#ifdef LOWP_X86
  if (isa == ADNN_CPU_ISA_AVX512) {
    to_f32_avx512(t, src, dst, n);
    return;
  }
  if (isa == ADNN_CPU_ISA_AVX2) {
    to_f32_avx2(t, src, dst, n);
    return;
  }
#endif
  (void)isa;
  to_f32_scalar(t, src, dst, n);
}

void adnn_cpu_lowp_from_f32(int isa, adnn_dtype t, const float *src, uint16_t *dst, size_t n) {
#ifdef LOWP_X86
  if (isa == ADNN_CPU_ISA_AVX512) {
    from_f32_avx512(t, src, dst, n);
    return;
  }
  if (isa == ADNN_CPU_ISA_AVX2) {
    from_f32_avx2(t, src, dst, n);
    return;
  }
#endif
  (void)isa;
  from_f32_scalar(t, src, dst, n);
}

void adnn_cpu_lowp_to_f32_strided(int isa, adnn_dtype t, const uint16_t *src, int64_t stride,
                                  float *dst, size_t n) {
  if (stride == 1 || n <= 1) {
    adnn_cpu_lowp_to_f32(isa, t, src, dst, n);
    return;
  }
  uint16_t h[ADNN_CPU_LOWP_BLOCK];
  for (size_t i0 = 0; i0 < n; i0 += ADNN_CPU_LOWP_BLOCK) {
    const size_t m = n - i0 < ADNN_CPU_LOWP_BLOCK ? n - i0 : ADNN_CPU_LOWP_BLOCK;
    for (size_t i = 0; i < m; i++) h[i] = src[(int64_t)(i0 + i) * stride];
    adnn_cpu_lowp_to_f32(isa, t, h, dst + i0, m);
  }
}

void adnn_cpu_lowp_from_f32_strided(int isa, adnn_dtype t, const float *src, uint16_t *dst,
                                    int64_t stride, size_t n) {
  if (stride == 1 || n <= 1) {
    adnn_cpu_lowp_from_f32(isa, t, src, dst, n);
    return;
  }
  uint16_t h[ADNN_CPU_LOWP_BLOCK];
  for (size_t i0 = 0; i0 < n; i0 += ADNN_CPU_LOWP_BLOCK) {
    const size_t m = n - i0 < ADNN_CPU_LOWP_BLOCK ? n - i0 : ADNN_CPU_LOWP_BLOCK;
    adnn_cpu_lowp_from_f32(isa, t, src + i0, h, m);
    for (size_t i = 0; i < m; i++) dst[(int64_t)(i0 + i) * stride] = h[i];
  }
}
