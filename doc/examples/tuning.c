/* Tuning today: see which conv2d algorithm the heuristic picks, then force one. */
#include <stdio.h>

#include <adnn.h>

/* Creates a plan for a 1x32x28x28 input and 64 3x3 filters with `algo` and
 * prints the algorithm the plan runs. Returns the status of plan creation. */
static adnn_status try_algorithm(adnn_context *ctx, adnn_conv2d_algorithm algo) {
  int64_t xdims[4] = {1, 32, 28, 28}, wdims[4] = {64, 32, 3, 3}, ydims[4];
  adnn_conv2d_desc d;
  adnn_conv2d_desc_init(&d);
  adnn_tensor_desc_init(&d.x, ADNN_DTYPE_F32, 4, xdims);
  adnn_tensor_desc_init(&d.w, ADNN_DTYPE_F32, 4, wdims);
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
  d.algorithm = algo;
  adnn_status st = adnn_conv2d_output_dims(&d, ydims);
  if (st != ADNN_STATUS_SUCCESS) return st;
  adnn_tensor_desc_init(&d.y, ADNN_DTYPE_F32, 4, ydims);

  adnn_plan *plan;
  st = adnn_plan_create_conv2d(ctx, &d, &plan);
  printf("requested %-12s -> ", adnn_conv2d_algorithm_name(algo));
  if (st == ADNN_STATUS_SUCCESS) {
    printf("runs %s (workspace %zu bytes)\n", adnn_plan_algorithm(plan),
           adnn_plan_workspace_bytes(plan));
    adnn_plan_destroy(plan);
  } else {
    printf("%s: %s\n", adnn_status_name(st), adnn_last_error());
  }
  return st;
}

int main(void) {
  adnn_context *ctx;
  if (adnn_context_create(NULL, &ctx) != ADNN_STATUS_SUCCESS) {
    fprintf(stderr, "%s\n", adnn_last_error());
    return 1;
  }
  /* AUTO: the backend's built-in heuristic (or ADNN_CONV2D_ALGO, when set). */
  adnn_status st = try_algorithm(ctx, ADNN_CONV2D_ALGO_AUTO);
  if (st == ADNN_STATUS_NOT_SUPPORTED) {
    adnn_context_destroy(ctx);
    return 77; /* conv2d not available on this backend yet: "skipped" */
  }
  /* Forcing: the reference algorithm (plain loops) runs any problem, slowly. */
  if (st == ADNN_STATUS_SUCCESS) st = try_algorithm(ctx, ADNN_CONV2D_ALGO_REFERENCE);
  /* A forced algorithm that cannot run the problem fails; it never falls back. */
  if (st == ADNN_STATUS_SUCCESS && try_algorithm(ctx, ADNN_CONV2D_ALGO_GEMM_1X1) !=
                                       ADNN_STATUS_NOT_SUPPORTED)
    st = ADNN_STATUS_INTERNAL_ERROR;
  adnn_context_destroy(ctx);
  return st == ADNN_STATUS_SUCCESS ? 0 : 1;
}
