/*
 * Block conversions between the 16-bit floating types (F16, BF16) and F32 for
 * the CPU kernels' low-precision paths: a kernel converts a block of its
 * 16-bit input into an F32 stack buffer, runs its F32 vector code on it and
 * converts the result back, so that the arithmetic is F32 (doc/numerics.md)
 * and every op shares these conversions. The results equal the scalar rules
 * of kernels/common/float16.h bit for bit (lowp.c says how).
 */
#ifndef ADNN_KERNELS_CPU_LOWP_H
#define ADNN_KERNELS_CPU_LOWP_H

#include <stddef.h>
#include <stdint.h>

#include <adnn.h>

/** Elements a low-precision path converts at a time (its F32 stack buffer). */
#define ADNN_CPU_LOWP_BLOCK 512

/** dst[i] = src[i] widened to F32, i < n; t is ADNN_DTYPE_F16 or
 *  ADNN_DTYPE_BF16; isa is the environment's ADNN_CPU_ISA_* (never probed). */
void adnn_cpu_lowp_to_f32(int isa, adnn_dtype t, const uint16_t *src, float *dst, size_t n);

/** dst[i] = src[i] rounded to t (nearest even, one rounding), i < n. */
void adnn_cpu_lowp_from_f32(int isa, adnn_dtype t, const float *src, uint16_t *dst, size_t n);

/** dst[i] = src[i * stride] widened to F32, i < n (the same bits as
 *  adnn_cpu_lowp_to_f32): a unit stride converts in place, any other is
 *  gathered ADNN_CPU_LOWP_BLOCK elements at a time into a stack block first. */
void adnn_cpu_lowp_to_f32_strided(int isa, adnn_dtype t, const uint16_t *src, int64_t stride,
                                  float *dst, size_t n);

/** dst[i * stride] = src[i] rounded to t, i < n (the same bits as
 *  adnn_cpu_lowp_from_f32), scattered from a stack block when stride != 1. */
void adnn_cpu_lowp_from_f32_strided(int isa, adnn_dtype t, const float *src, uint16_t *dst,
                                    int64_t stride, size_t n);

#endif
