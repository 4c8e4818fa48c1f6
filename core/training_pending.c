/*
 * The training ops whose implementation has not landed on this branch yet:
 * their create functions are declared in adnn/ops.h and exported, and refuse
 * with NOT_SUPPORTED until the op's manifest row replaces the definition
 * here with the generated one. This file shrinks to nothing as the ops land
 * and is then deleted.
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

PENDING_(pool2d_backward)
PENDING_(activation_backward)
PENDING_(softmax_backward)
PENDING_(softmax_cross_entropy)
PENDING_(softmax_cross_entropy_backward)
PENDING_(optimizer)

adnn_status adnn_plan_set_optimizer_step(adnn_plan *plan, double lr, int64_t step) {
  (void)plan;
  (void)lr;
  (void)step;
  return adnn__fail(ADNN_STATUS_NOT_SUPPORTED,
                    "adnn_plan_set_optimizer_step: the optimizer is not implemented in this build");
}
