/*
 * The tuner: algorithm choice at plan creation, by the performance database or
 * by measurement (see core/tuner.h for the modes and the measurement protocol,
 * core/tuner_select.c for the selection rule, core/problem_key.c for the key).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/internal.h"
#include "core/op_validate.h"
#include "core/perfdb.h"
#include "core/tuner.h"
#include "core/verbose.h"

enum { MAX_CANDIDATES = 64, MAX_INPUTS = 8, MAX_OUTPUTS = 4 };

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------------------ */
/* Options                                                                   */
/* ------------------------------------------------------------------------ */

/* "123", "64K", "256M", "2G" (powers of 1024, case-insensitive, an optional
 * trailing B or iB). Returns 0 for anything else. */
static int parse_bytes(const char *v, size_t *out) {
  if (v[0] < '0' || v[0] > '9') return 0;
  errno = 0;
  char *end = NULL;
  unsigned long long n = strtoull(v, &end, 10);
  if (errno != 0) return 0;
  unsigned shift = 0;
  switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
  }
  if (shift && (*end == 'i' || *end == 'I') && (end[1] == 'b' || end[1] == 'B')) end += 2;
  else if (*end == 'b' || *end == 'B') end++;
  if (*end != '\0') return 0;
  if (shift && n > (~0ULL >> shift)) return 0;
  n <<= shift;
  if (n > (unsigned long long)SIZE_MAX) return 0;
  *out = (size_t)n;
  return 1;
}

void adnn__tune_options_from_env(adnn_tune_options *o) {
  adnn_tune_options_init(o);
  const char *v = adnn__env_get(ADNN_ENV_TUNE);
  if (v != NULL) {
    if (strcmp(v, "default") == 0) o->mode = ADNN_TUNE_DEFAULT;
    else if (strcmp(v, "off") == 0) o->mode = ADNN_TUNE_OFF;
    else if (strcmp(v, "exhaustive") == 0) o->mode = ADNN_TUNE_EXHAUSTIVE;
    else adnn__env_warn_ignored(ADNN_ENV_TUNE, v, NULL);
  }
  v = adnn__env_get(ADNN_ENV_TUNE_BUDGET_MS);
  if (v != NULL) {
    char *end = NULL;
    errno = 0;
    double ms = strtod(v, &end);
    if (errno == 0 && end != v && *end == '\0' && isfinite(ms) && ms >= 0) o->time_budget_ms = ms;
    else adnn__env_warn_ignored(ADNN_ENV_TUNE_BUDGET_MS, v, NULL);
  }
  v = adnn__env_get(ADNN_ENV_TUNE_WORKSPACE_LIMIT);
  if (v != NULL) {
    size_t bytes;
    if (parse_bytes(v, &bytes)) o->workspace_limit = bytes;
    else adnn__env_warn_ignored(ADNN_ENV_TUNE_WORKSPACE_LIMIT, v, NULL);
  }
  o->deterministic = adnn__env_flag(ADNN_ENV_DETERMINISTIC, o->deterministic);
}

/* ------------------------------------------------------------------------ */
/* Keys                                                                      */
/* ------------------------------------------------------------------------ */

static void sanitize(char *s) {
  for (; *s; s++)
    if (*s == '\t' || *s == '\n' || *s == '\r') *s = ' ';
}

/* problem \t backend \t device identity \t adnn version. 0 when it does not fit. */
static int key_for_problem(adnn_context *ctx, const char *problem, char *key, size_t size) {
  char ident[512] = "";
  const adnn_plugin *t = ctx->table;
  if (ADNN_PLUGIN_HAS(t, device_identity)) {
    t->device_identity(ctx->device, ident, sizeof ident);
    ident[sizeof ident - 1] = '\0';
  }
  if (ident[0] == '\0') snprintf(ident, sizeof ident, "%s device %d", t->name, ctx->device);
  sanitize(ident);
  int n = snprintf(key, size, "%s\t%s\t%s\t%s", problem, t->name, ident, ADNN_VERSION_STRING);
  return n > 0 && (size_t)n < size;
}

/* The key of an op's problem; 0 when none. */
static int build_key(adnn_context *ctx, const adnn_plugin_op *op, char *key, size_t size) {
  char problem[1024];
  if (adnn__problem_key(op, problem, sizeof problem) == 0) return 0;
  return key_for_problem(ctx, problem, key, size);
}

/* ------------------------------------------------------------------------ */
/* Measuring                                                                 */
/* ------------------------------------------------------------------------ */

/* Small seeded values in [-0.6875, 0.6875]: no overflow, no denormals. */
static void fill_host(void *buf, size_t bytes, adnn_dtype dtype, unsigned seed) {
  uint32_t s = 0x9e3779b9u ^ (seed * 0x85ebca6bu);
  if (dtype == ADNN_DTYPE_F32) {
    float *f = buf;
    for (size_t i = 0; i < bytes / sizeof *f; i++) {
      s = s * 1664525u + 1013904223u;
      f[i] = (float)((int)(s >> 27) - 11) / 16.0f;
    }
  } else if (dtype == ADNN_DTYPE_F64) {
    double *f = buf;
    for (size_t i = 0; i < bytes / sizeof *f; i++) {
      s = s * 1664525u + 1013904223u;
      f[i] = (double)((int)(s >> 27) - 11) / 16.0;
    }
  } else {
    memset(buf, 0, bytes);
  }
}

typedef struct scratch {
  int n_inputs, n_outputs;
  void *in[MAX_INPUTS];
  void *out[MAX_OUTPUTS];
} scratch;

static void scratch_free(adnn_context *ctx, scratch *s) {
  for (int i = 0; i < s->n_inputs; i++)
    if (s->in[i]) ctx->table->mem_free(ctx->pctx, s->in[i]);
  for (int i = 0; i < s->n_outputs; i++)
    if (s->out[i]) ctx->table->mem_free(ctx->pctx, s->out[i]);
  memset(s, 0, sizeof *s);
}

static int scratch_alloc(adnn_context *ctx, const adnn_plugin_op *op, const size_t *in_bytes,
                         const size_t *out_bytes, scratch *s) {
  const adnn_plugin *t = ctx->table;
  memset(s, 0, sizeof *s);
  if (op->n_inputs < 0 || op->n_inputs > MAX_INPUTS || op->n_outputs < 1 ||
      op->n_outputs > MAX_OUTPUTS)
    return 0;
  s->n_inputs = op->n_inputs;
  s->n_outputs = op->n_outputs;
  size_t host_bytes = 0;
  for (int i = 0; i < s->n_inputs; i++)
    if (in_bytes[i] > host_bytes) host_bytes = in_bytes[i];
  void *host = host_bytes ? malloc(host_bytes) : NULL;
  if (host_bytes && host == NULL) return 0;
  int okay = 1;
  for (int i = 0; okay && i < s->n_inputs; i++) {
    size_t b = in_bytes[i] ? in_bytes[i] : 1;
    if (t->mem_alloc(ctx->pctx, b, &s->in[i]) != ADNN_STATUS_SUCCESS) {
      s->in[i] = NULL;
      okay = 0;
      break;
    }
    if (in_bytes[i]) {
      fill_host(host, in_bytes[i], op->dtype, (unsigned)i + 1);
      if (t->mem_copy(ctx->pctx, s->in[i], host, in_bytes[i], ADNN_MEMCPY_HOST_TO_DEVICE) !=
          ADNN_STATUS_SUCCESS)
        okay = 0;
    }
  }
  free(host);
  /* Outputs are zeroed: an op that reads its outputs (a gradient accumulated
   * with beta != 0) then reads defined values. */
  for (int i = 0; okay && i < s->n_outputs; i++) {
    if (t->mem_alloc(ctx->pctx, out_bytes[i] ? out_bytes[i] : 1, &s->out[i]) !=
        ADNN_STATUS_SUCCESS) {
      s->out[i] = NULL;
      okay = 0;
    } else if (out_bytes[i] &&
               t->mem_set(ctx->pctx, s->out[i], 0, out_bytes[i]) != ADNN_STATUS_SUCCESS) {
      okay = 0;
    }
  }
  if (okay && t->synchronize(ctx->pctx) != ADNN_STATUS_SUCCESS) okay = 0;
  if (!okay) scratch_free(ctx, s);
  return okay;
}

static adnn_status run_once(adnn_context *ctx, adnn_plugin_plan *plan, const scratch *s,
                            double *ms) {
  double t0 = now_ms();
  adnn_status st = ctx->table->plan_execute(plan, (const void *const *)s->in, s->out);
  if (st == ADNN_STATUS_SUCCESS) st = ctx->table->synchronize(ctx->pctx);
  *ms = now_ms() - t0;
  return st;
}

static double median(double *v, int n) {
  for (int i = 1; i < n; i++) {
    double x = v[i];
    int j = i;
    for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
    v[j] = x;
  }
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct measure_state {
  double start, budget;
  int exhaustive;
  int exhausted; /* the budget ran out before every candidate was measured */
  int measured;
  double best;   /* best median so far, or -1 */
} measure_state;

/* Measures result r on the plan (see the protocol in core/tuner.h): selects
 * its candidate, then times runs. `left` is the number of candidates still
 * to measure, this one included. */
static void measure_runs(adnn_context *ctx, adnn_plugin_plan *plan, const scratch *s,
                         adnn__tune_result *r, int left, measure_state *m);

/* A weights_prepacked plan reads its weight input in the selected
 * candidate's packed form, whose size may exceed the descriptor's span: the
 * candidate's packed buffer is allocated and packed from the scratch
 * weights before the timed runs (so the packing, paid once by the user, is
 * not part of the measured time: doc/tuning.md), and freed after them. */
static adnn_status scratch_pack(adnn_context *ctx, adnn_plugin_plan *plan, const scratch *s,
                                int wi, void **packed) {
  const adnn_plugin *t = ctx->table;
  *packed = NULL;
  if (!ADNN_PLUGIN_HAS(t, plan_packed_weights_bytes) || !ADNN_PLUGIN_HAS(t, plan_pack_weights))
    return adnn__fail(ADNN_STATUS_NOT_SUPPORTED, "backend %s cannot prepack weights", t->name);
  size_t bytes = 0;
  adnn_status st = t->plan_packed_weights_bytes(plan, &bytes);
  if (st != ADNN_STATUS_SUCCESS) return st;
  st = t->mem_alloc(ctx->pctx, bytes ? bytes : 1, packed);
  if (st != ADNN_STATUS_SUCCESS) {
    *packed = NULL;
    return st;
  }
  st = t->plan_pack_weights(plan, s->in[wi], *packed);
  if (st == ADNN_STATUS_SUCCESS) st = t->synchronize(ctx->pctx);
  if (st != ADNN_STATUS_SUCCESS) {
    t->mem_free(ctx->pctx, *packed);
    *packed = NULL;
  }
  return st;
}

static void measure_one(adnn_context *ctx, adnn_plugin_plan *plan, const scratch *s,
                        adnn__tune_result *r, int left, measure_state *m, int wi) {
  const adnn_plugin *t = ctx->table;
  adnn_status st = t->plan_select(plan, r->id);
  if (st != ADNN_STATUS_SUCCESS) {
    r->pub.status = st;
    adnn__log(ADNN_LOG_DEBUG, "core", "tuner: %s: selecting it failed (%s): %s", r->name,
              adnn_status_name(st), adnn_last_error());
    return;
  }
  if (wi < 0) {
    measure_runs(ctx, plan, s, r, left, m);
    return;
  }
  scratch local = *s;
  void *packed = NULL;
  st = scratch_pack(ctx, plan, s, wi, &packed);
  if (st != ADNN_STATUS_SUCCESS) {
    r->pub.status = st;
    adnn__log(ADNN_LOG_DEBUG, "core", "tuner: %s: packing its weights failed (%s): %s", r->name,
              adnn_status_name(st), adnn_last_error());
    return;
  }
  local.in[wi] = packed;
  measure_runs(ctx, plan, &local, r, left, m);
  t->synchronize(ctx->pctx);
  t->mem_free(ctx->pctx, packed);
}

/* The timed runs of measure_one, on the selected candidate. */
static void measure_runs(adnn_context *ctx, adnn_plugin_plan *plan, const scratch *s,
                         adnn__tune_result *r, int left, measure_state *m) {
  adnn_status st;
  double warm;
  st = run_once(ctx, plan, s, &warm);
  if (st != ADNN_STATUS_SUCCESS) {
    r->pub.status = st;
    adnn__log(ADNN_LOG_DEBUG, "core", "tuner: %s: execution failed (%s): %s", r->name,
              adnn_status_name(st), adnn_last_error());
    return;
  }
  m->measured++;
  double now = now_ms();
  if (!m->exhaustive && now - m->start + warm > m->budget) {
    /* Another run would overrun the budget: the warm-up is all we have. */
    r->pub.time_ms = warm > 0 ? warm : 1e-6;
    r->runs = 1;
    m->exhausted = 1;
  } else {
    double share = m->exhaustive ? m->budget : (m->budget - (now - m->start)) / (left > 0 ? left : 1);
    double times[ADNN__TUNE_MAX_RUNS];
    int k = 0;
    double cstart = now, last = warm;
    while (k < ADNN__TUNE_MAX_RUNS) {
      /* Each test predicts the next run to take as long as the last one, so
       * that it does not overshoot the budget by a run. */
      now = now_ms();
      if (k >= ADNN__TUNE_MIN_RUNS &&
          (now - cstart + last > share ||
           (!m->exhaustive && now - cstart >= ADNN__TUNE_ENOUGH * m->budget)))
        break;
      if (k >= 1 && !m->exhaustive && now - m->start + last > m->budget) {
        m->exhausted = 1;
        break;
      }
      st = run_once(ctx, plan, s, &last);
      if (st != ADNN_STATUS_SUCCESS) break;
      times[k++] = last;
      /* Far slower than the best so far in its first timed run (the warm-up
       * may include one-time costs such as loading GPU code): it cannot win. */
      if (k == 1 && m->best >= 0 && last > ADNN__TUNE_PRUNE_FACTOR * m->best) break;
    }
    if (st != ADNN_STATUS_SUCCESS) {
      r->pub.status = st;
      m->measured--;
    } else {
      double med = median(times, k);
      /* A timer tick of 0 would read as "not measured"; keep it positive. */
      r->pub.time_ms = med > 0 ? med : 1e-6;
      r->runs = k;
    }
  }
  if (r->pub.status == ADNN_STATUS_SUCCESS && (m->best < 0 || r->pub.time_ms < m->best))
    m->best = r->pub.time_ms;
  adnn__log(ADNN_LOG_DEBUG, "core", "tuner: %s: %.4f ms (median of %d run%s), workspace %zu",
            r->name, r->pub.time_ms, r->runs, r->runs == 1 ? "" : "s", r->pub.workspace_bytes);
}

/* Measures the allowed candidates on the plan; returns 0 when the scratch
 * buffers could not be allocated (nothing measured). */
static int measure_all(adnn_context *ctx, adnn_plugin_plan *plan, const adnn_plugin_op *op,
                       const size_t *in_bytes, const size_t *out_bytes, adnn__tune_result *r,
                       size_t n, measure_state *m) {
  const adnn_tune_options *o = &ctx->tune;
  scratch s;
  if (!scratch_alloc(ctx, op, in_bytes, out_bytes, &s)) {
    adnn__log(ADNN_LOG_WARN, "core", "tuner: cannot allocate scratch buffers for measuring; "
              "using the backend's heuristic");
    return 0;
  }
  int progress_shown = 0; /* a run longer than a second says so (core/verbose.h) */
  /* Pass 0: the ordinary candidates; pass 1: the slow catch-alls, only when
   * exhaustive or when nothing else ran. */
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1 && !m->exhaustive && m->measured > 0) break;
    for (size_t i = 0; i < n; i++) {
      if (!adnn__tuner_allowed(&r[i], o) || (r[i].slow != 0) != pass) continue;
      if (!m->exhaustive && now_ms() - m->start >= m->budget) {
        m->exhausted = 1;
        break;
      }
      int left = 0;
      for (size_t j = i; j < n; j++)
        if (adnn__tuner_allowed(&r[j], o) && (r[j].slow != 0) == pass) left++;
      measure_one(ctx, plan, &s, &r[i], left, m, adnn__op_prepacked_input(op));
      adnn__verbose_tune_progress(ctx, op, m->start, m->measured, n, &progress_shown);
    }
  }
  adnn__verbose_tune_done(ctx, op, m->start, m->measured, n, progress_shown);
  scratch_free(ctx, &s);
  return 1;
}

/* ------------------------------------------------------------------------ */
/* Plan creation                                                             */
/* ------------------------------------------------------------------------ */

void adnn__tune_record_free(adnn__tune_record *rec) {
  if (rec == NULL) return;
  free(rec->results);
  rec->results = NULL;
  rec->count = 0;
}

/* Selects `id` (0: the plugin's own choice) as the plan's final algorithm. */
static adnn_status choose(adnn_context *ctx, adnn_plugin_plan *plan, int32_t id) {
  return ctx->table->plan_select(plan, id);
}

/* Appends to the choice reason which candidates determinism excluded
 * (`names`: the first few, `count` in all). */
static void reason_nondeterministic(adnn__tune_record *rec, const char *names, size_t count) {
  if (count == 0) return;
  size_t used = strlen(rec->reason);
  snprintf(rec->reason + used, sizeof rec->reason - used,
           "; %zu non-deterministic candidate%s excluded (deterministic mode): %s%s", count,
           count == 1 ? "" : "s", names, count > 3 ? ", ..." : "");
}

/* Chooses the algorithm of a created plan; see adnn__tuner_plan_create. */
static adnn_status tune(adnn_context *ctx, adnn_plugin_plan *plan, const adnn_plugin_op *op,
                        const size_t *input_bytes, const size_t *output_bytes,
                        const char *forced, int tunable, adnn__tune_record *rec) {
  const adnn_plugin *t = ctx->table;
  const adnn_tune_options *o = &ctx->tune;
  if (forced != NULL || !tunable) {
    snprintf(rec->reason, sizeof rec->reason, "%s",
             forced ? forced : "the backend's only algorithm for this op");
    return choose(ctx, plan, 0);
  }
  if (!ADNN_PLUGIN_HAS(t, plan_candidates)) {
    snprintf(rec->reason, sizeof rec->reason, "heuristic (the backend lists no candidates)");
    return choose(ctx, plan, 0);
  }
  adnn_plugin_candidate cands[MAX_CANDIDATES];
  memset(cands, 0, sizeof cands);
  int32_t count = 0;
  adnn_status st = t->plan_candidates(plan, cands, MAX_CANDIDATES, &count);
  if (st != ADNN_STATUS_SUCCESS || count <= 0) {
    if (st != ADNN_STATUS_SUCCESS)
      adnn__log(ADNN_LOG_DEBUG, "core", "tuner: listing candidates failed (%s): %s",
                adnn_status_name(st), adnn_last_error());
    snprintf(rec->reason, sizeof rec->reason, "heuristic (the backend lists no candidates)");
    return choose(ctx, plan, 0);
  }
  size_t n = count > MAX_CANDIDATES ? MAX_CANDIDATES : (size_t)count;
  if (n == 1) {
    snprintf(rec->reason, sizeof rec->reason, "the only candidate");
    return choose(ctx, plan, 0);
  }

  adnn__tune_result *r = calloc(n, sizeof *r);
  if (r == NULL) {
    snprintf(rec->reason, sizeof rec->reason, "heuristic (out of host memory for tuning)");
    return choose(ctx, plan, 0);
  }
  for (size_t i = 0; i < n; i++) {
    r[i].id = cands[i].id;
    memcpy(r[i].name, cands[i].name, sizeof r[i].name);
    r[i].name[sizeof r[i].name - 1] = '\0';
    r[i].pub.algorithm = r[i].name;
    r[i].pub.workspace_bytes = cands[i].workspace_bytes;
    r[i].pub.deterministic = cands[i].deterministic != 0;
    r[i].slow = cands[i].slow != 0;
    r[i].pub.time_ms = -1.0;
    r[i].pub.status = ADNN_STATUS_SUCCESS;
    /* Excluded by the constraints: NOT_SUPPORTED under these options. */
    if (r[i].pub.workspace_bytes > o->workspace_limit ||
        (o->deterministic && !r[i].pub.deterministic))
      r[i].pub.status = ADNN_STATUS_NOT_SUPPORTED;
  }
  /* Which candidates determinism alone excluded, for the end of the reason:
   * a user who set ADNN_DETERMINISTIC=1 sees what it cost. */
  char nondet[96] = "";
  size_t n_nondet = 0;
  for (size_t i = 0; i < n && o->deterministic; i++) {
    if (r[i].pub.deterministic) continue;
    size_t used = strlen(nondet);
    if (n_nondet++ < 3)
      snprintf(nondet + used, sizeof nondet - used, "%s%s", used ? ", " : "", r[i].name);
  }

  if (o->mode == ADNN_TUNE_OFF) {
    int idx = adnn__tuner_select(r, n, o);
    snprintf(rec->reason, sizeof rec->reason, "%s",
             idx < 0 ? "heuristic (tuning off; no candidate meets the workspace limit or "
                       "determinism requirement)"
                     : "heuristic (tuning off)");
    reason_nondeterministic(rec, nondet, n_nondet);
    const int32_t id = idx <= 0 ? 0 : r[idx].id;
    free(r);
    return choose(ctx, plan, id);
  }

  char key[2048];
  int have_key = build_key(ctx, op, key, sizeof key);
  if (have_key && o->mode == ADNN_TUNE_DEFAULT) {
    adnn__perfdb_entry e;
    const char *source = NULL;
    memset(&e, 0, sizeof e);
    if (adnn__perfdb_lookup(key, &e, &source)) {
      e.algorithm[sizeof e.algorithm - 1] = '\0';
      for (size_t i = 0; i < n; i++) {
        if (strcmp(r[i].name, e.algorithm) != 0 || !adnn__tuner_allowed(&r[i], o)) continue;
        st = choose(ctx, plan, r[i].id);
        if (st == ADNN_STATUS_SUCCESS) {
          snprintf(rec->reason, sizeof rec->reason, "performance database (%s)",
                   source ? source : "memory");
          reason_nondeterministic(rec, nondet, n_nondet);
          free(r);
          return st;
        }
        break;
      }
      adnn__log(ADNN_LOG_DEBUG, "core", "tuner: the performance database's %s is not usable "
                "here; measuring", e.algorithm);
    }
  }

  /* Two threads tuning on one context would time each other's work. */
  pthread_mutex_lock(&ctx->tune_lock);
  measure_state m = {now_ms(), o->time_budget_ms, o->mode == ADNN_TUNE_EXHAUSTIVE, 0, 0, -1.0};
  int measured = measure_all(ctx, plan, op, input_bytes, output_bytes, r, n, &m);
  double spent = now_ms() - m.start;
  pthread_mutex_unlock(&ctx->tune_lock);
  int idx = adnn__tuner_select(r, n, o);
  if (!measured)
    snprintf(rec->reason, sizeof rec->reason, "heuristic (no scratch memory for measuring)");
  else if (idx < 0)
    snprintf(rec->reason, sizeof rec->reason, "heuristic (measured %d candidate%s in %.0f ms; "
             "none meets the workspace limit or determinism requirement)", m.measured,
             m.measured == 1 ? "" : "s", spent);
  else if (!(r[idx].pub.time_ms >= 0))
    snprintf(rec->reason, sizeof rec->reason, "heuristic (measured %d candidate%s in %.0f ms; "
             "time budget of %.0f ms used up)", m.measured, m.measured == 1 ? "" : "s", spent,
             o->time_budget_ms);
  else
    snprintf(rec->reason, sizeof rec->reason, "measured %d candidate%s in %.0f ms%s", m.measured,
             m.measured == 1 ? "" : "s", spent, m.exhausted ? " (time budget used up)" : "");
  reason_nondeterministic(rec, nondet, n_nondet);
  if (have_key && idx >= 0 && r[idx].pub.time_ms >= 0) {
    adnn__perfdb_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.algorithm, sizeof e.algorithm, "%s", r[idx].name);
    e.time_ms = r[idx].pub.time_ms;
    e.workspace_bytes = r[idx].pub.workspace_bytes;
    adnn__perfdb_store(key, &e);
  }
  adnn__log(ADNN_LOG_DEBUG, "core", "tuner: chose %s: %s", idx >= 0 ? r[idx].name : "(heuristic)",
            rec->reason);
  st = choose(ctx, plan, idx >= 0 ? r[idx].id : 0);
  if (st != ADNN_STATUS_SUCCESS && idx >= 0) {
    /* The winner worked a moment ago; should it fail now (memory), fall back. */
    size_t used = strlen(rec->reason);
    snprintf(rec->reason + used, sizeof rec->reason - used, "; %s failed, heuristic instead",
             r[idx].name);
    st = choose(ctx, plan, 0);
  }
  rec->results = r;
  rec->count = n;
  return st;
}

adnn_status adnn__tuner_plan_create(adnn_context *ctx, const adnn_plugin_op *op,
                                    const size_t *input_bytes, const size_t *output_bytes,
                                    const char *forced, int tunable, adnn__tune_record *rec,
                                    adnn_plugin_plan **out) {
  memset(rec, 0, sizeof *rec);
  adnn_plugin_plan *plan = NULL;
  adnn_status st = ctx->table->plan_create(ctx->pctx, op, &plan);
  if (st != ADNN_STATUS_SUCCESS) return st;
  st = tune(ctx, plan, op, input_bytes, output_bytes, forced, tunable, rec);
  if (st != ADNN_STATUS_SUCCESS) {
    /* Keep the plugin's message: destroying the plan must not replace it. */
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", adnn_last_error());
    ctx->table->plan_destroy(plan);
    adnn__tune_record_free(rec);
    return adnn__fail(st, "%s", msg);
  }
  *out = plan;
  return ADNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* The plan-less GEMM                                                        */
/* ------------------------------------------------------------------------ */

/* The most implementations a plugin may list for one dtype. */
enum { GEMM_MAX_IMPLS = 8 };

static int gemm_choice_find(adnn_context *ctx, const adnn_plugin_gemm_args *g, int32_t *impl) {
  int found = 0;
  pthread_mutex_lock(&ctx->gemm_choice_lock);
  for (unsigned i = 0; i < ADNN__GEMM_CHOICES; i++) {
    const adnn__gemm_choice *c = &ctx->gemm_choices[i];
    if (c->used && c->dtype == g->dtype && c->ta == (int)g->ta && c->tb == (int)g->tb &&
        c->m == g->m && c->n == g->n && c->k == g->k) {
      *impl = c->impl;
      found = 1;
      break;
    }
  }
  pthread_mutex_unlock(&ctx->gemm_choice_lock);
  return found;
}

static void gemm_choice_add(adnn_context *ctx, const adnn_plugin_gemm_args *g, int32_t impl) {
  pthread_mutex_lock(&ctx->gemm_choice_lock);
  adnn__gemm_choice *c = &ctx->gemm_choices[ctx->gemm_choice_next++ % ADNN__GEMM_CHOICES];
  c->used = 1;
  c->dtype = g->dtype;
  c->ta = (int)g->ta;
  c->tb = (int)g->tb;
  c->m = g->m;
  c->n = g->n;
  c->k = g->k;
  c->impl = impl;
  pthread_mutex_unlock(&ctx->gemm_choice_lock);
}

/* One GEMM on the scratch operands with implementation `impl`, synchronized. */
static adnn_status gemm_run_once(adnn_context *ctx, const adnn_plugin_gemm_args *args,
                                 double *ms) {
  double t0 = now_ms();
  adnn_status st = ctx->table->gemm(ctx->pctx, args);
  if (st == ADNN_STATUS_SUCCESS) st = ctx->table->synchronize(ctx->pctx);
  *ms = now_ms() - t0;
  return st;
}

/* Measures each implementation on scratch A, B and C of the call's shape
 * (packed, seeded values; the caller's buffers are never touched) with the
 * same protocol as the plans' candidates: a warm-up, then timed runs until
 * the candidate's share of the budget is used (at least ADNN__TUNE_MIN_RUNS
 * while the budget lasts); a first timed run ADNN__TUNE_PRUNE_FACTOR times the
 * best so far stops there. Returns the fastest index, or 0 when nothing could
 * be measured; *best_ms is its median. */
static int32_t gemm_measure(adnn_context *ctx, const adnn_plugin_gemm_args *g, int32_t n_impls,
                            const char *const *names, double *best_ms) {
  const adnn_plugin *t = ctx->table;
  const adnn_tune_options *o = &ctx->tune;
  const size_t esize = adnn_dtype_size(g->dtype);
  const int64_t a_cols = g->ta ? g->m : g->k, b_cols = g->tb ? g->k : g->n;
  const size_t bytes[3] = {(size_t)(g->m * g->k) * esize, (size_t)(g->k * g->n) * esize,
                           (size_t)(g->m * g->n) * esize};
  void *buf[3] = {NULL, NULL, NULL};
  void *host = malloc(bytes[0] > bytes[1] ? bytes[0] : bytes[1]);
  int okay = host != NULL;
  for (int i = 0; okay && i < 3; i++) {
    if (t->mem_alloc(ctx->pctx, bytes[i], &buf[i]) != ADNN_STATUS_SUCCESS) {
      buf[i] = NULL;
      okay = 0;
    } else if (i < 2) {
      fill_host(host, bytes[i], g->dtype, (unsigned)i + 1);
      okay = t->mem_copy(ctx->pctx, buf[i], host, bytes[i], ADNN_MEMCPY_HOST_TO_DEVICE) ==
             ADNN_STATUS_SUCCESS;
    } else {
      okay = t->mem_set(ctx->pctx, buf[i], 0, bytes[i]) == ADNN_STATUS_SUCCESS;
    }
  }
  free(host);
  if (okay) okay = t->synchronize(ctx->pctx) == ADNN_STATUS_SUCCESS;
  int32_t best = 0;
  double best_t = -1;
  const double start = now_ms(), budget = o->time_budget_ms;
  const int exhaustive = o->mode == ADNN_TUNE_EXHAUSTIVE;
  for (int32_t i = 1; okay && i <= n_impls; i++) {
    if (!exhaustive && now_ms() - start >= budget) break;
    adnn_plugin_gemm_args s = *g;
    s.a = buf[0];
    s.lda = a_cols;
    s.b = buf[1];
    s.ldb = b_cols;
    s.c = buf[2];
    s.ldc = g->n;
    s.alpha = 1.0;
    s.beta = 0.0;
    s.batch = 1;
    s.stride_a = s.stride_b = s.stride_c = 0;
    s.impl = i;
    double warm, last, times[ADNN__TUNE_MAX_RUNS];
    adnn_status st = gemm_run_once(ctx, &s, &warm);
    if (st != ADNN_STATUS_SUCCESS) {
      adnn__log(ADNN_LOG_DEBUG, "core", "tuner: gemm %s: failed (%s): %s", names[i - 1],
                adnn_status_name(st), adnn_last_error());
      continue;
    }
    const int left = n_impls - i + 1;
    const double share = exhaustive ? budget : (budget - (now_ms() - start)) / left;
    const double cstart = now_ms();
    int k = 0;
    last = warm;
    while (k < ADNN__TUNE_MAX_RUNS) {
      double now = now_ms();
      if (k >= ADNN__TUNE_MIN_RUNS &&
          (now - cstart + last > share || (!exhaustive && now - cstart >= ADNN__TUNE_ENOUGH * budget)))
        break;
      if (k >= 1 && !exhaustive && now - start + last > budget) break;
      if (gemm_run_once(ctx, &s, &last) != ADNN_STATUS_SUCCESS) break;
      times[k++] = last;
      if (k == 1 && best_t >= 0 && last > ADNN__TUNE_PRUNE_FACTOR * best_t) break;
    }
    const double med = k > 0 ? median(times, k) : warm;
    adnn__log(ADNN_LOG_DEBUG, "core", "tuner: gemm %s: %.4f ms (median of %d run%s)",
              names[i - 1], med, k, k == 1 ? "" : "s");
    if (best_t < 0 || med < best_t) {
      best_t = med;
      best = i;
    }
  }
  for (int i = 0; i < 3; i++)
    if (buf[i]) t->mem_free(ctx->pctx, buf[i]);
  if (!okay)
    adnn__log(ADNN_LOG_WARN, "core", "tuner: cannot allocate scratch buffers for measuring a "
              "GEMM; using the backend's own choice");
  *best_ms = best_t;
  return best;
}

int32_t adnn__tune_gemm(adnn_context *ctx, const adnn_plugin_gemm_args *g) {
  const adnn_plugin *t = ctx->table;
  if (ctx->tune.mode == ADNN_TUNE_OFF || !ADNN_PLUGIN_HAS(t, gemm_impl_name)) return 0;
  /* Small products cost less than the lookup would save: the plugin's own
   * choice runs them. */
  if ((double)g->m * (double)g->n * (double)g->k < ADNN__TUNE_GEMM_MIN_MNK) return 0;
  /* A dtype with one implementation (the CPU's F64) has nothing to choose:
   * no lock, no entry in the context's memory. */
  if (t->gemm_impl_name(ctx->pctx, g->dtype, 2) == NULL) return 0;
  int32_t impl;
  if (gemm_choice_find(ctx, g, &impl)) return impl;

  const char *names[GEMM_MAX_IMPLS];
  int32_t n_impls = 0;
  while (n_impls < GEMM_MAX_IMPLS &&
         (names[n_impls] = t->gemm_impl_name(ctx->pctx, g->dtype, n_impls + 1)) != NULL)
    n_impls++;
  if (n_impls < 2) {
    gemm_choice_add(ctx, g, 0);
    return 0;
  }
  /* Measuring allocates scratch A, B and C of the call's size beside the
   * caller's own: that extra memory is held to the context's workspace limit
   * like a plan candidate's workspace, and a larger product keeps the
   * plugin's own choice (remembered, so the check is not repeated). */
  const double scratch_bytes = ((double)g->m * (double)g->k + (double)g->k * (double)g->n +
                                (double)g->m * (double)g->n) *
                               (double)adnn_dtype_size(g->dtype);
  if (scratch_bytes > (double)ctx->tune.workspace_limit) {
    adnn__log(ADNN_LOG_DEBUG, "core", "tuner: gemm m=%lld n=%lld k=%lld: measuring needs %.0f "
              "bytes of scratch, above the workspace limit (%zu); the backend's own choice",
              (long long)g->m, (long long)g->n, (long long)g->k, scratch_bytes,
              ctx->tune.workspace_limit);
    gemm_choice_add(ctx, g, 0);
    return 0;
  }

  /* Two threads tuning on one context would time each other's work. */
  pthread_mutex_lock(&ctx->tune_lock);
  if (gemm_choice_find(ctx, g, &impl)) { /* another thread measured it meanwhile */
    pthread_mutex_unlock(&ctx->tune_lock);
    return impl;
  }
  char problem[256], key[1024];
  snprintf(problem, sizeof problem, "gemm %s ta=%d tb=%d m=%lld n=%lld k=%lld",
           adnn_dtype_name(g->dtype), g->ta == ADNN_TRANS, g->tb == ADNN_TRANS, (long long)g->m,
           (long long)g->n, (long long)g->k);
  const int have_key = key_for_problem(ctx, problem, key, sizeof key);
  impl = 0;
  if (have_key && ctx->tune.mode == ADNN_TUNE_DEFAULT) {
    adnn__perfdb_entry e;
    memset(&e, 0, sizeof e);
    if (adnn__perfdb_lookup(key, &e, NULL)) {
      e.algorithm[sizeof e.algorithm - 1] = '\0';
      for (int32_t i = 0; i < n_impls; i++)
        if (strcmp(names[i], e.algorithm) == 0) impl = i + 1;
      if (impl == 0)
        adnn__log(ADNN_LOG_DEBUG, "core", "tuner: %s: the performance database's %s is not an "
                  "implementation of this backend; measuring", problem, e.algorithm);
    }
  }
  if (impl == 0) {
    double ms = -1;
    impl = gemm_measure(ctx, g, n_impls, names, &ms);
    if (impl > 0 && have_key) {
      adnn__perfdb_entry e;
      memset(&e, 0, sizeof e);
      snprintf(e.algorithm, sizeof e.algorithm, "%s", names[impl - 1]);
      e.time_ms = ms;
      adnn__perfdb_store(key, &e);
    }
    adnn__log(ADNN_LOG_DEBUG, "core", "tuner: %s: chose %s", problem,
              impl > 0 ? names[impl - 1] : "the backend's own choice");
  }
  gemm_choice_add(ctx, g, impl);
  pthread_mutex_unlock(&ctx->tune_lock);
  return impl;
}
