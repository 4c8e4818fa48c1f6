/*
 * Test doubles for the host emulation of the CUDA plugin (t/cuda-emu/build.sh).
 *
 * The emulated plugin is the real plugin's code (its table, contexts, memory,
 * plans and every op file, and every kernel rewritten for the host), linked
 * against these doubles instead of the CUDA runtime and cuBLAS, and with
 * cudnn_doubles.c in front of cuDNN. Only what needs a device is replaced:
 *  - the CUDA runtime: one emulated device whose memory is host memory and
 *    whose streams run work synchronously (kernels run at launch);
 *  - cuBLAS: handles here; the GEMMs and cuBLASLt's matmul computed on the
 *    host in cublaslt_doubles.c;
 *  - the probe (cuda_probe.c, which asks the real driver): one ready device.
 * Every double is named after what it replaces, so a reader (or a tool) can
 * tell it from the real one by its file alone.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_internal.h"

/* ---- CUDA runtime ------------------------------------------------------- */

/* The emulated device's size: small, so that grid-stride loops really loop
 * (a grid never covers a large tensor in one pass). */
enum { EMU_SM_COUNT = 3, EMU_THREADS_PER_SM = 2048 };

/* The emulated device's compute capability, major * 10 + minor: 90 (a
 * Hopper) unless ADNN_EMU_CUDA_CC says otherwise (e.g. 75, to see the BF16
 * convolutions that cuDNN runs only from 8.0 fall back). */
static int emu_cc(void) {
  const char *s = getenv("ADNN_EMU_CUDA_CC");
  const int cc = s ? atoi(s) : 0;
  return cc >= 10 && cc < 1000 ? cc : 90;
}

cudaError_t cudaGetDeviceCount(int *count) {
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  return device == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device) {
  if (device != 0) return cudaErrorInvalidDevice;
  switch (attr) {
    case cudaDevAttrMultiProcessorCount: *value = EMU_SM_COUNT; return cudaSuccess;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = EMU_THREADS_PER_SM; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor: *value = emu_cc() / 10; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor: *value = emu_cc() % 10; return cudaSuccess;
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t cudaMalloc(void **ptr, size_t bytes) {
  *ptr = malloc(bytes);
  return *ptr ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaFree(void *ptr) {
  free(ptr);
  return cudaSuccess;
}

/* The emulation's "device" memory is host memory from malloc, so it cannot
 * tell the two apart: every pointer is reported as device memory of device 0,
 * which exercises the plugin's registration path but not its refusals. */
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attr, const void *ptr) {
  memset(attr, 0, sizeof *attr);
  attr->type = cudaMemoryTypeDevice;
  attr->device = 0;
  attr->devicePointer = (void *)ptr;
  return cudaSuccess;
}

/* The emulation never fails asynchronously: there is no sticky error. */
cudaError_t cudaGetLastError(void) { return cudaSuccess; }

const char *cudaGetErrorName(cudaError_t err) {
  switch (err) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    default: return "cudaErrorUnknown";
  }
}

const char *cudaGetErrorString(cudaError_t err) {
  return err == cudaSuccess ? "no error" : "error of the CUDA runtime test double";
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags) {
  (void)flags;
  static int token;
  *stream = (cudaStream_t)&token; /* a distinct, never dereferenced handle */
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  (void)stream;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  (void)stream;
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                            cudaStream_t stream) {
  (void)kind, (void)stream;
  memmove(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *ptr, int value, size_t bytes, cudaStream_t stream) {
  (void)stream;
  memset(ptr, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemset2DAsync(void *ptr, size_t pitch, int value, size_t width, size_t height,
                              cudaStream_t stream) {
  (void)stream;
  for (size_t r = 0; r < height; r++) memset((char *)ptr + r * pitch, value, width);
  return cudaSuccess;
}

/* ---- cuBLAS ------------------------------------------------------------- */

cublasStatus_t cublasCreate(cublasHandle_t *handle) {
  static int token;
  *handle = (cublasHandle_t)&token;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  (void)handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  (void)handle, (void)stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  (void)handle, (void)mode;
  return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusName(cublasStatus_t status) {
  return status == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "CUBLAS_STATUS_NOT_SUPPORTED";
}

const char *cublasGetStatusString(cublasStatus_t status) {
  return status == CUBLAS_STATUS_SUCCESS ? "success" : "refused by the emulation";
}

/* GEMM (cublasGemmStridedBatchedEx and its _64 form, ?scal) is emulated in
 * cublaslt_doubles.c, with cuBLASLt. */

/* ---- the probe (replaces cuda_probe.c) ---------------------------------- */

adnn_status adnn_cuda__probe(adnn_plugin_report *report) {
  report->state = ADNN_BACKEND_READY;
  /* Below the CPU plugin's 10: "auto" never picks the emulation. */
  report->score = 1;
  adnn_plugin_report_reason(report, "host emulation of the CUDA plugin (t/cuda-emu), not a GPU");
  adnn_plugin_report_property(report, "emulated", "yes");
  adnn_plugin_report_device(report, 0, "host emulation");
  return ADNN_STATUS_SUCCESS;
}

int adnn_cuda__device_ordinal(int index) { return index == 0 ? 0 : -1; }

void adnn_cuda__device_identity(int index, char *buf, size_t size) {
  snprintf(buf, size, "host emulation of cuda device %d", index);
}
