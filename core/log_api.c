/*
 * The public logging API: the level and the application's callback (the sink
 * itself is in log.c).
 */
#include "config.h"

#include "core/internal.h"

adnn_status adnn_log_set_level(adnn_log_level level) {
  if ((int)level < ADNN_LOG_OFF || (int)level > ADNN_LOG_DEBUG)
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "adnn_log_set_level: level %d is not an adnn_log_level (0..4)", (int)level);
  adnn__log_store_level((int)level);
  return ADNN_STATUS_SUCCESS;
}

adnn_log_level adnn_log_get_level(void) { return (adnn_log_level)adnn__log_level(); }

adnn_status adnn_log_set_callback(adnn_log_callback callback, void *user_data) {
  adnn__log_store_sink(callback, user_data);
  return ADNN_STATUS_SUCCESS;
}
