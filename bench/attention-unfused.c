/*
 * The fused attention forward against the unfused composition of adnn's own
 * ops, in one run on one context (doc/performance.md records a run):
 *   fused:   adnn_plan_create_attention (o and lse);
 *   unfused: S = scale * Q K^T (adnn_gemm_batched over the B * H heads),
 *            S += mask (adnn binary add of a [Sq, Skv] tensor of 0 and -inf,
 *            broadcast over the heads; causal problems only), P = softmax(S)
 *            (adnn softmax over the last axis, in place), O = P V
 *            (adnn_gemm_batched).
 * Both read and write packed BHSD F32 tensors; the unfused path also needs
 * the B * H * Sq * Skv scores, which is why it is skipped (and says so) when
 * they would take more than --max-scores-gib (default 4).
 *
 * Usage: bench/attention-unfused [--repeat N] [--max-scores-gib G]
 *            B H S D causal [B H S D causal ...]
 * prints one line per problem: the best of N runs (default 3) of each, in
 * milliseconds, the fused speed-up, and the largest difference between the
 * two outputs (a check that both computed the same thing). Each timed run
 * ends with adnn_context_synchronize.
 */
#include <adnn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

#define CHECK(call)                                                              \
  do {                                                                           \
    adnn_status st_ = (call);                                                    \
    if (st_ != ADNN_STATUS_SUCCESS) {                                            \
      fprintf(stderr, "attention-unfused: %s: %s\n", #call, adnn_last_error()); \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

typedef struct problem {
  int64_t B, H, S, D;
  int causal;
} problem;

/* Fills n floats with a fixed pseudo-random pattern in [-1, 1). */
static void fill(float *p, size_t n, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1u;
  for (size_t i = 0; i < n; i++) {
    x = x * 1664525u + 1013904223u;
    p[i] = (float)((x >> 8) * (1.0 / 8388608.0) - 1.0);
  }
}

static void run(adnn_context *ctx, const problem *pr, int repeat, double max_scores_gib) {
  const int64_t B = pr->B, H = pr->H, S = pr->S, D = pr->D, BH = B * H;
  const size_t n = (size_t)(BH * S * D);
  float *q, *k, *v, *o, *lse, *o2 = NULL, *scores = NULL, *mask = NULL;
  CHECK(adnn_malloc(ctx, n * 4, (void **)&q));
  CHECK(adnn_malloc(ctx, n * 4, (void **)&k));
  CHECK(adnn_malloc(ctx, n * 4, (void **)&v));
  CHECK(adnn_malloc(ctx, n * 4, (void **)&o));
  CHECK(adnn_malloc(ctx, (size_t)(BH * S) * 4, (void **)&lse));
  fill(q, n, 1);
  fill(k, n, 2);
  fill(v, n, 3);

  /* Fused. */
  adnn_attention_desc d;
  adnn_attention_desc_init(&d);
  const int64_t dims[4] = {B, H, S, D}, ldims[3] = {B, H, S};
  CHECK(adnn_tensor_desc_init(&d.q, ADNN_DTYPE_F32, 4, dims));
  d.k = d.v = d.o = d.q;
  CHECK(adnn_tensor_desc_init(&d.lse, ADNN_DTYPE_F32, 3, ldims));
  d.causal = pr->causal;
  adnn_plan *fused;
  CHECK(adnn_plan_create_attention(ctx, &d, &fused));
  const void *in[3] = {q, k, v};
  void *out[2] = {o, lse};
  double best_fused = INFINITY;
  for (int r = 0; r <= repeat; r++) { /* run 0 warms up */
    const double t0 = now_ms();
    CHECK(adnn_plan_execute_multi(fused, in, 3, out, 2));
    CHECK(adnn_context_synchronize(ctx));
    const double t = now_ms() - t0;
    if (r > 0 && t < best_fused) best_fused = t;
  }

  /* Unfused, when its scores fit. */
  const double scores_gib = (double)BH * (double)S * (double)S * 4.0 / (1024.0 * 1024.0 * 1024.0);
  double best_unfused = INFINITY, diff = NAN;
  if (scores_gib <= max_scores_gib) {
    const size_t ns = (size_t)(BH * S * S);
    CHECK(adnn_malloc(ctx, ns * 4, (void **)&scores));
    CHECK(adnn_malloc(ctx, n * 4, (void **)&o2));
    adnn_softmax_desc sd;
    adnn_softmax_desc_init(&sd);
    const int64_t sdims[2] = {BH * S, S};
    CHECK(adnn_tensor_desc_init(&sd.x, ADNN_DTYPE_F32, 2, sdims));
    sd.y = sd.x;
    adnn_plan *softmax, *add = NULL;
    CHECK(adnn_plan_create_softmax(ctx, &sd, &softmax));
    if (pr->causal) {
      CHECK(adnn_malloc(ctx, (size_t)(S * S) * 4, (void **)&mask));
      for (int64_t i = 0; i < S; i++)
        for (int64_t j = 0; j < S; j++) mask[i * S + j] = j <= i ? 0.0f : -INFINITY;
      adnn_binary_desc bd;
      adnn_binary_desc_init(&bd);
      bd.op = ADNN_BINARY_ADD;
      const int64_t s3[3] = {BH, S, S}, m2[2] = {S, S};
      CHECK(adnn_tensor_desc_init(&bd.a, ADNN_DTYPE_F32, 3, s3));
      CHECK(adnn_tensor_desc_init(&bd.b, ADNN_DTYPE_F32, 2, m2));
      bd.y = bd.a;
      CHECK(adnn_plan_create_binary(ctx, &bd, &add));
    }
    const double scale = 1.0 / sqrt((double)D);
    for (int r = 0; r <= repeat; r++) {
      const double t0 = now_ms();
      CHECK(adnn_gemm_batched(ctx, ADNN_DTYPE_F32, ADNN_NO_TRANS, ADNN_TRANS, S, S, D, scale, q,
                              D, k, D, 0.0, scores, S, BH, S * D, S * D, S * S));
      if (add) {
        const void *ain[2] = {scores, mask};
        CHECK(adnn_plan_execute(add, ain, 2, scores));
      }
      const void *sin[1] = {scores};
      CHECK(adnn_plan_execute(softmax, sin, 1, scores));
      CHECK(adnn_gemm_batched(ctx, ADNN_DTYPE_F32, ADNN_NO_TRANS, ADNN_NO_TRANS, S, D, S, 1.0,
                              scores, S, v, D, 0.0, o2, D, BH, S * S, S * D, S * D));
      CHECK(adnn_context_synchronize(ctx));
      const double t = now_ms() - t0;
      if (r > 0 && t < best_unfused) best_unfused = t;
    }
    diff = 0.0;
    for (size_t i = 0; i < n; i++) diff = fmax(diff, fabs((double)o[i] - (double)o2[i]));
    if (add) adnn_plan_destroy(add);
    adnn_plan_destroy(softmax);
  }
  printf("attention:b%lldh%lldhkv%lldsq%lldskv%lldd%llddv%lld%s  fused %9.2f ms (%s, "
         "workspace %zu B)  ",
         (long long)B, (long long)H, (long long)H, (long long)S, (long long)S, (long long)D,
         (long long)D, pr->causal ? ":causal" : "", best_fused, adnn_plan_get_algorithm(fused),
         adnn_plan_get_workspace_bytes(fused));
  if (isfinite(best_unfused))
    printf("unfused %9.2f ms (scores %.2f GiB)  speed-up %.2fx  max|o - o_unfused| %.1e\n",
           best_unfused, scores_gib, best_unfused / best_fused, diff);
  else
    printf("unfused skipped (its scores would need %.2f GiB)\n", scores_gib);
  fflush(stdout);
  adnn_plan_destroy(fused);
  adnn_free(ctx, q);
  adnn_free(ctx, k);
  adnn_free(ctx, v);
  adnn_free(ctx, o);
  adnn_free(ctx, lse);
  if (o2) adnn_free(ctx, o2);
  if (scores) adnn_free(ctx, scores);
  if (mask) adnn_free(ctx, mask);
}

int main(int argc, char **argv) {
  int repeat = 3;
  double max_gib = 4.0;
  int a = 1;
  for (; a < argc && strncmp(argv[a], "--", 2) == 0; a += 2) {
    if (a + 1 >= argc) break;
    if (strcmp(argv[a], "--repeat") == 0) repeat = atoi(argv[a + 1]);
    else if (strcmp(argv[a], "--max-scores-gib") == 0) max_gib = atof(argv[a + 1]);
    else break;
  }
  if ((argc - a) % 5 != 0 || argc == a || repeat < 1) {
    fprintf(stderr, "usage: %s [--repeat N] [--max-scores-gib G] B H S D causal ...\n", argv[0]);
    return 2;
  }
  adnn_context *ctx;
  CHECK(adnn_context_create("cpu", &ctx));
  for (; a + 4 < argc; a += 5) {
    const problem pr = {atoll(argv[a]), atoll(argv[a + 1]), atoll(argv[a + 2]),
                        atoll(argv[a + 3]), atoi(argv[a + 4])};
    if (pr.B < 1 || pr.H < 1 || pr.S < 1 || pr.D < 1) {
      fprintf(stderr, "attention-unfused: sizes must be >= 1\n");
      return 2;
    }
    run(ctx, &pr, repeat, max_gib);
  }
  adnn_context_destroy(ctx);
  return 0;
}
