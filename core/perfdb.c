/*
 * The performance database (see core/perfdb.h and include/adnn/tuning.h).
 *
 * Three tables, looked up in this order: this process's entries (stored or
 * imported), the user file, the system file. Each file is loaded lazily and
 * cached; the user file is caught up when it changed on disk (checked with
 * stat() on a lookup miss, so another process's results become visible).
 *
 * File format (version 1), UTF-8/ASCII text, one record per line:
 *
 *   # adnn performance database              comment lines start with '#'
 *   adnn-perfdb 1                            first non-comment line: version
 *   KEY<TAB>ALGORITHM<TAB>TIME_MS<TAB>WORKSPACE_BYTES
 *   ...                                      sorted by key
 *   # journal: ...                           optional: where appended lines start
 *   KEY<TAB>ALGORITHM<TAB>TIME_MS<TAB>WORKSPACE_BYTES
 *   ...                                      in the order they were stored
 *
 * The key may itself contain tabs (the tuner joins its parts with tabs): the
 * LAST three tab-separated fields are the algorithm, the median time in
 * milliseconds (see parse_time) and the workspace in bytes (a non-negative
 * integer); everything before them is the key. Empty lines are ignored. When
 * a key appears more than once, its last line wins: that is how the journal
 * (lines appended after the "# journal" comment) overrides the sorted part,
 * and it is also what every version-1 reader did, so old readers load
 * journaled files correctly. A line that does not parse (too few fields, a
 * bad number, too long, no final newline) is skipped, with one warning per
 * read that names the file and the first bad line; the next compaction drops
 * such lines. A file with another format version, without a version line,
 * larger than MAX_FILE_BYTES or not a regular file is ignored as a whole (one
 * warning) and never overwritten. Only regular files are opened, and without
 * blocking (O_NONBLOCK, then fstat): a FIFO or a device as the database would
 * otherwise block or never end while the state lock is held.
 *
 * Writing the user file, always under an exclusive flock() on "perfdb.lock"
 * in the same directory (opened with O_NOFOLLOW; a symlink or non-regular
 * lock file disables the file, with a warning): first catch up with what other
 * processes appended since this process last read the file (only the new
 * bytes are read), then either
 *   - append: the new entries' lines are written at the end of the file with
 *     one write(), then fsync'd. Cost O(entry), not O(file). Or
 *   - compact: write every entry sorted, then the "# journal" comment, to a
 *     temporary file "perfdb.txt.tmp.XXXXXX" in the same directory, fsync it,
 *     rename() it over the database, fsync the directory. This happens when
 *     the file is missing, has no journal comment (a file written by an older
 *     adnn), had a bad or truncated line, or when the journal would grow past
 *     a quarter of the file (and past COMPACT_MIN_JOURNAL bytes): amortized,
 *     O(1) per store. Temporary files that a killed writer left behind (older
 *     than STALE_TEMP_SECONDS) are removed under the lock.
 * Readers never lock in the common case. A reader can meet a line that a
 * concurrent append has not finished yet (no newline at the end of the file):
 * it then takes a shared flock() on the lock file, which waits for the
 * appending writer, and reads that line again; a line still without a
 * newline then is truncated (a writer died mid-write) and is skipped. A writer
 * waits at most 10 s for the lock (a dead holder releases it), then keeps its
 * result in memory. Numbers are written in the C locale.
 *
 * Every failure is a warning, never an error to plan creation: when the user
 * file cannot be read or written, one warning per process says so and entries
 * stay in memory.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
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
#define TEMP_INFIX ".tmp."       /* temporary files: USER_FILE_NAME TEMP_INFIX XXXXXX */
#define TEMP_RANDOM_CHARS 6      /* the XXXXXX of mkostemp */
/* A larger file is ignored: it bounds what a read costs, whatever the file. */
#define MAX_FILE_BYTES (1ll << 30)
/* A temporary file older than this was left by a writer that died. */
#define STALE_TEMP_SECONDS 600
/* The journal is compacted once it is over a quarter of the file and over this. */
#define COMPACT_MIN_JOURNAL (64 * 1024)
#define JOURNAL_MARKER "# journal"
#define JOURNAL_LINE                                                                   \
  JOURNAL_MARKER ": entries below were appended after the sorted ones above; the last " \
                 "line of a key wins\n"

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

/* The times the database holds: every finite non-negative double, subnormals
 * included. The same rule applies to a store, a file load and an import, and
 * format_time() writes each of them in a form parse_time() reads back
 * exactly, so whatever is accepted also survives a write and a read. */
static int time_valid(double t) { return isfinite(t) && t >= 0.0; }

/* The shortest of %.15g, %.16g and %.17g that reads back as exactly `t` (17
 * significant digits always do): "0.5" stays "0.5", and a subnormal or
 * DBL_MAX round-trips. Called in the C locale. */
static void format_time(double t, char *buf, size_t size) {
  for (int digits = 15; digits <= 17; digits++) {
    snprintf(buf, size, "%.*g", digits, t);
    if (strtod(buf, NULL) == t) return;
  }
}

/* A time field: a decimal or hexadecimal floating-point number (strtod's
 * syntax, C locale) that, rounded to the nearest double, is finite and not
 * negative. Underflow is no error: "1e-310" is the subnormal strtod returns
 * (it sets ERANGE for it) and "1e-400" is 0; overflow ("1e400"), "inf" and
 * "nan" are rejected. -0 reads as 0. Returns 0 when the field is bad. */
static int parse_time(const char *s, double *out) {
  if (*s == '\0') return 0;
  char *stop;
  errno = 0;
  double t = strtod(s, &stop);
  if (*stop != '\0') return 0;
  if (errno != 0 && !(errno == ERANGE && fabs(t) <= DBL_MIN)) return 0;
  if (!time_valid(t)) return 0;
  *out = t + 0.0; /* -0 + 0 is +0 */
  return 1;
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
  double t;
  if (!parse_time(f[1], &t)) return "time is not a finite non-negative number";
  if (f[2][0] < '0' || f[2][0] > '9') return "workspace is not a non-negative integer";
  char *stop;
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

/* ------------------------------------------------------------------------ */
/* Reading: a line splitter and parser shared by files and memory buffers   */
/* ------------------------------------------------------------------------ */

typedef struct parser {
  const char *name; /* the file, for messages */
  table *out;       /* entries are added here, later lines replacing earlier ones */
  int have_version; /* the version line was seen (or the read continues a file) */
  int foreign;      /* another version or not a database: stop, ignore the file */
  size_t lineno;    /* lines seen so far, the current one included */
  size_t bad, first_bad;
  const char *first_why;
  long long journal_at; /* offset just after the "# journal" line; -1: none seen */
  /* The line being assembled: at most MAX_LINE bytes are kept; a longer one is
   * marked too_long and the rest is skipped, so an endless line costs no memory. */
  long long line_start; /* offset of the current line; every line before it is done */
  size_t len;
  int too_long;
  char line[MAX_LINE + 1];
} parser;

static parser *parser_new(const char *name, table *out, int have_version, size_t lineno,
                          long long from, long long journal_at) {
  parser *p = malloc(sizeof *p);
  if (p == NULL) return NULL;
  memset(p, 0, offsetof(parser, line));
  p->name = name;
  p->out = out;
  p->have_version = have_version;
  p->lineno = lineno;
  p->first_why = "";
  p->journal_at = journal_at;
  p->line_start = from;
  return p;
}

static void parser_bad(parser *p, const char *why) {
  if (p->bad++ == 0) {
    p->first_bad = p->lineno;
    p->first_why = why;
  }
}

/* Handles the assembled line; `complete`: it ended with a newline, and
 * `end` is the offset after that newline. */
static void parser_line(parser *p, int complete, long long end) {
  char *line = p->line;
  size_t len = p->len;
  p->lineno++;
  if (!p->too_long && len > 0 && line[len - 1] == '\r') len--;
  line[len] = '\0';
  if (len == 0 && !p->too_long) return;
  if (line[0] == '#') {
    if (p->have_version && complete && strncmp(line, JOURNAL_MARKER, strlen(JOURNAL_MARKER)) == 0)
      p->journal_at = end;
    return;
  }
  if (!p->have_version) {
    int v = 0, n = 0;
    if (!p->too_long && sscanf(line, "adnn-perfdb %d%n", &v, &n) == 1 && line[n] == '\0') {
      if (v != FORMAT_VERSION) {
        db_log(ADNN_LOG_WARN,
               "performance database %s has format version %d; this adnn reads version %d "
               "only, so the file is ignored (and left as it is)",
               p->name, v, FORMAT_VERSION);
        p->foreign = 1;
        return;
      }
      p->have_version = 1;
      return;
    }
    db_log(ADNN_LOG_WARN,
           "%s is not an adnn performance database (line %zu is not \"adnn-perfdb %d\"); it is "
           "ignored and left as it is",
           p->name, p->lineno, FORMAT_VERSION);
    p->foreign = 1;
    return;
  }
  const char *key, *why;
  adnn__perfdb_entry e;
  if (p->too_long) why = "longer than 8192 bytes";
  else if (!complete) why = "truncated (no newline at the end of the file)";
  else if (strlen(line) != len) why = "contains a NUL byte";
  else why = parse_entry(line, &key, &e);
  if (why == NULL && !table_put(p->out, key, &e)) why = "out of memory";
  if (why != NULL) parser_bad(p, why);
}

/* Feeds `n` bytes that start at file offset `off` (the bytes just after the
 * previous ones). Complete lines are handled; an unfinished one is kept. */
static void parser_bytes(parser *p, const char *buf, size_t n, long long off) {
  size_t i = 0;
  while (i < n && !p->foreign) {
    const char *nl = memchr(buf + i, '\n', n - i);
    size_t seg = nl ? (size_t)(nl - (buf + i)) : n - i;
    size_t room = MAX_LINE - p->len;
    if (seg > room) p->too_long = 1;
    memcpy(p->line + p->len, buf + i, seg < room ? seg : room);
    p->len += seg < room ? seg : room;
    i += seg;
    if (nl == NULL) break;
    i++; /* the newline */
    long long end = off + (long long)i;
    parser_line(p, 1, end);
    p->line_start = end;
    p->len = 0;
    p->too_long = 0;
  }
}

/* Whether an unfinished last line is held. */
static int parser_has_tail(const parser *p) { return p->len > 0 || p->too_long; }

/* The unfinished last line is final: it is truncated (or a comment, or the
 * version line, without a newline). */
static void parser_finish(parser *p) {
  if (parser_has_tail(p) && !p->foreign) parser_line(p, 0, -1);
  p->len = 0;
  p->too_long = 0;
}

/* One warning per read for its skipped lines. */
static void parser_warn(const parser *p) {
  if (p->bad > 0 && !p->foreign)
    db_log(ADNN_LOG_WARN,
           "performance database %s: skipped %zu corrupt line%s (first: line %zu: %s)", p->name,
           p->bad, p->bad == 1 ? "" : "s", p->first_bad, p->first_why);
}

/* Reads from `from` to the end of the file (at most up to MAX_FILE_BYTES)
 * into the parser, with pread (the descriptor's offset is never used).
 * Returns 0 or an errno value; *end (may be NULL) receives the offset where
 * reading stopped. Stops at a foreign file. */
static int read_from(int fd, parser *p, long long from, long long *end) {
  enum { CHUNK = 1 << 16 };
  char *buf = malloc(CHUNK);
  if (buf == NULL) return ENOMEM;
  int err = 0;
  long long off = from;
  while (!p->foreign && off < MAX_FILE_BYTES) {
    long long left = MAX_FILE_BYTES - off;
    ssize_t n = pread(fd, buf, left < CHUNK ? (size_t)left : CHUNK, (off_t)off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      break;
    }
    if (n == 0) break;
    parser_bytes(p, buf, (size_t)n, off);
    off += n;
  }
  free(buf);
  if (end) *end = off;
  return err;
}

/* Describes a file type for "it is not a regular file (...)". */
static const char *file_kind(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a plain file";
}

/* Opens `path` for reading if it is a regular file, never blocking: O_NONBLOCK
 * makes open() return at once for a FIFO, fstat() then refuses it (and
 * devices such as /dev/zero, which never end). Returns the descriptor (in
 * blocking mode again), or -1 with *missing set for a file that does not
 * exist and `why` saying what is wrong otherwise. *sb receives its status. */
static int open_regular(const char *path, struct stat *sb, int *missing, char *why,
                        size_t whysize) {
  *missing = 0;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *missing = errno == ENOENT;
    snprintf(why, whysize, "%s", strerror(errno));
    return -1;
  }
  if (fstat(fd, sb) != 0) {
    snprintf(why, whysize, "%s", strerror(errno));
    close(fd);
    return -1;
  }
  if (!S_ISREG(sb->st_mode)) {
    snprintf(why, whysize, "it is not a regular file (it is %s)", file_kind(sb->st_mode));
    close(fd);
    return -1;
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  return fd;
}

typedef enum load_result {
  LOAD_OK,         /* parsed (possibly with skipped lines) */
  LOAD_MISSING,    /* the file does not exist */
  LOAD_UNREADABLE, /* not a regular file, or open or read failed: see why */
  LOAD_FOREIGN     /* another format version, not a database or too large: never overwrite */
} load_result;

static void too_large_warning(const char *path) {
  db_log(ADNN_LOG_WARN,
         "performance database %s is larger than %lld bytes; it is ignored (and left as it is)",
         path, MAX_FILE_BYTES);
}

/* Reads a whole database file (the system file or one to import) into `out`
 * (entries added, replacing same keys). Warns once about skipped lines, and
 * about foreign files. */
static load_result load_file_c(const char *path, table *out, char *why, size_t whysize) {
  struct stat sb;
  int missing;
  why[0] = '\0';
  int fd = open_regular(path, &sb, &missing, why, whysize);
  if (fd < 0) return missing ? LOAD_MISSING : LOAD_UNREADABLE;
  if (sb.st_size > MAX_FILE_BYTES) {
    close(fd);
    too_large_warning(path);
    snprintf(why, whysize, "it is larger than %lld bytes", MAX_FILE_BYTES);
    return LOAD_FOREIGN;
  }
  parser *p = parser_new(path, out, 0, 0, 0, -1);
  if (p == NULL) {
    close(fd);
    snprintf(why, whysize, "%s", strerror(ENOMEM));
    return LOAD_UNREADABLE;
  }
  int err = read_from(fd, p, 0, NULL);
  close(fd);
  load_result r = LOAD_OK;
  if (p->foreign) {
    r = LOAD_FOREIGN;
    snprintf(why, whysize, "it is not an adnn performance database of format version %d",
             FORMAT_VERSION);
  } else if (err != 0) {
    r = LOAD_UNREADABLE;
    snprintf(why, whysize, "%s", strerror(err));
  } else {
    parser_finish(p);
    parser_warn(p);
  }
  free(p);
  return r;
}

/* The lines of the given entries, sorted by key, in one buffer; NULL on OOM.
 * Called in the C locale. */
static char *format_entries(node *const *sorted, size_t k, size_t *len_out) {
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  for (size_t i = 0; buf != NULL && i < k; i++) {
    char t[40];
    format_time(sorted[i]->entry.time_ms, t, sizeof t);
    size_t need = strlen(sorted[i]->key) + strlen(sorted[i]->entry.algorithm) + strlen(t) + 32;
    if (len + need > cap) {
      while (len + need > cap) cap *= 2;
      char *nb = realloc(buf, cap);
      if (nb == NULL) {
        free(buf);
        return NULL;
      }
      buf = nb;
    }
    len += (size_t)snprintf(buf + len, cap - len, "%s\t%s\t%s\t%zu\n", sorted[i]->key,
                            sorted[i]->entry.algorithm, t, sorted[i]->entry.workspace_bytes);
  }
  *len_out = len;
  return buf;
}

/* The entries of a table sorted by key (an array of its nodes); NULL on OOM
 * (or when empty, with *k = 0). */
static node **sorted_nodes(const table *t, size_t *k) {
  *k = 0;
  node **sorted = malloc((t->count ? t->count : 1) * sizeof *sorted);
  if (sorted == NULL) return NULL;
  for (size_t i = 0; i < t->nbuckets; i++)
    for (node *n = t->buckets[i]; n; n = n->next) sorted[(*k)++] = n;
  qsort(sorted, *k, sizeof *sorted, cmp_nodes);
  return sorted;
}

/* Writes the union of tables (later ones override earlier ones) to `path`
 * atomically: a temporary file in the same directory, fsync, rename, fsync of
 * the directory. With `journal`, the "# journal" line follows the entries and
 * *journal_at receives the offset after it (appends go there). Returns 0 or
 * an errno value; *what says which step failed. Called in the C locale. */
static int write_file_c(const char *path, const table *const *tables, size_t ntables, mode_t mode,
                        int journal, long long *journal_at, const char **what) {
  table all = {0};
  int err = 0;
  char *tmp = NULL, *body = NULL;
  node **sorted = NULL;
  for (size_t i = 0; i < ntables; i++)
    if (!table_merge(&all, tables[i])) err = ENOMEM;
  size_t k = 0, blen = 0;
  if (err == 0 && (sorted = sorted_nodes(&all, &k)) == NULL) err = ENOMEM;
  if (err == 0 && (body = format_entries(sorted, k, &blen)) == NULL) err = ENOMEM;
  if (err != 0) {
    *what = "write";
    goto done;
  }
  char head[256];
  int hlen = snprintf(head, sizeof head,
                      "# adnn performance database\n"
                      "# fields: key (may contain tabs) <TAB> algorithm <TAB> time_ms <TAB> "
                      "workspace_bytes\n"
                      "adnn-perfdb %d\n",
                      FORMAT_VERSION);
  long long total = hlen + (long long)blen + (journal ? (long long)strlen(JOURNAL_LINE) : 0);
  if (total > MAX_FILE_BYTES) {
    err = EFBIG;
    *what = "write";
    goto done;
  }
  if (asprintf(&tmp, "%s" TEMP_INFIX "XXXXXX", path) < 0) {
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
  fwrite(head, 1, (size_t)hlen, f);
  fwrite(body, 1, blen, f);
  if (journal) fputs(JOURNAL_LINE, f);
  if (fflush(f) != 0 || ferror(f)) err = errno ? errno : EIO;
  if (err == 0 && fsync(fileno(f)) != 0) err = errno;
  if (fclose(f) != 0 && err == 0) err = errno;
  if (err == 0 && rename(tmp, path) != 0) err = errno;
  if (err != 0) {
    unlink(tmp);
    *what = "write";
    goto done;
  }
  if (journal_at) *journal_at = total;
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
  free(body);
  free(sorted);
  table_free(&all);
  return err;
}

static load_result load_file(const char *path, table *out, char *why, size_t whysize) {
  locale_t old = numeric_c_begin();
  load_result r = load_file_c(path, out, why, whysize);
  numeric_c_end(old);
  return r;
}

static int write_file(const char *path, const table *const *tables, size_t ntables, mode_t mode,
                      int journal, long long *journal_at, const char **what) {
  locale_t old = numeric_c_begin();
  int err = write_file_c(path, tables, ntables, mode, journal, journal_at, what);
  numeric_c_end(old);
  return err;
}

/* ------------------------------------------------------------------------ */
/* Process state (all under `lock`)                                          */
/* ------------------------------------------------------------------------ */

static int initialized = 0;
static char *user_dir = NULL;    /* NULL: no cache directory known */
static char *user_path = NULL;   /* user_dir/perfdb.txt */
static char *lock_path = NULL;   /* user_dir/perfdb.lock */
static char *system_path = NULL; /* NULL: no system database configured */
static table mem_table, user_table, system_table;
static int user_loaded = 0, system_loaded = 0, system_present = 0;
static int user_foreign = 0;     /* the user file must not be overwritten */
static int file_disabled = 0;    /* the user file cannot be written: memory only */
static int read_failed = 0;      /* the user file cannot be read either */
static int disabled_warned = 0;
static int temps_swept = 0;      /* stale temporary files were looked for */
static char disabled_reason[512]; /* why file_disabled, for error messages */

/* The user file as last read. The descriptor stays open so that its inode
 * cannot be reused by another file while this process remembers offsets in
 * it: a path that still names this inode is the same file, grown only by
 * appends, and only its new bytes need reading. */
static int user_fd = -1;
static struct stat user_stat;      /* fstat of user_fd before the last read */
static long long user_consumed;    /* offset after the last complete line read */
static long long user_seen;        /* offset up to which it was read (its end then) */
static long long user_journal_at;  /* offset where the journal starts; -1: no marker */
static size_t user_lines;          /* lines read, for line numbers in later warnings */
static int user_dirty;             /* a bad or truncated line was read: compact it away */
/* What this process last read or wrote of the user file, to tell appends
 * (which change neither) from a rewrite in place that kept the inode and did
 * not shrink the file (an editor or another tool): the bytes just before
 * user_consumed and a hash of the file's first USER_HEAD_BYTES. When either
 * differs, the file is read again in full. Two small reads per refresh; an
 * edit that changes only the middle of a large file still goes unseen. */
#define USER_TAIL_BYTES 64
#define USER_HEAD_BYTES 4096
static unsigned char user_tail[USER_TAIL_BYTES];
static size_t user_tail_len;
static uint64_t user_head_hash;

/* Reads the `want` bytes of fd from `from` into buf; returns how many, or -1
 * on a read error or a short file. */
static long read_span(int fd, long long from, size_t want, unsigned char *buf) {
  size_t got = 0;
  while (got < want) {
    ssize_t n = pread(fd, buf + got, want - got, (off_t)(from + (long long)got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    got += (size_t)n;
  }
  return (long)got;
}

/* The up to USER_TAIL_BYTES bytes that end at `end`. */
static long read_tail(int fd, long long end, unsigned char *buf) {
  long long from = end > USER_TAIL_BYTES ? end - USER_TAIL_BYTES : 0;
  return read_span(fd, from, (size_t)(end - from), buf);
}

/* FNV-1a over the first min(USER_HEAD_BYTES, end) bytes; 0 on a read error. */
static uint64_t head_hash(int fd, long long end) {
  unsigned char buf[USER_HEAD_BYTES];
  size_t want = end < USER_HEAD_BYTES ? (size_t)end : USER_HEAD_BYTES;
  if (read_span(fd, 0, want, buf) < 0) return 0;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < want; i++) h = (h ^ buf[i]) * 0x100000001b3ull;
  return h;
}

static void remember_tail(void) {
  long n = user_fd >= 0 ? read_tail(user_fd, user_consumed, user_tail) : -1;
  user_tail_len = n > 0 ? (size_t)n : 0;
  user_head_hash = user_fd >= 0 ? head_hash(user_fd, user_consumed) : 0;
}

/* Whether the head and the bytes before user_consumed are still the ones
 * remembered. */
static int tail_unchanged(void) {
  unsigned char now[USER_TAIL_BYTES];
  long n = read_tail(user_fd, user_consumed, now);
  return n >= 0 && (size_t)n == user_tail_len && memcmp(now, user_tail, user_tail_len) == 0 &&
         head_hash(user_fd, user_consumed) == user_head_hash;
}

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
    lock_path = dup_printf("%s/%s", user_dir, LOCK_FILE_NAME);
    if (user_path == NULL || lock_path == NULL) {
      free(user_dir);
      free(user_path);
      free(lock_path);
      user_dir = user_path = lock_path = NULL;
    }
  }
  const char *sys = getenv("ADNN_SYSTEM_PERFDB");
  if (sys == NULL) sys = ADNN_SYSTEM_PERFDB;
  if (*sys != '\0') system_path = strdup(sys);
}

/* Forgets the user file as read (the table too). */
static void user_forget(void) {
  if (user_fd >= 0) close(user_fd);
  user_fd = -1;
  table_free(&user_table);
  user_consumed = user_seen = 0;
  user_journal_at = -1;
  user_lines = 0;
  user_dirty = 0;
}

/* Resets the whole state as if the process had just started (tests only). */
void adnn__perfdb_reset(void);
void adnn__perfdb_reset(void) {
  db_lock();
  free(user_dir);
  free(user_path);
  free(lock_path);
  free(system_path);
  user_dir = user_path = lock_path = system_path = NULL;
  user_forget();
  table_free(&mem_table);
  table_free(&system_table);
  initialized = user_loaded = system_loaded = system_present = 0;
  user_foreign = file_disabled = read_failed = disabled_warned = temps_swept = 0;
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
  char why[256];
  switch (load_file(system_path, &system_table, why, sizeof why)) {
    case LOAD_OK: system_present = 1; break;
    case LOAD_MISSING: break;
    case LOAD_UNREADABLE:
      system_present = 1;
      db_log(ADNN_LOG_WARN, "cannot read the system performance database %s: %s", system_path,
             why);
      break;
    case LOAD_FOREIGN: system_present = 1; break;
  }
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* Opens the lock file without following a symlink (a dangling one would make
 * O_CREAT create its target, anywhere) and without blocking (a FIFO), and
 * accepts only a regular file. `create`: for a writer, which creates it; a
 * reader only opens an existing one. Returns the descriptor or -1 with `why`. */
static int open_lock_file(int create, char *why, size_t whysize) {
  const int flags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
  int fd = -1, err = 0;
  if (create) {
    fd = open(lock_path, O_RDWR | O_CREAT | flags, 0600);
    err = errno;
  }
  /* flock() works on a read-only descriptor too (a lock file made by someone
   * else in a shared, writable directory). */
  if (fd < 0 && (!create || err == EACCES)) {
    fd = open(lock_path, O_RDONLY | flags);
    err = errno;
  }
  if (fd < 0) {
    if (err == ELOOP)
      snprintf(why, whysize, "it is a symbolic link (the lock file must be a regular file)");
    else
      snprintf(why, whysize, "%s", strerror(err));
    return -1;
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    snprintf(why, whysize, "it is not a regular file (it is %s)",
             fstat(fd, &sb) == 0 ? file_kind(sb.st_mode) : "unknown");
    close(fd);
    return -1;
  }
  return fd;
}

/* flock() with the timeout; 0 or an errno value (ETIMEDOUT). */
static int flock_wait(int fd, int op) {
  int waited = 0;
  while (flock(fd, op | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return errno;
    if (waited >= LOCK_TIMEOUT_MS) return ETIMEDOUT;
    sleep_ms(5);
    waited += 5;
  }
  return 0;
}

/* Reads the user file from `from` on (0: a fresh read of `fd`, into a new
 * table; else a continuation into user_table). Returns 0 or an errno value;
 * *foreign is set for a file that must be ignored. `have_lock`: the caller
 * holds the exclusive file lock, so an unfinished last line is truncated for
 * good; without it, the read waits for a writer that may be appending it. */
static int read_user(int fd, long long from, table *out, int have_lock, int *foreign) {
  *foreign = 0;
  parser *p = from == 0 ? parser_new(user_path, out, 0, 0, 0, -1)
                        : parser_new(user_path, out, 1, user_lines, from, user_journal_at);
  if (p == NULL) return ENOMEM;
  long long end = from;
  int err = read_from(fd, p, from, &end);
  if (err == 0 && !p->foreign && parser_has_tail(p) && !have_lock) {
    /* Perhaps an append in progress: its writer holds the lock until the
     * line is complete. Read the line again once it is released. */
    char why[256];
    int lfd = open_lock_file(0, why, sizeof why);
    if (lfd >= 0 && flock_wait(lfd, LOCK_SH) == 0) {
      long long at = p->line_start;
      p->len = 0;
      p->too_long = 0;
      err = read_from(fd, p, at, &end);
      flock(lfd, LOCK_UN);
    }
    if (lfd >= 0) close(lfd);
  }
  if (err == 0 && p->foreign) {
    *foreign = 1;
  } else if (err == 0) {
    user_consumed = p->line_start;
    if (parser_has_tail(p)) user_dirty = 1;
    parser_finish(p);
    if (p->bad > 0) user_dirty = 1;
    parser_warn(p);
    user_journal_at = p->journal_at;
    user_lines = p->lineno;
    user_seen = end;
    remember_tail();
  }
  free(p);
  return err;
}

/* Loads the user file if not loaded yet, or (refresh) catches up with it if
 * it changed on disk: the new bytes only when it grew by appends, the whole
 * file when it was replaced (another process compacted it). */
static void load_user_locked(int refresh, int have_lock) {
  if (user_path == NULL || read_failed) {
    user_loaded = 1;
    return;
  }
  if (user_loaded && !refresh) return;
  struct stat sb;
  if (stat(user_path, &sb) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
    user_forget();
    user_foreign = 0;
    user_loaded = 1;
    return;
  }
  locale_t old = numeric_c_begin();
  int foreign = 0, err = 0;
  if (user_loaded && user_fd >= 0 && sb.st_dev == user_stat.st_dev &&
      sb.st_ino == user_stat.st_ino) {
    if (sb.st_size == user_seen && sb.st_mtim.tv_sec == user_stat.st_mtim.tv_sec &&
        sb.st_mtim.tv_nsec == user_stat.st_mtim.tv_nsec)
      goto out; /* unchanged */
    if (!user_foreign && sb.st_size >= user_seen && sb.st_size <= MAX_FILE_BYTES &&
        tail_unchanged()) {
      /* Grown by appends: read the new lines only. */
      struct stat now;
      if (fstat(user_fd, &now) == 0) user_stat = now;
      err = read_user(user_fd, user_consumed, &user_table, have_lock, &foreign);
      if (err != 0) goto failed;
      goto out;
    }
  }
  /* A fresh read of the whole file. */
  user_loaded = 1;
  char why[256];
  int missing;
  int fd = open_regular(user_path, &sb, &missing, why, sizeof why);
  if (fd < 0 && missing) {
    user_forget();
    user_foreign = 0;
    goto out;
  }
  if (fd < 0) {
    user_forget();
    read_failed = 1;
    disable_file("read", user_path, why);
    goto out;
  }
  user_forget();
  user_fd = fd;
  user_stat = sb;
  if (sb.st_size > MAX_FILE_BYTES) {
    too_large_warning(user_path);
    user_foreign = 1;
    user_seen = sb.st_size;
    goto out;
  }
  table fresh = {0};
  err = read_user(fd, 0, &fresh, have_lock, &foreign);
  if (err != 0 || foreign) {
    table_free(&fresh);
    if (err != 0) goto failed;
    user_foreign = 1;
    user_seen = sb.st_size;
    goto out;
  }
  user_table = fresh;
  user_foreign = 0;
  goto out;
failed:
  user_forget();
  read_failed = 1;
  disable_file("read", user_path, strerror(err));
out:
  user_loaded = 1;
  numeric_c_end(old);
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

/* Whether `name` is one of this database's temporary files,
 * "perfdb.txt.tmp.XXXXXX" with mkostemp's six letters and digits. */
static int is_temp_name(const char *name) {
  const char *prefix = USER_FILE_NAME TEMP_INFIX;
  size_t plen = strlen(prefix);
  if (strncmp(name, prefix, plen) != 0 || strlen(name) != plen + TEMP_RANDOM_CHARS) return 0;
  for (const char *c = name + plen; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
      return 0;
  return 1;
}

/* Removes the temporary files a writer killed between mkostemp and rename left
 * in the cache directory. Runs under the file lock, which every writer of
 * such a file holds while it exists; the age rule (STALE_TEMP_SECONDS) also
 * spares the file of a writer that does not lock, such as an export to
 * perfdb.txt itself. Only regular files with the exact name pattern. */
static void sweep_stale_temps_locked(void) {
  DIR *d = opendir(user_dir);
  if (d == NULL) return;
  time_t now = time(NULL);
  int removed = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (!is_temp_name(de->d_name)) continue;
    struct stat sb;
    if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode))
      continue;
    if (now - sb.st_mtime < STALE_TEMP_SECONDS) continue;
    if (unlinkat(dirfd(d), de->d_name, 0) == 0) removed++;
  }
  closedir(d);
  if (removed > 0)
    db_log(ADNN_LOG_INFO,
           "performance database: removed %d stale temporary file%s that an interrupted writer "
           "left in %s",
           removed, removed == 1 ? "" : "s", user_dir);
}

/* Appends the lines of `add` to the user file, which the caller has just
 * caught up with under the lock. Returns 0, an errno value, or -1 when the
 * file is not the one read (then the caller compacts instead). */
static int append_locked(const table *add) {
  size_t k = 0, len = 0;
  node **sorted = sorted_nodes(add, &k);
  if (sorted == NULL) return ENOMEM;
  locale_t old = numeric_c_begin();
  char *lines = format_entries(sorted, k, &len);
  numeric_c_end(old);
  free(sorted);
  if (lines == NULL) return ENOMEM;
  int fd = open(user_path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_dev != user_stat.st_dev ||
      sb.st_ino != user_stat.st_ino || sb.st_size != user_seen) {
    if (fd >= 0) close(fd);
    free(lines);
    return -1;
  }
  int err = 0;
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(fd, lines + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    done += (size_t)n;
  }
  if (err == 0 && fsync(fd) != 0) err = errno;
  if (err != 0) {
    /* Take back a partial line (the lock is still held): the file stays as
     * it was. */
    if (ftruncate(fd, sb.st_size) != 0) user_dirty = 1;
  } else if (!table_merge(&user_table, add)) {
    err = ENOMEM;
  } else {
    user_consumed = user_seen = sb.st_size + (long long)len;
    struct stat now;
    if (fstat(user_fd, &now) == 0) user_stat = now;
    remember_tail();
  }
  close(fd);
  free(lines);
  return err;
}

/* Rewrites the user file with every entry (the file's and `add`) sorted, and
 * the journal marker after them, then holds the new file as the one read. */
static int compact_locked(const table *add, const char **what) {
  const table *both[2] = {&user_table, add};
  long long journal_at = -1;
  int err = write_file(user_path, both, 2, 0600, 1, &journal_at, what);
  if (err != 0) return err;
  if (!table_merge(&user_table, add)) return ENOMEM;
  table keep = user_table;
  memset(&user_table, 0, sizeof user_table);
  user_forget();
  user_table = keep;
  char why[256];
  int missing;
  struct stat sb;
  int fd = open_regular(user_path, &sb, &missing, why, sizeof why);
  if (fd >= 0) {
    /* Nobody else writes under the lock: this is the file just written. */
    user_fd = fd;
    user_stat = sb;
    user_consumed = user_seen = sb.st_size;
    user_journal_at = journal_at;
    user_lines = 4 + keep.count;
    remember_tail();
  } else {
    user_loaded = 0; /* read it again on the next lookup */
  }
  sweep_stale_temps_locked();
  return 0;
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
  char why[256];
  int lfd = open_lock_file(1, why, sizeof why);
  if (lfd < 0) {
    disable_file("use the lock file", lock_path, why);
    return EPERM;
  }
  err = flock_wait(lfd, LOCK_EX);
  if (err != 0) {
    /* A stuck writer: skip this write, but keep trying on later stores. */
    db_log(ADNN_LOG_WARN, "performance database: cannot lock %s: %s; this result stays in memory",
           lock_path, strerror(err));
    close(lfd);
    return err;
  }
  if (!temps_swept) {
    temps_swept = 1;
    sweep_stale_temps_locked();
  }
  /* Catch up with what other processes wrote since this one last read. */
  load_user_locked(1, 1);
  if (read_failed) {
    err = EIO; /* disable_file has warned */
  } else if (user_foreign) {
    err = EEXIST;
    disable_file("overwrite", user_path, "it has another format version or is not a database");
  } else {
    /* Append unless the file needs rewriting, or the journal has grown past
     * a quarter of the file (then a compaction costs O(file) once per
     * O(file) appended bytes: O(1) per store, amortized). */
    long long add_bytes = 0;
    for (size_t i = 0; i < add->nbuckets; i++)
      for (const node *n = add->buckets[i]; n; n = n->next)
        add_bytes += (long long)strlen(n->key) + (long long)strlen(n->entry.algorithm) + 48;
    long long journal = user_consumed - user_journal_at + add_bytes;
    int compact = user_fd < 0 || user_journal_at < 0 || user_dirty ||
                  user_consumed != user_seen || user_seen + add_bytes > MAX_FILE_BYTES ||
                  (journal > COMPACT_MIN_JOURNAL && journal * 4 > user_seen + add_bytes);
    const char *what = "write";
    err = compact ? -1 : append_locked(add);
    if (err == -1) err = compact_locked(add, &what);
    if (err != 0) disable_file(what, user_path, strerror(err));
  }
  flock(lfd, LOCK_UN);
  close(lfd);
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
    load_user_locked(0, 0);
    n = table_find(&user_table, key);
    if (n == NULL) {
      /* Another process may have stored it since we read the file. */
      load_user_locked(1, 0);
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
  if (time_valid(e.time_ms)) e.time_ms += 0.0; /* -0 is stored as 0, as a file load reads it */
  db_lock();
  init_locked();
  if (!table_put(&mem_table, key, &e)) {
    db_unlock();
    return;
  }
  if (!key_writable(key) || !algorithm_valid(e.algorithm) || !time_valid(e.time_ms)) {
    db_log(ADNN_LOG_DEBUG,
           "performance database: entry not representable in the file (key or algorithm "
           "has a newline, a leading '#' or bad length, or the time is not finite and "
           "non-negative); kept in memory");
  } else {
    table add = {0};
    if (table_put(&add, key, &e)) store_to_file_locked(&add);
    table_free(&add);
  }
  db_unlock();
}

int adnn__perfdb_parse(const char *text, size_t len, const char *name, size_t *entries,
                       size_t *bad_lines) {
  if (entries) *entries = 0;
  if (bad_lines) *bad_lines = 0;
  if (text == NULL && len > 0) return -1;
  if (name == NULL) name = "(memory)";
  table t = {0};
  db_lock();
  locale_t old = numeric_c_begin();
  int result = -1;
  if ((long long)len > MAX_FILE_BYTES) {
    too_large_warning(name);
  } else {
    parser *p = parser_new(name, &t, 0, 0, 0, -1);
    if (p != NULL) {
      parser_bytes(p, text, len, 0);
      if (!p->foreign) {
        parser_finish(p);
        parser_warn(p);
        result = 0;
        if (entries) *entries = t.count;
        if (bad_lines) *bad_lines = p->bad;
      }
      free(p);
    }
  }
  numeric_c_end(old);
  db_unlock();
  table_free(&t);
  return result;
}

/* ------------------------------------------------------------------------ */
/* Public API                                                                */
/* ------------------------------------------------------------------------ */

adnn_status adnn_perfdb_info(const char **user_path_out, size_t *user_entries,
                             const char **system_path_out, size_t *system_entries) {
  db_lock();
  init_locked();
  load_user_locked(1, 0);
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
  load_user_locked(1, 0);
  load_system_locked();
  const table *all[3] = {&system_table, &user_table, &mem_table};
  const char *what = "write";
  int err = write_file(path, all, 3, 0644, 0, NULL, &what);
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
  char rwhy[256];
  db_lock(); /* load_file queues its warnings, which needs the lock */
  load_result r = load_file(path, &in, rwhy, sizeof rwhy);
  if (r != LOAD_OK) {
    db_unlock();
    table_free(&in);
    if (r == LOAD_FOREIGN)
      return adnn__fail(ADNN_STATUS_EXECUTION_FAILED, "adnn_perfdb_import: %s: %s", path, rwhy);
    return adnn__fail(ADNN_STATUS_EXECUTION_FAILED, "adnn_perfdb_import: cannot read %s: %s",
                      path, rwhy);
  }
  init_locked();
  load_user_locked(0, 0);
  if (!table_merge(&mem_table, &in)) {
    db_unlock();
    table_free(&in);
    return adnn__fail(ADNN_STATUS_EXECUTION_FAILED, "adnn_perfdb_import: out of memory");
  }
  size_t count = in.count;
  if (imported) *imported = count;
  int err = count ? store_to_file_locked(&in) : 0;
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
