/*
 * The direct gradient of a 2-D convolution with respect to its filter and
 * bias: the "direct" and "reference" algorithms of the CUDA plugin's conv2d
 * backward weights, and its fallback for problems cuDNN rejects. It is not a
 * fast path (each thread sums over the whole batch).
 *
 * dw[k, c, r, s] = beta * dw[k, c, r, s] + the sum over n, p, q of
 * x[n, g*Cg + c, p * stride_h - pad_top + r * dilation_h, ...] * dy[n, k, p, q]
 * (taps in the zero padding skipped), and db[k] = beta * db[k] + the sum of
 * dy[n, k, p, q] over n, p, q. One thread per element of dw (numbered in dw's
 * memory order) and then one per element of db; every sum runs in one fixed
 * order in one thread, so the result is bitwise the same run to run. Outputs
 * are read only when beta != 0. `Acc` double is the "reference" accumulation.
 */
#include "kernels/cuda/common.cuh"

namespace adnn_cuda {

template <typename T, typename Acc>
__global__ void conv2d_backward_weights_direct_kernel(adnn_plugin_conv2d p, Acc beta,
                                                      adnn_cuda_memory_order order, const T *x,
                                                      const T *dy, T *dw) {
  const int64_t total = p.K * p.Cg * p.R * p.S;
  const int64_t dims[4] = {p.K, p.Cg, p.R, p.S};
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t idx[4];
    index4(i, dims, order, idx);
    const int64_t k = idx[0], cg = idx[1], r = idx[2], s = idx[3];
    const int64_t c = (k / p.Kg) * p.Cg + cg;
    Acc acc = Acc(0);
    for (int64_t n = 0; n < p.N; n++)
      for (int64_t op = 0; op < p.P; op++) {
        const int64_t h = op * p.stride_h - p.pad_top + r * p.dilation_h;
        if (h < 0 || h >= p.H) continue;
        const T *xr = x + n * p.x.strides[0] + c * p.x.strides[1] + h * p.x.strides[2];
        const T *dyr = dy + n * p.y.strides[0] + k * p.y.strides[1] + op * p.y.strides[2];
        for (int64_t oq = 0; oq < p.Q; oq++) {
          const int64_t ww = oq * p.stride_w - p.pad_left + s * p.dilation_w;
          if (ww < 0 || ww >= p.W) continue;
          acc += (Acc)xr[ww * p.x.strides[3]] * (Acc)dyr[oq * p.y.strides[3]];
        }
      }
    T *out = dw + k * p.w.strides[0] + cg * p.w.strides[1] + r * p.w.strides[2] +
             s * p.w.strides[3];
    if (beta != Acc(0)) acc += beta * (Acc)*out;
    *out = (T)acc;
  }
}

template <typename T, typename Acc>
__global__ void conv2d_backward_bias_direct_kernel(adnn_plugin_conv2d p, Acc beta, const T *dy,
                                                   T *db) {
  for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < p.K;
       k += (int64_t)gridDim.x * blockDim.x) {
    Acc acc = Acc(0);
    for (int64_t n = 0; n < p.N; n++)
      for (int64_t op = 0; op < p.P; op++)
        for (int64_t oq = 0; oq < p.Q; oq++)
          acc += (Acc)dy[n * p.y.strides[0] + k * p.y.strides[1] + op * p.y.strides[2] +
                         oq * p.y.strides[3]];
    T *out = db + k * p.bias.strides[0];
    if (beta != Acc(0)) acc += beta * (Acc)*out;
    *out = (T)acc;
  }
}

template <typename T, typename Acc>
static cudaError_t launch(const adnn_cuda_launch_config *l, const adnn_plugin_conv2d *p,
                          Acc beta, const adnn_cuda_memory_order *dw_order, const T *x,
                          const T *dy, T *dw, T *db) {
  const int threads = 128;
  const int64_t total = p->K * p->Cg * p->R * p->S;
  if (total > 0) {
    const unsigned grid = grid_for(l, total, threads);
    conv2d_backward_weights_direct_kernel<T, Acc><<<grid, threads, 0, l->stream>>>(
        *p, beta, *dw_order, x, dy, dw);
  }
  if (db != nullptr && p->K > 0) {
    const unsigned grid = grid_for(l, p->K, threads);
    conv2d_backward_bias_direct_kernel<T, Acc><<<grid, threads, 0, l->stream>>>(*p, beta, dy,
                                                                               db);
  }
  return cudaGetLastError();
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_conv2d_backward_weights_direct_launch(
    const adnn_cuda_launch_config *l, adnn_dtype dtype, int exact, const adnn_plugin_conv2d *p,
    double beta, const adnn_cuda_memory_order *dw_order, const void *x, const void *dy, void *dw,
    void *db) {
  if (dtype == ADNN_DTYPE_F64)
    return launch<double, double>(l, p, beta, dw_order, (const double *)x, (const double *)dy,
                                  (double *)dw, (double *)db);
  if (exact)
    return launch<float, double>(l, p, beta, dw_order, (const float *)x, (const float *)dy,
                                 (float *)dw, (float *)db);
  return launch<float, float>(l, p, (float)beta, dw_order, (const float *)x, (const float *)dy,
                              (float *)dw, (float *)db);
}
