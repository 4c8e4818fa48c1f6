/*
 * Memory on a context: validation, bookkeeping in the context's allocation
 * registry (alloc_set.c) that catches double frees, and forwarding to the
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
  pthread_mutex_lock(&ctx->alloc_lock);
  int inserted = adnn__alloc_set_insert(&ctx->allocs, p);
  pthread_mutex_unlock(&ctx->alloc_lock);
  if (!inserted) {
    ctx->table->mem_free(ctx->pctx, p);
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
  pthread_mutex_lock(&ctx->alloc_lock);
  int removed = adnn__alloc_set_remove(&ctx->allocs, ptr);
  pthread_mutex_unlock(&ctx->alloc_lock);
  if (!removed)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_DOUBLE_FREE,
                      "adnn_free: pointer %p was not allocated by this context (backend %s) or "
                      "was already freed", ptr, adnn_context_get_backend(ctx));
  return ctx->table->mem_free(ctx->pctx, ptr);
}

static int ranges_overlap(const void *a, const void *b, size_t n) {
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return x < y + n && y < x + n;
}

static int range_wraps(const void *p, size_t n) {
  return (uintptr_t)p + n < (uintptr_t)p;
}

adnn_status adnn_memcpy(adnn_context *ctx, void *dst, const void *src, size_t bytes,
                        adnn_memcpy_kind kind) {
  adnn_status st = adnn__check_context("adnn_memcpy", ctx);
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
  return ctx->table->mem_set(ctx->pctx, ptr, value, bytes);
}
