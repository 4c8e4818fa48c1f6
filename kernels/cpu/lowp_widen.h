/*
 * Running an op's F16/BF16 problem through its F32 implementation
 * ("widening"): the 16-bit tensors are widened to F32 (exactly: every F16 and
 * BF16 value is an F32 value) into the workspace, the F32 implementation the
 * plugin would choose for the same problem in F32 runs on them, and its 16-bit
 * outputs are rounded once to their dtype (nearest even, kernels/cpu/lowp.h).
 * The result is the op's F32 result on the rounded inputs plus one rounding
 * of each output: the F32 bound of doc/numerics.md plus half an ulp of the
 * 16-bit type. The parameter and statistics tensors of ADNN_OP_PARAM_DTYPE
 * are F32 already and pass through untouched.
 *
 * The conversions run on the plugin's threads in blocks; nothing is
 * allocated at run time. lowp_widen.c holds the "lowp" implementation of
 * each op that has no native 16-bit kernel (kernels/cpu/impl_list.h lists
 * them first for their op: they take only F16 and BF16).
 */
#ifndef ADNN_KERNELS_CPU_LOWP_WIDEN_H
#define ADNN_KERNELS_CPU_LOWP_WIDEN_H

#include <stddef.h>
#include <stdint.h>

#include <adnn.h>

/** dst[i] = src[i] widened to F32, i < n, t F16 or BF16: in blocks on the
 *  plugin's pool (inline when called from one of its tasks or when n is one
 *  block). Thread-safe as adnn_cpu_parallel_for is. */
void adnn_cpu_lowp_to_f32_parallel(int isa, adnn_dtype t, const uint16_t *src, float *dst,
                                   int64_t n);

/** dst[i] = src[i] rounded to t, i < n, in blocks on the plugin's pool. */
void adnn_cpu_lowp_from_f32_parallel(int isa, adnn_dtype t, const float *src, uint16_t *dst,
                                     int64_t n);

#endif
