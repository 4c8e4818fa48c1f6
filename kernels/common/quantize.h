/*
 * The one scalar definition of quantize and dequantize (doc/ops.md
 * "Quantize and dequantize", doc/numerics.md "Quantization"), shared by the
 * reference kernels, the CPU kernel's remainder loop and the CUDA kernel, so
 * that every backend is bit for bit the same function.
 *
 * quantize: q = x / scale, one IEEE F32 division (a multiplication by the
 * reciprocal rounds differently and is not used anywhere); q is clamped to
 * [lo - zp, hi - zp] (integers, exact in F32), which saturates without ever
 * converting an out-of-range value (clamping then rounding equals rounding
 * then clamping because the bounds are integers); the clamped value is
 * rounded to nearest even by floor and comparison, which does not depend on
 * the rounding mode; zp is added in integer arithmetic. NaN gives zp.
 * The division depends on MXCSR's DAZ/FTZ bits for subnormal x or scale: the
 * kernels clear them while they run (doc/numerics.md).
 *
 * dequantize: (float)(x - zp) * scale: x - zp is an exact integer (|.| <=
 * 510 with zp in range, any int32 zp per channel computed in int64), its
 * conversion to F32 is exact for in-range values, and the product is one
 * F32 multiplication.
 */
#ifndef ADNN_KERNELS_COMMON_QUANTIZE_H
#define ADNN_KERNELS_COMMON_QUANTIZE_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define ADNN_Q_FN static inline __host__ __device__
#else
#define ADNN_Q_FN static inline
#endif

/* Rounds v (|v| small enough to be exact after floor) to nearest, ties to
 * even, without reading the rounding mode. */
ADNN_Q_FN float adnn_q_rne(float v) {
  const float f = floorf(v);
  const float d = v - f; /* exact: v and f are within one unit */
  if (d > 0.5f) return f + 1.0f;
  if (d < 0.5f) return f;
  return fmodf(f, 2.0f) == 0.0f ? f : f + 1.0f;
}

/* saturate(rne(x / scale) + zp) into [lo, hi]. */
ADNN_Q_FN int32_t adnn_q_quantize(float x, float scale, int32_t zp, int32_t lo, int32_t hi) {
  if (x != x) return zp < lo ? lo : zp > hi ? hi : zp;
  /* Per-channel zero points are unchecked run-time values: clamp in int64
   * so that an out-of-range one cannot overflow. */
  const int64_t zl = (int64_t)zp;
  float q = x / scale;
  const float qlo = (float)((int64_t)lo - zl), qhi = (float)((int64_t)hi - zl);
  if (q != q) return zp < lo ? lo : zp > hi ? hi : zp; /* 0/0 or inf/inf from a bad scale */
  if (q < qlo) q = qlo;
  if (q > qhi) q = qhi;
  int64_t r = (int64_t)adnn_q_rne(q) + zl;
  return (int32_t)(r < lo ? lo : r > hi ? hi : r);
}

/* (float)(x - zp) * scale. */
ADNN_Q_FN float adnn_q_dequantize(int32_t x, float scale, int32_t zp) {
  return (float)((int64_t)x - (int64_t)zp) * scale;
}

#endif
