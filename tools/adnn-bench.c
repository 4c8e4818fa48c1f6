/*
 * adnn-bench: measure and verify adnn operations on any backend, one problem
 * descriptor at a time (oneDNN benchdnn's convolution grammar, and compact
 * forms for the other ops; see doc/bench.md and adnn-bench(1)).
 *
 *   --mode=corr  runs the problem through the public API and compares the
 *                output with the conformance harness's oracle (t/harness/,
 *                long double), with the tolerances of doc/numerics.md;
 *   --mode=perf  creates the plan (tuning included, timed separately), warms
 *                up, times repeated runs and reports the median, min and max,
 *                GFLOP/s or GB/s, the algorithm and why it was chosen.
 *
 * Built only on the public API. Each problem becomes a case of the conformance
 * harness (tools/bench_case.c), which creates, runs and checks it through the
 * op's traits, as t/conformance does.
 * Exit status: 0 ok, 1 a correctness failure or an execution error, 2 usage
 * or parse error, 3 a problem not supported on a backend.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <adnn.h>

#include "t/harness/harness.h"
#include "tools/bench_case.h"
#include "tools/bench_problem.h"

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

enum { EXIT_OK = 0, EXIT_MISMATCH = 1, EXIT_USAGE = 2, EXIT_UNSUPPORTED = 3 };
enum { MODE_CORR, MODE_PERF };
enum { FMT_TEXT, FMT_CSV, FMT_JSON };
enum { LAYOUT_NCHW, LAYOUT_NHWC };

typedef struct options {
  const char *backend;
  int mode;
  int tune; /* -1: the context's default (environment) */
  adnn_dtype dtype;
  int layout;
  int alg; /* -1: auto */
  int dir; /* --dir: enum bench_dir of the problems after it; -1: none */
  int64_t mb;
  int format;
  double time_ms;
  int runs; /* 0: until time_ms */
  int warmup;
  int verbose;
  const char *perfdb_export, *perfdb_import;
} options;

static const char *progname = "adnn-bench";

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* ---------------------------------------------------------------------- */
/* Output                                                                  */
/* ---------------------------------------------------------------------- */

typedef struct result {
  const char *backend;
  char problem[BENCH_TEXT_MAX];
  const char *status; /* ok, mismatch, unsupported, error */
  char message[800];
  char algorithm[128];
  char reason[256];
  double create_ms;
  int runs;
  double median_ms, min_ms, max_ms;
  double gflops, gbs;
  double rel_l2, max_abs, tol_rel_l2, tol_max_abs;
  int have_corr;
  char repro[BENCH_TEXT_MAX + 256];
} result;

static int json_first = 1;

static void json_str(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

static void json_num(double v) {
  if (isfinite(v))
    printf("%.6g", v);
  else
    printf("null");
}

static void csv_str(const char *s) {
  if (strpbrk(s, ",\"\n")) {
    putchar('"');
    for (; *s; s++) {
      if (*s == '"') putchar('"');
      putchar(*s);
    }
    putchar('"');
  } else {
    fputs(s, stdout);
  }
}

static void print_header(const options *o) {
  if (o->format == FMT_CSV)
    puts("backend,problem,mode,dtype,layout,status,algorithm,choice_reason,create_ms,runs,"
         "median_ms,min_ms,max_ms,gflops,gbs,rel_l2,max_abs,tol_rel_l2,tol_max_abs,message,repro");
  else if (o->format == FMT_JSON)
    puts("[");
}

static void print_footer(const options *o) {
  if (o->format == FMT_JSON) puts(json_first ? "]" : "\n]");
}

static void print_result(const options *o, const result *r) {
  const char *mode = o->mode == MODE_CORR ? "corr" : "perf";
  if (o->format == FMT_CSV) {
    printf("%s,", r->backend);
    csv_str(r->problem);
    printf(",%s,%s,%s,%s,", mode, adnn_dtype_name(o->dtype),
           o->layout == LAYOUT_NHWC ? "nhwc" : "nchw", r->status);
    csv_str(r->algorithm);
    putchar(',');
    csv_str(r->reason);
    printf(",%.3f,%d,%.4f,%.4f,%.4f,%.2f,%.2f,", r->create_ms, r->runs, r->median_ms, r->min_ms,
           r->max_ms, r->gflops, r->gbs);
    if (r->have_corr)
      printf("%.3g,%.3g,%.3g,%.3g,", r->rel_l2, r->max_abs, r->tol_rel_l2, r->tol_max_abs);
    else
      printf(",,,,");
    csv_str(r->message);
    putchar(',');
    csv_str(r->repro);
    putchar('\n');
  } else if (o->format == FMT_JSON) {
    printf(json_first ? "  {" : ",\n  {");
    json_first = 0;
    printf("\"backend\": ");
    json_str(r->backend);
    printf(", \"problem\": ");
    json_str(r->problem);
    printf(", \"mode\": \"%s\", \"dtype\": \"%s\", \"layout\": \"%s\", \"status\": ", mode,
           adnn_dtype_name(o->dtype), o->layout == LAYOUT_NHWC ? "nhwc" : "nchw");
    json_str(r->status);
    printf(", \"algorithm\": ");
    json_str(r->algorithm);
    printf(", \"choice_reason\": ");
    json_str(r->reason);
    printf(", \"create_ms\": ");
    json_num(r->create_ms);
    if (o->mode == MODE_PERF) {
      printf(", \"runs\": %d, \"median_ms\": ", r->runs);
      json_num(r->median_ms);
      printf(", \"min_ms\": ");
      json_num(r->min_ms);
      printf(", \"max_ms\": ");
      json_num(r->max_ms);
      printf(", \"gflops\": ");
      json_num(r->gflops);
      printf(", \"gbs\": ");
      json_num(r->gbs);
    }
    if (r->have_corr) {
      printf(", \"rel_l2\": ");
      json_num(r->rel_l2);
      printf(", \"max_abs\": ");
      json_num(r->max_abs);
      printf(", \"tol_rel_l2\": ");
      json_num(r->tol_rel_l2);
      printf(", \"tol_max_abs\": ");
      json_num(r->tol_max_abs);
    }
    printf(", \"message\": ");
    json_str(r->message);
    printf(", \"repro\": ");
    json_str(r->repro);
    printf("}");
  } else {
    printf("%-6s %-11s %s\n", r->backend, r->status, r->problem);
    if (r->algorithm[0])
      printf("       algorithm %s (%s), plan created in %.1f ms\n", r->algorithm,
             r->reason[0] ? r->reason : "no reason given", r->create_ms);
    if (o->mode == MODE_PERF && !strcmp(r->status, "ok")) {
      printf("       median %.4f ms (min %.4f, max %.4f, %d runs)", r->median_ms, r->min_ms,
             r->max_ms, r->runs);
      if (r->gflops > 0) printf("  %.1f GFLOP/s", r->gflops);
      printf("  %.1f GB/s\n", r->gbs);
    }
    if (r->have_corr)
      printf("       rel_l2 %.3g (limit %.3g), max_abs %.3g (limit %.3g)\n", r->rel_l2,
             r->tol_rel_l2, r->max_abs, r->tol_max_abs);
    if (r->message[0]) printf("       %s\n", r->message);
    printf("       repro: %s\n", r->repro);
  }
  fflush(stdout);
}

/* ---------------------------------------------------------------------- */
/* A problem as a case of the conformance harness                          */
/* ---------------------------------------------------------------------- */

/* --prepacked: conv2d and matmul plans take their weights (input 1) packed
 * by adnn_plan_pack_weights, once before the timed runs (doc/prepacking.md). */
static int bench_prepacked;

static int takes_prepacked(const harness_case *c) {
  return bench_prepacked && c->op &&
         (!strcmp(c->op->name, "conv2d") || !strcmp(c->op->name, "matmul"));
}

/* The plan of a case; gemm has none (adnn_gemm is called directly). */
static adnn_status create_plan(adnn_context *ctx, const harness_case *c, adnn_plan **plan) {
  *plan = NULL;
  if (!c->op) return ADNN_STATUS_SUCCESS;
  if (!takes_prepacked(c)) return c->op->create(ctx, &c->desc, plan);
  harness_desc d = c->desc;
  if (!strcmp(c->op->name, "conv2d")) d.conv2d.weights_prepacked = 1;
  else d.matmul.weights_prepacked = 1;
  return c->op->create(ctx, &d, plan);
}

/* One run of a case on its device buffers: the plan, or adnn_gemm. With
 * --prepacked, `packed` is the plan's packed weight buffer, which run_once
 * fills from the weights first unless packed_ready (perf mode packs once,
 * outside the timed loop). */
typedef struct runner {
  adnn_context *ctx;
  const bench_problem *p;
  adnn_plan *plan;
  void *packed;
  size_t packed_bytes;
  int packed_ready;
} runner;

/* Allocates run->packed for a --prepacked plan; SUCCESS without a buffer
 * for the others. */
static adnn_status packed_alloc(runner *run, const harness_case *c) {
  run->packed = NULL;
  run->packed_ready = 0;
  if (!takes_prepacked(c)) return ADNN_STATUS_SUCCESS;
  adnn_status s = adnn_plan_get_packed_weights_bytes(run->plan, &run->packed_bytes);
  if (!s) s = adnn_malloc(run->ctx, run->packed_bytes, &run->packed);
  if (s) run->packed = NULL;
  return s;
}

static void packed_free(runner *run) {
  if (run->packed) adnn_free(run->ctx, run->packed);
  run->packed = NULL;
}

static adnn_status run_once(void *arg, const harness_case *c, const harness_device *dev) {
  const runner *run = arg;
  if (c->op && run->packed) {
    if (!run->packed_ready) {
      adnn_status s = adnn_plan_pack_weights(run->plan, dev->in[1], run->packed,
                                             run->packed_bytes);
      if (s) return s;
    }
    harness_device packed_dev = *dev;
    packed_dev.in[1] = run->packed;
    return harness_execute(run->plan, c, &packed_dev);
  }
  if (c->op) return harness_execute(run->plan, c, dev);
  const bench_problem *p = run->p;
  return adnn_gemm(run->ctx, c->dtype, p->ta ? ADNN_TRANS : ADNN_NO_TRANS,
                   p->tb ? ADNN_TRANS : ADNN_NO_TRANS, p->m, p->n, p->k, 1.0, dev->in[0],
                   c->in[0].desc.dims[1], dev->in[1], c->in[1].desc.dims[1], 0.0, dev->y, p->n);
}

/* The expected y and its tolerance: the op's oracle and doc/numerics.md's
 * bound through the op's traits; for gemm the GEMM oracle on every row, or
 * for products above 2^27 multiply-adds on a sample of rows worth about 2^26
 * (the other rows leave the comparison: c->out's map loses them). NULL when
 * the oracle refuses or memory runs out (why says which). */
static double *expected(const bench_problem *p, harness_case *c, harness_tolerance *tol,
                        char *why, size_t why_len) {
  if (c->op) {
    *tol = c->op->traits->tolerance(&c->desc, c->dtype);
    return harness_oracle(c, why, why_len);
  }
  *tol = harness_dot_tolerance(c->dtype, p->k);
  double *y = malloc((size_t)c->out.span * sizeof *y);
  if (!y) {
    snprintf(why, why_len, "out of host memory for the oracle");
    return NULL;
  }
  /* m * n * k may pass int64_t (the parser bounds each matrix, not the
   * product): count the multiply-adds in double. */
  const double madds = (double)p->m * (double)p->n * (double)p->k;
  const int64_t step = madds <= 0x1p27 ? 1 : (int64_t)(madds / 0x1p26) + 1;
  for (int64_t i = 0; i < p->m; i++)
    if (i % step) memset(c->out.member + i * p->n, 0, (size_t)p->n);
  harness_gemm_oracle(p->ta, p->tb, p->m, p->n, p->k, c->in[0].v, c->in[1].v, y, step);
  return y;
}

/* --mode=corr: runs the case (twice, on a NaN-poisoned y) and compares it
 * with the oracle. Returns the exit class. */
static int check(adnn_context *ctx, const bench_problem *p, harness_case *c, adnn_plan *plan,
                 result *r) {
  runner run = {ctx, p, plan, NULL, 0, 0};
  adnn_status ps = packed_alloc(&run, c);
  if (ps) {
    r->status = "error";
    snprintf(r->message, sizeof r->message, "--prepacked: %s", adnn_last_error());
    return EXIT_MISMATCH;
  }
  harness_run got;
  harness_run_with(ctx, c, run_once, &run, &got);
  packed_free(&run);
  if (got.outcome != HARNESS_RAN) {
    r->status = "error";
    snprintf(r->message, sizeof r->message, "%s", got.message);
    return EXIT_MISMATCH;
  }
  harness_tolerance tol;
  char why[256] = "";
  double *want = expected(p, c, &tol, why, sizeof why);
  if (!want) {
    free(got.y);
    r->status = "error";
    snprintf(r->message, sizeof r->message, "%s", why);
    return EXIT_MISMATCH;
  }
  const harness_comparison cmp = harness_compare(got.y, want, &c->out, c->op != NULL);
  free(got.y);
  free(want);
  r->have_corr = 1;
  r->rel_l2 = cmp.rel_l2;
  r->max_abs = cmp.max_abs;
  r->tol_rel_l2 = tol.rel_l2;
  r->tol_max_abs = tol.max_abs;
  if (harness_within(&cmp, tol)) {
    r->status = "ok";
    return EXIT_OK;
  }
  r->status = "mismatch";
  if (cmp.nonfinite_bad || cmp.gap_bad)
    snprintf(r->message, sizeof r->message, "%lld non-finite outputs",
             (long long)(cmp.nonfinite_bad + cmp.gap_bad));
  return EXIT_MISMATCH;
}

/* --mode=perf: warm-up, then timed runs (each one synchronized). */
static adnn_status time_runs(adnn_context *ctx, const bench_problem *p, const harness_case *c,
                             adnn_plan *plan, const options *o, result *r) {
  runner run = {ctx, p, plan, NULL, 0, 0};
  harness_device dev;
  const char *step;
  adnn_status s = harness_upload(ctx, c, &dev, &step);
  if (s) return s;
  /* --prepacked: the weights are packed once, before the warm-up; the timed
   * runs execute on the packed buffer only. */
  s = packed_alloc(&run, c);
  if (!s && run.packed) {
    s = adnn_plan_pack_weights(plan, dev.in[1], run.packed, run.packed_bytes);
    if (!s) s = adnn_context_synchronize(ctx);
    run.packed_ready = 1;
  }
  for (int i = 0; i < o->warmup && !s; i++) {
    s = run_once(&run, c, &dev);
    if (!s) s = adnn_context_synchronize(ctx);
  }
  const int cap = o->runs > 0 ? o->runs : 10000;
  double *t = s ? NULL : malloc(sizeof(double) * (size_t)cap);
  if (!s && !t) s = ADNN_STATUS_OUT_OF_MEMORY;
  int n = 0;
  const double start = now_ms();
  while (!s && n < cap) {
    const double a = now_ms();
    s = run_once(&run, c, &dev);
    if (!s) s = adnn_context_synchronize(ctx);
    const double b = now_ms();
    t[n++] = b - a;
    if (o->runs == 0 && n >= 3 && b - start >= o->time_ms) break;
  }
  harness_release(ctx, c, &dev);
  packed_free(&run);
  if (!s) {
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    r->runs = n;
    r->median_ms = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    r->min_ms = t[0];
    r->max_ms = t[n - 1];
    const double flops = bench_problem_flops(p);
    r->gflops = flops > 0 ? flops / (r->median_ms * 1e6) : 0;
    r->gbs = bench_problem_bytes(p, adnn_dtype_size(o->dtype)) / (r->median_ms * 1e6);
    r->status = "ok";
  }
  free(t);
  return s;
}

/* ---------------------------------------------------------------------- */
/* One problem on one backend                                              */
/* ---------------------------------------------------------------------- */

static void repro_line(const options *o, const char *backend, const char *problem, char *buf,
                       size_t len) {
  static const char *const tunes[] = {"default", "off", "exhaustive"};
  char alg[64] = "";
  if (o->alg > 0)
    snprintf(alg, sizeof alg, " --alg=%s", adnn_conv2d_algorithm_name((adnn_conv2d_algorithm)o->alg));
  char tune[32] = "";
  if (o->tune >= 0) snprintf(tune, sizeof tune, " --tune=%s", tunes[o->tune]);
  int quote = strpbrk(problem, " \"'$`\\!*?;&|<>()[]{}") != NULL;
  snprintf(buf, len, "adnn-bench --backend=%s --mode=%s --dtype=%s --layout=%s%s%s%s %s%s%s",
           backend, o->mode == MODE_CORR ? "corr" : "perf", adnn_dtype_name(o->dtype),
           o->layout == LAYOUT_NHWC ? "nhwc" : "nchw", tune, alg,
           bench_prepacked ? " --prepacked" : "", quote ? "'" : "", problem, quote ? "'" : "");
}

static void print_candidates(const adnn_plan *plan) {
  size_t n = 0;
  if (!plan || adnn_plan_get_candidate_count(plan, &n) != ADNN_STATUS_SUCCESS || n == 0) return;
  for (size_t i = 0; i < n; i++) {
    const adnn_plan_candidate *cand;
    if (adnn_plan_get_candidate(plan, i, &cand) != ADNN_STATUS_SUCCESS) continue;
    if (cand->time_ms >= 0)
      fprintf(stderr, "%s:   candidate %-20s %10.4f ms  workspace %zu bytes%s\n", progname,
              cand->algorithm, cand->time_ms, cand->workspace_bytes,
              cand->deterministic ? "  deterministic" : "");
    else
      fprintf(stderr, "%s:   candidate %-20s not measured (%s)\n", progname, cand->algorithm,
              adnn_status_name(cand->status));
  }
}

/* Returns the exit class of this run: EXIT_OK, EXIT_MISMATCH or EXIT_UNSUPPORTED. */
static int run_problem(adnn_context *ctx, const char *backend, const bench_problem *p,
                       const options *o) {
  result r;
  memset(&r, 0, sizeof r);
  r.backend = backend;
  bench_problem_format(p, r.problem, sizeof r.problem);
  repro_line(o, backend, r.problem, r.repro, sizeof r.repro);
  r.create_ms = r.median_ms = r.min_ms = r.max_ms = NAN;
  int rc = EXIT_OK;
  adnn_plan *plan = NULL;
  adnn_status s;
  harness_case c;
  const adnn_conv2d_algorithm alg = o->alg > 0 ? (adnn_conv2d_algorithm)o->alg : ADNN_CONV2D_ALGO_AUTO;
  if (bench_case_build(p, r.problem, o->dtype, o->layout == LAYOUT_NHWC, alg, &c)) {
    r.status = "error";
    snprintf(r.message, sizeof r.message, "out of host memory");
    print_result(o, &r);
    return EXIT_MISMATCH;
  }
  const double t0 = now_ms();
  s = create_plan(ctx, &c, &plan);
  r.create_ms = now_ms() - t0;
  if (s != ADNN_STATUS_SUCCESS) {
    const int unsupported = s == ADNN_STATUS_NOT_SUPPORTED;
    r.status = unsupported ? "unsupported" : "error";
    snprintf(r.message, sizeof r.message, "plan creation: %s: %s", adnn_status_name(s),
             adnn_last_error());
    rc = unsupported ? EXIT_UNSUPPORTED : EXIT_MISMATCH;
  } else {
    if (plan) {
      snprintf(r.algorithm, sizeof r.algorithm, "%s", adnn_plan_get_algorithm(plan));
      snprintf(r.reason, sizeof r.reason, "%s", adnn_plan_get_choice_reason(plan));
      if (o->verbose) print_candidates(plan);
    } else {
      snprintf(r.algorithm, sizeof r.algorithm, "gemm");
      snprintf(r.reason, sizeof r.reason, "adnn_gemm (no plan, no tuning)");
    }
    if (o->mode == MODE_CORR) {
      rc = check(ctx, p, &c, plan, &r);
    } else if ((s = time_runs(ctx, p, &c, plan, o, &r)) != ADNN_STATUS_SUCCESS) {
      r.status = s == ADNN_STATUS_NOT_SUPPORTED ? "unsupported" : "error";
      snprintf(r.message, sizeof r.message, "%s: %s", adnn_status_name(s), adnn_last_error());
      rc = s == ADNN_STATUS_NOT_SUPPORTED ? EXIT_UNSUPPORTED : EXIT_MISMATCH;
    }
  }
  print_result(o, &r);
  adnn_plan_destroy(plan);
  harness_case_free(&c);
  return rc;
}

/* ---------------------------------------------------------------------- */
/* Command line                                                            */
/* ---------------------------------------------------------------------- */

static void usage(FILE *f) {
  fprintf(f,
          "usage: adnn-bench [options] PROBLEM...\n"
          "       adnn-bench [options] --batch=FILE [PROBLEM...]\n"
          "options:\n"
          "  --backend=cpu|cuda[:N]|auto|all   backend (default auto; all = every ready one)\n"
          "  --mode=corr|perf                  compare with the reference / time it (default perf)\n"
          "  --tune=off|default|exhaustive     tuning mode of the context (default: ADNN_TUNE)\n"
          "  --dtype=f32|f64|f16|bf16|s8|u8    element type (default f32); f16/bf16: every op's\n"
          "                                    tensors (matmul's, conv's inputs); s8/u8: matmul's\n"
          "                                    a (I32 y) and conv's x (s8 w, I32 bias, y requantized\n"
          "                                    to x's dtype, u8 zero point 128; doc/bench.md)\n"
          "  --layout=nchw|nhwc                layout of 4-D tensors (default nchw)\n"
          "  --alg=NAME                        force a conv algorithm (im2col_gemm, gemm_1x1, ...)\n"
          "  --mb=N                            override the minibatch of every problem\n"
          "  --dir=DIR                         direction of the problems that follow and name\n"
          "                                    none, where their op has it: FWD_D FWD_I BWD_D\n"
          "                                    BWD_W BWD_WB BWD_DW\n"
          "  --batch=FILE                      problems, one per line (# comments)\n"
          "  --time-ms=T                       perf: time per problem (default 500)\n"
          "  --runs=N                          perf: exactly N timed runs\n"
          "  --warmup=N                        perf: untimed runs first (default 1)\n"
          "  --prepacked                       conv and matmul: weights packed once by\n"
          "                                    adnn_plan_pack_weights, outside the timing\n"
          "  --csv | --json                    machine-readable output\n"
          "  --import-perfdb=FILE              merge FILE into the user performance database first\n"
          "  --export-perfdb=FILE              write the performance database to FILE at the end\n"
          "  -v, --verbose                     also list the tuning candidates (stderr)\n"
          "  --help, --version\n"
          "problems: see adnn-bench(1), e.g. mb8ic64ih56oc64kh3ph1, gemm:m128n768k768,\n"
          "  pool:max:mb1ic64ih112kh3sh2ph1, act:relu:1024x1024, softmax:axis-1:128x128\n");
}

static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", progname);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  fprintf(stderr, "%s: try 'adnn-bench --help'\n", progname);
  return EXIT_USAGE;
}

static const char *opt_value(const char *arg, const char *name) {
  size_t n = strlen(name);
  if (strncmp(arg, name, n) == 0 && arg[n] == '=') return arg + n + 1;
  return NULL;
}

static int parse_int(const char *s, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (!*s || *end || errno || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

typedef struct problem_list {
  bench_problem *v;
  size_t n, cap;
} problem_list;

/* Parses text into the list; dir is the --dir before it (-1: none), which a
 * problem that names no direction takes when its op has that direction. */
static int add_problem(problem_list *l, const char *text, int dir, const char *where) {
  bench_problem p;
  char err[512];
  if (bench_problem_parse_dir(text, dir, &p, err, sizeof err)) {
    /* Say so when the problem is refused only in --dir's direction. */
    bench_problem alone;
    char unused[8];
    if (dir >= 0 && bench_problem_parse(text, &alone, unused, sizeof unused) == 0)
      return usage_error("%s: %s (in the direction of --dir=%s)", where, err, bench_dir_name(dir));
    return usage_error("%s: %s", where, err);
  }
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    bench_problem *v = realloc(l->v, cap * sizeof *v);
    if (!v) return usage_error("out of memory");
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = p;
  return 0;
}

/* The longest line of a --batch file: longer lines are refused rather than
 * split (fgets would read the rest as another problem). */
#define BATCH_LINE_MAX 4095

/* Reads one line of f into line (at most BATCH_LINE_MAX characters, without
 * the newline). Returns 1 for a line, 0 at the end of the file, -1 for a line
 * that is too long or holds a NUL byte (a binary file, /dev/zero: refused at
 * once, without reading on), -2 for a read error. */
static int batch_line(FILE *f, char *line, const char **why) {
  size_t len = 0;
  int c;
  while ((c = getc(f)) != EOF && c != '\n') {
    if (c == 0) {
      *why = "holds a NUL byte (not a text file?)";
      return -1;
    }
    if (len == BATCH_LINE_MAX) {
      *why = "is longer than " STRINGIFY(BATCH_LINE_MAX) " characters";
      return -1;
    }
    line[len++] = (char)c;
  }
  line[len] = 0;
  if (c == EOF && ferror(f)) return -2;
  return c == EOF && len == 0 ? 0 : 1;
}

static int read_batch(problem_list *l, const char *path, int dir) {
  FILE *f = fopen(path, "r");
  if (!f) return usage_error("--batch=%s: %s", path, strerror(errno));
  char line[BATCH_LINE_MAX + 1], where[4200];
  const char *why = "";
  int lineno = 0, rc = 0, got;
  while (rc == 0 && (errno = 0, got = batch_line(f, line, &why)) != 0) {
    lineno++;
    if (got == -2) {
      rc = usage_error("--batch=%s: line %d: %s", path, lineno,
                       errno ? strerror(errno) : "read error");
      break;
    }
    if (got == -1) {
      rc = usage_error("--batch=%s: line %d %s", path, lineno, why);
      break;
    }
    char *hash = strchr(line, '#');
    if (hash) *hash = 0;
    char *s = line;
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t')) *--e = 0;
    if (!*s) continue;
    snprintf(where, sizeof where, "%s:%d", path, lineno);
    rc = add_problem(l, s, dir, where);
  }
  fclose(f);
  return rc;
}

/* Applies --mb to every problem, then formats and parses each again: a
 * minibatch may take a tensor past the parser's limits. */
static int apply_mb(problem_list *l, int64_t mb) {
  for (size_t i = 0; i < l->n; i++) {
    char text[BENCH_TEXT_MAX], err[512];
    bench_problem_set_mb(&l->v[i], mb);
    bench_problem_format(&l->v[i], text, sizeof text);
    if (bench_problem_parse(text, &l->v[i], err, sizeof err))
      return usage_error("--mb=%lld: %s", (long long)mb, err);
  }
  return 0;
}

/* Everything but freeing the problem list, which main does on every path. */
static int bench_main(int argc, char **argv, problem_list *problems) {
  options o;
  memset(&o, 0, sizeof o);
  o.backend = "auto";
  o.mode = MODE_PERF;
  o.tune = -1;
  o.dtype = ADNN_DTYPE_F32;
  o.layout = LAYOUT_NCHW;
  o.alg = -1;
  o.dir = -1;
  o.mb = 0;
  o.time_ms = 500;
  o.warmup = 1;
  int rc;
  char where[64];

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    long n;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--version")) {
      printf("adnn-bench (adnn) %s\n", adnn_version_string());
      return 0;
    } else if ((v = opt_value(a, "--backend"))) {
      if (!*v) return usage_error("--backend needs a value");
      o.backend = v;
    } else if ((v = opt_value(a, "--mode"))) {
      if (!strcmp(v, "corr"))
        o.mode = MODE_CORR;
      else if (!strcmp(v, "perf"))
        o.mode = MODE_PERF;
      else
        return usage_error("bad token '%s': --mode is corr or perf", v);
    } else if ((v = opt_value(a, "--tune"))) {
      if (!strcmp(v, "off"))
        o.tune = ADNN_TUNE_OFF;
      else if (!strcmp(v, "default"))
        o.tune = ADNN_TUNE_DEFAULT;
      else if (!strcmp(v, "exhaustive"))
        o.tune = ADNN_TUNE_EXHAUSTIVE;
      else
        return usage_error("bad token '%s': --tune is off, default or exhaustive", v);
    } else if ((v = opt_value(a, "--dtype"))) {
      if (!strcmp(v, "f32"))
        o.dtype = ADNN_DTYPE_F32;
      else if (!strcmp(v, "f64"))
        o.dtype = ADNN_DTYPE_F64;
      else if (!strcmp(v, "f16"))
        o.dtype = ADNN_DTYPE_F16;
      else if (!strcmp(v, "bf16"))
        o.dtype = ADNN_DTYPE_BF16;
      else if (!strcmp(v, "s8") || !strcmp(v, "i8"))
        o.dtype = ADNN_DTYPE_I8;
      else if (!strcmp(v, "u8"))
        o.dtype = ADNN_DTYPE_U8;
      else
        return usage_error("bad token '%s': --dtype is f32, f64, f16, bf16, s8 or u8", v);
    } else if ((v = opt_value(a, "--layout"))) {
      if (!strcmp(v, "nchw"))
        o.layout = LAYOUT_NCHW;
      else if (!strcmp(v, "nhwc"))
        o.layout = LAYOUT_NHWC;
      else
        return usage_error("bad token '%s': --layout is nchw or nhwc", v);
    } else if ((v = opt_value(a, "--alg"))) {
      o.alg = -1;
      for (int k = 0; k < 64; k++) {
        const char *nm = adnn_conv2d_algorithm_name((adnn_conv2d_algorithm)k);
        if (strcmp(nm, "unknown") && !strcmp(nm, v)) o.alg = k;
      }
      if (o.alg < 0) return usage_error("bad token '%s': not a conv algorithm name", v);
    } else if ((v = opt_value(a, "--mb"))) {
      if (parse_int(v, 1, 1 << 20, &n)) return usage_error("bad token '%s': --mb is a positive integer", v);
      o.mb = n;
    } else if ((v = opt_value(a, "--time-ms"))) {
      if (parse_int(v, 0, 3600000, &n)) return usage_error("bad token '%s': --time-ms is milliseconds", v);
      o.time_ms = (double)n;
    } else if ((v = opt_value(a, "--runs"))) {
      if (parse_int(v, 1, 1000000, &n)) return usage_error("bad token '%s': --runs is a positive integer", v);
      o.runs = (int)n;
    } else if ((v = opt_value(a, "--warmup"))) {
      if (parse_int(v, 0, 100000, &n)) return usage_error("bad token '%s': --warmup is an integer >= 0", v);
      o.warmup = (int)n;
    } else if ((v = opt_value(a, "--dir")) && !strchr(v, ':')) {
      /* benchdnn's --dir: the direction of the problems that follow, give
       * none of their own and whose op has it. */
      if ((o.dir = bench_dir_parse(v, strlen(v))) < 0)
        return usage_error("bad token '%s': --dir is FWD_D, FWD_I, BWD_D, BWD_W, BWD_WB or BWD_DW",
                           v);
    } else if ((v = opt_value(a, "--batch"))) {
      if ((rc = read_batch(problems, v, o.dir))) return rc;
    } else if (!strcmp(a, "--prepacked")) {
      bench_prepacked = 1;
    } else if (!strcmp(a, "--csv")) {
      o.format = FMT_CSV;
    } else if (!strcmp(a, "--json")) {
      o.format = FMT_JSON;
    } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
      o.verbose = 1;
    } else if ((v = opt_value(a, "--export-perfdb"))) {
      o.perfdb_export = v;
    } else if ((v = opt_value(a, "--import-perfdb"))) {
      o.perfdb_import = v;
    } else if ((!strcmp(a, "--export-perfdb") || !strcmp(a, "--import-perfdb")) && i + 1 < argc) {
      if (a[2] == 'e')
        o.perfdb_export = argv[++i];
      else
        o.perfdb_import = argv[++i];
    } else if (a[0] == '-' && a[1] == '-' && strncmp(a, "--dir=", 6) != 0) {
      /* (--dir=<DIR>:<problem> is a problem with its direction.) */
      return usage_error("bad token '%s': unknown option", a);
    } else {
      snprintf(where, sizeof where, "argument %d", i);
      if ((rc = add_problem(problems, a, o.dir, where))) return rc;
    }
  }
  if (problems->n == 0 && !o.perfdb_import && !o.perfdb_export)
    return usage_error("no problem given (a descriptor or --batch=FILE)");
  if (o.mb > 0 && (rc = apply_mb(problems, o.mb))) return rc;

  if (o.perfdb_import) {
    size_t imported = 0;
    if (adnn_perfdb_import(o.perfdb_import, &imported) != ADNN_STATUS_SUCCESS) {
      fprintf(stderr, "%s: %s\n", progname, adnn_last_error());
      return EXIT_MISMATCH;
    }
    fprintf(stderr, "%s: imported %zu entries from %s\n", progname, imported, o.perfdb_import);
  }

  /* The backends to run on. */
  const char *backends[16];
  size_t nb = 0;
  if (!strcmp(o.backend, "all")) {
    size_t count = 0;
    adnn_backend_count(&count);
    for (size_t i = 0; i < count && nb < 16; i++) {
      const adnn_backend_info *info;
      if (adnn_backend_get(i, &info) == ADNN_STATUS_SUCCESS && info->state == ADNN_BACKEND_READY)
        backends[nb++] = info->name;
    }
    if (nb == 0) {
      fprintf(stderr, "%s: no backend is ready (see adnn-info)\n", progname);
      return EXIT_UNSUPPORTED;
    }
  } else {
    backends[nb++] = o.backend;
  }

  int worst_mismatch = 0, any_unsupported = 0;
  print_header(&o);
  for (size_t b = 0; b < nb; b++) {
    adnn_context *ctx;
    adnn_status s = adnn_context_create(backends[b], &ctx);
    if (s != ADNN_STATUS_SUCCESS) {
      fprintf(stderr, "%s: backend %s: %s\n", progname, backends[b], adnn_last_error());
      if (s == ADNN_STATUS_BAD_PARAM) {
        print_footer(&o);
        return usage_error("bad token '%s': not a backend", backends[b]);
      }
      any_unsupported = 1;
      continue;
    }
    if (o.tune >= 0) {
      adnn_tune_options t;
      adnn_tune_options_init(&t);
      adnn_context_get_tune_options(ctx, &t);
      t.mode = (adnn_tune_mode)o.tune;
      if (adnn_context_set_tune_options(ctx, &t) != ADNN_STATUS_SUCCESS)
        fprintf(stderr, "%s: --tune: %s\n", progname, adnn_last_error());
    }
    const char *bname = adnn_context_get_backend(ctx);
    char full[64];
    int dev = adnn_context_get_device(ctx);
    if (!strcmp(bname, "cpu") || dev < 0)
      snprintf(full, sizeof full, "%s", bname);
    else
      snprintf(full, sizeof full, "%s:%d", bname, dev);
    for (size_t i = 0; i < problems->n; i++) {
      int r = run_problem(ctx, full, &problems->v[i], &o);
      if (r == EXIT_MISMATCH) worst_mismatch = 1;
      if (r == EXIT_UNSUPPORTED) any_unsupported = 1;
    }
    adnn_context_destroy(ctx);
  }
  print_footer(&o);
  if (o.perfdb_export && adnn_perfdb_export(o.perfdb_export) != ADNN_STATUS_SUCCESS) {
    fprintf(stderr, "%s: %s\n", progname, adnn_last_error());
    worst_mismatch = 1;
  }
  if (worst_mismatch) return EXIT_MISMATCH;
  if (any_unsupported) return EXIT_UNSUPPORTED;
  return EXIT_OK;
}

int main(int argc, char **argv) {
  problem_list problems = {0};
  const int rc = bench_main(argc, argv, &problems);
  free(problems.v);
  return rc;
}
