/*
 * Layer-norm and RMS-norm backward on the CUDA plugin: our own kernels
 * (kernels/cuda/norm_backward.cu): one block per row for dx, then one thread
 * per column for dgain and dbias from the rows' statistics, which live in
 * the plan's workspace (2 doubles per row) between the two kernels
 * ("cuda:norm_backward_block_per_row").
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

typedef struct norm_backward_plan {
  adnn_plugin_norm_backward p;
  adnn_cuda_norm_backward_layout layout;
} norm_backward_plan;

static adnn_status norm_backward_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(norm_backward_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  norm_backward_plan *n = plan->impl;
  adnn_plugin_op_problem(plan->op, &n->p, sizeof n->p);
  /* [0] x, [1] dy (y's layout), [2] dx (x's layout). */
  const adnn_tensor_desc *x = &n->p.fwd.x, *y = &n->p.fwd.y;
  const int lead = x->rank - n->p.fwd.norm_dims;
  const int64_t *rows[3] = {x->strides, y->strides, x->strides};
  adnn_nd_coalesce(&n->layout.rows, lead, x->dims, 3, rows);
  const int64_t *cols[3] = {x->strides + lead, y->strides + lead, x->strides + lead};
  adnn_nd_coalesce(&n->layout.cols, n->p.fwd.norm_dims, x->dims + lead, 3, cols);
  if (n->layout.cols.rank == 0) {
    /* D == 1: the kernels still walk one column, of stride 0. */
    n->layout.cols.rank = 1;
    n->layout.cols.dims[0] = 1;
  }
  return ADNN_STATUS_SUCCESS;
}

static adnn_status norm_backward_select(adnn_plugin_plan *plan, int32_t candidate) {
  const norm_backward_plan *n = plan->impl;
  adnn_status st =
      adnn_cuda__plan_select_single(plan, candidate, "cuda:norm_backward_block_per_row");
  if (st != ADNN_STATUS_SUCCESS) return st;
  const int cols = n->p.fwd.has_gain || n->p.fwd.has_bias;
  return adnn_cuda__plan_workspace(plan, cols ? (size_t)n->p.fwd.rows * 2 * sizeof(double) : 0,
                                   "norm_backward row statistics");
}

static adnn_status norm_backward_execute(adnn_plugin_plan *plan, const void *const *in,
                                         void *const *out) {
  const norm_backward_plan *n = plan->impl;
  /* Inputs {x, dy[, gain]}; outputs {dx[, dgain][, dbias]}. */
  const void *gain = n->p.fwd.has_gain ? in[2] : NULL;
  void *dgain = n->p.fwd.has_gain ? out[1] : NULL;
  void *dbias = n->p.fwd.has_bias ? out[1 + n->p.fwd.has_gain] : NULL;
  return adnn_cuda__check_launch(
      adnn_cuda_norm_backward_launch(&plan->launch, plan->op->dtype, &n->p, &n->layout, in[0],
                                     in[1], gain, out[0], dgain, dbias, plan->workspace),
      "norm_backward");
}

const adnn_cuda__op_impl adnn_cuda__norm_backward_op = {
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
    .create = norm_backward_create,
    .select = norm_backward_select,
    .execute = norm_backward_execute,
    .destroy = adnn_cuda__plan_free_impl,
};
