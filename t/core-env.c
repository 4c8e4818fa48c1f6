/* Environment variables with values adnn does not accept: each one is
 * ignored with exactly one warning per process, however often it is read,
 * and the warning names the accepted values. ADNN_NUM_THREADS above the CPUs
 * of the affinity mask is capped, with one warning. Every case runs in a
 * child process (the library reads the environment once per process), which
 * sets the variable, captures the log through adnn_log_set_callback, reads
 * the variable at least twice (two contexts, or two conv2d plans), and sends
 * back the warnings that name the variable. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <adnn.h>

#include "t/tap.h"

static char captured[8192];
static const char *watched;
static int count;

static void sink(adnn_log_level level, const char *source, const char *message, void *user) {
  (void)user;
  if (level != ADNN_LOG_WARN || strstr(message, watched) == NULL) return;
  count++;
  size_t used = strlen(captured);
  snprintf(captured + used, sizeof captured - used, "%s: %s\n", source, message);
}

enum action { TWO_CONTEXTS, TWO_CONV_PLANS };

/* Runs the action with name=value set; returns the number of warnings that
 * named the variable (-1 when the child failed) and their text in out. */
static int run_case(const char *name, const char *value, enum action action, char *out,
                    size_t size, char *threads, size_t tsize) {
  int fd[2];
  if (pipe(fd) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    close(fd[0]);
    setenv(name, value, 1);
    watched = name;
    adnn_log_set_callback(sink, NULL);
    int failed = 0;
    char thr[128] = "";
    adnn_context *ctx[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++)
      if (adnn_context_create("cpu", &ctx[i]) != ADNN_STATUS_SUCCESS) failed = 1;
    if (action == TWO_CONV_PLANS && !failed) {
      adnn_conv2d_desc d;
      adnn_conv2d_desc_init(&d);
      int64_t xd[4] = {1, 2, 5, 5}, wd[4] = {3, 2, 3, 3}, yd[4] = {1, 3, 3, 3};
      adnn_tensor_desc_init(&d.x, ADNN_DTYPE_F32, 4, xd);
      adnn_tensor_desc_init(&d.w, ADNN_DTYPE_F32, 4, wd);
      adnn_tensor_desc_init(&d.y, ADNN_DTYPE_F32, 4, yd);
      for (int i = 0; i < 2; i++) {
        adnn_plan *p = NULL;
        if (adnn_plan_create_conv2d(ctx[0], &d, &p) != ADNN_STATUS_SUCCESS) failed = 1;
        adnn_plan_destroy(p);
      }
    }
    size_t n = 0;
    adnn_backend_count(&n);
    for (size_t i = 0; i < n; i++) {
      const adnn_backend_info *b;
      if (adnn_backend_get(i, &b) != ADNN_STATUS_SUCCESS || strcmp(b->name, "cpu") != 0) continue;
      for (size_t j = 0; j < b->property_count; j++)
        if (strcmp(b->properties[j].key, "threads") == 0)
          snprintf(thr, sizeof thr, "%s", b->properties[j].value);
    }
    for (int i = 0; i < 2; i++) adnn_context_destroy(ctx[i]);
    char msg[8192 + 256];
    int len = snprintf(msg, sizeof msg, "%d\n%s\n%s", failed ? -1 : count, thr, captured);
    if (write(fd[1], msg, (size_t)len) != len) _exit(2);
    _exit(0);
  }
  close(fd[1]);
  char buf[9000];
  size_t got = 0;
  ssize_t r;
  while ((r = read(fd[0], buf + got, sizeof buf - 1 - got)) > 0) got += (size_t)r;
  buf[got] = '\0';
  close(fd[0]);
  int status;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  char *nl = strchr(buf, '\n');
  if (nl == NULL) return -1;
  char *nl2 = strchr(nl + 1, '\n');
  if (nl2 == NULL) return -1;
  *nl2 = '\0';
  snprintf(threads, tsize, "%s", nl + 1);
  snprintf(out, size, "%s", nl2 + 1);
  return atoi(buf);
}

static void once_naming(const char *name, const char *value, enum action action,
                        const char *accepted) {
  char text[8192], threads[128];
  int n = run_case(name, value, action, text, sizeof text, threads, sizeof threads);
  if (!ok(n == 1, "%s=%s warns exactly once", name, value)) diag("  %d warnings:\n%s", n, text);
  if (!ok(strstr(text, accepted) != NULL, "%s=%s: the warning names the accepted values", name,
          value))
    diag("  warning: %s  expected to contain: %s", text, accepted);
}

int main(void) {
  if (getenv("ADNN_TEST_BUILDDIR") == NULL) return tap_skip_all("ADNN_TEST_BUILDDIR is not set");
  once_naming("ADNN_LOG", "verbose", TWO_CONTEXTS, "off, error, warn, info or debug");
  once_naming("ADNN_ALLOW_TF32", "yes", TWO_CONTEXTS, "accepted: 0 or 1");
  once_naming("ADNN_CPU_SIMD", "avx9000", TWO_CONTEXTS, "avx512, avx2, base, or baseline");
  once_naming("ADNN_NUM_THREADS", "four", TWO_CONTEXTS, "a positive integer");
  once_naming("ADNN_NUM_THREADS", "-3", TWO_CONTEXTS, "a positive integer");
  once_naming("ADNN_CONV2D_ALGO", "fastest", TWO_CONV_PLANS,
              "auto, reference, im2col_gemm, gemm_1x1, winograd_f2x3, depthwise_direct or direct");
  once_naming("ADNN_TUNE", "always", TWO_CONTEXTS, "off, default or exhaustive");
  once_naming("ADNN_TUNE_BUDGET_MS", "-5", TWO_CONTEXTS, "milliseconds >= 0");
  once_naming("ADNN_TUNE_WORKSPACE_LIMIT", "lots", TWO_CONTEXTS, "K, M or G");
  once_naming("ADNN_DETERMINISTIC", "true", TWO_CONTEXTS, "accepted: 0 or 1");
  once_naming("ADNN_VERBOSE", "3", TWO_CONV_PLANS, "accepted: 0, 1 or 2");

  /* Good values are silent. */
  char text[8192], threads[128];
  int n = run_case("ADNN_CONV2D_ALGO", "im2col_gemm", TWO_CONV_PLANS, text, sizeof text, threads,
                   sizeof threads);
  if (!ok(n == 0, "ADNN_CONV2D_ALGO=im2col_gemm does not warn")) diag("  %d: %s", n, text);
  n = run_case("ADNN_ALLOW_TF32", "1", TWO_CONTEXTS, text, sizeof text, threads, sizeof threads);
  if (!ok(n == 0, "ADNN_ALLOW_TF32=1 does not warn")) diag("  %d: %s", n, text);

  /* More threads than CPUs: capped at the CPUs of the affinity mask. */
  cpu_set_t set;
  int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  if (cpus <= 0) {
    tap_skip("sched_getaffinity failed: cannot tell the CPU count");
  } else {
    char want[64], used[64];
    n = run_case("ADNN_NUM_THREADS", "100000", TWO_CONTEXTS, text, sizeof text, threads,
                 sizeof threads);
    if (!ok(n == 1, "ADNN_NUM_THREADS=100000 warns exactly once")) diag("  %d: %s", n, text);
    snprintf(used, sizeof used, "using %d", cpus);
    if (!ok(strstr(text, used) != NULL, "the warning says it uses the %d CPUs", cpus))
      diag("  %s", text);
    snprintf(want, sizeof want, "%d (from ADNN_NUM_THREADS)", cpus);
    is_str(threads, want, "the cpu backend reports %d threads", cpus);
    n = run_case("ADNN_NUM_THREADS", "1", TWO_CONTEXTS, text, sizeof text, threads,
                 sizeof threads);
    ok(n == 0, "ADNN_NUM_THREADS=1 does not warn");
    is_str(threads, "1 (from ADNN_NUM_THREADS)", "ADNN_NUM_THREADS=1 is used as given");
  }
  return tap_done();
}
