/* Reference pool2d: max, average with and without padding, any strides. */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref_ops.h"

void adnn_ref_pool2d(const adnn_pool2d_desc *d, const void *x, void *y) {
  const adnn_tensor_desc *xd = &d->x, *yd = &d->y;
  const int64_t N = xd->dims[0], C = xd->dims[1], H = xd->dims[2], W = xd->dims[3];
  const int64_t P = yd->dims[2], Q = yd->dims[3];
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t p = 0; p < P; p++)
        for (int64_t q = 0; q < Q; q++) {
          /* The window in padded coordinates, [h0, h1) x [w0, w1). */
          const int64_t h0 = p * d->stride_h - d->pad_top, h1 = h0 + d->kernel_h;
          const int64_t w0 = q * d->stride_w - d->pad_left, w1 = w0 + d->kernel_w;
          /* Its in-image part (never empty: see doc/ops.md). */
          const int64_t ih0 = h0 < 0 ? 0 : h0, ih1 = h1 > H ? H : h1;
          const int64_t iw0 = w0 < 0 ? 0 : w0, iw1 = w1 > W ? W : w1;
          double acc = d->kind == ADNN_POOL_MAX ? -INFINITY : 0.0;
          int nan_seen = 0;
          for (int64_t h = ih0; h < ih1; h++)
            for (int64_t w = iw0; w < iw1; w++) {
              const double v = adnn_ref_load(x, xd->dtype, n * xd->strides[0] +
                                             c * xd->strides[1] + h * xd->strides[2] +
                                             w * xd->strides[3]);
              if (d->kind == ADNN_POOL_MAX) {
                if (isnan(v)) nan_seen = 1;
                else if (v > acc) acc = v;
              } else {
                acc += v;
              }
            }
          double out;
          if (d->kind == ADNN_POOL_MAX) {
            out = nan_seen ? NAN : acc;
          } else if (d->kind == ADNN_POOL_AVG_INCLUDE_PAD) {
            /* The window clipped to the padded image
             * [-pad_top, H + pad_bottom) x [-pad_left, W + pad_right). */
            const int64_t ch1 = h1 > H + d->pad_bottom ? H + d->pad_bottom : h1;
            const int64_t cw1 = w1 > W + d->pad_right ? W + d->pad_right : w1;
            const int64_t ch0 = h0 < -d->pad_top ? -d->pad_top : h0;
            const int64_t cw0 = w0 < -d->pad_left ? -d->pad_left : w0;
            out = acc / (double)((ch1 - ch0) * (cw1 - cw0));
          } else {
            out = acc / (double)((ih1 - ih0) * (iw1 - iw0));
          }
          adnn_ref_store(y, yd->dtype, n * yd->strides[0] + c * yd->strides[1] +
                         p * yd->strides[2] + q * yd->strides[3], out);
        }
}
