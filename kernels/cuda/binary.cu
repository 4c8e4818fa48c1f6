/*
 * Elementwise binary ops with NumPy broadcasting: y = op(alpha * a, beta * b).
 *
 * Why this is correct for every shape the descriptor allows:
 *  - The core broadcast a and b to y's rank (size-1 and missing dims have
 *    stride 0), and the host coalesced the three into nd, so the offset of
 *    every operand at y's logical index lin is nd_offset(nd, operand, lin);
 *    repeated elements are simply read again (stride 0).
 *  - Each lin in [0, n) is visited exactly once by the int64 grid-stride loop.
 *  - The packed path requires all three to be one contiguous dim of stride 1
 *    (no broadcasting): offset == lin; 16-byte vectors only when all three
 *    pointers are 16-byte aligned, then a scalar tail.
 *  - y may be a or b (same layout, checked by the core): each element is read
 *    and written by one thread only.
 *  - max/min give NaN when either operand is NaN, as doc/ops.md says (fmax
 *    would drop the NaN, so it is not used).
 */
#include "kernels/cuda/common.cuh"

namespace adnn_cuda {

template <typename T> __device__ __forceinline__ T bin_apply(int op, T a, T b) {
  switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a / b;
    case 4:
      if (isnan(a) || isnan(b)) return a + b; /* NaN */
      return a > b ? a : b;
    case 5:
      if (isnan(a) || isnan(b)) return a + b;
      return a < b ? a : b;
  }
  return a + b;
}

template <typename T>
__global__ void bin_strided(int op, T alpha, T beta, adnn_cuda_nd nd, int64_t n, const T *a,
                            const T *b, T *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t lin = i, oa = 0, ob = 0, oy = 0;
#pragma unroll
    for (int d = ADNN_CUDA_MAX_RANK - 1; d >= 0; d--) {
      if (d < nd.rank) {
        const int64_t idx = lin % nd.dims[d];
        lin /= nd.dims[d];
        oa += idx * nd.strides[0][d];
        ob += idx * nd.strides[1][d];
        oy += idx * nd.strides[2][d];
      }
    }
    y[oy] = bin_apply<T>(op, alpha * a[oa], beta * b[ob]);
  }
}

template <typename T>
__global__ void bin_packed(int op, T alpha, T beta, int64_t n, const T *a, const T *b, T *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    y[i] = bin_apply<T>(op, alpha * a[i], beta * b[i]);
}

__global__ void bin_vec_f32(int op, float alpha, float beta, int64_t nvec, const float4 *a,
                            const float4 *b, float4 *y) {
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

__global__ void bin_vec_f64(int op, double alpha, double beta, int64_t nvec, const double2 *a,
                            const double2 *b, double2 *y) {
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
static cudaError_t launch_bin(const adnn_cuda_launch *l, int op, double alpha_d, double beta_d,
                              const adnn_cuda_nd *nd, int64_t n, int packed, const void *av,
                              const void *bv, void *yv) {
  const int threads = 256;
  const T alpha = (T)alpha_d, beta = (T)beta_d;
  const T *a = (const T *)av, *b = (const T *)bv;
  T *y = (T *)yv;
  if (n <= 0) return cudaSuccess;
  if (!packed) {
    bin_strided<T><<<grid_for(l, n, threads), threads, 0, l->stream>>>(op, alpha, beta, *nd, n, a,
                                                                        b, y);
    return cudaGetLastError();
  }
  const int per = 16 / (int)sizeof(T);
  int64_t done = 0;
  if ((((uintptr_t)a | (uintptr_t)b | (uintptr_t)y) & 15u) == 0 && n >= per) {
    const int64_t nvec = n / per;
    if (sizeof(T) == 4)
      bin_vec_f32<<<grid_for(l, nvec, threads), threads, 0, l->stream>>>(
          op, (float)alpha_d, (float)beta_d, nvec, (const float4 *)av, (const float4 *)bv,
          (float4 *)yv);
    else
      bin_vec_f64<<<grid_for(l, nvec, threads), threads, 0, l->stream>>>(
          op, alpha_d, beta_d, nvec, (const double2 *)av, (const double2 *)bv, (double2 *)yv);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    done = nvec * per;
  }
  if (done < n) {
    bin_packed<T><<<grid_for(l, n - done, threads), threads, 0, l->stream>>>(
        op, alpha, beta, n - done, a + done, b + done, y + done);
    return cudaGetLastError();
  }
  return cudaSuccess;
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_binary(const adnn_cuda_launch *l, int f64, int op,
                                           double alpha, double beta, const adnn_cuda_nd *nd,
                                           int64_t n, int packed, const void *a, const void *b,
                                           void *y) {
  return f64 ? launch_bin<double>(l, op, alpha, beta, nd, n, packed, a, b, y)
             : launch_bin<float>(l, op, alpha, beta, nd, n, packed, a, b, y);
}
