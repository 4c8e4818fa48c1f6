/* Reference softmax / log-softmax along one axis, any strides. */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref.h"

/* Inputs {x}, outputs {y}; the axis is already in 0..rank-1. */
void adnn_ref_softmax(const adnn_plugin_softmax *p, const void *const *inputs,
                      void *const *outputs) {
  const adnn_tensor_desc *xd = &p->x, *yd = &p->y;
  const void *x = inputs[0];
  void *y = outputs[0];
  const int axis = p->axis;
  const int64_t L = xd->dims[axis];
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; i++) outer *= xd->dims[i];
  for (int i = axis + 1; i < xd->rank; i++) inner *= xd->dims[i];
  const int64_t xs = xd->strides[axis], ys = yd->strides[axis];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      /* The first element of the slice (index 0 along the axis). */
      const int64_t lin = o * L * inner + in;
      const int64_t xb = adnn_ref_offset(xd, lin), yb = adnn_ref_offset(yd, lin);
      /* Pass 1: maximum, and whether the slice holds NaN or +inf. */
      double m = -INFINITY;
      int poisoned = 0;
      for (int64_t j = 0; j < L; j++) {
        const double v = adnn_ref_load(x, xd->dtype, xb + j * xs);
        if (isnan(v) || v == INFINITY) poisoned = 1;
        else if (v > m) m = v;
      }
      if (poisoned || m == -INFINITY) { /* NaN/+inf inside, or only -inf */
        for (int64_t j = 0; j < L; j++) adnn_ref_store(y, yd->dtype, yb + j * ys, NAN);
        continue;
      }
      /* Pass 2: the sum of exp(x - max) (every term <= 1, one term is 1). */
      double sum = 0.0;
      for (int64_t j = 0; j < L; j++) sum += exp(adnn_ref_load(x, xd->dtype, xb + j * xs) - m);
      /* Pass 3: write (each x is read before the y at the same place is written,
       * so y == x works). */
      const double log_sum = log(sum);
      for (int64_t j = 0; j < L; j++) {
        const double v = adnn_ref_load(x, xd->dtype, xb + j * xs) - m;
        adnn_ref_store(y, yd->dtype, yb + j * ys, p->log ? v - log_sum : exp(v) / sum);
      }
    }
}
