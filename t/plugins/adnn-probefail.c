/* Test-only plugin: its probe fails (returns an error status) after writing a
 * reason; the core must report it as unavailable with that reason. */
#include "t/plugins/test-plugin.h"

static adnn_status probe(adnn_plugin_report *r) {
  r->state = ADNN_BACKEND_READY; /* must be ignored: the probe failed */
  r->score = 99;
  adnn_plugin_report_reason(r, "test plugin: probe exploded");
  return ADNN_STATUS_EXECUTION_FAILED;
}

static const adnn_plugin table = {
    .abi_version = ADNN_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(adnn_plugin),
    .name = "probefail",
    .version = "0.0.1",
    .probe = probe,
    TP_SLOTS,
};

ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t v, const adnn_plugin_host *h);
ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t v, const adnn_plugin_host *h) {
  (void)v, (void)h;
  return &table;
}
