/*
 * The conv/batch-norm epilogue: v = act(v + bias) on a contiguous run, applied
 * by every conv algorithm while the output is still in cache.
 *
 * The epilogue runs the same vector code as the activation op
 * (adnn_cpu_act_affine_f32 in activation.c, AVX-512 / AVX2 / baseline picked
 * from the CPU features), so a fused activation gives exactly the numbers of a
 * separate activation pass on v + bias. adnn_cpu_activation_scalar_f32 below
 * stays the plain scalar definition, for code that needs one value at a time.
 */
#include "config.h"

#include <math.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/simd.h"

float adnn_cpu_activation_scalar_f32(const adnn_activation *act, float x) {
  float a = (float)act->alpha, b = (float)act->beta;
  switch (act->kind) {
    case ADNN_ACTIVATION_IDENTITY: return x;
    case ADNN_ACTIVATION_RELU: return x < 0.0f ? 0.0f : x;
    case ADNN_ACTIVATION_LEAKY_RELU: return x < 0.0f ? (a == 0.0f ? 0.0f : a * x) : x;
    case ADNN_ACTIVATION_ELU: return x < 0.0f ? a * expm1f(x) : x;
    case ADNN_ACTIVATION_CLAMP: return x < a ? a : (x > b ? b : x);
    case ADNN_ACTIVATION_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case ADNN_ACTIVATION_TANH: return tanhf(x);
    case ADNN_ACTIVATION_GELU:
      if (isinf(x)) return x > 0.0f ? x : 0.0f;
      return (float)(0.5 * x * erfc(-(double)x * 0.70710678118654752));
    case ADNN_ACTIVATION_GELU_TANH: {
      if (isinf(x)) return x > 0.0f ? x : 0.0f;
      /* (1 + tanh(u)) / 2 = 1 / (1 + exp(-2u)), without cancellation for x < 0 */
      double u = 0.7978845608028654 * (x + 0.044715 * (double)x * x * x);
      return (float)(x / (1.0 + exp(-2.0 * u)));
    }
    case ADNN_ACTIVATION_SILU:
      if (isinf(x)) return x > 0.0f ? x : 0.0f;
      return x / (1.0f + expf(-x));
    case ADNN_ACTIVATION_SOFTPLUS: return (x > 0.0f ? x : 0.0f) + log1pf(expf(-fabsf(x)));
    case ADNN_ACTIVATION_HARDSWISH:
      if (x <= -3.0f) return 0.0f;
      if (x >= 3.0f) return x;
      return x * (x + 3.0f) * (1.0f / 6.0f);
  }
  return x;
}

void adnn_cpu_epilogue_f32(float *v, size_t n, float bias, const adnn_activation *act) {
  adnn_cpu_act_affine_f32(act, v, v, n, 0.0f, 1.0f, 0.0f, bias);
}

void adnn_cpu_epilogue_vec_f32(float *v, size_t n, const float *bias, const adnn_activation *act) {
  adnn_cpu_act_affine_vec_f32(act, v, v, n, NULL, NULL, NULL, bias);
}
