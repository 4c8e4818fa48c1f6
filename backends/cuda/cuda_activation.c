/*
 * activation on the CUDA plugin: our kernel (kernels/cuda/activation.cu).
 * cuDNN's activations lack gelu, silu, softplus, hardswish and leaky relu, and
 * one kernel keeps the NaN rules of doc/ops.md in one place.
 *
 * x and y are coalesced once, at creation; when both are then one contiguous
 * run the kernel uses 16-byte vectors ("cuda:activation_vec16"), otherwise
 * it walks the coalesced strides ("cuda:activation_strided").
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

typedef struct activation_plan {
  adnn_plugin_activation p;
  adnn_cuda_elementwise_layout layout; /* strides[0] x, strides[1] y */
} activation_plan;

static adnn_status activation_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(activation_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  activation_plan *a = plan->impl;
  adnn_plugin_op_problem(plan->op, &a->p, sizeof a->p);
  const int64_t *strides[2] = {a->p.x.strides, a->p.y.strides};
  a->layout.contiguous = adnn_nd_coalesce(&a->layout.nd, a->p.x.rank, a->p.x.dims, 2, strides);
  return ADNN_STATUS_SUCCESS;
}

static adnn_status activation_select(adnn_plugin_plan *plan, int32_t candidate) {
  const activation_plan *a = plan->impl;
  return adnn_cuda__plan_select_single(
      plan, candidate, a->layout.contiguous ? "cuda:activation_vec16" : "cuda:activation_strided");
}

static adnn_status activation_execute(adnn_plugin_plan *plan, const void *const *in,
                                      void *const *out) {
  const activation_plan *a = plan->impl;
  return adnn_cuda__check_launch(
      adnn_cuda_activation_launch(&plan->launch, plan->op->dtype, &a->p, &a->layout, in[0], out[0]),
      "activation");
}

const adnn_cuda__op_impl adnn_cuda__activation_op = {
    .create = activation_create,
    .select = activation_select,
    .execute = activation_execute,
    .destroy = adnn_cuda__plan_free_impl,
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
};
