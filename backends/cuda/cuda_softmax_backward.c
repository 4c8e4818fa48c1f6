/*
 * softmax / log-softmax backward on the CUDA plugin: our kernel
 * (kernels/cuda/softmax_backward.cu), one thread per slice along the axis,
 * for any axis and strides ("cuda:softmax_backward_thread_per_row"). At
 * creation the non-axis dims are coalesced over dx (x's layout) and y and
 * dy (y's), exactly as the forward's rows are.
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

typedef struct softmax_backward_plan {
  adnn_plugin_softmax_backward p;
  adnn_cuda_softmax_layout layout; /* strides[0] and x_stride: dx; [1] and y_stride: y, dy */
} softmax_backward_plan;

static adnn_status softmax_backward_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(softmax_backward_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  softmax_backward_plan *s = plan->impl;
  adnn_plugin_op_problem(plan->op, &s->p, sizeof s->p);
  const adnn_tensor_desc *x = &s->p.fwd.x, *y = &s->p.fwd.y;
  const int axis = s->p.fwd.axis;
  int64_t dims[ADNN_MAX_RANK] = {0}, xs[ADNN_MAX_RANK] = {0}, ys[ADNN_MAX_RANK] = {0};
  int rank = 0;
  for (int i = 0; i < x->rank; i++) {
    if (i == axis) continue;
    dims[rank] = x->dims[i];
    xs[rank] = x->strides[i];
    ys[rank] = y->strides[i];
    rank++;
  }
  adnn_cuda_softmax_layout *l = &s->layout;
  const int64_t *strides[2] = {xs, ys};
  adnn_nd_coalesce(&l->rows, rank, dims, 2, strides);
  l->row_count = 1;
  for (int i = 0; i < rank; i++) l->row_count *= dims[i];
  l->length = x->dims[axis];
  l->x_stride = x->strides[axis];
  l->y_stride = y->strides[axis];
  l->block_per_row = 0;
  return ADNN_STATUS_SUCCESS;
}

static adnn_status softmax_backward_select(adnn_plugin_plan *plan, int32_t candidate) {
  return adnn_cuda__plan_select_single(plan, candidate, "cuda:softmax_backward_thread_per_row");
}

/* Inputs {y, dy}, outputs {dx}. */
static adnn_status softmax_backward_execute(adnn_plugin_plan *plan, const void *const *in,
                                            void *const *out) {
  const softmax_backward_plan *s = plan->impl;
  return adnn_cuda__check_launch(
      adnn_cuda_softmax_backward_launch(&plan->launch, plan->op->dtype, &s->p, &s->layout, in[0],
                                        in[1], out[0]),
      "softmax_backward");
}

const adnn_cuda__op_impl adnn_cuda__softmax_backward_op = {
    .create = softmax_backward_create,
    .select = softmax_backward_select,
    .execute = softmax_backward_execute,
    .destroy = adnn_cuda__plan_free_impl,
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
};
