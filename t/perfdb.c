/*
 * The performance database: core/perfdb.c is compiled into this program (with
 * the core's logging and error pieces) so that the tuner's internal interface
 * (adnn__perfdb_lookup/store) can be tested next to the public API, and so
 * that adnn__perfdb_reset() can give each scenario a fresh process state.
 * "New process" checks really fork. Every file lives in a temporary directory;
 * $HOME is never written.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/perfdb.h"
#include "t/tap.h"
#include "t/tmpdir.h"

void adnn__perfdb_reset(void); /* core/perfdb.c, for tests */

/* snprintf for paths and commands: bails out instead of truncating. */
static void pathf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void pathf(char *buf, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, size, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= size) tap_bail("a path is too long");
}

static void must_write(const char *path, const char *text) {
  if (!tmpdir_write(path, text)) tap_bail("cannot write a test file");
}

/* ---- captured warnings -------------------------------------------------- */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int warnings = 0;
static char last_warning[2048];

static void on_log(adnn_log_level level, const char *source, const char *message, void *user) {
  (void)user;
  (void)source;
  if (level != ADNN_LOG_WARN) return;
  pthread_mutex_lock(&log_lock);
  warnings++;
  snprintf(last_warning, sizeof last_warning, "%s", message);
  pthread_mutex_unlock(&log_lock);
}

static void reset_warnings(void) {
  pthread_mutex_lock(&log_lock);
  warnings = 0;
  last_warning[0] = '\0';
  pthread_mutex_unlock(&log_lock);
}

/* A fresh process state with the given cache directory and system file
 * (NULL: none). */
static void fresh_state(const char *cache_dir, const char *system_file) {
  unsetenv("XDG_CACHE_HOME");
  if (cache_dir) setenv("ADNN_CACHE_DIR", cache_dir, 1);
  else unsetenv("ADNN_CACHE_DIR");
  setenv("ADNN_SYSTEM_PERFDB", system_file ? system_file : "", 1);
  adnn__perfdb_reset();
  reset_warnings();
}

static adnn__perfdb_entry make_entry(const char *alg, double t, size_t ws) {
  adnn__perfdb_entry e;
  memset(&e, 0, sizeof e);
  snprintf(e.algorithm, sizeof e.algorithm, "%s", alg);
  e.time_ms = t;
  e.workspace_bytes = ws;
  return e;
}

static int same_entry(const adnn__perfdb_entry *a, const adnn__perfdb_entry *b) {
  double d = a->time_ms - b->time_ms;
  if (d < 0) d = -d;
  return strcmp(a->algorithm, b->algorithm) == 0 && d <= 1e-8 * (b->time_ms + 1e-300) &&
         a->workspace_bytes == b->workspace_bytes;
}

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  size_t n;
  while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += n;
    if (cap - len < 2) {
      char *nb = realloc(buf, cap * 2);
      if (nb == NULL) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf) buf[len] = '\0';
  return buf;
}

static int count_lines(const char *text, int entries_only) {
  int n = 0;
  for (const char *p = text; p && *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    if (!entries_only || (len > 0 && p[0] != '#' && strncmp(p, "adnn-perfdb ", 12) != 0)) n++;
    p = nl ? nl + 1 : p + len;
  }
  return n;
}

#define KEY_V1 "conv2d n1c3h8w8 k3 s1 p1 f32 nchw\tcpu\tIntel Xeon avx512\tadnn 1.0.0"
#define KEY_V0 "conv2d n1c3h8w8 k3 s1 p1 f32 nchw\tcpu\tIntel Xeon avx512\tadnn 0.9.0"

static char root[4096];

static void path_in(char *buf, size_t size, const char *rel) {
  pathf(buf, size, "%s/%s", root, rel);
}

/* ---- scenarios ---------------------------------------------------------- */

static void test_paths(void) {
  char dir[4096], buf[4096];
  const char *up, *sp;
  size_t un = 99, sn = 99;

  path_in(dir, sizeof dir, "paths/explicit");
  fresh_state(dir, NULL);
  is_status(adnn_perfdb_info(&up, &un, &sp, &sn), ADNN_STATUS_SUCCESS, "info succeeds");
  pathf(buf, sizeof buf, "%s/perfdb.txt", dir);
  is_str(up, buf, "ADNN_CACHE_DIR decides the user file");
  is_int(un, 0, "no user entries yet");
  ok(sp == NULL, "no system file when ADNN_SYSTEM_PERFDB is empty");
  is_int(sn, 0, "no system entries");
  is_status(adnn_perfdb_info(NULL, NULL, NULL, NULL), ADNN_STATUS_SUCCESS, "info takes NULLs");
  struct stat sb;
  ok(stat(dir, &sb) != 0, "looking does not create the directory");

  path_in(dir, sizeof dir, "paths/xdg");
  fresh_state(NULL, NULL);
  setenv("XDG_CACHE_HOME", dir, 1);
  adnn__perfdb_reset();
  adnn_perfdb_info(&up, NULL, NULL, NULL);
  pathf(buf, sizeof buf, "%s/adnn/perfdb.txt", dir);
  is_str(up, buf, "else $XDG_CACHE_HOME/adnn");

  const char *old_home = getenv("HOME");
  char *saved_home = old_home ? strdup(old_home) : NULL;
  path_in(dir, sizeof dir, "paths/home");
  setenv("XDG_CACHE_HOME", "relative/ignored", 1);
  setenv("HOME", dir, 1);
  adnn__perfdb_reset();
  adnn_perfdb_info(&up, NULL, NULL, NULL);
  pathf(buf, sizeof buf, "%s/.cache/adnn/perfdb.txt", dir);
  is_str(up, buf, "else $HOME/.cache/adnn (a relative XDG_CACHE_HOME is ignored)");

  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  adnn__perfdb_reset();
  adnn_perfdb_info(&up, NULL, NULL, NULL);
  ok(up == NULL, "no user file without any of the variables");
  adnn__perfdb_entry e = make_entry("direct", 1.0, 0), got;
  adnn__perfdb_store("nohome", &e);
  ok(adnn__perfdb_lookup("nohome", &got, NULL) && same_entry(&got, &e),
     "without a cache directory, stores still work in memory");
  if (saved_home) setenv("HOME", saved_home, 1);
  free(saved_home);
}

static void test_round_trip(void) {
  char dir[4096], file[4096];
  path_in(dir, sizeof dir, "rt/a/b/adnn");
  pathf(file, sizeof file, "%s/perfdb.txt", dir);
  fresh_state(dir, NULL);

  adnn__perfdb_entry e = make_entry("winograd_f2x3", 0.123456789, 1 << 20), got;
  const char *src = "unset";
  ok(!adnn__perfdb_lookup(KEY_V1, &got, &src), "an empty database misses");
  ok(src == NULL, "a miss sets source to NULL");
  adnn__perfdb_store(KEY_V1, &e);
  ok(adnn__perfdb_lookup(KEY_V1, &got, &src) && same_entry(&got, &e), "hit after store");
  is_str(src, "memory", "this process's entry comes from memory");
  is_int(warnings, 0, "no warnings");

  struct stat sb;
  ok(stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode) && (sb.st_mode & 0777) == 0700,
     "the cache directory was created (with parents) with mode 0700");
  char *text = read_all(file);
  ok(text && strncmp(text, "# adnn performance database\n", 28) == 0,
     "file starts with the header");
  contains(text, "\nadnn-perfdb 1\n", "file carries the format version");
  contains(text, KEY_V1 "\twinograd_f2x3\t0.123456789\t1048576\n",
           "the entry is one tab-separated line");
  free(text);

  /* A new process sees it from the user file. */
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    adnn__perfdb_reset();
    adnn__perfdb_entry g;
    const char *s = NULL;
    int hit = adnn__perfdb_lookup(KEY_V1, &g, &s);
    _exit(hit && same_entry(&g, &e) && s && strcmp(s, "user") == 0 ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
     "a new process finds the entry in the user file");

  adnn__perfdb_reset();
  ok(adnn__perfdb_lookup(KEY_V1, &got, &src) && same_entry(&got, &e), "hit after reload");
  is_str(src, "user", "source is the user file");
  size_t un = 0;
  adnn_perfdb_info(NULL, &un, NULL, NULL);
  is_int(un, 1, "info counts one user entry");

  /* Overwrite (exhaustive mode) replaces the entry. */
  adnn__perfdb_entry e2 = make_entry("im2col_gemm", 0.5, 4096);
  adnn__perfdb_store(KEY_V1, &e2);
  adnn__perfdb_reset();
  ok(adnn__perfdb_lookup(KEY_V1, &got, NULL) && same_entry(&got, &e2),
     "a later store replaces the entry");
  adnn_perfdb_info(NULL, &un, NULL, NULL);
  is_int(un, 1, "still one entry");

  /* Entries another process stores later become visible without a reset. */
  pid = fork();
  if (pid == 0) {
    adnn__perfdb_reset();
    adnn__perfdb_entry x = make_entry("direct", 2.0, 0);
    adnn__perfdb_store("stored-by-another-process", &x);
    _exit(0);
  }
  waitpid(pid, &status, 0);
  ok(adnn__perfdb_lookup("stored-by-another-process", &got, &src) &&
         strcmp(got.algorithm, "direct") == 0,
     "a miss re-reads a user file that changed on disk");

  /* A key that cannot be a line stays in memory. */
  adnn__perfdb_entry e3 = make_entry("direct", 1.0, 0);
  adnn__perfdb_store("bad\nkey", &e3);
  adnn__perfdb_store("#comment-like", &e3);
  ok(adnn__perfdb_lookup("bad\nkey", &got, &src) && strcmp(src, "memory") == 0,
     "a key with a newline is kept in memory");
  text = read_all(file);
  ok(text && !strstr(text, "bad\n") && !strstr(text, "\n#comment-like"),
     "and never written to the file");
  free(text);
  is_int(warnings, 0, "no warnings in the round trip");
}

static void test_system_and_versions(void) {
  char dir[4096], sys[4096], file[4096];
  path_in(dir, sizeof dir, "sys/user");
  path_in(sys, sizeof sys, "system-perfdb.txt");
  pathf(file, sizeof file, "%s/perfdb.txt", dir);
  ok(tmpdir_write(sys, "# adnn performance database\nadnn-perfdb 1\n"
                       "shared\tsys_alg\t1\t0\nsys-only\tsys_alg2\t2.5\t7\n"),
     "wrote a system database");
  fresh_state(dir, sys);
  adnn__perfdb_entry got, mine = make_entry("user_alg", 0.75, 11);
  const char *src;
  ok(adnn__perfdb_lookup("shared", &got, &src) && strcmp(got.algorithm, "sys_alg") == 0,
     "system entry found");
  is_str(src, "system", "source is system");
  adnn__perfdb_store("shared", &mine);
  adnn__perfdb_reset();
  ok(adnn__perfdb_lookup("shared", &got, &src) && same_entry(&got, &mine),
     "user entry overrides system");
  is_str(src, "user", "source is user");
  ok(adnn__perfdb_lookup("sys-only", &got, &src) && got.workspace_bytes == 7,
     "other system entries remain");
  const char *sp;
  size_t sn = 0, un = 0;
  adnn_perfdb_info(NULL, &un, &sp, &sn);
  is_str(sp, sys, "info names the system file");
  is_int(sn, 2, "info counts system entries");
  is_int(un, 1, "info counts user entries");
  char *systext = read_all(sys);
  contains(systext, "shared\tsys_alg\t1\t0\n", "the system file is never written");
  free(systext);

  /* An entry for another adnn version is a different key: not returned, and
   * kept through later stores. */
  adnn__perfdb_entry old = make_entry("old_alg", 9.0, 0);
  adnn__perfdb_store(KEY_V0, &old);
  adnn__perfdb_reset();
  ok(!adnn__perfdb_lookup(KEY_V1, &got, NULL), "an entry for another version is not returned");
  adnn__perfdb_entry cur = make_entry("new_alg", 1.0, 0);
  adnn__perfdb_store(KEY_V1, &cur);
  adnn__perfdb_store("another", &cur);
  adnn__perfdb_reset();
  ok(adnn__perfdb_lookup(KEY_V1, &got, NULL) && strcmp(got.algorithm, "new_alg") == 0,
     "the current version's entry is found");
  ok(adnn__perfdb_lookup(KEY_V0, &got, NULL) && strcmp(got.algorithm, "old_alg") == 0,
     "the other version's entry is still there");
  char *text = read_all(file);
  contains(text, KEY_V0 "\told_alg\t9\t0\n", "other-version line kept in the file");
  free(text);
  is_int(warnings, 0, "no warnings");
}

static void test_corrupt(void) {
  char dir[4096], file[4096];
  path_in(dir, sizeof dir, "corrupt");
  mkdir(dir, 0700);
  pathf(file, sizeof file, "%s/perfdb.txt", dir);
  char *longline = malloc(9100);
  memset(longline, 'x', 9000);
  strcpy(longline + 9000, "\talg\t1\t1\n");
  char *text = NULL;
  if (asprintf(&text,
               "# adnn performance database\n"
               "\n"
               "adnn-perfdb 1\n"
               "good1\tdirect\t1.5\t0\n"
               "garbage without tabs\n"              /* line 5 */
               "k\talg\tnot-a-number\t5\n"
               "k\talg\t1.0\t-5\n"
               "k\t\t1.0\t5\n"
               "\talg\t1.0\t5\n"
               "k\talg\t1.0\t5 trailing\n"
               "k\talgorithm-name-that-is-much-longer-than-sixty-three-characters-long\t1\t1\n"
               "%s"
               "good\twith\ttabs\tin\tkey\twinograd\t2\t64\n"
               "k\talg\tinf\t5\n"
               "good2\tim2col\t3\t128\n"
               "truncated\tdirect\t1.0\t10",        /* no newline: cut short */
               longline) < 0)
    tap_bail("asprintf");
  free(longline);
  ok(tmpdir_write(file, text), "wrote a database with garbage and a truncated last line");
  free(text);
  fresh_state(dir, NULL);
  adnn__perfdb_entry got;
  ok(adnn__perfdb_lookup("good1", &got, NULL) && got.time_ms == 1.5,
     "valid entry before garbage found");
  ok(adnn__perfdb_lookup("good2", &got, NULL) && got.workspace_bytes == 128,
     "valid entry after garbage found");
  ok(adnn__perfdb_lookup("good\twith\ttabs\tin\tkey", &got, NULL) &&
         strcmp(got.algorithm, "winograd") == 0,
     "a key with tabs: the last three fields are the entry");
  ok(!adnn__perfdb_lookup("k", &got, NULL), "no corrupt line was taken");
  ok(!adnn__perfdb_lookup("truncated", &got, NULL), "the truncated last line is skipped");
  is_int(warnings, 1, "one warning for the file");
  contains(last_warning, file, "the warning names the file");
  contains(last_warning, "line 5", "and the first bad line");
  contains(last_warning, "skipped 10 corrupt lines", "and how many lines were skipped");

  adnn__perfdb_entry e = make_entry("direct", 4.0, 0);
  adnn__perfdb_store("good3", &e);
  adnn__perfdb_reset();
  reset_warnings();
  size_t un = 0;
  adnn_perfdb_info(NULL, &un, NULL, NULL);
  is_int(un, 4, "after a store the file holds the 4 valid entries");
  is_int(warnings, 0, "and no corrupt line any more");

  /* A file of another format version is ignored as a whole, never rewritten. */
  const char *v2 = "# adnn performance database\nadnn-perfdb 2\nfuture\tnew\tformat\t1\t2\t3\n"
                   "good1\tdirect\t1.5\t0\n";
  ok(tmpdir_write(file, v2), "wrote a format-2 file");
  fresh_state(dir, NULL);
  ok(!adnn__perfdb_lookup("good1", &got, NULL), "entries of an unknown format version are ignored");
  is_int(warnings, 1, "one warning");
  contains(last_warning, "format version 2", "the warning says why");
  adnn__perfdb_store("good1", &e);
  adnn__perfdb_store("good9", &e);
  const char *src;
  ok(adnn__perfdb_lookup("good9", &got, &src) && strcmp(src, "memory") == 0,
     "stores still work in memory");
  char *now = read_all(file);
  is_str(now, v2, "the format-2 file is left exactly as it was");
  free(now);
  is_int(warnings, 2, "plus one warning that the file is not written");

  /* Not a database at all. */
  ok(tmpdir_write(file, "hello world\n"), "wrote a file that is not a database");
  fresh_state(dir, NULL);
  ok(!adnn__perfdb_lookup("hello", &got, NULL), "nothing taken from it");
  contains(last_warning, "not an adnn performance database", "warned");
  adnn__perfdb_store("x", &e);
  now = read_all(file);
  is_str(now, "hello world\n", "and it is never overwritten");
  free(now);

  /* An empty file. */
  ok(tmpdir_write(file, ""), "wrote an empty file");
  fresh_state(dir, NULL);
  adnn__perfdb_store("after-empty", &e);
  adnn__perfdb_reset();
  ok(adnn__perfdb_lookup("after-empty", &got, &src) && strcmp(src, "user") == 0,
     "an empty file is an empty database");
  is_int(warnings, 0, "without warnings");

  /* A broken system file never breaks anything. */
  char sys[4096];
  path_in(sys, sizeof sys, "corrupt/sys.txt");
  ok(tmpdir_write(sys, "adnn-perfdb 1\nsys\talg\t1\t1\n\x01\x02\xff\xfe\n"),
     "wrote a broken system file");
  fresh_state(dir, sys);
  ok(adnn__perfdb_lookup("sys", &got, &src) && strcmp(src, "system") == 0,
     "its valid entries are used");
  is_int(warnings, 1, "with one warning");
}

/* Whether the (possibly root) process can create files in `dir`. */
static int can_write_in(const char *dir) {
  char probe[4096];
  pathf(probe, sizeof probe, "%s/probe", dir);
  int fd = open(probe, O_WRONLY | O_CREAT, 0600);
  if (fd < 0) return 0;
  close(fd);
  unlink(probe);
  return 1;
}

static void check_degraded(const char *what, const char *dir) {
  fresh_state(dir, NULL);
  adnn__perfdb_entry got, e = make_entry("direct", 1.25, 8);
  const char *src = NULL;
  ok(!adnn__perfdb_lookup("a", &got, NULL), "%s: lookup misses without error", what);
  adnn__perfdb_store("a", &e);
  adnn__perfdb_store("b", &e);
  ok(adnn__perfdb_lookup("a", &got, &src) && same_entry(&got, &e), "%s: store works in memory",
     what);
  is_str(src, "memory", "%s: from memory", what);
  ok(adnn__perfdb_lookup("b", &got, NULL), "%s: second store too", what);
  char imp[4096];
  path_in(imp, sizeof imp, "import-small.txt");
  must_write(imp, "adnn-perfdb 1\nimported\tdirect\t3\t0\n");
  size_t n = 0;
  is_status(adnn_perfdb_import(imp, &n), ADNN_STATUS_EXECUTION_FAILED,
            "%s: import reports that the user database was not written", what);
  contains(adnn_last_error(), "used by this process only", "%s: the message says so", what);
  is_int(n, 1, "%s: the entry was imported", what);
  ok(adnn__perfdb_lookup("imported", &got, NULL), "%s: and is in memory", what);
  char exp[4096];
  path_in(exp, sizeof exp, "degraded-export.txt");
  is_status(adnn_perfdb_export(exp), ADNN_STATUS_SUCCESS, "%s: export still works", what);
  char *text = read_all(exp);
  contains(text, "\nimported\tdirect\t3\t0\n", "%s: export holds memory entries", what);
  free(text);
  is_int(warnings, 1, "%s: exactly one warning", what);
  contains(last_warning, "performance database disabled", "%s: it says the database is disabled",
           what);
  contains(last_warning, "tuning results stay in memory", "%s: and what happens instead", what);
  diag("%s: %s", what, last_warning);
}

static void test_unwritable(void) {
  /* A cache directory below a regular file: mkdir fails even for root. */
  char file[4096], dir[4096];
  path_in(file, sizeof file, "a-regular-file");
  must_write(file, "x\n");
  pathf(dir, sizeof dir, "%s/adnn", file);
  check_degraded("cache dir below a file", dir);

  /* A read-only directory, where the permission bits bind (not as root). */
  path_in(dir, sizeof dir, "readonly");
  mkdir(dir, 0700);
  char db[4096];
  pathf(db, sizeof db, "%s/perfdb.txt", dir);
  must_write(db, "adnn-perfdb 1\nexisting\tdirect\t1\t2\n");
  chmod(dir, 0500);
  if (can_write_in(dir)) {
    tap_skip("read-only directory: permission bits do not bind for this user (root)");
  } else {
    fresh_state(dir, NULL);
    adnn__perfdb_entry got;
    ok(adnn__perfdb_lookup("existing", &got, NULL),
       "read-only directory: existing entries are read");
    check_degraded("read-only directory", dir);
  }
  chmod(dir, 0700);

  /* An unreadable database file (not as root). */
  chmod(db, 0);
  FILE *probe = fopen(db, "r");
  if (probe != NULL) {
    fclose(probe);
    tap_skip("unreadable file: permission bits do not bind for this user (root)");
  } else {
    check_degraded("unreadable file", dir);
    chmod(db, 0600);
    char *text = read_all(db);
    contains(text, "existing\tdirect", "unreadable file: it was not overwritten");
    free(text);
  }
  chmod(db, 0600);
}

/* A log callback may call back into the database without deadlocking. */
static int reentered = 0;
static void reentrant_log(adnn_log_level level, const char *source, const char *message,
                          void *user) {
  size_t n = 0;
  adnn_perfdb_info(NULL, &n, NULL, NULL);
  adnn__perfdb_entry got;
  adnn__perfdb_lookup("anything", &got, NULL);
  reentered++;
  on_log(level, source, message, user);
}

static void test_reentrant_log(void) {
  char dir[4096], file[4096];
  path_in(dir, sizeof dir, "reentrant");
  mkdir(dir, 0700);
  pathf(file, sizeof file, "%s/perfdb.txt", dir);
  must_write(file, "adnn-perfdb 1\nbroken\n");
  fresh_state(dir, NULL);
  adnn_log_set_callback(reentrant_log, NULL);
  alarm(20); /* a deadlock fails the test instead of hanging it */
  adnn__perfdb_entry got;
  adnn__perfdb_lookup("x", &got, NULL);
  alarm(0);
  adnn_log_set_callback(on_log, NULL);
  ok(reentered == 1 && warnings == 1,
     "a log callback that calls into the database does not deadlock");
}

#define WRITERS 6
#define PER_WRITER 20

static void test_concurrent(void) {
  char dir[4096], file[4096];
  path_in(dir, sizeof dir, "concurrent/adnn");
  pathf(file, sizeof file, "%s/perfdb.txt", dir);
  fresh_state(dir, NULL);
  int gate[2];
  if (pipe(gate) != 0) tap_bail("pipe");
  pid_t pids[WRITERS];
  fflush(stdout);
  for (int w = 0; w < WRITERS; w++) {
    pids[w] = fork();
    if (pids[w] < 0) tap_bail("fork");
    if (pids[w] == 0) {
      close(gate[1]);
      char c;
      while (read(gate[0], &c, 1) < 0 && errno == EINTR) {
      }
      adnn__perfdb_reset(); /* a process of its own */
      int bad = 0;
      for (int i = 0; i < PER_WRITER; i++) {
        char key[128];
        pathf(key, sizeof key, "problem w%d i%d\tcpu\tdevice\tadnn 1.0.0", w, i);
        adnn__perfdb_entry e = make_entry(i % 2 ? "winograd" : "direct", w + i / 100.0, (size_t)i);
        adnn__perfdb_store(key, &e);
        adnn__perfdb_entry got;
        if (!adnn__perfdb_lookup(key, &got, NULL)) bad = 1;
      }
      _exit(bad || warnings ? 1 : 0);
    }
  }
  close(gate[0]);
  close(gate[1]); /* all children start now */
  int all_ok = 1;
  for (int w = 0; w < WRITERS; w++) {
    int status = 0;
    waitpid(pids[w], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) all_ok = 0;
  }
  ok(all_ok, "%d writer processes finished without warnings", WRITERS);

  adnn__perfdb_reset();
  reset_warnings();
  size_t un = 0;
  adnn_perfdb_info(NULL, &un, NULL, NULL);
  is_int(un, WRITERS * PER_WRITER, "all %d entries are in the file", WRITERS * PER_WRITER);
  is_int(warnings, 0, "the file parses without a corrupt line");
  int found = 0, right = 0;
  for (int w = 0; w < WRITERS; w++)
    for (int i = 0; i < PER_WRITER; i++) {
      char key[128];
      pathf(key, sizeof key, "problem w%d i%d\tcpu\tdevice\tadnn 1.0.0", w, i);
      adnn__perfdb_entry got;
      const char *src = NULL;
      if (adnn__perfdb_lookup(key, &got, &src) && strcmp(src, "user") == 0) {
        found++;
        if (got.workspace_bytes == (size_t)i &&
            strcmp(got.algorithm, i % 2 ? "winograd" : "direct") == 0)
          right++;
      }
    }
  is_int(found, WRITERS * PER_WRITER, "every entry is found in the user file");
  is_int(right, WRITERS * PER_WRITER, "with its own values");
  char *text = read_all(file);
  is_int(count_lines(text, 1), WRITERS * PER_WRITER, "the file has exactly one line per entry");
  free(text);
  /* No temporary file is left behind. */
  DIR *d = opendir(dir);
  int leftovers = 0;
  struct dirent *de;
  while (d && (de = readdir(d)) != NULL)
    if (strstr(de->d_name, ".tmp.")) leftovers++;
  if (d) closedir(d);
  is_int(leftovers, 0, "no temporary files left");
}

/* A writer waits for the lock: while another process holds perfdb.lock, a
 * store does not touch the file; once it is released, the store lands. */
static void test_lock_honored(void) {
  char dir[4096], lockp[4096], file[4096];
  path_in(dir, sizeof dir, "locked");
  mkdir(dir, 0700);
  pathf(lockp, sizeof lockp, "%s/perfdb.lock", dir);
  pathf(file, sizeof file, "%s/perfdb.txt", dir);
  fresh_state(dir, NULL);
  int lfd = open(lockp, O_RDWR | O_CREAT, 0600);
  if (lfd < 0 || flock(lfd, LOCK_EX) != 0) tap_bail("cannot take the lock");
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    adnn__perfdb_reset();
    adnn__perfdb_entry e = make_entry("direct", 1.0, 0);
    adnn__perfdb_store("waited-for-the-lock", &e);
    _exit(0);
  }
  usleep(300 * 1000);
  int status = 0;
  ok(waitpid(pid, &status, WNOHANG) == 0, "a store waits while another process holds the lock");
  struct stat sb;
  ok(stat(file, &sb) != 0, "and has not written the file");
  flock(lfd, LOCK_UN);
  close(lfd);
  waitpid(pid, &status, 0);
  adnn__perfdb_entry got;
  const char *src = NULL;
  ok(adnn__perfdb_lookup("waited-for-the-lock", &got, &src) && strcmp(src, "user") == 0,
     "after the lock is released the entry is in the file");
  is_int(warnings, 0, "without warnings");
}

#define THREADS 4
#define PER_THREAD 25

static void *thread_writer(void *arg) {
  int t = (int)(intptr_t)arg;
  for (int i = 0; i < PER_THREAD; i++) {
    char key[64];
    pathf(key, sizeof key, "thread %d key %d", t, i);
    adnn__perfdb_entry e = make_entry("direct", 1.0, (size_t)i), got;
    adnn__perfdb_store(key, &e);
    adnn__perfdb_lookup(key, &got, NULL);
  }
  return NULL;
}

static void test_threads(void) {
  char dir[4096];
  path_in(dir, sizeof dir, "threads");
  fresh_state(dir, NULL);
  pthread_t th[THREADS];
  for (int t = 0; t < THREADS; t++)
    pthread_create(&th[t], NULL, thread_writer, (void *)(intptr_t)t);
  for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
  adnn__perfdb_reset();
  size_t un = 0;
  adnn_perfdb_info(NULL, &un, NULL, NULL);
  is_int(un, THREADS * PER_THREAD, "threads of one process: all entries in the file");
  is_int(warnings, 0, "without warnings");
}

static void test_export_import(void) {
  char a[4096], b[4096], sys[4096], ex1[4096], ex2[4096];
  path_in(a, sizeof a, "fleet/tuner");
  path_in(b, sizeof b, "fleet/worker");
  path_in(sys, sizeof sys, "fleet/system.txt");
  path_in(ex1, sizeof ex1, "fleet/export1.txt");
  path_in(ex2, sizeof ex2, "fleet/export2.txt");
  path_in(ex2, sizeof ex2, "fleet");
  mkdir(ex2, 0700);
  path_in(ex2, sizeof ex2, "fleet/export2.txt");
  ok(tmpdir_write(sys, "adnn-perfdb 1\nsys1\tdirect\t1\t0\nboth\tsys_alg\t1\t0\n"),
     "wrote a system database");
  fresh_state(a, sys);
  adnn__perfdb_entry e1 = make_entry("winograd", 0.25, 100), e2 = make_entry("im2col", 0.5, 200);
  adnn__perfdb_store(KEY_V1, &e1);
  adnn__perfdb_store(KEY_V0, &e2);
  adnn__perfdb_store("both", &e2);
  is_status(adnn_perfdb_export(ex1), ADNN_STATUS_SUCCESS, "export succeeds");
  char *t1 = read_all(ex1);
  is_int(count_lines(t1, 1), 4, "export holds system, user and memory entries (one per key)");
  contains(t1, "\nboth\tim2col\t0.5\t200\n", "user entries override system ones in the export");
  contains(t1, "\nadnn-perfdb 1\n", "export is in the database format");
  struct stat sb;
  ok(stat(ex1, &sb) == 0 && (sb.st_mode & 0777) == 0644, "the export is world-readable (0644)");

  fresh_state(b, NULL);
  size_t n = 0;
  is_status(adnn_perfdb_import(ex1, &n), ADNN_STATUS_SUCCESS,
            "import into a fresh cache directory");
  is_int(n, 4, "4 entries imported");
  adnn__perfdb_reset();
  size_t un = 0;
  adnn_perfdb_info(NULL, &un, NULL, NULL);
  is_int(un, 4, "the worker's user database now has them");
  adnn__perfdb_entry got;
  const char *src;
  ok(adnn__perfdb_lookup(KEY_V1, &got, &src) && same_entry(&got, &e1) && strcmp(src, "user") == 0,
     "an imported entry is found in the user file");
  is_status(adnn_perfdb_export(ex2), ADNN_STATUS_SUCCESS, "re-export");
  char *t2 = read_all(ex2);
  is_str(t2, t1, "export -> import -> export gives the same file");
  free(t1);
  free(t2);

  /* Import merges: existing entries stay, same keys are replaced. */
  adnn__perfdb_entry mine = make_entry("mine", 7, 0);
  adnn__perfdb_store("worker-only", &mine);
  char upd[4096];
  path_in(upd, sizeof upd, "fleet/update.txt");
  must_write(upd, "# update\nadnn-perfdb 1\nsys1\tnewer\t0.1\t0\nbroken line\n");
  reset_warnings();
  is_status(adnn_perfdb_import(upd, &n), ADNN_STATUS_SUCCESS,
            "import with a corrupt line succeeds");
  is_int(n, 1, "the valid entry is imported");
  is_int(warnings, 1, "with one warning");
  contains(last_warning, "line 4", "naming the bad line");
  adnn__perfdb_reset();
  ok(adnn__perfdb_lookup("sys1", &got, NULL) && strcmp(got.algorithm, "newer") == 0,
     "imported entries replace the same keys");
  ok(adnn__perfdb_lookup("worker-only", &got, NULL), "other entries stay");

  /* Errors. */
  is_status(adnn_perfdb_export(NULL), ADNN_STATUS_BAD_PARAM_NULL, "export(NULL)");
  is_status(adnn_perfdb_import(NULL, &n), ADNN_STATUS_BAD_PARAM_NULL, "import(NULL)");
  char missing[4096];
  path_in(missing, sizeof missing, "fleet/no/such/dir/x.txt");
  is_status(adnn_perfdb_export(missing), ADNN_STATUS_EXECUTION_FAILED,
            "export into a missing directory");
  contains(adnn_last_error(), missing, "the message names the file");
  n = 99;
  is_status(adnn_perfdb_import(missing, &n), ADNN_STATUS_EXECUTION_FAILED,
            "import of a missing file");
  contains(adnn_last_error(), "No such file", "the message says why");
  is_int(n, 0, "nothing imported");
  char v9[4096];
  path_in(v9, sizeof v9, "fleet/v9.txt");
  must_write(v9, "adnn-perfdb 9\nx\ty\t1\t1\n");
  is_status(adnn_perfdb_import(v9, &n), ADNN_STATUS_EXECUTION_FAILED,
            "import of another format version");
}

/* ---- hostile files: FIFOs, devices, symlinked lock files, huge files ------ */

/* Checks a scenario where the user file is unusable: lookups miss, stores stay
 * in memory, one warning that contains `why`. Runs under an alarm: a read
 * that blocks (a FIFO) or never ends (/dev/zero) fails the test instead of
 * hanging it. */
static void check_refused_user_file(const char *what, const char *dir, const char *why) {
  fresh_state(dir, NULL);
  alarm(20);
  adnn__perfdb_entry got, e = make_entry("direct", 1.5, 0);
  const char *src = NULL;
  ok(!adnn__perfdb_lookup("k", &got, NULL), "%s: a lookup misses (and returns)", what);
  adnn__perfdb_store("k", &e);
  ok(adnn__perfdb_lookup("k", &got, &src) && same_entry(&got, &e), "%s: a store works", what);
  is_str(src, "memory", "%s: in memory", what);
  alarm(0);
  is_int(warnings, 1, "%s: one warning", what);
  contains(last_warning, why, "%s: it says why", what);
  diag("%s: %s", what, last_warning);
}

static void test_fifo(void) {
  char dir[4096], db[4096], fifo[4096], sys[4096];
  path_in(dir, sizeof dir, "fifo");
  mkdir(dir, 0700);
  pathf(db, sizeof db, "%s/perfdb.txt", dir);
  if (mkfifo(db, 0600) != 0) tap_bail("mkfifo");
  check_refused_user_file("a FIFO as the user file", dir, "not a regular file (it is a FIFO)");
  struct stat sb;
  ok(lstat(db, &sb) == 0 && S_ISFIFO(sb.st_mode), "the FIFO is left as it is");

  path_in(dir, sizeof dir, "fifo-link");
  mkdir(dir, 0700);
  path_in(fifo, sizeof fifo, "a-fifo");
  if (mkfifo(fifo, 0600) != 0) tap_bail("mkfifo");
  pathf(db, sizeof db, "%s/perfdb.txt", dir);
  if (symlink(fifo, db) != 0) tap_bail("symlink");
  check_refused_user_file("a symlink to a FIFO as the user file", dir, "it is a FIFO");
  ok(lstat(db, &sb) == 0 && S_ISLNK(sb.st_mode), "the symlink is left as it is");

  /* The system file and an imported file go through the same open. */
  path_in(dir, sizeof dir, "fifo-sys");
  fresh_state(dir, fifo);
  alarm(20);
  adnn__perfdb_entry got;
  ok(!adnn__perfdb_lookup("k", &got, NULL), "a FIFO as the system file: a lookup misses");
  size_t n = 9;
  is_status(adnn_perfdb_import(fifo, &n), ADNN_STATUS_EXECUTION_FAILED, "importing a FIFO fails");
  alarm(0);
  contains(adnn_last_error(), "not a regular file", "the message says why");
  is_int(n, 0, "nothing imported");
  is_int(warnings, 1, "one warning about the system file");
  contains(last_warning, "system performance database", "naming the system file");
  (void)sys;
}

static void test_devices_and_size(void) {
  char dir[4096], db[4096];
  struct stat sb;
  if (stat("/dev/zero", &sb) == 0 && S_ISCHR(sb.st_mode)) {
    path_in(dir, sizeof dir, "zero-sys");
    fresh_state(dir, "/dev/zero");
    alarm(20);
    adnn__perfdb_entry got;
    ok(!adnn__perfdb_lookup("k", &got, NULL), "/dev/zero as the system file: a lookup returns");
    alarm(0);
    is_int(warnings, 1, "one warning");
    contains(last_warning, "it is a character device", "it says why");

    path_in(dir, sizeof dir, "zero-link");
    mkdir(dir, 0700);
    pathf(db, sizeof db, "%s/perfdb.txt", dir);
    if (symlink("/dev/zero", db) != 0) tap_bail("symlink");
    check_refused_user_file("a symlink to /dev/zero as the user file", dir, "character device");
    alarm(20);
    size_t n = 9;
    is_status(adnn_perfdb_import("/dev/zero", &n), ADNN_STATUS_EXECUTION_FAILED,
              "importing /dev/zero fails");
    alarm(0);
    contains(adnn_last_error(), "not a regular file", "the message says why");
  } else {
    tap_skip("no /dev/zero character device");
  }

  /* A file over the size limit is not read at all (a sparse one costs
   * nothing to make) and never overwritten. */
  path_in(dir, sizeof dir, "huge");
  mkdir(dir, 0700);
  pathf(db, sizeof db, "%s/perfdb.txt", dir);
  int fd = open(db, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const long long big = (1ll << 30) + 1;
  if (fd < 0 || write(fd, "adnn-perfdb 1\n", 14) != 14 || ftruncate(fd, (off_t)big) != 0)
    tap_bail("cannot make a sparse file");
  close(fd);
  fresh_state(dir, NULL);
  alarm(20);
  adnn__perfdb_entry got, e = make_entry("direct", 1.0, 0);
  ok(!adnn__perfdb_lookup("k", &got, NULL), "a file over 1 GiB: a lookup misses");
  contains(last_warning, "is larger than", "with a warning that says why");
  adnn__perfdb_store("k", &e);
  alarm(0);
  ok(stat(db, &sb) == 0 && (long long)sb.st_size == big, "and the file is not rewritten");
  unlink(db);

  /* An endless line (here 3 MB) is skipped without keeping it. */
  size_t longlen = 3u << 20;
  char *text = malloc(longlen + 64);
  strcpy(text, "adnn-perfdb 1\n");
  memset(text + 14, 'x', longlen);
  strcpy(text + 14 + longlen, "\nafter\tdirect\t2\t0\n");
  must_write(db, text);
  free(text);
  fresh_state(dir, NULL);
  ok(adnn__perfdb_lookup("after", &got, NULL) && got.time_ms == 2.0,
     "the entry after a 3 MB line is read");
  is_int(warnings, 1, "one warning");
  contains(last_warning, "longer than 8192 bytes", "naming the long line");
}

static void test_lock_file(void) {
  char dir[4096], lockp[4096], outside[4096], db[4096];
  path_in(dir, sizeof dir, "lock-link");
  mkdir(dir, 0700);
  path_in(outside, sizeof outside, "outside-the-cache-dir");
  pathf(lockp, sizeof lockp, "%s/perfdb.lock", dir);
  pathf(db, sizeof db, "%s/perfdb.txt", dir);
  if (symlink(outside, lockp) != 0) tap_bail("symlink");
  check_refused_user_file("a dangling symlink as the lock file", dir, "symbolic link");
  struct stat sb;
  ok(lstat(outside, &sb) != 0 && errno == ENOENT, "nothing was created where the symlink points");
  ok(lstat(db, &sb) != 0, "and the database was not written");
  ok(lstat(lockp, &sb) == 0 && S_ISLNK(sb.st_mode), "the symlink is left as it is");

  path_in(dir, sizeof dir, "lock-fifo");
  mkdir(dir, 0700);
  pathf(lockp, sizeof lockp, "%s/perfdb.lock", dir);
  if (mkfifo(lockp, 0600) != 0) tap_bail("mkfifo");
  check_refused_user_file("a FIFO as the lock file", dir, "not a regular file (it is a FIFO)");
}

/* Ages a file (not following a symlink) by `seconds`. */
static void age(const char *path, int seconds) {
  struct timespec t[2];
  clock_gettime(CLOCK_REALTIME, &t[0]);
  t[0].tv_sec -= seconds;
  t[1] = t[0];
  if (utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW) != 0) tap_bail("utimensat");
}

static void test_stale_temps(void) {
  char dir[4096], p[4096];
  path_in(dir, sizeof dir, "stale");
  mkdir(dir, 0700);
  const char *stale = "perfdb.txt.tmp.Ab3xY9", *fresh = "perfdb.txt.tmp.Qr7Zk2";
  const char *kept_old[] = {"perfdb.txt.tmp.abc", "perfdb.txt.tmp.Ab3xY9x", "other.txt.tmp.Ab3xY9",
                            "perfdb.txt.tmp.Ab-xY9"};
  pathf(p, sizeof p, "%s/%s", dir, stale);
  must_write(p, "adnn-perfdb 1\nhalf\tdir");
  age(p, 3600);
  pathf(p, sizeof p, "%s/%s", dir, fresh);
  must_write(p, "adnn-perfdb 1\n");
  for (size_t i = 0; i < sizeof kept_old / sizeof *kept_old; i++) {
    pathf(p, sizeof p, "%s/%s", dir, kept_old[i]);
    must_write(p, "x\n");
    age(p, 3600);
  }
  char link[4096];
  pathf(link, sizeof link, "%s/perfdb.txt.tmp.LnK456", dir);
  if (symlink("perfdb.txt.tmp.Qr7Zk2", link) != 0) tap_bail("symlink");
  age(link, 3600);
  fresh_state(dir, NULL);
  adnn__perfdb_entry e = make_entry("direct", 1.0, 0);
  adnn__perfdb_store("k", &e);
  struct stat sb;
  pathf(p, sizeof p, "%s/%s", dir, stale);
  ok(lstat(p, &sb) != 0, "a stale temporary file (an hour old) is removed by a store");
  pathf(p, sizeof p, "%s/%s", dir, fresh);
  ok(lstat(p, &sb) == 0, "a fresh one (perhaps a writer at work) is kept");
  int others = 0;
  for (size_t i = 0; i < sizeof kept_old / sizeof *kept_old; i++) {
    pathf(p, sizeof p, "%s/%s", dir, kept_old[i]);
    others += lstat(p, &sb) == 0;
  }
  is_int(others, 4, "old files that do not match the temporary-name pattern are kept");
  ok(lstat(link, &sb) == 0, "an old symlink with a matching name is kept (not a regular file)");
  is_int(warnings, 0, "without warnings");
}

/* ---- numbers: every finite non-negative double survives a write and read --- */

static void test_time_round_trip(void) {
  static const double times[] = {0.0,     DBL_TRUE_MIN, 1e-310, DBL_MIN - DBL_TRUE_MIN,
                                 DBL_MIN, 1e-300,       0.1,    1.0 / 3.0,
                                 0.5,     123.456789,   1e300,  DBL_MAX};
  const size_t n = sizeof times / sizeof *times;
  char dir[4096], file[4096], ex1[4096], ex2[4096], key[64];
  path_in(dir, sizeof dir, "times/a");
  pathf(file, sizeof file, "%s/perfdb.txt", dir);
  fresh_state(dir, NULL);
  for (size_t i = 0; i < n; i++) {
    pathf(key, sizeof key, "time %zu", i);
    adnn__perfdb_entry e = make_entry("direct", times[i], i);
    adnn__perfdb_store(key, &e);
  }
  adnn__perfdb_entry neg0 = make_entry("direct", -0.0, 0);
  adnn__perfdb_store("negative zero", &neg0);
  adnn__perfdb_reset();
  int exact = 0;
  for (size_t i = 0; i < n; i++) {
    pathf(key, sizeof key, "time %zu", i);
    adnn__perfdb_entry got;
    const char *src = NULL;
    if (adnn__perfdb_lookup(key, &got, &src) && strcmp(src, "user") == 0 &&
        got.time_ms == times[i] && !signbit(got.time_ms))
      exact++;
    else
      diag("  time %a came back as %a", times[i], got.time_ms);
  }
  is_int(exact, n, "every time (subnormals, 1e-300, DBL_MAX) is read back exactly");
  adnn__perfdb_entry got;
  ok(adnn__perfdb_lookup("negative zero", &got, NULL) && got.time_ms == 0 && !signbit(got.time_ms),
     "-0 is stored as 0");
  is_int(warnings, 0, "without warnings");
  char *text = read_all(file);
  contains(text, "\tdirect\t0.1\t", "0.1 is written as \"0.1\" (the shortest exact form)");
  contains(text, "\tdirect\t1.7976931348623157e+308\t", "DBL_MAX with 17 digits");
  free(text);

  /* Import accepts what load accepts: the same rule for both. */
  char imp[4096];
  path_in(imp, sizeof imp, "times/import.txt");
  must_write(imp, "adnn-perfdb 1\n"
                  "hex\tdirect\t0x1p-1070\t0\n"
                  "subnormal\tdirect\t1e-310\t0\n"
                  "underflow\tdirect\t1e-400\t0\n"
                  "negzero\tdirect\t-0\t0\n"
                  "overflow\tdirect\t1e400\t0\n"
                  "infinite\tdirect\tinf\t0\n"
                  "negative\tdirect\t-1e-310\t0\n");
  path_in(dir, sizeof dir, "times/b");
  fresh_state(dir, NULL);
  size_t count = 0;
  is_status(adnn_perfdb_import(imp, &count), ADNN_STATUS_SUCCESS, "import of odd times");
  is_int(count, 4, "the 4 finite non-negative times are imported");
  is_int(warnings, 1, "one warning for the 3 bad ones");
  contains(last_warning, "skipped 3 corrupt lines", "overflow, inf and a negative are rejected");
  adnn__perfdb_reset();
  ok(adnn__perfdb_lookup("hex", &got, NULL) && got.time_ms == 0x1p-1070,
     "an imported subnormal is read back from the user file exactly");
  ok(adnn__perfdb_lookup("subnormal", &got, NULL) && got.time_ms == 1e-310,
     "1e-310 (strtod says ERANGE) is accepted");
  ok(adnn__perfdb_lookup("underflow", &got, NULL) && got.time_ms == 0.0,
     "1e-400 rounds to 0");
  path_in(ex1, sizeof ex1, "times/export1.txt");
  path_in(ex2, sizeof ex2, "times/export2.txt");
  is_status(adnn_perfdb_export(ex1), ADNN_STATUS_SUCCESS, "export");
  path_in(dir, sizeof dir, "times/c");
  fresh_state(dir, NULL);
  is_status(adnn_perfdb_import(ex1, &count), ADNN_STATUS_SUCCESS, "re-import the export");
  is_status(adnn_perfdb_export(ex2), ADNN_STATUS_SUCCESS, "export again");
  char *t1 = read_all(ex1), *t2 = read_all(ex2);
  is_str(t2, t1, "export -> import -> export of subnormals is byte-identical");
  free(t1);
  free(t2);
  is_int(warnings, 0, "without warnings");
}

/* ---- the journal: a store appends one line; compaction is rare ---------- */

static int starts_with(const char *s, const char *prefix) {
  return s && prefix && strncmp(s, prefix, strlen(prefix)) == 0;
}

static void test_journal(void) {
  char dir[4096], file[4096];
  path_in(dir, sizeof dir, "journal");
  pathf(file, sizeof file, "%s/perfdb.txt", dir);
  fresh_state(dir, NULL);
  adnn__perfdb_entry a = make_entry("direct", 1.0, 0), b = make_entry("winograd", 2.5, 64), got;
  adnn__perfdb_store("k-a", &a);
  struct stat s1, s2;
  char *t1 = read_all(file);
  contains(t1, "\nk-a\tdirect\t1\t0\n# journal", "the first store writes the file and the journal line");
  if (stat(file, &s1) != 0) tap_bail("stat");
  adnn__perfdb_store("k-b", &b);
  char *t2 = read_all(file);
  if (stat(file, &s2) != 0) tap_bail("stat");
  ok(s1.st_ino == s2.st_ino, "a second store does not replace the file (same inode)");
  ok(starts_with(t2, t1), "it only appends: the old contents are a prefix of the new");
  is_str(t2 ? t2 + strlen(t1) : NULL, "k-b\twinograd\t2.5\t64\n", "exactly one line is appended");
  free(t1);
  free(t2);

  /* An overwrite is appended too, and the last line wins. */
  adnn__perfdb_entry a2 = make_entry("im2col", 0.75, 8);
  adnn__perfdb_store("k-a", &a2);
  if (stat(file, &s2) != 0) tap_bail("stat");
  ok(s1.st_ino == s2.st_ino, "an overwrite appends as well");
  adnn__perfdb_reset();
  ok(adnn__perfdb_lookup("k-a", &got, NULL) && same_entry(&got, &a2),
     "a new process reads the appended line, which wins over the older one");
  size_t un = 0;
  adnn_perfdb_info(NULL, &un, NULL, NULL);
  is_int(un, 2, "two distinct keys");

  /* Another process's append is read incrementally by a live process. */
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    adnn__perfdb_reset();
    adnn__perfdb_entry c = make_entry("direct", 3.0, 0);
    adnn__perfdb_store("k-c", &c);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  const char *src = NULL;
  ok(adnn__perfdb_lookup("k-c", &got, &src) && strcmp(src, "user") == 0,
     "another process's appended entry is found");
  if (stat(file, &s2) != 0) tap_bail("stat");
  ok(s1.st_ino == s2.st_ino, "and was appended");
  is_int(warnings, 0, "without warnings");

  /* A file written by an older adnn (no journal line) is compacted once. */
  must_write(file, "adnn-perfdb 1\nold-1\tdirect\t1\t0\nold-2\tdirect\t2\t0\n");
  fresh_state(dir, NULL);
  stat(file, &s1);
  adnn__perfdb_store("new-1", &a);
  stat(file, &s2);
  ok(s1.st_ino != s2.st_ino, "a file without the journal line is rewritten on the first store");
  char *t = read_all(file);
  contains(t, "old-1\tdirect\t1\t0\nold-2\tdirect\t2\t0\n# journal", "keeping its entries, sorted");
  free(t);
  adnn__perfdb_store("new-2", &a);
  stat(file, &s1);
  ok(s1.st_ino == s2.st_ino, "after which stores append");

  /* A journal past a quarter of the file (and 64 KiB) is compacted. */
  size_t cap = 1 << 20, len = 0;
  char *big = malloc(cap);
  len += (size_t)snprintf(big + len, cap - len, "adnn-perfdb 1\n");
  for (int i = 0; i < 10; i++)
    len += (size_t)snprintf(big + len, cap - len, "base %d\tdirect\t1\t0\n", i);
  len += (size_t)snprintf(big + len, cap - len, "# journal\n");
  for (int i = 0; i < 3000; i++)
    len += (size_t)snprintf(big + len, cap - len, "journal %d\tdirect\t%d\t0\n", i % 1000, i);
  must_write(file, big);
  free(big);
  fresh_state(dir, NULL);
  stat(file, &s1);
  adnn__perfdb_store("after compaction", &a);
  stat(file, &s2);
  ok(s1.st_ino != s2.st_ino, "a store compacts a long journal (the file is replaced)");
  t = read_all(file);
  is_int(count_lines(t, 1), 10 + 1000 + 1, "one line per key after compaction");
  contains(t, "\njournal 999\tdirect\t2999\t0\n", "the last line of a key won");
  ok(t && strstr(t, "# journal") != NULL && strstr(t, "# journal") > strstr(t, "journal 999"),
     "the journal line follows the sorted entries");
  free(t);
  adnn__perfdb_reset();
  adnn_perfdb_info(NULL, &un, NULL, NULL);
  is_int(un, 1011, "all entries are there");
  is_int(warnings, 0, "without warnings");
  DIR *d = opendir(dir);
  int leftovers = 0;
  struct dirent *de;
  while (d && (de = readdir(d)) != NULL)
    if (strstr(de->d_name, ".tmp.")) leftovers++;
  if (d) closedir(d);
  is_int(leftovers, 0, "no temporary file left");

  /* A writer that died mid-append left half a line: it is skipped with a
   * warning, and the next store compacts it away (never appends after it). */
  must_write(file, "adnn-perfdb 1\nwhole\tdirect\t1\t0\n# journal\nhalf\tdir");
  fresh_state(dir, NULL);
  ok(adnn__perfdb_lookup("whole", &got, NULL), "the complete line is read");
  ok(!adnn__perfdb_lookup("half", &got, NULL), "the half line is not taken");
  is_int(warnings, 1, "one warning");
  contains(last_warning, "truncated", "saying it is truncated");
  adnn__perfdb_store("next", &a);
  t = read_all(file);
  ok(t && !strstr(t, "half") && strstr(t, "\nnext\tdirect\t1\t0\n") && t[strlen(t) - 1] == '\n',
     "the next store drops the half line and keeps the new entry intact");
  free(t);
}

/* A reader that meets an append in progress waits for it instead of warning
 * about a truncated line: here the test plays the appending writer. */
static void test_reader_waits_for_append(void) {
  char dir[4096], file[4096], lockp[4096];
  path_in(dir, sizeof dir, "inflight");
  mkdir(dir, 0700);
  pathf(file, sizeof file, "%s/perfdb.txt", dir);
  pathf(lockp, sizeof lockp, "%s/perfdb.lock", dir);
  must_write(file, "adnn-perfdb 1\n# journal\nin flight\tdirect\t4.");
  int lfd = open(lockp, O_RDWR | O_CREAT, 0600);
  if (lfd < 0 || flock(lfd, LOCK_EX) != 0) tap_bail("cannot take the lock");
  fresh_state(dir, NULL);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20);
    adnn__perfdb_reset();
    adnn__perfdb_entry g;
    int hit = adnn__perfdb_lookup("in flight", &g, NULL);
    _exit(hit && g.time_ms == 4.25 && warnings == 0 ? 0 : 1);
  }
  usleep(200 * 1000);
  int status = 0;
  ok(waitpid(pid, &status, WNOHANG) == 0, "a reader that sees an unfinished last line waits");
  int fd = open(file, O_WRONLY | O_APPEND);
  if (fd < 0 || write(fd, "25\t0\n", 5) != 5) tap_bail("append");
  close(fd);
  flock(lfd, LOCK_UN);
  close(lfd);
  waitpid(pid, &status, 0);
  ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
     "and then reads the whole line, without a warning");
}

/* A tool that rewrites the file in place (same inode, not shorter) must not
 * be mistaken for appends: the live process reads the whole file again. */
static void test_rewrite_in_place(void) {
  char dir[4096], file[4096];
  const char *src = NULL;
  path_in(dir, sizeof dir, "inplace");
  pathf(file, sizeof file, "%s/perfdb.txt", dir);
  fresh_state(dir, NULL);
  adnn__perfdb_entry a = make_entry("direct", 1.0, 0), got;
  adnn__perfdb_store("k0", &a);
  ok(adnn__perfdb_lookup("k0", &got, NULL), "the stored key is found");
  struct stat s1, s2;
  if (stat(file, &s1) != 0) tap_bail("stat");
  FILE *f = fopen(file, "r+");
  if (f == NULL) tap_bail("fopen r+");
  fprintf(f, "adnn-perfdb 1\nnew-a\tgemm_1x1\t1\t0\nnew-b\tgemm_1x1\t2\t0\n"
             "new-c\tgemm_1x1\t3\t0\nnew-d\tgemm_1x1\t4\t0\n");
  fclose(f);
  if (stat(file, &s2) != 0) tap_bail("stat");
  ok(s1.st_ino == s2.st_ino && s2.st_size >= s1.st_size,
     "the edit kept the inode and did not shrink the file");
  adnn__perfdb_entry b = make_entry("winograd", 2.0, 0);
  adnn__perfdb_store("k1", &b); /* catches up with the file first */
  ok(adnn__perfdb_lookup("new-a", &got, NULL) && strcmp(got.algorithm, "gemm_1x1") == 0,
     "the first rewritten line is read (not parsed from the middle)");
  ok(adnn__perfdb_lookup("new-d", &got, NULL), "and the last one");
  ok(adnn__perfdb_lookup("k0", &got, &src) && strcmp(src, "memory") == 0,
     "the key the edit overwrote stays in this process's own memory only");
  adnn__perfdb_reset();
  ok(adnn__perfdb_lookup("k1", &got, NULL) && adnn__perfdb_lookup("new-a", &got, NULL),
     "a new process finds the edit's first line and the new store");
}

static void test_parse_memory(void) {
  reset_warnings();
  size_t n = 9, bad = 9;
  const char *text = "# c\nadnn-perfdb 1\na\tdirect\t1\t0\nb\tx\t0x1p-1074\t0\nbad\nc\tx\t1\t";
  is_int(adnn__perfdb_parse(text, strlen(text), "buf", &n, &bad), 0, "a text parses");
  is_int(n, 2, "two entries");
  is_int(bad, 2, "two bad lines (no fields, truncated)");
  is_int(warnings, 1, "one warning");
  contains(last_warning, "buf: skipped 2 corrupt lines (first: line 5", "naming the text");
  is_int(adnn__perfdb_parse("adnn-perfdb 2\n", 14, NULL, &n, NULL), -1, "another version: -1");
  is_int(adnn__perfdb_parse("", 0, NULL, &n, &bad), 0, "an empty text is an empty database");
  is_int(n + bad, 0, "with nothing in it");
  is_int(adnn__perfdb_parse(NULL, 5, NULL, NULL, NULL), -1, "NULL text: -1");
  char nul[] = "adnn-perfdb 1\na\0b\tx\t1\t0\n";
  is_int(adnn__perfdb_parse(nul, sizeof nul - 1, NULL, &n, &bad), 0, "a text with a NUL byte");
  is_int(bad, 1, "the NUL line is bad");
}

static int run_capture(const char *cmd, char *out, size_t size) {
  FILE *p = popen(cmd, "r");
  if (p == NULL) return -1;
  size_t len = fread(out, 1, size - 1, p);
  out[len] = '\0';
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_adnn_info(void) {
  const char *build = getenv("ADNN_TEST_BUILDDIR");
  char tool[4096];
  pathf(tool, sizeof tool, "%s/tools/adnn-info", build ? build : ".");
  if (build == NULL || access(tool, X_OK) != 0) {
    tap_skip("adnn-info is not built (ADNN_TEST_BUILDDIR unset)");
    return;
  }
  char dir[4096], sys[4096], user[4096];
  path_in(dir, sizeof dir, "info");
  path_in(sys, sizeof sys, "info-system.txt");
  pathf(user, sizeof user, "%s/perfdb.txt", dir);
  mkdir(dir, 0700);
  must_write(user, "adnn-perfdb 1\na\tdirect\t1\t0\nb\tdirect\t1\t0\nc\tdirect\t1\t0\n");
  must_write(sys, "adnn-perfdb 1\ns\tdirect\t1\t0\n");
  setenv("ADNN_CACHE_DIR", dir, 1);
  setenv("ADNN_SYSTEM_PERFDB", sys, 1);
  static char out[1 << 16];
  char cmd[8192];
  pathf(cmd, sizeof cmd, "'%s' 2>&1", tool);
  run_capture(cmd, out, sizeof out);
  char want[4200];
  pathf(want, sizeof want, "%s (3 entries)", user);
  contains(out, want, "adnn-info shows the user database path and entry count");
  pathf(want, sizeof want, "%s (1 entry)", sys);
  contains(out, want, "adnn-info shows the system database path and entry count");
  pathf(cmd, sizeof cmd, "'%s' --json 2>&1", tool);
  run_capture(cmd, out, sizeof out);
  contains(out, "\"perfdb\": {", "--json has a perfdb object");
  pathf(want, sizeof want, "\"user_entries\": 3");
  contains(out, want, "--json counts user entries");
  contains(out, "\"system_entries\": 1", "--json counts system entries");
  char *py = NULL;
  if (system("python3 -c '' >/dev/null 2>&1") == 0 &&
      asprintf(&py,
               "'%s' --json 2>/dev/null | python3 -c 'import json,sys; "
               "d=json.load(sys.stdin)[\"perfdb\"]; "
               "print(d[\"user_path\"], d[\"user_entries\"], d[\"system_path\"], "
               "d[\"system_entries\"])'",
               tool) >= 0) {
    run_capture(py, out, sizeof out);
    pathf(want, sizeof want, "%s 3 %s 1\n", user, sys);
    is_str(out, want, "--json perfdb object parses and has the paths and counts");
  } else {
    tap_skip("python3 not available");
  }
  free(py);
}

int main(void) {
  adnn_log_set_callback(on_log, NULL);
  adnn_log_set_level(ADNN_LOG_WARN);
  if (!tmpdir_make(root, sizeof root, "adnn-perfdb"))
    tap_bail("cannot create a temporary directory");
  diag("working in %s", root);
  test_paths();
  test_round_trip();
  test_system_and_versions();
  test_corrupt();
  test_unwritable();
  test_reentrant_log();
  test_concurrent();
  test_lock_honored();
  test_threads();
  test_export_import();
  test_fifo();
  test_devices_and_size();
  test_lock_file();
  test_stale_temps();
  test_time_round_trip();
  test_journal();
  test_reader_waits_for_append();
  test_rewrite_in_place();
  test_parse_memory();
  test_adnn_info();
  tmpdir_remove(root);
  return tap_done();
}
