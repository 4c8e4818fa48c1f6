/*
 * conv2d as im2col + SGEMM: the general algorithm, any geometry (stride,
 * dilation, asymmetric padding, groups), packed NCHW or packed NHWC.
 *
 * NCHW: per image and group, Y[Kg, P*Q] = W[Kg, Cg*R*S] * Col[Cg*R*S, P*Q],
 * where w's packed KCRS rows are already the A operand (filters in another
 * layout are packed to KCRS in the workspace first). The output pixels are
 * cut into tiles of whole output rows so that the column tile stays about the
 * size of the L2 cache; the GEMM writes the tile straight into y (ldc = P*Q) and
 * the epilogue runs on its K rows right after, while they are still in cache.
 *
 * NHWC: the output pixels of all images form one M dimension,
 * Y[N*P*Q, Kg] = Col[pixels, R*S*Cg] * Wt[Kg, R*S*Cg]^T, where a column row is
 * the (r, s, c) patch of one pixel: each (r, s) contributes Cg contiguous
 * channels of x, so building it is a sequence of memcpy calls. The filters are
 * reordered to KRSC (from any layout) into the workspace at each run (weights arrive
 * at execute time); that costs K*C*R*S copies against N*P*Q times as many
 * multiply-adds.
 *
 * Threading: the tiles (of every image and group) are the tasks of one
 * adnn_cpu_parallel_for; each thread builds a tile's columns in its own slice
 * of the workspace, runs the tile's GEMM and its epilogue, so the columns and
 * the output are produced and consumed by the same core while in its cache.
 * The alternative, a sequential loop of tiles with the column building spread
 * over the pool and each GEMM threaded by OpenBLAS, measured 1.5-2x slower on
 * this project's 2-core machine (ResNet-50 3x3 64->64 56x56): OpenBLAS's
 * threads spin between calls and compete with the pool's column building, the
 * columns travel between cores, and a 64-row GEMM splits poorly. The tile's
 * GEMM is adnn_cpu_sgemm_ws (gemm.h), which inside a pool task runs adnn's own
 * engine on the calling thread, so no OpenBLAS thread competes with the pool.
 *
 * Prepacked weights (doc/prepacking.md): NCHW with packed KCRS filters, on an
 * instruction set with an engine microkernel, the packed form is each
 * group's [Kg, Cg*R*S] matrix in the engine's A panels, and the tiles' GEMMs
 * skip packing A (adnn_cpu_sgemm_ws_packed_a, the same bits); otherwise the
 * plugin's copy.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "kernels/cpu/conv2d.h"
#include "kernels/cpu/gemm.h"

/* Target bytes of one column tile, and the fewest GEMM columns (NCHW) or rows
 * (NHWC) a tile gets even when that exceeds the target: thinner GEMMs lose
 * more to OpenBLAS's packing than they gain from cache locality. */
#define TILE_BYTES ((int64_t)1 << 20)
#define MIN_TILE 256

static int64_t nchw_rows_per_tile(const adnn_plugin_conv2d *g) {
  int64_t row_bytes = g->Cg * g->R * g->S * g->Q * (int64_t)sizeof(float);
  int64_t rows = TILE_BYTES / row_bytes;
  int64_t min_rows = (MIN_TILE + g->Q - 1) / g->Q;
  if (rows < min_rows) rows = min_rows;
  if (rows < 1) rows = 1;
  if (rows > g->P) rows = g->P;
  return rows;
}

static int64_t nhwc_pixels_per_tile(const adnn_plugin_conv2d *g) {
  int64_t row_bytes = g->R * g->S * g->Cg * (int64_t)sizeof(float);
  int64_t px = TILE_BYTES / row_bytes;
  if (px < MIN_TILE) px = MIN_TILE;
  if (px > g->N * g->P * g->Q) px = g->N * g->P * g->Q;
  return px;
}

static int im2col_supports(const void *problem, const adnn_cpu_env *env, char *why,
                           size_t why_size) {
  (void)env;
  const adnn_plugin_conv2d *g = problem;
  int layout = adnn_cpu_conv2d_common_supports(g, why, why_size);
  if (!layout) return 0;
  int64_t crs = g->Cg * g->R * g->S;
  if (!adnn_cpu_conv2d_fits_int(crs) || !adnn_cpu_conv2d_fits_int(g->P * g->Q) ||
      !adnn_cpu_conv2d_fits_int(g->K) || !adnn_cpu_conv2d_fits_int(g->N * g->P * g->Q))
    return adnn_cpu_conv2d_no(why, why_size, "sizes exceed OpenBLAS's 32-bit integers");
  return 1;
}

typedef struct im2col_state {
  adnn_cpu_act act;
  int isa;      /* adnn_cpu_env.isa, for adnn_cpu_sgemm_ws */
  int nhwc;     /* layout: NHWC, else NCHW */
  int epilogue; /* adnn_cpu_conv2d_has_epilogue */
  /* NCHW: filters that are not packed KCRS are packed in front of the
   * columns (packed = K*Cg*R*S floats, else 0); tiles of rows_per_tile
   * output rows. NHWC: the filters reordered to KRSC (packed = K*Cg*R*S
   * floats) then the columns; tiles of `tile` pixels. */
  int64_t packed;
  int64_t rows_per_tile, tile, tiles;
  int64_t ws_floats; /* one thread's column buffer */
  size_t pack_bytes; /* one thread's GEMM pack space, after the column buffers */
  int threads;       /* adnn_cpu_env.threads: the number of slices of each */
  size_t apk_group;  /* bytes of one group's pre-packed filters; 0: no packed form */
} im2col_state;

/* One column tile per thread, plus the packed or reordered filters. */
static void im2col_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                           size_t *workspace_bytes) {
  const adnn_plugin_conv2d *g = problem;
  im2col_state *s = state;
  adnn_cpu_act_init(&s->act, &g->activation, env->isa);
  s->isa = env->isa;
  s->threads = env->threads;
  s->nhwc = adnn_cpu_conv2d_layout(g) == ADNN_CPU_CONV_NHWC;
  s->epilogue = adnn_cpu_conv2d_has_epilogue(g);
  const int64_t crs = g->Cg * g->R * g->S;
  if (s->nhwc) {
    const int64_t total = g->N * g->P * g->Q;
    s->packed = g->K * crs;
    s->tile = nhwc_pixels_per_tile(g);
    s->tiles = (total + s->tile - 1) / s->tile;
    s->ws_floats = s->tile * crs;
    s->pack_bytes = adnn_cpu_sgemm_pack_bytes(env->isa, s->tile, g->Kg, crs);
  } else {
    s->packed = adnn_cpu_conv2d_w_is_kcrs(g) ? 0 : g->K * crs;
    /* Packed KCRS filters are the GEMM's row-major [Kg, Cg*R*S] A operand:
     * their packed form is the engine's A panels (none without a
     * microkernel, or when the filters need a reorder first). */
    s->apk_group = s->packed ? 0 : adnn_cpu_sgemm_packed_a_bytes(env->isa, g->Kg, crs);
    s->rows_per_tile = nchw_rows_per_tile(g);
    s->tiles = (g->P + s->rows_per_tile - 1) / s->rows_per_tile;
    s->ws_floats = crs * s->rows_per_tile * g->Q;
    s->pack_bytes = adnn_cpu_sgemm_pack_bytes(env->isa, g->Kg, s->rows_per_tile * g->Q, crs);
  }
  /* Floats up to the pack slices, rounded up to keep them 64-byte aligned. */
  size_t floats = (size_t)(s->packed + s->ws_floats * env->threads);
  *workspace_bytes = (floats * sizeof(float) + 63) / 64 * 64 + s->pack_bytes * (size_t)env->threads;
}

/* Thread `thread`'s GEMM pack space: the slices follow the column buffers
 * (of `threads` threads) that start at cols. */
static adnn_cpu_gemm_pack pack_of(const im2col_state *s, float *cols, int thread) {
  uintptr_t end = (uintptr_t)(cols + s->ws_floats * s->threads);
  end = (end + 63) / 64 * 64;
  return adnn_cpu_gemm_pack_slice((void *)end, s->pack_bytes, thread);
}

/* ---- NCHW ---------------------------------------------------------------- */

typedef struct nchw_job {
  const adnn_plugin_conv2d *g;
  const float *x; /* first input channel of the group in this image */
  float *col;     /* [Cg*R*S][rows*Q] */
  int64_t p0, rows;
} nchw_job;

/* Builds the column tile of output rows [p0, p0 + rows) for one group. */
static void nchw_im2col(const nchw_job *j) {
  const adnn_plugin_conv2d *g = j->g;
  const int64_t sw = g->stride_w;
  int64_t Q = g->Q, nt = j->rows * Q;
  for (int64_t c = 0; c < g->Cg; c++) {
    const float *xc = j->x + c * g->H * g->W;
    for (int64_t r = 0; r < g->R; r++)
      for (int64_t s = 0; s < g->S; s++) {
        float *row = j->col + ((c * g->R + r) * g->S + s) * nt;
        int64_t qlo, qhi;
        adnn_cpu_conv2d_valid_q(g, s, &qlo, &qhi);
        /* Only used when qhi > qlo, where qlo < Q keeps it in range. */
        int64_t w0 = qhi > qlo ? qlo * sw - g->pad_left + s * g->dilation_w : 0;
        for (int64_t p = j->p0; p < j->p0 + j->rows; p++) {
          float *dst = row + (p - j->p0) * Q;
          int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
          if (h < 0 || h >= g->H || qhi == qlo) {
            memset(dst, 0, (size_t)Q * sizeof(float));
            continue;
          }
          const float *src = xc + h * g->W + w0;
          if (qlo) memset(dst, 0, (size_t)qlo * sizeof(float));
          if (sw == 1) {
            memcpy(dst + qlo, src, (size_t)(qhi - qlo) * sizeof(float));
          } else {
            for (int64_t q = qlo, i = 0; q < qhi; q++, i += sw) dst[q] = src[i];
          }
          if (qhi < Q) memset(dst + qhi, 0, (size_t)(Q - qhi) * sizeof(float));
        }
      }
  }
}

typedef struct nchw_task_args {
  const adnn_plugin_conv2d *g;
  const im2col_state *s;
  const float *x, *w, *bias;
  float *y, *ws;
  const char *apk; /* the pre-packed filters (weights_prepacked with a packed form), or NULL */
} nchw_task_args;

/* One task: the columns of one tile of one image and group, its GEMM and its
 * epilogue, all on the calling thread with the thread's own column buffer. */
static void nchw_task(void *arg, int64_t t0, int64_t t1, int thread) {
  const nchw_task_args *a = arg;
  const adnn_plugin_conv2d *g = a->g;
  const im2col_state *s = a->s;
  int64_t crs = g->Cg * g->R * g->S, pq = g->P * g->Q;
  float *col = a->ws + thread * s->ws_floats;
  const adnn_cpu_gemm_pack pack = pack_of(s, a->ws, thread);
  for (int64_t t = t0; t < t1; t++) {
    int64_t tile = t % s->tiles, ng = t / s->tiles, gr = ng % g->groups, n = ng / g->groups;
    int64_t p0 = tile * s->rows_per_tile;
    int64_t rows = g->P - p0 < s->rows_per_tile ? g->P - p0 : s->rows_per_tile;
    int64_t nt = rows * g->Q;
    const float *xg = a->x + (n * g->C + gr * g->Cg) * g->H * g->W;
    const float *wg = a->w + gr * g->Kg * crs;
    float *yt = a->y + (n * g->K + gr * g->Kg) * pq + p0 * g->Q;
    /* A 1x1 stride-1 unpadded filter needs no columns: the image is one. */
    const float *bsrc = col;
    int64_t ldb = nt;
    if (g->R == 1 && g->S == 1 && g->stride_h == 1 && g->stride_w == 1 && g->pad_top == 0 &&
        g->pad_left == 0 && g->P == g->H && g->Q == g->W) {
      bsrc = xg + p0 * g->Q;
      ldb = pq;
    } else {
      nchw_job job = {g, xg, col, p0, rows};
      nchw_im2col(&job);
    }
    if (a->apk)
      adnn_cpu_sgemm_ws_packed_a(s->isa, 0, g->Kg, nt, crs, 1.0f,
                                 (const float *)(a->apk + (size_t)gr * s->apk_group), bsrc, ldb,
                                 0.0f, yt, pq, NULL, &pack);
    else
      adnn_cpu_sgemm_ws(s->isa, 0, 0, g->Kg, nt, crs, 1.0f, wg, crs, bsrc, ldb, 0.0f, yt, pq,
                        NULL, &pack);
    if (s->epilogue)
      for (int64_t k = 0; k < g->Kg; k++)
        adnn_cpu_epilogue_f32(&s->act, yt + k * pq, (size_t)nt,
                              a->bias ? a->bias[gr * g->Kg + k] : 0.0f);
  }
}

static void run_nchw(const adnn_plugin_conv2d *g, const im2col_state *s, const float *x,
                     const float *w, const float *bias, float *y, float *ws) {
  /* weights_prepacked: w is the packed form packed_weights_size announced
   * (the panels when apk_group > 0, else the copy, read as w). */
  const char *apk = g->weights_prepacked && s->apk_group ? (const char *)w : NULL;
  if (s->packed) {
    adnn_cpu_conv2d_pack_kcrs(g, w, ws);
    w = ws;
    ws += s->packed;
  }
  nchw_task_args a = {g, s, x, w, bias, y, ws, apk};
  adnn_cpu_parallel_for(g->N * g->groups * s->tiles, 1, nchw_task, &a);
}

/* ---- NHWC ---------------------------------------------------------------- */

typedef struct nhwc_job {
  const adnn_plugin_conv2d *g;
  const float *x, *w;
  float *col, *wt;
  int64_t t0, c0; /* first pixel of the tile, first channel of the group */
} nhwc_job;

/* wt[k][r][s][c] = w[k][c][r][s] for k in [k0, k1), reading w through its
 * strides (KCRS, KRSC or any other layout). */
static void nhwc_wt_task(void *arg, int64_t k0, int64_t k1, int thread) {
  (void)thread;
  const nhwc_job *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  const int64_t *st = g->w.strides;
  float *dst = j->wt + k0 * g->R * g->S * g->Cg;
  for (int64_t k = k0; k < k1; k++)
    for (int64_t r = 0; r < g->R; r++)
      for (int64_t s = 0; s < g->S; s++) {
        const float *src = j->w + k * st[0] + r * st[2] + s * st[3];
        for (int64_t c = 0; c < g->Cg; c++) *dst++ = src[c * st[1]];
      }
}

/* Builds the column rows of the m pixels from t0 for one group. */
static void nhwc_im2col(const nhwc_job *j, int64_t m) {
  const adnn_plugin_conv2d *g = j->g;
  int64_t pq = g->P * g->Q, Cg = g->Cg, len = g->R * g->S * Cg;
  size_t bytes = (size_t)Cg * sizeof(float);
  for (int64_t i = 0; i < m; i++) {
    int64_t t = j->t0 + i, n = t / pq, p = t % pq / g->Q, q = t % g->Q;
    float *dst = j->col + i * len;
    const float *xn = j->x + n * g->H * g->W * g->C + j->c0;
    for (int64_t r = 0; r < g->R; r++) {
      int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
      if (h < 0 || h >= g->H) {
        memset(dst, 0, bytes * (size_t)g->S);
        dst += g->S * Cg;
        continue;
      }
      for (int64_t s = 0; s < g->S; s++, dst += Cg) {
        int64_t ww = q * g->stride_w - g->pad_left + s * g->dilation_w;
        if (ww < 0 || ww >= g->W)
          memset(dst, 0, bytes);
        else
          memcpy(dst, xn + (h * g->W + ww) * g->C, bytes);
      }
    }
  }
}

typedef struct nhwc_task_args {
  const adnn_plugin_conv2d *g;
  const im2col_state *s;
  const float *x, *bias, *wt;
  float *y, *cols;
} nhwc_task_args;

/* One task: the columns of one tile of pixels for one group, its GEMM into the
 * tile's rows of y and the epilogue of those rows. */
static void nhwc_task(void *arg, int64_t t0, int64_t t1, int thread) {
  const nhwc_task_args *a = arg;
  const adnn_plugin_conv2d *g = a->g;
  const im2col_state *s = a->s;
  int64_t len = g->R * g->S * g->Cg, total = g->N * g->P * g->Q;
  float *col = a->cols + thread * s->ws_floats;
  const adnn_cpu_gemm_pack pack = pack_of(s, a->cols, thread);
  for (int64_t t = t0; t < t1; t++) {
    int64_t gr = t % g->groups, p0 = t / g->groups * s->tile;
    int64_t m = total - p0 < s->tile ? total - p0 : s->tile;
    float *yt = a->y + p0 * g->K + gr * g->Kg;
    nhwc_job job = {g, a->x, NULL, col, NULL, p0, gr * g->Cg};
    nhwc_im2col(&job, m);
    adnn_cpu_sgemm_ws(s->isa, 0, 1, m, g->Kg, len, 1.0f, col,
                      len, a->wt + gr * g->Kg * len, len, 0.0f, yt, g->K, NULL, &pack);
    if (s->epilogue)
      for (int64_t i = 0; i < m; i++) {
        if (a->bias)
          adnn_cpu_epilogue_vec_f32(&s->act, yt + i * g->K, (size_t)g->Kg, a->bias + gr * g->Kg);
        else
          adnn_cpu_epilogue_f32(&s->act, yt + i * g->K, (size_t)g->Kg, 0.0f);
      }
  }
}

static void run_nhwc(const adnn_plugin_conv2d *g, const im2col_state *s, const float *x,
                     const float *w, const float *bias, float *y, float *ws) {
  nhwc_job job = {g, x, w, NULL, ws, 0, 0};
  adnn_cpu_parallel_for(g->K, 16, nhwc_wt_task, &job);
  nhwc_task_args a = {g, s, x, bias, ws, y, ws + s->packed};
  adnn_cpu_parallel_for(s->tiles * g->groups, 1, nhwc_task, &a);
}

static size_t im2col_packed_weights_size(const void *problem, const void *state) {
  const adnn_plugin_conv2d *g = problem;
  const im2col_state *s = state;
  return s->nhwc ? 0 : s->apk_group * (size_t)g->groups;
}

/* Each group's [Kg, Cg*R*S] block of the KCRS filters into the engine's A
 * panels. */
static void im2col_pack_weights(const void *problem, const void *state, const void *w,
                                void *packed) {
  const adnn_plugin_conv2d *g = problem;
  const im2col_state *s = state;
  const int64_t crs = g->Cg * g->R * g->S;
  for (int64_t gr = 0; gr < g->groups; gr++)
    adnn_cpu_sgemm_pack_a(s->isa, 0, g->Kg, crs, (const float *)w + gr * g->Kg * crs, crs,
                          (float *)((char *)packed + (size_t)gr * s->apk_group));
}

/* Inputs {x, w} or {x, w, bias}. */
static void im2col_run(const void *problem, const void *state, const void *const *inputs,
                       void *const *outputs, void *workspace) {
  const adnn_plugin_conv2d *g = problem;
  const im2col_state *s = state;
  const float *b = g->has_bias ? (const float *)inputs[2] : NULL;
  if (s->nhwc)
    run_nhwc(g, s, inputs[0], inputs[1], b, outputs[0], workspace);
  else
    run_nchw(g, s, inputs[0], inputs[1], b, outputs[0], workspace);
}

const adnn_cpu_impl adnn_cpu_conv2d_im2col_gemm = {
    .name = "im2col_gemm",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32),
    .supports = im2col_supports,
    .slow_for = adnn_cpu_conv2d_generic_slow,
    .state_size = sizeof(im2col_state),
    .reshape = im2col_reshape,
    .run = im2col_run,
    .packed_weights_size = im2col_packed_weights_size,
    .pack_weights = im2col_pack_weights,
};
