/*
 * Softmax and log-softmax backward along one axis:
 *   softmax dx = y * (dy - sum(y * dy)); log-softmax dx = dy - exp(y) sum(dy),
 * one thread per slice, the sum accumulated in double.
 *
 * Why this is correct for every shape the descriptor allows:
 *  - Every index of the non-axis dims starts one slice; the host coalesced
 *    those dims (strides[0] dx, which has x's layout; strides[1] y and dy,
 *    which share y's), and the grid-stride loop visits each slice once.
 *  - A thread reads its whole slice of y and dy for the sum before it writes
 *    any dx of the slice, and no other thread touches the slice, so dx may
 *    be dy (the core allows it when x and y have one layout).
 *  - Neighbouring threads own neighbouring slices, so their loads are
 *    coalesced when the axis is not the innermost dim; a contiguous axis is
 *    read with a stride, which is slower but correct.
 */
#include "kernels/cuda/common.cuh"

namespace adnn_cuda {

template <typename T>
__global__ void softmax_bwd_kernel(adnn_cuda_softmax_layout s, int32_t log, const T *y,
                                   const T *dy, T *dx) {
  for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < s.row_count;
       r += (int64_t)gridDim.x * blockDim.x) {
    int64_t off[2];
    nd_offsets(s.rows, r, off);
    const T *yr = y + off[1], *gr = dy + off[1];
    T *dxr = dx + off[0];
    double sum = 0.0;
    for (int64_t j = 0; j < s.length; j++) {
      const double g = (double)gr[j * s.y_stride];
      sum += log ? g : (double)yr[j * s.y_stride] * g;
    }
    const T c = (T)sum;
    for (int64_t j = 0; j < s.length; j++) {
      const T v = yr[j * s.y_stride], g = gr[j * s.y_stride];
      dxr[j * s.x_stride] = log ? g - f_exp(v) * c : v * (g - c);
    }
  }
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_softmax_backward_launch(const adnn_cuda_launch_config *l,
                                                            adnn_dtype dtype,
                                                            const adnn_plugin_softmax_backward *p,
                                                            const adnn_cuda_softmax_layout *s,
                                                            const void *y, const void *dy,
                                                            void *dx) {
  const int threads = 128;
  if (s->row_count <= 0) return cudaSuccess;
  const unsigned grid = grid_for(l, s->row_count, threads);
  if (dtype == ADNN_DTYPE_F64)
    softmax_bwd_kernel<double><<<grid, threads, 0, l->stream>>>(
        *s, p->fwd.log, (const double *)y, (const double *)dy, (double *)dx);
  else
    softmax_bwd_kernel<float><<<grid, threads, 0, l->stream>>>(
        *s, p->fwd.log, (const float *)y, (const float *)dy, (float *)dx);
  return cudaGetLastError();
}
