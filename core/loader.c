/*
 * Plugin discovery, loading and probing, the public backend enumeration, and the
 * choice made for "auto".
 *
 * Search path: ADNN_PLUGIN_PATH (colon-separated absolute directories) if set
 * and non-empty, else the compiled-in plugin directory. Relative entries are
 * ignored with a warning, so a plugin is never picked up from the current
 * directory. Every "*.so" file in each directory is a candidate, in name order.
 *
 * Loading happens once per process under pthread_once; the records it builds
 * are immutable afterwards (except each plugin's init state, which has its own
 * lock), so readers need no lock.
 */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "core/loader.h"

#ifndef ADNN_PLUGIN_DIR
#error "ADNN_PLUGIN_DIR must be defined by the build"
#endif

/* ------------------------------------------------------------------------ */
/* Host table                                                                */
/* ------------------------------------------------------------------------ */

static void host_log(adnn_log_level level, const char *source, const char *fmt, ...)
    ADNN_PRINTF(3, 4);
static void host_log(adnn_log_level level, const char *source, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  adnn__vlog(level, source, fmt, ap);
  va_end(ap);
}

static adnn_status host_fail(adnn_status status, const char *fmt, ...) ADNN_PRINTF(2, 3);
static adnn_status host_fail(adnn_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  adnn__vfail(status, fmt, ap);
  va_end(ap);
  return status;
}

static const char *host_getenv(const char *name) { return getenv(name); }

const adnn_plugin_host adnn__host = {
    .abi_version = ADNN_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(adnn_plugin_host),
    .log = host_log,
    .fail = host_fail,
    .getenv = host_getenv,
};

/* ------------------------------------------------------------------------ */
/* Loader state (written once under pthread_once)                            */
/* ------------------------------------------------------------------------ */

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static adnn__plugin_record **records = NULL;
static size_t record_count = 0;
static char *search_path = NULL;
static const char *search_path_source = "compiled-in";
static char *auto_name = NULL;
static char *auto_reason = NULL;
static adnn_status auto_status = ADNN_STATUS_BACKEND_UNAVAILABLE;

/* Duplicates a string; on out-of-memory returns a static empty string so that
 * the (informational) record stays usable. */
static char *dup_str(const char *s) {
  char *d = strdup(s ? s : "");
  return d ? d : (char *)"";
}

static char *dup_printf(const char *fmt, ...) ADNN_PRINTF(1, 2);
static char *dup_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *out = NULL;
  int n = vasprintf(&out, fmt, ap);
  va_end(ap);
  return n < 0 || out == NULL ? (char *)"" : out;
}

const char *adnn_backend_state_name(adnn_backend_state state) {
  switch (state) {
    case ADNN_BACKEND_READY: return "ready";
    case ADNN_BACKEND_UNAVAILABLE: return "unavailable";
    case ADNN_BACKEND_INCOMPATIBLE: return "incompatible";
    case ADNN_BACKEND_LOAD_FAILED: return "load-failed";
  }
  return "unknown";
}

/* The state in a sentence ("failed to load"), for messages. */
static const char *state_word(adnn_backend_state s) {
  switch (s) {
    case ADNN_BACKEND_READY: return "ready";
    case ADNN_BACKEND_UNAVAILABLE: return "unavailable";
    case ADNN_BACKEND_INCOMPATIBLE: return "incompatible";
    case ADNN_BACKEND_LOAD_FAILED: return "failed to load";
  }
  return "unknown";
}

/* The backend name a file would have: "adnn-cuda.so" -> "cuda". Used for files
 * that never told us their name. */
static char *name_from_file(const char *file) {
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  if (strncmp(base, "adnn-", 5) == 0) base += 5;
  char *name = dup_str(base);
  size_t len = strlen(name);
  if (len > 3 && strcmp(name + len - 3, ".so") == 0) name[len - 3] = '\0';
  return name;
}

/* Turns a dlopen() error into a sentence that says what is missing and what to
 * do. The raw loader message is always kept at the end. */
static char *explain_dlerror(const char *path, const char *err) {
  const char *needle = ": cannot open shared object file";
  const char *hit = strstr(err, needle);
  if (hit != NULL) {
    /* The dynamic loader names the missing dependency before the needle. */
    const char *start = hit;
    while (start > err && start[-1] != ' ' && start[-1] != ':') start--;
    char lib[256];
    size_t n = (size_t)(hit - start);
    if (n >= sizeof lib) n = sizeof lib - 1;
    memcpy(lib, start, n);
    lib[n] = '\0';
    const char *advice;
    if (strncmp(lib, "libcudnn", 8) == 0)
      advice = "install cuDNN 9 for CUDA 13 (NVIDIA's libcudnn9-cuda-13 package or the "
               "nvidia-cudnn-cu13 wheel) and make its directory known to the dynamic "
               "loader (a file in /etc/ld.so.conf.d/ then ldconfig, or LD_LIBRARY_PATH)";
    else if (strncmp(lib, "libcublas", 9) == 0)
      advice = "install cuBLAS for CUDA 13 (the CUDA 13 toolkit, NVIDIA's libcublas-13 "
               "package or the nvidia-cublas wheel) and make its directory known to the "
               "dynamic loader (a file in /etc/ld.so.conf.d/ then ldconfig, or LD_LIBRARY_PATH)";
    else if (strncmp(lib, "libcuda.so", 10) == 0)
      advice = "install the NVIDIA driver (>= 580 for CUDA 13)";
    else if (strncmp(lib, "libopenblas", 11) == 0)
      advice = "install OpenBLAS (Debian/Ubuntu: libopenblas0)";
    else
      advice = "install the package that provides it, or add its directory to the "
               "dynamic loader path";
    return dup_printf("cannot load %s: it needs %s, which was not found; %s (loader said: %s)",
                      path, lib, advice, err);
  }
  if (strstr(err, "invalid ELF header") || strstr(err, "file too short") ||
      strstr(err, "not an ELF") || strstr(err, "wrong ELF class"))
    return dup_printf("%s is not a loadable shared object for this machine; remove it from "
                      "the plugin directory (loader said: %s)", path, err);
  if (strstr(err, "undefined symbol"))
    return dup_printf("cannot load %s: a library it needs is older than the one it was built "
                      "against, or the plugin is broken (loader said: %s)", path, err);
  return dup_printf("cannot load %s (loader said: %s)", path, err);
}

static int has_required_slots(const adnn_plugin *t) {
  if (!(t->struct_size >= offsetof(adnn_plugin, mem_set) + sizeof t->mem_set && t->name &&
        t->version && t->probe && t->context_create && t->context_destroy && t->synchronize &&
        t->mem_alloc && t->mem_free && t->mem_copy && t->mem_set))
    return 0;
  /* Plans are optional, but a plugin that creates them must select, run and
   * destroy them too. */
  if (ADNN_PLUGIN_HAS(t, plan_create))
    return ADNN_PLUGIN_HAS(t, plan_select) && ADNN_PLUGIN_HAS(t, plan_execute) &&
           ADNN_PLUGIN_HAS(t, plan_destroy);
  return 1;
}

static int valid_backend_name(const char *s) {
  if (s == NULL || *s == '\0' || strlen(s) > 31) return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
  return 1;
}

static adnn_property *copy_properties(const adnn_plugin_property *src, int32_t n, size_t *out_n) {
  if (n <= 0) {
    *out_n = 0;
    return NULL;
  }
  if (n > ADNN_PLUGIN_MAX_PROPERTIES) n = ADNN_PLUGIN_MAX_PROPERTIES;
  adnn_property *p = calloc((size_t)n, sizeof *p);
  if (p == NULL) {
    *out_n = 0;
    return NULL;
  }
  for (int32_t i = 0; i < n; i++) {
    char key[ADNN_PLUGIN_KEY_LEN + 1], value[ADNN_PLUGIN_VALUE_LEN + 1];
    /* Plugins fill fixed buffers; never trust them to be terminated. */
    snprintf(key, sizeof key, "%.*s", (int)sizeof src[i].key, src[i].key);
    snprintf(value, sizeof value, "%.*s", (int)sizeof src[i].value, src[i].value);
    p[i].key = dup_str(key);
    p[i].value = dup_str(value);
  }
  *out_n = (size_t)n;
  return p;
}

/* Copies a probe report into the record's public view. */
static void apply_report(adnn__plugin_record *rec, const adnn_plugin_report *r) {
  adnn_backend_info *info = &rec->info;
  char reason[ADNN_PLUGIN_REASON_LEN + 1];
  snprintf(reason, sizeof reason, "%.*s", (int)sizeof r->reason, r->reason);
  int state = r->state;
  if (state != ADNN_BACKEND_READY && state != ADNN_BACKEND_UNAVAILABLE &&
      state != ADNN_BACKEND_INCOMPATIBLE) {
    info->state = ADNN_BACKEND_INCOMPATIBLE;
    info->reason = dup_printf("probe returned an invalid state (%d): %s", state, reason);
  } else if (state == ADNN_BACKEND_READY && r->score <= 0) {
    info->state = ADNN_BACKEND_UNAVAILABLE;
    info->reason = dup_printf("probe reported ready with score %d (0 means unusable): %s",
                              (int)r->score, reason);
  } else {
    info->state = (adnn_backend_state)state;
    info->reason = dup_str(reason[0] ? reason : (state == ADNN_BACKEND_READY ? "ready" : "no reason given"));
  }
  info->score = info->state == ADNN_BACKEND_READY ? r->score : 0;
  info->properties = copy_properties(r->properties, r->property_count, &info->property_count);
  int32_t nd = r->device_count;
  if (nd > ADNN_PLUGIN_MAX_DEVICES) nd = ADNN_PLUGIN_MAX_DEVICES;
  if (nd > 0) {
    adnn_device_info *devs = calloc((size_t)nd, sizeof *devs);
    if (devs != NULL) {
      for (int32_t i = 0; i < nd; i++) {
        const adnn_plugin_device *d = &r->devices[i];
        char name[ADNN_PLUGIN_VALUE_LEN + 1];
        snprintf(name, sizeof name, "%.*s", (int)sizeof d->name, d->name);
        devs[i].struct_size = sizeof devs[i];
        devs[i].index = d->index;
        devs[i].name = dup_str(name);
        devs[i].properties = copy_properties(d->properties, d->property_count,
                                             &devs[i].property_count);
      }
      info->devices = devs;
      info->device_count = (size_t)nd;
    }
  }
}

/* Loads and probes one file; always returns a record (NULL only on OOM). */
static adnn__plugin_record *load_plugin(const char *path) {
  adnn__plugin_record *rec = calloc(1, sizeof *rec);
  if (rec == NULL) return NULL;
  pthread_mutex_init(&rec->init_lock, NULL);
  adnn_backend_info *info = &rec->info;
  info->struct_size = sizeof *info;
  info->path = dup_str(path);
  info->version = "";
  info->state = ADNN_BACKEND_LOAD_FAILED;

  /* dlopen reports an unreadable file as if the file needed itself ("cannot
   * open shared object file"); open it first to report the real errno. */
  /* O_NONBLOCK: a FIFO put in place of the file since the directory was
   * listed must not block plugin loading (dlopen would block on it too). */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat file_stat;
  if (fd >= 0 && (fstat(fd, &file_stat) != 0 || !S_ISREG(file_stat.st_mode))) {
    close(fd);
    info->name = name_from_file(path);
    info->reason = dup_printf("cannot load %s: it is not a regular file", path);
    return rec;
  }
  if (fd < 0) {
    int err = errno;
    info->name = name_from_file(path);
    info->reason = dup_printf("cannot load %s: it cannot be read: %s; %s", path, strerror(err),
                              err == EACCES ? "make it readable by this user (chmod a+r), or "
                                              "remove it from the plugin directory"
                                            : "check the file and its directory");
    return rec;
  }
  close(fd);
  dlerror();
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char *err = dlerror();
    info->name = name_from_file(path);
    info->reason = explain_dlerror(path, err ? err : "unknown dlopen error");
    return rec;
  }
  dlerror();
  void *sym = dlsym(handle, ADNN_PLUGIN_ENTRY_SYMBOL);
  if (sym == NULL) {
    info->name = name_from_file(path);
    info->reason = dup_printf("%s is not an adnn plugin: it does not export %s", path,
                              ADNN_PLUGIN_ENTRY_SYMBOL);
    dlclose(handle); /* no plugin code ran, so unloading is safe */
    return rec;
  }
  /* From here on plugin code has run: the handle is kept for the process. */
  rec->handle = handle;
  adnn_plugin_entry_fn entry;
  memcpy(&entry, &sym, sizeof entry); /* object-to-function pointer, as POSIX allows */
  const adnn_plugin *t = entry(ADNN_PLUGIN_ABI_VERSION, &adnn__host);
  if (t == NULL) {
    info->name = name_from_file(path);
    info->state = ADNN_BACKEND_INCOMPATIBLE;
    info->reason = dup_printf("%s refused plugin ABI %u.%u of this adnn %s; install a plugin "
                              "built for this version of adnn", path, ADNN_PLUGIN_ABI_MAJOR,
                              ADNN_PLUGIN_ABI_MINOR, ADNN_VERSION_STRING);
    return rec;
  }
  unsigned major = t->abi_version >> 16, minor = t->abi_version & 0xffffu;
  if (major != ADNN_PLUGIN_ABI_MAJOR) {
    info->name = valid_backend_name(t->name) ? dup_str(t->name) : name_from_file(path);
    info->state = ADNN_BACKEND_INCOMPATIBLE;
    info->reason = dup_printf("%s uses plugin ABI %u.%u but this adnn %s needs plugin ABI "
                              "%u.x; install the plugin that matches this adnn version, or "
                              "rebuild it against this adnn's <adnn/plugin.h>",
                              path, major, minor, ADNN_VERSION_STRING, ADNN_PLUGIN_ABI_MAJOR);
    return rec;
  }
  if (!has_required_slots(t) || !valid_backend_name(t->name)) {
    info->name = name_from_file(path);
    info->state = ADNN_BACKEND_INCOMPATIBLE;
    info->reason = dup_printf("%s is a malformed plugin: its table (%u bytes) lacks a required "
                              "slot or has an invalid name", path, (unsigned)t->struct_size);
    return rec;
  }
  rec->table = t;
  info->name = dup_str(t->name);
  info->version = dup_str(t->version);

  adnn_plugin_report *report = calloc(1, sizeof *report);
  if (report == NULL) {
    info->state = ADNN_BACKEND_UNAVAILABLE;
    info->reason = dup_str("out of memory while probing"); /* heap, like every reason */
    return rec;
  }
  report->struct_size = sizeof *report;
  adnn_status st = t->probe(report);
  if (st != ADNN_STATUS_SUCCESS) {
    info->state = ADNN_BACKEND_UNAVAILABLE;
    /* The plugin's buffer may lack its terminator: bound the read. */
    info->reason = dup_printf("probe failed with %s: %.*s", adnn_status_name(st),
                              report->reason[0] ? (int)sizeof report->reason : 1024,
                              report->reason[0] ? report->reason : adnn_last_error());
  } else {
    apply_report(rec, report);
  }
  free(report);
  return rec;
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ends_with_so(const char *name) {
  size_t n = strlen(name);
  return n > 3 && strcmp(name + n - 3, ".so") == 0;
}

static int append_record(adnn__plugin_record *rec, size_t *cap) {
  if (record_count == *cap) {
    size_t ncap = *cap ? *cap * 2 : 8;
    adnn__plugin_record **n = realloc(records, ncap * sizeof *n);
    if (n == NULL) return 0;
    records = n;
    *cap = ncap;
  }
  records[record_count++] = rec;
  return 1;
}

/* A plugin runs with the process's rights, so whoever can replace it or add
 * one next to it can run code in every adnn program: like ld.so with its
 * secure directories, the loader warns about a world-writable directory or
 * file and about a file owned by a user other than this process's effective
 * user and root. The plugin still loads; the warning says what to fix. Each
 * path is checked once per process (the search runs once). */
static void warn_insecure_dir(const char *dir) {
  struct stat sb;
  if (stat(dir, &sb) == 0 && (sb.st_mode & S_IWOTH))
    adnn__log(ADNN_LOG_WARN, "core", "plugin directory %s is writable by every user (mode %04o), "
              "so anyone can add a plugin that every adnn program loads; remove the write "
              "permission for others (chmod o-w %s)", dir, (unsigned)(sb.st_mode & 07777), dir);
}

static void warn_insecure_file(const char *path, const struct stat *sb) {
  if (sb->st_mode & S_IWOTH)
    adnn__log(ADNN_LOG_WARN, "core", "plugin %s is writable by every user (mode %04o), so anyone "
              "can change the code every adnn program runs; remove the write permission for "
              "others (chmod o-w %s)", path, (unsigned)(sb->st_mode & 07777), path);
  uid_t me = geteuid();
  if (sb->st_uid != me && sb->st_uid != 0)
    adnn__log(ADNN_LOG_WARN, "core", "plugin %s is owned by user %ld, neither this process's "
              "user (%ld) nor root, who can change the code this program runs; have root or "
              "this user own it (chown)", path, (long)sb->st_uid, (long)me);
}

/* Why an entry named *.so is not a file to load, at INFO level: a stale
 * symbolic link or a directory is not an error, but "why is my plugin not
 * listed?" deserves an answer. */
static void explain_skipped(const char *path, int stat_errno, const struct stat *sb) {
  struct stat lsb;
  const char *why;
  if (sb != NULL)
    why = S_ISDIR(sb->st_mode) ? "it is a directory, not a plugin file"
                               : "it is not a regular file";
  else if (stat_errno == ELOOP)
    why = "it is a symbolic link loop";
  else if (stat_errno == ENOENT && lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode))
    why = "it is a dangling symbolic link (its target does not exist)";
  else
    why = strerror(stat_errno);
  adnn__log(ADNN_LOG_INFO, "core", "skipping %s: %s", path, why);
}

static void scan_directory(const char *dir, size_t *cap) {
  DIR *d = opendir(dir);
  if (d == NULL) {
    adnn__log(ADNN_LOG_INFO, "core", "plugin directory %s cannot be read: %s", dir,
              strerror(errno));
    return;
  }
  warn_insecure_dir(dir);
  char **names = NULL;
  size_t n = 0, ncap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || !ends_with_so(e->d_name)) continue;
    if (n == ncap) {
      size_t c = ncap ? ncap * 2 : 16;
      char **nn = realloc(names, c * sizeof *nn);
      if (nn == NULL) break;
      names = nn;
      ncap = c;
    }
    names[n] = strdup(e->d_name);
    if (names[n] != NULL) n++;
  }
  closedir(d);
  if (n > 1) qsort(names, n, sizeof *names, compare_names);
  if (n == 0) adnn__log(ADNN_LOG_INFO, "core", "plugin directory %s holds no *.so files", dir);
  for (size_t i = 0; i < n; i++) {
    char *path = dup_printf("%s/%s", dir, names[i]);
    struct stat sb;
    if (stat(path, &sb) != 0) {
      explain_skipped(path, errno, NULL);
    } else if (!S_ISREG(sb.st_mode)) {
      explain_skipped(path, 0, &sb);
    } else {
      warn_insecure_file(path, &sb);
      adnn__plugin_record *rec = load_plugin(path);
      /* Out of memory for the list: the record stays allocated (its plugin may
       * have run code and is never unloaded) but is not listed. */
      if (rec != NULL && !append_record(rec, cap))
        adnn__log(ADNN_LOG_WARN, "core", "out of memory listing plugin %s", path);
    }
    if (*path) free(path);
    free(names[i]);
  }
  free(names);
}

/* A later file with a name already loaded is shadowed, like PATH lookup. */
static void mark_shadowed(void) {
  for (size_t i = 0; i < record_count; i++) {
    adnn_backend_info *later = &records[i]->info;
    if (records[i]->table == NULL) continue;
    for (size_t j = 0; j < i; j++) {
      adnn_backend_info *first = &records[j]->info;
      if (records[j]->table != NULL && strcmp(first->name, later->name) == 0) {
        char *old = (char *)later->reason;
        later->reason = dup_printf("shadowed by %s, which comes earlier in the plugin search "
                                   "path (%s)", first->path, old);
        if (*old) free(old); /* "" is the static out-of-memory fallback */
        later->state = ADNN_BACKEND_UNAVAILABLE;
        later->score = 0;
        break;
      }
    }
  }
}

static void choose_auto(void) {
  adnn__plugin_record *best = NULL;
  for (size_t i = 0; i < record_count; i++) {
    adnn__plugin_record *r = records[i];
    if (r->info.state == ADNN_BACKEND_READY && (best == NULL || r->info.score > best->info.score))
      best = r;
  }
  /* Explain every plugin that was passed over, so "why not the GPU?" has an
   * answer without reading logs. */
  size_t len = 0;
  for (size_t i = 0; i < record_count; i++)
    if (records[i] != best) len += strlen(records[i]->info.name) + strlen(records[i]->info.reason) + 32;
  char *others = calloc(1, len + 1);
  if (others != NULL) {
    for (size_t i = 0; i < record_count; i++) {
      adnn_backend_info *o = &records[i]->info;
      if (records[i] == best) continue;
      size_t used = strlen(others);
      snprintf(others + used, len + 1 - used, "%s%s %s: %s", used ? "; " : "", o->name,
               o->state == ADNN_BACKEND_READY ? "ready but lower score" : state_word(o->state),
               o->reason);
    }
  }
  const char *passed = others && *others ? others : "";
  if (best == NULL) {
    auto_name = "";
    auto_status = ADNN_STATUS_BACKEND_UNAVAILABLE;
    if (record_count == 0)
      auto_reason = dup_printf("no backend plugin was found in %s (%s); reinstall adnn or set "
                               "ADNN_PLUGIN_PATH to the directory that holds adnn-cpu.so",
                               search_path, search_path_source);
    else
      auto_reason = dup_printf("no ready backend among the plugins in %s: %s", search_path, passed);
  } else {
    auto_name = dup_str(best->info.name);
    auto_status = ADNN_STATUS_SUCCESS;
    if (*passed)
      auto_reason = dup_printf("%s is the ready backend with the highest score (%d); passed over: %s",
                               best->info.name, best->info.score, passed);
    else
      auto_reason = dup_printf("%s is the only ready backend (score %d)", best->info.name,
                               best->info.score);
  }
  free(others);
}

static void load_all(void) {
  const char *env = adnn__env_get(ADNN_ENV_PLUGIN_PATH);
  if (env != NULL) {
    search_path = dup_str(env);
    search_path_source = "ADNN_PLUGIN_PATH";
  } else {
    search_path = dup_str(ADNN_PLUGIN_DIR);
    search_path_source = "compiled-in";
  }
  size_t cap = 0;
  char *copy = dup_str(search_path);
  char *save = NULL;
  for (char *dir = strtok_r(copy, ":", &save); dir != NULL; dir = strtok_r(NULL, ":", &save)) {
    if (dir[0] != '/') {
      adnn__log(ADNN_LOG_WARN, "core",
                "ignoring relative directory '%s' in the plugin search path: only absolute "
                "directories are searched, never the current directory", dir);
      continue;
    }
    scan_directory(dir, &cap);
  }
  if (*copy) free(copy);
  mark_shadowed();
  for (size_t i = 0; i < record_count; i++) {
    adnn_backend_info *info = &records[i]->info;
    adnn_log_level level =
        info->state == ADNN_BACKEND_LOAD_FAILED ? ADNN_LOG_WARN : ADNN_LOG_INFO;
    adnn__log(level, "core", "plugin %s (%s): %s: %s", info->name, info->path,
              state_word(info->state), info->reason);
  }
  choose_auto();
  adnn__log(ADNN_LOG_INFO, "core", "auto -> %s (%s)", *auto_name ? auto_name : "none", auto_reason);
}

void adnn__loader_records(adnn__plugin_record ***out, size_t *count) {
  pthread_once(&load_once, load_all);
  *out = records;
  *count = record_count;
}

adnn_status adnn__plugin_ensure_init(adnn__plugin_record *rec) {
  pthread_mutex_lock(&rec->init_lock);
  if (!rec->init_done) {
    rec->init_status = ADNN_STATUS_SUCCESS;
    if (ADNN_PLUGIN_HAS(rec->table, init)) {
      rec->init_status = rec->table->init();
      if (rec->init_status != ADNN_STATUS_SUCCESS)
        snprintf(rec->init_error, sizeof rec->init_error, "%s", adnn_last_error());
    }
    rec->init_done = 1;
  }
  adnn_status st = rec->init_status;
  pthread_mutex_unlock(&rec->init_lock);
  if (st != ADNN_STATUS_SUCCESS)
    return adnn__fail(st, "adnn_context_create: backend %s failed to initialize: %s",
                      rec->info.name, rec->init_error);
  return ADNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Public enumeration                                                        */
/* ------------------------------------------------------------------------ */

adnn_status adnn_backend_count(size_t *count) {
  if (count == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "adnn_backend_count: count is NULL");
  adnn__plugin_record **r;
  adnn__loader_records(&r, count);
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_backend_get(size_t index, const adnn_backend_info **info) {
  if (info == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "adnn_backend_get: info is NULL");
  adnn__plugin_record **r;
  size_t n;
  adnn__loader_records(&r, &n);
  if (index >= n)
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "adnn_backend_get: index %zu is out of range (%zu plugins found)", index, n);
  *info = &r[index]->info;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_backend_search_path(const char **path, const char **source) {
  adnn__plugin_record **r;
  size_t n;
  adnn__loader_records(&r, &n);
  if (path) *path = search_path;
  if (source) *source = search_path_source;
  return ADNN_STATUS_SUCCESS;
}

/* The 0.1 name, kept as an exported alias (doc/versioning.md). */
adnn_status adnn_plugin_search_path(const char **path, const char **source) {
  return adnn_backend_search_path(path, source);
}

/* The ADNN_BACKEND override, when it replaces "auto" (NULL otherwise). */
const char *adnn__backend_env_override(void) {
  const char *env = adnn__env_get(ADNN_ENV_BACKEND);
  if (env == NULL || strcmp(env, "auto") == 0) return NULL;
  return env;
}

adnn_status adnn_backend_auto_choice(const char **name, const char **reason) {
  adnn__plugin_record **r;
  size_t n;
  adnn__loader_records(&r, &n);
  const char *env = adnn__backend_env_override();
  if (env != NULL) {
    /* Report the override without failing: whether it can be met is decided
     * when a context is created. The explanation is kept for the process (one
     * per distinct value of ADNN_BACKEND), as the header promises. */
    static pthread_mutex_t override_lock = PTHREAD_MUTEX_INITIALIZER;
    static struct override_note {
      struct override_note *next;
      char *env, *reason;
    } *notes = NULL;
    pthread_mutex_lock(&override_lock);
    struct override_note *note = notes;
    while (note != NULL && strcmp(note->env, env) != 0) note = note->next;
    if (note == NULL && (note = calloc(1, sizeof *note)) != NULL) {
      note->env = dup_str(env);
      note->reason = dup_printf("ADNN_BACKEND=%s replaces the automatic choice (which would be %s: %s)",
                             env, *auto_name ? auto_name : "none", auto_reason);
      note->next = notes;
      notes = note;
    }
    pthread_mutex_unlock(&override_lock);
    if (name) *name = note ? note->env : "";
    if (reason) *reason = note ? note->reason : "ADNN_BACKEND replaces the automatic choice";
    return ADNN_STATUS_SUCCESS;
  }
  if (name) *name = auto_name;
  if (reason) *reason = auto_reason;
  if (auto_status != ADNN_STATUS_SUCCESS)
    return adnn__fail(auto_status, "adnn_backend_auto_choice: %s", auto_reason);
  return ADNN_STATUS_SUCCESS;
}
