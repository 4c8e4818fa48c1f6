/*
 * Activation forward (and the fused affine + activation shared with the conv
 * epilogue and batch norm).
 *
 * This file is compiled in two roles. Read normally it holds the dispatch and
 * layout code; it then includes itself three times with ADNN_SIMD_VECTOR_PART
 * defined, once per instruction set, to compile the vector section below under
 * AVX-512, AVX2+FMA and the baseline target (see kernels/cpu/simd.h for why).
 *
 * Paths, chosen at prepare time from the layouts:
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

#else /* the dispatch part */

#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/simd.h" /* common part only until ADNN_SIMD_ISA is set */

#define ADNN_SIMD_VECTOR_PART
#define ADNN_SIMD_ISA 3
#include "kernels/cpu/simd.h"
#include "kernels/cpu/activation.c"
#include "kernels/cpu/simd_end.h"
#define ADNN_SIMD_ISA 2
#include "kernels/cpu/simd.h"
#include "kernels/cpu/activation.c"
#include "kernels/cpu/simd_end.h"
#define ADNN_SIMD_ISA 0
#include "kernels/cpu/simd.h"
#include "kernels/cpu/activation.c"
#include "kernels/cpu/simd_end.h"
#undef ADNN_SIMD_VECTOR_PART

enum { PATH_CONTIGUOUS = 0, PATH_ROWS = 1, PATH_STRIDED = 2 };

/* The level is looked up per call for the internal helpers below; the lookup
 * reads a cached struct, which is negligible next to any real row. */
void adnn_cpu_act_affine_f32(const adnn_activation *act, const float *x, float *y, size_t n,
                             float c, float a, float alo, float b) {
  int affine = !(c == 0.0f && a == 1.0f && alo == 0.0f && b == 0.0f);
  ADNN_SIMD_CALL(adnn_cpu_simd_level(), act_affine, act, x, y, n, c, a, alo, b, affine);
}

void adnn_cpu_act_affine_vec_f32(const adnn_activation *act, const float *x, float *y, size_t n,
                                 const float *c, const float *a, const float *alo,
                                 const float *b) {
  if (c == NULL && a == NULL && b == NULL) {
    ADNN_SIMD_CALL(adnn_cpu_simd_level(), act_affine, act, x, y, n, 0.0f, 1.0f, 0.0f, 0.0f, 0);
    return;
  }
  ADNN_SIMD_CALL(adnn_cpu_simd_level(), act_affine_vec, act, x, y, n, c, a, alo, b);
}

static void loop_of(const adnn_activation_desc *d, adnn_cpu_loop *L) {
  const adnn_tensor_desc *t[2] = {&d->y, &d->x};
  adnn_cpu_loop_init(L, 2, t);
}

void adnn_cpu_activation_prepare(const adnn_activation_desc *d, adnn_cpu_op_state *s) {
  adnn_cpu_loop L;
  loop_of(d, &L);
  int inner_unit = L.st[0][L.rank - 1] == 1 && L.st[1][L.rank - 1] == 1;
  s->simd = adnn_cpu_simd_level();
  s->path = !inner_unit ? PATH_STRIDED : (L.rank == 1 ? PATH_CONTIGUOUS : PATH_ROWS);
  s->inner = L.dims[L.rank - 1];
  s->outer = adnn_cpu_loop_rows(&L);
  s->axis_len = 0;
}

typedef struct act_task {
  const adnn_activation_desc *d;
  const adnn_cpu_op_state *s;
  const float *x;
  float *y;
  adnn_cpu_loop L;
} act_task;

static void run_contiguous(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const act_task *t = arg;
  ADNN_SIMD_CALL(t->s->simd, act_affine, &t->d->activation, t->x + begin, t->y + begin,
                 (size_t)(end - begin), 0.0f, 1.0f, 0.0f, 0.0f, 0);
}

/* Strided rows go through this many elements of stack at a time. */
#define STRIDED_CHUNK 256

static void run_rows(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const act_task *t = arg;
  const adnn_cpu_loop *L = &t->L;
  const int64_t len = L->dims[L->rank - 1];
  const int64_t sy = L->st[0][L->rank - 1], sx = L->st[1][L->rank - 1];
  float buf[STRIDED_CHUNK];
  for (int64_t row = begin; row < end; row++) {
    int64_t off[3];
    adnn_cpu_loop_row_offsets(L, row, off);
    const float *x = t->x + off[1];
    float *y = t->y + off[0];
    if (t->s->path == PATH_ROWS) {
      ADNN_SIMD_CALL(t->s->simd, act_affine, &t->d->activation, x, y, (size_t)len, 0.0f, 1.0f,
                     0.0f, 0.0f, 0);
      continue;
    }
    for (int64_t j0 = 0; j0 < len; j0 += STRIDED_CHUNK) {
      int64_t m = len - j0 < STRIDED_CHUNK ? len - j0 : STRIDED_CHUNK;
      for (int64_t j = 0; j < m; j++) buf[j] = x[(j0 + j) * sx];
      ADNN_SIMD_CALL(t->s->simd, act_affine, &t->d->activation, buf, buf, (size_t)m, 0.0f, 1.0f,
                     0.0f, 0.0f, 0);
      for (int64_t j = 0; j < m; j++) y[(j0 + j) * sy] = buf[j];
    }
  }
}

void adnn_cpu_activation_f32(const adnn_activation_desc *d, const adnn_cpu_op_state *s,
                             const float *x, float *y) {
  act_task t = {d, s, x, y, {0}};
  loop_of(d, &t.L);
  if (s->path == PATH_CONTIGUOUS) {
    adnn_cpu_parallel_for(s->inner, ADNN_CPU_GRAIN, run_contiguous, &t);
    return;
  }
  int64_t grain = ADNN_CPU_GRAIN / s->inner;
  adnn_cpu_parallel_for(s->outer, grain > 1 ? grain : 1, run_rows, &t);
}

#endif
