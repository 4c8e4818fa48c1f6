/*
 * What the peer drivers of bench/ share (bench/conv-onednn: oneDNN;
 * bench/gemm-openblas: cblas_sgemm called directly): they read adnn-bench
 * problems (tools/bench_problem.h) from the command line or --batch files,
 * time a library other than adnn on them, and print adnn-bench's rows (text,
 * or the columns of --csv) under their own backend name, so that
 * bench/run-cpu-perf.sh can put adnn and its peer side by side. They never
 * link libadnn.
 *
 * Command line: [--csv] [--mb=N] [--runs=N] [--time-ms=T] [--warmup=N]
 *               [--dir=DIR] [--batch=FILE] [PROBLEM...]
 *               (as adnn-bench's: --dir gives the problems after it that
 *               name no direction of their own ("dir=BWD_D:...") and whose
 *               op has it benchdnn's direction DIR, bench_problem.dir)
 */
#ifndef ADNN_BENCH_PEER_H
#define ADNN_BENCH_PEER_H

#include <stddef.h>

#include "tools/bench_problem.h"

typedef struct peer_options {
  const char *program; /**< for messages, e.g. "conv-onednn" */
  const char *backend; /**< the first column, e.g. "onednn" */
  int csv;
  int runs;            /**< exactly this many timed runs; 0: until time_ms */
  int warmup;
  double time_ms;
  int64_t mb;          /**< minibatch override, 0: none */
  int dir;             /**< the last --dir (enum bench_dir; -1: none), while reading */
} peer_options;

/** Reads the options and the problems (each with --mb applied). Returns 0,
 *  or 2 (a usage or parse error, already printed on stderr). *list is
 *  malloc'd. */
int peer_read_command_line(int argc, char **argv, peer_options *o, bench_problem **list,
                           size_t *n);

typedef struct peer_timing {
  int runs;
  double median, min, max; /**< ms */
} peer_timing;

/** Times fn(arg) (0 = success) after the warm-up, until time_ms with at least
 *  3 runs, or exactly `runs` runs. Returns 0, or -1 when fn failed. */
int peer_time(int (*fn)(void *), void *arg, const peer_options *o, peer_timing *t);

/** The CSV header of adnn-bench --csv (with --csv only). */
void peer_print_header(const peer_options *o);

/** One problem's row: status ok, error or unsupported, the implementation
 *  that ran, its set-up time, the timing (NULL when none) with GFLOP/s and
 *  GB/s, and a message. */
void peer_print_row(const peer_options *o, const char *problem, const char *status,
                    const char *implementation, double create_ms, const peer_timing *t,
                    double gflops, double gbs, const char *message);

/** A gemm: problem's operands for a peer's SGEMM call: row-major and packed,
 *  A m x k (k x m stored when p->ta), B k x n (n x k when p->tb), C m x n. */
typedef struct peer_gemm {
  const bench_problem *p;
  float *a, *b, *c;
} peer_gemm;

/** Runs a gemm: problem: allocates the operands, fills A and B with values in
 *  [-1, 1), times sgemm(g) (0 = success) and prints the row under the name
 *  `implementation`. Returns 0, or 1 when it failed. */
int peer_run_gemm(const peer_options *o, const bench_problem *p, const char *text,
                  const char *implementation, int (*sgemm)(void *g));

/** Milliseconds of a monotonic clock. */
double peer_now_ms(void);

#endif
