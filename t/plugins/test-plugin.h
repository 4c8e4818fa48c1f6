/* Shared pieces of the test-only plugins (built by make check, never
 * installed): a host-memory implementation of the context and memory slots. */
#ifndef ADNN_TEST_PLUGIN_H
#define ADNN_TEST_PLUGIN_H

#include <stdlib.h>
#include <string.h>

#include <adnn/plugin.h>

#define TP_UNUSED __attribute__((unused))

struct adnn_plugin_context {
  int device;
};

TP_UNUSED static adnn_status tp_context_create(int device, adnn_plugin_context **out) {
  adnn_plugin_context *c = calloc(1, sizeof *c);
  if (c == NULL) return ADNN_STATUS_OUT_OF_MEMORY;
  c->device = device;
  *out = c;
  return ADNN_STATUS_SUCCESS;
}
TP_UNUSED static void tp_context_destroy(adnn_plugin_context *c) { free(c); }
TP_UNUSED static adnn_status tp_synchronize(adnn_plugin_context *c) {
  (void)c;
  return ADNN_STATUS_SUCCESS;
}
TP_UNUSED static adnn_status tp_mem_alloc(adnn_plugin_context *c, size_t bytes, void **ptr) {
  (void)c;
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes) != 0) return ADNN_STATUS_OUT_OF_MEMORY;
  *ptr = p;
  return ADNN_STATUS_SUCCESS;
}
TP_UNUSED static adnn_status tp_mem_free(adnn_plugin_context *c, void *ptr) {
  (void)c;
  free(ptr);
  return ADNN_STATUS_SUCCESS;
}
TP_UNUSED static adnn_status tp_mem_copy(adnn_plugin_context *c, void *dst, const void *src, size_t bytes,
                               adnn_memcpy_kind kind) {
  (void)c, (void)kind;
  memcpy(dst, src, bytes);
  return ADNN_STATUS_SUCCESS;
}
TP_UNUSED static adnn_status tp_mem_set(adnn_plugin_context *c, void *ptr, int value, size_t bytes) {
  (void)c;
  memset(ptr, value, bytes);
  return ADNN_STATUS_SUCCESS;
}

#define TP_SLOTS                                                                    \
  .context_create = tp_context_create, .context_destroy = tp_context_destroy,      \
  .synchronize = tp_synchronize, .mem_alloc = tp_mem_alloc, .mem_free = tp_mem_free, \
  .mem_copy = tp_mem_copy, .mem_set = tp_mem_set

#endif
