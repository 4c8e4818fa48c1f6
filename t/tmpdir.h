/* Temporary directories for tests: created under $TMPDIR (else /tmp), never in
 * $HOME or the source tree, and removed by the test. Header-only. */
#ifndef ADNN_TEST_TMPDIR_H
#define ADNN_TEST_TMPDIR_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Creates a fresh directory "<tmp>/<prefix>-XXXXXX" into buf; 0 on failure. */
static inline int tmpdir_make(char *buf, size_t size, const char *prefix) {
  const char *base = getenv("TMPDIR");
  if (base == NULL || *base == '\0') base = "/tmp";
  snprintf(buf, size, "%s/%s-XXXXXX", base, prefix);
  return mkdtemp(buf) != NULL;
}

/* Removes a directory tree (files, symlinks, subdirectories). */
static inline void tmpdir_remove(const char *path) {
  DIR *d = opendir(path);
  if (d != NULL) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      char child[4096];
      int len = snprintf(child, sizeof child, "%s/%s", path, e->d_name);
      if (len < 0 || (size_t)len >= sizeof child) continue;
      struct stat sb;
      if (lstat(child, &sb) == 0 && S_ISDIR(sb.st_mode)) tmpdir_remove(child);
      else unlink(child);
    }
    closedir(d);
  }
  rmdir(path);
}

/* Copies a file byte for byte; 0 on failure. */
static inline int tmpdir_copy(const char *from, const char *to) {
  int in = open(from, O_RDONLY);
  if (in < 0) return 0;
  int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
  if (out < 0) {
    close(in);
    return 0;
  }
  char buf[65536];
  ssize_t n;
  int good = 1;
  while ((n = read(in, buf, sizeof buf)) > 0)
    if (write(out, buf, (size_t)n) != n) {
      good = 0;
      break;
    }
  if (n < 0) good = 0;
  close(in);
  if (close(out) != 0) good = 0;
  return good;
}

/* Writes a string to a new file; 0 on failure. */
static inline int tmpdir_write(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f == NULL) return 0;
  int good = fputs(text, f) >= 0;
  return fclose(f) == 0 && good;
}

#endif
