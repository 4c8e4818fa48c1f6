/* Plans: describe a 3x3 convolution with fused ReLU once, then execute it. */
#include <stdio.h>

#include <adnn.h>

#define FAIL(what) \
  do { fprintf(stderr, "%s: %s\n", what, adnn_last_error()); return 1; } while (0)

int main(void) {
  adnn_context *ctx;
  if (adnn_context_create(NULL, &ctx) != ADNN_STATUS_SUCCESS) FAIL("context");

  /* x: [N=1, C=1, H=4, W=4], w: [K=1, C=1, R=3, S=3], padding 1 keeps 4x4. */
  int64_t xdims[4] = {1, 1, 4, 4}, wdims[4] = {1, 1, 3, 3}, ydims[4];
  adnn_conv2d_desc d;
  adnn_conv2d_desc_init(&d);
  adnn_tensor_desc_init(&d.x, ADNN_DTYPE_F32, 4, xdims);
  adnn_tensor_desc_init(&d.w, ADNN_DTYPE_F32, 4, wdims);
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
  d.activation.kind = ADNN_ACTIVATION_RELU;
  if (adnn_conv2d_output_dims(&d, ydims) != ADNN_STATUS_SUCCESS) FAIL("output dims");
  adnn_tensor_desc_init(&d.y, ADNN_DTYPE_F32, 4, ydims);

  adnn_plan *plan;
  adnn_status st = adnn_plan_create_conv2d(ctx, &d, &plan);
  if (st == ADNN_STATUS_NOT_SUPPORTED) {
    printf("skipped: %s\n", adnn_last_error());
    adnn_context_destroy(ctx);
    return 77; /* "skipped", for the test harness */
  }
  if (st != ADNN_STATUS_SUCCESS) FAIL("plan");
  printf("algorithm %s, workspace %zu bytes\n", adnn_plan_get_algorithm(plan),
         adnn_plan_get_workspace_bytes(plan));

  float x[16], w[9], y[16];
  for (int i = 0; i < 16; i++) x[i] = 1.0f;
  for (int i = 0; i < 9; i++) w[i] = 1.0f;
  void *dx, *dw, *dy;
  if (adnn_malloc(ctx, sizeof x, &dx) || adnn_malloc(ctx, sizeof w, &dw) ||
      adnn_malloc(ctx, sizeof y, &dy) ||
      adnn_memcpy(ctx, dx, x, sizeof x, ADNN_MEMCPY_HOST_TO_DEVICE) ||
      adnn_memcpy(ctx, dw, w, sizeof w, ADNN_MEMCPY_HOST_TO_DEVICE))
    FAIL("memory");

  const void *inputs[2] = {dx, dw};
  /* Execute as often as needed: no allocation, no re-validation of shapes. */
  if (adnn_plan_execute(plan, inputs, 2, dy) != ADNN_STATUS_SUCCESS) FAIL("execute");
  if (adnn_memcpy(ctx, y, dy, sizeof y, ADNN_MEMCPY_DEVICE_TO_HOST)) FAIL("copy back");
  printf("corner %g, edge %g, inner %g\n", y[0], y[1], y[5]);

  adnn_plan_destroy(plan);
  adnn_context_destroy(ctx);
  return y[0] == 4 && y[1] == 6 && y[5] == 9 ? 0 : 1;
}
