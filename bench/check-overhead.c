/*
 * The cost of the pointer checks: a 64x64x64 SGEMM and a small conv2d (N1 C8
 * 8x8 K8 3x3) on the CPU backend, timed with the checks on and off
 * (ADNN_CONTEXT_UNCHECKED_POINTERS), interleaved so that frequency and cache
 * drift hit both alike. Prints the median time per call of each over many
 * batches and the difference. Run by hand; doc/performance.md records a run.
 *   bench/check-overhead [batches (default 201)] [calls per batch (default 200)]
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <adnn.h>

#define CHECK(call)                                                                  \
  do {                                                                               \
    if ((call) != ADNN_STATUS_SUCCESS) {                                             \
      fprintf(stderr, "check-overhead: %s: %s\n", #call, adnn_last_error());        \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct work {
  adnn_context *ctx;
  void *a, *b, *c;
  adnn_plan *conv;
  void *x, *w, *y;
} work;

static void run_gemm(const work *k) {
  CHECK(adnn_gemm(k->ctx, ADNN_DTYPE_F32, ADNN_NO_TRANS, ADNN_NO_TRANS, 64, 64, 64, 1.0, k->a, 64,
                  k->b, 64, 0.0, k->c, 64));
}

static void run_conv(const work *k) {
  CHECK(adnn_plan_execute(k->conv, (const void *[]){k->x, k->w}, 2, k->y));
}

/* Time per call (ns) over `calls` calls. */
static double batch(void (*fn)(const work *), const work *k, int calls) {
  double t0 = now_ns();
  for (int i = 0; i < calls; i++) fn(k);
  return (now_ns() - t0) / calls;
}

/* A device buffer filled with deterministic values in [-0.5, 0.5). */
static void *filled(adnn_context *ctx, size_t bytes, unsigned seed) {
  void *d = NULL;
  CHECK(adnn_malloc(ctx, bytes, &d));
  float *h = malloc(bytes);
  if (h == NULL) exit(1);
  for (size_t i = 0; i < bytes / sizeof *h; i++) {
    seed = seed * 1103515245u + 12345u;
    h[i] = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
  }
  CHECK(adnn_memcpy(ctx, d, h, bytes, ADNN_MEMCPY_HOST_TO_DEVICE));
  free(h);
  return d;
}

int main(int argc, char **argv) {
  int batches = argc > 1 ? atoi(argv[1]) : 201;
  int calls = argc > 2 ? atoi(argv[2]) : 200;
  if (batches < 1 || calls < 1) {
    fprintf(stderr, "usage: check-overhead [batches] [calls per batch]\n");
    return 2;
  }
  work k;
  memset(&k, 0, sizeof k);
  CHECK(adnn_context_create("cpu", &k.ctx));
  /* Allocations besides the operands, so that the binary search descends a
   * few levels, as in a program that holds a model's tensors. */
  enum { OTHERS = 64 };
  void *others[OTHERS];
  for (int i = 0; i < OTHERS; i++) CHECK(adnn_malloc(k.ctx, 4096, &others[i]));
  k.a = filled(k.ctx, 64 * 64 * 4, 1);
  k.b = filled(k.ctx, 64 * 64 * 4, 2);
  k.c = filled(k.ctx, 64 * 64 * 4, 3);
  adnn_conv2d_desc d;
  adnn_conv2d_desc_init(&d);
  int64_t xd[4] = {1, 8, 8, 8}, wd[4] = {8, 8, 3, 3}, yd[4] = {1, 8, 6, 6};
  CHECK(adnn_tensor_desc_init(&d.x, ADNN_DTYPE_F32, 4, xd));
  CHECK(adnn_tensor_desc_init(&d.w, ADNN_DTYPE_F32, 4, wd));
  CHECK(adnn_tensor_desc_init(&d.y, ADNN_DTYPE_F32, 4, yd));
  CHECK(adnn_plan_create_conv2d(k.ctx, &d, &k.conv));
  k.x = filled(k.ctx, 8 * 8 * 8 * 4, 4);
  k.w = filled(k.ctx, 8 * 8 * 9 * 4, 5);
  k.y = filled(k.ctx, 8 * 6 * 6 * 4, 6);

  double *t[4];
  for (int i = 0; i < 4; i++) {
    t[i] = malloc(sizeof(double) * (size_t)batches);
    if (t[i] == NULL) return 1;
  }
  /* Warm up both paths. */
  batch(run_gemm, &k, calls);
  batch(run_conv, &k, calls);
  for (int i = 0; i < batches; i++) {
    /* Alternate which state goes first, so that neither always follows the other. */
    for (int pass = 0; pass < 2; pass++) {
      int unchecked = (pass + i) % 2;
      CHECK(adnn_context_set_flags(k.ctx, unchecked ? ADNN_CONTEXT_UNCHECKED_POINTERS : 0));
      t[unchecked][i] = batch(run_gemm, &k, calls);
      t[2 + unchecked][i] = batch(run_conv, &k, calls);
    }
  }
  double g_on = median(t[0], batches), g_off = median(t[1], batches);
  double c_on = median(t[2], batches), c_off = median(t[3], batches);
  printf("# adnn %s, cpu backend, median of %d batches of %d calls, %d allocations on the context\n",
         adnn_version_string(), batches, calls, OTHERS + 6);
  printf("%-26s %11s %13s %9s %8s\n", "problem", "checked_ns", "unchecked_ns", "diff_ns", "diff_%");
  printf("%-26s %11.0f %13.0f %9.0f %8.2f\n", "sgemm 64x64x64", g_on, g_off, g_on - g_off,
         100.0 * (g_on - g_off) / g_off);
  printf("%-26s %11.0f %13.0f %9.0f %8.2f\n", "conv2d N1 C8 8x8 K8 3x3", c_on, c_off,
         c_on - c_off, 100.0 * (c_on - c_off) / c_off);
  for (int i = 0; i < 4; i++) free(t[i]);
  adnn_plan_destroy(k.conv);
  adnn_context_destroy(k.ctx);
  return 0;
}
