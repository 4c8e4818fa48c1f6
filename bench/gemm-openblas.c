/*
 * gemm-openblas: the OpenBLAS side of the adnn_gemm overhead comparison
 * (bench/run-cpu-perf.sh, doc/performance.md). It reads adnn-bench's gemm:
 * problems (tools/bench_problem.h) and times cblas_sgemm called directly on
 * the same row-major shapes, so that the ratio of adnn-bench's time to this
 * one is what the adnn layer costs on top of OpenBLAS. It links OpenBLAS and
 * nothing of adnn; other ops are reported as unsupported. It prints the rows
 * of adnn-bench (backend "openblas", implementation "cblas_sgemm"), with
 * --csv its columns.
 *
 * usage: gemm-openblas [--csv] [--runs=N] [--time-ms=T] [--warmup=N]
 *                      [--batch=FILE] [PROBLEM...]          (bench/peer.h)
 * Threads: OpenBLAS's own choice (OPENBLAS_NUM_THREADS or OMP_NUM_THREADS),
 * which the adnn CPU plugin also leaves alone when one of them is set.
 */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/peer.h"

static peer_options options = {"gemm-openblas", "openblas", 0, 0, 1, 500, 0};

typedef struct gemm_run {
  const bench_problem *p;
  float *a, *b, *c;
} gemm_run;

/* C = op(A) op(B), row-major, packed: A is m x k (k x m stored when ta). */
static int gemm_exec(void *arg) {
  const gemm_run *g = arg;
  const bench_problem *p = g->p;
  cblas_sgemm(CblasRowMajor, p->ta ? CblasTrans : CblasNoTrans, p->tb ? CblasTrans : CblasNoTrans,
              (blasint)p->m, (blasint)p->n, (blasint)p->k, 1.0f, g->a,
              (blasint)(p->ta ? p->m : p->k), g->b, (blasint)(p->tb ? p->k : p->n), 0.0f, g->c,
              (blasint)p->n);
  return 0;
}

/* Values of order 1 for A and B, as adnn-bench's perf mode uses. */
static void fill(float *v, int64_t n, unsigned seed) {
  for (int64_t i = 0; i < n; i++)
    v[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) * 0x1p-23f - 1.0f;
}

static int run_gemm(const bench_problem *p, const char *text) {
  gemm_run g = {p, malloc(sizeof(float) * (size_t)(p->m * p->k)),
                malloc(sizeof(float) * (size_t)(p->k * p->n)),
                malloc(sizeof(float) * (size_t)(p->m * p->n))};
  int rc = 0;
  peer_timing t;
  if (!g.a || !g.b || !g.c) {
    peer_print_row(&options, text, "error", "", NAN, NULL, 0, 0, "out of memory");
    rc = 1;
  } else {
    fill(g.a, p->m * p->k, 7u);
    fill(g.b, p->k * p->n, 11u);
    if (peer_time(gemm_exec, &g, &options, &t)) {
      peer_print_row(&options, text, "error", "cblas_sgemm", 0, NULL, 0, 0, "out of memory");
      rc = 1;
    } else {
      peer_print_row(&options, text, "ok", "cblas_sgemm", 0, &t,
                     bench_problem_flops(p) / (t.median * 1e6),
                     bench_problem_bytes(p, sizeof(float)) / (t.median * 1e6), "");
    }
  }
  free(g.a);
  free(g.b);
  free(g.c);
  return rc;
}

int main(int argc, char **argv) {
  bench_problem *list;
  size_t n;
  int rc = peer_read_command_line(argc, argv, &options, &list, &n);
  if (rc) return rc;
  peer_print_header(&options);
  for (size_t i = 0; i < n; i++) {
    char text[512];
    bench_problem_format(&list[i], text, sizeof text);
    if (list[i].op == BENCH_OP_GEMM)
      rc |= run_gemm(&list[i], text);
    else
      peer_print_row(&options, text, "unsupported", "", NAN, NULL, 0, 0,
                     "gemm-openblas runs gemm problems only");
  }
  free(list);
  return rc;
}
