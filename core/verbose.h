/*
 * ADNN_VERBOSE (doc/verbose.md): 1 prints one CSV line per plan creation on
 * stderr, 2 also one per plan execution and per GEMM call, with its time.
 * The level is read from the environment once per process and cached; when
 * it is 0 the hooks cost one relaxed atomic load and a compare, and no clock
 * is read.
 */
#ifndef ADNN_CORE_VERBOSE_H
#define ADNN_CORE_VERBOSE_H

#include <stdatomic.h>
#include <stddef.h>

#include "core/internal.h"

extern atomic_int adnn__verbose_cached; /* -1 until read from ADNN_VERBOSE */
int adnn__verbose_read(void);

static inline int adnn__verbose_level(void) {
  int v = atomic_load_explicit(&adnn__verbose_cached, memory_order_relaxed);
  return v >= 0 ? v : adnn__verbose_read();
}

/* A monotonic clock in milliseconds. */
double adnn__verbose_now_ms(void);

/* One "create" line: the plan of `op` on ctx, its algorithm and the tuner's
 * reason, and the time plan creation took (tuning included). */
void adnn__verbose_plan_created(const adnn_context *ctx, const adnn_plugin_op *op,
                                const char *algorithm, const char *reason, double ms);

/* Runs the plan, synchronizes the context (so that the time covers the work,
 * not only its submission) and prints one "exec" line. */
adnn_status adnn__verbose_execute(adnn_context *ctx, const adnn_plugin_op *op,
                                  const char *algorithm, adnn_plugin_plan *plan,
                                  const void *const *inputs, void *const *outputs);

/* The same for a (batched) GEMM. */
adnn_status adnn__verbose_gemm(adnn_context *ctx, const adnn_plugin_gemm_args *args);

/* Tuning progress, from the tuner's measuring loop: once the run has taken
 * more than a second, one line naming the op and the candidates measured so
 * far (*shown becomes 1); tune_done prints the final line if one was shown.
 * The lines go to the log at INFO level and, when ADNN_VERBOSE >= 1, to
 * stderr as "tune" lines. */
void adnn__verbose_tune_progress(const adnn_context *ctx, const adnn_plugin_op *op, double start_ms, int measured,
                                 size_t candidates, int *shown);
void adnn__verbose_tune_done(const adnn_context *ctx, const adnn_plugin_op *op, double start_ms, int measured,
                             size_t candidates, int shown);

#endif
