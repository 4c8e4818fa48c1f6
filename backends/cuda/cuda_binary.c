/*
 * binary (broadcasting elementwise ops) on the CUDA plugin: our kernel
 * (kernels/cuda/binary.cu).
 *
 * The core has already broadcast a and b to y's rank (stride 0 where they
 * repeat); the three are coalesced once, at creation. When all three are then
 * one contiguous run (no broadcasting) the kernel uses 16-byte vectors
 * ("cuda:binary_vec16"), otherwise it walks the coalesced strides
 * ("cuda:binary_broadcast").
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

typedef struct binary_plan {
  adnn_plugin_binary p;
  adnn_cuda_elementwise_layout layout; /* strides[0] a, strides[1] b, strides[2] y */
} binary_plan;

static adnn_status binary_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(binary_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  binary_plan *b = plan->impl;
  adnn_plugin_op_problem(plan->op, &b->p, sizeof b->p);
  const int64_t *strides[3] = {b->p.a.strides, b->p.b.strides, b->p.y.strides};
  b->layout.contiguous = adnn_nd_coalesce(&b->layout.nd, b->p.y.rank, b->p.y.dims, 3, strides);
  return ADNN_STATUS_SUCCESS;
}

static adnn_status binary_select(adnn_plugin_plan *plan, int32_t candidate) {
  const binary_plan *b = plan->impl;
  return adnn_cuda__plan_select_single(
      plan, candidate, b->layout.contiguous ? "cuda:binary_vec16" : "cuda:binary_broadcast");
}

static adnn_status binary_execute(adnn_plugin_plan *plan, const void *const *in,
                                  void *const *out) {
  const binary_plan *b = plan->impl;
  return adnn_cuda__check_launch(adnn_cuda_binary_launch(&plan->launch, plan->op->dtype, &b->p,
                                                         &b->layout, in[0], in[1], out[0]),
                                 "binary");
}

const adnn_cuda__op_impl adnn_cuda__binary_op = {
    .create = binary_create,
    .select = binary_select,
    .execute = binary_execute,
    .destroy = adnn_cuda__plan_free_impl,
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
};
