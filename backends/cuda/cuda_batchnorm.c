/*
 * Batch normalization (inference) on the CUDA plugin: our kernel
 * (kernels/cuda/batchnorm.cu), with every fused activation and the
 * reference's formula.
 *
 * At creation: when x and y share one dense layout (any permutation of the
 * dims, NCHW and NHWC included) the kernel walks memory linearly and derives
 * the channel from the offset ("cuda:batchnorm_dense"); otherwise it
 * decomposes the logical index over x's dims ("cuda:batchnorm_strided").
 * F32, F64, and F16/BF16 data with F32 parameter vectors (F32 arithmetic
 * and activation, y rounded once: doc/ops.md "Low precision").
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

typedef struct batchnorm_plan {
  adnn_plugin_batchnorm p;
  adnn_cuda_batchnorm_layout layout;
} batchnorm_plan;

/* Whether t's strides are a dense permutation: sorted by stride, each stride
 * of a dim of size > 1 is the product of the sizes of the faster dims. */
static int dense_permutation(const adnn_tensor_desc *t) {
  int idx[ADNN_MAX_RANK], n = 0;
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] > 1) idx[n++] = i;
  for (int i = 1; i < n; i++) { /* insertion sort by stride, ascending */
    int v = idx[i], j = i - 1;
    while (j >= 0 && t->strides[idx[j]] > t->strides[v]) {
      idx[j + 1] = idx[j];
      j--;
    }
    idx[j + 1] = v;
  }
  int64_t expect = 1;
  for (int i = 0; i < n; i++) {
    if (t->strides[idx[i]] != expect) return 0;
    expect *= t->dims[idx[i]];
  }
  return 1;
}

static adnn_status batchnorm_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(batchnorm_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  batchnorm_plan *b = plan->impl;
  adnn_plugin_op_problem(plan->op, &b->p, sizeof b->p);
  const adnn_tensor_desc *x = &b->p.x, *y = &b->p.y;
  adnn_cuda_batchnorm_layout *l = &b->layout;
  l->count = 1;
  for (int i = 0; i < x->rank; i++) l->count *= x->dims[i];
  int same = 1;
  for (int i = 0; i < x->rank; i++)
    if (x->dims[i] > 1 && x->strides[i] != y->strides[i]) same = 0;
  if (same && dense_permutation(x)) {
    l->dense_channel_stride = b->p.C > 1 ? x->strides[1] : 1;
  } else {
    /* Not coalesced: the kernel needs dim 1 to find the channel. */
    l->nd.rank = x->rank;
    for (int i = 0; i < x->rank; i++) {
      l->nd.dims[i] = x->dims[i];
      l->nd.strides[0][i] = x->strides[i];
      l->nd.strides[1][i] = y->strides[i];
    }
  }
  return ADNN_STATUS_SUCCESS;
}

static adnn_status batchnorm_select(adnn_plugin_plan *plan, int32_t candidate) {
  const batchnorm_plan *b = plan->impl;
  return adnn_cuda__plan_select_single(plan, candidate,
                                       b->layout.dense_channel_stride > 0
                                           ? "cuda:batchnorm_dense"
                                           : "cuda:batchnorm_strided");
}

static adnn_status batchnorm_execute(adnn_plugin_plan *plan, const void *const *in,
                                     void *const *out) {
  const batchnorm_plan *b = plan->impl;
  /* Inputs {x, scale, shift, mean, var}. */
  return adnn_cuda__check_launch(
      adnn_cuda_batchnorm_launch(&plan->launch, plan->op->dtype, &b->p, &b->layout, in[0], in[1],
                                 in[2], in[3], in[4], out[0]),
      "batchnorm");
}

const adnn_cuda__op_impl adnn_cuda__batchnorm_op = {
    .create = batchnorm_create,
    .select = batchnorm_select,
    .execute = batchnorm_execute,
    .destroy = adnn_cuda__plan_free_impl,
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
};
