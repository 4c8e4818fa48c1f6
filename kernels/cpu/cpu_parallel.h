/*
 * A small persistent thread pool for the CPU kernels (the CPU plugin owns it).
 *
 * adnn_cpu_parallel_for(n, grain, fn, arg) splits [0, n) into contiguous chunks
 * of at least `grain` iterations and calls fn(arg, begin, end, thread) on the
 * calling thread and the pool's workers, returning when all chunks are done.
 * `thread` is in 0..adnn_cpu_parallel_threads()-1 and is unique among chunks
 * running at the same time, so a kernel can give each thread its own slice of
 * a workspace. When the pool is busy with another context's work (or n is small)
 * the loop runs on the calling thread alone, never deadlocking. No allocation.
 */
#ifndef ADNN_CPU_PARALLEL_H
#define ADNN_CPU_PARALLEL_H

#include <stdint.h>

/** A loop body: iterations [begin, end) on the pool thread `thread`. */
typedef void (*adnn_cpu_task_fn)(void *arg, int64_t begin, int64_t end, int thread);

/** Starts the pool with `threads` threads in all (the caller counts as one);
 *  returns the number it could start. */
int adnn_cpu_parallel_init(int threads);

/** The number of threads a parallel_for may use (>= 1). */
int adnn_cpu_parallel_threads(void);

/** Runs fn over [0, n) in chunks of at least `grain` iterations on the caller
 *  and the pool's workers, and returns when every chunk is done (see the top
 *  of this file). */
void adnn_cpu_parallel_for(int64_t n, int64_t grain, adnn_cpu_task_fn fn, void *arg);

/** 1 while the calling thread runs a chunk of a parallel_for (on a worker
 *  or on the caller, and also when the loop ran on the caller alone), else
 *  0. The GEMM dispatcher (gemm.h) uses it never to start OpenBLAS's threads
 *  inside one of our tasks. */
int adnn_cpu_parallel_in_task(void);

#endif
