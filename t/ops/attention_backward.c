/* Attention backward in the conformance harness: traits, the long-double
 * oracle (doc/ops.md, "Attention backward"), cases, the oracle's self-tests
 * and the bad descriptors.
 *
 * The inputs o and lse of a case are what the forward pass would have saved:
 * this file's own long-double forward (written from doc/ops.md's attention
 * definition, independent of t/ops/attention.c and of every kernel) computes
 * them from the case's q, k, v, bias and key lengths and rounds them to the
 * dtype, so that the backward sees consistent data. The oracle itself then
 * follows the backward's definition from the inputs it is given (P from lse,
 * D_i from o and do), as the library does. Key lengths are I32 inputs: the
 * harness holds them as doubles and uploads them as int32. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64

static const adnn_attention_desc *fwd_of(const harness_desc *hd) {
  return hd->attention_backward.forward;
}

/* ------------------------------------------------------------------------ */
/* Traits                                                                    */
/* ------------------------------------------------------------------------ */

/* q, k, v, o, do (o's layout), lse, then bias and key_lengths when present. */
static int ab_inputs(const harness_desc *hd, harness_tensor *in) {
  const adnn_attention_desc *f = fwd_of(hd);
  int n = 0;
  in[n++] = (harness_tensor){"q", f->q};
  in[n++] = (harness_tensor){"k", f->k};
  in[n++] = (harness_tensor){"v", f->v};
  in[n++] = (harness_tensor){"o", f->o};
  in[n++] = (harness_tensor){"do", f->o};
  in[n++] = (harness_tensor){"lse", f->lse};
  if (f->has_bias) in[n++] = (harness_tensor){"bias", f->bias};
  if (f->has_key_lengths) in[n++] = (harness_tensor){"key_lengths", f->key_lengths};
  return n;
}

static adnn_tensor_desc ab_output(const harness_desc *hd) { return fwd_of(hd)->q; }

/* dq, dk, dv in q's, k's and v's layouts. */
static int ab_outputs(const harness_desc *hd, harness_tensor *out) {
  const adnn_attention_desc *f = fwd_of(hd);
  out[0] = (harness_tensor){"dq", f->q};
  out[1] = (harness_tensor){"dk", f->k};
  out[2] = (harness_tensor){"dv", f->v};
  return 3;
}

/* The key lengths stay I32. The forward descriptor is the case's own
 * storage (or adnn-bench's): set its dtype there. */
static void ab_set_dtype(harness_desc *hd, adnn_dtype dt) {
  adnn_attention_desc *f = (adnn_attention_desc *)fwd_of(hd);
  f->q.dtype = f->k.dtype = f->v.dtype = f->o.dtype = f->bias.dtype = dt;
  f->lse.dtype = ADNN_OP_PARAM_DTYPE(dt); /* F32 for F16/BF16 q */
}

/* ------------------------------------------------------------------------ */
/* Shapes, shared by the forward and backward oracles                        */
/* ------------------------------------------------------------------------ */

typedef struct ab_shape {
  int64_t B, H, Hkv, Sq, Skv, D, Dv;
  long double scale;
} ab_shape;

static int same_dims(const adnn_tensor_desc *t, int rank, int64_t d0, int64_t d1, int64_t d2,
                     int64_t d3) {
  const int64_t want[4] = {d0, d1, d2, d3};
  if (t->rank != rank) return 0;
  for (int i = 0; i < rank; i++)
    if (t->dims[i] != want[i]) return 0;
  return 1;
}

/* The shape of f per doc/ops.md, or -1 with the reason: q [B, H, Sq, D],
 * k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv], o [B, H, Sq, Dv], lse [B, H, Sq],
 * H a multiple of Hkv, a bias of rank 1..4 that broadcasts to [B, H, Sq,
 * Skv], key_lengths [B] of I32. */
static int ab_shape_of(const adnn_attention_desc *f, ab_shape *s, char *why, size_t why_len) {
  const adnn_tensor_desc *q = &f->q, *k = &f->k, *v = &f->v;
  if (q->rank != 4 || k->rank != 4 || v->rank != 4) {
    snprintf(why, why_len, "attention_backward: q, k and v must have rank 4");
    return -1;
  }
  s->B = q->dims[0], s->H = q->dims[1], s->Sq = q->dims[2], s->D = q->dims[3];
  s->Hkv = k->dims[1], s->Skv = k->dims[2], s->Dv = v->dims[3];
  if (!f->has_lse || s->Hkv < 1 || s->H % s->Hkv != 0 ||
      !same_dims(k, 4, s->B, s->Hkv, s->Skv, s->D) ||
      !same_dims(v, 4, s->B, s->Hkv, s->Skv, s->Dv) ||
      !same_dims(&f->o, 4, s->B, s->H, s->Sq, s->Dv) ||
      !same_dims(&f->lse, 3, s->B, s->H, s->Sq, 0)) {
    snprintf(why, why_len, "attention_backward: shapes disagree with doc/ops.md (or no lse)");
    return -1;
  }
  if (f->has_bias) {
    const int64_t full[4] = {s->B, s->H, s->Sq, s->Skv};
    const adnn_tensor_desc *b = &f->bias;
    int ok = b->rank >= 1 && b->rank <= 4;
    for (int i = 0; ok && i < b->rank; i++) {
      const int64_t d = b->dims[b->rank - 1 - i];
      ok = d == 1 || d == full[3 - i];
    }
    if (!ok) {
      snprintf(why, why_len, "attention_backward: the bias does not broadcast");
      return -1;
    }
  }
  if (f->has_key_lengths && (f->key_lengths.rank != 1 || f->key_lengths.dims[0] != s->B ||
                             f->key_lengths.dtype != ADNN_DTYPE_I32)) {
    snprintf(why, why_len, "attention_backward: key_lengths must be [B] of i32");
    return -1;
  }
  s->scale = f->scale == 0.0 ? 1.0L / sqrtl((long double)s->D) : (long double)f->scale;
  return 0;
}

static int64_t at4(const adnn_tensor_desc *t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return a * t->strides[0] + b * t->strides[1] + c * t->strides[2] + d * t->strides[3];
}
static int64_t at3(const adnn_tensor_desc *t, int64_t a, int64_t b, int64_t c) {
  return a * t->strides[0] + b * t->strides[1] + c * t->strides[2];
}

/* The bias element for [b, h, i, j], broadcast from the right. */
static long double bias_at(const adnn_attention_desc *f, const double *bias, int64_t b, int64_t h,
                           int64_t i, int64_t j) {
  const int64_t idx[4] = {b, h, i, j};
  const adnn_tensor_desc *t = &f->bias;
  int64_t off = 0;
  for (int x = 0; x < t->rank; x++) {
    const int64_t d = t->dims[t->rank - 1 - x];
    if (d != 1) off += idx[3 - x] * t->strides[t->rank - 1 - x];
  }
  return bias[off];
}

/* The keys batch b may see: key_lengths[b] clamped to 0..Skv. */
static int64_t key_limit(const adnn_attention_desc *f, const ab_shape *s, const double *kl,
                         int64_t b) {
  if (!f->has_key_lengths) return s->Skv;
  const double n = kl[b * f->key_lengths.strides[0]];
  return n < 0 ? 0 : n > (double)s->Skv ? s->Skv : (int64_t)n;
}

/* The score s[b,h,i,j] (-inf when masked). */
static long double score(const adnn_attention_desc *f, const ab_shape *s, const double *const *in,
                         int64_t b, int64_t h, int64_t i, int64_t j, int64_t limit) {
  if (j >= limit || (f->causal && j > i + s->Skv - s->Sq)) return -INFINITY;
  const int64_t g = h / (s->H / s->Hkv);
  long double dot = 0.0L;
  for (int64_t d = 0; d < s->D; d++)
    dot += (long double)in[0][at4(&f->q, b, h, i, d)] * in[1][at4(&f->k, b, g, j, d)];
  long double v = s->scale * dot;
  if (f->has_bias) v += bias_at(f, in[6], b, h, i, j);
  return v;
}

/* The inputs' index of key_lengths. */
static int kl_index(const adnn_attention_desc *f) { return 6 + (f->has_bias ? 1 : 0); }

/* ------------------------------------------------------------------------ */
/* The forward (for the cases' o and lse) and the backward oracle            */
/* ------------------------------------------------------------------------ */

/* o and lse of the forward pass in long double, rounded to the dtype, into
 * the buffers o and lse (their layouts in f): for each row, the max-shifted
 * log-sum-exp of the scores and the probability-weighted sum of v; a fully
 * masked row gives o = 0 and lse = -inf. `in` holds q, k, v at indices 0..2,
 * the bias at 6 and the key lengths after it, as the backward's inputs. */
static int ab_forward(const adnn_attention_desc *f, const double *const *in, double *o,
                      double *lse) {
  ab_shape s;
  char why[128];
  if (ab_shape_of(f, &s, why, sizeof why) != 0) return -1;
  long double *row = malloc((size_t)(s.Skv > 0 ? s.Skv : 1) * sizeof *row);
  if (!row) return -1;
  const double *kl = f->has_key_lengths ? in[kl_index(f)] : NULL;
  const adnn_dtype dt = f->q.dtype;
  for (int64_t b = 0; b < s.B; b++) {
    const int64_t limit = key_limit(f, &s, kl, b);
    for (int64_t h = 0; h < s.H; h++) {
      const int64_t g = h / (s.H / s.Hkv);
      for (int64_t i = 0; i < s.Sq; i++) {
        long double m = -INFINITY;
        for (int64_t j = 0; j < s.Skv; j++) {
          row[j] = score(f, &s, in, b, h, i, j, limit);
          if (row[j] > m) m = row[j];
        }
        if (m == -INFINITY) {
          lse[at3(&f->lse, b, h, i)] = -INFINITY;
          for (int64_t d = 0; d < s.Dv; d++) o[at4(&f->o, b, h, i, d)] = 0.0;
          continue;
        }
        harness_sum z;
        harness_sum_init(&z);
        for (int64_t j = 0; j < s.Skv; j++) harness_sum_add(&z, expl(row[j] - m));
        const long double l = m + logl(harness_sum_value(&z));
        lse[at3(&f->lse, b, h, i)] = harness_round(f->lse.dtype, (double)l);
        for (int64_t d = 0; d < s.Dv; d++) {
          harness_sum acc;
          harness_sum_init(&acc);
          for (int64_t j = 0; j < s.Skv; j++)
            if (row[j] != -INFINITY)
              harness_sum_add(&acc, expl(row[j] - l) * in[2][at4(&f->v, b, g, j, d)]);
          o[at4(&f->o, b, h, i, d)] = harness_round(dt, (double)harness_sum_value(&acc));
        }
      }
    }
  }
  free(row);
  return 0;
}

/* The backward's definition (doc/ops.md) from the given inputs, per row
 * (b, h, i) with lse_i finite:
 *   P[i,j] = exp(s[i,j] - lse_i), D_i = sum_d do[i,d] o[i,d],
 *   dP[i,j] = do_i . v_j, dS[i,j] = P[i,j] (dP[i,j] - D_i),
 *   dq_i = scale sum_j dS[i,j] k_j, dk_j += scale dS[i,j] q_i, dv_j += P[i,j] do_i,
 * dk and dv summed over the group's heads; rows with lse = -inf add nothing.
 * The sums are long double, dk and dv accumulated over every (h, i) in one
 * long-double array each. */
static int ab_oracle_outputs(const harness_desc *hd, const double *const *in, double *const *out,
                             char *why, size_t why_len) {
  const adnn_attention_desc *f = fwd_of(hd);
  ab_shape s;
  if (ab_shape_of(f, &s, why, why_len) != 0) return -1;
  const size_t nk = (size_t)(s.B * s.Hkv * s.Skv);
  long double *dk = calloc(nk * (size_t)s.D + 1, sizeof *dk);
  long double *dv = calloc(nk * (size_t)s.Dv + 1, sizeof *dv);
  long double *dq = calloc((size_t)s.D + 1, sizeof *dq);
  long double *prob = malloc(((size_t)s.Skv + 1) * sizeof *prob);
  long double *dsc = malloc(((size_t)s.Skv + 1) * sizeof *dsc);
  if (!dk || !dv || !dq || !prob || !dsc) {
    free(dk), free(dv), free(dq), free(prob), free(dsc);
    snprintf(why, why_len, "out of memory");
    return -1;
  }
  const double *q = in[0], *k = in[1], *v = in[2], *o = in[3], *dout = in[4], *lse = in[5];
  const double *kl = f->has_key_lengths ? in[kl_index(f)] : NULL;
  for (int64_t b = 0; b < s.B; b++) {
    const int64_t limit = key_limit(f, &s, kl, b);
    for (int64_t h = 0; h < s.H; h++) {
      const int64_t g = h / (s.H / s.Hkv);
      for (int64_t i = 0; i < s.Sq; i++) {
        const long double l = lse[at3(&f->lse, b, h, i)];
        for (int64_t d = 0; d < s.D; d++) dq[d] = 0.0L;
        if (l != -INFINITY) {
          long double delta = 0.0L;
          for (int64_t d = 0; d < s.Dv; d++)
            delta += (long double)dout[at4(&f->o, b, h, i, d)] * o[at4(&f->o, b, h, i, d)];
          for (int64_t j = 0; j < s.Skv; j++) {
            const long double sc = score(f, &s, in, b, h, i, j, limit);
            prob[j] = sc == -INFINITY ? 0.0L : expl(sc - l);
            long double dp = 0.0L;
            for (int64_t d = 0; d < s.Dv; d++)
              dp += (long double)dout[at4(&f->o, b, h, i, d)] * v[at4(&f->v, b, g, j, d)];
            dsc[j] = prob[j] * (dp - delta);
            if (prob[j] == 0.0L) dsc[j] = 0.0L; /* a masked pair adds nothing (v may be NaN) */
          }
          for (int64_t d = 0; d < s.D; d++) {
            harness_sum acc;
            harness_sum_init(&acc);
            for (int64_t j = 0; j < s.Skv; j++)
              if (prob[j] != 0.0L) harness_sum_add(&acc, dsc[j] * k[at4(&f->k, b, g, j, d)]);
            dq[d] = s.scale * harness_sum_value(&acc);
          }
          for (int64_t j = 0; j < s.Skv; j++) {
            if (prob[j] == 0.0L) continue;
            const size_t row = (size_t)((b * s.Hkv + g) * s.Skv + j);
            for (int64_t d = 0; d < s.D; d++)
              dk[row * (size_t)s.D + (size_t)d] += s.scale * dsc[j] * q[at4(&f->q, b, h, i, d)];
            for (int64_t d = 0; d < s.Dv; d++)
              dv[row * (size_t)s.Dv + (size_t)d] += prob[j] * dout[at4(&f->o, b, h, i, d)];
          }
        }
        for (int64_t d = 0; d < s.D; d++) out[0][at4(&f->q, b, h, i, d)] = (double)dq[d];
      }
    }
    for (int64_t g = 0; g < s.Hkv; g++)
      for (int64_t j = 0; j < s.Skv; j++) {
        const size_t row = (size_t)((b * s.Hkv + g) * s.Skv + j);
        for (int64_t d = 0; d < s.D; d++)
          out[1][at4(&f->k, b, g, j, d)] = (double)dk[row * (size_t)s.D + (size_t)d];
        for (int64_t d = 0; d < s.Dv; d++)
          out[2][at4(&f->v, b, g, j, d)] = (double)dv[row * (size_t)s.Dv + (size_t)d];
      }
  }
  free(dk), free(dv), free(dq), free(prob), free(dsc);
  return 0;
}

static int ab_oracle(const harness_desc *hd, const double *const *in, double *y, char *why,
                     size_t why_len) {
  (void)hd, (void)in, (void)y;
  snprintf(why, why_len, "attention_backward has several outputs");
  return -1;
}

/* doc/numerics.md, "attention backward": the scores are dot products of D
 * terms, the gradients sums over Skv keys (dq) or the group's Sq queries
 * (dk, dv) of products of them; the conv2d bound of a dot product of the
 * longest of those reductions, doubled for the chain of two. */
static harness_tolerance ab_tolerance(const harness_desc *hd, adnn_dtype dt) {
  const adnn_attention_desc *f = fwd_of(hd);
  int64_t n = f->q.rank == 4 ? f->q.dims[3] : 1;
  if (f->v.rank == 4 && f->v.dims[3] > n) n = f->v.dims[3];
  if (f->k.rank == 4 && f->k.dims[2] > n) n = f->k.dims[2];
  if (f->q.rank == 4 && f->k.rank == 4 && f->k.dims[1] > 0) {
    const int64_t rows = f->q.dims[2] * (f->q.dims[1] / f->k.dims[1]);
    if (rows > n) n = rows;
  }
  const harness_tolerance t = harness_scale_tolerance(harness_dot_tolerance(dt, n), 2.0);
  /* F16/BF16: the F32 bound plus one rounding of each gradient. */
  return harness_lowp_tolerance(dt, t, t, 1.0);
}

/* Default data: q, k, v and do uniform in [-1, 1), a bias uniform in
 * [-1, 1), key lengths uniform in 1..Skv; o and lse from the forward. */
static void ab_fill_data(const adnn_attention_desc *f, harness_buffer *in, tap_rng *r,
                         double q_scale) {
  harness_fill_uniform(&in[0], r, -q_scale, q_scale);
  harness_fill_uniform(&in[1], r, -1.0, 1.0);
  harness_fill_uniform(&in[2], r, -1.0, 1.0);
  harness_fill_uniform(&in[4], r, -1.0, 1.0);
  if (f->has_bias) harness_fill_uniform(&in[6], r, -1.0, 1.0);
  if (f->has_key_lengths) {
    harness_buffer *kl = &in[kl_index(f)];
    const int64_t Skv = f->k.rank == 4 ? f->k.dims[2] : 1;
    for (int64_t i = 0; i < kl->span; i++)
      if (kl->member[i]) kl->v[i] = floor(tap_rng_uniform(r, 1.0, (double)Skv + 1.0));
  }
}

static void ab_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  (void)n_in;
  const adnn_attention_desc *f = fwd_of(hd);
  ab_fill_data(f, in, r, 1.0);
  const double *view[HARNESS_MAX_INPUTS];
  for (int i = 0; i < n_in; i++) view[i] = in[i].v;
  ab_forward(f, view, in[3].v, in[5].v);
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

enum ab_layout { BHSD, BSHD, PADDED };
enum ab_bias {
  NO_BIAS,
  BIAS_FULL,    /* [B, H, Sq, Skv] */
  BIAS_2D,      /* [Sq, Skv], with -inf entries and a fully masked row 0 */
  BIAS_HEADS,   /* [1, H, 1, Skv] */
  BIAS_KEYS,    /* [Skv] */
  BIAS_BATCH    /* [B, 1, Sq, Skv] with -inf entries */
};
enum ab_lengths { NO_LENGTHS, LENGTHS, LENGTHS_EDGE /* 0, Skv + 3, -2, 1, ... */ };

typedef struct ab_case_spec {
  int64_t B, H, Hkv, Sq, Skv, D, Dv;
  int causal;
  enum ab_bias bias;
  enum ab_lengths lengths;
  enum ab_layout layout;
  double scale;   /* 0: the default */
  double q_scale; /* q uniform in [-q_scale, q_scale): sharper softmax when large */
  int nan_pad;    /* k and v NaN at every key beyond its batch's key length */
} ab_case_spec;

/* [d0, d1, d2, d3] in the layout: BSHD keeps dims [B, H, S, D] with
 * strides [S*H*D, D, H*D, 1]. */
static adnn_tensor_desc layout4(adnn_dtype dt, int64_t d0, int64_t d1, int64_t d2, int64_t d3,
                                enum ab_layout l) {
  if (l == BSHD) {
    const int64_t dims[4] = {d0, d1, d2, d3}, strides[4] = {d2 * d1 * d3, d3, d1 * d3, 1};
    adnn_tensor_desc t;
    adnn_tensor_desc_init_strided(&t, dt, 4, dims, strides);
    return t;
  }
  return harness_tensor_desc4(dt, d0, d1, d2, d3, l == PADDED ? HARNESS_PADDED : HARNESS_PACKED);
}

static void ab_describe(const ab_case_spec *c, adnn_dtype dt, adnn_attention_desc *f) {
  adnn_attention_desc_init(f);
  f->q = layout4(dt, c->B, c->H, c->Sq, c->D, c->layout);
  f->k = layout4(dt, c->B, c->Hkv, c->Skv, c->D, c->layout);
  f->v = layout4(dt, c->B, c->Hkv, c->Skv, c->Dv, c->layout);
  f->o = layout4(dt, c->B, c->H, c->Sq, c->Dv, c->layout);
  const int64_t ldims[3] = {c->B, c->H, c->Sq};
  f->lse = harness_tensor_desc(ADNN_OP_PARAM_DTYPE(dt), 3, ldims, c->layout == PADDED ? HARNESS_PADDED : HARNESS_PACKED);
  f->scale = c->scale;
  f->causal = c->causal;
  if (c->bias != NO_BIAS) {
    f->has_bias = 1;
    const int64_t full[4] = {c->B, c->H, c->Sq, c->Skv}, two[2] = {c->Sq, c->Skv};
    const int64_t heads[4] = {1, c->H, 1, c->Skv}, batch[4] = {c->B, 1, c->Sq, c->Skv};
    switch (c->bias) {
      case BIAS_FULL: f->bias = harness_tensor_desc(dt, 4, full, HARNESS_PACKED); break;
      case BIAS_2D: f->bias = harness_tensor_desc(dt, 2, two, HARNESS_PADDED); break;
      case BIAS_HEADS: f->bias = harness_tensor_desc(dt, 4, heads, HARNESS_PACKED); break;
      case BIAS_KEYS: f->bias = harness_vector_desc(dt, c->Skv); break;
      default: f->bias = harness_tensor_desc(dt, 4, batch, HARNESS_PACKED); break;
    }
  }
  if (c->lengths != NO_LENGTHS) {
    f->has_key_lengths = 1;
    f->key_lengths = harness_vector_desc(ADNN_DTYPE_I32, c->B);
  }
}

static const char *layout_name(enum ab_layout l) {
  return l == BSHD ? "bshd" : l == PADDED ? "padded" : "bhsd";
}
static const char *bias_name(enum ab_bias b) {
  static const char *const names[] = {"",          " bias[B,H,Sq,Skv]", " mask[Sq,Skv]",
                                      " bias[1,H,1,Skv]", " bias[Skv]", " mask[B,1,Sq,Skv]"};
  return names[b];
}

static void ab_case(harness_suite *suite, const ab_case_spec *sp, adnn_dtype dt) {
  harness_case c;
  harness_case_init(&c, harness_op_find("attention_backward"), dt,
                    "B%lld H%lld/%lld Sq%lld Skv%lld D%lld Dv%lld %s%s%s%s%s%s",
                    (long long)sp->B, (long long)sp->H, (long long)sp->Hkv, (long long)sp->Sq,
                    (long long)sp->Skv, (long long)sp->D, (long long)sp->Dv,
                    layout_name(sp->layout), sp->causal ? " causal" : "", bias_name(sp->bias),
                    sp->lengths == LENGTHS ? " key_lengths"
                    : sp->lengths == LENGTHS_EDGE ? " key_lengths(0,>Skv,<0)" : "",
                    sp->scale != 0.0 ? " scale" : sp->q_scale > 1.0 ? " sharp" : "",
                    sp->nan_pad ? " nan-padded" : "");
  adnn_attention_desc *f = &c.forward.attention;
  ab_describe(sp, dt, f);
  adnn_attention_backward_desc *d = &c.desc.attention_backward;
  adnn_attention_backward_desc_init(d);
  d->forward = f;
  if (harness_case_alloc(&c) != 0) return;
  tap_rng r = tap_rng_seed(harness_seed(c.name));
  ab_fill_data(f, c.in, &r, sp->q_scale > 0.0 ? sp->q_scale : 1.0);
  if (sp->bias == BIAS_2D || sp->bias == BIAS_BATCH) {
    /* Mask entries: about one in five -inf, and in the 2-D mask the whole of
     * query row 0 (a row that only the mask masks fully). */
    harness_buffer *bb = &c.in[6];
    harness_index it;
    for (harness_index_first(&it, &bb->desc); it.valid; harness_index_next(&it, &bb->desc))
      if (tap_rng_uniform(&r, 0.0, 1.0) < 0.2 || (sp->bias == BIAS_2D && it.idx[0] == 0))
        bb->v[it.offset] = -INFINITY;
  }
  if (sp->lengths == LENGTHS_EDGE) {
    /* 0 (a batch with no keys at all), beyond Skv, negative (clamped to 0),
     * then 1. */
    const double edge[4] = {0.0, (double)sp->Skv + 3.0, -2.0, 1.0};
    for (int64_t b = 0; b < sp->B && b < 4; b++) harness_set_element(&c.in[kl_index(f)], b, edge[b]);
  }
  if (sp->nan_pad) {
    /* Padding tokens whose keys and values were never written: the op must
     * not read them (the forward and the oracle skip them too). */
    const harness_buffer *kl = &c.in[kl_index(f)];
    for (int64_t b = 0; b < sp->B; b++) {
      const double n = kl->v[harness_offset(&f->key_lengths, b)];
      const int64_t limit = n < 0 ? 0 : n > (double)sp->Skv ? sp->Skv : (int64_t)n;
      for (int64_t g = 0; g < sp->Hkv; g++)
        for (int64_t j = limit; j < sp->Skv; j++) {
          for (int64_t x = 0; x < sp->D; x++) c.in[1].v[at4(&f->k, b, g, j, x)] = NAN;
          for (int64_t x = 0; x < sp->Dv; x++) c.in[2].v[at4(&f->v, b, g, j, x)] = NAN;
        }
    }
  }
  const double *view[HARNESS_MAX_INPUTS];
  for (int i = 0; i < c.n_in; i++) view[i] = c.in[i].v;
  if (ab_forward(f, view, c.in[3].v, c.in[5].v) != 0) {
    harness_case_free(&c);
    return;
  }
  harness_submit(suite, &c);
}

static void ab_cases(harness_suite *s) {
  /* B, H, Hkv, Sq, Skv, D, Dv, causal, bias, lengths, layout, scale, q_scale, nan_pad */
  static const ab_case_spec specs[] = {
      {1, 1, 1, 1, 1, 8, 8, 0, NO_BIAS, NO_LENGTHS, BHSD, 0, 0, 0},
      {2, 3, 3, 7, 13, 16, 16, 0, NO_BIAS, NO_LENGTHS, BHSD, 0, 0, 0},        /* odd lengths */
      {2, 4, 4, 65, 65, 32, 32, 0, NO_BIAS, NO_LENGTHS, BHSD, 0, 0, 0},       /* a block + 1 */
      {1, 4, 2, 1, 150, 64, 64, 0, NO_BIAS, NO_LENGTHS, BHSD, 0, 0, 0},       /* decode, GQA */
      {1, 2, 1, 3, 300, 32, 32, 1, NO_BIAS, NO_LENGTHS, BHSD, 0, 0, 0},       /* Skv >> Sq, MQA */
      {2, 6, 2, 33, 47, 80, 48, 0, NO_BIAS, NO_LENGTHS, BHSD, 0, 0, 0},       /* D 80, Dv != D */
      {1, 2, 2, 20, 20, 128, 128, 1, NO_BIAS, NO_LENGTHS, BHSD, 0, 0, 0},     /* D 128 causal */
      {2, 4, 1, 70, 70, 64, 64, 1, NO_BIAS, NO_LENGTHS, BSHD, 0, 0, 0},       /* causal MQA bshd */
      {2, 2, 2, 50, 20, 16, 24, 1, NO_BIAS, NO_LENGTHS, BHSD, 0, 0, 0},       /* Sq > Skv: masked rows */
      {1, 2, 2, 24, 90, 32, 32, 1, NO_BIAS, NO_LENGTHS, BSHD, 0, 0, 0},       /* causal Sq < Skv */
      {2, 2, 1, 17, 31, 32, 32, 0, BIAS_FULL, NO_LENGTHS, BHSD, 0, 0, 0},
      {2, 2, 2, 17, 31, 32, 32, 1, BIAS_2D, NO_LENGTHS, BHSD, 0, 0, 0},
      {2, 4, 2, 9, 70, 16, 16, 0, BIAS_HEADS, NO_LENGTHS, BSHD, 0, 0, 0},
      {2, 2, 2, 9, 40, 16, 16, 0, BIAS_KEYS, LENGTHS, BHSD, 0, 0, 0},
      {3, 2, 2, 12, 80, 32, 32, 0, BIAS_BATCH, NO_LENGTHS, BHSD, 0, 0, 0},
      {4, 2, 1, 11, 70, 32, 32, 0, NO_BIAS, LENGTHS_EDGE, BHSD, 0, 0, 0},      /* lengths 0, >Skv, <0 */
      {4, 2, 2, 30, 30, 32, 32, 1, NO_BIAS, LENGTHS_EDGE, BSHD, 0, 0, 0},
      {2, 2, 2, 9, 21, 8, 12, 1, BIAS_FULL, LENGTHS, PADDED, 0, 0, 0},        /* padded strides */
      {1, 2, 2, 40, 40, 32, 32, 0, NO_BIAS, NO_LENGTHS, BHSD, 0.5, 0, 0},      /* explicit scale */
      {1, 2, 2, 40, 70, 64, 64, 1, NO_BIAS, NO_LENGTHS, BHSD, 0, 6.0, 0},      /* sharp softmax */
      {1, 2, 2, 130, 140, 64, 64, 1, BIAS_HEADS, LENGTHS, BSHD, 0, 0, 0},      /* several blocks */
      {3, 4, 2, 40, 150, 32, 32, 0, NO_BIAS, LENGTHS, BHSD, 0, 0, 1},       /* NaN padding */
      {4, 2, 1, 30, 90, 16, 16, 1, BIAS_KEYS, LENGTHS_EDGE, BSHD, 0, 0, 1},
  };
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) ab_case(s, &specs[i], F32);
  static const ab_case_spec f64_specs[] = {
      {2, 3, 3, 7, 13, 16, 16, 0, NO_BIAS, NO_LENGTHS, BHSD, 0, 0, 0},
      {2, 4, 2, 33, 70, 80, 48, 1, BIAS_FULL, LENGTHS, BHSD, 0, 0, 0},
      {1, 2, 1, 3, 300, 32, 32, 0, NO_BIAS, NO_LENGTHS, BHSD, 0, 0, 0},
      {2, 2, 2, 50, 20, 16, 24, 1, BIAS_2D, NO_LENGTHS, BSHD, 0, 0, 0},
      {4, 2, 1, 11, 70, 32, 32, 1, NO_BIAS, LENGTHS_EDGE, BHSD, 0, 0, 0},
      {2, 2, 2, 9, 21, 8, 12, 1, BIAS_FULL, LENGTHS, PADDED, 0, 0, 0},
      {3, 4, 2, 40, 150, 32, 32, 0, NO_BIAS, LENGTHS, BHSD, 0, 0, 1},
  };
  for (size_t i = 0; i < sizeof f64_specs / sizeof f64_specs[0]; i++)
    ab_case(s, &f64_specs[i], F64);
  /* F16 and BF16 (q, k, v, o, do, bias and the gradients of the type, lse
   * F32): the F64 cross-section plus GQA decoding and a sharp softmax. */
  static const ab_case_spec lowp_specs[] = {
      {2, 3, 3, 7, 13, 16, 16, 0, NO_BIAS, NO_LENGTHS, BHSD, 0, 0, 0},
      {2, 4, 2, 33, 70, 80, 48, 1, BIAS_FULL, LENGTHS, BHSD, 0, 0, 0},
      {1, 4, 2, 1, 150, 64, 64, 0, NO_BIAS, NO_LENGTHS, BHSD, 0, 0, 0},
      {2, 2, 2, 50, 20, 16, 24, 1, BIAS_2D, NO_LENGTHS, BSHD, 0, 0, 0},
      {4, 2, 1, 11, 70, 32, 32, 1, NO_BIAS, LENGTHS_EDGE, BHSD, 0, 0, 0},
      {2, 2, 2, 9, 21, 8, 12, 1, BIAS_FULL, LENGTHS, PADDED, 0, 0, 0},
      {1, 2, 2, 40, 70, 64, 64, 1, NO_BIAS, NO_LENGTHS, BHSD, 0, 6.0, 0},
      {3, 4, 2, 40, 150, 32, 32, 0, NO_BIAS, LENGTHS, BHSD, 0, 0, 1},
  };
  static const adnn_dtype lowp[2] = {ADNN_DTYPE_F16, ADNN_DTYPE_BF16};
  for (int t = 0; t < 2; t++)
    for (size_t i = 0; i < sizeof lowp_specs / sizeof lowp_specs[0]; i++)
      ab_case(s, &lowp_specs[i], lowp[t]);
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracle                                                  */
/* ------------------------------------------------------------------------ */

static void tiny_desc(adnn_attention_desc *f, int64_t Sq, int64_t Skv) {
  adnn_attention_desc_init(f);
  f->q = harness_tensor_desc4(F64, 1, 1, Sq, 1, HARNESS_PACKED);
  f->k = f->v = harness_tensor_desc4(F64, 1, 1, Skv, 1, HARNESS_PACKED);
  f->o = f->q;
  const int64_t ld[3] = {1, 1, Sq};
  f->lse = harness_tensor_desc(F64, 3, ld, HARNESS_PACKED);
}

static void ab_oracle_selftests(const harness_report *rep) {
  /* One query, two keys, D = Dv = 1 (scale 1): q = 1, k = (0, 1) gives the
   * scores (0, 1), lse = log(1 + e), P = (1, e) / (1 + e). With v = (1, 3),
   * o = (1 + 3e) / (1 + e); do = 1 gives D = o and dP = v, so
   * dS = P (v - o) = (-2e, 2e) / (1 + e)^2. Then dq = dS . k = 2e / (1 + e)^2,
   * dk = dS q = (-2e, 2e) / (1 + e)^2 and dv = P do = (1, e) / (1 + e). */
  adnn_attention_desc f;
  tiny_desc(&f, 1, 2);
  const double e = exp(1.0);
  double q[1] = {1}, k[2] = {0, 1}, v[2] = {1, 3}, o[1] = {(1 + 3 * e) / (1 + e)}, dout[1] = {1};
  double lse[1] = {log(1 + e)};
  double dq[1], dk[2], dv[2];
  harness_desc hd;
  adnn_attention_backward_desc_init(&hd.attention_backward);
  hd.attention_backward.forward = &f;
  f.scale = 1.0;
  const double *in[6] = {q, k, v, o, dout, lse};
  double *out[3] = {dq, dk, dv};
  char why[256];
  int ran = ab_oracle_outputs(&hd, in, out, why, sizeof why) == 0;
  const double t = 2 * e / ((1 + e) * (1 + e));
  harness_ok(rep, ran && harness_close(dq[0], t, 1e-15) && harness_close(dk[0], -t, 1e-15) &&
                      harness_close(dk[1], t, 1e-15) && harness_close(dv[0], 1 / (1 + e), 1e-15) &&
                      harness_close(dv[1], e / (1 + e), 1e-15),
             "oracle: attention backward of one query and two keys by hand");
  /* The forward of the same data gives that o and lse. */
  double o2[1], lse2[1];
  const double *fin[6] = {q, k, v, NULL, NULL, NULL};
  ran = ab_forward(&f, fin, o2, lse2) == 0;
  harness_ok(rep, ran && harness_close(o2[0], o[0], 1e-15) && harness_close(lse2[0], lse[0], 1e-15),
             "oracle: the cases' forward by hand");

  /* Causal with Sq = 2 > Skv = 1: query 0 sees keys j <= 0 + 1 - 2, none (lse
   * = -inf, o = 0, dq = 0); query 1 sees key 0 alone (P = 1, o = v), so
   * dS = 1 * (do . v - do . o) = 0: dq = dk = 0, dv = do_1. */
  tiny_desc(&f, 2, 1);
  f.causal = 1;
  double q2[2] = {0.5, -2}, k2[1] = {3}, v2[1] = {-1.5}, o3[2] = {0, -1.5}, do2[2] = {7, 0.25};
  double lse3[2] = {-INFINITY, 3 * -2 / 1.0};
  double dq2[2], dk2[1], dv2[1];
  const double *in2[6] = {q2, k2, v2, o3, do2, lse3};
  double *out2[3] = {dq2, dk2, dv2};
  ran = ab_oracle_outputs(&hd, in2, out2, why, sizeof why) == 0;
  harness_ok(rep, ran && dq2[0] == 0 && dq2[1] == 0 && dk2[0] == 0 && dv2[0] == 0.25,
             "oracle: a fully masked causal row adds nothing (got dq %g %g dk %g dv %g)", dq2[0],
             dq2[1], dk2[0], dv2[0]);
  double o4[2], lse4[2];
  const double *fin2[6] = {q2, k2, v2, NULL, NULL, NULL};
  ran = ab_forward(&f, fin2, o4, lse4) == 0;
  harness_ok(rep, ran && o4[0] == 0 && lse4[0] == -INFINITY && o4[1] == -1.5 && lse4[1] == -6,
             "oracle: the forward of a fully masked row gives o = 0 and lse = -inf");
}

/* ------------------------------------------------------------------------ */
/* Bad descriptors                                                           */
/* ------------------------------------------------------------------------ */

static void ab_bad_descriptors(const harness_report *rep, adnn_context *ctx, const char *bn) {
  const ab_case_spec sp = {2, 4, 2, 5, 6, 8, 8, 0, NO_BIAS, NO_LENGTHS, BHSD, 0, 0, 0};
  adnn_attention_desc f;
  adnn_attention_backward_desc d;
  adnn_attention_backward_desc_init(&d);
  adnn_plan *plan = NULL;
  harness_is_status(rep, adnn_plan_create_attention_backward(ctx, &d, &plan),
                    ADNN_STATUS_BAD_PARAM_NULL, "%s attention_backward: NULL forward", bn);
  harness_contains(rep, adnn_last_error(), "forward", "%s attention_backward: NULL forward: message",
                   bn);
  d.forward = &f;
#define BAD(status, needle, what)                                                             \
  do {                                                                                        \
    plan = NULL;                                                                              \
    harness_is_status(rep, adnn_plan_create_attention_backward(ctx, &d, &plan), status,       \
                      "%s attention_backward: %s", bn, what);                                 \
    harness_contains(rep, adnn_last_error(), needle, "%s attention_backward: %s: message", bn, \
                     what);                                                                   \
    harness_ok(rep, plan == NULL, "%s attention_backward: %s: no plan", bn, what);            \
    ab_describe(&sp, F32, &f);                                                                \
  } while (0)
  ab_describe(&sp, F32, &f);
  f.has_lse = 0;
  BAD(ADNN_STATUS_BAD_PARAM, "lse", "a forward without lse");
  f.struct_size = 8;
  BAD(ADNN_STATUS_BAD_PARAM, "adnn_attention_desc_init", "a forward descriptor too small");
  f.q = layout4(F32, 2, 3, 5, 8, BHSD); /* H = 3, Hkv = 2 */
  f.o = layout4(F32, 2, 3, 5, 8, BHSD);
  {
    const int64_t ld[3] = {2, 3, 5};
    f.lse = harness_tensor_desc(F32, 3, ld, HARNESS_PACKED);
  }
  BAD(ADNN_STATUS_BAD_PARAM, "multiple", "H not a multiple of Hkv");
  f.k = layout4(F32, 2, 2, 6, 16, BHSD);
  BAD(ADNN_STATUS_BAD_PARAM, "D", "k's D differs from q's");
  f.has_bias = 1;
  f.bias = harness_tensor_desc4(F32, 1, 1, 5, 7, HARNESS_PACKED); /* Skv is 6 */
  BAD(ADNN_STATUS_BAD_PARAM, "bias", "a bias that does not broadcast");
  f.has_key_lengths = 1;
  f.key_lengths = harness_vector_desc(F32, 2);
  BAD(ADNN_STATUS_BAD_PARAM, "key_lengths", "f32 key_lengths");
  f.q.dtype = f.k.dtype = f.v.dtype = f.o.dtype = f.lse.dtype = ADNN_DTYPE_I32;
  BAD(ADNN_STATUS_NOT_SUPPORTED, "not supported", "i32 attention");
#undef BAD
  /* Execution: six inputs and three outputs, and no output on an input. */
  ab_describe(&sp, F32, &f);
  const adnn_status st = adnn_plan_create_attention_backward(ctx, &d, &plan);
  if (st == ADNN_STATUS_NOT_SUPPORTED && strcmp(bn, "cpu") != 0) {
    /* A backend without the op yet (the CUDA plugin's stub): the checks of
     * execution need a plan. The CPU plugin must have one. */
    harness_skip(rep, "%s attention_backward: execution checks: %s", bn, adnn_last_error());
    return;
  }
  if (!harness_is_status(rep, st, ADNN_STATUS_SUCCESS, "%s attention_backward: a valid plan", bn))
    return;
  void *buf = NULL;
  if (adnn_malloc(ctx, 16384 * sizeof(float), &buf) != ADNN_STATUS_SUCCESS) {
    adnn_plan_destroy(plan);
    return;
  }
  float *b = buf; /* q, o, do: 320 elements; k, v: 192; lse: 40 */
  const void *in[6] = {b, b + 1024, b + 2048, b + 3072, b + 4096, b + 5120};
  void *out[3] = {b + 6144, b + 7168, b + 8192};
  harness_is_status(rep, adnn_plan_execute_multi(plan, in, 5, out, 3), ADNN_STATUS_BAD_PARAM,
                    "%s attention_backward: 5 inputs instead of 6", bn);
  harness_is_status(rep, adnn_plan_execute_multi(plan, in, 6, out, 2), ADNN_STATUS_BAD_PARAM,
                    "%s attention_backward: 2 outputs instead of 3", bn);
  out[0] = b + 4096; /* dq on do */
  harness_is_status(rep, adnn_plan_execute_multi(plan, in, 6, out, 3), ADNN_STATUS_BAD_PARAM,
                    "%s attention_backward: dq aliasing do is refused", bn);
  out[0] = b + 6144;
  out[2] = b + 6144 + 100; /* dv overlapping dq */
  harness_is_status(rep, adnn_plan_execute_multi(plan, in, 6, out, 3), ADNN_STATUS_BAD_PARAM,
                    "%s attention_backward: overlapping outputs are refused", bn);
  adnn_free(ctx, buf);
  adnn_plan_destroy(plan);
}

const harness_op_traits harness_attention_backward_traits = {
    .inputs = ab_inputs,
    .output = ab_output,
    .set_dtype = ab_set_dtype,
    .oracle = ab_oracle,
    .tolerance = ab_tolerance,
    .fill = ab_fill,
    .variant_count = 1,
    .cases = ab_cases,
    .oracle_selftests = ab_oracle_selftests,
    .bad_descriptors = ab_bad_descriptors,
    .outputs = ab_outputs,
    .oracle_outputs = ab_oracle_outputs,
};
