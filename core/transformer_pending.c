/*
 * The transformer ops (matmul, attention, attention backward) whose
 * implementation has not landed on this branch yet: their create functions
 * are declared in adnn/ops.h and exported, and refuse with NOT_SUPPORTED
 * until the op's manifest row replaces the definition here with the
 * generated one. This file shrinks to nothing as the ops land and is then
 * deleted.
 */
#include "config.h"

#include "core/internal.h"

#define PENDING_(name)                                                                      \
  adnn_status adnn_plan_create_##name(adnn_context *ctx, const adnn_##name##_desc *desc,    \
                                      adnn_plan **plan) {                                   \
    (void)ctx;                                                                              \
    (void)desc;                                                                             \
    if (plan) *plan = NULL;                                                                 \
    return adnn__fail(ADNN_STATUS_NOT_SUPPORTED, "adnn_plan_create_" #name                  \
                      ": this op is not implemented in this build");                        \
  }

