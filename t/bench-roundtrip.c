/*
 * The adnn-bench problem parser (tools/bench_problem.c) as a property: for
 * thousands of seeded random problems of every kind, the canonical string
 * parses back to the same problem, field by field (doubles bit for bit), and
 * printing that gives the same string again. Then a table of malformed
 * descriptors, each refused with a message, and random mutations of
 * canonical strings, each either refused with a message or accepted and
 * stable. The problems are built here from their own rules (output sizes
 * from the padding, broadcast shapes), not through the parser.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t/rng.h"
#include "t/tap.h"
#include "tools/bench_problem.h"

static int64_t pick(tap_rng *r, int64_t lo, int64_t hi) {
  return lo + (int64_t)(tap_rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* Mostly small sizes, sometimes one up to the parser's limit. */
static int64_t size_in(tap_rng *r, int64_t hi_small, int big) {
  return big ? pick(r, 1, BENCH_NUMBER_MAX) : pick(r, 1, hi_small);
}

static int64_t elements(int rank, const int64_t *d) {
  double c = 1;
  for (int i = 0; i < rank; i++) c *= (double)d[i];
  return c > (double)BENCH_ELEMENTS_MAX ? -1 : (int64_t)c;
}

/* A random finite double: a uniform value, a power of ten, or random bits
 * (subnormals and -0 included). */
static double any_double(tap_rng *r) {
  switch (tap_rng_next(r) % 4) {
    case 0: return tap_rng_uniform(r, -10, 10);
    case 1: return pow(10, (double)pick(r, -300, 300)) * (tap_rng_next(r) % 2 ? 1 : -1);
    case 2: return tap_rng_next(r) % 2 ? -0.0 : 4.9406564584124654e-324 * (double)pick(r, 1, 1000);
    default: {
      double v;
      do {
        uint64_t bits = tap_rng_next(r);
        memcpy(&v, &bits, sizeof v);
      } while (!isfinite(v));
      return v;
    }
  }
}

static void random_name(tap_rng *r, char *name) {
  int n = tap_rng_next(r) % 3 ? 0 : (int)pick(r, 1, BENCH_NAME_MAX - 1);
  for (int i = 0; i < n; i++) name[i] = (char)pick(r, 0x21, 0x7e); /* printable, no space */
  name[n] = 0;
}

static void random_dims(tap_rng *r, int *rank, int64_t *dims) {
  do {
    memset(dims, 0, BENCH_MAX_RANK * sizeof *dims);
    *rank = (int)pick(r, 1, BENCH_MAX_RANK);
    const int big = tap_rng_next(r) % 8 == 0;
    for (int i = 0; i < *rank; i++) dims[i] = size_in(r, 9, big && i == 0);
  } while (elements(*rank, dims) < 0);
}

static const adnn_activation_kind activations[] = {
#define KIND_(NAME, name, value, params, def) ADNN_ACTIVATION_##NAME,
    ADNN_ACTIVATION_LIST(KIND_)
#undef KIND_
};
static const int activation_params[] = {
#define PARAMS_(NAME, name, value, params, def) params,
    ADNN_ACTIVATION_LIST(PARAMS_)
#undef PARAMS_
};
static const adnn_binary_op binary_ops[] = {
#define OP_(NAME, name, value, def) ADNN_BINARY_##NAME,
    ADNN_BINARY_LIST(OP_)
#undef OP_
};
#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* One spatial dimension of a convolution: o from i, k, s, d and the two
 * paddings; 0 when the kernel does not fit. */
static int64_t conv_out(int64_t i, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe) {
  const int64_t num = i + pb + pe - ((k - 1) * d + 1);
  return num < 0 ? 0 : num / s + 1;
}

/* PyTorch's pooling output (ceil mode drops a window that starts in the
 * padding). */
static int64_t pool_out(int64_t i, int64_t k, int64_t s, int64_t p, int ceil_mode) {
  const int64_t num = i + 2 * p - k;
  if (num < 0) return 0;
  int64_t o = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
  if (ceil_mode && (o - 1) * s >= i + p) o--;
  return o;
}

/* A random valid problem of kind op, with the fields the parser fills for
 * that kind (and its fixed values for the others: pool's g 1, oc = ic,
 * dilation 1; bnorm's oc = ic, eps 1e-5). */
static void random_problem(tap_rng *r, int op, bench_problem *p) {
  memset(p, 0, sizeof *p);
  p->op = op;
  random_name(r, p->name);
  const int big = tap_rng_next(r) % 6 == 0;
  switch (op) {
    case BENCH_OP_CONV:
      for (;;) {
        p->g = tap_rng_next(r) % 3 ? 1 : pick(r, 1, 4);
        p->mb = pick(r, 1, 8);
        p->ic = p->g * pick(r, 1, 4);
        p->oc = p->g * pick(r, 1, 4);
        p->ih = size_in(r, 40, big);
        p->iw = tap_rng_next(r) % 2 ? p->ih : size_in(r, 40, 0);
        p->kh = big && tap_rng_next(r) % 2 ? pick(r, 1, p->ih) : pick(r, 1, 7);
        p->kw = tap_rng_next(r) % 2 ? p->kh : pick(r, 1, 7);
        p->sh = big ? size_in(r, 4, 1) : pick(r, 1, 4);
        p->sw = tap_rng_next(r) % 2 ? p->sh : pick(r, 1, 4);
        p->dh = pick(r, 1, 3);
        p->dw = tap_rng_next(r) % 2 ? p->dh : pick(r, 1, 3);
        p->pt = tap_rng_next(r) % 3 ? 0 : pick(r, 0, p->kh);
        p->pl = tap_rng_next(r) % 2 ? p->pt : pick(r, 0, p->kw);
        /* the end padding: symmetric, or anything up to a stride past the kernel
         * (so also paddings that oh alone does not imply) */
        p->pb = tap_rng_next(r) % 2 ? p->pt : pick(r, 0, p->kh + p->sh);
        p->pr = tap_rng_next(r) % 2 ? p->pl : pick(r, 0, p->kw + p->sw);
        if (p->pb > BENCH_NUMBER_MAX) p->pb = BENCH_NUMBER_MAX;
        if (p->pr > BENCH_NUMBER_MAX) p->pr = BENCH_NUMBER_MAX;
        /* the direction: forward most of the time, each backward one too,
         * those with a beta (accumulation) now and then */
        static const int conv_dirs[] = {BENCH_DIR_FWD_D, BENCH_DIR_BWD_D, BENCH_DIR_BWD_W,
                                        BENCH_DIR_BWD_WB};
        p->dir = tap_rng_next(r) % 2 ? BENCH_DIR_FWD_D : conv_dirs[pick(r, 0, 3)];
        p->beta = 0.0;
        if (p->dir != BENCH_DIR_FWD_D && tap_rng_next(r) % 2)
          p->beta = tap_rng_next(r) % 2 ? 1.0 : any_double(r);
        p->oh = conv_out(p->ih, p->kh, p->sh, p->dh, p->pt, p->pb);
        p->ow = conv_out(p->iw, p->kw, p->sw, p->dw, p->pl, p->pr);
        const int64_t x[4] = {p->mb, p->ic, p->ih, p->iw}, y[4] = {p->mb, p->oc, p->oh, p->ow},
                      w[4] = {p->oc, p->ic / p->g, p->kh, p->kw};
        if (p->oh >= 1 && p->ow >= 1 && p->oh <= BENCH_NUMBER_MAX && elements(4, x) >= 0 &&
            elements(4, y) >= 0 && elements(4, w) >= 0 &&
            (p->kh - 1) * p->dh + 1 <= BENCH_NUMBER_MAX)
          return;
      }
    case BENCH_OP_POOL:
      for (;;) {
        p->pool_kind = (adnn_pool_kind)pick(r, 0, 2);
        p->g = 1;
        p->dh = p->dw = 1;
        p->mb = pick(r, 1, 8);
        p->ic = p->oc = pick(r, 1, 16);
        p->ih = size_in(r, 40, big);
        p->iw = tap_rng_next(r) % 2 ? p->ih : size_in(r, 40, 0);
        p->kh = pick(r, 1, 7);
        p->kw = tap_rng_next(r) % 2 ? p->kh : pick(r, 1, 7);
        p->sh = pick(r, 1, 4);
        p->sw = tap_rng_next(r) % 2 ? p->sh : pick(r, 1, 4);
        p->pt = p->pb = tap_rng_next(r) % 2 ? 0 : pick(r, 0, p->kh / 2);
        p->pl = p->pr = tap_rng_next(r) % 2 ? p->pt : pick(r, 0, p->kw / 2);
        if (2 * p->pl > p->kw) p->pl = p->pr = 0;
        p->ceil_mode = (int)(tap_rng_next(r) % 2);
        p->oh = pool_out(p->ih, p->kh, p->sh, p->pt, p->ceil_mode);
        p->ow = pool_out(p->iw, p->kw, p->sw, p->pl, p->ceil_mode);
        const int64_t x[4] = {p->mb, p->ic, p->ih, p->iw};
        /* the forward op, or its backward pass (dir=BWD_D) */
        p->dir = tap_rng_next(r) % 2 ? BENCH_DIR_FWD_D : BENCH_DIR_BWD_D;
        if (p->oh >= 1 && p->ow >= 1 && elements(4, x) >= 0) return;
      }
    case BENCH_OP_ACT: {
      const int k = (int)pick(r, 0, COUNT_OF(activations) - 1);
      p->act_kind = activations[k];
      p->alpha = p->act_kind == ADNN_ACTIVATION_LEAKY_RELU ? 0.01
                 : p->act_kind == ADNN_ACTIVATION_ELU      ? 1.0
                                                           : 0.0;
      p->beta = p->act_kind == ADNN_ACTIVATION_CLAMP ? 6.0 : 0.0;
      if (tap_rng_next(r) % 2) p->alpha = any_double(r);
      if (tap_rng_next(r) % 2) p->beta = any_double(r);
      random_dims(r, &p->rank, p->dims);
      p->dir = tap_rng_next(r) % 2 ? BENCH_DIR_FWD_D : BENCH_DIR_BWD_D;
      return;
    }
    case BENCH_OP_SOFTMAX:
      random_dims(r, &p->rank, p->dims);
      p->axis = (int)pick(r, -p->rank, p->rank - 1);
      p->log_softmax = (int)(tap_rng_next(r) % 2);
      p->dir = tap_rng_next(r) % 2 ? BENCH_DIR_FWD_D : BENCH_DIR_BWD_D;
      return;
    case BENCH_OP_LNORM:
    case BENCH_OP_RMSNORM:
      random_dims(r, &p->rank, p->dims);
      p->norm_dims = (int)pick(r, 1, p->rank);
      p->has_gain = (int)(tap_rng_next(r) % 2);
      p->has_bias = (int)(tap_rng_next(r) % 2);
      p->eps = 1e-5;
      if (tap_rng_next(r) % 2) {
        do p->eps = fabs(any_double(r));
        while (!(p->eps > 0));
      }
      p->dir = tap_rng_next(r) % 3 == 0 ? BENCH_DIR_BWD_DW : BENCH_DIR_FWD_D;
      return;
    case BENCH_OP_BNORM: {
      p->mb = size_in(r, 8, big);
      p->ic = p->oc = pick(r, 1, 64);
      if (tap_rng_next(r) % 3) {
        p->ih = pick(r, 1, 30);
        p->iw = tap_rng_next(r) % 2 ? p->ih : pick(r, 1, 30);
      }
      p->eps = 1e-5;
      p->momentum = 0.1;
      /* Inference (FWD_I) is the default. Training (dir=FWD_D, with a
       * momentum) and backward (BWD_DW) take no activation and need 2
       * elements per channel. */
      static const int bnorm_dirs[] = {BENCH_DIR_FWD_I, BENCH_DIR_FWD_D, BENCH_DIR_BWD_DW};
      const int dir = bnorm_dirs[pick(r, 0, 2)];
      p->dir = BENCH_DIR_FWD_I;
      if (dir != BENCH_DIR_FWD_I && p->mb * (p->ih ? p->ih * p->iw : 1) >= 2) {
        p->dir = dir;
        if (dir == BENCH_DIR_FWD_D && tap_rng_next(r) % 2)
          p->momentum = (double)(tap_rng_next(r) % 1001) / 1000.0;
        if (tap_rng_next(r) % 2) {
          do p->eps = fabs(any_double(r));
          while (!(p->eps > 0));
        }
        return;
      }
      int k;
      do k = (int)pick(r, 0, COUNT_OF(activations) - 1);
      while (activation_params[k] != 0);
      p->act_kind = activations[k];
      return;
    }
    case BENCH_OP_BINARY: {
      int64_t y[BENCH_MAX_RANK];
      int ry;
      random_dims(r, &ry, y);
      p->binary_op = binary_ops[pick(r, 0, COUNT_OF(binary_ops) - 1)];
      p->rank = (int)pick(r, 1, ry);
      p->rank_b = (int)pick(r, 1, ry);
      for (int i = 0; i < p->rank; i++)
        p->dims[i] = tap_rng_next(r) % 3 ? y[ry - p->rank + i] : 1;
      for (int i = 0; i < p->rank_b; i++)
        p->dims_b[i] = tap_rng_next(r) % 3 ? y[ry - p->rank_b + i] : 1;
      return;
    }
    case BENCH_OP_REDUCE:
      random_dims(r, &p->rank, p->dims);
      p->reduce_kind = (adnn_reduce_kind)pick(r, ADNN_REDUCE_SUM, ADNN_REDUCE_MIN);
      while (p->reduce_axes == 0)
        p->reduce_axes = (uint32_t)(tap_rng_next(r) & ((1u << p->rank) - 1));
      p->keep_dims = (int)(tap_rng_next(r) % 2);
      return;
    case BENCH_OP_GEMM:
      do {
        p->m = size_in(r, 300, big && tap_rng_next(r) % 3 == 0);
        p->n = size_in(r, 300, big && tap_rng_next(r) % 3 == 0);
        p->k = size_in(r, 300, big && tap_rng_next(r) % 3 == 0);
      } while ((double)p->m * p->k > (double)BENCH_ELEMENTS_MAX ||
               (double)p->k * p->n > (double)BENCH_ELEMENTS_MAX ||
               (double)p->m * p->n > (double)BENCH_ELEMENTS_MAX);
      p->ta = (int)(tap_rng_next(r) % 2);
      p->tb = (int)(tap_rng_next(r) % 2);
      return;
    case BENCH_OP_REORDER: {
      random_dims(r, &p->rank, p->dims);
      if (p->rank == 4) {
        p->rx_layout = (int)(tap_rng_next(r) % 2);
        p->ry_layout = (int)(tap_rng_next(r) % 2);
      }
      p->rx_dtype = (int)pick(r, 1, 7);
      p->ry_dtype = (int)pick(r, 1, 7);
      break;
    }
    case BENCH_OP_QUANTIZE:
    case BENCH_OP_DEQUANTIZE: {
      /* f32 <-> i8 (5) or u8 (7); per channel along a random axis, or a
       * scale that is finite and > 0 in F32 (any double that rounds there,
       * so the printed form must keep all of its digits) and a zero point
       * in the 8-bit type's range. */
      random_dims(r, &p->rank, p->dims);
      const int q8 = tap_rng_next(r) % 2 ? 5 : 7;
      p->rx_dtype = op == BENCH_OP_QUANTIZE ? 1 : q8;
      p->ry_dtype = op == BENCH_OP_QUANTIZE ? q8 : 1;
      if (tap_rng_next(r) % 3 == 0) {
        p->q_axis = (int)pick(r, 0, p->rank - 1);
        p->q_scale = 1.0;
      } else {
        p->q_axis = -1;
        do p->q_scale = fabs(any_double(r));
        while (!((float)p->q_scale > 0.0f) || !isfinite((float)p->q_scale));
        p->q_zero_point = q8 == 7 ? pick(r, 0, 255) : pick(r, -128, 127);
      }
      break;
    }
    case BENCH_OP_MATMUL: {
      p->batch_rank = (int)pick(r, 0, 2);
      for (int i = 0; i < p->batch_rank; i++) p->batch[i] = size_in(r, 9, 0);
      p->m = size_in(r, 300, 0);
      p->n = size_in(r, 300, 0);
      p->k = size_in(r, 300, 0);
      p->b_batched = p->batch_rank > 0 && tap_rng_next(r) % 2;
      p->ta = (int)(tap_rng_next(r) % 2);
      p->tb = (int)(tap_rng_next(r) % 2);
      p->mm_alpha = tap_rng_next(r) % 2 ? 1.0 : any_double(r);
      p->has_bias = (int)(tap_rng_next(r) % 2);
      p->has_residual = (int)(tap_rng_next(r) % 2);
      p->res_inplace = p->has_residual && tap_rng_next(r) % 2;
      p->res_scale = p->has_residual && tap_rng_next(r) % 2 ? any_double(r) : 1.0;
      if (tap_rng_next(r) % 3) {
        p->act_kind = activations[pick(r, 0, COUNT_OF(activations) - 1)];
        p->alpha = p->act_kind == ADNN_ACTIVATION_LEAKY_RELU ? 0.01
                   : p->act_kind == ADNN_ACTIVATION_ELU      ? 1.0
                                                             : 0.0;
        p->beta = p->act_kind == ADNN_ACTIVATION_CLAMP ? 6.0 : 0.0;
        if (p->act_kind != ADNN_ACTIVATION_IDENTITY && tap_rng_next(r) % 2) p->alpha = any_double(r);
        if (p->act_kind != ADNN_ACTIVATION_IDENTITY && tap_rng_next(r) % 2) p->beta = any_double(r);
      }
      return;
    }
    case BENCH_OP_XENT:
      p->rank = 2;
      p->dims[0] = size_in(r, 300, big && tap_rng_next(r) % 2);
      p->dims[1] = size_in(r, 300, big && tap_rng_next(r) % 2);
      if ((double)p->dims[0] * (double)p->dims[1] > (double)BENCH_ELEMENTS_MAX) p->dims[1] = 7;
      p->loss_reduction = (adnn_loss_reduction)pick(r, ADNN_LOSS_REDUCTION_MEAN,
                                                    ADNN_LOSS_REDUCTION_NONE);
      p->ignore_index = tap_rng_next(r) % 2 ? -100 : pick(r, -BENCH_NUMBER_MAX, BENCH_NUMBER_MAX);
      p->dir = tap_rng_next(r) % 2 ? BENCH_DIR_BWD_D : BENCH_DIR_FWD_D;
      return;
    case BENCH_OP_LSCALE:
      random_dims(r, &p->rank, p->dims); /* 1 to 8 tensors: BENCH_OPTIM_MAX_TENSORS */
      p->ls_kind = (adnn_loss_scale_kind)pick(r, ADNN_LOSS_SCALE_SCALE, ADNN_LOSS_SCALE_UNSCALE);
      return;
    case BENCH_OP_OPTIM: {
      random_dims(r, &p->rank, p->dims); /* 1 to 8 tensors: BENCH_OPTIM_MAX_TENSORS */
      p->opt_kind = (adnn_optimizer_kind)pick(r, ADNN_OPTIMIZER_SGD, ADNN_OPTIMIZER_ADAMW);
      p->lr = tap_rng_next(r) % 2 ? 1e-3 : fabs(any_double(r));
      p->beta1 = 0.9;
      p->beta2 = 0.999;
      p->opt_eps = 1e-8;
      if (tap_rng_next(r) % 2) p->weight_decay = fabs(any_double(r));
      if (p->opt_kind == ADNN_OPTIMIZER_SGD) {
        if (tap_rng_next(r) % 2) p->sgd_momentum = fabs(any_double(r));
        if (p->sgd_momentum > 0 && tap_rng_next(r) % 2) p->nesterov = 1;
        else if (tap_rng_next(r) % 2) p->dampening = fabs(any_double(r));
      } else {
        if (tap_rng_next(r) % 2) p->beta1 = (double)(tap_rng_next(r) % 1000) / 1000.0;
        if (tap_rng_next(r) % 2) p->beta2 = (double)(tap_rng_next(r) % 1000) / 1000.0;
        if (tap_rng_next(r) % 2) {
          do p->opt_eps = fabs(any_double(r));
          while (!(p->opt_eps > 0));
        }
      }
      return;
    }
    case BENCH_OP_ATTENTION: {
      /* Sizes small or (sometimes) up to the limits with every tensor
       * within BENCH_ELEMENTS_MAX; H a multiple of Hkv; a bias of rank 0..4
       * whose dims are 1 or the full [B, H, Sq, Skv] size. */
      do {
        p->att_b = size_in(r, 4, big && tap_rng_next(r) % 4 == 0);
        p->att_hkv = size_in(r, 4, big && tap_rng_next(r) % 4 == 0);
        p->att_h = p->att_hkv * pick(r, 1, 4);
        p->att_sq = size_in(r, 300, big && tap_rng_next(r) % 2);
        p->att_skv = tap_rng_next(r) % 2 ? p->att_sq : size_in(r, 300, big && tap_rng_next(r) % 2);
        p->att_d = size_in(r, 128, big && tap_rng_next(r) % 4 == 0);
        p->att_dv = tap_rng_next(r) % 2 ? p->att_d : size_in(r, 128, 0);
      } while (p->att_h > BENCH_NUMBER_MAX ||
               (double)p->att_b * p->att_h * p->att_sq * (p->att_d > p->att_dv ? p->att_d : p->att_dv) >
                   (double)BENCH_ELEMENTS_MAX ||
               (double)p->att_b * p->att_hkv * p->att_skv *
                       (p->att_d > p->att_dv ? p->att_d : p->att_dv) > (double)BENCH_ELEMENTS_MAX);
      p->causal = (int)(tap_rng_next(r) % 2);
      p->key_lengths = (int)(tap_rng_next(r) % 2);
      p->no_lse = (int)(tap_rng_next(r) % 2);
      p->bshd = (int)(tap_rng_next(r) % 2);
      p->scale = tap_rng_next(r) % 2 ? 0.0 : fabs(any_double(r));
      p->bias_rank = (int)pick(r, 0, 4);
      const int64_t full[4] = {p->att_b, p->att_h, p->att_sq, p->att_skv};
      for (int i = 0; i < p->bias_rank; i++)
        p->bias_dims[i] = tap_rng_next(r) % 2 ? full[4 - p->bias_rank + i] : 1;
      /* The bias is a tensor too: within BENCH_ELEMENTS_MAX. */
      for (int i = 0; i < p->bias_rank && elements(p->bias_rank, p->bias_dims) < 0; i++)
        p->bias_dims[i] = 1;
      p->dir = tap_rng_next(r) % 2 ? BENCH_DIR_BWD_D : BENCH_DIR_FWD_D;
      return;
    }
  }
}

/* Field-by-field comparison; the first difference goes to why. */
static int same_problem(const bench_problem *a, const bench_problem *b, char *why, size_t len) {
#define INT_FIELD(f)                                                                          \
  if (a->f != b->f) {                                                                         \
    snprintf(why, len, #f ": %lld, parsed back as %lld", (long long)a->f, (long long)b->f);   \
    return 0;                                                                                 \
  }
#define DOUBLE_FIELD(f)                                                                       \
  if (memcmp(&a->f, &b->f, sizeof a->f)) {                                                    \
    snprintf(why, len, #f ": %.17g, parsed back as %.17g", a->f, b->f);                       \
    return 0;                                                                                 \
  }
  INT_FIELD(op) INT_FIELD(g) INT_FIELD(mb) INT_FIELD(ic) INT_FIELD(ih) INT_FIELD(iw)
  INT_FIELD(oc) INT_FIELD(oh) INT_FIELD(ow) INT_FIELD(kh) INT_FIELD(kw) INT_FIELD(sh)
  INT_FIELD(sw) INT_FIELD(pt) INT_FIELD(pb) INT_FIELD(pl) INT_FIELD(pr) INT_FIELD(dh)
  INT_FIELD(dw) INT_FIELD(dir) INT_FIELD(pool_kind) INT_FIELD(ceil_mode) INT_FIELD(act_kind)
  DOUBLE_FIELD(alpha) DOUBLE_FIELD(beta) INT_FIELD(rank) INT_FIELD(rank_b) INT_FIELD(axis)
  INT_FIELD(log_softmax) INT_FIELD(norm_dims) INT_FIELD(has_gain) INT_FIELD(has_bias)
  DOUBLE_FIELD(eps) INT_FIELD(binary_op) INT_FIELD(reduce_kind) INT_FIELD(reduce_axes)
  INT_FIELD(keep_dims) INT_FIELD(m) INT_FIELD(n) INT_FIELD(k) INT_FIELD(ta) INT_FIELD(tb)
  DOUBLE_FIELD(momentum) INT_FIELD(loss_reduction) INT_FIELD(ignore_index) INT_FIELD(opt_kind)
  INT_FIELD(ls_kind)
  DOUBLE_FIELD(lr) DOUBLE_FIELD(weight_decay) DOUBLE_FIELD(sgd_momentum) DOUBLE_FIELD(dampening)
  DOUBLE_FIELD(beta1) DOUBLE_FIELD(beta2) DOUBLE_FIELD(opt_eps) INT_FIELD(nesterov)
  INT_FIELD(batch_rank) INT_FIELD(batch[0]) INT_FIELD(batch[1]) INT_FIELD(b_batched)
  DOUBLE_FIELD(mm_alpha) INT_FIELD(has_residual) INT_FIELD(res_inplace) DOUBLE_FIELD(res_scale)
  INT_FIELD(att_b) INT_FIELD(att_h) INT_FIELD(att_hkv) INT_FIELD(att_sq) INT_FIELD(att_skv)
  INT_FIELD(att_d) INT_FIELD(att_dv) INT_FIELD(causal) INT_FIELD(key_lengths) INT_FIELD(no_lse)
  INT_FIELD(bshd) INT_FIELD(bias_rank) DOUBLE_FIELD(scale)
  INT_FIELD(rx_layout) INT_FIELD(ry_layout) INT_FIELD(rx_dtype) INT_FIELD(ry_dtype)
  INT_FIELD(q_axis) DOUBLE_FIELD(q_scale) INT_FIELD(q_zero_point)
  for (int i = 0; i < 4; i++) {
    INT_FIELD(bias_dims[i])
  }
  for (int i = 0; i < BENCH_MAX_RANK; i++) {
    INT_FIELD(dims[i]) INT_FIELD(dims_b[i])
  }
  if (strcmp(a->name, b->name)) {
    snprintf(why, len, "name: '%s', parsed back as '%s'", a->name, b->name);
    return 0;
  }
  return 1;
#undef INT_FIELD
#undef DOUBLE_FIELD
}

/* print, parse, compare, print again. Returns 1 when all hold. */
static int round_trip(const bench_problem *p, char *why, size_t len) {
  char text[BENCH_TEXT_MAX], again[BENCH_TEXT_MAX], err[512];
  bench_problem q;
  bench_problem_format(p, text, sizeof text);
  if (strlen(text) >= sizeof text - 1) {
    snprintf(why, len, "'%s' fills the whole BENCH_TEXT_MAX buffer", text);
    return 0;
  }
  if (bench_problem_parse(text, &q, err, sizeof err)) {
    snprintf(why, len, "'%s' is refused: %s", text, err);
    return 0;
  }
  char diff[400];
  if (!same_problem(p, &q, diff, sizeof diff)) {
    snprintf(why, len, "'%s': %s", text, diff);
    return 0;
  }
  bench_problem_format(&q, again, sizeof again);
  if (strcmp(text, again)) {
    snprintf(why, len, "'%s' prints again as '%s'", text, again);
    return 0;
  }
  return 1;
}

/* Descriptors that must be refused, with what the message must contain. */
static const struct {
  const char *text, *message;
} malformed[] = {
    {"", "empty"},
    {"   ", "empty"},
    {"conv", "no fields"},
    {"pool", "no fields"},
    {"act", "no fields"},
    {"softmax", "no fields"},
    {"lnorm", "no fields"},
    {"rmsnorm", "no fields"},
    {"bnorm", "no fields"},
    {"binary", "no fields"},
    {"reduce", "no fields"},
    {"gemm", "no fields"},
    {"conv:", "lacks ic"},
    {"act:", "no fields"},
    {"gemm:", "no fields"},
    {"gemm:_nx", "no fields"},
    {"mb1ic4ih9oc4kh999999999999", "kh is at most 2147483647"},
    {"mb1ic4ih9oc4kh3dh999999999999", "dh is at most 2147483647"},
    {"mb1ic4ih9oc4oh999999999999kh3", "oh is at most 2147483647"},
    {"mb1ic4ih9oc4kh3sh999999999999", "sh is at most 2147483647"},
    {"mb99999999999999999999999999ic4ih9oc4kh3", "mb is at most 2147483647"},
    {"mb1ic4ih9oc4kh3ph2147483648", "ph is at most 2147483647"},
    {"mb1ic4ih9oc4kh3dh2147483647", "above the limit"},
    {"mb1ic4ih9oc4kh3ph2000000000sh1", "above the limit"},
    {"mb2147483647ic2147483647ih2147483647oc1kh1", "more than"},
    {"pool:max:mb1ic3ih5kh2sh99999999999999", "sh is at most"},
    {"act:relu:99999999999999", "at most 2147483647"},
    {"act:relu:100000x100000x100000x100000", "more than"},
    {"act:relu:1x2x3x4x5x6x7x8x9", "more than 8 dims"},
    {"act:relu:3x", "dims are"},
    {"act:relu:x3", "expected"},
    {"act:relu:3xx4", "dims are"},
    {"act:relu:-3", "expected"},
    {"act:relu:0", "dims are"},
    {"act:relu:a1:a2:3", "twice"},
    {"dir=BWD_D:", "must follow"},
    {"dir=BWD_D", "must follow"},
    {"dir=BWD_X:act:relu:3", "the direction is FWD_D, FWD_I, BWD_D, BWD_W, BWD_WB or BWD_DW"},
    {"dir=BWD_D:dir=BWD_D:act:relu:3", "twice"},
    {"--dir=BWD_D:dir=BWD_W:act:relu:3", "'dir=BWD_W': a direction given twice"},
    {"dir=bwd_d:act:relu:3", "the direction is"},
    {"dir=:act:relu:3", "the direction is"},
    /* every op refuses the directions it lacks, naming those it has */
    {"dir=BWD_W:pool:max:mb1ic3ih5kh2",
     "pool has no BWD_W direction (pool takes FWD_D, FWD_I or BWD_D)"},
    {"dir=BWD_DW:pool:max:mb1ic3ih5kh2", "pool has no BWD_DW direction"},
    {"dir=BWD_WB:act:relu:3", "act has no BWD_WB direction (act takes FWD_D, FWD_I or BWD_D)"},
    {"--dir=BWD_DW:softmax:3",
     "softmax has no BWD_DW direction (softmax takes FWD_D, FWD_I or BWD_D)"},
    {"dir=BWD_W:xent:sum:4x5", "xent has no BWD_W direction (xent takes FWD_D, FWD_I or BWD_D)"},
    {"dir=BWD_D:lnorm:4x5", "lnorm has no BWD_D direction (lnorm takes FWD_D or BWD_DW)"},
    {"dir=FWD_I:lnorm:4x5", "lnorm has no FWD_I direction (lnorm takes FWD_D or BWD_DW)"},
    {"dir=BWD_W:rmsnorm:4x5", "rmsnorm has no BWD_W direction (rmsnorm takes FWD_D or BWD_DW)"},
    {"dir=BWD_D:bnorm:mb2ic4", "bnorm has no BWD_D direction (bnorm takes FWD_D, FWD_I or BWD_DW)"},
    {"dir=BWD_D:gemm:m2n2k2", "gemm has no BWD_D direction (gemm takes FWD_D only)"},
    {"dir=FWD_I:gemm:m2n2k2", "gemm has no FWD_I direction (gemm takes FWD_D only)"},
    {"dir=BWD_D:binary:add:3+3", "binary has no BWD_D direction (binary takes FWD_D only)"},
    {"dir=BWD_DW:reduce:sum:4x5:axes0", "reduce has no BWD_DW direction (reduce takes FWD_D only)"},
    {"dir=BWD_D:optim:sgd:10", "optim has no BWD_D direction (optim takes FWD_D only)"},
    {"dir=BWD_DW:mb1ic4ih5oc4kh3",
     "conv has no BWD_DW direction (conv takes FWD_D, FWD_I, BWD_D, BWD_W or BWD_WB)"},
    {"conv:dir=BWD_DW:mb1ic4ih5oc4kh3", "conv has no BWD_DW direction"},
    /* conv's beta: backward directions only, one finite number, before the name */
    {"mb1ic4ih5oc4kh3:beta1", "'beta1': beta (accumulation into the output) needs a backward "
                              "direction (BWD_D, BWD_W or BWD_WB)"},
    {"dir=FWD_I:conv:mb1ic4ih5oc4kh3:beta0.5", "needs a backward direction"},
    {"dir=BWD_D:mb1ic4ih5oc4kh3:beta1:beta1", "'beta1' in convolution descriptor: given twice"},
    {"dir=BWD_D:mb1ic4ih5oc4kh3:beta", "expected beta<B>"},
    {"dir=BWD_D:mb1ic4ih5oc4kh3:betax", "expected beta<B>"},
    {"dir=BWD_D:mb1ic4ih5oc4kh3:betainf", "expected beta<B>"},
    {"dir=BWD_D:mb1ic4ih5oc4kh3:betanan", "expected beta<B>"},
    {"dir=BWD_D:mb1ic4ih5oc4kh3:beta1e999", "expected beta<B>"},
    {"dir=BWD_D:mb1ic4ih5oc4kh3:b1", "expected beta<B>"},
    {"dir=BWD_D:mb1ic4ih5oc4kh3:", "empty field"},
    {"dir=BWD_D:mb1ic4ih5oc4kh3::beta1", "empty field"},
    {"dir=BWD_D:mb1ic4ih5oc4kh3:beta1_kh3", "only the name (_n<name>) may follow"},
    {"dir=BWD_D:mb1ic4ih5oc4kh3:beta1nx", "expected beta<B>"},
    {"act:relu:ainf:3", "expected"},
    {"act:relu:anan:3", "expected"},
    {"act:relu:a1e999:3", "expected"},
    {"act:relu:a1e-999:3", "expected"},
    {"act:relu:a1junk:3", "expected"},
    {"act:relu:3:4", "twice"},
    {"act:relu::3", "empty field"},
    {"act:relu:3:", "empty field"},
    {"act:nosuch:3", "unknown activation"},
    {"softmax:axis8:3x4", "expected axis"},
    {"softmax:axis2:3x4", "rank 2"},
    {"softmax:axis1e0:3x4", "expected axis"},
    {"softmax:axis-:3x4", "expected axis"},
    {"softmax:log:log:3", "twice"},
    {"lnorm:4x8:nd0", "expected"},
    {"lnorm:4x8:nd3", "rank 2"},
    {"lnorm:4x8:eps0", "expected"},
    {"lnorm:4x8:eps-1", "expected"},
    {"lnorm:4x8:bias:nobias", "twice"},
    {"bnorm:mb1ic0", "needs ic"},
    {"bnorm:mb1ic4:leaky_relu", "parameterless"},
    {"bnorm:mb1ic4:relu:tanh", "twice"},
    {"bnorm:mb99999999999ic4", "mb is at most"},
    {"bnorm:mb2ic4:relu:dir=FWD_D", "dir=FWD_D takes no fused activation"},
    {"dir=FWD_D:bnorm:mb2ic4:relu", "dir=FWD_D takes no fused activation"},
    {"bnorm:mb2ic4:dir=BWD_DW:sigmoid", "dir=BWD_DW takes no fused activation"},
    {"dir=BWD_DW:bnorm:mb2ic4:tanh", "dir=BWD_DW takes no fused activation"},
    {"bnorm:mb1ic4:dir=FWD_D", "at least 2 elements"},
    {"dir=BWD_DW:bnorm:mb1ic4ih1", "dir=BWD_DW needs at least 2 elements"},
    {"bnorm:mb2ic4:mom0.5", "needs dir=FWD_D"},
    {"dir=FWD_I:bnorm:mb2ic4:mom0.5", "needs dir=FWD_D"},
    {"dir=BWD_DW:bnorm:mb2ic4:mom0.5", "needs dir=FWD_D"},
    {"bnorm:mb2ic4:dir=FWD_D:mom1.5", "expected"},
    /* the normalizations' older trailing direction: one direction in all */
    {"bnorm:mb2ic4:dir=FWD_D:dir=BWD_DW", "'dir=BWD_DW': a direction given twice"},
    {"dir=FWD_D:bnorm:mb2ic4:dir=FWD_D", "'dir=FWD_D': a direction given twice"},
    {"dir=BWD_DW:lnorm:4x8:dir=BWD_DW", "a direction given twice"},
    {"bnorm:mb2ic4:dir=BWD_D", "bnorm has no BWD_D direction (bnorm takes FWD_D, FWD_I or BWD_DW)"},
    {"bnorm:mb2ic4:dir=BWD_X", "the direction is"},
    {"lnorm:4x8:dir=FWD_I", "lnorm has no FWD_I direction (lnorm takes FWD_D or BWD_DW)"},
    {"rmsnorm:4x8:dir=", "the direction is"},
    {"lnorm:4x8:dir=BWD_DW:dir=BWD_DW", "twice"},
    {"binary:add:3x4+5", "broadcast"},
    {"binary:add:3x4", "expected <dims>+<dims>"},
    {"binary:add:3x4+", "dims are"},
    {"binary:add:+3", "dims are"},
    {"binary:add:3++3", "dims are"},
    {"binary:pow:3+3", "op is"},
    {"xent:avg:4x5", "mean, sum or none"},
    {"xent:mean:4x5x6", "<N>x<C>"},
    {"xent:mean", "xent:<mean|sum|none>"},
    {"xent:mean:ign3", "needs <N>x<C>"},
    {"xent:mean:4x5:ign", "expected"},
    {"xent:mean:4x5:ign1:ign2", "twice"},
    {"xent:sum:4x5:dir=BWD_D", "expected"},
    {"dir=BWD_W:xent:sum:4x5", "no BWD_W direction"},
    {"attention", "no fields"},
    {"attention:b1h2sq4", "needs h, sq and d"},
    {"attention:b1h3hkv2sq4d8", "multiple of hkv"},
    {"attention:b1h2sq4d8d8", "given twice"},
    {"attention:b1h2sq0d8", "at least 1"},
    {"attention:b1h2sq4d8x3", "expected b<B>"},
    {"attention:b1h2sq4d8:causal:causal", "twice"},
    {"attention:b1h2sq4d8:bias5", "does not broadcast"},
    {"attention:b1h2sq4d8:bias1x1x1x1x4", "rank 1 to 4"},
    {"attention:b1h2sq4d8:scale-1", "expected causal"},
    {"attention:b1h2sq4d8:mask", "expected causal"},
    {"dir=BWD_W:attention:b1h2sq4d8", "no BWD_W direction"},
    {"optim:lamb:10", "sgd, adam or adamw"},
    {"optim:sgd:lr0.1", "needs the tensors' sizes"},
    {"optim:sgd:10:lr-1", "expected"},
    {"optim:sgd:10:b10.5", "expected"},
    {"optim:adam:10:mom0.9", "expected"},
    {"optim:adam:10:b11", "expected"},
    {"optim:adam:10:eps0", "expected"},
    {"optim:sgd:10:nesterov", "nesterov needs"},
    {"optim:sgd:10:mom0.9:damp0.1:nesterov", "nesterov needs"},
    {"optim:sgd:10:lr0.1:lr0.2", "twice"},
    {"optim:sgd:1x1x1x1x1x1x1x1x1", "more than 8 tensors"},
    {"optim:adamw:1x2x3x4x5x6x7x8x9x10:lr0.1", "more than 8 tensors"},
    {"reduce:sum:4x5:axes0,", "axes are"},
    {"reduce:sum:4x5:axes,0", "axes are"},
    {"reduce:sum:4x5:axes0,,1", "axes are"},
    {"reduce:sum:4x5:axes0,0", "axes are"},
    {"reduce:sum:4x5:axes8", "axes are"},
    {"reduce:sum:4x5:axes99999999999999999999", "axes are"},
    {"reduce:sum:4x5:axes2", "beyond"},
    {"reduce:sum:4x5:axes0:keep:keep", "twice"},
    {"gemm:m4n4", "needs m, n and k"},
    {"gemm:m4n4k4m4", "twice"},
    {"gemm:m0n4k4", "at least 1"},
    {"gemm:m4n4k4x", "expected m<M>n<N>k<K>"},
    {"gemm:m99999999999n1k1", "m is at most 2147483647"},
    {"gemm:m2000000000n2000000000k1", "too many elements"},
    {"gemm:m4n4k4:ta:ta", "twice"},
    {"gemm:m4n4k4:tc", "expected ta or tb"},
    {"reorder:", "no fields"},
    {"quantize", "no fields"},
    {"dequantize", "no fields"},
    {"quantize:axis0", "needs quantize:<dims>"},
    {"quantize:2x3:f32->f16", "f32->i8 or f32->u8"},
    {"quantize:2x3:i8->f32", "f32->i8 or f32->u8"},
    {"dequantize:2x3:f32->u8", "i8->f32 or u8->f32"},
    {"quantize:2x3:s0", "finite and > 0"},
    {"quantize:2x3:s-1", "finite and > 0"},
    {"quantize:2x3:s1e39", "finite and > 0"},
    {"quantize:2x3:s1e-46", "finite and > 0"},
    {"quantize:2x3:z128", "outside i8's range"},
    {"quantize:2x3:f32->u8:z-1", "outside u8's range"},
    {"dequantize:2x3:u8->f32:z256", "outside u8's range"},
    {"quantize:2x3:axis2", "has rank 2"},
    {"quantize:2x3:axis1:z1", "takes no s<scale>"},
    {"quantize:2x3:s1:s2", "each once"},
    {"quantize:2x3:nhwc->nchw", "expected <dims>"},
    {"reorder:2x3:nhwc->nchw", "nhwc needs 4-D"},
    {"reorder:2x3:f32->f8", "expected <dims>"},
    {"reorder:2x3:2x3", "expected <dims>"},
    {"reorder:f32->f16", "needs reorder:<dims>"},
    {"matmul:", "no fields"},
    {"matmul:m4n4", "needs m, n and k"},
    {"matmul:m4n4k4:bias:bias", "twice"},
    {"matmul:m4n4k4:batch2x3x4", "at most 2 batch dims"},
    {"matmul:m4n4k4:bbatch", "bbatch needs batch"},
    {"matmul:m4n4k4:inplace", "need res"},
    {"matmul:m4n4k4:rs2", "need res"},
    {"matmul:m4n4k4:a0.5", "need an activation kind"},
    {"matmul:m4n4k4:swish", "expected batch"},
    {"matmul:m4n4k4:alphax", "expected batch"},
    {"matmul:m20000000n20000000k1", "too many elements"},
    {"matmul:m20000n20000k20000:batch1000x1000", "too many elements"},
    {"foo:bar", "unknown op"},
    {"dir=BWD_X:mb1ic4ih5oc4kh3", "the direction is"},
    {"dir=BWD_D:foo:bar", "unknown op"},
    {"dir=BWD_D:conv:dir=BWD_W:mb1ic4ih5oc4kh3", "given twice"},
    {"dir=BWD_D", "must follow"},
    {"--dir=:mb1ic4ih5oc4kh3", "the direction is"},
    {"mb1ic4ih5oc4kh3 junk", "spaces"},
    {"mb1ic4ih5oc4kh3\x01", "spaces"},
    {"mb1ic4ih5oc4kh3q7", "unknown key"},
    {"mb1ic4ih5oc4kh3kh3", "given twice"},
    {"mb1ic4ih5oc4kh3pb-1", "bad token"},
    {"mb1ic4ih9oc4oh4kh3sh2pb3", "does not match"},
    {"mb1ic4ih5oc4kh3_n0123456789012345678901234567890123456789012345678901234567890123456789"
     "0123456789012345678901234567890",
     "too long"},
};

int main(void) {
  tap_rng r = tap_rng_seed(20240611);
  char why[1200];
  /* ---- the property, per kind ---- */
  enum { PER_KIND = 3000 };
  for (int op = BENCH_OP_CONV; op < BENCH_OP_COUNT; op++) {
    int failures = 0;
    char first[1200] = "";
    for (int i = 0; i < PER_KIND; i++) {
      bench_problem p;
      random_problem(&r, op, &p);
      if (!round_trip(&p, why, sizeof why) && failures++ == 0) snprintf(first, sizeof first, "%s", why);
    }
    ok(failures == 0, "%s: %d random problems print, parse back field by field and print the same",
       bench_op_name(op), PER_KIND);
    if (failures) diag("%d failures, the first: %s", failures, first);
  }

  /* ---- findings of the fuzzers, one check each ---- */
  {
    bench_problem p;
    char err[256] = "";
    int rc = bench_problem_parse("conv", &p, err, sizeof err);
    ok(rc == -1 && strstr(err, "no fields"), "'conv' alone is refused (was: a length wrapped to SIZE_MAX): %s", err);
    /* oh112 alone implies pb4 (the smallest end padding that gives it) */
    rc = bench_problem_parse("mb1ic4ih224oc8kh7sh2ph1pb5", &p, err, sizeof err);
    char text[BENCH_TEXT_MAX];
    if (rc == 0) bench_problem_format(&p, text, sizeof text);
    ok(rc == 0 && p.pt == 1 && p.pb == 5 && p.oh == 112 &&
           !strcmp(text, "mb1ic4ih224oc8oh112ow110kh7sh2ph1pb5"),
       "asymmetric padding is printed (pt %lld pb %lld, '%s')", (long long)p.pt, (long long)p.pb,
       rc == 0 ? text : err);
    rc = bench_problem_parse("act:leaky_relu:a0:5", &p, err, sizeof err);
    if (rc == 0) bench_problem_format(&p, text, sizeof text);
    ok(rc == 0 && p.alpha == 0 && !strcmp(text, "act:leaky_relu:a0:5"),
       "alpha 0 of leaky_relu (default 0.01) is printed: '%s'", rc == 0 ? text : err);
    rc = bench_problem_parse("act:elu:a0.123456789012345:5", &p, err, sizeof err);
    if (rc == 0) bench_problem_format(&p, text, sizeof text);
    ok(rc == 0 && !strcmp(text, "act:elu:a0.123456789012345:5"),
       "alpha keeps all its digits (was %%g, 6 digits): '%s'", rc == 0 ? text : err);
    rc = bench_problem_parse("act:elu:a0.1:5", &p, err, sizeof err);
    if (rc == 0) bench_problem_format(&p, text, sizeof text);
    ok(rc == 0 && !strcmp(text, "act:elu:a0.1:5"), "and the shortest such form: '%s'",
       rc == 0 ? text : err);
    rc = bench_problem_parse("mb1ic4ih224oc8oh112kh7sh2", &p, err, sizeof err);
    if (rc == 0) bench_problem_format(&p, text, sizeof text);
    ok(rc == 0 && p.pb == 3 && !strcmp(text, "mb1ic4ih224oc8oh112kh7sh2ph2"),
       "benchdnn's implied end padding stays implied: '%s'", rc == 0 ? text : err);
    /* benchdnn's directions, one form for every op: --dir= or dir= first
     * (conv's also after conv:, the normalizations' also as their older
     * trailing field), the canonical form's dir=<DIR>: first (nothing for
     * the op's default: bnorm FWD_I, every other op FWD_D) */
    static const struct {
      const char *in, *out;
      int dir;
    } dirs[] = {{"--dir=BWD_D:mb1ic4ih5oc4kh3", "dir=BWD_D:mb1ic4ih5oc4oh3kh3", BENCH_DIR_BWD_D},
                {"conv:dir=BWD_W:mb1ic4ih5oc4kh3", "dir=BWD_W:mb1ic4ih5oc4oh3kh3", BENCH_DIR_BWD_W},
                {"dir=BWD_WB:conv:mb1ic4ih5oc4kh3_nx", "dir=BWD_WB:mb1ic4ih5oc4oh3kh3_nx",
                 BENCH_DIR_BWD_WB},
                {"dir=FWD_I:mb1ic4ih5oc4kh3", "mb1ic4ih5oc4oh3kh3", BENCH_DIR_FWD_D},
                {"--dir=FWD_D:mb1ic4ih5oc4kh3", "mb1ic4ih5oc4oh3kh3", BENCH_DIR_FWD_D},
                {"dir=BWD_D:mb1ic4ih5oc4kh3:beta1_nx:y", "dir=BWD_D:mb1ic4ih5oc4oh3kh3:beta1_nx:y",
                 BENCH_DIR_BWD_D},
                {"conv:--dir=BWD_W:mb1_ic4ih5oc4kh3:beta0.50_n\"q\"",
                 "dir=BWD_W:mb1ic4ih5oc4oh3kh3:beta0.5_nq", BENCH_DIR_BWD_W},
                {"dir=BWD_WB:mb1ic4ih5oc4kh3:beta-2e-3", "dir=BWD_WB:mb1ic4ih5oc4oh3kh3:beta-0.002",
                 BENCH_DIR_BWD_WB},
                {"dir=BWD_D:mb1ic4ih5oc4kh3:beta0", "dir=BWD_D:mb1ic4ih5oc4oh3kh3",
                 BENCH_DIR_BWD_D},
                {"dir=BWD_D:mb1ic4ih5oc4kh3:beta-0", "dir=BWD_D:mb1ic4ih5oc4oh3kh3:beta-0",
                 BENCH_DIR_BWD_D},
                {"--dir=BWD_D:pool:max:mb1ic3ih5kh2", "dir=BWD_D:pool:max:mb1ic3ih5kh2",
                 BENCH_DIR_BWD_D},
                {"dir=FWD_I:pool:avg:mb1ic3ih5kh2", "pool:avg:mb1ic3ih5kh2", BENCH_DIR_FWD_D},
                {"dir=BWD_D:act:relu:3", "dir=BWD_D:act:relu:3", BENCH_DIR_BWD_D},
                {"dir=FWD_I:softmax:3", "softmax:axis-1:3", BENCH_DIR_FWD_D},
                {"dir=BWD_D:xent:sum:4x5_nl", "dir=BWD_D:xent:sum:4x5_nl", BENCH_DIR_BWD_D},
                {"dir=BWD_D:attention:b2h4hkv2sq8d16:causal",
                 "dir=BWD_D:attention:b2h4hkv2sq8skv8d16dv16:causal", BENCH_DIR_BWD_D},
                {"dir=FWD_I:attention:h12sq2048d64:bshd:bias2048",
                 "attention:b1h12hkv12sq2048skv2048d64dv64:bias2048:bshd", BENCH_DIR_FWD_D},
                {"attention:b1h12hkv12sq2048skv2048d64dv64:causal",
                 "attention:b1h12hkv12sq2048skv2048d64dv64:causal", BENCH_DIR_FWD_D},
                {"dir=BWD_DW:lnorm:4x8", "dir=BWD_DW:lnorm:4x8", BENCH_DIR_BWD_DW},
                {"lnorm:4x8:dir=BWD_DW:nobias", "dir=BWD_DW:lnorm:4x8:nobias", BENCH_DIR_BWD_DW},
                {"rmsnorm:4x8:dir=FWD_D", "rmsnorm:4x8", BENCH_DIR_FWD_D},
                {"--dir=FWD_D:rmsnorm:4x8:bias", "rmsnorm:4x8:bias", BENCH_DIR_FWD_D},
                {"bnorm:mb2ic4", "bnorm:mb2ic4", BENCH_DIR_FWD_I},
                {"dir=FWD_I:bnorm:mb2ic4:relu", "bnorm:mb2ic4:relu", BENCH_DIR_FWD_I},
                {"bnorm:mb2ic4:dir=FWD_I", "bnorm:mb2ic4", BENCH_DIR_FWD_I},
                {"dir=FWD_D:bnorm:mb2ic4:mom0.5", "dir=FWD_D:bnorm:mb2ic4:mom0.5", BENCH_DIR_FWD_D},
                {"bnorm:mb2ic4:dir=FWD_D:mom0.5", "dir=FWD_D:bnorm:mb2ic4:mom0.5", BENCH_DIR_FWD_D},
                {"bnorm:mb2ic4ih3:dir=BWD_DW:eps0.1", "dir=BWD_DW:bnorm:mb2ic4ih3:eps0.1",
                 BENCH_DIR_BWD_DW},
                {"dir=FWD_D:binary:add:3+3", "binary:add:3+3", BENCH_DIR_FWD_D},
                {"dir=FWD_D:reduce:sum:4x5:axes0", "reduce:sum:4x5:axes0", BENCH_DIR_FWD_D},
                {"--dir=FWD_D:gemm:m2n2k2", "gemm:m2n2k2", BENCH_DIR_FWD_D},
                {"dir=FWD_D:optim:sgd:10", "optim:sgd:10", BENCH_DIR_FWD_D},
                {"optim:adam:1x2x3x4x5x6x7x8", "optim:adam:1x2x3x4x5x6x7x8", BENCH_DIR_FWD_D}};
    for (int i = 0; i < COUNT_OF(dirs); i++) {
      rc = bench_problem_parse(dirs[i].in, &p, err, sizeof err);
      if (rc == 0) bench_problem_format(&p, text, sizeof text);
      ok(rc == 0 && p.dir == dirs[i].dir && !strcmp(text, dirs[i].out),
         "'%s' has direction %s and prints as '%s'", dirs[i].in, bench_dir_name(dirs[i].dir),
         rc == 0 ? text : err);
    }
    /* A default direction (adnn-bench's --dir) goes to the problems that
     * name none and whose op has it; an explicit one stays. */
    static const struct {
      int dflt;
      const char *in, *out;
    } defaults[] = {{BENCH_DIR_BWD_D, "mb1ic4ih5oc4kh3", "dir=BWD_D:mb1ic4ih5oc4oh3kh3"},
                    {BENCH_DIR_BWD_D, "dir=FWD_D:mb1ic4ih5oc4kh3", "mb1ic4ih5oc4oh3kh3"},
                    {BENCH_DIR_BWD_W, "dir=BWD_D:mb1ic4ih5oc4kh3", "dir=BWD_D:mb1ic4ih5oc4oh3kh3"},
                    {BENCH_DIR_BWD_WB, "conv:mb1ic4ih5oc4kh3:beta1",
                     "dir=BWD_WB:mb1ic4ih5oc4oh3kh3:beta1"},
                    {BENCH_DIR_FWD_I, "mb1ic4ih5oc4kh3", "mb1ic4ih5oc4oh3kh3"},
                    {BENCH_DIR_BWD_D, "pool:max:mb1ic3ih5kh2", "dir=BWD_D:pool:max:mb1ic3ih5kh2"},
                    {BENCH_DIR_BWD_D, "act:relu:3", "dir=BWD_D:act:relu:3"},
                    {BENCH_DIR_BWD_D, "softmax:axis0:3", "dir=BWD_D:softmax:axis0:3"},
                    {BENCH_DIR_BWD_D, "xent:mean:4x5", "dir=BWD_D:xent:mean:4x5"},
                    {BENCH_DIR_BWD_W, "act:relu:3", "act:relu:3"},
                    {BENCH_DIR_BWD_D, "lnorm:4x8", "lnorm:4x8"},
                    {BENCH_DIR_BWD_DW, "lnorm:4x8", "dir=BWD_DW:lnorm:4x8"},
                    {BENCH_DIR_BWD_DW, "rmsnorm:4x8", "dir=BWD_DW:rmsnorm:4x8"},
                    {BENCH_DIR_BWD_DW, "bnorm:mb2ic4", "dir=BWD_DW:bnorm:mb2ic4"},
                    {BENCH_DIR_FWD_D, "bnorm:mb2ic4", "dir=FWD_D:bnorm:mb2ic4"},
                    {BENCH_DIR_FWD_D, "bnorm:mb2ic4:dir=FWD_I", "bnorm:mb2ic4"},
                    {BENCH_DIR_FWD_D, "bnorm:mb2ic4:dir=BWD_DW", "dir=BWD_DW:bnorm:mb2ic4"},
                    {BENCH_DIR_FWD_I, "bnorm:mb2ic4", "bnorm:mb2ic4"},
                    {BENCH_DIR_BWD_D, "bnorm:mb2ic4", "bnorm:mb2ic4"},
                    {BENCH_DIR_BWD_DW, "mb1ic4ih5oc4kh3", "mb1ic4ih5oc4oh3kh3"},
                    {BENCH_DIR_BWD_D, "gemm:m2n2k2", "gemm:m2n2k2"},
                    {BENCH_DIR_BWD_DW, "optim:sgd:10", "optim:sgd:10"},
                    {BENCH_DIR_FWD_I, "binary:add:3+3", "binary:add:3+3"},
                    {-1, "act:relu:3", "act:relu:3"}};
    for (int i = 0; i < COUNT_OF(defaults); i++) {
      rc = bench_problem_parse_dir(defaults[i].in, defaults[i].dflt, &p, err, sizeof err);
      if (rc == 0) bench_problem_format(&p, text, sizeof text);
      ok(rc == 0 && !strcmp(text, defaults[i].out), "'%s' with the default %s prints as '%s'",
         defaults[i].in, defaults[i].dflt < 0 ? "none" : bench_dir_name(defaults[i].dflt),
         rc == 0 ? text : err);
    }
    rc = bench_problem_parse_dir("bnorm:mb2ic4:relu", BENCH_DIR_FWD_D, &p, err, sizeof err);
    ok(rc == -1 && strstr(err, "dir=FWD_D takes no fused activation"),
       "a default direction the problem cannot take is refused: %s", err);
    rc = bench_problem_parse_dir("mb1ic4ih5oc4kh3:beta1", BENCH_DIR_FWD_D, &p, err, sizeof err);
    ok(rc == -1 && strstr(err, "needs a backward direction"),
       "beta in the default's forward direction is refused: %s", err);
    /* Every op and direction: a direction is accepted exactly when
     * bench_op_dirs has it, a refusal names every direction the op takes,
     * and the canonical form of what is accepted round-trips. */
    static const char *const samples[BENCH_OP_COUNT] = {
        [BENCH_OP_CONV] = "mb2ic4ih5oc4kh3",     [BENCH_OP_POOL] = "pool:max:mb2ic3ih5kh2",
        [BENCH_OP_ACT] = "act:elu:3x4",          [BENCH_OP_SOFTMAX] = "softmax:3x4",
        [BENCH_OP_LNORM] = "lnorm:3x4",          [BENCH_OP_RMSNORM] = "rmsnorm:3x4",
        [BENCH_OP_BNORM] = "bnorm:mb2ic4ih3",    [BENCH_OP_BINARY] = "binary:mul:3x4+4",
        [BENCH_OP_REDUCE] = "reduce:max:3x4:axes1", [BENCH_OP_GEMM] = "gemm:m3n4k5",
        [BENCH_OP_XENT] = "xent:none:3x4",       [BENCH_OP_OPTIM] = "optim:adamw:3x4",
        [BENCH_OP_MATMUL] = "matmul:m3n4k5:bias:gelu",
        [BENCH_OP_ATTENTION] = "attention:b1h2sq4d8",
        [BENCH_OP_REORDER] = "reorder:2x3x4x5:nchw->nhwc:f32->bf16",
        [BENCH_OP_QUANTIZE] = "quantize:2x3:f32->u8:s0.5:z3",
        [BENCH_OP_DEQUANTIZE] = "dequantize:2x3x4:i8->f32:axis1",
        [BENCH_OP_LSCALE] = "lscale:unscale:3x4"};
    int wrong = 0, taken = 0;
    for (int op = 0; op < BENCH_OP_COUNT; op++) {
      const unsigned dirs_of_op = bench_op_dirs(op);
      ok(dirs_of_op & (1u << bench_op_default_dir(op)), "%s takes its default direction %s",
         bench_op_name(op), bench_dir_name(bench_op_default_dir(op)));
      for (int d = 0; d < BENCH_DIR_COUNT; d++) {
        char in[128];
        snprintf(in, sizeof in, "dir=%s:%s", bench_dir_name(d), samples[op]);
        rc = bench_problem_parse(in, &p, err, sizeof err);
        const int has = (dirs_of_op >> d) & 1u;
        int good = rc == (has ? 0 : -1);
        if (rc == 0) {
          taken++;
          good &= p.op == op && round_trip(&p, why, sizeof why);
          /* FWD_I is stored as FWD_D where it is the forward op itself */
          good &= p.dir == (d == BENCH_DIR_FWD_I && op != BENCH_OP_BNORM ? BENCH_DIR_FWD_D : d);
        } else {
          for (int a = 0; a < BENCH_DIR_COUNT; a++)
            if ((dirs_of_op >> a) & 1u) good &= strstr(err, bench_dir_name(a)) != NULL;
          good &= strstr(err, "has no") != NULL;
        }
        if (!good) {
          wrong++;
          diag("'%s': rc %d, %s", in, rc, rc == 0 ? why : err);
        }
      }
    }
    /* 36 pairs: conv 5; pool, act, softmax, bnorm, xent and attention 3
     * each; lnorm and rmsnorm 2 each; binary, reduce, gemm, optim, matmul,
     * reorder, quantize, dequantize and lscale 1 each */
    ok(wrong == 0 && taken == 36,
       "every op takes exactly its directions (%d of %d op-direction pairs), refusing the others "
       "by naming its own",
       taken, BENCH_OP_COUNT * BENCH_DIR_COUNT);
    rc = bench_problem_parse("mb1ic4ih5oc4kh3_n\"\"x\"", &p, err, sizeof err);
    if (rc == 0) bench_problem_format(&p, text, sizeof text);
    ok(rc == 0 && !strcmp(p.name, "\"x") && !strcmp(text, "mb1ic4ih5oc4oh3kh3_n\"\"x\""),
       "a name with a quote at one end is quoted: name '%s', '%s'", p.name, rc == 0 ? text : err);
  }

  /* ---- malformed descriptors: refused with a message, no crash ---- */
  {
    int failures = 0;
    for (int i = 0; i < COUNT_OF(malformed); i++) {
      bench_problem p;
      char err[512];
      memset(err, 'X', sizeof err);
      const int rc = bench_problem_parse(malformed[i].text, &p, err, sizeof err);
      const int good = rc == -1 && memchr(err, 0, sizeof err) && err[0] &&
                       strstr(err, malformed[i].message);
      if (!good) {
        failures++;
        diag("'%s': rc %d, message '%.200s' (wanted one with '%s')", malformed[i].text, rc,
             memchr(err, 0, sizeof err) ? err : "(not terminated)", malformed[i].message);
      }
    }
    ok(failures == 0, "%d malformed descriptors refused with a message naming the problem",
       COUNT_OF(malformed));
    /* a descriptor far beyond BENCH_INPUT_MAX, and one without a place for the message */
    static char huge[1 << 16];
    memset(huge, '9', sizeof huge - 1);
    memcpy(huge, "gemm:m", 6);
    bench_problem p;
    char err[128] = "";
    ok(bench_problem_parse(huge, &p, err, sizeof err) == -1 && strstr(err, "limit"),
       "a 64 KiB descriptor is refused: %s", err);
    ok(bench_problem_parse("conv", &p, NULL, 0) == -1, "a NULL message buffer is not written");
    char tiny[4] = "abc";
    ok(bench_problem_parse("conv", &p, tiny, sizeof tiny) == -1 && tiny[3] == 0,
       "a short message buffer is truncated and terminated ('%s')", tiny);
  }

  /* ---- formatting into short buffers ---- */
  {
    bench_problem p;
    char err[256];
    bench_problem_parse("g2mb1ic4ih9oc4kh3sh2ph1pb2_nname", &p, err, sizeof err);
    char full[BENCH_TEXT_MAX];
    bench_problem_format(&p, full, sizeof full);
    int bad = 0;
    for (size_t len = 1; len < strlen(full) + 2; len++) {
      char buf[BENCH_TEXT_MAX + 8];
      memset(buf, '#', sizeof buf);
      bench_problem_format(&p, buf, len);
      if (strlen(buf) != (len - 1 < strlen(full) ? len - 1 : strlen(full)) || buf[len] != '#' ||
          strncmp(buf, full, strlen(buf)))
        bad++;
    }
    ok(bad == 0, "formatting '%s' into every shorter buffer truncates, terminates, stays inside",
       full);
  }

  /* ---- mutations of canonical strings: refused with a message, or stable ---- */
  {
    enum { MUTATIONS = 20000 };
    int accepted = 0, refused = 0, unstable = 0, silent = 0;
    char first[1400] = "";
    for (int i = 0; i < MUTATIONS; i++) {
      bench_problem p, q;
      random_problem(&r, (int)pick(&r, BENCH_OP_CONV, BENCH_OP_COUNT - 1), &p);
      char text[BENCH_TEXT_MAX + 64], err[512];
      bench_problem_format(&p, text, BENCH_TEXT_MAX);
      const int edits = (int)pick(&r, 1, 3);
      for (int e = 0; e < edits; e++) {
        size_t n = strlen(text);
        const size_t at = (size_t)pick(&r, 0, (int64_t)n);
        static const char alphabet[] = "0123456789x:_+,-.nabdeghikmoprstw\"#eAZ\x7f\x80\xff ";
        const char c = alphabet[pick(&r, 0, (int64_t)sizeof alphabet - 2)];
        switch (tap_rng_next(&r) % 3) {
          case 0: /* replace */
            if (at < n) text[at] = c;
            break;
          case 1: /* insert */
            if (n + 1 < sizeof text) {
              memmove(text + at + 1, text + at, n - at + 1);
              text[at] = c;
            }
            break;
          default: /* delete */
            if (at < n) memmove(text + at, text + at + 1, n - at);
        }
      }
      err[0] = 0;
      if (bench_problem_parse(text, &q, err, sizeof err)) {
        refused++;
        if (!err[0]) silent++;
      } else {
        accepted++;
        if (!round_trip(&q, why, sizeof why) && unstable++ == 0)
          snprintf(first, sizeof first, "mutated '%s': %s", text, why);
      }
    }
    ok(unstable == 0 && silent == 0,
       "%d mutated descriptors: %d refused (each with a message), %d accepted and stable",
       MUTATIONS, refused, accepted);
    if (unstable) diag("%d unstable, the first: %s", unstable, first);
    if (silent) diag("%d refused without a message", silent);
  }
  return tap_done();
}
