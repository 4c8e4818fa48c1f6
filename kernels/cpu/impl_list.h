/*
 * The CPU implementations of every op of the manifest (ADNN_OP_LIST), each
 * op's list in the order of the plugin's preference. The order is the
 * heuristic: the plugin's own choice is the first implementation that
 * supports the problem and, when it has a preferred() gate, is preferred;
 * the tuner's candidates are that choice first, then every other
 * implementation that supports the problem in list order. Nothing else in
 * the plugin knows an op or an implementation by name.
 *
 * For every op NAME of the manifest:
 *   ADNN_CPU_<NAME>_IMPLS(X)   X(op, impl) per implementation, defined as
 *                              adnn_cpu_<op>_<impl> (kernels/cpu/<op>.c,
 *                              kernels/cpu/<op>-<impl>.c, or reference.c for
 *                              the reference loops of kernels/ref/);
 *   ADNN_CPU_<NAME>_FORCED     an adnn_cpu_forced_fn giving the name of the
 *                              implementation the problem forces, or NULL
 *                              when the op's problem cannot force one.
 * An op of the manifest without these does not compile: cpu_kernels.h
 * checks that every op has them, and the plugin's table in
 * backends/cpu/cpu_plan.c expands them for every op.
 *
 * Included by kernels/cpu/cpu_kernels.h.
 */
#ifndef ADNN_CPU_IMPL_LIST_H
#define ADNN_CPU_IMPL_LIST_H

#ifndef ADNN_CPU_KERNELS_H
#error "include kernels/cpu/cpu_kernels.h, not kernels/cpu/impl_list.h"
#endif

/* conv2d. Depthwise and 1x1 convolutions have one clearly best method, and
 * their supports() only accept those shapes. Winograd F(2x2, 3x3) does 2.25x
 * fewer multiplications than direct 3x3 but pays for its transforms per tile,
 * so it is preferred only with enough channels and tiles (the crossover
 * measured, see conv2d-winograd_f2x3.c); direct (F32, no im2col copy) is
 * preferred for the other filters larger than 1x1, where it measured faster
 * than im2col_gemm (doc/cpu.md); im2col_gemm runs any geometry of the packed
 * layouts; reference runs everything else, and F64. F16 and BF16 run "lowp"
 * (widened to F32 for the F32 algorithm this order picks, one output
 * rounding; conv2d-lowp.c), else the reference loops. I8 and U8 inputs run
 * "int8" (the integer GEMM blocks on gathered columns, exact; conv2d-int8.c)
 * or the reference loops. The tuner replaces this guess with measurements. */
#define ADNN_CPU_CONV2D_IMPLS(X) \
  X(conv2d, int8)                \
  X(conv2d, lowp)                \
  X(conv2d, depthwise_direct)    \
  X(conv2d, gemm_1x1)            \
  X(conv2d, winograd_f2x3)       \
  X(conv2d, winograd_f4x3)       \
  X(conv2d, direct)              \
  X(conv2d, im2col_gemm)         \
  X(conv2d, reference)

/** The implementation a conv2d problem forces: its `algorithm` (from the
 *  descriptor or ADNN_CONV2D_ALGO) by name, or NULL for AUTO. */
static inline const char *adnn_cpu_conv2d_forced(const void *problem) {
  const adnn_plugin_conv2d *p = (const adnn_plugin_conv2d *)problem;
  if (p->algorithm == ADNN_CONV2D_ALGO_AUTO) return NULL;
  return adnn_plugin_conv2d_algorithm_name(p->algorithm);
}
#define ADNN_CPU_CONV2D_FORCED adnn_cpu_conv2d_forced

/* The other ops: their vectorized F32 kernels (reported as "cpu_simd"), then
 * the reference loops for F64. */
#define ADNN_CPU_POOL2D_IMPLS(X) X(pool2d, simd) X(pool2d, reference)
#define ADNN_CPU_POOL2D_FORCED NULL

#define ADNN_CPU_ACTIVATION_IMPLS(X) X(activation, simd) X(activation, reference)
#define ADNN_CPU_ACTIVATION_FORCED NULL

#define ADNN_CPU_SOFTMAX_IMPLS(X) X(softmax, simd) X(softmax, reference)
#define ADNN_CPU_SOFTMAX_FORCED NULL

#define ADNN_CPU_BATCHNORM_IMPLS(X) X(batchnorm, simd) X(batchnorm, reference)
#define ADNN_CPU_BATCHNORM_FORCED NULL

#define ADNN_CPU_NORM_IMPLS(X) X(norm, simd) X(norm, reference)
#define ADNN_CPU_NORM_FORCED NULL

#define ADNN_CPU_BINARY_IMPLS(X) X(binary, simd) X(binary, reference)
#define ADNN_CPU_BINARY_FORCED NULL

#define ADNN_CPU_REDUCE_IMPLS(X) X(reduce, simd) X(reduce, reference)
#define ADNN_CPU_REDUCE_FORCED NULL

/* conv2d backward data and backward weights, F32 and F64 (doc/cpu.md): a
 * depthwise problem has one clearly best method (direct), a 1x1 stride-1
 * unpadded one is a plain GEMM per image and group; im2col_gemm (GEMM +
 * col2im for data, im2col + GEMM for weights) runs any geometry of the packed
 * layouts; reference runs everything else (padded strides). F16 and BF16 run "lowp"
 * (widened to F32 for the F32 implementation this order picks, one rounding
 * of each output; kernels/cpu/lowp_widen.c), else the reference loops. The
 * forward's algorithm enum names the backward algorithms; a forced one is
 * looked up by that name (so a forced algorithm runs F32 and F64 only, as
 * for the forward). */
#define ADNN_CPU_CONV2D_BACKWARD_DATA_IMPLS(X) \
  X(conv2d_backward_data, lowp)                \
  X(conv2d_backward_data, depthwise_direct)    \
  X(conv2d_backward_data, gemm_1x1)            \
  X(conv2d_backward_data, im2col_gemm)         \
  X(conv2d_backward_data, reference)

/** The implementation a conv2d backward-data problem forces (by name), or
 *  NULL for AUTO. */
static inline const char *adnn_cpu_conv2d_backward_data_forced(const void *problem) {
  const adnn_plugin_conv2d_backward_data *p = (const adnn_plugin_conv2d_backward_data *)problem;
  if (p->algorithm == ADNN_CONV2D_ALGO_AUTO) return NULL;
  return adnn_plugin_conv2d_algorithm_name(p->algorithm);
}
#define ADNN_CPU_CONV2D_BACKWARD_DATA_FORCED adnn_cpu_conv2d_backward_data_forced

#define ADNN_CPU_CONV2D_BACKWARD_WEIGHTS_IMPLS(X) \
  X(conv2d_backward_weights, lowp)                \
  X(conv2d_backward_weights, depthwise_direct)    \
  X(conv2d_backward_weights, gemm_1x1)            \
  X(conv2d_backward_weights, im2col_gemm)         \
  X(conv2d_backward_weights, reference)

/** The implementation a conv2d backward-weights problem forces, or NULL. */
static inline const char *adnn_cpu_conv2d_backward_weights_forced(const void *problem) {
  const adnn_plugin_conv2d_backward_weights *p =
      (const adnn_plugin_conv2d_backward_weights *)problem;
  if (p->algorithm == ADNN_CONV2D_ALGO_AUTO) return NULL;
  return adnn_plugin_conv2d_algorithm_name(p->algorithm);
}
#define ADNN_CPU_CONV2D_BACKWARD_WEIGHTS_FORCED adnn_cpu_conv2d_backward_weights_forced

/* The backward passes of pooling, activations and softmax: vectorized F32
 * kernels (kernels/cpu/<op>.c), then the reference loops for F64. */
#define ADNN_CPU_POOL2D_BACKWARD_IMPLS(X) X(pool2d_backward, simd) X(pool2d_backward, reference)
#define ADNN_CPU_POOL2D_BACKWARD_FORCED NULL

#define ADNN_CPU_ACTIVATION_BACKWARD_IMPLS(X) \
  X(activation_backward, simd) X(activation_backward, reference)
#define ADNN_CPU_ACTIVATION_BACKWARD_FORCED NULL

#define ADNN_CPU_SOFTMAX_BACKWARD_IMPLS(X) \
  X(softmax_backward, simd) X(softmax_backward, reference)
#define ADNN_CPU_SOFTMAX_BACKWARD_FORCED NULL

/* Batch-norm training and backward, layer / RMS norm backward: vectorized F32
 * kernels for the packed layouts (kernels/cpu/batchnorm_training.c,
 * norm_backward.c), the reference loops for F64 and other strides. F16 and
 * BF16 data (F32 parameters and statistics) run "lowp", the F32 kernel on
 * widened data (kernels/cpu/lowp_widen.c), where the F32 kernel runs the
 * layout and the outputs are dense; else the reference loops. The same holds
 * for every "lowp" entry of the lists below. */
#define ADNN_CPU_BATCHNORM_TRAINING_IMPLS(X) \
  X(batchnorm_training, lowp) X(batchnorm_training, simd) X(batchnorm_training, reference)
#define ADNN_CPU_BATCHNORM_TRAINING_FORCED NULL
#define ADNN_CPU_BATCHNORM_BACKWARD_IMPLS(X) \
  X(batchnorm_backward, lowp) X(batchnorm_backward, simd) X(batchnorm_backward, reference)
#define ADNN_CPU_BATCHNORM_BACKWARD_FORCED NULL
#define ADNN_CPU_NORM_BACKWARD_IMPLS(X) \
  X(norm_backward, lowp) X(norm_backward, simd) X(norm_backward, reference)
#define ADNN_CPU_NORM_BACKWARD_FORCED NULL

/* Softmax cross-entropy and its backward: F32 vectorized rows (F16/BF16
 * widened, "lowp"), the reference for F64. */
#define ADNN_CPU_SOFTMAX_CROSS_ENTROPY_IMPLS(X) \
  X(softmax_cross_entropy, lowp) X(softmax_cross_entropy, simd)  \
      X(softmax_cross_entropy, reference)
#define ADNN_CPU_SOFTMAX_CROSS_ENTROPY_FORCED NULL
#define ADNN_CPU_SOFTMAX_CROSS_ENTROPY_BACKWARD_IMPLS(X) \
  X(softmax_cross_entropy_backward, lowp) X(softmax_cross_entropy_backward, simd) \
      X(softmax_cross_entropy_backward, reference)
#define ADNN_CPU_SOFTMAX_CROSS_ENTROPY_BACKWARD_FORCED NULL

/* The optimizer: one threaded implementation for F32 (vectorized) and F64. */
#define ADNN_CPU_OPTIMIZER_IMPLS(X) X(optimizer, simd) X(optimizer, reference)

/* Loss scaling: one threaded implementation for every dtype (F32 vectorized,
 * F16/BF16 through the F32 buffer, F64 scalar), then the reference. */
#define ADNN_CPU_LOSS_SCALE_IMPLS(X) X(loss_scale, simd) X(loss_scale, reference)
#define ADNN_CPU_LOSS_SCALE_FORCED NULL
#define ADNN_CPU_OPTIMIZER_FORCED NULL

/* matmul (kernels/cpu/matmul.c): F32 on adnn's GEMM engine with the epilogue
 * in its per-tile store hook (AVX2+FMA, AVX-512); then OpenBLAS GEMMs over
 * tiles of y with the fused epilogue, F32 and F64; both for layouts with a
 * unit stride in one of the last two dims of a, b and y; the reference for
 * every other layout. F16/BF16 inputs: first "widen_sgemm" (a and b widened
 * whole to F32 in the workspace, then the plugin's SGEMM with the epilogue
 * in its store hook; kernels/cpu/matmul_lowp.c), preferred unless the
 * matrices are small; then, and for I8/U8 inputs, "lowp" (tiled blocks that
 * widen while packing, kernels/cpu/matmul_lowp.c, gemm_lowp.c) for any
 * layout, where this ISA has a path; else the reference. */
#define ADNN_CPU_MATMUL_IMPLS(X)                                                     \
  X(matmul, widen_sgemm) X(matmul, lowp) X(matmul, engine) X(matmul, blas) \
      X(matmul, reference)
#define ADNN_CPU_MATMUL_FORCED NULL
/* Attention: the flash-style tiled forward (F32 and F64, vectorized; F16 and
 * BF16 widened, "lowp", with lse in F32), then the reference loops. */
#define ADNN_CPU_ATTENTION_IMPLS(X) \
  X(attention, lowp) X(attention, flash) X(attention, reference)
#define ADNN_CPU_ATTENTION_FORCED NULL

/* Attention backward: the flash-style tiled kernel (kernels/cpu/attention_backward.c)
 * for F32 and F64 at any strides (F16 and BF16 widened, "lowp", with dense
 * dq, dk and dv), then the reference loops. */
#define ADNN_CPU_ATTENTION_BACKWARD_IMPLS(X) \
  X(attention_backward, lowp) X(attention_backward, simd) X(attention_backward, reference)
#define ADNN_CPU_ATTENTION_BACKWARD_FORCED NULL

/* reorder (kernels/cpu/reorder.c): coalesced rows, 32 x 32 tiles for
 * transposes and vectorized conversions, every dtype pair; the reference
 * loops last. */
#define ADNN_CPU_REORDER_IMPLS(X) X(reorder, simd) X(reorder, reference)
#define ADNN_CPU_REORDER_FORCED NULL

/* quantize and dequantize (kernels/cpu/quantize.c): packed x and y, AVX2
 * with a scalar tail, per tensor or per channel; the reference loops for
 * every other layout. */
#define ADNN_CPU_QUANTIZE_IMPLS(X) X(quantize, simd) X(quantize, reference)
#define ADNN_CPU_QUANTIZE_FORCED NULL
#define ADNN_CPU_DEQUANTIZE_IMPLS(X) X(dequantize, simd) X(dequantize, reference)
#define ADNN_CPU_DEQUANTIZE_FORCED NULL

/** Whether the core changes an op's problem between executions (the
 *  optimizer's lr and step, adnn_plan_set_optimizer_step): the plugin then
 *  re-reads the core's problem into its copy before every run. */
#define ADNN_CPU_LIVE_PROBLEM(kind) ((kind) == ADNN_PLUGIN_OP_OPTIMIZER)

#endif
