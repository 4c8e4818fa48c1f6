/*
 * The tuner through the public API on the cpu backend: measured choice,
 * the performance database on the second creation, tuning off, forced
 * algorithms, deterministic mode, the workspace limit, the time budget, the
 * environment variables, and that tuning never touches the caller's buffers
 * (the tuned plan's output is checked against the conformance harness's
 * conv2d oracle).
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <adnn.h>

#include "t/harness/harness.h"
#include "t/tap.h"
#include "t/tmpdir.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A 3x3 convolution with padding 1: on the cpu backend im2col_gemm and
 * winograd_f2x3 (plus the slow reference) can run it. */
static void conv_desc(adnn_conv2d_desc *d, int64_t n, int64_t c, int64_t k, int64_t h,
                      int64_t r) {
  int64_t xd[4] = {n, c, h, h}, wd[4] = {k, c, r, r}, yd[4];
  adnn_conv2d_desc_init(d);
  adnn_tensor_desc_init(&d->x, ADNN_DTYPE_F32, 4, xd);
  adnn_tensor_desc_init(&d->w, ADNN_DTYPE_F32, 4, wd);
  d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = r / 2;
  adnn_conv2d_output_dims(d, yd);
  adnn_tensor_desc_init(&d->y, ADNN_DTYPE_F32, 4, yd);
}

/* The largest |y - oracle| / (1 + |oracle|) over the packed F32 y of a conv2d
 * without bias; infinity when the oracle cannot run. */
static double error_vs_oracle(const adnn_conv2d_desc *d, const float *x, const float *w,
                              const float *y) {
  const int64_t nx = harness_span(&d->x), nw = harness_span(&d->w), ny = harness_span(&d->y);
  double *xv = malloc((size_t)nx * sizeof *xv), *wv = malloc((size_t)nw * sizeof *wv);
  double *want = malloc((size_t)ny * sizeof *want);
  double maxerr = INFINITY;
  char why[256];
  harness_desc hd;
  hd.conv2d = *d;
  if (xv && wv && want) {
    for (int64_t i = 0; i < nx; i++) xv[i] = x[i];
    for (int64_t i = 0; i < nw; i++) wv[i] = w[i];
    const double *in[2] = {xv, wv};
    if (harness_op_find("conv2d")->traits->oracle(&hd, in, want, why, sizeof why) == 0) {
      maxerr = 0;
      for (int64_t i = 0; i < ny; i++) {
        const double e = fabs((double)y[i] - want[i]) / (1.0 + fabs(want[i]));
        if (!(e <= maxerr)) maxerr = e;
      }
    }
  }
  free(xv);
  free(wv);
  free(want);
  return maxerr;
}

static void set_mode(adnn_context *ctx, adnn_tune_mode mode, double budget, size_t limit,
                     int det) {
  adnn_tune_options o;
  adnn_tune_options_init(&o);
  o.mode = mode;
  o.time_budget_ms = budget;
  o.workspace_limit = limit;
  o.deterministic = det;
  adnn_status st = adnn_context_set_tune_options(ctx, &o);
  if (st != ADNN_STATUS_SUCCESS) diag("set_tune_options: %s", adnn_last_error());
}

static void show(const adnn_plan *p) {
  size_t n = 0;
  adnn_plan_get_candidate_count(p, &n);
  diag("chose %s (workspace %zu): %s", adnn_plan_get_algorithm(p), adnn_plan_get_workspace_bytes(p),
       adnn_plan_get_choice_reason(p));
  for (size_t i = 0; i < n; i++) {
    const adnn_plan_candidate *c;
    if (adnn_plan_get_candidate(p, i, &c) != ADNN_STATUS_SUCCESS) continue;
    diag("  %-18s %-14s ws=%-9zu det=%d %9.4f ms", c->algorithm, adnn_status_name(c->status),
         c->workspace_bytes, (int)c->deterministic, c->time_ms);
  }
}

/* The index of the fastest measured candidate, -1 if none. */
static int fastest(const adnn_plan *p) {
  size_t n = 0;
  adnn_plan_get_candidate_count(p, &n);
  int best = -1;
  double t = 0;
  for (size_t i = 0; i < n; i++) {
    const adnn_plan_candidate *c;
    adnn_plan_get_candidate(p, i, &c);
    if (c->status != ADNN_STATUS_SUCCESS || !(c->time_ms >= 0)) continue;
    if (best < 0 || c->time_ms < t) {
      best = (int)i;
      t = c->time_ms;
    }
  }
  return best;
}

static int has_text(const char *s, const char *part) { return strstr(s, part) != NULL; }

int main(void) {
  char cache[512];
  if (!tmpdir_make(cache, sizeof cache, "adnn-tune")) return tap_skip_all("no temporary directory");
  /* Before the first adnn call: a fresh database, default tuning. */
  setenv("ADNN_CACHE_DIR", cache, 1);
  setenv("ADNN_TUNE", "default", 1);
  unsetenv("ADNN_TUNE_BUDGET_MS");
  unsetenv("ADNN_TUNE_WORKSPACE_LIMIT");
  unsetenv("ADNN_DETERMINISTIC");
  unsetenv("ADNN_CONV2D_ALGO");

  adnn_context *ctx;
  if (adnn_context_create("cpu", &ctx) != ADNN_STATUS_SUCCESS) {
    tmpdir_remove(cache);
    return tap_skip_all("no cpu backend");
  }

  /* ---- options: defaults, set/get, validation ---- */
  adnn_tune_options o, def;
  adnn_tune_options_init(&def);
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  ok(adnn_context_get_tune_options(ctx, &o) == ADNN_STATUS_SUCCESS && o.mode == ADNN_TUNE_DEFAULT &&
         o.time_budget_ms == 1000.0 && o.workspace_limit == def.workspace_limit &&
         o.deterministic == 0, "a new context starts with the default options");
  o.mode = (adnn_tune_mode)7;
  ok(adnn_context_set_tune_options(ctx, &o) == ADNN_STATUS_BAD_PARAM, "an unknown mode is refused");
  o.mode = ADNN_TUNE_DEFAULT;
  o.time_budget_ms = -1;
  ok(adnn_context_set_tune_options(ctx, &o) == ADNN_STATUS_BAD_PARAM, "a negative budget is refused");
  o.time_budget_ms = NAN;
  ok(adnn_context_set_tune_options(ctx, &o) == ADNN_STATUS_BAD_PARAM, "a NaN budget is refused");
  o.time_budget_ms = 10;
  o.struct_size = 8;
  ok(adnn_context_set_tune_options(ctx, &o) == ADNN_STATUS_BAD_PARAM, "a short struct_size is refused");
  ok(adnn_context_set_tune_options(NULL, &def) == ADNN_STATUS_BAD_PARAM_NULL &&
         adnn_context_set_tune_options(ctx, NULL) == ADNN_STATUS_BAD_PARAM_NULL &&
         adnn_context_get_tune_options(ctx, NULL) == ADNN_STATUS_BAD_PARAM_NULL,
     "NULLs are refused");

  /* ---- the environment ---- */
  {
    setenv("ADNN_TUNE", "exhaustive", 1);
    setenv("ADNN_TUNE_BUDGET_MS", "250.5", 1);
    setenv("ADNN_TUNE_WORKSPACE_LIMIT", "64K", 1);
    setenv("ADNN_DETERMINISTIC", "1", 1);
    adnn_context *c2;
    adnn_context_create("cpu", &c2);
    adnn_tune_options e;
    e.struct_size = sizeof e;
    adnn_context_get_tune_options(c2, &e);
    ok(e.mode == ADNN_TUNE_EXHAUSTIVE && e.time_budget_ms == 250.5 && e.workspace_limit == 65536 &&
           e.deterministic == 1, "ADNN_TUNE, _BUDGET_MS, _WORKSPACE_LIMIT (K suffix) and "
       "ADNN_DETERMINISTIC are read at context creation");
    adnn_context_destroy(c2);
    adnn_log_set_level(ADNN_LOG_ERROR); /* the warnings below are expected */
    setenv("ADNN_TUNE", "fast", 1);
    setenv("ADNN_TUNE_BUDGET_MS", "-3", 1);
    setenv("ADNN_TUNE_WORKSPACE_LIMIT", "12X", 1);
    setenv("ADNN_DETERMINISTIC", "yes", 1);
    adnn_context_create("cpu", &c2);
    adnn_context_get_tune_options(c2, &e);
    ok(e.mode == ADNN_TUNE_DEFAULT && e.time_budget_ms == 1000.0 &&
           e.workspace_limit == def.workspace_limit && e.deterministic == 0,
       "invalid environment values fall back to the defaults");
    adnn_context_destroy(c2);
    setenv("ADNN_TUNE_WORKSPACE_LIMIT", "2G", 1);
    adnn_context_create("cpu", &c2);
    adnn_context_get_tune_options(c2, &e);
    ok(e.workspace_limit == ((size_t)2 << 30), "ADNN_TUNE_WORKSPACE_LIMIT=2G");
    adnn_context_destroy(c2);
    adnn_log_set_level(ADNN_LOG_WARN);
    setenv("ADNN_TUNE", "default", 1);
    unsetenv("ADNN_TUNE_BUDGET_MS");
    unsetenv("ADNN_TUNE_WORKSPACE_LIMIT");
    unsetenv("ADNN_DETERMINISTIC");
  }

  /* ---- default mode: measure, with the user's buffers poisoned ---- */
  set_mode(ctx, ADNN_TUNE_DEFAULT, 300, def.workspace_limit, 0);
  adnn_conv2d_desc d;
  conv_desc(&d, 1, 16, 16, 20, 3);
  size_t xb = 0, wb = 0, yb = 0;
  adnn_tensor_desc_span_bytes(&d.x, &xb);
  adnn_tensor_desc_span_bytes(&d.w, &wb);
  adnn_tensor_desc_span_bytes(&d.y, &yb);
  float *hx = malloc(xb), *hw = malloc(wb), *hy = malloc(yb);
  for (size_t i = 0; i < xb / 4; i++) hx[i] = (float)((int)(i * 37 % 29) - 14) / 8.0f;
  for (size_t i = 0; i < wb / 4; i++) hw[i] = (float)((int)(i * 11 % 17) - 8) / 16.0f;
  void *x, *w, *y;
  adnn_malloc(ctx, xb, &x);
  adnn_malloc(ctx, wb, &w);
  adnn_malloc(ctx, yb, &y);
  adnn_memcpy(ctx, x, hx, xb, ADNN_MEMCPY_HOST_TO_DEVICE);
  adnn_memcpy(ctx, w, hw, wb, ADNN_MEMCPY_HOST_TO_DEVICE);
  adnn_memset(ctx, y, 0xA5, yb);

  adnn_plan *p = NULL;
  double t0 = now_ms();
  adnn_status st = adnn_plan_create_conv2d(ctx, &d, &p);
  double tune_ms = now_ms() - t0;
  if (!ok(st == ADNN_STATUS_SUCCESS, "default mode: the plan is created (%s)",
          st ? adnn_last_error() : "ok")) {
    adnn_context_destroy(ctx);
    tmpdir_remove(cache);
    return tap_done();
  }
  show(p);
  diag("plan creation with tuning took %.1f ms", tune_ms);
  size_t n = 0;
  ok(adnn_plan_get_candidate_count(p, &n) == ADNN_STATUS_SUCCESS && n >= 2, "%zu candidates listed", n);
  int measured = 0, all_positive = 1;
  for (size_t i = 0; i < n; i++) {
    const adnn_plan_candidate *c;
    adnn_plan_get_candidate(p, i, &c);
    if (c->status == ADNN_STATUS_SUCCESS && c->time_ms >= 0) {
      measured++;
      if (!(c->time_ms > 0)) all_positive = 0;
    }
  }
  ok(measured >= 2 && all_positive, "%d candidates measured, each with time_ms > 0", measured);
  int best = fastest(p);
  const adnn_plan_candidate *bc = NULL;
  if (best >= 0) adnn_plan_get_candidate(p, (size_t)best, &bc);
  ok(bc != NULL && strcmp(adnn_plan_get_algorithm(p), bc->algorithm) == 0,
     "the plan runs the fastest measured candidate (%s)", bc ? bc->algorithm : "none");
  ok(has_text(adnn_plan_get_choice_reason(p), "measured"), "the reason says it was measured");
  ok(tune_ms < 2000, "tuning this small problem took %.0f ms", tune_ms);
  const adnn_plan_candidate *c0;
  ok(adnn_plan_get_candidate(p, n, &c0) == ADNN_STATUS_BAD_PARAM &&
         adnn_plan_get_candidate(p, 0, NULL) == ADNN_STATUS_BAD_PARAM_NULL &&
         adnn_plan_get_candidate_count(NULL, &n) == ADNN_STATUS_BAD_PARAM_NULL &&
         strcmp(adnn_plan_get_choice_reason(NULL), "") == 0,
     "candidate_get/count/choice_reason check their arguments");

  adnn_memcpy(ctx, hy, y, yb, ADNN_MEMCPY_DEVICE_TO_HOST);
  int poisoned = 1;
  for (size_t i = 0; i < yb; i++)
    if (((unsigned char *)hy)[i] != 0xA5) poisoned = 0;
  ok(poisoned, "tuning did not write into the caller's y");
  float *chk = malloc(xb > wb ? xb : wb);
  adnn_memcpy(ctx, chk, x, xb, ADNN_MEMCPY_DEVICE_TO_HOST);
  int same = memcmp(chk, hx, xb) == 0;
  adnn_memcpy(ctx, chk, w, wb, ADNN_MEMCPY_DEVICE_TO_HOST);
  same = same && memcmp(chk, hw, wb) == 0;
  ok(same, "nor into x or w");
  free(chk);

  const void *in[2] = {x, w};
  st = adnn_plan_execute(p, in, 2, y);
  adnn_memcpy(ctx, hy, y, yb, ADNN_MEMCPY_DEVICE_TO_HOST);
  const double maxerr = error_vs_oracle(&d, hx, hw, hy);
  ok(st == ADNN_STATUS_SUCCESS && maxerr < 1e-4, "the tuned plan matches the oracle (max "
     "relative error %.3g)", maxerr);
  adnn_plan_destroy(p);

  /* ---- the same problem again: the performance database ---- */
  st = adnn_plan_create_conv2d(ctx, &d, &p);
  if (st == ADNN_STATUS_SUCCESS) {
    show(p);
    ok(has_text(adnn_plan_get_choice_reason(p), "performance database"),
       "the same problem again comes from the performance database");
    adnn_plan_destroy(p);
  } else {
    ok(0, "second creation: %s", adnn_last_error());
  }

  /* ---- the tuning options are part of the key (key format 2) ----
   * Under another workspace limit, or in deterministic mode, the stored entry
   * does not answer (every cpu candidate fits and is deterministic, so a key
   * without the options would hit): the problem is measured, as a key of its
   * own, and the default options' entry still answers afterwards. */
  set_mode(ctx, ADNN_TUNE_DEFAULT, 300, def.workspace_limit / 2, 0);
  st = adnn_plan_create_conv2d(ctx, &d, &p);
  if (ok(st == ADNN_STATUS_SUCCESS, "half the workspace limit: created")) {
    ok(has_text(adnn_plan_get_choice_reason(p), "measured"),
       "another workspace limit is another key: measured (%s)", adnn_plan_get_choice_reason(p));
    adnn_plan_destroy(p);
  }
  set_mode(ctx, ADNN_TUNE_DEFAULT, 300, def.workspace_limit, 1);
  st = adnn_plan_create_conv2d(ctx, &d, &p);
  if (ok(st == ADNN_STATUS_SUCCESS, "deterministic: created")) {
    ok(has_text(adnn_plan_get_choice_reason(p), "measured"),
       "deterministic mode is another key: measured (%s)", adnn_plan_get_choice_reason(p));
    adnn_plan_destroy(p);
  }
  set_mode(ctx, ADNN_TUNE_DEFAULT, 300, def.workspace_limit, 0);
  st = adnn_plan_create_conv2d(ctx, &d, &p);
  if (ok(st == ADNN_STATUS_SUCCESS, "default options again: created")) {
    ok(has_text(adnn_plan_get_choice_reason(p), "performance database"),
       "the default options' entry was not replaced: from the database (%s)",
       adnn_plan_get_choice_reason(p));
    adnn_plan_destroy(p);
  }

  /* ---- tuning off ---- */
  set_mode(ctx, ADNN_TUNE_OFF, 300, def.workspace_limit, 0);
  conv_desc(&d, 1, 16, 16, 18, 3);
  st = adnn_plan_create_conv2d(ctx, &d, &p);
  if (ok(st == ADNN_STATUS_SUCCESS, "mode off: created")) {
    show(p);
    adnn_plan_get_candidate_count(p, &n);
    ok(has_text(adnn_plan_get_choice_reason(p), "heuristic") && n == 0,
       "mode off: the heuristic, nothing measured");
    adnn_plan_destroy(p);
  }
  char heuristic[64] = "";
  st = adnn_plan_create_conv2d(ctx, &d, &p);
  if (st == ADNN_STATUS_SUCCESS) {
    snprintf(heuristic, sizeof heuristic, "%s", adnn_plan_get_algorithm(p));
    adnn_plan_destroy(p);
  }

  /* ---- forced ---- */
  set_mode(ctx, ADNN_TUNE_EXHAUSTIVE, 300, def.workspace_limit, 0);
  d.algorithm = ADNN_CONV2D_ALGO_WINOGRAD_F2X3;
  st = adnn_plan_create_conv2d(ctx, &d, &p);
  if (ok(st == ADNN_STATUS_SUCCESS, "forced: created")) {
    adnn_plan_get_candidate_count(p, &n);
    ok(n == 0 && has_text(adnn_plan_get_choice_reason(p), "forced") &&
           strcmp(adnn_plan_get_algorithm(p), "winograd_f2x3") == 0,
       "a forced algorithm is not tuned (%s: %s)", adnn_plan_get_algorithm(p),
       adnn_plan_get_choice_reason(p));
    adnn_plan_destroy(p);
  }
  d.algorithm = ADNN_CONV2D_ALGO_AUTO;

  /* ---- budget 0 in default mode: nothing measured, the heuristic ---- */
  set_mode(ctx, ADNN_TUNE_DEFAULT, 0, def.workspace_limit, 0);
  st = adnn_plan_create_conv2d(ctx, &d, &p);
  if (ok(st == ADNN_STATUS_SUCCESS, "budget 0: created")) {
    show(p);
    ok(strcmp(adnn_plan_get_algorithm(p), heuristic) == 0 &&
           has_text(adnn_plan_get_choice_reason(p), "heuristic"),
       "budget 0: the heuristic (%s)", heuristic);
    adnn_plan_destroy(p);
  }

  /* ---- deterministic mode (every cpu algorithm is deterministic) ---- */
  set_mode(ctx, ADNN_TUNE_EXHAUSTIVE, 200, def.workspace_limit, 1);
  st = adnn_plan_create_conv2d(ctx, &d, &p);
  if (ok(st == ADNN_STATUS_SUCCESS, "deterministic: created")) {
    show(p);
    adnn_plan_get_candidate_count(p, &n);
    int chosen_det = 0, excluded_ok = 1;
    for (size_t i = 0; i < n; i++) {
      const adnn_plan_candidate *c;
      adnn_plan_get_candidate(p, i, &c);
      if (strcmp(c->algorithm, adnn_plan_get_algorithm(p)) == 0) chosen_det = c->deterministic == 1;
      if (!c->deterministic && c->status == ADNN_STATUS_SUCCESS) excluded_ok = 0;
    }
    ok(chosen_det && excluded_ok, "deterministic mode: the chosen candidate is deterministic, "
       "non-deterministic ones are excluded");
    ok(has_text(adnn_plan_get_choice_reason(p), "measured"), "exhaustive mode measures");
    adnn_plan_destroy(p);
  }

  /* ---- workspace limit 0 ---- */
  set_mode(ctx, ADNN_TUNE_EXHAUSTIVE, 100, 0, 0);
  conv_desc(&d, 1, 8, 8, 10, 3);
  st = adnn_plan_create_conv2d(ctx, &d, &p);
  if (ok(st == ADNN_STATUS_SUCCESS, "workspace limit 0: created")) {
    show(p);
    adnn_plan_get_candidate_count(p, &n);
    int any_zero = 0, over_excluded = 1;
    for (size_t i = 0; i < n; i++) {
      const adnn_plan_candidate *c;
      adnn_plan_get_candidate(p, i, &c);
      if (c->workspace_bytes == 0) any_zero = 1;
      else if (c->status != ADNN_STATUS_NOT_SUPPORTED) over_excluded = 0;
    }
    ok(over_excluded, "candidates with a workspace are excluded (NOT_SUPPORTED)");
    ok(any_zero ? adnn_plan_get_workspace_bytes(p) == 0
                : has_text(adnn_plan_get_choice_reason(p), "heuristic"),
       "limit 0: a zero-workspace candidate wins (%s, %zu bytes)", adnn_plan_get_algorithm(p),
       adnn_plan_get_workspace_bytes(p));
    adnn_plan_destroy(p);
  }

  /* ---- a 1x1 convolution: gemm_1x1 and im2col_gemm compete ---- */
  set_mode(ctx, ADNN_TUNE_DEFAULT, 200, def.workspace_limit, 0);
  conv_desc(&d, 1, 32, 32, 14, 1);
  st = adnn_plan_create_conv2d(ctx, &d, &p);
  if (ok(st == ADNN_STATUS_SUCCESS, "1x1: created")) {
    show(p);
    best = fastest(p);
    bc = NULL;
    if (best >= 0) adnn_plan_get_candidate(p, (size_t)best, &bc);
    ok(bc != NULL && strcmp(adnn_plan_get_algorithm(p), bc->algorithm) == 0,
       "1x1: the fastest measured candidate runs");
    adnn_plan_destroy(p);
  }

  /* ---- a depthwise convolution: the generic algorithms are last resorts ----
   * im2col_gemm and the Winograd kernels support it but run one channel per
   * GEMM (measured 4x-180x slower than depthwise_direct): in default mode they
   * are listed and not measured, so they cannot spend the budget; exhaustive
   * mode measures them. */
  for (int exhaustive = 0; exhaustive <= 1; exhaustive++) {
    set_mode(ctx, exhaustive ? ADNN_TUNE_EXHAUSTIVE : ADNN_TUNE_DEFAULT, 1000, def.workspace_limit, 0);
    conv_desc(&d, 1, 24, 24, 13 + exhaustive, 3);
    d.groups = 24;
    int64_t wd[4] = {24, 1, 3, 3};
    adnn_tensor_desc_init(&d.w, ADNN_DTYPE_F32, 4, wd);
    st = adnn_plan_create_conv2d(ctx, &d, &p);
    if (!ok(st == ADNN_STATUS_SUCCESS, "depthwise (%s): created",
            exhaustive ? "exhaustive" : "default"))
      continue;
    show(p);
    n = 0;
    adnn_plan_get_candidate_count(p, &n);
    int generic = 0, generic_measured = 0, dw_measured = 0;
    for (size_t i = 0; i < n; i++) {
      const adnn_plan_candidate *c;
      if (adnn_plan_get_candidate(p, i, &c) != ADNN_STATUS_SUCCESS) continue;
      const int measured_c = c->status == ADNN_STATUS_SUCCESS && c->time_ms >= 0;
      if (strcmp(c->algorithm, "depthwise_direct") == 0) dw_measured = measured_c;
      else if (strcmp(c->algorithm, "reference") != 0) {
        generic++;
        generic_measured += measured_c;
      }
    }
    if (!exhaustive) {
      ok(dw_measured && generic >= 1 && generic_measured == 0 &&
             strcmp(adnn_plan_get_algorithm(p), "depthwise_direct") == 0,
         "depthwise, default mode: depthwise_direct measured and chosen, the %d generic "
         "candidate(s) listed but not measured (%d measured)", generic, generic_measured);
    } else {
      ok(dw_measured && generic >= 1 && generic_measured == generic,
         "depthwise, exhaustive mode: all %d generic candidates measured (%d)", generic,
         generic_measured);
    }
    adnn_plan_destroy(p);
  }

  /* ---- matmul (tunable): engine_epilogue and blas_epilogue compete ---- */
  {
    enum { M = 70, N = 90, K = 110 };
    adnn_matmul_desc md;
    adnn_matmul_desc_init(&md);
    int64_t ad[2] = {M, K}, bd[2] = {K, N}, yd[2] = {M, N}, cd[1] = {N};
    adnn_tensor_desc_init(&md.a, ADNN_DTYPE_F32, 2, ad);
    adnn_tensor_desc_init(&md.b, ADNN_DTYPE_F32, 2, bd);
    adnn_tensor_desc_init(&md.y, ADNN_DTYPE_F32, 2, yd);
    adnn_tensor_desc_init(&md.bias, ADNN_DTYPE_F32, 1, cd);
    md.has_bias = 1;
    md.activation.kind = ADNN_ACTIVATION_RELU;
    float *ha = malloc(sizeof(float) * M * K), *hb = malloc(sizeof(float) * K * N);
    float *hc = malloc(sizeof(float) * N), *hm = malloc(sizeof(float) * M * N);
    void *da = NULL, *db = NULL, *dc = NULL, *dm = NULL;
    uint64_t seed = 12345;
    for (int i = 0; i < M * K; i++) ha[i] = (float)((seed = seed * 6364136223846793005u + 1442695040888963407u) >> 40) / (float)(1 << 24) - 0.5f;
    for (int i = 0; i < K * N; i++) hb[i] = (float)((seed = seed * 6364136223846793005u + 1442695040888963407u) >> 40) / (float)(1 << 24) - 0.5f;
    for (int i = 0; i < N; i++) hc[i] = (float)((seed = seed * 6364136223846793005u + 1442695040888963407u) >> 40) / (float)(1 << 24) - 0.5f;
    adnn_malloc(ctx, sizeof(float) * M * K, &da);
    adnn_malloc(ctx, sizeof(float) * K * N, &db);
    adnn_malloc(ctx, sizeof(float) * N, &dc);
    adnn_malloc(ctx, sizeof(float) * M * N, &dm);
    adnn_memcpy(ctx, da, ha, sizeof(float) * M * K, ADNN_MEMCPY_HOST_TO_DEVICE);
    adnn_memcpy(ctx, db, hb, sizeof(float) * K * N, ADNN_MEMCPY_HOST_TO_DEVICE);
    adnn_memcpy(ctx, dc, hc, sizeof(float) * N, ADNN_MEMCPY_HOST_TO_DEVICE);
    set_mode(ctx, ADNN_TUNE_DEFAULT, 300, def.workspace_limit, 0);
    st = adnn_plan_create_matmul(ctx, &md, &p);
    if (ok(st == ADNN_STATUS_SUCCESS, "matmul: created")) {
      show(p);
      adnn_plan_get_candidate_count(p, &n);
      int blas = 0, engine = 0;
      for (size_t i = 0; i < n; i++) {
        const adnn_plan_candidate *c;
        adnn_plan_get_candidate(p, i, &c);
        blas |= strcmp(c->algorithm, "blas_epilogue") == 0;
        engine |= strcmp(c->algorithm, "engine_epilogue") == 0;
      }
      ok(blas && n >= 2, "matmul: %zu candidates, blas_epilogue among them (engine_epilogue %s)",
         n, engine ? "too" : "not at this instruction set");
      best = fastest(p);
      bc = NULL;
      if (best >= 0) adnn_plan_get_candidate(p, (size_t)best, &bc);
      ok(bc != NULL && strcmp(adnn_plan_get_algorithm(p), bc->algorithm) == 0 &&
             has_text(adnn_plan_get_choice_reason(p), "measured"),
         "matmul: the fastest measured candidate runs (%s: %s)", adnn_plan_get_algorithm(p),
         adnn_plan_get_choice_reason(p));
      /* The tuned plan computes relu(a b + bias): checked in double, y poisoned. */
      for (int i = 0; i < M * N; i++) hm[i] = NAN;
      adnn_memcpy(ctx, dm, hm, sizeof(float) * M * N, ADNN_MEMCPY_HOST_TO_DEVICE);
      const void *min[3] = {da, db, dc};
      st = adnn_plan_execute(p, min, 3, dm);
      adnn_memcpy(ctx, hm, dm, sizeof(float) * M * N, ADNN_MEMCPY_DEVICE_TO_HOST);
      double err = 0.0;
      for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
          double acc = hc[j], mag = fabs(hc[j]);
          for (int q = 0; q < K; q++) {
            acc += (double)ha[i * K + q] * hb[q * N + j];
            mag += fabs((double)ha[i * K + q] * hb[q * N + j]);
          }
          const double ref = acc > 0.0 ? acc : 0.0;
          const double e = fabs(hm[i * N + j] - ref) / (mag * (K + 4) * 1.2e-7);
          if (!(e <= err)) err = isnan(e) ? INFINITY : e;
        }
      ok(st == ADNN_STATUS_SUCCESS && err <= 2.0,
         "matmul: the tuned plan matches the double reference (worst error %.3g in units of "
         "(K + 4) FLT_EPSILON sum |a b|; bound 2)", err);
      adnn_plan_destroy(p);
      st = adnn_plan_create_matmul(ctx, &md, &p);
      if (ok(st == ADNN_STATUS_SUCCESS, "matmul: created again")) {
        ok(has_text(adnn_plan_get_choice_reason(p), "performance database"),
           "matmul: the same problem again comes from the performance database (%s)",
           adnn_plan_get_choice_reason(p));
        adnn_plan_destroy(p);
      }
    }
    set_mode(ctx, ADNN_TUNE_OFF, 300, def.workspace_limit, 0);
    st = adnn_plan_create_matmul(ctx, &md, &p);
    if (ok(st == ADNN_STATUS_SUCCESS, "matmul, tuning off: created")) {
      adnn_plan_get_candidate_count(p, &n);
      ok(has_text(adnn_plan_get_choice_reason(p), "heuristic") && n == 0,
         "matmul, tuning off: the heuristic (%s), nothing measured", adnn_plan_get_algorithm(p));
      adnn_plan_destroy(p);
    }
    set_mode(ctx, ADNN_TUNE_DEFAULT, 300, def.workspace_limit, 0);
    adnn_free(ctx, da);
    adnn_free(ctx, db);
    adnn_free(ctx, dc);
    adnn_free(ctx, dm);
    free(ha), free(hb), free(hc), free(hm);
  }

  /* ---- other ops are not tuned ---- */
  {
    int64_t dims[2] = {4, 8};
    adnn_activation_desc a;
    adnn_activation_desc_init(&a);
    adnn_tensor_desc_init(&a.x, ADNN_DTYPE_F32, 2, dims);
    adnn_tensor_desc_init(&a.y, ADNN_DTYPE_F32, 2, dims);
    a.activation.kind = ADNN_ACTIVATION_RELU;
    st = adnn_plan_create_activation(ctx, &a, &p);
    if (ok(st == ADNN_STATUS_SUCCESS, "activation: created")) {
      adnn_plan_get_candidate_count(p, &n);
      ok(n == 0 && *adnn_plan_get_choice_reason(p) != '\0', "activation: not tuned (%s)",
         adnn_plan_get_choice_reason(p));
      adnn_plan_destroy(p);
    }
  }

  adnn_free(ctx, x);
  adnn_free(ctx, w);
  adnn_free(ctx, y);
  free(hx);
  free(hw);
  free(hy);
  adnn_context_destroy(ctx);
  tmpdir_remove(cache);
  return tap_done();
}
