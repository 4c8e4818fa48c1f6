/*
 * gemm-engine: times adnn's own F32 GEMM engine (kernels/cpu/gemm.c, linked
 * in directly) and OpenBLAS's cblas_sgemm in this process on the same
 * row-major shapes, C = A * B (no transposes, alpha = 1, beta = 0, packed).
 * bench/gemm-table.sh runs it in the default environment and with
 * OPENBLAS_CORETYPE set in the child's environment only, and writes the table
 * of doc/performance.md.
 *
 * usage: gemm-engine [--threads=N] [--runs=N] [--isa=avx512|avx2]
 *                    [--impl=engine|openblas|both] [--peak=GFLOPS] MxNxK...
 * Prints one line per shape and implementation: the median of --runs timed
 * calls (after two warm-up calls), GFLOP/s, and the percentage of --peak
 * (GFLOP/s of all threads together, from bench/fma-peak) when given.
 */
#include "config.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_parallel.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/simd_isa.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Process CPU time, all threads. */
static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int threads = 2, runs = 11, isa = -1, do_engine = 1, do_openblas = 1;
  double peak = 0.0;
  int first_shape = argc;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--threads=", 10) == 0)
      threads = atoi(argv[i] + 10);
    else if (strncmp(argv[i], "--runs=", 7) == 0)
      runs = atoi(argv[i] + 7);
    else if (strcmp(argv[i], "--isa=avx512") == 0)
      isa = ADNN_CPU_ISA_AVX512;
    else if (strcmp(argv[i], "--isa=avx2") == 0)
      isa = ADNN_CPU_ISA_AVX2;
    else if (strcmp(argv[i], "--impl=engine") == 0)
      do_openblas = 0;
    else if (strcmp(argv[i], "--impl=openblas") == 0)
      do_engine = 0;
    else if (strcmp(argv[i], "--impl=both") == 0)
      do_engine = do_openblas = 1;
    else if (strncmp(argv[i], "--peak=", 7) == 0)
      peak = atof(argv[i] + 7);
    else if (argv[i][0] == '-') {
      fprintf(stderr, "gemm-engine: unknown option %s\n", argv[i]);
      return 2;
    } else if (first_shape == argc)
      first_shape = i;
  }
  if (runs < 1) runs = 1;
  if (runs > 101) runs = 101;
  const adnn_cpu_features *f = adnn_cpu_features_get();
  if (isa < 0) isa = f->avx512f ? ADNN_CPU_ISA_AVX512 : ADNN_CPU_ISA_AVX2;
  if (!adnn_cpu_sgemm_engine_isa(isa) || (isa == ADNN_CPU_ISA_AVX512 && !f->avx512f) ||
      !(f->avx2 && f->fma)) {
    fprintf(stderr, "gemm-engine: this CPU cannot run the requested microkernel\n");
    return 2;
  }
  adnn_cpu_parallel_init(threads);
  openblas_set_num_threads(threads);
  adnn_cpu_gemm_blocking bl;
  adnn_cpu_sgemm_blocking(isa, &bl);
  printf("# %s; engine %s %dx%d kc=%lld mc=%lld nc=%lld (L1d %lld, L2 %lld, L3/core %lld); "
         "OpenBLAS core %s; %d threads\n",
         f->model, isa == ADNN_CPU_ISA_AVX512 ? "avx512" : "avx2", bl.mr, bl.nr,
         (long long)bl.kc, (long long)bl.mc, (long long)bl.nc, (long long)bl.l1d,
         (long long)bl.l2, (long long)bl.l3, openblas_get_corename(), threads);
  printf("%-18s %-9s %10s %9s %7s %11s\n", "shape", "impl", "median_ms", "GFLOP/s", "%peak",
         "GFLOP/cpu-s");
  for (int s = first_shape; s < argc; s++) {
    if (argv[s][0] == '-') continue;
    long long m, n, k;
    if (sscanf(argv[s], "%lldx%lldx%lld", &m, &n, &k) != 3 || m < 1 || n < 1 || k < 1) {
      fprintf(stderr, "gemm-engine: bad shape %s (MxNxK)\n", argv[s]);
      return 2;
    }
    float *a = aligned_alloc(64, (size_t)(m * k * 4 + 64) / 64 * 64);
    float *b = aligned_alloc(64, (size_t)(k * n * 4 + 64) / 64 * 64);
    float *c = aligned_alloc(64, (size_t)(m * n * 4 + 64) / 64 * 64);
    if (!a || !b || !c) return 1;
    for (long long i = 0; i < m * k; i++) a[i] = (float)((i * 7 + 3) % 13) / 13.0f - 0.5f;
    for (long long i = 0; i < k * n; i++) b[i] = (float)((i * 5 + 1) % 11) / 11.0f - 0.5f;
    for (int impl = 0; impl < 2; impl++) {
      if ((impl == 0 && !do_engine) || (impl == 1 && !do_openblas)) continue;
      double t[101], ct[101];
      for (int r = -2; r < runs; r++) {
        double t0 = now(), c0 = cpu_now();
        if (impl == 0)
          adnn_cpu_sgemm_with(ADNN_CPU_SGEMM_ENGINE, isa, 0, 0, m, n, k, 1.0f, a, k, b, n, 0.0f, c,
                              n, NULL, NULL);
        else
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a,
                      (int)k, b, (int)n, 0.0f, c, (int)n);
        double dt = now() - t0, dc = cpu_now() - c0;
        if (r >= 0) {
          t[r] = dt;
          ct[r] = dc;
        }
      }
      qsort(t, (size_t)runs, sizeof t[0], cmp_double);
      qsort(ct, (size_t)runs, sizeof ct[0], cmp_double);
      double med = t[runs / 2], gflops = 2.0 * (double)m * (double)n * (double)k / med * 1e-9;
      /* Per CPU-second of the process (all its threads): what the cores
       * sustain while they run this process, whatever else shares them;
       * OpenBLAS's idle threads spin, which this counts against it. */
      double cpu_gflops = 2.0 * (double)m * (double)n * (double)k / ct[runs / 2] * 1e-9;
      char pct[16] = "-";
      if (peak > 0) snprintf(pct, sizeof pct, "%.0f", 100.0 * gflops / peak);
      printf("%-18s %-9s %10.3f %9.1f %7s %11.1f\n", argv[s], impl == 0 ? "engine" : "openblas",
             med * 1e3, gflops, pct, cpu_gflops);
      fflush(stdout);
    }
    free(a);
    free(b);
    free(c);
  }
  return 0;
}
