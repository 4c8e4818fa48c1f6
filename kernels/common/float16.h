/*
 * Scalar conversions between the 16-bit floating types (IEEE binary16, "F16",
 * and bfloat16, "BF16") and F32/F64, shared by the reference kernels, the CPU
 * kernels' scalar edges and the CUDA host code. They are the definition that
 * every vector conversion must reproduce bit for bit (doc/numerics.md):
 *
 *   - narrowing rounds to nearest, ties to even, in ONE rounding: F64 goes to
 *     F16/BF16 directly, never through F32, because rounding twice can differ
 *     from rounding once (a value just above a tie in F64 can become an exact
 *     tie in F32 and then round down);
 *   - NaN stays NaN with its sign; the payload keeps its top bits and a quiet
 *     bit is set, so a signalling NaN never turns into infinity;
 *   - F16 overflow gives infinity of the right sign (values from
 *     65520 = 65504 + half an ulp upwards, the RNE threshold); BF16 has F32's
 *     exponent range, so only F32 values rounding past FLT_MAX overflow;
 *   - subnormals are kept in both directions (no flush to zero);
 *   - widening (F16/BF16 to F32/F64) is exact; an F16 NaN widens with its
 *     payload and the quiet bit set (as F16C's vcvtph2ps does), a BF16 NaN
 *     widens bit for bit (BF16 widening is a 16-bit shift everywhere).
 *
 * Header-only, plain C that also compiles as C++ and, under nvcc, as host and
 * device code (ADNN_F16_FN), so that the CUDA kernels run this very
 * definition instead of a device intrinsic that might differ on NaN. The bits
 * are handled as integers, so the results do not depend on the compiler's
 * floating-point mode or on the FPU's flush-to-zero setting.
 */
#ifndef ADNN_KERNELS_COMMON_FLOAT16_H
#define ADNN_KERNELS_COMMON_FLOAT16_H

#include <stdint.h>
#include <string.h>

/* Every function's qualifiers: host and device under nvcc (the reorder and
 * matmul kernels call these in device code), static inline elsewhere; a
 * translation unit may define it first (kernels/cuda/float16.cuh). */
#ifndef ADNN_F16_FN
#if defined(__CUDACC__)
#define ADNN_F16_FN __host__ __device__ static inline
#else
#define ADNN_F16_FN static inline
#endif
#endif

ADNN_F16_FN uint32_t adnn_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

ADNN_F16_FN float adnn_f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

ADNN_F16_FN uint64_t adnn_f64_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

ADNN_F16_FN double adnn_f64_from_bits(uint64_t u) {
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* ---- BF16 ---------------------------------------------------------------- */

/* BF16 is the top half of an F32: widening appends 16 zero bits. */
ADNN_F16_FN float adnn_bf16_to_f32(uint16_t h) { return adnn_f32_from_bits((uint32_t)h << 16); }

ADNN_F16_FN uint16_t adnn_f32_to_bf16(float f) {
  uint32_t u = adnn_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u); /* NaN: quiet */
  /* Adding 0x7fff plus the lowest kept bit rounds to nearest with ties to
   * even; a carry out of the mantissa moves to the exponent, which gives
   * infinity exactly when the value rounds past the largest finite BF16. */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

/* ---- F16 ----------------------------------------------------------------- */

ADNN_F16_FN float adnn_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  /* Infinity, or NaN with its payload and the quiet bit set, as the F16C and
   * AVX512-FP16 instructions widen it (a signalling NaN comes out quiet). */
  if (exp == 0x1fu) return adnn_f32_from_bits(sign | 0x7f800000u | (man << 13) | (man ? 0x400000u : 0u));
  if (exp == 0) {
    if (man == 0) return adnn_f32_from_bits(sign);
    /* A subnormal F16 is man * 2^-24: normalize it for F32. */
    int shift = 0;
    while (!(man & 0x400u)) {
      man <<= 1;
      shift++;
    }
    man &= 0x3ffu;
    return adnn_f32_from_bits(sign | (uint32_t)(113 - shift) << 23 | (man << 13));
  }
  return adnn_f32_from_bits(sign | (exp + 112u) << 23 | (man << 13));
}

/* Rounds the magnitude `mag` (an unsigned fixed-point value with `drop` bits
 * below the F16 result's last place) to nearest even, dropping those bits. */
ADNN_F16_FN uint32_t adnn_f16__round_shift(uint64_t mag, unsigned drop) {
  if (drop >= 64) return 0;
  uint64_t kept = mag >> drop;
  uint64_t rest = mag & (((uint64_t)1 << drop) - 1);
  uint64_t half = (uint64_t)1 << (drop - 1);
  if (rest > half || (rest == half && (kept & 1u))) kept++;
  return (uint32_t)kept;
}

/* Narrowing from a binary format with `mbits` mantissa bits and exponent
 * bias `bias`, given as sign, biased exponent and mantissa fields of a finite
 * nonzero value: one rounding, carries into the exponent and to infinity
 * included. */
ADNN_F16_FN uint16_t adnn_f16__from_fields(uint32_t sign, int64_t exp, uint64_t man,
                                             unsigned mbits, int64_t bias) {
  uint64_t sig = man;      /* significand as an integer: value = sig * 2^(e) */
  int64_t e;               /* unbiased exponent of the significand's last bit */
  if (exp == 0) {          /* source subnormal */
    e = 1 - bias - (int64_t)mbits;
  } else {
    sig |= (uint64_t)1 << mbits;
    e = exp - bias - (int64_t)mbits;
  }
  /* The F16 result's last place: 2^-24 for subnormals, 2^(E-10) for a
   * normal of exponent E. Find E from the value's leading bit. */
  int lead = 63;
  while (!((sig >> lead) & 1u)) lead--;
  int64_t top = e + lead; /* the value lies in [2^top, 2^(top+1)) */
  int64_t last = top - 10;
  if (last < -24) last = -24;
  int64_t drop = last - e;
  uint32_t r;
  if (drop <= 0) r = (uint32_t)(sig << (unsigned)(-drop)); /* exact (cannot overflow here) */
  else r = adnn_f16__round_shift(sig, (unsigned)drop);
  /* r is the significand in units of 2^last. */
  uint32_t bits;
  if (last == -24) {
    /* Subnormal range: r < 2^10 is a subnormal; r == 2^10 rounded up to the
     * smallest normal, whose encoding is the same integer. */
    bits = r;
  } else {
    int64_t E = last + 10; /* r in [2^10, 2^11], 2^11 when rounding carried */
    if (r == 0x800u) {
      r >>= 1;
      E++;
    }
    if (E > 15) return (uint16_t)(sign | 0x7c00u);
    bits = (uint32_t)(E + 15) << 10 | (r & 0x3ffu);
  }
  return (uint16_t)(sign | bits);
}

ADNN_F16_FN uint16_t adnn_f32_to_f16(float f) {
  uint32_t u = adnn_f32_bits(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t exp = (u >> 23) & 0xffu;
  uint32_t man = u & 0x7fffffu;
  if (exp == 0xffu) {
    if (man == 0) return (uint16_t)(sign | 0x7c00u);
    return (uint16_t)(sign | 0x7e00u | (man >> 13)); /* NaN: quiet, top payload bits */
  }
  if (exp == 0 && man == 0) return (uint16_t)sign;
  return adnn_f16__from_fields(sign, exp, man, 23, 127);
}

ADNN_F16_FN uint16_t adnn_f64_to_f16(double d) {
  uint64_t u = adnn_f64_bits(d);
  uint32_t sign = (uint32_t)(u >> 48) & 0x8000u;
  int64_t exp = (int64_t)((u >> 52) & 0x7ffu);
  uint64_t man = u & 0xfffffffffffffull;
  if (exp == 0x7ff) {
    if (man == 0) return (uint16_t)(sign | 0x7c00u);
    return (uint16_t)(sign | 0x7e00u | (uint32_t)(man >> 42));
  }
  if (exp == 0 && man == 0) return (uint16_t)sign;
  /* Values far below the smallest F16 subnormal round to zero; catching them
   * here keeps every shift in adnn_f16__from_fields below 64 bits. */
  if (exp < 1023 - 40) return (uint16_t)sign;
  return adnn_f16__from_fields(sign, exp, man, 52, 1023);
}

ADNN_F16_FN double adnn_f16_to_f64(uint16_t h) { return (double)adnn_f16_to_f32(h); }
ADNN_F16_FN double adnn_bf16_to_f64(uint16_t h) { return (double)adnn_bf16_to_f32(h); }

ADNN_F16_FN uint16_t adnn_f64_to_bf16(double d) {
  uint64_t u = adnn_f64_bits(d);
  uint32_t sign = (uint32_t)(u >> 48) & 0x8000u;
  int64_t exp = (int64_t)((u >> 52) & 0x7ffu);
  uint64_t man = u & 0xfffffffffffffull;
  if (exp == 0x7ff) {
    if (man == 0) return (uint16_t)(sign | 0x7f80u);
    return (uint16_t)(sign | 0x7fc0u | (uint32_t)(man >> 45));
  }
  if (exp == 0 && man == 0) return (uint16_t)sign;
  /* BF16: 7 mantissa bits, bias 127, subnormals below 2^-126 with last place
   * 2^-133. Same scheme as F16 with those constants, done inline. */
  uint64_t sig;
  int64_t e;
  if (exp == 0) {
    sig = man;
    e = 1 - 1023 - 52;
  } else {
    sig = man | ((uint64_t)1 << 52);
    e = exp - 1023 - 52;
  }
  int lead = 63;
  while (!((sig >> lead) & 1u)) lead--;
  int64_t top = e + lead;
  if (top < -134 - 1) return (uint16_t)sign; /* below half the smallest subnormal */
  if (top > 128) return (uint16_t)(sign | 0x7f80u);
  int64_t last = top - 7;
  if (last < -133) last = -133;
  int64_t drop = last - e; /* always > 0: F64 has more mantissa bits */
  uint64_t r;
  if (drop >= 64) {
    r = 0;
    /* sig < 2^53 <= half of 2^drop: rounds to zero */
  } else {
    uint64_t kept = sig >> drop;
    uint64_t rest = sig & (((uint64_t)1 << drop) - 1);
    uint64_t half = (uint64_t)1 << (drop - 1);
    if (rest > half || (rest == half && (kept & 1u))) kept++;
    r = kept;
  }
  uint32_t bits;
  if (last == -133) {
    bits = (uint32_t)r; /* subnormal, or 0x80 = the smallest normal */
  } else {
    int64_t E = last + 7;
    if (r == 0x100u) {
      r >>= 1;
      E++;
    }
    if (E > 127) return (uint16_t)(sign | 0x7f80u);
    bits = (uint32_t)(E + 127) << 7 | ((uint32_t)r & 0x7fu);
  }
  return (uint16_t)(sign | bits);
}

#endif /* ADNN_KERNELS_COMMON_FLOAT16_H */
