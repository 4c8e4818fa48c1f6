/*
 * The plugin loader: finds plugin files on the search path, loads and probes
 * each once per process, and keeps one record per file for the lifetime of the
 * process (records are never freed, so the public adnn_backend_info pointers
 * stay valid).
 */
#ifndef ADNN_CORE_LOADER_H
#define ADNN_CORE_LOADER_H

#include "core/internal.h"

typedef struct adnn__plugin_record {
  adnn_backend_info info; /* the public view; its strings point into this record */
  void *handle;           /* dlopen handle, NULL when loading failed */
  const adnn_plugin *table;

  /* init() runs once, on the first context created on this plugin. */
  pthread_mutex_t init_lock;
  int init_done;
  adnn_status init_status;
  char init_error[1024];
} adnn__plugin_record;

/* Loads every plugin once (thread-safe) and returns the records. */
void adnn__loader_records(adnn__plugin_record ***records, size_t *count);

/* Runs the plugin's init once; returns its status (the message is set again for
 * every caller). */
adnn_status adnn__plugin_ensure_init(adnn__plugin_record *rec);

/* The core's host table given to plugins. */
extern const adnn_plugin_host adnn__host;

/* The backend named by ADNN_BACKEND, which replaces requests for "auto"; NULL
 * when it is unset, empty or itself "auto". */
const char *adnn__backend_env_override(void);

#endif
