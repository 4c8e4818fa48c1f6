/*
 * Activation backward: dx = dy * act'(x) for all twelve kinds, with the
 * kink, NaN and infinity rules of doc/ops.md ("Activation backward"), written
 * like kernels/ref/activation_backward.c so that every branch is the same.
 *
 * Why this is correct for every shape the descriptor allows:
 *  - One logical index per element, visited once by grid-stride loops in
 *    int64_t; offsets come from nd_offsets over the host's coalesced layout
 *    (strides[0] x and dx, which share x's layout; strides[1] dy, y's).
 *  - The packed path is taken only when both layouts coalesced into one
 *    dense run (offset == index).
 *  - In place (dx == dy, same layout, as the core allows): each element is
 *    read and then written by the same thread.
 *  - F16 and BF16 (lowp_elem.cuh): x and dy are widened exactly to F32, the
 *    derivative is formed in F32 as for an F32 problem, and dx is rounded
 *    once (round to nearest even), as the CPU does.
 */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/lowp_elem.cuh"

namespace adnn_cuda {

template <typename T> __device__ __forceinline__ T sigmoid_stable(T x) {
  const T e = f_exp(-fabs(x));
  return x >= T(0) ? T(1) / (T(1) + e) : e / (T(1) + e);
}

/* tanh'(x) = 4 e / (1 + e)^2 with e = exp(-2|x|): no cancellation. */
template <typename T> __device__ __forceinline__ T tanh_grad(T x) {
  const T e = f_exp(T(-2) * fabs(x));
  return T(4) * e / ((T(1) + e) * (T(1) + e));
}

template <typename T>
__device__ __forceinline__ T activate_backward(const adnn_activation &a, T x, T g) {
  const T alpha = (T)a.alpha, beta = (T)a.beta;
  if (isnan(x)) return x;
  switch (a.kind) {
    case ADNN_ACTIVATION_IDENTITY:
      return g;
    case ADNN_ACTIVATION_RELU:
      return x > T(0) ? g : T(0);
    case ADNN_ACTIVATION_LEAKY_RELU:
      return x > T(0) ? g : alpha * g;
    case ADNN_ACTIVATION_ELU:
      return x > T(0) ? g : g * (alpha * f_exp(x));
    case ADNN_ACTIVATION_CLAMP:
      return x > alpha && x < beta ? g : T(0);
    case ADNN_ACTIVATION_SIGMOID: {
      const T e = f_exp(-fabs(x));
      return g * (e / ((T(1) + e) * (T(1) + e)));
    }
    case ADNN_ACTIVATION_TANH:
      return g * tanh_grad(x);
    case ADNN_ACTIVATION_GELU: {
      if (isinf(x)) return g * (x > T(0) ? T(1) : T(0));
      /* Phi(x) = erfc(-x / sqrt 2) / 2 keeps its accuracy for x < 0. */
      const T cdf = T(0.5) * erfc(-x * T(0.70710678118654752440));
      const T pdf = f_exp(T(-0.5) * x * x) * T(0.39894228040143267794);
      return g * (cdf + x * pdf);
    }
    case ADNN_ACTIVATION_GELU_TANH: {
      if (fabs(x) > T(1e10)) return g * (x > T(0) ? T(1) : T(0));
      const T k = T(0.79788456080286535588), c = T(0.044715);
      const T u = k * (x + c * x * x * x);
      return g * (sigmoid_stable(T(2) * u) + T(0.5) * x * tanh_grad(u) * k * (T(1) + T(3) * c * x * x));
    }
    case ADNN_ACTIVATION_SILU:
      if (isinf(x)) return g * (x > T(0) ? T(1) : T(0));
      return g * (sigmoid_stable(x) * (T(1) + x * sigmoid_stable(-x)));
    case ADNN_ACTIVATION_SOFTPLUS:
      return x > T(20) ? g : g * sigmoid_stable(x);
    case ADNN_ACTIVATION_HARDSWISH:
      if (x < T(-3)) return T(0);
      if (x <= T(3)) return g * (x / T(3) + T(0.5));
      return g;
  }
  return x * T(NAN);
}

/* T is the storage type (float, double, lowp_f16, lowp_bf16), C the
 * arithmetic's (elem<T>::compute). */
template <typename T>
__global__ void act_bwd_strided(adnn_activation act, adnn_nd nd, int64_t n, const T *x,
                                const T *dy, T *dx) {
  typedef typename elem<T>::compute C;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t off[2];
    nd_offsets(nd, i, off);
    lp_store(dx + off[0], activate_backward<C>(act, lp_load(x + off[0]), lp_load(dy + off[1])));
  }
}

template <typename T>
__global__ void act_bwd_packed(adnn_activation act, int64_t n, const T *x, const T *dy, T *dx) {
  typedef typename elem<T>::compute C;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    lp_store(dx + i, activate_backward<C>(act, lp_load(x + i), lp_load(dy + i)));
}

template <typename T>
static cudaError_t launch_act_bwd(const adnn_cuda_launch_config *l,
                                  const adnn_plugin_activation_backward *p,
                                  const adnn_cuda_elementwise_layout *e, const void *x,
                                  const void *dy, void *dx) {
  const int threads = 256;
  const int64_t n = p->fwd.count;
  if (n <= 0) return cudaSuccess;
  const unsigned grid = grid_for(l, n, threads);
  if (e->contiguous)
    act_bwd_packed<T><<<grid, threads, 0, l->stream>>>(p->fwd.activation, n, (const T *)x,
                                                       (const T *)dy, (T *)dx);
  else
    act_bwd_strided<T><<<grid, threads, 0, l->stream>>>(p->fwd.activation, e->nd, n,
                                                        (const T *)x, (const T *)dy, (T *)dx);
  return cudaGetLastError();
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_activation_backward_launch(
    const adnn_cuda_launch_config *l, adnn_dtype dtype, const adnn_plugin_activation_backward *p,
    const adnn_cuda_elementwise_layout *e, const void *x, const void *dy, void *dx) {
  switch (dtype) {
    case ADNN_DTYPE_F64: return launch_act_bwd<double>(l, p, e, x, dy, dx);
    case ADNN_DTYPE_F16: return launch_act_bwd<lowp_f16>(l, p, e, x, dy, dx);
    case ADNN_DTYPE_BF16: return launch_act_bwd<lowp_bf16>(l, p, e, x, dy, dx);
    default: return launch_act_bwd<float>(l, p, e, x, dy, dx);
  }
}
