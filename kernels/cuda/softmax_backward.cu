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
 *  - F16 and BF16 (lowp_elem.cuh): y and dy are widened exactly to F32, the
 *    arithmetic is the F32 problem's (the sum in double), and dx is rounded
 *    once, as the CPU does.
 */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/lowp_elem.cuh"

namespace adnn_cuda {

/* T is the storage type (float, double, lowp_f16, lowp_bf16), C the
 * arithmetic's (elem<T>::compute). */
template <typename T>
__global__ void softmax_bwd_kernel(adnn_cuda_softmax_layout s, int32_t log, const T *y,
                                   const T *dy, T *dx) {
  typedef typename elem<T>::compute C;
  for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < s.row_count;
       r += (int64_t)gridDim.x * blockDim.x) {
    int64_t off[2];
    nd_offsets(s.rows, r, off);
    const T *yr = y + off[1], *gr = dy + off[1];
    T *dxr = dx + off[0];
    double sum = 0.0;
    for (int64_t j = 0; j < s.length; j++) {
      const double g = (double)lp_load(gr + j * s.y_stride);
      sum += log ? g : (double)lp_load(yr + j * s.y_stride) * g;
    }
    const C c = (C)sum;
    for (int64_t j = 0; j < s.length; j++) {
      const C v = lp_load(yr + j * s.y_stride), g = lp_load(gr + j * s.y_stride);
      lp_store(dxr + j * s.x_stride, log ? g - f_exp(v) * c : v * (g - c));
    }
  }
}

template <typename T>
static void launch_smb(unsigned grid, int threads, cudaStream_t stream,
                       const adnn_cuda_softmax_layout *s, int32_t log, const void *y,
                       const void *dy, void *dx) {
  softmax_bwd_kernel<T><<<grid, threads, 0, stream>>>(*s, log, (const T *)y, (const T *)dy,
                                                      (T *)dx);
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
  const int32_t lg = p->fwd.log;
  cudaStream_t st = l->stream;
  switch (dtype) {
    case ADNN_DTYPE_F64: launch_smb<double>(grid, threads, st, s, lg, y, dy, dx); break;
    case ADNN_DTYPE_F16: launch_smb<lowp_f16>(grid, threads, st, s, lg, y, dy, dx); break;
    case ADNN_DTYPE_BF16: launch_smb<lowp_bf16>(grid, threads, st, s, lg, y, dy, dx); break;
    default: launch_smb<float>(grid, threads, st, s, lg, y, dy, dx); break;
  }
  return cudaGetLastError();
}
