/* Reference reduction (sum, mean, max, min over a set of axes), any strides. */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref.h"

/* Inputs {x}, outputs {y}. Each output element walks its `count` input
 * elements in row-major order of the reduced dims, accumulating in double. */
void adnn_ref_reduce(const adnn_plugin_reduce *p, const void *const *inputs,
                     void *const *outputs) {
  const adnn_tensor_desc *xd = &p->x;
  const void *x = inputs[0];
  void *y = outputs[0];
  /* kept: x's dims with the reduced ones set to 1 (the outputs, in x's
   * strides); reduced: the other way round (the elements of one output). */
  adnn_tensor_desc kept = *xd, reduced = *xd;
  for (int i = 0; i < xd->rank; i++) {
    if ((p->axes >> i) & 1u) kept.dims[i] = 1;
    else reduced.dims[i] = 1;
  }
  for (int64_t o = 0; o < p->outputs; o++) {
    const int64_t xo = adnn_ref_offset(&kept, o);
    double acc = 0.0;
    int nan = 0;
    for (int64_t r = 0; r < p->count; r++) {
      const double v = adnn_ref_load(x, xd->dtype, xo + adnn_ref_offset(&reduced, r));
      if (isnan(v)) nan = 1;
      if (p->kind == ADNN_REDUCE_SUM || p->kind == ADNN_REDUCE_MEAN) acc += v;
      else if (r == 0 || (p->kind == ADNN_REDUCE_MAX ? v > acc : v < acc)) acc = v;
    }
    if (p->kind == ADNN_REDUCE_MEAN) acc /= (double)p->count;
    else if ((p->kind == ADNN_REDUCE_MAX || p->kind == ADNN_REDUCE_MIN) && nan) acc = NAN;
    adnn_ref_store(y, p->yk.dtype, adnn_ref_offset(&p->yk, o), acc);
  }
}
