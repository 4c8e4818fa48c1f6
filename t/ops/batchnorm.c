/* Batch normalization (inference) in the conformance harness: traits, oracle
 * (doc/ops.md, "Batch normalization"), cases and the oracle's self-test. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>

/* x, then scale, shift, mean and var: packed vectors of C elements. */
static int batchnorm_inputs(const harness_desc *hd, harness_tensor *in) {
  const adnn_batchnorm_desc *d = &hd->batchnorm;
  static const char *const names[5] = {"x", "scale", "shift", "mean", "var"};
  in[0] = (harness_tensor){names[0], d->x};
  const adnn_tensor_desc v = harness_vector_desc(ADNN_OP_PARAM_DTYPE(d->x.dtype), d->x.rank >= 2 ? d->x.dims[1] : 1);
  for (int i = 1; i < 5; i++) in[i] = (harness_tensor){names[i], v};
  return 5;
}

static adnn_tensor_desc batchnorm_output(const harness_desc *hd) { return hd->batchnorm.y; }

static void batchnorm_set_dtype(harness_desc *hd, adnn_dtype dt) {
  hd->batchnorm.x.dtype = hd->batchnorm.y.dtype = dt;
}

static harness_tolerance batchnorm_tolerance(const harness_desc *hd, adnn_dtype dt) {
  /* F16/BF16: the F32 bound (F32 parameters) plus one rounding of y
   * (doc/numerics.md). */
  const harness_tolerance f32 = {2e-6, 1e-5};
  return harness_lowp_tolerance(dt, dt == ADNN_DTYPE_F64 ? (harness_tolerance){1e-13, 1e-12} : f32,
                                f32, 1.0);
}

/* Values in [-1, 1), variances in [0.5, 1.5): var + epsilon stays away from 0. */
static void batchnorm_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  for (int i = 0; i < 4; i++) harness_fill_uniform(&in[i], r, -1.0, 1.0);
  harness_fill_uniform(&in[4], r, 0.5, 1.5);
}

/* y = act(scale[c] * (x - mean[c]) / sqrt(var[c] + epsilon) + shift[c]), c the
 * index along dim 1 whatever the strides. */
static int batchnorm_oracle(const harness_desc *hd, const double *const *in, double *y,
                            char *why, size_t why_len) {
  const adnn_batchnorm_desc *d = &hd->batchnorm;
  int same = d->x.rank >= 2 && d->y.rank == d->x.rank;
  for (int i = 0; same && i < d->x.rank; i++) same = d->x.dims[i] == d->y.dims[i];
  if (!same) {
    snprintf(why, why_len, "batchnorm: x of rank below 2, or x and y dims differ");
    return -1;
  }
  const double *scale = in[1], *shift = in[2], *mean = in[3], *var = in[4];
  harness_index ix, iy;
  for (harness_index_first(&ix, &d->x), harness_index_first(&iy, &d->y); ix.valid;
       harness_index_next(&ix, &d->x), harness_index_next(&iy, &d->y)) {
    const int64_t c = ix.idx[1];
    const long double v = scale[c] * ((long double)in[0][ix.offset] - mean[c]) /
                              sqrtl((long double)var[c] + d->epsilon) +
                          shift[c];
    y[iy.offset] = (double)harness_activation_oracle(&d->activation, v);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

static void bn_case(harness_suite *suite, int rank, const int64_t *dims,
                    enum harness_layout layout, adnn_dtype dt, adnn_activation_kind act,
                    double alpha, double beta, int inplace, double eps, const char *tag) {
  harness_case c;
  harness_case_init(&c, harness_op_find("batchnorm"), dt, "%s act %d eps %g%s", tag, (int)act,
                    eps, inplace ? " in-place" : "");
  adnn_batchnorm_desc *d = &c.desc.batchnorm;
  adnn_batchnorm_desc_init(d);
  d->epsilon = eps;
  d->activation.kind = act;
  d->activation.alpha = alpha;
  d->activation.beta = beta;
  d->x = harness_tensor_desc(dt, rank, dims, layout);
  d->y = inplace ? d->x
                 : harness_tensor_desc(dt, rank, dims,
                                       layout == HARNESS_NHWC ? HARNESS_NHWC : HARNESS_PACKED);
  if (harness_case_alloc(&c) != 0) return;
  c.inplace = inplace ? 0 : -1;
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  harness_fill_mixed(&c.in[0], &r);
  harness_fill_uniform(&c.in[1], &r, -2.0, 2.0); /* scale */
  harness_fill_uniform(&c.in[2], &r, -1.0, 1.0); /* shift */
  harness_fill_uniform(&c.in[3], &r, -0.5, 0.5); /* mean */
  harness_fill_uniform(&c.in[4], &r, 0.05, 3.0); /* var > 0 */
  harness_submit(suite, &c);
}

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64

static void batchnorm_cases(harness_suite *s) {
  const int64_t nchw[4] = {3, 8, 5, 7}, r2[2] = {9, 16}, r3[3] = {2, 5, 11},
                r5[5] = {2, 3, 2, 3, 4}, big[4] = {2, 64, 28, 28}, one[4] = {1, 3, 1, 1},
                cuda[4] = {3, 5, 6, 7};
  const enum harness_layout P = HARNESS_PACKED, NHWC = HARNESS_NHWC;
  bn_case(s, 4, nchw, P, F32, ADNN_ACTIVATION_IDENTITY, 0, 0, 0, 1e-5, "[3,8,5,7] nchw");
  bn_case(s, 4, nchw, NHWC, F32, ADNN_ACTIVATION_RELU, 0, 0, 0, 1e-5, "[3,8,5,7] nhwc");
  bn_case(s, 4, nchw, P, F32, ADNN_ACTIVATION_CLAMP, 0, 6, 1, 1e-3, "[3,8,5,7] nchw");
  bn_case(s, 4, nchw, NHWC, F32, ADNN_ACTIVATION_SILU, 0, 0, 1, 1e-5, "[3,8,5,7] nhwc");
  bn_case(s, 4, nchw, HARNESS_PADDED, F32, ADNN_ACTIVATION_LEAKY_RELU, 0.2, 0, 0, 1e-5,
          "[3,8,5,7] padded");
  bn_case(s, 2, r2, P, F32, ADNN_ACTIVATION_IDENTITY, 0, 0, 0, 0.0, "[9,16]");
  bn_case(s, 3, r3, P, F32, ADNN_ACTIVATION_TANH, 0, 0, 0, 1e-5, "[2,5,11]");
  bn_case(s, 5, r5, P, F32, ADNN_ACTIVATION_IDENTITY, 0, 0, 0, 1e-5, "[2,3,2,3,4]");
  bn_case(s, 4, one, P, F32, ADNN_ACTIVATION_RELU, 0, 0, 0, 1e-5, "[1,3,1,1]");
  bn_case(s, 4, big, NHWC, F32, ADNN_ACTIVATION_RELU, 0, 0, 0, 1e-5, "[2,64,28,28] nhwc");
  bn_case(s, 4, big, P, F32, ADNN_ACTIVATION_IDENTITY, 0, 0, 0, 1e-5, "[2,64,28,28] nchw");
  bn_case(s, 4, cuda, NHWC, F32, ADNN_ACTIVATION_CLAMP, 0, 6, 0, 1e-5, "[3,5,6,7] nhwc");
  /* F64: the CPU plugin's reference kernels against the oracle. */
  bn_case(s, 4, nchw, P, F64, ADNN_ACTIVATION_RELU, 0, 0, 0, 1e-5, "[3,8,5,7] nchw");
  bn_case(s, 4, nchw, NHWC, F64, ADNN_ACTIVATION_IDENTITY, 0, 0, 0, 1e-5, "[3,8,5,7] nhwc");
  bn_case(s, 4, cuda, P, F64, ADNN_ACTIVATION_SIGMOID, 0, 0, 0, 1e-5, "[3,5,6,7] nchw");
  bn_case(s, 4, nchw, HARNESS_PADDED, F64, ADNN_ACTIVATION_LEAKY_RELU, 0.2, 0, 0, 1e-5,
          "[3,8,5,7] padded");
  bn_case(s, 3, r3, P, F64, ADNN_ACTIVATION_SILU, 0, 0, 1, 0.0, "[2,5,11]");
  /* F16 and BF16 data with F32 scale, shift, mean and var
   * (ADNN_OP_PARAM_DTYPE), one rounding of y. */
  static const adnn_dtype lowp[2] = {ADNN_DTYPE_F16, ADNN_DTYPE_BF16};
  for (int t = 0; t < 2; t++) {
    bn_case(s, 4, nchw, P, lowp[t], ADNN_ACTIVATION_IDENTITY, 0, 0, 0, 1e-5, "[3,8,5,7] nchw");
    bn_case(s, 4, nchw, NHWC, lowp[t], ADNN_ACTIVATION_RELU, 0, 0, 1, 1e-5, "[3,8,5,7] nhwc");
    bn_case(s, 4, nchw, HARNESS_PADDED, lowp[t], ADNN_ACTIVATION_LEAKY_RELU, 0.2, 0, 0, 1e-5,
            "[3,8,5,7] padded");
    bn_case(s, 4, cuda, P, lowp[t], ADNN_ACTIVATION_SIGMOID, 0, 0, 0, 1e-5, "[3,5,6,7] nchw");
    bn_case(s, 4, big, NHWC, lowp[t], ADNN_ACTIVATION_CLAMP, 0, 6, 0, 1e-5, "[2,64,28,28] nhwc");
  }
}

/* ------------------------------------------------------------------------ */
/* Self-test of the oracle                                                   */
/* ------------------------------------------------------------------------ */

static void batchnorm_oracle_selftests(const harness_report *rep) {
  /* x [1, 3, 1, 2] stored N H W C: channel c is every third value. With
   * epsilon 0 and var 4 (sqrt 2): channel 0 (x 1, 2; mean 1, scale 1, shift 0)
   * gives 0 and 0.5; channel 1 (x 10, 20; mean 10, scale 2, shift 1) gives 1
   * and 1 + 2 * 10 / 2 = 11; channel 2 (x 100, 200; mean 100, scale 3, shift
   * 2) gives 2 and 2 + 3 * 100 / 2 = 152. */
  double x[6] = {1, 10, 100, 2, 20, 200};
  double sc[3] = {1, 2, 3}, sh[3] = {0, 1, 2}, mu[3] = {1, 10, 100}, var[3] = {4, 4, 4}, y[6];
  harness_desc hd;
  adnn_batchnorm_desc_init(&hd.batchnorm);
  hd.batchnorm.epsilon = 0;
  hd.batchnorm.x = hd.batchnorm.y =
      harness_tensor_desc4(ADNN_DTYPE_F64, 1, 3, 1, 2, HARNESS_NHWC);
  const double *in[5] = {x, sc, sh, mu, var};
  char why[256];
  const int ran = batchnorm_oracle(&hd, in, y, why, sizeof why) == 0;
  harness_ok(rep, ran && y[0] == 0 && y[1] == 1 && y[2] == 2 && y[3] == 0.5 && y[4] == 11 &&
                      y[5] == 152,
             "oracle: batch norm by hand with NHWC strides");
}

const harness_op_traits harness_batchnorm_traits = {
    .inputs = batchnorm_inputs,
    .output = batchnorm_output,
    .set_dtype = batchnorm_set_dtype,
    .oracle = batchnorm_oracle,
    .tolerance = batchnorm_tolerance,
    .fill = batchnorm_fill,
    .variant_count = 1,
    .cases = batchnorm_cases,
    .oracle_selftests = batchnorm_oracle_selftests,
};
