/*
 * conv2d backward data by GEMM (+ col2im), F32 and F64, packed NCHW or NHWC
 * with filters of any layout: the "im2col_gemm" algorithm for any geometry,
 * and "gemm_1x1" for 1x1, stride 1, unpadded convolutions, where dx is one
 * GEMM per image and group with no column buffer at all.
 *
 * The gradient with respect to x is the transpose of the forward product:
 *   NCHW, per image n and group g: Col[Cg*R*S, P*Q] = W_g^T * dY[n, g]
 *     (W_g the group's [Kg, Cg*R*S] filter rows), then col2im adds every
 *     column entry into the dx element its tap read in the forward pass.
 *   NHWC, per image and group: Col[P*Q, R*S*Cg] = dY[n, :, g] * Wt_g
 *     (Wt the filters reordered to KRSC), then col2im adds each pixel's
 *     (r, s) blocks of Cg channels into dx.
 * The column matrix is built in tiles of output rows (NCHW) or pixels (NHWC)
 * that fit in the L2 cache, and col2im runs on each tile right after its
 * GEMM, while the tile is in cache.
 *
 * No atomics and no scattered writes between threads: col2im's additions
 * overlap wherever taps overlap (R > stride), so each task owns a disjoint
 * part of dx and does all the additions into it itself, in a fixed order:
 * NCHW tasks are (image, group, block of input channels), since
 * the columns of a channel block come from its own rows of W_g^T (a block
 * has at least MIN_ROWS GEMM rows, MIN_ROWS_1X1 for gemm_1x1); NHWC tasks
 * are (image, group), each running its pixel tiles in order. dx is first
 * scaled by beta (or zeroed when beta is 0, so that it is never read) by the
 * task that owns it. The result is therefore bitwise identical run to run
 * and for any thread count (given OpenBLAS's GEMM is).
 *
 * gemm_1x1 needs no col2im: NCHW dx[n, g] = W_g^T * dY[n, g] with the GEMM's
 * beta doing the accumulation, tasks (image, group, channel block); NHWC
 * dx[pixels, g] = dY[pixels, g] * W_g over tiles of all N*P*Q pixels (the
 * images' pixels are consecutive rows).
 *
 * Small images (NCHW, P*Q under MIN_TILE: the 14x14 and 7x7 stages of
 * ResNet-50): a GEMM per image would have only P*Q columns (49 on 7x7) and
 * repack the whole W_g^T block for each image. The images are then taken in
 * fixed batches of about MIN_TILE / (P*Q) (fixed by N and P*Q): a task
 * (batch, group, channel block) gathers the batch's dY side by side into
 * [Kg, images*P*Q] in its own buffer, runs one GEMM into the column buffer
 * and col2im's it image by image (for gemm_1x1 too, where col2im is an add).
 *
 * Stride 1 (im2col_gemm, F32, beta 0, images not small): dx is then itself a forward
 * convolution, of dY with the filters flipped in R and S and transposed
 * (W'[g*Cg + c, k, r, s] = W[g*Kg + k, c, R-1-r, S-1-s]) and padding
 * dilation*(R-1) - pad on each side (needs pad <= dilation*(R-1)). The
 * kernel then reorders the filters into its workspace and runs the forward
 * winograd_f2x3 kernel (when its own heuristic would take it) or im2col_gemm
 * on that problem: their GEMMs have an inner dimension of Kg*R*S instead of
 * Kg, and nothing is added back by col2im (measured on 8 images, 3x3, 64
 * channels at 56x56: 88-113 against 21-22 GFLOP/s). Both forward kernels are
 * deterministic; F64, beta != 0 and small images keep the column path.
 */
#ifndef CONV_BWD_T
#include "config.h"

#include <cblas.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/conv2d_backward.h"
#include "kernels/cpu/gemm.h"

/* Target bytes of one column tile, the fewest GEMM columns (NCHW) or rows
 * (NHWC) a tile gets, and the fewest GEMM rows (input channels times R*S)
 * an NCHW task's GEMM gets for im2col_gemm and for gemm_1x1: a channel block
 * is what one task owns of dx, and a GEMM of few rows (16 channels of a 1x1
 * filter were 16 rows) repacks the whole dY operand for little work and runs
 * memory-bound, which kept two threads from gaining anything over one. */
#define TILE_BYTES ((int64_t)1 << 20)
#define MIN_TILE 256
#define MIN_ROWS 256
#define MIN_ROWS_1X1 512
/* Room for the forward kernel's state in ours (checked at reshape). */
#define FWD_STATE_MAX 1024

typedef struct bwd_data_state {
  int nhwc, is_1x1, f64;
  int isa; /* adnn_cpu_env.isa, for adnn_cpu_sgemm_ws */
  size_t esize;
  /* Filters packed KCRS (NCHW, when not already) or reordered KRSC (NHWC,
   * always) in front of the column buffers: `packed` elements, or 0. */
  int64_t packed;
  int64_t cb, cblocks;              /* NCHW: channels per task, blocks per group */
  int64_t rows_per_tile, tiles;     /* NCHW: output rows per tile; NHWC: tiles per image
                                       (gemm_1x1: tiles of all N*P*Q pixels) */
  int64_t batches, batch_max;       /* NCHW: image batches (see below), most images of one */
  int64_t dy_elems;                 /* NCHW batches of several images: gathered dY */
  int64_t tile;                     /* NHWC: pixels per tile */
  int64_t col_elems;                /* one thread's column buffer */
  size_t pack_bytes;                /* F32: one thread's GEMM pack space, after the columns */
  int threads;                      /* adnn_cpu_env.threads: slices of each */
  /* Stride 1, F32, beta 0 (see the top): the transposed forward problem,
   * the forward kernel that runs it, its state and its workspace bytes
   * (in front of the reordered filters, K*Cg*R*S floats). */
  const adnn_cpu_impl *fwd_impl;
  adnn_plugin_conv2d fwd;
  size_t fwd_ws;
  _Alignas(16) unsigned char fwd_state[FWD_STATE_MAX];
} bwd_data_state;

/* Whether dx of this problem can run as a forward convolution of dY (see the
 * top); fills *f with that problem. */
static int transposed_problem(const adnn_plugin_conv2d_backward_data *b,
                              adnn_plugin_conv2d *f) {
  const adnn_plugin_conv2d *g = &b->fwd;
  if (g->x.dtype != ADNN_DTYPE_F32 || b->beta != 0.0 || g->stride_h != 1 || g->stride_w != 1)
    return 0;
  const int64_t eh = g->dilation_h * (g->R - 1), ew = g->dilation_w * (g->S - 1);
  if (g->pad_top > eh || g->pad_bottom > eh || g->pad_left > ew || g->pad_right > ew) return 0;
  if (adnn_cpu_conv2d_bwd_is_1x1(g)) return 0;
  memset(f, 0, sizeof *f);
  f->struct_size = sizeof *f;
  f->x = g->y; /* dY */
  f->y = g->x; /* dx */
  f->w = g->w;
  f->w.dims[0] = g->C;
  f->w.dims[1] = g->Kg;
  f->w.dims[2] = g->R;
  f->w.dims[3] = g->S;
  f->w.strides[3] = 1;
  f->w.strides[2] = g->S;
  f->w.strides[1] = g->R * g->S;
  f->w.strides[0] = g->Kg * g->R * g->S;
  f->N = g->N;
  f->C = g->K;
  f->H = g->P;
  f->W = g->Q;
  f->K = g->C;
  f->R = g->R;
  f->S = g->S;
  f->P = g->H;
  f->Q = g->W;
  f->groups = g->groups;
  f->Cg = g->Kg;
  f->Kg = g->Cg;
  f->stride_h = f->stride_w = 1;
  f->pad_top = eh - g->pad_top;
  f->pad_bottom = eh - g->pad_bottom;
  f->pad_left = ew - g->pad_left;
  f->pad_right = ew - g->pad_right;
  f->dilation_h = g->dilation_h;
  f->dilation_w = g->dilation_w;
  f->has_bias = 0;
  f->activation.kind = ADNN_ACTIVATION_IDENTITY;
  f->algorithm = ADNN_CONV2D_ALGO_AUTO;
  return 1;
}

static int data_gemm_supports(const void *problem, const adnn_cpu_env *env, char *why,
                              size_t why_size) {
  (void)env;
  const adnn_plugin_conv2d *g = &((const adnn_plugin_conv2d_backward_data *)problem)->fwd;
  return adnn_cpu_conv2d_bwd_gemm_supports(g, why, why_size);
}

static int data_1x1_supports(const void *problem, const adnn_cpu_env *env, char *why,
                             size_t why_size) {
  (void)env;
  const adnn_plugin_conv2d *g = &((const adnn_plugin_conv2d_backward_data *)problem)->fwd;
  return adnn_cpu_conv2d_bwd_1x1_supports(g, why, why_size);
}

static void data_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                         size_t *workspace_bytes, int is_1x1) {
  const adnn_plugin_conv2d *g = &((const adnn_plugin_conv2d_backward_data *)problem)->fwd;
  bwd_data_state *s = state;
  s->nhwc = adnn_cpu_conv2d_layout(g) == ADNN_CPU_CONV_NHWC;
  s->is_1x1 = is_1x1;
  s->f64 = g->x.dtype == ADNN_DTYPE_F64;
  s->isa = env->isa;
  s->esize = s->f64 ? sizeof(double) : sizeof(float);
  const int64_t rs = g->R * g->S, crs = g->Cg * rs;
  /* Channel blocks of at least MIN_ROWS GEMM rows (a multiple of 8
   * channels), then evened out; fixed by the problem, never by the threads. */
  int64_t gemm_rows = is_1x1 ? MIN_ROWS_1X1 : MIN_ROWS;
  int64_t cb = (gemm_rows + rs - 1) / rs;
  cb = (cb + 7) / 8 * 8;
  if (cb > g->Cg) cb = g->Cg;
  s->cblocks = (g->Cg + cb - 1) / cb;
  s->cb = (g->Cg + s->cblocks - 1) / s->cblocks;
  const int64_t PQ = g->P * g->Q;
  s->batches = g->N;
  s->batch_max = 1;
  s->dy_elems = 0;
  if (s->nhwc) {
    /* 1x1: W_g is [Kg, Cg] in KCRS order, the KRSC order too. */
    s->packed = is_1x1 && adnn_cpu_conv2d_w_is_kcrs(g) ? 0 : g->K * crs;
    /* gemm_1x1's pixels run across images (consecutive rows of dy, dx). */
    const int64_t pixels = is_1x1 ? g->N * PQ : PQ;
    int64_t px = TILE_BYTES / (crs * (int64_t)s->esize);
    if (px < MIN_TILE) px = MIN_TILE;
    if (px > pixels) px = pixels;
    s->tile = px;
    s->tiles = (pixels + px - 1) / px;
    s->col_elems = is_1x1 ? 0 : px * crs;
  } else if (PQ < MIN_TILE && g->N > 1) {
    /* Small images: batches of whole images (as even as N allows) whose dY
     * is gathered side by side, so that one GEMM spans them all. */
    s->packed = adnn_cpu_conv2d_w_is_kcrs(g) ? 0 : g->K * crs;
    int64_t per = (MIN_TILE + PQ - 1) / PQ;
    if (per > g->N) per = g->N;
    s->batches = (g->N + per - 1) / per;
    s->batch_max = (g->N + s->batches - 1) / s->batches;
    s->rows_per_tile = g->P;
    s->tiles = 1;
    s->dy_elems = g->Kg * s->batch_max * PQ;
    s->col_elems = s->cb * rs * s->batch_max * PQ + s->dy_elems;
  } else {
    s->packed = adnn_cpu_conv2d_w_is_kcrs(g) ? 0 : g->K * crs;
    int64_t row_bytes = s->cb * rs * g->Q * (int64_t)s->esize;
    int64_t rows = TILE_BYTES / row_bytes, min_rows = (MIN_TILE + g->Q - 1) / g->Q;
    if (rows < min_rows) rows = min_rows;
    if (rows < 1) rows = 1;
    if (rows > g->P) rows = g->P;
    s->rows_per_tile = rows;
    s->tiles = (g->P + rows - 1) / rows;
    s->col_elems = is_1x1 ? 0 : s->cb * rs * rows * g->Q;
  }
  /* F32: the engine's pack space for the largest GEMM of the path taken
   * (adnn_cpu_sgemm_pack_bytes is monotone, so edge tiles fit too). */
  s->threads = env->threads;
  s->pack_bytes = 0;
  if (!s->f64) {
    int64_t m, n;
    if (s->nhwc) {
      m = s->tile;
      n = is_1x1 ? g->Cg : crs;
    } else if (s->dy_elems) {
      m = s->cb * rs;
      n = s->batch_max * PQ;
    } else if (is_1x1) {
      m = s->cb;
      n = g->H * g->W;
    } else {
      m = s->cb * rs;
      n = s->rows_per_tile * g->Q;
    }
    s->pack_bytes = adnn_cpu_sgemm_pack_bytes(env->isa, m, n, g->Kg);
  }
  size_t bytes = (size_t)((s->packed + s->col_elems * env->threads) * (int64_t)s->esize);
  *workspace_bytes = (bytes + 63) / 64 * 64 + s->pack_bytes * (size_t)env->threads;
}

/* Thread `thread`'s pack space (one slice): the slices follow the column
 * buffers of every thread, which start at cols. */
static adnn_cpu_gemm_pack bwd_pack_slice(const bwd_data_state *s, const void *cols, int thread) {
  uintptr_t end = (uintptr_t)cols + (uintptr_t)(s->col_elems * s->threads) * s->esize;
  end = (end + 63) / 64 * 64;
  return adnn_cpu_gemm_pack_slice((void *)end, s->pack_bytes, thread);
}

static void data_gemm_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                              size_t *workspace_bytes) {
  data_reshape(problem, env, state, workspace_bytes, 0);
  bwd_data_state *s = state;
  /* Small images keep the batched column path: the forward kernels make one
   * GEMM per image (measured 35 vs 42-83 GFLOP/s on 8 x 512 x 7x7, 3x3). */
  if (s->dy_elems || !transposed_problem(problem, &s->fwd)) return;
  const adnn_cpu_impl *wino = &adnn_cpu_conv2d_winograd_f2x3, *gemm = &adnn_cpu_conv2d_im2col_gemm;
  const adnn_cpu_impl *impl = NULL;
  if (wino->supports(&s->fwd, env, NULL, 0) && (!wino->preferred || wino->preferred(&s->fwd, env)))
    impl = wino;
  else if (gemm->supports(&s->fwd, env, NULL, 0))
    impl = gemm;
  if (!impl || impl->state_size > FWD_STATE_MAX) return;
  size_t ws = 0;
  if (impl->reshape) impl->reshape(&s->fwd, env, s->fwd_state, &ws);
  s->fwd_impl = impl;
  s->fwd_ws = (ws + 63) / 64 * 64;
  const adnn_plugin_conv2d *g = &((const adnn_plugin_conv2d_backward_data *)problem)->fwd;
  *workspace_bytes = s->fwd_ws + (size_t)(g->K * g->Cg * g->R * g->S) * sizeof(float);
}

static void data_1x1_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                             size_t *workspace_bytes) {
  data_reshape(problem, env, state, workspace_bytes, 1);
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
#include "kernels/cpu/conv2d_backward_data-gemm.c"
#undef CONV_BWD_T
#undef CONV_BWD_GEMM
#undef CONV_BWD_FN
#define CONV_BWD_T double
#define CONV_BWD_GEMM cblas_dgemm
#define CONV_BWD_FN(name) CONV_BWD_CAT_(name, f64)
#include "kernels/cpu/conv2d_backward_data-gemm.c"
#undef CONV_BWD_T
#undef CONV_BWD_GEMM
#undef CONV_BWD_FN

typedef struct flip_job {
  const adnn_plugin_conv2d *g;
  const float *w;
  float *dst;
} flip_job;

/* dst[g*Cg + c, k, r, s] = w[g*Kg + k, c, R-1-r, S-1-s] (w through its
 * strides) for the transposed filters' rows [c0, c1) of C. */
static void flip_task(void *arg, int64_t c0, int64_t c1, int thread) {
  (void)thread;
  const flip_job *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  const int64_t *st = g->w.strides;
  for (int64_t ci = c0; ci < c1; ci++) {
    const int64_t gr = ci / g->Cg, c = ci % g->Cg;
    float *d = j->dst + ci * g->Kg * g->R * g->S;
    for (int64_t k = 0; k < g->Kg; k++)
      for (int64_t r = 0; r < g->R; r++)
        for (int64_t sx = 0; sx < g->S; sx++)
          *d++ = j->w[(gr * g->Kg + k) * st[0] + c * st[1] + (g->R - 1 - r) * st[2] +
                      (g->S - 1 - sx) * st[3]];
  }
}

/* dx as the forward convolution of dY with the transposed filters. */
static void run_transposed(const adnn_plugin_conv2d_backward_data *b, const bwd_data_state *s,
                           const void *dy, const void *w, void *dx, void *workspace) {
  const adnn_plugin_conv2d *g = &b->fwd;
  float *wt = (float *)((unsigned char *)workspace + s->fwd_ws);
  flip_job j = {g, w, wt};
  const int64_t per_c = g->Kg * g->R * g->S;
  adnn_cpu_parallel_for(g->C, per_c >= 4096 ? 1 : 4096 / per_c, flip_task, &j);
  const void *in[2] = {dy, wt};
  void *out[1] = {dx};
  s->fwd_impl->run(&s->fwd, s->fwd_state, in, out, s->fwd_ws ? workspace : NULL);
}

/* Inputs {dy, w}, outputs {dx}. */
static void data_run(const void *problem, const void *state, const void *const *inputs,
                     void *const *outputs, void *workspace) {
  const adnn_plugin_conv2d_backward_data *b = problem;
  const bwd_data_state *s = state;
  if (s->fwd_impl) {
    run_transposed(b, s, inputs[0], inputs[1], outputs[0], workspace);
    return;
  }
  if (s->f64)
    run_f64(b, s, inputs[0], inputs[1], outputs[0], workspace);
  else
    run_f32(b, s, inputs[0], inputs[1], outputs[0], workspace);
}

const adnn_cpu_impl adnn_cpu_conv2d_backward_data_im2col_gemm = {
    .name = "im2col_gemm",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPES_FLOAT,
    .supports = data_gemm_supports,
    .state_size = sizeof(bwd_data_state),
    .reshape = data_gemm_reshape,
    .run = data_run,
};

const adnn_cpu_impl adnn_cpu_conv2d_backward_data_gemm_1x1 = {
    .name = "gemm_1x1",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPES_FLOAT,
    .supports = data_1x1_supports,
    .state_size = sizeof(bwd_data_state),
    .reshape = data_1x1_reshape,
    .run = data_run,
};

#else /* CONV_BWD_T: the kernels of one element type */

typedef CONV_BWD_T CONV_BWD_FN(real);
#define T CONV_BWD_FN(real)

typedef struct CONV_BWD_FN(pack_job) {
  const adnn_plugin_conv2d *g;
  const T *w;
  T *dst;
  int krsc;
} CONV_BWD_FN(pack_job);

/* dst[k] = w[k] as [Cg][R][S] (KCRS) or [R][S][Cg] (KRSC), for k in [k0, k1),
 * reading w through its strides. */
static void CONV_BWD_FN(pack_task)(void *arg, int64_t k0, int64_t k1, int thread) {
  (void)thread;
  const CONV_BWD_FN(pack_job) *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  const int64_t *st = g->w.strides;
  T *dst = j->dst + k0 * g->Cg * g->R * g->S;
  for (int64_t k = k0; k < k1; k++) {
    if (j->krsc) {
      for (int64_t r = 0; r < g->R; r++)
        for (int64_t s = 0; s < g->S; s++)
          for (int64_t c = 0; c < g->Cg; c++)
            *dst++ = j->w[k * st[0] + c * st[1] + r * st[2] + s * st[3]];
    } else {
      for (int64_t c = 0; c < g->Cg; c++)
        for (int64_t r = 0; r < g->R; r++)
          for (int64_t s = 0; s < g->S; s++)
            *dst++ = j->w[k * st[0] + c * st[1] + r * st[2] + s * st[3]];
    }
  }
}

typedef struct CONV_BWD_FN(data_args) {
  const adnn_plugin_conv2d *g;
  const bwd_data_state *s;
  const T *dy, *w;
  T *dx, *cols;
  T beta;
} CONV_BWD_FN(data_args);

/* dx[0, n) = beta * dx, without reading dx when beta is 0. */
static void CONV_BWD_FN(scale)(T *dx, int64_t n, T beta) {
  if (beta == 0)
    memset(dx, 0, (size_t)n * sizeof(T));
  else if (beta != 1)
    for (int64_t i = 0; i < n; i++) dx[i] *= beta;
}

/* col2im of one image's column tile: col[(c, r, s)][pixel of output rows
 * [p0, p0 + rows)], matrix rows `ld` apart, added into dxc (the block's clen
 * channel planes of the image), each entry where its tap read x. */
static void CONV_BWD_FN(col2im)(const adnn_plugin_conv2d *g, T *dxc, const T *col, int64_t ld,
                                int64_t clen, int64_t p0, int64_t rows) {
  const int64_t HW = g->H * g->W;
  for (int64_t c = 0; c < clen; c++) {
    T *xc = dxc + c * HW;
    for (int64_t r = 0; r < g->R; r++)
      for (int64_t sx = 0; sx < g->S; sx++) {
        const T *row = col + ((c * g->R + r) * g->S + sx) * ld;
        int64_t qlo, qhi;
        adnn_cpu_conv2d_valid_q(g, sx, &qlo, &qhi);
        if (qhi == qlo) continue;
        const int64_t w0 = qlo * g->stride_w - g->pad_left + sx * g->dilation_w;
        for (int64_t p = p0; p < p0 + rows; p++) {
          const int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
          if (h < 0 || h >= g->H) continue;
          T *dst = xc + h * g->W + w0;
          const T *src = row + (p - p0) * g->Q;
          if (g->stride_w == 1) {
            for (int64_t q = qlo; q < qhi; q++) dst[q - qlo] += src[q];
          } else {
            for (int64_t q = qlo, i = 0; q < qhi; q++, i += g->stride_w) dst[i] += src[q];
          }
        }
      }
  }
}

/* NCHW task t = (image batch, group, channel block); a batch is one image
 * unless the images are small (s->dy_elems). */
static void CONV_BWD_FN(nchw_task)(void *arg, int64_t t0, int64_t t1, int thread) {
  const CONV_BWD_FN(data_args) *a = arg;
  const adnn_plugin_conv2d *g = a->g;
  const bwd_data_state *s = a->s;
  const int64_t HW = g->H * g->W, PQ = g->P * g->Q, RS = g->R * g->S, crs = g->Cg * RS;
  T *col = a->cols + thread * s->col_elems;
  for (int64_t t = t0; t < t1; t++) {
    const int64_t cbk = t % s->cblocks, bg = t / s->cblocks, gr = bg % g->groups,
                  bt = bg / g->groups;
    const int64_t c0 = cbk * s->cb, clen = g->Cg - c0 < s->cb ? g->Cg - c0 : s->cb;
    const T *wg = a->w + gr * g->Kg * crs;
    if (s->dy_elems) {
      /* Images [n0, n1): dY gathered into [Kg, (n1 - n0) * PQ], one GEMM
       * for the block's rows of all of them, then col2im image by image. */
      const int64_t n0 = bt * g->N / s->batches, n1 = (bt + 1) * g->N / s->batches;
      const int64_t ld = (n1 - n0) * PQ;
      T *dyb = col + s->cb * RS * s->batch_max * PQ;
      for (int64_t n = n0; n < n1; n++) {
        const T *dyn = a->dy + (n * g->K + gr * g->Kg) * PQ;
        for (int64_t k = 0; k < g->Kg; k++)
          memcpy(dyb + k * ld + (n - n0) * PQ, dyn + k * PQ, (size_t)PQ * sizeof(T));
      }
      CONV_BWD_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (int)(clen * RS), (int)ld,
                    (int)g->Kg, (T)1, wg + c0 * RS, (int)crs, dyb, (int)ld, (T)0, col, (int)ld);
      for (int64_t n = n0; n < n1; n++) {
        T *dxc = a->dx + (n * g->C + gr * g->Cg + c0) * HW;
        CONV_BWD_FN(scale)(dxc, clen * HW, a->beta);
        CONV_BWD_FN(col2im)(g, dxc, col + (n - n0) * PQ, ld, clen, 0, g->P);
      }
      continue;
    }
    const int64_t n = bt;
    T *dxc = a->dx + (n * g->C + gr * g->Cg + c0) * HW;
    const T *dyg = a->dy + (n * g->K + gr * g->Kg) * PQ;
    if (s->is_1x1) {
      /* dx[c0 .. c0 + clen) = beta * dx + W_g[:, c0..]^T * dY[n, g]. */
      CONV_BWD_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (int)clen, (int)HW, (int)g->Kg,
                    (T)1, wg + c0, (int)crs, dyg, (int)PQ, a->beta, dxc, (int)HW);
      continue;
    }
    CONV_BWD_FN(scale)(dxc, clen * HW, a->beta);
    for (int64_t tile = 0; tile < s->tiles; tile++) {
      const int64_t p0 = tile * s->rows_per_tile;
      const int64_t rows = g->P - p0 < s->rows_per_tile ? g->P - p0 : s->rows_per_tile;
      const int64_t nt = rows * g->Q;
      /* Col[(c, r, s), pixels of the tile] for the block's channels: their
       * rows of W_g^T are consecutive (KCRS), so one GEMM makes them. */
      CONV_BWD_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (int)(clen * RS), (int)nt,
                    (int)g->Kg, (T)1, wg + c0 * RS, (int)crs, dyg + p0 * g->Q, (int)PQ, (T)0,
                    col, (int)nt);
      CONV_BWD_FN(col2im)(g, dxc, col, nt, clen, p0, rows);
    }
  }
}

/* NHWC task t = (image, group) for im2col_gemm, (image, group, tile) for
 * gemm_1x1. */
static void CONV_BWD_FN(nhwc_task)(void *arg, int64_t t0, int64_t t1, int thread) {
  const CONV_BWD_FN(data_args) *a = arg;
  const adnn_plugin_conv2d *g = a->g;
  const bwd_data_state *s = a->s;
  const int64_t HW = g->H * g->W, PQ = g->P * g->Q, Cg = g->Cg, len = g->R * g->S * Cg;
  T *col = a->cols + thread * s->col_elems;
  for (int64_t t = t0; t < t1; t++) {
    if (s->is_1x1) {
      /* Tiles of all N*P*Q pixels (P*Q = H*W here). */
      const int64_t tile = t % s->tiles, gr = t / s->tiles, NPQ = g->N * PQ;
      const int64_t i0 = tile * s->tile, m = NPQ - i0 < s->tile ? NPQ - i0 : s->tile;
      /* dx[pixels, g] = beta * dx + dY[pixels, g] * W_g ([Kg, Cg]). */
      CONV_BWD_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)Cg, (int)g->Kg, (T)1,
                    a->dy + i0 * g->K + gr * g->Kg, (int)g->K, a->w + gr * g->Kg * Cg, (int)Cg,
                    a->beta, a->dx + i0 * g->C + gr * Cg, (int)g->C);
      continue;
    }
    const int64_t gr = t % g->groups, n = t / g->groups;
    T *dxn = a->dx + n * HW * g->C + gr * Cg;
    for (int64_t i = 0; i < HW; i++) CONV_BWD_FN(scale)(dxn + i * g->C, Cg, a->beta);
    for (int64_t tile = 0; tile < s->tiles; tile++) {
      const int64_t i0 = tile * s->tile, m = PQ - i0 < s->tile ? PQ - i0 : s->tile;
      CONV_BWD_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)len, (int)g->Kg,
                    (T)1, a->dy + (n * PQ + i0) * g->K + gr * g->Kg, (int)g->K,
                    a->w + gr * g->Kg * len, (int)len, (T)0, col, (int)len);
      for (int64_t i = 0; i < m; i++) {
        const int64_t p = (i0 + i) / g->Q, q = (i0 + i) % g->Q;
        const T *src = col + i * len;
        for (int64_t r = 0; r < g->R; r++) {
          const int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
          if (h < 0 || h >= g->H) continue;
          for (int64_t sx = 0; sx < g->S; sx++) {
            const int64_t v = q * g->stride_w - g->pad_left + sx * g->dilation_w;
            if (v < 0 || v >= g->W) continue;
            T *dst = dxn + (h * g->W + v) * g->C;
            const T *blk = src + (r * g->S + sx) * Cg;
            for (int64_t c = 0; c < Cg; c++) dst[c] += blk[c];
          }
        }
      }
    }
  }
}

static void CONV_BWD_FN(run)(const adnn_plugin_conv2d_backward_data *b, const bwd_data_state *s,
                             const T *dy, const T *w, T *dx, void *workspace) {
  const adnn_plugin_conv2d *g = &b->fwd;
  T *ws = workspace;
  if (s->packed) {
    CONV_BWD_FN(pack_job) j = {g, w, ws, s->nhwc};
    const int64_t per_k = g->Cg * g->R * g->S;
    adnn_cpu_parallel_for(g->K, per_k >= 4096 ? 1 : 4096 / per_k, CONV_BWD_FN(pack_task), &j);
    w = ws;
    ws += s->packed;
  }
  CONV_BWD_FN(data_args) a = {g, s, dy, w, dx, ws, (T)b->beta};
  if (s->nhwc)
    adnn_cpu_parallel_for(s->is_1x1 ? g->groups * s->tiles : g->N * g->groups, 1,
                          CONV_BWD_FN(nhwc_task), &a);
  else
    adnn_cpu_parallel_for(s->batches * g->groups * s->cblocks, 1, CONV_BWD_FN(nchw_task), &a);
}

#undef T
#endif /* CONV_BWD_T */
