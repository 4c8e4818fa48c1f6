/*
 * Times the performance database on a large user file: writes a database of N
 * entries (default 1000000) with tuner-like keys into a temporary cache
 * directory, then reports the time of the first lookup (which loads the file),
 * of the first lookup miss + store (which rewrites a file that has no journal
 * line yet, as one written by an older adnn) and the median of the following
 * ones: the cost that a tuned plan creation that misses adds. Not a test: built by `make t/perfdb-timing` and
 * run by hand; the numbers are recorded in doc/performance.md.
 *
 *   t/perfdb-timing [ENTRIES [STORES]]
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/perfdb.h"
#include "t/tmpdir.h"

void adnn__perfdb_reset(void); /* core/perfdb.c */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#define KEY_FMT "conv2d n8c%ldh56w56 k64 r3s3 p1111 s11 d11 g1 f32 nchw\tcpu\tAMD EPYC avx512\tadnn 1.0.0"

int main(int argc, char **argv) {
  long entries = argc > 1 ? atol(argv[1]) : 1000000;
  int stores = argc > 2 ? atoi(argv[2]) : 5;
  if (entries < 0 || stores < 1 || stores > 1000) return 2;
  char dir[4096], file[4200];
  if (!tmpdir_make(dir, sizeof dir, "adnn-perfdb-timing")) return 1;
  snprintf(file, sizeof file, "%s/perfdb.txt", dir);
  FILE *f = fopen(file, "w");
  if (f == NULL) return 1;
  fprintf(f, "# adnn performance database\nadnn-perfdb 1\n");
  for (long i = 0; i < entries; i++)
    fprintf(f, KEY_FMT "\twinograd_f2x3\t%.6g\t%ld\n", i, 0.5 + (double)(i % 977) / 7.0,
            (i % 13) * 4096);
  fclose(f);
  setenv("ADNN_CACHE_DIR", dir, 1);
  setenv("ADNN_SYSTEM_PERFDB", "", 1);
  adnn__perfdb_reset();
  adnn__perfdb_entry e;
  memset(&e, 0, sizeof e);
  snprintf(e.algorithm, sizeof e.algorithm, "im2col_gemm");
  e.time_ms = 1.25;
  double t0 = now_ms();
  int hit = adnn__perfdb_lookup("not there", &e, NULL);
  double load = now_ms() - t0;
  double *t = calloc((size_t)stores + 1, sizeof *t);
  double first = 0;
  for (int s = -1; s < stores; s++) {
    char key[512];
    snprintf(key, sizeof key, KEY_FMT, entries + 1 + s);
    /* What the tuner does on a miss: a lookup, then the store. */
    t0 = now_ms();
    hit |= adnn__perfdb_lookup(key, &e, NULL);
    adnn__perfdb_store(key, &e);
    if (s < 0) first = now_ms() - t0; /* a file without a journal line is compacted once */
    else t[s] = now_ms() - t0;
  }
  qsort(t, (size_t)stores, sizeof *t, cmp_double);
  printf("entries %ld: first lookup (loads the file) %.1f ms; first lookup miss + store %.1f ms; "
         "then: median %.3f ms of %d (min %.3f, max %.3f)%s\n",
         entries, load, first, t[stores / 2], stores, t[0], t[stores - 1],
         hit ? " (unexpected hit)" : "");
  free(t);
  tmpdir_remove(dir);
  return 0;
}
