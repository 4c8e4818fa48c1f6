/* Every low-precision GEMM path of the CPU plugin's dispatch table
 * (kernels/cpu/gemm_lowp.c) that this CPU can run, below the matmul: its
 * block function on one tile, for every input dtype the path serves, on
 * shapes that cross the microkernels' edges (1 and 13 rows, 1, 17 and 33
 * columns against 12 x 32 and 6 x 16 tiles), odd K and K over several k
 * blocks, and operands stored row-major, transposed and gathered (stride
 * 2 along both sides).
 *
 * INT8 (s8 x s8, u8 x s8): the I32 tile must equal the exact sum, computed
 * in 64 bits; besides seeded random bytes, the extreme cases take every
 * product at its largest magnitude with the largest K the core allows
 * (doc/numerics.md), where the VNNI path's partial sums of a + 128 wrap
 * around and must come back.
 * F16 / BF16: each element within gamma_K(2^-24) sum_k |a||b| (the F32
 * accumulation bound of doc/numerics.md) plus K 2^-126 (the flush of
 * subnormal partial sums by vdpbf16ps) of the exact sum in double on the
 * same 16-bit inputs; NaN and infinities where the sum has them. One case
 * puts subnormal BF16 values in a against b values of 2^100, so that
 * reading them as zero (what vdpbf16ps does) misses the bound by far: the
 * avx512_bf16 path must recompute that tile by widening.
 * The C tile (ldc wider than the tile) is poisoned first; its gap columns
 * must stay poisoned and every element must be written. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adnn/plugin.h"
#include "kernels/common/float16.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/gemm_lowp.h"
#include "kernels/cpu/simd_isa.h"
#include "t/rng.h"
#include "t/tap.h"

enum store { ROW = 0, TRANS = 1, GATHER = 2 };
enum fill { RANDOM = 0, EXTREME = 1, SPECIALS = 2, SUBNORMAL = 3 };

typedef struct gl_case {
  const char *name;
  int64_t M, N, K;
  enum store sa, sb;
  enum fill fill;
} gl_case;

static const gl_case cases[] = {
    {"12x32 K 64", 12, 32, 64, ROW, ROW, RANDOM},
    {"13x33 K 7 (edges, odd K)", 13, 33, 7, ROW, ROW, RANDOM},
    {"1x1 K 513 (three k blocks)", 1, 1, 513, ROW, ROW, RANDOM},
    {"37x17 K 600 a^T", 37, 17, 600, TRANS, ROW, RANDOM},
    {"25x70 K 301 b^T", 25, 70, 301, ROW, TRANS, RANDOM},
    {"19x45 K 259 gathered a, b", 19, 45, 259, GATHER, GATHER, RANDOM},
    {"384x256 K 256 (a whole tile)", 384, 256, 256, ROW, ROW, RANDOM},
    {"7x40 K 90 a^T b^T", 7, 40, 90, TRANS, TRANS, RANDOM},
    {"9x35 K 33 NaN and infinities", 9, 35, 33, ROW, ROW, SPECIALS},
    {"14x33 K 70 subnormal a against 2^100 b", 14, 33, 70, ROW, ROW, SUBNORMAL},
};

static int is_integer(adnn_dtype t) { return t == ADNN_DTYPE_I8 || t == ADNN_DTYPE_U8; }
static size_t dsize(adnn_dtype t) { return is_integer(t) ? 1 : 2; }

/* Element (i, j) of an R x S operand stored as st: its offset, and the
 * strides handed to the block. */
static void layout(enum store st, int64_t R, int64_t S, int64_t *rs, int64_t *cs,
                   int64_t *span) {
  *rs = S, *cs = 1; /* ROW */
  if (st == TRANS) *rs = 1, *cs = R;
  if (st == GATHER) *rs = 2 * S + 3, *cs = 2;
  *span = (R - 1) * *rs + (S - 1) * *cs + 1;
}

static double value(adnn_dtype t, const void *base, int64_t off) {
  switch (t) {
    case ADNN_DTYPE_I8: return ((const int8_t *)base)[off];
    case ADNN_DTYPE_U8: return ((const uint8_t *)base)[off];
    case ADNN_DTYPE_F16: return adnn_f16_to_f64(((const uint16_t *)base)[off]);
    default: return adnn_bf16_to_f64(((const uint16_t *)base)[off]);
  }
}

static void set(adnn_dtype t, void *base, int64_t off, double v) {
  switch (t) {
    case ADNN_DTYPE_I8: ((int8_t *)base)[off] = (int8_t)v; break;
    case ADNN_DTYPE_U8: ((uint8_t *)base)[off] = (uint8_t)v; break;
    case ADNN_DTYPE_F16: ((uint16_t *)base)[off] = adnn_f64_to_f16(v); break;
    default: ((uint16_t *)base)[off] = adnn_f64_to_bf16(v); break;
  }
}

/* Fills the R x S operand; `which` 0 is a, 1 is b. Gaps get values too
 * (never read). */
static void fill(adnn_dtype t, void *base, int64_t span, int64_t R, int64_t S, int64_t rs,
                 int64_t cs, enum fill f, int which, tap_rng *rng) {
  for (int64_t i = 0; i < span; i++)
    set(t, base, i, is_integer(t) ? (t == ADNN_DTYPE_U8 ? 77 : -77) : 0.25);
  for (int64_t i = 0; i < R; i++)
    for (int64_t j = 0; j < S; j++) {
      const int64_t o = i * rs + j * cs;
      double v;
      if (is_integer(t)) {
        const int lo = t == ADNN_DTYPE_U8 ? 0 : -128, hi = t == ADNN_DTYPE_U8 ? 255 : 127;
        if (f == EXTREME)
          v = t == ADNN_DTYPE_U8 ? 255 : -128;
        else
          v = lo + (int)(tap_rng_next(rng) % (uint64_t)(hi - lo + 1));
      } else {
        v = tap_rng_uniform(rng, -1.0, 1.0);
        if (f == SPECIALS && which == 0 && (i * 7 + j) % 23 == 0)
          v = (i + j) % 3 == 0 ? NAN : (i + j) % 3 == 1 ? INFINITY : -INFINITY;
        if (f == SUBNORMAL)
          v = which == 0 ? (double)(1 + (i + j) % 5) * 0x1p-130 * ((i + j) % 2 ? 1 : -1)
                         : v * 0x1p100;
      }
      set(t, base, o, v);
    }
}

static void run_case(const adnn_cpu_lowp_path *path, const gl_case *c, adnn_dtype at,
                     adnn_dtype bt, int64_t K) {
  char what[200];
  snprintf(what, sizeof what, "%s %s x %s: %s%s", path->name, adnn_plugin_dtype_name(at),
           adnn_plugin_dtype_name(bt), c->name, K != c->K ? " (the core's largest K)" : "");
  tap_rng rng = tap_rng_seed(0x6c6f7770u + (uint64_t)c->M * 131 + (uint64_t)K + at * 7 + bt);
  int64_t ars, acs, aspan, brs, bcs, bspan;
  layout(c->sa, c->M, K, &ars, &acs, &aspan);
  layout(c->sb, K, c->N, &brs, &bcs, &bspan);
  void *a = malloc((size_t)aspan * dsize(at)), *b = malloc((size_t)bspan * dsize(bt));
  const int64_t ldc = c->N + 5;
  void *cbuf = malloc((size_t)(c->M * ldc) * 4);
  void *scratch = aligned_alloc(64, (adnn_cpu_lowp_thread_bytes(path) + 63) / 64 * 64);
  if (!a || !b || !cbuf || !scratch) {
    ok(0, "%s: out of memory", what);
    free(a), free(b), free(cbuf), free(scratch);
    return;
  }
  fill(at, a, aspan, c->M, K, ars, acs, c->fill, 0, &rng);
  fill(bt, b, bspan, K, c->N, brs, bcs, c->fill, 1, &rng);
  const uint32_t poison = 0x7fa5a5a5u; /* a signalling NaN; no exact I32 sum here */
  for (int64_t i = 0; i < c->M * ldc; i++) memcpy((char *)cbuf + 4 * i, &poison, 4);
  path->block(path, at, bt, a, ars, acs, b, brs, bcs, c->M, c->N, K, cbuf, ldc, scratch);
  int64_t bad = 0, first = -1;
  double worst = 0.0;
  for (int64_t i = 0; i < c->M; i++)
    for (int64_t j = 0; j < ldc; j++) {
      const int64_t o = i * ldc + j;
      uint32_t bits;
      memcpy(&bits, (char *)cbuf + 4 * o, 4);
      int good;
      if (j >= c->N) {
        good = bits == poison;
      } else if (is_integer(at)) {
        int64_t s = 0;
        for (int64_t p = 0; p < K; p++)
          s += (int64_t)value(at, a, i * ars + p * acs) * (int64_t)value(bt, b, p * brs + j * bcs);
        good = ((int32_t *)cbuf)[o] == s;
      } else {
        double s = 0.0, abs_sum = 0.0;
        for (int64_t p = 0; p < K; p++) {
          const double x = value(at, a, i * ars + p * acs), y = value(bt, b, p * brs + j * bcs);
          s += x * y;
          abs_sum += fabs(x * y);
        }
        const double got = ((float *)cbuf)[o];
        if (s != s) {
          good = got != got && bits != poison;
        } else if (isinf(s)) {
          good = got == s;
        } else {
          const double u = 0x1p-24, gamma = K * u / (1 - K * u);
          const double bound = gamma * abs_sum + K * 0x1p-126;
          const double e = fabs(got - s);
          good = e <= bound;
          if (bound > 0 && e / bound > worst) worst = e / bound;
        }
      }
      if (!good) {
        bad++;
        if (first < 0) first = o;
      }
    }
  ok(bad == 0, "%s: %lld of %lld elements wrong (worst error/bound %.2f)", what, (long long)bad,
     (long long)(c->M * ldc), worst);
  if (bad) {
    if (is_integer(at))
      diag("  first at %lld: got %d", (long long)first, ((int32_t *)cbuf)[first]);
    else
      diag("  first at %lld: got %.9g", (long long)first, ((float *)cbuf)[first]);
  }
  free(a), free(b), free(cbuf), free(scratch);
}

int main(void) {
  const adnn_cpu_features *f = adnn_cpu_features_get();
  int top = ADNN_CPU_ISA_BASE;
  if (f->avx2 && f->fma && f->f16c) top = ADNN_CPU_ISA_AVX2;
  if (f->avx512f) top = ADNN_CPU_ISA_AVX512;
  char desc[256];
  adnn_cpu_features_describe(f, desc, sizeof desc);
  diag("CPU: %s; %s", f->model, desc);
  int ran = 0;
  for (int i = 0; i < adnn_cpu_lowp_path_count(); i++) {
    const adnn_cpu_lowp_path *path = adnn_cpu_lowp_path_at(i);
    if (path->block == NULL || !path->usable(top, f)) {
      char why[160];
      snprintf(why, sizeof why, "%s: %s", path->name,
               path->block == NULL ? "no kernel written or compiled for it"
                                   : "this CPU (or OS) lacks its instructions");
      tap_skip(why);
      continue;
    }
    ran++;
    static const adnn_dtype all[] = {ADNN_DTYPE_F16, ADNN_DTYPE_BF16, ADNN_DTYPE_I8,
                                     ADNN_DTYPE_U8};
    for (size_t d = 0; d < sizeof all / sizeof all[0]; d++) {
      const adnn_dtype at = all[d];
      if (!(path->dtypes & (1u << (unsigned)at))) continue;
      const adnn_dtype bt = is_integer(at) ? ADNN_DTYPE_I8 : at;
      for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const gl_case *c = &cases[k];
        if ((c->fill == SPECIALS || c->fill == SUBNORMAL) && is_integer(at)) continue;
        if (c->fill == SUBNORMAL && at == ADNN_DTYPE_F16) continue; /* 2^-130 is 0 in F16 */
        run_case(path, c, at, bt, c->K);
      }
      if (is_integer(at)) {
        /* Every product at its extreme with the core's largest K. */
        const gl_case ext = {"extreme products", 3, 33, 0, ROW, ROW, EXTREME};
        run_case(path, &ext, at, bt, at == ADNN_DTYPE_I8 ? (1 << 17) - 1 : 1 << 16);
        const gl_case ext_t = {"extreme products, b^T", 2, 17, 0, ROW, TRANS, EXTREME};
        run_case(path, &ext_t, at, bt, at == ADNN_DTYPE_I8 ? (1 << 17) - 1 : 1 << 16);
      }
    }
  }
  if (!ran) tap_skip("no low-precision GEMM path usable on this CPU");
  return tap_done();
}
