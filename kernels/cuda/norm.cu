/*
 * Normalizations: layer norm and RMS norm over the trailing dims of each row,
 * and batch norm (inference) per channel with its fused activation.
 *
 * Layer / RMS norm, norm_rows: one block per row (grid-stride over rows;
 * blockDim a power of two in 32..1024, 32 being one warp per row).
 *  - Statistics in one pass over the row: layer norm keeps a Welford triple
 *    of x - x[row, 0] (see the shift below)
 *    (count, mean, M2) per thread and merges them (Chan et al.) with warp
 *    shuffles, then across warps through shared memory, which stays accurate
 *    for large D and large means where sum / sum-of-squares in float would
 *    cancel; RMS norm sums squares the same way. Then a second loop writes
 *    (x - mean) / sqrt(var + eps) * gain + bias, re-reading the row, which is
 *    hot in L1/L2 after the first loop.
 *  - Every thread executes every barrier: the row loop bound depends only on
 *    blockIdx, and shared slots are rewritten only after a trailing barrier.
 *  - y == x in place: each element is read (pass 2) and written by the same
 *    thread, after the whole block has finished pass 1.
 *  - Element j of a row is at the cols nd offset of j (any strides of the
 *    normalized dims), the row start at the rows nd offset: every (row, j)
 *    pair maps to the element the reference uses (linear index row * D + j).
 *  - A thread that owns no element of a row (D < blockDim) contributes the
 *    empty state (count 0), which the merge treats as neutral.
 *
 * Batch norm, batchnorm_kernel: elementwise, grid-stride over the n elements in
 * int64. With a dense common layout the physical offset i is the loop index and
 * the channel is (i / channel_stride) % C (true for any dense permutation of
 * dims: the channel dim's stride is the product of the sizes of the dims
 * faster than it); otherwise offsets and the channel come from the nd
 * decomposition of the logical index. The formula is the reference's,
 * scale * (x - mean) / sqrt(var + eps) + shift, not a folded form, so that
 * zero variances and infinities behave identically.
 */
#include "kernels/cuda/common.cuh"

namespace adnn_cuda {

template <typename T> struct welford {
  T n, mean, m2;
};

template <typename T> __device__ __forceinline__ welford<T> wf_merge(welford<T> a, welford<T> b) {
  const T n = a.n + b.n;
  if (n == T(0)) return a;
  const T delta = b.mean - a.mean;
  const T fb = b.n / n;
  welford<T> r;
  r.n = n;
  r.mean = a.mean + delta * fb;
  r.m2 = a.m2 + b.m2 + delta * delta * a.n * fb;
  return r;
}

template <typename T> __device__ __forceinline__ welford<T> wf_warp(welford<T> w) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    welford<T> other;
    other.n = __shfl_xor_sync(0xffffffffu, w.n, o);
    other.mean = __shfl_xor_sync(0xffffffffu, w.mean, o);
    other.m2 = __shfl_xor_sync(0xffffffffu, w.m2, o);
    w = wf_merge(w, other);
  }
  /* The merge is not bitwise symmetric (lane i computes merge(a, b), its
   * partner merge(b, a)), so lanes may differ in the last bit: every lane
   * takes lane 0's result, so that a whole row is normalized with one mean. */
  w.n = __shfl_sync(0xffffffffu, w.n, 0);
  w.mean = __shfl_sync(0xffffffffu, w.mean, 0);
  w.m2 = __shfl_sync(0xffffffffu, w.m2, 0);
  return w;
}

__device__ __forceinline__ int64_t col_offset(const adnn_cuda_nd &cols, int which, int64_t j) {
  if (cols.rank == 1) return j * cols.strides[which][0];
  return nd_offset(cols, which, j);
}

template <typename T>
__global__ void norm_rows(adnn_cuda_norm p, const T *x, const T *gain, const T *bias, T *y) {
  __shared__ welford<T> part[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  for (int64_t r = blockIdx.x; r < p.row_count; r += gridDim.x) {
    int64_t xb, yb;
    nd_offset2(p.rows, r, xb, yb);
    welford<T> w = {T(0), T(0), T(0)};
    /* Layer norm works on x - shift with shift = the row's first element:
     * near the mean, so x - shift is exact for nearby values (Sterbenz) and
     * the statistics and the final x - mean never form a large mean in T,
     * whose rounding (e.g. 3e-5 at 1000 in float) would show in every
     * output. RMS norm has no mean to subtract. */
    const T shift = p.rms ? T(0) : x[xb];
    if (p.rms) {
      T ss = T(0);
      for (int64_t j = threadIdx.x; j < p.D; j += blockDim.x) {
        const T v = x[xb + col_offset(p.cols, 0, j)];
        ss += v * v;
      }
      w.m2 = warp_sum(ss);
    } else {
      for (int64_t j = threadIdx.x; j < p.D; j += blockDim.x) {
        const T v = x[xb + col_offset(p.cols, 0, j)] - shift;
        w.n += T(1);
        const T d = v - w.mean;
        w.mean += d / w.n;
        w.m2 += d * (v - w.mean);
      }
      w = wf_warp(w);
    }
    if (nwarps > 1) {
      if (lane == 0) part[warp] = w;
      __syncthreads();
      if (warp == 0) {
        welford<T> v = lane < nwarps ? part[lane] : welford<T>{T(0), T(0), T(0)};
        if (p.rms) {
          v.m2 = warp_sum(v.m2);
        } else {
          v = wf_warp(v);
        }
        if (lane == 0) part[0] = v;
      }
      __syncthreads();
      w = part[0];
    }
    const T mean = p.rms ? T(0) : w.mean;
    const T var = w.m2 / (T)p.D; /* biased; RMS: mean of squares */
    const T inv = T(1) / f_sqrt(var + (T)p.epsilon);
    for (int64_t j = threadIdx.x; j < p.D; j += blockDim.x) {
      T v = ((x[xb + col_offset(p.cols, 0, j)] - shift) - mean) * inv;
      if (gain) v *= gain[j];
      if (bias) v += bias[j];
      y[yb + col_offset(p.cols, 1, j)] = v;
    }
    if (nwarps > 1) __syncthreads();
  }
}

template <typename T>
__device__ __forceinline__ T bn_apply(const adnn_cuda_batchnorm &p, T v, int64_t c, const T *scale,
                                      const T *shift, const T *mean, const T *var) {
  const T r = scale[c] * (v - mean[c]) / f_sqrt(var[c] + (T)p.epsilon) + shift[c];
  return activate<T>(p.act, r);
}

template <typename T>
__global__ void batchnorm_kernel(adnn_cuda_batchnorm p, const T *x, const T *scale, const T *shift,
                                 const T *mean, const T *var, T *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.n;
       i += (int64_t)gridDim.x * blockDim.x) {
    if (p.dense_channel_stride > 0) {
      const int64_t c = (i / p.dense_channel_stride) % p.C;
      y[i] = bn_apply(p, x[i], c, scale, shift, mean, var);
    } else {
      int64_t lin = i, ox = 0, oy = 0, c = 0;
      for (int d = p.nd.rank - 1; d >= 0; d--) {
        const int64_t idx = lin % p.nd.dims[d];
        lin /= p.nd.dims[d];
        ox += idx * p.nd.strides[0][d];
        oy += idx * p.nd.strides[1][d];
        if (d == 1) c = idx;
      }
      y[oy] = bn_apply(p, x[ox], c, scale, shift, mean, var);
    }
  }
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_norm_run(const adnn_cuda_launch *l, int f64,
                                             const adnn_cuda_norm *p, const void *x,
                                             const void *gain, const void *bias, void *y) {
  if (p->row_count <= 0 || p->D <= 0) return cudaSuccess;
  int threads = 32;
  while (threads < 1024 && (int64_t)threads * 8 < p->D) threads <<= 1;
  const unsigned grid = grid_rows(l, p->row_count, threads);
  if (f64)
    norm_rows<double><<<grid, threads, 0, l->stream>>>(*p, (const double *)x, (const double *)gain,
                                                       (const double *)bias, (double *)y);
  else
    norm_rows<float><<<grid, threads, 0, l->stream>>>(*p, (const float *)x, (const float *)gain,
                                                      (const float *)bias, (float *)y);
  return cudaGetLastError();
}

ADNN_CUDA_API cudaError_t adnn_cuda_batchnorm_run(const adnn_cuda_launch *l, int f64,
                                                  const adnn_cuda_batchnorm *p, const void *x,
                                                  const void *scale, const void *shift,
                                                  const void *mean, const void *var, void *y) {
  const int threads = 256;
  if (p->n <= 0) return cudaSuccess;
  const unsigned grid = grid_for(l, p->n, threads);
  if (f64)
    batchnorm_kernel<double><<<grid, threads, 0, l->stream>>>(
        *p, (const double *)x, (const double *)scale, (const double *)shift, (const double *)mean,
        (const double *)var, (double *)y);
  else
    batchnorm_kernel<float><<<grid, threads, 0, l->stream>>>(
        *p, (const float *)x, (const float *)scale, (const float *)shift, (const float *)mean,
        (const float *)var, (float *)y);
  return cudaGetLastError();
}
