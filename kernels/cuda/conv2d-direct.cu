/*
 * The direct 2-D convolution (cross-correlation) with fused bias and
 * activation: the "direct" and "reference" algorithms of the CUDA plugin, and
 * its fallback for problems cuDNN rejects. It is not a fast path.
 *
 * One thread per output element y[n, k, p, q], grid-stride over N*K*P*Q in
 * int64; the linear index is decomposed over y's dims in y's memory order
 * (index4), so writes are coalesced for NCHW and NHWC. It loops over the c of
 * k's group, r and s exactly as doc/ops.md defines the convolution, skipping
 * taps that fall into the zero padding (h or w outside [0, H) x [0, W)), so it
 * is correct for every stride, dilation, padding (also asymmetric: the
 * bottom/right padding only shows as P, Q), group count and tensor strides the
 * core accepts. `Acc` double accumulates exactly enough for the "reference"
 * algorithm; the bias and the activation are applied in Acc before the one
 * rounding to T. F16/BF16 (T lowp_f16 / lowp_bf16, bias of the same dtype):
 * every load widens exactly, Acc is float (double for "reference"), and y is
 * rounded once on store (lowp_elem.cuh), as the CPU's lowp algorithm does.
 */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/lowp_elem.cuh"

namespace adnn_cuda {

template <typename T, typename Acc>
__global__ void conv2d_direct_kernel(adnn_plugin_conv2d p, adnn_cuda_memory_order order,
                                     const T *x, const T *w, const T *bias, T *y) {
  const int64_t total = p.N * p.K * p.P * p.Q;
  const int64_t dims[4] = {p.N, p.K, p.P, p.Q};
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t idx[4];
    index4(i, dims, order, idx);
    const int64_t n = idx[0], k = idx[1], op = idx[2], oq = idx[3];
    const int64_t g = k / p.Kg;
    const int64_t h0 = op * p.stride_h - p.pad_top, w0 = oq * p.stride_w - p.pad_left;
    Acc acc = Acc(0);
    const T *xn = x + n * p.x.strides[0] + g * p.Cg * p.x.strides[1];
    const T *wk = w + k * p.w.strides[0];
    for (int64_t c = 0; c < p.Cg; c++) {
      for (int64_t r = 0; r < p.R; r++) {
        const int64_t h = h0 + r * p.dilation_h;
        if (h < 0 || h >= p.H) continue;
        for (int64_t s = 0; s < p.S; s++) {
          const int64_t ww = w0 + s * p.dilation_w;
          if (ww < 0 || ww >= p.W) continue;
          acc += (Acc)lp_load(xn + c * p.x.strides[1] + h * p.x.strides[2] +
                              ww * p.x.strides[3]) *
                 (Acc)lp_load(wk + c * p.w.strides[1] + r * p.w.strides[2] + s * p.w.strides[3]);
        }
      }
    }
    if (bias) acc += (Acc)lp_load(bias + k * p.bias.strides[0]);
    lp_store(y + n * p.y.strides[0] + k * p.y.strides[1] + op * p.y.strides[2] +
                 oq * p.y.strides[3],
             activate<Acc>(p.activation, acc));
  }
}

template <typename T, typename Acc>
static cudaError_t launch_direct(const adnn_cuda_launch_config *l, const adnn_plugin_conv2d *p,
                                 const adnn_cuda_memory_order *y_order, const void *x,
                                 const void *w, const void *bias, void *y) {
  const int threads = 128;
  const int64_t total = p->N * p->K * p->P * p->Q;
  conv2d_direct_kernel<T, Acc><<<grid_for(l, total, threads), threads, 0, l->stream>>>(
      *p, *y_order, (const T *)x, (const T *)w, (const T *)bias, (T *)y);
  return cudaGetLastError();
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_conv2d_direct_launch(const adnn_cuda_launch_config *l,
                                                         adnn_dtype dtype, int exact,
                                                         const adnn_plugin_conv2d *p,
                                                         const adnn_cuda_memory_order *y_order,
                                                         const void *x, const void *w,
                                                         const void *bias, void *y) {
  const int64_t total = p->N * p->K * p->P * p->Q;
  if (total <= 0) return cudaSuccess;
  switch (dtype) {
    case ADNN_DTYPE_F64: return launch_direct<double, double>(l, p, y_order, x, w, bias, y);
    case ADNN_DTYPE_F16:
      return exact ? launch_direct<lowp_f16, double>(l, p, y_order, x, w, bias, y)
                   : launch_direct<lowp_f16, float>(l, p, y_order, x, w, bias, y);
    case ADNN_DTYPE_BF16:
      return exact ? launch_direct<lowp_bf16, double>(l, p, y_order, x, w, bias, y)
                   : launch_direct<lowp_bf16, float>(l, p, y_order, x, w, bias, y);
    default:
      return exact ? launch_direct<float, double>(l, p, y_order, x, w, bias, y)
                   : launch_direct<float, float>(l, p, y_order, x, w, bias, y);
  }
}
