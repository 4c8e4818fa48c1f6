/*
 * The tuner's selection rule (core/tuner_select.c) with injected timings:
 * compiled into this program directly, not reached through the public ABI, so
 * every outcome is deterministic.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/tuner.h"
#include "t/tap.h"

#define MS_NONE (-1.0)

/* A result: name, workspace, deterministic, status, time (MS_NONE: not measured). */
static adnn__tune_result R(const char *name, size_t ws, int det, adnn_status st, double ms) {
  adnn__tune_result r;
  memset(&r, 0, sizeof r);
  snprintf(r.name, sizeof r.name, "%s", name);
  r.pub.algorithm = r.name;
  r.pub.workspace_bytes = ws;
  r.pub.deterministic = det;
  r.pub.status = st;
  r.pub.time_ms = ms;
  r.runs = ms >= 0 ? 5 : 0;
  return r;
}

static adnn_tune_options opts(size_t limit, int det) {
  adnn_tune_options o;
  adnn_tune_options_init(&o);
  o.workspace_limit = limit;
  o.deterministic = det;
  return o;
}

#define OK ADNN_STATUS_SUCCESS
#define NS ADNN_STATUS_NOT_SUPPORTED

int main(void) {
  adnn_tune_options o = opts((size_t)256 << 20, 0);

  {
    adnn__tune_result r[] = {R("a", 0, 1, OK, 2.0), R("b", 0, 1, OK, 1.5), R("c", 0, 1, OK, 3.0)};
    ok(adnn__tuner_select(r, 3, &o) == 1, "the fastest candidate wins");
  }
  {
    adnn__tune_result r[] = {R("a", 0, 1, OK, 2.0), R("b", 0, 1, OK, 2.0), R("c", 0, 1, OK, 2.0)};
    ok(adnn__tuner_select(r, 3, &o) == 0, "a three-way tie goes to the first (the heuristic)");
    r[0].pub.time_ms = 2.5;
    ok(adnn__tuner_select(r, 3, &o) == 1, "a tie between later candidates goes to the earlier one");
  }
  {
    adnn__tune_result r[] = {R("a", 0, 1, OK, 2.0), R("b", 0, 1, NS, 0.1),
                             R("c", 0, 1, ADNN_STATUS_OUT_OF_MEMORY, 0.2), R("d", 0, 1, OK, 1.9)};
    ok(adnn__tuner_select(r, 4, &o) == 3, "candidates whose plan creation failed never win, "
       "whatever time they carry");
  }
  {
    adnn_tune_options lim = opts(1000, 0);
    adnn__tune_result r[] = {R("a", 0, 1, OK, 2.0), R("b", 1001, 1, OK, 0.5),
                             R("c", 1000, 1, OK, 1.0)};
    ok(adnn__tuner_select(r, 3, &lim) == 2, "over the workspace limit never wins; at the limit may");
    adnn_tune_options zero = opts(0, 0);
    ok(adnn__tuner_select(r, 3, &zero) == 0, "limit 0: only the zero-workspace candidate");
    adnn__tune_result all_ws[] = {R("a", 10, 1, OK, 2.0), R("b", 20, 1, OK, 0.5)};
    ok(adnn__tuner_select(all_ws, 2, &zero) == -1,
       "nothing within the limit: -1 (the plugin's own heuristic)");
    adnn__tune_result heur_big[] = {R("a", 10, 1, OK, 2.0), R("b", 0, 1, OK, 3.0),
                                    R("c", 0, 1, OK, 2.5)};
    ok(adnn__tuner_select(heur_big, 3, &zero) == 2,
       "a heuristic over the limit is passed over for the fastest that fits");
  }
  {
    adnn_tune_options det = opts((size_t)256 << 20, 1);
    adnn__tune_result r[] = {R("a", 0, 0, OK, 1.0), R("b", 0, 1, OK, 3.0), R("c", 0, 0, OK, 0.5),
                             R("d", 0, 1, OK, 2.0)};
    ok(adnn__tuner_select(r, 4, &det) == 3, "deterministic mode excludes non-deterministic ones");
    ok(adnn__tuner_select(r, 4, &o) == 2, "without it the fastest wins");
    adnn__tune_result none[] = {R("a", 0, 0, OK, 1.0), R("b", 0, 0, OK, 0.5)};
    ok(adnn__tuner_select(none, 2, &det) == -1, "deterministic mode with no deterministic "
       "candidate: -1");
  }
  {
    adnn__tune_result r[] = {R("a", 0, 1, OK, MS_NONE), R("b", 0, 1, OK, MS_NONE),
                             R("c", 0, 1, OK, MS_NONE)};
    ok(adnn__tuner_select(r, 3, &o) == 0, "budget exhausted before anything ran: the heuristic");
    adnn__tune_result r2[] = {R("a", 0, 1, OK, MS_NONE), R("b", 0, 1, OK, 0.1)};
    ok(adnn__tuner_select(r2, 2, &o) == 0, "the heuristic unmeasured: it keeps its place even "
       "against a measured one");
    adnn__tune_result r3[] = {R("a", 0, 1, OK, 2.0), R("b", 0, 1, OK, 1.0),
                              R("c", 0, 1, OK, MS_NONE)};
    ok(adnn__tuner_select(r3, 3, &o) == 1, "budget exhausted later: the fastest measured wins, "
       "unmeasured ones do not");
    adnn__tune_result r4[] = {R("a", 10, 1, OK, MS_NONE), R("b", 0, 1, OK, MS_NONE)};
    adnn_tune_options zero = opts(0, 0);
    ok(adnn__tuner_select(r4, 2, &zero) == 1, "budget exhausted: the first candidate that meets "
       "the constraints");
  }
  {
    adnn__tune_result r[] = {R("a", 0, 1, OK, NAN), R("b", 0, 1, OK, 1.0)};
    r[0].pub.time_ms = NAN;
    ok(adnn__tuner_select(r, 2, &o) == 0, "a NaN time counts as not measured");
    ok(adnn__tuner_select(r, 0, &o) == -1, "no candidates: -1");
  }
  {
    adnn__tune_result r[] = {R("a", 0, 1, OK, 1.0)};
    ok(adnn__tuner_allowed(&r[0], &o), "allowed: a measured, fitting candidate");
    r[0].pub.status = NS;
    ok(!adnn__tuner_allowed(&r[0], &o), "not allowed: a failed candidate");
  }
  return tap_done();
}
