/*
 * adnn DNN operations (forward, backward and training): descriptors and the
 * plan lifecycle.
 *
 * Included by <adnn.h>; do not include it directly.
 *
 * Lifecycle (cuDNN's find-then-execute: all setup happens once, at creation):
 *   1. Fill an op descriptor. Each one starts with struct_size and has a
 *      static inline *_init() below that sets struct_size from this header and
 *      the defaults. Fields are only appended, and the library reads a
 *      descriptor "up to here" (doc/versioning.md): programs built against an
 *      older header keep working, with the defaults for fields they lack.
 *   2. adnn_plan_create_<op>(ctx, &desc, &plan): validates the descriptor
 *      (shapes, strides, parameters, dtype support on that backend), has the
 *      backend describe the problem, chooses an algorithm (heuristic, tuner or
 *      performance database) and allocates its workspace. All setup cost is
 *      paid here; the shapes are fixed for the plan's life.
 *   3. adnn_plan_execute(plan, inputs, n_inputs, output) as many times as
 *      wanted, with device pointers of the plan's context. It allocates nothing.
 *   4. adnn_plan_destroy(plan).
 *
 * Tensors are described by adnn_tensor_desc with LOGICAL dims in a fixed order
 * per op (e.g. [N, C, H, W] for images, [K, C/groups, R, S] for filters) and
 * strides in elements that give the PHYSICAL layout: packed NCHW and packed
 * NHWC are just two stride patterns of the same dims. Any non-negative strides
 * are accepted for inputs; an output's strides must not make two elements
 * share an address.
 *
 * Threading: a plan may be executed by one thread at a time on its context;
 * plans on different contexts may run concurrently. Creating plans is
 * thread-safe.
 *
 * The exact definition of every op (index rounding, padding, NaN handling) is in
 * doc/ops.md; every backend implements that definition, and the conformance
 * suite checks each against an independent oracle with the tolerances in
 * doc/numerics.md. The list of ops is the manifest in adnn/op_list.h.
 */
#ifndef ADNN_OPS_H
#define ADNN_OPS_H

#ifndef ADNN_H
#error "include <adnn.h>, not <adnn/ops.h>"
#endif

#include <string.h>

#include <adnn/op_list.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kind enums below are generated from the lists of adnn/op_list.h (whose
 * rows say what each enumerator computes); so are their name functions. */
#define ADNN_KIND_ENUM_(prefix, NAME, value) prefix##NAME = value,
#define ADNN_KIND_NAME_CASE_(prefix, NAME, name, value) \
  case prefix##NAME:                                   \
    return #name;

/** An executable operation bound to a context. Opaque. */
typedef struct adnn_plan adnn_plan;

/* ------------------------------------------------------------------------ */
/* Activations (standalone op, and fused epilogue of conv2d / batch norm)    */
/* ------------------------------------------------------------------------ */

/** Activation functions (ADNN_ACTIVATION_LIST: IDENTITY, RELU, LEAKY_RELU,
 *  ELU, CLAMP, SIGMOID, TANH, GELU, GELU_TANH, SILU, SOFTPLUS, HARDSWISH).
 *  Every one maps NaN to NaN. */
typedef enum adnn_activation_kind {
#define ADNN_ACTIVATION_ENUM_(NAME, name, value, params, def) \
  ADNN_KIND_ENUM_(ADNN_ACTIVATION_, NAME, value)
  ADNN_ACTIVATION_LIST(ADNN_ACTIVATION_ENUM_)
#undef ADNN_ACTIVATION_ENUM_
} adnn_activation_kind;

/** The activation's name ("leaky_relu"), or "unknown". Never NULL. */
static inline const char *adnn_activation_name(adnn_activation_kind kind) {
  switch (kind) {
#define ADNN_ACTIVATION_CASE_(NAME, name, value, params, def) \
  ADNN_KIND_NAME_CASE_(ADNN_ACTIVATION_, NAME, name, value)
    ADNN_ACTIVATION_LIST(ADNN_ACTIVATION_CASE_)
#undef ADNN_ACTIVATION_CASE_
    default: break;
  }
  return "unknown";
}

/** An activation with its parameters (alpha, beta: see adnn_activation_kind;
 *  unused ones are ignored). */
typedef struct adnn_activation {
  adnn_activation_kind kind;
  double alpha;
  double beta;
} adnn_activation;

/* ------------------------------------------------------------------------ */
/* conv2d forward                                                            */
/* ------------------------------------------------------------------------ */

/** Convolution algorithms (ADNN_CONV2D_ALGO_LIST: AUTO, REFERENCE,
 *  IM2COL_GEMM, GEMM_1X1, WINOGRAD_F2X3, DEPTHWISE_DIRECT, DIRECT). AUTO lets
 *  the backend choose (heuristic or tuner); anything else forces that
 *  algorithm, and plan creation fails with ADNN_STATUS_NOT_SUPPORTED when the
 *  backend does not have it or it cannot run this problem. The environment
 *  variable ADNN_CONV2D_ALGO (names as in adnn_conv2d_algorithm_name) forces
 *  an algorithm for descriptors that say AUTO. */
typedef enum adnn_conv2d_algorithm {
#define ADNN_CONV2D_ALGO_ENUM_(NAME, name, value, def) ADNN_KIND_ENUM_(ADNN_CONV2D_ALGO_, NAME, value)
  ADNN_CONV2D_ALGO_LIST(ADNN_CONV2D_ALGO_ENUM_)
#undef ADNN_CONV2D_ALGO_ENUM_
} adnn_conv2d_algorithm;

/** The algorithm's name ("im2col_gemm"), or "unknown". Never NULL. */
ADNN_API const char *adnn_conv2d_algorithm_name(adnn_conv2d_algorithm algo);

/** y = act(conv(x, w) + bias).
 *
 *  x: [N, C, H, W]; w: [K, C / groups, R, S]; bias: [K] (when has_bias);
 *  y: [N, K, P, Q] with
 *    P = floor((H + pad_top + pad_bottom - dilation_h * (R - 1) - 1) / stride_h) + 1
 *    Q = floor((W + pad_left + pad_right - dilation_w * (S - 1) - 1) / stride_w) + 1.
 *  Cross-correlation (the filter is not flipped), as in every DL framework.
 *  Execute inputs: {x, w}, then bias (has_bias), then requant_scales
 *  (has_requant_scales, integer inputs only).
 *
 *  dtypes (doc/ops.md, "conv2d dtypes"):
 *    F32, F64, F16, BF16: every tensor has x's dtype (F16/BF16: F32
 *      accumulation, y rounded once).
 *    I8 or U8 x with an I8 w (s8 x s8, u8 x s8; plugin ABI 2.6): the
 *      quantized convolution of inference. x_zero_point is the integer that
 *      represents 0 in x: the padding reads it, and
 *        acc[n, k, p, q] = sum over the taps of (x - x_zero_point) * w
 *      is exact (w is symmetric: its zero point is 0). bias is I32, added
 *      to acc; the activation is the identity or relu (max(acc + bias, 0),
 *      exact); then y is I32 (saturated) or I8/U8 requantized exactly as
 *      matmul's: y = saturate(round_half_even(v * s[k]) + y_zero_point),
 *      the product in F64, s[k] = requant_scales[k] (has_requant_scales:
 *      per output channel, the usual s_x * s_w[k] / s_y) or requant_scale.
 *      C / groups * R * S is at most 2^16, so that no I32 sum can
 *      overflow. */
typedef struct adnn_conv2d_desc {
  size_t struct_size;
  adnn_tensor_desc x, w, bias, y;
  int32_t has_bias;
  int64_t stride_h, stride_w;
  int64_t pad_top, pad_bottom, pad_left, pad_right;
  int64_t dilation_h, dilation_w;
  int64_t groups;
  adnn_activation activation; /**< fused epilogue, applied after the bias */
  adnn_conv2d_algorithm algorithm;
  /** 0 (the default): the execute input w is in w's layout. 1: it is a
   *  buffer that adnn_plan_pack_weights wrote for this plan (the chosen
   *  algorithm's packed weight form, adnn_plan_get_packed_weights_bytes
   *  bytes), so the weight reorder is paid once (doc/prepacking.md). */
  int32_t weights_prepacked;
  /* Integer inputs (plugin ABI 2.6; see the dtypes above). Read only when x
   * is I8 or U8: a float convolution must leave x_zero_point at 0 and
   * has_requant_scales unset. */
  int32_t x_zero_point;            /**< in x's range (0 by default) */
  int32_t y_zero_point;            /**< I8/U8 y: added after rounding; in y's range */
  double requant_scale;            /**< I8/U8 y: per-tensor scale (1 by default); finite, > 0 */
  int32_t has_requant_scales;      /**< I8/U8 y: 1 for per-channel scales */
  adnn_tensor_desc requant_scales; /**< [K] F32, finite, > 0: an execute input after bias */
} adnn_conv2d_desc;

/** Zeroes *d and sets struct_size, stride 1, dilation 1, groups 1, identity
 *  activation, no bias, ADNN_CONV2D_ALGO_AUTO, weights not prepacked, zero
 *  points 0 and requant_scale 1. */
static inline void adnn_conv2d_desc_init(adnn_conv2d_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  d->stride_h = d->stride_w = 1;
  d->dilation_h = d->dilation_w = 1;
  d->groups = 1;
  d->requant_scale = 1.0;
}

/** Computes y's dims [N, K, P, Q] for a conv2d descriptor whose x, w and
 *  parameters are filled. Returns ADNN_STATUS_BAD_PARAM (naming the problem)
 *  when the parameters are invalid or P or Q would be < 1. */
ADNN_API adnn_status adnn_conv2d_output_dims(const adnn_conv2d_desc *desc, int64_t dims[4]);

/** Creates a conv2d plan. Returns ADNN_STATUS_SUCCESS; ADNN_STATUS_BAD_PARAM_NULL;
 *  ADNN_STATUS_BAD_PARAM (wrong ranks, C not divisible by groups, filter
 *  channels != C / groups, K not divisible by groups, non-positive stride or
 *  dilation, negative padding, y of the wrong shape, overlapping y strides,
 *  mismatched dtypes, struct_size too small; with integer inputs: a dtype
 *  combination the rules above do not allow, an activation other than
 *  identity or relu, C / groups * R * S beyond 2^16, a zero point outside
 *  its tensor's range, a requant_scale not finite and > 0, requant_scales
 *  not [K] F32; with float inputs: a nonzero x_zero_point or
 *  has_requant_scales set); ADNN_STATUS_NOT_SUPPORTED (dtype
 *  or forced algorithm unsupported for this problem on this backend);
 *  ADNN_STATUS_OUT_OF_MEMORY / ADNN_STATUS_DEVICE_OUT_OF_MEMORY (workspace). */
ADNN_API adnn_status adnn_plan_create_conv2d(adnn_context *ctx, const adnn_conv2d_desc *desc,
                                             adnn_plan **plan);

/* ------------------------------------------------------------------------ */
/* pool2d forward                                                            */
/* ------------------------------------------------------------------------ */

/** Pooling kinds (ADNN_POOL_LIST: MAX, AVG_INCLUDE_PAD, AVG_EXCLUDE_PAD). */
typedef enum adnn_pool_kind {
#define ADNN_POOL_ENUM_(NAME, name, value, def) ADNN_KIND_ENUM_(ADNN_POOL_, NAME, value)
  ADNN_POOL_LIST(ADNN_POOL_ENUM_)
#undef ADNN_POOL_ENUM_
} adnn_pool_kind;

/** The pooling kind's name ("avg_exclude_pad"), or "unknown". Never NULL. */
static inline const char *adnn_pool_kind_name(adnn_pool_kind kind) {
  switch (kind) {
#define ADNN_POOL_CASE_(NAME, name, value, def) ADNN_KIND_NAME_CASE_(ADNN_POOL_, NAME, name, value)
    ADNN_POOL_LIST(ADNN_POOL_CASE_)
#undef ADNN_POOL_CASE_
    default: break;
  }
  return "unknown";
}

/** x: [N, C, H, W], y: [N, C, P, Q] with
 *    P = floor_or_ceil((H + pad_top + pad_bottom - kernel_h) / stride_h) + 1
 *  (ceil when ceil_mode), and with ceil_mode a last window that would start at
 *  or beyond H + pad_top (inside the bottom padding or past it) is dropped, as
 *  PyTorch does; likewise for Q. Padding must be at most half the kernel.
 *  Execute inputs: {x}. */
typedef struct adnn_pool2d_desc {
  size_t struct_size;
  adnn_tensor_desc x, y;
  adnn_pool_kind kind;
  int64_t kernel_h, kernel_w;
  int64_t stride_h, stride_w;
  int64_t pad_top, pad_bottom, pad_left, pad_right;
  int32_t ceil_mode;
} adnn_pool2d_desc;

/** Zeroes *d and sets struct_size, a 1x1 kernel, stride 1, no padding, max. */
static inline void adnn_pool2d_desc_init(adnn_pool2d_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  d->kernel_h = d->kernel_w = 1;
  d->stride_h = d->stride_w = 1;
}

/** Computes y's dims for a pool2d descriptor whose x and parameters are filled.
 *  Returns ADNN_STATUS_BAD_PARAM_NULL, ADNN_STATUS_BAD_PARAM (invalid parameters,
 *  padding above kernel/2, kernel larger than the padded input) or
 *  ADNN_STATUS_BAD_PARAM_OVERFLOW. */
ADNN_API adnn_status adnn_pool2d_output_dims(const adnn_pool2d_desc *desc, int64_t dims[4]);

/** Creates a pool2d plan. Statuses as adnn_plan_create_conv2d. */
ADNN_API adnn_status adnn_plan_create_pool2d(adnn_context *ctx, const adnn_pool2d_desc *desc,
                                             adnn_plan **plan);

/* ------------------------------------------------------------------------ */
/* activation forward                                                        */
/* ------------------------------------------------------------------------ */

/** y = act(x) elementwise; x and y have the same dims (any rank). y may be x
 *  (same pointer and same strides). Execute inputs: {x}. */
typedef struct adnn_activation_desc {
  size_t struct_size;
  adnn_tensor_desc x, y;
  adnn_activation activation;
} adnn_activation_desc;

/** Zeroes *d and sets struct_size (identity activation). */
static inline void adnn_activation_desc_init(adnn_activation_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
}

/** Creates an activation plan. Returns ADNN_STATUS_SUCCESS; ADNN_STATUS_BAD_PARAM_NULL;
 *  ADNN_STATUS_BAD_PARAM (x and y dims differ, overlapping y strides, unknown
 *  activation kind, non-finite alpha/beta, clamp with alpha > beta, dtypes differ,
 *  struct_size too small); ADNN_STATUS_NOT_SUPPORTED (dtype on this backend);
 *  ADNN_STATUS_OUT_OF_MEMORY. */
ADNN_API adnn_status adnn_plan_create_activation(adnn_context *ctx,
                                                 const adnn_activation_desc *desc,
                                                 adnn_plan **plan);

/* ------------------------------------------------------------------------ */
/* softmax / log-softmax                                                     */
/* ------------------------------------------------------------------------ */

/** y = softmax(x) (or log_softmax) along `axis` (negative counts from the end),
 *  computed stably (the slice maximum is subtracted first). Same dims for x and
 *  y. A slice that contains NaN or +inf gives NaN throughout, as in PyTorch;
 *  -inf entries give 0 (log-softmax: -inf); a slice of only -inf gives NaN.
 *  Execute inputs: {x}. */
typedef struct adnn_softmax_desc {
  size_t struct_size;
  adnn_tensor_desc x, y;
  int32_t axis;
  int32_t log; /**< non-zero for log-softmax */
} adnn_softmax_desc;

/** Zeroes *d and sets struct_size and axis -1 (the last one). */
static inline void adnn_softmax_desc_init(adnn_softmax_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  d->axis = -1;
}

/** Creates a softmax / log-softmax plan. Returns ADNN_STATUS_SUCCESS;
 *  ADNN_STATUS_BAD_PARAM_NULL; ADNN_STATUS_BAD_PARAM (rank 0, axis out of range,
 *  x and y dims differ, overlapping y strides, dtypes differ); ADNN_STATUS_NOT_SUPPORTED;
 *  ADNN_STATUS_OUT_OF_MEMORY. */
ADNN_API adnn_status adnn_plan_create_softmax(adnn_context *ctx, const adnn_softmax_desc *desc,
                                              adnn_plan **plan);

/* ------------------------------------------------------------------------ */
/* batch normalization (inference)                                           */
/* ------------------------------------------------------------------------ */

/** y = act(scale[c] * (x - mean[c]) / sqrt(var[c] + epsilon) + shift[c]) with c
 *  the index along dim 1 (channels) of x: [N, C, ...] (rank 2..8; NCHW and
 *  NHWC are strides). Execute inputs: {x, scale, shift, mean, var}, each
 *  parameter a packed vector of C elements of x's dtype. */
typedef struct adnn_batchnorm_desc {
  size_t struct_size;
  adnn_tensor_desc x, y;
  double epsilon;
  adnn_activation activation;
} adnn_batchnorm_desc;

/** Zeroes *d and sets struct_size and epsilon 1e-5. */
static inline void adnn_batchnorm_desc_init(adnn_batchnorm_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  d->epsilon = 1e-5;
}

/** Creates a batch-normalization (inference) plan. Returns ADNN_STATUS_SUCCESS;
 *  ADNN_STATUS_BAD_PARAM_NULL; ADNN_STATUS_BAD_PARAM (rank below 2, x and y dims
 *  differ, negative or non-finite epsilon, invalid activation, dtypes differ);
 *  ADNN_STATUS_NOT_SUPPORTED; ADNN_STATUS_OUT_OF_MEMORY. */
ADNN_API adnn_status adnn_plan_create_batchnorm(adnn_context *ctx,
                                                const adnn_batchnorm_desc *desc,
                                                adnn_plan **plan);

/* ------------------------------------------------------------------------ */
/* layer normalization and RMS normalization                                 */
/* ------------------------------------------------------------------------ */

/** Normalization kinds (ADNN_NORM_LIST: LAYER, RMS). */
typedef enum adnn_norm_kind {
#define ADNN_NORM_ENUM_(NAME, name, value, def) ADNN_KIND_ENUM_(ADNN_NORM_, NAME, value)
  ADNN_NORM_LIST(ADNN_NORM_ENUM_)
#undef ADNN_NORM_ENUM_
} adnn_norm_kind;

/** The normalization kind's name ("rms"), or "unknown". Never NULL. */
static inline const char *adnn_norm_kind_name(adnn_norm_kind kind) {
  switch (kind) {
#define ADNN_NORM_CASE_(NAME, name, value, def) ADNN_KIND_NAME_CASE_(ADNN_NORM_, NAME, name, value)
    ADNN_NORM_LIST(ADNN_NORM_CASE_)
#undef ADNN_NORM_CASE_
    default: break;
  }
  return "unknown";
}

/** Normalizes over the last `norm_dims` dims of x (D = their product) for every
 *  index of the leading dims. gain and bias are optional packed vectors of D
 *  elements. Execute inputs: {x}, {x, gain}, {x, gain, bias} or {x, bias}
 *  depending on has_gain / has_bias. */
typedef struct adnn_norm_desc {
  size_t struct_size;
  adnn_tensor_desc x, y;
  adnn_norm_kind kind;
  int32_t norm_dims; /**< 1..rank */
  double epsilon;
  int32_t has_gain;
  int32_t has_bias;
} adnn_norm_desc;

/** Zeroes *d and sets struct_size, layer norm over the last dim, epsilon 1e-5. */
static inline void adnn_norm_desc_init(adnn_norm_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  d->norm_dims = 1;
  d->epsilon = 1e-5;
}

/** Creates a layer- or RMS-normalization plan. Returns ADNN_STATUS_SUCCESS;
 *  ADNN_STATUS_BAD_PARAM_NULL; ADNN_STATUS_BAD_PARAM (unknown kind, norm_dims
 *  outside 1..rank, negative or non-finite epsilon, x and y dims differ, dtypes
 *  differ); ADNN_STATUS_NOT_SUPPORTED; ADNN_STATUS_OUT_OF_MEMORY. */
ADNN_API adnn_status adnn_plan_create_norm(adnn_context *ctx, const adnn_norm_desc *desc,
                                           adnn_plan **plan);

/* ------------------------------------------------------------------------ */
/* elementwise binary with broadcasting                                      */
/* ------------------------------------------------------------------------ */

/** Elementwise binary operations (ADNN_BINARY_LIST: ADD, SUB, MUL, DIV, MAX,
 *  MIN; MAX and MIN give NaN if either operand is NaN). */
typedef enum adnn_binary_op {
#define ADNN_BINARY_ENUM_(NAME, name, value, def) ADNN_KIND_ENUM_(ADNN_BINARY_, NAME, value)
  ADNN_BINARY_LIST(ADNN_BINARY_ENUM_)
#undef ADNN_BINARY_ENUM_
} adnn_binary_op;

/** The binary operation's name ("add"), or "unknown". Never NULL. */
static inline const char *adnn_binary_op_name(adnn_binary_op op) {
  switch (op) {
#define ADNN_BINARY_CASE_(NAME, name, value, def) ADNN_KIND_NAME_CASE_(ADNN_BINARY_, NAME, name, value)
    ADNN_BINARY_LIST(ADNN_BINARY_CASE_)
#undef ADNN_BINARY_CASE_
    default: break;
  }
  return "unknown";
}

/** y = op(alpha * a, beta * b) with NumPy broadcasting: dims are aligned from
 *  the right, a missing or size-1 dim of a or b is repeated, and y's dims are
 *  the broadcast shape. Execute inputs: {a, b}. y may alias a or b when it has
 *  the same dims and strides as that operand. */
typedef struct adnn_binary_desc {
  size_t struct_size;
  adnn_tensor_desc a, b, y;
  adnn_binary_op op;
  double alpha, beta;
} adnn_binary_desc;

/** Zeroes *d and sets struct_size, ADNN_BINARY_ADD, alpha = beta = 1. */
static inline void adnn_binary_desc_init(adnn_binary_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  d->alpha = d->beta = 1.0;
}

/** Creates a broadcasting elementwise plan. Returns ADNN_STATUS_SUCCESS;
 *  ADNN_STATUS_BAD_PARAM_NULL; ADNN_STATUS_BAD_PARAM (a or b does not broadcast to
 *  y, y is not exactly the broadcast shape, unknown op, non-finite alpha/beta,
 *  overlapping y strides, dtypes differ); ADNN_STATUS_NOT_SUPPORTED;
 *  ADNN_STATUS_OUT_OF_MEMORY. */
ADNN_API adnn_status adnn_plan_create_binary(adnn_context *ctx, const adnn_binary_desc *desc,
                                             adnn_plan **plan);

/* ------------------------------------------------------------------------ */
/* reduction over axes                                                       */
/* ------------------------------------------------------------------------ */

/** Reductions (ADNN_REDUCE_LIST: SUM, MEAN, MAX, MIN; MAX and MIN give NaN
 *  when any reduced element is NaN). */
typedef enum adnn_reduce_kind {
#define ADNN_REDUCE_ENUM_(NAME, name, value, def) ADNN_KIND_ENUM_(ADNN_REDUCE_, NAME, value)
  ADNN_REDUCE_LIST(ADNN_REDUCE_ENUM_)
#undef ADNN_REDUCE_ENUM_
} adnn_reduce_kind;

/** The reduction's name ("mean"), or "unknown". Never NULL. */
static inline const char *adnn_reduce_kind_name(adnn_reduce_kind kind) {
  switch (kind) {
#define ADNN_REDUCE_CASE_(NAME, name, value, def) ADNN_KIND_NAME_CASE_(ADNN_REDUCE_, NAME, name, value)
    ADNN_REDUCE_LIST(ADNN_REDUCE_CASE_)
#undef ADNN_REDUCE_CASE_
    default: break;
  }
  return "unknown";
}

/** The bit of dim i in adnn_reduce_desc.axes. */
#define ADNN_REDUCE_AXIS(i) (1u << (unsigned)(i))

/** y = the reduction `kind` of x over the dims whose bits are set in `axes`
 *  (ADNN_REDUCE_AXIS(i) for dim i of x; at least one, all below x's rank).
 *  With keep_dims, y has x's rank and size 1 along every reduced dim;
 *  without, the reduced dims are removed (reducing every dim gives a rank-0
 *  y). Sums and means accumulate in double and round once. Any strides.
 *  Execute inputs: {x}. */
typedef struct adnn_reduce_desc {
  size_t struct_size;
  adnn_tensor_desc x, y;
  adnn_reduce_kind kind;
  uint32_t axes;
  int32_t keep_dims;
} adnn_reduce_desc;

/** Zeroes *d and sets struct_size (a sum over no axis yet: set axes). */
static inline void adnn_reduce_desc_init(adnn_reduce_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
}

/** Creates a reduction plan. Returns ADNN_STATUS_SUCCESS;
 *  ADNN_STATUS_BAD_PARAM_NULL; ADNN_STATUS_BAD_PARAM (unknown kind, no axis or
 *  an axis beyond x's rank, y not of the reduced shape, overlapping y
 *  strides, dtypes differ, struct_size too small); ADNN_STATUS_NOT_SUPPORTED;
 *  ADNN_STATUS_OUT_OF_MEMORY / ADNN_STATUS_DEVICE_OUT_OF_MEMORY. */
ADNN_API adnn_status adnn_plan_create_reduce(adnn_context *ctx, const adnn_reduce_desc *desc,
                                             adnn_plan **plan);

/* ------------------------------------------------------------------------ */
/* Training: backward passes, batch-norm training, loss and optimizer        */
/* ------------------------------------------------------------------------ */
/*
 * Every backward op reuses its forward descriptor: the backward descriptor
 * points to the forward one (`forward`, read by the struct_size rule like any
 * descriptor, and only during plan creation), and the gradient tensors have
 * the layouts of the forward tensors they are the gradients of: dx has x's
 * dims and strides, dy has y's, dw has w's, and so on. The backward plan is
 * then independent of the forward descriptor, which may be changed or freed.
 *
 * Ops with several outputs (weight and bias gradients, batch-norm training's
 * output and statistics, the optimizer) run through adnn_plan_execute_multi;
 * adnn_plan_execute runs those with exactly one. An output documented as
 * "read and updated" (running statistics, optimizer parameters and states,
 * a gradient accumulated with beta != 0) is read before it is written.
 *
 * Gradients of fused forward ops: backward ops compute the gradient of the
 * op without its fused activation (the forward descriptor's activation is
 * ignored), so a network that used conv2d or batch norm with a fused
 * activation first turns dy into the gradient before the activation with
 * adnn_activation_backward, from y where the activation allows it (doc/ops.md,
 * "Training") or by running the activation unfused.
 */

/** dx = beta * dx + the gradient of conv2d with respect to x.
 *
 *  forward: the convolution (any geometry it accepts; its activation, bias,
 *  and algorithm are ignored). dy has forward->y's layout, w forward->w's, dx
 *  forward->x's. Execute inputs: {dy, w}; output: {dx} (read and updated when
 *  beta != 0). dx must not overlap dy or w. */
typedef struct adnn_conv2d_backward_data_desc {
  size_t struct_size;
  const adnn_conv2d_desc *forward;
  double beta; /**< 0: dx is overwritten; 1: the gradient is added to dx */
  adnn_conv2d_algorithm algorithm; /**< AUTO, or forced as for the forward op */
} adnn_conv2d_backward_data_desc;

/** Zeroes *d and sets struct_size, beta 0 and ADNN_CONV2D_ALGO_AUTO. */
static inline void adnn_conv2d_backward_data_desc_init(adnn_conv2d_backward_data_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
}

/** Creates a conv2d backward-data plan. Returns ADNN_STATUS_SUCCESS;
 *  ADNN_STATUS_BAD_PARAM_NULL (ctx, desc, desc->forward or plan NULL);
 *  ADNN_STATUS_BAD_PARAM (the forward descriptor is invalid, as for
 *  adnn_plan_create_conv2d; beta not finite); ADNN_STATUS_NOT_SUPPORTED;
 *  ADNN_STATUS_OUT_OF_MEMORY / ADNN_STATUS_DEVICE_OUT_OF_MEMORY. */
ADNN_API adnn_status adnn_plan_create_conv2d_backward_data(
    adnn_context *ctx, const adnn_conv2d_backward_data_desc *desc, adnn_plan **plan);

/** dw = beta * dw + the gradient of conv2d with respect to w, and, when the
 *  forward convolution has a bias, db = beta * db + its gradient (the sum of
 *  dy over N, P and Q).
 *
 *  forward: the convolution (activation and algorithm ignored). x has
 *  forward->x's layout, dy forward->y's, dw forward->w's, db forward->bias's.
 *  Execute inputs: {x, dy}; outputs: {dw} or {dw, db} (read and updated when
 *  beta != 0). On the CPU plugin the result is bitwise identical run to run
 *  for a thread count; on CUDA only with ADNN_DETERMINISTIC=1 (or the
 *  context's deterministic tuning option), which excludes cuDNN's
 *  non-deterministic algorithms (doc/numerics.md). */
typedef struct adnn_conv2d_backward_weights_desc {
  size_t struct_size;
  const adnn_conv2d_desc *forward;
  double beta;
  adnn_conv2d_algorithm algorithm;
} adnn_conv2d_backward_weights_desc;

/** Zeroes *d and sets struct_size, beta 0 and ADNN_CONV2D_ALGO_AUTO. */
static inline void adnn_conv2d_backward_weights_desc_init(adnn_conv2d_backward_weights_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
}

/** Creates a conv2d backward-weights plan. Statuses as
 *  adnn_plan_create_conv2d_backward_data. */
ADNN_API adnn_status adnn_plan_create_conv2d_backward_weights(
    adnn_context *ctx, const adnn_conv2d_backward_weights_desc *desc, adnn_plan **plan);

/** dx = the gradient of pool2d with respect to x. forward: the pooling; dx
 *  has forward->x's layout, dy forward->y's. Max pooling sends each dy to the
 *  first maximum of its window in row-major scan order (a NaN counts as the
 *  maximum; doc/ops.md); average pooling spreads dy over the window with the
 *  forward divisor. Execute inputs: {x, y, dy} (y as the forward op computed
 *  it); output: {dx}, which must not overlap an input. */
typedef struct adnn_pool2d_backward_desc {
  size_t struct_size;
  const adnn_pool2d_desc *forward;
} adnn_pool2d_backward_desc;

/** Zeroes *d and sets struct_size. */
static inline void adnn_pool2d_backward_desc_init(adnn_pool2d_backward_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
}

/** Creates a pool2d backward plan. Returns ADNN_STATUS_SUCCESS;
 *  ADNN_STATUS_BAD_PARAM_NULL; ADNN_STATUS_BAD_PARAM (the forward descriptor
 *  is invalid, as for adnn_plan_create_pool2d); ADNN_STATUS_NOT_SUPPORTED;
 *  ADNN_STATUS_OUT_OF_MEMORY. */
ADNN_API adnn_status adnn_plan_create_pool2d_backward(adnn_context *ctx,
                                                      const adnn_pool2d_backward_desc *desc,
                                                      adnn_plan **plan);

/** dx = act'(x) * dy elementwise, with the derivative at kinks defined as
 *  PyTorch defines it (relu'(0) = 0, ...; doc/ops.md). forward: the
 *  activation; x and dx have forward->x's layout, dy forward->y's. Execute inputs: {x, dy}; output: {dx}, which may be dy (same
 *  pointer and layout). */
typedef struct adnn_activation_backward_desc {
  size_t struct_size;
  const adnn_activation_desc *forward;
} adnn_activation_backward_desc;

/** Zeroes *d and sets struct_size. */
static inline void adnn_activation_backward_desc_init(adnn_activation_backward_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
}

/** Creates an activation backward plan. Statuses as
 *  adnn_plan_create_activation, and ADNN_STATUS_BAD_PARAM_NULL for a NULL
 *  forward. */
ADNN_API adnn_status adnn_plan_create_activation_backward(
    adnn_context *ctx, const adnn_activation_backward_desc *desc, adnn_plan **plan);

/** dx = the gradient of softmax (y * (dy - sum(y * dy))) or log-softmax
 *  (dy - exp(y) * sum(dy)) along the forward axis. forward: the softmax; y
 *  and dy have forward->y's layout, dx forward->x's. Execute inputs: {y, dy};
 *  output: {dx}, which may be dy (same pointer and layout). */
typedef struct adnn_softmax_backward_desc {
  size_t struct_size;
  const adnn_softmax_desc *forward;
} adnn_softmax_backward_desc;

/** Zeroes *d and sets struct_size. */
static inline void adnn_softmax_backward_desc_init(adnn_softmax_backward_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
}

/** Creates a softmax / log-softmax backward plan. Statuses as
 *  adnn_plan_create_softmax, and ADNN_STATUS_BAD_PARAM_NULL for a NULL
 *  forward. */
ADNN_API adnn_status adnn_plan_create_softmax_backward(adnn_context *ctx,
                                                       const adnn_softmax_backward_desc *desc,
                                                       adnn_plan **plan);

/** Batch normalization in training mode: normalizes with the batch's
 *  statistics per channel c (over N and every spatial position): mean and
 *  the biased variance var_b, y = scale * (x - mean) / sqrt(var_b + eps) +
 *  shift; saves mean and inv_std = 1 / sqrt(var_b + eps) for the backward
 *  pass; and updates the running statistics in place with momentum m as
 *  PyTorch does: running_mean = (1 - m) running_mean + m mean and
 *  running_var = (1 - m) running_var + m var_u with the UNBIASED variance
 *  var_u = var_b * n / (n - 1), where n >= 2 is the number of elements per
 *  channel (N times the spatial size).
 *
 *  forward: the inference descriptor (x, y, epsilon; its activation must be
 *  identity). Execute inputs: {x, scale, shift}; outputs: {y, saved_mean,
 *  saved_inv_std, running_mean, running_var}, the last two read and
 *  updated. Parameter and statistic vectors are packed, C elements of
 *  ADNN_OP_PARAM_DTYPE of x's dtype (x's own for F32 and F64, F32 for F16
 *  and BF16 x). y may be x. */
typedef struct adnn_batchnorm_training_desc {
  size_t struct_size;
  const adnn_batchnorm_desc *forward;
  double momentum; /**< in [0, 1]; 0 leaves the running statistics as they are */
} adnn_batchnorm_training_desc;

/** Zeroes *d and sets struct_size and momentum 0.1 (PyTorch's default). */
static inline void adnn_batchnorm_training_desc_init(adnn_batchnorm_training_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  d->momentum = 0.1;
}

/** Creates a batch-norm training plan. Returns ADNN_STATUS_SUCCESS;
 *  ADNN_STATUS_BAD_PARAM_NULL; ADNN_STATUS_BAD_PARAM (as
 *  adnn_plan_create_batchnorm; a fused activation; momentum outside [0, 1]);
 *  ADNN_STATUS_NOT_SUPPORTED; ADNN_STATUS_OUT_OF_MEMORY. */
ADNN_API adnn_status adnn_plan_create_batchnorm_training(
    adnn_context *ctx, const adnn_batchnorm_training_desc *desc, adnn_plan **plan);

/** The gradients of batch-norm training: dx, dscale and dshift from x, dy,
 *  scale and the saved statistics of the training forward pass. forward: the
 *  inference descriptor (as for training); dx and dy have forward->x's and
 *  forward->y's layouts. Execute inputs: {x, dy, scale, saved_mean,
 *  saved_inv_std}; outputs: {dx, dscale, dshift} (vectors of C elements;
 *  every vector of ADNN_OP_PARAM_DTYPE, as for training). */
typedef struct adnn_batchnorm_backward_desc {
  size_t struct_size;
  const adnn_batchnorm_desc *forward;
} adnn_batchnorm_backward_desc;

/** Zeroes *d and sets struct_size. */
static inline void adnn_batchnorm_backward_desc_init(adnn_batchnorm_backward_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
}

/** Creates a batch-norm backward plan. Statuses as
 *  adnn_plan_create_batchnorm_training. */
ADNN_API adnn_status adnn_plan_create_batchnorm_backward(
    adnn_context *ctx, const adnn_batchnorm_backward_desc *desc, adnn_plan **plan);

/** The gradients of layer / RMS normalization: dx, and dgain and dbias when
 *  the forward op has them, recomputing the row statistics from x. forward:
 *  the normalization; dx and dy have forward->x's and forward->y's layouts.
 *  Execute inputs: {x, dy} or {x, dy, gain} (when has_gain); outputs: {dx},
 *  then dgain when has_gain, then dbias when has_bias (packed vectors of D
 *  elements, summed over the rows; gain, dgain and dbias of
 *  ADNN_OP_PARAM_DTYPE: F32 for F16 and BF16 data). */
typedef struct adnn_norm_backward_desc {
  size_t struct_size;
  const adnn_norm_desc *forward;
} adnn_norm_backward_desc;

/** Zeroes *d and sets struct_size. */
static inline void adnn_norm_backward_desc_init(adnn_norm_backward_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
}

/** Creates a layer- or RMS-norm backward plan. Statuses as
 *  adnn_plan_create_norm, and ADNN_STATUS_BAD_PARAM_NULL for a NULL
 *  forward. */
ADNN_API adnn_status adnn_plan_create_norm_backward(adnn_context *ctx,
                                                    const adnn_norm_backward_desc *desc,
                                                    adnn_plan **plan);

/** Loss reductions of softmax cross-entropy (ADNN_LOSS_REDUCTION_LIST:
 *  MEAN over the samples whose label is not ignore_index, SUM, NONE: one
 *  loss per sample). */
typedef enum adnn_loss_reduction {
#define ADNN_LOSS_REDUCTION_ENUM_(NAME, name, value, def) \
  ADNN_KIND_ENUM_(ADNN_LOSS_REDUCTION_, NAME, value)
  ADNN_LOSS_REDUCTION_LIST(ADNN_LOSS_REDUCTION_ENUM_)
#undef ADNN_LOSS_REDUCTION_ENUM_
} adnn_loss_reduction;

/** The reduction's name ("mean"), or "unknown". Never NULL. */
static inline const char *adnn_loss_reduction_name(adnn_loss_reduction r) {
  switch (r) {
#define ADNN_LOSS_REDUCTION_CASE_(NAME, name, value, def) \
  ADNN_KIND_NAME_CASE_(ADNN_LOSS_REDUCTION_, NAME, name, value)
    ADNN_LOSS_REDUCTION_LIST(ADNN_LOSS_REDUCTION_CASE_)
#undef ADNN_LOSS_REDUCTION_CASE_
    default: break;
  }
  return "unknown";
}

/** Softmax cross-entropy with integer class labels: for sample n with label
 *  t = labels[n], loss_n = logsumexp(logits[n, :]) - logits[n, t], computed
 *  stably in one pass (no softmax is formed). logits: [N, C] (F32, F64, F16
 *  or BF16, the arithmetic F32 or wider for the 16-bit types);
 *  labels: [N] of ADNN_DTYPE_I32, each in 0..C-1 or ignore_index (whose
 *  samples give loss 0 and no gradient); loss: rank 0 for MEAN and SUM, [N]
 *  for NONE, of the logits' dtype. MEAN divides by the number of samples not
 *  ignored (NaN when every sample is ignored, as in PyTorch). A label outside
 *  0..C-1 that is not ignore_index gives NaN for its sample. Execute inputs:
 *  {logits, labels}; output: {loss}. */
typedef struct adnn_softmax_cross_entropy_desc {
  size_t struct_size;
  adnn_tensor_desc logits, labels, loss;
  adnn_loss_reduction reduction;
  int64_t ignore_index;
} adnn_softmax_cross_entropy_desc;

/** Zeroes *d and sets struct_size, MEAN and ignore_index -100 (PyTorch's). */
static inline void adnn_softmax_cross_entropy_desc_init(adnn_softmax_cross_entropy_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  d->ignore_index = -100;
}

/** Creates a softmax cross-entropy plan. Returns ADNN_STATUS_SUCCESS;
 *  ADNN_STATUS_BAD_PARAM_NULL; ADNN_STATUS_BAD_PARAM (logits not rank 2,
 *  labels not [N] of I32, loss not of the reduction's shape, unknown
 *  reduction, dtypes differ); ADNN_STATUS_NOT_SUPPORTED;
 *  ADNN_STATUS_OUT_OF_MEMORY. */
ADNN_API adnn_status adnn_plan_create_softmax_cross_entropy(
    adnn_context *ctx, const adnn_softmax_cross_entropy_desc *desc, adnn_plan **plan);

/** dlogits = dloss * (softmax(logits) - onehot(labels)) (divided by the
 *  number of samples not ignored for MEAN; zero rows for ignored samples).
 *  forward: the loss; dlogits has forward->logits's layout, dloss
 *  forward->loss's. Execute inputs: {logits, labels, dloss}; output:
 *  {dlogits}. */
typedef struct adnn_softmax_cross_entropy_backward_desc {
  size_t struct_size;
  const adnn_softmax_cross_entropy_desc *forward;
} adnn_softmax_cross_entropy_backward_desc;

/** Zeroes *d and sets struct_size. */
static inline void adnn_softmax_cross_entropy_backward_desc_init(
    adnn_softmax_cross_entropy_backward_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
}

/** Creates a softmax cross-entropy backward plan. Statuses as
 *  adnn_plan_create_softmax_cross_entropy. */
ADNN_API adnn_status adnn_plan_create_softmax_cross_entropy_backward(
    adnn_context *ctx, const adnn_softmax_cross_entropy_backward_desc *desc, adnn_plan **plan);

/** Optimizers (ADNN_OPTIMIZER_LIST: SGD, ADAM, ADAMW). */
typedef enum adnn_optimizer_kind {
#define ADNN_OPTIMIZER_ENUM_(NAME, name, value, def) ADNN_KIND_ENUM_(ADNN_OPTIMIZER_, NAME, value)
  ADNN_OPTIMIZER_LIST(ADNN_OPTIMIZER_ENUM_)
#undef ADNN_OPTIMIZER_ENUM_
} adnn_optimizer_kind;

/** The optimizer's name ("adamw"), or "unknown". Never NULL. */
static inline const char *adnn_optimizer_kind_name(adnn_optimizer_kind kind) {
  switch (kind) {
#define ADNN_OPTIMIZER_CASE_(NAME, name, value, def) \
  ADNN_KIND_NAME_CASE_(ADNN_OPTIMIZER_, NAME, name, value)
    ADNN_OPTIMIZER_LIST(ADNN_OPTIMIZER_CASE_)
#undef ADNN_OPTIMIZER_CASE_
    default: break;
  }
  return "unknown";
}

/** One fused, in-place optimizer step over `tensor_count` parameter tensors
 *  (multi-tensor apply), with PyTorch's update rules (doc/ops.md):
 *    SGD:   g = grad + weight_decay * p; with momentum: buf = momentum * buf
 *           + (1 - dampening) * g (buf = g at step 1), g = nesterov ? g +
 *           momentum * buf : buf; p -= lr * g.
 *    ADAM:  g = grad + weight_decay * p; m = beta1 m + (1 - beta1) g;
 *           v = beta2 v + (1 - beta2) g^2; p -= lr * (m / (1 - beta1^t)) /
 *           (sqrt(v / (1 - beta2^t)) + epsilon).
 *    ADAMW: as ADAM with g = grad, after p *= 1 - lr * weight_decay.
 *  Tensor i is a packed vector of sizes[i] elements of `dtype` (F32 or F64);
 *  its parameters, gradient and states all have that size. The learning rate
 *  and the step number t (1 at the first step) are set per step by
 *  adnn_plan_set_optimizer_step and start as lr and 1.
 *
 *  Execute inputs: {grad_0, ..., grad_{T-1}}; outputs (all read and updated):
 *  SGD without momentum {p_0..p_{T-1}}; SGD with momentum {p_0..p_{T-1},
 *  buf_0..buf_{T-1}}; ADAM and ADAMW {p_0..p_{T-1}, m_0..m_{T-1},
 *  v_0..v_{T-1}}. States start as zeros (the caller zeroes them). With
 *  model_dtype set (F32 master weights, below) the gradients are of
 *  model_dtype and the outputs end with the model copies {w_0..w_{T-1}}. */
typedef struct adnn_optimizer_desc {
  size_t struct_size;
  adnn_optimizer_kind kind;
  adnn_dtype dtype;
  size_t tensor_count;  /**< T >= 1 */
  const int64_t *sizes; /**< T element counts, each >= 1 (read at creation only) */
  double lr;
  double weight_decay;
  double momentum, dampening; /**< SGD */
  int32_t nesterov;           /**< SGD: needs momentum > 0 and dampening 0 */
  double beta1, beta2, epsilon; /**< ADAM, ADAMW */
  /** Mixed-precision training (since 0.2.0; 0, the default, for none): F16
   *  or BF16 keeps F32 master weights. dtype must then be F32: the
   *  parameters p_i and the states stay F32, the gradients grad_i arrive in
   *  model_dtype (widened exactly to F32 before the update, which is then
   *  the F32 step bit for bit), and after the update every parameter is
   *  rounded to nearest even into a model copy w_i of model_dtype, appended
   *  to the outputs (written, never read): {p.., [states..], w_0..w_{T-1}}.
   *  The model copies are what the next forward and backward passes read. */
  adnn_dtype model_dtype;
} adnn_optimizer_desc;

/** Zeroes *d and sets struct_size, SGD, F32, lr 1e-3, beta1 0.9, beta2 0.999
 *  and epsilon 1e-8. */
static inline void adnn_optimizer_desc_init(adnn_optimizer_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  d->dtype = ADNN_DTYPE_F32;
  d->lr = 1e-3;
  d->beta1 = 0.9;
  d->beta2 = 0.999;
  d->epsilon = 1e-8;
}

/** Creates an optimizer plan. Returns ADNN_STATUS_SUCCESS;
 *  ADNN_STATUS_BAD_PARAM_NULL (sizes NULL); ADNN_STATUS_BAD_PARAM (unknown
 *  kind, dtype not F32 or F64, tensor_count 0, a size below 1, a
 *  hyperparameter not finite or out of its range: lr, weight_decay,
 *  momentum, dampening >= 0, beta1 and beta2 in [0, 1), epsilon > 0, nesterov
 *  without momentum or with dampening, model_dtype neither 0 nor F16 nor
 *  BF16, model_dtype with a dtype other than F32); ADNN_STATUS_BAD_PARAM_OVERFLOW;
 *  ADNN_STATUS_NOT_SUPPORTED; ADNN_STATUS_OUT_OF_MEMORY. */
ADNN_API adnn_status adnn_plan_create_optimizer(adnn_context *ctx,
                                                const adnn_optimizer_desc *desc,
                                                adnn_plan **plan);

/** Sets the learning rate (finite, >= 0) and the step number (>= 1, for
 *  Adam's bias correction and SGD's first momentum step) that the optimizer
 *  plan's next executions use. Returns ADNN_STATUS_SUCCESS;
 *  ADNN_STATUS_BAD_PARAM_NULL; ADNN_STATUS_BAD_PARAM_HANDLE; ADNN_STATUS_BAD_PARAM
 *  (not an optimizer plan, lr or step out of range). Not thread-safe with
 *  an execution of the same plan. */
ADNN_API adnn_status adnn_plan_set_optimizer_step(adnn_plan *plan, double lr, int64_t step);

/** Loss-scaling steps (ADNN_LOSS_SCALE_LIST: SCALE, UNSCALE). */
typedef enum adnn_loss_scale_kind {
#define ADNN_LOSS_SCALE_ENUM_(NAME, name, value, def) ADNN_KIND_ENUM_(ADNN_LOSS_SCALE_, NAME, value)
  ADNN_LOSS_SCALE_LIST(ADNN_LOSS_SCALE_ENUM_)
#undef ADNN_LOSS_SCALE_ENUM_
} adnn_loss_scale_kind;

/** The step's name ("unscale"), or "unknown". Never NULL. */
static inline const char *adnn_loss_scale_kind_name(adnn_loss_scale_kind kind) {
  switch (kind) {
#define ADNN_LOSS_SCALE_CASE_(NAME, name, value, def) \
  ADNN_KIND_NAME_CASE_(ADNN_LOSS_SCALE_, NAME, name, value)
    ADNN_LOSS_SCALE_LIST(ADNN_LOSS_SCALE_CASE_)
#undef ADNN_LOSS_SCALE_CASE_
    default: break;
  }
  return "unknown";
}

/** Loss scaling for mixed-precision training (since 0.2.0), in place over
 *  `tensor_count` packed vectors (multi-tensor apply), with an overflow check
 *  across all of them:
 *    SCALE:   t = t * scale         (the loss, or the dloss seeding backward)
 *    UNSCALE: t = t * (1 / scale)   (the gradients, before the optimizer)
 *  scale is an execute input: one F32 element in the backend's memory, so a
 *  dynamic loss scale can live on the device and change without a new plan.
 *  UNSCALE's factor is 1 / scale rounded to F32 (PyTorch's inv_scale); each
 *  product is computed in F32 (F64 for F64 tensors, the factor widened) and,
 *  for F16/BF16 tensors, rounded once more to the tensors' dtype. After the
 *  product, found_inf (one element of `dtype`) is set to 1 when any result is
 *  infinite or NaN (an input that was, a product that overflowed, a scale of
 *  0, infinity or NaN) and is otherwise left as it was: the caller zeroes it
 *  once per iteration and may run several plans into it. The tensors are
 *  still written when an overflow is found; the caller skips the optimizer
 *  step and lowers the scale.
 *
 *  Tensor i has sizes[i] elements of `dtype` (F32, F64, F16 or BF16). Execute
 *  inputs: {scale}; outputs (all read and updated): {t_0..t_{T-1},
 *  found_inf}. */
typedef struct adnn_loss_scale_desc {
  size_t struct_size;
  adnn_loss_scale_kind kind;
  adnn_dtype dtype;
  size_t tensor_count;  /**< T >= 1 */
  const int64_t *sizes; /**< T element counts, each >= 1 (read at creation only) */
} adnn_loss_scale_desc;

/** Zeroes *d and sets struct_size, UNSCALE and F32. */
static inline void adnn_loss_scale_desc_init(adnn_loss_scale_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  d->kind = ADNN_LOSS_SCALE_UNSCALE;
  d->dtype = ADNN_DTYPE_F32;
}

/** Creates a loss-scaling plan (run it with adnn_plan_execute_multi).
 *  Returns ADNN_STATUS_SUCCESS; ADNN_STATUS_BAD_PARAM_NULL (ctx, desc, plan
 *  or sizes NULL); ADNN_STATUS_BAD_PARAM_HANDLE; ADNN_STATUS_BAD_PARAM
 *  (unknown kind, dtype not a dtype, tensor_count 0, a size below 1);
 *  ADNN_STATUS_BAD_PARAM_OVERFLOW; ADNN_STATUS_NOT_SUPPORTED (a dtype other
 *  than F32, F64, F16 and BF16, or a backend without the op);
 *  ADNN_STATUS_OUT_OF_MEMORY. */
ADNN_API adnn_status adnn_plan_create_loss_scale(adnn_context *ctx,
                                                 const adnn_loss_scale_desc *desc,
                                                 adnn_plan **plan);

/* ------------------------------------------------------------------------ */
/* Transformer: GEMM with a fused epilogue, scaled-dot-product attention     */
/* ------------------------------------------------------------------------ */

/** y = act(alpha * (a @ b) + bias + residual_scale * r): the GEMM of a
 *  linear layer with its epilogue in one call (cuBLASLt's order: the bias
 *  and the scaled residual are added before the activation).
 *
 *  a: [..., M, K]; b: [..., K, N]; y: [..., M, N]; rank 2..4. a and y have
 *  the same leading (batch) dims; each batch dim of b is a's or 1, or b has
 *  rank 2 (weights shared by every batch: broadcast like adnn_binary, from
 *  the right). Transposes are strides: PyTorch's Linear weight W [N, K]
 *  (row-major) is b with dims [K, N] and strides [1, K]. Any non-negative
 *  strides are accepted; the fast paths want a unit stride in one of the
 *  last two dims of a, b and y (doc/ops.md).
 *  bias: [N] (rank 1, any stride) when has_bias: added to every row.
 *  r: y's dims, any strides, when has_residual; r may be y itself (same
 *  dims and strides) for an in-place residual add.
 *  Execute inputs: {a, b}, then bias (has_bias), then r (has_residual),
 *  then requant_scales (has_requant_scales); output: {y}.
 *
 *  dtypes (doc/ops.md, "Matmul dtypes"): a and b share the input dtype.
 *    F32, F64: every tensor has that dtype.
 *    F16, BF16: accumulation in F32; y is F32, F16 or BF16; bias is F32;
 *      r has y's dtype.
 *    I8 (s8 x s8) or U8 with b I8 (u8 x s8): exact I32 accumulation; y is
 *      I32 (acc + bias), or I8/U8 requantized (the requant_* fields below);
 *      bias is I32 (added to the accumulator); alpha must be 1, the
 *      activation the identity, and there is no residual. K is at most
 *      2^17 - 1 (s8 x s8) or 2^16 (u8 x s8), so that no I32 sum can
 *      overflow; an I32 y saturates acc + bias to the I32 range. */
typedef struct adnn_matmul_desc {
  size_t struct_size;
  adnn_tensor_desc a, b, bias, residual, y;
  int32_t has_bias;
  int32_t has_residual;
  double alpha;          /**< scales a @ b (1 by default) */
  double residual_scale; /**< scales r (1 by default; read with has_residual) */
  adnn_activation activation;
  /* Requantization of an I8/U8 y from the I32 accumulator (plugin ABI 2.4;
   * unread for every other y dtype):
   *   y[m, n] = saturate(round_half_even(acc[m, n] * s[n]) + y_zero_point)
   * with acc = a @ b + bias exact (a @ b cannot leave I32 for the K the core
   * accepts; the bias is added in 64 bits), the product formed in F64, and
   * s[n] = requant_scales[n] (has_requant_scales: per output channel) or
   * requant_scale (per tensor). The rounding assumes the default
   * floating-point rounding mode (to nearest), as every kernel does. */
  double requant_scale;          /**< per-tensor scale (1 by default); finite, > 0 */
  int32_t y_zero_point;          /**< added after rounding (0 by default); in y's range */
  int32_t has_requant_scales;    /**< 1: per-channel scales from requant_scales */
  adnn_tensor_desc requant_scales; /**< [N] F32, finite, > 0: an execute input after r */
  /** 0 (the default): the execute input b is in b's layout. 1: it is a
   *  buffer that adnn_plan_pack_weights wrote for this plan (the chosen
   *  algorithm's packed form of b, adnn_plan_get_packed_weights_bytes
   *  bytes): for inference with constant weights (doc/prepacking.md). */
  int32_t weights_prepacked;
} adnn_matmul_desc;

/** Zeroes *d and sets struct_size, alpha = residual_scale = 1, identity
 *  activation, no bias, no residual, weights not prepacked. */
static inline void adnn_matmul_desc_init(adnn_matmul_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  d->alpha = 1.0;
  d->residual_scale = 1.0;
  d->requant_scale = 1.0;
}

/** Creates a matmul plan. Returns ADNN_STATUS_SUCCESS;
 *  ADNN_STATUS_BAD_PARAM_NULL; ADNN_STATUS_BAD_PARAM (ranks outside 2..4,
 *  inner dims that disagree (a's K != b's K), batch dims that do not
 *  broadcast, y not [..., M, N], bias not [N], r not of y's dims,
 *  overlapping y strides, unknown activation, alpha or residual_scale not
 *  finite (or beyond the F32 range for F32), a dtype combination the rules
 *  above do not allow (the message names both dtypes), an integer matmul
 *  with alpha != 1, an activation, a residual or K beyond its bound, a
 *  requant_scale or y_zero_point out of range, requant_scales not [N] F32,
 *  struct_size too small); ADNN_STATUS_NOT_SUPPORTED (dtype);
 *  ADNN_STATUS_OUT_OF_MEMORY / ADNN_STATUS_DEVICE_OUT_OF_MEMORY. A residual
 *  that overlaps y without being exactly y is refused when the plan is
 *  executed (ADNN_STATUS_BAD_PARAM): the create step sees no pointers. */
ADNN_API adnn_status adnn_plan_create_matmul(adnn_context *ctx, const adnn_matmul_desc *desc,
                                             adnn_plan **plan);

/** Scaled-dot-product attention, computed tiled with an online softmax
 *  (memory linear in the sequence lengths; no Sq x Skv matrix is formed):
 *    s[b,h,i,j] = scale * sum_d q[b,h,i,d] * k[b,g,j,d] + bias[b,h,i,j]
 *                 (-inf where masked),
 *    o[b,h,i,:] = sum_j softmax_j(s[b,h,i,:]) * v[b,g,j,:],
 *    lse[b,h,i] = log sum_j exp(s[b,h,i,j]),
 *  with g = h / (H / Hkv), the key/value head of query head h's group
 *  (grouped-query attention; Hkv = 1 is multi-query attention).
 *
 *  q: [B, H, Sq, D]; k: [B, Hkv, Skv, D]; v: [B, Hkv, Skv, Dv];
 *  o: [B, H, Sq, Dv]; lse: [B, H, Sq]. Dims are logical and strides give the
 *  layout, so BHSD and BSHD (dims [B, H, S, D] with strides [S*H*D, D, H*D,
 *  1]) both work without copies. H is a multiple of Hkv.
 *  scale: the softmax scale; 0 means 1 / sqrt(D).
 *  causal: query i sees keys j <= i + Skv - Sq (aligned to the bottom right,
 *  so that with Sq < Skv the last query sees every key, as in decoding; with
 *  Sq == Skv this is the usual lower triangle).
 *  bias (has_bias): an additive bias or mask (-inf entries mask), rank 1..4,
 *  broadcast to [B, H, Sq, Skv] from the right (dims of 1 repeat).
 *  key_lengths (has_key_lengths): [B] of ADNN_DTYPE_I32: keys j >=
 *  key_lengths[b] are masked for batch b (padding without a mask tensor);
 *  values are clamped to 0..Skv.
 *  A row whose keys are all masked gives o = 0 and lse = -inf (never NaN).
 *  lse (has_lse, the default) is what the backward pass needs; inference
 *  may leave it out.
 *
 *  dtypes: q, k, v, o and bias share one dtype (F32, F64, F16 or BF16); lse
 *  is ADNN_OP_PARAM_DTYPE of it: that dtype for F32 and F64, F32 for F16 and
 *  BF16 data.
 *  Execute inputs: {q, k, v}, then bias (has_bias), then key_lengths
 *  (has_key_lengths); outputs: {o, lse} or {o} without has_lse. */
typedef struct adnn_attention_desc {
  size_t struct_size;
  adnn_tensor_desc q, k, v, o, lse;
  adnn_tensor_desc bias;        /**< read with has_bias */
  adnn_tensor_desc key_lengths; /**< read with has_key_lengths */
  double scale;                 /**< 0: 1 / sqrt(D) */
  int32_t causal;
  int32_t has_bias;
  int32_t has_key_lengths;
  int32_t has_lse; /**< 1 by default */
} adnn_attention_desc;

/** Zeroes *d and sets struct_size, scale 0 (1 / sqrt(D)), not causal, no
 *  bias, no key lengths, has_lse = 1. */
static inline void adnn_attention_desc_init(adnn_attention_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  d->has_lse = 1;
}

/** Creates an attention plan. Returns ADNN_STATUS_SUCCESS;
 *  ADNN_STATUS_BAD_PARAM_NULL; ADNN_STATUS_BAD_PARAM (q, k, v, o not rank 4,
 *  lse not [B, H, Sq], H not a multiple of Hkv, batch sizes, D or Dv or Skv
 *  that disagree, a bias that does not broadcast to [B, H, Sq, Skv],
 *  key_lengths not [B] of I32, scale negative or not finite, overlapping
 *  outputs, dtypes differ, struct_size too small); ADNN_STATUS_NOT_SUPPORTED
 *  (dtype); ADNN_STATUS_OUT_OF_MEMORY / ADNN_STATUS_DEVICE_OUT_OF_MEMORY. */
ADNN_API adnn_status adnn_plan_create_attention(adnn_context *ctx,
                                                const adnn_attention_desc *desc,
                                                adnn_plan **plan);

/** The gradients of attention: dq, dk, dv from q, k, v, the forward's o and
 *  lse, and do (the gradient of o), with the forward's options (scale,
 *  causal, bias, key lengths). dk and dv sum over the query heads of each
 *  group. The bias gets no gradient (it is treated as a constant). Rows that
 *  were fully masked contribute nothing. forward: the attention descriptor
 *  (has_lse must be 1); dq, dk, dv have q's, k's and v's layouts and do has
 *  o's. Execute inputs: {q, k, v, o, do, lse}, then bias (has_bias), then
 *  key_lengths (has_key_lengths); outputs: {dq, dk, dv}. */
typedef struct adnn_attention_backward_desc {
  size_t struct_size;
  const adnn_attention_desc *forward;
} adnn_attention_backward_desc;

/** Zeroes *d and sets struct_size. */
static inline void adnn_attention_backward_desc_init(adnn_attention_backward_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
}

/** Creates an attention backward plan. Statuses as
 *  adnn_plan_create_attention, and ADNN_STATUS_BAD_PARAM when the forward
 *  descriptor has no lse. */
ADNN_API adnn_status adnn_plan_create_attention_backward(
    adnn_context *ctx, const adnn_attention_backward_desc *desc, adnn_plan **plan);

/* ------------------------------------------------------------------------ */
/* Conversion (doc/ops.md, "Reorder")                                        */
/* ------------------------------------------------------------------------ */

/** reorder: y = x converted to y's dtype, element by element, between any two
 *  layouts of the same logical dims. A layout change (NCHW <-> NHWC, any
 *  permutation, a strided view into a packed copy or back) is a pair of
 *  stride vectors; a dtype change is y's dtype.
 *
 *  x and y: rank 0..ADNN_MAX_RANK, the same dims; x any non-negative strides
 *  (stride 0 broadcasts), y any strides that give every element its own
 *  address. dtypes: x and y any pair of F32, F64, F16 and BF16 (a
 *  conversion: widening exact, narrowing rounds to nearest even in one
 *  rounding, NaN keeps its sign and becomes quiet, F16 overflow gives
 *  infinity, subnormals kept; the exact rules are doc/numerics.md's "Low
 *  precision"); or I8, U8 or I32 copied to the same dtype. A same-dtype
 *  reorder copies the bits (signalling NaNs included). There is no scaling:
 *  quantization is a separate op.
 *  In place (y == x) only when y has x's dtype and layout (then a no-op).
 *  Execute inputs: {x}; output: {y}. */
typedef struct adnn_reorder_desc {
  size_t struct_size;
  adnn_tensor_desc x, y;
} adnn_reorder_desc;

/** Zeroes *d and sets struct_size. */
static inline void adnn_reorder_desc_init(adnn_reorder_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
}

/** Creates a reorder plan. Returns ADNN_STATUS_SUCCESS;
 *  ADNN_STATUS_BAD_PARAM_NULL (ctx, desc or plan NULL);
 *  ADNN_STATUS_BAD_PARAM_HANDLE (ctx not live); ADNN_STATUS_BAD_PARAM
 *  (invalid tensor, dims of x and y differ, y strides that make elements
 *  share memory, struct_size too small); ADNN_STATUS_NOT_SUPPORTED (a dtype
 *  pair outside the list above, e.g. F32 to I8: use quantization; or a
 *  backend without the pair); ADNN_STATUS_OUT_OF_MEMORY. A y that overlaps x
 *  without being exactly x is refused when the plan is executed
 *  (ADNN_STATUS_BAD_PARAM). */
ADNN_API adnn_status adnn_plan_create_reorder(adnn_context *ctx, const adnn_reorder_desc *desc,
                                              adnn_plan **plan);

/* ------------------------------------------------------------------------ */
/* Quantization (doc/ops.md, "Quantize and dequantize")                       */
/* ------------------------------------------------------------------------ */

/** quantize: y = saturate(round_half_even(x / scale) + zero_point), element
 *  by element; dequantize: y = (float)(x - zero_point) * scale. The quotient
 *  x / scale is one IEEE F32 division (not a multiplication by 1/scale), the
 *  rounding is to nearest even whatever the caller's rounding mode, the sum
 *  with zero_point is exact and saturates to y's range; NaN gives zero_point,
 *  +-infinity the range's ends. dequantize's x - zero_point is exact (an
 *  integer), its conversion to F32 is exact and the product is one F32
 *  multiplication rounded to nearest even (doc/numerics.md "Quantization").
 *
 *  x and y: rank 0..ADNN_MAX_RANK, the same dims, x any non-negative strides,
 *  y strides that give every element its own address. quantize: x F32, y I8
 *  or U8; dequantize: x I8 or U8, y F32.
 *
 *  axis -1 (the *_init default): per tensor, with the descriptor's scale
 *  (finite, > 0) and zero_point (within y's range for quantize, x's for
 *  dequantize). axis in [0, rank): per channel along that axis: the execute
 *  inputs are {x, scales, zero_points}, scales packed F32 [dims[axis]] and
 *  zero_points packed I32 [dims[axis]], element c applying to every element
 *  whose index along axis is c; scale and zero_point are then ignored. The
 *  per-channel values are run-time buffers the core cannot read: a scale
 *  that is not finite and > 0, or a zero point outside the range, gives the
 *  formula's saturated result, never a crash, but no meaning is promised.
 *  Not in place. Execute inputs: {x} or {x, scales, zero_points}; output {y}. */
typedef struct adnn_quantize_desc {
  size_t struct_size;
  adnn_tensor_desc x, y;
  int32_t axis;
  float scale;
  int32_t zero_point;
} adnn_quantize_desc;

/** Zeroes *d, sets struct_size, axis = -1 (per tensor) and scale = 1. */
static inline void adnn_quantize_desc_init(adnn_quantize_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  d->axis = -1;
  d->scale = 1.0f;
}

/** dequantize's descriptor: the fields of adnn_quantize_desc (x I8 or U8, y
 *  F32). */
typedef struct adnn_dequantize_desc {
  size_t struct_size;
  adnn_tensor_desc x, y;
  int32_t axis;
  float scale;
  int32_t zero_point;
} adnn_dequantize_desc;

/** Zeroes *d, sets struct_size, axis = -1 (per tensor) and scale = 1. */
static inline void adnn_dequantize_desc_init(adnn_dequantize_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  d->axis = -1;
  d->scale = 1.0f;
}

/** Creates a quantize plan. Returns ADNN_STATUS_SUCCESS;
 *  ADNN_STATUS_BAD_PARAM_NULL (ctx, desc or plan NULL);
 *  ADNN_STATUS_BAD_PARAM_HANDLE (ctx not live); ADNN_STATUS_BAD_PARAM
 *  (invalid tensor, dims of x and y differ, y strides that make elements
 *  share memory, axis >= rank or < -1, a per-tensor scale not finite or <= 0, a
 *  per-tensor zero point outside y's range, struct_size too small);
 *  ADNN_STATUS_NOT_SUPPORTED (x not F32 or y not I8/U8);
 *  ADNN_STATUS_OUT_OF_MEMORY. Overlapping x and y are refused when the plan
 *  is executed (ADNN_STATUS_BAD_PARAM). */
ADNN_API adnn_status adnn_plan_create_quantize(adnn_context *ctx, const adnn_quantize_desc *desc,
                                               adnn_plan **plan);

/** Creates a dequantize plan. Returns the statuses of
 *  adnn_plan_create_quantize, with x I8/U8 and y F32 (NOT_SUPPORTED
 *  otherwise) and the zero point checked against x's range. */
ADNN_API adnn_status adnn_plan_create_dequantize(adnn_context *ctx,
                                                 const adnn_dequantize_desc *desc,
                                                 adnn_plan **plan);

/* ------------------------------------------------------------------------ */
/* Plans                                                                     */
/* ------------------------------------------------------------------------ */

/** Runs the plan: `inputs` holds n_inputs device pointers in the order the
 *  op's descriptor documents; `output` is y. Asynchronous on GPU backends.
 *  Returns ADNN_STATUS_BAD_PARAM_NULL (plan, a needed input or output NULL),
 *  ADNN_STATUS_BAD_PARAM (wrong number of inputs, output overlapping an input
 *  where that is not allowed), ADNN_STATUS_EXECUTION_FAILED. */
ADNN_API adnn_status adnn_plan_execute(adnn_plan *plan, const void *const *inputs,
                                       size_t n_inputs, void *output);

/** Runs a plan of any op, with several outputs or one: `inputs` holds
 *  n_inputs device pointers and `outputs` n_outputs, each in the order the
 *  op's descriptor documents (the numbers must be the op's: an optional
 *  tensor the descriptor leaves out is not passed). Outputs must not overlap
 *  each other, nor an input unless the op documents that output as allowed
 *  to be exactly that input. Asynchronous on GPU backends. Returns
 *  ADNN_STATUS_SUCCESS; ADNN_STATUS_BAD_PARAM_NULL (plan, inputs, outputs or
 *  one of their pointers NULL); ADNN_STATUS_BAD_PARAM_HANDLE (not a live
 *  plan, or its context destroyed); ADNN_STATUS_BAD_PARAM (wrong number of
 *  inputs or outputs, overlapping buffers); ADNN_STATUS_BAD_PARAM_MEMORY (a
 *  pointer not in memory of the plan's context, or the tensor's span not
 *  inside it); ADNN_STATUS_EXECUTION_FAILED. */
ADNN_API adnn_status adnn_plan_execute_multi(adnn_plan *plan, const void *const *inputs,
                                             size_t n_inputs, void *const *outputs,
                                             size_t n_outputs);

/** The bytes of the packed weight buffer that adnn_plan_pack_weights
 *  writes for a plan created with weights_prepacked = 1 (a conv2d plan's w,
 *  a matmul plan's b), in the form of the algorithm the plan chose; *bytes
 *  is at least 1. Returns ADNN_STATUS_SUCCESS; ADNN_STATUS_BAD_PARAM_NULL
 *  (plan or bytes NULL); ADNN_STATUS_BAD_PARAM_HANDLE (not a live plan, or
 *  its context destroyed); ADNN_STATUS_BAD_PARAM (a plan of an op
 *  without weights, or one created without weights_prepacked);
 *  ADNN_STATUS_NOT_SUPPORTED (the backend cannot prepack). */
ADNN_API adnn_status adnn_plan_get_packed_weights_bytes(const adnn_plan *plan, size_t *bytes);

/** Writes the packed form of the weights w (in the layout of the
 *  descriptor's w for conv2d, b for matmul) into `packed`, a buffer of at
 *  least adnn_plan_get_packed_weights_bytes bytes, for a plan created with
 *  weights_prepacked = 1; `packed` is then the w (b) input of every
 *  adnn_plan_execute of this plan, and only of this plan. Both pointers are
 *  memory of the plan's context and must not overlap. Ordered like an
 *  execution: asynchronous on GPU backends (stream order), synchronous on
 *  the CPU. Returns ADNN_STATUS_SUCCESS; ADNN_STATUS_BAD_PARAM_NULL (plan,
 *  w or packed NULL); ADNN_STATUS_BAD_PARAM_HANDLE (not a live plan, or its
 *  context destroyed); ADNN_STATUS_BAD_PARAM (a plan of an op
 *  without weights, one created without weights_prepacked, packed_bytes
 *  too small, w and packed overlapping); ADNN_STATUS_BAD_PARAM_MEMORY (a
 *  pointer not in memory of the plan's context, or its span not inside it);
 *  ADNN_STATUS_NOT_SUPPORTED (the backend cannot prepack);
 *  ADNN_STATUS_EXECUTION_FAILED. */
ADNN_API adnn_status adnn_plan_pack_weights(adnn_plan *plan, const void *w, void *packed,
                                            size_t packed_bytes);

/** Destroys a plan and frees its workspace. NULL is a no-op. A plan must be
 *  destroyed before the context it was created on. */
ADNN_API void adnn_plan_destroy(adnn_plan *plan);

/** The algorithm the plan runs, e.g. "winograd_f2x3" or "cudnn:IMPLICIT_PRECOMP_GEMM";
 *  "" for NULL. Valid as long as the plan. */
ADNN_API const char *adnn_plan_get_algorithm(const adnn_plan *plan);

/** Bytes of workspace the plan holds (0 for NULL). */
ADNN_API size_t adnn_plan_get_workspace_bytes(const adnn_plan *plan);

/** The names of adnn_plan_get_algorithm() and adnn_plan_get_workspace_bytes()
 *  in adnn 0.1, kept as aliases. */
ADNN_API const char *adnn_plan_algorithm(const adnn_plan *plan);
ADNN_API size_t adnn_plan_workspace_bytes(const adnn_plan *plan);

#ifdef __cplusplus
}
#endif

#endif /* ADNN_OPS_H */
