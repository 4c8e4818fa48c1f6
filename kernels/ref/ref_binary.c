/* Reference elementwise binary op with NumPy broadcasting, any strides. */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref_ops.h"

/* Offset in operand t of the element that y's multi-index idx maps to: t's
 * dims are right-aligned with y's; a missing or size-1 dim contributes 0. This
 * covers both the raw (lower rank, size-1 dims) and the core's pre-broadcast
 * (same rank, stride 0) forms. */
static int64_t broadcast_offset(const adnn_tensor_desc *t, const adnn_tensor_desc *y,
                                const int64_t *idx) {
  int64_t off = 0;
  const int shift = y->rank - t->rank;
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] != 1) off += idx[i + shift] * t->strides[i];
  return off;
}

static double binary_apply(adnn_binary_op op, double a, double b) {
  switch (op) {
    case ADNN_BINARY_ADD: return a + b;
    case ADNN_BINARY_SUB: return a - b;
    case ADNN_BINARY_MUL: return a * b;
    case ADNN_BINARY_DIV: return a / b;
    case ADNN_BINARY_MAX:
      if (isnan(a) || isnan(b)) return NAN;
      return a > b ? a : b;
    case ADNN_BINARY_MIN:
      if (isnan(a) || isnan(b)) return NAN;
      return a < b ? a : b;
  }
  return NAN;
}

void adnn_ref_binary(const adnn_binary_desc *d, const void *a, const void *b, void *y) {
  const adnn_tensor_desc *yd = &d->y;
  const int64_t n = adnn_ref_count(yd);
  int64_t idx[ADNN_MAX_RANK];
  for (int64_t lin = 0; lin < n; lin++) {
    int64_t rest = lin, yoff = 0;
    for (int i = yd->rank - 1; i >= 0; i--) {
      idx[i] = rest % yd->dims[i];
      rest /= yd->dims[i];
      yoff += idx[i] * yd->strides[i];
    }
    const double va = d->alpha * adnn_ref_load(a, d->a.dtype, broadcast_offset(&d->a, yd, idx));
    const double vb = d->beta * adnn_ref_load(b, d->b.dtype, broadcast_offset(&d->b, yd, idx));
    adnn_ref_store(y, yd->dtype, yoff, binary_apply(d->op, va, vb));
  }
}
