/*
 * The copy of a conv2d input into the packed, zero-padded buffer that cuDNN
 * reads when x is not packed in the plan's layout class, or when its padding
 * is asymmetric (cuDNN's legacy API only takes symmetric padding; the plan
 * then writes the padding out and runs cuDNN with padding 0, so asymmetric
 * padding stays exact).
 *
 * One thread per element of the padded, packed output (grid-stride, int64);
 * each reads its source element or writes 0 in the padding. Every output
 * element is written exactly once; the source is only read. F16 and BF16
 * are copied as their 16-bit patterns (uint16_t), zero being +0 in both.
 */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/lowp_elem.cuh"

namespace adnn_cuda {

template <typename T>
__global__ void pad_pack_kernel(int64_t N, int64_t C, int64_t H, int64_t W, int64_t xs0,
                                int64_t xs1, int64_t xs2, int64_t xs3, int64_t pt, int64_t pl,
                                int64_t Hp, int64_t Wp, int nhwc, const T *x, T *out) {
  const int64_t total = N * C * Hp * Wp;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t n, c, h, w, lin = i;
    if (nhwc) {
      c = lin % C; lin /= C;
      w = lin % Wp; lin /= Wp;
      h = lin % Hp; n = lin / Hp;
    } else {
      w = lin % Wp; lin /= Wp;
      h = lin % Hp; lin /= Hp;
      c = lin % C; n = lin / C;
    }
    const int64_t sh = h - pt, sw = w - pl;
    T v = T(0);
    if (sh >= 0 && sh < H && sw >= 0 && sw < W) v = x[n * xs0 + c * xs1 + sh * xs2 + sw * xs3];
    out[i] = v;
  }
}

/* The same copy from F16/BF16 (S) into F32, each element widened exactly. */
template <typename S>
__global__ void pad_widen_kernel(int64_t N, int64_t C, int64_t H, int64_t W, int64_t xs0,
                                 int64_t xs1, int64_t xs2, int64_t xs3, int64_t pt, int64_t pl,
                                 int64_t Hp, int64_t Wp, int nhwc, const S *x, float *out) {
  const int64_t total = N * C * Hp * Wp;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t n, c, h, w, lin = i;
    if (nhwc) {
      c = lin % C; lin /= C;
      w = lin % Wp; lin /= Wp;
      h = lin % Hp; n = lin / Hp;
    } else {
      w = lin % Wp; lin /= Wp;
      h = lin % Hp; lin /= Hp;
      c = lin % C; n = lin / C;
    }
    const int64_t sh = h - pt, sw = w - pl;
    float v = 0.0f;
    if (sh >= 0 && sh < H && sw >= 0 && sw < W)
      v = lp_load(x + n * xs0 + c * xs1 + sh * xs2 + sw * xs3);
    out[i] = v;
  }
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_conv2d_pad_pack_launch(const adnn_cuda_launch_config *l,
                                                           adnn_dtype dtype,
                                                           const adnn_tensor_desc *x,
                                                           const int64_t pad[4], int nhwc,
                                                           const void *src, void *dst) {
  const int threads = 256;
  const int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
  const int64_t Hp = H + pad[0] + pad[1], Wp = W + pad[2] + pad[3];
  const int64_t total = N * C * Hp * Wp;
  if (total <= 0) return cudaSuccess;
  const unsigned grid = grid_for(l, total, threads);
  const int64_t *xs = x->strides;
  if (dtype == ADNN_DTYPE_F64)
    pad_pack_kernel<double><<<grid, threads, 0, l->stream>>>(
        N, C, H, W, xs[0], xs[1], xs[2], xs[3], pad[0], pad[2], Hp, Wp, nhwc,
        (const double *)src, (double *)dst);
  else if (dtype == ADNN_DTYPE_F16 || dtype == ADNN_DTYPE_BF16)
    pad_pack_kernel<uint16_t><<<grid, threads, 0, l->stream>>>(
        N, C, H, W, xs[0], xs[1], xs[2], xs[3], pad[0], pad[2], Hp, Wp, nhwc,
        (const uint16_t *)src, (uint16_t *)dst);
  else
    pad_pack_kernel<float><<<grid, threads, 0, l->stream>>>(
        N, C, H, W, xs[0], xs[1], xs[2], xs[3], pad[0], pad[2], Hp, Wp, nhwc,
        (const float *)src, (float *)dst);
  return cudaGetLastError();
}

ADNN_CUDA_API cudaError_t adnn_cuda_conv2d_pad_widen_launch(const adnn_cuda_launch_config *l,
                                                            adnn_dtype dtype,
                                                            const adnn_tensor_desc *x,
                                                            const int64_t pad[4], int nhwc,
                                                            const void *src, void *dst) {
  const int threads = 256;
  const int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
  const int64_t Hp = H + pad[0] + pad[1], Wp = W + pad[2] + pad[3];
  const int64_t total = N * C * Hp * Wp;
  if (total <= 0) return cudaSuccess;
  const unsigned grid = grid_for(l, total, threads);
  const int64_t *xs = x->strides;
  if (dtype == ADNN_DTYPE_F16)
    pad_widen_kernel<lowp_f16><<<grid, threads, 0, l->stream>>>(
        N, C, H, W, xs[0], xs[1], xs[2], xs[3], pad[0], pad[2], Hp, Wp, nhwc,
        (const lowp_f16 *)src, (float *)dst);
  else if (dtype == ADNN_DTYPE_BF16)
    pad_widen_kernel<lowp_bf16><<<grid, threads, 0, l->stream>>>(
        N, C, H, W, xs[0], xs[1], xs[2], xs[3], pad[0], pad[2], Hp, Wp, nhwc,
        (const lowp_bf16 *)src, (float *)dst);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}
