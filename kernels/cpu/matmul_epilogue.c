/*
 * The matmul epilogue (matmul_epilogue.h). Compiled in two roles like
 * activation.c: read normally it holds the dispatch and the F64 loop;
 * simd_instantiate.h includes it once per instruction set with
 * ADNN_SIMD_VECTOR_PART defined to compile the F32 vector section.
 */
#ifdef ADNN_SIMD_VECTOR_PART

/* Residual elements gathered at a time when r's block columns are strided. */
#define MM_EPI_CHUNK 256

static void NAME(mm_epilogue)(const adnn_activation *act, float *c, int64_t ldc, int64_t m,
                              int64_t n, const float *bias_col, const float *bias_row,
                              const float *r, int64_t r_rs, int64_t r_cs, float rs) {
  const NAME(act_params) p = NAME(act_params_make)(act);
  const VF vrs = NAME(vset)(rs);
  ADNN_ACT_SWITCH(act->kind, {
    float buf[MM_EPI_CHUNK];
    for (int64_t i = 0; i < m; i++) {
      float *ci = c + i * ldc;
      const VF vbr = NAME(vset)(bias_row ? bias_row[i] : 0.0f);
      const float *ri = r ? r + i * r_rs : NULL;
      for (int64_t j0 = 0; j0 < n; j0 += MM_EPI_CHUNK) {
        const size_t len = (size_t)(n - j0 < MM_EPI_CHUNK ? n - j0 : MM_EPI_CHUNK);
        float *cj = ci + j0;
        const float *bj = bias_col ? bias_col + j0 : NULL;
        const float *rj = NULL;
        if (ri && r_cs == 1) {
          rj = ri + j0;
        } else if (ri) {
          for (size_t j = 0; j < len; j++) buf[j] = ri[(j0 + (int64_t)j) * r_cs];
          rj = buf;
        }
        size_t j = 0;
        for (; j + VL <= len; j += VL) {
          VF v = NAME(vload)(cj + j);
          if (bj) v = v + NAME(vload)(bj + j);
          if (bias_row) v = v + vbr;
          if (rj) v = v + vrs * NAME(vload)(rj + j);
          NAME(vstore)(cj + j, NAME(vact)(ACT, v, &p));
        }
        if (j < len) {
          const size_t k = len - j;
          VF v = NAME(vload_n)(cj + j, k, 0.0f);
          if (bj) v = v + NAME(vload_n)(bj + j, k, 0.0f);
          if (bias_row) v = v + vbr;
          if (rj) v = v + vrs * NAME(vload_n)(rj + j, k, 0.0f);
          NAME(vstore_n)(cj + j, NAME(vact)(ACT, v, &p), k);
        }
      }
    }
  })
}

#undef MM_EPI_CHUNK

static const adnn_cpu_matmul_epilogue_f32_fn NAME(adnn_f32_matmul_epilogue) = NAME(mm_epilogue);

#else /* the dispatch part */

#include "config.h"

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/matmul_epilogue.h"
#include "kernels/cpu/simd.h" /* the shared helpers, before the vector regions */
#include "kernels/ref/ref.h"

#define ADNN_SIMD_KERNEL "kernels/cpu/matmul_epilogue.c"
#include "kernels/cpu/simd_instantiate.h"

static const adnn_cpu_matmul_epilogue_f32_fn *const epilogue_by_isa[ADNN_CPU_ISA_COUNT] =
    ADNN_CPU_ISA_TABLE(adnn_f32_matmul_epilogue);

void adnn_cpu_matmul_epilogue_init(adnn_cpu_matmul_epilogue *e, const adnn_activation *act,
                                   adnn_dtype dtype, int transposed, int isa) {
  e->activation = *act;
  e->dtype = dtype;
  e->transposed = transposed;
  e->f32 = *epilogue_by_isa[isa];
  adnn_cpu_matmul_epilogue_bind(e, NULL, NULL, 0, 0, 1.0);
}

/* F64: the definition element by element, with each activation exactly as
 * the reference kernels compute it. */
static void epilogue_f64(const adnn_cpu_matmul_epilogue *e, double *c, int64_t ldc, int64_t m,
                         int64_t n, int64_t row0, int64_t col0) {
  const double *bias = e->bias, *r = e->r;
  const int identity = e->activation.kind == ADNN_ACTIVATION_IDENTITY;
  for (int64_t i = 0; i < m; i++) {
    double *ci = c + i * ldc;
    const double br = bias && e->transposed ? bias[row0 + i] : 0.0;
    const double *ri = r ? r + (row0 + i) * e->r_rs + col0 * e->r_cs : NULL;
    for (int64_t j = 0; j < n; j++) {
      double v = ci[j];
      if (bias) v += e->transposed ? br : bias[col0 + j];
      if (ri) v += e->residual_scale * ri[j * e->r_cs];
      ci[j] = identity ? v : adnn_ref_activation_apply(&e->activation, v);
    }
  }
}

void adnn_cpu_matmul_epilogue_apply(const adnn_cpu_matmul_epilogue *e, void *c, int64_t ldc,
                                    int64_t m, int64_t n, int64_t row0, int64_t col0) {
  if (e->dtype == ADNN_DTYPE_F64) {
    epilogue_f64(e, c, ldc, m, n, row0, col0);
    return;
  }
  const float *bias = e->bias, *r = e->r;
  e->f32(&e->activation, c, ldc, m, n, bias && !e->transposed ? bias + col0 : NULL,
         bias && e->transposed ? bias + row0 : NULL,
         r ? r + row0 * e->r_rs + col0 * e->r_cs : NULL, e->r_rs, e->r_cs,
         (float)e->residual_scale);
}

#endif
