/*
 * conv2d by Winograd F(4x4, 3x3) for 3x3 filters with stride 1 and dilation 1,
 * any padding, any groups (one group at a time), packed NCHW or NHWC.
 *
 * Each 4x4 block of outputs ("tile") is computed from the 6x6 input patch that
 * covers it: with d the patch and g a 3x3 filter,
 *   U = G g G^T (6x6), V = B^T d B (6x6), y_tile = A^T (sum_c U .* V) A (4x4),
 * so the 144 multiplies per tile and channel pair of the direct method become
 * 36 (4x fewer; F(2x2, 3x3) saves 2.25x). Summing over the input channels turns
 * the element-wise products into 36 independent GEMMs, one per position xi of
 * the 6x6 transform domain:
 *   M[xi][k][t] = sum_c U[xi][k][c] * V[xi][c][t].
 *
 * The interpolation points are 0, 1, -1, 2, -2 and infinity (the matrices
 * below). They keep every entry of B^T and A^T a small integer (exact in
 * float), and G's entries (1/4, 1/6, 1/12, 1/24) only touch the filter
 * transform (float, two stages; its rounding is small next to the error of
 * the input and output transforms). The price of the
 * larger tile is accuracy: A^T has entries up to 8 and B^T up to 5, so the
 * rounding errors of V and M are amplified more than with F(2x2, 3x3);
 * doc/numerics.md gives the measured error and the bound the conformance
 * harness uses. Points +-1/2 instead of +-2 give matrices of the same size
 * class (entries up to 8 in G instead of A^T); we did not measure them.
 *
 *   B^T = [ 4  0 -5  0  1  0 ]   G = [  1/4     0     0  ]   A^T = [ 1 1  1 1  1 0 ]
 *         [ 0 -4 -4  1  1  0 ]       [ -1/6  -1/6  -1/6  ]         [ 0 1 -1 2 -2 0 ]
 *         [ 0  4 -4 -1  1  0 ]       [ -1/6   1/6  -1/6  ]         [ 0 1  1 4  4 0 ]
 *         [ 0 -2 -1  2  1  0 ]       [ 1/24  1/12   1/6  ]         [ 0 1 -1 8 -8 1 ]
 *         [ 0  2 -1 -2  1  0 ]       [ 1/24 -1/12   1/6  ]
 *         [ 0  4  0 -5  0  1 ]       [   0     0     1   ]
 *
 * The filters (U) are the implementation's packed weight form: pack_weights
 * writes them once for a plan whose problem has weights_prepacked = 1, and run
 * then reads inputs[1] as U; otherwise run transforms w into its workspace at
 * every call (the weights only arrive at execute time, in any layout), spread
 * over the thread pool. U's layout depends on the activation layout:
 * NCHW: U[xi][k][c] (xi stride K * Cg), the A operand of M[xi] = U[xi] V[xi];
 * NHWC: U[xi][g][c][k] (the same size), the B operand of M[xi] = V[xi] U[xi].
 *
 * The tiles are cut into blocks (a rectangle of tiles inside one image, small
 * enough that a block's V and M stay in the L2 cache) and each block is one
 * task on the pool: input transform, the 36 GEMMs (adnn_cpu_sgemm_ws, all in
 * wf4_gemms), output transform with bias and activation applied to the outputs
 * as they are written. When a problem has fewer blocks than the pool has
 * threads (small images, batch 1), each block is also split over chunks of
 * output channels, so that the small late ResNet layers use every thread; the
 * chunks redo the block's input transform, which costs Cg / (2 * chunk) of
 * the GEMM work, so chunks stay at least WF4_MIN_KCHUNK channels wide. Each
 * thread has its own V and M buffers in the workspace. Tiles that stick out of
 * the image read zeros (padding) and write only their inside outputs, so P and
 * Q need not be multiples of 4.
 *
 * The transforms are written once against the width-generic vectors of
 * simd.h and instantiated per instruction set (AVX-512: 16 lanes, AVX2: 8,
 * baseline: 4); the AVX-512 copy is the AVX2 source compiled for 16 lanes, so
 * the only AVX-512-specific code is simd.h's masked loads and stores of the
 * tails. NCHW vectorizes across VL horizontally adjacent tiles of one channel
 * (V[xi] is [Cg, tiles]): the six input rows of a tile row are staged with
 * their zero padding, split into the four column phases (x mod 4), so that
 * column j of VL consecutive patches is one contiguous vector of phase j mod 4
 * starting at tile j / 4. NHWC vectorizes across VL channels of one tile
 * (V[xi] is [tiles, Cg]).
 *
 * Preference: the plugin's own choice keeps Winograd F(2x2, 3x3) first in the
 * list (see impl_list.h); F(4x4, 3x3) is preferred only where F(2x2, 3x3)
 * is not (wf4_preferred), and the tuner measures both.
 */
#ifdef ADNN_SIMD_VECTOR_PART

/* V = B^T d B of VL patches, d[i][j] the patch element (i, j) in every lane;
 * v[6 * i + j] gets element (i, j) of the result. */
SIMD_INLINE void NAME(wf4_input_core)(VF d[6][6], VF v[36]) {
  VF t[6][6];
  const VF four = NAME(vset)(4.0f), five = NAME(vset)(5.0f), two = NAME(vset)(2.0f);
  for (int j = 0; j < 6; j++) {
    VF d0 = d[0][j], d1 = d[1][j], d2 = d[2][j], d3 = d[3][j], d4 = d[4][j], d5 = d[5][j];
    VF a = d4 - four * d2, b = d3 - four * d1; /* rows 1 and 2 share them */
    VF c = d4 - d2, e = two * (d3 - d1);       /* rows 3 and 4 */
    t[0][j] = four * d0 - five * d2 + d4;
    t[1][j] = a + b;
    t[2][j] = a - b;
    t[3][j] = c + e;
    t[4][j] = c - e;
    t[5][j] = four * d1 - five * d3 + d5;
  }
  for (int i = 0; i < 6; i++) {
    VF d0 = t[i][0], d1 = t[i][1], d2 = t[i][2], d3 = t[i][3], d4 = t[i][4], d5 = t[i][5];
    VF a = d4 - four * d2, b = d3 - four * d1;
    VF c = d4 - d2, e = two * (d3 - d1);
    v[6 * i + 0] = four * d0 - five * d2 + d4;
    v[6 * i + 1] = a + b;
    v[6 * i + 2] = a - b;
    v[6 * i + 3] = c + e;
    v[6 * i + 4] = c - e;
    v[6 * i + 5] = four * d1 - five * d3 + d5;
  }
}

/* y = A^T M A of VL tiles, m[6 * i + j] element (i, j) of M. */
SIMD_INLINE void NAME(wf4_output_core)(const VF m[36], VF y[4][4]) {
  VF s[4][6];
  const VF two = NAME(vset)(2.0f), four = NAME(vset)(4.0f), eight = NAME(vset)(8.0f);
  for (int j = 0; j < 6; j++) {
    VF m0 = m[j], m1 = m[6 + j], m2 = m[12 + j], m3 = m[18 + j], m4 = m[24 + j], m5 = m[30 + j];
    VF p12 = m1 + m2, n12 = m1 - m2, p34 = m3 + m4, n34 = m3 - m4;
    s[0][j] = m0 + p12 + p34;
    s[1][j] = n12 + two * n34;
    s[2][j] = p12 + four * p34;
    s[3][j] = n12 + eight * n34 + m5;
  }
  for (int a = 0; a < 4; a++) {
    VF m0 = s[a][0], m1 = s[a][1], m2 = s[a][2], m3 = s[a][3], m4 = s[a][4], m5 = s[a][5];
    VF p12 = m1 + m2, n12 = m1 - m2, p34 = m3 + m4, n34 = m3 - m4;
    y[a][0] = m0 + p12 + p34;
    y[a][1] = n12 + two * n34;
    y[a][2] = p12 + four * p34;
    y[a][3] = n12 + eight * n34 + m5;
  }
}

/* Loads n <= VL floats (n == VL: a plain load); stores likewise. */
SIMD_INLINE VF NAME(wf4_load)(const float *p, int64_t n) {
  return n >= VL ? NAME(vload)(p) : NAME(vload_n)(p, (size_t)n, 0.0f);
}
SIMD_INLINE void NAME(wf4_store)(float *p, VF v, int64_t n) {
  if (n >= VL)
    NAME(vstore)(p, v);
  else
    NAME(vstore_n)(p, v, (size_t)n);
}

/* NCHW input transform of n <= VL adjacent tiles from the staged rows:
 * stage + (6 * 0 + ...) holds, for row i and phase f, the floats
 * x[row i][4 q + f] at stage[(4 * i + f) * ps + q]. Results go to
 * v[xi * vstride + lane]. */
static void NAME(wf4_in_nchw)(const float *stage, int64_t ps, int64_t n, float *v,
                              int64_t vstride) {
  VF d[6][6], r[36];
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) d[i][j] = NAME(vload)(stage + (4 * i + (j & 3)) * ps + (j >> 2));
  NAME(wf4_input_core)(d, r);
  for (int xi = 0; xi < 36; xi++) NAME(wf4_store)(v + xi * vstride, r[xi], n);
}

/* NCHW output transform of n <= VL adjacent tiles, M[xi] of the first at
 * m + xi * mstride; the 16 outputs of lane l go to out[(4 * a + b) * VL + l]. */
static void NAME(wf4_out_nchw)(const float *m, int64_t mstride, int64_t n, float *out) {
  VF mv[36], y[4][4];
  for (int xi = 0; xi < 36; xi++) mv[xi] = NAME(wf4_load)(m + xi * mstride, n);
  NAME(wf4_output_core)(mv, y);
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++) NAME(vstore)(out + (4 * a + b) * VL, y[a][b]);
}

/* NHWC input transform of channels [c0, c0 + n) (n <= VL) of one tile;
 * in[i][j] points at pixel (i, j) of the patch, or is NULL for padding. */
static void NAME(wf4_in_nhwc)(const float *const in[6][6], int64_t c0, int64_t n, float *v,
                              int64_t vstride) {
  VF d[6][6], r[36];
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) d[i][j] = in[i][j] ? NAME(wf4_load)(in[i][j] + c0, n) : (VF){0};
  NAME(wf4_input_core)(d, r);
  for (int xi = 0; xi < 36; xi++) NAME(wf4_store)(v + xi * vstride + c0, r[xi], n);
}

/* NHWC output transform of output channels [k0, k0 + n) of one tile;
 * out[a][b] is output pixel (a, b) of the tile, or NULL outside y. */
static void NAME(wf4_out_nhwc)(const float *m, int64_t mstride, int64_t k0, int64_t n,
                               float *const out[4][4]) {
  VF mv[36], y[4][4];
  for (int xi = 0; xi < 36; xi++) mv[xi] = NAME(wf4_load)(m + xi * mstride + k0, n);
  NAME(wf4_output_core)(mv, y);
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++)
      if (out[a][b]) NAME(wf4_store)(out[a][b] + k0, y[a][b], n);
}

/* U = G g G^T of n filters (n a multiple of VL, the buffers padded to it),
 * VL per step: taps[3 r + s][i] is tap (r, s) of filter i, u[xi][i] gets
 * element xi of its U. Float arithmetic in two stages (G g, then (G g) G^T). */
static void NAME(wf4_filters)(const float (*taps)[WF4_FILTER_CHUNK], int64_t n,
                              float (*u)[WF4_FILTER_CHUNK]) {
  const VF q = NAME(vset)(0.25f), s6 = NAME(vset)(1.0f / 6), s12 = NAME(vset)(1.0f / 12),
           s24 = NAME(vset)(1.0f / 24);
  for (int64_t i = 0; i < n; i += VL) {
    VF t[6][3];
    for (int c = 0; c < 3; c++) {
      VF g0 = NAME(vload)(taps[c] + i), g1 = NAME(vload)(taps[3 + c] + i),
         g2 = NAME(vload)(taps[6 + c] + i);
      VF e = g0 + g2;
      t[0][c] = q * g0;
      t[1][c] = -s6 * (e + g1);
      t[2][c] = -s6 * (e - g1);
      t[3][c] = s24 * g0 + s12 * g1 + s6 * g2;
      t[4][c] = s24 * g0 - s12 * g1 + s6 * g2;
      t[5][c] = g2;
    }
    for (int r = 0; r < 6; r++) {
      VF g0 = t[r][0], g1 = t[r][1], g2 = t[r][2], e = g0 + g2;
      NAME(vstore)(u[6 * r + 0] + i, q * g0);
      NAME(vstore)(u[6 * r + 1] + i, -s6 * (e + g1));
      NAME(vstore)(u[6 * r + 2] + i, -s6 * (e - g1));
      NAME(vstore)(u[6 * r + 3] + i, s24 * g0 + s12 * g1 + s6 * g2);
      NAME(vstore)(u[6 * r + 4] + i, s24 * g0 - s12 * g1 + s6 * g2);
      NAME(vstore)(u[6 * r + 5] + i, g2);
    }
  }
}

static const wf4_fns NAME(adnn_f32_wf4) = {VL,
                                           NAME(wf4_in_nchw),
                                           NAME(wf4_out_nchw),
                                           NAME(wf4_in_nhwc),
                                           NAME(wf4_out_nhwc),
                                           NAME(wf4_filters)};

#else /* the dispatch part */

#include "config.h"

#include <string.h>

#include "kernels/cpu/conv2d.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/simd.h"

/* The widest vector of any instruction set (the stage's overrun, the
 * output buffer's lanes, the filter chunks' padding). */
#define WF4_VL_MAX 16
/* Filters per step of the filter transform (a multiple of every VL). */
#define WF4_FILTER_CHUNK 64

/* One instruction set's copy of the transforms (see the vector part). */
typedef struct wf4_fns {
  int vl; /* lanes */
  void (*in_nchw)(const float *stage, int64_t ps, int64_t n, float *v, int64_t vstride);
  void (*out_nchw)(const float *m, int64_t mstride, int64_t n, float *out);
  void (*in_nhwc)(const float *const in[6][6], int64_t c0, int64_t n, float *v, int64_t vstride);
  void (*out_nhwc)(const float *m, int64_t mstride, int64_t k0, int64_t n,
                   float *const out[4][4]);
  void (*filters)(const float (*taps)[WF4_FILTER_CHUNK], int64_t n, float (*u)[WF4_FILTER_CHUNK]);
} wf4_fns;

#define ADNN_SIMD_KERNEL "kernels/cpu/conv2d-winograd_f4x3.c"
#include "kernels/cpu/simd_instantiate.h"

static const wf4_fns *const wf4_by_isa[ADNN_CPU_ISA_COUNT] = ADNN_CPU_ISA_TABLE(adnn_f32_wf4);

/* Target bytes of one block's V plus M. */
#define BLOCK_BYTES ((int64_t)1 << 20)
/* The narrowest chunk of output channels a block is split into (see the top
 * of the file). */
#define WF4_MIN_KCHUNK 32

/* Everything run needs, computed once by wf4_reshape. */
typedef struct wf4_state {
  const wf4_fns *fn;
  adnn_cpu_act act;
  int isa;                  /* adnn_cpu_env.isa, for adnn_cpu_sgemm_ws */
  int nhwc;                 /* layout: NHWC, else NCHW */
  int epilogue;             /* adnn_cpu_conv2d_has_epilogue */
  int64_t tiles_h, tiles_w; /* tiles per image */
  int64_t blk_h, blk_w;     /* tiles per block */
  int64_t nblk_h, nblk_w;   /* blocks per image */
  int64_t nkc, kchunk;      /* output-channel chunks per block, channels per chunk */
  int64_t u_floats;         /* U (workspace when not prepacked) */
  int64_t v_floats, m_floats;
  int64_t stage_ps, stage_floats; /* NCHW: 24 phase rows of stage_ps floats */
  size_t pack_off, pack_bytes; /* the threads' GEMM pack slices in the workspace */
} wf4_state;

/* The tiles and blocks of a problem for `threads` threads. */
static void plan_of(const adnn_plugin_conv2d *g, int threads, wf4_state *w) {
  w->tiles_h = (g->P + 3) / 4;
  w->tiles_w = (g->Q + 3) / 4;
  int64_t tb = BLOCK_BYTES / (36 * (g->Cg + g->Kg) * (int64_t)sizeof(float));
  if (tb < 16) tb = 16; /* very many channels: keep the GEMMs at least 16 wide */
  w->blk_w = w->tiles_w < tb ? w->tiles_w : tb;
  w->blk_h = tb / w->blk_w;
  if (w->blk_h < 1) w->blk_h = 1;
  if (w->blk_h > w->tiles_h) w->blk_h = w->tiles_h;
  w->nblk_h = (w->tiles_h + w->blk_h - 1) / w->blk_h;
  w->nblk_w = (w->tiles_w + w->blk_w - 1) / w->blk_w;
  int64_t blocks = g->N * g->groups * w->nblk_h * w->nblk_w;
  w->nkc = 1;
  if (blocks < threads) {
    int64_t want = (threads + blocks - 1) / blocks, most = g->Kg / WF4_MIN_KCHUNK;
    w->nkc = want < most ? want : most;
    if (w->nkc < 1) w->nkc = 1;
  }
  w->kchunk = (g->Kg + w->nkc - 1) / w->nkc;
  w->nkc = (g->Kg + w->kchunk - 1) / w->kchunk;
  w->u_floats = 36 * g->K * g->Cg;
  w->v_floats = 36 * g->Cg * w->blk_h * w->blk_w;
  w->m_floats = 36 * w->kchunk * w->blk_h * w->blk_w;
  /* cols + 1 tiles of each phase, plus the lanes a last (partial) vector
   * reads beyond them, rounded to whole cache lines. */
  w->stage_ps = (w->blk_w + 1 + WF4_VL_MAX + 15) / 16 * 16;
  w->stage_floats = adnn_cpu_conv2d_layout(g) == ADNN_CPU_CONV_NHWC ? 0 : 24 * w->stage_ps;
}

static int wf4_supports(const void *problem, const adnn_cpu_env *env, char *why,
                        size_t why_size) {
  const adnn_plugin_conv2d *g = problem;
  int layout = adnn_cpu_conv2d_common_supports(g, why, why_size);
  if (!layout) return 0;
  if (g->R != 3 || g->S != 3 || g->stride_h != 1 || g->stride_w != 1 || g->dilation_h != 1 ||
      g->dilation_w != 1)
    return adnn_cpu_conv2d_no(why, why_size, "needs a 3x3 filter with stride 1 and dilation 1");
  wf4_state w;
  plan_of(g, env->threads, &w);
  if (!adnn_cpu_conv2d_fits_int(g->K) || !adnn_cpu_conv2d_fits_int(g->Cg) ||
      !adnn_cpu_conv2d_fits_int(w.blk_h * w.blk_w) || g->K > INT64_MAX / 36 / (g->Cg + 1))
    return adnn_cpu_conv2d_no(why, why_size, "sizes exceed OpenBLAS's 32-bit integers");
  return 1;
}

/* F(2x2, 3x3) comes first in the list and is preferred from 16 channels and
 * 256 of its tiles on (conv2d-winograd_f2x3.c); below that this one is not
 * preferred either: measured on the development machine (see the commit and
 * doc/cpu.md), F(4x4, 3x3) only pays for its larger transforms with many
 * channels, and where F(2x2, 3x3) already declines, im2col_gemm wins. The
 * tuner measures both Winograd variants. */
static int wf4_preferred(const void *problem, const adnn_cpu_env *env) {
  (void)problem;
  (void)env;
  return 0;
}

static void wf4_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                        size_t *workspace_bytes) {
  const adnn_plugin_conv2d *g = problem;
  wf4_state *w = state;
  plan_of(g, env->threads, w);
  w->fn = wf4_by_isa[env->isa];
  adnn_cpu_act_init(&w->act, &g->activation, env->isa);
  w->isa = env->isa;
  w->nhwc = adnn_cpu_conv2d_layout(g) == ADNN_CPU_CONV_NHWC;
  w->epilogue = adnn_cpu_conv2d_has_epilogue(g);
  int64_t per_thread = w->v_floats + w->m_floats + w->stage_floats +
                       16 * WF4_VL_MAX; /* the NCHW output transform's lanes */
  int64_t u = g->weights_prepacked ? 0 : w->u_floats;
  /* One GEMM pack slice per thread after the buffers, sized for the largest
   * of the 36 GEMMs (chunk x block tiles x Cg), so run allocates nothing. */
  w->pack_bytes = w->nhwc ? adnn_cpu_sgemm_pack_bytes(env->isa, w->blk_h * w->blk_w, w->kchunk, g->Cg)
                          : adnn_cpu_sgemm_pack_bytes(env->isa, w->kchunk, w->blk_h * w->blk_w, g->Cg);
  w->pack_off = ((size_t)((u + per_thread * env->threads) * (int64_t)sizeof(float)) + 63) / 64 * 64;
  *workspace_bytes = w->pack_off + w->pack_bytes * (size_t)env->threads;
}

typedef struct wf4_job {
  const adnn_plugin_conv2d *g;
  const wf4_state *w;
  const float *x, *wt, *bias;
  float *y, *u, *vm; /* vm: the per-thread V, M, stage and output buffers */
  char *packs;       /* the per-thread GEMM pack slices */
} wf4_job;

/* Where U[xi] keeps filter k = gr * Kg + kl, input channel c of its group
 * (see the top of the file for the two layouts). */
static inline int64_t u_offset(int nhwc, const adnn_plugin_conv2d *g, int64_t gr, int64_t kl,
                               int64_t c) {
  return nhwc ? (gr * g->Cg + c) * g->Kg + kl : (gr * g->Kg + kl) * g->Cg + c;
}

/* U for filters [k0, k1): G g G^T (the vector part's wf4_filters) of chunks
 * of input channels, whose taps are gathered through w's strides first (any
 * filter layout). The 36 values of a filter go to 36 places K * Cg floats
 * apart; in NCHW, where U[xi] is contiguous along c, a chunk is transformed
 * into a local buffer and copied out as 36 contiguous runs, since writing
 * each value in place would hit the same cache sets 36 times in a row. */
static void filter_task(void *arg, int64_t k0, int64_t k1, int thread) {
  (void)thread;
  const wf4_job *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  const int64_t *st = g->w.strides;
  int64_t xs = g->K * g->Cg; /* xi stride of either U layout */
  float taps[9][WF4_FILTER_CHUNK], buf[36][WF4_FILTER_CHUNK];
  for (int64_t k = k0; k < k1; k++) {
    int64_t gr = k / g->Kg, kl = k % g->Kg;
    for (int64_t c0 = 0; c0 < g->Cg; c0 += WF4_FILTER_CHUNK) {
      int64_t nc = g->Cg - c0 < WF4_FILTER_CHUNK ? g->Cg - c0 : WF4_FILTER_CHUNK;
      int64_t padded = (nc + WF4_VL_MAX - 1) / WF4_VL_MAX * WF4_VL_MAX;
      for (int64_t ci = 0; ci < nc; ci++) {
        const float *f = j->wt + k * st[0] + (c0 + ci) * st[1];
        for (int r = 0; r < 3; r++)
          for (int s = 0; s < 3; s++) taps[3 * r + s][ci] = f[r * st[2] + s * st[3]];
      }
      for (int t = 0; t < 9; t++)
        for (int64_t ci = nc; ci < padded; ci++) taps[t][ci] = 0.0f;
      j->w->fn->filters((const float(*)[WF4_FILTER_CHUNK])taps, padded, buf);
      if (!j->w->nhwc) {
        float *u = j->u + u_offset(0, g, gr, kl, c0);
        for (int xi = 0; xi < 36; xi++)
          memcpy(u + xi * xs, buf[xi], (size_t)nc * sizeof(float));
      } else {
        for (int xi = 0; xi < 36; xi++)
          for (int64_t ci = 0; ci < nc; ci++)
            j->u[xi * xs + u_offset(1, g, gr, kl, c0 + ci)] = buf[xi][ci];
      }
    }
  }
}

/* The 36 GEMMs of one block and output-channel chunk [ka, ka + kn) of group
 * gr, nt tiles: NCHW M[xi] (kn x nt) = U[xi] (kn x Cg) * V[xi] (Cg x nt);
 * NHWC M[xi] (nt x kn) = V[xi] (nt x Cg) * U[xi] (Cg x kn of Kg columns). The
 * only GEMM calls of this file. */
static void wf4_gemms(const wf4_job *j, int64_t gr, int64_t ka, int64_t kn, int64_t nt,
                      const float *v, float *m, int thread) {
  const adnn_plugin_conv2d *g = j->g;
  const wf4_state *w = j->w;
  const adnn_cpu_gemm_pack pack = adnn_cpu_gemm_pack_slice(j->packs, w->pack_bytes, thread);
  int64_t xs = g->K * g->Cg;
  for (int xi = 0; xi < 36; xi++) {
    const float *u = j->u + xi * xs;
    if (w->nhwc)
      adnn_cpu_sgemm_ws(w->isa, 0, 0, nt, kn, g->Cg, 1.0f, v + xi * nt * g->Cg, g->Cg,
                        u + gr * g->Cg * g->Kg + ka, g->Kg, 0.0f, m + xi * nt * kn, kn, NULL,
                        &pack);
    else
      adnn_cpu_sgemm_ws(w->isa, 0, 0, kn, nt, g->Cg, 1.0f, u + (gr * g->Kg + ka) * g->Cg,
                        g->Cg, v + xi * g->Cg * nt, nt, 0.0f, m + xi * kn * nt, nt, NULL, &pack);
  }
}

/* Which block, group, image and channel chunk task b is, and the block's
 * tiles. */
typedef struct wf4_block {
  int64_t tw0, th0, cols, rows, nt, gr, n, ka, kn;
} wf4_block;

static void block_of(const adnn_plugin_conv2d *g, const wf4_state *w, int64_t b, wf4_block *o) {
  int64_t kc = b % w->nkc;
  b /= w->nkc;
  o->tw0 = b % w->nblk_w * w->blk_w;
  o->th0 = b / w->nblk_w % w->nblk_h * w->blk_h;
  int64_t ng = b / (w->nblk_w * w->nblk_h);
  o->gr = ng % g->groups;
  o->n = ng / g->groups;
  o->cols = w->tiles_w - o->tw0 < w->blk_w ? w->tiles_w - o->tw0 : w->blk_w;
  o->rows = w->tiles_h - o->th0 < w->blk_h ? w->tiles_h - o->th0 : w->blk_h;
  o->nt = o->rows * o->cols;
  o->ka = kc * w->kchunk;
  o->kn = g->Kg - o->ka < w->kchunk ? g->Kg - o->ka : w->kchunk;
}

/* Stages the six input rows from h0 of columns [wf, wf + 4 cols + 4) of
 * channel plane xc, split into the four column phases (see the top of the
 * file), zeros for padding and for the lanes past the last tile. */
static void stage_rows(const adnn_plugin_conv2d *g, const float *xc, int64_t h0, int64_t wf,
                       int64_t cols, int64_t ps, float *stage) {
  for (int i = 0; i < 6; i++) {
    float *sr = stage + 4 * i * ps;
    int64_t h = h0 + i;
    if (h < 0 || h >= g->H) {
      memset(sr, 0, (size_t)(4 * ps) * sizeof(float));
      continue;
    }
    const float *xr = xc + h * g->W;
    for (int64_t q = 0; q <= cols; q++) {
      int64_t base = wf + 4 * q;
      if (base >= 0 && base + 4 <= g->W) {
        sr[q] = xr[base];
        sr[ps + q] = xr[base + 1];
        sr[2 * ps + q] = xr[base + 2];
        sr[3 * ps + q] = xr[base + 3];
      } else {
        for (int f = 0; f < 4; f++) {
          int64_t idx = base + f;
          sr[f * ps + q] = idx >= 0 && idx < g->W ? xr[idx] : 0.0f;
        }
      }
    }
    for (int f = 0; f < 4; f++)
      memset(sr + f * ps + cols + 1, 0, (size_t)(ps - cols - 1) * sizeof(float));
  }
}

static void block_task_nchw(void *arg, int64_t b0, int64_t b1, int thread) {
  const wf4_job *j = arg;
  const wf4_state *w = j->w;
  const adnn_plugin_conv2d *g = j->g;
  const wf4_fns *fn = w->fn;
  const int64_t vl = fn->vl, ps = w->stage_ps;
  float *v = j->vm + thread * (w->v_floats + w->m_floats + w->stage_floats + 16 * WF4_VL_MAX);
  float *m = v + w->v_floats, *stage = m + w->m_floats, *obuf = stage + w->stage_floats;
  for (int64_t b = b0; b < b1; b++) {
    wf4_block k;
    block_of(g, w, b, &k);
    int64_t nt = k.nt;

    /* Input transform: V[xi][c][t], t = row-major tile index in the block. */
    const float *xg = j->x + (k.n * g->C + k.gr * g->Cg) * g->H * g->W;
    for (int64_t c = 0; c < g->Cg; c++) {
      const float *xc = xg + c * g->H * g->W;
      for (int64_t r = 0; r < k.rows; r++) {
        stage_rows(g, xc, 4 * (k.th0 + r) - g->pad_top, 4 * k.tw0 - g->pad_left, k.cols, ps,
                   stage);
        float *vt = v + c * nt + r * k.cols;
        for (int64_t q = 0; q < k.cols; q += vl)
          fn->in_nchw(stage + q, ps, k.cols - q, vt + q, g->Cg * nt);
      }
    }

    wf4_gemms(j, k.gr, k.ka, k.kn, nt, v, m, thread);

    /* Output transform, then the epilogue on the (up to) four output rows of
     * each tile row while they are in cache. */
    int64_t mstride = k.kn * nt;
    int64_t q0 = 4 * k.tw0, q1 = 4 * (k.tw0 + k.cols) < g->Q ? 4 * (k.tw0 + k.cols) : g->Q;
    for (int64_t kl = 0; kl < k.kn; kl++) {
      int64_t kk = k.gr * g->Kg + k.ka + kl;
      float *yk = j->y + (k.n * g->K + kk) * g->P * g->Q;
      float bias = j->bias ? j->bias[kk] : 0.0f;
      for (int64_t r = 0; r < k.rows; r++) {
        int64_t p = 4 * (k.th0 + r);
        int64_t nrows = g->P - p < 4 ? g->P - p : 4;
        for (int64_t q = 0; q < k.cols; q += vl) {
          int64_t nl = k.cols - q < vl ? k.cols - q : vl;
          fn->out_nchw(m + kl * nt + r * k.cols + q, mstride, nl, obuf);
          for (int64_t l = 0; l < nl; l++) {
            int64_t qq = 4 * (k.tw0 + q + l);
            int64_t ncols = g->Q - qq < 4 ? g->Q - qq : 4;
            for (int64_t a = 0; a < nrows; a++) {
              float *yr = yk + (p + a) * g->Q + qq;
              for (int64_t bb = 0; bb < ncols; bb++) yr[bb] = obuf[(4 * a + bb) * vl + l];
            }
          }
        }
        if (w->epilogue)
          for (int64_t a = 0; a < nrows; a++)
            adnn_cpu_epilogue_f32(&w->act, yk + (p + a) * g->Q + q0, (size_t)(q1 - q0), bias);
      }
    }
  }
}

static void block_task_nhwc(void *arg, int64_t b0, int64_t b1, int thread) {
  const wf4_job *j = arg;
  const wf4_state *w = j->w;
  const adnn_plugin_conv2d *g = j->g;
  const wf4_fns *fn = w->fn;
  const int64_t vl = fn->vl;
  float *v = j->vm + thread * (w->v_floats + w->m_floats + w->stage_floats + 16 * WF4_VL_MAX);
  float *m = v + w->v_floats;
  for (int64_t b = b0; b < b1; b++) {
    wf4_block k;
    block_of(g, w, b, &k);
    int64_t nt = k.nt, vstride = nt * g->Cg, mstride = nt * k.kn;
    const float *xn = j->x + k.n * g->H * g->W * g->C + k.gr * g->Cg;
    float *yn = j->y + k.n * g->P * g->Q * g->K + k.gr * g->Kg + k.ka;

    /* Input transform: V[xi][t][c]. */
    for (int64_t t = 0; t < nt; t++) {
      int64_t h0 = 4 * (k.th0 + t / k.cols) - g->pad_top;
      int64_t w0 = 4 * (k.tw0 + t % k.cols) - g->pad_left;
      const float *in[6][6];
      for (int i = 0; i < 6; i++)
        for (int jj = 0; jj < 6; jj++) {
          int64_t h = h0 + i, ww = w0 + jj;
          in[i][jj] =
              h >= 0 && h < g->H && ww >= 0 && ww < g->W ? xn + (h * g->W + ww) * g->C : NULL;
        }
      for (int64_t c0 = 0; c0 < g->Cg; c0 += vl)
        fn->in_nhwc((const float *const(*)[6])in, c0, g->Cg - c0 < vl ? g->Cg - c0 : vl,
                    v + t * g->Cg, vstride);
    }

    wf4_gemms(j, k.gr, k.ka, k.kn, nt, v, m, thread);

    /* Output transform, then the epilogue on each output pixel's channels. */
    const float *bias = j->bias ? j->bias + k.gr * g->Kg + k.ka : NULL;
    for (int64_t t = 0; t < nt; t++) {
      int64_t p = 4 * (k.th0 + t / k.cols), q = 4 * (k.tw0 + t % k.cols);
      float *out[4][4];
      for (int a = 0; a < 4; a++)
        for (int bb = 0; bb < 4; bb++)
          out[a][bb] = p + a < g->P && q + bb < g->Q ? yn + ((p + a) * g->Q + q + bb) * g->K : NULL;
      for (int64_t k0 = 0; k0 < k.kn; k0 += vl)
        fn->out_nhwc(m + t * k.kn, mstride, k0, k.kn - k0 < vl ? k.kn - k0 : vl,
                     (float *const(*)[4])out);
      if (w->epilogue)
        for (int a = 0; a < 4; a++)
          for (int bb = 0; bb < 4; bb++) {
            if (!out[a][bb]) continue;
            if (bias)
              adnn_cpu_epilogue_vec_f32(&w->act, out[a][bb], (size_t)k.kn, bias);
            else
              adnn_cpu_epilogue_f32(&w->act, out[a][bb], (size_t)k.kn, 0.0f);
          }
    }
  }
}

static size_t wf4_packed_weights_size(const void *problem, const void *state) {
  (void)problem;
  const wf4_state *w = state;
  return (size_t)w->u_floats * sizeof(float);
}

/* U from w, spread over the pool. */
static void wf4_transform_filters(const adnn_plugin_conv2d *g, const wf4_state *w,
                                  const float *wt, float *u) {
  wf4_job j = {g, w, NULL, wt, NULL, NULL, u, NULL, NULL};
  adnn_cpu_parallel_for(g->K, 4, filter_task, &j);
}

static void wf4_pack_weights(const void *problem, const void *state, const void *wt,
                             void *packed) {
  wf4_transform_filters(problem, state, wt, packed);
}

/* Inputs {x, w} or {x, w, bias}; w is U when the problem says weights_prepacked. */
static void wf4_run(const void *problem, const void *state, const void *const *inputs,
                    void *const *outputs, void *workspace) {
  const adnn_plugin_conv2d *g = problem;
  const wf4_state *w = state;
  float *ws = workspace;
  float *u = (float *)inputs[1];
  float *vm = ws;
  if (!g->weights_prepacked) {
    u = ws;
    vm = ws + w->u_floats;
    wf4_transform_filters(g, w, inputs[1], u);
  }
  wf4_job j = {g, w, inputs[0], inputs[1], g->has_bias ? inputs[2] : NULL, outputs[0], u, vm,
               (char *)workspace + w->pack_off};
  adnn_cpu_parallel_for(g->N * g->groups * w->nblk_h * w->nblk_w * w->nkc, 1,
                        w->nhwc ? block_task_nhwc : block_task_nchw, &j);
}

const adnn_cpu_impl adnn_cpu_conv2d_winograd_f4x3 = {
    .name = "winograd_f4x3",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32),
    .supports = wf4_supports,
    .slow_for = adnn_cpu_conv2d_generic_slow,
    .preferred = wf4_preferred,
    .state_size = sizeof(wf4_state),
    .reshape = wf4_reshape,
    .run = wf4_run,
    .packed_weights_size = wf4_packed_weights_size,
    .pack_weights = wf4_pack_weights,
};

#endif /* ADNN_SIMD_VECTOR_PART */
