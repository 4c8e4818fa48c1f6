/*
 * Weight prepacking (adnn_plan_get_packed_weights_bytes,
 * adnn_plan_pack_weights, the descriptors' weights_prepacked) on the
 * backend named by ADNN_BACKEND (the cpu backend by default; the CUDA
 * emulation runs it through t/cuda-emu/run.sh).
 *
 * For every conv2d algorithm (forced) on the problems it can run, and for
 * matmul: a plan with weights_prepacked = 1 executed on the buffer
 * adnn_plan_pack_weights wrote gives bit for bit the result of the same
 * algorithm's plan on the plain weights, and matches a double-precision
 * oracle written here (independent of the library's reference kernels) to
 * within tol * (1 + sum of |products|) per element; outputs are poisoned
 * with NaN first so that an element left unwritten fails. The original
 * weights are overwritten after packing, so a plan that read them instead of
 * the packed buffer fails too. Then every bad input is refused with its
 * status and a message naming it.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "t/rng.h"
#include "t/tap.h"
#include "t/tmpdir.h"

static adnn_context *ctx;

/* Set while the context tunes: the plain and the prepacked plan are then
 * measured independently and may choose different algorithms, so the
 * bit-for-bit comparison holds only when they chose the same one (the
 * oracle comparison always applies). */
static int tuning;

static float *dev_alloc(size_t floats) {
  void *p = NULL;
  if (adnn_malloc(ctx, floats * sizeof(float), &p) != ADNN_STATUS_SUCCESS) return NULL;
  return p;
}

static void upload(float *dst, const float *src, size_t n) {
  adnn_memcpy(ctx, dst, src, n * sizeof(float), ADNN_MEMCPY_HOST_TO_DEVICE);
}

static void download(float *dst, const float *src, size_t n) {
  adnn_memcpy(ctx, dst, src, n * sizeof(float), ADNN_MEMCPY_DEVICE_TO_HOST);
}

static void fill(float *v, size_t n, tap_rng *r) {
  for (size_t i = 0; i < n; i++) v[i] = (float)tap_rng_uniform(r, -1.0, 1.0);
}

static void poison(float *dev, size_t n) {
  float *h = malloc(n * sizeof *h);
  for (size_t i = 0; i < n; i++) h[i] = NAN;
  upload(dev, h, n);
  free(h);
}

/* Compares y (prepacked) with y0 (plain weights) bit for bit and with the
 * oracle want (abs: the sums of |products|) within tol. */
static void check_result(const char *what, const float *y, const float *y0, const double *want,
                         const double *abs, size_t n, double tol, int same_algorithm) {
  size_t differ = 0, bad = 0, first_bad = n;
  for (size_t i = 0; i < n; i++) {
    if (memcmp(&y[i], &y0[i], sizeof(float)) != 0) differ++;
    if (!(fabs((double)y[i] - want[i]) <= tol * (1.0 + abs[i]))) {
      if (first_bad == n) first_bad = i;
      bad++;
    }
  }
  if (same_algorithm)
    ok(differ == 0, "%s: prepacked result equals the plain-weights result bit for bit (%zu of "
       "%zu differ)", what, differ, n);
  else
    tap_skip("the tuner chose different algorithms for the two plans");
  ok(bad == 0, "%s: prepacked result matches the oracle within %g (%zu of %zu off)", what, tol,
     bad, n);
  if (bad) diag("first at %zu: got %.9g, want %.9g", first_bad, (double)y[first_bad],
                want[first_bad]);
}

/* Under tuning: every candidate of the prepacked plan was measured on its
 * packed scratch weights without failing (a failed packing would leave the
 * candidate with an error status). */
static void check_measured(const char *what, const adnn_plan *plan) {
  size_t n = 0;
  adnn_plan_get_candidate_count(plan, &n);
  if (n == 0 && strstr(adnn_plan_get_choice_reason(plan), "only algorithm")) {
    tap_skip("the backend has one algorithm for this op: nothing to measure");
    return;
  }
  size_t failed = 0, measured = 0;
  for (size_t i = 0; i < n; i++) {
    const adnn_plan_candidate *c = NULL;
    if (adnn_plan_get_candidate(plan, i, &c) != ADNN_STATUS_SUCCESS) continue;
    if (c->status != ADNN_STATUS_SUCCESS && c->status != ADNN_STATUS_NOT_SUPPORTED) {
      diag("%s: candidate %s: %s", what, c->algorithm, adnn_status_name(c->status));
      failed++;
    }
    if (c->time_ms >= 0) measured++;
  }
  ok(n >= 1 && failed == 0 && measured >= 1, "%s: the prepacked plan was tuned (%zu candidates, "
     "%zu measured, %zu failed): %s", what, n, measured, failed,
     adnn_plan_get_choice_reason(plan));
}

/* ---- conv2d ------------------------------------------------------------- */

typedef struct conv_case {
  const char *name;
  int64_t n, c, k, h, w, r, s, stride, pad, groups;
  int strided_w; /* w laid out K, R, S, C (strides of a channels-last filter) */
} conv_case;

static const conv_case conv_cases[] = {
    {"3x3 pad 1", 2, 5, 7, 9, 8, 3, 3, 1, 1, 1, 0},
    {"1x1", 2, 6, 9, 5, 7, 1, 1, 1, 0, 1, 0},
    {"1x1 stride 2", 1, 4, 5, 7, 7, 1, 1, 2, 0, 1, 0},
    {"5x5 stride 2 pad 2, channels-last w", 1, 3, 4, 11, 10, 5, 5, 2, 2, 1, 1},
    {"3x3 depthwise", 2, 6, 6, 8, 9, 3, 3, 1, 1, 6, 0},
    {"3x3 grouped", 1, 6, 4, 7, 7, 3, 3, 1, 1, 2, 0},
};

static void conv_desc(adnn_conv2d_desc *d, const conv_case *cc, adnn_conv2d_algorithm algo,
                      int prepacked) {
  int64_t xd[4] = {cc->n, cc->c, cc->h, cc->w}, wd[4] = {cc->k, cc->c / cc->groups, cc->r, cc->s};
  int64_t yd[4], bd[1] = {cc->k};
  adnn_conv2d_desc_init(d);
  adnn_tensor_desc_init(&d->x, ADNN_DTYPE_F32, 4, xd);
  adnn_tensor_desc_init(&d->w, ADNN_DTYPE_F32, 4, wd);
  if (cc->strided_w) {
    const int64_t cg = wd[1];
    d->w.strides[0] = cc->r * cc->s * cg;
    d->w.strides[1] = 1;
    d->w.strides[2] = cc->s * cg;
    d->w.strides[3] = cg;
  }
  adnn_tensor_desc_init(&d->bias, ADNN_DTYPE_F32, 1, bd);
  d->has_bias = 1;
  d->activation.kind = ADNN_ACTIVATION_LEAKY_RELU;
  d->activation.alpha = 0.125;
  d->stride_h = d->stride_w = cc->stride;
  d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = cc->pad;
  d->groups = cc->groups;
  d->algorithm = algo;
  d->weights_prepacked = prepacked;
  adnn_conv2d_output_dims(d, yd);
  adnn_tensor_desc_init(&d->y, ADNN_DTYPE_F32, 4, yd);
}

static int64_t span(const adnn_tensor_desc *t) {
  int64_t last = 0;
  for (int i = 0; i < t->rank; i++) last += (t->dims[i] - 1) * t->strides[i];
  return last + 1;
}

/* The oracle: y = leaky_relu(conv(x, w) + bias) in double, and the sums of
 * |products| that bound its rounding. */
static void conv_oracle(const adnn_conv2d_desc *d, const float *x, const float *w,
                        const float *b, double *y, double *abs) {
  const int64_t N = d->x.dims[0], C = d->x.dims[1], H = d->x.dims[2], W = d->x.dims[3];
  const int64_t K = d->w.dims[0], Cg = d->w.dims[1], R = d->w.dims[2], S = d->w.dims[3];
  const int64_t P = d->y.dims[2], Q = d->y.dims[3], G = d->groups, Kg = K / G;
  (void)C;
  for (int64_t n = 0; n < N; n++)
    for (int64_t k = 0; k < K; k++)
      for (int64_t p = 0; p < P; p++)
        for (int64_t q = 0; q < Q; q++) {
          double sum = b[k], sa = fabs((double)b[k]);
          const int64_t g = k / Kg;
          for (int64_t c = 0; c < Cg; c++)
            for (int64_t r = 0; r < R; r++)
              for (int64_t s = 0; s < S; s++) {
                const int64_t ih = p * d->stride_h - d->pad_top + r;
                const int64_t iw = q * d->stride_w - d->pad_left + s;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                const double xv = x[((n * d->x.dims[1] + g * Cg + c) * H + ih) * W + iw];
                const double wv = w[k * d->w.strides[0] + c * d->w.strides[1] +
                                    r * d->w.strides[2] + s * d->w.strides[3]];
                sum += xv * wv;
                sa += fabs(xv * wv);
              }
          const size_t o = (size_t)(((n * K + k) * P + p) * Q + q);
          y[o] = sum >= 0 ? sum : 0.125 * sum;
          abs[o] = sa;
        }
}

/* Runs one case with one forced algorithm; returns 1 when the algorithm ran
 * it, 0 when the backend refused it (NOT_SUPPORTED for both plans). */
static int conv_run(const conv_case *cc, adnn_conv2d_algorithm algo, tap_rng *rng) {
  adnn_conv2d_desc d0, d1;
  conv_desc(&d0, cc, algo, 0);
  conv_desc(&d1, cc, algo, 1);
  adnn_plan *plain = NULL, *packed_plan = NULL;
  adnn_status s0 = adnn_plan_create_conv2d(ctx, &d0, &plain);
  adnn_status s1 = adnn_plan_create_conv2d(ctx, &d1, &packed_plan);
  char what[160];
  snprintf(what, sizeof what, "conv2d %s, %s", cc->name, adnn_conv2d_algorithm_name(algo));
  if (s0 != ADNN_STATUS_SUCCESS) {
    is_status(s1, s0, "%s: the prepacked plan is refused as the plain one is (%s)", what,
              adnn_status_name(s0));
    adnn_plan_destroy(packed_plan);
    return 0;
  }
  if (!ok(s1 == ADNN_STATUS_SUCCESS, "%s: prepacked plan created", what)) {
    diag("%s: %s", adnn_status_name(s1), adnn_last_error());
    adnn_plan_destroy(plain);
    return 1;
  }
  const int same = strcmp(adnn_plan_get_algorithm(packed_plan), adnn_plan_get_algorithm(plain)) == 0;
  if (tuning)
    check_measured(what, packed_plan);
  else
    ok(same, "%s: both plans run the same algorithm (%s, %s)", what,
       adnn_plan_get_algorithm(packed_plan), adnn_plan_get_algorithm(plain));
  const size_t nx = (size_t)span(&d0.x), nw = (size_t)span(&d0.w), ny = (size_t)span(&d0.y);
  const size_t nb = (size_t)cc->k;
  float *hx = malloc(nx * sizeof *hx), *hw = malloc(nw * sizeof *hw), *hb = malloc(nb * sizeof *hb);
  float *hy0 = malloc(ny * sizeof *hy0), *hy1 = malloc(ny * sizeof *hy1);
  double *want = malloc(ny * sizeof *want), *abs = malloc(ny * sizeof *abs);
  fill(hx, nx, rng);
  fill(hw, nw, rng);
  fill(hb, nb, rng);
  conv_oracle(&d0, hx, hw, hb, want, abs);
  size_t pbytes = 0;
  is_status(adnn_plan_get_packed_weights_bytes(packed_plan, &pbytes), ADNN_STATUS_SUCCESS,
            "%s: packed size queried", what);
  ok(pbytes >= 1, "%s: packed size %zu bytes (w spans %zu)", what, pbytes, nw * sizeof(float));
  float *x = dev_alloc(nx), *w = dev_alloc(nw), *b = dev_alloc(nb), *y = dev_alloc(ny);
  float *pw = dev_alloc((pbytes + sizeof(float) - 1) / sizeof(float));
  upload(x, hx, nx);
  upload(w, hw, nw);
  upload(b, hb, nb);
  poison(y, ny);
  const void *in0[3] = {x, w, b};
  is_status(adnn_plan_execute(plain, in0, 3, y), ADNN_STATUS_SUCCESS, "%s: plain execute", what);
  download(hy0, y, ny);
  adnn_status st = adnn_plan_pack_weights(packed_plan, w, pw, pbytes);
  is_status(st, ADNN_STATUS_SUCCESS, "%s: weights packed", what);
  if (st != ADNN_STATUS_SUCCESS) diag("%s", adnn_last_error());
  /* The plan must read the packed buffer alone from now on. */
  poison(w, nw);
  poison(y, ny);
  const void *in1[3] = {x, pw, b};
  is_status(adnn_plan_execute(packed_plan, in1, 3, y), ADNN_STATUS_SUCCESS,
            "%s: prepacked execute", what);
  download(hy1, y, ny);
  const double tol = algo == ADNN_CONV2D_ALGO_WINOGRAD_F2X3 ? 1e-4 : 1e-5;
  check_result(what, hy1, hy0, want, abs, ny, tol, same);
  adnn_free(ctx, x);
  adnn_free(ctx, w);
  adnn_free(ctx, b);
  adnn_free(ctx, y);
  adnn_free(ctx, pw);
  free(hx);
  free(hw);
  free(hb);
  free(hy0);
  free(hy1);
  free(want);
  free(abs);
  adnn_plan_destroy(plain);
  adnn_plan_destroy(packed_plan);
  return 1;
}

/* ---- matmul ------------------------------------------------------------- */

typedef struct mm_case {
  const char *name;
  int64_t batch, m, n, k;
  int b_transposed; /* b [K, N] with strides [1, K] (a Linear layer's weight) */
} mm_case;

static const mm_case mm_cases[] = {
    {"batch 3, 17x19x23", 3, 17, 19, 23, 0},
    {"Linear weight (b transposed), 33x40x70", 1, 33, 40, 70, 1},
    {"1x1x1", 1, 1, 1, 1, 0},
};

static void mm_desc(adnn_matmul_desc *d, const mm_case *mc, int prepacked) {
  int64_t ad[3] = {mc->batch, mc->m, mc->k}, bd[2] = {mc->k, mc->n}, yd[3] = {mc->batch, mc->m, mc->n};
  int64_t biasd[1] = {mc->n};
  adnn_matmul_desc_init(d);
  adnn_tensor_desc_init(&d->a, ADNN_DTYPE_F32, 3, ad);
  adnn_tensor_desc_init(&d->b, ADNN_DTYPE_F32, 2, bd);
  if (mc->b_transposed) {
    d->b.strides[0] = 1;
    d->b.strides[1] = mc->k;
  }
  adnn_tensor_desc_init(&d->y, ADNN_DTYPE_F32, 3, yd);
  adnn_tensor_desc_init(&d->bias, ADNN_DTYPE_F32, 1, biasd);
  d->has_bias = 1;
  d->alpha = 0.75;
  d->activation.kind = ADNN_ACTIVATION_RELU;
  d->weights_prepacked = prepacked;
}

static void mm_run(const mm_case *mc, tap_rng *rng) {
  adnn_matmul_desc d0, d1;
  mm_desc(&d0, mc, 0);
  mm_desc(&d1, mc, 1);
  char what[160];
  snprintf(what, sizeof what, "matmul %s", mc->name);
  adnn_plan *plain = NULL, *pp = NULL;
  adnn_status s0 = adnn_plan_create_matmul(ctx, &d0, &plain);
  if (s0 != ADNN_STATUS_SUCCESS) diag("plain: %s", adnn_last_error());
  adnn_status s1 = adnn_plan_create_matmul(ctx, &d1, &pp);
  if (s1 != ADNN_STATUS_SUCCESS) diag("prepacked: %s", adnn_last_error());
  if (!ok(s0 == ADNN_STATUS_SUCCESS && s1 == ADNN_STATUS_SUCCESS, "%s: both plans created",
          what)) {
    diag("%s", adnn_last_error());
    adnn_plan_destroy(plain);
    return;
  }
  const int same = strcmp(adnn_plan_get_algorithm(pp), adnn_plan_get_algorithm(plain)) == 0;
  if (tuning)
    check_measured(what, pp);
  else
    ok(same, "%s: both plans run the same algorithm (%s, %s)", what,
       adnn_plan_get_algorithm(pp), adnn_plan_get_algorithm(plain));
  const size_t na = (size_t)span(&d0.a), nb = (size_t)span(&d0.b), ny = (size_t)span(&d0.y);
  const size_t nbias = (size_t)mc->n;
  float *ha = malloc(na * sizeof *ha), *hb = malloc(nb * sizeof *hb);
  float *hbias = malloc(nbias * sizeof *hbias);
  float *hy0 = malloc(ny * sizeof *hy0), *hy1 = malloc(ny * sizeof *hy1);
  double *want = malloc(ny * sizeof *want), *abs = malloc(ny * sizeof *abs);
  fill(ha, na, rng);
  fill(hb, nb, rng);
  fill(hbias, nbias, rng);
  for (int64_t t = 0; t < mc->batch; t++)
    for (int64_t i = 0; i < mc->m; i++)
      for (int64_t j = 0; j < mc->n; j++) {
        double sum = 0, sa = 0;
        for (int64_t q = 0; q < mc->k; q++) {
          const double av = ha[(t * mc->m + i) * mc->k + q];
          const double bv = hb[q * d0.b.strides[0] + j * d0.b.strides[1]];
          sum += av * bv;
          sa += fabs(av * bv);
        }
        sum = 0.75 * sum + hbias[j];
        const size_t o = (size_t)((t * mc->m + i) * mc->n + j);
        want[o] = sum > 0 ? sum : 0;
        abs[o] = 0.75 * sa + fabs((double)hbias[j]);
      }
  size_t pbytes = 0;
  is_status(adnn_plan_get_packed_weights_bytes(pp, &pbytes), ADNN_STATUS_SUCCESS,
            "%s: packed size queried", what);
  float *a = dev_alloc(na), *b = dev_alloc(nb), *bias = dev_alloc(nbias), *y = dev_alloc(ny);
  float *pb = dev_alloc((pbytes + sizeof(float) - 1) / sizeof(float));
  upload(a, ha, na);
  upload(b, hb, nb);
  upload(bias, hbias, nbias);
  poison(y, ny);
  const void *in0[3] = {a, b, bias};
  is_status(adnn_plan_execute(plain, in0, 3, y), ADNN_STATUS_SUCCESS, "%s: plain execute", what);
  download(hy0, y, ny);
  is_status(adnn_plan_pack_weights(pp, b, pb, pbytes), ADNN_STATUS_SUCCESS, "%s: b packed", what);
  poison(b, nb);
  poison(y, ny);
  const void *in1[3] = {a, pb, bias};
  is_status(adnn_plan_execute(pp, in1, 3, y), ADNN_STATUS_SUCCESS, "%s: prepacked execute", what);
  download(hy1, y, ny);
  check_result(what, hy1, hy0, want, abs, ny, 1e-5, same);
  adnn_free(ctx, a);
  adnn_free(ctx, b);
  adnn_free(ctx, bias);
  adnn_free(ctx, y);
  adnn_free(ctx, pb);
  free(ha);
  free(hb);
  free(hbias);
  free(hy0);
  free(hy1);
  free(want);
  free(abs);
  adnn_plan_destroy(plain);
  adnn_plan_destroy(pp);
}

/* ---- The tuner: a prepacked plan measured on its candidates --------------- */

static void tuned_run(tap_rng *rng) {
  adnn_tune_options o;
  adnn_tune_options_init(&o);
  o.mode = ADNN_TUNE_EXHAUSTIVE;
  o.time_budget_ms = 200;
  adnn_context_set_tune_options(ctx, &o);
  tuning = 1;
  /* AUTO: every candidate the backend lists is measured on packed scratch. */
  const conv_case cc = {"3x3 pad 1, tuned", 1, 4, 6, 8, 8, 3, 3, 1, 1, 1, 0};
  conv_run(&cc, ADNN_CONV2D_ALGO_AUTO, rng);
  mm_run(&mm_cases[0], rng);
  adnn_tune_options_init(&o);
  o.mode = ADNN_TUNE_OFF;
  adnn_context_set_tune_options(ctx, &o);
  tuning = 0;
}

/* ---- Bad input ------------------------------------------------------------ */

static void bad_input(void) {
  const conv_case *cc = &conv_cases[0];
  adnn_conv2d_desc d0, d1;
  conv_desc(&d0, cc, ADNN_CONV2D_ALGO_AUTO, 0);
  conv_desc(&d1, cc, ADNN_CONV2D_ALGO_AUTO, 1);
  adnn_plan *plain = NULL, *pp = NULL, *act = NULL;
  adnn_plan_create_conv2d(ctx, &d0, &plain);
  adnn_plan_create_conv2d(ctx, &d1, &pp);
  adnn_activation_desc ad;
  adnn_activation_desc_init(&ad);
  int64_t dims[1] = {16};
  adnn_tensor_desc_init(&ad.x, ADNN_DTYPE_F32, 1, dims);
  adnn_tensor_desc_init(&ad.y, ADNN_DTYPE_F32, 1, dims);
  adnn_plan_create_activation(ctx, &ad, &act);
  if (!ok(plain && pp && act, "bad input: plans created")) return;

  adnn_conv2d_desc d2 = d1;
  d2.weights_prepacked = 2;
  adnn_plan *never = NULL;
  is_status(adnn_plan_create_conv2d(ctx, &d2, &never), ADNN_STATUS_BAD_PARAM,
            "conv2d weights_prepacked = 2 is refused");
  contains(adnn_last_error(), "weights_prepacked", "... naming the field");
  adnn_matmul_desc md;
  mm_desc(&md, &mm_cases[0], -1);
  is_status(adnn_plan_create_matmul(ctx, &md, &never), ADNN_STATUS_BAD_PARAM,
            "matmul weights_prepacked = -1 is refused");
  contains(adnn_last_error(), "weights_prepacked", "... naming the field");

  size_t bytes = 0;
  is_status(adnn_plan_get_packed_weights_bytes(NULL, &bytes), ADNN_STATUS_BAD_PARAM_NULL,
            "get_packed_weights_bytes: NULL plan");
  is_status(adnn_plan_get_packed_weights_bytes(pp, NULL), ADNN_STATUS_BAD_PARAM_NULL,
            "get_packed_weights_bytes: NULL bytes");
  contains(adnn_last_error(), "bytes is NULL", "... says so");
  is_status(adnn_plan_get_packed_weights_bytes(plain, &bytes), ADNN_STATUS_BAD_PARAM,
            "get_packed_weights_bytes: a plan created without weights_prepacked");
  contains(adnn_last_error(), "without weights_prepacked", "... says so");
  is_status(adnn_plan_get_packed_weights_bytes(act, &bytes), ADNN_STATUS_BAD_PARAM,
            "get_packed_weights_bytes: an activation plan");
  contains(adnn_last_error(), "no weights", "... says so");

  is_status(adnn_plan_get_packed_weights_bytes(pp, &bytes), ADNN_STATUS_SUCCESS, "packed size");
  const size_t nw = (size_t)span(&d1.w);
  float *w = dev_alloc(nw), *pw = dev_alloc(bytes / sizeof(float) + 1);
  float *big = dev_alloc(bytes / sizeof(float) + nw + 1);
  is_status(adnn_plan_pack_weights(NULL, w, pw, bytes), ADNN_STATUS_BAD_PARAM_NULL,
            "pack_weights: NULL plan");
  is_status(adnn_plan_pack_weights(pp, NULL, pw, bytes), ADNN_STATUS_BAD_PARAM_NULL,
            "pack_weights: NULL w");
  contains(adnn_last_error(), "w is NULL", "... says so");
  is_status(adnn_plan_pack_weights(pp, w, NULL, bytes), ADNN_STATUS_BAD_PARAM_NULL,
            "pack_weights: NULL packed");
  contains(adnn_last_error(), "packed is NULL", "... says so");
  is_status(adnn_plan_pack_weights(pp, w, pw, bytes - 1), ADNN_STATUS_BAD_PARAM,
            "pack_weights: packed_bytes one too small");
  contains(adnn_last_error(), "packed_bytes", "... says so");
  is_status(adnn_plan_pack_weights(plain, w, pw, bytes), ADNN_STATUS_BAD_PARAM,
            "pack_weights: a plan created without weights_prepacked");
  contains(adnn_last_error(), "without weights_prepacked", "... says so");
  is_status(adnn_plan_pack_weights(act, w, pw, bytes), ADNN_STATUS_BAD_PARAM,
            "pack_weights: an activation plan");
  contains(adnn_last_error(), "no weights", "... says so");
  float *host = malloc(bytes + nw * sizeof(float));
  is_status(adnn_plan_pack_weights(pp, host, pw, bytes), ADNN_STATUS_BAD_PARAM_MEMORY,
            "pack_weights: w not memory of the context");
  contains(adnn_last_error(), "w", "... names w: %s", adnn_last_error());
  is_status(adnn_plan_pack_weights(pp, w, host, bytes), ADNN_STATUS_BAD_PARAM_MEMORY,
            "pack_weights: packed not memory of the context");
  contains(adnn_last_error(), "packed", "... names packed");
  /* The packed span running past the end of its allocation. */
  is_status(adnn_plan_pack_weights(pp, w, pw + 2, bytes), ADNN_STATUS_BAD_PARAM_MEMORY,
            "pack_weights: packed's span outside its allocation");
  contains(adnn_last_error(), "packed", "... names packed");
  is_status(adnn_plan_pack_weights(pp, w + 1, pw, bytes), ADNN_STATUS_BAD_PARAM_MEMORY,
            "pack_weights: w's span outside its allocation");
  is_status(adnn_plan_pack_weights(pp, big, big + 1, bytes), ADNN_STATUS_BAD_PARAM,
            "pack_weights: w and packed overlap");
  contains(adnn_last_error(), "overlap", "... says so");
  /* A prepacked plan's weight input is the packed buffer: a buffer of w's
   * descriptor span is too short when the packed form is larger. */
  if (bytes > nw * sizeof(float)) {
    float *x = dev_alloc((size_t)span(&d1.x)), *b = dev_alloc((size_t)cc->k);
    float *y = dev_alloc((size_t)span(&d1.y));
    const void *in[3] = {x, w, b};
    is_status(adnn_plan_execute(pp, in, 3, y), ADNN_STATUS_BAD_PARAM_MEMORY,
              "execute: a prepacked plan given a w-sized buffer");
    adnn_free(ctx, x);
    adnn_free(ctx, b);
    adnn_free(ctx, y);
  } else {
    tap_skip("the packed form is not larger than w here");
  }
  free(host);
  adnn_plan_destroy(pp);
  is_status(adnn_plan_get_packed_weights_bytes(pp, &bytes), ADNN_STATUS_BAD_PARAM_HANDLE,
            "get_packed_weights_bytes: a destroyed plan");
  is_status(adnn_plan_pack_weights(pp, w, pw, bytes), ADNN_STATUS_BAD_PARAM_HANDLE,
            "pack_weights: a destroyed plan");
  adnn_free(ctx, w);
  adnn_free(ctx, pw);
  adnn_free(ctx, big);
  adnn_plan_destroy(plain);
  adnn_plan_destroy(act);
}

int main(void) {
  char dir[512];
  if (!tmpdir_make(dir, sizeof dir, "adnn-plan-prepack")) return tap_skip_all("no temp dir");
  setenv("ADNN_CACHE_DIR", dir, 1);
  const char *backend = getenv("ADNN_BACKEND");
  if (adnn_context_create(backend && *backend ? backend : "cpu", &ctx) != ADNN_STATUS_SUCCESS) {
    tmpdir_remove(dir);
    return tap_skip_all(adnn_last_error());
  }
  adnn_tune_options o;
  adnn_tune_options_init(&o);
  o.mode = ADNN_TUNE_OFF;
  adnn_context_set_tune_options(ctx, &o);
  tap_rng rng = tap_rng_seed(20261202);
  /* Every algorithm of the enum, forced, on the problems it can run. */
  for (int a = 1; strcmp(adnn_conv2d_algorithm_name((adnn_conv2d_algorithm)a), "unknown") != 0;
       a++) {
    int ran = 0;
    for (size_t i = 0; i < sizeof conv_cases / sizeof conv_cases[0]; i++)
      ran += conv_run(&conv_cases[i], (adnn_conv2d_algorithm)a, &rng);
    if (!ran) diag("the backend runs algorithm %s on none of these problems",
                   adnn_conv2d_algorithm_name((adnn_conv2d_algorithm)a));
  }
  for (size_t i = 0; i < sizeof mm_cases / sizeof mm_cases[0]; i++) mm_run(&mm_cases[i], &rng);
  tuned_run(&rng);
  bad_input();
  adnn_context_destroy(ctx);
  tmpdir_remove(dir);
  return tap_done();
}
