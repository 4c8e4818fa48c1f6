/*
 * Small helpers shared by the CPU conv2d algorithms (conv2d-<algo>.c): the
 * layout checks every `supports` function makes, the filter packing, and the
 * test for an epilogue. The algorithms read the problem's sizes from the
 * normalized problem (adnn_plugin_conv2d: N, C, H, W, K, R, S, P, Q, groups,
 * Cg, Kg, strides, pads, dilations) as the core computed them. Everything is
 * static inline so each algorithm stays a self-contained unit.
 */
#ifndef ADNN_CPU_CONV2D_H
#define ADNN_CPU_CONV2D_H

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "kernels/cpu/cpu_kernels.h"

/* Image layouts the fast algorithms handle: x and y must share one of them. */
enum { ADNN_CPU_CONV_OTHER = 0, ADNN_CPU_CONV_NCHW = 1, ADNN_CPU_CONV_NHWC = 2 };

/** The layout x and y share: ADNN_CPU_CONV_NCHW, ADNN_CPU_CONV_NHWC, or
 *  ADNN_CPU_CONV_OTHER when they are not both packed in one of them. */
static inline int adnn_cpu_conv2d_layout(const adnn_plugin_conv2d *d) {
  if (adnn_cpu_is_nchw(&d->x) && adnn_cpu_is_nchw(&d->y)) return ADNN_CPU_CONV_NCHW;
  if (adnn_cpu_is_nhwc(&d->x) && adnn_cpu_is_nhwc(&d->y)) return ADNN_CPU_CONV_NHWC;
  return ADNN_CPU_CONV_OTHER;
}

/** Writes a reason into why (when there is room) and returns 0, for the
 *  supports functions' refusals. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline int
adnn_cpu_conv2d_no(char *why, size_t why_size, const char *fmt, ...) {
  if (why && why_size) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
  }
  return 0;
}

/** Whether dim i of t has stride s; the stride of a dim of size 1 never
 *  matters (as in adnn_cpu_is_nchw). */
static inline int adnn_cpu_conv2d_stride_is(const adnn_tensor_desc *t, int i, int64_t s) {
  return t->dims[i] == 1 || t->strides[i] == s;
}

/** The checks every fast algorithm shares (the plugin has already checked
 *  the dtype against the implementation's): a packed bias, and x/y both
 *  packed NCHW or both packed NHWC. Returns the layout or 0 with a reason.
 *  Filters may have any strides (KCRS, KRSC, ...): each algorithm either reads
 *  them through their strides while transforming them or packs them first
 *  (adnn_cpu_conv2d_pack_kcrs). */
static inline int adnn_cpu_conv2d_common_supports(const adnn_plugin_conv2d *d, char *why,
                                                  size_t why_size) {
  if (d->has_bias && !adnn_cpu_conv2d_stride_is(&d->bias, 0, 1))
    return adnn_cpu_conv2d_no(why, why_size, "needs a packed bias vector");
  int layout = adnn_cpu_conv2d_layout(d);
  if (!layout) return adnn_cpu_conv2d_no(why, why_size, "needs x and y both packed NCHW or NHWC");
  return layout;
}

/** The slow_for predicate of the generic convolution algorithms (im2col_gemm,
 *  gemm_1x1, winograd_*, direct): a depthwise problem (groups == C == K > 1),
 *  which depthwise_direct runs. With one channel per group their GEMMs or
 *  vector lanes hold a single channel: measured 4x to 180x slower on the
 *  MobileNet-v1 layers (doc/tuning.md). */
static inline int adnn_cpu_conv2d_generic_slow(const void *problem, const adnn_cpu_env *env) {
  (void)env;
  const adnn_plugin_conv2d *d = (const adnn_plugin_conv2d *)problem;
  return d->groups > 1 && d->groups == d->C && d->K == d->C;
}

/** Whether w is packed [K, Cg, R, S] (KCRS), the layout the GEMM algorithms
 *  use as it is. */
static inline int adnn_cpu_conv2d_w_is_kcrs(const adnn_plugin_conv2d *d) {
  const adnn_tensor_desc *w = &d->w;
  int64_t Cg = w->dims[1], R = w->dims[2], S = w->dims[3];
  return adnn_cpu_conv2d_stride_is(w, 3, 1) && adnn_cpu_conv2d_stride_is(w, 2, S) &&
         adnn_cpu_conv2d_stride_is(w, 1, R * S) && adnn_cpu_conv2d_stride_is(w, 0, Cg * R * S);
}

/** The arguments of adnn_cpu_conv2d_pack_task. */
typedef struct adnn_cpu_conv2d_pack_job {
  const adnn_tensor_desc *w;
  const float *src;
  float *dst;
} adnn_cpu_conv2d_pack_job;

/** Packs filters [k0, k1) (a task of adnn_cpu_parallel_for). */
static inline void adnn_cpu_conv2d_pack_task(void *arg, int64_t k0, int64_t k1, int thread) {
  (void)thread;
  const adnn_cpu_conv2d_pack_job *j = arg;
  const int64_t *n = j->w->dims, *st = j->w->strides;
  float *dst = j->dst + k0 * n[1] * n[2] * n[3];
  for (int64_t k = k0; k < k1; k++)
    for (int64_t c = 0; c < n[1]; c++)
      for (int64_t r = 0; r < n[2]; r++) {
        const float *row = j->src + k * st[0] + c * st[1] + r * st[2];
        for (int64_t s = 0; s < n[3]; s++) *dst++ = row[s * st[3]];
      }
}

/** Copies w, whatever its strides, into dst packed as [K, Cg, R, S]; the
 *  copy is spread over the thread pool (it runs at each execution, since the
 *  weights only arrive then). */
static inline void adnn_cpu_conv2d_pack_kcrs(const adnn_plugin_conv2d *d, const float *w,
                                             float *dst) {
  adnn_cpu_conv2d_pack_job j = {&d->w, w, dst};
  int64_t per_k = d->w.dims[1] * d->w.dims[2] * d->w.dims[3];
  adnn_cpu_parallel_for(d->w.dims[0], per_k >= 4096 ? 1 : 4096 / per_k, adnn_cpu_conv2d_pack_task,
                        &j);
}

/** Whether the epilogue does anything: without a bias and with the identity
 *  activation the GEMM output is already final and no pass is made. */
static inline int adnn_cpu_conv2d_has_epilogue(const adnn_plugin_conv2d *d) {
  return d->has_bias || d->activation.kind != ADNN_ACTIVATION_IDENTITY;
}

/** Whether v fits OpenBLAS's int (Debian builds it with 32-bit sizes). */
/** The output columns [qlo, qhi) whose input column q * stride_w -
 *  pad_left + s * dilation_w lies in [0, W) for filter column s; the others
 *  read padding. Shared by the forward im2col and the backward kernels'
 *  col2im, im2col and direct loops. */
static inline void adnn_cpu_conv2d_valid_q(const adnn_plugin_conv2d *g, int64_t s, int64_t *qlo,
                                           int64_t *qhi) {
  int64_t a = g->pad_left - s * g->dilation_w; /* q*sw >= a */
  /* ceil(a / sw) written so that a huge stride cannot overflow. */
  int64_t lo = a <= 0 ? 0 : (a - 1) / g->stride_w + 1;
  int64_t b = g->W - 1 + g->pad_left - s * g->dilation_w; /* q*sw <= b */
  int64_t hi = b < 0 ? 0 : b / g->stride_w + 1;
  if (hi > g->Q) hi = g->Q;
  if (lo > g->Q) lo = g->Q;
  if (hi < lo) hi = lo;
  *qlo = lo;
  *qhi = hi;
}

static inline int adnn_cpu_conv2d_fits_int(int64_t v) { return v >= 0 && v <= (int64_t)INT_MAX; }

#endif /* ADNN_CPU_CONV2D_H */
