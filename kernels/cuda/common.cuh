/*
 * Device helpers shared by the CUDA kernels: strided offsets, launch sizes,
 * warp/block reductions and the scalar activation definitions.
 *
 * Indexing convention everywhere: logical (row-major) indices and element
 * offsets are int64_t, so tensors beyond 2^31 elements are addressed
 * correctly; loops are grid-stride loops, so any element count is covered by
 * any grid size.
 */
#ifndef ADNN_CUDA_COMMON_CUH
#define ADNN_CUDA_COMMON_CUH

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "kernels/cuda/cuda_kernels.h"

#define ADNN_CUDA_API extern "C" __attribute__((visibility("hidden")))

namespace adnn_cuda {

/* Offset in tensor `which` of nd of the logical row-major index `lin`. */
__device__ __forceinline__ int64_t nd_offset(const adnn_cuda_nd &nd, int which, int64_t lin) {
  int64_t off = 0;
#pragma unroll
  for (int i = ADNN_CUDA_MAX_RANK - 1; i >= 0; i--) {
    if (i < nd.rank) {
      const int64_t d = nd.dims[i];
      off += (lin % d) * nd.strides[which][i];
      lin /= d;
    }
  }
  return off;
}

/* Offsets of two tensors at once (one division chain). */
__device__ __forceinline__ void nd_offset2(const adnn_cuda_nd &nd, int64_t lin, int64_t &o0,
                                           int64_t &o1) {
  int64_t a = 0, b = 0;
#pragma unroll
  for (int i = ADNN_CUDA_MAX_RANK - 1; i >= 0; i--) {
    if (i < nd.rank) {
      const int64_t d = nd.dims[i];
      const int64_t idx = lin % d;
      lin /= d;
      a += idx * nd.strides[0][i];
      b += idx * nd.strides[1][i];
    }
  }
  o0 = a;
  o1 = b;
}

/* Blocks for a grid-stride loop over `work` items with `threads` per block:
 * enough to fill the device once (SMs x resident blocks per SM), never more
 * than the work needs, at least 1. */
static inline unsigned grid_for(const adnn_cuda_launch *l, int64_t work, int threads) {
  int64_t need = (work + threads - 1) / threads;
  int per_sm = l->max_threads_per_sm > 0 ? l->max_threads_per_sm / threads : 1;
  if (per_sm < 1) per_sm = 1;
  int64_t full = (int64_t)(l->sm_count > 0 ? l->sm_count : 1) * per_sm;
  int64_t g = need < full ? need : full;
  if (g < 1) g = 1;
  return (unsigned)g;
}

/* Blocks for "one block per row" kernels that loop over rows grid-stride:
 * capped at the largest grid x dimension, and at a few waves of the device. */
static inline unsigned grid_rows(const adnn_cuda_launch *l, int64_t rows, int threads) {
  int per_sm = l->max_threads_per_sm > 0 ? l->max_threads_per_sm / threads : 1;
  if (per_sm < 1) per_sm = 1;
  int64_t cap = (int64_t)(l->sm_count > 0 ? l->sm_count : 1) * per_sm * 8;
  if (cap > 2147483647) cap = 2147483647;
  int64_t g = rows < cap ? rows : cap;
  if (g < 1) g = 1;
  return (unsigned)g;
}

template <typename T> __device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/* ---- activations: the scalar definitions of doc/ops.md -------------------
 * Written like kernels/ref/ref_activation.c so that NaN takes the same branch
 * (comparisons with NaN are false) and infinities give the same limits. */
__device__ __forceinline__ float f_expm1(float x) { return expm1f(x); }
__device__ __forceinline__ double f_expm1(double x) { return expm1(x); }
__device__ __forceinline__ float f_exp(float x) { return expf(x); }
__device__ __forceinline__ double f_exp(double x) { return exp(x); }
__device__ __forceinline__ float f_log(float x) { return logf(x); }
__device__ __forceinline__ double f_log(double x) { return log(x); }
__device__ __forceinline__ float f_log1p(float x) { return log1pf(x); }
__device__ __forceinline__ double f_log1p(double x) { return log1p(x); }
__device__ __forceinline__ float f_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double f_tanh(double x) { return tanh(x); }
__device__ __forceinline__ float f_erf(float x) { return erff(x); }
__device__ __forceinline__ double f_erf(double x) { return erf(x); }
__device__ __forceinline__ float f_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double f_sqrt(double x) { return sqrt(x); }

template <typename T> __device__ __forceinline__ T activate(const adnn_cuda_act &a, T x) {
  const T alpha = (T)a.alpha, beta = (T)a.beta;
  switch (a.kind) {
    case 0: /* identity */
      return x;
    case 1: /* relu */
      return x < T(0) ? T(0) : x;
    case 2: /* leaky relu; alpha 0 is relu, also at -inf (0 * -inf would be NaN) */
      return x < T(0) ? (alpha == T(0) ? T(0) : alpha * x) : x;
    case 3: /* elu */
      return x < T(0) ? alpha * f_expm1(x) : x;
    case 4: /* clamp */
      return x < alpha ? alpha : (x > beta ? beta : x);
    case 5: /* sigmoid */
      return T(1) / (T(1) + f_exp(-x));
    case 6: /* tanh */
      return f_tanh(x);
    case 7: /* gelu (erf) */
      if (isinf(x)) return x > T(0) ? x : T(0);
      return T(0.5) * x * (T(1) + f_erf(x * T(0.70710678118654752440)));
    case 8: { /* gelu (tanh) */
      if (isinf(x)) return x > T(0) ? x : T(0);
      const T k = T(0.79788456080286535588); /* sqrt(2 / pi) */
      return T(0.5) * x * (T(1) + f_tanh(k * (x + T(0.044715) * x * x * x)));
    }
    case 9: /* silu */
      if (isinf(x)) return x > T(0) ? x : T(0);
      return x / (T(1) + f_exp(-x));
    case 10: /* softplus, without overflow */
      return x > T(0) ? x + f_log1p(f_exp(-x)) : f_log1p(f_exp(x));
    case 11: /* hardswish */
      if (x <= T(-3)) return T(0);
      if (x >= T(3)) return x;
      return x * (x + T(3)) / T(6);
  }
  return x * T(NAN);
}

} // namespace adnn_cuda

#endif /* ADNN_CUDA_COMMON_CUH */
