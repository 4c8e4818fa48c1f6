/*
 * Reduction (sum, mean, max, min over a set of axes), any strides.
 *
 * The host (backends/cuda/cuda_reduce.c) splits x's coalesced dims into the
 * kept dims (one index per output: `kept`, strides[0] x, strides[1] y) and
 * the reduced dims, whose innermost one becomes a run of `run` elements at
 * x stride `run_stride` and the others a loop (`outer`, strides[0] x). Every
 * output visits its elements as outer index by outer index, run by run. Two
 * kernels, both correct for any shape:
 *  - reduce_rows: one block per output (grid-stride over outputs); the
 *    threads share each run (coalesced when run_stride is 1), then the block
 *    reduces its partial results with warp shuffles and shared memory. Used
 *    when runs are long enough to give every thread of a warp work.
 *  - reduce_outputs: one thread per output; neighbouring threads own
 *    neighbouring outputs, whose elements are adjacent when the innermost kept
 *    dim is contiguous (the bias-gradient pattern), so loads coalesce across
 *    threads.
 *
 * Numerics (doc/ops.md): sums accumulate in double whatever T and round once;
 * max and min give NaN when any element is NaN, otherwise the extreme (the
 * comparisons never pick a NaN, and a flag carries it). The block kernel's
 * combination order is fixed by the launch shape, so results are the same run
 * to run. F16 and BF16 (lowp_elem.cuh): elements are widened exactly to F32
 * and go through the same code (the sums in double); a sum or mean is then
 * rounded once from the double to the 16-bit type (never through F32), and a
 * max or min is one of the inputs, exact.
 *
 * Barriers: in reduce_rows every thread runs every loop iteration over
 * outputs (the bounds depend only on blockIdx), so every thread reaches every
 * block_reduce; each iteration ends with block_reduce_done() before part[] is
 * written again.
 */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/lowp_elem.cuh"

namespace adnn_cuda {

/* One thread's (or warp's, or block's) partial result. */
template <typename T> struct rd_part {
  double sum;
  T ext;   /* running max or min; meaningless while n == 0 */
  int n;   /* elements seen (0: ext not set yet) */
  int nan; /* a NaN was seen */
};

template <typename T>
__device__ __forceinline__ void rd_add(rd_part<T> &p, T v, int is_min) {
  if (isnan(v)) p.nan = 1;
  p.sum += (double)v;
  if (p.n == 0 || (is_min ? v < p.ext : v > p.ext)) p.ext = v;
  p.n++;
}

template <typename T>
__device__ __forceinline__ rd_part<T> rd_merge(rd_part<T> a, rd_part<T> b, int is_min) {
  rd_part<T> r;
  r.sum = a.sum + b.sum;
  r.nan = a.nan | b.nan;
  r.n = a.n + b.n;
  if (a.n == 0) r.ext = b.ext;
  else if (b.n == 0) r.ext = a.ext;
  else r.ext = (is_min ? b.ext < a.ext : b.ext > a.ext) ? b.ext : a.ext;
  return r;
}

template <typename T> __device__ __forceinline__ rd_part<T> rd_warp(rd_part<T> p, int is_min) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    rd_part<T> other;
    other.sum = __shfl_xor_sync(0xffffffffu, p.sum, o);
    other.ext = __shfl_xor_sync(0xffffffffu, p.ext, o);
    other.n = __shfl_xor_sync(0xffffffffu, p.n, o);
    other.nan = __shfl_xor_sync(0xffffffffu, p.nan, o);
    p = rd_merge(p, other, is_min);
  }
  return p;
}

/* Stores the result into *y, rounded once: C is the compute type of the
 * partial results, T y's element type. */
template <typename C, typename T>
__device__ __forceinline__ void rd_store(T *y, const rd_part<C> &p, adnn_reduce_kind kind,
                                         int64_t count) {
  switch (kind) {
    case ADNN_REDUCE_SUM: put(y, p.sum); return;
    case ADNN_REDUCE_MEAN: put(y, p.sum / (double)count); return;
    default: put(y, p.nan ? C(NAN) : p.ext); return;
  }
}

template <typename T>
__global__ void reduce_rows(adnn_cuda_reduce_layout s, adnn_reduce_kind kind, const T *x, T *y) {
  typedef typename elem<T>::compute C;
  __shared__ rd_part<C> part[32];
  const int is_min = kind == ADNN_REDUCE_MIN;
  const rd_part<C> empty = {0.0, C(0), 0, 0};
  for (int64_t o = blockIdx.x; o < s.outputs; o += gridDim.x) {
    int64_t ko[2];
    nd_offsets(s.kept, o, ko);
    rd_part<C> p = empty;
    for (int64_t r = 0; r < s.outer_count; r++) {
      int64_t ro[1];
      nd_offsets(s.outer, r, ro);
      const T *run = x + ko[0] + ro[0];
      for (int64_t j = threadIdx.x; j < s.run; j += blockDim.x) rd_add(p, widen(run[j * s.run_stride]), is_min);
    }
    p = block_reduce(p, part, empty, [is_min](rd_part<C> v) { return rd_warp(v, is_min); });
    if (threadIdx.x == 0) rd_store(y + ko[1], p, kind, s.count);
    block_reduce_done(); /* part[0] is read before the next output writes it */
  }
}

template <typename T>
__global__ void reduce_outputs(adnn_cuda_reduce_layout s, adnn_reduce_kind kind, const T *x,
                               T *y) {
  typedef typename elem<T>::compute C;
  const int is_min = kind == ADNN_REDUCE_MIN;
  for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < s.outputs;
       o += (int64_t)gridDim.x * blockDim.x) {
    int64_t ko[2];
    nd_offsets(s.kept, o, ko);
    rd_part<C> p = {0.0, C(0), 0, 0};
    for (int64_t r = 0; r < s.outer_count; r++) {
      int64_t ro[1];
      nd_offsets(s.outer, r, ro);
      const T *run = x + ko[0] + ro[0];
      for (int64_t j = 0; j < s.run; j++) rd_add(p, widen(run[j * s.run_stride]), is_min);
    }
    rd_store(y + ko[1], p, kind, s.count);
  }
}

template <typename T>
static cudaError_t launch_reduce(const adnn_cuda_launch_config *l, const adnn_plugin_reduce *p,
                                 const adnn_cuda_reduce_layout *s, const void *x, void *y) {
  if (s->outputs <= 0) return cudaSuccess;
  if (s->block_per_output) {
    const int threads = threads_per_row(s->run, 256);
    reduce_rows<T><<<grid_rows(l, s->outputs, threads), threads, 0, l->stream>>>(
        *s, p->kind, (const T *)x, (T *)y);
  } else {
    const int threads = 128;
    reduce_outputs<T><<<grid_for(l, s->outputs, threads), threads, 0, l->stream>>>(
        *s, p->kind, (const T *)x, (T *)y);
  }
  return cudaGetLastError();
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_reduce_launch(const adnn_cuda_launch_config *l,
                                                  adnn_dtype dtype, const adnn_plugin_reduce *p,
                                                  const adnn_cuda_reduce_layout *s, const void *x,
                                                  void *y) {
  switch (dtype) {
    case ADNN_DTYPE_F64: return launch_reduce<double>(l, p, s, x, y);
    case ADNN_DTYPE_F16: return launch_reduce<lowp_f16>(l, p, s, x, y);
    case ADNN_DTYPE_BF16: return launch_reduce<lowp_bf16>(l, p, s, x, y);
    default: return launch_reduce<float>(l, p, s, x, y);
  }
}
