/*
 * Scaled-dot-product attention forward on the CUDA plugin: our own
 * flash-style kernels (kernels/cuda/attention.cu) for F32 and F64, the dtypes
 * adnn has. cuDNN's fused SDPA (its graph API) serves only F16 and BF16,
 * which adnn does not have yet, so no cuDNN path exists until they do
 * (doc/cuda.md says what it will cover).
 *
 * At creation the launch is sized from the problem once
 * (adnn_cuda_attention_layout_init): the tiles' head dim, threads and grid.
 * Algorithms: "cuda:attention_flash" (one block per (batch, head, query
 * tile), K/V tiles through shared memory, online softmax) for head dims up
 * to 256 (F64: 128), else "cuda:attention_by_row" (one thread per query row).
 * Neither needs a workspace.
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

typedef struct attention_plan {
  adnn_plugin_attention p;
  adnn_cuda_attention_layout layout;
} attention_plan;

static adnn_status attention_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(attention_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  attention_plan *a = plan->impl;
  adnn_plugin_op_problem(plan->op, &a->p, sizeof a->p);
  adnn_cuda_attention_layout_init(&plan->launch, plan->op->dtype, &a->p, &a->layout);
  return ADNN_STATUS_SUCCESS;
}

static adnn_status attention_select(adnn_plugin_plan *plan, int32_t candidate) {
  const attention_plan *a = plan->impl;
  return adnn_cuda__plan_select_single(
      plan, candidate, a->layout.dmax != 0 ? "cuda:attention_flash" : "cuda:attention_by_row");
}

static adnn_status attention_execute(adnn_plugin_plan *plan, const void *const *in,
                                     void *const *out) {
  const attention_plan *a = plan->impl;
  /* Inputs {q, k, v[, bias][, key_lengths]}; outputs {o[, lse]}. */
  const void *bias = a->p.has_bias ? in[3] : NULL;
  const int32_t *key_lengths = a->p.has_key_lengths ? in[3 + a->p.has_bias] : NULL;
  void *lse = a->p.has_lse ? out[1] : NULL;
  return adnn_cuda__check_launch(
      adnn_cuda_attention_launch(&plan->launch, plan->op->dtype, &a->p, &a->layout, in[0], in[1],
                                 in[2], bias, key_lengths, out[0], lse),
      "attention");
}

const adnn_cuda__op_impl adnn_cuda__attention_op = {
    .create = attention_create,
    .select = attention_select,
    .execute = attention_execute,
    .destroy = adnn_cuda__plan_free_impl,
};
