/*
 * Reference scaled-dot-product attention (forward), any strides, F32 and
 * F64, accumulating in double.
 *
 * The definition (doc/ops.md, "Attention"): for batch b, query head h (key
 * and value head g = h / group) and query i,
 *   s_j = scale * sum_d q[b,h,i,d] k[b,g,j,d] + bias[b,h,i,j]
 * over the keys j the masks leave: j < key_lengths[b] (clamped to 0..Skv)
 * and, when causal, j <= i + Skv - Sq (aligned to the bottom right). Then
 *   o[b,h,i,:] = sum_j exp(s_j - lse) v[b,g,j,:],  lse = log sum_j exp(s_j).
 * A row with no key left, or whose scores are all -inf (a bias of -inf
 * masks), gives o = 0 and lse = -inf.
 *
 * Every row's allowed set is a prefix 0..limit-1 of the keys (both masks are
 * upper bounds on j), so one limit per row describes the masks.
 *
 * The kernel allocates nothing: the scores are recomputed in each pass (the
 * maximum, then the sum and the weighted values), and the weighted sum of v
 * is accumulated in double in a stack buffer, ATT_REF_CHUNK columns of Dv at
 * a time.
 */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref.h"

#define ATT_REF_CHUNK 128

/* The number of keys row i of batch b may see (0..Skv). */
static int64_t key_limit(const adnn_plugin_attention *p, const void *key_lengths, int64_t b,
                         int64_t i) {
  int64_t lim = p->Skv;
  if (p->has_key_lengths) {
    const int64_t kl = ((const int32_t *)key_lengths)[b * p->key_lengths.strides[0]];
    if (kl < lim) lim = kl < 0 ? 0 : kl;
  }
  if (p->causal) {
    const int64_t c = i + p->Skv - p->Sq + 1; /* keys 0..i + Skv - Sq */
    if (c < lim) lim = c < 0 ? 0 : c;
  }
  return lim;
}

/* s_j for row (b, h, i) and key j. */
static double score(const adnn_plugin_attention *p, const void *const *inputs, int64_t b,
                    int64_t h, int64_t i, int64_t j) {
  const adnn_tensor_desc *qd = &p->q, *kd = &p->k, *bd = &p->bias;
  const int64_t g = h / p->group;
  const int64_t qo = b * qd->strides[0] + h * qd->strides[1] + i * qd->strides[2];
  const int64_t ko = b * kd->strides[0] + g * kd->strides[1] + j * kd->strides[2];
  double dot = 0.0;
  for (int64_t d = 0; d < p->D; d++)
    dot += adnn_ref_load(inputs[0], qd->dtype, qo + d * qd->strides[3]) *
           adnn_ref_load(inputs[1], kd->dtype, ko + d * kd->strides[3]);
  double s = p->scale * dot;
  if (p->has_bias)
    s += adnn_ref_load(inputs[3], bd->dtype,
                       b * bd->strides[0] + h * bd->strides[1] + i * bd->strides[2] +
                           j * bd->strides[3]);
  return s;
}

/* Inputs {q, k, v[, bias][, key_lengths]}, outputs {o[, lse]}. */
void adnn_ref_attention(const adnn_plugin_attention *p, const void *const *inputs,
                        void *const *outputs) {
  const adnn_tensor_desc *vd = &p->v, *od = &p->o, *ld = &p->lse;
  const void *key_lengths = p->has_key_lengths ? inputs[p->has_bias ? 4 : 3] : NULL;
  double acc[ATT_REF_CHUNK];
  for (int64_t b = 0; b < p->B; b++)
    for (int64_t h = 0; h < p->H; h++) {
      const int64_t g = h / p->group;
      for (int64_t i = 0; i < p->Sq; i++) {
        const int64_t lim = key_limit(p, key_lengths, b, i);
        double m = -INFINITY;
        for (int64_t j = 0; j < lim; j++) {
          const double s = score(p, inputs, b, h, i, j);
          if (s > m || isnan(s)) m = s;
          if (isnan(m)) break;
        }
        const int64_t oo = b * od->strides[0] + h * od->strides[1] + i * od->strides[2];
        double sum = 0.0;
        const int empty = m == -INFINITY;
        for (int64_t c0 = 0; c0 < p->Dv; c0 += ATT_REF_CHUNK) {
          const int64_t n = p->Dv - c0 < ATT_REF_CHUNK ? p->Dv - c0 : ATT_REF_CHUNK;
          for (int64_t c = 0; c < n; c++) acc[c] = 0.0;
          double chunk_sum = 0.0;
          if (!empty)
            for (int64_t j = 0; j < lim; j++) {
              const double e = exp(score(p, inputs, b, h, i, j) - m);
              chunk_sum += e;
              const int64_t vo = b * vd->strides[0] + g * vd->strides[1] + j * vd->strides[2];
              for (int64_t c = 0; c < n; c++)
                acc[c] += e * adnn_ref_load(inputs[2], vd->dtype, vo + (c0 + c) * vd->strides[3]);
            }
          sum = chunk_sum;
          for (int64_t c = 0; c < n; c++)
            adnn_ref_store(outputs[0], od->dtype, oo + (c0 + c) * od->strides[3],
                           empty ? 0.0 : acc[c] / sum);
        }
        if (p->has_lse)
          adnn_ref_store(outputs[1], ld->dtype,
                         b * ld->strides[0] + h * ld->strides[1] + i * ld->strides[2],
                         empty ? -INFINITY : m + log(sum));
      }
    }
}
