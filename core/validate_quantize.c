/*
 * Validation of the quantize and dequantize descriptors (see op_validate.h).
 *
 * Like reorder, these ops mix dtypes by definition, so they check their own
 * pair rather than op_validate.c's one-dtype rule: quantize takes F32 to I8
 * or U8, dequantize I8 or U8 to F32. A pair outside that is NOT_SUPPORTED (a
 * well-formed request the op does not do). The per-tensor scale and zero
 * point are plan parameters and are checked here, BAD_PARAM when the scale is
 * not finite and > 0 or the zero point is outside the integer type's range;
 * per-channel values are run-time buffers that the core cannot read (they
 * may live on a device), so only their sizes are checked, by the execute
 * span checks. The two descriptors have the same fields, so one function
 * checks both.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "core/op_validate.h"

static adnn_status validate_common(const char *func, int quantize, const adnn_tensor_desc *x,
                                   const adnn_tensor_desc *y, int32_t axis, float scale,
                                   int32_t zero_point, adnn_plugin_quantize *p, adnn__op_io *io) {
  adnn_status st;
  if ((st = adnn__op_tensor_check(func, "x", x, 0, ADNN_MAX_RANK, &io->input_bytes[0])) !=
      ADNN_STATUS_SUCCESS)
    return st;
  if ((st = adnn__op_tensor_check(func, "y", y, 0, ADNN_MAX_RANK, &io->output_bytes[0])) !=
      ADNN_STATUS_SUCCESS)
    return st;
  if (!adnn__same_dims(x, y))
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: y must have x's dims (rank %d and %d)", func,
                      (int)y->rank, (int)x->rank);
  if ((st = adnn__op_output_check(func, "y", y)) != ADNN_STATUS_SUCCESS) return st;
  const adnn_dtype ft = quantize ? x->dtype : y->dtype, it = quantize ? y->dtype : x->dtype;
  if (ft != ADNN_DTYPE_F32 || (it != ADNN_DTYPE_I8 && it != ADNN_DTYPE_U8))
    return adnn__fail(ADNN_STATUS_NOT_SUPPORTED,
                      "%s: no %s from %s to %s: %s", func, quantize ? "quantization" :
                      "dequantization", adnn_dtype_name(x->dtype), adnn_dtype_name(y->dtype),
                      quantize ? "x must be f32 and y i8 or u8" : "x must be i8 or u8 and y f32");
  if (axis < -1 || axis >= x->rank)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: axis %d is out of range for rank %d (use -1 "
                      "for one scale per tensor)", func, (int)axis, (int)x->rank);
  const int32_t lo = it == ADNN_DTYPE_I8 ? -128 : 0, hi = it == ADNN_DTYPE_I8 ? 127 : 255;
  int64_t channels = 1, inner = 1;
  if (axis < 0) {
    if (!isfinite(scale) || !(scale > 0.0f))
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: scale %g must be finite and > 0", func,
                        (double)scale);
    if (zero_point < lo || zero_point > hi)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: zero_point %d is outside %s's range %d..%d",
                        func, (int)zero_point, adnn_dtype_name(it), (int)lo, (int)hi);
    io->n_inputs = 1;
  } else {
    channels = x->dims[axis];
    for (int i = axis + 1; i < x->rank; i++) inner *= x->dims[i];
    /* The vectors are packed: their spans are their sizes. */
    io->input_bytes[1] = (size_t)channels * sizeof(float);
    io->input_bytes[2] = (size_t)channels * sizeof(int32_t);
    io->n_inputs = 3;
  }
  io->dtype = x->dtype;
  io->n_outputs = 1;
  p->x = *x;
  p->y = *y;
  int64_t n = 1;
  for (int i = 0; i < x->rank; i++) n *= x->dims[i];
  p->count = n;
  p->axis = axis < 0 ? -1 : axis;
  p->scale = axis < 0 ? scale : 1.0f;
  p->zero_point = axis < 0 ? zero_point : 0;
  p->channels = channels;
  p->inner = inner;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn__quantize_validate(const char *func, const adnn_quantize_desc *d,
                                    adnn_plugin_quantize *p, adnn__op_io *io) {
  return validate_common(func, 1, &d->x, &d->y, d->axis, d->scale, d->zero_point, p, io);
}

adnn_status adnn__dequantize_validate(const char *func, const adnn_dequantize_desc *d,
                                      adnn_plugin_dequantize *p, adnn__op_io *io) {
  /* adnn_plugin_dequantize has adnn_plugin_quantize's fields in order; fill a
   * quantize problem and copy it field by field. */
  adnn_plugin_quantize q;
  memset(&q, 0, sizeof q);
  adnn_status st = validate_common(func, 0, &d->x, &d->y, d->axis, d->scale, d->zero_point, &q, io);
  if (st != ADNN_STATUS_SUCCESS) return st;
  p->x = q.x;
  p->y = q.y;
  p->count = q.count;
  p->axis = q.axis;
  p->scale = q.scale;
  p->zero_point = q.zero_point;
  p->channels = q.channels;
  p->inner = q.inner;
  return ADNN_STATUS_SUCCESS;
}
