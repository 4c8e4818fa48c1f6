/* Reference batch normalization (inference), any rank >= 2 and strides. */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref.h"

/* Inputs {x, scale, shift, mean, var}, the last four packed vectors of C
 * elements; outputs {y}. */
void adnn_ref_batchnorm(const adnn_plugin_batchnorm *p, const void *const *inputs,
                        void *const *outputs) {
  const adnn_tensor_desc *xd = &p->x, *yd = &p->y;
  const void *x = inputs[0], *scale = inputs[1], *shift = inputs[2], *mean = inputs[3];
  const void *var = inputs[4];
  void *y = outputs[0];
  const adnn_dtype t = xd->dtype;
  const adnn_dtype pt = ADNN_OP_PARAM_DTYPE(t); /* F32 for F16/BF16 data */
  const int64_t n = adnn_ref_count(xd);
  int64_t inner = 1; /* elements per channel step in the row-major linear index */
  for (int i = 2; i < xd->rank; i++) inner *= xd->dims[i];
  for (int64_t i = 0; i < n; i++) {
    const int64_t c = (i / inner) % p->C;
    const double v = adnn_ref_load(x, t, adnn_ref_offset(xd, i));
    const double r = adnn_ref_load(scale, pt, c) * (v - adnn_ref_load(mean, pt, c)) /
                         sqrt(adnn_ref_load(var, pt, c) + p->epsilon) +
                     adnn_ref_load(shift, pt, c);
    adnn_ref_store(y, yd->dtype, adnn_ref_offset(yd, i),
                   adnn_ref_activation_apply(&p->activation, r));
  }
}
