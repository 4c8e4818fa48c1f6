/*
 * Loss scaling (doc/ops.md "Loss scaling"): t *= factor over every tensor,
 * in place, F32, F64, F16 and BF16, with found_inf set when a result is not
 * finite.
 *
 * Multi-tensor apply as the optimizer's: groups of up to
 * ADNN_CUDA_LOSS_SCALE_GROUP tensors whose pointers and sizes travel in the
 * kernel's parameters, chunks numbered tensor after tensor and taken by
 * blocks grid-stride. The factor is computed on the device from the scale
 * in device memory (kernels/common/loss_scale.h), so a dynamic loss scale
 * never crosses to the host. The product is computed in F32 (F64 for F64,
 * the factor widened) and stored with lowp_elem.cuh's one rounding; the
 * check reads the stored value back (an F16 store can overflow). A thread
 * that finds a non-finite result writes 1 into found_inf: every writer
 * writes the same bits, and nobody writes 0, so "left alone unless found"
 * holds whatever the order.
 */
#include <string.h>

#include "kernels/common/loss_scale.h"
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/lowp_elem.cuh"

namespace adnn_cuda {

static const int64_t LS_CHUNK = 8192;
static const int LS_THREADS = 256;

struct ls_group {
  int32_t count;
  void *t[ADNN_CUDA_LOSS_SCALE_GROUP];
  int64_t size[ADNN_CUDA_LOSS_SCALE_GROUP];
  int64_t first_chunk[ADNN_CUDA_LOSS_SCALE_GROUP + 1];
};

__host__ __device__ __forceinline__ bool ls_finite(float v) { return v - v == 0.0f; }
__host__ __device__ __forceinline__ bool ls_finite(double v) { return v - v == 0.0; }

template <typename T>
__global__ void loss_scale_chunks(ls_group grp, int32_t unscale, const float *scale, T *found) {
  typedef typename elem<T>::compute C;
  const float f = adnn_loss_scale_factor(unscale, *scale);
  const C fc = (C)f;
  const int64_t chunks = grp.first_chunk[grp.count];
  bool bad = false;
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    int i = 0;
    while (c >= grp.first_chunk[i + 1]) i++;
    const int64_t off = (c - grp.first_chunk[i]) * LS_CHUNK;
    const int64_t n = grp.size[i] - off < LS_CHUNK ? grp.size[i] - off : LS_CHUNK;
    T *t = (T *)grp.t[i] + off;
    for (int64_t e = threadIdx.x; e < n; e += blockDim.x) {
      lp_store(t + e, (C)(lp_load(t + e) * fc));
      if (!ls_finite(lp_load(t + e))) bad = true;
    }
  }
  if (bad) lp_store(found, (C)1);
}

template <typename T>
static cudaError_t launch_loss_scale(const adnn_cuda_launch_config *l,
                                     const adnn_plugin_loss_scale *p, const void *scale,
                                     void *const *out) {
  const int64_t T_count = p->tensor_count;
  T *found = (T *)out[T_count];
  for (int64_t g0 = 0; g0 < T_count; g0 += ADNN_CUDA_LOSS_SCALE_GROUP) {
    ls_group grp;
    memset(&grp, 0, sizeof grp);
    grp.count = (int32_t)(T_count - g0 < ADNN_CUDA_LOSS_SCALE_GROUP ? T_count - g0
                                                                     : ADNN_CUDA_LOSS_SCALE_GROUP);
    for (int j = 0; j < grp.count; j++) {
      grp.t[j] = out[g0 + j];
      grp.size[j] = p->sizes[g0 + j];
      grp.first_chunk[j + 1] = grp.first_chunk[j] + (grp.size[j] + LS_CHUNK - 1) / LS_CHUNK;
    }
    const int64_t chunks = grp.first_chunk[grp.count];
    loss_scale_chunks<T><<<grid_for(l, chunks * LS_THREADS, LS_THREADS), LS_THREADS, 0,
                           l->stream>>>(grp, p->kind == ADNN_LOSS_SCALE_UNSCALE,
                                        (const float *)scale, found);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_loss_scale_launch(const adnn_cuda_launch_config *l,
                                                      const adnn_plugin_loss_scale *p,
                                                      const void *scale, void *const *outputs) {
  switch (p->dtype) {
    case ADNN_DTYPE_F64: return launch_loss_scale<double>(l, p, scale, outputs);
    case ADNN_DTYPE_F16: return launch_loss_scale<lowp_f16>(l, p, scale, outputs);
    case ADNN_DTYPE_BF16: return launch_loss_scale<lowp_bf16>(l, p, scale, outputs);
    default: return launch_loss_scale<float>(l, p, scale, outputs);
  }
}
