/*
 * Depthwise conv2d (groups == C == K: one filter per channel) as a direct SIMD
 * kernel: any filter size, stride, dilation and padding, packed NCHW or NHWC.
 *
 * A depthwise convolution does R*S multiply-adds per output and reuses nothing
 * across channels, so a GEMM formulation only adds overhead; the kernel is
 * bound by loads, and the point is to keep every load a full vector:
 *   - NHWC: channels are contiguous, so each vector holds 16 (AVX-512) or 8
 *     (AVX2) channels of one pixel and the filter taps are vectors too (the
 *     filters are reordered from [C][R][S] to [R][S][C] in the workspace at
 *     each run). Padding is decided per pixel and tap, outside the vector loop.
 *     The pool splits the N*P output rows.
 *   - NCHW: each vector holds consecutive outputs of one output row. Columns
 *     whose taps all fall inside the image (the interior) are computed without
 *     bounds checks: stride 1 loads directly, stride 2 (AVX-512) loads two
 *     vectors and keeps the even lanes, other strides gather. The border
 *     columns take a scalar path with checks. The pool splits the N*C planes.
 * The bias initializes the accumulators; the activation runs over each output
 * row right after it is written (adnn_cpu_epilogue_f32), while it is in cache.
 *
 * Each instruction set's kernels (AVX-512, AVX2 + FMA, portable C: the
 * __avx512, __avx2 and __base functions below) are hand-written with
 * intrinsics and collected in one table per set,
 * adnn_f32_conv2d_depthwise_direct__<isa>; the plan's reshape step picks the
 * table of the plugin's level, and computes the interior columns and the
 * filter layout once.
 */
#include "config.h"

#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "kernels/cpu/conv2d.h"

static int dw_supports(const void *problem, const adnn_cpu_env *env, char *why,
                       size_t why_size) {
  (void)env;
  const adnn_plugin_conv2d *g = problem;
  int layout = adnn_cpu_conv2d_common_supports(g, why, why_size);
  if (!layout) return 0;
  if (g->groups != g->C || g->K != g->C)
    return adnn_cpu_conv2d_no(why, why_size, "needs groups == C == K (depthwise, multiplier 1)");
  /* The AVX-512 path indexes with 32-bit lane offsets (gathers). */
  if (g->stride_w > INT32_MAX / 2 / g->W || g->C > INT32_MAX / 2 / 16)
    return adnn_cpu_conv2d_no(why, why_size, "image too wide");
  return 1;
}

struct dw_job;

/* One instruction set's kernels. */
typedef struct dw_fns {
  /* NCHW: the interior columns [qa, qb) of output row p. */
  void (*interior)(const struct dw_job *j, const float *xc, const float *wc, int64_t p, float *yr,
                   float bias);
  /* NHWC: every channel of output pixel (p, q). */
  void (*pixel)(const struct dw_job *j, const float *xn, int64_t p, int64_t q, float *out);
} dw_fns;

typedef struct dw_state {
  adnn_cpu_act act;
  const dw_fns *fn;
  int nhwc;       /* layout: NHWC, else NCHW */
  int act_pass;   /* the activation is not the identity: run the epilogue */
  int repack;     /* NCHW: the filters are not packed [C][R][S]; pack them first */
  int64_t qa, qb; /* NCHW: the interior output columns [qa, qb) */
  int64_t tasks, grain;
} dw_state;

typedef struct dw_job {
  const adnn_plugin_conv2d *g;
  const dw_state *s;
  const float *x, *w, *bias;
  float *y;
  int64_t qa, qb; /* NCHW: the interior output columns [qa, qb) */
} dw_job;

/* ---- NCHW ---------------------------------------------------------------- */

/* One output at column q of a row, with bounds checks (borders, portable). */
static inline float nchw_point(const dw_job *j, const float *xc, const float *wc, int64_t p,
                               int64_t q, float bias) {
  const adnn_plugin_conv2d *g = j->g;
  float acc = bias;
  for (int64_t r = 0; r < g->R; r++) {
    int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
    if (h < 0 || h >= g->H) continue;
    const float *xr = xc + h * g->W;
    for (int64_t s = 0; s < g->S; s++) {
      int64_t w = q * g->stride_w - g->pad_left + s * g->dilation_w;
      if (w >= 0 && w < g->W) acc += wc[r * g->S + s] * xr[w];
    }
  }
  return acc;
}

/* The interior columns [qa, qb) of output row p, portable C. */
static void nchw_interior__base(const dw_job *j, const float *xc, const float *wc, int64_t p,
                                float *yr, float bias) {
  const adnn_plugin_conv2d *g = j->g;
  for (int64_t q = j->qa; q < j->qb; q++) yr[q] = bias;
  for (int64_t r = 0; r < g->R; r++) {
    int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
    if (h < 0 || h >= g->H) continue;
    for (int64_t s = 0; s < g->S; s++) {
      const float *xs = xc + h * g->W - g->pad_left + s * g->dilation_w;
      float wv = wc[r * g->S + s];
      for (int64_t q = j->qa; q < j->qb; q++) yr[q] += wv * xs[q * g->stride_w];
    }
  }
}

#if defined(__x86_64__) || defined(__i386__)
/* AVX2: 8 outputs per vector, two vectors per step for independent FMA chains;
 * strides other than 1 gather. Returns the first column left to the portable
 * code (nchw_interior__avx2 finishes the row). */
__attribute__((target("avx2,fma"))) static int64_t nchw_interior_steps__avx2(const dw_job *j,
                                                                             const float *xc,
                                                                             const float *wc,
                                                                             int64_t p, float *yr,
                                                                             float bias) {
  const adnn_plugin_conv2d *g = j->g;
  int64_t sw = g->stride_w, q = j->qa;
  __m256i idx =
      _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)sw));
  for (; q + 16 <= j->qb; q += 16) {
    __m256 a0 = _mm256_set1_ps(bias), a1 = a0;
    for (int64_t r = 0; r < g->R; r++) {
      int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
      if (h < 0 || h >= g->H) continue;
      const float *xs = xc + h * g->W - g->pad_left + q * sw;
      for (int64_t s = 0; s < g->S; s++, xs += g->dilation_w) {
        __m256 wv = _mm256_broadcast_ss(wc + r * g->S + s);
        if (sw == 1) {
          a0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(xs), a0);
          a1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(xs + 8), a1);
        } else {
          a0 = _mm256_fmadd_ps(wv, _mm256_i32gather_ps(xs, idx, 4), a0);
          a1 = _mm256_fmadd_ps(wv, _mm256_i32gather_ps(xs + 8 * sw, idx, 4), a1);
        }
      }
    }
    _mm256_storeu_ps(yr + q, a0);
    _mm256_storeu_ps(yr + q + 8, a1);
  }
  return q;
}

/* AVX-512: 16 outputs per vector; a strided load of up to 16 lanes (mask m). */
__attribute__((target("avx512f"))) static inline __m512 load_strided_512(const float *xs,
                                                                         int64_t sw, __m512i idx,
                                                                         __m512i even,
                                                                         __mmask16 m) {
  if (sw == 1) return _mm512_maskz_loadu_ps(m, xs);
  if (sw == 2 && m == 0xFFFF) {
    /* 31 consecutive floats hold the 16 even-indexed ones; the 32nd may lie
     * past the end of x, so it is masked off. Partial vectors gather. */
    __m512 lo = _mm512_loadu_ps(xs), hi = _mm512_maskz_loadu_ps((__mmask16)0x7FFF, xs + 16);
    return _mm512_permutex2var_ps(lo, even, hi);
  }
  return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, xs, 4);
}

__attribute__((target("avx512f"))) static void nchw_interior__avx512(const dw_job *j,
                                                                     const float *xc,
                                                                     const float *wc, int64_t p,
                                                                     float *yr, float bias) {
  const adnn_plugin_conv2d *g = j->g;
  int64_t sw = g->stride_w;
  __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m512i idx = _mm512_mullo_epi32(lane, _mm512_set1_epi32((int)sw));
  __m512i even = _mm512_add_epi32(lane, lane);
  /* Steps of up to four vectors (64 outputs) for four independent FMA chains;
   * the last step masks its lanes past qb, so there is no scalar remainder. */
  for (int64_t q = j->qa; q < j->qb; q += 64) {
    __mmask16 m[4];
    for (int i = 0; i < 4; i++) {
      int64_t left = j->qb - q - 16 * i;
      m[i] = left >= 16 ? (__mmask16)0xFFFF : left > 0 ? (__mmask16)((1u << left) - 1) : 0;
    }
    __m512 a0 = _mm512_set1_ps(bias), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t r = 0; r < g->R; r++) {
      int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
      if (h < 0 || h >= g->H) continue;
      const float *xs = xc + h * g->W - g->pad_left + q * sw;
      const float *wr = wc + r * g->S;
      if (sw == 1) {
        for (int64_t s = 0; s < g->S; s++, xs += g->dilation_w) {
          __m512 wv = _mm512_set1_ps(wr[s]);
          a0 = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(m[0], xs), a0);
          a1 = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(m[1], xs + 16), a1);
          a2 = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(m[2], xs + 32), a2);
          a3 = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(m[3], xs + 48), a3);
        }
      } else {
        for (int64_t s = 0; s < g->S; s++, xs += g->dilation_w) {
          __m512 wv = _mm512_set1_ps(wr[s]);
          a0 = _mm512_fmadd_ps(wv, load_strided_512(xs, sw, idx, even, m[0]), a0);
          if (m[1])
            a1 = _mm512_fmadd_ps(wv, load_strided_512(xs + 16 * sw, sw, idx, even, m[1]), a1);
          if (m[2])
            a2 = _mm512_fmadd_ps(wv, load_strided_512(xs + 32 * sw, sw, idx, even, m[2]), a2);
          if (m[3])
            a3 = _mm512_fmadd_ps(wv, load_strided_512(xs + 48 * sw, sw, idx, even, m[3]), a3);
        }
      }
    }
    _mm512_mask_storeu_ps(yr + q, m[0], a0);
    _mm512_mask_storeu_ps(yr + q + 16, m[1], a1);
    _mm512_mask_storeu_ps(yr + q + 32, m[2], a2);
    _mm512_mask_storeu_ps(yr + q + 48, m[3], a3);
  }
}

/* The AVX2 steps, then the columns they leave with the bounds-checked code. */
static void nchw_interior__avx2(const dw_job *j, const float *xc, const float *wc, int64_t p,
                                float *yr, float bias) {
  int64_t q = nchw_interior_steps__avx2(j, xc, wc, p, yr, bias);
  for (; q < j->qb; q++) yr[q] = nchw_point(j, xc, wc, p, q, bias);
}
#endif

static void nchw_task(void *arg, int64_t t0, int64_t t1, int thread) {
  (void)thread;
  const dw_job *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  const dw_state *st = j->s;
  for (int64_t t = t0; t < t1; t++) {
    int64_t c = t % g->C;
    const float *xc = j->x + t * g->H * g->W, *wc = j->w + c * g->R * g->S;
    float *yc = j->y + t * g->P * g->Q;
    float bias = j->bias ? j->bias[c] : 0.0f;
    for (int64_t p = 0; p < g->P; p++) {
      float *yr = yc + p * g->Q;
      for (int64_t q = 0; q < j->qa; q++) yr[q] = nchw_point(j, xc, wc, p, q, bias);
      st->fn->interior(j, xc, wc, p, yr, bias);
      for (int64_t q = j->qb; q < g->Q; q++) yr[q] = nchw_point(j, xc, wc, p, q, bias);
      if (st->act_pass) adnn_cpu_epilogue_f32(&st->act, yr, (size_t)g->Q, 0.0f);
    }
  }
}

/* ---- NHWC ---------------------------------------------------------------- */

/* One output pixel, channels [c0, C), portable C. */
static void nhwc_pixel_from(const dw_job *j, const float *xn, int64_t p, int64_t q, int64_t c0,
                            float *out) {
  const adnn_plugin_conv2d *g = j->g;
  int64_t C = g->C;
  for (int64_t c = c0; c < C; c++) out[c] = j->bias ? j->bias[c] : 0.0f;
  for (int64_t r = 0; r < g->R; r++) {
    int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
    if (h < 0 || h >= g->H) continue;
    for (int64_t s = 0; s < g->S; s++) {
      int64_t w = q * g->stride_w - g->pad_left + s * g->dilation_w;
      if (w < 0 || w >= g->W) continue;
      const float *xp = xn + (h * g->W + w) * C, *wp = j->w + (r * g->S + s) * C;
      for (int64_t c = c0; c < C; c++) out[c] += wp[c] * xp[c];
    }
  }
}

#if defined(__x86_64__) || defined(__i386__)
/* Channels [0, C) of one pixel in vectors of 16, four at a time while they
 * last, then one at a time with a mask for the last partial vector. */
__attribute__((target("avx512f"))) static void nhwc_pixel__avx512(const dw_job *j,
                                                                  const float *xn, int64_t p,
                                                                  int64_t q, float *out) {
  const adnn_plugin_conv2d *g = j->g;
  int64_t C = g->C, c = 0;
  for (; c + 64 <= C; c += 64) {
    __m512 a0, a1, a2, a3;
    if (j->bias) {
      a0 = _mm512_loadu_ps(j->bias + c);
      a1 = _mm512_loadu_ps(j->bias + c + 16);
      a2 = _mm512_loadu_ps(j->bias + c + 32);
      a3 = _mm512_loadu_ps(j->bias + c + 48);
    } else {
      a0 = a1 = a2 = a3 = _mm512_setzero_ps();
    }
    for (int64_t r = 0; r < g->R; r++) {
      int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
      if (h < 0 || h >= g->H) continue;
      for (int64_t s = 0; s < g->S; s++) {
        int64_t w = q * g->stride_w - g->pad_left + s * g->dilation_w;
        if (w < 0 || w >= g->W) continue;
        const float *xp = xn + (h * g->W + w) * C + c, *wp = j->w + (r * g->S + s) * C + c;
        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(wp), _mm512_loadu_ps(xp), a0);
        a1 = _mm512_fmadd_ps(_mm512_loadu_ps(wp + 16), _mm512_loadu_ps(xp + 16), a1);
        a2 = _mm512_fmadd_ps(_mm512_loadu_ps(wp + 32), _mm512_loadu_ps(xp + 32), a2);
        a3 = _mm512_fmadd_ps(_mm512_loadu_ps(wp + 48), _mm512_loadu_ps(xp + 48), a3);
      }
    }
    _mm512_storeu_ps(out + c, a0);
    _mm512_storeu_ps(out + c + 16, a1);
    _mm512_storeu_ps(out + c + 32, a2);
    _mm512_storeu_ps(out + c + 48, a3);
  }
  for (; c < C; c += 16) {
    int64_t left = C - c;
    __mmask16 m = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
    __m512 a0 = j->bias ? _mm512_maskz_loadu_ps(m, j->bias + c) : _mm512_setzero_ps();
    for (int64_t r = 0; r < g->R; r++) {
      int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
      if (h < 0 || h >= g->H) continue;
      for (int64_t s = 0; s < g->S; s++) {
        int64_t w = q * g->stride_w - g->pad_left + s * g->dilation_w;
        if (w < 0 || w >= g->W) continue;
        const float *xp = xn + (h * g->W + w) * C + c, *wp = j->w + (r * g->S + s) * C + c;
        a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, wp), _mm512_maskz_loadu_ps(m, xp), a0);
      }
    }
    _mm512_mask_storeu_ps(out + c, m, a0);
  }
}

/* AVX2: vectors of 8, two at a time; returns the first channel left to the
 * portable code (fewer than 8). */
__attribute__((target("avx2,fma"))) static int64_t nhwc_pixel_steps__avx2(const dw_job *j,
                                                                          const float *xn,
                                                                          int64_t p, int64_t q,
                                                                          float *out) {
  const adnn_plugin_conv2d *g = j->g;
  int64_t C = g->C, c = 0;
  for (; c + 8 <= C;) {
    int two = c + 16 <= C;
    __m256 a0 = j->bias ? _mm256_loadu_ps(j->bias + c) : _mm256_setzero_ps();
    __m256 a1 = two && j->bias ? _mm256_loadu_ps(j->bias + c + 8) : _mm256_setzero_ps();
    for (int64_t r = 0; r < g->R; r++) {
      int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
      if (h < 0 || h >= g->H) continue;
      for (int64_t s = 0; s < g->S; s++) {
        int64_t w = q * g->stride_w - g->pad_left + s * g->dilation_w;
        if (w < 0 || w >= g->W) continue;
        const float *xp = xn + (h * g->W + w) * C + c, *wp = j->w + (r * g->S + s) * C + c;
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(wp), _mm256_loadu_ps(xp), a0);
        if (two) a1 = _mm256_fmadd_ps(_mm256_loadu_ps(wp + 8), _mm256_loadu_ps(xp + 8), a1);
      }
    }
    _mm256_storeu_ps(out + c, a0);
    if (two) _mm256_storeu_ps(out + c + 8, a1);
    c += two ? 16 : 8;
  }
  return c;
}

/* The AVX2 steps, then the channels they leave with the portable code. */
static void nhwc_pixel__avx2(const dw_job *j, const float *xn, int64_t p, int64_t q, float *out) {
  int64_t c0 = nhwc_pixel_steps__avx2(j, xn, p, q, out);
  if (c0 < j->g->C) nhwc_pixel_from(j, xn, p, q, c0, out);
}
#endif

/* Every channel of one pixel, portable C. */
static void nhwc_pixel__base(const dw_job *j, const float *xn, int64_t p, int64_t q, float *out) {
  nhwc_pixel_from(j, xn, p, q, 0, out);
}

static void nhwc_task(void *arg, int64_t t0, int64_t t1, int thread) {
  (void)thread;
  const dw_job *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  const dw_state *st = j->s;
  for (int64_t t = t0; t < t1; t++) {
    int64_t n = t / g->P, p = t % g->P;
    const float *xn = j->x + n * g->H * g->W * g->C;
    float *yr = j->y + t * g->Q * g->C;
    for (int64_t q = 0; q < g->Q; q++) st->fn->pixel(j, xn, p, q, yr + q * g->C);
    if (st->act_pass) adnn_cpu_epilogue_f32(&st->act, yr, (size_t)(g->Q * g->C), 0.0f);
  }
}

/* ---- The implementation ---------------------------------------------------- */

/* Each instruction set's kernels; without x86 intrinsics, every level runs
 * the portable code. */
#if defined(__x86_64__) || defined(__i386__)
static const dw_fns adnn_f32_conv2d_depthwise_direct__avx512 = {nchw_interior__avx512,
                                                                 nhwc_pixel__avx512};
static const dw_fns adnn_f32_conv2d_depthwise_direct__avx2 = {nchw_interior__avx2,
                                                               nhwc_pixel__avx2};
#else
static const dw_fns adnn_f32_conv2d_depthwise_direct__avx512 = {nchw_interior__base,
                                                                 nhwc_pixel__base};
static const dw_fns adnn_f32_conv2d_depthwise_direct__avx2 = {nchw_interior__base,
                                                               nhwc_pixel__base};
#endif
static const dw_fns adnn_f32_conv2d_depthwise_direct__base = {nchw_interior__base,
                                                               nhwc_pixel__base};
static const dw_fns *const dw_by_isa[ADNN_CPU_ISA_COUNT] =
    ADNN_CPU_ISA_TABLE(adnn_f32_conv2d_depthwise_direct);

/* NHWC reorders the filters to [R][S][C]; NCHW packs them to [C][R][S] when
 * they are not already. */
static void dw_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                       size_t *workspace_bytes) {
  const adnn_plugin_conv2d *g = problem;
  dw_state *s = state;
  adnn_cpu_act_init(&s->act, &g->activation, env->isa);
  s->fn = dw_by_isa[env->isa];
  s->nhwc = adnn_cpu_conv2d_layout(g) == ADNN_CPU_CONV_NHWC;
  s->act_pass = g->activation.kind != ADNN_ACTIVATION_IDENTITY;
  s->repack = !s->nhwc && !adnn_cpu_conv2d_w_is_kcrs(g);
  if (s->nhwc) {
    int64_t per_row = g->Q * g->C * g->R * g->S;
    s->tasks = g->N * g->P;
    s->grain = per_row >= 8192 ? 1 : 8192 / per_row;
  } else {
    /* Interior columns: q*sw - pl >= 0 and q*sw - pl + (S-1)*dw <= W - 1. */
    /* ceil(pad_left / stride_w), without overflow */
    int64_t qa = g->pad_left == 0 ? 0 : (g->pad_left - 1) / g->stride_w + 1;
    int64_t last = g->W - 1 + g->pad_left - (g->S - 1) * g->dilation_w;
    int64_t qb = last < 0 ? 0 : last / g->stride_w + 1;
    if (qa > g->Q) qa = g->Q;
    if (qb > g->Q) qb = g->Q;
    if (qb < qa) qb = qa;
    s->qa = qa;
    s->qb = qb;
    int64_t per_plane = g->P * g->Q * g->R * g->S;
    s->tasks = g->N * g->C;
    s->grain = per_plane >= 8192 ? 1 : 8192 / per_plane;
  }
  *workspace_bytes =
      s->nhwc || s->repack ? (size_t)(g->R * g->S * g->C * (int64_t)sizeof(float)) : 0;
}

/* Inputs {x, w} or {x, w, bias}. */
static void dw_run(const void *problem, const void *state, const void *const *inputs,
                   void *const *outputs, void *workspace) {
  const adnn_plugin_conv2d *g = problem;
  const dw_state *s = state;
  dw_job j = {g, s, inputs[0], inputs[1], g->has_bias ? inputs[2] : NULL, outputs[0], s->qa,
              s->qb};
  if (s->nhwc) {
    /* The filters as [R][S][C], so that a tap is a vector over channels. */
    float *wt = workspace;
    const float *wsrc = inputs[1];
    const int64_t *st = g->w.strides;
    for (int64_t r = 0; r < g->R; r++)
      for (int64_t ss = 0; ss < g->S; ss++)
        for (int64_t c = 0; c < g->C; c++) *wt++ = wsrc[c * st[0] + r * st[2] + ss * st[3]];
    j.w = workspace;
    adnn_cpu_parallel_for(s->tasks, s->grain, nhwc_task, &j);
  } else {
    if (s->repack) {
      adnn_cpu_conv2d_pack_kcrs(g, inputs[1], workspace);
      j.w = workspace;
    }
    adnn_cpu_parallel_for(s->tasks, s->grain, nchw_task, &j);
  }
}

const adnn_cpu_impl adnn_cpu_conv2d_depthwise_direct = {
    .name = "depthwise_direct",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32),
    .supports = dw_supports,
    .state_size = sizeof(dw_state),
    .reshape = dw_reshape,
    .run = dw_run,
};
