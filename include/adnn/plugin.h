/*
 * adnn plugin ABI: the only interface between the core library and a backend.
 *
 * A plugin is a shared object that exports exactly one symbol,
 * ADNN_PLUGIN_ENTRY_SYMBOL ("adnn_plugin_entry"), of type adnn_plugin_entry_fn.
 * The core dlopen()s every "*.so" in the plugin search path with
 * RTLD_NOW | RTLD_LOCAL, calls the entry with its own ABI version and a host
 * table, and gets back a const adnn_plugin table.
 *
 * Rules (append-only, like SQLite's file format):
 *  - Both tables begin with abi_version and struct_size. The major version
 *    (abi_version >> 16) must match exactly; a mismatch is refused with both
 *    numbers in the reason. Minor versions only append fields.
 *  - A slot that is NULL, or lies past struct_size, is "not provided": the core
 *    answers ADNN_STATUS_NOT_SUPPORTED for it. Slots marked REQUIRED must exist.
 *  - Plugins never link against libadnn; everything they need from the core is in
 *    adnn_plugin_host.
 *  - The core validates every argument (NULLs, sizes, overflow, enum values)
 *    before calling a plugin, so plugins may assume well-formed input.
 *  - The core never dlclose()s a plugin that was probed (GPU runtimes do not
 *    survive unloading).
 *
 * History: ABI 1 (adnn 0.1) passed the public op descriptors and algorithm
 * names; ABI 2 (adnn 0.2) passes normalized problems, selects algorithms by
 * id and executes with arrays of outputs. The core refuses ABI 1 plugins with
 * both versions in the reason. ABI 2.1 added the mem_register slot; ABI 2.2
 * the training op kinds 9..19 and their problems (a plugin built against 2.1
 * does not know them and answers NOT_SUPPORTED through its kind table).
 *
 * Threading: probe and init are called once, under the core's loader lock.
 * Context and plan functions are called for one context from one thread at a
 * time; different contexts may be used concurrently, so plugin globals must be
 * thread-safe after init.
 */
#ifndef ADNN_PLUGIN_H
#define ADNN_PLUGIN_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <adnn.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ADNN_PLUGIN_ABI_MAJOR 2
#define ADNN_PLUGIN_ABI_MINOR 7
#define ADNN_PLUGIN_ABI_VERSION ((uint32_t)((ADNN_PLUGIN_ABI_MAJOR << 16) | ADNN_PLUGIN_ABI_MINOR))
#define ADNN_PLUGIN_ENTRY_SYMBOL "adnn_plugin_entry"

/* ------------------------------------------------------------------------ */
/* What the core gives a plugin                                              */
/* ------------------------------------------------------------------------ */

typedef struct adnn_plugin_host {
  uint32_t abi_version; /**< ADNN_PLUGIN_ABI_VERSION of the core */
  uint32_t struct_size; /**< sizeof(adnn_plugin_host) as the core knows it */
  /** Logs a message under the plugin's name (the core filters by level). */
  void (*log)(adnn_log_level level, const char *source, const char *fmt, ...)
#if defined(__GNUC__)
      __attribute__((format(printf, 3, 4)))
#endif
      ;
  /** Records the failure message for the calling thread's adnn_last_error()
   *  and returns `status`, so a plugin can write `return host->fail(...)`. */
  adnn_status (*fail)(adnn_status status, const char *fmt, ...)
#if defined(__GNUC__)
      __attribute__((format(printf, 2, 3)))
#endif
      ;
  /** Reads an environment variable (the core may override some in tests). */
  const char *(*getenv)(const char *name);
} adnn_plugin_host;

/* ------------------------------------------------------------------------ */
/* What a plugin reports when probed                                         */
/* ------------------------------------------------------------------------ */

#define ADNN_PLUGIN_MAX_PROPERTIES 24
#define ADNN_PLUGIN_MAX_DEVICES 16
#define ADNN_PLUGIN_KEY_LEN 32
#define ADNN_PLUGIN_VALUE_LEN 256
#define ADNN_PLUGIN_REASON_LEN 1024

/** One "key: value" fact in a probe report (fixed buffers, always terminated by
 *  the helpers below). */
typedef struct adnn_plugin_property {
  char key[ADNN_PLUGIN_KEY_LEN];
  char value[ADNN_PLUGIN_VALUE_LEN];
} adnn_plugin_property;

/** A usable device in a probe report: its index (the N of "backend:N"), name
 *  and properties (memory, compute capability, ISA...). */
typedef struct adnn_plugin_device {
  int32_t index;
  char name[ADNN_PLUGIN_VALUE_LEN];
  int32_t property_count;
  adnn_plugin_property properties[ADNN_PLUGIN_MAX_PROPERTIES];
} adnn_plugin_device;

/** Filled by probe. The core zeroes it and sets struct_size before the call. */
typedef struct adnn_plugin_report {
  uint32_t struct_size;
  /** 0 = unusable; otherwise higher is preferred by "auto" (cpu uses 10). */
  int32_t score;
  /** ADNN_BACKEND_READY, _UNAVAILABLE or _INCOMPATIBLE. */
  int32_t state;
  /** One or two sentences: what was found and, when not ready, how to fix it. */
  char reason[ADNN_PLUGIN_REASON_LEN];
  int32_t property_count;
  adnn_plugin_property properties[ADNN_PLUGIN_MAX_PROPERTIES];
  int32_t device_count;
  adnn_plugin_device devices[ADNN_PLUGIN_MAX_DEVICES];
} adnn_plugin_report;

/** Appends a formatted property to a property list; silently drops it when the
 *  list is full (reports are informational). */
static inline void adnn_plugin_property_addv(adnn_plugin_property *props, int32_t *count,
                                             const char *key, const char *fmt, va_list ap) {
  if (*count < 0 || *count >= ADNN_PLUGIN_MAX_PROPERTIES) return;
  adnn_plugin_property *p = &props[*count];
  snprintf(p->key, sizeof p->key, "%s", key);
  vsnprintf(p->value, sizeof p->value, fmt, ap);
  (*count)++;
}

/** Appends a formatted property to a report (dropped when the list is full). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline void adnn_plugin_report_property(adnn_plugin_report *r, const char *key,
                                               const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  adnn_plugin_property_addv(r->properties, &r->property_count, key, fmt, ap);
  va_end(ap);
}

/** Appends a formatted property to a device (dropped when the list is full). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline void adnn_plugin_device_property(adnn_plugin_device *d, const char *key,
                                               const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  adnn_plugin_property_addv(d->properties, &d->property_count, key, fmt, ap);
  va_end(ap);
}

/** Adds a device and returns it, or NULL when the list is full. */
static inline adnn_plugin_device *adnn_plugin_report_device(adnn_plugin_report *r, int index,
                                                            const char *name) {
  if (r->device_count < 0 || r->device_count >= ADNN_PLUGIN_MAX_DEVICES) return NULL;
  adnn_plugin_device *d = &r->devices[r->device_count++];
  memset(d, 0, sizeof *d);
  d->index = index;
  snprintf(d->name, sizeof d->name, "%s", name);
  return d;
}

/** Sets the report's reason (truncated to ADNN_PLUGIN_REASON_LEN). */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline void adnn_plugin_report_reason(adnn_plugin_report *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->reason, sizeof r->reason, fmt, ap);
  va_end(ap);
}

/* Names that plugins need in messages. Plugins never link libadnn, so these
 * are inline here; the core's public adnn_conv2d_algorithm_name() and
 * adnn_dtype_name() return the same strings. */
static inline const char *adnn_plugin_conv2d_algorithm_name(adnn_conv2d_algorithm algo) {
  switch (algo) {
#define ADNN_CONV2D_ALGO_CASE_(NAME, name, value, def) \
  ADNN_KIND_NAME_CASE_(ADNN_CONV2D_ALGO_, NAME, name, value)
    ADNN_CONV2D_ALGO_LIST(ADNN_CONV2D_ALGO_CASE_)
#undef ADNN_CONV2D_ALGO_CASE_
    default: break;
  }
  return "unknown";
}

/** The dtype's name ("f32"), or "unknown"; the same as adnn_dtype_name(). */
static inline const char *adnn_plugin_dtype_name(adnn_dtype dtype) {
  switch (dtype) {
    case ADNN_DTYPE_F32: return "f32";
    case ADNN_DTYPE_F64: return "f64";
    case ADNN_DTYPE_F16: return "f16";
    case ADNN_DTYPE_BF16: return "bf16";
    case ADNN_DTYPE_I8: return "i8";
    case ADNN_DTYPE_I32: return "i32";
    case ADNN_DTYPE_U8: return "u8";
  }
  return "unknown";
}

/* ------------------------------------------------------------------------ */
/* Operation arguments                                                       */
/* ------------------------------------------------------------------------ */

/** A (batched) row-major GEMM, already validated by the core: sizes >= 0 and
 *  not all trivial, leading dimensions large enough, spans without overflow,
 *  dtype F32 or F64. A single GEMM has batch 1 and zero strides. */
typedef struct adnn_plugin_gemm_args {
  uint32_t struct_size;
  adnn_dtype dtype;
  adnn_transpose ta, tb;
  int64_t m, n, k;
  double alpha, beta;
  const void *a;
  int64_t lda, stride_a;
  const void *b;
  int64_t ldb, stride_b;
  void *c;
  int64_t ldc, stride_c;
  int64_t batch;
  uint32_t flags; /**< the context's adnn_context_flag bits */
  /** ABI 2.5: which of the plugin's GEMM implementations runs the call: 0, the
   *  plugin's own choice; i >= 1, the implementation gemm_impl_name(dtype, i)
   *  names (the core measured them and chose it: doc/tuning.md, "The plan-less
   *  GEMM"). It sits in what was the struct's tail padding, so struct_size does
   *  not tell a 2.4 core from a 2.5 one: a plugin may read it because every core
   *  zeroes the whole struct before filling it (core/gemm.c), which 2.4 cores
   *  did too; an index the plugin does not know means its own choice. */
  int32_t impl;
} adnn_plugin_gemm_args;

/* ---- DNN operations ------------------------------------------------------ */
/*
 * The plugin ABI owns its problem format. The core validates a public op
 * descriptor and hands the plugin a NORMALIZED problem struct, one per op
 * (adnn_plugin_<name>, below), by pointer together with its size; plugins
 * never see the public descriptors. Each problem struct starts with
 * struct_size and only grows by appending fields whose zero value means the
 * behaviour before they existed, so a plugin built against an older
 * <adnn/plugin.h> reads the fields it knows (adnn_plugin_op_problem() copies
 * min(problem_size, sizeof) and zeroes the rest) and an older core's problem
 * is read with zeros for what it does not send.
 *
 * Every problem has been checked by the core: tensors valid, sizes >= 1,
 * shapes agree, output sizes computed, strides of outputs disjoint, one dtype
 * for all tensors, enum values valid, parameters finite. Tensor descriptors
 * keep the caller's strides (in elements); derived sizes are filled in so
 * that no plugin or kernel recomputes them.
 */

/** The kinds of DNN operation, one per row of ADNN_OP_LIST (adnn/op_list.h). */
typedef enum adnn_plugin_op_kind {
#define ADNN_PLUGIN_OP_KIND_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags) \
  ADNN_PLUGIN_OP_##NAME = value,
  ADNN_OP_LIST(ADNN_PLUGIN_OP_KIND_)
#undef ADNN_PLUGIN_OP_KIND_
  ADNN_PLUGIN_OP_LIMIT_ /**< one past the largest kind: the size of tables indexed by kind */
} adnn_plugin_op_kind;

/** conv2d: y = act(conv(x, w) + bias) (doc/ops.md). x [N, C, H, W],
 *  w [K, Cg, R, S], bias [K] (rank 0 when has_bias is 0), y [N, K, P, Q],
 *  in `groups` groups of Cg input and Kg output channels. Inputs {x, w} or
 *  {x, w, bias}. */
typedef struct adnn_plugin_conv2d {
  uint32_t struct_size;
  adnn_tensor_desc x, w, bias, y;
  int64_t N, C, H, W;
  int64_t K, R, S;
  int64_t P, Q;
  int64_t groups, Cg, Kg;
  int64_t stride_h, stride_w;
  int64_t pad_top, pad_bottom, pad_left, pad_right;
  int64_t dilation_h, dilation_w;
  int32_t has_bias;
  adnn_activation activation; /**< applied after the bias */
  /** AUTO, or the algorithm forced by the descriptor or ADNN_CONV2D_ALGO;
   *  plan_select(plan, 0) must run exactly this one or refuse. */
  adnn_conv2d_algorithm algorithm;
  /** 1: the w input of plan_execute is a buffer the plugin's weight-packing
   *  slot filled for this plan (its algorithm's packed form); 0: w in the
   *  layout of the descriptor's w. */
  int32_t weights_prepacked;
  /* ABI 2.6, integer inputs (adnn/ops.h): x.dtype I8 or U8, w.dtype I8,
   * bias I32, y I32 or I8/U8 requantized; acc = sum (x - x_zero_point) w
   * with the padding reading x_zero_point, then the bias, relu or identity,
   * then y = saturate(rne(v * s[k]) + y_zero_point), s[k] from
   * requant_scales (an input after the bias, has_requant_scales) or
   * requant_scale. Zero / unread for float problems (requant_scale 1,
   * requant_scales rank 0). */
  int32_t x_zero_point;
  int32_t y_zero_point;
  double requant_scale;
  int32_t has_requant_scales; /**< 0 or 1 */
  adnn_tensor_desc requant_scales;
} adnn_plugin_conv2d;

/** pool2d: x [N, C, H, W], y [N, C, P, Q] (P, Q as doc/ops.md defines them,
 *  ceil_mode's dropped last window already applied). Inputs {x}. */
typedef struct adnn_plugin_pool2d {
  uint32_t struct_size;
  adnn_tensor_desc x, y;
  int64_t N, C, H, W, P, Q;
  adnn_pool_kind kind;
  int32_t ceil_mode; /**< 0 or 1 */
  int64_t kernel_h, kernel_w;
  int64_t stride_h, stride_w;
  int64_t pad_top, pad_bottom, pad_left, pad_right;
} adnn_plugin_pool2d;

/** activation: y = act(x) elementwise; x and y have the same dims (any rank,
 *  `count` elements). Inputs {x}; y may be x (same layout). */
typedef struct adnn_plugin_activation {
  uint32_t struct_size;
  adnn_tensor_desc x, y;
  int64_t count;
  adnn_activation activation;
} adnn_plugin_activation;

/** softmax / log-softmax of x along `axis` (0..rank-1: the core resolved a
 *  negative axis); y has x's dims. Inputs {x}; y may be x. */
typedef struct adnn_plugin_softmax {
  uint32_t struct_size;
  adnn_tensor_desc x, y;
  int32_t axis;
  int32_t log; /**< 0 or 1 */
} adnn_plugin_softmax;

/** batch normalization (inference) over channels C = x.dims[1] of x
 *  [N, C, ...] (rank 2..8). Inputs {x, scale, shift, mean, var}, the last four
 *  packed vectors of C elements; y may be x. */
typedef struct adnn_plugin_batchnorm {
  uint32_t struct_size;
  adnn_tensor_desc x, y;
  int64_t C;
  double epsilon;
  adnn_activation activation;
} adnn_plugin_batchnorm;

/** layer / RMS normalization over the last norm_dims dims of x (D elements
 *  per row, `rows` rows). Inputs {x}, then gain and bias (packed vectors of D
 *  elements) when has_gain / has_bias; y may be x. */
typedef struct adnn_plugin_norm {
  uint32_t struct_size;
  adnn_tensor_desc x, y;
  adnn_norm_kind kind;
  int32_t norm_dims;
  int64_t D, rows;
  double epsilon;
  int32_t has_gain, has_bias; /**< 0 or 1 */
} adnn_plugin_norm;

/** binary: y = op(alpha * a, beta * b). a and b are already broadcast to y's
 *  rank and dims: missing leading dims added with size 1, size-1 dims given
 *  stride 0. Inputs {a, b}; y may be a or b when its layout is theirs. */
typedef struct adnn_plugin_binary {
  uint32_t struct_size;
  adnn_tensor_desc a, b, y;
  adnn_binary_op op;
  double alpha, beta;
} adnn_plugin_binary;

/** reduce: y = the reduction `kind` of x over the dims in `axes` (bit i: dim i
 *  of x). `y` is the output as the caller described it; `yk` is the same
 *  output seen with x's rank (every reduced dim of size 1 and stride 0, every
 *  kept dim with y's stride), so that one multi-index walks x and y. `count`
 *  elements of x reduce into each of the `outputs` elements of y. Inputs
 *  {x}. */
typedef struct adnn_plugin_reduce {
  uint32_t struct_size;
  adnn_tensor_desc x, y, yk;
  adnn_reduce_kind kind;
  uint32_t axes;
  int32_t keep_dims; /**< 0 or 1 */
  int64_t count, outputs;
} adnn_plugin_reduce;

/* ---- Training ops (doc/ops.md, "Training"). The core resolves the forward
 * descriptor of every backward op into the problem: the forward problem is
 * embedded (`fwd`, filled exactly as for the forward op), and the gradient
 * tensors have the forward tensors' layouts (dx is fwd.x, dy is fwd.y, ...).
 * A forward problem's activation is identity in a backward problem. */

/** conv2d backward data: dx = beta * dx + dconv/dx (dy, w). Inputs {dy, w};
 *  outputs {dx} (dx read when beta != 0). fwd.has_bias is 0. */
typedef struct adnn_plugin_conv2d_backward_data {
  uint32_t struct_size;
  adnn_plugin_conv2d fwd;
  double beta;
  adnn_conv2d_algorithm algorithm; /**< AUTO or forced, as adnn_plugin_conv2d's */
} adnn_plugin_conv2d_backward_data;

/** conv2d backward weights: dw = beta * dw + dconv/dw (x, dy) and, when
 *  fwd.has_bias, db = beta * db + sum of dy over N, P, Q. Inputs {x, dy};
 *  outputs {dw} or {dw, db}. */
typedef struct adnn_plugin_conv2d_backward_weights {
  uint32_t struct_size;
  adnn_plugin_conv2d fwd;
  double beta;
  adnn_conv2d_algorithm algorithm;
} adnn_plugin_conv2d_backward_weights;

/** pool2d backward. Inputs {x, y, dy}; outputs {dx} (fwd.x's layout). */
typedef struct adnn_plugin_pool2d_backward {
  uint32_t struct_size;
  adnn_plugin_pool2d fwd;
} adnn_plugin_pool2d_backward;

/** activation backward: dx = act'(x) * dy. Inputs {x, dy}; outputs {dx}
 *  (fwd.x's layout; dx may be dy when their layouts are the same). */
typedef struct adnn_plugin_activation_backward {
  uint32_t struct_size;
  adnn_plugin_activation fwd;
} adnn_plugin_activation_backward;

/** softmax / log-softmax backward. Inputs {y, dy}; outputs {dx} (fwd.x's
 *  layout; dx may be dy when their layouts are the same). */
typedef struct adnn_plugin_softmax_backward {
  uint32_t struct_size;
  adnn_plugin_softmax fwd;
} adnn_plugin_softmax_backward;

/** batch-norm training forward. Inputs {x, scale, shift}; outputs {y,
 *  saved_mean, saved_inv_std, running_mean, running_var} (the last two read
 *  and updated); `count` = elements per channel (>= 2). */
typedef struct adnn_plugin_batchnorm_training {
  uint32_t struct_size;
  adnn_plugin_batchnorm fwd;
  double momentum;
  int64_t count;
} adnn_plugin_batchnorm_training;

/** batch-norm backward. Inputs {x, dy, scale, saved_mean, saved_inv_std};
 *  outputs {dx, dscale, dshift}. dy has fwd.y's layout, dx fwd.x's. */
typedef struct adnn_plugin_batchnorm_backward {
  uint32_t struct_size;
  adnn_plugin_batchnorm fwd;
  int64_t count;
} adnn_plugin_batchnorm_backward;

/** layer / RMS norm backward. Inputs {x, dy} or {x, dy, gain}; outputs {dx},
 *  then dgain (fwd.has_gain) and dbias (fwd.has_bias). */
typedef struct adnn_plugin_norm_backward {
  uint32_t struct_size;
  adnn_plugin_norm fwd;
} adnn_plugin_norm_backward;

/** softmax cross-entropy: logits [N, C], labels [N] (I32), loss rank 0 or
 *  [N] (NONE). Inputs {logits, labels}; outputs {loss}. The op's dtype is the
 *  logits'. */
typedef struct adnn_plugin_softmax_cross_entropy {
  uint32_t struct_size;
  adnn_tensor_desc logits, labels, loss;
  int64_t N, C;
  adnn_loss_reduction reduction;
  int64_t ignore_index;
} adnn_plugin_softmax_cross_entropy;

/** softmax cross-entropy backward. Inputs {logits, labels, dloss}; outputs
 *  {dlogits} (fwd.logits's layout; dloss has fwd.loss's). */
typedef struct adnn_plugin_softmax_cross_entropy_backward {
  uint32_t struct_size;
  adnn_plugin_softmax_cross_entropy fwd;
} adnn_plugin_softmax_cross_entropy_backward;

/** The optimizer step over `tensor_count` packed vectors of sizes[i]
 *  elements. Inputs {grad_0..}; outputs {p_0..}, then {buf_0..} (SGD with
 *  momentum > 0) or {m_0.., v_0..} (ADAM, ADAMW). `sizes` stays valid until
 *  plan_destroy. lr and step are the values of the current step: the core
 *  changes them between executions (adnn_plan_set_optimizer_step), so a
 *  plugin reads them through op->problem when it executes, never from a copy. */
typedef struct adnn_plugin_optimizer {
  uint32_t struct_size;
  adnn_optimizer_kind kind;
  int64_t tensor_count;
  const int64_t *sizes;
  double lr;
  int64_t step;
  double weight_decay, momentum, dampening;
  int32_t nesterov;
  double beta1, beta2, epsilon;
  /** The element type of every tensor (F32 or F64), as adnn_plugin_op's
   *  dtype: the problem has no tensor descriptor to carry it, and kernels
   *  receive only the problem. */
  adnn_dtype dtype;
  /** Since ABI 2.7: 0, or F16 / BF16 for F32 master weights (dtype is then
   *  F32): the gradients are of model_dtype, and outputs T * (1 + states)
   *  onwards are the model copies w_i, each the round-to-nearest-even of
   *  the updated F32 parameter (adnn_optimizer_desc). */
  adnn_dtype model_dtype;
} adnn_plugin_optimizer;

/** loss_scale (since ABI 2.7): t_i *= factor over `tensor_count` packed
 *  vectors of sizes[i] elements of `dtype`, factor = scale (SCALE) or 1 /
 *  scale rounded to F32 (UNSCALE), products in F32 (F64 for F64) rounded to
 *  dtype; found_inf (1 element of dtype) set to 1 when a result is not
 *  finite, else left alone. Inputs {scale (1 F32 element)}; outputs {t_0..,
 *  found_inf}, all read and updated. `sizes` lives as long as the plan. */
typedef struct adnn_plugin_loss_scale {
  uint32_t struct_size;
  adnn_loss_scale_kind kind;
  adnn_dtype dtype;
  int64_t tensor_count;
  const int64_t *sizes;
} adnn_plugin_loss_scale;

/* ---- Transformer ops (doc/ops.md, "Transformer"). */

/** matmul: y = act(alpha * (a @ b) + bias + residual_scale * r). The core
 *  brings a, b, residual and y to rank 4 [B0, B1, rows, cols] (missing
 *  leading dims added with size 1; b's broadcast batch dims given stride 0),
 *  so kernels loop over batch0 x batch1 GEMMs of M x N x K. bias is [N]
 *  (rank 0 without has_bias); residual has y's dims (rank 0 without
 *  has_residual) and may be y itself. Inputs {a, b[, bias][, r]}; outputs
 *  {y}. */
typedef struct adnn_plugin_matmul {
  uint32_t struct_size;
  adnn_tensor_desc a, b, bias, residual, y;
  int64_t batch0, batch1, M, N, K;
  double alpha, residual_scale;
  int32_t has_bias, has_residual; /**< 0 or 1 */
  adnn_activation activation;
  /** 1: the b input of plan_execute is a buffer the plugin's weight-packing
   *  slot filled for this plan; 0: b in the layout of the descriptor's b. */
  int32_t weights_prepacked;
  /* ABI 2.4, low precision (adnn/ops.h): a.dtype is the input dtype (b's
   * too, or I8 under a U8 a); y.dtype the output's. With an I8/U8 y,
   * y = saturate(rne(acc * s[n]) + y_zero_point), s[n] from requant_scales
   * (an input after r, has_requant_scales) or requant_scale. Unread
   * otherwise (requant_scale 1, y_zero_point 0, requant_scales rank 0). */
  double requant_scale;
  int32_t y_zero_point;
  int32_t has_requant_scales; /**< 0 or 1 */
  adnn_tensor_desc requant_scales;
} adnn_plugin_matmul;

/** attention: q [B, H, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv],
 *  o [B, H, Sq, Dv], lse [B, H, Sq] (rank 0 without has_lse), bias brought
 *  to rank 4 [B, H, Sq, Skv] with stride 0 on its broadcast dims (rank 0
 *  without has_bias), key_lengths [B] I32 (rank 0 without has_key_lengths).
 *  `scale` is resolved (the core replaces the descriptor's 0 by
 *  1 / sqrt(D)); group = H / Hkv. Inputs {q, k, v[, bias][, key_lengths]};
 *  outputs {o[, lse]}. */
typedef struct adnn_plugin_attention {
  uint32_t struct_size;
  adnn_tensor_desc q, k, v, o, lse, bias, key_lengths;
  int64_t B, H, Hkv, group, Sq, Skv, D, Dv;
  double scale;
  int32_t causal, has_bias, has_key_lengths, has_lse; /**< 0 or 1 */
} adnn_plugin_attention;

/** attention backward. fwd.has_lse is 1. Inputs {q, k, v, o, do, lse[,
 *  bias][, key_lengths]} (do has fwd.o's layout); outputs {dq, dk, dv}
 *  (fwd.q's, fwd.k's and fwd.v's layouts). */
typedef struct adnn_plugin_attention_backward {
  uint32_t struct_size;
  adnn_plugin_attention fwd;
} adnn_plugin_attention_backward;

/* ---- Conversion (doc/ops.md, "Reorder"; plugin ABI 2.4). */

/** reorder: y = x converted to y.dtype, x and y of the same rank and dims
 *  (any x strides, y strides disjoint). The core allows the dtype pairs of
 *  any two of F32, F64, F16, BF16, and the same-dtype copies of I8, U8 and
 *  I32; adnn_plugin_op's dtype is x's. count is the number of elements.
 *  Inputs {x}; outputs {y}. */
typedef struct adnn_plugin_reorder {
  uint32_t struct_size;
  adnn_tensor_desc x, y;
  int64_t count;
} adnn_plugin_reorder;

/* ---- Quantization (doc/ops.md, "Quantize and dequantize"). */

/** quantize: y (I8/U8) = saturate(rne(x / scale) + zero_point), x F32;
 *  dequantize: y (F32) = (float)(x - zero_point) * scale, x I8/U8. x and y
 *  of the same dims (any x strides, y strides disjoint); count elements.
 *  axis < 0: per tensor with scale and zero_point, inputs {x}. axis >= 0:
 *  per channel, inputs {x, scales (F32 [channels]), zero_points (I32
 *  [channels])}; the channel of logical element i (row-major over dims) is
 *  (i / inner) % channels, inner the product of the dims after axis.
 *  adnn_plugin_op's dtype is x's. Outputs {y}. */
typedef struct adnn_plugin_quantize {
  uint32_t struct_size;
  adnn_tensor_desc x, y;
  int64_t count;
  int32_t axis;
  float scale;
  int32_t zero_point;
  int64_t channels, inner;
} adnn_plugin_quantize;

/** dequantize's problem: adnn_plugin_quantize's fields. */
typedef struct adnn_plugin_dequantize {
  uint32_t struct_size;
  adnn_tensor_desc x, y;
  int64_t count;
  int32_t axis;
  float scale;
  int32_t zero_point;
  int64_t channels, inner;
} adnn_plugin_dequantize;

/** sizeof(adnn_plugin_<name>) for an op kind, as this header knows it; 0 for
 *  an unknown kind. */
static inline size_t adnn_plugin_problem_size(adnn_plugin_op_kind kind) {
  switch (kind) {
#define ADNN_PLUGIN_PROBLEM_SIZE_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags) \
  case ADNN_PLUGIN_OP_##NAME:                                                              \
    return sizeof(adnn_plugin_##name);
    ADNN_OP_LIST(ADNN_PLUGIN_PROBLEM_SIZE_)
#undef ADNN_PLUGIN_PROBLEM_SIZE_
    default: break;
  }
  return 0;
}

/** The op's name ("conv2d"), or "unknown". */
static inline const char *adnn_plugin_op_name(adnn_plugin_op_kind kind) {
  switch (kind) {
#define ADNN_PLUGIN_OP_NAME_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags) \
  case ADNN_PLUGIN_OP_##NAME:                                                         \
    return #name;
    ADNN_OP_LIST(ADNN_PLUGIN_OP_NAME_)
#undef ADNN_PLUGIN_OP_NAME_
    default: break;
  }
  return "unknown";
}

/** A validated DNN operation, as plan_create receives it. The core keeps it
 *  and the problem it points to alive until plan_destroy, so a plugin may keep
 *  pointers to them in its plan. */
typedef struct adnn_plugin_op {
  uint32_t struct_size;     /**< sizeof(adnn_plugin_op) as the core knows it */
  adnn_plugin_op_kind kind;
  adnn_dtype dtype;         /**< the element type of every tensor of the op */
  int32_t n_inputs;         /**< input pointers plan_execute receives */
  int32_t n_outputs;        /**< output pointers plan_execute receives */
  uint32_t flags;           /**< the context's adnn_context_flag bits */
  const void *problem;      /**< the adnn_plugin_<name> of `kind` */
  uint32_t problem_size;    /**< its size as the core knows it */
  /** The largest workspace the plan may hold (the context's tuning option);
   *  the plugin's own choice (plan_select with 0) stays within it when it can. */
  uint64_t workspace_limit;
  /** 1: only algorithms that give bit-identical results run to run. */
  int32_t deterministic;
} adnn_plugin_op;

/** Copies the op's problem into *dst (`size` bytes: sizeof the plugin's
 *  adnn_plugin_<name>): min(problem_size, size) bytes, the rest zeroed, and
 *  dst's struct_size set to `size`. */
static inline void adnn_plugin_op_problem(const adnn_plugin_op *op, void *dst, size_t size) {
  size_t have = op->problem_size < size ? op->problem_size : size;
  memset(dst, 0, size);
  memcpy(dst, op->problem, have);
  *(uint32_t *)dst = (uint32_t)size;
}

/** The bytes from a tensor's first element to one past its last (strides in
 *  elements, >= 0): the span a plugin copies when its packed weight form is
 *  the weights as they are (ABI 2.4). 0 for an empty tensor. */
static inline size_t adnn_plugin_tensor_span_bytes(const adnn_tensor_desc *d) {
  size_t elem = d->dtype == ADNN_DTYPE_F64 ? 8
                : d->dtype == ADNN_DTYPE_F16 || d->dtype == ADNN_DTYPE_BF16 ? 2
                : d->dtype == ADNN_DTYPE_I8 || d->dtype == ADNN_DTYPE_U8 ? 1 : 4;
  size_t last = 0;
  for (int32_t i = 0; i < d->rank; i++) {
    if (d->dims[i] <= 0) return 0;
    last += (size_t)(d->dims[i] - 1) * (size_t)d->strides[i];
  }
  return (last + 1) * elem;
}

/** The weight tensor a plan of `kind` takes prepacked when its problem has
 *  weights_prepacked = 1 (conv2d's w, matmul's b; ABI 2.4), or NULL (another
 *  op, or the flag 0). */
static inline const adnn_tensor_desc *adnn_plugin_prepacked_weights(adnn_plugin_op_kind kind,
                                                                    const void *problem) {
  if (kind == ADNN_PLUGIN_OP_CONV2D) {
    const adnn_plugin_conv2d *c = (const adnn_plugin_conv2d *)problem;
    return c->weights_prepacked ? &c->w : NULL;
  }
  if (kind == ADNN_PLUGIN_OP_MATMUL) {
    const adnn_plugin_matmul *m = (const adnn_plugin_matmul *)problem;
    return m->weights_prepacked ? &m->b : NULL;
  }
  return NULL;
}

/** One algorithm a plugin can run for a plan (see plan_candidates). */
typedef struct adnn_plugin_candidate {
  /** The plugin's identifier for plan_select: > 0, stable for the plan. */
  int32_t id;
  /** Its stable name: reported by adnn_plan_algorithm and stored in the
   *  performance database (e.g. "winograd_f2x3", "cudnn:WINOGRAD"). */
  char name[64];
  size_t workspace_bytes;   /**< what plan_select(id) would allocate */
  int32_t deterministic;    /**< 1 if bit-identical run to run */
  /** 1 for a catch-all far slower than the others (a reference
   *  implementation): one run of it could use up the whole tuning budget, so
   *  the tuner measures it only in exhaustive mode or when no other candidate
   *  could run. */
  int32_t slow;
} adnn_plugin_candidate;

/** A plugin's plan; each plugin defines the struct. */
typedef struct adnn_plugin_plan adnn_plugin_plan;

/* ------------------------------------------------------------------------ */
/* What a plugin gives the core                                              */
/* ------------------------------------------------------------------------ */

/** A plugin's per-context state; each plugin defines the struct. */
typedef struct adnn_plugin_context adnn_plugin_context;

/** The table a plugin returns from adnn_plugin_entry (see the rules at the top). */
typedef struct adnn_plugin {
  uint32_t abi_version; /**< REQUIRED: ADNN_PLUGIN_ABI_VERSION the plugin was built with */
  uint32_t struct_size; /**< REQUIRED: sizeof(adnn_plugin) the plugin was built with */
  const char *name;     /**< REQUIRED: backend name, [a-z0-9_]+, e.g. "cpu" */
  const char *version;  /**< REQUIRED: the plugin's version string */

  /** REQUIRED. Cheap capability check: fills the report (state, score, reason,
   *  versions, devices). Must not abort when drivers or devices are missing, and
   *  should avoid creating device contexts. Called once per process. */
  adnn_status (*probe)(adnn_plugin_report *report);

  /** Optional. Called once before the first context is created on this plugin
   *  (only if probe said READY). A failure makes context creation fail. */
  adnn_status (*init)(void);

  /** REQUIRED. Creates the state for one device (index < reported devices). */
  adnn_status (*context_create)(int device, adnn_plugin_context **out);
  /** REQUIRED. Destroys it; pending work has been synchronized by the core. */
  void (*context_destroy)(adnn_plugin_context *ctx);
  /** REQUIRED. Waits for all queued work of the context. */
  adnn_status (*synchronize)(adnn_plugin_context *ctx);

  /** REQUIRED. Memory on the context's device; bytes > 0, ptr non-NULL. */
  adnn_status (*mem_alloc)(adnn_plugin_context *ctx, size_t bytes, void **ptr);
  /** REQUIRED. ptr was returned by mem_alloc on this context. */
  adnn_status (*mem_free)(adnn_plugin_context *ctx, void *ptr);
  /** REQUIRED. bytes > 0, pointers non-NULL, kind valid. */
  adnn_status (*mem_copy)(adnn_plugin_context *ctx, void *dst, const void *src, size_t bytes,
                          adnn_memcpy_kind kind);
  /** REQUIRED. bytes > 0, value in 0..255. */
  adnn_status (*mem_set)(adnn_plugin_context *ctx, void *ptr, int value, size_t bytes);

  /** Optional. A (batched) GEMM. */
  adnn_status (*gemm)(adnn_plugin_context *ctx, const adnn_plugin_gemm_args *args);

  /* DNN plans. A plan goes through create -> select -> execute... -> destroy:
   * create describes the problem once (layouts, library descriptors, kernel
   * geometry) and chooses nothing; select chooses an algorithm and sizes and
   * allocates its workspace (the "reshape" step), and may be called again to
   * switch algorithms, which is how the core's tuner measures the candidates
   * of one plan without describing the problem again; execute only runs.
   * Plans with plan_create must provide plan_select, plan_execute and
   * plan_destroy. Each plugin dispatches these by op->kind through its own
   * per-op table (see doc/plugins.md). */

  /** Optional. Creates a plan for a validated op. NOT_SUPPORTED (with a
   *  message) when this backend cannot run the op or dtype at all. The op and
   *  its problem stay valid until plan_destroy. Allocates no workspace. */
  adnn_status (*plan_create)(adnn_plugin_context *ctx, const adnn_plugin_op *op,
                             adnn_plugin_plan **out);
  /** Optional. Lists the algorithms that can run the plan's problem on this
   *  device, the plugin's own choice first; writes at most `max` entries and
   *  the total number to *count. An op with one algorithm may list one or leave
   *  the slot NULL (the core then never measures it). A forced algorithm
   *  (adnn_plugin_conv2d.algorithm) is listed alone or not at all. */
  adnn_status (*plan_candidates)(adnn_plugin_plan *plan, adnn_plugin_candidate *out,
                                 int32_t max, int32_t *count);
  /** Required with plan_create. Chooses the algorithm: `candidate` is an id from plan_candidates, or 0
   *  for the plugin's own choice (the forced algorithm, else its heuristic
   *  within op->workspace_limit and op->deterministic when it can). Sizes and
   *  allocates the workspace, releasing the previous choice's. NOT_SUPPORTED
   *  when the candidate (or forced algorithm) cannot run this problem;
   *  OUT_OF_MEMORY / DEVICE_OUT_OF_MEMORY. After a failure the plan has no
   *  algorithm until a select succeeds. */
  adnn_status (*plan_select)(adnn_plugin_plan *plan, int32_t candidate);
  /** Required with plan_create. Runs the plan: `inputs` has op->n_inputs non-NULL pointers, `outputs`
   *  op->n_outputs, in the order the op documents. Called only after a
   *  successful plan_select. Must not allocate. */
  adnn_status (*plan_execute)(adnn_plugin_plan *plan, const void *const *inputs,
                              void *const *outputs);
  /** Required with plan_create. Destroys the plan and its workspace. */
  void (*plan_destroy)(adnn_plugin_plan *plan);
  /** Optional. The selected algorithm's name (valid as long as the plan) and
   *  the workspace it holds, for adnn_plan_algorithm. */
  void (*plan_describe)(const adnn_plugin_plan *plan, const char **algorithm,
                        size_t *workspace_bytes);

  /** Optional. A stable identity of device `device` for the performance
   *  database: model, ISA or compute capability, core or SM count, and the
   *  versions of the libraries that change results (OpenBLAS; driver, cuDNN,
   *  cuBLAS). One line, no tabs. */
  void (*device_identity)(int device, char *buf, size_t size);

  /** Optional. A plugin-specific extra by name, for extensions that are not
   *  (yet) slots; NULL when the plugin has none of that name. The core calls it
   *  with names documented in doc/plugins.md only. */
  void *(*get_proc)(const char *name);

  /* ABI 2.0 ends here. New slots are appended below with a minor bump, each
   * marked with the minor version that added it. */

  /** Optional (ABI 2.1). Verifies that `bytes` at `ptr`, memory the
   *  application owns, is of `kind` (an adnn_memory_kind: 1 = memory the
   *  plugin's operations can use directly, 2 = host memory for the host side of
   *  mem_copy) and usable by this context, for adnn_memory_register. The core
   *  has checked ptr != NULL, bytes > 0, the kind, and that the range does not
   *  wrap or overlap memory the context knows. Returns SUCCESS, or BAD_PARAM
   *  with a reason recorded through the host's fail ("ptr is host memory, not
   *  memory of GPU 0"). Must not keep the pointer or change the memory. When
   *  the slot is absent the core answers NOT_SUPPORTED. */
  adnn_status (*mem_register)(adnn_plugin_context *ctx, void *ptr, size_t bytes, uint32_t kind);

  /** Optional (ABI 2.4). For a selected plan whose problem has
   *  weights_prepacked = 1 (conv2d, matmul): the bytes (>= 1) of the packed
   *  weight buffer plan_pack_weights writes, in the form of the selected
   *  algorithm. The core calls it after every plan_select of such a plan
   *  (the tuner's too). With the slot absent the core refuses
   *  weights_prepacked plans with NOT_SUPPORTED. */
  adnn_status (*plan_packed_weights_bytes)(adnn_plugin_plan *plan, size_t *bytes);
  /** Optional (ABI 2.4, with plan_packed_weights_bytes). Writes the packed
   *  form of w (conv2d's w, matmul's b, in the layout of the problem's
   *  tensor descriptor) into `packed` (plan_packed_weights_bytes bytes); both
   *  are memory of the context, checked by the core, and do not overlap.
   *  Ordered like plan_execute (a GPU plugin queues it on its stream). Must
   *  not allocate. plan_execute then receives `packed` as that input. */
  adnn_status (*plan_pack_weights)(adnn_plugin_plan *plan, const void *w, void *packed);
  /** Optional (ABI 2.5). The stable name of the plugin's GEMM implementation
   *  `impl` (1, 2, ...) for dtype, e.g. "engine" or "openblas"; NULL past the
   *  last one. When it names two or more for a dtype, the core measures them
   *  once per GEMM shape (on scratch buffers, within the context's tuning
   *  budget), remembers the winner in the performance database and passes its
   *  index in adnn_plugin_gemm_args.impl. The names must not change between
   *  calls; the core may call it from any thread. */
  const char *(*gemm_impl_name)(adnn_plugin_context *ctx, adnn_dtype dtype, int32_t impl);
} adnn_plugin;

/** The one exported symbol. `host_abi_version` is the core's
 *  ADNN_PLUGIN_ABI_VERSION; a plugin may return NULL if it cannot work with it
 *  (the core then reports the plugin as incompatible). */
typedef const adnn_plugin *(*adnn_plugin_entry_fn)(uint32_t host_abi_version,
                                                     const adnn_plugin_host *host);

/** Plugins mark their entry point with this so that it alone is exported. */
#if defined(__GNUC__)
#define ADNN_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define ADNN_PLUGIN_EXPORT
#endif

/** Whether the slot `field` is provided by a plugin table of size struct_size. */
#define ADNN_PLUGIN_HAS(plugin, field)                                                   \
  ((plugin)->struct_size >= offsetof(adnn_plugin, field) + sizeof((plugin)->field) &&   \
   (plugin)->field != NULL)

#ifdef __cplusplus
}
#endif

#endif /* ADNN_PLUGIN_H */
