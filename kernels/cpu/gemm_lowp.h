/*
 * The low-precision GEMM paths of the CPU plugin (kernels/cpu/gemm_lowp.c),
 * used by the matmul's "lowp" implementation (kernels/cpu/matmul_lowp.c):
 *
 *   F16 / BF16 inputs, F32 accumulation: the operands are widened to F32
 *   (exactly) while they are packed into the F32 engine's panels
 *   (gemm_kernel.h's format), and the engine's F32 microkernel runs on them.
 *
 *   I8 x I8 and U8 x I8, exact I32 accumulation: the operands are widened to
 *   16 bits while packed into pairs along k, and an AVX2 microkernel
 *   multiplies the pairs with vpmaddwd (two 16 x 16 -> 32-bit products
 *   summed per lane, exact: |sum| <= 2 * 255 * 128 < 2^31) and adds them
 *   into 32-bit accumulators. vpmaddubsw is not used: it saturates its
 *   16-bit pair sums (255 * 127 * 2 > 2^15).
 *
 * A block computes one tile of C, at most ADNN_CPU_LOWP_RM rows by
 * ADNN_CPU_LOWP_NC columns, into a row-major scratch of F32 or I32 (the
 * caller's epilogue then converts it into y); operands may have ANY element
 * strides (rs: between rows, cs: between columns). The caller threads over
 * tiles and hands every thread its own packing buffers
 * (adnn_cpu_lowp_thread_bytes). No allocation, no CPU probing: the path is
 * chosen by adnn_cpu_lowp_choose from the plugin's ISA level and features.
 */
#ifndef ADNN_CPU_GEMM_LOWP_H
#define ADNN_CPU_GEMM_LOWP_H

#include <stddef.h>
#include <stdint.h>

#include "adnn.h"
#include "kernels/cpu/cpu_features.h"

/** Tile sides of one block (rows of C, columns of C) and the k block. */
#define ADNN_CPU_LOWP_RM 384
#define ADNN_CPU_LOWP_NC 256
#define ADNN_CPU_LOWP_KC 256

/** Which kernel family computes a block (adnn_cpu_lowp_path.kind). */
typedef enum adnn_cpu_lowp_kind {
  ADNN_CPU_LOWP_FLOAT = 0, /**< F16/BF16 -> F32 panels, F32 microkernel */
  ADNN_CPU_LOWP_INT8 = 1,  /**< I8/U8 x I8 -> I32 */
} adnn_cpu_lowp_kind;

/** One row of the dispatch table: a named path, the input dtypes it serves
 *  and whether this machine can run it (see gemm_lowp.c). */
typedef struct adnn_cpu_lowp_path {
  const char *name;
  adnn_cpu_lowp_kind kind;
  /** 1 when the ISA level and features allow it and its kernel exists. */
  int (*usable)(int isa, const adnn_cpu_features *f);
  int mr, nr; /**< the register tile the packed panels are cut for */
  /** The block: Cblk[i][j] (ldc) = sum_p A[i][p] B[p][j] over the whole k,
   *  i < rows <= RM, j < cols <= NC; F32 for FLOAT, I32 for INT8. */
  void (*block)(const struct adnn_cpu_lowp_path *path, adnn_dtype at, adnn_dtype bt,
                const void *a, int64_t a_rs, int64_t a_cs, const void *b, int64_t b_rs,
                int64_t b_cs, int64_t rows, int64_t cols, int64_t k, void *c, int64_t ldc,
                void *scratch);
  const void *ukr; /**< the F32 microkernel (gemm_kernel.h) for FLOAT paths */
} adnn_cpu_lowp_path;

/** The best path for input dtype `at` on this ISA level (env->isa, capped
 *  by ADNN_CPU_SIMD) and these features; NULL when none (the reference
 *  then runs). */
const adnn_cpu_lowp_path *adnn_cpu_lowp_choose(adnn_dtype at, int isa,
                                               const adnn_cpu_features *f);

/** Bytes of packing scratch one thread needs for `path`. */
size_t adnn_cpu_lowp_thread_bytes(const adnn_cpu_lowp_path *path);

/** n F32 values at src rounded to `t` (F16 or BF16) into dst, bit for bit
 *  as adnn_f32_to_f16 / adnn_f32_to_bf16 (vector code where `path` is a
 *  float path, whose ISA has F16C and AVX2). */
void adnn_cpu_lowp_narrow(const adnn_cpu_lowp_path *path, adnn_dtype t, const float *src,
                          int64_t n, uint16_t *dst);

#endif
