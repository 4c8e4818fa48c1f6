/*
 * Attention backward on the CUDA plugin, until its real implementation
 * lands: the manifest row makes the plugin need
 * adnn_cuda__attention_backward_op, and this stub refuses every plan with
 * NOT_SUPPORTED and a message, so that the plugin links and a caller learns
 * why. The CUDA attention backward file (cuda_attention_backward.c) replaces
 * this one, which is then deleted.
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

static adnn_status attention_backward_pending_create(adnn_plugin_plan *plan) {
  (void)plan;
  return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                               "cuda: attention backward is not implemented by this CUDA plugin "
                               "yet (the CPU plugin runs it)");
}

static adnn_status attention_backward_pending_select(adnn_plugin_plan *plan, int32_t candidate) {
  (void)plan;
  (void)candidate;
  return ADNN_STATUS_NOT_SUPPORTED;
}

static adnn_status attention_backward_pending_execute(adnn_plugin_plan *plan,
                                                      const void *const *inputs,
                                                      void *const *outputs) {
  (void)plan;
  (void)inputs;
  (void)outputs;
  return ADNN_STATUS_NOT_SUPPORTED;
}

const adnn_cuda__op_impl adnn_cuda__attention_backward_op = {
    .create = attention_backward_pending_create,
    .select = attention_backward_pending_select,
    .execute = attention_backward_pending_execute,
    .destroy = adnn_cuda__plan_free_impl,
};
