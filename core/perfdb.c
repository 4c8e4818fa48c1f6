/*
 * The performance database (see core/perfdb.h and include/adnn/tuning.h).
 *
 * Three tables, looked up in this order: this process's entries (stored or
 * imported), the user file, the system file. Each file is loaded lazily and
 * cached; the user file is re-read when it changed on disk (checked with
 * stat() on a lookup miss, so another process's results become visible).
 *
 * File format (version 1), UTF-8/ASCII text, one record per line:
 *
 *   # adnn performance database              comment lines start with '#'
 *   adnn-perfdb 1                            first non-comment line: version
 *   KEY<TAB>ALGORITHM<TAB>TIME_MS<TAB>WORKSPACE_BYTES
 *
 * The key may itself contain tabs (the tuner joins its parts with tabs): the
 * LAST three tab-separated fields are the algorithm, the median time in
 * milliseconds (a non-negative decimal) and the workspace in bytes (a
 * non-negative integer); everything before them is the key. Empty lines are
 * ignored. Writers sort entries by key so that files diff well. A line that
 * does not parse (too few fields, a bad number, too long, no final newline)
 * is skipped, with one warning per file load that names the file and the
 * first bad line; rewriting the user file drops such lines. A file with
 * another format version, or without a version line, is ignored as a whole
 * (one warning) and never overwritten.
 *
 * Writing the user file: take an exclusive flock() on "perfdb.lock" in the
 * same directory, re-read the file (other processes may have added entries),
 * merge, write a temporary file in the same directory, fsync it, rename() it
 * over the database, fsync the directory, unlock. Readers never lock: rename
 * makes them see either the old or the new file, never a partial one. A
 * writer waits at most 10 s for the lock (a dead holder releases it), then
 * keeps its result in memory. Numbers are written in the C locale.
 *
 * Every failure is a warning, never an error to plan creation: when the user
 * file cannot be read or written, one warning per process says so and entries
 * stay in memory.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "core/perfdb.h"

#ifndef ADNN_SYSTEM_PERFDB
#error "ADNN_SYSTEM_PERFDB must be defined by the build"
#endif

#define FORMAT_VERSION 1
#define MAX_LINE 8192            /* longest accepted line, newline excluded */
#define LOCK_TIMEOUT_MS 10000    /* how long a store waits for another writer */
#define USER_FILE_NAME "perfdb.txt"
#define LOCK_FILE_NAME "perfdb.lock"

/* ------------------------------------------------------------------------ */
/* A string -> entry hash table                                              */
/* ------------------------------------------------------------------------ */

typedef struct node {
  struct node *next;
  adnn__perfdb_entry entry;
  char key[]; /* NUL-terminated */
} node;

typedef struct table {
  node **buckets;
  size_t nbuckets; /* power of two, or 0 */
  size_t count;
} table;

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static node *table_find(const table *t, const char *key) {
  if (t->nbuckets == 0) return NULL;
  for (node *n = t->buckets[hash_str(key) & (t->nbuckets - 1)]; n; n = n->next)
    if (strcmp(n->key, key) == 0) return n;
  return NULL;
}

/* Inserts or replaces; 0 on out of memory. */
static int table_put(table *t, const char *key, const adnn__perfdb_entry *e) {
  node *hit = table_find(t, key);
  if (hit != NULL) {
    hit->entry = *e;
    return 1;
  }
  if (t->count + 1 > t->nbuckets / 2) {
    size_t nb = t->nbuckets ? t->nbuckets * 2 : 64;
    node **b = calloc(nb, sizeof *b);
    if (b == NULL) return 0;
    for (size_t i = 0; i < t->nbuckets; i++) {
      node *n = t->buckets[i];
      while (n) {
        node *next = n->next;
        size_t j = hash_str(n->key) & (nb - 1);
        n->next = b[j];
        b[j] = n;
        n = next;
      }
    }
    free(t->buckets);
    t->buckets = b;
    t->nbuckets = nb;
  }
  size_t len = strlen(key);
  node *n = malloc(sizeof *n + len + 1);
  if (n == NULL) return 0;
  memcpy(n->key, key, len + 1);
  n->entry = *e;
  size_t j = hash_str(key) & (t->nbuckets - 1);
  n->next = t->buckets[j];
  t->buckets[j] = n;
  t->count++;
  return 1;
}

static void table_free(table *t) {
  for (size_t i = 0; i < t->nbuckets; i++) {
    node *n = t->buckets[i];
    while (n) {
      node *next = n->next;
      free(n);
      n = next;
    }
  }
  free(t->buckets);
  memset(t, 0, sizeof *t);
}

/* Copies every entry of `from` into `to`, replacing same keys; 0 on OOM. */
static int table_merge(table *to, const table *from) {
  for (size_t i = 0; i < from->nbuckets; i++)
    for (const node *n = from->buckets[i]; n; n = n->next)
      if (!table_put(to, n->key, &n->entry)) return 0;
  return 1;
}

static int cmp_nodes(const void *a, const void *b) {
  return strcmp((*(const node *const *)a)->key, (*(const node *const *)b)->key);
}

/* ------------------------------------------------------------------------ */
/* The state lock, and log messages deferred until it is released             */
/* ------------------------------------------------------------------------ */

/* Every function below runs under `lock`. Messages are queued and logged
 * after unlocking, so that a log callback may call back into adnn (even into
 * these functions) without deadlocking. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

#define MAX_PENDING 8
static struct {
  adnn_log_level level;
  char text[1200];
} pending[MAX_PENDING];
static int npending = 0;

static void db_log(adnn_log_level level, const char *fmt, ...) ADNN_PRINTF(2, 3);
static void db_log(adnn_log_level level, const char *fmt, ...) {
  if (npending == MAX_PENDING || !adnn__log_enabled(level)) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(pending[npending].text, sizeof pending[npending].text, fmt, ap);
  va_end(ap);
  pending[npending++].level = level;
}

/* Numbers in the file are always written and read in the C locale, whatever
 * setlocale() the application made ("0.5", never "0,5"). uselocale() is per
 * thread, and the state lock serializes all file work anyway. */
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale = (locale_t)0;
static void make_c_locale(void) { c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); }

static void db_lock(void) {
  pthread_once(&c_locale_once, make_c_locale);
  pthread_mutex_lock(&lock);
}

/* Switches the calling thread to the C locale for numbers; returns the old one
 * (0 when nothing was changed). */
static locale_t numeric_c_begin(void) {
  pthread_once(&c_locale_once, make_c_locale);
  return c_locale != (locale_t)0 ? uselocale(c_locale) : (locale_t)0;
}
static void numeric_c_end(locale_t old) {
  if (old != (locale_t)0) uselocale(old);
}

static void db_unlock(void) {
  int n = npending;
  adnn_log_level levels[MAX_PENDING];
  char(*texts)[1200] = NULL;
  if (n > 0 && (texts = malloc((size_t)n * sizeof *texts)) != NULL) {
    for (int i = 0; i < n; i++) {
      levels[i] = pending[i].level;
      memcpy(texts[i], pending[i].text, sizeof texts[i]);
    }
  }
  npending = 0;
  pthread_mutex_unlock(&lock);
  for (int i = 0; texts != NULL && i < n; i++) adnn__log(levels[i], "core", "%s", texts[i]);
  free(texts);
}

/* ------------------------------------------------------------------------ */
/* Entries and lines                                                         */
/* ------------------------------------------------------------------------ */

/* Whether a key can be written as (the front of) a line. */
static int key_writable(const char *key) {
  if (key[0] == '\0' || key[0] == '#' || strlen(key) > MAX_LINE / 2) return 0;
  return strpbrk(key, "\n\r") == NULL;
}

static int algorithm_valid(const char *a) {
  size_t len = strnlen(a, sizeof((adnn__perfdb_entry *)0)->algorithm);
  if (len == 0 || len >= sizeof((adnn__perfdb_entry *)0)->algorithm) return 0;
  return strpbrk(a, "\t\n\r") == NULL;
}

/* Parses one line (without its newline, NUL-terminated, modified in place).
 * Returns NULL and fills key/entry, or returns why the line is bad. */
static const char *parse_entry(char *line, const char **key, adnn__perfdb_entry *e) {
  char *f[3];
  char *end = line + strlen(line);
  for (int i = 2; i >= 0; i--) {
    char *tab = NULL;
    for (char *p = end; p > line; p--)
      if (p[-1] == '\t') {
        tab = p - 1;
        break;
      }
    if (tab == NULL) return "too few tab-separated fields (need key, algorithm, time, workspace)";
    *tab = '\0';
    f[i] = tab + 1;
    end = tab;
  }
  if (line[0] == '\0') return "empty key";
  if (f[0][0] == '\0' || strlen(f[0]) >= sizeof e->algorithm)
    return "algorithm name empty or longer than 63 characters";
  char *stop;
  errno = 0;
  double t = strtod(f[1], &stop);
  if (f[1][0] == '\0' || *stop != '\0' || errno != 0 || !isfinite(t) || t < 0.0)
    return "time is not a non-negative number";
  if (f[2][0] < '0' || f[2][0] > '9') return "workspace is not a non-negative integer";
  errno = 0;
  unsigned long long ws = strtoull(f[2], &stop, 10);
  if (*stop != '\0' || errno != 0 || ws > (unsigned long long)SIZE_MAX)
    return "workspace is not a non-negative integer";
  memset(e, 0, sizeof *e);
  memcpy(e->algorithm, f[0], strlen(f[0]) + 1);
  e->time_ms = t;
  e->workspace_bytes = (size_t)ws;
  *key = line;
  return NULL;
}

typedef enum load_result {
  LOAD_OK,         /* parsed (possibly with skipped lines) */
  LOAD_MISSING,    /* the file does not exist */
  LOAD_UNREADABLE, /* open or read failed; errno-style code in *err */
  LOAD_FOREIGN     /* another format version, or not a database: never overwrite */
} load_result;

/* Reads up to size - 1 bytes, through the first newline, into buf and
 * terminates it; returns the number of bytes read (0 at the end of the file
 * or on an error). Unlike fgets it counts NUL bytes, so they can be noticed. */
static size_t read_line(FILE *f, char *buf, size_t size) {
  size_t n = 0;
  int c;
  while (n + 1 < size && (c = getc(f)) != EOF) {
    buf[n++] = (char)c;
    if (c == '\n') break;
  }
  buf[n] = '\0';
  return n;
}

/* Reads a database file into `out` (entries added, replacing same keys).
 * Warns once per call about skipped lines, and about foreign files. */
static load_result load_file_c(const char *path, table *out, int *err) {
  *err = 0;
  FILE *f = fopen(path, "re");
  if (f == NULL) {
    *err = errno;
    return errno == ENOENT ? LOAD_MISSING : LOAD_UNREADABLE;
  }
  /* A fixed buffer: a corrupt file with an endless line costs no memory. */
  char *line = malloc(MAX_LINE + 2);
  if (line == NULL) {
    fclose(f);
    *err = ENOMEM;
    return LOAD_UNREADABLE;
  }
  size_t len;
  size_t lineno = 0, bad = 0, first_bad = 0;
  const char *first_why = "";
  int have_version = 0;
  load_result result = LOAD_OK;
  while ((len = read_line(f, line, MAX_LINE + 2)) > 0) {
    lineno++;
    int too_long = 0;
    if (line[len - 1] != '\n' && len == MAX_LINE + 1) {
      /* Over-long: skip to the end of the line. */
      int c;
      while ((c = getc(f)) != EOF && c != '\n') {
      }
      too_long = 1;
    }
    int complete = too_long || line[len - 1] == '\n';
    if (line[len - 1] == '\n') line[--len] = '\0';
    if (len > 0 && line[len - 1] == '\r') line[--len] = '\0';
    if (len == 0 || line[0] == '#') continue;
    const char *why = NULL;
    if (!have_version) {
      int v = 0, n = 0;
      if (sscanf(line, "adnn-perfdb %d%n", &v, &n) == 1 && line[n] == '\0') {
        if (v != FORMAT_VERSION) {
          db_log(ADNN_LOG_WARN,
                 "performance database %s has format version %d; this adnn reads version "
                 "%d only, so the file is ignored (and left as it is)",
                 path, v, FORMAT_VERSION);
          result = LOAD_FOREIGN;
          break;
        }
        have_version = 1;
        continue;
      }
      db_log(ADNN_LOG_WARN,
             "%s is not an adnn performance database (line %zu is not \"adnn-perfdb %d\"); "
             "it is ignored and left as it is",
             path, lineno, FORMAT_VERSION);
      result = LOAD_FOREIGN;
      break;
    }
    const char *key;
    adnn__perfdb_entry e;
    if (too_long) why = "longer than 8192 bytes";
    else if (!complete) why = "truncated (no newline at the end of the file)";
    else if (strlen(line) != len) why = "contains a NUL byte";
    else why = parse_entry(line, &key, &e);
    if (why == NULL && !table_put(out, key, &e)) why = "out of memory";
    if (why != NULL && bad++ == 0) {
      first_bad = lineno;
      first_why = why;
    }
  }
  if (ferror(f) && result == LOAD_OK) {
    *err = errno ? errno : EIO;
    result = LOAD_UNREADABLE;
  }
  free(line);
  fclose(f);
  if (bad > 0 && result == LOAD_OK)
    db_log(ADNN_LOG_WARN,
           "performance database %s: skipped %zu corrupt line%s (first: line %zu: %s)", path, bad,
           bad == 1 ? "" : "s", first_bad, first_why);
  return result;
}

/* Writes the union of tables (later ones override earlier ones) to `path`
 * atomically: a temporary file in the same directory, fsync, rename, fsync of
 * the directory. Returns 0 or an errno value; *what says which step failed. */
static int write_file_c(const char *path, const table *const *tables, size_t ntables, mode_t mode,
                        const char **what) {
  table all = {0};
  for (size_t i = 0; i < ntables; i++)
    if (!table_merge(&all, tables[i])) {
      table_free(&all);
      *what = "collect entries for";
      return ENOMEM;
    }
  node **sorted = malloc((all.count ? all.count : 1) * sizeof *sorted);
  if (sorted == NULL) {
    table_free(&all);
    *what = "collect entries for";
    return ENOMEM;
  }
  size_t k = 0;
  for (size_t i = 0; i < all.nbuckets; i++)
    for (node *n = all.buckets[i]; n; n = n->next) sorted[k++] = n;
  qsort(sorted, k, sizeof *sorted, cmp_nodes);

  int err = 0;
  char *tmp = NULL;
  if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0) {
    tmp = NULL;
    err = ENOMEM;
    *what = "name a temporary file for";
    goto done;
  }
  int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0) {
    err = errno;
    *what = "create a temporary file next to";
    goto done;
  }
  (void)fchmod(fd, mode);
  FILE *f = fdopen(fd, "w");
  if (f == NULL) {
    err = errno;
    close(fd);
    unlink(tmp);
    *what = "write";
    goto done;
  }
  fprintf(f,
          "# adnn performance database\n"
          "# fields: key (may contain tabs) <TAB> algorithm <TAB> time_ms <TAB> workspace_bytes\n"
          "adnn-perfdb %d\n",
          FORMAT_VERSION);
  for (size_t i = 0; i < k; i++)
    fprintf(f, "%s\t%s\t%.9g\t%zu\n", sorted[i]->key, sorted[i]->entry.algorithm,
            sorted[i]->entry.time_ms, sorted[i]->entry.workspace_bytes);
  if (fflush(f) != 0 || ferror(f)) err = errno ? errno : EIO;
  if (err == 0 && fsync(fileno(f)) != 0) err = errno;
  if (fclose(f) != 0 && err == 0) err = errno;
  if (err == 0 && rename(tmp, path) != 0) err = errno;
  if (err != 0) {
    unlink(tmp);
    *what = "write";
    goto done;
  }
  /* Make the rename itself durable. */
  char *slash = strrchr(tmp, '/');
  if (slash != NULL) {
    *slash = '\0';
    int dfd = open(slash == tmp ? "/" : tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      (void)fsync(dfd);
      close(dfd);
    }
  }
done:
  free(tmp);
  free(sorted);
  table_free(&all);
  return err;
}

static load_result load_file(const char *path, table *out, int *err) {
  locale_t old = numeric_c_begin();
  load_result r = load_file_c(path, out, err);
  numeric_c_end(old);
  return r;
}

static int write_file(const char *path, const table *const *tables, size_t ntables, mode_t mode,
                      const char **what) {
  locale_t old = numeric_c_begin();
  int err = write_file_c(path, tables, ntables, mode, what);
  numeric_c_end(old);
  return err;
}

/* ------------------------------------------------------------------------ */
/* Process state (all under `lock`)                                          */
/* ------------------------------------------------------------------------ */

static int initialized = 0;
static char *user_dir = NULL;    /* NULL: no cache directory known */
static char *user_path = NULL;   /* user_dir/perfdb.txt */
static char *system_path = NULL; /* NULL: no system database configured */
static table mem_table, user_table, system_table;
static int user_loaded = 0, system_loaded = 0, system_present = 0;
static int user_foreign = 0;     /* the user file must not be overwritten */
static int file_disabled = 0;    /* the user file cannot be written: memory only */
static int read_failed = 0;      /* the user file cannot be read either */
static int disabled_warned = 0;
static char disabled_reason[512]; /* why file_disabled, for error messages */
static struct stat user_stat;    /* of the user file when last loaded */
static int user_stat_valid = 0;

static char *dup_printf(const char *fmt, ...) ADNN_PRINTF(1, 2);
static char *dup_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *out = NULL;
  int n = vasprintf(&out, fmt, ap);
  va_end(ap);
  return n < 0 ? NULL : out;
}

static void init_locked(void) {
  if (initialized) return;
  initialized = 1;
  const char *dir = getenv("ADNN_CACHE_DIR");
  if (dir != NULL && *dir != '\0') {
    user_dir = strdup(dir);
  } else {
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    /* The XDG spec says relative values are invalid and must be ignored. */
    if (xdg != NULL && xdg[0] == '/') user_dir = dup_printf("%s/adnn", xdg);
    else if (home != NULL && home[0] != '\0') user_dir = dup_printf("%s/.cache/adnn", home);
  }
  if (user_dir != NULL) {
    size_t len = strlen(user_dir);
    while (len > 1 && user_dir[len - 1] == '/') user_dir[--len] = '\0';
    user_path = dup_printf("%s/%s", user_dir, USER_FILE_NAME);
    if (user_path == NULL) {
      free(user_dir);
      user_dir = NULL;
    }
  }
  const char *sys = getenv("ADNN_SYSTEM_PERFDB");
  if (sys == NULL) sys = ADNN_SYSTEM_PERFDB;
  if (*sys != '\0') system_path = strdup(sys);
}

/* Resets the whole state as if the process had just started (tests only). */
void adnn__perfdb_reset(void);
void adnn__perfdb_reset(void) {
  db_lock();
  free(user_dir);
  free(user_path);
  free(system_path);
  user_dir = user_path = system_path = NULL;
  table_free(&mem_table);
  table_free(&user_table);
  table_free(&system_table);
  initialized = user_loaded = system_loaded = system_present = 0;
  user_foreign = file_disabled = read_failed = disabled_warned = user_stat_valid = 0;
  disabled_reason[0] = '\0';
  db_unlock();
}

/* The one warning per process about an unusable user file. */
static void disable_file(const char *what, const char *path, const char *why) {
  if (!file_disabled)
    snprintf(disabled_reason, sizeof disabled_reason, "cannot %s %s: %s", what, path, why);
  file_disabled = 1;
  if (disabled_warned) return;
  disabled_warned = 1;
  db_log(ADNN_LOG_WARN, "performance database disabled: %s; tuning results stay in memory",
         disabled_reason);
}

static void load_system_locked(void) {
  if (system_loaded) return;
  system_loaded = 1;
  if (system_path == NULL) return;
  int err;
  switch (load_file(system_path, &system_table, &err)) {
    case LOAD_OK: system_present = 1; break;
    case LOAD_MISSING: break;
    case LOAD_UNREADABLE:
      system_present = 1;
      db_log(ADNN_LOG_WARN, "cannot read the system performance database %s: %s", system_path,
             strerror(err));
      break;
    case LOAD_FOREIGN: system_present = 1; break;
  }
}

/* Loads the user file if not loaded yet, or (refresh) if it changed on disk. */
static void load_user_locked(int refresh) {
  if (user_path == NULL || read_failed) {
    user_loaded = 1;
    return;
  }
  struct stat sb;
  int have_stat = stat(user_path, &sb) == 0;
  if (user_loaded) {
    if (!refresh) return;
    if (have_stat == user_stat_valid &&
        (!have_stat || (sb.st_dev == user_stat.st_dev && sb.st_ino == user_stat.st_ino &&
                        sb.st_size == user_stat.st_size &&
                        sb.st_mtim.tv_sec == user_stat.st_mtim.tv_sec &&
                        sb.st_mtim.tv_nsec == user_stat.st_mtim.tv_nsec)))
      return;
  }
  user_loaded = 1;
  table fresh = {0};
  int err;
  switch (load_file(user_path, &fresh, &err)) {
    case LOAD_OK:
    case LOAD_MISSING:
      table_free(&user_table);
      user_table = fresh;
      user_foreign = 0;
      break;
    case LOAD_UNREADABLE:
      table_free(&fresh);
      read_failed = 1;
      disable_file("read", user_path, strerror(err));
      break;
    case LOAD_FOREIGN:
      table_free(&fresh);
      table_free(&user_table);
      user_foreign = 1;
      break;
  }
  user_stat = sb;
  user_stat_valid = have_stat;
}

/* mkdir -p with mode 0700 for the directories it creates; 0 or errno. */
static int make_dirs(const char *dir) {
  struct stat sb;
  if (stat(dir, &sb) == 0) return S_ISDIR(sb.st_mode) ? 0 : ENOTDIR;
  char *copy = strdup(dir);
  if (copy == NULL) return ENOMEM;
  int err = 0;
  for (char *p = copy + 1;; p++) {
    if (*p == '/' || *p == '\0') {
      char saved = *p;
      *p = '\0';
      if (mkdir(copy, 0700) != 0 && errno != EEXIST) {
        err = errno;
        break;
      }
      *p = saved;
      if (saved == '\0') break;
    }
  }
  if (err == 0 && (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))) err = errno ? errno : ENOTDIR;
  free(copy);
  return err;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* Merges `add` into the user file under the cross-process lock. Returns 0, or
 * an errno value after a warning (the entries then stay in memory only). */
static int store_to_file_locked(const table *add) {
  if (user_path == NULL) {
    if (!disabled_warned) {
      disabled_warned = 1;
      db_log(ADNN_LOG_INFO,
             "performance database: no cache directory (set ADNN_CACHE_DIR, "
             "XDG_CACHE_HOME or HOME); tuning results stay in memory");
    }
    file_disabled = 1;
    return ENOENT;
  }
  if (file_disabled) return EACCES;
  if (user_foreign) {
    disable_file("overwrite", user_path, "it has another format version or is not a database");
    return EEXIST;
  }
  int err = make_dirs(user_dir);
  if (err != 0) {
    disable_file("create the directory", user_dir, strerror(err));
    return err;
  }
  char *lock_path = dup_printf("%s/%s", user_dir, LOCK_FILE_NAME);
  if (lock_path == NULL) return ENOMEM;
  int lfd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  /* flock() works on a read-only descriptor too (a lock file made by someone
   * else in a shared, writable directory). */
  if (lfd < 0) {
    err = errno;
    if (err == EACCES) lfd = open(lock_path, O_RDONLY | O_CLOEXEC);
  }
  if (lfd < 0) {
    disable_file("write", lock_path, strerror(err));
    free(lock_path);
    return err;
  }
  err = 0;
  int waited = 0;
  while (flock(lfd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      err = errno;
      break;
    }
    if (waited >= LOCK_TIMEOUT_MS) {
      err = ETIMEDOUT;
      break;
    }
    sleep_ms(5);
    waited += 5;
  }
  if (err != 0) {
    /* A stuck writer: skip this write, but keep trying on later stores. */
    db_log(ADNN_LOG_WARN, "performance database: cannot lock %s: %s; this result stays in memory",
           lock_path, strerror(err));
    close(lfd);
    free(lock_path);
    return err;
  }
  /* Re-read what other processes wrote, then merge our entries over it. */
  table current = {0};
  int rerr;
  switch (load_file(user_path, &current, &rerr)) {
    case LOAD_OK:
    case LOAD_MISSING: break;
    case LOAD_UNREADABLE:
      err = rerr;
      read_failed = 1;
      disable_file("read", user_path, strerror(rerr));
      break;
    case LOAD_FOREIGN:
      err = EEXIST;
      user_foreign = 1;
      disable_file("overwrite", user_path, "it has another format version or is not a database");
      break;
  }
  if (err == 0 && !table_merge(&current, add)) err = ENOMEM;
  if (err == 0) {
    const table *one[1] = {&current};
    const char *what = "write";
    err = write_file(user_path, one, 1, 0600, &what);
    if (err != 0) {
      disable_file(what, user_path, strerror(err));
    } else {
      table_free(&user_table);
      user_table = current;
      memset(&current, 0, sizeof current);
      user_loaded = 1;
      user_foreign = 0;
      user_stat_valid = stat(user_path, &user_stat) == 0;
    }
  }
  table_free(&current);
  flock(lfd, LOCK_UN);
  close(lfd);
  free(lock_path);
  return err;
}

/* ------------------------------------------------------------------------ */
/* Internal interface                                                        */
/* ------------------------------------------------------------------------ */

int adnn__perfdb_lookup(const char *key, adnn__perfdb_entry *out, const char **source) {
  if (source) *source = NULL;
  if (key == NULL || out == NULL) return 0;
  db_lock();
  init_locked();
  const char *from = "memory";
  node *n = table_find(&mem_table, key);
  if (n == NULL) {
    from = "user";
    load_user_locked(0);
    n = table_find(&user_table, key);
    if (n == NULL) {
      /* Another process may have stored it since we read the file. */
      load_user_locked(1);
      n = table_find(&user_table, key);
    }
  }
  if (n == NULL) {
    from = "system";
    load_system_locked();
    n = table_find(&system_table, key);
  }
  if (n != NULL) {
    *out = n->entry;
    if (source) *source = from;
  }
  db_unlock();
  return n != NULL;
}

void adnn__perfdb_store(const char *key, const adnn__perfdb_entry *entry) {
  if (key == NULL || entry == NULL) return;
  adnn__perfdb_entry e = *entry;
  e.algorithm[sizeof e.algorithm - 1] = '\0';
  db_lock();
  init_locked();
  if (!table_put(&mem_table, key, &e)) {
    db_unlock();
    return;
  }
  if (!key_writable(key) || !algorithm_valid(e.algorithm) || !isfinite(e.time_ms) ||
      e.time_ms < 0.0) {
    db_log(ADNN_LOG_DEBUG,
           "performance database: entry not representable in the file (key or algorithm "
           "has a newline, a leading '#' or bad length, or the time is invalid); kept in "
           "memory");
  } else {
    table add = {0};
    if (table_put(&add, key, &e)) store_to_file_locked(&add);
    table_free(&add);
  }
  db_unlock();
}

/* ------------------------------------------------------------------------ */
/* Public API                                                                */
/* ------------------------------------------------------------------------ */

adnn_status adnn_perfdb_info(const char **user_path_out, size_t *user_entries,
                             const char **system_path_out, size_t *system_entries) {
  db_lock();
  init_locked();
  load_user_locked(1);
  load_system_locked();
  if (user_path_out) *user_path_out = user_path;
  if (user_entries) *user_entries = user_table.count;
  if (system_path_out) *system_path_out = system_present ? system_path : NULL;
  if (system_entries) *system_entries = system_table.count;
  db_unlock();
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_perfdb_export(const char *path) {
  if (path == NULL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "adnn_perfdb_export: path is NULL");
  if (*path == '\0')
    return adnn__fail(ADNN_STATUS_EXECUTION_FAILED, "adnn_perfdb_export: path is empty");
  db_lock();
  init_locked();
  load_user_locked(1);
  load_system_locked();
  const table *all[3] = {&system_table, &user_table, &mem_table};
  const char *what = "write";
  int err = write_file(path, all, 3, 0644, &what);
  db_unlock();
  if (err != 0)
    return adnn__fail(ADNN_STATUS_EXECUTION_FAILED, "adnn_perfdb_export: cannot %s %s: %s", what,
                      path, strerror(err));
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_perfdb_import(const char *path, size_t *imported) {
  if (imported) *imported = 0;
  if (path == NULL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "adnn_perfdb_import: path is NULL");
  table in = {0};
  int err;
  db_lock(); /* load_file queues its warnings, which needs the lock */
  load_result r = load_file(path, &in, &err);
  if (r != LOAD_OK) {
    db_unlock();
    table_free(&in);
    if (r == LOAD_FOREIGN)
      return adnn__fail(ADNN_STATUS_EXECUTION_FAILED,
                        "adnn_perfdb_import: %s is not an adnn performance database of format "
                        "version %d",
                        path, FORMAT_VERSION);
    return adnn__fail(ADNN_STATUS_EXECUTION_FAILED, "adnn_perfdb_import: cannot read %s: %s",
                      path, strerror(err));
  }
  init_locked();
  load_user_locked(0);
  if (!table_merge(&mem_table, &in)) {
    db_unlock();
    table_free(&in);
    return adnn__fail(ADNN_STATUS_EXECUTION_FAILED, "adnn_perfdb_import: out of memory");
  }
  size_t count = in.count;
  if (imported) *imported = count;
  err = count ? store_to_file_locked(&in) : 0;
  char why[600];
  if (user_path == NULL)
    snprintf(why, sizeof why, "no cache directory (set ADNN_CACHE_DIR, XDG_CACHE_HOME or HOME)");
  else if (file_disabled && disabled_reason[0] != '\0')
    snprintf(why, sizeof why, "%s", disabled_reason);
  else
    snprintf(why, sizeof why, "cannot write %s: %s", user_path, strerror(err));
  db_unlock();
  table_free(&in);
  if (err != 0)
    return adnn__fail(ADNN_STATUS_EXECUTION_FAILED,
                      "adnn_perfdb_import: the user database was not updated (%s); the %zu "
                      "imported entries are used by this process only",
                      why, count);
  return ADNN_STATUS_SUCCESS;
}
