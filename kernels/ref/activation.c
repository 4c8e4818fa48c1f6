/* Reference activations: the scalar definitions of doc/ops.md, in double. */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref.h"

/* Every branch is written so that NaN falls through to an expression that
 * yields NaN (comparisons with NaN are false). Infinite inputs give the limit
 * of the function (e.g. gelu(-inf) = 0), computed explicitly where the plain
 * formula would give inf * 0. */
double adnn_ref_activation_apply(const adnn_activation *act, double x) {
  const double alpha = act->alpha, beta = act->beta;
  switch (act->kind) {
    case ADNN_ACTIVATION_IDENTITY:
      return x;
    case ADNN_ACTIVATION_RELU:
      return x < 0 ? 0.0 : x;
    case ADNN_ACTIVATION_LEAKY_RELU:
      if (x < 0) return alpha == 0 ? 0.0 : alpha * x; /* alpha 0: relu, also at -inf */
      return x;
    case ADNN_ACTIVATION_ELU:
      return x < 0 ? alpha * expm1(x) : x;
    case ADNN_ACTIVATION_CLAMP:
      return x < alpha ? alpha : (x > beta ? beta : x);
    case ADNN_ACTIVATION_SIGMOID:
      return 1.0 / (1.0 + exp(-x));
    case ADNN_ACTIVATION_TANH:
      return tanh(x);
    case ADNN_ACTIVATION_GELU:
      if (isinf(x)) return x > 0 ? x : 0.0;
      return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case ADNN_ACTIVATION_GELU_TANH: {
      if (isinf(x)) return x > 0 ? x : 0.0;
      const double k = sqrt(2.0 / M_PI);
      return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
    }
    case ADNN_ACTIVATION_SILU:
      if (isinf(x)) return x > 0 ? x : 0.0;
      return x / (1.0 + exp(-x));
    case ADNN_ACTIVATION_SOFTPLUS:
      /* log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)) */
      return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
    case ADNN_ACTIVATION_HARDSWISH:
      if (x <= -3.0) return 0.0;
      if (x >= 3.0) return x;
      return x * (x + 3.0) / 6.0;
  }
  return NAN;
}

/* Inputs {x}, outputs {y}. */
void adnn_ref_activation(const adnn_plugin_activation *p, const void *const *inputs,
                         void *const *outputs) {
  const void *x = inputs[0];
  void *y = outputs[0];
  for (int64_t i = 0; i < p->count; i++) {
    double v = adnn_ref_load(x, p->x.dtype, adnn_ref_offset(&p->x, i));
    adnn_ref_store(y, p->y.dtype, adnn_ref_offset(&p->y, i),
                   adnn_ref_activation_apply(&p->activation, v));
  }
}
