/* Test-only plugin built as if against plugin ABI 2.6: ready, host memory,
 * and plan slots that run nothing. t/core-plugin-abi-gate uses it to prove
 * that the core refuses, before calling the plugin, a problem whose fields a
 * 2.6 plugin cannot see (the optimizer's model_dtype, 2.7), and passes every
 * other problem on to the plugin. */
#include "t/plugins/test-plugin.h"

static const adnn_plugin_host *host;

static adnn_status probe(adnn_plugin_report *r) {
  r->state = ADNN_BACKEND_READY;
  r->score = 1;
  adnn_plugin_report_reason(r, "test plugin: always ready");
  adnn_plugin_report_device(r, 0, "abi26 test device");
  return ADNN_STATUS_SUCCESS;
}

/* Every plan is refused with a message of this plugin's own, so that a test
 * can tell a refusal of the core's from one that reached the plugin. */
static adnn_status plan_create(adnn_plugin_context *ctx, const adnn_plugin_op *op,
                               adnn_plugin_plan **out) {
  (void)ctx, (void)op, (void)out;
  return host->fail(ADNN_STATUS_NOT_SUPPORTED,
                    "abi26 test plugin: plan_create reached, it runs no operation");
}
static adnn_status plan_select(adnn_plugin_plan *plan, int32_t candidate) {
  (void)plan, (void)candidate;
  return ADNN_STATUS_NOT_SUPPORTED;
}
static adnn_status plan_execute(adnn_plugin_plan *plan, const void *const *in, void *const *out) {
  (void)plan, (void)in, (void)out;
  return ADNN_STATUS_NOT_SUPPORTED;
}
static void plan_destroy(adnn_plugin_plan *plan) { (void)plan; }

static const adnn_plugin table = {
    .abi_version = (2u << 16) | 6u,
    .struct_size = sizeof(adnn_plugin),
    .name = "abi26",
    .version = "0.0.1",
    .probe = probe,
    TP_SLOTS,
    .plan_create = plan_create,
    .plan_select = plan_select,
    .plan_execute = plan_execute,
    .plan_destroy = plan_destroy,
};

ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t v, const adnn_plugin_host *h);
ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t v, const adnn_plugin_host *h) {
  (void)v;
  host = h;
  return &table;
}
