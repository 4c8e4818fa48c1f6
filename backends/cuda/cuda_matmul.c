/*
 * matmul on the CUDA plugin: not implemented yet on this branch; plans are
 * refused with NOT_SUPPORTED so that the harness reports the gap.
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

static adnn_status matmul_create(adnn_plugin_plan *plan) {
  (void)plan;
  return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED, "cuda: matmul is not implemented yet");
}

static adnn_status matmul_select(adnn_plugin_plan *plan, int32_t candidate) {
  return adnn_cuda__plan_select_single(plan, candidate, "cuda:matmul");
}

static adnn_status matmul_execute(adnn_plugin_plan *plan, const void *const *in,
                                  void *const *out) {
  (void)plan;
  (void)in;
  (void)out;
  return ADNN_STATUS_NOT_SUPPORTED;
}

const adnn_cuda__op_impl adnn_cuda__matmul_op = {
    .create = matmul_create,
    .select = matmul_select,
    .execute = matmul_execute,
    .destroy = adnn_cuda__plan_free_impl,
};
