/* Softmax cross-entropy and its backward in the conformance harness: traits,
 * oracles (doc/ops.md, "Softmax cross-entropy"), cases, the oracles'
 * self-tests and bad descriptors. Labels are I32 inputs: the harness holds
 * them as doubles and uploads them as int32. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64

/* ------------------------------------------------------------------------ */
/* Traits                                                                    */
/* ------------------------------------------------------------------------ */

static int xent_inputs(const harness_desc *hd, harness_tensor *in) {
  in[0] = (harness_tensor){"logits", hd->softmax_cross_entropy.logits};
  in[1] = (harness_tensor){"labels", hd->softmax_cross_entropy.labels};
  return 2;
}

static adnn_tensor_desc xent_output(const harness_desc *hd) {
  return hd->softmax_cross_entropy.loss;
}

/* The labels stay I32: the op's dtype is the logits'. */
static void xent_set_dtype(harness_desc *hd, adnn_dtype dt) {
  hd->softmax_cross_entropy.logits.dtype = hd->softmax_cross_entropy.loss.dtype = dt;
}

static harness_tolerance xent_tolerance(const harness_desc *hd, adnn_dtype dt) {
  (void)hd;
  const harness_tolerance f32 = {4e-6, 1e-5};
  /* F16/BF16 logits (and loss, dloss, dlogits): the F32 bound plus one
   * rounding of the result (doc/numerics.md). */
  return harness_lowp_tolerance(dt, dt == F64 ? (harness_tolerance){1e-13, 1e-12} : f32, f32, 1.0);
}

/* Logits uniform in [-8, 8); labels uniform in 0..C-1, about one in ten set
 * to ignore_index. */
static void fill_labels(harness_buffer *b, int64_t C, int64_t ignore, tap_rng *r) {
  for (int64_t i = 0; i < b->span; i++) {
    if (!b->member[i]) continue;
    const double u = tap_rng_uniform(r, 0.0, 1.0);
    int64_t t = (int64_t)floor(tap_rng_uniform(r, 0.0, (double)C));
    if (t >= C) t = C - 1;
    b->v[i] = u < 0.1 ? (double)ignore : (double)t;
  }
}

static void xent_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  (void)n_in;
  const adnn_softmax_cross_entropy_desc *d = &hd->softmax_cross_entropy;
  harness_fill_uniform(&in[0], r, -8.0, 8.0);
  fill_labels(&in[1], d->logits.dims[1], d->ignore_index, r);
}

/* ------------------------------------------------------------------------ */
/* Oracles                                                                   */
/* ------------------------------------------------------------------------ */

/* Whether d's shapes are the definition's; the reason otherwise. */
static int xent_shapes(const adnn_softmax_cross_entropy_desc *d, char *why, size_t why_len) {
  const int none = d->reduction == ADNN_LOSS_REDUCTION_NONE;
  if (d->logits.rank != 2 || d->labels.rank != 1 || d->labels.dims[0] != d->logits.dims[0] ||
      d->loss.rank != (none ? 1 : 0) || (none && d->loss.dims[0] != d->logits.dims[0])) {
    snprintf(why, why_len, "softmax_cross_entropy: logits must be [N, C], labels [N], loss %s",
             none ? "[N]" : "a scalar");
    return 0;
  }
  return 1;
}

/* Row n's logsumexp in long double (max-subtracted), NaN for a row with NaN
 * or +inf, or only -inf. */
static long double row_lse(const adnn_softmax_cross_entropy_desc *d, const double *x, int64_t n) {
  const int64_t C = d->logits.dims[1], s0 = d->logits.strides[0], s1 = d->logits.strides[1];
  long double m = -INFINITY;
  for (int64_t c = 0; c < C; c++) {
    const long double v = x[n * s0 + c * s1];
    if (isnan(v) || v == INFINITY) return NAN;
    if (v > m) m = v;
  }
  if (m == -INFINITY) return NAN;
  harness_sum s;
  harness_sum_init(&s);
  for (int64_t c = 0; c < C; c++) harness_sum_add(&s, expl(x[n * s0 + c * s1] - m));
  return m + logl(harness_sum_value(&s));
}

static int64_t label_at(const adnn_softmax_cross_entropy_desc *d, const double *labels,
                        int64_t n) {
  return (int64_t)labels[n * d->labels.strides[0]];
}

/* loss_n = lse_n - x[n, t_n]; 0 for an ignored sample, NaN for a label
 * outside 0..C-1. */
static long double sample_loss(const adnn_softmax_cross_entropy_desc *d, const double *x,
                               const double *labels, int64_t n) {
  const int64_t t = label_at(d, labels, n), C = d->logits.dims[1];
  if (t == d->ignore_index) return 0.0L;
  if (t < 0 || t >= C) return NAN;
  return row_lse(d, x, n) - (long double)x[n * d->logits.strides[0] + t * d->logits.strides[1]];
}

static int64_t counted(const adnn_softmax_cross_entropy_desc *d, const double *labels) {
  int64_t k = 0;
  for (int64_t n = 0; n < d->logits.dims[0]; n++) k += label_at(d, labels, n) != d->ignore_index;
  return k;
}

static int xent_oracle(const harness_desc *hd, const double *const *in, double *y, char *why,
                       size_t why_len) {
  const adnn_softmax_cross_entropy_desc *d = &hd->softmax_cross_entropy;
  if (!xent_shapes(d, why, why_len)) return -1;
  const int64_t N = d->logits.dims[0];
  if (d->reduction == ADNN_LOSS_REDUCTION_NONE) {
    for (int64_t n = 0; n < N; n++)
      y[n * d->loss.strides[0]] = (double)sample_loss(d, in[0], in[1], n);
    return 0;
  }
  harness_sum s;
  harness_sum_init(&s);
  for (int64_t n = 0; n < N; n++) harness_sum_add(&s, sample_loss(d, in[0], in[1], n));
  long double total = harness_sum_value(&s);
  /* MEAN with every sample ignored is 0 / 0 = NaN, as in PyTorch. */
  if (d->reduction == ADNN_LOSS_REDUCTION_MEAN) total /= (long double)counted(d, in[1]);
  y[0] = (double)total;
  return 0;
}

/* dlogits[n, c] = g_n (softmax(x_n)_c - [c == t_n]); g_n = dloss[n] (NONE),
 * dloss (SUM), dloss / count (MEAN); ignored rows 0; a label out of range or
 * a row without a finite logsumexp gives a NaN row. */
static int xent_backward_oracle(const harness_desc *hd, const double *const *in, double *y,
                                char *why, size_t why_len) {
  const adnn_softmax_cross_entropy_backward_desc *b = &hd->softmax_cross_entropy_backward;
  const adnn_softmax_cross_entropy_desc *d = b->forward;
  if (d == NULL) {
    snprintf(why, why_len, "softmax_cross_entropy_backward: forward is NULL");
    return -1;
  }
  if (!xent_shapes(d, why, why_len)) return -1;
  const double *x = in[0], *labels = in[1], *dloss = in[2];
  const int64_t N = d->logits.dims[0], C = d->logits.dims[1];
  const int64_t s0 = d->logits.strides[0], s1 = d->logits.strides[1];
  long double scale = 1.0L;
  if (d->reduction != ADNN_LOSS_REDUCTION_NONE) scale = dloss[0];
  if (d->reduction == ADNN_LOSS_REDUCTION_MEAN) scale /= (long double)counted(d, labels);
  for (int64_t n = 0; n < N; n++) {
    const int64_t t = label_at(d, labels, n);
    if (t == d->ignore_index) {
      for (int64_t c = 0; c < C; c++) y[n * s0 + c * s1] = 0.0;
      continue;
    }
    const long double g =
        d->reduction == ADNN_LOSS_REDUCTION_NONE ? (long double)dloss[n * d->loss.strides[0]] : scale;
    const long double lse = t < 0 || t >= C ? (long double)NAN : row_lse(d, x, n);
    for (int64_t c = 0; c < C; c++) {
      const long double e = x[n * s0 + c * s1] - lse;
      y[n * s0 + c * s1] = (double)(g * (c == t ? expm1l(e) : expl(e)));
    }
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

/* The layouts the cases use for logits: packed, padded rows, or transposed
 * (C-major: strides {1, N}, so that the class axis is strided). */
enum logits_layout { L_PACKED, L_PADDED, L_TRANSPOSED };

/* What a case puts into its data beyond the random values. */
enum { SP_NONE = 0, SP_SPECIALS = 1, SP_ALL_IGNORED = 2, SP_OUT_OF_RANGE = 4 };

typedef struct xent_shape {
  int64_t N, C;
  adnn_loss_reduction reduction;
  int64_t ignore_index;
  enum logits_layout layout;
  int64_t label_stride, loss_stride; /* 1 packed; more for strided vectors */
  double scale;                      /* logits uniform in [-scale, scale) */
  int specials;
} xent_shape;

static adnn_tensor_desc strided_vector(adnn_dtype dt, int64_t n, int64_t stride) {
  adnn_tensor_desc t;
  adnn_tensor_desc_init_strided(&t, dt, 1, &n, &stride);
  return t;
}

static void xent_describe(const xent_shape *s, adnn_dtype dt, adnn_softmax_cross_entropy_desc *d) {
  adnn_softmax_cross_entropy_desc_init(d);
  const int64_t dims[2] = {s->N, s->C};
  if (s->layout == L_TRANSPOSED) {
    const int64_t strides[2] = {1, s->N};
    adnn_tensor_desc_init_strided(&d->logits, dt, 2, dims, strides);
  } else {
    d->logits = harness_tensor_desc(dt, 2, dims, s->layout == L_PADDED ? HARNESS_PADDED
                                                                         : HARNESS_PACKED);
  }
  d->labels = strided_vector(ADNN_DTYPE_I32, s->N, s->label_stride);
  d->reduction = s->reduction;
  d->ignore_index = s->ignore_index;
  if (s->reduction == ADNN_LOSS_REDUCTION_NONE) d->loss = strided_vector(dt, s->N, s->loss_stride);
  else adnn_tensor_desc_init(&d->loss, dt, 0, NULL);
}

/* Random logits and labels, then the case's special values:
 *   SP_SPECIALS (N >= 6): row 0 holds a NaN, row 1 a +inf, row 2 only -inf,
 *     row 3 has -inf at its label (loss +inf), row 4 a -inf elsewhere and a
 *     logit of 80, row 5 is ignored although it holds a NaN;
 *   SP_OUT_OF_RANGE (N >= 2): labels C and -5 (not ignore_index) in rows 0
 *     and 1 (NaN);
 *   SP_ALL_IGNORED: every label is ignore_index (MEAN: NaN). */
static void xent_data(const xent_shape *s, const adnn_softmax_cross_entropy_desc *d,
                      harness_buffer *in, tap_rng *r) {
  harness_fill_uniform(&in[0], r, -s->scale, s->scale);
  fill_labels(&in[1], s->C, s->ignore_index, r);
  const int64_t C = s->C;
#define X(n, c) harness_set_element(&in[0], (n) * C + (c), v_)
#define SET(n, c, v)  \
  do {                \
    double v_ = (v);  \
    X(n, c);          \
  } while (0)
#define LABEL(n, t) (in[1].v[harness_offset(&d->labels, (n))] = (double)(t))
  if (s->specials & SP_SPECIALS) {
    LABEL(0, 1);
    SET(0, 2, NAN);
    LABEL(1, 0);
    SET(1, C - 1, INFINITY);
    LABEL(2, 2);
    for (int64_t c = 0; c < C; c++) SET(2, c, -INFINITY);
    LABEL(3, 1);
    SET(3, 1, -INFINITY);
    LABEL(4, 0);
    SET(4, 1, -INFINITY);
    SET(4, 2, 80.0);
    LABEL(5, s->ignore_index);
    SET(5, 0, NAN);
  }
  if (s->specials & SP_OUT_OF_RANGE) {
    LABEL(0, C);
    LABEL(1, -5);
  }
  if (s->specials & SP_ALL_IGNORED)
    for (int64_t n = 0; n < s->N; n++) LABEL(n, s->ignore_index);
#undef X
#undef SET
#undef LABEL
}

static const char *layout_word(enum logits_layout l) {
  return l == L_PADDED ? " padded" : l == L_TRANSPOSED ? " transposed" : "";
}

static void xent_case(harness_suite *suite, const xent_shape *s, adnn_dtype dt) {
  harness_case c;
  harness_case_init(&c, harness_op_find("softmax_cross_entropy"), dt,
                    "xent %s [%lld,%lld]%s ign%lld%s%s%s%s%s x%g",
                    adnn_loss_reduction_name(s->reduction), (long long)s->N, (long long)s->C,
                    layout_word(s->layout), (long long)s->ignore_index,
                    s->label_stride > 1 ? " strided-labels" : "",
                    s->loss_stride > 1 ? " strided-loss" : "",
                    s->specials & SP_SPECIALS ? " nan/inf" : "",
                    s->specials & SP_OUT_OF_RANGE ? " out-of-range" : "",
                    s->specials & SP_ALL_IGNORED ? " all-ignored" : "", s->scale);
  xent_describe(s, dt, &c.desc.softmax_cross_entropy);
  if (harness_case_alloc(&c) != 0) return;
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  xent_data(s, &c.desc.softmax_cross_entropy, c.in, &r);
  harness_submit(suite, &c);
}

/* The backward's cases keep their forward descriptor here: the harness's
 * descriptor holds a pointer to it while the case runs. */
static adnn_softmax_cross_entropy_desc backward_forward;

static void xent_backward_case(harness_suite *suite, const xent_shape *s, adnn_dtype dt) {
  harness_case c;
  harness_case_init(&c, harness_op_find("softmax_cross_entropy_backward"), dt,
                    "xent backward %s [%lld,%lld]%s ign%lld%s%s%s%s%s x%g",
                    adnn_loss_reduction_name(s->reduction), (long long)s->N, (long long)s->C,
                    layout_word(s->layout), (long long)s->ignore_index,
                    s->label_stride > 1 ? " strided-labels" : "",
                    s->loss_stride > 1 ? " strided-dloss" : "",
                    s->specials & SP_SPECIALS ? " nan/inf" : "",
                    s->specials & SP_OUT_OF_RANGE ? " out-of-range" : "",
                    s->specials & SP_ALL_IGNORED ? " all-ignored" : "", s->scale);
  xent_describe(s, dt, &backward_forward);
  adnn_softmax_cross_entropy_backward_desc *b = &c.desc.softmax_cross_entropy_backward;
  adnn_softmax_cross_entropy_backward_desc_init(b);
  b->forward = &backward_forward;
  if (harness_case_alloc(&c) != 0) return;
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  xent_data(s, &backward_forward, c.in, &r);
  harness_fill_uniform(&c.in[2], &r, 0.25, 2.0); /* dloss */
  harness_submit(suite, &c);
}

/* The shapes both directions run. */
static const xent_shape xent_shapes_table[] = {
    {4, 10, ADNN_LOSS_REDUCTION_MEAN, -100, L_PACKED, 1, 1, 3.0, SP_NONE},
    {4, 10, ADNN_LOSS_REDUCTION_SUM, -100, L_PACKED, 1, 1, 3.0, SP_NONE},
    {4, 10, ADNN_LOSS_REDUCTION_NONE, -100, L_PACKED, 1, 1, 3.0, SP_NONE},
    {1, 1, ADNN_LOSS_REDUCTION_MEAN, -100, L_PACKED, 1, 1, 1.0, SP_NONE},
    {7, 1, ADNN_LOSS_REDUCTION_NONE, 3, L_PACKED, 1, 1, 1.0, SP_NONE},
    {37, 129, ADNN_LOSS_REDUCTION_MEAN, 5, L_PADDED, 3, 1, 20.0, SP_NONE},
    {37, 129, ADNN_LOSS_REDUCTION_NONE, -1, L_TRANSPOSED, 2, 3, 20.0, SP_NONE},
    {12, 33, ADNN_LOSS_REDUCTION_SUM, -100, L_TRANSPOSED, 1, 1, 5.0, SP_NONE},
    {9, 5000, ADNN_LOSS_REDUCTION_MEAN, -100, L_PACKED, 1, 1, 20.0, SP_NONE},
    {5, 3001, ADNN_LOSS_REDUCTION_NONE, -100, L_TRANSPOSED, 1, 1, 10.0, SP_NONE},
    {300, 16, ADNN_LOSS_REDUCTION_SUM, 0, L_PACKED, 1, 1, 8.0, SP_NONE},
    {8, 6, ADNN_LOSS_REDUCTION_NONE, -100, L_PACKED, 1, 1, 3.0, SP_SPECIALS},
    {8, 6, ADNN_LOSS_REDUCTION_NONE, 7, L_TRANSPOSED, 1, 1, 3.0, SP_SPECIALS},
    {8, 6, ADNN_LOSS_REDUCTION_SUM, -100, L_PACKED, 1, 1, 3.0, SP_SPECIALS},
    {5, 6, ADNN_LOSS_REDUCTION_NONE, -100, L_PACKED, 1, 1, 3.0, SP_OUT_OF_RANGE},
    {5, 6, ADNN_LOSS_REDUCTION_MEAN, -100, L_PACKED, 1, 1, 3.0, SP_OUT_OF_RANGE},
    {5, 6, ADNN_LOSS_REDUCTION_MEAN, 2, L_PACKED, 1, 1, 3.0, SP_ALL_IGNORED},
    {5, 6, ADNN_LOSS_REDUCTION_SUM, 2, L_PACKED, 1, 1, 3.0, SP_ALL_IGNORED},
};
#define N_SHAPES ((int)(sizeof xent_shapes_table / sizeof xent_shapes_table[0]))

/* F64: the CPU plugin's reference kernels against the oracle. */
static const int f64_rows[] = {0, 2, 5, 6, 8, 11, 15, 16};
/* F16 and BF16 (logits rounded to the type, F32 arithmetic, one rounding of
 * the loss or gradient): every reduction and layout, a wide row, special
 * values and ignored labels. */
static const int lowp_rows[] = {0, 1, 2, 5, 6, 8, 11, 14, 16};
static const adnn_dtype lowp_dtypes[2] = {ADNN_DTYPE_F16, ADNN_DTYPE_BF16};

static void xent_cases(harness_suite *s) {
  for (int i = 0; i < N_SHAPES; i++) xent_case(s, &xent_shapes_table[i], F32);
  for (size_t i = 0; i < sizeof f64_rows / sizeof f64_rows[0]; i++)
    xent_case(s, &xent_shapes_table[f64_rows[i]], F64);
  for (int t = 0; t < 2; t++)
    for (size_t i = 0; i < sizeof lowp_rows / sizeof lowp_rows[0]; i++)
      xent_case(s, &xent_shapes_table[lowp_rows[i]], lowp_dtypes[t]);
}

static void xent_backward_cases(harness_suite *s) {
  for (int i = 0; i < N_SHAPES; i++) xent_backward_case(s, &xent_shapes_table[i], F32);
  for (size_t i = 0; i < sizeof f64_rows / sizeof f64_rows[0]; i++)
    xent_backward_case(s, &xent_shapes_table[f64_rows[i]], F64);
  for (int t = 0; t < 2; t++)
    for (size_t i = 0; i < sizeof lowp_rows / sizeof lowp_rows[0]; i++)
      xent_backward_case(s, &xent_shapes_table[lowp_rows[i]], lowp_dtypes[t]);
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracles                                                 */
/* ------------------------------------------------------------------------ */

static void xent_oracle_selftests(const harness_report *rep) {
  /* Two samples of C = 2: logits [0, ln 3] with label 1 and [0, 0] with
   * label 0. softmax is [1/4, 3/4] and [1/2, 1/2], so the losses are
   * -ln(3/4) = ln 4 - ln 3 and ln 2; MEAN is their half-sum, SUM their sum.
   * With the second sample ignored, MEAN is ln 4 - ln 3 alone. */
  const double x[4] = {0.0, log(3.0), 0.0, 0.0};
  double labels[2] = {1, 0};
  const double l0 = log(4.0) - log(3.0), l1 = log(2.0);
  harness_desc hd;
  adnn_softmax_cross_entropy_desc *d = &hd.softmax_cross_entropy;
  const xent_shape sh = {2, 2, ADNN_LOSS_REDUCTION_NONE, -100, L_PACKED, 1, 1, 1.0, 0};
  xent_describe(&sh, F64, d);
  const double *in[2] = {x, labels};
  double y[2] = {0, 0}, m = 0, s = 0, mi = 0;
  char why[256];
  int good = xent_oracle(&hd, in, y, why, sizeof why) == 0;
  d->reduction = ADNN_LOSS_REDUCTION_SUM;
  adnn_tensor_desc_init(&d->loss, F64, 0, NULL);
  good &= xent_oracle(&hd, in, &s, why, sizeof why) == 0;
  d->reduction = ADNN_LOSS_REDUCTION_MEAN;
  good &= xent_oracle(&hd, in, &m, why, sizeof why) == 0;
  d->ignore_index = 0;
  good &= xent_oracle(&hd, in, &mi, why, sizeof why) == 0;
  harness_ok(rep, good && harness_close(y[0], l0, 1e-15) && harness_close(y[1], l1, 1e-15) &&
                      harness_close(s, l0 + l1, 1e-15) && harness_close(m, (l0 + l1) / 2, 1e-15) &&
                      harness_close(mi, l0, 1e-15),
             "oracle: cross-entropy of [0, ln 3] / 1 and [0, 0] / 0 by hand (none %g %g, sum %g, "
             "mean %g, mean ignoring label 0 %g)", y[0], y[1], s, m, mi);

  /* The gradient of the same two samples, SUM with dloss 2: 2 * (softmax -
   * onehot) = [1/2, -1/2] and [-1, 1]. */
  adnn_softmax_cross_entropy_desc f = *d;
  f.reduction = ADNN_LOSS_REDUCTION_SUM;
  f.ignore_index = -100;
  harness_desc hb;
  adnn_softmax_cross_entropy_backward_desc_init(&hb.softmax_cross_entropy_backward);
  hb.softmax_cross_entropy_backward.forward = &f;
  const double dloss = 2.0;
  const double *bin[3] = {x, labels, &dloss};
  double dx[4];
  good = xent_backward_oracle(&hb, bin, dx, why, sizeof why) == 0;
  harness_ok(rep, good && harness_close(dx[0], 0.5, 1e-15) && harness_close(dx[1], -0.5, 1e-15) &&
                      harness_close(dx[2], -1.0, 1e-15) && harness_close(dx[3], 1.0, 1e-15),
             "oracle: cross-entropy gradient by hand (got %g %g %g %g)", dx[0], dx[1], dx[2],
             dx[3]);

  /* Stability: logits [1000, 1000] with label 0 lose ln 2, and a label whose
   * logit is -inf loses +inf. */
  const double big[4] = {1000.0, 1000.0, 0.0, -INFINITY};
  labels[0] = 0;
  labels[1] = 1;
  xent_describe(&sh, F64, d);
  in[0] = big;
  good = xent_oracle(&hd, in, y, why, sizeof why) == 0;
  /* 1e-12, not 1e-15: under valgrind long double is computed in double, and
   * an unstable formula would give inf or NaN here, not a last-bit error. */
  harness_ok(rep, good && harness_close(y[0], log(2.0), 1e-12) && y[1] == INFINITY,
             "oracle: logits of 1000 are stable, a -inf label logit loses +inf (got %g %g)", y[0],
             y[1]);
}

static void xent_backward_oracle_selftests(const harness_report *rep) {
  /* MEAN over 2 counted samples of 3 (one ignored), dloss 1: the counted
   * rows are (softmax - onehot) / 2 and sum to 0; the ignored row is 0. */
  const double x[6] = {1.0, 2.0, 0.5, -1.0, 3.0, 0.0};
  const double labels[3] = {0, -100, 1};
  const xent_shape sh = {3, 2, ADNN_LOSS_REDUCTION_MEAN, -100, L_PACKED, 1, 1, 1.0, 0};
  adnn_softmax_cross_entropy_desc f;
  xent_describe(&sh, F64, &f);
  harness_desc hb;
  adnn_softmax_cross_entropy_backward_desc_init(&hb.softmax_cross_entropy_backward);
  hb.softmax_cross_entropy_backward.forward = &f;
  const double dloss = 1.0;
  const double *in[3] = {x, labels, &dloss};
  double dx[6];
  char why[256];
  int good = xent_backward_oracle(&hb, in, dx, why, sizeof why) == 0;
  /* Row 0: softmax([1, 2]) = [1, e] / (1 + e); label 0: ([1/(1+e) - 1, e/(1+e)]) / 2. */
  const double e = exp(1.0);
  harness_ok(rep, good && harness_close(dx[0], (1 / (1 + e) - 1) / 2, 1e-15) &&
                      harness_close(dx[1], e / (1 + e) / 2, 1e-15) && dx[2] == 0.0 &&
                      dx[3] == 0.0 && harness_close(dx[4] + dx[5], 0.0, 1e-15),
             "oracle: MEAN gradient divides by the samples not ignored (got %g %g %g %g %g %g)",
             dx[0], dx[1], dx[2], dx[3], dx[4], dx[5]);
}

/* ------------------------------------------------------------------------ */
/* Bad descriptors                                                           */
/* ------------------------------------------------------------------------ */

static void xent_bad_descriptors(const harness_report *rep, adnn_context *ctx, const char *bn) {
  const xent_shape sh = {4, 5, ADNN_LOSS_REDUCTION_MEAN, -100, L_PACKED, 1, 1, 1.0, 0};
  adnn_softmax_cross_entropy_desc d;
  adnn_plan *plan = NULL;
#define BAD(status, needle, what)                                                            \
  do {                                                                                       \
    plan = NULL;                                                                             \
    harness_is_status(rep, adnn_plan_create_softmax_cross_entropy(ctx, &d, &plan), status,   \
                      "%s softmax_cross_entropy: %s", bn, what);                             \
    harness_contains(rep, adnn_last_error(), needle, "%s softmax_cross_entropy: %s: message", \
                     bn, what);                                                              \
    harness_ok(rep, plan == NULL, "%s softmax_cross_entropy: %s: no plan", bn, what);        \
    xent_describe(&sh, F32, &d);                                                             \
  } while (0)
  xent_describe(&sh, F32, &d);
  d.labels.dtype = F32;
  BAD(ADNN_STATUS_BAD_PARAM, "labels has dtype f32", "f32 labels are refused");
  d.labels.dims[0] = 3;
  BAD(ADNN_STATUS_BAD_PARAM, "labels has 3 elements", "labels of the wrong length");
  {
    const int64_t dims[3] = {4, 5, 1};
    d.logits = harness_tensor_desc(F32, 3, dims, HARNESS_PACKED);
  }
  BAD(ADNN_STATUS_BAD_PARAM, "logits has rank 3", "rank-3 logits");
  d.loss = strided_vector(F32, 4, 1);
  BAD(ADNN_STATUS_BAD_PARAM, "loss has rank 1", "a rank-1 loss with MEAN");
  d.reduction = ADNN_LOSS_REDUCTION_NONE;
  BAD(ADNN_STATUS_BAD_PARAM, "loss has rank 0", "a scalar loss with NONE");
  d.reduction = (adnn_loss_reduction)7;
  BAD(ADNN_STATUS_BAD_PARAM, "not an adnn_loss_reduction", "an unknown reduction");
  d.loss.dtype = F64;
  BAD(ADNN_STATUS_BAD_PARAM, "the logits' dtype", "a loss of another dtype");
  d.logits.dtype = d.loss.dtype = ADNN_DTYPE_I32;
  BAD(ADNN_STATUS_NOT_SUPPORTED, "not supported", "i32 logits");
#undef BAD
  /* A plan with one output refuses two. */
  xent_describe(&sh, F32, &d);
  if (harness_is_status(rep, adnn_plan_create_softmax_cross_entropy(ctx, &d, &plan),
                        ADNN_STATUS_SUCCESS, "%s softmax_cross_entropy: a valid plan", bn)) {
    void *buf = NULL;
    if (adnn_malloc(ctx, 4096, &buf) == ADNN_STATUS_SUCCESS) {
      const void *in[2] = {buf, (char *)buf + 1024};
      void *out[2] = {(char *)buf + 2048, (char *)buf + 3072};
      harness_is_status(rep, adnn_plan_execute_multi(plan, in, 2, out, 2), ADNN_STATUS_BAD_PARAM,
                        "%s softmax_cross_entropy: two outputs are refused", bn);
      harness_contains(rep, adnn_last_error(), "1 output(s)",
                       "%s softmax_cross_entropy: the message gives the output count", bn);
      harness_is_status(rep, adnn_plan_set_optimizer_step(plan, 0.1, 2), ADNN_STATUS_BAD_PARAM,
                        "%s softmax_cross_entropy: adnn_plan_set_optimizer_step refuses it", bn);
      harness_contains(rep, adnn_last_error(), "not an optimizer plan",
                       "%s softmax_cross_entropy: set_optimizer_step says why", bn);
      adnn_free(ctx, buf);
    }
    adnn_plan_destroy(plan);
  }
}

static void xent_backward_bad_descriptors(const harness_report *rep, adnn_context *ctx,
                                          const char *bn) {
  adnn_plan *plan = NULL;
  adnn_softmax_cross_entropy_backward_desc b;
  adnn_softmax_cross_entropy_backward_desc_init(&b);
  harness_is_status(rep, adnn_plan_create_softmax_cross_entropy_backward(ctx, &b, &plan),
                    ADNN_STATUS_BAD_PARAM_NULL, "%s softmax_cross_entropy_backward: NULL forward",
                    bn);
  harness_contains(rep, adnn_last_error(), "forward is NULL",
                   "%s softmax_cross_entropy_backward: NULL forward: message", bn);
  const xent_shape sh = {4, 5, ADNN_LOSS_REDUCTION_SUM, -100, L_PACKED, 1, 1, 1.0, 0};
  adnn_softmax_cross_entropy_desc f;
  xent_describe(&sh, F32, &f);
  b.forward = &f;
  f.struct_size = 8;
  harness_is_status(rep, adnn_plan_create_softmax_cross_entropy_backward(ctx, &b, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s softmax_cross_entropy_backward: a forward "
                    "descriptor too small", bn);
  harness_contains(rep, adnn_last_error(), "adnn_softmax_cross_entropy_desc_init",
                   "%s softmax_cross_entropy_backward: too small: message", bn);
  xent_describe(&sh, F32, &f);
  f.labels.dtype = ADNN_DTYPE_F64;
  harness_is_status(rep, adnn_plan_create_softmax_cross_entropy_backward(ctx, &b, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s softmax_cross_entropy_backward: f64 labels", bn);
  harness_contains(rep, adnn_last_error(), "i32",
                   "%s softmax_cross_entropy_backward: f64 labels: message", bn);
  /* dlogits has the logits' layout: a broadcast (stride 0) one is refused. */
  xent_describe(&sh, F32, &f);
  f.logits.strides[1] = 0;
  harness_is_status(rep, adnn_plan_create_softmax_cross_entropy_backward(ctx, &b, &plan),
                    ADNN_STATUS_BAD_PARAM, "%s softmax_cross_entropy_backward: logits with a "
                    "zero stride (dlogits would alias)", bn);
  harness_ok(rep, plan == NULL, "%s softmax_cross_entropy_backward: no plan on failure", bn);
}

/* ------------------------------------------------------------------------ */
/* Traits of the backward op                                                 */
/* ------------------------------------------------------------------------ */

static int xent_backward_inputs(const harness_desc *hd, harness_tensor *in) {
  const adnn_softmax_cross_entropy_desc *f = hd->softmax_cross_entropy_backward.forward;
  in[0] = (harness_tensor){"logits", f->logits};
  in[1] = (harness_tensor){"labels", f->labels};
  in[2] = (harness_tensor){"dloss", f->loss};
  return 3;
}

static adnn_tensor_desc xent_backward_output(const harness_desc *hd) {
  return hd->softmax_cross_entropy_backward.forward->logits;
}

/* The forward descriptor is the cases' own (backward_forward) or the
 * caller's: set its dtype there. */
static void xent_backward_set_dtype(harness_desc *hd, adnn_dtype dt) {
  adnn_softmax_cross_entropy_desc *f =
      (adnn_softmax_cross_entropy_desc *)hd->softmax_cross_entropy_backward.forward;
  f->logits.dtype = f->loss.dtype = dt;
}

static void xent_backward_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  (void)n_in;
  const adnn_softmax_cross_entropy_desc *f = hd->softmax_cross_entropy_backward.forward;
  harness_fill_uniform(&in[0], r, -8.0, 8.0);
  fill_labels(&in[1], f->logits.dims[1], f->ignore_index, r);
  harness_fill_uniform(&in[2], r, 0.25, 2.0);
}

const harness_op_traits harness_softmax_cross_entropy_traits = {
    .inputs = xent_inputs,
    .output = xent_output,
    .set_dtype = xent_set_dtype,
    .oracle = xent_oracle,
    .tolerance = xent_tolerance,
    .fill = xent_fill,
    .variant_count = 1,
    .cases = xent_cases,
    .oracle_selftests = xent_oracle_selftests,
    .bad_descriptors = xent_bad_descriptors,
};

const harness_op_traits harness_softmax_cross_entropy_backward_traits = {
    .inputs = xent_backward_inputs,
    .output = xent_backward_output,
    .set_dtype = xent_backward_set_dtype,
    .oracle = xent_backward_oracle,
    .tolerance = xent_tolerance,
    .fill = xent_backward_fill,
    .variant_count = 1,
    .cases = xent_backward_cases,
    .oracle_selftests = xent_backward_oracle_selftests,
    .bad_descriptors = xent_backward_bad_descriptors,
};
