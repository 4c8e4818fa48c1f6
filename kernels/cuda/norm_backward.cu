/*
 * Layer-norm and RMS-norm backward, our own kernels.
 *
 * norm_backward_rows: one block per row (grid-stride over rows). The row's
 * statistics are recomputed from x in double, in two passes like the
 * reference (the mean, then the biased variance from squared deviations;
 * RMS: the mean of squares); then sum(g) and sum(g * xhat) with g = dy *
 * gain; then dx = inv * (g - mean(g) - xhat * mean(g * xhat)) (RMS without
 * the mean(g) term), in double, rounded once. With dgain or dbias the row's
 * mean and inv_std go to `stats` (2 doubles per row).
 *
 * norm_backward_cols: one thread per column j (grid-stride), summing
 * dgain[j] = sum dy * xhat and dbias[j] = sum dy over the rows in row order
 * from the saved statistics. Both kernels use fixed reduction orders, so
 * results are bitwise identical run to run.
 *
 * Layout: the leading dims (`rows`) and the normalized dims (`cols`) are
 * coalesced separately with strides [0] x, [1] dy, [2] dx.
 *
 * Low precision: x, dy and dx have storage type S, the gain and its
 * gradients type T (S for F32 and F64, F32 for F16/BF16 data:
 * ADNN_OP_PARAM_DTYPE); 16-bit loads widen exactly, the arithmetic stays
 * double and each 16-bit dx is rounded once from it (lowp_elem.cuh).
 */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/lowp_elem.cuh"

namespace adnn_cuda {

struct nb_sum2 {
  double a, b;
};

__device__ __forceinline__ int64_t nb_col(const adnn_nd &cols, int which, int64_t j) {
  if (cols.rank == 1) return j * cols.strides[which][0];
  int64_t off[3];
  nd_offsets(cols, j, off);
  return off[which];
}

__device__ __forceinline__ double nb_block_sum(double v, double *part) {
  const double r = block_reduce(v, part, 0.0, [](double w) { return warp_sum(w); });
  block_reduce_done();
  return r;
}

template <typename S, typename T>
__global__ void norm_backward_rows(adnn_plugin_norm_backward pb, adnn_cuda_norm_backward_layout s,
                                   const S *x, const S *dy, const T *gain, S *dx,
                                   double *stats) {
  __shared__ double part[32];
  __shared__ nb_sum2 part2[32];
  const adnn_plugin_norm &p = pb.fwd;
  const bool layer = p.kind == ADNN_NORM_LAYER;
  const int64_t D = p.D;
  for (int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
    int64_t base[3];
    nd_offsets(s.rows, r, base);
    const S *xr = x + base[0], *gr = dy + base[1];
    S *dxr = dx + base[2];
    double mean = 0.0;
    if (layer) {
      double acc = 0.0;
      for (int64_t j = threadIdx.x; j < D; j += blockDim.x) acc += (double)widen(xr[nb_col(s.cols, 0, j)]);
      mean = nb_block_sum(acc, part) / (double)D;
    }
    double acc = 0.0;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
      const double d = (double)widen(xr[nb_col(s.cols, 0, j)]) - mean;
      acc += d * d;
    }
    const double inv = 1.0 / sqrt(nb_block_sum(acc, part) / (double)D + p.epsilon);
    nb_sum2 g2 = {0.0, 0.0};
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
      double g = (double)widen(gr[nb_col(s.cols, 1, j)]);
      if (gain) g *= (double)gain[j];
      g2.a += g;
      g2.b += g * (((double)widen(xr[nb_col(s.cols, 0, j)]) - mean) * inv);
    }
    const nb_sum2 empty = {0.0, 0.0};
    const nb_sum2 tot = block_reduce(g2, part2, empty, [](nb_sum2 w) {
      w.a = warp_sum(w.a);
      w.b = warp_sum(w.b);
      return w;
    });
    block_reduce_done();
    const double mg = layer ? tot.a / (double)D : 0.0, mgx = tot.b / (double)D;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
      double g = (double)widen(gr[nb_col(s.cols, 1, j)]);
      if (gain) g *= (double)gain[j];
      const double xhat = ((double)widen(xr[nb_col(s.cols, 0, j)]) - mean) * inv;
      put(&dxr[nb_col(s.cols, 2, j)], inv * (g - mg - xhat * mgx));
    }
    if (stats && threadIdx.x == 0) {
      stats[2 * r] = mean;
      stats[2 * r + 1] = inv;
    }
  }
}

template <typename S, typename T>
__global__ void norm_backward_cols(adnn_plugin_norm_backward pb, adnn_cuda_norm_backward_layout s,
                                   const S *x, const S *dy, const double *stats, T *dgain,
                                   T *dbias) {
  const adnn_plugin_norm &p = pb.fwd;
  for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < p.D;
       j += (int64_t)gridDim.x * blockDim.x) {
    const int64_t xo = nb_col(s.cols, 0, j), go = nb_col(s.cols, 1, j);
    double sg = 0.0, sb = 0.0;
    for (int64_t r = 0; r < p.rows; r++) {
      int64_t base[3];
      nd_offsets(s.rows, r, base);
      const double g = (double)widen(dy[base[1] + go]);
      sg += g * (((double)widen(x[base[0] + xo]) - stats[2 * r]) * stats[2 * r + 1]);
      sb += g;
    }
    if (dgain) dgain[j] = (T)sg;
    if (dbias) dbias[j] = (T)sb;
  }
}

} // namespace adnn_cuda

using namespace adnn_cuda;

template <typename S, typename T>
static cudaError_t norm_backward_go(const adnn_cuda_launch_config *l,
                                    const adnn_plugin_norm_backward *p,
                                    const adnn_cuda_norm_backward_layout *s, const void *x,
                                    const void *dy, const void *gain, void *dx, void *dgain,
                                    void *dbias, double *stats) {
  const int threads = threads_per_row(p->fwd.D, 256);
  const unsigned grid = grid_rows(l, p->fwd.rows, threads);
  const int cols = dgain != NULL || dbias != NULL;
  double *st = cols ? stats : NULL;
  norm_backward_rows<S, T><<<grid, threads, 0, l->stream>>>(
      *p, *s, (const S *)x, (const S *)dy, (const T *)gain, (S *)dx, st);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess || !cols) return e;
  const unsigned cgrid = grid_for(l, p->fwd.D, 128);
  norm_backward_cols<S, T><<<cgrid, 128, 0, l->stream>>>(*p, *s, (const S *)x, (const S *)dy, st,
                                                         (T *)dgain, (T *)dbias);
  return cudaGetLastError();
}

ADNN_CUDA_API cudaError_t adnn_cuda_norm_backward_launch(
    const adnn_cuda_launch_config *l, adnn_dtype dtype, const adnn_plugin_norm_backward *p,
    const adnn_cuda_norm_backward_layout *s, const void *x, const void *dy, const void *gain,
    void *dx, void *dgain, void *dbias, double *stats) {
  if (p->fwd.rows <= 0 || p->fwd.D <= 0) return cudaSuccess;
  switch (dtype) {
  case ADNN_DTYPE_F64:
    return norm_backward_go<double, double>(l, p, s, x, dy, gain, dx, dgain, dbias, stats);
  case ADNN_DTYPE_F16:
    return norm_backward_go<lowp_f16, float>(l, p, s, x, dy, gain, dx, dgain, dbias, stats);
  case ADNN_DTYPE_BF16:
    return norm_backward_go<lowp_bf16, float>(l, p, s, x, dy, gain, dx, dgain, dbias, stats);
  default:
    return norm_backward_go<float, float>(l, p, s, x, dy, gain, dx, dgain, dbias, stats);
  }
}
