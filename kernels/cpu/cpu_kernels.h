/*
 * The CPU kernels behind the DNN plans of the CPU plugin.
 *
 * Naming: adnn_cpu_<op>_<algorithm>_<dtype> says what a kernel computes and how.
 * Every kernel receives a descriptor already validated by the core (see
 * adnn_plugin_op in adnn/plugin.h): shapes agree, sizes >= 1, binary operands
 * broadcast to y's rank with stride 0, softmax axis non-negative. Kernels that
 * only handle particular layouts say so in their `supports` function; the plan
 * falls back to the reference kernels (kernels/ref/) for anything else.
 *
 * SIMD: each file with vector code compiles its AVX2 and AVX-512 variants with
 * __attribute__((target(...))) and picks one at plan creation from
 * adnn_cpu_features_get() (CPUID and XCR0), with a portable C fallback.
 */
#ifndef ADNN_CPU_KERNELS_H
#define ADNN_CPU_KERNELS_H

#include <stddef.h>

#include <adnn/plugin.h>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_parallel.h"

/* Whether t is packed NCHW ([N,C,H,W] dims, row-major strides) or packed NHWC
 * (the same dims with strides {H*W*C, 1, W*C, C}). */
int adnn_cpu_is_nchw(const adnn_tensor_desc *t);
int adnn_cpu_is_nhwc(const adnn_tensor_desc *t);

/* Applies a conv/batchnorm epilogue to n contiguous floats in place:
 * v = act(v + bias) (bias may be 0). Vectorized; used by every conv algorithm
 * so the epilogue is fused into the pass that writes y. */
void adnn_cpu_epilogue_f32(float *v, size_t n, float bias, const adnn_activation *act);
/* The same with a per-element bias vector (bias[i] for v[i]), for NHWC rows. */
void adnn_cpu_epilogue_vec_f32(float *v, size_t n, const float *bias, const adnn_activation *act);
/* Scalar activation, the definition the vector code must match. */
float adnn_cpu_activation_scalar_f32(const adnn_activation *act, float x);

/* ---- conv2d algorithms ---------------------------------------------------- */

typedef struct adnn_cpu_conv2d_algo {
  adnn_conv2d_algorithm id;
  /* 1 if this algorithm can run the problem (layout, shape, dtype). When it
   * cannot, writes a short reason ("needs a 3x3 filter with stride 1"). */
  int (*supports)(const adnn_conv2d_desc *d, char *why, size_t why_size);
  /* Workspace bytes for the problem when run with `threads` threads. */
  size_t (*workspace_bytes)(const adnn_conv2d_desc *d, int threads);
  /* y = act(conv(x, w) + bias); bias is NULL when !d->has_bias. Uses
   * adnn_cpu_parallel_for internally. */
  void (*run)(const adnn_conv2d_desc *d, const void *x, const void *w, const void *bias, void *y,
              void *workspace);
} adnn_cpu_conv2d_algo;

extern const adnn_cpu_conv2d_algo adnn_cpu_conv2d_im2col_gemm;    /* conv2d_im2col_gemm.c */
extern const adnn_cpu_conv2d_algo adnn_cpu_conv2d_gemm_1x1;       /* conv2d_gemm_1x1.c */
extern const adnn_cpu_conv2d_algo adnn_cpu_conv2d_winograd_f2x3;  /* conv2d_winograd_f2x3.c */
extern const adnn_cpu_conv2d_algo adnn_cpu_conv2d_depthwise_direct; /* conv2d_depthwise_direct.c */

/* ---- other ops: one entry point per op, F32; layouts any (strided) unless a
 * supports function says otherwise. Each returns nothing: inputs are valid. ---- */

/* Each op has a "prepare" step at plan creation that picks the code path
 * (SIMD level, contiguous fast path or strided path) and stores it in a small
 * opaque state, so execution does no decisions beyond a switch. */
typedef struct adnn_cpu_op_state {
  int path;      /* kernel-specific choice made at plan creation */
  int simd;      /* 0 scalar, 2 AVX2, 3 AVX-512 */
  int64_t inner; /* kernel-specific sizes computed at plan creation */
  int64_t outer;
  int64_t axis_len;
} adnn_cpu_op_state;

void adnn_cpu_pool2d_prepare(const adnn_pool2d_desc *d, adnn_cpu_op_state *s);
void adnn_cpu_pool2d_f32(const adnn_pool2d_desc *d, const adnn_cpu_op_state *s, const float *x,
                         float *y);

void adnn_cpu_activation_prepare(const adnn_activation_desc *d, adnn_cpu_op_state *s);
void adnn_cpu_activation_f32(const adnn_activation_desc *d, const adnn_cpu_op_state *s,
                             const float *x, float *y);

void adnn_cpu_softmax_prepare(const adnn_softmax_desc *d, adnn_cpu_op_state *s);
void adnn_cpu_softmax_f32(const adnn_softmax_desc *d, const adnn_cpu_op_state *s, const float *x,
                          float *y);

void adnn_cpu_batchnorm_prepare(const adnn_batchnorm_desc *d, adnn_cpu_op_state *s);
void adnn_cpu_batchnorm_f32(const adnn_batchnorm_desc *d, const adnn_cpu_op_state *s,
                            const float *x, const float *scale, const float *shift,
                            const float *mean, const float *var, float *y);

void adnn_cpu_norm_prepare(const adnn_norm_desc *d, adnn_cpu_op_state *s);
void adnn_cpu_norm_f32(const adnn_norm_desc *d, const adnn_cpu_op_state *s, const float *x,
                       const float *gain, const float *bias, float *y);

void adnn_cpu_binary_prepare(const adnn_binary_desc *d, adnn_cpu_op_state *s);
void adnn_cpu_binary_f32(const adnn_binary_desc *d, const adnn_cpu_op_state *s, const float *a,
                         const float *b, float *y);

#endif
