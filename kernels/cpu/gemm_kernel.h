/*
 * The per-instruction-set parts of the GEMM engine (gemm.h): one
 * microkernel and the two packing routines that feed it, compiled for their
 * instruction set in gemm_kernel-<isa>.c. gemm.c owns the blocking, the
 * loops and the threads and calls only these three functions.
 *
 * Packed formats (both zero-padded to whole panels, so the microkernel
 * always runs full MR x NR tiles and only the store is masked):
 *   A panel: MR rows of op(A) over kc columns, column after column:
 *            ap[p * MR + i] = op(A)[i][p]; rows >= `rows` are 0.
 *   B panel: NR columns of op(B) over kc rows, row after row:
 *            bp[p * NR + j] = op(B)[p][j]; columns >= `cols` are 0.
 */
#ifndef ADNN_CPU_GEMM_KERNEL_H
#define ADNN_CPU_GEMM_KERNEL_H

#include <stdint.h>

typedef struct adnn_cpu_gemm_ukr {
  int mr, nr; /* the register tile */
  /** C[i][j] = alpha * sum_p ap[p*MR + i] * bp[p*NR + j] + beta * C[i][j]
   *  for i < rows <= MR, j < cols <= NR; beta = 0 does not read C. Columns
   *  beyond cols are never touched (masked loads and stores). */
  void (*kernel)(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int rows,
                 int cols, float alpha, float beta);
  /** Packs the rows x kc block of op(A) whose first element is at `a` (that
   *  is A + i0 * lda + p0 when ta = 0, A + p0 * lda + i0 when ta = 1) into
   *  one A panel. */
  void (*pack_a)(int ta, const float *a, int64_t lda, int rows, int64_t kc, float *ap);
  /** Packs the kc x cols block of op(B) whose first element is at `b` (B +
   *  p0 * ldb + j0 when tb = 0, B + j0 * ldb + p0 when tb = 1) into one B
   *  panel. */
  void (*pack_b)(int tb, const float *b, int64_t ldb, int cols, int64_t kc, float *bp);
  /** Optional (NULL: gemm.c calls pack_b panel by panel): packs the kc x
   *  cols block of untransposed B at `b` (B + p0 * ldb + j0), cols any
   *  number >= 1, into ceil(cols / NR) consecutive B panels (panel q at bp
   *  + q * kc * NR, the last zero-padded), reading B row by row so that the
   *  reads are long contiguous runs rather than one short run per row and
   *  panel (a page apart when ldb is an NCHW image's pixel count). */
  void (*pack_b_rows)(const float *b, int64_t ldb, int64_t cols, int64_t kc, float *bp);
  /** Optional (NULL: kernel serves every tile): the kernel for an edge tile
   *  of at most NR / 2 columns, on the same packed panels (it reads only the
   *  first NR / 2 floats of each B panel row). Each element's sum is formed
   *  in the same order as kernel forms it, so the bits do not depend on which
   *  of the two a tile takes. */
  void (*kernel_half)(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc,
                      int rows, int cols, float alpha, float beta);
  /** Optional (NULL: gemm.c always packs A): kernel and kernel_half reading
   *  untransposed op(A) where it lies, row i of the tile at a + i * lda
   *  (rows past `rows` are not read), instead of a packed A panel; same
   *  bits as the packed kernels. gemm.c uses them for tiles whose few
   *  columns would not repay packing A (doc/cpu.md). */
  void (*kernel_arows)(int64_t kc, const float *a, int64_t lda, const float *bp, float *c,
                       int64_t ldc, int rows, int cols, float alpha, float beta);
  void (*kernel_arows_half)(int64_t kc, const float *a, int64_t lda, const float *bp, float *c,
                            int64_t ldc, int rows, int cols, float alpha, float beta);
} adnn_cpu_gemm_ukr;

/** 12 x 32 tile (24 ZMM accumulators), gemm_kernel-avx512.c. */
extern const adnn_cpu_gemm_ukr adnn_cpu_gemm_ukr_avx512;
/** 6 x 16 tile (12 YMM accumulators), gemm_kernel-avx2.c. */
extern const adnn_cpu_gemm_ukr adnn_cpu_gemm_ukr_avx2;

#endif
