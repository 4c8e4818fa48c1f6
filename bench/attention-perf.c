/*
 * attention-perf: fused attention (adnn_attention and adnn_attention_backward)
 * against the unfused composition through adnn (batched GEMM for the scores,
 * softmax, batched GEMM; the backward through batched GEMMs and
 * adnn_softmax_backward), problem by problem, each problem in its own child
 * process so that its peak memory can be measured. Run by hand through
 * bench/run-attention-perf.sh; doc/performance.md ("Attention") records a run.
 *
 * Problem: B = 1, H heads (12), head dim D (64), Sq = Skv = S, F32, q, k, v,
 * o packed [1, H, S, D] (BHSD), causal or not, scale 1/sqrt(D).
 *
 * The unfused forward materializes the scores P [heads, S, S] (scale q k^T,
 * plus, when causal, a [S, S] mask of 0 / -inf added with adnn_binary), then
 * softmax in place, then o = P v. It runs all H heads in one batched GEMM when
 * H * S * S floats fit in UNFUSED_ALL_HEADS_BYTES (1 GiB), else one head at a
 * time with one [S, S] buffer reused (S = 8192 and 16384 at H = 12: the
 * all-heads scores would be 3 and 12 GiB, 6 and 24 GiB with the backward's dP,
 * on a 23 GiB machine shared with other engineers). Its backward computes
 * dP = dO v^T, dS = softmax_backward(P, dP) (in place), dq = scale dS k,
 * dk = scale dS^T q, dv = P^T dO; with all heads at once it uses the forward's
 * P as autograd would keep it; one head at a time it must recompute that
 * head's P first (the time includes it, and the output says so).
 *
 * Times: median of the timed runs after `warmup` untimed ones; at most
 * `runs` timed runs, and no more once `max_seconds` have been spent after at
 * least `min_runs` (so the large sizes are medians of fewer runs; the output
 * gives the count). Memory: the child's VmHWM (peak resident set, from
 * /proc/self/status) minus that of a baseline child that only creates the
 * context and runs one small GEMM (the libraries' own footprint), and the
 * bytes the child counted itself (tensors it allocated + the plans'
 * workspaces).
 *
 * usage: attention-perf [--sizes 512,2048,8192,16384] [--heads 12] [--dim 64]
 *          [--causal 0,1] [--methods fused,unfused] [--runs 5] [--min-runs 3]
 *          [--max-seconds 20] [--warmup 1] [--warmup-max-size 2048]
 *          [--unfused-backward-max-size 8192] [--no-backward] [--no-verify]
 *          [--verify-size 128]
 * Warm-up runs are made only up to --warmup-max-size (above it one run takes
 * seconds, and its first-touch page faults are a small part of that); the
 * unfused backward is timed only up to --unfused-backward-max-size (at
 * S = 16384 it needs 2 GiB of P and dP per head and minutes per run on this
 * machine; the table says "skipped").
 * Prints one markdown table, after verification lines: both methods against
 * plain double loops on the host at S = verify-size, causal and not (the
 * largest |difference| of o, dq, dk, dv).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <adnn.h>

#define UNFUSED_ALL_HEADS_BYTES (1ull << 30)

/* Child-side failure: print the reason as the result line and exit. */
#define CHECK(call)                                                                   \
  do {                                                                                \
    adnn_status st_ = (call);                                                         \
    if (st_ != ADNN_STATUS_SUCCESS) {                                                 \
      printf("error %s failed: %s: %s\n", #call, adnn_status_name(st_), adnn_last_error()); \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

typedef struct options {
  int64_t sizes[16];
  int n_sizes;
  int64_t heads, dim;
  int causal[2];
  int n_causal;
  int fused, unfused, backward, verify;
  int64_t verify_size;
  int runs, min_runs, warmup;
  int64_t warmup_max_size;          /* no warm-up run above this S */
  int64_t unfused_backward_max_size; /* no unfused backward above this S */
  double max_seconds;
} options;

static adnn_context *ctx;
static size_t counted_bytes; /* tensors + workspaces of this child */

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static uint64_t rng_state = 12345;
static float rng_float(void) { /* uniform in [-1, 1) */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (float)((double)(z >> 40) / 8388608.0 - 1.0);
}

/* n floats of device memory, random when `fill`. */
static float *device_floats(size_t n, int fill) {
  void *dev;
  CHECK(adnn_malloc(ctx, n * sizeof(float), &dev));
  counted_bytes += n * sizeof(float);
  if (fill) {
    enum { CHUNK = 1 << 16 };
    static float host[CHUNK];
    for (size_t i = 0; i < n; i += CHUNK) {
      size_t m = n - i < CHUNK ? n - i : CHUNK;
      for (size_t j = 0; j < m; j++) host[j] = rng_float();
      CHECK(adnn_memcpy(ctx, (float *)dev + i, host, m * sizeof(float),
                        ADNN_MEMCPY_HOST_TO_DEVICE));
    }
  }
  return dev;
}

/* Peak resident set of this process in KiB, from /proc/self/status. */
static long vm_hwm_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (f == NULL) return -1;
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
  fclose(f);
  return kib;
}

typedef struct problem {
  int64_t h, s, d;
  int causal;
  float *q, *k, *v, *o, *lse, *dout, *dq, *dk, *dv;
} problem;

static adnn_tensor_desc bhsd(const problem *p, int64_t last) {
  adnn_tensor_desc t;
  CHECK(adnn_tensor_desc_init(&t, ADNN_DTYPE_F32, 4, (int64_t[]){1, p->h, p->s, last}));
  return t;
}

static void problem_alloc(problem *p, int backward) {
  size_t n = (size_t)(p->h * p->s * p->d);
  p->q = device_floats(n, 1);
  p->k = device_floats(n, 1);
  p->v = device_floats(n, 1);
  p->o = device_floats(n, 0);
  p->lse = device_floats((size_t)(p->h * p->s), 0);
  if (backward) {
    p->dout = device_floats(n, 1);
    p->dq = device_floats(n, 0);
    p->dk = device_floats(n, 0);
    p->dv = device_floats(n, 0);
  }
}

/* ---- fused ------------------------------------------------------------------ */

typedef struct fused {
  adnn_plan *fwd, *bwd;
} fused;

/* Returns NOT_SUPPORTED (and the message) when the op is missing. */
static adnn_status fused_create(const problem *p, int backward, fused *f) {
  memset(f, 0, sizeof *f);
  adnn_attention_desc a;
  adnn_attention_desc_init(&a);
  a.q = a.k = bhsd(p, p->d);
  a.v = a.o = bhsd(p, p->d);
  CHECK(adnn_tensor_desc_init(&a.lse, ADNN_DTYPE_F32, 3, (int64_t[]){1, p->h, p->s}));
  a.causal = p->causal;
  a.has_lse = 1;
  adnn_status st = adnn_plan_create_attention(ctx, &a, &f->fwd);
  if (st != ADNN_STATUS_SUCCESS) return st;
  counted_bytes += adnn_plan_get_workspace_bytes(f->fwd);
  if (backward) {
    adnn_attention_backward_desc b;
    adnn_attention_backward_desc_init(&b);
    b.forward = &a;
    st = adnn_plan_create_attention_backward(ctx, &b, &f->bwd);
    if (st != ADNN_STATUS_SUCCESS) return st;
    counted_bytes += adnn_plan_get_workspace_bytes(f->bwd);
  }
  return ADNN_STATUS_SUCCESS;
}

static void fused_forward(const problem *p, const fused *f) {
  const void *in[3] = {p->q, p->k, p->v};
  void *out[2] = {p->o, p->lse};
  CHECK(adnn_plan_execute_multi(f->fwd, in, 3, out, 2));
  CHECK(adnn_context_synchronize(ctx));
}

static void fused_backward(const problem *p, const fused *f) {
  const void *in[6] = {p->q, p->k, p->v, p->o, p->dout, p->lse};
  void *out[3] = {p->dq, p->dk, p->dv};
  CHECK(adnn_plan_execute_multi(f->bwd, in, 6, out, 3));
  CHECK(adnn_context_synchronize(ctx));
}

/* ---- unfused ---------------------------------------------------------------- */

typedef struct unfused {
  int64_t group;  /* heads per batched GEMM: H, or 1 */
  float *p, *dp;  /* [group, S, S] */
  float *mask;    /* [S, S] of 0 / -inf when causal */
  adnn_plan *add_mask, *softmax, *softmax_bwd;
} unfused;

static void unfused_create(const problem *p, int backward, unfused *u) {
  memset(u, 0, sizeof *u);
  int64_t s = p->s;
  u->group = (uint64_t)(p->h * s * s) * 4 <= UNFUSED_ALL_HEADS_BYTES ? p->h : 1;
  size_t n = (size_t)(u->group * s * s);
  u->p = device_floats(n, 0);
  if (backward) u->dp = device_floats(n, 0);
  adnn_tensor_desc scores;
  CHECK(adnn_tensor_desc_init(&scores, ADNN_DTYPE_F32, 3, (int64_t[]){u->group, s, s}));
  if (p->causal) {
    u->mask = device_floats((size_t)(s * s), 0);
    float *row = malloc((size_t)s * sizeof *row);
    if (row == NULL) exit(1);
    for (int64_t i = 0; i < s; i++) {
      for (int64_t j = 0; j < s; j++) row[j] = j <= i ? 0.0f : -INFINITY;
      CHECK(adnn_memcpy(ctx, u->mask + i * s, row, (size_t)s * sizeof *row,
                        ADNN_MEMCPY_HOST_TO_DEVICE));
    }
    free(row);
    adnn_binary_desc b;
    adnn_binary_desc_init(&b);
    b.op = ADNN_BINARY_ADD;
    b.a = b.y = scores;
    CHECK(adnn_tensor_desc_init(&b.b, ADNN_DTYPE_F32, 2, (int64_t[]){s, s}));
    CHECK(adnn_plan_create_binary(ctx, &b, &u->add_mask));
    counted_bytes += adnn_plan_get_workspace_bytes(u->add_mask);
  }
  adnn_softmax_desc sm;
  adnn_softmax_desc_init(&sm);
  sm.x = sm.y = scores;
  sm.axis = -1;
  CHECK(adnn_plan_create_softmax(ctx, &sm, &u->softmax));
  counted_bytes += adnn_plan_get_workspace_bytes(u->softmax);
  if (backward) {
    adnn_softmax_backward_desc sb;
    adnn_softmax_backward_desc_init(&sb);
    sb.forward = &sm;
    CHECK(adnn_plan_create_softmax_backward(ctx, &sb, &u->softmax_bwd));
    counted_bytes += adnn_plan_get_workspace_bytes(u->softmax_bwd);
  }
}

/* P = softmax(scale q k^T + mask) for the heads h0 .. h0 + group - 1. */
static void unfused_scores(const problem *p, const unfused *u, int64_t h0) {
  int64_t s = p->s, d = p->d, hs = s * d;
  CHECK(adnn_gemm_batched(ctx, ADNN_DTYPE_F32, ADNN_NO_TRANS, ADNN_TRANS, s, s, d,
                          1.0 / sqrt((double)d), p->q + h0 * hs, d, p->k + h0 * hs, d, 0.0, u->p,
                          s, u->group, hs, hs, s * s));
  if (u->add_mask != NULL)
    CHECK(adnn_plan_execute(u->add_mask, (const void *[]){u->p, u->mask}, 2, u->p));
  CHECK(adnn_plan_execute(u->softmax, (const void *[]){u->p}, 1, u->p));
}

static void unfused_forward(const problem *p, const unfused *u) {
  int64_t s = p->s, d = p->d, hs = s * d;
  for (int64_t h0 = 0; h0 < p->h; h0 += u->group) {
    unfused_scores(p, u, h0);
    CHECK(adnn_gemm_batched(ctx, ADNN_DTYPE_F32, ADNN_NO_TRANS, ADNN_NO_TRANS, s, d, s, 1.0, u->p,
                            s, p->v + h0 * hs, d, 0.0, p->o + h0 * hs, d, u->group, s * s, hs,
                            hs));
  }
  CHECK(adnn_context_synchronize(ctx));
}

/* Expects P of the forward pass in u->p when all heads are in one group;
 * one head at a time it recomputes each head's P. */
static void unfused_backward(const problem *p, const unfused *u) {
  int64_t s = p->s, d = p->d, hs = s * d;
  double scale = 1.0 / sqrt((double)d);
  const adnn_dtype f32 = ADNN_DTYPE_F32;
  for (int64_t h0 = 0; h0 < p->h; h0 += u->group) {
    if (u->group != p->h) unfused_scores(p, u, h0);
    int64_t g = u->group, o = h0 * hs;
    CHECK(adnn_gemm_batched(ctx, f32, ADNN_NO_TRANS, ADNN_TRANS, s, s, d, 1.0, p->dout + o, d,
                            p->v + o, d, 0.0, u->dp, s, g, hs, hs, s * s));
    CHECK(adnn_plan_execute(u->softmax_bwd, (const void *[]){u->p, u->dp}, 2, u->dp));
    CHECK(adnn_gemm_batched(ctx, f32, ADNN_NO_TRANS, ADNN_NO_TRANS, s, d, s, scale, u->dp, s,
                            p->k + o, d, 0.0, p->dq + o, d, g, s * s, hs, hs));
    CHECK(adnn_gemm_batched(ctx, f32, ADNN_TRANS, ADNN_NO_TRANS, s, d, s, scale, u->dp, s,
                            p->q + o, d, 0.0, p->dk + o, d, g, s * s, hs, hs));
    CHECK(adnn_gemm_batched(ctx, f32, ADNN_TRANS, ADNN_NO_TRANS, s, d, s, 1.0, u->p, s,
                            p->dout + o, d, 0.0, p->dv + o, d, g, s * s, hs, hs));
  }
  CHECK(adnn_context_synchronize(ctx));
}

/* ---- timing ----------------------------------------------------------------- */

typedef void (*step_fn)(const problem *, const void *);
static void fused_fwd_cb(const problem *p, const void *f) { fused_forward(p, f); }
static void fused_bwd_cb(const problem *p, const void *f) { fused_backward(p, f); }
static void unfused_fwd_cb(const problem *p, const void *u) { unfused_forward(p, u); }
static void unfused_bwd_cb(const problem *p, const void *u) { unfused_backward(p, u); }

static double time_median(const options *opt, step_fn fn, const problem *p, const void *plans,
                          int *count) {
  double ms[1000];
  int warmup = p->s <= opt->warmup_max_size ? opt->warmup : 0;
  for (int i = 0; i < warmup; i++) fn(p, plans);
  double spent = 0.0;
  int n = 0;
  while (n < opt->runs && n < 1000 && !(n >= opt->min_runs && spent >= opt->max_seconds)) {
    double t0 = now_seconds();
    fn(p, plans);
    double dt = now_seconds() - t0;
    ms[n++] = dt * 1e3;
    spent += dt;
  }
  qsort(ms, (size_t)n, sizeof ms[0], compare_doubles);
  *count = n;
  return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

/* ---- child modes ------------------------------------------------------------ */

/* Prints "ok FWD_MS FWD_RUNS BWD_MS BWD_RUNS COUNTED_BYTES VMHWM_KIB GROUP". */
static int child_run(const options *opt, const char *method, int64_t s, int causal) {
  problem p = {.h = opt->heads, .s = s, .d = opt->dim, .causal = causal};
  int fused_method = !strcmp(method, "fused");
  int backward = opt->backward && (fused_method || s <= opt->unfused_backward_max_size);
  problem_alloc(&p, backward);
  double fwd = 0, bwd = 0;
  int fwd_n = 0, bwd_n = 0;
  int64_t group = 0;
  if (fused_method) {
    fused f;
    adnn_status st = fused_create(&p, backward, &f);
    if (st != ADNN_STATUS_SUCCESS) {
      printf("unavailable %s: %s\n", adnn_status_name(st), adnn_last_error());
      return 0;
    }
    fwd = time_median(opt, fused_fwd_cb, &p, &f, &fwd_n);
    if (backward) bwd = time_median(opt, fused_bwd_cb, &p, &f, &bwd_n);
    adnn_plan_destroy(f.fwd);
    adnn_plan_destroy(f.bwd);
  } else {
    unfused u;
    unfused_create(&p, backward, &u);
    group = u.group;
    fwd = time_median(opt, unfused_fwd_cb, &p, &u, &fwd_n);
    if (backward) {
      if (u.group == p.h) unfused_forward(&p, &u); /* P for the backward, as autograd keeps it */
      bwd = time_median(opt, unfused_bwd_cb, &p, &u, &bwd_n);
    }
    adnn_plan_destroy(u.add_mask);
    adnn_plan_destroy(u.softmax);
    adnn_plan_destroy(u.softmax_bwd);
  }
  printf("ok %.3f %d %.3f %d %zu %ld %lld\n", fwd, fwd_n, bwd, bwd_n, counted_bytes,
         vm_hwm_kib(), (long long)group);
  return 0;
}

static int child_baseline(void) {
  float *a = device_floats(64 * 64, 1), *c = device_floats(64 * 64, 0);
  CHECK(adnn_gemm(ctx, ADNN_DTYPE_F32, ADNN_NO_TRANS, ADNN_NO_TRANS, 64, 64, 64, 1.0, a, 64, a,
                  64, 0.0, c, 64));
  CHECK(adnn_context_synchronize(ctx));
  printf("ok %ld\n", vm_hwm_kib());
  return 0;
}

static float *host_floats(const float *dev, size_t n) {
  float *x = malloc(n * sizeof *x);
  if (x == NULL) exit(1);
  CHECK(adnn_memcpy(ctx, x, dev, n * sizeof *x, ADNN_MEMCPY_DEVICE_TO_HOST));
  return x;
}

/* Largest |got - want| over n values (NaN counts as infinite). */
static double max_diff(const float *got, const double *want, size_t n) {
  double m = 0.0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)got[i] - want[i]);
    if (!(d <= m)) m = isnan(d) ? INFINITY : d;
  }
  return m;
}

/* Attention forward and backward in plain double loops on the host, from the
 * definitions (want[0..3] = o, dq, dk, dv). */
static void reference(const problem *p, double *want[4]) {
  int64_t h = p->h, s = p->s, d = p->d;
  size_t n = (size_t)(h * s * d);
  float *q = host_floats(p->q, n), *k = host_floats(p->k, n), *v = host_floats(p->v, n),
        *dout = host_floats(p->dout, n);
  double *pr = malloc((size_t)s * sizeof *pr), *dp = malloc((size_t)s * sizeof *dp);
  if (pr == NULL || dp == NULL) exit(1);
  for (int t = 0; t < 4; t++)
    for (size_t i = 0; i < n; i++) want[t][i] = 0.0;
  double scale = 1.0 / sqrt((double)d);
  for (int64_t hh = 0; hh < h; hh++) {
    size_t base = (size_t)(hh * s * d);
    for (int64_t i = 0; i < s; i++) {
      int64_t keys = p->causal ? i + 1 : s;
      double max = -INFINITY, sum = 0.0, dot_pdp = 0.0;
      for (int64_t j = 0; j < keys; j++) {
        double acc = 0.0;
        for (int64_t c = 0; c < d; c++) acc += (double)q[base + i * d + c] * k[base + j * d + c];
        pr[j] = scale * acc;
        if (pr[j] > max) max = pr[j];
      }
      for (int64_t j = 0; j < keys; j++) sum += (pr[j] = exp(pr[j] - max));
      for (int64_t j = 0; j < keys; j++) {
        pr[j] /= sum;
        double acc = 0.0;
        for (int64_t c = 0; c < d; c++) {
          want[0][base + i * d + c] += pr[j] * v[base + j * d + c];
          acc += (double)dout[base + i * d + c] * v[base + j * d + c];
        }
        dp[j] = acc;
        dot_pdp += pr[j] * acc;
      }
      for (int64_t j = 0; j < keys; j++) {
        double ds = pr[j] * (dp[j] - dot_pdp);
        for (int64_t c = 0; c < d; c++) {
          want[1][base + i * d + c] += scale * ds * k[base + j * d + c];
          want[2][base + j * d + c] += scale * ds * q[base + i * d + c];
          want[3][base + j * d + c] += pr[j] * dout[base + i * d + c];
        }
      }
    }
  }
  free(q);
  free(k);
  free(v);
  free(dout);
  free(pr);
  free(dp);
}

/* Both methods on the same data against the double reference; prints
 * "ok METHOD O DQ DK DV ..." (largest |diff| of each) for the methods that
 * ran. */
static int child_verify(const options *opt, int64_t s, int causal) {
  problem f = {.h = opt->heads, .s = s, .d = opt->dim, .causal = causal};
  problem_alloc(&f, 1);
  problem u = f;
  size_t n = (size_t)(f.h * f.s * f.d);
  u.o = device_floats(n, 0);
  u.dq = device_floats(n, 0);
  u.dk = device_floats(n, 0);
  u.dv = device_floats(n, 0);
  double *want[4];
  for (int t = 0; t < 4; t++)
    if ((want[t] = malloc(n * sizeof *want[t])) == NULL) exit(1);
  reference(&f, want);
  char out[512] = "ok";
  const problem *ps[2] = {&u, &f};
  for (int m = 0; m < 2; m++) {
    const problem *p = ps[m];
    if (m == 0) {
      unfused up;
      unfused_create(p, 1, &up);
      unfused_forward(p, &up);
      unfused_backward(p, &up);
    } else {
      fused fp;
      adnn_status st = fused_create(p, 1, &fp);
      if (st != ADNN_STATUS_SUCCESS) {
        size_t l = strlen(out);
        snprintf(out + l, sizeof out - l, "; fused unavailable (%s: %s)", adnn_status_name(st),
                 adnn_last_error());
        break;
      }
      fused_forward(p, &fp);
      fused_backward(p, &fp);
    }
    const float *dev[4] = {p->o, p->dq, p->dk, p->dv};
    double diff[4];
    for (int t = 0; t < 4; t++) {
      float *got = host_floats(dev[t], n);
      diff[t] = max_diff(got, want[t], n);
      free(got);
    }
    size_t l = strlen(out);
    snprintf(out + l, sizeof out - l, "%s %s: o %.2g, dq %.2g, dk %.2g, dv %.2g",
             m ? ";" : "", m ? "fused" : "unfused", diff[0], diff[1], diff[2], diff[3]);
  }
  printf("%s\n", out);
  for (int t = 0; t < 4; t++) free(want[t]);
  return 0;
}

/* ---- parent ----------------------------------------------------------------- */

/* Runs this program as a child with `args` and reads its one result line. */
static int run_child(const char *self, const options *opt, const char *mode, int64_t s, int causal,
                     char *line, size_t size) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDOUT_FILENO);
    char sbuf[32], cbuf[8], hbuf[32], dbuf[32], rbuf[16], mbuf[16], wbuf[16], tbuf[32];
    snprintf(sbuf, sizeof sbuf, "%lld", (long long)s);
    snprintf(cbuf, sizeof cbuf, "%d", causal);
    snprintf(hbuf, sizeof hbuf, "%lld", (long long)opt->heads);
    snprintf(dbuf, sizeof dbuf, "%lld", (long long)opt->dim);
    snprintf(rbuf, sizeof rbuf, "%d", opt->runs);
    snprintf(mbuf, sizeof mbuf, "%d", opt->min_runs);
    snprintf(wbuf, sizeof wbuf, "%d", opt->warmup);
    snprintf(tbuf, sizeof tbuf, "%g", opt->max_seconds);
    char xbuf[32], ybuf[32];
    snprintf(xbuf, sizeof xbuf, "%lld", (long long)opt->warmup_max_size);
    snprintf(ybuf, sizeof ybuf, "%lld", (long long)opt->unfused_backward_max_size);
    execl(self, self, "--child", mode, sbuf, cbuf, "--heads", hbuf, "--dim", dbuf, "--runs", rbuf,
          "--min-runs", mbuf, "--warmup", wbuf, "--max-seconds", tbuf,
          "--warmup-max-size", xbuf, "--unfused-backward-max-size", ybuf,
          opt->backward ? "--backward" : "--no-backward", (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  FILE *f = fdopen(fds[0], "r");
  line[0] = '\0';
  if (f == NULL || fgets(line, (int)size, f) == NULL) snprintf(line, size, "error no output\n");
  if (f != NULL) fclose(f);
  int status;
  waitpid(pid, &status, 0);
  line[strcspn(line, "\n")] = '\0';
  if (WIFSIGNALED(status))
    snprintf(line, size, "error killed by signal %d (out of memory?)", WTERMSIG(status));
  return 0;
}

static int parse_list(const char *s, int64_t *out, int max) {
  int n = 0;
  while (*s && n < max) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v < 0) return -1;
    out[n++] = v;
    s = *end == ',' ? end + 1 : end;
    if (*end != ',' && *end != '\0') return -1;
  }
  return n;
}

static void usage(FILE *f) {
  fprintf(f, "usage: attention-perf [--sizes 512,2048,8192,16384] [--heads 12] [--dim 64]\n"
             "         [--causal 0,1] [--methods fused,unfused] [--runs 5] [--min-runs 3]\n"
             "         [--max-seconds 20] [--warmup 1] [--warmup-max-size 2048]\n"
             "         [--unfused-backward-max-size 8192] [--no-backward] [--no-verify]\n"
             "         [--verify-size 128]\n");
}

int main(int argc, char **argv) {
  options opt = {.sizes = {512, 2048, 8192, 16384}, .n_sizes = 4, .heads = 12, .dim = 64,
                 .causal = {0, 1}, .n_causal = 2, .fused = 1, .unfused = 1, .backward = 1,
                 .verify = 1, .verify_size = 128, .runs = 5, .min_runs = 3, .warmup = 1, .max_seconds = 20,
                 .warmup_max_size = 2048, .unfused_backward_max_size = 8192};
  const char *child_mode = NULL;
  int64_t child_s = 0;
  int child_causal = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int64_t tmp[16];
    if (!strcmp(a, "--child") && i + 3 < argc) {
      child_mode = argv[i + 1];
      child_s = strtoll(argv[i + 2], NULL, 10);
      child_causal = atoi(argv[i + 3]);
      i += 3;
    } else if (!strcmp(a, "--sizes") && v && (opt.n_sizes = parse_list(v, opt.sizes, 16)) > 0) {
      i++;
    } else if (!strcmp(a, "--causal") && v && (opt.n_causal = parse_list(v, tmp, 2)) > 0) {
      for (int j = 0; j < opt.n_causal; j++) opt.causal[j] = tmp[j] != 0;
      i++;
    } else if (!strcmp(a, "--methods") && v) {
      opt.fused = strstr(v, "fused") == v || strstr(v, ",fused") != NULL;
      opt.unfused = strstr(v, "unfused") != NULL;
      i++;
    } else if (!strcmp(a, "--heads") && v && (opt.heads = strtoll(v, NULL, 10)) > 0) {
      i++;
    } else if (!strcmp(a, "--dim") && v && (opt.dim = strtoll(v, NULL, 10)) > 0) {
      i++;
    } else if (!strcmp(a, "--runs") && v && (opt.runs = atoi(v)) > 0) {
      i++;
    } else if (!strcmp(a, "--min-runs") && v && (opt.min_runs = atoi(v)) > 0) {
      i++;
    } else if (!strcmp(a, "--warmup") && v && (opt.warmup = atoi(v)) >= 0) {
      i++;
    } else if (!strcmp(a, "--max-seconds") && v && (opt.max_seconds = atof(v)) > 0) {
      i++;
    } else if (!strcmp(a, "--backward")) {
      opt.backward = 1;
    } else if (!strcmp(a, "--no-backward")) {
      opt.backward = 0;
    } else if (!strcmp(a, "--verify-size") && v && (opt.verify_size = strtoll(v, NULL, 10)) > 0) {
      i++;
    } else if (!strcmp(a, "--warmup-max-size") && v) {
      opt.warmup_max_size = strtoll(v, NULL, 10);
      i++;
    } else if (!strcmp(a, "--unfused-backward-max-size") && v) {
      opt.unfused_backward_max_size = strtoll(v, NULL, 10);
      i++;
    } else if (!strcmp(a, "--no-verify")) {
      opt.verify = 0;
    } else if (!strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    } else {
      usage(stderr);
      return 2;
    }
  }

  if (child_mode != NULL) {
    CHECK(adnn_context_create("cpu", &ctx));
    int rc;
    if (!strcmp(child_mode, "baseline")) rc = child_baseline();
    else if (!strcmp(child_mode, "verify")) rc = child_verify(&opt, child_s, child_causal);
    else rc = child_run(&opt, child_mode, child_s, child_causal);
    adnn_context_destroy(ctx);
    return rc;
  }

  const char *self = "/proc/self/exe";
  char exe[4096];
  ssize_t len = readlink(self, exe, sizeof exe - 1);
  if (len <= 0) {
    fprintf(stderr, "attention-perf: cannot read /proc/self/exe\n");
    return 1;
  }
  exe[len] = '\0';
  char line[1024];
  run_child(exe, &opt, "baseline", 0, 0, line, sizeof line);
  long base_kib = -1;
  if (sscanf(line, "ok %ld", &base_kib) != 1) {
    fprintf(stderr, "attention-perf: baseline child failed: %s\n", line);
    return 1;
  }
  printf("attention-perf: B = 1, H = %lld, D = %lld, F32, BHSD packed, cpu backend; baseline "
         "child VmHWM %.1f MiB (subtracted below)\n",
         (long long)opt.heads, (long long)opt.dim, base_kib / 1024.0);
  if (opt.verify) {
    for (int c = 0; c < opt.n_causal; c++) {
      run_child(exe, &opt, "verify", opt.verify_size, opt.causal[c], line, sizeof line);
      printf("verify S = %lld %s: %s\n", (long long)opt.verify_size,
             opt.causal[c] ? "causal" : "non-causal",
             strncmp(line, "ok ", 3) ? line : line + 3);
    }
    printf("  (largest |adnn - double reference| of o, dq, dk, dv; inputs uniform in [-1, 1))\n");
  }
  printf("\n| S | mask | method | heads per GEMM | fwd ms (runs) | bwd ms (runs) | bwd/fwd | "
         "peak RSS - baseline MiB | counted MiB |\n");
  printf("|---|---|---|---|---|---|---|---|---|\n");
  fflush(stdout);
  for (int i = 0; i < opt.n_sizes; i++)
    for (int c = 0; c < opt.n_causal; c++)
      for (int m = 0; m < 2; m++) {
        if ((m == 0 && !opt.fused) || (m == 1 && !opt.unfused)) continue;
        const char *method = m == 0 ? "fused" : "unfused";
        run_child(exe, &opt, method, opt.sizes[i], opt.causal[c], line, sizeof line);
        double fwd, bwd;
        int fn, bn;
        size_t counted;
        long hwm;
        long long group;
        printf("| %lld | %s | %s | ", (long long)opt.sizes[i],
               opt.causal[c] ? "causal" : "none", method);
        if (sscanf(line, "ok %lf %d %lf %d %zu %ld %lld", &fwd, &fn, &bwd, &bn, &counted, &hwm,
                   &group) == 7) {
          if (m == 0) printf("- | ");
          else printf("%lld | ", group);
          printf("%.1f (%d) | ", fwd, fn);
          if (opt.backward && bn == 0)
            printf("skipped (S > %lld) | - | ", (long long)opt.unfused_backward_max_size);
          else if (opt.backward)
            printf("%.1f (%d)%s | %.2f | ", bwd, bn,
                   m == 1 && group != opt.heads ? " incl. P recompute" : "", bwd / fwd);
          else
            printf("- | - | ");
          printf("%.1f | %.1f |\n", (hwm - base_kib) / 1024.0, counted / 1048576.0);
        } else {
          printf("%s | | | | | |\n", line);
        }
        fflush(stdout);
      }
  return 0;
}
