/*
 * Width-generic vector code for the CPU kernels (activation, softmax,
 * normalizations, binary ops, pooling), and the ISA-independent helpers they
 * share.
 *
 * Included plainly, this header declares the shared helpers (the loop
 * coalescing wrapper, the parallel grain). Included inside an instruction
 * set's region (simd_instantiate.h and simd_region.h arrange that, once per set),
 * it defines the vector types and helpers of that set: VF, a vector of VL
 * floats as wide as the set's registers (16, 8 or 4), so the compiler maps
 * each vector operation to one instruction; VI, the matching integer
 * vector (comparisons yield VI masks, -1 true, 0 false); VDH, half as many
 * doubles; and NAME(f), which appends the set's suffix so the copies do not
 * clash. The kernels are written once against these names with GCC/clang
 * vector extensions.
 *
 * NaN rules: every helper is written with selects on ordered comparisons
 * (false for NaN) so that a NaN input reaches the result; clamps are
 * "x > hi ? hi : x", which keeps x when x is NaN.
 *
 * Accuracy of the vector functions, measured against double-precision libm
 * on 250k points per range, AVX-512 (AVX2 identical) / baseline without FMA:
 *   exp on [-87.3, 88.7]       0.9 / 1.2 ulp  (7.8e-8 relative; 0 below -87.3)
 *   expm1 on [-20, 20]         3.0 / 4.1 ulp  (2.1e-7 / 2.8e-7)
 *   tanh on [-10, 10]          2.9 / 3.2 ulp  (2.5e-7 / 2.7e-7)
 *   Phi(x) for gelu, [-13, 6]  5.6 / 5.8 ulp  (3.8e-7)
 *   log1p on [0, 1]            2.8 / 2.8 ulp  (2.2e-7)
 * and per activation over every 509th float bit pattern, max relative error
 * vs the double reference: sigmoid 1.4e-7, tanh 2.4e-7, elu 1.4e-7, silu
 * 1.6e-7, softplus 2.4e-7, gelu 4.2e-7, gelu_tanh 2.2e-6 (the float cubic
 * in its argument, near x = -4.9 where the result is ~5e-7). For x < -5 the
 * double reference of gelu loses accuracy itself (1 + erf cancels); our
 * gelu stays accurate there because it uses erfc.
 */
#include <stdint.h>
#include <string.h>

/* ---- Shared, ISA-independent helpers (compiled once per file). ---------- */
#ifndef ADNN_CPU_SIMD_COMMON
#define ADNN_CPU_SIMD_COMMON

#include <stdlib.h>

#include <adnn.h>

#include "kernels/common/nd.h"
#include "kernels/cpu/simd_isa.h"

/* The intrinsics headers are included here, outside every target region, so
 * that they are read once with the compiler's default target. */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

/* Elements per parallel task: below this a loop stays on the calling thread,
 * since waking the pool costs more than a few microseconds of streaming. */
#define ADNN_CPU_GRAIN 32768

/** Coalesces the iteration space of up to three tensors with the same dims
 *  (the output first) with adnn_nd_coalesce (kernels/common/nd.h): size-1
 *  dims dropped, dims contiguous in every tensor merged. Unlike
 *  adnn_nd_coalesce, the result always has rank >= 1 (a single element is one
 *  dim of size 1 and stride 1), so that the kernels can always address the
 *  innermost dim as dims[rank - 1]. */
static inline void adnn_cpu_loop_init(adnn_nd *L, int count, const adnn_tensor_desc *const *t) {
  const int64_t *strides[ADNN_ND_MAX_TENSORS];
  for (int k = 0; k < count; k++) strides[k] = t[k]->strides;
  adnn_nd_coalesce(L, t[0]->rank, t[0]->dims, count, strides);
  if (L->rank == 0) {
    L->rank = 1;
    L->dims[0] = 1;
    for (int k = 0; k < count; k++) L->strides[k][0] = 1;
  }
}

/** The number of rows of a coalesced loop: the product of all but its
 *  innermost dim. */
static inline int64_t adnn_cpu_loop_rows(const adnn_nd *L) {
  int64_t n = 1;
  for (int i = 0; i < L->rank - 1; i++) n *= L->dims[i];
  return n;
}

/** The element offsets in each tensor of the first element of row `row`
 *  (row-major over all but the innermost dim). */
static inline void adnn_cpu_loop_row_offsets(const adnn_nd *L, int64_t row,
                                             int64_t off[ADNN_ND_MAX_TENSORS]) {
  for (int k = 0; k < ADNN_ND_MAX_TENSORS; k++) off[k] = 0;
  for (int i = L->rank - 2; i >= 0; i--) {
    int64_t q = row / L->dims[i], idx = row - q * L->dims[i];
    row = q;
    for (int k = 0; k < ADNN_ND_MAX_TENSORS; k++) off[k] += idx * L->strides[k][i];
  }
}

/** A tensor descriptor made of dims [from, to) of t (same dtype), to
 *  coalesce part of a tensor's dims (the dims before and after a softmax
 *  axis, the rows and the normalized dims of a norm). */
static inline void adnn_cpu_sub_desc(const adnn_tensor_desc *t, int from, int to,
                                     adnn_tensor_desc *out) {
  *out = *t;
  out->rank = to - from;
  for (int i = from; i < to; i++) {
    out->dims[i - from] = t->dims[i];
    out->strides[i - from] = t->strides[i];
  }
}

#endif /* ADNN_CPU_SIMD_COMMON */

#if !defined(__GNUC__)
#error "the CPU kernels need GCC or clang vector extensions"
#endif

/* ---- The vector region: inside an instruction set's region only. ------- */
#ifdef ADNN_SIMD_ISA

/* Vector types of VL lanes; comparisons yield VI masks (-1 true, 0 false). */
typedef float NAME(vf_t) __attribute__((vector_size(VL * 4)));
typedef int32_t NAME(vi_t) __attribute__((vector_size(VL * 4)));
#define VF NAME(vf_t)
#define VI NAME(vi_t)
#define SIMD_INLINE static inline __attribute__((always_inline))

/* Loads VL floats from p (any alignment). */
SIMD_INLINE VF NAME(vload)(const float *p) {
  VF v;
  memcpy(&v, p, sizeof v);
  return v;
}
/* Stores VL floats to p (any alignment). */
SIMD_INLINE void NAME(vstore)(float *p, VF v) { memcpy(p, &v, sizeof v); }
/* Partial load/store of n < VL floats (tails); missing lanes read as `fill`.
 * Masked loads and stores where the ISA has them (they never touch memory
 * outside the n elements), a small stack copy otherwise. */
SIMD_INLINE VF NAME(vload_n)(const float *p, size_t n, float fill) {
#if ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX512
  return (VF)_mm512_mask_loadu_ps(_mm512_set1_ps(fill), (__mmask16)((1u << n) - 1u), p);
#elif ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX2
  const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n),
                                       _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  return (VF)_mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
#else
  float t[VL];
  for (int i = 0; i < VL; i++) t[i] = fill;
  memcpy(t, p, n * sizeof(float));
  return NAME(vload)(t);
#endif
}
/* Stores the first n < VL lanes of v to p, touching nothing beyond them. */
SIMD_INLINE void NAME(vstore_n)(float *p, VF v, size_t n) {
#if ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX512
  _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1u), (__m512)v);
#elif ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX2
  const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n),
                                       _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  _mm256_maskstore_ps(p, m, (__m256)v);
#else
  float t[VL];
  NAME(vstore)(t, v);
  memcpy(p, t, n * sizeof(float));
#endif
}
/* s in every lane. */
SIMD_INLINE VF NAME(vset)(float s) { return (VF){0} + s; }
/* Lane by lane m ? a : b, for a mask m of a comparison. */
SIMD_INLINE VF NAME(vsel)(VI m, VF a, VF b) { return (VF)((m & (VI)a) | (~m & (VI)b)); }
/* |a|, by clearing the sign bit (NaN stays NaN). */
SIMD_INLINE VF NAME(vabs)(VF a) { return (VF)((VI)a & 0x7fffffff); }
/* The mask of the lanes of a that are NaN. */
SIMD_INLINE VI NAME(visnan)(VF a) { return a != a; }
/* Clamps that keep a NaN of a: a > hi ? hi : a and a < lo ? lo : a. */
SIMD_INLINE VF NAME(vminc)(VF a, VF hi) { return NAME(vsel)(a > hi, hi, a); }
SIMD_INLINE VF NAME(vmaxc)(VF a, VF lo) { return NAME(vsel)(a < lo, lo, a); }
/* max/min that return NaN when either operand is NaN (binary MAX/MIN,
 * running maxima that must notice a NaN anywhere). */
SIMD_INLINE VF NAME(vmax_nan)(VF a, VF b) {
  VF r = NAME(vsel)(a < b, b, a);
  r = NAME(vsel)(NAME(visnan)(a), a, r);
  return NAME(vsel)(NAME(visnan)(b), b, r);
}
SIMD_INLINE VF NAME(vmin_nan)(VF a, VF b) {
  VF r = NAME(vsel)(b < a, b, a);
  r = NAME(vsel)(NAME(visnan)(a), a, r);
  return NAME(vsel)(NAME(visnan)(b), b, r);
}
/* Half-width double vectors (one register each): exact float -> double
 * conversion of the low and high halves of a VF, for double accumulators that
 * stay in registers (a full VL-lane double vector would be two registers and
 * GCC keeps such values in memory, serializing the loop on store forwarding). */
typedef float NAME(vfh_t) __attribute__((vector_size(VL * 2)));
typedef double NAME(vdh_t) __attribute__((vector_size(VL * 4)));
#define VDH NAME(vdh_t)
/* The low half of v's lanes as doubles (exact). */
SIMD_INLINE VDH NAME(vcvt_lo)(VF v) {
  NAME(vfh_t) h;
  memcpy(&h, &v, sizeof h);
  return __builtin_convertvector(h, VDH);
}
/* The high half of v's lanes as doubles (exact). */
SIMD_INLINE VDH NAME(vcvt_hi)(VF v) {
  NAME(vfh_t) h;
  memcpy(&h, (const char *)&v + sizeof h, sizeof h);
  return __builtin_convertvector(h, VDH);
}
/* The sum of the lanes of v, in lane order. */
SIMD_INLINE double NAME(vdhsum)(VDH v) {
  double s = 0.0;
  for (int i = 0; i < VL / 2; i++) s += v[i];
  return s;
}
/* The sum of the lanes of v, in lane order. */
SIMD_INLINE float NAME(vhsum)(VF v) {
  float s = 0.0f;
  for (int i = 0; i < VL; i++) s += v[i];
  return s;
}
/* Horizontal max; NaN in any lane gives NaN. */
SIMD_INLINE float NAME(vhmax)(VF v) {
  float m = v[0];
  for (int i = 1; i < VL; i++) m = (m != m || v[i] < m) ? m : v[i];
  return m;
}
/* The rounding error of h = a * a, exactly: a * a - h. With an FMA (AVX2 and
 * AVX-512 regions, or a baseline target that has one) that is one fused
 * operation; otherwise Veltkamp's split of a into two 12-bit halves makes
 * every partial product exact (Dekker). The baseline x86-64 region has no FMA
 * instruction, so the compiler cannot contract the split's expressions. */
SIMD_INLINE VF NAME(vsqr_err)(VF a, VF h) {
#if ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX512
  return (VF)_mm512_fmsub_ps((__m512)a, (__m512)a, (__m512)h);
#elif ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX2
  return (VF)_mm256_fmsub_ps((__m256)a, (__m256)a, (__m256)h);
#elif defined(__FMA__) || defined(__aarch64__)
  VF r;
  for (int i = 0; i < VL; i++) r[i] = __builtin_fmaf(a[i], a[i], -h[i]);
  return r;
#else
  const VF c = a * 4097.0f;
  const VF ah = c - (c - a), al = a - ah;
  return ((ah * ah - h) + 2.0f * ah * al) + al * al;
#endif
}

/* exp(hi + lo) for |lo| small (a few units): round n = (hi+lo)/ln2 to an
 * integer, reduce r = hi - n*ln2 + lo with ln2 split in two parts (n*LN2_HI is
 * exact for |n| < 2^15 because LN2_HI = 355/512 has 9 significant bits), then
 * exp(r) by its degree-7 Taylor polynomial (truncation < 6e-9 relative for
 * |r| <= ln2/2) and scale by 2^n built in the exponent field, as two factors
 * so that n = 128 (results up to the overflow threshold) stays representable;
 * overflow then gives +inf naturally.
 * Results below FLT_MIN (arguments under -87.3) are returned as 0 instead of
 * subnormals: producing subnormals costs a microcode assist of ~100 cycles per
 * instruction on x86, and masked attention (-1e4 or -inf logits) would hit it
 * for most elements. The lost values are below 1.2e-38, far inside every
 * tolerance (doc/numerics.md). */
SIMD_INLINE VF NAME(vexp2part)(VF hi, VF lo) {
  const VF magic = NAME(vset)(12582912.0f); /* 1.5 * 2^23: rounds to an integer */
  VF a = hi + lo;
  const VI tiny = a < -87.3f;
  a = NAME(vmaxc)(NAME(vminc)(a, NAME(vset)(89.0f)), NAME(vset)(-87.3f));
  hi = NAME(vmaxc)(NAME(vminc)(hi, NAME(vset)(89.0f)), NAME(vset)(-104.0f));
  VF t = a * 1.44269504088896341f + magic;
  VF n = t - magic;
  VI ni = (VI)t - (VI)magic;
  /* Cody-Waite: n * LN2_HI is exact and so is hi - n * LN2_HI (the two are
   * within a factor of two whenever the result is not tiny); the rounding of
   * n * LN2_LO is ~1e-9 absolute. No FMA is needed. */
  VF r = hi - n * 0.693359375f;
  r = r + n * 2.12194440054690583e-4f;
  r = r + lo;
  VF p = NAME(vset)(1.0f / 5040.0f);
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  VI n1 = ni >> 1, n2 = ni - n1;
  VF s1 = (VF)((n1 + 127) << 23), s2 = (VF)((n2 + 127) << 23);
  /* A NaN input makes r and p NaN (tiny is false for it); the scale bits do
   * not matter then. */
  return NAME(vsel)(tiny, (VF){0}, p * s1 * s2);
}
/* exp(x), as vexp2part with no low part. */
SIMD_INLINE VF NAME(vexp)(VF x) { return NAME(vexp2part)(x, (VF){0}); }

/* exp(x) - 1 without cancellation near 0: the Taylor series x + x^2/2 + ...
 * + x^8/8! (relative truncation < 6e-10) for |x| < ln2/2, exp(x) - 1 beyond,
 * where the subtraction loses at most ~2 bits. */
SIMD_INLINE VF NAME(vexpm1)(VF x) {
  VF p = NAME(vset)(1.0f / 40320.0f);
  p = p * x + 1.0f / 5040.0f;
  p = p * x + 1.0f / 720.0f;
  p = p * x + 1.0f / 120.0f;
  p = p * x + 1.0f / 24.0f;
  p = p * x + 1.0f / 6.0f;
  p = p * x + 0.5f;
  p = p * x + 1.0f;
  VF small = p * x;
  VF big = NAME(vexp)(x) - 1.0f;
  return NAME(vsel)(NAME(vabs)(x) < 0.34657359f, small, big);
}

/* log(1 + u) for u in [0, 1]: log1p(u) = 2 atanh(s) with s = u / (2 + u) in
 * [0, 1/3], so s is computed with full relative precision for tiny u, and the
 * odd series 2(s + s^3/3 + ... + s^17/17) truncates below 3e-10 relative. */
SIMD_INLINE VF NAME(vlog1p01)(VF u) {
  VF s = u / (u + 2.0f);
  VF s2 = s * s;
  VF p = NAME(vset)(1.0f / 17.0f);
  p = p * s2 + 1.0f / 15.0f;
  p = p * s2 + 1.0f / 13.0f;
  p = p * s2 + 1.0f / 11.0f;
  p = p * s2 + 1.0f / 9.0f;
  p = p * s2 + 1.0f / 7.0f;
  p = p * s2 + 1.0f / 5.0f;
  p = p * s2 + 1.0f / 3.0f;
  p = p * s2 + 1.0f;
  return 2.0f * s * p;
}

/* tanh(x) = sign(x) * em / (em + 2) with em = expm1(2|x|): no cancellation at
 * any magnitude. |x| is capped at 10, where tanh already rounds to 1. */
SIMD_INLINE VF NAME(vtanh)(VF x) {
  VF a = NAME(vminc)(NAME(vabs)(x), NAME(vset)(10.0f));
  VF em = NAME(vexpm1)(a + a);
  VF r = em / (em + 2.0f);
  return (VF)(((VI)r & 0x7fffffff) | ((VI)x & (int32_t)0x80000000));
}

/* Phi(x) = (1 + erf(x / sqrt 2)) / 2 = erfc(-x / sqrt 2) / 2, through erfc(z)
 * for z = |x| / sqrt 2 >= 0 written as erfc(z) = t exp(-z^2 + P(t)) with
 * t = 2 / (2 + z) and P a degree-10 polynomial in s = (t - 7/12) * 12/5 that
 * we fitted (weighted least squares, mpmath) to log(erfc(z) / t) + z^2 on
 * z in [0, 10]; the fit error is 5.7e-9, i.e. erfc has that relative error
 * before rounding. z^2 = x^2 / 2 is carried exactly as a hi + lo pair (FMA) so
 * the large exponent -z^2 adds no error, and Phi for x < 0 is erfc / 2 itself
 * (no 1 - erf cancellation), so gelu keeps relative accuracy for negative x.
 * |x| is capped at 13.5 (erfc there is ~1e-41); callers handle beyond. */
SIMD_INLINE VF NAME(vphi)(VF x) {
  VF ax = NAME(vminc)(NAME(vabs)(x), NAME(vset)(13.5f));
  VF z = ax * 0.70710678118654752f;
  VF t = 2.0f / (z + 2.0f);
  VF s = (t - 0.58333333333333333f) * 2.4f;
  VF p = NAME(vset)(-2.180004002e-05f);
  p = p * s + 5.509544927e-05f;
  p = p * s + 1.272666756e-04f;
  p = p * s + -5.348436478e-04f;
  p = p * s + -2.737263169e-04f;
  p = p * s + 3.707863013e-03f;
  p = p * s + -1.046330870e-03f;
  p = p * s + -2.947044191e-02f;
  p = p * s + 1.574516826e-02f;
  p = p * s + 5.703071106e-01f;
  p = p * s + -5.585953555e-01f;
  VF h = ax * ax;
  VF l = NAME(vsqr_err)(ax, h); /* exact: ax^2 = h + l */
  VF half_erfc = 0.5f * t * NAME(vexp2part)(-0.5f * h, p - 0.5f * l);
  return NAME(vsel)(x < 0.0f, half_erfc, 1.0f - half_erfc);
}

/* Activation parameters in the form the vector code uses. */
typedef struct NAME(act_params) {
  VF alpha, beta;
} NAME(act_params);

/* act(x) for one vector; `kind` is a compile-time constant at every call site
 * that matters (see ADNN_ACT_SWITCH), so the switch folds away. Each case
 * matches adnn_ref_activation_apply, including its NaN and infinity rules. */
SIMD_INLINE VF NAME(vact)(int kind, VF x, const NAME(act_params) *pa) {
  const VF zero = {0};
  const VF ninf = NAME(vset)(-__builtin_inff());
  switch (kind) {
    case ADNN_ACTIVATION_IDENTITY:
      return x;
    case ADNN_ACTIVATION_RELU:
      return NAME(vsel)(x < zero, zero, x);
    case ADNN_ACTIVATION_LEAKY_RELU: {
      /* alpha = 0 with x = -inf gives 0 (the limit), not 0 * inf = NaN. */
      VF r = pa->alpha * x;
      r = NAME(vsel)(NAME(visnan)(r), zero, r);
      return NAME(vsel)(x < zero, r, x);
    }
    case ADNN_ACTIVATION_ELU:
      return NAME(vsel)(x < zero, pa->alpha * NAME(vexpm1)(x), x);
    case ADNN_ACTIVATION_CLAMP:
      return NAME(vsel)(x < pa->alpha, pa->alpha, NAME(vsel)(x > pa->beta, pa->beta, x));
    case ADNN_ACTIVATION_SIGMOID:
      return 1.0f / (1.0f + NAME(vexp)(-x));
    case ADNN_ACTIVATION_TANH:
      return NAME(vtanh)(x);
    case ADNN_ACTIVATION_GELU: {
      VF r = x * NAME(vphi)(x);
      return NAME(vsel)(x < -13.5f, zero, r);
    }
    case ADNN_ACTIVATION_GELU_TANH: {
      /* (1 + tanh(u)) / 2 = 1 / (1 + exp(-2u)): no cancellation for x < 0. */
      VF u = 0.79788456080286536f * (x + 0.044715f * x * x * x);
      VF r = x / (1.0f + NAME(vexp)(-2.0f * u));
      return NAME(vsel)(x == ninf, zero, r);
    }
    case ADNN_ACTIVATION_SILU: {
      VF r = x / (1.0f + NAME(vexp)(-x));
      return NAME(vsel)(x == ninf, zero, r);
    }
    case ADNN_ACTIVATION_SOFTPLUS: {
      VF m = NAME(vsel)(x > zero, x, zero);
      return m + NAME(vlog1p01)(NAME(vexp)(-NAME(vabs)(x)));
    }
    case ADNN_ACTIVATION_HARDSWISH: {
      VF r = x * (x + 3.0f) * (1.0f / 6.0f);
      return NAME(vsel)(x <= -3.0f, zero, NAME(vsel)(x >= 3.0f, x, r));
    }
  }
  return x;
}

/* Expands `body` once per activation kind with ACT bound to a constant, so a
 * loop written around NAME(vact)(ACT, ...) is specialized per kind and the
 * per-element switch disappears. */
#ifndef ADNN_ACT_SWITCH
#define ADNN_ACT_CASE(k, ...) \
  case k: {                   \
    enum { ACT = k };         \
    __VA_ARGS__;              \
  } break;
#define ADNN_ACT_SWITCH(kind, ...)                         \
  switch (kind) {                                          \
    ADNN_ACT_CASE(ADNN_ACTIVATION_IDENTITY, __VA_ARGS__)   \
    ADNN_ACT_CASE(ADNN_ACTIVATION_RELU, __VA_ARGS__)       \
    ADNN_ACT_CASE(ADNN_ACTIVATION_LEAKY_RELU, __VA_ARGS__) \
    ADNN_ACT_CASE(ADNN_ACTIVATION_ELU, __VA_ARGS__)        \
    ADNN_ACT_CASE(ADNN_ACTIVATION_CLAMP, __VA_ARGS__)      \
    ADNN_ACT_CASE(ADNN_ACTIVATION_SIGMOID, __VA_ARGS__)    \
    ADNN_ACT_CASE(ADNN_ACTIVATION_TANH, __VA_ARGS__)       \
    ADNN_ACT_CASE(ADNN_ACTIVATION_GELU, __VA_ARGS__)       \
    ADNN_ACT_CASE(ADNN_ACTIVATION_GELU_TANH, __VA_ARGS__)  \
    ADNN_ACT_CASE(ADNN_ACTIVATION_SILU, __VA_ARGS__)       \
    ADNN_ACT_CASE(ADNN_ACTIVATION_SOFTPLUS, __VA_ARGS__)   \
    ADNN_ACT_CASE(ADNN_ACTIVATION_HARDSWISH, __VA_ARGS__)  \
  }
#endif

/* An activation's parameters as vectors. */
static inline NAME(act_params) NAME(act_params_make)(const adnn_activation *a) {
  NAME(act_params) p;
  p.alpha = NAME(vset)((float)a->alpha);
  p.beta = NAME(vset)((float)a->beta);
  return p;
}

#endif /* ADNN_SIMD_ISA */
