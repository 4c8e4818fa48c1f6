/*
 * Internal declarations shared by the files of the CUDA plugin.
 *
 * The plugin is one shared object that exports only adnn_plugin_entry; every
 * name declared here has hidden visibility (the build uses -fvisibility=hidden
 * and an export list). Plugin-internal names are adnn_cuda__* (doc/kernels.md),
 * which keeps them apart from the kernels' adnn_cuda_* launchers and from the
 * statically linked CUDA runtime.
 *
 * The plans (cuda_plan.h) and their per-op files build on these declarations;
 * nothing here depends on them.
 */
#ifndef ADNN_CUDA_INTERNAL_H
#define ADNN_CUDA_INTERNAL_H

#include <stdint.h>

#include <adnn/plugin.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

/* The lowest compute capability (major * 10 + minor) for which the build carries
 * SASS or PTX. configure derives it from CUDA_ARCH_FLAGS; 75 is the lowest
 * CUDA 13 supports at all. */
#ifndef ADNN_CUDA_MIN_SM
#define ADNN_CUDA_MIN_SM 75
#endif

/* The nvcc architecture flags, for reports only. */
#ifndef ADNN_CUDA_ARCH_FLAGS
#define ADNN_CUDA_ARCH_FLAGS "unknown"
#endif

/* The host table handed to adnn_plugin_entry; set once before any other call
 * (defined in cuda_errors.c). */
extern const adnn_plugin_host *adnn_cuda__host;

/* Logs through the core (never prints). */
#define adnn_cuda__log(level, ...) adnn_cuda__host->log((level), "cuda", __VA_ARGS__)

/* ---- probe (cuda_probe.c) ---------------------------------------------- */

/* The probe slot: asks the driver (libcuda.so.1, opened with dlopen) whether
 * this machine can run the plugin, and fills the report with the state, the
 * reason and the usable devices. Creates no device context. */
adnn_status adnn_cuda__probe(adnn_plugin_report *report);

/* The CUDA device ordinal behind adnn device index `index` (the probe skips
 * devices it cannot use, so the two can differ), or -1 when out of range. */
int adnn_cuda__device_ordinal(int index);

/* The device_identity slot: GPU name, compute capability, SM count, and the
 * driver, cuDNN and cuBLAS versions, for the performance database. */
void adnn_cuda__device_identity(int index, char *buf, size_t size);

/* ---- version rules (cuda_compat.c) ------------------------------------- */

/* Renders a CUDA version number (13000) as "13.0". */
void adnn_cuda__format_cuda_version(int version, char *buf, size_t len);

/* The oldest driver release (e.g. 580) that supports CUDA `major`, or 0 when
 * the plugin does not know that major. */
int adnn_cuda__min_driver_for_cuda_major(int major);

/* Checks that a driver supporting CUDA `driver_version` can run code built with
 * CUDA runtime `runtime_version` (minor-version compatibility: same or newer
 * major). Returns 1 when it can; otherwise 0 and a sentence for the report. */
int adnn_cuda__driver_compatible(int driver_version, int runtime_version, char *why, size_t len);

/* Checks a library found at run time against the one the plugin was built with,
 * both as major * 10000 + minor * 100 + patch (the cuDNN 9 and cuBLAS
 * encoding): the major must match and the run-time minor must be at least the
 * build minor. Returns 1 when compatible; otherwise 0 and a sentence naming both
 * versions and what to install. */
int adnn_cuda__library_compatible(const char *library, int built, int found, const char *advice,
                                  char *why, size_t len);

/* ---- errors (cuda_errors.c) -------------------------------------------- */

/* Each of these records a failure for adnn_last_error() with the vendor's error
 * name and description, maps it to an adnn status and returns that status.
 * `what` names the failing step ("cudaMalloc of 4096 bytes"). */
adnn_status adnn_cuda__fail_runtime(cudaError_t err, const char *what);
adnn_status adnn_cuda__fail_cublas(cublasStatus_t err, const char *what);
adnn_status adnn_cuda__fail_cudnn(cudnnStatus_t err, const char *what);

/* The adnn status for each vendor code (exposed for the unit tests' sake). */
adnn_status adnn_cuda__status_from_runtime(cudaError_t err);
adnn_status adnn_cuda__status_from_cublas(cublasStatus_t err);
adnn_status adnn_cuda__status_from_cudnn(cudnnStatus_t err);

/* ---- contexts (cuda_context.c) ----------------------------------------- */

struct adnn_plugin_context {
  int device_index;      /* adnn's index: the N of "cuda:N" */
  int ordinal;           /* the CUDA device ordinal */
  cudaStream_t stream;   /* every operation of the context is queued here */
  cublasHandle_t cublas; /* bound to `stream` */
  cudnnHandle_t cudnn;   /* created on first use (adnn_cuda__context_cudnn), bound to `stream` */
};

/* The init slot: the first call into the CUDA runtime (which must agree with
 * the probe that a device exists); also warns once about retired environment
 * variables that no longer have an effect. */
adnn_status adnn_cuda__init(void);

/* The context slots: one device, one non-blocking stream, one cuBLAS handle
 * (and a cuDNN handle made on first use). Creation runs the self-test kernel,
 * so that a build without code for the device fails here. */
adnn_status adnn_cuda__context_create(int device, adnn_plugin_context **out);
void adnn_cuda__context_destroy(adnn_plugin_context *ctx);

/* Waits for the context's stream; asynchronous failures of queued work
 * surface here. */
adnn_status adnn_cuda__synchronize(adnn_plugin_context *ctx);

/* Makes the context's device current on the calling thread. The core may use a
 * context from different threads (one at a time), and the CUDA runtime keeps
 * the current device per thread, so every entry point calls this first. */
adnn_status adnn_cuda__context_enter(adnn_plugin_context *ctx);

/* The context's cuDNN handle, created and bound to the stream on first use. */
adnn_status adnn_cuda__context_cudnn(adnn_plugin_context *ctx, cudnnHandle_t *out);

/* ---- memory (cuda_memory.c) -------------------------------------------- */

/* The memory slots: cudaMalloc / cudaFree on the context's device, copies and
 * memset queued on its stream (copies that touch host memory wait for it). */
adnn_status adnn_cuda__mem_alloc(adnn_plugin_context *ctx, size_t bytes, void **ptr);
adnn_status adnn_cuda__mem_free(adnn_plugin_context *ctx, void *ptr);
adnn_status adnn_cuda__mem_copy(adnn_plugin_context *ctx, void *dst, const void *src, size_t bytes,
                                adnn_memcpy_kind kind);
adnn_status adnn_cuda__mem_set(adnn_plugin_context *ctx, void *ptr, int value, size_t bytes);
/* The mem_register slot: checks with cudaPointerGetAttributes that device
 * memory belongs to the context's GPU and host memory is not device memory. */
adnn_status adnn_cuda__mem_register(adnn_plugin_context *ctx, void *ptr, size_t bytes,
                                    uint32_t kind);

/* ---- GEMM (cuda_gemm.c) ------------------------------------------------ */

/* The gemm slot: adnn's row-major GEMM as cuBLAS's column-major transpose
 * (no data moves); FP32 unless the context allows TF32. */
adnn_status adnn_cuda__gemm(adnn_plugin_context *ctx, const adnn_plugin_gemm_args *args);

#endif /* ADNN_CUDA_INTERNAL_H */
