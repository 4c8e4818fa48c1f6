/*
 * The instantiation of a kernel's vector code once per instruction set of
 * ADNN_CPU_ISA_LIST (simd_isa.h explains why). A kernel file defines
 * ADNN_SIMD_KERNEL to its own path and includes this header; each block
 * below sets the region's id, target, lane count and suffix, and
 * simd_region.h opens the target region, includes the vector helpers
 * (simd.h) and the kernel's vector section, and closes it again.
 *
 * This header has no include guard on purpose: a file may instantiate
 * itself only once, but the header is kept apart from simd_isa.h so that the
 * list of instruction sets (which simd.h needs) and the instantiation (which
 * includes simd.h) do not include each other.
 */
#ifndef ADNN_SIMD_KERNEL
#error "define ADNN_SIMD_KERNEL to the kernel file before including simd_instantiate.h"
#endif
#define ADNN_SIMD_VECTOR_PART

#define ADNN_SIMD_ISA ADNN_CPU_ISA_AVX512
#define ADNN_SIMD_TARGET "avx512f"
#define VL 16
#define NAME(f) f##__avx512
#include "kernels/cpu/simd_region.h"

#define ADNN_SIMD_ISA ADNN_CPU_ISA_AVX2
#define ADNN_SIMD_TARGET "avx2,fma"
#define VL 8
#define NAME(f) f##__avx2
#include "kernels/cpu/simd_region.h"

/* The baseline: no target attribute, the compiler's default instruction set. */
#define ADNN_SIMD_ISA ADNN_CPU_ISA_BASE
#define VL 4
#define NAME(f) f##__base
#include "kernels/cpu/simd_region.h"

#undef ADNN_SIMD_VECTOR_PART
#undef ADNN_SIMD_KERNEL
