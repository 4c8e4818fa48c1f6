/*
 * Activation forward (and the fused affine + activation shared with the conv
 * epilogue and batch norm).
 *
 * This file is compiled in two roles. Read normally it holds the layout code
 * and the implementation entry; it then has simd_instantiate.h include it once per
 * instruction set with ADNN_SIMD_VECTOR_PART defined, to compile the vector
 * section below for each (see kernels/cpu/simd_isa.h for why).
 *
 * Paths, chosen at reshape time from the layouts:
 *   contiguous: x and y address the same dense run (after merging dims), one
 *               vector loop split across threads;
 *   rows:       both have unit stride in the innermost (merged) dim, a vector
 *               loop per row, rows split across threads;
 *   strided:    anything else; each row is gathered into a small stack buffer,
 *               transformed with the same vector code and scattered back, so
 *               every layout gets identical numerics.
 */
#ifdef ADNN_SIMD_VECTOR_PART

/* y[i] = act((x[i] - c) * (a + alo) + b) for i < n, where alo is the
 * rounding error of a float a (0 if a is exact): with FMAs the product by the
 * pair is as accurate as one by a double a. affine = 0 skips the arithmetic so
 * that -0 and NaN payloads pass through a plain activation untouched. */
static void NAME(act_affine)(const adnn_activation *act, const float *x, float *y, size_t n,
                             float c, float a, float alo, float b, int affine) {
  const NAME(act_params) p = NAME(act_params_make)(act);
  const VF vc = NAME(vset)(c), va = NAME(vset)(a), vl = NAME(vset)(alo), vb = NAME(vset)(b);
#define AFFINE(v) ((v) * va + ((v) * vl + vb))
  ADNN_ACT_SWITCH(act->kind, {
    size_t i = 0;
    if (affine) {
      for (; i + 2 * VL <= n; i += 2 * VL) {
        VF d0 = NAME(vload)(x + i) - vc, d1 = NAME(vload)(x + i + VL) - vc;
        VF v0 = AFFINE(d0), v1 = AFFINE(d1);
        NAME(vstore)(y + i, NAME(vact)(ACT, v0, &p));
        NAME(vstore)(y + i + VL, NAME(vact)(ACT, v1, &p));
      }
      for (; i + VL <= n; i += VL)
      {
        VF d = NAME(vload)(x + i) - vc;
        NAME(vstore)(y + i, NAME(vact)(ACT, AFFINE(d), &p));
      }
      if (i < n) {
        VF d = NAME(vload_n)(x + i, n - i, 0.0f) - vc;
        NAME(vstore_n)(y + i, NAME(vact)(ACT, AFFINE(d), &p), n - i);
      }
    } else {
      for (; i + 2 * VL <= n; i += 2 * VL) {
        VF v0 = NAME(vload)(x + i), v1 = NAME(vload)(x + i + VL);
        NAME(vstore)(y + i, NAME(vact)(ACT, v0, &p));
        NAME(vstore)(y + i + VL, NAME(vact)(ACT, v1, &p));
      }
      for (; i + VL <= n; i += VL) NAME(vstore)(y + i, NAME(vact)(ACT, NAME(vload)(x + i), &p));
      if (i < n)
        NAME(vstore_n)(y + i, NAME(vact)(ACT, NAME(vload_n)(x + i, n - i, 0.0f), &p), n - i);
    }
  })
}

#undef AFFINE

/* y[i] = act((x[i] - c[i]) * (a[i] + alo[i]) + b[i]); c, a, alo or b NULL
 * mean 0, 1, 0 and 0 (alo is used only with a). */
static void NAME(act_affine_vec)(const adnn_activation *act, const float *x, float *y, size_t n,
                                 const float *c, const float *a, const float *alo,
                                 const float *b) {
  const NAME(act_params) p = NAME(act_params_make)(act);
  ADNN_ACT_SWITCH(act->kind, {
    size_t i = 0;
    for (; i + VL <= n; i += VL) {
      VF v = NAME(vload)(x + i);
      if (c) v = v - NAME(vload)(c + i);
      const VF vb = b ? NAME(vload)(b + i) : (VF){0};
      if (a && alo)
        v = v * NAME(vload)(a + i) + (v * NAME(vload)(alo + i) + vb);
      else
        v = (a ? v * NAME(vload)(a + i) : v) + vb;
      NAME(vstore)(y + i, NAME(vact)(ACT, v, &p));
    }
    if (i < n) {
      size_t r = n - i;
      VF v = NAME(vload_n)(x + i, r, 0.0f);
      if (c) v = v - NAME(vload_n)(c + i, r, 0.0f);
      const VF vb = b ? NAME(vload_n)(b + i, r, 0.0f) : (VF){0};
      if (a && alo)
        v = v * NAME(vload_n)(a + i, r, 1.0f) + (v * NAME(vload_n)(alo + i, r, 0.0f) + vb);
      else
        v = (a ? v * NAME(vload_n)(a + i, r, 1.0f) : v) + vb;
      NAME(vstore_n)(y + i, NAME(vact)(ACT, v, &p), r);
    }
  })
}

/* This instruction set's copy, for adnn_cpu_act_init. */
static const act_fns NAME(adnn_f32_activation) = {NAME(act_affine), NAME(act_affine_vec)};

#else /* the dispatch part */

#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/lowp.h"
#include "kernels/cpu/simd.h" /* the shared helpers, before the vector regions */

/* One instruction set's copy of the vector code (see adnn_cpu_act). */
typedef struct act_fns {
  void (*affine)(const adnn_activation *act, const float *x, float *y, size_t n, float c, float a,
                 float alo, float b, int affine);
  void (*affine_vec)(const adnn_activation *act, const float *x, float *y, size_t n,
                     const float *c, const float *a, const float *alo, const float *b);
} act_fns;

#define ADNN_SIMD_KERNEL "kernels/cpu/activation.c"
#include "kernels/cpu/simd_instantiate.h"

static const act_fns *const act_by_isa[ADNN_CPU_ISA_COUNT] =
    ADNN_CPU_ISA_TABLE(adnn_f32_activation);

void adnn_cpu_act_init(adnn_cpu_act *out, const adnn_activation *act, int isa) {
  out->act = *act;
  out->affine = act_by_isa[isa]->affine;
  out->affine_vec = act_by_isa[isa]->affine_vec;
}

/* ---- The activation op ------------------------------------------------------ */

enum { PATH_CONTIGUOUS = 0, PATH_ROWS = 1, PATH_STRIDED = 2 };

typedef struct act_state {
  adnn_cpu_act act;
  adnn_dtype dtype; /* F32, or F16/BF16 (the run_lowp path) */
  int isa;
  adnn_nd L;     /* y ([0]) and x ([1]) coalesced */
  int path;
  int64_t inner; /* elements of the innermost dim (all of them when contiguous) */
  int64_t outer; /* rows */
  int64_t grain; /* parallel_for grain: elements (contiguous) or rows */
} act_state;

static void act_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                        size_t *workspace_bytes) {
  const adnn_plugin_activation *p = problem;
  act_state *s = state;
  const adnn_tensor_desc *t[2] = {&p->y, &p->x};
  adnn_cpu_loop_init(&s->L, 2, t);
  const int in = s->L.rank - 1;
  const int inner_unit = s->L.strides[0][in] == 1 && s->L.strides[1][in] == 1;
  s->path = !inner_unit ? PATH_STRIDED : (s->L.rank == 1 ? PATH_CONTIGUOUS : PATH_ROWS);
  s->inner = s->L.dims[in];
  s->outer = adnn_cpu_loop_rows(&s->L);
  if (s->path == PATH_CONTIGUOUS) {
    s->grain = ADNN_CPU_GRAIN;
  } else {
    const int64_t grain = ADNN_CPU_GRAIN / s->inner;
    s->grain = grain > 1 ? grain : 1;
  }
  adnn_cpu_act_init(&s->act, &p->activation, env->isa);
  s->dtype = p->x.dtype;
  s->isa = env->isa;
  *workspace_bytes = 0;
}

typedef struct act_task {
  const act_state *s;
  const float *x;
  float *y;
} act_task;

static void run_contiguous(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const act_task *t = arg;
  const adnn_cpu_act *a = &t->s->act;
  a->affine(&a->act, t->x + begin, t->y + begin, (size_t)(end - begin), 0.0f, 1.0f, 0.0f, 0.0f,
            0);
}

/* Strided rows go through this many elements of stack at a time. */
#define STRIDED_CHUNK 256

static void run_rows(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const act_task *t = arg;
  const adnn_nd *L = &t->s->L;
  const adnn_cpu_act *a = &t->s->act;
  const int in = L->rank - 1;
  const int64_t len = L->dims[in];
  const int64_t sy = L->strides[0][in], sx = L->strides[1][in];
  float buf[STRIDED_CHUNK];
  for (int64_t row = begin; row < end; row++) {
    int64_t off[ADNN_ND_MAX_TENSORS];
    adnn_cpu_loop_row_offsets(L, row, off);
    const float *x = t->x + off[1];
    float *y = t->y + off[0];
    if (t->s->path == PATH_ROWS) {
      a->affine(&a->act, x, y, (size_t)len, 0.0f, 1.0f, 0.0f, 0.0f, 0);
      continue;
    }
    for (int64_t j0 = 0; j0 < len; j0 += STRIDED_CHUNK) {
      int64_t m = len - j0 < STRIDED_CHUNK ? len - j0 : STRIDED_CHUNK;
      for (int64_t j = 0; j < m; j++) buf[j] = x[(j0 + j) * sx];
      a->affine(&a->act, buf, buf, (size_t)m, 0.0f, 1.0f, 0.0f, 0.0f, 0);
      for (int64_t j = 0; j < m; j++) y[(j0 + j) * sy] = buf[j];
    }
  }
}

/* F16/BF16, any path: each row (the whole run when contiguous) goes through
 * an F32 stack block: widened, transformed by the F32 vector code, rounded
 * back once (kernels/cpu/lowp.h). Strided elements are gathered into a
 * 16-bit block first. Reading a whole block before writing it keeps in-place
 * use correct. */
typedef struct act_lowp_task {
  const act_state *s;
  const uint16_t *x;
  uint16_t *y;
} act_lowp_task;

static void act_lowp_span(const act_state *s, const uint16_t *x, int64_t sx, uint16_t *y,
                          int64_t sy, int64_t len) {
  const adnn_cpu_act *a = &s->act;
  float buf[ADNN_CPU_LOWP_BLOCK];
  uint16_t h[ADNN_CPU_LOWP_BLOCK];
  for (int64_t j0 = 0; j0 < len; j0 += ADNN_CPU_LOWP_BLOCK) {
    const int64_t m = len - j0 < ADNN_CPU_LOWP_BLOCK ? len - j0 : ADNN_CPU_LOWP_BLOCK;
    const uint16_t *src = x + j0 * sx;
    if (sx != 1) {
      for (int64_t j = 0; j < m; j++) h[j] = src[j * sx];
      src = h;
    }
    adnn_cpu_lowp_to_f32(s->isa, s->dtype, src, buf, (size_t)m);
    a->affine(&a->act, buf, buf, (size_t)m, 0.0f, 1.0f, 0.0f, 0.0f, 0);
    if (sy == 1) {
      adnn_cpu_lowp_from_f32(s->isa, s->dtype, buf, y + j0, (size_t)m);
    } else {
      adnn_cpu_lowp_from_f32(s->isa, s->dtype, buf, h, (size_t)m);
      for (int64_t j = 0; j < m; j++) y[(j0 + j) * sy] = h[j];
    }
  }
}

static void run_lowp(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const act_lowp_task *t = arg;
  const act_state *s = t->s;
  if (s->path == PATH_CONTIGUOUS) {
    act_lowp_span(s, t->x + begin, 1, t->y + begin, 1, end - begin);
    return;
  }
  const adnn_nd *L = &s->L;
  const int in = L->rank - 1;
  for (int64_t row = begin; row < end; row++) {
    int64_t off[ADNN_ND_MAX_TENSORS];
    adnn_cpu_loop_row_offsets(L, row, off);
    act_lowp_span(s, t->x + off[1], L->strides[1][in], t->y + off[0], L->strides[0][in],
                  L->dims[in]);
  }
}

static void act_run(const void *problem, const void *state, const void *const *inputs,
                    void *const *outputs, void *workspace) {
  (void)problem;
  (void)workspace;
  const act_state *s = state;
  if (s->dtype == ADNN_DTYPE_F16 || s->dtype == ADNN_DTYPE_BF16) {
    act_lowp_task lt = {s, inputs[0], outputs[0]};
    adnn_cpu_parallel_for(s->path == PATH_CONTIGUOUS ? s->inner : s->outer, s->grain, run_lowp,
                          &lt);
    return;
  }
  act_task t = {s, inputs[0], outputs[0]};
  if (s->path == PATH_CONTIGUOUS)
    adnn_cpu_parallel_for(s->inner, s->grain, run_contiguous, &t);
  else
    adnn_cpu_parallel_for(s->outer, s->grain, run_rows, &t);
}

const adnn_cpu_impl adnn_cpu_activation_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32) | ADNN_OP_DTYPE(ADNN_DTYPE_F16) |
              ADNN_OP_DTYPE(ADNN_DTYPE_BF16),
    .state_size = sizeof(act_state),
    .reshape = act_reshape,
    .run = act_run,
};

#endif
