/*
 * The pointer checks: every device pointer given to a GEMM, a plan execution,
 * a copy or a memset must lie in one allocation (or registered region) of the
 * context, with enough bytes from there for what the call touches. On the CPU
 * backend "device" memory is host memory, so without these checks a wrong
 * pointer runs quietly on a laptop and crashes the GPU machine. The cost is
 * one read-locked binary search per pointer per call (doc/memory.md); the
 * context flag ADNN_CONTEXT_UNCHECKED_POINTERS turns them off.
 */
#include "config.h"

#include <stdint.h>

#include "core/internal.h"

static const char *region_noun(adnn__region_kind kind) {
  return kind == ADNN__REGION_MALLOC ? "allocation" : "registered region";
}

adnn_status adnn__check_device_range(const char *func, adnn_context *ctx, const char *name,
                                     const void *p, size_t bytes) {
  if (bytes == 0 || (ctx->flags & ADNN_CONTEXT_UNCHECKED_POINTERS)) return ADNN_STATUS_SUCCESS;
  const uintptr_t at = (uintptr_t)p;
  pthread_rwlock_rdlock(&ctx->alloc_lock);
  const adnn__region *found = adnn__alloc_map_find(&ctx->allocs, at);
  adnn__region r = {0, 0, ADNN__REGION_MALLOC};
  if (found != NULL) r = *found;
  pthread_rwlock_unlock(&ctx->alloc_lock);
  if (found == NULL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_MEMORY,
                      "%s: %s (%p) is not memory of this context (backend %s): allocate it with "
                      "adnn_malloc or register it with adnn_memory_register", func, name, p,
                      adnn_context_get_backend(ctx));
  if (r.kind == ADNN__REGION_REGISTERED_HOST)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_MEMORY,
                      "%s: %s (%p) lies in a region of %zu bytes at %p registered as host "
                      "memory (ADNN_MEMORY_HOST), which only adnn_memcpy's host side may use",
                      func, name, p, r.size, (void *)r.base);
  const size_t left = r.size - (size_t)(at - r.base);
  if (bytes > left)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_MEMORY,
                      "%s: %s needs %zu bytes from %p, but its %s of %zu bytes at %p holds only "
                      "%zu from there", func, name, bytes, p, region_noun(r.kind), r.size,
                      (void *)r.base, left);
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn__check_host_range(const char *func, adnn_context *ctx, const char *name,
                                   const void *p, size_t bytes) {
  if (bytes == 0 || (ctx->flags & ADNN_CONTEXT_UNCHECKED_POINTERS)) return ADNN_STATUS_SUCCESS;
  const uintptr_t at = (uintptr_t)p;
  pthread_rwlock_rdlock(&ctx->alloc_lock);
  const adnn__region *found = adnn__alloc_map_overlap(&ctx->allocs, at, bytes);
  adnn__region r = {0, 0, ADNN__REGION_MALLOC};
  if (found != NULL) r = *found;
  pthread_rwlock_unlock(&ctx->alloc_lock);
  if (found == NULL) return ADNN_STATUS_SUCCESS; /* memory the context does not know */
  if (r.kind != ADNN__REGION_REGISTERED_HOST)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_MEMORY,
                      "%s: %s (%p, %zu bytes) is device memory of this context (its %s of %zu "
                      "bytes at %p), but the copy's kind says it is host memory", func, name, p,
                      bytes, region_noun(r.kind), r.size, (void *)r.base);
  /* Host memory the application registered: the copy must stay inside it. */
  if (at < r.base || bytes > r.size - (size_t)(at - r.base))
    return adnn__fail(ADNN_STATUS_BAD_PARAM_MEMORY,
                      "%s: %s needs %zu bytes from %p, but the host region registered at %p "
                      "holds %zu bytes", func, name, bytes, p, (void *)r.base, r.size);
  return ADNN_STATUS_SUCCESS;
}
