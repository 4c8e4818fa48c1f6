/*
 * matmul with low-precision inputs on the CPU ("lowp"): F16 and BF16 with
 * F32 accumulation, I8 x I8 and U8 x I8 with exact I32 accumulation
 * (adnn/ops.h, doc/ops.md "Matmul dtypes"), on the blocks of gemm_lowp.h.
 *
 * Tasks: every batch matrix's y is cut into tiles of at most
 * ADNN_CPU_LOWP_RM rows x ADNN_CPU_LOWP_NC columns, and the tiles of all
 * batch matrices are the tasks of one adnn_cpu_parallel_for. A task
 * computes its tile's accumulators (F32 or I32) into its thread's slice of
 * the workspace (sized at reshape: no allocation in run), then applies the
 * epilogue element by element while the tile is in cache:
 *   float inputs:  y = act(alpha * acc + bias + residual_scale * r), formed
 *                  in double from the F32 accumulator, then rounded once to
 *                  y's dtype (kernels/common/float16.h);
 *   integer inputs: v = acc + bias (exact, 64-bit), then y = v saturated to
 *                  I32, or saturate(rne(v * scale[n]) + y_zero_point) in F64
 *                  for an I8/U8 y, exactly as the reference kernel does.
 * Any strides are accepted (the packers gather what is not contiguous), so
 * the reference is never needed for layout reasons. Deterministic: a tile's
 * sums are formed in the same order whichever thread runs it, and tiles do
 * not depend on the thread count.
 *
 * alpha = 0 reads neither a nor b (doc/ops.md); a residual scaled by 0 is
 * not read. The in-place residual (r is y) is read element by element right
 * before that element is written, by the one task that owns it.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/common/float16.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm_lowp.h"
#include "kernels/ref/ref.h"

#define RM ADNN_CPU_LOWP_RM
#define NC ADNN_CPU_LOWP_NC

typedef struct lowp_state {
  const adnn_cpu_lowp_path *path;
  int64_t tiles_m, tiles_n; /* per batch matrix */
  size_t slice;             /* workspace bytes per thread (64-byte multiple) */
} lowp_state;

static int lowp_supports(const void *problem, const adnn_cpu_env *env, char *why,
                         size_t why_size) {
  const adnn_plugin_matmul *p = problem;
  if (adnn_cpu_lowp_choose(p->a.dtype, env->isa, env->features) == NULL) {
    snprintf(why, why_size, "no low-precision GEMM path for %s inputs at this instruction set "
             "(the F16/BF16 path needs AVX2+FMA and F16C)", adnn_plugin_dtype_name(p->a.dtype));
    return 0;
  }
  return 1;
}

static void lowp_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                         size_t *workspace_bytes) {
  const adnn_plugin_matmul *p = problem;
  lowp_state *s = state;
  s->path = adnn_cpu_lowp_choose(p->a.dtype, env->isa, env->features);
  s->tiles_m = (p->M + RM - 1) / RM;
  s->tiles_n = (p->N + NC - 1) / NC;
  /* The C tile (F32 and I32 are both 4 bytes), then the packing scratch. */
  const size_t bytes = (size_t)RM * NC * 4 + adnn_cpu_lowp_thread_bytes(s->path);
  s->slice = (bytes + 63) / 64 * 64;
  *workspace_bytes = s->slice * (size_t)env->threads + 64;
}

typedef struct lowp_job {
  const adnn_plugin_matmul *p;
  const lowp_state *s;
  const void *a, *b, *bias, *r, *scales;
  void *y;
  char *work; /* 64-byte aligned */
} lowp_job;

static double load_float(const void *base, adnn_dtype t, int64_t off) {
  if (t == ADNN_DTYPE_F16) return adnn_f16_to_f64(((const uint16_t *)base)[off]);
  if (t == ADNN_DTYPE_BF16) return adnn_bf16_to_f64(((const uint16_t *)base)[off]);
  if (t == ADNN_DTYPE_F64) return ((const double *)base)[off];
  return ((const float *)base)[off];
}

static void store_float(void *base, adnn_dtype t, int64_t off, double v) {
  if (t == ADNN_DTYPE_F16)
    ((uint16_t *)base)[off] = adnn_f64_to_f16(v);
  else if (t == ADNN_DTYPE_BF16)
    ((uint16_t *)base)[off] = adnn_f64_to_bf16(v);
  else
    ((float *)base)[off] = (float)v;
}

static size_t elem_size(adnn_dtype t) {
  switch (t) {
    case ADNN_DTYPE_F64: return 8;
    case ADNN_DTYPE_F32:
    case ADNN_DTYPE_I32: return 4;
    case ADNN_DTYPE_F16:
    case ADNN_DTYPE_BF16: return 2;
    default: return 1;
  }
}

static void run_tile(const lowp_job *j, int64_t t, int thread) {
  const adnn_plugin_matmul *p = j->p;
  const lowp_state *s = j->s;
  const int64_t per = s->tiles_m * s->tiles_n, bt = t / per, tile = t % per;
  const int64_t b0 = bt / p->batch1, b1 = bt % p->batch1;
  const int64_t i0 = tile / s->tiles_n * RM, j0 = tile % s->tiles_n * NC;
  const int64_t rows = p->M - i0 < RM ? p->M - i0 : RM;
  const int64_t cols = p->N - j0 < NC ? p->N - j0 : NC;
  const int64_t *sa = p->a.strides, *sb = p->b.strides, *sy = p->y.strides;
  const int64_t oa = b0 * sa[0] + b1 * sa[1] + i0 * sa[2];
  const int64_t ob = b0 * sb[0] + b1 * sb[1] + j0 * sb[3];
  const int64_t oy = b0 * sy[0] + b1 * sy[1] + i0 * sy[2] + j0 * sy[3];
  char *slice = j->work + s->slice * (size_t)thread;
  void *c = slice, *scratch = slice + (size_t)RM * NC * 4;
  const adnn_dtype yt = p->y.dtype;
  const int integer = s->path->kind == ADNN_CPU_LOWP_INT8;
  const int read_ab = integer || p->alpha != 0.0;
  if (read_ab)
    s->path->block(s->path, p->a.dtype, p->b.dtype,
                   (const char *)j->a + (size_t)oa * elem_size(p->a.dtype), sa[2], sa[3],
                   (const char *)j->b + (size_t)ob * elem_size(p->b.dtype), sb[2], sb[3], rows,
                   cols, p->K, c, NC, scratch);
  if (integer) {
    const int32_t *acc = c;
    const int32_t *bias = j->bias;
    const float *scales = j->scales;
    const int requant = yt == ADNN_DTYPE_I8 || yt == ADNN_DTYPE_U8;
    const int64_t lo = yt == ADNN_DTYPE_I8 ? -128 : requant ? 0 : INT32_MIN;
    const int64_t hi = yt == ADNN_DTYPE_I8 ? 127 : requant ? 255 : INT32_MAX;
    for (int64_t i = 0; i < rows; i++)
      for (int64_t q = 0; q < cols; q++) {
        int64_t v = acc[i * NC + q];
        if (bias) v += bias[(j0 + q) * p->bias.strides[0]];
        if (requant) {
          const double scale = scales ? (double)scales[(j0 + q) * p->requant_scales.strides[0]]
                                      : p->requant_scale;
          const double prod = (double)v * scale;
          /* The reference's rounding: the product in F64, then to nearest
           * even (the default rounding mode), NaN giving the zero point,
           * then the zero point added and the sum saturated in double. */
          const double rq = (prod != prod ? 0.0 : nearbyint(prod)) + (double)p->y_zero_point;
          v = rq < (double)lo ? lo : rq > (double)hi ? hi : (int64_t)rq;
        }
        v = v < lo ? lo : v > hi ? hi : v;
        const int64_t off = oy + i * sy[2] + q * sy[3];
        if (yt == ADNN_DTYPE_I8)
          ((int8_t *)j->y)[off] = (int8_t)v;
        else if (yt == ADNN_DTYPE_U8)
          ((uint8_t *)j->y)[off] = (uint8_t)v;
        else
          ((int32_t *)j->y)[off] = (int32_t)v;
      }
    return;
  }
  const float *acc = c;
  if (read_ab && p->alpha == 1.0 && !j->bias && !j->r &&
      p->activation.kind == ADNN_ACTIVATION_IDENTITY) {
    /* The plain product: y is the F32 accumulator rounded once (the
     * double the general path forms would be that float exactly, so the
     * result is the same), row by row without the double arithmetic. */
    for (int64_t i = 0; i < rows; i++) {
      const float *ai = acc + i * NC;
      const int64_t o = oy + i * sy[2];
      if (yt == ADNN_DTYPE_F32) {
        float *yi = (float *)j->y + o;
        for (int64_t q = 0; q < cols; q++) yi[q * sy[3]] = ai[q];
      } else if (yt == ADNN_DTYPE_BF16) {
        uint16_t *yi = (uint16_t *)j->y + o;
        for (int64_t q = 0; q < cols; q++) yi[q * sy[3]] = adnn_f32_to_bf16(ai[q]);
      } else if (sy[3] == 1) {
        adnn_cpu_lowp_narrow_f16(s->path, ai, cols, (uint16_t *)j->y + o);
      } else {
        uint16_t *yi = (uint16_t *)j->y + o;
        for (int64_t q = 0; q < cols; q++) yi[q * sy[3]] = adnn_f32_to_f16(ai[q]);
      }
    }
    return;
  }
  const int64_t *sr = p->residual.strides;
  const int64_t orr = j->r ? b0 * sr[0] + b1 * sr[1] + i0 * sr[2] + j0 * sr[3] : 0;
  const int identity = p->activation.kind == ADNN_ACTIVATION_IDENTITY;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t q = 0; q < cols; q++) {
      double v = read_ab ? p->alpha * (double)acc[i * NC + q] : 0.0;
      if (j->bias) v += ((const float *)j->bias)[(j0 + q) * p->bias.strides[0]];
      if (j->r)
        v += p->residual_scale *
             load_float(j->r, p->residual.dtype, orr + i * sr[2] + q * sr[3]);
      store_float(j->y, yt, oy + i * sy[2] + q * sy[3],
                  identity ? v : adnn_ref_activation_apply(&p->activation, v));
    }
}

static void lowp_task(void *arg, int64_t t0, int64_t t1, int thread) {
  for (int64_t t = t0; t < t1; t++) run_tile(arg, t, thread);
}

/* Inputs {a, b[, bias][, r][, requant_scales]}, outputs {y}. */
static void lowp_run(const void *problem, const void *state, const void *const *inputs,
                     void *const *outputs, void *workspace) {
  const adnn_plugin_matmul *p = problem;
  const lowp_state *s = state;
  lowp_job j = {p, s, inputs[0], inputs[1], NULL, NULL, NULL, outputs[0], NULL};
  if (p->has_bias) j.bias = inputs[2];
  if (p->has_residual && p->residual_scale != 0.0) j.r = inputs[2 + p->has_bias];
  if (p->has_requant_scales) j.scales = inputs[2 + p->has_bias + p->has_residual];
  j.work = (char *)(((uintptr_t)workspace + 63) / 64 * 64);
  const int64_t total = p->batch0 * p->batch1 * s->tiles_m * s->tiles_n;
  adnn_cpu_parallel_for(total, 1, lowp_task, &j);
}

const adnn_cpu_impl adnn_cpu_matmul_lowp = {
    .name = "lowp",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F16) | ADNN_OP_DTYPE(ADNN_DTYPE_BF16) |
              ADNN_OP_DTYPE(ADNN_DTYPE_I8) | ADNN_OP_DTYPE(ADNN_DTYPE_U8),
    .supports = lowp_supports,
    .state_size = sizeof(lowp_state),
    .reshape = lowp_reshape,
    .run = lowp_run,
};
