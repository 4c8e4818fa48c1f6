/* Contexts: create one on the best backend, inspect it, destroy it. */
#include <stdio.h>

#include <adnn.h>

int main(void) {
  adnn_context *ctx;
  adnn_status st = adnn_context_create("auto", &ctx);
  if (st != ADNN_STATUS_SUCCESS) {
    fprintf(stderr, "no backend: %s\n", adnn_last_error());
    return 1;
  }
  printf("running on %s, device %d\n", adnn_context_get_backend(ctx), adnn_context_get_device(ctx));

  /* Opt in to TF32 on GPUs (ignored by the CPU backend). */
  if (adnn_context_set_flags(ctx, ADNN_CONTEXT_ALLOW_TF32) != ADNN_STATUS_SUCCESS) return 1;
  printf("flags: 0x%x\n", (unsigned)adnn_context_get_flags(ctx));

  if (adnn_context_synchronize(ctx) != ADNN_STATUS_SUCCESS) return 1;
  adnn_context_destroy(ctx);

  /* An explicit request never falls back: it fails and says why. */
  st = adnn_context_create("nosuchbackend", &ctx);
  printf("\"nosuchbackend\": %s: %s\n", adnn_status_name(st), adnn_last_error());
  return st == ADNN_STATUS_BACKEND_UNAVAILABLE ? 0 : 1;
}
