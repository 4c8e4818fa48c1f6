/*
 * Reference optimizer step (SGD with momentum, dampening, Nesterov and weight
 * decay; Adam; AdamW), in double, one element at a time, as doc/ops.md
 * writes PyTorch's rules. lr and step are read from the problem at every
 * call: the core changes them between executions.
 */
#include "config.h"

#include <math.h>

#include "kernels/ref/ref.h"

/* Inputs {grad_0..grad_{T-1}}; outputs {p_0..}, then {buf_0..} (SGD with
 * momentum) or {m_0.., v_0..} (Adam, AdamW), then with master weights the
 * model copies {w_0..}. The gradients are then of model_dtype, read exactly
 * into double; each copy is the rounding of the F32 parameter as stored, so
 * it never rounds twice from the double. */
void adnn_ref_optimizer(const adnn_plugin_optimizer *p, const void *const *inputs,
                        void *const *outputs) {
  const adnn_dtype dt = p->dtype;
  const int64_t T = p->tensor_count;
  const double lr = p->lr, wd = p->weight_decay;
  const int64_t step = p->step;
  const double bc1 = 1.0 - pow(p->beta1, (double)step), bc2 = 1.0 - pow(p->beta2, (double)step);
  const adnn_dtype gdt = p->model_dtype != 0 ? p->model_dtype : dt;
  const int64_t states = p->kind == ADNN_OPTIMIZER_SGD ? (p->momentum != 0.0 ? 1 : 0) : 2;
  for (int64_t i = 0; i < T; i++) {
    const void *gp = inputs[i];
    void *pp = outputs[i];
    void *wp = p->model_dtype != 0 ? outputs[(1 + states) * T + i] : NULL;
    for (int64_t k = 0; k < p->sizes[i]; k++) {
      double w = adnn_ref_load(pp, dt, k), g = adnn_ref_load(gp, gdt, k);
      if (p->kind == ADNN_OPTIMIZER_SGD) {
        if (wd != 0.0) g += wd * w;
        if (p->momentum != 0.0) {
          void *bp = outputs[T + i];
          double buf = adnn_ref_load(bp, dt, k);
          buf = step == 1 ? g : p->momentum * buf + (1.0 - p->dampening) * g;
          adnn_ref_store(bp, dt, k, buf);
          g = p->nesterov ? g + p->momentum * buf : buf;
        }
        w -= lr * g;
      } else {
        void *mp = outputs[T + i], *vp = outputs[2 * T + i];
        if (p->kind == ADNN_OPTIMIZER_ADAMW) w *= 1.0 - lr * wd;
        else if (wd != 0.0) g += wd * w;
        const double m = p->beta1 * adnn_ref_load(mp, dt, k) + (1.0 - p->beta1) * g;
        const double v = p->beta2 * adnn_ref_load(vp, dt, k) + (1.0 - p->beta2) * g * g;
        adnn_ref_store(mp, dt, k, m);
        adnn_ref_store(vp, dt, k, v);
        w -= lr * (m / bc1) / (sqrt(v / bc2) + p->epsilon);
      }
      adnn_ref_store(pp, dt, k, w);
      if (wp) adnn_ref_store(wp, p->model_dtype, k, adnn_ref_load(pp, dt, k));
    }
  }
}
