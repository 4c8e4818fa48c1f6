/*
 * softmax and log-softmax on the CUDA plugin: our kernels
 * (kernels/cuda/softmax.cu), for any axis and strides with the NaN and
 * infinity rules of doc/ops.md.
 *
 * At creation the tensor is seen as rows along the axis (the other dims
 * coalesced), and one of two kernels is chosen: one block per row when the
 * axis is contiguous in x (a block's loads are then coalesced) or when there
 * are too few rows for one thread each to fill the device
 * ("cuda:softmax_block_per_row"); otherwise one thread per row, whose
 * neighbours read neighbouring addresses ("cuda:softmax_thread_per_column").
 * F32, F64, and F16/BF16 (the F32 arithmetic on the widened data, each
 * output rounded once: doc/ops.md "Low precision").
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

/* With fewer rows than this many per SM, one thread per row leaves most of
 * the device idle, and one block per row is used even for a strided axis. */
enum { ROWS_PER_SM_FOR_THREADS = 128 };

typedef struct softmax_plan {
  adnn_plugin_softmax p;
  adnn_cuda_softmax_layout layout;
} softmax_plan;

static adnn_status softmax_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(softmax_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  softmax_plan *s = plan->impl;
  adnn_plugin_op_problem(plan->op, &s->p, sizeof s->p);
  const adnn_tensor_desc *x = &s->p.x, *y = &s->p.y;
  const int axis = s->p.axis; /* the core made it non-negative */
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
  l->block_per_row =
      l->x_stride == 1 || l->row_count < (int64_t)plan->launch.sm_count * ROWS_PER_SM_FOR_THREADS;
  return ADNN_STATUS_SUCCESS;
}

static adnn_status softmax_select(adnn_plugin_plan *plan, int32_t candidate) {
  const softmax_plan *s = plan->impl;
  return adnn_cuda__plan_select_single(plan, candidate,
                                       s->layout.block_per_row ? "cuda:softmax_block_per_row"
                                                               : "cuda:softmax_thread_per_column");
}

static adnn_status softmax_execute(adnn_plugin_plan *plan, const void *const *in,
                                   void *const *out) {
  const softmax_plan *s = plan->impl;
  return adnn_cuda__check_launch(adnn_cuda_softmax_launch(&plan->launch, plan->op->dtype, &s->p,
                                                          &s->layout, in[0], out[0]),
                                 "softmax");
}

const adnn_cuda__op_impl adnn_cuda__softmax_op = {
    .create = softmax_create,
    .select = softmax_select,
    .execute = softmax_execute,
    .destroy = adnn_cuda__plan_free_impl,
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
};
