/*
 * Elementwise activations: all twelve kinds of ADNN_ACTIVATION_LIST.
 *
 * Why this is correct for every shape the descriptor allows:
 *  - Every element has one logical index lin in [0, count); the grid-stride
 *    loops visit each lin exactly once (start = block * blockDim + thread,
 *    step = gridDim * blockDim, all in int64_t so counts >= 2^31 do not wrap).
 *  - Offsets come from nd_offsets over the host's coalesced layout (any rank
 *    <= 8, any non-negative strides, as the core validated); rank 0 has one
 *    element at offset 0.
 *  - The contiguous path is taken only when the host coalesced x and y into
 *    one dim of stride 1 (so offset == lin); its vector part covers lin in
 *    [0, 4 * (count / 4)) (double: 2 * (count / 2); F16, BF16:
 *    8 * (count / 8)) with 16-byte loads and
 *    stores, used only when both pointers are 16-byte aligned; the scalar tail
 *    covers the rest.
 *  - In place (y == x, same layout, as the core allows): each element is read
 *    and then written by the same thread, and no thread touches another's
 *    element, so no synchronization is needed.
 *  - F16 and BF16 (lowp_elem.cuh): each element is widened exactly to F32,
 *    the F32 definition runs on it and the result is rounded once, which is
 *    the CPU's definition too (the F32 kernel on the widened input, rounded).
 */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/lowp_elem.cuh"

namespace adnn_cuda {

/* One element: widened, the definition in elem<T>::compute, one rounding. */
template <typename T>
__device__ __forceinline__ void act_one(const adnn_activation &act, const T *x, T *y) {
  typedef typename elem<T>::compute C;
  put(y, activate<C>(act, widen(*x)));
}

template <typename T>
__global__ void act_strided(adnn_activation act, adnn_nd nd, int64_t n, const T *x, T *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t off[2];
    nd_offsets(nd, i, off);
    act_one<T>(act, x + off[0], y + off[1]);
  }
}

template <typename T>
__global__ void act_packed(adnn_activation act, int64_t n, const T *x, T *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    act_one<T>(act, x + i, y + i);
}

/* 16-byte vectors: 4 floats. */
__global__ void act_vec_f32(adnn_activation act, int64_t nvec, const float4 *x, float4 *y) {
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
__global__ void act_vec_f64(adnn_activation act, int64_t nvec, const double2 *x, double2 *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nvec;
       i += (int64_t)gridDim.x * blockDim.x) {
    double2 v = x[i];
    v.x = activate<double>(act, v.x);
    v.y = activate<double>(act, v.y);
    y[i] = v;
  }
}

/* 16-byte vectors: 8 F16 or BF16 elements (T is lowp_f16 or lowp_bf16). */
template <typename T>
__global__ void act_vec_lowp(adnn_activation act, int64_t nvec, const uint4 *x, uint4 *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nvec;
       i += (int64_t)gridDim.x * blockDim.x) {
    const uint4 v = x[i];
    T r[8];
#pragma unroll
    for (int k = 0; k < 8; k++) {
      const T e = {u16_of(v, k)};
      act_one<T>(act, &e, &r[k]);
    }
    y[i] = u16_vec(r[0].bits, r[1].bits, r[2].bits, r[3].bits, r[4].bits, r[5].bits, r[6].bits,
                   r[7].bits);
  }
}

template <typename T>
static cudaError_t launch_act(const adnn_cuda_launch_config *l, const adnn_plugin_activation *p,
                              const adnn_cuda_elementwise_layout *e, const void *xv, void *yv) {
  const int threads = 256;
  const int64_t n = p->count;
  const adnn_activation act = p->activation;
  const T *x = (const T *)xv;
  T *y = (T *)yv;
  if (n <= 0) return cudaSuccess;
  if (!e->contiguous) {
    act_strided<T><<<grid_for(l, n, threads), threads, 0, l->stream>>>(act, e->nd, n, x, y);
    return cudaGetLastError();
  }
  const int per = 16 / (int)sizeof(T);
  const int aligned = (((uintptr_t)x | (uintptr_t)y) & 15u) == 0;
  int64_t done = 0;
  if (aligned && n >= per) {
    const int64_t nvec = n / per;
    if constexpr (sizeof(T) == 2)
      act_vec_lowp<T><<<grid_for(l, nvec, threads), threads, 0, l->stream>>>(
          act, nvec, (const uint4 *)xv, (uint4 *)yv);
    else if (sizeof(T) == 4)
      act_vec_f32<<<grid_for(l, nvec, threads), threads, 0, l->stream>>>(
          act, nvec, (const float4 *)xv, (float4 *)yv);
    else
      act_vec_f64<<<grid_for(l, nvec, threads), threads, 0, l->stream>>>(
          act, nvec, (const double2 *)xv, (double2 *)yv);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return err;
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

ADNN_CUDA_API cudaError_t adnn_cuda_activation_launch(const adnn_cuda_launch_config *l,
                                                      adnn_dtype dtype,
                                                      const adnn_plugin_activation *p,
                                                      const adnn_cuda_elementwise_layout *e,
                                                      const void *x, void *y) {
  switch (dtype) {
    case ADNN_DTYPE_F64: return launch_act<double>(l, p, e, x, y);
    case ADNN_DTYPE_F16: return launch_act<lowp_f16>(l, p, e, x, y);
    case ADNN_DTYPE_BF16: return launch_act<lowp_bf16>(l, p, e, x, y);
    default: return launch_act<float>(l, p, e, x, y);
  }
}
