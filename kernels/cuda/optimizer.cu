/*
 * The fused multi-tensor optimizer step (SGD with momentum, dampening,
 * Nesterov and weight decay; Adam; AdamW), in place, F32 and F64.
 *
 * Multi-tensor apply: the tensors are taken in groups of up to
 * ADNN_CUDA_OPTIMIZER_GROUP, whose pointers and sizes travel by value in
 * the kernel's parameters (no device-side table to upload). Every tensor of
 * a group is cut into chunks of OPT_CHUNK elements, numbered tensor after
 * tensor; blocks take chunks grid-stride and find a chunk's tensor by a scan
 * of the group's prefix counts. One launch per group. The update is
 * elementwise in the parameters' precision, so results do not depend on the
 * launch shape.
 *
 * The step's constants (lr, the bias corrections) are computed on the host
 * by the launcher from the live problem at every execution.
 *
 * Master weights (model_dtype F16/BF16): G, the gradients' type, is the
 * 16-bit one, widened exactly to F32 (lowp_elem.cuh); the F32 update is the
 * same expression as without copies, and the updated parameter is rounded
 * once, to nearest even, into the model copy, as the CPU plugin does.
 */
#include <string.h>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/lowp_elem.cuh"

namespace adnn_cuda {

static const int64_t OPT_CHUNK = 4096;
static const int OPT_THREADS = 256;

/* One launch's tensors. */
struct opt_group {
  int32_t count;
  void *p[ADNN_CUDA_OPTIMIZER_GROUP];
  const void *g[ADNN_CUDA_OPTIMIZER_GROUP];
  void *a[ADNN_CUDA_OPTIMIZER_GROUP]; /* buf (SGD with momentum) or m */
  void *b[ADNN_CUDA_OPTIMIZER_GROUP]; /* v */
  void *w[ADNN_CUDA_OPTIMIZER_GROUP]; /* the model copies (master weights), or NULL */
  int64_t size[ADNN_CUDA_OPTIMIZER_GROUP];
  int64_t first_chunk[ADNN_CUDA_OPTIMIZER_GROUP + 1];
};

/* The step's constants. */
struct opt_consts {
  int32_t kind, with_buf, has_wd, first, nesterov;
  double lr, wd, momentum, one_minus_dampening;
  double beta1, beta2, one_minus_beta1, one_minus_beta2;
  double decoupled_decay, step_size, sqrt_bc2, epsilon;
};

template <typename T, typename G> __global__ void optimizer_chunks(opt_group grp, opt_consts k) {
  const T lr = (T)k.lr, wd = (T)k.wd, mom = (T)k.momentum, damp1 = (T)k.one_minus_dampening;
  const T b1 = (T)k.beta1, b2 = (T)k.beta2, c1 = (T)k.one_minus_beta1, c2 = (T)k.one_minus_beta2;
  const T decay = (T)k.decoupled_decay, step = (T)k.step_size, sbc2 = (T)k.sqrt_bc2,
          eps = (T)k.epsilon;
  const int64_t chunks = grp.first_chunk[grp.count];
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    int i = 0;
    while (c >= grp.first_chunk[i + 1]) i++;
    const int64_t off = (c - grp.first_chunk[i]) * OPT_CHUNK;
    const int64_t n = grp.size[i] - off < OPT_CHUNK ? grp.size[i] - off : OPT_CHUNK;
    T *p = (T *)grp.p[i] + off;
    const G *g = (const G *)grp.g[i] + off;
    T *a = grp.a[i] ? (T *)grp.a[i] + off : (T *)0;
    T *b = grp.b[i] ? (T *)grp.b[i] + off : (T *)0;
    G *w = grp.w[i] ? (G *)grp.w[i] + off : (G *)0;
    for (int64_t e = threadIdx.x; e < n; e += blockDim.x) {
      T pv = p[e], gv = (T)lp_load(g + e);
      if (k.kind == ADNN_OPTIMIZER_SGD) {
        if (k.has_wd) gv = gv + wd * pv;
        if (k.with_buf) {
          const T buf = k.first ? gv : mom * a[e] + damp1 * gv;
          a[e] = buf;
          gv = k.nesterov ? gv + mom * buf : buf;
        }
        pv = pv - lr * gv;
      } else {
        if (k.kind == ADNN_OPTIMIZER_ADAMW) pv = pv * decay;
        else if (k.has_wd) gv = gv + wd * pv;
        const T mv = b1 * a[e] + c1 * gv;
        const T vv = b2 * b[e] + c2 * (gv * gv);
        a[e] = mv;
        b[e] = vv;
        pv = pv - step * (mv / (f_sqrt(vv) / sbc2 + eps));
      }
      p[e] = pv;
      if (w) lp_store(w + e, pv);
    }
  }
}

template <typename T, typename G>
static cudaError_t launch_optimizer(const adnn_cuda_launch_config *l, const adnn_plugin_optimizer *p,
                                    const opt_consts &k, const void *const *in,
                                    void *const *out) {
  const int64_t T_count = p->tensor_count;
  const int64_t states = k.kind != ADNN_OPTIMIZER_SGD ? 2 : k.with_buf ? 1 : 0;
  for (int64_t g0 = 0; g0 < T_count; g0 += ADNN_CUDA_OPTIMIZER_GROUP) {
    opt_group grp;
    memset(&grp, 0, sizeof grp);
    grp.count = (int32_t)(T_count - g0 < ADNN_CUDA_OPTIMIZER_GROUP ? T_count - g0
                                                                    : ADNN_CUDA_OPTIMIZER_GROUP);
    grp.first_chunk[0] = 0;
    for (int j = 0; j < grp.count; j++) {
      const int64_t i = g0 + j;
      grp.p[j] = out[i];
      grp.g[j] = in[i];
      if (k.kind != ADNN_OPTIMIZER_SGD || k.with_buf) grp.a[j] = out[T_count + i];
      if (k.kind != ADNN_OPTIMIZER_SGD) grp.b[j] = out[2 * T_count + i];
      if (p->model_dtype != 0) grp.w[j] = out[(1 + states) * T_count + i];
      grp.size[j] = p->sizes[i];
      grp.first_chunk[j + 1] = grp.first_chunk[j] + (p->sizes[i] + OPT_CHUNK - 1) / OPT_CHUNK;
    }
    const int64_t chunks = grp.first_chunk[grp.count];
    optimizer_chunks<T, G><<<grid_for(l, chunks * OPT_THREADS, OPT_THREADS), OPT_THREADS, 0,
                          l->stream>>>(grp, k);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_optimizer_launch(const adnn_cuda_launch_config *l,
                                                     adnn_dtype dtype,
                                                     const adnn_plugin_optimizer *p,
                                                     const void *const *inputs,
                                                     void *const *outputs) {
  opt_consts k;
  k.kind = (int32_t)p->kind;
  k.with_buf = p->kind == ADNN_OPTIMIZER_SGD && p->momentum != 0.0;
  k.has_wd = p->weight_decay != 0.0;
  k.first = p->step == 1;
  k.nesterov = p->nesterov != 0;
  k.lr = p->lr;
  k.wd = p->weight_decay;
  k.momentum = p->momentum;
  k.one_minus_dampening = 1.0 - p->dampening;
  k.beta1 = p->beta1;
  k.beta2 = p->beta2;
  k.one_minus_beta1 = 1.0 - p->beta1;
  k.one_minus_beta2 = 1.0 - p->beta2;
  k.decoupled_decay = 1.0 - p->lr * p->weight_decay;
  k.step_size = p->lr / (1.0 - pow(p->beta1, (double)p->step));
  k.sqrt_bc2 = sqrt(1.0 - pow(p->beta2, (double)p->step));
  k.epsilon = p->epsilon;
  if (p->model_dtype == ADNN_DTYPE_F16)
    return launch_optimizer<float, lowp_f16>(l, p, k, inputs, outputs);
  if (p->model_dtype == ADNN_DTYPE_BF16)
    return launch_optimizer<float, lowp_bf16>(l, p, k, inputs, outputs);
  return dtype == ADNN_DTYPE_F64 ? launch_optimizer<double, double>(l, p, k, inputs, outputs)
                                 : launch_optimizer<float, float>(l, p, k, inputs, outputs);
}
