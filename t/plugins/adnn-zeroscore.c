/* Test-only plugin: its probe claims READY with score 0 (0 means unusable); the
 * core must report it as unavailable and never use it. */
#include "t/plugins/test-plugin.h"

static adnn_status probe(adnn_plugin_report *r) {
  r->state = ADNN_BACKEND_READY;
  r->score = 0;
  adnn_plugin_report_reason(r, "test plugin: ready, but with score 0");
  adnn_plugin_report_device(r, 0, "zero device");
  return ADNN_STATUS_SUCCESS;
}

static const adnn_plugin table = {
    .abi_version = ADNN_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(adnn_plugin),
    .name = "zeroscore",
    .version = "0.0.1",
    .probe = probe,
    TP_SLOTS,
};

ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t v, const adnn_plugin_host *h);
ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t v, const adnn_plugin_host *h) {
  (void)v, (void)h;
  return &table;
}
