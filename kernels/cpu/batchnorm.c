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
 * BLOCK channels, so nothing is allocated. Paths (prepare time):
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
 */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/simd.h"

enum { PATH_PLANES = 0, PATH_PIXELS = 1, PATH_STRIDED = 2 };

#define BLOCK 512

typedef struct bn_task {
  const adnn_batchnorm_desc *d;
  const adnn_cpu_op_state *s;
  const float *x, *scale, *shift, *mean, *var;
  float *y;
  adnn_cpu_loop rest; /* dims after C ([0] y, [1] x); pixels path: dims other than C */
} bn_task;

/* The channel's scale / sqrt(var + eps) as a float pair hi + lo. */
static void coef(const bn_task *t, int64_t c, float *hi, float *lo) {
  const double a = (double)t->scale[c] / sqrt((double)t->var[c] + t->d->epsilon);
  *hi = (float)a;
  *lo = isfinite(a) ? (float)(a - (double)*hi) : 0.0f;
}

static void loop_offsets(const adnn_cpu_loop *L, int64_t idx, int64_t off[2]) {
  off[0] = off[1] = 0;
  for (int i = L->rank - 1; i >= 0; i--) {
    int64_t q = idx / L->dims[i], r = idx - q * L->dims[i];
    idx = q;
    off[0] += r * L->st[0][i];
    off[1] += r * L->st[1][i];
  }
}

static int64_t loop_count(const adnn_cpu_loop *L) {
  return adnn_cpu_loop_rows(L) * L->dims[L->rank - 1];
}

/* The dims of x/y without dim 1 (pixels path) or after dim 1 (other paths). */
static void geom_of(const adnn_batchnorm_desc *d, int pixels, adnn_cpu_loop *L) {
  adnn_tensor_desc y = d->y, x = d->x;
  int r = 0;
  for (int i = pixels ? 0 : 2; i < d->x.rank; i++) {
    if (i == 1) continue;
    y.dims[r] = d->y.dims[i];
    y.strides[r] = d->y.strides[i];
    x.dims[r] = d->x.dims[i];
    x.strides[r] = d->x.strides[i];
    r++;
  }
  y.rank = x.rank = r;
  const adnn_tensor_desc *t[2] = {&y, &x};
  adnn_cpu_loop_init(L, 2, t);
}

void adnn_cpu_batchnorm_prepare(const adnn_batchnorm_desc *d, adnn_cpu_op_state *s) {
  adnn_cpu_loop L;
  geom_of(d, 0, &L);
  s->simd = adnn_cpu_simd_level();
  const int64_t C = d->x.dims[1], plane = loop_count(&L);
  const int planes_ok = L.rank == 1 && L.st[0][0] == 1 && L.st[1][0] == 1;
  const int pixels_ok = C > 1 && d->x.strides[1] == 1 && d->y.strides[1] == 1;
  /* Small planes (e.g. [N, C] or 1x1 images) vectorize better across C. */
  if (planes_ok && !(pixels_ok && plane < 64))
    s->path = PATH_PLANES;
  else if (pixels_ok)
    s->path = PATH_PIXELS;
  else
    s->path = PATH_STRIDED;
  s->inner = plane; /* elements per (n, c) plane */
  s->outer = d->x.dims[0] * C;
  s->axis_len = C;
}

#define CHUNK 256

/* Planes [begin, end) of the N*C (n, c) planes. */
static void run_planes(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const bn_task *t = arg;
  const int64_t C = t->s->axis_len, HW = t->s->inner;
  const adnn_activation *act = &t->d->activation;
  float buf[CHUNK];
  for (int64_t p = begin; p < end; p++) {
    const int64_t n = p / C, c = p - n * C;
    const float *x = t->x + n * t->d->x.strides[0] + c * t->d->x.strides[1];
    float *y = t->y + n * t->d->y.strides[0] + c * t->d->y.strides[1];
    const float mean = t->mean[c], b = t->shift[c];
    float a, alo;
    coef(t, c, &a, &alo);
    if (t->s->path == PATH_PLANES) {
      adnn_cpu_act_affine_f32(act, x, y, (size_t)HW, mean, a, alo, b);
      continue;
    }
    for (int64_t j0 = 0; j0 < HW; j0 += CHUNK) {
      const int64_t m = HW - j0 < CHUNK ? HW - j0 : CHUNK;
      for (int64_t j = 0; j < m; j++) {
        int64_t o[2];
        loop_offsets(&t->rest, j0 + j, o);
        buf[j] = x[o[1]];
      }
      adnn_cpu_act_affine_f32(act, buf, buf, (size_t)m, mean, a, alo, b);
      for (int64_t j = 0; j < m; j++) {
        int64_t o[2];
        loop_offsets(&t->rest, j0 + j, o);
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
  const int64_t C = t->s->axis_len;
  float a[BLOCK], alo[BLOCK];
  for (int64_t c0 = 0; c0 < C; c0 += BLOCK) {
    const int64_t m = C - c0 < BLOCK ? C - c0 : BLOCK;
    for (int64_t c = 0; c < m; c++) coef(t, c0 + c, &a[c], &alo[c]);
    for (int64_t p = begin; p < end; p++) {
      int64_t o[2];
      loop_offsets(&t->rest, p, o);
      adnn_cpu_act_affine_vec_f32(&t->d->activation, t->x + o[1] + c0, t->y + o[0] + c0,
                                  (size_t)m, t->mean + c0, a, alo, t->shift + c0);
    }
  }
}

void adnn_cpu_batchnorm_f32(const adnn_batchnorm_desc *d, const adnn_cpu_op_state *s,
                            const float *x, const float *scale, const float *shift,
                            const float *mean, const float *var, float *y) {
  bn_task t = {.d = d, .s = s, .x = x, .scale = scale, .shift = shift, .mean = mean,
               .var = var, .y = y};
  geom_of(d, s->path == PATH_PIXELS, &t.rest);
  if (s->path == PATH_PIXELS) {
    const int64_t pixels = loop_count(&t.rest);
    int64_t grain = ADNN_CPU_GRAIN / s->axis_len;
    adnn_cpu_parallel_for(pixels, grain > 1 ? grain : 1, run_pixels, &t);
    return;
  }
  int64_t grain = ADNN_CPU_GRAIN / s->inner;
  adnn_cpu_parallel_for(s->outer, grain > 1 ? grain : 1, run_planes, &t);
}
