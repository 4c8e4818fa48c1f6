/* Comparing a result with the oracle (or with another backend) under the
 * tolerances of doc/numerics.md. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* NaN where NaN, the same infinity where infinite, finite where finite. */
static int same_class(double got, double want) {
  if (isnan(want)) return isnan(got);
  if (isinf(want)) return got == want;
  return isfinite(got);
}

static void note_bad(harness_comparison *c, int64_t i, double got, double want) {
  c->first_bad = i;
  c->bad_got = got;
  c->bad_want = want;
}

harness_comparison harness_compare(const double *got, const double *want,
                                   const harness_buffer *layout, int check_gaps) {
  harness_comparison c;
  memset(&c, 0, sizeof c);
  c.first_bad = -1;
  double num = 0.0, den = 0.0, maxref = 0.0, maxerr = 0.0;
  for (int64_t i = 0; i < layout->span; i++) {
    if (!layout->member[i]) {
      if (check_gaps && !isnan(got[i])) {
        if (c.first_bad < 0) note_bad(&c, i, got[i], NAN);
        c.gap_bad++;
      }
      continue;
    }
    if (!isfinite(want[i]) || !isfinite(got[i])) {
      if (!same_class(got[i], want[i])) {
        if (c.nonfinite_bad == 0) note_bad(&c, i, got[i], want[i]);
        c.nonfinite_bad++;
      }
      continue;
    }
    double e = fabs(got[i] - want[i]);
    num += e * e;
    den += want[i] * want[i];
    if (fabs(want[i]) > maxref) maxref = fabs(want[i]);
    if (e > maxerr) {
      maxerr = e;
      if (c.nonfinite_bad == 0 && c.gap_bad == 0) note_bad(&c, i, got[i], want[i]);
    }
  }
  c.rel_l2 = den > 0 ? sqrt(num / den) : sqrt(num);
  c.max_abs = maxerr / (maxref > 1.0 ? maxref : 1.0);
  return c;
}

int harness_within(const harness_comparison *c, harness_tolerance t) {
  return c->nonfinite_bad == 0 && c->gap_bad == 0 && c->rel_l2 <= t.rel_l2 &&
         c->max_abs <= t.max_abs;
}

void harness_describe(const harness_comparison *c, harness_tolerance t, char *buf, size_t len) {
  int n = snprintf(buf, len,
                   "rel_l2 %.3g (limit %.3g), max_abs %.3g (limit %.3g), non-finite mismatches "
                   "%lld, gap elements written %lld",
                   c->rel_l2, t.rel_l2, c->max_abs, t.max_abs, (long long)c->nonfinite_bad,
                   (long long)c->gap_bad);
  if (c->first_bad >= 0 && n > 0 && (size_t)n < len)
    snprintf(buf + n, len - (size_t)n, "; e.g. at offset %lld: got %.9g, expected %.9g",
             (long long)c->first_bad, c->bad_got, c->bad_want);
}

harness_tolerance harness_dot_tolerance(adnn_dtype dtype, int64_t n) {
  const int f64 = dtype == ADNN_DTYPE_F64;
  harness_tolerance t = {f64 ? 1e-12 : 1e-5, f64 ? 1e-11 : 1e-4};
  return n > 576 ? harness_scale_tolerance(t, sqrt((double)n / 576.0)) : t;
}

harness_tolerance harness_scale_tolerance(harness_tolerance t, double k) {
  t.rel_l2 *= k;
  t.max_abs *= k;
  return t;
}

double harness_unit_roundoff(adnn_dtype dtype) {
  switch (dtype) {
    case ADNN_DTYPE_F16: return ldexp(1.0, -11);
    case ADNN_DTYPE_BF16: return ldexp(1.0, -8);
    case ADNN_DTYPE_F64: return ldexp(1.0, -53);
    default: return ldexp(1.0, -24);
  }
}

harness_tolerance harness_lowp_tolerance(adnn_dtype dtype, harness_tolerance own,
                                         harness_tolerance f32, double roundings) {
  if (dtype != ADNN_DTYPE_F16 && dtype != ADNN_DTYPE_BF16) return own;
  const double u = roundings * harness_unit_roundoff(dtype);
  return (harness_tolerance){f32.rel_l2 + u, f32.max_abs + u};
}
