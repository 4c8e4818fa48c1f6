/*
 * The "lowp" implementation of the ops whose F32 kernels have no 16-bit
 * form of their own: the convolution backward passes, batchnorm training and
 * backward, norm backward, softmax cross-entropy and its backward, attention
 * and its backward. Each widens its F16/BF16 tensors to F32, runs the F32
 * implementation the plugin would choose for the widened problem and rounds
 * the 16-bit outputs once (lowp_widen.h says why that meets the bound of
 * doc/numerics.md).
 *
 * What differs between the ops is only where their tensors are described:
 * each op has an io function naming, for each execute input and output in
 * the manifest's order, the descriptor of the problem that describes it
 * (NULL for a buffer without one, which passes through: batchnorm's and
 * norm's parameter vectors, labels, key lengths, all of
 * ADNN_OP_PARAM_DTYPE or integer). Every descriptor in a 16-bit dtype is
 * widened; a descriptor in F32 (attention's lse) passes through.
 *
 * Restrictions (supports): 16-bit outputs must be dense (no gaps between
 * their elements), since they are narrowed whole from the F32 copy and the
 * gaps of a strided output are the caller's; an F32 implementation other
 * than the reference loops must run the widened problem; the widened
 * problem and that implementation's state must fit this state. The
 * reference loops run the rest.
 */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/lowp.h"
#include "kernels/cpu/lowp_widen.h"

/* ------------------------------------------------------------------------ */
/* Parallel conversions                                                      */
/* ------------------------------------------------------------------------ */

enum { LW_CHUNK = 16 * ADNN_CPU_LOWP_BLOCK }; /* elements per conversion task */

/* One widening (src16 -> dst32) or narrowing (src32 -> dst16). */
typedef struct lw_job {
  int isa;
  adnn_dtype t;
  int64_t count;
  const uint16_t *src16;
  float *dst32;
  const float *src32;
  uint16_t *dst16;
} lw_job;

static void lw_job_task(void *arg, int64_t begin, int64_t end, int thread) {
  (void)thread;
  const lw_job *j = arg;
  for (int64_t c = begin; c < end; c++) {
    const int64_t lo = c * LW_CHUNK;
    const int64_t n = j->count - lo < LW_CHUNK ? j->count - lo : LW_CHUNK;
    if (j->src16)
      adnn_cpu_lowp_to_f32(j->isa, j->t, j->src16 + lo, j->dst32 + lo, (size_t)n);
    else
      adnn_cpu_lowp_from_f32(j->isa, j->t, j->src32 + lo, j->dst16 + lo, (size_t)n);
  }
}

static void lw_run_job(const lw_job *j) {
  const int64_t chunks = (j->count + LW_CHUNK - 1) / LW_CHUNK;
  if (chunks <= 1 || adnn_cpu_parallel_in_task())
    lw_job_task((void *)j, 0, chunks, 0);
  else
    adnn_cpu_parallel_for(chunks, 1, lw_job_task, (void *)j);
}

void adnn_cpu_lowp_to_f32_parallel(int isa, adnn_dtype t, const uint16_t *src, float *dst,
                                   int64_t n) {
  const lw_job j = {isa, t, n, src, dst, NULL, NULL};
  lw_run_job(&j);
}

void adnn_cpu_lowp_from_f32_parallel(int isa, adnn_dtype t, const float *src, uint16_t *dst,
                                     int64_t n) {
  const lw_job j = {isa, t, n, NULL, NULL, src, dst};
  lw_run_job(&j);
}

/* ------------------------------------------------------------------------ */
/* The widening adapter                                                      */
/* ------------------------------------------------------------------------ */

/* The most execute inputs or outputs of a widened op (attention backward
 * has eight inputs). */
#define LW_MAX_TENSORS 8
/* The largest widened problem and inner state this state holds (checked:
 * statically for the problems, in supports for the states). */
#define LW_MAX_PROBLEM 2048
#define LW_MAX_STATE 4096

/* Where an op's tensors are described, filled by its io function on a copy
 * of its problem (which it may also adjust for the F32 run). */
typedef struct lw_io {
  int n_in, n_out, n_extra;
  adnn_tensor_desc *in[LW_MAX_TENSORS], *out[LW_MAX_TENSORS];
  /* Descriptors no buffer of this call has (conv2d backward data's bias):
   * converted to F32 with the others, so the F32 problem is consistent. */
  adnn_tensor_desc *extra[2];
  int outputs_read; /* 1 when the op reads its outputs' values (beta != 0) */
} lw_io;

typedef struct lw_op {
  size_t problem_size;
  void (*io)(void *problem, lw_io *io);
  const adnn_cpu_impl *const *impls; /* the op's list, in the plugin's order */
  size_t impl_count;
  const adnn_cpu_impl *self;
} lw_op;

/* One widened tensor: its 16-bit dtype (0 when it passes through), the
 * elements its span covers and its F32 copy's offset in the workspace. */
typedef struct lw_tensor {
  adnn_dtype t;
  int64_t span;
  size_t off;
} lw_tensor;

typedef struct lw_state {
  const adnn_cpu_impl *impl; /* the F32 implementation */
  int isa;
  int n_in, n_out, outputs_read;
  size_t inner_ws; /* its workspace, at offset 0 */
  lw_tensor in[LW_MAX_TENSORS], out[LW_MAX_TENSORS];
  /* The widened problem and the inner implementation's state: plan states
   * come from calloc, so natural (max_align_t) alignment. */
  union {
    max_align_t align;
    unsigned char bytes[LW_MAX_PROBLEM];
  } problem;
  union {
    max_align_t align;
    unsigned char bytes[LW_MAX_STATE];
  } inner_state;
} lw_state;

static int is_16bit(adnn_dtype t) { return t == ADNN_DTYPE_F16 || t == ADNN_DTYPE_BF16; }

static int64_t span_of(const adnn_tensor_desc *t) {
  int64_t s = 1;
  for (int i = 0; i < t->rank; i++) s += (t->dims[i] - 1) * t->strides[i];
  return s;
}

static int64_t count_of(const adnn_tensor_desc *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->dims[i];
  return n;
}

static int lw_no(char *why, size_t why_size, const char *reason) {
  if (why && why_size) snprintf(why, why_size, "%s", reason);
  return 0;
}

/* Copies the problem into `copy`, records its 16-bit tensors in in[] and
 * out[], sets their descriptors to F32 and returns the F32 implementation
 * to run it (the first of the op's list, skipping lowp and the reference
 * loops, that supports it and is preferred, else the first that supports
 * it), or NULL with the reason. */
static const adnn_cpu_impl *lw_prepare(const lw_op *op, const void *problem,
                                       const adnn_cpu_env *env, void *copy, lw_tensor *in,
                                       lw_tensor *out, lw_io *io, char *why, size_t why_size) {
  memcpy(copy, problem, op->problem_size);
  memset(io, 0, sizeof *io);
  op->io(copy, io);
  int wide = 0;
  /* Record every dtype before changing any: an input and an output may
   * share a descriptor (dx has x's). */
  for (int i = 0; i < io->n_in; i++) {
    const adnn_tensor_desc *d = io->in[i];
    memset(&in[i], 0, sizeof in[i]);
    if (d && is_16bit(d->dtype)) in[i].t = d->dtype, in[i].span = span_of(d), wide = 1;
  }
  for (int i = 0; i < io->n_out; i++) {
    const adnn_tensor_desc *d = io->out[i];
    memset(&out[i], 0, sizeof out[i]);
    if (d && is_16bit(d->dtype)) {
      out[i].t = d->dtype, out[i].span = span_of(d), wide = 1;
      if (out[i].span != count_of(d)) {
        lw_no(why, why_size, "needs dense F16/BF16 outputs");
        return NULL;
      }
    }
  }
  if (!wide) {
    lw_no(why, why_size, "needs F16 or BF16 tensors");
    return NULL;
  }
  for (int i = 0; i < io->n_in; i++)
    if (io->in[i] && is_16bit(io->in[i]->dtype)) io->in[i]->dtype = ADNN_DTYPE_F32;
  for (int i = 0; i < io->n_out; i++)
    if (io->out[i] && is_16bit(io->out[i]->dtype)) io->out[i]->dtype = ADNN_DTYPE_F32;
  for (int i = 0; i < io->n_extra; i++)
    if (is_16bit(io->extra[i]->dtype)) io->extra[i]->dtype = ADNN_DTYPE_F32;
  const adnn_cpu_impl *fallback = NULL;
  for (size_t i = 0; i < op->impl_count; i++) {
    const adnn_cpu_impl *impl = op->impls[i];
    if (impl == op->self || (impl->flags & ADNN_CPU_IMPL_SLOW) ||
        !(impl->dtypes & ADNN_OP_DTYPE(ADNN_DTYPE_F32)) || impl->state_size > LW_MAX_STATE)
      continue;
    char inner_why[8];
    if (impl->supports && !impl->supports(copy, env, inner_why, sizeof inner_why)) continue;
    if (impl->preferred == NULL || impl->preferred(copy, env)) return impl;
    if (fallback == NULL) fallback = impl;
  }
  if (fallback == NULL) lw_no(why, why_size, "no F32 implementation runs the widened problem");
  return fallback;
}

static int lw_supports(const lw_op *op, const void *problem, const adnn_cpu_env *env, char *why,
                       size_t why_size) {
  union {
    max_align_t align;
    unsigned char bytes[LW_MAX_PROBLEM];
  } copy;
  lw_tensor in[LW_MAX_TENSORS], out[LW_MAX_TENSORS];
  lw_io io;
  return lw_prepare(op, problem, env, copy.bytes, in, out, &io, why, why_size) != NULL;
}

static size_t align64(size_t v) { return (v + 63) & ~(size_t)63; }

static void lw_reshape(const lw_op *op, const void *problem, const adnn_cpu_env *env,
                       void *state, size_t *workspace_bytes) {
  lw_state *s = state;
  lw_io io;
  s->impl = lw_prepare(op, problem, env, s->problem.bytes, s->in, s->out, &io, NULL, 0);
  s->isa = env->isa;
  s->n_in = io.n_in, s->n_out = io.n_out, s->outputs_read = io.outputs_read;
  s->inner_ws = 0;
  memset(s->inner_state.bytes, 0, sizeof s->inner_state.bytes);
  if (s->impl->reshape)
    s->impl->reshape(s->problem.bytes, env, s->impl->state_size ? s->inner_state.bytes : NULL,
                     &s->inner_ws);
  size_t off = align64(s->inner_ws);
  for (int i = 0; i < s->n_in; i++)
    if (s->in[i].t) s->in[i].off = off, off = align64(off + (size_t)s->in[i].span * sizeof(float));
  for (int i = 0; i < s->n_out; i++)
    if (s->out[i].t)
      s->out[i].off = off, off = align64(off + (size_t)s->out[i].span * sizeof(float));
  *workspace_bytes = off;
}

static void lw_run(const void *problem, const void *state, const void *const *inputs,
                   void *const *outputs, void *workspace) {
  (void)problem; /* the widened copy in the state is what runs */
  const lw_state *s = state;
  unsigned char *ws = workspace;
  const void *in[LW_MAX_TENSORS];
  void *out[LW_MAX_TENSORS];
  for (int i = 0; i < s->n_in; i++) {
    const lw_tensor *t = &s->in[i];
    if (!t->t) {
      in[i] = inputs[i];
      continue;
    }
    float *f = (float *)(ws + t->off);
    adnn_cpu_lowp_to_f32_parallel(s->isa, t->t, inputs[i], f, t->span);
    in[i] = f;
  }
  for (int i = 0; i < s->n_out; i++) {
    const lw_tensor *t = &s->out[i];
    if (!t->t) {
      out[i] = outputs[i];
      continue;
    }
    float *f = (float *)(ws + t->off);
    if (s->outputs_read) adnn_cpu_lowp_to_f32_parallel(s->isa, t->t, outputs[i], f, t->span);
    out[i] = f;
  }
  s->impl->run(s->problem.bytes, s->impl->state_size ? s->inner_state.bytes : NULL, in, out,
               s->inner_ws ? ws : NULL);
  for (int i = 0; i < s->n_out; i++) {
    const lw_tensor *t = &s->out[i];
    if (t->t)
      adnn_cpu_lowp_from_f32_parallel(s->isa, t->t, (const float *)(ws + t->off), outputs[i],
                                      t->span);
  }
}

/* ------------------------------------------------------------------------ */
/* Where each op's tensors are described                                     */
/* ------------------------------------------------------------------------ */

/* Inputs {dy, w}; outputs {dx}: dy has fwd.y's layout, dx fwd.x's. */
static void conv2d_backward_data_io(void *problem, lw_io *io) {
  adnn_plugin_conv2d_backward_data *p = problem;
  p->fwd.weights_prepacked = 0;
  io->n_in = 2, io->in[0] = &p->fwd.y, io->in[1] = &p->fwd.w;
  io->n_out = 1, io->out[0] = &p->fwd.x;
  io->n_extra = 1, io->extra[0] = &p->fwd.bias;
  io->outputs_read = p->beta != 0.0;
}

/* Inputs {x, dy}; outputs {dw[, db]}. */
static void conv2d_backward_weights_io(void *problem, lw_io *io) {
  adnn_plugin_conv2d_backward_weights *p = problem;
  p->fwd.weights_prepacked = 0;
  io->n_in = 2, io->in[0] = &p->fwd.x, io->in[1] = &p->fwd.y;
  io->n_out = 1, io->out[0] = &p->fwd.w;
  if (p->fwd.has_bias)
    io->out[io->n_out++] = &p->fwd.bias;
  else
    io->n_extra = 1, io->extra[0] = &p->fwd.bias;
  io->outputs_read = p->beta != 0.0;
}

/* Inputs {x, scale, shift}; outputs {y, saved_mean, saved_inv_std,
 * running_mean, running_var}: the vectors are F32 (ADNN_OP_PARAM_DTYPE). */
static void batchnorm_training_io(void *problem, lw_io *io) {
  adnn_plugin_batchnorm_training *p = problem;
  io->n_in = 3, io->in[0] = &p->fwd.x;
  io->n_out = 5, io->out[0] = &p->fwd.y;
}

/* Inputs {x, dy, scale, saved_mean, saved_inv_std}; outputs {dx, dscale,
 * dshift}: dy has fwd.y's layout, dx fwd.x's; the vectors are F32. */
static void batchnorm_backward_io(void *problem, lw_io *io) {
  adnn_plugin_batchnorm_backward *p = problem;
  io->n_in = 5, io->in[0] = &p->fwd.x, io->in[1] = &p->fwd.y;
  io->n_out = 3, io->out[0] = &p->fwd.x;
}

/* Inputs {x, dy[, gain]}; outputs {dx[, dgain][, dbias]}: the vectors F32. */
static void norm_backward_io(void *problem, lw_io *io) {
  adnn_plugin_norm_backward *p = problem;
  io->n_in = 2 + (p->fwd.has_gain != 0), io->in[0] = &p->fwd.x, io->in[1] = &p->fwd.y;
  io->n_out = 1 + (p->fwd.has_gain != 0) + (p->fwd.has_bias != 0), io->out[0] = &p->fwd.x;
}

/* Inputs {logits, labels}; outputs {loss}. */
static void softmax_cross_entropy_io(void *problem, lw_io *io) {
  adnn_plugin_softmax_cross_entropy *p = problem;
  io->n_in = 2, io->in[0] = &p->logits;
  io->n_out = 1, io->out[0] = &p->loss;
}

/* Inputs {logits, labels, dloss}; outputs {dlogits}: dloss has the loss's
 * layout, dlogits the logits'. */
static void softmax_cross_entropy_backward_io(void *problem, lw_io *io) {
  adnn_plugin_softmax_cross_entropy_backward *p = problem;
  io->n_in = 3, io->in[0] = &p->fwd.logits, io->in[2] = &p->fwd.loss;
  io->n_out = 1, io->out[0] = &p->fwd.logits;
}

/* Inputs {q, k, v[, bias][, key_lengths]}; outputs {o[, lse]}: key lengths
 * are integers and lse F32 (ADNN_OP_PARAM_DTYPE), so they pass through. */
static void attention_io(void *problem, lw_io *io) {
  adnn_plugin_attention *p = problem;
  io->n_in = 3, io->in[0] = &p->q, io->in[1] = &p->k, io->in[2] = &p->v;
  if (p->has_bias) io->in[io->n_in++] = &p->bias;
  if (p->has_key_lengths) io->in[io->n_in++] = &p->key_lengths;
  io->n_out = 1, io->out[0] = &p->o;
  if (p->has_lse) io->out[io->n_out++] = &p->lse;
  if (!p->has_bias) io->n_extra = 1, io->extra[0] = &p->bias;
}

/* Inputs {q, k, v, o, do, lse[, bias][, key_lengths]}; outputs {dq, dk, dv}:
 * do has o's layout, dq q's, dk k's and dv v's. */
static void attention_backward_io(void *problem, lw_io *io) {
  adnn_plugin_attention *p = &((adnn_plugin_attention_backward *)problem)->fwd;
  io->n_in = 6, io->in[0] = &p->q, io->in[1] = &p->k, io->in[2] = &p->v;
  io->in[3] = io->in[4] = &p->o, io->in[5] = &p->lse;
  if (p->has_bias) io->in[io->n_in++] = &p->bias;
  if (p->has_key_lengths) io->in[io->n_in++] = &p->key_lengths;
  io->n_out = 3, io->out[0] = &p->q, io->out[1] = &p->k, io->out[2] = &p->v;
  if (!p->has_bias) io->n_extra = 1, io->extra[0] = &p->bias;
}

/* adnn_cpu_<op>_lowp for each op above: its F32 candidates are its own list
 * (IMPLS, impl_list.h), in the plugin's order. */
#define LW_ADDRESS_(op, impl) &adnn_cpu_##op##_##impl,
#define LW_IMPL_(op, IMPLS)                                                                    \
  _Static_assert(sizeof(adnn_plugin_##op) <= LW_MAX_PROBLEM, #op "'s problem is too large");    \
  static const adnn_cpu_impl *const op##_lw_impls[] = {IMPLS(LW_ADDRESS_)};                    \
  static const lw_op op##_lw = {sizeof(adnn_plugin_##op), op##_io, op##_lw_impls,              \
                                sizeof op##_lw_impls / sizeof op##_lw_impls[0],                \
                                &adnn_cpu_##op##_lowp};                                        \
  static int op##_lw_supports(const void *problem, const adnn_cpu_env *env, char *why,         \
                              size_t why_size) {                                               \
    return lw_supports(&op##_lw, problem, env, why, why_size);                                 \
  }                                                                                            \
  static void op##_lw_reshape(const void *problem, const adnn_cpu_env *env, void *state,       \
                              size_t *workspace_bytes) {                                       \
    lw_reshape(&op##_lw, problem, env, state, workspace_bytes);                                \
  }                                                                                            \
  const adnn_cpu_impl adnn_cpu_##op##_lowp = {                                                 \
      .name = "lowp",                                                                          \
      .flags = ADNN_CPU_IMPL_DETERMINISTIC,                                                    \
      .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F16) | ADNN_OP_DTYPE(ADNN_DTYPE_BF16),                \
      .supports = op##_lw_supports,                                                            \
      .state_size = sizeof(lw_state),                                                          \
      .reshape = op##_lw_reshape,                                                              \
      .run = lw_run,                                                                           \
  };

LW_IMPL_(conv2d_backward_data, ADNN_CPU_CONV2D_BACKWARD_DATA_IMPLS)
LW_IMPL_(conv2d_backward_weights, ADNN_CPU_CONV2D_BACKWARD_WEIGHTS_IMPLS)
LW_IMPL_(batchnorm_training, ADNN_CPU_BATCHNORM_TRAINING_IMPLS)
LW_IMPL_(batchnorm_backward, ADNN_CPU_BATCHNORM_BACKWARD_IMPLS)
LW_IMPL_(norm_backward, ADNN_CPU_NORM_BACKWARD_IMPLS)
LW_IMPL_(softmax_cross_entropy, ADNN_CPU_SOFTMAX_CROSS_ENTROPY_IMPLS)
LW_IMPL_(softmax_cross_entropy_backward, ADNN_CPU_SOFTMAX_CROSS_ENTROPY_BACKWARD_IMPLS)
LW_IMPL_(attention, ADNN_CPU_ATTENTION_IMPLS)
LW_IMPL_(attention_backward, ADNN_CPU_ATTENTION_BACKWARD_IMPLS)
