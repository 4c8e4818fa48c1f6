/*
 * Reduction (sum, mean, max, min over a set of axes), F32.
 *
 * At reshape the iteration space of x is coalesced together with y seen with
 * x's rank (adnn_plugin_reduce.yk, stride 0 along reduced dims), so that
 * neighbouring dims that are contiguous in both merge, and then split into
 * the kept dims (the outputs) and the reduced dims (the elements of one
 * output). Sums and means accumulate in double and round once, within a
 * rounding of the exact result whichever path runs; max and min propagate
 * NaN.
 *
 * Paths:
 *   rows:    the innermost dim is reduced and contiguous in x: each output's
 *            elements are runs of contiguous floats, summed (or maxed) with
 *            vectors along the run; outputs split across threads.
 *   columns: the innermost dim is kept and contiguous in x and y: a block of
 *            neighbouring outputs is reduced together, one vector lane per
 *            output, walking the reduced elements row by row (the bias
 *            gradient and NCHW-over-N,H,W patterns); blocks split across
 *            threads.
 *   strided: anything else; one output at a time with scalar loads.
 * When there are too few outputs to keep the threads busy (a full reduction,
 * a bias gradient), the rows and columns paths also cut each output's
 * elements into parts reduced in parallel and then combined (see
 * RD_SPLIT_TASKS). Every output's elements are visited in an order fixed by
 * the problem alone, so results are bit-identical run to run and for any
 * thread count.
 */
#ifdef ADNN_SIMD_VECTOR_PART

/* The sum of n contiguous floats, in double. */
static double NAME(rd_sum)(const float *x, size_t n) {
  VDH lo0 = {0}, hi0 = {0}, lo1 = {0}, hi1 = {0};
  size_t i = 0;
  for (; i + 2 * VL <= n; i += 2 * VL) {
    const VF a = NAME(vload)(x + i), b = NAME(vload)(x + i + VL);
    lo0 += NAME(vcvt_lo)(a);
    hi0 += NAME(vcvt_hi)(a);
    lo1 += NAME(vcvt_lo)(b);
    hi1 += NAME(vcvt_hi)(b);
  }
  for (; i + VL <= n; i += VL) {
    const VF a = NAME(vload)(x + i);
    lo0 += NAME(vcvt_lo)(a);
    hi0 += NAME(vcvt_hi)(a);
  }
  if (i < n) {
    const VF a = NAME(vload_n)(x + i, n - i, 0.0f);
    lo1 += NAME(vcvt_lo)(a);
    hi1 += NAME(vcvt_hi)(a);
  }
  return NAME(vdhsum)((lo0 + hi0) + (lo1 + hi1));
}

/* The NaN-propagating max (or, with is_min, min) of n > 0 contiguous floats. */
static float NAME(rd_extreme)(const float *x, size_t n, int is_min) {
  const float fill = is_min ? __builtin_inff() : -__builtin_inff();
  VF m = NAME(vset)(fill);
  size_t i = 0;
  if (is_min) {
    for (; i + VL <= n; i += VL) m = NAME(vmin_nan)(m, NAME(vload)(x + i));
    if (i < n) m = NAME(vmin_nan)(m, NAME(vload_n)(x + i, n - i, fill));
    return -NAME(vhmax)(-m);
  }
  for (; i + VL <= n; i += VL) m = NAME(vmax_nan)(m, NAME(vload)(x + i));
  if (i < n) m = NAME(vmax_nan)(m, NAME(vload_n)(x + i, n - i, fill));
  return NAME(vhmax)(m);
}

/* acc[c] += x[c] for c < w (the columns path's sums, in double). */
static void NAME(rd_cols_sum)(const float *x, double *acc, size_t w) {
  size_t c = 0;
  for (; c + VL <= w; c += VL) {
    const VF v = NAME(vload)(x + c);
    VDH lo, hi;
    memcpy(&lo, acc + c, sizeof lo);
    memcpy(&hi, acc + c + VL / 2, sizeof hi);
    lo += NAME(vcvt_lo)(v);
    hi += NAME(vcvt_hi)(v);
    memcpy(acc + c, &lo, sizeof lo);
    memcpy(acc + c + VL / 2, &hi, sizeof hi);
  }
  for (; c < w; c++) acc[c] += (double)x[c];
}

/* acc[c] = max (or min) of acc[c] and x[c] for c < w, NaN-propagating. */
static void NAME(rd_cols_extreme)(const float *x, float *acc, size_t w, int is_min) {
  size_t c = 0;
  for (; c + VL <= w; c += VL) {
    const VF a = NAME(vload)(acc + c), v = NAME(vload)(x + c);
    NAME(vstore)(acc + c, is_min ? NAME(vmin_nan)(a, v) : NAME(vmax_nan)(a, v));
  }
  if (c < w) {
    const VF a = NAME(vload_n)(acc + c, w - c, 0.0f), v = NAME(vload_n)(x + c, w - c, 0.0f);
    NAME(vstore_n)(acc + c, is_min ? NAME(vmin_nan)(a, v) : NAME(vmax_nan)(a, v), w - c);
  }
}

/* This instruction set's copy. */
static const rd_fns NAME(adnn_f32_reduce) = {
    NAME(rd_sum), NAME(rd_extreme), NAME(rd_cols_sum), NAME(rd_cols_extreme),
};

#else /* the dispatch part */

#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/simd.h"

/* One instruction set's copy of the vector code. */
typedef struct rd_fns {
  double (*sum)(const float *x, size_t n);
  float (*extreme)(const float *x, size_t n, int is_min);
  void (*cols_sum)(const float *x, double *acc, size_t w);
  void (*cols_extreme)(const float *x, float *acc, size_t w, int is_min);
} rd_fns;

#define ADNN_SIMD_KERNEL "kernels/cpu/reduce.c"
#include "kernels/cpu/simd_instantiate.h"

static const rd_fns *const rd_by_isa[ADNN_CPU_ISA_COUNT] = ADNN_CPU_ISA_TABLE(adnn_f32_reduce);

enum { PATH_ROWS = 0, PATH_COLUMNS = 1, PATH_STRIDED = 2 };

/* Outputs per block of the columns path: the accumulators of one block live
 * on the stack of the thread that reduces it. */
#define RD_BLOCK 256
/* Splitting: when there are fewer tasks than RD_SPLIT_TASKS (a few outputs,
 * e.g. a full reduction or a bias gradient), each output's elements are cut
 * into up to RD_MAX_PARTS parts of at least RD_PART_MIN elements, reduced in
 * parallel into the workspace and combined in part order. The number of
 * parts depends only on the problem, never on the thread count, so results
 * stay bit-identical on every machine with the same instruction set. */
#define RD_SPLIT_TASKS 64
#define RD_MAX_PARTS 64
#define RD_PART_MIN 16384

typedef struct rd_state {
  const rd_fns *fn;
  adnn_reduce_kind kind;
  /* The kept dims as a loop over x ([0]) and y ([1]); the reduced dims as a
   * loop over x ([0]). For the rows path the reduced loop excludes its
   * innermost, contiguous dim of length `run`. For the columns path the kept
   * loop excludes its innermost, contiguous dim of length `width`. */
  adnn_nd kept, reduced;
  int64_t run, width;
  int64_t count;   /* elements per output, for the mean */
  int64_t n_red;   /* iterations of the reduced loop */
  int64_t n_kept;  /* iterations of the kept loop */
  int64_t blocks;  /* columns path: blocks of RD_BLOCK outputs per kept index */
  int path;
  /* parts per output (1: no split); the rows path splits its `count`
   * elements, the columns path its n_red rows, into parts of part_len. */
  int64_t parts, part_len;
  int64_t tasks, grain;
} rd_state;

/* Splits coalesced dims (strides: [0] x, [1] yk) into kept and reduced loops. */
static void split_dims(const adnn_nd *all, adnn_nd *kept, adnn_nd *reduced) {
  memset(kept, 0, sizeof *kept);
  memset(reduced, 0, sizeof *reduced);
  for (int i = 0; i < all->rank; i++) {
    adnn_nd *to = all->strides[1][i] == 0 ? reduced : kept;
    to->dims[to->rank] = all->dims[i];
    to->strides[0][to->rank] = all->strides[0][i];
    to->strides[1][to->rank] = all->strides[1][i];
    to->rank++;
  }
}

/* Drops the innermost dim of a loop, returning its length. */
static int64_t pop_inner(adnn_nd *l) {
  const int64_t n = l->dims[l->rank - 1];
  l->rank--;
  l->dims[l->rank] = 0;
  l->strides[0][l->rank] = l->strides[1][l->rank] = 0;
  return n;
}

/* How many parts `units` of work of `unit_size` elements each are cut into. */
static int64_t parts_for(int64_t tasks, int64_t units, int64_t unit_size) {
  if (tasks >= RD_SPLIT_TASKS || units < 2) return 1;
  int64_t parts = units * unit_size / RD_PART_MIN;
  if (parts > RD_MAX_PARTS) parts = RD_MAX_PARTS;
  if (parts > units) parts = units;
  return parts > 1 ? parts : 1;
}

static void rd_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                       size_t *workspace_bytes) {
  const adnn_plugin_reduce *p = problem;
  rd_state *s = state;
  s->fn = rd_by_isa[env->isa];
  s->kind = p->kind;
  s->count = p->count;
  const int64_t *strides[2] = {p->x.strides, p->yk.strides};
  adnn_nd all;
  adnn_nd_coalesce(&all, p->x.rank, p->x.dims, 2, strides);
  split_dims(&all, &s->kept, &s->reduced);
  const int last = all.rank - 1;
  int64_t work; /* elements per task, for the grain */
  s->parts = 1;
  *workspace_bytes = 0;
  if (last >= 0 && all.strides[1][last] == 0 && all.strides[0][last] == 1) {
    s->path = PATH_ROWS;
    s->run = pop_inner(&s->reduced);
    s->n_red = adnn_nd_count(&s->reduced);
    s->n_kept = adnn_nd_count(&s->kept);
    s->parts = parts_for(s->n_kept, p->count, 1);
    s->part_len = (p->count + s->parts - 1) / s->parts;
    s->tasks = s->n_kept * s->parts;
    work = s->part_len;
    if (s->parts > 1) *workspace_bytes = (size_t)(s->n_kept * s->parts) * sizeof(double);
  } else if (last >= 0 && all.strides[1][last] == 1 && all.strides[0][last] == 1) {
    s->path = PATH_COLUMNS;
    s->width = pop_inner(&s->kept);
    s->n_red = adnn_nd_count(&s->reduced);
    s->n_kept = adnn_nd_count(&s->kept);
    s->blocks = (s->width + RD_BLOCK - 1) / RD_BLOCK;
    const int64_t w = s->width < RD_BLOCK ? s->width : RD_BLOCK;
    s->parts = parts_for(s->n_kept * s->blocks, s->n_red, w);
    s->part_len = (s->n_red + s->parts - 1) / s->parts;
    s->tasks = s->n_kept * s->blocks * s->parts;
    work = s->part_len * w;
    if (s->parts > 1)
      *workspace_bytes = (size_t)(s->n_kept * s->blocks * s->parts * RD_BLOCK) * sizeof(double);
  } else {
    s->path = PATH_STRIDED;
    s->n_red = adnn_nd_count(&s->reduced);
    s->n_kept = p->outputs;
    s->tasks = p->outputs;
    work = p->count;
  }
  const int64_t grain = ADNN_CPU_GRAIN / (work > 0 ? work : 1);
  s->grain = grain > 1 ? grain : 1;
}

typedef struct rd_task {
  const rd_state *s;
  const float *x;
  float *y;
  double *ws; /* the parts' partial results when split */
} rd_task;

static int is_sum(adnn_reduce_kind k) { return k == ADNN_REDUCE_SUM || k == ADNN_REDUCE_MEAN; }

/* The final value of one output from its double sum or its extreme. */
static float finish(const rd_state *s, double sum, float extreme) {
  if (s->kind == ADNN_REDUCE_SUM) return (float)sum;
  if (s->kind == ADNN_REDUCE_MEAN) return (float)(sum / (double)s->count);
  return extreme;
}

/* NaN-propagating running max or min of two floats. */
static float combine(float a, float b, int is_min) {
  if (a != a || b != b) return NAN;
  return is_min ? (b < a ? b : a) : (b > a ? b : a);
}

/* Rows path: elements [lo, hi) of one output (element e is number e % run of
 * the run at reduced index e / run), from x (the output's first element).
 * Returns the sum, or stores the extreme in *ext. */
static double rows_range(const rd_state *s, const float *x, int64_t lo, int64_t hi, float *ext) {
  const int summing = is_sum(s->kind), is_min = s->kind == ADNN_REDUCE_MIN;
  double sum = 0.0;
  int first = 1;
  for (int64_t e = lo; e < hi;) {
    const int64_t r = e / s->run, j = e - r * s->run;
    const int64_t n = s->run - j < hi - e ? s->run - j : hi - e;
    int64_t ro[ADNN_ND_MAX_TENSORS];
    adnn_nd_offsets(&s->reduced, r, ro);
    const float *seg = x + ro[0] + j;
    if (summing) {
      sum += s->fn->sum(seg, (size_t)n);
    } else {
      const float m = s->fn->extreme(seg, (size_t)n, is_min);
      *ext = first ? m : combine(*ext, m, is_min);
    }
    first = 0;
    e += n;
  }
  return sum;
}

static void run_rows(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const rd_task *t = arg;
  const rd_state *s = t->s;
  for (int64_t k = begin; k < end; k++) {
    const int64_t o = k / s->parts, part = k - o * s->parts;
    int64_t ko[ADNN_ND_MAX_TENSORS];
    adnn_nd_offsets(&s->kept, o, ko);
    const int64_t lo = part * s->part_len;
    const int64_t hi = lo + s->part_len < s->count ? lo + s->part_len : s->count;
    float ext = 0.0f;
    const double sum = rows_range(s, t->x + ko[0], lo, hi, &ext);
    if (s->parts == 1) t->y[ko[1]] = finish(s, sum, ext);
    else t->ws[k] = is_sum(s->kind) ? sum : (double)ext;
  }
}

/* Columns path: reduced rows [lo, hi) of a block of w outputs whose first
 * elements start at x, into acc (sums) or ext (extremes). */
static void columns_range(const rd_state *s, const float *x, int64_t lo, int64_t hi, int64_t w,
                          double *acc, float *ext) {
  const int summing = is_sum(s->kind), is_min = s->kind == ADNN_REDUCE_MIN;
  if (summing) memset(acc, 0, (size_t)w * sizeof *acc);
  for (int64_t r = lo; r < hi; r++) {
    int64_t ro[ADNN_ND_MAX_TENSORS];
    adnn_nd_offsets(&s->reduced, r, ro);
    const float *row = x + ro[0];
    if (summing) s->fn->cols_sum(row, acc, (size_t)w);
    else if (r == lo) memcpy(ext, row, (size_t)w * sizeof *row);
    else s->fn->cols_extreme(row, ext, (size_t)w, is_min);
  }
}

static void run_columns(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const rd_task *t = arg;
  const rd_state *s = t->s;
  double acc[RD_BLOCK];
  float ext[RD_BLOCK];
  for (int64_t k = begin; k < end; k++) {
    const int64_t part = k % s->parts, ob = k / s->parts;
    const int64_t o = ob / s->blocks, c0 = (ob - o * s->blocks) * RD_BLOCK;
    const int64_t w = s->width - c0 < RD_BLOCK ? s->width - c0 : RD_BLOCK;
    int64_t ko[ADNN_ND_MAX_TENSORS];
    adnn_nd_offsets(&s->kept, o, ko);
    const int64_t lo = part * s->part_len;
    const int64_t hi = lo + s->part_len < s->n_red ? lo + s->part_len : s->n_red;
    columns_range(s, t->x + ko[0] + c0, lo, hi, w, acc, ext);
    if (s->parts == 1) {
      float *y = t->y + ko[1] + c0;
      for (int64_t c = 0; c < w; c++) y[c] = finish(s, acc[c], ext[c]);
    } else {
      double *dst = t->ws + k * RD_BLOCK;
      for (int64_t c = 0; c < w; c++) dst[c] = is_sum(s->kind) ? acc[c] : (double)ext[c];
    }
  }
}

/* The second step of a split reduction: combines each output's parts in part
 * order. For the columns path a "unit" is a block of outputs. */
static void run_combine(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const rd_task *t = arg;
  const rd_state *s = t->s;
  const int summing = is_sum(s->kind), is_min = s->kind == ADNN_REDUCE_MIN;
  for (int64_t u = begin; u < end; u++) {
    int64_t ko[ADNN_ND_MAX_TENSORS];
    if (s->path == PATH_ROWS) {
      adnn_nd_offsets(&s->kept, u, ko);
      const double *part = t->ws + u * s->parts;
      double sum = part[0];
      float ext = (float)part[0];
      for (int64_t q = 1; q < s->parts; q++) {
        if (summing) sum += part[q];
        else ext = combine(ext, (float)part[q], is_min);
      }
      t->y[ko[1]] = finish(s, sum, ext);
    } else {
      const int64_t o = u / s->blocks, c0 = (u - o * s->blocks) * RD_BLOCK;
      const int64_t w = s->width - c0 < RD_BLOCK ? s->width - c0 : RD_BLOCK;
      adnn_nd_offsets(&s->kept, o, ko);
      const double *part = t->ws + u * s->parts * RD_BLOCK;
      float *y = t->y + ko[1] + c0;
      for (int64_t c = 0; c < w; c++) {
        double sum = part[c];
        float ext = (float)part[c];
        for (int64_t q = 1; q < s->parts; q++) {
          if (summing) sum += part[q * RD_BLOCK + c];
          else ext = combine(ext, (float)part[q * RD_BLOCK + c], is_min);
        }
        y[c] = finish(s, sum, ext);
      }
    }
  }
}

static void run_strided(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const rd_task *t = arg;
  const rd_state *s = t->s;
  const int summing = is_sum(s->kind), is_min = s->kind == ADNN_REDUCE_MIN;
  for (int64_t o = begin; o < end; o++) {
    int64_t ko[ADNN_ND_MAX_TENSORS];
    adnn_nd_offsets(&s->kept, o, ko);
    double sum = 0.0;
    float ext = 0.0f;
    for (int64_t r = 0; r < s->n_red; r++) {
      int64_t ro[ADNN_ND_MAX_TENSORS];
      adnn_nd_offsets(&s->reduced, r, ro);
      const float v = t->x[ko[0] + ro[0]];
      if (summing) sum += (double)v;
      else ext = r == 0 ? v : combine(ext, v, is_min);
    }
    t->y[ko[1]] = finish(s, sum, ext);
  }
}

static void rd_run(const void *problem, const void *state, const void *const *inputs,
                   void *const *outputs, void *workspace) {
  (void)problem;
  const rd_state *s = state;
  rd_task t = {s, inputs[0], outputs[0], workspace};
  adnn_cpu_parallel_for(s->tasks, s->grain,
                        s->path == PATH_ROWS      ? run_rows
                        : s->path == PATH_COLUMNS ? run_columns
                                                  : run_strided,
                        &t);
  if (s->parts > 1)
    adnn_cpu_parallel_for(s->path == PATH_ROWS ? s->n_kept : s->n_kept * s->blocks, 1,
                          run_combine, &t);
}

const adnn_cpu_impl adnn_cpu_reduce_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32),
    .state_size = sizeof(rd_state),
    .reshape = rd_reshape,
    .run = rd_run,
};

#endif
