/*
 * conv2d in F16 and BF16 on the CPU ("lowp"): x, w and the bias are widened
 * to F32 (exactly: every F16 and BF16 value is an F32 value) into the
 * workspace, the F32 algorithm the plugin would choose for the same problem
 * in F32 runs on them (F32 accumulation, the bias and the activation in F32,
 * in registers where that algorithm fuses them), and y is rounded once to
 * its dtype, to nearest even (kernels/cpu/lowp.h). The result is therefore
 * the F32 convolution of the rounded inputs plus one rounding of the output:
 * the bound of doc/numerics.md ("conv2d in F16/BF16").
 *
 * This is the "conversion to F32" path of issue 13 for every CPU: no
 * instruction of the AVX-512-BF16 / AMX / AVX512-FP16 families is used yet,
 * so F16/BF16 convolutions cost the F32 time plus the conversions (measured
 * in doc/performance.md). The conversions run on the plugin's threads in
 * blocks; nothing is allocated at run time.
 *
 * BF16 convolutions with groups 1 on a CPU whose low-precision GEMM
 * multiplies BF16 values themselves (AVX-512-BF16: gemm_lowp.c's
 * avx512_bf16) take another route: a convolution is a matmul of w^T with
 * the columns of x, which the plugin's matmul `lowp` runs (matmul_route
 * below: a 1x1 stride-1 filter without padding on x where it lies, other
 * NCHW problems with KCRS filters on columns gathered into the workspace).
 * Nothing is widened but the K bias values; the result is that matmul's:
 * the F32 accumulation of the exact products, the bias and the activation
 * in F32, one rounding (the same bound, doc/numerics.md). Measured on a
 * Zen 4 EPYC (doc/performance.md, 2026-12-03): ResNet-50 at batch 8 in
 * BF16 1.5x the F32 network's speed this way, 0.87x widened.
 *
 * Restrictions: x and y packed NCHW or NHWC, a packed bias (what every fast
 * F32 algorithm needs; the reference loops run the rest). w may have any
 * strides: its whole span is widened with the same strides.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/conv2d.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm_lowp.h"
#include "kernels/cpu/lowp.h"
#include "kernels/cpu/lowp_widen.h"

/* The F32 algorithms lowp may run, in the plugin's order of preference (the
 * conv2d list of impl_list.h, whose F32 members these are). */
#define CL_ADDRESS_(op, impl) &adnn_cpu_##op##_##impl,
static const adnn_cpu_impl *const cl_inner_list[] = {ADNN_CPU_CONV2D_IMPLS(CL_ADDRESS_)};
#undef CL_ADDRESS_

/* The largest inner state lowp can hold (checked in supports: an algorithm
 * with a larger state is not used). */
#define CL_MAX_STATE 2048

typedef struct cl_state {
  int via_matmul;           /* the BF16 matmul route: 1 direct, 2 gathered, 0 none */
  adnn_plugin_matmul mm;    /* its matmul, with matmul lowp's state in inner_state */
  int mm_w_is_a;            /* w is its a (and the bias its residual), else its b */
  size_t mm_ws, mm_bias_off, mm_cols_off; /* its workspace at 0, the F32 bias, the columns */
  adnn_plugin_conv2d inner; /* the problem in F32, same dims and strides */
  const adnn_cpu_impl *impl;
  int isa;
  size_t inner_ws;                 /* bytes, at offset 0 of the workspace */
  size_t x_off, w_off, b_off, y_off; /* byte offsets of the F32 copies */
  int64_t nx, nw, nb, ny;            /* their element spans */
  /* The inner implementation's state: plan states come from calloc, so
   * natural (max_align_t) alignment, not more. */
  union {
    max_align_t align;
    unsigned char bytes[CL_MAX_STATE];
  } inner_state;
} cl_state;

static int64_t span_of(const adnn_tensor_desc *t) {
  int64_t s = 1;
  for (int i = 0; i < t->rank; i++) s += (t->dims[i] - 1) * t->strides[i];
  return s;
}

static adnn_plugin_conv2d inner_problem(const adnn_plugin_conv2d *g) {
  adnn_plugin_conv2d p = *g;
  p.x.dtype = p.w.dtype = p.bias.dtype = p.y.dtype = ADNN_DTYPE_F32;
  p.weights_prepacked = 0; /* lowp widens w itself; the plugin's copy is w as described */
  p.algorithm = ADNN_CONV2D_ALGO_AUTO;
  return p;
}

/* The F32 implementation for the widened problem: the first one that runs it
 * and is preferred (the plugin's own choice in F32), else the first that
 * runs it; NULL when only the reference loops would. */
static const adnn_cpu_impl *inner_choice(const adnn_plugin_conv2d *p, const adnn_cpu_env *env) {
  const adnn_cpu_impl *fallback = NULL;
  for (size_t i = 0; i < sizeof cl_inner_list / sizeof cl_inner_list[0]; i++) {
    const adnn_cpu_impl *impl = cl_inner_list[i];
    if (impl == &adnn_cpu_conv2d_lowp || impl == &adnn_cpu_conv2d_reference) continue;
    if (!(impl->dtypes & ADNN_OP_DTYPE(ADNN_DTYPE_F32)) || impl->state_size > CL_MAX_STATE)
      continue;
    char why[8];
    if (impl->supports && !impl->supports(p, env, why, sizeof why)) continue;
    if (impl->preferred == NULL || impl->preferred(p, env)) return impl;
    if (fallback == NULL) fallback = impl;
  }
  return fallback;
}

/* The largest gathered image (columns of one NCHW image, C R S x P Q BF16
 * values) the matmul route takes: 64 MiB, a ResNet-50 image needing at
 * most 3.7 MB; beyond it the widening route runs. */
#define CL_COLS_MAX_BYTES ((size_t)64 << 20)

/* The matmul of a BF16 convolution on a CPU whose BF16 GEMM does not widen
 * (see the top of the file), when that route applies, in one of two forms:
 *   direct (returns 1): a 1x1 filter without padding whose input pixels
 *     are evenly spaced (stride 1, any packed layout): per image, a is x
 *     with the channels along k, P Q rows;
 *   gathered (returns 2): any other groups-1 NCHW convolution with KCRS
 *     filters: per image, the columns of x (row (c, r, s), column (p, q):
 *     x[c][p sh + r dh - pt][q sw + s dw - pl], zero outside) are gathered
 *     into the workspace, a row at a time with copies where sw = 1, and
 *     read as a transposed a with k = (c, r, s), which w's KCRS order is;
 *     a chunk of images per matmul (see below).
 * With contiguous pixels (NCHW) y = w . columns (w is a, *w_is_a = 1),
 * else (NHWC 1x1) y = columns^T . w^T; 0: no route. */
static int matmul_route(const adnn_plugin_conv2d *g, const adnn_cpu_env *env,
                        adnn_plugin_matmul *m, int *w_is_a) {
  if (g->groups != 1 || g->x.dtype != ADNN_DTYPE_BF16 || g->w.dtype != ADNN_DTYPE_BF16 ||
      g->y.dtype != ADNN_DTYPE_BF16 || (g->has_bias && g->bias.dtype != ADNN_DTYPE_BF16) ||
      adnn_cpu_matmul_lowp.state_size > CL_MAX_STATE)
    return 0;
  const adnn_cpu_lowp_path *path = adnn_cpu_lowp_choose(ADNN_DTYPE_BF16, env->isa, env->features);
  if (path == NULL || adnn_cpu_lowp_widens(path)) return 0;
  const int64_t *xs = g->x.strides, *ys = g->y.strides, *ws = g->w.strides;
  const int pointwise = g->R == 1 && g->S == 1 && !g->pad_top && !g->pad_bottom &&
                        !g->pad_left && !g->pad_right;
  const int direct = pointwise && g->stride_h == 1 && g->stride_w == 1 &&
                     xs[2] == xs[3] * g->W && ys[2] == ys[3] * g->Q;
  const int64_t crs = g->C * g->R * g->S, pq = g->P * g->Q;
  if (!direct && (adnn_cpu_conv2d_layout(g) != ADNN_CPU_CONV_NCHW ||
                  !adnn_cpu_conv2d_w_is_kcrs(g) || (size_t)(crs * pq) * 2 > CL_COLS_MAX_BYTES))
    return 0;
  /* The gathered form runs `chunk` images per matmul (a divisor of N, so
   * that every call has the one shape the state was made for): enough for
   * about 2048 rows of y, so that small images (7 x 7 = 49 pixels) still
   * give every thread tiles, within the 64 MiB of columns. */
  int64_t chunk = 1;
  if (!direct)
    for (int64_t d = 1; d <= g->N; d++)
      if (g->N % d == 0 && (d == 1 || (d - 1) * pq < 2048) &&
          (size_t)(d * crs * pq) * 2 <= CL_COLS_MAX_BYTES)
        chunk = d;
  memset(m, 0, sizeof *m);
  m->struct_size = sizeof *m;
  adnn_tensor_desc *a = &m->a, *b = &m->b, *y = &m->y, *r = &m->residual;
  a->dtype = b->dtype = y->dtype = ADNN_DTYPE_BF16;
  a->rank = b->rank = y->rank = 4;
  m->batch0 = direct ? g->N : chunk, m->batch1 = 1;
  /* x's columns: k = (c, r, s) (for 1x1 the channel), pixel (p, q). */
  const int64_t col_k = direct ? xs[1] : pq, col_px = direct ? xs[3] : 1;
  const int64_t col_n = direct ? xs[0] : crs * pq;
  /* w as a K x C R S matrix (KCRS: (c, r, s) contiguous; 1x1: any layout). */
  const int64_t w_k = direct ? ws[1] : 1, w_out = ws[0];
  *w_is_a = xs[3] == 1 && ys[3] == 1;
  if (*w_is_a) {
    /* Pixels contiguous (NCHW): y[k][pixel] = w . cols, so that y's rows
     * are contiguous runs of pixels, the columns' rows contiguous panels
     * of b, and w the A panels; the bias is then per row, which the
     * matmul takes as a residual broadcast along the row (stride 0). */
    m->M = g->K, m->N = pq, m->K = crs;
    a->strides[2] = w_out, a->strides[3] = w_k; /* shared by the batch */
    b->strides[0] = col_n, b->strides[2] = col_k, b->strides[3] = col_px;
    y->strides[0] = ys[0], y->strides[2] = ys[1], y->strides[3] = ys[3];
    if (g->has_bias) {
      m->has_residual = 1, m->residual_scale = 1.0;
      r->dtype = ADNN_DTYPE_F32; /* the bias widened at run time */
      r->rank = 4;
      r->dims[0] = m->batch0, r->dims[1] = 1, r->dims[2] = g->K, r->dims[3] = pq;
      r->strides[2] = 1;
    }
  } else {
    /* Channels contiguous (NHWC 1x1): y[pixel][k] = cols^T . w^T. */
    m->M = pq, m->N = g->K, m->K = crs;
    a->strides[0] = col_n, a->strides[2] = col_px, a->strides[3] = col_k;
    b->strides[2] = w_k, b->strides[3] = w_out; /* w^T, shared by the batch */
    y->strides[0] = ys[0], y->strides[2] = ys[3], y->strides[3] = ys[1];
    if (g->has_bias) {
      m->has_bias = 1;
      m->bias.dtype = ADNN_DTYPE_F32; /* widened at run time */
      m->bias.rank = 1, m->bias.dims[0] = g->K, m->bias.strides[0] = 1;
    }
  }
  a->dims[0] = b->dims[0] = y->dims[0] = m->batch0;
  a->dims[1] = b->dims[1] = y->dims[1] = 1;
  a->dims[2] = y->dims[2] = m->M, a->dims[3] = b->dims[2] = m->K, b->dims[3] = y->dims[3] = m->N;
  m->alpha = 1.0;
  m->activation = g->activation;
  m->requant_scale = 1.0;
  char why[8];
  if (adnn_cpu_matmul_lowp.supports && !adnn_cpu_matmul_lowp.supports(m, env, why, sizeof why))
    return 0;
  return direct ? 1 : 2;
}

/* The gathered form's columns of image n: rows [r0, r1) of the C R S rows,
 * each P Q long (a task of adnn_cpu_parallel_for). */
typedef struct cl_cols_job {
  const adnn_plugin_conv2d *g;
  const uint16_t *x; /* image n */
  uint16_t *cols;
} cl_cols_job;

static void cl_cols_task(void *arg, int64_t r0, int64_t r1, int thread) {
  (void)thread;
  const cl_cols_job *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  const int64_t *xs = g->x.strides, RS = g->R * g->S, Q = g->Q;
  for (int64_t row = r0; row < r1; row++) {
    const int64_t c = row / RS, r = row % RS / g->S, sx = row % g->S;
    const int64_t w0 = sx * g->dilation_w - g->pad_left; /* the input column of q = 0 */
    /* q in [qlo, qhi) reads inside the image row. */
    int64_t qlo = w0 >= 0 ? 0 : (-w0 + g->stride_w - 1) / g->stride_w;
    int64_t qhi = g->W - w0 <= 0 ? 0 : (g->W - w0 + g->stride_w - 1) / g->stride_w;
    if (qhi > Q) qhi = Q;
    if (qlo > qhi) qlo = qhi;
    for (int64_t p = 0; p < g->P; p++) {
      uint16_t *d = j->cols + row * g->P * Q + p * Q;
      const int64_t h = p * g->stride_h + r * g->dilation_h - g->pad_top;
      if (h < 0 || h >= g->H) {
        memset(d, 0, (size_t)Q * sizeof *d);
        continue;
      }
      const uint16_t *srow = j->x + c * xs[1] + h * xs[2];
      memset(d, 0, (size_t)qlo * sizeof *d);
      if (g->stride_w == 1)
        memcpy(d + qlo, srow + w0 + qlo, (size_t)(qhi - qlo) * sizeof *d);
      else
        for (int64_t q = qlo; q < qhi; q++) d[q] = srow[w0 + q * g->stride_w];
      memset(d + qhi, 0, (size_t)(Q - qhi) * sizeof *d);
    }
  }
}

static int cl_supports(const void *problem, const adnn_cpu_env *env, char *why, size_t why_size) {
  const adnn_plugin_conv2d *g = problem;
  if (!adnn_cpu_conv2d_common_supports(g, why, why_size)) return 0;
  adnn_plugin_matmul m;
  int w_is_a;
  if (matmul_route(g, env, &m, &w_is_a)) return 1;
  const adnn_plugin_conv2d p = inner_problem(g);
  if (inner_choice(&p, env) == NULL)
    return adnn_cpu_conv2d_no(why, why_size, "no F32 algorithm runs the widened problem");
  return 1;
}

static size_t align64(size_t v) { return (v + 63) & ~(size_t)63; }

static void cl_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                       size_t *workspace_bytes) {
  const adnn_plugin_conv2d *g = problem;
  cl_state *s = state;
  s->via_matmul = matmul_route(g, env, &s->mm, &s->mm_w_is_a);
  if (s->via_matmul) {
    s->mm_ws = 0;
    if (adnn_cpu_matmul_lowp.reshape)
      adnn_cpu_matmul_lowp.reshape(&s->mm, env, s->inner_state.bytes, &s->mm_ws);
    s->isa = env->isa;
    s->mm_bias_off = align64(s->mm_ws);
    s->mm_cols_off = align64(s->mm_bias_off + (g->has_bias ? (size_t)g->K * sizeof(float) : 0));
    *workspace_bytes = s->mm_cols_off;
    if (s->via_matmul == 2)
      *workspace_bytes +=
          (size_t)(s->mm.batch0 * g->C * g->R * g->S * g->P * g->Q) * sizeof(uint16_t);
    return;
  }
  s->inner = inner_problem(g);
  s->impl = inner_choice(&s->inner, env);
  s->isa = env->isa;
  s->inner_ws = 0;
  if (s->impl->reshape) s->impl->reshape(&s->inner, env, s->inner_state.bytes, &s->inner_ws);
  s->nx = span_of(&g->x);
  s->nw = span_of(&g->w);
  s->nb = g->has_bias ? span_of(&g->bias) : 0;
  s->ny = span_of(&g->y);
  size_t off = align64(s->inner_ws);
  s->x_off = off;
  off = align64(off + (size_t)s->nx * sizeof(float));
  s->w_off = off;
  off = align64(off + (size_t)s->nw * sizeof(float));
  s->b_off = off;
  off = align64(off + (size_t)s->nb * sizeof(float));
  s->y_off = off;
  off = align64(off + (size_t)s->ny * sizeof(float));
  *workspace_bytes = off;
}

static void cl_run(const void *problem, const void *state, const void *const *inputs,
                   void *const *outputs, void *workspace) {
  const adnn_plugin_conv2d *g = problem;
  const cl_state *s = state;
  unsigned char *ws = workspace;
  if (s->via_matmul) {
    float *bias = g->has_bias ? (float *)(ws + s->mm_bias_off) : NULL;
    if (bias) adnn_cpu_lowp_to_f32(s->isa, g->bias.dtype, inputs[2], bias, (size_t)g->K);
    /* {a, b[, the bias as bias or residual]}. */
    const int w_is_a = s->mm_w_is_a;
    if (s->via_matmul == 1) {
      const void *in[3] = {w_is_a ? inputs[1] : inputs[0], w_is_a ? inputs[0] : inputs[1], bias};
      adnn_cpu_matmul_lowp.run(&s->mm, s->inner_state.bytes, in, outputs, ws);
      return;
    }
    /* A chunk of images at a time, so that their columns (a few MB for
     * ResNet-50) are still in the cache when the matmul packs them. */
    uint16_t *cols = (uint16_t *)(ws + s->mm_cols_off);
    const int64_t chunk = s->mm.batch0, rows = s->mm.K, per_row = g->P * g->Q;
    for (int64_t n0 = 0; n0 < g->N; n0 += chunk) {
      for (int64_t n = n0; n < n0 + chunk; n++) {
        const cl_cols_job cj = {g, (const uint16_t *)inputs[0] + n * g->x.strides[0],
                                cols + (n - n0) * rows * per_row};
        adnn_cpu_parallel_for(rows, per_row >= 4096 ? 1 : 4096 / per_row, cl_cols_task,
                              (void *)&cj);
      }
      const void *in[3] = {w_is_a ? inputs[1] : cols, w_is_a ? cols : inputs[1], bias};
      void *out[1] = {(uint16_t *)outputs[0] + n0 * g->y.strides[0]};
      adnn_cpu_matmul_lowp.run(&s->mm, s->inner_state.bytes, in, out, ws);
    }
    return;
  }
  float *x = (float *)(ws + s->x_off), *w = (float *)(ws + s->w_off);
  float *b = (float *)(ws + s->b_off), *y = (float *)(ws + s->y_off);
  adnn_cpu_lowp_to_f32_parallel(s->isa, g->x.dtype, inputs[0], x, s->nx);
  adnn_cpu_lowp_to_f32_parallel(s->isa, g->w.dtype, inputs[1], w, s->nw);
  if (g->has_bias) adnn_cpu_lowp_to_f32_parallel(s->isa, g->bias.dtype, inputs[2], b, s->nb);
  const void *in[3] = {x, w, g->has_bias ? b : NULL};
  void *out[1] = {y};
  s->impl->run(&s->inner, s->inner_state.bytes, in, out, s->inner_ws ? ws : NULL);
  adnn_cpu_lowp_from_f32_parallel(s->isa, g->y.dtype, y, outputs[0], s->ny);
}

const adnn_cpu_impl adnn_cpu_conv2d_lowp = {
    .name = "lowp",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F16) | ADNN_OP_DTYPE(ADNN_DTYPE_BF16),
    .supports = cl_supports,
    .state_size = sizeof(cl_state),
    .reshape = cl_reshape,
    .run = cl_run,
};
