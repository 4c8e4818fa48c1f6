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
 *
 * F16 and BF16 (run_lowp): each row is widened into the thread's F32 row of
 * the workspace (D floats per thread, sized at reshape) by the shared block
 * converters of lowp.h, the rows path's code runs on it in place (statistics
 * in double and F32 as above; gain and bias stay F32, ADNN_OP_PARAM_DTYPE),
 * and the row is narrowed once on store: the F32 rows path on the widened
 * input plus one round to nearest even, bit for bit (t/cpu-lowp-ops).
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

/* This instruction set's copy. */
static const nrm_fns NAME(adnn_f32_norm) = {NAME(nrm_sums), NAME(nrm_dev2), NAME(nrm_apply)};

#else /* the dispatch part */

#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/lowp.h"
#include "kernels/cpu/simd.h"

/* One instruction set's copy of the vector code. */
typedef struct nrm_fns {
  void (*sums)(const float *x, size_t n, double *sum, double *sumsq);
  double (*dev2)(const float *x, size_t n, float mh, float ml);
  void (*apply)(const float *x, float *y, size_t n, float mh, float ml, float rs,
                const float *gain, const float *bias);
} nrm_fns;

#define ADNN_SIMD_KERNEL "kernels/cpu/norm.c"
#include "kernels/cpu/simd_instantiate.h"

static const nrm_fns *const nrm_by_isa[ADNN_CPU_ISA_COUNT] = ADNN_CPU_ISA_TABLE(adnn_f32_norm);

enum { PATH_ROWS = 0, PATH_STRIDED = 1 };

typedef struct nrm_state {
  const nrm_fns *fn;
  adnn_nd rows, cols; /* leading dims and normalized dims; [0] y, [1] x */
  int path;
  int rms;
  double epsilon;
  int64_t outer; /* rows */
  int64_t inner; /* D, elements per row */
  int64_t grain; /* rows per parallel task at least */
  adnn_dtype dtype; /* F32, or F16 / BF16 (run_lowp) */
  int isa;          /* env->isa, for the lowp.h converters */
} nrm_state;

static void nrm_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                        size_t *workspace_bytes) {
  const adnn_plugin_norm *p = problem;
  nrm_state *s = state;
  const int split = p->x.rank - p->norm_dims;
  adnn_tensor_desc yr, xr, yc, xc;
  adnn_cpu_sub_desc(&p->y, 0, split, &yr);
  adnn_cpu_sub_desc(&p->x, 0, split, &xr);
  adnn_cpu_sub_desc(&p->y, split, p->y.rank, &yc);
  adnn_cpu_sub_desc(&p->x, split, p->x.rank, &xc);
  const adnn_tensor_desc *tr[2] = {&yr, &xr}, *tc[2] = {&yc, &xc};
  adnn_cpu_loop_init(&s->rows, 2, tr);
  adnn_cpu_loop_init(&s->cols, 2, tc);
  s->fn = nrm_by_isa[env->isa];
  s->path = s->cols.rank == 1 && s->cols.strides[0][0] == 1 && s->cols.strides[1][0] == 1
                ? PATH_ROWS
                : PATH_STRIDED;
  s->rms = p->kind == ADNN_NORM_RMS;
  s->epsilon = p->epsilon;
  s->outer = adnn_nd_count(&s->rows);
  s->inner = adnn_nd_count(&s->cols);
  const int64_t grain = ADNN_CPU_GRAIN / s->inner;
  s->grain = grain > 1 ? grain : 1;
  s->dtype = p->x.dtype;
  s->isa = env->isa;
  *workspace_bytes = 0;
  if (s->dtype == ADNN_DTYPE_F16 || s->dtype == ADNN_DTYPE_BF16)
    *workspace_bytes = (size_t)env->threads * (size_t)s->inner * sizeof(float);
}

typedef struct nrm_task {
  const nrm_state *s;
  const float *x, *gain, *bias;
  float *y;
} nrm_task;

/* Mean (as hi + lo floats) and 1/sqrt(var + eps) from the accumulated sums;
 * for RMS the "mean" is 0 and var is mean(x^2). */
static void finish_stats(const nrm_state *s, double sum, double dev2, float *mh, float *ml,
                         float *rs) {
  const double D = (double)s->inner;
  if (s->rms) {
    *mh = *ml = 0.0f;
    *rs = (float)(1.0 / sqrt(dev2 / D + s->epsilon));
    return;
  }
  const double mean = sum / D;
  *mh = (float)mean;
  *ml = (float)(mean - (double)*mh);
  (void)dev2;
  *rs = 0.0f;
}

/* One contiguous row of D floats (y may be x). */
static void norm_row(const nrm_state *s, const float *x, float *y, size_t D, const float *gain,
                     const float *bias) {
  double sum = 0.0, sumsq = 0.0;
  s->fn->sums(x, D, &sum, &sumsq);
  float mh, ml, rs;
  finish_stats(s, sum, sumsq, &mh, &ml, &rs);
  if (!s->rms) {
    const double dev2 = s->fn->dev2(x, D, mh, ml);
    rs = (float)(1.0 / sqrt(dev2 / (double)D + s->epsilon));
  }
  s->fn->apply(x, y, D, mh, ml, rs, gain, bias);
}

static void run_rows(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const nrm_task *t = arg;
  const nrm_state *s = t->s;
  const size_t D = (size_t)s->inner;
  for (int64_t row = begin; row < end; row++) {
    int64_t off[ADNN_ND_MAX_TENSORS];
    adnn_nd_offsets(&s->rows, row, off);
    norm_row(s, t->x + off[1], t->y + off[0], D, t->gain, t->bias);
  }
}

#define CHUNK 256

/* Gathers elements [j0, j0 + n) of the normalized block at base into buf. */
static void gather(const adnn_nd *cols, const float *base, int64_t j0, int64_t n, float *buf) {
  for (int64_t j = 0; j < n; j++) {
    int64_t off[ADNN_ND_MAX_TENSORS];
    adnn_nd_offsets(cols, j0 + j, off);
    buf[j] = base[off[1]];
  }
}

static void run_strided(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const nrm_task *t = arg;
  const nrm_state *s = t->s;
  const int64_t D = s->inner;
  float buf[CHUNK];
  for (int64_t row = begin; row < end; row++) {
    int64_t off[ADNN_ND_MAX_TENSORS];
    adnn_nd_offsets(&s->rows, row, off);
    const float *x = t->x + off[1];
    float *y = t->y + off[0];
    double sum = 0.0, sumsq = 0.0;
    for (int64_t j0 = 0; j0 < D; j0 += CHUNK) {
      const int64_t n = D - j0 < CHUNK ? D - j0 : CHUNK;
      gather(&s->cols, x, j0, n, buf);
      s->fn->sums(buf, (size_t)n, &sum, &sumsq);
    }
    float mh, ml, rs;
    finish_stats(s, sum, sumsq, &mh, &ml, &rs);
    if (!s->rms) {
      double dev2 = 0.0;
      for (int64_t j0 = 0; j0 < D; j0 += CHUNK) {
        const int64_t n = D - j0 < CHUNK ? D - j0 : CHUNK;
        gather(&s->cols, x, j0, n, buf);
        dev2 += s->fn->dev2(buf, (size_t)n, mh, ml);
      }
      rs = (float)(1.0 / sqrt(dev2 / (double)D + s->epsilon));
    }
    for (int64_t j0 = 0; j0 < D; j0 += CHUNK) {
      const int64_t n = D - j0 < CHUNK ? D - j0 : CHUNK;
      gather(&s->cols, x, j0, n, buf);
      s->fn->apply(buf, buf, (size_t)n, mh, ml, rs, t->gain ? t->gain + j0 : NULL,
                   t->bias ? t->bias + j0 : NULL);
      for (int64_t j = 0; j < n; j++) {
        int64_t o[ADNN_ND_MAX_TENSORS];
        adnn_nd_offsets(&s->cols, j0 + j, o);
        y[o[0]] = buf[j];
      }
    }
  }
}

typedef struct nrm_lowp_task {
  const nrm_state *s;
  const uint16_t *x;
  const float *gain, *bias; /* F32 whatever the data type */
  uint16_t *y;
  float *work; /* threads rows of D floats */
} nrm_lowp_task;

static void run_lowp(void *arg, int64_t begin, int64_t end, int thread) {
  const nrm_lowp_task *t = arg;
  const nrm_state *s = t->s;
  const int64_t D = s->inner;
  float *f = t->work + (size_t)thread * (size_t)D;
  uint16_t h[ADNN_CPU_LOWP_BLOCK];
  for (int64_t row = begin; row < end; row++) {
    int64_t off[ADNN_ND_MAX_TENSORS];
    adnn_nd_offsets(&s->rows, row, off);
    const uint16_t *x = t->x + off[1];
    uint16_t *y = t->y + off[0];
    /* The whole row is read into f before any of y is written, so in place
     * works on both layouts. */
    if (s->path == PATH_ROWS) {
      adnn_cpu_lowp_to_f32(s->isa, s->dtype, x, f, (size_t)D);
    } else {
      for (int64_t j0 = 0; j0 < D; j0 += ADNN_CPU_LOWP_BLOCK) {
        const int64_t n = D - j0 < ADNN_CPU_LOWP_BLOCK ? D - j0 : ADNN_CPU_LOWP_BLOCK;
        for (int64_t j = 0; j < n; j++) {
          int64_t o[ADNN_ND_MAX_TENSORS];
          adnn_nd_offsets(&s->cols, j0 + j, o);
          h[j] = x[o[1]];
        }
        adnn_cpu_lowp_to_f32(s->isa, s->dtype, h, f + j0, (size_t)n);
      }
    }
    norm_row(s, f, f, (size_t)D, t->gain, t->bias);
    if (s->path == PATH_ROWS) {
      adnn_cpu_lowp_from_f32(s->isa, s->dtype, f, y, (size_t)D);
    } else {
      for (int64_t j0 = 0; j0 < D; j0 += ADNN_CPU_LOWP_BLOCK) {
        const int64_t n = D - j0 < ADNN_CPU_LOWP_BLOCK ? D - j0 : ADNN_CPU_LOWP_BLOCK;
        adnn_cpu_lowp_from_f32(s->isa, s->dtype, f + j0, h, (size_t)n);
        for (int64_t j = 0; j < n; j++) {
          int64_t o[ADNN_ND_MAX_TENSORS];
          adnn_nd_offsets(&s->cols, j0 + j, o);
          y[o[0]] = h[j];
        }
      }
    }
  }
}

/* Inputs {x}, then gain and bias when the problem has them. */
static void nrm_run(const void *problem, const void *state, const void *const *inputs,
                    void *const *outputs, void *workspace) {
  const adnn_plugin_norm *p = problem;
  const nrm_state *s = state;
  if (s->dtype == ADNN_DTYPE_F16 || s->dtype == ADNN_DTYPE_BF16) {
    nrm_lowp_task lt = {.s = s,
                        .x = inputs[0],
                        .gain = p->has_gain ? inputs[1] : NULL,
                        .bias = p->has_bias ? inputs[1 + p->has_gain] : NULL,
                        .y = outputs[0],
                        .work = workspace};
    adnn_cpu_parallel_for(s->outer, s->grain, run_lowp, &lt);
    return;
  }
  nrm_task t = {.s = s,
                .x = inputs[0],
                .gain = p->has_gain ? inputs[1] : NULL,
                .bias = p->has_bias ? inputs[1 + p->has_gain] : NULL,
                .y = outputs[0]};
  adnn_cpu_parallel_for(s->outer, s->grain, s->path == PATH_ROWS ? run_rows : run_strided, &t);
}

const adnn_cpu_impl adnn_cpu_norm_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32) | ADNN_OP_DTYPE(ADNN_DTYPE_F16) |
              ADNN_OP_DTYPE(ADNN_DTYPE_BF16),
    .state_size = sizeof(nrm_state),
    .reshape = nrm_reshape,
    .run = nrm_run,
};

#endif
