/*
 * conv2d with a 1x1 filter and no padding as a GEMM on the input as it lies
 * in memory: no column matrix and no workspace (unless the filters are not a
 * row-major [K, C/groups] matrix, in which case they are packed). With a
 * stride (ResNet-50's stride-2 projection shortcuts) the pixels the filter
 * reads are first gathered into a packed stride-1 copy of x in the
 * workspace (subsample_task); the GEMMs below then see H = P, W = Q. The
 * copy is a separate pass over the pool: on res3a_branch1 (256 -> 512,
 * 56x56 -> 28x28) it took 17% of the layer's time at one thread (perf,
 * reading the input's even rows from memory), and at one thread the layer
 * took the same CPU time as im2col_gemm's per-tile gather (paired runs in
 * one process, Zen3); what it buys is the threading: at batch 1
 * im2col_gemm makes a single tile (one task), gemm_1x1 one GEMM that the
 * engine splits over the pool. Gathering the columns straight into the
 * engine's B panels would save the pass (not done). Copies above
 * MAX_STRIDED_COPY are refused (im2col_gemm runs them).
 *
 * NCHW: per image and group, Y[Kg, H*W] = W[Kg, Cg] * X[Cg, H*W].
 * NHWC: per group, Y[N*H*W, Kg] = X[N*H*W, Cg] * W[Kg, Cg]^T over all images
 * at once (lda = C and ldc = K select the group's channels).
 *
 * The pixels are cut into tiles so that each GEMM's output is still in cache
 * when the epilogue (bias + activation) runs over it, and so that the tiles
 * can be spread over the thread pool. Each task runs the GEMM of its own tile
 * through adnn_cpu_sgemm_ws (gemm.h: adnn's engine on the task's thread); the
 * tiles are wide enough (at least 256 pixels) for the packing to pay off. Tasks over our pool rather than a sequential loop of OpenBLAS-threaded
 * GEMMs, for the reasons measured in conv2d-im2col_gemm.c: each tile's
 * epilogue stays on the core that wrote the tile, and GEMMs this thin split
 * poorly across OpenBLAS's threads.
 *
 * When there are too few tiles to keep every thread busy (batch 1 at 14x14
 * or 7x7 makes one tile per image: ResNet-50's res4 and res5 layers ran on
 * one of two threads, issue 15), the GEMM of each image and group is instead
 * called from outside a pool task with one pack slice per thread: the engine
 * then splits it over the pool itself, and the bias and activation run as
 * its epilogue hook on each finished tile. Each element's sum is formed in
 * the same order either way (gemm.h), so the two schedules give the same
 * bits.
 *
 * Prepacked weights (doc/prepacking.md): in NCHW the filters are the GEMM's
 * A operand, so their packed form is each group's [Kg, Cg] matrix in the
 * engine's own A panels (adnn_cpu_sgemm_pack_a), and run then calls
 * adnn_cpu_sgemm_ws_packed_a, which skips packing A at every tile. NHWC
 * (the filters are B there), filters that are not a row-major matrix and
 * instruction sets without an engine microkernel keep the copy.
 */
#include "config.h"

#include <string.h>

#include "kernels/cpu/conv2d.h"
#include "kernels/cpu/gemm.h"

/* Target bytes of a tile's input plus output, and the fewest pixels a tile
 * gets whatever the channel counts. */
#define TILE_BYTES ((int64_t)1 << 20)
#define MIN_TILE 256
/* The largest subsampled copy of x (bytes) a strided problem may take. */
#define MAX_STRIDED_COPY ((double)(64 << 20))

static int64_t pixels_per_tile(const adnn_plugin_conv2d *g, int64_t pixels) {
  int64_t t = TILE_BYTES / ((g->Cg + g->Kg) * (int64_t)sizeof(float));
  if (t < MIN_TILE) t = MIN_TILE;
  t = (t + 15) / 16 * 16; /* whole cache lines of an NCHW row */
  if (t > pixels) t = pixels;
  return t;
}

static int gemm_1x1_supports(const void *problem, const adnn_cpu_env *env, char *why,
                             size_t why_size) {
  (void)env;
  const adnn_plugin_conv2d *g = problem;
  int layout = adnn_cpu_conv2d_common_supports(g, why, why_size);
  if (!layout) return 0;
  if (g->R != 1 || g->S != 1) return adnn_cpu_conv2d_no(why, why_size, "needs a 1x1 filter");
  if (g->pad_top || g->pad_bottom || g->pad_left || g->pad_right)
    return adnn_cpu_conv2d_no(why, why_size, "needs no padding");
  /* The strided copy of x lives in the workspace: bounded, so that a large
   * batch leaves the problem to im2col_gemm, whose column tiles are about
   * 1 MiB per thread. */
  if ((g->stride_h != 1 || g->stride_w != 1) &&
      (double)g->N * (double)g->C * (double)g->P * (double)g->Q * 4.0 > MAX_STRIDED_COPY)
    return adnn_cpu_conv2d_no(why, why_size, "strided copy of x above 64 MiB");
  if (!adnn_cpu_conv2d_fits_int(g->N * g->H * g->W) ||
      !adnn_cpu_conv2d_fits_int(g->N * g->P * g->Q) || !adnn_cpu_conv2d_fits_int(g->C) ||
      !adnn_cpu_conv2d_fits_int(g->K))
    return adnn_cpu_conv2d_no(why, why_size, "sizes exceed OpenBLAS's 32-bit integers");
  return 1;
}

/* The leading dimension of the filters as a [K, Cg] row-major matrix, or 0
 * when their strides do not make one (they are then packed into the
 * workspace). KCRS and KRSC filters both qualify: R = S = 1. */
static int64_t w_ld(const adnn_plugin_conv2d *d) {
  const adnn_tensor_desc *w = &d->w;
  int64_t K = w->dims[0], Cg = w->dims[1];
  if (Cg > 1 && w->strides[1] != 1) return 0;
  if (K == 1) return Cg;
  return w->strides[0] >= Cg && adnn_cpu_conv2d_fits_int(w->strides[0]) ? w->strides[0] : 0;
}

typedef struct state_1x1 {
  adnn_cpu_act act;
  int isa;       /* adnn_cpu_env.isa, for adnn_cpu_sgemm_ws */
  int nhwc;      /* layout: NHWC, else NCHW */
  int epilogue;  /* adnn_cpu_conv2d_has_epilogue */
  int64_t ldw;   /* row stride of the [K, Cg] filter matrix; 0: packed into the workspace */
  int64_t tile;  /* pixels per tile */
  int64_t tiles; /* tiles per image (NCHW) or over all images (NHWC) */
  size_t pack_off;   /* where the GEMM pack slices start in the workspace */
  size_t pack_bytes; /* one thread's GEMM pack space */
  int whole;         /* one threaded GEMM per image and group, not tile tasks */
  int threads;       /* the pack slices the workspace holds */
  size_t apk_group;  /* bytes of one group's pre-packed filters; 0: no packed form */
  int strided;       /* stride > 1: x is first subsampled into the workspace */
  size_t sub_off;    /* where the subsampled x starts in the workspace */
} state_1x1;

static void gemm_1x1_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                             size_t *workspace_bytes) {
  const adnn_plugin_conv2d *g = problem;
  state_1x1 *s = state;
  adnn_cpu_act_init(&s->act, &g->activation, env->isa);
  s->isa = env->isa;
  s->nhwc = adnn_cpu_conv2d_layout(g) == ADNN_CPU_CONV_NHWC;
  s->epilogue = adnn_cpu_conv2d_has_epilogue(g);
  s->ldw = w_ld(g);
  /* Output pixels: with a stride the GEMM reads the subsampled x, whose
   * pixels are the output's. */
  const int64_t pixels = s->nhwc ? g->N * g->P * g->Q : g->P * g->Q;
  s->strided = g->stride_h != 1 || g->stride_w != 1;
  s->tile = pixels_per_tile(g, pixels);
  s->tiles = (pixels + s->tile - 1) / s->tile;
  /* The packed filters (when needed), then one GEMM pack slice per thread. */
  /* Tile tasks when there are at least two per thread (the pool balances
   * them), else the engine's own split of each whole GEMM. */
  const int64_t tasks = (s->nhwc ? 1 : g->N) * g->groups * s->tiles;
  s->whole = env->threads > 1 && tasks < 2 * (int64_t)env->threads;
  s->threads = env->threads;
  const int64_t cols = s->whole ? pixels : s->tile;
  s->pack_bytes = s->nhwc ? adnn_cpu_sgemm_pack_bytes(env->isa, cols, g->Kg, g->Cg)
                          : adnn_cpu_sgemm_pack_bytes(env->isa, g->Kg, cols, g->Cg);
  s->apk_group = !s->nhwc && s->ldw ? adnn_cpu_sgemm_packed_a_bytes(env->isa, g->Kg, g->Cg) : 0;
  size_t wbytes = s->ldw ? 0 : (size_t)(g->K * g->Cg * (int64_t)sizeof(float));
  s->sub_off = (wbytes + 63) / 64 * 64;
  const size_t sub_bytes =
      s->strided ? (size_t)(g->N * g->C * g->P * g->Q * (int64_t)sizeof(float)) : 0;
  s->pack_off = s->sub_off + (sub_bytes + 63) / 64 * 64;
  *workspace_bytes = s->pack_off + s->pack_bytes * (size_t)env->threads;
}

static size_t gemm_1x1_packed_weights_size(const void *problem, const void *state) {
  const adnn_plugin_conv2d *g = problem;
  return ((const state_1x1 *)state)->apk_group * (size_t)g->groups;
}

/* Each group's [Kg, Cg] filter matrix into the engine's A panels. */
static void gemm_1x1_pack_weights(const void *problem, const void *state, const void *w,
                                  void *packed) {
  const adnn_plugin_conv2d *g = problem;
  const state_1x1 *s = state;
  for (int64_t gr = 0; gr < g->groups; gr++)
    adnn_cpu_sgemm_pack_a(s->isa, 0, g->Kg, g->Cg, (const float *)w + gr * g->Kg * s->ldw, s->ldw,
                          (float *)((char *)packed + (size_t)gr * s->apk_group));
}

typedef struct job_1x1 {
  const adnn_plugin_conv2d *g;
  const state_1x1 *s;
  const float *x, *w, *bias;
  const char *apk; /* the pre-packed filters (weights_prepacked with a packed form), or NULL */
  float *y;
  int64_t tile, tiles;
  int64_t ldw; /* row stride of the [K, Cg] filter matrix */
  char *packs; /* the threads' GEMM pack slices */
} job_1x1;

static void nchw_task(void *arg, int64_t t0, int64_t t1, int thread) {
  const job_1x1 *j = arg;
  const adnn_cpu_gemm_pack pack = adnn_cpu_gemm_pack_slice(j->packs, j->s->pack_bytes, thread);
  const adnn_plugin_conv2d *g = j->g;
  int64_t hw = g->P * g->Q;
  int epi = j->s->epilogue;
  for (int64_t t = t0; t < t1; t++) {
    int64_t c0 = t % j->tiles * j->tile, ng = t / j->tiles, gr = ng % g->groups,
            n = ng / g->groups;
    int64_t nt = hw - c0 < j->tile ? hw - c0 : j->tile;
    const float *xt = j->x + (n * g->C + gr * g->Cg) * hw + c0;
    float *yt = j->y + (n * g->K + gr * g->Kg) * hw + c0;
    if (j->apk)
      adnn_cpu_sgemm_ws_packed_a(j->s->isa, 0, g->Kg, nt, g->Cg, 1.0f,
                                 (const float *)(j->apk + (size_t)gr * j->s->apk_group), xt, hw,
                                 0.0f, yt, hw, NULL, &pack);
    else
      adnn_cpu_sgemm_ws(j->s->isa, 0, 0, g->Kg, nt, g->Cg, 1.0f, j->w + gr * g->Kg * j->ldw,
                        j->ldw, xt, hw, 0.0f, yt, hw, NULL, &pack);
    if (epi)
      for (int64_t k = 0; k < g->Kg; k++)
        adnn_cpu_epilogue_f32(&j->s->act, yt + k * hw, (size_t)nt,
                              j->bias ? j->bias[gr * g->Kg + k] : 0.0f);
  }
}

static void nhwc_task(void *arg, int64_t t0, int64_t t1, int thread) {
  const job_1x1 *j = arg;
  const adnn_cpu_gemm_pack pack = adnn_cpu_gemm_pack_slice(j->packs, j->s->pack_bytes, thread);
  const adnn_plugin_conv2d *g = j->g;
  int64_t total = g->N * g->P * g->Q;
  int epi = j->s->epilogue;
  for (int64_t t = t0; t < t1; t++) {
    int64_t gr = t % g->groups, p0 = t / g->groups * j->tile;
    int64_t m = total - p0 < j->tile ? total - p0 : j->tile;
    float *yt = j->y + p0 * g->K + gr * g->Kg;
    adnn_cpu_sgemm_ws(j->s->isa, 0, 1, m, g->Kg, g->Cg, 1.0f,
                      j->x + p0 * g->C + gr * g->Cg, g->C, j->w + gr * g->Kg * j->ldw, j->ldw,
                      0.0f, yt, g->K, NULL, &pack);
    if (epi)
      for (int64_t i = 0; i < m; i++) {
        if (j->bias)
          adnn_cpu_epilogue_vec_f32(&j->s->act, yt + i * g->K, (size_t)g->Kg,
                                    j->bias + gr * g->Kg);
        else
          adnn_cpu_epilogue_f32(&j->s->act, yt + i * g->K, (size_t)g->Kg, 0.0f);
      }
  }
}

/* The bias and activation as the engine's epilogue hook (the whole-GEMM
 * schedule): NCHW tiles' rows are output channels, NHWC tiles' columns. */
typedef struct epi_1x1 {
  const adnn_cpu_act *act;
  const float *bias; /* the group's first channel's, or NULL */
  int nhwc;
} epi_1x1;

static void epi_1x1_fn(const void *arg, float *c, int64_t ldc, int64_t row0, int64_t col0,
                       int64_t rows, int64_t cols) {
  const epi_1x1 *e = arg;
  for (int64_t i = 0; i < rows; i++) {
    if (!e->nhwc)
      adnn_cpu_epilogue_f32(e->act, c + i * ldc, (size_t)cols, e->bias ? e->bias[row0 + i] : 0.0f);
    else if (e->bias)
      adnn_cpu_epilogue_vec_f32(e->act, c + i * ldc, (size_t)cols, e->bias + col0);
    else
      adnn_cpu_epilogue_f32(e->act, c + i * ldc, (size_t)cols, 0.0f);
  }
}

/* The whole-GEMM schedule: per image (NCHW) and group, one GEMM over all the
 * pixels, threaded by the engine over the pool (one pack slice per thread). */
static void run_whole(const job_1x1 *j) {
  const adnn_plugin_conv2d *g = j->g;
  const state_1x1 *s = j->s;
  const adnn_cpu_gemm_pack pack = {j->packs, s->pack_bytes, s->threads};
  const int64_t hw = g->P * g->Q, total = g->N * hw;
  for (int64_t ng = 0; ng < (s->nhwc ? 1 : g->N) * g->groups; ng++) {
    const int64_t gr = ng % g->groups, n = ng / g->groups;
    epi_1x1 e = {&s->act, j->bias ? j->bias + gr * g->Kg : NULL, s->nhwc};
    const adnn_cpu_gemm_epilogue epi = {epi_1x1_fn, &e};
    const adnn_cpu_gemm_epilogue *ep = s->epilogue ? &epi : NULL;
    if (s->nhwc)
      adnn_cpu_sgemm_ws(s->isa, 0, 1, total, g->Kg, g->Cg, 1.0f, j->x + gr * g->Cg, g->C,
                        j->w + gr * g->Kg * j->ldw, j->ldw, 0.0f, j->y + gr * g->Kg, g->K, ep,
                        &pack);
    else if (j->apk)
      adnn_cpu_sgemm_ws_packed_a(s->isa, 0, g->Kg, hw, g->Cg, 1.0f,
                                 (const float *)(j->apk + (size_t)gr * s->apk_group),
                                 j->x + (n * g->C + gr * g->Cg) * hw, hw, 0.0f,
                                 j->y + (n * g->K + gr * g->Kg) * hw, hw, ep, &pack);
    else
      adnn_cpu_sgemm_ws(s->isa, 0, 0, g->Kg, hw, g->Cg, 1.0f, j->w + gr * g->Kg * j->ldw, j->ldw,
                        j->x + (n * g->C + gr * g->Cg) * hw, hw, 0.0f,
                        j->y + (n * g->K + gr * g->Kg) * hw, hw, ep, &pack);
  }
}

/* The strided 1x1 convolution reads only every stride-th pixel: those are
 * first gathered into a packed tensor of the output's spatial size (the
 * same layout as x), which the GEMMs then read as a stride-1 input. Tasks:
 * NCHW the (image, channel) planes, NHWC the (image, output row) rows. */
typedef struct sub_job {
  const adnn_plugin_conv2d *g;
  const float *x;
  float *dst;
  int nhwc;
} sub_job;

static void subsample_task(void *arg, int64_t t0, int64_t t1, int thread) {
  (void)thread;
  const sub_job *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  const int64_t sh = g->stride_h, sw = g->stride_w;
  for (int64_t t = t0; t < t1; t++) {
    if (!j->nhwc) {
      const float *src = j->x + t * g->H * g->W;
      float *d = j->dst + t * g->P * g->Q;
      for (int64_t p = 0; p < g->P; p++) {
        const float *row = src + p * sh * g->W;
        for (int64_t q = 0; q < g->Q; q++) *d++ = row[q * sw];
      }
    } else {
      const int64_t n = t / g->P, p = t % g->P;
      const float *row = j->x + (n * g->H + p * sh) * g->W * g->C;
      float *d = j->dst + t * g->Q * g->C;
      for (int64_t q = 0; q < g->Q; q++)
        memcpy(d + q * g->C, row + q * sw * g->C, (size_t)g->C * sizeof(float));
    }
  }
}

/* Inputs {x, w} or {x, w, bias}. */
static void gemm_1x1_run(const void *problem, const void *state, const void *const *inputs,
                         void *const *outputs, void *workspace) {
  const adnn_plugin_conv2d *g = problem;
  const state_1x1 *s = state;
  job_1x1 j = {.g = g, .s = s, .x = inputs[0], .w = inputs[1],
               .bias = g->has_bias ? inputs[2] : NULL, .apk = NULL, .y = outputs[0],
               .tile = s->tile, .tiles = s->tiles, .ldw = s->ldw,
               .packs = (char *)workspace + s->pack_off};
  /* weights_prepacked: w is the packed form packed_weights_size announced
   * (the panels when apk_group > 0, else the copy, read as w). */
  if (g->weights_prepacked && s->apk_group) j.apk = inputs[1];
  if (!j.ldw) {
    adnn_cpu_conv2d_pack_kcrs(g, j.w, workspace);
    j.w = workspace;
    j.ldw = g->Cg;
  }
  if (s->strided) {
    float *sub = (float *)((char *)workspace + s->sub_off);
    sub_job sj = {g, j.x, sub, s->nhwc};
    const int64_t tasks = s->nhwc ? g->N * g->P : g->N * g->C;
    const int64_t per = s->nhwc ? g->Q * g->C : g->P * g->Q;
    adnn_cpu_parallel_for(tasks, per >= 4096 ? 1 : 4096 / per, subsample_task, &sj);
    j.x = sub;
  }
  if (s->whole)
    run_whole(&j);
  else if (s->nhwc)
    adnn_cpu_parallel_for(j.tiles * g->groups, 1, nhwc_task, &j);
  else
    adnn_cpu_parallel_for(g->N * g->groups * j.tiles, 1, nchw_task, &j);
}

const adnn_cpu_impl adnn_cpu_conv2d_gemm_1x1 = {
    .name = "gemm_1x1",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32),
    .supports = gemm_1x1_supports,
    .slow_for = adnn_cpu_conv2d_generic_slow,
    .state_size = sizeof(state_1x1),
    .reshape = gemm_1x1_reshape,
    .run = gemm_1x1_run,
    .packed_weights_size = gemm_1x1_packed_weights_size,
    .pack_weights = gemm_1x1_pack_weights,
};
