/*
 * fma-peak: the FMA peak of this CPU, per core, with the widest FMA it runs
 * (AVX-512 if the CPU and the OS support it, else AVX2+FMA), measured: each
 * thread runs 24 independent chains of vector FMAs (enough to cover the FMA
 * latency on two ports) on registers only, for about --ms milliseconds, and
 * the best of --rounds rounds is reported. The GEMM table of
 * doc/performance.md states its percentages against this figure.
 *
 * usage: fma-peak [--threads=N] [--ms=T] [--rounds=R] [--isa=avx2]
 * (--isa=avx2: the AVX2 peak even where AVX-512 exists, for comparison.)
 * Prints the CPU model, the ISA used, GFLOP/s per thread and in total
 * (1 FMA = 2 flops per lane).
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/cpu/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The calling thread's CPU time: on a shared machine the wall-clock rate
 * includes the time other processes hold the core, the CPU-time rate does
 * not (it is what the core sustains while this thread runs). */
static double thread_cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define CHAINS 24
#define ITERS 100000 /* per timing check */

/* Runs ITERS steps of CHAINS FMAs per call; the sink keeps the results live. */
#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx512f"))) static double run_avx512(long long *steps, double seconds) {
  __m512 acc[CHAINS];
  for (int i = 0; i < CHAINS; i++) acc[i] = _mm512_set1_ps(1.0f + 1e-3f * (float)i);
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  double t0 = now(), t;
  long long n = 0;
  do {
    for (int it = 0; it < ITERS; it++)
#pragma GCC unroll 24
      for (int i = 0; i < CHAINS; i++) acc[i] = _mm512_fmadd_ps(acc[i], x, y);
    n += ITERS;
    t = now();
  } while (t - t0 < seconds);
  float sink = 0.0f;
  for (int i = 0; i < CHAINS; i++) sink += _mm512_reduce_add_ps(acc[i]);
  *steps = n + (sink == 12345.0f);
  return (t - t0);
}

__attribute__((target("avx2,fma"))) static double run_avx2(long long *steps, double seconds) {
  __m256 acc[CHAINS / 2];
  for (int i = 0; i < CHAINS / 2; i++) acc[i] = _mm256_set1_ps(1.0f + 1e-3f * (float)i);
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
  double t0 = now(), t;
  long long n = 0;
  do {
    for (int it = 0; it < ITERS; it++)
#pragma GCC unroll 12
      for (int i = 0; i < CHAINS / 2; i++) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
    n += ITERS;
    t = now();
  } while (t - t0 < seconds);
  float buf[8], sink = 0.0f;
  for (int i = 0; i < CHAINS / 2; i++) {
    _mm256_storeu_ps(buf, acc[i]);
    sink += buf[0];
  }
  *steps = n + (sink == 12345.0f);
  return (t - t0);
}
#endif

typedef struct worker {
  pthread_t tid;
  int wide; /* 1: AVX-512, 0: AVX2 */
  double seconds, gflops, cpu_gflops;
} worker;

static void *work(void *p) {
  worker *w = p;
  long long steps = 0;
  double c0 = thread_cpu();
#if defined(__x86_64__) || defined(__i386__)
  /* 16 lanes x 24 chains or 8 lanes x 12 chains per step, 2 flops per FMA. */
  double dt = w->wide ? run_avx512(&steps, w->seconds) : run_avx2(&steps, w->seconds);
  double flops = (double)steps * (w->wide ? 16.0 * CHAINS : 8.0 * (CHAINS / 2)) * 2.0;
  w->gflops = flops / dt * 1e-9;
  w->cpu_gflops = flops / (thread_cpu() - c0) * 1e-9;
#else
  w->gflops = 0.0;
#endif
  return NULL;
}

int main(int argc, char **argv) {
  int threads = 1, rounds = 5, force_avx2 = 0;
  double ms = 300.0;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--threads=", 10) == 0)
      threads = atoi(argv[i] + 10);
    else if (strncmp(argv[i], "--ms=", 5) == 0)
      ms = atof(argv[i] + 5);
    else if (strncmp(argv[i], "--rounds=", 9) == 0)
      rounds = atoi(argv[i] + 9);
    else if (strcmp(argv[i], "--isa=avx2") == 0)
      force_avx2 = 1;
    else {
      fprintf(stderr, "usage: fma-peak [--threads=N] [--ms=T] [--rounds=R] [--isa=avx2]\n");
      return 2;
    }
  }
  if (threads < 1 || threads > 256 || rounds < 1 || ms <= 0) return 2;
  const adnn_cpu_features *f = adnn_cpu_features_get();
  if (!(f->avx2 && f->fma) && !f->avx512f) {
    fprintf(stderr, "fma-peak: this CPU has neither AVX2+FMA nor AVX-512\n");
    return 1;
  }
  int wide = f->avx512f && !force_avx2;
  worker *w = calloc((size_t)threads, sizeof *w);
  if (!w) return 1;
  double best_total = 0.0, best_per = 0.0, best_cpu = 0.0;
  for (int r = 0; r < rounds; r++) {
    for (int i = 0; i < threads; i++) {
      w[i].wide = wide;
      w[i].seconds = ms * 1e-3;
      pthread_create(&w[i].tid, NULL, work, &w[i]);
    }
    double total = 0.0, cpu = 0.0;
    for (int i = 0; i < threads; i++) {
      pthread_join(w[i].tid, NULL);
      total += w[i].gflops;
      cpu += w[i].cpu_gflops / threads;
    }
    if (cpu > best_cpu) best_cpu = cpu;
    if (total > best_total) {
      best_total = total;
      best_per = total / threads;
    }
  }
  printf("cpu: %s (family %d model %d)\n", f->model, f->family, f->model_number);
  printf("isa: %s FMA (%d float lanes)\n", wide ? "AVX-512" : "AVX2", wide ? 16 : 8);
  printf("threads: %d; best of %d rounds of %.0f ms\n", threads, rounds, ms);
  printf("peak_gflops_per_thread: %.1f\n", best_per);
  printf("peak_gflops_total: %.1f\n", best_total);
  printf("peak_gflops_per_cpu_second: %.1f (FLOPs per second of the thread's own CPU time)\n",
         best_cpu);
  free(w);
  return 0;
}
