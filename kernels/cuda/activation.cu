/*
 * Elementwise activations (all twelve adnn_activation_kind values), and the
 * per-channel bias + activation epilogue used after a convolution (which, with
 * no bias and the identity, is also the plugin's strided copy).
 *
 * Why this is correct for every shape the descriptors allow:
 *  - Every element has one logical index lin in [0, n); the grid-stride loops
 *    visit each lin exactly once (start = block * blockDim + thread, step =
 *    gridDim * blockDim, all in int64_t so n >= 2^31 does not wrap).
 *  - Offsets come from nd_offset (any rank <= 8, any non-negative strides, as
 *    the core validated); rank 0 has one element at offset 0.
 *  - The packed path is taken only when the host coalesced x and y into one
 *    dim of stride 1 (so offset == lin); its vector part covers lin in
 *    [0, 4 * (n / 4)) (double: 2 * (n / 2)) with 16-byte loads/stores, used only
 *    when both pointers are 16-byte aligned; the scalar tail covers the rest.
 *  - In place (y == x, same layout, as the core allows): each element is read
 *    and then written by the same thread, and no thread touches another's
 *    element, so no synchronization is needed.
 *  - The epilogue reads the channel index of lin along channel_dim with the
 *    same division chain, so the bias index is always in [0, dims[channel_dim]).
 */
#include "kernels/cuda/common.cuh"

namespace adnn_cuda {

template <typename T>
__global__ void act_strided(adnn_cuda_act act, adnn_cuda_nd nd, int64_t n, const T *x, T *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t ox, oy;
    nd_offset2(nd, i, ox, oy);
    y[oy] = activate<T>(act, x[ox]);
  }
}

template <typename T>
__global__ void act_packed(adnn_cuda_act act, int64_t n, const T *x, T *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    y[i] = activate<T>(act, x[i]);
}

/* 16-byte vectors: 4 floats. */
__global__ void act_vec_f32(adnn_cuda_act act, int64_t nvec, const float4 *x, float4 *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nvec;
       i += (int64_t)gridDim.x * blockDim.x) {
    float4 v = x[i];
    v.x = activate<float>(act, v.x);
    v.y = activate<float>(act, v.y);
    v.z = activate<float>(act, v.z);
    v.w = activate<float>(act, v.w);
    y[i] = v;
  }
}

/* 16-byte vectors: 2 doubles. */
__global__ void act_vec_f64(adnn_cuda_act act, int64_t nvec, const double2 *x, double2 *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nvec;
       i += (int64_t)gridDim.x * blockDim.x) {
    double2 v = x[i];
    v.x = activate<double>(act, v.x);
    v.y = activate<double>(act, v.y);
    y[i] = v;
  }
}

template <typename T>
__global__ void bias_act(adnn_cuda_act act, adnn_cuda_nd nd, int64_t n, int channel_dim,
                         const T *src, const T *bias, int64_t bias_stride, T *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t lin = i, os = 0, oy = 0, c = 0;
    for (int d = nd.rank - 1; d >= 0; d--) {
      const int64_t idx = lin % nd.dims[d];
      lin /= nd.dims[d];
      os += idx * nd.strides[0][d];
      oy += idx * nd.strides[1][d];
      if (d == channel_dim) c = idx;
    }
    T v = src[os];
    if (bias) v += bias[c * bias_stride];
    y[oy] = activate<T>(act, v);
  }
}

template <typename T>
static cudaError_t launch_act(const adnn_cuda_launch *l, adnn_cuda_act act, const adnn_cuda_nd *nd,
                              int64_t n, int packed, const void *xv, void *yv) {
  const int threads = 256;
  const T *x = (const T *)xv;
  T *y = (T *)yv;
  if (n <= 0) return cudaSuccess;
  if (!packed) {
    act_strided<T><<<grid_for(l, n, threads), threads, 0, l->stream>>>(act, *nd, n, x, y);
    return cudaGetLastError();
  }
  const int per = 16 / (int)sizeof(T);
  const int aligned = (((uintptr_t)x | (uintptr_t)y) & 15u) == 0;
  int64_t done = 0;
  if (aligned && n >= per) {
    const int64_t nvec = n / per;
    if (sizeof(T) == 4)
      act_vec_f32<<<grid_for(l, nvec, threads), threads, 0, l->stream>>>(
          act, nvec, (const float4 *)xv, (float4 *)yv);
    else
      act_vec_f64<<<grid_for(l, nvec, threads), threads, 0, l->stream>>>(
          act, nvec, (const double2 *)xv, (double2 *)yv);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    done = nvec * per;
  }
  if (done < n) {
    act_packed<T><<<grid_for(l, n - done, threads), threads, 0, l->stream>>>(act, n - done,
                                                                              x + done, y + done);
    return cudaGetLastError();
  }
  return cudaSuccess;
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_activation(const adnn_cuda_launch *l, int f64,
                                               adnn_cuda_act act, const adnn_cuda_nd *nd,
                                               int64_t n, int packed, const void *x, void *y) {
  return f64 ? launch_act<double>(l, act, nd, n, packed, x, y)
             : launch_act<float>(l, act, nd, n, packed, x, y);
}

ADNN_CUDA_API cudaError_t adnn_cuda_bias_activation(const adnn_cuda_launch *l, int f64,
                                                    adnn_cuda_act act, const adnn_cuda_nd *nd,
                                                    int64_t n, int channel_dim, const void *src,
                                                    const void *bias, int64_t bias_stride,
                                                    void *y) {
  const int threads = 256;
  if (n <= 0) return cudaSuccess;
  const unsigned grid = grid_for(l, n, threads);
  if (f64)
    bias_act<double><<<grid, threads, 0, l->stream>>>(act, *nd, n, channel_dim,
                                                      (const double *)src, (const double *)bias,
                                                      bias_stride, (double *)y);
  else
    bias_act<float><<<grid, threads, 0, l->stream>>>(act, *nd, n, channel_dim, (const float *)src,
                                                     (const float *)bias, bias_stride, (float *)y);
  return cudaGetLastError();
}
