/* Internal declarations of the CPU plugin. */
#ifndef ADNN_CPU_PLUGIN_H
#define ADNN_CPU_PLUGIN_H

#include <adnn/plugin.h>

#include "kernels/cpu/cpu_features.h"

/* The host table handed to adnn_plugin_entry; valid for the process lifetime. */
extern const adnn_plugin_host *adnn_cpu_host;

/* One CPU context. The CPU backend executes synchronously, so a context holds
 * no queue; it exists for symmetry and for per-context settings. */
struct adnn_plugin_context {
  int device;
};

/* The thread count the plugin uses, and where it came from. */
int adnn_cpu_thread_count(const char **source);

adnn_status adnn_cpu_probe(adnn_plugin_report *report);
adnn_status adnn_cpu_init(void);

adnn_status adnn_cpu_mem_alloc(adnn_plugin_context *ctx, size_t bytes, void **ptr);
adnn_status adnn_cpu_mem_free(adnn_plugin_context *ctx, void *ptr);
adnn_status adnn_cpu_mem_copy(adnn_plugin_context *ctx, void *dst, const void *src, size_t bytes,
                              adnn_memcpy_kind kind);
adnn_status adnn_cpu_mem_set(adnn_plugin_context *ctx, void *ptr, int value, size_t bytes);

adnn_status adnn_cpu_plan_create(adnn_plugin_context *ctx, const adnn_plugin_op *op,
                                 adnn_plugin_plan **out);
adnn_status adnn_cpu_plan_execute(adnn_plugin_plan *plan, const void *const *inputs, void *output);
void adnn_cpu_plan_destroy(adnn_plugin_plan *plan);
void adnn_cpu_plan_describe(const adnn_plugin_plan *plan, const char **algorithm,
                            size_t *workspace_bytes);

adnn_status adnn_cpu_plan_candidates(adnn_plugin_context *ctx, const adnn_plugin_op *op,
                                     adnn_plugin_candidate *out, int32_t max, int32_t *count);
void adnn_cpu_device_identity(int device, char *buf, size_t size);

adnn_status adnn_cpu_gemm(adnn_plugin_context *ctx, const adnn_plugin_gemm_args *args);

#endif
