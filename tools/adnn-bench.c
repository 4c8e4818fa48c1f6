/*
 * adnn-bench: measure and verify adnn operations on any backend, one problem
 * descriptor at a time (oneDNN benchdnn's convolution grammar, and compact
 * forms for the other ops; see doc/bench.md and adnn-bench(1)).
 *
 *   --mode=corr  runs the problem through the public API and compares the
 *                output with the reference kernels (kernels/ref) in double,
 *                with the tolerances of doc/numerics.md;
 *   --mode=perf  creates the plan (tuning included, timed separately), warms
 *                up, times repeated runs and reports the median, min and max,
 *                GFLOP/s or GB/s, the algorithm and why it was chosen.
 *
 * Built only on the public API (plus the static reference kernels for corr).
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

#include "kernels/ref/ref_ops.h"
#include "tools/bench_problem.h"

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
  char problem[512];
  const char *status; /* ok, mismatch, unsupported, error */
  char message[512];
  char algorithm[128];
  char reason[256];
  double create_ms;
  int runs;
  double median_ms, min_ms, max_ms;
  double gflops, gbs;
  double rel_l2, max_abs, tol_rel_l2, tol_max_abs;
  int have_corr;
  char repro[1024];
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
/* Building a problem                                                      */
/* ---------------------------------------------------------------------- */

typedef union op_desc {
  adnn_conv2d_desc conv;
  adnn_pool2d_desc pool;
  adnn_activation_desc act;
  adnn_softmax_desc sm;
  adnn_batchnorm_desc bn;
  adnn_norm_desc norm;
  adnn_binary_desc bin;
} op_desc;

/* A tensor: its descriptor (packed NCHW / NHWC / row-major), its values on the
 * host in memory order as doubles (F32-representable for F32), its device
 * buffer. */
typedef struct tensor {
  adnn_tensor_desc d;
  int64_t count;
  double *host;
  void *dev;
} tensor;

typedef struct bench_case {
  bench_problem p;
  op_desc desc;
  tensor in[5];
  int n_in;
  tensor out;
  int64_t reduction; /* terms per output of conv / gemm, for the tolerance */
} bench_case;

static adnn_tensor_desc make_desc(adnn_dtype dt, int rank, const int64_t *dims, int nhwc) {
  adnn_tensor_desc t;
  memset(&t, 0, sizeof t);
  t.dtype = dt;
  t.rank = rank;
  for (int i = 0; i < rank; i++) t.dims[i] = dims[i];
  if (nhwc && rank == 4) { /* dims [N, C, H, W], memory N, H, W, C */
    t.strides[1] = 1;
    t.strides[3] = dims[1];
    t.strides[2] = dims[3] * dims[1];
    t.strides[0] = dims[2] * dims[3] * dims[1];
  } else {
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
      t.strides[i] = s;
      s *= dims[i];
    }
  }
  return t;
}

static void set_tensor(tensor *t, adnn_dtype dt, int rank, const int64_t *dims, int nhwc) {
  memset(t, 0, sizeof *t);
  t->d = make_desc(dt, rank, dims, nhwc);
  t->count = 1;
  for (int i = 0; i < rank; i++) t->count *= dims[i];
}

static void set_tensor4(tensor *t, adnn_dtype dt, int64_t a, int64_t b, int64_t c, int64_t d,
                        int nhwc) {
  const int64_t dims[4] = {a, b, c, d};
  set_tensor(t, dt, 4, dims, nhwc);
}

/* Fills the case's descriptors from the problem. */
static void build_case(bench_case *c, const options *o) {
  const bench_problem *p = &c->p;
  adnn_dtype dt = o->dtype;
  int nhwc = o->layout == LAYOUT_NHWC;
  c->n_in = 0;
  c->reduction = 1;
  switch (p->op) {
    case BENCH_OP_CONV: {
      adnn_conv2d_desc *d = &c->desc.conv;
      adnn_conv2d_desc_init(d);
      set_tensor4(&c->in[0], dt, p->mb, p->ic, p->ih, p->iw, nhwc);
      set_tensor4(&c->in[1], dt, p->oc, p->ic / p->g, p->kh, p->kw, nhwc);
      set_tensor4(&c->out, dt, p->mb, p->oc, p->oh, p->ow, nhwc);
      c->n_in = 2;
      d->x = c->in[0].d;
      d->w = c->in[1].d;
      d->y = c->out.d;
      d->stride_h = p->sh;
      d->stride_w = p->sw;
      d->pad_top = p->pt;
      d->pad_bottom = p->pb;
      d->pad_left = p->pl;
      d->pad_right = p->pr;
      d->dilation_h = p->dh;
      d->dilation_w = p->dw;
      d->groups = p->g;
      d->algorithm = o->alg > 0 ? (adnn_conv2d_algorithm)o->alg : ADNN_CONV2D_ALGO_AUTO;
      c->reduction = (p->ic / p->g) * p->kh * p->kw;
      break;
    }
    case BENCH_OP_POOL: {
      adnn_pool2d_desc *d = &c->desc.pool;
      adnn_pool2d_desc_init(d);
      set_tensor4(&c->in[0], dt, p->mb, p->ic, p->ih, p->iw, nhwc);
      set_tensor4(&c->out, dt, p->mb, p->ic, p->oh, p->ow, nhwc);
      c->n_in = 1;
      d->x = c->in[0].d;
      d->y = c->out.d;
      d->kind = (adnn_pool_kind)p->pool_kind;
      d->kernel_h = p->kh;
      d->kernel_w = p->kw;
      d->stride_h = p->sh;
      d->stride_w = p->sw;
      d->pad_top = p->pt;
      d->pad_bottom = p->pb;
      d->pad_left = p->pl;
      d->pad_right = p->pr;
      d->ceil_mode = p->ceil_mode;
      break;
    }
    case BENCH_OP_ACT: {
      adnn_activation_desc *d = &c->desc.act;
      adnn_activation_desc_init(d);
      set_tensor(&c->in[0], dt, p->rank, p->dims, 0);
      set_tensor(&c->out, dt, p->rank, p->dims, 0);
      c->n_in = 1;
      d->x = c->in[0].d;
      d->y = c->out.d;
      d->activation.kind = (adnn_activation_kind)p->act_kind;
      d->activation.alpha = p->alpha;
      d->activation.beta = p->beta;
      break;
    }
    case BENCH_OP_SOFTMAX: {
      adnn_softmax_desc *d = &c->desc.sm;
      adnn_softmax_desc_init(d);
      set_tensor(&c->in[0], dt, p->rank, p->dims, 0);
      set_tensor(&c->out, dt, p->rank, p->dims, 0);
      c->n_in = 1;
      d->x = c->in[0].d;
      d->y = c->out.d;
      d->axis = p->axis;
      d->log = p->log_softmax;
      break;
    }
    case BENCH_OP_LNORM:
    case BENCH_OP_RMSNORM: {
      adnn_norm_desc *d = &c->desc.norm;
      adnn_norm_desc_init(d);
      set_tensor(&c->in[0], dt, p->rank, p->dims, 0);
      set_tensor(&c->out, dt, p->rank, p->dims, 0);
      c->n_in = 1;
      int64_t dd = 1;
      for (int i = p->rank - p->norm_dims; i < p->rank; i++) dd *= p->dims[i];
      if (p->has_gain) set_tensor(&c->in[c->n_in++], dt, 1, &dd, 0);
      if (p->has_bias) set_tensor(&c->in[c->n_in++], dt, 1, &dd, 0);
      d->x = c->in[0].d;
      d->y = c->out.d;
      d->kind = p->op == BENCH_OP_LNORM ? ADNN_NORM_LAYER : ADNN_NORM_RMS;
      d->norm_dims = p->norm_dims;
      d->epsilon = p->eps;
      d->has_gain = p->has_gain;
      d->has_bias = p->has_bias;
      break;
    }
    case BENCH_OP_BNORM: {
      adnn_batchnorm_desc *d = &c->desc.bn;
      adnn_batchnorm_desc_init(d);
      if (p->ih) {
        set_tensor4(&c->in[0], dt, p->mb, p->ic, p->ih, p->iw, nhwc);
        set_tensor4(&c->out, dt, p->mb, p->ic, p->ih, p->iw, nhwc);
      } else {
        const int64_t dims[2] = {p->mb, p->ic};
        set_tensor(&c->in[0], dt, 2, dims, 0);
        set_tensor(&c->out, dt, 2, dims, 0);
      }
      for (int i = 1; i < 5; i++) set_tensor(&c->in[i], dt, 1, &p->ic, 0);
      c->n_in = 5;
      d->x = c->in[0].d;
      d->y = c->out.d;
      d->epsilon = p->eps;
      d->activation.kind = (adnn_activation_kind)p->act_kind;
      break;
    }
    case BENCH_OP_BINARY: {
      adnn_binary_desc *d = &c->desc.bin;
      adnn_binary_desc_init(d);
      set_tensor(&c->in[0], dt, p->rank, p->dims, 0);
      set_tensor(&c->in[1], dt, p->rank_b, p->dims_b, 0);
      int r = p->rank > p->rank_b ? p->rank : p->rank_b;
      int64_t yd[BENCH_MAX_RANK];
      for (int k = 0; k < r; k++) {
        int64_t a = k < p->rank ? p->dims[p->rank - 1 - k] : 1;
        int64_t b = k < p->rank_b ? p->dims_b[p->rank_b - 1 - k] : 1;
        yd[r - 1 - k] = a > b ? a : b;
      }
      set_tensor(&c->out, dt, r, yd, 0);
      c->n_in = 2;
      d->a = c->in[0].d;
      d->b = c->in[1].d;
      d->y = c->out.d;
      d->op = (adnn_binary_op)p->binary_op;
      break;
    }
    case BENCH_OP_GEMM: {
      const int64_t da[2] = {p->ta ? p->k : p->m, p->ta ? p->m : p->k};
      const int64_t db[2] = {p->tb ? p->n : p->k, p->tb ? p->k : p->n};
      const int64_t dc[2] = {p->m, p->n};
      set_tensor(&c->in[0], dt, 2, da, 0);
      set_tensor(&c->in[1], dt, 2, db, 0);
      set_tensor(&c->out, dt, 2, dc, 0);
      c->n_in = 2;
      c->reduction = p->k;
      break;
    }
  }
}

/* Deterministic values of order 1 (F32-representable): xorshift. */
static uint64_t rng_state;
static double rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
}

static int fill_host(bench_case *c) {
  rng_state = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < c->n_in; i++) {
    tensor *t = &c->in[i];
    t->host = malloc((size_t)t->count * sizeof(double));
    if (!t->host) return -1;
    for (int64_t j = 0; j < t->count; j++) {
      double v = 2.0 * rnd() - 1.0;
      if (c->p.op == BENCH_OP_BNORM && i == 4) v = 0.5 + rnd(); /* variance > 0 */
      if (c->p.op == BENCH_OP_ACT) v *= 4.0;
      if (c->p.op == BENCH_OP_SOFTMAX) v *= 8.0;
      if (c->p.op == BENCH_OP_BINARY && c->p.binary_op == 3 && i == 1)
        v = (v < 0 ? -0.5 : 0.5) + v; /* divisors away from 0 */
      t->host[j] = (double)(float)v;
    }
  }
  return 0;
}

static size_t esize(adnn_dtype dt) { return dt == ADNN_DTYPE_F64 ? 8 : 4; }

/* Host doubles -> a staging buffer of the dtype -> device. */
static adnn_status upload(adnn_context *ctx, tensor *t, adnn_dtype dt) {
  size_t bytes = (size_t)t->count * esize(dt);
  adnn_status s = adnn_malloc(ctx, bytes ? bytes : 1, &t->dev);
  if (s) return s;
  void *stage = malloc(bytes ? bytes : 1);
  if (!stage) return ADNN_STATUS_OUT_OF_MEMORY;
  for (int64_t j = 0; j < t->count; j++) adnn_ref_store(stage, dt, j, t->host ? t->host[j] : 0);
  s = adnn_memcpy(ctx, t->dev, stage, bytes, ADNN_MEMCPY_HOST_TO_DEVICE);
  free(stage);
  return s;
}

static void free_case(adnn_context *ctx, bench_case *c) {
  for (int i = 0; i < c->n_in; i++) {
    free(c->in[i].host);
    if (c->in[i].dev) adnn_free(ctx, c->in[i].dev);
    c->in[i].host = NULL;
    c->in[i].dev = NULL;
  }
  free(c->out.host);
  if (c->out.dev) adnn_free(ctx, c->out.dev);
  c->out.host = NULL;
  c->out.dev = NULL;
}

static adnn_status create_plan(adnn_context *ctx, bench_case *c, adnn_plan **plan) {
  *plan = NULL;
  switch (c->p.op) {
    case BENCH_OP_CONV: return adnn_plan_create_conv2d(ctx, &c->desc.conv, plan);
    case BENCH_OP_POOL: return adnn_plan_create_pool2d(ctx, &c->desc.pool, plan);
    case BENCH_OP_ACT: return adnn_plan_create_activation(ctx, &c->desc.act, plan);
    case BENCH_OP_SOFTMAX: return adnn_plan_create_softmax(ctx, &c->desc.sm, plan);
    case BENCH_OP_LNORM:
    case BENCH_OP_RMSNORM: return adnn_plan_create_norm(ctx, &c->desc.norm, plan);
    case BENCH_OP_BNORM: return adnn_plan_create_batchnorm(ctx, &c->desc.bn, plan);
    case BENCH_OP_BINARY: return adnn_plan_create_binary(ctx, &c->desc.bin, plan);
    case BENCH_OP_GEMM: return ADNN_STATUS_SUCCESS; /* adnn_gemm has no plan */
  }
  return ADNN_STATUS_NOT_SUPPORTED;
}

static adnn_status run_once(adnn_context *ctx, bench_case *c, adnn_plan *plan) {
  if (c->p.op == BENCH_OP_GEMM) {
    const bench_problem *p = &c->p;
    return adnn_gemm(ctx, c->out.d.dtype, p->ta ? ADNN_TRANS : ADNN_NO_TRANS,
                     p->tb ? ADNN_TRANS : ADNN_NO_TRANS, p->m, p->n, p->k, 1.0, c->in[0].dev,
                     c->in[0].d.dims[1], c->in[1].dev, c->in[1].d.dims[1], 0.0, c->out.dev, p->n);
  }
  const void *inputs[5];
  for (int i = 0; i < c->n_in; i++) inputs[i] = c->in[i].dev;
  return adnn_plan_execute(plan, inputs, (size_t)c->n_in, c->out.dev);
}

/* ---------------------------------------------------------------------- */
/* Correctness                                                             */
/* ---------------------------------------------------------------------- */

static void set_dtype(int op, op_desc *d, adnn_dtype dt) {
  switch (op) {
    case BENCH_OP_CONV: d->conv.x.dtype = d->conv.w.dtype = d->conv.y.dtype = dt; break;
    case BENCH_OP_POOL: d->pool.x.dtype = d->pool.y.dtype = dt; break;
    case BENCH_OP_ACT: d->act.x.dtype = d->act.y.dtype = dt; break;
    case BENCH_OP_SOFTMAX: d->sm.x.dtype = d->sm.y.dtype = dt; break;
    case BENCH_OP_LNORM:
    case BENCH_OP_RMSNORM: d->norm.x.dtype = d->norm.y.dtype = dt; break;
    case BENCH_OP_BNORM: d->bn.x.dtype = d->bn.y.dtype = dt; break;
    case BENCH_OP_BINARY: d->bin.a.dtype = d->bin.b.dtype = d->bin.y.dtype = dt; break;
  }
}

/* The oracle: the reference kernel in F64 on the same values. Row-major
 * GEMM by hand; for big GEMMs only a sample of rows (others NaN = skipped). */
static int reference(bench_case *c, double *y) {
  const bench_problem *p = &c->p;
  op_desc d = c->desc;
  set_dtype(p->op, &d, ADNN_DTYPE_F64);
  double *const *in = (double *const[5]){c->in[0].host, c->in[1].host, c->in[2].host,
                                         c->in[3].host, c->in[4].host};
  switch (p->op) {
    case BENCH_OP_CONV: adnn_ref_conv2d(&d.conv, in[0], in[1], NULL, y); break;
    case BENCH_OP_POOL: adnn_ref_pool2d(&d.pool, in[0], y); break;
    case BENCH_OP_ACT: adnn_ref_activation(&d.act, in[0], y); break;
    case BENCH_OP_SOFTMAX: adnn_ref_softmax(&d.sm, in[0], y); break;
    case BENCH_OP_LNORM:
    case BENCH_OP_RMSNORM: {
      const double *gain = p->has_gain ? in[1] : NULL;
      const double *bias = p->has_bias ? in[p->has_gain ? 2 : 1] : NULL;
      adnn_ref_norm(&d.norm, in[0], gain, bias, y);
      break;
    }
    case BENCH_OP_BNORM: adnn_ref_batchnorm(&d.bn, in[0], in[1], in[2], in[3], in[4], y); break;
    case BENCH_OP_BINARY: adnn_ref_binary(&d.bin, in[0], in[1], y); break;
    case BENCH_OP_GEMM: {
      const double *a = in[0], *b = in[1];
      int64_t lda = c->in[0].d.dims[1], ldb = c->in[1].d.dims[1];
      /* every row when small; else about 2^26 multiply-adds' worth of rows */
      int64_t per_row = p->n * p->k;
      int64_t step = per_row * p->m <= ((int64_t)1 << 27) ? 1 : (p->m * per_row >> 26) + 1;
      for (int64_t i = 0; i < p->m * p->n; i++) y[i] = NAN;
      for (int64_t i = 0; i < p->m; i += step)
        for (int64_t j = 0; j < p->n; j++) {
          double s = 0;
          for (int64_t l = 0; l < p->k; l++)
            s += (p->ta ? a[l * lda + i] : a[i * lda + l]) * (p->tb ? b[j * ldb + l] : b[l * ldb + j]);
          y[i * p->n + j] = s;
        }
      break;
    }
  }
  return 0;
}

static void tolerance(const bench_case *c, adnn_dtype dt, double *rel, double *mabs) {
  int f64 = dt == ADNN_DTYPE_F64;
  switch (c->p.op) {
    case BENCH_OP_CONV:
    case BENCH_OP_GEMM: {
      /* doc/numerics.md states the conv bound for reductions up to 576 terms;
       * longer ones grow like sqrt(n) */
      double scale = c->reduction > 576 ? sqrt((double)c->reduction / 576.0) : 1.0;
      *rel = (f64 ? 1e-12 : 1e-5) * scale;
      *mabs = (f64 ? 1e-11 : 1e-4) * scale;
      return;
    }
    case BENCH_OP_POOL:
      if (c->p.pool_kind == 0)
        *rel = *mabs = 0;
      else
        *rel = *mabs = f64 ? 1e-14 : 1e-6;
      return;
    case BENCH_OP_ACT:
    case BENCH_OP_SOFTMAX: *rel = f64 ? 1e-13 : 4e-6; *mabs = f64 ? 1e-12 : 1e-5; return;
    case BENCH_OP_BNORM: *rel = f64 ? 1e-13 : 2e-6; *mabs = f64 ? 1e-12 : 1e-5; return;
    case BENCH_OP_LNORM:
    case BENCH_OP_RMSNORM: *rel = f64 ? 1e-12 : 1e-5; *mabs = f64 ? 1e-11 : 5e-5; return;
    case BENCH_OP_BINARY: *rel = *mabs = f64 ? 4e-15 : 1e-6; return;
  }
  *rel = *mabs = 0;
}

/* Compares; returns the number of non-finite mismatches. NaN in want = skip
 * (GEMM rows not computed) unless the op can produce NaN (none here: inputs
 * are finite). */
static int64_t compare(const double *got, const double *want, int64_t n, double *rel_l2,
                       double *max_abs) {
  double num = 0, den = 0, mx = 0, ref_max = 0;
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) {
    if (isnan(want[i])) continue;
    if (!isfinite(got[i])) {
      bad++;
      continue;
    }
    double e = got[i] - want[i];
    num += e * e;
    den += want[i] * want[i];
    if (fabs(e) > mx) mx = fabs(e);
    if (fabs(want[i]) > ref_max) ref_max = fabs(want[i]);
  }
  *rel_l2 = den > 0 ? sqrt(num / den) : sqrt(num);
  *max_abs = mx / (ref_max > 1 ? ref_max : 1);
  return bad;
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
  snprintf(buf, len, "adnn-bench --backend=%s --mode=%s --dtype=%s --layout=%s%s%s %s%s%s",
           backend, o->mode == MODE_CORR ? "corr" : "perf", adnn_dtype_name(o->dtype),
           o->layout == LAYOUT_NHWC ? "nhwc" : "nchw", tune, alg, quote ? "'" : "", problem,
           quote ? "'" : "");
}

static void print_candidates(const adnn_plan *plan) {
  size_t n = 0;
  if (!plan || adnn_plan_candidate_count(plan, &n) != ADNN_STATUS_SUCCESS || n == 0) return;
  for (size_t i = 0; i < n; i++) {
    const adnn_plan_candidate *cand;
    if (adnn_plan_candidate_get(plan, i, &cand) != ADNN_STATUS_SUCCESS) continue;
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
static int run_problem(adnn_context *ctx, const char *backend, const bench_problem *prob,
                       const options *o) {
  bench_case c;
  memset(&c, 0, sizeof c);
  c.p = *prob;
  result r;
  memset(&r, 0, sizeof r);
  r.backend = backend;
  bench_problem_format(&c.p, r.problem, sizeof r.problem);
  repro_line(o, backend, r.problem, r.repro, sizeof r.repro);
  r.create_ms = r.median_ms = r.min_ms = r.max_ms = NAN;
  int rc = EXIT_OK;
  adnn_plan *plan = NULL;
  adnn_status s;

  build_case(&c, o);
  if (fill_host(&c)) {
    r.status = "error";
    snprintf(r.message, sizeof r.message, "out of host memory");
    rc = EXIT_MISMATCH;
    goto done;
  }
  double t0 = now_ms();
  s = create_plan(ctx, &c, &plan);
  r.create_ms = now_ms() - t0;
  if (s != ADNN_STATUS_SUCCESS) {
    int unsupported = s == ADNN_STATUS_NOT_SUPPORTED;
    r.status = unsupported ? "unsupported" : "error";
    snprintf(r.message, sizeof r.message, "plan creation: %s: %s", adnn_status_name(s),
             adnn_last_error());
    rc = unsupported ? EXIT_UNSUPPORTED : EXIT_MISMATCH;
    goto done;
  }
  if (plan) {
    snprintf(r.algorithm, sizeof r.algorithm, "%s", adnn_plan_algorithm(plan));
    snprintf(r.reason, sizeof r.reason, "%s", adnn_plan_choice_reason(plan));
    if (o->verbose) print_candidates(plan);
  } else {
    snprintf(r.algorithm, sizeof r.algorithm, "gemm");
    snprintf(r.reason, sizeof r.reason, "adnn_gemm (no plan, no tuning)");
  }
  for (int i = 0; i < c.n_in; i++)
    if ((s = upload(ctx, &c.in[i], o->dtype)) != ADNN_STATUS_SUCCESS) goto exec_error;
  c.out.host = NULL;
  if ((s = upload(ctx, &c.out, o->dtype)) != ADNN_STATUS_SUCCESS) goto exec_error;

  if (o->mode == MODE_CORR) {
    if ((s = run_once(ctx, &c, plan)) || (s = adnn_context_synchronize(ctx))) goto exec_error;
    size_t bytes = (size_t)c.out.count * esize(o->dtype);
    void *stage = malloc(bytes ? bytes : 1);
    double *got = malloc((size_t)c.out.count * sizeof(double) + 1);
    double *want = malloc((size_t)c.out.count * sizeof(double) + 1);
    if (!stage || !got || !want) {
      free(stage), free(got), free(want);
      s = ADNN_STATUS_OUT_OF_MEMORY;
      goto exec_error;
    }
    s = adnn_memcpy(ctx, stage, c.out.dev, bytes, ADNN_MEMCPY_DEVICE_TO_HOST);
    for (int64_t j = 0; j < c.out.count; j++) got[j] = adnn_ref_load(stage, o->dtype, j);
    free(stage);
    if (s) {
      free(got), free(want);
      goto exec_error;
    }
    reference(&c, want);
    r.have_corr = 1;
    tolerance(&c, o->dtype, &r.tol_rel_l2, &r.tol_max_abs);
    int64_t bad = compare(got, want, c.out.count, &r.rel_l2, &r.max_abs);
    free(got), free(want);
    if (bad || !(r.rel_l2 <= r.tol_rel_l2) || !(r.max_abs <= r.tol_max_abs)) {
      r.status = "mismatch";
      if (bad) snprintf(r.message, sizeof r.message, "%lld non-finite outputs", (long long)bad);
      rc = EXIT_MISMATCH;
    } else {
      r.status = "ok";
    }
    goto done;
  }

  /* perf: warm-up, then timed runs */
  for (int i = 0; i < o->warmup; i++)
    if ((s = run_once(ctx, &c, plan)) || (s = adnn_context_synchronize(ctx))) goto exec_error;
  {
    int cap = o->runs > 0 ? o->runs : 10000;
    double *t = malloc(sizeof(double) * (size_t)cap);
    if (!t) {
      s = ADNN_STATUS_OUT_OF_MEMORY;
      goto exec_error;
    }
    double start = now_ms();
    int n = 0;
    while (n < cap) {
      double a = now_ms();
      s = run_once(ctx, &c, plan);
      if (!s) s = adnn_context_synchronize(ctx);
      double b = now_ms();
      if (s) {
        free(t);
        goto exec_error;
      }
      t[n++] = b - a;
      if (o->runs == 0 && n >= 3 && b - start >= o->time_ms) break;
    }
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    r.runs = n;
    r.median_ms = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    r.min_ms = t[0];
    r.max_ms = t[n - 1];
    free(t);
    double flops = bench_problem_flops(&c.p);
    r.gflops = flops > 0 ? flops / (r.median_ms * 1e6) : 0;
    r.gbs = bench_problem_bytes(&c.p, esize(o->dtype)) / (r.median_ms * 1e6);
    r.status = "ok";
  }
  goto done;

exec_error:
  r.status = s == ADNN_STATUS_NOT_SUPPORTED ? "unsupported" : "error";
  snprintf(r.message, sizeof r.message, "%s: %s", adnn_status_name(s), adnn_last_error());
  rc = s == ADNN_STATUS_NOT_SUPPORTED ? EXIT_UNSUPPORTED : EXIT_MISMATCH;
done:
  print_result(o, &r);
  adnn_plan_destroy(plan);
  free_case(ctx, &c);
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
          "  --dtype=f32|f64                   element type (default f32)\n"
          "  --layout=nchw|nhwc                layout of 4-D tensors (default nchw)\n"
          "  --alg=NAME                        force a conv algorithm (im2col_gemm, gemm_1x1, ...)\n"
          "  --mb=N                            override the minibatch of every problem\n"
          "  --batch=FILE                      problems, one per line (# comments)\n"
          "  --time-ms=T                       perf: time per problem (default 500)\n"
          "  --runs=N                          perf: exactly N timed runs\n"
          "  --warmup=N                        perf: untimed runs first (default 1)\n"
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

static int add_problem(problem_list *l, const char *text, const char *where) {
  bench_problem p;
  char err[512];
  if (bench_problem_parse(text, &p, err, sizeof err))
    return usage_error("%s: %s", where, err);
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

static int read_batch(problem_list *l, const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return usage_error("--batch=%s: %s", path, strerror(errno));
  char line[4096], where[4200];
  int lineno = 0, rc = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    char *hash = strchr(line, '#');
    if (hash) *hash = 0;
    char *s = line;
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t')) *--e = 0;
    if (!*s) continue;
    snprintf(where, sizeof where, "%s:%d", path, lineno);
    if ((rc = add_problem(l, s, where))) break;
  }
  fclose(f);
  return rc;
}

int main(int argc, char **argv) {
  options o;
  memset(&o, 0, sizeof o);
  o.backend = "auto";
  o.mode = MODE_PERF;
  o.tune = -1;
  o.dtype = ADNN_DTYPE_F32;
  o.layout = LAYOUT_NCHW;
  o.alg = -1;
  o.mb = 0;
  o.time_ms = 500;
  o.warmup = 1;
  problem_list list = {0};
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
      else
        return usage_error("bad token '%s': --dtype is f32 or f64", v);
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
    } else if ((v = opt_value(a, "--batch"))) {
      if ((rc = read_batch(&list, v))) return rc;
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
    } else if (a[0] == '-' && a[1] == '-') {
      return usage_error("bad token '%s': unknown option", a);
    } else {
      snprintf(where, sizeof where, "argument %d", i);
      if ((rc = add_problem(&list, a, where))) return rc;
    }
  }
  if (list.n == 0 && !o.perfdb_import && !o.perfdb_export)
    return usage_error("no problem given (a descriptor or --batch=FILE)");

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
    const char *bname = adnn_context_backend(ctx);
    char full[64];
    int dev = adnn_context_device(ctx);
    if (!strcmp(bname, "cpu") || dev < 0)
      snprintf(full, sizeof full, "%s", bname);
    else
      snprintf(full, sizeof full, "%s:%d", bname, dev);
    for (size_t i = 0; i < list.n; i++) {
      bench_problem p = list.v[i];
      if (o.mb > 0) bench_problem_set_mb(&p, o.mb);
      int r = run_problem(ctx, full, &p, &o);
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
  free(list.v);
  if (worst_mismatch) return EXIT_MISMATCH;
  if (any_unsupported) return EXIT_UNSUPPORTED;
  return EXIT_OK;
}
