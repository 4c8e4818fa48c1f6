/*
 * matmul's own kernels (backends/cuda/cuda_matmul.c):
 *
 *  - the epilogue after a cuBLAS GEMM: y = act(y + bias + residual_scale * r)
 *    over every element of y, for the epilogues cuBLASLt does not have (any
 *    activation but identity, relu and the tanh GELU; a strided bias);
 *  - the direct kernel for layouts cuBLAS cannot take (no unit stride in
 *    either of the last two dims of a, b or y): one thread per element of y
 *    computes its dot product and its epilogue.
 *
 * Why this is correct:
 *  - The core brought a, b, r and y to rank 4 [B0, B1, rows, cols] (b's
 *    broadcast batch dims have stride 0), so element lin of y, decomposed
 *    row-major over y's dims, names its batch indices, i and j; every
 *    operand's element follows from its own strides. Each y element is
 *    visited exactly once by the int64 grid-stride loop.
 *  - r may be y itself (the in-place residual, the same layout, checked by
 *    the core): each thread reads r at its own element before writing it,
 *    and no other thread touches that element. The GEMM path never passes r
 *    here when r is y (the GEMM read it as C with beta = residual_scale).
 *  - The dot product accumulates in T (float or double), in the order k =
 *    0, 1, ..., like a plain GEMM; doc/numerics.md bounds its error.
 */
#include "kernels/cuda/common.cuh"

namespace adnn_cuda {

/* The indices [b0, b1, i, j] of row-major element lin of y's dims. */
__device__ __forceinline__ void mm_index(int64_t lin, const int64_t dims[4], int64_t idx[4]) {
  for (int k = 3; k >= 0; k--) {
    idx[k] = lin % dims[k];
    lin /= dims[k];
  }
}

__device__ __forceinline__ int64_t mm_offset(const int64_t idx[4], const int64_t s[4]) {
  return idx[0] * s[0] + idx[1] * s[1] + idx[2] * s[2] + idx[3] * s[3];
}

/* The epilogue in place on y: bias (NULL: none) of stride bias_stride, r
 * (NULL: none) of r_strides. */
template <typename T>
__global__ void mm_epilogue(adnn_plugin_matmul p, int64_t n, const T *bias, const T *r, T *y) {
  const T rs = (T)p.residual_scale;
  for (int64_t lin = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; lin < n;
       lin += (int64_t)gridDim.x * blockDim.x) {
    int64_t idx[4];
    mm_index(lin, p.y.dims, idx);
    const int64_t oy = mm_offset(idx, p.y.strides);
    T v = y[oy];
    if (bias) v += bias[idx[3] * p.bias.strides[0]];
    if (r) v += rs * r[mm_offset(idx, p.residual.strides)];
    y[oy] = activate<T>(p.activation, v);
  }
}

/* The whole op for any strides: y = act(alpha * (a @ b) + bias + rs * r). */
template <typename T>
__global__ void mm_direct(adnn_plugin_matmul p, int64_t n, const T *a, const T *b, const T *bias,
                          const T *r, T *y) {
  const T alpha = (T)p.alpha, rs = (T)p.residual_scale;
  for (int64_t lin = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; lin < n;
       lin += (int64_t)gridDim.x * blockDim.x) {
    int64_t idx[4];
    mm_index(lin, p.y.dims, idx);
    const T *ar = a + idx[0] * p.a.strides[0] + idx[1] * p.a.strides[1] + idx[2] * p.a.strides[2];
    const T *bc = b + idx[0] * p.b.strides[0] + idx[1] * p.b.strides[1] + idx[3] * p.b.strides[3];
    const int64_t sak = p.a.strides[3], sbk = p.b.strides[2];
    T acc = T(0);
    for (int64_t k = 0; k < p.K; k++) acc += ar[k * sak] * bc[k * sbk];
    T v = alpha * acc;
    if (bias) v += bias[idx[3] * p.bias.strides[0]];
    if (r) v += rs * r[mm_offset(idx, p.residual.strides)];
    y[mm_offset(idx, p.y.strides)] = activate<T>(p.activation, v);
  }
}

template <typename T>
static cudaError_t launch_epilogue(const adnn_cuda_launch_config *l, const adnn_plugin_matmul *p,
                                   const void *bias, const void *r, void *y) {
  const int threads = 256;
  const int64_t n = p->batch0 * p->batch1 * p->M * p->N;
  mm_epilogue<T><<<grid_for(l, n, threads), threads, 0, l->stream>>>(
      *p, n, (const T *)bias, (const T *)r, (T *)y);
  return cudaGetLastError();
}

template <typename T>
static cudaError_t launch_direct(const adnn_cuda_launch_config *l, const adnn_plugin_matmul *p,
                                 const void *a, const void *b, const void *bias, const void *r,
                                 void *y) {
  const int threads = 256;
  const int64_t n = p->batch0 * p->batch1 * p->M * p->N;
  mm_direct<T><<<grid_for(l, n, threads), threads, 0, l->stream>>>(
      *p, n, (const T *)a, (const T *)b, (const T *)bias, (const T *)r, (T *)y);
  return cudaGetLastError();
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_matmul_epilogue_launch(const adnn_cuda_launch_config *l,
                                                           adnn_dtype dtype,
                                                           const adnn_plugin_matmul *p,
                                                           const void *bias, const void *r,
                                                           void *y) {
  return dtype == ADNN_DTYPE_F64 ? launch_epilogue<double>(l, p, bias, r, y)
                                 : launch_epilogue<float>(l, p, bias, r, y);
}

ADNN_CUDA_API cudaError_t adnn_cuda_matmul_direct_launch(const adnn_cuda_launch_config *l,
                                                         adnn_dtype dtype,
                                                         const adnn_plugin_matmul *p,
                                                         const void *a, const void *b,
                                                         const void *bias, const void *r,
                                                         void *y) {
  return dtype == ADNN_DTYPE_F64 ? launch_direct<double>(l, p, a, b, bias, r, y)
                                 : launch_direct<float>(l, p, a, b, bias, r, y);
}
