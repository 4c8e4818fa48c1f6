/*
 * GEMM on the CUDA plugin, checked against a double-precision reference loop
 * and against the CPU plugin's result for the same inputs.
 *
 * Every case fills C's unused parts (the padding past n in each row, and the
 * gaps between batched matrices) with NaN and checks that they stay NaN: the
 * row-major to column-major mapping must not write outside C. With beta == 0
 * the whole of C starts as NaN, which must vanish (C is not read then).
 *
 * Without a usable GPU the whole test is skipped with the reason.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "t/tap.h"

typedef struct gemm_case {
  const char *what;
  int64_t m, n, k;
  adnn_transpose ta, tb;
  double alpha, beta;
  int64_t pad_a, pad_b, pad_c; /* leading dimension minus the row length */
  int64_t batch;
  int64_t gap;       /* extra elements between batched matrices */
  int shared_b;      /* stride_b = 0: every matrix uses the same B */
  uint32_t flags;    /* context flags (TF32) */
} gemm_case;

static const gemm_case cases[] = {
    {"1x1x1", 1, 1, 1, ADNN_NO_TRANS, ADNN_NO_TRANS, 1.0, 0.0, 0, 0, 0, 1, 0, 0, 0},
    {"m=1 row", 1, 17, 5, ADNN_NO_TRANS, ADNN_NO_TRANS, 1.0, 0.0, 0, 0, 0, 1, 0, 0, 0},
    {"n=1 column", 13, 1, 7, ADNN_NO_TRANS, ADNN_NO_TRANS, 1.0, 0.0, 0, 0, 0, 1, 0, 0, 0},
    {"k=1 outer product", 7, 9, 1, ADNN_NO_TRANS, ADNN_NO_TRANS, 1.0, 0.0, 0, 0, 0, 1, 0, 0, 0},
    {"odd NN", 33, 17, 29, ADNN_NO_TRANS, ADNN_NO_TRANS, 1.5, 0.0, 0, 0, 0, 1, 0, 0, 0},
    {"odd TN", 33, 17, 29, ADNN_TRANS, ADNN_NO_TRANS, 1.0, 0.0, 0, 0, 0, 1, 0, 0, 0},
    {"odd NT", 33, 17, 29, ADNN_NO_TRANS, ADNN_TRANS, 1.0, 0.0, 0, 0, 0, 1, 0, 0, 0},
    {"odd TT beta", 33, 17, 29, ADNN_TRANS, ADNN_TRANS, -0.5, 2.0, 0, 0, 0, 1, 0, 0, 0},
    {"padded ld, beta 1", 64, 48, 80, ADNN_NO_TRANS, ADNN_NO_TRANS, 1.0, 1.0, 3, 5, 7, 1, 0, 0, 0},
    {"padded ld TT", 31, 45, 20, ADNN_TRANS, ADNN_TRANS, 0.75, -1.0, 2, 1, 9, 1, 0, 0, 0},
    {"non-square tall", 300, 7, 65, ADNN_NO_TRANS, ADNN_TRANS, 1.0, 0.0, 0, 0, 0, 1, 0, 0, 0},
    {"non-square wide", 5, 260, 33, ADNN_TRANS, ADNN_NO_TRANS, 1.0, 0.5, 1, 0, 2, 1, 0, 0, 0},
    {"k=0 scales C", 6, 5, 0, ADNN_NO_TRANS, ADNN_NO_TRANS, 1.0, 0.5, 0, 0, 1, 1, 0, 0, 0},
    {"batched", 19, 23, 11, ADNN_NO_TRANS, ADNN_NO_TRANS, 1.0, 0.0, 1, 2, 3, 5, 4, 0, 0},
    {"batched TT beta", 19, 23, 11, ADNN_TRANS, ADNN_TRANS, 2.0, 0.25, 0, 0, 0, 4, 7, 0, 0},
    {"batched shared B", 16, 8, 12, ADNN_NO_TRANS, ADNN_TRANS, 1.0, 0.0, 0, 0, 0, 6, 0, 1, 0},
    {"larger", 256, 384, 512, ADNN_NO_TRANS, ADNN_NO_TRANS, 1.0, 0.0, 0, 0, 0, 1, 0, 0, 0},
};

/* Element access in either dtype. */
static double load(const void *p, adnn_dtype dt, int64_t i) {
  return dt == ADNN_DTYPE_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}
static void store(void *p, adnn_dtype dt, int64_t i, double v) {
  if (dt == ADNN_DTYPE_F32)
    ((float *)p)[i] = (float)v;
  else
    ((double *)p)[i] = v;
}

/* One case in one dtype; returns the number of failed checks. */
static void run_case(adnn_context *gpu, adnn_context *cpu, const gemm_case *c, adnn_dtype dt) {
  const size_t es = adnn_dtype_size(dt);
  const int64_t rows_a = c->ta == ADNN_TRANS ? c->k : c->m, cols_a = c->ta == ADNN_TRANS ? c->m : c->k;
  const int64_t rows_b = c->tb == ADNN_TRANS ? c->n : c->k, cols_b = c->tb == ADNN_TRANS ? c->k : c->n;
  const int64_t lda = (cols_a > 0 ? cols_a : 1) + c->pad_a, ldb = (cols_b > 0 ? cols_b : 1) + c->pad_b;
  const int64_t ldc = c->n + c->pad_c;
  const int64_t stride_a = rows_a * lda + c->gap, stride_b = c->shared_b ? 0 : rows_b * ldb + c->gap;
  const int64_t stride_c = c->batch > 1 ? c->m * ldc + c->gap : 0;
  const int64_t len_a = (c->batch - 1) * stride_a + rows_a * lda + 1;
  const int64_t len_b = (c->batch - 1) * stride_b + rows_b * ldb + 1;
  const int64_t len_c = (c->batch - 1) * stride_c + c->m * ldc;

  tap_rng rng = tap_rng_seed((uint64_t)(c->m * 131 + c->n * 17 + c->k + dt * 7 + c->batch));
  void *a = malloc((size_t)len_a * es), *b = malloc((size_t)len_b * es);
  void *c0 = malloc((size_t)len_c * es), *out_gpu = malloc((size_t)len_c * es), *out_cpu = malloc((size_t)len_c * es);
  double *ref = malloc((size_t)len_c * sizeof *ref), *bound = malloc((size_t)len_c * sizeof *bound);
  int *inside = calloc((size_t)len_c, sizeof *inside);
  for (int64_t i = 0; i < len_a; i++) store(a, dt, i, tap_rng_uniform(&rng, -1, 1));
  for (int64_t i = 0; i < len_b; i++) store(b, dt, i, tap_rng_uniform(&rng, -1, 1));
  for (int64_t i = 0; i < len_c; i++) store(c0, dt, i, NAN); /* poison everything */
  for (int64_t p = 0; p < c->batch; p++)
    for (int64_t i = 0; i < c->m; i++)
      for (int64_t j = 0; j < c->n; j++) {
        int64_t at = p * stride_c + i * ldc + j;
        inside[at] = 1;
        if (c->beta != 0.0) store(c0, dt, at, tap_rng_uniform(&rng, -1, 1));
      }

  /* The reference in double, with an error bound per element:
   * gamma * (|alpha| sum |a||b| + |beta||c|), gamma = (k + 2) * unit roundoff. */
  const double eps = dt == ADNN_DTYPE_F32 ? 0x1p-24 : 0x1p-53;
  const double gamma = (double)(c->k + 2) * eps * ((c->flags & ADNN_CONTEXT_ALLOW_TF32) ? 8192.0 : 2.0);
  for (int64_t p = 0; p < c->batch; p++)
    for (int64_t i = 0; i < c->m; i++)
      for (int64_t j = 0; j < c->n; j++) {
        double sum = 0, abs_sum = 0;
        for (int64_t l = 0; l < c->k; l++) {
          double av = load(a, dt, p * stride_a + (c->ta == ADNN_TRANS ? l * lda + i : i * lda + l));
          double bv = load(b, dt, p * stride_b + (c->tb == ADNN_TRANS ? j * ldb + l : l * ldb + j));
          sum += av * bv;
          abs_sum += fabs(av * bv);
        }
        int64_t at = p * stride_c + i * ldc + j;
        double cv = c->beta != 0.0 ? load(c0, dt, at) : 0.0;
        ref[at] = c->alpha * sum + c->beta * cv;
        bound[at] = gamma * (fabs(c->alpha) * abs_sum + fabs(c->beta * cv)) + 1e-300;
      }

  /* Run the same call on both backends. */
  adnn_context *ctxs[2] = {gpu, cpu};
  void *outs[2] = {out_gpu, out_cpu};
  int ran[2] = {0, 0};
  for (int which = 0; which < 2; which++) {
    adnn_context *ctx = ctxs[which];
    if (!ctx) continue;
    const char *name = which ? "cpu" : "cuda";
    void *da = NULL, *db = NULL, *dc = NULL;
    adnn_status st = adnn_context_set_flags(ctx, c->flags);
    if (st == ADNN_STATUS_SUCCESS) st = adnn_malloc(ctx, (size_t)len_a * es, &da);
    if (st == ADNN_STATUS_SUCCESS) st = adnn_malloc(ctx, (size_t)len_b * es, &db);
    if (st == ADNN_STATUS_SUCCESS) st = adnn_malloc(ctx, (size_t)len_c * es, &dc);
    if (st == ADNN_STATUS_SUCCESS) st = adnn_memcpy(ctx, da, a, (size_t)len_a * es, ADNN_MEMCPY_HOST_TO_DEVICE);
    if (st == ADNN_STATUS_SUCCESS) st = adnn_memcpy(ctx, db, b, (size_t)len_b * es, ADNN_MEMCPY_HOST_TO_DEVICE);
    if (st == ADNN_STATUS_SUCCESS) st = adnn_memcpy(ctx, dc, c0, (size_t)len_c * es, ADNN_MEMCPY_HOST_TO_DEVICE);
    if (st == ADNN_STATUS_SUCCESS) {
      if (c->batch == 1 && c->gap == 0)
        st = adnn_gemm(ctx, dt, c->ta, c->tb, c->m, c->n, c->k, c->alpha, da, lda, db, ldb, c->beta, dc, ldc);
      else
        st = adnn_gemm_batched(ctx, dt, c->ta, c->tb, c->m, c->n, c->k, c->alpha, da, lda, db, ldb,
                               c->beta, dc, ldc, c->batch, stride_a, stride_b, stride_c);
    }
    if (st == ADNN_STATUS_SUCCESS) st = adnn_memcpy(ctx, outs[which], dc, (size_t)len_c * es, ADNN_MEMCPY_DEVICE_TO_HOST);
    if (st == ADNN_STATUS_SUCCESS) st = adnn_context_synchronize(ctx);
    is_status(st, ADNN_STATUS_SUCCESS, "%s %s %s: runs", name, adnn_dtype_name(dt), c->what);
    ran[which] = st == ADNN_STATUS_SUCCESS;
    adnn_free(ctx, da);
    adnn_free(ctx, db);
    adnn_free(ctx, dc);
    adnn_context_set_flags(ctx, 0);
  }

  if (ran[0]) {
    int64_t bad = -1, untouched_bad = -1;
    double worst = 0;
    for (int64_t i = 0; i < len_c; i++) {
      double g = load(out_gpu, dt, i);
      if (!inside[i]) {
        if (!isnan(g) && untouched_bad < 0) untouched_bad = i;
        continue;
      }
      double err = fabs(g - ref[i]);
      if (!(err <= bound[i]) && bad < 0) bad = i; /* also catches NaN */
      if (err / bound[i] > worst) worst = err / bound[i];
    }
    if (!ok(bad < 0, "cuda %s %s: matches the reference (worst error %.3g of the bound)",
            adnn_dtype_name(dt), c->what, worst))
      diag("  element %lld: got %.17g, expected %.17g, bound %.3g", (long long)bad,
           load(out_gpu, dt, bad), ref[bad], bound[bad]);
    if (!ok(untouched_bad < 0, "cuda %s %s: nothing outside C is written", adnn_dtype_name(dt), c->what))
      diag("  element %lld outside C became %.17g", (long long)untouched_bad, load(out_gpu, dt, untouched_bad));
    if (ran[1]) {
      int64_t diff = -1;
      for (int64_t i = 0; i < len_c && diff < 0; i++)
        if (inside[i] && !(fabs(load(out_gpu, dt, i) - load(out_cpu, dt, i)) <= 2 * bound[i])) diff = i;
      if (!ok(diff < 0, "cuda %s %s: agrees with cpu", adnn_dtype_name(dt), c->what))
        diag("  element %lld: cuda %.17g, cpu %.17g, bound %.3g", (long long)diff,
             load(out_gpu, dt, diff), load(out_cpu, dt, diff), 2 * bound[diff]);
    }
  }
  free(a), free(b), free(c0), free(out_gpu), free(out_cpu), free(ref), free(bound), free(inside);
}

int main(void) {
  adnn_context *gpu = NULL, *cpu = NULL;
  if (adnn_context_create("cuda", &gpu) != ADNN_STATUS_SUCCESS) {
    char reason[1200];
    snprintf(reason, sizeof reason, "no usable CUDA device: %s", adnn_last_error());
    for (char *p = reason; *p; p++)
      if (*p == '\n') *p = ' ';
    return tap_skip_all(reason);
  }
  if (adnn_context_create("cpu", &cpu) != ADNN_STATUS_SUCCESS) {
    diag("no cpu backend (%s): comparing with the reference only", adnn_last_error());
    cpu = NULL;
  }
  static const adnn_dtype dtypes[] = {ADNN_DTYPE_F32, ADNN_DTYPE_F64};
  for (size_t d = 0; d < 2; d++)
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(gpu, cpu, &cases[i], dtypes[d]);

  /* TF32, when allowed, may change F32 results only within TF32's precision. */
  gemm_case tf32 = {"TF32 allowed", 128, 96, 256, ADNN_NO_TRANS, ADNN_NO_TRANS, 1.0, 0.0, 0, 0, 0, 1, 0, 0,
                    ADNN_CONTEXT_ALLOW_TF32};
  run_case(gpu, NULL, &tf32, ADNN_DTYPE_F32);

  adnn_context_destroy(cpu);
  adnn_context_destroy(gpu);
  return tap_done();
}
