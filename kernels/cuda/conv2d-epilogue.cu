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
 *
 * F16/BF16 (S lowp_f16 / lowp_bf16, bias of the same dtype): src and the bias
 * widen exactly to F32, the sum and the activation run in F32, and y is
 * rounded once (lowp_elem.cuh); the identity copy without a bias is exact.
 */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/lowp_elem.cuh"

namespace adnn_cuda {

/* src of SI, bias and y of SO; the arithmetic in SO's compute type (F32
 * for F16/BF16 y; F32 also when F16/BF16 src widens into an F32 y). */
template <typename SI, typename SO>
__global__ void epilogue_kernel(adnn_activation act, adnn_nd nd, int64_t n, int channel_dim,
                                const SI *src, const SO *bias, int64_t bias_stride, SO *y) {
  typedef typename elem<SO>::compute T;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t off[2];
    const int64_t c = nd_offsets(nd, i, off, channel_dim);
    T v = (T)lp_load(src + off[0]);
    if (bias) v += (T)lp_load(bias + c * bias_stride);
    lp_store(y + off[1], activate<T>(act, v));
  }
}

template <typename SI, typename SO>
static cudaError_t launch_epilogue(const adnn_cuda_launch_config *l, const adnn_activation *act,
                                   const adnn_nd *nd, int64_t n, int channel_dim, const void *src,
                                   const void *bias, int64_t bias_stride, void *y) {
  const int threads = 256;
  epilogue_kernel<SI, SO><<<grid_for(l, n, threads), threads, 0, l->stream>>>(
      *act, *nd, n, channel_dim, (const SI *)src, (const SO *)bias, bias_stride, (SO *)y);
  return cudaGetLastError();
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_conv2d_epilogue_launch(const adnn_cuda_launch_config *l,
                                                           adnn_dtype dtype,
                                                           const adnn_activation *act,
                                                           const adnn_nd *nd, int channel_dim,
                                                           const void *src, const void *bias,
                                                           int64_t bias_stride, void *y) {
  const int64_t n = adnn_nd_count(nd);
  if (n <= 0) return cudaSuccess;
  switch (dtype) {
    case ADNN_DTYPE_F64:
      return launch_epilogue<double, double>(l, act, nd, n, channel_dim, src, bias, bias_stride,
                                             y);
    case ADNN_DTYPE_F16:
      return launch_epilogue<lowp_f16, lowp_f16>(l, act, nd, n, channel_dim, src, bias, bias_stride,
                                             y);
    case ADNN_DTYPE_BF16:
      return launch_epilogue<lowp_bf16, lowp_bf16>(l, act, nd, n, channel_dim, src, bias,
                                               bias_stride, y);
    default:
      return launch_epilogue<float, float>(l, act, nd, n, channel_dim, src, bias, bias_stride, y);
  }
}

ADNN_CUDA_API cudaError_t adnn_cuda_conv2d_epilogue_convert_launch(
    const adnn_cuda_launch_config *l, adnn_dtype src_dtype, adnn_dtype y_dtype,
    const adnn_activation *act, const adnn_nd *nd, int channel_dim, const void *src,
    const void *bias, int64_t bias_stride, void *y) {
  const int64_t n = adnn_nd_count(nd);
  if (n <= 0) return cudaSuccess;
  if (y_dtype == ADNN_DTYPE_F32 && src_dtype == ADNN_DTYPE_F16)
    return launch_epilogue<lowp_f16, float>(l, act, nd, n, channel_dim, src, bias, bias_stride, y);
  if (y_dtype == ADNN_DTYPE_F32 && src_dtype == ADNN_DTYPE_BF16)
    return launch_epilogue<lowp_bf16, float>(l, act, nd, n, channel_dim, src, bias, bias_stride,
                                           y);
  if (src_dtype == ADNN_DTYPE_F32 && y_dtype == ADNN_DTYPE_F16)
    return launch_epilogue<float, lowp_f16>(l, act, nd, n, channel_dim, src, bias, bias_stride, y);
  if (src_dtype == ADNN_DTYPE_F32 && y_dtype == ADNN_DTYPE_BF16)
    return launch_epilogue<float, lowp_bf16>(l, act, nd, n, channel_dim, src, bias, bias_stride,
                                           y);
  return cudaErrorInvalidValue;
}
