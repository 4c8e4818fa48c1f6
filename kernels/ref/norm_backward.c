/* Reference layer-norm and RMS-norm backward over the last norm_dims dims,
 * any strides. Per row (D elements), with the statistics recomputed from x
 * as the forward pass computes them (two passes in double):
 *   layer: xhat = (x - mean) * inv, inv = 1 / sqrt(var_b + eps);
 *   rms:   xhat = x * inv,          inv = 1 / sqrt(mean(x^2) + eps);
 *   g = dy * gain (dy without a gain);
 *   layer: dx = inv * (g - mean(g) - xhat * mean(g * xhat));
 *   rms:   dx = inv * (g - xhat * mean(g * xhat));
 * and over the rows, dgain[j] = sum dy * xhat, dbias[j] = sum dy (summed in
 * row order). */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref.h"

/* The mean (0 for RMS) and 1 / sqrt(var + eps) of row `row`. */
static void row_stats(const adnn_plugin_norm *p, const void *x, int64_t row, double *mean,
                      double *inv) {
  const adnn_tensor_desc *xd = &p->x;
  const adnn_dtype t = xd->dtype;
  const int64_t D = p->D, base = row * D;
  double mu = 0.0, var = 0.0;
  if (p->kind == ADNN_NORM_LAYER) {
    for (int64_t j = 0; j < D; j++) mu += adnn_ref_load(x, t, adnn_ref_offset(xd, base + j));
    mu /= (double)D;
  }
  for (int64_t j = 0; j < D; j++) {
    const double e = adnn_ref_load(x, t, adnn_ref_offset(xd, base + j)) - mu;
    var += e * e;
  }
  var /= (double)D;
  *mean = mu;
  *inv = 1.0 / sqrt(var + p->epsilon);
}

/* Inputs {x, dy[, gain]}; outputs {dx[, dgain][, dbias]}. */
void adnn_ref_norm_backward(const adnn_plugin_norm_backward *pb, const void *const *inputs,
                            void *const *outputs) {
  const adnn_plugin_norm *p = &pb->fwd;
  const adnn_tensor_desc *xd = &p->x, *dyd = &p->y;
  const void *x = inputs[0], *dy = inputs[1];
  const void *gain = p->has_gain ? inputs[2] : NULL;
  void *dx = outputs[0];
  void *dgain = p->has_gain ? outputs[1] : NULL;
  void *dbias = p->has_bias ? outputs[1 + p->has_gain] : NULL;
  /* x, dy and dx in t; the gain and its gradients in vt (F32 for F16/BF16 x). */
  const adnn_dtype t = xd->dtype, vt = ADNN_OP_PARAM_DTYPE(t);
  const int64_t D = p->D;
  const int layer = p->kind == ADNN_NORM_LAYER;
  for (int64_t row = 0; row < p->rows; row++) {
    const int64_t base = row * D;
    double mean, inv;
    row_stats(p, x, row, &mean, &inv);
    double sg = 0.0, sgx = 0.0;
    for (int64_t j = 0; j < D; j++) {
      double g = adnn_ref_load(dy, t, adnn_ref_offset(dyd, base + j));
      if (gain) g *= adnn_ref_load(gain, vt, j);
      const double xhat = (adnn_ref_load(x, t, adnn_ref_offset(xd, base + j)) - mean) * inv;
      sg += g;
      sgx += g * xhat;
    }
    const double mg = layer ? sg / (double)D : 0.0, mgx = sgx / (double)D;
    for (int64_t j = 0; j < D; j++) {
      double g = adnn_ref_load(dy, t, adnn_ref_offset(dyd, base + j));
      if (gain) g *= adnn_ref_load(gain, vt, j);
      const double xhat = (adnn_ref_load(x, t, adnn_ref_offset(xd, base + j)) - mean) * inv;
      adnn_ref_store(dx, t, adnn_ref_offset(xd, base + j), inv * (g - mg - xhat * mgx));
    }
  }
  if (!dgain && !dbias) return;
  /* Column sums in row order, one column at a time, so that nothing is
   * allocated; each row's statistics are recomputed per column (slow but
   * plain: this is the reference). Columns are done in blocks to share that
   * work. */
  enum { BLOCK = 64 };
  for (int64_t j0 = 0; j0 < D; j0 += BLOCK) {
    const int64_t nj = D - j0 < BLOCK ? D - j0 : BLOCK;
    double sg[BLOCK], sb[BLOCK];
    for (int64_t j = 0; j < nj; j++) sg[j] = sb[j] = 0.0;
    for (int64_t row = 0; row < p->rows; row++) {
      const int64_t base = row * D;
      double mean, inv;
      row_stats(p, x, row, &mean, &inv);
      for (int64_t j = 0; j < nj; j++) {
        const double g = adnn_ref_load(dy, t, adnn_ref_offset(dyd, base + j0 + j));
        const double xhat = (adnn_ref_load(x, t, adnn_ref_offset(xd, base + j0 + j)) - mean) * inv;
        sg[j] += g * xhat;
        sb[j] += g;
      }
    }
    for (int64_t j = 0; j < nj; j++) {
      if (dgain) adnn_ref_store(dgain, vt, j0 + j, sg[j]);
      if (dbias) adnn_ref_store(dbias, vt, j0 + j, sb[j]);
    }
  }
}
