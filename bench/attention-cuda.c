/*
 * Attention forward and backward on the CUDA plugin, checked and timed on a
 * GPU (run by tools/gpu-check.sh): F32 and F64, BHSD and BSHD layouts,
 * causal, grouped- and multi-query attention, and long sequences.
 *
 *   bench/attention-cuda [REPEATS [MAX_S]]     (defaults 5, every case)
 *
 * MAX_S skips the cases with longer sequences (the host emulation of
 * t/cuda-emu/run.sh runs the small ones in seconds, not the long ones).
 * For every case the forward (o, lse) and the backward (dq, dk, dv) run on a
 * "cuda" context; on the cases marked for checking the same plans run on the
 * "cpu" context from the same data, and the largest difference of each output,
 * relative to that output's largest magnitude on the CPU, must stay within
 * 2e-3 (F32) or 1e-9 (F64): the two plugins sum in different orders, and a
 * wrong mask or index shows as an O(1) difference. Timings are the median of
 * REPEATS executions, each followed by adnn_context_synchronize, after one
 * warm-up; the FLOP count is 4 * B * H * Sq * Skv * D for the forward (Q K^T
 * and P V; half of it causal) and 2.5 times that for the backward (five
 * products instead of two).
 *
 * Prints "RESULT op=attention_<case> dir=<fwd|bwd> ms=<median> tflops=<t>
 * algo=<algorithm> max_rel=<difference or ->" per case and direction, then
 * "attention-cuda: N failed". Exit status 0 when every case ran and passed
 * its check, 1 otherwise, 2 when there is no usable CUDA device.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <adnn.h>
#include <adnn/ops.h>

typedef struct bench_case {
  const char *name;
  adnn_dtype dtype;
  int64_t B, H, Hkv, S, D;
  int causal, bshd, check;
} bench_case;

static const bench_case cases[] = {
    {"f32_b2_h12_s512_d64", ADNN_DTYPE_F32, 2, 12, 12, 512, 64, 0, 0, 1},
    {"f32_b2_h32_kv8_s512_d128_causal_bshd", ADNN_DTYPE_F32, 2, 32, 8, 512, 128, 1, 1, 1},
    {"f32_b1_h12_s2048_d64_causal", ADNN_DTYPE_F32, 1, 12, 12, 2048, 64, 1, 0, 1},
    {"f64_b2_h8_s256_d64_causal", ADNN_DTYPE_F64, 2, 8, 8, 256, 64, 1, 0, 1},
    {"f64_b1_h4_kv1_s301_d80_bshd", ADNN_DTYPE_F64, 1, 4, 1, 301, 80, 0, 1, 1},
    {"f32_b1_h12_s8192_d64_causal", ADNN_DTYPE_F32, 1, 12, 12, 8192, 64, 1, 0, 0},
    {"f32_b1_h12_s16384_d64", ADNN_DTYPE_F32, 1, 12, 12, 16384, 64, 0, 0, 0},
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* [B, H, S, D] in BHSD or BSHD memory order. */
static void desc4(adnn_tensor_desc *t, adnn_dtype dt, int64_t B, int64_t H, int64_t S, int64_t D,
                  int bshd) {
  const int64_t dims[4] = {B, H, S, D};
  const int64_t bhsd_strides[4] = {H * S * D, S * D, D, 1};
  const int64_t bshd_strides[4] = {S * H * D, D, H * D, 1};
  adnn_tensor_desc_init_strided(t, dt, 4, dims, bshd ? bshd_strides : bhsd_strides);
}

/* The buffers of one direction's execution on one context. */
typedef struct buffers {
  void *p[9]; /* q k v o lse do dq dk dv */
} buffers;
enum { Q, K, V, O, LSE, DO, DQ, DK, DV, N_BUF };

static size_t elements[N_BUF];

static int alloc_all(adnn_context *ctx, adnn_dtype dt, buffers *b) {
  memset(b, 0, sizeof *b);
  for (int i = 0; i < N_BUF; i++)
    if (adnn_malloc(ctx, elements[i] * adnn_dtype_size(dt), &b->p[i]) != ADNN_STATUS_SUCCESS)
      return -1;
  return 0;
}

static void free_all(adnn_context *ctx, buffers *b) {
  for (int i = 0; i < N_BUF; i++)
    if (b->p[i]) adnn_free(ctx, b->p[i]);
}

/* Runs (and with repeats > 0 times) the forward and backward plans. */
static int run_plans(adnn_context *ctx, const adnn_attention_desc *fd, buffers *b, int repeats,
                     double ms[2], char algo[2][64]) {
  adnn_attention_backward_desc bd;
  adnn_attention_backward_desc_init(&bd);
  bd.forward = fd;
  adnn_plan *fwd = NULL, *bwd = NULL;
  if (adnn_plan_create_attention(ctx, fd, &fwd) != ADNN_STATUS_SUCCESS ||
      adnn_plan_create_attention_backward(ctx, &bd, &bwd) != ADNN_STATUS_SUCCESS) {
    printf("# plan creation: %s\n", adnn_last_error());
    adnn_plan_destroy(fwd);
    return -1;
  }
  const void *fin[3] = {b->p[Q], b->p[K], b->p[V]};
  void *fout[2] = {b->p[O], b->p[LSE]};
  const void *bin[6] = {b->p[Q], b->p[K], b->p[V], b->p[O], b->p[DO], b->p[LSE]};
  void *bout[3] = {b->p[DQ], b->p[DK], b->p[DV]};
  int rc = 0;
  double t[64];
  if (repeats > 64) repeats = 64;
  for (int dir = 0; dir < 2 && rc == 0; dir++) {
    for (int r = -1; r < (repeats > 0 ? repeats : 0) && rc == 0; r++) {
      const double t0 = now_ms();
      adnn_status st = dir == 0 ? adnn_plan_execute_multi(fwd, fin, 3, fout, 2)
                                : adnn_plan_execute_multi(bwd, bin, 6, bout, 3);
      if (st == ADNN_STATUS_SUCCESS) st = adnn_context_synchronize(ctx);
      if (st != ADNN_STATUS_SUCCESS) {
        printf("# execute: %s\n", adnn_last_error());
        rc = -1;
      }
      if (r >= 0) t[r] = now_ms() - t0;
    }
    if (repeats > 0 && rc == 0) {
      qsort(t, (size_t)repeats, sizeof *t, cmp_double);
      ms[dir] = t[repeats / 2];
    }
    const char *name = adnn_plan_get_algorithm(dir == 0 ? fwd : bwd);
    snprintf(algo[dir], 64, "%s", name ? name : "");
  }
  adnn_plan_destroy(fwd);
  adnn_plan_destroy(bwd);
  return rc;
}

/* max |a - b| over max |b|, elementwise over n values of dtype dt. */
static double max_rel(const void *a, const void *b, size_t n, adnn_dtype dt) {
  double diff = 0, mag = 0;
  for (size_t i = 0; i < n; i++) {
    const double x = dt == ADNN_DTYPE_F64 ? ((const double *)a)[i] : ((const float *)a)[i];
    const double y = dt == ADNN_DTYPE_F64 ? ((const double *)b)[i] : ((const float *)b)[i];
    if (isinf(y) && x == y) continue; /* lse of a fully masked row */
    const double d = fabs(x - y);
    if (!(d <= diff)) diff = d; /* NaN wins */
    if (fabs(y) > mag) mag = fabs(y);
  }
  return mag > 0 ? diff / mag : diff;
}

int main(int argc, char **argv) {
  const int repeats = argc > 1 ? atoi(argv[1]) : 5;
  const int64_t max_s = argc > 2 ? atoll(argv[2]) : INT64_MAX;
  adnn_context *gpu = NULL, *cpu = NULL;
  if (adnn_context_create("cuda", &gpu) != ADNN_STATUS_SUCCESS) {
    printf("SKIP: no usable CUDA device: %s\n", adnn_last_error());
    return 2;
  }
  if (adnn_context_create("cpu", &cpu) != ADNN_STATUS_SUCCESS) cpu = NULL;
  int failed = 0;
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const bench_case *bc = &cases[c];
    if (bc->S > max_s) continue;
    const adnn_dtype dt = bc->dtype;
    const size_t es = adnn_dtype_size(dt);
    adnn_attention_desc fd;
    adnn_attention_desc_init(&fd);
    desc4(&fd.q, dt, bc->B, bc->H, bc->S, bc->D, bc->bshd);
    desc4(&fd.k, dt, bc->B, bc->Hkv, bc->S, bc->D, bc->bshd);
    desc4(&fd.v, dt, bc->B, bc->Hkv, bc->S, bc->D, bc->bshd);
    desc4(&fd.o, dt, bc->B, bc->H, bc->S, bc->D, bc->bshd);
    const int64_t lse_dims[3] = {bc->B, bc->H, bc->S};
    adnn_tensor_desc_init(&fd.lse, dt, 3, lse_dims);
    fd.causal = bc->causal;
    elements[Q] = elements[O] = elements[DO] = elements[DQ] = (size_t)(bc->B * bc->H * bc->S * bc->D);
    elements[K] = elements[V] = elements[DK] = elements[DV] =
        (size_t)(bc->B * bc->Hkv * bc->S * bc->D);
    elements[LSE] = (size_t)(bc->B * bc->H * bc->S);
    buffers gb, cb;
    void *host[N_BUF] = {0}, *back = NULL;
    int ok = alloc_all(gpu, dt, &gb) == 0;
    for (int i = 0; ok && i < N_BUF; i++) ok = (host[i] = malloc(elements[i] * es)) != NULL;
    ok = ok && (back = malloc(elements[Q] * es)) != NULL;
    for (int i = 0; ok && i < N_BUF; i++) {
      if (i != Q && i != K && i != V && i != DO) continue;
      for (size_t e = 0; e < elements[i]; e++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        const double x = (double)(seed >> 11) / 9007199254740992.0 * 2.0 - 1.0;
        if (dt == ADNN_DTYPE_F64) ((double *)host[i])[e] = x;
        else ((float *)host[i])[e] = (float)x;
      }
      ok = adnn_memcpy(gpu, gb.p[i], host[i], elements[i] * es, ADNN_MEMCPY_HOST_TO_DEVICE) ==
           ADNN_STATUS_SUCCESS;
    }
    double ms[2] = {0, 0};
    char algo[2][64] = {"", ""};
    ok = ok && run_plans(gpu, &fd, &gb, repeats, ms, algo) == 0;
    double rel[2] = {-1, -1};
    if (ok && bc->check && cpu != NULL) {
      double cms[2];
      char calgo[2][64];
      ok = alloc_all(cpu, dt, &cb) == 0;
      for (int i = 0; ok && i < N_BUF; i++)
        if (i == Q || i == K || i == V || i == DO)
          ok = adnn_memcpy(cpu, cb.p[i], host[i], elements[i] * es,
                           ADNN_MEMCPY_HOST_TO_DEVICE) == ADNN_STATUS_SUCCESS;
      ok = ok && run_plans(cpu, &fd, &cb, 0, cms, calgo) == 0;
      for (int i = O; ok && i < N_BUF; i++) {
        if (i == DO) continue;
        ok = adnn_memcpy(gpu, back, gb.p[i], elements[i] * es, ADNN_MEMCPY_DEVICE_TO_HOST) ==
                 ADNN_STATUS_SUCCESS &&
             adnn_memcpy(cpu, host[i], cb.p[i], elements[i] * es, ADNN_MEMCPY_DEVICE_TO_HOST) ==
                 ADNN_STATUS_SUCCESS;
        const double r = max_rel(back, host[i], elements[i], dt);
        const int dir = i == O || i == LSE ? 0 : 1;
        if (!(r <= rel[dir])) rel[dir] = r;
      }
      free_all(cpu, &cb);
      const double tol = dt == ADNN_DTYPE_F64 ? 1e-9 : 2e-3;
      if (ok && !(rel[0] <= tol && rel[1] <= tol)) {
        printf("# %s: the cuda results differ from the cpu plugin's beyond %g\n", bc->name, tol);
        ok = 0;
      }
    }
    const double flops = 4.0 * bc->B * bc->H * (double)bc->S * bc->S * bc->D * (bc->causal ? 0.5 : 1);
    for (int dir = 0; dir < 2; dir++) {
      char relbuf[32] = "-";
      if (rel[dir] >= 0) snprintf(relbuf, sizeof relbuf, "%.3g", rel[dir]);
      if (ms[dir] > 0)
        printf("RESULT op=attention_%s dir=%s ms=%.4f tflops=%.3f algo=%s max_rel=%s%s\n",
               bc->name, dir ? "bwd" : "fwd", ms[dir],
               flops * (dir ? 2.5 : 1.0) / (ms[dir] * 1e-3) / 1e12, algo[dir], relbuf,
               ok ? "" : " FAILED");
      else
        printf("RESULT op=attention_%s dir=%s failed=\"%s\"\n", bc->name, dir ? "bwd" : "fwd",
               adnn_last_error());
    }
    failed += !ok;
    free_all(gpu, &gb);
    for (int i = 0; i < N_BUF; i++) free(host[i]);
    free(back);
  }
  printf("attention-cuda: %d failed\n", failed);
  if (cpu) adnn_context_destroy(cpu);
  adnn_context_destroy(gpu);
  return failed ? 1 : 0;
}
