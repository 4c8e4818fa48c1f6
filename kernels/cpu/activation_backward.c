/*
 * Activation backward: dx = dy * act'(x) with the kink, NaN and infinity
 * rules of doc/ops.md ("Activation backward"), for every activation kind.
 *
 * Compiled in two roles like activation.c: the vector section below is
 * instantiated once per instruction set by simd_instantiate.h, and the
 * dispatch part holds the layout code and the implementation entry.
 *
 * Paths, chosen at reshape time from the layouts (dx has x's layout and dy
 * has y's, so two stride patterns describe all three tensors):
 *   contiguous: x, dx and dy address dense runs after merging dims: one vector
 *               loop split across threads;
 *   rows:       unit stride in the innermost merged dim: a vector loop per row;
 *   strided:    anything else: each row is gathered chunk by chunk into stack
 *               buffers, run through the same vector code and scattered back,
 *               so every layout gets identical numerics.
 * dx may be dy (the core allows it when the layouts are the same): every
 * element of dy is loaded before the dx at its place is stored.
 *
 * F16 and BF16 take the same paths in chunks of STRIDED_CHUNK elements: x
 * and dy are widened exactly into stack buffers (kernels/cpu/lowp.h, vector
 * code on contiguous runs, gathered otherwise), the F32 vector code runs on
 * them and dx is rounded once to the dtype: bit for bit the F32 kernel on
 * the widened inputs, rounded (doc/numerics.md).
 */
#ifdef ADNN_SIMD_VECTOR_PART

/* sigmoid'(x) = e / (1 + e)^2 with e = exp(-|x|): no cancellation, 0 at
 * +-inf (vexp flushes below -87.3 to 0). */
SIMD_INLINE VF NAME(vsigmoid_grad)(VF x) {
  const VF e = NAME(vexp)(-NAME(vabs)(x));
  const VF d = 1.0f + e;
  return e / (d * d);
}

/* sigmoid(x) without overflow: exp of -|x| only. */
SIMD_INLINE VF NAME(vsigmoid_stable)(VF x) {
  const VF e = NAME(vexp)(-NAME(vabs)(x));
  const VF r = 1.0f / (1.0f + e);
  return NAME(vsel)(x >= 0.0f, r, e * r);
}

/* dx for one vector of x and dy; `kind` is a constant at every call (see
 * ADNN_ACT_SWITCH). Each case matches adnn_ref_activation_backward_apply. */
SIMD_INLINE VF NAME(vact_grad)(int kind, VF x, VF g, const NAME(act_params) *pa) {
  const VF zero = {0};
  VF r;
  switch (kind) {
    case ADNN_ACTIVATION_IDENTITY:
      r = g;
      break;
    case ADNN_ACTIVATION_RELU:
      r = NAME(vsel)(x > zero, g, zero);
      break;
    case ADNN_ACTIVATION_LEAKY_RELU:
      r = NAME(vsel)(x > zero, g, pa->alpha * g);
      break;
    case ADNN_ACTIVATION_ELU:
      r = NAME(vsel)(x > zero, g, g * (pa->alpha * NAME(vexp)(x)));
      break;
    case ADNN_ACTIVATION_CLAMP:
      r = NAME(vsel)((x > pa->alpha) & (x < pa->beta), g, zero);
      break;
    case ADNN_ACTIVATION_SIGMOID:
      r = g * NAME(vsigmoid_grad)(x);
      break;
    case ADNN_ACTIVATION_TANH: {
      /* tanh'(x) = 4 e / (1 + e)^2 with e = exp(-2|x|). */
      const VF e = NAME(vexp)(-2.0f * NAME(vabs)(x));
      const VF d = 1.0f + e;
      r = g * (4.0f * e / (d * d));
      break;
    }
    case ADNN_ACTIVATION_GELU: {
      /* Phi(x) + x phi(x); x^2 / 2 enters exp as an exact hi + lo pair.
       * Beyond |x| = 13.5 the derivative is its limit (1 or 0) within float
       * rounding, and x * phi would give inf * 0 at +-inf. */
      const VF h = x * x, l = NAME(vsqr_err)(x, h);
      const VF pdf = 0.39894228040143268f * NAME(vexp2part)(-0.5f * h, -0.5f * l);
      VF d = NAME(vphi)(x) + x * pdf;
      d = NAME(vsel)(x > 13.5f, NAME(vset)(1.0f), NAME(vsel)(x < -13.5f, zero, d));
      r = g * d;
      break;
    }
    case ADNN_ACTIVATION_GELU_TANH: {
      /* sigmoid(2u) + x/2 tanh'(u) k (1 + 3c x^2), u = k (x + c x^3); beyond
       * |x| = 10 the limit (the second term is below 1e-36 there). */
      const VF x2 = x * x;
      const VF u = 0.79788456080286536f * (x + 0.044715f * x2 * x);
      const VF e = NAME(vexp)(-2.0f * NAME(vabs)(u));
      const VF den = 1.0f + e;
      const VF tg = 4.0f * e / (den * den);
      VF d = NAME(vsigmoid_stable)(2.0f * u) +
             0.5f * x * tg * (0.79788456080286536f * (1.0f + 0.134145f * x2));
      d = NAME(vsel)(x > 10.0f, NAME(vset)(1.0f), NAME(vsel)(x < -10.0f, zero, d));
      r = g * d;
      break;
    }
    case ADNN_ACTIVATION_SILU: {
      /* s (1 + x (1 - s)) with 1 - s = sigmoid(-x); the limits at +-inf. */
      const VF s = NAME(vsigmoid_stable)(x);
      const VF sn = NAME(vsigmoid_stable)(-x);
      VF d = s * (1.0f + x * sn);
      const VF inf = NAME(vset)(__builtin_inff());
      d = NAME(vsel)(x == inf, NAME(vset)(1.0f), NAME(vsel)(x == -inf, zero, d));
      r = g * d;
      break;
    }
    case ADNN_ACTIVATION_SOFTPLUS:
      /* PyTorch's threshold 20: exactly dy above it. */
      r = NAME(vsel)(x > 20.0f, g, g * NAME(vsigmoid_stable)(x));
      break;
    case ADNN_ACTIVATION_HARDSWISH:
      r = NAME(vsel)(x < -3.0f, zero, NAME(vsel)(x <= 3.0f, g * (x / 3.0f + 0.5f), g));
      break;
    default:
      r = x * __builtin_nanf("");
      break;
  }
  /* NaN x gives NaN whatever the kind (a select above could have hidden it). */
  return NAME(vsel)(NAME(visnan)(x), x, r);
}

/* dx[i] = dy[i] * act'(x[i]) for i < n; dx may be dy or x. */
static void NAME(act_bwd)(const adnn_activation *act, const float *x, const float *dy, float *dx,
                          size_t n) {
  const NAME(act_params) p = NAME(act_params_make)(act);
  ADNN_ACT_SWITCH(act->kind, {
    size_t i = 0;
    for (; i + 2 * VL <= n; i += 2 * VL) {
      const VF x0 = NAME(vload)(x + i), x1 = NAME(vload)(x + i + VL);
      const VF g0 = NAME(vload)(dy + i), g1 = NAME(vload)(dy + i + VL);
      NAME(vstore)(dx + i, NAME(vact_grad)(ACT, x0, g0, &p));
      NAME(vstore)(dx + i + VL, NAME(vact_grad)(ACT, x1, g1, &p));
    }
    for (; i + VL <= n; i += VL)
      NAME(vstore)(dx + i, NAME(vact_grad)(ACT, NAME(vload)(x + i), NAME(vload)(dy + i), &p));
    if (i < n) {
      const VF xv = NAME(vload_n)(x + i, n - i, 0.0f), gv = NAME(vload_n)(dy + i, n - i, 0.0f);
      NAME(vstore_n)(dx + i, NAME(vact_grad)(ACT, xv, gv, &p), n - i);
    }
  })
}

/* This instruction set's copy. */
static const act_bwd_fns NAME(adnn_f32_activation_backward) = {NAME(act_bwd)};

#else /* the dispatch part */

#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/lowp.h"
#include "kernels/cpu/simd.h"

typedef struct act_bwd_fns {
  void (*run)(const adnn_activation *act, const float *x, const float *dy, float *dx, size_t n);
} act_bwd_fns;

#define ADNN_SIMD_KERNEL "kernels/cpu/activation_backward.c"
#include "kernels/cpu/simd_instantiate.h"

static const act_bwd_fns *const act_bwd_by_isa[ADNN_CPU_ISA_COUNT] =
    ADNN_CPU_ISA_TABLE(adnn_f32_activation_backward);

enum { PATH_CONTIGUOUS = 0, PATH_ROWS = 1, PATH_STRIDED = 2 };

typedef struct act_bwd_state {
  const act_bwd_fns *fn;
  adnn_activation act;
  adnn_nd L;     /* x and dx ([0]), y's layout for dy ([1]), coalesced */
  int path;
  int64_t inner, outer, grain;
  adnn_dtype dtype; /* F32, or F16/BF16 (run_lowp) */
  int isa;          /* for the 16-bit conversions */
} act_bwd_state;

static void act_bwd_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                            size_t *workspace_bytes) {
  const adnn_plugin_activation_backward *p = problem;
  act_bwd_state *s = state;
  const adnn_tensor_desc *t[2] = {&p->fwd.x, &p->fwd.y};
  adnn_cpu_loop_init(&s->L, 2, t);
  const int in = s->L.rank - 1;
  const int unit = s->L.strides[0][in] == 1 && s->L.strides[1][in] == 1;
  s->path = !unit ? PATH_STRIDED : (s->L.rank == 1 ? PATH_CONTIGUOUS : PATH_ROWS);
  s->inner = s->L.dims[in];
  s->outer = adnn_cpu_loop_rows(&s->L);
  if (s->path == PATH_CONTIGUOUS) {
    s->grain = ADNN_CPU_GRAIN;
  } else {
    const int64_t grain = ADNN_CPU_GRAIN / s->inner;
    s->grain = grain > 1 ? grain : 1;
  }
  s->fn = act_bwd_by_isa[env->isa];
  s->act = p->fwd.activation;
  s->dtype = p->fwd.x.dtype;
  s->isa = env->isa;
  *workspace_bytes = 0;
}

typedef struct act_bwd_task {
  const act_bwd_state *s;
  const float *x, *dy;
  float *dx;
} act_bwd_task;

static void run_contiguous(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const act_bwd_task *t = arg;
  t->s->fn->run(&t->s->act, t->x + begin, t->dy + begin, t->dx + begin, (size_t)(end - begin));
}

#define STRIDED_CHUNK 256

static void run_rows(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const act_bwd_task *t = arg;
  const act_bwd_state *s = t->s;
  const adnn_nd *L = &s->L;
  const int in = L->rank - 1;
  const int64_t len = L->dims[in], sx = L->strides[0][in], sy = L->strides[1][in];
  float bx[STRIDED_CHUNK], bg[STRIDED_CHUNK];
  for (int64_t row = begin; row < end; row++) {
    int64_t off[ADNN_ND_MAX_TENSORS];
    adnn_cpu_loop_row_offsets(L, row, off);
    const float *x = t->x + off[0], *dy = t->dy + off[1];
    float *dx = t->dx + off[0];
    if (s->path == PATH_ROWS) {
      s->fn->run(&s->act, x, dy, dx, (size_t)len);
      continue;
    }
    for (int64_t j0 = 0; j0 < len; j0 += STRIDED_CHUNK) {
      const int64_t m = len - j0 < STRIDED_CHUNK ? len - j0 : STRIDED_CHUNK;
      for (int64_t j = 0; j < m; j++) {
        bx[j] = x[(j0 + j) * sx];
        bg[j] = dy[(j0 + j) * sy];
      }
      s->fn->run(&s->act, bx, bg, bg, (size_t)m);
      for (int64_t j = 0; j < m; j++) dx[(j0 + j) * sx] = bg[j];
    }
  }
}

/* ---- F16 / BF16 ---------------------------------------------------------- */

/* n elements of x (stride sx; dx has the same), dy (stride sy): widened in
 * chunks, the F32 code, dx rounded once. Each chunk of dy is read before the
 * chunk of dx over it is written (dx may be dy). */
static void lowp_span(const act_bwd_state *s, const uint16_t *x, int64_t sx, const uint16_t *dy,
                      int64_t sy, uint16_t *dx, int64_t n) {
  float bx[STRIDED_CHUNK], bg[STRIDED_CHUNK];
  for (int64_t j0 = 0; j0 < n; j0 += STRIDED_CHUNK) {
    const size_t m = (size_t)(n - j0 < STRIDED_CHUNK ? n - j0 : STRIDED_CHUNK);
    adnn_cpu_lowp_to_f32_strided(s->isa, s->dtype, x + j0 * sx, sx, bx, m);
    adnn_cpu_lowp_to_f32_strided(s->isa, s->dtype, dy + j0 * sy, sy, bg, m);
    s->fn->run(&s->act, bx, bg, bg, m);
    adnn_cpu_lowp_from_f32_strided(s->isa, s->dtype, bg, dx + j0 * sx, sx, m);
  }
}

typedef struct act_bwd_lowp_task {
  const act_bwd_state *s;
  const uint16_t *x, *dy;
  uint16_t *dx;
} act_bwd_lowp_task;

static void run_lowp(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const act_bwd_lowp_task *t = arg;
  const act_bwd_state *s = t->s;
  if (s->path == PATH_CONTIGUOUS) {
    lowp_span(s, t->x + begin, 1, t->dy + begin, 1, t->dx + begin, end - begin);
    return;
  }
  const adnn_nd *L = &s->L;
  const int in = L->rank - 1;
  for (int64_t row = begin; row < end; row++) {
    int64_t off[ADNN_ND_MAX_TENSORS];
    adnn_cpu_loop_row_offsets(L, row, off);
    lowp_span(s, t->x + off[0], L->strides[0][in], t->dy + off[1], L->strides[1][in],
              t->dx + off[0], L->dims[in]);
  }
}

static void act_bwd_run(const void *problem, const void *state, const void *const *inputs,
                        void *const *outputs, void *workspace) {
  (void)problem;
  (void)workspace;
  const act_bwd_state *s = state;
  if (s->dtype == ADNN_DTYPE_F16 || s->dtype == ADNN_DTYPE_BF16) {
    act_bwd_lowp_task lt = {s, inputs[0], inputs[1], outputs[0]};
    adnn_cpu_parallel_for(s->path == PATH_CONTIGUOUS ? s->inner : s->outer, s->grain, run_lowp,
                          &lt);
    return;
  }
  act_bwd_task t = {s, inputs[0], inputs[1], outputs[0]};
  if (s->path == PATH_CONTIGUOUS)
    adnn_cpu_parallel_for(s->inner, s->grain, run_contiguous, &t);
  else
    adnn_cpu_parallel_for(s->outer, s->grain, run_rows, &t);
}

const adnn_cpu_impl adnn_cpu_activation_backward_simd = {
    .name = "cpu_simd",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32) | ADNN_OP_DTYPE(ADNN_DTYPE_F16) |
              ADNN_OP_DTYPE(ADNN_DTYPE_BF16),
    .state_size = sizeof(act_bwd_state),
    .reshape = act_bwd_reshape,
    .run = act_bwd_run,
};

#endif
