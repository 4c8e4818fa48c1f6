/*
 * Smoke tests of every forward DNN op on the CUDA plugin: a handful of cases per
 * op (both layouts, odd sizes, asymmetric padding, ceil_mode, broadcasting,
 * NaN and infinities, in place, F32 and F64), each checked against the
 * reference kernels (kernels/ref/, double precision) and, when the CPU plugin
 * implements the op, against the CPU. Every output buffer starts as a sentinel
 * so that elements outside y's strides are checked to stay untouched. The
 * conformance suite covers far more; this test is the CUDA plugin's own.
 *
 * Without a usable GPU the whole test is skipped with the reason.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "kernels/ref/ref_ops.h"
#include "t/tap.h"

#define MAXIN 5

typedef struct tensor {
  adnn_tensor_desc d;
  int64_t span; /* elements of the buffer */
  void *host;
} tensor;

static tap_rng rng;

static int64_t span_of(const adnn_tensor_desc *d) {
  int64_t s = 1;
  for (int i = 0; i < d->rank; i++) s += (d->dims[i] - 1) * d->strides[i];
  return s;
}

/* A tensor with the given dims and strides (NULL: packed), filled uniformly in
 * [lo, hi). */
static tensor make(adnn_dtype dt, int rank, const int64_t *dims, const int64_t *strides, double lo,
                   double hi) {
  tensor t;
  if (strides)
    adnn_tensor_desc_init_strided(&t.d, dt, rank, dims, strides);
  else
    adnn_tensor_desc_init(&t.d, dt, rank, dims);
  t.span = span_of(&t.d);
  t.host = malloc((size_t)t.span * adnn_dtype_size(dt));
  for (int64_t i = 0; i < t.span; i++) adnn_ref_store(t.host, dt, i, tap_rng_uniform(&rng, lo, hi));
  return t;
}

/* Packed NHWC strides for dims [N, C, H, W]. */
static void nhwc(const int64_t d[4], int64_t s[4]) {
  s[1] = 1;
  s[3] = d[1];
  s[2] = d[3] * d[1];
  s[0] = d[2] * d[3] * d[1];
}

typedef enum { OP_CONV, OP_POOL, OP_ACT, OP_SOFTMAX, OP_BN, OP_NORM, OP_BINARY } op_kind;

typedef struct op_case {
  const char *what;
  op_kind kind;
  union {
    adnn_conv2d_desc conv;
    adnn_pool2d_desc pool;
    adnn_activation_desc act;
    adnn_softmax_desc softmax;
    adnn_batchnorm_desc bn;
    adnn_norm_desc norm;
    adnn_binary_desc binary;
  } d;
  int n_in;
  tensor in[MAXIN];
  tensor out;
  int inplace; /* y is input 0's buffer */
  double tol;  /* relative to 1 + |reference| */
} op_case;

static adnn_status create(adnn_context *ctx, op_case *c, adnn_plan **plan) {
  switch (c->kind) {
    case OP_CONV: return adnn_plan_create_conv2d(ctx, &c->d.conv, plan);
    case OP_POOL: return adnn_plan_create_pool2d(ctx, &c->d.pool, plan);
    case OP_ACT: return adnn_plan_create_activation(ctx, &c->d.act, plan);
    case OP_SOFTMAX: return adnn_plan_create_softmax(ctx, &c->d.softmax, plan);
    case OP_BN: return adnn_plan_create_batchnorm(ctx, &c->d.bn, plan);
    case OP_NORM: return adnn_plan_create_norm(ctx, &c->d.norm, plan);
    case OP_BINARY: return adnn_plan_create_binary(ctx, &c->d.binary, plan);
  }
  return ADNN_STATUS_INTERNAL_ERROR;
}

static void reference(op_case *c, void *y) {
  const void *in[MAXIN];
  for (int i = 0; i < c->n_in; i++) in[i] = c->inplace && i == 0 ? y : c->in[i].host;
  switch (c->kind) {
    case OP_CONV:
      adnn_ref_conv2d(&c->d.conv, in[0], in[1], c->n_in > 2 ? in[2] : NULL, y);
      break;
    case OP_POOL: adnn_ref_pool2d(&c->d.pool, in[0], y); break;
    case OP_ACT: adnn_ref_activation(&c->d.act, in[0], y); break;
    case OP_SOFTMAX: adnn_ref_softmax(&c->d.softmax, in[0], y); break;
    case OP_BN: adnn_ref_batchnorm(&c->d.bn, in[0], in[1], in[2], in[3], in[4], y); break;
    case OP_NORM: {
      const adnn_norm_desc *d = &c->d.norm;
      adnn_ref_norm(d, in[0], d->has_gain ? in[1] : NULL,
                    d->has_bias ? in[1 + d->has_gain] : NULL, y);
      break;
    }
    case OP_BINARY: adnn_ref_binary(&c->d.binary, in[0], in[1], y); break;
  }
}

/* Runs the case on ctx; the output buffer (out->span elements, starting as the
 * sentinel, or as input 0 in place) lands in `result`. Returns the status. */
static adnn_status run_on(adnn_context *ctx, op_case *c, void *result, char *algo, size_t algo_len) {
  const adnn_dtype dt = c->out.d.dtype;
  const size_t es = adnn_dtype_size(dt);
  void *dev[MAXIN] = {0}, *dy = NULL;
  adnn_plan *plan = NULL;
  adnn_status st = create(ctx, c, &plan);
  if (st == ADNN_STATUS_SUCCESS) snprintf(algo, algo_len, "%s", adnn_plan_algorithm(plan));
  for (int i = 0; i < c->n_in && st == ADNN_STATUS_SUCCESS; i++) {
    st = adnn_malloc(ctx, (size_t)c->in[i].span * es, &dev[i]);
    if (st == ADNN_STATUS_SUCCESS)
      st = adnn_memcpy(ctx, dev[i], c->in[i].host, (size_t)c->in[i].span * es,
                       ADNN_MEMCPY_HOST_TO_DEVICE);
  }
  if (st == ADNN_STATUS_SUCCESS) {
    if (c->inplace) {
      dy = dev[0];
    } else {
      st = adnn_malloc(ctx, (size_t)c->out.span * es, &dy);
      if (st == ADNN_STATUS_SUCCESS)
        st = adnn_memcpy(ctx, dy, c->out.host, (size_t)c->out.span * es, ADNN_MEMCPY_HOST_TO_DEVICE);
    }
  }
  if (st == ADNN_STATUS_SUCCESS) st = adnn_plan_execute(plan, (const void *const *)dev, (size_t)c->n_in, dy);
  if (st == ADNN_STATUS_SUCCESS)
    st = adnn_memcpy(ctx, result, dy, (size_t)c->out.span * es, ADNN_MEMCPY_DEVICE_TO_HOST);
  if (st == ADNN_STATUS_SUCCESS) st = adnn_context_synchronize(ctx);
  for (int i = 0; i < c->n_in; i++) adnn_free(ctx, dev[i]);
  if (!c->inplace) adnn_free(ctx, dy);
  adnn_plan_destroy(plan);
  return st;
}

static int close_enough(double g, double r, double tol) {
  if (isnan(r)) return isnan(g);
  if (isinf(r)) return g == r;
  return fabs(g - r) <= tol * (1.0 + fabs(r));
}

static int status_ok(adnn_status st, const char *what, adnn_dtype dt, const char *name,
                     const char *algo);

static void check(adnn_context *gpu, adnn_context *cpu, op_case *c) {
  const adnn_dtype dt = c->out.d.dtype;
  const size_t es = adnn_dtype_size(dt);
  const size_t bytes = (size_t)c->out.span * es;
  void *ref = malloc(bytes), *got = malloc(bytes), *cpu_out = malloc(bytes);
  memcpy(ref, c->inplace ? c->in[0].host : c->out.host, bytes);
  reference(c, ref);
  char algo[96] = "", cpu_algo[96] = "";
  adnn_status st = run_on(gpu, c, got, algo, sizeof algo);
  if (!status_ok(st, "cuda", dt, c->what, algo)) {
    free(ref), free(got), free(cpu_out);
    return;
  }
  int64_t bad = -1;
  for (int64_t i = 0; i < c->out.span && bad < 0; i++)
    if (!close_enough(adnn_ref_load(got, dt, i), adnn_ref_load(ref, dt, i), c->tol)) bad = i;
  if (!ok(bad < 0, "cuda %s %s: matches the reference (%s)", adnn_dtype_name(dt), c->what, algo))
    diag("  element %lld: got %.9g, expected %.9g", (long long)bad, adnn_ref_load(got, dt, bad),
         adnn_ref_load(ref, dt, bad));
  if (cpu) {
    st = run_on(cpu, c, cpu_out, cpu_algo, sizeof cpu_algo);
    if (st == ADNN_STATUS_NOT_SUPPORTED) {
      diag("cpu cannot run %s (%s); compared with the reference only", c->what, adnn_last_error());
    } else if (status_ok(st, "cpu", dt, c->what, cpu_algo)) {
      bad = -1;
      for (int64_t i = 0; i < c->out.span && bad < 0; i++)
        if (!close_enough(adnn_ref_load(got, dt, i), adnn_ref_load(cpu_out, dt, i), 2 * c->tol)) bad = i;
      if (!ok(bad < 0, "cuda %s %s: agrees with cpu (%s)", adnn_dtype_name(dt), c->what, cpu_algo))
        diag("  element %lld: cuda %.9g, cpu %.9g", (long long)bad, adnn_ref_load(got, dt, bad),
             adnn_ref_load(cpu_out, dt, bad));
    }
  }
  free(ref), free(got), free(cpu_out);
}

static void release(op_case *c) {
  for (int i = 0; i < c->n_in; i++) free(c->in[i].host);
  free(c->out.host);
}

/* The output tensor: given dims/strides, filled with a sentinel (-777). */
static tensor out_tensor(adnn_dtype dt, int rank, const int64_t *dims, const int64_t *strides) {
  tensor t = make(dt, rank, dims, strides, 0, 0);
  for (int64_t i = 0; i < t.span; i++) adnn_ref_store(t.host, dt, i, -777.0);
  return t;
}

/* Makes y the buffer of input 0 (same dims and layout). */
static void make_inplace(op_case *c, adnn_tensor_desc *y) {
  free(c->out.host);
  c->out = c->in[0];
  c->out.host = malloc((size_t)c->in[0].span * adnn_dtype_size(c->in[0].d.dtype));
  *y = c->in[0].d;
  c->inplace = 1;
}

static double tol_of(adnn_dtype dt, double f32) { return dt == ADNN_DTYPE_F32 ? f32 : 1e-11; }

/* ok() on a status, with the status name and last error on failure. */
static int status_ok(adnn_status st, const char *what, adnn_dtype dt, const char *name,
                     const char *algo) {
  int good = st == ADNN_STATUS_SUCCESS;
  if (!ok(good, "%s %s %s: runs (%s)", what, adnn_dtype_name(dt), name, algo))
    diag("  got %s; last error: %s", adnn_status_name(st), adnn_last_error());
  return good;
}

/* ---- the cases ---------------------------------------------------------- */

static void conv_case(adnn_context *gpu, adnn_context *cpu, const char *what, adnn_dtype dt,
                      int layout_nhwc, int64_t N, int64_t C, int64_t H, int64_t W, int64_t K,
                      int64_t R, int64_t S, int64_t groups, int64_t sh, int64_t sw, int64_t dh,
                      int64_t dw, int64_t pt, int64_t pb, int64_t pl, int64_t pr, int has_bias,
                      adnn_activation_kind act, adnn_conv2d_algorithm algo, int64_t y_pad_w) {
  op_case c;
  memset(&c, 0, sizeof c);
  c.what = what;
  c.kind = OP_CONV;
  adnn_conv2d_desc *d = &c.d.conv;
  adnn_conv2d_desc_init(d);
  int64_t xd[4] = {N, C, H, W}, wd[4] = {K, C / groups, R, S}, xs[4], ws[4];
  nhwc(xd, xs);
  nhwc(wd, ws); /* KRSC */
  /* layout: 0 NCHW x/y + KCRS w, 1 NHWC + KRSC, 2 NCHW + KRSC, 3 NHWC + KCRS */
  const int w_krsc = layout_nhwc == 1 || layout_nhwc == 2;
  layout_nhwc &= 1;
  c.in[0] = make(dt, 4, xd, layout_nhwc ? xs : NULL, -1, 1);
  c.in[1] = make(dt, 4, wd, w_krsc ? ws : NULL, -1, 1);
  d->x = c.in[0].d;
  d->w = c.in[1].d;
  d->stride_h = sh, d->stride_w = sw, d->dilation_h = dh, d->dilation_w = dw;
  d->pad_top = pt, d->pad_bottom = pb, d->pad_left = pl, d->pad_right = pr;
  d->groups = groups;
  d->activation.kind = act;
  d->activation.alpha = 0.1;
  d->activation.beta = 0.5;
  d->algorithm = algo;
  c.n_in = 2;
  if (has_bias) {
    int64_t kd[1] = {K};
    c.in[2] = make(dt, 1, kd, NULL, -0.5, 0.5);
    d->bias = c.in[2].d;
    d->has_bias = 1;
    c.n_in = 3;
  }
  int64_t yd[4];
  if (adnn_conv2d_output_dims(d, yd) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  int64_t ys[4];
  if (layout_nhwc) {
    nhwc(yd, ys);
  } else { /* NCHW, rows padded by y_pad_w */
    ys[3] = 1;
    ys[2] = yd[3] + y_pad_w;
    ys[1] = ys[2] * yd[2];
    ys[0] = ys[1] * yd[1];
  }
  c.out = out_tensor(dt, 4, yd, ys);
  d->y = c.out.d;
  c.tol = tol_of(dt, 2e-5 * (double)(C / groups * R * S));
  check(gpu, cpu, &c);
  release(&c);
}

static void pool_case(adnn_context *gpu, adnn_context *cpu, const char *what, adnn_dtype dt,
                      int layout_nhwc, adnn_pool_kind kind, int64_t H, int64_t W, int64_t kh,
                      int64_t kw, int64_t sh, int64_t sw, int64_t pt, int64_t pb, int64_t pl,
                      int64_t pr, int ceil_mode, int with_nan) {
  op_case c;
  memset(&c, 0, sizeof c);
  c.what = what;
  c.kind = OP_POOL;
  adnn_pool2d_desc *d = &c.d.pool;
  adnn_pool2d_desc_init(d);
  int64_t xd[4] = {2, 3, H, W}, xs[4];
  nhwc(xd, xs);
  c.in[0] = make(dt, 4, xd, layout_nhwc ? xs : NULL, -2, 2);
  if (with_nan) {
    adnn_ref_store(c.in[0].host, dt, 5, NAN);
    adnn_ref_store(c.in[0].host, dt, 17, INFINITY);
    adnn_ref_store(c.in[0].host, dt, 23, -INFINITY);
  }
  d->x = c.in[0].d;
  d->kind = kind;
  d->kernel_h = kh, d->kernel_w = kw, d->stride_h = sh, d->stride_w = sw;
  d->pad_top = pt, d->pad_bottom = pb, d->pad_left = pl, d->pad_right = pr;
  d->ceil_mode = ceil_mode;
  c.n_in = 1;
  int64_t yd[4], ys[4];
  if (adnn_pool2d_output_dims(d, yd) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  nhwc(yd, ys);
  c.out = out_tensor(dt, 4, yd, layout_nhwc ? ys : NULL);
  d->y = c.out.d;
  c.tol = tol_of(dt, 1e-6);
  check(gpu, cpu, &c);
  release(&c);
}

static void act_cases(adnn_context *gpu, adnn_context *cpu, adnn_dtype dt) {
  static const char *names[] = {"identity", "relu", "leaky_relu", "elu", "clamp", "sigmoid",
                                "tanh", "gelu", "gelu_tanh", "silu", "softplus", "hardswish"};
  for (int k = 0; k <= ADNN_ACTIVATION_HARDSWISH; k++) {
    for (int variant = 0; variant < 3; variant++) {
      op_case c;
      memset(&c, 0, sizeof c);
      char what[96];
      static const char *vn[] = {"packed 1003", "in place", "strided [7,9] in [7,16]"};
      snprintf(what, sizeof what, "activation %s %s", names[k], vn[variant]);
      c.what = what;
      c.kind = OP_ACT;
      adnn_activation_desc *d = &c.d.act;
      adnn_activation_desc_init(d);
      d->activation.kind = (adnn_activation_kind)k;
      d->activation.alpha = k == ADNN_ACTIVATION_CLAMP ? -1.5 : 0.2;
      d->activation.beta = 2.5;
      if (variant < 2) {
        int64_t n[1] = {1003};
        c.in[0] = make(dt, 1, n, NULL, -8, 8);
        c.out = out_tensor(dt, 1, n, NULL);
      } else {
        int64_t dims[2] = {7, 9}, s[2] = {16, 1}, so[2] = {1, 7};
        c.in[0] = make(dt, 2, dims, s, -8, 8);
        c.out = out_tensor(dt, 2, dims, so); /* transposed output */
      }
      const double specials[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, -3.0, 3.0, 1e30, -1e30};
      for (int i = 0; i < 9; i++) adnn_ref_store(c.in[0].host, dt, 3 * i + 1, specials[i]);
      d->x = c.in[0].d;
      d->y = variant == 1 ? c.in[0].d : c.out.d;
      c.inplace = variant == 1;
      if (c.inplace) {
        free(c.out.host);
        c.out = c.in[0];
        c.out.host = malloc((size_t)c.in[0].span * adnn_dtype_size(dt));
      }
      c.n_in = 1;
      c.tol = tol_of(dt, 2e-6);
      check(gpu, cpu, &c);
      release(&c);
    }
  }
}

static void softmax_case(adnn_context *gpu, adnn_context *cpu, const char *what, adnn_dtype dt,
                         int rank, const int64_t *dims, int axis, int log, int specials) {
  op_case c;
  memset(&c, 0, sizeof c);
  c.what = what;
  c.kind = OP_SOFTMAX;
  adnn_softmax_desc *d = &c.d.softmax;
  adnn_softmax_desc_init(d);
  c.in[0] = make(dt, rank, dims, NULL, -20, 20);
  if (specials) {
    /* Row 0 (along the last axis) gets a NaN, row 1 a +inf, row 2 only -inf,
     * row 3 one -inf. */
    const int64_t L = dims[rank - 1];
    adnn_ref_store(c.in[0].host, dt, 0 * L + 2, NAN);
    adnn_ref_store(c.in[0].host, dt, 1 * L + 1, INFINITY);
    for (int64_t j = 0; j < L; j++) adnn_ref_store(c.in[0].host, dt, 2 * L + j, -INFINITY);
    adnn_ref_store(c.in[0].host, dt, 3 * L + 3, -INFINITY);
  }
  c.out = out_tensor(dt, rank, dims, NULL);
  d->x = c.in[0].d;
  d->y = c.out.d;
  d->axis = axis;
  d->log = log;
  if (specials > 1) make_inplace(&c, &d->y);
  c.n_in = 1;
  c.tol = tol_of(dt, 1e-5);
  check(gpu, cpu, &c);
  release(&c);
}

static void bn_case(adnn_context *gpu, adnn_context *cpu, const char *what, adnn_dtype dt,
                    int layout, adnn_activation_kind act) {
  op_case c;
  memset(&c, 0, sizeof c);
  c.what = what;
  c.kind = OP_BN;
  adnn_batchnorm_desc *d = &c.d.bn;
  adnn_batchnorm_desc_init(d);
  int64_t xd[4] = {3, 5, 6, 7}, xs[4];
  nhwc(xd, xs);
  if (layout == 2) { /* strided: W padded to 9 */
    xs[3] = 1, xs[2] = 9, xs[1] = 9 * 6, xs[0] = 9 * 6 * 5;
  }
  c.in[0] = make(dt, 4, xd, layout ? xs : NULL, -3, 3);
  int64_t cd[1] = {5};
  c.in[1] = make(dt, 1, cd, NULL, 0.5, 2);
  c.in[2] = make(dt, 1, cd, NULL, -1, 1);
  c.in[3] = make(dt, 1, cd, NULL, -1, 1);
  c.in[4] = make(dt, 1, cd, NULL, 0.1, 3);
  int64_t ys[4];
  nhwc(xd, ys);
  c.out = out_tensor(dt, 4, xd, layout == 1 ? ys : NULL);
  d->x = c.in[0].d;
  d->y = c.out.d;
  d->activation.kind = act;
  d->activation.alpha = 0.0;
  d->activation.beta = 6.0;
  c.n_in = 5;
  c.tol = tol_of(dt, 2e-6);
  check(gpu, cpu, &c);
  release(&c);
}

static void norm_case(adnn_context *gpu, adnn_context *cpu, const char *what, adnn_dtype dt,
                      adnn_norm_kind kind, int rank, const int64_t *dims, int norm_dims,
                      int gain, int bias, double offset) {
  op_case c;
  memset(&c, 0, sizeof c);
  c.what = what;
  c.kind = OP_NORM;
  adnn_norm_desc *d = &c.d.norm;
  adnn_norm_desc_init(d);
  c.in[0] = make(dt, rank, dims, NULL, offset - 1, offset + 1);
  int64_t D = 1;
  for (int i = rank - norm_dims; i < rank; i++) D *= dims[i];
  int n = 1;
  if (gain) c.in[n++] = make(dt, 1, &D, NULL, 0.5, 1.5);
  if (bias) c.in[n++] = make(dt, 1, &D, NULL, -1, 1);
  c.n_in = n;
  c.out = out_tensor(dt, rank, dims, NULL);
  d->x = c.in[0].d;
  d->y = c.out.d;
  d->kind = kind;
  d->norm_dims = norm_dims;
  d->has_gain = gain;
  d->has_bias = bias;
  c.tol = tol_of(dt, 2e-5);
  check(gpu, cpu, &c);
  release(&c);
}

static void binary_case(adnn_context *gpu, adnn_context *cpu, const char *what, adnn_dtype dt,
                        adnn_binary_op op, int ra, const int64_t *da, int rb, const int64_t *db,
                        int ry, const int64_t *dy, int nan) {
  op_case c;
  memset(&c, 0, sizeof c);
  c.what = what;
  c.kind = OP_BINARY;
  adnn_binary_desc *d = &c.d.binary;
  adnn_binary_desc_init(d);
  c.in[0] = make(dt, ra, da, NULL, -4, 4);
  c.in[1] = make(dt, rb, db, NULL, 0.5, 4);
  if (nan) {
    adnn_ref_store(c.in[0].host, dt, 1, NAN);
    adnn_ref_store(c.in[1].host, dt, 0, NAN);
  }
  c.out = out_tensor(dt, ry, dy, NULL);
  d->a = c.in[0].d;
  d->b = c.in[1].d;
  d->y = c.out.d;
  d->op = op;
  d->alpha = 1.5;
  d->beta = -0.5;
  if (nan > 1) make_inplace(&c, &d->y);
  c.n_in = 2;
  c.tol = tol_of(dt, 1e-6);
  check(gpu, cpu, &c);
  release(&c);
}

int main(void) {
  adnn_context *gpu = NULL, *cpu = NULL;
  if (adnn_context_create("cuda", &gpu) != ADNN_STATUS_SUCCESS) {
    char reason[600];
    snprintf(reason, sizeof reason, "no usable CUDA device: %s", adnn_last_error());
    for (char *p = reason; *p; p++)
      if (*p == '\n') *p = ' ';
    return tap_skip_all(reason);
  }
  if (adnn_context_create("cpu", &cpu) != ADNN_STATUS_SUCCESS) {
    diag("no cpu backend (%s): comparing with the reference only", adnn_last_error());
    cpu = NULL;
  }
  rng = tap_rng_seed(20261129);
  const adnn_dtype F = ADNN_DTYPE_F32, D = ADNN_DTYPE_F64;

  /* conv2d */
  conv_case(gpu, cpu, "conv NCHW 3x3 pad 1 bias relu", F, 0, 2, 3, 7, 6, 4, 3, 3, 1, 1, 1, 1, 1,
            1, 1, 1, 1, 1, ADNN_ACTIVATION_RELU, ADNN_CONV2D_ALGO_AUTO, 0);
  conv_case(gpu, cpu, "conv NCHW bias identity", F, 0, 2, 8, 9, 9, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1,
            1, 1, 1, ADNN_ACTIVATION_IDENTITY, ADNN_CONV2D_ALGO_AUTO, 0);
  conv_case(gpu, cpu, "conv NHWC groups 2 stride 2 dilation 2 asym pad gelu", F, 1, 2, 4, 11, 10,
            6, 3, 2, 2, 2, 2, 2, 2, 0, 2, 1, 0, 1, ADNN_ACTIVATION_GELU, ADNN_CONV2D_ALGO_AUTO, 0);
  conv_case(gpu, cpu, "conv depthwise 3x3 bias", F, 0, 1, 5, 8, 8, 5, 3, 3, 5, 1, 1, 1, 1, 1, 1,
            1, 1, 1, ADNN_ACTIVATION_IDENTITY, ADNN_CONV2D_ALGO_AUTO, 0);
  conv_case(gpu, cpu, "conv strided y (row pitch +3) silu", F, 0, 2, 3, 6, 7, 4, 3, 3, 1, 1, 1, 1,
            1, 0, 1, 2, 0, 1, ADNN_ACTIVATION_SILU, ADNN_CONV2D_ALGO_AUTO, 3);
  conv_case(gpu, cpu, "conv 1x1 forced gemm_1x1", F, 0, 2, 16, 5, 5, 8, 1, 1, 1, 1, 1, 1, 1, 0, 0,
            0, 0, 0, ADNN_ACTIVATION_IDENTITY, ADNN_CONV2D_ALGO_GEMM_1X1, 0);
  conv_case(gpu, cpu, "conv forced reference asym pad", F, 0, 1, 3, 6, 6, 2, 3, 3, 1, 2, 1, 1, 1,
            2, 0, 0, 1, 1, ADNN_ACTIVATION_HARDSWISH, ADNN_CONV2D_ALGO_REFERENCE, 0);
  conv_case(gpu, cpu, "conv forced direct NHWC", F, 1, 1, 4, 5, 6, 4, 3, 3, 2, 1, 1, 1, 1, 1, 1,
            1, 1, 1, ADNN_ACTIVATION_ELU, ADNN_CONV2D_ALGO_DIRECT, 0);
  conv_case(gpu, cpu, "conv NCHW x/y with a KRSC filter", F, 2, 2, 6, 5, 5, 4, 3, 3, 2, 1, 1, 1,
            1, 1, 1, 1, 1, 1, ADNN_ACTIVATION_RELU, ADNN_CONV2D_ALGO_AUTO, 0);
  conv_case(gpu, cpu, "conv NHWC x/y with a KCRS filter, asym pad", F, 3, 1, 4, 6, 7, 8, 3, 3, 1,
            1, 1, 1, 1, 0, 1, 1, 0, 0, ADNN_ACTIVATION_LEAKY_RELU, ADNN_CONV2D_ALGO_AUTO, 0);
  conv_case(gpu, cpu, "conv f64 NCHW", D, 0, 2, 3, 7, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
            ADNN_ACTIVATION_TANH, ADNN_CONV2D_ALGO_AUTO, 0);

  /* pool2d */
  pool_case(gpu, cpu, "maxpool 3x3/2 pad 1 NaN wins", F, 0, ADNN_POOL_MAX, 9, 8, 3, 3, 2, 2, 1, 1,
            1, 1, 0, 1);
  pool_case(gpu, cpu, "maxpool ceil_mode asym pad NHWC", F, 1, ADNN_POOL_MAX, 10, 7, 3, 2, 2, 2,
            0, 1, 1, 0, 1, 0);
  pool_case(gpu, cpu, "avgpool include pad ceil_mode", F, 0, ADNN_POOL_AVG_INCLUDE_PAD, 10, 11, 3,
            3, 2, 2, 1, 1, 1, 0, 1, 0);
  pool_case(gpu, cpu, "avgpool exclude pad asym", F, 1, ADNN_POOL_AVG_EXCLUDE_PAD, 7, 9, 3, 4, 2,
            3, 0, 1, 2, 1, 1, 0);
  pool_case(gpu, cpu, "avgpool f64", D, 0, ADNN_POOL_AVG_INCLUDE_PAD, 8, 8, 2, 2, 2, 2, 1, 1, 1,
            1, 1, 0);

  /* activations */
  act_cases(gpu, cpu, F);
  act_cases(gpu, cpu, D);

  /* softmax */
  {
    const int64_t d2[2] = {37, 129}, d3[3] = {3, 50, 7}, big[2] = {4, 5000};
    const int64_t cols[3] = {2, 16, 9000}; /* 18000 rows along a strided axis */
    softmax_case(gpu, cpu, "softmax last axis NaN/inf rows", F, 2, d2, -1, 0, 1);
    softmax_case(gpu, cpu, "log_softmax last axis NaN/inf rows", F, 2, d2, 1, 1, 1);
    softmax_case(gpu, cpu, "softmax axis 1 of [3,50,7]", F, 3, d3, 1, 0, 0);
    softmax_case(gpu, cpu, "log_softmax axis 0 of [3,50,7]", F, 3, d3, 0, 1, 0);
    softmax_case(gpu, cpu, "softmax rows of 5000", F, 2, big, -1, 0, 0);
    softmax_case(gpu, cpu, "log_softmax axis 1 of [2,16,9000]", F, 3, cols, 1, 1, 0);
    softmax_case(gpu, cpu, "softmax f64", D, 2, d2, -1, 0, 1);
    softmax_case(gpu, cpu, "log_softmax in place, NaN/inf rows", F, 2, d2, -1, 1, 2);
  }

  /* batchnorm */
  bn_case(gpu, cpu, "batchnorm NCHW relu", F, 0, ADNN_ACTIVATION_RELU);
  bn_case(gpu, cpu, "batchnorm NHWC clamp(0,6)", F, 1, ADNN_ACTIVATION_CLAMP);
  bn_case(gpu, cpu, "batchnorm strided x, packed y", F, 2, ADNN_ACTIVATION_IDENTITY);
  bn_case(gpu, cpu, "batchnorm f64", D, 0, ADNN_ACTIVATION_SIGMOID);

  /* norms */
  {
    const int64_t d3[3] = {5, 7, 33}, wide[2] = {3, 3000}, one[2] = {4, 1};
    norm_case(gpu, cpu, "layernorm last 2 dims gain bias", F, ADNN_NORM_LAYER, 3, d3, 2, 1, 1, 0);
    norm_case(gpu, cpu, "layernorm D 3000 offset 1000", F, ADNN_NORM_LAYER, 2, wide, 1, 1, 0, 1000);
    norm_case(gpu, cpu, "rmsnorm gain", F, ADNN_NORM_RMS, 3, d3, 1, 1, 0, 0);
    norm_case(gpu, cpu, "rmsnorm bias only D 3000", F, ADNN_NORM_RMS, 2, wide, 1, 0, 1, 0.5);
    norm_case(gpu, cpu, "layernorm D 1", F, ADNN_NORM_LAYER, 2, one, 1, 0, 0, 0);
    norm_case(gpu, cpu, "layernorm f64", D, ADNN_NORM_LAYER, 3, d3, 1, 1, 1, 0);
  }

  /* binary */
  {
    const int64_t n[1] = {1003}, a3[3] = {4, 1, 5}, b2[2] = {3, 1}, y3[3] = {4, 3, 5};
    const int64_t row[1] = {5}, m2[2] = {6, 5};
    binary_case(gpu, cpu, "add packed 1003", F, ADNN_BINARY_ADD, 1, n, 1, n, 1, n, 0);
    binary_case(gpu, cpu, "mul broadcast [4,1,5]x[3,1]", F, ADNN_BINARY_MUL, 3, a3, 2, b2, 3, y3, 0);
    binary_case(gpu, cpu, "max NaN", F, ADNN_BINARY_MAX, 1, n, 1, n, 1, n, 1);
    binary_case(gpu, cpu, "min NaN broadcast row", F, ADNN_BINARY_MIN, 2, m2, 1, row, 2, m2, 1);
    binary_case(gpu, cpu, "div broadcast", F, ADNN_BINARY_DIV, 2, m2, 1, row, 2, m2, 0);
    binary_case(gpu, cpu, "sub f64", D, ADNN_BINARY_SUB, 3, a3, 2, b2, 3, y3, 0);
    binary_case(gpu, cpu, "max in place (y is a), NaN", F, ADNN_BINARY_MAX, 1, n, 1, n, 1, n, 2);
    binary_case(gpu, cpu, "mul in place, broadcast b", F, ADNN_BINARY_MUL, 2, m2, 1, row, 2, m2, 2);
  }

  adnn_context_destroy(cpu);
  adnn_context_destroy(gpu);
  return tap_done();
}
