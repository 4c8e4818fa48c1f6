/*
 * conv2d backward weights by im2col + GEMM, F32 and F64, packed NCHW or
 * NHWC, dw of any layout: "im2col_gemm" for any geometry and "gemm_1x1" for
 * 1x1, stride 1, unpadded convolutions, whose column matrix is x itself.
 *
 * The filter gradient is a sum over the batch of one GEMM per image, group
 * and tile of output pixels:
 *   NCHW: dW_g[Kg, Cg*R*S] += dY[n, g][Kg, tile] * Col[Cg*R*S, tile]^T
 *   NHWC: dW_g[Kg, R*S*Cg] += dY[n, tile, g]^T * Col[tile, R*S*Cg]
 * with the column tiles built as in the forward im2col_gemm.
 *
 * Small images: when P*Q is under MIN_INNER (the 14x14 and 7x7 stages of
 * ResNet-50), one GEMM per image would have an inner dimension of P*Q only
 * (49 on 7x7) and rewrite the whole partial dW for that few multiply-adds per
 * element. NCHW then takes the images in fixed batches of about
 * MIN_INNER / (P*Q) (the split depends on N and P*Q only): each batch's dY
 * rows and columns (or, for 1x1, its x rows) are gathered side by side into
 * [Kg, images*P*Q] and [Cg*R*S, images*P*Q] buffers of the thread, and one
 * GEMM with inner dimension images*P*Q makes the batch's contribution. NHWC
 * needs no gathering: consecutive images' pixels are consecutive rows, so its
 * pixel tiles of small images simply span several whole images.
 *
 * Deterministic reduction over the batch: the items (NCHW: image or image
 * batch and tile; NHWC: tile of all pixels) are cut into `chunks`
 * consecutive runs, a number fixed by the problem alone (at most MAX_CHUNKS,
 * and few enough that their partial gradients fit in PARTIAL_BYTES). Each (chunk, group) task accumulates its items in order
 * into its own partial gradient in the workspace; a second pass then adds
 * the chunks' partials in chunk order (in double) per filter element, scales
 * the old dw by beta (never reading it when beta is 0) and writes dw through
 * its strides. Neither pass depends on the thread count or on which thread
 * runs a task, so dw is bitwise identical run to run and across thread
 * counts (given OpenBLAS's GEMM is); db is the deterministic sum of
 * conv2d_backward.h.
 */
#ifndef CONV_BWD_T
#include "config.h"

#include <cblas.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/conv2d_backward.h"
#include "kernels/cpu/gemm.h"

#define TILE_BYTES ((int64_t)1 << 20)
#define MIN_TILE 256
#define MAX_CHUNKS 16
#define PARTIAL_BYTES ((int64_t)64 << 20)
#define MIN_INNER 256

typedef struct bwd_weights_state {
  int nhwc, is_1x1, f64;
  int isa; /* adnn_cpu_env.isa, for adnn_cpu_sgemm_ws */
  size_t esize;
  int64_t rows_per_tile; /* NCHW: output rows per tile */
  int64_t tile;          /* NHWC: pixels per tile */
  int64_t tiles;         /* NCHW: tiles per image batch; NHWC: tiles of all N*P*Q pixels */
  int64_t batches;       /* NCHW: image batches (1 image each unless P*Q < MIN_INNER) */
  int64_t batch_max;     /* NCHW: the most images of one batch */
  int64_t dy_elems;      /* NCHW batches of several images: one thread's gathered dY */
  int64_t chunks;        /* runs of items, each with its partial dw */
  int64_t partial_elems; /* K * Cg * R * S: one partial */
  int64_t col_elems;     /* one thread's column buffer */
  int dw_packed;         /* dw packed in the partials' order (KCRS / KRSC) */
  size_t pack_bytes;     /* F32: one thread's GEMM pack space, after the columns */
  int threads;           /* adnn_cpu_env.threads: slices of each */
} bwd_weights_state;

static int weights_gemm_supports(const void *problem, const adnn_cpu_env *env, char *why,
                                 size_t why_size) {
  (void)env;
  const adnn_plugin_conv2d *g = &((const adnn_plugin_conv2d_backward_weights *)problem)->fwd;
  return adnn_cpu_conv2d_bwd_gemm_supports(g, why, why_size);
}

static int weights_1x1_supports(const void *problem, const adnn_cpu_env *env, char *why,
                                size_t why_size) {
  (void)env;
  const adnn_plugin_conv2d *g = &((const adnn_plugin_conv2d_backward_weights *)problem)->fwd;
  return adnn_cpu_conv2d_bwd_1x1_supports(g, why, why_size);
}

static void weights_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                            size_t *workspace_bytes, int is_1x1) {
  const adnn_plugin_conv2d *g = &((const adnn_plugin_conv2d_backward_weights *)problem)->fwd;
  bwd_weights_state *s = state;
  s->nhwc = adnn_cpu_conv2d_layout(g) == ADNN_CPU_CONV_NHWC;
  s->is_1x1 = is_1x1;
  s->f64 = g->x.dtype == ADNN_DTYPE_F64;
  s->isa = env->isa;
  s->esize = s->f64 ? sizeof(double) : sizeof(float);
  const int64_t crs = g->Cg * g->R * g->S, PQ = g->P * g->Q;
  s->batches = g->N;
  s->batch_max = 1;
  s->dy_elems = 0;
  if (s->nhwc) {
    /* Small images: tiles of about MIN_INNER pixels in whole images (one GEMM
     * with all N*P*Q pixels as its inner dimension measured different bits
     * with 1 and 2 OpenBLAS threads, 1x1 on 16 x 7x7; these do not). */
    int64_t px = TILE_BYTES / (crs * (int64_t)s->esize);
    if (px < MIN_TILE) px = MIN_TILE;
    if (px > PQ) px = PQ;
    if (PQ < MIN_INNER) px = (MIN_INNER + PQ - 1) / PQ * PQ;
    if (px > g->N * PQ) px = g->N * PQ;
    s->tile = px;
    s->tiles = (g->N * PQ + px - 1) / px;
    s->batches = 1;
    s->col_elems = is_1x1 ? 0 : px * crs;
  } else if (PQ < MIN_INNER && g->N > 1) {
    /* Batches of whole images, as even as N allows. */
    int64_t per = (MIN_INNER + PQ - 1) / PQ;
    if (per > g->N) per = g->N;
    s->batches = (g->N + per - 1) / per;
    s->batch_max = (g->N + s->batches - 1) / s->batches;
    s->rows_per_tile = g->P;
    s->tiles = 1;
    s->col_elems = (is_1x1 ? g->Cg : crs) * s->batch_max * PQ + g->Kg * s->batch_max * PQ;
    s->dy_elems = g->Kg * s->batch_max * PQ;
  } else {
    int64_t row_bytes = crs * g->Q * (int64_t)s->esize;
    int64_t rows = TILE_BYTES / row_bytes, min_rows = (MIN_TILE + g->Q - 1) / g->Q;
    if (rows < min_rows) rows = min_rows;
    if (rows < 1) rows = 1;
    if (rows > g->P) rows = g->P;
    s->rows_per_tile = rows;
    s->tiles = (g->P + rows - 1) / rows;
    s->col_elems = is_1x1 ? 0 : crs * rows * g->Q;
  }
  s->partial_elems = g->K * crs;
  {
    /* dw packed as the partials are: [K][Cg][R][S] (NCHW) or [K][R][S][Cg]. */
    const int64_t *st = g->w.strides;
    const int64_t e_c = s->nhwc ? 1 : g->R * g->S, e_r = s->nhwc ? g->S * g->Cg : g->S,
                  e_s = s->nhwc ? g->Cg : 1;
    s->dw_packed = (g->K == 1 || st[0] == crs) && (g->Cg == 1 || st[1] == e_c) &&
                   (g->R == 1 || st[2] == e_r) && (g->S == 1 || st[3] == e_s);
  }
  /* Fixed by the problem: never by env->threads. */
  int64_t items = s->batches * s->tiles, chunks = items < MAX_CHUNKS ? items : MAX_CHUNKS;
  int64_t fit = PARTIAL_BYTES / (s->partial_elems * (int64_t)s->esize);
  if (chunks > fit) chunks = fit;
  if (chunks < 1) chunks = 1;
  s->chunks = chunks;
  /* F32: the engine's pack space for the largest GEMM (Kg x crs over the
   * most pixels one item has; adnn_cpu_sgemm_pack_bytes is monotone). */
  s->threads = env->threads;
  s->pack_bytes = 0;
  if (!s->f64) {
    const int64_t inner =
        s->nhwc ? s->tile : s->dy_elems ? s->batch_max * PQ : s->rows_per_tile * g->Q;
    s->pack_bytes = adnn_cpu_sgemm_pack_bytes(env->isa, g->Kg, crs, inner);
  }
  size_t bytes =
      (size_t)((s->chunks * s->partial_elems + s->col_elems * env->threads) * (int64_t)s->esize);
  *workspace_bytes = (bytes + 63) / 64 * 64 + s->pack_bytes * (size_t)env->threads;
}

/* Thread `thread`'s pack space (one slice): the slices follow the column
 * buffers of every thread, which start at cols. */
static adnn_cpu_gemm_pack bwd_pack_slice(const bwd_weights_state *s, const void *cols,
                                         int thread) {
  uintptr_t end = (uintptr_t)cols + (uintptr_t)(s->col_elems * s->threads) * s->esize;
  end = (end + 63) / 64 * 64;
  return adnn_cpu_gemm_pack_slice((void *)end, s->pack_bytes, thread);
}

static void weights_gemm_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                                 size_t *workspace_bytes) {
  weights_reshape(problem, env, state, workspace_bytes, 0);
}

static void weights_1x1_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                                size_t *workspace_bytes) {
  weights_reshape(problem, env, state, workspace_bytes, 1);
}

/* F32 runs through adnn_cpu_sgemm_ws (gemm.h: the engine inside the pool's
 * tasks), with the CBLAS argument list of the F64 calls; the state `s`, the
 * task's arguments `a` and its `thread` are in scope at every call site
 * (the pack space is the thread's slice). F64 stays on OpenBLAS. */
#define CONV_BWD_SGEMM_(order, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, c, ldc)             \
  do {                                                                                           \
    const adnn_cpu_gemm_pack pack_ = bwd_pack_slice(s, a->cols, thread);                         \
    adnn_cpu_sgemm_ws(s->isa, (ta) == CblasTrans, (tb) == CblasTrans, m, n, k, alpha, A, lda, B, \
                      ldb, beta, c, ldc, NULL, &pack_);                                          \
  } while (0)
#define CONV_BWD_T float
#define CONV_BWD_GEMM CONV_BWD_SGEMM_
#define CONV_BWD_FN(name) CONV_BWD_CAT_(name, f32)
#include "kernels/cpu/conv2d_backward_weights-gemm.c"
#undef CONV_BWD_T
#undef CONV_BWD_GEMM
#undef CONV_BWD_FN
#define CONV_BWD_T double
#define CONV_BWD_GEMM cblas_dgemm
#define CONV_BWD_FN(name) CONV_BWD_CAT_(name, f64)
#include "kernels/cpu/conv2d_backward_weights-gemm.c"
#undef CONV_BWD_T
#undef CONV_BWD_GEMM
#undef CONV_BWD_FN

/* Inputs {x, dy}, outputs {dw} or {dw, db}. */
static void weights_run(const void *problem, const void *state, const void *const *inputs,
                        void *const *outputs, void *workspace) {
  const adnn_plugin_conv2d_backward_weights *b = problem;
  const bwd_weights_state *s = state;
  if (s->f64)
    wrun_f64(b, s, inputs[0], inputs[1], outputs[0], workspace);
  else
    wrun_f32(b, s, inputs[0], inputs[1], outputs[0], workspace);
  if (b->fwd.has_bias) adnn_cpu_conv2d_bwd_bias(&b->fwd, inputs[1], outputs[1], b->beta, s->nhwc);
}

const adnn_cpu_impl adnn_cpu_conv2d_backward_weights_im2col_gemm = {
    .name = "im2col_gemm",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPES_FLOAT,
    .supports = weights_gemm_supports,
    .state_size = sizeof(bwd_weights_state),
    .reshape = weights_gemm_reshape,
    .run = weights_run,
};

const adnn_cpu_impl adnn_cpu_conv2d_backward_weights_gemm_1x1 = {
    .name = "gemm_1x1",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPES_FLOAT,
    .supports = weights_1x1_supports,
    .state_size = sizeof(bwd_weights_state),
    .reshape = weights_1x1_reshape,
    .run = weights_run,
};

#else /* CONV_BWD_T: the kernels of one element type */

typedef CONV_BWD_T CONV_BWD_FN(wreal);
#define T CONV_BWD_FN(wreal)

typedef struct CONV_BWD_FN(wargs) {
  const adnn_plugin_conv2d *g;
  const bwd_weights_state *s;
  const T *x, *dy;
  T *dw, *partials, *cols;
  double beta;
} CONV_BWD_FN(wargs);

/* NCHW columns of output rows [p0, p0 + rows) of image n, group gr:
 * col[(c, r, s)][pixel], rows of the matrix `ld` apart, zero where the tap
 * reads padding. */
static void CONV_BWD_FN(nchw_im2col)(const adnn_plugin_conv2d *g, const T *xg, T *col,
                                     int64_t p0, int64_t rows, int64_t ld) {
  const int64_t Q = g->Q, nt = ld, sw = g->stride_w;
  for (int64_t c = 0; c < g->Cg; c++) {
    const T *xc = xg + c * g->H * g->W;
    for (int64_t r = 0; r < g->R; r++)
      for (int64_t s = 0; s < g->S; s++) {
        T *row = col + ((c * g->R + r) * g->S + s) * nt;
        int64_t qlo, qhi;
        adnn_cpu_conv2d_valid_q(g, s, &qlo, &qhi);
        const int64_t w0 = qhi > qlo ? qlo * sw - g->pad_left + s * g->dilation_w : 0;
        for (int64_t p = p0; p < p0 + rows; p++) {
          T *dst = row + (p - p0) * Q;
          const int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
          if (h < 0 || h >= g->H || qhi == qlo) {
            memset(dst, 0, (size_t)Q * sizeof(T));
            continue;
          }
          const T *src = xc + h * g->W + w0;
          if (qlo) memset(dst, 0, (size_t)qlo * sizeof(T));
          if (sw == 1)
            memcpy(dst + qlo, src, (size_t)(qhi - qlo) * sizeof(T));
          else
            for (int64_t q = qlo, i = 0; q < qhi; q++, i += sw) dst[q] = src[i];
          if (qhi < Q) memset(dst + qhi, 0, (size_t)(Q - qhi) * sizeof(T));
        }
      }
  }
}

/* NHWC columns of the m pixels from i0 of image n for the group's channels
 * from c0: col[pixel][(r, s, c)]. */
static void CONV_BWD_FN(nhwc_im2col)(const adnn_plugin_conv2d *g, const T *xn, int64_t c0, T *col,
                                     int64_t i0, int64_t m) {
  const int64_t Cg = g->Cg, len = g->R * g->S * Cg;
  const size_t bytes = (size_t)Cg * sizeof(T);
  for (int64_t i = 0; i < m; i++) {
    const int64_t p = (i0 + i) / g->Q, q = (i0 + i) % g->Q;
    T *dst = col + i * len;
    for (int64_t r = 0; r < g->R; r++) {
      const int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
      if (h < 0 || h >= g->H) {
        memset(dst, 0, bytes * (size_t)g->S);
        dst += g->S * Cg;
        continue;
      }
      for (int64_t s = 0; s < g->S; s++, dst += Cg) {
        const int64_t v = q * g->stride_w - g->pad_left + s * g->dilation_w;
        if (v < 0 || v >= g->W)
          memset(dst, 0, bytes);
        else
          memcpy(dst, xn + (h * g->W + v) * g->C + c0, bytes);
      }
    }
  }
}

/* Task t = (chunk, group): the chunk's items, in order, into its partial.
 * An item is (image batch, tile) in NCHW, a tile of all N*P*Q pixels in
 * NHWC. */
static void CONV_BWD_FN(chunk_task)(void *arg, int64_t t0, int64_t t1, int thread) {
  const CONV_BWD_FN(wargs) *a = arg;
  const adnn_plugin_conv2d *g = a->g;
  const bwd_weights_state *s = a->s;
  const int64_t HW = g->H * g->W, PQ = g->P * g->Q, crs = g->Cg * g->R * g->S;
  const int64_t items = s->batches * s->tiles;
  T *col = a->cols + thread * s->col_elems;
  for (int64_t t = t0; t < t1; t++) {
    const int64_t gr = t % g->groups, j = t / g->groups;
    const int64_t first = j * items / s->chunks, last = (j + 1) * items / s->chunks;
    T *part = a->partials + j * s->partial_elems + gr * g->Kg * crs;
    for (int64_t it = first; it < last; it++) {
      const T acc = it == first ? (T)0 : (T)1;
      if (s->nhwc) {
        /* Pixels [i0, i0 + m) of all images: consecutive rows of x and dy. */
        const int64_t i0 = it * s->tile, m = g->N * PQ - i0 < s->tile ? g->N * PQ - i0 : s->tile;
        const T *dyt = a->dy + i0 * g->K + gr * g->Kg;
        const T *b;
        int ldb;
        if (s->is_1x1) {
          b = a->x + i0 * g->C + gr * g->Cg;
          ldb = (int)g->C;
        } else {
          /* nhwc_im2col walks pixel indices of one image; a tile across
           * images is built image by image. */
          for (int64_t i = i0; i < i0 + m;) {
            const int64_t n = i / PQ, in = i % PQ, cnt = PQ - in < i0 + m - i ? PQ - in : i0 + m - i;
            CONV_BWD_FN(nhwc_im2col)(g, a->x + n * HW * g->C, gr * g->Cg, col + (i - i0) * crs,
                                     in, cnt);
            i += cnt;
          }
          b = col;
          ldb = (int)crs;
        }
        CONV_BWD_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (int)g->Kg, (int)crs, (int)m,
                      (T)1, dyt, (int)g->K, b, ldb, acc, part, (int)crs);
      } else if (s->dy_elems) {
        /* A batch of whole images side by side: gathered dY [Kg, nb*PQ] and
         * columns [Cg*R*S (or Cg), nb*PQ]. */
        const int64_t bt = it / s->tiles;
        const int64_t n0 = bt * g->N / s->batches, n1 = (bt + 1) * g->N / s->batches;
        const int64_t ld = (n1 - n0) * PQ;
        T *dyb = col, *cb = col + s->dy_elems;
        for (int64_t n = n0; n < n1; n++) {
          const T *dyn = a->dy + (n * g->K + gr * g->Kg) * PQ;
          const T *xg = a->x + (n * g->C + gr * g->Cg) * HW;
          for (int64_t k = 0; k < g->Kg; k++)
            memcpy(dyb + k * ld + (n - n0) * PQ, dyn + k * PQ, (size_t)PQ * sizeof(T));
          if (s->is_1x1)
            for (int64_t c = 0; c < g->Cg; c++)
              memcpy(cb + c * ld + (n - n0) * PQ, xg + c * HW, (size_t)PQ * sizeof(T));
          else
            CONV_BWD_FN(nchw_im2col)(g, xg, cb + (n - n0) * PQ, 0, g->P, ld);
        }
        CONV_BWD_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (int)g->Kg, (int)crs, (int)ld,
                      (T)1, dyb, (int)ld, cb, (int)ld, acc, part, (int)crs);
      } else {
        const int64_t n = it / s->tiles, tile = it % s->tiles;
        const int64_t p0 = tile * s->rows_per_tile;
        const int64_t rows = g->P - p0 < s->rows_per_tile ? g->P - p0 : s->rows_per_tile;
        const int64_t nt = rows * g->Q;
        const T *dyt = a->dy + (n * g->K + gr * g->Kg) * PQ + p0 * g->Q;
        const T *xg = a->x + (n * g->C + gr * g->Cg) * HW;
        const T *b;
        int ldb;
        if (s->is_1x1) {
          b = xg + p0 * g->Q;
          ldb = (int)HW;
        } else {
          CONV_BWD_FN(nchw_im2col)(g, xg, col, p0, rows, nt);
          b = col;
          ldb = (int)nt;
        }
        CONV_BWD_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (int)g->Kg, (int)crs, (int)nt,
                      (T)1, dyt, (int)PQ, b, ldb, acc, part, (int)crs);
      }
    }
  }
}

/* dw[k] for k in [k0, k1): the chunks' partials added in chunk order. */
static void CONV_BWD_FN(reduce_task)(void *arg, int64_t k0, int64_t k1, int thread) {
  (void)thread;
  const CONV_BWD_FN(wargs) *a = arg;
  const adnn_plugin_conv2d *g = a->g;
  const bwd_weights_state *s = a->s;
  const int64_t *st = g->w.strides, crs = g->Cg * g->R * g->S;
  if (s->dw_packed) {
    /* dw in the partials' own order (KCRS for NCHW, KRSC for NHWC): the
     * same sums in the same order, as vector loops over blocks of 256
     * elements instead of one strided element at a time. */
    for (int64_t i0 = k0 * crs; i0 < k1 * crs; i0 += 256) {
      const int64_t len = k1 * crs - i0 < 256 ? k1 * crs - i0 : 256;
      double acc[256];
      for (int64_t i = 0; i < len; i++) acc[i] = 0.0;
      for (int64_t j = 0; j < s->chunks; j++) {
        const T *part = a->partials + j * s->partial_elems + i0;
        for (int64_t i = 0; i < len; i++) acc[i] += (double)part[i];
      }
      T *dst = a->dw + i0;
      if (a->beta != 0.0)
        for (int64_t i = 0; i < len; i++) dst[i] = (T)(a->beta * (double)dst[i] + acc[i]);
      else
        for (int64_t i = 0; i < len; i++) dst[i] = (T)acc[i];
    }
    return;
  }
  for (int64_t k = k0; k < k1; k++)
    for (int64_t c = 0; c < g->Cg; c++)
      for (int64_t r = 0; r < g->R; r++)
        for (int64_t sx = 0; sx < g->S; sx++) {
          const int64_t idx = s->nhwc ? (r * g->S + sx) * g->Cg + c : (c * g->R + r) * g->S + sx;
          double acc = 0.0;
          for (int64_t j = 0; j < s->chunks; j++)
            acc += (double)a->partials[j * s->partial_elems + k * crs + idx];
          T *dst = a->dw + k * st[0] + c * st[1] + r * st[2] + sx * st[3];
          *dst = (T)(a->beta != 0.0 ? a->beta * (double)*dst + acc : acc);
        }
}

static void CONV_BWD_FN(wrun)(const adnn_plugin_conv2d_backward_weights *b,
                              const bwd_weights_state *s, const T *x, const T *dy, T *dw,
                              void *workspace) {
  const adnn_plugin_conv2d *g = &b->fwd;
  T *partials = workspace;
  CONV_BWD_FN(wargs) a = {g, s, x, dy, dw, partials, partials + s->chunks * s->partial_elems,
                          b->beta};
  adnn_cpu_parallel_for(s->chunks * g->groups, 1, CONV_BWD_FN(chunk_task), &a);
  const int64_t per_k = g->Cg * g->R * g->S * s->chunks;
  adnn_cpu_parallel_for(g->K, per_k >= 4096 ? 1 : 4096 / per_k, CONV_BWD_FN(reduce_task), &a);
}

#undef T
#endif /* CONV_BWD_T */
