/* Reference conv2d: y = act(cross_correlation(x, w) + bias), any strides.
 * Float inputs accumulate in double. I8/U8 inputs (with an I8 w) accumulate
 * (x - x_zero_point) w exactly in 64-bit integers over the taps inside the
 * image (a padded tap reads x_zero_point and adds nothing), add the I32
 * bias, apply relu or the identity, and saturate to an I32 y or requantize
 * to I8/U8 (adnn/ops.h). */
#include "config.h"

#include <math.h>
#include <stdint.h>

#include "kernels/ref/ref.h"

static int64_t load_int(const void *base, adnn_dtype t, int64_t off) {
  switch (t) {
    case ADNN_DTYPE_I8: return ((const int8_t *)base)[off];
    case ADNN_DTYPE_U8: return ((const uint8_t *)base)[off];
    default: return ((const int32_t *)base)[off];
  }
}

/* The integer convolution (see the top of the file). */
static void conv2d_int(const adnn_plugin_conv2d *d, const void *const *inputs,
                       void *const *outputs) {
  const adnn_tensor_desc *xd = &d->x, *wd = &d->w, *yd = &d->y;
  const void *x = inputs[0], *w = inputs[1], *bias = d->has_bias ? inputs[2] : NULL;
  const float *scales = d->has_requant_scales ? inputs[2 + d->has_bias] : NULL;
  void *y = outputs[0];
  const int requant = yd->dtype == ADNN_DTYPE_I8 || yd->dtype == ADNN_DTYPE_U8;
  const int64_t lo = yd->dtype == ADNN_DTYPE_I8 ? -128 : requant ? 0 : INT32_MIN;
  const int64_t hi = yd->dtype == ADNN_DTYPE_I8 ? 127 : requant ? 255 : INT32_MAX;
  for (int64_t n = 0; n < d->N; n++)
    for (int64_t k = 0; k < d->K; k++) {
      const int64_t g = k / d->Kg;
      for (int64_t p = 0; p < d->P; p++)
        for (int64_t q = 0; q < d->Q; q++) {
          int64_t acc = 0;
          for (int64_t c = 0; c < d->Cg; c++)
            for (int64_t r = 0; r < d->R; r++) {
              const int64_t h = p * d->stride_h - d->pad_top + r * d->dilation_h;
              if (h < 0 || h >= d->H) continue;
              for (int64_t s = 0; s < d->S; s++) {
                const int64_t ww = q * d->stride_w - d->pad_left + s * d->dilation_w;
                if (ww < 0 || ww >= d->W) continue;
                const int64_t xv = load_int(x, xd->dtype, n * xd->strides[0] +
                                            (g * d->Cg + c) * xd->strides[1] +
                                            h * xd->strides[2] + ww * xd->strides[3]);
                const int64_t wv = load_int(w, wd->dtype, k * wd->strides[0] +
                                            c * wd->strides[1] + r * wd->strides[2] +
                                            s * wd->strides[3]);
                acc += (xv - d->x_zero_point) * wv;
              }
            }
          if (bias) acc += load_int(bias, ADNN_DTYPE_I32, k * d->bias.strides[0]);
          if (d->activation.kind == ADNN_ACTIVATION_RELU && acc < 0) acc = 0;
          int64_t v = acc;
          if (requant) {
            const double scale =
                scales ? (double)scales[k * d->requant_scales.strides[0]] : d->requant_scale;
            const double prod = (double)acc * scale;
            /* The default rounding mode: to nearest even; a NaN product (a
             * NaN scale) gives the zero point. */
            const double rq = (prod != prod ? 0.0 : nearbyint(prod)) + (double)d->y_zero_point;
            v = rq < (double)lo ? lo : rq > (double)hi ? hi : (int64_t)rq;
          } else {
            v = v < lo ? lo : v > hi ? hi : v;
          }
          const int64_t off = n * yd->strides[0] + k * yd->strides[1] + p * yd->strides[2] +
                              q * yd->strides[3];
          if (yd->dtype == ADNN_DTYPE_I8)
            ((int8_t *)y)[off] = (int8_t)v;
          else if (yd->dtype == ADNN_DTYPE_U8)
            ((uint8_t *)y)[off] = (uint8_t)v;
          else
            ((int32_t *)y)[off] = (int32_t)v;
        }
    }
}

/* Inputs {x, w[, bias][, requant_scales]}, outputs {y}. */
void adnn_ref_conv2d(const adnn_plugin_conv2d *d, const void *const *inputs,
                     void *const *outputs) {
  if (d->x.dtype == ADNN_DTYPE_I8 || d->x.dtype == ADNN_DTYPE_U8) {
    conv2d_int(d, inputs, outputs);
    return;
  }
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
