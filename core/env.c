/*
 * Reading the environment variables of the table in core/env.h. Each
 * variable warns about an ignored value at most once per process: several
 * code paths read the same variable (every plan creation reads
 * ADNN_CONV2D_ALGO), and a warning repeated on each of them drowns the
 * program's own output without telling the user anything new.
 */
#include "config.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/env.h"
#include "core/internal.h"

typedef struct env_row {
  const char *name, *accepted;
} env_row;

static const env_row rows[ADNN_ENV_COUNT_] = {
#define ADNN_ENV_ROW_(ID, NAME, READER, ACCEPTED, DEFAULT, RETIRED, DOC) \
  [ADNN_ENV_##ID] = {NAME, ACCEPTED},
    ADNN_ENV_LIST(ADNN_ENV_ROW_)
#undef ADNN_ENV_ROW_
};

static atomic_int warned[ADNN_ENV_COUNT_];

const char *adnn__env_get(adnn__env_id id) {
  if ((unsigned)id >= ADNN_ENV_COUNT_) return NULL;
  const char *v = getenv(rows[id].name);
  return v != NULL && *v != '\0' ? v : NULL;
}

const char *adnn__env_name(adnn__env_id id) {
  return (unsigned)id < ADNN_ENV_COUNT_ ? rows[id].name : "";
}

void adnn__env_warn_ignored(adnn__env_id id, const char *value, const char *why) {
  if ((unsigned)id >= ADNN_ENV_COUNT_) return;
  if (atomic_exchange(&warned[id], 1) != 0) return;
  adnn__log(ADNN_LOG_WARN, "core", "ignoring %s=\"%s\"%s%s: accepted: %s", rows[id].name,
            value ? value : "", why ? ": " : "", why ? why : "", rows[id].accepted);
}

int adnn__env_flag(adnn__env_id id, int fallback) {
  const char *v = adnn__env_get(id);
  if (v == NULL) return 0;
  if (strcmp(v, "1") == 0) return 1;
  if (strcmp(v, "0") == 0) return 0;
  adnn__env_warn_ignored(id, v, NULL);
  return fallback;
}
