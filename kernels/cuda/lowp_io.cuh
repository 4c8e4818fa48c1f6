/*
 * Element access for kernels templated on their storage type S (float,
 * double, or the 16-bit lp_f16 / lp_bf16) with a compute type
 * lp_compute<S>::type (F32 for F16/BF16, doc/ops.md "Low precision"):
 * lp_load widens exactly, lp_store rounds once, to nearest even, through
 * kernels/common/float16.h's own functions (float16.cuh), so that a kernel
 * written once over S gives the F32 kernel's arithmetic on the widened data
 * and one rounding of each output, as the CPU plugin's F16/BF16 paths do.
 * For float and double both are plain accesses.
 */
#ifndef ADNN_KERNELS_CUDA_LOWP_IO_CUH
#define ADNN_KERNELS_CUDA_LOWP_IO_CUH

#include "kernels/cuda/float16.cuh"

namespace adnn_cuda {

/* The 16-bit storage types, as their bits. */
struct lp_f16 {
  uint16_t bits;
};
struct lp_bf16 {
  uint16_t bits;
};

template <typename S> struct lp_compute { typedef S type; };
template <> struct lp_compute<lp_f16> { typedef float type; };
template <> struct lp_compute<lp_bf16> { typedef float type; };

__device__ __forceinline__ float lp_load(const float *p) { return *p; }
__device__ __forceinline__ double lp_load(const double *p) { return *p; }
__device__ __forceinline__ float lp_load(const lp_f16 *p) { return adnn_f16_to_f32(p->bits); }
__device__ __forceinline__ float lp_load(const lp_bf16 *p) { return adnn_bf16_to_f32(p->bits); }

__device__ __forceinline__ void lp_store(float *p, float v) { *p = v; }
__device__ __forceinline__ void lp_store(double *p, double v) { *p = v; }
__device__ __forceinline__ void lp_store(lp_f16 *p, float v) { p->bits = adnn_f32_to_f16(v); }
__device__ __forceinline__ void lp_store(lp_bf16 *p, float v) { p->bits = adnn_f32_to_bf16(v); }
/* From a double accumulator (an "exact" kernel): still one rounding. */
__device__ __forceinline__ void lp_store(lp_f16 *p, double v) { p->bits = adnn_f64_to_f16(v); }
__device__ __forceinline__ void lp_store(lp_bf16 *p, double v) { p->bits = adnn_f64_to_bf16(v); }

} // namespace adnn_cuda

#endif /* ADNN_KERNELS_CUDA_LOWP_IO_CUH */
