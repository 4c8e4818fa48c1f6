/*
 * One instruction set's copy of a kernel's vector code (see simd_instantiate.h, which
 * includes this once per instruction set with ADNN_SIMD_ISA, VL, NAME and,
 * except for the baseline, ADNN_SIMD_TARGET defined).
 *
 * The region is compiled for the instruction set's target: GCC scopes a
 * target with push_options/target ... pop_options, clang with an attribute
 * applied to every function up to the matching pop. Only the functions of
 * the region get the target, so the rest of the binary still runs on any
 * x86-64 CPU, and the plugin calls a region's functions only when the CPU and
 * the OS support its instruction set.
 */
#define ADNN_SIMD_PRAGMA_(text) _Pragma(#text)
#define ADNN_SIMD_PRAGMA(text) ADNN_SIMD_PRAGMA_(text)

#ifdef ADNN_SIMD_TARGET
#if defined(__clang__)
ADNN_SIMD_PRAGMA(clang attribute push(__attribute__((target(ADNN_SIMD_TARGET))),
                                      apply_to = function))
#else
#pragma GCC push_options
ADNN_SIMD_PRAGMA(GCC target(ADNN_SIMD_TARGET))
#endif
#elif !defined(__clang__)
#pragma GCC push_options
#endif

#include "kernels/cpu/simd.h"
#include ADNN_SIMD_KERNEL

#if defined(__clang__)
#ifdef ADNN_SIMD_TARGET
#pragma clang attribute pop
#endif
#else
#pragma GCC pop_options
#endif

#undef ADNN_SIMD_PRAGMA
#undef ADNN_SIMD_PRAGMA_
#undef ADNN_SIMD_TARGET
#undef ADNN_SIMD_ISA
#undef VL
#undef NAME
#undef VF
#undef VI
#undef VDH
#undef SIMD_INLINE
