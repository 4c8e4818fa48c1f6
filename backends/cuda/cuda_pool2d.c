/*
 * pool2d on the CUDA plugin: our kernel (kernels/cuda/pool2d.cu), because
 * cuDNN has neither ceil_mode nor asymmetric padding. The only thing derived
 * at creation is y's memory order, in which the kernel numbers the outputs.
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

typedef struct pool2d_plan {
  adnn_plugin_pool2d p;
  adnn_cuda_memory_order y_order;
} pool2d_plan;

static adnn_status pool2d_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(pool2d_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  pool2d_plan *p = plan->impl;
  adnn_plugin_op_problem(plan->op, &p->p, sizeof p->p);
  adnn_cuda__memory_order4(&p->p.y, &p->y_order);
  return ADNN_STATUS_SUCCESS;
}

static adnn_status pool2d_select(adnn_plugin_plan *plan, int32_t candidate) {
  return adnn_cuda__plan_select_single(plan, candidate, "cuda:pool2d_direct");
}

static adnn_status pool2d_execute(adnn_plugin_plan *plan, const void *const *in,
                                  void *const *out) {
  const pool2d_plan *p = plan->impl;
  return adnn_cuda__check_launch(adnn_cuda_pool2d_launch(&plan->launch, plan->op->dtype, &p->p,
                                                         &p->y_order, in[0], out[0]),
                                 "pool2d");
}

const adnn_cuda__op_impl adnn_cuda__pool2d_op = {
    .create = pool2d_create,
    .select = pool2d_select,
    .execute = pool2d_execute,
    .destroy = adnn_cuda__plan_free_impl,
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
};
