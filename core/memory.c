/*
 * Memory on a context: validation, bookkeeping in the context's allocation
 * map (alloc_map.c) that catches double frees and answers the pointer checks
 * (buffer_check.c), registration of application memory, and forwarding to the
 * plugin.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "core/internal.h"

adnn_status adnn_malloc(adnn_context *ctx, size_t bytes, void **ptr) {
  adnn_status st = adnn__check_context("adnn_malloc", ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (ptr == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "adnn_malloc: ptr is NULL");
  if (bytes == 0) return adnn__fail(ADNN_STATUS_BAD_PARAM, "adnn_malloc: bytes is 0");
  if (bytes > (size_t)INT64_MAX)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_OVERFLOW, "adnn_malloc: %zu bytes is larger than any "
                      "memory can be", bytes);
  void *p = NULL;
  st = ctx->table->mem_alloc(ctx->pctx, bytes, &p);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (p == NULL)
    return adnn__fail(ADNN_STATUS_INTERNAL_ERROR, "adnn_malloc: backend %s returned NULL with "
                      "success", adnn_context_get_backend(ctx));
  adnn__region clash;
  pthread_rwlock_wrlock(&ctx->alloc_lock);
  int inserted = adnn__alloc_map_insert(&ctx->allocs, (uintptr_t)p, bytes, ADNN__REGION_MALLOC,
                                        &clash);
  pthread_rwlock_unlock(&ctx->alloc_lock);
  if (inserted != 1) {
    ctx->table->mem_free(ctx->pctx, p);
    if (inserted < 0)
      /* The backend handed out memory the context already knows: a region the
       * application registered and then freed behind adnn's back, say. */
      return adnn__fail(ADNN_STATUS_INTERNAL_ERROR,
                        "adnn_malloc: backend %s returned %zu bytes at %p, which overlap the %s "
                        "of %zu bytes at %p the context already holds (was registered memory "
                        "freed before adnn_memory_unregister?)", adnn_context_get_backend(ctx),
                        bytes, p, clash.kind == ADNN__REGION_MALLOC ? "allocation" : "region",
                        clash.size, (void *)clash.base);
    return adnn__fail(ADNN_STATUS_OUT_OF_MEMORY, "adnn_malloc: out of host memory for the "
                      "allocation registry");
  }
  *ptr = p;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_free(adnn_context *ctx, void *ptr) {
  adnn_status st = adnn__check_context("adnn_free", ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (ptr == NULL) return ADNN_STATUS_SUCCESS;
  pthread_rwlock_wrlock(&ctx->alloc_lock);
  const adnn__region *r = adnn__alloc_map_at(&ctx->allocs, (uintptr_t)ptr);
  int registered = r != NULL && r->kind != ADNN__REGION_MALLOC;
  int removed = r != NULL && !registered && adnn__alloc_map_remove(&ctx->allocs, (uintptr_t)ptr);
  pthread_rwlock_unlock(&ctx->alloc_lock);
  if (registered)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_MEMORY,
                      "adnn_free: pointer %p is memory registered with adnn_memory_register, "
                      "which adnn does not own; use adnn_memory_unregister", ptr);
  if (!removed)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_DOUBLE_FREE,
                      "adnn_free: pointer %p was not allocated by this context (backend %s) or "
                      "was already freed", ptr, adnn_context_get_backend(ctx));
  return ctx->table->mem_free(ctx->pctx, ptr);
}

static int range_wraps(const void *p, size_t n) {
  return (uintptr_t)p + n < (uintptr_t)p;
}

adnn_status adnn_memory_register(adnn_context *ctx, void *ptr, size_t bytes,
                                 adnn_memory_kind kind, uint32_t flags) {
  const char *func = "adnn_memory_register";
  adnn_status st = adnn__check_context(func, ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (ptr == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: ptr is NULL", func);
  if (bytes == 0) return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: bytes is 0", func);
  if (kind != ADNN_MEMORY_DEVICE && kind != ADNN_MEMORY_HOST)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: kind %d is not an adnn_memory_kind", func,
                      (int)kind);
  if (flags != 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: flags (0x%x) are reserved and must be 0", func,
                      (unsigned)flags);
  if (range_wraps(ptr, bytes))
    return adnn__fail(ADNN_STATUS_BAD_PARAM_OVERFLOW,
                      "%s: %zu bytes from %p wrap around the address space", func, bytes, ptr);
  if (!ADNN_PLUGIN_HAS(ctx->table, mem_register))
    return adnn__fail(ADNN_STATUS_NOT_SUPPORTED, "%s: backend %s cannot register external memory",
                      func, adnn_context_get_backend(ctx));
  /* The backend checks what the pointer is before the context records it; a
   * refusal keeps its reason. */
  st = ctx->table->mem_register(ctx->pctx, ptr, bytes, (uint32_t)kind);
  if (st != ADNN_STATUS_SUCCESS) return st;
  adnn__region clash;
  const adnn__region_kind rk =
      kind == ADNN_MEMORY_DEVICE ? ADNN__REGION_REGISTERED_DEVICE : ADNN__REGION_REGISTERED_HOST;
  pthread_rwlock_wrlock(&ctx->alloc_lock);
  int inserted = adnn__alloc_map_insert(&ctx->allocs, (uintptr_t)ptr, bytes, rk, &clash);
  pthread_rwlock_unlock(&ctx->alloc_lock);
  if (inserted < 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "%s: %zu bytes at %p overlap the %s of %zu bytes at %p that the context "
                      "already holds", func, bytes, ptr,
                      clash.kind == ADNN__REGION_MALLOC ? "adnn_malloc allocation"
                                                        : "registered region",
                      clash.size, (void *)clash.base);
  if (inserted == 0)
    return adnn__fail(ADNN_STATUS_OUT_OF_MEMORY, "%s: out of host memory for the allocation "
                      "registry", func);
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_memory_unregister(adnn_context *ctx, void *ptr) {
  const char *func = "adnn_memory_unregister";
  adnn_status st = adnn__check_context(func, ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (ptr == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: ptr is NULL", func);
  pthread_rwlock_wrlock(&ctx->alloc_lock);
  const adnn__region *at = adnn__alloc_map_at(&ctx->allocs, (uintptr_t)ptr);
  adnn__region r = {0, 0, ADNN__REGION_MALLOC};
  const adnn__region *inside = at ? at : adnn__alloc_map_find(&ctx->allocs, (uintptr_t)ptr);
  if (inside != NULL) r = *inside;
  int removed = at != NULL && at->kind != ADNN__REGION_MALLOC &&
                adnn__alloc_map_remove(&ctx->allocs, (uintptr_t)ptr);
  pthread_rwlock_unlock(&ctx->alloc_lock);
  if (removed) return ADNN_STATUS_SUCCESS;
  if (inside != NULL && r.kind == ADNN__REGION_MALLOC)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_MEMORY,
                      "%s: pointer %p is %smemory from adnn_malloc (%zu bytes at %p), not a "
                      "registered region; use adnn_free", func, ptr, at ? "" : "inside ", r.size,
                      (void *)r.base);
  if (inside != NULL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_MEMORY,
                      "%s: pointer %p lies inside the region registered at %p (%zu bytes); pass "
                      "that region's base", func, ptr, (void *)r.base, r.size);
  return adnn__fail(ADNN_STATUS_BAD_PARAM_MEMORY,
                    "%s: pointer %p is not the base of a region registered on this context "
                    "(backend %s), or it was already unregistered", func, ptr,
                    adnn_context_get_backend(ctx));
}

static int ranges_overlap(const void *a, const void *b, size_t n) {
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return x < y + n && y < x + n;
}

adnn_status adnn_memcpy(adnn_context *ctx, void *dst, const void *src, size_t bytes,
                        adnn_memcpy_kind kind) {
  const char *func = "adnn_memcpy";
  adnn_status st = adnn__check_context(func, ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (kind != ADNN_MEMCPY_HOST_TO_DEVICE && kind != ADNN_MEMCPY_DEVICE_TO_HOST &&
      kind != ADNN_MEMCPY_DEVICE_TO_DEVICE && kind != ADNN_MEMCPY_HOST_TO_HOST)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "adnn_memcpy: kind %d is not an adnn_memcpy_kind",
                      (int)kind);
  if (bytes == 0) return ADNN_STATUS_SUCCESS;
  if (dst == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "adnn_memcpy: dst is NULL");
  if (src == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "adnn_memcpy: src is NULL");
  if (range_wraps(dst, bytes) || range_wraps(src, bytes))
    return adnn__fail(ADNN_STATUS_BAD_PARAM_OVERFLOW,
                      "adnn_memcpy: %zu bytes from %p or %p wraps around the address space",
                      bytes, dst, src);
  /* Overlap is only meaningful when both pointers are in the same address
   * space; on the CPU backend every kind is. */
  if ((kind == ADNN_MEMCPY_DEVICE_TO_DEVICE || kind == ADNN_MEMCPY_HOST_TO_HOST) &&
      ranges_overlap(dst, src, bytes))
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "adnn_memcpy: source and destination ranges overlap (%zu bytes at %p and %p)",
                      bytes, src, dst);
  /* The kind says what each side is; the context's map says whether that is
   * true, so that a swapped direction fails on the CPU as it would on a GPU. */
  const int dst_device = kind == ADNN_MEMCPY_HOST_TO_DEVICE || kind == ADNN_MEMCPY_DEVICE_TO_DEVICE;
  const int src_device = kind == ADNN_MEMCPY_DEVICE_TO_HOST || kind == ADNN_MEMCPY_DEVICE_TO_DEVICE;
  st = dst_device ? adnn__check_device_range(func, ctx, "dst", dst, bytes)
                  : adnn__check_host_range(func, ctx, "dst", dst, bytes);
  if (st != ADNN_STATUS_SUCCESS) return st;
  st = src_device ? adnn__check_device_range(func, ctx, "src", src, bytes)
                  : adnn__check_host_range(func, ctx, "src", src, bytes);
  if (st != ADNN_STATUS_SUCCESS) return st;
  return ctx->table->mem_copy(ctx->pctx, dst, src, bytes, kind);
}

adnn_status adnn_memset(adnn_context *ctx, void *ptr, int value, size_t bytes) {
  adnn_status st = adnn__check_context("adnn_memset", ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (value < 0 || value > 255)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "adnn_memset: value %d is not a byte (0..255)", value);
  if (bytes == 0) return ADNN_STATUS_SUCCESS;
  if (ptr == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "adnn_memset: ptr is NULL");
  if (range_wraps(ptr, bytes))
    return adnn__fail(ADNN_STATUS_BAD_PARAM_OVERFLOW,
                      "adnn_memset: %zu bytes from %p wraps around the address space", bytes, ptr);
  st = adnn__check_device_range("adnn_memset", ctx, "ptr", ptr, bytes);
  if (st != ADNN_STATUS_SUCCESS) return st;
  return ctx->table->mem_set(ctx->pctx, ptr, value, bytes);
}
