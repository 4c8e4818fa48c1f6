/*
 * conv2d with integer inputs on the CPU ("int8"): an I8 or U8 x, an I8 w,
 * exact I32 accumulation, an I32 y or an I8/U8 y requantized per tensor or
 * per output channel (adnn/ops.h, doc/ops.md "conv2d dtypes").
 *
 * A convolution is, per image n and group g, the product of the columns of
 * x (one row per output pixel m = (p, q), one column per filter tap) with
 * the group's filters: C[m][kk] = sum_t A[m][t] B[t][kk], B[t][kk] =
 * w[g Kg + kk] at tap t. The products run on the low-precision GEMM blocks
 * of gemm_lowp.h (VNNI's vpdpbusd on AVX-512-VNNI CPUs, int16 pairs with
 * vpmaddwd on AVX2, a portable loop otherwise), tile by tile, and each
 * tile's epilogue writes its part of y while it is in cache:
 *
 *   A reads x_zero_point for a tap in the padding, so that
 *     sum_t (A - x_zero_point) B = C - x_zero_point * wsum[k]
 *   with wsum[k] the sum of filter k's weights: the exact accumulator of
 *   the definition (|C| <= 255 * 128 * 2^16 < 2^31 for the core's bound on
 *   the taps, so the I32 tile never wraps; the compensation and the bias
 *   are added in 64 bits). Then relu or the identity, then I32 saturation
 *   or adnn_cpu_lowp_requant, bit for bit the reference kernel.
 *
 * A: a 1x1 stride-1 unpadded filter over evenly spaced pixels reads x in
 * place (rows = pixels, k = channels); everything else gathers the columns
 * of a chunk of images into the workspace: when x's channels are
 * contiguous (NHWC), k contiguous per pixel in (r, s, c) order, one copy of
 * Cg bytes per tap (the packers' k-major case); otherwise (NCHW) one row of
 * P Q pixels per tap in (c, r, s) order, copied a run of an image row at a
 * time, which the tiles read as a transposed A (the VNNI block packs such
 * an A with byte unpacks, gemm_lowp.c's pack_u8_lanes12).
 * B: w repacked at run time (or once, by adnn_plan_pack_weights: the packed
 * form is exactly these bytes) as [g][t][kk] row-major in the same tap
 * order, followed by wsum.
 *
 * Any x, w and y strides and any groups are accepted (depthwise too, as Kg
 * = 1 products: correct, not fast). Deterministic: the sums of a tile are
 * formed in one order whatever thread runs it. Nothing is allocated at run
 * time.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/conv2d.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm_lowp.h"
#include "kernels/cpu/simd_isa.h"

#define RM ADNN_CPU_LOWP_RM
#define NC ADNN_CPU_LOWP_NC

/* The most bytes of gathered columns per chunk of images; a single image
 * larger than this is still gathered whole. */
#define CI_COLS_BUDGET ((size_t)16 << 20)

typedef struct ci_state {
  const adnn_cpu_lowp_path *path;
  int direct;      /* A is x in place (1x1, stride 1, no padding, even pixel spacing) */
  int rsc;         /* taps in (r, s, c) order (x's channels contiguous), else (c, r, s) */
  int64_t taps;    /* Cg R S: the k of each product */
  int64_t pixels;  /* P Q: the rows */
  int64_t chunk;   /* images per gather */
  int64_t tm;      /* rows per tile */
  int merge;       /* groups 1 and images' rows evenly spaced: a chunk is one matrix */
  int64_t tiles_n;
  size_t slice;    /* per-thread workspace: the I32 tile, then the packing scratch */
  size_t wt_off, wsum_off, cols_off; /* workspace offsets (the slices start at 0) */
  int isa;         /* env->isa: the epilogue's vector code */
} ci_state;

static size_t align64(size_t v) { return (v + 63) & ~(size_t)63; }

/* The packed weights: [g][t][kk] I8, then wsum [K] I32 at a 64-byte offset. */
static size_t wt_bytes(const adnn_plugin_conv2d *g) { return (size_t)(g->K * g->Cg * g->R * g->S); }
static size_t packed_bytes(const adnn_plugin_conv2d *g) {
  return align64(wt_bytes(g)) + (size_t)g->K * sizeof(int32_t);
}

static int ci_supports(const void *problem, const adnn_cpu_env *env, char *why, size_t why_size) {
  const adnn_plugin_conv2d *g = problem;
  if (g->w.dtype != ADNN_DTYPE_I8)
    return adnn_cpu_conv2d_no(why, why_size, "needs an i8 w");
  if (adnn_cpu_lowp_choose(g->x.dtype, env->isa, env->features) == NULL)
    return adnn_cpu_conv2d_no(why, why_size, "no integer GEMM path at this instruction set");
  return 1;
}

static void ci_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                       size_t *workspace_bytes) {
  const adnn_plugin_conv2d *g = problem;
  ci_state *s = state;
  const int64_t *xs = g->x.strides;
  s->path = adnn_cpu_lowp_choose(g->x.dtype, env->isa, env->features);
  s->isa = env->isa;
  s->taps = g->Cg * g->R * g->S;
  s->pixels = g->P * g->Q;
  s->rsc = adnn_cpu_conv2d_stride_is(&g->x, 1, 1);
  s->direct = g->R == 1 && g->S == 1 && g->stride_h == 1 && g->stride_w == 1 && !g->pad_top &&
              !g->pad_bottom && !g->pad_left && !g->pad_right &&
              adnn_cpu_conv2d_stride_is(&g->x, 2, xs[3] * g->W);
  /* Images per gather: enough for about 8192 rows, so that one
   * parallel_for has enough tiles to balance the threads (measured on Zen 4
   * at batch 8, 2 threads: 2048 left the 56 x 56 layers one image, nine
   * tiles, per loop, and the 28 x 28 3x3 layer ran 1.4x slower), within the
   * budget (16 MiB of columns). */
  const size_t per_image = (size_t)(g->groups * s->pixels * s->taps);
  s->chunk = 1;
  if (!s->direct)
    while (s->chunk < g->N && s->chunk * s->pixels < 8192 &&
           (size_t)(s->chunk + 1) * per_image <= CI_COLS_BUDGET)
      s->chunk++;
  if (s->direct) s->chunk = g->N;
  /* With one group, a chunk's images are one matrix of images * P Q rows
   * where their rows are evenly spaced: the gathered (r, s, c) columns, or x
   * itself when its images are packed; then B is packed once per tile of
   * 384 rows of the whole chunk instead of once per image (the 7 x 7
   * layers: 49 rows, a 48-row tile and a 1-row one per image). */
  s->merge = g->groups == 1 &&
             (s->direct ? adnn_cpu_conv2d_stride_is(&g->x, 0, xs[3] * g->H * g->W) : s->rsc);
  /* Tiles of RM rows, halved (down to 48) while there are fewer than two
   * per thread, as the matmul's do. */
  s->tiles_n = (g->Kg + NC - 1) / NC;
  s->tm = RM;
  const int64_t mats = s->merge ? 1 : s->chunk * g->groups;
  const int64_t mrows = s->merge ? s->chunk * s->pixels : s->pixels;
  while (s->tm > 48 && mats * s->tiles_n * ((mrows + s->tm - 1) / s->tm) < 2 * env->threads)
    s->tm /= 2;
  s->slice = align64((size_t)RM * NC * sizeof(int32_t) + adnn_cpu_lowp_thread_bytes(s->path));
  size_t off = s->slice * (size_t)env->threads;
  s->wt_off = off;
  s->wsum_off = off + align64(wt_bytes(g));
  off += packed_bytes(g);
  s->cols_off = align64(off);
  *workspace_bytes = s->cols_off + (s->direct ? 0 : (size_t)s->chunk * per_image);
}

/* ---- the weights ---------------------------------------------------------- */

typedef struct ci_pack_job {
  const adnn_plugin_conv2d *g;
  const ci_state *s;
  const int8_t *w;
  int8_t *wt;
  int32_t *wsum;
} ci_pack_job;

/* The offset in w of tap t (in the state's tap order) of filter 0. */
static int64_t tap_offset(const adnn_plugin_conv2d *g, int rsc, int64_t t) {
  const int64_t *ws = g->w.strides;
  int64_t c, r, sx;
  if (rsc) {
    c = t % g->Cg;
    r = t / g->Cg / g->S;
    sx = t / g->Cg % g->S;
  } else {
    sx = t % g->S;
    r = t / g->S % g->R;
    c = t / g->S / g->R;
  }
  return c * ws[1] + r * ws[2] + sx * ws[3];
}

/* Filters [k0, k1): their taps into B's columns ([group][t][kk], a
 * transpose of w) and their sums into wsum, in blocks of 64 filters x 64
 * taps, so that the lines read along each filter stay in L1 (one filter at
 * a time, as the first version did, wrote every tap to another line: half
 * the time of a 7 x 7 layer with 2048 filters at batch 8 went there). Each
 * block walks its taps with counters instead of divisions. A block whose
 * filters are in one group is transposed through a 64 x 64 tile on the
 * stack and stored a whole tap row (up to 64 contiguous bytes) at a time:
 * writing it element by element with the column stride Kg put the block's
 * 64 destination lines into a few L1 sets when Kg is a multiple of 1024
 * (2048 filters: 4 KiB apart, the same set), and each byte then missed:
 * 3.3 of the 4.0 ms of res5_branch2c (512 -> 2048 channels, 7 x 7, batch 8)
 * on a Zen 5, against 0.7 ms with the weights prepacked. */
enum { CI_PACK_BLOCK = 64 };

static void ci_pack_task(void *arg, int64_t k0, int64_t k1, int thread) {
  (void)thread;
  const ci_pack_job *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  const int64_t *ws = g->w.strides, taps = j->s->taps;
  const int rsc = j->s->rsc;
  /* The inner counter's dim and the strides that step it. */
  const int64_t n0 = rsc ? g->Cg : g->S, n1 = rsc ? g->S : g->R;
  const int64_t s0 = rsc ? ws[1] : ws[3], s1 = rsc ? ws[3] : ws[2], s2 = rsc ? ws[2] : ws[1];
  for (int64_t kb = k0; kb < k1; kb += CI_PACK_BLOCK) {
    const int64_t ke = k1 - kb < CI_PACK_BLOCK ? k1 : kb + CI_PACK_BLOCK;
    for (int64_t k = kb; k < ke; k++) j->wsum[k] = 0;
    for (int64_t tb = 0; tb < taps; tb += CI_PACK_BLOCK) {
      const int64_t te = taps - tb < CI_PACK_BLOCK ? taps : tb + CI_PACK_BLOCK;
      const int64_t o0 = tap_offset(g, rsc, tb);
      const int64_t i0 = tb % n0, i1 = tb / n0 % n1;
      /* One group: through the tile (see above). */
      const int staged = kb / g->Kg == (ke - 1) / g->Kg;
      int8_t tile[CI_PACK_BLOCK][CI_PACK_BLOCK]; /* [t - tb][k - kb] */
      for (int64_t k = kb; k < ke; k++) {
        const int64_t grp = k / g->Kg, kk = k % g->Kg;
        int8_t *col = j->wt + grp * taps * g->Kg + kk;
        const int8_t *wk = j->w + k * ws[0];
        int64_t o = o0, a = i0, b = i1;
        int32_t sum = 0;
        for (int64_t t = tb; t < te; t++) {
          const int8_t v = wk[o];
          if (staged)
            tile[t - tb][k - kb] = v;
          else
            col[t * g->Kg] = v;
          sum += v;
          /* The next tap: the inner dim, carrying into the middle and the
           * outer one. */
          if (++a < n0) {
            o += s0;
          } else {
            a = 0;
            o -= (n0 - 1) * s0;
            if (++b < n1) {
              o += s1;
            } else {
              b = 0;
              o += s2 - (n1 - 1) * s1;
            }
          }
        }
        j->wsum[k] += sum;
      }
      if (staged) {
        int8_t *dst = j->wt + kb / g->Kg * taps * g->Kg + kb % g->Kg;
        for (int64_t t = tb; t < te; t++)
          memcpy(dst + t * g->Kg, tile[t - tb], (size_t)(ke - kb));
      }
    }
  }
}

static void ci_pack(const adnn_plugin_conv2d *g, const ci_state *s, const void *w, void *dst) {
  ci_pack_job j = {g, s, w, dst, (int32_t *)((char *)dst + align64(wt_bytes(g)))};
  adnn_cpu_parallel_for(g->K, CI_PACK_BLOCK, ci_pack_task, &j);
}

static size_t ci_packed_weights_size(const void *problem, const void *state) {
  (void)state;
  return packed_bytes(problem);
}

static void ci_pack_weights(const void *problem, const void *state, const void *w, void *packed) {
  ci_pack(problem, state, w, packed);
}

/* ---- the columns ---------------------------------------------------------- */

typedef struct ci_cols_job {
  const adnn_plugin_conv2d *g;
  const ci_state *s;
  const uint8_t *x; /* image n0 */
  uint8_t *cols;    /* [image][group][pixel][tap] */
} ci_cols_job;

/* The (r, s, c) form (x's channels contiguous, NHWC): output rows (image,
 * group, p) [r0, r1) of the chunk, k contiguous per pixel. */
static void ci_cols_task(void *arg, int64_t r0, int64_t r1, int thread) {
  (void)thread;
  const ci_cols_job *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  const ci_state *s = j->s;
  const int64_t *xs = g->x.strides, taps = s->taps;
  const uint8_t zx = (uint8_t)g->x_zero_point; /* the byte of an I8 or U8 zero point */
  const int run = g->dilation_w == 1 && xs[3] == g->Cg;
  for (int64_t row = r0; row < r1; row++) {
    const int64_t p = row % g->P, ng = row / g->P, grp = ng % g->groups, n = ng / g->groups;
    const uint8_t *xg = j->x + n * xs[0] + grp * g->Cg * xs[1];
    uint8_t *dst = j->cols + (ng * s->pixels + p * g->Q) * taps;
    for (int64_t q = 0; q < g->Q; q++, dst += taps) {
      const int64_t h0 = p * g->stride_h - g->pad_top, w0 = q * g->stride_w - g->pad_left;
      /* Each tap is Cg contiguous bytes (or the padding); with packed
       * pixels of Cg channels and no horizontal dilation, a filter row
       * inside the image is one run of S Cg bytes (ResNet's first layer: 21
       * bytes per copy instead of 3). */
      uint8_t *d = dst;
      for (int64_t r = 0; r < g->R; r++) {
        const int64_t h = h0 + r * g->dilation_h;
        if (run && h >= 0 && h < g->H && w0 >= 0 && w0 + g->S <= g->W) {
          memcpy(d, xg + h * xs[2] + w0 * xs[3], (size_t)(g->S * g->Cg));
          d += g->S * g->Cg;
          continue;
        }
        for (int64_t sx = 0; sx < g->S; sx++, d += g->Cg) {
          const int64_t ww = w0 + sx * g->dilation_w;
          if (h < 0 || h >= g->H || ww < 0 || ww >= g->W)
            memset(d, zx, (size_t)g->Cg);
          else
            memcpy(d, xg + h * xs[2] + ww * xs[3], (size_t)g->Cg);
        }
      }
    }
  }
}

/* The (c, r, s) form (x's channels not contiguous, e.g. NCHW): tap rows
 * (image, group, tap) [r0, r1) of the chunk, each the P Q pixels of that
 * tap, copied a run of an image row at a time where stride_w is 1. The
 * tiles read these columns as a transposed A (pixels contiguous). */
static void ci_cols_crs_task(void *arg, int64_t r0, int64_t r1, int thread) {
  (void)thread;
  const ci_cols_job *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  const ci_state *s = j->s;
  const int64_t *xs = g->x.strides, RS = g->R * g->S, Q = g->Q;
  const uint8_t zx = (uint8_t)g->x_zero_point;
  for (int64_t row = r0; row < r1; row++) {
    const int64_t t = row % s->taps, ng = row / s->taps, grp = ng % g->groups, n = ng / g->groups;
    const int64_t c = t / RS, r = t % RS / g->S, sx = t % g->S;
    const uint8_t *xc = j->x + n * xs[0] + (grp * g->Cg + c) * xs[1];
    uint8_t *dst = j->cols + row * s->pixels;
    int64_t qlo, qhi;
    adnn_cpu_conv2d_valid_q(g, sx, &qlo, &qhi);
    const int64_t w0 = sx * g->dilation_w - g->pad_left; /* the input column of q = 0 */
    for (int64_t p = 0; p < g->P; p++, dst += Q) {
      const int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
      if (h < 0 || h >= g->H) {
        memset(dst, zx, (size_t)Q);
        continue;
      }
      const uint8_t *xr = xc + h * xs[2];
      memset(dst, zx, (size_t)qlo);
      if (g->stride_w == 1 && xs[3] == 1)
        memcpy(dst + qlo, xr + w0 + qlo, (size_t)(qhi - qlo));
      else
        for (int64_t q = qlo; q < qhi; q++) dst[q] = xr[(w0 + q * g->stride_w) * xs[3]];
      memset(dst + qhi, zx, (size_t)(Q - qhi));
    }
  }
}

/* ---- the tiles ------------------------------------------------------------ */

typedef struct ci_job {
  const adnn_plugin_conv2d *g;
  const ci_state *s;
  const uint8_t *a;   /* image n0's A: the columns, or x itself (direct) */
  const int8_t *wt;
  const int32_t *wsum, *bias;
  const float *scales;
  void *y;            /* image n0 */
  char *work;
  int64_t mrows, tiles_m; /* rows of each of the chunk's matrices, tiles along them */
} ci_job;

/* The epilogue's per-column constants and settings. */
typedef struct ci_epi {
  double comp[NC];  /* bias - x_zero_point * wsum (exact in F64: |.| < 2^34) */
  double scale[NC]; /* requantization scale */
  int relu, requant;
  double lo, hi, zp; /* y's range and zero point */
} ci_epi;

/* One row of a tile from column c0 on: out[c] = the final integer of
 * column c, clamped to y's range: v = acc + comp (exact in F64, so it is
 * the definition's 64-bit sum), relu, then for an I8/U8 y adnn_cpu_lowp_requant's function (the
 * product in F64, ties to even, a NaN product giving the zero point), for
 * an I32 y the saturation. */
static void epi_row_base(const ci_epi *e, int64_t c0, const int32_t *acc, int64_t cols,
                         int32_t *out) {
  for (int64_t c = c0; c < cols; c++) {
    int64_t v = (int64_t)acc[c] + (int64_t)e->comp[c];
    if (e->relu && v < 0) v = 0;
    if (e->requant)
      out[c] = (int32_t)adnn_cpu_lowp_requant(v, e->scale[c], (int32_t)e->zp, (int64_t)e->lo,
                                              (int64_t)e->hi);
    else
      out[c] = (int32_t)(v < (int64_t)e->lo ? (int64_t)e->lo : v > (int64_t)e->hi ? (int64_t)e->hi : v);
  }
}

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

/* The same function, four columns at a time: vroundpd to nearest (ties to
 * even, the default mode's nearbyint) on the F64 product, NaN products
 * replaced by 0, then the zero point, the clamp and an exact conversion. */
__attribute__((target("avx2"))) static void epi_row_avx2(const ci_epi *e, const int32_t *acc,
                                                        int64_t cols, int32_t *out) {
  const __m256d zero = _mm256_setzero_pd(), lo = _mm256_set1_pd(e->lo),
                hi = _mm256_set1_pd(e->hi), zp = _mm256_set1_pd(e->zp);
  int64_t c = 0;
  for (; c + 4 <= cols; c += 4) {
    __m256d v = _mm256_add_pd(_mm256_cvtepi32_pd(_mm_loadu_si128((const __m128i *)(acc + c))),
                              _mm256_loadu_pd(e->comp + c));
    if (e->relu) v = _mm256_max_pd(v, zero);
    if (e->requant) {
      const __m256d prod = _mm256_mul_pd(v, _mm256_loadu_pd(e->scale + c));
      const __m256d r = _mm256_round_pd(prod, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      v = _mm256_add_pd(_mm256_blendv_pd(r, zero, _mm256_cmp_pd(prod, prod, _CMP_UNORD_Q)), zp);
    }
    v = _mm256_min_pd(_mm256_max_pd(v, lo), hi);
    _mm_storeu_si128((__m128i *)(out + c), _mm256_cvtpd_epi32(v));
  }
  epi_row_base(e, c, acc, cols, out);
}

/* Eight columns at a time with AVX-512F: vrndscalepd to nearest (ties to
 * even), the NaN products replaced through a mask. */
__attribute__((target("avx512f"))) static void epi_row_avx512(const ci_epi *e,
                                                              const int32_t *acc, int64_t cols,
                                                              int32_t *out) {
  const __m512d zero = _mm512_setzero_pd(), lo = _mm512_set1_pd(e->lo),
                hi = _mm512_set1_pd(e->hi), zp = _mm512_set1_pd(e->zp);
  int64_t c = 0;
  for (; c + 8 <= cols; c += 8) {
    __m512d v = _mm512_add_pd(_mm512_cvtepi32_pd(_mm256_loadu_si256((const __m256i *)(acc + c))),
                              _mm512_loadu_pd(e->comp + c));
    if (e->relu) v = _mm512_max_pd(v, zero);
    if (e->requant) {
      const __m512d prod = _mm512_mul_pd(v, _mm512_loadu_pd(e->scale + c));
      const __m512d r = _mm512_roundscale_pd(prod, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      const __mmask8 nan = _mm512_cmp_pd_mask(prod, prod, _CMP_UNORD_Q);
      v = _mm512_add_pd(_mm512_mask_blend_pd(nan, r, zero), zp);
    }
    v = _mm512_min_pd(_mm512_max_pd(v, lo), hi);
    _mm256_storeu_si256((__m256i *)(out + c), _mm512_cvtpd_epi32(v));
  }
  epi_row_base(e, c, acc, cols, out);
}

/* dst[c] = the low byte of src[c] (values already in y's 8-bit range). */
__attribute__((target("avx512f"))) static void narrow_row_avx512(const int32_t *src,
                                                                 int64_t cols, uint8_t *dst) {
  int64_t c = 0;
  for (; c + 16 <= cols; c += 16)
    _mm_storeu_si128((__m128i *)(dst + c), _mm512_cvtepi32_epi8(_mm512_loadu_si512(src + c)));
  for (; c < cols; c++) dst[c] = (uint8_t)src[c];
}
#define CI_HAVE_AVX2 1
#else
#define CI_HAVE_AVX2 0
#endif

/* The epilogue of a tile: rows x cols accumulators (row stride NC) of the
 * chunk's output rows r0.. (row r: image r / (P Q), pixel r % (P Q)) and
 * output channels k0.. (y at the chunk's first image): each row's integers
 * into a stack row, then into y (a copy where y's channels are contiguous,
 * NHWC; a scatter along the channel stride otherwise). */
static void ci_epilogue(const ci_job *j, const int32_t *acc, int64_t r0, int64_t k0,
                        int64_t rows, int64_t cols) {
  const adnn_plugin_conv2d *g = j->g;
  const adnn_dtype yt = g->y.dtype;
  const int64_t *ys = g->y.strides;
  ci_epi e;
  e.requant = yt == ADNN_DTYPE_I8 || yt == ADNN_DTYPE_U8;
  e.relu = g->activation.kind == ADNN_ACTIVATION_RELU;
  e.lo = yt == ADNN_DTYPE_I8 ? -128.0 : e.requant ? 0.0 : (double)INT32_MIN;
  e.hi = yt == ADNN_DTYPE_I8 ? 127.0 : e.requant ? 255.0 : (double)INT32_MAX;
  e.zp = (double)g->y_zero_point;
  for (int64_t c = 0; c < cols; c++) {
    const int64_t k = k0 + c;
    e.comp[c] = (double)((j->bias ? (int64_t)j->bias[k * g->bias.strides[0]] : 0) -
                         (int64_t)g->x_zero_point * j->wsum[k]);
    e.scale[c] = j->scales ? (double)j->scales[k * g->requant_scales.strides[0]] : g->requant_scale;
  }
  /* The epilogue's vector code: 2 AVX-512, 1 AVX2, 0 none. */
  const int vec = !CI_HAVE_AVX2 ? 0 : j->s->isa >= ADNN_CPU_ISA_AVX512 ? 2
                                  : j->s->isa >= ADNN_CPU_ISA_AVX2 ? 1 : 0;
  const int64_t cs = ys[1];
  int32_t row[NC];
  const int64_t pixels = j->s->pixels;
  for (int64_t i = 0; i < rows; i++) {
    const int64_t r = r0 + i, n = r / pixels, m = r % pixels, p = m / g->Q, q = m % g->Q;
    const int64_t off = n * ys[0] + p * ys[2] + q * ys[3] + k0 * cs;
#if CI_HAVE_AVX2
    if (vec == 2)
      epi_row_avx512(&e, acc + i * NC, cols, row);
    else if (vec == 1)
      epi_row_avx2(&e, acc + i * NC, cols, row);
    else
#endif
      epi_row_base(&e, 0, acc + i * NC, cols, row);
    if (yt == ADNN_DTYPE_I32) {
      int32_t *y = (int32_t *)j->y + off;
      if (cs == 1)
        memcpy(y, row, (size_t)cols * sizeof *y);
      else
        for (int64_t c = 0; c < cols; c++) y[c * cs] = row[c];
    } else {
      /* Every value is in y's range: the byte is its two's complement. */
      uint8_t *y = (uint8_t *)j->y + off;
#if CI_HAVE_AVX2
      if (vec == 2 && cs == 1) {
        narrow_row_avx512(row, cols, y);
        continue;
      }
#endif
      for (int64_t c = 0; c < cols; c++) y[c * cs] = (uint8_t)row[c];
    }
  }
}

static void ci_tile_task(void *arg, int64_t t0, int64_t t1, int thread) {
  const ci_job *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  const ci_state *s = j->s;
  const int64_t per = j->tiles_m * s->tiles_n;
  char *slice = j->work + s->slice * (size_t)thread;
  int32_t *c = (int32_t *)slice;
  void *scratch = slice + (size_t)RM * NC * sizeof(int32_t);
  for (int64_t t = t0; t < t1; t++) {
    /* Matrix mat (image n, group grp; one matrix when merged), rows m0.. */
    const int64_t mat = t / per, tile = t % per, n = mat / g->groups, grp = mat % g->groups;
    const int64_t m0 = tile / s->tiles_n * s->tm, kk0 = tile % s->tiles_n * NC;
    const int64_t rows = j->mrows - m0 < s->tm ? j->mrows - m0 : s->tm;
    const int64_t cols = g->Kg - kk0 < NC ? g->Kg - kk0 : NC;
    const uint8_t *a;
    int64_t a_rs, a_cs;
    if (s->direct) {
      a = j->a + n * g->x.strides[0] + grp * g->Cg * g->x.strides[1] + m0 * g->x.strides[3];
      a_rs = g->x.strides[3];
      a_cs = g->x.strides[1];
    } else if (s->rsc) {
      a = j->a + (mat * s->pixels + m0) * s->taps;
      a_rs = s->taps;
      a_cs = 1;
    } else {
      a = j->a + mat * s->taps * s->pixels + m0;
      a_rs = 1;
      a_cs = s->pixels;
    }
    const int8_t *b = j->wt + grp * s->taps * g->Kg + kk0;
    s->path->block(s->path, g->x.dtype, ADNN_DTYPE_I8, a, a_rs, a_cs, b, g->Kg, 1, rows, cols,
                   s->taps, c, NC, scratch);
    ci_epilogue(j, c, n * s->pixels + m0, grp * g->Kg + kk0, rows, cols);
  }
}

/* Inputs {x, w[, bias][, requant_scales]}, outputs {y}. */
static void ci_run(const void *problem, const void *state, const void *const *inputs,
                   void *const *outputs, void *workspace) {
  const adnn_plugin_conv2d *g = problem;
  const ci_state *s = state;
  char *ws = workspace;
  const void *wt = inputs[1];
  if (!g->weights_prepacked) {
    ci_pack(g, s, inputs[1], ws + s->wt_off);
    wt = ws + s->wt_off;
  }
  ci_job j = {g, s, NULL, wt, (const int32_t *)((const char *)wt + align64(wt_bytes(g))),
              g->has_bias ? inputs[2] : NULL,
              g->has_requant_scales ? inputs[2 + g->has_bias] : NULL, NULL, ws, 0, 0};
  const size_t ye = g->y.dtype == ADNN_DTYPE_I32 ? 4 : 1;
  uint8_t *cols = (uint8_t *)(ws + s->cols_off);
  for (int64_t n0 = 0; n0 < g->N; n0 += s->chunk) {
    const int64_t images = g->N - n0 < s->chunk ? g->N - n0 : s->chunk;
    const uint8_t *x = (const uint8_t *)inputs[0] + n0 * g->x.strides[0];
    if (s->direct) {
      j.a = x;
    } else {
      const ci_cols_job cj = {g, s, x, cols};
      if (s->rsc) {
        const int64_t per_row = g->Q * s->taps;
        adnn_cpu_parallel_for(images * g->groups * g->P, per_row >= 4096 ? 1 : 4096 / per_row,
                              ci_cols_task, (void *)&cj);
      } else {
        adnn_cpu_parallel_for(images * g->groups * s->taps,
                              s->pixels >= 4096 ? 1 : 4096 / s->pixels, ci_cols_crs_task,
                              (void *)&cj);
      }
      j.a = cols;
    }
    j.y = (char *)outputs[0] + (size_t)(n0 * g->y.strides[0]) * ye;
    j.mrows = s->merge ? images * s->pixels : s->pixels;
    j.tiles_m = (j.mrows + s->tm - 1) / s->tm;
    const int64_t mats = s->merge ? 1 : images * g->groups;
    adnn_cpu_parallel_for(mats * j.tiles_m * s->tiles_n, 1, ci_tile_task, &j);
  }
}

const adnn_cpu_impl adnn_cpu_conv2d_int8 = {
    .name = "int8",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_I8) | ADNN_OP_DTYPE(ADNN_DTYPE_U8),
    .supports = ci_supports,
    .state_size = sizeof(ci_state),
    .reshape = ci_reshape,
    .run = ci_run,
    .packed_weights_size = ci_packed_weights_size,
    .pack_weights = ci_pack_weights,
};
