/*
 * 2-D pooling: max (NaN wins), average including padding (divided by the
 * window clipped to the padded image), average excluding padding (divided by
 * the number of in-image elements). Padding is at most half the kernel, so
 * every window holds at least one image element (validated by the core).
 *
 * Paths (reshape time):
 *   nhwc:  C has unit stride in x and y: each output pixel reduces its window
 *          with vectors across channels (the fast layout for pooling).
 *   nchw separable: W has unit stride in x (packed NCHW and most views):
 *          max and sum are separable, so each output row first reduces its
 *          rows [h0, h1) column-wise into a stack buffer with contiguous
 *          vector loads, then reduces kw neighbours of the buffer per output
 *          (vectorized for interior columns when stride_w is 1 or 2, scalar
 *          otherwise, which is cheap because the buffer is in L1).
 *   scalar: anything else (strided W): one output at a time with the window
 *          clipped to the image.
 * Work is split across threads by output rows: (n, c, p) for the NCHW-style
 * paths, (n, p) for nhwc.
 *
 * F16 and BF16 (the nchw separable and nhwc paths; the reference loops run
 * the strided rest): each output row widens the input rows its windows read
 * into the thread's F32 slab of the workspace with lowp.h's block
 * converters, runs the F32 vector code above on the slab into an F32 row,
 * and rounds that row once into y. The F32 code does the same operations on
 * the same values wherever they sit, so the 16-bit result is, bit for bit,
 * the F32 kernel's on the widened input rounded once (t/cpu-lowp-ops).
 */
#ifdef ADNN_SIMD_VECTOR_PART

SIMD_INLINE VF NAME(pool_step)(int kind, VF acc, VF v) {
  return kind == ADNN_POOL_MAX ? NAME(vmax_nan)(acc, v) : acc + v;
}

/* Vertical pass of the separable NCHW path: buf[j] = reduction over rows
 * [h0, h1) of x[h * sh + j] for j < n (x at unit column stride). Max and sum
 * are both separable, so the window reduction is this followed by a
 * horizontal pass over buf. */
SIMD_INLINE void NAME(pool_vert_k)(int kind, const float *x, int64_t sh, int64_t h0, int64_t h1,
                                   size_t n, float *buf) {
  const VF init = NAME(vset)(kind == ADNN_POOL_MAX ? -__builtin_inff() : 0.0f);
  size_t j = 0;
  for (; j + VL <= n; j += VL) {
    VF acc = init;
    for (int64_t h = h0; h < h1; h++) acc = NAME(pool_step)(kind, acc, NAME(vload)(x + h * sh + j));
    NAME(vstore)(buf + j, acc);
  }
  if (j < n) {
    VF acc = init;
    for (int64_t h = h0; h < h1; h++)
      acc = NAME(pool_step)(kind, acc, NAME(vload_n)(x + h * sh + j, n - j, 0.0f));
    NAME(vstore_n)(buf + j, acc, n - j);
  }
}
/* The kind is made a constant of each copy so the loops carry no branch. */
static void NAME(pool_vert)(int kind, const float *x, int64_t sh, int64_t h0, int64_t h1,
                            size_t n, float *buf) {
  if (kind == ADNN_POOL_MAX)
    NAME(pool_vert_k)(ADNN_POOL_MAX, x, sh, h0, h1, n, buf);
  else
    NAME(pool_vert_k)(ADNN_POOL_AVG_INCLUDE_PAD, x, sh, h0, h1, n, buf);
}

/* Horizontal pass for stride_w == 1 and interior outputs: y[j] = reduction of
 * buf[j .. j + kw) for j < n, divided by div for averages (y unit stride). */
SIMD_INLINE void NAME(pool_horiz_s1_k)(int kind, const float *buf, int64_t kw, size_t n,
                                       float div, float *y) {
  const VF init = NAME(vset)(kind == ADNN_POOL_MAX ? -__builtin_inff() : 0.0f);
  const VF vdiv = NAME(vset)(div);
  size_t j = 0;
  for (; j + VL <= n; j += VL) {
    VF acc = init;
    for (int64_t k = 0; k < kw; k++) acc = NAME(pool_step)(kind, acc, NAME(vload)(buf + j + k));
    if (kind != ADNN_POOL_MAX) acc = acc / vdiv;
    NAME(vstore)(y + j, acc);
  }
  if (j < n) {
    VF acc = init;
    for (int64_t k = 0; k < kw; k++)
      acc = NAME(pool_step)(kind, acc, NAME(vload_n)(buf + j + k, n - j, 0.0f));
    if (kind != ADNN_POOL_MAX) acc = acc / vdiv;
    NAME(vstore_n)(y + j, acc, n - j);
  }
}
static void NAME(pool_horiz_s1)(int kind, const float *buf, int64_t kw, size_t n, float div,
                                float *y) {
  if (kind == ADNN_POOL_MAX)
    NAME(pool_horiz_s1_k)(ADNN_POOL_MAX, buf, kw, n, div, y);
  else
    NAME(pool_horiz_s1_k)(ADNN_POOL_AVG_INCLUDE_PAD, buf, kw, n, div, y);
}

/* Lane indices picking the even elements of two concatenated vectors. */
#if VL == 16
#define POOL_EVEN 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#elif VL == 8
#define POOL_EVEN 0, 2, 4, 6, 8, 10, 12, 14
#else
#define POOL_EVEN 0, 2, 4, 6
#endif

/* Horizontal pass for stride_w == 2: y[j] = reduction of buf[2j .. 2j + kw)
 * for j < n. Two loads and an even-lane shuffle give VL strided windows at
 * once. The last vector may read up to 2 * VL floats past the n windows;
 * callers size buf for that (the lanes are never stored). */
SIMD_INLINE void NAME(pool_horiz_s2_k)(int kind, const float *buf, int64_t kw, size_t n,
                                       float div, float *y) {
  const VF init = NAME(vset)(kind == ADNN_POOL_MAX ? -__builtin_inff() : 0.0f);
  const VF vdiv = NAME(vset)(div);
  for (size_t j = 0; j < n; j += VL) {
    VF acc = init;
    for (int64_t k = 0; k < kw; k++) {
      const float *p = buf + 2 * j + k;
#if defined(__clang__) || __GNUC__ >= 12
      VF e = __builtin_shufflevector(NAME(vload)(p), NAME(vload)(p + VL), POOL_EVEN);
#else /* no __builtin_shufflevector before GCC 12: pick the lanes one by one */
      VF e;
      for (int l = 0; l < VL; l++) e[l] = p[2 * l];
#endif
      acc = NAME(pool_step)(kind, acc, e);
    }
    if (kind != ADNN_POOL_MAX) acc = acc / vdiv;
    if (j + VL <= n)
      NAME(vstore)(y + j, acc);
    else
      NAME(vstore_n)(y + j, acc, n - j);
  }
}
static void NAME(pool_horiz_s2)(int kind, const float *buf, int64_t kw, size_t n, float div,
                                float *y) {
  if (kind == ADNN_POOL_MAX)
    NAME(pool_horiz_s2_k)(ADNN_POOL_MAX, buf, kw, n, div, y);
  else
    NAME(pool_horiz_s2_k)(ADNN_POOL_AVG_INCLUDE_PAD, buf, kw, n, div, y);
}
#undef POOL_EVEN

/* One NHWC output pixel: C channels (unit stride) reduced over the in-image
 * window [h0, h1) x [w0, w1) of the image x (strides sh, sw). */
static void NAME(pool_pixel)(int kind, const float *x, int64_t sh, int64_t sw, int64_t h0,
                             int64_t h1, int64_t w0, int64_t w1, size_t C, float div, float *y) {
  const VF init = NAME(vset)(kind == ADNN_POOL_MAX ? -__builtin_inff() : 0.0f);
  const VF vdiv = NAME(vset)(div);
  for (size_t c = 0; c < C; c += VL) {
    const size_t m = C - c < VL ? C - c : VL;
    VF acc = init;
    for (int64_t h = h0; h < h1; h++)
      for (int64_t w = w0; w < w1; w++) {
        const float *p = x + h * sh + w * sw + (int64_t)c;
        acc = NAME(pool_step)(kind, acc, m == VL ? NAME(vload)(p) : NAME(vload_n)(p, m, 0.0f));
      }
    if (kind != ADNN_POOL_MAX) acc = acc / vdiv;
    if (m == VL)
      NAME(vstore)(y + c, acc);
    else
      NAME(vstore_n)(y + c, acc, m);
  }
}

/* This instruction set's copy. */
static const pool_fns NAME(adnn_f32_pool2d) = {
    NAME(pool_vert), NAME(pool_horiz_s1), NAME(pool_horiz_s2), NAME(pool_pixel)};

#else /* the dispatch part */

#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/lowp.h"
#include "kernels/cpu/simd.h"

/* One instruction set's copy of the vector code. */
typedef struct pool_fns {
  void (*vert)(int kind, const float *x, int64_t sh, int64_t h0, int64_t h1, size_t n,
               float *buf);
  void (*horiz_s1)(int kind, const float *buf, int64_t kw, size_t n, float div, float *y);
  void (*horiz_s2)(int kind, const float *buf, int64_t kw, size_t n, float div, float *y);
  void (*pixel)(int kind, const float *x, int64_t sh, int64_t sw, int64_t h0, int64_t h1,
                int64_t w0, int64_t w1, size_t C, float div, float *y);
} pool_fns;

#define ADNN_SIMD_KERNEL "kernels/cpu/pool2d.c"
#include "kernels/cpu/simd_instantiate.h"

static const pool_fns *const pool_by_isa[ADNN_CPU_ISA_COUNT] = ADNN_CPU_ISA_TABLE(adnn_f32_pool2d);

enum { PATH_SCALAR = 0, PATH_NCHW_SEP = 1, PATH_NHWC = 2 };

typedef struct pool_state {
  const pool_fns *fn;
  int path;
  int64_t tasks; /* output rows: (n, c, p) for the NCHW-style paths, (n, p) for nhwc */
  int64_t grain;
  adnn_dtype dtype;   /* F32, or F16 / BF16 (run_rows_lowp, run_nhwc_lowp) */
  int isa;            /* env->isa, for the lowp.h converters */
  size_t lowp_floats; /* F16/BF16: each thread's F32 floats in the workspace */
} pool_state;

static int pool_path(const adnn_plugin_pool2d *d) {
  if (d->C > 1 && d->x.strides[1] == 1 && d->y.strides[1] == 1) return PATH_NHWC;
  if ((d->x.strides[3] == 1 || d->W == 1) && d->kernel_w <= 512) return PATH_NCHW_SEP;
  return PATH_SCALAR;
}

/* F16/BF16 run on the two vector paths only. */
static int pool_supports(const void *problem, const adnn_cpu_env *env, char *why,
                         size_t why_size) {
  (void)env;
  const adnn_plugin_pool2d *d = problem;
  if (d->x.dtype == ADNN_DTYPE_F32 || pool_path(d) != PATH_SCALAR) return 1;
  snprintf(why, why_size, "f16/bf16 need unit-stride channels (nhwc) or unit-stride columns");
  return 0;
}

static void pool_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                         size_t *workspace_bytes) {
  const adnn_plugin_pool2d *d = problem;
  pool_state *s = state;
  s->fn = pool_by_isa[env->isa];
  s->path = pool_path(d);
  s->dtype = d->x.dtype;
  s->isa = env->isa;
  /* Work per output row, in element reads, sets the grain. */
  const int64_t per_row = d->Q * d->kernel_h * d->kernel_w * (s->path == PATH_NHWC ? d->C : 1);
  int64_t grain = ADNN_CPU_GRAIN / (per_row > 0 ? per_row : 1);
  s->grain = grain < 1 ? 1 : grain;
  s->tasks = s->path == PATH_NHWC ? d->N * d->P : d->N * d->C * d->P;
  *workspace_bytes = 0;
  if (s->dtype != ADNN_DTYPE_F32) {
    /* A window reads at most min(kernel_h, H) input rows: the slab holds
     * them widened (W floats each, times C for nhwc), followed by the F32
     * output row (Q floats, times C); each thread's part is rounded up to 64
     * bytes. */
    const int64_t rows = d->kernel_h < d->H ? d->kernel_h : d->H;
    const int64_t per_pixel = s->path == PATH_NHWC ? d->C : 1;
    const size_t floats = (size_t)((rows * d->W + d->Q) * per_pixel);
    s->lowp_floats = (floats + 15) / 16 * 16;
    *workspace_bytes = (size_t)env->threads * s->lowp_floats * sizeof(float);
  }
}

typedef struct pool_task {
  const adnn_plugin_pool2d *d;
  const pool_state *s;
  const float *x;
  float *y;
} pool_task;

/* The in-image part [h0, h1) of the window of output row p, and the row
 * factor of its divisor (include-pad: clipped to the padded extent). */
static void window_rows(const adnn_plugin_pool2d *d, int64_t p, int64_t *h0, int64_t *h1,
                        int64_t *rows_div) {
  const int64_t H = d->H;
  const int64_t a = p * d->stride_h - d->pad_top, b = a + d->kernel_h;
  *h0 = a < 0 ? 0 : a;
  *h1 = b > H ? H : b;
  if (d->kind == ADNN_POOL_AVG_INCLUDE_PAD) {
    const int64_t ca = a < -d->pad_top ? -d->pad_top : a;
    const int64_t cb = b > H + d->pad_bottom ? H + d->pad_bottom : b;
    *rows_div = cb - ca;
  } else {
    *rows_div = *h1 - *h0;
  }
}

static void window_cols(const adnn_plugin_pool2d *d, int64_t q, int64_t *w0, int64_t *w1,
                        int64_t *cols_div) {
  const int64_t W = d->W;
  const int64_t a = q * d->stride_w - d->pad_left, b = a + d->kernel_w;
  *w0 = a < 0 ? 0 : a;
  *w1 = b > W ? W : b;
  if (d->kind == ADNN_POOL_AVG_INCLUDE_PAD) {
    const int64_t ca = a < -d->pad_left ? -d->pad_left : a;
    const int64_t cb = b > W + d->pad_right ? W + d->pad_right : b;
    *cols_div = cb - ca;
  } else {
    *cols_div = *w1 - *w0;
  }
}

/* One output at any strides; x points at the (n, c) plane. */
static float pool_one(const adnn_plugin_pool2d *d, const float *x, int64_t h0, int64_t h1,
                      int64_t w0, int64_t w1, float div) {
  const int64_t sh = d->x.strides[2], sw = d->x.strides[3];
  if (d->kind == ADNN_POOL_MAX) {
    float m = -INFINITY;
    for (int64_t h = h0; h < h1; h++)
      for (int64_t w = w0; w < w1; w++) {
        const float v = x[h * sh + w * sw];
        if (v != v) return v;
        if (v > m) m = v;
      }
    return m;
  }
  float s = 0.0f;
  for (int64_t h = h0; h < h1; h++)
    for (int64_t w = w0; w < w1; w++) s += x[h * sh + w * sw];
  return s / div;
}

/* Stack buffer of the separable path (vertical reductions of one tile). */
#define SEP_BUF 1024

/* One output row of the separable path: x is the plane (rows [h0, h1) at
 * stride sh, unit column stride), y the row (stride syq), buf the caller's
 * SEP_BUF + 64 floats. */
static void sep_row(const adnn_plugin_pool2d *d, const pool_fns *fn, const float *x, int64_t sh,
                    int64_t h0, int64_t h1, int64_t rdiv, float *y, int64_t syq, float *buf) {
  const int64_t W = d->W, Q = d->Q;
  const int64_t kw = d->kernel_w, sw = d->stride_w, pl = d->pad_left;
  {
    /* Tiles of outputs whose input columns fit in buf. */
    const int64_t tq = (SEP_BUF - kw) / sw + 1;
    for (int64_t q0 = 0; q0 < Q; q0 += tq) {
      const int64_t q1 = q0 + tq < Q ? q0 + tq : Q;
      int64_t ws = q0 * sw - pl, we = (q1 - 1) * sw - pl + kw;
      if (ws < 0) ws = 0;
      if (we > W) we = W;
      fn->vert(d->kind, x + ws, sh, h0, h1, (size_t)(we - ws), buf);
      /* Interior outputs (window inside [0, W)) of this tile, vectorized when
       * stride_w is 1 and y is unit stride; the rest one by one. */
      int64_t qa = q1, qb = q1;
      if ((sw == 1 || sw == 2) && syq == 1 && W - kw + pl >= 0) {
        qa = (pl + sw - 1) / sw; /* first q with q * sw - pl >= 0 */
        qb = (W - kw + pl) / sw + 1; /* past the last q with q * sw - pl + kw <= W */
        if (qa < q0) qa = q0;
        if (qb > q1) qb = q1;
        if (qb <= qa) {
          qa = qb = q1;
        } else if (sw == 1) {
          fn->horiz_s1(d->kind, buf + (qa - pl - ws), kw, (size_t)(qb - qa), (float)(rdiv * kw),
                       y + qa);
        } else {
          fn->horiz_s2(d->kind, buf + (2 * qa - pl - ws), kw, (size_t)(qb - qa),
                       (float)(rdiv * kw), y + qa);
        }
      }
      for (int64_t q = q0; q < q1; q++) {
        if (q == qa) q = qb; /* skip the interior done above */
        if (q >= q1) break;
        int64_t w0, w1, cdiv;
        window_cols(d, q, &w0, &w1, &cdiv);
        const float div = (float)(rdiv * cdiv);
        float r;
        if (d->kind == ADNN_POOL_MAX) {
          r = -INFINITY;
          for (int64_t w = w0; w < w1; w++) {
            const float v = buf[w - ws];
            if (v != v || v > r) r = v;
            if (r != r) break;
          }
        } else {
          r = 0.0f;
          for (int64_t w = w0; w < w1; w++) r += buf[w - ws];
          r /= div;
        }
        y[q * syq] = r;
      }
    }
  }
}

/* Output rows [begin, end) over all planes: unit = plane * P + p. */
static void run_rows(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const pool_task *t = arg;
  const adnn_plugin_pool2d *d = t->d;
  const int64_t C = d->C, P = d->P, Q = d->Q, syq = d->y.strides[3];
  float buf[SEP_BUF + 64]; /* slack for the stride-2 pass, see pool_horiz_s2 */
  for (int64_t u = begin; u < end; u++) {
    const int64_t plane = u / P, p = u - plane * P, n = plane / C, c = plane - n * C;
    const float *x = t->x + n * d->x.strides[0] + c * d->x.strides[1];
    float *y = t->y + n * d->y.strides[0] + c * d->y.strides[1] + p * d->y.strides[2];
    int64_t h0, h1, rdiv;
    window_rows(d, p, &h0, &h1, &rdiv);
    if (t->s->path != PATH_NCHW_SEP) {
      for (int64_t q = 0; q < Q; q++) {
        int64_t w0, w1, cdiv;
        window_cols(d, q, &w0, &w1, &cdiv);
        y[q * syq] = pool_one(d, x, h0, h1, w0, w1, (float)(rdiv * cdiv));
      }
      continue;
    }
    sep_row(d, t->s->fn, x, d->x.strides[2], h0, h1, rdiv, y, syq, buf);
  }
}

/* NHWC: units are (n, p) output rows. */
static void run_nhwc(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const pool_task *t = arg;
  const adnn_plugin_pool2d *d = t->d;
  const int64_t C = d->C, P = d->P, Q = d->Q;
  for (int64_t u = begin; u < end; u++) {
    const int64_t n = u / P, p = u - n * P;
    const float *x = t->x + n * d->x.strides[0];
    float *y = t->y + n * d->y.strides[0] + p * d->y.strides[2];
    int64_t h0, h1, rdiv;
    window_rows(d, p, &h0, &h1, &rdiv);
    for (int64_t q = 0; q < Q; q++) {
      int64_t w0, w1, cdiv;
      window_cols(d, q, &w0, &w1, &cdiv);
      t->s->fn->pixel(d->kind, x, d->x.strides[2], d->x.strides[3], h0, h1, w0, w1, (size_t)C,
                      (float)(rdiv * cdiv), y + q * d->y.strides[3]);
    }
  }
}

/* ---- F16 / BF16 ----------------------------------------------------------- */

typedef struct pool_lowp_task {
  const adnn_plugin_pool2d *d;
  const pool_state *s;
  const uint16_t *x;
  uint16_t *y;
  float *work; /* threads parts of s->lowp_floats floats */
} pool_lowp_task;

/* n 16-bit elements at stride `stride` rounded from f. */
static void narrow_strided(const pool_state *s, const float *f, uint16_t *y, int64_t stride,
                           int64_t n) {
  if (stride == 1 || n == 1) {
    adnn_cpu_lowp_from_f32(s->isa, s->dtype, f, y, (size_t)n);
    return;
  }
  uint16_t h[ADNN_CPU_LOWP_BLOCK];
  for (int64_t j0 = 0; j0 < n; j0 += ADNN_CPU_LOWP_BLOCK) {
    const int64_t m = n - j0 < ADNN_CPU_LOWP_BLOCK ? n - j0 : ADNN_CPU_LOWP_BLOCK;
    adnn_cpu_lowp_from_f32(s->isa, s->dtype, f + j0, h, (size_t)m);
    for (int64_t j = 0; j < m; j++) y[(j0 + j) * stride] = h[j];
  }
}

/* The separable path: the window's rows of the plane widened into the slab
 * (W floats each), the F32 row computed into the slab's tail, then rounded. */
static void run_rows_lowp(void *arg, int64_t begin, int64_t end, int thread) {
  const pool_lowp_task *t = arg;
  const pool_state *s = t->s;
  const adnn_plugin_pool2d *d = t->d;
  const int64_t C = d->C, W = d->W, P = d->P, Q = d->Q, sh = d->x.strides[2];
  const int64_t rows = d->kernel_h < d->H ? d->kernel_h : d->H;
  float *slab = t->work + (size_t)thread * s->lowp_floats, *row = slab + rows * W;
  float buf[SEP_BUF + 64]; /* slack for the stride-2 pass, see pool_horiz_s2 */
  for (int64_t u = begin; u < end; u++) {
    const int64_t plane = u / P, p = u - plane * P, n = plane / C, c = plane - n * C;
    const uint16_t *x = t->x + n * d->x.strides[0] + c * d->x.strides[1];
    uint16_t *y = t->y + n * d->y.strides[0] + c * d->y.strides[1] + p * d->y.strides[2];
    int64_t h0, h1, rdiv;
    window_rows(d, p, &h0, &h1, &rdiv);
    /* Unit column stride (or W == 1, where the stride is never used). */
    for (int64_t h = h0; h < h1; h++)
      adnn_cpu_lowp_to_f32(s->isa, s->dtype, x + h * sh, slab + (h - h0) * W, (size_t)W);
    sep_row(d, s->fn, slab, W, 0, h1 - h0, rdiv, row, 1, buf);
    narrow_strided(s, row, y, d->y.strides[3], Q);
  }
}

/* NHWC: the window's rows of the image widened into the slab (W pixels of C
 * floats each), each output pixel computed into the slab's tail, then the
 * row rounded pixel by pixel (C has unit stride in y). */
static void run_nhwc_lowp(void *arg, int64_t begin, int64_t end, int thread) {
  const pool_lowp_task *t = arg;
  const pool_state *s = t->s;
  const adnn_plugin_pool2d *d = t->d;
  const int64_t C = d->C, W = d->W, P = d->P, Q = d->Q;
  const int64_t sh = d->x.strides[2], sw = d->x.strides[3];
  const int64_t rows = d->kernel_h < d->H ? d->kernel_h : d->H;
  float *slab = t->work + (size_t)thread * s->lowp_floats, *row = slab + rows * W * C;
  for (int64_t u = begin; u < end; u++) {
    const int64_t n = u / P, p = u - n * P;
    const uint16_t *x = t->x + n * d->x.strides[0];
    uint16_t *y = t->y + n * d->y.strides[0] + p * d->y.strides[2];
    int64_t h0, h1, rdiv;
    window_rows(d, p, &h0, &h1, &rdiv);
    for (int64_t h = h0; h < h1; h++)
      for (int64_t w = 0; w < W; w++)
        adnn_cpu_lowp_to_f32(s->isa, s->dtype, x + h * sh + w * sw,
                             slab + ((h - h0) * W + w) * C, (size_t)C);
    for (int64_t q = 0; q < Q; q++) {
      int64_t w0, w1, cdiv;
      window_cols(d, q, &w0, &w1, &cdiv);
      s->fn->pixel(d->kind, slab, W * C, C, 0, h1 - h0, w0, w1, (size_t)C, (float)(rdiv * cdiv),
                   row + q * C);
      adnn_cpu_lowp_from_f32(s->isa, s->dtype, row + q * C, y + q * d->y.strides[3], (size_t)C);
    }
  }
}

static void pool_run(const void *problem, const void *state, const void *const *inputs,
                     void *const *outputs, void *workspace) {
  const pool_state *s = state;
  if (s->dtype != ADNN_DTYPE_F32) {
    pool_lowp_task lt = {problem, s, inputs[0], outputs[0], workspace};
    adnn_cpu_parallel_for(s->tasks, s->grain,
                          s->path == PATH_NHWC ? run_nhwc_lowp : run_rows_lowp, &lt);
    return;
  }
  pool_task t = {problem, s, inputs[0], outputs[0]};
  adnn_cpu_parallel_for(s->tasks, s->grain, s->path == PATH_NHWC ? run_nhwc : run_rows, &t);
}

const adnn_cpu_impl adnn_cpu_pool2d_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32) | ADNN_OP_DTYPE(ADNN_DTYPE_F16) |
              ADNN_OP_DTYPE(ADNN_DTYPE_BF16),
    .supports = pool_supports,
    .state_size = sizeof(pool_state),
    .reshape = pool_reshape,
    .run = pool_run,
};

#endif
