/*
 * Problem descriptors of adnn-bench (see bench_problem.h and doc/bench.md).
 * Written for adnn; the convolution grammar follows the public descriptor
 * format of oneDNN's benchdnn, including how it deduces omitted values.
 */
#include "bench_problem.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kinds of the op manifest's lists (adnn/op_list.h), in order; their
 * names are those of the name functions of adnn/ops.h. */
static const adnn_activation_kind activation_kinds[] = {
#define ACTIVATION_KIND_(NAME, name, value, params, def) ADNN_ACTIVATION_##NAME,
    ADNN_ACTIVATION_LIST(ACTIVATION_KIND_)
#undef ACTIVATION_KIND_
};
/* How many of alpha and beta each activation reads (the list's params
 * column): bnorm fuses only those that read neither. */
static const int activation_params[] = {
#define ACTIVATION_PARAMS_(NAME, name, value, params, def) params,
    ADNN_ACTIVATION_LIST(ACTIVATION_PARAMS_)
#undef ACTIVATION_PARAMS_
};
static const adnn_binary_op binary_ops[] = {
#define BINARY_OP_(NAME, name, value, def) ADNN_BINARY_##NAME,
    ADNN_BINARY_LIST(BINARY_OP_)
#undef BINARY_OP_
};
/* Pooling keeps benchdnn's short words in the grammar ("avg" counts the
 * padding, as benchdnn's avg_p does), not adnn_pool_kind_name's. */
static const struct {
  adnn_pool_kind kind;
  const char *word;
} pool_words[] = {{ADNN_POOL_MAX, "max"},
                  {ADNN_POOL_AVG_INCLUDE_PAD, "avg"},
                  {ADNN_POOL_AVG_EXCLUDE_PAD, "avg_exclude"}};
#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const char *pool_word(adnn_pool_kind kind) {
  for (int i = 0; i < COUNT_OF(pool_words); i++)
    if (pool_words[i].kind == kind) return pool_words[i].word;
  return "unknown";
}

static const char *const op_names[] = {"conv",  "pool",   "act",    "softmax", "lnorm",
                                       "rmsnorm", "bnorm", "binary", "reduce", "gemm"};

const char *bench_op_name(int op) {
  return op >= 0 && op < (int)(sizeof op_names / sizeof op_names[0]) ? op_names[op] : "unknown";
}

static int fail(char *err, size_t len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, len, fmt, ap);
  va_end(ap);
  return -1;
}

/* A non-negative integer value of a token; -1 when malformed or absurd. */
static int64_t parse_count(const char *s, size_t n) {
  if (n == 0 || n > 12) return -1;
  int64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (!isdigit((unsigned char)s[i])) return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

/* "D0xD1x..." into dims; returns the rank, or -1. */
static int parse_dims(const char *s, size_t n, int64_t *dims) {
  int rank = 0;
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    while (j < n && s[j] != 'x') j++;
    if (rank == BENCH_MAX_RANK) return -1;
    int64_t v = parse_count(s + i, j - i);
    if (v < 1) return -1;
    dims[rank++] = v;
    if (j == n) break;
    i = j + 1;
    if (i == n) return -1; /* trailing x */
  }
  return rank;
}

/* ---------------------------------------------------------------------- */
/* Image geometry: conv (benchdnn grammar), pool, bnorm                     */
/* ---------------------------------------------------------------------- */

enum { K_G, K_MB, K_IC, K_IH, K_IW, K_OC, K_OH, K_OW, K_KH, K_KW, K_SH, K_SW, K_PH, K_PW,
       K_DH, K_DW, K_COUNT };
static const char *const keys[K_COUNT] = {"g",  "mb", "ic", "ih", "iw", "oc", "oh", "ow",
                                          "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw"};

/* Reads letter+number tokens of s[0..n) into v (-1 = not given). `allowed` is a
 * bit mask of keys. A name (n...) ends the descriptor. */
static int parse_geometry(const char *s, size_t n, unsigned allowed, int64_t *v, char *name,
                          const char *what, char *err, size_t errlen) {
  for (int i = 0; i < K_COUNT; i++) v[i] = -1;
  size_t i = 0;
  while (i < n) {
    if (s[i] == '_') {
      i++;
      continue;
    }
    if (s[i] == 'n' && name) { /* the name: the rest, quotes removed */
      const char *b = s + i + 1, *e = s + n;
      if (e > b && *b == '"') b++;
      if (e > b && e[-1] == '"') e--;
      if ((size_t)(e - b) >= BENCH_NAME_MAX)
        return fail(err, errlen, "name '%.*s' is too long", (int)(e - b), b);
      memcpy(name, b, (size_t)(e - b));
      name[e - b] = 0;
      return 0;
    }
    size_t a = i;
    while (i < n && isalpha((unsigned char)s[i])) i++;
    size_t d = i;
    while (i < n && isdigit((unsigned char)s[i])) i++;
    if (a == d) {
      size_t e = i;
      while (e < n && s[e] != '_') e++;
      if (e == a) e = a + 1;
      return fail(err, errlen, "bad token '%.*s' in %s descriptor: expected a key like mb8",
                  (int)(e - a), s + a, what);
    }
    int k = -1;
    for (int j = 0; j < K_COUNT; j++)
      if (strlen(keys[j]) == d - a && strncmp(keys[j], s + a, d - a) == 0) k = j;
    if (k < 0 || !(allowed & (1u << k))) {
      if ((d - a == 2) && s[a + 1] == 'd')
        return fail(err, errlen, "bad token '%.*s': 3-D problems are not supported", (int)(i - a),
                    s + a);
      return fail(err, errlen, "bad token '%.*s': unknown key '%.*s' in %s descriptor",
                  (int)(i - a), s + a, (int)(d - a), s + a, what);
    }
    if (d == i)
      return fail(err, errlen, "bad token '%.*s': '%s' needs a number", (int)(i - a), s + a,
                  keys[k]);
    int64_t val = parse_count(s + d, i - d);
    if (val < 0)
      return fail(err, errlen, "bad token '%.*s': number out of range", (int)(i - a), s + a);
    if (v[k] >= 0)
      return fail(err, errlen, "bad token '%.*s': '%s' given twice", (int)(i - a), s + a,
                  keys[k]);
    v[k] = val;
  }
  return 0;
}

/* benchdnn's output size (pad symmetric, dilation extra), floor division. */
static int64_t out_size(int64_t i, int64_t k, int64_t s, int64_t p, int64_t d) {
  int64_t ext = (k - 1) * (d + 1) + 1;
  int64_t num = i - ext + 2 * p;
  if (num < 0) return 0;
  return num / s + 1;
}

/* One spatial dimension of a conv: deduces o, pad_begin, pad_end from i, k, s,
 * p (-1 = omitted), o (-1 = omitted), d (extra dilation). */
static int conv_dim(const char *axis, int64_t i, int64_t k, int64_t s, int64_t p, int64_t o,
                    int64_t d, int64_t *out_o, int64_t *pb, int64_t *pe, char *err,
                    size_t errlen) {
  if (s < 1) return fail(err, errlen, "bad token 's%s0': strides are at least 1", axis);
  if (k < 1) return fail(err, errlen, "bad token 'k%s0': kernel sizes are at least 1", axis);
  if (i < 1) return fail(err, errlen, "bad token 'i%s0': input sizes are at least 1", axis);
  int64_t ext = (k - 1) * (d + 1) + 1;
  if (o < 0) {
    if (p < 0) p = 0;
    o = out_size(i, k, s, p, d);
    if (o < 1)
      return fail(err, errlen,
                  "the kernel (k%s%lld with dilation) is larger than the padded input (i%s%lld, "
                  "p%s%lld)",
                  axis, (long long)k, axis, (long long)i, axis, (long long)p);
    *out_o = o;
    *pb = *pe = p;
    return 0;
  }
  if (o < 1) return fail(err, errlen, "bad token 'o%s0': output sizes are at least 1", axis);
  if (p < 0) { /* deduce the padding from the output size, as benchdnn does */
    p = 0;
    if (out_size(i, k, s, 0, d) != o) {
      p = ((o - 1) * s - i + ext) / 2;
      if (p < 0) p = 0;
    }
  }
  if (out_size(i, k, s, p, d) == o) {
    *out_o = o;
    *pb = *pe = p;
    return 0;
  }
  /* benchdnn: the end padding is implied by the output size. */
  int64_t r = (o - 1) * s + ext - i - p;
  if (r >= 0 && r < ext) {
    *out_o = o;
    *pb = p;
    *pe = r;
    return 0;
  }
  return fail(err, errlen,
              "bad token 'o%s%lld': does not match i%s%lld k%s%lld s%s%lld p%s%lld (o%s%lld "
              "expected)",
              axis, (long long)o, axis, (long long)i, axis, (long long)k, axis, (long long)s,
              axis, (long long)p, axis, (long long)out_size(i, k, s, p, d));
}

/* Copies h <-> w when one of them is omitted. */
static void mirror(int64_t *v, int h, int w) {
  if (v[h] < 0) v[h] = v[w];
  if (v[w] < 0) v[w] = v[h];
}

static int parse_conv(const char *s, size_t n, bench_problem *p, char *err, size_t errlen) {
  int64_t v[K_COUNT];
  if (parse_geometry(s, n, (1u << K_COUNT) - 1, v, p->name, "convolution", err, errlen)) return -1;
  if (v[K_IC] < 0) return fail(err, errlen, "convolution descriptor '%.*s' lacks ic", (int)n, s);
  if (v[K_OC] < 0) return fail(err, errlen, "convolution descriptor '%.*s' lacks oc", (int)n, s);
  mirror(v, K_IH, K_IW);
  mirror(v, K_OH, K_OW);
  mirror(v, K_KH, K_KW);
  mirror(v, K_SH, K_SW);
  mirror(v, K_PH, K_PW);
  mirror(v, K_DH, K_DW);
  if (v[K_IH] < 0) return fail(err, errlen, "convolution descriptor '%.*s' lacks ih", (int)n, s);
  if (v[K_KH] < 0) return fail(err, errlen, "convolution descriptor '%.*s' lacks kh", (int)n, s);
  p->op = BENCH_OP_CONV;
  p->g = v[K_G] < 0 ? 1 : v[K_G];
  p->mb = v[K_MB] < 0 ? 2 : v[K_MB]; /* benchdnn's default minibatch */
  p->ic = v[K_IC];
  p->oc = v[K_OC];
  if (p->g < 1) return fail(err, errlen, "bad token 'g0': groups are at least 1");
  if (p->mb < 1) return fail(err, errlen, "bad token 'mb0': the minibatch is at least 1");
  if (p->ic < 1 || p->oc < 1) return fail(err, errlen, "ic and oc must be at least 1");
  if (p->ic % p->g || p->oc % p->g)
    return fail(err, errlen, "bad token 'g%lld': ic%lld and oc%lld must be multiples of it",
                (long long)p->g, (long long)p->ic, (long long)p->oc);
  p->ih = v[K_IH];
  p->iw = v[K_IW];
  p->kh = v[K_KH];
  p->kw = v[K_KW];
  p->sh = v[K_SH] < 0 ? 1 : v[K_SH];
  p->sw = v[K_SW] < 0 ? 1 : v[K_SW];
  int64_t dh = v[K_DH] < 0 ? 0 : v[K_DH], dw = v[K_DW] < 0 ? 0 : v[K_DW];
  p->dh = dh + 1;
  p->dw = dw + 1;
  if (conv_dim("h", p->ih, p->kh, p->sh, v[K_PH], v[K_OH], dh, &p->oh, &p->pt, &p->pb, err,
               errlen) ||
      conv_dim("w", p->iw, p->kw, p->sw, v[K_PW], v[K_OW], dw, &p->ow, &p->pl, &p->pr, err,
               errlen))
    return -1;
  return 0;
}

static int64_t pool_out(int64_t i, int64_t k, int64_t s, int64_t p, int ceil_mode) {
  int64_t num = i + 2 * p - k;
  if (num < 0) return 0;
  int64_t o = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
  if (ceil_mode && (o - 1) * s >= i + p) o--; /* PyTorch: drop a window starting in the padding */
  return o;
}

static int parse_pool_geometry(const char *s, size_t n, bench_problem *p, char *err,
                               size_t errlen) {
  int64_t v[K_COUNT];
  unsigned allowed = (1u << K_MB) | (1u << K_IC) | (1u << K_IH) | (1u << K_IW) | (1u << K_OH) |
                     (1u << K_OW) | (1u << K_KH) | (1u << K_KW) | (1u << K_SH) | (1u << K_SW) |
                     (1u << K_PH) | (1u << K_PW);
  if (parse_geometry(s, n, allowed, v, NULL, "pool", err, errlen)) return -1;
  mirror(v, K_IH, K_IW);
  mirror(v, K_OH, K_OW);
  mirror(v, K_KH, K_KW);
  mirror(v, K_SH, K_SW);
  mirror(v, K_PH, K_PW);
  if (v[K_IC] < 1 || v[K_IH] < 1 || v[K_KH] < 1)
    return fail(err, errlen, "pool geometry '%.*s' needs ic, ih and kh (at least 1)", (int)n, s);
  p->mb = v[K_MB] < 0 ? 2 : v[K_MB];
  p->ic = p->oc = v[K_IC];
  p->g = 1;
  p->ih = v[K_IH];
  p->iw = v[K_IW];
  p->kh = v[K_KH];
  p->kw = v[K_KW];
  p->sh = v[K_SH] < 0 ? 1 : v[K_SH];
  p->sw = v[K_SW] < 0 ? 1 : v[K_SW];
  p->pt = p->pb = v[K_PH] < 0 ? 0 : v[K_PH];
  p->pl = p->pr = v[K_PW] < 0 ? 0 : v[K_PW];
  p->dh = p->dw = 1;
  if (p->mb < 1 || p->sh < 1 || p->sw < 1)
    return fail(err, errlen, "pool geometry '%.*s': mb and strides must be at least 1", (int)n, s);
  if (2 * p->pt > p->kh || 2 * p->pl > p->kw)
    return fail(err, errlen, "bad token 'ph%lld': padding must be at most half the kernel",
                (long long)p->pt);
  return 0;
}

static int finish_pool(bench_problem *p, int64_t oh, int64_t ow, char *err, size_t errlen) {
  p->oh = pool_out(p->ih, p->kh, p->sh, p->pt, p->ceil_mode);
  p->ow = pool_out(p->iw, p->kw, p->sw, p->pl, p->ceil_mode);
  if (p->oh < 1 || p->ow < 1)
    return fail(err, errlen, "the pool window is larger than the padded input");
  if ((oh >= 0 && oh != p->oh) || (ow >= 0 && ow != p->ow))
    return fail(err, errlen, "bad token 'oh%lld': the output is %lldx%lld", (long long)oh,
                (long long)p->oh, (long long)p->ow);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* Compact forms                                                            */
/* ---------------------------------------------------------------------- */

typedef struct field {
  const char *s;
  size_t n;
} field;

static int field_is(const field *f, const char *w) {
  return strlen(w) == f->n && strncmp(f->s, w, f->n) == 0;
}

/* The index in activation_kinds of the activation named by f, or -1. */
static int find_activation(const field *f) {
  for (int i = 0; i < COUNT_OF(activation_kinds); i++)
    if (field_is(f, adnn_activation_name(activation_kinds[i]))) return i;
  return -1;
}

static int find_binary_op(const field *f) {
  for (int i = 0; i < COUNT_OF(binary_ops); i++)
    if (field_is(f, adnn_binary_op_name(binary_ops[i]))) return i;
  return -1;
}

static int find_pool_word(const field *f) {
  for (int i = 0; i < COUNT_OF(pool_words); i++)
    if (field_is(f, pool_words[i].word)) return i;
  return -1;
}

static int is_dims(const field *f) { return f->n > 0 && isdigit((unsigned char)f->s[0]); }

static int parse_number(const field *f, size_t skip, double *out) {
  char buf[64];
  if (f->n <= skip || f->n - skip >= sizeof buf) return -1;
  memcpy(buf, f->s + skip, f->n - skip);
  buf[f->n - skip] = 0;
  char *end;
  errno = 0;
  double v = strtod(buf, &end);
  if (*end || errno || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

static int bad_field(const field *f, const char *op, const char *hint, char *err, size_t errlen) {
  return fail(err, errlen, "bad token '%.*s' in %s descriptor: %s", (int)f->n, f->s, op, hint);
}

static int parse_compact(const char *text, size_t n, bench_problem *p, char *err, size_t errlen) {
  field f[16];
  int nf = 0;
  size_t i = 0;
  for (;;) {
    size_t j = i;
    while (j < n && text[j] != ':') j++;
    if (nf == 16) return fail(err, errlen, "too many ':' fields in '%.*s'", (int)n, text);
    f[nf].s = text + i;
    f[nf].n = j - i;
    if (f[nf].n == 0) return fail(err, errlen, "empty field in '%.*s'", (int)n, text);
    nf++;
    if (j == n) break;
    i = j + 1;
  }
  const char *op = bench_op_name(p->op);
  int have_dims = 0;
  switch (p->op) {
    case BENCH_OP_POOL: {
      if (nf < 3) return fail(err, errlen, "pool descriptor needs pool:<kind>:<geometry>");
      int kind = find_pool_word(&f[1]);
      if (kind < 0) return bad_field(&f[1], op, "kind is max, avg or avg_exclude", err, errlen);
      p->pool_kind = pool_words[kind].kind;
      if (parse_pool_geometry(f[2].s, f[2].n, p, err, errlen)) return -1;
      /* oh/ow given? re-read them for the check */
      int64_t v[K_COUNT];
      unsigned all = (1u << K_COUNT) - 1;
      parse_geometry(f[2].s, f[2].n, all, v, NULL, "pool", err, errlen);
      mirror(v, K_OH, K_OW);
      for (int k = 3; k < nf; k++) {
        if (field_is(&f[k], "ceil"))
          p->ceil_mode = 1;
        else
          return bad_field(&f[k], op, "expected ceil", err, errlen);
      }
      return finish_pool(p, v[K_OH], v[K_OW], err, errlen);
    }
    case BENCH_OP_ACT: {
      if (nf < 3) return fail(err, errlen, "act descriptor needs act:<kind>:<dims>");
      int kind = find_activation(&f[1]);
      if (kind < 0) return bad_field(&f[1], op, "unknown activation kind", err, errlen);
      p->act_kind = activation_kinds[kind];
      /* the grammar's defaults: leaky_relu a0.01, elu a1, clamp a0 b6 (relu6) */
      p->alpha = p->act_kind == ADNN_ACTIVATION_LEAKY_RELU ? 0.01
                 : p->act_kind == ADNN_ACTIVATION_ELU      ? 1.0
                                                           : 0.0;
      p->beta = p->act_kind == ADNN_ACTIVATION_CLAMP ? 6.0 : 0.0;
      for (int k = 2; k < nf; k++) {
        if (is_dims(&f[k]) && !have_dims) {
          if ((p->rank = parse_dims(f[k].s, f[k].n, p->dims)) < 1)
            return bad_field(&f[k], op, "dims are D0xD1x... (1 to 8 positive sizes)", err, errlen);
          have_dims = 1;
        } else if (f[k].s[0] == 'a' && parse_number(&f[k], 1, &p->alpha) == 0) {
        } else if (f[k].s[0] == 'b' && parse_number(&f[k], 1, &p->beta) == 0) {
        } else
          return bad_field(&f[k], op, "expected a<alpha>, b<beta> or dims", err, errlen);
      }
      break;
    }
    case BENCH_OP_SOFTMAX: {
      p->axis = -1;
      for (int k = 1; k < nf; k++) {
        double a;
        if (is_dims(&f[k]) && !have_dims) {
          if ((p->rank = parse_dims(f[k].s, f[k].n, p->dims)) < 1)
            return bad_field(&f[k], op, "dims are D0xD1x... (1 to 8 positive sizes)", err, errlen);
          have_dims = 1;
        } else if (field_is(&f[k], "log")) {
          p->log_softmax = 1;
        } else if (f[k].n > 4 && strncmp(f[k].s, "axis", 4) == 0 &&
                   parse_number(&f[k], 4, &a) == 0 && a == floor(a) && fabs(a) <= 8) {
          p->axis = (int)a;
        } else
          return bad_field(&f[k], op, "expected axis<A>, log or dims", err, errlen);
      }
      if (have_dims && (p->axis >= p->rank || p->axis < -p->rank))
        return fail(err, errlen, "bad token 'axis%d': the tensor has rank %d", p->axis, p->rank);
      break;
    }
    case BENCH_OP_LNORM:
    case BENCH_OP_RMSNORM: {
      p->norm_dims = 1;
      p->has_gain = 1;
      p->has_bias = p->op == BENCH_OP_LNORM;
      p->eps = 1e-5;
      for (int k = 1; k < nf; k++) {
        double a;
        if (is_dims(&f[k]) && !have_dims) {
          if ((p->rank = parse_dims(f[k].s, f[k].n, p->dims)) < 1)
            return bad_field(&f[k], op, "dims are D0xD1x... (1 to 8 positive sizes)", err, errlen);
          have_dims = 1;
        } else if (field_is(&f[k], "nogain")) {
          p->has_gain = 0;
        } else if (field_is(&f[k], "nobias")) {
          p->has_bias = 0;
        } else if (field_is(&f[k], "bias")) {
          p->has_bias = 1;
        } else if (f[k].n > 2 && strncmp(f[k].s, "nd", 2) == 0 && parse_number(&f[k], 2, &a) == 0 &&
                   a == floor(a) && a >= 1 && a <= 8) {
          p->norm_dims = (int)a;
        } else if (f[k].n > 3 && strncmp(f[k].s, "eps", 3) == 0 &&
                   parse_number(&f[k], 3, &p->eps) == 0 && p->eps > 0) {
        } else
          return bad_field(&f[k], op, "expected dims, nd<D>, nogain, nobias, bias or eps<E>", err,
                           errlen);
      }
      if (have_dims && p->norm_dims > p->rank)
        return fail(err, errlen, "bad token 'nd%d': the tensor has rank %d", p->norm_dims, p->rank);
      break;
    }
    case BENCH_OP_BNORM: {
      if (nf < 2) return fail(err, errlen, "bnorm descriptor needs bnorm:mb<N>ic<C>[ih<H>]");
      int64_t v[K_COUNT];
      unsigned allowed = (1u << K_MB) | (1u << K_IC) | (1u << K_IH) | (1u << K_IW);
      if (parse_geometry(f[1].s, f[1].n, allowed, v, NULL, "bnorm", err, errlen)) return -1;
      mirror(v, K_IH, K_IW);
      if (v[K_IC] < 1) return bad_field(&f[1], op, "needs ic (at least 1)", err, errlen);
      p->mb = v[K_MB] < 0 ? 2 : v[K_MB];
      p->ic = p->oc = v[K_IC];
      p->ih = v[K_IH] < 0 ? 0 : v[K_IH];
      p->iw = v[K_IW] < 0 ? 0 : v[K_IW];
      if (p->mb < 1 || (v[K_IH] >= 0 && p->ih < 1) || (v[K_IW] >= 0 && p->iw < 1))
        return bad_field(&f[1], op, "sizes must be at least 1", err, errlen);
      p->eps = 1e-5;
      for (int k = 2; k < nf; k++) {
        int kind = find_activation(&f[k]);
        if (kind >= 0 && activation_params[kind] == 0)
          p->act_kind = activation_kinds[kind];
        else
          return bad_field(&f[k], op, "expected a parameterless activation kind (relu, ...)",
                           err, errlen);
      }
      return 0;
    }
    case BENCH_OP_BINARY: {
      if (nf != 3) return fail(err, errlen, "binary descriptor is binary:<op>:<dims>+<dims>");
      int bop = find_binary_op(&f[1]);
      if (bop < 0) return bad_field(&f[1], op, "op is add, sub, mul, div, max or min", err, errlen);
      p->binary_op = binary_ops[bop];
      const char *plus = memchr(f[2].s, '+', f[2].n);
      if (!plus) return bad_field(&f[2], op, "expected <dims>+<dims>", err, errlen);
      size_t na = (size_t)(plus - f[2].s);
      if ((p->rank = parse_dims(f[2].s, na, p->dims)) < 1 ||
          (p->rank_b = parse_dims(plus + 1, f[2].n - na - 1, p->dims_b)) < 1)
        return bad_field(&f[2], op, "dims are D0xD1x... (1 to 8 positive sizes)", err, errlen);
      /* NumPy broadcasting: aligned from the right, equal or 1. */
      int r = p->rank > p->rank_b ? p->rank : p->rank_b;
      for (int k = 0; k < r; k++) {
        int64_t a = k < p->rank ? p->dims[p->rank - 1 - k] : 1;
        int64_t b = k < p->rank_b ? p->dims_b[p->rank_b - 1 - k] : 1;
        if (a != b && a != 1 && b != 1)
          return bad_field(&f[2], op, "shapes do not broadcast", err, errlen);
      }
      return 0;
    }
    case BENCH_OP_REDUCE: {
      if (nf < 4)
        return fail(err, errlen, "reduce descriptor is reduce:<kind>:<dims>:axes<A>[,<A>...][:keep]");
      int kind = -1;
      for (int k = ADNN_REDUCE_SUM; k <= ADNN_REDUCE_MIN; k++)
        if (field_is(&f[1], adnn_reduce_kind_name((adnn_reduce_kind)k))) kind = k;
      if (kind < 0) return bad_field(&f[1], op, "kind is sum, mean, max or min", err, errlen);
      p->reduce_kind = (adnn_reduce_kind)kind;
      for (int k = 2; k < nf; k++) {
        if (is_dims(&f[k]) && !have_dims) {
          if ((p->rank = parse_dims(f[k].s, f[k].n, p->dims)) < 1)
            return bad_field(&f[k], op, "dims are D0xD1x... (1 to 8 positive sizes)", err, errlen);
          have_dims = 1;
        } else if (field_is(&f[k], "keep")) {
          p->keep_dims = 1;
        } else if (f[k].n > 4 && strncmp(f[k].s, "axes", 4) == 0) {
          /* a comma-separated list of dim indices, each 0..7, no repeats */
          size_t q = 4;
          while (q < f[k].n) {
            const char *comma = memchr(f[k].s + q, ',', f[k].n - q);
            const size_t end = comma ? (size_t)(comma - f[k].s) : f[k].n;
            const int64_t a = parse_count(f[k].s + q, end - q);
            if (a < 0 || a > 7 || (p->reduce_axes >> a) & 1u)
              return bad_field(&f[k], op, "axes are distinct dims 0..7, comma-separated", err,
                               errlen);
            p->reduce_axes |= ADNN_REDUCE_AXIS(a);
            q = end + 1;
          }
        } else
          return bad_field(&f[k], op, "expected dims, axes<A>[,<A>...] or keep", err, errlen);
      }
      if (!have_dims || p->reduce_axes == 0)
        return fail(err, errlen, "reduce descriptor needs dims and axes");
      if (p->reduce_axes >> p->rank)
        return fail(err, errlen, "reduce: an axis is beyond the tensor's rank %d", p->rank);
      return 0;
    }
    case BENCH_OP_GEMM: {
      if (nf < 2) return fail(err, errlen, "gemm descriptor is gemm:m<M>n<N>k<K>[:ta][:tb]");
      int64_t mnk[3] = {-1, -1, -1};
      const char *s = f[1].s;
      size_t len = f[1].n, q = 0;
      while (q < len) {
        const char *kk = strchr("mnk", s[q]);
        size_t a = q++;
        size_t d = q;
        while (q < len && isdigit((unsigned char)s[q])) q++;
        if (!kk || !s[a] || d == q)
          return fail(err, errlen, "bad token '%.*s' in gemm descriptor: expected m<M>n<N>k<K>",
                      (int)(q - a), s + a);
        int64_t val = parse_count(s + d, q - d);
        if (val < 1 || mnk[kk - "mnk"] >= 0)
          return fail(err, errlen, "bad token '%.*s' in gemm descriptor", (int)(q - a), s + a);
        mnk[kk - "mnk"] = val;
      }
      if (mnk[0] < 0 || mnk[1] < 0 || mnk[2] < 0)
        return bad_field(&f[1], op, "needs m, n and k", err, errlen);
      p->m = mnk[0];
      p->n = mnk[1];
      p->k = mnk[2];
      for (int k = 2; k < nf; k++) {
        if (field_is(&f[k], "ta"))
          p->ta = 1;
        else if (field_is(&f[k], "tb"))
          p->tb = 1;
        else
          return bad_field(&f[k], op, "expected ta or tb", err, errlen);
      }
      return 0;
    }
  }
  if (!have_dims) return fail(err, errlen, "%s descriptor '%.*s' has no dims", op, (int)n, text);
  return 0;
}

int bench_problem_parse(const char *text, bench_problem *p, char *err, size_t errlen) {
  memset(p, 0, sizeof *p);
  if (err && errlen) err[0] = 0;
  size_t n = strlen(text);
  while (n && isspace((unsigned char)text[n - 1])) n--;
  while (n && isspace((unsigned char)*text)) text++, n--;
  if (n == 0) return fail(err, errlen, "empty problem descriptor");
  for (size_t i = 0; i < n; i++)
    if (isspace((unsigned char)text[i]) || !isprint((unsigned char)text[i]))
      return fail(err, errlen, "bad token '%.*s': spaces are not allowed in a descriptor",
                  (int)n, text);
  const char *colon = memchr(text, ':', n);
  size_t head = colon ? (size_t)(colon - text) : n;
  int op = -1;
  for (int i = 0; i <= BENCH_OP_GEMM; i++)
    if (strlen(op_names[i]) == head && strncmp(op_names[i], text, head) == 0) op = i;
  if (op == BENCH_OP_CONV) { /* optional "conv:" prefix */
    text += head + 1;
    n -= head + 1;
    return parse_conv(text, n, p, err, errlen);
  }
  if (op < 0) {
    /* No op prefix: a convolution (its name may contain ':'). */
    if (colon && !memchr(text, 'n', head))
      return fail(err, errlen, "bad token '%.*s': unknown op (conv, pool, act, softmax, lnorm, "
                  "rmsnorm, bnorm, binary, reduce, gemm)", (int)head, text);
    return parse_conv(text, n, p, err, errlen);
  }
  p->op = op;
  /* The name: from the first "_n" to the end. */
  const char *nm = NULL;
  for (size_t i = 0; i + 1 < n; i++)
    if (text[i] == '_' && text[i + 1] == 'n') {
      nm = text + i;
      break;
    }
  if (nm) {
    size_t len = (size_t)(text + n - (nm + 2));
    const char *b = nm + 2;
    if (len && *b == '"') b++, len--;
    if (len && b[len - 1] == '"') len--;
    if (len >= BENCH_NAME_MAX) return fail(err, errlen, "name '%.*s' is too long", (int)len, b);
    memcpy(p->name, b, len);
    p->name[len] = 0;
    n = (size_t)(nm - text);
  }
  if (head + 1 >= n)
    return fail(err, errlen, "bad token '%.*s': %s descriptor has no fields", (int)n, text,
                op_names[op]);
  return parse_compact(text, n, p, err, errlen);
}

void bench_problem_set_mb(bench_problem *p, int64_t mb) {
  if (p->op == BENCH_OP_CONV || p->op == BENCH_OP_POOL || p->op == BENCH_OP_BNORM) p->mb = mb;
}

/* ---------------------------------------------------------------------- */
/* Printing and counts                                                      */
/* ---------------------------------------------------------------------- */

typedef struct sbuf {
  char *b;
  size_t len, used;
} sbuf;

static void put(sbuf *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  size_t room = s->used < s->len ? s->len - s->used : 0;
  int w = vsnprintf(s->b + (room ? s->used : 0), room, fmt, ap);
  va_end(ap);
  if (w > 0) s->used += (size_t)w;
}

static void put_dims(sbuf *s, int rank, const int64_t *d) {
  for (int i = 0; i < rank; i++) put(s, i ? "x%lld" : "%lld", (long long)d[i]);
}

void bench_problem_format(const bench_problem *p, char *buf, size_t len) {
  sbuf s = {buf, len, 0};
  if (len) buf[0] = 0;
  switch (p->op) {
    case BENCH_OP_CONV:
      if (p->g != 1) put(&s, "g%lld", (long long)p->g);
      put(&s, "mb%lldic%lldih%lld", (long long)p->mb, (long long)p->ic, (long long)p->ih);
      if (p->iw != p->ih) put(&s, "iw%lld", (long long)p->iw);
      put(&s, "oc%lldoh%lld", (long long)p->oc, (long long)p->oh);
      if (p->ow != p->oh) put(&s, "ow%lld", (long long)p->ow);
      put(&s, "kh%lld", (long long)p->kh);
      if (p->kw != p->kh) put(&s, "kw%lld", (long long)p->kw);
      if (p->sh != 1 || p->sw != 1) put(&s, "sh%lld", (long long)p->sh);
      if (p->sw != p->sh) put(&s, "sw%lld", (long long)p->sw);
      if (p->pt || p->pl) put(&s, "ph%lld", (long long)p->pt);
      if (p->pl != p->pt) put(&s, "pw%lld", (long long)p->pl);
      if (p->dh != 1 || p->dw != 1) put(&s, "dh%lld", (long long)(p->dh - 1));
      if (p->dw != p->dh) put(&s, "dw%lld", (long long)(p->dw - 1));
      break;
    case BENCH_OP_POOL:
      put(&s, "pool:%s:mb%lldic%lldih%lld", pool_word(p->pool_kind), (long long)p->mb,
          (long long)p->ic, (long long)p->ih);
      if (p->iw != p->ih) put(&s, "iw%lld", (long long)p->iw);
      put(&s, "kh%lld", (long long)p->kh);
      if (p->kw != p->kh) put(&s, "kw%lld", (long long)p->kw);
      if (p->sh != 1 || p->sw != 1) put(&s, "sh%lld", (long long)p->sh);
      if (p->sw != p->sh) put(&s, "sw%lld", (long long)p->sw);
      if (p->pt || p->pl) put(&s, "ph%lld", (long long)p->pt);
      if (p->pl != p->pt) put(&s, "pw%lld", (long long)p->pl);
      if (p->ceil_mode) put(&s, ":ceil");
      break;
    case BENCH_OP_ACT:
      put(&s, "act:%s:", adnn_activation_name(p->act_kind));
      if (p->alpha != 0) put(&s, "a%g:", p->alpha);
      if (p->beta != 0) put(&s, "b%g:", p->beta);
      put_dims(&s, p->rank, p->dims);
      break;
    case BENCH_OP_SOFTMAX:
      put(&s, "softmax:axis%d:%s", p->axis, p->log_softmax ? "log:" : "");
      put_dims(&s, p->rank, p->dims);
      break;
    case BENCH_OP_LNORM:
    case BENCH_OP_RMSNORM:
      put(&s, "%s:", op_names[p->op]);
      put_dims(&s, p->rank, p->dims);
      if (p->norm_dims != 1) put(&s, ":nd%d", p->norm_dims);
      if (!p->has_gain) put(&s, ":nogain");
      if (p->op == BENCH_OP_LNORM && !p->has_bias) put(&s, ":nobias");
      if (p->op == BENCH_OP_RMSNORM && p->has_bias) put(&s, ":bias");
      if (p->eps != 1e-5) put(&s, ":eps%g", p->eps);
      break;
    case BENCH_OP_BNORM:
      put(&s, "bnorm:mb%lldic%lld", (long long)p->mb, (long long)p->ic);
      if (p->ih) put(&s, "ih%lld", (long long)p->ih);
      if (p->iw != p->ih) put(&s, "iw%lld", (long long)p->iw);
      if (p->act_kind != ADNN_ACTIVATION_IDENTITY) put(&s, ":%s", adnn_activation_name(p->act_kind));
      break;
    case BENCH_OP_BINARY:
      put(&s, "binary:%s:", adnn_binary_op_name(p->binary_op));
      put_dims(&s, p->rank, p->dims);
      put(&s, "+");
      put_dims(&s, p->rank_b, p->dims_b);
      break;
    case BENCH_OP_REDUCE:
      put(&s, "reduce:%s:", adnn_reduce_kind_name(p->reduce_kind));
      put_dims(&s, p->rank, p->dims);
      put(&s, ":axes");
      for (int i = 0, first = 1; i < p->rank; i++)
        if ((p->reduce_axes >> i) & 1u) {
          put(&s, "%s%d", first ? "" : ",", i);
          first = 0;
        }
      if (p->keep_dims) put(&s, ":keep");
      break;
    case BENCH_OP_GEMM:
      put(&s, "gemm:m%lldn%lldk%lld%s%s", (long long)p->m, (long long)p->n, (long long)p->k,
          p->ta ? ":ta" : "", p->tb ? ":tb" : "");
      break;
  }
  if (p->name[0]) put(&s, "_n%s", p->name);
}

static double count_of(int rank, const int64_t *d) {
  double c = 1;
  for (int i = 0; i < rank; i++) c *= (double)d[i];
  return c;
}

double bench_problem_flops(const bench_problem *p) {
  if (p->op == BENCH_OP_CONV)
    return 2.0 * (double)p->mb * (double)p->oc * (double)p->oh * (double)p->ow *
           (double)(p->ic / p->g) * (double)p->kh * (double)p->kw;
  if (p->op == BENCH_OP_GEMM) return 2.0 * (double)p->m * (double)p->n * (double)p->k;
  return 0.0;
}

double bench_problem_bytes(const bench_problem *p, size_t es) {
  double e = (double)es;
  switch (p->op) {
    case BENCH_OP_CONV:
      return e * ((double)p->mb * p->ic * p->ih * p->iw + (double)p->oc * (p->ic / p->g) * p->kh * p->kw +
                  (double)p->mb * p->oc * p->oh * p->ow);
    case BENCH_OP_POOL:
      return e * ((double)p->mb * p->ic * p->ih * p->iw + (double)p->mb * p->ic * p->oh * p->ow);
    case BENCH_OP_BNORM: {
      double hw = (p->ih ? (double)p->ih : 1.0) * (p->iw ? (double)p->iw : 1.0);
      return e * (2.0 * (double)p->mb * p->ic * hw + 4.0 * p->ic);
    }
    case BENCH_OP_ACT:
    case BENCH_OP_SOFTMAX: return e * 2.0 * count_of(p->rank, p->dims);
    case BENCH_OP_LNORM:
    case BENCH_OP_RMSNORM: {
      double d = count_of(p->norm_dims, p->dims + p->rank - p->norm_dims);
      return e * (2.0 * count_of(p->rank, p->dims) + (p->has_gain + p->has_bias) * d);
    }
    case BENCH_OP_BINARY: {
      int r = p->rank > p->rank_b ? p->rank : p->rank_b;
      double y = 1;
      for (int k = 0; k < r; k++) {
        int64_t a = k < p->rank ? p->dims[p->rank - 1 - k] : 1;
        int64_t b = k < p->rank_b ? p->dims_b[p->rank_b - 1 - k] : 1;
        y *= (double)(a > b ? a : b);
      }
      return e * (count_of(p->rank, p->dims) + count_of(p->rank_b, p->dims_b) + y);
    }
    case BENCH_OP_REDUCE: {
      double out = 1;
      for (int k = 0; k < p->rank; k++)
        if (!((p->reduce_axes >> k) & 1u)) out *= (double)p->dims[k];
      return e * (count_of(p->rank, p->dims) + out);
    }
    case BENCH_OP_GEMM:
      return e * ((double)p->m * p->k + (double)p->k * p->n + (double)p->m * p->n);
  }
  return 0.0;
}
