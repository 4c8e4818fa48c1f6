/* Reference batch-norm backward (any rank >= 2 and strides), from the saved
 * statistics of the training forward pass:
 *   xhat = (x - mean[c]) * inv_std[c],
 *   dshift[c] = sum dy, dscale[c] = sum dy * xhat (over N and space),
 *   dx = scale[c] * inv_std[c] / n * (n * dy - dshift[c] - xhat * dscale[c]).
 * Sums in double, in the row-major order of the elements. */
#include "config.h"

#include "kernels/ref/ref.h"

/* Inputs {x, dy, scale, saved_mean, saved_inv_std}; outputs {dx, dscale,
 * dshift}. dy has fwd.y's layout, dx fwd.x's. */
void adnn_ref_batchnorm_backward(const adnn_plugin_batchnorm_backward *pb,
                                 const void *const *inputs, void *const *outputs) {
  const adnn_plugin_batchnorm *p = &pb->fwd;
  const adnn_tensor_desc *xd = &p->x, *dyd = &p->y;
  const void *x = inputs[0], *dy = inputs[1], *scale = inputs[2], *mean = inputs[3];
  const void *inv = inputs[4];
  void *dx = outputs[0], *dscale = outputs[1], *dshift = outputs[2];
  /* x and dy in t; the parameter vectors in vt (F32 for F16/BF16 x). */
  const adnn_dtype t = xd->dtype, vt = ADNN_OP_PARAM_DTYPE(t);
  const int64_t n = adnn_ref_count(xd), count = pb->count;
  int64_t inner = 1;
  for (int i = 2; i < xd->rank; i++) inner *= xd->dims[i];
  enum { BLOCK = 64 };
  for (int64_t c0 = 0; c0 < p->C; c0 += BLOCK) {
    const int64_t nc = p->C - c0 < BLOCK ? p->C - c0 : BLOCK;
    double sdy[BLOCK], sdyx[BLOCK], mu[BLOCK], is[BLOCK];
    for (int64_t c = 0; c < nc; c++) {
      sdy[c] = sdyx[c] = 0.0;
      mu[c] = adnn_ref_load(mean, vt, c0 + c);
      is[c] = adnn_ref_load(inv, vt, c0 + c);
    }
    for (int64_t i = 0; i < n; i++) {
      const int64_t c = (i / inner) % p->C - c0;
      if (c < 0 || c >= nc) continue;
      const double g = adnn_ref_load(dy, t, adnn_ref_offset(dyd, i));
      const double xhat = (adnn_ref_load(x, t, adnn_ref_offset(xd, i)) - mu[c]) * is[c];
      sdy[c] += g;
      sdyx[c] += g * xhat;
    }
    for (int64_t c = 0; c < nc; c++) {
      adnn_ref_store(dscale, vt, c0 + c, sdyx[c]);
      adnn_ref_store(dshift, vt, c0 + c, sdy[c]);
    }
    for (int64_t i = 0; i < n; i++) {
      const int64_t c = (i / inner) % p->C - c0;
      if (c < 0 || c >= nc) continue;
      const double g = adnn_ref_load(dy, t, adnn_ref_offset(dyd, i));
      const double xhat = (adnn_ref_load(x, t, adnn_ref_offset(xd, i)) - mu[c]) * is[c];
      const double k = adnn_ref_load(scale, vt, c0 + c) * is[c] / (double)count;
      adnn_ref_store(dx, t, adnn_ref_offset(xd, i),
                     k * ((double)count * g - sdy[c] - xhat * sdyx[c]));
    }
  }
}
