/* Test-only plugin: loads fine, but its probe says the machine cannot run it. */
#include "t/plugins/test-plugin.h"

static adnn_status probe(adnn_plugin_report *r) {
  r->state = ADNN_BACKEND_UNAVAILABLE;
  r->score = 0;
  adnn_plugin_report_reason(r, "test plugin: no frobnicator found; install a frobnicator");
  adnn_plugin_report_property(r, "frobnicator", "none");
  return ADNN_STATUS_SUCCESS;
}

static const adnn_plugin table = {
    .abi_version = ADNN_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(adnn_plugin),
    .name = "unavail",
    .version = "0.0.1",
    .probe = probe,
    TP_SLOTS,
};

ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t v, const adnn_plugin_host *h);
ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t v, const adnn_plugin_host *h) {
  (void)v, (void)h;
  return &table;
}
