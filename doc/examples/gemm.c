/* GEMM: C = A * B for row-major F32 matrices, on whatever backend "auto" picks. */
#include <stdio.h>

#include <adnn.h>

int main(void) {
  enum { M = 2, N = 2, K = 3 };
  const float a[M * K] = {1, 2, 3,
                          4, 5, 6};
  const float b[K * N] = {7, 8,
                          9, 10,
                          11, 12};
  float c[M * N];
  adnn_context *ctx;
  void *da, *db, *dc;

  if (adnn_context_create(NULL, &ctx) != ADNN_STATUS_SUCCESS ||
      adnn_malloc(ctx, sizeof a, &da) != ADNN_STATUS_SUCCESS ||
      adnn_malloc(ctx, sizeof b, &db) != ADNN_STATUS_SUCCESS ||
      adnn_malloc(ctx, sizeof c, &dc) != ADNN_STATUS_SUCCESS ||
      adnn_memcpy(ctx, da, a, sizeof a, ADNN_MEMCPY_HOST_TO_DEVICE) != ADNN_STATUS_SUCCESS ||
      adnn_memcpy(ctx, db, b, sizeof b, ADNN_MEMCPY_HOST_TO_DEVICE) != ADNN_STATUS_SUCCESS ||
      /* lda = K, ldb = N, ldc = N: packed row-major; beta 0: C is not read. */
      adnn_gemm(ctx, ADNN_DTYPE_F32, ADNN_NO_TRANS, ADNN_NO_TRANS, M, N, K, 1.0, da, K, db, N,
                0.0, dc, N) != ADNN_STATUS_SUCCESS ||
      adnn_memcpy(ctx, c, dc, sizeof c, ADNN_MEMCPY_DEVICE_TO_HOST) != ADNN_STATUS_SUCCESS) {
    fprintf(stderr, "%s\n", adnn_last_error());
    return 1;
  }
  printf("on %s: [%g %g; %g %g]\n", adnn_context_get_backend(ctx), c[0], c[1], c[2], c[3]);
  adnn_context_destroy(ctx);
  return c[0] == 58 && c[1] == 64 && c[2] == 139 && c[3] == 154 ? 0 : 1;
}
