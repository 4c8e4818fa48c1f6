/* Scaled-dot-product attention in the conformance harness: traits, the
 * long-double oracle (doc/ops.md, "Attention"), cases for every option of
 * the descriptor, the oracle's self-tests and the bad descriptors. The
 * outputs are o and (has_lse) lse, NaN-poisoned by the harness; key_lengths
 * is an I32 input, held as doubles on the host and uploaded as int32. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64

/* ------------------------------------------------------------------------ */
/* Traits                                                                    */
/* ------------------------------------------------------------------------ */

static int att_inputs(const harness_desc *hd, harness_tensor *in) {
  const adnn_attention_desc *d = &hd->attention;
  int n = 0;
  in[n++] = (harness_tensor){"q", d->q};
  in[n++] = (harness_tensor){"k", d->k};
  in[n++] = (harness_tensor){"v", d->v};
  if (d->has_bias) in[n++] = (harness_tensor){"bias", d->bias};
  if (d->has_key_lengths) in[n++] = (harness_tensor){"key_lengths", d->key_lengths};
  return n;
}

static adnn_tensor_desc att_output(const harness_desc *hd) { return hd->attention.o; }

static int att_outputs(const harness_desc *hd, harness_tensor *out) {
  const adnn_attention_desc *d = &hd->attention;
  int n = 0;
  out[n++] = (harness_tensor){"o", d->o};
  if (d->has_lse) out[n++] = (harness_tensor){"lse", d->lse};
  return n;
}

/* key_lengths stays I32; lse is F32 for F16/BF16 q (ADNN_OP_PARAM_DTYPE). */
static void att_set_dtype(harness_desc *hd, adnn_dtype dt) {
  adnn_attention_desc *d = &hd->attention;
  d->q.dtype = d->k.dtype = d->v.dtype = d->o.dtype = d->bias.dtype = dt;
  d->lse.dtype = ADNN_OP_PARAM_DTYPE(dt);
}

/* doc/numerics.md, "attention": the scores are dot products of D terms and
 * o is a convex combination of up to Skv rows of v: F32 4e-6 / 2e-5 up to
 * n = D + Skv = 576 terms, grown like sqrt(n / 576) beyond (as the dot
 * products of harness_dot_tolerance); F64 1e-12 / 1e-11. */
static harness_tolerance att_tolerance(const harness_desc *hd, adnn_dtype dt) {
  const adnn_attention_desc *d = &hd->attention;
  if (dt == F64) return (harness_tolerance){1e-12, 1e-11};
  const int64_t n = d->q.rank == 4 && d->k.rank == 4 ? d->q.dims[3] + d->k.dims[2] : 64;
  const double grow = n > 576 ? sqrt((double)n / 576.0) : 1.0;
  const harness_tolerance f32 = {4e-6 * grow, 2e-5 * grow};
  /* F16/BF16 q, k, v (F32 arithmetic): the F32 bound plus one rounding of o. */
  return harness_lowp_tolerance(dt, f32, f32, 1.0);
}

/* key_lengths: uniform in 0..Skv + 2 (beyond Skv is clamped). */
static void fill_key_lengths(harness_buffer *b, int64_t Skv, tap_rng *r) {
  for (int64_t i = 0; i < b->span; i++)
    if (b->member[i]) {
      int64_t n = (int64_t)floor(tap_rng_uniform(r, 0.0, (double)(Skv + 3)));
      if (n > Skv + 2) n = Skv + 2;
      b->v[i] = (double)n;
    }
}

static void att_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  const adnn_attention_desc *d = &hd->attention;
  for (int i = 0; i < 3; i++) harness_fill_uniform(&in[i], r, -1.0, 1.0);
  int at = 3;
  if (d->has_bias && at < n_in) harness_fill_uniform(&in[at++], r, -1.0, 1.0);
  if (d->has_key_lengths && at < n_in && d->k.rank == 4)
    fill_key_lengths(&in[at], d->k.dims[2], r);
}

/* ------------------------------------------------------------------------ */
/* Oracle                                                                    */
/* ------------------------------------------------------------------------ */

/* Whether d's shapes are the definition's; the reason otherwise. */
static int att_shapes(const adnn_attention_desc *d, char *why, size_t why_len) {
  const adnn_tensor_desc *q = &d->q, *k = &d->k, *v = &d->v, *o = &d->o;
  if (q->rank != 4 || k->rank != 4 || v->rank != 4 || o->rank != 4) {
    snprintf(why, why_len, "attention: q, k, v and o must have rank 4");
    return 0;
  }
  const int64_t B = q->dims[0], H = q->dims[1], Sq = q->dims[2], D = q->dims[3];
  const int64_t Hkv = k->dims[1], Skv = k->dims[2], Dv = v->dims[3];
  if (k->dims[0] != B || k->dims[3] != D || v->dims[0] != B || v->dims[1] != Hkv ||
      v->dims[2] != Skv || o->dims[0] != B || o->dims[1] != H || o->dims[2] != Sq ||
      o->dims[3] != Dv || H % Hkv != 0) {
    snprintf(why, why_len, "attention: k must be [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv], o [B, "
             "H, Sq, Dv] with H a multiple of Hkv");
    return 0;
  }
  if (d->has_lse && (d->lse.rank != 3 || d->lse.dims[0] != B || d->lse.dims[1] != H ||
                     d->lse.dims[2] != Sq)) {
    snprintf(why, why_len, "attention: lse must be [B, H, Sq]");
    return 0;
  }
  if (d->has_bias) {
    const int64_t target[4] = {B, H, Sq, Skv};
    if (d->bias.rank < 1 || d->bias.rank > 4) {
      snprintf(why, why_len, "attention: bias must have rank 1..4");
      return 0;
    }
    for (int i = 0; i < d->bias.rank; i++) {
      const int64_t dim = d->bias.dims[i], want = target[4 - d->bias.rank + i];
      if (dim != 1 && dim != want) {
        snprintf(why, why_len, "attention: bias does not broadcast to [B, H, Sq, Skv]");
        return 0;
      }
    }
  }
  if (d->has_key_lengths && (d->key_lengths.rank != 1 || d->key_lengths.dims[0] != B)) {
    snprintf(why, why_len, "attention: key_lengths must be [B]");
    return 0;
  }
  return 1;
}

/* The offset of bias element [b, h, i, j] of the broadcast bias: dims of 1
 * and missing leading dims repeat. */
static int64_t bias_offset(const adnn_tensor_desc *t, const int64_t idx[4]) {
  int64_t off = 0;
  for (int i = 0; i < t->rank; i++) {
    const int64_t x = idx[4 - t->rank + i];
    off += (t->dims[i] == 1 ? 0 : x) * t->strides[i];
  }
  return off;
}

/* s[b,h,i,j] = scale * q . k + bias over the keys j < limit(i), limit(i) =
 * min(clamp(key_lengths[b], 0, Skv), i + Skv - Sq + 1 when causal); then o
 * = sum_j exp(s_j - lse) v_j and lse = log sum_j exp(s_j); o = 0 and lse =
 * -inf when no key is left or every score is -inf. */
static int att_oracle_outputs(const harness_desc *hd, const double *const *in, double *const *out,
                              char *why, size_t why_len) {
  const adnn_attention_desc *d = &hd->attention;
  if (!att_shapes(d, why, why_len)) return -1;
  const adnn_tensor_desc *qd = &d->q, *kd = &d->k, *vd = &d->v, *od = &d->o, *ld = &d->lse;
  const int64_t B = qd->dims[0], H = qd->dims[1], Sq = qd->dims[2], D = qd->dims[3];
  const int64_t Hkv = kd->dims[1], Skv = kd->dims[2], Dv = vd->dims[3], group = H / Hkv;
  const long double scale = d->scale == 0.0 ? 1.0L / sqrtl((long double)D) : d->scale;
  const double *q = in[0], *k = in[1], *v = in[2];
  int at = 3;
  const double *bias = d->has_bias ? in[at++] : NULL;
  const double *kl = d->has_key_lengths ? in[at++] : NULL;
  long double *s = malloc((size_t)Skv * sizeof *s);
  if (s == NULL) {
    snprintf(why, why_len, "attention: out of memory for the oracle's scores");
    return -1;
  }
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t i = 0; i < Sq; i++) {
        const int64_t g = h / group;
        int64_t lim = Skv;
        if (kl) {
          const int64_t n = (int64_t)kl[b * d->key_lengths.strides[0]];
          lim = n < 0 ? 0 : n < Skv ? n : Skv;
        }
        if (d->causal) {
          const int64_t c = i + Skv - Sq + 1;
          if (c < lim) lim = c < 0 ? 0 : c;
        }
        long double m = -INFINITY;
        for (int64_t j = 0; j < lim; j++) {
          harness_sum dot;
          harness_sum_init(&dot);
          for (int64_t x = 0; x < D; x++)
            harness_sum_add(&dot, (long double)q[b * qd->strides[0] + h * qd->strides[1] +
                                                 i * qd->strides[2] + x * qd->strides[3]] *
                                      k[b * kd->strides[0] + g * kd->strides[1] +
                                        j * kd->strides[2] + x * kd->strides[3]]);
          s[j] = scale * harness_sum_value(&dot);
          if (bias) {
            const int64_t idx[4] = {b, h, i, j};
            s[j] += bias[bias_offset(&d->bias, idx)];
          }
          if (s[j] > m || isnan(s[j])) m = isnan(m) ? m : s[j];
        }
        const int64_t oo = b * od->strides[0] + h * od->strides[1] + i * od->strides[2];
        if (m == -INFINITY) {
          for (int64_t c = 0; c < Dv; c++) out[0][oo + c * od->strides[3]] = 0.0;
          if (d->has_lse)
            out[1][b * ld->strides[0] + h * ld->strides[1] + i * ld->strides[2]] = -INFINITY;
          continue;
        }
        harness_sum sum;
        harness_sum_init(&sum);
        for (int64_t j = 0; j < lim; j++) {
          s[j] = expl(s[j] - m);
          harness_sum_add(&sum, s[j]);
        }
        const long double total = harness_sum_value(&sum);
        for (int64_t c = 0; c < Dv; c++) {
          harness_sum acc;
          harness_sum_init(&acc);
          for (int64_t j = 0; j < lim; j++)
            harness_sum_add(&acc, s[j] * v[b * vd->strides[0] + g * vd->strides[1] +
                                           j * vd->strides[2] + c * vd->strides[3]]);
          out[0][oo + c * od->strides[3]] = (double)(harness_sum_value(&acc) / total);
        }
        if (d->has_lse)
          out[1][b * ld->strides[0] + h * ld->strides[1] + i * ld->strides[2]] =
              (double)(m + logl(total));
      }
  free(s);
  return 0;
}

static int att_oracle(const harness_desc *hd, const double *const *in, double *y, char *why,
                      size_t why_len) {
  (void)hd;
  (void)in;
  (void)y;
  snprintf(why, why_len, "attention runs through its outputs");
  return -1;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

enum att_layout { AL_BHSD, AL_BSHD, AL_PADDED };

/* Key lengths: none, random (0..Skv + 2), or with the special values 0 (a
 * fully masked batch), Skv + 5 and -3 (clamped) in batches 0, 1 and 2. */
enum { KL_NONE, KL_RANDOM, KL_SPECIAL };

/* Special bias values: a quarter of the entries -inf, or row 0 of every
 * (b, h) all -inf (a row masked by the bias alone). */
enum { BIAS_PLAIN, BIAS_NEGINF, BIAS_ROW0 };

typedef struct att_shape {
  int64_t B, H, Hkv, Sq, Skv, D, Dv;
  int causal;
  int bias_rank;        /* 0: no bias */
  int64_t bias_dims[4]; /* its dims (bias_rank of them) */
  int bias_special;
  int kl;
  enum att_layout layout;
  int no_lse;
  double scale;     /* 0: the default */
  double magnitude; /* q and k uniform in [-magnitude, magnitude) */
} att_shape;

/* [B, H, S, D] in a layout: packed BHSD, BSHD (strides [S*H*D, D, H*D, 1]),
 * or padded BHSD. */
static adnn_tensor_desc att_tensor(adnn_dtype dt, int64_t B, int64_t H, int64_t S, int64_t D,
                                   enum att_layout l) {
  if (l == AL_BSHD) {
    const int64_t dims[4] = {B, H, S, D}, strides[4] = {S * H * D, D, H * D, 1};
    adnn_tensor_desc t;
    adnn_tensor_desc_init_strided(&t, dt, 4, dims, strides);
    return t;
  }
  return harness_tensor_desc4(dt, B, H, S, D, l == AL_PADDED ? HARNESS_PADDED : HARNESS_PACKED);
}

static void att_describe(const att_shape *s, adnn_dtype dt, adnn_attention_desc *d) {
  adnn_attention_desc_init(d);
  d->q = att_tensor(dt, s->B, s->H, s->Sq, s->D, s->layout);
  d->k = att_tensor(dt, s->B, s->Hkv, s->Skv, s->D, s->layout);
  d->v = att_tensor(dt, s->B, s->Hkv, s->Skv, s->Dv, s->layout);
  d->o = att_tensor(dt, s->B, s->H, s->Sq, s->Dv, s->layout);
  const int64_t ld[3] = {s->B, s->H, s->Sq};
  d->lse = harness_tensor_desc(ADNN_OP_PARAM_DTYPE(dt), 3, ld, s->layout == AL_PADDED ? HARNESS_PADDED
                                                                   : HARNESS_PACKED);
  d->has_lse = !s->no_lse;
  d->causal = s->causal;
  d->scale = s->scale;
  if (s->bias_rank > 0) {
    d->has_bias = 1;
    d->bias = harness_tensor_desc(dt, s->bias_rank, s->bias_dims,
                                  s->layout == AL_PADDED ? HARNESS_PADDED : HARNESS_PACKED);
  }
  if (s->kl != KL_NONE) {
    d->has_key_lengths = 1;
    const int64_t stride = s->layout == AL_PADDED ? 3 : 1;
    adnn_tensor_desc_init_strided(&d->key_lengths, ADNN_DTYPE_I32, 1, &s->B, &stride);
  }
}

static void att_data(const att_shape *s, const adnn_attention_desc *d, harness_buffer *in,
                     tap_rng *r) {
  const double mag = s->magnitude > 0 ? s->magnitude : 1.0;
  harness_fill_uniform(&in[0], r, -mag, mag);
  harness_fill_uniform(&in[1], r, -mag, mag);
  harness_fill_uniform(&in[2], r, -1.0, 1.0);
  int at = 3;
  if (d->has_bias) {
    harness_buffer *b = &in[at++];
    harness_fill_uniform(b, r, -2.0, 2.0);
    const int64_t n = harness_element_count(&d->bias);
    const int64_t last = d->bias.dims[d->bias.rank - 1];
    for (int64_t e = 0; e < n; e++) {
      int neginf = 0;
      if (s->bias_special == BIAS_NEGINF) neginf = tap_rng_uniform(r, 0.0, 1.0) < 0.25;
      /* BIAS_ROW0: a rank >= 2 bias's row 0 along its Sq dim. */
      if (s->bias_special == BIAS_ROW0 && d->bias.rank >= 2)
        neginf = (e / last) % d->bias.dims[d->bias.rank - 2] == 0;
      if (neginf) harness_set_element(b, e, -INFINITY);
    }
  }
  if (d->has_key_lengths) {
    harness_buffer *b = &in[at];
    fill_key_lengths(b, s->Skv, r);
    if (s->kl == KL_SPECIAL) {
      const double special[3] = {0.0, (double)(s->Skv + 5), -3.0};
      for (int64_t i = 0; i < s->B && i < 3; i++)
        b->v[harness_offset(&d->key_lengths, i)] = special[i];
    }
  }
}

static const char *layout_word(enum att_layout l) {
  return l == AL_BSHD ? " bshd" : l == AL_PADDED ? " padded" : "";
}

static void att_case(harness_suite *suite, const att_shape *s, adnn_dtype dt) {
  harness_case c;
  char bias[96] = "";
  if (s->bias_rank > 0) {
    size_t used = (size_t)snprintf(bias, sizeof bias, " bias[");
    for (int i = 0; i < s->bias_rank; i++)
      used += (size_t)snprintf(bias + used, sizeof bias - used, "%s%lld", i ? "," : "",
                               (long long)s->bias_dims[i]);
    snprintf(bias + used, sizeof bias - used, "]%s",
             s->bias_special == BIAS_NEGINF ? "-inf" : s->bias_special == BIAS_ROW0 ? "-inf-row0"
                                                                                    : "");
  }
  harness_case_init(&c, harness_op_find("attention"), dt,
                    "b%lld h%lld hkv%lld sq%lld skv%lld d%lld dv%lld%s%s%s%s%s%s",
                    (long long)s->B, (long long)s->H, (long long)s->Hkv, (long long)s->Sq,
                    (long long)s->Skv, (long long)s->D, (long long)s->Dv,
                    s->causal ? " causal" : "", bias,
                    s->kl == KL_RANDOM ? " kl" : s->kl == KL_SPECIAL ? " kl0" : "",
                    layout_word(s->layout), s->no_lse ? " nolse" : "",
                    s->scale != 0.0 ? " scale" : "");
  att_describe(s, dt, &c.desc.attention);
  if (harness_case_alloc(&c) != 0) return;
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  att_data(s, &c.desc.attention, c.in, &r);
  harness_submit(suite, &c);
}

#define NOB 0, {0, 0, 0, 0}, 0
static const att_shape att_table[] = {
    /* B  H Hkv  Sq  Skv    D   Dv  causal  bias          kl          layout  nolse scale mag */
    {1, 1, 1, 4, 4, 8, 8, 0, NOB, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    /* odd lengths, several key blocks */
    {2, 3, 3, 37, 53, 32, 32, 0, NOB, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    {1, 2, 2, 129, 197, 64, 64, 0, NOB, KL_NONE, AL_BHSD, 0, 0.0, 2.0},
    /* decoding: Sq = 1 */
    {2, 4, 4, 1, 300, 64, 64, 0, NOB, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    {1, 4, 4, 1, 77, 64, 64, 1, NOB, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    /* Skv much longer than Sq */
    {1, 2, 2, 5, 1000, 32, 32, 0, NOB, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    /* grouped-query and multi-query attention */
    {2, 8, 2, 33, 65, 64, 64, 0, NOB, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    {1, 6, 1, 17, 40, 32, 32, 1, NOB, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    {1, 12, 1, 1, 90, 64, 64, 0, NOB, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    /* head sizes 80 and 128, Dv != D */
    {1, 2, 2, 70, 70, 80, 80, 0, NOB, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    {1, 2, 1, 65, 130, 128, 128, 1, NOB, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    {1, 2, 2, 40, 50, 64, 32, 0, NOB, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    {1, 2, 2, 40, 50, 32, 80, 1, NOB, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    {2, 1, 1, 9, 11, 7, 13, 0, NOB, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    /* causal: Sq == Skv, Sq < Skv, Sq > Skv (the top Sq - Skv rows see no key) */
    {1, 2, 2, 100, 100, 64, 64, 1, NOB, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    {1, 2, 2, 20, 150, 64, 64, 1, NOB, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    {1, 2, 2, 70, 30, 32, 32, 1, NOB, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    {2, 2, 1, 257, 257, 64, 64, 1, NOB, KL_NONE, AL_BHSD, 0, 0.0, 2.0},
    /* bias broadcasting: rank 4 full, [Sq, Skv] with -inf entries, [Skv]
     * (a key padding mask), [H, 1, Skv], [B, 1, 1, Skv], [1, Skv], and a
     * bias whose row 0 is all -inf */
    {2, 2, 2, 19, 23, 32, 32, 0, 4, {2, 2, 19, 23}, BIAS_PLAIN, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    {1, 3, 3, 30, 41, 32, 32, 0, 2, {30, 41}, BIAS_NEGINF, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    {2, 2, 2, 12, 70, 32, 32, 0, 1, {70}, BIAS_NEGINF, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    {2, 4, 2, 15, 33, 32, 32, 1, 3, {4, 1, 33}, BIAS_PLAIN, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    {3, 2, 2, 10, 66, 32, 32, 0, 4, {3, 1, 1, 66}, BIAS_NEGINF, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    {1, 2, 2, 16, 20, 16, 16, 0, 2, {1, 20}, BIAS_PLAIN, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    {2, 2, 2, 8, 9, 16, 16, 0, 2, {8, 9}, BIAS_ROW0, KL_NONE, AL_BHSD, 0, 0.0, 1.0},
    /* key lengths: random, and 0 / > Skv / negative */
    {4, 2, 2, 13, 70, 32, 32, 0, NOB, KL_RANDOM, AL_BHSD, 0, 0.0, 1.0},
    {3, 2, 1, 21, 33, 32, 32, 0, NOB, KL_SPECIAL, AL_BHSD, 0, 0.0, 1.0},
    {3, 2, 2, 40, 40, 32, 32, 1, 2, {40, 40}, BIAS_NEGINF, KL_SPECIAL, AL_BHSD, 0, 0.0, 1.0},
    /* layouts: BSHD and padded strides */
    {2, 4, 2, 33, 47, 64, 64, 1, NOB, KL_NONE, AL_BSHD, 0, 0.0, 1.0},
    {2, 3, 3, 17, 29, 24, 40, 0, 4, {2, 1, 17, 29}, BIAS_PLAIN, KL_RANDOM, AL_PADDED, 0, 0.0, 1.0},
    /* inference without lse; an explicit scale */
    {1, 2, 2, 31, 31, 32, 32, 1, NOB, KL_NONE, AL_BHSD, 1, 0.0, 1.0},
    {1, 2, 2, 25, 60, 32, 32, 0, NOB, KL_NONE, AL_BSHD, 0, 0.3, 1.0},
    /* large scores: the running maximum must keep exp() in range */
    {1, 1, 1, 50, 300, 64, 64, 0, NOB, KL_NONE, AL_BHSD, 0, 0.0, 6.0},
};
#undef NOB
#define N_ATT ((int)(sizeof att_table / sizeof att_table[0]))

/* F64: a cross-section of the options. */
static const int att_f64_rows[] = {1, 3, 6, 13, 16, 20, 26, 28, 29, 30};

static void att_cases(harness_suite *s) {
  for (int i = 0; i < N_ATT; i++) att_case(s, &att_table[i], F32);
  for (size_t i = 0; i < sizeof att_f64_rows / sizeof att_f64_rows[0]; i++)
    att_case(s, &att_table[att_f64_rows[i]], F64);
  /* F16 and BF16 (q, k, v, bias and o of the type, lse F32): the same
   * cross-section plus the large scores, GQA and decoding rows. */
  static const int lowp_rows[] = {1, 2, 3, 6, 13, 16, 17, 20, 22, 26, 28, 29, 30, 32};
  static const adnn_dtype lowp[2] = {ADNN_DTYPE_F16, ADNN_DTYPE_BF16};
  for (int t = 0; t < 2; t++)
    for (size_t i = 0; i < sizeof lowp_rows / sizeof lowp_rows[0]; i++)
      att_case(s, &att_table[lowp_rows[i]], lowp[t]);
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracle                                                  */
/* ------------------------------------------------------------------------ */

static void att_oracle_selftests(const harness_report *rep) {
  /* One query, two keys, D = Dv = 1, scale 1: q = 1, k = [0, ln 3], so the
   * scores are [0, ln 3] and softmax is [1/4, 3/4]; v = [1, 5] gives
   * o = 1/4 + 15/4 = 4 and lse = log(1 + 3) = ln 4. */
  const att_shape one = {1, 1, 1, 1, 2, 1, 1, 0, 0, {0, 0, 0, 0}, 0, KL_NONE, AL_BHSD, 0, 1.0, 1};
  harness_desc hd;
  att_describe(&one, F64, &hd.attention);
  const double q[1] = {1.0}, k[2] = {0.0, log(3.0)}, v[2] = {1.0, 5.0};
  const double *in[3] = {q, k, v};
  double o[1] = {NAN}, lse[1] = {NAN};
  double *out[2] = {o, lse};
  char why[256];
  int good = att_oracle_outputs(&hd, in, out, why, sizeof why) == 0;
  harness_ok(rep, good && harness_close(o[0], 4.0, 1e-15) && harness_close(lse[0], log(4.0), 1e-15),
             "oracle: softmax([0, ln 3]) . [1, 5] = 4, lse ln 4 by hand (got %g, %g)", o[0],
             lse[0]);

  /* Causal with Sq = 2 > Skv = 1 (bottom-right alignment): query 0 may see
   * keys j <= 0 + 1 - 2 = -1, none: o = 0, lse = -inf; query 1 sees key 0
   * alone: o = v0 = 7, lse = s0 = q1 * k0 = 2 * 3 = 6. */
  const att_shape cz = {1, 1, 1, 2, 1, 1, 1, 1, 0, {0, 0, 0, 0}, 0, KL_NONE, AL_BHSD, 0, 1.0, 1};
  att_describe(&cz, F64, &hd.attention);
  const double q2[2] = {5.0, 2.0}, k2[1] = {3.0}, v2[1] = {7.0};
  const double *in2[3] = {q2, k2, v2};
  double o2[2] = {NAN, NAN}, l2[2] = {NAN, NAN};
  double *out2[2] = {o2, l2};
  good = att_oracle_outputs(&hd, in2, out2, why, sizeof why) == 0;
  harness_ok(rep, good && o2[0] == 0.0 && l2[0] == -INFINITY && harness_close(o2[1], 7.0, 1e-15) &&
                      harness_close(l2[1], 6.0, 1e-15),
             "oracle: causal Sq > Skv masks the top row fully (o 0, lse -inf) and query 1 sees "
             "key 0 (got %g %g, %g %g)", o2[0], o2[1], l2[0], l2[1]);

  /* Key length 1 of 2 keys with a bias [Skv] = [0.5, 100]: only key 0 is
   * left, so o = v0 = 1 and lse = q k0 + 0.5 = 0.5 (k0 = 0). */
  const att_shape kb = {1, 1, 1, 1, 2, 1, 1, 0, 1, {2, 0, 0, 0}, 0, KL_RANDOM, AL_BHSD, 0, 1.0, 1};
  att_describe(&kb, F64, &hd.attention);
  const double bias[2] = {0.5, 100.0}, klen[1] = {1.0};
  const double *in3[5] = {q, k, v, bias, klen};
  good = att_oracle_outputs(&hd, in3, out, why, sizeof why) == 0;
  harness_ok(rep, good && harness_close(o[0], 1.0, 1e-15) && harness_close(lse[0], 0.5, 1e-15),
             "oracle: key_lengths 1 hides key 1 and its bias of 100 (got %g, %g)", o[0], lse[0]);
}

/* ------------------------------------------------------------------------ */
/* Bad descriptors                                                           */
/* ------------------------------------------------------------------------ */

static void att_bad_descriptors(const harness_report *rep, adnn_context *ctx, const char *bn) {
  const att_shape sh = {2, 4, 2, 5, 6, 8, 8, 0, 0, {0, 0, 0, 0}, 0, KL_NONE, AL_BHSD, 0, 0.0, 1};
  adnn_attention_desc d;
  adnn_plan *plan = NULL;
#define BAD(status, needle, what)                                                             \
  do {                                                                                        \
    plan = NULL;                                                                              \
    harness_is_status(rep, adnn_plan_create_attention(ctx, &d, &plan), status,                \
                      "%s attention: %s", bn, what);                                          \
    harness_contains(rep, adnn_last_error(), needle, "%s attention: %s: message", bn, what);  \
    harness_ok(rep, plan == NULL, "%s attention: %s: no plan", bn, what);                     \
    att_describe(&sh, F32, &d);                                                               \
  } while (0)
  att_describe(&sh, F32, &d);
  d.k = att_tensor(F32, 2, 3, 6, 8, AL_BHSD);
  d.v = att_tensor(F32, 2, 3, 6, 8, AL_BHSD);
  BAD(ADNN_STATUS_BAD_PARAM, "not a multiple", "H = 4 with Hkv = 3");
  d.k = att_tensor(F32, 2, 2, 6, 16, AL_BHSD);
  BAD(ADNN_STATUS_BAD_PARAM, "head size D", "k's D differs from q's");
  d.v = att_tensor(F32, 2, 2, 7, 8, AL_BHSD);
  BAD(ADNN_STATUS_BAD_PARAM, "Skv", "v's Skv differs from k's");
  d.k = att_tensor(F32, 3, 2, 6, 8, AL_BHSD);
  BAD(ADNN_STATUS_BAD_PARAM, "batch size B", "k's B differs from q's");
  d.o = att_tensor(F32, 2, 4, 5, 9, AL_BHSD);
  BAD(ADNN_STATUS_BAD_PARAM, "o has dims", "o's Dv differs from v's");
  {
    const int64_t dims[3] = {2, 4, 5};
    d.q = harness_tensor_desc(F32, 3, dims, HARNESS_PACKED);
  }
  BAD(ADNN_STATUS_BAD_PARAM, "q has rank 3", "a rank-3 q");
  {
    const int64_t dims[3] = {2, 4, 6};
    d.lse = harness_tensor_desc(F32, 3, dims, HARNESS_PACKED);
  }
  BAD(ADNN_STATUS_BAD_PARAM, "lse has dims", "lse not [B, H, Sq]");
  d.has_bias = 1;
  {
    const int64_t dims[2] = {4, 6};
    d.bias = harness_tensor_desc(F32, 2, dims, HARNESS_PACKED);
  }
  BAD(ADNN_STATUS_BAD_PARAM, "does not broadcast", "a bias [4, 6] against Sq = 5");
  d.has_bias = 1;
  {
    const int64_t dims[5] = {1, 2, 4, 5, 6};
    d.bias = harness_tensor_desc(F32, 5, dims, HARNESS_PACKED);
  }
  BAD(ADNN_STATUS_BAD_PARAM, "bias has rank 5", "a rank-5 bias");
  d.has_bias = 1;
  d.bias = att_tensor(F64, 2, 4, 5, 6, AL_BHSD);
  BAD(ADNN_STATUS_BAD_PARAM, "bias has dtype f64", "an f64 bias with f32 q");
  d.has_key_lengths = 1;
  d.key_lengths = harness_vector_desc(F32, 2);
  BAD(ADNN_STATUS_BAD_PARAM, "i32", "f32 key lengths");
  d.has_key_lengths = 1;
  d.key_lengths = harness_vector_desc(ADNN_DTYPE_I32, 3);
  BAD(ADNN_STATUS_BAD_PARAM, "one length per batch", "key lengths not [B]");
  d.scale = -1.0;
  BAD(ADNN_STATUS_BAD_PARAM, "scale", "a negative scale");
  d.scale = NAN;
  BAD(ADNN_STATUS_BAD_PARAM, "scale", "a NaN scale");
  d.scale = 1e39;
  BAD(ADNN_STATUS_BAD_PARAM, "beyond the F32 range", "an F32 scale above FLT_MAX");
  d.k.dtype = F64;
  BAD(ADNN_STATUS_BAD_PARAM, "k has dtype f64", "k of another dtype");
  d.o.strides[3] = 0;
  BAD(ADNN_STATUS_BAD_PARAM, "share memory", "o with a zero stride");
  d.q.dtype = d.k.dtype = d.v.dtype = d.o.dtype = d.lse.dtype = ADNN_DTYPE_I32;
  BAD(ADNN_STATUS_NOT_SUPPORTED, "not supported", "i32 tensors");
#undef BAD
  /* A plan with lse takes two outputs; one is refused. */
  att_describe(&sh, F32, &d);
  const adnn_status st = adnn_plan_create_attention(ctx, &d, &plan);
  if (st == ADNN_STATUS_NOT_SUPPORTED) {
    /* A backend without attention yet (the CUDA stub) says so at creation. */
    harness_skip(rep, "%s attention: the backend does not run attention: %s", bn,
                 adnn_last_error());
  } else if (harness_is_status(rep, st, ADNN_STATUS_SUCCESS, "%s attention: a valid plan", bn)) {
    void *buf = NULL;
    if (adnn_malloc(ctx, 8192, &buf) == ADNN_STATUS_SUCCESS) {
      const void *in[3] = {buf, (char *)buf + 2048, (char *)buf + 4096};
      void *out[1] = {(char *)buf + 6144};
      harness_is_status(rep, adnn_plan_execute_multi(plan, in, 3, out, 1), ADNN_STATUS_BAD_PARAM,
                        "%s attention: one output where lse makes two is refused", bn);
      harness_contains(rep, adnn_last_error(), "2 output(s)",
                       "%s attention: the message gives the output count", bn);
      adnn_free(ctx, buf);
    }
    adnn_plan_destroy(plan);
  }
}

const harness_op_traits harness_attention_traits = {
    .inputs = att_inputs,
    .output = att_output,
    .set_dtype = att_set_dtype,
    .oracle = att_oracle,
    .tolerance = att_tolerance,
    .fill = att_fill,
    .variant_count = 1,
    .cases = att_cases,
    .oracle_selftests = att_oracle_selftests,
    .bad_descriptors = att_bad_descriptors,
    .outputs = att_outputs,
    .oracle_outputs = att_oracle_outputs,
};
