/*
 * conv2d with a 1x1 filter, stride 1 and no padding as a GEMM on the input as
 * it lies in memory: no column matrix and no workspace (unless the filters
 * are not a row-major [K, C/groups] matrix, in which case they are packed).
 *
 * NCHW: per image and group, Y[Kg, H*W] = W[Kg, Cg] * X[Cg, H*W].
 * NHWC: per group, Y[N*H*W, Kg] = X[N*H*W, Cg] * W[Kg, Cg]^T over all images
 * at once (lda = C and ldc = K select the group's channels).
 *
 * The pixels are cut into tiles so that each GEMM's output is still in cache
 * when the epilogue (bias + activation) runs over it, and so that the tiles
 * can be spread over the thread pool. Each task calls OpenBLAS on its own tile;
 * the tiles are wide enough (at least 256 pixels) for OpenBLAS's packing to pay
 * off. Tasks over our pool rather than a sequential loop of OpenBLAS-threaded
 * GEMMs, for the reasons measured in conv2d_im2col_gemm.c: each tile's
 * epilogue stays on the core that wrote the tile, and GEMMs this thin split
 * poorly across OpenBLAS's threads.
 */
#include "config.h"

#include <cblas.h>

#include "kernels/cpu/conv2d_common.h"

/* Target bytes of a tile's input plus output, and the fewest pixels a tile
 * gets whatever the channel counts. */
#define TILE_BYTES ((int64_t)1 << 20)
#define MIN_TILE 256

static int64_t pixels_per_tile(const adnn_cpu_conv2d_geom *g, int64_t pixels) {
  int64_t t = TILE_BYTES / ((g->Cg + g->Kg) * (int64_t)sizeof(float));
  if (t < MIN_TILE) t = MIN_TILE;
  t = (t + 15) / 16 * 16; /* whole cache lines of an NCHW row */
  if (t > pixels) t = pixels;
  return t;
}

static int gemm_1x1_supports(const adnn_conv2d_desc *d, char *why, size_t why_size) {
  int layout = adnn_cpu_conv2d_common_supports(d, why, why_size);
  if (!layout) return 0;
  adnn_cpu_conv2d_geom g = adnn_cpu_conv2d_geom_of(d);
  if (g.R != 1 || g.S != 1) return adnn_cpu_conv2d_no(why, why_size, "needs a 1x1 filter");
  if (g.sh != 1 || g.sw != 1) return adnn_cpu_conv2d_no(why, why_size, "needs stride 1");
  if (d->pad_top || d->pad_bottom || d->pad_left || d->pad_right)
    return adnn_cpu_conv2d_no(why, why_size, "needs no padding");
  if (!adnn_cpu_conv2d_fits_int(g.N * g.H * g.W) || !adnn_cpu_conv2d_fits_int(g.C) ||
      !adnn_cpu_conv2d_fits_int(g.K))
    return adnn_cpu_conv2d_no(why, why_size, "sizes exceed OpenBLAS's 32-bit integers");
  return 1;
}

/* The leading dimension of the filters as a [K, Cg] row-major matrix, or 0
 * when their strides do not make one (they are then packed into the
 * workspace). KCRS and KRSC filters both qualify: R = S = 1. */
static int64_t w_ld(const adnn_conv2d_desc *d) {
  const adnn_tensor_desc *w = &d->w;
  int64_t K = w->dims[0], Cg = w->dims[1];
  if (Cg > 1 && w->strides[1] != 1) return 0;
  if (K == 1) return Cg;
  return w->strides[0] >= Cg && adnn_cpu_conv2d_fits_int(w->strides[0]) ? w->strides[0] : 0;
}

static size_t gemm_1x1_workspace_bytes(const adnn_conv2d_desc *d, int threads) {
  (void)threads;
  if (w_ld(d)) return 0;
  return (size_t)(d->w.dims[0] * d->w.dims[1] * (int64_t)sizeof(float));
}

typedef struct job_1x1 {
  const adnn_conv2d_desc *d;
  adnn_cpu_conv2d_geom g;
  const float *x, *w, *bias;
  float *y;
  int64_t tile, tiles;
  int64_t ldw; /* row stride of the [K, Cg] filter matrix */
} job_1x1;

static void nchw_task(void *arg, int64_t t0, int64_t t1, int thread) {
  (void)thread;
  const job_1x1 *j = arg;
  const adnn_cpu_conv2d_geom *g = &j->g;
  int64_t hw = g->H * g->W;
  int epi = adnn_cpu_conv2d_has_epilogue(j->d);
  for (int64_t t = t0; t < t1; t++) {
    int64_t c0 = t % j->tiles * j->tile, ng = t / j->tiles, gr = ng % g->G, n = ng / g->G;
    int64_t nt = hw - c0 < j->tile ? hw - c0 : j->tile;
    const float *xt = j->x + (n * g->C + gr * g->Cg) * hw + c0;
    float *yt = j->y + (n * g->K + gr * g->Kg) * hw + c0;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)g->Kg, (int)nt, (int)g->Cg, 1.0f,
                j->w + gr * g->Kg * j->ldw, (int)j->ldw, xt, (int)hw, 0.0f, yt, (int)hw);
    if (epi)
      for (int64_t k = 0; k < g->Kg; k++)
        adnn_cpu_epilogue_f32(yt + k * hw, (size_t)nt, j->bias ? j->bias[gr * g->Kg + k] : 0.0f,
                              &j->d->activation);
  }
}

static void nhwc_task(void *arg, int64_t t0, int64_t t1, int thread) {
  (void)thread;
  const job_1x1 *j = arg;
  const adnn_cpu_conv2d_geom *g = &j->g;
  int64_t total = g->N * g->H * g->W;
  int epi = adnn_cpu_conv2d_has_epilogue(j->d);
  for (int64_t t = t0; t < t1; t++) {
    int64_t gr = t % g->G, p0 = t / g->G * j->tile;
    int64_t m = total - p0 < j->tile ? total - p0 : j->tile;
    float *yt = j->y + p0 * g->K + gr * g->Kg;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)g->Kg, (int)g->Cg, 1.0f,
                j->x + p0 * g->C + gr * g->Cg, (int)g->C, j->w + gr * g->Kg * j->ldw, (int)j->ldw,
                0.0f, yt, (int)g->K);
    if (epi)
      for (int64_t i = 0; i < m; i++) {
        if (j->bias)
          adnn_cpu_epilogue_vec_f32(yt + i * g->K, (size_t)g->Kg, j->bias + gr * g->Kg,
                                    &j->d->activation);
        else
          adnn_cpu_epilogue_f32(yt + i * g->K, (size_t)g->Kg, 0.0f, &j->d->activation);
      }
  }
}

static void gemm_1x1_run(const adnn_conv2d_desc *d, const void *x, const void *w, const void *bias,
                         void *y, void *workspace) {
  job_1x1 j = {d, adnn_cpu_conv2d_geom_of(d), x, w, d->has_bias ? bias : NULL, y, 0, 0, 0};
  const adnn_cpu_conv2d_geom *g = &j.g;
  j.ldw = w_ld(d);
  if (!j.ldw) {
    adnn_cpu_conv2d_pack_kcrs(d, w, workspace);
    j.w = workspace;
    j.ldw = g->Cg;
  }
  if (adnn_cpu_conv2d_layout(d) == ADNN_CPU_CONV_NHWC) {
    int64_t total = g->N * g->H * g->W;
    j.tile = pixels_per_tile(g, total);
    j.tiles = (total + j.tile - 1) / j.tile;
    adnn_cpu_parallel_for(j.tiles * g->G, 1, nhwc_task, &j);
  } else {
    int64_t hw = g->H * g->W;
    j.tile = pixels_per_tile(g, hw);
    j.tiles = (hw + j.tile - 1) / j.tile;
    adnn_cpu_parallel_for(g->N * g->G * j.tiles, 1, nchw_task, &j);
  }
}

const adnn_cpu_conv2d_algo adnn_cpu_conv2d_gemm_1x1 = {ADNN_CONV2D_ALGO_GEMM_1X1, gemm_1x1_supports,
                                                       gemm_1x1_workspace_bytes, gemm_1x1_run};
