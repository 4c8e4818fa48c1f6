/*
 * CUDA plugin plans: the ABI's plan slots, implemented once for every op and
 * dispatched through one per-op table generated from the op manifest (see
 * cuda_op.h for the lifecycle an op's file implements).
 *
 * Which op runs where (the op files say why):
 *   conv2d      cuda_conv2d.c: cuDNN's legacy API, our direct kernel when
 *               forced or when cuDNN cannot run the problem.
 *   pool2d      cuda_pool2d.c: our kernel.
 *   activation  cuda_activation.c: our kernel.
 *   softmax     cuda_softmax.c: our kernel.
 *   batchnorm   cuda_batchnorm.c: our kernel.
 *   norm        cuda_norm.c: our kernel (layer norm, RMS norm).
 *   binary      cuda_binary.c: our kernel (broadcasting).
 * F32 and F64 everywhere; F16 and BF16 too (each op's .dtypes says which it
 * runs) for activation, binary, pool2d, reduce, softmax, batchnorm, norm and
 * conv2d, and matmul's inputs.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_op.h"
#include "backends/cuda/cuda_plan.h"

/* The per-op table. An op of the manifest without a CUDA file does not
 * build: its adnn_cuda__<name>_op is declared (cuda_op.h) but defined by no
 * file, and the plugin is linked with -z defs. */
static const adnn_cuda__op_impl *const op_table[ADNN_PLUGIN_OP_LIMIT_] = {
#define ADNN_CUDA__OP_ENTRY_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags) \
  [ADNN_PLUGIN_OP_##NAME] = &adnn_cuda__##name##_op,
    ADNN_OP_LIST(ADNN_CUDA__OP_ENTRY_)
#undef ADNN_CUDA__OP_ENTRY_
};

/* ------------------------------------------------------------------------ */
/* Plan slots                                                                */
/* ------------------------------------------------------------------------ */

adnn_status adnn_cuda__plan_create(adnn_plugin_context *ctx, const adnn_plugin_op *op,
                                   adnn_plugin_plan **out) {
  const char *name = adnn_plugin_op_name(op->kind);
  if ((int)op->kind < 0 || (int)op->kind >= ADNN_PLUGIN_OP_LIMIT_ || op_table[op->kind] == NULL)
    return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                 "cuda: op kind %d is not one this plugin knows (built against "
                                 "plugin ABI %d.%d)",
                                 (int)op->kind, ADNN_PLUGIN_ABI_MAJOR, ADNN_PLUGIN_ABI_MINOR);
  /* The manifest may accept dtypes (f16, ...) that these kernels do not:
   * each op says which its code runs (adnn_cuda__op_impl.dtypes). */
  const uint32_t dtypes = op_table[op->kind]->dtypes ? op_table[op->kind]->dtypes
                                                     : ADNN_OP_DTYPES_FLOAT;
  if ((unsigned)op->dtype >= 32 || !(dtypes & ADNN_OP_DTYPE(op->dtype)))
    return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                 "cuda: %s: dtype %s is not supported by this op on the cuda "
                                 "backend",
                                 name, adnn_plugin_dtype_name(op->dtype));
  adnn_status st = adnn_cuda__context_enter(ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  adnn_plugin_plan *plan = calloc(1, sizeof *plan);
  if (plan == NULL)
    return adnn_cuda__host->fail(ADNN_STATUS_OUT_OF_MEMORY, "cuda: out of host memory");
  plan->ctx = ctx;
  plan->op = op;
  plan->ops = op_table[op->kind];
  st = adnn_cuda__launch_config(ctx, &plan->launch);
  if (st == ADNN_STATUS_SUCCESS) st = plan->ops->create(plan);
  if (st != ADNN_STATUS_SUCCESS) {
    adnn_cuda__plan_destroy(plan);
    return st;
  }
  *out = plan;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_cuda__plan_candidates(adnn_plugin_plan *plan, adnn_plugin_candidate *out,
                                       int32_t max, int32_t *count) {
  *count = 0;
  if (plan->ops->candidates == NULL) return ADNN_STATUS_SUCCESS;
  adnn_status st = adnn_cuda__context_enter(plan->ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  return plan->ops->candidates(plan, out, max, count);
}

adnn_status adnn_cuda__plan_select(adnn_plugin_plan *plan, int32_t candidate) {
  adnn_status st = adnn_cuda__context_enter(plan->ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  plan->selected = 0;
  plan->algorithm[0] = '\0';
  st = plan->ops->select(plan, candidate);
  if (st != ADNN_STATUS_SUCCESS) {
    /* A failed select leaves no algorithm, so it holds no memory either. */
    (void)adnn_cuda__plan_workspace(plan, 0, "");
    plan->algorithm[0] = '\0';
    return st;
  }
  plan->selected = 1;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_cuda__plan_execute(adnn_plugin_plan *plan, const void *const *inputs,
                                    void *const *outputs) {
  adnn_status st = adnn_cuda__context_enter(plan->ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (!plan->selected)
    return adnn_cuda__host->fail(ADNN_STATUS_INTERNAL_ERROR,
                                 "cuda: a %s plan was executed without a selected algorithm",
                                 adnn_plugin_op_name(plan->op->kind));
  return plan->ops->execute(plan, inputs, outputs);
}

void adnn_cuda__plan_destroy(adnn_plugin_plan *plan) {
  if (plan == NULL) return;
  /* Destruction cannot report errors; the device is made current so that the
   * frees below reach the right one, and a failure to do so is dropped. */
  if (cudaSetDevice(plan->ctx->ordinal) != cudaSuccess) (void)cudaGetLastError();
  if (plan->impl != NULL) plan->ops->destroy(plan);
  (void)adnn_cuda__plan_workspace(plan, 0, "");
  free(plan);
}

void adnn_cuda__plan_describe(const adnn_plugin_plan *plan, const char **algorithm,
                              size_t *workspace_bytes) {
  *algorithm = plan->algorithm;
  *workspace_bytes = plan->workspace_bytes;
}

/* ------------------------------------------------------------------------ */
/* Weight prepacking (ABI 2.4, doc/prepacking.md)                            */
/* ------------------------------------------------------------------------ */

/* No CUDA algorithm here gains from a packed weight form (cuDNN and cuBLASLt
 * read the weights in their layout at full speed), so the packed form is the
 * weights as they are: a device-to-device copy of their span, queued on the
 * context's stream like an execution. */
static const adnn_tensor_desc *prepacked_weights(const adnn_plugin_plan *plan) {
  const adnn_tensor_desc *w = adnn_plugin_prepacked_weights(plan->op->kind, plan->op->problem);
  if (w == NULL)
    adnn_cuda__host->fail(ADNN_STATUS_BAD_PARAM, "cuda: the %s plan does not take prepacked "
                          "weights", adnn_plugin_op_name(plan->op->kind));
  return w;
}

adnn_status adnn_cuda__plan_packed_weights_bytes(adnn_plugin_plan *plan, size_t *bytes) {
  const adnn_tensor_desc *w = prepacked_weights(plan);
  if (w == NULL) return ADNN_STATUS_BAD_PARAM;
  *bytes = adnn_plugin_tensor_span_bytes(w);
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_cuda__plan_pack_weights(adnn_plugin_plan *plan, const void *w, void *packed) {
  const adnn_tensor_desc *wd = prepacked_weights(plan);
  if (wd == NULL) return ADNN_STATUS_BAD_PARAM;
  adnn_status st = adnn_cuda__context_enter(plan->ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  const size_t bytes = adnn_plugin_tensor_span_bytes(wd);
  if (bytes == 0) return ADNN_STATUS_SUCCESS;
  cudaError_t err = cudaMemcpyAsync(packed, w, bytes, cudaMemcpyDeviceToDevice, plan->ctx->stream);
  if (err != cudaSuccess) return adnn_cuda__fail_runtime(err, "cudaMemcpyAsync (pack weights)");
  return ADNN_STATUS_SUCCESS;
}
