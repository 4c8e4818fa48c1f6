/* Reference batch normalization in training mode (any rank >= 2 and
 * strides): per-channel statistics over N and every spatial
 * position, two passes in double (the mean, then the squared deviations from
 * it), summed in the row-major order of the elements. */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref.h"

/* The channel of row-major element `i` of x ([N, C, ...]). */
static int64_t channel_of(const adnn_plugin_batchnorm *p, int64_t i, int64_t inner) {
  return (i / inner) % p->C;
}

static int64_t inner_of(const adnn_tensor_desc *x) {
  int64_t inner = 1; /* elements per channel step in the row-major linear index */
  for (int i = 2; i < x->rank; i++) inner *= x->dims[i];
  return inner;
}

/* Inputs {x, scale, shift}; outputs {y, saved_mean, saved_inv_std,
 * running_mean, running_var}, the last two read and updated. The statistics
 * are computed channel by channel into a small stack block, so nothing is
 * allocated. */
void adnn_ref_batchnorm_training(const adnn_plugin_batchnorm_training *pt,
                                 const void *const *inputs, void *const *outputs) {
  const adnn_plugin_batchnorm *p = &pt->fwd;
  const adnn_tensor_desc *xd = &p->x, *yd = &p->y;
  const void *x = inputs[0], *scale = inputs[1], *shift = inputs[2];
  void *y = outputs[0], *saved_mean = outputs[1], *saved_inv = outputs[2];
  void *run_mean = outputs[3], *run_var = outputs[4];
  /* x in t; the parameter vectors and statistics in vt (F32 for F16/BF16 x). */
  const adnn_dtype t = xd->dtype, vt = ADNN_OP_PARAM_DTYPE(t);
  const int64_t n = adnn_ref_count(xd), inner = inner_of(xd), count = pt->count;
  const double m = pt->momentum;
  enum { BLOCK = 64 };
  /* Channels in blocks of BLOCK: a sub-problem over channels [c0, c0 + nc)
   * has the same element order as the whole, restricted to those channels. */
  for (int64_t c0 = 0; c0 < p->C; c0 += BLOCK) {
    const int64_t nc = p->C - c0 < BLOCK ? p->C - c0 : BLOCK;
    double mean[BLOCK], var[BLOCK], inv[BLOCK];
    for (int64_t c = 0; c < nc; c++) mean[c] = var[c] = 0.0;
    for (int64_t i = 0; i < n; i++) {
      const int64_t c = channel_of(p, i, inner) - c0;
      if (c >= 0 && c < nc) mean[c] += adnn_ref_load(x, t, adnn_ref_offset(xd, i));
    }
    for (int64_t c = 0; c < nc; c++) mean[c] /= (double)count;
    for (int64_t i = 0; i < n; i++) {
      const int64_t c = channel_of(p, i, inner) - c0;
      if (c < 0 || c >= nc) continue;
      const double e = adnn_ref_load(x, t, adnn_ref_offset(xd, i)) - mean[c];
      var[c] += e * e;
    }
    for (int64_t c = 0; c < nc; c++) {
      var[c] /= (double)count; /* biased: divide by n */
      inv[c] = 1.0 / sqrt(var[c] + p->epsilon);
      const int64_t ch = c0 + c;
      adnn_ref_store(saved_mean, vt, ch, mean[c]);
      adnn_ref_store(saved_inv, vt, ch, inv[c]);
      /* Momentum 0 leaves the running statistics untouched (not even
       * rewritten), so a NaN batch cannot leak into them. */
      if (m != 0.0) {
        const double unbiased = var[c] * (double)count / (double)(count - 1);
        adnn_ref_store(run_mean, vt, ch, (1.0 - m) * adnn_ref_load(run_mean, vt, ch) + m * mean[c]);
        adnn_ref_store(run_var, vt, ch, (1.0 - m) * adnn_ref_load(run_var, vt, ch) + m * unbiased);
      }
    }
    /* y last: in place (y == x) every x is read before y overwrites it. */
    for (int64_t i = 0; i < n; i++) {
      const int64_t c = channel_of(p, i, inner) - c0;
      if (c < 0 || c >= nc) continue;
      const double v = adnn_ref_load(x, t, adnn_ref_offset(xd, i));
      adnn_ref_store(y, yd->dtype, adnn_ref_offset(yd, i),
                     adnn_ref_load(scale, vt, c0 + c) * ((v - mean[c]) * inv[c]) +
                         adnn_ref_load(shift, vt, c0 + c));
    }
  }
}
