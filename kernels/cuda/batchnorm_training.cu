/*
 * Batch normalization in training mode and its backward pass, our own
 * kernels (doc/cuda.md says why not cuDNN's): one block per channel
 * (grid-stride over channels), which makes every per-channel sum a fixed
 * block reduction, so results are bitwise identical run to run, and fuses
 * the statistics with the elementwise pass that follows while the channel
 * is hot in L2.
 *
 * bn_training_rows: (1) sum of x in double -> mean; (2) sum of (x - mean)^2
 * in double -> biased variance (two passes: no E[x^2] - E[x]^2
 * cancellation); thread 0 writes the saved mean and inv_std and updates the
 * running statistics with the unbiased variance (momentum 0 writes nothing);
 * (3) y = scale * ((x - mean) * inv_std) + shift in double, rounded once.
 * In place (y == x): pass 3 reads each element before the same thread
 * writes it, after the block has finished passes 1 and 2.
 *
 * bn_backward_rows: (1) sums of dy and dy * xhat in double, xhat = (x -
 * mean) * inv_std from the saved statistics; thread 0 writes dscale and
 * dshift; (2) dx = scale * inv_std / n * (n dy - dshift - xhat dscale).
 *
 * The elements of channel c are numbered over every dim but C (`pix`,
 * coalesced, strides [0] x, [1] y / dx, [2] dy); channel c starts at
 * c * cstride[k] in tensor k. Every thread executes every barrier: the
 * channel loop bound depends only on blockIdx.
 *
 * Low precision: the data (x, y, dy, dx) has storage type S and the
 * per-channel vectors type T, T = S for F32 and F64 and F32 for F16/BF16
 * data (ADNN_OP_PARAM_DTYPE); 16-bit loads widen exactly, the arithmetic
 * stays double and every 16-bit output is rounded once from it
 * (lowp_elem.cuh's put), as the CPU's reference loops do.
 */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/lowp_elem.cuh"

namespace adnn_cuda {

struct sum2 {
  double a, b;
};

__device__ __forceinline__ double block_sum(double v, double *part) {
  const double r = block_reduce(v, part, 0.0, [](double w) { return warp_sum(w); });
  block_reduce_done();
  return r;
}

__device__ __forceinline__ sum2 block_sum2(sum2 v, sum2 *part) {
  const sum2 empty = {0.0, 0.0};
  const sum2 r = block_reduce(v, part, empty, [](sum2 w) {
    w.a = warp_sum(w.a);
    w.b = warp_sum(w.b);
    return w;
  });
  block_reduce_done();
  return r;
}

/* Element offsets of element i of a channel in tensors 0..NT-1. */
template <int NT>
__device__ __forceinline__ void pix_offsets(const adnn_cuda_bn_training_layout &s, int64_t i,
                                            int64_t (&off)[NT]) {
  if (s.pix.rank == 1) {
#pragma unroll
    for (int t = 0; t < NT; t++) off[t] = i * s.pix.strides[t][0];
    return;
  }
  nd_offsets(s.pix, i, off);
}

template <typename S, typename T>
__global__ void bn_training_rows(adnn_plugin_batchnorm_training p, adnn_cuda_bn_training_layout s,
                                 const S *x, const T *scale, const T *shift, S *y, T *saved_mean,
                                 T *saved_inv, T *run_mean, T *run_var) {
  __shared__ double part[32];
  const int64_t n = p.count;
  for (int64_t c = blockIdx.x; c < p.fwd.C; c += gridDim.x) {
    const S *xc = x + c * s.cstride[0];
    S *yc = y + c * s.cstride[1];
    double acc = 0.0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      int64_t off[1];
      pix_offsets(s, i, off);
      acc += (double)widen(xc[off[0]]);
    }
    const double mean = block_sum(acc, part) / (double)n;
    acc = 0.0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      int64_t off[1];
      pix_offsets(s, i, off);
      const double d = (double)widen(xc[off[0]]) - mean;
      acc += d * d;
    }
    const double dev2 = block_sum(acc, part);
    const double inv = 1.0 / sqrt(dev2 / (double)n + p.fwd.epsilon);
    if (threadIdx.x == 0) {
      saved_mean[c] = (T)mean;
      saved_inv[c] = (T)inv;
      if (p.momentum != 0.0) {
        const double m = p.momentum;
        run_mean[c] = (T)((1.0 - m) * (double)run_mean[c] + m * mean);
        run_var[c] = (T)((1.0 - m) * (double)run_var[c] + m * (dev2 / (double)(n - 1)));
      }
    }
    const double a = (double)scale[c], b = (double)shift[c];
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      int64_t off[2];
      pix_offsets(s, i, off);
      put(&yc[off[1]], a * (((double)widen(xc[off[0]]) - mean) * inv) + b);
    }
  }
}

template <typename S, typename T>
__global__ void bn_backward_rows(adnn_plugin_batchnorm_backward p, adnn_cuda_bn_training_layout s,
                                 const S *x, const S *dy, const T *scale, const T *mean_in,
                                 const T *inv_in, S *dx, T *dscale, T *dshift) {
  __shared__ sum2 part[32];
  const int64_t n = p.count;
  for (int64_t c = blockIdx.x; c < p.fwd.C; c += gridDim.x) {
    const S *xc = x + c * s.cstride[0], *gc = dy + c * s.cstride[2];
    S *dxc = dx + c * s.cstride[1];
    const double mean = (double)mean_in[c], inv = (double)inv_in[c];
    sum2 acc = {0.0, 0.0};
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      int64_t off[3];
      pix_offsets(s, i, off);
      const double g = (double)widen(gc[off[2]]);
      acc.a += g;
      acc.b += g * (((double)widen(xc[off[0]]) - mean) * inv);
    }
    const sum2 tot = block_sum2(acc, part);
    if (threadIdx.x == 0) {
      dshift[c] = (T)tot.a;
      dscale[c] = (T)tot.b;
    }
    const double k = (double)scale[c] * inv / (double)n;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      int64_t off[3];
      pix_offsets(s, i, off);
      const double xhat = ((double)widen(xc[off[0]]) - mean) * inv;
      put(&dxc[off[1]], k * ((double)n * (double)widen(gc[off[2]]) - tot.a - xhat * tot.b));
    }
  }
}

} // namespace adnn_cuda

using namespace adnn_cuda;

template <typename S, typename T>
static void bn_training_go(const adnn_cuda_launch_config *l, unsigned grid, int threads,
                           const adnn_plugin_batchnorm_training *p,
                           const adnn_cuda_bn_training_layout *s, const void *x, const void *scale,
                           const void *shift, void *y, void *saved_mean, void *saved_inv,
                           void *run_mean, void *run_var) {
  bn_training_rows<S, T><<<grid, threads, 0, l->stream>>>(
      *p, *s, (const S *)x, (const T *)scale, (const T *)shift, (S *)y, (T *)saved_mean,
      (T *)saved_inv, (T *)run_mean, (T *)run_var);
}

ADNN_CUDA_API cudaError_t adnn_cuda_bn_training_launch(const adnn_cuda_launch_config *l,
                                                       adnn_dtype dtype,
                                                       const adnn_plugin_batchnorm_training *p,
                                                       const adnn_cuda_bn_training_layout *s,
                                                       const void *x, const void *scale,
                                                       const void *shift, void *y,
                                                       void *saved_mean, void *saved_inv,
                                                       void *run_mean, void *run_var) {
  if (p->fwd.C <= 0 || p->count <= 0) return cudaSuccess;
  const int threads = threads_per_row(p->count, 256);
  const unsigned grid = grid_rows(l, p->fwd.C, threads);
  switch (dtype) {
  case ADNN_DTYPE_F64:
    bn_training_go<double, double>(l, grid, threads, p, s, x, scale, shift, y, saved_mean,
                                   saved_inv, run_mean, run_var);
    break;
  case ADNN_DTYPE_F16:
    bn_training_go<lowp_f16, float>(l, grid, threads, p, s, x, scale, shift, y, saved_mean,
                                    saved_inv, run_mean, run_var);
    break;
  case ADNN_DTYPE_BF16:
    bn_training_go<lowp_bf16, float>(l, grid, threads, p, s, x, scale, shift, y, saved_mean,
                                     saved_inv, run_mean, run_var);
    break;
  default:
    bn_training_go<float, float>(l, grid, threads, p, s, x, scale, shift, y, saved_mean,
                                 saved_inv, run_mean, run_var);
  }
  return cudaGetLastError();
}

template <typename S, typename T>
static void bn_backward_go(const adnn_cuda_launch_config *l, unsigned grid, int threads,
                           const adnn_plugin_batchnorm_backward *p,
                           const adnn_cuda_bn_training_layout *s, const void *x, const void *dy,
                           const void *scale, const void *mean, const void *inv_std, void *dx,
                           void *dscale, void *dshift) {
  bn_backward_rows<S, T><<<grid, threads, 0, l->stream>>>(
      *p, *s, (const S *)x, (const S *)dy, (const T *)scale, (const T *)mean,
      (const T *)inv_std, (S *)dx, (T *)dscale, (T *)dshift);
}

ADNN_CUDA_API cudaError_t adnn_cuda_bn_backward_launch(const adnn_cuda_launch_config *l,
                                                       adnn_dtype dtype,
                                                       const adnn_plugin_batchnorm_backward *p,
                                                       const adnn_cuda_bn_training_layout *s,
                                                       const void *x, const void *dy,
                                                       const void *scale, const void *mean,
                                                       const void *inv_std, void *dx,
                                                       void *dscale, void *dshift) {
  if (p->fwd.C <= 0 || p->count <= 0) return cudaSuccess;
  const int threads = threads_per_row(p->count, 256);
  const unsigned grid = grid_rows(l, p->fwd.C, threads);
  switch (dtype) {
  case ADNN_DTYPE_F64:
    bn_backward_go<double, double>(l, grid, threads, p, s, x, dy, scale, mean, inv_std, dx,
                                   dscale, dshift);
    break;
  case ADNN_DTYPE_F16:
    bn_backward_go<lowp_f16, float>(l, grid, threads, p, s, x, dy, scale, mean, inv_std, dx,
                                    dscale, dshift);
    break;
  case ADNN_DTYPE_BF16:
    bn_backward_go<lowp_bf16, float>(l, grid, threads, p, s, x, dy, scale, mean, inv_std, dx,
                                     dscale, dshift);
    break;
  default:
    bn_backward_go<float, float>(l, grid, threads, p, s, x, dy, scale, mean, inv_std, dx, dscale,
                                 dshift);
  }
  return cudaGetLastError();
}
