/* Reference layer normalization and RMS normalization over the last norm_dims
 * dims, any strides. */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref.h"

/* Inputs {x}, then gain and bias (packed vectors of D elements) when the
 * problem has them; outputs {y}. */
void adnn_ref_norm(const adnn_plugin_norm *p, const void *const *inputs, void *const *outputs) {
  const adnn_tensor_desc *xd = &p->x, *yd = &p->y;
  const void *x = inputs[0];
  const void *gain = p->has_gain ? inputs[1] : NULL;
  const void *bias = p->has_bias ? inputs[1 + p->has_gain] : NULL;
  void *y = outputs[0];
  const adnn_dtype t = xd->dtype;
  const adnn_dtype pt = ADNN_OP_PARAM_DTYPE(t); /* F32 for F16/BF16 data */
  const int64_t D = p->D;
  for (int64_t row = 0; row < p->rows; row++) {
    const int64_t base = row * D; /* row-major linear index of the row's first element */
    double mean = 0.0, var = 0.0;
    if (p->kind == ADNN_NORM_LAYER) {
      for (int64_t j = 0; j < D; j++) mean += adnn_ref_load(x, t, adnn_ref_offset(xd, base + j));
      mean /= (double)D;
      for (int64_t j = 0; j < D; j++) {
        const double e = adnn_ref_load(x, t, adnn_ref_offset(xd, base + j)) - mean;
        var += e * e;
      }
      var /= (double)D; /* biased: divide by D, not D - 1 */
    } else {
      for (int64_t j = 0; j < D; j++) {
        const double v = adnn_ref_load(x, t, adnn_ref_offset(xd, base + j));
        var += v * v; /* mean of squares; mean stays 0 */
      }
      var /= (double)D;
    }
    const double inv = 1.0 / sqrt(var + p->epsilon);
    for (int64_t j = 0; j < D; j++) {
      double v = (adnn_ref_load(x, t, adnn_ref_offset(xd, base + j)) - mean) * inv;
      if (gain) v *= adnn_ref_load(gain, pt, j);
      if (bias) v += adnn_ref_load(bias, pt, j);
      adnn_ref_store(y, yd->dtype, adnn_ref_offset(yd, base + j), v);
    }
  }
}
