/* The conformance suite of the forward DNN ops: every ready backend against the
 * reference kernels (kernels/ref/), with the tolerances of doc/numerics.md.
 *
 * For every case of the per-op tables below:
 *   1. seeded random inputs are built on the host (values of mixed scales, and
 *      for some cases NaN / inf / values near 0 or far from it). Elements of a
 *      buffer that belong to no tensor element (gaps of padded strides) hold
 *      NaN, so a kernel that reads them fails;
 *   2. the oracle runs: the reference kernel in F64 on those values (for an
 *      F32 case the values are F32-representable, so the oracle is the exact
 *      result up to double rounding). The reference kernel's own F32 path is
 *      checked against it too (the CPU plugin uses it as a fallback);
 *   3. for every READY backend: the plan is created through the public API
 *      (ADNN_STATUS_NOT_SUPPORTED gives "ok N # SKIP backend: reason"), the
 *      inputs are copied to adnn_malloc'd memory, the output is poisoned with
 *      NaN, the plan runs (twice, unless in place: a plan is reusable), the
 *      output comes back and is compared with the
 *      oracle: relative L2 error and max abs error (scaled by max(1, max|ref|))
 *      over the finite reference elements, exact agreement on the non-finite
 *      ones (NaN where NaN, the same infinity), and gap elements of y must
 *      still be NaN;
 *   4. with two or more ready backends, their outputs are compared with each
 *      other (twice the tolerance).
 * Conv2d cases run with AUTO and then every algorithm forced in turn.
 *
 * ADNN_CONFORMANCE_BACKEND=name restricts the run to one backend;
 * ADNN_CONFORMANCE_FILTER=substring runs only the cases whose name contains it.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "kernels/ref/ref_ops.h"
#include "t/tap.h"

/* ------------------------------------------------------------------------ */
/* Ops and tolerances                                                        */
/* ------------------------------------------------------------------------ */

enum { OP_CONV, OP_POOL, OP_ACT, OP_SOFTMAX, OP_BN, OP_NORM, OP_BINARY, OP_COUNT };
static const char *const op_names[OP_COUNT] = {"conv2d",    "pool2d", "activation", "softmax",
                                                "batchnorm", "norm",   "binary"};

static const char *const act_names[] = {"identity", "relu",  "leaky_relu", "elu",
                                        "clamp",    "sigmoid", "tanh",     "gelu",
                                        "gelu_tanh", "silu",   "softplus", "hardswish"};

typedef union op_desc {
  adnn_conv2d_desc conv;
  adnn_pool2d_desc pool;
  adnn_activation_desc act;
  adnn_softmax_desc sm;
  adnn_batchnorm_desc bn;
  adnn_norm_desc norm;
  adnn_binary_desc bin;
} op_desc;

/* The numerics contract (doc/numerics.md). rel_l2 bounds
 * ||got - ref||_2 / ||ref||_2 and max_abs bounds
 * max |got - ref| / max(1, max |ref|), both over the finite reference elements. */
typedef struct tolerance {
  double rel_l2, max_abs;
} tolerance;

static tolerance tol_for(int op, const op_desc *d, adnn_dtype dt) {
  const int f64 = dt == ADNN_DTYPE_F64;
  switch (op) {
    case OP_CONV: return f64 ? (tolerance){1e-12, 1e-11} : (tolerance){1e-5, 1e-4};
    case OP_POOL:
      if (d->pool.kind == ADNN_POOL_MAX) return (tolerance){0.0, 0.0}; /* a selection: exact */
      return f64 ? (tolerance){1e-14, 1e-14} : (tolerance){1e-6, 1e-6};
    case OP_ACT: return f64 ? (tolerance){1e-13, 1e-12} : (tolerance){4e-6, 1e-5};
    case OP_SOFTMAX: return f64 ? (tolerance){1e-13, 1e-12} : (tolerance){4e-6, 1e-5};
    case OP_BN: return f64 ? (tolerance){1e-13, 1e-12} : (tolerance){2e-6, 1e-5};
    case OP_NORM: return f64 ? (tolerance){1e-12, 1e-11} : (tolerance){1e-5, 5e-5};
    case OP_BINARY: return f64 ? (tolerance){4e-15, 4e-15} : (tolerance){1e-6, 1e-6};
  }
  return (tolerance){0, 0};
}

/* ------------------------------------------------------------------------ */
/* Host buffers                                                              */
/* ------------------------------------------------------------------------ */

enum { L_PACKED, L_NHWC, L_KRSC, L_PADDED };

static adnn_tensor_desc tdesc(adnn_dtype dt, int rank, const int64_t *dims, int layout) {
  adnn_tensor_desc t;
  memset(&t, 0, sizeof t);
  t.dtype = dt;
  t.rank = rank;
  for (int i = 0; i < rank; i++) t.dims[i] = dims[i];
  if (layout == L_NHWC || layout == L_KRSC) { /* dims [N, C, H, W], memory N, H, W, C */
    t.strides[1] = 1;
    t.strides[3] = dims[1];
    t.strides[2] = dims[3] * dims[1];
    t.strides[0] = dims[2] * dims[3] * dims[1];
  } else {
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
      t.strides[i] = s;
      s = s * dims[i] + (layout == L_PADDED ? 2 : 0); /* padded: 2-element gaps */
    }
  }
  return t;
}

static adnn_tensor_desc tdesc4(adnn_dtype dt, int64_t a, int64_t b, int64_t c, int64_t d,
                               int layout) {
  const int64_t dims[4] = {a, b, c, d};
  return tdesc(dt, 4, dims, layout);
}

static adnn_tensor_desc tdesc1(adnn_dtype dt, int64_t n) { return tdesc(dt, 1, &n, L_PACKED); }

/* Elements from the first to one past the last (at least 1). */
static int64_t span_of(const adnn_tensor_desc *t) {
  int64_t s = 1;
  for (int i = 0; i < t->rank; i++) s += (t->dims[i] - 1) * t->strides[i];
  return s;
}

typedef struct buf {
  adnn_tensor_desc d;
  int64_t span;
  double *v;             /* span values; gaps are NaN */
  unsigned char *member; /* 1 where some element of the tensor lives */
} buf;

static void buf_init(buf *b, const adnn_tensor_desc *d) {
  b->d = *d;
  b->span = span_of(d);
  b->v = malloc((size_t)b->span * sizeof *b->v);
  b->member = calloc((size_t)b->span, 1);
  for (int64_t i = 0; i < b->span; i++) b->v[i] = NAN;
  const int64_t n = adnn_ref_count(d);
  for (int64_t i = 0; i < n; i++) b->member[adnn_ref_offset(d, i)] = 1;
}

static void buf_free(buf *b) {
  free(b->v);
  free(b->member);
  b->v = NULL;
  b->member = NULL;
}

static double round_to(adnn_dtype dt, double v) { return dt == ADNN_DTYPE_F32 ? (double)(float)v : v; }

/* Uniform values in [lo, hi) at every member offset. */
static void fill_uniform(buf *b, tap_rng *r, double lo, double hi) {
  for (int64_t i = 0; i < b->span; i++)
    if (b->member[i]) b->v[i] = round_to(b->d.dtype, tap_rng_uniform(r, lo, hi));
}

/* Values of mixed scales: mostly [-1, 1), some x10, some x0.01. */
static void fill_mixed(buf *b, tap_rng *r) {
  for (int64_t i = 0; i < b->span; i++) {
    if (!b->member[i]) continue;
    double u = tap_rng_uniform(r, -1.0, 1.0), k = tap_rng_uniform(r, 0.0, 1.0);
    double scale = k < 0.1 ? 10.0 : (k < 0.2 ? 0.01 : 1.0);
    b->v[i] = round_to(b->d.dtype, u * scale);
  }
}

/* Sets the logical element `lin` (row-major) to v. */
static void set_elem(buf *b, int64_t lin, double v) { b->v[adnn_ref_offset(&b->d, lin)] = round_to(b->d.dtype, v); }

static void *to_dtype(const double *v, int64_t n, adnn_dtype dt) {
  size_t es = adnn_dtype_size(dt);
  void *p = malloc((size_t)n * es);
  for (int64_t i = 0; i < n; i++) adnn_ref_store(p, dt, i, v[i]);
  return p;
}

static void from_dtype(const void *p, int64_t n, adnn_dtype dt, double *out) {
  for (int64_t i = 0; i < n; i++) out[i] = adnn_ref_load(p, dt, i);
}

/* ------------------------------------------------------------------------ */
/* Op dispatch                                                               */
/* ------------------------------------------------------------------------ */

static void set_dtype(int op, op_desc *d, adnn_dtype dt) {
  switch (op) {
    case OP_CONV: d->conv.x.dtype = d->conv.w.dtype = d->conv.bias.dtype = d->conv.y.dtype = dt; break;
    case OP_POOL: d->pool.x.dtype = d->pool.y.dtype = dt; break;
    case OP_ACT: d->act.x.dtype = d->act.y.dtype = dt; break;
    case OP_SOFTMAX: d->sm.x.dtype = d->sm.y.dtype = dt; break;
    case OP_BN: d->bn.x.dtype = d->bn.y.dtype = dt; break;
    case OP_NORM: d->norm.x.dtype = d->norm.y.dtype = dt; break;
    case OP_BINARY: d->bin.a.dtype = d->bin.b.dtype = d->bin.y.dtype = dt; break;
  }
}

static void call_ref(int op, const op_desc *d, const void *const *in, void *y) {
  switch (op) {
    case OP_CONV: adnn_ref_conv2d(&d->conv, in[0], in[1], d->conv.has_bias ? in[2] : NULL, y); break;
    case OP_POOL: adnn_ref_pool2d(&d->pool, in[0], y); break;
    case OP_ACT: adnn_ref_activation(&d->act, in[0], y); break;
    case OP_SOFTMAX: adnn_ref_softmax(&d->sm, in[0], y); break;
    case OP_BN: adnn_ref_batchnorm(&d->bn, in[0], in[1], in[2], in[3], in[4], y); break;
    case OP_NORM: {
      int k = 1;
      const void *gain = d->norm.has_gain ? in[k++] : NULL;
      const void *bias = d->norm.has_bias ? in[k++] : NULL;
      adnn_ref_norm(&d->norm, in[0], gain, bias, y);
      break;
    }
    case OP_BINARY: adnn_ref_binary(&d->bin, in[0], in[1], y); break;
  }
}

static adnn_status create_plan(adnn_context *ctx, int op, const op_desc *d, adnn_plan **p) {
  switch (op) {
    case OP_CONV: return adnn_plan_create_conv2d(ctx, &d->conv, p);
    case OP_POOL: return adnn_plan_create_pool2d(ctx, &d->pool, p);
    case OP_ACT: return adnn_plan_create_activation(ctx, &d->act, p);
    case OP_SOFTMAX: return adnn_plan_create_softmax(ctx, &d->sm, p);
    case OP_BN: return adnn_plan_create_batchnorm(ctx, &d->bn, p);
    case OP_NORM: return adnn_plan_create_norm(ctx, &d->norm, p);
    case OP_BINARY: return adnn_plan_create_binary(ctx, &d->bin, p);
  }
  return ADNN_STATUS_BAD_PARAM;
}

/* ------------------------------------------------------------------------ */
/* Comparison                                                                */
/* ------------------------------------------------------------------------ */

typedef struct cmp_result {
  double rel_l2, max_abs;   /* max_abs already scaled by max(1, max|ref|) */
  int64_t nonfinite_bad;    /* class mismatches (NaN/inf where not expected, or missing) */
  int64_t gap_bad;          /* gap elements of y that were written */
  int64_t first_bad;        /* offset of the worst or first bad element */
  double bad_got, bad_want;
} cmp_result;

static int same_class(double got, double want) {
  if (isnan(want)) return isnan(got);
  if (isinf(want)) return got == want;
  return isfinite(got);
}

static cmp_result compare(const double *got, const double *want, const unsigned char *member,
                          int64_t span, int check_gaps) {
  cmp_result c;
  memset(&c, 0, sizeof c);
  c.first_bad = -1;
  double num = 0.0, den = 0.0, maxref = 0.0, maxerr = 0.0;
  for (int64_t i = 0; i < span; i++) {
    if (!member[i]) {
      if (check_gaps && !isnan(got[i])) {
        if (c.first_bad < 0) { c.first_bad = i; c.bad_got = got[i]; c.bad_want = NAN; }
        c.gap_bad++;
      }
      continue;
    }
    if (!isfinite(want[i]) || !isfinite(got[i])) {
      if (!same_class(got[i], want[i])) {
        if (c.nonfinite_bad == 0) { c.first_bad = i; c.bad_got = got[i]; c.bad_want = want[i]; }
        c.nonfinite_bad++;
      }
      continue;
    }
    double e = fabs(got[i] - want[i]);
    num += e * e;
    den += want[i] * want[i];
    if (fabs(want[i]) > maxref) maxref = fabs(want[i]);
    if (e > maxerr) {
      maxerr = e;
      if (c.nonfinite_bad == 0 && c.gap_bad == 0) { c.first_bad = i; c.bad_got = got[i]; c.bad_want = want[i]; }
    }
  }
  c.rel_l2 = den > 0 ? sqrt(num / den) : sqrt(num);
  c.max_abs = maxerr / (maxref > 1.0 ? maxref : 1.0);
  return c;
}

static int cmp_ok(const cmp_result *c, tolerance t) {
  return c->nonfinite_bad == 0 && c->gap_bad == 0 && c->rel_l2 <= t.rel_l2 && c->max_abs <= t.max_abs;
}

static void cmp_diag(const cmp_result *c, tolerance t) {
  diag("  rel_l2 %.3g (limit %.3g), max_abs %.3g (limit %.3g), non-finite mismatches %lld, "
       "gap elements written %lld", c->rel_l2, t.rel_l2, c->max_abs, t.max_abs,
       (long long)c->nonfinite_bad, (long long)c->gap_bad);
  if (c->first_bad >= 0)
    diag("  e.g. at offset %lld: got %.9g, expected %.9g", (long long)c->first_bad, c->bad_got,
         c->bad_want);
}

/* ------------------------------------------------------------------------ */
/* Backends                                                                  */
/* ------------------------------------------------------------------------ */

#define MAX_BACKENDS 8
static int n_backends;
static adnn_context *backends[MAX_BACKENDS];
static const char *backend_names[MAX_BACKENDS];
static const char *case_filter;

/* Forced-algorithm outcomes per backend: [backend][algorithm] passes. */
static int algo_pass[MAX_BACKENDS][ADNN_CONV2D_ALGO_DIRECT + 1];
static int algo_skip[MAX_BACKENDS][ADNN_CONV2D_ALGO_DIRECT + 1];
static int n_pass, n_skip, n_fail;
/* Reference F32 path vs the F64 oracle, per op. */
static int ref_f32_cases[OP_COUNT], ref_f32_bad[OP_COUNT];

static void open_backends(void) {
  size_t count = 0;
  const char *only = getenv("ADNN_CONFORMANCE_BACKEND");
  if (adnn_backend_count(&count) != ADNN_STATUS_SUCCESS) tap_bail("adnn_backend_count failed");
  for (size_t i = 0; i < count && n_backends < MAX_BACKENDS; i++) {
    const adnn_backend_info *info = NULL;
    if (adnn_backend_get(i, &info) != ADNN_STATUS_SUCCESS) continue;
    if (info->state != ADNN_BACKEND_READY) {
      diag("backend %s is not ready (%s): not tested", info->name, info->reason);
      continue;
    }
    if (only && *only && strcmp(only, info->name) != 0) continue;
    adnn_context *ctx = NULL;
    adnn_status st = adnn_context_create(info->name, &ctx);
    if (!ok(st == ADNN_STATUS_SUCCESS, "context on ready backend %s", info->name)) {
      diag("  %s: %s", adnn_status_name(st), adnn_last_error());
      continue;
    }
    backends[n_backends] = ctx;
    backend_names[n_backends] = info->name;
    n_backends++;
  }
}

/* ------------------------------------------------------------------------ */
/* Running one case                                                          */
/* ------------------------------------------------------------------------ */

typedef struct cf_case {
  int op;
  char name[200];
  adnn_dtype dt;
  op_desc d;
  int n_in;
  buf in[5];
  buf out; /* y's layout; values unused */
  int inplace; /* -1, or the input that y aliases */
  int conv_all_algos;
} cf_case;

static void case_begin(cf_case *c, int op, adnn_dtype dt, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static void case_begin(cf_case *c, int op, adnn_dtype dt, const char *fmt, ...) {
  memset(c, 0, sizeof *c);
  c->op = op;
  c->dt = dt;
  c->inplace = -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->name, sizeof c->name, fmt, ap);
  va_end(ap);
  if (dt == ADNN_DTYPE_F64) strncat(c->name, " f64", sizeof c->name - strlen(c->name) - 1);
}

static uint64_t seed_of(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a of the case name: stable seeds */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Runs plan variant `algo` (conv2d only; -1 otherwise) of case c on backend b.
 * Returns the output (span doubles) or NULL when skipped / failed. */
static double *run_backend(cf_case *c, int b, int algo, const double *oracle) {
  adnn_context *ctx = backends[b];
  const char *bname = backend_names[b];
  op_desc d = c->d;
  char label[320];
  if (algo >= 0) {
    d.conv.algorithm = (adnn_conv2d_algorithm)algo;
    snprintf(label, sizeof label, "%s %s %s [%s]", bname, op_names[c->op], c->name,
             algo == ADNN_CONV2D_ALGO_AUTO ? "auto" : adnn_conv2d_algorithm_name((adnn_conv2d_algorithm)algo));
  } else {
    snprintf(label, sizeof label, "%s %s %s", bname, op_names[c->op], c->name);
  }
  adnn_plan *plan = NULL;
  adnn_status st = create_plan(ctx, c->op, &d, &plan);
  if (st == ADNN_STATUS_NOT_SUPPORTED) {
    char why[640];
    snprintf(why, sizeof why, "%s: %s", label, adnn_last_error());
    tap_skip(why);
    n_skip++;
    if (algo > 0) algo_skip[b][algo]++;
    return NULL;
  }
  if (st != ADNN_STATUS_SUCCESS) {
    ok(0, "%s: plan creation", label);
    diag("  %s: %s", adnn_status_name(st), adnn_last_error());
    n_fail++;
    return NULL;
  }
  const size_t es = adnn_dtype_size(c->dt);
  void *dev[5] = {0};
  void *ydev = NULL;
  double *got = NULL;
  const char *failed = NULL;
  for (int i = 0; i < c->n_in && !failed; i++) {
    void *host = to_dtype(c->in[i].v, c->in[i].span, c->dt);
    size_t bytes = (size_t)c->in[i].span * es;
    if (adnn_malloc(ctx, bytes, &dev[i]) != ADNN_STATUS_SUCCESS ||
        adnn_memcpy(ctx, dev[i], host, bytes, ADNN_MEMCPY_HOST_TO_DEVICE) != ADNN_STATUS_SUCCESS)
      failed = "input allocation or copy";
    free(host);
  }
  const int64_t yspan = c->out.span;
  if (!failed) {
    if (c->inplace >= 0) {
      ydev = dev[c->inplace];
    } else {
      double *nan = malloc((size_t)yspan * sizeof *nan);
      for (int64_t i = 0; i < yspan; i++) nan[i] = NAN;
      void *host = to_dtype(nan, yspan, c->dt);
      if (adnn_malloc(ctx, (size_t)yspan * es, &ydev) != ADNN_STATUS_SUCCESS ||
          adnn_memcpy(ctx, ydev, host, (size_t)yspan * es, ADNN_MEMCPY_HOST_TO_DEVICE) !=
              ADNN_STATUS_SUCCESS)
        failed = "output allocation or poisoning";
      free(host);
      free(nan);
    }
  }
  if (!failed) {
    st = adnn_plan_execute(plan, (const void *const *)dev, (size_t)c->n_in, ydev);
    /* Plans run as many times as wanted: a second run must give the same y
     * (catches kernels that accumulate into y or consume plan state). In-place
     * runs would apply the op twice, so they run once. */
    if (st == ADNN_STATUS_SUCCESS && c->inplace < 0)
      st = adnn_plan_execute(plan, (const void *const *)dev, (size_t)c->n_in, ydev);
    if (st == ADNN_STATUS_SUCCESS) st = adnn_context_synchronize(ctx);
    if (st != ADNN_STATUS_SUCCESS) failed = "execution";
  }
  if (!failed) {
    void *host = malloc((size_t)yspan * es);
    if (adnn_memcpy(ctx, host, ydev, (size_t)yspan * es, ADNN_MEMCPY_DEVICE_TO_HOST) !=
        ADNN_STATUS_SUCCESS) {
      failed = "copy back";
    } else {
      got = malloc((size_t)yspan * sizeof *got);
      from_dtype(host, yspan, c->dt, got);
    }
    free(host);
  }
  const char *alg = adnn_plan_algorithm(plan);
  if (failed) {
    ok(0, "%s (%s): %s failed", label, alg, failed);
    diag("  %s: %s", adnn_status_name(st), adnn_last_error());
    n_fail++;
  } else {
    tolerance t = tol_for(c->op, &d, c->dt);
    cmp_result r = compare(got, oracle, c->out.member, yspan, c->inplace < 0);
    int good = cmp_ok(&r, t);
    ok(good, "%s (%s) rel_l2 %.2g max_abs %.2g", label, alg, r.rel_l2, r.max_abs);
    if (!good) cmp_diag(&r, t);
    if (good) n_pass++; else n_fail++;
    if (good && algo > 0) algo_pass[b][algo]++;
    if (algo > 0 && strstr(alg, adnn_conv2d_algorithm_name((adnn_conv2d_algorithm)algo)) == NULL)
      diag("  note: forced %s but the plan reports \"%s\"",
           adnn_conv2d_algorithm_name((adnn_conv2d_algorithm)algo), alg);
    if (!good) {
      free(got);
      got = NULL;
    }
  }
  for (int i = 0; i < c->n_in; i++) adnn_free(ctx, dev[i]);
  if (c->inplace < 0) adnn_free(ctx, ydev);
  adnn_plan_destroy(plan);
  return got;
}

static void run_case(cf_case *c) {
  if (case_filter && !strstr(c->name, case_filter) && !strstr(op_names[c->op], case_filter)) {
    for (int i = 0; i < c->n_in; i++) buf_free(&c->in[i]);
    buf_free(&c->out);
    return;
  }
  /* The oracle: the reference kernel in F64 on the (F32-representable) values. */
  const int64_t yspan = c->out.span;
  double *oracle = malloc((size_t)yspan * sizeof *oracle);
  for (int64_t i = 0; i < yspan; i++) oracle[i] = NAN;
  op_desc d64 = c->d;
  set_dtype(c->op, &d64, ADNN_DTYPE_F64);
  const void *in64[5];
  for (int i = 0; i < c->n_in; i++) in64[i] = c->in[i].v;
  call_ref(c->op, &d64, in64, oracle);

  /* The reference kernel's own F32 path (the CPU plugin's fallback). */
  if (c->dt == ADNN_DTYPE_F32) {
    void *in32[5];
    for (int i = 0; i < c->n_in; i++) in32[i] = to_dtype(c->in[i].v, c->in[i].span, c->dt);
    void *y32;
    if (c->inplace >= 0) {
      y32 = in32[c->inplace];
    } else {
      y32 = to_dtype(oracle, yspan, c->dt); /* gaps stay NaN */
      for (int64_t i = 0; i < yspan; i++)
        if (c->out.member[i]) adnn_ref_store(y32, c->dt, i, NAN);
    }
    call_ref(c->op, &c->d, (const void *const *)in32, y32);
    double *got = malloc((size_t)yspan * sizeof *got);
    from_dtype(y32, yspan, c->dt, got);
    tolerance t = tol_for(c->op, &c->d, c->dt);
    t.rel_l2 = t.rel_l2 > 1e-6 ? t.rel_l2 : 1e-6; /* the final rounding to F32 */
    t.max_abs = t.max_abs > 1e-6 ? t.max_abs : 1e-6;
    cmp_result r = compare(got, oracle, c->out.member, yspan, c->inplace < 0);
    ref_f32_cases[c->op]++;
    if (!cmp_ok(&r, t)) {
      ref_f32_bad[c->op]++;
      ok(0, "reference %s %s: the f32 path agrees with the f64 oracle", op_names[c->op], c->name);
      cmp_diag(&r, t);
    }
    free(got);
    for (int i = 0; i < c->n_in; i++) free(in32[i]);
    if (c->inplace < 0) free(y32);
  }

  int algos[8], n_algos = 0;
  if (c->op == OP_CONV) {
    algos[n_algos++] = ADNN_CONV2D_ALGO_AUTO;
    for (int a = ADNN_CONV2D_ALGO_REFERENCE; a <= ADNN_CONV2D_ALGO_DIRECT; a++)
      if (c->conv_all_algos || a == ADNN_CONV2D_ALGO_REFERENCE) algos[n_algos++] = a;
  } else {
    algos[n_algos++] = -1;
  }
  for (int v = 0; v < n_algos; v++) {
    double *outs[MAX_BACKENDS] = {0};
    for (int b = 0; b < n_backends; b++) outs[b] = run_backend(c, b, algos[v], oracle);
    /* Backends against each other. */
    for (int b1 = 0; b1 < n_backends; b1++)
      for (int b2 = b1 + 1; b2 < n_backends; b2++) {
        if (!outs[b1] || !outs[b2]) continue;
        tolerance t = tol_for(c->op, &c->d, c->dt);
        t.rel_l2 *= 2;
        t.max_abs *= 2;
        cmp_result r = compare(outs[b2], outs[b1], c->out.member, yspan, 0);
        int good = cmp_ok(&r, t);
        ok(good, "%s vs %s: %s %s%s%s agree", backend_names[b1], backend_names[b2],
           op_names[c->op], c->name, algos[v] >= 0 ? " " : "",
           algos[v] >= 0 ? adnn_conv2d_algorithm_name((adnn_conv2d_algorithm)algos[v]) : "");
        if (!good) cmp_diag(&r, t);
      }
    for (int b = 0; b < n_backends; b++) free(outs[b]);
  }
  free(oracle);
  for (int i = 0; i < c->n_in; i++) buf_free(&c->in[i]);
  buf_free(&c->out);
}

/* ------------------------------------------------------------------------ */
/* conv2d cases                                                              */
/* ------------------------------------------------------------------------ */

typedef struct conv_spec {
  const char *name;
  int64_t n, c, h, w, k, r, s;
  int64_t sh, sw, pt, pb, pl, pr, dh, dw, g;
  int bias;
  adnn_activation_kind act;
  double alpha, beta;
  int layout; /* L_PACKED (NCHW), L_NHWC (x, y NHWC and w KRSC), L_PADDED */
  adnn_dtype dt;
} conv_spec;

static void conv_case(const conv_spec *s) {
  cf_case c;
  const adnn_dtype dt = s->dt ? s->dt : ADNN_DTYPE_F32;
  case_begin(&c, OP_CONV, dt, "%s n%lld c%lld %lldx%lld k%lld f%lldx%lld s%lld,%lld p%lld,%lld,%lld,%lld d%lld,%lld g%lld%s%s",
             s->name, (long long)s->n, (long long)s->c, (long long)s->h, (long long)s->w,
             (long long)s->k, (long long)s->r, (long long)s->s, (long long)s->sh,
             (long long)s->sw, (long long)s->pt, (long long)s->pb, (long long)s->pl,
             (long long)s->pr, (long long)s->dh, (long long)s->dw, (long long)s->g,
             s->bias ? " bias" : "",
             s->layout == L_NHWC ? " nhwc" : (s->layout == L_PADDED ? " padded" : " nchw"));
  if (s->act) {
    char a[64];
    snprintf(a, sizeof a, " %s(%g,%g)", act_names[s->act], s->alpha, s->beta);
    strncat(c.name, a, sizeof c.name - strlen(c.name) - 1);
  }
  adnn_conv2d_desc *d = &c.d.conv;
  adnn_conv2d_desc_init(d);
  int xl = s->layout, wl = s->layout == L_NHWC ? L_KRSC : s->layout;
  d->x = tdesc4(dt, s->n, s->c, s->h, s->w, xl);
  d->w = tdesc4(dt, s->k, s->c / s->g, s->r, s->s, wl);
  d->stride_h = s->sh;
  d->stride_w = s->sw;
  d->pad_top = s->pt;
  d->pad_bottom = s->pb;
  d->pad_left = s->pl;
  d->pad_right = s->pr;
  d->dilation_h = s->dh;
  d->dilation_w = s->dw;
  d->groups = s->g;
  d->activation.kind = s->act;
  d->activation.alpha = s->alpha;
  d->activation.beta = s->beta;
  int64_t yd[4];
  if (adnn_conv2d_output_dims(d, yd) != ADNN_STATUS_SUCCESS) {
    ok(0, "conv2d case %s: output dims (%s)", c.name, adnn_last_error());
    return;
  }
  d->y = tdesc4(dt, yd[0], yd[1], yd[2], yd[3], xl);
  tap_rng r = tap_rng_seed(seed_of(c.name));
  buf_init(&c.in[0], &d->x);
  buf_init(&c.in[1], &d->w);
  fill_mixed(&c.in[0], &r);
  double wscale = 1.0 / sqrt((double)(s->c / s->g * s->r * s->s));
  fill_uniform(&c.in[1], &r, -2 * wscale, 2 * wscale);
  c.n_in = 2;
  if (s->bias) {
    d->has_bias = 1;
    d->bias = tdesc1(dt, s->k);
    buf_init(&c.in[2], &d->bias);
    fill_uniform(&c.in[2], &r, -0.5, 0.5);
    c.n_in = 3;
  }
  buf_init(&c.out, &d->y);
  c.conv_all_algos = dt == ADNN_DTYPE_F32;
  run_case(&c);
}

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64
#define A_RELU ADNN_ACTIVATION_RELU
#define A_CLAMP ADNN_ACTIVATION_CLAMP
#define A_GELU ADNN_ACTIVATION_GELU

static const conv_spec conv_specs[] = {
    /* name      n  c   h   w   k  r  s  sh sw pt pb pl pr dh dw g  bias act alpha beta layout dt */
    {"1x1",      1, 8,  5,  7,  6, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, L_PACKED, F32},
    {"1x1",      3, 5,  4,  6,  7, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, L_NHWC, F32},
    {"1x1",      1, 4,  7,  7,  3, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, L_PACKED, F32},
    {"1x1 pad",  1, 3,  4,  4,  2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, L_PACKED, F32},
    {"1x1 g2",   1, 6,  5,  5,  4, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2, 1, 0, 0, 0, L_PACKED, F32},
    {"1x1 big",  1, 64, 14, 14, 48, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, A_RELU, 0, 0, L_NHWC, F32},
    {"3x3",      1, 4,  8,  8,  5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_RELU, 0, 0, L_PACKED, F32},
    {"3x3",      3, 6,  9,  7,  8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, L_NHWC, F32},
    {"3x3 odd",  1, 3,  7,  5,  4, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, L_PACKED, F32},
    {"3x3 s2",   3, 4,  9, 10,  6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, L_PACKED, F32},
    {"3x3 s3 asym", 1, 5, 11, 8, 4, 3, 3, 3, 3, 0, 2, 1, 0, 1, 1, 1, 1, 0, 0, 0, L_PACKED, F32},
    {"3x3 asym", 1, 4,  8,  9,  4, 3, 3, 1, 1, 0, 1, 2, 0, 1, 1, 1, 1, 0, 0, 0, L_NHWC, F32},
    {"3x3 s1,2", 1, 3,  9,  9,  4, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, L_PACKED, F32},
    {"3x3 dil2", 1, 4,  9,  9,  4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 1, 0, 0, 0, L_PACKED, F32},
    {"3x3 dil2 s2 g2", 3, 4, 11, 10, 6, 3, 3, 2, 2, 2, 1, 1, 2, 2, 2, 2, 1, 0, 0, 0, L_NHWC, F32},
    {"3x3 g2",   1, 8,  6,  6,  6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 0, 0, 0, L_PACKED, F32},
    {"3x3 g2",   3, 8,  7,  6,  4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 0, 0, 0, L_NHWC, F32},
    {"dw 3x3",   1, 8,  9,  9,  8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8, 1, A_CLAMP, 0, 6, L_PACKED, F32},
    {"dw 3x3 s2", 3, 16, 10, 10, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 16, 1, 0, 0, 0, L_NHWC, F32},
    {"dw 3x3 asym", 1, 5, 7, 6, 5, 3, 3, 1, 1, 0, 2, 2, 1, 1, 1, 5, 0, 0, 0, 0, L_NHWC, F32},
    {"dw 5x5",   1, 6,  8,  8,  6, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 6, 1, 0, 0, 0, L_PACKED, F32},
    {"dw 3x3 dil2", 1, 4, 9, 9, 4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 4, 1, 0, 0, 0, L_NHWC, F32},
    {"dw x2",    1, 4,  6,  6,  8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, 1, 0, 0, 0, L_PACKED, F32},
    {"dw big",   1, 64, 28, 28, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 64, 1, A_RELU, 0, 0, L_NHWC, F32},
    {"5x5",      1, 3, 10, 10,  4, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, A_GELU, 0, 0, L_PACKED, F32},
    {"5x5 s2",   3, 3, 11,  9,  5, 5, 5, 2, 2, 2, 1, 2, 1, 1, 1, 1, 0, 0, 0, 0, L_NHWC, F32},
    {"7x7 s2",   1, 3, 17, 17,  8, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, A_RELU, 0, 0, L_PACKED, F32},
    {"7x7",      1, 2,  9,  9,  3, 7, 7, 1, 1, 3, 3, 3, 3, 1, 1, 1, 0, 0, 0, 0, L_NHWC, F32},
    {"1x7",      1, 3,  5,  9,  4, 1, 7, 1, 1, 0, 0, 3, 3, 1, 1, 1, 1, 0, 0, 0, L_PACKED, F32},
    {"pad>=k/2", 1, 2,  5,  5,  3, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, L_PACKED, F32},
    {"pad>k",    1, 2,  5,  6,  2, 3, 3, 1, 1, 3, 0, 0, 3, 1, 1, 1, 1, 0, 0, 0, L_NHWC, F32},
    {"tiny 1x1 img", 1, 3, 1, 1, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, L_PACKED, F32},
    {"tiny 2x3 img", 3, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, L_NHWC, F32},
    {"tiny 2x3 1x1", 1, 4, 2, 3, 5, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, L_PACKED, F32},
    {"3x3 padded", 2, 3, 6, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, L_PADDED, F32},
    {"1x1 padded", 1, 4, 5, 6, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, L_PADDED, F32},
    {"3x3 big",  1, 32, 28, 28, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_RELU, 0, 0, L_PACKED, F32},
    {"3x3 big",  3, 16, 15, 17, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, L_NHWC, F32},
    {"3x3 resnet", 2, 64, 28, 28, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_RELU, 0, 0, L_NHWC, F32},
    {"1x1 resnet", 2, 128, 14, 14, 256, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, L_PACKED, F32},
    {"3x3",      1, 3,  6,  6,  4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, A_RELU, 0, 0, L_PACKED, F64},
    {"5x5 s2 g2", 3, 4, 9, 8, 6, 5, 5, 2, 2, 2, 1, 1, 2, 1, 1, 2, 1, 0, 0, 0, L_NHWC, F64},
    {"dw 3x3",   1, 6,  7,  7,  6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6, 0, 0, 0, 0, L_PACKED, F64},
};

static void conv_cases(void) {
  for (size_t i = 0; i < sizeof conv_specs / sizeof conv_specs[0]; i++) conv_case(&conv_specs[i]);
  /* Every activation as the fused epilogue. */
  static const struct { adnn_activation_kind k; double a, b; } acts[] = {
      {ADNN_ACTIVATION_IDENTITY, 0, 0}, {ADNN_ACTIVATION_LEAKY_RELU, 0.1, 0},
      {ADNN_ACTIVATION_ELU, 1.0, 0},    {ADNN_ACTIVATION_CLAMP, -0.5, 0.75},
      {ADNN_ACTIVATION_SIGMOID, 0, 0},  {ADNN_ACTIVATION_TANH, 0, 0},
      {ADNN_ACTIVATION_GELU_TANH, 0, 0}, {ADNN_ACTIVATION_SILU, 0, 0},
      {ADNN_ACTIVATION_SOFTPLUS, 0, 0}, {ADNN_ACTIVATION_HARDSWISH, 0, 0}};
  for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
    conv_spec s = {"3x3 epilogue", 1, 4, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                   acts[i].k, acts[i].a, acts[i].b, (int)(i % 2 ? L_NHWC : L_PACKED), F32};
    conv_case(&s);
  }
}

/* ------------------------------------------------------------------------ */
/* pool2d cases                                                              */
/* ------------------------------------------------------------------------ */

typedef struct pool_spec {
  const char *name;
  adnn_pool_kind kind;
  int64_t n, c, h, w, kh, kw, sh, sw, pt, pb, pl, pr;
  int ceil;
  int layout;
  adnn_dtype dt;
  int specials; /* NaN and -inf sprinkled in (max pooling: NaN wins) */
} pool_spec;

static const char *const pool_kind_names[] = {"max", "avg_include", "avg_exclude"};

static void pool_case(const pool_spec *s) {
  cf_case c;
  case_begin(&c, OP_POOL, s->dt, "%s %s n%lld c%lld %lldx%lld k%lldx%lld s%lld,%lld p%lld,%lld,%lld,%lld%s%s%s",
             pool_kind_names[s->kind], s->name, (long long)s->n, (long long)s->c,
             (long long)s->h, (long long)s->w, (long long)s->kh, (long long)s->kw,
             (long long)s->sh, (long long)s->sw, (long long)s->pt, (long long)s->pb,
             (long long)s->pl, (long long)s->pr, s->ceil ? " ceil" : "",
             s->layout == L_NHWC ? " nhwc" : (s->layout == L_PADDED ? " padded" : " nchw"),
             s->specials ? " nan" : "");
  adnn_pool2d_desc *d = &c.d.pool;
  adnn_pool2d_desc_init(d);
  d->kind = s->kind;
  d->x = tdesc4(s->dt, s->n, s->c, s->h, s->w, s->layout);
  d->kernel_h = s->kh;
  d->kernel_w = s->kw;
  d->stride_h = s->sh;
  d->stride_w = s->sw;
  d->pad_top = s->pt;
  d->pad_bottom = s->pb;
  d->pad_left = s->pl;
  d->pad_right = s->pr;
  d->ceil_mode = s->ceil;
  int64_t yd[4];
  if (adnn_pool2d_output_dims(d, yd) != ADNN_STATUS_SUCCESS) {
    ok(0, "pool2d case %s: output dims (%s)", c.name, adnn_last_error());
    return;
  }
  d->y = tdesc4(s->dt, yd[0], yd[1], yd[2], yd[3], s->layout);
  tap_rng r = tap_rng_seed(seed_of(c.name));
  buf_init(&c.in[0], &d->x);
  fill_mixed(&c.in[0], &r);
  if (s->specials) {
    int64_t n = adnn_ref_count(&d->x);
    for (int64_t i = 3; i < n; i += 17) set_elem(&c.in[0], i, NAN);
    for (int64_t i = 7; i < n; i += 11) set_elem(&c.in[0], i, -INFINITY);
    for (int64_t i = 5; i < n; i += 23) set_elem(&c.in[0], i, INFINITY);
  }
  c.n_in = 1;
  buf_init(&c.out, &d->y);
  run_case(&c);
}

#define PMAX ADNN_POOL_MAX
#define PINC ADNN_POOL_AVG_INCLUDE_PAD
#define PEXC ADNN_POOL_AVG_EXCLUDE_PAD

static const pool_spec pool_specs[] = {
    /* name kind n c h w kh kw sh sw pt pb pl pr ceil layout dt specials */
    {"2x2", PMAX, 1, 3, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, 0, L_PACKED, F32, 0},
    {"2x2 odd", PMAX, 3, 4, 7, 9, 2, 2, 2, 2, 0, 0, 0, 0, 0, L_NHWC, F32, 0},
    {"3x3 s2", PMAX, 1, 4, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 0, L_PACKED, F32, 0},
    {"3x3 s2", PMAX, 3, 5, 10, 11, 3, 3, 2, 2, 1, 1, 1, 1, 1, L_NHWC, F32, 0},
    {"3x3 s2 both edges", PMAX, 1, 3, 8, 10, 3, 3, 2, 2, 0, 0, 0, 0, 1, L_PACKED, F32, 0},
    {"drop last", PMAX, 1, 2, 5, 5, 2, 2, 2, 2, 1, 1, 1, 1, 1, L_PACKED, F32, 0},
    {"asym", PMAX, 1, 3, 7, 8, 3, 3, 2, 2, 1, 0, 0, 1, 1, L_PACKED, F32, 0},
    {"5x5 s3", PMAX, 1, 2, 11, 13, 5, 5, 3, 3, 2, 1, 2, 0, 1, L_PACKED, F32, 0},
    {"nan", PMAX, 1, 3, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 0, L_PACKED, F32, 1},
    {"tiny 1x1 img", PMAX, 1, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, L_PACKED, F32, 0},
    {"tiny 2x3 img", PMAX, 3, 2, 2, 3, 2, 2, 2, 2, 1, 0, 0, 1, 1, L_NHWC, F32, 0},
    {"padded", PMAX, 2, 3, 7, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, L_PADDED, F32, 0},
    {"3x3 s1", PINC, 1, 3, 6, 7, 3, 3, 1, 1, 1, 1, 1, 1, 0, L_PACKED, F32, 0},
    {"3x3 s2 both edges", PINC, 1, 3, 8, 10, 3, 3, 2, 2, 0, 0, 0, 0, 1, L_PACKED, F32, 0},
    {"asym", PINC, 1, 3, 7, 8, 3, 3, 2, 2, 1, 0, 0, 1, 1, L_PACKED, F32, 0},
    {"asym", PINC, 3, 4, 9, 7, 3, 3, 2, 2, 0, 1, 1, 0, 1, L_NHWC, F32, 0},
    {"drop last", PINC, 1, 2, 5, 5, 2, 2, 2, 2, 1, 1, 1, 1, 1, L_PACKED, F32, 0},
    {"5x5 s3", PINC, 1, 2, 11, 13, 5, 5, 3, 3, 2, 1, 2, 0, 1, L_NHWC, F32, 0},
    {"global 7x7", PINC, 3, 8, 7, 7, 7, 7, 1, 1, 0, 0, 0, 0, 0, L_PACKED, F32, 0},
    {"tiny 2x3 img", PINC, 1, 2, 2, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, L_PACKED, F32, 0},
    {"3x3 s1", PEXC, 1, 3, 6, 7, 3, 3, 1, 1, 1, 1, 1, 1, 0, L_NHWC, F32, 0},
    {"3x3 s2 both edges", PEXC, 1, 3, 8, 10, 3, 3, 2, 2, 0, 0, 0, 0, 1, L_PACKED, F32, 0},
    {"asym", PEXC, 1, 3, 7, 8, 3, 3, 2, 2, 1, 0, 0, 1, 1, L_PACKED, F32, 0},
    {"asym", PEXC, 3, 4, 9, 7, 3, 3, 2, 2, 0, 1, 1, 0, 1, L_NHWC, F32, 0},
    {"drop last", PEXC, 1, 2, 5, 5, 2, 2, 2, 2, 1, 1, 1, 1, 1, L_PACKED, F32, 0},
    {"5x5 s3", PEXC, 1, 2, 11, 13, 5, 5, 3, 3, 2, 1, 2, 0, 1, L_PACKED, F32, 0},
    {"padded", PEXC, 2, 3, 7, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, L_PADDED, F32, 0},
    {"big", PMAX, 2, 32, 56, 56, 3, 3, 2, 2, 1, 1, 1, 1, 0, L_NHWC, F32, 0},
    {"big", PEXC, 2, 32, 56, 56, 3, 3, 2, 2, 1, 1, 1, 1, 1, L_PACKED, F32, 0},
    {"3x3 s2", PMAX, 1, 3, 7, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, L_PACKED, F64, 0},
    {"asym", PINC, 1, 3, 7, 8, 3, 3, 2, 2, 1, 0, 0, 1, 1, L_NHWC, F64, 0},
    {"asym", PEXC, 1, 3, 7, 8, 3, 3, 2, 2, 1, 0, 0, 1, 1, L_PACKED, F64, 0},
};

/* ------------------------------------------------------------------------ */
/* activation cases                                                          */
/* ------------------------------------------------------------------------ */


/* Values that exercise every branch and the edges: near 0, the hardswish and
 * clamp knees, large positive and negative, and non-finite values. */
static const double act_specials[] = {
    0.0, -0.0, 1e-7, -1e-7, 1e-3, -1e-3, 0.25, -0.25, 0.5, -0.5, 1.0, -1.0, 2.9, -2.9,
    3.0, -3.0, 3.1, -3.1, 6.0, -6.0, 6.5, 10.0, -10.0, 15.0, -15.0, 20.0, -20.0, 30.0,
    -30.0, 50.0, -50.0, 88.0, -88.0, 100.0, -100.0, NAN, INFINITY, -INFINITY};

static void act_case(adnn_activation_kind k, double alpha, double beta, int rank,
                     const int64_t *dims, int layout, adnn_dtype dt, int inplace, double scale,
                     const char *tag) {
  cf_case c;
  case_begin(&c, OP_ACT, dt, "%s(%g,%g) %s", act_names[k], alpha, beta, tag);
  adnn_activation_desc *d = &c.d.act;
  adnn_activation_desc_init(d);
  d->activation.kind = k;
  d->activation.alpha = alpha;
  d->activation.beta = beta;
  d->x = tdesc(dt, rank, dims, layout);
  d->y = inplace ? d->x : tdesc(dt, rank, dims, L_PACKED);
  tap_rng r = tap_rng_seed(seed_of(c.name));
  buf_init(&c.in[0], &d->x);
  fill_uniform(&c.in[0], &r, -scale, scale);
  int64_t n = adnn_ref_count(&d->x);
  const int64_t ns = (int64_t)(sizeof act_specials / sizeof act_specials[0]);
  for (int64_t i = 0; i < n && i < ns; i++) set_elem(&c.in[0], i, act_specials[i]);
  c.n_in = 1;
  c.inplace = inplace ? 0 : -1;
  buf_init(&c.out, &d->y);
  run_case(&c);
}

static void act_cases(void) {
  static const struct { adnn_activation_kind k; double a, b; } acts[] = {
      {ADNN_ACTIVATION_IDENTITY, 0, 0},  {ADNN_ACTIVATION_RELU, 0, 0},
      {ADNN_ACTIVATION_LEAKY_RELU, 0.1, 0}, {ADNN_ACTIVATION_LEAKY_RELU, 2.5, 0},
      {ADNN_ACTIVATION_ELU, 1.0, 0},     {ADNN_ACTIVATION_ELU, 0.3, 0},
      {ADNN_ACTIVATION_CLAMP, 0, 6},     {ADNN_ACTIVATION_CLAMP, -1.5, 2.5},
      {ADNN_ACTIVATION_SIGMOID, 0, 0},   {ADNN_ACTIVATION_TANH, 0, 0},
      {ADNN_ACTIVATION_GELU, 0, 0},      {ADNN_ACTIVATION_GELU_TANH, 0, 0},
      {ADNN_ACTIVATION_SILU, 0, 0},      {ADNN_ACTIVATION_SOFTPLUS, 0, 0},
      {ADNN_ACTIVATION_HARDSWISH, 0, 0}};
  const int64_t d2[2] = {7, 33}, d4[4] = {2, 3, 5, 7}, d1[1] = {100003}, d5[5] = {2, 3, 2, 4, 3};
  for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
    /* specials + values in [-8, 8): every branch near the knees */
    act_case(acts[i].k, acts[i].a, acts[i].b, 2, d2, L_PACKED, F32, 0, 8.0, "[7,33] specials");
    /* wide range: large positive and negative */
    act_case(acts[i].k, acts[i].a, acts[i].b, 4, d4, L_PADDED, F32, 0, 120.0, "[2,3,5,7] wide padded");
  }
  for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
    act_case(acts[i].k, acts[i].a, acts[i].b, 1, d1, L_PACKED, F32, i % 2, 4.0,
             i % 2 ? "[100003] in-place" : "[100003]");
  act_case(ADNN_ACTIVATION_RELU, 0, 0, 0, NULL, L_PACKED, F32, 0, 1.0, "scalar");
  act_case(ADNN_ACTIVATION_GELU, 0, 0, 5, d5, L_PADDED, F32, 1, 3.0, "[2,3,2,4,3] padded in-place");
  act_case(ADNN_ACTIVATION_SIGMOID, 0, 0, 2, d2, L_PACKED, F64, 0, 40.0, "[7,33] specials");
  act_case(ADNN_ACTIVATION_GELU, 0, 0, 2, d2, L_PACKED, F64, 0, 8.0, "[7,33] specials");
  act_case(ADNN_ACTIVATION_SOFTPLUS, 0, 0, 2, d2, L_PACKED, F64, 1, 40.0, "[7,33] specials in-place");
  act_case(ADNN_ACTIVATION_HARDSWISH, 0, 0, 4, d4, L_PADDED, F64, 0, 8.0, "[2,3,5,7] padded");
}

/* ------------------------------------------------------------------------ */
/* softmax cases                                                             */
/* ------------------------------------------------------------------------ */

static void softmax_case(int rank, const int64_t *dims, int axis, int log, int layout,
                         adnn_dtype dt, int inplace, double scale, int specials) {
  cf_case c;
  char shape[64] = "[";
  for (int i = 0; i < rank; i++)
    snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", i ? "," : "",
             (long long)dims[i]);
  strncat(shape, "]", sizeof shape - strlen(shape) - 1);
  case_begin(&c, OP_SOFTMAX, dt, "%s %s axis %d x%g%s%s%s", log ? "log_softmax" : "softmax",
             shape, axis, scale, layout == L_PADDED ? " padded" : "", inplace ? " in-place" : "",
             specials ? " nan/inf" : "");
  adnn_softmax_desc *d = &c.d.sm;
  adnn_softmax_desc_init(d);
  d->axis = axis;
  d->log = log;
  d->x = tdesc(dt, rank, dims, layout);
  d->y = inplace ? d->x : tdesc(dt, rank, dims, L_PACKED);
  tap_rng r = tap_rng_seed(seed_of(c.name));
  buf_init(&c.in[0], &d->x);
  fill_uniform(&c.in[0], &r, -scale, scale);
  if (specials) {
    /* rank 2; slices along `axis`: slice 0 has a NaN, slice 1 a +inf, slice 2
     * two -inf, slice 3 only -inf, slice 4 a -inf and a large value. */
    const int ax = axis < 0 ? axis + rank : axis;
    const int64_t L = dims[ax], other = dims[1 - ax];
#define AT(slice, j) (ax == 1 ? (slice) * L + (j) : (j) * other + (slice))
    set_elem(&c.in[0], AT(0, 1), NAN);
    set_elem(&c.in[0], AT(1, 2), INFINITY);
    set_elem(&c.in[0], AT(2, 0), -INFINITY);
    set_elem(&c.in[0], AT(2, 3), -INFINITY);
    for (int64_t j = 0; j < L; j++) set_elem(&c.in[0], AT(3, j), -INFINITY);
    set_elem(&c.in[0], AT(4, 1), -INFINITY);
    set_elem(&c.in[0], AT(4, 2), 80.0);
#undef AT
  }
  c.n_in = 1;
  c.inplace = inplace ? 0 : -1;
  buf_init(&c.out, &d->y);
  run_case(&c);
}

static void softmax_cases(void) {
  const int64_t a[2] = {4, 10}, b[3] = {6, 5, 7}, nchw[4] = {2, 3, 4, 5}, wide[2] = {3, 1000},
                one[1] = {1}, sp[2] = {5, 6}, spt[2] = {6, 5}, pd[3] = {4, 9, 3}, big[2] = {64, 4099};
  for (int log = 0; log <= 1; log++) {
    softmax_case(2, a, -1, log, L_PACKED, F32, 0, 3.0, 0);
    softmax_case(3, b, 0, log, L_PACKED, F32, 0, 3.0, 0);
    softmax_case(3, b, 1, log, L_PACKED, F32, 0, 3.0, 0);
    softmax_case(3, b, 2, log, L_PACKED, F32, 0, 3.0, 0);
    softmax_case(3, b, -2, log, L_PACKED, F32, 0, 3.0, 0);
    softmax_case(4, nchw, 1, log, L_PADDED, F32, 0, 2.0, 0);
    softmax_case(2, wide, 1, log, L_PACKED, F32, 0, 10.0, 0);
    softmax_case(2, wide, 0, log, L_PACKED, F32, 0, 100.0, 0);
    softmax_case(1, one, 0, log, L_PACKED, F32, 0, 1.0, 0);
    softmax_case(2, sp, 1, log, L_PACKED, F32, 0, 3.0, 1);
    softmax_case(2, spt, 0, log, L_PACKED, F32, 0, 3.0, 1);
    softmax_case(2, a, -1, log, L_PACKED, F32, 1, 5.0, 0);
    softmax_case(3, pd, 1, log, L_PADDED, F32, 1, 3.0, 0);
    softmax_case(2, big, -1, log, L_PACKED, F32, 0, 5.0, 0);
    softmax_case(3, b, 1, log, L_PACKED, F64, 0, 3.0, 0);
    softmax_case(2, sp, 1, log, L_PACKED, F64, 0, 3.0, 1);
  }
}

/* ------------------------------------------------------------------------ */
/* batch normalization cases                                                 */
/* ------------------------------------------------------------------------ */

static void bn_case(int rank, const int64_t *dims, int layout, adnn_dtype dt,
                    adnn_activation_kind act, double alpha, double beta, int inplace,
                    double eps, const char *tag) {
  cf_case c;
  case_begin(&c, OP_BN, dt, "%s act %d eps %g%s", tag, (int)act, eps, inplace ? " in-place" : "");
  adnn_batchnorm_desc *d = &c.d.bn;
  adnn_batchnorm_desc_init(d);
  d->epsilon = eps;
  d->activation.kind = act;
  d->activation.alpha = alpha;
  d->activation.beta = beta;
  d->x = tdesc(dt, rank, dims, layout);
  d->y = inplace ? d->x : tdesc(dt, rank, dims, layout == L_NHWC ? L_NHWC : L_PACKED);
  tap_rng r = tap_rng_seed(seed_of(c.name));
  buf_init(&c.in[0], &d->x);
  fill_mixed(&c.in[0], &r);
  adnn_tensor_desc pv = tdesc1(dt, dims[1]);
  for (int i = 1; i < 5; i++) buf_init(&c.in[i], &pv);
  fill_uniform(&c.in[1], &r, -2.0, 2.0);  /* scale */
  fill_uniform(&c.in[2], &r, -1.0, 1.0);  /* shift */
  fill_uniform(&c.in[3], &r, -0.5, 0.5);  /* mean */
  fill_uniform(&c.in[4], &r, 0.05, 3.0);  /* var > 0 */
  c.n_in = 5;
  c.inplace = inplace ? 0 : -1;
  buf_init(&c.out, &d->y);
  run_case(&c);
}

static void bn_cases(void) {
  const int64_t nchw[4] = {3, 8, 5, 7}, r2[2] = {9, 16}, r3[3] = {2, 5, 11}, r5[5] = {2, 3, 2, 3, 4},
                big[4] = {2, 64, 28, 28}, one[4] = {1, 3, 1, 1};
  bn_case(4, nchw, L_PACKED, F32, ADNN_ACTIVATION_IDENTITY, 0, 0, 0, 1e-5, "[3,8,5,7] nchw");
  bn_case(4, nchw, L_NHWC, F32, ADNN_ACTIVATION_RELU, 0, 0, 0, 1e-5, "[3,8,5,7] nhwc");
  bn_case(4, nchw, L_PACKED, F32, ADNN_ACTIVATION_CLAMP, 0, 6, 1, 1e-3, "[3,8,5,7] nchw");
  bn_case(4, nchw, L_NHWC, F32, ADNN_ACTIVATION_SILU, 0, 0, 1, 1e-5, "[3,8,5,7] nhwc");
  bn_case(4, nchw, L_PADDED, F32, ADNN_ACTIVATION_LEAKY_RELU, 0.2, 0, 0, 1e-5, "[3,8,5,7] padded");
  bn_case(2, r2, L_PACKED, F32, ADNN_ACTIVATION_IDENTITY, 0, 0, 0, 0.0, "[9,16]");
  bn_case(3, r3, L_PACKED, F32, ADNN_ACTIVATION_TANH, 0, 0, 0, 1e-5, "[2,5,11]");
  bn_case(5, r5, L_PACKED, F32, ADNN_ACTIVATION_IDENTITY, 0, 0, 0, 1e-5, "[2,3,2,3,4]");
  bn_case(4, one, L_PACKED, F32, ADNN_ACTIVATION_RELU, 0, 0, 0, 1e-5, "[1,3,1,1]");
  bn_case(4, big, L_NHWC, F32, ADNN_ACTIVATION_RELU, 0, 0, 0, 1e-5, "[2,64,28,28] nhwc");
  bn_case(4, big, L_PACKED, F32, ADNN_ACTIVATION_IDENTITY, 0, 0, 0, 1e-5, "[2,64,28,28] nchw");
  bn_case(4, nchw, L_PACKED, F64, ADNN_ACTIVATION_RELU, 0, 0, 0, 1e-5, "[3,8,5,7] nchw");
  bn_case(4, nchw, L_NHWC, F64, ADNN_ACTIVATION_IDENTITY, 0, 0, 0, 1e-5, "[3,8,5,7] nhwc");
}

/* ------------------------------------------------------------------------ */
/* layer / RMS normalization cases                                           */
/* ------------------------------------------------------------------------ */

static void norm_case(adnn_norm_kind kind, int rank, const int64_t *dims, int norm_dims, int gain,
                      int bias, int layout, adnn_dtype dt, int inplace, double offset,
                      double eps, const char *tag) {
  cf_case c;
  case_begin(&c, OP_NORM, dt, "%s %s over %d%s%s offset %g eps %g%s%s",
             kind == ADNN_NORM_LAYER ? "layer" : "rms", tag, norm_dims, gain ? " gain" : "",
             bias ? " bias" : "", offset, eps, layout == L_PADDED ? " padded" : "",
             inplace ? " in-place" : "");
  adnn_norm_desc *d = &c.d.norm;
  adnn_norm_desc_init(d);
  d->kind = kind;
  d->norm_dims = norm_dims;
  d->epsilon = eps;
  d->has_gain = gain;
  d->has_bias = bias;
  d->x = tdesc(dt, rank, dims, layout);
  d->y = inplace ? d->x : tdesc(dt, rank, dims, L_PACKED);
  tap_rng r = tap_rng_seed(seed_of(c.name));
  buf_init(&c.in[0], &d->x);
  fill_mixed(&c.in[0], &r);
  for (int64_t i = 0; i < c.in[0].span; i++)
    if (c.in[0].member[i]) c.in[0].v[i] = round_to(dt, c.in[0].v[i] + offset);
  int64_t D = 1;
  for (int i = rank - norm_dims; i < rank; i++) D *= dims[i];
  adnn_tensor_desc pv = tdesc1(dt, D);
  c.n_in = 1;
  if (gain) {
    buf_init(&c.in[c.n_in], &pv);
    fill_uniform(&c.in[c.n_in++], &r, 0.5, 1.5);
  }
  if (bias) {
    buf_init(&c.in[c.n_in], &pv);
    fill_uniform(&c.in[c.n_in++], &r, -1.0, 1.0);
  }
  c.inplace = inplace ? 0 : -1;
  buf_init(&c.out, &d->y);
  run_case(&c);
}

static void norm_cases(void) {
  const int64_t d1[2] = {4, 1}, odd[3] = {3, 5, 7}, big[2] = {3, 4099}, r4[4] = {2, 3, 4, 5},
                wide[2] = {16, 768};
  for (int k = ADNN_NORM_LAYER; k <= ADNN_NORM_RMS; k++) {
    adnn_norm_kind kind = (adnn_norm_kind)k;
    norm_case(kind, 2, d1, 1, 0, 0, L_PACKED, F32, 0, 0.0, 1e-5, "[4,1] D=1");
    norm_case(kind, 2, d1, 1, 1, 1, L_PACKED, F32, 0, 0.0, 1e-5, "[4,1] D=1");
    norm_case(kind, 3, odd, 1, 0, 0, L_PACKED, F32, 0, 0.0, 1e-5, "[3,5,7] D=7");
    norm_case(kind, 3, odd, 1, 1, 0, L_PACKED, F32, 0, 0.0, 1e-5, "[3,5,7] D=7");
    norm_case(kind, 3, odd, 1, 0, 1, L_PACKED, F32, 0, 0.0, 1e-5, "[3,5,7] D=7");
    norm_case(kind, 3, odd, 2, 1, 1, L_PADDED, F32, 0, 0.0, 1e-5, "[3,5,7] D=35");
    norm_case(kind, 3, odd, 3, 1, 1, L_PACKED, F32, 1, 0.0, 1e-6, "[3,5,7] D=105");
    norm_case(kind, 2, big, 1, 1, 1, L_PACKED, F32, 0, 0.0, 1e-5, "[3,4099] D=4099");
    norm_case(kind, 2, big, 1, 0, 0, L_PACKED, F32, 1, 8.0, 1e-5, "[3,4099] D=4099");
    norm_case(kind, 4, r4, 3, 1, 1, L_PACKED, F32, 0, 0.0, 1e-5, "[2,3,4,5] D=60");
    norm_case(kind, 2, wide, 1, 1, 1, L_PACKED, F32, 0, 2.0, 1e-5, "[16,768] D=768");
    norm_case(kind, 3, odd, 1, 1, 1, L_PACKED, F64, 0, 0.0, 1e-5, "[3,5,7] D=7");
    norm_case(kind, 2, big, 1, 1, 0, L_PACKED, F64, 0, 1.0, 1e-5, "[3,4099] D=4099");
  }
}

/* ------------------------------------------------------------------------ */
/* binary cases                                                              */
/* ------------------------------------------------------------------------ */

static const char *const bin_names[] = {"add", "sub", "mul", "div", "max", "min"};

typedef struct bin_operand {
  int rank;
  int64_t dims[ADNN_MAX_RANK];
  int layout;
  const int64_t *strides; /* explicit strides (overrides layout) */
} bin_operand;

static adnn_tensor_desc operand_desc(const bin_operand *o, adnn_dtype dt) {
  adnn_tensor_desc t = tdesc(dt, o->rank, o->dims, o->layout);
  if (o->strides)
    for (int i = 0; i < o->rank; i++) t.strides[i] = o->strides[i];
  return t;
}

static void fmt_shape(char *buf_, size_t size, const adnn_tensor_desc *t) {
  snprintf(buf_, size, "[");
  for (int i = 0; i < t->rank; i++)
    snprintf(buf_ + strlen(buf_), size - strlen(buf_), "%s%lld", i ? "," : "", (long long)t->dims[i]);
  snprintf(buf_ + strlen(buf_), size - strlen(buf_), "]");
}

/* inplace: 0 none, 1 y == a, 2 y == b. */
static void bin_case(adnn_binary_op op, bin_operand a, bin_operand b, bin_operand y, double alpha,
                     double beta, adnn_dtype dt, int inplace, int specials, const char *tag) {
  cf_case c;
  adnn_tensor_desc ad = operand_desc(&a, dt), bd = operand_desc(&b, dt), yd = operand_desc(&y, dt);
  char sa[64], sb[64];
  fmt_shape(sa, sizeof sa, &ad);
  fmt_shape(sb, sizeof sb, &bd);
  case_begin(&c, OP_BINARY, dt, "%s %s %s %s alpha %g beta %g%s%s", bin_names[op], tag, sa, sb,
             alpha, beta, inplace == 1 ? " y=a" : (inplace == 2 ? " y=b" : ""),
             specials ? " nan/inf" : "");
  adnn_binary_desc *d = &c.d.bin;
  adnn_binary_desc_init(d);
  d->op = op;
  d->alpha = alpha;
  d->beta = beta;
  d->a = ad;
  d->b = bd;
  d->y = inplace == 1 ? ad : (inplace == 2 ? bd : yd);
  tap_rng r = tap_rng_seed(seed_of(c.name));
  buf_init(&c.in[0], &d->a);
  buf_init(&c.in[1], &d->b);
  fill_mixed(&c.in[0], &r);
  if (op == ADNN_BINARY_DIV) { /* denominators away from 0: +-[0.25, 4) */
    for (int64_t i = 0; i < c.in[1].span; i++)
      if (c.in[1].member[i]) {
        double m = tap_rng_uniform(&r, 0.25, 4.0);
        c.in[1].v[i] = round_to(dt, tap_rng_uniform(&r, 0, 1) < 0.5 ? -m : m);
      }
  } else {
    fill_mixed(&c.in[1], &r);
  }
  if (specials) {
    int64_t na = adnn_ref_count(&d->a), nb = adnn_ref_count(&d->b);
    for (int64_t i = 0; i < na; i += 7) set_elem(&c.in[0], i, NAN);
    for (int64_t i = 2; i < na; i += 9) set_elem(&c.in[0], i, INFINITY);
    for (int64_t i = 1; i < nb; i += 5) set_elem(&c.in[1], i, NAN);
    for (int64_t i = 3; i < nb; i += 8) set_elem(&c.in[1], i, -INFINITY);
  }
  c.n_in = 2;
  c.inplace = inplace == 1 ? 0 : (inplace == 2 ? 1 : -1);
  buf_init(&c.out, &d->y);
  run_case(&c);
}

#define OPND(...) ((bin_operand){.rank = (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), .dims = {__VA_ARGS__}})
static const bin_operand scalar0 = {0, {0}, L_PACKED, NULL};

static bin_operand with_layout(bin_operand o, int layout) {
  o.layout = layout;
  return o;
}

static void bin_cases(void) {
  static const int64_t bcast_strides[2] = {0, 1}; /* a [3,4] that repeats one row */
  for (int op = ADNN_BINARY_ADD; op <= ADNN_BINARY_MIN; op++) {
    adnn_binary_op o = (adnn_binary_op)op;
    bin_case(o, OPND(3, 4, 5), OPND(3, 4, 5), OPND(3, 4, 5), 1, 1, F32, 0, 0, "equal");
    bin_case(o, OPND(3, 4), scalar0, OPND(3, 4), 1, 1, F32, 0, 0, "rank-0");
    bin_case(o, OPND(3, 4), OPND(1), OPND(3, 4), 1, 1, F32, 0, 0, "[1]");
    bin_case(o, OPND(3, 4), OPND(4), OPND(3, 4), 1, 1, F32, 0, 0, "row");
    bin_case(o, OPND(3, 4), OPND(3, 1), OPND(3, 4), 1, 1, F32, 0, 0, "column");
    bin_case(o, OPND(4), OPND(3, 4), OPND(3, 4), 1, 1, F32, 0, 0, "a row");
    bin_case(o, OPND(2, 5, 3, 4), OPND(1, 5, 1, 1), OPND(2, 5, 3, 4), 1, 1, F32, 0, 0, "bias-add");
    bin_case(o, OPND(3, 1), OPND(1, 4), OPND(3, 4), 1, 1, F32, 0, 0, "both");
    bin_case(o, OPND(5, 1, 6), OPND(4, 1), OPND(5, 4, 6), 1, 1, F32, 0, 0, "both 3d");
    bin_case(o, OPND(6, 7), OPND(6, 7), OPND(6, 7), 0.5, -2.0, F32, 0, 0, "scaled");
    bin_case(o, OPND(6, 7), OPND(7), OPND(6, 7), 1.5, 0.25, F32, 1, 0, "in-place");
    bin_case(o, OPND(1), OPND(6, 7), OPND(6, 7), 1, 1, F32, 2, 0, "in-place");
    bin_case(o, OPND(6, 7), OPND(6, 7), OPND(6, 7), 1, 1, F32, 0, 1, "equal");
    bin_case(o, OPND(6, 7), OPND(7), OPND(6, 7), 1, 1, F32, 0, 1, "row");
  }
  bin_operand a = OPND(3, 4);
  a.strides = bcast_strides;
  bin_case(ADNN_BINARY_SUB, a, OPND(3, 4), OPND(3, 4), 1, 1, F32, 0, 0, "stride-0 a");
  bin_case(ADNN_BINARY_ADD, with_layout(OPND(2, 6, 5, 4), L_NHWC), OPND(1, 6, 1, 1),
           with_layout(OPND(2, 6, 5, 4), L_NHWC), 1, 1, F32, 0, 0, "bias-add nhwc");
  bin_case(ADNN_BINARY_ADD, with_layout(OPND(2, 6, 5, 4), L_NHWC), OPND(6, 1, 1),
           with_layout(OPND(2, 6, 5, 4), L_NHWC), 1, 1, F32, 1, 0, "bias-add nhwc");
  bin_case(ADNN_BINARY_MUL, with_layout(OPND(4, 5, 6), L_PADDED), OPND(5, 1),
           with_layout(OPND(4, 5, 6), L_PADDED), 1, 1, F32, 0, 0, "padded");
  bin_case(ADNN_BINARY_ADD, OPND(2, 1, 2, 1, 3, 1), OPND(2, 1, 4, 1, 2), OPND(2, 2, 2, 4, 3, 2), 1,
           1, F32, 0, 0, "rank-6");
  bin_case(ADNN_BINARY_ADD, OPND(64, 1031), OPND(64, 1031), OPND(64, 1031), 1, 1, F32, 0, 0, "big");
  bin_case(ADNN_BINARY_MUL, OPND(64, 1031), OPND(1031), OPND(64, 1031), 1, 1, F32, 1, 0, "big");
  bin_case(ADNN_BINARY_DIV, OPND(5, 6), OPND(5, 1), OPND(5, 6), 1, 1, F64, 0, 0, "column");
  bin_case(ADNN_BINARY_MAX, OPND(5, 6), OPND(6), OPND(5, 6), 1, 1, F64, 0, 1, "row");
  bin_case(ADNN_BINARY_ADD, OPND(2, 3, 4, 5), OPND(1, 3, 1, 1), OPND(2, 3, 4, 5), 1, -1, F64, 1, 0,
           "bias-add");
}

/* ------------------------------------------------------------------------ */
/* Bad descriptors through the public API                                    */
/* ------------------------------------------------------------------------ */

static void negative_cases(int b) {
  adnn_context *ctx = backends[b];
  const char *bn = backend_names[b];
  adnn_plan *plan = NULL;
  adnn_conv2d_desc cd;
  adnn_conv2d_desc_init(&cd);
  cd.x = tdesc4(F32, 1, 4, 5, 5, L_PACKED);
  cd.w = tdesc4(F32, 6, 4 / 2, 3, 3, L_PACKED);
  cd.groups = 3; /* 4 channels in 3 groups */
  cd.y = tdesc4(F32, 1, 6, 3, 3, L_PACKED);
  is_status(adnn_plan_create_conv2d(ctx, &cd, &plan), ADNN_STATUS_BAD_PARAM,
            "%s conv2d: groups not dividing C is BAD_PARAM", bn);
  contains(adnn_last_error(), "divisible", "%s conv2d: the message says \"divisible\"", bn);
  cd.groups = 2;
  cd.w = tdesc4(F32, 6, 2, 3, 3, L_PACKED);
  cd.y = tdesc4(F32, 1, 6, 5, 5, L_PACKED); /* should be 3x3 */
  is_status(adnn_plan_create_conv2d(ctx, &cd, &plan), ADNN_STATUS_BAD_PARAM,
            "%s conv2d: y of the wrong shape is BAD_PARAM", bn);
  contains(adnn_last_error(), "[1, 6, 3, 3]", "%s conv2d: the message names the right shape", bn);
  cd.y = tdesc4(F32, 1, 6, 3, 3, L_PACKED);
  cd.y.strides[1] = 1; /* channels overlap the rows */
  is_status(adnn_plan_create_conv2d(ctx, &cd, &plan), ADNN_STATUS_BAD_PARAM,
            "%s conv2d: overlapping y strides are BAD_PARAM", bn);
  cd.y = tdesc4(F32, 1, 6, 3, 3, L_PACKED);
  cd.w = tdesc4(F32, 6, 3, 3, 3, L_PACKED); /* 3 != 4/2 channels per group */
  is_status(adnn_plan_create_conv2d(ctx, &cd, &plan), ADNN_STATUS_BAD_PARAM,
            "%s conv2d: filter channels != C/groups is BAD_PARAM", bn);

  adnn_activation_desc ad;
  adnn_activation_desc_init(&ad);
  const int64_t dims[2] = {3, 4}, ostr[2] = {1, 1};
  ad.activation.kind = ADNN_ACTIVATION_RELU;
  ad.x = tdesc(F32, 2, dims, L_PACKED);
  ad.y = ad.x;
  ad.y.strides[0] = ostr[0];
  ad.y.strides[1] = ostr[1];
  is_status(adnn_plan_create_activation(ctx, &ad, &plan), ADNN_STATUS_BAD_PARAM,
            "%s activation: overlapping y strides are BAD_PARAM", bn);

  adnn_pool2d_desc pd;
  adnn_pool2d_desc_init(&pd);
  pd.x = tdesc4(F32, 1, 2, 6, 6, L_PACKED);
  pd.kernel_h = pd.kernel_w = 3;
  pd.pad_top = 2; /* > kernel/2 */
  pd.y = tdesc4(F32, 1, 2, 6, 4, L_PACKED);
  is_status(adnn_plan_create_pool2d(ctx, &pd, &plan), ADNN_STATUS_BAD_PARAM,
            "%s pool2d: padding above kernel/2 is BAD_PARAM", bn);

  adnn_binary_desc bd;
  adnn_binary_desc_init(&bd);
  const int64_t a3[2] = {3, 4}, b3[1] = {3};
  bd.a = tdesc(F32, 2, a3, L_PACKED);
  bd.b = tdesc(F32, 1, b3, L_PACKED);
  bd.y = bd.a;
  is_status(adnn_plan_create_binary(ctx, &bd, &plan), ADNN_STATUS_BAD_PARAM,
            "%s binary: [3,4] and [3] do not broadcast: BAD_PARAM", bn);

  adnn_softmax_desc sd;
  adnn_softmax_desc_init(&sd);
  sd.x = sd.y = tdesc(F32, 2, a3, L_PACKED);
  sd.axis = 2;
  is_status(adnn_plan_create_softmax(ctx, &sd, &plan), ADNN_STATUS_BAD_PARAM,
            "%s softmax: axis out of range is BAD_PARAM", bn);

  /* Wrong number of inputs at execution (needs a plan). */
  ad.y = ad.x;
  adnn_status st = adnn_plan_create_activation(ctx, &ad, &plan);
  if (st == ADNN_STATUS_NOT_SUPPORTED) {
    char why[600];
    snprintf(why, sizeof why, "%s: wrong n_inputs: no activation plan: %s", bn, adnn_last_error());
    tap_skip(why);
    return;
  }
  if (!ok(st == ADNN_STATUS_SUCCESS, "%s activation plan for the n_inputs checks", bn)) return;
  void *x = NULL, *y = NULL;
  adnn_malloc(ctx, 12 * sizeof(float), &x);
  adnn_malloc(ctx, 12 * sizeof(float), &y);
  const void *ins[2] = {x, x};
  is_status(adnn_plan_execute(plan, ins, 2, y), ADNN_STATUS_BAD_PARAM,
            "%s execute: 2 inputs for a 1-input plan is BAD_PARAM", bn);
  is_status(adnn_plan_execute(plan, ins, 0, y), ADNN_STATUS_BAD_PARAM,
            "%s execute: 0 inputs for a 1-input plan is BAD_PARAM", bn);
  is_status(adnn_plan_execute(plan, ins, 1, (char *)x + 4), ADNN_STATUS_BAD_PARAM,
            "%s execute: y partly overlapping x is BAD_PARAM", bn);
  adnn_plan_destroy(plan);
  adnn_free(ctx, x);
  adnn_free(ctx, y);
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracle                                                  */
/* ------------------------------------------------------------------------ */

static int close_to(double a, double b, double tol) {
  if (isnan(b)) return isnan(a);
  if (isinf(b)) return a == b;
  return fabs(a - b) <= tol * (1.0 + fabs(b));
}

static void oracle_selftests(void) {
  /* 1. A 1x1 convolution is a matrix product W[K,C] * X[C, H*W]. */
  {
    enum { C = 5, K = 4, H = 3, W = 6 };
    double x[C * H * W], w[K * C], y[K * H * W], want[K * H * W];
    tap_rng r = tap_rng_seed(11);
    for (int i = 0; i < C * H * W; i++) x[i] = tap_rng_uniform(&r, -1, 1);
    for (int i = 0; i < K * C; i++) w[i] = tap_rng_uniform(&r, -1, 1);
    for (int k = 0; k < K; k++)
      for (int p = 0; p < H * W; p++) {
        double s = 0;
        for (int c = 0; c < C; c++) s += w[k * C + c] * x[c * H * W + p];
        want[k * H * W + p] = s;
      }
    adnn_conv2d_desc d;
    adnn_conv2d_desc_init(&d);
    d.x = tdesc4(F64, 1, C, H, W, L_PACKED);
    d.w = tdesc4(F64, K, C, 1, 1, L_PACKED);
    d.y = tdesc4(F64, 1, K, H, W, L_PACKED);
    adnn_ref_conv2d(&d, x, w, NULL, y);
    int good = 1;
    for (int i = 0; i < K * H * W; i++) good &= close_to(y[i], want[i], 1e-14);
    ok(good, "oracle: a 1x1 conv2d equals the matrix product");
  }
  /* 2. Hand-computed 3x3: x = 1..16 (4x4), w = 1..9, no padding: 348 393 528 573;
   * the centre-tap filter with padding 1 is the identity. */
  {
    double x[16], w[9], y[16];
    for (int i = 0; i < 16; i++) x[i] = i + 1;
    for (int i = 0; i < 9; i++) w[i] = i + 1;
    adnn_conv2d_desc d;
    adnn_conv2d_desc_init(&d);
    d.x = tdesc4(F64, 1, 1, 4, 4, L_PACKED);
    d.w = tdesc4(F64, 1, 1, 3, 3, L_PACKED);
    d.y = tdesc4(F64, 1, 1, 2, 2, L_PACKED);
    adnn_ref_conv2d(&d, x, w, NULL, y);
    ok(y[0] == 348 && y[1] == 393 && y[2] == 528 && y[3] == 573,
       "oracle: hand-computed 3x3 cross-correlation (got %g %g %g %g)", y[0], y[1], y[2], y[3]);
    for (int i = 0; i < 9; i++) w[i] = i == 4;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    d.y = tdesc4(F64, 1, 1, 4, 4, L_PACKED);
    adnn_ref_conv2d(&d, x, w, NULL, y);
    int good = 1;
    for (int i = 0; i < 16; i++) good &= y[i] == x[i];
    ok(good, "oracle: the centre-tap 3x3 filter with padding 1 is the identity");
    /* bias 0.5 and relu after it; stride 2, dilation 2 on a 5x5: taps (0,0),(0,2),... */
    double x5[25], y1[1];
    for (int i = 0; i < 25; i++) x5[i] = i;
    for (int i = 0; i < 9; i++) w[i] = 1;
    double bias = -1000.0;
    d.x = tdesc4(F64, 1, 1, 5, 5, L_PACKED);
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 0;
    d.dilation_h = d.dilation_w = 2;
    d.stride_h = d.stride_w = 2;
    d.has_bias = 1;
    d.bias = tdesc1(F64, 1);
    d.y = tdesc4(F64, 1, 1, 1, 1, L_PACKED);
    adnn_ref_conv2d(&d, x5, w, &bias, y1);
    /* taps at rows/cols 0, 2, 4: sum = 9 * 12 = 108 */
    ok(y1[0] == 108 - 1000, "oracle: dilation 2 taps every other element (got %g)", y1[0]);
    d.activation.kind = ADNN_ACTIVATION_RELU;
    adnn_ref_conv2d(&d, x5, w, &bias, y1);
    ok(y1[0] == 0, "oracle: the fused relu comes after the bias (got %g)", y1[0]);
  }
  /* 3. Pooling by hand: x = 0..24 (5x5), 2x2 stride 2 ceil_mode. */
  {
    double x[25], y[9];
    for (int i = 0; i < 25; i++) x[i] = i;
    adnn_pool2d_desc d;
    adnn_pool2d_desc_init(&d);
    d.x = tdesc4(F64, 1, 1, 5, 5, L_PACKED);
    d.kernel_h = d.kernel_w = d.stride_h = d.stride_w = 2;
    d.ceil_mode = 1;
    d.y = tdesc4(F64, 1, 1, 3, 3, L_PACKED);
    int64_t od[4];
    adnn_pool2d_output_dims(&d, od);
    ok(od[2] == 3 && od[3] == 3, "oracle: ceil_mode 5 -> 3 windows (core says %lldx%lld)",
       (long long)od[2], (long long)od[3]);
    adnn_ref_pool2d(&d, x, y);
    const double want_max[9] = {6, 8, 9, 16, 18, 19, 21, 23, 24};
    int good = 1;
    for (int i = 0; i < 9; i++) good &= y[i] == want_max[i];
    ok(good, "oracle: hand-computed max pool with a partial last window");
    d.kind = ADNN_POOL_AVG_INCLUDE_PAD;
    adnn_ref_pool2d(&d, x, y);
    ok(y[2] == 6.5 && y[8] == 24 && y[0] == 3, "oracle: average of partial windows divides by "
       "the clipped area (got %g %g %g)", y[0], y[2], y[8]);
    /* include vs exclude on a constant image with padding 1 */
    double ones[9], yi[9], ye[9];
    for (int i = 0; i < 9; i++) ones[i] = 2.0;
    d.x = tdesc4(F64, 1, 1, 3, 3, L_PACKED);
    d.kernel_h = d.kernel_w = 3;
    d.stride_h = d.stride_w = 1;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    d.ceil_mode = 0;
    d.y = tdesc4(F64, 1, 1, 3, 3, L_PACKED);
    d.kind = ADNN_POOL_AVG_EXCLUDE_PAD;
    adnn_ref_pool2d(&d, ones, ye);
    d.kind = ADNN_POOL_AVG_INCLUDE_PAD;
    adnn_ref_pool2d(&d, ones, yi);
    good = 1;
    for (int i = 0; i < 9; i++) good &= ye[i] == 2.0;
    ok(good, "oracle: exclude-pad average of a constant is the constant");
    ok(close_to(yi[0], 2.0 * 4 / 9, 1e-15) && close_to(yi[1], 2.0 * 6 / 9, 1e-15) && yi[4] == 2.0,
       "oracle: include-pad average counts the padding (got %g %g %g)", yi[0], yi[1], yi[4]);
    double xn[9] = {1, NAN, 3, 4, 5, 6, 7, 8, 9};
    d.kind = ADNN_POOL_MAX;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 0;
    d.kernel_h = d.kernel_w = 2;
    d.y = tdesc4(F64, 1, 1, 2, 2, L_PACKED);
    adnn_ref_pool2d(&d, xn, y);
    ok(isnan(y[0]) && isnan(y[1]) && y[2] == 8 && y[3] == 9, "oracle: max pooling: NaN wins");
  }
  /* 4. Softmax: sums to 1 along the axis; exp(log_softmax) too; negative axis. */
  {
    enum { A = 3, B = 5, Cc = 4 };
    double x[A * B * Cc], y[A * B * Cc], yl[A * B * Cc], yn[A * B * Cc];
    tap_rng r = tap_rng_seed(5);
    for (int i = 0; i < A * B * Cc; i++) x[i] = tap_rng_uniform(&r, -20, 20);
    const int64_t dims[3] = {A, B, Cc};
    adnn_softmax_desc d;
    adnn_softmax_desc_init(&d);
    d.x = d.y = tdesc(F64, 3, dims, L_PACKED);
    d.axis = 1;
    adnn_ref_softmax(&d, x, y);
    d.log = 1;
    adnn_ref_softmax(&d, x, yl);
    d.axis = -2;
    adnn_ref_softmax(&d, x, yn);
    int good = 1, good_log = 1, good_neg = 1;
    for (int a = 0; a < A; a++)
      for (int c = 0; c < Cc; c++) {
        double s = 0, sl = 0;
        for (int b = 0; b < B; b++) {
          s += y[(a * B + b) * Cc + c];
          sl += exp(yl[(a * B + b) * Cc + c]);
        }
        good &= close_to(s, 1.0, 1e-14);
        good_log &= close_to(sl, 1.0, 1e-14);
      }
    for (int i = 0; i < A * B * Cc; i++) good_neg &= yn[i] == yl[i];
    ok(good, "oracle: softmax sums to 1 along the middle axis");
    ok(good_log, "oracle: exp(log_softmax) sums to 1");
    ok(good_neg, "oracle: axis -2 is axis 1");
    double s4[4] = {1000, 1000, -INFINITY, 1000}, o4[4];
    d.x = d.y = tdesc1(F64, 4);
    d.axis = 0;
    d.log = 0;
    adnn_ref_softmax(&d, s4, o4);
    ok(close_to(o4[0], 1.0 / 3, 1e-15) && o4[2] == 0.0, "oracle: softmax is stable for 1000 and "
       "-inf gives 0");
    double allinf[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    adnn_ref_softmax(&d, allinf, o4);
    ok(isnan(o4[0]) && isnan(o4[3]), "oracle: an all -inf slice gives NaN");
    double pinf[4] = {1, INFINITY, 2, 3};
    adnn_ref_softmax(&d, pinf, o4);
    ok(isnan(o4[0]) && isnan(o4[1]), "oracle: a slice with +inf gives NaN");
  }
  /* 5. Activation values. */
  {
    struct { adnn_activation_kind k; double a, b, x, want; } v[] = {
        {ADNN_ACTIVATION_RELU, 0, 0, -1, 0},
        {ADNN_ACTIVATION_RELU, 0, 0, NAN, NAN},
        {ADNN_ACTIVATION_LEAKY_RELU, 0.1, 0, -2, -0.2},
        {ADNN_ACTIVATION_ELU, 0.5, 0, -INFINITY, -0.5},
        {ADNN_ACTIVATION_CLAMP, 0, 6, 7, 6},
        {ADNN_ACTIVATION_CLAMP, 0, 6, NAN, NAN},
        {ADNN_ACTIVATION_SIGMOID, 0, 0, 0, 0.5},
        {ADNN_ACTIVATION_SIGMOID, 0, 0, -INFINITY, 0},
        {ADNN_ACTIVATION_TANH, 0, 0, INFINITY, 1},
        {ADNN_ACTIVATION_GELU, 0, 0, 1, 0.8413447460685429},
        {ADNN_ACTIVATION_GELU, 0, 0, -INFINITY, 0},
        {ADNN_ACTIVATION_GELU_TANH, 0, 0, 1, 0.8411919906082768},
        {ADNN_ACTIVATION_SILU, 0, 0, 1, 0.7310585786300049},
        {ADNN_ACTIVATION_SILU, 0, 0, -INFINITY, 0},
        {ADNN_ACTIVATION_SOFTPLUS, 0, 0, 100, 100},
        {ADNN_ACTIVATION_SOFTPLUS, 0, 0, -100, 3.720075976020836e-44},
        {ADNN_ACTIVATION_SOFTPLUS, 0, 0, 0, 0.6931471805599453},
        {ADNN_ACTIVATION_HARDSWISH, 0, 0, 1, 4.0 / 6.0},
        {ADNN_ACTIVATION_HARDSWISH, 0, 0, -4, 0},
        {ADNN_ACTIVATION_HARDSWISH, 0, 0, NAN, NAN},
    };
    int good = 1;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
      adnn_activation a = {v[i].k, v[i].a, v[i].b};
      double got = adnn_ref_activation_apply(&a, v[i].x);
      if (!close_to(got, v[i].want, 1e-15)) {
        good = 0;
        diag("  %s(%g) = %.17g, expected %.17g", act_names[v[i].k], v[i].x, got, v[i].want);
      }
    }
    ok(good, "oracle: activation values by hand");
  }
  /* 6. Norms by hand. */
  {
    double x[4] = {1, 2, 3, 4}, y[4], x2[2] = {3, 4}, y2[2];
    adnn_norm_desc d;
    adnn_norm_desc_init(&d);
    d.epsilon = 0;
    d.x = d.y = tdesc1(F64, 4);
    adnn_ref_norm(&d, x, NULL, NULL, y);
    double s = 1.0 / sqrt(1.25);
    ok(close_to(y[0], -1.5 * s, 1e-15) && close_to(y[3], 1.5 * s, 1e-15),
       "oracle: layer norm of 1 2 3 4 (biased variance)");
    d.kind = ADNN_NORM_RMS;
    d.x = d.y = tdesc1(F64, 2);
    adnn_ref_norm(&d, x2, NULL, NULL, y2);
    ok(close_to(y2[0], 3 / sqrt(12.5), 1e-15) && close_to(y2[1], 4 / sqrt(12.5), 1e-15),
       "oracle: rms norm of 3 4");
  }
  /* 7. Broadcasting: the raw and the pre-broadcast forms agree; max/min NaN. */
  {
    double a[3] = {1, 2, 3}, b[4] = {10, 20, NAN, 40}, y1[12], y2[12];
    const int64_t da[2] = {3, 1}, db[2] = {1, 4}, dy[2] = {3, 4};
    adnn_binary_desc d;
    adnn_binary_desc_init(&d);
    d.op = ADNN_BINARY_SUB;
    d.alpha = 2.0;
    d.beta = 0.5;
    d.a = tdesc(F64, 2, da, L_PACKED);
    d.b = tdesc(F64, 2, db, L_PACKED);
    d.y = tdesc(F64, 2, dy, L_PACKED);
    adnn_ref_binary(&d, a, b, y1);
    d.a.dims[1] = 4;
    d.a.strides[1] = 0;
    d.b.dims[0] = 3;
    d.b.strides[0] = 0;
    adnn_ref_binary(&d, a, b, y2);
    int good = 1;
    for (int i = 0; i < 12; i++) good &= (y1[i] == y2[i]) || (isnan(y1[i]) && isnan(y2[i]));
    ok(good && y1[0] == 2 * 1 - 5 && y1[7] == 2 * 2 - 20, "oracle: raw and pre-broadcast "
       "operands give the same result (got %g %g)", y1[0], y1[7]);
    d.op = ADNN_BINARY_MAX;
    adnn_ref_binary(&d, a, b, y1);
    ok(isnan(y1[2]) && isnan(y1[6]) && y1[0] == 5, "oracle: max with a NaN is NaN");
    /* rank 0 operand */
    double sc = 3;
    d.op = ADNN_BINARY_MUL;
    d.alpha = d.beta = 1;
    d.a = tdesc(F64, 2, dy, L_PACKED);
    d.b = tdesc(F64, 0, NULL, L_PACKED);
    double a12[12];
    for (int i = 0; i < 12; i++) a12[i] = i;
    adnn_ref_binary(&d, a12, &sc, y1);
    ok(y1[11] == 33 && y1[1] == 3, "oracle: a rank-0 operand broadcasts everywhere");
  }
  /* 8. Batch norm by hand, NHWC strides: channel is dim 1. */
  {
    double x[2 * 3] = {1, 10, 100, 2, 20, 200}; /* [1, 3, 1, 2] stored N H W C */
    double sc[3] = {1, 2, 3}, sh[3] = {0, 1, 2}, mu[3] = {1, 10, 100}, var[3] = {4, 4, 4}, y[6];
    adnn_batchnorm_desc d;
    adnn_batchnorm_desc_init(&d);
    d.epsilon = 0;
    d.x = d.y = tdesc4(F64, 1, 3, 1, 2, L_NHWC);
    adnn_ref_batchnorm(&d, x, sc, sh, mu, var, y);
    ok(y[0] == 0 && y[1] == 1 && y[2] == 2 && y[3] == 0.5 && y[4] == 1 + 2 * 10 / 2.0 &&
           y[5] == 2 + 3 * 100 / 2.0,
       "oracle: batch norm by hand with NHWC strides");
  }
}

/* ------------------------------------------------------------------------ */

int main(void) {
  case_filter = getenv("ADNN_CONFORMANCE_FILTER");
  if (case_filter && !*case_filter) case_filter = NULL;
  oracle_selftests();
  open_backends();
  if (n_backends == 0) diag("no ready backend: only the oracle is checked");
  for (int b = 0; b < n_backends; b++) diag("backend under test: %s", backend_names[b]);

  conv_cases();
  for (size_t i = 0; i < sizeof pool_specs / sizeof pool_specs[0]; i++) pool_case(&pool_specs[i]);
  act_cases();
  softmax_cases();
  bn_cases();
  norm_cases();
  bin_cases();
  for (int b = 0; b < n_backends; b++) negative_cases(b);

  for (int op = 0; op < OP_COUNT; op++)
    if (ref_f32_cases[op])
      ok(ref_f32_bad[op] == 0, "reference %s: the f32 path agrees with the f64 oracle on %d cases",
         op_names[op], ref_f32_cases[op]);

  /* Every algorithm must pass somewhere. The CPU plugin implements these
   * (issue 4); other backends report what they cover. */
  if (!case_filter)
    for (int b = 0; b < n_backends; b++)
      for (int a = ADNN_CONV2D_ALGO_REFERENCE; a <= ADNN_CONV2D_ALGO_DIRECT; a++) {
        const char *an = adnn_conv2d_algorithm_name((adnn_conv2d_algorithm)a);
        int required = strcmp(backend_names[b], "cpu") == 0 && a != ADNN_CONV2D_ALGO_DIRECT;
        if (required)
          ok(algo_pass[b][a] > 0, "%s: forced algorithm %s passed on %d shapes (%d skipped)",
             backend_names[b], an, algo_pass[b][a], algo_skip[b][a]);
        else
          diag("%s: forced algorithm %s passed on %d shapes (%d skipped)", backend_names[b], an,
               algo_pass[b][a], algo_skip[b][a]);
      }
  diag("backend cases: %d passed, %d skipped (gaps), %d failed", n_pass, n_skip, n_fail);
  for (int b = 0; b < n_backends; b++) adnn_context_destroy(backends[b]);
  return tap_done();
}
