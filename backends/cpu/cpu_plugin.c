/*
 * The CPU backend plugin: the plugin table, its entry point and the context
 * functions. Probe and init are in cpu_probe.c, memory in cpu_memory.c, GEMM in
 * cpu_gemm.c, plans in cpu_plan.c.
 */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>

#include "backends/cpu/cpu_plugin.h"

const adnn_plugin_host *adnn_cpu__host = NULL;

static adnn_status cpu_context_create(int device, adnn_plugin_context **out) {
  if (device != 0)
    return adnn_cpu__host->fail(ADNN_STATUS_BAD_PARAM, "cpu backend has one device (0), not %d",
                                device);
  adnn_plugin_context *ctx = calloc(1, sizeof *ctx);
  if (ctx == NULL) return adnn_cpu__host->fail(ADNN_STATUS_OUT_OF_MEMORY, "out of host memory");
  ctx->device = device;
  *out = ctx;
  return ADNN_STATUS_SUCCESS;
}

static void cpu_context_destroy(adnn_plugin_context *ctx) { free(ctx); }

/* Every CPU operation completes before it returns. */
static adnn_status cpu_synchronize(adnn_plugin_context *ctx) {
  (void)ctx;
  return ADNN_STATUS_SUCCESS;
}

static const adnn_plugin cpu_plugin = {
    .abi_version = ADNN_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(adnn_plugin),
    .name = "cpu",
    .version = PACKAGE_VERSION,
    .probe = adnn_cpu__probe,
    .init = adnn_cpu__init,
    .context_create = cpu_context_create,
    .context_destroy = cpu_context_destroy,
    .synchronize = cpu_synchronize,
    .mem_alloc = adnn_cpu__mem_alloc,
    .mem_free = adnn_cpu__mem_free,
    .mem_copy = adnn_cpu__mem_copy,
    .mem_set = adnn_cpu__mem_set,
    .gemm = adnn_cpu__gemm,
    .plan_create = adnn_cpu__plan_create,
    .plan_candidates = adnn_cpu__plan_candidates,
    .plan_select = adnn_cpu__plan_select,
    .plan_execute = adnn_cpu__plan_execute,
    .plan_destroy = adnn_cpu__plan_destroy,
    .plan_describe = adnn_cpu__plan_describe,
    .device_identity = adnn_cpu__device_identity,
    .mem_register = adnn_cpu__mem_register,
    .plan_packed_weights_bytes = adnn_cpu__plan_packed_weights_bytes,
    .plan_pack_weights = adnn_cpu__plan_pack_weights,
    .gemm_impl_name = adnn_cpu__gemm_impl_name,
};

ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t host_abi_version,
                                                        const adnn_plugin_host *host);

ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t host_abi_version,
                                                        const adnn_plugin_host *host) {
  /* A core of another major ABI would read our table wrongly; refuse it (the
   * core checks the same from its side and reports a NULL answer as an
   * incompatible plugin). The host table must also reach the last member this
   * plugin calls: log, fail and getenv. */
  if ((host_abi_version >> 16) != ADNN_PLUGIN_ABI_MAJOR || host == NULL ||
      host->struct_size < offsetof(adnn_plugin_host, getenv) + sizeof host->getenv)
    return NULL;
  adnn_cpu__host = host;
  return &cpu_plugin;
}
