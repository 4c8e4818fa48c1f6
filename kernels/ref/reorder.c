/* Reference reorder: every element converted by the one definition of
 * kernels/common/convert.h, walking x and y by their own strides. In place
 * (same layout and dtype) each element is read before it is written. */
#include "config.h"

#include "kernels/common/convert.h"
#include "kernels/ref/ref.h"

/* Inputs {x}, outputs {y}. */
void adnn_ref_reorder(const adnn_plugin_reorder *p, const void *const *inputs,
                      void *const *outputs) {
  const char *x = inputs[0];
  char *y = outputs[0];
  const size_t xs = (size_t)adnn_cvt_size((int)p->x.dtype), ys = (size_t)adnn_cvt_size((int)p->y.dtype);
  for (int64_t i = 0; i < p->count; i++)
    adnn_convert_element((int)p->x.dtype, x + (size_t)adnn_ref_offset(&p->x, i) * xs,
                         (int)p->y.dtype, y + (size_t)adnn_ref_offset(&p->y, i) * ys);
}
