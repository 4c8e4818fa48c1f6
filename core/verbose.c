/*
 * ADNN_VERBOSE: machine-parsable lines on stderr about plan creation and
 * execution (doc/verbose.md has the format). The lines go to stderr, not to
 * the log callback: they are a stream for a person or a script to collect
 * (like oneDNN's ONEDNN_VERBOSE, but stderr so that a program's own stdout
 * stays clean), independent of the log level, and each line is written with
 * one fprintf so that lines of different threads do not interleave.
 *
 * The problem field is written in adnn-bench's problem syntax
 * (tools/bench_problem.h, doc/bench.md), so that a line can be pasted into
 * `adnn-bench --dtype=D --layout=L PROBLEM`. That syntax has no field for a
 * conv2d's bias and activation or for non-packed strides; those are not
 * printed, and the layout field says "strided" when the strides are neither
 * packed NCHW nor packed NHWC.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/verbose.h"

atomic_int adnn__verbose_cached = -1;
static atomic_int header_printed;

int adnn__verbose_read(void) {
  const char *v = adnn__env_get(ADNN_ENV_VERBOSE);
  int level = 0;
  if (v != NULL) {
    if (strcmp(v, "0") == 0) level = 0;
    else if (strcmp(v, "1") == 0) level = 1;
    else if (strcmp(v, "2") == 0) level = 2;
    else adnn__env_warn_ignored(ADNN_ENV_VERBOSE, v, NULL);
  }
  int expected = -1;
  atomic_compare_exchange_strong(&adnn__verbose_cached, &expected, level);
  return atomic_load(&adnn__verbose_cached);
}

double adnn__verbose_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* ------------------------------------------------------------------------ */
/* Fields                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct line_buf {
  char buf[2048];
  size_t used;
} line_buf;

static void put(line_buf *l, const char *fmt, ...) ADNN_PRINTF(2, 3);
static void put(line_buf *l, const char *fmt, ...) {
  if (l->used >= sizeof l->buf) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(l->buf + l->used, sizeof l->buf - l->used, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  l->used += (size_t)n;
  if (l->used >= sizeof l->buf) l->used = sizeof l->buf - 1;
}

/* A CSV field: quoted (with "" for ") when it holds a comma, quote or
 * newline, as RFC 4180 reads. */
static void put_field(line_buf *l, const char *s) {
  put(l, ",");
  if (s == NULL) s = "";
  if (strpbrk(s, ",\"\n\r") == NULL) {
    put(l, "%s", s);
    return;
  }
  put(l, "\"");
  for (; *s; s++) {
    if (*s == '"') put(l, "\"\"");
    else if (*s == '\n' || *s == '\r') put(l, " ");
    else put(l, "%c", *s);
  }
  put(l, "\"");
}

static void put_dims(line_buf *l, const adnn_tensor_desc *t) {
  for (int i = 0; i < t->rank; i++) put(l, "%s%lld", i ? "x" : "", (long long)t->dims[i]);
}

static int packed(const adnn_tensor_desc *t, const int *order) {
  int64_t expect = 1;
  for (int i = t->rank - 1; i >= 0; i--) {
    int d = order ? order[i] : i;
    if (t->dims[d] != 1 && t->strides[d] != expect) return 0;
    expect *= t->dims[d];
  }
  return 1;
}

/* nchw, nhwc or strided, from the strides of the 4-d tensor x. */
static const char *image_layout(const adnn_tensor_desc *x) {
  static const int nhwc[4] = {0, 2, 3, 1};
  if (x->rank != 4 || packed(x, NULL)) return "nchw";
  return packed(x, nhwc) ? "nhwc" : "strided";
}

static const char *pool_word(adnn_pool_kind k) {
  return k == ADNN_POOL_MAX ? "max" : k == ADNN_POOL_AVG_EXCLUDE_PAD ? "avg_exclude" : "avg";
}

/* Image geometry in adnn-bench's (benchdnn's) order; dilation there counts
 * the extra dilation (0 = none). */
static void put_conv(line_buf *l, const adnn_plugin_conv2d *c) {
  if (c->groups != 1) put(l, "g%lld", (long long)c->groups);
  put(l, "mb%lldic%lldih%lldiw%lldoc%lldoh%lldow%lldkh%lldkw%lldsh%lldsw%lldph%lldpw%lld",
      (long long)c->N, (long long)c->C, (long long)c->H, (long long)c->W, (long long)c->K,
      (long long)c->P, (long long)c->Q, (long long)c->R, (long long)c->S,
      (long long)c->stride_h, (long long)c->stride_w, (long long)c->pad_top,
      (long long)c->pad_left);
  if (c->dilation_h != 1 || c->dilation_w != 1)
    put(l, "dh%llddw%lld", (long long)(c->dilation_h - 1), (long long)(c->dilation_w - 1));
  /* Asymmetric padding: adnn-bench's explicit end paddings (oh and ow are
   * then only checked). */
  if (c->pad_bottom != c->pad_top) put(l, "pb%lld", (long long)c->pad_bottom);
  if (c->pad_right != c->pad_left) put(l, "pr%lld", (long long)c->pad_right);
}

/* How many of alpha, beta an activation kind uses (the manifest's column). */
static int activation_params(adnn_activation_kind kind) {
  switch (kind) {
#define VERBOSE_ACT_PARAMS_(NAME, name, value, params, def) \
  case ADNN_ACTIVATION_##NAME:                              \
    return params;
    ADNN_ACTIVATION_LIST(VERBOSE_ACT_PARAMS_)
#undef VERBOSE_ACT_PARAMS_
    default: return 0;
  }
}

/* Each op's problem in adnn-bench syntax, and its layout when it has one.
 * One printer per manifest row: the table below is generated from
 * ADNN_OP_LIST, so an op without a printer does not compile. */
typedef void problem_printer(line_buf *p, const void *problem, const char **layout);

static void print_conv2d(line_buf *p, const void *problem, const char **layout) {
  const adnn_plugin_conv2d *c = problem;
  put_conv(p, c);
  *layout = image_layout(&c->x);
}

static void print_pool2d(line_buf *p, const void *problem, const char **layout) {
  const adnn_plugin_pool2d *q = problem;
  put(p, "pool:%s:mb%lldic%lldih%lldiw%lldkh%lldkw%lldsh%lldsw%lldph%lldpw%lld%s",
      pool_word(q->kind), (long long)q->N, (long long)q->C, (long long)q->H, (long long)q->W,
      (long long)q->kernel_h, (long long)q->kernel_w, (long long)q->stride_h,
      (long long)q->stride_w, (long long)q->pad_top, (long long)q->pad_left,
      q->ceil_mode ? ":ceil" : "");
  *layout = image_layout(&q->x);
}

static void print_activation(line_buf *p, const void *problem, const char **layout) {
  (void)layout;
  const adnn_plugin_activation *a = problem;
  put(p, "act:%s:", adnn_activation_name(a->activation.kind));
  /* Every parameter the kind uses is printed, zero included: adnn-bench has
   * its own defaults (elu's alpha is 1), so leaving one out could name a
   * different problem. */
  const int params = activation_params(a->activation.kind);
  if (params >= 1) put(p, "a%.17g:", a->activation.alpha);
  if (params >= 2) put(p, "b%.17g:", a->activation.beta);
  put_dims(p, &a->x);
}

static void print_softmax(line_buf *p, const void *problem, const char **layout) {
  (void)layout;
  const adnn_plugin_softmax *s = problem;
  put(p, "softmax:axis%d:%s", (int)s->axis, s->log ? "log:" : "");
  put_dims(p, &s->x);
}

static void print_norm(line_buf *p, const void *problem, const char **layout) {
  (void)layout;
  const adnn_plugin_norm *n = problem;
  int rms = n->kind == ADNN_NORM_RMS;
  put(p, "%s:", rms ? "rmsnorm" : "lnorm");
  put_dims(p, &n->x);
  put(p, ":nd%d%s%s:eps%.17g", (int)n->norm_dims, n->has_gain ? "" : ":nogain",
      rms ? (n->has_bias ? ":bias" : "") : (n->has_bias ? "" : ":nobias"), n->epsilon);
}

static void print_batchnorm(line_buf *p, const void *problem, const char **layout) {
  const adnn_plugin_batchnorm *b = problem;
  put(p, "bnorm:mb%lldic%lld", (long long)b->x.dims[0], (long long)b->C);
  if (b->x.rank == 4) put(p, "ih%lldiw%lld", (long long)b->x.dims[2], (long long)b->x.dims[3]);
  if (b->activation.kind != ADNN_ACTIVATION_IDENTITY)
    put(p, ":%s", adnn_activation_name(b->activation.kind));
  if (b->x.rank == 4) *layout = image_layout(&b->x);
}

/* Batch-norm training and backward, norm backward: benchdnn's direction
 * (FWD_D: forward with batch statistics; BWD_DW: the gradients of data and
 * weights) first, as adnn-bench's canonical form writes it for every op,
 * then the forward problem's string. */
static void print_batchnorm_training(line_buf *p, const void *problem, const char **layout) {
  const adnn_plugin_batchnorm_training *b = problem;
  put(p, "dir=FWD_D:");
  print_batchnorm(p, &b->fwd, layout);
  if (b->momentum != 0.1) put(p, ":mom%.17g", b->momentum);
  if (b->fwd.epsilon != 1e-5) put(p, ":eps%.17g", b->fwd.epsilon);
}

static void print_batchnorm_backward(line_buf *p, const void *problem, const char **layout) {
  const adnn_plugin_batchnorm_backward *b = problem;
  put(p, "dir=BWD_DW:");
  print_batchnorm(p, &b->fwd, layout);
}

static void print_norm_backward(line_buf *p, const void *problem, const char **layout) {
  const adnn_plugin_norm_backward *n = problem;
  put(p, "dir=BWD_DW:");
  print_norm(p, &n->fwd, layout);
}

static void print_binary(line_buf *p, const void *problem, const char **layout) {
  (void)layout;
  const adnn_plugin_binary *b = problem;
  put(p, "binary:%s:", adnn_binary_op_name(b->op));
  put_dims(p, &b->a);
  put(p, "+");
  put_dims(p, &b->b);
}

static void print_reduce(line_buf *p, const void *problem, const char **layout) {
  (void)layout;
  const adnn_plugin_reduce *r = problem;
  put(p, "reduce:%s:", adnn_reduce_kind_name(r->kind));
  put_dims(p, &r->x);
  put(p, ":axes");
  for (int i = 0, first = 1; i < r->x.rank; i++)
    if ((r->axes >> i) & 1u) {
      put(p, "%s%d", first ? "" : ",", i);
      first = 0;
    }
  if (r->keep_dims) put(p, ":keep");
}

static void put_shortest(line_buf *p, const char *key, double v);

/* The backward convolutions: adnn-bench's direction field (benchdnn's
 * dir=BWD_D, BWD_W without and BWD_WB with the bias gradient), then the
 * forward geometry and, when it is not 0, beta (adnn-bench's :beta<B>). */
static void print_conv2d_backward_data(line_buf *p, const void *problem, const char **layout) {
  const adnn_plugin_conv2d_backward_data *b = problem;
  put(p, "dir=BWD_D:");
  put_conv(p, &b->fwd);
  if (b->beta != 0.0) put_shortest(p, ":beta", b->beta);
  *layout = image_layout(&b->fwd.x);
}

static void print_conv2d_backward_weights(line_buf *p, const void *problem, const char **layout) {
  const adnn_plugin_conv2d_backward_weights *b = problem;
  put(p, "dir=%s:", b->fwd.has_bias ? "BWD_WB" : "BWD_W");
  put_conv(p, &b->fwd);
  if (b->beta != 0.0) put_shortest(p, ":beta", b->beta);
  *layout = image_layout(&b->fwd.x);
}

/* The backward passes of pooling, activations and softmax: adnn-bench's
 * direction field (benchdnn's dir=BWD_D), then the forward problem. */
static void print_pool2d_backward(line_buf *p, const void *problem, const char **layout) {
  const adnn_plugin_pool2d_backward *b = problem;
  put(p, "dir=BWD_D:");
  print_pool2d(p, &b->fwd, layout);
}

static void print_activation_backward(line_buf *p, const void *problem, const char **layout) {
  const adnn_plugin_activation_backward *b = problem;
  put(p, "dir=BWD_D:");
  print_activation(p, &b->fwd, layout);
}

static void print_softmax_backward(line_buf *p, const void *problem, const char **layout) {
  const adnn_plugin_softmax_backward *b = problem;
  put(p, "dir=BWD_D:");
  print_softmax(p, &b->fwd, layout);
}

/* Softmax cross-entropy: [dir=BWD_D:]xent:<reduction>:<N>x<C>[:ign<I>]. */
static void put_xent(line_buf *p, const adnn_plugin_softmax_cross_entropy *x, int backward) {
  put(p, "%sxent:%s:%lldx%lld", backward ? "dir=BWD_D:" : "",
      adnn_loss_reduction_name(x->reduction), (long long)x->N, (long long)x->C);
  if (x->ignore_index != -100) put(p, ":ign%lld", (long long)x->ignore_index);
}

static void print_softmax_cross_entropy(line_buf *p, const void *problem, const char **layout) {
  (void)layout;
  put_xent(p, problem, 0);
}

static void print_softmax_cross_entropy_backward(line_buf *p, const void *problem,
                                                 const char **layout) {
  (void)layout;
  put_xent(p, &((const adnn_plugin_softmax_cross_entropy_backward *)problem)->fwd, 1);
}

/* Attention: attention:b<B>h<H>hkv<Hkv>sq<Sq>skv<Skv>d<D>dv<Dv> then
 * :causal, :bias<d0>x<d1>x<d2>x<d3> (the bias's dims once broadcast to rank
 * 4, 1 where it repeats), :kl (key lengths), :nolse and :scale<s> (when not
 * 1 / sqrt(D)) as they apply; the layout is bhsd, bshd or strided (q's).
 * The backward prints "dir=BWD_D:" and then the forward's string
 * (put_attention with backward = 1). */
static void put_shortest(line_buf *p, const char *key, double v);
static int attention_layout_is(const adnn_tensor_desc *t, int bshd) {
  const int64_t H = t->dims[1], S = t->dims[2], D = t->dims[3];
  const int64_t want[4] = {bshd ? S * H * D : H * S * D, bshd ? D : S * D, bshd ? H * D : D, 1};
  for (int i = 0; i < 4; i++)
    if (t->dims[i] > 1 && t->strides[i] != want[i]) return 0;
  return 1;
}

static void put_attention(line_buf *p, const adnn_plugin_attention *a, int backward,
                          const char **layout) {
  put(p, "%sattention:b%lldh%lldhkv%lldsq%lldskv%lldd%llddv%lld", backward ? "dir=BWD_D:" : "",
      (long long)a->B, (long long)a->H, (long long)a->Hkv, (long long)a->Sq, (long long)a->Skv,
      (long long)a->D, (long long)a->Dv);
  if (a->causal) put(p, ":causal");
  if (a->has_bias) {
    put(p, ":bias");
    for (int i = 0; i < 4; i++)
      put(p, "%s%lld", i ? "x" : "", (long long)(a->bias.strides[i] == 0 ? 1 : a->bias.dims[i]));
  }
  if (a->has_key_lengths) put(p, ":kl");
  if (!a->has_lse && !backward) put(p, ":nolse");
  if (a->scale != 1.0 / sqrt((double)a->D)) put_shortest(p, ":scale", a->scale);
  *layout = attention_layout_is(&a->q, 0)   ? "bhsd"
            : attention_layout_is(&a->q, 1) ? "bshd"
                                            : "strided";
}

static void print_attention(line_buf *p, const void *problem, const char **layout) {
  put_attention(p, problem, 0, layout);
}

static void print_attention_backward(line_buf *p, const void *problem, const char **layout) {
  put_attention(p, &((const adnn_plugin_attention_backward *)problem)->fwd, 1, layout);
}

/* key, then v in the fewest digits that read back as exactly v. */
static void put_shortest(line_buf *p, const char *key, double v) {
  char text[40];
  for (int digits = 1; digits <= 17; digits++) {
    snprintf(text, sizeof text, "%.*g", digits, v);
    if (strtod(text, NULL) == v) break;
  }
  put(p, "%s%s", key, text);
}

/* The optimizer: optim:<kind>:<S0>x<S1>...:lr<lr> and every hyperparameter
 * that differs from adnn_optimizer_desc_init's default, then :model<dtype>
 * for F32 master weights with model copies. */
static void print_optimizer(line_buf *p, const void *problem, const char **layout) {
  (void)layout;
  const adnn_plugin_optimizer *o = problem;
  put(p, "optim:%s:", adnn_optimizer_kind_name(o->kind));
  for (int64_t i = 0; i < o->tensor_count; i++)
    put(p, "%s%lld", i ? "x" : "", (long long)o->sizes[i]);
  put_shortest(p, ":lr", o->lr);
  if (o->weight_decay != 0.0) put_shortest(p, ":wd", o->weight_decay);
  if (o->kind == ADNN_OPTIMIZER_SGD) {
    if (o->momentum != 0.0) put_shortest(p, ":mom", o->momentum);
    if (o->dampening != 0.0) put_shortest(p, ":damp", o->dampening);
    if (o->nesterov) put(p, ":nesterov");
  } else {
    if (o->beta1 != 0.9) put_shortest(p, ":b1", o->beta1);
    if (o->beta2 != 0.999) put_shortest(p, ":b2", o->beta2);
    if (o->epsilon != 1e-8) put_shortest(p, ":eps", o->epsilon);
  }
  if (o->model_dtype != 0) put(p, ":model%s", adnn_dtype_name(o->model_dtype));
}

/* Loss scaling: lscale:<scale|unscale>:<S0>x<S1>... */
static void print_loss_scale(line_buf *p, const void *problem, const char **layout) {
  (void)layout;
  const adnn_plugin_loss_scale *o = problem;
  put(p, "lscale:%s:", adnn_loss_scale_kind_name(o->kind));
  for (int64_t i = 0; i < o->tensor_count; i++)
    put(p, "%s%lld", i ? "x" : "", (long long)o->sizes[i]);
}

/* matmul: matmul:m<M>n<N>k<K>[:batch<B0>[x<B1>]][:bbatch][:ta][:tb][:alpha<A>]
 * [:bias][:res[:rs<S>]][:<activation>[:a<alpha>][:b<beta>]] (doc/bench.md).
 * ta and tb say that a or b is stored transposed (unit stride along its
 * rows); whether the residual is y itself is a property of the execution,
 * not of the plan, and is not printed. */
static void print_matmul(line_buf *p, const void *problem, const char **layout) {
  (void)layout;
  const adnn_plugin_matmul *m = problem;
  put(p, "matmul:m%lldn%lldk%lld", (long long)m->M, (long long)m->N, (long long)m->K);
  if (m->batch0 > 1)
    put(p, ":batch%lldx%lld", (long long)m->batch0, (long long)m->batch1);
  else if (m->batch1 > 1)
    put(p, ":batch%lld", (long long)m->batch1);
  if ((m->batch0 > 1 && m->b.strides[0] != 0) || (m->batch1 > 1 && m->b.strides[1] != 0))
    put(p, ":bbatch");
  if (m->K > 1 && m->a.strides[3] != 1) put(p, ":ta");
  if (m->N > 1 && m->b.strides[3] != 1) put(p, ":tb");
  if (m->alpha != 1.0) put_shortest(p, ":alpha", m->alpha);
  if (m->has_bias) put(p, ":bias");
  if (m->has_residual) {
    put(p, ":res");
    if (m->residual_scale != 1.0) put_shortest(p, ":rs", m->residual_scale);
  }
  if (m->activation.kind != ADNN_ACTIVATION_IDENTITY) {
    put(p, ":%s", adnn_activation_name(m->activation.kind));
    const int params = activation_params(m->activation.kind);
    if (params >= 1) put_shortest(p, ":a", m->activation.alpha);
    if (params >= 2) put_shortest(p, ":b", m->activation.beta);
  }
}

/* reorder: reorder:<dims>[:<nchw|nhwc>-><nchw|nhwc>][:<x dtype>-><y dtype>]
 * as adnn-bench reads it (doc/bench.md): nchw is packed (any rank), nhwc 4-D
 * channels last; a layout the grammar has no word for is reported as
 * "strided" in the layout column, and rank 0 as its one element ("1"). */
static const char *reorder_layout(const adnn_tensor_desc *t) {
  static const int nhwc[4] = {0, 2, 3, 1};
  if (packed(t, NULL)) return "nchw";
  if (t->rank == 4 && packed(t, nhwc)) return "nhwc";
  return "strided";
}

static void print_reorder(line_buf *p, const void *problem, const char **layout) {
  const adnn_plugin_reorder *r = problem;
  put(p, "reorder:");
  if (r->x.rank == 0) put(p, "1");
  put_dims(p, &r->x);
  const char *lx = reorder_layout(&r->x), *ly = reorder_layout(&r->y);
  if (strcmp(lx, "strided") == 0 || strcmp(ly, "strided") == 0)
    *layout = "strided";
  else if (strcmp(lx, "nchw") != 0 || strcmp(ly, "nchw") != 0)
    put(p, ":%s->%s", lx, ly);
  if (r->x.dtype != ADNN_DTYPE_F32 || r->y.dtype != ADNN_DTYPE_F32)
    put(p, ":%s->%s", adnn_plugin_dtype_name(r->x.dtype), adnn_plugin_dtype_name(r->y.dtype));
}

/* quantize / dequantize: <op>:<dims>:<x dtype>-><y dtype>[:axis<N>][:s<scale>:z<zp>],
 * adnn-bench's canonical form for them (tools/bench_problem.h); the layout
 * column says "strided" for a layout that is not packed, which adnn-bench
 * does not reproduce. */
static void print_quant(line_buf *p, const char *op, const adnn_tensor_desc *x,
                        const adnn_tensor_desc *y, int32_t axis, float scale, int32_t zp,
                        const char **layout) {
  put(p, "%s:", op);
  if (x->rank == 0) put(p, "1");
  put_dims(p, x);
  if (!packed(x, NULL) || !packed(y, NULL)) *layout = "strided";
  put(p, ":%s->%s", adnn_plugin_dtype_name(x->dtype), adnn_plugin_dtype_name(y->dtype));
  if (axis >= 0) {
    put(p, ":axis%d", (int)axis);
  } else {
    put_shortest(p, ":s", (double)scale);
    put(p, ":z%d", (int)zp);
  }
}

static void print_quantize(line_buf *p, const void *problem, const char **layout) {
  const adnn_plugin_quantize *q = problem;
  print_quant(p, "quantize", &q->x, &q->y, q->axis, q->scale, q->zero_point, layout);
}

static void print_dequantize(line_buf *p, const void *problem, const char **layout) {
  const adnn_plugin_dequantize *q = problem;
  print_quant(p, "dequantize", &q->x, &q->y, q->axis, q->scale, q->zero_point, layout);
}

static problem_printer *const problem_printers[ADNN_PLUGIN_OP_LIMIT_] = {
#define VERBOSE_PRINTER_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags) \
  [ADNN_PLUGIN_OP_##NAME] = print_##name,
    ADNN_OP_LIST(VERBOSE_PRINTER_)
#undef VERBOSE_PRINTER_
};

/* The problem in adnn-bench syntax and its layout. */
static void put_problem(line_buf *l, const adnn_plugin_op *op, const char **layout) {
  line_buf p = {.used = 0};
  p.buf[0] = '\0';
  *layout = "nchw";
  if ((unsigned)op->kind < ADNN_PLUGIN_OP_LIMIT_ && problem_printers[op->kind] != NULL)
    problem_printers[op->kind](&p, op->problem, layout);
  else
    put(&p, "%s", "unknown");
  put_field(l, p.buf);
}

static void put_backend(line_buf *l, const adnn_context *ctx) {
  char b[64];
  if (ctx->device == 0) snprintf(b, sizeof b, "%s", ctx->table->name);
  else snprintf(b, sizeof b, "%s:%d", ctx->table->name, ctx->device);
  put_field(l, b);
}

/* Writes the line, after the header the first time. */
static void emit(line_buf *l) {
  if (atomic_exchange(&header_printed, 1) == 0)
    fprintf(stderr, "adnn_verbose,event,op,problem,dtype,layout,backend,algorithm,reason,ms\n");
  fprintf(stderr, "%s\n", l->buf);
}

static void op_line(const char *event, const adnn_context *ctx, const adnn_plugin_op *op,
                    const char *algorithm, const char *reason, double ms) {
  line_buf l = {.used = 0};
  const char *layout;
  put(&l, "adnn_verbose,%s,%s", event, adnn_plugin_op_name(op->kind));
  put_problem(&l, op, &layout);
  put_field(&l, adnn_plugin_dtype_name(op->dtype));
  put_field(&l, layout);
  put_backend(&l, ctx);
  put_field(&l, algorithm);
  put_field(&l, reason);
  put(&l, ",%.4f", ms);
  emit(&l);
}

/* ------------------------------------------------------------------------ */
/* Hooks                                                                     */
/* ------------------------------------------------------------------------ */

void adnn__verbose_plan_created(const adnn_context *ctx, const adnn_plugin_op *op,
                                const char *algorithm, const char *reason, double ms) {
  op_line("create", ctx, op, algorithm, reason, ms);
}

adnn_status adnn__verbose_execute(adnn_context *ctx, const adnn_plugin_op *op,
                                  const char *algorithm, adnn_plugin_plan *plan,
                                  const void *const *inputs, void *const *outputs) {
  double t0 = adnn__verbose_now_ms();
  adnn_status st = ctx->table->plan_execute(plan, inputs, outputs);
  if (st == ADNN_STATUS_SUCCESS) st = ctx->table->synchronize(ctx->pctx);
  double ms = adnn__verbose_now_ms() - t0;
  op_line("exec", ctx, op, algorithm, st == ADNN_STATUS_SUCCESS ? "" : adnn_status_name(st), ms);
  return st;
}

adnn_status adnn__verbose_gemm(adnn_context *ctx, const adnn_plugin_gemm_args *a) {
  double t0 = adnn__verbose_now_ms();
  adnn_status st = ctx->table->gemm(ctx->pctx, a);
  if (st == ADNN_STATUS_SUCCESS) st = ctx->table->synchronize(ctx->pctx);
  double ms = adnn__verbose_now_ms() - t0;
  line_buf l = {.used = 0};
  char problem[128];
  snprintf(problem, sizeof problem, "gemm:m%lldn%lldk%lld%s%s", (long long)a->m, (long long)a->n,
           (long long)a->k, a->ta ? ":ta" : "", a->tb ? ":tb" : "");
  put(&l, "adnn_verbose,exec,%s", a->batch > 1 ? "gemm_batched" : "gemm");
  put_field(&l, problem);
  put_field(&l, adnn_plugin_dtype_name(a->dtype));
  put_field(&l, "row_major");
  put_backend(&l, ctx);
  /* The implementation the tuner chose for this shape (adnn__tune_gemm), or
   * "gemm" when the backend chose itself. */
  const char *impl = a->impl > 0 && ADNN_PLUGIN_HAS(ctx->table, gemm_impl_name)
                         ? ctx->table->gemm_impl_name(ctx->pctx, a->dtype, a->impl)
                         : NULL;
  put_field(&l, impl ? impl : "gemm");
  if (st != ADNN_STATUS_SUCCESS) put_field(&l, adnn_status_name(st));
  else if (a->batch > 1) {
    char b[48];
    snprintf(b, sizeof b, "batch %lld", (long long)a->batch);
    put_field(&l, b);
  } else put_field(&l, "");
  put(&l, ",%.4f", ms);
  emit(&l);
  return st;
}

static void tune_line(const adnn_context *ctx, const adnn_plugin_op *op, double start_ms,
                      int measured, size_t candidates, int done) {
  double ms = adnn__verbose_now_ms() - start_ms;
  char what[128];
  snprintf(what, sizeof what, "%s: measured %d of %zu candidate%s", done ? "done" : "tuning",
           measured, candidates, candidates == 1 ? "" : "s");
  adnn__log(ADNN_LOG_INFO, "core", "tuner: %s %s after %.0f ms", adnn_plugin_op_name(op->kind), what, ms);
  if (adnn__verbose_level() >= 1) op_line("tune", ctx, op, "", what, ms);
}

void adnn__verbose_tune_progress(const adnn_context *ctx, const adnn_plugin_op *op,
                                 double start_ms, int measured, size_t candidates, int *shown) {
  if (*shown || adnn__verbose_now_ms() - start_ms <= 1000.0) return;
  *shown = 1;
  tune_line(ctx, op, start_ms, measured, candidates, 0);
}

void adnn__verbose_tune_done(const adnn_context *ctx, const adnn_plugin_op *op, double start_ms,
                             int measured, size_t candidates, int shown) {
  if (shown) tune_line(ctx, op, start_ms, measured, candidates, 1);
}
