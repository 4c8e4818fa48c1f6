/*
 * quantize and dequantize on the CPU (doc/ops.md "Quantize and dequantize"),
 * bit for bit the scalar definition of kernels/common/quantize.h.
 *
 * The "cpu_simd" implementation takes x and y packed (row-major, unit
 * innermost stride); other layouts go to the reference loops. The elements
 * are split into chunks over the plugin's threads; inside a chunk each run
 * of elements sharing one channel (the whole chunk per tensor) is done 8 at
 * a time with AVX2 when the CPU has it, the tail and the base ISA by the
 * scalar definition.
 *
 * Why the AVX2 quantizer equals the definition: vdivps is the IEEE division
 * the definition does; NaN lanes (x NaN, or 0/0 from a bad run-time scale)
 * are replaced by 0 so that they give zp; the clamp to [lo - zp, hi - zp]
 * uses integral bounds, so clamping before rounding is the same as after;
 * vroundps with an explicit round-to-nearest-even immediate does not read
 * MXCSR's rounding field; the result is then an integer that vcvtps2dq
 * converts exactly, zp is added and the packs cannot saturate any further.
 * The dequantizer: sign or zero extension, an exact integer subtraction and
 * conversion, one vmulps. MXCSR's FTZ and DAZ are cleared while a task runs
 * (as reorder does), since the division of a subnormal depends on them.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/common/quantize.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/cpu_parallel.h"
#include "kernels/cpu/simd_isa.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define QUANT_X86 1
#endif

typedef struct quant_state {
  int avx2;      /* the AVX2 loops may run */
  int64_t grain; /* elements per task */
} quant_state;

typedef struct quant_args {
  const adnn_plugin_quantize *p; /* dequantize's problem has the same fields */
  const quant_state *s;
  int quantize;
  const void *const *inputs;
  void *y;
} quant_args;

/* 1 when t is packed row-major. */
static int packed(const adnn_tensor_desc *t) {
  int64_t s = 1;
  for (int i = t->rank - 1; i >= 0; i--) {
    if (t->dims[i] > 1 && t->strides[i] != s) return 0;
    s *= t->dims[i];
  }
  return 1;
}

static int quant_supports(const void *problem, const adnn_cpu_env *env, char *why,
                          size_t why_size) {
  (void)env;
  const adnn_plugin_quantize *p = problem;
  if (packed(&p->x) && packed(&p->y)) return 1;
  snprintf(why, why_size, "needs packed x and y");
  return 0;
}

static void quant_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                          size_t *workspace_bytes) {
  (void)problem;
  quant_state *s = state;
  s->avx2 = env->isa >= ADNN_CPU_ISA_AVX2;
  s->grain = 1 << 16;
  *workspace_bytes = 0;
}

#ifdef QUANT_X86
#define AVX2_FN __attribute__((target("avx2,fma"))) static

/* n elements of one channel. */
AVX2_FN int64_t quantize_avx2(const float *x, void *y, int u8, int64_t n, float scale,
                              int32_t zp) {
  const int32_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
  /* Valid zero points only reach the vector loop; others take the scalar
   * definition, which clamps in 64-bit arithmetic. */
  if (zp < lo || zp > hi) return 0;
  const __m256 vs = _mm256_set1_ps(scale), vlo = _mm256_set1_ps((float)(lo - zp)),
               vhi = _mm256_set1_ps((float)(hi - zp));
  const __m256i vzp = _mm256_set1_epi32(zp);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 q = _mm256_div_ps(_mm256_loadu_ps(x + i), vs);
    const __m256 nan = _mm256_cmp_ps(q, q, _CMP_UNORD_Q);
    q = _mm256_min_ps(_mm256_max_ps(q, vlo), vhi);
    q = _mm256_andnot_ps(nan, q);
    q = _mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i v = _mm256_add_epi32(_mm256_cvtps_epi32(q), vzp);
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    const __m128i b = u8 ? _mm_packus_epi16(w, w) : _mm_packs_epi16(w, w);
    _mm_storel_epi64((__m128i *)((char *)y + i), b);
  }
  return i;
}

AVX2_FN int64_t dequantize_avx2(const void *x, float *y, int u8, int64_t n, float scale,
                                int32_t zp) {
  /* Only zero points whose difference with x cannot overflow 32 bits. */
  if (zp < -(1 << 24) || zp > (1 << 24)) return 0;
  const __m256 vs = _mm256_set1_ps(scale);
  const __m256i vzp = _mm256_set1_epi32(zp);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i b = _mm_loadl_epi64((const __m128i *)((const char *)x + i));
    const __m256i v = u8 ? _mm256_cvtepu8_epi32(b) : _mm256_cvtepi8_epi32(b);
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(v, vzp)), vs));
  }
  return i;
}
#endif

static void quant_run_range(const quant_args *a, int64_t begin, int64_t end) {
  const adnn_plugin_quantize *p = a->p;
  const int per_channel = p->axis >= 0;
  const int u8 = (a->quantize ? p->y.dtype : p->x.dtype) == ADNN_DTYPE_U8;
  const int32_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
  int64_t i = begin;
  while (i < end) {
    float scale = p->scale;
    int32_t zp = p->zero_point;
    int64_t run_end = end;
    if (per_channel) {
      const int64_t c = (i / p->inner) % p->channels;
      scale = ((const float *)a->inputs[1])[c];
      zp = ((const int32_t *)a->inputs[2])[c];
      const int64_t next = (i / p->inner + 1) * p->inner;
      if (next < run_end) run_end = next;
    }
    const int64_t n = run_end - i;
    int64_t done = 0;
    if (a->quantize) {
      const float *x = (const float *)a->inputs[0] + i;
      char *y = (char *)a->y + i;
#ifdef QUANT_X86
      if (a->s->avx2) done = quantize_avx2(x, y, u8, n, scale, zp);
#endif
      for (int64_t k = done; k < n; k++) {
        const int32_t v = adnn_q_quantize(x[k], scale, zp, lo, hi);
        if (u8) ((uint8_t *)y)[k] = (uint8_t)v;
        else ((int8_t *)y)[k] = (int8_t)v;
      }
    } else {
      const char *x = (const char *)a->inputs[0] + i;
      float *y = (float *)a->y + i;
#ifdef QUANT_X86
      if (a->s->avx2) done = dequantize_avx2(x, y, u8, n, scale, zp);
#endif
      for (int64_t k = done; k < n; k++) {
        const int32_t v = u8 ? ((const uint8_t *)x)[k] : ((const int8_t *)x)[k];
        y[k] = adnn_q_dequantize(v, scale, zp);
      }
    }
    i = run_end;
  }
}

static void quant_task(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const quant_args *a = arg;
  const int64_t g = a->s->grain, b = begin * g;
  int64_t e = end * g;
  if (e > a->p->count) e = a->p->count;
#ifdef QUANT_X86
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(csr & ~0x8040u); /* FTZ (bit 15) and DAZ (bit 6) off */
  quant_run_range(a, b, e);
  _mm_setcsr(csr);
#else
  quant_run_range(a, b, e);
#endif
}

static void run_common(const adnn_plugin_quantize *p, const quant_state *s, int quantize,
                       const void *const *inputs, void *const *outputs) {
  quant_args a = {p, s, quantize, inputs, outputs[0]};
  const int64_t chunks = (p->count + s->grain - 1) / s->grain;
  if (chunks <= 1) quant_task(&a, 0, chunks, 0);
  else adnn_cpu_parallel_for(chunks, 1, quant_task, &a);
}

static void quantize_run(const void *problem, const void *state, const void *const *inputs,
                         void *const *outputs, void *workspace) {
  (void)workspace;
  run_common(problem, state, 1, inputs, outputs);
}

static void dequantize_run(const void *problem, const void *state, const void *const *inputs,
                           void *const *outputs, void *workspace) {
  (void)workspace;
  /* adnn_plugin_dequantize has adnn_plugin_quantize's layout field for field. */
  adnn_plugin_quantize q;
  const adnn_plugin_dequantize *d = problem;
  q.x = d->x;
  q.y = d->y;
  q.count = d->count;
  q.axis = d->axis;
  q.scale = d->scale;
  q.zero_point = d->zero_point;
  q.channels = d->channels;
  q.inner = d->inner;
  run_common(&q, state, 0, inputs, outputs);
}

const adnn_cpu_impl adnn_cpu_quantize_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32),
    .supports = quant_supports,
    .state_size = sizeof(quant_state),
    .reshape = quant_reshape,
    .run = quantize_run,
};

const adnn_cpu_impl adnn_cpu_dequantize_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_I8) | ADNN_OP_DTYPE(ADNN_DTYPE_U8),
    .supports = quant_supports,
    .state_size = sizeof(quant_state),
    .reshape = quant_reshape,
    .run = dequantize_run,
};
