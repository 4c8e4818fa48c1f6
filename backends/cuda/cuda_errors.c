/*
 * Turning CUDA runtime, cuBLAS and cuDNN error codes into adnn statuses.
 *
 * The message always carries the vendor's own error name (cudaErrorMemoryAllocation,
 * CUBLAS_STATUS_ALLOC_FAILED...) so that a user can search for it, and the step
 * that failed. Out-of-memory on the device has its own adnn status because
 * callers can react to it (free caches, use smaller batches).
 */
#include "config.h"

#include "cuda_internal.h"

/* Every failure and log line of the plugin goes through the host table, so it
 * lives here, below every other file of the plugin: none of them depends on
 * the plugin's table (cuda_plugin.c), which depends on them all. */
const adnn_plugin_host *adnn_cuda__host;

adnn_status adnn_cuda__status_from_runtime(cudaError_t err) {
  switch (err) {
  case cudaSuccess:
    return ADNN_STATUS_SUCCESS;
  case cudaErrorMemoryAllocation:
    return ADNN_STATUS_DEVICE_OUT_OF_MEMORY;
  case cudaErrorInvalidValue:
  case cudaErrorInvalidDevicePointer:
  case cudaErrorInvalidMemcpyDirection:
  case cudaErrorInvalidDevice:
    return ADNN_STATUS_BAD_PARAM;
  case cudaErrorNotSupported:
    return ADNN_STATUS_NOT_SUPPORTED;
  /* The machine cannot run CUDA at all, or not this build's code. */
  case cudaErrorInsufficientDriver:
  case cudaErrorNoDevice:
  case cudaErrorStubLibrary:
  case cudaErrorDevicesUnavailable:
  case cudaErrorSystemNotReady:
  case cudaErrorSystemDriverMismatch:
  case cudaErrorCompatNotSupportedOnDevice:
  case cudaErrorCallRequiresNewerDriver:
    return ADNN_STATUS_BACKEND_UNAVAILABLE;
  case cudaErrorNoKernelImageForDevice:
  case cudaErrorUnsupportedPtxVersion:
  case cudaErrorInvalidKernelImage:
    return ADNN_STATUS_BACKEND_INCOMPATIBLE;
  default:
    return ADNN_STATUS_EXECUTION_FAILED;
  }
}

adnn_status adnn_cuda__status_from_cublas(cublasStatus_t err) {
  switch (err) {
  case CUBLAS_STATUS_SUCCESS:
    return ADNN_STATUS_SUCCESS;
  case CUBLAS_STATUS_ALLOC_FAILED:
    return ADNN_STATUS_DEVICE_OUT_OF_MEMORY;
  case CUBLAS_STATUS_INVALID_VALUE:
    return ADNN_STATUS_BAD_PARAM;
  case CUBLAS_STATUS_NOT_SUPPORTED:
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return ADNN_STATUS_NOT_SUPPORTED;
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return ADNN_STATUS_BACKEND_UNAVAILABLE;
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return ADNN_STATUS_INTERNAL_ERROR;
  default: /* MAPPING_ERROR, EXECUTION_FAILED, LICENSE_ERROR and later codes */
    return ADNN_STATUS_EXECUTION_FAILED;
  }
}

adnn_status adnn_cuda__status_from_cudnn(cudnnStatus_t err) {
  switch (err) {
  case CUDNN_STATUS_SUCCESS:
    return ADNN_STATUS_SUCCESS;
  case CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED:
    return ADNN_STATUS_DEVICE_OUT_OF_MEMORY;
  case CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED:
    return ADNN_STATUS_OUT_OF_MEMORY;
  case CUDNN_STATUS_NOT_INITIALIZED:
  case CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED:
  case CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER:
  case CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE:
    return ADNN_STATUS_BACKEND_UNAVAILABLE;
  case CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH:
  case CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART:
    return ADNN_STATUS_BACKEND_INCOMPATIBLE;
  default:
    break;
  }
  /* cuDNN 9 groups its codes by category in the thousands digit, like adnn. */
  switch ((int)err / 1000) {
  case 2: return ADNN_STATUS_BAD_PARAM;     /* CUDNN_STATUS_BAD_PARAM* */
  case 3: return ADNN_STATUS_NOT_SUPPORTED; /* CUDNN_STATUS_NOT_SUPPORTED* */
  case 4: return ADNN_STATUS_INTERNAL_ERROR; /* CUDNN_STATUS_INTERNAL_ERROR* */
  default: return ADNN_STATUS_EXECUTION_FAILED; /* EXECUTION_FAILED*, versions, licences */
  }
}

adnn_status adnn_cuda__fail_runtime(cudaError_t err, const char *what) {
  /* Non-sticky runtime errors stay recorded as the thread's "last error" and
   * would be returned again by cudaGetLastError(); reading it here clears it,
   * so that a later, unrelated check does not report this failure again. */
  (void)cudaGetLastError();
  return adnn_cuda__host->fail(adnn_cuda__status_from_runtime(err), "cuda: %s failed: %s (%d): %s",
                               what, cudaGetErrorName(err), (int)err, cudaGetErrorString(err));
}

adnn_status adnn_cuda__fail_cublas(cublasStatus_t err, const char *what) {
  return adnn_cuda__host->fail(adnn_cuda__status_from_cublas(err), "cuda: %s failed: %s (%d): %s",
                               what, cublasGetStatusName(err), (int)err,
                               cublasGetStatusString(err));
}

adnn_status adnn_cuda__fail_cudnn(cudnnStatus_t err, const char *what) {
  return adnn_cuda__host->fail(adnn_cuda__status_from_cudnn(err), "cuda: %s failed: %s (%d)", what,
                               cudnnGetErrorString(err), (int)err);
}
