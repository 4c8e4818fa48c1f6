/*
 * Status names and strings (generated from ADNN_STATUS_MAP) and the thread-local
 * last-error record.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

/* The message buffer is thread-local so that concurrent failures on different
 * threads never mix their messages. */
static _Thread_local char last_error_message[1024];
static _Thread_local adnn_status last_error_status = ADNN_STATUS_SUCCESS;

const char *adnn_status_name(adnn_status status) {
  switch (status) {
#define ADNN_STATUS_NAME_(name, value, text) \
  case ADNN_STATUS_##name:                   \
    return #name;
    ADNN_STATUS_MAP(ADNN_STATUS_NAME_)
#undef ADNN_STATUS_NAME_
    default:
      return "UNKNOWN_STATUS";
  }
}

const char *adnn_status_string(adnn_status status) {
  switch (status) {
#define ADNN_STATUS_TEXT_(name, value, text) \
  case ADNN_STATUS_##name:                   \
    return text;
    ADNN_STATUS_MAP(ADNN_STATUS_TEXT_)
#undef ADNN_STATUS_TEXT_
    default:
      return "unknown status code";
  }
}

const char *adnn_last_error(void) { return last_error_message; }

adnn_status adnn_last_status(void) { return last_error_status; }

adnn_status adnn__vfail(adnn_status status, const char *fmt, va_list ap) {
  /* Format into a scratch buffer first: a message may quote the previous one
   * (a plugin's error wrapped by the core), and vsnprintf must not read the
   * buffer it is writing. */
  char scratch[sizeof last_error_message];
  vsnprintf(scratch, sizeof scratch, fmt, ap);
  memcpy(last_error_message, scratch, sizeof scratch);
  last_error_status = status;
  adnn__log(ADNN_LOG_DEBUG, "core", "%s: %s", adnn_status_name(status), scratch);
  return status;
}

adnn_status adnn__fail(adnn_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  adnn__vfail(status, fmt, ap);
  va_end(ap);
  return status;
}
