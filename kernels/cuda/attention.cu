/*
 * Scaled-dot-product attention forward, our own flash-style kernels (F32,
 * F64, and F16/BF16 with F32 tiles and lse; attention.cuh, doc/cuda.md).
 *
 * attention_fwd_rows: one block per (batch, head, tile of R query rows),
 * grid-stride over those tiles, R x ATT_LANES threads (attention.cuh). The
 * block stages its query tile in shared memory once, then streams the keys
 * and values of the query head's group (g = h / group: grouped-query and
 * multi-query attention read the shared K/V head) in tiles of C rows through
 * one shared buffer: the K tile, the scores S = scale * Q K^T + bias of the
 * R x C block with an online softmax per row (running maximum m and sum l;
 * the accumulated output is rescaled by exp(m_old - m_new) when the maximum
 * grows), the probabilities P = exp(S - m) to shared memory, then the V tile
 * in the same buffer and O += P V. No Sq x Skv matrix exists anywhere: extra
 * memory is the block's tiles. The key loop ends at the block's last
 * visible key: min(Skv, key_lengths[b]) and, causal, the last query's
 * diagonal, so tiles above the diagonal are never loaded. At the end
 * o = acc / l and lse = m + log(l); a row that saw no visible key (l == 0)
 * gives o = 0 and lse = -inf.
 *
 * Masked scores are -inf and never reach an exponential as a difference of
 * two infinities: a row whose running maximum is still -inf keeps p = 0 and
 * its accumulator untouched. NaN in q, k, v or the bias propagates to o and
 * lse (a comparison never selects NaN as the maximum, so it reaches exp()).
 *
 * attention_fwd_by_row: one thread per query row, two passes over the keys
 * (the row's maximum and sum, then o accumulated in place in the output):
 * the fallback for head dims beyond the tiles' (D or Dv > 256, F64 > 128).
 *
 * Barriers: every loop bound in attention_fwd_rows depends only on blockIdx
 * and the problem, so each thread of a block reaches each __syncthreads and
 * each shuffle; padding rows (beyond Sq) and padding columns compute on zeros
 * and write nothing. Results do not depend on the grid size: each row is
 * computed by one block in a fixed order.
 */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/attention.cuh"

namespace adnn_cuda {

template <typename S, int DMAX>
__global__ void attention_fwd_rows(adnn_plugin_attention p, const S *q, const S *k, const S *v,
                                   const S *bias, const int32_t *key_lengths, S *o,
                                   typename elem<S>::compute *lse) {
  typedef typename elem<S>::compute T;
  typedef att_cfg<T, DMAX> cfg;
  constexpr int R = cfg::R, C = cfg::C, P = cfg::P;
  __shared__ T sq[R * P];
  __shared__ T skv[C * P];
  __shared__ T sp[R * C];
  const int tid = threadIdx.x, r = tid / ATT_LANES, lane = tid % ATT_LANES;
  const int D = (int)p.D, Dv = (int)p.Dv;
  const T scale = (T)p.scale, ninf = -T(INFINITY);
  const int64_t tiles = (p.Sq + R - 1) / R, total = p.B * p.H * tiles;
  const int64_t *qs = p.q.strides, *ks = p.k.strides, *vs = p.v.strides, *os = p.o.strides;
  for (int64_t blk = blockIdx.x; blk < total; blk += gridDim.x) {
    const int64_t tile = blk % tiles, bh = blk / tiles, h = bh % p.H, b = bh / p.H;
    const int64_t g = h / p.group, i0 = tile * R, rows = att_min(R, p.Sq - i0);
    const int64_t i = i0 + r;
    const bool row_ok = r < rows;
    /* The block's last visible key + 1: the key end, and the causal diagonal
     * of its last row. */
    int64_t kend = att_key_end(p, key_lengths, b);
    if (p.causal) kend = att_min(kend, i0 + rows + (p.Skv - p.Sq));
    if (kend < 0) kend = 0;
    const S *qb = q + b * qs[0] + h * qs[1], *kb = k + b * ks[0] + g * ks[1];
    const S *vb = v + b * vs[0] + g * vs[1];
    __syncthreads(); /* the previous tile's readers of sq are done */
    for (int e = tid; e < R * D; e += blockDim.x) {
      const int ii = e / D, d = e % D;
      sq[ii * P + d] = ii < rows ? widen(qb[(i0 + ii) * qs[2] + d * qs[3]]) : T(0);
    }
    T m = ninf, l = T(0), acc[cfg::PER_D];
#pragma unroll
    for (int t = 0; t < cfg::PER_D; t++) acc[t] = T(0);
    for (int64_t j0 = 0; j0 < kend; j0 += C) {
      const int cols = (int)att_min(C, kend - j0);
      __syncthreads(); /* readers of skv (V) and sp of the previous tile are done */
      for (int e = tid; e < C * D; e += blockDim.x) {
        const int jj = e / D, d = e % D;
        skv[jj * P + d] = jj < cols ? widen(kb[(j0 + jj) * ks[2] + d * ks[3]]) : T(0);
      }
      __syncthreads();
      T s[cfg::PER_COL], tmax = ninf;
#pragma unroll
      for (int t = 0; t < cfg::PER_COL; t++) {
        const int jj = lane + t * ATT_LANES;
        const int64_t j = j0 + jj;
        T x = ninf;
        if (row_ok && jj < cols && att_visible(p, i, j)) {
          T dot = T(0);
          for (int d = 0; d < D; d++) dot += sq[r * P + d] * skv[jj * P + d];
          x = dot * scale + att_bias(p, bias, b, h, i, j);
        }
        s[t] = x;
        tmax = x > tmax ? x : tmax;
      }
      tmax = att_row_max(tmax);
      const T mnew = tmax > m ? tmax : m;
      T psum = T(0);
      if (mnew == ninf) {
        /* Nothing visible yet: p = 0, and l and acc stay 0, except that a
         * NaN score (which no maximum selects) still reaches l. */
#pragma unroll
        for (int t = 0; t < cfg::PER_COL; t++) {
          s[t] = isnan(s[t]) ? s[t] : T(0);
          psum += s[t];
        }
      } else {
        const T alpha = f_exp(m - mnew); /* m == -inf: 0, and l, acc are 0 */
#pragma unroll
        for (int t = 0; t < cfg::PER_COL; t++) {
          s[t] = f_exp(s[t] - mnew); /* masked (-inf): 0 */
          psum += s[t];
        }
        l *= alpha;
#pragma unroll
        for (int t = 0; t < cfg::PER_D; t++) acc[t] *= alpha;
        m = mnew;
      }
      l += att_row_sum(psum);
#pragma unroll
      for (int t = 0; t < cfg::PER_COL; t++) sp[r * C + lane + t * ATT_LANES] = s[t];
      __syncthreads(); /* every thread is done with K; sp is complete */
      for (int e = tid; e < C * Dv; e += blockDim.x) {
        const int jj = e / Dv, d = e % Dv;
        skv[jj * P + d] = jj < cols ? widen(vb[(j0 + jj) * vs[2] + d * vs[3]]) : T(0);
      }
      __syncthreads();
#pragma unroll
      for (int t = 0; t < cfg::PER_D; t++) {
        const int d = lane + t * ATT_LANES;
        if (d < Dv) {
          T a = acc[t];
          for (int jj = 0; jj < cols; jj++) a += att_weighted(sp[r * C + jj], skv[jj * P + d]);
          acc[t] = a;
        }
      }
    }
    if (row_ok) {
      S *ob = o + b * os[0] + h * os[1] + i * os[2];
      const T inv = l == T(0) ? T(0) : T(1) / l;
#pragma unroll
      for (int t = 0; t < cfg::PER_D; t++) {
        const int d = lane + t * ATT_LANES;
        if (d < Dv) put(&ob[d * os[3]], l == T(0) ? T(0) : acc[t] * inv);
      }
      if (lse != NULL && lane == 0) {
        const int64_t *ls = p.lse.strides;
        lse[b * ls[0] + h * ls[1] + i * ls[2]] = l == T(0) ? ninf : m + f_log(l);
      }
    }
  }
}

/* The score of query row qr (already offset) with key j. */
template <typename T>
__device__ __forceinline__ T att_score(const adnn_plugin_attention &p, const T *qr, const T *kb,
                                       const T *bias, int64_t b, int64_t h, int64_t i, int64_t j) {
  const int64_t *qs = p.q.strides, *ks = p.k.strides;
  T dot = T(0);
  for (int64_t d = 0; d < p.D; d++) dot += qr[d * qs[3]] * kb[j * ks[2] + d * ks[3]];
  return dot * (T)p.scale + att_bias(p, bias, b, h, i, j);
}

template <typename T>
__global__ void attention_fwd_by_row(adnn_plugin_attention p, const T *q, const T *k, const T *v,
                                     const T *bias, const int32_t *key_lengths, T *o, T *lse) {
  const int64_t total = p.B * p.H * p.Sq;
  const int64_t *qs = p.q.strides, *ks = p.k.strides, *vs = p.v.strides, *os = p.o.strides;
  const T ninf = -T(INFINITY);
  for (int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; row < total;
       row += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i = row % p.Sq, bh = row / p.Sq, h = bh % p.H, b = bh / p.H, g = h / p.group;
    int64_t kend = att_key_end(p, key_lengths, b);
    if (p.causal) kend = att_min(kend, i + 1 + (p.Skv - p.Sq));
    const T *qr = q + b * qs[0] + h * qs[1] + i * qs[2], *kb = k + b * ks[0] + g * ks[1];
    const T *vb = v + b * vs[0] + g * vs[1];
    T *orow = o + b * os[0] + h * os[1] + i * os[2];
    T m = ninf, l = T(0);
    for (int64_t j = 0; j < kend; j++) {
      const T x = att_score(p, qr, kb, bias, b, h, i, j);
      if (x == ninf) continue;
      if (x > m || isnan(x)) {
        l = l * f_exp(m - x) + T(1);
        m = x;
      } else {
        l += f_exp(x - m);
      }
    }
    for (int64_t d = 0; d < p.Dv; d++) orow[d * os[3]] = T(0);
    if (l != T(0)) {
      const T inv = T(1) / l;
      for (int64_t j = 0; j < kend; j++) {
        const T x = att_score(p, qr, kb, bias, b, h, i, j);
        if (x == ninf) continue;
        const T pj = f_exp(x - m) * inv;
        for (int64_t d = 0; d < p.Dv; d++)
          orow[d * os[3]] += att_weighted(pj, vb[j * vs[2] + d * vs[3]]);
      }
    }
    if (lse != NULL) {
      const int64_t *ls = p.lse.strides;
      lse[b * ls[0] + h * ls[1] + i * ls[2]] = l == T(0) ? ninf : m + f_log(l);
    }
  }
}

template <typename S, int DMAX>
static void launch_fwd_tiles(const adnn_cuda_launch_config *l, const adnn_plugin_attention *p,
                             const adnn_cuda_attention_layout *s, const void *q, const void *k,
                             const void *v, const void *bias, const int32_t *kl, void *o,
                             void *lse) {
  typedef typename elem<S>::compute T;
  const int threads = att_cfg<T, DMAX>::THREADS;
  attention_fwd_rows<S, DMAX><<<s->blocks, threads, 0, l->stream>>>(
      *p, (const S *)q, (const S *)k, (const S *)v, (const S *)bias, kl, (S *)o, (T *)lse);
}

/* The row-per-thread fallback: F32 and F64 (a 16-bit problem that would
 * need it is refused at plan creation, attention.cuh). */
template <typename S>
static void launch_fwd_by_row(const adnn_cuda_launch_config *l, const adnn_plugin_attention *p,
                              const adnn_cuda_attention_layout *s, const void *q, const void *k,
                              const void *v, const void *bias, const int32_t *kl, void *o,
                              void *lse) {
  attention_fwd_by_row<S><<<s->row_blocks, ATT_ROW_THREADS, 0, l->stream>>>(
      *p, (const S *)q, (const S *)k, (const S *)v, (const S *)bias, kl, (S *)o, (S *)lse);
}
template <>
void launch_fwd_by_row<lowp_f16>(const adnn_cuda_launch_config *, const adnn_plugin_attention *,
                                 const adnn_cuda_attention_layout *, const void *, const void *,
                                 const void *, const void *, const int32_t *, void *, void *) {}
template <>
void launch_fwd_by_row<lowp_bf16>(const adnn_cuda_launch_config *, const adnn_plugin_attention *,
                                  const adnn_cuda_attention_layout *, const void *, const void *,
                                  const void *, const void *, const int32_t *, void *, void *) {}

template <typename S>
static cudaError_t launch_fwd(const adnn_cuda_launch_config *l, const adnn_plugin_attention *p,
                              const adnn_cuda_attention_layout *s, const void *q, const void *k,
                              const void *v, const void *bias, const int32_t *kl, void *o,
                              void *lse) {
  if (p->B * p->H * p->Sq == 0) return cudaSuccess;
  switch (s->dmax) {
    case 64: launch_fwd_tiles<S, 64>(l, p, s, q, k, v, bias, kl, o, lse); break;
    case 128: launch_fwd_tiles<S, 128>(l, p, s, q, k, v, bias, kl, o, lse); break;
    case 256:
      if (sizeof(typename elem<S>::compute) == 4)
        launch_fwd_tiles<typename att_256<S>::type, 256>(l, p, s, q, k, v, bias, kl, o, lse);
      break;
    default: launch_fwd_by_row<S>(l, p, s, q, k, v, bias, kl, o, lse);
  }
  return cudaGetLastError();
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API void adnn_cuda_attention_layout_init(const adnn_cuda_launch_config *l,
                                                   adnn_dtype dtype,
                                                   const adnn_plugin_attention *p,
                                                   adnn_cuda_attention_layout *s) {
  memset(s, 0, sizeof *s);
  s->dmax = att_pick_dmax(dtype, p->D, p->Dv);
  const int f64 = dtype == ADNN_DTYPE_F64;
  if (s->dmax != 0) {
    s->threads = f64 ? att_threads_for<double>(s->dmax) : att_threads_for<float>(s->dmax);
    s->rows_per_block = f64 ? att_rows_for<double>(s->dmax) : att_rows_for<float>(s->dmax);
    const int64_t q_tiles = p->B * p->H * ((p->Sq + s->rows_per_block - 1) / s->rows_per_block);
    const int64_t kv_tiles =
        p->B * p->Hkv * ((p->Skv + s->rows_per_block - 1) / s->rows_per_block);
    s->blocks = grid_rows(l, q_tiles, s->threads);
    s->kv_blocks = grid_rows(l, kv_tiles, s->threads);
  }
  s->row_blocks = grid_for(l, p->B * p->H * p->Sq, ATT_ROW_THREADS);
  s->key_row_blocks = grid_for(l, p->B * p->Hkv * p->Skv, ATT_ROW_THREADS);
}

ADNN_CUDA_API cudaError_t adnn_cuda_attention_launch(const adnn_cuda_launch_config *l,
                                                     adnn_dtype dtype,
                                                     const adnn_plugin_attention *p,
                                                     const adnn_cuda_attention_layout *s,
                                                     const void *q, const void *k, const void *v,
                                                     const void *bias,
                                                     const int32_t *key_lengths, void *o,
                                                     void *lse) {
  switch (dtype) {
  case ADNN_DTYPE_F64: return launch_fwd<double>(l, p, s, q, k, v, bias, key_lengths, o, lse);
  case ADNN_DTYPE_F16: return launch_fwd<lowp_f16>(l, p, s, q, k, v, bias, key_lengths, o, lse);
  case ADNN_DTYPE_BF16: return launch_fwd<lowp_bf16>(l, p, s, q, k, v, bias, key_lengths, o, lse);
  default: return launch_fwd<float>(l, p, s, q, k, v, bias, key_lengths, o, lse);
  }
}
