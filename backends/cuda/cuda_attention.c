/*
 * Scaled-dot-product attention forward on the CUDA plugin: our own
 * flash-style kernels (kernels/cuda/attention.cu) for F32, F64, F16 and BF16
 * (16-bit data in F32 tiles, lse in F32). cuDNN's fused SDPA (its graph API)
 * serves F16 and BF16 and is not wired in yet (doc/cuda.md).
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

adnn_status adnn_cuda__attention_check_lowp(const char *op, adnn_dtype dtype,
                                           const adnn_plugin_attention *p,
                                           const adnn_cuda_attention_layout *layout) {
  if ((dtype == ADNN_DTYPE_F16 || dtype == ADNN_DTYPE_BF16) && layout->dmax == 0)
    return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                 "cuda: %s: head dims D %lld / Dv %lld above 256 run F32 and F64 "
                                 "only on the cuda backend (the row-per-thread kernels "
                                 "accumulate in their outputs), not %s",
                                 op, (long long)p->D, (long long)p->Dv,
                                 adnn_plugin_dtype_name(dtype));
  return ADNN_STATUS_SUCCESS;
}

static adnn_status attention_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(attention_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  attention_plan *a = plan->impl;
  adnn_plugin_op_problem(plan->op, &a->p, sizeof a->p);
  adnn_cuda_attention_layout_init(&plan->launch, plan->op->dtype, &a->p, &a->layout);
  return adnn_cuda__attention_check_lowp("attention", plan->op->dtype, &a->p, &a->layout);
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
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
    .create = attention_create,
    .select = attention_select,
    .execute = attention_execute,
    .destroy = adnn_cuda__plan_free_impl,
};
