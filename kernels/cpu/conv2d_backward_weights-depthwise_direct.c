/*
 * Depthwise conv2d backward weights (groups == C == K) as a direct kernel,
 * F32 and F64, packed NCHW or NHWC, any filter size, stride, dilation and
 * padding: dw[c, 0, r, s] = sum over n, p, q of dy[n, c, p, q] * x[n, c, h,
 * v]. Each task owns a set of channels and sums each tap's products in
 * double, in the fixed order n, p, q, so dw does not depend on the threads:
 *   - NCHW: one channel per task; each (tap, dy row) is a dot product of a
 *     dy row with a (strided) x row segment;
 *   - NHWC: CB consecutive channels per task, accumulated as a vector over
 *     the channels (contiguous in both x and dy).
 * db is the deterministic sum of conv2d_backward.h.
 */
#ifndef CONV_BWD_T
#include "config.h"

#include <string.h>

#include "kernels/cpu/conv2d_backward.h"

#define CB 16

typedef struct dw_weights_state {
  int nhwc, f64;
} dw_weights_state;

static int dw_weights_supports(const void *problem, const adnn_cpu_env *env, char *why,
                               size_t why_size) {
  (void)env;
  const adnn_plugin_conv2d *g = &((const adnn_plugin_conv2d_backward_weights *)problem)->fwd;
  if (!adnn_cpu_conv2d_bwd_layout(g, why, why_size)) return 0;
  if (g->groups != g->C || g->K != g->C)
    return adnn_cpu_conv2d_no(why, why_size, "needs groups == C == K (depthwise, multiplier 1)");
  return 1;
}

static void dw_weights_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                               size_t *workspace_bytes) {
  (void)env;
  const adnn_plugin_conv2d *g = &((const adnn_plugin_conv2d_backward_weights *)problem)->fwd;
  dw_weights_state *s = state;
  s->nhwc = adnn_cpu_conv2d_layout(g) == ADNN_CPU_CONV_NHWC;
  s->f64 = g->x.dtype == ADNN_DTYPE_F64;
  *workspace_bytes = 0;
}

#define CONV_BWD_T float
#define CONV_BWD_FN(name) CONV_BWD_CAT_(name, f32)
#include "kernels/cpu/conv2d_backward_weights-depthwise_direct.c"
#undef CONV_BWD_T
#undef CONV_BWD_FN
#define CONV_BWD_T double
#define CONV_BWD_FN(name) CONV_BWD_CAT_(name, f64)
#include "kernels/cpu/conv2d_backward_weights-depthwise_direct.c"
#undef CONV_BWD_T
#undef CONV_BWD_FN

/* Inputs {x, dy}, outputs {dw} or {dw, db}. */
static void dw_weights_run(const void *problem, const void *state, const void *const *inputs,
                           void *const *outputs, void *workspace) {
  (void)workspace;
  const adnn_plugin_conv2d_backward_weights *b = problem;
  const dw_weights_state *s = state;
  if (s->f64)
    dww_run_f64(b, s, inputs[0], inputs[1], outputs[0]);
  else
    dww_run_f32(b, s, inputs[0], inputs[1], outputs[0]);
  if (b->fwd.has_bias) adnn_cpu_conv2d_bwd_bias(&b->fwd, inputs[1], outputs[1], b->beta, s->nhwc);
}

const adnn_cpu_impl adnn_cpu_conv2d_backward_weights_depthwise_direct = {
    .name = "depthwise_direct",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPES_FLOAT,
    .supports = dw_weights_supports,
    .state_size = sizeof(dw_weights_state),
    .reshape = dw_weights_reshape,
    .run = dw_weights_run,
};

#else /* CONV_BWD_T: the kernels of one element type */

typedef CONV_BWD_T CONV_BWD_FN(dww_real);
#define T CONV_BWD_FN(dww_real)

typedef struct CONV_BWD_FN(dww_args) {
  const adnn_plugin_conv2d *g;
  const T *x, *dy;
  T *dw;
  double beta;
} CONV_BWD_FN(dww_args);

static void CONV_BWD_FN(dww_store)(const CONV_BWD_FN(dww_args) * a, int64_t c, int64_t r,
                                   int64_t s, double acc) {
  const int64_t *st = a->g->w.strides;
  T *dst = a->dw + c * st[0] + r * st[2] + s * st[3];
  *dst = (T)(a->beta != 0.0 ? a->beta * (double)*dst + acc : acc);
}

/* NCHW: channels [c0, c1). */
static void CONV_BWD_FN(dww_nchw_task)(void *arg, int64_t c0, int64_t c1, int thread) {
  (void)thread;
  const CONV_BWD_FN(dww_args) *a = arg;
  const adnn_plugin_conv2d *g = a->g;
  const int64_t sw = g->stride_w;
  for (int64_t c = c0; c < c1; c++)
    for (int64_t r = 0; r < g->R; r++)
      for (int64_t s = 0; s < g->S; s++) {
        int64_t qlo, qhi;
        adnn_cpu_conv2d_valid_q(g, s, &qlo, &qhi);
        double acc = 0.0;
        if (qhi > qlo) {
          const int64_t w0 = qlo * sw - g->pad_left + s * g->dilation_w;
          for (int64_t n = 0; n < g->N; n++) {
            const T *xp = a->x + (n * g->C + c) * g->H * g->W;
            const T *dyp = a->dy + (n * g->C + c) * g->P * g->Q;
            for (int64_t p = 0; p < g->P; p++) {
              const int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
              if (h < 0 || h >= g->H) continue;
              const T *xr = xp + h * g->W + w0;
              const T *dyr = dyp + p * g->Q;
              for (int64_t q = qlo, i = 0; q < qhi; q++, i += sw)
                acc += (double)dyr[q] * (double)xr[i];
            }
          }
        }
        CONV_BWD_FN(dww_store)(a, c, r, s, acc);
      }
}

/* NHWC: channel blocks [b0, b1) of CB channels. */
static void CONV_BWD_FN(dww_nhwc_task)(void *arg, int64_t b0, int64_t b1, int thread) {
  (void)thread;
  const CONV_BWD_FN(dww_args) *a = arg;
  const adnn_plugin_conv2d *g = a->g;
  const int64_t C = g->C;
  for (int64_t blk = b0; blk < b1; blk++) {
    const int64_t c0 = blk * CB, cl = C - c0 < CB ? C - c0 : CB;
    for (int64_t r = 0; r < g->R; r++)
      for (int64_t s = 0; s < g->S; s++) {
        int64_t qlo, qhi;
        adnn_cpu_conv2d_valid_q(g, s, &qlo, &qhi);
        double acc[CB];
        for (int64_t c = 0; c < CB; c++) acc[c] = 0.0;
        for (int64_t n = 0; n < g->N; n++)
          for (int64_t p = 0; p < g->P; p++) {
            const int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
            if (h < 0 || h >= g->H) continue;
            for (int64_t q = qlo; q < qhi; q++) {
              const int64_t v = q * g->stride_w - g->pad_left + s * g->dilation_w;
              const T *xv = a->x + ((n * g->H + h) * g->W + v) * C + c0;
              const T *dyv = a->dy + ((n * g->P + p) * g->Q + q) * C + c0;
              for (int64_t c = 0; c < cl; c++) acc[c] += (double)dyv[c] * (double)xv[c];
            }
          }
        for (int64_t c = 0; c < cl; c++) CONV_BWD_FN(dww_store)(a, c0 + c, r, s, acc[c]);
      }
  }
}

static void CONV_BWD_FN(dww_run)(const adnn_plugin_conv2d_backward_weights *b,
                                 const dw_weights_state *s, const T *x, const T *dy, T *dw) {
  const adnn_plugin_conv2d *g = &b->fwd;
  CONV_BWD_FN(dww_args) a = {g, x, dy, dw, b->beta};
  if (s->nhwc)
    adnn_cpu_parallel_for((g->C + CB - 1) / CB, 1, CONV_BWD_FN(dww_nhwc_task), &a);
  else
    adnn_cpu_parallel_for(g->C, 1, CONV_BWD_FN(dww_nchw_task), &a);
}

#undef T
#endif /* CONV_BWD_T */
