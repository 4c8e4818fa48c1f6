/*
 * Batch-norm training and its backward pass on the CUDA plugin: our own
 * kernels (kernels/cuda/batchnorm_training.cu), one block per channel with
 * double accumulation and fixed reduction orders, rather than cuDNN's
 * cudnnBatchNormalizationForwardTraining / BackwardEx: those take only
 * NCHW- or NHWC-packed 4-D (or 5-D) tensors, keep their saved statistics in
 * their own precision, and use an exponential-average factor whose variance
 * correction and determinism are not ours to document; owning the kernels
 * gives every rank and stride the core accepts, the reference's formula,
 * and bitwise-reproducible results (doc/cuda.md).
 *
 * At creation the dims other than C are coalesced once for every tensor
 * ("cuda:bn_training_block_per_channel", "cuda:bn_backward_block_per_channel").
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

/* Every dim of the tensors but C, coalesced, and C's strides. */
static void layout_of(const adnn_tensor_desc *const *t, int nt, adnn_cuda_bn_training_layout *l) {
  int64_t dims[ADNN_MAX_RANK], strides[3][ADNN_MAX_RANK];
  const int64_t *sp[3];
  int r = 0;
  for (int i = 0; i < t[0]->rank; i++) {
    if (i == 1) continue;
    dims[r] = t[0]->dims[i];
    for (int k = 0; k < nt; k++) strides[k][r] = t[k]->strides[i];
    r++;
  }
  for (int k = 0; k < nt; k++) {
    sp[k] = strides[k];
    l->cstride[k] = t[k]->strides[1];
  }
  adnn_nd_coalesce(&l->pix, r, dims, nt, sp);
  if (l->pix.rank == 0) {
    /* One element per channel cannot happen (count >= 2), but keep the
     * kernels' one-dim fast path well defined. */
    l->pix.rank = 1;
    l->pix.dims[0] = 1;
  }
}

typedef struct bn_training_plan {
  adnn_plugin_batchnorm_training p;
  adnn_cuda_bn_training_layout layout;
} bn_training_plan;

static adnn_status bn_training_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(bn_training_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  bn_training_plan *b = plan->impl;
  adnn_plugin_op_problem(plan->op, &b->p, sizeof b->p);
  const adnn_tensor_desc *t[2] = {&b->p.fwd.x, &b->p.fwd.y};
  layout_of(t, 2, &b->layout);
  return ADNN_STATUS_SUCCESS;
}

static adnn_status bn_training_select(adnn_plugin_plan *plan, int32_t candidate) {
  return adnn_cuda__plan_select_single(plan, candidate, "cuda:bn_training_block_per_channel");
}

static adnn_status bn_training_execute(adnn_plugin_plan *plan, const void *const *in,
                                       void *const *out) {
  const bn_training_plan *b = plan->impl;
  /* Inputs {x, scale, shift}; outputs {y, saved_mean, saved_inv_std,
   * running_mean, running_var}. */
  return adnn_cuda__check_launch(
      adnn_cuda_bn_training_launch(&plan->launch, plan->op->dtype, &b->p, &b->layout, in[0],
                                   in[1], in[2], out[0], out[1], out[2], out[3], out[4]),
      "batchnorm_training");
}

const adnn_cuda__op_impl adnn_cuda__batchnorm_training_op = {
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
    .create = bn_training_create,
    .select = bn_training_select,
    .execute = bn_training_execute,
    .destroy = adnn_cuda__plan_free_impl,
};

typedef struct bn_backward_plan {
  adnn_plugin_batchnorm_backward p;
  adnn_cuda_bn_training_layout layout;
} bn_backward_plan;

static adnn_status bn_backward_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(bn_backward_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  bn_backward_plan *b = plan->impl;
  adnn_plugin_op_problem(plan->op, &b->p, sizeof b->p);
  /* [0] x, [1] dx (x's layout), [2] dy (y's layout). */
  const adnn_tensor_desc *t[3] = {&b->p.fwd.x, &b->p.fwd.x, &b->p.fwd.y};
  layout_of(t, 3, &b->layout);
  return ADNN_STATUS_SUCCESS;
}

static adnn_status bn_backward_select(adnn_plugin_plan *plan, int32_t candidate) {
  return adnn_cuda__plan_select_single(plan, candidate, "cuda:bn_backward_block_per_channel");
}

static adnn_status bn_backward_execute(adnn_plugin_plan *plan, const void *const *in,
                                       void *const *out) {
  const bn_backward_plan *b = plan->impl;
  /* Inputs {x, dy, scale, saved_mean, saved_inv_std}; outputs {dx, dscale,
   * dshift}. */
  return adnn_cuda__check_launch(
      adnn_cuda_bn_backward_launch(&plan->launch, plan->op->dtype, &b->p, &b->layout, in[0],
                                   in[1], in[2], in[3], in[4], out[0], out[1], out[2]),
      "batchnorm_backward");
}

const adnn_cuda__op_impl adnn_cuda__batchnorm_backward_op = {
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
    .create = bn_backward_create,
    .select = bn_backward_select,
    .execute = bn_backward_execute,
    .destroy = adnn_cuda__plan_free_impl,
};
