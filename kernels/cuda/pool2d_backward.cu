/*
 * 2-D pooling backward in gather form: one thread per element of dx sums
 * what the windows that contain it send it, in row-major window order. No
 * atomics, no zeroing pass, and the result is deterministic. Max pooling
 * finds each window's receiving element in x again (the first NaN in
 * row-major order, else the first element equal to the maximum: doc/ops.md);
 * average pooling divides dy by the forward divisor.
 *
 * Why this is correct for every shape the descriptor allows:
 *  - The windows whose rows contain h are oh in [ceil((h + pad_top -
 *    kernel_h + 1) / stride_h), floor((h + pad_top) / stride_h)] clipped to
 *    [0, P) (pad_top >= 0, so h + pad_top >= 0), and likewise for columns;
 *    every window of y that covers (h, w) is visited exactly once.
 *  - Window extents, in-image clipping and divisors are those of pool2d.cu
 *    (ceil_mode windows running past the padded image included).
 *  - dx's elements are numbered in dx's (x's) memory order so that
 *    neighbouring threads write neighbouring addresses; each thread writes
 *    its own element only, and dx overlaps no input (the core checks).
 *  - F16 and BF16 (lowp_elem.cuh): x and dy are widened exactly to F32 (the
 *    max search compares the widened values, which order as the 16-bit ones
 *    do), the sum stays in double, and dx is rounded once.
 */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/lowp_elem.cuh"

namespace adnn_cuda {

/* T is the storage type (float, double, lowp_f16, lowp_bf16), C the
 * arithmetic's (elem<T>::compute). */
template <typename T>
__global__ void pool2d_bwd_kernel(adnn_plugin_pool2d p, adnn_cuda_memory_order order, const T *x,
                                  const T *dy, T *dx) {
  typedef typename elem<T>::compute C;
  const int64_t total = p.N * p.C * p.H * p.W;
  const int64_t dims[4] = {p.N, p.C, p.H, p.W};
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t idx[4];
    index4(i, dims, order, idx);
    const int64_t n = idx[0], c = idx[1], h = idx[2], w = idx[3];
    const T *xb = x + n * p.x.strides[0] + c * p.x.strides[1];
    const T *gb = dy + n * p.y.strides[0] + c * p.y.strides[1];
    const int64_t th = h + p.pad_top, tw = w + p.pad_left;
    const int64_t oh0 = th - p.kernel_h + 1 <= 0 ? 0 : (th - p.kernel_h + p.stride_h) / p.stride_h;
    const int64_t ow0 = tw - p.kernel_w + 1 <= 0 ? 0 : (tw - p.kernel_w + p.stride_w) / p.stride_w;
    int64_t oh1 = th / p.stride_h + 1, ow1 = tw / p.stride_w + 1;
    if (oh1 > p.P) oh1 = p.P;
    if (ow1 > p.Q) ow1 = p.Q;
    double acc = 0.0;
    for (int64_t oh = oh0; oh < oh1; oh++)
      for (int64_t ow = ow0; ow < ow1; ow++) {
        const int64_t h0 = oh * p.stride_h - p.pad_top, h1 = h0 + p.kernel_h;
        const int64_t w0 = ow * p.stride_w - p.pad_left, w1 = w0 + p.kernel_w;
        const int64_t ih0 = h0 < 0 ? 0 : h0, ih1 = h1 > p.H ? p.H : h1;
        const int64_t iw0 = w0 < 0 ? 0 : w0, iw1 = w1 > p.W ? p.W : w1;
        const C g = lp_load(gb + oh * p.y.strides[2] + ow * p.y.strides[3]);
        if (p.kind == ADNN_POOL_MAX) {
          int64_t mh = ih0, mw = iw0;
          C best = lp_load(xb + ih0 * p.x.strides[2] + iw0 * p.x.strides[3]);
          if (!isnan(best)) {
            for (int64_t a = ih0; a < ih1; a++) {
              bool stop = false;
              for (int64_t b = iw0; b < iw1; b++) {
                const C v = lp_load(xb + a * p.x.strides[2] + b * p.x.strides[3]);
                if (isnan(v)) {
                  mh = a;
                  mw = b;
                  stop = true;
                  break;
                }
                if (v > best) {
                  best = v;
                  mh = a;
                  mw = b;
                }
              }
              if (stop) break;
            }
          }
          if (mh == h && mw == w) acc += (double)g;
        } else {
          int64_t count;
          if (p.kind == ADNN_POOL_AVG_INCLUDE_PAD) {
            const int64_t ch1 = h1 > p.H + p.pad_bottom ? p.H + p.pad_bottom : h1;
            const int64_t cw1 = w1 > p.W + p.pad_right ? p.W + p.pad_right : w1;
            const int64_t ch0 = h0 < -p.pad_top ? -p.pad_top : h0;
            const int64_t cw0 = w0 < -p.pad_left ? -p.pad_left : w0;
            count = (ch1 - ch0) * (cw1 - cw0);
          } else {
            count = (ih1 - ih0) * (iw1 - iw0);
          }
          acc += (double)g / (double)count;
        }
      }
    lp_store(dx + n * p.x.strides[0] + c * p.x.strides[1] + h * p.x.strides[2] + w * p.x.strides[3],
             acc);
  }
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_pool2d_backward_launch(const adnn_cuda_launch_config *l,
                                                           adnn_dtype dtype,
                                                           const adnn_plugin_pool2d_backward *p,
                                                           const adnn_cuda_memory_order *x_order,
                                                           const void *x, const void *dy,
                                                           void *dx) {
  const int threads = 256;
  const adnn_plugin_pool2d *f = &p->fwd;
  const int64_t total = f->N * f->C * f->H * f->W;
  if (total <= 0) return cudaSuccess;
  const unsigned grid = grid_for(l, total, threads);
  switch (dtype) {
    case ADNN_DTYPE_F64:
      pool2d_bwd_kernel<double><<<grid, threads, 0, l->stream>>>(
          *f, *x_order, (const double *)x, (const double *)dy, (double *)dx);
      break;
    case ADNN_DTYPE_F16:
      pool2d_bwd_kernel<lowp_f16><<<grid, threads, 0, l->stream>>>(
          *f, *x_order, (const lowp_f16 *)x, (const lowp_f16 *)dy, (lowp_f16 *)dx);
      break;
    case ADNN_DTYPE_BF16:
      pool2d_bwd_kernel<lowp_bf16><<<grid, threads, 0, l->stream>>>(
          *f, *x_order, (const lowp_bf16 *)x, (const lowp_bf16 *)dy, (lowp_bf16 *)dx);
      break;
    default:
      pool2d_bwd_kernel<float><<<grid, threads, 0, l->stream>>>(
          *f, *x_order, (const float *)x, (const float *)dy, (float *)dx);
      break;
  }
  return cudaGetLastError();
}
