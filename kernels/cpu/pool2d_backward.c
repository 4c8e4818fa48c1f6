/*
 * 2-D pooling backward: dx from x and dy (y is not read: max pooling finds
 * the window's maximum in x again, which gives the same element as comparing
 * with y, and needs no trust in the caller's y).
 *
 *   max: each dy goes to one element of its window: the first NaN in
 *        row-major (h, then w) order if the window holds one, else the first
 *        element equal to the maximum (doc/ops.md);
 *   avg: each dy is divided by the forward divisor of its window and added
 *        to every in-image element of it.
 * Windows overlap when the stride is below the kernel, so dx is zeroed and
 * then accumulated into (in float; a dx element receives at most
 * ceil(kernel / stride)^2 terms).
 *
 * Paths (reshape time):
 *   nhwc:  C has unit stride in x and y: work is split over (n, block of 64
 *          channels); every window is handled with vectors across channels
 *          (max: a per-lane running maximum with the index of its position,
 *          then a masked add at each window position);
 *   planes: anything else, split over (n, c) planes. Average pooling with
 *          unit W stride is separable: for each output row, the row's dy /
 *          divisor terms are first spread horizontally into a row buffer
 *          (scalar, in L1), which is then added to each of the window's input
 *          rows with vector adds. Max pooling with unit W stride is separable
 *          too: a vector pass over the window's rows gives every column's
 *          maximum and the first row holding it, and each output then picks
 *          its best column from that buffer (larger value, then smaller row,
 *          then smaller column: the row-major first, NaN beating numbers).
 *          Strided W runs scalar.
 * Each task owns whole planes or channel blocks of dx, so no two threads
 * touch one element and the result does not depend on the thread count.
 * F16 and BF16: x and dy are widened exactly into F32 copies in the
 * workspace (same strides, the whole span), the F32 paths above run on them
 * into an F32 dx there (the accumulation of overlapping windows stays in
 * F32), and every element of dx is rounded once into the 16-bit dx (its
 * padding untouched): bit for bit the F32 kernel on the widened inputs,
 * rounded (doc/numerics.md).
 * Compiled in two roles like activation.c (simd_instantiate.h).
 */
#ifdef ADNN_SIMD_VECTOR_PART

/* dst[i] += src[i] for i < n. */
static void NAME(pbw_add)(float *dst, const float *src, size_t n) {
  size_t i = 0;
  for (; i + VL <= n; i += VL) NAME(vstore)(dst + i, NAME(vload)(dst + i) + NAME(vload)(src + i));
  if (i < n)
    NAME(vstore_n)(dst + i, NAME(vload_n)(dst + i, n - i, 0.0f) + NAME(vload_n)(src + i, n - i, 0.0f),
                   n - i);
}

/* One NHWC output pixel over nc <= VL channels at x / dx (both at the
 * pixel's image and first channel, strides sh and sw) and dy (unit stride):
 * the window is [h0, h1) x [w0, w1). */
static void NAME(pbw_pixel)(int kind, const float *x, float *dx, int64_t sh, int64_t sw,
                            int64_t h0, int64_t h1, int64_t w0, int64_t w1, const float *dy,
                            size_t nc, float div) {
  const VF zero = {0};
  const VF g = nc == VL ? NAME(vload)(dy) : NAME(vload_n)(dy, nc, 0.0f);
#define PBW_LD(p) (nc == VL ? NAME(vload)(p) : NAME(vload_n)((p), nc, 0.0f))
#define PBW_ADD(p, v)                                       \
  do {                                                      \
    if (nc == VL)                                           \
      NAME(vstore)((p), NAME(vload)(p) + (v));              \
    else                                                    \
      NAME(vstore_n)((p), NAME(vload_n)((p), nc, 0.0f) + (v), nc); \
  } while (0)
  if (kind != ADNN_POOL_MAX) {
    const VF v = g / div;
    for (int64_t h = h0; h < h1; h++)
      for (int64_t w = w0; w < w1; w++) PBW_ADD(dx + h * sh + w * sw, v);
    return;
  }
  /* Running maximum per lane with the number of its window position; a NaN
   * replaces a non-NaN maximum once, and nothing replaces a NaN. */
  VF best = PBW_LD(x + h0 * sh + w0 * sw);
  VI at = {0};
  int32_t k = 0;
  for (int64_t h = h0; h < h1; h++)
    for (int64_t w = w0; w < w1; w++, k++) {
      const VF v = PBW_LD(x + h * sh + w * sw);
      const VI take = (v > best) | (NAME(visnan)(v) & ~NAME(visnan)(best));
      best = NAME(vsel)(take, v, best);
      at = (take & ((VI){0} + k)) | (~take & at);
    }
  k = 0;
  for (int64_t h = h0; h < h1; h++)
    for (int64_t w = w0; w < w1; w++, k++) {
      const VI mine = at == ((VI){0} + k);
      PBW_ADD(dx + h * sh + w * sw, NAME(vsel)(mine, g, zero));
    }
#undef PBW_LD
#undef PBW_ADD
}

/* The vertical pass of max pooling's separable search (NCHW, unit column
 * stride): for each column j < n of the plane x (row stride sh), the maximum
 * over rows [h0, h1) and the first row that holds it (a NaN, the first NaN
 * row, beats every number), into m[j] and at[j]. The first maximum of a
 * window in row-major order is then the column maximum with the largest
 * value, ties going to the smaller row and then to the smaller column
 * (pbw_run's horizontal pass). */
static void NAME(pbw_colmax)(const float *x, int64_t sh, int64_t h0, int64_t h1, size_t n,
                             float *m, int32_t *at) {
  size_t j = 0;
  for (; j < n; j += VL) {
    const size_t w = n - j < VL ? n - j : VL;
    VF best = w == VL ? NAME(vload)(x + h0 * sh + j) : NAME(vload_n)(x + h0 * sh + j, w, 0.0f);
    VI ah = (VI){0} + (int32_t)h0;
    for (int64_t h = h0 + 1; h < h1; h++) {
      const VF v = w == VL ? NAME(vload)(x + h * sh + j) : NAME(vload_n)(x + h * sh + j, w, 0.0f);
      const VI take = (v > best) | (NAME(visnan)(v) & ~NAME(visnan)(best));
      best = NAME(vsel)(take, v, best);
      ah = (take & ((VI){0} + (int32_t)h)) | (~take & ah);
    }
    if (w == VL) {
      NAME(vstore)(m + j, best);
      memcpy(at + j, &ah, sizeof ah);
    } else {
      NAME(vstore_n)(m + j, best, w);
      memcpy(at + j, &ah, w * sizeof(int32_t));
    }
  }
}

/* Lane indices picking the even elements of two concatenated vectors. */
#if VL == 16
#define PBW_EVEN 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#elif VL == 8
#define PBW_EVEN 0, 2, 4, 6, 8, 10, 12, 14
#else
#define PBW_EVEN 0, 2, 4, 6
#endif

/* The horizontal pass for n <= VL neighbouring interior outputs, one per
 * lane: output l's window covers columns w0 + l * sw + [0, kw) of the column
 * maxima m and their rows at (pbw_colmax); writes the winning row and column
 * of each output to wr[l] and wc[l]. The comparison is pbw_run's: a NaN beats
 * a number, a larger value wins, and on ties the smaller row (then the
 * smaller column, the earlier j) stays. */
static void NAME(pbw_hpick)(const float *m, const int32_t *at, int64_t w0, int64_t sw, int64_t kw,
                            size_t n, int32_t *wr, int32_t *wc) {
  VF best;
  VI bh, bw;
  for (int64_t j = 0; j < kw; j++) {
    VF v;
    VI h, c;
    if (sw == 1) { /* contiguous: lanes past n read 0 and are never stored */
      v = n == VL ? NAME(vload)(m + w0 + j) : NAME(vload_n)(m + w0 + j, n, 0.0f);
      h = (VI)(n == VL ? NAME(vload)((const float *)at + w0 + j)
                       : NAME(vload_n)((const float *)at + w0 + j, n, 0.0f));
      for (int l = 0; l < VL; l++) c[l] = (int32_t)(w0 + j + l);
    }
#if defined(__clang__) || __GNUC__ >= 12
    else if (sw == 2) { /* two loads and the even lanes; the buffers have 2 VL floats of slack */
      const float *pm = m + w0 + j, *pa = (const float *)at + w0 + j;
      v = __builtin_shufflevector(NAME(vload)(pm), NAME(vload)(pm + VL), PBW_EVEN);
      h = (VI)__builtin_shufflevector(NAME(vload)(pa), NAME(vload)(pa + VL), PBW_EVEN);
      for (int l = 0; l < VL; l++) c[l] = (int32_t)(w0 + j + 2 * l);
    }
#endif
    else {
      for (int l = 0; l < VL; l++) {
        const int64_t w = w0 + (int64_t)((size_t)l < n ? l : 0) * sw + j;
        v[l] = m[w];
        h[l] = at[w];
        c[l] = (int32_t)w;
      }
    }
    if (j == 0) {
      best = v, bh = h, bw = c;
      continue;
    }
    const VI vnan = NAME(visnan)(v), bnan = NAME(visnan)(best);
    const VI better = (vnan & ~bnan) | (v > best) | (((v == best) | (vnan & bnan)) & (h < bh));
    best = NAME(vsel)(better, v, best);
    bh = (better & h) | (~better & bh);
    bw = (better & c) | (~better & bw);
  }
  memcpy(wr, &bh, n * sizeof(int32_t));
  memcpy(wc, &bw, n * sizeof(int32_t));
}

#undef PBW_EVEN

static const pbw_fns NAME(adnn_f32_pool2d_backward) = {NAME(pbw_add), NAME(pbw_pixel),
                                                       NAME(pbw_colmax), NAME(pbw_hpick), VL};

#else /* the dispatch part */

#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/lowp.h"
#include "kernels/cpu/simd.h"

typedef struct pbw_fns {
  void (*add)(float *dst, const float *src, size_t n);
  void (*pixel)(int kind, const float *x, float *dx, int64_t sh, int64_t sw, int64_t h0,
                int64_t h1, int64_t w0, int64_t w1, const float *dy, size_t nc, float div);
  void (*colmax)(const float *x, int64_t sh, int64_t h0, int64_t h1, size_t n, float *m,
                 int32_t *at);
  void (*hpick)(const float *m, const int32_t *at, int64_t w0, int64_t sw, int64_t kw, size_t n,
                int32_t *wr, int32_t *wc);
  size_t lanes;
} pbw_fns;

#define ADNN_SIMD_KERNEL "kernels/cpu/pool2d_backward.c"
#include "kernels/cpu/simd_instantiate.h"

static const pbw_fns *const pbw_by_isa[ADNN_CPU_ISA_COUNT] =
    ADNN_CPU_ISA_TABLE(adnn_f32_pool2d_backward);

enum { PATH_NHWC = 0, PATH_PLANES = 1 };

/* Floats of slack after each buffer of the separable max, for the
 * stride-2 horizontal pass's two loads (2 VL floats past its last window,
 * VL at most 16). */
#define PBW_SLACK 64

/* Channels per NHWC task: a multiple of every instruction set's lanes. */
#define PBW_CHANNEL_BLOCK 64

typedef struct pbw_state {
  const pbw_fns *fn;
  int path;
  int separable;     /* planes path: average pooling with unit W stride in x */
  int separable_max; /* planes path: max pooling with unit W stride in x */
  int64_t blocks; /* nhwc: channel blocks per image */
  int64_t tasks, grain;
  int64_t row_floats; /* separable: floats of each thread's row buffer */
  /* F16/BF16: the dtype, the ISA for the conversions, the F32 copies' byte
   * offsets in the workspace and element spans, and dx's rows. */
  adnn_dtype dtype;
  int isa;
  size_t x_off, dy_off, dx_off;
  int64_t nx, ny;
  adnn_nd dx_rows;
} pbw_state;

/* The window of output row p: its in-image rows [h0, h1) and the divisor's
 * row count (the window clipped to the padded image for AVG_INCLUDE_PAD, to
 * the image otherwise); likewise for columns. As kernels/cpu/pool2d.c. */
static void window_rows(const adnn_plugin_pool2d *d, int64_t p, int64_t *h0, int64_t *h1,
                        int64_t *div) {
  const int64_t a = p * d->stride_h - d->pad_top, b = a + d->kernel_h;
  *h0 = a < 0 ? 0 : a;
  *h1 = b > d->H ? d->H : b;
  if (d->kind == ADNN_POOL_AVG_INCLUDE_PAD) {
    const int64_t ca = a < -d->pad_top ? -d->pad_top : a;
    const int64_t cb = b > d->H + d->pad_bottom ? d->H + d->pad_bottom : b;
    *div = cb - ca;
  } else {
    *div = *h1 - *h0;
  }
}

static void window_cols(const adnn_plugin_pool2d *d, int64_t q, int64_t *w0, int64_t *w1,
                        int64_t *div) {
  const int64_t a = q * d->stride_w - d->pad_left, b = a + d->kernel_w;
  *w0 = a < 0 ? 0 : a;
  *w1 = b > d->W ? d->W : b;
  if (d->kind == ADNN_POOL_AVG_INCLUDE_PAD) {
    const int64_t ca = a < -d->pad_left ? -d->pad_left : a;
    const int64_t cb = b > d->W + d->pad_right ? d->W + d->pad_right : b;
    *div = cb - ca;
  } else {
    *div = *w1 - *w0;
  }
}

static int64_t span_of(const adnn_tensor_desc *t) {
  int64_t s = 1;
  for (int i = 0; i < t->rank; i++) s += (t->dims[i] - 1) * t->strides[i];
  return s;
}

/* F16/BF16: the F32 copies after the F32 paths' row buffers (*workspace_bytes
 * so far), 64-byte aligned. Nothing for F32. */
static void lowp_reshape(const adnn_plugin_pool2d *d, const adnn_cpu_env *env, pbw_state *s,
                         size_t *workspace_bytes) {
  s->dtype = d->x.dtype;
  s->isa = env->isa;
  if (s->dtype != ADNN_DTYPE_F16 && s->dtype != ADNN_DTYPE_BF16) return;
  s->nx = span_of(&d->x);
  s->ny = span_of(&d->y);
  size_t off = (*workspace_bytes + 63) / 64 * 64;
  s->x_off = off;
  off += ((size_t)s->nx * sizeof(float) + 63) / 64 * 64;
  s->dy_off = off;
  off += ((size_t)s->ny * sizeof(float) + 63) / 64 * 64;
  s->dx_off = off;
  off += (size_t)s->nx * sizeof(float);
  *workspace_bytes = off; /* the plan's workspace starts 64-byte aligned */
  const adnn_tensor_desc *t[1] = {&d->x};
  adnn_cpu_loop_init(&s->dx_rows, 1, t);
}

static void pbw_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                        size_t *workspace_bytes) {
  const adnn_plugin_pool2d_backward *pb = problem;
  const adnn_plugin_pool2d *d = &pb->fwd;
  pbw_state *s = state;
  s->fn = pbw_by_isa[env->isa];
  const int64_t work = d->H * d->W + d->P * d->Q * d->kernel_h * d->kernel_w;
  if ((d->x.strides[1] == 1 || d->C == 1) && (d->y.strides[1] == 1 || d->C == 1) && d->C > 1) {
    s->path = PATH_NHWC;
    s->blocks = (d->C + PBW_CHANNEL_BLOCK - 1) / PBW_CHANNEL_BLOCK;
    s->tasks = d->N * s->blocks;
    const int64_t per = work * (d->C < PBW_CHANNEL_BLOCK ? d->C : PBW_CHANNEL_BLOCK);
    s->grain = per >= ADNN_CPU_GRAIN ? 1 : ADNN_CPU_GRAIN / (per > 0 ? per : 1);
    *workspace_bytes = 0;
    lowp_reshape(d, env, s, workspace_bytes);
    return;
  }
  s->path = PATH_PLANES;
  s->tasks = d->N * d->C;
  s->grain = work >= ADNN_CPU_GRAIN ? 1 : ADNN_CPU_GRAIN / (work > 0 ? work : 1);
  const int unit_w = d->x.strides[3] == 1 || d->W == 1;
  s->separable = d->kind != ADNN_POOL_MAX && unit_w;
  s->separable_max = d->kind == ADNN_POOL_MAX && unit_w;
  /* Per thread: one input row for the separable average (W floats), or the
   * column maxima and their rows for the separable max (W floats and W
   * int32, each with PBW_SLACK of slack). */
  s->row_floats = s->separable ? d->W : s->separable_max ? 2 * (d->W + PBW_SLACK) : 0;
  *workspace_bytes = (size_t)s->row_floats * sizeof(float) * (size_t)env->threads;
  lowp_reshape(d, env, s, workspace_bytes);
}

typedef struct pbw_task {
  const adnn_plugin_pool2d *d;
  const pbw_state *s;
  const float *x, *dy;
  float *dx;
  float *workspace;
} pbw_task;

/* Zeroes an H x W plane of dx at strides (sh, sw). */
static void zero_plane(float *dx, int64_t H, int64_t W, int64_t sh, int64_t sw) {
  for (int64_t h = 0; h < H; h++) {
    float *row = dx + h * sh;
    if (sw == 1) {
      memset(row, 0, (size_t)W * sizeof(float));
    } else {
      for (int64_t w = 0; w < W; w++) row[w * sw] = 0.0f;
    }
  }
}

static void run_planes(void *arg, int64_t begin, int64_t end, int thread) {
  const pbw_task *t = arg;
  const adnn_plugin_pool2d *d = t->d;
  const pbw_state *s = t->s;
  const int64_t xsh = d->x.strides[2], xsw = d->x.strides[3];
  const int64_t ysh = d->y.strides[2], ysw = d->y.strides[3];
  float *row = s->row_floats ? t->workspace + (size_t)thread * (size_t)s->row_floats : NULL;
  for (int64_t u = begin; u < end; u++) {
    const int64_t n = u / d->C, c = u - n * d->C;
    const float *x = t->x + n * d->x.strides[0] + c * d->x.strides[1];
    float *dx = t->dx + n * d->x.strides[0] + c * d->x.strides[1];
    const float *dy = t->dy + n * d->y.strides[0] + c * d->y.strides[1];
    zero_plane(dx, d->H, d->W, xsh, xsw);
    for (int64_t p = 0; p < d->P; p++) {
      int64_t h0, h1, rdiv;
      window_rows(d, p, &h0, &h1, &rdiv);
      if (s->separable) {
        /* row[w] = sum over the windows q covering column w of
         * dy[p, q] / divisor(p, q). */
        memset(row, 0, (size_t)s->row_floats * sizeof(float));
        for (int64_t q = 0; q < d->Q; q++) {
          int64_t w0, w1, cdiv;
          window_cols(d, q, &w0, &w1, &cdiv);
          const float g = dy[p * ysh + q * ysw] / (float)(rdiv * cdiv);
          for (int64_t w = w0; w < w1; w++) row[w] += g;
        }
        for (int64_t h = h0; h < h1; h++) s->fn->add(dx + h * xsh, row, (size_t)d->W);
        continue;
      }
      if (s->separable_max) {
        /* Column maxima of the window's rows, then per output the best
         * column (value, then row, then column: row-major first). */
        float *m = row;
        int32_t *at = (int32_t *)(row + d->W + PBW_SLACK);
        s->fn->colmax(x, xsh, h0, h1, (size_t)d->W, m, at);
        /* Interior outputs (windows inside [0, W)) VL at a time, the edges
         * one by one. */
        int64_t qa = (d->pad_left + d->stride_w - 1) / d->stride_w;
        int64_t qb = d->W - d->kernel_w + d->pad_left >= 0
                         ? (d->W - d->kernel_w + d->pad_left) / d->stride_w + 1 : 0;
        if (qb > d->Q) qb = d->Q;
        if (qa >= qb) qa = qb = d->Q;
        const int64_t lanes = (int64_t)s->fn->lanes;
        for (int64_t q0 = qa; q0 < qb; q0 += lanes) {
          const int64_t nq = qb - q0 < lanes ? qb - q0 : lanes;
          int32_t wr[64], wc[64];
          s->fn->hpick(m, at, q0 * d->stride_w - d->pad_left, d->stride_w, d->kernel_w,
                       (size_t)nq, wr, wc);
          for (int64_t l = 0; l < nq; l++)
            dx[(int64_t)wr[l] * xsh + wc[l]] += dy[p * ysh + (q0 + l) * ysw];
        }
        for (int64_t q = 0; q < d->Q; q++) {
          if (q == qa) q = qb;
          if (q >= d->Q) break;
          int64_t w0, w1, cdiv;
          window_cols(d, q, &w0, &w1, &cdiv);
          float best = m[w0];
          int32_t bh = at[w0];
          int64_t bw = w0;
          for (int64_t w = w0 + 1; w < w1; w++) {
            /* Branch-free (the outcome is data-dependent and unpredictable). */
            const float v = m[w];
            const int vnan = v != v, bnan = best != best;
            const int better = (vnan & !bnan) | (v > best) |
                               (((v == best) | (vnan & bnan)) & (at[w] < bh));
            const int32_t keep = better - 1; /* 0 when better, all ones otherwise */
            bh = (at[w] & ~keep) | (bh & keep);
            bw = better ? w : bw;
            best = better ? v : best;
          }
          dx[bh * xsh + bw] += dy[p * ysh + q * ysw];
        }
        continue;
      }
      for (int64_t q = 0; q < d->Q; q++) {
        int64_t w0, w1, cdiv;
        window_cols(d, q, &w0, &w1, &cdiv);
        const float g = dy[p * ysh + q * ysw];
        if (d->kind != ADNN_POOL_MAX) {
          const float v = g / (float)(rdiv * cdiv);
          for (int64_t h = h0; h < h1; h++)
            for (int64_t w = w0; w < w1; w++) dx[h * xsh + w * xsw] += v;
          continue;
        }
        int64_t at = h0 * xsh + w0 * xsw;
        float best = x[at];
        if (best == best) {
          for (int64_t h = h0; h < h1; h++) {
            for (int64_t w = w0; w < w1; w++) {
              const float v = x[h * xsh + w * xsw];
              if (v != v) {
                at = h * xsh + w * xsw;
                goto found;
              }
              if (v > best) {
                best = v;
                at = h * xsh + w * xsw;
              }
            }
          }
        }
      found:
        dx[at] += g;
      }
    }
  }
}

static void run_nhwc(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const pbw_task *t = arg;
  const adnn_plugin_pool2d *d = t->d;
  const pbw_state *s = t->s;
  const int64_t xsh = d->x.strides[2], xsw = d->x.strides[3];
  const int64_t ysh = d->y.strides[2], ysw = d->y.strides[3];
  const int64_t lanes = (int64_t)s->fn->lanes;
  for (int64_t u = begin; u < end; u++) {
    const int64_t n = u / s->blocks, c0 = (u - n * s->blocks) * PBW_CHANNEL_BLOCK;
    const int64_t c1 = c0 + PBW_CHANNEL_BLOCK < d->C ? c0 + PBW_CHANNEL_BLOCK : d->C;
    const float *x = t->x + n * d->x.strides[0];
    float *dx = t->dx + n * d->x.strides[0];
    const float *dy = t->dy + n * d->y.strides[0];
    for (int64_t h = 0; h < d->H; h++)
      for (int64_t w = 0; w < d->W; w++)
        memset(dx + h * xsh + w * xsw + c0, 0, (size_t)(c1 - c0) * sizeof(float));
    for (int64_t p = 0; p < d->P; p++) {
      int64_t h0, h1, rdiv;
      window_rows(d, p, &h0, &h1, &rdiv);
      for (int64_t q = 0; q < d->Q; q++) {
        int64_t w0, w1, cdiv;
        window_cols(d, q, &w0, &w1, &cdiv);
        const float div = (float)(rdiv * cdiv);
        for (int64_t c = c0; c < c1; c += lanes) {
          const int64_t nc = c1 - c < lanes ? c1 - c : lanes;
          s->fn->pixel(d->kind, x + c, dx + c, xsh, xsw, h0, h1, w0, w1,
                       dy + p * ysh + q * ysw + c, (size_t)nc, div);
        }
      }
    }
  }
}

/* ---- F16 / BF16 ---------------------------------------------------------- */

enum { LOWP_CHUNK = 8192 }; /* elements per widening task */

typedef struct pbw_widen_job {
  const pbw_state *s;
  const uint16_t *src;
  float *dst;
  int64_t count;
} pbw_widen_job;

static void widen_task(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const pbw_widen_job *j = arg;
  for (int64_t c = begin; c < end; c++) {
    const int64_t lo = c * LOWP_CHUNK, n = j->count - lo < LOWP_CHUNK ? j->count - lo : LOWP_CHUNK;
    adnn_cpu_lowp_to_f32(j->s->isa, j->s->dtype, j->src + lo, j->dst + lo, (size_t)n);
  }
}

static void widen_all(const pbw_state *s, const uint16_t *src, float *dst, int64_t count) {
  pbw_widen_job j = {s, src, dst, count};
  adnn_cpu_parallel_for((count + LOWP_CHUNK - 1) / LOWP_CHUNK, 1, widen_task, &j);
}

typedef struct pbw_narrow_job {
  const pbw_state *s;
  const float *src;
  uint16_t *dst;
} pbw_narrow_job;

/* Rows of dx (x's layout): each element rounded once; gaps untouched. */
static void narrow_task(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const pbw_narrow_job *j = arg;
  const adnn_nd *L = &j->s->dx_rows;
  const int in = L->rank - 1;
  const int64_t len = L->dims[in], st = L->strides[0][in];
  for (int64_t row = begin; row < end; row++) {
    int64_t off[ADNN_ND_MAX_TENSORS];
    adnn_cpu_loop_row_offsets(L, row, off);
    if (st == 1) {
      adnn_cpu_lowp_from_f32(j->s->isa, j->s->dtype, j->src + off[0], j->dst + off[0],
                             (size_t)len);
      continue;
    }
    /* A strided row: its F32 elements gathered, then rounded and scattered. */
    float buf[ADNN_CPU_LOWP_BLOCK];
    for (int64_t q0 = 0; q0 < len; q0 += ADNN_CPU_LOWP_BLOCK) {
      const int64_t m = len - q0 < ADNN_CPU_LOWP_BLOCK ? len - q0 : ADNN_CPU_LOWP_BLOCK;
      for (int64_t q = 0; q < m; q++) buf[q] = j->src[off[0] + (q0 + q) * st];
      adnn_cpu_lowp_from_f32_strided(j->s->isa, j->s->dtype, buf, j->dst + off[0] + q0 * st, st,
                                     (size_t)m);
    }
  }
}

static void pbw_run(const void *problem, const void *state, const void *const *inputs,
                    void *const *outputs, void *workspace) {
  const adnn_plugin_pool2d_backward *pb = problem;
  const pbw_state *s = state;
  if (s->dtype == ADNN_DTYPE_F16 || s->dtype == ADNN_DTYPE_BF16) {
    char *ws = workspace;
    float *x = (float *)(ws + s->x_off), *dy = (float *)(ws + s->dy_off);
    float *dx = (float *)(ws + s->dx_off);
    widen_all(s, inputs[0], x, s->nx);
    widen_all(s, inputs[2], dy, s->ny);
    pbw_task t = {&pb->fwd, s, x, dy, dx, workspace};
    adnn_cpu_parallel_for(s->tasks, s->grain, s->path == PATH_NHWC ? run_nhwc : run_planes, &t);
    const int64_t rows = adnn_cpu_loop_rows(&s->dx_rows);
    const int64_t len = s->dx_rows.dims[s->dx_rows.rank - 1];
    const int64_t grain = len >= ADNN_CPU_GRAIN ? 1 : ADNN_CPU_GRAIN / len;
    pbw_narrow_job n = {s, dx, outputs[0]};
    adnn_cpu_parallel_for(rows, grain, narrow_task, &n);
    return;
  }
  pbw_task t = {&pb->fwd, s, inputs[0], inputs[2], outputs[0], workspace};
  adnn_cpu_parallel_for(s->tasks, s->grain, s->path == PATH_NHWC ? run_nhwc : run_planes, &t);
}

const adnn_cpu_impl adnn_cpu_pool2d_backward_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32) | ADNN_OP_DTYPE(ADNN_DTYPE_F16) |
              ADNN_OP_DTYPE(ADNN_DTYPE_BF16),
    .state_size = sizeof(pbw_state),
    .reshape = pbw_reshape,
    .run = pbw_run,
};

#endif
