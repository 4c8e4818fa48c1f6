/*
 * GEMM: argument validation and forwarding. All checks happen here so that
 * every plugin can trust its arguments (see include/adnn/plugin.h).
 */
#include "config.h"

#include <string.h>

#include "core/internal.h"
#include "core/tuner.h"
#include "core/verbose.h"

/* The span in elements of a rows x cols row-major matrix with leading dimension
 * ld, repeated `batch` times `stride` apart. 0 on overflow. */
static int matrix_span(int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride,
                       int64_t *span) {
  int64_t one, extra;
  if (rows == 0 || cols == 0 || batch == 0) {
    *span = 0;
    return 1;
  }
  if (!adnn__mul_i64(rows - 1, ld, &one) || !adnn__add_i64(one, cols, &one)) return 0;
  if (!adnn__mul_i64(batch - 1, stride, &extra) || !adnn__add_i64(one, extra, span)) return 0;
  return 1;
}

static adnn_status check_operand(const char *func, adnn_context *ctx, const char *name,
                                 const void *p,
                                 int64_t rows, int64_t cols, int64_t ld, const char *ld_name,
                                 int transposed, int64_t batch, int64_t stride, size_t esize,
                                 size_t *span_bytes) {
  int64_t min_ld = cols > 1 ? cols : 1;
  if (ld < min_ld)
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "%s: %s (%lld) is smaller than the row length of %s (%lld%s)", func, ld_name,
                      (long long)ld, name, (long long)min_ld,
                      transposed ? ", the operand is stored transposed" : "");
  int64_t span, bytes;
  if (!matrix_span(rows, cols, ld, batch, stride, &span) ||
      !adnn__mul_i64(span, (int64_t)esize, &bytes) || (uint64_t)bytes > (uint64_t)SIZE_MAX)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_OVERFLOW,
                      "%s: the memory span of %s (%lld x %lld, %s %lld) overflows", func, name,
                      (long long)rows, (long long)cols, ld_name, (long long)ld);
  if (span > 0 && p == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: %s is NULL", func, name);
  if (span > 0 && (uintptr_t)p + (uint64_t)bytes < (uintptr_t)p)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_OVERFLOW,
                      "%s: %s (%p) plus its span of %lld bytes wraps around the address space",
                      func, name, p, (long long)bytes);
  (void)ctx;
  *span_bytes = span > 0 ? (size_t)bytes : 0;
  return ADNN_STATUS_SUCCESS;
}

static adnn_status gemm_common(const char *func, adnn_context *ctx, adnn_dtype dtype,
                               adnn_transpose ta, adnn_transpose tb, int64_t m, int64_t n,
                               int64_t k, double alpha, const void *a, int64_t lda,
                               const void *b, int64_t ldb, double beta, void *c, int64_t ldc,
                               int64_t batch, int64_t stride_a, int64_t stride_b,
                               int64_t stride_c) {
  adnn_status st = adnn__check_context(func, ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (dtype != ADNN_DTYPE_F32 && dtype != ADNN_DTYPE_F64) {
    if (adnn_dtype_size(dtype) == 0)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: dtype %d is not an adnn_dtype", func, (int)dtype);
    return adnn__fail(ADNN_STATUS_NOT_SUPPORTED, "%s: dtype %s is not supported (f32 and f64 are)",
                      func, adnn_dtype_name(dtype));
  }
  if (ta != ADNN_NO_TRANS && ta != ADNN_TRANS)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: ta (%d) is not an adnn_transpose", func, (int)ta);
  if (tb != ADNN_NO_TRANS && tb != ADNN_TRANS)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: tb (%d) is not an adnn_transpose", func, (int)tb);
  if (m < 0) return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: m is negative (%lld)", func, (long long)m);
  if (n < 0) return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: n is negative (%lld)", func, (long long)n);
  if (k < 0) return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: k is negative (%lld)", func, (long long)k);
  if (batch < 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: batch is negative (%lld)", func, (long long)batch);
  if (stride_a < 0 || stride_b < 0 || stride_c < 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s is negative (%lld)", func,
                      stride_a < 0 ? "stride_a" : stride_b < 0 ? "stride_b" : "stride_c",
                      (long long)(stride_a < 0 ? stride_a : stride_b < 0 ? stride_b : stride_c));

  size_t esize = adnn_dtype_size(dtype);
  /* Stored shapes: A is m x k or k x m, B is k x n or n x k. */
  int64_t a_rows = ta ? k : m, a_cols = ta ? m : k;
  int64_t b_rows = tb ? n : k, b_cols = tb ? k : n;
  /* With nothing to multiply, A and B are not touched, but their leading
   * dimensions are still checked so that mistakes show up on small tests. */
  int64_t ab_batch = (m == 0 || n == 0) ? 0 : batch;
  size_t a_bytes, b_bytes, c_bytes;
  st = check_operand(func, ctx, "a", a, a_rows, a_cols, lda, "lda", ta == ADNN_TRANS, ab_batch,
                     stride_a, esize, &a_bytes);
  if (st != ADNN_STATUS_SUCCESS) return st;
  st = check_operand(func, ctx, "b", b, b_rows, b_cols, ldb, "ldb", tb == ADNN_TRANS, ab_batch,
                     stride_b, esize, &b_bytes);
  if (st != ADNN_STATUS_SUCCESS) return st;
  st = check_operand(func, ctx, "c", c, m, n, ldc, "ldc", 0, batch, stride_c, esize, &c_bytes);
  if (st != ADNN_STATUS_SUCCESS) return st;

  if (m == 0 || n == 0 || batch == 0) return ADNN_STATUS_SUCCESS;
  if (k > 0 && (c == a || c == b))
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: c is the same buffer as %s; GEMM cannot run in "
                      "place", func, c == a ? "a" : "b");
  if (batch > 1) {
    /* The C matrices must be disjoint: either one after the other, or
     * interleaved within a row (as in an [m, batch, n] tensor). */
    int64_t c_span = 0;
    matrix_span(m, n, ldc, 1, 0, &c_span);
    int64_t last;
    int after = stride_c >= c_span;
    int interleaved = stride_c >= n && adnn__mul_i64(batch - 1, stride_c, &last) &&
                      adnn__add_i64(last, n, &last) && last <= ldc;
    if (!after && !interleaved)
      return adnn__fail(ADNN_STATUS_BAD_PARAM,
                        "%s: the %lld C matrices overlap: stride_c (%lld) is smaller than one C "
                        "matrix (%lld elements) and they are not interleaved within ldc (%lld)",
                        func, (long long)batch, (long long)stride_c, (long long)c_span,
                        (long long)ldc);
  }

  /* Every operand must lie in memory of the context, all of its span; checked
   * after the arguments themselves, so that a bad size is reported as such. */
  st = adnn__check_device_range(func, ctx, "a", a, k > 0 ? a_bytes : 0);
  if (st != ADNN_STATUS_SUCCESS) return st;
  st = adnn__check_device_range(func, ctx, "b", b, k > 0 ? b_bytes : 0);
  if (st != ADNN_STATUS_SUCCESS) return st;
  st = adnn__check_device_range(func, ctx, "c", c, c_bytes);
  if (st != ADNN_STATUS_SUCCESS) return st;

  if (!ADNN_PLUGIN_HAS(ctx->table, gemm))
    return adnn__fail(ADNN_STATUS_NOT_SUPPORTED, "%s: backend %s does not implement GEMM", func,
                      adnn_context_get_backend(ctx));
  adnn_plugin_gemm_args args;
  memset(&args, 0, sizeof args);
  args.struct_size = sizeof args;
  args.dtype = dtype;
  args.ta = ta;
  args.tb = tb;
  args.m = m;
  args.n = n;
  args.k = k;
  args.alpha = alpha;
  args.beta = beta;
  args.a = a;
  args.lda = lda;
  args.stride_a = batch > 1 ? stride_a : 0;
  args.b = b;
  args.ldb = ldb;
  args.stride_b = batch > 1 ? stride_b : 0;
  args.c = c;
  args.ldc = ldc;
  args.stride_c = batch > 1 ? stride_c : 0;
  args.batch = batch;
  args.flags = ctx->flags;
  /* A product that can be measured runs the implementation measured fastest
   * for its shape (the first call of a new shape pays the measurement). */
  if (k > 0 && alpha != 0.0) args.impl = adnn__tune_gemm(ctx, &args);
  if (adnn__verbose_level() >= 2) return adnn__verbose_gemm(ctx, &args);
  return ctx->table->gemm(ctx->pctx, &args);
}

adnn_status adnn_gemm(adnn_context *ctx, adnn_dtype dtype, adnn_transpose ta, adnn_transpose tb,
                      int64_t m, int64_t n, int64_t k, double alpha, const void *a, int64_t lda,
                      const void *b, int64_t ldb, double beta, void *c, int64_t ldc) {
  return gemm_common("adnn_gemm", ctx, dtype, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c,
                     ldc, 1, 0, 0, 0);
}

adnn_status adnn_gemm_batched(adnn_context *ctx, adnn_dtype dtype, adnn_transpose ta,
                              adnn_transpose tb, int64_t m, int64_t n, int64_t k, double alpha,
                              const void *a, int64_t lda, const void *b, int64_t ldb, double beta,
                              void *c, int64_t ldc, int64_t batch, int64_t stride_a,
                              int64_t stride_b, int64_t stride_c) {
  return gemm_common("adnn_gemm_batched", ctx, dtype, ta, tb, m, n, k, alpha, a, lda, b, ldb,
                     beta, c, ldc, batch, stride_a, stride_b, stride_c);
}
