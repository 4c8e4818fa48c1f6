/*
 * adnn op manifest: every DNN operation, and every kind of its parameters,
 * written down once. Everything that lists ops or kinds is generated from
 * these tables with X-macros (as adnn/status.h generates the status codes):
 * the public enums of adnn/ops.h, the name functions below, the plugin op
 * kinds and problem-size table of adnn/plugin.h, the core's create functions
 * and validation table, the plugins' per-op dispatch tables, the test
 * harness and adnn-bench's op tables.
 *
 * Included by <adnn.h> (through adnn/ops.h); do not include it directly.
 *
 * Adding an op: a row in ADNN_OP_LIST, its descriptor and *_init in
 * adnn/ops.h, its normalized problem struct adnn_plugin_<name> in
 * adnn/plugin.h, its validation in the core, its kernels, and its cases in
 * the conformance harness. The generated code then refuses to build until
 * every plugin has an entry for the op (see doc/kernels.md).
 *
 * Rules: append-only. A row's value is its plugin op kind and is never
 * reused; a kind's value is its public enumerator and is never renumbered.
 */
#ifndef ADNN_OP_LIST_H
#define ADNN_OP_LIST_H

#ifndef ADNN_H
#error "include <adnn.h>, not <adnn/op_list.h>"
#endif

/* ------------------------------------------------------------------------ */
/* Ops                                                                       */
/* ------------------------------------------------------------------------ */

/* Flags of an op (the last column of ADNN_OP_LIST). */
/** The op offers several algorithms and its plans may be tuned by
 *  measurement (adnn/tuning.h); the core keys it in the performance database. */
#define ADNN_OP_TUNABLE 0x1u

/* Element types an op accepts (the dtypes column): a mask of
 * ADNN_OP_DTYPE(ADNN_DTYPE_...) bits. */
#define ADNN_OP_DTYPE(dtype) (1u << (unsigned)(dtype))
#define ADNN_OP_DTYPES_FLOAT (ADNN_OP_DTYPE(ADNN_DTYPE_F32) | ADNN_OP_DTYPE(ADNN_DTYPE_F64))
/* matmul's input dtypes (a's): the float types, F16 and BF16 (F32
 * accumulation), I8 (s8 x s8) and U8 (u8 x s8). matmul is the one op whose
 * tensors do not all share one dtype: its dtypes column names a's dtype,
 * and the core's matmul validator (core/validate_matmul.c) checks the
 * others against it (adnn/ops.h, doc/ops.md "Matmul dtypes"). */
#define ADNN_OP_DTYPES_MATMUL                                                                 \
  (ADNN_OP_DTYPES_FLOAT | ADNN_OP_DTYPE(ADNN_DTYPE_F16) | ADNN_OP_DTYPE(ADNN_DTYPE_BF16) |    \
   ADNN_OP_DTYPE(ADNN_DTYPE_I8) | ADNN_OP_DTYPE(ADNN_DTYPE_U8))
/* conv2d's input dtypes (x's): the floating types, F16 and BF16 (F32
 * accumulation), and I8 / U8 with an I8 w (exact I32 accumulation, I32 or
 * requantized I8/U8 y); the core's conv2d validator checks the other
 * tensors against x's dtype (adnn/ops.h, doc/ops.md "conv2d dtypes"). */
#define ADNN_OP_DTYPES_CONV2D                                                                 \
  (ADNN_OP_DTYPES_FLOAT | ADNN_OP_DTYPE(ADNN_DTYPE_F16) | ADNN_OP_DTYPE(ADNN_DTYPE_BF16) |    \
   ADNN_OP_DTYPE(ADNN_DTYPE_I8) | ADNN_OP_DTYPE(ADNN_DTYPE_U8))
/* Every element type: the conversion op's column. */
#define ADNN_OP_DTYPES_ALL                                                                \
  (ADNN_OP_DTYPES_FLOAT | ADNN_OP_DTYPE(ADNN_DTYPE_F16) | ADNN_OP_DTYPE(ADNN_DTYPE_BF16) | \
   ADNN_OP_DTYPE(ADNN_DTYPE_I8) | ADNN_OP_DTYPE(ADNN_DTYPE_U8) | ADNN_OP_DTYPE(ADNN_DTYPE_I32))
/* The floating types plus the 16-bit ones (F16, BF16), for the forward ops
 * that run in low precision: data is read and written in the 16-bit type and
 * the arithmetic is done in F32 or wider (doc/numerics.md). */
#define ADNN_OP_DTYPES_FLOAT_LOWP \
  (ADNN_OP_DTYPES_FLOAT | ADNN_OP_DTYPE(ADNN_DTYPE_F16) | ADNN_OP_DTYPE(ADNN_DTYPE_BF16))

/* The dtype of an op's parameter and statistics tensors for data of dtype
 * `dt` (batchnorm's scale, shift, mean and var, and in training its saved
 * and running statistics and dscale / dshift; norm's gain and bias and their
 * gradients dgain / dbias; attention's lse): the data's dtype, except F32
 * for F16 and BF16 data (as cuDNN and PyTorch keep the statistics and affine
 * parameters of half-precision data in F32, and flash attention its
 * log-sum-exp). */
#define ADNN_OP_PARAM_DTYPE(dt) \
  (((dt) == ADNN_DTYPE_F16 || (dt) == ADNN_DTYPE_BF16) ? ADNN_DTYPE_F32 : (dt))

/* X(NAME, name, value, v1_end, inputs, outputs, dtypes, flags)
 *
 *   NAME, name  the op. Its public descriptor is adnn_<name>_desc, set up by
 *               adnn_<name>_desc_init() and turned into a plan by
 *               adnn_plan_create_<name>(); plugins receive it as the
 *               normalized problem adnn_plugin_<name> with the op kind
 *               ADNN_PLUGIN_OP_<NAME> = value.
 *   v1_end      the last field of the descriptor's first released layout:
 *               the core accepts a descriptor whose struct_size reaches the
 *               end of that field (a program built against the first header
 *               that had the op) and gives later fields their *_init()
 *               defaults; see doc/versioning.md.
 *   inputs      the execute inputs in order, as documented ("[...]" optional).
 *   outputs     the outputs in order.
 *   dtypes      the element types the op accepts. For most ops all its tensors
 *               share one, of this mask (the core's check_dtype), except the
 *               parameter vectors (ADNN_OP_PARAM_DTYPE). Ops whose tensors mix
 *               dtypes by definition list the dtypes of their first input and
 *               check the combination in their own validator: matmul (a's
 *               dtype; the other tensors follow adnn/ops.h's matmul rules,
 *               core/validate_matmul.c), conv2d with integer inputs (x's
 *               dtype; core/op_validate.c) and reorder (y's dtype is the
 *               conversion's target, core/validate_reorder.c), quantize and
 *               dequantize (y is I8/U8 or F32, core/validate_quantize.c); the
 *               plugin op's dtype is then the first input's. loss_scale's
 *               mask is that of its tensors (outputs, read and updated); its
 *               one input, the scale, is always F32, and the plugin op's
 *               dtype is the tensors'.
 *   flags       ADNN_OP_* flags.
 */
#define ADNN_OP_LIST(X)                                                                   \
  X(CONV2D, conv2d, 1, algorithm, "x, w[, bias][, requant_scales]", "y",                 \
    ADNN_OP_DTYPES_CONV2D, ADNN_OP_TUNABLE)                                               \
  X(POOL2D, pool2d, 2, ceil_mode, "x", "y", ADNN_OP_DTYPES_FLOAT_LOWP, 0)                     \
  X(ACTIVATION, activation, 3, activation, "x", "y", ADNN_OP_DTYPES_FLOAT_LOWP, 0)            \
  X(SOFTMAX, softmax, 4, log, "x", "y", ADNN_OP_DTYPES_FLOAT_LOWP, 0)                         \
  X(BATCHNORM, batchnorm, 5, activation, "x, scale, shift, mean, var", "y",              \
    ADNN_OP_DTYPES_FLOAT_LOWP, 0)                                                              \
  X(NORM, norm, 6, has_bias, "x[, gain][, bias]", "y", ADNN_OP_DTYPES_FLOAT_LOWP, 0)          \
  X(BINARY, binary, 7, beta, "a, b", "y", ADNN_OP_DTYPES_FLOAT_LOWP, 0)                     \
  X(REDUCE, reduce, 8, keep_dims, "x", "y", ADNN_OP_DTYPES_FLOAT_LOWP, 0)                     \
  X(CONV2D_BACKWARD_DATA, conv2d_backward_data, 9, algorithm, "dy, w", "dx",             \
    ADNN_OP_DTYPES_FLOAT_LOWP, ADNN_OP_TUNABLE)                                                \
  X(CONV2D_BACKWARD_WEIGHTS, conv2d_backward_weights, 10, algorithm, "x, dy", "dw[, db]", \
    ADNN_OP_DTYPES_FLOAT_LOWP, ADNN_OP_TUNABLE)                                                \
  X(POOL2D_BACKWARD, pool2d_backward, 11, forward, "x, y, dy", "dx",                      \
    ADNN_OP_DTYPES_FLOAT_LOWP, 0)                                                         \
  X(ACTIVATION_BACKWARD, activation_backward, 12, forward, "x, dy", "dx",                 \
    ADNN_OP_DTYPES_FLOAT_LOWP, 0)                                                         \
  X(SOFTMAX_BACKWARD, softmax_backward, 13, forward, "y, dy", "dx",                       \
    ADNN_OP_DTYPES_FLOAT_LOWP, 0)                                                         \
  X(BATCHNORM_TRAINING, batchnorm_training, 14, momentum, "x, scale, shift",              \
    "y, saved_mean, saved_inv_std, running_mean, running_var", ADNN_OP_DTYPES_FLOAT_LOWP, 0)   \
  X(BATCHNORM_BACKWARD, batchnorm_backward, 15, forward,                                  \
    "x, dy, scale, saved_mean, saved_inv_std", "dx, dscale, dshift", ADNN_OP_DTYPES_FLOAT_LOWP, 0) \
  X(NORM_BACKWARD, norm_backward, 16, forward, "x, dy[, gain]", "dx[, dgain][, dbias]",  \
    ADNN_OP_DTYPES_FLOAT_LOWP, 0)                                                              \
  X(SOFTMAX_CROSS_ENTROPY, softmax_cross_entropy, 17, ignore_index, "logits, labels",     \
    "loss", ADNN_OP_DTYPES_FLOAT_LOWP, 0)                                                        \
  X(SOFTMAX_CROSS_ENTROPY_BACKWARD, softmax_cross_entropy_backward, 18, forward,          \
    "logits, labels, dloss", "dlogits", ADNN_OP_DTYPES_FLOAT_LOWP, 0)                           \
  X(OPTIMIZER, optimizer, 19, epsilon, "grad_0..grad_{T-1}",                               \
    "p_0..p_{T-1}[, buf_0..buf_{T-1} | m_0..m_{T-1}, v_0..v_{T-1}]", ADNN_OP_DTYPES_FLOAT, 0) \
  X(MATMUL, matmul, 20, activation, "a, b[, bias][, residual][, requant_scales]", "y",       \
    ADNN_OP_DTYPES_MATMUL, ADNN_OP_TUNABLE)                                               \
  X(ATTENTION, attention, 21, has_lse, "q, k, v[, bias][, key_lengths]", "o[, lse]",     \
    ADNN_OP_DTYPES_FLOAT_LOWP, 0)                                                              \
  X(ATTENTION_BACKWARD, attention_backward, 22, forward,                                  \
    "q, k, v, o, do, lse[, bias][, key_lengths]", "dq, dk, dv", ADNN_OP_DTYPES_FLOAT_LOWP, 0) \
  X(REORDER, reorder, 23, y, "x", "y", ADNN_OP_DTYPES_ALL, 0)                             \
  X(QUANTIZE, quantize, 24, zero_point, "x[, scales][, zero_points]", "y",                   \
    ADNN_OP_DTYPE(ADNN_DTYPE_F32), 0)                                                     \
  X(DEQUANTIZE, dequantize, 25, zero_point, "x[, scales][, zero_points]", "y",               \
    ADNN_OP_DTYPE(ADNN_DTYPE_I8) | ADNN_OP_DTYPE(ADNN_DTYPE_U8), 0)                        \
  X(LOSS_SCALE, loss_scale, 26, sizes, "scale", "t_0..t_{T-1}, found_inf",                  \
    ADNN_OP_DTYPES_FLOAT_LOWP, 0)

/* ------------------------------------------------------------------------ */
/* Kinds of op parameters                                                    */
/* ------------------------------------------------------------------------ */

/* X(NAME, name, value, params, definition)
 * Activation functions (adnn_activation_kind). `params` says which of
 * adnn_activation's alpha and beta the function reads (0 none, 1 alpha,
 * 2 alpha and beta). Every one maps NaN to NaN. */
#define ADNN_ACTIVATION_LIST(X)                                                       \
  X(IDENTITY, identity, 0, 0, "x")                                                    \
  X(RELU, relu, 1, 0, "max(x, 0)")                                                    \
  X(LEAKY_RELU, leaky_relu, 2, 1, "x >= 0 ? x : alpha * x")                           \
  X(ELU, elu, 3, 1, "x >= 0 ? x : alpha * (exp(x) - 1)")                              \
  X(CLAMP, clamp, 4, 2, "min(max(x, alpha), beta); relu6 is clamp(0, 6)")             \
  X(SIGMOID, sigmoid, 5, 0, "1 / (1 + exp(-x))")                                      \
  X(TANH, tanh, 6, 0, "tanh(x)")                                                      \
  X(GELU, gelu, 7, 0, "x * (1 + erf(x / sqrt(2))) / 2")                               \
  X(GELU_TANH, gelu_tanh, 8, 0,                                                       \
    "x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) / 2")                            \
  X(SILU, silu, 9, 0, "x * sigmoid(x) (swish)")                                       \
  X(SOFTPLUS, softplus, 10, 0, "log(1 + exp(x)), computed without overflow")          \
  X(HARDSWISH, hardswish, 11, 0, "x * clamp(x + 3, 0, 6) / 6")

/* X(NAME, name, value, definition): pooling kinds (adnn_pool_kind). */
#define ADNN_POOL_LIST(X)                                                                \
  X(MAX, max, 0, "max over the window's in-image elements; NaN wins")                    \
  X(AVG_INCLUDE_PAD, avg_include_pad, 1, "sum / window area clipped to the padded image") \
  X(AVG_EXCLUDE_PAD, avg_exclude_pad, 2, "sum / number of in-image elements")

/* X(NAME, name, value, definition): normalization kinds (adnn_norm_kind). */
#define ADNN_NORM_LIST(X)                                                                 \
  X(LAYER, layer, 0, "(x - mean) / sqrt(var + eps) * gain + bias (biased variance)")      \
  X(RMS, rms, 1, "x / sqrt(mean(x^2) + eps) * gain + bias")

/* X(NAME, name, value, definition): elementwise binary operations
 * (adnn_binary_op), applied to alpha * a and beta * b. */
#define ADNN_BINARY_LIST(X)                  \
  X(ADD, add, 0, "a + b")                    \
  X(SUB, sub, 1, "a - b")                    \
  X(MUL, mul, 2, "a * b")                    \
  X(DIV, div, 3, "a / b")                    \
  X(MAX, max, 4, "max(a, b); NaN if either is NaN") \
  X(MIN, min, 5, "min(a, b); NaN if either is NaN")

/* X(NAME, name, value, definition): reductions (adnn_reduce_kind). */
#define ADNN_REDUCE_LIST(X)                                               \
  X(SUM, sum, 0, "the sum of the elements")                               \
  X(MEAN, mean, 1, "the sum divided by the number of elements")           \
  X(MAX, max, 2, "the largest element; NaN if any element is NaN")        \
  X(MIN, min, 3, "the smallest element; NaN if any element is NaN")

/* X(NAME, name, value, definition): reductions of softmax cross-entropy
 * (adnn_loss_reduction). */
#define ADNN_LOSS_REDUCTION_LIST(X)                                            \
  X(MEAN, mean, 0, "the sum over the samples not ignored, divided by their number") \
  X(SUM, sum, 1, "the sum over the samples")                                   \
  X(NONE, none, 2, "one loss per sample")

/* X(NAME, name, value, definition): optimizers (adnn_optimizer_kind). */
#define ADNN_OPTIMIZER_LIST(X)                                                   \
  X(SGD, sgd, 0, "SGD with optional momentum, dampening, Nesterov, weight decay") \
  X(ADAM, adam, 1, "Adam with bias correction; weight decay added to the gradient") \
  X(ADAMW, adamw, 2, "Adam with decoupled weight decay")

/* X(NAME, name, value, definition): loss-scaling steps (adnn_loss_scale_kind). */
#define ADNN_LOSS_SCALE_LIST(X)                                                    \
  X(SCALE, scale, 0, "t = t * scale (the loss, or the gradient seeding the backward pass)") \
  X(UNSCALE, unscale, 1, "t = t * (1 / scale), 1 / scale rounded to F32 (the gradients)")

/* X(NAME, name, value, definition): conv2d algorithms (adnn_conv2d_algorithm).
 * Which backend implements which is in doc/cpu.md and doc/cuda.md. */
#define ADNN_CONV2D_ALGO_LIST(X)                                                         \
  X(AUTO, auto, 0, "the backend chooses (heuristic or tuner)")                           \
  X(REFERENCE, reference, 1, "plain loops accumulating in double, any shape (slow)")     \
  X(IM2COL_GEMM, im2col_gemm, 2, "im2col into the workspace, then a GEMM")               \
  X(GEMM_1X1, gemm_1x1, 3, "1x1, no padding: a GEMM on the input (CPU: strided via a copy)") \
  X(WINOGRAD_F2X3, winograd_f2x3, 4, "Winograd F(2x2, 3x3): 3x3, stride 1, dilation 1") \
  X(DEPTHWISE_DIRECT, depthwise_direct, 5, "direct kernel for groups == C == K")         \
  X(DIRECT, direct, 6, "a direct kernel for any geometry (CUDA: one thread per output)")  \
  X(WINOGRAD_F4X3, winograd_f4x3, 7, "Winograd F(4x4, 3x3): 3x3, stride 1, dilation 1")

#endif /* ADNN_OP_LIST_H */
