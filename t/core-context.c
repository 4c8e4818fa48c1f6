/* Contexts: creation on cpu/auto/cuda/bad names, ADNN_BACKEND, flags,
 * synchronize, destroy. */
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "t/tap.h"

static const adnn_backend_info *find_backend(const char *name) {
  size_t n = 0;
  adnn_backend_count(&n);
  for (size_t i = 0; i < n; i++) {
    const adnn_backend_info *b;
    if (adnn_backend_get(i, &b) == ADNN_STATUS_SUCCESS && strcmp(b->name, name) == 0 &&
        b->state == ADNN_BACKEND_READY)
      return b;
  }
  for (size_t i = 0; i < n; i++) {
    const adnn_backend_info *b;
    if (adnn_backend_get(i, &b) == ADNN_STATUS_SUCCESS && strcmp(b->name, name) == 0) return b;
  }
  return NULL;
}

/* The ready backend with the highest score, as "auto" must choose it. */
static const adnn_backend_info *best_ready(void) {
  size_t n = 0;
  adnn_backend_count(&n);
  const adnn_backend_info *best = NULL;
  for (size_t i = 0; i < n; i++) {
    const adnn_backend_info *b;
    if (adnn_backend_get(i, &b) == ADNN_STATUS_SUCCESS && b->state == ADNN_BACKEND_READY &&
        (best == NULL || b->score > best->score))
      best = b;
  }
  return best;
}

/* Creates a context on `spec`, checks success and the backend/device, destroys. */
static void create_ok(const char *spec, const char *backend, int device) {
  adnn_context *ctx = NULL;
  adnn_status st = adnn_context_create(spec, &ctx);
  is_status(st, ADNN_STATUS_SUCCESS, "create \"%s\"", spec ? spec : "(NULL)");
  if (st != ADNN_STATUS_SUCCESS) return;
  ok(ctx != NULL, "\"%s\": context is not NULL", spec ? spec : "(NULL)");
  is_str(adnn_context_get_backend(ctx), backend, "\"%s\" runs on %s", spec ? spec : "(NULL)", backend);
  is_int(adnn_context_get_device(ctx), device, "\"%s\" is device %d", spec ? spec : "(NULL)", device);
  is_status(adnn_context_synchronize(ctx), ADNN_STATUS_SUCCESS, "synchronize \"%s\"",
            spec ? spec : "(NULL)");
  adnn_context_destroy(ctx);
}

/* Creates a context that must fail with `expected`; *out must stay untouched. */
static void create_fails(const char *spec, adnn_status expected, const char *needle) {
  adnn_context *sentinel = (adnn_context *)(uintptr_t)0x1234;
  adnn_context *ctx = sentinel;
  adnn_status st = adnn_context_create(spec, &ctx);
  is_status(st, expected, "create \"%s\" fails with %s", spec, adnn_status_name(expected));
  ok(ctx == sentinel, "\"%s\": out is not written on failure", spec);
  if (st == ADNN_STATUS_SUCCESS && ctx != sentinel) adnn_context_destroy(ctx);
  ok(adnn_last_error()[0] != '\0', "\"%s\": adnn_last_error() is not empty", spec);
  if (needle) contains(adnn_last_error(), needle, "\"%s\": message mentions %s", spec, needle);
}

int main(void) {
  /* The checks below set these themselves; start from a clean environment. */
  unsetenv("ADNN_BACKEND");
  unsetenv("ADNN_ALLOW_TF32");
  size_t count = 0;
  is_status(adnn_backend_count(&count), ADNN_STATUS_SUCCESS, "adnn_backend_count");
  ok(count >= 1, "at least one plugin found (%zu)", count);
  const adnn_backend_info *cpu = find_backend("cpu");
  ok(cpu != NULL && cpu->state == ADNN_BACKEND_READY, "the cpu plugin is found and ready");
  if (cpu == NULL || cpu->state != ADNN_BACKEND_READY) {
    diag("cpu plugin: %s", cpu ? cpu->reason : "not found; is ADNN_PLUGIN_PATH set?");
    tap_bail("no ready cpu plugin");
  }
  const adnn_backend_info *best = best_ready();
  diag("auto should pick %s (score %d)", best->name, best->score);

  create_ok("cpu", "cpu", 0);
  create_ok("cpu:0", "cpu", 0);
  create_ok(NULL, best->name, 0);
  create_ok("auto", best->name, 0);
  /* An empty string is refused: more often a variable never filled than a choice. */
  create_fails("", ADNN_STATUS_BAD_PARAM, "use NULL or \"auto\"");

  const char *auto_name = NULL, *auto_reason = NULL;
  is_status(adnn_backend_auto_choice(&auto_name, &auto_reason), ADNN_STATUS_SUCCESS,
            "adnn_backend_auto_choice");
  is_str(auto_name, best->name, "auto choice is the best-scored ready plugin");
  ok(auto_reason != NULL && auto_reason[0] != '\0', "auto choice has a reason: %s",
     auto_reason ? auto_reason : "(null)");
  is_status(adnn_backend_auto_choice(NULL, NULL), ADNN_STATUS_SUCCESS,
            "adnn_backend_auto_choice(NULL, NULL)");

  /* cuda: never a silent CPU run. */
  const adnn_backend_info *cuda = find_backend("cuda");
  if (cuda == NULL) {
    diag("no cuda plugin on the search path");
    create_fails("cuda", ADNN_STATUS_BACKEND_UNAVAILABLE, "no plugin named cuda was found");
    create_fails("cuda:0", ADNN_STATUS_BACKEND_UNAVAILABLE, "cuda");
  } else if (cuda->state == ADNN_BACKEND_READY) {
    diag("cuda plugin is ready: %s", cuda->reason);
    create_ok("cuda", "cuda", 0);
    create_ok("cuda:0", "cuda", 0);
    char spec[32];
    snprintf(spec, sizeof spec, "cuda:%zu", cuda->device_count);
    create_fails(spec, ADNN_STATUS_BAD_PARAM, "device");
  } else {
    diag("cuda plugin state %d: %s", (int)cuda->state, cuda->reason);
    adnn_status expected = cuda->state == ADNN_BACKEND_INCOMPATIBLE
                               ? ADNN_STATUS_BACKEND_INCOMPATIBLE
                               : ADNN_STATUS_BACKEND_UNAVAILABLE;
    ok(cuda->reason != NULL && cuda->reason[0] != '\0', "cuda plugin has a reason");
    create_fails("cuda", expected, "cuda");
    char head[81];
    snprintf(head, sizeof head, "%s", cuda->reason); /* the message may truncate a long one */
    contains(adnn_last_error(), head, "the error quotes the plugin's reason");
    create_fails("cuda:0", expected, "cuda");
  }

  create_fails("nosuch", ADNN_STATUS_BACKEND_UNAVAILABLE, "nosuch");
  contains(adnn_last_error(), "cpu", "the message lists the plugins that were found");
  create_fails("cpu:1", ADNN_STATUS_BAD_PARAM, "device 1");
  create_fails("cpu:", ADNN_STATUS_BAD_PARAM, "malformed");
  create_fails("cpu:x", ADNN_STATUS_BAD_PARAM, "malformed");
  create_fails("cpu:0x", ADNN_STATUS_BAD_PARAM, "malformed");
  create_fails("cpu:+0", ADNN_STATUS_BAD_PARAM, NULL);
  create_fails("CPU", ADNN_STATUS_BAD_PARAM, "malformed");
  create_fails("cuda:-1", ADNN_STATUS_BAD_PARAM, "malformed");
  create_fails(":0", ADNN_STATUS_BAD_PARAM, NULL);
  create_fails(" cpu", ADNN_STATUS_BAD_PARAM, NULL);
  create_fails("cpu:99999999999999999999", ADNN_STATUS_BAD_PARAM, NULL);
  create_fails("../cpu", ADNN_STATUS_BAD_PARAM, NULL);
  is_status(adnn_context_create("cpu", NULL), ADNN_STATUS_BAD_PARAM_NULL, "out NULL");
  contains(adnn_last_error(), "out", "message names out");

  /* ADNN_BACKEND replaces an automatic request, read at each creation. */
  setenv("ADNN_BACKEND", "cpu", 1);
  create_ok(NULL, "cpu", 0);
  create_ok("auto", "cpu", 0);
  is_status(adnn_backend_auto_choice(&auto_name, &auto_reason), ADNN_STATUS_SUCCESS,
            "auto choice with ADNN_BACKEND=cpu");
  is_str(auto_name, "cpu", "auto choice reports the override");
  contains(auto_reason, "ADNN_BACKEND", "and says it came from ADNN_BACKEND");
  setenv("ADNN_BACKEND", "nosuch", 1);
  create_fails(NULL, ADNN_STATUS_BACKEND_UNAVAILABLE, "nosuch");
  contains(adnn_last_error(), "ADNN_BACKEND", "the message says the name came from ADNN_BACKEND");
  create_fails("auto", ADNN_STATUS_BACKEND_UNAVAILABLE, "nosuch");
  create_ok("cpu", "cpu", 0); /* explicit requests ignore ADNN_BACKEND */
  setenv("ADNN_BACKEND", "cpu:7", 1);
  create_fails(NULL, ADNN_STATUS_BAD_PARAM, "device 7");
  setenv("ADNN_BACKEND", "Bad Name", 1);
  create_fails(NULL, ADNN_STATUS_BAD_PARAM, "ADNN_BACKEND");
  setenv("ADNN_BACKEND", "auto", 1);
  create_ok(NULL, best->name, 0);
  setenv("ADNN_BACKEND", "", 1);
  create_ok(NULL, best->name, 0);
  unsetenv("ADNN_BACKEND");

  /* Destroy, accessors and synchronize with NULL. */
  adnn_context_destroy(NULL);
  ok(1, "adnn_context_destroy(NULL) is a no-op");
  is_str(adnn_context_get_backend(NULL), "", "adnn_context_get_backend(NULL) is \"\"");
  is_int(adnn_context_get_device(NULL), -1, "adnn_context_get_device(NULL) is -1");
  is_status(adnn_context_synchronize(NULL), ADNN_STATUS_BAD_PARAM_NULL, "synchronize(NULL)");
  contains(adnn_last_error(), "ctx", "message names ctx");

  /* Flags. */
  adnn_context *ctx = NULL;
  is_status(adnn_context_create("cpu", &ctx), ADNN_STATUS_SUCCESS, "create cpu for flags");
  if (ctx) {
    is_int(adnn_context_get_flags(ctx), 0, "flags are 0 by default");
    is_status(adnn_context_set_flags(ctx, ADNN_CONTEXT_ALLOW_TF32), ADNN_STATUS_SUCCESS,
              "set ALLOW_TF32");
    is_int(adnn_context_get_flags(ctx), ADNN_CONTEXT_ALLOW_TF32, "ALLOW_TF32 is set");
    is_status(adnn_context_set_flags(ctx, 0x80), ADNN_STATUS_BAD_PARAM, "unknown bit 0x80");
    contains(adnn_last_error(), "0x80", "message quotes the unknown bit");
    is_int(adnn_context_get_flags(ctx), ADNN_CONTEXT_ALLOW_TF32, "flags unchanged on failure");
    is_status(adnn_context_set_flags(ctx, ADNN_CONTEXT_ALLOW_TF32 | 0x80000000u),
              ADNN_STATUS_BAD_PARAM, "a known bit plus an unknown one");
    is_status(adnn_context_set_flags(ctx, 0), ADNN_STATUS_SUCCESS, "clear flags");
    is_int(adnn_context_get_flags(ctx), 0, "flags cleared");
    adnn_context_destroy(ctx);
  }
  is_status(adnn_context_set_flags(NULL, 0), ADNN_STATUS_BAD_PARAM_NULL, "set_flags(NULL)");
  is_int(adnn_context_get_flags(NULL), 0, "get_flags(NULL) is 0");

  setenv("ADNN_ALLOW_TF32", "1", 1);
  ctx = NULL;
  is_status(adnn_context_create("cpu", &ctx), ADNN_STATUS_SUCCESS, "create with ADNN_ALLOW_TF32=1");
  is_int(adnn_context_get_flags(ctx), ADNN_CONTEXT_ALLOW_TF32, "ADNN_ALLOW_TF32=1 sets the flag");
  adnn_context_destroy(ctx);
  unsetenv("ADNN_ALLOW_TF32");

  /* Many contexts at once are independent. */
  adnn_context *many[16] = {0};
  int all = 1;
  for (int i = 0; i < 16; i++)
    if (adnn_context_create("cpu", &many[i]) != ADNN_STATUS_SUCCESS) all = 0;
  ok(all, "16 cpu contexts at once");
  ok(many[0] != many[1], "distinct handles");
  for (int i = 0; i < 16; i++) adnn_context_destroy(many[i]);
  return tap_done();
}
