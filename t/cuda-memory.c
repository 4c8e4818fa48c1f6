/*
 * Device memory on the CUDA plugin: allocation, host/device copies in every
 * direction, memset, freeing, and the out-of-memory status with the vendor's
 * error name. Skipped without a usable GPU.
 */
#include <stdio.h>
#include <string.h>

#include <adnn.h>

#include "t/tap.h"

int main(void) {
  adnn_context *ctx = NULL;
  if (adnn_context_create("cuda", &ctx) != ADNN_STATUS_SUCCESS) {
    char reason[1200];
    snprintf(reason, sizeof reason, "no usable CUDA device: %s", adnn_last_error());
    for (char *p = reason; *p; p++)
      if (*p == '\n') *p = ' ';
    return tap_skip_all(reason);
  }
  enum { N = 4099 }; /* not a multiple of anything convenient */
  static unsigned char host[N], back[N];
  for (int i = 0; i < N; i++) host[i] = (unsigned char)(i * 7 + 3);

  void *d1 = NULL, *d2 = NULL;
  is_status(adnn_malloc(ctx, N, &d1), ADNN_STATUS_SUCCESS, "malloc %d bytes", N);
  is_status(adnn_malloc(ctx, N, &d2), ADNN_STATUS_SUCCESS, "malloc another %d bytes", N);
  ok(((uintptr_t)d1 % 64) == 0, "device memory is 64-byte aligned");
  is_status(adnn_memcpy(ctx, d1, host, N, ADNN_MEMCPY_HOST_TO_DEVICE), ADNN_STATUS_SUCCESS, "host to device");
  is_status(adnn_memcpy(ctx, d2, d1, N, ADNN_MEMCPY_DEVICE_TO_DEVICE), ADNN_STATUS_SUCCESS, "device to device");
  memset(back, 0, sizeof back);
  is_status(adnn_memcpy(ctx, back, d2, N, ADNN_MEMCPY_DEVICE_TO_HOST), ADNN_STATUS_SUCCESS, "device to host");
  ok(memcmp(host, back, N) == 0, "the round trip keeps every byte");

  is_status(adnn_memset(ctx, d2, 0xab, N - 1), ADNN_STATUS_SUCCESS, "memset all but the last byte");
  is_status(adnn_memcpy(ctx, back, d2, N, ADNN_MEMCPY_DEVICE_TO_HOST), ADNN_STATUS_SUCCESS, "read back");
  int set_ok = 1;
  for (int i = 0; i < N - 1; i++) set_ok &= back[i] == 0xab;
  ok(set_ok, "memset wrote 0xab");
  is_int(back[N - 1], host[N - 1], "memset left the last byte alone");

  unsigned char copy[N];
  is_status(adnn_memcpy(ctx, copy, host, N, ADNN_MEMCPY_HOST_TO_HOST), ADNN_STATUS_SUCCESS, "host to host");
  ok(memcmp(copy, host, N) == 0, "host to host copies");
  is_status(adnn_context_synchronize(ctx), ADNN_STATUS_SUCCESS, "synchronize");

  is_status(adnn_free(ctx, d1), ADNN_STATUS_SUCCESS, "free");
  is_status(adnn_free(ctx, d2), ADNN_STATUS_SUCCESS, "free the other");

  /* 1 PiB: no GPU has it, so the allocation fails with its own status. */
  void *huge = NULL;
  is_status(adnn_malloc(ctx, (size_t)1 << 50, &huge), ADNN_STATUS_DEVICE_OUT_OF_MEMORY,
            "an impossible allocation gives DEVICE_OUT_OF_MEMORY");
  contains(adnn_last_error(), "cudaErrorMemoryAllocation", "the message names the CUDA error");
  ok(huge == NULL, "nothing was written");
  /* The failure must not poison later work on the context. */
  is_status(adnn_malloc(ctx, 256, &d1), ADNN_STATUS_SUCCESS, "a normal allocation works afterwards");
  is_status(adnn_free(ctx, d1), ADNN_STATUS_SUCCESS, "and is freed");
  is_status(adnn_context_synchronize(ctx), ADNN_STATUS_SUCCESS, "synchronize after the failure");

  adnn_context_destroy(ctx);
  return tap_done();
}
