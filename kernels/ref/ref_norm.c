/* Reference layer normalization and RMS normalization over the last norm_dims
 * dims, any strides. */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref_ops.h"

void adnn_ref_norm(const adnn_norm_desc *d, const void *x, const void *gain, const void *bias,
                   void *y) {
  const adnn_tensor_desc *xd = &d->x, *yd = &d->y;
  const adnn_dtype t = xd->dtype;
  int64_t D = 1;
  for (int i = xd->rank - d->norm_dims; i < xd->rank; i++) D *= xd->dims[i];
  const int64_t rows = adnn_ref_count(xd) / D;
  for (int64_t row = 0; row < rows; row++) {
    const int64_t base = row * D; /* row-major linear index of the row's first element */
    double mean = 0.0, var = 0.0;
    if (d->kind == ADNN_NORM_LAYER) {
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
    const double inv = 1.0 / sqrt(var + d->epsilon);
    for (int64_t j = 0; j < D; j++) {
      double v = (adnn_ref_load(x, t, adnn_ref_offset(xd, base + j)) - mean) * inv;
      if (d->has_gain) v *= adnn_ref_load(gain, t, j);
      if (d->has_bias) v += adnn_ref_load(bias, t, j);
      adnn_ref_store(y, yd->dtype, adnn_ref_offset(yd, base + j), v);
    }
  }
}
