/*
 * The conv2d epilogue: y = act(src + bias[c]) over a 4-D iteration space,
 * storing into y's strides. It runs after a cuDNN convolution that cuDNN
 * cannot fuse with the bias and activation (or that wrote a packed temporary
 * because y is not packed in the plan's layout class); with the identity and
 * no bias it is the strided copy that repacks a filter into the layout class's
 * filter format.
 *
 * Why this is correct for every shape: one thread per logical index lin in
 * [0, count) (int64 grid-stride, each visited once); nd_offsets gives both
 * tensors' offsets and the index along channel_dim from one division chain,
 * so the bias index is always in [0, dims[channel_dim]). In place (y == src
 * with identical strides) each element is read and written by one thread.
 */
#include "kernels/cuda/common.cuh"

namespace adnn_cuda {

template <typename T>
__global__ void epilogue_kernel(adnn_activation act, adnn_nd nd, int64_t n, int channel_dim,
                                const T *src, const T *bias, int64_t bias_stride, T *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t off[2];
    const int64_t c = nd_offsets(nd, i, off, channel_dim);
    T v = src[off[0]];
    if (bias) v += bias[c * bias_stride];
    y[off[1]] = activate<T>(act, v);
  }
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_conv2d_epilogue_launch(const adnn_cuda_launch_config *l,
                                                           adnn_dtype dtype,
                                                           const adnn_activation *act,
                                                           const adnn_nd *nd, int channel_dim,
                                                           const void *src, const void *bias,
                                                           int64_t bias_stride, void *y) {
  const int threads = 256;
  const int64_t n = adnn_nd_count(nd);
  if (n <= 0) return cudaSuccess;
  const unsigned grid = grid_for(l, n, threads);
  if (dtype == ADNN_DTYPE_F64)
    epilogue_kernel<double><<<grid, threads, 0, l->stream>>>(
        *act, *nd, n, channel_dim, (const double *)src, (const double *)bias, bias_stride,
        (double *)y);
  else
    epilogue_kernel<float><<<grid, threads, 0, l->stream>>>(
        *act, *nd, n, channel_dim, (const float *)src, (const float *)bias, bias_stride,
        (float *)y);
  return cudaGetLastError();
}
