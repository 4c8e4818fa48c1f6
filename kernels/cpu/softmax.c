/*
 * Softmax and log-softmax along one axis.
 *
 * x is viewed as [outer, L, inner] (L the axis length). Three passes per
 * slice, always max-subtracted: (1) the maximum, with NaN and +inf detected on
 * the way (they propagate through the NaN-aware max, and a maximum of -inf
 * means the slice holds only -inf; all three make the whole slice NaN, as the
 * definition says); (2) sum of exp(x - max), accumulated in double; softmax
 * stores exp(x - max) into y during this pass so pass 3 only rescales y;
 * (3) y *= 1/sum, or y = x - max - log(sum) for log-softmax.
 *
 * Paths (reshape time):
 *   rows:    inner == 1 and the axis has unit stride in x and y: each slice is
 *            a contiguous row, vectorized along it; rows split across threads.
 *   columns: the dims after the axis collapse to one unit-stride run in x and
 *            y: neighbouring slices are processed together, one per vector
 *            lane, so loads stay contiguous whatever the axis stride. Blocks
 *            of 4 vectors walk down the axis; for long axes, blocks of up to
 *            512 slices are walked row by row instead (sm_wide).
 *   strided: anything else; each slice is gathered chunk by chunk into a stack
 *            buffer and the row code runs on the chunks.
 * In place (y == x with the same layout) works on every path because each
 * element of x is read before the y at the same place is written.
 *
 * F16 and BF16 (run_lowp): each slice is widened into the thread's F32 row of
 * the workspace (L floats per thread, sized at reshape) with the shared block
 * converters of lowp.h, the F32 row code runs on it in place, and the row is
 * narrowed once on store. The arithmetic is therefore exactly the F32 rows
 * path on the widened input, followed by one round to nearest even; the
 * t/cpu-lowp-ops test holds the kernel to that, bit for bit.
 */
#ifdef ADNN_SIMD_VECTOR_PART

/* The NaN-propagating maximum of n floats. */
static float NAME(sm_max)(const float *x, size_t n) {
  const VF ninf = NAME(vset)(-__builtin_inff());
  VF m0 = ninf, m1 = ninf;
  size_t i = 0;
  for (; i + 2 * VL <= n; i += 2 * VL) {
    m0 = NAME(vmax_nan)(m0, NAME(vload)(x + i));
    m1 = NAME(vmax_nan)(m1, NAME(vload)(x + i + VL));
  }
  for (; i + VL <= n; i += VL) m0 = NAME(vmax_nan)(m0, NAME(vload)(x + i));
  if (i < n) m1 = NAME(vmax_nan)(m1, NAME(vload_n)(x + i, n - i, -__builtin_inff()));
  return NAME(vhmax)(NAME(vmax_nan)(m0, m1));
}

/* Sum of exp(x[i] - m) in double; stores the terms into e when e != NULL. */
static double NAME(sm_expsum)(const float *x, float *e, size_t n, float m) {
  const VF vm = NAME(vset)(m);
  VDH lo = {0}, hi = {0};
  size_t i = 0;
  for (; i + VL <= n; i += VL) {
    VF t = NAME(vexp)(NAME(vload)(x + i) - vm);
    if (e) NAME(vstore)(e + i, t);
    lo += NAME(vcvt_lo)(t);
    hi += NAME(vcvt_hi)(t);
  }
  if (i < n) {
    VF t = NAME(vexp)(NAME(vload_n)(x + i, n - i, -__builtin_inff()) - vm);
    if (e) NAME(vstore_n)(e + i, t, n - i);
    lo += NAME(vcvt_lo)(t);
    hi += NAME(vcvt_hi)(t);
  }
  return NAME(vdhsum)(lo + hi);
}

/* The last pass over n elements: mode 0 y = src * c (src holds the exps),
 * mode 1 y = exp(src - m) * c (src is x), mode 2 y = src - m - c (log). */
static void NAME(sm_finish)(const float *src, float *y, size_t n, float m, float c, int mode) {
  const VF vm = NAME(vset)(m), vc = NAME(vset)(c);
  size_t i = 0;
#define SM_FINISH_LOOP(EXPR)                                        \
  for (; i + VL <= n; i += VL) {                                    \
    VF v = NAME(vload)(src + i);                                    \
    NAME(vstore)(y + i, EXPR);                                      \
  }                                                                 \
  if (i < n) {                                                      \
    VF v = NAME(vload_n)(src + i, n - i, 0.0f);                     \
    NAME(vstore_n)(y + i, EXPR, n - i);                             \
  }
  if (mode == 0) {
    SM_FINISH_LOOP(v * vc)
  } else if (mode == 1) {
    SM_FINISH_LOOP(NAME(vexp)(v - vm) * vc)
  } else {
    SM_FINISH_LOOP((v - vm) - vc)
  }
#undef SM_FINISH_LOOP
}

static void NAME(sm_row)(const float *x, float *y, size_t n, int log) {
  const float m = NAME(sm_max)(x, n);
  if (!(m > -__builtin_inff() && m < __builtin_inff())) {
    for (size_t i = 0; i < n; i++) y[i] = __builtin_nanf("");
    return;
  }
  if (log) {
    const double s = NAME(sm_expsum)(x, NULL, n, m);
    NAME(sm_finish)(x, y, n, m, (float)__builtin_log(s), 2);
  } else {
    const double s = NAME(sm_expsum)(x, y, n, m);
    NAME(sm_finish)(y, y, n, m, (float)(1.0 / s), 0);
  }
}

/* NV * VL neighbouring slices at unit distance (the last vector holding only
 * `w` of them, w <= VL), each of length L with element j at x + j * sx
 * (y + j * sy): one slice per lane. NV is a constant at each call so the
 * per-vector arrays below live in registers; NV = 4 makes every row j touch
 * four whole cache lines, which keeps the strided walk down the axis cheap. */
SIMD_INLINE void NAME(sm_cols_k)(const float *x, int64_t sx, float *y, int64_t sy, size_t L,
                                 size_t w, int log, const int NV) {
  const float ninf = -__builtin_inff();
#define SM_LD(p, v, fill) \
  ((v) < NV - 1 || w == VL ? NAME(vload)((p) + (v) * VL) : NAME(vload_n)((p) + (v) * VL, w, fill))
#define SM_ST(p, v, val)                           \
  do {                                             \
    if ((v) < NV - 1 || w == VL)                   \
      NAME(vstore)((p) + (v) * VL, val);           \
    else                                           \
      NAME(vstore_n)((p) + (v) * VL, val, w);      \
  } while (0)
  VF m[4], c[4];
  VDH lo[4], hi[4];
  VI bad[4];
#pragma GCC unroll 4
  for (int v = 0; v < NV; v++) m[v] = NAME(vset)(ninf);
  for (size_t j = 0; j < L; j++) {
    const float *p = x + (int64_t)j * sx;
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) m[v] = NAME(vmax_nan)(m[v], SM_LD(p, v, ninf));
  }
  /* Lanes whose slice holds NaN or +inf, or only -inf, come out NaN. */
#pragma GCC unroll 4
  for (int v = 0; v < NV; v++) {
    bad[v] = ~((m[v] > ninf) & (m[v] < -ninf));
    lo[v] = (VDH){0};
    hi[v] = (VDH){0};
  }
  for (size_t j = 0; j < L; j++) {
    const float *p = x + (int64_t)j * sx;
    float *q = y + (int64_t)j * sy;
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) {
      VF t = NAME(vexp)(SM_LD(p, v, ninf) - m[v]);
      lo[v] += NAME(vcvt_lo)(t);
      hi[v] += NAME(vcvt_hi)(t);
      if (!log) SM_ST(q, v, t);
    }
  }
#pragma GCC unroll 4
  for (int v = 0; v < NV; v++) {
    c[v] = (VF){0};
    for (int k = 0; k < VL / 2; k++) {
      c[v][k] = (float)(log ? __builtin_log(lo[v][k]) : 1.0 / lo[v][k]);
      c[v][k + VL / 2] = (float)(log ? __builtin_log(hi[v][k]) : 1.0 / hi[v][k]);
    }
  }
  const VF nan = NAME(vset)(__builtin_nanf(""));
  for (size_t j = 0; j < L; j++) {
    const float *p = x + (int64_t)j * sx;
    float *q = y + (int64_t)j * sy;
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) {
      VF r = log ? (SM_LD(p, v, 0.0f) - m[v]) - c[v] : SM_LD(q, v, 0.0f) * c[v];
      SM_ST(q, v, NAME(vsel)(bad[v], nan, r));
    }
  }
#undef SM_LD
#undef SM_ST
}

/* A block of up to 4 * VL slices starting at x / y. */
static void NAME(sm_cols)(const float *x, int64_t sx, float *y, int64_t sy, size_t L, size_t w,
                          int log) {
  if (w == 4 * VL) {
    NAME(sm_cols_k)(x, sx, y, sy, L, VL, log, 4);
    return;
  }
  for (size_t i = 0; i < w; i += VL)
    NAME(sm_cols_k)(x + i, sx, y + i, sy, L, w - i < VL ? w - i : VL, log, 1);
}

/* The wide variant of the columns path for long axes: w <= SM_WIDE slices
 * side by side, walked row by row (each row of the block is one contiguous
 * run of w floats, friendly to the prefetcher and the TLB, unlike a walk down
 * a narrow column block), with the per-slice maxima and sums kept in the
 * caller's stack arrays m (w floats) and s (w doubles). */
static void NAME(sm_wide)(const float *x, int64_t sx, float *y, int64_t sy, size_t L, size_t w,
                          int log, float *m, double *s) {
  const float ninf = -__builtin_inff();
  for (size_t c = 0; c < w; c++) {
    m[c] = ninf;
    s[c] = 0.0;
  }
  for (size_t j = 0; j < L; j++) {
    const float *p = x + (int64_t)j * sx;
    size_t c = 0;
    for (; c + VL <= w; c += VL)
      NAME(vstore)(m + c, NAME(vmax_nan)(NAME(vload)(m + c), NAME(vload)(p + c)));
    if (c < w)
      NAME(vstore_n)(m + c, NAME(vmax_nan)(NAME(vload_n)(m + c, w - c, ninf),
                                           NAME(vload_n)(p + c, w - c, ninf)), w - c);
  }
  for (size_t j = 0; j < L; j++) {
    const float *p = x + (int64_t)j * sx;
    float *q = y + (int64_t)j * sy;
    for (size_t c = 0; c < w; c += VL) {
      const size_t r = w - c < VL ? w - c : VL;
      VF t = NAME(vexp)((r == VL ? NAME(vload)(p + c) : NAME(vload_n)(p + c, r, ninf)) -
                        (r == VL ? NAME(vload)(m + c) : NAME(vload_n)(m + c, r, 0.0f)));
      if (!log) {
        if (r == VL)
          NAME(vstore)(q + c, t);
        else
          NAME(vstore_n)(q + c, t, r);
      }
      VDH lo, hi;
      memcpy(&lo, s + c, sizeof lo);
      memcpy(&hi, s + c + VL / 2, sizeof hi);
      lo += NAME(vcvt_lo)(t);
      hi += NAME(vcvt_hi)(t);
      memcpy(s + c, &lo, sizeof lo);
      memcpy(s + c + VL / 2, &hi, sizeof hi);
    }
  }
  /* Per slice: NaN/+inf inside or only -inf -> NaN; otherwise 1/sum or
   * log(sum), kept as floats in the space of s (not needed any more). */
  float *k = (float *)s;
  for (size_t c = 0; c < w; c++) {
    const float mc = m[c];
    const int bad = !(mc > ninf && mc < -ninf);
    const double sc = s[c];
    k[c] = bad ? __builtin_nanf("") : (float)(log ? __builtin_log(sc) : 1.0 / sc);
  }
  for (size_t j = 0; j < L; j++) {
    const float *p = x + (int64_t)j * sx;
    float *q = y + (int64_t)j * sy;
    for (size_t c = 0; c < w; c += VL) {
      const size_t r = w - c < VL ? w - c : VL;
      const VF kc = r == VL ? NAME(vload)(k + c) : NAME(vload_n)(k + c, r, 0.0f);
      VF v;
      if (log) {
        const VF mc = r == VL ? NAME(vload)(m + c) : NAME(vload_n)(m + c, r, 0.0f);
        v = ((r == VL ? NAME(vload)(p + c) : NAME(vload_n)(p + c, r, 0.0f)) - mc) - kc;
      } else {
        v = (r == VL ? NAME(vload)(q + c) : NAME(vload_n)(q + c, r, 0.0f)) * kc;
      }
      /* kc is NaN for a bad slice, and NaN * anything or x - NaN is NaN. */
      if (r == VL)
        NAME(vstore)(q + c, v);
      else
        NAME(vstore_n)(q + c, v, r);
    }
  }
}

/* This instruction set's copy. */
static const sm_fns NAME(adnn_f32_softmax) = {
    NAME(sm_max), NAME(sm_expsum), NAME(sm_finish), NAME(sm_row),
    NAME(sm_cols), NAME(sm_wide), 4 * VL,
};

#else /* the dispatch part */

#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/lowp.h"
#include "kernels/cpu/simd.h"

/* One instruction set's copy of the vector code. */
typedef struct sm_fns {
  float (*max)(const float *x, size_t n);
  double (*expsum)(const float *x, float *e, size_t n, float m);
  void (*finish)(const float *src, float *y, size_t n, float m, float c, int mode);
  void (*row)(const float *x, float *y, size_t n, int log);
  void (*cols)(const float *x, int64_t sx, float *y, int64_t sy, size_t L, size_t w, int log);
  void (*wide)(const float *x, int64_t sx, float *y, int64_t sy, size_t L, size_t w, int log,
               float *m, double *s);
  size_t lanes; /* slices per block of the columns path: 4 vectors */
} sm_fns;

#define ADNN_SIMD_KERNEL "kernels/cpu/softmax.c"
#include "kernels/cpu/simd_instantiate.h"

static const sm_fns *const sm_by_isa[ADNN_CPU_ISA_COUNT] = ADNN_CPU_ISA_TABLE(adnn_f32_softmax);

enum { PATH_ROWS = 0, PATH_COLUMNS = 1, PATH_STRIDED = 2 };

/* Columns per block of the wide variant, and the axis length from which it
 * replaces narrow blocks: a narrow block walks L rows of 4*VL floats per pass,
 * touching L pages when the rows are far apart, which thrashes the TLB once L
 * is in the thousands. */
#define SM_WIDE 512
#define SM_WIDE_MIN_L 1024

typedef struct sm_state {
  const sm_fns *fn;
  /* The outer dims (before the axis) and inner dims (after it) as loops over
   * y ([0]) and x ([1]). */
  adnn_nd outer_loop, inner_loop;
  int64_t L, sx, sy; /* axis length and strides */
  int path;
  int log;
  int64_t outer, inner; /* slices before and after the axis */
  int64_t lanes, blocks; /* columns path: slices per block, blocks per outer index */
  int64_t tasks, grain;  /* parallel_for's range and grain */
  adnn_dtype dtype;      /* F32, or F16 / BF16 (run_lowp) */
  int isa;               /* env->isa, for the lowp.h converters */
} sm_state;

static void sm_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                       size_t *workspace_bytes) {
  const adnn_plugin_softmax *p = problem;
  sm_state *s = state;
  const int ax = p->axis;
  adnn_tensor_desc yo, xo, yi, xi;
  adnn_cpu_sub_desc(&p->y, 0, ax, &yo);
  adnn_cpu_sub_desc(&p->x, 0, ax, &xo);
  adnn_cpu_sub_desc(&p->y, ax + 1, p->y.rank, &yi);
  adnn_cpu_sub_desc(&p->x, ax + 1, p->x.rank, &xi);
  const adnn_tensor_desc *to[2] = {&yo, &xo}, *ti[2] = {&yi, &xi};
  adnn_cpu_loop_init(&s->outer_loop, 2, to);
  adnn_cpu_loop_init(&s->inner_loop, 2, ti);
  s->fn = sm_by_isa[env->isa];
  s->L = p->x.dims[ax];
  s->sx = p->x.strides[ax];
  s->sy = p->y.strides[ax];
  s->log = p->log;
  s->outer = adnn_nd_count(&s->outer_loop);
  s->inner = adnn_nd_count(&s->inner_loop);
  const adnn_nd *in = &s->inner_loop;
  const int il = in->rank - 1;
  if (s->inner == 1 && (s->sx == 1 || s->L == 1) && (s->sy == 1 || s->L == 1))
    s->path = PATH_ROWS;
  else if (in->rank == 1 && in->strides[0][il] == 1 && in->strides[1][il] == 1)
    s->path = PATH_COLUMNS;
  else
    s->path = PATH_STRIDED;
  int64_t grain;
  if (s->path == PATH_COLUMNS) {
    const int64_t lanes = (int64_t)s->fn->lanes;
    s->lanes = s->L >= SM_WIDE_MIN_L && s->inner > lanes ? SM_WIDE : lanes;
    s->blocks = (s->inner + s->lanes - 1) / s->lanes;
    s->tasks = s->outer * s->blocks;
    /* L * lanes can exceed int64 for a huge axis of a zero-stride
     * (broadcast) x: such a slice is more than a grain on its own. */
    grain = s->L > ADNN_CPU_GRAIN / s->lanes ? 1 : ADNN_CPU_GRAIN / (s->L * s->lanes);
  } else {
    s->tasks = s->path == PATH_ROWS ? s->outer : s->outer * s->inner;
    grain = ADNN_CPU_GRAIN / s->L;
  }
  s->grain = grain > 1 ? grain : 1;
  s->dtype = p->x.dtype;
  s->isa = env->isa;
  *workspace_bytes = 0;
  if (s->dtype == ADNN_DTYPE_F16 || s->dtype == ADNN_DTYPE_BF16) {
    /* One slice per task, each widened into its thread's F32 row. */
    s->tasks = s->outer * s->inner;
    const int64_t g = ADNN_CPU_GRAIN / s->L;
    s->grain = g > 1 ? g : 1;
    *workspace_bytes = (size_t)env->threads * (size_t)s->L * sizeof(float);
  }
}

typedef struct sm_task {
  const sm_state *s;
  const float *x;
  float *y;
} sm_task;

static void run_rows(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const sm_task *t = arg;
  const sm_state *s = t->s;
  for (int64_t o = begin; o < end; o++) {
    int64_t off[ADNN_ND_MAX_TENSORS];
    adnn_nd_offsets(&s->outer_loop, o, off);
    s->fn->row(t->x + off[1], t->y + off[0], (size_t)s->L, s->log);
  }
}

static void run_columns(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const sm_task *t = arg;
  const sm_state *s = t->s;
  float m[SM_WIDE];
  double sum[SM_WIDE];
  for (int64_t b = begin; b < end; b++) {
    const int64_t o = b / s->blocks, i0 = (b - o * s->blocks) * s->lanes;
    const int64_t w = s->inner - i0 < s->lanes ? s->inner - i0 : s->lanes;
    int64_t off[ADNN_ND_MAX_TENSORS];
    adnn_nd_offsets(&s->outer_loop, o, off);
    if (s->lanes == SM_WIDE)
      s->fn->wide(t->x + off[1] + i0, s->sx, t->y + off[0] + i0, s->sy, (size_t)s->L, (size_t)w,
                  s->log, m, sum);
    else
      s->fn->cols(t->x + off[1] + i0, s->sx, t->y + off[0] + i0, s->sy, (size_t)s->L, (size_t)w,
                  s->log);
  }
}

#define CHUNK 256

/* One slice at arbitrary strides, through a stack buffer. */
static void strided_slice(const sm_state *s, const float *x, int64_t sx, float *y, int64_t sy) {
  const int64_t L = s->L;
  float buf[CHUNK];
  float m = -INFINITY;
  for (int64_t j0 = 0; j0 < L; j0 += CHUNK) {
    const int64_t n = L - j0 < CHUNK ? L - j0 : CHUNK;
    for (int64_t j = 0; j < n; j++) buf[j] = x[(j0 + j) * sx];
    const float cm = s->fn->max(buf, (size_t)n);
    if (cm != cm || cm > m) m = cm;
    if (m != m) break;
  }
  if (!(m > -INFINITY && m < INFINITY)) {
    for (int64_t j = 0; j < L; j++) y[j * sy] = NAN;
    return;
  }
  double sum = 0.0;
  for (int64_t j0 = 0; j0 < L; j0 += CHUNK) {
    const int64_t n = L - j0 < CHUNK ? L - j0 : CHUNK;
    for (int64_t j = 0; j < n; j++) buf[j] = x[(j0 + j) * sx];
    sum += s->fn->expsum(buf, NULL, (size_t)n, m);
  }
  const int mode = s->log ? 2 : 1;
  const float c = s->log ? (float)log(sum) : (float)(1.0 / sum);
  for (int64_t j0 = 0; j0 < L; j0 += CHUNK) {
    const int64_t n = L - j0 < CHUNK ? L - j0 : CHUNK;
    for (int64_t j = 0; j < n; j++) buf[j] = x[(j0 + j) * sx];
    s->fn->finish(buf, buf, (size_t)n, m, c, mode);
    for (int64_t j = 0; j < n; j++) y[(j0 + j) * sy] = buf[j];
  }
}

static void run_strided(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const sm_task *t = arg;
  const sm_state *s = t->s;
  for (int64_t k = begin; k < end; k++) {
    const int64_t o = k / s->inner, i = k - o * s->inner;
    int64_t oo[ADNN_ND_MAX_TENSORS], io[ADNN_ND_MAX_TENSORS];
    adnn_nd_offsets(&s->outer_loop, o, oo);
    adnn_nd_offsets(&s->inner_loop, i, io);
    strided_slice(s, t->x + oo[1] + io[1], s->sx, t->y + oo[0] + io[0], s->sy);
  }
}

/* Converts n 16-bit elements at stride sx into f (F32), through a stack
 * block when the stride is not 1. */
static void lowp_widen(const sm_state *s, const uint16_t *x, int64_t sx, float *f, int64_t n) {
  if (sx == 1 || n == 1) {
    adnn_cpu_lowp_to_f32(s->isa, s->dtype, x, f, (size_t)n);
    return;
  }
  uint16_t h[ADNN_CPU_LOWP_BLOCK];
  for (int64_t j0 = 0; j0 < n; j0 += ADNN_CPU_LOWP_BLOCK) {
    const int64_t m = n - j0 < ADNN_CPU_LOWP_BLOCK ? n - j0 : ADNN_CPU_LOWP_BLOCK;
    for (int64_t j = 0; j < m; j++) h[j] = x[(j0 + j) * sx];
    adnn_cpu_lowp_to_f32(s->isa, s->dtype, h, f + j0, (size_t)m);
  }
}

/* Rounds n F32 elements of f once to the 16-bit type, stored at stride sy. */
static void lowp_narrow(const sm_state *s, const float *f, uint16_t *y, int64_t sy, int64_t n) {
  if (sy == 1 || n == 1) {
    adnn_cpu_lowp_from_f32(s->isa, s->dtype, f, y, (size_t)n);
    return;
  }
  uint16_t h[ADNN_CPU_LOWP_BLOCK];
  for (int64_t j0 = 0; j0 < n; j0 += ADNN_CPU_LOWP_BLOCK) {
    const int64_t m = n - j0 < ADNN_CPU_LOWP_BLOCK ? n - j0 : ADNN_CPU_LOWP_BLOCK;
    adnn_cpu_lowp_from_f32(s->isa, s->dtype, f + j0, h, (size_t)m);
    for (int64_t j = 0; j < m; j++) y[(j0 + j) * sy] = h[j];
  }
}

typedef struct sm_lowp_task {
  const sm_state *s;
  const uint16_t *x;
  uint16_t *y;
  float *work; /* threads rows of L floats */
} sm_lowp_task;

static void run_lowp(void *arg, int64_t begin, int64_t end, int thread) {
  const sm_lowp_task *t = arg;
  const sm_state *s = t->s;
  float *f = t->work + (size_t)thread * (size_t)s->L;
  for (int64_t k = begin; k < end; k++) {
    const int64_t o = k / s->inner, i = k - o * s->inner;
    int64_t oo[ADNN_ND_MAX_TENSORS], io[ADNN_ND_MAX_TENSORS];
    adnn_nd_offsets(&s->outer_loop, o, oo);
    adnn_nd_offsets(&s->inner_loop, i, io);
    /* The whole slice is read into f before any of y is written, so in
     * place works whatever the layouts. */
    lowp_widen(s, t->x + oo[1] + io[1], s->sx, f, s->L);
    s->fn->row(f, f, (size_t)s->L, s->log);
    lowp_narrow(s, f, t->y + oo[0] + io[0], s->sy, s->L);
  }
}

static void sm_run(const void *problem, const void *state, const void *const *inputs,
                   void *const *outputs, void *workspace) {
  (void)problem;
  const sm_state *s = state;
  if (s->dtype == ADNN_DTYPE_F16 || s->dtype == ADNN_DTYPE_BF16) {
    sm_lowp_task lt = {s, inputs[0], outputs[0], workspace};
    adnn_cpu_parallel_for(s->tasks, s->grain, run_lowp, &lt);
    return;
  }
  sm_task t = {s, inputs[0], outputs[0]};
  adnn_cpu_parallel_for(s->tasks, s->grain,
                        s->path == PATH_ROWS      ? run_rows
                        : s->path == PATH_COLUMNS ? run_columns
                                                  : run_strided,
                        &t);
}

const adnn_cpu_impl adnn_cpu_softmax_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32) | ADNN_OP_DTYPE(ADNN_DTYPE_F16) |
              ADNN_OP_DTYPE(ADNN_DTYPE_BF16),
    .state_size = sizeof(sm_state),
    .reshape = sm_reshape,
    .run = sm_run,
};

#endif
