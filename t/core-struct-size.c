/* The struct_size rule of doc/versioning.md, with the current headers: a
 * caller-filled struct (every op descriptor, adnn_tune_options) must reach
 * the end of its first released layout; fields it lacks take their defaults;
 * a struct_size beyond what the library knows is accepted when the unknown
 * bytes are zero (a newer program that left the newer fields at their
 * defaults) and refused otherwise, naming the problem. (t/core-compat-0.1
 * runs a program built against the 0.1 headers.) */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "t/tap.h"

static adnn_context *ctx;

/* Every op: a descriptor one byte short of its first released layout (the
 * manifest's v1_end column) is refused with BAD_PARAM and a message that
 * names the struct and its initializer. */
static void too_small_everywhere(void) {
#define TOO_SMALL_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags)                   \
  {                                                                                             \
    adnn_##name##_desc d;                                                                       \
    adnn_##name##_desc_init(&d);                                                                \
    d.struct_size = offsetof(adnn_##name##_desc, v1_end) + sizeof d.v1_end - 1;                 \
    adnn_plan *plan = NULL;                                                                     \
    is_status(adnn_plan_create_##name(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,                   \
              #name ": struct_size one byte short of the first layout is refused");             \
    ok(strstr(adnn_last_error(), "adnn_" #name "_desc_init") != NULL,                           \
       #name ": the message names adnn_" #name "_desc_init: %s", adnn_last_error());           \
    ok(plan == NULL, #name ": no plan is written on failure");                                 \
    d.struct_size = 0;                                                                          \
    is_status(adnn_plan_create_##name(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,                   \
              #name ": struct_size 0 is refused");                                              \
  }
  ADNN_OP_LIST(TOO_SMALL_)
#undef TOO_SMALL_
}

/* A valid conv2d descriptor: x [1,2,4,4], w [3,2,3,3], y [1,3,2,2]. */
static void conv2d_example(adnn_conv2d_desc *d) {
  adnn_conv2d_desc_init(d);
  const int64_t xd[4] = {1, 2, 4, 4}, wd[4] = {3, 2, 3, 3}, yd[4] = {1, 3, 2, 2};
  adnn_tensor_desc_init(&d->x, ADNN_DTYPE_F32, 4, xd);
  adnn_tensor_desc_init(&d->w, ADNN_DTYPE_F32, 4, wd);
  adnn_tensor_desc_init(&d->y, ADNN_DTYPE_F32, 4, yd);
}

/* A descriptor followed by bytes a newer header would have fields for. */
typedef struct newer_conv2d {
  adnn_conv2d_desc d;
  unsigned char newer[24];
} newer_conv2d;

static void newer_programs(void) {
  newer_conv2d n;
  memset(&n, 0, sizeof n);
  conv2d_example(&n.d);
  adnn_plan *plan = NULL;
  is_status(adnn_plan_create_conv2d(ctx, &n.d, &plan), ADNN_STATUS_SUCCESS,
            "conv2d: the current layout is accepted");
  adnn_plan_destroy(plan);
  plan = NULL;

  n.d.struct_size = sizeof n;
  is_status(adnn_plan_create_conv2d(ctx, &n.d, &plan), ADNN_STATUS_SUCCESS,
            "conv2d: a larger struct_size whose unknown bytes are zero is accepted");
  adnn_plan_destroy(plan);
  plan = NULL;

  n.newer[5] = 1;
  is_status(adnn_plan_create_conv2d(ctx, &n.d, &plan), ADNN_STATUS_BAD_PARAM,
            "conv2d: a larger struct_size with a non-zero unknown byte is refused");
  ok(strstr(adnn_last_error(), "later adnn") != NULL && strstr(adnn_last_error(), "upgrade"),
     "the message says the program uses a newer field: %s", adnn_last_error());
  ok(plan == NULL, "no plan on failure");

  /* The output-dims helper follows the same rule. */
  int64_t dims[4];
  is_status(adnn_conv2d_output_dims(&n.d, dims), ADNN_STATUS_BAD_PARAM,
            "adnn_conv2d_output_dims refuses the non-zero unknown byte too");
  n.newer[5] = 0;
  is_status(adnn_conv2d_output_dims(&n.d, dims), ADNN_STATUS_SUCCESS,
            "and accepts the zero one");
  ok(dims[1] == 3 && dims[2] == 2 && dims[3] == 2, "output dims [1, 3, 2, 2]");
}

/* The tuning options: too small, larger with zero and non-zero tails; get
 * writes only what both sides know and says how much in struct_size. */
static void tune_options(void) {
  struct {
    adnn_tune_options o;
    unsigned char newer[16];
  } n;
  memset(&n, 0, sizeof n);
  adnn_tune_options_init(&n.o);
  n.o.mode = ADNN_TUNE_OFF;
  n.o.struct_size = offsetof(adnn_tune_options, deterministic);
  is_status(adnn_context_set_tune_options(ctx, &n.o), ADNN_STATUS_BAD_PARAM,
            "tune options short of the first layout are refused");
  n.o.struct_size = sizeof n;
  is_status(adnn_context_set_tune_options(ctx, &n.o), ADNN_STATUS_SUCCESS,
            "tune options with a zero unknown tail are accepted");
  n.newer[0] = 7;
  is_status(adnn_context_set_tune_options(ctx, &n.o), ADNN_STATUS_BAD_PARAM,
            "tune options with a non-zero unknown tail are refused");

  memset(&n, 0xab, sizeof n);
  n.o.struct_size = sizeof n;
  is_status(adnn_context_get_tune_options(ctx, &n.o), ADNN_STATUS_SUCCESS,
            "get with a larger struct");
  ok(n.o.mode == ADNN_TUNE_OFF, "the mode set before is read back");
  is_int(n.o.struct_size, sizeof(adnn_tune_options), "struct_size says how much was written");
  ok(n.newer[0] == 0xab && n.newer[15] == 0xab, "bytes the library does not know are untouched");
}

int main(void) {
  adnn_status st = adnn_context_create("cpu", &ctx);
  if (st != ADNN_STATUS_SUCCESS) {
    diag("%s", adnn_last_error());
    tap_bail("no cpu context");
  }
  too_small_everywhere();
  newer_programs();
  tune_options();
  adnn_context_destroy(ctx);
  return tap_done();
}
