/*
 * The low-precision GEMM paths of the CPU plugin (kernels/cpu/gemm_lowp.c),
 * used by the matmul's "lowp" implementation (kernels/cpu/matmul_lowp.c):
 *
 *   F16 / BF16 inputs, F32 accumulation: the operands are widened to F32
 *   (exactly) while they are packed into the F32 engine's panels
 *   (gemm_kernel.h's format), and the engine's F32 microkernel runs on them.
 *
 *   BF16 inputs on a CPU with AVX-512-BF16: the operands stay BF16, packed
 *   in pairs along k, and vdpbf16ps multiplies a pair of A by a pair of B
 *   (exact products) and adds both into F32 accumulators, rounding each
 *   addition to nearest even (twice the F32 microkernel's multiply-adds
 *   per instruction). The instruction reads subnormal inputs as zero and
 *   flushes subnormal results: a tile whose operands hold a subnormal BF16
 *   value is recomputed by the widening path instead (gemm_lowp.c).
 *
 *   I8 x I8 and U8 x I8, exact I32 accumulation: with AVX-512-VNNI the
 *   operands stay 8-bit, packed in quads along k, and vpdpbusd multiplies
 *   four unsigned bytes of A by four signed bytes of B and adds the four
 *   products into 32 bits (without saturation); an I8 A is read as the
 *   unsigned a + 128 and 128 * sum_k b subtracted after the k loop, which is
 *   exact modulo 2^32 and therefore exact wherever the true sum fits (the
 *   core's K limit). Otherwise the operands are widened to 16 bits in pairs
 *   along k, and an AVX2 microkernel multiplies the pairs with vpmaddwd
 *   (two 16 x 16 -> 32-bit products summed per lane, exact: |sum| <= 2 *
 *   255 * 128 < 2^31) and adds them into 32-bit accumulators. vpmaddubsw is
 *   not used: it saturates its 16-bit pair sums (255 * 127 * 2 > 2^15).
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
  /** The dtypes of a (and b, or b = I8 for integer a) it serves: bit
   *  (1u << dtype) per dtype. */
  unsigned dtypes;
  /** 1 when the ISA level and features allow it and its kernel exists. */
  int (*usable)(int isa, const adnn_cpu_features *f);
  int mr, nr; /**< the register tile the packed panels are cut for */
  /** The block: Cblk[i][j] (ldc) = sum_p A[i][p] B[p][j] over the whole k,
   *  i < rows <= RM, j < cols <= NC; F32 for FLOAT, I32 for INT8. */
  void (*block)(const struct adnn_cpu_lowp_path *path, adnn_dtype at, adnn_dtype bt,
                const void *a, int64_t a_rs, int64_t a_cs, const void *b, int64_t b_rs,
                int64_t b_cs, int64_t rows, int64_t cols, int64_t k, void *c, int64_t ldc,
                void *scratch);
  /** The F32 microkernel (gemm_kernel.h) of the FLOAT paths that widen,
   *  and the widening fallback of avx512_bf16 (its subnormal tiles). */
  const void *ukr;
} adnn_cpu_lowp_path;

/** The dispatch table, best first (for tests that run every path): the
 *  number of rows, and row i (NULL past the end). */
int adnn_cpu_lowp_path_count(void);
const adnn_cpu_lowp_path *adnn_cpu_lowp_path_at(int i);

/** The best path for input dtype `at` on this ISA level (env->isa, capped
 *  by ADNN_CPU_SIMD) and these features (env->features, whose AVX-512
 *  extensions an ADNN_CPU_SIMD cap clears); NULL when none (the reference
 *  then runs). */
const adnn_cpu_lowp_path *adnn_cpu_lowp_choose(adnn_dtype at, int isa,
                                               const adnn_cpu_features *f);

/** 1 when `path` is a FLOAT path that widens its operands into the F32
 *  engine's panels (f32_avx512, f32_avx2): its blocks then cost the F32
 *  microkernel's time plus the widening, which a whole-operand widening and
 *  the plugin's SGEMM may beat (matmul_lowp.c's widen_sgemm); 0 for the
 *  paths that compute on the 16-bit values (avx512_bf16) and INT8 paths. */
int adnn_cpu_lowp_widens(const adnn_cpu_lowp_path *path);

/** Bytes of packing scratch one thread needs for `path`. */
size_t adnn_cpu_lowp_thread_bytes(const adnn_cpu_lowp_path *path);

/** n F32 values at src rounded to `t` (F16 or BF16) into dst, bit for bit
 *  as adnn_f32_to_f16 / adnn_f32_to_bf16 (vector code where `path` is a
 *  float path, whose ISA has F16C and AVX2). */
void adnn_cpu_lowp_narrow(const adnn_cpu_lowp_path *path, adnn_dtype t, const float *src,
                          int64_t n, uint16_t *dst);

/** The requantization of an exact integer accumulator v (bias included)
 *  into an I8/U8 range [lo, hi]: saturate(rne(v * scale) + zero_point),
 *  the product in F64 (one rounding), to nearest with ties to even as
 *  nearbyint() in the default rounding mode, a NaN product giving the zero
 *  point, the sum saturated in double: bit for bit the reference kernels'
 *  definition (kernels/ref/matmul.c, kernels/ref/conv2d.c). The rounding
 *  adds and subtracts 2^52 with the product's sign, which leaves no
 *  fraction bits (inline, where SSE2 code would call libm per element). */
static inline int64_t adnn_cpu_lowp_requant(int64_t v, double scale, int32_t zero_point,
                                            int64_t lo, int64_t hi) {
  const double prod = (double)v * scale;
  double r = 0.0;
  if (prod == prod) {
    if (prod >= 0x1p52 || prod <= -0x1p52) {
      r = prod; /* already an integer */
    } else {
      const double c = prod < 0 ? -0x1p52 : 0x1p52;
      r = (prod + c) - c;
    }
  }
  r += (double)zero_point;
  return r < (double)lo ? lo : r > (double)hi ? hi : (int64_t)r;
}

#endif
