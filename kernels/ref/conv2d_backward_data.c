/* Reference conv2d backward data: dx = beta * dx + the gradient of the
 * cross-correlation with respect to x, any strides (doc/ops.md). */
#include "config.h"

#include "kernels/ref/ref.h"

/* Inputs {dy, w}, outputs {dx}. Each dx element gathers its own sum (no
 * scatter): dx[n, c, h, w] = sum over the filters k of c's group and the
 * taps (r, s) for which h + pad_top - r * dilation_h is a multiple of the
 * stride, of dy[n, k, p, q] * w[k, c mod Cg, r, s]. With beta == 0 the old dx
 * is not read (it may hold NaN). */
void adnn_ref_conv2d_backward_data(const adnn_plugin_conv2d_backward_data *b,
                                   const void *const *inputs, void *const *outputs) {
  const adnn_plugin_conv2d *d = &b->fwd;
  const adnn_tensor_desc *xd = &d->x, *wd = &d->w, *yd = &d->y;
  const void *dy = inputs[0], *w = inputs[1];
  void *dx = outputs[0];
  for (int64_t n = 0; n < d->N; n++)
    for (int64_t c = 0; c < d->C; c++) {
      const int64_t g = c / d->Cg, cw = c % d->Cg;
      for (int64_t h = 0; h < d->H; h++)
        for (int64_t x = 0; x < d->W; x++) {
          double acc = 0.0;
          for (int64_t k = g * d->Kg; k < (g + 1) * d->Kg; k++)
            for (int64_t r = 0; r < d->R; r++) {
              const int64_t ph = h + d->pad_top - r * d->dilation_h;
              if (ph < 0 || ph % d->stride_h != 0) continue;
              const int64_t p = ph / d->stride_h;
              if (p >= d->P) continue;
              for (int64_t s = 0; s < d->S; s++) {
                const int64_t qw = x + d->pad_left - s * d->dilation_w;
                if (qw < 0 || qw % d->stride_w != 0) continue;
                const int64_t q = qw / d->stride_w;
                if (q >= d->Q) continue;
                acc += adnn_ref_load(dy, yd->dtype, n * yd->strides[0] + k * yd->strides[1] +
                                                        p * yd->strides[2] + q * yd->strides[3]) *
                       adnn_ref_load(w, wd->dtype, k * wd->strides[0] + cw * wd->strides[1] +
                                                       r * wd->strides[2] + s * wd->strides[3]);
              }
            }
          const int64_t off = n * xd->strides[0] + c * xd->strides[1] + h * xd->strides[2] +
                              x * xd->strides[3];
          if (b->beta != 0.0) acc += b->beta * adnn_ref_load(dx, xd->dtype, off);
          adnn_ref_store(dx, xd->dtype, off, acc);
        }
    }
}
