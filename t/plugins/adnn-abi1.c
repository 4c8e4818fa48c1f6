/* Test-only plugin built against the plugin ABI 1.0 header of adnn 0.1.0
 * (t/compat/adnn-0.1/adnn/plugin.h comes first on its include path): a
 * complete, working plugin of that ABI, which passed the public op
 * descriptors to plan_create. The core must refuse it as incompatible, naming
 * the plugin's ABI 1.0 and the ABI 2 it needs, before calling any of its
 * slots. */
#include <stdlib.h>
#include <string.h>

#include <adnn/plugin.h>

#if ADNN_PLUGIN_ABI_MAJOR != 1
#error "this test plugin must be compiled against the adnn 0.1 headers (t/compat/adnn-0.1)"
#endif

struct adnn_plugin_context {
  int device;
};

static adnn_status probe(adnn_plugin_report *r) {
  r->state = ADNN_BACKEND_READY;
  r->score = 1000; /* would win "auto" if the core ever accepted it */
  adnn_plugin_report_reason(r, "a plugin of ABI 1.0");
  adnn_plugin_report_device(r, 0, "ABI 1.0 device");
  return ADNN_STATUS_SUCCESS;
}

static adnn_status ctx_create(int device, adnn_plugin_context **out) {
  adnn_plugin_context *c = calloc(1, sizeof *c);
  if (c == NULL) return ADNN_STATUS_OUT_OF_MEMORY;
  c->device = device;
  *out = c;
  return ADNN_STATUS_SUCCESS;
}
static void ctx_destroy(adnn_plugin_context *c) { free(c); }
static adnn_status sync_ctx(adnn_plugin_context *c) {
  (void)c;
  return ADNN_STATUS_SUCCESS;
}
static adnn_status mem_alloc(adnn_plugin_context *c, size_t n, void **p) {
  (void)c;
  *p = malloc(n);
  return *p ? ADNN_STATUS_SUCCESS : ADNN_STATUS_OUT_OF_MEMORY;
}
static adnn_status mem_free(adnn_plugin_context *c, void *p) {
  (void)c;
  free(p);
  return ADNN_STATUS_SUCCESS;
}
static adnn_status mem_copy(adnn_plugin_context *c, void *d, const void *s, size_t n,
                            adnn_memcpy_kind k) {
  (void)c, (void)k;
  memmove(d, s, n);
  return ADNN_STATUS_SUCCESS;
}
static adnn_status mem_set(adnn_plugin_context *c, void *p, int v, size_t n) {
  (void)c;
  memset(p, v, n);
  return ADNN_STATUS_SUCCESS;
}
/* ABI 1.0's plan slot read the public descriptor out of op->desc: exactly
 * what ABI 2.0 stopped doing. It is never called. */
static adnn_status plan_create(adnn_plugin_context *c, const adnn_plugin_op *op,
                               adnn_plugin_plan **out) {
  (void)c, (void)op, (void)out;
  abort();
}

static const adnn_plugin table = {
    .abi_version = ADNN_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(adnn_plugin),
    .name = "abi1",
    .version = "0.1.0",
    .probe = probe,
    .context_create = ctx_create,
    .context_destroy = ctx_destroy,
    .synchronize = sync_ctx,
    .mem_alloc = mem_alloc,
    .mem_free = mem_free,
    .mem_copy = mem_copy,
    .mem_set = mem_set,
    .plan_create = plan_create,
};

ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t v, const adnn_plugin_host *h);
ADNN_PLUGIN_EXPORT const adnn_plugin *adnn_plugin_entry(uint32_t v, const adnn_plugin_host *h) {
  (void)v, (void)h;
  return &table;
}
