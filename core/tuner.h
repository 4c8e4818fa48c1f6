/*
 * The tuner: chooses the algorithm of a plan at creation (see
 * include/adnn/tuning.h for the user's view).
 *
 * The plugin plan is created once (plan_create describes the problem); the
 * tuner then chooses its algorithm with plan_select. For a tunable op
 * (ADNN_OP_TUNABLE in the manifest) whose plan lists more than one candidate
 * (plan_candidates) and whose descriptor forces no algorithm:
 *   OFF         the first candidate that fits the workspace limit and the
 *               determinism requirement (normally the plugin's heuristic);
 *   DEFAULT     the performance database if it knows the problem and its
 *               answer is still a usable candidate, else measure and store;
 *   EXHAUSTIVE  measure every candidate and store (overwriting).
 *
 * Measurement protocol (tuner.c): candidates are measured in the plugin's
 * order on scratch buffers of the plan's context (inputs filled once with small
 * seeded values copied from the host; never the caller's data). Per candidate:
 * plan_select(plan, id) on the one plan, one warm-up run (execute +
 * synchronize, timed), then timed runs of execute + synchronize: at least
 * ADNN__TUNE_MIN_RUNS unless the problem's budget would be overrun (the next
 * run is predicted to take as long as the last), at most ADNN__TUNE_MAX_RUNS,
 * the candidate's share of the remaining budget, or (default mode)
 * ADNN__TUNE_ENOUGH of the budget; the median is its time. A candidate whose
 * warm-up already reaches the budget is not run again (its time is the
 * warm-up), nor one whose first timed run is ADNN__TUNE_PRUNE_FACTOR times
 * slower than the best median so far (its time is that run). When the budget is used up the remaining
 * candidates are not measured (status SUCCESS, time_ms < 0). Candidates the
 * plugin marks slow (a reference implementation) are measured only in
 * exhaustive mode or when nothing else could be.
 *
 * Selection (tuner_select.c) is a pure function of the results so that the
 * test t/tune-select.c can check it with injected timings.
 */
#ifndef ADNN_CORE_TUNER_H
#define ADNN_CORE_TUNER_H

#include <stddef.h>

#include <adnn.h>
#include <adnn/plugin.h>

enum { ADNN__TUNE_MIN_RUNS = 3, ADNN__TUNE_MAX_RUNS = 15 };
#define ADNN__TUNE_PRUNE_FACTOR 3.0
/* In default mode a candidate stops after ADNN__TUNE_MIN_RUNS once it has used
 * this fraction of the budget: enough for a median, and tuning a new problem
 * then usually costs far less than the whole budget. */
#define ADNN__TUNE_ENOUGH 0.1

/* The result for one candidate. `pub` is what adnn_plan_candidate_get returns;
 * its algorithm points at `name`. */
typedef struct adnn__tune_result {
  adnn_plan_candidate pub; /* status: SUCCESS = usable (measured when time_ms >= 0);
                              otherwise why it was excluded */
  int32_t id;    /* the plugin's id for plan_select */
  char name[64];
  int32_t slow; /* the plugin's adnn_plugin_candidate.slow */
  int32_t runs; /* timed runs behind time_ms (1: a single, pruned run) */
} adnn__tune_result;

/* The pure selection rule. Among results with status SUCCESS, workspace within
 * o->workspace_limit and (when o->deterministic) deterministic:
 *  - if the first of them (the plugin's heuristic) has no time (the budget ran
 *    out before it was measured), it wins: there is nothing to compare with;
 *  - otherwise the smallest time_ms >= 0 wins; ties go to the earlier result
 *    (the plugin's order of preference);
 *  - with no measured result, the first of them wins.
 * Returns its index, or -1 when none qualifies (the caller then lets the
 * plugin choose, which is its heuristic). */
int adnn__tuner_select(const adnn__tune_result *r, size_t n, const adnn_tune_options *o);

/* Whether result r may be chosen under o (status, workspace, determinism). */
int adnn__tuner_allowed(const adnn__tune_result *r, const adnn_tune_options *o);

/* The canonical problem string of an op (problem_key.c): a stable one-line
 * text without tabs, e.g.
 *   conv2d f32 x=1x64x56x56:200704,3136,56,1 w=64x64x3x3:576,9,3,1
 *   y=1x64x56x56:200704,3136,56,1 s=1,1 p=1,1,1,1 d=1,1 g=1 bias=64:1 act=relu
 *   ws=268435456 det=0
 * (one line; key format 2: the op's tuning options op->workspace_limit and
 * op->deterministic end every key), printed from the op's normalized problem
 * and its options. Returns the length,
 * or 0 when the op has no key format (only tunable ops need one) or the
 * buffer is too small. */
size_t adnn__problem_key(const adnn_plugin_op *op, char *buf, size_t size);

/* What the tuner records for a plan. */
typedef struct adnn__tune_record {
  adnn__tune_result *results; /* malloc'ed, count entries; NULL when none */
  size_t count;
  char reason[192];
} adnn__tune_record;

struct adnn_context;

/* Creates the plugin plan for a validated op and selects its algorithm as
 * above. input_bytes/output_bytes are the byte spans of the op's tensors
 * (op->n_inputs inputs, op->n_outputs outputs), for the scratch buffers.
 * `forced` is NULL, or why the algorithm is fixed ("forced by the
 * descriptor"); `tunable` says whether the op may be measured at all. Fills
 * *rec (free it with adnn__tune_record_free). Returns the status of
 * plan_create or of the final plan_select (the plan is destroyed then);
 * tuning failures are never errors. */
adnn_status adnn__tuner_plan_create(struct adnn_context *ctx, const adnn_plugin_op *op,
                                    const size_t *input_bytes, const size_t *output_bytes,
                                    const char *forced, int tunable, adnn__tune_record *rec,
                                    adnn_plugin_plan **out);

void adnn__tune_record_free(adnn__tune_record *rec);

/* GEMMs with m * n * k below this run the plugin's own choice untuned. */
#define ADNN__TUNE_GEMM_MIN_MNK 262144.0

/* The plan-less GEMM's implementation for a validated call (core/gemm.c):
 * 0 (the plugin's own choice) when tuning is off, the plugin lists fewer than
 * two implementations for the dtype (its gemm_impl_name slot), or the product
 * is small; otherwise the index of the implementation the context chose for
 * this shape before, else the performance database's, else the one measured
 * now (stored in the database). Thread-safe; never fails (a measuring failure
 * falls back to 0 with a log line). doc/tuning.md, "The plan-less GEMM". */
int32_t adnn__tune_gemm(struct adnn_context *ctx, const adnn_plugin_gemm_args *g);

/* Fills o from the environment (ADNN_TUNE, ADNN_TUNE_BUDGET_MS,
 * ADNN_TUNE_WORKSPACE_LIMIT, ADNN_DETERMINISTIC); invalid values are ignored
 * with a warning. */
void adnn__tune_options_from_env(adnn_tune_options *o);

#endif
