/*
 * Loss scaling on the CPU (doc/ops.md "Loss scaling"): t *= factor over
 * every tensor, in place, with a check that every product is finite.
 *
 * The factor is kernels/common/loss_scale.h's F32 number, so the products
 * are those of the reference. F32 tensors are multiplied in vectors; the
 * check ANDs |y| < limit into a lane mask (false for an infinity or a NaN),
 * so the hot loop has no branch and one test per chunk remains. F16/BF16
 * tensors run in blocks of ADNN_CPU_LOWP_BLOCK widened into an F32 stack
 * buffer, through the same vector kernel, and rounded back (kernels/cpu/
 * lowp.c); their limit is the smallest F32 magnitude that rounds to
 * infinity in the 16-bit type, since a product that fits F32 can still
 * overflow F16. F64 runs a scalar loop with an OR-reduced check.
 *
 * Work split as the optimizer's: chunks of LS_CHUNK elements numbered tensor
 * after tensor, spread over the pool; a chunk that finds a non-finite value
 * raises a flag (relaxed atomic store of 1), and found_inf is written once,
 * after the pool has finished, so it is never written concurrently.
 */
#ifdef ADNN_SIMD_VECTOR_PART

/* t[i] *= f for i < n; 1 when some |product| is not below `limit` (NaN
 * never is): infinity for F32 results, and for F16/BF16 the smallest F32
 * magnitude that rounds to infinity there. */
static int NAME(ls_f32)(float *t, size_t n, float f, float limit) {
  const VF vf = NAME(vset)(f), vlim = NAME(vset)(limit);
  VI fine = (VI){0} - 1;
  for (size_t i = 0; i < n; i += VL) {
    const size_t w = n - i < VL ? n - i : VL;
    const VF y = (w == VL ? NAME(vload)(t + i) : NAME(vload_n)(t + i, w, 0.0f)) * vf;
    if (w == VL)
      NAME(vstore)(t + i, y);
    else
      NAME(vstore_n)(t + i, y, w);
    fine &= NAME(vabs)(y) < vlim;
  }
  int bad = 0;
  for (int l = 0; l < VL; l++) bad |= fine[l] == 0;
  return bad;
}

static const ls_fns NAME(adnn_f32_loss_scale) = {NAME(ls_f32)};

#else /* the dispatch part */

#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/common/loss_scale.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/lowp.h"
#include "kernels/cpu/simd.h"

typedef struct ls_fns {
  int (*f32)(float *t, size_t n, float f, float limit);
} ls_fns;

#define ADNN_SIMD_KERNEL "kernels/cpu/loss_scale.c"
#include "kernels/cpu/simd_instantiate.h"

static const ls_fns *const ls_by_isa[ADNN_CPU_ISA_COUNT] = ADNN_CPU_ISA_TABLE(adnn_f32_loss_scale);

/* Elements per chunk: a multiply streams one array in and out, so chunks
 * are larger than the optimizer's. */
#define LS_CHUNK 32768

typedef struct ls_state {
  const ls_fns *fn;
  int isa;
} ls_state;

static void ls_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                       size_t *workspace_bytes) {
  const adnn_plugin_loss_scale *p = problem;
  ls_state *s = state;
  s->fn = ls_by_isa[env->isa];
  s->isa = env->isa;
  /* The chunk prefix counts: T + 1 of them. */
  *workspace_bytes = (size_t)(p->tensor_count + 1) * sizeof(int64_t);
}

typedef struct ls_task {
  const ls_state *s;
  const adnn_plugin_loss_scale *p;
  float factor;
  const int64_t *first_chunk;
  void *const *outputs;
  int found; /* written with __atomic_store_n only */
} ls_task;

/* One chunk of n elements at t; 1 when a result is not finite. */
static int ls_chunk(const ls_task *k, void *t, int64_t n) {
  const adnn_dtype dt = k->p->dtype;
  if (dt == ADNN_DTYPE_F32) return k->s->fn->f32((float *)t, (size_t)n, k->factor, INFINITY);
  if (dt == ADNN_DTYPE_F64) {
    double *d = t;
    const double f = (double)k->factor;
    unsigned bad = 0;
    for (int64_t i = 0; i < n; i++) {
      d[i] *= f;
      bad |= (unsigned)!(d[i] - d[i] == 0.0); /* NaN for an infinity or NaN */
    }
    return bad != 0;
  }
  /* The check happens in F32, before the rounding: F16's largest finite
   * value is 65504 with an odd significand, so |y| >= 65520 (the halfway
   * point to 2^16) rounds to infinity; BF16's is 0x1.fep127, so |y| >=
   * 0x1.ffp127 does. The conversion keeps NaN a NaN. */
  const float limit = dt == ADNN_DTYPE_F16 ? 65520.0f : 0x1.ffp127f;
  uint16_t *h = t;
  float buf[ADNN_CPU_LOWP_BLOCK];
  int bad = 0;
  for (int64_t b = 0; b < n; b += ADNN_CPU_LOWP_BLOCK) {
    const size_t m = (size_t)(n - b < ADNN_CPU_LOWP_BLOCK ? n - b : ADNN_CPU_LOWP_BLOCK);
    adnn_cpu_lowp_to_f32(k->s->isa, dt, h + b, buf, m);
    bad |= k->s->fn->f32(buf, m, k->factor, limit);
    adnn_cpu_lowp_from_f32(k->s->isa, dt, buf, h + b, m);
  }
  return bad;
}

static void ls_chunks(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  ls_task *k = arg;
  const adnn_plugin_loss_scale *p = k->p;
  const size_t es = p->dtype == ADNN_DTYPE_F64 ? 8 : p->dtype == ADNN_DTYPE_F32 ? 4 : 2;
  int64_t lo = 0, hi = p->tensor_count - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (k->first_chunk[mid] <= begin) lo = mid;
    else hi = mid - 1;
  }
  int bad = 0;
  for (int64_t c = begin, i = lo; c < end; c++) {
    while (c >= k->first_chunk[i + 1]) i++;
    const int64_t off = (c - k->first_chunk[i]) * LS_CHUNK;
    const int64_t n = p->sizes[i] - off < LS_CHUNK ? p->sizes[i] - off : LS_CHUNK;
    bad |= ls_chunk(k, (char *)k->outputs[i] + (size_t)off * es, n);
  }
  if (bad) __atomic_store_n(&k->found, 1, __ATOMIC_RELAXED);
}

static void ls_run(const void *problem, const void *state, const void *const *inputs,
                   void *const *outputs, void *workspace) {
  const adnn_plugin_loss_scale *p = problem;
  int64_t *first_chunk = workspace;
  first_chunk[0] = 0;
  int64_t elements = 0;
  for (int64_t i = 0; i < p->tensor_count; i++) {
    first_chunk[i + 1] = first_chunk[i] + (p->sizes[i] + LS_CHUNK - 1) / LS_CHUNK;
    elements += p->sizes[i];
  }
  ls_task k = {state, p,
               adnn_loss_scale_factor(p->kind == ADNN_LOSS_SCALE_UNSCALE,
                                      *(const float *)inputs[0]),
               first_chunk, outputs, 0};
  const int64_t chunks = first_chunk[p->tensor_count];
  const int64_t grain = elements < 2 * ADNN_CPU_GRAIN ? chunks : 1;
  adnn_cpu_parallel_for(chunks, grain, ls_chunks, &k);
  if (__atomic_load_n(&k.found, __ATOMIC_RELAXED)) {
    void *f = outputs[p->tensor_count];
    if (p->dtype == ADNN_DTYPE_F32) *(float *)f = 1.0f;
    else if (p->dtype == ADNN_DTYPE_F64) *(double *)f = 1.0;
    else *(uint16_t *)f = p->dtype == ADNN_DTYPE_F16 ? 0x3c00u : 0x3f80u; /* 1.0 */
  }
}

const adnn_cpu_impl adnn_cpu_loss_scale_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
    .state_size = sizeof(ls_state),
    .reshape = ls_reshape,
    .run = ls_run,
};

#endif
