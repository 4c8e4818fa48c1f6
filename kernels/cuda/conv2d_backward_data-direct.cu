/*
 * The direct gradient of a 2-D convolution with respect to its input: the
 * "direct" and "reference" algorithms of the CUDA plugin's conv2d backward
 * data, and its fallback for problems cuDNN rejects. It is not a fast path.
 *
 * dx[n, c, h, w] = beta * dx[n, c, h, w] + the sum, over the k of c's group
 * and the taps r, s, of dy[n, k, p, q] * w[k, c - g*Cg, r, s] where
 * h = p * stride_h - pad_top + r * dilation_h (and likewise w): the taps
 * whose (h + pad_top - r * dilation_h) is a multiple of the stride and gives
 * a p inside [0, P). One thread per element of dx, grid-stride over N*C*H*W
 * in int64, numbered in dx's memory order (index4) so that writes are
 * coalesced; each thread owns its element, so no atomics and the result is
 * the same run to run. dx is read only when beta != 0, so that a NaN-filled
 * output is overwritten. `Acc` double is the "reference" accumulation.
 */
#include "kernels/cuda/common.cuh"

namespace adnn_cuda {

template <typename T, typename Acc>
__global__ void conv2d_backward_data_direct_kernel(adnn_plugin_conv2d p, Acc beta,
                                                   adnn_cuda_memory_order order, const T *dy,
                                                   const T *w, T *dx) {
  const int64_t total = p.N * p.C * p.H * p.W;
  const int64_t dims[4] = {p.N, p.C, p.H, p.W};
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t idx[4];
    index4(i, dims, order, idx);
    const int64_t n = idx[0], c = idx[1], h = idx[2], ww = idx[3];
    const int64_t g = c / p.Cg, cg = c - g * p.Cg;
    Acc acc = Acc(0);
    for (int64_t r = 0; r < p.R; r++) {
      const int64_t hp = h + p.pad_top - r * p.dilation_h;
      if (hp < 0 || hp % p.stride_h != 0) continue;
      const int64_t op = hp / p.stride_h;
      if (op >= p.P) continue;
      for (int64_t s = 0; s < p.S; s++) {
        const int64_t wq = ww + p.pad_left - s * p.dilation_w;
        if (wq < 0 || wq % p.stride_w != 0) continue;
        const int64_t oq = wq / p.stride_w;
        if (oq >= p.Q) continue;
        const T *dyp = dy + n * p.y.strides[0] + op * p.y.strides[2] + oq * p.y.strides[3];
        const T *wp = w + cg * p.w.strides[1] + r * p.w.strides[2] + s * p.w.strides[3];
        for (int64_t k = g * p.Kg; k < (g + 1) * p.Kg; k++)
          acc += (Acc)dyp[k * p.y.strides[1]] * (Acc)wp[k * p.w.strides[0]];
      }
    }
    T *out = dx + n * p.x.strides[0] + c * p.x.strides[1] + h * p.x.strides[2] +
             ww * p.x.strides[3];
    if (beta != Acc(0)) acc += beta * (Acc)*out;
    *out = (T)acc;
  }
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_conv2d_backward_data_direct_launch(
    const adnn_cuda_launch_config *l, adnn_dtype dtype, int exact, const adnn_plugin_conv2d *p,
    double beta, const adnn_cuda_memory_order *dx_order, const void *dy, const void *w,
    void *dx) {
  const int threads = 128;
  const int64_t total = p->N * p->C * p->H * p->W;
  if (total <= 0) return cudaSuccess;
  const unsigned grid = grid_for(l, total, threads);
  if (dtype == ADNN_DTYPE_F64)
    conv2d_backward_data_direct_kernel<double, double><<<grid, threads, 0, l->stream>>>(
        *p, beta, *dx_order, (const double *)dy, (const double *)w, (double *)dx);
  else if (exact)
    conv2d_backward_data_direct_kernel<float, double><<<grid, threads, 0, l->stream>>>(
        *p, beta, *dx_order, (const float *)dy, (const float *)w, (float *)dx);
  else
    conv2d_backward_data_direct_kernel<float, float><<<grid, threads, 0, l->stream>>>(
        *p, (float)beta, *dx_order, (const float *)dy, (const float *)w, (float *)dx);
  return cudaGetLastError();
}
