/*
 * Softmax cross-entropy, forward (loss) and backward (d logits), any strides.
 *
 * One block per row (xent_loss_rows, xent_grad_rows): each thread keeps an
 * online (max, sum of exp(x - max)) pair over its elements of the row, merged
 * with warp shuffles and then across warps (block_reduce), so a row is read
 * once for the loss. A row holding NaN or +inf, or only -inf, has no finite
 * logsumexp and gives NaN (loss and gradient row), as softmax does. The
 * label's loss term is (max - x_t) + log(sum), and its gradient g * expm1(x_t
 * - lse), both formed in double.
 *
 * MEAN and SUM: each block adds the losses of its rows (in its grid-stride
 * order) into one partial in the workspace (a double per block of the
 * grid, whose size depends only on N and the device), and one block
 * (xent_sum_rows) adds the partials and counts the samples not ignored, each
 * thread over a fixed stride, then a fixed tree: the result is the same run
 * to run. The backward's MEAN divisor is counted the same way
 * (xent_count_rows) into the workspace before the gradient kernel reads it.
 *
 * Every thread of a *_rows block takes part in every reduction and barrier:
 * the row loop and the label test depend only on blockIdx and the row, so the
 * branches are uniform across the block.
 *
 * Low precision: the logits, loss, dloss and dlogits have storage type S
 * and the row state is elem<S>::compute (F32 for F16/BF16, as for F32); a
 * 16-bit logit is widened exactly when it is read, and each 16-bit result
 * is rounded once from the type it was formed in (lowp_elem.cuh's put).
 */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/lowp_elem.cuh"

namespace adnn_cuda {

template <typename T> struct xe_state {
  T m;     /* running maximum of the finite / -inf values seen (-inf: none) */
  T s;     /* sum of exp(v - m) */
  int bad; /* a NaN or +inf was seen */
};

template <typename T> __device__ __forceinline__ void xe_add(xe_state<T> &st, T v) {
  if (isnan(v) || v == T(INFINITY)) {
    st.bad = 1;
  } else if (v == -T(INFINITY)) {
    /* contributes exp(-inf) = 0 */
  } else if (v > st.m) {
    st.s = st.s * f_exp(st.m - v) + T(1); /* m == -inf: s is 0, exp(-inf) = 0 */
    st.m = v;
  } else {
    st.s += f_exp(v - st.m);
  }
}

template <typename T>
__device__ __forceinline__ xe_state<T> xe_merge(xe_state<T> a, xe_state<T> b) {
  xe_state<T> r;
  r.bad = a.bad | b.bad;
  r.m = a.m > b.m ? a.m : b.m;
  if (r.m == -T(INFINITY)) {
    r.s = T(0);
  } else {
    const T sa = a.m == -T(INFINITY) ? T(0) : a.s * f_exp(a.m - r.m);
    const T sb = b.m == -T(INFINITY) ? T(0) : b.s * f_exp(b.m - r.m);
    r.s = sa + sb;
  }
  return r;
}

template <typename T> __device__ __forceinline__ xe_state<T> xe_warp(xe_state<T> st) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    xe_state<T> other;
    other.m = __shfl_xor_sync(0xffffffffu, st.m, o);
    other.s = __shfl_xor_sync(0xffffffffu, st.s, o);
    other.bad = __shfl_xor_sync(0xffffffffu, st.bad, o);
    st = xe_merge(st, other);
  }
  return st;
}

/* The row's (max, sum) over the whole block, in T = elem<S>::compute. */
template <typename S, typename T = typename elem<S>::compute>
__device__ __forceinline__ xe_state<T> xe_row_state(const adnn_cuda_xent_layout &s, const S *x,
                                                    int64_t base, xe_state<T> *part) {
  const xe_state<T> empty = {-T(INFINITY), T(0), 0};
  xe_state<T> st = empty;
  for (int64_t c = threadIdx.x; c < s.C; c += blockDim.x) xe_add(st, widen(x[base + c * s.xs1]));
  return block_reduce(st, part, empty, [](xe_state<T> v) { return xe_warp(v); });
}

template <typename S>
__global__ void xent_loss_rows(adnn_cuda_xent_layout s, const S *x, const int32_t *labels, S *loss,
                               double *partials) {
  typedef typename elem<S>::compute T;
  __shared__ xe_state<T> part[32];
  double partial = 0.0; /* thread 0's sum of this block's row losses */
  for (int64_t r = blockIdx.x; r < s.N; r += gridDim.x) {
    const int64_t t = labels[r * s.lab_s];
    if (t == s.ignore) {
      if (threadIdx.x == 0 && !partials) put(&loss[r * s.loss_s], T(0));
      continue;
    }
    const int64_t base = r * s.xs0;
    const xe_state<T> st = xe_row_state(s, x, base, part);
    if (threadIdx.x == 0) {
      double v;
      if (t < 0 || t >= s.C || st.bad || st.m == -T(INFINITY))
        v = NAN;
      else
        v = ((double)st.m - (double)widen(x[base + t * s.xs1])) + log((double)st.s);
      if (partials) partial += v;
      else put(&loss[r * s.loss_s], v);
    }
    block_reduce_done(); /* part[0] is read before the next row writes it */
  }
  if (partials && threadIdx.x == 0) partials[blockIdx.x] = partial;
}

/* One block: the sum of the `blocks` partials (and the divisor for MEAN). */
template <typename S>
__global__ void xent_sum_rows(adnn_cuda_xent_layout s, const double *partials, int64_t blocks,
                              const int32_t *labels, S *loss) {
  __shared__ double part[32];
  double sum = 0.0, count = 0.0;
  for (int64_t b = threadIdx.x; b < blocks; b += blockDim.x) sum += partials[b];
  for (int64_t r = threadIdx.x; r < s.N; r += blockDim.x)
    count += labels[r * s.lab_s] != s.ignore ? 1.0 : 0.0;
  sum = block_reduce(sum, part, 0.0, [](double v) { return warp_sum(v); });
  block_reduce_done();
  count = block_reduce(count, part, 0.0, [](double v) { return warp_sum(v); });
  if (threadIdx.x == 0) put(&loss[0], s.reduction == ADNN_LOSS_REDUCTION_MEAN ? sum / count : sum);
}

/* One block: the number of samples not ignored, into *count. */
__global__ void xent_count_rows(adnn_cuda_xent_layout s, const int32_t *labels, double *count) {
  __shared__ double part[32];
  double k = 0.0;
  for (int64_t r = threadIdx.x; r < s.N; r += blockDim.x)
    k += labels[r * s.lab_s] != s.ignore ? 1.0 : 0.0;
  k = block_reduce(k, part, 0.0, [](double v) { return warp_sum(v); });
  if (threadIdx.x == 0) *count = k;
}

template <typename S>
__global__ void xent_grad_rows(adnn_cuda_xent_layout s, const S *x, const int32_t *labels,
                               const S *dloss, const double *count, S *dx) {
  typedef typename elem<S>::compute T;
  __shared__ xe_state<T> part[32];
  for (int64_t r = blockIdx.x; r < s.N; r += gridDim.x) {
    const int64_t t = labels[r * s.lab_s], base = r * s.xs0;
    if (t == s.ignore) {
      for (int64_t c = threadIdx.x; c < s.C; c += blockDim.x) put(&dx[base + c * s.xs1], T(0));
      continue;
    }
    double g;
    if (s.reduction == ADNN_LOSS_REDUCTION_NONE) g = (double)widen(dloss[r * s.loss_s]);
    else if (s.reduction == ADNN_LOSS_REDUCTION_MEAN) g = (double)widen(dloss[0]) / *count;
    else g = (double)widen(dloss[0]);
    const xe_state<T> st = xe_row_state(s, x, base, part);
    const int ok = t >= 0 && t < s.C && !st.bad && st.m > -T(INFINITY);
    const double ls = log((double)st.s);
    const T tm = st.m, tls = (T)ls, tg = (T)g;
    for (int64_t c = threadIdx.x; c < s.C; c += blockDim.x) {
      const int64_t o = base + c * s.xs1;
      /* The label's term is formed in double and rounded once to S. */
      if (!ok) put(&dx[o], T(NAN));
      else if (c == t) put(&dx[o], g * expm1(((double)widen(x[o]) - (double)st.m) - ls));
      else put(&dx[o], tg * f_exp((widen(x[o]) - tm) - tls));
    }
    block_reduce_done();
  }
}

template <typename S>
static cudaError_t launch_loss(const adnn_cuda_launch_config *l, const adnn_cuda_xent_layout *s,
                               const void *x, const void *labels, void *loss, void *workspace) {
  const int threads = threads_per_row(s->C, 512);
  const unsigned grid = grid_rows(l, s->N, threads);
  double *partials = s->reduction == ADNN_LOSS_REDUCTION_NONE ? NULL : (double *)workspace;
  xent_loss_rows<S><<<grid, threads, 0, l->stream>>>(*s, (const S *)x, (const int32_t *)labels,
                                                     (S *)loss, partials);
  if (partials) {
    const int sum_threads = threads_per_row(s->N, 1024);
    xent_sum_rows<S><<<1, sum_threads, 0, l->stream>>>(*s, partials, (int64_t)grid,
                                                       (const int32_t *)labels, (S *)loss);
  }
  return cudaGetLastError();
}

template <typename S>
static cudaError_t launch_grad(const adnn_cuda_launch_config *l, const adnn_cuda_xent_layout *s,
                               const void *x, const void *labels, const void *dloss, void *dx,
                               void *workspace) {
  double *count = (double *)workspace;
  if (s->reduction == ADNN_LOSS_REDUCTION_MEAN) {
    const int count_threads = threads_per_row(s->N, 1024);
    xent_count_rows<<<1, count_threads, 0, l->stream>>>(*s, (const int32_t *)labels, count);
  }
  const int threads = threads_per_row(s->C, 512);
  xent_grad_rows<S><<<grid_rows(l, s->N, threads), threads, 0, l->stream>>>(
      *s, (const S *)x, (const int32_t *)labels, (const S *)dloss, count, (S *)dx);
  return cudaGetLastError();
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API size_t adnn_cuda_softmax_cross_entropy_workspace(const adnn_cuda_launch_config *l,
                                                               const adnn_cuda_xent_layout *s) {
  if (s->reduction == ADNN_LOSS_REDUCTION_NONE || s->N <= 0 || s->C <= 0) return 0;
  return (size_t)grid_rows(l, s->N, threads_per_row(s->C, 512)) * sizeof(double);
}

ADNN_CUDA_API cudaError_t adnn_cuda_softmax_cross_entropy_launch(
    const adnn_cuda_launch_config *l, adnn_dtype dtype, const adnn_cuda_xent_layout *s,
    const void *logits, const void *labels, void *loss, void *workspace) {
  if (s->N <= 0 || s->C <= 0) return cudaSuccess;
  switch (dtype) {
  case ADNN_DTYPE_F64: return launch_loss<double>(l, s, logits, labels, loss, workspace);
  case ADNN_DTYPE_F16: return launch_loss<lowp_f16>(l, s, logits, labels, loss, workspace);
  case ADNN_DTYPE_BF16: return launch_loss<lowp_bf16>(l, s, logits, labels, loss, workspace);
  default: return launch_loss<float>(l, s, logits, labels, loss, workspace);
  }
}

ADNN_CUDA_API cudaError_t adnn_cuda_softmax_cross_entropy_backward_launch(
    const adnn_cuda_launch_config *l, adnn_dtype dtype, const adnn_cuda_xent_layout *s,
    const void *logits, const void *labels, const void *dloss, void *dlogits, void *workspace) {
  if (s->N <= 0 || s->C <= 0) return cudaSuccess;
  switch (dtype) {
  case ADNN_DTYPE_F64: return launch_grad<double>(l, s, logits, labels, dloss, dlogits, workspace);
  case ADNN_DTYPE_F16:
    return launch_grad<lowp_f16>(l, s, logits, labels, dloss, dlogits, workspace);
  case ADNN_DTYPE_BF16:
    return launch_grad<lowp_bf16>(l, s, logits, labels, dloss, dlogits, workspace);
  default: return launch_grad<float>(l, s, logits, labels, dloss, dlogits, workspace);
  }
}
