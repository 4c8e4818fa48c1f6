/* Status and error API: names and strings from ADNN_STATUS_MAP, categories,
 * adnn_last_error()/adnn_last_status() and their thread-locality. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <adnn.h>

#include "t/tap.h"

typedef struct status_row {
  adnn_status status;
  int value;
  const char *name;
  const char *text;
} status_row;

static const status_row rows[] = {
#define ROW_(name, value, text) {ADNN_STATUS_##name, value, #name, text},
    ADNN_STATUS_MAP(ROW_)
#undef ROW_
};
#define NROWS (sizeof rows / sizeof rows[0])

/* A failure on another thread with its own message. */
static char other_thread_message[1024];
static adnn_status other_thread_status;
static adnn_status other_thread_before;

static void *fail_on_other_thread(void *arg) {
  (void)arg;
  other_thread_before = adnn_last_status();
  adnn_log_set_level((adnn_log_level)77); /* fails: BAD_PARAM naming the level */
  other_thread_status = adnn_last_status();
  snprintf(other_thread_message, sizeof other_thread_message, "%s", adnn_last_error());
  return NULL;
}

int main(void) {
  is_int(ADNN_STATUS_SUCCESS, 0, "ADNN_STATUS_SUCCESS is 0");
  ok(NROWS >= 12, "ADNN_STATUS_MAP has %zu entries", (size_t)NROWS);

  /* Names and strings: distinct, and the name is the enumerator's. */
  for (size_t i = 0; i < NROWS; i++) {
    is_str(adnn_status_name(rows[i].status), rows[i].name, "adnn_status_name(%d) is %s",
           rows[i].value, rows[i].name);
    is_str(adnn_status_string(rows[i].status), rows[i].text, "adnn_status_string(%s)",
           rows[i].name);
    is_int(ADNN_STATUS_CATEGORY(rows[i].status), rows[i].value / 1000,
           "ADNN_STATUS_CATEGORY(%s) is %d", rows[i].name, rows[i].value / 1000);
  }
  int distinct = 1;
  for (size_t i = 0; i < NROWS; i++)
    for (size_t j = i + 1; j < NROWS; j++) {
      if (rows[i].value == rows[j].value ||
          strcmp(adnn_status_name(rows[i].status), adnn_status_name(rows[j].status)) == 0 ||
          strcmp(adnn_status_string(rows[i].status), adnn_status_string(rows[j].status)) == 0) {
        diag("  %s and %s collide", rows[i].name, rows[j].name);
        distinct = 0;
      }
    }
  ok(distinct, "all status values, names and strings are distinct");

  /* Unknown values. */
  int unknowns[] = {-1, 1, 999, 1999, 2001, 7000, 0x7ffffffe};
  for (size_t i = 0; i < sizeof unknowns / sizeof unknowns[0]; i++) {
    is_str(adnn_status_name((adnn_status)unknowns[i]), "UNKNOWN_STATUS",
           "adnn_status_name(%d) is UNKNOWN_STATUS", unknowns[i]);
    const char *s = adnn_status_string((adnn_status)unknowns[i]);
    ok(s != NULL && *s != '\0', "adnn_status_string(%d) is a non-empty string", unknowns[i]);
  }

  /* Category values as documented. */
  is_int(ADNN_STATUS_CATEGORY(ADNN_STATUS_SUCCESS), 0, "category of SUCCESS");
  is_int(ADNN_STATUS_CATEGORY(ADNN_STATUS_BAD_PARAM_DOUBLE_FREE), 1, "category of DOUBLE_FREE");
  is_int(ADNN_STATUS_CATEGORY(ADNN_STATUS_NOT_SUPPORTED), 2, "category of NOT_SUPPORTED");
  is_int(ADNN_STATUS_CATEGORY(ADNN_STATUS_BACKEND_INCOMPATIBLE), 3, "category of INCOMPATIBLE");
  is_int(ADNN_STATUS_CATEGORY(ADNN_STATUS_DEVICE_OUT_OF_MEMORY), 4, "category of DEVICE_OOM");
  is_int(ADNN_STATUS_CATEGORY(ADNN_STATUS_EXECUTION_FAILED), 5, "category of EXECUTION_FAILED");
  is_int(ADNN_STATUS_CATEGORY(ADNN_STATUS_INTERNAL_ERROR), 6, "category of INTERNAL_ERROR");

  /* Last error: empty before the first failure. */
  ok(adnn_last_error() != NULL, "adnn_last_error() is not NULL");
  is_str(adnn_last_error(), "", "adnn_last_error() is \"\" before any failure");
  is_status(adnn_last_status(), ADNN_STATUS_SUCCESS, "adnn_last_status() is SUCCESS at first");

  /* A failing call sets both. */
  adnn_tensor_desc d;
  adnn_status st = adnn_tensor_desc_init(&d, ADNN_DTYPE_F32, 9, (const int64_t[9]){1});
  is_status(st, ADNN_STATUS_BAD_PARAM, "rank 9 fails with BAD_PARAM");
  is_status(adnn_last_status(), ADNN_STATUS_BAD_PARAM, "adnn_last_status() is BAD_PARAM");
  contains(adnn_last_error(), "adnn_tensor_desc_init", "message names the function");
  contains(adnn_last_error(), "rank", "message names the argument");
  char saved[1024];
  snprintf(saved, sizeof saved, "%s", adnn_last_error());

  /* A success leaves it unchanged. */
  int64_t dims[2] = {2, 3};
  is_status(adnn_tensor_desc_init(&d, ADNN_DTYPE_F32, 2, dims), ADNN_STATUS_SUCCESS,
            "a valid descriptor succeeds");
  is_str(adnn_last_error(), saved, "a successful call leaves adnn_last_error() unchanged");
  is_status(adnn_last_status(), ADNN_STATUS_BAD_PARAM, "and adnn_last_status() unchanged");
  is_status(adnn_log_set_level(adnn_log_get_level()), ADNN_STATUS_SUCCESS,
            "another successful call");
  is_str(adnn_last_error(), saved, "adnn_last_error() still unchanged");

  /* A different failure replaces it. */
  is_status(adnn_backend_count(NULL), ADNN_STATUS_BAD_PARAM_NULL, "adnn_backend_count(NULL)");
  is_status(adnn_last_status(), ADNN_STATUS_BAD_PARAM_NULL, "adnn_last_status() updated");
  contains(adnn_last_error(), "count", "message names count");
  snprintf(saved, sizeof saved, "%s", adnn_last_error());

  /* Thread-local: a failure on another thread changes neither. */
  pthread_t th;
  ok(pthread_create(&th, NULL, fail_on_other_thread, NULL) == 0, "started a thread");
  pthread_join(th, NULL);
  is_status(other_thread_before, ADNN_STATUS_SUCCESS,
            "a new thread starts with adnn_last_status() SUCCESS");
  is_status(other_thread_status, ADNN_STATUS_BAD_PARAM, "the other thread saw its own failure");
  contains(other_thread_message, "adnn_log_set_level", "the other thread's message is its own");
  contains(other_thread_message, "77", "and quotes the bad value");
  is_str(adnn_last_error(), saved, "this thread's message is unchanged by the other thread");
  is_status(adnn_last_status(), ADNN_STATUS_BAD_PARAM_NULL,
            "this thread's status is unchanged by the other thread");
  return tap_done();
}
