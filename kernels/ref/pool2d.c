/* Reference pool2d: max, average with and without padding, any strides. */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref.h"

/* Inputs {x}, outputs {y}. */
void adnn_ref_pool2d(const adnn_plugin_pool2d *p, const void *const *inputs,
                     void *const *outputs) {
  const adnn_tensor_desc *xd = &p->x, *yd = &p->y;
  const void *x = inputs[0];
  void *y = outputs[0];
  const int64_t H = p->H, W = p->W;
  for (int64_t n = 0; n < p->N; n++)
    for (int64_t c = 0; c < p->C; c++)
      for (int64_t oh = 0; oh < p->P; oh++)
        for (int64_t ow = 0; ow < p->Q; ow++) {
          /* The window in padded coordinates, [h0, h1) x [w0, w1). */
          const int64_t h0 = oh * p->stride_h - p->pad_top, h1 = h0 + p->kernel_h;
          const int64_t w0 = ow * p->stride_w - p->pad_left, w1 = w0 + p->kernel_w;
          /* Its in-image part (never empty: see doc/ops.md). */
          const int64_t ih0 = h0 < 0 ? 0 : h0, ih1 = h1 > H ? H : h1;
          const int64_t iw0 = w0 < 0 ? 0 : w0, iw1 = w1 > W ? W : w1;
          double acc = p->kind == ADNN_POOL_MAX ? -INFINITY : 0.0;
          int nan_seen = 0;
          for (int64_t h = ih0; h < ih1; h++)
            for (int64_t w = iw0; w < iw1; w++) {
              const double v = adnn_ref_load(x, xd->dtype, n * xd->strides[0] +
                                             c * xd->strides[1] + h * xd->strides[2] +
                                             w * xd->strides[3]);
              if (p->kind == ADNN_POOL_MAX) {
                if (isnan(v)) nan_seen = 1;
                else if (v > acc) acc = v;
              } else {
                acc += v;
              }
            }
          double out;
          if (p->kind == ADNN_POOL_MAX) {
            out = nan_seen ? NAN : acc;
          } else if (p->kind == ADNN_POOL_AVG_INCLUDE_PAD) {
            /* The window clipped to the padded image
             * [-pad_top, H + pad_bottom) x [-pad_left, W + pad_right). */
            const int64_t ch1 = h1 > H + p->pad_bottom ? H + p->pad_bottom : h1;
            const int64_t cw1 = w1 > W + p->pad_right ? W + p->pad_right : w1;
            const int64_t ch0 = h0 < -p->pad_top ? -p->pad_top : h0;
            const int64_t cw0 = w0 < -p->pad_left ? -p->pad_left : w0;
            out = acc / (double)((ch1 - ch0) * (cw1 - cw0));
          } else {
            out = acc / (double)((ih1 - ih0) * (iw1 - iw0));
          }
          adnn_ref_store(y, yd->dtype, n * yd->strides[0] + c * yd->strides[1] +
                         oh * yd->strides[2] + ow * yd->strides[3], out);
        }
}
