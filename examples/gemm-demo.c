/*
 * gemm-demo: multiplies two random N x N matrices (SGEMM) on the backend that
 * "auto" chooses (or the one named on the command line), checks one row against
 * a plain loop, and prints the backend and the achieved GFLOP/s (median of
 * several runs).
 *
 * usage: gemm-demo [N] [backend]      (defaults: 1024, auto); --help prints it,
 * and any bad argument prints it on stderr with exit status 2.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <adnn.h>

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#define CHECK(call)                                                                   \
  do {                                                                                \
    adnn_status st_ = (call);                                                         \
    if (st_ != ADNN_STATUS_SUCCESS) {                                                 \
      fprintf(stderr, "gemm-demo: %s failed: %s: %s\n", #call, adnn_status_name(st_), \
              adnn_last_error());                                                     \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

static void usage(FILE *out) {
  fprintf(out,
          "usage: gemm-demo [N] [BACKEND]\n"
          "Multiplies two random N x N single-precision matrices (1 <= N <= 16384, default\n"
          "1024) on BACKEND (default \"auto\"; e.g. cpu, cuda, cuda:1), checks one row of\n"
          "the result and prints the backend that ran and its GFLOP/s (median of 7 runs).\n");
}

int main(int argc, char **argv) {
  if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    usage(stdout);
    return 0;
  }
  /* Anything that is not a plain decimal N in range (an option, trailing junk, a third
   * argument) is a usage error: say how to call the program instead of guessing. */
  char *end = NULL;
  long n = 1024;
  if (argc > 1) {
    errno = 0;
    n = strtol(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || errno != 0 || n < 1 || n > 16384) {
      fprintf(stderr, "gemm-demo: N must be a number in 1..16384, not '%s'\n", argv[1]);
      usage(stderr);
      return 2;
    }
  }
  if (argc > 3) {
    fprintf(stderr, "gemm-demo: too many arguments\n");
    usage(stderr);
    return 2;
  }
  const char *backend = argc > 2 ? argv[2] : "auto";
  size_t elems = (size_t)n * (size_t)n, bytes = elems * sizeof(float);
  float *ha = malloc(bytes), *hb = malloc(bytes), *hc = malloc(bytes);
  if (!ha || !hb || !hc) {
    fprintf(stderr, "gemm-demo: out of memory\n");
    return 1;
  }
  unsigned seed = 12345u;
  for (size_t i = 0; i < elems; i++) {
    seed = seed * 1664525u + 1013904223u;
    ha[i] = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
    seed = seed * 1664525u + 1013904223u;
    hb[i] = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
  }

  adnn_context *ctx;
  CHECK(adnn_context_create(backend, &ctx));
  void *a, *b, *c;
  CHECK(adnn_malloc(ctx, bytes, &a));
  CHECK(adnn_malloc(ctx, bytes, &b));
  CHECK(adnn_malloc(ctx, bytes, &c));
  CHECK(adnn_memcpy(ctx, a, ha, bytes, ADNN_MEMCPY_HOST_TO_DEVICE));
  CHECK(adnn_memcpy(ctx, b, hb, bytes, ADNN_MEMCPY_HOST_TO_DEVICE));

  /* One warm-up run, then the median of several timed runs. */
  CHECK(adnn_gemm(ctx, ADNN_DTYPE_F32, ADNN_NO_TRANS, ADNN_NO_TRANS, n, n, n, 1.0, a, n, b, n,
                  0.0, c, n));
  CHECK(adnn_context_synchronize(ctx));
  enum { RUNS = 7 };
  double times[RUNS];
  for (int r = 0; r < RUNS; r++) {
    double t0 = now_seconds();
    CHECK(adnn_gemm(ctx, ADNN_DTYPE_F32, ADNN_NO_TRANS, ADNN_NO_TRANS, n, n, n, 1.0, a, n, b, n,
                    0.0, c, n));
    CHECK(adnn_context_synchronize(ctx));
    times[r] = now_seconds() - t0;
  }
  qsort(times, RUNS, sizeof times[0], compare_doubles);
  CHECK(adnn_memcpy(ctx, hc, c, bytes, ADNN_MEMCPY_DEVICE_TO_HOST));

  /* Check the last row against a plain double-precision loop. */
  double max_err = 0.0;
  long row = n - 1;
  for (long j = 0; j < n; j++) {
    double ref = 0.0;
    for (long p = 0; p < n; p++) ref += (double)ha[row * n + p] * (double)hb[p * n + j];
    double err = ref - (double)hc[row * n + j];
    if (err < 0) err = -err;
    if (err > max_err) max_err = err;
  }
  double gflops = 2.0 * (double)n * (double)n * (double)n / times[RUNS / 2] * 1e-9;
  printf("adnn %s: SGEMM %ldx%ldx%ld on backend %s (device %d): median %.3f ms, %.1f GFLOP/s, "
         "max |error| of the last row %.2e\n",
         adnn_version_string(), n, n, n, adnn_context_get_backend(ctx), adnn_context_get_device(ctx),
         times[RUNS / 2] * 1e3, gflops, max_err);
  int bad = !(max_err <= 1e-4 * (double)n);
  CHECK(adnn_free(ctx, a));
  CHECK(adnn_free(ctx, b));
  CHECK(adnn_free(ctx, c));
  adnn_context_destroy(ctx);
  free(ha);
  free(hb);
  free(hc);
  if (bad) fprintf(stderr, "gemm-demo: result check failed\n");
  return bad;
}
