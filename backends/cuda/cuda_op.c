/*
 * Helpers for the CUDA plugin's op files (see cuda_op.h): the op state, the
 * select of single-algorithm ops, and the plan's workspace.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "backends/cuda/cuda_op.h"

adnn_status adnn_cuda__plan_new_impl(adnn_plugin_plan *plan, size_t size) {
  plan->impl = calloc(1, size);
  if (plan->impl == NULL)
    return adnn_cuda__host->fail(ADNN_STATUS_OUT_OF_MEMORY, "cuda: out of host memory");
  return ADNN_STATUS_SUCCESS;
}

void adnn_cuda__plan_free_impl(adnn_plugin_plan *plan) {
  free(plan->impl);
  plan->impl = NULL;
}

adnn_status adnn_cuda__plan_select_single(adnn_plugin_plan *plan, int32_t candidate,
                                          const char *name) {
  if (candidate != 0)
    return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                 "cuda: %s has one algorithm (%s) and no candidate %d",
                                 adnn_plugin_op_name(plan->op->kind), name, (int)candidate);
  snprintf(plan->algorithm, sizeof plan->algorithm, "%s", name);
  return adnn_cuda__plan_workspace(plan, 0, name);
}

/* Frees the plan's workspace. cudaFree waits for the device to finish work
 * that may still use it (the core synchronizes nothing before a destroy or
 * a new select). A failure cannot be reported to anyone, so it is logged. */
static void release_workspace(adnn_plugin_plan *plan) {
  if (plan->workspace != NULL) {
    cudaError_t err = cudaFree(plan->workspace);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      adnn_cuda__log(ADNN_LOG_WARN, "cudaFree of a plan workspace: %s", cudaGetErrorName(err));
    }
  }
  plan->workspace = NULL;
  plan->workspace_bytes = 0;
}

adnn_status adnn_cuda__plan_workspace(adnn_plugin_plan *plan, size_t bytes, const char *what) {
  /* The tuner selects candidate after candidate on one plan; equal sizes are
   * common (the same algorithm family), and keeping the memory saves a
   * cudaFree / cudaMalloc pair, each of which synchronizes the device. */
  if (bytes == plan->workspace_bytes && (bytes == 0) == (plan->workspace == NULL))
    return ADNN_STATUS_SUCCESS;
  release_workspace(plan);
  if (bytes == 0) return ADNN_STATUS_SUCCESS;
  cudaError_t err = cudaMalloc(&plan->workspace, bytes);
  if (err != cudaSuccess) {
    plan->workspace = NULL;
    char msg[128];
    snprintf(msg, sizeof msg, "cudaMalloc of a %zu-byte %s workspace", bytes, what);
    return adnn_cuda__fail_runtime(err, msg);
  }
  plan->workspace_bytes = bytes;
  return ADNN_STATUS_SUCCESS;
}

size_t adnn_cuda__plan_element_size(const adnn_plugin_plan *plan) {
  switch (plan->op->dtype) {
    case ADNN_DTYPE_F64: return sizeof(double);
    case ADNN_DTYPE_F16:
    case ADNN_DTYPE_BF16: return sizeof(uint16_t);
    default: return sizeof(float);
  }
}
