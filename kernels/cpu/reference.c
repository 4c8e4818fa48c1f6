/*
 * The "reference" implementation of every op: the plain loops of kernels/ref/
 * behind the CPU kernel interface, generated from the op manifest. They run
 * any problem in every dtype the op accepts, need no state and no workspace,
 * and are exact but slow, so every list puts them last and the tuner measures
 * them only as a last resort (ADNN_CPU_IMPL_SLOW).
 */
#include "config.h"

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/ref/ref.h"

/* The macro's parameter is `op`, not `name`, so that it leaves the
 * designator .name alone. */
#define REFERENCE_IMPL_(NAME, op, value, v1_end, in_list, out_list, dtypes_, flags_)        \
  static void op##_reference_run(const void *problem, const void *state,                      \
                                 const void *const *inputs, void *const *outputs,             \
                                 void *workspace) {                                           \
    (void)state;                                                                              \
    (void)workspace;                                                                          \
    adnn_ref_##op((const adnn_plugin_##op *)problem, inputs, outputs);                        \
  }                                                                                           \
  const adnn_cpu_impl adnn_cpu_##op##_reference = {                                           \
      .name = "reference",                                                                    \
      .flags = ADNN_CPU_IMPL_SLOW | ADNN_CPU_IMPL_DETERMINISTIC,                              \
      .dtypes = (dtypes_),                                                                    \
      .run = op##_reference_run,                                                              \
  };
ADNN_OP_LIST(REFERENCE_IMPL_)
#undef REFERENCE_IMPL_
