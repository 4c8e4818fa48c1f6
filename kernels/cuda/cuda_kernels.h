/*
 * The launchers of adnn's own CUDA kernels (the .cu files of kernels/cuda/),
 * callable from C.
 *
 * Every launcher queues its kernel(s) on the launch configuration's stream
 * and returns cudaGetLastError() after the launch, so that a bad
 * configuration or a missing kernel image is reported at once; failures of
 * the running kernel surface at the next synchronization.
 *
 * Kernels take the plugin ABI's normalized problem (adnn_plugin_<op> of
 * <adnn/plugin.h>) as the core validated it, plus a small "layout" struct
 * with what the plugin derived from it once, at plan creation (coalesced
 * dims, memory orders, which path applies). Nothing of the problem is copied
 * into kernel-private structs. All sizes and offsets are int64_t, so tensors
 * of more than 2^31 elements are indexed correctly. `dtype` is
 * ADNN_DTYPE_F32 or ADNN_DTYPE_F64 (the plugin refuses every other one).
 *
 * Names follow doc/kernels.md: kernels/cuda/<op>[-<algo>].cu holds
 * adnn_cuda_<op>[_<algo>]_launch.
 */
#ifndef ADNN_CUDA_KERNELS_H
#define ADNN_CUDA_KERNELS_H

#include <stdint.h>

#include <adnn/plugin.h>
#include <cuda_runtime_api.h>

#include "kernels/common/nd.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ADNN_CUDA_HIDDEN __attribute__((visibility("hidden")))
#else
#define ADNN_CUDA_HIDDEN
#endif

/** Where and how wide to launch: the context's stream and the size of its
 *  device, read once when a plan is created. */
typedef struct adnn_cuda_launch_config {
  cudaStream_t stream;
  int32_t sm_count;           /**< cudaDevAttrMultiProcessorCount */
  int32_t max_threads_per_sm; /**< cudaDevAttrMaxThreadsPerMultiProcessor */
} adnn_cuda_launch_config;

/** The iteration space of an elementwise op: the dims its tensors share,
 *  coalesced by adnn_nd_coalesce() (kernels/common/nd.h), with each tensor's
 *  strides in the order the launcher documents. `contiguous` is what
 *  adnn_nd_coalesce() returned: every tensor is then one run of stride 1, the
 *  linear index is the offset, and the vectorized path applies. */
typedef struct adnn_cuda_elementwise_layout {
  adnn_nd nd;
  int32_t contiguous;
} adnn_cuda_elementwise_layout;

/** The dims of a 4-D tensor from the slowest to the fastest in memory (see
 *  adnn_cuda__memory_order4). Kernels that run one thread per output element
 *  number the elements in this order, so that neighbouring threads write
 *  neighbouring addresses in NCHW, NHWC or any other layout. */
typedef struct adnn_cuda_memory_order {
  int32_t dims[4];
} adnn_cuda_memory_order;

/* ---- selftest.cu -------------------------------------------------------- */

/** Launches a one-thread kernel that writes `value` to *out on `stream` and
 *  returns the launch status. Context creation uses it to find out early
 *  whether the build carries code this device can run
 *  (cudaErrorNoKernelImageForDevice, cudaErrorUnsupportedPtxVersion) instead
 *  of failing at the first operation. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_selftest_launch(unsigned *out, unsigned value,
                                                        cudaStream_t stream);

/* ---- activation.cu ------------------------------------------------------ */

/** y = act(x) elementwise over p->count elements. `e` coalesces x and y
 *  (strides[0] x, strides[1] y); when e->contiguous, 16-byte vectors are used
 *  where the pointers allow. y == x is allowed (each element is read and
 *  written by the same thread). */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_activation_launch(const adnn_cuda_launch_config *l,
                                                         adnn_dtype dtype,
                                                         const adnn_plugin_activation *p,
                                                         const adnn_cuda_elementwise_layout *e,
                                                         const void *x, void *y);

/* ---- binary.cu ---------------------------------------------------------- */

/** y = op(alpha * a, beta * b) (p->op, p->alpha, p->beta) over `e`, which
 *  coalesces a, b and y (strides[0] a, strides[1] b, strides[2] y; broadcast
 *  operands have stride 0). e->contiguous: all three are one run of stride 1
 *  (no broadcasting), and 16-byte vectors are used where the pointers allow. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_binary_launch(const adnn_cuda_launch_config *l,
                                                     adnn_dtype dtype,
                                                     const adnn_plugin_binary *p,
                                                     const adnn_cuda_elementwise_layout *e,
                                                     const void *a, const void *b, void *y);

/* ---- pool2d.cu ---------------------------------------------------------- */

/** Max or average pooling of p (any strides, asymmetric padding, ceil_mode),
 *  one thread per element of y, numbered in y's memory order `y_order`. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_pool2d_launch(const adnn_cuda_launch_config *l,
                                                     adnn_dtype dtype,
                                                     const adnn_plugin_pool2d *p,
                                                     const adnn_cuda_memory_order *y_order,
                                                     const void *x, void *y);

/* ---- softmax.cu --------------------------------------------------------- */

/** A softmax seen as rows: every index of the dims other than the axis starts
 *  a row of `length` elements along the axis. */
typedef struct adnn_cuda_softmax_layout {
  adnn_nd rows;       /**< the non-axis dims, coalesced: strides[0] x, strides[1] y */
  int64_t row_count;  /**< the product of the non-axis dims */
  int64_t length;     /**< x.dims[axis] */
  int64_t x_stride;   /**< x.strides[axis] */
  int64_t y_stride;   /**< y.strides[axis] */
  int32_t block_per_row; /**< 1: one block per row; 0: one thread per row */
} adnn_cuda_softmax_layout;

/** Softmax or log-softmax (p->log) of x along p->axis, laid out by `s`. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_softmax_launch(const adnn_cuda_launch_config *l,
                                                      adnn_dtype dtype,
                                                      const adnn_plugin_softmax *p,
                                                      const adnn_cuda_softmax_layout *s,
                                                      const void *x, void *y);

/* ---- softmax_cross_entropy.cu ------------------------------------------- */

/** Softmax cross-entropy laid out for the kernels: logits (and dlogits)
 *  [N, C] at strides xs0, xs1; labels at lab_s; loss (NONE) or dloss (NONE)
 *  at loss_s. */
typedef struct adnn_cuda_xent_layout {
  int64_t N, C;
  int64_t xs0, xs1, lab_s, loss_s;
  int64_t ignore;
  int32_t reduction; /**< adnn_loss_reduction */
} adnn_cuda_xent_layout;

/** The workspace bytes of the loss: for MEAN and SUM one double per block
 *  of the row kernel's grid (its partial sums), else 0. */
ADNN_CUDA_HIDDEN size_t adnn_cuda_softmax_cross_entropy_workspace(const adnn_cuda_launch_config *l,
                                                                  const adnn_cuda_xent_layout *s);

/** The loss of p (one block per row). For MEAN and SUM, `workspace` holds
 *  adnn_cuda_softmax_cross_entropy_workspace bytes (per-block partial sums,
 *  added by one block in a fixed order). */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_softmax_cross_entropy_launch(
    const adnn_cuda_launch_config *l, adnn_dtype dtype, const adnn_cuda_xent_layout *s,
    const void *logits, const void *labels, void *loss, void *workspace);

/** d logits (one block per row). For MEAN, `workspace` holds one double (the
 *  number of samples not ignored). dlogits must not overlap logits. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_softmax_cross_entropy_backward_launch(
    const adnn_cuda_launch_config *l, adnn_dtype dtype, const adnn_cuda_xent_layout *s,
    const void *logits, const void *labels, const void *dloss, void *dlogits, void *workspace);

/* ---- optimizer.cu ------------------------------------------------------- */

/** Tensors per launch of the optimizer (their pointers travel in the
 *  kernel's parameters). */
#define ADNN_CUDA_OPTIMIZER_GROUP 24

/** One optimizer step of p over its tensor_count tensors (inputs: the
 *  gradients, of p->model_dtype when it is set; outputs: parameters, then
 *  states, then the model copies, as adnn_plugin_optimizer orders them),
 *  with p's current lr and step. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_optimizer_launch(const adnn_cuda_launch_config *l,
                                                        adnn_dtype dtype,
                                                        const adnn_plugin_optimizer *p,
                                                        const void *const *inputs,
                                                        void *const *outputs);

/* ---- loss_scale.cu ------------------------------------------------------ */

/** Tensors per launch of loss scaling (their pointers travel in the
 *  kernel's parameters). */
#define ADNN_CUDA_LOSS_SCALE_GROUP 32

/** Loss scaling of p (outputs: the tensors, then found_inf) by the F32
 *  scale in device memory (doc/ops.md "Loss scaling"). */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_loss_scale_launch(const adnn_cuda_launch_config *l,
                                                         const adnn_plugin_loss_scale *p,
                                                         const void *scale,
                                                         void *const *outputs);

/* ---- reduce.cu ---------------------------------------------------------- */

/** A reduction seen as outputs and runs: every index of `kept` is one output
 *  (strides[0] x, strides[1] y); its elements are, for every index of `outer`
 *  (the reduced dims but the innermost, strides[0] x), a run of `run` elements
 *  at x stride `run_stride` (the innermost reduced dim). */
typedef struct adnn_cuda_reduce_layout {
  adnn_nd kept;
  adnn_nd outer;
  int64_t outer_count;   /**< the product of outer's dims (1 for rank 0) */
  int64_t run, run_stride;
  int64_t outputs;       /**< y's elements */
  int64_t count;         /**< x's elements per output (the mean's divisor) */
  int32_t block_per_output; /**< 1: one block per output; 0: one thread per output */
} adnn_cuda_reduce_layout;

/** The reduction p->kind of x into y, laid out by `s`. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_reduce_launch(const adnn_cuda_launch_config *l,
                                                     adnn_dtype dtype,
                                                     const adnn_plugin_reduce *p,
                                                     const adnn_cuda_reduce_layout *s,
                                                     const void *x, void *y);

/* ---- norm.cu ------------------------------------------------------------ */

/** Layer / RMS norm rows: p->rows rows laid out by `rows`, each of p->D
 *  elements laid out by `cols` (strides[0] x, strides[1] y in both). */
typedef struct adnn_cuda_norm_layout {
  adnn_nd rows;
  adnn_nd cols;
} adnn_cuda_norm_layout;

/** Layer or RMS normalization (p->kind) of x, one block per row. gain and
 *  bias are NULL or packed vectors of p->D elements. y == x is allowed. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_norm_launch(const adnn_cuda_launch_config *l,
                                                   adnn_dtype dtype, const adnn_plugin_norm *p,
                                                   const adnn_cuda_norm_layout *s, const void *x,
                                                   const void *gain, const void *bias, void *y);

/* ---- batchnorm.cu ------------------------------------------------------- */

/** How batch norm walks x and y: when dense_channel_stride > 0 they share one
 *  dense layout, the loop index is the offset and the channel of offset i is
 *  (i / dense_channel_stride) % C; otherwise `nd` holds x's dims
 *  (strides[0] x, strides[1] y) and the channel is the index along dim 1. */
typedef struct adnn_cuda_batchnorm_layout {
  adnn_nd nd;
  int64_t count; /**< elements of x */
  int64_t dense_channel_stride;
} adnn_cuda_batchnorm_layout;

/** Batch normalization (inference) with p's fused activation; scale, shift,
 *  mean and var are packed vectors of p->C elements. y == x is allowed. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_batchnorm_launch(const adnn_cuda_launch_config *l,
                                                        adnn_dtype dtype,
                                                        const adnn_plugin_batchnorm *p,
                                                        const adnn_cuda_batchnorm_layout *s,
                                                        const void *x, const void *scale,
                                                        const void *shift, const void *mean,
                                                        const void *var, void *y);

/* ---- batchnorm_training.cu ---------------------------------------------- */

/** How batch-norm training and backward walk one channel: `pix` numbers its
 *  elements over every dim but C (coalesced; strides [0] x, [1] y or dx,
 *  [2] dy), and channel c starts at c * cstride[k] in tensor k. */
typedef struct adnn_cuda_bn_training_layout {
  adnn_nd pix;
  int64_t cstride[3];
} adnn_cuda_bn_training_layout;

/** Batch-norm training: y, the saved mean and inv_std, and the running
 *  statistics updated in place (packed vectors of p->fwd.C elements); one
 *  block per channel. y == x is allowed. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_bn_training_launch(
    const adnn_cuda_launch_config *l, adnn_dtype dtype, const adnn_plugin_batchnorm_training *p,
    const adnn_cuda_bn_training_layout *s, const void *x, const void *scale, const void *shift,
    void *y, void *saved_mean, void *saved_inv, void *run_mean, void *run_var);

/** Batch-norm backward: dx, dscale and dshift from x, dy, scale and the saved
 *  statistics; one block per channel. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_bn_backward_launch(
    const adnn_cuda_launch_config *l, adnn_dtype dtype, const adnn_plugin_batchnorm_backward *p,
    const adnn_cuda_bn_training_layout *s, const void *x, const void *dy, const void *scale,
    const void *mean, const void *inv_std, void *dx, void *dscale, void *dshift);

/* ---- norm_backward.cu --------------------------------------------------- */

/** Layer / RMS norm backward: the leading dims `rows` and the normalized dims
 *  `cols`, each coalesced with strides [0] x, [1] dy, [2] dx. */
typedef struct adnn_cuda_norm_backward_layout {
  adnn_nd rows;
  adnn_nd cols;
} adnn_cuda_norm_backward_layout;

/** dx (one block per row), then, when dgain or dbias is not NULL, their
 *  column sums (one thread per column) from the rows' statistics, which the
 *  first kernel leaves in `stats` (2 * p->fwd.rows doubles of device memory;
 *  unused otherwise). gain NULL when the forward op has none. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_norm_backward_launch(
    const adnn_cuda_launch_config *l, adnn_dtype dtype, const adnn_plugin_norm_backward *p,
    const adnn_cuda_norm_backward_layout *s, const void *x, const void *dy, const void *gain,
    void *dx, void *dgain, void *dbias, double *stats);

/* ---- conv2d-direct.cu --------------------------------------------------- */

/** The direct convolution of p with its bias (NULL when p->has_bias is 0) and
 *  activation, for any shape and strides; one thread per element of y,
 *  numbered in y's memory order `y_order`. `exact` accumulates in double (the
 *  "reference" algorithm), else in the element type (the "direct" one; F32
 *  for F16/BF16, whose y is rounded once). */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_conv2d_direct_launch(const adnn_cuda_launch_config *l,
                                                            adnn_dtype dtype, int exact,
                                                            const adnn_plugin_conv2d *p,
                                                            const adnn_cuda_memory_order *y_order,
                                                            const void *x, const void *w,
                                                            const void *bias, void *y);

/* ---- conv2d-int8.cu ----------------------------------------------------- */

/** The integer convolution of p (x I8 or U8, w I8, y I32, I8 or U8; adnn/ops.h)
 *  with its I32 bias (NULL when p->has_bias is 0), relu or identity and
 *  requantization (scales: the per-channel F32 scales, NULL when
 *  p->has_requant_scales is 0), exact, for any shape and strides; one
 *  thread per element of y, numbered in y's memory order `y_order`. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_conv2d_int8_launch(const adnn_cuda_launch_config *l,
                                                          const adnn_plugin_conv2d *p,
                                                          const adnn_cuda_memory_order *y_order,
                                                          const void *x, const void *w,
                                                          const void *bias, const void *scales,
                                                          void *y);

/* ---- conv2d-pad_pack.cu ------------------------------------------------- */

/** Copies the 4-D tensor `src` described by x into a packed, zero-padded
 *  buffer of [N, C, H + pad[0] + pad[1], W + pad[2] + pad[3]] (pads: top,
 *  bottom, left, right), NCHW (nhwc == 0) or NHWC (nhwc != 0): the input cuDNN
 *  sees when x is not packed in the plan's layout class or its padding is
 *  asymmetric. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_conv2d_pad_pack_launch(const adnn_cuda_launch_config *l,
                                                              adnn_dtype dtype,
                                                              const adnn_tensor_desc *x,
                                                              const int64_t pad[4], int nhwc,
                                                              const void *src, void *dst);

/* ---- conv2d-epilogue.cu ------------------------------------------------- */

/** y = act(src + bias[c]) over `nd` (not coalesced: strides[0] src,
 *  strides[1] y), where c is the index along dim `channel_dim` and bias (NULL:
 *  none) has element stride bias_stride. The epilogue of a cuDNN convolution
 *  that cuDNN cannot fuse, and, with the identity and no bias, the strided copy
 *  that repacks a filter. y == src is allowed with identical strides. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_conv2d_epilogue_launch(const adnn_cuda_launch_config *l,
                                                              adnn_dtype dtype,
                                                              const adnn_activation *act,
                                                              const adnn_nd *nd, int channel_dim,
                                                              const void *src, const void *bias,
                                                              int64_t bias_stride, void *y);

/** F16/BF16 conv2d through an F32 cuDNN convolution (cuda_conv2d.c): the
 *  epilogue across types, src of src_dtype, bias (NULL: none) and y of
 *  y_dtype, the sum and the activation in F32 and y rounded once; pairs
 *  F16/BF16 -> F32 (with the identity and no bias: the exact widening copy of
 *  a filter) and F32 -> F16/BF16. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_conv2d_epilogue_convert_launch(
    const adnn_cuda_launch_config *l, adnn_dtype src_dtype, adnn_dtype y_dtype,
    const adnn_activation *act, const adnn_nd *nd, int channel_dim, const void *src,
    const void *bias, int64_t bias_stride, void *y);

/** As adnn_cuda_conv2d_pad_pack_launch for an F16/BF16 `src` (dtype), each
 *  element widened exactly into the F32 buffer dst. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_conv2d_pad_widen_launch(const adnn_cuda_launch_config *l,
                                                               adnn_dtype dtype,
                                                               const adnn_tensor_desc *x,
                                                               const int64_t pad[4], int nhwc,
                                                               const void *src, void *dst);

/* ---- conv2d_backward_data-direct.cu ------------------------------------- */

/** dx = beta * dx + the gradient of the convolution p with respect to x, from
 *  dy (p->y's layout) and w, for any shape and strides; one thread per
 *  element of dx (p->x's layout), numbered in dx's memory order `dx_order`,
 *  without atomics. dx is read only when beta != 0. `exact` accumulates in
 *  double (the "reference" algorithm). */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_conv2d_backward_data_direct_launch(
    const adnn_cuda_launch_config *l, adnn_dtype dtype, int exact, const adnn_plugin_conv2d *p,
    double beta, const adnn_cuda_memory_order *dx_order, const void *dy, const void *w, void *dx);

/* ---- conv2d_backward_weights-direct.cu ---------------------------------- */

/** dw = beta * dw + the gradient of the convolution p with respect to w (p->w's
 *  layout), from x and dy, and, when db is not NULL, db = beta * db + the sum
 *  of dy over N, P and Q (element stride p->bias.strides[0]); one thread per
 *  output element, each summing in a fixed order (bitwise reproducible).
 *  Outputs are read only when beta != 0. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_conv2d_backward_weights_direct_launch(
    const adnn_cuda_launch_config *l, adnn_dtype dtype, int exact, const adnn_plugin_conv2d *p,
    double beta, const adnn_cuda_memory_order *dw_order, const void *x, const void *dy, void *dw,
    void *db);

/* ---- pool2d_backward.cu, activation_backward.cu, softmax_backward.cu ---- */

/** dx of pooling from x and dy (max: the window's first NaN, else first
 *  maximum, in row-major order; average: dy over the forward divisor), one
 *  thread per element of dx numbered in x's memory order `x_order`, each
 *  gathering from the windows that contain it (no atomics). */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_pool2d_backward_launch(
    const adnn_cuda_launch_config *l, adnn_dtype dtype, const adnn_plugin_pool2d_backward *p,
    const adnn_cuda_memory_order *x_order, const void *x, const void *dy, void *dx);

/** dx = dy * act'(x) over p->fwd.count elements. `e` coalesces x's layout
 *  (strides[0]: x and dx) and y's (strides[1]: dy). dx == dy is allowed. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_activation_backward_launch(
    const adnn_cuda_launch_config *l, adnn_dtype dtype, const adnn_plugin_activation_backward *p,
    const adnn_cuda_elementwise_layout *e, const void *x, const void *dy, void *dx);

/** Softmax / log-softmax backward (p->fwd.log) along the axis, laid out by
 *  `s`: x's layout (strides[0], x_stride) for dx and y's (strides[1],
 *  y_stride) for y and dy. One thread per slice; dx == dy is
 *  allowed. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_softmax_backward_launch(
    const adnn_cuda_launch_config *l, adnn_dtype dtype, const adnn_plugin_softmax_backward *p,
    const adnn_cuda_softmax_layout *s, const void *y, const void *dy, void *dx);

/* ---- reorder.cu ---------------------------------------------------------- */

/** y = x converted to y's dtype (kernels/common/convert.h) over `e`, which
 *  coalesces x and y (strides[0] x, strides[1] y); any dtype pair the core
 *  allows, cudaErrorInvalidValue for another. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_reorder_launch(const adnn_cuda_launch_config *l,
                                                      const adnn_plugin_reorder *p,
                                                      const adnn_cuda_elementwise_layout *e,
                                                      const void *x, void *y);

/* ---- quantize.cu --------------------------------------------------------- */

/** quantize: y (I8 or U8) = kernels/common/quantize.h's adnn_q_quantize of x
 *  (F32), per tensor (p->axis < 0: p->scale, p->zero_point) or per channel
 *  along p->axis (`scales` F32 and `zero_points` I32 device vectors of
 *  p->channels elements, the channel of element i being (i / p->inner) %
 *  p->channels). `e` coalesces x and y (strides[0] x, strides[1] y). */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_quantize_launch(const adnn_cuda_launch_config *l,
                                                       const adnn_plugin_quantize *p,
                                                       const adnn_cuda_elementwise_layout *e,
                                                       const void *x, const void *scales,
                                                       const void *zero_points, void *y);

/** dequantize: y (F32) = adnn_q_dequantize of x (I8 or U8), with the
 *  parameters and layout of adnn_cuda_quantize_launch. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_dequantize_launch(const adnn_cuda_launch_config *l,
                                                         const adnn_plugin_dequantize *p,
                                                         const adnn_cuda_elementwise_layout *e,
                                                         const void *x, const void *scales,
                                                         const void *zero_points, void *y);

/* ---- matmul_epilogue.cu ------------------------------------------------- */

/** matmul's epilogue in place on y after a GEMM wrote alpha * (a @ b) there:
 *  y = act(y + bias + residual_scale * r) over every element of p->y. bias
 *  (p->bias's stride) and r (p->residual's strides) may be NULL; r is never
 *  y (an in-place residual is the GEMM's C operand instead). */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_matmul_epilogue_launch(const adnn_cuda_launch_config *l,
                                                              adnn_dtype dtype,
                                                              const adnn_plugin_matmul *p,
                                                              const void *bias, const void *r,
                                                              void *y);

/** The whole matmul for any strides, one thread per element of y: the dot
 *  product over K accumulated in the dtype, then the epilogue. bias and r
 *  may be NULL; r may be y (in place). */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_matmul_direct_launch(const adnn_cuda_launch_config *l,
                                                            adnn_dtype dtype,
                                                            const adnn_plugin_matmul *p,
                                                            const void *a, const void *b,
                                                            const void *bias, const void *r,
                                                            void *y);

/** matmul's low-precision storage (doc/ops.md, "Matmul dtypes"), any
 *  strides, one thread per element of y: F16/BF16 a and b (F32 accumulation
 *  and epilogue, F32 bias, r in y's dtype, y F32/F16/BF16 rounded once as
 *  kernels/common/float16.h does), or I8/U8 a with an I8 b (exact
 *  accumulation, I32 bias, y I32 saturated or I8/U8 requantized with
 *  `scales`, p->requant_scales's F32 vector, or p->requant_scale when NULL).
 *  bias, r and scales may be NULL; r may be y (in place).
 *  cudaErrorInvalidValue for an a dtype other than those four. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_matmul_lowp_launch(const adnn_cuda_launch_config *l,
                                                          const adnn_plugin_matmul *p,
                                                          const void *a, const void *b,
                                                          const void *bias, const void *r,
                                                          const void *scales, void *y);

/* ---- attention.cu, attention_backward.cu -------------------------------- */

/** How the attention kernels run a problem, sized once at plan creation by
 *  adnn_cuda_attention_layout_init (kernels/cuda/attention.cuh has the tile
 *  shapes). */
typedef struct adnn_cuda_attention_layout {
  /** The head dim the flash kernels' tiles are compiled for (64, 128 or 256;
   *  F64: 64 or 128), the smallest that holds D and Dv; 0: beyond them all,
   *  the one-thread-per-row kernels run instead. */
  int32_t dmax;
  int32_t threads;        /**< per block of the flash kernels */
  int32_t rows_per_block; /**< query rows (forward, dq) or key rows (dk/dv) per block */
  uint32_t blocks;        /**< forward and dq: blocks over (batch, head, query tile) */
  uint32_t kv_blocks;     /**< dk/dv: blocks over (batch, kv head, key tile) */
  uint32_t row_blocks;    /**< one thread per (batch, head, query row) */
  uint32_t key_row_blocks; /**< one thread per (batch, kv head, key row) */
} adnn_cuda_attention_layout;

/** Fills *s for problem p of `dtype` on the device described by l. */
ADNN_CUDA_HIDDEN void adnn_cuda_attention_layout_init(const adnn_cuda_launch_config *l,
                                                      adnn_dtype dtype,
                                                      const adnn_plugin_attention *p,
                                                      adnn_cuda_attention_layout *s);

/** Attention forward: o and, when lse is not NULL, lse (p->has_lse), from q,
 *  k, v, bias (NULL without p->has_bias) and key_lengths (device I32 [B] at its stride;
 *  NULL without p->has_key_lengths). One block per (batch, head, query
 *  tile), K/V tiles through shared memory, online softmax. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_attention_launch(
    const adnn_cuda_launch_config *l, adnn_dtype dtype, const adnn_plugin_attention *p,
    const adnn_cuda_attention_layout *s, const void *q, const void *k, const void *v,
    const void *bias, const int32_t *key_lengths, void *o, void *lse);

/** Attention backward: dq, dk, dv from q, k, v, o, dout (o's layout), lse,
 *  bias and key_lengths (NULL when absent), for the forward problem p.
 *  `rowsum` is device memory of B * H * Sq elements of the dtype (the plan's
 *  workspace) that receives D = rowsum(dout * o) before the dk/dv and dq
 *  kernels read it. Deterministic: no atomics, fixed summation orders. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_attention_backward_launch(
    const adnn_cuda_launch_config *l, adnn_dtype dtype, const adnn_plugin_attention *p,
    const adnn_cuda_attention_layout *s, const void *q, const void *k, const void *v,
    const void *o, const void *dout, const void *lse, const void *bias,
    const int32_t *key_lengths, void *dq, void *dk, void *dv, void *rowsum);

#ifdef __cplusplus
}
#endif

#endif /* ADNN_CUDA_KERNELS_H */
