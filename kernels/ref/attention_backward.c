/*
 * Reference attention backward, any strides, F32 and F64, accumulating in
 * double (doc/ops.md, "Attention backward"). With the forward's scores
 *   s[i,j] = scale * q_i . k_j + bias[b,h,i,j]   (-inf where masked),
 * the probabilities are recomputed from the saved log-sum-exp,
 *   P[i,j] = exp(s[i,j] - lse_i)   (0 where masked, and for a whole row
 *                                   whose lse is -inf: it was fully masked),
 * and with D_i = sum_d do[i,d] * o[i,d]:
 *   dV_j  = sum_i P[i,j] do_i,
 *   dP[i,j] = do_i . v_j,
 *   dS[i,j] = P[i,j] * (dP[i,j] - D_i),
 *   dQ_i  = scale * sum_j dS[i,j] k_j,
 *   dK_j  = scale * sum_i dS[i,j] q_i,
 * where dK and dV also sum over the query heads h of key/value head g's
 * group (g = h / group). The bias is a constant (it gets no gradient).
 *
 * Like every reference kernel this one allocates nothing, so P and dS are
 * recomputed per pair (i, j) instead of being kept: each gradient row is
 * accumulated in a block of at most BLOCK doubles on the stack, and a row
 * longer than that (D or Dv > BLOCK) is done in several passes over the pairs.
 * It is slow (O(Sq * Skv * (D + Dv)) per pass) and plain on purpose.
 */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref.h"

enum { BLOCK = 64 };

/* The element offset of [i0, i1, i2, i3] in a rank-4 tensor, and of
 * [i0, i1, i2] in a rank-3 one (lse). */
static int64_t off4(const adnn_tensor_desc *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  return i0 * t->strides[0] + i1 * t->strides[1] + i2 * t->strides[2] + i3 * t->strides[3];
}
static int64_t off3(const adnn_tensor_desc *t, int64_t i0, int64_t i1, int64_t i2) {
  return i0 * t->strides[0] + i1 * t->strides[1] + i2 * t->strides[2];
}

/* The number of keys batch b attends to at most: key_lengths[b] clamped to
 * 0..Skv, or Skv without key lengths. */
static int64_t key_limit(const adnn_plugin_attention *p, const void *key_lengths, int64_t b) {
  if (!p->has_key_lengths) return p->Skv;
  const int64_t n = ((const int32_t *)key_lengths)[b * p->key_lengths.strides[0]];
  return n < 0 ? 0 : n > p->Skv ? p->Skv : n;
}

/* Whether query i may see key j (the causal mask aligned to the bottom
 * right, then the key length). */
static int visible(const adnn_plugin_attention *p, int64_t limit, int64_t i, int64_t j) {
  if (j >= limit) return 0;
  return !p->causal || j <= i + p->Skv - p->Sq;
}

/* The tensors of one execution. */
typedef struct ab_args {
  const adnn_plugin_attention *p;
  const void *q, *k, *v, *o, *dout, *lse, *bias, *key_lengths;
  adnn_dtype t;
} ab_args;

/* D_i = sum_d do[b,h,i,d] * o[b,h,i,d]. */
static double row_delta(const ab_args *a, int64_t b, int64_t h, int64_t i) {
  const adnn_plugin_attention *p = a->p;
  double s = 0.0;
  for (int64_t d = 0; d < p->Dv; d++)
    s += adnn_ref_load(a->dout, a->t, off4(&p->o, b, h, i, d)) *
         adnn_ref_load(a->o, a->t, off4(&p->o, b, h, i, d));
  return s;
}

/* P[i,j] and dS[i,j] (without the scale) of query head h's row i and key j
 * of batch b; both 0 when the pair is masked or the row was fully masked.
 * delta is the row's D_i and limit batch b's key limit. */
static void pair(const ab_args *a, int64_t b, int64_t h, int64_t i, int64_t j, double delta,
                 int64_t limit, double *prob, double *ds) {
  const adnn_plugin_attention *p = a->p;
  const int64_t g = h / p->group;
  *prob = *ds = 0.0;
  const double lse = adnn_ref_load(a->lse, p->lse.dtype, off3(&p->lse, b, h, i));
  if (lse == -INFINITY || !visible(p, limit, i, j)) return;
  double s = 0.0;
  for (int64_t d = 0; d < p->D; d++)
    s += adnn_ref_load(a->q, a->t, off4(&p->q, b, h, i, d)) *
         adnn_ref_load(a->k, a->t, off4(&p->k, b, g, j, d));
  s *= p->scale;
  if (p->has_bias) s += adnn_ref_load(a->bias, a->t, off4(&p->bias, b, h, i, j));
  const double pr = exp(s - lse);
  if (pr == 0.0) return; /* also a bias of -inf: exp(-inf) = 0 */
  double dp = 0.0;
  for (int64_t d = 0; d < p->Dv; d++)
    dp += adnn_ref_load(a->dout, a->t, off4(&p->o, b, h, i, d)) *
          adnn_ref_load(a->v, a->t, off4(&p->v, b, g, j, d));
  *prob = pr;
  *ds = pr * (dp - delta);
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* dq[b,h,i,:] = scale * sum_j dS[i,j] k_j, in blocks of BLOCK columns. */
static void ref_dq(const ab_args *a, void *dq, int64_t b, int64_t h, int64_t i) {
  const adnn_plugin_attention *p = a->p;
  const int64_t g = h / p->group, limit = key_limit(p, a->key_lengths, b);
  const double delta = row_delta(a, b, h, i);
  for (int64_t d0 = 0; d0 < p->D; d0 += BLOCK) {
    const int64_t nd = min64(BLOCK, p->D - d0);
    double acc[BLOCK] = {0};
    for (int64_t j = 0; j < p->Skv; j++) {
      double pr, ds;
      pair(a, b, h, i, j, delta, limit, &pr, &ds);
      if (ds == 0.0) continue;
      for (int64_t d = 0; d < nd; d++)
        acc[d] += ds * adnn_ref_load(a->k, a->t, off4(&p->k, b, g, j, d0 + d));
    }
    for (int64_t d = 0; d < nd; d++)
      adnn_ref_store(dq, a->t, off4(&p->q, b, h, i, d0 + d), p->scale * acc[d]);
  }
}

/* dk[b,g,j,:] and dv[b,g,j,:], summed over the group's heads and every query
 * row, in blocks of BLOCK columns of each. */
static void ref_dkv(const ab_args *a, void *dk, void *dv, int64_t b, int64_t g, int64_t j) {
  const adnn_plugin_attention *p = a->p;
  const int64_t limit = key_limit(p, a->key_lengths, b);
  const int64_t width = p->D > p->Dv ? p->D : p->Dv;
  for (int64_t d0 = 0; d0 < width; d0 += BLOCK) {
    const int64_t nk = d0 < p->D ? min64(BLOCK, p->D - d0) : 0;
    const int64_t nv = d0 < p->Dv ? min64(BLOCK, p->Dv - d0) : 0;
    double acck[BLOCK] = {0}, accv[BLOCK] = {0};
    for (int64_t h = g * p->group; h < (g + 1) * p->group; h++) {
      for (int64_t i = 0; i < p->Sq; i++) {
        if (!visible(p, limit, i, j)) continue;
        double pr, ds;
        pair(a, b, h, i, j, row_delta(a, b, h, i), limit, &pr, &ds);
        if (pr == 0.0) continue;
        for (int64_t d = 0; d < nk; d++)
          acck[d] += ds * adnn_ref_load(a->q, a->t, off4(&p->q, b, h, i, d0 + d));
        for (int64_t d = 0; d < nv; d++)
          accv[d] += pr * adnn_ref_load(a->dout, a->t, off4(&p->o, b, h, i, d0 + d));
      }
    }
    for (int64_t d = 0; d < nk; d++)
      adnn_ref_store(dk, a->t, off4(&p->k, b, g, j, d0 + d), p->scale * acck[d]);
    for (int64_t d = 0; d < nv; d++)
      adnn_ref_store(dv, a->t, off4(&p->v, b, g, j, d0 + d), accv[d]);
  }
}

/* Inputs {q, k, v, o, do, lse[, bias][, key_lengths]}; outputs {dq, dk, dv}
 * (q's, k's and v's layouts; do has o's). */
void adnn_ref_attention_backward(const adnn_plugin_attention_backward *pb,
                                 const void *const *inputs, void *const *outputs) {
  const adnn_plugin_attention *p = &pb->fwd;
  ab_args a = {p,         inputs[0], inputs[1], inputs[2], inputs[3], inputs[4], inputs[5],
               NULL,      NULL,      p->q.dtype};
  int n = 6;
  if (p->has_bias) a.bias = inputs[n++];
  if (p->has_key_lengths) a.key_lengths = inputs[n++];
  for (int64_t b = 0; b < p->B; b++) {
    for (int64_t h = 0; h < p->H; h++)
      for (int64_t i = 0; i < p->Sq; i++) ref_dq(&a, outputs[0], b, h, i);
    for (int64_t g = 0; g < p->Hkv; g++)
      for (int64_t j = 0; j < p->Skv; j++) ref_dkv(&a, outputs[1], outputs[2], b, g, j);
  }
}
