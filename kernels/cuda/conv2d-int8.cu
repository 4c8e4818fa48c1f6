/*
 * conv2d with integer inputs (an I8 or U8 x, an I8 w) on the CUDA plugin:
 * the definition of adnn/ops.h, exactly as the reference kernel computes it
 * (kernels/ref/conv2d.c). One thread per output element y[n, k, p, q],
 * grid-stride over N*K*P*Q in int64, numbered in y's memory order (index4)
 * so that writes are coalesced for NCHW and NHWC. The accumulator
 *   acc = sum over the taps inside the image of (x - x_zero_point) * w
 * is exact in 32 bits (the core bounds the taps so that |acc| < 2^31; a tap
 * in the padding reads x_zero_point and adds nothing); the I32 bias is
 * added in 64 bits, then relu or the identity, then y is saturated to I32
 * or requantized: saturate(rint(v * s[k]) + y_zero_point) in double, rint
 * rounding half to even in the default mode, a NaN product giving the zero
 * point. Any strides, groups, padding and dilation the core accepts. It is
 * not a fast path: cuDNN's INT8 convolutions take neither a u8 x nor an x
 * zero point, and no Tensor-Core kernel of ours exists yet (doc/cuda.md).
 */
#include "kernels/cuda/common.cuh"

namespace adnn_cuda {

template <typename TX, typename TY>
__global__ void conv2d_int8_kernel(adnn_plugin_conv2d p, adnn_cuda_memory_order order,
                                   const TX *x, const int8_t *w, const int32_t *bias,
                                   const float *scales, TY *y) {
  const int64_t total = p.N * p.K * p.P * p.Q;
  const int64_t dims[4] = {p.N, p.K, p.P, p.Q};
  const int requant = p.y.dtype == ADNN_DTYPE_I8 || p.y.dtype == ADNN_DTYPE_U8;
  const long long lo = p.y.dtype == ADNN_DTYPE_I8 ? -128 : requant ? 0 : -2147483647LL - 1;
  const long long hi = p.y.dtype == ADNN_DTYPE_I8 ? 127 : requant ? 255 : 2147483647LL;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t idx[4];
    index4(i, dims, order, idx);
    const int64_t n = idx[0], k = idx[1], op = idx[2], oq = idx[3];
    const int64_t g = k / p.Kg;
    const int64_t h0 = op * p.stride_h - p.pad_top, w0 = oq * p.stride_w - p.pad_left;
    const TX *xn = x + n * p.x.strides[0] + g * p.Cg * p.x.strides[1];
    const int8_t *wk = w + k * p.w.strides[0];
    int32_t acc = 0;
    for (int64_t c = 0; c < p.Cg; c++)
      for (int64_t r = 0; r < p.R; r++) {
        const int64_t h = h0 + r * p.dilation_h;
        if (h < 0 || h >= p.H) continue;
        for (int64_t s = 0; s < p.S; s++) {
          const int64_t ww = w0 + s * p.dilation_w;
          if (ww < 0 || ww >= p.W) continue;
          const int32_t xv = (int32_t)xn[c * p.x.strides[1] + h * p.x.strides[2] +
                                         ww * p.x.strides[3]] - p.x_zero_point;
          acc += xv * (int32_t)wk[c * p.w.strides[1] + r * p.w.strides[2] + s * p.w.strides[3]];
        }
      }
    long long v = (long long)acc + (bias ? (long long)bias[k * p.bias.strides[0]] : 0LL);
    if (p.activation.kind == ADNN_ACTIVATION_RELU && v < 0) v = 0;
    if (requant) {
      const double scale =
          scales ? (double)scales[k * p.requant_scales.strides[0]] : p.requant_scale;
      const double q = (double)v * scale;
      const double rq = (q != q ? 0.0 : rint(q)) + (double)p.y_zero_point;
      v = rq < (double)lo ? lo : rq > (double)hi ? hi : (long long)rq;
    } else {
      v = v < lo ? lo : v > hi ? hi : v;
    }
    y[n * p.y.strides[0] + k * p.y.strides[1] + op * p.y.strides[2] + oq * p.y.strides[3]] = (TY)v;
  }
}

template <typename TX, typename TY>
static cudaError_t launch_int8(const adnn_cuda_launch_config *l, const adnn_plugin_conv2d *p,
                               const adnn_cuda_memory_order *y_order, const void *x, const void *w,
                               const void *bias, const void *scales, void *y) {
  const int threads = 128;
  const int64_t total = p->N * p->K * p->P * p->Q;
  conv2d_int8_kernel<TX, TY><<<grid_for(l, total, threads), threads, 0, l->stream>>>(
      *p, *y_order, (const TX *)x, (const int8_t *)w, (const int32_t *)bias,
      (const float *)scales, (TY *)y);
  return cudaGetLastError();
}

template <typename TX>
static cudaError_t launch_int8_y(const adnn_cuda_launch_config *l, const adnn_plugin_conv2d *p,
                                 const adnn_cuda_memory_order *y_order, const void *x,
                                 const void *w, const void *bias, const void *scales, void *y) {
  switch (p->y.dtype) {
    case ADNN_DTYPE_I8: return launch_int8<TX, int8_t>(l, p, y_order, x, w, bias, scales, y);
    case ADNN_DTYPE_U8: return launch_int8<TX, uint8_t>(l, p, y_order, x, w, bias, scales, y);
    default: return launch_int8<TX, int32_t>(l, p, y_order, x, w, bias, scales, y);
  }
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_conv2d_int8_launch(const adnn_cuda_launch_config *l,
                                                       const adnn_plugin_conv2d *p,
                                                       const adnn_cuda_memory_order *y_order,
                                                       const void *x, const void *w,
                                                       const void *bias, const void *scales,
                                                       void *y) {
  const int64_t total = p->N * p->K * p->P * p->Q;
  if (total <= 0) return cudaSuccess;
  if (p->x.dtype == ADNN_DTYPE_U8)
    return launch_int8_y<uint8_t>(l, p, y_order, x, w, bias, scales, y);
  return launch_int8_y<int8_t>(l, p, y_order, x, w, bias, scales, y);
}
