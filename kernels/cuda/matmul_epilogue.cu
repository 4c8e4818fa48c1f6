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
 *  - A zero alpha or residual_scale leaves its operand unread, as BLAS and
 *    cuBLASLt do with a zero alpha or beta (doc/ops.md); the host passes r
 *    NULL when residual_scale is 0.
 *  - Low precision (doc/ops.md, "Matmul dtypes"): F16/BF16 inputs widen
 *    exactly to F32 and accumulate in F32 (k = 0, 1, ...); the epilogue runs
 *    in double from that accumulator (bias F32, residual in y's dtype
 *    widened), as kernels/cpu/matmul_lowp.c's does, and y gets one RNE
 *    rounding through kernels/common/float16.h's own functions
 *    (float16.cuh compiles them for the device).
 *    INT8 (s8 x s8, u8 x s8) accumulates exactly in 64-bit integers (the
 *    core bounds K so that I32 would do too), adds the I32 bias, and either
 *    saturates to I32 or requantizes to I8/U8 as the reference does: the
 *    product acc * scale in F64 (one rounding: acc is exact in F64, the
 *    scale an F32 or the descriptor's double), rint (round half even, the
 *    default mode), a NaN product giving the zero point, then saturation.
 */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/float16.cuh"

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
    T v = T(0);
    if (alpha != T(0)) { /* alpha 0 leaves a and b unread (doc/ops.md) */
      T acc = T(0);
      for (int64_t k = 0; k < p.K; k++) acc += ar[k * sak] * bc[k * sbk];
      v = alpha * acc;
    }
    if (bias) v += bias[idx[3] * p.bias.strides[0]];
    if (r) v += rs * r[mm_offset(idx, p.residual.strides)];
    y[mm_offset(idx, p.y.strides)] = activate<T>(p.activation, v);
  }
}

/* Loads and stores of matmul's storage types (F16, BF16 as their uint16_t
 * bits): loads widen exactly to F32, stores round a double once. */
struct mm_f16 { uint16_t bits; };
struct mm_bf16 { uint16_t bits; };
__device__ __forceinline__ float mm_load(const float *p) { return *p; }
__device__ __forceinline__ float mm_load(const mm_f16 *p) { return adnn_f16_to_f32(p->bits); }
__device__ __forceinline__ float mm_load(const mm_bf16 *p) { return adnn_bf16_to_f32(p->bits); }
__device__ __forceinline__ void mm_store(float *p, double v) { *p = (float)v; }
__device__ __forceinline__ void mm_store(mm_f16 *p, double v) { p->bits = adnn_f64_to_f16(v); }
__device__ __forceinline__ void mm_store(mm_bf16 *p, double v) { p->bits = adnn_f64_to_bf16(v); }

/* F16/BF16 inputs TI, y (and r) TO: the dot product in F32, the epilogue
 * in double from that F32 accumulator, one rounding into y. bias is F32.
 * (The CPU forms the same epilogue in F32 vector code since 2026-12-03; the
 * two stay within the bound of doc/numerics.md of each other.) */
template <typename TI, typename TO>
__global__ void mm_direct_lowp(adnn_plugin_matmul p, int64_t n, const TI *a, const TI *b,
                               const float *bias, const TO *r, TO *y) {
  for (int64_t lin = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; lin < n;
       lin += (int64_t)gridDim.x * blockDim.x) {
    int64_t idx[4];
    mm_index(lin, p.y.dims, idx);
    const TI *ar = a + idx[0] * p.a.strides[0] + idx[1] * p.a.strides[1] + idx[2] * p.a.strides[2];
    const TI *bc = b + idx[0] * p.b.strides[0] + idx[1] * p.b.strides[1] + idx[3] * p.b.strides[3];
    const int64_t sak = p.a.strides[3], sbk = p.b.strides[2];
    double v = 0.0;
    if (p.alpha != 0.0) { /* alpha 0 leaves a and b unread (doc/ops.md) */
      float acc = 0.0f;
      for (int64_t k = 0; k < p.K; k++) acc += mm_load(ar + k * sak) * mm_load(bc + k * sbk);
      v = p.alpha * (double)acc;
    }
    if (bias) v += (double)bias[idx[3] * p.bias.strides[0]];
    if (r) v += p.residual_scale * (double)mm_load(r + mm_offset(idx, p.residual.strides));
    mm_store(y + mm_offset(idx, p.y.strides), activate<double>(p.activation, v));
  }
}

/* INT8 inputs (TA int8_t or uint8_t, b int8_t), y TY (int32_t, int8_t or
 * uint8_t): the exact accumulator plus the I32 bias, saturated (I32) or
 * requantized with scales[n] (NULL: p.requant_scale) and y_zero_point. */
template <typename TA, typename TY>
__global__ void mm_direct_int(adnn_plugin_matmul p, int64_t n, const TA *a, const int8_t *b,
                              const int32_t *bias, const float *scales, TY *y) {
  const int requant = p.y.dtype == ADNN_DTYPE_I8 || p.y.dtype == ADNN_DTYPE_U8;
  const int64_t lo = p.y.dtype == ADNN_DTYPE_I8 ? -128 : p.y.dtype == ADNN_DTYPE_U8 ? 0 : INT32_MIN;
  const int64_t hi = p.y.dtype == ADNN_DTYPE_I8 ? 127 : p.y.dtype == ADNN_DTYPE_U8 ? 255 : INT32_MAX;
  for (int64_t lin = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; lin < n;
       lin += (int64_t)gridDim.x * blockDim.x) {
    int64_t idx[4];
    mm_index(lin, p.y.dims, idx);
    const TA *ar = a + idx[0] * p.a.strides[0] + idx[1] * p.a.strides[1] + idx[2] * p.a.strides[2];
    const int8_t *bc =
        b + idx[0] * p.b.strides[0] + idx[1] * p.b.strides[1] + idx[3] * p.b.strides[3];
    const int64_t sak = p.a.strides[3], sbk = p.b.strides[2];
    int64_t acc = 0;
    for (int64_t k = 0; k < p.K; k++) acc += (int64_t)ar[k * sak] * (int64_t)bc[k * sbk];
    if (bias) acc += bias[idx[3] * p.bias.strides[0]];
    int64_t v;
    if (requant) {
      const double scale = scales ? (double)scales[idx[3] * p.requant_scales.strides[0]]
                                  : p.requant_scale;
      const double q = (double)acc * scale;
      double rq = q != q ? 0.0 : rint(q);
      rq += (double)p.y_zero_point;
      v = rq < (double)lo ? lo : rq > (double)hi ? hi : (int64_t)rq;
    } else {
      v = acc < lo ? lo : acc > hi ? hi : acc;
    }
    y[mm_offset(idx, p.y.strides)] = (TY)v;
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

template <typename TI, typename TO>
static cudaError_t launch_lowp(const adnn_cuda_launch_config *l, const adnn_plugin_matmul *p,
                               const void *a, const void *b, const void *bias, const void *r,
                               void *y) {
  const int threads = 256;
  const int64_t n = p->batch0 * p->batch1 * p->M * p->N;
  mm_direct_lowp<TI, TO><<<grid_for(l, n, threads), threads, 0, l->stream>>>(
      *p, n, (const TI *)a, (const TI *)b, (const float *)bias, (const TO *)r, (TO *)y);
  return cudaGetLastError();
}

template <typename TI>
static cudaError_t launch_lowp_y(const adnn_cuda_launch_config *l, const adnn_plugin_matmul *p,
                                 const void *a, const void *b, const void *bias, const void *r,
                                 void *y) {
  switch (p->y.dtype) {
    case ADNN_DTYPE_F16: return launch_lowp<TI, mm_f16>(l, p, a, b, bias, r, y);
    case ADNN_DTYPE_BF16: return launch_lowp<TI, mm_bf16>(l, p, a, b, bias, r, y);
    default: return launch_lowp<TI, float>(l, p, a, b, bias, r, y);
  }
}

template <typename TA, typename TY>
static cudaError_t launch_int(const adnn_cuda_launch_config *l, const adnn_plugin_matmul *p,
                              const void *a, const void *b, const void *bias,
                              const void *scales, void *y) {
  const int threads = 256;
  const int64_t n = p->batch0 * p->batch1 * p->M * p->N;
  mm_direct_int<TA, TY><<<grid_for(l, n, threads), threads, 0, l->stream>>>(
      *p, n, (const TA *)a, (const int8_t *)b, (const int32_t *)bias, (const float *)scales,
      (TY *)y);
  return cudaGetLastError();
}

template <typename TA>
static cudaError_t launch_int_y(const adnn_cuda_launch_config *l, const adnn_plugin_matmul *p,
                                const void *a, const void *b, const void *bias,
                                const void *scales, void *y) {
  switch (p->y.dtype) {
    case ADNN_DTYPE_I8: return launch_int<TA, int8_t>(l, p, a, b, bias, scales, y);
    case ADNN_DTYPE_U8: return launch_int<TA, uint8_t>(l, p, a, b, bias, scales, y);
    default: return launch_int<TA, int32_t>(l, p, a, b, bias, scales, y);
  }
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

ADNN_CUDA_API cudaError_t adnn_cuda_matmul_lowp_launch(const adnn_cuda_launch_config *l,
                                                       const adnn_plugin_matmul *p,
                                                       const void *a, const void *b,
                                                       const void *bias, const void *r,
                                                       const void *scales, void *y) {
  switch (p->a.dtype) {
    case ADNN_DTYPE_F16: return launch_lowp_y<mm_f16>(l, p, a, b, bias, r, y);
    case ADNN_DTYPE_BF16: return launch_lowp_y<mm_bf16>(l, p, a, b, bias, r, y);
    case ADNN_DTYPE_I8: return launch_int_y<int8_t>(l, p, a, b, bias, scales, y);
    case ADNN_DTYPE_U8: return launch_int_y<uint8_t>(l, p, a, b, bias, scales, y);
    default: return cudaErrorInvalidValue;
  }
}
