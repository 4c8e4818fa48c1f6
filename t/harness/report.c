/* Formatting helpers over a harness_report: the op files check through these
 * and never print themselves, so that one program (t/conformance) owns the
 * TAP numbering. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Declares `text` and prints the caller's format and arguments into it. */
#define FORMAT_ARGUMENTS(text, fmt)          \
  char text[1024];                           \
  do {                                       \
    va_list ap_;                             \
    va_start(ap_, fmt);                      \
    vsnprintf(text, sizeof text, fmt, ap_);  \
    va_end(ap_);                             \
  } while (0)

int harness_ok(const harness_report *r, int cond, const char *fmt, ...) {
  FORMAT_ARGUMENTS(text, fmt);
  return r->ok(r->self, cond, text);
}

void harness_diag(const harness_report *r, const char *fmt, ...) {
  FORMAT_ARGUMENTS(text, fmt);
  r->diag(r->self, text);
}

void harness_skip(const harness_report *r, const char *fmt, ...) {
  FORMAT_ARGUMENTS(text, fmt);
  r->skip(r->self, text);
}

int harness_is_status(const harness_report *r, adnn_status got, adnn_status want,
                      const char *fmt, ...) {
  FORMAT_ARGUMENTS(text, fmt);
  if (r->ok(r->self, got == want, text)) return 1;
  harness_diag(r, "  got %s (%d), expected %s (%d); last error: %s", adnn_status_name(got),
               (int)got, adnn_status_name(want), (int)want, adnn_last_error());
  return 0;
}

int harness_contains(const harness_report *r, const char *haystack, const char *needle,
                     const char *fmt, ...) {
  FORMAT_ARGUMENTS(text, fmt);
  const int found = haystack && needle && strstr(haystack, needle) != NULL;
  if (r->ok(r->self, found, text)) return 1;
  harness_diag(r, "  \"%s\" does not contain \"%s\"", haystack ? haystack : "(null)",
               needle ? needle : "(null)");
  return 0;
}

int harness_close(double got, double want, double tol) {
  if (isnan(want)) return isnan(got);
  if (isinf(want)) return got == want;
  return fabs(got - want) <= tol * (1.0 + fabs(want));
}
