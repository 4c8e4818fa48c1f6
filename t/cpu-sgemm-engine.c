/* adnn's own F32 GEMM engine (kernels/cpu/gemm.c, compiled into this test)
 * against a double-precision reference on seeded random data.
 *
 * Covered: every microkernel this CPU can run (AVX-512, AVX2+FMA: the levels
 * ADNN_CPU_SIMD may cap the plugin at), 1 thread (before the pool starts) and
 * 2 threads (the pool), all four transposes, sizes 1, 7, 17, 33, 129, 257
 * (not multiples of the 12 x 32 / 6 x 16 tiles) and sizes beyond one cache
 * block in m, n and k, leading dimensions larger than the rows, several
 * alpha and beta values. Elements outside the matrices (the ld padding and a
 * guard after each buffer) hold NaN in A and B, so reading them fails, and a
 * sentinel in C that must survive bit for bit; with beta = 0 the outputs
 * start as NaN (C must not be read). The epilogue hook must see every element
 * exactly once, after its sum is complete. The caller's pack space (adnn_cpu_sgemm_ws and
 * adnn_cpu_sgemm_with with a pack) is exactly adnn_cpu_sgemm_pack_bytes per
 * slice, one slice per pool thread or one alone, with a guard after it that
 * must survive; the query itself is checked. adnn_cpu_sgemm's dispatch is
 * checked too: inside a pool task it never chooses OpenBLAS.
 *
 * Tolerance per element, as t/cpu-gemm.c argues it:
 *     |got - ref| <= 2 * (k + 4) * FLT_EPSILON * (|alpha| sum_p |a_ip b_pj| + |beta c_ij|)
 * with ref computed in double from the stored float values.
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_parallel.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/simd_isa.h"
#include "t/rng.h"
#include "t/tap.h"

#define GUARD 37
#define SENTINEL (-31337.5f)

static uint64_t seed_counter = 1;

typedef struct gcase {
  int ta, tb;
  int64_t m, n, k;
  float alpha, beta;
  int64_t pad; /* extra elements per row of A, B and C */
} gcase;

/* The epilogue of the checks: adds bias[col] and counts each visit. */
typedef struct epi_check {
  const float *bias;
  int *visits;
  int64_t ldc, m, n;
  int bad_tile; /* a tile outside C or larger than documented */
} epi_check;

static void epi_fn(const void *arg, float *c, int64_t ldc, int64_t row0, int64_t col0,
                   int64_t rows, int64_t cols) {
  epi_check *e = (epi_check *)arg;
  if (row0 < 0 || col0 < 0 || row0 + rows > e->m || col0 + cols > e->n || ldc != e->ldc ||
      rows > ADNN_CPU_GEMM_TILE_MAX || cols > ADNN_CPU_GEMM_TILE_MAX || rows < 1 || cols < 1) {
    e->bad_tile = 1;
    return;
  }
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) {
      c[i * ldc + j] += e->bias[col0 + j];
      __atomic_fetch_add(&e->visits[(row0 + i) * e->n + col0 + j], 1, __ATOMIC_RELAXED);
    }
}

/* Runs one case on the engine (or through adnn_cpu_sgemm when dispatch is
 * set) and returns 1 when every element is within tolerance; on failure, a
 * diagnostic names the first bad element. */
/* dispatch: 0 the engine (pack buffers from its free list), 1
 * adnn_cpu_sgemm's choice, 2 the OpenBLAS path, 3 the engine with a caller's
 * pack space of one slice per pool thread, 4 the same with a single slice
 * (the calling thread alone), 5 adnn_cpu_sgemm_ws with one slice. In modes
 * 3-5 the slices are exactly adnn_cpu_sgemm_pack_bytes long and a NaN-free
 * guard pattern after them must survive. */
#define PACK_GUARD 256
static const unsigned char pack_pattern = 0xa5;
static int run_case(int isa, const gcase *g, int with_epilogue, int dispatch, const char *what) {
  tap_rng r = tap_rng_seed(seed_counter++);
  const int64_t arows = g->ta ? g->k : g->m, acols = g->ta ? g->m : g->k;
  const int64_t brows = g->tb ? g->n : g->k, bcols = g->tb ? g->k : g->n;
  const int64_t lda = acols + g->pad, ldb = bcols + g->pad, ldc = g->n + g->pad;
  const size_t asz = (size_t)(arows * lda + GUARD), bsz = (size_t)(brows * ldb + GUARD),
               csz = (size_t)(g->m * ldc + GUARD);
  float *a = malloc(asz * sizeof(float)), *b = malloc(bsz * sizeof(float));
  float *c = malloc(csz * sizeof(float)), *c0 = malloc(csz * sizeof(float));
  float *bias = malloc((size_t)g->n * sizeof(float));
  int *visits = calloc((size_t)(g->m * g->n), sizeof(int));
  if (!a || !b || !c || !c0 || !bias || !visits) {
    diag("out of memory");
    free(a), free(b), free(c), free(c0), free(bias), free(visits);
    return 0;
  }
  for (size_t i = 0; i < asz; i++) a[i] = NAN;
  for (size_t i = 0; i < bsz; i++) b[i] = NAN;
  for (size_t i = 0; i < csz; i++) c[i] = SENTINEL;
  for (int64_t i = 0; i < arows; i++)
    for (int64_t j = 0; j < acols; j++) a[i * lda + j] = (float)tap_rng_uniform(&r, -1, 1);
  for (int64_t i = 0; i < brows; i++)
    for (int64_t j = 0; j < bcols; j++) b[i * ldb + j] = (float)tap_rng_uniform(&r, -1, 1);
  for (int64_t i = 0; i < g->m; i++)
    for (int64_t j = 0; j < g->n; j++)
      c[i * ldc + j] = g->beta == 0.0f ? NAN : (float)tap_rng_uniform(&r, -1, 1);
  for (int64_t j = 0; j < g->n; j++) bias[j] = (float)tap_rng_uniform(&r, -1, 1);
  memcpy(c0, c, csz * sizeof(float));
  epi_check e = {bias, visits, ldc, g->m, g->n, 0};
  adnn_cpu_gemm_epilogue epi = {epi_fn, &e};
  int good = 1;
  unsigned char *space = NULL;
  size_t slice = 0, space_bytes = 0;
  adnn_cpu_gemm_pack pack = {NULL, 0, 0};
  if (dispatch >= 3) {
    slice = adnn_cpu_sgemm_pack_bytes(isa, g->m, g->n, g->k);
    pack.slices = dispatch == 3 ? adnn_cpu_parallel_threads() : 1;
    space_bytes = slice * (size_t)pack.slices;
    space = aligned_alloc(64, space_bytes + PACK_GUARD);
    if (!space || slice % 64 != 0) {
      diag("%s: no pack space (slice %zu bytes)", what, slice);
      free(space);
      free(a), free(b), free(c), free(c0), free(bias), free(visits);
      return 0;
    }
    memset(space, pack_pattern, space_bytes + PACK_GUARD);
    pack.base = space;
    pack.slice_bytes = slice;
  }
  if (dispatch == 2)
    adnn_cpu_sgemm_with(ADNN_CPU_SGEMM_OPENBLAS, isa, g->ta, g->tb, g->m, g->n, g->k, g->alpha, a,
                        lda, b, ldb, g->beta, c, ldc, with_epilogue ? &epi : NULL, NULL);
  else if (dispatch == 1)
    adnn_cpu_sgemm(isa, g->ta, g->tb, g->m, g->n, g->k, g->alpha, a, lda, b, ldb, g->beta, c, ldc,
                   with_epilogue ? &epi : NULL);
  else if (dispatch == 5)
    adnn_cpu_sgemm_ws(isa, g->ta, g->tb, g->m, g->n, g->k, g->alpha, a, lda, b, ldb, g->beta, c,
                      ldc, with_epilogue ? &epi : NULL, &pack);
  else
    adnn_cpu_sgemm_with(ADNN_CPU_SGEMM_ENGINE, isa, g->ta, g->tb, g->m, g->n, g->k, g->alpha, a,
                        lda, b, ldb, g->beta, c, ldc, with_epilogue ? &epi : NULL,
                        dispatch >= 3 ? &pack : NULL);
  if (space) {
    for (size_t i = space_bytes; i < space_bytes + PACK_GUARD && good; i++)
      if (space[i] != pack_pattern) {
        diag("%s: the engine wrote past its pack space (%d slice(s) of %zu bytes)", what,
             pack.slices, slice);
        good = 0;
      }
    free(space);
  }
  if (e.bad_tile) {
    diag("%s: the epilogue got a tile outside C or larger than documented", what);
    good = 0;
  }
  for (int64_t i = 0; i < g->m && good; i++)
    for (int64_t j = 0; j < g->n && good; j++) {
      double sum = 0.0, abs_sum = 0.0;
      for (int64_t p = 0; p < g->k; p++) {
        double x = g->ta ? a[p * lda + i] : a[i * lda + p];
        double y = g->tb ? b[j * ldb + p] : b[p * ldb + j];
        sum += x * y;
        abs_sum += fabs(x * y);
      }
      double cin = g->beta == 0.0f ? 0.0 : (double)c0[i * ldc + j];
      double ref = (double)g->alpha * sum + (double)g->beta * cin;
      double tol = 2.0 * (double)(g->k + 4) * FLT_EPSILON *
                   (fabs((double)g->alpha) * abs_sum + fabs((double)g->beta * cin));
      if (with_epilogue) {
        ref += bias[j];
        tol += 2.0 * FLT_EPSILON * (fabs(ref) + fabs((double)bias[j]));
        if (visits[i * g->n + j] != 1) {
          diag("%s: the epilogue saw C[%lld][%lld] %d times", what, (long long)i, (long long)j,
               visits[i * g->n + j]);
          good = 0;
        }
      }
      double got = c[i * ldc + j];
      if (!(fabs(got - ref) <= tol)) {
        diag("%s: C[%lld][%lld] = %.9g, reference %.9g (tolerance %.3g)", what, (long long)i,
             (long long)j, got, ref, tol);
        good = 0;
      }
    }
  /* Everything that is not an output keeps its sentinel. */
  for (int64_t i = 0; i < g->m && good; i++)
    for (int64_t j = g->n; j < ldc && good; j++)
      if (memcmp(&c[i * ldc + j], &c0[i * ldc + j], sizeof(float)) != 0) {
        diag("%s: padding C[%lld][%lld] was written", what, (long long)i, (long long)j);
        good = 0;
      }
  for (size_t i = (size_t)(g->m * ldc); i < csz && good; i++)
    if (memcmp(&c[i], &c0[i], sizeof(float)) != 0) {
      diag("%s: the guard after C was written", what);
      good = 0;
    }
  free(a), free(b), free(c), free(c0), free(bias), free(visits);
  return good;
}

static const char *mode_name(int mode) {
  return mode == 0   ? "cached pack buffers"
         : mode == 3 ? "caller's pack space, a slice per thread"
         : mode == 4 ? "caller's pack space, one slice"
                     : "adnn_cpu_sgemm_ws, one slice";
}

static const int64_t sizes[] = {1, 7, 17, 33, 129, 257};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static const struct {
  float alpha, beta;
} scalars[] = {{1.0f, 0.0f}, {-0.5f, 0.0f}, {1.0f, 1.0f}, {0.75f, -1.5f}, {2.0f, 0.5f}};
#define NSCALARS ((int)(sizeof scalars / sizeof scalars[0]))

/* Every transpose pair over the size grid: m and n take every size, k
 * cycles through them, alpha/beta and the ld padding cycle too. */
static void grid(int isa, const char *isa_name, int threads, int mode) {
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++) {
      int good = 1, cases = 0;
      for (int im = 0; im < NSIZES; im++)
        for (int in = 0; in < NSIZES; in++) {
          int ik = (im + 2 * in) % NSIZES, is = (im + in) % NSCALARS;
          gcase g = {ta, tb, sizes[im], sizes[in], sizes[ik], scalars[is].alpha,
                     scalars[is].beta, (im + in) % 3 == 0 ? 0 : 3 + in};
          char what[160];
          snprintf(what, sizeof what, "%s %d thread(s) ta=%d tb=%d m=%lld n=%lld k=%lld "
                   "alpha=%g beta=%g pad=%lld", isa_name, threads, ta, tb, (long long)g.m,
                   (long long)g.n, (long long)g.k, g.alpha, g.beta, (long long)g.pad);
          if (!run_case(isa, &g, 0, mode, what)) good = 0;
          cases++;
        }
      ok(good, "%s, %d thread(s), ta=%d tb=%d, %s: %d shapes over {1,7,17,33,129,257}, "
         "alpha/beta and ld > n", isa_name, threads, ta, tb, mode_name(mode), cases);
    }
}

/* Shapes beyond one cache block in each dimension (several k blocks, m
 * blocks and n tiles), and the epilogue. */
static void blocks(int isa, const char *isa_name, int threads, int mode) {
  adnn_cpu_gemm_blocking bl;
  adnn_cpu_sgemm_blocking(isa, &bl);
  const gcase list[] = {
      {0, 0, 19, 23, 2 * bl.kc + 5, 1.0f, 0.0f, 1},
      {1, 1, 21, 35, 2 * bl.kc + 5, -1.0f, 1.0f, 0},
      {0, 1, bl.mc + bl.mr + 3, 45, 31, 1.0f, 0.0f, 2},
      {1, 0, 2 * bl.mc + 1, 37, 9, 0.5f, 0.25f, 0},
      {0, 0, 13, bl.nc + bl.nr + 7, 5, 1.0f, 0.0f, 5},
      {1, 1, 5, bl.nc + 3, 11, 1.0f, -1.0f, 0},
  };
  int good = 1;
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) {
    char what[160];
    snprintf(what, sizeof what, "%s %d thread(s) ta=%d tb=%d m=%lld n=%lld k=%lld", isa_name,
             threads, list[i].ta, list[i].tb, (long long)list[i].m, (long long)list[i].n,
             (long long)list[i].k);
    if (!run_case(isa, &list[i], 0, mode, what)) good = 0;
  }
  ok(good, "%s, %d thread(s), %s: m > mc (%lld), n > nc (%lld), k > kc (%lld)", isa_name,
     threads, mode_name(mode), (long long)bl.mc, (long long)bl.nc, (long long)bl.kc);
  good = 1;
  const gcase epi_list[] = {
      {0, 0, 129, 257, 33, 1.0f, 0.0f, 3},
      {1, 0, 7, 33, 2 * bl.kc + 1, 1.0f, 1.0f, 0},
      {0, 1, bl.mc + 5, 17, 7, -2.0f, 0.5f, 1},
  };
  for (size_t i = 0; i < sizeof epi_list / sizeof epi_list[0]; i++) {
    char what[160];
    snprintf(what, sizeof what, "%s %d thread(s) epilogue m=%lld n=%lld k=%lld", isa_name,
             threads, (long long)epi_list[i].m, (long long)epi_list[i].n,
             (long long)epi_list[i].k);
    if (!run_case(isa, &epi_list[i], 1, mode, what)) good = 0;
  }
  ok(good, "%s, %d thread(s), %s: the epilogue sees every element once, after its sum",
     isa_name, threads, mode_name(mode));
}

/* k = 0 and alpha = 0: C = beta * C, A and B never read (they are NaN). */
static void degenerate(int isa, const char *isa_name) {
  float a[4] = {NAN, NAN, NAN, NAN}, b[4] = {NAN, NAN, NAN, NAN};
  float c[6] = {NAN, NAN, NAN, NAN, NAN, NAN};
  adnn_cpu_sgemm_with(ADNN_CPU_SGEMM_ENGINE, isa, 0, 0, 2, 3, 0, 1.0f, a, 1, b, 3, 0.0f, c, 3,
                      NULL, NULL);
  int good = 1;
  for (int i = 0; i < 6; i++) good &= c[i] == 0.0f;
  float d[6] = {1, 2, 3, 4, 5, 6};
  adnn_cpu_sgemm_with(ADNN_CPU_SGEMM_ENGINE, isa, 1, 1, 2, 3, 2, 0.0f, a, 2, b, 2, 2.0f, d, 3,
                      NULL, NULL);
  for (int i = 0; i < 6; i++) good &= d[i] == 2.0f * (float)(i + 1);
  ok(good, "%s: k = 0 and alpha = 0 give beta * C without reading A or B", isa_name);
}

/* The pack-space query: 0 where the engine never packs, a multiple of 64,
 * monotone in each size; a pack space too small for the call (a caller's
 * bug) still gives the right result (through OpenBLAS). */
static void pack_space_checks(int isa, const char *isa_name) {
  int good = adnn_cpu_sgemm_pack_bytes(ADNN_CPU_ISA_BASE, 64, 64, 64) == 0 &&
             adnn_cpu_sgemm_pack_bytes(isa, 0, 64, 64) == 0 &&
             adnn_cpu_sgemm_pack_bytes(isa, 64, 64, 0) == 0;
  const int64_t dims[] = {1, 5, 6, 17, 100, 333, 1000, 5000};
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++)
      for (int l = 0; l < 8; l++) {
        size_t here = adnn_cpu_sgemm_pack_bytes(isa, dims[i], dims[j], dims[l]);
        good &= here % 64 == 0 && here > 0;
        if (i < 7) good &= adnn_cpu_sgemm_pack_bytes(isa, dims[i + 1], dims[j], dims[l]) >= here;
        if (j < 7) good &= adnn_cpu_sgemm_pack_bytes(isa, dims[i], dims[j + 1], dims[l]) >= here;
        if (l < 7) good &= adnn_cpu_sgemm_pack_bytes(isa, dims[i], dims[j], dims[l + 1]) >= here;
      }
  ok(good, "%s: adnn_cpu_sgemm_pack_bytes is 0 without packing, else a monotone multiple of 64",
     isa_name);
  /* Half the slice it needs: the call runs OpenBLAS, correctly, and does not
   * write the pack space at all. */
  tap_rng r = tap_rng_seed(seed_counter++);
  const int64_t m = 37, n = 41, k = 29;
  float a[37 * 29], b[29 * 41], c[37 * 41];
  for (int64_t i = 0; i < m * k; i++) a[i] = (float)tap_rng_uniform(&r, -1, 1);
  for (int64_t i = 0; i < k * n; i++) b[i] = (float)tap_rng_uniform(&r, -1, 1);
  for (int64_t i = 0; i < m * n; i++) c[i] = NAN;
  const size_t need = adnn_cpu_sgemm_pack_bytes(isa, m, n, k);
  unsigned char *space = aligned_alloc(64, need);
  good = space != NULL;
  if (space) {
    memset(space, pack_pattern, need);
    adnn_cpu_gemm_pack pack = {space, need / 2, 1};
    adnn_cpu_sgemm_with(ADNN_CPU_SGEMM_ENGINE, isa, 0, 0, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n,
                        NULL, &pack);
    for (size_t i = 0; i < need; i++) good &= space[i] == pack_pattern;
    for (int64_t i = 0; i < m && good; i++)
      for (int64_t j = 0; j < n; j++) {
        double ref = 0.0, abs_sum = 0.0;
        for (int64_t p = 0; p < k; p++) {
          ref += (double)a[i * k + p] * b[p * n + j];
          abs_sum += fabs((double)a[i * k + p] * b[p * n + j]);
        }
        if (!(fabs(c[i * n + j] - ref) <= 2.0 * (k + 4) * FLT_EPSILON * abs_sum)) good = 0;
      }
    free(space);
  }
  ok(good, "%s: a pack space too small for the call runs OpenBLAS, correctly, untouched",
     isa_name);
}

/* Pre-packed A (adnn_cpu_sgemm_pack_a + adnn_cpu_sgemm_ws_packed_a): the
 * same bits as the engine packing A itself (which run_case checks against
 * the double-precision reference), with and without an epilogue, with the
 * caller's pack space and with one too small (the free list then serves);
 * the packer writes exactly adnn_cpu_sgemm_packed_a_bytes (a guard after it
 * survives) and the packed call never reads the original A (it is NaN by
 * then). */
static int packed_a_case(int isa, const gcase *g, int with_epilogue, int small_pack) {
  tap_rng r = tap_rng_seed(seed_counter++);
  const int64_t arows = g->ta ? g->k : g->m, acols = g->ta ? g->m : g->k;
  const int64_t brows = g->tb ? g->n : g->k, bcols = g->tb ? g->k : g->n;
  const int64_t lda = acols + g->pad, ldb = bcols + g->pad, ldc = g->n + g->pad;
  const size_t apk_bytes = adnn_cpu_sgemm_packed_a_bytes(isa, g->m, g->k);
  const size_t slice = adnn_cpu_sgemm_pack_bytes(isa, g->m, g->n, g->k);
  const int threads = adnn_cpu_parallel_threads();
  float *a = malloc((size_t)(arows * lda) * sizeof(float));
  float *b = malloc((size_t)(brows * ldb) * sizeof(float));
  float *c1 = malloc((size_t)(g->m * ldc) * sizeof(float));
  float *c2 = malloc((size_t)(g->m * ldc) * sizeof(float));
  float *bias = malloc((size_t)g->n * sizeof(float));
  int *visits = calloc((size_t)(g->m * g->n), sizeof(int));
  unsigned char *apk = aligned_alloc(64, apk_bytes + PACK_GUARD);
  unsigned char *space = aligned_alloc(64, slice * (size_t)threads + 64);
  int good = a && b && c1 && c2 && bias && visits && apk && space && apk_bytes % 64 == 0 &&
             apk_bytes > 0;
  if (good) {
    for (int64_t i = 0; i < arows * lda; i++) a[i] = (float)tap_rng_uniform(&r, -1, 1);
    for (int64_t i = 0; i < brows * ldb; i++) b[i] = (float)tap_rng_uniform(&r, -1, 1);
    for (int64_t i = 0; i < g->m * ldc; i++) c1[i] = (float)tap_rng_uniform(&r, -1, 1);
    memcpy(c2, c1, (size_t)(g->m * ldc) * sizeof(float));
    for (int64_t j = 0; j < g->n; j++) bias[j] = (float)tap_rng_uniform(&r, -1, 1);
    epi_check e = {bias, visits, ldc, g->m, g->n, 0};
    adnn_cpu_gemm_epilogue epi = {epi_fn, &e};
    adnn_cpu_gemm_pack pack = {space, slice, threads};
    adnn_cpu_sgemm_with(ADNN_CPU_SGEMM_ENGINE, isa, g->ta, g->tb, g->m, g->n, g->k, g->alpha, a,
                        lda, b, ldb, g->beta, c1, ldc, with_epilogue ? &epi : NULL, &pack);
    if (small_pack) pack.slice_bytes = slice / 2;
    memset(visits, 0, (size_t)(g->m * g->n) * sizeof(int));
    memset(apk, pack_pattern, apk_bytes + PACK_GUARD);
    adnn_cpu_sgemm_pack_a(isa, g->ta, g->m, g->k, a, lda, (float *)apk);
    for (size_t i = apk_bytes; i < apk_bytes + PACK_GUARD; i++) good &= apk[i] == pack_pattern;
    for (int64_t i = 0; i < arows * lda; i++) a[i] = NAN;
    adnn_cpu_sgemm_ws_packed_a(isa, g->tb, g->m, g->n, g->k, g->alpha, (const float *)apk, b,
                               ldb, g->beta, c2, ldc, with_epilogue ? &epi : NULL, &pack);
    good &= memcmp(c1, c2, (size_t)(g->m * ldc) * sizeof(float)) == 0 && !e.bad_tile;
    if (with_epilogue)
      for (int64_t i = 0; i < g->m * g->n; i++) good &= visits[i] == 1;
    if (!good)
      diag("packed A: ta=%d tb=%d m=%lld n=%lld k=%lld epilogue=%d small pack=%d differs", g->ta,
           g->tb, (long long)g->m, (long long)g->n, (long long)g->k, with_epilogue, small_pack);
  }
  free(a), free(b), free(c1), free(c2), free(bias), free(visits), free(apk), free(space);
  return good;
}

static void packed_a_checks(int isa, const char *isa_name) {
  adnn_cpu_gemm_blocking bl;
  adnn_cpu_sgemm_blocking(isa, &bl);
  const gcase list[] = {
      {0, 0, 1, 1, 1, 1.0f, 0.0f, 0},
      {0, 0, 64, 3136 / 4, 64, 1.0f, 0.0f, 0},
      {0, 0, 2 * bl.mc + bl.mr + 1, 49, 2 * bl.kc + 7, 1.0f, 0.0f, 3},
      {1, 0, 37, 130, bl.kc + 1, -0.5f, 1.0f, 1},
      {0, 1, 19, 45, 31, 1.0f, 0.25f, 2},
      {1, 1, bl.mc + 5, bl.nc + bl.nr + 3, 9, 2.0f, 0.0f, 0},
  };
  int good = adnn_cpu_sgemm_packed_a_bytes(ADNN_CPU_ISA_BASE, 64, 64) == 0 &&
             adnn_cpu_sgemm_packed_a_bytes(isa, 0, 64) == 0 &&
             adnn_cpu_sgemm_packed_a_bytes(isa, 64, 0) == 0;
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
    for (int mode = 0; mode < 3; mode++)
      good &= packed_a_case(isa, &list[i], mode != 0, mode == 2);
  ok(good, "%s, %d thread(s): pre-packed A gives the engine's bits (epilogue, small pack space)",
     isa_name, adnn_cpu_parallel_threads());
}

/* The half-width edge kernel (tiles of at most NR / 2 columns) forms each
 * sum as the full kernel does: columns NR .. NR + 4 of a call with n = NR + 5
 * (an edge tile of 5 columns) equal, bit for bit, the same columns computed
 * inside a full-width tile (B shifted by NR / 2 columns, n = NR / 2 + 5), for
 * beta 0 and 1 and k above kc. */
static void half_tile_checks(int isa, const char *isa_name) {
  adnn_cpu_gemm_blocking bl;
  adnn_cpu_sgemm_blocking(isa, &bl);
  const int64_t nr = bl.nr, m = 2 * bl.mr + 3, n = nr + 5, k = bl.kc + 9, ldb = n, ldc = n;
  tap_rng r = tap_rng_seed(seed_counter++);
  float *a = malloc((size_t)(m * k) * sizeof(float)), *b = malloc((size_t)(k * n) * sizeof(float));
  float *c1 = malloc((size_t)(m * ldc) * sizeof(float)), *c2 = malloc((size_t)(m * ldc) * sizeof(float));
  int good = a && b && c1 && c2;
  for (int beta1 = 0; beta1 < 2 && good; beta1++) {
    for (int64_t i = 0; i < m * k; i++) a[i] = (float)tap_rng_uniform(&r, -1, 1);
    for (int64_t i = 0; i < k * n; i++) b[i] = (float)tap_rng_uniform(&r, -1, 1);
    for (int64_t i = 0; i < m * ldc; i++) c1[i] = (float)tap_rng_uniform(&r, -1, 1);
    memcpy(c2, c1, (size_t)(m * ldc) * sizeof(float));
    const float beta = beta1 ? 1.0f : 0.0f;
    adnn_cpu_sgemm_with(ADNN_CPU_SGEMM_ENGINE, isa, 0, 0, m, n, k, 0.75f, a, k, b, ldb, beta, c1,
                        ldc, NULL, NULL);
    adnn_cpu_sgemm_with(ADNN_CPU_SGEMM_ENGINE, isa, 0, 0, m, nr / 2 + 5, k, 0.75f, a, k,
                        b + nr / 2, ldb, beta, c2 + nr / 2, ldc, NULL, NULL);
    for (int64_t i = 0; i < m; i++)
      good &= memcmp(c1 + i * ldc + nr, c2 + i * ldc + nr, 5 * sizeof(float)) == 0;
  }
  free(a), free(b), free(c1), free(c2);
  ok(good, "%s: an edge tile of at most NR / 2 columns gives the full tile's bits", isa_name);
}

/* Narrow calls (n <= 128 columns) read untransposed A in place instead of
 * packing it (gemm.c, DIRECT_A_COLS), with kernels that form each sum in
 * the packed kernels' order: the first n2 columns of a narrow call equal,
 * bit for bit, the same columns of a call 320 columns wide (which packs A),
 * for n2 = 49 and 116 (full tiles, an edge of 1 or 4 columns), rows not a
 * multiple of MR, lda > k, k above kc, beta 0 and 1. */
static void direct_a_checks(int isa, const char *isa_name) {
  adnn_cpu_gemm_blocking bl;
  adnn_cpu_sgemm_blocking(isa, &bl);
  const int64_t m = 3 * bl.mr + 5, n = 320, k = bl.kc + 9, lda = k + 3, ldb = n, ldc = n;
  const int64_t narrow[] = {49, 116};
  tap_rng r = tap_rng_seed(seed_counter++);
  float *a = malloc((size_t)(m * lda) * sizeof(float)), *b = malloc((size_t)(k * n) * sizeof(float));
  float *c1 = malloc((size_t)(m * ldc) * sizeof(float)), *c2 = malloc((size_t)(m * ldc) * sizeof(float));
  int good = a && b && c1 && c2;
  for (int t = 0; t < 4 && good; t++) {
    const int beta1 = t & 1;
    const int64_t n2 = narrow[t >> 1];
    for (int64_t i = 0; i < m * lda; i++) a[i] = (float)tap_rng_uniform(&r, -1, 1);
    for (int64_t i = 0; i < k * n; i++) b[i] = (float)tap_rng_uniform(&r, -1, 1);
    for (int64_t i = 0; i < m * ldc; i++) c1[i] = (float)tap_rng_uniform(&r, -1, 1);
    memcpy(c2, c1, (size_t)(m * ldc) * sizeof(float));
    const float beta = beta1 ? 1.0f : 0.0f;
    adnn_cpu_sgemm_with(ADNN_CPU_SGEMM_ENGINE, isa, 0, 0, m, n, k, 0.75f, a, lda, b, ldb, beta, c1,
                        ldc, NULL, NULL);
    adnn_cpu_sgemm_with(ADNN_CPU_SGEMM_ENGINE, isa, 0, 0, m, n2, k, 0.75f, a, lda, b, ldb, beta,
                        c2, ldc, NULL, NULL);
    for (int64_t i = 0; i < m; i++)
      good &= memcmp(c1 + i * ldc, c2 + i * ldc, (size_t)n2 * sizeof(float)) == 0;
  }
  free(a), free(b), free(c1), free(c2);
  ok(good, "%s: narrow calls (A read in place) give the packed path's bits", isa_name);
}

typedef struct in_task_arg {
  int isa;
  adnn_cpu_sgemm_impl chosen;
  int good;
} in_task_arg;

static void in_task(void *arg, int64_t b0, int64_t b1, int thread) {
  (void)b0, (void)b1, (void)thread;
  in_task_arg *t = arg;
  t->chosen = adnn_cpu_sgemm_choose(t->isa, 0, 0, 2048, 2048, 2048);
  gcase g = {0, 1, 33, 17, 129, 1.0f, 0.0f, 2};
  t->good = run_case(t->isa, &g, 1, 1, "adnn_cpu_sgemm inside a pool task");
  /* A plan's conv tile: its own single slice, exactly sized. */
  gcase h = {1, 0, 70, 300, 2 * 600 + 3, 0.5f, 1.0f, 1};
  t->good &= run_case(t->isa, &h, 1, 5, "adnn_cpu_sgemm_ws inside a pool task, one slice");
}

int main(void) {
  const adnn_cpu_features *f = adnn_cpu_features_get();
  struct {
    int isa, usable;
    const char *name;
  } levels[] = {{ADNN_CPU_ISA_AVX512, f->avx512f, "avx512"},
                {ADNN_CPU_ISA_AVX2, f->avx2 && f->fma, "avx2"}};
  int any = 0;
  for (int l = 0; l < 2; l++) any |= levels[l].usable;
  if (!any) return tap_skip_all("this CPU has neither AVX2+FMA nor AVX-512F");
  for (int l = 0; l < 2; l++)
    if (!levels[l].usable) diag("%s: not supported by this CPU or OS, skipped", levels[l].name);
  ok(!adnn_cpu_sgemm_engine_isa(ADNN_CPU_ISA_BASE) &&
         adnn_cpu_sgemm_choose(ADNN_CPU_ISA_BASE, 0, 0, 64, 64, 64) == ADNN_CPU_SGEMM_OPENBLAS,
     "baseline level: no microkernel, OpenBLAS is chosen");
  /* One thread: the pool has not started yet. */
  for (int l = 0; l < 2; l++)
    if (levels[l].usable) {
      grid(levels[l].isa, levels[l].name, 1, 0);
      grid(levels[l].isa, levels[l].name, 1, 4);
      blocks(levels[l].isa, levels[l].name, 1, 0);
      blocks(levels[l].isa, levels[l].name, 1, 4);
      degenerate(levels[l].isa, levels[l].name);
      packed_a_checks(levels[l].isa, levels[l].name);
      half_tile_checks(levels[l].isa, levels[l].name);
      direct_a_checks(levels[l].isa, levels[l].name);
    }
  int started = adnn_cpu_parallel_init(2);
  if (started < 2) diag("the pool started %d thread(s) only", started);
  for (int l = 0; l < 2; l++)
    if (levels[l].usable) {
      grid(levels[l].isa, levels[l].name, started, 0);
      grid(levels[l].isa, levels[l].name, started, 3);
      blocks(levels[l].isa, levels[l].name, started, 0);
      blocks(levels[l].isa, levels[l].name, started, 3);
      blocks(levels[l].isa, levels[l].name, started, 4);
      pack_space_checks(levels[l].isa, levels[l].name);
      packed_a_checks(levels[l].isa, levels[l].name);
    }
  for (int l = 0; l < 2; l++)
    if (levels[l].usable) {
      /* Even when told OpenBLAS is fast, a call inside a pool task stays on
       * the engine (and runs on the calling thread). */
      adnn_cpu_sgemm_set_openblas_fast(1);
      in_task_arg t = {levels[l].isa, ADNN_CPU_SGEMM_OPENBLAS, 0};
      adnn_cpu_parallel_for(1, 1, in_task, &t);
      adnn_cpu_sgemm_set_openblas_fast(0);
      ok(t.chosen == ADNN_CPU_SGEMM_ENGINE && t.good,
         "%s: inside a pool task adnn_cpu_sgemm runs the engine, correctly", levels[l].name);
      gcase g = {1, 0, 65, 129, 17, 1.0f, 0.0f, 0};
      ok(run_case(levels[l].isa, &g, 1, 1, "adnn_cpu_sgemm outside a task"),
         "%s: adnn_cpu_sgemm (dispatch) outside a task, with an epilogue", levels[l].name);
    }
  /* The rule outside tasks: the engine unless OpenBLAS has AVX kernels and
   * the GEMM is large (doc/cpu.md). */
  int isa = levels[0].usable ? levels[0].isa : levels[1].isa;
  int rule = adnn_cpu_sgemm_choose(isa, 0, 0, 2048, 2048, 2048) == ADNN_CPU_SGEMM_ENGINE;
  adnn_cpu_sgemm_set_openblas_fast(1);
  rule &= adnn_cpu_sgemm_choose(isa, 0, 0, 2048, 2048, 2048) == ADNN_CPU_SGEMM_OPENBLAS;
  rule &= adnn_cpu_sgemm_choose(isa, 1, 1, 256, 2048, 2048) == ADNN_CPU_SGEMM_ENGINE;
  adnn_cpu_sgemm_set_openblas_fast(0);
  ok(rule, "dispatch outside tasks: the engine for a slow OpenBLAS, OpenBLAS's AVX kernels for "
     "large GEMMs only");
  gcase gob = {0, 1, 129, 100, 33, 1.5f, 0.5f, 2};
  ok(run_case(isa, &gob, 1, 2, "OpenBLAS path with an epilogue"),
     "the OpenBLAS path applies the epilogue to every element once (64 x 64 tiles)");
  return tap_done();
}
