/*
 * The log sink: a level (from ADNN_LOG, else WARN) and a destination (stderr,
 * or a callback installed by the application). Messages are formatted into a
 * stack buffer and handed to the sink in one call, so lines from different
 * threads never interleave. The public setters are in log_api.c; this file is
 * the bottom of the core (error.c logs through it) and reports no errors.
 */
#include "config.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/internal.h"

static atomic_int log_level = -1; /* -1: not yet read from the environment */
static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static adnn_log_callback sink_callback = NULL;
static void *sink_user_data = NULL;

static const char *const level_names[] = {"off", "error", "warn", "info", "debug"};

/* The level ADNN_LOG asks for; *unknown is set for a value that is not a
 * level name (the caller warns once the level is stored: warning from here
 * would recurse into an unset level). */
static int level_from_env(const char **unknown) {
  const char *v = adnn__env_get(ADNN_ENV_LOG);
  *unknown = NULL;
  if (v == NULL) return ADNN_LOG_WARN;
  for (int i = 0; i <= ADNN_LOG_DEBUG; i++)
    if (strcasecmp(v, level_names[i]) == 0) return i;
  if (strcasecmp(v, "warning") == 0) return ADNN_LOG_WARN;
  if (strcmp(v, "0") == 0 || strcasecmp(v, "none") == 0) return ADNN_LOG_OFF;
  /* An unknown value must not silence real warnings. */
  *unknown = v;
  return ADNN_LOG_WARN;
}

static int current_level(void) {
  int level = atomic_load(&log_level);
  if (level < 0) {
    const char *unknown;
    int from_env = level_from_env(&unknown);
    int expected = -1;
    int stored = atomic_compare_exchange_strong(&log_level, &expected, from_env);
    level = atomic_load(&log_level);
    if (stored && unknown != NULL) adnn__env_warn_ignored(ADNN_ENV_LOG, unknown, NULL);
  }
  return level;
}

int adnn__log_enabled(adnn_log_level level) {
  /* level comes from plugins too (host->log): never index level_names with
   * a value outside 1..4. */
  return (int)level > ADNN_LOG_OFF && (int)level <= current_level();
}

void adnn__log_store_level(int level) { atomic_store(&log_level, level); }

int adnn__log_level(void) { return current_level(); }

void adnn__log_store_sink(adnn_log_callback callback, void *user_data) {
  pthread_mutex_lock(&sink_lock);
  sink_callback = callback;
  sink_user_data = user_data;
  pthread_mutex_unlock(&sink_lock);
}

void adnn__vlog(adnn_log_level level, const char *source, const char *fmt, va_list ap) {
  if (!adnn__log_enabled(level)) return;
  char message[2048];
  vsnprintf(message, sizeof message, fmt, ap);
  size_t len = strlen(message);
  while (len > 0 && message[len - 1] == '\n') message[--len] = '\0';

  pthread_mutex_lock(&sink_lock);
  adnn_log_callback cb = sink_callback;
  void *user = sink_user_data;
  pthread_mutex_unlock(&sink_lock);
  if (cb != NULL) {
    cb(level, source ? source : "core", message, user);
  } else {
    fprintf(stderr, "adnn[%s] %s: %s\n", level_names[level], source ? source : "core", message);
  }
}

void adnn__log(adnn_log_level level, const char *source, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  adnn__vlog(level, source, fmt, ap);
  va_end(ap);
}
