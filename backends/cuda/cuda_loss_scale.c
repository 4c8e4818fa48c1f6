/*
 * Loss scaling on the CUDA plugin: our kernel (kernels/cuda/loss_scale.cu),
 * one launch per group of up to ADNN_CUDA_LOSS_SCALE_GROUP tensors
 * ("cuda:multi_tensor_apply"), F32, F64, F16 and BF16. The scale is read on
 * the device, so nothing is synchronized with the host.
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

static adnn_status loss_scale_create(adnn_plugin_plan *plan) {
  (void)plan;
  return ADNN_STATUS_SUCCESS;
}

static adnn_status loss_scale_select(adnn_plugin_plan *plan, int32_t candidate) {
  return adnn_cuda__plan_select_single(plan, candidate, "cuda:multi_tensor_apply");
}

static adnn_status loss_scale_execute(adnn_plugin_plan *plan, const void *const *in,
                                      void *const *out) {
  adnn_plugin_loss_scale p;
  adnn_plugin_op_problem(plan->op, &p, sizeof p);
  return adnn_cuda__check_launch(adnn_cuda_loss_scale_launch(&plan->launch, &p, in[0], out),
                                 "loss_scale");
}

static void loss_scale_destroy(adnn_plugin_plan *plan) { (void)plan; }

const adnn_cuda__op_impl adnn_cuda__loss_scale_op = {
    .create = loss_scale_create,
    .select = loss_scale_select,
    .execute = loss_scale_execute,
    .destroy = loss_scale_destroy,
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
};
