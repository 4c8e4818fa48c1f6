/*
 * Device pointers are checked: adnn_gemm, adnn_gemm_batched,
 * adnn_plan_execute, adnn_memcpy and adnn_memset refuse a pointer that is not
 * inside one allocation of the context with enough bytes from there, with
 * ADNN_STATUS_BAD_PARAM_MEMORY and a message naming the argument, the bytes
 * needed and the bytes available; memcpy's kind is checked against what the
 * pointers are. ADNN_CONTEXT_UNCHECKED_POINTERS turns the checks off.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "t/rng.h"
#include "t/tap.h"

#define F32 ADNN_DTYPE_F32
#define N ADNN_NO_TRANS

static adnn_context *ctx;

static void *dev(size_t bytes) {
  void *p = NULL;
  if (adnn_malloc(ctx, bytes, &p) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  return p;
}

static void fill(tap_rng *rng, float *h, size_t n) {
  for (size_t i = 0; i < n; i++) h[i] = (float)tap_rng_uniform(rng, -1, 1);
}

#define MEM_REFUSED(call, what, ...)                                                       \
  do {                                                                                     \
    is_status((call), ADNN_STATUS_BAD_PARAM_MEMORY, what);                                 \
    const char *needles_[] = {__VA_ARGS__};                                                \
    for (size_t i_ = 0; i_ < sizeof needles_ / sizeof *needles_; i_++)                     \
      contains(adnn_last_error(), needles_[i_], "  message has \"%s\"", needles_[i_]);     \
  } while (0)

static adnn_status gemm64(const void *a, const void *b, void *c) {
  return adnn_gemm(ctx, F32, N, N, 64, 64, 64, 1.0, a, 64, b, 64, 0.0, c, 64);
}

/* Max |C - A*B| over a 64x64x64 product computed on the host. */
static double gemm_error(const float *a, const float *b, const float *c) {
  double worst = 0;
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 64; j++) {
      double s = 0;
      for (int l = 0; l < 64; l++) s += (double)a[i * 64 + l] * b[l * 64 + j];
      double e = fabs(s - c[i * 64 + j]);
      if (e > worst) worst = e;
    }
  return worst;
}

static void conv_desc(adnn_conv2d_desc *d) {
  adnn_conv2d_desc_init(d);
  int64_t x[4] = {1, 8, 8, 8}, w[4] = {8, 8, 3, 3}, y[4] = {1, 8, 6, 6};
  adnn_tensor_desc_init(&d->x, F32, 4, x);
  adnn_tensor_desc_init(&d->w, F32, 4, w);
  adnn_tensor_desc_init(&d->y, F32, 4, y);
}

int main(void) {
  tap_rng rng = tap_rng_seed(20261129);
  if (adnn_context_create("cpu", &ctx) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  const size_t mat = 64 * 64 * sizeof(float); /* 16384 */
  char buf[160];

  /* ---- gemm ---- */
  void *t64a = dev(64), *t64b = dev(64), *t64c = dev(64);
  snprintf(buf, sizeof buf, "at %p holds only 64 from there", t64a);
  MEM_REFUSED(gemm64(t64a, t64b, t64c), "gemm 64x64x64 on 64-byte buffers is refused",
              "adnn_gemm: a needs 16384 bytes from", "allocation of 64 bytes", buf);
  float *ha = malloc(mat), *hb = malloc(mat), *hc = malloc(mat);
  fill(&rng, ha, 4096);
  fill(&rng, hb, 4096);
  void *a = dev(mat), *b = dev(mat), *c = dev(mat), *short_c = dev(mat - 1);
  adnn_memcpy(ctx, a, ha, mat, ADNN_MEMCPY_HOST_TO_DEVICE);
  adnn_memcpy(ctx, b, hb, mat, ADNN_MEMCPY_HOST_TO_DEVICE);
  is_status(gemm64(a, b, c), ADNN_STATUS_SUCCESS, "exact-size buffers are accepted");
  adnn_memcpy(ctx, hc, c, mat, ADNN_MEMCPY_DEVICE_TO_HOST);
  double err = gemm_error(ha, hb, hc);
  ok(err < 1e-4, "  and the product is right (max error %g)", err);
  MEM_REFUSED(gemm64(a, b, short_c), "c one byte short is refused",
              "c needs 16384 bytes", "allocation of 16383 bytes", "holds only 16383 from there");
  MEM_REFUSED(gemm64(ha, b, c), "a malloc pointer is refused",
              "adnn_gemm: a (", "is not memory of this context (backend cpu)",
              "adnn_malloc or register it with adnn_memory_register");
  /* Sub-matrices inside an allocation: fine while the span fits. */
  char *big = dev(2 * mat);
  adnn_memcpy(ctx, big + mat, ha, mat, ADNN_MEMCPY_HOST_TO_DEVICE);
  is_status(gemm64(big + mat, b, c), ADNN_STATUS_SUCCESS, "a at an offset inside an allocation");
  adnn_memcpy(ctx, hc, c, mat, ADNN_MEMCPY_DEVICE_TO_HOST);
  ok(gemm_error(ha, hb, hc) < 1e-4, "  reads the sub-matrix");
  MEM_REFUSED(gemm64(big + mat + 4, b, c), "a 4 bytes further runs past the end",
              "a needs 16384 bytes", "holds only 16380 from there");
  /* Another context's buffer. */
  adnn_context *other = NULL;
  adnn_context_create("cpu", &other);
  void *foreign = NULL;
  adnn_malloc(other, mat, &foreign);
  MEM_REFUSED(gemm64(a, foreign, c), "another context's buffer is refused",
              "b (", "is not memory of this context");
  /* Batched: the span covers every matrix of the batch. */
  MEM_REFUSED(adnn_gemm_batched(ctx, F32, N, N, 64, 64, 64, 1, a, 64, b, 64, 0, big, 64, 3, 0, 0,
                                4096),
              "batched c spanning three matrices in a two-matrix buffer", "adnn_gemm_batched:",
              "c needs 49152 bytes", "holds only 32768");
  is_status(adnn_gemm_batched(ctx, F32, N, N, 64, 64, 64, 1, a, 64, b, 64, 0, big, 64, 2, 0, 0,
                              4096), ADNN_STATUS_SUCCESS, "batched c of exactly two matrices");
  /* Nothing to touch: no pointer is checked. */
  is_status(adnn_gemm(ctx, F32, N, N, 0, 64, 64, 1, ha, 64, hb, 64, 0, hc, 64),
            ADNN_STATUS_SUCCESS, "m = 0 touches nothing, so host pointers are not refused");

  /* ---- memcpy ---- */
  void *d64 = dev(64), *d128 = dev(128);
  char host[256];
  memset(host, 7, sizeof host);
  MEM_REFUSED(adnn_memcpy(ctx, d128, d64, 128, ADNN_MEMCPY_DEVICE_TO_DEVICE),
              "memcpy of 128 bytes from a 64-byte buffer", "adnn_memcpy: src needs 128 bytes",
              "holds only 64");
  MEM_REFUSED(adnn_memcpy(ctx, host, d64, 128, ADNN_MEMCPY_DEVICE_TO_HOST),
              "D2H of 128 bytes from a 64-byte buffer", "src needs 128 bytes");
  MEM_REFUSED(adnn_memcpy(ctx, d64, host, 128, ADNN_MEMCPY_HOST_TO_DEVICE),
              "H2D of 128 bytes into a 64-byte buffer", "dst needs 128 bytes");
  is_status(adnn_memcpy(ctx, d64, host, 64, ADNN_MEMCPY_HOST_TO_DEVICE), ADNN_STATUS_SUCCESS,
            "H2D of exactly 64 bytes");
  MEM_REFUSED(adnn_memcpy(ctx, host, d64, 64, ADNN_MEMCPY_HOST_TO_DEVICE),
              "H2D with the pointers swapped", "dst (", "is not memory of this context");
  MEM_REFUSED(adnn_memcpy(ctx, d128, d64, 64, ADNN_MEMCPY_HOST_TO_DEVICE),
              "H2D from device memory", "src (", "is device memory of this context",
              "kind says it is host memory");
  MEM_REFUSED(adnn_memcpy(ctx, d64, host, 64, ADNN_MEMCPY_DEVICE_TO_HOST),
              "D2H with the pointers swapped", "dst (", "is device memory of this context");
  MEM_REFUSED(adnn_memcpy(ctx, host, d64, 64, ADNN_MEMCPY_HOST_TO_HOST),
              "H2H from device memory", "src (", "is device memory");
  MEM_REFUSED(adnn_memcpy(ctx, host, host + 128, 64, ADNN_MEMCPY_DEVICE_TO_DEVICE),
              "D2D between host buffers", "dst (", "is not memory of this context");
  /* A host range that runs into device memory is not host memory. */
  char *d256 = dev(256);
  MEM_REFUSED(adnn_memcpy(ctx, d256 + 128, d256 - 32, 64, ADNN_MEMCPY_HOST_TO_DEVICE),
              "a host source that ends inside device memory", "src (", "is device memory");
  is_status(adnn_memcpy(ctx, host + 128, host, 64, ADNN_MEMCPY_HOST_TO_HOST), ADNN_STATUS_SUCCESS,
            "H2H between host buffers");
  is_status(adnn_memcpy(ctx, d128, d64, 64, ADNN_MEMCPY_DEVICE_TO_DEVICE), ADNN_STATUS_SUCCESS,
            "D2D of 64 bytes into a 128-byte buffer");

  /* ---- memset ---- */
  MEM_REFUSED(adnn_memset(ctx, d64, 0, 65), "memset one byte past the end",
              "adnn_memset: ptr needs 65 bytes", "holds only 64");
  MEM_REFUSED(adnn_memset(ctx, (char *)d64 + 32, 0, 64), "memset from the middle past the end",
              "ptr needs 64 bytes", "holds only 32 from there");
  MEM_REFUSED(adnn_memset(ctx, host, 0, 16), "memset of host memory", "is not memory");
  is_status(adnn_memset(ctx, (char *)d64 + 32, 1, 32), ADNN_STATUS_SUCCESS,
            "memset of the last 32 bytes");

  /* ---- plan execution ---- */
  adnn_conv2d_desc cd;
  conv_desc(&cd);
  adnn_plan *conv = NULL;
  is_status(adnn_plan_create_conv2d(ctx, &cd, &conv), ADNN_STATUS_SUCCESS, "a conv2d plan");
  const size_t xb = 8 * 8 * 8 * 4, wb = 8 * 8 * 9 * 4, yb = 8 * 6 * 6 * 4;
  void *x4 = dev(4), *w4 = dev(4), *y4 = dev(4);
  snprintf(buf, sizeof buf, "inputs[0] needs %zu bytes", xb);
  MEM_REFUSED(adnn_plan_execute(conv, (const void *[]){x4, w4}, 2, y4),
              "conv on 4-byte buffers is refused", "adnn_plan_execute:", buf,
              "allocation of 4 bytes");
  void *x = dev(xb), *w = dev(wb), *y = dev(yb), *y_short = dev(yb - 1);
  float hx[512], hw[576];
  fill(&rng, hx, 512);
  fill(&rng, hw, 576);
  adnn_memcpy(ctx, x, hx, xb, ADNN_MEMCPY_HOST_TO_DEVICE);
  adnn_memcpy(ctx, w, hw, wb, ADNN_MEMCPY_HOST_TO_DEVICE);
  is_status(adnn_plan_execute(conv, (const void *[]){x, w}, 2, y), ADNN_STATUS_SUCCESS,
            "conv on exact-size buffers");
  snprintf(buf, sizeof buf, "output needs %zu bytes", yb);
  MEM_REFUSED(adnn_plan_execute(conv, (const void *[]){x, w}, 2, y_short), "y one byte short",
              buf, "holds only 1151");
  snprintf(buf, sizeof buf, "inputs[1] needs %zu bytes", wb);
  MEM_REFUSED(adnn_plan_execute(conv, (const void *[]){x, (char *)w + 4}, 2, y),
              "w at an offset that leaves it 4 bytes short", buf);
  MEM_REFUSED(adnn_plan_execute(conv, (const void *[]){hx, w}, 2, y), "a host x",
              "inputs[0] (", "is not memory of this context");

  adnn_pool2d_desc pd;
  adnn_pool2d_desc_init(&pd);
  int64_t px[4] = {1, 8, 8, 8}, py[4] = {1, 8, 4, 4};
  adnn_tensor_desc_init(&pd.x, F32, 4, px);
  adnn_tensor_desc_init(&pd.y, F32, 4, py);
  pd.kernel_h = pd.kernel_w = 2;
  pd.stride_h = pd.stride_w = 2;
  adnn_plan *pool = NULL;
  is_status(adnn_plan_create_pool2d(ctx, &pd, &pool), ADNN_STATUS_SUCCESS, "a pool2d plan");
  MEM_REFUSED(adnn_plan_execute(pool, (const void *[]){x}, 1, y4), "pool into a 4-byte buffer",
              "output needs 512 bytes", "holds only 4");
  is_status(adnn_plan_execute(pool, (const void *[]){x}, 1, (char *)y + 64), ADNN_STATUS_SUCCESS,
            "pool into a sub-buffer that holds exactly the output");

  /* ---- ADNN_CONTEXT_UNCHECKED_POINTERS ---- */
  is_status(adnn_context_set_flags(ctx, ADNN_CONTEXT_UNCHECKED_POINTERS), ADNN_STATUS_SUCCESS,
            "set ADNN_CONTEXT_UNCHECKED_POINTERS");
  is_int(adnn_context_get_flags(ctx), ADNN_CONTEXT_UNCHECKED_POINTERS, "  get_flags shows it");
  memset(hc, 0, mat);
  is_status(gemm64(ha, hb, hc), ADNN_STATUS_SUCCESS, "unchecked: gemm on malloc pointers runs");
  ok(gemm_error(ha, hb, hc) < 1e-4, "  and computes the product");
  float hy[288];
  is_status(adnn_plan_execute(conv, (const void *[]){hx, hw}, 2, hy), ADNN_STATUS_SUCCESS,
            "unchecked: conv on host arrays runs");
  is_status(adnn_memcpy(ctx, host, host + 128, 64, ADNN_MEMCPY_DEVICE_TO_DEVICE),
            ADNN_STATUS_SUCCESS, "unchecked: D2D between host buffers runs (CPU: one address space)");
  is_status(adnn_memset(ctx, host, 3, 16), ADNN_STATUS_SUCCESS, "unchecked: memset of host memory");
  ok(host[15] == 3, "  and set it");
  /* The handle checks stay. */
  adnn_context *gone = NULL;
  adnn_context_create("cpu", &gone);
  adnn_context_set_flags(gone, ADNN_CONTEXT_UNCHECKED_POINTERS);
  adnn_context_destroy(gone);
  is_status(adnn_gemm(gone, F32, N, N, 64, 64, 64, 1, ha, 64, hb, 64, 0, hc, 64),
            ADNN_STATUS_BAD_PARAM_HANDLE, "unchecked pointers never turn off the handle check");
  is_status(adnn_context_set_flags(ctx, 0), ADNN_STATUS_SUCCESS, "clear the flag");
  MEM_REFUSED(gemm64(ha, hb, hc), "checked again: malloc pointers are refused", "is not memory");
  is_status(adnn_context_set_flags(ctx, 1u << 7), ADNN_STATUS_BAD_PARAM, "an unknown flag bit");

  /* Destroying the context frees what it still owns. */
  adnn_plan_destroy(conv);
  adnn_plan_destroy(pool);
  adnn_context_destroy(other);
  adnn_context_destroy(ctx);
  free(ha);
  free(hb);
  free(hc);
  return tap_done();
}
