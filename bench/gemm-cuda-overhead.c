/*
 * The cost of the adnn layer on the GPU: the same GEMM through adnn_gemm on a
 * "cuda" context and through cuBLAS called directly, in the same process, on
 * the same device buffers.
 *
 *   bench/gemm-cuda-overhead [SIZE [REPEATS]]     (defaults 4096 and 15)
 *
 * Two kinds of rows:
 *  - "large": one SGEMM/DGEMM of SIZE^3 per timed run (call + stream sync),
 *    median over REPEATS runs after warm-up; the difference is adnn's share of
 *    a realistic call, usually within noise.
 *  - "latency": 64x64x64 GEMMs, 2000 queued back to back, then one sync;
 *    the time per call shows the fixed per-call overhead (validation, the
 *    plugin hop, the cuBLAS launch), median over REPEATS batches.
 *
 * Prints one line per row, "RESULT op=... kind=... size=... adnn_ms=...
 * direct_ms=... overhead_pct=... tflops_adnn=...", then a table. Exit status 0
 * on success, 2 when no usable CUDA device (with the reason).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <adnn.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define CHECK_CUDA(call)                                                                 \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorName(e_));                   \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)
#define CHECK_CUBLAS(call)                                                               \
  do {                                                                                   \
    cublasStatus_t e_ = (call);                                                          \
    if (e_ != CUBLAS_STATUS_SUCCESS) {                                                   \
      fprintf(stderr, "%s failed: %s\n", #call, cublasGetStatusName(e_));                \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)
#define CHECK_ADNN(call)                                                                 \
  do {                                                                                   \
    adnn_status s_ = (call);                                                             \
    if (s_ != ADNN_STATUS_SUCCESS) {                                                     \
      fprintf(stderr, "%s failed: %s: %s\n", #call, adnn_status_name(s_), adnn_last_error()); \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

typedef struct bench_env {
  adnn_context *ctx;
  cublasHandle_t cublas;
  cudaStream_t stream;
} bench_env;

typedef struct bench_row {
  char op[8], kind[10];
  int size, calls;
  double adnn_ms, direct_ms, tflops_adnn, max_diff;
} bench_row;

/* One row-major GEMM C = A B through cuBLAS directly, with the same mapping
 * the plugin uses (C^T = B^T A^T in column-major terms). */
static void direct_gemm(bench_env *env, adnn_dtype dt, int n, const void *a, const void *b, void *c) {
  if (dt == ADNN_DTYPE_F32) {
    const float one = 1.0f, zero = 0.0f;
    CHECK_CUBLAS(cublasSgemm(env->cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, c, n));
  } else {
    const double one = 1.0, zero = 0.0;
    CHECK_CUBLAS(cublasDgemm(env->cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, c, n));
  }
}

static void run_row(bench_env *env, adnn_dtype dt, int n, int calls, int repeats, bench_row *row) {
  size_t es = adnn_dtype_size(dt), bytes = (size_t)n * n * es;
  void *a, *b, *c1, *c2;
  CHECK_ADNN(adnn_malloc(env->ctx, bytes, &a));
  CHECK_ADNN(adnn_malloc(env->ctx, bytes, &b));
  CHECK_ADNN(adnn_malloc(env->ctx, bytes, &c1));
  CHECK_ADNN(adnn_malloc(env->ctx, bytes, &c2));
  unsigned char *host = malloc(bytes);
  for (size_t i = 0; i < (size_t)n * n; i++) {
    double v = (double)((i * 2654435761u) % 1000) / 1000.0 - 0.5;
    if (dt == ADNN_DTYPE_F32)
      ((float *)host)[i] = (float)v;
    else
      ((double *)host)[i] = v;
  }
  CHECK_ADNN(adnn_memcpy(env->ctx, a, host, bytes, ADNN_MEMCPY_HOST_TO_DEVICE));
  CHECK_ADNN(adnn_memcpy(env->ctx, b, host, bytes, ADNN_MEMCPY_HOST_TO_DEVICE));

  double *t_adnn = calloc((size_t)repeats, sizeof(double)), *t_direct = calloc((size_t)repeats, sizeof(double));
  /* Warm-up: cuBLAS picks and loads its kernels on the first calls. */
  for (int w = 0; w < 3; w++) {
    CHECK_ADNN(adnn_gemm(env->ctx, dt, ADNN_NO_TRANS, ADNN_NO_TRANS, n, n, n, 1.0, a, n, b, n, 0.0, c1, n));
    CHECK_ADNN(adnn_context_synchronize(env->ctx));
    direct_gemm(env, dt, n, a, b, c2);
    CHECK_CUDA(cudaStreamSynchronize(env->stream));
  }
  /* Interleaved, so that clock and thermal drift hit both sides alike. */
  for (int r = 0; r < repeats; r++) {
    double t0 = now_ms();
    for (int i = 0; i < calls; i++)
      CHECK_ADNN(adnn_gemm(env->ctx, dt, ADNN_NO_TRANS, ADNN_NO_TRANS, n, n, n, 1.0, a, n, b, n, 0.0, c1, n));
    CHECK_ADNN(adnn_context_synchronize(env->ctx));
    t_adnn[r] = (now_ms() - t0) / calls;
    t0 = now_ms();
    for (int i = 0; i < calls; i++) direct_gemm(env, dt, n, a, b, c2);
    CHECK_CUDA(cudaStreamSynchronize(env->stream));
    t_direct[r] = (now_ms() - t0) / calls;
  }
  /* Both paths must compute the same thing. */
  unsigned char *h1 = malloc(bytes), *h2 = malloc(bytes);
  CHECK_ADNN(adnn_memcpy(env->ctx, h1, c1, bytes, ADNN_MEMCPY_DEVICE_TO_HOST));
  CHECK_ADNN(adnn_memcpy(env->ctx, h2, c2, bytes, ADNN_MEMCPY_DEVICE_TO_HOST));
  double max_diff = 0;
  for (size_t i = 0; i < (size_t)n * n; i++) {
    double x = dt == ADNN_DTYPE_F32 ? ((float *)h1)[i] : ((double *)h1)[i];
    double y = dt == ADNN_DTYPE_F32 ? ((float *)h2)[i] : ((double *)h2)[i];
    if (fabs(x - y) > max_diff || isnan(x - y)) max_diff = isnan(x - y) ? INFINITY : fabs(x - y);
  }
  snprintf(row->op, sizeof row->op, "%s", dt == ADNN_DTYPE_F32 ? "SGEMM" : "DGEMM");
  snprintf(row->kind, sizeof row->kind, "%s", calls > 1 ? "latency" : "large");
  row->size = n;
  row->calls = calls;
  row->adnn_ms = median(t_adnn, repeats);
  row->direct_ms = median(t_direct, repeats);
  row->tflops_adnn = 2.0 * n * (double)n * n / (row->adnn_ms * 1e-3) / 1e12;
  row->max_diff = max_diff;
  printf("RESULT op=%s kind=%s size=%d calls=%d adnn_ms=%.4f direct_ms=%.4f overhead_pct=%.2f "
         "tflops_adnn=%.2f max_abs_diff=%.3g\n",
         row->op, row->kind, n, calls, row->adnn_ms, row->direct_ms,
         100.0 * (row->adnn_ms - row->direct_ms) / row->direct_ms, row->tflops_adnn, max_diff);
  fflush(stdout);
  free(host), free(h1), free(h2), free(t_adnn), free(t_direct);
  adnn_free(env->ctx, a), adnn_free(env->ctx, b), adnn_free(env->ctx, c1), adnn_free(env->ctx, c2);
}

int main(int argc, char **argv) {
  int size = argc > 1 ? atoi(argv[1]) : 4096;
  int repeats = argc > 2 ? atoi(argv[2]) : 15;
  if (size < 1 || repeats < 1) {
    fprintf(stderr, "usage: %s [SIZE [REPEATS]]\n", argv[0]);
    return 1;
  }
  bench_env env = {0};
  if (adnn_context_create("cuda", &env.ctx) != ADNN_STATUS_SUCCESS) {
    printf("SKIP: no usable CUDA device: %s\n", adnn_last_error());
    return 2;
  }
  /* adnn's cuda:0 is the first device the probe accepted; on the machines
   * this runs on that is CUDA device 0. */
  CHECK_CUDA(cudaSetDevice(0));
  CHECK_CUDA(cudaStreamCreateWithFlags(&env.stream, cudaStreamNonBlocking));
  CHECK_CUBLAS(cublasCreate(&env.cublas));
  CHECK_CUBLAS(cublasSetStream(env.cublas, env.stream));
  CHECK_CUBLAS(cublasSetMathMode(env.cublas, CUBLAS_DEFAULT_MATH));

  bench_row rows[4];
  run_row(&env, ADNN_DTYPE_F32, size, 1, repeats, &rows[0]);
  run_row(&env, ADNN_DTYPE_F64, size, 1, repeats, &rows[1]);
  run_row(&env, ADNN_DTYPE_F32, 64, 2000, repeats, &rows[2]);
  run_row(&env, ADNN_DTYPE_F64, 64, 2000, repeats, &rows[3]);

  printf("\n%-6s %-8s %6s %12s %12s %10s %10s %12s\n", "op", "kind", "size", "adnn", "cuBLAS", "overhead",
         "TFLOP/s", "max|diff|");
  for (int i = 0; i < 4; i++) {
    const bench_row *r = &rows[i];
    double scale = r->calls > 1 ? 1e3 : 1.0; /* latency rows in microseconds */
    const char *unit = r->calls > 1 ? "us" : "ms";
    printf("%-6s %-8s %6d %9.3f %s %9.3f %s %9.2f%% %10.2f %12.3g\n", r->op, r->kind, r->size,
           r->adnn_ms * scale, unit, r->direct_ms * scale, unit,
           100.0 * (r->adnn_ms - r->direct_ms) / r->direct_ms, r->tflops_adnn, r->max_diff);
  }
  cublasDestroy(env.cublas);
  cudaStreamDestroy(env.stream);
  adnn_context_destroy(env.ctx);
  return 0;
}
