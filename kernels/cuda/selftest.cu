/*
 * The self-test kernel: one thread writes one word. Context creation launches
 * it to learn, before any real work, whether this build carries code the device
 * can run (SASS for its architecture, or PTX its driver can compile).
 */
#include <cuda_runtime.h>

namespace {

__global__ void selftest_kernel(unsigned *out, unsigned value) { *out = value; }

} // namespace

extern "C" __attribute__((visibility("hidden"))) cudaError_t
adnn_cuda_launch_selftest(unsigned *out, unsigned value, cudaStream_t stream) {
  selftest_kernel<<<1, 1, 0, stream>>>(out, value);
  return cudaGetLastError();
}
