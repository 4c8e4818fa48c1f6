/*
 * conv-onednn: the oneDNN side of the CPU performance comparison
 * (bench/run-cpu-perf.sh, doc/performance.md). Built only when configure finds
 * oneDNN; it links oneDNN and nothing of adnn (it compiles the problem parser
 * of adnn-bench in), so oneDNN never becomes a dependency of the library.
 *
 * For each convolution it creates a forward-inference primitive with oneDNN's
 * preferred ("any") formats for src, weights and dst, as a framework that keeps
 * activations in oneDNN's layout would; the plain NCHW inputs are reordered
 * once, outside the timed loop. GEMM problems run through dnnl_sgemm
 * (row-major). Other ops are reported as unsupported. It prints the columns of
 * `adnn-bench --mode=perf --csv` (backend "onednn", algorithm = oneDNN's
 * implementation name).
 *
 * usage: conv-onednn [--csv] [--mb=N] [--runs=N] [--time-ms=T] [--warmup=N]
 *                    [--batch=FILE] [PROBLEM...]
 * Threads: oneDNN's own runtime (OMP_NUM_THREADS with Debian's OpenMP build).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <oneapi/dnnl/dnnl.h>

#include "tools/bench_problem.h"

static int csv = 0, runs_fixed = 0, warmup = 1;
static double time_ms = 500;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#define CHECK(call)                                                              \
  do {                                                                           \
    dnnl_status_t st_ = (call);                                                  \
    if (st_ != dnnl_success) {                                                   \
      snprintf(msg, sizeof msg, "%s failed (dnnl status %d)", #call, (int)st_); \
      goto fail;                                                                 \
    }                                                                            \
  } while (0)

typedef struct timing {
  int runs;
  double median, min, max;
} timing;

/* Times fn(arg) until time_ms or runs_fixed, after the warm-up. */
static int time_it(int (*fn)(void *), void *arg, timing *t) {
  for (int i = 0; i < warmup; i++)
    if (fn(arg)) return -1;
  int cap = runs_fixed ? runs_fixed : 10000, n = 0;
  double *v = malloc(sizeof(double) * (size_t)cap), start = now_ms();
  if (!v) return -1;
  while (n < cap) {
    double a = now_ms();
    if (fn(arg)) {
      free(v);
      return -1;
    }
    double b = now_ms();
    v[n++] = b - a;
    if (!runs_fixed && n >= 3 && b - start >= time_ms) break;
  }
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  t->runs = n;
  t->median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  t->min = v[0];
  t->max = v[n - 1];
  free(v);
  return 0;
}

static void print_row(const char *problem, const char *status, const char *alg, double create_ms,
                      const timing *t, double gflops, double gbs, const char *message) {
  if (csv) {
    printf("onednn,%s,perf,f32,nchw,%s,\"%s\",,%.3f,%d,%.4f,%.4f,%.4f,%.2f,%.2f,,,,,\"%s\",\n",
           problem, status, alg, create_ms, t ? t->runs : 0, t ? t->median : NAN,
           t ? t->min : NAN, t ? t->max : NAN, gflops, gbs, message);
  } else {
    printf("onednn %-11s %s\n", status, problem);
    if (alg[0]) printf("       implementation %s, primitive created in %.1f ms\n", alg, create_ms);
    if (t)
      printf("       median %.4f ms (min %.4f, max %.4f, %d runs)  %.1f GFLOP/s  %.1f GB/s\n",
             t->median, t->min, t->max, t->runs, gflops, gbs);
    if (message[0]) printf("       %s\n", message);
  }
  fflush(stdout);
}

typedef struct conv_run {
  dnnl_primitive_t prim;
  dnnl_stream_t stream;
  dnnl_exec_arg_t args[3];
} conv_run;

static int conv_exec(void *arg) {
  conv_run *r = arg;
  if (dnnl_primitive_execute(r->prim, r->stream, 3, r->args) != dnnl_success) return -1;
  return dnnl_stream_wait(r->stream) == dnnl_success ? 0 : -1;
}

static void fill(dnnl_memory_t m, size_t count) {
  float *p = NULL;
  dnnl_memory_get_data_handle(m, (void **)&p);
  unsigned s = 12345u;
  for (size_t i = 0; i < count; i++) p[i] = (float)((s = s * 1664525u + 1013904223u) >> 8) * 0x1p-24f - 0.5f;
}

/* Reorders plain memory `from` into a new memory of descriptor `md`. */
static dnnl_status_t reorder_to(dnnl_engine_t eng, dnnl_stream_t stream, dnnl_memory_t from,
                                const dnnl_memory_desc_t *from_md, const dnnl_memory_desc_t *md,
                                dnnl_memory_t *to) {
  dnnl_status_t s = dnnl_memory_create(to, md, eng, DNNL_MEMORY_ALLOCATE);
  if (s != dnnl_success) return s;
  dnnl_primitive_desc_t rpd;
  dnnl_primitive_t r;
  if ((s = dnnl_reorder_primitive_desc_create(&rpd, from_md, eng, md, eng, NULL)) != dnnl_success)
    return s;
  s = dnnl_primitive_create(&r, rpd);
  dnnl_primitive_desc_destroy(rpd);
  if (s != dnnl_success) return s;
  dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, *to}};
  s = dnnl_primitive_execute(r, stream, 2, a);
  if (s == dnnl_success) s = dnnl_stream_wait(stream);
  dnnl_primitive_destroy(r);
  return s;
}

static int run_conv(dnnl_engine_t eng, dnnl_stream_t stream, const bench_problem *p,
                    const char *text) {
  char msg[256] = "";
  const char *impl = "";
  dnnl_memory_t src_plain = NULL, wei_plain = NULL, src = NULL, wei = NULL, dst = NULL;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_t prim = NULL;
  const int grouped = p->g > 1;
  dnnl_dims_t src_dims = {p->mb, p->ic, p->ih, p->iw};
  dnnl_dims_t dst_dims = {p->mb, p->oc, p->oh, p->ow};
  dnnl_dims_t wei_dims = {p->oc, p->ic, p->kh, p->kw};
  dnnl_dims_t gwei_dims = {p->g, p->oc / p->g, p->ic / p->g, p->kh, p->kw};
  dnnl_dims_t strides = {p->sh, p->sw}, dil = {p->dh - 1, p->dw - 1};
  dnnl_dims_t pad_l = {p->pt, p->pl}, pad_r = {p->pb, p->pr};
  dnnl_memory_desc_t src_any, wei_any, dst_any, src_md, wei_md;
  dnnl_convolution_desc_t cd;
  double t0 = now_ms();
  CHECK(dnnl_memory_desc_init_by_tag(&src_md, 4, src_dims, dnnl_f32, dnnl_nchw));
  CHECK(dnnl_memory_desc_init_by_tag(&wei_md, grouped ? 5 : 4, grouped ? gwei_dims : wei_dims,
                                     dnnl_f32, grouped ? dnnl_goihw : dnnl_oihw));
  CHECK(dnnl_memory_desc_init_by_tag(&src_any, 4, src_dims, dnnl_f32, dnnl_format_tag_any));
  CHECK(dnnl_memory_desc_init_by_tag(&wei_any, grouped ? 5 : 4, grouped ? gwei_dims : wei_dims,
                                     dnnl_f32, dnnl_format_tag_any));
  CHECK(dnnl_memory_desc_init_by_tag(&dst_any, 4, dst_dims, dnnl_f32, dnnl_format_tag_any));
  CHECK(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                   dnnl_convolution_direct, &src_any, &wei_any,
                                                   NULL, &dst_any, strides, dil, pad_l, pad_r));
  CHECK(dnnl_primitive_desc_create(&pd, &cd, NULL, eng, NULL));
  CHECK(dnnl_primitive_create(&prim, pd));
  double create_ms = now_ms() - t0;
  dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
  const dnnl_memory_desc_t *src_pref = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  const dnnl_memory_desc_t *wei_pref = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  const dnnl_memory_desc_t *dst_pref = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  CHECK(dnnl_memory_create(&src_plain, &src_md, eng, DNNL_MEMORY_ALLOCATE));
  CHECK(dnnl_memory_create(&wei_plain, &wei_md, eng, DNNL_MEMORY_ALLOCATE));
  fill(src_plain, (size_t)(p->mb * p->ic * p->ih * p->iw));
  fill(wei_plain, (size_t)(p->oc * (p->ic / p->g) * p->kh * p->kw));
  /* once, outside the timed loop: weights (and the input) into oneDNN's layout */
  CHECK(reorder_to(eng, stream, src_plain, &src_md, src_pref, &src));
  CHECK(reorder_to(eng, stream, wei_plain, &wei_md, wei_pref, &wei));
  CHECK(dnnl_memory_create(&dst, dst_pref, eng, DNNL_MEMORY_ALLOCATE));
  conv_run r = {prim, stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}}};
  timing t;
  if (time_it(conv_exec, &r, &t)) {
    snprintf(msg, sizeof msg, "execution failed");
    goto fail;
  }
  double gf = bench_problem_flops(p) / (t.median * 1e6);
  double gb = bench_problem_bytes(p, 4) / (t.median * 1e6);
  print_row(text, "ok", impl, create_ms, &t, gf, gb, "");
  dnnl_memory_destroy(src_plain);
  dnnl_memory_destroy(wei_plain);
  dnnl_memory_destroy(src);
  dnnl_memory_destroy(wei);
  dnnl_memory_destroy(dst);
  dnnl_primitive_destroy(prim);
  dnnl_primitive_desc_destroy(pd);
  return 0;
fail:
  print_row(text, "error", impl, NAN, NULL, 0, 0, msg);
  if (src_plain) dnnl_memory_destroy(src_plain);
  if (wei_plain) dnnl_memory_destroy(wei_plain);
  if (src) dnnl_memory_destroy(src);
  if (wei) dnnl_memory_destroy(wei);
  if (dst) dnnl_memory_destroy(dst);
  if (prim) dnnl_primitive_destroy(prim);
  if (pd) dnnl_primitive_desc_destroy(pd);
  return 1;
}

typedef struct gemm_run {
  const bench_problem *p;
  float *a, *b, *c;
} gemm_run;

static int gemm_exec(void *arg) {
  gemm_run *g = arg;
  const bench_problem *p = g->p;
  return dnnl_sgemm(p->ta ? 'T' : 'N', p->tb ? 'T' : 'N', p->m, p->n, p->k, 1.0f, g->a,
                    p->ta ? p->m : p->k, g->b, p->tb ? p->k : p->n, 0.0f, g->c, p->n) == dnnl_success
             ? 0
             : -1;
}

static int run_gemm(const bench_problem *p, const char *text) {
  gemm_run g = {p, malloc(sizeof(float) * (size_t)(p->m * p->k)),
                malloc(sizeof(float) * (size_t)(p->k * p->n)),
                malloc(sizeof(float) * (size_t)(p->m * p->n))};
  int rc = 0;
  timing t;
  if (!g.a || !g.b || !g.c) {
    print_row(text, "error", "", NAN, NULL, 0, 0, "out of memory");
    rc = 1;
  } else {
    for (int64_t i = 0; i < p->m * p->k; i++) g.a[i] = (float)(i % 7) * 0.1f;
    for (int64_t i = 0; i < p->k * p->n; i++) g.b[i] = (float)(i % 5) * 0.1f;
    if (time_it(gemm_exec, &g, &t)) {
      print_row(text, "error", "dnnl_sgemm", 0, NULL, 0, 0, "dnnl_sgemm failed");
      rc = 1;
    } else {
      print_row(text, "ok", "dnnl_sgemm", 0, &t, bench_problem_flops(p) / (t.median * 1e6),
                bench_problem_bytes(p, 4) / (t.median * 1e6), "");
    }
  }
  free(g.a);
  free(g.b);
  free(g.c);
  return rc;
}

static int parse_problem_line(const char *s, bench_problem *p, const char *where) {
  char err[512];
  if (bench_problem_parse(s, p, err, sizeof err)) {
    fprintf(stderr, "conv-onednn: %s: %s\n", where, err);
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  int64_t mb = 0;
  bench_problem *list = NULL;
  size_t n = 0, cap = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    char where[64];
    if (!strcmp(a, "--csv")) {
      csv = 1;
    } else if (!strncmp(a, "--mb=", 5)) {
      mb = atoll(a + 5);
    } else if (!strncmp(a, "--runs=", 7)) {
      runs_fixed = atoi(a + 7);
    } else if (!strncmp(a, "--time-ms=", 10)) {
      time_ms = atof(a + 10);
    } else if (!strncmp(a, "--warmup=", 9)) {
      warmup = atoi(a + 9);
    } else if (!strncmp(a, "--batch=", 8) || a[0] != '-') {
      FILE *f = NULL;
      char line[4096];
      int lineno = 0, single = a[0] != '-';
      if (!single && !(f = fopen(a + 8, "r"))) {
        fprintf(stderr, "conv-onednn: %s: %s\n", a + 8, strerror(errno));
        return 2;
      }
      while (single ? lineno == 0 : fgets(line, sizeof line, f) != NULL) {
        lineno++;
        if (single) snprintf(line, sizeof line, "%s", a);
        char *h = strchr(line, '#');
        if (h) *h = 0;
        char *s = line + strspn(line, " \t");
        s[strcspn(s, " \t\r\n")] = 0;
        if (!*s) continue;
        if (n == cap) {
          cap = cap ? 2 * cap : 64;
          list = realloc(list, cap * sizeof *list);
          if (!list) return 2;
        }
        snprintf(where, sizeof where, single ? "argument %d" : "line %d", single ? i : lineno);
        if (parse_problem_line(s, &list[n], where)) return 2;
        n++;
      }
      if (f) fclose(f);
    } else {
      fprintf(stderr,
              "usage: conv-onednn [--csv] [--mb=N] [--runs=N] [--time-ms=T] [--warmup=N] "
              "[--batch=FILE] [PROBLEM...]\n");
      return 2;
    }
  }
  dnnl_engine_t eng;
  dnnl_stream_t stream;
  if (dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success ||
      dnnl_stream_create(&stream, eng, dnnl_stream_default_flags) != dnnl_success) {
    fprintf(stderr, "conv-onednn: cannot create a oneDNN CPU engine\n");
    return 1;
  }
  if (csv)
    puts("backend,problem,mode,dtype,layout,status,algorithm,choice_reason,create_ms,runs,"
         "median_ms,min_ms,max_ms,gflops,gbs,rel_l2,max_abs,tol_rel_l2,tol_max_abs,message,repro");
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    bench_problem p = list[i];
    char text[512];
    if (mb > 0) bench_problem_set_mb(&p, mb);
    bench_problem_format(&p, text, sizeof text);
    if (p.op == BENCH_OP_CONV)
      rc |= run_conv(eng, stream, &p, text);
    else if (p.op == BENCH_OP_GEMM)
      rc |= run_gemm(&p, text);
    else
      print_row(text, "unsupported", "", NAN, NULL, 0, 0, "conv-onednn runs conv and gemm only");
  }
  dnnl_stream_destroy(stream);
  dnnl_engine_destroy(eng);
  free(list);
  return rc;
}
