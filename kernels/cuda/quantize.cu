/*
 * quantize and dequantize, any strides (doc/ops.md, "Quantize and
 * dequantize"; doc/numerics.md, "Quantization").
 *
 * Every element goes through kernels/common/quantize.h, the one scalar
 * definition the reference kernels and the CPU kernels run, compiled here as
 * device code: the quotient x / scale is one IEEE F32 division (nvcc's
 * default -prec-div=true and -ftz=false give exactly that; the build never
 * passes --use_fast_math), the round half to even is floor and comparison,
 * and the saturation clamps before converting. The device therefore gives
 * the CPU's bits for every input, NaN, infinities and subnormals included.
 *
 * Why this is correct for every shape the descriptor allows: one grid-stride
 * loop over the logical (row-major) index lin in [0, count), int64_t so that
 * counts >= 2^31 do not wrap; the element offsets come from nd_offsets over
 * the host's coalesced layout (strides[0] x, strides[1] y), which keeps the
 * logical numbering, so the channel of element lin is (lin / inner) %
 * channels exactly as in the reference. y's strides give every element its
 * own address (the core checked), so no two threads write one address.
 * Neighbouring threads take neighbouring lin, y's memory order when y is
 * packed, so the stores coalesce; per-channel scales and zero points are
 * const __restrict__ (small and shared by many threads, so they stay in
 * cache).
 */
#include "kernels/cuda/common.cuh"

#include "kernels/common/quantize.h"

namespace adnn_cuda {

template <bool U8, bool PER_CHANNEL>
__global__ void quantize_strided(adnn_nd nd, int64_t n, const float *x, void *y, float scale,
                                 int32_t zp, const float *__restrict__ scales,
                                 const int32_t *__restrict__ zps, int64_t inner,
                                 int64_t channels) {
  const int32_t lo = U8 ? 0 : -128, hi = U8 ? 255 : 127;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t off[2];
    nd_offsets(nd, i, off);
    float s = scale;
    int32_t z = zp;
    if (PER_CHANNEL) {
      const int64_t c = (i / inner) % channels;
      s = scales[c];
      z = zps[c];
    }
    const int32_t v = adnn_q_quantize(x[off[0]], s, z, lo, hi);
    if (U8) ((uint8_t *)y)[off[1]] = (uint8_t)v;
    else ((int8_t *)y)[off[1]] = (int8_t)v;
  }
}

template <bool U8, bool PER_CHANNEL>
__global__ void dequantize_strided(adnn_nd nd, int64_t n, const void *x, float *y, float scale,
                                   int32_t zp, const float *__restrict__ scales,
                                   const int32_t *__restrict__ zps, int64_t inner,
                                   int64_t channels) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t off[2];
    nd_offsets(nd, i, off);
    float s = scale;
    int32_t z = zp;
    if (PER_CHANNEL) {
      const int64_t c = (i / inner) % channels;
      s = scales[c];
      z = zps[c];
    }
    const int32_t v = U8 ? (int32_t)((const uint8_t *)x)[off[0]]
                         : (int32_t)((const int8_t *)x)[off[0]];
    y[off[1]] = adnn_q_dequantize(v, s, z);
  }
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_quantize_launch(const adnn_cuda_launch_config *l,
                                                    const adnn_plugin_quantize *p,
                                                    const adnn_cuda_elementwise_layout *e,
                                                    const void *x, const void *scales,
                                                    const void *zero_points, void *y) {
  const int64_t n = p->count;
  if (n <= 0) return cudaSuccess;
  const int threads = 256;
  const unsigned grid = grid_for(l, n, threads);
  const bool u8 = p->y.dtype == ADNN_DTYPE_U8, pc = p->axis >= 0;
  const float *xs = (const float *)x;
  const float *sc = (const float *)scales;
  const int32_t *zs = (const int32_t *)zero_points;
  if (u8 && pc)
    quantize_strided<true, true><<<grid, threads, 0, l->stream>>>(
        e->nd, n, xs, y, p->scale, p->zero_point, sc, zs, p->inner, p->channels);
  else if (u8)
    quantize_strided<true, false><<<grid, threads, 0, l->stream>>>(
        e->nd, n, xs, y, p->scale, p->zero_point, sc, zs, p->inner, p->channels);
  else if (pc)
    quantize_strided<false, true><<<grid, threads, 0, l->stream>>>(
        e->nd, n, xs, y, p->scale, p->zero_point, sc, zs, p->inner, p->channels);
  else
    quantize_strided<false, false><<<grid, threads, 0, l->stream>>>(
        e->nd, n, xs, y, p->scale, p->zero_point, sc, zs, p->inner, p->channels);
  return cudaGetLastError();
}

ADNN_CUDA_API cudaError_t adnn_cuda_dequantize_launch(const adnn_cuda_launch_config *l,
                                                      const adnn_plugin_dequantize *p,
                                                      const adnn_cuda_elementwise_layout *e,
                                                      const void *x, const void *scales,
                                                      const void *zero_points, void *y) {
  const int64_t n = p->count;
  if (n <= 0) return cudaSuccess;
  const int threads = 256;
  const unsigned grid = grid_for(l, n, threads);
  const bool u8 = p->x.dtype == ADNN_DTYPE_U8, pc = p->axis >= 0;
  float *ys = (float *)y;
  const float *sc = (const float *)scales;
  const int32_t *zs = (const int32_t *)zero_points;
  if (u8 && pc)
    dequantize_strided<true, true><<<grid, threads, 0, l->stream>>>(
        e->nd, n, x, ys, p->scale, p->zero_point, sc, zs, p->inner, p->channels);
  else if (u8)
    dequantize_strided<true, false><<<grid, threads, 0, l->stream>>>(
        e->nd, n, x, ys, p->scale, p->zero_point, sc, zs, p->inner, p->channels);
  else if (pc)
    dequantize_strided<false, true><<<grid, threads, 0, l->stream>>>(
        e->nd, n, x, ys, p->scale, p->zero_point, sc, zs, p->inner, p->channels);
  else
    dequantize_strided<false, false><<<grid, threads, 0, l->stream>>>(
        e->nd, n, x, ys, p->scale, p->zero_point, sc, zs, p->inner, p->channels);
  return cudaGetLastError();
}
