/*
 * Layer norm and RMS norm over the trailing dims of each row.
 *
 * norm_rows: one block per row (grid-stride over rows; blockDim a power of two
 * in 32..1024, 32 being one warp per row).
 *  - Statistics in one pass over the row: layer norm keeps a Welford triple
 *    (count, mean, M2) of x - x[row, 0] (see the shift below) per thread and
 *    merges them (Chan et al.) over the block, which stays accurate for large
 *    D and large means where sum / sum-of-squares in float would cancel; RMS
 *    norm sums squares the same way. Then a second loop writes
 *    (x - mean) / sqrt(var + eps) * gain + bias, re-reading the row, which is
 *    hot in L1/L2 after the first loop.
 *  - Every thread executes every barrier: the row loop bound depends only on
 *    blockIdx, and shared slots are rewritten only after a trailing barrier
 *    (block_reduce_done).
 *  - y == x in place: each element is read (pass 2) and written by the same
 *    thread, after the whole block has finished pass 1.
 *  - Element j of a row is at the cols offset of j (any strides of the
 *    normalized dims), the row start at the rows offset: every (row, j) pair
 *    maps to the element of linear index row * D + j, as doc/ops.md numbers
 *    them.
 *  - A thread that owns no element of a row (D < blockDim) contributes the
 *    empty state (count 0), which the merge treats as neutral.
 *  - Low precision: the kernel is templated on the data's storage type S
 *    and its parameters' type P (ADNN_OP_PARAM_DTYPE: F32 gain and bias for
 *    F16/BF16 data); F16/BF16 loads widen exactly to F32, the statistics and
 *    the affine step run in F32, and each output is rounded once on store
 *    (lowp_elem.cuh), as the CPU's F16/BF16 path does.
 */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/lowp_elem.cuh"

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

/* The offset of element j of a row in tensor `which` (0 x, 1 y). */
__device__ __forceinline__ int64_t col_offset(const adnn_nd &cols, int which, int64_t j) {
  if (cols.rank == 1) return j * cols.strides[which][0];
  int64_t off[2];
  nd_offsets(cols, j, off);
  return off[which];
}

template <typename S, typename P>
__global__ void norm_rows(adnn_plugin_norm p, adnn_cuda_norm_layout s, const S *x, const P *gain,
                          const P *bias, S *y) {
  typedef typename elem<S>::compute T;
  __shared__ welford<T> part[32];
  const bool rms = p.kind == ADNN_NORM_RMS;
  const welford<T> empty = {T(0), T(0), T(0)};
  for (int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
    int64_t base[2];
    nd_offsets(s.rows, r, base);
    const int64_t xb = base[0], yb = base[1];
    welford<T> w = empty;
    /* Layer norm works on x - shift with shift = the row's first element:
     * near the mean, so x - shift is exact for nearby values (Sterbenz) and
     * the statistics and the final x - mean never form a large mean in T,
     * whose rounding (e.g. 3e-5 at 1000 in float) would show in every
     * output. RMS norm has no mean to subtract. */
    const T shift = rms ? T(0) : lp_load(x + xb);
    if (rms) {
      for (int64_t j = threadIdx.x; j < p.D; j += blockDim.x) {
        const T v = lp_load(x + xb + col_offset(s.cols, 0, j));
        w.m2 += v * v;
      }
    } else {
      for (int64_t j = threadIdx.x; j < p.D; j += blockDim.x) {
        const T v = lp_load(x + xb + col_offset(s.cols, 0, j)) - shift;
        w.n += T(1);
        const T d = v - w.mean;
        w.mean += d / w.n;
        w.m2 += d * (v - w.mean);
      }
    }
    /* RMS norm only sums M2 (the squares); layer norm merges whole triples. */
    w = block_reduce(w, part, empty, [rms](welford<T> v) {
      if (rms) {
        v.m2 = warp_sum(v.m2);
        return v;
      }
      return wf_warp(v);
    });
    const T mean = rms ? T(0) : w.mean;
    const T var = w.m2 / (T)p.D; /* biased; RMS: mean of squares */
    const T inv = T(1) / f_sqrt(var + (T)p.epsilon);
    for (int64_t j = threadIdx.x; j < p.D; j += blockDim.x) {
      T v = ((lp_load(x + xb + col_offset(s.cols, 0, j)) - shift) - mean) * inv;
      if (gain) v *= (T)gain[j];
      if (bias) v += (T)bias[j];
      lp_store(y + yb + col_offset(s.cols, 1, j), v);
    }
    block_reduce_done();
  }
}

template <typename S, typename P>
static cudaError_t launch_norm(const adnn_cuda_launch_config *l, const adnn_plugin_norm *p,
                               const adnn_cuda_norm_layout *s, const void *x, const void *gain,
                               const void *bias, void *y) {
  const int threads = threads_per_row(p->D, 1024);
  const unsigned grid = grid_rows(l, p->rows, threads);
  norm_rows<S, P><<<grid, threads, 0, l->stream>>>(*p, *s, (const S *)x, (const P *)gain,
                                                   (const P *)bias, (S *)y);
  return cudaGetLastError();
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_norm_launch(const adnn_cuda_launch_config *l, adnn_dtype dtype,
                                                const adnn_plugin_norm *p,
                                                const adnn_cuda_norm_layout *s, const void *x,
                                                const void *gain, const void *bias, void *y) {
  if (p->rows <= 0 || p->D <= 0) return cudaSuccess;
  switch (dtype) {
    case ADNN_DTYPE_F64: return launch_norm<double, double>(l, p, s, x, gain, bias, y);
    case ADNN_DTYPE_F16: return launch_norm<lowp_f16, float>(l, p, s, x, gain, bias, y);
    case ADNN_DTYPE_BF16: return launch_norm<lowp_bf16, float>(l, p, s, x, gain, bias, y);
    default: return launch_norm<float, float>(l, p, s, x, gain, bias, y);
  }
}
