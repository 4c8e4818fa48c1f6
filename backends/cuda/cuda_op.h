/*
 * The interface between the CUDA plugin's generic plan (cuda_plan.c) and the
 * per-op files (cuda_<op>.c): the plan struct they share, what an op's file
 * provides, and the helpers it may use (cuda_op.c).
 *
 * Lifecycle of an op's state (plan->impl, owned by the op's file):
 *   create      describe the problem once: copy it (adnn_plugin_op_problem),
 *               derive the launch layouts and library descriptors. Choose
 *               nothing and allocate no device memory.
 *   candidates  (optional) list the algorithms that can run it, with ids.
 *   select      choose one (0: the op's own choice), name it in
 *               plan->algorithm and size the workspace with
 *               adnn_cuda__plan_workspace(); may be called again.
 *   execute     queue the kernels; never allocate.
 *   destroy     release plan->impl and what it owns.
 *
 * The op files depend on this header only; cuda_plan.c depends on them
 * through the table it builds from adnn_cuda__<name>_op, so no file calls
 * back into one that calls it.
 */
#ifndef ADNN_CUDA_OP_H
#define ADNN_CUDA_OP_H

#include "backends/cuda/cuda_internal.h"
#include "backends/cuda/cuda_layout.h"

struct adnn_plugin_plan {
  adnn_plugin_context *ctx;
  /* The op as the core passed it; the core keeps it and its problem alive
   * until plan_destroy. Op files read the problem through their own copy. */
  const adnn_plugin_op *op;
  const struct adnn_cuda__op_impl *ops; /* the op's entry of the table */
  adnn_cuda_launch_config launch;       /* read once, at creation */
  void *impl;                           /* the op's own state */
  int selected;                         /* the last plan_select succeeded */
  char algorithm[64];                   /* the selected algorithm's name */
  void *workspace;                      /* device memory of the selected algorithm */
  size_t workspace_bytes;
};

/* What an op's file provides; see the lifecycle above. Every function is
 * called with the plan's device current. */
typedef struct adnn_cuda__op_impl {
  adnn_status (*create)(adnn_plugin_plan *plan);
  /* NULL for an op with a single algorithm, which then lists none. */
  adnn_status (*candidates)(adnn_plugin_plan *plan, adnn_plugin_candidate *out, int32_t max,
                            int32_t *count);
  adnn_status (*select)(adnn_plugin_plan *plan, int32_t candidate);
  adnn_status (*execute)(adnn_plugin_plan *plan, const void *const *inputs,
                         void *const *outputs);
  void (*destroy)(adnn_plugin_plan *plan);
  /* The dtypes (ADNN_OP_DTYPE bits of the plugin op's dtype) this plugin's
   * code runs for the op; 0 means F32 and F64. The manifest may accept more
   * (F16, BF16 on the CPU) than these kernels do: plan_create refuses the
   * rest with NOT_SUPPORTED. */
  uint32_t dtypes;
} adnn_cuda__op_impl;

/* adnn_cuda__<name>_op, one per op of the manifest, defined in cuda_<name>.c.
 * An op without a CUDA file leaves its entry undefined: the plugin, linked
 * with -z defs, then fails to link. */
#define ADNN_CUDA__DECLARE_OP_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags) \
  extern const adnn_cuda__op_impl adnn_cuda__##name##_op;
ADNN_OP_LIST(ADNN_CUDA__DECLARE_OP_)
#undef ADNN_CUDA__DECLARE_OP_

/* ---- helpers for the op files (cuda_op.c) ---------------------------------- */

/* Allocates the op's zeroed state of `size` bytes as plan->impl. */
adnn_status adnn_cuda__plan_new_impl(adnn_plugin_plan *plan, size_t size);

/* Releases plan->impl; the destroy of ops whose state owns nothing else. */
void adnn_cuda__plan_free_impl(adnn_plugin_plan *plan);

/* The select of an op with one algorithm: accepts only candidate 0 and names
 * the plan's algorithm `name`. */
adnn_status adnn_cuda__plan_select_single(adnn_plugin_plan *plan, int32_t candidate,
                                          const char *name);

/* Gives the plan a workspace of `bytes` (none for 0), releasing the previous
 * one unless it has exactly that size; `what` names it in messages. */
adnn_status adnn_cuda__plan_workspace(adnn_plugin_plan *plan, size_t bytes, const char *what);

/* The element size of the plan's dtype (2 for F16/BF16, 4 or 8). */
size_t adnn_cuda__plan_element_size(const adnn_plugin_plan *plan);

/* NOT_SUPPORTED for a 16-bit attention problem (forward or backward, `op`)
 * whose head dims exceed the tiles' (layout->dmax 0): the row-per-thread
 * fallback kernels accumulate in their outputs, so they run F32 and F64
 * only; SUCCESS otherwise (cuda_attention.c). */
adnn_status adnn_cuda__attention_check_lowp(const char *op, adnn_dtype dtype,
                                           const adnn_plugin_attention *p,
                                           const adnn_cuda_attention_layout *layout);

#endif /* ADNN_CUDA_OP_H */
