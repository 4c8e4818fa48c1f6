/*
 * The CUDA plugin's table and its one exported symbol.
 */
#include "config.h"

#include "backends/cuda/cuda_internal.h"
#include "backends/cuda/cuda_plan.h"

static const adnn_plugin cuda_plugin_table = {
    .abi_version = ADNN_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(adnn_plugin),
    .name = "cuda",
    .version = PACKAGE_VERSION,
    .probe = adnn_cuda__probe,
    .init = adnn_cuda__init,
    .context_create = adnn_cuda__context_create,
    .context_destroy = adnn_cuda__context_destroy,
    .synchronize = adnn_cuda__synchronize,
    .mem_alloc = adnn_cuda__mem_alloc,
    .mem_free = adnn_cuda__mem_free,
    .mem_copy = adnn_cuda__mem_copy,
    .mem_set = adnn_cuda__mem_set,
    .gemm = adnn_cuda__gemm,
    .plan_create = adnn_cuda__plan_create,
    .plan_candidates = adnn_cuda__plan_candidates,
    .plan_select = adnn_cuda__plan_select,
    .plan_execute = adnn_cuda__plan_execute,
    .plan_destroy = adnn_cuda__plan_destroy,
    .plan_describe = adnn_cuda__plan_describe,
    .device_identity = adnn_cuda__device_identity,
    .mem_register = adnn_cuda__mem_register,
    .plan_packed_weights_bytes = adnn_cuda__plan_packed_weights_bytes,
    .plan_pack_weights = adnn_cuda__plan_pack_weights,
};

ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t host_abi_version,
                                                         const adnn_plugin_host *host) {
  /* Another major version of the host table may have a different layout; the
   * core reports a NULL answer as an incompatible plugin. The host table must
   * also reach at least the last member this plugin calls. */
  if ((host_abi_version >> 16) != ADNN_PLUGIN_ABI_MAJOR || !host ||
      host->struct_size < offsetof(adnn_plugin_host, getenv) + sizeof host->getenv)
    return NULL;
  adnn_cuda__host = host; /* defined with the error helpers, which use it most */
  return &cuda_plugin_table;
}
