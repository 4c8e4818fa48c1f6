/*
 * The reorder op's conversions, bit for bit, on every ready backend (the CPU
 * plugin, and the CUDA plugin under t/cuda-emu.sh's emulation), as TAP:
 *   - every one of the 65,536 F16 and BF16 patterns to F32 and F64 and back;
 *   - F32 to F16 and BF16 over the boundary cases (ties of both parities,
 *     the overflow thresholds 65504 / 65519.99 / 65520 and FLT_MAX, the
 *     subnormal boundaries, NaN payloads and signs, -0) and every 997th of
 *     the 2^32 F32 patterns, against kernels/common/float16.h (the
 *     definition) and, for F16, against the F16C instruction when the CPU
 *     has it;
 *   - F64 to F16 and BF16 at every tie and next to it (one rounding, never
 *     through F32), and F32 <-> F64 on the sample;
 *   - the same conversions through a strided and a transposed layout (the
 *     CPU plugin's other loops).
 * Run without ADNN_CPU_SIMD, it also runs itself once per instruction set
 * (ADNN_CPU_SIMD=base, avx2, avx512; a level this CPU lacks is capped to what
 * it has) and reports each child's result, so every vector path of the CPU
 * plugin gives the same bits. Writes nothing outside its memory.
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <adnn.h>

#include "kernels/common/float16.h"
#include "t/tap.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
__attribute__((target("f16c"))) static uint16_t f16c_from_f32(float f) {
  return (uint16_t)_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT), 0);
}
static int have_f16c(void) { return __builtin_cpu_supports("f16c"); }
#else
static uint16_t f16c_from_f32(float f) { return adnn_f32_to_f16(f); }
static int have_f16c(void) { return 0; }
#endif

static adnn_context *ctx;
static const char *bn;

/* y = reorder(x): n elements, x at element stride xs, y at ys (one dim), or
 * with transpose > 0 as [n / transpose, transpose] read row-major and
 * written column-major. Returns 0 or -1 (diagnosed). */
static int run(adnn_dtype xt, const void *x, adnn_dtype yt, void *y, int64_t n, int64_t xs,
               int64_t transpose) {
  const size_t xsz = adnn_dtype_size(xt), ysz = adnn_dtype_size(yt);
  adnn_reorder_desc d;
  adnn_reorder_desc_init(&d);
  if (transpose > 0) {
    const int64_t dims[2] = {n / transpose, transpose};
    adnn_tensor_desc_init(&d.x, xt, 2, dims);
    adnn_tensor_desc_init(&d.y, yt, 2, dims);
    d.y.strides[0] = 1;
    d.y.strides[1] = dims[0];
  } else {
    adnn_tensor_desc_init(&d.x, xt, 1, &n);
    adnn_tensor_desc_init(&d.y, yt, 1, &n);
    d.x.strides[0] = xs;
  }
  adnn_plan *plan = NULL;
  void *dx = NULL, *dy = NULL;
  int rc = -1;
  const size_t xbytes = (size_t)((n - 1) * xs + 1) * xsz, ybytes = (size_t)n * ysz;
  adnn_status st = adnn_plan_create_reorder(ctx, &d, &plan);
  if (st == ADNN_STATUS_SUCCESS) st = adnn_malloc(ctx, xbytes, &dx);
  if (st == ADNN_STATUS_SUCCESS) st = adnn_malloc(ctx, ybytes, &dy);
  if (st == ADNN_STATUS_SUCCESS) st = adnn_memcpy(ctx, dx, x, xbytes, ADNN_MEMCPY_HOST_TO_DEVICE);
  if (st == ADNN_STATUS_SUCCESS) st = adnn_memset(ctx, dy, 0x5a, ybytes);
  const void *ins[1] = {dx};
  if (st == ADNN_STATUS_SUCCESS) st = adnn_plan_execute(plan, ins, 1, dy);
  if (st == ADNN_STATUS_SUCCESS) st = adnn_context_synchronize(ctx);
  if (st == ADNN_STATUS_SUCCESS) st = adnn_memcpy(ctx, y, dy, ybytes, ADNN_MEMCPY_DEVICE_TO_HOST);
  if (st == ADNN_STATUS_SUCCESS) rc = 0;
  else diag("%s: reorder %s->%s: %s: %s", bn, adnn_dtype_name(xt), adnn_dtype_name(yt),
            adnn_status_name(st), adnn_last_error());
  if (dx) adnn_free(ctx, dx);
  if (dy) adnn_free(ctx, dy);
  adnn_plan_destroy(plan);
  return rc;
}

/* Counts the elements of got (n of them, size bytes each) that differ from
 * want bit for bit, diagnosing the first few. y of a transposed run is
 * compared at the transposed position. */
static int64_t mismatches(const char *what, const void *got, const void *want, int64_t n,
                          size_t size, int64_t transpose, const void *x, size_t xsize) {
  int64_t bad = 0;
  const int64_t rows = transpose > 0 ? n / transpose : 0;
  for (int64_t i = 0; i < n; i++) {
    const int64_t at = transpose > 0 ? (i % transpose) * rows + i / transpose : i;
    if (memcmp((const char *)got + at * size, (const char *)want + i * size, size) == 0) continue;
    if (bad++ < 4) {
      uint64_t g = 0, w = 0, xv = 0;
      memcpy(&g, (const char *)got + at * size, size);
      memcpy(&w, (const char *)want + i * size, size);
      memcpy(&xv, (const char *)x + i * xsize, xsize);
      diag("%s: %s element %lld: x bits 0x%llx gave 0x%llx, want 0x%llx", bn, what, (long long)i,
           (unsigned long long)xv, (unsigned long long)g, (unsigned long long)w);
    }
  }
  return bad;
}

/* reorder x (xt) to yt contiguously, strided (x at stride 2) and transposed,
 * each compared bit for bit with want. */
static void check3(const char *what, adnn_dtype xt, const void *x, adnn_dtype yt,
                   const void *want, int64_t n) {
  const size_t xsz = adnn_dtype_size(xt), ysz = adnn_dtype_size(yt);
  void *y = malloc((size_t)n * ysz);
  char *x2 = malloc((size_t)n * 2 * xsz);
  if (!y || !x2) tap_bail("out of memory");
  for (int64_t i = 0; i < n; i++) memcpy(x2 + 2 * i * xsz, (const char *)x + i * xsz, xsz);
  int rc = run(xt, x, yt, y, n, 1, 0);
  ok(rc == 0 && mismatches(what, y, want, n, ysz, 0, x, xsz) == 0, "%s: %s, %lld elements",
     bn, what, (long long)n);
  rc = run(xt, x2, yt, y, n, 2, 0);
  ok(rc == 0 && mismatches(what, y, want, n, ysz, 0, x, xsz) == 0, "%s: %s, x at stride 2", bn,
     what);
  int64_t t = 64;
  while (n % t) t /= 2;
  rc = run(xt, x, yt, y, n, 1, t);
  ok(rc == 0 && mismatches(what, y, want, n, ysz, t, x, xsz) == 0,
     "%s: %s, [%lld, %lld] transposed", bn, what, (long long)(n / t), (long long)t);
  free(y);
  free(x2);
}

static void sixteen_bit_patterns(void) {
  const int64_t n = 65536;
  uint16_t *h = malloc(n * 2), *back = malloc(n * 2);
  float *f = malloc(n * 4);
  double *d = malloc(n * 8);
  if (!h || !back || !f || !d) tap_bail("out of memory");
  for (int64_t i = 0; i < n; i++) h[i] = (uint16_t)i;
  /* F16 */
  for (int64_t i = 0; i < n; i++) f[i] = adnn_f16_to_f32(h[i]), d[i] = adnn_f16_to_f64(h[i]);
  check3("all f16 -> f32", ADNN_DTYPE_F16, h, ADNN_DTYPE_F32, f, n);
  check3("all f16 -> f64", ADNN_DTYPE_F16, h, ADNN_DTYPE_F64, d, n);
  /* Back: the identity, except that a NaN comes back quiet. */
  for (int64_t i = 0; i < n; i++) {
    const int nan = (h[i] & 0x7c00) == 0x7c00 && (h[i] & 0x3ff);
    back[i] = nan ? (uint16_t)(h[i] | 0x200) : h[i];
  }
  check3("all f16 -> f32 -> f16", ADNN_DTYPE_F32, f, ADNN_DTYPE_F16, back, n);
  check3("all f16 -> f64 -> f16", ADNN_DTYPE_F64, d, ADNN_DTYPE_F16, back, n);
  int64_t f16c_bad = 0;
  if (have_f16c())
    for (int64_t i = 0; i < n; i++) f16c_bad += f16c_from_f32(f[i]) != back[i];
  ok(f16c_bad == 0, "%s: F16C agrees with the round trip of every f16 (%s)", bn,
     have_f16c() ? "checked" : "no F16C here");
  /* BF16 */
  for (int64_t i = 0; i < n; i++) f[i] = adnn_bf16_to_f32(h[i]), d[i] = adnn_bf16_to_f64(h[i]);
  check3("all bf16 -> f32", ADNN_DTYPE_BF16, h, ADNN_DTYPE_F32, f, n);
  check3("all bf16 -> f64", ADNN_DTYPE_BF16, h, ADNN_DTYPE_F64, d, n);
  for (int64_t i = 0; i < n; i++) {
    const int nan = (h[i] & 0x7f80) == 0x7f80 && (h[i] & 0x7f);
    back[i] = nan ? (uint16_t)(h[i] | 0x40) : h[i];
  }
  check3("all bf16 -> f32 -> bf16", ADNN_DTYPE_F32, f, ADNN_DTYPE_BF16, back, n);
  check3("all bf16 -> f64 -> bf16", ADNN_DTYPE_F64, d, ADNN_DTYPE_BF16, back, n);
  /* Between the 16-bit types, every pattern: through F32, one rounding. */
  for (int64_t i = 0; i < n; i++) back[i] = adnn_f32_to_bf16(adnn_f16_to_f32(h[i]));
  check3("all f16 -> bf16", ADNN_DTYPE_F16, h, ADNN_DTYPE_BF16, back, n);
  for (int64_t i = 0; i < n; i++) back[i] = adnn_f32_to_f16(adnn_bf16_to_f32(h[i]));
  check3("all bf16 -> f16", ADNN_DTYPE_BF16, h, ADNN_DTYPE_F16, back, n);
  free(h);
  free(back);
  free(f);
  free(d);
}

/* The F32 boundary cases, then every 997th pattern of the 2^32. */
static void f32_sample(void) {
  static const uint32_t edges[] = {
      0x00000000, 0x80000000, 0x3f800000, 0x3f801000, 0x3f803000, 0x3f801001, 0x3f800fff,
      0x3f808000, 0x3f818000, 0x3f808001, 0x3f807fff, 0xbf808000, 0x477fe000, 0x477fefff,
      0x477ff000, 0x477ff001, 0x47800000, 0xc77ff000, 0x7f7fffff, 0xff7fffff, 0x7f7f7fff,
      0x7f7f8000, 0x7f800000, 0xff800000, 0x33800000, 0x33000000, 0x33000001, 0x33400000,
      0x38800000, 0x387fc000, 0x387fe000, 0x00000001, 0x807fffff, 0x00400000, 0x00008000,
      0x00018000, 0x00010000, 0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fa00000,
      0x7f802000, 0x7fbfffff, 0xffffffff, 0x7fffe000, 0x7f801fff};
  const int64_t ne = (int64_t)(sizeof edges / sizeof edges[0]);
  const int64_t n = ne + (int64_t)((UINT64_C(1) << 32) / 997) + 1 - 1; /* a multiple of 8 below */
  const int64_t m = n - n % 64;
  uint32_t *u = malloc((size_t)m * 4);
  uint16_t *h = malloc((size_t)m * 2), *b = malloc((size_t)m * 2);
  double *d = malloc((size_t)m * 8);
  if (!u || !h || !b || !d) tap_bail("out of memory");
  for (int64_t i = 0; i < m; i++) u[i] = i < ne ? edges[i] : (uint32_t)((i - ne) * 997);
  int64_t f16c_bad = 0;
  for (int64_t i = 0; i < m; i++) {
    const float f = adnn_f32_from_bits(u[i]);
    h[i] = adnn_f32_to_f16(f);
    b[i] = adnn_f32_to_bf16(f);
    const int nan = (u[i] & 0x7fffffffu) > 0x7f800000u;
    d[i] = nan ? adnn_f64_from_bits((uint64_t)(u[i] & 0x80000000u) << 32 |
                                    0x7ff8000000000000ull | (uint64_t)(u[i] & 0x7fffffu) << 29)
               : (double)f;
    if (have_f16c()) f16c_bad += f16c_from_f32(f) != h[i];
  }
  ok(f16c_bad == 0, "%s: the header equals F16C on the f32 sample (%s)", bn,
     have_f16c() ? "checked" : "no F16C here");
  check3("f32 sample -> f16", ADNN_DTYPE_F32, u, ADNN_DTYPE_F16, h, m);
  check3("f32 sample -> bf16", ADNN_DTYPE_F32, u, ADNN_DTYPE_BF16, b, m);
  check3("f32 sample -> f64", ADNN_DTYPE_F32, u, ADNN_DTYPE_F64, d, m);
  /* F64 -> F32 of the widened sample is the identity, NaNs quiet. */
  for (int64_t i = 0; i < m; i++)
    if ((u[i] & 0x7fffffffu) > 0x7f800000u) u[i] |= 0x400000u;
  check3("f32 sample -> f64 -> f32", ADNN_DTYPE_F64, d, ADNN_DTYPE_F32, u, m);
  free(u);
  free(h);
  free(b);
  free(d);
}

/* Every tie between consecutive finite F16 (and BF16) values as an F64, and
 * the F64 neighbours on both sides, plus doubles far outside the ranges. */
static void f64_ties(int bf16) {
  const int64_t per = 4, n = 65536 * per;
  double *d = malloc((size_t)n * 8);
  uint16_t *want = malloc((size_t)n * 2);
  if (!d || !want) tap_bail("out of memory");
  int64_t k = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    const uint16_t hh = (uint16_t)h;
    const double v = bf16 ? adnn_bf16_to_f64(hh) : adnn_f16_to_f64(hh);
    const double w = bf16 ? adnn_bf16_to_f64((uint16_t)(hh + 1)) : adnn_f16_to_f64((uint16_t)(hh + 1));
    double mid = isfinite(v) && isfinite(w) && (hh & 0x7fff) != 0x7fff ? v + (w - v) / 2 : v;
    if (!isfinite(mid)) mid = v;
    d[k++] = mid;
    d[k++] = nextafter(mid, INFINITY);
    d[k++] = nextafter(mid, -INFINITY);
    d[k++] = (h & 7) == 0 ? ldexp(mid, 200) : (h & 7) == 1 ? ldexp(mid, -200) : -mid;
  }
  for (int64_t i = 0; i < n; i++) want[i] = bf16 ? adnn_f64_to_bf16(d[i]) : adnn_f64_to_f16(d[i]);
  check3(bf16 ? "f64 ties -> bf16" : "f64 ties -> f16", ADNN_DTYPE_F64, d,
         bf16 ? ADNN_DTYPE_BF16 : ADNN_DTYPE_F16, want, n);
  /* One rounding: some tie neighbour must differ from the F32 double rounding,
   * or the test would not tell the two apart. */
  int64_t differ = 0;
  for (int64_t i = 0; i < n; i++) {
    const float f = (float)d[i];
    const uint16_t twice = bf16 ? adnn_f32_to_bf16(f) : adnn_f32_to_f16(f);
    differ += twice != want[i];
  }
  ok(differ > 0, "%s: %s: %lld inputs where rounding through f32 would differ", bn,
     bf16 ? "bf16" : "f16", (long long)differ);
  free(d);
  free(want);
}

static int child(const char *level) {
  fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(2, 1); /* the child's TAP goes to stderr as diagnostics */
    setenv("ADNN_CPU_SIMD", level, 1);
    execl("/proc/self/exe", "convert-exhaustive", (char *)NULL);
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(void) {
  size_t count = 0;
  if (adnn_backend_count(&count) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  int tested = 0;
  for (size_t i = 0; i < count; i++) {
    const adnn_backend_info *info = NULL;
    if (adnn_backend_get(i, &info) != ADNN_STATUS_SUCCESS || info->state != ADNN_BACKEND_READY)
      continue;
    if (adnn_context_create(info->name, &ctx) != ADNN_STATUS_SUCCESS) continue;
    bn = info->name;
    tested++;
    sixteen_bit_patterns();
    f32_sample();
    f64_ties(0);
    f64_ties(1);
    adnn_context_destroy(ctx);
  }
  if (!tested) return tap_skip_all("no ready backend");
  if (getenv("ADNN_CPU_SIMD") == NULL && access("/proc/self/exe", X_OK) == 0) {
    static const char *const levels[] = {"base", "avx2", "avx512"};
    for (int i = 0; i < 3; i++)
      ok(child(levels[i]) == 0, "ADNN_CPU_SIMD=%s: every check passes", levels[i]);
  }
  return tap_done();
}
