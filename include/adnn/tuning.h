/*
 * adnn algorithm tuning and the performance database.
 *
 * Included by <adnn.h>; do not include it directly.
 *
 * Plan creation chooses an algorithm (today: conv2d; other ops have one
 * algorithm per backend). How it chooses is the context's tuning mode:
 *   ADNN_TUNE_OFF         the backend's built-in heuristic, no measuring;
 *   ADNN_TUNE_DEFAULT     the performance database if it knows the problem,
 *                         else measure the candidates once (within a time
 *                         budget and a workspace limit) and store the winner;
 *   ADNN_TUNE_EXHAUSTIVE  measure every candidate, overwrite the stored entry.
 * A descriptor that forces an algorithm (e.g. adnn_conv2d_desc.algorithm) is
 * never tuned. Measuring uses scratch buffers of the plan's context, never the
 * caller's data. In deterministic mode only algorithms that give bit-identical
 * results run to run are candidates.
 *
 * The performance database is a text file per user ($ADNN_CACHE_DIR, else
 * $XDG_CACHE_HOME/adnn, else ~/.cache/adnn) plus an optional read-only system
 * file installed with adnn; user entries override system ones. Entries are
 * keyed by the canonical problem, the backend, the device identity and the
 * versions that change results, so entries for other machines or versions are
 * ignored (and kept). Problems with the database (unreadable, corrupt lines,
 * unwritable directory) are warnings, never errors: tuning then stays in memory.
 *
 * Environment: ADNN_TUNE (off, default, exhaustive), ADNN_TUNE_BUDGET_MS,
 * ADNN_TUNE_WORKSPACE_LIMIT (bytes, or with a K/M/G suffix),
 * ADNN_DETERMINISTIC=1, ADNN_CACHE_DIR.
 */
#ifndef ADNN_TUNING_H
#define ADNN_TUNING_H

#ifndef ADNN_H
#error "include <adnn.h>, not <adnn/tuning.h>"
#endif

#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/** How plan creation chooses an algorithm (see the comment at the top). */
typedef enum adnn_tune_mode {
  ADNN_TUNE_DEFAULT = 0,
  ADNN_TUNE_OFF = 1,
  ADNN_TUNE_EXHAUSTIVE = 2
} adnn_tune_mode;

/** Tuning settings of a context. Starts with struct_size; initialize with
 *  adnn_tune_options_init(), which sets the defaults documented per field. */
typedef struct adnn_tune_options {
  size_t struct_size;
  adnn_tune_mode mode;     /**< ADNN_TUNE_DEFAULT */
  double time_budget_ms;   /**< per problem, for all candidates together; 1000 */
  size_t workspace_limit;  /**< largest workspace a candidate may use; 256 MiB */
  int32_t deterministic;   /**< 0: any algorithm; 1: run-to-run reproducible only */
} adnn_tune_options;

/** Zeroes *o and sets struct_size and the defaults: ADNN_TUNE_DEFAULT, a 1000 ms
 *  budget, a 256 MiB workspace limit, any algorithm. */
static inline void adnn_tune_options_init(adnn_tune_options *o) {
  memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  o->mode = ADNN_TUNE_DEFAULT;
  o->time_budget_ms = 1000.0;
  o->workspace_limit = (size_t)256 << 20;
}

/** Replaces the context's tuning settings (new contexts start from the
 *  environment variables above, else the defaults). Returns
 *  ADNN_STATUS_BAD_PARAM_NULL, ADNN_STATUS_BAD_PARAM (struct_size too small,
 *  unknown mode, negative or non-finite budget). */
ADNN_API adnn_status adnn_context_set_tune_options(adnn_context *ctx,
                                                   const adnn_tune_options *options);

/** Copies the context's tuning settings into *options (whose struct_size the
 *  caller sets). Returns ADNN_STATUS_BAD_PARAM_NULL or ADNN_STATUS_BAD_PARAM. */
ADNN_API adnn_status adnn_context_get_tune_options(const adnn_context *ctx,
                                                   adnn_tune_options *options);

/** One algorithm considered for a plan, as cudnnFind* reports them. */
typedef struct adnn_plan_candidate {
  const char *algorithm;  /**< e.g. "winograd_f2x3", "cudnn:IMPLICIT_PRECOMP_GEMM" */
  size_t workspace_bytes;
  int32_t deterministic;  /**< 1 if run-to-run reproducible */
  /** SUCCESS if it can run (measured when time_ms >= 0; otherwise the time
   *  budget ran out first, or it is a slow catch-all such as the reference
   *  kernel, measured only in exhaustive mode); NOT_SUPPORTED when excluded by
   *  the workspace limit or the determinism requirement, or refused by the
   *  backend; other statuses: why creating or running it failed. */
  adnn_status status;
  double time_ms;         /**< median measured time; negative when not measured */
} adnn_plan_candidate;

/** The number of candidates recorded for a plan (0 when the plan was not
 *  tuned by measurement: a forced algorithm, tuning off, a performance
 *  database hit, an op with one algorithm). They are in the backend's order of
 *  preference, its heuristic first. Returns ADNN_STATUS_BAD_PARAM_NULL. */
ADNN_API adnn_status adnn_plan_get_candidate_count(const adnn_plan *plan, size_t *count);

/** Candidate `index` of a plan; valid as long as the plan. Returns
 *  ADNN_STATUS_BAD_PARAM_NULL or ADNN_STATUS_BAD_PARAM (index out of range). */
ADNN_API adnn_status adnn_plan_get_candidate(const adnn_plan *plan, size_t index,
                                             const adnn_plan_candidate **candidate);

/** Why the plan runs its algorithm: "forced by the descriptor", "heuristic
 *  (tuning off)", "performance database (user)", "measured 4 candidates in
 *  212 ms"... "" for NULL. Valid as long as the plan. */
ADNN_API const char *adnn_plan_get_choice_reason(const adnn_plan *plan);

/** The names of the three functions above in adnn 0.1, kept as aliases. */
ADNN_API adnn_status adnn_plan_candidate_count(const adnn_plan *plan, size_t *count);
ADNN_API adnn_status adnn_plan_candidate_get(const adnn_plan *plan, size_t index,
                                             const adnn_plan_candidate **candidate);
ADNN_API const char *adnn_plan_choice_reason(const adnn_plan *plan);

/** The performance database files: the user file (NULL when no cache directory
 *  could be determined) and the system file (NULL when none is installed);
 *  entry counts of each (entries for other devices or versions included).
 *  Any out-pointer may be NULL. Always ADNN_STATUS_SUCCESS. */
ADNN_API adnn_status adnn_perfdb_info(const char **user_path, size_t *user_entries,
                                      const char **system_path, size_t *system_entries);

/** Writes every entry adnn knows (system, user and this process's) to `path`
 *  in the database format, atomically. Returns ADNN_STATUS_BAD_PARAM_NULL,
 *  ADNN_STATUS_EXECUTION_FAILED (the file cannot be written; message says why). */
ADNN_API adnn_status adnn_perfdb_export(const char *path);

/** Merges the entries of `path` into the user database (and this process).
 *  Corrupt lines are skipped with a warning. Returns
 *  ADNN_STATUS_BAD_PARAM_NULL, ADNN_STATUS_EXECUTION_FAILED (cannot read `path`,
 *  or cannot write the user database), and stores *imported when not NULL. */
ADNN_API adnn_status adnn_perfdb_import(const char *path, size_t *imported);

#ifdef __cplusplus
}
#endif

#endif /* ADNN_TUNING_H */
