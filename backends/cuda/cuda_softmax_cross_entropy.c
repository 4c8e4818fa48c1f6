/*
 * Softmax cross-entropy, forward and backward, on the CUDA plugin: our
 * kernels (kernels/cuda/softmax_cross_entropy.cu), one block per row, for
 * any strides of logits, labels and loss. MEAN and SUM add the row losses in
 * a fixed order through a workspace of one double per block of the grid, so
 * the loss is the same run to run ("cuda:xent_block_per_row"); the backward's MEAN divisor is counted
 * into a one-double workspace ("cuda:xent_grad_block_per_row").
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

typedef struct xent_plan {
  adnn_cuda_xent_layout layout;
} xent_plan;

static void xent_layout(const adnn_plugin_softmax_cross_entropy *p, adnn_cuda_xent_layout *l) {
  l->N = p->N;
  l->C = p->C;
  l->xs0 = p->logits.strides[0];
  l->xs1 = p->logits.strides[1];
  l->lab_s = p->labels.strides[0];
  l->loss_s = p->loss.rank == 1 ? p->loss.strides[0] : 0;
  l->ignore = p->ignore_index;
  l->reduction = (int32_t)p->reduction;
}

/* ---- forward --------------------------------------------------------------- */

static adnn_status xent_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(xent_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  xent_plan *x = plan->impl;
  adnn_plugin_softmax_cross_entropy p;
  adnn_plugin_op_problem(plan->op, &p, sizeof p);
  xent_layout(&p, &x->layout);
  return ADNN_STATUS_SUCCESS;
}

static adnn_status xent_select(adnn_plugin_plan *plan, int32_t candidate) {
  const xent_plan *x = plan->impl;
  adnn_status st = adnn_cuda__plan_select_single(plan, candidate, "cuda:xent_block_per_row");
  if (st != ADNN_STATUS_SUCCESS) return st;
  return adnn_cuda__plan_workspace(
      plan, adnn_cuda_softmax_cross_entropy_workspace(&plan->launch, &x->layout),
      "the partial sums of the loss");
}

static adnn_status xent_execute(adnn_plugin_plan *plan, const void *const *in, void *const *out) {
  const xent_plan *x = plan->impl;
  return adnn_cuda__check_launch(
      adnn_cuda_softmax_cross_entropy_launch(&plan->launch, plan->op->dtype, &x->layout, in[0],
                                             in[1], out[0], plan->workspace),
      "softmax_cross_entropy");
}

const adnn_cuda__op_impl adnn_cuda__softmax_cross_entropy_op = {
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
    .create = xent_create,
    .select = xent_select,
    .execute = xent_execute,
    .destroy = adnn_cuda__plan_free_impl,
};

/* ---- backward -------------------------------------------------------------- */

static adnn_status xent_backward_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(xent_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  xent_plan *x = plan->impl;
  adnn_plugin_softmax_cross_entropy_backward p;
  adnn_plugin_op_problem(plan->op, &p, sizeof p);
  xent_layout(&p.fwd, &x->layout);
  return ADNN_STATUS_SUCCESS;
}

static adnn_status xent_backward_select(adnn_plugin_plan *plan, int32_t candidate) {
  const xent_plan *x = plan->impl;
  adnn_status st = adnn_cuda__plan_select_single(plan, candidate, "cuda:xent_grad_block_per_row");
  if (st != ADNN_STATUS_SUCCESS) return st;
  return adnn_cuda__plan_workspace(
      plan, x->layout.reduction == ADNN_LOSS_REDUCTION_MEAN ? sizeof(double) : 0,
      "the MEAN divisor");
}

static adnn_status xent_backward_execute(adnn_plugin_plan *plan, const void *const *in,
                                         void *const *out) {
  const xent_plan *x = plan->impl;
  return adnn_cuda__check_launch(
      adnn_cuda_softmax_cross_entropy_backward_launch(&plan->launch, plan->op->dtype, &x->layout,
                                                      in[0], in[1], in[2], out[0],
                                                      plan->workspace),
      "softmax_cross_entropy_backward");
}

const adnn_cuda__op_impl adnn_cuda__softmax_cross_entropy_backward_op = {
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
    .create = xent_backward_create,
    .select = xent_backward_select,
    .execute = xent_backward_execute,
    .destroy = adnn_cuda__plan_free_impl,
};
