/*
 * transformer-block: one BERT-base encoder layer written only against the
 * public API, run two ways on the same weights and input:
 *
 *   fused    adnn's transformer ops: every projection is one adnn_matmul plan
 *            with its bias, GELU and residual fused into the GEMM's epilogue,
 *            and attention is one adnn_attention plan (tiled, online softmax:
 *            no [S, S] score matrix exists);
 *   unfused  the same layer composed from the older ops: adnn_gemm and
 *            adnn_gemm_batched, broadcast adds (adnn_binary), softmax over
 *            materialized scores [B, 12, S, S], the GELU activation and layer
 *            norm.
 *
 * It checks that the two agree (tolerance below) and prints the median time
 * per layer of each.
 *
 * The layer (BERT-base: hidden 768, 12 heads of 64, FFN 3072, post-LN), with
 * x [T, 768] and T = batch * seq tokens, row-major:
 *   qkv  = x @ Wqkv + bqkv                       [T, 2304]: q | k | v columns
 *   ctx  = attention(q, k, v)                    [T, 768], scale 1/8, not causal
 *   h1   = ctx @ Wo + bo + x                     output projection + residual
 *   a1   = layernorm(h1) * g1 + beta1            eps 1e-12 as in BERT
 *   f    = gelu(a1 @ W1 + b1)                    [T, 3072], GELU in its erf form
 *   h2   = f @ W2 + b2 + a1                      FFN2 + residual
 *   out  = layernorm(h2) * g2 + beta2
 * The attention reads q, k and v straight out of qkv through strides: q is
 * [B, 12, S, 64] with strides [S*2304, 64, 2304, 1] starting at column 0 (k at
 * column 768, v at 1536), the BSHD layout; its output is written the same way
 * into ctx [T, 768] (strides [S*768, 64, 768, 1]), so no head is ever copied.
 * With --key-lengths the batches are padded: batch b has
 * S - (b + 1) * S / (2 * B + 2) valid keys (the fused path passes them as
 * key_lengths, the unfused one adds a [B, 1, 1, S] mask of 0 / -inf to the
 * scores); padded query rows are computed as BERT computes them.
 *
 * Weights: seeded pseudo-random, scaled like BERT's initializer (normal with
 * standard deviation 0.02 for every weight matrix). BERT initializes biases to
 * 0 and layer-norm gains to 1; here biases are normal(0, 0.02) and gains
 * 1 + normal(0, 0.02) instead, so that a bias or gain the fused path forgot
 * would show in the check. The input is normal(0, 1), the scale of BERT's
 * layer-normalized embeddings. Nothing is trained: the output means nothing.
 *
 * Tolerance: the output is layer-normalized (unit variance per token), and
 * the check requires max |fused - unfused| <= 1e-3 over all T x 768 values.
 * Both paths run in F32 and differ only in summation order (GEMM blocking,
 * the online softmax's rescaling, where the bias is added); the differences
 * observed are around 1e-6..1e-5 (the program prints the maximum and the
 * RMS), so 1e-3 leaves two orders of magnitude of margin while a forgotten
 * bias (0.02 before the norm), a wrong head stride or a wrong mask changes
 * the output by 1e-2 or more. doc/transformer.md and doc/numerics.md say the
 * same.
 *
 * usage: transformer-block [--batch B --seq S] [--runs N] [--key-lengths]
 *                          [--backend NAME] [--seed N]
 * Without --batch/--seq it runs BERT's two usual shapes, 8 x 128 and
 * 1 x 2048. Exit status: 0 when every check passed (or the fused ops are not
 * available on the backend: it says so and times the unfused path alone; a
 * backend with adnn_matmul but not adnn_attention runs the fused path with
 * the unfused attention, and says so), 1 when a check failed or an adnn call
 * failed, 2 for a bad command line.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <adnn.h>

#define HIDDEN 768
#define HEADS 12
#define HEAD_DIM 64
#define FFN 3072
#define QKV (3 * HIDDEN)
#define LN_EPS 1e-12
#define TOLERANCE 1e-3
/* Sequences up to this length are also checked against plain double loops. */
#define REFERENCE_MAX_SEQ 64

#define CHECK(call)                                                                          \
  do {                                                                                       \
    adnn_status st_ = (call);                                                                \
    if (st_ != ADNN_STATUS_SUCCESS) {                                                        \
      fprintf(stderr, "transformer-block: %s failed: %s: %s\n", #call, adnn_status_name(st_), \
              adnn_last_error());                                                            \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

static adnn_context *ctx;

/* ---- seeded normal numbers (splitmix64 + Box-Muller) ---------------------- */

static uint64_t rng_state;
static double rng_uniform(void) { /* in (0, 1) */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}
static double rng_normal(void) {
  double u = rng_uniform(), v = rng_uniform();
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Device memory for n floats, normal(mean, stddev) when stddev >= 0 (else
 * left uninitialized). */
static float *device_floats(size_t n, double mean, double stddev) {
  void *dev;
  CHECK(adnn_malloc(ctx, n * sizeof(float), &dev));
  if (stddev >= 0) {
    float *host = malloc(n * sizeof *host);
    if (host == NULL) {
      fprintf(stderr, "transformer-block: out of host memory\n");
      exit(1);
    }
    for (size_t i = 0; i < n; i++) host[i] = (float)(mean + stddev * rng_normal());
    CHECK(adnn_memcpy(ctx, dev, host, n * sizeof *host, ADNN_MEMCPY_HOST_TO_DEVICE));
    free(host);
  }
  return dev;
}

static adnn_tensor_desc tensor(adnn_dtype dtype, int rank, const int64_t *dims,
                               const int64_t *strides) {
  adnn_tensor_desc t;
  CHECK(adnn_tensor_desc_init(&t, dtype, rank, dims));
  if (strides != NULL)
    for (int i = 0; i < rank; i++) t.strides[i] = strides[i];
  return t;
}
static adnn_tensor_desc matrix(int64_t rows, int64_t cols) {
  return tensor(ADNN_DTYPE_F32, 2, (int64_t[]){rows, cols}, NULL);
}
static adnn_tensor_desc vector(int64_t n) { return tensor(ADNN_DTYPE_F32, 1, &n, NULL); }

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* ---- the layer's parameters and activations ------------------------------- */

typedef struct layer {
  int64_t batch, seq, tokens;
  float *wqkv, *bqkv, *wo, *bo, *g1, *beta1, *w1, *b1, *w2, *b2, *g2, *beta2;
  float *x;
  int32_t *key_lengths; /* device, [batch]; NULL without --key-lengths */
  float *mask;          /* device, [batch, 1, 1, seq] of 0 / -inf (unfused path) */
} layer;

/* ---- a host reference in double, for small sequences ---------------------- */

/* Copies n floats from the device into a new host array of doubles. */
static double *host_doubles(const float *dev, size_t n) {
  float *f = malloc(n * sizeof *f);
  double *d = malloc(n * sizeof *d);
  if (f == NULL || d == NULL) exit(1);
  CHECK(adnn_memcpy(ctx, f, dev, n * sizeof *f, ADNN_MEMCPY_DEVICE_TO_HOST));
  for (size_t i = 0; i < n; i++) d[i] = f[i];
  free(f);
  return d;
}

/* y[m, n] = x[m, k] @ w[k, n] + bias (plain loops, double). */
static void ref_linear(const double *x, const double *w, const double *bias, double *y,
                       int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double acc = bias[j];
      for (int64_t p = 0; p < k; p++) acc += x[i * k + p] * w[p * n + j];
      y[i * n + j] = acc;
    }
}

static void ref_layernorm(double *x, const double *gain, const double *bias, int64_t m) {
  for (int64_t i = 0; i < m; i++) {
    double *row = x + i * HIDDEN, mean = 0.0, var = 0.0;
    for (int j = 0; j < HIDDEN; j++) mean += row[j];
    mean /= HIDDEN;
    for (int j = 0; j < HIDDEN; j++) var += (row[j] - mean) * (row[j] - mean);
    double inv = 1.0 / sqrt(var / HIDDEN + LN_EPS);
    for (int j = 0; j < HIDDEN; j++) row[j] = (row[j] - mean) * inv * gain[j] + bias[j];
  }
}

/* The layer for sequence 0 alone (seq tokens, key_length valid keys), written
 * from the definition at the top of this file with no adnn op; the result is
 * out[seq, 768]. */
static double *reference_layer(const struct layer *L, int64_t key_length);

/* ---- fused path: adnn_matmul + adnn_attention ----------------------------- */

typedef struct unfused unfused;
static void unfused_attention(const layer *L, const unfused *U, const float *qkv, float *out);

typedef struct fused {
  adnn_plan *qkv, *attn, *out_proj, *ln1, *ffn1, *ffn2, *ln2;
  float *qkv_buf, *ctx_buf, *h1, *a1, *f, *h2, *out;
  /* When the backend has adnn_matmul but not adnn_attention yet, the fused
   * path runs the unfused attention (these plans), so that the matmul
   * epilogues are still checked. */
  const unfused *attention_fallback;
} fused;

/* y[M, N] = act(a[M, K] @ w[K, N] + bias + residual). */
static adnn_status matmul_plan(int64_t m, int64_t k, int64_t n, int residual,
                               adnn_activation_kind act, adnn_plan **plan) {
  adnn_matmul_desc d;
  adnn_matmul_desc_init(&d);
  d.a = matrix(m, k);
  d.b = matrix(k, n);
  d.y = matrix(m, n);
  d.has_bias = 1;
  d.bias = vector(n);
  d.has_residual = residual;
  if (residual) d.residual = d.y;
  d.activation.kind = act;
  return adnn_plan_create_matmul(ctx, &d, plan);
}

static adnn_plan *layernorm_plan(int64_t tokens) {
  adnn_norm_desc d;
  adnn_norm_desc_init(&d);
  d.kind = ADNN_NORM_LAYER;
  d.x = d.y = matrix(tokens, HIDDEN);
  d.epsilon = LN_EPS;
  d.has_gain = d.has_bias = 1;
  adnn_plan *p;
  CHECK(adnn_plan_create_norm(ctx, &d, &p));
  return p;
}

/* Creates the fused plans; returns the first status that is not success
 * (NOT_SUPPORTED while the transformer ops are missing on the backend). An
 * attention refused with NOT_SUPPORTED alone is replaced by U's unfused
 * attention; *attention_status says so. */
static adnn_status fused_create(const layer *L, const unfused *U, fused *F,
                                adnn_status *attention_status, char *why, size_t why_size) {
  memset(F, 0, sizeof *F);
  int64_t t = L->tokens, b = L->batch, s = L->seq;
  adnn_status st;
  if ((st = matmul_plan(t, HIDDEN, QKV, 0, ADNN_ACTIVATION_IDENTITY, &F->qkv))) return st;
  adnn_attention_desc a;
  adnn_attention_desc_init(&a);
  /* BSHD views of the qkv buffer and of ctx: dims [B, H, S, D]. */
  int64_t dims[4] = {b, HEADS, s, HEAD_DIM};
  int64_t in_strides[4] = {s * QKV, HEAD_DIM, QKV, 1};
  int64_t out_strides[4] = {s * HIDDEN, HEAD_DIM, HIDDEN, 1};
  a.q = a.k = a.v = tensor(ADNN_DTYPE_F32, 4, dims, in_strides);
  a.o = tensor(ADNN_DTYPE_F32, 4, dims, out_strides);
  a.has_lse = 0; /* inference: the backward pass's statistics are not needed */
  a.scale = 1.0 / sqrt((double)HEAD_DIM);
  if (L->key_lengths != NULL) {
    a.has_key_lengths = 1;
    a.key_lengths = tensor(ADNN_DTYPE_I32, 1, &b, NULL);
  }
  *attention_status = adnn_plan_create_attention(ctx, &a, &F->attn);
  if (*attention_status == ADNN_STATUS_NOT_SUPPORTED) {
    snprintf(why, why_size, "%s", adnn_last_error());
    F->attention_fallback = U;
  } else if (*attention_status != ADNN_STATUS_SUCCESS) {
    return *attention_status;
  }
  if ((st = matmul_plan(t, HIDDEN, HIDDEN, 1, ADNN_ACTIVATION_IDENTITY, &F->out_proj))) return st;
  if ((st = matmul_plan(t, HIDDEN, FFN, 0, ADNN_ACTIVATION_GELU, &F->ffn1))) return st;
  if ((st = matmul_plan(t, FFN, HIDDEN, 1, ADNN_ACTIVATION_IDENTITY, &F->ffn2))) return st;
  F->ln1 = layernorm_plan(t);
  F->ln2 = layernorm_plan(t);
  F->qkv_buf = device_floats((size_t)(t * QKV), 0, -1);
  F->ctx_buf = device_floats((size_t)(t * HIDDEN), 0, -1);
  F->h1 = device_floats((size_t)(t * HIDDEN), 0, -1);
  F->a1 = device_floats((size_t)(t * HIDDEN), 0, -1);
  F->f = device_floats((size_t)(t * FFN), 0, -1);
  F->h2 = device_floats((size_t)(t * HIDDEN), 0, -1);
  F->out = device_floats((size_t)(t * HIDDEN), 0, -1);
  return ADNN_STATUS_SUCCESS;
}

static void fused_run(const layer *L, const fused *F) {
  CHECK(adnn_plan_execute(F->qkv, (const void *[]){L->x, L->wqkv, L->bqkv}, 3, F->qkv_buf));
  if (F->attn != NULL) {
    const void *attn_in[4] = {F->qkv_buf, F->qkv_buf + HIDDEN, F->qkv_buf + 2 * HIDDEN,
                              L->key_lengths};
    void *attn_out[1] = {F->ctx_buf};
    CHECK(adnn_plan_execute_multi(F->attn, attn_in, L->key_lengths ? 4 : 3, attn_out, 1));
  } else {
    unfused_attention(L, F->attention_fallback, F->qkv_buf, F->ctx_buf);
  }
  CHECK(adnn_plan_execute(F->out_proj, (const void *[]){F->ctx_buf, L->wo, L->bo, L->x}, 4,
                          F->h1));
  CHECK(adnn_plan_execute(F->ln1, (const void *[]){F->h1, L->g1, L->beta1}, 3, F->a1));
  CHECK(adnn_plan_execute(F->ffn1, (const void *[]){F->a1, L->w1, L->b1}, 3, F->f));
  CHECK(adnn_plan_execute(F->ffn2, (const void *[]){F->f, L->w2, L->b2, F->a1}, 4, F->h2));
  CHECK(adnn_plan_execute(F->ln2, (const void *[]){F->h2, L->g2, L->beta2}, 3, F->out));
  CHECK(adnn_context_synchronize(ctx));
}

static void fused_destroy(fused *F) {
  adnn_plan *plans[] = {F->qkv, F->attn, F->out_proj, F->ln1, F->ffn1, F->ffn2, F->ln2};
  for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) adnn_plan_destroy(plans[i]);
  float *bufs[] = {F->qkv_buf, F->ctx_buf, F->h1, F->a1, F->f, F->h2, F->out};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) adnn_free(ctx, bufs[i]);
  memset(F, 0, sizeof *F);
}

/* ---- unfused path: adnn_gemm, binary, softmax, activation, norm ----------- */

struct unfused {
  adnn_plan *add_bqkv, *add_mask, *softmax, *add_bo, *add_residual, *ln1, *add_b1, *gelu,
      *add_b2, *ln2;
  float *qkv_buf, *scores, *ctx_buf, *h1, *a1, *f, *h2, *out;
};

/* y[rows, n] += bias[n] in place (broadcast over the rows). */
static adnn_plan *bias_add_plan(int64_t rows, int64_t n) {
  adnn_binary_desc d;
  adnn_binary_desc_init(&d);
  d.op = ADNN_BINARY_ADD;
  d.a = d.y = matrix(rows, n);
  d.b = vector(n);
  adnn_plan *p;
  CHECK(adnn_plan_create_binary(ctx, &d, &p));
  return p;
}

static void unfused_create(const layer *L, unfused *U) {
  memset(U, 0, sizeof *U);
  int64_t t = L->tokens, b = L->batch, s = L->seq;
  U->add_bqkv = bias_add_plan(t, QKV);
  int64_t sdims[4] = {b, HEADS, s, s};
  adnn_tensor_desc scores = tensor(ADNN_DTYPE_F32, 4, sdims, NULL);
  if (L->mask != NULL) {
    adnn_binary_desc d;
    adnn_binary_desc_init(&d);
    d.op = ADNN_BINARY_ADD;
    d.a = d.y = scores;
    d.b = tensor(ADNN_DTYPE_F32, 4, (int64_t[]){b, 1, 1, s}, NULL);
    CHECK(adnn_plan_create_binary(ctx, &d, &U->add_mask));
  }
  adnn_softmax_desc sm;
  adnn_softmax_desc_init(&sm);
  sm.x = sm.y = scores;
  sm.axis = -1;
  CHECK(adnn_plan_create_softmax(ctx, &sm, &U->softmax));
  U->add_bo = bias_add_plan(t, HIDDEN);
  adnn_binary_desc r;
  adnn_binary_desc_init(&r);
  r.op = ADNN_BINARY_ADD;
  r.a = r.b = r.y = matrix(t, HIDDEN);
  CHECK(adnn_plan_create_binary(ctx, &r, &U->add_residual));
  U->ln1 = layernorm_plan(t);
  U->add_b1 = bias_add_plan(t, FFN);
  adnn_activation_desc g;
  adnn_activation_desc_init(&g);
  g.x = g.y = matrix(t, FFN);
  g.activation.kind = ADNN_ACTIVATION_GELU;
  CHECK(adnn_plan_create_activation(ctx, &g, &U->gelu));
  U->add_b2 = bias_add_plan(t, HIDDEN);
  U->ln2 = layernorm_plan(t);
  U->qkv_buf = device_floats((size_t)(t * QKV), 0, -1);
  U->scores = device_floats((size_t)(b * HEADS * s * s), 0, -1);
  U->ctx_buf = device_floats((size_t)(t * HIDDEN), 0, -1);
  U->h1 = device_floats((size_t)(t * HIDDEN), 0, -1);
  U->a1 = device_floats((size_t)(t * HIDDEN), 0, -1);
  U->f = device_floats((size_t)(t * FFN), 0, -1);
  U->h2 = device_floats((size_t)(t * HIDDEN), 0, -1);
  U->out = device_floats((size_t)(t * HIDDEN), 0, -1);
}

/* out[T, 768] = the attention of the q, k, v columns of qkv [T, 2304], with
 * the scores materialized in U->scores. */
static void unfused_attention(const layer *L, const unfused *U, const float *qkv, float *out) {
  const adnn_dtype f32 = ADNN_DTYPE_F32;
  int64_t s = L->seq;
  /* Per sequence, one batched GEMM over the 12 heads: head h of q is the
   * [S, 64] block at column 64 h of that sequence's rows (leading dimension
   * 2304), so consecutive heads are 64 elements apart. */
  for (int64_t b = 0; b < L->batch; b++) {
    const float *q = qkv + b * s * QKV;
    CHECK(adnn_gemm_batched(ctx, f32, ADNN_NO_TRANS, ADNN_TRANS, s, s, HEAD_DIM,
                            1.0 / sqrt((double)HEAD_DIM), q, QKV, q + HIDDEN, QKV, 0.0,
                            U->scores + b * HEADS * s * s, s, HEADS, HEAD_DIM, HEAD_DIM, s * s));
  }
  if (U->add_mask != NULL)
    CHECK(adnn_plan_execute(U->add_mask, (const void *[]){U->scores, L->mask}, 2, U->scores));
  CHECK(adnn_plan_execute(U->softmax, (const void *[]){U->scores}, 1, U->scores));
  /* ctx[b, :, 64 h .. 64 h + 63] = P[b, h] @ v_h: the heads' outputs are
   * interleaved within each row of ctx (leading dimension 768). */
  for (int64_t b = 0; b < L->batch; b++) {
    const float *v = qkv + b * s * QKV + 2 * HIDDEN;
    CHECK(adnn_gemm_batched(ctx, f32, ADNN_NO_TRANS, ADNN_NO_TRANS, s, HEAD_DIM, s, 1.0,
                            U->scores + b * HEADS * s * s, s, v, QKV, 0.0,
                            out + b * s * HIDDEN, HIDDEN, HEADS, s * s, HEAD_DIM,
                            HEAD_DIM));
  }
}

static void unfused_run(const layer *L, const unfused *U) {
  const adnn_dtype f32 = ADNN_DTYPE_F32;
  int64_t t = L->tokens;
  CHECK(adnn_gemm(ctx, f32, ADNN_NO_TRANS, ADNN_NO_TRANS, t, QKV, HIDDEN, 1.0, L->x, HIDDEN,
                  L->wqkv, QKV, 0.0, U->qkv_buf, QKV));
  CHECK(adnn_plan_execute(U->add_bqkv, (const void *[]){U->qkv_buf, L->bqkv}, 2, U->qkv_buf));
  unfused_attention(L, U, U->qkv_buf, U->ctx_buf);
  CHECK(adnn_gemm(ctx, f32, ADNN_NO_TRANS, ADNN_NO_TRANS, t, HIDDEN, HIDDEN, 1.0, U->ctx_buf,
                  HIDDEN, L->wo, HIDDEN, 0.0, U->h1, HIDDEN));
  CHECK(adnn_plan_execute(U->add_bo, (const void *[]){U->h1, L->bo}, 2, U->h1));
  CHECK(adnn_plan_execute(U->add_residual, (const void *[]){U->h1, L->x}, 2, U->h1));
  CHECK(adnn_plan_execute(U->ln1, (const void *[]){U->h1, L->g1, L->beta1}, 3, U->a1));
  CHECK(adnn_gemm(ctx, f32, ADNN_NO_TRANS, ADNN_NO_TRANS, t, FFN, HIDDEN, 1.0, U->a1, HIDDEN,
                  L->w1, FFN, 0.0, U->f, FFN));
  CHECK(adnn_plan_execute(U->add_b1, (const void *[]){U->f, L->b1}, 2, U->f));
  CHECK(adnn_plan_execute(U->gelu, (const void *[]){U->f}, 1, U->f));
  CHECK(adnn_gemm(ctx, f32, ADNN_NO_TRANS, ADNN_NO_TRANS, t, HIDDEN, FFN, 1.0, U->f, FFN, L->w2,
                  HIDDEN, 0.0, U->h2, HIDDEN));
  CHECK(adnn_plan_execute(U->add_b2, (const void *[]){U->h2, L->b2}, 2, U->h2));
  CHECK(adnn_plan_execute(U->add_residual, (const void *[]){U->h2, U->a1}, 2, U->h2));
  CHECK(adnn_plan_execute(U->ln2, (const void *[]){U->h2, L->g2, L->beta2}, 3, U->out));
  CHECK(adnn_context_synchronize(ctx));
}

static void unfused_destroy(unfused *U) {
  adnn_plan *plans[] = {U->add_bqkv, U->add_mask, U->softmax, U->add_bo, U->add_residual,
                        U->ln1,      U->add_b1,   U->gelu,    U->add_b2, U->ln2};
  for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) adnn_plan_destroy(plans[i]);
  float *bufs[] = {U->qkv_buf, U->scores, U->ctx_buf, U->h1, U->a1, U->f, U->h2, U->out};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) adnn_free(ctx, bufs[i]);
  memset(U, 0, sizeof *U);
}

static double *reference_layer(const layer *L, int64_t key_length) {
  int64_t s = L->seq;
  double *x = host_doubles(L->x, (size_t)(s * HIDDEN));
  double *wqkv = host_doubles(L->wqkv, HIDDEN * QKV), *bqkv = host_doubles(L->bqkv, QKV);
  double *wo = host_doubles(L->wo, HIDDEN * HIDDEN), *bo = host_doubles(L->bo, HIDDEN);
  double *w1 = host_doubles(L->w1, HIDDEN * FFN), *b1 = host_doubles(L->b1, FFN);
  double *w2 = host_doubles(L->w2, FFN * HIDDEN), *b2 = host_doubles(L->b2, HIDDEN);
  double *g1 = host_doubles(L->g1, HIDDEN), *beta1 = host_doubles(L->beta1, HIDDEN);
  double *g2 = host_doubles(L->g2, HIDDEN), *beta2 = host_doubles(L->beta2, HIDDEN);
  double *qkv = malloc((size_t)(s * QKV) * sizeof *qkv);
  double *attn = malloc((size_t)(s * HIDDEN) * sizeof *attn);
  double *h1 = malloc((size_t)(s * HIDDEN) * sizeof *h1);
  double *f = malloc((size_t)(s * FFN) * sizeof *f);
  double *h2 = malloc((size_t)(s * HIDDEN) * sizeof *h2);
  double *p = malloc((size_t)s * sizeof *p);
  if (!qkv || !attn || !h1 || !f || !h2 || !p) exit(1);
  ref_linear(x, wqkv, bqkv, qkv, s, HIDDEN, QKV);
  for (int h = 0; h < HEADS; h++)
    for (int64_t i = 0; i < s; i++) {
      const double *q = qkv + i * QKV + h * HEAD_DIM;
      double max = -INFINITY, sum = 0.0;
      for (int64_t j = 0; j < key_length; j++) {
        const double *k = qkv + j * QKV + HIDDEN + h * HEAD_DIM;
        double dot = 0.0;
        for (int d = 0; d < HEAD_DIM; d++) dot += q[d] * k[d];
        p[j] = dot / sqrt((double)HEAD_DIM);
        if (p[j] > max) max = p[j];
      }
      for (int64_t j = 0; j < key_length; j++) sum += (p[j] = exp(p[j] - max));
      for (int d = 0; d < HEAD_DIM; d++) {
        double acc = 0.0;
        for (int64_t j = 0; j < key_length; j++)
          acc += p[j] * qkv[j * QKV + 2 * HIDDEN + h * HEAD_DIM + d];
        attn[i * HIDDEN + h * HEAD_DIM + d] = acc / sum;
      }
    }
  ref_linear(attn, wo, bo, h1, s, HIDDEN, HIDDEN);
  for (int64_t i = 0; i < s * HIDDEN; i++) h1[i] += x[i];
  ref_layernorm(h1, g1, beta1, s);
  ref_linear(h1, w1, b1, f, s, HIDDEN, FFN);
  for (int64_t i = 0; i < s * FFN; i++) f[i] = 0.5 * f[i] * (1.0 + erf(f[i] / sqrt(2.0)));
  ref_linear(f, w2, b2, h2, s, FFN, HIDDEN);
  for (int64_t i = 0; i < s * HIDDEN; i++) h2[i] += h1[i];
  ref_layernorm(h2, g2, beta2, s);
  double *freed[] = {x, wqkv, bqkv, wo, bo, w1, b1, w2, b2, g1, beta1, g2, beta2, qkv, attn, h1, f, p};
  for (size_t i = 0; i < sizeof freed / sizeof freed[0]; i++) free(freed[i]);
  return h2;
}

/* Largest |a - ref| over n values (NaN counts as infinite); *at gets its index. */
static double max_abs_diff(const float *a, const double *ref, size_t n, double *rms,
                           size_t *at) {
  double max = 0.0, sum_sq = 0.0;
  *at = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - ref[i]);
    if (!(d <= max)) {
      max = isnan(d) ? INFINITY : d;
      *at = i;
    }
    sum_sq += d * d;
  }
  *rms = sqrt(sum_sq / (double)n);
  return max;
}

/* ---- one shape ------------------------------------------------------------ */

typedef void (*run_fn)(const layer *, const void *);
static void run_fused_cb(const layer *L, const void *p) { fused_run(L, p); }
static void run_unfused_cb(const layer *L, const void *p) { unfused_run(L, p); }

/* Median milliseconds of `runs` timed runs after one warm-up run. */
static double median_ms(run_fn fn, const layer *L, const void *plans, int runs) {
  double *ms = malloc((size_t)runs * sizeof *ms);
  if (ms == NULL) exit(1);
  fn(L, plans);
  for (int i = 0; i < runs; i++) {
    double t0 = now_seconds();
    fn(L, plans);
    ms[i] = (now_seconds() - t0) * 1e3;
  }
  qsort(ms, (size_t)runs, sizeof *ms, compare_doubles);
  double median = runs % 2 ? ms[runs / 2] : 0.5 * (ms[runs / 2 - 1] + ms[runs / 2]);
  free(ms);
  return median;
}

static float *host_copy(const float *dev, size_t n) {
  float *host = malloc(n * sizeof *host);
  if (host == NULL) exit(1);
  CHECK(adnn_memcpy(ctx, host, dev, n * sizeof *host, ADNN_MEMCPY_DEVICE_TO_HOST));
  return host;
}

/* Runs one shape; returns 0 on success, 1 when the check failed. */
static int run_shape(int64_t batch, int64_t seq, int runs, int padded, uint64_t seed) {
  layer L;
  memset(&L, 0, sizeof L);
  L.batch = batch;
  L.seq = seq;
  L.tokens = batch * seq;
  rng_state = seed;
  const double w = 0.02; /* BERT's initializer range */
  L.wqkv = device_floats(HIDDEN * QKV, 0, w);
  L.bqkv = device_floats(QKV, 0, w);
  L.wo = device_floats(HIDDEN * HIDDEN, 0, w);
  L.bo = device_floats(HIDDEN, 0, w);
  L.g1 = device_floats(HIDDEN, 1, w);
  L.beta1 = device_floats(HIDDEN, 0, w);
  L.w1 = device_floats(HIDDEN * FFN, 0, w);
  L.b1 = device_floats(FFN, 0, w);
  L.w2 = device_floats(FFN * HIDDEN, 0, w);
  L.b2 = device_floats(HIDDEN, 0, w);
  L.g2 = device_floats(HIDDEN, 1, w);
  L.beta2 = device_floats(HIDDEN, 0, w);
  L.x = device_floats((size_t)(L.tokens * HIDDEN), 0, 1);
  int32_t *lengths = NULL;
  if (padded) {
    lengths = malloc((size_t)batch * sizeof *lengths);
    float *mask = malloc((size_t)(batch * seq) * sizeof *mask);
    if (lengths == NULL || mask == NULL) exit(1);
    for (int64_t b = 0; b < batch; b++) {
      int64_t len = seq - (b + 1) * seq / (2 * batch + 2);
      lengths[b] = (int32_t)(len < 1 ? 1 : len);
      for (int64_t j = 0; j < seq; j++) mask[b * seq + j] = j < lengths[b] ? 0.0f : -INFINITY;
    }
    void *dev;
    CHECK(adnn_malloc(ctx, (size_t)batch * sizeof *lengths, &dev));
    CHECK(adnn_memcpy(ctx, dev, lengths, (size_t)batch * sizeof *lengths,
                      ADNN_MEMCPY_HOST_TO_DEVICE));
    L.key_lengths = dev;
    CHECK(adnn_malloc(ctx, (size_t)(batch * seq) * sizeof *mask, &dev));
    CHECK(adnn_memcpy(ctx, dev, mask, (size_t)(batch * seq) * sizeof *mask,
                      ADNN_MEMCPY_HOST_TO_DEVICE));
    L.mask = dev;
    free(mask);
  }

  printf("BERT-base encoder layer: batch %lld x sequence %lld (%lld tokens), hidden %d, "
         "%d heads x %d, FFN %d, F32, backend %s\n",
         (long long)batch, (long long)seq, (long long)L.tokens, HIDDEN, HEADS, HEAD_DIM, FFN,
         adnn_context_get_backend(ctx));
  if (padded) {
    printf("  key lengths:");
    for (int64_t b = 0; b < batch; b++) printf(" %d", lengths[b]);
    printf("\n");
  }

  unfused U;
  unfused_create(&L, &U);
  fused F;
  adnn_status attention_status = ADNN_STATUS_SUCCESS;
  char why[512] = "";
  adnn_status fst = fused_create(&L, &U, &F, &attention_status, why, sizeof why);
  int failed = 0;
  if (fst != ADNN_STATUS_SUCCESS) {
    if (fst != ADNN_STATUS_NOT_SUPPORTED) {
      fprintf(stderr, "transformer-block: creating the fused plans failed: %s: %s\n",
              adnn_status_name(fst), adnn_last_error());
      exit(1);
    }
    printf("  fused path unavailable on this backend (%s: %s): timing the unfused "
           "composition only\n",
           adnn_status_name(fst), adnn_last_error());
    fused_destroy(&F);
  } else if (F.attn == NULL) {
    printf("  attention op unavailable (%s: %s): the fused path runs the unfused attention "
           "(matmul epilogues checked, attention not)\n",
           adnn_status_name(attention_status), why);
    printf("  fused plans: matmul %s\n", adnn_plan_get_algorithm(F.qkv));
  } else {
    printf("  fused plans: matmul %s, attention %s (workspace %zu bytes)\n",
           adnn_plan_get_algorithm(F.qkv), adnn_plan_get_algorithm(F.attn),
           adnn_plan_get_workspace_bytes(F.attn));
  }

  double unfused_ms = median_ms(run_unfused_cb, &L, &U, runs);
  size_t n = (size_t)(L.tokens * HIDDEN);
  float *unfused_out = host_copy(U.out, n), *fused_out = NULL;
  double fused_ms = 0.0, rms;
  size_t at;
  if (fst == ADNN_STATUS_SUCCESS) {
    fused_ms = median_ms(run_fused_cb, &L, &F, runs);
    fused_out = host_copy(F.out, n);
    /* max_abs_diff wants a double reference: widen the unfused result. */
    double *wide = malloc(n * sizeof *wide);
    if (wide == NULL) exit(1);
    for (size_t i = 0; i < n; i++) wide[i] = unfused_out[i];
    double diff = max_abs_diff(fused_out, wide, n, &rms, &at);
    free(wide);
    int bad = !(diff <= TOLERANCE);
    failed |= bad;
    printf("  check: max |fused - unfused| = %.3g (token %zu, feature %zu), rms %.3g, "
           "tolerance %.0e: %s\n",
           diff, at / HIDDEN, at % HIDDEN, rms, TOLERANCE, bad ? "FAILED" : "ok");
  }
  /* For short sequences, both paths are also compared with plain double
   * loops over sequence 0 (no adnn op involved), so that a mistake the two
   * compositions share (a wrong view of q, k or v) cannot pass unseen. */
  if (seq <= REFERENCE_MAX_SEQ) {
    double *ref = reference_layer(&L, padded ? lengths[0] : seq);
    size_t m = (size_t)(seq * HIDDEN);
    const float *outs[2] = {unfused_out, fused_out};
    const char *names[2] = {"unfused", "fused"};
    for (int i = 0; i < 2; i++) {
      if (outs[i] == NULL) continue;
      double diff = max_abs_diff(outs[i], ref, m, &rms, &at);
      int bad = !(diff <= TOLERANCE);
      failed |= bad;
      printf("  check: max |%s - double reference| = %.3g over sequence 0, rms %.3g, "
             "tolerance %.0e: %s\n",
             names[i], diff, rms, TOLERANCE, bad ? "FAILED" : "ok");
    }
    free(ref);
  }
  if (fst == ADNN_STATUS_SUCCESS) {
    printf("  fused:   %9.2f ms per layer (median of %d)%s\n", fused_ms, runs,
           F.attn == NULL ? " with the unfused attention" : "");
    fused_destroy(&F);
  }
  free(unfused_out);
  free(fused_out);
  printf("  unfused: %9.2f ms per layer (median of %d; scores [%lld, %d, %lld, %lld] "
         "materialized: %.1f MiB)\n",
         unfused_ms, runs, (long long)batch, HEADS, (long long)seq, (long long)seq,
         (double)(batch * HEADS * seq * seq) * 4.0 / 1048576.0);
  unfused_destroy(&U);
  float *params[] = {L.wqkv, L.bqkv, L.wo, L.bo, L.g1, L.beta1, L.w1,
                     L.b1,   L.w2,   L.b2, L.g2, L.beta2, L.x,  L.mask};
  for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) adnn_free(ctx, params[i]);
  adnn_free(ctx, L.key_lengths);
  free(lengths);
  return failed;
}

/* ---- command line --------------------------------------------------------- */

static void usage(FILE *out) {
  fprintf(out,
          "usage: transformer-block [--batch B --seq S] [--runs N] [--key-lengths]\n"
          "                         [--backend NAME] [--seed N]\n"
          "  One BERT-base encoder layer, fused (adnn_matmul + adnn_attention) and\n"
          "  unfused (adnn_gemm, softmax, binary, activation, norm), checked against\n"
          "  each other; prints ms per layer (median of N runs, default 5).\n"
          "  Without --batch/--seq: 8 x 128, then 1 x 2048.\n");
}

/* Parses a positive integer no larger than max; 0 when it is not one. */
static long long parse_count(const char *s, long long max) {
  if (s == NULL || *s == '\0') return 0;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < 1 || v > max) return 0;
  return v;
}

int main(int argc, char **argv) {
  long long batch = 0, seq = 0, runs = 5, seed = 2024;
  int padded = 0;
  const char *backend = "auto";
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(arg, "--key-lengths")) {
      padded = 1;
    } else if (!strcmp(arg, "--batch") && (batch = parse_count(val, 4096))) {
      i++;
    } else if (!strcmp(arg, "--seq") && (seq = parse_count(val, 65536))) {
      i++;
    } else if (!strcmp(arg, "--runs") && (runs = parse_count(val, 1000))) {
      i++;
    } else if (!strcmp(arg, "--seed") && (seed = parse_count(val, INT64_MAX))) {
      i++;
    } else if (!strcmp(arg, "--backend") && val != NULL && *val != '\0') {
      backend = val;
      i++;
    } else {
      usage(stderr);
      return 2;
    }
  }
  if ((batch == 0) != (seq == 0)) {
    fprintf(stderr, "transformer-block: give both --batch and --seq, or neither\n");
    usage(stderr);
    return 2;
  }
  CHECK(adnn_context_create(backend, &ctx));
  printf("adnn %s: transformer-block (weights pseudo-random, seed %lld; untrained)\n",
         adnn_version_string(), seed);
  int failed = 0;
  if (batch != 0) {
    failed |= run_shape(batch, seq, (int)runs, padded, (uint64_t)seed);
  } else {
    failed |= run_shape(8, 128, (int)runs, padded, (uint64_t)seed);
    failed |= run_shape(1, 2048, (int)runs, padded, (uint64_t)seed);
  }
  /* adnn_context_destroy frees every buffer still allocated on the context. */
  adnn_context_destroy(ctx);
  if (failed) fprintf(stderr, "transformer-block: a check failed (see above)\n");
  return failed;
}
