/* Reference pool2d backward, written in gather form: every element of dx
 * sums, in double and in row-major window order, what the windows that
 * contain it send it, so that each dx is written once and no zeroing pass or
 * scatter is needed. */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref.h"

/* The element of window (oh, ow) of plane (n, c) that receives the window's
 * gradient under max pooling: the first NaN in row-major (h, then w) order if
 * the window holds one, else the first element equal to the maximum. */
static void max_position(const adnn_plugin_pool2d *f, const void *x, int64_t base, int64_t h0,
                         int64_t h1, int64_t w0, int64_t w1, int64_t *ph, int64_t *pw) {
  const adnn_tensor_desc *xd = &f->x;
  double best = -INFINITY;
  *ph = h0;
  *pw = w0;
  int found = 0;
  for (int64_t h = h0; h < h1; h++)
    for (int64_t w = w0; w < w1; w++) {
      const double v = adnn_ref_load(x, xd->dtype, base + h * xd->strides[2] + w * xd->strides[3]);
      if (isnan(v)) {
        *ph = h;
        *pw = w;
        return;
      }
      /* Strictly greater: the first of equal maxima stays. -inf everywhere
       * keeps the first element. */
      if (!found || v > best) {
        best = v;
        *ph = h;
        *pw = w;
        found = 1;
      }
    }
}

/* Inputs {x, y, dy}, outputs {dx}. y is not needed: the maximum is found in
 * x again (doc/ops.md). */
void adnn_ref_pool2d_backward(const adnn_plugin_pool2d_backward *p, const void *const *inputs,
                              void *const *outputs) {
  const adnn_plugin_pool2d *f = &p->fwd;
  const adnn_tensor_desc *xd = &f->x, *yd = &f->y;
  const void *x = inputs[0], *dy = inputs[2];
  void *dx = outputs[0];
  const int64_t H = f->H, W = f->W;
  for (int64_t n = 0; n < f->N; n++)
    for (int64_t c = 0; c < f->C; c++) {
      const int64_t xbase = n * xd->strides[0] + c * xd->strides[1];
      const int64_t ybase = n * yd->strides[0] + c * yd->strides[1];
      for (int64_t h = 0; h < H; h++)
        for (int64_t w = 0; w < W; w++) {
          /* The windows whose rows hold h: oh * stride_h - pad_top <= h <
           * oh * stride_h - pad_top + kernel_h. */
          const int64_t th = h + f->pad_top, tw = w + f->pad_left;
          int64_t oh0 = th - f->kernel_h + 1 <= 0 ? 0 : (th - f->kernel_h + f->stride_h) / f->stride_h;
          int64_t oh1 = th / f->stride_h + 1;
          int64_t ow0 = tw - f->kernel_w + 1 <= 0 ? 0 : (tw - f->kernel_w + f->stride_w) / f->stride_w;
          int64_t ow1 = tw / f->stride_w + 1;
          if (oh1 > f->P) oh1 = f->P;
          if (ow1 > f->Q) ow1 = f->Q;
          double acc = 0.0;
          for (int64_t oh = oh0; oh < oh1; oh++)
            for (int64_t ow = ow0; ow < ow1; ow++) {
              const int64_t h0 = oh * f->stride_h - f->pad_top, hend = h0 + f->kernel_h;
              const int64_t w0 = ow * f->stride_w - f->pad_left, wend = w0 + f->kernel_w;
              const int64_t ih0 = h0 < 0 ? 0 : h0, ih1 = hend > H ? H : hend;
              const int64_t iw0 = w0 < 0 ? 0 : w0, iw1 = wend > W ? W : wend;
              const double g = adnn_ref_load(dy, yd->dtype, ybase + oh * yd->strides[2] +
                                             ow * yd->strides[3]);
              if (f->kind == ADNN_POOL_MAX) {
                int64_t mh, mw;
                max_position(f, x, xbase, ih0, ih1, iw0, iw1, &mh, &mw);
                if (mh == h && mw == w) acc += g;
              } else if (f->kind == ADNN_POOL_AVG_INCLUDE_PAD) {
                const int64_t ch1 = hend > H + f->pad_bottom ? H + f->pad_bottom : hend;
                const int64_t cw1 = wend > W + f->pad_right ? W + f->pad_right : wend;
                const int64_t ch0 = h0 < -f->pad_top ? -f->pad_top : h0;
                const int64_t cw0 = w0 < -f->pad_left ? -f->pad_left : w0;
                acc += g / (double)((ch1 - ch0) * (cw1 - cw0));
              } else {
                acc += g / (double)((ih1 - ih0) * (iw1 - iw0));
              }
            }
          adnn_ref_store(dx, xd->dtype, xbase + h * xd->strides[2] + w * xd->strides[3], acc);
        }
    }
}
