/*
 * Small helpers shared by the CPU conv2d algorithms (conv2d_*.c): the problem's
 * sizes in one struct, the layout checks every `supports` function makes, and
 * the epilogue call each algorithm issues on the rows it has just written.
 * Everything is static inline so each algorithm stays a self-contained unit.
 */
#ifndef ADNN_CPU_CONV2D_COMMON_H
#define ADNN_CPU_CONV2D_COMMON_H

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "kernels/cpu/cpu_kernels.h"

/* The conv2d problem with short names: x [N,C,H,W], w [K,Cg,R,S], y [N,K,P,Q],
 * G groups of Cg input and Kg output channels each. */
typedef struct adnn_cpu_conv2d_geom {
  int64_t N, C, H, W, K, R, S, P, Q;
  int64_t G, Cg, Kg;
  int64_t sh, sw, pt, pl, dh, dw;
} adnn_cpu_conv2d_geom;

static inline adnn_cpu_conv2d_geom adnn_cpu_conv2d_geom_of(const adnn_conv2d_desc *d) {
  adnn_cpu_conv2d_geom g;
  g.N = d->x.dims[0];
  g.C = d->x.dims[1];
  g.H = d->x.dims[2];
  g.W = d->x.dims[3];
  g.K = d->w.dims[0];
  g.R = d->w.dims[2];
  g.S = d->w.dims[3];
  g.P = d->y.dims[2];
  g.Q = d->y.dims[3];
  g.G = d->groups;
  g.Cg = g.C / g.G;
  g.Kg = g.K / g.G;
  g.sh = d->stride_h;
  g.sw = d->stride_w;
  g.pt = d->pad_top;
  g.pl = d->pad_left;
  g.dh = d->dilation_h;
  g.dw = d->dilation_w;
  return g;
}

/* Image layouts the fast algorithms handle: x and y must share one of them. */
enum { ADNN_CPU_CONV_OTHER = 0, ADNN_CPU_CONV_NCHW = 1, ADNN_CPU_CONV_NHWC = 2 };

static inline int adnn_cpu_conv2d_layout(const adnn_conv2d_desc *d) {
  if (adnn_cpu_is_nchw(&d->x) && adnn_cpu_is_nchw(&d->y)) return ADNN_CPU_CONV_NCHW;
  if (adnn_cpu_is_nhwc(&d->x) && adnn_cpu_is_nhwc(&d->y)) return ADNN_CPU_CONV_NHWC;
  return ADNN_CPU_CONV_OTHER;
}

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

/* Whether dim i of t has stride s; the stride of a dim of size 1 never
 * matters (as in adnn_cpu_is_nchw). */
static inline int adnn_cpu_conv2d_stride_is(const adnn_tensor_desc *t, int i, int64_t s) {
  return t->dims[i] == 1 || t->strides[i] == s;
}

/* The checks every F32 algorithm shares: dtype, a packed bias, and x/y both
 * packed NCHW or both packed NHWC. Returns the layout or 0 with a reason.
 * Filters may have any strides (KCRS, KRSC, ...): each algorithm either reads
 * them through their strides while transforming them or packs them first
 * (adnn_cpu_conv2d_pack_kcrs). */
static inline int adnn_cpu_conv2d_common_supports(const adnn_conv2d_desc *d, char *why,
                                                  size_t why_size) {
  if (d->x.dtype != ADNN_DTYPE_F32)
    return adnn_cpu_conv2d_no(why, why_size, "only F32 is implemented");
  if (d->has_bias && !adnn_cpu_conv2d_stride_is(&d->bias, 0, 1))
    return adnn_cpu_conv2d_no(why, why_size, "needs a packed bias vector");
  int layout = adnn_cpu_conv2d_layout(d);
  if (!layout) return adnn_cpu_conv2d_no(why, why_size, "needs x and y both packed NCHW or NHWC");
  return layout;
}

/* Whether w is packed [K, Cg, R, S] (KCRS), the layout the GEMM algorithms use
 * as it is. */
static inline int adnn_cpu_conv2d_w_is_kcrs(const adnn_conv2d_desc *d) {
  const adnn_tensor_desc *w = &d->w;
  int64_t Cg = w->dims[1], R = w->dims[2], S = w->dims[3];
  return adnn_cpu_conv2d_stride_is(w, 3, 1) && adnn_cpu_conv2d_stride_is(w, 2, S) &&
         adnn_cpu_conv2d_stride_is(w, 1, R * S) && adnn_cpu_conv2d_stride_is(w, 0, Cg * R * S);
}

typedef struct adnn_cpu_conv2d_pack_job {
  const adnn_tensor_desc *w;
  const float *src;
  float *dst;
} adnn_cpu_conv2d_pack_job;

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

/* Copies w, whatever its strides, into dst packed as [K, Cg, R, S]; the copy
 * is spread over the thread pool (it runs at each execution, since the
 * weights only arrive then). */
static inline void adnn_cpu_conv2d_pack_kcrs(const adnn_conv2d_desc *d, const float *w,
                                             float *dst) {
  adnn_cpu_conv2d_pack_job j = {&d->w, w, dst};
  int64_t per_k = d->w.dims[1] * d->w.dims[2] * d->w.dims[3];
  adnn_cpu_parallel_for(d->w.dims[0], per_k >= 4096 ? 1 : 4096 / per_k, adnn_cpu_conv2d_pack_task,
                        &j);
}

/* Whether the epilogue does anything: without a bias and with the identity
 * activation the GEMM output is already final and no pass is made. */
static inline int adnn_cpu_conv2d_has_epilogue(const adnn_conv2d_desc *d) {
  return d->has_bias || d->activation.kind != ADNN_ACTIVATION_IDENTITY;
}

/* OpenBLAS as Debian builds it takes 32-bit sizes. */
static inline int adnn_cpu_conv2d_fits_int(int64_t v) { return v >= 0 && v <= (int64_t)INT_MAX; }

#endif
