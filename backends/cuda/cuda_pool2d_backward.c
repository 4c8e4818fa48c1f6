/*
 * pool2d backward on the CUDA plugin: our kernel
 * (kernels/cuda/pool2d_backward.cu), one thread per element of dx gathering
 * from the windows that contain it, so the result needs no atomics and is
 * deterministic. cuDNN's pooling backward is not used: it has neither
 * ceil_mode nor asymmetric padding, like its forward, and its tie rule among
 * equal maxima is not documented. Derived at creation: x's memory order, in
 * which the kernel numbers dx's elements.
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

typedef struct pool2d_backward_plan {
  adnn_plugin_pool2d_backward p;
  adnn_cuda_memory_order x_order;
} pool2d_backward_plan;

static adnn_status pool2d_backward_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(pool2d_backward_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  pool2d_backward_plan *p = plan->impl;
  adnn_plugin_op_problem(plan->op, &p->p, sizeof p->p);
  adnn_cuda__memory_order4(&p->p.fwd.x, &p->x_order);
  return ADNN_STATUS_SUCCESS;
}

static adnn_status pool2d_backward_select(adnn_plugin_plan *plan, int32_t candidate) {
  return adnn_cuda__plan_select_single(plan, candidate, "cuda:pool2d_backward_gather");
}

/* Inputs {x, y, dy}: y is not read (the kernel finds the maxima in x). */
static adnn_status pool2d_backward_execute(adnn_plugin_plan *plan, const void *const *in,
                                           void *const *out) {
  const pool2d_backward_plan *p = plan->impl;
  return adnn_cuda__check_launch(adnn_cuda_pool2d_backward_launch(&plan->launch, plan->op->dtype,
                                                                  &p->p, &p->x_order, in[0],
                                                                  in[2], out[0]),
                                 "pool2d_backward");
}

const adnn_cuda__op_impl adnn_cuda__pool2d_backward_op = {
    .create = pool2d_backward_create,
    .select = pool2d_backward_select,
    .execute = pool2d_backward_execute,
    .destroy = adnn_cuda__plan_free_impl,
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
};
