/* Reference conv2d: y = act(cross_correlation(x, w) + bias), any strides. */
#include "config.h"

#include "kernels/ref/ref.h"

/* Inputs {x, w} or {x, w, bias}, outputs {y}. */
void adnn_ref_conv2d(const adnn_plugin_conv2d *d, const void *const *inputs,
                     void *const *outputs) {
  const adnn_tensor_desc *xd = &d->x, *wd = &d->w, *yd = &d->y;
  const void *x = inputs[0], *w = inputs[1], *bias = d->has_bias ? inputs[2] : NULL;
  void *y = outputs[0];
  const int64_t N = d->N, H = d->H, W = d->W;
  const int64_t K = d->K, CG = d->Cg, R = d->R, S = d->S;
  const int64_t P = d->P, Q = d->Q;
  const int64_t KG = d->Kg; /* output channels per group */
  for (int64_t n = 0; n < N; n++)
    for (int64_t k = 0; k < K; k++) {
      const int64_t g = k / KG;
      for (int64_t p = 0; p < P; p++)
        for (int64_t q = 0; q < Q; q++) {
          double acc = 0.0;
          for (int64_t c = 0; c < CG; c++) {
            const int64_t cx = g * CG + c; /* channel of x */
            for (int64_t r = 0; r < R; r++) {
              const int64_t h = p * d->stride_h - d->pad_top + r * d->dilation_h;
              if (h < 0 || h >= H) continue; /* zero padding */
              for (int64_t s = 0; s < S; s++) {
                const int64_t ww = q * d->stride_w - d->pad_left + s * d->dilation_w;
                if (ww < 0 || ww >= W) continue;
                const double xv = adnn_ref_load(x, xd->dtype, n * xd->strides[0] +
                                                cx * xd->strides[1] + h * xd->strides[2] +
                                                ww * xd->strides[3]);
                const double wv = adnn_ref_load(w, wd->dtype, k * wd->strides[0] +
                                                c * wd->strides[1] + r * wd->strides[2] +
                                                s * wd->strides[3]);
                acc += xv * wv;
              }
            }
          }
          if (bias) acc += adnn_ref_load(bias, d->bias.dtype, k * d->bias.strides[0]);
          acc = adnn_ref_activation_apply(&d->activation, acc);
          adnn_ref_store(y, yd->dtype, n * yd->strides[0] + k * yd->strides[1] +
                         p * yd->strides[2] + q * yd->strides[3], acc);
        }
    }
}
