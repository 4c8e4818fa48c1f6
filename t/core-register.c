/*
 * External memory registration on the CPU backend: memory the application
 * owns (as a NumPy array would be) becomes device memory of a context for the
 * pointer checks, used by adnn_gemm and a plan without a copy; overlapping
 * registrations are refused; adnn_free refuses registered regions and
 * adnn_memory_unregister refuses adnn_malloc memory; destroying the context
 * forgets the regions and never frees them (the application does).
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

int main(void) {
  tap_rng rng = tap_rng_seed(424242);
  adnn_context *ctx = NULL;
  if (adnn_context_create("cpu", &ctx) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());

  /* "NumPy" arrays: plain malloc'd memory, 8x8 matrices, one array holding A and B. */
  const int n = 8;
  const size_t mat = (size_t)n * n * sizeof(float);
  float *ab = malloc(2 * mat), *c = malloc(mat);
  for (int i = 0; i < 2 * n * n; i++) ab[i] = (float)tap_rng_uniform(&rng, -2, 2);
  float *a = ab, *b = ab + n * n;

  is_status(adnn_gemm(ctx, F32, N, N, n, n, n, 1, a, n, b, n, 0, c, n), ADNN_STATUS_BAD_PARAM_MEMORY,
            "unregistered host arrays are refused");
  is_status(adnn_memory_register(ctx, ab, 2 * mat, ADNN_MEMORY_DEVICE, 0), ADNN_STATUS_SUCCESS,
            "register the A|B array");
  is_status(adnn_memory_register(ctx, c, mat, ADNN_MEMORY_DEVICE, 0), ADNN_STATUS_SUCCESS,
            "register C");
  is_status(adnn_gemm(ctx, F32, N, N, n, n, n, 1, a, n, b, n, 0, c, n), ADNN_STATUS_SUCCESS,
            "gemm on registered memory, B inside the A|B region");
  double worst = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int l = 0; l < n; l++) s += (double)a[i * n + l] * b[l * n + j];
      if (fabs(s - c[i * n + j]) > worst) worst = fabs(s - c[i * n + j]);
    }
  ok(worst < 1e-5, "  the product is right (max error %g)", worst);
  is_status(adnn_gemm(ctx, F32, N, N, n, n, n, 1, b + 1, n, a, n, 0, c, n),
            ADNN_STATUS_BAD_PARAM_MEMORY, "a span running 4 bytes past a registered region");
  contains(adnn_last_error(), "its registered region of 512 bytes", "  names the region");

  /* A plan on registered memory: relu of A|B into C... sized as one matrix. */
  adnn_activation_desc ad;
  adnn_activation_desc_init(&ad);
  int64_t dims[2] = {n, n};
  adnn_tensor_desc_init(&ad.x, F32, 2, dims);
  adnn_tensor_desc_init(&ad.y, F32, 2, dims);
  ad.activation.kind = ADNN_ACTIVATION_RELU;
  adnn_plan *relu = NULL;
  is_status(adnn_plan_create_activation(ctx, &ad, &relu), ADNN_STATUS_SUCCESS, "a relu plan");
  is_status(adnn_plan_execute(relu, (const void *[]){b}, 1, c), ADNN_STATUS_SUCCESS,
            "relu from registered memory into registered memory");
  int right = 1;
  for (int i = 0; i < n * n; i++) right &= c[i] == (b[i] > 0 ? b[i] : 0.0f);
  ok(right, "  computes relu");

  /* ---- overlap ---- */
  is_status(adnn_memory_register(ctx, (char *)ab + 100, 16, ADNN_MEMORY_DEVICE, 0),
            ADNN_STATUS_BAD_PARAM, "a region inside a registered one is refused");
  contains(adnn_last_error(), "overlap the registered region of 512 bytes", "  saying so");
  void *d = NULL;
  adnn_malloc(ctx, 256, &d);
  is_status(adnn_memory_register(ctx, (char *)d + 128, 256, ADNN_MEMORY_DEVICE, 0),
            ADNN_STATUS_BAD_PARAM, "a region overlapping an adnn_malloc allocation is refused");
  contains(adnn_last_error(), "adnn_malloc allocation of 256 bytes", "  naming it");

  /* ---- mix-ups ---- */
  is_status(adnn_free(ctx, ab), ADNN_STATUS_BAD_PARAM_MEMORY, "adnn_free of a registered region");
  contains(adnn_last_error(), "use adnn_memory_unregister", "  says what to use");
  is_status(adnn_memory_unregister(ctx, d), ADNN_STATUS_BAD_PARAM_MEMORY,
            "adnn_memory_unregister of adnn_malloc memory");
  contains(adnn_last_error(), "use adnn_free", "  says what to use");
  is_status(adnn_memory_unregister(ctx, (char *)ab + 64), ADNN_STATUS_BAD_PARAM_MEMORY,
            "unregistering a pointer inside a region");
  contains(adnn_last_error(), "pass that region's base", "  asks for the base");
  float stray[4];
  is_status(adnn_memory_unregister(ctx, stray), ADNN_STATUS_BAD_PARAM_MEMORY,
            "unregistering memory that was never registered");
  is_status(adnn_memory_unregister(ctx, c), ADNN_STATUS_SUCCESS, "unregister C");
  is_status(adnn_memory_unregister(ctx, c), ADNN_STATUS_BAD_PARAM_MEMORY, "  a second time is refused");
  contains(adnn_last_error(), "already unregistered", "  saying it may have been unregistered");
  is_status(adnn_plan_execute(relu, (const void *[]){b}, 1, c), ADNN_STATUS_BAD_PARAM_MEMORY,
            "unregistered memory is refused again");

  /* ---- arguments ---- */
  is_status(adnn_memory_register(ctx, NULL, 8, ADNN_MEMORY_DEVICE, 0), ADNN_STATUS_BAD_PARAM_NULL,
            "NULL ptr");
  is_status(adnn_memory_register(ctx, c, 0, ADNN_MEMORY_DEVICE, 0), ADNN_STATUS_BAD_PARAM, "0 bytes");
  is_status(adnn_memory_register(ctx, c, 8, (adnn_memory_kind)7, 0), ADNN_STATUS_BAD_PARAM,
            "an unknown kind");
  is_status(adnn_memory_register(ctx, c, 8, ADNN_MEMORY_DEVICE, 1), ADNN_STATUS_BAD_PARAM,
            "nonzero flags");
  contains(adnn_last_error(), "reserved", "  are reserved");
  is_status(adnn_memory_register(ctx, (void *)(uintptr_t)-16, 64, ADNN_MEMORY_DEVICE, 0),
            ADNN_STATUS_BAD_PARAM_OVERFLOW, "a range that wraps");
  is_status(adnn_memory_unregister(ctx, NULL), ADNN_STATUS_BAD_PARAM_NULL, "unregister NULL");

  /* ---- host regions: only for adnn_memcpy's host side ---- */
  is_status(adnn_memory_register(ctx, c, mat, ADNN_MEMORY_HOST, 0), ADNN_STATUS_SUCCESS,
            "register C as host memory");
  is_status(adnn_plan_execute(relu, (const void *[]){b}, 1, c), ADNN_STATUS_BAD_PARAM_MEMORY,
            "an op refuses a host region");
  contains(adnn_last_error(), "registered as host memory", "  saying why");
  is_status(adnn_memcpy(ctx, d, c, 256, ADNN_MEMCPY_HOST_TO_DEVICE), ADNN_STATUS_SUCCESS,
            "H2D from the host region");
  is_status(adnn_memcpy(ctx, d, (char *)c + 16, 256, ADNN_MEMCPY_HOST_TO_DEVICE),
            ADNN_STATUS_BAD_PARAM_MEMORY, "H2D running past the host region's end");
  is_status(adnn_memcpy(ctx, c, d, 256, ADNN_MEMCPY_DEVICE_TO_HOST), ADNN_STATUS_SUCCESS,
            "D2H into the host region");

  /* ---- destroy forgets, never frees ---- */
  adnn_plan_destroy(relu);
  adnn_context_destroy(ctx);
  ab[0] = 1.5f; /* still ours: valgrind would report a write to freed memory */
  c[0] = 2.5f;
  ok(ab[0] == 1.5f && c[0] == 2.5f, "registered memory survives adnn_context_destroy");
  free(ab);
  free(c);
  return tap_done();
}
