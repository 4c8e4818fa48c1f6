/*
 * The tuner's selection rule, a pure function of the measured results (see
 * core/tuner.h). Kept apart from tuner.c so that t/tune-select.c can compile
 * it directly and check it with injected timings.
 */
#include "config.h"

#include "core/tuner.h"

int adnn__tuner_allowed(const adnn__tune_result *r, const adnn_tune_options *o) {
  if (r->pub.status != ADNN_STATUS_SUCCESS) return 0;
  if (r->pub.workspace_bytes > o->workspace_limit) return 0;
  if (o->deterministic && !r->pub.deterministic) return 0;
  return 1;
}

int adnn__tuner_select(const adnn__tune_result *r, size_t n, const adnn_tune_options *o) {
  int first = -1, best = -1;
  for (size_t i = 0; i < n; i++) {
    if (!adnn__tuner_allowed(&r[i], o)) continue;
    if (first < 0) {
      first = (int)i;
      /* The heuristic was never measured: the budget ran out before anything
       * could be compared with it, so it keeps its place. */
      if (!(r[i].pub.time_ms >= 0)) return first;
    }
    if (!(r[i].pub.time_ms >= 0)) continue; /* not measured (NaN too) */
    if (best < 0 || r[i].pub.time_ms < r[best].pub.time_ms) best = (int)i;
  }
  return best >= 0 ? best : first;
}
