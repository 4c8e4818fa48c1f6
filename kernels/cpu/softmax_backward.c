/*
 * Softmax and log-softmax backward along one axis:
 *   softmax:     dx = y * (dy - sum(y * dy))
 *   log-softmax: dx = dy - exp(y) * sum(dy)
 * with the sum over the slice accumulated in double, formed before any dx of
 * the slice is written (so dx may be dy, which the core allows when x and y
 * have one layout).
 *
 * y and dy have the forward y's layout and dx the forward x's, so two stride
 * patterns describe the three tensors. The tensor is viewed as [outer, L,
 * inner] (L the axis length). Paths (reshape time):
 *   rows:    inner == 1 and unit axis stride: each slice is a contiguous row,
 *            vectorized along it; rows split across threads;
 *   columns: the dims after the axis collapse to one unit-stride run: VL
 *            neighbouring slices are processed together, one per lane, so
 *            loads stay contiguous whatever the axis stride;
 *   strided: anything else: scalar loops in double per slice.
 * F16 and BF16, any layout: each slice's y and dy are widened exactly into
 * the thread's F32 rows of the workspace (vector code when the axis is
 * contiguous, gathered otherwise), the rows path's F32 code runs on them and
 * dx is rounded once to the dtype: bit for bit the F32 rows kernel on the
 * widened inputs, rounded (doc/numerics.md).
 * Compiled in two roles like activation.c (simd_instantiate.h).
 */
#ifdef ADNN_SIMD_VECTOR_PART

/* The slice's sum in double: of y * dy (softmax) or of dy (log-softmax). */
static double NAME(smb_sum)(const float *y, const float *dy, size_t n, int log) {
  VDH lo = {0}, hi = {0};
  size_t i = 0;
  for (; i + VL <= n; i += VL) {
    const VF g = NAME(vload)(dy + i);
    if (log) {
      lo += NAME(vcvt_lo)(g);
      hi += NAME(vcvt_hi)(g);
    } else {
      const VF v = NAME(vload)(y + i);
      lo += NAME(vcvt_lo)(v) * NAME(vcvt_lo)(g);
      hi += NAME(vcvt_hi)(v) * NAME(vcvt_hi)(g);
    }
  }
  if (i < n) {
    const VF g = NAME(vload_n)(dy + i, n - i, 0.0f);
    if (log) {
      lo += NAME(vcvt_lo)(g);
      hi += NAME(vcvt_hi)(g);
    } else {
      const VF v = NAME(vload_n)(y + i, n - i, 0.0f);
      lo += NAME(vcvt_lo)(v) * NAME(vcvt_lo)(g);
      hi += NAME(vcvt_hi)(v) * NAME(vcvt_hi)(g);
    }
  }
  return NAME(vdhsum)(lo + hi);
}

/* dx from y, dy and the slice's sum c, over n contiguous elements. */
static void NAME(smb_finish)(const float *y, const float *dy, float *dx, size_t n, float c,
                             int log) {
  const VF vc = NAME(vset)(c);
  size_t i = 0;
  for (; i + VL <= n; i += VL) {
    const VF v = NAME(vload)(y + i), g = NAME(vload)(dy + i);
    NAME(vstore)(dx + i, log ? g - NAME(vexp)(v) * vc : v * (g - vc));
  }
  if (i < n) {
    const VF v = NAME(vload_n)(y + i, n - i, 0.0f), g = NAME(vload_n)(dy + i, n - i, 0.0f);
    NAME(vstore_n)(dx + i, log ? g - NAME(vexp)(v) * vc : v * (g - vc), n - i);
  }
}

static void NAME(smb_row)(const float *y, const float *dy, float *dx, size_t n, int log) {
  const double s = NAME(smb_sum)(y, dy, n, log);
  NAME(smb_finish)(y, dy, dx, n, (float)s, log);
}

/* w <= VL neighbouring slices at unit distance, one per lane, each of length
 * L with element j at y + j * sy (dy likewise) and dx + j * sx. */
static void NAME(smb_cols)(const float *y, const float *dy, int64_t sy, float *dx, int64_t sx,
                           size_t L, size_t w, int log) {
#define SMB_LD(p) (w == VL ? NAME(vload)(p) : NAME(vload_n)((p), w, 0.0f))
  VDH lo = {0}, hi = {0};
  for (size_t j = 0; j < L; j++) {
    const VF g = SMB_LD(dy + (int64_t)j * sy);
    if (log) {
      lo += NAME(vcvt_lo)(g);
      hi += NAME(vcvt_hi)(g);
    } else {
      const VF v = SMB_LD(y + (int64_t)j * sy);
      lo += NAME(vcvt_lo)(v) * NAME(vcvt_lo)(g);
      hi += NAME(vcvt_hi)(v) * NAME(vcvt_hi)(g);
    }
  }
  VF c;
  for (int k = 0; k < VL / 2; k++) {
    c[k] = (float)lo[k];
    c[k + VL / 2] = (float)hi[k];
  }
  for (size_t j = 0; j < L; j++) {
    const VF v = SMB_LD(y + (int64_t)j * sy), g = SMB_LD(dy + (int64_t)j * sy);
    const VF r = log ? g - NAME(vexp)(v) * c : v * (g - c);
    if (w == VL)
      NAME(vstore)(dx + (int64_t)j * sx, r);
    else
      NAME(vstore_n)(dx + (int64_t)j * sx, r, w);
  }
#undef SMB_LD
}

static const smb_fns NAME(adnn_f32_softmax_backward) = {NAME(smb_row), NAME(smb_cols), VL};

#else /* the dispatch part */

#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/lowp.h"
#include "kernels/cpu/simd.h"

typedef struct smb_fns {
  void (*row)(const float *y, const float *dy, float *dx, size_t n, int log);
  void (*cols)(const float *y, const float *dy, int64_t sy, float *dx, int64_t sx, size_t L,
               size_t w, int log);
  size_t lanes;
} smb_fns;

#define ADNN_SIMD_KERNEL "kernels/cpu/softmax_backward.c"
#include "kernels/cpu/simd_instantiate.h"

static const smb_fns *const smb_by_isa[ADNN_CPU_ISA_COUNT] =
    ADNN_CPU_ISA_TABLE(adnn_f32_softmax_backward);

enum { PATH_ROWS = 0, PATH_COLUMNS = 1, PATH_STRIDED = 2 };

typedef struct smb_state {
  const smb_fns *fn;
  /* The dims before and after the axis as loops over dx ([0], x's layout)
   * and y and dy ([1], y's layout). */
  adnn_nd outer_loop, inner_loop;
  int64_t L, sx, sy;
  int path, log;
  int64_t outer, inner, lanes, blocks, tasks, grain;
  adnn_dtype dtype; /* F32, or F16/BF16 (run_lowp, any path) */
  int isa;          /* for the 16-bit conversions */
  size_t row_bytes; /* F16/BF16: one thread's two F32 rows of L, 64-byte multiple */
} smb_state;

static void smb_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                        size_t *workspace_bytes) {
  const adnn_plugin_softmax_backward *p = problem;
  smb_state *s = state;
  const adnn_tensor_desc *X = &p->fwd.x, *Y = &p->fwd.y;
  const int ax = p->fwd.axis;
  adnn_tensor_desc xo, yo, xi, yi;
  adnn_cpu_sub_desc(X, 0, ax, &xo);
  adnn_cpu_sub_desc(Y, 0, ax, &yo);
  adnn_cpu_sub_desc(X, ax + 1, X->rank, &xi);
  adnn_cpu_sub_desc(Y, ax + 1, Y->rank, &yi);
  const adnn_tensor_desc *to[2] = {&xo, &yo}, *ti[2] = {&xi, &yi};
  adnn_cpu_loop_init(&s->outer_loop, 2, to);
  adnn_cpu_loop_init(&s->inner_loop, 2, ti);
  s->fn = smb_by_isa[env->isa];
  s->L = X->dims[ax];
  s->sx = X->strides[ax];
  s->sy = Y->strides[ax];
  s->log = p->fwd.log;
  s->outer = adnn_nd_count(&s->outer_loop);
  s->inner = adnn_nd_count(&s->inner_loop);
  const adnn_nd *in = &s->inner_loop;
  if (s->inner == 1 && (s->sx == 1 || s->L == 1) && (s->sy == 1 || s->L == 1))
    s->path = PATH_ROWS;
  else if (in->rank == 1 && in->strides[0][0] == 1 && in->strides[1][0] == 1)
    s->path = PATH_COLUMNS;
  else
    s->path = PATH_STRIDED;
  int64_t grain;
  if (s->path == PATH_COLUMNS) {
    s->lanes = (int64_t)s->fn->lanes;
    s->blocks = (s->inner + s->lanes - 1) / s->lanes;
    s->tasks = s->outer * s->blocks;
    grain = s->L > ADNN_CPU_GRAIN / s->lanes ? 1 : ADNN_CPU_GRAIN / (s->L * s->lanes);
  } else {
    s->tasks = s->path == PATH_ROWS ? s->outer : s->outer * s->inner;
    grain = ADNN_CPU_GRAIN / s->L;
  }
  s->grain = grain > 1 ? grain : 1;
  s->dtype = X->dtype;
  s->isa = env->isa;
  s->row_bytes = 0;
  *workspace_bytes = 0;
  if (s->dtype == ADNN_DTYPE_F16 || s->dtype == ADNN_DTYPE_BF16) {
    /* Every slice on its own task, whatever the layout. */
    s->tasks = s->outer * s->inner;
    grain = ADNN_CPU_GRAIN / s->L;
    s->grain = grain > 1 ? grain : 1;
    s->row_bytes = ((size_t)s->L * 2 * sizeof(float) + 63) / 64 * 64;
    *workspace_bytes = s->row_bytes * (size_t)env->threads + 64;
  }
}

/* ---- F16 / BF16 ---------------------------------------------------------- */

typedef struct smb_lowp_task {
  const smb_state *s;
  const uint16_t *y, *dy;
  uint16_t *dx;
  char *rows; /* 64-byte aligned: the threads' row pairs */
} smb_lowp_task;

static void run_lowp(void *arg, int64_t begin, int64_t end, int thread) {
  const smb_lowp_task *t = arg;
  const smb_state *s = t->s;
  float *yb = (float *)(t->rows + s->row_bytes * (size_t)thread), *gb = yb + s->L;
  for (int64_t k = begin; k < end; k++) {
    const int64_t o = k / s->inner, i = k - o * s->inner;
    int64_t oo[ADNN_ND_MAX_TENSORS], io[ADNN_ND_MAX_TENSORS];
    adnn_nd_offsets(&s->outer_loop, o, oo);
    adnn_nd_offsets(&s->inner_loop, i, io);
    /* The whole slice of y and dy is read before any of its dx is written
     * (dx may be dy). */
    adnn_cpu_lowp_to_f32_strided(s->isa, s->dtype, t->y + oo[1] + io[1], s->sy, yb,
                                 (size_t)s->L);
    adnn_cpu_lowp_to_f32_strided(s->isa, s->dtype, t->dy + oo[1] + io[1], s->sy, gb,
                                 (size_t)s->L);
    s->fn->row(yb, gb, gb, (size_t)s->L, s->log);
    adnn_cpu_lowp_from_f32_strided(s->isa, s->dtype, gb, t->dx + oo[0] + io[0], s->sx,
                                   (size_t)s->L);
  }
}

typedef struct smb_task {
  const smb_state *s;
  const float *y, *dy;
  float *dx;
} smb_task;

static void run_rows(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const smb_task *t = arg;
  const smb_state *s = t->s;
  for (int64_t o = begin; o < end; o++) {
    int64_t off[ADNN_ND_MAX_TENSORS];
    adnn_nd_offsets(&s->outer_loop, o, off);
    s->fn->row(t->y + off[1], t->dy + off[1], t->dx + off[0], (size_t)s->L, s->log);
  }
}

static void run_columns(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const smb_task *t = arg;
  const smb_state *s = t->s;
  for (int64_t b = begin; b < end; b++) {
    const int64_t o = b / s->blocks, i0 = (b - o * s->blocks) * s->lanes;
    const int64_t w = s->inner - i0 < s->lanes ? s->inner - i0 : s->lanes;
    int64_t off[ADNN_ND_MAX_TENSORS];
    adnn_nd_offsets(&s->outer_loop, o, off);
    s->fn->cols(t->y + off[1] + i0, t->dy + off[1] + i0, s->sy, t->dx + off[0] + i0, s->sx,
                (size_t)s->L, (size_t)w, s->log);
  }
}

/* One slice at arbitrary strides, in double. */
static void run_strided(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const smb_task *t = arg;
  const smb_state *s = t->s;
  for (int64_t k = begin; k < end; k++) {
    const int64_t o = k / s->inner, i = k - o * s->inner;
    int64_t oo[ADNN_ND_MAX_TENSORS], io[ADNN_ND_MAX_TENSORS];
    adnn_nd_offsets(&s->outer_loop, o, oo);
    adnn_nd_offsets(&s->inner_loop, i, io);
    const float *y = t->y + oo[1] + io[1], *dy = t->dy + oo[1] + io[1];
    float *dx = t->dx + oo[0] + io[0];
    double sum = 0.0;
    for (int64_t j = 0; j < s->L; j++)
      sum += s->log ? (double)dy[j * s->sy] : (double)y[j * s->sy] * (double)dy[j * s->sy];
    const float c = (float)sum;
    for (int64_t j = 0; j < s->L; j++) {
      const float v = y[j * s->sy], g = dy[j * s->sy];
      dx[j * s->sx] = s->log ? g - expf(v) * c : v * (g - c);
    }
  }
}

static void smb_run(const void *problem, const void *state, const void *const *inputs,
                    void *const *outputs, void *workspace) {
  (void)problem;
  const smb_state *s = state;
  if (s->row_bytes) {
    smb_lowp_task lt = {s, inputs[0], inputs[1], outputs[0],
                        (char *)(((uintptr_t)workspace + 63) / 64 * 64)};
    adnn_cpu_parallel_for(s->tasks, s->grain, run_lowp, &lt);
    return;
  }
  smb_task t = {s, inputs[0], inputs[1], outputs[0]};
  adnn_cpu_parallel_for(s->tasks, s->grain,
                        s->path == PATH_ROWS      ? run_rows
                        : s->path == PATH_COLUMNS ? run_columns
                                                  : run_strided,
                        &t);
}

const adnn_cpu_impl adnn_cpu_softmax_backward_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32) | ADNN_OP_DTYPE(ADNN_DTYPE_F16) |
              ADNN_OP_DTYPE(ADNN_DTYPE_BF16),
    .state_size = sizeof(smb_state),
    .reshape = smb_reshape,
    .run = smb_run,
};

#endif
