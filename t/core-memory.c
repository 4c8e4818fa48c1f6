/* Memory on a cpu context: malloc/memcpy/memset round trips with seeded data,
 * alignment, and the registry's catching of double and foreign frees. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "t/tap.h"

static void fill_random(unsigned char *p, size_t n, uint64_t seed) {
  tap_rng r = tap_rng_seed(seed);
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(tap_rng_next(&r) >> 56);
}

/* Index of the first differing byte, or -1. */
static long first_diff(const unsigned char *a, const unsigned char *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return (long)i;
  return -1;
}

int main(void) {
  adnn_context *ctx = NULL;
  adnn_status st = adnn_context_create("cpu", &ctx);
  is_status(st, ADNN_STATUS_SUCCESS, "create cpu context");
  if (st != ADNN_STATUS_SUCCESS) tap_bail("no cpu context");

  /* Sizes: 1 byte, odd, page-ish, a few MiB. */
  const size_t sizes[] = {1, 3, 63, 64, 65, 1000, 4097, 3u << 20};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    size_t n = sizes[s];
    unsigned char *src = malloc(n), *back = malloc(n), *back2 = malloc(n);
    fill_random(src, n, 1000 + s);
    memset(back, 0xEE, n);
    memset(back2, 0xDD, n);
    void *d1 = NULL, *d2 = NULL;
    is_status(adnn_malloc(ctx, n, &d1), ADNN_STATUS_SUCCESS, "malloc %zu bytes", n);
    is_status(adnn_malloc(ctx, n, &d2), ADNN_STATUS_SUCCESS, "second malloc %zu bytes", n);
    ok(d1 && ((uintptr_t)d1 % 64) == 0 && d2 && ((uintptr_t)d2 % 64) == 0,
       "%zu bytes: both allocations are 64-byte aligned (%p, %p)", n, d1, d2);
    ok(d1 != d2, "%zu bytes: distinct allocations", n);
    if (d1 == NULL || d2 == NULL) {
      free(src), free(back), free(back2);
      continue;
    }
    is_status(adnn_memcpy(ctx, d1, src, n, ADNN_MEMCPY_HOST_TO_DEVICE), ADNN_STATUS_SUCCESS,
              "%zu: host to device", n);
    is_status(adnn_memcpy(ctx, d2, d1, n, ADNN_MEMCPY_DEVICE_TO_DEVICE), ADNN_STATUS_SUCCESS,
              "%zu: device to device", n);
    is_status(adnn_memcpy(ctx, back, d2, n, ADNN_MEMCPY_DEVICE_TO_HOST), ADNN_STATUS_SUCCESS,
              "%zu: device to host", n);
    long diff = first_diff(src, back, n);
    is_int(diff, -1, "%zu: H2D, D2D, D2H round trip is exact (first differing byte)", n);
    is_status(adnn_memcpy(ctx, back2, back, n, ADNN_MEMCPY_HOST_TO_HOST), ADNN_STATUS_SUCCESS,
              "%zu: host to host", n);
    is_int(first_diff(src, back2, n), -1, "%zu: host to host copy is exact", n);

    /* memset a middle part; the rest must keep the seeded bytes. */
    size_t off = n / 3, len = n - n / 3 - n / 4;
    int value = (int)(37 + s * 29) & 0xff;
    is_status(adnn_memset(ctx, (unsigned char *)d1 + off, value, len), ADNN_STATUS_SUCCESS,
              "%zu: memset %zu bytes at %zu to %d", n, len, off, value);
    is_status(adnn_memcpy(ctx, back, d1, n, ADNN_MEMCPY_DEVICE_TO_HOST), ADNN_STATUS_SUCCESS,
              "%zu: read back after memset", n);
    int good = 1;
    for (size_t i = 0; i < n && good; i++) {
      unsigned char want = (i >= off && i < off + len) ? (unsigned char)value : src[i];
      if (back[i] != want) {
        diag("  byte %zu: got %u, expected %u", i, back[i], want);
        good = 0;
      }
    }
    ok(good, "%zu: memset wrote exactly its range", n);
    is_status(adnn_free(ctx, d1), ADNN_STATUS_SUCCESS, "%zu: free first", n);
    is_status(adnn_free(ctx, d2), ADNN_STATUS_SUCCESS, "%zu: free second", n);
    free(src), free(back), free(back2);
  }

  /* memset with 0 and 255 (the ends of the byte range). */
  void *p = NULL;
  unsigned char host[256];
  is_status(adnn_malloc(ctx, sizeof host, &p), ADNN_STATUS_SUCCESS, "malloc 256");
  is_status(adnn_memset(ctx, p, 255, sizeof host), ADNN_STATUS_SUCCESS, "memset 255");
  adnn_memcpy(ctx, host, p, sizeof host, ADNN_MEMCPY_DEVICE_TO_HOST);
  ok(host[0] == 255 && host[255] == 255, "memset 255 wrote 0xff");
  is_status(adnn_memset(ctx, p, 0, sizeof host), ADNN_STATUS_SUCCESS, "memset 0");
  adnn_memcpy(ctx, host, p, sizeof host, ADNN_MEMCPY_DEVICE_TO_HOST);
  ok(host[0] == 0 && host[255] == 0, "memset 0 wrote zeros");

  /* Bad values. */
  is_status(adnn_memset(ctx, p, 256, 8), ADNN_STATUS_BAD_PARAM, "memset value 256");
  contains(adnn_last_error(), "value", "message names value");
  is_status(adnn_memset(ctx, p, -1, 8), ADNN_STATUS_BAD_PARAM, "memset value -1");
  is_status(adnn_memset(ctx, p, 7, 0), ADNN_STATUS_SUCCESS, "memset 0 bytes is a no-op");
  is_status(adnn_memset(ctx, NULL, 7, 0), ADNN_STATUS_SUCCESS, "memset NULL, 0 bytes is a no-op");
  is_status(adnn_memset(ctx, NULL, 7, 8), ADNN_STATUS_BAD_PARAM_NULL, "memset NULL ptr");
  contains(adnn_last_error(), "ptr", "message names ptr");

  unsigned char *bytes = p;
  is_status(adnn_memcpy(ctx, bytes + 8, bytes, 16, ADNN_MEMCPY_DEVICE_TO_DEVICE),
            ADNN_STATUS_BAD_PARAM, "overlapping device-to-device memcpy");
  contains(adnn_last_error(), "overlap", "message says overlap");
  is_status(adnn_memcpy(ctx, bytes, bytes + 15, 16, ADNN_MEMCPY_HOST_TO_HOST),
            ADNN_STATUS_BAD_PARAM, "overlapping host-to-host memcpy");
  is_status(adnn_memcpy(ctx, bytes, bytes, 16, ADNN_MEMCPY_DEVICE_TO_DEVICE),
            ADNN_STATUS_BAD_PARAM, "memcpy onto itself");
  is_status(adnn_memcpy(ctx, bytes, bytes + 16, 16, ADNN_MEMCPY_DEVICE_TO_DEVICE),
            ADNN_STATUS_SUCCESS, "adjacent ranges do not overlap");
  is_status(adnn_memcpy(ctx, bytes, host, 16, (adnn_memcpy_kind)0), ADNN_STATUS_BAD_PARAM,
            "memcpy kind 0");
  contains(adnn_last_error(), "kind", "message names kind");
  is_status(adnn_memcpy(ctx, bytes, host, 16, (adnn_memcpy_kind)5), ADNN_STATUS_BAD_PARAM,
            "memcpy kind 5");
  is_status(adnn_memcpy(ctx, NULL, host, 16, ADNN_MEMCPY_HOST_TO_DEVICE),
            ADNN_STATUS_BAD_PARAM_NULL, "memcpy dst NULL");
  contains(adnn_last_error(), "dst", "message names dst");
  is_status(adnn_memcpy(ctx, bytes, NULL, 16, ADNN_MEMCPY_HOST_TO_DEVICE),
            ADNN_STATUS_BAD_PARAM_NULL, "memcpy src NULL");
  contains(adnn_last_error(), "src", "message names src");
  is_status(adnn_memcpy(ctx, NULL, NULL, 0, ADNN_MEMCPY_HOST_TO_DEVICE), ADNN_STATUS_SUCCESS,
            "memcpy of 0 bytes with NULLs is a no-op");

  /* malloc errors; *ptr untouched. */
  void *q = (void *)(uintptr_t)0x4242;
  is_status(adnn_malloc(ctx, 0, &q), ADNN_STATUS_BAD_PARAM, "malloc 0 bytes");
  contains(adnn_last_error(), "bytes", "message names bytes");
  ok(q == (void *)(uintptr_t)0x4242, "ptr untouched on failure");
  is_status(adnn_malloc(ctx, 16, NULL), ADNN_STATUS_BAD_PARAM_NULL, "malloc ptr NULL");
  is_status(adnn_malloc(ctx, SIZE_MAX, &q), ADNN_STATUS_BAD_PARAM_OVERFLOW,
            "malloc SIZE_MAX bytes");
  is_status(adnn_malloc(ctx, (size_t)1 << 60, &q), ADNN_STATUS_OUT_OF_MEMORY,
            "malloc 2^60 bytes is out of memory, not a crash");
  ok(q == (void *)(uintptr_t)0x4242, "ptr untouched on failure");
  is_status(adnn_malloc(NULL, 16, &q), ADNN_STATUS_BAD_PARAM_NULL, "malloc on NULL ctx");
  contains(adnn_last_error(), "ctx", "message names ctx");

  /* free: NULL, double, foreign, interior, another context's. */
  is_status(adnn_free(ctx, NULL), ADNN_STATUS_SUCCESS, "free NULL is a no-op");
  is_status(adnn_free(ctx, p), ADNN_STATUS_SUCCESS, "free");
  is_status(adnn_free(ctx, p), ADNN_STATUS_BAD_PARAM_DOUBLE_FREE, "double free is caught");
  contains(adnn_last_error(), "already freed", "message explains");
  int on_stack;
  is_status(adnn_free(ctx, &on_stack), ADNN_STATUS_BAD_PARAM_DOUBLE_FREE,
            "free of a stack pointer is caught");
  char *heap = malloc(100);
  is_status(adnn_free(ctx, heap), ADNN_STATUS_BAD_PARAM_DOUBLE_FREE,
            "free of a malloc pointer is caught (and not freed)");
  heap[99] = 1; /* still ours: valgrind would flag a use after free */
  free(heap);
  void *r = NULL;
  adnn_malloc(ctx, 128, &r);
  is_status(adnn_free(ctx, (char *)r + 64), ADNN_STATUS_BAD_PARAM_DOUBLE_FREE,
            "free of an interior pointer is caught");
  adnn_context *other = NULL;
  adnn_context_create("cpu", &other);
  is_status(adnn_free(other, r), ADNN_STATUS_BAD_PARAM_DOUBLE_FREE,
            "free on another context is caught");
  adnn_context_destroy(other);
  is_status(adnn_free(ctx, r), ADNN_STATUS_SUCCESS, "free on the owning context still works");
  is_status(adnn_free(NULL, r), ADNN_STATUS_BAD_PARAM_NULL, "free on NULL ctx");

  /* The registry under churn: many allocations, frees in another order. */
  enum { MANY = 3000 };
  void **ptrs = calloc(MANY, sizeof *ptrs);
  int all = 1;
  for (int i = 0; i < MANY; i++)
    if (adnn_malloc(ctx, 1 + (size_t)(i % 200), &ptrs[i]) != ADNN_STATUS_SUCCESS) all = 0;
  ok(all, "%d allocations", MANY);
  int freed = 1;
  for (int i = 0; i < MANY; i += 2)
    if (adnn_free(ctx, ptrs[i]) != ADNN_STATUS_SUCCESS) freed = 0;
  ok(freed, "freed every second one");
  int caught = 1;
  for (int i = 0; i < MANY; i += 2)
    if (adnn_free(ctx, ptrs[i]) != ADNN_STATUS_BAD_PARAM_DOUBLE_FREE) caught = 0;
  ok(caught, "freeing them again is caught for each");
  for (int i = 0; i < MANY; i++) ptrs[i] = NULL;
  for (int i = 0; i < MANY; i++)
    if (adnn_malloc(ctx, 64, &ptrs[i]) != ADNN_STATUS_SUCCESS) all = 0;
  ok(all, "%d more allocations after the frees", MANY);
  /* Destroy without freeing: the context owns them (valgrind checks no leak). */
  adnn_context_destroy(ctx);
  ok(1, "destroyed a context with %d live allocations", MANY * 3 / 2);
  free(ptrs);
  return tap_done();
}
