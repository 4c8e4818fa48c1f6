/* Tuning: measure the conv2d candidates once, see what was chosen and why. */
#include <stdio.h>

#include <adnn.h>

/* A 1x32x28x28 input and 64 3x3 filters, padding 1. */
static adnn_status make_desc(adnn_conv2d_desc *d) {
  int64_t xdims[4] = {1, 32, 28, 28}, wdims[4] = {64, 32, 3, 3}, ydims[4];
  adnn_conv2d_desc_init(d);
  adnn_tensor_desc_init(&d->x, ADNN_DTYPE_F32, 4, xdims);
  adnn_tensor_desc_init(&d->w, ADNN_DTYPE_F32, 4, wdims);
  d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 1;
  adnn_status st = adnn_conv2d_output_dims(d, ydims);
  if (st == ADNN_STATUS_SUCCESS) st = adnn_tensor_desc_init(&d->y, ADNN_DTYPE_F32, 4, ydims);
  return st;
}

int main(void) {
  adnn_context *ctx;
  if (adnn_context_create(NULL, &ctx) != ADNN_STATUS_SUCCESS) {
    fprintf(stderr, "%s\n", adnn_last_error());
    return 1;
  }
  /* Measure every candidate (a small budget keeps the example quick). */
  adnn_tune_options opts;
  adnn_tune_options_init(&opts);
  opts.mode = ADNN_TUNE_EXHAUSTIVE;
  opts.time_budget_ms = 200.0;
  adnn_status st = adnn_context_set_tune_options(ctx, &opts);

  adnn_conv2d_desc d;
  adnn_plan *plan = NULL;
  if (st == ADNN_STATUS_SUCCESS) st = make_desc(&d);
  if (st == ADNN_STATUS_SUCCESS) st = adnn_plan_create_conv2d(ctx, &d, &plan);
  if (st == ADNN_STATUS_NOT_SUPPORTED) {
    adnn_context_destroy(ctx);
    return 77; /* conv2d not available on this backend: "skipped" */
  }
  if (st != ADNN_STATUS_SUCCESS) {
    fprintf(stderr, "%s\n", adnn_last_error());
    adnn_context_destroy(ctx);
    return 1;
  }
  printf("runs %s: %s\n", adnn_plan_get_algorithm(plan), adnn_plan_get_choice_reason(plan));
  size_t n = 0;
  adnn_plan_get_candidate_count(plan, &n);
  for (size_t i = 0; i < n; i++) {
    const adnn_plan_candidate *c;
    if (adnn_plan_get_candidate(plan, i, &c) != ADNN_STATUS_SUCCESS) continue;
    if (c->time_ms >= 0)
      printf("  %-18s %8.3f ms  workspace %zu bytes\n", c->algorithm, c->time_ms,
             c->workspace_bytes);
    else
      printf("  %-18s not measured (%s)\n", c->algorithm, adnn_status_name(c->status));
  }
  adnn_plan_destroy(plan);
  adnn_context_destroy(ctx);
  return 0;
}
