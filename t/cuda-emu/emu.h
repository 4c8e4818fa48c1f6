// Host emulation of the CUDA kernels of kernels/cuda/ (a developer check for
// machines without a GPU; see run.sh). Kernels without barriers run every
// (block, thread) pair serially; kernels with __syncthreads / warp shuffles
// (the "_rows" kernels) run one std::thread per CUDA thread of a block, with a
// block barrier and per-warp barriers, so the reductions execute as written.
// Host libm replaces the device math functions, so results may differ from a
// GPU in the last bits; indexing, bounds, reductions and NaN logic are the
// kernels' own.
#pragma once
#include <cuda_runtime_api.h>
#include <vector_types.h>
#include <condition_variable>
#include <mutex>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>
using std::isnan; using std::isinf;
#undef __global__
#undef __device__
#undef __forceinline__
#undef __shared__
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static thread_local_shared
struct emu_barrier {
  std::mutex m; std::condition_variable cv; int n, waiting = 0; unsigned long gen = 0;
  explicit emu_barrier(int n_) : n(n_) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lk(m);
    unsigned long g = gen;
    if (++waiting == n) { waiting = 0; gen++; cv.notify_all(); return; }
    cv.wait(lk, [&] { return gen != g; });
  }
};
struct emu_dim { unsigned x, y, z; };
inline thread_local emu_dim blockIdx, threadIdx;
inline emu_dim gridDim, blockDim;
struct emu_block {
  emu_barrier *block;
  std::vector<std::unique_ptr<emu_barrier>> warps;
  uint64_t slot[1024];
};
inline thread_local emu_block *emu_cur;
template <typename T> T __shfl_xor_sync(unsigned, T v, int o) {
  emu_barrier &w = *emu_cur->warps[threadIdx.x / 32];
  w.arrive_and_wait();
  uint64_t u = 0; memcpy(&u, &v, sizeof v); emu_cur->slot[threadIdx.x] = u;
  w.arrive_and_wait();
  u = emu_cur->slot[threadIdx.x ^ (unsigned)o]; T r; memcpy(&r, &u, sizeof r);
  w.arrive_and_wait();
  return r;
}
template <typename T> T __shfl_sync(unsigned, T v, int src) {
  emu_barrier &w = *emu_cur->warps[threadIdx.x / 32];
  w.arrive_and_wait();
  uint64_t u = 0; memcpy(&u, &v, sizeof v); emu_cur->slot[threadIdx.x] = u;
  w.arrive_and_wait();
  u = emu_cur->slot[(threadIdx.x & ~31u) + (unsigned)src]; T r; memcpy(&r, &u, sizeof r);
  w.arrive_and_wait();
  return r;
}
static inline void __syncthreads() { emu_cur->block->arrive_and_wait(); }
#define cudaGetLastError() cudaSuccess
template <typename F> static void emu_launch(unsigned g, int t, F f) {
  gridDim = {g, 1, 1}; blockDim = {(unsigned)t, 1, 1};
  for (unsigned b = 0; b < g; b++)
    for (int i = 0; i < t; i++) { blockIdx = {b, 0, 0}; threadIdx = {(unsigned)i, 0, 0}; f(); }
}
// Block-parallel: "__shared__" arrays are per-block statics shared by the threads.
template <typename F> static void emu_launch_par(unsigned g, int t, F f) {
  gridDim = {g, 1, 1}; blockDim = {(unsigned)t, 1, 1};
  for (unsigned b = 0; b < g; b++) {
    emu_block blk; emu_barrier bar(t); blk.block = &bar;
    for (int w = 0; w < (t + 31) / 32; w++) blk.warps.emplace_back(new emu_barrier(32));
    std::vector<std::thread> th;
    for (int i = 0; i < t; i++)
      th.emplace_back([&, i] { emu_cur = &blk; blockIdx = {b, 0, 0}; threadIdx = {(unsigned)i, 0, 0}; f(); });
    for (auto &x : th) x.join();
  }
}
#define thread_local_shared
