/*
 * reduce (sum, mean, max, min over a set of axes) on the CUDA plugin: our
 * kernels (kernels/cuda/reduce.cu).
 *
 * At creation x's dims are coalesced together with y seen with x's rank
 * (adnn_plugin_reduce.yk, stride 0 along reduced dims) and split into the
 * kept dims (one per output) and the reduced ones, whose innermost dim
 * becomes the run each output walks. One block per output shares each run
 * ("cuda:reduce_block_per_output") when runs are at least a warp long;
 * otherwise one thread per output walks its elements, and neighbouring
 * threads read neighbouring addresses when the innermost kept dim is
 * contiguous ("cuda:reduce_thread_per_output").
 */
#include "config.h"

#include <string.h>

#include "backends/cuda/cuda_op.h"

/* Runs shorter than a warp leave most of a block's threads idle. */
enum { MIN_RUN_FOR_BLOCKS = 32 };

typedef struct reduce_plan {
  adnn_plugin_reduce p;
  adnn_cuda_reduce_layout layout;
} reduce_plan;

static adnn_status reduce_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(reduce_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  reduce_plan *r = plan->impl;
  adnn_plugin_op_problem(plan->op, &r->p, sizeof r->p);
  adnn_cuda_reduce_layout *l = &r->layout;
  const int64_t *strides[2] = {r->p.x.strides, r->p.yk.strides};
  adnn_nd all;
  adnn_nd_coalesce(&all, r->p.x.rank, r->p.x.dims, 2, strides);
  /* Kept dims have a y stride; reduced ones (yk stride 0) go to `outer`,
   * whose innermost becomes the run. Size-1 dims are gone after coalescing,
   * so a kept dim's y stride is never 0. */
  memset(&l->kept, 0, sizeof l->kept);
  memset(&l->outer, 0, sizeof l->outer);
  for (int i = 0; i < all.rank; i++) {
    adnn_nd *to = all.strides[1][i] == 0 ? &l->outer : &l->kept;
    to->dims[to->rank] = all.dims[i];
    to->strides[0][to->rank] = all.strides[0][i];
    to->strides[1][to->rank] = all.strides[1][i];
    to->rank++;
  }
  l->run = 1;
  l->run_stride = 0;
  if (l->outer.rank > 0) {
    const int last = l->outer.rank - 1;
    l->run = l->outer.dims[last];
    l->run_stride = l->outer.strides[0][last];
    l->outer.dims[last] = 0;
    l->outer.strides[0][last] = l->outer.strides[1][last] = 0;
    l->outer.rank--;
  }
  l->outer_count = adnn_nd_count(&l->outer);
  l->outputs = r->p.outputs;
  l->count = r->p.count;
  l->block_per_output = l->run >= MIN_RUN_FOR_BLOCKS;
  return ADNN_STATUS_SUCCESS;
}

static adnn_status reduce_select(adnn_plugin_plan *plan, int32_t candidate) {
  const reduce_plan *r = plan->impl;
  return adnn_cuda__plan_select_single(plan, candidate,
                                       r->layout.block_per_output
                                           ? "cuda:reduce_block_per_output"
                                           : "cuda:reduce_thread_per_output");
}

static adnn_status reduce_execute(adnn_plugin_plan *plan, const void *const *in,
                                  void *const *out) {
  const reduce_plan *r = plan->impl;
  return adnn_cuda__check_launch(adnn_cuda_reduce_launch(&plan->launch, plan->op->dtype, &r->p,
                                                         &r->layout, in[0], out[0]),
                                 "reduce");
}

const adnn_cuda__op_impl adnn_cuda__reduce_op = {
    .create = reduce_create,
    .select = reduce_select,
    .execute = reduce_execute,
    .destroy = adnn_cuda__plan_free_impl,
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
};
