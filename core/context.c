/*
 * Contexts: parsing the backend request, choosing the plugin, creating and
 * destroying the plugin's per-context state, and the context's settings
 * (flags, tuning options).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/loader.h"
#include "core/tuner.h"

/* Splits "name" or "name:N" into its parts. Returns 0 for a malformed request. */
static int parse_backend(const char *spec, char *name, size_t name_size, int *device) {
  const char *colon = strchr(spec, ':');
  size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
  if (len == 0 || len >= name_size) return 0;
  for (size_t i = 0; i < len; i++) {
    char c = spec[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return 0;
  }
  memcpy(name, spec, len);
  name[len] = '\0';
  *device = 0;
  if (colon) {
    const char *digits = colon + 1;
    if (*digits < '0' || *digits > '9') return 0;
    errno = 0;
    char *end = NULL;
    long v = strtol(digits, &end, 10);
    if (errno != 0 || *end != '\0' || v < 0 || v > 1000000) return 0;
    *device = (int)v;
  }
  return 1;
}

static adnn_status status_for_state(adnn_backend_state s) {
  return s == ADNN_BACKEND_INCOMPATIBLE ? ADNN_STATUS_BACKEND_INCOMPATIBLE
                                        : ADNN_STATUS_BACKEND_UNAVAILABLE;
}

/* Finds the plugin for an explicit request; fails loudly, never falls back. */
static adnn_status find_explicit(const char *spec, const char *origin, adnn__plugin_record **out,
                                 int *device) {
  char name[64];
  if (!parse_backend(spec, name, sizeof name, device))
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "adnn_context_create: backend \"%s\"%s is malformed; use \"auto\", "
                      "\"cpu\", \"cuda\" or \"cuda:N\"", spec, origin);
  adnn__plugin_record **recs;
  size_t n;
  adnn__loader_records(&recs, &n);
  adnn__plugin_record *found = NULL;
  for (size_t i = 0; i < n; i++) {
    if (strcmp(recs[i]->info.name, name) != 0) continue;
    if (found == NULL || (recs[i]->info.state == ADNN_BACKEND_READY &&
                          found->info.state != ADNN_BACKEND_READY))
      found = recs[i];
  }
  if (found == NULL) {
    const char *path, *source;
    adnn_backend_search_path(&path, &source);
    char known[512] = "";
    for (size_t i = 0; i < n; i++) {
      size_t used = strlen(known);
      snprintf(known + used, sizeof known - used, "%s%s", used ? ", " : "", recs[i]->info.name);
    }
    return adnn__fail(ADNN_STATUS_BACKEND_UNAVAILABLE,
                      "adnn_context_create: backend \"%s\"%s was requested, but no plugin named "
                      "%s was found in %s (%s); plugins found: %s", spec, origin, name, path,
                      source, *known ? known : "none");
  }
  if (found->info.state != ADNN_BACKEND_READY)
    return adnn__fail(status_for_state(found->info.state),
                      "adnn_context_create: backend \"%s\"%s was requested, but it is %s: %s",
                      spec, origin,
                      found->info.state == ADNN_BACKEND_INCOMPATIBLE ? "incompatible"
                      : found->info.state == ADNN_BACKEND_LOAD_FAILED ? "not loadable"
                                                                      : "unavailable",
                      found->info.reason);
  if ((size_t)*device >= found->info.device_count)
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "adnn_context_create: backend \"%s\"%s: device %d does not exist (%s has "
                      "%zu usable device%s)", spec, origin, *device, name,
                      found->info.device_count, found->info.device_count == 1 ? "" : "s");
  *out = found;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_context_create(const char *backend, adnn_context **out) {
  if (out == NULL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "adnn_context_create: out is NULL");
  adnn__plugin_record *rec = NULL;
  int device = 0;
  adnn_status st;
  /* "" used to mean auto by accident; an empty string is more often a
   * variable that was never filled than a choice, so it is refused. */
  if (backend != NULL && *backend == '\0')
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "adnn_context_create: backend \"\" is empty; use "
                      "NULL or \"auto\" for the best ready backend");
  int is_auto = backend == NULL || strcmp(backend, "auto") == 0;
  const char *env = is_auto ? adnn__backend_env_override() : NULL;
  if (!is_auto) {
    st = find_explicit(backend, "", &rec, &device);
  } else if (env != NULL) {
    st = find_explicit(env, " (from ADNN_BACKEND)", &rec, &device);
  } else {
    const char *name, *reason;
    st = adnn_backend_auto_choice(&name, &reason);
    if (st != ADNN_STATUS_SUCCESS)
      return adnn__fail(st, "adnn_context_create: no backend is usable: %s", reason);
    st = find_explicit(name, " (chosen by auto)", &rec, &device);
  }
  if (st != ADNN_STATUS_SUCCESS) return st;

  st = adnn__plugin_ensure_init(rec);
  if (st != ADNN_STATUS_SUCCESS) return st;

  adnn_context *ctx = calloc(1, sizeof *ctx);
  if (ctx == NULL)
    return adnn__fail(ADNN_STATUS_OUT_OF_MEMORY, "adnn_context_create: out of host memory");
  ctx->plugin = rec;
  ctx->table = rec->table;
  ctx->device = device;
  if (adnn__env_flag(ADNN_ENV_ALLOW_TF32, 0)) ctx->flags |= ADNN_CONTEXT_ALLOW_TF32;
  adnn__tune_options_from_env(&ctx->tune);
  pthread_rwlock_init(&ctx->alloc_lock, NULL);
  /* Recursive: the tuner logs while it holds the lock, and a log callback
   * that itself calls adnn_gemm or creates a plan on this context then
   * measures on the same thread instead of deadlocking. */
  pthread_mutexattr_t recursive;
  pthread_mutexattr_init(&recursive);
  pthread_mutexattr_settype(&recursive, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&ctx->tune_lock, &recursive);
  pthread_mutexattr_destroy(&recursive);
  pthread_mutex_init(&ctx->gemm_choice_lock, NULL);
  st = rec->table->context_create(device, &ctx->pctx);
  if (st != ADNN_STATUS_SUCCESS) {
    /* Keep the plugin's message, but say which call it belongs to. */
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", adnn_last_error());
    pthread_rwlock_destroy(&ctx->alloc_lock);
    pthread_mutex_destroy(&ctx->tune_lock);
    pthread_mutex_destroy(&ctx->gemm_choice_lock);
    free(ctx);
    return adnn__fail(st, "adnn_context_create: backend %s device %d: %s", rec->info.name, device,
                      msg);
  }
  if (!adnn__handle_add_context(ctx)) {
    rec->table->context_destroy(ctx->pctx);
    pthread_rwlock_destroy(&ctx->alloc_lock);
    pthread_mutex_destroy(&ctx->tune_lock);
    pthread_mutex_destroy(&ctx->gemm_choice_lock);
    free(ctx);
    return adnn__fail(ADNN_STATUS_OUT_OF_MEMORY,
                      "adnn_context_create: out of host memory for the handle registry");
  }
  *out = ctx;
  return ADNN_STATUS_SUCCESS;
}

void adnn_context_destroy(adnn_context *ctx) {
  if (ctx == NULL) return;
  /* Errors here cannot be returned; they are logged and recorded instead. The
   * registry check comes first: nothing is read through a dead handle. */
  const char *func = "adnn_context_destroy";
  if (adnn__check_context(func, ctx) != ADNN_STATUS_SUCCESS) {
    adnn__log(ADNN_LOG_ERROR, "core", "%s", adnn_last_error());
    return;
  }
  /* Pending work may still use the plans' workspaces: finish it first. */
  if (ctx->table->synchronize(ctx->pctx) != ADNN_STATUS_SUCCESS)
    adnn__log(ADNN_LOG_WARN, "core", "adnn_context_destroy: pending work failed: %s",
              adnn_last_error());
  /* Unregisters the context and turns its plans into orphans. */
  if (adnn__handle_remove_context(func, ctx) != ADNN_STATUS_SUCCESS) {
    adnn__log(ADNN_LOG_ERROR, "core", "%s", adnn_last_error());
    return;
  }
  size_t freed = 0, forgotten = 0;
  for (size_t i = 0; i < ctx->allocs.count; i++) {
    const adnn__region *r = &ctx->allocs.regions[i];
    /* Registered regions belong to the application: forget them, never free. */
    if (r->kind != ADNN__REGION_MALLOC) {
      forgotten++;
      continue;
    }
    ctx->table->mem_free(ctx->pctx, (void *)r->base);
    freed++;
  }
  if (freed + forgotten > 0)
    adnn__log(ADNN_LOG_DEBUG, "core", "adnn_context_destroy: freed %zu allocation(s) still owned "
              "by the context and forgot %zu registered region(s)", freed, forgotten);
  adnn__alloc_map_free(&ctx->allocs);
  ctx->table->context_destroy(ctx->pctx);
  pthread_rwlock_destroy(&ctx->alloc_lock);
  pthread_mutex_destroy(&ctx->tune_lock);
  pthread_mutex_destroy(&ctx->gemm_choice_lock);
  free(ctx);
}

/* The getters keep their documented fallback for NULL silently, and for a
 * handle that is not live with the error recorded. */
const char *adnn_context_get_backend(const adnn_context *ctx) {
  if (ctx == NULL || adnn__check_context("adnn_context_get_backend", ctx) != ADNN_STATUS_SUCCESS)
    return "";
  return ctx->plugin->info.name;
}

int adnn_context_get_device(const adnn_context *ctx) {
  if (ctx == NULL || adnn__check_context("adnn_context_get_device", ctx) != ADNN_STATUS_SUCCESS)
    return -1;
  return ctx->device;
}

/* The 0.1 names, kept as exported aliases (doc/versioning.md). */
const char *adnn_context_backend(const adnn_context *ctx) { return adnn_context_get_backend(ctx); }

int adnn_context_device(const adnn_context *ctx) { return adnn_context_get_device(ctx); }

adnn_status adnn_context_synchronize(adnn_context *ctx) {
  adnn_status st = adnn__check_context("adnn_context_synchronize", ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  return ctx->table->synchronize(ctx->pctx);
}

adnn_status adnn_context_set_flags(adnn_context *ctx, uint32_t flags) {
  adnn_status st = adnn__check_context("adnn_context_set_flags", ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  const uint32_t known = ADNN_CONTEXT_ALLOW_TF32 | ADNN_CONTEXT_UNCHECKED_POINTERS;
  if (flags & ~known)
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "adnn_context_set_flags: unknown flag bits 0x%x", (unsigned)(flags & ~known));
  ctx->flags = flags;
  return ADNN_STATUS_SUCCESS;
}

uint32_t adnn_context_get_flags(const adnn_context *ctx) {
  if (ctx == NULL || adnn__check_context("adnn_context_get_flags", ctx) != ADNN_STATUS_SUCCESS)
    return 0;
  return ctx->flags;
}

/* The end of adnn_tune_options' first released layout (0.1.0): callers built
 * against that header pass at least this much (see adnn__read_struct). */
#define TUNE_OPTIONS_V1_SIZE \
  (offsetof(adnn_tune_options, deterministic) + sizeof(((adnn_tune_options *)0)->deterministic))

adnn_status adnn_context_set_tune_options(adnn_context *ctx, const adnn_tune_options *options) {
  const char *func = "adnn_context_set_tune_options";
  adnn_status st = adnn__check_context(func, ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (options == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: options is NULL", func);
  adnn_tune_options o;
  adnn_tune_options_init(&o);
  st = adnn__read_struct(func, "adnn_tune_options", "adnn_tune_options_init", options,
                         TUNE_OPTIONS_V1_SIZE, sizeof o, &o);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if ((int)o.mode != ADNN_TUNE_DEFAULT && (int)o.mode != ADNN_TUNE_OFF &&
      (int)o.mode != ADNN_TUNE_EXHAUSTIVE)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: mode %d is not an adnn_tune_mode", func,
                      (int)o.mode);
  if (!isfinite(o.time_budget_ms) || o.time_budget_ms < 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: time_budget_ms (%g) must be finite and >= 0",
                      func, o.time_budget_ms);
  o.deterministic = o.deterministic != 0;
  ctx->tune = o;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_context_get_tune_options(const adnn_context *ctx, adnn_tune_options *options) {
  const char *func = "adnn_context_get_tune_options";
  adnn_status st = adnn__check_context(func, ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (options == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: options is NULL", func);
  if (options->struct_size < TUNE_OPTIONS_V1_SIZE)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: options->struct_size is %zu but at least %zu is "
                      "needed; set it to sizeof(adnn_tune_options)", func, options->struct_size,
                      (size_t)TUNE_OPTIONS_V1_SIZE);
  /* Write what both sides know; struct_size tells the caller how much that is. */
  const size_t n = options->struct_size < sizeof ctx->tune ? options->struct_size : sizeof ctx->tune;
  memcpy(options, &ctx->tune, n);
  options->struct_size = n;
  return ADNN_STATUS_SUCCESS;
}
