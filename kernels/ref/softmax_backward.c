/* Reference softmax / log-softmax backward along one axis, any strides. */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref.h"

/* Inputs {y, dy} (fwd.y's layout), outputs {dx} (fwd.x's layout). Per slice:
 * softmax dx = y * (dy - sum(y * dy)); log-softmax dx = dy - exp(y) * sum(dy);
 * the sum in double, formed before any dx of the slice is written (so dx
 * may be dy). */
void adnn_ref_softmax_backward(const adnn_plugin_softmax_backward *p, const void *const *inputs,
                               void *const *outputs) {
  const adnn_tensor_desc *xd = &p->fwd.x, *yd = &p->fwd.y;
  const void *y = inputs[0], *dy = inputs[1];
  void *dx = outputs[0];
  const int axis = p->fwd.axis;
  const int64_t L = yd->dims[axis];
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; i++) outer *= yd->dims[i];
  for (int i = axis + 1; i < yd->rank; i++) inner *= yd->dims[i];
  const int64_t ys = yd->strides[axis], xs = xd->strides[axis];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      const int64_t lin = o * L * inner + in;
      const int64_t yb = adnn_ref_offset(yd, lin), xb = adnn_ref_offset(xd, lin);
      double sum = 0.0;
      for (int64_t j = 0; j < L; j++) {
        const double g = adnn_ref_load(dy, yd->dtype, yb + j * ys);
        sum += p->fwd.log ? g : adnn_ref_load(y, yd->dtype, yb + j * ys) * g;
      }
      for (int64_t j = 0; j < L; j++) {
        const double yv = adnn_ref_load(y, yd->dtype, yb + j * ys);
        const double g = adnn_ref_load(dy, yd->dtype, yb + j * ys);
        adnn_ref_store(dx, xd->dtype, xb + j * xs, p->fwd.log ? g - exp(yv) * sum : yv * (g - sum));
      }
    }
}
