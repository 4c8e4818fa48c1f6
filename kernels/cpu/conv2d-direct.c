/*
 * conv2d as a direct convolution on a channel-vectorized layout ("direct"):
 * no im2col buffer for any filter size, stride or dilation.
 *
 * Layouts. The kernel reads the input pixel-major with its channels
 * contiguous (NHWC) and writes VL output channels per vector (VL = 16 with
 * AVX-512, 8 with AVX2, 4 with SSE2). NHWC x and y are used as they are: the
 * kernel reads x in place and stores into y (a masked store for a last
 * partial channel vector). An NCHW x is first transposed, inside run and into
 * the workspace, to an NHWC copy that carries the padding as zero pixels, so
 * that every tile of an NCHW problem is an interior tile; an NCHW y is
 * written one output row at a time into a per-thread [2][Q][VL] buffer and
 * transposed to NCHW right away, while the row is in L1.
 *
 * Filters are reordered into [G][Kg/VL][R][S][Cg][VL] blocks (the last block
 * zero-filled past Kg): the taps of one block of VL filters are one
 * contiguous stream. That is the packed form of pack_weights; without
 * prepacking, run reorders w into its workspace at each execution.
 *
 * The register tile is QT output pixels of one output row times two filter
 * blocks (2 * VL output channels): 2 * QT accumulators, two filter vectors
 * and one broadcast input value. For every tap (r, s, c) the tile loads the
 * two filter vectors once and broadcasts the QT input values, 2 * QT FMAs
 * for QT + 2 loads. QT is up to 6 with AVX2 and SSE2 (16 vector registers:
 * 12 accumulators + 3) and up to 12 with AVX-512 (32 registers). An output
 * row's columns are split into tiles of nearly equal width (28 = 6+6+6+5+5),
 * each width a compiled copy, so no column takes a one-pixel path. With
 * dilation 1 and one group the taps (s, c) of a filter row are contiguous
 * both in the input row and in the filter block, and the kernel runs them as
 * one loop of S * C steps (C = 3 for a network's first layer would
 * otherwise leave a loop of 3).
 *
 * Padding: a filter row that falls outside the image is skipped for the
 * whole tile (the tile is one output row). Columns whose taps all lie inside
 * the image (the interior) take the tiles; the few border columns of an NHWC
 * problem with padding take the one-pixel copy with the filter columns
 * clipped to the image. The bias and the activation (simd.h's vact, chosen
 * once per tile) are applied to the accumulators before the store.
 *
 * Threads: the pool splits (image, group, block of output rows, pair of
 * filter blocks), the filter pair innermost so that consecutive tasks of one
 * thread share their input rows; a task's rows reuse its filter pair's
 * weights from L2. Groups > 1 run one group's channels at a time (depthwise
 * problems are refused: depthwise_direct is the method for them).
 *
 * The vector code (ADNN_SIMD_VECTOR_PART) is written once against simd.h and
 * instantiated per instruction set; the AVX-512 copy compiles everywhere but
 * has run only where such a CPU was available (see doc/cpu.md).
 */
#ifdef ADNN_SIMD_VECTOR_PART

#if ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX512
#define DC_QMAX 12
#else
#define DC_QMAX 6
#endif

/* s in every lane, as one broadcast from memory (simd.h's vset adds s to a
 * zero vector, an extra addition per tap, since -0 + 0 must be +0). */
SIMD_INLINE VF NAME(dc_bcast)(const float *s) {
#if ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX512
  return (VF)_mm512_set1_ps(*s);
#elif ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX2
  return (VF)_mm256_set1_ps(*s);
#elif defined(__SSE2__)
  return (VF)_mm_set1_ps(*s);
#else
  VF v;
  for (int i = 0; i < VL; i++) v[i] = *s;
  return v;
#endif
}

/* Stores QT x KB accumulators (pixel-major, KB per pixel) through the bias
 * and the activation. The kind is dispatched once per tile; ACT is a
 * constant inside each case so vact folds to the kind's code. */
SIMD_INLINE void NAME(dc_store_k)(const int act, int QT, int KB, const VF *acc, const VF *bias,
                                  float *y, int64_t yps, int64_t ykbs, int nvalid1,
                                  const NAME(act_params) *pa) {
  for (int i = 0; i < QT; i++)
    for (int k = 0; k < KB; k++) {
      VF v = NAME(vact)(act, acc[i * 2 + k] + bias[k], pa);
      float *o = y + i * yps + k * ykbs;
      int nv = k == KB - 1 ? nvalid1 : VL;
      if (nv == VL)
        NAME(vstore)(o, v);
      else
        NAME(vstore_n)(o, v, (size_t)nv);
    }
}

static void NAME(dc_store)(const adnn_activation_kind kind, int QT, int KB, const VF *acc,
                           const VF *bias, float *y, int64_t yps, int64_t ykbs, int nvalid1,
                           const NAME(act_params) *pa) {
  ADNN_ACT_SWITCH(kind, NAME(dc_store_k)(ACT, QT, KB, acc, bias, y, yps, ykbs, nvalid1, pa));
}

/* The tap loop of one register tile: QT pixels (input pixel i at
 * x + i * xpix) by KB filter blocks (block k at w + k * wkb), over nr filter
 * rows (input rows xrs apart, filter rows wrs apart), each made of nch runs
 * of clen taps (runs xcs apart in the input and wcs apart in the filters; a
 * run's taps are consecutive input floats and consecutive filter vectors).
 * QT and KB are constants at every call. */
SIMD_INLINE void NAME(dc_tile)(const int QT, const int KB, const float *x, int64_t xpix,
                               const float *w, int64_t wkb, int64_t nr, int64_t xrs, int64_t wrs,
                               int64_t nch, int64_t clen, int64_t xcs, int64_t wcs, VF *out) {
  VF acc[2 * DC_QMAX];
#pragma GCC unroll 24
  for (int i = 0; i < 2 * QT; i++) acc[i] = (VF){0};
  for (int64_t r = 0; r < nr; r++) {
    for (int64_t ch = 0; ch < nch; ch++) {
      const float *xc = x + r * xrs + ch * xcs;
      const float *wc = w + r * wrs + ch * wcs;
      for (int64_t j = 0; j < clen; j++) {
        VF w0 = NAME(vload)(wc + j * VL);
        VF w1 = KB > 1 ? NAME(vload)(wc + wkb + j * VL) : (VF){0};
#pragma GCC unroll 12
        for (int i = 0; i < QT; i++) {
          VF b = NAME(dc_bcast)(xc + i * xpix + j);
          acc[2 * i] = b * w0 + acc[2 * i];
          if (KB > 1) acc[2 * i + 1] = b * w1 + acc[2 * i + 1];
        }
      }
    }
  }
#pragma GCC unroll 24
  for (int i = 0; i < 2 * QT; i++) out[i] = acc[i];
}

/* One tile of any width qt <= DC_QMAX: the width's compiled copy. */
static void NAME(dc_tile_any)(int qt, int kb, const float *x, int64_t xpix, const float *w,
                              int64_t wkb, int64_t nr, int64_t xrs, int64_t wrs, int64_t nch,
                              int64_t clen, int64_t xcs, int64_t wcs, VF *out) {
#define DC_ARGS x, xpix, w, wkb, nr, xrs, wrs, nch, clen, xcs, wcs, out
#define DC_CASE(n)                                \
  case n:                                         \
    if (kb > 1)                                   \
      NAME(dc_tile)(n, 2, DC_ARGS);               \
    else                                          \
      NAME(dc_tile)(n, 1, DC_ARGS);               \
    break;
  switch (qt) {
    DC_CASE(1)
    DC_CASE(2)
    DC_CASE(3)
    DC_CASE(4)
    DC_CASE(5)
    DC_CASE(6)
#if DC_QMAX > 6
    DC_CASE(7)
    DC_CASE(8)
    DC_CASE(9)
    DC_CASE(10)
    DC_CASE(11)
    DC_CASE(12)
#endif
    default:
      break;
  }
#undef DC_CASE
#undef DC_ARGS
}

/* Output row p (of image/group base pointers in *a) for filter blocks
 * [kb0, kb1), into y (pixel q of block kb at y + q * yps + (kb - kb0) * ykbs
 * when the output is a row buffer, kb * ykbs otherwise: the caller passes
 * y for block kb0). */
static void NAME(dc_row)(const dc_row_args *a, const float *x, const float *w, const float *bias,
                         int64_t p, int64_t kb0, int64_t kb1, float *y, int64_t yps,
                         int64_t ykbs) {
  const NAME(act_params) pa = NAME(act_params_make)(&a->act);
  /* Filter rows inside the image: ih = p * sh - pt + r * dh in [0, H). */
  const int64_t ih0 = p * a->sh - a->pt;
  int64_t rlo = ih0 >= 0 ? 0 : (-ih0 + a->dh - 1) / a->dh;
  int64_t rhi = ih0 > a->H - 1 ? 0 : (a->H - 1 - ih0) / a->dh + 1;
  if (rhi > a->R) rhi = a->R;
  if (rhi < rlo) rhi = rlo;
  const int64_t nr = rhi - rlo;
  const int64_t xrs = a->dh * a->xrs, wrs = a->S * a->Cg * VL;
  const float *xr = nr > 0 ? x + (ih0 + rlo * a->dh) * a->xrs : x;
  const int64_t wro = rlo * wrs;
  const int64_t xpix = a->sw * a->xps;
  const int64_t wkb = a->R * wrs;
  VF acc[2 * DC_QMAX];
  for (int64_t kb = kb0; kb < kb1; kb += 2) {
    const int KB = kb + 1 < kb1 ? 2 : 1;
    const float *wb = w + kb * wkb + wro;
    float *yb = y + (kb - kb0) * ykbs;
    /* The channels of the tile's last block that exist (Kg % VL at the end). */
    const int64_t klast = a->Kg - (kb + KB - 1) * VL;
    const int nvalid = a->full_blocks || klast >= VL ? VL : (int)klast;
    VF bv[2] = {{0}, {0}};
    if (bias)
      for (int k = 0; k < KB; k++) {
        int64_t left = a->Kg - (kb + k) * VL;
        bv[k] = left >= VL ? NAME(vload)(bias + (kb + k) * VL)
                           : NAME(vload_n)(bias + (kb + k) * VL, (size_t)left, 0.0f);
      }
    /* Interior columns in tiles of nearly equal width. */
    const int64_t ni = a->qhi - a->qlo;
    if (ni > 0) {
      const int64_t ntiles = (ni + DC_QMAX - 1) / DC_QMAX;
      const int64_t base = ni / ntiles, extra = ni % ntiles;
      int64_t q = a->qlo;
      for (int64_t t = 0; t < ntiles; t++) {
        const int qt = (int)(base + (t < extra));
        const float *xq = xr + (q * a->sw - a->pl) * a->xps;
        if (nr == 0)
          for (int i = 0; i < 2 * qt; i++) acc[i] = (VF){0};
        else if (a->merged)
          NAME(dc_tile_any)(qt, KB, xq, xpix, wb, wkb, nr, xrs, wrs, 1, a->S * a->Cg, 0, 0, acc);
        else
          NAME(dc_tile_any)(qt, KB, xq, xpix, wb, wkb, nr, xrs, wrs, a->S, a->Cg,
                            a->dw * a->xps, a->Cg * VL, acc);
        NAME(dc_store)(a->act.kind, qt, KB, acc, bv, yb + q * yps, yps, ykbs, nvalid, &pa);
        q += qt;
      }
    }
    /* Border columns (padding inside an NHWC x): one pixel at a time, the
     * filter columns clipped to the image. */
    for (int64_t q = 0; q < a->Q; q++) {
      if (q == a->qlo && a->qhi > a->qlo) q = a->qhi;
      if (q >= a->Q) break;
      const int64_t iw0 = q * a->sw - a->pl;
      int64_t slo = iw0 >= 0 ? 0 : (-iw0 + a->dw - 1) / a->dw;
      int64_t shi = iw0 > a->W - 1 ? 0 : (a->W - 1 - iw0) / a->dw + 1;
      if (shi > a->S) shi = a->S;
      if (shi < slo) shi = slo;
      const int64_t ns = shi - slo;
      if (nr == 0 || ns == 0) {
        acc[0] = acc[1] = (VF){0};
      } else {
        const float *xq = xr + (iw0 + slo * a->dw) * a->xps;
        const float *wq = wb + slo * a->Cg * VL;
        if (a->merged && a->dw == 1)
          NAME(dc_tile_any)(1, KB, xq, xpix, wq, wkb, nr, xrs, wrs, 1, ns * a->Cg, 0, 0, acc);
        else
          NAME(dc_tile_any)(1, KB, xq, xpix, wq, wkb, nr, xrs, wrs, ns, a->Cg, a->dw * a->xps,
                            a->Cg * VL, acc);
      }
      NAME(dc_store)(a->act.kind, 1, KB, acc, bv, yb + q * yps, yps, ykbs, nvalid, &pa);
    }
  }
}

/* Filter blocks [b0, b1) of the G * ceil(Kg/VL) blocks of w (KCRS dims, any
 * strides) into the packed [G][Kg/VL][R][S][Cg][VL] form. Each filter k is
 * read in its own storage order (c, r, s for KCRS; r, s, c for KRSC), so the
 * reads stream and only the writes are strided, within one block's region
 * (R*S*Cg*VL floats, in L2): reading in the packed order instead touched a
 * new cache line and page for every float (40 ms of 47 on a 3x3x512x512
 * layer). */
static void NAME(dc_pack)(const adnn_plugin_conv2d *g, const float *w, float *dst, int64_t b0,
                          int64_t b1) {
  const int64_t *st = g->w.strides;
  const int64_t kblk = (g->Kg + VL - 1) / VL, R = g->R, S = g->S, Cg = g->Cg;
  const int krsc = st[1] == 1 && Cg > 1;
  for (int64_t b = b0; b < b1; b++) {
    const int64_t gr = b / kblk, kb = b % kblk;
    float *d = dst + b * R * S * Cg * VL;
    for (int v = 0; v < VL; v++) {
      const int64_t k = kb * VL + v;
      if (k >= g->Kg) {
        for (int64_t i = 0; i < R * S * Cg; i++) d[i * VL + v] = 0.0f;
        continue;
      }
      const float *wk = w + (gr * g->Kg + k) * st[0];
      if (krsc) {
        for (int64_t r = 0; r < R; r++)
          for (int64_t s = 0; s < S; s++)
            for (int64_t c = 0; c < Cg; c++)
              d[((r * S + s) * Cg + c) * VL + v] = wk[c + r * st[2] + s * st[3]];
      } else {
        for (int64_t c = 0; c < Cg; c++)
          for (int64_t r = 0; r < R; r++)
            for (int64_t s = 0; s < S; s++)
              d[((r * S + s) * Cg + c) * VL + v] = wk[c * st[1] + r * st[2] + s * st[3]];
      }
    }
  }
}

static const dc_fns NAME(adnn_f32_conv2d_direct) = {NAME(dc_row), NAME(dc_pack), VL};

#undef DC_QMAX

#else /* the dispatch part */

#include "config.h"

#include <string.h>

#include "kernels/cpu/conv2d.h"
#include "kernels/cpu/simd.h"

/* What the row kernel needs of the problem and the input buffer it reads
 * (the user's NHWC x, or the padded NHWC copy of an NCHW x). */
typedef struct dc_row_args {
  adnn_activation act;
  int64_t H, W;     /* the buffer's rows and columns */
  int64_t pt, pl;   /* the padding not in the buffer (0 for the padded copy) */
  int64_t xps, xrs; /* floats between the buffer's pixels and rows */
  int64_t R, S, Cg, Kg, Q, sh, sw, dh, dw;
  int64_t qlo, qhi; /* interior output columns */
  int merged;       /* dilation_w 1 and xps == Cg: the taps of a filter row are one run */
  int full_blocks;  /* the output is a row buffer: every block stored whole */
} dc_row_args;

/* One instruction set's kernels (the vector part above). */
typedef struct dc_fns {
  void (*row)(const dc_row_args *a, const float *x, const float *w, const float *bias, int64_t p,
              int64_t kb0, int64_t kb1, float *y, int64_t yps, int64_t ykbs);
  void (*pack)(const adnn_plugin_conv2d *g, const float *w, float *dst, int64_t b0, int64_t b1);
  int vl;
} dc_fns;

#define ADNN_SIMD_KERNEL "kernels/cpu/conv2d-direct.c"
#include "kernels/cpu/simd_instantiate.h"

static const dc_fns *const dc_by_isa[ADNN_CPU_ISA_COUNT] =
    ADNN_CPU_ISA_TABLE(adnn_f32_conv2d_direct);

/* Workspace pieces are 64-byte aligned. */
static size_t dc_align(size_t v) { return (v + 63) / 64 * 64; }

typedef struct dc_state {
  const dc_fns *fns;
  dc_row_args a;
  int nchw;            /* x and y NCHW (else both NHWC) */
  int64_t vl, kblk;    /* lanes; filter blocks per group */
  int64_t pairs;       /* pairs of filter blocks per group */
  int64_t rows, rblk;  /* output rows per task; row blocks */
  int64_t tasks, grain; /* pool tasks; the fewest a chunk takes */
  size_t w_bytes;      /* packed filters */
  size_t x_off, x_bytes; /* padded NHWC copy of an NCHW x */
  size_t y_off, y_slice; /* per-thread row buffers of an NCHW y */
} dc_state;

static int dc_supports(const void *problem, const adnn_cpu_env *env, char *why,
                       size_t why_size) {
  (void)env;
  const adnn_plugin_conv2d *g = problem;
  if (!adnn_cpu_conv2d_common_supports(g, why, why_size)) return 0;
  if (g->groups > 1 && g->Cg == 1)
    return adnn_cpu_conv2d_no(why, why_size, "depthwise: depthwise_direct runs it");
  /* The padded copy of an NCHW x and the packed filters must be sizable. */
  const double bytes = 4.0 * ((double)g->N * (double)(g->H + g->pad_top + g->pad_bottom) *
                                  (double)(g->W + g->pad_left + g->pad_right) * (double)g->C +
                              (double)g->K * 16.0 * (double)g->Cg * (double)(g->R * g->S));
  if (bytes > 1e15) return adnn_cpu_conv2d_no(why, why_size, "sizes too large for its workspace");
  return 1;
}

/* Taken by the plugin's own choice for filters larger than 1x1: on the
 * eight 3x3 and 7x7 layers of ResNet-50 it took less CPU time than
 * im2col_gemm on every one (doc/cpu.md), with or without stride; on 1x1
 * layers the GEMM methods win (a 1x1 filter has no im2col copy to save).
 * Winograd, listed before it, still takes the 3x3 stride-1 problems its own
 * gate prefers. */
static int dc_preferred(const void *problem, const adnn_cpu_env *env) {
  (void)env;
  const adnn_plugin_conv2d *g = problem;
  return g->R * g->S > 1;
}

static void dc_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                       size_t *workspace_bytes) {
  const adnn_plugin_conv2d *g = problem;
  dc_state *s = state;
  s->fns = dc_by_isa[env->isa];
  s->vl = s->fns->vl;
  s->nchw = adnn_cpu_conv2d_layout(g) == ADNN_CPU_CONV_NCHW;
  dc_row_args *a = &s->a;
  a->act = g->activation;
  a->R = g->R;
  a->S = g->S;
  a->Cg = g->Cg;
  a->Kg = g->Kg;
  a->Q = g->Q;
  a->sh = g->stride_h;
  a->sw = g->stride_w;
  a->dh = g->dilation_h;
  a->dw = g->dilation_w;
  if (s->nchw) {
    /* The padded copy: the padding is zero pixels of the buffer. */
    a->H = g->H + g->pad_top + g->pad_bottom;
    a->W = g->W + g->pad_left + g->pad_right;
    a->pt = a->pl = 0;
  } else {
    a->H = g->H;
    a->W = g->W;
    a->pt = g->pad_top;
    a->pl = g->pad_left;
  }
  a->xps = g->C;
  a->xrs = a->W * g->C;
  a->merged = g->dilation_w == 1 && g->groups == 1;
  a->full_blocks = s->nchw;
  /* Interior columns: q * sw - pl >= 0 and q * sw - pl + (S - 1) * dw <= W - 1. */
  int64_t qlo = a->pl == 0 ? 0 : (a->pl - 1) / a->sw + 1;
  int64_t last = a->W - 1 + a->pl - (a->S - 1) * a->dw;
  int64_t qhi = last < 0 ? 0 : last / a->sw + 1;
  if (qlo > a->Q) qlo = a->Q;
  if (qhi > a->Q) qhi = a->Q;
  if (qhi < qlo) qhi = qlo;
  a->qlo = qlo;
  a->qhi = qhi;

  s->kblk = (g->Kg + s->vl - 1) / s->vl;
  s->pairs = (s->kblk + 1) / 2;
  /* Rows per task: all of them while the other dims give every thread
   * several tasks (the filter pair's weights then serve every row from
   * L2), halved until they do. */
  const int64_t threads = env->threads > 0 ? env->threads : 1;
  const int64_t others = g->N * g->groups * s->pairs;
  s->rows = g->P;
  while (s->rows > 1 && others * ((g->P + s->rows - 1) / s->rows) < 8 * threads)
    s->rows = (s->rows + 1) / 2;
  s->rblk = (g->P + s->rows - 1) / s->rows;
  s->tasks = others * s->rblk;
  /* Chunks of at least 2^17 multiply-adds (some 30 us): smaller problems run
   * on the calling thread, since waking the pool costs more than they do
   * (and under load a woken worker may start late). */
  const int64_t fma = s->rows * g->Q * 2 * s->vl * g->R * g->S * g->Cg;
  s->grain = fma >= ((int64_t)1 << 17) ? 1 : ((int64_t)1 << 17) / (fma > 0 ? fma : 1);

  s->w_bytes = dc_align((size_t)(g->groups * s->kblk * s->vl * g->Cg * g->R * g->S) *
                        sizeof(float));
  size_t off = g->weights_prepacked ? 0 : s->w_bytes;
  s->x_off = off;
  s->x_bytes = s->nchw ? dc_align((size_t)(g->N * a->H * a->W * g->C) * sizeof(float)) : 0;
  off += s->x_bytes;
  s->y_off = off;
  s->y_slice = s->nchw ? dc_align((size_t)(2 * g->Q * s->vl) * sizeof(float)) : 0;
  off += (size_t)threads * s->y_slice;
  *workspace_bytes = off;
}

static size_t dc_packed_weights_size(const void *problem, const void *state) {
  (void)problem;
  return ((const dc_state *)state)->w_bytes;
}

typedef struct dc_job {
  const adnn_plugin_conv2d *g;
  const dc_state *s;
  const float *x, *w, *bias, *xsrc;
  float *y, *xbuf, *ybuf;
} dc_job;

typedef struct dc_pack_job {
  const adnn_plugin_conv2d *g;
  const dc_state *s;
  const float *w;
  float *packed;
} dc_pack_job;

static void dc_pack_task(void *arg, int64_t b0, int64_t b1, int thread) {
  (void)thread;
  const dc_pack_job *j = arg;
  j->s->fns->pack(j->g, j->w, j->packed, b0, b1);
}

/* The filter blocks spread over the pool (pack_weights, and run when the
 * weights are not prepacked). */
static void dc_pack_weights(const void *problem, const void *state, const void *w,
                            void *packed) {
  const adnn_plugin_conv2d *g = problem;
  const dc_state *s = state;
  dc_pack_job j = {g, s, w, packed};
  int64_t per = g->R * g->S * g->Cg * s->vl;
  adnn_cpu_parallel_for(g->groups * s->kblk, per >= 4096 ? 1 : 4096 / per, dc_pack_task, &j);
}

/* Rows [h0, h1) of the padded NHWC copy of an NCHW x (all images: row
 * index n * Hb + h), padding written as zeros at every run. */
static void dc_to_nhwc_task(void *arg, int64_t r0, int64_t r1, int thread) {
  (void)thread;
  const dc_job *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  const dc_row_args *a = &j->s->a;
  const int64_t C = g->C, HW = g->H * g->W;
  for (int64_t row = r0; row < r1; row++) {
    const int64_t n = row / a->H, hb = row % a->H, h = hb - g->pad_top;
    float *d = j->xbuf + row * a->xrs;
    if (h < 0 || h >= g->H) {
      memset(d, 0, (size_t)a->xrs * sizeof(float));
      continue;
    }
    memset(d, 0, (size_t)(g->pad_left * C) * sizeof(float));
    memset(d + (g->pad_left + g->W) * C, 0, (size_t)(g->pad_right * C) * sizeof(float));
    const float *src = j->xsrc + n * C * HW + h * g->W;
    d += g->pad_left * C;
    /* Blocks of 8 channels so that the strided reads of a block share
     * their cache lines across consecutive pixels. */
    for (int64_t c0 = 0; c0 < C; c0 += 8) {
      const int64_t c1 = c0 + 8 < C ? c0 + 8 : C;
      for (int64_t w = 0; w < g->W; w++)
        for (int64_t c = c0; c < c1; c++) d[w * C + c] = src[c * HW + w];
    }
  }
}

/* Task t: image, group, row block, filter pair (innermost). */
static void dc_task(void *arg, int64_t t0, int64_t t1, int thread) {
  const dc_job *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  const dc_state *s = j->s;
  const dc_row_args *a = &s->a;
  const int64_t vl = s->vl, PQ = g->P * g->Q;
  float *rowbuf = s->nchw ? (float *)((char *)j->ybuf + (size_t)thread * s->y_slice) : NULL;
  for (int64_t t = t0; t < t1; t++) {
    int64_t rest = t;
    const int64_t pair = rest % s->pairs;
    rest /= s->pairs;
    const int64_t rb = rest % s->rblk;
    rest /= s->rblk;
    const int64_t gr = rest % g->groups, n = rest / g->groups;
    const int64_t kb0 = pair * 2, kb1 = kb0 + 2 < s->kblk ? kb0 + 2 : s->kblk;
    const int64_t p0 = rb * s->rows, p1 = p0 + s->rows < g->P ? p0 + s->rows : g->P;
    const float *x = j->x + n * a->H * a->xrs + gr * g->Cg;
    const float *w = j->w + gr * s->kblk * g->R * g->S * g->Cg * vl;
    const float *bias = j->bias ? j->bias + gr * g->Kg : NULL;
    for (int64_t p = p0; p < p1; p++) {
      if (!s->nchw) {
        float *y = j->y + (n * PQ + p * g->Q) * g->K + gr * g->Kg + kb0 * vl;
        s->fns->row(a, x, w, bias, p, kb0, kb1, y, g->K, vl);
        continue;
      }
      s->fns->row(a, x, w, bias, p, kb0, kb1, rowbuf, vl, g->Q * vl);
      /* The row's channels to their NCHW planes. */
      const int64_t k0 = kb0 * vl, k1 = kb1 * vl < g->Kg ? kb1 * vl : g->Kg;
      for (int64_t k = k0; k < k1; k++) {
        const float *src = rowbuf + (k - k0) / vl * g->Q * vl + (k - k0) % vl;
        float *dst = j->y + (n * g->K + gr * g->Kg + k) * PQ + p * g->Q;
        for (int64_t q = 0; q < g->Q; q++) dst[q] = src[q * vl];
      }
    }
  }
}

/* Inputs {x, w} or {x, w, bias}; w is the packed form when the problem says
 * weights_prepacked. */
static void dc_run(const void *problem, const void *state, const void *const *inputs,
                   void *const *outputs, void *workspace) {
  const adnn_plugin_conv2d *g = problem;
  const dc_state *s = state;
  char *ws = workspace;
  dc_job j = {g, s, inputs[0], inputs[1], g->has_bias ? inputs[2] : NULL, inputs[0],
              outputs[0], NULL, NULL};
  if (!g->weights_prepacked) {
    dc_pack_weights(g, s, inputs[1], ws);
    j.w = (const float *)ws;
  }
  if (s->nchw) {
    j.xbuf = (float *)(ws + s->x_off);
    j.ybuf = (float *)(ws + s->y_off);
    const int64_t rows = g->N * s->a.H;
    const int64_t per = s->a.xrs;
    adnn_cpu_parallel_for(rows, per >= 4096 ? 1 : 4096 / per, dc_to_nhwc_task, &j);
    j.x = j.xbuf;
  }
  adnn_cpu_parallel_for(s->tasks, s->grain, dc_task, &j);
}

const adnn_cpu_impl adnn_cpu_conv2d_direct = {
    .name = "direct",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32),
    .supports = dc_supports,
    .slow_for = adnn_cpu_conv2d_generic_slow,
    .preferred = dc_preferred,
    .state_size = sizeof(dc_state),
    .reshape = dc_reshape,
    .run = dc_run,
    .packed_weights_size = dc_packed_weights_size,
    .pack_weights = dc_pack_weights,
};

#endif /* ADNN_SIMD_VECTOR_PART */
