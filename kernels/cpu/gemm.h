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

/** Pack space: the scratch memory the engine packs its A and B panels
 *  into, handed in by the caller so that a plan's run allocates nothing
 *  (the plan sizes it at reshape with adnn_cpu_sgemm_pack_bytes and takes it
 *  from its workspace). `base` (64-byte aligned) holds `slices` slices of
 *  `slice_bytes` bytes each, one per thread the engine may run on:
 *   - called inside a pool task (a conv kernel's tile), the engine runs on
 *     the calling thread and uses slice 0 only: pass the task thread's own
 *     slice with slices = 1 (adnn_cpu_gemm_pack_slice);
 *   - called outside a task (matmul), it spreads over the pool and uses
 *     slice `thread` on each pool thread: pass adnn_cpu_env.threads slices
 *     (with fewer, the whole call runs on the calling thread with slice 0). */
typedef struct adnn_cpu_gemm_pack {
  void *base;
  size_t slice_bytes;
  int slices;
} adnn_cpu_gemm_pack;

/** The bytes of one pack-space slice for any call of at most m x n x k on
 *  isa (a multiple of 64; 0 when isa has no microkernel or a size is 0,
 *  when the engine never packs). Monotone in m, n and k, so one slice sized
 *  for the largest call of a plan serves its smaller edge calls too. */
size_t adnn_cpu_sgemm_pack_bytes(int isa, int64_t m, int64_t n, int64_t k);

/** The one-slice pack space of pool thread `thread` in a workspace region
 *  `ws` of per-thread slices of slice_bytes each. */
static inline adnn_cpu_gemm_pack adnn_cpu_gemm_pack_slice(void *ws, size_t slice_bytes,
                                                         int thread) {
  adnn_cpu_gemm_pack p = {(char *)ws + (size_t)thread * slice_bytes, slice_bytes, 1};
  return p;
}

/** C = alpha * op(A) op(B) + beta * C, then the epilogue (NULL: none) on
 *  every tile, with the caller's pack space (see adnn_cpu_gemm_pack; at
 *  least adnn_cpu_sgemm_pack_bytes(isa, m, n, k) per slice); ta, tb: 0 for
 *  op(X) = X, 1 for its transpose. isa is the ADNN_CPU_ISA_* level the
 *  plugin chose (adnn_cpu_env.isa). m, n, k >= 0; lda >= (ta ? m : k), ldb
 *  >= (tb ? k : n), ldc >= n, each at least 1; sizes and leading dimensions
 *  below 2^31 (OpenBLAS's integers). k = 0 scales C by beta (beta = 0:
 *  zeros). Threads: over the pool when called outside a pool task, on the
 *  calling thread inside one. Allocates nothing and cannot fail (a pack
 *  space too small for the call, a caller's bug, runs OpenBLAS, which needs
 *  none). Deterministic: every element's sum is formed in the same order
 *  whatever the thread count. */
void adnn_cpu_sgemm_ws(int isa, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                       const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                       float *c, int64_t ldc, const adnn_cpu_gemm_epilogue *epilogue,
                       const adnn_cpu_gemm_pack *pack);

/** adnn_cpu_sgemm_ws without a pack space, for callers that have no plan
 *  (the public adnn_gemm): the engine takes its pack buffers from a free
 *  list kept by gemm.c, so the first calls of a size allocate (under a
 *  mutex), later calls of the same or smaller size reuse, and the buffers
 *  live until the plugin is unloaded. When a buffer cannot be allocated the
 *  block runs through OpenBLAS, so it cannot fail. Plans must not call it
 *  (their run would allocate): they use adnn_cpu_sgemm_ws. */
void adnn_cpu_sgemm(int isa, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                    const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                    int64_t ldc, const adnn_cpu_gemm_epilogue *epilogue);

/** The implementation adnn_cpu_sgemm would run for this call from the
 *  current thread (inside or outside a pool task). */
adnn_cpu_sgemm_impl adnn_cpu_sgemm_choose(int isa, int ta, int tb, int64_t m, int64_t n,
                                          int64_t k);

/** Forces one implementation (the matmul candidates, tests, benchmarks):
 *  exactly as adnn_cpu_sgemm_ws (pack given) or adnn_cpu_sgemm (pack NULL)
 *  runs it, with the same threading. isa must have a microkernel
 *  (adnn_cpu_sgemm_engine_isa) for ADNN_CPU_SGEMM_ENGINE, else OpenBLAS
 *  runs. */
void adnn_cpu_sgemm_with(adnn_cpu_sgemm_impl impl, int isa, int ta, int tb, int64_t m, int64_t n,
                         int64_t k, float alpha, const float *a, int64_t lda, const float *b,
                         int64_t ldb, float beta, float *c, int64_t ldc,
                         const adnn_cpu_gemm_epilogue *epilogue, const adnn_cpu_gemm_pack *pack);

/** 1 when the engine has a microkernel for isa (AVX2 and AVX-512). */
int adnn_cpu_sgemm_engine_isa(int isa);

/** Tells the dispatcher whether OpenBLAS runs AVX kernels on this CPU
 *  (the plugin's probe knows its core name); 0 (the default) keeps every
 *  call on the engine where it has a microkernel. */
void adnn_cpu_sgemm_set_openblas_fast(int fast);

/* ---- Pre-packed A ---------------------------------------------------------
 * A caller whose A operand is fixed across calls (a convolution's weights)
 * packs it once into the engine's own panel form and passes that to
 * adnn_cpu_sgemm_ws_packed_a, which then skips packing A. The form depends
 * on isa (MR) and on the k block kc read from this process's caches, so it
 * is valid for the process that made it (a plan's prepacked weights are).
 * Layout: for each k block pc (0, kc, 2 kc, ..., kk = min(kc, k - pc)
 * columns), the ceil(m / MR) panels of MR rows over kk columns, column after
 * column (gemm_kernel.h's A panel), rows past m zero: element (i, p) lies at
 * pc * mpad + (i / MR) * MR * kk + (p - pc) * MR + i % MR, mpad = m rounded
 * up to MR. The sums are formed exactly as adnn_cpu_sgemm_ws forms them, so
 * the results are bit-identical. */

/** The bytes of the pre-packed form of an m x k op(A) on isa (a multiple of
 *  64); 0 when isa has no microkernel (the caller then keeps A as it is and
 *  calls adnn_cpu_sgemm_ws) or m or k is 0. */
size_t adnn_cpu_sgemm_packed_a_bytes(int isa, int64_t m, int64_t k);

/** Packs op(A) (m x k, ta as for adnn_cpu_sgemm_ws) into `packed`
 *  (adnn_cpu_sgemm_packed_a_bytes(isa, m, k) bytes, 64-byte aligned).
 *  Nothing is done when that size is 0. Runs on the calling thread;
 *  allocates nothing and cannot fail. */
void adnn_cpu_sgemm_pack_a(int isa, int ta, int64_t m, int64_t k, const float *a, int64_t lda,
                           float *packed);

/** adnn_cpu_sgemm_ws with op(A) given pre-packed by adnn_cpu_sgemm_pack_a
 *  (same isa, m and k): always the engine (isa must have a microkernel,
 *  adnn_cpu_sgemm_engine_isa; the caller checks at reshape), the same
 *  threading and pack space (adnn_cpu_sgemm_pack_bytes suffices; only its B
 *  part is used). Cannot fail: with a pack space too small for the call (a
 *  caller's bug) the engine takes its B buffers from the free list, and a
 *  tile whose buffer cannot be allocated is computed by a plain loop over
 *  the packed A (slow, within the same bound, doc/numerics.md). */
void adnn_cpu_sgemm_ws_packed_a(int isa, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                                const float *apacked, const float *b, int64_t ldb, float beta,
                                float *c, int64_t ldc, const adnn_cpu_gemm_epilogue *epilogue,
                                const adnn_cpu_gemm_pack *pack);

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
