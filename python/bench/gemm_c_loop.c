/*
 * gemm_c_loop: the C side of python/bench/overhead.py. Times adnn_gemm on one
 * small row-major F32 problem called in a loop on a "cpu" context, so that the
 * Python binding's per-call cost can be read as the difference.
 *
 * usage: gemm_c_loop M N K ITERATIONS REPEATS
 * prints one line per repeat: the mean nanoseconds per call over ITERATIONS calls.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <adnn.h>

static int check(adnn_status st, const char *what) {
  if (st == ADNN_STATUS_SUCCESS) return 0;
  fprintf(stderr, "gemm_c_loop: %s: %s: %s\n", what, adnn_status_name(st), adnn_last_error());
  return 1;
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: gemm_c_loop M N K ITERATIONS REPEATS\n");
    return 2;
  }
  long long m = atoll(argv[1]), n = atoll(argv[2]), k = atoll(argv[3]);
  long iters = atol(argv[4]), repeats = atol(argv[5]);
  if (m < 1 || n < 1 || k < 1 || iters < 1 || repeats < 1) {
    fprintf(stderr, "gemm_c_loop: every argument must be a positive integer\n");
    return 2;
  }
  adnn_context *ctx;
  if (check(adnn_context_create("cpu", &ctx), "adnn_context_create")) return 1;
  size_t sizes[3] = {(size_t)(m * k), (size_t)(k * n), (size_t)(m * n)};
  float *buf[3];
  for (int i = 0; i < 3; i++) {
    float *host = malloc(sizes[i] * sizeof *host);
    if (host == NULL) return 1;
    /* Seeded values in [-1, 1): the timing must not depend on zeros. */
    unsigned s = 12345u + (unsigned)i;
    for (size_t j = 0; j < sizes[i]; j++) {
      s = s * 1664525u + 1013904223u;
      host[j] = (float)((s >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
    void *dev;
    if (check(adnn_malloc(ctx, sizes[i] * sizeof *host, &dev), "adnn_malloc") ||
        check(adnn_memcpy(ctx, dev, host, sizes[i] * sizeof *host, ADNN_MEMCPY_HOST_TO_DEVICE),
              "adnn_memcpy"))
      return 1;
    buf[i] = dev;
    free(host);
  }
  for (long i = 0; i < iters; i++) /* warm-up */
    if (check(adnn_gemm(ctx, ADNN_DTYPE_F32, ADNN_NO_TRANS, ADNN_NO_TRANS, m, n, k, 1.0, buf[0],
                        k, buf[1], n, 0.0, buf[2], n), "adnn_gemm"))
      return 1;
  for (long r = 0; r < repeats; r++) {
    double t0 = now_ns();
    for (long i = 0; i < iters; i++)
      adnn_gemm(ctx, ADNN_DTYPE_F32, ADNN_NO_TRANS, ADNN_NO_TRANS, m, n, k, 1.0, buf[0], k,
                buf[1], n, 0.0, buf[2], n);
    printf("%.1f\n", (now_ns() - t0) / (double)iters);
  }
  adnn_context_destroy(ctx);
  return 0;
}
