/*
 * Memory on a context: validation, the allocation registry that catches double
 * frees, and forwarding to the plugin.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "core/internal.h"

char adnn__tombstone;

/* ---- allocation registry: open addressing, linear probing ---- */

static size_t slot_of(const void *p, size_t cap) {
  /* Allocations are at least 64-byte aligned; drop the zero bits, then mix. */
  uint64_t h = (uint64_t)(uintptr_t)p >> 6;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return (size_t)h & (cap - 1);
}

static int rehash(adnn__alloc_set *set, size_t cap) {
  void **keys = calloc(cap, sizeof *keys);
  if (keys == NULL) return 0;
  for (size_t i = 0; i < set->capacity; i++) {
    void *p = set->keys[i];
    if (p == NULL || p == ADNN__TOMBSTONE) continue;
    size_t s = slot_of(p, cap);
    while (keys[s] != NULL) s = (s + 1) & (cap - 1);
    keys[s] = p;
  }
  free(set->keys);
  set->keys = keys;
  set->capacity = cap;
  set->used = set->live;
  return 1;
}

int adnn__alloc_set_insert(adnn__alloc_set *set, void *ptr) {
  if ((set->used + 1) * 2 > set->capacity) {
    /* Rebuild at a load of at most 1/4, which also clears the tombstones. */
    size_t cap = 16;
    while ((set->live + 1) * 4 > cap) cap *= 2;
    if (!rehash(set, cap)) return 0;
  }
  size_t s = slot_of(ptr, set->capacity);
  while (set->keys[s] != NULL && set->keys[s] != ADNN__TOMBSTONE) s = (s + 1) & (set->capacity - 1);
  if (set->keys[s] == NULL) set->used++;
  set->keys[s] = ptr;
  set->live++;
  return 1;
}

int adnn__alloc_set_remove(adnn__alloc_set *set, void *ptr) {
  if (set->capacity == 0) return 0;
  size_t s = slot_of(ptr, set->capacity);
  for (size_t probes = 0; probes < set->capacity; probes++) {
    void *k = set->keys[s];
    if (k == NULL) return 0;
    if (k == ptr) {
      set->keys[s] = ADNN__TOMBSTONE;
      set->live--;
      return 1;
    }
    s = (s + 1) & (set->capacity - 1);
  }
  return 0;
}

void adnn__alloc_set_free(adnn__alloc_set *set) {
  free(set->keys);
  set->keys = NULL;
  set->capacity = set->used = set->live = 0;
}

/* ---- public functions ---- */

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
                      "success", adnn_context_backend(ctx));
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
                      "was already freed", ptr, adnn_context_backend(ctx));
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
