/*
 * 2-D pooling: max (NaN wins), average including padding (divisor: the window
 * clipped to the padded image), average excluding padding (divisor: the
 * in-image elements). Asymmetric padding and ceil_mode windows, any strides.
 * This is the definition of doc/ops.md, one thread per output.
 *
 * Why this is correct for every shape the descriptor allows:
 *  - One thread per output element (grid-stride over N*C*P*Q in int64). The
 *    linear index is decomposed over y's dims in y's memory order (index4), so
 *    consecutive threads write consecutive addresses for NCHW and NHWC alike.
 *  - The window in padded coordinates is [h0, h0 + kernel_h) with
 *    h0 = p * stride_h - pad_top; its in-image part [max(h0,0), min(h1,H)) is
 *    never empty: the core checks pad <= kernel / 2 and ceil_mode drops a last
 *    window that would start in the bottom padding, so every window overlaps
 *    the image (the divisor of the exclude-pad average is >= 1).
 *  - The include-pad divisor clips the window to
 *    [-pad_top, H + pad_bottom) x [-pad_left, W + pad_right): a ceil_mode
 *    window may run past the padded image and those positions do not count.
 *  - Reads only; y never aliases x (the core refuses overlap for pooling).
 *  - F16 and BF16 (lowp_elem.cuh): elements are widened exactly; max
 *    compares them in F32 (exact, the result is one of them); the average
 *    sums the window and divides in F64, as the CPU's reference kernels do
 *    (a window sum of F16 values is exact in F64), and y is rounded once from
 *    the F64 quotient.
 */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/lowp_elem.cuh"

namespace adnn_cuda {

template <typename T>
__global__ void pool2d_kernel(adnn_plugin_pool2d p, adnn_cuda_memory_order order, const T *x,
                              T *y) {
  typedef typename elem<T>::compute C;
  typedef typename elem<T>::accum A;
  const int64_t total = p.N * p.C * p.P * p.Q;
  const int64_t dims[4] = {p.N, p.C, p.P, p.Q};
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t idx[4];
    index4(i, dims, order, idx);
    const int64_t n = idx[0], c = idx[1], op = idx[2], oq = idx[3];
    const int64_t h0 = op * p.stride_h - p.pad_top, h1 = h0 + p.kernel_h;
    const int64_t w0 = oq * p.stride_w - p.pad_left, w1 = w0 + p.kernel_w;
    const int64_t ih0 = h0 < 0 ? 0 : h0, ih1 = h1 > p.H ? p.H : h1;
    const int64_t iw0 = w0 < 0 ? 0 : w0, iw1 = w1 > p.W ? p.W : w1;
    const T *base = x + n * p.x.strides[0] + c * p.x.strides[1];
    T *out = y + n * p.y.strides[0] + c * p.y.strides[1] + op * p.y.strides[2] +
             oq * p.y.strides[3];
    if (p.kind == ADNN_POOL_MAX) {
      C m = -INFINITY;
      bool nan_seen = false;
      for (int64_t h = ih0; h < ih1; h++)
        for (int64_t w = iw0; w < iw1; w++) {
          const C v = widen(base[h * p.x.strides[2] + w * p.x.strides[3]]);
          if (isnan(v)) nan_seen = true;
          else if (v > m) m = v;
        }
      put(out, nan_seen ? C(NAN) : m);
    } else {
      A acc = A(0);
      for (int64_t h = ih0; h < ih1; h++)
        for (int64_t w = iw0; w < iw1; w++)
          acc += (A)widen(base[h * p.x.strides[2] + w * p.x.strides[3]]);
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
      put(out, acc / (A)count);
    }
  }
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_pool2d_launch(const adnn_cuda_launch_config *l,
                                                  adnn_dtype dtype, const adnn_plugin_pool2d *p,
                                                  const adnn_cuda_memory_order *y_order,
                                                  const void *x, void *y) {
  const int threads = 256;
  const int64_t total = p->N * p->C * p->P * p->Q;
  if (total <= 0) return cudaSuccess;
  const unsigned grid = grid_for(l, total, threads);
  if (dtype == ADNN_DTYPE_F64)
    pool2d_kernel<double><<<grid, threads, 0, l->stream>>>(*p, *y_order, (const double *)x,
                                                           (double *)y);
  else if (dtype == ADNN_DTYPE_F16)
    pool2d_kernel<lowp_f16><<<grid, threads, 0, l->stream>>>(*p, *y_order, (const lowp_f16 *)x,
                                                             (lowp_f16 *)y);
  else if (dtype == ADNN_DTYPE_BF16)
    pool2d_kernel<lowp_bf16><<<grid, threads, 0, l->stream>>>(*p, *y_order, (const lowp_bf16 *)x,
                                                              (lowp_bf16 *)y);
  else
    pool2d_kernel<float><<<grid, threads, 0, l->stream>>>(*p, *y_order, (const float *)x,
                                                          (float *)y);
  return cudaGetLastError();
}
