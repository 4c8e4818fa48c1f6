/*
 * The CUDA plugin's plan slots, called directly: the plugin is dlopen()ed
 * with a host table of this test (as the core does), and its plan entry
 * points are driven as far as they run on this machine.
 *
 *  - the table provides plan_create, plan_candidates, plan_select,
 *    plan_execute, plan_destroy and plan_describe;
 *  - for every op of the manifest (ADNN_OP_LIST: a new op needs a problem
 *    builder here before this test builds), a dtype the op does not
 *    support (F16; I32 for the ops whose manifest row takes F16) is refused with
 *    NOT_SUPPORTED before any device call (so also on a GPU machine), and an
 *    op kind the plugin does not know is refused;
 *  - the ops whose CUDA code runs F16 and BF16 (cuda_runs_lowp) pass the
 *    dtype check in both: without a
 *    GPU their plans fail on the device, with the CUDA error named;
 *  - when the probe says the machine has no usable GPU: plan_create of every
 *    op fails cleanly (no abort, no output) with a status other than SUCCESS
 *    and a message naming the vendor's error (cudaError...), and leaves
 *    nothing behind;
 *  - with a usable GPU: one conv2d plan is described once, its candidates are
 *    listed, and each is selected and executed on that one plan (what the
 *    core's tuner does), then the plugin's own choice.
 *
 * The kernels and the plan logic themselves are covered without a GPU by the
 * host emulator (t/cuda-emu.sh) and on a GPU by the conformance suite.
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

/* ---- one small problem per op ------------------------------------------- */

/* A packed row-major 4-D tensor. */
static adnn_tensor_desc tensor4(adnn_dtype dt, int64_t n, int64_t c, int64_t h, int64_t w) {
  adnn_tensor_desc t;
  memset(&t, 0, sizeof t);
  t.dtype = dt;
  t.rank = 4;
  t.dims[0] = n, t.dims[1] = c, t.dims[2] = h, t.dims[3] = w;
  t.strides[3] = 1, t.strides[2] = w, t.strides[1] = h * w, t.strides[0] = c * h * w;
  return t;
}

/* x [1, 2, 3, 3], w [2, 2, 3, 3], y [1, 2, 1, 1]. */
static int build_conv2d(adnn_plugin_conv2d *p, adnn_dtype dt) {
  p->x = tensor4(dt, 1, 2, 3, 3);
  p->w = tensor4(dt, 2, 2, 3, 3);
  p->y = tensor4(dt, 1, 2, 1, 1);
  p->N = 1, p->C = 2, p->H = 3, p->W = 3, p->K = 2, p->R = 3, p->S = 3, p->P = 1, p->Q = 1;
  p->groups = 1, p->Cg = 2, p->Kg = 2;
  p->stride_h = p->stride_w = p->dilation_h = p->dilation_w = 1;
  p->activation.kind = ADNN_ACTIVATION_IDENTITY;
  p->algorithm = ADNN_CONV2D_ALGO_AUTO;
  return 2;
}

static int build_conv2d_backward_data(adnn_plugin_conv2d_backward_data *p, adnn_dtype dt) {
  build_conv2d(&p->fwd, dt);
  p->fwd.struct_size = (uint32_t)sizeof p->fwd;
  p->algorithm = ADNN_CONV2D_ALGO_AUTO;
  return 2;
}

static int build_conv2d_backward_weights(adnn_plugin_conv2d_backward_weights *p,
                                         adnn_dtype dt) {
  build_conv2d(&p->fwd, dt);
  p->fwd.struct_size = (uint32_t)sizeof p->fwd;
  p->algorithm = ADNN_CONV2D_ALGO_AUTO;
  return 2;
}

static int build_pool2d(adnn_plugin_pool2d *p, adnn_dtype dt) {
  p->x = p->y = tensor4(dt, 1, 2, 3, 3);
  p->N = 1, p->C = 2, p->H = 3, p->W = 3, p->P = 3, p->Q = 3;
  p->kind = ADNN_POOL_MAX;
  p->kernel_h = p->kernel_w = p->stride_h = p->stride_w = 1;
  return 1;
}

static int build_activation(adnn_plugin_activation *p, adnn_dtype dt) {
  p->x = p->y = tensor4(dt, 1, 2, 3, 3);
  p->count = 18;
  p->activation.kind = ADNN_ACTIVATION_RELU;
  return 1;
}

static int build_softmax(adnn_plugin_softmax *p, adnn_dtype dt) {
  p->x = p->y = tensor4(dt, 1, 2, 3, 3);
  p->axis = 3;
  return 1;
}

static int build_batchnorm(adnn_plugin_batchnorm *p, adnn_dtype dt) {
  p->x = p->y = tensor4(dt, 1, 2, 3, 3);
  p->C = 2;
  p->epsilon = 1e-5;
  return 5;
}

static int build_norm(adnn_plugin_norm *p, adnn_dtype dt) {
  p->x = p->y = tensor4(dt, 1, 2, 3, 3);
  p->kind = ADNN_NORM_LAYER;
  p->norm_dims = 1;
  p->D = 3, p->rows = 6;
  p->epsilon = 1e-5;
  return 1;
}

static int build_batchnorm_training(adnn_plugin_batchnorm_training *p, adnn_dtype dt) {
  build_batchnorm(&p->fwd, dt);
  p->fwd.struct_size = (uint32_t)sizeof p->fwd;
  p->momentum = 0.1;
  p->count = 9;
  return 3;
}

static int build_batchnorm_backward(adnn_plugin_batchnorm_backward *p, adnn_dtype dt) {
  build_batchnorm(&p->fwd, dt);
  p->fwd.struct_size = (uint32_t)sizeof p->fwd;
  p->count = 9;
  return 5;
}

static int build_norm_backward(adnn_plugin_norm_backward *p, adnn_dtype dt) {
  build_norm(&p->fwd, dt);
  p->fwd.struct_size = (uint32_t)sizeof p->fwd;
  return 2;
}

static int build_binary(adnn_plugin_binary *p, adnn_dtype dt) {
  p->a = p->b = p->y = tensor4(dt, 1, 2, 3, 3);
  p->op = ADNN_BINARY_ADD;
  p->alpha = p->beta = 1.0;
  return 2;
}

static int build_reduce(adnn_plugin_reduce *p, adnn_dtype dt) {
  p->x = tensor4(dt, 1, 2, 3, 3);
  p->y = p->yk = tensor4(dt, 1, 2, 1, 1);
  p->yk.strides[2] = p->yk.strides[3] = 0;
  p->kind = ADNN_REDUCE_MEAN;
  p->axes = ADNN_REDUCE_AXIS(2) | ADNN_REDUCE_AXIS(3);
  p->keep_dims = 1;
  p->count = 9;
  p->outputs = 2;
  return 1;
}

/* The backward passes embed their forward problem. */
static int build_pool2d_backward(adnn_plugin_pool2d_backward *p, adnn_dtype dt) {
  p->fwd.struct_size = (uint32_t)sizeof p->fwd;
  build_pool2d(&p->fwd, dt);
  return 3;
}

static int build_activation_backward(adnn_plugin_activation_backward *p, adnn_dtype dt) {
  p->fwd.struct_size = (uint32_t)sizeof p->fwd;
  build_activation(&p->fwd, dt);
  return 2;
}

static int build_softmax_backward(adnn_plugin_softmax_backward *p, adnn_dtype dt) {
  p->fwd.struct_size = (uint32_t)sizeof p->fwd;
  build_softmax(&p->fwd, dt);
  return 2;
}

/* logits [3, 4] (labels [3] I32), mean: a scalar loss. */
static int build_softmax_cross_entropy(adnn_plugin_softmax_cross_entropy *p, adnn_dtype dt) {
  memset(&p->logits, 0, sizeof p->logits);
  p->logits.dtype = dt;
  p->logits.rank = 2;
  p->logits.dims[0] = 3, p->logits.dims[1] = 4;
  p->logits.strides[0] = 4, p->logits.strides[1] = 1;
  memset(&p->labels, 0, sizeof p->labels);
  p->labels.dtype = ADNN_DTYPE_I32;
  p->labels.rank = 1;
  p->labels.dims[0] = 3, p->labels.strides[0] = 1;
  memset(&p->loss, 0, sizeof p->loss);
  p->loss.dtype = dt;
  p->N = 3, p->C = 4;
  p->reduction = ADNN_LOSS_REDUCTION_MEAN;
  p->ignore_index = -100;
  return 2;
}

static int build_softmax_cross_entropy_backward(adnn_plugin_softmax_cross_entropy_backward *p,
                                                adnn_dtype dt) {
  p->fwd.struct_size = (uint32_t)sizeof p->fwd;
  build_softmax_cross_entropy(&p->fwd, dt);
  return 3;
}

/* SGD without momentum on one tensor of 5 elements: one gradient in, one
 * parameter tensor out. */
static const int64_t optimizer_sizes[1] = {5};
static int build_optimizer(adnn_plugin_optimizer *p, adnn_dtype dt) {
  p->kind = ADNN_OPTIMIZER_SGD;
  p->tensor_count = 1;
  p->sizes = optimizer_sizes;
  p->lr = 0.1;
  p->step = 1;
  p->dtype = dt;
  return 1;
}

/* Loss scaling: one tensor of optimizer_sizes[0] elements; its one input
 * is the scale. */
static int build_loss_scale(adnn_plugin_loss_scale *p, adnn_dtype dt) {
  p->kind = ADNN_LOSS_SCALE_UNSCALE;
  p->dtype = dt;
  p->tensor_count = 1;
  p->sizes = optimizer_sizes;
  return 1;
}

/* matmul: y [1, 1, 3, 4] = a [1, 1, 3, 2] @ b [1, 1, 2, 4] with a bias. */
static int build_matmul(adnn_plugin_matmul *p, adnn_dtype dt) {
  p->a = tensor4(dt, 1, 1, 3, 2);
  p->b = tensor4(dt, 1, 1, 2, 4);
  p->y = tensor4(dt, 1, 1, 3, 4);
  p->bias = p->y;
  p->bias.rank = 1;
  p->bias.dims[0] = 4;
  p->bias.strides[0] = 1;
  p->batch0 = p->batch1 = 1;
  p->M = 3;
  p->N = 4;
  p->K = 2;
  p->alpha = p->residual_scale = 1.0;
  p->has_bias = 1;
  return 3;
}

/* Attention: q, k, v, o [1, 2, 3, 4] packed, no lse, bias or key lengths. */
static int build_attention(adnn_plugin_attention *p, adnn_dtype dt) {
  adnn_tensor_desc *t[4] = {&p->q, &p->k, &p->v, &p->o};
  for (int i = 0; i < 4; i++) {
    memset(t[i], 0, sizeof *t[i]);
    t[i]->dtype = dt;
    t[i]->rank = 4;
    t[i]->dims[0] = 1, t[i]->dims[1] = 2, t[i]->dims[2] = 3, t[i]->dims[3] = 4;
    t[i]->strides[0] = 24, t[i]->strides[1] = 12, t[i]->strides[2] = 4, t[i]->strides[3] = 1;
  }
  memset(&p->lse, 0, sizeof p->lse);
  memset(&p->bias, 0, sizeof p->bias);
  memset(&p->key_lengths, 0, sizeof p->key_lengths);
  p->lse.dtype = p->bias.dtype = dt;
  p->key_lengths.dtype = ADNN_DTYPE_I32;
  p->B = 1, p->H = 2, p->Hkv = 2, p->group = 1, p->Sq = 3, p->Skv = 3, p->D = 4, p->Dv = 4;
  p->scale = 0.5;
  return 3;
}

/* Attention backward: the forward above with its lse [1, 2, 3] packed. */
static int build_attention_backward(adnn_plugin_attention_backward *p, adnn_dtype dt) {
  build_attention(&p->fwd, dt);
  p->fwd.struct_size = (uint32_t)sizeof p->fwd;
  p->fwd.has_lse = 1;
  p->fwd.lse.rank = 3;
  p->fwd.lse.dims[0] = 1, p->fwd.lse.dims[1] = 2, p->fwd.lse.dims[2] = 3;
  p->fwd.lse.strides[0] = 6, p->fwd.lse.strides[1] = 3, p->fwd.lse.strides[2] = 1;
  return 6;
}

/* reorder: x [1, 1, 3, 4] of dt to y of the same dims in F16 (F32 for an
 * F16 dt), NHWC. */
static int build_reorder(adnn_plugin_reorder *p, adnn_dtype dt) {
  p->x = tensor4(dt, 1, 1, 3, 4);
  p->y = tensor4(dt == ADNN_DTYPE_F16 ? ADNN_DTYPE_F32 : ADNN_DTYPE_F16, 1, 1, 3, 4);
  p->count = 12;
  return 1;
}

/* quantize: x [1, 1, 3, 4] F32 to I8, per tensor (dequantize: I8 to F32). */
static int build_quantize(adnn_plugin_quantize *p, adnn_dtype dt) {
  p->x = tensor4(dt, 1, 1, 3, 4);
  p->y = tensor4(ADNN_DTYPE_I8, 1, 1, 3, 4);
  p->count = 12;
  p->axis = -1;
  p->scale = 1.0f;
  p->channels = p->inner = 1;
  return 1;
}

static int build_dequantize(adnn_plugin_dequantize *p, adnn_dtype dt) {
  p->x = tensor4(dt, 1, 1, 3, 4);
  p->y = tensor4(ADNN_DTYPE_F32, 1, 1, 3, 4);
  p->count = 12;
  p->axis = -1;
  p->scale = 1.0f;
  p->channels = p->inner = 1;
  return 1;
}

/* Storage for any op's problem. */
typedef union any_problem {
#define PROBLEM_MEMBER_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags) \
  adnn_plugin_##name name;
  ADNN_OP_LIST(PROBLEM_MEMBER_)
#undef PROBLEM_MEMBER_
} any_problem;

/* Fills *op and *problem for `kind` in dtype dt (problem zeroed first). */
static void op_for(adnn_plugin_op *op, any_problem *problem, adnn_plugin_op_kind kind,
                   adnn_dtype dt) {
  memset(op, 0, sizeof *op);
  memset(problem, 0, sizeof *problem);
  op->struct_size = sizeof *op;
  op->kind = kind;
  op->dtype = dt;
  op->n_outputs = 1;
  op->problem = problem;
  op->problem_size = (uint32_t)adnn_plugin_problem_size(kind);
  op->workspace_limit = (uint64_t)256 << 20;
#define PROBLEM_BUILD_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags) \
  if (kind == ADNN_PLUGIN_OP_##NAME) {                                           \
    problem->name.struct_size = (uint32_t)sizeof problem->name;                  \
    op->n_inputs = build_##name(&problem->name, dt);                             \
  }
  ADNN_OP_LIST(PROBLEM_BUILD_)
#undef PROBLEM_BUILD_
}

/* The ops whose CUDA code runs F16 and BF16 (doc/cuda.md): for them the
 * dtype to refuse is I32, and F16/BF16 plans must get past the dtype check. */
static int cuda_runs_lowp(adnn_plugin_op_kind k) {
  switch (k) {
    case ADNN_PLUGIN_OP_MATMUL:
    case ADNN_PLUGIN_OP_ACTIVATION:
    case ADNN_PLUGIN_OP_BINARY:
    case ADNN_PLUGIN_OP_POOL2D:
    case ADNN_PLUGIN_OP_REDUCE:
    case ADNN_PLUGIN_OP_SOFTMAX:
    case ADNN_PLUGIN_OP_NORM:
    case ADNN_PLUGIN_OP_BATCHNORM:
    case ADNN_PLUGIN_OP_CONV2D:
      return 1;
    default:
      return 0;
  }
}

/* The manifest's kinds, in order. */
static const adnn_plugin_op_kind kinds[] = {
#define KIND_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags) ADNN_PLUGIN_OP_##NAME,
    ADNN_OP_LIST(KIND_)
#undef KIND_
};

/* Their manifest dtype masks, in the same order. */
static const uint32_t kind_dtypes[] = {
#define KIND_DTYPES_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags) (dtypes),
    ADNN_OP_LIST(KIND_DTYPES_)
#undef KIND_DTYPES_
};

/* ---- with a GPU: one plan per conv2d direction, every candidate selected on
 * it (forward, backward data, backward weights: each lists cuDNN's algorithms
 * and then our direct kernel) ---------------------------------------------- */

static void select_every_candidate(const adnn_plugin *t, adnn_plugin_op_kind kind) {
  const char *opname = adnn_plugin_op_name(kind);
  adnn_plugin_context *ctx = NULL;
  if (!ok(t->context_create(0, &ctx) == ADNN_STATUS_SUCCESS, "context on device 0")) {
    diag("  %s", last_error);
    return;
  }
  adnn_plugin_op op;
  any_problem problem;
  op_for(&op, &problem, kind, ADNN_DTYPE_F32);
  adnn_plugin_plan *plan = NULL;
  is_status(t->plan_create(ctx, &op, &plan), ADNN_STATUS_SUCCESS, "%s f32: plan_create", opname);
  if (plan == NULL) {
    diag("  %s", last_error);
    t->context_destroy(ctx);
    return;
  }
  adnn_plugin_candidate cands[16];
  int32_t count = 0;
  is_status(t->plan_candidates(plan, cands, 16, &count), ADNN_STATUS_SUCCESS, "plan_candidates");
  ok(count >= 1 && count <= 16, "%s lists 1..16 candidates (%d)", opname, (int)count);
  if (count >= 1)
    is_str(cands[count - 1].name, "direct", "%s: the last candidate is our direct kernel",
           opname);
  /* x has 18 elements, w 36, y 2: every buffer holds the largest, whichever
   * tensor of the direction it is. */
  void *buf[4] = {NULL, NULL, NULL, NULL};
  const size_t bytes[4] = {36 * 4, 36 * 4, 36 * 4, 0};
  int have_buffers = 1;
  for (int i = 0; i < 3; i++)
    if (t->mem_alloc(ctx, bytes[i], &buf[i]) != ADNN_STATUS_SUCCESS ||
        t->mem_set(ctx, buf[i], 0, bytes[i]) != ADNN_STATUS_SUCCESS)
      have_buffers = 0;
  ok(have_buffers, "scratch buffers");
  for (int32_t i = 0; i < count && i < 16; i++) {
    const char *name = "";
    size_t ws = 0;
    ok(cands[i].id > 0, "%s %s: id %d > 0", opname, cands[i].name, (int)cands[i].id);
    is_status(t->plan_select(plan, cands[i].id), ADNN_STATUS_SUCCESS,
              "%s %s: selected on the plan", opname, cands[i].name);
    t->plan_describe(plan, &name, &ws);
    ok(strncmp(name, cands[i].name, strlen(cands[i].name)) == 0, "%s %s: described as %s",
       opname, cands[i].name, name);
    ok(ws <= cands[i].workspace_bytes, "%s %s: holds %zu bytes of the %zu listed", opname,
       cands[i].name, ws, cands[i].workspace_bytes);
    if (have_buffers) {
      const void *in[2] = {buf[0], buf[1]};
      void *out[1] = {buf[2]};
      adnn_status st = t->plan_execute(plan, in, out);
      if (st == ADNN_STATUS_SUCCESS) st = t->synchronize(ctx);
      is_status(st, ADNN_STATUS_SUCCESS, "%s %s: executes", opname, cands[i].name);
    }
  }
  is_status(t->plan_select(plan, 0), ADNN_STATUS_SUCCESS, "%s: the plugin's own choice", opname);
  const char *name = "";
  size_t ws = 0;
  t->plan_describe(plan, &name, &ws);
  if (count >= 1)
    ok(strncmp(name, cands[0].name, strlen(cands[0].name)) == 0,
       "%s: its own choice is the first candidate (%s)", opname, name);
  is_status(t->plan_select(plan, 99999), ADNN_STATUS_NOT_SUPPORTED, "%s: an unknown candidate id",
            opname);
  t->plan_describe(plan, &name, &ws);
  ok(name[0] == '\0' && ws == 0, "%s: after a failed select the plan holds no algorithm", opname);
  t->plan_destroy(plan);
  for (int i = 0; i < 3; i++)
    if (buf[i]) t->mem_free(ctx, buf[i]);
  t->context_destroy(ctx);
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
  is_int((int)(t->abi_version >> 16), ADNN_PLUGIN_ABI_MAJOR, "the table is of plugin ABI %d",
         ADNN_PLUGIN_ABI_MAJOR);
  ok(ADNN_PLUGIN_HAS(t, plan_create), "plan_create is provided");
  ok(ADNN_PLUGIN_HAS(t, plan_candidates), "plan_candidates is provided");
  ok(ADNN_PLUGIN_HAS(t, plan_select), "plan_select is provided");
  ok(ADNN_PLUGIN_HAS(t, plan_execute), "plan_execute is provided");
  ok(ADNN_PLUGIN_HAS(t, plan_destroy), "plan_destroy is provided");
  ok(ADNN_PLUGIN_HAS(t, plan_describe), "plan_describe is provided");
  if (!ADNN_PLUGIN_HAS(t, plan_create) || !ADNN_PLUGIN_HAS(t, plan_select)) return tap_done();

  adnn_plugin_report report;
  memset(&report, 0, sizeof report);
  report.struct_size = sizeof report;
  t->probe(&report);
  const int has_gpu = report.state == ADNN_BACKEND_READY;
  diag("probe: state %d: %s", (int)report.state, report.reason);

  struct adnn_plugin_context ctx;
  memset(&ctx, 0, sizeof ctx);
  adnn_plugin_op op;
  any_problem problem;
  adnn_plugin_plan *plan = NULL;

  /* An op kind outside the manifest (an older plugin meeting a newer core). */
  op_for(&op, &problem, ADNN_PLUGIN_OP_LIMIT_, ADNN_DTYPE_F32);
  last_error[0] = '\0';
  is_status(t->plan_create(&ctx, &op, &plan), ADNN_STATUS_NOT_SUPPORTED,
            "an unknown op kind is refused as not supported");
  contains(last_error, "op kind", "the message names the op kind");
  ok(plan == NULL, "no plan is returned");

  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    const adnn_plugin_op_kind k = kinds[i];
    const char *name = adnn_plugin_op_name(k);
    plan = NULL;
    /* The ops whose manifest row takes F16 (matmul, the low-precision
     * forward ops: the CUDA plugin runs F16 for several of them) get I32,
     * no dtype of theirs; the others F16. reorder converts every dtype the
     * core accepts (the core checks its pairs), so it has no dtype to refuse. */
    const adnn_dtype bad = (kind_dtypes[i] & ADNN_OP_DTYPE(ADNN_DTYPE_F16)) ? ADNN_DTYPE_I32
                                                                             : ADNN_DTYPE_F16;
    const char *bad_name = adnn_plugin_dtype_name(bad);
    adnn_status st;
    if (k == ADNN_PLUGIN_OP_REORDER) {
      tap_skip("reorder: every dtype is one of its conversions (no dtype to refuse)");
    } else {
      op_for(&op, &problem, k, bad);
      last_error[0] = '\0';
      st = t->plan_create(&ctx, &op, &plan);
      is_status(st, ADNN_STATUS_NOT_SUPPORTED, "%s %s: refused as not supported", name, bad_name);
      contains(last_error, "not supported", "%s %s: the message says so", name, bad_name);
      contains(last_error, bad_name, "%s %s: the message names the dtype", name, bad_name);
      ok(plan == NULL, "%s %s: no plan is returned", name, bad_name);
    }
    if (has_gpu) {
      tap_skip("a usable GPU is present: the device-less failure is not checked here");
      continue;
    }
    /* dequantize's x is an integer type: I8 is its dtype to plan. */
    op_for(&op, &problem, k, k == ADNN_PLUGIN_OP_DEQUANTIZE ? ADNN_DTYPE_I8 : ADNN_DTYPE_F32);
    last_error[0] = '\0';
    st = t->plan_create(&ctx, &op, &plan);
    if (!ok(st != ADNN_STATUS_SUCCESS && plan == NULL && strstr(last_error, "cudaError") != NULL,
            "%s f32 without a device: fails cleanly with the CUDA error named", name))
      diag("  status %d, message: %s", (int)st, last_error);
    if (!cuda_runs_lowp(k) || k == ADNN_PLUGIN_OP_MATMUL) continue;
    static const adnn_dtype lowp[2] = {ADNN_DTYPE_F16, ADNN_DTYPE_BF16};
    for (int d = 0; d < 2; d++) {
      op_for(&op, &problem, k, lowp[d]);
      last_error[0] = '\0';
      st = t->plan_create(&ctx, &op, &plan);
      if (!ok(st != ADNN_STATUS_SUCCESS && plan == NULL && strstr(last_error, "cudaError") != NULL &&
                  strstr(last_error, "not supported") == NULL,
              "%s %s without a device: past the dtype check, fails on the device", name,
              adnn_plugin_dtype_name(lowp[d])))
        diag("  status %d, message: %s", (int)st, last_error);
    }
  }
  if (has_gpu && t->init && t->init() != ADNN_STATUS_SUCCESS) {
    ok(0, "init on a GPU machine: %s", last_error);
  } else if (has_gpu) {
    select_every_candidate(t, ADNN_PLUGIN_OP_CONV2D);
    select_every_candidate(t, ADNN_PLUGIN_OP_CONV2D_BACKWARD_DATA);
    select_every_candidate(t, ADNN_PLUGIN_OP_CONV2D_BACKWARD_WEIGHTS);
  }
  /* The core never dlclose()s a probed plugin; neither does this test. */
  return tap_done();
}
