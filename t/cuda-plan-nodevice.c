/*
 * The CUDA plugin's plan slots, exercised without a GPU: the plugin is
 * dlopen()ed directly with a host table of this test (as the core does), and
 * its plan entry points are called as far as they can run without a device.
 *
 *  - the table provides plan_create, plan_execute, plan_destroy and
 *    plan_describe;
 *  - a dtype the DNN ops do not support is refused with NOT_SUPPORTED before
 *    any device call (so also on a GPU machine);
 *  - when the probe says the machine has no usable GPU: a plan_create for every
 *    op kind fails cleanly (no abort, no output) with a status other than
 *    SUCCESS and a message naming the vendor's error (cudaError...), and
 *    leaves nothing behind.
 *
 * The device paths themselves are covered by t/cuda-ops and the conformance
 * suite on a GPU machine.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn/plugin.h>

#include "t/tap.h"

#ifndef CUDA_TEST_BUILDDIR
#define CUDA_TEST_BUILDDIR "."
#endif

/* The plugin's per-context state, as backends/cuda/cuda_internal.h defines it
 * (only the leading ints are read before the first device call). */
struct adnn_plugin_context {
  int device_index;
  int ordinal;
  void *stream;
  void *cublas;
  void *cudnn;
};

static char last_error[2048];

static void host_log(adnn_log_level level, const char *source, const char *fmt, ...) {
  (void)level, (void)source, (void)fmt;
}

static adnn_status host_fail(adnn_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return status;
}

static const char *host_getenv(const char *name) { return getenv(name); }

static void op_for(adnn_plugin_op *op, adnn_plugin_op_kind kind, adnn_dtype dt) {
  memset(op, 0, sizeof *op);
  op->struct_size = sizeof *op;
  op->kind = kind;
  op->n_inputs = 1;
  const int64_t d4[4] = {1, 2, 3, 3};
  adnn_tensor_desc t;
  memset(&t, 0, sizeof t);
  t.dtype = dt;
  t.rank = 4;
  for (int i = 0; i < 4; i++) t.dims[i] = d4[i];
  t.strides[3] = 1, t.strides[2] = 3, t.strides[1] = 9, t.strides[0] = 18;
  switch (kind) {
    case ADNN_PLUGIN_OP_CONV2D:
      adnn_conv2d_desc_init(&op->desc.conv2d);
      op->desc.conv2d.x = op->desc.conv2d.w = op->desc.conv2d.y = t;
      op->desc.conv2d.w.dims[0] = 2;
      op->desc.conv2d.y.dims[2] = op->desc.conv2d.y.dims[3] = 1;
      op->n_inputs = 2;
      break;
    case ADNN_PLUGIN_OP_POOL2D:
      adnn_pool2d_desc_init(&op->desc.pool2d);
      op->desc.pool2d.x = op->desc.pool2d.y = t;
      break;
    case ADNN_PLUGIN_OP_ACTIVATION:
      adnn_activation_desc_init(&op->desc.activation);
      op->desc.activation.x = op->desc.activation.y = t;
      break;
    case ADNN_PLUGIN_OP_SOFTMAX:
      adnn_softmax_desc_init(&op->desc.softmax);
      op->desc.softmax.x = op->desc.softmax.y = t;
      op->desc.softmax.axis = 3;
      break;
    case ADNN_PLUGIN_OP_BATCHNORM:
      adnn_batchnorm_desc_init(&op->desc.batchnorm);
      op->desc.batchnorm.x = op->desc.batchnorm.y = t;
      op->n_inputs = 5;
      break;
    case ADNN_PLUGIN_OP_NORM:
      adnn_norm_desc_init(&op->desc.norm);
      op->desc.norm.x = op->desc.norm.y = t;
      break;
    case ADNN_PLUGIN_OP_BINARY:
      adnn_binary_desc_init(&op->desc.binary);
      op->desc.binary.a = op->desc.binary.b = op->desc.binary.y = t;
      op->n_inputs = 2;
      break;
  }
}

int main(void) {
  const char *path = CUDA_TEST_BUILDDIR "/backends/cuda/.libs/adnn-cuda.so";
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    char reason[1200];
    snprintf(reason, sizeof reason, "cannot dlopen the CUDA plugin: %s", dlerror());
    return tap_skip_all(reason);
  }
  adnn_plugin_entry_fn entry = (adnn_plugin_entry_fn)dlsym(lib, ADNN_PLUGIN_ENTRY_SYMBOL);
  static const adnn_plugin_host host = {ADNN_PLUGIN_ABI_VERSION, sizeof(adnn_plugin_host),
                                        host_log, host_fail, host_getenv};
  const adnn_plugin *t = entry ? entry(ADNN_PLUGIN_ABI_VERSION, &host) : NULL;
  if (!ok(t != NULL, "the plugin's entry returns its table")) return tap_done();
  ok(ADNN_PLUGIN_HAS(t, plan_create), "plan_create is provided");
  ok(ADNN_PLUGIN_HAS(t, plan_execute), "plan_execute is provided");
  ok(ADNN_PLUGIN_HAS(t, plan_destroy), "plan_destroy is provided");
  ok(ADNN_PLUGIN_HAS(t, plan_describe), "plan_describe is provided");
  if (!ADNN_PLUGIN_HAS(t, plan_create)) return tap_done();

  adnn_plugin_report report;
  memset(&report, 0, sizeof report);
  report.struct_size = sizeof report;
  t->probe(&report);
  const int has_gpu = report.state == ADNN_BACKEND_READY;
  diag("probe: state %d: %s", (int)report.state, report.reason);

  struct adnn_plugin_context ctx;
  memset(&ctx, 0, sizeof ctx);
  static const char *names[] = {"", "conv2d", "pool2d", "activation", "softmax", "batchnorm",
                                "norm", "binary"};
  for (int k = ADNN_PLUGIN_OP_CONV2D; k <= ADNN_PLUGIN_OP_BINARY; k++) {
    adnn_plugin_op op;
    adnn_plugin_plan *plan = NULL;
    op_for(&op, (adnn_plugin_op_kind)k, ADNN_DTYPE_F16);
    last_error[0] = '\0';
    adnn_status st = t->plan_create(&ctx, &op, &plan);
    is_status(st, ADNN_STATUS_NOT_SUPPORTED, "%s f16: refused as not supported", names[k]);
    contains(last_error, "not supported", "%s f16: the message says so", names[k]);
    ok(plan == NULL, "%s f16: no plan is returned", names[k]);
    if (has_gpu) {
      tap_skip("a usable GPU is present: the device-less failure is not checked here");
      continue;
    }
    op_for(&op, (adnn_plugin_op_kind)k, ADNN_DTYPE_F32);
    last_error[0] = '\0';
    st = t->plan_create(&ctx, &op, &plan);
    if (!ok(st != ADNN_STATUS_SUCCESS && plan == NULL && strstr(last_error, "cudaError") != NULL,
            "%s f32 without a device: fails cleanly with the CUDA error named", names[k]))
      diag("  status %d, message: %s", (int)st, last_error);
  }
  /* The core never dlclose()s a probed plugin; neither does this test. */
  return tap_done();
}
