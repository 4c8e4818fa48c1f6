/* The plugin loader against broken plugins. The test builds its own plugin
 * directories in a temporary directory and points ADNN_PLUGIN_PATH at them
 * before the first adnn call (plugins are loaded once per process):
 *
 *   p1/  adnn-abi1.so       built for plugin ABI 1.0 -> INCOMPATIBLE, both versions
 *        adnn-badabi.so     plugin ABI 99            -> INCOMPATIBLE, both versions
 *        adnn-cpu.so        the real cpu plugin      -> READY
 *        adnn-malformed.so  no probe slot            -> INCOMPATIBLE
 *        adnn-noentry.so    no adnn_plugin_entry     -> LOAD_FAILED
 *        adnn-notelf.so     a text file              -> LOAD_FAILED
 *        adnn-nulltable.so  entry returns NULL       -> INCOMPATIBLE
 *        adnn-probefail.so  probe returns an error   -> UNAVAILABLE, its reason
 *        adnn-unavail.so    probe says unavailable   -> UNAVAILABLE, its reason
 *        adnn-zeroscore.so  probe: READY, score 0    -> UNAVAILABLE
 *        adnn-subdir.so/    a directory              -> ignored
 *        README             not *.so                 -> ignored
 *   empty/                  an empty directory
 *   missing                 does not exist
 *   rel/ (as "rel")         a relative entry         -> ignored (holds adnn-relonly.so)
 *   p2/  adnn-cpu.so        a copy of the cpu plugin -> shadowed by p1's
 *
 * Then the cpu plugin must still be chosen by auto and compute a GEMM. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <adnn.h>
#include <adnn/plugin.h>

#include "t/tap.h"
#include "t/tmpdir.h"

#define MAXLOG 128
static char warnings[MAXLOG][1024];
static int nwarnings;

static void sink(adnn_log_level level, const char *source, const char *message, void *user) {
  (void)user;
  if (level <= ADNN_LOG_WARN && nwarnings < MAXLOG)
    snprintf(warnings[nwarnings++], sizeof warnings[0], "%s: %s", source, message);
}

static int logged(const char *needle) {
  for (int i = 0; i < nwarnings; i++)
    if (strstr(warnings[i], needle)) return 1;
  return 0;
}

/* The record whose file is `dir/file`, or NULL. */
static const adnn_backend_info *by_path(const char *dir, const char *file) {
  char want[PATH_MAX];
  snprintf(want, sizeof want, "%s/%s", dir, file);
  size_t n = 0;
  adnn_backend_count(&n);
  for (size_t i = 0; i < n; i++) {
    const adnn_backend_info *b;
    if (adnn_backend_get(i, &b) == ADNN_STATUS_SUCCESS && strcmp(b->path, want) == 0) return b;
  }
  return NULL;
}

static const char *state_name(adnn_backend_state s) {
  static const char *names[] = {"READY", "UNAVAILABLE", "INCOMPATIBLE", "LOAD_FAILED"};
  return (unsigned)s < 4 ? names[s] : "?";
}

static const adnn_backend_info *expect(const char *dir, const char *file, adnn_backend_state st,
                                       const char *name) {
  const adnn_backend_info *b = by_path(dir, file);
  ok(b != NULL, "%s is listed", file);
  if (b == NULL) return NULL;
  if (!ok(b->state == st, "%s is %s", file, state_name(st)))
    diag("  state %s, reason: %s", state_name(b->state), b->reason);
  is_str(b->name, name, "%s is named %s", file, name);
  ok(b->reason != NULL && b->reason[0] != '\0', "%s has a reason: %s", file,
     b->reason ? b->reason : "(null)");
  is_int(b->struct_size, sizeof(adnn_backend_info), "%s: struct_size", file);
  if (st != ADNN_BACKEND_READY) is_int(b->score, 0, "%s: score 0 when not ready", file);
  return b;
}

int main(void) {
  const char *build = getenv("ADNN_TEST_BUILDDIR");
  if (build == NULL || *build == '\0') return tap_skip_all("ADNN_TEST_BUILDDIR is not set");
  char cpu_so[1024], tp[1024];
  snprintf(cpu_so, sizeof cpu_so, "%s/backends/cpu/.libs/adnn-cpu.so", build);
  snprintf(tp, sizeof tp, "%s/t/plugins/.libs", build);
  if (access(cpu_so, R_OK) != 0) return tap_skip_all("the cpu plugin is not built");

  char root[1024], p1[1100], p2[1100], empty[1100], missing[1100];
  if (!tmpdir_make(root, sizeof root, "adnn-loader")) tap_bail("cannot create a temp dir");
  snprintf(p1, sizeof p1, "%s/p1", root);
  snprintf(p2, sizeof p2, "%s/p2", root);
  snprintf(empty, sizeof empty, "%s/empty", root);
  snprintf(missing, sizeof missing, "%s/missing", root);
  mkdir(p1, 0755);
  mkdir(p2, 0755);
  mkdir(empty, 0755);
  char path[PATH_MAX * 2], from[PATH_MAX], to[PATH_MAX];
  const char *test_plugins[] = {"adnn-abi1.so", "adnn-badabi.so", "adnn-malformed.so", "adnn-noentry.so",
                                "adnn-nulltable.so", "adnn-unavail.so", "adnn-probefail.so",
                                "adnn-zeroscore.so"};
  int made = 1;
  for (size_t i = 0; i < sizeof test_plugins / sizeof test_plugins[0]; i++) {
    snprintf(from, sizeof from, "%s/%s", tp, test_plugins[i]);
    snprintf(to, sizeof to, "%s/%s", p1, test_plugins[i]);
    if (symlink(from, to) != 0) made = 0;
  }
  snprintf(to, sizeof to, "%s/adnn-cpu.so", p1);
  if (symlink(cpu_so, to) != 0) made = 0;
  snprintf(to, sizeof to, "%s/adnn-cpu.so", p2);
  if (!tmpdir_copy(cpu_so, to)) made = 0;
  snprintf(to, sizeof to, "%s/adnn-notelf.so", p1);
  if (!tmpdir_write(to, "This is a text file, not a shared object.\n")) made = 0;
  snprintf(to, sizeof to, "%s/README", p1);
  if (!tmpdir_write(to, "not a plugin\n")) made = 0;
  snprintf(to, sizeof to, "%s/adnn-subdir.so", p1);
  if (mkdir(to, 0755) != 0) made = 0;
  /* The relative entry "rel" resolves to root/rel from the working directory. */
  snprintf(to, sizeof to, "%s/rel", root);
  mkdir(to, 0755);
  snprintf(from, sizeof from, "%s/adnn-unavail.so", tp);
  snprintf(to, sizeof to, "%s/rel/adnn-relonly.so", root);
  if (symlink(from, to) != 0) made = 0;
  ok(made, "built the plugin directories in %s", root);
  if (!made) {
    tmpdir_remove(root);
    return tap_done();
  }
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == NULL) cwd[0] = '\0';
  if (chdir(root) != 0) tap_bail("cannot chdir to the temp dir");

  snprintf(path, sizeof path, "%s:rel:%s:%s::%s", p1, empty, missing, p2);
  setenv("ADNN_PLUGIN_PATH", path, 1);
  adnn_log_set_callback(sink, NULL);
  adnn_log_set_level(ADNN_LOG_WARN); /* whatever ADNN_LOG says */
  unsetenv("ADNN_BACKEND");

  /* ---- enumeration ---- */
  size_t count = 0;
  is_status(adnn_backend_count(&count), ADNN_STATUS_SUCCESS, "adnn_backend_count");
  is_int(count, 11, "11 plugin files: 10 in p1 (not README, not the directory), 1 in p2; none "
         "from the empty, missing or relative directories");
  const char *sp = NULL, *source = NULL;
  adnn_backend_search_path(&sp, &source);
  is_str(sp, path, "search path is ADNN_PLUGIN_PATH");
  is_str(source, "ADNN_PLUGIN_PATH", "and says so");
  for (size_t i = 0; i < count; i++) {
    const adnn_backend_info *b;
    adnn_backend_get(i, &b);
    diag("%zu: %s %s [%s] %s", i, b->name, state_name(b->state), b->path, b->reason);
    if (strstr(b->path, "relonly") || strcmp(b->name, "relonly") == 0)
      ok(0, "a plugin from the relative directory was loaded: %s", b->path);
  }
  /* Search order: p1 in name order, then p2. */
  const adnn_backend_info *first = NULL, *last = NULL;
  adnn_backend_get(0, &first);
  adnn_backend_get(count ? count - 1 : 0, &last);
  contains(first ? first->path : "", "/p1/adnn-abi1.so", "the first record is p1's first file");
  contains(last ? last->path : "", "/p2/adnn-cpu.so", "the last record is p2's cpu");

  const adnn_backend_info *b;
  b = expect(p1, "adnn-cpu.so", ADNN_BACKEND_READY, "cpu");
  if (b) {
    ok(b->score > 0, "cpu has a positive score (%d)", b->score);
    ok(b->version && b->version[0], "cpu has a version (%s)", b->version ? b->version : "");
    ok(b->device_count == 1 && b->devices && b->devices[0].index == 0 && b->devices[0].name &&
           b->devices[0].name[0],
       "cpu has one device 0 with a name");
    ok(b->property_count > 0 && b->properties && b->properties[0].key && b->properties[0].value,
       "cpu reports properties");
  }
  b = expect(p1, "adnn-badabi.so", ADNN_BACKEND_INCOMPATIBLE, "badabi");
  if (b) {
    contains(b->reason, "99", "badabi: the reason names the plugin's ABI 99");
    char core_abi[32];
    snprintf(core_abi, sizeof core_abi, "ABI %d.x", ADNN_PLUGIN_ABI_MAJOR);
    contains(b->reason, core_abi, "badabi: and the ABI major the core needs");
  }
  /* A real plugin of the previous ABI (compiled against the 0.1 headers). */
  b = expect(p1, "adnn-abi1.so", ADNN_BACKEND_INCOMPATIBLE, "abi1");
  if (b) {
    contains(b->reason, "plugin ABI 1.0", "abi1: the reason names the plugin's ABI 1.0");
    contains(b->reason, "needs plugin ABI 2.x", "abi1: and the ABI 2 the core needs");
    contains(b->reason, "rebuild", "abi1: and says what to do");
  }
  b = expect(p1, "adnn-malformed.so", ADNN_BACKEND_INCOMPATIBLE, "malformed");
  if (b) contains(b->reason, "required", "malformed: the reason says a required slot is missing");
  b = expect(p1, "adnn-noentry.so", ADNN_BACKEND_LOAD_FAILED, "noentry");
  if (b) contains(b->reason, "adnn_plugin_entry", "noentry: the reason names the entry symbol");
  b = expect(p1, "adnn-notelf.so", ADNN_BACKEND_LOAD_FAILED, "notelf");
  if (b) contains(b->reason, "not a loadable shared object", "notelf: the reason says why");
  b = expect(p1, "adnn-nulltable.so", ADNN_BACKEND_INCOMPATIBLE, "nulltable");
  if (b) contains(b->reason, "refused", "nulltable: the reason says the plugin refused");
  b = expect(p1, "adnn-unavail.so", ADNN_BACKEND_UNAVAILABLE, "unavail");
  if (b) {
    is_str(b->reason, "test plugin: no frobnicator found; install a frobnicator",
           "unavail: the probe's reason is kept verbatim");
    is_str(b->version, "0.0.1", "unavail: version");
    ok(b->property_count == 1 && strcmp(b->properties[0].key, "frobnicator") == 0 &&
           strcmp(b->properties[0].value, "none") == 0,
       "unavail: the probe's property is kept");
  }
  b = expect(p1, "adnn-probefail.so", ADNN_BACKEND_UNAVAILABLE, "probefail");
  if (b) {
    contains(b->reason, "probe exploded", "probefail: the probe's reason is kept");
    contains(b->reason, "EXECUTION_FAILED", "probefail: with the status it returned");
  }
  b = expect(p1, "adnn-zeroscore.so", ADNN_BACKEND_UNAVAILABLE, "zeroscore");
  if (b) contains(b->reason, "score 0", "zeroscore: the reason says score 0 means unusable");
  b = expect(p2, "adnn-cpu.so", ADNN_BACKEND_UNAVAILABLE, "cpu");
  if (b) {
    contains(b->reason, "shadowed", "the second cpu plugin is shadowed");
    contains(b->reason, p1, "by the one in p1");
  }
  ok(by_path(p1, "adnn-subdir.so") == NULL, "a directory named *.so is not listed");
  ok(by_path(p1, "README") == NULL, "README is not listed");

  /* ---- logging of what was passed over ---- */
  ok(logged("notelf"), "the unloadable text file was logged as a warning");
  ok(logged("relative"), "the ignored relative directory was logged as a warning");
  adnn_log_set_callback(NULL, NULL);

  /* ---- auto and contexts ---- */
  const char *auto_name = NULL, *auto_reason = NULL;
  is_status(adnn_backend_auto_choice(&auto_name, &auto_reason), ADNN_STATUS_SUCCESS, "auto choice");
  is_str(auto_name, "cpu", "auto picks cpu");
  contains(auto_reason, "unavail", "the auto reason names a plugin it passed over");
  contains(auto_reason, "badabi", "including the incompatible one");

  adnn_context *ctx = NULL;
  adnn_status st = adnn_context_create("unavail", &ctx);
  is_status(st, ADNN_STATUS_BACKEND_UNAVAILABLE, "explicit \"unavail\" fails");
  contains(adnn_last_error(), "no frobnicator", "with the probe's reason");
  is_status(adnn_context_create("badabi", &ctx), ADNN_STATUS_BACKEND_INCOMPATIBLE,
            "explicit \"badabi\" is incompatible");
  contains(adnn_last_error(), "99", "with the ABI numbers");
  is_status(adnn_context_create("noentry", &ctx), ADNN_STATUS_BACKEND_UNAVAILABLE,
            "explicit \"noentry\" is unavailable");
  contains(adnn_last_error(), "adnn_plugin_entry", "with the reason");
  is_status(adnn_context_create("zeroscore", &ctx), ADNN_STATUS_BACKEND_UNAVAILABLE,
            "explicit \"zeroscore\" is unavailable");
  is_status(adnn_context_create("probefail", &ctx), ADNN_STATUS_BACKEND_UNAVAILABLE,
            "explicit \"probefail\" is unavailable");
  is_status(adnn_context_create("relonly", &ctx), ADNN_STATUS_BACKEND_UNAVAILABLE,
            "\"relonly\" (only in the relative directory) is not found");
  ok(ctx == NULL, "no context was written by the failures");

  st = adnn_context_create("auto", &ctx);
  is_status(st, ADNN_STATUS_SUCCESS, "auto context");
  if (st == ADNN_STATUS_SUCCESS) {
    is_str(adnn_context_get_backend(ctx), "cpu", "auto context is on cpu");
    /* A 3x2 * 2x4 product with exact small integers. */
    double a[6] = {1, -2, 3, 4, -5, 6}, bm[8] = {7, -8, 9, 10, -11, 12, 13, -14}, c[12];
    double ref[12];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++) ref[i * 4 + j] = a[i * 2] * bm[j] + a[i * 2 + 1] * bm[4 + j];
    void *da = NULL, *db = NULL, *dc = NULL;
    adnn_malloc(ctx, sizeof a, &da);
    adnn_malloc(ctx, sizeof bm, &db);
    adnn_malloc(ctx, sizeof c, &dc);
    adnn_memcpy(ctx, da, a, sizeof a, ADNN_MEMCPY_HOST_TO_DEVICE);
    adnn_memcpy(ctx, db, bm, sizeof bm, ADNN_MEMCPY_HOST_TO_DEVICE);
    is_status(adnn_gemm(ctx, ADNN_DTYPE_F64, ADNN_NO_TRANS, ADNN_NO_TRANS, 3, 4, 2, 1.0, da, 2,
                        db, 4, 0.0, dc, 4),
              ADNN_STATUS_SUCCESS, "GEMM on cpu");
    memset(c, 0xff, sizeof c);
    adnn_memcpy(ctx, c, dc, sizeof c, ADNN_MEMCPY_DEVICE_TO_HOST);
    ok(memcmp(c, ref, sizeof c) == 0, "GEMM result is exact (c[0] = %g, expected %g)", c[0],
       ref[0]);
    adnn_context_destroy(ctx); /* also frees da, db, dc */
  }
  if (cwd[0] && chdir(cwd) != 0) diag("cannot go back to %s", cwd);
  tmpdir_remove(root);
  /* The state tokens adnn-info and the Python binding print. */
  is_str(adnn_backend_state_name(ADNN_BACKEND_READY), "ready", "state name: ready");
  is_str(adnn_backend_state_name(ADNN_BACKEND_UNAVAILABLE), "unavailable", "state name: unavailable");
  is_str(adnn_backend_state_name(ADNN_BACKEND_INCOMPATIBLE), "incompatible",
         "state name: incompatible");
  is_str(adnn_backend_state_name(ADNN_BACKEND_LOAD_FAILED), "load-failed", "state name: load-failed");
  is_str(adnn_backend_state_name((adnn_backend_state)99), "unknown", "state name of a non-state");
  return tap_done();
}
