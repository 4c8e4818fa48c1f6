/* The loader's checks of plugin files (core/loader.c), in one plugin
 * directory built in a temporary directory:
 *
 *   ww/ (mode 0777)            -> WARN: the directory is world-writable
 *       adnn-wwfile.so (0666)  -> WARN: the file is world-writable; still loads
 *       adnn-foreign.so        -> WARN: owned by uid 65534 (only when run as
 *                                 root, who can chown; skipped otherwise)
 *       adnn-dangling.so       -> INFO: a dangling symbolic link, skipped
 *       adnn-loop.so           -> INFO: a symbolic link to itself, skipped
 *       adnn-dir.so/           -> INFO: a directory, skipped
 *   noread/adnn-noread.so (0000) -> LOAD_FAILED "cannot be read: Permission
 *                                 denied", in a child process; root ignores
 *                                 mode bits, so a root child first switches
 *                                 to uid/gid 65534 (skipped if it cannot).
 *
 * The plugin files are copies of t/plugins/adnn-unavail.so (probe: unavailable). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <adnn.h>

#include "t/tap.h"
#include "t/tmpdir.h"

#define MAXLOG 256
static char lines[MAXLOG][1024];
static adnn_log_level levels[MAXLOG];
static int nlines;

static void sink(adnn_log_level level, const char *source, const char *message, void *user) {
  (void)user;
  if (nlines < MAXLOG) {
    levels[nlines] = level;
    snprintf(lines[nlines++], sizeof lines[0], "%s: %s", source, message);
  }
}

/* How many lines at `level` contain both needles. */
static int count(adnn_log_level level, const char *a, const char *b) {
  int n = 0;
  for (int i = 0; i < nlines; i++)
    if (levels[i] == level && strstr(lines[i], a) && (b == NULL || strstr(lines[i], b))) n++;
  return n;
}

static void expect_line(adnn_log_level level, const char *a, const char *b, const char *what) {
  int n = count(level, a, b);
  if (!ok(n == 1, "%s (one %s line)", what, level == ADNN_LOG_WARN ? "WARN" : "INFO")) {
    diag("  %d matching lines for '%s' + '%s'; the log:", n, a, b ? b : "");
    for (int i = 0; i < nlines; i++) diag("  [%d] %s", (int)levels[i], lines[i]);
  }
}

static const adnn_backend_info *by_path(const char *path) {
  size_t n = 0;
  adnn_backend_count(&n);
  for (size_t i = 0; i < n; i++) {
    const adnn_backend_info *b;
    if (adnn_backend_get(i, &b) == ADNN_STATUS_SUCCESS && strcmp(b->path, path) == 0) return b;
  }
  return NULL;
}

/* The child: loads only `dir` (as uid 65534 when root) and writes the
 * record's state and reason to fd, or "SKIP reason". */
static void unreadable_child(const char *dir, const char *path, int fd) {
  char msg[2048];
  if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) {
    int len = snprintf(msg, sizeof msg, "SKIP running as root and cannot switch to uid 65534: %s",
                       strerror(errno));
    if (write(fd, msg, (size_t)len) != len) _exit(2);
    _exit(0);
  }
  setenv("ADNN_PLUGIN_PATH", dir, 1);
  const adnn_backend_info *b = by_path(path);
  int len = snprintf(msg, sizeof msg, "%d %s", b ? (int)b->state : -1, b ? b->reason : "(not listed)");
  if (write(fd, msg, (size_t)len) != len) _exit(2);
  _exit(0);
}

int main(void) {
  const char *build = getenv("ADNN_TEST_BUILDDIR");
  if (build == NULL || *build == '\0') return tap_skip_all("ADNN_TEST_BUILDDIR is not set");
  char plugin[1024];
  snprintf(plugin, sizeof plugin, "%s/t/plugins/.libs/adnn-unavail.so", build);
  if (access(plugin, R_OK) != 0) return tap_skip_all("the test plugins are not built");

  char root[1024], ww[1100], noread[1100], target[PATH_MAX];
  if (!tmpdir_make(root, sizeof root, "adnn-secure")) tap_bail("cannot create a temp dir");
  chmod(root, 0755); /* the unprivileged child must reach noread/ */
  snprintf(ww, sizeof ww, "%s/ww", root);
  snprintf(noread, sizeof noread, "%s/noread", root);
  int made = mkdir(ww, 0755) == 0 && chmod(ww, 0777) == 0 && mkdir(noread, 0755) == 0;
  char wwfile[PATH_MAX], foreign[PATH_MAX], dangling[PATH_MAX], loop[PATH_MAX], dir[PATH_MAX],
      unreadable[PATH_MAX];
  snprintf(wwfile, sizeof wwfile, "%s/adnn-wwfile.so", ww);
  snprintf(foreign, sizeof foreign, "%s/adnn-foreign.so", ww);
  snprintf(dangling, sizeof dangling, "%s/adnn-dangling.so", ww);
  snprintf(loop, sizeof loop, "%s/adnn-loop.so", ww);
  snprintf(dir, sizeof dir, "%s/adnn-dir.so", ww);
  snprintf(unreadable, sizeof unreadable, "%s/adnn-noread.so", noread);
  made = made && tmpdir_copy(plugin, wwfile) && chmod(wwfile, 0666) == 0;
  int as_root = geteuid() == 0;
  made = made && tmpdir_copy(plugin, foreign) && chmod(foreign, 0755) == 0;
  if (as_root) made = made && chown(foreign, 65534, 65534) == 0;
  snprintf(target, sizeof target, "%s/does-not-exist.so", root);
  made = made && symlink(target, dangling) == 0 && symlink(loop, loop) == 0 && mkdir(dir, 0755) == 0;
  made = made && tmpdir_copy(plugin, unreadable) && chmod(unreadable, 0) == 0;
  if (!made) tap_bail("cannot build the plugin directories");

  /* The unreadable plugin, in a child, before this process loads anything. */
  int fd[2];
  if (pipe(fd) != 0) tap_bail("pipe failed");
  pid_t pid = fork();
  if (pid < 0) tap_bail("fork failed");
  if (pid == 0) {
    close(fd[0]);
    unreadable_child(noread, unreadable, fd[1]);
  }
  close(fd[1]);
  char reply[2048];
  size_t got = 0;
  ssize_t r;
  while ((r = read(fd[0], reply + got, sizeof reply - 1 - got)) > 0) got += (size_t)r;
  reply[got] = '\0';
  close(fd[0]);
  int status;
  waitpid(pid, &status, 0);
  ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the unreadable-plugin child exits 0");
  if (strncmp(reply, "SKIP ", 5) == 0) {
    tap_skip(reply + 5);
    tap_skip(reply + 5);
  } else {
    ok(atoi(reply) == (int)ADNN_BACKEND_LOAD_FAILED, "an unreadable plugin fails to load (%s)",
       reply);
    if (!ok(strstr(reply, "cannot be read: Permission denied") != NULL &&
                strstr(reply, "which was not found") == NULL,
            "its reason is the real errno, not a missing dependency"))
      diag("  reason: %s", reply);
  }

  setenv("ADNN_PLUGIN_PATH", ww, 1);
  adnn_log_set_level(ADNN_LOG_INFO);
  adnn_log_set_callback(sink, NULL);
  size_t n = 0;
  adnn_backend_count(&n);

  expect_line(ADNN_LOG_WARN, "plugin directory", "writable by every user",
              "a world-writable plugin directory warns");
  expect_line(ADNN_LOG_WARN, "adnn-wwfile.so is writable by every user", "chmod o-w",
              "a world-writable plugin file warns and says what to fix");
  if (as_root)
    expect_line(ADNN_LOG_WARN, "adnn-foreign.so is owned by user 65534", "chown",
                "a plugin owned by another user warns and says what to fix");
  else
    tap_skip("not root: cannot give a file to another user");
  ok(count(ADNN_LOG_WARN, "adnn-foreign.so is owned", NULL) + count(ADNN_LOG_WARN, "adnn-wwfile.so is owned", NULL) == (as_root ? 1 : 0),
     "files owned by this user do not warn about their owner");
  const adnn_backend_info *b = by_path(wwfile);
  ok(b != NULL && b->state == ADNN_BACKEND_UNAVAILABLE,
     "the world-writable plugin still loads (its probe says unavailable): %s",
     b ? b->reason : "(not listed)");
  expect_line(ADNN_LOG_INFO, "skipping", "adnn-dangling.so: it is a dangling symbolic link",
              "a dangling symbolic link is skipped with a reason");
  expect_line(ADNN_LOG_INFO, "skipping", "adnn-loop.so: it is a symbolic link loop",
              "a symbolic link loop is skipped with a reason");
  expect_line(ADNN_LOG_INFO, "skipping", "adnn-dir.so: it is a directory",
              "a directory named *.so is skipped with a reason");
  is_int(n, 2, "two plugins are listed (the world-writable and the foreign one)");

  chmod(ww, 0755);
  tmpdir_remove(root);
  return tap_done();
}
