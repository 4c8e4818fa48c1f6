/*
 * Depthwise conv2d backward data (groups == C == K) as a direct kernel, F32
 * and F64, packed NCHW or NHWC, any filter size, stride, dilation and
 * padding. A depthwise gradient does R*S multiply-adds per dy element and
 * reuses nothing across channels, so a GEMM would only add overhead.
 *
 * Each task owns a disjoint part of dx and adds every contribution into it
 * itself (no atomics, no writes into another task's part, a fixed order):
 *   - NCHW: one (image, channel) plane per task; for each dy row and tap,
 *     the contributions form a row segment of dx (contiguous for stride 1,
 *     every stride_w-th element otherwise), which the compiler vectorizes.
 *   - NHWC: one dx row (image, h) per task; for each tap whose dy row
 *     exists, every dy pixel adds its C channels times the tap's C weights
 *     (the filters reordered to [R][S][C] in the workspace) into the dx
 *     pixel it read, a contiguous vector of C.
 */
#ifndef CONV_BWD_T
#include "config.h"

#include <string.h>

#include "kernels/cpu/conv2d_backward.h"

typedef struct dw_data_state {
  int nhwc, f64;
} dw_data_state;

static int dw_data_supports(const void *problem, const adnn_cpu_env *env, char *why,
                            size_t why_size) {
  (void)env;
  const adnn_plugin_conv2d *g = &((const adnn_plugin_conv2d_backward_data *)problem)->fwd;
  if (!adnn_cpu_conv2d_bwd_layout(g, why, why_size)) return 0;
  if (g->groups != g->C || g->K != g->C)
    return adnn_cpu_conv2d_no(why, why_size, "needs groups == C == K (depthwise, multiplier 1)");
  return 1;
}

static void dw_data_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                            size_t *workspace_bytes) {
  (void)env;
  const adnn_plugin_conv2d *g = &((const adnn_plugin_conv2d_backward_data *)problem)->fwd;
  dw_data_state *s = state;
  s->nhwc = adnn_cpu_conv2d_layout(g) == ADNN_CPU_CONV_NHWC;
  s->f64 = g->x.dtype == ADNN_DTYPE_F64;
  const size_t esize = s->f64 ? sizeof(double) : sizeof(float);
  *workspace_bytes = s->nhwc ? (size_t)(g->R * g->S * g->C) * esize : 0;
}

#define CONV_BWD_T float
#define CONV_BWD_FN(name) CONV_BWD_CAT_(name, f32)
#include "kernels/cpu/conv2d_backward_data-depthwise_direct.c"
#undef CONV_BWD_T
#undef CONV_BWD_FN
#define CONV_BWD_T double
#define CONV_BWD_FN(name) CONV_BWD_CAT_(name, f64)
#include "kernels/cpu/conv2d_backward_data-depthwise_direct.c"
#undef CONV_BWD_T
#undef CONV_BWD_FN

/* Inputs {dy, w}, outputs {dx}. */
static void dw_data_run(const void *problem, const void *state, const void *const *inputs,
                        void *const *outputs, void *workspace) {
  const adnn_plugin_conv2d_backward_data *b = problem;
  const dw_data_state *s = state;
  if (s->f64)
    dw_run_f64(b, s, inputs[0], inputs[1], outputs[0], workspace);
  else
    dw_run_f32(b, s, inputs[0], inputs[1], outputs[0], workspace);
}

const adnn_cpu_impl adnn_cpu_conv2d_backward_data_depthwise_direct = {
    .name = "depthwise_direct",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPES_FLOAT,
    .supports = dw_data_supports,
    .state_size = sizeof(dw_data_state),
    .reshape = dw_data_reshape,
    .run = dw_data_run,
};

#else /* CONV_BWD_T: the kernels of one element type */

typedef CONV_BWD_T CONV_BWD_FN(dw_real);
#define T CONV_BWD_FN(dw_real)

typedef struct CONV_BWD_FN(dw_args) {
  const adnn_plugin_conv2d *g;
  const T *dy, *w; /* w: through its strides (NCHW) or packed [R][S][C] (NHWC) */
  T *dx;
  T beta;
} CONV_BWD_FN(dw_args);

static void CONV_BWD_FN(dw_scale)(T *dx, int64_t n, T beta) {
  if (beta == 0)
    memset(dx, 0, (size_t)n * sizeof(T));
  else if (beta != 1)
    for (int64_t i = 0; i < n; i++) dx[i] *= beta;
}

/* NCHW: planes [t0, t1) of the N*C (image, channel) planes. */
static void CONV_BWD_FN(dw_nchw_task)(void *arg, int64_t t0, int64_t t1, int thread) {
  (void)thread;
  const CONV_BWD_FN(dw_args) *a = arg;
  const adnn_plugin_conv2d *g = a->g;
  const int64_t *st = g->w.strides, sw = g->stride_w;
  for (int64_t t = t0; t < t1; t++) {
    const int64_t c = t % g->C;
    T *dxp = a->dx + t * g->H * g->W;
    const T *dyp = a->dy + t * g->P * g->Q;
    CONV_BWD_FN(dw_scale)(dxp, g->H * g->W, a->beta);
    for (int64_t r = 0; r < g->R; r++)
      for (int64_t s = 0; s < g->S; s++) {
        const T wv = a->w[c * st[0] + r * st[2] + s * st[3]];
        int64_t qlo, qhi;
        adnn_cpu_conv2d_valid_q(g, s, &qlo, &qhi);
        if (qhi == qlo) continue;
        const int64_t w0 = qlo * sw - g->pad_left + s * g->dilation_w;
        for (int64_t p = 0; p < g->P; p++) {
          const int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
          if (h < 0 || h >= g->H) continue;
          T *dst = dxp + h * g->W + w0;
          const T *src = dyp + p * g->Q;
          if (sw == 1)
            for (int64_t q = qlo; q < qhi; q++) dst[q - qlo] += wv * src[q];
          else
            for (int64_t q = qlo, i = 0; q < qhi; q++, i += sw) dst[i] += wv * src[q];
        }
      }
  }
}

/* NHWC: dx rows [t0, t1) of the N*H (image, row) rows. */
static void CONV_BWD_FN(dw_nhwc_task)(void *arg, int64_t t0, int64_t t1, int thread) {
  (void)thread;
  const CONV_BWD_FN(dw_args) *a = arg;
  const adnn_plugin_conv2d *g = a->g;
  const int64_t C = g->C;
  for (int64_t t = t0; t < t1; t++) {
    const int64_t h = t % g->H, n = t / g->H;
    T *dxr = a->dx + t * g->W * C;
    CONV_BWD_FN(dw_scale)(dxr, g->W * C, a->beta);
    for (int64_t r = 0; r < g->R; r++) {
      /* The dy row whose tap r reads this dx row, when the stride has one. */
      const int64_t ph = h + g->pad_top - r * g->dilation_h;
      if (ph < 0 || ph % g->stride_h != 0 || ph / g->stride_h >= g->P) continue;
      const T *dyr = a->dy + (n * g->P + ph / g->stride_h) * g->Q * C;
      for (int64_t s = 0; s < g->S; s++) {
        const T *wt = a->w + (r * g->S + s) * C;
        int64_t qlo, qhi;
        adnn_cpu_conv2d_valid_q(g, s, &qlo, &qhi);
        for (int64_t q = qlo; q < qhi; q++) {
          T *dst = dxr + (q * g->stride_w - g->pad_left + s * g->dilation_w) * C;
          const T *src = dyr + q * C;
          for (int64_t c = 0; c < C; c++) dst[c] += wt[c] * src[c];
        }
      }
    }
  }
}

static void CONV_BWD_FN(dw_run)(const adnn_plugin_conv2d_backward_data *b,
                                const dw_data_state *s, const T *dy, const T *w, T *dx,
                                void *workspace) {
  const adnn_plugin_conv2d *g = &b->fwd;
  CONV_BWD_FN(dw_args) a = {g, dy, w, dx, (T)b->beta};
  if (s->nhwc) {
    /* wt[r][s][c] = w[c][0][r][s]: small (R*S*C), done on the caller. */
    T *wt = workspace;
    const int64_t *st = g->w.strides;
    for (int64_t r = 0; r < g->R; r++)
      for (int64_t sx = 0; sx < g->S; sx++)
        for (int64_t c = 0; c < g->C; c++)
          wt[(r * g->S + sx) * g->C + c] = w[c * st[0] + r * st[2] + sx * st[3]];
    a.w = wt;
    const int64_t per_row = g->W * g->C * g->R;
    adnn_cpu_parallel_for(g->N * g->H, per_row >= 4096 ? 1 : 4096 / per_row,
                          CONV_BWD_FN(dw_nhwc_task), &a);
  } else {
    const int64_t per_plane = g->H * g->W * g->R;
    adnn_cpu_parallel_for(g->N * g->C, per_plane >= 4096 ? 1 : 4096 / per_plane,
                          CONV_BWD_FN(dw_nchw_task), &a);
  }
}

#undef T
#endif /* CONV_BWD_T */
