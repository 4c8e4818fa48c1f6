/* Test-only plugin: built for a plugin ABI major version (99) that no adnn
 * has; the core must refuse it as incompatible, naming both versions. */
#include "t/plugins/test-plugin.h"

static adnn_status probe(adnn_plugin_report *r) {
  r->state = ADNN_BACKEND_READY;
  r->score = 1000; /* would win "auto" if the core ever accepted it */
  adnn_plugin_report_device(r, 0, "bad ABI device");
  return ADNN_STATUS_SUCCESS;
}

static const adnn_plugin table = {
    .abi_version = (99u << 16) | 3u,
    .struct_size = sizeof(adnn_plugin),
    .name = "badabi",
    .version = "9.9.9",
    .probe = probe,
    TP_SLOTS,
};

ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t v, const adnn_plugin_host *h);
ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t v, const adnn_plugin_host *h) {
  (void)v, (void)h;
  return &table;
}
