/*
 * Device helpers shared by the CUDA kernels: index decomposition, launch
 * sizes, warp and block reductions, and the scalar activation definitions.
 *
 * Indexing convention everywhere: logical (row-major) indices and element
 * offsets are int64_t, so tensors beyond 2^31 elements are addressed
 * correctly; loops are grid-stride loops, so any element count is covered by
 * any grid size.
 *
 * Kernels that synchronize the threads of a block (__syncthreads, warp
 * shuffles, block_reduce below) are named *_rows: the host emulator of
 * t/cuda-emu/ runs those with one host thread per CUDA thread and every other
 * kernel serially.
 */
#ifndef ADNN_CUDA_COMMON_CUH
#define ADNN_CUDA_COMMON_CUH

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include <adnn.h>

#include "kernels/cuda/cuda_kernels.h"

#define ADNN_CUDA_API extern "C" __attribute__((visibility("hidden")))

namespace adnn_cuda {

/* ---- indices -------------------------------------------------------------- */

/* Decomposes the row-major index `lin` over nd's dims (dims[rank - 1] the
 * fastest) into the element offsets of nd's first NT tensors, and returns the
 * index along dim `at` (0 when `at` is not a dim). The loop is unrolled over
 * the largest rank so that nd stays in registers and parameter space. */
template <int NT>
__device__ __forceinline__ int64_t nd_offsets(const adnn_nd &nd, int64_t lin, int64_t (&off)[NT],
                                              int at = -1) {
#pragma unroll
  for (int t = 0; t < NT; t++) off[t] = 0;
  int64_t at_index = 0;
#pragma unroll
  for (int i = ADNN_ND_MAX_RANK - 1; i >= 0; i--) {
    if (i < nd.rank) {
      const int64_t d = nd.dims[i];
      const int64_t idx = lin % d;
      lin /= d;
#pragma unroll
      for (int t = 0; t < NT; t++) off[t] += idx * nd.strides[t][i];
      if (i == at) at_index = idx;
    }
  }
  return at_index;
}

/* The index idx[4] of element number `lin` of a 4-D tensor of `dims` whose
 * elements are numbered in memory order (order.dims slowest first): threads
 * with consecutive numbers then touch neighbouring addresses. The mapping is a
 * bijection for any order, since every dim gets exactly its own radix. */
__device__ __forceinline__ void index4(int64_t lin, const int64_t dims[4],
                                       const adnn_cuda_memory_order &order, int64_t idx[4]) {
  for (int k = 3; k >= 0; k--) {
    const int d = order.dims[k];
    idx[d] = lin % dims[d];
    lin /= dims[d];
  }
}

/* ---- launch sizes --------------------------------------------------------- */

/* Blocks for a grid-stride loop over `work` items with `threads` per block:
 * enough to fill the device once (SMs x resident blocks per SM), never more
 * than the work needs, at least 1. */
static inline unsigned grid_for(const adnn_cuda_launch_config *l, int64_t work, int threads) {
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
static inline unsigned grid_rows(const adnn_cuda_launch_config *l, int64_t rows, int threads) {
  int per_sm = l->max_threads_per_sm > 0 ? l->max_threads_per_sm / threads : 1;
  if (per_sm < 1) per_sm = 1;
  int64_t cap = (int64_t)(l->sm_count > 0 ? l->sm_count : 1) * per_sm * 8;
  if (cap > 2147483647) cap = 2147483647;
  int64_t g = rows < cap ? rows : cap;
  if (g < 1) g = 1;
  return (unsigned)g;
}

/* Threads per block for "one block per row" kernels: about 8 elements per
 * thread, a power of two from 32 (one warp) to `max_threads`. */
static inline int threads_per_row(int64_t length, int max_threads) {
  int threads = 32;
  while (threads < max_threads && (int64_t)threads * 8 < length) threads <<= 1;
  return threads;
}

/* ---- reductions ----------------------------------------------------------- */

template <typename T> __device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/* Reduces one state per thread over the block: `warp_reduce` (which must leave
 * the warp's result in every lane) within each warp, then the warps' results
 * through part[] (shared memory of at least 32 states) by warp 0; `empty` is
 * the neutral state for the lanes beyond the last warp. Every thread of the
 * block must call it, and gets the block's result. Before part[] is written
 * again (the next call), the block must pass a __syncthreads: callers that
 * loop end each iteration with block_reduce_done(). */
template <typename S, typename WarpReduce>
__device__ __forceinline__ S block_reduce(S v, S *part, const S &empty, WarpReduce warp_reduce) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  v = warp_reduce(v);
  if (nwarps > 1) {
    if (lane == 0) part[warp] = v;
    __syncthreads();
    if (warp == 0) {
      S w = lane < nwarps ? part[lane] : empty;
      w = warp_reduce(w);
      if (lane == 0) part[0] = w;
    }
    __syncthreads();
    v = part[0];
  }
  return v;
}

/* The barrier after the last read of part[0] of a block_reduce, so that the
 * next block_reduce may overwrite it (not needed with a single warp). */
__device__ __forceinline__ void block_reduce_done() {
  if ((blockDim.x >> 5) > 1) __syncthreads();
}

/* ---- activations: the scalar definitions of doc/ops.md -------------------
 * Written like the reference kernels (kernels/ref/) so that NaN takes the
 * same branch (comparisons with NaN are false) and infinities give the same
 * limits. */
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

template <typename T> __device__ __forceinline__ T activate(const adnn_activation &a, T x) {
  const T alpha = (T)a.alpha, beta = (T)a.beta;
  switch (a.kind) {
    case ADNN_ACTIVATION_IDENTITY:
      return x;
    case ADNN_ACTIVATION_RELU:
      return x < T(0) ? T(0) : x;
    case ADNN_ACTIVATION_LEAKY_RELU:
      /* alpha 0 is relu, also at -inf (0 * -inf would be NaN). */
      return x < T(0) ? (alpha == T(0) ? T(0) : alpha * x) : x;
    case ADNN_ACTIVATION_ELU:
      return x < T(0) ? alpha * f_expm1(x) : x;
    case ADNN_ACTIVATION_CLAMP:
      return x < alpha ? alpha : (x > beta ? beta : x);
    case ADNN_ACTIVATION_SIGMOID:
      return T(1) / (T(1) + f_exp(-x));
    case ADNN_ACTIVATION_TANH:
      return f_tanh(x);
    case ADNN_ACTIVATION_GELU:
      if (isinf(x)) return x > T(0) ? x : T(0);
      return T(0.5) * x * (T(1) + f_erf(x * T(0.70710678118654752440)));
    case ADNN_ACTIVATION_GELU_TANH: {
      if (isinf(x)) return x > T(0) ? x : T(0);
      const T k = T(0.79788456080286535588); /* sqrt(2 / pi) */
      return T(0.5) * x * (T(1) + f_tanh(k * (x + T(0.044715) * x * x * x)));
    }
    case ADNN_ACTIVATION_SILU:
      if (isinf(x)) return x > T(0) ? x : T(0);
      return x / (T(1) + f_exp(-x));
    case ADNN_ACTIVATION_SOFTPLUS:
      /* Without overflow: log(1 + exp(x)) = x + log1p(exp(-x)) for x > 0. */
      return x > T(0) ? x + f_log1p(f_exp(-x)) : f_log1p(f_exp(x));
    case ADNN_ACTIVATION_HARDSWISH:
      if (x <= T(-3)) return T(0);
      if (x >= T(3)) return x;
      return x * (x + T(3)) / T(6);
  }
  /* Not an activation the core accepts: poison the output rather than guess. */
  return x * T(NAN);
}

} // namespace adnn_cuda

#endif /* ADNN_CUDA_COMMON_CUH */
