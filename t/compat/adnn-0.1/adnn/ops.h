/*
 * adnn forward DNN operations: descriptors and the plan lifecycle.
 *
 * Included by <adnn.h>; do not include it directly.
 *
 * Lifecycle (like cuDNN's find-then-execute and XNNPACK's create/setup/run):
 *   1. Fill an op descriptor. Each one starts with struct_size and has a
 *      static inline *_init() below that sets struct_size from this header and
 *      the defaults, so fields can be appended in later versions without
 *      breaking programs built against this one.
 *   2. adnn_plan_create_<op>(ctx, &desc, &plan): validates the descriptor
 *      (shapes, strides, parameters, dtype support on that backend), chooses an
 *      algorithm and allocates its workspace. All setup cost is paid here.
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
 * suite checks each against the reference kernels with the tolerances in
 * doc/numerics.md.
 */
#ifndef ADNN_OPS_H
#define ADNN_OPS_H

#ifndef ADNN_H
#error "include <adnn.h>, not <adnn/ops.h>"
#endif

#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/** An executable operation bound to a context. Opaque. */
typedef struct adnn_plan adnn_plan;

/* ------------------------------------------------------------------------ */
/* Activations (standalone op, and fused epilogue of conv2d / batch norm)    */
/* ------------------------------------------------------------------------ */

/** Activation functions. Every one maps NaN to NaN. */
typedef enum adnn_activation_kind {
  ADNN_ACTIVATION_IDENTITY = 0,   /**< x */
  ADNN_ACTIVATION_RELU = 1,       /**< max(x, 0) */
  ADNN_ACTIVATION_LEAKY_RELU = 2, /**< x >= 0 ? x : alpha * x */
  ADNN_ACTIVATION_ELU = 3,        /**< x >= 0 ? x : alpha * (exp(x) - 1) */
  ADNN_ACTIVATION_CLAMP = 4,      /**< min(max(x, alpha), beta); relu6 is clamp(0, 6) */
  ADNN_ACTIVATION_SIGMOID = 5,    /**< 1 / (1 + exp(-x)) */
  ADNN_ACTIVATION_TANH = 6,       /**< tanh(x) */
  ADNN_ACTIVATION_GELU = 7,       /**< x * (1 + erf(x / sqrt(2))) / 2 */
  ADNN_ACTIVATION_GELU_TANH = 8,  /**< x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) / 2 */
  ADNN_ACTIVATION_SILU = 9,       /**< x * sigmoid(x) (swish) */
  ADNN_ACTIVATION_SOFTPLUS = 10,  /**< log(1 + exp(x)), computed without overflow */
  ADNN_ACTIVATION_HARDSWISH = 11  /**< x * clamp(x + 3, 0, 6) / 6 */
} adnn_activation_kind;

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

/** Convolution algorithms. AUTO lets the backend choose (heuristic or tuner);
 *  anything else forces that algorithm, and plan creation fails with
 *  ADNN_STATUS_NOT_SUPPORTED when it cannot run this problem. The environment
 *  variable ADNN_CONV2D_ALGO (names as in adnn_conv2d_algorithm_name) forces
 *  an algorithm for descriptors that say AUTO. */
typedef enum adnn_conv2d_algorithm {
  ADNN_CONV2D_ALGO_AUTO = 0,
  ADNN_CONV2D_ALGO_REFERENCE = 1,     /**< plain loops, any shape and strides (slow) */
  ADNN_CONV2D_ALGO_IM2COL_GEMM = 2,   /**< im2col into the workspace + GEMM */
  ADNN_CONV2D_ALGO_GEMM_1X1 = 3,      /**< 1x1, stride 1, no padding: a GEMM on the input as is */
  ADNN_CONV2D_ALGO_WINOGRAD_F2X3 = 4, /**< Winograd F(2x2, 3x3): 3x3, stride 1, dilation 1 */
  ADNN_CONV2D_ALGO_DEPTHWISE_DIRECT = 5, /**< direct SIMD kernel for groups == C == K */
  ADNN_CONV2D_ALGO_DIRECT = 6         /**< direct kernel (SIMD over output channels) */
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
 *  Execute inputs: {x, w} or {x, w, bias}. */
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
} adnn_conv2d_desc;

/** Zeroes *d and sets struct_size, stride 1, dilation 1, groups 1, identity
 *  activation, no bias, ADNN_CONV2D_ALGO_AUTO. */
static inline void adnn_conv2d_desc_init(adnn_conv2d_desc *d) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  d->stride_h = d->stride_w = 1;
  d->dilation_h = d->dilation_w = 1;
  d->groups = 1;
}

/** Computes y's dims [N, K, P, Q] for a conv2d descriptor whose x, w and
 *  parameters are filled. Returns ADNN_STATUS_BAD_PARAM (naming the problem)
 *  when the parameters are invalid or P or Q would be < 1. */
ADNN_API adnn_status adnn_conv2d_output_dims(const adnn_conv2d_desc *desc, int64_t dims[4]);

/** Creates a conv2d plan. Returns ADNN_STATUS_SUCCESS; ADNN_STATUS_BAD_PARAM_NULL;
 *  ADNN_STATUS_BAD_PARAM (wrong ranks, C not divisible by groups, filter
 *  channels != C / groups, K not divisible by groups, non-positive stride or
 *  dilation, negative padding, y of the wrong shape, overlapping y strides,
 *  mismatched dtypes, struct_size too small); ADNN_STATUS_NOT_SUPPORTED (dtype
 *  or forced algorithm unsupported for this problem on this backend);
 *  ADNN_STATUS_OUT_OF_MEMORY / ADNN_STATUS_DEVICE_OUT_OF_MEMORY (workspace). */
ADNN_API adnn_status adnn_plan_create_conv2d(adnn_context *ctx, const adnn_conv2d_desc *desc,
                                             adnn_plan **plan);

/* ------------------------------------------------------------------------ */
/* pool2d forward                                                            */
/* ------------------------------------------------------------------------ */

/** Pooling kinds. */
typedef enum adnn_pool_kind {
  ADNN_POOL_MAX = 0,             /**< max over the window's in-image elements; NaN wins */
  ADNN_POOL_AVG_INCLUDE_PAD = 1, /**< sum / window area clipped to the padded image */
  ADNN_POOL_AVG_EXCLUDE_PAD = 2  /**< sum / number of in-image elements */
} adnn_pool_kind;

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

/** Normalization kinds. */
typedef enum adnn_norm_kind {
  ADNN_NORM_LAYER = 0, /**< (x - mean) / sqrt(var + eps) * gain + bias (biased variance) */
  ADNN_NORM_RMS = 1    /**< x / sqrt(mean(x^2) + eps) * gain + bias */
} adnn_norm_kind;

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

/** Elementwise binary operations. */
typedef enum adnn_binary_op {
  ADNN_BINARY_ADD = 0,
  ADNN_BINARY_SUB = 1,
  ADNN_BINARY_MUL = 2,
  ADNN_BINARY_DIV = 3,
  ADNN_BINARY_MAX = 4, /**< NaN if either is NaN */
  ADNN_BINARY_MIN = 5  /**< NaN if either is NaN */
} adnn_binary_op;

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
/* Plans                                                                     */
/* ------------------------------------------------------------------------ */

/** Runs the plan: `inputs` holds n_inputs device pointers in the order the
 *  op's descriptor documents; `output` is y. Asynchronous on GPU backends.
 *  Returns ADNN_STATUS_BAD_PARAM_NULL (plan, a needed input or output NULL),
 *  ADNN_STATUS_BAD_PARAM (wrong number of inputs, output overlapping an input
 *  where that is not allowed), ADNN_STATUS_EXECUTION_FAILED. */
ADNN_API adnn_status adnn_plan_execute(adnn_plan *plan, const void *const *inputs,
                                       size_t n_inputs, void *output);

/** Destroys a plan and frees its workspace. NULL is a no-op. A plan must be
 *  destroyed before the context it was created on. */
ADNN_API void adnn_plan_destroy(adnn_plan *plan);

/** The algorithm the plan runs, e.g. "winograd_f2x3" or "cudnn:IMPLICIT_PRECOMP_GEMM";
 *  "" for NULL. Valid as long as the plan. */
ADNN_API const char *adnn_plan_algorithm(const adnn_plan *plan);

/** Bytes of workspace the plan holds (0 for NULL). */
ADNN_API size_t adnn_plan_workspace_bytes(const adnn_plan *plan);

#ifdef __cplusplus
}
#endif

#endif /* ADNN_OPS_H */
