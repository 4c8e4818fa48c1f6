/* Training: fit y = w . x + b with conv2d (a 1x1 convolution is a linear
 * layer), its backward-weights op (dw and db through adnn_plan_execute_multi)
 * and a fused SGD step over both parameter tensors. */
#include <math.h>
#include <stdio.h>

#include <adnn.h>

#define FAIL(what) \
  do { fprintf(stderr, "%s: %s\n", what, adnn_last_error()); return 1; } while (0)

enum { N = 8, C = 3, STEPS = 300 };

int main(void) {
  adnn_context *ctx;
  if (adnn_context_create(NULL, &ctx) != ADNN_STATUS_SUCCESS) FAIL("context");

  /* x: [N, C, 1, 1], w: [1, C, 1, 1], bias: [1], y: [N, 1, 1, 1]. */
  int64_t xd[4] = {N, C, 1, 1}, wd[4] = {1, C, 1, 1}, bd[1] = {1}, yd[4] = {N, 1, 1, 1};
  adnn_conv2d_desc fwd;
  adnn_conv2d_desc_init(&fwd);
  adnn_tensor_desc_init(&fwd.x, ADNN_DTYPE_F32, 4, xd);
  adnn_tensor_desc_init(&fwd.w, ADNN_DTYPE_F32, 4, wd);
  adnn_tensor_desc_init(&fwd.bias, ADNN_DTYPE_F32, 1, bd);
  adnn_tensor_desc_init(&fwd.y, ADNN_DTYPE_F32, 4, yd);
  fwd.has_bias = 1;

  /* The backward plan points to the forward descriptor; dw and db take the
   * layouts of w and bias. */
  adnn_conv2d_backward_weights_desc bwd;
  adnn_conv2d_backward_weights_desc_init(&bwd);
  bwd.forward = &fwd;

  /* One SGD step with momentum over both parameter tensors. */
  const int64_t sizes[2] = {C, 1};
  adnn_optimizer_desc opt;
  adnn_optimizer_desc_init(&opt);
  opt.kind = ADNN_OPTIMIZER_SGD;
  opt.tensor_count = 2;
  opt.sizes = sizes;
  opt.momentum = 0.9;

  adnn_plan *forward, *backward, *step;
  adnn_status st = adnn_plan_create_conv2d(ctx, &fwd, &forward);
  if (st == ADNN_STATUS_SUCCESS) st = adnn_plan_create_conv2d_backward_weights(ctx, &bwd, &backward);
  if (st == ADNN_STATUS_SUCCESS) st = adnn_plan_create_optimizer(ctx, &opt, &step);
  if (st == ADNN_STATUS_NOT_SUPPORTED) {
    printf("skipped: %s\n", adnn_last_error());
    adnn_context_destroy(ctx);
    return 77; /* "skipped", for the test harness */
  }
  if (st != ADNN_STATUS_SUCCESS) FAIL("plans");

  /* Data from y = 0.5 x0 - 2 x1 + x2 + 0.25; the parameters start at 0. */
  const float w_true[C] = {0.5f, -2.0f, 1.0f}, b_true = 0.25f;
  float x[N * C], target[N], y[N], dy[N], zeros[2 * C + 2] = {0};
  for (int n = 0; n < N; n++) {
    target[n] = b_true;
    for (int c = 0; c < C; c++) {
      x[n * C + c] = (float)sin(1.3 * (n + 1) * (c + 2));
      target[n] += w_true[c] * x[n * C + c];
    }
  }
  void *dx, *dw, *db, *dyy, *ddy, *dgw, *dgb, *mw, *mb;
  if (adnn_malloc(ctx, sizeof x, &dx) || adnn_malloc(ctx, C * sizeof(float), &dw) ||
      adnn_malloc(ctx, sizeof(float), &db) || adnn_malloc(ctx, sizeof y, &dyy) ||
      adnn_malloc(ctx, sizeof dy, &ddy) || adnn_malloc(ctx, C * sizeof(float), &dgw) ||
      adnn_malloc(ctx, sizeof(float), &dgb) || adnn_malloc(ctx, C * sizeof(float), &mw) ||
      adnn_malloc(ctx, sizeof(float), &mb) ||
      adnn_memcpy(ctx, dx, x, sizeof x, ADNN_MEMCPY_HOST_TO_DEVICE) ||
      adnn_memcpy(ctx, dw, zeros, C * sizeof(float), ADNN_MEMCPY_HOST_TO_DEVICE) ||
      adnn_memcpy(ctx, db, zeros, sizeof(float), ADNN_MEMCPY_HOST_TO_DEVICE) ||
      adnn_memcpy(ctx, mw, zeros, C * sizeof(float), ADNN_MEMCPY_HOST_TO_DEVICE) ||
      adnn_memcpy(ctx, mb, zeros, sizeof(float), ADNN_MEMCPY_HOST_TO_DEVICE))
    FAIL("memory");

  double loss = 0;
  for (int s = 1; s <= STEPS; s++) {
    const void *fin[3] = {dx, dw, db};
    if (adnn_plan_execute(forward, fin, 3, dyy)) FAIL("forward");
    if (adnn_memcpy(ctx, y, dyy, sizeof y, ADNN_MEMCPY_DEVICE_TO_HOST)) FAIL("copy y");
    /* The mean squared error's gradient, on the host for brevity. */
    loss = 0;
    for (int n = 0; n < N; n++) {
      loss += 0.5 * (y[n] - target[n]) * (y[n] - target[n]) / N;
      dy[n] = (y[n] - target[n]) / N;
    }
    if (adnn_memcpy(ctx, ddy, dy, sizeof dy, ADNN_MEMCPY_HOST_TO_DEVICE)) FAIL("copy dy");
    /* Two outputs: the multi-output entry. */
    const void *bin[2] = {dx, ddy};
    void *grads[2] = {dgw, dgb};
    if (adnn_plan_execute_multi(backward, bin, 2, grads, 2)) FAIL("backward");
    /* Parameters and momentum buffers are read and updated in place. */
    if (adnn_plan_set_optimizer_step(step, 0.5, s)) FAIL("set step");
    const void *gin[2] = {dgw, dgb};
    void *state[4] = {dw, db, mw, mb};
    if (adnn_plan_execute_multi(step, gin, 2, state, 4)) FAIL("optimizer");
  }
  float w[C], b;
  if (adnn_memcpy(ctx, w, dw, sizeof w, ADNN_MEMCPY_DEVICE_TO_HOST) ||
      adnn_memcpy(ctx, &b, db, sizeof b, ADNN_MEMCPY_DEVICE_TO_HOST))
    FAIL("copy parameters");
  printf("after %d steps: loss %.3g, w = (%.4f, %.4f, %.4f), b = %.4f\n", STEPS, loss, w[0], w[1],
         w[2], b);

  adnn_plan_destroy(step);
  adnn_plan_destroy(backward);
  adnn_plan_destroy(forward);
  adnn_context_destroy(ctx);
  double err = fabs(b - b_true);
  for (int c = 0; c < C; c++) err = fmax(err, fabs(w[c] - w_true[c]));
  return err < 1e-3 ? 0 : 1;
}
