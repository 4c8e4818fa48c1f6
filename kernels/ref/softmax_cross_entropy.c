/*
 * Reference softmax cross-entropy (forward and backward), any strides.
 *
 * The definition (doc/ops.md, "Softmax cross-entropy"): for sample n with
 * label t, loss_n = logsumexp(x[n, :]) - x[n, t]. A sample whose label is
 * ignore_index has loss 0 and a zero gradient row and is not counted by
 * MEAN; a label outside 0..C-1 that is not ignore_index gives NaN (loss and
 * gradient row). A row holding NaN or +inf, or only -inf, has no finite
 * logsumexp and gives NaN, as softmax does.
 */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref.h"

/* The label of sample n (labels is I32 at any stride). */
static int64_t label_of(const adnn_plugin_softmax_cross_entropy *p, const void *labels,
                        int64_t n) {
  return ((const int32_t *)labels)[n * p->labels.strides[0]];
}

/* logsumexp of row n, max-subtracted; NaN for a row with NaN or +inf or only
 * -inf. Also returns the row's maximum in *max_out. */
static double row_logsumexp(const adnn_plugin_softmax_cross_entropy *p, const void *x, int64_t n,
                            double *max_out) {
  const adnn_tensor_desc *xd = &p->logits;
  const int64_t base = n * xd->strides[0], cs = xd->strides[1];
  double m = -INFINITY;
  for (int64_t c = 0; c < p->C; c++) {
    const double v = adnn_ref_load(x, xd->dtype, base + c * cs);
    if (isnan(v) || v == INFINITY) return *max_out = NAN;
    if (v > m) m = v;
  }
  *max_out = m;
  if (m == -INFINITY) return NAN;
  double sum = 0.0;
  for (int64_t c = 0; c < p->C; c++) sum += exp(adnn_ref_load(x, xd->dtype, base + c * cs) - m);
  return m + log(sum);
}

/* The samples MEAN divides by: those whose label is not ignore_index. */
static int64_t counted(const adnn_plugin_softmax_cross_entropy *p, const void *labels) {
  int64_t k = 0;
  for (int64_t n = 0; n < p->N; n++) k += label_of(p, labels, n) != p->ignore_index;
  return k;
}

/* Inputs {logits, labels}, outputs {loss}. */
void adnn_ref_softmax_cross_entropy(const adnn_plugin_softmax_cross_entropy *p,
                                    const void *const *inputs, void *const *outputs) {
  const adnn_tensor_desc *xd = &p->logits, *ld = &p->loss;
  const void *x = inputs[0], *labels = inputs[1];
  void *loss = outputs[0];
  double total = 0.0;
  for (int64_t n = 0; n < p->N; n++) {
    const int64_t t = label_of(p, labels, n);
    double v;
    if (t == p->ignore_index) {
      v = 0.0;
    } else if (t < 0 || t >= p->C) {
      v = NAN;
    } else {
      double m;
      v = row_logsumexp(p, x, n, &m) - adnn_ref_load(x, xd->dtype, n * xd->strides[0] +
                                                                    t * xd->strides[1]);
    }
    if (p->reduction == ADNN_LOSS_REDUCTION_NONE)
      adnn_ref_store(loss, ld->dtype, n * ld->strides[0], v);
    else
      total += v;
  }
  if (p->reduction == ADNN_LOSS_REDUCTION_MEAN) total /= (double)counted(p, labels);
  if (p->reduction != ADNN_LOSS_REDUCTION_NONE) adnn_ref_store(loss, ld->dtype, 0, total);
}

/* Inputs {logits, labels, dloss}, outputs {dlogits}:
 * dlogits[n, c] = g_n * (softmax(x[n])_c - [c == t_n]) with g_n = dloss[n]
 * (NONE), dloss (SUM) or dloss / count (MEAN); zero rows for ignored samples. */
void adnn_ref_softmax_cross_entropy_backward(const adnn_plugin_softmax_cross_entropy_backward *b,
                                             const void *const *inputs, void *const *outputs) {
  const adnn_plugin_softmax_cross_entropy *p = &b->fwd;
  const adnn_tensor_desc *xd = &p->logits, *ld = &p->loss;
  const void *x = inputs[0], *labels = inputs[1], *dloss = inputs[2];
  void *dx = outputs[0];
  const adnn_tensor_desc *dd = &p->logits; /* dlogits has the logits' layout */
  double scale = 1.0;
  if (p->reduction != ADNN_LOSS_REDUCTION_NONE) scale = adnn_ref_load(dloss, ld->dtype, 0);
  if (p->reduction == ADNN_LOSS_REDUCTION_MEAN) scale /= (double)counted(p, labels);
  for (int64_t n = 0; n < p->N; n++) {
    const int64_t t = label_of(p, labels, n), base = n * dd->strides[0], cs = dd->strides[1];
    if (t == p->ignore_index) {
      for (int64_t c = 0; c < p->C; c++) adnn_ref_store(dx, dd->dtype, base + c * cs, 0.0);
      continue;
    }
    const double g = p->reduction == ADNN_LOSS_REDUCTION_NONE
                         ? adnn_ref_load(dloss, ld->dtype, n * ld->strides[0])
                         : scale;
    double m;
    const double lse = t < 0 || t >= p->C ? NAN : row_logsumexp(p, x, n, &m);
    /* Each logit is read before the gradient at the same place is written. */
    for (int64_t c = 0; c < p->C; c++) {
      const double v = adnn_ref_load(x, xd->dtype, n * xd->strides[0] + c * xd->strides[1]);
      const double s = exp(v - lse);
      adnn_ref_store(dx, dd->dtype, base + c * cs, g * (s - (c == t ? 1.0 : 0.0)));
    }
  }
}
