/*
 * reorder on the CPU: y = x converted to y's dtype between any two layouts of
 * the same dims (doc/ops.md, "Reorder"), bit for bit the definition of
 * kernels/common/convert.h.
 *
 * At reshape x and y are coalesced (kernels/common/nd.h) and one of three
 * loops is chosen:
 *   - rows: the innermost dim has stride 1 in both: each row goes through a
 *     contiguous converter, vectorized at the AVX2 level (F16C for F16; BF16
 *     and the F64 narrowings by integer arithmetic, see below);
 *   - tiles: x has stride 1 in the innermost dim and y in another one, or
 *     the other way round (NCHW <-> NHWC and every other transpose): the two dims are walked in 32 x 32
 *     tiles so that both the rows read and the rows written stay in L1; a
 *     4-byte copy (F32, I32) transposes 8 x 8 blocks in AVX2 registers;
 *   - strided: anything else, element by element along the innermost dim.
 * The work (rows, row chunks or tiles) is split over the plugin's threads
 * when the tensor is large enough for that to pay.
 *
 * The vector converters and why they equal the scalar definition:
 *   - F32 -> F16 is vcvtps2ph with round-to-nearest-even in its immediate:
 *     kernels/common/float16.h was checked against it over all 2^32 inputs
 *     (NaN: quiet bit set, top payload bits kept; overflow to infinity;
 *     subnormals kept). F16 -> F32 is vcvtph2ps, which is exact and quiets a
 *     NaN as the header does;
 *   - F32 -> BF16 is the header's integer rounding done on 8 lanes
 *     (AVX512-BF16's vcvtneps2bf16 flushes subnormal inputs, so it is not
 *     used); BF16 -> F32 is a 16-bit shift;
 *   - F32 <-> F64 are vcvtps2pd / vcvtpd2ps (IEEE, and their NaN results are
 *     the bits convert.h builds);
 *   - F64 -> F16 and F64 -> BF16 must round once: the F64 value is first
 *     rounded to F32 "to odd" (truncated, with the last bit set when anything
 *     was dropped), which keeps enough information (24 bits >= the target's
 *     precision + 2, in the subnormal range too) for the following F32 ->
 *     F16/BF16 rounding to give the correctly rounded result of the F64.
 *     vcvtpd2ps rounds to nearest, so the truncation is obtained by stepping
 *     back one F32 ulp where the rounding went away from zero;
 *   - a same-dtype reorder is memcpy.
 * MXCSR's flush-to-zero and denormals-are-zero bits are cleared while a
 * reorder runs (reorder_task), so an application that sets them still gets
 * the exact conversions. The AVX-512 level runs the AVX2
 * converters (a reorder is bound by memory bandwidth, not by vector width).
 */
#include "config.h"

#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define REORDER_X86 1
#endif

#include "kernels/common/convert.h"
#include "kernels/common/nd.h"
#include "kernels/cpu/cpu_kernels.h"

/* Converts n elements, both contiguous. */
typedef void (*row_fn)(const void *x, void *y, size_t n);
/* Converts n elements at element strides sx and sy. */
typedef void (*strided_fn)(const char *x, int64_t sx, char *y, int64_t sy, int64_t n);

/* ---- scalar converters, one per dtype pair (the pair is a constant inside
 * each, so convert.h's switches fold away) ----------------------------------- */

#define PAIR_FNS_(S, D)                                                                      \
  static void strided_##S##_##D(const char *x, int64_t sx, char *y, int64_t sy, int64_t n) { \
    const int64_t xs = adnn_cvt_size(S), ys = adnn_cvt_size(D);                              \
    for (int64_t i = 0; i < n; i++)                                                          \
      adnn_convert_element(S, x + i * sx * xs, D, y + i * sy * ys);                          \
  }                                                                                          \
  static void row_##S##_##D(const void *x, void *y, size_t n) {                              \
    strided_##S##_##D((const char *)x, 1, (char *)y, 1, (int64_t)n);                         \
  }
#define FLOAT_PAIRS_(X)                                                                \
  X(1, 2) X(1, 3) X(1, 4) X(2, 1) X(2, 3) X(2, 4) X(3, 1) X(3, 2) X(3, 4) X(4, 1) \
  X(4, 2) X(4, 3)
FLOAT_PAIRS_(PAIR_FNS_)
#define SAME_FNS_(S)                                                                           \
  static void strided_##S##_##S(const char *x, int64_t sx, char *y, int64_t sy, int64_t n) {   \
    const int64_t s = adnn_cvt_size(S);                                                        \
    for (int64_t i = 0; i < n; i++) memcpy(y + i * sy * s, x + i * sx * s, (size_t)s);         \
  }
SAME_FNS_(1) SAME_FNS_(2) SAME_FNS_(3) SAME_FNS_(4) SAME_FNS_(5) SAME_FNS_(6) SAME_FNS_(7)

static strided_fn strided_for(int s, int d) {
  switch (s * 8 + d) {
#define CASE_(S, D) \
  case S * 8 + D: return strided_##S##_##D;
    FLOAT_PAIRS_(CASE_)
    CASE_(1, 1) CASE_(2, 2) CASE_(3, 3) CASE_(4, 4) CASE_(5, 5) CASE_(6, 6) CASE_(7, 7)
#undef CASE_
  }
  return NULL;
}

static row_fn scalar_row_for(int s, int d) {
  switch (s * 8 + d) {
#define CASE_(S, D) \
  case S * 8 + D: return row_##S##_##D;
    FLOAT_PAIRS_(CASE_)
#undef CASE_
  }
  return NULL;
}

/* ---- AVX2 (+ F16C) contiguous converters ---------------------------------- */

#ifdef REORDER_X86
#define AVX2_FN __attribute__((target("avx2,fma,f16c"))) static

/* 8 floats to BF16 by the header's integer rounding. */
AVX2_FN __m128i bf16_from_ps8(__m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb)), 16);
  const __m256i mag = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
  const __m256i nan = _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7f800000));
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  const __m256i r = _mm256_blendv_epi8(rounded, quiet, nan);
  /* packus works within 128-bit lanes: gather the two halves after it. */
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
  return _mm256_castsi256_si128(packed);
}

AVX2_FN __m256 ps8_from_bf16(__m128i h) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

/* 4 doubles rounded to F32 to odd (see the top of the file). */
AVX2_FN __m128 ps4_odd_from_pd4(__m256d d) {
  const __m128 f = _mm256_cvtpd_ps(d);
  const __m256d back = _mm256_cvtps_pd(f);
  const __m256d sign = _mm256_set1_pd(-0.0);
  const __m256d away = _mm256_cmp_pd(_mm256_andnot_pd(sign, back), _mm256_andnot_pd(sign, d),
                                     _CMP_GT_OQ);
  const __m256d inexact = _mm256_cmp_pd(back, d, _CMP_NEQ_OQ);
  const __m256i pick = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  const __m128i away32 = _mm256_castsi256_si128(
      _mm256_permutevar8x32_epi32(_mm256_castpd_si256(away), pick));
  const __m128i inexact32 = _mm256_castsi256_si128(
      _mm256_permutevar8x32_epi32(_mm256_castpd_si256(inexact), pick));
  __m128i bits = _mm_add_epi32(_mm_castps_si128(f), away32); /* -1 where it went away */
  bits = _mm_or_si128(bits, _mm_and_si128(inexact32, _mm_set1_epi32(1)));
  return _mm_castsi128_ps(bits);
}

#define RNE_ (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* Eight elements loaded as F32 lanes (exactly; F64 rounded to odd, for a
 * 16-bit target only) and eight F32 lanes stored in the target type (the
 * header's rounding). Every pair through a 16-bit type is one load and one
 * store of these. */
AVX2_FN __m256 ld8_f32(const float *x) { return _mm256_loadu_ps(x); }
AVX2_FN __m256 ld8_f16(const uint16_t *x) {
  return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)x));
}
AVX2_FN __m256 ld8_bf16(const uint16_t *x) {
  return ps8_from_bf16(_mm_loadu_si128((const __m128i *)x));
}
AVX2_FN __m256 ld8_f64_odd(const double *x) {
  const __m128 lo = ps4_odd_from_pd4(_mm256_loadu_pd(x));
  const __m128 hi = ps4_odd_from_pd4(_mm256_loadu_pd(x + 4));
  return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
}
AVX2_FN void st8_f32(float *y, __m256 v) { _mm256_storeu_ps(y, v); }
AVX2_FN void st8_f16(uint16_t *y, __m256 v) {
  _mm_storeu_si128((__m128i *)y, _mm256_cvtps_ph(v, RNE_));
}
AVX2_FN void st8_bf16(uint16_t *y, __m256 v) { _mm_storeu_si128((__m128i *)y, bf16_from_ps8(v)); }
AVX2_FN void st8_f64(double *y, __m256 v) {
  _mm256_storeu_pd(y, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
  _mm256_storeu_pd(y + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

/* avx2_<from>_<to>: whole vectors through ld8/st8, the tail by the scalar
 * row_<a>_<b> of the dtype codes (1 f32, 2 f64, 3 f16, 4 bf16). */
#define AVX2_PAIR_(from, to, XT, YT, LD, a, b)              \
  AVX2_FN void avx2_##from##_##to(const void *xv, void *yv, size_t n) { \
    const XT *x = xv;                                         \
    YT *y = yv;                                               \
    size_t i = 0;                                             \
    for (; i + 8 <= n; i += 8) st8_##to(y + i, LD(x + i));    \
    row_##a##_##b(x + i, y + i, n - i);                       \
  }
AVX2_PAIR_(f32, f16, float, uint16_t, ld8_f32, 1, 3)
AVX2_PAIR_(f16, f32, uint16_t, float, ld8_f16, 3, 1)
AVX2_PAIR_(f32, bf16, float, uint16_t, ld8_f32, 1, 4)
AVX2_PAIR_(bf16, f32, uint16_t, float, ld8_bf16, 4, 1)
AVX2_PAIR_(f64, f16, double, uint16_t, ld8_f64_odd, 2, 3)
AVX2_PAIR_(f64, bf16, double, uint16_t, ld8_f64_odd, 2, 4)
AVX2_PAIR_(f16, f64, uint16_t, double, ld8_f16, 3, 2)
AVX2_PAIR_(bf16, f64, uint16_t, double, ld8_bf16, 4, 2)
AVX2_PAIR_(f16, bf16, uint16_t, uint16_t, ld8_f16, 3, 4)
AVX2_PAIR_(bf16, f16, uint16_t, uint16_t, ld8_bf16, 4, 3)
#undef AVX2_PAIR_

AVX2_FN void avx2_f32_f64(const void *xv, void *yv, size_t n) {
  const float *x = xv;
  double *y = yv;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(y + i, _mm256_cvtps_pd(_mm_loadu_ps(x + i)));
  row_1_2(x + i, y + i, n - i);
}

AVX2_FN void avx2_f64_f32(const void *xv, void *yv, size_t n) {
  const double *x = xv;
  float *y = yv;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(y + i, _mm256_cvtpd_ps(_mm256_loadu_pd(x + i)));
  row_2_1(x + i, y + i, n - i);
}

/* One tile of a 4-byte same-dtype transpose (F32 or I32 copied):
 * y[j * ysb + i] = x[i * xsa + j] for i < na, j < nb, in 8 x 8 blocks
 * transposed in registers (pure bit moves, so NaN payloads pass unchanged);
 * the ragged edges element by element. */
AVX2_FN void avx2_tile_transpose32(const char *xv, int64_t xsa, char *yv, int64_t ysb, int64_t na,
                                   int64_t nb) {
  const float *x = (const float *)xv;
  float *y = (float *)yv;
  const int64_t i8 = na - na % 8, j8 = nb - nb % 8;
  for (int64_t j = 0; j < j8; j += 8)
    for (int64_t i = 0; i < i8; i += 8) {
      __m256 r[8], t[8], u[8];
      for (int k = 0; k < 8; k++) r[k] = _mm256_loadu_ps(x + (i + k) * xsa + j);
      for (int k = 0; k < 8; k += 2) {
        t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
        t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
      }
      for (int k = 0; k < 8; k += 4) {
        u[k] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
      }
      for (int k = 0; k < 4; k++) {
        _mm256_storeu_ps(y + (j + k) * ysb + i, _mm256_permute2f128_ps(u[k], u[k + 4], 0x20));
        _mm256_storeu_ps(y + (j + k + 4) * ysb + i, _mm256_permute2f128_ps(u[k], u[k + 4], 0x31));
      }
    }
  for (int64_t j = 0; j < nb; j++)
    for (int64_t i = (j < j8 ? i8 : 0); i < na; i++)
      memcpy(y + j * ysb + i, x + i * xsa + j, 4);
}

/* The AVX2 converter of a pair, or NULL. Pairs with F16 need F16C. */
static row_fn avx2_row_for(int s, int d, int f16c) {
  const int f16 = s == ADNN_CVT_F16 || d == ADNN_CVT_F16;
  if (f16 && !f16c) return NULL;
  switch (s * 8 + d) {
    case 1 * 8 + 3: return avx2_f32_f16;
    case 3 * 8 + 1: return avx2_f16_f32;
    case 1 * 8 + 4: return avx2_f32_bf16;
    case 4 * 8 + 1: return avx2_bf16_f32;
    case 1 * 8 + 2: return avx2_f32_f64;
    case 2 * 8 + 1: return avx2_f64_f32;
    case 2 * 8 + 3: return avx2_f64_f16;
    case 2 * 8 + 4: return avx2_f64_bf16;
    case 3 * 8 + 2: return avx2_f16_f64;
    case 4 * 8 + 2: return avx2_bf16_f64;
    case 3 * 8 + 4: return avx2_f16_bf16;
    case 4 * 8 + 3: return avx2_bf16_f16;
  }
  return NULL;
}
#endif

/* ---- plan and run ----------------------------------------------------------- */

enum { PATH_ROWS, PATH_TILES, PATH_STRIDED };
enum { TILE = 32, CHUNK = 16384 };

typedef struct reorder_state {
  adnn_nd nd; /* strides[0] x, strides[1] y, in elements */
  int st, dt;
  int64_t xsz, ysz;
  int path;
  int tile_dim;       /* PATH_TILES: the other dim of the transpose */
  int tile_swap;      /* PATH_TILES: 0: x unit stride innermost and y at tile_dim;
                         1: y unit stride innermost and x at tile_dim */
  int64_t chunks;     /* PATH_ROWS: chunks per row; PATH_TILES: tiles per outer index */
  int64_t tiles_a;    /* PATH_TILES: tiles along tile_dim */
  int64_t items;      /* work items */
  int64_t grain;      /* work items per task at least */
  row_fn row;         /* PATH_ROWS; NULL: memcpy */
  strided_fn strided; /* the other paths, and the scalar element */
  /* PATH_TILES of a 4-byte copy at AVX2: the register transpose, else NULL */
  void (*tile32)(const char *x, int64_t xsa, char *y, int64_t ysb, int64_t na, int64_t nb);
} reorder_state;

/* Element offsets in x and y of outer index `o` over every dim below
 * `rank_end` except `skip` (-1: none). */
static void outer_offsets(const adnn_nd *nd, int rank_end, int skip, int64_t o, int64_t *xo,
                          int64_t *yo) {
  int64_t ox = 0, oy = 0;
  for (int i = rank_end - 1; i >= 0; i--) {
    if (i == skip) continue;
    const int64_t k = o % nd->dims[i];
    o /= nd->dims[i];
    ox += k * nd->strides[0][i];
    oy += k * nd->strides[1][i];
  }
  *xo = ox;
  *yo = oy;
}

static void reorder_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                            size_t *workspace_bytes) {
  const adnn_plugin_reorder *p = problem;
  reorder_state *s = state;
  const int64_t *strides[2] = {p->x.strides, p->y.strides};
  adnn_nd_coalesce(&s->nd, p->x.rank, p->x.dims, 2, strides);
  s->st = (int)p->x.dtype;
  s->dt = (int)p->y.dtype;
  s->xsz = adnn_cvt_size(s->st);
  s->ysz = adnn_cvt_size(s->dt);
  s->strided = strided_for(s->st, s->dt);
  *workspace_bytes = 0;
  const int r = s->nd.rank;
  const int64_t count = p->count;
  /* About 256 KiB of output per task: below that a thread costs more than
   * it brings. */
  const int64_t per_task = (256 * 1024) / s->ysz;
  if (r == 0) {
    s->path = PATH_STRIDED;
    s->items = 1;
    s->grain = 1;
    return;
  }
  /* The contiguous converter (NULL: memcpy), used by the rows and, on
   * gathered columns, by the tiles. */
  s->row = NULL;
  if (s->st != s->dt) {
    s->row = scalar_row_for(s->st, s->dt);
#ifdef REORDER_X86
    if (env->isa >= ADNN_CPU_ISA_AVX2) {
      row_fn v = avx2_row_for(s->st, s->dt, env->features ? env->features->f16c : 0);
      if (v) s->row = v;
    }
#endif
  }
  const int64_t inner = s->nd.dims[r - 1];
  if (s->nd.strides[0][r - 1] == 1 && s->nd.strides[1][r - 1] == 1) {
    s->path = PATH_ROWS;
    s->chunks = (inner + CHUNK - 1) / CHUNK;
    s->items = (count / inner) * s->chunks;
    const int64_t elems_per_item = inner < CHUNK ? inner : CHUNK;
    s->grain = per_task / elems_per_item > 1 ? per_task / elems_per_item : 1;
    return;
  }
  int a = -1;
  if (s->nd.strides[0][r - 1] == 1)
    for (int i = 0; i < r - 1; i++)
      if (s->nd.strides[1][i] == 1) a = i;
  if (a < 0 && s->nd.strides[1][r - 1] == 1) {
    for (int i = 0; i < r - 1; i++)
      if (s->nd.strides[0][i] == 1) a = i;
    s->tile_swap = a >= 0;
  }
  if (a >= 0) {
    s->path = PATH_TILES;
    s->tile_dim = a;
    s->tiles_a = (s->nd.dims[a] + TILE - 1) / TILE;
    s->chunks = s->tiles_a * ((inner + TILE - 1) / TILE);
    s->items = count / (inner * s->nd.dims[a]) * s->chunks;
    s->grain = per_task / (TILE * TILE) > 1 ? per_task / (TILE * TILE) : 1;
#ifdef REORDER_X86
    if (env->isa >= ADNN_CPU_ISA_AVX2 && s->st == s->dt && s->xsz == 4)
      s->tile32 = avx2_tile_transpose32;
#endif
    return;
  }
  s->path = PATH_STRIDED;
  s->items = count / inner;
  s->grain = per_task / inner > 1 ? per_task / inner : 1;
}

/* n elements of size bytes at element stride `stride` into the packed buf. */
static void gather(const char *x, int64_t stride, int64_t size, int64_t n, char *buf) {
  switch (size) {
    case 2: for (int64_t k = 0; k < n; k++) memcpy(buf + 2 * k, x + 2 * k * stride, 2); break;
    case 4: for (int64_t k = 0; k < n; k++) memcpy(buf + 4 * k, x + 4 * k * stride, 4); break;
    default: for (int64_t k = 0; k < n; k++) memcpy(buf + 8 * k, x + 8 * k * stride, 8); break;
  }
}

typedef struct reorder_args {
  const reorder_state *s;
  const char *x;
  char *y;
} reorder_args;

static void reorder_task_body(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const reorder_args *a = arg;
  const reorder_state *s = a->s;
  const adnn_nd *nd = &s->nd;
  const int r = nd->rank;
  for (int64_t it = begin; it < end; it++) {
    int64_t xo, yo;
    if (r == 0) {
      s->strided(a->x, 1, a->y, 1, 1);
      continue;
    }
    const int64_t inner = nd->dims[r - 1];
    if (s->path == PATH_ROWS) {
      outer_offsets(nd, r - 1, -1, it / s->chunks, &xo, &yo);
      const int64_t c0 = (it % s->chunks) * CHUNK;
      const int64_t n = inner - c0 < CHUNK ? inner - c0 : CHUNK;
      const char *x = a->x + (xo + c0) * s->xsz;
      char *y = a->y + (yo + c0) * s->ysz;
      if (s->row) s->row(x, y, (size_t)n);
      else memcpy(y, x, (size_t)(n * s->xsz));
    } else if (s->path == PATH_TILES) {
      const int t = s->tile_dim;
      outer_offsets(nd, r - 1, t, it / s->chunks, &xo, &yo);
      const int64_t tile = it % s->chunks;
      const int64_t a0 = (tile % s->tiles_a) * TILE, b0 = (tile / s->tiles_a) * TILE;
      const int64_t na = nd->dims[t] - a0 < TILE ? nd->dims[t] - a0 : TILE;
      const int64_t nb = inner - b0 < TILE ? inner - b0 : TILE;
      if (s->tile_swap) {
        /* y unit stride along the innermost dim b, x along dim a. */
        const int64_t xsb = nd->strides[0][r - 1], ysa = nd->strides[1][t];
        const char *x0 = a->x + (xo + a0 + b0 * xsb) * s->xsz;
        char *y0 = a->y + (yo + a0 * ysa + b0) * s->ysz;
        if (s->tile32) {
          s->tile32(x0, xsb, y0, ysa, nb, na);
          continue;
        }
        for (int64_t i = 0; i < na; i++) {
          if (s->row) {
            /* Gathered, the row converts with the vector code: the scalar
             * definition of a 16-bit narrowing is far slower. */
            _Alignas(32) char buf[TILE * 8];
            gather(x0 + i * s->xsz, xsb, s->xsz, nb, buf);
            s->row(buf, y0 + i * ysa * s->ysz, (size_t)nb);
          } else {
            s->strided(x0 + i * s->xsz, xsb, y0 + i * ysa * s->ysz, 1, nb);
          }
        }
        continue;
      }
      const int64_t xsa = nd->strides[0][t], ysb = nd->strides[1][r - 1];
      if (s->tile32) {
        s->tile32(a->x + (xo + a0 * xsa + b0) * s->xsz, xsa, a->y + (yo + a0 + b0 * ysb) * s->ysz,
                  ysb, na, nb);
        continue;
      }
      /* Down the columns of the tile: x is read at stride xsa, y written
       * contiguously along its unit-stride dim; the tile's 32 rows of x stay
       * in L1 between the columns. */
      for (int64_t j = 0; j < nb; j++) {
        const char *xc = a->x + (xo + a0 * xsa + b0 + j) * s->xsz;
        char *yc = a->y + (yo + a0 + (b0 + j) * ysb) * s->ysz;
        if (s->row) {
          _Alignas(32) char buf[TILE * 8];
          gather(xc, xsa, s->xsz, na, buf);
          s->row(buf, yc, (size_t)na);
        } else {
          s->strided(xc, xsa, yc, 1, na);
        }
      }
    } else {
      outer_offsets(nd, r - 1, -1, it, &xo, &yo);
      s->strided(a->x + xo * s->xsz, nd->strides[0][r - 1], a->y + yo * s->ysz,
                 nd->strides[1][r - 1], inner);
    }
  }
}

/* The vector converters narrow F64 through F32 with vcvtpd2ps and widen and
 * narrow F32 with SSE/AVX arithmetic, whose results on subnormals depend on
 * MXCSR's flush-to-zero and denormals-are-zero bits, which applications (and
 * DL frameworks) may set. Each task clears them while it runs and restores
 * the caller's MXCSR, so the results are those of kernels/common/convert.h
 * whatever the thread's floating-point environment. */
static void reorder_task(void *arg, int64_t begin, int64_t end, int thread) {
#ifdef REORDER_X86
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(csr & ~0x8040u); /* FTZ (bit 15) and DAZ (bit 6) off */
  reorder_task_body(arg, begin, end, thread);
  _mm_setcsr(csr);
#else
  reorder_task_body(arg, begin, end, thread);
#endif
}

static void reorder_run(const void *problem, const void *state, const void *const *inputs,
                        void *const *outputs, void *workspace) {
  (void)problem;
  (void)workspace;
  const reorder_state *s = state;
  /* y == x with the same layout and dtype (the only overlap the core lets
   * through): nothing to do. */
  if (inputs[0] == outputs[0]) return;
  reorder_args a = {s, inputs[0], outputs[0]};
  if (s->items <= s->grain) reorder_task(&a, 0, s->items, 0);
  else adnn_cpu_parallel_for(s->items, s->grain, reorder_task, &a);
}

const adnn_cpu_impl adnn_cpu_reorder_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPES_ALL,
    .state_size = sizeof(reorder_state),
    .reshape = reorder_reshape,
    .run = reorder_run,
};
