/*
 * CUDA plugin plans: the plan slots of the plugin ABI (cuda_plan.c).
 *
 * They are implemented once for every op. Each looks up the op's entry in one
 * table indexed by adnn_plugin_op_kind and generated from ADNN_OP_LIST
 * (adnn/op_list.h); each entry is the adnn_cuda__<name>_op of the op's own
 * file, whose interface is cuda_op.h.
 */
#ifndef ADNN_CUDA_PLAN_H
#define ADNN_CUDA_PLAN_H

#include "backends/cuda/cuda_internal.h"

/* Creates a plan: refuses op kinds the plugin does not know and dtypes the
 * kernels do not run (NOT_SUPPORTED, before any device call), reads the
 * launch configuration and lets the op's file describe the problem. */
adnn_status adnn_cuda__plan_create(adnn_plugin_context *ctx, const adnn_plugin_op *op,
                                   adnn_plugin_plan **out);

/* Lists the op's candidates (none for an op with one algorithm). */
adnn_status adnn_cuda__plan_candidates(adnn_plugin_plan *plan, adnn_plugin_candidate *out,
                                       int32_t max, int32_t *count);

/* Selects candidate `candidate` (0: the op's own choice); after a failure the
 * plan has no algorithm and holds no workspace. */
adnn_status adnn_cuda__plan_select(adnn_plugin_plan *plan, int32_t candidate);

/* Runs the selected algorithm; refuses a plan without one. */
adnn_status adnn_cuda__plan_execute(adnn_plugin_plan *plan, const void *const *inputs,
                                    void *const *outputs);

/* Destroys the plan, its op state and its workspace. */
void adnn_cuda__plan_destroy(adnn_plugin_plan *plan);

/* The selected algorithm's name ("" when none) and the workspace held. */
void adnn_cuda__plan_describe(const adnn_plugin_plan *plan, const char **algorithm,
                              size_t *workspace_bytes);

/* The plan_packed_weights_bytes slot (ABI 2.4): the weights' span (the
 * packed form is the weights as they are). */
adnn_status adnn_cuda__plan_packed_weights_bytes(adnn_plugin_plan *plan, size_t *bytes);

/* The plan_pack_weights slot (ABI 2.4): a device-to-device copy of the
 * weights' span, asynchronous on the context's stream. */
adnn_status adnn_cuda__plan_pack_weights(adnn_plugin_plan *plan, const void *w, void *packed);

#endif /* ADNN_CUDA_PLAN_H */
