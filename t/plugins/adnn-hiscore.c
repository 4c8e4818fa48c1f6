/* Test-only plugin: ready with score 50 (the cpu plugin has 10), host memory,
 * and no GEMM slot. t/core-auto-select uses it to prove that "auto" prefers the
 * higher score and that a missing slot is NOT_SUPPORTED. */
#include "t/plugins/test-plugin.h"

static adnn_status probe(adnn_plugin_report *r) {
  r->state = ADNN_BACKEND_READY;
  r->score = 50;
  adnn_plugin_report_reason(r, "test plugin: always ready");
  adnn_plugin_report_property(r, "kind", "test");
  adnn_plugin_device *d = adnn_plugin_report_device(r, 0, "hiscore test device");
  if (d) adnn_plugin_device_property(d, "memory", "host");
  return ADNN_STATUS_SUCCESS;
}

static const adnn_plugin table = {
    .abi_version = ADNN_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(adnn_plugin),
    .name = "hiscore",
    .version = "0.0.1",
    .probe = probe,
    TP_SLOTS,
    .gemm = NULL,
};

ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t v, const adnn_plugin_host *h);
ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t v, const adnn_plugin_host *h) {
  (void)v, (void)h;
  return &table;
}
