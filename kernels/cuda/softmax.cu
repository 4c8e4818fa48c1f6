/*
 * Softmax and log-softmax along one axis, any strides.
 *
 * The tensor is viewed as rows (adnn_cuda_softmax_layout): every index of the
 * non-axis dims (the host's coalesced `rows`, both tensors' strides) starts a
 * row of `length` elements at stride x_stride (x) / y_stride (y). Two kernels:
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
 * Semantics (doc/ops.md): a row holding NaN or +inf gives NaN throughout;
 * -inf entries contribute exp(-inf) = 0 (log-softmax: -inf); a row of only
 * -inf gives NaN. The online update never evaluates
 * exp(-inf - (-inf)): -inf inputs are skipped in pass 1, and a partial state
 * whose max is -inf has sum 0 and is rescaled by 0, never by NaN.
 *
 * Why this is correct for every shape:
 *  - Rows are visited grid-stride (int64) by blocks (softmax_rows) or threads
 *    (softmax_cols), so every row is done exactly once for any grid size.
 *  - In softmax_rows every thread takes part in every reduction and every
 *    __syncthreads (the loop bounds are uniform across the block: the row
 *    loop depends only on blockIdx), so there is no divergent barrier. The
 *    shared slots are re-written only after a trailing __syncthreads
 *    (block_reduce_done).
 *  - y == x (in place, same layout): pass 2 reads x[j] and writes y[j] by the
 *    same thread, after the whole block finished pass 1 (the reduction's
 *    barriers), so no value is overwritten before it is read.
 *
 * Low precision: the kernels are templated on the storage type S; F16 and
 * BF16 (lowp_elem.cuh) widen each load exactly to F32 and compute the state,
 * exponentials and sums in F32, and each output is rounded once on store,
 * as the CPU's F16/BF16 path does (doc/ops.md, "Low precision").
 */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/lowp_elem.cuh"

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

template <typename S>
__global__ void softmax_rows(adnn_cuda_softmax_layout s, int log, const S *x, S *y) {
  typedef typename elem<S>::compute T;
  __shared__ smx_state<T> part[32];
  const smx_state<T> empty = {-T(INFINITY), T(0), 0};
  for (int64_t r = blockIdx.x; r < s.row_count; r += gridDim.x) {
    int64_t base[2];
    nd_offsets(s.rows, r, base);
    smx_state<T> st = empty;
    for (int64_t j = threadIdx.x; j < s.length; j += blockDim.x)
      smx_add(st, lp_load(x + base[0] + j * s.x_stride));
    st = block_reduce(st, part, empty, [](smx_state<T> v) { return smx_warp(v); });
    const T logsum = f_log(st.s);
    for (int64_t j = threadIdx.x; j < s.length; j += blockDim.x)
      lp_store(y + base[1] + j * s.y_stride,
               smx_out(st, logsum, log, lp_load(x + base[0] + j * s.x_stride)));
    block_reduce_done(); /* part[0] is read before the next row writes it */
  }
}

template <typename S>
__global__ void softmax_cols(adnn_cuda_softmax_layout s, int log, const S *x, S *y) {
  typedef typename elem<S>::compute T;
  for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < s.row_count;
       r += (int64_t)gridDim.x * blockDim.x) {
    int64_t base[2];
    nd_offsets(s.rows, r, base);
    smx_state<T> st = {-T(INFINITY), T(0), 0};
    for (int64_t j = 0; j < s.length; j++) smx_add(st, lp_load(x + base[0] + j * s.x_stride));
    const T logsum = f_log(st.s);
    for (int64_t j = 0; j < s.length; j++)
      lp_store(y + base[1] + j * s.y_stride,
               smx_out(st, logsum, log, lp_load(x + base[0] + j * s.x_stride)));
  }
}

template <typename S>
static cudaError_t launch_softmax(const adnn_cuda_launch_config *l, const adnn_plugin_softmax *p,
                                  const adnn_cuda_softmax_layout *s, const void *x, void *y) {
  if (s->row_count <= 0 || s->length <= 0) return cudaSuccess;
  if (s->block_per_row) {
    const int threads = threads_per_row(s->length, 512);
    softmax_rows<S><<<grid_rows(l, s->row_count, threads), threads, 0, l->stream>>>(
        *s, p->log, (const S *)x, (S *)y);
  } else {
    const int threads = 128;
    softmax_cols<S><<<grid_for(l, s->row_count, threads), threads, 0, l->stream>>>(
        *s, p->log, (const S *)x, (S *)y);
  }
  return cudaGetLastError();
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_softmax_launch(const adnn_cuda_launch_config *l,
                                                   adnn_dtype dtype, const adnn_plugin_softmax *p,
                                                   const adnn_cuda_softmax_layout *s,
                                                   const void *x, void *y) {
  switch (dtype) {
    case ADNN_DTYPE_F64: return launch_softmax<double>(l, p, s, x, y);
    case ADNN_DTYPE_F16: return launch_softmax<lowp_f16>(l, p, s, x, y);
    case ADNN_DTYPE_BF16: return launch_softmax<lowp_bf16>(l, p, s, x, y);
    default: return launch_softmax<float>(l, p, s, x, y);
  }
}
