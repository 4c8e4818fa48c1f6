/*
 * Elementwise binary ops with broadcasting: y = op(alpha * a, beta * b).
 *
 * The core hands us a and b already broadcast to y's rank (stride 0 on the
 * broadcast dims). The three tensors are collapsed into as few loops as their
 * layouts allow (adnn_cpu_loop_init, at reshape), after which the innermost
 * loop is one of:
 *   - y, a, b all unit stride (same-shape contiguous, residual add),
 *   - y and one operand unit stride, the other stride 0 (scalar operand, bias
 *     add along the last dim, row broadcast),
 *   - y unit stride and both operands stride 0 (column broadcast of two
 *     vectors: a fill),
 * each a vector loop; anything else (y or an operand with another stride) is
 * gathered into stack buffers row by row and uses the same vector loop. A
 * fully collapsed problem (one loop) is split by elements across threads,
 * otherwise by rows.
 *
 * Like the rest of the vector code this file includes itself once per
 * instruction set; see kernels/cpu/simd_isa.h.
 */
#ifdef ADNN_SIMD_VECTOR_PART

SIMD_INLINE VF NAME(vbin)(int op, VF a, VF b) {
  switch (op) {
    case ADNN_BINARY_ADD: return a + b;
    case ADNN_BINARY_SUB: return a - b;
    case ADNN_BINARY_MUL: return a * b;
    case ADNN_BINARY_DIV: return a / b;
    case ADNN_BINARY_MAX: return NAME(vmax_nan)(a, b);
    case ADNN_BINARY_MIN: return NAME(vmin_nan)(a, b);
  }
  return a;
}

/* One row of n outputs at unit stride; sa / sb are 1 (unit stride) or 0 (the
 * operand is one value repeated). The op is a constant inside each case. */
#define BIN_ROWS(OP)                                                                    \
  do {                                                                                  \
    size_t i = 0;                                                                       \
    if (sa && sb) {                                                                     \
      for (; i + VL <= n; i += VL)                                                      \
        NAME(vstore)(y + i, NAME(vbin)(OP, NAME(vload)(a + i) * va, NAME(vload)(b + i) * vb)); \
      if (i < n)                                                                        \
        NAME(vstore_n)(y + i, NAME(vbin)(OP, NAME(vload_n)(a + i, n - i, 1.0f) * va,    \
                                         NAME(vload_n)(b + i, n - i, 1.0f) * vb), n - i); \
    } else if (sb) {                                                                    \
      const VF ca = NAME(vset)(a[0]) * va;                                              \
      for (; i + VL <= n; i += VL)                                                      \
        NAME(vstore)(y + i, NAME(vbin)(OP, ca, NAME(vload)(b + i) * vb));              \
      if (i < n)                                                                        \
        NAME(vstore_n)(y + i, NAME(vbin)(OP, ca, NAME(vload_n)(b + i, n - i, 1.0f) * vb), n - i); \
    } else if (sa) {                                                                    \
      const VF cb = NAME(vset)(b[0]) * vb;                                              \
      for (; i + VL <= n; i += VL)                                                      \
        NAME(vstore)(y + i, NAME(vbin)(OP, NAME(vload)(a + i) * va, cb));              \
      if (i < n)                                                                        \
        NAME(vstore_n)(y + i, NAME(vbin)(OP, NAME(vload_n)(a + i, n - i, 1.0f) * va, cb), n - i); \
    } else {                                                                            \
      const VF c = NAME(vbin)(OP, NAME(vset)(a[0]) * va, NAME(vset)(b[0]) * vb);        \
      for (; i + VL <= n; i += VL) NAME(vstore)(y + i, c);                              \
      if (i < n) NAME(vstore_n)(y + i, c, n - i);                                       \
    }                                                                                   \
  } while (0)

static void NAME(bin_row)(int op, float *y, const float *a, int sa, const float *b, int sb,
                          size_t n, float alpha, float beta) {
  const VF va = NAME(vset)(alpha), vb = NAME(vset)(beta);
  switch (op) {
    case ADNN_BINARY_ADD: BIN_ROWS(ADNN_BINARY_ADD); break;
    case ADNN_BINARY_SUB: BIN_ROWS(ADNN_BINARY_SUB); break;
    case ADNN_BINARY_MUL: BIN_ROWS(ADNN_BINARY_MUL); break;
    case ADNN_BINARY_DIV: BIN_ROWS(ADNN_BINARY_DIV); break;
    case ADNN_BINARY_MAX: BIN_ROWS(ADNN_BINARY_MAX); break;
    case ADNN_BINARY_MIN: BIN_ROWS(ADNN_BINARY_MIN); break;
  }
}
#undef BIN_ROWS

/* This instruction set's copy. */
static const bin_fns NAME(adnn_f32_binary) = {NAME(bin_row)};

#else /* the dispatch part */

#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/lowp.h"
#include "kernels/cpu/simd.h"

/* One instruction set's copy of the vector code. */
typedef struct bin_fns {
  void (*row)(int op, float *y, const float *a, int sa, const float *b, int sb, size_t n,
              float alpha, float beta);
} bin_fns;

#define ADNN_SIMD_KERNEL "kernels/cpu/binary.c"
#include "kernels/cpu/simd_instantiate.h"

static const bin_fns *const bin_by_isa[ADNN_CPU_ISA_COUNT] = ADNN_CPU_ISA_TABLE(adnn_f32_binary);

enum { PATH_FLAT = 0, PATH_ROWS = 1, PATH_STRIDED = 2 };

static int unit_or_zero(int64_t s) { return s == 0 || s == 1; }

typedef struct bin_state {
  const bin_fns *fn;
  adnn_nd L;     /* y ([0]), a ([1]) and b ([2]) coalesced */
  int path;
  int op;
  adnn_dtype dtype; /* F32, or F16/BF16 (the run_lowp path) */
  int isa;
  float alpha, beta;
  int64_t inner; /* elements of the innermost dim */
  int64_t outer; /* rows */
  int64_t grain; /* parallel_for grain: elements (flat) or rows */
} bin_state;

static void bin_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                        size_t *workspace_bytes) {
  const adnn_plugin_binary *p = problem;
  bin_state *s = state;
  const adnn_tensor_desc *t[3] = {&p->y, &p->a, &p->b};
  adnn_cpu_loop_init(&s->L, 3, t);
  const int in = s->L.rank - 1;
  const int vec_inner = s->L.strides[0][in] == 1 && unit_or_zero(s->L.strides[1][in]) &&
                        unit_or_zero(s->L.strides[2][in]);
  s->fn = bin_by_isa[env->isa];
  s->path = !vec_inner ? PATH_STRIDED : (s->L.rank == 1 ? PATH_FLAT : PATH_ROWS);
  s->op = (int)p->op;
  s->dtype = p->y.dtype;
  s->isa = env->isa;
  s->alpha = (float)p->alpha;
  s->beta = (float)p->beta;
  s->inner = s->L.dims[in];
  s->outer = adnn_cpu_loop_rows(&s->L);
  if (s->path == PATH_FLAT) {
    s->grain = ADNN_CPU_GRAIN;
  } else {
    const int64_t grain = ADNN_CPU_GRAIN / s->inner;
    s->grain = grain > 1 ? grain : 1;
  }
  *workspace_bytes = 0;
}

typedef struct bin_task {
  const bin_state *s;
  const float *a, *b;
  float *y;
} bin_task;

static void run_flat(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const bin_task *t = arg;
  const bin_state *s = t->s;
  const int64_t sa = s->L.strides[1][0], sb = s->L.strides[2][0];
  s->fn->row(s->op, t->y + begin, t->a + begin * sa, (int)sa, t->b + begin * sb, (int)sb,
             (size_t)(end - begin), s->alpha, s->beta);
}

#define STRIDED_CHUNK 256

static void run_rows(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const bin_task *t = arg;
  const bin_state *s = t->s;
  const adnn_nd *L = &s->L;
  const int in = L->rank - 1;
  const int64_t len = L->dims[in];
  const int64_t sy = L->strides[0][in], sa = L->strides[1][in], sb = L->strides[2][in];
  float ba[STRIDED_CHUNK], bb[STRIDED_CHUNK], by[STRIDED_CHUNK];
  for (int64_t row = begin; row < end; row++) {
    int64_t off[ADNN_ND_MAX_TENSORS];
    adnn_cpu_loop_row_offsets(L, row, off);
    float *y = t->y + off[0];
    const float *a = t->a + off[1], *b = t->b + off[2];
    if (s->path != PATH_STRIDED) {
      s->fn->row(s->op, y, a, (int)sa, b, (int)sb, (size_t)len, s->alpha, s->beta);
      continue;
    }
    /* Operands at unit or zero stride are used in place; others gathered. */
    for (int64_t j0 = 0; j0 < len; j0 += STRIDED_CHUNK) {
      const int64_t m = len - j0 < STRIDED_CHUNK ? len - j0 : STRIDED_CHUNK;
      const float *pa = a + j0 * sa, *pb = b + j0 * sb;
      int ua = (int)sa, ub = (int)sb;
      if (!unit_or_zero(sa)) {
        for (int64_t j = 0; j < m; j++) ba[j] = pa[j * sa];
        pa = ba;
        ua = 1;
      }
      if (!unit_or_zero(sb)) {
        for (int64_t j = 0; j < m; j++) bb[j] = pb[j * sb];
        pb = bb;
        ub = 1;
      }
      float *py = sy == 1 ? y + j0 : by;
      s->fn->row(s->op, py, pa, ua, pb, ub, (size_t)m, s->alpha, s->beta);
      if (sy != 1)
        for (int64_t j = 0; j < m; j++) y[(j0 + j) * sy] = by[j];
    }
  }
}

/* F16/BF16, any path: per row (the whole run when flat), blocks of a and b
 * are widened into F32 stack buffers (an operand at stride 0 is one element
 * widened once), combined by the F32 vector row and rounded back once
 * (kernels/cpu/lowp.h). A block is read whole before y's block is written,
 * so y may be a or b. */
typedef struct bin_lowp_task {
  const bin_state *s;
  const uint16_t *a, *b;
  uint16_t *y;
} bin_lowp_task;

/* Widens m elements of src at stride st (0: one element) into buf; returns
 * the stride the row function reads buf with. */
static int lowp_operand(const bin_state *s, const uint16_t *src, int64_t st, int64_t m,
                        float *buf, uint16_t *h) {
  if (st == 0) {
    adnn_cpu_lowp_to_f32(s->isa, s->dtype, src, buf, 1);
    return 0;
  }
  if (st != 1) {
    for (int64_t j = 0; j < m; j++) h[j] = src[j * st];
    src = h;
  }
  adnn_cpu_lowp_to_f32(s->isa, s->dtype, src, buf, (size_t)m);
  return 1;
}

static void bin_lowp_span(const bin_state *s, uint16_t *y, int64_t sy, const uint16_t *a,
                          int64_t sa, const uint16_t *b, int64_t sb, int64_t len) {
  float ba[ADNN_CPU_LOWP_BLOCK], bb[ADNN_CPU_LOWP_BLOCK];
  uint16_t h[ADNN_CPU_LOWP_BLOCK];
  for (int64_t j0 = 0; j0 < len; j0 += ADNN_CPU_LOWP_BLOCK) {
    const int64_t m = len - j0 < ADNN_CPU_LOWP_BLOCK ? len - j0 : ADNN_CPU_LOWP_BLOCK;
    const int ua = lowp_operand(s, a + j0 * sa, sa, m, ba, h);
    const int ub = lowp_operand(s, b + j0 * sb, sb, m, bb, h);
    s->fn->row(s->op, ba, ba, ua, bb, ub, (size_t)m, s->alpha, s->beta);
    if (sy == 1) {
      adnn_cpu_lowp_from_f32(s->isa, s->dtype, ba, y + j0, (size_t)m);
    } else {
      adnn_cpu_lowp_from_f32(s->isa, s->dtype, ba, h, (size_t)m);
      for (int64_t j = 0; j < m; j++) y[(j0 + j) * sy] = h[j];
    }
  }
}

static void run_lowp(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const bin_lowp_task *t = arg;
  const bin_state *s = t->s;
  const adnn_nd *L = &s->L;
  if (s->path == PATH_FLAT) {
    const int64_t sa = L->strides[1][0], sb = L->strides[2][0];
    bin_lowp_span(s, t->y + begin, 1, t->a + begin * sa, sa, t->b + begin * sb, sb,
                  end - begin);
    return;
  }
  const int in = L->rank - 1;
  for (int64_t row = begin; row < end; row++) {
    int64_t off[ADNN_ND_MAX_TENSORS];
    adnn_cpu_loop_row_offsets(L, row, off);
    bin_lowp_span(s, t->y + off[0], L->strides[0][in], t->a + off[1], L->strides[1][in],
                  t->b + off[2], L->strides[2][in], L->dims[in]);
  }
}

static void bin_run(const void *problem, const void *state, const void *const *inputs,
                    void *const *outputs, void *workspace) {
  (void)problem;
  (void)workspace;
  const bin_state *s = state;
  if (s->dtype == ADNN_DTYPE_F16 || s->dtype == ADNN_DTYPE_BF16) {
    bin_lowp_task lt = {s, inputs[0], inputs[1], outputs[0]};
    adnn_cpu_parallel_for(s->path == PATH_FLAT ? s->inner : s->outer, s->grain, run_lowp, &lt);
    return;
  }
  bin_task t = {s, inputs[0], inputs[1], outputs[0]};
  if (s->path == PATH_FLAT)
    adnn_cpu_parallel_for(s->inner, s->grain, run_flat, &t);
  else
    adnn_cpu_parallel_for(s->outer, s->grain, run_rows, &t);
}

const adnn_cpu_impl adnn_cpu_binary_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32) | ADNN_OP_DTYPE(ADNN_DTYPE_F16) |
              ADNN_OP_DTYPE(ADNN_DTYPE_BF16),
    .state_size = sizeof(bin_state),
    .reshape = bin_reshape,
    .run = bin_run,
};

#endif
