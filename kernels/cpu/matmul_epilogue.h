/*
 * The matmul epilogue on the CPU: y = act(C + bias + residual_scale * r) on
 * a block of C that a GEMM has just written (C = alpha * (a @ b) there), so
 * that the block is still in cache. It is kept apart from the matmul kernel
 * so that any GEMM can call it on the tiles it stores: the OpenBLAS path of
 * kernels/cpu/matmul.c today, our own GEMM microkernels later (their store
 * hook calls adnn_cpu_matmul_epilogue_apply on each finished tile).
 *
 * Orientation: the epilogue sees C as a row-major block, element (i, j) at
 * c[i * ldc + j]. Normally a block row is a row of y (bias varies along j).
 * When y is stored column-major the GEMM computes y^T instead and the block's
 * rows are y's columns: `transposed` says so, and the bias then varies along
 * i. The residual's strides are given in the block's orientation.
 *
 * The F32 arithmetic is the vector code of kernels/cpu/simd.h (the same
 * vact as the activation op and the conv epilogues), one copy per
 * instruction set chosen at init; F64 uses the reference definition of each
 * activation (kernels/ref), element by element.
 */
#ifndef ADNN_CPU_MATMUL_EPILOGUE_H
#define ADNN_CPU_MATMUL_EPILOGUE_H

#include <stddef.h>
#include <stdint.h>

#include <adnn/plugin.h>

/** One instruction set's F32 epilogue on an m x n block (see
 *  adnn_cpu_matmul_epilogue_apply). bias_col: n values (NULL: none);
 *  bias_row: m values (NULL: none); r: the block's residual, element (i, j)
 *  at r[i * r_rs + j * r_cs] (NULL: none). */
typedef void (*adnn_cpu_matmul_epilogue_f32_fn)(const adnn_activation *act, float *c,
                                                int64_t ldc, int64_t m, int64_t n,
                                                const float *bias_col, const float *bias_row,
                                                const float *r, int64_t r_rs, int64_t r_cs,
                                                float rs);

/** An epilogue: what init binds once per plan (activation, instruction set,
 *  orientation) and what adnn_cpu_matmul_epilogue_bind sets per execution
 *  and batch matrix (the bias and residual pointers). Held by value. */
typedef struct adnn_cpu_matmul_epilogue {
  adnn_activation activation;
  adnn_dtype dtype;          /**< F32 or F64 */
  int transposed;            /**< block rows are y's columns (see the top) */
  adnn_cpu_matmul_epilogue_f32_fn f32; /**< the instruction set's F32 code */
  /* Per execution (bind): */
  const void *bias;          /**< N contiguous values of the dtype, or NULL */
  const void *r;             /**< this batch matrix's residual, or NULL */
  int64_t r_rs, r_cs;        /**< r's strides along block rows and columns */
  double residual_scale;
} adnn_cpu_matmul_epilogue;

/** Binds the activation and instruction set (ADNN_CPU_ISA_*) for dtype;
 *  no bias and no residual until bound. */
void adnn_cpu_matmul_epilogue_init(adnn_cpu_matmul_epilogue *e, const adnn_activation *act,
                                   adnn_dtype dtype, int transposed, int isa);

/** Sets the per-execution operands: bias (N contiguous values, or NULL), the
 *  residual of the current batch matrix (r, or NULL) with its strides in
 *  the block's orientation, and its scale. */
static inline void adnn_cpu_matmul_epilogue_bind(adnn_cpu_matmul_epilogue *e, const void *bias,
                                                 const void *r, int64_t r_rs, int64_t r_cs,
                                                 double residual_scale) {
  e->bias = bias;
  e->r = r;
  e->r_rs = r_rs;
  e->r_cs = r_cs;
  e->residual_scale = residual_scale;
}

/** Whether applying e changes anything (a bias, a residual or an activation
 *  other than the identity). */
static inline int adnn_cpu_matmul_epilogue_active(const adnn_cpu_matmul_epilogue *e) {
  return e->bias != NULL || e->r != NULL || e->activation.kind != ADNN_ACTIVATION_IDENTITY;
}

/** c[i * ldc + j] = act(c[i * ldc + j] + bias + residual_scale * r) for the
 *  m x n block whose first element is element (row0, col0) of the (possibly
 *  transposed, see the top) batch matrix: bias[col0 + j] (or bias[row0 + i]
 *  when transposed) and r at (row0 + i, col0 + j). c is of e's dtype.
 *  Thread-safe: e is only read. */
void adnn_cpu_matmul_epilogue_apply(const adnn_cpu_matmul_epilogue *e, void *c, int64_t ldc,
                                    int64_t m, int64_t n, int64_t row0, int64_t col0);

#endif
