/*
 * Softmax and log-softmax along one axis, any strides.
 *
 * The tensor is viewed as rows: every index of the non-axis dims (the host's
 * `rows` nd, both tensors' strides) starts a row of L elements at stride xs
 * (x) / ys (y). Two kernels:
 *  - softmax_rows: one block per row (blockDim a power of two, 32..512; 32 is
 *    one warp per row), used when the axis is contiguous in x, so a block's
 *    loads are coalesced, or when there are too few rows to occupy the device
 *    with one thread each. Pass 1 keeps an online (max, sum of exp(x - max))
 *    pair per thread, merged with warp shuffles and then across warps through
 *    shared memory; pass 2 writes.
 *  - softmax_cols: one thread per row, used when the axis is strided (e.g.
 *    channels of NCHW): neighbouring threads own neighbouring rows, whose
 *    elements are adjacent in memory, so loads are coalesced across threads.
 *  The host chooses (block_per_row); both are correct for any strides.
 *
 * Semantics (doc/ops.md, kernels/ref/ref_softmax.c): a row holding NaN or +inf
 * gives NaN throughout; -inf entries contribute exp(-inf) = 0 (log-softmax:
 * -inf); a row of only -inf gives NaN. The online update never evaluates
 * exp(-inf - (-inf)): -inf inputs are skipped in pass 1, and a partial state
 * whose max is -inf has sum 0 and is rescaled by 0, never by NaN.
 *
 * Why this is correct for every shape:
 *  - Rows are visited grid-stride (int64) by blocks (softmax_rows) or threads
 *    (softmax_cols), so every row is done exactly once for any grid size.
 *  - In softmax_rows every thread takes part in every reduction and every
 *    __syncthreads (the loop bounds are uniform across the block: the row
 *    loop depends only on blockIdx), so there is no divergent barrier. The
 *    shared slots are re-written only after a trailing __syncthreads.
 *  - y == x (in place, same layout): pass 2 reads x[j] and writes y[j] by the
 *    same thread, after the whole block finished pass 1 (the reduction's
 *    barriers), so no value is overwritten before it is read.
 */
#include "kernels/cuda/common.cuh"

namespace adnn_cuda {

template <typename T> struct smx_state {
  T m;     /* running maximum of the finite / -inf values seen (-inf: none) */
  T s;     /* sum of exp(v - m) */
  int bad; /* a NaN or +inf was seen */
};

template <typename T> __device__ __forceinline__ void smx_add(smx_state<T> &st, T v) {
  if (isnan(v) || v == T(INFINITY)) {
    st.bad = 1;
  } else if (v == -T(INFINITY)) {
    /* contributes exp(-inf) = 0 */
  } else if (v > st.m) {
    st.s = st.s * f_exp(st.m - v) + T(1); /* m == -inf: s is 0, exp(-inf) = 0 */
    st.m = v;
  } else {
    st.s += f_exp(v - st.m);
  }
}

template <typename T>
__device__ __forceinline__ smx_state<T> smx_merge(smx_state<T> a, smx_state<T> b) {
  smx_state<T> r;
  r.bad = a.bad | b.bad;
  r.m = a.m > b.m ? a.m : b.m;
  if (r.m == -T(INFINITY)) {
    r.s = T(0);
  } else {
    const T sa = a.m == -T(INFINITY) ? T(0) : a.s * f_exp(a.m - r.m);
    const T sb = b.m == -T(INFINITY) ? T(0) : b.s * f_exp(b.m - r.m);
    r.s = sa + sb;
  }
  return r;
}

template <typename T> __device__ __forceinline__ smx_state<T> smx_warp(smx_state<T> st) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    smx_state<T> other;
    other.m = __shfl_xor_sync(0xffffffffu, st.m, o);
    other.s = __shfl_xor_sync(0xffffffffu, st.s, o);
    other.bad = __shfl_xor_sync(0xffffffffu, st.bad, o);
    st = smx_merge(st, other);
  }
  return st;
}

template <typename T>
__device__ __forceinline__ T smx_out(const smx_state<T> &st, T logsum, int log, T v) {
  if (st.bad || st.m == -T(INFINITY)) return T(NAN);
  const T d = v - st.m;
  return log ? d - logsum : f_exp(d) / st.s;
}

template <typename T> __global__ void softmax_rows(adnn_cuda_softmax p, const T *x, T *y) {
  __shared__ smx_state<T> part[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  for (int64_t r = blockIdx.x; r < p.row_count; r += gridDim.x) {
    int64_t xb, yb;
    nd_offset2(p.rows, r, xb, yb);
    smx_state<T> st = {-T(INFINITY), T(0), 0};
    for (int64_t j = threadIdx.x; j < p.L; j += blockDim.x) smx_add(st, x[xb + j * p.xs]);
    st = smx_warp(st);
    if (nwarps > 1) {
      if (lane == 0) part[warp] = st;
      __syncthreads();
      if (warp == 0) {
        smx_state<T> w = lane < nwarps ? part[lane] : smx_state<T>{-T(INFINITY), T(0), 0};
        w = smx_warp(w);
        if (lane == 0) part[0] = w;
      }
      __syncthreads();
      st = part[0];
    }
    const T logsum = f_log(st.s);
    for (int64_t j = threadIdx.x; j < p.L; j += blockDim.x)
      y[yb + j * p.ys] = smx_out(st, logsum, p.log, x[xb + j * p.xs]);
    if (nwarps > 1) __syncthreads(); /* part[0] is read before the next row writes it */
  }
}

template <typename T> __global__ void softmax_cols(adnn_cuda_softmax p, const T *x, T *y) {
  for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < p.row_count;
       r += (int64_t)gridDim.x * blockDim.x) {
    int64_t xb, yb;
    nd_offset2(p.rows, r, xb, yb);
    smx_state<T> st = {-T(INFINITY), T(0), 0};
    for (int64_t j = 0; j < p.L; j++) smx_add(st, x[xb + j * p.xs]);
    const T logsum = f_log(st.s);
    for (int64_t j = 0; j < p.L; j++)
      y[yb + j * p.ys] = smx_out(st, logsum, p.log, x[xb + j * p.xs]);
  }
}

template <typename T>
static cudaError_t launch_softmax(const adnn_cuda_launch *l, const adnn_cuda_softmax *p,
                                  const void *x, void *y) {
  if (p->row_count <= 0 || p->L <= 0) return cudaSuccess;
  if (p->block_per_row) {
    /* Threads per row: about 8 elements each, a power of two in 32..512. */
    int threads = 32;
    while (threads < 512 && (int64_t)threads * 8 < p->L) threads <<= 1;
    softmax_rows<T><<<grid_rows(l, p->row_count, threads), threads, 0, l->stream>>>(
        *p, (const T *)x, (T *)y);
  } else {
    const int threads = 128;
    softmax_cols<T><<<grid_for(l, p->row_count, threads), threads, 0, l->stream>>>(
        *p, (const T *)x, (T *)y);
  }
  return cudaGetLastError();
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_softmax_run(const adnn_cuda_launch *l, int f64,
                                                const adnn_cuda_softmax *p, const void *x,
                                                void *y) {
  return f64 ? launch_softmax<double>(l, p, x, y) : launch_softmax<float>(l, p, x, y);
}
