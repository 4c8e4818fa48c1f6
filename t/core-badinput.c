/* Bad input: every public function with NULLs and nonsense values returns the
 * documented bad-parameter status and a message that names the argument, and
 * nothing crashes or touches memory it should not (run it under valgrind). */
#include <stdint.h>
#include <string.h>

#include <adnn.h>

#include "t/tap.h"

/* Checks status, then that the last error names the function and `arg`. */
#define BAD(call, expected, func, arg, ...)                                              \
  do {                                                                                   \
    is_status((call), (expected), __VA_ARGS__);                                          \
    contains(adnn_last_error(), func, "  message names %s", func);                       \
    if ((arg) != NULL) contains(adnn_last_error(), (const char *)(arg), "  message names %s", \
                                (const char *)(arg));                                    \
  } while (0)

static const adnn_dtype F32 = ADNN_DTYPE_F32;
static const adnn_transpose N = ADNN_NO_TRANS, T = ADNN_TRANS;

int main(void) {
  adnn_context *ctx = NULL;
  if (adnn_context_create("cpu", &ctx) != ADNN_STATUS_SUCCESS) {
    ok(0, "create a cpu context: %s", adnn_last_error());
    return tap_done();
  }
  float *a = NULL, *b = NULL, *c = NULL;
  adnn_malloc(ctx, 64 * 64 * sizeof(float), (void **)&a);
  adnn_malloc(ctx, 64 * 64 * sizeof(float), (void **)&b);
  adnn_malloc(ctx, 64 * 64 * sizeof(float), (void **)&c);
  ok(a && b && c, "buffers allocated");
  if (!a || !b || !c) tap_bail("no buffers");
  /* Defined contents, so that the few calls that succeed compute on zeros. */
  adnn_memset(ctx, a, 0, 64 * 64 * sizeof(float));
  adnn_memset(ctx, b, 0, 64 * 64 * sizeof(float));
  adnn_memset(ctx, c, 0, 64 * 64 * sizeof(float));
  const char *G = "adnn_gemm", *GB = "adnn_gemm_batched";

  /* ---- adnn_gemm ---- */
  BAD(adnn_gemm(NULL, F32, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2), ADNN_STATUS_BAD_PARAM_NULL,
      G, "ctx", "gemm: ctx NULL");
  BAD(adnn_gemm(ctx, F32, N, N, 2, 2, 2, 1, NULL, 2, b, 2, 0, c, 2), ADNN_STATUS_BAD_PARAM_NULL,
      G, "a is NULL", "gemm: a NULL");
  BAD(adnn_gemm(ctx, F32, N, N, 2, 2, 2, 1, a, 2, NULL, 2, 0, c, 2), ADNN_STATUS_BAD_PARAM_NULL,
      G, "b is NULL", "gemm: b NULL");
  BAD(adnn_gemm(ctx, F32, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, NULL, 2), ADNN_STATUS_BAD_PARAM_NULL,
      G, "c is NULL", "gemm: c NULL");
  /* Leading dimensions: A is m x k (lda >= k) or k x m (lda >= m). */
  BAD(adnn_gemm(ctx, F32, N, N, 3, 2, 4, 1, a, 3, b, 2, 0, c, 2), ADNN_STATUS_BAD_PARAM, G,
      "lda", "gemm: lda 3 < k 4 (NoTrans)");
  contains(adnn_last_error(), "(3)", "  message quotes lda's value");
  BAD(adnn_gemm(ctx, F32, T, N, 5, 2, 3, 1, a, 4, b, 2, 0, c, 2), ADNN_STATUS_BAD_PARAM, G,
      "lda", "gemm: lda 4 < m 5 (Trans)");
  is_status(adnn_gemm(ctx, F32, T, N, 5, 2, 3, 1, a, 5, b, 2, 0, c, 2), ADNN_STATUS_SUCCESS,
            "gemm: lda 5 == m 5 (Trans) is fine although k is 3");
  BAD(adnn_gemm(ctx, F32, N, N, 2, 5, 3, 1, a, 3, b, 4, 0, c, 5), ADNN_STATUS_BAD_PARAM, G,
      "ldb", "gemm: ldb 4 < n 5 (NoTrans)");
  BAD(adnn_gemm(ctx, F32, N, T, 2, 5, 3, 1, a, 3, b, 2, 0, c, 5), ADNN_STATUS_BAD_PARAM, G,
      "ldb", "gemm: ldb 2 < k 3 (Trans)");
  BAD(adnn_gemm(ctx, F32, N, N, 2, 5, 3, 1, a, 3, b, 5, 0, c, 4), ADNN_STATUS_BAD_PARAM, G,
      "ldc", "gemm: ldc 4 < n 5");
  BAD(adnn_gemm(ctx, F32, N, N, 2, 2, 2, 1, a, 0, b, 2, 0, c, 2), ADNN_STATUS_BAD_PARAM, G,
      "lda", "gemm: lda 0");
  BAD(adnn_gemm(ctx, F32, N, N, 2, 2, 2, 1, a, -2, b, 2, 0, c, 2), ADNN_STATUS_BAD_PARAM, G,
      "lda", "gemm: lda negative");
  BAD(adnn_gemm(ctx, F32, N, N, 2, 2, 0, 1, a, 0, b, 2, 0, c, 2), ADNN_STATUS_BAD_PARAM, G,
      "lda", "gemm: lda 0 with k 0 (must still be >= 1)");
  BAD(adnn_gemm(ctx, F32, N, N, -1, 2, 2, 1, a, 2, b, 2, 0, c, 2), ADNN_STATUS_BAD_PARAM, G,
      "m is negative", "gemm: m negative");
  BAD(adnn_gemm(ctx, F32, N, N, 2, -1, 2, 1, a, 2, b, 2, 0, c, 2), ADNN_STATUS_BAD_PARAM, G,
      "n is negative", "gemm: n negative");
  BAD(adnn_gemm(ctx, F32, N, N, 2, 2, INT64_MIN, 1, a, 2, b, 2, 0, c, 2), ADNN_STATUS_BAD_PARAM,
      G, "k is negative", "gemm: k INT64_MIN");
  BAD(adnn_gemm(ctx, F32, (adnn_transpose)2, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2),
      ADNN_STATUS_BAD_PARAM, G, "ta", "gemm: ta 2");
  BAD(adnn_gemm(ctx, F32, N, (adnn_transpose)-1, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2),
      ADNN_STATUS_BAD_PARAM, G, "tb", "gemm: tb -1");
  BAD(adnn_gemm(ctx, (adnn_dtype)0, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2),
      ADNN_STATUS_BAD_PARAM, G, "dtype", "gemm: dtype 0");
  BAD(adnn_gemm(ctx, (adnn_dtype)1000, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2),
      ADNN_STATUS_BAD_PARAM, G, "dtype", "gemm: dtype 1000");
  BAD(adnn_gemm(ctx, ADNN_DTYPE_F16, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2),
      ADNN_STATUS_NOT_SUPPORTED, G, "f16", "gemm: f16 is not supported");
  BAD(adnn_gemm(ctx, ADNN_DTYPE_I32, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2),
      ADNN_STATUS_NOT_SUPPORTED, G, "i32", "gemm: i32 is not supported");
  BAD(adnn_gemm(ctx, F32, N, N, 4, 4, 4, 1, a, 4, b, 4, 0, a, 4), ADNN_STATUS_BAD_PARAM, G,
      "same buffer", "gemm: c == a");
  BAD(adnn_gemm(ctx, F32, N, N, 4, 4, 4, 1, a, 4, b, 4, 0, b, 4), ADNN_STATUS_BAD_PARAM, G,
      "same buffer", "gemm: c == b");
  /* Overflowing spans: caught before anything is touched. */
  BAD(adnn_gemm(ctx, F32, N, N, INT64_MAX, 2, 2, 1, a, 2, b, 2, 0, c, 2),
      ADNN_STATUS_BAD_PARAM_OVERFLOW, G, "overflow", "gemm: m = INT64_MAX");
  BAD(adnn_gemm(ctx, F32, N, N, 2, 2, 2, 1, a, INT64_MAX, b, 2, 0, c, 2),
      ADNN_STATUS_BAD_PARAM_OVERFLOW, G, "lda", "gemm: lda = INT64_MAX");
  BAD(adnn_gemm(ctx, F32, N, N, (int64_t)1 << 32, (int64_t)1 << 32, 1, 1, a, 1, b,
                (int64_t)1 << 32, 0, c, (int64_t)1 << 32),
      ADNN_STATUS_BAD_PARAM_OVERFLOW, G, "span of c", "gemm: 2^32 x 2^32 C overflows the byte span");
  BAD(adnn_gemm(ctx, F32, N, N, 2, 2, 2, 1, (void *)(uintptr_t)(UINTPTR_MAX - 7), 2, b, 2, 0,
                c, 2),
      ADNN_STATUS_BAD_PARAM_OVERFLOW, G, "wraps", "gemm: A at the top of the address space");
  /* Beyond what OpenBLAS's 32-bit interface takes, but no overflow: the backend
   * says NOT_SUPPORTED instead of truncating (nothing is read: k is huge only
   * in ld, so use a 1 x 1 product with a huge leading dimension). */
  is_status(adnn_gemm(ctx, F32, N, N, 1, 1, 1, 1, a, (int64_t)1 << 40, b, 1, 0, c, 1),
            ADNN_STATUS_NOT_SUPPORTED, "gemm: lda 2^40 on a 1x1 matrix is refused by the cpu "
            "backend (32-bit BLAS), not truncated");

  /* ---- adnn_gemm_batched ---- */
  BAD(adnn_gemm_batched(ctx, F32, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2, -1, 4, 4, 4),
      ADNN_STATUS_BAD_PARAM, GB, "batch", "batched: batch negative");
  BAD(adnn_gemm_batched(ctx, F32, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2, 2, -4, 4, 4),
      ADNN_STATUS_BAD_PARAM, GB, "stride_a", "batched: stride_a negative");
  BAD(adnn_gemm_batched(ctx, F32, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2, 2, 4, -4, 4),
      ADNN_STATUS_BAD_PARAM, GB, "stride_b", "batched: stride_b negative");
  BAD(adnn_gemm_batched(ctx, F32, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2, 2, 4, 4, -4),
      ADNN_STATUS_BAD_PARAM, GB, "stride_c", "batched: stride_c negative");
  BAD(adnn_gemm_batched(ctx, F32, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2, 2, 4, 4, 0),
      ADNN_STATUS_BAD_PARAM, GB, "overlap", "batched: stride_c 0 (all C the same)");
  BAD(adnn_gemm_batched(ctx, F32, N, N, 2, 3, 2, 1, a, 2, b, 3, 0, c, 3, 2, 4, 6, 4),
      ADNN_STATUS_BAD_PARAM, GB, "stride_c", "batched: stride_c 4 < span 6 of a 2x3 C");
  BAD(adnn_gemm_batched(ctx, F32, N, N, 2, 3, 2, 1, a, 2, b, 3, 0, c, 8, 3, 4, 6, 3),
      ADNN_STATUS_BAD_PARAM, GB, "overlap",
      "batched: interleaved C that does not fit in ldc (3 x 3 > 8)");
  is_status(adnn_gemm_batched(ctx, F32, N, N, 2, 3, 2, 1, a, 2, b, 3, 0, c, 9, 3, 4, 6, 3),
            ADNN_STATUS_SUCCESS, "batched: interleaved C that fits (3 x 3 <= 9)");
  BAD(adnn_gemm_batched(ctx, F32, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2, INT64_MAX, 4, 4, 4),
      ADNN_STATUS_BAD_PARAM_OVERFLOW, GB, "overflow", "batched: batch INT64_MAX overflows");
  BAD(adnn_gemm_batched(ctx, F32, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2, 3, INT64_MAX / 2, 4, 4),
      ADNN_STATUS_BAD_PARAM_OVERFLOW, GB, "a", "batched: stride_a INT64_MAX/2 overflows");
  BAD(adnn_gemm_batched(NULL, F32, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2, 2, 4, 4, 4),
      ADNN_STATUS_BAD_PARAM_NULL, GB, "ctx", "batched: ctx NULL");
  BAD(adnn_gemm_batched(ctx, F32, N, N, 2, 2, 2, 1, a, 1, b, 2, 0, c, 2, 2, 4, 4, 4),
      ADNN_STATUS_BAD_PARAM, GB, "lda", "batched: lda too small");
  BAD(adnn_gemm_batched(ctx, ADNN_DTYPE_BF16, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2, 2, 4, 4, 4),
      ADNN_STATUS_NOT_SUPPORTED, GB, "bf16", "batched: bf16");
  BAD(adnn_gemm_batched(ctx, F32, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, a, 2, 2, 4, 4, 4),
      ADNN_STATUS_BAD_PARAM, GB, "same buffer", "batched: c == a");

  /* ---- memory ---- */
  void *p = (void *)(uintptr_t)0x77;
  BAD(adnn_malloc(NULL, 8, &p), ADNN_STATUS_BAD_PARAM_NULL, "adnn_malloc", "ctx", "malloc: ctx");
  BAD(adnn_malloc(ctx, 8, NULL), ADNN_STATUS_BAD_PARAM_NULL, "adnn_malloc", "ptr", "malloc: ptr");
  BAD(adnn_malloc(ctx, 0, &p), ADNN_STATUS_BAD_PARAM, "adnn_malloc", "bytes", "malloc: 0 bytes");
  BAD(adnn_malloc(ctx, SIZE_MAX, &p), ADNN_STATUS_BAD_PARAM_OVERFLOW, "adnn_malloc", "bytes",
      "malloc: SIZE_MAX");
  ok(p == (void *)(uintptr_t)0x77, "malloc: *ptr untouched by failures");
  BAD(adnn_free(NULL, a), ADNN_STATUS_BAD_PARAM_NULL, "adnn_free", "ctx", "free: ctx");
  BAD(adnn_free(ctx, (void *)(uintptr_t)0x1000), ADNN_STATUS_BAD_PARAM_DOUBLE_FREE, "adnn_free",
      "not allocated", "free: a made-up pointer");
  BAD(adnn_memcpy(NULL, a, b, 4, ADNN_MEMCPY_DEVICE_TO_DEVICE), ADNN_STATUS_BAD_PARAM_NULL,
      "adnn_memcpy", "ctx", "memcpy: ctx");
  BAD(adnn_memcpy(ctx, NULL, b, 4, ADNN_MEMCPY_DEVICE_TO_DEVICE), ADNN_STATUS_BAD_PARAM_NULL,
      "adnn_memcpy", "dst", "memcpy: dst");
  BAD(adnn_memcpy(ctx, a, NULL, 4, ADNN_MEMCPY_DEVICE_TO_DEVICE), ADNN_STATUS_BAD_PARAM_NULL,
      "adnn_memcpy", "src", "memcpy: src");
  BAD(adnn_memcpy(ctx, a, b, 4, (adnn_memcpy_kind)99), ADNN_STATUS_BAD_PARAM, "adnn_memcpy",
      "kind", "memcpy: kind 99");
  BAD(adnn_memcpy(ctx, a, a + 1, 8, ADNN_MEMCPY_DEVICE_TO_DEVICE), ADNN_STATUS_BAD_PARAM,
      "adnn_memcpy", "overlap", "memcpy: overlap");
  BAD(adnn_memcpy(ctx, (void *)(uintptr_t)(UINTPTR_MAX - 3), b, 16, ADNN_MEMCPY_DEVICE_TO_DEVICE),
      ADNN_STATUS_BAD_PARAM_OVERFLOW, "adnn_memcpy", "wraps", "memcpy: dst range wraps");
  BAD(adnn_memset(NULL, a, 0, 4), ADNN_STATUS_BAD_PARAM_NULL, "adnn_memset", "ctx", "memset: ctx");
  BAD(adnn_memset(ctx, NULL, 0, 4), ADNN_STATUS_BAD_PARAM_NULL, "adnn_memset", "ptr",
      "memset: ptr");
  BAD(adnn_memset(ctx, a, 256, 4), ADNN_STATUS_BAD_PARAM, "adnn_memset", "value", "memset: 256");
  BAD(adnn_memset(ctx, a, -1, 4), ADNN_STATUS_BAD_PARAM, "adnn_memset", "value", "memset: -1");
  BAD(adnn_memset(ctx, (void *)(uintptr_t)(UINTPTR_MAX - 3), 0, 16),
      ADNN_STATUS_BAD_PARAM_OVERFLOW, "adnn_memset", "wraps", "memset: range wraps");

  /* ---- context ---- */
  BAD(adnn_context_create("cpu", NULL), ADNN_STATUS_BAD_PARAM_NULL, "adnn_context_create", "out",
      "context_create: out");
  adnn_context *x = NULL;
  BAD(adnn_context_create("cpu:-1", &x), ADNN_STATUS_BAD_PARAM, "adnn_context_create", "cpu:-1",
      "context_create: cpu:-1");
  BAD(adnn_context_create("cpu:2", &x), ADNN_STATUS_BAD_PARAM, "adnn_context_create", "device",
      "context_create: cpu:2");
  BAD(adnn_context_create("this-is-not/a-backend", &x), ADNN_STATUS_BAD_PARAM,
      "adnn_context_create", "malformed", "context_create: junk");
  char longname[200];
  memset(longname, 'a', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  is_status(adnn_context_create(longname, &x), ADNN_STATUS_BAD_PARAM,
            "context_create: a 199-character name is malformed");
  ok(x == NULL, "context_create: out untouched by all these failures");
  BAD(adnn_context_synchronize(NULL), ADNN_STATUS_BAD_PARAM_NULL, "adnn_context_synchronize",
      "ctx", "synchronize: ctx");
  BAD(adnn_context_set_flags(NULL, 1), ADNN_STATUS_BAD_PARAM_NULL, "adnn_context_set_flags",
      "ctx", "set_flags: ctx");
  BAD(adnn_context_set_flags(ctx, 0xffffffffu), ADNN_STATUS_BAD_PARAM, "adnn_context_set_flags",
      "flag", "set_flags: all bits");

  /* ---- backends, log, tensors ---- */
  const adnn_backend_info *info = (const adnn_backend_info *)(uintptr_t)0x99;
  size_t count = 0;
  BAD(adnn_backend_count(NULL), ADNN_STATUS_BAD_PARAM_NULL, "adnn_backend_count", "count",
      "backend_count: NULL");
  adnn_backend_count(&count);
  BAD(adnn_backend_get(0, NULL), ADNN_STATUS_BAD_PARAM_NULL, "adnn_backend_get", "info",
      "backend_get: info NULL");
  BAD(adnn_backend_get(count, &info), ADNN_STATUS_BAD_PARAM, "adnn_backend_get", "index",
      "backend_get: index == count");
  BAD(adnn_backend_get(SIZE_MAX, &info), ADNN_STATUS_BAD_PARAM, "adnn_backend_get",
      "out of range", "backend_get: index SIZE_MAX");
  ok(info == (const adnn_backend_info *)(uintptr_t)0x99, "backend_get: info untouched");
  is_status(adnn_backend_search_path(NULL, NULL), ADNN_STATUS_SUCCESS,
            "plugin_search_path(NULL, NULL) is fine");
  BAD(adnn_log_set_level((adnn_log_level)99), ADNN_STATUS_BAD_PARAM, "adnn_log_set_level",
      "level", "log_set_level(99)");
  BAD(adnn_log_set_level((adnn_log_level)-1), ADNN_STATUS_BAD_PARAM, "adnn_log_set_level",
      "level", "log_set_level(-1)");
  ok(adnn_log_get_level() >= ADNN_LOG_OFF && adnn_log_get_level() <= ADNN_LOG_DEBUG,
     "log level unchanged and valid after bad sets");
  int64_t dims[2] = {2, 2};
  BAD(adnn_tensor_desc_init(NULL, F32, 2, dims), ADNN_STATUS_BAD_PARAM_NULL,
      "adnn_tensor_desc_init", "desc", "tensor_desc_init: desc NULL");
  BAD(adnn_tensor_desc_validate(NULL), ADNN_STATUS_BAD_PARAM_NULL, "adnn_tensor_desc_validate",
      "desc", "tensor_desc_validate: NULL");
  is_int(adnn_tensor_desc_is_packed(NULL), 0, "tensor_desc_is_packed(NULL)");
  is_str(adnn_status_name((adnn_status)-5), "UNKNOWN_STATUS", "status_name(-5)");
  is_int(adnn_dtype_size((adnn_dtype)-3), 0, "dtype_size(-3)");
  is_str(adnn_dtype_name((adnn_dtype)-3), "unknown", "dtype_name(-3)");

  adnn_context_destroy(ctx);
  return tap_done();
}
