/*
 * The CUDA plugin's table and its one exported symbol.
 */
#include "config.h"

#include "cuda_internal.h"
#include "cuda_plan.h"

const adnn_plugin_host *cuda__host;

static const adnn_plugin cuda_plugin_table = {
    .abi_version = ADNN_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(adnn_plugin),
    .name = "cuda",
    .version = PACKAGE_VERSION,
    .probe = cuda__probe,
    .init = cuda__init,
    .context_create = cuda__context_create,
    .context_destroy = cuda__context_destroy,
    .synchronize = cuda__synchronize,
    .mem_alloc = cuda__mem_alloc,
    .mem_free = cuda__mem_free,
    .mem_copy = cuda__mem_copy,
    .mem_set = cuda__mem_set,
    .gemm = cuda__gemm,
    .plan_create = cuda__plan_create,
    .plan_execute = cuda__plan_execute,
    .plan_destroy = cuda__plan_destroy,
    .plan_describe = cuda__plan_describe,
    .plan_candidates = cuda__plan_candidates,
    .device_identity = cuda__device_identity,
};

ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t host_abi_version,
                                                         const adnn_plugin_host *host) {
  /* Another major version of the host table may have a different layout; the
   * core reports a NULL answer as an incompatible plugin. The host table must
   * also reach at least the last member this plugin calls. */
  if ((host_abi_version >> 16) != ADNN_PLUGIN_ABI_MAJOR || !host ||
      host->struct_size < offsetof(adnn_plugin_host, getenv) + sizeof host->getenv)
    return NULL;
  cuda__host = host;
  return &cuda_plugin_table;
}
