/*
 * Layer norm and RMS norm on the CUDA plugin: our kernel
 * (kernels/cuda/norm.cu), one block per row with a one-pass Welford
 * reduction ("cuda:layernorm_block_per_row_welford") or a sum of squares
 * ("cuda:rmsnorm_block_per_row").
 *
 * At creation the leading dims (the rows) and the normalized dims (the
 * elements of a row) are coalesced separately, so that any strides of either
 * are walked with as few divisions as their layout allows. F32, F64, and
 * F16/BF16 data with F32 gain and bias (F32 statistics, each output rounded
 * once: doc/ops.md "Low precision").
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

typedef struct norm_plan {
  adnn_plugin_norm p;
  adnn_cuda_norm_layout layout;
} norm_plan;

static adnn_status norm_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(norm_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  norm_plan *n = plan->impl;
  adnn_plugin_op_problem(plan->op, &n->p, sizeof n->p);
  const adnn_tensor_desc *x = &n->p.x, *y = &n->p.y;
  const int lead = x->rank - n->p.norm_dims;
  const int64_t *rows[2] = {x->strides, y->strides};
  adnn_nd_coalesce(&n->layout.rows, lead, x->dims, 2, rows);
  const int64_t *cols[2] = {x->strides + lead, y->strides + lead};
  adnn_nd_coalesce(&n->layout.cols, n->p.norm_dims, x->dims + lead, 2, cols);
  if (n->layout.cols.rank == 0) {
    /* D == 1: the kernel still walks one column, of stride 0. */
    n->layout.cols.rank = 1;
    n->layout.cols.dims[0] = 1;
  }
  return ADNN_STATUS_SUCCESS;
}

static adnn_status norm_select(adnn_plugin_plan *plan, int32_t candidate) {
  const norm_plan *n = plan->impl;
  return adnn_cuda__plan_select_single(plan, candidate,
                                       n->p.kind == ADNN_NORM_RMS
                                           ? "cuda:rmsnorm_block_per_row"
                                           : "cuda:layernorm_block_per_row_welford");
}

static adnn_status norm_execute(adnn_plugin_plan *plan, const void *const *in, void *const *out) {
  const norm_plan *n = plan->impl;
  /* Inputs {x}, then gain and bias when the problem has them. */
  const void *gain = n->p.has_gain ? in[1] : NULL;
  const void *bias = n->p.has_bias ? in[1 + n->p.has_gain] : NULL;
  return adnn_cuda__check_launch(adnn_cuda_norm_launch(&plan->launch, plan->op->dtype, &n->p,
                                                       &n->layout, in[0], gain, bias, out[0]),
                                 "norm");
}

const adnn_cuda__op_impl adnn_cuda__norm_op = {
    .create = norm_create,
    .select = norm_select,
    .execute = norm_execute,
    .destroy = adnn_cuda__plan_free_impl,
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
};
