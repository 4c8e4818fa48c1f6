/*
 * A small TAP (Test Anything Protocol) helper shared by the test programs.
 *
 * Every check prints "ok N - description" or "not ok N - description" followed
 * by diagnostics that show both values. tap_done() prints the plan and returns
 * the exit status. Header-only so that each test stays a single C file. The
 * seeded random numbers of the tests (tap_rng) are in t/rng.h.
 */
#ifndef ADNN_TEST_TAP_H
#define ADNN_TEST_TAP_H

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "t/rng.h"

static int tap_count_ = 0;
static int tap_failed_ = 0;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 0)))
#endif
static inline int tap_vok_(int cond, const char *fmt, va_list ap) {
  ++tap_count_;
  if (!cond) ++tap_failed_;
  printf("%s %d - ", cond ? "ok" : "not ok", tap_count_);
  vprintf(fmt, ap);
  printf("\n");
  fflush(stdout);
  return cond;
}

/** ok(cond, "description %d", ...): one check. Returns cond. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline int ok(int cond, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = tap_vok_(cond, fmt, ap);
  va_end(ap);
  return r;
}

/** A diagnostic line ("# ..."), shown by the TAP driver in the log. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static inline void diag(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("# ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
}

/** Skips the whole program: "1..0 # SKIP reason". Call before any check. */
static inline int tap_skip_all(const char *reason) {
  printf("1..0 # SKIP %s\n", reason);
  fflush(stdout);
  return 0;
}

/** Records a skipped check ("ok N # SKIP reason"). */
static inline void tap_skip(const char *reason) {
  ++tap_count_;
  printf("ok %d # SKIP %s\n", tap_count_, reason);
  fflush(stdout);
}

/** Prints the plan; returns the exit status for main(). */
static inline int tap_done(void) {
  printf("1..%d\n", tap_count_);
  fflush(stdout);
  return tap_failed_ ? 1 : 0;
}

/** Bails out (the driver marks the program as failed). */
static inline void tap_bail(const char *why) {
  printf("Bail out! %s\n", why);
  fflush(stdout);
  exit(1);
}

#define TAP_STR_(x) #x
#define TAP_XSTR_(x) TAP_STR_(x)
#define TAP_WHERE_ __FILE__ ":" TAP_XSTR_(__LINE__)

/** Checks an adnn_status against the expected one; on mismatch prints both names
 *  and adnn_last_error(). */
#define is_status(got, expected, ...)                                                       \
  do {                                                                                      \
    adnn_status got_ = (got), exp_ = (expected);                                            \
    if (!ok(got_ == exp_, __VA_ARGS__))                                                     \
      diag("  at %s: got %s (%d), expected %s (%d); last error: %s", TAP_WHERE_,           \
           adnn_status_name(got_), (int)got_, adnn_status_name(exp_), (int)exp_,           \
           adnn_last_error());                                                              \
  } while (0)

/** Checks two integers for equality and prints both on failure. */
#define is_int(got, expected, ...)                                                          \
  do {                                                                                      \
    long long got_ = (long long)(got), exp_ = (long long)(expected);                        \
    if (!ok(got_ == exp_, __VA_ARGS__))                                                     \
      diag("  at %s: got %lld, expected %lld", TAP_WHERE_, got_, exp_);                     \
  } while (0)

/** Checks two strings for equality (NULL-safe) and prints both on failure. */
#define is_str(got, expected, ...)                                                          \
  do {                                                                                      \
    const char *got_ = (got), *exp_ = (expected);                                           \
    int same_ = (got_ && exp_) ? strcmp(got_, exp_) == 0 : got_ == exp_;                    \
    if (!ok(same_, __VA_ARGS__))                                                            \
      diag("  at %s: got \"%s\", expected \"%s\"", TAP_WHERE_, got_ ? got_ : "(null)",     \
           exp_ ? exp_ : "(null)");                                                         \
  } while (0)

/** Checks that `haystack` contains `needle` and prints both on failure. */
#define contains(haystack, needle, ...)                                                     \
  do {                                                                                      \
    const char *h_ = (haystack), *n_ = (needle);                                            \
    if (!ok(h_ && n_ && strstr(h_, n_) != NULL, __VA_ARGS__))                               \
      diag("  at %s: \"%s\" does not contain \"%s\"", TAP_WHERE_, h_ ? h_ : "(null)",      \
           n_ ? n_ : "(null)");                                                             \
  } while (0)

#endif /* ADNN_TEST_TAP_H */
