/*
 * reorder on the CUDA plugin: our kernel (kernels/cuda/reorder.cu), one
 * thread per element over the coalesced layout, every dtype pair the core
 * allows, with kernels/common/convert.h's bits ("cuda:reorder"). y == x (the
 * same layout and dtype, the only overlap the core allows) is a no-op.
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

typedef struct reorder_plan {
  adnn_plugin_reorder p;
  adnn_cuda_elementwise_layout layout; /* strides[0] x, strides[1] y */
} reorder_plan;

static adnn_status reorder_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(reorder_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  reorder_plan *r = plan->impl;
  adnn_plugin_op_problem(plan->op, &r->p, sizeof r->p);
  const int64_t *strides[2] = {r->p.x.strides, r->p.y.strides};
  r->layout.contiguous = adnn_nd_coalesce(&r->layout.nd, r->p.x.rank, r->p.x.dims, 2, strides);
  return ADNN_STATUS_SUCCESS;
}

static adnn_status reorder_select(adnn_plugin_plan *plan, int32_t candidate) {
  return adnn_cuda__plan_select_single(plan, candidate, "cuda:reorder");
}

static adnn_status reorder_execute(adnn_plugin_plan *plan, const void *const *in,
                                   void *const *out) {
  const reorder_plan *r = plan->impl;
  if (in[0] == out[0]) return ADNN_STATUS_SUCCESS;
  return adnn_cuda__check_launch(adnn_cuda_reorder_launch(&plan->launch, &r->p, &r->layout, in[0],
                                                          out[0]),
                                 "reorder");
}

const adnn_cuda__op_impl adnn_cuda__reorder_op = {
    .create = reorder_create,
    .select = reorder_select,
    .execute = reorder_execute,
    .destroy = adnn_cuda__plan_free_impl,
    /* Every pair the core allows (op->dtype is x's). */
    .dtypes = ADNN_OP_DTYPES_ALL,
};
