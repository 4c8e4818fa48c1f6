/* CPU plugin memory: 64-byte aligned host allocations and plain copies. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_plugin.h"

/* A cache line, and the width of an AVX-512 register: kernels may use aligned
 * loads on buffers from adnn_malloc. */
#define CPU_ALIGNMENT 64

adnn_status adnn_cpu__mem_alloc(adnn_plugin_context *ctx, size_t bytes, void **ptr) {
  (void)ctx;
  void *p = NULL;
  int err = posix_memalign(&p, CPU_ALIGNMENT, bytes);
  if (err != 0 || p == NULL)
    return adnn_cpu__host->fail(ADNN_STATUS_OUT_OF_MEMORY,
                                "adnn_malloc: cannot allocate %zu bytes of host memory", bytes);
  *ptr = p;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_cpu__mem_free(adnn_plugin_context *ctx, void *ptr) {
  (void)ctx;
  free(ptr);
  return ADNN_STATUS_SUCCESS;
}

/* On the CPU every kind of copy is a host copy. */
adnn_status adnn_cpu__mem_copy(adnn_plugin_context *ctx, void *dst, const void *src, size_t bytes,
                               adnn_memcpy_kind kind) {
  (void)ctx;
  (void)kind;
  /* The core rejects overlap only for D2D and H2H; on the CPU every kind is in
   * one address space, so an overlapping H2D/D2H must not be memcpy's UB. */
  memmove(dst, src, bytes);
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_cpu__mem_set(adnn_plugin_context *ctx, void *ptr, int value, size_t bytes) {
  (void)ctx;
  memset(ptr, value, bytes);
  return ADNN_STATUS_SUCCESS;
}

/* Every kind of registered memory is host memory in the one address space the
 * CPU backend works in, so there is nothing to verify: the core has checked the
 * range and its overlap with the context's allocations. */
adnn_status adnn_cpu__mem_register(adnn_plugin_context *ctx, void *ptr, size_t bytes, uint32_t kind) {
  (void)ctx;
  (void)ptr;
  (void)bytes;
  (void)kind;
  return ADNN_STATUS_SUCCESS;
}
