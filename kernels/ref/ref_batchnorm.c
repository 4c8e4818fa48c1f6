/* Reference batch normalization (inference), any rank >= 2 and strides. */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref_ops.h"

void adnn_ref_batchnorm(const adnn_batchnorm_desc *d, const void *x, const void *scale,
                        const void *shift, const void *mean, const void *var, void *y) {
  const adnn_tensor_desc *xd = &d->x, *yd = &d->y;
  const adnn_dtype t = xd->dtype;
  const int64_t n = adnn_ref_count(xd);
  int64_t inner = 1; /* elements per channel step in the row-major linear index */
  for (int i = 2; i < xd->rank; i++) inner *= xd->dims[i];
  for (int64_t i = 0; i < n; i++) {
    const int64_t c = (i / inner) % xd->dims[1];
    const double v = adnn_ref_load(x, t, adnn_ref_offset(xd, i));
    const double r = adnn_ref_load(scale, t, c) * (v - adnn_ref_load(mean, t, c)) /
                         sqrt(adnn_ref_load(var, t, c) + d->epsilon) +
                     adnn_ref_load(shift, t, c);
    adnn_ref_store(y, yd->dtype, adnn_ref_offset(yd, i),
                   adnn_ref_activation_apply(&d->activation, r));
  }
}
