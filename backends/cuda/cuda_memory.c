/*
 * Device memory of a context: allocation, copies and memset, all ordered on the
 * context's stream.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"

adnn_status adnn_cuda__mem_alloc(adnn_plugin_context *ctx, size_t bytes, void **ptr) {
  adnn_status status = adnn_cuda__context_enter(ctx);
  if (status != ADNN_STATUS_SUCCESS) return status;
  void *p = NULL;
  /* cudaMalloc returns 256-byte aligned memory, more than the 64 adnn promises. */
  cudaError_t err = cudaMalloc(&p, bytes);
  if (err != cudaSuccess) {
    char what[96];
    snprintf(what, sizeof what, "cudaMalloc of %zu bytes", bytes);
    return adnn_cuda__fail_runtime(err, what);
  }
  *ptr = p;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_cuda__mem_free(adnn_plugin_context *ctx, void *ptr) {
  adnn_status status = adnn_cuda__context_enter(ctx);
  if (status != ADNN_STATUS_SUCCESS) return status;
  /* cudaFree waits for the device to finish with the memory, so work still
   * queued on the stream that reads it completes first. */
  cudaError_t err = cudaFree(ptr);
  if (err != cudaSuccess) return adnn_cuda__fail_runtime(err, "cudaFree");
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_cuda__mem_copy(adnn_plugin_context *ctx, void *dst, const void *src, size_t bytes,
                                adnn_memcpy_kind kind) {
  enum cudaMemcpyKind direction;
  switch (kind) {
  case ADNN_MEMCPY_HOST_TO_DEVICE: direction = cudaMemcpyHostToDevice; break;
  case ADNN_MEMCPY_DEVICE_TO_HOST: direction = cudaMemcpyDeviceToHost; break;
  case ADNN_MEMCPY_DEVICE_TO_DEVICE: direction = cudaMemcpyDeviceToDevice; break;
  case ADNN_MEMCPY_HOST_TO_HOST:
    /* No device memory is involved; device-to-host copies already waited for
     * their data, so the host buffers are current. */
    memcpy(dst, src, bytes);
    return ADNN_STATUS_SUCCESS;
  default:
    return adnn_cuda__host->fail(ADNN_STATUS_BAD_PARAM, "cuda: unknown copy kind %d", (int)kind);
  }
  adnn_status status = adnn_cuda__context_enter(ctx);
  if (status != ADNN_STATUS_SUCCESS) return status;
  /* Queued on the stream so that the copy is ordered after earlier work of the
   * context (a GEMM that produces the data being read back, say). */
  cudaError_t err = cudaMemcpyAsync(dst, src, bytes, direction, ctx->stream);
  if (err != cudaSuccess) return adnn_cuda__fail_runtime(err, "cudaMemcpyAsync");
  if (direction != cudaMemcpyDeviceToDevice) {
    /* adnn's contract: a copy that touches host memory returns when the host
     * buffer may be reused or read, which needs the stream to reach the copy. */
    err = cudaStreamSynchronize(ctx->stream);
    if (err != cudaSuccess)
      return adnn_cuda__fail_runtime(err, "cudaStreamSynchronize after a copy");
  }
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_cuda__mem_set(adnn_plugin_context *ctx, void *ptr, int value, size_t bytes) {
  adnn_status status = adnn_cuda__context_enter(ctx);
  if (status != ADNN_STATUS_SUCCESS) return status;
  cudaError_t err = cudaMemsetAsync(ptr, value, bytes, ctx->stream);
  if (err != cudaSuccess) return adnn_cuda__fail_runtime(err, "cudaMemsetAsync");
  return ADNN_STATUS_SUCCESS;
}

/* Registration of application memory: the runtime's pointer attributes say
 * what a pointer is (cudaMemoryTypeDevice, Managed, Host or Unregistered) and
 * on which device; the last byte is asked too, so that a range that runs off
 * its allocation into other memory is caught where the runtime can see it. */
static adnn_status check_pointer(const adnn_plugin_context *ctx, const void *p, const char *which,
                                 uint32_t kind) {
  struct cudaPointerAttributes attr;
  memset(&attr, 0, sizeof attr);
  cudaError_t err = cudaPointerGetAttributes(&attr, p);
  if (err != cudaSuccess) {
    /* Older runtimes fail on plain host memory; clear the sticky error. */
    (void)cudaGetLastError();
    attr.type = cudaMemoryTypeUnregistered;
  }
  const int on_device = attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
  if (kind == ADNN_MEMORY_DEVICE) {
    if (!on_device)
      return adnn_cuda__host->fail(ADNN_STATUS_BAD_PARAM,
                                   "adnn_memory_register: the %s byte (%p) is %s memory, not "
                                   "device memory of GPU %d; register it as ADNN_MEMORY_HOST or "
                                   "copy it with adnn_memcpy", which, p,
                                   attr.type == cudaMemoryTypeHost ? "pinned host" : "host",
                                   ctx->device_index);
    if (attr.type == cudaMemoryTypeDevice && attr.device != ctx->ordinal)
      return adnn_cuda__host->fail(ADNN_STATUS_BAD_PARAM,
                                   "adnn_memory_register: the %s byte (%p) is memory of CUDA "
                                   "device %d, but this context runs on CUDA device %d (cuda:%d)",
                                   which, p, attr.device, ctx->ordinal, ctx->device_index);
    return ADNN_STATUS_SUCCESS;
  }
  if (attr.type == cudaMemoryTypeDevice)
    return adnn_cuda__host->fail(ADNN_STATUS_BAD_PARAM,
                                 "adnn_memory_register: the %s byte (%p) is device memory of "
                                 "CUDA device %d, not host memory; register it as "
                                 "ADNN_MEMORY_DEVICE", which, p, attr.device);
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_cuda__mem_register(adnn_plugin_context *ctx, void *ptr, size_t bytes,
                                    uint32_t kind) {
  adnn_status status = adnn_cuda__context_enter(ctx);
  if (status != ADNN_STATUS_SUCCESS) return status;
  status = check_pointer(ctx, ptr, "first", kind);
  if (status != ADNN_STATUS_SUCCESS || bytes == 1) return status;
  return check_pointer(ctx, (const char *)ptr + bytes - 1, "last", kind);
}
