/*
 * activation backward on the CUDA plugin: our kernel
 * (kernels/cuda/activation_backward.cu), for the same reasons as the forward
 * (cuDNN's activations lack most of the kinds, and the kink and NaN rules of
 * doc/ops.md live in one place). x's and y's layouts (those of dx and dy)
 * are coalesced once, at creation; when both are one dense run the kernel
 * indexes them directly ("cuda:activation_backward_packed"), otherwise it
 * walks the coalesced strides ("cuda:activation_backward_strided"). F16 and
 * BF16 run the same kernels, widened to F32 and rounded once.
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

typedef struct activation_backward_plan {
  adnn_plugin_activation_backward p;
  adnn_cuda_elementwise_layout layout; /* strides[0] x and dx, strides[1] dy */
} activation_backward_plan;

static adnn_status activation_backward_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(activation_backward_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  activation_backward_plan *a = plan->impl;
  adnn_plugin_op_problem(plan->op, &a->p, sizeof a->p);
  const int64_t *strides[2] = {a->p.fwd.x.strides, a->p.fwd.y.strides};
  a->layout.contiguous =
      adnn_nd_coalesce(&a->layout.nd, a->p.fwd.x.rank, a->p.fwd.x.dims, 2, strides);
  return ADNN_STATUS_SUCCESS;
}

static adnn_status activation_backward_select(adnn_plugin_plan *plan, int32_t candidate) {
  const activation_backward_plan *a = plan->impl;
  return adnn_cuda__plan_select_single(plan, candidate,
                                       a->layout.contiguous ? "cuda:activation_backward_packed"
                                                            : "cuda:activation_backward_strided");
}

/* Inputs {x, dy}, outputs {dx}. */
static adnn_status activation_backward_execute(adnn_plugin_plan *plan, const void *const *in,
                                               void *const *out) {
  const activation_backward_plan *a = plan->impl;
  return adnn_cuda__check_launch(
      adnn_cuda_activation_backward_launch(&plan->launch, plan->op->dtype, &a->p, &a->layout,
                                           in[0], in[1], out[0]),
      "activation_backward");
}

const adnn_cuda__op_impl adnn_cuda__activation_backward_op = {
    .create = activation_backward_create,
    .select = activation_backward_select,
    .execute = activation_backward_execute,
    .destroy = adnn_cuda__plan_free_impl,
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
};
