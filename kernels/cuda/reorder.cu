/*
 * reorder: y = x converted to y's dtype, any strides (doc/ops.md, "Reorder").
 *
 * Each thread converts elements with kernels/common/convert.h, the very
 * function the reference kernel and the CPU plugin's scalar edges run
 * (compiled as device code through ADNN_F16_FN): the 16-bit conversions are
 * integer arithmetic and NaN is built from its bits, so the device gives the
 * CPU's bits without relying on __float2half's or cvt's NaN handling.
 *
 * Why this is correct for every shape the descriptor allows: one grid-stride
 * loop over the logical index lin in [0, count) (int64_t, so counts >= 2^31
 * do not wrap); offsets come from nd_offsets over the host's coalesced layout
 * (x strides[0], y strides[1]; rank 0 is one element at offset 0); y's
 * strides are disjoint (the core checked), so no two threads write one
 * address. y == x (same layout and dtype) is a no-op that the host skips.
 * Neighbouring threads take neighbouring lin, which is y's memory order
 * whenever y is packed, so the writes coalesce.
 */
#include "kernels/cuda/common.cuh"

#include "kernels/common/convert.h"

namespace adnn_cuda {

template <int S, int D>
__global__ void reorder_strided(adnn_nd nd, int64_t n, const char *x, char *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t off[2];
    nd_offsets(nd, i, off);
    adnn_convert_element(S, x + off[0] * adnn_cvt_size(S), D, y + off[1] * adnn_cvt_size(D));
  }
}

template <int S, int D>
static cudaError_t launch_pair(const adnn_cuda_launch_config *l, const adnn_nd &nd, int64_t n,
                               const void *x, void *y) {
  const int threads = 256;
  reorder_strided<S, D><<<grid_for(l, n, threads), threads, 0, l->stream>>>(
      nd, n, (const char *)x, (char *)y);
  return cudaGetLastError();
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_reorder_launch(const adnn_cuda_launch_config *l,
                                                   const adnn_plugin_reorder *p,
                                                   const adnn_cuda_elementwise_layout *e,
                                                   const void *x, void *y) {
  const int64_t n = p->count;
  if (n <= 0) return cudaSuccess;
  const adnn_nd &nd = e->nd;
  switch ((int)p->x.dtype * 8 + (int)p->y.dtype) {
#define CASE_(S, D) \
  case S * 8 + D: return launch_pair<S, D>(l, nd, n, x, y);
    CASE_(1, 1) CASE_(1, 2) CASE_(1, 3) CASE_(1, 4)
    CASE_(2, 1) CASE_(2, 2) CASE_(2, 3) CASE_(2, 4)
    CASE_(3, 1) CASE_(3, 2) CASE_(3, 3) CASE_(3, 4)
    CASE_(4, 1) CASE_(4, 2) CASE_(4, 3) CASE_(4, 4)
    CASE_(5, 5) CASE_(6, 6) CASE_(7, 7)
#undef CASE_
  }
  return cudaErrorInvalidValue;
}
