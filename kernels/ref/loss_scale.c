/*
 * Reference loss scaling: t *= factor (kernels/common/loss_scale.h) one
 * element at a time, the product in F32 (F64 for F64 tensors, the F32
 * factor widened) and stored with one more rounding for F16/BF16; found_inf
 * is set to 1 when any product is not finite and is otherwise left alone.
 */
#include "config.h"

#include <math.h>

#include "kernels/common/loss_scale.h"
#include "kernels/ref/ref.h"

/* Inputs {scale}; outputs {t_0..t_{T-1}, found_inf}. */
void adnn_ref_loss_scale(const adnn_plugin_loss_scale *p, const void *const *inputs,
                         void *const *outputs) {
  const adnn_dtype dt = p->dtype;
  const float f = adnn_loss_scale_factor(p->kind == ADNN_LOSS_SCALE_UNSCALE,
                                         *(const float *)inputs[0]);
  int found = 0;
  for (int64_t i = 0; i < p->tensor_count; i++) {
    void *t = outputs[i];
    for (int64_t k = 0; k < p->sizes[i]; k++) {
      double v;
      if (dt == ADNN_DTYPE_F64) v = adnn_ref_load(t, dt, k) * (double)f;
      else v = (double)((float)adnn_ref_load(t, dt, k) * f);
      adnn_ref_store(t, dt, k, v);
      if (!isfinite(adnn_ref_load(t, dt, k))) found = 1;
    }
  }
  if (found) adnn_ref_store(outputs[p->tensor_count], dt, 0, 1.0);
}
