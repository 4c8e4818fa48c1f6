/* Reference quantize and dequantize: every element by the scalar definition
 * of kernels/common/quantize.h, walking x and y by their own strides, the
 * channel of element i being (i / inner) % channels. MXCSR's FTZ and DAZ
 * are cleared while they run so that subnormal inputs and scales are
 * divided exactly as IEEE says, whatever the caller set. */
#include "config.h"

#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define REF_Q_X86 1
#endif

#include "kernels/common/quantize.h"
#include "kernels/ref/ref.h"

static unsigned csr_enter(void) {
#ifdef REF_Q_X86
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(csr & ~0x8040u); /* FTZ (bit 15) and DAZ (bit 6) off */
  return csr;
#else
  return 0;
#endif
}

static void csr_leave(unsigned csr) {
#ifdef REF_Q_X86
  _mm_setcsr(csr);
#else
  (void)csr;
#endif
}

static void channel_params(const void *const *inputs, int32_t axis, int64_t i, int64_t inner,
                           int64_t channels, float *scale, int32_t *zp) {
  if (axis < 0) return;
  const int64_t c = (i / inner) % channels;
  *scale = ((const float *)inputs[1])[c];
  *zp = ((const int32_t *)inputs[2])[c];
}

/* Inputs {x[, scales, zero_points]}, outputs {y}. */
void adnn_ref_quantize(const adnn_plugin_quantize *p, const void *const *inputs,
                       void *const *outputs) {
  const unsigned csr = csr_enter();
  const float *x = inputs[0];
  const int u8 = p->y.dtype == ADNN_DTYPE_U8;
  const int32_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
  for (int64_t i = 0; i < p->count; i++) {
    float scale = p->scale;
    int32_t zp = p->zero_point;
    channel_params(inputs, p->axis, i, p->inner, p->channels, &scale, &zp);
    const int32_t v = adnn_q_quantize(x[adnn_ref_offset(&p->x, i)], scale, zp, lo, hi);
    const int64_t o = adnn_ref_offset(&p->y, i);
    if (u8) ((uint8_t *)outputs[0])[o] = (uint8_t)v;
    else ((int8_t *)outputs[0])[o] = (int8_t)v;
  }
  csr_leave(csr);
}

void adnn_ref_dequantize(const adnn_plugin_dequantize *p, const void *const *inputs,
                         void *const *outputs) {
  const unsigned csr = csr_enter();
  const int u8 = p->x.dtype == ADNN_DTYPE_U8;
  float *y = outputs[0];
  for (int64_t i = 0; i < p->count; i++) {
    float scale = p->scale;
    int32_t zp = p->zero_point;
    channel_params(inputs, p->axis, i, p->inner, p->channels, &scale, &zp);
    const int64_t o = adnn_ref_offset(&p->x, i);
    const int32_t v = u8 ? ((const uint8_t *)inputs[0])[o] : ((const int8_t *)inputs[0])[o];
    y[adnn_ref_offset(&p->y, i)] = adnn_q_dequantize(v, scale, zp);
  }
  csr_leave(csr);
}
