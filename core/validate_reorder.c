/*
 * Validation of the reorder descriptor (see op_validate.h): y = x converted
 * to y's dtype between two layouts of the same dims.
 *
 * reorder is the first op whose tensors have different dtypes by definition,
 * so it does not use op_validate.c's check_dtype (one dtype for every
 * tensor). Its rule, written here once: x's dtype must be in the manifest's
 * column (every dtype), and the pair (x, y) must be two floating types (F32,
 * F64, F16, BF16: a conversion) or one integer type twice (I8, U8, I32: a
 * copy). A pair outside that is NOT_SUPPORTED rather than BAD_PARAM: it is a
 * well-formed request this op does not do (F32 to I8 is quantization, with a
 * scale, and has an op of its own). The plugin op's dtype is x's.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "core/op_validate.h"

static int is_float_dtype(adnn_dtype t) {
  return t == ADNN_DTYPE_F32 || t == ADNN_DTYPE_F64 || t == ADNN_DTYPE_F16 ||
         t == ADNN_DTYPE_BF16;
}

static void format_dims(const adnn_tensor_desc *t, char *buf, size_t size) {
  size_t used = (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < t->rank && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? ", " : "",
                             (long long)t->dims[i]);
  if (used < size) snprintf(buf + used, size - used, "]");
}

adnn_status adnn__reorder_validate(const char *func, const adnn_reorder_desc *d,
                                   adnn_plugin_reorder *p, adnn__op_io *io) {
  adnn_status st;
  if ((st = adnn__op_tensor_check(func, "x", &d->x, 0, ADNN_MAX_RANK, &io->input_bytes[0])) !=
      ADNN_STATUS_SUCCESS)
    return st;
  if ((st = adnn__op_tensor_check(func, "y", &d->y, 0, ADNN_MAX_RANK, &io->output_bytes[0])) !=
      ADNN_STATUS_SUCCESS)
    return st;
  if (!adnn__same_dims(&d->x, &d->y)) {
    char a[160], b[160];
    format_dims(&d->y, a, sizeof a);
    format_dims(&d->x, b, sizeof b);
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: y has dims %s but must match x %s", func, a, b);
  }
  if ((st = adnn__op_output_check(func, "y", &d->y)) != ADNN_STATUS_SUCCESS) return st;
  const adnn_dtype xt = d->x.dtype, yt = d->y.dtype;
  if (!(io->dtypes & ADNN_OP_DTYPE(xt)))
    return adnn__fail(ADNN_STATUS_NOT_SUPPORTED, "%s: x has dtype %s, which reorder does not "
                      "take", func, adnn_dtype_name(xt));
  const int floats = is_float_dtype(xt) && is_float_dtype(yt);
  if (!floats && xt != yt)
    return adnn__fail(ADNN_STATUS_NOT_SUPPORTED,
                      "%s: no conversion from %s to %s: reorder converts between f32, f64, f16 "
                      "and bf16 and copies i8, u8 and i32 to the same dtype (use quantize or "
                      "dequantize for integers with a scale)",
                      func, adnn_dtype_name(xt), adnn_dtype_name(yt));
  io->dtype = xt;
  io->n_inputs = 1;
  io->n_outputs = 1;
  /* Only the exact same layout and dtype may share memory (a no-op copy);
   * any other overlap would read elements already overwritten. */
  if (adnn__same_layout(&d->x, &d->y)) io->inplace_inputs = 1u << 0;
  p->x = d->x;
  p->y = d->y;
  int64_t n = 1;
  for (int i = 0; i < d->x.rank; i++) n *= d->x.dims[i];
  p->count = n;
  return ADNN_STATUS_SUCCESS;
}
