/*
 * Element types for the kernels that run one template for F32, F64, F16 and
 * BF16 (activation, binary, pool2d, reduce, softmax, the norms, batch norm,
 * conv2d's direct kernel and epilogue): how an element is widened to the
 * type the arithmetic uses and how a result is stored back, by value
 * (widen, put) or through a pointer (lp_load, lp_store).
 *
 * doc/ops.md "Low precision": an F16/BF16 element is widened exactly to F32
 * (kernels/common/float16.h's functions, compiled for the device by
 * float16.cuh), the arithmetic is F32 or wider and each output is rounded
 * once, to nearest even. `put` takes the result in the type it was computed
 * in, F32 or F64, and narrows it in one step (F64 goes to F16/BF16 directly,
 * never through F32), so no output is rounded twice.
 *
 * For F32 and F64 every function here is the identity, so those kernels
 * compile to what they were before the 16-bit types were added.
 *
 * The 16-bit types are wrappers of their bits (not CUDA's __half and
 * __nv_bfloat16), so that the conversions are float16.h's own, with its NaN
 * rules, whatever the device's intrinsics do.
 *
 * Include after kernels/cuda/common.cuh.
 */
#ifndef ADNN_KERNELS_CUDA_LOWP_ELEM_CUH
#define ADNN_KERNELS_CUDA_LOWP_ELEM_CUH

#include "kernels/cuda/float16.cuh"

namespace adnn_cuda {

struct lowp_f16 {
  uint16_t bits;
};
struct lowp_bf16 {
  uint16_t bits;
};

/* elem<T>::compute: the type of the per-element arithmetic (F32 for the
 * 16-bit types); elem<T>::accum: the type of sums over several elements
 * (pool2d's window; F64 for the 16-bit types, as the CPU's reference
 * kernels accumulate, which keeps window sums of F16 values exact). */
template <typename T> struct elem {
  typedef T compute;
  typedef T accum;
};
template <> struct elem<lowp_f16> {
  typedef float compute;
  typedef double accum;
};
template <> struct elem<lowp_bf16> {
  typedef float compute;
  typedef double accum;
};

/* Exact widening to the compute type. */
__host__ __device__ __forceinline__ float widen(float v) { return v; }
__host__ __device__ __forceinline__ double widen(double v) { return v; }
__host__ __device__ __forceinline__ float widen(lowp_f16 v) { return adnn_f16_to_f32(v.bits); }
__host__ __device__ __forceinline__ float widen(lowp_bf16 v) { return adnn_bf16_to_f32(v.bits); }

/* Stores v into *y with one rounding. F32 from F64 is C's conversion (round
 * to nearest, as the F32 kernels always did). */
__host__ __device__ __forceinline__ void put(float *y, float v) { *y = v; }
__host__ __device__ __forceinline__ void put(float *y, double v) { *y = (float)v; }
__host__ __device__ __forceinline__ void put(double *y, double v) { *y = v; }
__host__ __device__ __forceinline__ void put(lowp_f16 *y, float v) { y->bits = adnn_f32_to_f16(v); }
__host__ __device__ __forceinline__ void put(lowp_f16 *y, double v) { y->bits = adnn_f64_to_f16(v); }
__host__ __device__ __forceinline__ void put(lowp_bf16 *y, float v) { y->bits = adnn_f32_to_bf16(v); }
__host__ __device__ __forceinline__ void put(lowp_bf16 *y, double v) {
  y->bits = adnn_f64_to_bf16(v);
}

/* Pointer forms: lp_load(p) widens *p exactly to elem<S>::compute,
 * lp_store(p, v) stores v (F32 or F64) with one rounding. */
template <typename S>
__host__ __device__ __forceinline__ typename elem<S>::compute lp_load(const S *p) {
  return widen(*p);
}
template <typename S, typename V> __host__ __device__ __forceinline__ void lp_store(S *p, V v) {
  put(p, v);
}

/* The 16-bit element `k` (0..7) of a 16-byte vector (little-endian, element
 * 0 in the low half of .x), and the vector of 8 such elements: the
 * low-precision vector paths load and store 8 elements at a time. */
__device__ __forceinline__ uint16_t u16_of(const uint4 &v, int k) {
  const uint32_t w = k < 2 ? v.x : k < 4 ? v.y : k < 6 ? v.z : v.w;
  return (uint16_t)(k & 1 ? w >> 16 : w & 0xffffu);
}
__device__ __forceinline__ uint4 u16_vec(uint16_t e0, uint16_t e1, uint16_t e2, uint16_t e3,
                                         uint16_t e4, uint16_t e5, uint16_t e6, uint16_t e7) {
  uint4 v;
  v.x = (uint32_t)e0 | (uint32_t)e1 << 16;
  v.y = (uint32_t)e2 | (uint32_t)e3 << 16;
  v.z = (uint32_t)e4 | (uint32_t)e5 << 16;
  v.w = (uint32_t)e6 | (uint32_t)e7 << 16;
  return v;
}

} // namespace adnn_cuda

#endif /* ADNN_KERNELS_CUDA_LOWP_ELEM_CUH */
