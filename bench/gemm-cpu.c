/*
 * gemm-cpu: the cost of the adnn layer on the CPU. For each shape it times
 * adnn_gemm on the "cpu" backend and cblas_sgemm called directly on the same
 * buffers, alternating the two so that both see the same machine noise, and
 * prints the medians and their ratio.
 *
 * usage: gemm-cpu [runs]        (default 9 timed runs per shape and method)
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <adnn.h>

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct shape {
  const char *name;
  int m, n, k;
} shape;

/* Square sizes, then BERT-base layers at sequence length 128 x batch 1
 * (tokens x hidden): QKV projection, attention output, FFN up and down. */
static const shape shapes[] = {
    {"square 256", 256, 256, 256},      {"square 512", 512, 512, 512},
    {"square 1024", 1024, 1024, 1024},  {"square 2048", 2048, 2048, 2048},
    {"square 4096", 4096, 4096, 4096},  {"bert qkv 128x2304x768", 128, 2304, 768},
    {"bert attn-out 128x768x768", 128, 768, 768}, {"bert ffn-up 128x3072x768", 128, 3072, 768},
    {"bert ffn-down 128x768x3072", 128, 768, 3072},
};

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 9;
  if (runs < 1 || runs > 1000) runs = 9;
  adnn_context *ctx;
  if (adnn_context_create("cpu", &ctx) != ADNN_STATUS_SUCCESS) {
    fprintf(stderr, "gemm-cpu: %s\n", adnn_last_error());
    return 1;
  }
  double *t_adnn = malloc(sizeof(double) * (size_t)runs), *t_blas = malloc(sizeof(double) * (size_t)runs);
  printf("%-30s %12s %12s %10s %10s %8s\n", "shape (m x n x k)", "adnn ms", "cblas ms", "adnn GF/s",
         "cblas GF/s", "ratio");
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    const shape *sh = &shapes[s];
    size_t na = (size_t)sh->m * sh->k, nb = (size_t)sh->k * sh->n, nc = (size_t)sh->m * sh->n;
    float *a, *b, *c;
    if (adnn_malloc(ctx, na * 4, (void **)&a) || adnn_malloc(ctx, nb * 4, (void **)&b) ||
        adnn_malloc(ctx, nc * 4, (void **)&c)) {
      fprintf(stderr, "gemm-cpu: %s\n", adnn_last_error());
      return 1;
    }
    unsigned seed = 7u;
    for (size_t i = 0; i < na; i++) a[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 9) * 1e-7f;
    for (size_t i = 0; i < nb; i++) b[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 9) * 1e-7f;
    /* Warm up both paths (thread pools, page faults). */
    adnn_gemm(ctx, ADNN_DTYPE_F32, ADNN_NO_TRANS, ADNN_NO_TRANS, sh->m, sh->n, sh->k, 1.0, a, sh->k,
              b, sh->n, 0.0, c, sh->n);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, sh->m, sh->n, sh->k, 1.0f, a, sh->k, b,
                sh->n, 0.0f, c, sh->n);
    for (int r = 0; r < runs; r++) {
      double t0 = now_seconds();
      adnn_gemm(ctx, ADNN_DTYPE_F32, ADNN_NO_TRANS, ADNN_NO_TRANS, sh->m, sh->n, sh->k, 1.0, a,
                sh->k, b, sh->n, 0.0, c, sh->n);
      double t1 = now_seconds();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, sh->m, sh->n, sh->k, 1.0f, a, sh->k,
                  b, sh->n, 0.0f, c, sh->n);
      double t2 = now_seconds();
      t_adnn[r] = t1 - t0;
      t_blas[r] = t2 - t1;
    }
    qsort(t_adnn, (size_t)runs, sizeof(double), compare_doubles);
    qsort(t_blas, (size_t)runs, sizeof(double), compare_doubles);
    double ma = t_adnn[runs / 2], mb = t_blas[runs / 2];
    double flop = 2.0 * sh->m * (double)sh->n * sh->k;
    printf("%-30s %12.3f %12.3f %10.1f %10.1f %8.3f\n", sh->name, ma * 1e3, mb * 1e3,
           flop / ma * 1e-9, flop / mb * 1e-9, ma / mb);
    adnn_free(ctx, a);
    adnn_free(ctx, b);
    adnn_free(ctx, c);
  }
  free(t_adnn);
  free(t_blas);
  adnn_context_destroy(ctx);
  return 0;
}
