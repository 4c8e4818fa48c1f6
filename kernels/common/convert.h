/*
 * One element of the reorder op (doc/ops.md, "Reorder"; doc/numerics.md,
 * "Low precision"): the conversion between any two of F32, F64, F16 and BF16,
 * and the copy of any dtype to itself. This is the definition that the
 * reference kernel runs, that the CPU vector paths reproduce bit for bit and
 * that the CUDA kernel runs as it is (ADNN_F16_FN makes it device code under
 * nvcc). The 16-bit conversions are kernels/common/float16.h's; on top of
 * them:
 *   - the same dtype is a copy of the bits (a signalling NaN stays one);
 *   - F32 <-> F64 are the IEEE conversions (round to nearest even, subnormals
 *     kept), except that NaN is built from its bits, sign and top payload bits
 *     kept and the quiet bit set, as x86's cvtss2sd / cvtsd2ss do, so that no
 *     target's NaN canonicalization changes the result;
 *   - F16 <-> BF16 go through F32, which holds both exactly, so they too
 *     round once.
 * The dtype codes are adnn_dtype's values (adnn.h), repeated here because
 * CUDA device code does not include adnn.h.
 */
#ifndef ADNN_KERNELS_COMMON_CONVERT_H
#define ADNN_KERNELS_COMMON_CONVERT_H

#include <stdint.h>
#include <string.h>

#include "kernels/common/float16.h"

#define ADNN_CVT_F32 1
#define ADNN_CVT_F64 2
#define ADNN_CVT_F16 3
#define ADNN_CVT_BF16 4
#define ADNN_CVT_I8 5
#define ADNN_CVT_I32 6
#define ADNN_CVT_U8 7
#if defined(ADNN_H) && !defined(__cplusplus)
_Static_assert(ADNN_CVT_F32 == ADNN_DTYPE_F32 && ADNN_CVT_F64 == ADNN_DTYPE_F64 &&
                   ADNN_CVT_F16 == ADNN_DTYPE_F16 && ADNN_CVT_BF16 == ADNN_DTYPE_BF16 &&
                   ADNN_CVT_I8 == ADNN_DTYPE_I8 && ADNN_CVT_I32 == ADNN_DTYPE_I32 &&
                   ADNN_CVT_U8 == ADNN_DTYPE_U8,
               "the conversion codes must be adnn_dtype's values");
#endif

/* Bytes per element of a dtype code (0 for an unknown one). */
ADNN_F16_FN int adnn_cvt_size(int t) {
  switch (t) {
    case ADNN_CVT_F64: return 8;
    case ADNN_CVT_F32: case ADNN_CVT_I32: return 4;
    case ADNN_CVT_F16: case ADNN_CVT_BF16: return 2;
    case ADNN_CVT_I8: case ADNN_CVT_U8: return 1;
  }
  return 0;
}

ADNN_F16_FN double adnn_f32_to_f64(float f) {
  const uint32_t u = adnn_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return adnn_f64_from_bits((uint64_t)(u & 0x80000000u) << 32 | 0x7ff8000000000000ull |
                              (uint64_t)(u & 0x7fffffu) << 29);
  return (double)f;
}

ADNN_F16_FN float adnn_f64_to_f32(double d) {
  const uint64_t u = adnn_f64_bits(d);
  if ((u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull)
    return adnn_f32_from_bits(((uint32_t)(u >> 32) & 0x80000000u) | 0x7fc00000u |
                              (uint32_t)((u & 0xfffffffffffffull) >> 29));
  return (float)d;
}

/* Element src of dtype st converted into dst of dtype dt, for the pairs the
 * core allows (two floating types, or one type twice). */
ADNN_F16_FN void adnn_convert_element(int st, const void *src, int dt, void *dst) {
  if (st == dt) {
    memcpy(dst, src, (size_t)adnn_cvt_size(st));
    return;
  }
  if (st == ADNN_CVT_F64) {
    double d;
    memcpy(&d, src, sizeof d);
    if (dt == ADNN_CVT_F32) {
      const float f = adnn_f64_to_f32(d);
      memcpy(dst, &f, sizeof f);
    } else {
      const uint16_t h = dt == ADNN_CVT_F16 ? adnn_f64_to_f16(d) : adnn_f64_to_bf16(d);
      memcpy(dst, &h, sizeof h);
    }
    return;
  }
  float f;
  if (st == ADNN_CVT_F32) {
    memcpy(&f, src, sizeof f);
  } else {
    uint16_t h;
    memcpy(&h, src, sizeof h);
    f = st == ADNN_CVT_F16 ? adnn_f16_to_f32(h) : adnn_bf16_to_f32(h);
  }
  if (dt == ADNN_CVT_F64) {
    const double d = adnn_f32_to_f64(f);
    memcpy(dst, &d, sizeof d);
  } else if (dt == ADNN_CVT_F32) {
    memcpy(dst, &f, sizeof f);
  } else {
    const uint16_t h = dt == ADNN_CVT_F16 ? adnn_f32_to_f16(f) : adnn_f32_to_bf16(f);
    memcpy(dst, &h, sizeof h);
  }
}

#endif /* ADNN_KERNELS_COMMON_CONVERT_H */
