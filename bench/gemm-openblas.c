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

static peer_options options = {"gemm-openblas", "openblas", 0, 0, 1, 500, 0, -1};

/* C = op(A) op(B), row-major, packed. */
static int gemm_exec(void *arg) {
  const peer_gemm *g = arg;
  const bench_problem *p = g->p;
  cblas_sgemm(CblasRowMajor, p->ta ? CblasTrans : CblasNoTrans, p->tb ? CblasTrans : CblasNoTrans,
              (blasint)p->m, (blasint)p->n, (blasint)p->k, 1.0f, g->a,
              (blasint)(p->ta ? p->m : p->k), g->b, (blasint)(p->tb ? p->k : p->n), 0.0f, g->c,
              (blasint)p->n);
  return 0;
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
      rc |= peer_run_gemm(&options, &list[i], text, "cblas_sgemm", gemm_exec);
    else
      peer_print_row(&options, text, "unsupported", "", NAN, NULL, 0, 0,
                     "gemm-openblas runs gemm problems only");
  }
  free(list);
  return rc;
}
