/*
 * The fused multi-tensor optimizer step on the CUDA plugin: our kernel
 * (kernels/cuda/optimizer.cu), one launch per group of up to
 * ADNN_CUDA_OPTIMIZER_GROUP tensors ("cuda:multi_tensor_apply").
 *
 * The learning rate and step change between executions
 * (adnn_plan_set_optimizer_step), so execute reads them from the core's live
 * problem (plan->op->problem), never from a copy made at creation.
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

static adnn_status optimizer_create(adnn_plugin_plan *plan) {
  (void)plan;
  return ADNN_STATUS_SUCCESS;
}

static adnn_status optimizer_select(adnn_plugin_plan *plan, int32_t candidate) {
  return adnn_cuda__plan_select_single(plan, candidate, "cuda:multi_tensor_apply");
}

static adnn_status optimizer_execute(adnn_plugin_plan *plan, const void *const *in,
                                     void *const *out) {
  adnn_plugin_optimizer p;
  adnn_plugin_op_problem(plan->op, &p, sizeof p);
  return adnn_cuda__check_launch(
      adnn_cuda_optimizer_launch(&plan->launch, plan->op->dtype, &p, in, out), "optimizer");
}

static void optimizer_destroy(adnn_plugin_plan *plan) { (void)plan; }

const adnn_cuda__op_impl adnn_cuda__optimizer_op = {
    .create = optimizer_create,
    .select = optimizer_select,
    .execute = optimizer_execute,
    .destroy = optimizer_destroy,
};
