/*
 * Layer normalization and RMS normalization over the last norm_dims dims.
 *
 * Each row of D elements is read two or three times while it sits in cache:
 *   layer: (1) sum in double -> mean; (2) sum of squared deviations from that
 *          mean, in double -> biased variance; (3) write.
 *   rms:   (1) sum of squares in double; (3) write.
 * Two passes with double accumulators give the variance to ~1e-15 relative
 * whatever the mean and D (no E[x^2] - E[x]^2 cancellation). The mean enters
 * the float arithmetic of passes 2 and 3 as a hi + lo pair of floats,
 * d = (x - mean_hi) - mean_lo, so rows with a large mean and a small spread
 * still get deviations accurate to an ulp of d instead of an ulp of the mean.
 *
 * Paths: rows (the normalized dims collapse to one unit-stride run in x and y;
 * the vector loops run on the row in place) and strided (the row is gathered
 * into a stack buffer chunk by chunk for each pass and scattered at the end).
 * Rows are split across threads. In place works on both paths.
 */
#ifdef ADNN_SIMD_VECTOR_PART

/* sum(x) and sum(x^2), both in double. */
static void NAME(nrm_sums)(const float *x, size_t n, double *sum, double *sumsq) {
  VDH s = {0}, q = {0};
  size_t i = 0;
  for (; i < n; i += VL) {
    VF v = i + VL <= n ? NAME(vload)(x + i) : NAME(vload_n)(x + i, n - i, 0.0f);
    VDH lo = NAME(vcvt_lo)(v), hi = NAME(vcvt_hi)(v);
    s += lo + hi;
    q += lo * lo + hi * hi;
  }
  *sum += NAME(vdhsum)(s);
  *sumsq += NAME(vdhsum)(q);
}

/* sum((x - mean)^2) in double, with mean = mh + ml. */
static double NAME(nrm_dev2)(const float *x, size_t n, float mh, float ml) {
  const VF vh = NAME(vset)(mh), vl = NAME(vset)(ml);
  VDH q = {0};
  size_t i = 0;
  for (; i + VL <= n; i += VL) {
    VF v = (NAME(vload)(x + i) - vh) - vl;
    VDH lo = NAME(vcvt_lo)(v), hi = NAME(vcvt_hi)(v);
    q += lo * lo + hi * hi;
  }
  if (i < n) {
    /* Missing lanes load the mean itself and contribute (about) zero; they
     * are masked out exactly by zeroing them below. */
    VF v = (NAME(vload_n)(x + i, n - i, mh) - vh) - vl;
    for (size_t k = n - i; k < VL; k++) v[k] = 0.0f;
    VDH lo = NAME(vcvt_lo)(v), hi = NAME(vcvt_hi)(v);
    q += lo * lo + hi * hi;
  }
  return NAME(vdhsum)(q);
}

/* y = ((x - mh) - ml) * rs * gain + bias; gain / bias may be NULL. */
static void NAME(nrm_apply)(const float *x, float *y, size_t n, float mh, float ml, float rs,
                            const float *gain, const float *bias) {
  const VF vh = NAME(vset)(mh), vl = NAME(vset)(ml), vr = NAME(vset)(rs);
  size_t i = 0;
  for (; i + VL <= n; i += VL) {
    VF v = ((NAME(vload)(x + i) - vh) - vl) * vr;
    if (gain) v = v * NAME(vload)(gain + i);
    if (bias) v = v + NAME(vload)(bias + i);
    NAME(vstore)(y + i, v);
  }
  if (i < n) {
    const size_t r = n - i;
    VF v = ((NAME(vload_n)(x + i, r, 0.0f) - vh) - vl) * vr;
    if (gain) v = v * NAME(vload_n)(gain + i, r, 1.0f);
    if (bias) v = v + NAME(vload_n)(bias + i, r, 0.0f);
    NAME(vstore_n)(y + i, v, r);
  }
}

#else /* the dispatch part */

#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/simd.h"

#define ADNN_SIMD_VECTOR_PART
#define ADNN_SIMD_ISA 3
#include "kernels/cpu/simd.h"
#include "kernels/cpu/norm.c"
#include "kernels/cpu/simd_end.h"
#define ADNN_SIMD_ISA 2
#include "kernels/cpu/simd.h"
#include "kernels/cpu/norm.c"
#include "kernels/cpu/simd_end.h"
#define ADNN_SIMD_ISA 0
#include "kernels/cpu/simd.h"
#include "kernels/cpu/norm.c"
#include "kernels/cpu/simd_end.h"
#undef ADNN_SIMD_VECTOR_PART

enum { PATH_ROWS = 0, PATH_STRIDED = 1 };

typedef struct nrm_geom {
  adnn_cpu_loop rows, cols; /* leading dims and normalized dims; [0] y, [1] x */
} nrm_geom;

static void sub_desc(const adnn_tensor_desc *t, int from, int to, adnn_tensor_desc *out) {
  *out = *t;
  out->rank = to - from;
  for (int i = from; i < to; i++) {
    out->dims[i - from] = t->dims[i];
    out->strides[i - from] = t->strides[i];
  }
}

static void geom_of(const adnn_norm_desc *d, nrm_geom *g) {
  const int split = d->x.rank - d->norm_dims;
  adnn_tensor_desc yr, xr, yc, xc;
  sub_desc(&d->y, 0, split, &yr);
  sub_desc(&d->x, 0, split, &xr);
  sub_desc(&d->y, split, d->y.rank, &yc);
  sub_desc(&d->x, split, d->x.rank, &xc);
  const adnn_tensor_desc *tr[2] = {&yr, &xr}, *tc[2] = {&yc, &xc};
  adnn_cpu_loop_init(&g->rows, 2, tr);
  adnn_cpu_loop_init(&g->cols, 2, tc);
}

static int64_t loop_count(const adnn_cpu_loop *L) {
  return adnn_cpu_loop_rows(L) * L->dims[L->rank - 1];
}

static void loop_offsets(const adnn_cpu_loop *L, int64_t idx, int64_t off[2]) {
  off[0] = off[1] = 0;
  for (int i = L->rank - 1; i >= 0; i--) {
    int64_t q = idx / L->dims[i], r = idx - q * L->dims[i];
    idx = q;
    off[0] += r * L->st[0][i];
    off[1] += r * L->st[1][i];
  }
}

void adnn_cpu_norm_prepare(const adnn_norm_desc *d, adnn_cpu_op_state *s) {
  nrm_geom g;
  geom_of(d, &g);
  s->simd = adnn_cpu_simd_level();
  s->path = g.cols.rank == 1 && g.cols.st[0][0] == 1 && g.cols.st[1][0] == 1 ? PATH_ROWS
                                                                             : PATH_STRIDED;
  s->outer = loop_count(&g.rows);
  s->inner = loop_count(&g.cols);
  s->axis_len = 0;
}

typedef struct nrm_task {
  const adnn_norm_desc *d;
  const adnn_cpu_op_state *s;
  const float *x, *gain, *bias;
  float *y;
  nrm_geom g;
} nrm_task;

/* Mean (as hi + lo floats) and 1/sqrt(var + eps) from the accumulated sums;
 * for RMS the "mean" is 0 and var is mean(x^2). */
static void finish_stats(const nrm_task *t, double sum, double dev2, float *mh, float *ml,
                         float *rs) {
  const double D = (double)t->s->inner;
  if (t->d->kind == ADNN_NORM_RMS) {
    *mh = *ml = 0.0f;
    *rs = (float)(1.0 / sqrt(dev2 / D + t->d->epsilon));
    return;
  }
  const double mean = sum / D;
  *mh = (float)mean;
  *ml = (float)(mean - (double)*mh);
  (void)dev2;
  *rs = 0.0f;
}

static void run_rows(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const nrm_task *t = arg;
  const int simd = t->s->simd, rms = t->d->kind == ADNN_NORM_RMS;
  const size_t D = (size_t)t->s->inner;
  for (int64_t row = begin; row < end; row++) {
    int64_t off[2];
    loop_offsets(&t->g.rows, row, off);
    const float *x = t->x + off[1];
    float *y = t->y + off[0];
    double sum = 0.0, sumsq = 0.0;
    ADNN_SIMD_CALL(simd, nrm_sums, x, D, &sum, &sumsq);
    float mh, ml, rs;
    finish_stats(t, sum, sumsq, &mh, &ml, &rs);
    if (!rms) {
      double dev2;
      ADNN_SIMD_CALL(simd, dev2 = nrm_dev2, x, D, mh, ml);
      rs = (float)(1.0 / sqrt(dev2 / (double)D + t->d->epsilon));
    }
    ADNN_SIMD_CALL(simd, nrm_apply, x, y, D, mh, ml, rs, t->gain, t->bias);
  }
}

#define CHUNK 256

/* Gathers elements [j0, j0 + n) of the normalized block at base into buf. */
static void gather(const adnn_cpu_loop *cols, const float *base, int64_t j0, int64_t n,
                   float *buf) {
  for (int64_t j = 0; j < n; j++) {
    int64_t off[2];
    loop_offsets(cols, j0 + j, off);
    buf[j] = base[off[1]];
  }
}

static void run_strided(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const nrm_task *t = arg;
  const int simd = t->s->simd, rms = t->d->kind == ADNN_NORM_RMS;
  const int64_t D = t->s->inner;
  float buf[CHUNK];
  for (int64_t row = begin; row < end; row++) {
    int64_t off[2];
    loop_offsets(&t->g.rows, row, off);
    const float *x = t->x + off[1];
    float *y = t->y + off[0];
    double sum = 0.0, sumsq = 0.0;
    for (int64_t j0 = 0; j0 < D; j0 += CHUNK) {
      const int64_t n = D - j0 < CHUNK ? D - j0 : CHUNK;
      gather(&t->g.cols, x, j0, n, buf);
      ADNN_SIMD_CALL(simd, nrm_sums, buf, (size_t)n, &sum, &sumsq);
    }
    float mh, ml, rs;
    finish_stats(t, sum, sumsq, &mh, &ml, &rs);
    if (!rms) {
      double dev2 = 0.0;
      for (int64_t j0 = 0; j0 < D; j0 += CHUNK) {
        const int64_t n = D - j0 < CHUNK ? D - j0 : CHUNK;
        double part;
        gather(&t->g.cols, x, j0, n, buf);
        ADNN_SIMD_CALL(simd, part = nrm_dev2, buf, (size_t)n, mh, ml);
        dev2 += part;
      }
      rs = (float)(1.0 / sqrt(dev2 / (double)D + t->d->epsilon));
    }
    for (int64_t j0 = 0; j0 < D; j0 += CHUNK) {
      const int64_t n = D - j0 < CHUNK ? D - j0 : CHUNK;
      gather(&t->g.cols, x, j0, n, buf);
      ADNN_SIMD_CALL(simd, nrm_apply, buf, buf, (size_t)n, mh, ml, rs,
                     t->gain ? t->gain + j0 : NULL, t->bias ? t->bias + j0 : NULL);
      for (int64_t j = 0; j < n; j++) {
        int64_t o[2];
        loop_offsets(&t->g.cols, j0 + j, o);
        y[o[0]] = buf[j];
      }
    }
  }
}

void adnn_cpu_norm_f32(const adnn_norm_desc *d, const adnn_cpu_op_state *s, const float *x,
                       const float *gain, const float *bias, float *y) {
  nrm_task t = {.d = d, .s = s, .x = x, .gain = d->has_gain ? gain : NULL,
                .bias = d->has_bias ? bias : NULL, .y = y};
  geom_of(d, &t.g);
  int64_t grain = ADNN_CPU_GRAIN / s->inner;
  adnn_cpu_parallel_for(s->outer, grain > 1 ? grain : 1,
                        s->path == PATH_ROWS ? run_rows : run_strided, &t);
}

#endif
