/* Memory: allocate on the context's device, copy in, set, copy out, free. */
#include <stdio.h>

#include <adnn.h>

int main(void) {
  adnn_context *ctx;
  if (adnn_context_create(NULL, &ctx) != ADNN_STATUS_SUCCESS) {
    fprintf(stderr, "%s\n", adnn_last_error());
    return 1;
  }
  float host[8] = {1, 2, 3, 4, 5, 6, 7, 8}, back[8];
  void *dev;
  int ok = adnn_malloc(ctx, sizeof host, &dev) == ADNN_STATUS_SUCCESS &&
           adnn_memcpy(ctx, dev, host, sizeof host, ADNN_MEMCPY_HOST_TO_DEVICE) ==
               ADNN_STATUS_SUCCESS &&
           adnn_memset(ctx, dev, 0, 4 * sizeof(float)) == ADNN_STATUS_SUCCESS &&
           adnn_memcpy(ctx, back, dev, sizeof back, ADNN_MEMCPY_DEVICE_TO_HOST) ==
               ADNN_STATUS_SUCCESS;
  if (!ok) fprintf(stderr, "%s\n", adnn_last_error());
  printf("after memset of the first half: %g %g ... %g %g\n", back[0], back[3], back[4], back[7]);
  ok = ok && back[0] == 0 && back[3] == 0 && back[4] == 5 && back[7] == 8;

  ok = ok && adnn_free(ctx, dev) == ADNN_STATUS_SUCCESS;
  /* A second free is refused instead of corrupting memory. */
  adnn_status st = adnn_free(ctx, dev);
  printf("second free: %s\n", adnn_status_name(st));
  ok = ok && st == ADNN_STATUS_BAD_PARAM_DOUBLE_FREE;

  adnn_context_destroy(ctx); /* frees anything still allocated */
  return ok ? 0 : 1;
}
