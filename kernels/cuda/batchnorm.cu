/*
 * Batch normalization (inference) per channel, with its fused activation.
 *
 * batchnorm_kernel: elementwise, grid-stride over the elements in int64. With
 * a dense common layout the physical offset i is the loop index and the
 * channel is (i / dense_channel_stride) % C (true for any dense permutation
 * of dims: the channel dim's stride is the product of the sizes of the dims
 * faster than it); otherwise the offsets and the channel come from the
 * decomposition of the logical index over x's dims. The formula is the
 * definition of doc/ops.md, scale * (x - mean) / sqrt(var + eps) + shift, not
 * a folded form, so that zero variances and infinities behave as the
 * reference does. In place (y == x, same layout) each element is read and
 * written by one thread.
 *
 * Low precision: templated on the data's storage type S; for F16/BF16 data
 * the parameter vectors are F32 (ADNN_OP_PARAM_DTYPE), x widens exactly to
 * F32, the formula and the activation run in F32, and y is rounded once on
 * store (lowp_elem.cuh), as the CPU's F16/BF16 path does.
 */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/lowp_elem.cuh"

namespace adnn_cuda {

template <typename T>
__device__ __forceinline__ T bn_apply(const adnn_plugin_batchnorm &p, T v, int64_t c,
                                      const T *scale, const T *shift, const T *mean,
                                      const T *var) {
  const T r = scale[c] * (v - mean[c]) / f_sqrt(var[c] + (T)p.epsilon) + shift[c];
  return activate<T>(p.activation, r);
}

/* S the data's storage type, T (float or double) its compute type and the
 * parameters' type. */
template <typename S, typename T>
__global__ void batchnorm_kernel(adnn_plugin_batchnorm p, adnn_cuda_batchnorm_layout s,
                                 const S *x, const T *scale, const T *shift, const T *mean,
                                 const T *var, S *y) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < s.count;
       i += (int64_t)gridDim.x * blockDim.x) {
    if (s.dense_channel_stride > 0) {
      const int64_t c = (i / s.dense_channel_stride) % p.C;
      lp_store(y + i, bn_apply<T>(p, lp_load(x + i), c, scale, shift, mean, var));
    } else {
      int64_t off[2];
      const int64_t c = nd_offsets(s.nd, i, off, 1);
      lp_store(y + off[1], bn_apply<T>(p, lp_load(x + off[0]), c, scale, shift, mean, var));
    }
  }
}

template <typename S, typename T>
static cudaError_t launch_batchnorm(const adnn_cuda_launch_config *l,
                                    const adnn_plugin_batchnorm *p,
                                    const adnn_cuda_batchnorm_layout *s, const void *x,
                                    const void *scale, const void *shift, const void *mean,
                                    const void *var, void *y) {
  const int threads = 256;
  batchnorm_kernel<S, T><<<grid_for(l, s->count, threads), threads, 0, l->stream>>>(
      *p, *s, (const S *)x, (const T *)scale, (const T *)shift, (const T *)mean, (const T *)var,
      (S *)y);
  return cudaGetLastError();
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_batchnorm_launch(const adnn_cuda_launch_config *l,
                                                     adnn_dtype dtype,
                                                     const adnn_plugin_batchnorm *p,
                                                     const adnn_cuda_batchnorm_layout *s,
                                                     const void *x, const void *scale,
                                                     const void *shift, const void *mean,
                                                     const void *var, void *y) {
  if (s->count <= 0) return cudaSuccess;
  switch (dtype) {
    case ADNN_DTYPE_F64:
      return launch_batchnorm<double, double>(l, p, s, x, scale, shift, mean, var, y);
    case ADNN_DTYPE_F16:
      return launch_batchnorm<lowp_f16, float>(l, p, s, x, scale, shift, mean, var, y);
    case ADNN_DTYPE_BF16:
      return launch_batchnorm<lowp_bf16, float>(l, p, s, x, scale, shift, mean, var, y);
    default: return launch_batchnorm<float, float>(l, p, s, x, scale, shift, mean, var, y);
  }
}
