/*
 * Batch normalization (inference) with a fused activation:
 * y = act((x - mean[c]) * a[c] + shift[c]) with a = scale / sqrt(var + eps)
 * computed in double per channel and carried as a float pair hi + lo, so the
 * product (x - mean) * a has double accuracy with FMAs. Subtracting the mean
 * before scaling (rather than folding it into the shift, a * x + b) avoids
 * cancellation when the mean is large next to the spread, and keeps the IEEE
 * results of the definition for var + eps == 0 (a infinite: +-inf, or NaN at
 * x == mean, like scale * (x - mean) / 0).
 *
 * The per-channel scales are recomputed at each execution (the parameters
 * are inputs of execute, not of the plan), per plane or into a stack block of
 * BLOCK channels, so nothing is allocated. Paths (reshape time):
 *   planes: the dims after C collapse to one unit-stride run in x and y (packed
 *           NCHW and its relatives): one scalar-coefficient vector loop per
 *           (n, c) plane; planes split across threads.
 *   pixels: C has unit stride in x and y (NHWC): for each pixel the channels
 *           are a contiguous run, processed with the per-channel coefficient
 *           vectors; pixels split across threads.
 *   strided: anything else: each (n, c) plane is gathered through a stack
 *           buffer and uses the planes code.
 * All paths share the vector affine + activation code of activation.c, so the
 * fused activation has the same accuracy as the standalone op.
 *
 * F16 and BF16 x and y (F32 parameters, ADNN_OP_PARAM_DTYPE): every path
 * widens blocks of x into a stack F32 buffer with the shared converters of
 * lowp.h, runs the same F32 affine + activation code on it and narrows the
 * block once on store. The op is elementwise, so the result is the F32
 * kernel's on the widened input, rounded once (t/cpu-lowp-ops).
 */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/lowp.h"
#include "kernels/cpu/simd.h"

enum { PATH_PLANES = 0, PATH_PIXELS = 1, PATH_STRIDED = 2 };

#define BLOCK 512

typedef struct bn_state {
  adnn_cpu_act act;
  adnn_nd rest;    /* dims after C ([0] y, [1] x); pixels path: dims other than C */
  int path;
  double epsilon;
  int64_t C;
  int64_t plane;   /* elements per (n, c) plane */
  int64_t tasks;   /* parallel_for's range: planes, or pixels on the pixels path */
  int64_t grain;
  int64_t x_n, x_c, y_n, y_c; /* the strides of dims 0 and 1 */
  adnn_dtype dtype; /* of x and y: F32, or F16 / BF16 (run_lowp_*) */
  int isa;          /* env->isa, for the lowp.h converters */
} bn_state;

/* The dims of x/y without dim 1 (pixels path) or after dim 1 (other paths). */
static void geom_of(const adnn_plugin_batchnorm *p, int pixels, adnn_nd *L) {
  adnn_tensor_desc y = p->y, x = p->x;
  int r = 0;
  for (int i = pixels ? 0 : 2; i < p->x.rank; i++) {
    if (i == 1) continue;
    y.dims[r] = p->y.dims[i];
    y.strides[r] = p->y.strides[i];
    x.dims[r] = p->x.dims[i];
    x.strides[r] = p->x.strides[i];
    r++;
  }
  y.rank = x.rank = r;
  const adnn_tensor_desc *t[2] = {&y, &x};
  adnn_cpu_loop_init(L, 2, t);
}

static void bn_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                       size_t *workspace_bytes) {
  const adnn_plugin_batchnorm *p = problem;
  bn_state *s = state;
  adnn_nd L;
  geom_of(p, 0, &L);
  const int64_t C = p->C, plane = adnn_nd_count(&L);
  const int planes_ok = L.rank == 1 && L.strides[0][0] == 1 && L.strides[1][0] == 1;
  const int pixels_ok = C > 1 && p->x.strides[1] == 1 && p->y.strides[1] == 1;
  /* Small planes (e.g. [N, C] or 1x1 images) vectorize better across C. */
  if (planes_ok && !(pixels_ok && plane < 64))
    s->path = PATH_PLANES;
  else if (pixels_ok)
    s->path = PATH_PIXELS;
  else
    s->path = PATH_STRIDED;
  geom_of(p, s->path == PATH_PIXELS, &s->rest);
  adnn_cpu_act_init(&s->act, &p->activation, env->isa);
  s->epsilon = p->epsilon;
  s->C = C;
  s->plane = plane;
  int64_t grain;
  if (s->path == PATH_PIXELS) {
    s->tasks = adnn_nd_count(&s->rest);
    grain = ADNN_CPU_GRAIN / C;
  } else {
    s->tasks = p->x.dims[0] * C;
    grain = ADNN_CPU_GRAIN / plane;
  }
  s->grain = grain > 1 ? grain : 1;
  s->x_n = p->x.strides[0];
  s->x_c = p->x.strides[1];
  s->y_n = p->y.strides[0];
  s->y_c = p->y.strides[1];
  s->dtype = p->x.dtype;
  s->isa = env->isa;
  *workspace_bytes = 0;
}

typedef struct bn_task {
  const bn_state *s;
  const float *x, *scale, *shift, *mean, *var;
  float *y;
} bn_task;

/* The channel's scale / sqrt(var + eps) as a float pair hi + lo. */
static void coef(const bn_task *t, int64_t c, float *hi, float *lo) {
  const double a = (double)t->scale[c] / sqrt((double)t->var[c] + t->s->epsilon);
  *hi = (float)a;
  *lo = isfinite(a) ? (float)(a - (double)*hi) : 0.0f;
}

#define CHUNK 256

/* Planes [begin, end) of the N*C (n, c) planes. */
static void run_planes(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const bn_task *t = arg;
  const bn_state *s = t->s;
  const int64_t C = s->C, HW = s->plane;
  float buf[CHUNK];
  for (int64_t pl = begin; pl < end; pl++) {
    const int64_t n = pl / C, c = pl - n * C;
    const float *x = t->x + n * s->x_n + c * s->x_c;
    float *y = t->y + n * s->y_n + c * s->y_c;
    const float mean = t->mean[c], b = t->shift[c];
    float a, alo;
    coef(t, c, &a, &alo);
    if (s->path == PATH_PLANES) {
      adnn_cpu_act_affine_f32(&s->act, x, y, (size_t)HW, mean, a, alo, b);
      continue;
    }
    for (int64_t j0 = 0; j0 < HW; j0 += CHUNK) {
      const int64_t m = HW - j0 < CHUNK ? HW - j0 : CHUNK;
      for (int64_t j = 0; j < m; j++) {
        int64_t o[ADNN_ND_MAX_TENSORS];
        adnn_nd_offsets(&s->rest, j0 + j, o);
        buf[j] = x[o[1]];
      }
      adnn_cpu_act_affine_f32(&s->act, buf, buf, (size_t)m, mean, a, alo, b);
      for (int64_t j = 0; j < m; j++) {
        int64_t o[ADNN_ND_MAX_TENSORS];
        adnn_nd_offsets(&s->rest, j0 + j, o);
        y[o[0]] = buf[j];
      }
    }
  }
}

/* Pixels [begin, end): for each block of channels, scales once, then every
 * pixel's contiguous run of those channels (means and shifts are read from
 * the parameter vectors directly). */
static void run_pixels(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const bn_task *t = arg;
  const bn_state *s = t->s;
  const int64_t C = s->C;
  float a[BLOCK], alo[BLOCK];
  for (int64_t c0 = 0; c0 < C; c0 += BLOCK) {
    const int64_t m = C - c0 < BLOCK ? C - c0 : BLOCK;
    for (int64_t c = 0; c < m; c++) coef(t, c0 + c, &a[c], &alo[c]);
    for (int64_t px = begin; px < end; px++) {
      int64_t o[ADNN_ND_MAX_TENSORS];
      adnn_nd_offsets(&s->rest, px, o);
      adnn_cpu_act_affine_vec_f32(&s->act, t->x + o[1] + c0, t->y + o[0] + c0, (size_t)m,
                                  t->mean + c0, a, alo, t->shift + c0);
    }
  }
}

/* The 16-bit planes [begin, end): blocks of each plane widened, transformed
 * in F32 and narrowed once (gathered and scattered on the strided path). */
static void run_lowp_planes(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const bn_task *t = arg;
  const bn_state *s = t->s;
  const int64_t C = s->C, HW = s->plane;
  float buf[ADNN_CPU_LOWP_BLOCK];
  uint16_t h[ADNN_CPU_LOWP_BLOCK];
  for (int64_t pl = begin; pl < end; pl++) {
    const int64_t n = pl / C, c = pl - n * C;
    const uint16_t *x = (const uint16_t *)(const void *)t->x + n * s->x_n + c * s->x_c;
    uint16_t *y = (uint16_t *)(void *)t->y + n * s->y_n + c * s->y_c;
    const float mean = t->mean[c], b = t->shift[c];
    float a, alo;
    coef(t, c, &a, &alo);
    for (int64_t j0 = 0; j0 < HW; j0 += ADNN_CPU_LOWP_BLOCK) {
      const int64_t m = HW - j0 < ADNN_CPU_LOWP_BLOCK ? HW - j0 : ADNN_CPU_LOWP_BLOCK;
      if (s->path == PATH_PLANES) {
        adnn_cpu_lowp_to_f32(s->isa, s->dtype, x + j0, buf, (size_t)m);
      } else {
        for (int64_t j = 0; j < m; j++) {
          int64_t o[ADNN_ND_MAX_TENSORS];
          adnn_nd_offsets(&s->rest, j0 + j, o);
          h[j] = x[o[1]];
        }
        adnn_cpu_lowp_to_f32(s->isa, s->dtype, h, buf, (size_t)m);
      }
      adnn_cpu_act_affine_f32(&s->act, buf, buf, (size_t)m, mean, a, alo, b);
      if (s->path == PATH_PLANES) {
        adnn_cpu_lowp_from_f32(s->isa, s->dtype, buf, y + j0, (size_t)m);
      } else {
        adnn_cpu_lowp_from_f32(s->isa, s->dtype, buf, h, (size_t)m);
        for (int64_t j = 0; j < m; j++) {
          int64_t o[ADNN_ND_MAX_TENSORS];
          adnn_nd_offsets(&s->rest, j0 + j, o);
          y[o[0]] = h[j];
        }
      }
    }
  }
}

/* The 16-bit pixels [begin, end), as run_pixels with each pixel's run of a
 * block of channels widened and narrowed around the F32 code. */
static void run_lowp_pixels(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const bn_task *t = arg;
  const bn_state *s = t->s;
  const int64_t C = s->C;
  float a[BLOCK], alo[BLOCK], buf[BLOCK];
  const uint16_t *x = (const uint16_t *)(const void *)t->x;
  uint16_t *y = (uint16_t *)(void *)t->y;
  for (int64_t c0 = 0; c0 < C; c0 += BLOCK) {
    const int64_t m = C - c0 < BLOCK ? C - c0 : BLOCK;
    for (int64_t c = 0; c < m; c++) coef(t, c0 + c, &a[c], &alo[c]);
    for (int64_t px = begin; px < end; px++) {
      int64_t o[ADNN_ND_MAX_TENSORS];
      adnn_nd_offsets(&s->rest, px, o);
      adnn_cpu_lowp_to_f32(s->isa, s->dtype, x + o[1] + c0, buf, (size_t)m);
      adnn_cpu_act_affine_vec_f32(&s->act, buf, buf, (size_t)m, t->mean + c0, a, alo,
                                  t->shift + c0);
      adnn_cpu_lowp_from_f32(s->isa, s->dtype, buf, y + o[0] + c0, (size_t)m);
    }
  }
}

/* Inputs {x, scale, shift, mean, var}. */
static void bn_run(const void *problem, const void *state, const void *const *inputs,
                   void *const *outputs, void *workspace) {
  (void)problem;
  (void)workspace;
  const bn_state *s = state;
  bn_task t = {.s = s, .x = inputs[0], .scale = inputs[1], .shift = inputs[2],
               .mean = inputs[3], .var = inputs[4], .y = outputs[0]};
  if (s->dtype == ADNN_DTYPE_F16 || s->dtype == ADNN_DTYPE_BF16)
    adnn_cpu_parallel_for(s->tasks, s->grain,
                          s->path == PATH_PIXELS ? run_lowp_pixels : run_lowp_planes, &t);
  else
    adnn_cpu_parallel_for(s->tasks, s->grain, s->path == PATH_PIXELS ? run_pixels : run_planes,
                          &t);
}

const adnn_cpu_impl adnn_cpu_batchnorm_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32) | ADNN_OP_DTYPE(ADNN_DTYPE_F16) |
              ADNN_OP_DTYPE(ADNN_DTYPE_BF16),
    .state_size = sizeof(bn_state),
    .reshape = bn_reshape,
    .run = bn_run,
};
