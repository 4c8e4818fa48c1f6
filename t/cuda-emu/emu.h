// Host emulation of the CUDA kernels of kernels/cuda/ (see build.sh), included
// in place of <cuda_runtime.h> by the rewritten kernels.
//
// Kernels without barriers run every (block, thread) pair one after the other
// (emu_launch). Kernels that synchronize a block (__syncthreads, warp
// shuffles; named *_rows, see kernels/cuda/common.cuh) run each block as one
// fiber per CUDA thread on the calling thread (emu_launch_par): a fiber runs
// until it reaches a barrier, and a barrier releases its fibers once every
// participant (the block, or the 32 lanes of a warp) has arrived, so the
// reductions execute exactly as written. Fibers instead of OS threads keep the
// emulation fast: a barrier costs a context switch in user space, not a wake-up
// of hundreds of threads.
//
// Host libm replaces the device math functions, so results may differ from a
// GPU in the last bits; indexing, bounds, reductions and NaN logic are the
// kernels' own.
#pragma once
#include <cuda_runtime_api.h>
#include <ucontext.h>
#include <vector_types.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>
using std::isinf;
using std::isnan;
#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __shared__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
// "__shared__" arrays become function statics: one copy per kernel
// instantiation, shared by the fibers of the block that runs (blocks run one
// after the other).
#define __shared__ static

struct emu_dim {
  unsigned x, y, z;
};
inline thread_local emu_dim blockIdx, threadIdx;
inline emu_dim gridDim, blockDim;

// One fiber per CUDA thread of the running block.
struct emu_fiber {
  ucontext_t ctx;
  int waiting; // -1 runnable; 0 at the block barrier; 1 + w at warp w's barrier
  bool done;
};

struct emu_block {
  int threads;
  std::vector<emu_fiber> fibers;
  ucontext_t scheduler;
  int current;               // the fiber that runs
  void (*invoke)(void *arg); // the kernel body, called once per fiber
  void *arg;
  uint64_t slot[1024]; // one exchange word per thread for the shuffles
};
inline thread_local emu_block *emu_cur;

// Stacks for the fibers, kept for the next launch. The kernels' frames are
// small; 256 KiB leaves room for libm and the lambdas.
enum { EMU_FIBER_STACK = 256 * 1024 };
inline thread_local std::vector<std::unique_ptr<char[]>> emu_stacks;

// Waits at barrier `which` (0: the block's, 1 + w: warp w's).
static inline void emu_wait(int which) {
  emu_block *b = emu_cur;
  emu_fiber &me = b->fibers[threadIdx.x];
  me.waiting = which;
  swapcontext(&me.ctx, &b->scheduler);
}

static inline void __syncthreads() { emu_wait(0); }

template <typename T> T __shfl_xor_sync(unsigned, T v, int o) {
  const int w = 1 + (int)(threadIdx.x / 32);
  emu_wait(w); // every lane has read the previous exchange
  uint64_t u = 0;
  memcpy(&u, &v, sizeof v);
  emu_cur->slot[threadIdx.x] = u;
  emu_wait(w); // every lane has written
  u = emu_cur->slot[threadIdx.x ^ (unsigned)o];
  T r;
  memcpy(&r, &u, sizeof r);
  emu_wait(w);
  return r;
}

template <typename T> T __shfl_sync(unsigned, T v, int src) {
  const int w = 1 + (int)(threadIdx.x / 32);
  emu_wait(w);
  uint64_t u = 0;
  memcpy(&u, &v, sizeof v);
  emu_cur->slot[threadIdx.x] = u;
  emu_wait(w);
  u = emu_cur->slot[(threadIdx.x & ~31u) + (unsigned)src];
  T r;
  memcpy(&r, &u, sizeof r);
  emu_wait(w);
  return r;
}

// Launches succeed at once (they run synchronously); a kernel's own failure
// would show as a crash or a wrong result.
#define cudaGetLastError() cudaSuccess

template <typename F> static void emu_launch(unsigned g, int t, F f) {
  gridDim = {g, 1, 1};
  blockDim = {(unsigned)t, 1, 1};
  for (unsigned b = 0; b < g; b++)
    for (int i = 0; i < t; i++) {
      blockIdx = {b, 0, 0};
      threadIdx = {(unsigned)i, 0, 0};
      f();
    }
}

static void emu_fiber_main() {
  emu_block *b = emu_cur;
  b->invoke(b->arg);
  b->fibers[b->current].done = true;
} // returns to uc_link: the scheduler

template <typename F> static void emu_invoke(void *f) { (*(F *)f)(); }

// Prepares a fiber to start the kernel body on `stack`. Kept out of line:
// getcontext returns twice as far as the compiler knows, which would make it
// distrust the scheduler's loop variables.
__attribute__((noinline)) static void emu_fiber_init(emu_fiber *fb, char *stack, ucontext_t *link) {
  getcontext(&fb->ctx);
  fb->ctx.uc_stack.ss_sp = stack;
  fb->ctx.uc_stack.ss_size = EMU_FIBER_STACK;
  fb->ctx.uc_link = link;
  makecontext(&fb->ctx, emu_fiber_main, 0);
  fb->waiting = -1;
  fb->done = false;
}

// Runs every block of the launch with one fiber per thread (see the top).
template <typename F> static void emu_launch_par(unsigned g, int t, F f) {
  gridDim = {g, 1, 1};
  blockDim = {(unsigned)t, 1, 1};
  emu_block *outer = emu_cur;
  emu_block blk;
  blk.threads = t;
  blk.fibers.resize((size_t)t);
  blk.invoke = emu_invoke<F>;
  blk.arg = &f;
  while ((int)emu_stacks.size() < t) emu_stacks.emplace_back(new char[EMU_FIBER_STACK]);
  emu_cur = &blk;
  const int warps = (t + 31) / 32;
  std::vector<int> arrived((size_t)warps + 1);
  for (unsigned b = 0; b < g; b++) {
    blockIdx = {b, 0, 0};
    for (int i = 0; i < t; i++)
      emu_fiber_init(&blk.fibers[(size_t)i], emu_stacks[(size_t)i].get(), &blk.scheduler);
    for (;;) {
      int ran = 0, left = 0;
      for (int i = 0; i < t; i++) {
        emu_fiber &fb = blk.fibers[(size_t)i];
        if (fb.done || fb.waiting >= 0) continue;
        blk.current = i;
        threadIdx = {(unsigned)i, 0, 0};
        swapcontext(&blk.scheduler, &fb.ctx);
        ran++;
      }
      // Release every barrier all of whose participants have arrived.
      std::fill(arrived.begin(), arrived.end(), 0);
      for (int i = 0; i < t; i++) {
        const emu_fiber &fb = blk.fibers[(size_t)i];
        if (!fb.done) left++;
        if (fb.waiting >= 0) arrived[(size_t)fb.waiting]++;
      }
      if (left == 0) break;
      int released = 0;
      for (int i = 0; i < t; i++) {
        emu_fiber &fb = blk.fibers[(size_t)i];
        if (fb.waiting < 0) continue;
        const int lanes = t - 32 * (fb.waiting - 1); /* a last, partial warp has fewer */
        const int need = fb.waiting == 0 ? t : lanes < 32 ? lanes : 32;
        if (arrived[(size_t)fb.waiting] == need) {
          fb.waiting = -1;
          released++;
        }
      }
      if (ran == 0 && released == 0) {
        fprintf(stderr, "emu.h: block %u deadlocked: threads wait at barriers that cannot "
                "complete\n", b);
        abort();
      }
    }
  }
  emu_cur = outer;
}
