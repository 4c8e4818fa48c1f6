/* Logging: levels, the callback (messages, source, user data), restoring
 * stderr, and ADNN_LOG read from the environment. */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <adnn.h>

#include "t/tap.h"

#define MAXMSG 256

typedef struct logged {
  adnn_log_level level;
  char source[64];
  char message[1024];
} logged;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static logged msgs[MAXMSG];
static int nmsgs;
static void *seen_user_data;

static void sink(adnn_log_level level, const char *source, const char *message, void *user) {
  pthread_mutex_lock(&lock);
  seen_user_data = user;
  if (nmsgs < MAXMSG) {
    msgs[nmsgs].level = level;
    snprintf(msgs[nmsgs].source, sizeof msgs[nmsgs].source, "%s", source ? source : "(null)");
    snprintf(msgs[nmsgs].message, sizeof msgs[nmsgs].message, "%s", message ? message : "(null)");
  }
  nmsgs++;
  pthread_mutex_unlock(&lock);
}

/* The index of the first message at `level` from `source` containing `needle`, or -1. */
static int find(adnn_log_level level, const char *source, const char *needle) {
  for (int i = 0; i < nmsgs && i < MAXMSG; i++)
    if (msgs[i].level == level && strcmp(msgs[i].source, source) == 0 &&
        strstr(msgs[i].message, needle) != NULL)
      return i;
  return -1;
}

static void dump(void) {
  for (int i = 0; i < nmsgs && i < MAXMSG; i++)
    diag("  logged [%d] %s: %s", (int)msgs[i].level, msgs[i].source, msgs[i].message);
}

/* Runs this program again with ADNN_LOG=value; the child exits with the level. */
static int level_in_child(const char *self, const char *value) {
  pid_t pid = fork();
  if (pid == 0) {
    if (value) setenv("ADNN_LOG", value, 1);
    else unsetenv("ADNN_LOG");
    execl(self, self, "--print-level", (char *)NULL);
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--print-level") == 0) return (int)adnn_log_get_level();

  const char *env = getenv("ADNN_LOG");
  if (env == NULL || *env == '\0')
    is_int(adnn_log_get_level(), ADNN_LOG_WARN, "the default level is WARN");
  else
    diag("ADNN_LOG=%s is set; not checking the default", env);

  /* Install the callback before the first backend call: loading logs every
   * plugin at INFO. */
  int token = 42;
  is_status(adnn_log_set_callback(sink, &token), ADNN_STATUS_SUCCESS, "install a callback");
  is_status(adnn_log_set_level(ADNN_LOG_INFO), ADNN_STATUS_SUCCESS, "set level INFO");
  is_int(adnn_log_get_level(), ADNN_LOG_INFO, "level is INFO");
  size_t count = 0;
  adnn_backend_count(&count);
  ok(nmsgs > 0, "loading the plugins logged %d message(s)", nmsgs);
  int i = find(ADNN_LOG_INFO, "core", "plugin cpu");
  ok(i >= 0, "an INFO message from core describes the cpu plugin");
  if (i >= 0) contains(msgs[i].message, "ready", "  and says it is ready");
  else dump();
  ok(find(ADNN_LOG_INFO, "core", "auto ->") >= 0, "an INFO message says what auto picks");
  ok(seen_user_data == &token, "the callback gets its user_data");
  for (int j = 0; j < nmsgs && j < MAXMSG; j++)
    if (msgs[j].level < ADNN_LOG_ERROR || msgs[j].level > ADNN_LOG_INFO ||
        strlen(msgs[j].message) == 0 || msgs[j].message[strlen(msgs[j].message) - 1] == '\n') {
      ok(0, "message %d has a valid level, is not empty and has no trailing newline", j);
      dump();
      break;
    }

  /* Failures are logged at DEBUG only. */
  nmsgs = 0;
  adnn_tensor_desc d;
  adnn_tensor_desc_init(&d, ADNN_DTYPE_F32, 11, NULL);
  is_int(nmsgs, 0, "at INFO a failure logs nothing");
  is_status(adnn_log_set_level(ADNN_LOG_DEBUG), ADNN_STATUS_SUCCESS, "set level DEBUG");
  is_int(adnn_log_get_level(), ADNN_LOG_DEBUG, "level is DEBUG");
  adnn_tensor_desc_init(&d, ADNN_DTYPE_F32, 11, NULL);
  i = find(ADNN_LOG_DEBUG, "core", "rank 11");
  ok(i >= 0, "at DEBUG the failure is logged from core with its message");
  if (i >= 0) contains(msgs[i].message, "BAD_PARAM", "  with the status name");
  else dump();

  is_status(adnn_log_set_level(ADNN_LOG_ERROR), ADNN_STATUS_SUCCESS, "set level ERROR");
  nmsgs = 0;
  adnn_tensor_desc_init(&d, ADNN_DTYPE_F32, 12, NULL);
  is_int(nmsgs, 0, "at ERROR a failure logs nothing");
  is_status(adnn_log_set_level(ADNN_LOG_OFF), ADNN_STATUS_SUCCESS, "set level OFF");
  is_int(adnn_log_get_level(), ADNN_LOG_OFF, "level is OFF");
  adnn_tensor_desc_init(&d, ADNN_DTYPE_F32, 13, NULL);
  is_int(nmsgs, 0, "at OFF nothing is logged");
  is_status(adnn_log_set_level((adnn_log_level)5), ADNN_STATUS_BAD_PARAM, "level 5 is refused");
  is_int(adnn_log_get_level(), ADNN_LOG_OFF, "and the level is unchanged");

  /* Restoring NULL sends messages to stderr again (captured in a temp file). */
  is_status(adnn_log_set_callback(NULL, NULL), ADNN_STATUS_SUCCESS, "restore stderr");
  adnn_log_set_level(ADNN_LOG_DEBUG);
  const char *tmpdir = getenv("TMPDIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/adnn-log-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
  int fd = mkstemp(path);
  ok(fd >= 0, "temp file %s", path);
  if (fd >= 0) {
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    adnn_tensor_desc_init(&d, ADNN_DTYPE_F32, 14, NULL);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char buf[4096] = "";
    ssize_t got = pread(fd, buf, sizeof buf - 1, 0);
    buf[got > 0 ? got : 0] = '\0';
    close(fd);
    unlink(path);
    contains(buf, "rank 14", "the failure went to stderr");
    contains(buf, "core", "with its source");
    is_int(nmsgs, 0, "and not to the removed callback");
  }
  adnn_log_set_level(ADNN_LOG_WARN);

  /* ADNN_LOG sets the initial level. */
  const char *self = "/proc/self/exe";
  char exe[4096];
  ssize_t n = readlink(self, exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    is_int(level_in_child(exe, "debug"), ADNN_LOG_DEBUG, "ADNN_LOG=debug");
    is_int(level_in_child(exe, "info"), ADNN_LOG_INFO, "ADNN_LOG=info");
    is_int(level_in_child(exe, "warn"), ADNN_LOG_WARN, "ADNN_LOG=warn");
    is_int(level_in_child(exe, "ERROR"), ADNN_LOG_ERROR, "ADNN_LOG=ERROR (case-insensitive)");
    is_int(level_in_child(exe, "off"), ADNN_LOG_OFF, "ADNN_LOG=off");
    is_int(level_in_child(exe, "bogus"), ADNN_LOG_WARN, "ADNN_LOG=bogus keeps WARN");
    is_int(level_in_child(exe, NULL), ADNN_LOG_WARN, "ADNN_LOG unset gives WARN");
  } else {
    tap_skip("cannot find this program to run it again");
  }
  return tap_done();
}
