/*
 * Scaled-dot-product attention backward on the CUDA plugin: our own kernels
 * (kernels/cuda/attention_backward.cu) for F32, F64, F16 and BF16 (16-bit
 * data in F32 tiles, lse and row sums in F32; cuDNN's fused SDPA backward is
 * not wired in, doc/cuda.md). Three kernels: the row sums D = rowsum(dO * O)
 * into the plan's workspace (B * H * Sq elements of the compute type),
 * then dK and dV per (batch, kv head, key tile) looping over the group's
 * query heads, then dQ per (batch, head, query tile). No atomics: the
 * results are bitwise identical run to run, so the plan is deterministic.
 * Algorithm names as the forward's: "cuda:attention_backward_flash", or
 * "cuda:attention_backward_by_row" beyond the tiles' head dims.
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

typedef struct attention_backward_plan {
  adnn_plugin_attention_backward p;
  adnn_cuda_attention_layout layout;
} attention_backward_plan;

static adnn_status attention_backward_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(attention_backward_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  attention_backward_plan *a = plan->impl;
  adnn_plugin_op_problem(plan->op, &a->p, sizeof a->p);
  adnn_cuda_attention_layout_init(&plan->launch, plan->op->dtype, &a->p.fwd, &a->layout);
  return adnn_cuda__attention_check_lowp("attention_backward", plan->op->dtype, &a->p.fwd,
                                         &a->layout);
}

static adnn_status attention_backward_select(adnn_plugin_plan *plan, int32_t candidate) {
  const attention_backward_plan *a = plan->impl;
  adnn_status st = adnn_cuda__plan_select_single(plan, candidate,
                                                 a->layout.dmax != 0
                                                     ? "cuda:attention_backward_flash"
                                                     : "cuda:attention_backward_by_row");
  if (st != ADNN_STATUS_SUCCESS) return st;
  const adnn_plugin_attention *f = &a->p.fwd;
  return adnn_cuda__plan_workspace(
      plan, (size_t)(f->B * f->H * f->Sq) * (plan->op->dtype == ADNN_DTYPE_F64 ? 8u : 4u),
      "attention_backward row sums");
}

static adnn_status attention_backward_execute(adnn_plugin_plan *plan, const void *const *in,
                                              void *const *out) {
  const attention_backward_plan *a = plan->impl;
  const adnn_plugin_attention *f = &a->p.fwd;
  /* Inputs {q, k, v, o, do, lse[, bias][, key_lengths]}; outputs {dq, dk, dv}. */
  const void *bias = f->has_bias ? in[6] : NULL;
  const int32_t *key_lengths = f->has_key_lengths ? in[6 + f->has_bias] : NULL;
  return adnn_cuda__check_launch(
      adnn_cuda_attention_backward_launch(&plan->launch, plan->op->dtype, f, &a->layout, in[0],
                                          in[1], in[2], in[3], in[4], in[5], bias, key_lengths,
                                          out[0], out[1], out[2], plan->workspace),
      "attention_backward");
}

const adnn_cuda__op_impl adnn_cuda__attention_backward_op = {
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
    .create = attention_backward_create,
    .select = attention_backward_select,
    .execute = attention_backward_execute,
    .destroy = adnn_cuda__plan_free_impl,
};
