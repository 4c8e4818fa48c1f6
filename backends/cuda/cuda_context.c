/*
 * Contexts: one device, one stream, one cuBLAS handle (and a cuDNN handle made
 * on first use). Everything a context queues goes to its own stream, so work of
 * different contexts never serializes on the legacy default stream.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cuda_internal.h"
#include "kernels/cuda/cuda_kernels.h"

/* Environment variables of earlier releases that the plugin no longer reads,
 * and what replaced them. Someone who still sets one expects an effect, so
 * each is named once per process, at the first use of the plugin. */
static void warn_retired_variables(void) {
  static const struct {
    const char *name;
    const char *instead;
  } retired[] = {
      {"ADNN_CUDA_WORKSPACE_LIMIT",
       "the workspace limit is the core's ADNN_TUNE_WORKSPACE_LIMIT (default 256M), which "
       "also bounds the plugin's own conv2d choice"},
      {"ADNN_CUDA_CONV_FIND",
       "the core's tuner measures the conv2d candidates (ADNN_TUNE=default or exhaustive) "
       "and stores the winner in the performance database"},
  };
  for (size_t i = 0; i < sizeof retired / sizeof retired[0]; i++) {
    const char *v = adnn_cuda__host->getenv(retired[i].name);
    if (v != NULL && *v != '\0')
      adnn_cuda__log(ADNN_LOG_WARN, "ignoring %s=\"%s\": it is no longer read; %s",
                     retired[i].name, v, retired[i].instead);
  }
}

adnn_status adnn_cuda__init(void) {
  /* The core calls init once per process, before the first context. */
  warn_retired_variables();
  /* The probe asked the driver directly; this is the first call into the CUDA
   * runtime. If the runtime disagrees (for instance a libcuda.so.1 that the
   * runtime cannot use), context creation fails here with the runtime's reason. */
  int count = 0; /* not written on failure */
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) return adnn_cuda__fail_runtime(err, "cudaGetDeviceCount");
  if (count <= 0)
    return adnn_cuda__host->fail(ADNN_STATUS_BACKEND_UNAVAILABLE,
                                 "cuda: the CUDA runtime sees no device although the driver "
                                 "reported one");
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_cuda__context_enter(adnn_plugin_context *ctx) {
  cudaError_t err = cudaSetDevice(ctx->ordinal);
  if (err != cudaSuccess) return adnn_cuda__fail_runtime(err, "cudaSetDevice");
  return ADNN_STATUS_SUCCESS;
}

/* Runs the self-test kernel once: a device for which the build has no SASS and
 * whose driver cannot JIT the PTX fails here, with a clear message, instead of
 * at the first operation that needs one of our kernels. */
static adnn_status run_selftest(adnn_plugin_context *ctx) {
  const unsigned expected = 0xadd1u;
  unsigned *word = NULL, got = 0;
  cudaError_t err = cudaMalloc((void **)&word, sizeof *word);
  if (err != cudaSuccess) return adnn_cuda__fail_runtime(err, "cudaMalloc of the self-test word");
  adnn_status status = ADNN_STATUS_SUCCESS;
  err = adnn_cuda_selftest_launch(word, expected, ctx->stream);
  if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorUnsupportedPtxVersion ||
      err == cudaErrorInvalidKernelImage) {
    (void)cudaGetLastError();
    status = adnn_cuda__host->fail(ADNN_STATUS_BACKEND_INCOMPATIBLE,
                                   "cuda: this build carries no GPU code that device %d can run "
                                   "(%s: %s); rebuild with its architecture in CUDA_ARCH_FLAGS "
                                   "(now: %s) or update the NVIDIA driver",
                                   ctx->device_index, cudaGetErrorName(err),
                                   cudaGetErrorString(err), ADNN_CUDA_ARCH_FLAGS);
  } else if (err != cudaSuccess) {
    status = adnn_cuda__fail_runtime(err, "launching the self-test kernel");
  } else {
    err = cudaMemcpyAsync(&got, word, sizeof got, cudaMemcpyDeviceToHost, ctx->stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(ctx->stream);
    if (err != cudaSuccess)
      status = adnn_cuda__fail_runtime(err, "reading back the self-test word");
    else if (got != expected)
      status = adnn_cuda__host->fail(ADNN_STATUS_EXECUTION_FAILED,
                                     "cuda: the self-test kernel wrote 0x%x instead of 0x%x", got,
                                     expected);
  }
  cudaFree(word);
  return status;
}

adnn_status adnn_cuda__context_create(int device, adnn_plugin_context **out) {
  int ordinal = adnn_cuda__device_ordinal(device);
  if (ordinal < 0)
    return adnn_cuda__host->fail(ADNN_STATUS_BAD_PARAM, "cuda: there is no usable device %d",
                                 device);
  adnn_plugin_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return adnn_cuda__host->fail(ADNN_STATUS_OUT_OF_MEMORY, "cuda: out of host memory");
  ctx->device_index = device;
  ctx->ordinal = ordinal;

  adnn_status status = adnn_cuda__context_enter(ctx);
  if (status != ADNN_STATUS_SUCCESS) goto fail;
  /* A non-blocking stream does not synchronize with the legacy default stream,
   * which other libraries in the same process may be using. */
  cudaError_t err = cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking);
  if (err != cudaSuccess) {
    ctx->stream = NULL;
    status = adnn_cuda__fail_runtime(err, "cudaStreamCreateWithFlags");
    goto fail;
  }
  cublasStatus_t berr = cublasCreate(&ctx->cublas);
  if (berr != CUBLAS_STATUS_SUCCESS) {
    ctx->cublas = NULL;
    status = adnn_cuda__fail_cublas(berr, "cublasCreate");
    goto fail;
  }
  berr = cublasSetStream(ctx->cublas, ctx->stream);
  if (berr != CUBLAS_STATUS_SUCCESS) {
    status = adnn_cuda__fail_cublas(berr, "cublasSetStream");
    goto fail;
  }
  /* FP32 stays FP32: the default math mode never down-converts to TF32; GEMM
   * asks for TF32 per call, through its compute type, when the context allows it. */
  berr = cublasSetMathMode(ctx->cublas, CUBLAS_DEFAULT_MATH);
  if (berr != CUBLAS_STATUS_SUCCESS) {
    status = adnn_cuda__fail_cublas(berr, "cublasSetMathMode");
    goto fail;
  }
  status = run_selftest(ctx);
  if (status != ADNN_STATUS_SUCCESS) goto fail;
  *out = ctx;
  return ADNN_STATUS_SUCCESS;

fail:
  adnn_cuda__context_destroy(ctx);
  return status;
}

void adnn_cuda__context_destroy(adnn_plugin_context *ctx) {
  if (!ctx) return;
  /* Destruction cannot report errors; a failing call here changes nothing for
   * the caller, so the results are only logged. */
  if (cudaSetDevice(ctx->ordinal) != cudaSuccess) (void)cudaGetLastError();
  if (ctx->cudnn) {
    cudnnStatus_t e = cudnnDestroy(ctx->cudnn);
    if (e != CUDNN_STATUS_SUCCESS)
      adnn_cuda__log(ADNN_LOG_WARN, "cudnnDestroy: %s", cudnnGetErrorString(e));
  }
  if (ctx->cublas) {
    cublasStatus_t e = cublasDestroy(ctx->cublas);
    if (e != CUBLAS_STATUS_SUCCESS)
      adnn_cuda__log(ADNN_LOG_WARN, "cublasDestroy: %s", cublasGetStatusName(e));
  }
  if (ctx->stream) {
    cudaError_t e = cudaStreamDestroy(ctx->stream);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      adnn_cuda__log(ADNN_LOG_WARN, "cudaStreamDestroy: %s", cudaGetErrorName(e));
    }
  }
  free(ctx);
}

adnn_status adnn_cuda__synchronize(adnn_plugin_context *ctx) {
  adnn_status status = adnn_cuda__context_enter(ctx);
  if (status != ADNN_STATUS_SUCCESS) return status;
  cudaError_t err = cudaStreamSynchronize(ctx->stream);
  if (err != cudaSuccess) {
    /* An asynchronous failure of queued work surfaces here; whatever its code,
     * for the caller it means that queued work did not run correctly. */
    (void)cudaGetLastError();
    return adnn_cuda__host->fail(err == cudaErrorMemoryAllocation
                                     ? ADNN_STATUS_DEVICE_OUT_OF_MEMORY
                                     : ADNN_STATUS_EXECUTION_FAILED,
                                 "cuda: queued work failed (cudaStreamSynchronize): %s (%d): %s",
                                 cudaGetErrorName(err), (int)err, cudaGetErrorString(err));
  }
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_cuda__context_cudnn(adnn_plugin_context *ctx, cudnnHandle_t *out) {
  if (!ctx->cudnn) {
    /* cuDNN loads its engine sub-libraries and allocates device state on
     * creation, which costs time and memory that a GEMM-only user never needs. */
    cudnnHandle_t handle = NULL;
    cudnnStatus_t err = cudnnCreate(&handle);
    if (err != CUDNN_STATUS_SUCCESS) return adnn_cuda__fail_cudnn(err, "cudnnCreate");
    err = cudnnSetStream(handle, ctx->stream);
    if (err != CUDNN_STATUS_SUCCESS) {
      cudnnDestroy(handle);
      return adnn_cuda__fail_cudnn(err, "cudnnSetStream");
    }
    ctx->cudnn = handle;
  }
  *out = ctx->cudnn;
  return ADNN_STATUS_SUCCESS;
}
