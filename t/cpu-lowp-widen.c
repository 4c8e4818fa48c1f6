/* The CPU plugin's "lowp" implementation of the training and attention ops
 * (kernels/cpu/lowp_widen.c) against its contract: for F16 and BF16 data the
 * plan reports "lowp", and every 16-bit output is, bit for bit, the F32
 * plan's output on the widened inputs rounded once to the 16-bit type (round
 * to nearest even, float16.h); every F32 output (statistics, parameter
 * gradients, lse) equals the F32 plan's bit for bit. The F32 plans are made
 * with tuning off, so both run the plugin's own choice of F32
 * implementation, which lowp runs too. Inputs are seeded random values
 * rounded to the 16-bit type; outputs are poisoned with a NaN pattern the
 * kernels never produce (so an unwritten element fails), except those the
 * op reads (running statistics, gradients accumulated with beta = 1), which
 * start from the same random values on both sides. Sizes are odd so that
 * the converters' vector tails run. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "kernels/common/float16.h"
#include "t/rng.h"
#include "t/tap.h"

#define POISON 0x7d5bu /* a signalling-NaN pattern: never a converter's output */

static adnn_context *ctx;

/* What a buffer of an op holds: data in the op's dtype, an F32 parameter
 * or statistics vector, or I32 class labels in [0, classes). */
enum { DATA, PARAM, LABEL };

typedef struct buf {
  int kind;
  size_t n;
  int read; /* an output the op reads (initialized, not poisoned) */
} buf;

typedef struct spec {
  int n_in, n_out;
  buf in[8], out[8];
  int64_t classes; /* LABEL's range */
  double lo, hi;   /* PARAM values (positive: inverse standard deviations, variances) */
} spec;

static void tensor(adnn_tensor_desc *t, adnn_dtype dt, int rank, const int64_t *dims) {
  if (adnn_tensor_desc_init(t, dt, rank, dims) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
}

static size_t count(int rank, const int64_t *dims) {
  size_t n = 1;
  for (int i = 0; i < rank; i++) n *= (size_t)dims[i];
  return n;
}

static void plan_ok(adnn_status st) {
  if (st != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
}

/* ---- the cases: each builds its plan in dtype dt and says its buffers ---- */

/* conv2d backward data / weights: {N, C, H, W, K, R, stride, pad, groups,
 * beta} with y's P, Q from the geometry. */
typedef struct conv_geo {
  int64_t N, C, H, W, K, R, stride, pad, groups;
  double beta;
} conv_geo;

static void conv_fwd(adnn_conv2d_desc *f, adnn_dtype dt, const conv_geo *g, int bias) {
  adnn_conv2d_desc_init(f);
  const int64_t P = (g->H + 2 * g->pad - g->R) / g->stride + 1;
  const int64_t Q = (g->W + 2 * g->pad - g->R) / g->stride + 1;
  const int64_t xd[4] = {g->N, g->C, g->H, g->W}, wd[4] = {g->K, g->C / g->groups, g->R, g->R};
  const int64_t yd[4] = {g->N, g->K, P, Q}, bd[1] = {g->K};
  tensor(&f->x, dt, 4, xd);
  tensor(&f->w, dt, 4, wd);
  tensor(&f->y, dt, 4, yd);
  tensor(&f->bias, dt, 1, bd);
  f->has_bias = bias;
  f->stride_h = f->stride_w = g->stride;
  f->pad_top = f->pad_bottom = f->pad_left = f->pad_right = g->pad;
  f->groups = g->groups;
}

static adnn_plan *conv_bwd_data(adnn_dtype dt, const conv_geo *g, spec *s) {
  adnn_conv2d_desc f;
  conv_fwd(&f, dt, g, 0);
  adnn_conv2d_backward_data_desc d;
  adnn_conv2d_backward_data_desc_init(&d);
  d.forward = &f;
  d.beta = g->beta;
  adnn_plan *p = NULL;
  plan_ok(adnn_plan_create_conv2d_backward_data(ctx, &d, &p));
  s->n_in = 2;
  s->in[0] = (buf){DATA, count(4, f.y.dims), 0};
  s->in[1] = (buf){DATA, count(4, f.w.dims), 0};
  s->n_out = 1;
  s->out[0] = (buf){DATA, count(4, f.x.dims), g->beta != 0.0};
  return p;
}

static adnn_plan *conv_bwd_weights(adnn_dtype dt, const conv_geo *g, spec *s) {
  adnn_conv2d_desc f;
  conv_fwd(&f, dt, g, 1);
  adnn_conv2d_backward_weights_desc d;
  adnn_conv2d_backward_weights_desc_init(&d);
  d.forward = &f;
  d.beta = g->beta;
  adnn_plan *p = NULL;
  plan_ok(adnn_plan_create_conv2d_backward_weights(ctx, &d, &p));
  s->n_in = 2;
  s->in[0] = (buf){DATA, count(4, f.x.dims), 0};
  s->in[1] = (buf){DATA, count(4, f.y.dims), 0};
  s->n_out = 2;
  s->out[0] = (buf){DATA, count(4, f.w.dims), g->beta != 0.0};
  s->out[1] = (buf){DATA, (size_t)g->K, g->beta != 0.0};
  return p;
}

/* batchnorm over [N, C, H, W] NCHW. */
static const int64_t bn_dims[4] = {3, 7, 5, 9};

static void bn_fwd(adnn_batchnorm_desc *f, adnn_dtype dt) {
  adnn_batchnorm_desc_init(f);
  tensor(&f->x, dt, 4, bn_dims);
  f->y = f->x;
}

static adnn_plan *bn_training(adnn_dtype dt, spec *s) {
  adnn_batchnorm_desc f;
  bn_fwd(&f, dt);
  adnn_batchnorm_training_desc d;
  adnn_batchnorm_training_desc_init(&d);
  d.forward = &f;
  d.momentum = 0.125;
  adnn_plan *p = NULL;
  plan_ok(adnn_plan_create_batchnorm_training(ctx, &d, &p));
  const size_t n = count(4, bn_dims), C = (size_t)bn_dims[1];
  s->n_in = 3;
  s->in[0] = (buf){DATA, n, 0};
  s->in[1] = s->in[2] = (buf){PARAM, C, 0};
  s->n_out = 5;
  s->out[0] = (buf){DATA, n, 0};
  s->out[1] = s->out[2] = (buf){PARAM, C, 0};
  s->out[3] = s->out[4] = (buf){PARAM, C, 1};
  return p;
}

static adnn_plan *bn_backward(adnn_dtype dt, spec *s) {
  adnn_batchnorm_desc f;
  bn_fwd(&f, dt);
  adnn_batchnorm_backward_desc d;
  adnn_batchnorm_backward_desc_init(&d);
  d.forward = &f;
  adnn_plan *p = NULL;
  plan_ok(adnn_plan_create_batchnorm_backward(ctx, &d, &p));
  const size_t n = count(4, bn_dims), C = (size_t)bn_dims[1];
  s->n_in = 5;
  s->in[0] = s->in[1] = (buf){DATA, n, 0};
  s->in[2] = s->in[3] = s->in[4] = (buf){PARAM, C, 0};
  s->n_out = 3;
  s->out[0] = (buf){DATA, n, 0};
  s->out[1] = s->out[2] = (buf){PARAM, C, 0};
  return p;
}

/* layer norm (gain and bias) or RMS norm (gain) over rows of 67. */
static adnn_plan *norm_backward(adnn_dtype dt, int layer, spec *s) {
  const int64_t dims[2] = {9, 67};
  adnn_norm_desc f;
  adnn_norm_desc_init(&f);
  f.kind = layer ? ADNN_NORM_LAYER : ADNN_NORM_RMS;
  f.has_gain = 1;
  f.has_bias = layer;
  tensor(&f.x, dt, 2, dims);
  f.y = f.x;
  adnn_norm_backward_desc d;
  adnn_norm_backward_desc_init(&d);
  d.forward = &f;
  adnn_plan *p = NULL;
  plan_ok(adnn_plan_create_norm_backward(ctx, &d, &p));
  s->n_in = 3;
  s->in[0] = s->in[1] = (buf){DATA, 9 * 67, 0};
  s->in[2] = (buf){PARAM, 67, 0};
  s->n_out = 2 + layer;
  s->out[0] = (buf){DATA, 9 * 67, 0};
  s->out[1] = s->out[2] = (buf){PARAM, 67, 0};
  return p;
}

/* softmax cross-entropy over [13, 37] logits, mean or per-sample loss. */
static void sce_fwd(adnn_softmax_cross_entropy_desc *f, adnn_dtype dt, int none) {
  const int64_t ld[2] = {13, 37}, nd[1] = {13};
  adnn_softmax_cross_entropy_desc_init(f);
  tensor(&f->logits, dt, 2, ld);
  tensor(&f->labels, ADNN_DTYPE_I32, 1, nd);
  tensor(&f->loss, dt, none ? 1 : 0, nd); /* the mean is a scalar */
  f->reduction = none ? ADNN_LOSS_REDUCTION_NONE : ADNN_LOSS_REDUCTION_MEAN;
}

static adnn_plan *sce(adnn_dtype dt, int none, spec *s) {
  adnn_softmax_cross_entropy_desc f;
  sce_fwd(&f, dt, none);
  adnn_plan *p = NULL;
  plan_ok(adnn_plan_create_softmax_cross_entropy(ctx, &f, &p));
  s->n_in = 2;
  s->in[0] = (buf){DATA, 13 * 37, 0};
  s->in[1] = (buf){LABEL, 13, 0};
  s->classes = 37;
  s->n_out = 1;
  s->out[0] = (buf){DATA, none ? 13 : 1, 0};
  return p;
}

static adnn_plan *sce_backward(adnn_dtype dt, int none, spec *s) {
  adnn_softmax_cross_entropy_desc f;
  sce_fwd(&f, dt, none);
  adnn_softmax_cross_entropy_backward_desc d;
  adnn_softmax_cross_entropy_backward_desc_init(&d);
  d.forward = &f;
  adnn_plan *p = NULL;
  plan_ok(adnn_plan_create_softmax_cross_entropy_backward(ctx, &d, &p));
  s->n_in = 3;
  s->in[0] = (buf){DATA, 13 * 37, 0};
  s->in[1] = (buf){LABEL, 13, 0};
  s->in[2] = (buf){DATA, none ? 13 : 1, 0};
  s->classes = 37;
  s->n_out = 1;
  s->out[0] = (buf){DATA, 13 * 37, 0};
  return p;
}

/* attention: B 2, H 3, Sq 17, Skv 19, D 16, with a bias (and not causal) or
 * causal without one; lse in F32 (ADNN_OP_PARAM_DTYPE). */
static void att_fwd(adnn_attention_desc *f, adnn_dtype dt, int bias) {
  const int64_t qd[4] = {2, 3, 17, 16}, kd[4] = {2, 3, 19, 16}, ld[3] = {2, 3, 17};
  const int64_t bd[4] = {2, 3, 17, 19};
  adnn_attention_desc_init(f);
  tensor(&f->q, dt, 4, qd);
  tensor(&f->k, dt, 4, kd);
  tensor(&f->v, dt, 4, kd);
  tensor(&f->o, dt, 4, qd);
  tensor(&f->lse, ADNN_DTYPE_F32, 3, ld);
  tensor(&f->bias, dt, 4, bd);
  f->has_bias = bias;
  f->causal = !bias;
}

static adnn_plan *attention(adnn_dtype dt, int bias, spec *s) {
  adnn_attention_desc f;
  att_fwd(&f, dt, bias);
  adnn_plan *p = NULL;
  plan_ok(adnn_plan_create_attention(ctx, &f, &p));
  s->n_in = 3 + bias;
  s->in[0] = (buf){DATA, 2 * 3 * 17 * 16, 0};
  s->in[1] = s->in[2] = (buf){DATA, 2 * 3 * 19 * 16, 0};
  s->in[3] = (buf){DATA, 2 * 3 * 17 * 19, 0};
  s->n_out = 2;
  s->out[0] = (buf){DATA, 2 * 3 * 17 * 16, 0};
  s->out[1] = (buf){PARAM, 2 * 3 * 17, 0};
  return p;
}

static adnn_plan *attention_backward(adnn_dtype dt, int bias, spec *s) {
  adnn_attention_desc f;
  att_fwd(&f, dt, bias);
  adnn_attention_backward_desc d;
  adnn_attention_backward_desc_init(&d);
  d.forward = &f;
  adnn_plan *p = NULL;
  plan_ok(adnn_plan_create_attention_backward(ctx, &d, &p));
  s->n_in = 6 + bias;
  s->in[0] = s->in[3] = s->in[4] = (buf){DATA, 2 * 3 * 17 * 16, 0};
  s->in[1] = s->in[2] = (buf){DATA, 2 * 3 * 19 * 16, 0};
  s->in[5] = (buf){PARAM, 2 * 3 * 17, 0}; /* lse: any values give the same bits on both sides */
  s->in[6] = (buf){DATA, 2 * 3 * 17 * 19, 0};
  s->n_out = 3;
  s->out[0] = (buf){DATA, 2 * 3 * 17 * 16, 0};
  s->out[1] = s->out[2] = (buf){DATA, 2 * 3 * 19 * 16, 0};
  return p;
}

enum {
  C_BWD_DATA,
  C_BWD_WEIGHTS,
  C_BN_TRAINING,
  C_BN_BACKWARD,
  C_NORM_BACKWARD,
  C_SCE,
  C_SCE_BACKWARD,
  C_ATTENTION,
  C_ATTENTION_BACKWARD
};

typedef struct test_case {
  int op;
  const char *name;
  conv_geo g; /* the convolutions' geometry */
  int variant; /* norm: layer; loss: per-sample; attention: bias */
} test_case;

static adnn_plan *build(const test_case *c, adnn_dtype dt, spec *s) {
  memset(s, 0, sizeof *s);
  s->lo = 0.5, s->hi = 1.5;
  switch (c->op) {
  case C_BWD_DATA: return conv_bwd_data(dt, &c->g, s);
  case C_BWD_WEIGHTS: return conv_bwd_weights(dt, &c->g, s);
  case C_BN_TRAINING: return bn_training(dt, s);
  case C_BN_BACKWARD: return bn_backward(dt, s);
  case C_NORM_BACKWARD: return norm_backward(dt, c->variant, s);
  case C_SCE: return sce(dt, c->variant, s);
  case C_SCE_BACKWARD: return sce_backward(dt, c->variant, s);
  case C_ATTENTION: return attention(dt, c->variant, s);
  default: return attention_backward(dt, c->variant, s);
  }
}

/* ---- the check ---- */

static uint16_t to16(adnn_dtype dt, float v) {
  return dt == ADNN_DTYPE_F16 ? adnn_f32_to_f16(v) : adnn_f32_to_bf16(v);
}

static float from16(adnn_dtype dt, uint16_t h) {
  return dt == ADNN_DTYPE_F16 ? adnn_f16_to_f32(h) : adnn_bf16_to_f32(h);
}

static void *dev(size_t bytes) {
  void *p = NULL;
  if (adnn_malloc(ctx, bytes ? bytes : 1, &p) != ADNN_STATUS_SUCCESS) tap_bail(adnn_last_error());
  return p;
}

static void put(void *d, const void *h, size_t bytes) {
  if (adnn_memcpy(ctx, d, h, bytes, ADNN_MEMCPY_HOST_TO_DEVICE) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
}

static void get(void *h, const void *d, size_t bytes) {
  if (adnn_memcpy(ctx, h, d, bytes, ADNN_MEMCPY_DEVICE_TO_HOST) != ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
}

/* One buffer on both sides: host values (F32 for the F32 plan, the 16-bit
 * or F32 or label bits for the 16-bit plan) and their device copies. */
typedef struct pair {
  float *f32;   /* the F32 plan's values (labels: unused) */
  void *h16;    /* the 16-bit plan's host bits (DATA: uint16_t, PARAM: float, LABEL: int32_t) */
  void *d16, *d32;
  size_t bytes16, bytes32;
} pair;

static void pair_make(pair *p, const buf *b, adnn_dtype dt, const spec *s, int output,
                      tap_rng *r) {
  p->bytes16 = b->n * (b->kind == DATA ? 2 : 4);
  p->bytes32 = b->n * 4;
  p->f32 = malloc(p->bytes32);
  p->h16 = malloc(p->bytes16);
  if (!p->f32 || !p->h16) tap_bail("out of memory");
  for (size_t i = 0; i < b->n; i++) {
    if (b->kind == LABEL) {
      ((int32_t *)p->h16)[i] = (int32_t)(tap_rng_next(r) % (uint64_t)s->classes);
      ((int32_t *)p->f32)[i] = ((int32_t *)p->h16)[i];
      continue;
    }
    if (output && !b->read) {
      if (b->kind == DATA)
        ((uint16_t *)p->h16)[i] = POISON;
      else
        ((float *)p->h16)[i] = NAN;
      p->f32[i] = NAN;
      continue;
    }
    const double v = b->kind == PARAM ? tap_rng_uniform(r, s->lo, s->hi)
                                      : tap_rng_uniform(r, -2.0, 2.0);
    if (b->kind == DATA) {
      ((uint16_t *)p->h16)[i] = to16(dt, (float)v);
      p->f32[i] = from16(dt, ((uint16_t *)p->h16)[i]);
    } else {
      ((float *)p->h16)[i] = p->f32[i] = (float)v;
    }
  }
  p->d16 = dev(p->bytes16);
  p->d32 = dev(p->bytes32);
  put(p->d16, p->h16, p->bytes16);
  put(p->d32, p->f32, p->bytes32);
}

static void pair_free(pair *p) {
  adnn_free(ctx, p->d16);
  adnn_free(ctx, p->d32);
  free(p->f32);
  free(p->h16);
}

static void check(const test_case *c, adnn_dtype dt, tap_rng *r) {
  const char *tn = dt == ADNN_DTYPE_F16 ? "f16" : "bf16";
  spec s, s32;
  adnn_plan *p16 = build(c, dt, &s), *p32 = build(c, ADNN_DTYPE_F32, &s32);
  const char *alg = adnn_plan_algorithm(p16);
  ok(alg && strcmp(alg, "lowp") == 0, "%s %s: plan runs lowp (%s)", c->name, tn,
     alg ? alg : "null");
  pair in[8], out[8];
  const void *i16[8], *i32[8];
  void *o16[8], *o32[8];
  for (int i = 0; i < s.n_in; i++) {
    pair_make(&in[i], &s.in[i], dt, &s, 0, r);
    i16[i] = in[i].d16, i32[i] = in[i].d32;
  }
  for (int i = 0; i < s.n_out; i++) {
    pair_make(&out[i], &s.out[i], dt, &s, 1, r);
    o16[i] = out[i].d16, o32[i] = out[i].d32;
  }
  if (adnn_plan_execute_multi(p16, i16, (size_t)s.n_in, o16, (size_t)s.n_out) !=
          ADNN_STATUS_SUCCESS ||
      adnn_plan_execute_multi(p32, i32, (size_t)s.n_in, o32, (size_t)s.n_out) !=
          ADNN_STATUS_SUCCESS)
    tap_bail(adnn_last_error());
  for (int o = 0; o < s.n_out; o++) {
    const buf *b = &s.out[o];
    get(out[o].h16, out[o].d16, out[o].bytes16);
    get(out[o].f32, out[o].d32, out[o].bytes32);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < b->n; i++) {
      int same;
      if (b->kind == DATA) {
        same = ((uint16_t *)out[o].h16)[i] == to16(dt, out[o].f32[i]);
      } else {
        same = memcmp((float *)out[o].h16 + i, out[o].f32 + i, 4) == 0;
      }
      if (!same && !bad++) first = i;
    }
    ok(bad == 0, "%s %s: output %d (%s) equals the F32 plan's%s (%zu of %zu differ)", c->name, tn,
       o, b->kind == DATA ? tn : "f32", b->kind == DATA ? " rounded once" : "", bad, b->n);
    if (bad && b->kind == DATA)
      diag("first at %zu: got 0x%04x want 0x%04x (f32 %.9g)", first,
           ((uint16_t *)out[o].h16)[first], to16(dt, out[o].f32[first]),
           (double)out[o].f32[first]);
    else if (bad)
      diag("first at %zu: got %.9g want %.9g", first, (double)((float *)out[o].h16)[first],
           (double)out[o].f32[first]);
  }
  for (int i = 0; i < s.n_in; i++) pair_free(&in[i]);
  for (int i = 0; i < s.n_out; i++) pair_free(&out[i]);
  adnn_plan_destroy(p16);
  adnn_plan_destroy(p32);
}

int main(void) {
  /* Both plans must run the plugin's own choice, not a tuned one. */
  setenv("ADNN_TUNE", "off", 1);
  if (adnn_context_create("cpu", &ctx) != ADNN_STATUS_SUCCESS) return tap_skip_all("no cpu backend");
  tap_rng r = tap_rng_seed(20261204);
  /* {N, C, H, W, K, R, stride, pad, groups, beta}: 3x3 padded (im2col_gemm),
   * 1x1 (gemm_1x1), depthwise stride 2 (depthwise_direct), each once with
   * beta 1 (the outputs are read, so widened first). */
  const test_case cases[] = {
      {C_BWD_DATA, "conv2d_backward_data 3x3", {2, 5, 9, 11, 7, 3, 1, 1, 1, 0.0}, 0},
      {C_BWD_DATA, "conv2d_backward_data 3x3 beta 1", {2, 5, 9, 11, 7, 3, 1, 1, 1, 1.0}, 0},
      {C_BWD_DATA, "conv2d_backward_data 1x1", {2, 9, 7, 5, 11, 1, 1, 0, 1, 0.0}, 0},
      {C_BWD_DATA, "conv2d_backward_data depthwise", {2, 6, 11, 9, 6, 3, 2, 1, 6, 0.0}, 0},
      {C_BWD_WEIGHTS, "conv2d_backward_weights 3x3", {2, 5, 9, 11, 7, 3, 1, 1, 1, 0.0}, 0},
      {C_BWD_WEIGHTS, "conv2d_backward_weights 3x3 beta 1", {2, 5, 9, 11, 7, 3, 1, 1, 1, 1.0}, 0},
      {C_BWD_WEIGHTS, "conv2d_backward_weights 1x1", {2, 9, 7, 5, 11, 1, 1, 0, 1, 0.0}, 0},
      {C_BWD_WEIGHTS, "conv2d_backward_weights depthwise", {2, 6, 11, 9, 6, 3, 2, 1, 6, 0.0}, 0},
      {C_BN_TRAINING, "batchnorm_training", {0}, 0},
      {C_BN_BACKWARD, "batchnorm_backward", {0}, 0},
      {C_NORM_BACKWARD, "norm_backward rms", {0}, 0},
      {C_NORM_BACKWARD, "norm_backward layer", {0}, 1},
      {C_SCE, "softmax_cross_entropy mean", {0}, 0},
      {C_SCE, "softmax_cross_entropy none", {0}, 1},
      {C_SCE_BACKWARD, "softmax_cross_entropy_backward mean", {0}, 0},
      {C_SCE_BACKWARD, "softmax_cross_entropy_backward none", {0}, 1},
      {C_ATTENTION, "attention causal", {0}, 0},
      {C_ATTENTION, "attention bias", {0}, 1},
      {C_ATTENTION_BACKWARD, "attention_backward causal", {0}, 0},
      {C_ATTENTION_BACKWARD, "attention_backward bias", {0}, 1},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
    for (int t = 0; t < 2; t++) check(&cases[k], t ? ADNN_DTYPE_BF16 : ADNN_DTYPE_F16, &r);
  adnn_context_destroy(ctx);
  return tap_done();
}
