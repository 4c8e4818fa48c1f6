/*
 * conv2d in F16 and BF16 on the CPU ("lowp"): x, w and the bias are widened
 * to F32 (exactly: every F16 and BF16 value is an F32 value) into the
 * workspace, the F32 algorithm the plugin would choose for the same problem
 * in F32 runs on them (F32 accumulation, the bias and the activation in F32,
 * in registers where that algorithm fuses them), and y is rounded once to
 * its dtype, to nearest even (kernels/cpu/lowp.h). The result is therefore
 * the F32 convolution of the rounded inputs plus one rounding of the output:
 * the bound of doc/numerics.md ("conv2d in F16/BF16").
 *
 * This is the "conversion to F32" path of issue 13 for every CPU: no
 * instruction of the AVX-512-BF16 / AMX / AVX512-FP16 families is used yet,
 * so F16/BF16 convolutions cost the F32 time plus the conversions (measured
 * in doc/performance.md). The conversions run on the plugin's threads in
 * blocks; nothing is allocated at run time.
 *
 * Restrictions: x and y packed NCHW or NHWC, a packed bias (what every fast
 * F32 algorithm needs; the reference loops run the rest). w may have any
 * strides: its whole span is widened with the same strides.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/conv2d.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/lowp.h"

/* The F32 algorithms lowp may run, in the plugin's order of preference (the
 * conv2d list of impl_list.h, whose F32 members these are). */
#define CL_ADDRESS_(op, impl) &adnn_cpu_##op##_##impl,
static const adnn_cpu_impl *const cl_inner_list[] = {ADNN_CPU_CONV2D_IMPLS(CL_ADDRESS_)};
#undef CL_ADDRESS_

/* The largest inner state lowp can hold (checked in supports: an algorithm
 * with a larger state is not used). */
#define CL_MAX_STATE 2048

typedef struct cl_state {
  adnn_plugin_conv2d inner; /* the problem in F32, same dims and strides */
  const adnn_cpu_impl *impl;
  int isa;
  size_t inner_ws;                 /* bytes, at offset 0 of the workspace */
  size_t x_off, w_off, b_off, y_off; /* byte offsets of the F32 copies */
  int64_t nx, nw, nb, ny;            /* their element spans */
  /* The inner implementation's state: plan states come from calloc, so
   * natural (max_align_t) alignment, not more. */
  union {
    max_align_t align;
    unsigned char bytes[CL_MAX_STATE];
  } inner_state;
} cl_state;

static int64_t span_of(const adnn_tensor_desc *t) {
  int64_t s = 1;
  for (int i = 0; i < t->rank; i++) s += (t->dims[i] - 1) * t->strides[i];
  return s;
}

static adnn_plugin_conv2d inner_problem(const adnn_plugin_conv2d *g) {
  adnn_plugin_conv2d p = *g;
  p.x.dtype = p.w.dtype = p.bias.dtype = p.y.dtype = ADNN_DTYPE_F32;
  p.weights_prepacked = 0; /* lowp widens w itself; the plugin's copy is w as described */
  p.algorithm = ADNN_CONV2D_ALGO_AUTO;
  return p;
}

/* The F32 implementation for the widened problem: the first one that runs it
 * and is preferred (the plugin's own choice in F32), else the first that
 * runs it; NULL when only the reference loops would. */
static const adnn_cpu_impl *inner_choice(const adnn_plugin_conv2d *p, const adnn_cpu_env *env) {
  const adnn_cpu_impl *fallback = NULL;
  for (size_t i = 0; i < sizeof cl_inner_list / sizeof cl_inner_list[0]; i++) {
    const adnn_cpu_impl *impl = cl_inner_list[i];
    if (impl == &adnn_cpu_conv2d_lowp || impl == &adnn_cpu_conv2d_reference) continue;
    if (!(impl->dtypes & ADNN_OP_DTYPE(ADNN_DTYPE_F32)) || impl->state_size > CL_MAX_STATE)
      continue;
    char why[8];
    if (impl->supports && !impl->supports(p, env, why, sizeof why)) continue;
    if (impl->preferred == NULL || impl->preferred(p, env)) return impl;
    if (fallback == NULL) fallback = impl;
  }
  return fallback;
}

static int cl_supports(const void *problem, const adnn_cpu_env *env, char *why, size_t why_size) {
  const adnn_plugin_conv2d *g = problem;
  if (!adnn_cpu_conv2d_common_supports(g, why, why_size)) return 0;
  const adnn_plugin_conv2d p = inner_problem(g);
  if (inner_choice(&p, env) == NULL)
    return adnn_cpu_conv2d_no(why, why_size, "no F32 algorithm runs the widened problem");
  return 1;
}

static size_t align64(size_t v) { return (v + 63) & ~(size_t)63; }

static void cl_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                       size_t *workspace_bytes) {
  const adnn_plugin_conv2d *g = problem;
  cl_state *s = state;
  s->inner = inner_problem(g);
  s->impl = inner_choice(&s->inner, env);
  s->isa = env->isa;
  s->inner_ws = 0;
  if (s->impl->reshape) s->impl->reshape(&s->inner, env, s->inner_state.bytes, &s->inner_ws);
  s->nx = span_of(&g->x);
  s->nw = span_of(&g->w);
  s->nb = g->has_bias ? span_of(&g->bias) : 0;
  s->ny = span_of(&g->y);
  size_t off = align64(s->inner_ws);
  s->x_off = off;
  off = align64(off + (size_t)s->nx * sizeof(float));
  s->w_off = off;
  off = align64(off + (size_t)s->nw * sizeof(float));
  s->b_off = off;
  off = align64(off + (size_t)s->nb * sizeof(float));
  s->y_off = off;
  off = align64(off + (size_t)s->ny * sizeof(float));
  *workspace_bytes = off;
}

enum { CL_CHUNK = 16 * ADNN_CPU_LOWP_BLOCK }; /* elements per conversion task */

/* One widening (src16 -> dst32) or narrowing (src32 -> dst16) on the pool. */
typedef struct cl_job {
  int isa;
  adnn_dtype t;
  int64_t count;
  const uint16_t *src16;
  float *dst32;
  const float *src32;
  uint16_t *dst16;
} cl_job;

static void cl_job_task(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const cl_job *j = arg;
  for (int64_t c = begin; c < end; c++) {
    const int64_t lo = c * CL_CHUNK;
    const int64_t n = j->count - lo < CL_CHUNK ? j->count - lo : CL_CHUNK;
    if (j->src16)
      adnn_cpu_lowp_to_f32(j->isa, j->t, j->src16 + lo, j->dst32 + lo, (size_t)n);
    else
      adnn_cpu_lowp_from_f32(j->isa, j->t, j->src32 + lo, j->dst16 + lo, (size_t)n);
  }
}

static void cl_run_job(const cl_job *j) {
  const int64_t chunks = (j->count + CL_CHUNK - 1) / CL_CHUNK;
  if (chunks <= 1 || adnn_cpu_parallel_in_task())
    cl_job_task((void *)j, 0, chunks, 0);
  else
    adnn_cpu_parallel_for(chunks, 1, cl_job_task, (void *)j);
}

static void cl_widen(const cl_state *s, adnn_dtype t, const uint16_t *src, float *dst,
                     int64_t count) {
  const cl_job j = {s->isa, t, count, src, dst, NULL, NULL};
  cl_run_job(&j);
}

static void cl_narrow(const cl_state *s, adnn_dtype t, const float *src, uint16_t *dst,
                      int64_t count) {
  const cl_job j = {s->isa, t, count, NULL, NULL, src, dst};
  cl_run_job(&j);
}

static void cl_run(const void *problem, const void *state, const void *const *inputs,
                   void *const *outputs, void *workspace) {
  const adnn_plugin_conv2d *g = problem;
  const cl_state *s = state;
  unsigned char *ws = workspace;
  float *x = (float *)(ws + s->x_off), *w = (float *)(ws + s->w_off);
  float *b = (float *)(ws + s->b_off), *y = (float *)(ws + s->y_off);
  cl_widen(s, g->x.dtype, inputs[0], x, s->nx);
  cl_widen(s, g->w.dtype, inputs[1], w, s->nw);
  if (g->has_bias) cl_widen(s, g->bias.dtype, inputs[2], b, s->nb);
  const void *in[3] = {x, w, g->has_bias ? b : NULL};
  void *out[1] = {y};
  s->impl->run(&s->inner, s->inner_state.bytes, in, out, s->inner_ws ? ws : NULL);
  cl_narrow(s, g->y.dtype, y, outputs[0], s->ny);
}

const adnn_cpu_impl adnn_cpu_conv2d_lowp = {
    .name = "lowp",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F16) | ADNN_OP_DTYPE(ADNN_DTYPE_BF16),
    .supports = cl_supports,
    .state_size = sizeof(cl_state),
    .reshape = cl_reshape,
    .run = cl_run,
};
