/*
 * The self-test kernel: one thread writes one word. Context creation launches
 * it to learn, before any real work, whether this build carries code the device
 * can run (SASS for its architecture, or PTX its driver can compile).
 */
#include "kernels/cuda/common.cuh"

namespace adnn_cuda {

__global__ void selftest_kernel(unsigned *out, unsigned value) { *out = value; }

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_selftest_launch(unsigned *out, unsigned value,
                                                    cudaStream_t stream) {
  selftest_kernel<<<1, 1, 0, stream>>>(out, value);
  return cudaGetLastError();
}
