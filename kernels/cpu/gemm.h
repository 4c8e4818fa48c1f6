/*
 * adnn's own F32 GEMM engine (BLIS-style) and the one SGEMM entry point of
 * the CPU plugin, adnn_cpu_sgemm, which every convolution path, the backward
 * passes and the public adnn_gemm call.
 *
 *   C = alpha * op(A) * op(B) + beta * C      (row-major, op = none or transpose)
 *
 * op(A) is m x k, op(B) is k x n, C is m x n with row stride ldc. beta = 0
 * never reads C (a NaN there does not leak into the result), as BLAS
 * specifies.
 *
 * The engine (gemm.c, the microkernels in gemm_kernel-avx512.c and
 * gemm_kernel-avx2.c): A is packed into panels of MR rows and B into panels
 * of NR columns, both zero-padded to whole panels so that the microkernel
 * never runs a scalar tail; the microkernel keeps an MR x NR tile of C in
 * registers and stores it with masked stores for the edge columns and only
 * the valid rows. Block sizes come from the cache hierarchy read at run time
 * (CPUID leaf 4, AMD leaf 0x8000001D, sysconf). The M/N macro tiles are the
 * tasks of one adnn_cpu_parallel_for; called from inside a pool task (the
 * conv kernels), the loop runs on the calling thread. doc/cpu.md describes
 * the design.
 *
 * Dispatch: adnn_cpu_sgemm runs the engine when the instruction set has a
 * microkernel (AVX2+FMA or AVX-512) and OpenBLAS otherwise. OpenBLAS is also
 * chosen for the shapes where it was measured faster, but only when the
 * plugin said that OpenBLAS runs AVX kernels (adnn_cpu_sgemm_set_openblas_fast)
 * and never from inside a pool task, so that no OpenBLAS thread runs inside
 * our pool's tasks.
 */
#ifndef ADNN_CPU_GEMM_H
#define ADNN_CPU_GEMM_H

#include <stddef.h>
#include <stdint.h>

/** The epilogue hook: a function the engine calls on each finished tile of
 *  C, right after its last store, while the tile is still in the L1 cache.
 *
 *  fn(arg, c, ldc, row0, col0, rows, cols) gets the tile's first element c
 *  (that is, C + row0 * ldc + col0), C's row stride and the tile's position
 *  and size in C; it may read and rewrite the rows x cols elements of the
 *  tile (for example v = act(v + bias[col0 + j]) or v += scale * residual),
 *  and nothing else of C. It is called exactly once per element of C, after
 *  alpha * op(A) op(B) + beta * C is complete there; tiles are at most
 *  ADNN_CPU_GEMM_TILE_MAX rows and columns; calls for different tiles may
 *  run at the same time on different threads, in any order. */
typedef void (*adnn_cpu_gemm_epilogue_fn)(const void *arg, float *c, int64_t ldc, int64_t row0,
                                          int64_t col0, int64_t rows, int64_t cols);

/** An epilogue: fn (NULL for none) and the argument it receives. */
typedef struct adnn_cpu_gemm_epilogue {
  adnn_cpu_gemm_epilogue_fn fn;
  const void *arg;
} adnn_cpu_gemm_epilogue;

/** The largest tile side an epilogue sees (the OpenBLAS path cuts C into
 *  tiles of this size; the engine's microkernel tiles are smaller). */
#define ADNN_CPU_GEMM_TILE_MAX 64

/** Which implementation runs a call (adnn_cpu_sgemm_choose). */
typedef enum adnn_cpu_sgemm_impl {
  ADNN_CPU_SGEMM_ENGINE = 0,   /**< our packed microkernel engine */
  ADNN_CPU_SGEMM_OPENBLAS = 1, /**< cblas_sgemm */
} adnn_cpu_sgemm_impl;

/** C = alpha * op(A) op(B) + beta * C, then the epilogue (NULL: none) on
 *  every tile; ta, tb: 0 for op(X) = X, 1 for its transpose. isa is the
 *  ADNN_CPU_ISA_* level the plugin chose (adnn_cpu_env.isa). m, n, k >= 0;
 *  lda >= (ta ? m : k), ldb >= (tb ? k : n), ldc >= n, each at least 1;
 *  sizes and leading dimensions below 2^31 (OpenBLAS's integers). k = 0
 *  scales C by beta (beta = 0: zeros). Threads: over the pool when called
 *  outside a pool task, on the calling thread inside one. Never allocates
 *  after the first calls of a given size (pack buffers are kept for reuse);
 *  when the buffers cannot be allocated it falls back to OpenBLAS, so it
 *  cannot fail. Deterministic: every element's sum is formed in the same
 *  order whatever the thread count. */
void adnn_cpu_sgemm(int isa, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                    const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                    int64_t ldc, const adnn_cpu_gemm_epilogue *epilogue);

/** The implementation adnn_cpu_sgemm would run for this call from the
 *  current thread (inside or outside a pool task). */
adnn_cpu_sgemm_impl adnn_cpu_sgemm_choose(int isa, int ta, int tb, int64_t m, int64_t n,
                                          int64_t k);

/** Forces one implementation (tests and benchmarks): the engine exactly as
 *  adnn_cpu_sgemm runs it, with the same threading. isa must have a
 *  microkernel (adnn_cpu_sgemm_engine_isa) for ADNN_CPU_SGEMM_ENGINE. */
void adnn_cpu_sgemm_with(adnn_cpu_sgemm_impl impl, int isa, int ta, int tb, int64_t m, int64_t n,
                         int64_t k, float alpha, const float *a, int64_t lda, const float *b,
                         int64_t ldb, float beta, float *c, int64_t ldc,
                         const adnn_cpu_gemm_epilogue *epilogue);

/** 1 when the engine has a microkernel for isa (AVX2 and AVX-512). */
int adnn_cpu_sgemm_engine_isa(int isa);

/** Tells the dispatcher whether OpenBLAS runs AVX kernels on this CPU
 *  (the plugin's probe knows its core name); 0 (the default) keeps every
 *  call on the engine where it has a microkernel. */
void adnn_cpu_sgemm_set_openblas_fast(int fast);

/** The engine's blocking for isa, as chosen from the caches (doc/cpu.md):
 *  microkernel MR x NR, the k block kc, the m block mc, the n block nc, and
 *  the cache sizes in bytes they were derived from. */
typedef struct adnn_cpu_gemm_blocking {
  int mr, nr;
  int64_t kc, mc, nc;
  int64_t l1d, l2, l3; /**< data cache bytes per core (L3: the share of one core) */
} adnn_cpu_gemm_blocking;

/** Fills *out for isa; returns 0 when isa has no microkernel. */
int adnn_cpu_sgemm_blocking(int isa, adnn_cpu_gemm_blocking *out);

#endif
