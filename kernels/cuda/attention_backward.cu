/*
 * Scaled-dot-product attention backward, our own flash-style kernels (F32,
 * F64, and F16/BF16 with F32 tiles, lse and row sums; attention.cuh,
 * doc/cuda.md). With P = exp(S - lse) recomputed from q, k and the
 * forward's lse (so no Sq x Skv matrix is kept or formed), dP = dO V^T and
 * dS = P * (dP - D), D = rowsum(dO * O):
 *   dV = P^T dO,  dK = scale * dS^T Q,  dQ = scale * dS K,
 * dK and dV summed over the query heads of each key/value head's group.
 *
 * Three kernels, in this order on the stream:
 *  - attention_bwd_rowsum: one thread per (batch, head, query row), D into
 *    the plan's workspace (accumulated in double, rounded once).
 *  - attention_dkdv_rows: one block per (batch, kv head, tile of R keys),
 *    R x ATT_LANES threads (attention.cuh). The block keeps its K and V rows
 *    in shared memory and loops over the group's query heads and, per head,
 *    over query tiles of C rows (Q, dO, lse and D staged in shared memory):
 *    P and dS of the R x C block to shared memory, then dV += P^T dO and
 *    dK += dS^T Q in registers. Causal: query tiles that end before the
 *    block's first visible query (j0 - (Skv - Sq)) are skipped; a key tile
 *    at or beyond key_lengths[b] writes zeros without looping.
 *  - attention_dq_rows: one block per (batch, head, tile of R queries),
 *    streaming K and V tiles of C rows as the forward does (same causal and
 *    key-length bounds): dS of the R x C block to shared memory, then
 *    dQ += dS K in registers.
 * Each output element is written by one thread after a fixed-order sum, so
 * there are no atomics and results are bitwise identical run to run (the
 * plan is deterministic). Rows the forward fully masked (lse = -inf) give
 * P = 0 and contribute nothing; their dq is 0.
 *
 * attention_dq_by_row and attention_dkdv_by_key, one thread per query row
 * and per key row, accumulating in place in the outputs, are the fallback
 * for head dims beyond the tiles' (as in the forward).
 *
 * Barriers: every loop bound of the _rows kernels depends only on blockIdx
 * and the problem, never on the thread, so every thread of a block reaches
 * every __syncthreads.
 */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/attention.cuh"

namespace adnn_cuda {

template <typename T>
__device__ __forceinline__ T att_lse(const adnn_plugin_attention &p, const T *lse, int64_t b,
                                     int64_t h, int64_t i) {
  const int64_t *ls = p.lse.strides;
  return lse[b * ls[0] + h * ls[1] + i * ls[2]];
}

template <typename S>
__global__ void attention_bwd_rowsum(adnn_plugin_attention p, const S *o, const S *dout,
                                     typename elem<S>::compute *rowsum) {
  typedef typename elem<S>::compute T;
  const int64_t total = p.B * p.H * p.Sq;
  const int64_t *os = p.o.strides;
  for (int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; row < total;
       row += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i = row % p.Sq, bh = row / p.Sq, h = bh % p.H, b = bh / p.H;
    const int64_t base = b * os[0] + h * os[1] + i * os[2];
    double acc = 0.0;
    for (int64_t d = 0; d < p.Dv; d++)
      acc += (double)widen(o[base + d * os[3]]) * (double)widen(dout[base + d * os[3]]);
    rowsum[row] = (T)acc;
  }
}

template <typename S, int DMAX>
__global__ void attention_dkdv_rows(adnn_plugin_attention p, const S *q, const S *k, const S *v,
                                    const S *dout, const typename elem<S>::compute *lse,
                                    const S *bias, const int32_t *key_lengths,
                                    const typename elem<S>::compute *rowsum, S *dk, S *dv) {
  typedef typename elem<S>::compute T;
  typedef att_cfg<T, DMAX> cfg;
  constexpr int R = cfg::R, C = cfg::C, P = cfg::P;
  __shared__ T sk[R * P];
  __shared__ T sv[R * P];
  __shared__ T sq[C * P];
  __shared__ T sdo[C * P];
  __shared__ T sp[R * C];
  __shared__ T sds[R * C];
  __shared__ T slse[C];
  __shared__ T srs[C];
  const int tid = threadIdx.x, r = tid / ATT_LANES, lane = tid % ATT_LANES;
  const int D = (int)p.D, Dv = (int)p.Dv;
  const T scale = (T)p.scale, ninf = -T(INFINITY);
  const int64_t tiles = (p.Skv + R - 1) / R, total = p.B * p.Hkv * tiles;
  const int64_t *qs = p.q.strides, *ks = p.k.strides, *vs = p.v.strides, *os = p.o.strides;
  const int64_t shift = p.Skv - p.Sq;
  for (int64_t blk = blockIdx.x; blk < total; blk += gridDim.x) {
    const int64_t tile = blk % tiles, bg = blk / tiles, g = bg % p.Hkv, b = bg / p.Hkv;
    const int64_t j0 = tile * R, rows = att_min(R, p.Skv - j0), j = j0 + r;
    const int64_t kend = att_key_end(p, key_lengths, b);
    const bool key_ok = r < rows && j < kend;
    const S *kb = k + b * ks[0] + g * ks[1], *vb = v + b * vs[0] + g * vs[1];
    __syncthreads(); /* the previous tile's readers of sk, sv are done */
    for (int e = tid; e < R * D; e += blockDim.x) {
      const int jj = e / D, d = e % D;
      sk[jj * P + d] = jj < rows ? widen(kb[(j0 + jj) * ks[2] + d * ks[3]]) : T(0);
    }
    for (int e = tid; e < R * Dv; e += blockDim.x) {
      const int jj = e / Dv, d = e % Dv;
      sv[jj * P + d] = jj < rows ? widen(vb[(j0 + jj) * vs[2] + d * vs[3]]) : T(0);
    }
    T adk[cfg::PER_D], adv[cfg::PER_D];
#pragma unroll
    for (int t = 0; t < cfg::PER_D; t++) adk[t] = adv[t] = T(0);
    /* The first query that sees key j0 (causal: j0 <= i + shift). */
    int64_t istart = p.causal ? j0 - shift : 0;
    if (istart < 0) istart = 0;
    const bool any_key = j0 < kend;
    for (int64_t hh = 0; any_key && hh < p.group; hh++) {
      const int64_t h = g * p.group + hh;
      const S *qb = q + b * qs[0] + h * qs[1], *dob = dout + b * os[0] + h * os[1];
      const T *rsb = rowsum + (b * p.H + h) * p.Sq;
      for (int64_t i0 = istart; i0 < p.Sq; i0 += C) {
        const int cols = (int)att_min(C, p.Sq - i0);
        __syncthreads(); /* readers of the previous query tile are done */
        for (int e = tid; e < C * D; e += blockDim.x) {
          const int ii = e / D, d = e % D;
          sq[ii * P + d] = ii < cols ? widen(qb[(i0 + ii) * qs[2] + d * qs[3]]) : T(0);
        }
        for (int e = tid; e < C * Dv; e += blockDim.x) {
          const int ii = e / Dv, d = e % Dv;
          sdo[ii * P + d] = ii < cols ? widen(dob[(i0 + ii) * os[2] + d * os[3]]) : T(0);
        }
        for (int ii = tid; ii < C; ii += blockDim.x) {
          slse[ii] = ii < cols ? att_lse(p, lse, b, h, i0 + ii) : ninf;
          srs[ii] = ii < cols ? rsb[i0 + ii] : T(0);
        }
        __syncthreads();
#pragma unroll
        for (int t = 0; t < cfg::PER_COL; t++) {
          const int ii = lane + t * ATT_LANES;
          const int64_t i = i0 + ii;
          T pr = T(0), ds = T(0);
          if (key_ok && ii < cols && slse[ii] != ninf && att_visible(p, i, j)) {
            T dot = T(0), dp = T(0);
            for (int d = 0; d < D; d++) dot += sq[ii * P + d] * sk[r * P + d];
            for (int d = 0; d < Dv; d++) dp += sdo[ii * P + d] * sv[r * P + d];
            pr = f_exp(dot * scale + att_bias(p, bias, b, h, i, j) - slse[ii]);
            ds = pr * (dp - srs[ii]);
          }
          sp[r * C + ii] = pr;
          sds[r * C + ii] = ds;
        }
        __syncthreads();
#pragma unroll
        for (int t = 0; t < cfg::PER_D; t++) {
          const int d = lane + t * ATT_LANES;
          T a = adv[t], c = adk[t];
          if (d < Dv)
            for (int ii = 0; ii < cols; ii++) a += att_weighted(sp[r * C + ii], sdo[ii * P + d]);
          if (d < D)
            for (int ii = 0; ii < cols; ii++) c += att_weighted(sds[r * C + ii], sq[ii * P + d]);
          adv[t] = a;
          adk[t] = c;
        }
      }
    }
    if (r < rows) {
      const int64_t *dks = p.k.strides, *dvs = p.v.strides;
      S *dkr = dk + b * dks[0] + g * dks[1] + j * dks[2];
      S *dvr = dv + b * dvs[0] + g * dvs[1] + j * dvs[2];
#pragma unroll
      for (int t = 0; t < cfg::PER_D; t++) {
        const int d = lane + t * ATT_LANES;
        if (d < D) put(&dkr[d * dks[3]], adk[t] * scale);
        if (d < Dv) put(&dvr[d * dvs[3]], adv[t]);
      }
    }
  }
}

template <typename S, int DMAX>
__global__ void attention_dq_rows(adnn_plugin_attention p, const S *q, const S *k, const S *v,
                                  const S *dout, const typename elem<S>::compute *lse,
                                  const S *bias, const int32_t *key_lengths,
                                  const typename elem<S>::compute *rowsum, S *dq) {
  typedef typename elem<S>::compute T;
  typedef att_cfg<T, DMAX> cfg;
  constexpr int R = cfg::R, C = cfg::C, P = cfg::P;
  __shared__ T sq[R * P];
  __shared__ T sdo[R * P];
  __shared__ T sk[C * P];
  __shared__ T sv[C * P];
  __shared__ T sds[R * C];
  const int tid = threadIdx.x, r = tid / ATT_LANES, lane = tid % ATT_LANES;
  const int D = (int)p.D, Dv = (int)p.Dv;
  const T scale = (T)p.scale, ninf = -T(INFINITY);
  const int64_t tiles = (p.Sq + R - 1) / R, total = p.B * p.H * tiles;
  const int64_t *qs = p.q.strides, *ks = p.k.strides, *vs = p.v.strides, *os = p.o.strides;
  for (int64_t blk = blockIdx.x; blk < total; blk += gridDim.x) {
    const int64_t tile = blk % tiles, bh = blk / tiles, h = bh % p.H, b = bh / p.H;
    const int64_t g = h / p.group, i0 = tile * R, rows = att_min(R, p.Sq - i0), i = i0 + r;
    const bool row_ok = r < rows;
    int64_t kend = att_key_end(p, key_lengths, b);
    if (p.causal) kend = att_min(kend, i0 + rows + (p.Skv - p.Sq));
    if (kend < 0) kend = 0;
    const S *qb = q + b * qs[0] + h * qs[1], *dob = dout + b * os[0] + h * os[1];
    const S *kb = k + b * ks[0] + g * ks[1], *vb = v + b * vs[0] + g * vs[1];
    const T lse_i = row_ok ? att_lse(p, lse, b, h, i) : ninf;
    const T rs_i = row_ok ? rowsum[(b * p.H + h) * p.Sq + i] : T(0);
    __syncthreads(); /* the previous tile's readers of sq, sdo are done */
    for (int e = tid; e < R * D; e += blockDim.x) {
      const int ii = e / D, d = e % D;
      sq[ii * P + d] = ii < rows ? widen(qb[(i0 + ii) * qs[2] + d * qs[3]]) : T(0);
    }
    for (int e = tid; e < R * Dv; e += blockDim.x) {
      const int ii = e / Dv, d = e % Dv;
      sdo[ii * P + d] = ii < rows ? widen(dob[(i0 + ii) * os[2] + d * os[3]]) : T(0);
    }
    T acc[cfg::PER_D];
#pragma unroll
    for (int t = 0; t < cfg::PER_D; t++) acc[t] = T(0);
    for (int64_t j0 = 0; j0 < kend; j0 += C) {
      const int cols = (int)att_min(C, kend - j0);
      __syncthreads(); /* readers of the previous key tile are done */
      for (int e = tid; e < C * D; e += blockDim.x) {
        const int jj = e / D, d = e % D;
        sk[jj * P + d] = jj < cols ? widen(kb[(j0 + jj) * ks[2] + d * ks[3]]) : T(0);
      }
      for (int e = tid; e < C * Dv; e += blockDim.x) {
        const int jj = e / Dv, d = e % Dv;
        sv[jj * P + d] = jj < cols ? widen(vb[(j0 + jj) * vs[2] + d * vs[3]]) : T(0);
      }
      __syncthreads();
#pragma unroll
      for (int t = 0; t < cfg::PER_COL; t++) {
        const int jj = lane + t * ATT_LANES;
        const int64_t j = j0 + jj;
        T ds = T(0);
        if (row_ok && jj < cols && lse_i != ninf && att_visible(p, i, j)) {
          T dot = T(0), dp = T(0);
          for (int d = 0; d < D; d++) dot += sq[r * P + d] * sk[jj * P + d];
          for (int d = 0; d < Dv; d++) dp += sdo[r * P + d] * sv[jj * P + d];
          const T pr = f_exp(dot * scale + att_bias(p, bias, b, h, i, j) - lse_i);
          ds = pr * (dp - rs_i);
        }
        sds[r * C + jj] = ds;
      }
      __syncthreads();
#pragma unroll
      for (int t = 0; t < cfg::PER_D; t++) {
        const int d = lane + t * ATT_LANES;
        if (d < D) {
          T a = acc[t];
          for (int jj = 0; jj < cols; jj++) a += att_weighted(sds[r * C + jj], sk[jj * P + d]);
          acc[t] = a;
        }
      }
    }
    if (row_ok) {
      S *dqr = dq + b * qs[0] + h * qs[1] + i * qs[2];
#pragma unroll
      for (int t = 0; t < cfg::PER_D; t++) {
        const int d = lane + t * ATT_LANES;
        if (d < D) put(&dqr[d * qs[3]], acc[t] * scale);
      }
    }
  }
}

/* P and dS of (query row i of head h, key j), recomputed from scratch (the
 * fallback kernels). */
template <typename T>
__device__ __forceinline__ T att_ds(const adnn_plugin_attention &p, const T *q, const T *k,
                                    const T *v, const T *dout, const T *bias, T lse_i, T rs_i,
                                    int64_t b, int64_t h, int64_t g, int64_t i, int64_t j,
                                    T *prob) {
  const int64_t *qs = p.q.strides, *ks = p.k.strides, *vs = p.v.strides, *os = p.o.strides;
  const T *qr = q + b * qs[0] + h * qs[1] + i * qs[2], *kr = k + b * ks[0] + g * ks[1] + j * ks[2];
  const T *vr = v + b * vs[0] + g * vs[1] + j * vs[2];
  const T *dor = dout + b * os[0] + h * os[1] + i * os[2];
  T dot = T(0), dp = T(0);
  for (int64_t d = 0; d < p.D; d++) dot += qr[d * qs[3]] * kr[d * ks[3]];
  for (int64_t d = 0; d < p.Dv; d++) dp += dor[d * os[3]] * vr[d * vs[3]];
  const T pr = f_exp(dot * (T)p.scale + att_bias(p, bias, b, h, i, j) - lse_i);
  *prob = pr;
  return pr * (dp - rs_i);
}

template <typename T>
__global__ void attention_dq_by_row(adnn_plugin_attention p, const T *q, const T *k, const T *v,
                                    const T *dout, const T *lse, const T *bias,
                                    const int32_t *key_lengths, const T *rowsum, T *dq) {
  const int64_t total = p.B * p.H * p.Sq;
  const int64_t *qs = p.q.strides, *ks = p.k.strides;
  for (int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; row < total;
       row += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i = row % p.Sq, bh = row / p.Sq, h = bh % p.H, b = bh / p.H, g = h / p.group;
    T *dqr = dq + b * qs[0] + h * qs[1] + i * qs[2];
    for (int64_t d = 0; d < p.D; d++) dqr[d * qs[3]] = T(0);
    const T lse_i = att_lse(p, lse, b, h, i), rs_i = rowsum[row];
    if (lse_i == -T(INFINITY)) continue;
    int64_t kend = att_key_end(p, key_lengths, b);
    if (p.causal) kend = att_min(kend, i + 1 + (p.Skv - p.Sq));
    for (int64_t j = 0; j < kend; j++) {
      T pr;
      const T ds = att_ds(p, q, k, v, dout, bias, lse_i, rs_i, b, h, g, i, j, &pr) * (T)p.scale;
      const T *kr = k + b * ks[0] + g * ks[1] + j * ks[2];
      for (int64_t d = 0; d < p.D; d++) dqr[d * qs[3]] += att_weighted(ds, kr[d * ks[3]]);
    }
  }
}

template <typename T>
__global__ void attention_dkdv_by_key(adnn_plugin_attention p, const T *q, const T *k, const T *v,
                                      const T *dout, const T *lse, const T *bias,
                                      const int32_t *key_lengths, const T *rowsum, T *dk,
                                      T *dv) {
  const int64_t total = p.B * p.Hkv * p.Skv;
  const int64_t *qs = p.q.strides, *ks = p.k.strides, *vs = p.v.strides, *os = p.o.strides;
  for (int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; row < total;
       row += (int64_t)gridDim.x * blockDim.x) {
    const int64_t j = row % p.Skv, bg = row / p.Skv, g = bg % p.Hkv, b = bg / p.Hkv;
    T *dkr = dk + b * ks[0] + g * ks[1] + j * ks[2], *dvr = dv + b * vs[0] + g * vs[1] + j * vs[2];
    for (int64_t d = 0; d < p.D; d++) dkr[d * ks[3]] = T(0);
    for (int64_t d = 0; d < p.Dv; d++) dvr[d * vs[3]] = T(0);
    if (j >= att_key_end(p, key_lengths, b)) continue;
    int64_t istart = p.causal ? j - (p.Skv - p.Sq) : 0;
    if (istart < 0) istart = 0;
    for (int64_t hh = 0; hh < p.group; hh++) {
      const int64_t h = g * p.group + hh;
      for (int64_t i = istart; i < p.Sq; i++) {
        const T lse_i = att_lse(p, lse, b, h, i);
        if (lse_i == -T(INFINITY)) continue;
        T pr;
        const T ds = att_ds(p, q, k, v, dout, bias, lse_i, rowsum[(b * p.H + h) * p.Sq + i], b,
                            h, g, i, j, &pr) * (T)p.scale;
        const T *qr = q + b * qs[0] + h * qs[1] + i * qs[2];
        const T *dor = dout + b * os[0] + h * os[1] + i * os[2];
        for (int64_t d = 0; d < p.D; d++) dkr[d * ks[3]] += att_weighted(ds, qr[d * qs[3]]);
        for (int64_t d = 0; d < p.Dv; d++) dvr[d * vs[3]] += att_weighted(pr, dor[d * os[3]]);
      }
    }
  }
}

template <typename S, int DMAX>
static void launch_bwd_tiles(const adnn_cuda_launch_config *l, const adnn_plugin_attention *p,
                             const adnn_cuda_attention_layout *s, const void *q, const void *k,
                             const void *v, const void *dout, const void *lse, const void *bias,
                             const int32_t *kl, const void *rs, void *dq, void *dk, void *dv) {
  typedef typename elem<S>::compute T;
  const int threads = att_cfg<T, DMAX>::THREADS;
  if (p->Skv > 0)
    attention_dkdv_rows<S, DMAX><<<s->kv_blocks, threads, 0, l->stream>>>(
        *p, (const S *)q, (const S *)k, (const S *)v, (const S *)dout, (const T *)lse,
        (const S *)bias, kl, (const T *)rs, (S *)dk, (S *)dv);
  if (p->Sq > 0)
    attention_dq_rows<S, DMAX><<<s->blocks, threads, 0, l->stream>>>(
        *p, (const S *)q, (const S *)k, (const S *)v, (const S *)dout, (const T *)lse,
        (const S *)bias, kl, (const T *)rs, (S *)dq);
}

/* The row-per-thread fallbacks: F32 and F64 (a 16-bit problem that would
 * need them is refused at plan creation, attention.cuh). */
template <typename S>
static void launch_bwd_by_row(const adnn_cuda_launch_config *l, const adnn_plugin_attention *p,
                              const adnn_cuda_attention_layout *s, const void *q, const void *k,
                              const void *v, const void *dout, const void *lse, const void *bias,
                              const int32_t *kl, const void *rs, void *dq, void *dk, void *dv) {
  typedef S T;
  const int row_threads = ATT_ROW_THREADS;
  if (p->Skv > 0)
    attention_dkdv_by_key<T><<<s->key_row_blocks, row_threads, 0, l->stream>>>(
        *p, (const T *)q, (const T *)k, (const T *)v, (const T *)dout, (const T *)lse,
        (const T *)bias, kl, (const T *)rs, (T *)dk, (T *)dv);
  if (p->Sq > 0)
    attention_dq_by_row<T><<<s->row_blocks, row_threads, 0, l->stream>>>(
        *p, (const T *)q, (const T *)k, (const T *)v, (const T *)dout, (const T *)lse,
        (const T *)bias, kl, (const T *)rs, (T *)dq);
}
template <>
void launch_bwd_by_row<lowp_f16>(const adnn_cuda_launch_config *, const adnn_plugin_attention *,
                                 const adnn_cuda_attention_layout *, const void *, const void *,
                                 const void *, const void *, const void *, const void *,
                                 const int32_t *, const void *, void *, void *, void *) {}
template <>
void launch_bwd_by_row<lowp_bf16>(const adnn_cuda_launch_config *, const adnn_plugin_attention *,
                                  const adnn_cuda_attention_layout *, const void *, const void *,
                                  const void *, const void *, const void *, const void *,
                                  const int32_t *, const void *, void *, void *, void *) {}

template <typename S>
static cudaError_t launch_bwd(const adnn_cuda_launch_config *l, const adnn_plugin_attention *p,
                              const adnn_cuda_attention_layout *s, const void *q, const void *k,
                              const void *v, const void *o, const void *dout, const void *lse,
                              const void *bias, const int32_t *kl, void *dq, void *dk, void *dv,
                              void *rs) {
  if (p->B * p->H == 0) return cudaSuccess;
  const int row_threads = ATT_ROW_THREADS;
  if (p->Sq > 0) {
    attention_bwd_rowsum<S><<<s->row_blocks, row_threads, 0, l->stream>>>(
        *p, (const S *)o, (const S *)dout, (typename elem<S>::compute *)rs);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return err;
  }
  switch (s->dmax) {
    case 64: launch_bwd_tiles<S, 64>(l, p, s, q, k, v, dout, lse, bias, kl, rs, dq, dk, dv); break;
    case 128:
      launch_bwd_tiles<S, 128>(l, p, s, q, k, v, dout, lse, bias, kl, rs, dq, dk, dv);
      break;
    case 256:
      if (sizeof(typename elem<S>::compute) == 4)
        launch_bwd_tiles<typename att_256<S>::type, 256>(l, p, s, q, k, v, dout, lse, bias, kl, rs,
                                                         dq, dk, dv);
      break;
    default: launch_bwd_by_row<S>(l, p, s, q, k, v, dout, lse, bias, kl, rs, dq, dk, dv);
  }
  return cudaGetLastError();
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_attention_backward_launch(
    const adnn_cuda_launch_config *l, adnn_dtype dtype, const adnn_plugin_attention *p,
    const adnn_cuda_attention_layout *s, const void *q, const void *k, const void *v,
    const void *o, const void *dout, const void *lse, const void *bias,
    const int32_t *key_lengths, void *dq, void *dk, void *dv, void *rowsum) {
  switch (dtype) {
  case ADNN_DTYPE_F64:
    return launch_bwd<double>(l, p, s, q, k, v, o, dout, lse, bias, key_lengths, dq, dk, dv,
                              rowsum);
  case ADNN_DTYPE_F16:
    return launch_bwd<lowp_f16>(l, p, s, q, k, v, o, dout, lse, bias, key_lengths, dq, dk, dv,
                                rowsum);
  case ADNN_DTYPE_BF16:
    return launch_bwd<lowp_bf16>(l, p, s, q, k, v, o, dout, lse, bias, key_lengths, dq, dk, dv,
                                 rowsum);
  default:
    return launch_bwd<float>(l, p, s, q, k, v, o, dout, lse, bias, key_lengths, dq, dk, dv,
                             rowsum);
  }
}
