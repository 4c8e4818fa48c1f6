/*
 * conv2d by Winograd F(2x2, 3x3) for 3x3 filters with stride 1 and dilation 1,
 * any padding, any groups (one group at a time), packed NCHW or NHWC.
 *
 * Each 2x2 block of outputs ("tile") is computed from the 4x4 input patch that
 * covers it: with d the patch, g a 3x3 filter and
 *   U = G g G^T (4x4), V = B^T d B (4x4), y_tile = A^T (sum_c U .* V) A (2x2)
 * the 36 multiplies per tile and channel pair of the direct method become 16.
 * Summing over the input channels turns the element-wise products into 16
 * independent GEMMs, one per position xi of the 4x4 transform domain:
 *   M[xi][k][t] = sum_c U[xi][k][c] * V[xi][c][t].
 *
 * The filters are transformed into the workspace at each run (the weights only
 * arrive at execute time, in any layout), spread over the thread pool. The
 * tiles are then cut into blocks (a rectangle of tiles inside one image, small
 * enough that a block's V and M stay in the L2 cache) and each block is one
 * task on the pool: input transform, the 16 GEMMs (adnn_cpu_sgemm_ws), output transform
 * with bias and activation applied to the outputs as they are written. Each
 * thread has its own V and M buffers in the workspace. Tiles that stick out of
 * the image read zeros (padding) and write only their inside outputs, so odd P
 * and Q need nothing special.
 *
 * NCHW vectorizes the transforms across 16 adjacent tiles of one channel
 * (V[xi] is [Cg, tiles]); NHWC vectorizes them across 16 channels of one tile
 * (V[xi] is [tiles, Cg], see block_task_nhwc). Without AVX-512 (or with the
 * plugin's level capped below it) the same transforms run as portable C, one
 * tile and channel at a time.
 *
 * The tile and block plan, the layout and the transforms' instruction set
 * are computed once, when the plan selects the algorithm (wino_reshape), and
 * kept in the plan's state.
 *
 * When the plugin chooses on its own, Winograd is preferred only with at least
 * 16 input and output channels per group and 256 output tiles: measured on the
 * development machine it wins clearly at 56x56 with 64 channels (0.74 vs
 * 1.67 ms for im2col_gemm) and loses at 14x14 with 256 channels (2.0 vs
 * 1.2 ms). The tuner replaces this guess with measurements.
 */
#include "config.h"

#include <string.h>

#include "kernels/cpu/conv2d.h"
#include "kernels/cpu/gemm.h"

/* Target bytes of one block's V plus M. */
#define BLOCK_BYTES ((int64_t)1 << 20)

/* The plugin's own choice takes Winograd only from these sizes on (see the
 * top of the file). */
enum { WINOGRAD_MIN_TILES = 256, WINOGRAD_MIN_CHANNELS = 16 };

/* Everything run needs, computed once by wino_reshape. */
typedef struct wino_state {
  adnn_cpu_act act;
  int isa;                  /* adnn_cpu_env.isa, for adnn_cpu_sgemm_ws */
  int nhwc;                 /* layout: NHWC, else NCHW */
  int epilogue;             /* adnn_cpu_conv2d_has_epilogue */
  int avx512;               /* 1 when the AVX-512 transforms run */
  /* Whether the AVX-512 filter transforms may run: they gather sixteen lanes
   * at 32-bit offsets along w's channel stride (U, filter_task) or its filter
   * stride (NHWC's transposed U, filter_task_nhwc). */
  int filter_avx512, filter_nhwc_avx512;
  int64_t tiles_h, tiles_w; /* tiles per image */
  int64_t blk_h, blk_w;     /* tiles per block */
  int64_t nblk_h, nblk_w;   /* blocks per image and group */
  int64_t u_floats, v_floats, m_floats;
  int64_t ut_floats;                  /* NHWC: U transposed per group, [xi][g][Cg][Kg] */
  int64_t stage_stride, stage_floats; /* four padded input rows (AVX-512 path) */
  size_t pack_off, pack_bytes;        /* the threads' GEMM pack slices in the workspace */
} wino_state;

/* The tiles and blocks of a problem (all of wino_state but the code paths). */
static void plan_of(const adnn_plugin_conv2d *g, wino_state *w) {
  w->tiles_h = (g->P + 1) / 2;
  w->tiles_w = (g->Q + 1) / 2;
  int64_t tb = BLOCK_BYTES / (16 * (g->Cg + g->Kg) * (int64_t)sizeof(float));
  if (tb < 16) tb = 16; /* very many channels: keep the GEMMs at least 16 wide */
  w->blk_w = w->tiles_w < tb ? w->tiles_w : tb;
  w->blk_h = tb / w->blk_w;
  if (w->blk_h < 1) w->blk_h = 1;
  if (w->blk_h > w->tiles_h) w->blk_h = w->tiles_h;
  w->nblk_h = (w->tiles_h + w->blk_h - 1) / w->blk_h;
  w->nblk_w = (w->tiles_w + w->blk_w - 1) / w->blk_w;
  w->u_floats = 16 * g->K * g->Cg;
  w->ut_floats = adnn_cpu_conv2d_layout(g) == ADNN_CPU_CONV_NHWC ? w->u_floats : 0;
  w->v_floats = 16 * g->Cg * w->blk_h * w->blk_w;
  w->m_floats = 16 * g->Kg * w->blk_h * w->blk_w;
  /* 2 * blk_w + 2 columns, plus 32 that the last (partial) vector step reads. */
  w->stage_stride = (2 * w->blk_w + 2 + 32 + 15) / 16 * 16;
  w->stage_floats = 4 * w->stage_stride;
}

static int wino_supports(const void *problem, const adnn_cpu_env *env, char *why,
                         size_t why_size) {
  (void)env;
  const adnn_plugin_conv2d *g = problem;
  int layout = adnn_cpu_conv2d_common_supports(g, why, why_size);
  if (!layout) return 0;
  if (g->R != 3 || g->S != 3 || g->stride_h != 1 || g->stride_w != 1 || g->dilation_h != 1 ||
      g->dilation_w != 1)
    return adnn_cpu_conv2d_no(why, why_size, "needs a 3x3 filter with stride 1 and dilation 1");
  wino_state w;
  plan_of(g, &w);
  if (!adnn_cpu_conv2d_fits_int(g->K) || !adnn_cpu_conv2d_fits_int(g->Cg) ||
      !adnn_cpu_conv2d_fits_int(w.blk_h * w.blk_w))
    return adnn_cpu_conv2d_no(why, why_size, "sizes exceed OpenBLAS's 32-bit integers");
  return 1;
}

static int wino_preferred(const void *problem, const adnn_cpu_env *env) {
  (void)env;
  const adnn_plugin_conv2d *g = problem;
  const int64_t tiles = g->N * ((g->P + 1) / 2) * ((g->Q + 1) / 2);
  return g->Cg >= WINOGRAD_MIN_CHANNELS && g->Kg >= WINOGRAD_MIN_CHANNELS &&
         tiles >= WINOGRAD_MIN_TILES;
}

static void wino_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                         size_t *workspace_bytes) {
  const adnn_plugin_conv2d *g = problem;
  wino_state *w = state;
  plan_of(g, w);
  adnn_cpu_act_init(&w->act, &g->activation, env->isa);
  w->isa = env->isa;
  w->nhwc = adnn_cpu_conv2d_layout(g) == ADNN_CPU_CONV_NHWC;
  w->epilogue = adnn_cpu_conv2d_has_epilogue(g);
#if defined(__x86_64__) || defined(__i386__)
  w->avx512 = env->isa >= ADNN_CPU_ISA_AVX512;
#endif
  w->filter_avx512 = w->avx512 && g->w.strides[1] <= INT32_MAX / 16;
  w->filter_nhwc_avx512 = w->avx512 && g->w.strides[0] <= INT32_MAX / 16;
  int64_t per_thread = w->v_floats + w->m_floats + w->stage_floats;
  /* One GEMM pack slice per thread after the buffers, sized for the 16
   * GEMMs of a whole block (Kg x tiles x Cg), so run allocates nothing. */
  const int64_t nt = w->blk_h * w->blk_w;
  w->pack_bytes = w->nhwc ? adnn_cpu_sgemm_pack_bytes(env->isa, nt, g->Kg, g->Cg)
                          : adnn_cpu_sgemm_pack_bytes(env->isa, g->Kg, nt, g->Cg);
  w->pack_off = ((size_t)((w->u_floats + w->ut_floats + per_thread * env->threads) *
                          (int64_t)sizeof(float)) + 63) / 64 * 64;
  *workspace_bytes = w->pack_off + w->pack_bytes * (size_t)env->threads;
}

typedef struct wino_job {
  const adnn_plugin_conv2d *g;
  const wino_state *w;
  const float *x, *wt, *bias;
  float *y, *u, *vm; /* vm: the per-thread V and M buffers */
  float *ut;         /* NHWC only: see wino_state.ut_floats */
  char *packs;       /* the per-thread GEMM pack slices */
} wino_job;

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

/* The filter transform of sixteen filters at once, one per lane: sixteen
 * input channels of one filter (NCHW: lane_stride is w's channel stride) or
 * one input channel of sixteen filters (NHWC: lane_stride is w's filter
 * stride). The nine taps are gathered through w's strides, and each of the 16
 * results is one contiguous (masked) store of 16 lanes. */
__attribute__((target("avx512f"))) static void filters16__avx512(const float *f,
                                                                 int64_t lane_stride,
                                                                 const int64_t *st, int64_t n,
                                                                 float *u, int64_t ustride) {
  __mmask16 m = n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
  __m512i idx =
      _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_epi32((int)lane_stride));
  const __m512 half = _mm512_set1_ps(0.5f);
  __m512 g[3][3], t[4][3];
  for (int r = 0; r < 3; r++)
    for (int s = 0; s < 3; s++)
      g[r][s] = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, f + r * st[2] + s * st[3], 4);
  for (int s = 0; s < 3; s++) {
    __m512 ae = _mm512_add_ps(g[0][s], g[2][s]);
    t[0][s] = g[0][s];
    t[1][s] = _mm512_mul_ps(half, _mm512_add_ps(ae, g[1][s]));
    t[2][s] = _mm512_mul_ps(half, _mm512_sub_ps(ae, g[1][s]));
    t[3][s] = g[2][s];
  }
  for (int i = 0; i < 4; i++) {
    __m512 ae = _mm512_add_ps(t[i][0], t[i][2]);
    _mm512_mask_storeu_ps(u + (i * 4 + 0) * ustride, m, t[i][0]);
    _mm512_mask_storeu_ps(u + (i * 4 + 1) * ustride, m,
                          _mm512_mul_ps(half, _mm512_add_ps(ae, t[i][1])));
    _mm512_mask_storeu_ps(u + (i * 4 + 2) * ustride, m,
                          _mm512_mul_ps(half, _mm512_sub_ps(ae, t[i][1])));
    _mm512_mask_storeu_ps(u + (i * 4 + 3) * ustride, m, t[i][2]);
  }
}
#endif

/* U[xi][k][c] = (G g G^T)[xi] for filters k in [k0, k1), with
 * G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]. The 16 values of a filter go
 * to 16 places K*Cg floats apart, so a chunk of channels is transformed into a
 * local buffer first and then copied out as 16 contiguous runs; writing each
 * value in place would hit the same cache sets 16 times in a row. */
#define FILTER_CHUNK 64
static void filter_task(void *arg, int64_t k0, int64_t k1, int thread) {
  (void)thread;
  const wino_job *j = arg;
  int64_t K = j->g->K, Cg = j->g->Cg;
  const int64_t *st = j->g->w.strides; /* any filter layout */
  float buf[16][FILTER_CHUNK];
#if defined(__x86_64__) || defined(__i386__)
  if (j->w->filter_avx512) {
    for (int64_t k = k0; k < k1; k++)
      for (int64_t c0 = 0; c0 < Cg; c0 += 16)
        filters16__avx512(j->wt + k * st[0] + c0 * st[1], st[1], st, Cg - c0, j->u + k * Cg + c0,
                         K * Cg);
    return;
  }
#endif
  for (int64_t k = k0; k < k1; k++)
    for (int64_t c0 = 0; c0 < Cg; c0 += FILTER_CHUNK) {
      int64_t nc = Cg - c0 < FILTER_CHUNK ? Cg - c0 : FILTER_CHUNK;
      for (int64_t ci = 0; ci < nc; ci++) {
        const float *f = j->wt + k * st[0] + (c0 + ci) * st[1];
        float t[4][3];
        for (int s = 0; s < 3; s++) {
          float a = f[s * st[3]], b = f[st[2] + s * st[3]], e = f[2 * st[2] + s * st[3]];
          t[0][s] = a;
          t[1][s] = 0.5f * (a + b + e);
          t[2][s] = 0.5f * (a - b + e);
          t[3][s] = e;
        }
        for (int i = 0; i < 4; i++) {
          float a = t[i][0], b = t[i][1], e = t[i][2];
          buf[i * 4 + 0][ci] = a;
          buf[i * 4 + 1][ci] = 0.5f * (a + b + e);
          buf[i * 4 + 2][ci] = 0.5f * (a - b + e);
          buf[i * 4 + 3][ci] = e;
        }
      }
      for (int xi = 0; xi < 16; xi++)
        memcpy(j->u + (xi * K + k) * Cg + c0, buf[xi], (size_t)nc * sizeof(float));
    }
}

/* V[xi][c][t] = (B^T d B)[xi] with B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1],
 * for the 4x4 patch d of channel c whose top-left input pixel is (h0, w0). */
static inline void input_tile__base(const float *xc, const adnn_plugin_conv2d *g, int64_t h0,
                                    int64_t w0, float *v, int64_t stride) {
  float d[4][4];
  if (h0 >= 0 && w0 >= 0 && h0 + 4 <= g->H && w0 + 4 <= g->W) {
    for (int i = 0; i < 4; i++) {
      const float *row = xc + (h0 + i) * g->W + w0;
      d[i][0] = row[0];
      d[i][1] = row[1];
      d[i][2] = row[2];
      d[i][3] = row[3];
    }
  } else {
    for (int i = 0; i < 4; i++) {
      int64_t h = h0 + i;
      int in_h = h >= 0 && h < g->H;
      for (int jj = 0; jj < 4; jj++) {
        int64_t ww = w0 + jj;
        d[i][jj] = in_h && ww >= 0 && ww < g->W ? xc[h * g->W + ww] : 0.0f;
      }
    }
  }
  float t[4][4];
  for (int jj = 0; jj < 4; jj++) {
    t[0][jj] = d[0][jj] - d[2][jj];
    t[1][jj] = d[1][jj] + d[2][jj];
    t[2][jj] = d[2][jj] - d[1][jj];
    t[3][jj] = d[1][jj] - d[3][jj];
  }
  for (int i = 0; i < 4; i++) {
    v[(i * 4 + 0) * stride] = t[i][0] - t[i][2];
    v[(i * 4 + 1) * stride] = t[i][1] + t[i][2];
    v[(i * 4 + 2) * stride] = t[i][2] - t[i][1];
    v[(i * 4 + 3) * stride] = t[i][1] - t[i][3];
  }
}

#if defined(__x86_64__) || defined(__i386__)

/* Up to sixteen horizontally adjacent tiles of one channel at once, one tile
 * per lane, read from `rows`: four staged input rows (stride rs) that already
 * hold the zero padding, so no bounds checks remain. The patches' columns are
 * the even and odd elements of 34 consecutive floats of each row, split with
 * two-source permutes. Lanes past `n` tiles are not stored. */
__attribute__((target("avx512f"))) static void input_tiles16__avx512(const float *rows,
                                                                     int64_t rs, int64_t n,
                                                                     float *v, int64_t stride) {
  const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i od = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  __mmask16 m = n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
  __m512 d[4][4];
  for (int i = 0; i < 4; i++) {
    const float *row = rows + i * rs;
    __m512 a = _mm512_loadu_ps(row), b = _mm512_loadu_ps(row + 16);
    __m512 a2 = _mm512_loadu_ps(row + 2), b2 = _mm512_loadu_ps(row + 18);
    d[i][0] = _mm512_permutex2var_ps(a, ev, b);
    d[i][1] = _mm512_permutex2var_ps(a, od, b);
    d[i][2] = _mm512_permutex2var_ps(a2, ev, b2);
    d[i][3] = _mm512_permutex2var_ps(a2, od, b2);
  }
  __m512 t[4][4];
  for (int jj = 0; jj < 4; jj++) {
    t[0][jj] = _mm512_sub_ps(d[0][jj], d[2][jj]);
    t[1][jj] = _mm512_add_ps(d[1][jj], d[2][jj]);
    t[2][jj] = _mm512_sub_ps(d[2][jj], d[1][jj]);
    t[3][jj] = _mm512_sub_ps(d[1][jj], d[3][jj]);
  }
  for (int i = 0; i < 4; i++) {
    _mm512_mask_storeu_ps(v + (i * 4 + 0) * stride, m, _mm512_sub_ps(t[i][0], t[i][2]));
    _mm512_mask_storeu_ps(v + (i * 4 + 1) * stride, m, _mm512_add_ps(t[i][1], t[i][2]));
    _mm512_mask_storeu_ps(v + (i * 4 + 2) * stride, m, _mm512_sub_ps(t[i][2], t[i][1]));
    _mm512_mask_storeu_ps(v + (i * 4 + 3) * stride, m, _mm512_sub_ps(t[i][1], t[i][3]));
  }
}

/* The output transform of up to sixteen adjacent tiles (one per lane, `n`
 * tiles): the lanes are interleaved back into (even, odd) column pairs and
 * written as `ncols` outputs of row y0 and, when `two_rows`, of the row below. */
__attribute__((target("avx512f"))) static void output_tiles16__avx512(const float *mt,
                                                                      int64_t mstride, int64_t n,
                                                                      float *y0, int64_t Q,
                                                                      int64_t ncols, int two_rows) {
  const __m512i il = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i ih =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  __mmask16 m = n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
  __mmask16 m_lo = ncols >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << ncols) - 1);
  __mmask16 m_hi = ncols >= 32  ? (__mmask16)0xFFFF
                   : ncols > 16 ? (__mmask16)((1u << (ncols - 16)) - 1)
                                : (__mmask16)0;
  __m512 s0[4], s1[4];
  for (int jj = 0; jj < 4; jj++) {
    __m512 m0 = _mm512_maskz_loadu_ps(m, mt + (0 + jj) * mstride);
    __m512 m1 = _mm512_maskz_loadu_ps(m, mt + (4 + jj) * mstride);
    __m512 m2 = _mm512_maskz_loadu_ps(m, mt + (8 + jj) * mstride);
    __m512 m3 = _mm512_maskz_loadu_ps(m, mt + (12 + jj) * mstride);
    s0[jj] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
    s1[jj] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
  }
  __m512 o00 = _mm512_add_ps(_mm512_add_ps(s0[0], s0[1]), s0[2]);
  __m512 o01 = _mm512_sub_ps(_mm512_sub_ps(s0[1], s0[2]), s0[3]);
  _mm512_mask_storeu_ps(y0, m_lo, _mm512_permutex2var_ps(o00, il, o01));
  if (m_hi) _mm512_mask_storeu_ps(y0 + 16, m_hi, _mm512_permutex2var_ps(o00, ih, o01));
  if (two_rows) {
    __m512 o10 = _mm512_add_ps(_mm512_add_ps(s1[0], s1[1]), s1[2]);
    __m512 o11 = _mm512_sub_ps(_mm512_sub_ps(s1[1], s1[2]), s1[3]);
    _mm512_mask_storeu_ps(y0 + Q, m_lo, _mm512_permutex2var_ps(o10, il, o11));
    if (m_hi) _mm512_mask_storeu_ps(y0 + Q + 16, m_hi, _mm512_permutex2var_ps(o10, ih, o11));
  }
}
#endif

static void block_task(void *arg, int64_t b0, int64_t b1, int thread) {
  const wino_job *j = arg;
  const wino_state *w = j->w;
  const adnn_plugin_conv2d *g = j->g;
  int epi = w->epilogue;
  float *v = j->vm + thread * (w->v_floats + w->m_floats + w->stage_floats);
  float *m = v + w->v_floats, *stage = m + w->m_floats;
  const adnn_cpu_gemm_pack pack = adnn_cpu_gemm_pack_slice(j->packs, w->pack_bytes, thread);
  for (int64_t b = b0; b < b1; b++) {
    int64_t tw0 = b % w->nblk_w * w->blk_w, th0 = b / w->nblk_w % w->nblk_h * w->blk_h;
    int64_t ng = b / (w->nblk_w * w->nblk_h), gr = ng % g->groups, n = ng / g->groups;
    int64_t cols = w->tiles_w - tw0 < w->blk_w ? w->tiles_w - tw0 : w->blk_w;
    int64_t rows = w->tiles_h - th0 < w->blk_h ? w->tiles_h - th0 : w->blk_h;
    int64_t nt = rows * cols;

    /* Input transform: V[xi][c][t], t = row-major tile index in the block. */
    const float *xg = j->x + (n * g->C + gr * g->Cg) * g->H * g->W;
    for (int64_t c = 0; c < g->Cg; c++) {
      const float *xc = xg + c * g->H * g->W;
      for (int64_t r = 0; r < rows; r++) {
        int64_t h0 = 2 * (th0 + r) - g->pad_top;
        float *vt = v + c * nt + r * cols;
#if defined(__x86_64__) || defined(__i386__)
        if (w->avx512) {
          /* Stage the four input rows of this tile row with their padding,
           * then transform sixteen tiles per step without bounds checks. */
          int64_t wf = 2 * tw0 - g->pad_left, len = 2 * cols + 2;
          int64_t lo = wf < 0 ? -wf : 0, hi = g->W - wf < len ? g->W - wf : len;
          for (int i = 0; i < 4; i++) {
            float *st = stage + i * w->stage_stride;
            int64_t h = h0 + i;
            if (h < 0 || h >= g->H || hi <= lo) {
              memset(st, 0, (size_t)w->stage_stride * sizeof(float));
              continue;
            }
            if (lo) memset(st, 0, (size_t)lo * sizeof(float));
            memcpy(st + lo, xc + h * g->W + wf + lo, (size_t)(hi - lo) * sizeof(float));
            memset(st + hi, 0, (size_t)(w->stage_stride - hi) * sizeof(float));
          }
          for (int64_t q = 0; q < cols; q += 16)
            input_tiles16__avx512(stage + 2 * q, w->stage_stride, cols - q, vt + q, g->Cg * nt);
          continue;
        }
#endif
        for (int64_t q = 0; q < cols; q++)
          input_tile__base(xc, g, h0, 2 * (tw0 + q) - g->pad_left, vt + q, g->Cg * nt);
      }
    }

    /* The 16 GEMMs: M[xi] (Kg x nt) = U[xi] (Kg x Cg) * V[xi] (Cg x nt). */
    for (int xi = 0; xi < 16; xi++)
      adnn_cpu_sgemm_ws(w->isa, 0, 0, g->Kg, nt, g->Cg, 1.0f,
                        j->u + (xi * g->K + gr * g->Kg) * g->Cg, g->Cg, v + xi * g->Cg * nt, nt,
                        0.0f, m + xi * g->Kg * nt, nt, NULL, &pack);

    /* Output transform with A^T = [1 1 1 0; 0 1 -1 -1], then the epilogue on
     * the (up to) two output rows of each tile row while they are in cache. */
    int64_t mstride = g->Kg * nt;
    int64_t q0 = 2 * tw0, q1 = 2 * (tw0 + cols) < g->Q ? 2 * (tw0 + cols) : g->Q;
    for (int64_t k = 0; k < g->Kg; k++) {
      int64_t kk = gr * g->Kg + k;
      float *yk = j->y + (n * g->K + kk) * g->P * g->Q;
      float bias = j->bias ? j->bias[kk] : 0.0f;
      for (int64_t r = 0; r < rows; r++) {
        int64_t p = 2 * (th0 + r);
        int two_rows = p + 1 < g->P;
        for (int64_t q = 0; q < cols; q++) {
          const float *mt = m + k * nt + r * cols + q;
#if defined(__x86_64__) || defined(__i386__)
          if (w->avx512) {
            int64_t qq = 2 * (tw0 + q), n16 = cols - q < 16 ? cols - q : 16;
            int64_t ncols = g->Q - qq < 2 * n16 ? g->Q - qq : 2 * n16;
            output_tiles16__avx512(mt, mstride, n16, yk + p * g->Q + qq, g->Q, ncols, two_rows);
            q += 15;
            continue;
          }
#endif
          float s[2][4];
          for (int jj = 0; jj < 4; jj++) {
            float m0 = mt[(0 + jj) * mstride], m1 = mt[(4 + jj) * mstride];
            float m2 = mt[(8 + jj) * mstride], m3 = mt[(12 + jj) * mstride];
            s[0][jj] = m0 + m1 + m2;
            s[1][jj] = m1 - m2 - m3;
          }
          int64_t qq = 2 * (tw0 + q);
          float *y0 = yk + p * g->Q + qq;
          int two_cols = qq + 1 < g->Q;
          y0[0] = s[0][0] + s[0][1] + s[0][2];
          if (two_cols) y0[1] = s[0][1] - s[0][2] - s[0][3];
          if (two_rows) {
            y0[g->Q] = s[1][0] + s[1][1] + s[1][2];
            if (two_cols) y0[g->Q + 1] = s[1][1] - s[1][2] - s[1][3];
          }
        }
        if (epi) {
          adnn_cpu_epilogue_f32(&w->act, yk + p * g->Q + q0, (size_t)(q1 - q0), bias);
          if (two_rows)
            adnn_cpu_epilogue_f32(&w->act, yk + (p + 1) * g->Q + q0, (size_t)(q1 - q0), bias);
        }
      }
    }
  }
}

/* ---- NHWC ---------------------------------------------------------------- */

/* In NHWC the channels of a pixel are contiguous, so the transforms run over
 * channels (16 per AVX-512 vector) one tile at a time, and the transform-domain
 * buffers are laid out [xi][tile][channel]: V[xi] is [nt, Cg], M[xi] is
 * [nt, Kg] = V[xi] * U[xi]^T, and a row of M is one tile's output channels,
 * which the output transform writes as contiguous runs of y. */

/* The input transform of one tile for channels [c0, c0 + n) (n <= 16 for the
 * vector path); `in[i][j]` points at pixel (i, j) of the patch, or is NULL for
 * padding. */
static void nhwc_input__base(const float *in[4][4], int64_t c0, int64_t n, float *v,
                             int64_t stride) {
  for (int64_t c = c0; c < c0 + n; c++) {
    float d[4][4], t[4][4];
    for (int i = 0; i < 4; i++)
      for (int jj = 0; jj < 4; jj++) d[i][jj] = in[i][jj] ? in[i][jj][c] : 0.0f;
    for (int jj = 0; jj < 4; jj++) {
      t[0][jj] = d[0][jj] - d[2][jj];
      t[1][jj] = d[1][jj] + d[2][jj];
      t[2][jj] = d[2][jj] - d[1][jj];
      t[3][jj] = d[1][jj] - d[3][jj];
    }
    for (int i = 0; i < 4; i++) {
      v[(i * 4 + 0) * stride + c] = t[i][0] - t[i][2];
      v[(i * 4 + 1) * stride + c] = t[i][1] + t[i][2];
      v[(i * 4 + 2) * stride + c] = t[i][2] - t[i][1];
      v[(i * 4 + 3) * stride + c] = t[i][1] - t[i][3];
    }
  }
}

/* The output transform of one tile for output channels [k0, k0 + n);
 * out[a][b] is output pixel (a, b) of the tile, or NULL outside y. */
static void nhwc_output__base(const float *m, int64_t stride, int64_t k0, int64_t n,
                              float *out[2][2]) {
  for (int64_t k = k0; k < k0 + n; k++) {
    float s[2][4];
    for (int jj = 0; jj < 4; jj++) {
      float m0 = m[jj * stride + k], m1 = m[(4 + jj) * stride + k];
      float m2 = m[(8 + jj) * stride + k], m3 = m[(12 + jj) * stride + k];
      s[0][jj] = m0 + m1 + m2;
      s[1][jj] = m1 - m2 - m3;
    }
    for (int a = 0; a < 2; a++) {
      if (out[a][0]) out[a][0][k] = s[a][0] + s[a][1] + s[a][2];
      if (out[a][1]) out[a][1][k] = s[a][1] - s[a][2] - s[a][3];
    }
  }
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx512f"))) static void nhwc_input__avx512(const float *in[4][4],
                                                                  int64_t c0, int64_t n, float *v,
                                                                  int64_t stride) {
  __mmask16 m = n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
  __m512 d[4][4], t[4][4];
  for (int i = 0; i < 4; i++)
    for (int jj = 0; jj < 4; jj++)
      d[i][jj] = in[i][jj] ? _mm512_maskz_loadu_ps(m, in[i][jj] + c0) : _mm512_setzero_ps();
  for (int jj = 0; jj < 4; jj++) {
    t[0][jj] = _mm512_sub_ps(d[0][jj], d[2][jj]);
    t[1][jj] = _mm512_add_ps(d[1][jj], d[2][jj]);
    t[2][jj] = _mm512_sub_ps(d[2][jj], d[1][jj]);
    t[3][jj] = _mm512_sub_ps(d[1][jj], d[3][jj]);
  }
  for (int i = 0; i < 4; i++) {
    _mm512_mask_storeu_ps(v + (i * 4 + 0) * stride + c0, m, _mm512_sub_ps(t[i][0], t[i][2]));
    _mm512_mask_storeu_ps(v + (i * 4 + 1) * stride + c0, m, _mm512_add_ps(t[i][1], t[i][2]));
    _mm512_mask_storeu_ps(v + (i * 4 + 2) * stride + c0, m, _mm512_sub_ps(t[i][2], t[i][1]));
    _mm512_mask_storeu_ps(v + (i * 4 + 3) * stride + c0, m, _mm512_sub_ps(t[i][1], t[i][3]));
  }
}

__attribute__((target("avx512f"))) static void nhwc_output__avx512(const float *mt,
                                                                   int64_t stride, int64_t k0,
                                                                   int64_t n, float *out[2][2]) {
  __mmask16 m = n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
  __m512 s[2][4];
  for (int jj = 0; jj < 4; jj++) {
    __m512 m0 = _mm512_maskz_loadu_ps(m, mt + jj * stride + k0);
    __m512 m1 = _mm512_maskz_loadu_ps(m, mt + (4 + jj) * stride + k0);
    __m512 m2 = _mm512_maskz_loadu_ps(m, mt + (8 + jj) * stride + k0);
    __m512 m3 = _mm512_maskz_loadu_ps(m, mt + (12 + jj) * stride + k0);
    s[0][jj] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
    s[1][jj] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
  }
  for (int a = 0; a < 2; a++) {
    if (out[a][0])
      _mm512_mask_storeu_ps(out[a][0] + k0, m,
                            _mm512_add_ps(_mm512_add_ps(s[a][0], s[a][1]), s[a][2]));
    if (out[a][1])
      _mm512_mask_storeu_ps(out[a][1] + k0, m,
                            _mm512_sub_ps(_mm512_sub_ps(s[a][1], s[a][2]), s[a][3]));
  }
}
#endif

/* NHWC with AVX-512: UT[xi][g][c][k] computed directly, sixteen filters k per
 * step, for the (group, input channel) pairs [i0, i1). */
#if defined(__x86_64__) || defined(__i386__)
static void filter_task_nhwc(void *arg, int64_t i0, int64_t i1, int thread) {
  (void)thread;
  const wino_job *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  const int64_t *st = g->w.strides;
  for (int64_t i = i0; i < i1; i++) {
    int64_t gr = i / g->Cg, c = i % g->Cg;
    for (int64_t k0 = 0; k0 < g->Kg; k0 += 16)
      filters16__avx512(j->wt + (gr * g->Kg + k0) * st[0] + c * st[1], st[0], st, g->Kg - k0,
                       j->ut + i * g->Kg + k0, g->K * g->Cg);
  }
}
#endif

/* UT[xi][g] = U[xi][g's Kg rows]^T, for (xi, g) pairs [i0, i1). */
static void transpose_u_task(void *arg, int64_t i0, int64_t i1, int thread) {
  (void)thread;
  const wino_job *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  for (int64_t i = i0; i < i1; i++) {
    int64_t xi = i / g->groups, gr = i % g->groups;
    const float *src = j->u + (xi * g->K + gr * g->Kg) * g->Cg;
    float *dst = j->ut + i * g->Cg * g->Kg;
    for (int64_t k = 0; k < g->Kg; k++)
      for (int64_t c = 0; c < g->Cg; c++) dst[c * g->Kg + k] = src[k * g->Cg + c];
  }
}

static void block_task_nhwc(void *arg, int64_t b0, int64_t b1, int thread) {
  const wino_job *j = arg;
  const wino_state *w = j->w;
  const adnn_plugin_conv2d *g = j->g;
  int epi = w->epilogue;
  float *v = j->vm + thread * (w->v_floats + w->m_floats + w->stage_floats);
  float *m = v + w->v_floats;
  const adnn_cpu_gemm_pack pack = adnn_cpu_gemm_pack_slice(j->packs, w->pack_bytes, thread);
  for (int64_t b = b0; b < b1; b++) {
    int64_t tw0 = b % w->nblk_w * w->blk_w, th0 = b / w->nblk_w % w->nblk_h * w->blk_h;
    int64_t ng = b / (w->nblk_w * w->nblk_h), gr = ng % g->groups, n = ng / g->groups;
    int64_t cols = w->tiles_w - tw0 < w->blk_w ? w->tiles_w - tw0 : w->blk_w;
    int64_t rows = w->tiles_h - th0 < w->blk_h ? w->tiles_h - th0 : w->blk_h;
    int64_t nt = rows * cols, vstride = nt * g->Cg, mstride = nt * g->Kg;
    const float *xn = j->x + n * g->H * g->W * g->C + gr * g->Cg;
    float *yn = j->y + n * g->P * g->Q * g->K + gr * g->Kg;

    /* Input transform: V[xi][t][c]. */
    for (int64_t t = 0; t < nt; t++) {
      int64_t h0 = 2 * (th0 + t / cols) - g->pad_top, w0 = 2 * (tw0 + t % cols) - g->pad_left;
      const float *in[4][4];
      for (int i = 0; i < 4; i++)
        for (int jj = 0; jj < 4; jj++) {
          int64_t h = h0 + i, ww = w0 + jj;
          in[i][jj] =
              h >= 0 && h < g->H && ww >= 0 && ww < g->W ? xn + (h * g->W + ww) * g->C : NULL;
        }
      float *vt = v + t * g->Cg;
#if defined(__x86_64__) || defined(__i386__)
      if (w->avx512) {
        for (int64_t c0 = 0; c0 < g->Cg; c0 += 16)
          nhwc_input__avx512(in, c0, g->Cg - c0 < 16 ? g->Cg - c0 : 16, vt, vstride);
        continue;
      }
#endif
      nhwc_input__base(in, 0, g->Cg, vt, vstride);
    }

    /* M[xi] (nt x Kg) = V[xi] (nt x Cg) * U[xi]^T, with U[xi]^T stored as is
     * ([Cg, Kg]): the non-transposed case, whose B panels pack with
     * contiguous vector copies (OpenBLAS, used here before, also had fast
     * small-matrix kernels for it and not for the transposed one). */
    for (int xi = 0; xi < 16; xi++)
      adnn_cpu_sgemm_ws(w->isa, 0, 0, nt, g->Kg, g->Cg, 1.0f,
                        v + xi * vstride, g->Cg, j->ut + (xi * g->groups + gr) * g->Cg * g->Kg,
                        g->Kg, 0.0f, m + xi * mstride, g->Kg, NULL, &pack);

    /* Output transform, then the epilogue on each output pixel's channels. */
    for (int64_t t = 0; t < nt; t++) {
      int64_t p = 2 * (th0 + t / cols), q = 2 * (tw0 + t % cols);
      float *out[2][2];
      for (int a = 0; a < 2; a++)
        for (int bb = 0; bb < 2; bb++)
          out[a][bb] = p + a < g->P && q + bb < g->Q ? yn + ((p + a) * g->Q + q + bb) * g->K : NULL;
      const float *mt = m + t * g->Kg;
#if defined(__x86_64__) || defined(__i386__)
      if (w->avx512) {
        for (int64_t k0 = 0; k0 < g->Kg; k0 += 16)
          nhwc_output__avx512(mt, mstride, k0, g->Kg - k0 < 16 ? g->Kg - k0 : 16, out);
      } else
#endif
        nhwc_output__base(mt, mstride, 0, g->Kg, out);
      if (epi)
        for (int a = 0; a < 2; a++)
          for (int bb = 0; bb < 2; bb++) {
            if (!out[a][bb]) continue;
            if (j->bias)
              adnn_cpu_epilogue_vec_f32(&w->act, out[a][bb], (size_t)g->Kg,
                                        j->bias + gr * g->Kg);
            else
              adnn_cpu_epilogue_f32(&w->act, out[a][bb], (size_t)g->Kg, 0.0f);
          }
    }
  }
}

/* Inputs {x, w} or {x, w, bias}. */
static void wino_run(const void *problem, const void *state, const void *const *inputs,
                     void *const *outputs, void *workspace) {
  const adnn_plugin_conv2d *g = problem;
  const wino_state *w = state;
  float *ws = workspace;
  wino_job j = {g,  w,  inputs[0], inputs[1], g->has_bias ? inputs[2] : NULL, outputs[0],
                ws, ws + w->u_floats + w->ut_floats, ws + w->u_floats,
                (char *)workspace + w->pack_off};
  if (w->ut_floats) {
#if defined(__x86_64__) || defined(__i386__)
    if (w->filter_nhwc_avx512) {
      adnn_cpu_parallel_for(g->groups * g->Cg, 4, filter_task_nhwc, &j);
    } else
#endif
    {
      adnn_cpu_parallel_for(g->K, 4, filter_task, &j);
      adnn_cpu_parallel_for(16 * g->groups, 1, transpose_u_task, &j);
    }
  } else {
    adnn_cpu_parallel_for(g->K, 4, filter_task, &j);
  }
  adnn_cpu_parallel_for(g->N * g->groups * w->nblk_h * w->nblk_w, 1,
                        w->nhwc ? block_task_nhwc : block_task, &j);
}

const adnn_cpu_impl adnn_cpu_conv2d_winograd_f2x3 = {
    .name = "winograd_f2x3",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32),
    .supports = wino_supports,
    .slow_for = adnn_cpu_conv2d_generic_slow,
    .preferred = wino_preferred,
    .state_size = sizeof(wino_state),
    .reshape = wino_reshape,
    .run = wino_run,
};
