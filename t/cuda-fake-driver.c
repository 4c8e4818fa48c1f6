/*
 * The CUDA plugin's probe against drivers and GPUs this machine does not have.
 *
 * The test builds nothing itself: make check has built the plugin and
 * t/cuda-fake-libcuda.so, a fake driver whose answers come from FAKE_CUDA_*
 * environment variables. For each scenario the test makes a temporary
 * directory with a symlink libcuda.so.1 -> the fake, and runs itself again
 * ("--child") with that directory first on LD_LIBRARY_PATH: the loader reads
 * LD_LIBRARY_PATH only at program start, hence the new process. The child
 * dlopens the plugin exactly as the core does, calls its real probe, prints the
 * report as "key=value" lines, and the parent checks them.
 *
 * The child talks to the plugin directly, with a host table of its own, so the
 * test depends only on the plugin ABI (include/adnn/plugin.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <adnn/plugin.h>

#include "t/tap.h"

#ifndef CUDA_TEST_BUILDDIR
#define CUDA_TEST_BUILDDIR "."
#endif

/* ---- the child: probe the plugin and print the report ------------------- */

static char child_last_error[2048];

static void child_log(adnn_log_level level, const char *source, const char *fmt, ...) {
  (void)level, (void)source, (void)fmt; /* the report carries everything checked */
}

static adnn_status child_fail(adnn_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(child_last_error, sizeof child_last_error, fmt, ap);
  va_end(ap);
  return status;
}

static const char *child_getenv(const char *name) { return getenv(name); }

/* Prints a value on one line (newlines in a reason would break the format). */
static void print_line(const char *key, const char *value) {
  printf("%s=", key);
  for (const char *p = value; *p; p++) putchar(*p == '\n' ? ' ' : *p);
  putchar('\n');
}

static int run_child(const char *plugin_path) {
  void *lib = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    print_line("dlopen_error", dlerror());
    return 0;
  }
  /* The statically linked CUDA runtime must stay inside the plugin. */
  printf("exports_cuda_runtime=%d\n", dlsym(lib, "cudaMalloc") != NULL || dlsym(lib, "cudaGetDeviceCount") != NULL);
  adnn_plugin_entry_fn entry = (adnn_plugin_entry_fn)dlsym(lib, ADNN_PLUGIN_ENTRY_SYMBOL);
  static const adnn_plugin_host host = {ADNN_PLUGIN_ABI_VERSION, sizeof(adnn_plugin_host),
                                        child_log, child_fail, child_getenv};
  const adnn_plugin *plugin = entry ? entry(ADNN_PLUGIN_ABI_VERSION, &host) : NULL;
  if (!plugin) {
    print_line("entry_error", "no plugin table");
    return 0;
  }
  adnn_plugin_report *r = calloc(1, sizeof *r);
  r->struct_size = sizeof *r;
  adnn_status st = plugin->probe(r);
  printf("probe_status=%d\nstate=%d\nscore=%d\n", (int)st, r->state, r->score);
  print_line("reason", r->reason);
  for (int i = 0; i < r->property_count; i++) print_line(r->properties[i].key, r->properties[i].value);
  printf("devices=%d\n", r->device_count);
  for (int i = 0; i < r->device_count; i++) {
    char key[64];
    snprintf(key, sizeof key, "device%d.index", i);
    printf("%s=%d\n", key, r->devices[i].index);
    snprintf(key, sizeof key, "device%d.name", i);
    print_line(key, r->devices[i].name);
    for (int j = 0; j < r->devices[i].property_count; j++) {
      snprintf(key, sizeof key, "device%d.%s", i, r->devices[i].properties[j].key);
      print_line(key, r->devices[i].properties[j].value);
    }
  }
  fflush(stdout);
  /* With a fake driver the CUDA runtime cannot work. Creating a context must
   * then fail with a status and a message, never crash or abort. */
  if (getenv("FAKE_TRY_CONTEXT") && r->state == ADNN_BACKEND_READY) {
    child_last_error[0] = '\0';
    st = plugin->init ? plugin->init() : ADNN_STATUS_SUCCESS;
    printf("init_status=%d\n", (int)st);
    print_line("init_error", child_last_error);
    if (st == ADNN_STATUS_SUCCESS) {
      adnn_plugin_context *ctx = NULL;
      child_last_error[0] = '\0';
      st = plugin->context_create(0, &ctx);
      printf("context_status=%d\n", (int)st);
      print_line("context_error", child_last_error);
      if (st == ADNN_STATUS_SUCCESS) plugin->context_destroy(ctx);
    }
    printf("child_finished=1\n");
    fflush(stdout);
  }
  free(r);
  return 0;
}

/* ---- the parent: run scenarios and check the reports ------------------- */

#define MAX_LINES 128

typedef struct child_result {
  int exited;    /* exited normally (no signal) */
  int exit_code;
  char *lines[MAX_LINES];
  int count;
  char raw[65536];
} child_result;

/* The value of `key` in the child's output, or NULL. */
static const char *get(const child_result *res, const char *key) {
  size_t n = strlen(key);
  for (int i = 0; i < res->count; i++)
    if (strncmp(res->lines[i], key, n) == 0 && res->lines[i][n] == '=') return res->lines[i] + n + 1;
  return NULL;
}

static int get_int(const child_result *res, const char *key) {
  const char *v = get(res, key);
  return v ? atoi(v) : -999;
}

/* Runs this program as a child with the driver directory first on the loader
 * path and `env` (a NULL-terminated list of NAME=VALUE) added. */
static void run_scenario(const char *self, const char *driver_dir, const char *plugin_path,
                         const char *const *env, child_result *res) {
  memset(res, 0, sizeof *res);
  int fds[2];
  if (pipe(fds) != 0) tap_bail("pipe failed");
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) tap_bail("fork failed");
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDOUT_FILENO);
    close(fds[1]);
    const char *old = getenv("LD_LIBRARY_PATH");
    char path[PATH_MAX * 2];
    snprintf(path, sizeof path, "%s%s%s", driver_dir, old && *old ? ":" : "", old ? old : "");
    setenv("LD_LIBRARY_PATH", path, 1);
    unsetenv("FAKE_CUDA_DRIVER_VERSION");
    unsetenv("FAKE_CUDA_DEVICES");
    unsetenv("FAKE_CUDA_INIT_ERROR");
    unsetenv("FAKE_TRY_CONTEXT");
    for (const char *const *e = env; e && *e; e++) putenv((char *)*e);
    execl(self, self, "--child", plugin_path, (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  size_t used = 0;
  ssize_t got;
  while ((got = read(fds[0], res->raw + used, sizeof res->raw - 1 - used)) > 0) used += (size_t)got;
  close(fds[0]);
  res->raw[used] = '\0';
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  res->exited = WIFEXITED(wstatus);
  res->exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -WTERMSIG(wstatus);
  for (char *save = NULL, *line = strtok_r(res->raw, "\n", &save); line && res->count < MAX_LINES;
       line = strtok_r(NULL, "\n", &save))
    res->lines[res->count++] = line;
}

static void show(const child_result *res) {
  for (int i = 0; i < res->count; i++) diag("  child: %s", res->lines[i]);
}

static int make_driver_dir(char *dir, size_t len, const char *target) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, len, "%s/adnn-fake-cuda-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) return 0;
  char link_path[PATH_MAX];
  snprintf(link_path, sizeof link_path, "%s/libcuda.so.1", dir);
  return symlink(target, link_path) == 0;
}

static void remove_driver_dir(const char *dir) {
  char link_path[PATH_MAX];
  snprintf(link_path, sizeof link_path, "%s/libcuda.so.1", dir);
  unlink(link_path);
  rmdir(dir);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--child") == 0) return run_child(argv[2]);

  const char *plugin_path = CUDA_TEST_BUILDDIR "/backends/cuda/.libs/adnn-cuda.so";
  const char *fake_path = CUDA_TEST_BUILDDIR "/t/.libs/cuda-fake-libcuda.so";
  if (access(plugin_path, R_OK) != 0) return tap_skip_all("the CUDA plugin was not built");
  if (access(fake_path, R_OK) != 0) return tap_skip_all("t/.libs/cuda-fake-libcuda.so was not built");
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return tap_skip_all("cannot find this program through /proc/self/exe");
  self[n] = '\0';

  char dir[PATH_MAX];
  if (!make_driver_dir(dir, sizeof dir, fake_path)) tap_bail("cannot create the fake driver directory");
  static child_result res;

  /* 1. A driver for CUDA 12.4 cannot run a CUDA 13 build. */
  {
    const char *env[] = {"FAKE_CUDA_DRIVER_VERSION=12040", NULL};
    run_scenario(self, dir, plugin_path, env, &res);
    ok(res.exited && res.exit_code == 0, "old driver: the child exits normally");
    is_int(get_int(&res, "state"), ADNN_BACKEND_INCOMPATIBLE, "old driver: state INCOMPATIBLE");
    is_int(get_int(&res, "score"), 0, "old driver: score 0");
    const char *reason = get(&res, "reason");
    contains(reason, "12.4", "old driver: the reason names what the driver supports");
    contains(reason, "13.0", "old driver: the reason names the CUDA version built for");
    contains(reason, "580", "old driver: the reason names the minimum driver");
    contains(get(&res, "driver_library"), dir, "old driver: the fake libcuda.so.1 was the one probed");
    is_str(get(&res, "exports_cuda_runtime"), "0", "the plugin does not export the CUDA runtime's symbols");
    if (tap_failed_) show(&res);
  }

  /* 2. A working driver without any GPU. */
  {
    int before = tap_failed_;
    const char *env[] = {"FAKE_CUDA_DEVICES=", NULL};
    run_scenario(self, dir, plugin_path, env, &res);
    ok(res.exited && res.exit_code == 0, "no device: the child exits normally");
    is_int(get_int(&res, "state"), ADNN_BACKEND_UNAVAILABLE, "no device: state UNAVAILABLE");
    contains(get(&res, "reason"), "no GPU", "no device: the reason says so");
    contains(get(&res, "reason"), "supports CUDA 13.0", "no device: the reason gives the driver's CUDA version");
    is_int(get_int(&res, "devices"), 0, "no device: no device listed");
    if (tap_failed_ > before) show(&res);
  }

  /* 3. Only a GPU older than anything the build carries code for. */
  {
    int before = tap_failed_;
    const char *env[] = {"FAKE_CUDA_DEVICES=Fake GTX 1080:6.1:20:8", NULL};
    run_scenario(self, dir, plugin_path, env, &res);
    ok(res.exited && res.exit_code == 0, "old GPU: the child exits normally");
    is_int(get_int(&res, "state"), ADNN_BACKEND_UNAVAILABLE, "old GPU: state UNAVAILABLE");
    const char *reason = get(&res, "reason");
    contains(reason, "Fake GTX 1080", "old GPU: the reason names the device");
    contains(reason, "compute capability 6.1", "old GPU: the reason gives its compute capability");
    contains(reason, "skipped", "old GPU: the reason says it was skipped");
    contains(reason, get(&res, "min_compute_capability"), "old GPU: the reason gives the build's minimum");
    is_int(get_int(&res, "devices"), 0, "old GPU: no device listed");
    if (tap_failed_ > before) show(&res);
  }

  /* 4. An old GPU beside a usable one: ready, with the old one skipped and
   *    adnn's device 0 being CUDA device 1. Then the CUDA runtime, which the
   *    fake cannot serve, must fail context creation cleanly. */
  {
    int before = tap_failed_;
    const char *env[] = {"FAKE_CUDA_DEVICES=Fake GTX 1080:6.1:20:8;Fake H200:9.0:132:141",
                         "FAKE_TRY_CONTEXT=1", NULL};
    run_scenario(self, dir, plugin_path, env, &res);
    ok(res.exited, "mixed GPUs: the child was not killed by a signal (exit %d)", res.exit_code);
    is_int(res.exit_code, 0, "mixed GPUs: the child exits with 0");
    is_int(get_int(&res, "state"), ADNN_BACKEND_READY, "mixed GPUs: state READY");
    is_int(get_int(&res, "score"), 100, "mixed GPUs: score 100");
    is_int(get_int(&res, "devices"), 1, "mixed GPUs: one device listed");
    is_int(get_int(&res, "device0.index"), 0, "mixed GPUs: it is adnn device 0");
    is_str(get(&res, "device0.name"), "Fake H200", "mixed GPUs: the usable one");
    is_str(get(&res, "device0.cuda_ordinal"), "1", "mixed GPUs: it is CUDA device 1");
    is_str(get(&res, "device0.compute_capability"), "9.0", "mixed GPUs: compute capability");
    is_str(get(&res, "device0.multiprocessors"), "132", "mixed GPUs: multiprocessor count");
    contains(get(&res, "device0.memory"), "141.0 GiB", "mixed GPUs: memory");
    contains(get(&res, "skipped_devices"), "Fake GTX 1080", "mixed GPUs: the skipped device is reported");
    contains(get(&res, "reason"), "skipped", "mixed GPUs: the reason mentions the skipped device");
    contains(get(&res, "driver"), "supports CUDA 13.0", "mixed GPUs: driver property");
    contains(get(&res, "runtime"), "CUDA 13.", "mixed GPUs: runtime property");
    ok(get(&res, "cublas") != NULL, "mixed GPUs: cuBLAS version property (%s)", get(&res, "cublas") ? get(&res, "cublas") : "missing");
    ok(get(&res, "cudnn") != NULL, "mixed GPUs: cuDNN version property (%s)", get(&res, "cudnn") ? get(&res, "cudnn") : "missing");
    is_str(get(&res, "child_finished"), "1", "mixed GPUs: context creation returned instead of crashing");
    int init = get_int(&res, "init_status"), context = get_int(&res, "context_status");
    ok(init != ADNN_STATUS_SUCCESS || (context != ADNN_STATUS_SUCCESS && context != -999),
       "mixed GPUs: init or context creation fails on the fake driver (init %d, context %d)",
       init, context);
    const char *msg = init != ADNN_STATUS_SUCCESS ? get(&res, "init_error") : get(&res, "context_error");
    ok(msg && strstr(msg, "cuda") && strstr(msg, "Error"), "mixed GPUs: the failure names the CUDA runtime error (%s)",
       msg ? msg : "none");
    if (tap_failed_ > before) show(&res);
  }

  /* 5. cuInit fails: the reason carries the driver's error name. */
  {
    int before = tap_failed_;
    const char *env[] = {"FAKE_CUDA_INIT_ERROR=803", NULL};
    run_scenario(self, dir, plugin_path, env, &res);
    is_int(get_int(&res, "state"), ADNN_BACKEND_UNAVAILABLE, "cuInit failure: state UNAVAILABLE");
    contains(get(&res, "reason"), "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "cuInit failure: the reason names the error");
    if (tap_failed_ > before) show(&res);
  }
  remove_driver_dir(dir);

  /* 6. The toolkit's stub libcuda.so presented as the driver (a classic
   *    LD_LIBRARY_PATH mistake). */
  const char *stub = NULL;
  static const char *stubs[] = {"/usr/local/cuda/lib64/stubs/libcuda.so",
                                "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so"};
  for (size_t i = 0; i < sizeof stubs / sizeof stubs[0]; i++)
    if (access(stubs[i], R_OK) == 0) stub = stubs[i];
  if (!stub) {
    tap_skip("the toolkit's stub libcuda.so was not found");
  } else if (!make_driver_dir(dir, sizeof dir, stub)) {
    tap_bail("cannot create the stub driver directory");
  } else {
    int before = tap_failed_;
    run_scenario(self, dir, plugin_path, NULL, &res);
    is_int(get_int(&res, "state"), ADNN_BACKEND_UNAVAILABLE, "stub driver: state UNAVAILABLE");
    contains(get(&res, "reason"), "stub", "stub driver: the reason says it is the stub library");
    if (tap_failed_ > before) show(&res);
    remove_driver_dir(dir);
  }
  return tap_done();
}
