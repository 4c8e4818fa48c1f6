/*
 * The canonical problem string of an op, the first part of a performance
 * database key (see core/tuner.h). The format is stable: changing it orphans
 * every stored entry, so only append new fields, and only for new ops or
 * parameters, and say so here and in doc/tuning.md.
 *
 * Key format 2 (adnn 0.2, with the training ops): the op's own fields, then
 * the tuning options that change which algorithm may win, for every op:
 *   <op fields> ws=LIMIT det=0|1
 * where LIMIT is op->workspace_limit in bytes and det is op->deterministic.
 * Format 1 (adnn 0.1 and 0.2 before the training ops) had no such fields, so
 * an entry measured under a small workspace limit or in deterministic mode
 * answered for every setting. Format-1 entries are still read, kept when the
 * file is rewritten, exported and imported (the file format is unchanged:
 * "adnn-perfdb 1"), but they never match a format-2 key: each problem is
 * measured once more after the upgrade.
 *
 * conv2d, fields separated by one space:
 *   conv2d DTYPE x=T w=T y=T s=SH,SW p=TOP,BOTTOM,LEFT,RIGHT d=DH,DW g=G
 *   bias=T|nobias act=NAME[(ALPHA,BETA)] [prepacked] [y_dtype=DTYPE]
 * (y_dtype only for I8/U8 inputs, whose y may be I32, I8 or U8), where a tensor T is its dims joined by 'x', ':' and its strides joined by
 * ',' (in elements), e.g. 1x64x56x56:200704,3136,56,1. Activation parameters
 * appear only for the kinds that use them (leaky_relu and elu: alpha; clamp:
 * alpha and beta), printed with %.17g so that they round-trip exactly.
 * Example (format 2, on one line):
 *   conv2d f32 x=1x64x56x56:200704,3136,56,1 w=64x64x3x3:576,9,3,1
 *   y=1x64x56x56:200704,3136,56,1 s=1,1 p=1,1,1,1 d=1,1 g=1 nobias act=relu
 *   ws=268435456 det=0
 * The algorithm field of the descriptor is not part of the key. The key is
 * printed from the normalized problem (adnn_plugin_conv2d), whose fields
 * carry the descriptor's values unchanged.
 *
 * conv2d backward data and weights: the direction is the first word
 * (conv2d_bwd_d, conv2d_bwd_w), then the forward problem's fields as above
 * without the activation (a backward problem has none), then the options:
 *   conv2d_bwd_w f32 x=... w=... y=... s=1,1 p=1,1,1,1 d=1,1 g=1 bias=64:1
 *   ws=268435456 det=0
 * The tensors are the forward's (dx is x, dy is y, dw is w, db is bias).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/tuner.h"

typedef struct out_buf {
  char *buf;
  size_t size, used;
  int overflow;
} out_buf;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void put(out_buf *o, const char *fmt, ...) {
  if (o->overflow) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(o->buf + o->used, o->size - o->used, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= o->size - o->used) {
    o->overflow = 1;
    return;
  }
  o->used += (size_t)n;
}

static void put_tensor(out_buf *o, const char *name, const adnn_tensor_desc *t) {
  put(o, " %s=", name);
  for (int i = 0; i < t->rank; i++) put(o, "%s%lld", i ? "x" : "", (long long)t->dims[i]);
  put(o, ":");
  for (int i = 0; i < t->rank; i++) put(o, "%s%lld", i ? "," : "", (long long)t->strides[i]);
}

static void put_activation(out_buf *o, const adnn_activation *a) {
  put(o, " act=%s", adnn_activation_name(a->kind));
  if (a->kind == ADNN_ACTIVATION_LEAKY_RELU || a->kind == ADNN_ACTIVATION_ELU)
    put(o, "(%.17g)", a->alpha);
  else if (a->kind == ADNN_ACTIVATION_CLAMP)
    put(o, "(%.17g,%.17g)", a->alpha, a->beta);
}

/* conv2d, format 1 (see the top of this file). */
static void key_conv2d(out_buf *o, const void *problem) {
  const adnn_plugin_conv2d *d = problem;
  put(o, "conv2d %s", adnn_plugin_dtype_name(d->x.dtype));
  put_tensor(o, "x", &d->x);
  put_tensor(o, "w", &d->w);
  put_tensor(o, "y", &d->y);
  put(o, " s=%lld,%lld p=%lld,%lld,%lld,%lld d=%lld,%lld g=%lld", (long long)d->stride_h,
      (long long)d->stride_w, (long long)d->pad_top, (long long)d->pad_bottom,
      (long long)d->pad_left, (long long)d->pad_right, (long long)d->dilation_h,
      (long long)d->dilation_w, (long long)d->groups);
  if (d->has_bias) put_tensor(o, "bias", &d->bias);
  else put(o, " nobias");
  put_activation(o, &d->activation);
  /* A prepacked plan is measured without the weight reorder that a plain
   * plan repeats at every run (doc/tuning.md), so the two are different
   * problems for the tuner; keys without the mark stay as they were. */
  if (d->weights_prepacked) put(o, " prepacked");
  /* Integer inputs: y's dtype (I32 or a requantized I8/U8) changes the
   * epilogue's cost; the scales and zero points do not. */
  if (d->x.dtype == ADNN_DTYPE_I8 || d->x.dtype == ADNN_DTYPE_U8)
    put(o, " y_dtype=%s", adnn_plugin_dtype_name(d->y.dtype));
}

/* conv2d backward data and backward weights: the forward key's fields after
 * the direction ("conv2d_bwd_d", "conv2d_bwd_w"), so that a backward problem
 * never shares a forward one's entry; beta changes only the epilogue and is
 * left out, as the forward activation is (it is identity here). */
static void key_conv2d_backward(out_buf *o, const char *dir, const adnn_plugin_conv2d *d) {
  put(o, "%s %s", dir, adnn_plugin_dtype_name(d->x.dtype));
  put_tensor(o, "x", &d->x);
  put_tensor(o, "w", &d->w);
  put_tensor(o, "y", &d->y);
  put(o, " s=%lld,%lld p=%lld,%lld,%lld,%lld d=%lld,%lld g=%lld", (long long)d->stride_h,
      (long long)d->stride_w, (long long)d->pad_top, (long long)d->pad_bottom,
      (long long)d->pad_left, (long long)d->pad_right, (long long)d->dilation_h,
      (long long)d->dilation_w, (long long)d->groups);
  if (d->has_bias) put_tensor(o, "bias", &d->bias);
  else put(o, " nobias");
}

static void key_conv2d_backward_data(out_buf *o, const void *problem) {
  key_conv2d_backward(o, "conv2d_bwd_d", &((const adnn_plugin_conv2d_backward_data *)problem)->fwd);
}

static void key_conv2d_backward_weights(out_buf *o, const void *problem) {
  key_conv2d_backward(o, "conv2d_bwd_w",
                      &((const adnn_plugin_conv2d_backward_weights *)problem)->fwd);
}

/* matmul: the GEMM shape through its operands' dims and strides (which
 * also say which are transposed and how batches broadcast), the epilogue's
 * bias and residual (their presence, layout and, for the residual, whether
 * it is scaled at all: a scale of 0 is never read), and the activation.
 * alpha and a nonzero residual_scale change no algorithm's cost and are
 * left out. */
static void key_matmul(out_buf *o, const void *problem) {
  const adnn_plugin_matmul *d = problem;
  /* The inputs' dtype, and y's when it differs (low-precision matmuls:
   * F16/BF16 into F32, INT8 into I32 or requantized), since each pair runs
   * different code; a per-channel requantization reads one more vector. */
  put(o, "matmul %s", adnn_plugin_dtype_name(d->a.dtype));
  if (d->y.dtype != d->a.dtype) put(o, "->%s", adnn_plugin_dtype_name(d->y.dtype));
  if (d->has_requant_scales) put(o, " requant=channel");
  put_tensor(o, "a", &d->a);
  put_tensor(o, "b", &d->b);
  put_tensor(o, "y", &d->y);
  if (d->has_bias) put_tensor(o, "bias", &d->bias);
  else put(o, " nobias");
  if (d->has_residual && d->residual_scale != 0.0) put_tensor(o, "residual", &d->residual);
  else put(o, " noresidual");
  put_activation(o, &d->activation);
  if (d->weights_prepacked) put(o, " prepacked"); /* as conv2d's */
}

/* The key printer of each op that has one: every ADNN_OP_TUNABLE op of the
 * manifest needs an entry (t/tune-plan checks that tunable plans are stored). */
static void (*const key_printers[ADNN_PLUGIN_OP_LIMIT_])(out_buf *o, const void *problem) = {
    [ADNN_PLUGIN_OP_CONV2D] = key_conv2d,
    [ADNN_PLUGIN_OP_CONV2D_BACKWARD_DATA] = key_conv2d_backward_data,
    [ADNN_PLUGIN_OP_CONV2D_BACKWARD_WEIGHTS] = key_conv2d_backward_weights,
    [ADNN_PLUGIN_OP_MATMUL] = key_matmul,
};

size_t adnn__problem_key(const adnn_plugin_op *op, char *buf, size_t size) {
  if (buf == NULL || size == 0) return 0;
  buf[0] = '\0';
  if ((unsigned)op->kind >= ADNN_PLUGIN_OP_LIMIT_ || key_printers[op->kind] == NULL) return 0;
  out_buf o = {buf, size, 0, 0};
  key_printers[op->kind](&o, op->problem);
  /* The tuning options, for every op (format 2): the tuner excludes
   * candidates by them, so the fastest allowed candidate depends on them. */
  put(&o, " ws=%llu det=%d", (unsigned long long)op->workspace_limit, op->deterministic ? 1 : 0);
  if (o.overflow) {
    buf[0] = '\0';
    return 0;
  }
  return o.used;
}
