/* The command line, timing and output of the peer drivers (see peer.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "bench/peer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double peer_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int peer_time(int (*fn)(void *), void *arg, const peer_options *o, peer_timing *t) {
  for (int i = 0; i < o->warmup; i++)
    if (fn(arg)) return -1;
  const int cap = o->runs > 0 ? o->runs : 10000;
  double *v = malloc(sizeof(double) * (size_t)cap);
  if (!v) return -1;
  int n = 0;
  const double start = peer_now_ms();
  while (n < cap) {
    const double a = peer_now_ms();
    if (fn(arg)) {
      free(v);
      return -1;
    }
    const double b = peer_now_ms();
    v[n++] = b - a;
    if (o->runs == 0 && n >= 3 && b - start >= o->time_ms) break;
  }
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  t->runs = n;
  t->median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  t->min = v[0];
  t->max = v[n - 1];
  free(v);
  return 0;
}

void peer_print_header(const peer_options *o) {
  if (o->csv)
    puts("backend,problem,mode,dtype,layout,status,algorithm,choice_reason,create_ms,runs,"
         "median_ms,min_ms,max_ms,gflops,gbs,rel_l2,max_abs,tol_rel_l2,tol_max_abs,message,repro");
}

void peer_print_row(const peer_options *o, const char *problem, const char *status,
                    const char *implementation, double create_ms, const peer_timing *t,
                    double gflops, double gbs, const char *message) {
  if (o->csv) {
    printf("%s,%s,perf,f32,nchw,%s,\"%s\",,%.3f,%d,%.4f,%.4f,%.4f,%.2f,%.2f,,,,,\"%s\",\n",
           o->backend, problem, status, implementation, create_ms, t ? t->runs : 0,
           t ? t->median : NAN, t ? t->min : NAN, t ? t->max : NAN, gflops, gbs, message);
  } else {
    printf("%-6s %-11s %s\n", o->backend, status, problem);
    if (implementation[0])
      printf("       implementation %s, set up in %.1f ms\n", implementation, create_ms);
    if (t)
      printf("       median %.4f ms (min %.4f, max %.4f, %d runs)  %.1f GFLOP/s  %.1f GB/s\n",
             t->median, t->min, t->max, t->runs, gflops, gbs);
    if (message[0]) printf("       %s\n", message);
  }
  fflush(stdout);
}

static void fill(float *v, int64_t n, unsigned seed) {
  for (int64_t i = 0; i < n; i++)
    v[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) * 0x1p-23f - 1.0f;
}

int peer_run_gemm(const peer_options *o, const bench_problem *p, const char *text,
                  const char *implementation, int (*sgemm)(void *g)) {
  peer_gemm g = {p, malloc(sizeof(float) * (size_t)(p->m * p->k)),
                 malloc(sizeof(float) * (size_t)(p->k * p->n)),
                 malloc(sizeof(float) * (size_t)(p->m * p->n))};
  peer_timing t;
  int rc = 1;
  if (!g.a || !g.b || !g.c) {
    peer_print_row(o, text, "error", implementation, NAN, NULL, 0, 0, "out of memory");
  } else {
    fill(g.a, p->m * p->k, 7u);
    fill(g.b, p->k * p->n, 11u);
    if (peer_time(sgemm, &g, o, &t)) {
      peer_print_row(o, text, "error", implementation, 0, NULL, 0, 0, "the GEMM call failed");
    } else {
      peer_print_row(o, text, "ok", implementation, 0, &t, bench_problem_flops(p) / (t.median * 1e6),
                     bench_problem_bytes(p, sizeof(float)) / (t.median * 1e6), "");
      rc = 0;
    }
  }
  free(g.a);
  free(g.b);
  free(g.c);
  return rc;
}

/* Appends the problem `text` (a command-line argument or a line of a --batch
 * file, named by `where` in messages) to the list. */
static int add_problem(const peer_options *o, const char *text, const char *where,
                       bench_problem **list, size_t *n, size_t *cap) {
  if (*n == *cap) {
    *cap = *cap ? 2 * *cap : 64;
    bench_problem *grown = realloc(*list, *cap * sizeof **list);
    if (!grown) {
      fprintf(stderr, "%s: out of memory\n", o->program);
      return 2;
    }
    *list = grown;
  }
  char err[512];
  /* --dir: for a problem that names no direction of its own, where its op
   * has that direction. */
  if (bench_problem_parse_dir(text, o->dir, &(*list)[*n], err, sizeof err)) {
    fprintf(stderr, "%s: %s: %s\n", o->program, where, err);
    return 2;
  }
  if (o->mb > 0) bench_problem_set_mb(&(*list)[*n], o->mb);
  (*n)++;
  return 0;
}

static int read_batch(const peer_options *o, const char *path, bench_problem **list, size_t *n,
                      size_t *cap) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "%s: %s: %s\n", o->program, path, strerror(errno));
    return 2;
  }
  char line[4096], where[4200];
  int lineno = 0, rc = 0;
  while (!rc && fgets(line, sizeof line, f)) {
    lineno++;
    char *hash = strchr(line, '#');
    if (hash) *hash = 0;
    char *s = line + strspn(line, " \t");
    s[strcspn(s, " \t\r\n")] = 0;
    if (!*s) continue;
    snprintf(where, sizeof where, "%s:%d", path, lineno);
    rc = add_problem(o, s, where, list, n, cap);
  }
  fclose(f);
  return rc;
}

int peer_read_command_line(int argc, char **argv, peer_options *o, bench_problem **list,
                           size_t *n) {
  size_t cap = 0;
  *list = NULL;
  *n = 0;
  o->csv = 0;
  o->runs = 0;
  o->warmup = 1;
  o->time_ms = 500;
  o->mb = 0;
  o->dir = -1;
  /* --mb applies to every problem: read it before any problem. */
  for (int i = 1; i < argc; i++)
    if (!strncmp(argv[i], "--mb=", 5)) o->mb = atoll(argv[i] + 5);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    char where[64];
    int rc = 0;
    if (!strcmp(a, "--csv")) {
      o->csv = 1;
    } else if (!strncmp(a, "--mb=", 5)) {
    } else if (!strncmp(a, "--runs=", 7)) {
      o->runs = atoi(a + 7);
    } else if (!strncmp(a, "--time-ms=", 10)) {
      o->time_ms = atof(a + 10);
    } else if (!strncmp(a, "--warmup=", 9)) {
      o->warmup = atoi(a + 9);
    } else if (!strncmp(a, "--dir=", 6) && !strchr(a, ':')) {
      if ((o->dir = bench_dir_parse(a + 6, strlen(a + 6))) < 0) {
        fprintf(stderr, "%s: --dir=%s: expected FWD_D, FWD_I, BWD_D, BWD_W, BWD_WB or BWD_DW\n",
                o->program, a + 6);
        rc = 2;
      }
    } else if (!strncmp(a, "--batch=", 8)) {
      rc = read_batch(o, a + 8, list, n, &cap);
    } else if (a[0] != '-' || !strncmp(a, "--dir=", 6)) { /* --dir=<DIR>:<problem> too */
      snprintf(where, sizeof where, "argument %d", i);
      rc = add_problem(o, a, where, list, n, &cap);
    } else {
      fprintf(stderr,
              "usage: %s [--csv] [--mb=N] [--runs=N] [--time-ms=T] [--warmup=N] "
              "[--dir=DIR] [--batch=FILE] [PROBLEM...]\n",
              o->program);
      rc = 2;
    }
    if (rc) {
      free(*list);
      *list = NULL;
      return rc;
    }
  }
  return 0;
}
