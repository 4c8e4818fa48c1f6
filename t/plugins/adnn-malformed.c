/* Test-only plugin: the right ABI, but a REQUIRED slot (probe) is missing. */
#include "t/plugins/test-plugin.h"

static const adnn_plugin table = {
    .abi_version = ADNN_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(adnn_plugin),
    .name = "malformed",
    .version = "0.0.1",
    .probe = NULL,
    TP_SLOTS,
};

ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t v, const adnn_plugin_host *h);
ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t v, const adnn_plugin_host *h) {
  (void)v, (void)h;
  return &table;
}
