/* Reference elementwise binary op with broadcasting, any strides. */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref.h"

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

/* Inputs {a, b}, outputs {y}. The core has already broadcast a and b to y's
 * rank and dims, with stride 0 along the broadcast dims, so the element of
 * each operand that y's linear index maps to is found through its strides
 * like y's own. */
void adnn_ref_binary(const adnn_plugin_binary *p, const void *const *inputs,
                     void *const *outputs) {
  const void *a = inputs[0], *b = inputs[1];
  void *y = outputs[0];
  const int64_t n = adnn_ref_count(&p->y);
  for (int64_t lin = 0; lin < n; lin++) {
    const double va = p->alpha * adnn_ref_load(a, p->a.dtype, adnn_ref_offset(&p->a, lin));
    const double vb = p->beta * adnn_ref_load(b, p->b.dtype, adnn_ref_offset(&p->b, lin));
    adnn_ref_store(y, p->y.dtype, adnn_ref_offset(&p->y, lin), binary_apply(p->op, va, vb));
  }
}
