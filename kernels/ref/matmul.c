/* Reference matmul with its epilogue: y = act(alpha * (a @ b) + bias +
 * residual_scale * r) for any strides, F32 and F64, accumulating each dot
 * product in double. */
#include "config.h"

#include "kernels/ref/ref.h"

/* Inputs {a, b[, bias][, r]}, outputs {y}. The core brought a, b, r and y to
 * rank 4 [B0, B1, rows, cols] (b's broadcast batch dims have stride 0), so
 * one loop nest serves every rank and broadcast. With r == y (the in-place
 * residual) each y element's r is read before that element is written, and
 * no other element reads it. */
void adnn_ref_matmul(const adnn_plugin_matmul *p, const void *const *inputs,
                     void *const *outputs) {
  const void *a = inputs[0], *b = inputs[1];
  const void *bias = p->has_bias ? inputs[2] : NULL;
  const void *r = p->has_residual ? inputs[2 + p->has_bias] : NULL;
  void *y = outputs[0];
  const adnn_dtype dt = p->y.dtype;
  const int64_t *sa = p->a.strides, *sb = p->b.strides, *sy = p->y.strides;
  const int64_t *sr = p->residual.strides;
  for (int64_t b0 = 0; b0 < p->batch0; b0++)
    for (int64_t b1 = 0; b1 < p->batch1; b1++) {
      const int64_t oa = b0 * sa[0] + b1 * sa[1], ob = b0 * sb[0] + b1 * sb[1];
      const int64_t oy = b0 * sy[0] + b1 * sy[1];
      const int64_t orr = r ? b0 * sr[0] + b1 * sr[1] : 0;
      for (int64_t i = 0; i < p->M; i++)
        for (int64_t j = 0; j < p->N; j++) {
          double acc = 0.0;
          for (int64_t k = 0; k < p->K; k++)
            acc += adnn_ref_load(a, dt, oa + i * sa[2] + k * sa[3]) *
                   adnn_ref_load(b, dt, ob + k * sb[2] + j * sb[3]);
          double v = p->alpha * acc;
          if (bias) v += adnn_ref_load(bias, dt, j * p->bias.strides[0]);
          if (r) v += p->residual_scale * adnn_ref_load(r, dt, orr + i * sr[2] + j * sr[3]);
          adnn_ref_store(y, dt, oy + i * sy[2] + j * sy[3],
                         adnn_ref_activation_apply(&p->activation, v));
        }
    }
}
