/* The harness's op table, generated from the op manifest (ADNN_OP_LIST): one
 * record per op with its plan constructor and the traits of
 * t/ops/<op>.c. An op of the manifest without traits leaves
 * harness_<name>_traits undefined, and nothing that uses the harness links. */
#include "t/harness/harness.h"

#include <string.h>

/* adnn_plan_create_<name> on the descriptor's member for the op. */
#define HARNESS_CREATE_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags)          \
  static adnn_status create_##name(adnn_context *ctx, const harness_desc *d, adnn_plan **p) { \
    return adnn_plan_create_##name(ctx, &d->name, p);                                       \
  }
ADNN_OP_LIST(HARNESS_CREATE_)
#undef HARNESS_CREATE_

const harness_op harness_ops[] = {
#define HARNESS_OP_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags) \
  {#name, value, dtypes, flags, inputs, create_##name, &harness_##name##_traits},
    ADNN_OP_LIST(HARNESS_OP_)
#undef HARNESS_OP_
};

const size_t harness_op_count = sizeof harness_ops / sizeof harness_ops[0];

const harness_op *harness_op_find(const char *name) {
  for (size_t i = 0; i < harness_op_count; i++)
    if (strcmp(harness_ops[i].name, name) == 0) return &harness_ops[i];
  return NULL;
}
