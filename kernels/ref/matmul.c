/* Reference matmul with its epilogue: y = act(alpha * (a @ b) + bias +
 * residual_scale * r) for any strides. F32 and F64 accumulate each dot
 * product in double; F16 and BF16 inputs are widened exactly and also
 * accumulate in double (the reference is more accurate than the F32
 * accumulation doc/numerics.md bounds); I8 x I8 and U8 x I8 accumulate
 * exactly in 64-bit integers, then add the I32 bias and either saturate to
 * I32 or requantize to I8/U8 (adnn/ops.h). */
#include "config.h"

#include <math.h>
#include <stdint.h>

#include "kernels/common/float16.h"
#include "kernels/ref/ref.h"

/* Element `off` of a buffer of any matmul dtype, as a double (exact). */
static double load_any(const void *base, adnn_dtype t, int64_t off) {
  switch (t) {
    case ADNN_DTYPE_F16: return adnn_f16_to_f64(((const uint16_t *)base)[off]);
    case ADNN_DTYPE_BF16: return adnn_bf16_to_f64(((const uint16_t *)base)[off]);
    case ADNN_DTYPE_I8: return ((const int8_t *)base)[off];
    case ADNN_DTYPE_U8: return ((const uint8_t *)base)[off];
    case ADNN_DTYPE_I32: return ((const int32_t *)base)[off];
    default: return adnn_ref_load(base, t, off);
  }
}

/* Stores v rounded once (to nearest even) into a float dtype. */
static void store_float(void *base, adnn_dtype t, int64_t off, double v) {
  if (t == ADNN_DTYPE_F16)
    ((uint16_t *)base)[off] = adnn_f64_to_f16(v);
  else if (t == ADNN_DTYPE_BF16)
    ((uint16_t *)base)[off] = adnn_f64_to_bf16(v);
  else
    adnn_ref_store(base, t, off, v);
}

/* The integer result of the exact accumulator `acc` (bias included) for y's
 * dtype: I32 saturates; I8/U8 requantize as
 * saturate(rne(acc * scale) + zero_point), the product in F64 (one
 * rounding), a NaN product (a NaN scale) giving the zero point. */
static int64_t int_result(const adnn_plugin_matmul *p, int64_t acc, double scale) {
  int64_t lo = INT32_MIN, hi = INT32_MAX, v = acc;
  if (p->y.dtype == ADNN_DTYPE_I8 || p->y.dtype == ADNN_DTYPE_U8) {
    lo = p->y.dtype == ADNN_DTYPE_I8 ? -128 : 0;
    hi = p->y.dtype == ADNN_DTYPE_I8 ? 127 : 255;
    const double q = (double)acc * scale;
    double r = q != q ? 0.0 : nearbyint(q); /* the default rounding mode: to nearest even */
    r += (double)p->y_zero_point;
    return r < (double)lo ? lo : r > (double)hi ? hi : (int64_t)r;
  }
  return v < lo ? lo : v > hi ? hi : v;
}

static void store_int(void *base, adnn_dtype t, int64_t off, int64_t v) {
  if (t == ADNN_DTYPE_I8)
    ((int8_t *)base)[off] = (int8_t)v;
  else if (t == ADNN_DTYPE_U8)
    ((uint8_t *)base)[off] = (uint8_t)v;
  else
    ((int32_t *)base)[off] = (int32_t)v;
}

/* Inputs {a, b[, bias][, r][, requant_scales]}, outputs {y}. The core
 * brought a, b, r and y to rank 4 [B0, B1, rows, cols] (b's broadcast batch
 * dims have stride 0), so one loop nest serves every rank and broadcast.
 * With r == y (the in-place residual) each y element's r is read before
 * that element is written, and no other element reads it. */
void adnn_ref_matmul(const adnn_plugin_matmul *p, const void *const *inputs,
                     void *const *outputs) {
  const void *a = inputs[0], *b = inputs[1];
  const void *bias = p->has_bias ? inputs[2] : NULL;
  const void *r = p->has_residual ? inputs[2 + p->has_bias] : NULL;
  const float *scales =
      p->has_requant_scales ? inputs[2 + p->has_bias + p->has_residual] : NULL;
  void *y = outputs[0];
  const adnn_dtype at = p->a.dtype, bt = p->b.dtype, yt = p->y.dtype;
  const int integer = at == ADNN_DTYPE_I8 || at == ADNN_DTYPE_U8;
  const int64_t *sa = p->a.strides, *sb = p->b.strides, *sy = p->y.strides;
  const int64_t *sr = p->residual.strides;
  for (int64_t b0 = 0; b0 < p->batch0; b0++)
    for (int64_t b1 = 0; b1 < p->batch1; b1++) {
      const int64_t oa = b0 * sa[0] + b1 * sa[1], ob = b0 * sb[0] + b1 * sb[1];
      const int64_t oy = b0 * sy[0] + b1 * sy[1];
      const int64_t orr = r ? b0 * sr[0] + b1 * sr[1] : 0;
      for (int64_t i = 0; i < p->M; i++)
        for (int64_t j = 0; j < p->N; j++) {
          if (integer) {
            int64_t acc = 0;
            for (int64_t k = 0; k < p->K; k++)
              acc += (int64_t)load_any(a, at, oa + i * sa[2] + k * sa[3]) *
                     (int64_t)load_any(b, bt, ob + k * sb[2] + j * sb[3]);
            if (bias) acc += ((const int32_t *)bias)[j * p->bias.strides[0]];
            const double scale =
                scales ? (double)scales[j * p->requant_scales.strides[0]] : p->requant_scale;
            store_int(y, yt, oy + i * sy[2] + j * sy[3], int_result(p, acc, scale));
            continue;
          }
          /* A zero scale leaves its operand unread (the BLAS convention,
           * doc/ops.md): its NaNs and infinities do not reach y. */
          double v = 0.0;
          if (p->alpha != 0.0) {
            double acc = 0.0;
            for (int64_t k = 0; k < p->K; k++)
              acc += load_any(a, at, oa + i * sa[2] + k * sa[3]) *
                     load_any(b, bt, ob + k * sb[2] + j * sb[3]);
            v = p->alpha * acc;
          }
          if (bias) v += load_any(bias, p->bias.dtype, j * p->bias.strides[0]);
          if (r && p->residual_scale != 0.0)
            v += p->residual_scale * load_any(r, p->residual.dtype, orr + i * sr[2] + j * sr[3]);
          store_float(y, yt, oy + i * sy[2] + j * sy[3],
                      adnn_ref_activation_apply(&p->activation, v));
        }
    }
}
