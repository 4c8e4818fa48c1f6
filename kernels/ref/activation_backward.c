/* Reference activation backward: the derivative table of doc/ops.md
 * ("Activation backward"), in double. */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref.h"

/* sigmoid(x) without overflow: exp of a non-positive argument only. */
static double ref_sigmoid(double x) {
  const double e = exp(-fabs(x));
  return x >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

/* sigmoid'(x) = sigmoid(x) sigmoid(-x) = e / (1 + e)^2 with e = exp(-|x|):
 * no cancellation, and 0 (not NaN) at +-inf. */
static double ref_sigmoid_grad(double x) {
  const double e = exp(-fabs(x));
  return e / ((1.0 + e) * (1.0 + e));
}

/* tanh'(x) = 1 - tanh(x)^2 = 4 e / (1 + e)^2 with e = exp(-2|x|), which
 * keeps its relative accuracy where 1 - tanh^2 would cancel. */
static double ref_tanh_grad(double x) {
  const double e = exp(-2.0 * fabs(x));
  return 4.0 * e / ((1.0 + e) * (1.0 + e));
}

/* Every rule below follows doc/ops.md: NaN x gives NaN; a region where the
 * derivative is the constant 0 gives 0 whatever dy is (PyTorch selects
 * there); everywhere else dx = dy * f'(x), so a non-finite dy propagates. The
 * value at a kink is PyTorch's (relu'(0) = 0, leaky_relu'(0) = alpha,
 * elu'(0) = alpha, clamp' = 0 at both bounds, hardswish'(-3) = -1/2,
 * hardswish'(3) = 3/2), and the smooth kinds take their limits at +-inf. */
double adnn_ref_activation_backward_apply(const adnn_activation *act, double x, double dy) {
  const double alpha = act->alpha, beta = act->beta;
  if (isnan(x)) return x;
  switch (act->kind) {
    case ADNN_ACTIVATION_IDENTITY:
      return dy;
    case ADNN_ACTIVATION_RELU:
      return x > 0 ? dy : 0.0;
    case ADNN_ACTIVATION_LEAKY_RELU:
      return x > 0 ? dy : alpha * dy;
    case ADNN_ACTIVATION_ELU:
      return x > 0 ? dy : dy * (alpha * exp(x));
    case ADNN_ACTIVATION_CLAMP:
      return x > alpha && x < beta ? dy : 0.0;
    case ADNN_ACTIVATION_SIGMOID:
      return dy * ref_sigmoid_grad(x);
    case ADNN_ACTIVATION_TANH:
      return dy * ref_tanh_grad(x);
    case ADNN_ACTIVATION_GELU: {
      if (isinf(x)) return dy * (x > 0 ? 1.0 : 0.0);
      /* Phi(x) + x phi(x), Phi(x) = erfc(-x / sqrt 2) / 2 (no 1 + erf
       * cancellation for x < 0). */
      const double cdf = 0.5 * erfc(-x / sqrt(2.0));
      const double pdf = exp(-0.5 * x * x) / sqrt(2.0 * M_PI);
      return dy * (cdf + x * pdf);
    }
    case ADNN_ACTIVATION_GELU_TANH: {
      /* Beyond |x| = 1e10 the derivative is its limit within double
       * rounding, and x^2 could overflow into inf * 0. */
      if (fabs(x) > 1e10) return dy * (x > 0 ? 1.0 : 0.0);
      const double k = sqrt(2.0 / M_PI), c = 0.044715;
      const double u = k * (x + c * x * x * x);
      /* (1 + tanh u) / 2 = sigmoid(2u); 1 - tanh(u)^2 = tanh'(u). */
      return dy * (ref_sigmoid(2.0 * u) + 0.5 * x * ref_tanh_grad(u) * k * (1.0 + 3.0 * c * x * x));
    }
    case ADNN_ACTIVATION_SILU: {
      if (isinf(x)) return dy * (x > 0 ? 1.0 : 0.0);
      /* s + x s (1 - s) with 1 - s = sigmoid(-x). */
      const double s = ref_sigmoid(x);
      return dy * (s * (1.0 + x * ref_sigmoid(-x)));
    }
    case ADNN_ACTIVATION_SOFTPLUS:
      /* PyTorch's threshold (beta 1, threshold 20): exactly dy above it. */
      return x > 20.0 ? dy : dy * ref_sigmoid(x);
    case ADNN_ACTIVATION_HARDSWISH:
      if (x < -3.0) return 0.0;
      if (x <= 3.0) return dy * (x / 3.0 + 0.5);
      return dy;
  }
  return NAN;
}

/* Inputs {x, dy}, outputs {dx}: x and dx have fwd.x's layout, dy fwd.y's.
 * dx may be dy (same layout): each dy is read before its dx is written. */
void adnn_ref_activation_backward(const adnn_plugin_activation_backward *p,
                                  const void *const *inputs, void *const *outputs) {
  const adnn_plugin_activation *f = &p->fwd;
  const void *x = inputs[0], *dy = inputs[1];
  void *dx = outputs[0];
  for (int64_t i = 0; i < f->count; i++) {
    const int64_t xo = adnn_ref_offset(&f->x, i);
    const double xv = adnn_ref_load(x, f->x.dtype, xo);
    const double g = adnn_ref_load(dy, f->y.dtype, adnn_ref_offset(&f->y, i));
    adnn_ref_store(dx, f->x.dtype, xo, adnn_ref_activation_backward_apply(&f->activation, xv, g));
  }
}
