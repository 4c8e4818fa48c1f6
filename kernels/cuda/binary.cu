/*
 * Elementwise binary ops with NumPy broadcasting: y = op(alpha * a, beta * b).
 *
 * Why this is correct for every shape the descriptor allows:
 *  - The core broadcast a and b to y's rank (size-1 and missing dims have
 *    stride 0), and the host coalesced the three into one layout, so the
 *    offsets of every operand at y's logical index lin come from nd_offsets;
 *    repeated elements are simply read again (stride 0).
 *  - Each lin in [0, n) is visited exactly once by the int64 grid-stride loop.
 *  - The contiguous path requires all three to be one run of stride 1 (no
 *    broadcasting): offset == lin; 16-byte vectors only when all three
 *    pointers are 16-byte aligned, then a scalar tail.
 *  - y may be a or b (same layout, checked by the core): each element is read
 *    and written by one thread only.
 *  - max/min give NaN when either operand is NaN, as doc/ops.md says (fmax
 *    would drop the NaN, so it is not used).
 *  - F16 and BF16 (lowp_elem.cuh): a and b are widened exactly to F32, the
 *    F32 operation runs (alpha and beta as F32) and y is rounded once: the
 *    CPU's definition too (the F32 kernel on the widened inputs, rounded).
 *    Their vectors hold 8 elements.
 */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/lowp_elem.cuh"

namespace adnn_cuda {

template <typename T> __device__ __forceinline__ T bin_apply(adnn_binary_op op, T a, T b) {
  switch (op) {
    case ADNN_BINARY_ADD: return a + b;
    case ADNN_BINARY_SUB: return a - b;
    case ADNN_BINARY_MUL: return a * b;
    case ADNN_BINARY_DIV: return a / b;
    case ADNN_BINARY_MAX:
      if (isnan(a) || isnan(b)) return a + b; /* NaN */
      return a > b ? a : b;
    case ADNN_BINARY_MIN:
      if (isnan(a) || isnan(b)) return a + b;
      return a < b ? a : b;
  }
  return a + b;
}

/* One element: a and b widened, the operation in C (elem<T>::compute), one
 * rounding. */
template <typename T, typename C>
__device__ __forceinline__ void bin_one(adnn_binary_op op, C alpha, C beta, const T *a, const T *b,
                                        T *y) {
  put(y, bin_apply<C>(op, alpha * widen(*a), beta * widen(*b)));
}

template <typename T, typename C>
__global__ void bin_strided(adnn_binary_op op, C alpha, C beta, adnn_nd nd, int64_t n, const T *a,
                            const T *b, T *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t off[3];
    nd_offsets(nd, i, off);
    bin_one<T, C>(op, alpha, beta, a + off[0], b + off[1], y + off[2]);
  }
}

template <typename T, typename C>
__global__ void bin_packed(adnn_binary_op op, C alpha, C beta, int64_t n, const T *a, const T *b,
                           T *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    bin_one<T, C>(op, alpha, beta, a + i, b + i, y + i);
}

/* 16-byte vectors: 8 F16 or BF16 elements (T is lowp_f16 or lowp_bf16). */
template <typename T>
__global__ void bin_vec_lowp(adnn_binary_op op, float alpha, float beta, int64_t nvec,
                             const uint4 *a, const uint4 *b, uint4 *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nvec;
       i += (int64_t)gridDim.x * blockDim.x) {
    const uint4 va = a[i], vb = b[i];
    T r[8];
#pragma unroll
    for (int k = 0; k < 8; k++) {
      const T ea = {u16_of(va, k)}, eb = {u16_of(vb, k)};
      bin_one<T, float>(op, alpha, beta, &ea, &eb, &r[k]);
    }
    y[i] = u16_vec(r[0].bits, r[1].bits, r[2].bits, r[3].bits, r[4].bits, r[5].bits, r[6].bits,
                   r[7].bits);
  }
}

__global__ void bin_vec_f32(adnn_binary_op op, float alpha, float beta, int64_t nvec,
                            const float4 *a, const float4 *b, float4 *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nvec;
       i += (int64_t)gridDim.x * blockDim.x) {
    const float4 va = a[i], vb = b[i];
    float4 r;
    r.x = bin_apply<float>(op, alpha * va.x, beta * vb.x);
    r.y = bin_apply<float>(op, alpha * va.y, beta * vb.y);
    r.z = bin_apply<float>(op, alpha * va.z, beta * vb.z);
    r.w = bin_apply<float>(op, alpha * va.w, beta * vb.w);
    y[i] = r;
  }
}

__global__ void bin_vec_f64(adnn_binary_op op, double alpha, double beta, int64_t nvec,
                            const double2 *a, const double2 *b, double2 *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nvec;
       i += (int64_t)gridDim.x * blockDim.x) {
    const double2 va = a[i], vb = b[i];
    double2 r;
    r.x = bin_apply<double>(op, alpha * va.x, beta * vb.x);
    r.y = bin_apply<double>(op, alpha * va.y, beta * vb.y);
    y[i] = r;
  }
}

template <typename T>
static cudaError_t launch_bin(const adnn_cuda_launch_config *l, const adnn_plugin_binary *p,
                              const adnn_cuda_elementwise_layout *e, const void *av,
                              const void *bv, void *yv) {
  const int threads = 256;
  const adnn_binary_op op = p->op;
  typedef typename elem<T>::compute C;
  const C alpha = (C)p->alpha, beta = (C)p->beta;
  const T *a = (const T *)av, *b = (const T *)bv;
  T *y = (T *)yv;
  const int64_t n = adnn_nd_count(&e->nd);
  if (n <= 0) return cudaSuccess;
  if (!e->contiguous) {
    bin_strided<T, C><<<grid_for(l, n, threads), threads, 0, l->stream>>>(op, alpha, beta, e->nd,
                                                                           n, a, b, y);
    return cudaGetLastError();
  }
  const int per = 16 / (int)sizeof(T);
  int64_t done = 0;
  if ((((uintptr_t)a | (uintptr_t)b | (uintptr_t)y) & 15u) == 0 && n >= per) {
    const int64_t nvec = n / per;
    if constexpr (sizeof(T) == 2)
      bin_vec_lowp<T><<<grid_for(l, nvec, threads), threads, 0, l->stream>>>(
          op, (float)p->alpha, (float)p->beta, nvec, (const uint4 *)av, (const uint4 *)bv,
          (uint4 *)yv);
    else if (sizeof(T) == 4)
      bin_vec_f32<<<grid_for(l, nvec, threads), threads, 0, l->stream>>>(
          op, (float)p->alpha, (float)p->beta, nvec, (const float4 *)av, (const float4 *)bv,
          (float4 *)yv);
    else
      bin_vec_f64<<<grid_for(l, nvec, threads), threads, 0, l->stream>>>(
          op, p->alpha, p->beta, nvec, (const double2 *)av, (const double2 *)bv, (double2 *)yv);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return err;
    done = nvec * per;
  }
  if (done < n) {
    bin_packed<T, C><<<grid_for(l, n - done, threads), threads, 0, l->stream>>>(
        op, alpha, beta, n - done, a + done, b + done, y + done);
    return cudaGetLastError();
  }
  return cudaSuccess;
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_binary_launch(const adnn_cuda_launch_config *l,
                                                  adnn_dtype dtype, const adnn_plugin_binary *p,
                                                  const adnn_cuda_elementwise_layout *e,
                                                  const void *a, const void *b, void *y) {
  switch (dtype) {
    case ADNN_DTYPE_F64: return launch_bin<double>(l, p, e, a, b, y);
    case ADNN_DTYPE_F16: return launch_bin<lowp_f16>(l, p, e, a, b, y);
    case ADNN_DTYPE_BF16: return launch_bin<lowp_bf16>(l, p, e, a, b, y);
    default: return launch_bin<float>(l, p, e, a, b, y);
  }
}
