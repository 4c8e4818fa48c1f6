/* Errors: every call returns a status; adnn_last_error() says what went wrong. */
#include <stdio.h>

#include <adnn.h>

static int warnings;

static void count_log(adnn_log_level level, const char *source, const char *message,
                      void *user_data) {
  (void)source;
  (void)message;
  if (level <= ADNN_LOG_WARN) (*(int *)user_data)++;
}

int main(void) {
  adnn_tensor_desc t;
  int64_t dims[2] = {3, -4}; /* a negative dimension: invalid */

  adnn_status st = adnn_tensor_desc_init(&t, ADNN_DTYPE_F32, 2, dims);
  if (st == ADNN_STATUS_SUCCESS) return 1;
  printf("status %d (%s, category %d): %s\n", (int)st, adnn_status_name(st),
         ADNN_STATUS_CATEGORY(st), adnn_status_string(st));
  printf("message: %s\n", adnn_last_error());
  if (adnn_last_status() != st) return 1;

  /* Route the library's log to a callback instead of stderr. */
  adnn_log_set_callback(count_log, &warnings);
  adnn_log_set_level(ADNN_LOG_WARN);
  printf("log level %d, %d warnings so far\n", (int)adnn_log_get_level(), warnings);
  adnn_log_set_callback(NULL, NULL); /* back to stderr */
  return st == ADNN_STATUS_BAD_PARAM ? 0 : 1;
}
