/*
 * adnn_plan_execute_multi, the one execute entry for ops with any number of
 * outputs, checks what adnn_plan_execute checks, per output: the counts of
 * inputs and outputs are the op's, no pointer is NULL, every pointer lies in
 * memory of the plan's context with its tensor's span, and outputs overlap
 * neither each other nor inputs (except the documented in-place use). A
 * single-output op gives the same result through both entries. The checks
 * specific to several outputs are exercised again by the conformance cases
 * and bad-input tests of the multi-output ops themselves.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <adnn.h>

#include "t/rng.h"
#include "t/tap.h"

enum { COUNT = 1000 };

static adnn_context *ctx;

static void *dev(size_t bytes) {
  void *p = NULL;
  if (adnn_malloc(ctx, bytes, &p) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  return p;
}

int main(void) {
  if (adnn_context_create("cpu", &ctx) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  adnn_activation_desc d;
  adnn_activation_desc_init(&d);
  const int64_t dims[1] = {COUNT};
  adnn_tensor_desc_init(&d.x, ADNN_DTYPE_F32, 1, dims);
  d.y = d.x;
  d.activation.kind = ADNN_ACTIVATION_TANH;
  adnn_plan *plan = NULL;
  if (adnn_plan_create_activation(ctx, &d, &plan) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());

  float host[COUNT], y1[COUNT], y2[COUNT];
  tap_rng rng = tap_rng_seed(20261201);
  for (int i = 0; i < COUNT; i++) host[i] = (float)tap_rng_uniform(&rng, -3, 3);
  const size_t bytes = sizeof host;
  void *x = dev(bytes), *ya = dev(bytes), *yb = dev(bytes), *big = dev(2 * bytes);
  adnn_memcpy(ctx, x, host, bytes, ADNN_MEMCPY_HOST_TO_DEVICE);
  adnn_memset(ctx, ya, 0xFF, bytes);
  adnn_memset(ctx, yb, 0xFF, bytes);
  const void *in[1] = {x};

  /* The same result through both entries (both poisoned first). */
  is_status(adnn_plan_execute(plan, in, 1, ya), ADNN_STATUS_SUCCESS, "adnn_plan_execute runs");
  void *out[2] = {yb, NULL};
  is_status(adnn_plan_execute_multi(plan, in, 1, out, 1), ADNN_STATUS_SUCCESS,
            "adnn_plan_execute_multi runs a single-output op");
  adnn_context_synchronize(ctx);
  adnn_memcpy(ctx, y1, ya, bytes, ADNN_MEMCPY_DEVICE_TO_HOST);
  adnn_memcpy(ctx, y2, yb, bytes, ADNN_MEMCPY_DEVICE_TO_HOST);
  int same = 1, close = 1;
  for (int i = 0; i < COUNT; i++) {
    same &= memcmp(&y1[i], &y2[i], sizeof y1[i]) == 0;
    close &= fabs((double)y2[i] - tanh((double)host[i])) < 1e-6;
  }
  ok(same, "both entries give bit-identical outputs");
  ok(close, "and the output is tanh(x) within 1e-6 everywhere");

  /* Counts. */
  is_status(adnn_plan_execute_multi(plan, in, 1, out, 2), ADNN_STATUS_BAD_PARAM,
            "two outputs for a one-output op are refused");
  contains(adnn_last_error(), "has 1 output(s) (y), got 2", "  the message gives the count");
  is_status(adnn_plan_execute_multi(plan, in, 1, out, 0), ADNN_STATUS_BAD_PARAM,
            "no outputs are refused");
  is_status(adnn_plan_execute_multi(plan, in, 2, out, 1), ADNN_STATUS_BAD_PARAM,
            "two inputs for a one-input op are refused");
  contains(adnn_last_error(), "takes 1 input(s) (x), got 2", "  the message gives the count");

  /* NULLs. */
  is_status(adnn_plan_execute_multi(NULL, in, 1, out, 1), ADNN_STATUS_BAD_PARAM_NULL,
            "a NULL plan is refused");
  is_status(adnn_plan_execute_multi(plan, in, 1, NULL, 1), ADNN_STATUS_BAD_PARAM_NULL,
            "NULL outputs are refused");
  contains(adnn_last_error(), "adnn_plan_execute_multi: outputs is NULL", "  and named");
  is_status(adnn_plan_execute_multi(plan, NULL, 1, out, 1), ADNN_STATUS_BAD_PARAM_NULL,
            "NULL inputs are refused");
  void *null_out[1] = {NULL};
  is_status(adnn_plan_execute_multi(plan, in, 1, null_out, 1), ADNN_STATUS_BAD_PARAM_NULL,
            "a NULL output pointer is refused");
  contains(adnn_last_error(), "outputs[0] is NULL", "  and named");

  /* Memory. */
  float stack_out[COUNT];
  void *foreign[1] = {stack_out};
  is_status(adnn_plan_execute_multi(plan, in, 1, foreign, 1), ADNN_STATUS_BAD_PARAM_MEMORY,
            "an output that is not memory of the context is refused");
  contains(adnn_last_error(), "output", "  the message names the output");
  void *tail[1] = {(char *)big + bytes + 4};
  is_status(adnn_plan_execute_multi(plan, in, 1, tail, 1), ADNN_STATUS_BAD_PARAM_MEMORY,
            "an output whose span runs past its allocation is refused");

  /* Overlap with the input: in place is allowed for activation only when the
   * output is exactly the input. */
  void *inplace[1] = {x};
  is_status(adnn_plan_execute_multi(plan, in, 1, inplace, 1), ADNN_STATUS_SUCCESS,
            "the activation runs in place through the multi entry");
  adnn_memcpy(ctx, x, host, bytes, ADNN_MEMCPY_HOST_TO_DEVICE);
  void *shifted[1] = {(char *)x + 0};
  const void *in_shift[1] = {big};
  adnn_memcpy(ctx, big, host, bytes, ADNN_MEMCPY_HOST_TO_DEVICE);
  shifted[0] = (char *)big + 4 * sizeof(float);
  is_status(adnn_plan_execute_multi(plan, in_shift, 1, shifted, 1), ADNN_STATUS_BAD_PARAM,
            "an output overlapping the input at another address is refused");
  contains(adnn_last_error(), "overlaps inputs[0]", "  and said so");

  /* A destroyed plan. */
  adnn_plan_destroy(plan);
  is_status(adnn_plan_execute_multi(plan, in, 1, out, 1), ADNN_STATUS_BAD_PARAM_HANDLE,
            "a destroyed plan is refused");
  adnn_free(ctx, x);
  adnn_free(ctx, ya);
  adnn_free(ctx, yb);
  adnn_free(ctx, big);
  adnn_context_destroy(ctx);
  return tap_done();
}
