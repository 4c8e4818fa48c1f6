/* Reference conv2d backward weights: dw = beta * dw + the gradient of the
 * cross-correlation with respect to w, and db = beta * db + the sum of dy
 * over N, P and Q when the forward op has a bias; any strides (doc/ops.md). */
#include "config.h"

#include "kernels/ref/ref.h"

/* Inputs {x, dy}, outputs {dw} or {dw, db}. dw[k, c, r, s] = sum over n, p,
 * q of dy[n, k, p, q] * x[n, g * Cg + c, p * sh - pt + r * dh, q * sw - pl +
 * s * dw] (x is zero outside the image), with g = k / Kg. With beta == 0 the
 * old gradients are not read. */
void adnn_ref_conv2d_backward_weights(const adnn_plugin_conv2d_backward_weights *b,
                                      const void *const *inputs, void *const *outputs) {
  const adnn_plugin_conv2d *d = &b->fwd;
  const adnn_tensor_desc *xd = &d->x, *wd = &d->w, *yd = &d->y;
  const void *x = inputs[0], *dy = inputs[1];
  void *dw = outputs[0];
  for (int64_t k = 0; k < d->K; k++) {
    const int64_t g = k / d->Kg;
    for (int64_t c = 0; c < d->Cg; c++)
      for (int64_t r = 0; r < d->R; r++)
        for (int64_t s = 0; s < d->S; s++) {
          double acc = 0.0;
          for (int64_t n = 0; n < d->N; n++)
            for (int64_t p = 0; p < d->P; p++) {
              const int64_t h = p * d->stride_h - d->pad_top + r * d->dilation_h;
              if (h < 0 || h >= d->H) continue;
              for (int64_t q = 0; q < d->Q; q++) {
                const int64_t v = q * d->stride_w - d->pad_left + s * d->dilation_w;
                if (v < 0 || v >= d->W) continue;
                acc += adnn_ref_load(dy, yd->dtype, n * yd->strides[0] + k * yd->strides[1] +
                                                        p * yd->strides[2] + q * yd->strides[3]) *
                       adnn_ref_load(x, xd->dtype, n * xd->strides[0] +
                                                       (g * d->Cg + c) * xd->strides[1] +
                                                       h * xd->strides[2] + v * xd->strides[3]);
              }
            }
          const int64_t off = k * wd->strides[0] + c * wd->strides[1] + r * wd->strides[2] +
                              s * wd->strides[3];
          if (b->beta != 0.0) acc += b->beta * adnn_ref_load(dw, wd->dtype, off);
          adnn_ref_store(dw, wd->dtype, off, acc);
        }
  }
  if (!d->has_bias) return;
  void *db = outputs[1];
  for (int64_t k = 0; k < d->K; k++) {
    double acc = 0.0;
    for (int64_t n = 0; n < d->N; n++)
      for (int64_t p = 0; p < d->P; p++)
        for (int64_t q = 0; q < d->Q; q++)
          acc += adnn_ref_load(dy, yd->dtype, n * yd->strides[0] + k * yd->strides[1] +
                                                  p * yd->strides[2] + q * yd->strides[3]);
    const int64_t off = k * d->bias.strides[0];
    if (b->beta != 0.0) acc += b->beta * adnn_ref_load(db, d->bias.dtype, off);
    adnn_ref_store(db, d->bias.dtype, off, acc);
  }
}
