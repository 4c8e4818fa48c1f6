/* softmax / log-softmax backward in the conformance harness: traits, oracle
 * (doc/ops.md, "softmax backward"), cases, the oracle's self-tests and the
 * bad descriptors. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The forward descriptors the cases point to (see t/ops/activation_backward.c). */
#define FORWARD_SLOTS 16
static adnn_softmax_desc forward_slots[FORWARD_SLOTS];
static unsigned forward_next;

adnn_softmax_desc *harness_softmax_backward_forward(harness_desc *hd) {
  adnn_softmax_desc *f = &forward_slots[forward_next++ % FORWARD_SLOTS];
  adnn_softmax_desc_init(f);
  adnn_softmax_backward_desc_init(&hd->softmax_backward);
  hd->softmax_backward.forward = f;
  return f;
}

static const adnn_softmax_desc *fwd(const harness_desc *hd) { return hd->softmax_backward.forward; }

static int smb_inputs(const harness_desc *hd, harness_tensor *in) {
  in[0] = (harness_tensor){"y", fwd(hd)->y};
  in[1] = (harness_tensor){"dy", fwd(hd)->y};
  return 2;
}

static adnn_tensor_desc smb_output(const harness_desc *hd) { return fwd(hd)->x; }

static void smb_set_dtype(harness_desc *hd, adnn_dtype dt) {
  adnn_softmax_desc *f = (adnn_softmax_desc *)fwd(hd); /* one of forward_slots */
  f->x.dtype = f->y.dtype = dt;
}

/* A dot product along the slice in double, then two operations per element;
 * F16/BF16: that F32 bound plus one rounding of dx. */
static harness_tolerance smb_tolerance(const harness_desc *hd, adnn_dtype dt) {
  (void)hd;
  const harness_tolerance f32 = {4e-6, 1e-5};
  return harness_lowp_tolerance(dt, dt == ADNN_DTYPE_F64 ? (harness_tolerance){1e-13, 1e-12} : f32,
                                f32, 1.0);
}

/* The slices of `t` along `axis`: every element whose index along it is 0,
 * walked by iterating t with that dim reduced to 1. */
static adnn_tensor_desc slice_starts(const adnn_tensor_desc *t, int axis) {
  adnn_tensor_desc s = *t;
  s.dims[axis] = 1;
  return s;
}

static int resolve_axis(const adnn_softmax_desc *d) {
  return d->axis < 0 ? d->axis + d->x.rank : d->axis;
}

/* y = softmax (or log-softmax) of the values already in b, slice by slice,
 * in long double and rounded to b's dtype: the y the forward op gives. */
static void forward_in_place(const adnn_softmax_desc *d, harness_buffer *b) {
  const int axis = resolve_axis(d);
  const int64_t L = d->y.dims[axis], s = d->y.strides[axis];
  const adnn_tensor_desc starts = slice_starts(&d->y, axis);
  harness_index it;
  for (harness_index_first(&it, &starts); it.valid; harness_index_next(&it, &starts)) {
    double *v = b->v + it.offset;
    long double m = -INFINITY;
    int bad = 0;
    for (int64_t j = 0; j < L; j++) {
      if (isnan(v[j * s]) || v[j * s] == INFINITY) bad = 1;
      if (v[j * s] > m) m = v[j * s];
    }
    if (bad || m == -INFINITY) {
      for (int64_t j = 0; j < L; j++) v[j * s] = NAN;
      continue;
    }
    harness_sum sum;
    harness_sum_init(&sum);
    for (int64_t j = 0; j < L; j++) harness_sum_add(&sum, expl(v[j * s] - m));
    const long double total = harness_sum_value(&sum);
    for (int64_t j = 0; j < L; j++) {
      const long double e = v[j * s] - m;
      v[j * s] = harness_round(d->y.dtype, (double)(d->log ? e - logl(total) : expl(e) / total));
    }
  }
}

static void smb_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  (void)n_in;
  harness_fill_uniform(&in[0], r, -8.0, 8.0);
  forward_in_place(fwd(hd), &in[0]);
  harness_fill_uniform(&in[1], r, -1.0, 1.0);
}

/* ------------------------------------------------------------------------ */
/* Oracle                                                                    */
/* ------------------------------------------------------------------------ */

/* Per slice, with s = sum_j y_j dy_j (softmax) or sum_j dy_j (log-softmax):
 *   softmax dx_j = y_j (dy_j - s);  log-softmax dx_j = dy_j - exp(y_j) s.
 * A NaN in the slice's y or dy makes s NaN and so every dx of the slice. */
static int smb_oracle(const harness_desc *hd, const double *const *in, double *dx, char *why,
                      size_t why_len) {
  const adnn_softmax_desc *d = fwd(hd);
  const int rank = d->x.rank, axis = resolve_axis(d);
  int same = d->y.rank == rank;
  for (int i = 0; same && i < rank; i++) same = d->x.dims[i] == d->y.dims[i];
  if (axis < 0 || axis >= rank || !same) {
    snprintf(why, why_len, "softmax_backward: axis %d out of range for rank %d, or x and y "
             "dims differ", (int)d->axis, rank);
    return -1;
  }
  const int64_t L = d->x.dims[axis], sy = d->y.strides[axis], sx = d->x.strides[axis];
  const adnn_tensor_desc xs = slice_starts(&d->x, axis), ys = slice_starts(&d->y, axis);
  harness_index ix, iy;
  for (harness_index_first(&ix, &xs), harness_index_first(&iy, &ys); ix.valid;
       harness_index_next(&ix, &xs), harness_index_next(&iy, &ys)) {
    const double *y = in[0] + iy.offset, *g = in[1] + iy.offset;
    harness_sum sum;
    harness_sum_init(&sum);
    for (int64_t j = 0; j < L; j++)
      harness_sum_add(&sum, d->log ? (long double)g[j * sy] : (long double)y[j * sy] * g[j * sy]);
    const long double s = harness_sum_value(&sum);
    for (int64_t j = 0; j < L; j++) {
      const long double yv = y[j * sy], gv = g[j * sy];
      dx[ix.offset + j * sx] = (double)(d->log ? gv - expl(yv) * s : yv * (gv - s));
    }
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64

/* x_layout is dx's; y (and dy) are packed unless in place (dx == dy). With
 * specials, the first slice's x holds a NaN (its y is NaN throughout) and
 * the second slice's x a -inf (y 0, or -inf for log-softmax). */
static void smb_case(harness_suite *suite, int rank, const int64_t *dims, int axis, int log,
                     enum harness_layout x_layout, adnn_dtype dt, int inplace, double scale,
                     int specials) {
  harness_case c;
  char shape[64] = "[";
  for (int i = 0; i < rank; i++)
    snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", i ? "," : "",
             (long long)dims[i]);
  strncat(shape, "]", sizeof shape - strlen(shape) - 1);
  harness_case_init(&c, harness_op_find("softmax_backward"), dt, "%s %s axis %d x%g%s%s%s",
                    log ? "log_softmax" : "softmax", shape, axis, scale,
                    x_layout == HARNESS_PADDED ? " dx padded"
                    : x_layout == HARNESS_NHWC ? " dx nhwc" : "",
                    inplace ? " dx=dy" : "", specials ? " nan/-inf" : "");
  adnn_softmax_desc *f = harness_softmax_backward_forward(&c.desc);
  f->axis = axis;
  f->log = log;
  f->x = harness_tensor_desc(dt, rank, dims, x_layout);
  f->y = inplace ? f->x : harness_tensor_desc(dt, rank, dims, HARNESS_PACKED);
  if (harness_case_alloc(&c) != 0) return;
  c.inplace = inplace ? 1 : -1;
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  harness_fill_uniform(&c.in[0], &r, -scale, scale);
  if (specials) {
    /* Slices are numbered by the row-major order of their first elements;
     * element j of slice 0 is at linear index j * inner. */
    const int ax = axis < 0 ? axis + rank : axis;
    int64_t inner = 1;
    for (int i = ax + 1; i < rank; i++) inner *= dims[i];
    harness_set_element(&c.in[0], 1 * inner, NAN);
    if (dims[ax] > 2) harness_set_element(&c.in[0], 2 * inner + (inner > 1 ? 1 : dims[ax]), -INFINITY);
  }
  forward_in_place(f, &c.in[0]);
  harness_fill_uniform(&c.in[1], &r, -1.0, 1.0);
  harness_submit(suite, &c);
}

static void smb_cases(harness_suite *s) {
  const int64_t a[2] = {4, 10}, b[3] = {6, 5, 7}, nchw[4] = {2, 3, 4, 5}, wide[2] = {3, 1000},
                one[1] = {1}, big[2] = {64, 4099}, rows[2] = {37, 129}, tall[3] = {3, 50, 7},
                cols[3] = {2, 16, 900}, pd[3] = {4, 9, 3};
  for (int log = 0; log <= 1; log++) {
    smb_case(s, 2, a, -1, log, HARNESS_PACKED, F32, 0, 3.0, 0);
    smb_case(s, 2, a, -1, log, HARNESS_PACKED, F32, 0, 3.0, 1);
    smb_case(s, 3, b, 0, log, HARNESS_PACKED, F32, 0, 3.0, 1);
    smb_case(s, 3, b, 1, log, HARNESS_PACKED, F32, 0, 3.0, 0);
    smb_case(s, 3, b, 2, log, HARNESS_PACKED, F32, 0, 3.0, 0);
    smb_case(s, 3, b, -2, log, HARNESS_PADDED, F32, 0, 3.0, 0);
    smb_case(s, 4, nchw, 1, log, HARNESS_NHWC, F32, 0, 2.0, 0);
    smb_case(s, 4, nchw, 1, log, HARNESS_PADDED, F32, 1, 2.0, 0);
    smb_case(s, 4, nchw, 3, log, HARNESS_NHWC, F32, 1, 2.0, 0);
    smb_case(s, 2, wide, 1, log, HARNESS_PACKED, F32, 0, 10.0, 0);
    smb_case(s, 2, wide, 0, log, HARNESS_PACKED, F32, 1, 100.0, 0);
    smb_case(s, 1, one, 0, log, HARNESS_PACKED, F32, 0, 1.0, 0);
    smb_case(s, 2, big, -1, log, HARNESS_PACKED, F32, 1, 5.0, 0);
    smb_case(s, 2, rows, -1, log, HARNESS_PACKED, F32, 0, 20.0, 1);
    smb_case(s, 3, tall, 1 - log, log, HARNESS_PACKED, F32, 0, 20.0, 0);
    smb_case(s, 3, cols, 1, log, HARNESS_PACKED, F32, 0, 20.0, 0);
    smb_case(s, 3, pd, 1, log, HARNESS_PADDED, F32, 0, 3.0, 1);
    smb_case(s, 3, b, 1, log, HARNESS_PACKED, F64, 0, 3.0, 1);
    smb_case(s, 2, rows, -1, log, HARNESS_PACKED, F64, 1, 20.0, 0);
    smb_case(s, 4, nchw, 1, log, HARNESS_PADDED, F64, 0, 2.0, 0);
    smb_case(s, 2, wide, 0, log, HARNESS_PACKED, F64, 0, 100.0, 0);
    /* F16 and BF16 (y the forward's output rounded to the type): contiguous
     * and strided axes, padded and NHWC dx, in place, NaN and -inf slices,
     * and rows long enough for the vector loops' tails. */
    static const adnn_dtype lowp[2] = {ADNN_DTYPE_F16, ADNN_DTYPE_BF16};
    for (int t = 0; t < 2; t++) {
      smb_case(s, 2, a, -1, log, HARNESS_PACKED, lowp[t], 0, 3.0, 1);
      smb_case(s, 3, b, 0, log, HARNESS_PACKED, lowp[t], 0, 3.0, 1);
      smb_case(s, 4, nchw, 1, log, HARNESS_PADDED, lowp[t], 1, 2.0, 0);
      smb_case(s, 4, nchw, 3, log, HARNESS_NHWC, lowp[t], 1, 2.0, 0);
      smb_case(s, 2, wide, 1, log, HARNESS_PACKED, lowp[t], 0, 10.0, 0);
      smb_case(s, 2, big, -1, log, HARNESS_PACKED, lowp[t], 1, 5.0, 0);
      smb_case(s, 3, cols, 1, log, HARNESS_PACKED, lowp[t], 0, 20.0, 0);
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracle                                                  */
/* ------------------------------------------------------------------------ */

static int run_oracle(int log, int n, const double *y, const double *dy, double *dx) {
  harness_desc hd;
  adnn_softmax_desc *f = harness_softmax_backward_forward(&hd);
  f->x = f->y = harness_vector_desc(ADNN_DTYPE_F64, n);
  f->log = log;
  const double *in[2] = {y, dy};
  char why[256];
  return smb_oracle(&hd, in, dx, why, sizeof why) == 0;
}

static void smb_oracle_selftests(const harness_report *rep) {
  /* y = [1/4, 3/4], dy = [1, 0]: s = 1/4, dx = [1/4 * 3/4, 3/4 * -1/4] =
   * [3/16, -3/16]. Log-softmax with y = log([1/4, 3/4]), dy = [1, 0]: s = 1,
   * dx = [1 - 1/4, -3/4]. A constant dy has zero softmax gradient. */
  const double y[2] = {0.25, 0.75}, dy[2] = {1.0, 0.0}, ly[2] = {log(0.25), log(0.75)},
               c[2] = {2.0, 2.0};
  double dx[2] = {0, 0}, dl[2] = {0, 0}, dc[2] = {0, 0};
  int good = run_oracle(0, 2, y, dy, dx) && run_oracle(1, 2, ly, dy, dl) &&
             run_oracle(0, 2, y, c, dc);
  harness_ok(rep, good && harness_close(dx[0], 3.0 / 16, 1e-15) &&
                      harness_close(dx[1], -3.0 / 16, 1e-15) && harness_close(dl[0], 0.75, 1e-15) &&
                      harness_close(dl[1], -0.75, 1e-15) && fabs(dc[0]) < 1e-16 &&
                      fabs(dc[1]) < 1e-16,
             "oracle: softmax and log-softmax gradients by hand (got %g %g, %g %g)", dx[0], dx[1],
             dl[0], dl[1]);
  const double yn[2] = {NAN, 0.5}, yi[2] = {-INFINITY, 0.0};
  double dn[2] = {0, 0}, di[2] = {0, 0};
  good = run_oracle(0, 2, yn, dy, dn) && run_oracle(1, 2, yi, dy, di);
  harness_ok(rep, good && isnan(dn[0]) && isnan(dn[1]) && di[0] == 1.0 && di[1] == -1.0,
             "oracle: a NaN y poisons its slice; log-softmax y = -inf passes dy");
}

/* ------------------------------------------------------------------------ */
/* Bad descriptors and execute-time checks                                   */
/* ------------------------------------------------------------------------ */

static void smb_bad_descriptors(const harness_report *rep, adnn_context *ctx, const char *bn) {
  adnn_plan *plan = NULL;
  adnn_softmax_desc f;
  adnn_softmax_desc_init(&f);
  const int64_t dims[2] = {3, 4};
  f.x = f.y = harness_tensor_desc(F32, 2, dims, HARNESS_PACKED);
  adnn_softmax_backward_desc d;
  adnn_softmax_backward_desc_init(&d);
  harness_is_status(rep, adnn_plan_create_softmax_backward(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM_NULL, "%s softmax_backward: NULL forward", bn);
  d.forward = &f;
  f.axis = 2;
  harness_is_status(rep, adnn_plan_create_softmax_backward(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s softmax_backward: forward axis out of range", bn);
  harness_contains(rep, adnn_last_error(), "forward", "%s: the message says it is the forward's",
                   bn);
  f.axis = -1;
  f.x.strides[1] = 0;
  harness_is_status(rep, adnn_plan_create_softmax_backward(ctx, &d, &plan), ADNN_STATUS_BAD_PARAM,
                    "%s softmax_backward: dx (x's layout) overlapping", bn);
  f.x = f.y;
  adnn_status st = adnn_plan_create_softmax_backward(ctx, &d, &plan);
  if (st == ADNN_STATUS_NOT_SUPPORTED) {
    harness_skip(rep, "%s: no softmax_backward plan: %s", bn, adnn_last_error());
    return;
  }
  if (!harness_ok(rep, st == ADNN_STATUS_SUCCESS, "%s softmax_backward plan", bn)) return;
  void *y = NULL, *dy = NULL;
  adnn_malloc(ctx, 12 * sizeof(float), &y);
  adnn_malloc(ctx, 13 * sizeof(float), &dy);
  const void *ins[2] = {y, dy};
  harness_is_status(rep, adnn_plan_execute(plan, ins, 3, dy), ADNN_STATUS_BAD_PARAM,
                    "%s execute: 3 inputs for a 2-input plan is BAD_PARAM", bn);
  harness_is_status(rep, adnn_plan_execute(plan, ins, 2, y), ADNN_STATUS_BAD_PARAM,
                    "%s execute: dx == y is BAD_PARAM", bn);
  harness_is_status(rep, adnn_plan_execute(plan, ins, 2, (char *)dy + 4), ADNN_STATUS_BAD_PARAM,
                    "%s execute: dx partly overlapping dy is BAD_PARAM", bn);
  adnn_plan_destroy(plan);
  adnn_free(ctx, y);
  adnn_free(ctx, dy);
}

const harness_op_traits harness_softmax_backward_traits = {
    .inputs = smb_inputs,
    .output = smb_output,
    .set_dtype = smb_set_dtype,
    .oracle = smb_oracle,
    .tolerance = smb_tolerance,
    .fill = smb_fill,
    .variant_count = 1,
    .cases = smb_cases,
    .oracle_selftests = smb_oracle_selftests,
    .bad_descriptors = smb_bad_descriptors,
};
