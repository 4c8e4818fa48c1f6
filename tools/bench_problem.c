/*
 * Problem descriptors of adnn-bench (see bench_problem.h and doc/bench.md).
 * Written for adnn; the convolution grammar follows the public descriptor
 * format of oneDNN's benchdnn, including how it deduces omitted values.
 */
#include "bench_problem.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
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
                                       "rmsnorm", "bnorm", "binary", "reduce", "gemm",
                                       "xent",    "optim",  "matmul",  "attention", "reorder",
                                       "quantize", "dequantize", "lscale"};

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

/* The results of read_count. */
enum { COUNT_OK = 0, COUNT_MALFORMED = -1, COUNT_TOO_LARGE = -2 };

/* The decimal digits s[0..n) as a number in *out. COUNT_MALFORMED when there
 * are none or something else is there, COUNT_TOO_LARGE above
 * BENCH_NUMBER_MAX (any number of digits is read without overflowing: the
 * value stops growing once it passes the limit). */
static int read_count(const char *s, size_t n, int64_t *out) {
  if (n == 0) return COUNT_MALFORMED;
  int64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (!isdigit((unsigned char)s[i])) return COUNT_MALFORMED;
    if (v <= BENCH_NUMBER_MAX) v = v * 10 + (s[i] - '0');
  }
  if (v > BENCH_NUMBER_MAX) return COUNT_TOO_LARGE;
  *out = v;
  return COUNT_OK;
}

/* a * b, or -1 when it would pass BENCH_ELEMENTS_MAX (a, b >= 0). */
static int64_t elements_mul(int64_t a, int64_t b) {
  if (a < 0 || b < 0) return -1;
  if (a != 0 && b > BENCH_ELEMENTS_MAX / a) return -1;
  return a * b;
}

/* The element count of a tensor, or -1 above BENCH_ELEMENTS_MAX. */
static int64_t elements_of(int rank, const int64_t *d) {
  int64_t c = 1;
  for (int i = 0; i < rank && c >= 0; i++) c = elements_mul(c, d[i]);
  return c;
}

/* Refuses a tensor of more than BENCH_ELEMENTS_MAX elements (the harness and
 * the byte counts multiply them in int64_t). */
static int check_elements(const char *what, int rank, const int64_t *d, char *err,
                          size_t errlen) {
  if (elements_of(rank, d) >= 0) return 0;
  return fail(err, errlen, "%s has more than %lld elements, the limit of a tensor", what,
              (long long)BENCH_ELEMENTS_MAX);
}

/* "D0xD1x..." into dims; returns the rank, or -1 with a message in err that
 * names the token `tok` (of an `op` descriptor). */
static int parse_dims(const char *s, size_t n, int64_t *dims, const char *tok, size_t tok_n,
                      const char *op, char *err, size_t errlen) {
  int rank = 0;
  size_t i = 0;
  for (;;) {
    size_t j = i;
    while (j < n && s[j] != 'x') j++;
    if (rank == BENCH_MAX_RANK)
      return fail(err, errlen, "bad token '%.*s' in %s descriptor: more than %d dims",
                  (int)tok_n, tok, op, BENCH_MAX_RANK);
    int64_t v = 0;
    const int r = read_count(s + i, j - i, &v);
    if (r == COUNT_TOO_LARGE)
      return fail(err, errlen, "bad token '%.*s' in %s descriptor: a size is at most %lld",
                  (int)tok_n, tok, op, (long long)BENCH_NUMBER_MAX);
    if (r != COUNT_OK || v < 1)
      return fail(err, errlen,
                  "bad token '%.*s' in %s descriptor: dims are D0xD1x... (1 to %d sizes, "
                  "each at least 1)",
                  (int)tok_n, tok, op, BENCH_MAX_RANK);
    dims[rank++] = v;
    if (j == n) break;
    i = j + 1; /* past the x: a trailing x is an empty size, refused above */
  }
  if (elements_of(rank, dims) < 0)
    return fail(err, errlen, "bad token '%.*s' in %s descriptor: more than %lld elements",
                (int)tok_n, tok, op, (long long)BENCH_ELEMENTS_MAX);
  return rank;
}

/* Colon-separated fields (conv's after its geometry, the compact forms). */
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

/* A finite double after `skip` characters of f (strtod's syntax, nothing
 * after it). Subnormal values are accepted (strtod flags them with ERANGE,
 * but they read back exactly); overflow and underflow to zero are not. */
static int parse_number(const field *f, size_t skip, double *out) {
  char buf[64];
  if (f->n <= skip || f->n - skip >= sizeof buf) return -1;
  memcpy(buf, f->s + skip, f->n - skip);
  buf[f->n - skip] = 0;
  if (isspace((unsigned char)buf[0])) return -1;
  char *end;
  errno = 0;
  double v = strtod(buf, &end);
  if (end == buf || *end || !isfinite(v)) return -1;
  if (errno == ERANGE && !(v != 0 && fabs(v) < DBL_MIN)) return -1;
  *out = v;
  return 0;
}

/* A small integer after `skip` characters of f: an optional '-' (when
 * negative_ok), then digits; within [lo, hi]. */
static int parse_small_int(const field *f, size_t skip, int negative_ok, int lo, int hi,
                           int *out) {
  if (f->n <= skip) return -1;
  const char *s = f->s + skip;
  size_t n = f->n - skip;
  int neg = 0;
  if (negative_ok && n > 1 && s[0] == '-') neg = 1, s++, n--;
  int64_t v = 0;
  if (read_count(s, n, &v) != COUNT_OK) return -1;
  if (neg) v = -v;
  if (v < lo || v > hi) return -1;
  *out = (int)v;
  return 0;
}

static int bad_field(const field *f, const char *op, const char *hint, char *err, size_t errlen) {
  return fail(err, errlen, "bad token '%.*s' in %s descriptor: %s", (int)f->n, f->s, op, hint);
}

/* ---------------------------------------------------------------------- */
/* Image geometry: conv (benchdnn grammar), pool, bnorm                     */
/* ---------------------------------------------------------------------- */

/* pb and pr (the bottom and right padding) are adnn's: benchdnn implies them
 * from oh and ow, which cannot say every padding (several give one oh when
 * the stride is above 1). */
enum { K_G, K_MB, K_IC, K_IH, K_IW, K_OC, K_OH, K_OW, K_KH, K_KW, K_SH, K_SW, K_PH, K_PW,
       K_DH, K_DW, K_PB, K_PR, K_COUNT };
static const char *const keys[K_COUNT] = {"g",  "mb", "ic", "ih", "iw", "oc", "oh", "ow", "kh",
                                          "kw", "sh", "sw", "ph", "pw", "dh", "dw", "pb", "pr"};

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
        return fail(err, errlen, "name '%.*s' is too long (at most %d characters)", (int)(e - b),
                    b, BENCH_NAME_MAX - 1);
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
    int64_t val = 0;
    if (read_count(s + d, i - d, &val) != COUNT_OK)
      return fail(err, errlen, "bad token '%.*s': %s is at most %lld", (int)(i - a), s + a,
                  keys[k], (long long)BENCH_NUMBER_MAX);
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

/* Refuses a derived size (an output size, a deduced padding) above
 * BENCH_NUMBER_MAX: the canonical form prints it, and the parser would refuse
 * it there. */
static int check_derived(const char *what, const char *axis, int64_t v, char *err,
                         size_t errlen) {
  if (v <= BENCH_NUMBER_MAX) return 0;
  return fail(err, errlen, "the %s%s comes out as %lld, above the limit %lld", what, axis,
              (long long)v, (long long)BENCH_NUMBER_MAX);
}

/* One spatial dimension of a conv: deduces o, pad_begin, pad_end from i, k, s,
 * p (begin padding), e (end padding) and o (each -1 = omitted), and d (extra
 * dilation). Every input is at most BENCH_NUMBER_MAX, so with the extent
 * checked no product below overflows. */
static int conv_dim(const char *axis, int64_t i, int64_t k, int64_t s, int64_t p, int64_t e,
                    int64_t o, int64_t d, int64_t *out_o, int64_t *pb, int64_t *pe, char *err,
                    size_t errlen) {
  if (s < 1) return fail(err, errlen, "bad token 's%s0': strides are at least 1", axis);
  if (k < 1) return fail(err, errlen, "bad token 'k%s0': kernel sizes are at least 1", axis);
  if (i < 1) return fail(err, errlen, "bad token 'i%s0': input sizes are at least 1", axis);
  if (o == 0) return fail(err, errlen, "bad token 'o%s0': output sizes are at least 1", axis);
  const int64_t ext = (k - 1) * (d + 1) + 1;
  if (ext > BENCH_NUMBER_MAX)
    return fail(err, errlen,
                "the dilated kernel (k%s%lld, d%s%lld) spans %lld elements, above the limit %lld",
                axis, (long long)k, axis, (long long)d, (long long)ext,
                (long long)BENCH_NUMBER_MAX);
  if (e >= 0) { /* the end padding given: nothing to deduce */
    if (p < 0) p = 0;
    const int64_t num = i + p + e - ext;
    if (num < 0)
      return fail(err, errlen,
                  "the kernel (k%s%lld with dilation) is larger than the padded input (i%s%lld, "
                  "p%s%lld, p%s%lld at the end)",
                  axis, (long long)k, axis, (long long)i, axis, (long long)p, axis, (long long)e);
    const int64_t want = num / s + 1;
    if (o >= 0 && o != want)
      return fail(err, errlen,
                  "bad token 'o%s%lld': does not match i%s%lld k%s%lld s%s%lld and the padding "
                  "(o%s%lld expected)",
                  axis, (long long)o, axis, (long long)i, axis, (long long)k, axis, (long long)s,
                  axis, (long long)want);
    o = want;
  } else if (o < 0) {
    if (p < 0) p = 0;
    o = out_size(i, k, s, p, d);
    if (o < 1)
      return fail(err, errlen,
                  "the kernel (k%s%lld with dilation) is larger than the padded input (i%s%lld, "
                  "p%s%lld)",
                  axis, (long long)k, axis, (long long)i, axis, (long long)p);
    e = p;
  } else {
    if (p < 0) { /* deduce the padding from the output size, as benchdnn does */
      p = 0;
      if (out_size(i, k, s, 0, d) != o) {
        p = ((o - 1) * s - i + ext) / 2;
        if (p < 0) p = 0;
      }
    }
    if (out_size(i, k, s, p, d) == o) {
      e = p;
    } else {
      /* benchdnn: the end padding is implied by the output size. */
      const int64_t r = (o - 1) * s + ext - i - p;
      if (r < 0 || r >= ext)
        return fail(err, errlen,
                    "bad token 'o%s%lld': does not match i%s%lld k%s%lld s%s%lld p%s%lld "
                    "(o%s%lld expected)",
                    axis, (long long)o, axis, (long long)i, axis, (long long)k, axis,
                    (long long)s, axis, (long long)p, axis,
                    (long long)out_size(i, k, s, p, d));
      e = r;
    }
  }
  if (check_derived("output size o", axis, o, err, errlen) ||
      check_derived("padding p", axis, p, err, errlen) ||
      check_derived("end padding p", axis, e, err, errlen))
    return -1;
  *out_o = o;
  *pb = p;
  *pe = e;
  return 0;
}

/* Copies h <-> w when one of them is omitted. */
static void mirror(int64_t *v, int h, int w) {
  if (v[h] < 0) v[h] = v[w];
  if (v[w] < 0) v[w] = v[h];
}

/* Conv's fields after the geometry, each ':' then the field, before the name
 * (which must then start with "_n"): beta<B> (*beta_tok is that field, or
 * n 0 when none). */
static int parse_conv_fields(const char *s, size_t n, bench_problem *p, field *beta_tok,
                             char *err, size_t errlen) {
  size_t i = 0;
  while (i < n && s[i] == ':') {
    size_t j = ++i;
    while (j < n && s[j] != ':' && s[j] != '_') j++;
    const field f = {s + i, j - i};
    if (f.n == 0)
      return fail(err, errlen, "empty field in convolution descriptor '%.*s'", (int)n, s);
    if (f.n > 4 && strncmp(f.s, "beta", 4) == 0 && parse_number(&f, 4, &p->beta) == 0) {
      if (beta_tok->n) return bad_field(&f, "convolution", "given twice", err, errlen);
      *beta_tok = f;
    } else {
      return bad_field(&f, "convolution", "expected beta<B> (a finite number) after the geometry",
                       err, errlen);
    }
    i = j;
  }
  if (i == n) return 0;
  /* s[i] is '_': only the name may follow. */
  if (i + 1 >= n || s[i + 1] != 'n')
    return fail(err, errlen, "bad token '%.*s' in convolution descriptor: only the name (_n<name>) "
                "may follow the ':' fields", (int)(n - i), s + i);
  int64_t unused[K_COUNT];
  return parse_geometry(s + i, n - i, 0u, unused, p->name, "convolution", err, errlen);
}

static int parse_conv(const char *s, size_t n, bench_problem *p, field *beta_tok, char *err,
                      size_t errlen) {
  int64_t v[K_COUNT];
  /* The geometry runs to the name (the first 'n', which no key has) or to
   * the first ':' before it, which starts conv's own fields. */
  size_t geometry = 0;
  while (geometry < n && s[geometry] != 'n' && s[geometry] != ':') geometry++;
  const int fields = geometry < n && s[geometry] == ':';
  if (parse_geometry(s, fields ? geometry : n, (1u << K_COUNT) - 1, v, p->name, "convolution", err,
                     errlen))
    return -1;
  if (fields && parse_conv_fields(s + geometry, n - geometry, p, beta_tok, err, errlen)) return -1;
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
  if (conv_dim("h", p->ih, p->kh, p->sh, v[K_PH], v[K_PB], v[K_OH], dh, &p->oh, &p->pt, &p->pb,
               err, errlen) ||
      conv_dim("w", p->iw, p->kw, p->sw, v[K_PW], v[K_PR], v[K_OW], dw, &p->ow, &p->pl, &p->pr,
               err, errlen))
    return -1;
  const int64_t x[4] = {p->mb, p->ic, p->ih, p->iw}, w[4] = {p->oc, p->ic / p->g, p->kh, p->kw},
                y[4] = {p->mb, p->oc, p->oh, p->ow};
  if (check_elements("the input x", 4, x, err, errlen) ||
      check_elements("the filter w", 4, w, err, errlen) ||
      check_elements("the output y", 4, y, err, errlen))
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
  if (check_derived("output size o", "h", p->oh, err, errlen) ||
      check_derived("output size o", "w", p->ow, err, errlen))
    return -1;
  const int64_t x[4] = {p->mb, p->ic, p->ih, p->iw}, y[4] = {p->mb, p->ic, p->oh, p->ow};
  if (check_elements("the input x", 4, x, err, errlen) ||
      check_elements("the output y", 4, y, err, errlen))
    return -1;
  if ((oh >= 0 && oh != p->oh) || (ow >= 0 && ow != p->ow))
    return fail(err, errlen, "bad token 'oh%lld': the output is %lldx%lld", (long long)oh,
                (long long)p->oh, (long long)p->ow);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* Compact forms                                                            */
/* ---------------------------------------------------------------------- */


/* Fields of a compact form, each allowed once (a second one is refused, so
 * that a descriptor says one problem). */
enum { F_DIMS = 1u << 0, F_ALPHA = 1u << 1, F_BETA = 1u << 2, F_AXIS = 1u << 3,
       F_LOG = 1u << 4, F_ND = 1u << 5, F_GAIN = 1u << 6, F_BIAS = 1u << 7, F_EPS = 1u << 8,
       F_KEEP = 1u << 9, F_AXES = 1u << 10, F_ACT = 1u << 11, F_CEIL = 1u << 12,
       F_TA = 1u << 13, F_TB = 1u << 14, F_MOM = 1u << 16,
       F_IGN = 1u << 17, F_LR = 1u << 18, F_WD = 1u << 19, F_DAMP = 1u << 20,
       F_NESTEROV = 1u << 21, F_B1 = 1u << 22, F_B2 = 1u << 23, F_BATCH = 1u << 24,
       F_BBATCH = 1u << 25, F_RES = 1u << 26, F_INPLACE = 1u << 27, F_RS = 1u << 28,
       F_MMALPHA = 1u << 29 };
/* Attention's fields. A descriptor has the fields of one op only, so its
 * bits may be the ones other ops use. */
enum { F_CAUSAL = 1u << 24, F_KL = 1u << 25, F_NOLSE = 1u << 26, F_BSHD = 1u << 27,
       F_SCALE = 1u << 28 };

/* A problem's direction as the descriptor gives it: dir (enum bench_dir, -1
 * when none) and the token that gave it (for messages). */
typedef struct dir_token {
  int dir;
  const char *s;
  size_t n;
} dir_token;

/* A direction field "dir=<DIR>" (the prefix's or the normalizations' trailing
 * form) into *t, which must not have one yet. Returns 0, or -1 with a
 * message. */
static int read_dir(const char *s, size_t n, size_t skip, dir_token *t, char *err,
                    size_t errlen) {
  const int d = bench_dir_parse(s + skip, n - skip);
  if (d < 0)
    return fail(err, errlen, "bad token '%.*s': the direction is FWD_D, FWD_I, BWD_D, BWD_W, "
                "BWD_WB or BWD_DW", (int)n, s);
  if (t->dir >= 0)
    return fail(err, errlen, "bad token '%.*s': a direction given twice", (int)n, s);
  t->dir = d;
  t->s = s;
  t->n = n;
  return 0;
}

static int once(unsigned *seen, unsigned bit, const field *f, const char *op, char *err,
                size_t errlen) {
  if (*seen & bit) return bad_field(f, op, "given twice (or with its opposite)", err, errlen);
  *seen |= bit;
  return 0;
}

/* reorder's layout words (0 nchw, 1 nhwc, -1 other) and dtype words (the
 * adnn_dtype value, 0 for none), without libadnn's name functions. */
static const char *const reorder_dtype_words[] = {NULL, "f32", "f64", "f16", "bf16",
                                                  "i8", "i32", "u8"};
static int reorder_layout_of(const char *s, size_t n) {
  if (n == 4 && strncmp(s, "nchw", 4) == 0) return 0;
  if (n == 4 && strncmp(s, "nhwc", 4) == 0) return 1;
  return -1;
}
static int reorder_dtype_of(const char *s, size_t n) {
  for (int d = 1; d < 8; d++)
    if (strlen(reorder_dtype_words[d]) == n && strncmp(s, reorder_dtype_words[d], n) == 0)
      return d;
  return 0;
}

static int read_dims(const field *f, int64_t *dims, int *rank, const char *op, char *err,
                     size_t errlen) {
  const int r = parse_dims(f->s, f->n, dims, f->s, f->n, op, err, errlen);
  if (r < 0) return -1;
  *rank = r;
  return 0;
}

/* The default alpha and beta of an activation in the grammar: leaky_relu
 * a0.01, elu a1, clamp a0 b6 (relu6); 0 otherwise. */
static void activation_defaults(adnn_activation_kind kind, double *alpha, double *beta) {
  *alpha = kind == ADNN_ACTIVATION_LEAKY_RELU ? 0.01 : kind == ADNN_ACTIVATION_ELU ? 1.0 : 0.0;
  *beta = kind == ADNN_ACTIVATION_CLAMP ? 6.0 : 0.0;
}

#define DEFAULT_EPS 1e-5
#define DEFAULT_MOMENTUM 0.1
/* adnn_optimizer_desc_init's and adnn_softmax_cross_entropy_desc_init's. */
#define DEFAULT_LR 1e-3
#define DEFAULT_BETA1 0.9
#define DEFAULT_BETA2 0.999
#define DEFAULT_OPT_EPS 1e-8
#define DEFAULT_IGNORE_INDEX (-100)

/* A signed integer after `skip` characters of f, |v| <= BENCH_NUMBER_MAX. */
static int parse_signed(const field *f, size_t skip, int64_t *out) {
  if (f->n <= skip) return -1;
  const char *s = f->s + skip;
  size_t n = f->n - skip;
  const int neg = n > 1 && s[0] == '-';
  if (neg) s++, n--;
  int64_t v = 0;
  if (read_count(s, n, &v) != COUNT_OK) return -1;
  *out = neg ? -v : v;
  return 0;
}

/* <prefix><number> with the number finite and >= lo (and < hi when
 * hi_open). */
static int prefixed_number(const field *f, const char *prefix, double lo, double hi, int hi_open,
                           double *out) {
  const size_t k = strlen(prefix);
  double v;
  if (f->n <= k || strncmp(f->s, prefix, k) != 0 || parse_number(f, k, &v) != 0) return -1;
  if (!(v >= lo) || (hi_open && !(v < hi))) return -1;
  *out = v;
  return 0;
}

/* The fields of a compact form into p; the normalizations' trailing
 * direction field goes to *dir and the fields seen to *seen_out. */
/* The number of sizes of a D0xD1x... field. */
static int count_sizes(const field *f) {
  int c = 1;
  for (size_t i = 0; i < f->n; i++) c += f->s[i] == 'x';
  return c;
}
/* The optimizer's sizes live in dims. */
#if BENCH_OPTIM_MAX_TENSORS > BENCH_MAX_RANK
#error "bench_problem.dims must hold BENCH_OPTIM_MAX_TENSORS sizes"
#endif

/* The m<M>n<N>k<K> field of gemm and matmul into p->m, p->n, p->k (each at
 * least 1, every matrix within BENCH_ELEMENTS_MAX). */
static int parse_mnk(const field *fl, bench_problem *p, const char *op, char *err,
                     size_t errlen) {
  int64_t mnk[3] = {-1, -1, -1};
  const char *s = fl->s;
  size_t len = fl->n, q = 0;
  while (q < len) {
    const char *kk = strchr("mnk", s[q]);
    size_t a = q++;
    size_t d = q;
    while (q < len && isdigit((unsigned char)s[q])) q++;
    if (!kk || !s[a] || d == q)
      return fail(err, errlen, "bad token '%.*s' in %s descriptor: expected m<M>n<N>k<K>",
                  (int)(q - a), s + a, op);
    int64_t val = 0;
    if (read_count(s + d, q - d, &val) != COUNT_OK)
      return fail(err, errlen, "bad token '%.*s' in %s descriptor: %c is at most %lld",
                  (int)(q - a), s + a, op, s[a], (long long)BENCH_NUMBER_MAX);
    if (val < 1 || mnk[kk - "mnk"] >= 0)
      return fail(err, errlen, "bad token '%.*s' in %s descriptor: %s", (int)(q - a), s + a,
                  op, val < 1 ? "sizes are at least 1" : "given twice");
    mnk[kk - "mnk"] = val;
  }
  if (mnk[0] < 0 || mnk[1] < 0 || mnk[2] < 0)
    return bad_field(fl, op, "needs m, n and k", err, errlen);
  p->m = mnk[0];
  p->n = mnk[1];
  p->k = mnk[2];
  if (elements_mul(p->m, p->k) < 0 || elements_mul(p->k, p->n) < 0 ||
      elements_mul(p->m, p->n) < 0)
    return bad_field(fl, op, "a matrix has too many elements", err, errlen);
  return 0;
}

/* Attention's sizes b<B>h<H>[hkv<Hkv>]sq<Sq>[skv<Skv>]d<D>[dv<Dv>] (any
 * order, each once; b defaults to 1, hkv to h, skv to sq and dv to d). */
static int parse_attention_sizes(const field *f, bench_problem *p, char *err, size_t errlen) {
  static const char *const names[7] = {"b", "h", "hkv", "sq", "skv", "d", "dv"};
  int64_t v[7] = {-1, -1, -1, -1, -1, -1, -1};
  const char *s = f->s;
  size_t q = 0;
  while (q < f->n) {
    const size_t a = q;
    while (q < f->n && isalpha((unsigned char)s[q])) q++;
    const size_t d = q;
    while (q < f->n && isdigit((unsigned char)s[q])) q++;
    int key = -1;
    for (int k = 0; k < 7; k++)
      if (strlen(names[k]) == d - a && strncmp(names[k], s + a, d - a) == 0) key = k;
    if (key < 0 || d == q)
      return fail(err, errlen, "bad token '%.*s' in attention descriptor: expected b<B>, h<H>, "
                  "hkv<Hkv>, sq<Sq>, skv<Skv>, d<D> or dv<Dv>", (int)(q > a ? q - a : 1), s + a);
    int64_t val = 0;
    if (read_count(s + d, q - d, &val) != COUNT_OK)
      return fail(err, errlen, "bad token '%.*s' in attention descriptor: %s is at most %lld",
                  (int)(q - a), s + a, names[key], (long long)BENCH_NUMBER_MAX);
    if (val < 1 || v[key] >= 0)
      return fail(err, errlen, "bad token '%.*s' in attention descriptor: %s", (int)(q - a), s + a,
                  val < 1 ? "sizes are at least 1" : "given twice");
    v[key] = val;
  }
  if (v[1] < 0 || v[3] < 0 || v[5] < 0)
    return bad_field(f, "attention", "needs h, sq and d", err, errlen);
  p->att_b = v[0] < 0 ? 1 : v[0];
  p->att_h = v[1];
  p->att_hkv = v[2] < 0 ? v[1] : v[2];
  p->att_sq = v[3];
  p->att_skv = v[4] < 0 ? v[3] : v[4];
  p->att_d = v[5];
  p->att_dv = v[6] < 0 ? v[5] : v[6];
  if (p->att_h % p->att_hkv)
    return bad_field(f, "attention", "h must be a multiple of hkv", err, errlen);
  const int64_t q4[4] = {p->att_b, p->att_h, p->att_sq, p->att_d},
                k4[4] = {p->att_b, p->att_hkv, p->att_skv, p->att_d},
                v4[4] = {p->att_b, p->att_hkv, p->att_skv, p->att_dv},
                o4[4] = {p->att_b, p->att_h, p->att_sq, p->att_dv};
  if (check_elements("q", 4, q4, err, errlen) || check_elements("k", 4, k4, err, errlen) ||
      check_elements("v", 4, v4, err, errlen) || check_elements("o", 4, o4, err, errlen))
    return -1;
  return 0;
}

static int parse_compact(const char *text, size_t n, bench_problem *p, dir_token *dir,
                         unsigned *seen_out, char *err, size_t errlen) {
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
  unsigned seen = 0;
#define ONCE(bit, k)                                                                  \
  do {                                                                                \
    if (once(&seen, (bit), &f[k], op, err, errlen)) return -1;                        \
    *seen_out = seen;                                                                 \
  } while (0)
  switch (p->op) {
    case BENCH_OP_POOL: {
      if (nf < 3) return fail(err, errlen, "pool descriptor needs pool:<kind>:<geometry>");
      int kind = find_pool_word(&f[1]);
      if (kind < 0) return bad_field(&f[1], op, "kind is max, avg or avg_exclude", err, errlen);
      p->pool_kind = pool_words[kind].kind;
      for (int k = 3; k < nf; k++) {
        if (!field_is(&f[k], "ceil")) return bad_field(&f[k], op, "expected ceil", err, errlen);
        ONCE(F_CEIL, k);
        p->ceil_mode = 1;
      }
      if (parse_pool_geometry(f[2].s, f[2].n, p, err, errlen)) return -1;
      /* oh/ow given? re-read them for the check (the geometry parsed above) */
      int64_t v[K_COUNT];
      unsigned all = (1u << K_COUNT) - 1;
      parse_geometry(f[2].s, f[2].n, all, v, NULL, "pool", err, errlen);
      mirror(v, K_OH, K_OW);
      return finish_pool(p, v[K_OH], v[K_OW], err, errlen);
    }
    case BENCH_OP_REORDER: {
      p->rx_dtype = p->ry_dtype = 1; /* ADNN_DTYPE_F32 */
      int have_dims = 0, have_layout = 0, have_dtype = 0;
      for (int k = 1; k < nf; k++) {
        const char *arrow = NULL;
        for (size_t j = 0; j + 1 < f[k].n; j++)
          if (f[k].s[j] == '-' && f[k].s[j + 1] == '>') arrow = f[k].s + j;
        if (is_dims(&f[k]) && !have_dims) {
          have_dims = 1;
          ONCE(F_DIMS, k);
          if (read_dims(&f[k], p->dims, &p->rank, op, err, errlen)) return -1;
        } else if (arrow && !have_layout && reorder_layout_of(f[k].s, (size_t)(arrow - f[k].s)) >= 0 &&
                   reorder_layout_of(arrow + 2, f[k].n - (size_t)(arrow - f[k].s) - 2) >= 0) {
          have_layout = 1;
          p->rx_layout = reorder_layout_of(f[k].s, (size_t)(arrow - f[k].s));
          p->ry_layout = reorder_layout_of(arrow + 2, f[k].n - (size_t)(arrow - f[k].s) - 2);
        } else if (arrow && !have_dtype && reorder_dtype_of(f[k].s, (size_t)(arrow - f[k].s)) > 0 &&
                   reorder_dtype_of(arrow + 2, f[k].n - (size_t)(arrow - f[k].s) - 2) > 0) {
          have_dtype = 1;
          p->rx_dtype = reorder_dtype_of(f[k].s, (size_t)(arrow - f[k].s));
          p->ry_dtype = reorder_dtype_of(arrow + 2, f[k].n - (size_t)(arrow - f[k].s) - 2);
        } else {
          return bad_field(&f[k], op,
                           "expected <dims>, <nchw|nhwc>-><nchw|nhwc> or <dtype>-><dtype> "
                           "(f32, f64, f16, bf16, i8, u8, i32), each once",
                           err, errlen);
        }
      }
      if (!have_dims) return fail(err, errlen, "reorder descriptor needs reorder:<dims>[:...]");
      if ((p->rx_layout || p->ry_layout) && p->rank != 4)
        return fail(err, errlen, "reorder: nhwc needs 4-D dims (have rank %d)", p->rank);
      break;
    }
    case BENCH_OP_QUANTIZE:
    case BENCH_OP_DEQUANTIZE: {
      /* The fields ADNN_VERBOSE prints (core/verbose.c), in any order. */
      const int quantize = p->op == BENCH_OP_QUANTIZE;
      p->rx_dtype = quantize ? 1 : 5; /* f32 -> i8, i8 -> f32 */
      p->ry_dtype = quantize ? 5 : 1;
      p->q_axis = -1;
      p->q_scale = 1.0;
      p->q_zero_point = 0;
      int have_dims = 0, have_dtype = 0, have_s = 0, have_z = 0, have_axis = 0;
      for (int k = 1; k < nf; k++) {
        const char *arrow = NULL;
        for (size_t j = 0; j + 1 < f[k].n; j++)
          if (f[k].s[j] == '-' && f[k].s[j + 1] == '>') arrow = f[k].s + j;
        const int dx = arrow ? reorder_dtype_of(f[k].s, (size_t)(arrow - f[k].s)) : 0;
        const int dy = arrow ? reorder_dtype_of(arrow + 2, f[k].n - (size_t)(arrow - f[k].s) - 2)
                             : 0;
        double v = 0;
        int64_t z = 0;
        int a = 0;
        if (is_dims(&f[k]) && !have_dims) {
          have_dims = 1;
          ONCE(F_DIMS, k);
          if (read_dims(&f[k], p->dims, &p->rank, op, err, errlen)) return -1;
        } else if (arrow && !have_dtype && dx > 0 && dy > 0) {
          /* quantize: f32 -> i8 | u8; dequantize: i8 | u8 -> f32. */
          const int q8 = quantize ? dy : dx, f32 = quantize ? dx : dy;
          if (f32 != 1 || (q8 != 5 && q8 != 7))
            return bad_field(&f[k], op,
                             quantize ? "the dtypes are f32->i8 or f32->u8"
                                      : "the dtypes are i8->f32 or u8->f32",
                             err, errlen);
          have_dtype = 1;
          p->rx_dtype = dx;
          p->ry_dtype = dy;
        } else if (!have_s && f[k].s[0] == 's' && parse_number(&f[k], 1, &v) == 0) {
          /* The descriptor's scale is an F32: finite and > 0 there. */
          const float fv = (float)v;
          if (!(fv > 0.0f) || !isfinite(fv))
            return bad_field(&f[k], op, "the scale is finite and > 0 in F32", err, errlen);
          have_s = 1;
          p->q_scale = v;
        } else if (!have_z && f[k].s[0] == 'z' && parse_signed(&f[k], 1, &z) == 0) {
          have_z = 1;
          p->q_zero_point = z;
        } else if (!have_axis && f[k].n > 4 && strncmp(f[k].s, "axis", 4) == 0 &&
                   parse_small_int(&f[k], 4, 0, 0, BENCH_MAX_RANK - 1, &a) == 0) {
          have_axis = 1;
          p->q_axis = a;
        } else {
          return bad_field(&f[k], op,
                           "expected <dims>, <dtype>-><dtype>, axis<A>, s<scale> or z<zp>, each "
                           "once",
                           err, errlen);
        }
      }
      if (!have_dims)
        return fail(err, errlen, "%s descriptor needs %s:<dims>[:...]", op, op);
      if (have_axis && (have_s || have_z))
        return fail(err, errlen, "%s: axis<A> (per channel: scales and zero points are inputs) "
                    "takes no s<scale> or z<zp>", op);
      if (have_axis && p->q_axis >= p->rank)
        return fail(err, errlen, "bad token 'axis%d': the tensor has rank %d", p->q_axis,
                    p->rank);
      const int u8 = (quantize ? p->ry_dtype : p->rx_dtype) == 7;
      if (p->q_zero_point < (u8 ? 0 : -128) || p->q_zero_point > (u8 ? 255 : 127))
        return fail(err, errlen, "%s: zero point %lld is outside %s's range", op,
                    (long long)p->q_zero_point, u8 ? "u8" : "i8");
      break;
    }
    case BENCH_OP_ACT: {
      if (nf < 3) return fail(err, errlen, "act descriptor needs act:<kind>:<dims>");
      int kind = find_activation(&f[1]);
      if (kind < 0) return bad_field(&f[1], op, "unknown activation kind", err, errlen);
      p->act_kind = activation_kinds[kind];
      activation_defaults(p->act_kind, &p->alpha, &p->beta);
      for (int k = 2; k < nf; k++) {
        if (is_dims(&f[k])) {
          ONCE(F_DIMS, k);
          if (read_dims(&f[k], p->dims, &p->rank, op, err, errlen)) return -1;
        } else if (f[k].s[0] == 'a' && parse_number(&f[k], 1, &p->alpha) == 0) {
          ONCE(F_ALPHA, k);
        } else if (f[k].s[0] == 'b' && parse_number(&f[k], 1, &p->beta) == 0) {
          ONCE(F_BETA, k);
        } else
          return bad_field(&f[k], op, "expected a<alpha>, b<beta> (finite numbers) or dims",
                           err, errlen);
      }
      break;
    }
    case BENCH_OP_SOFTMAX: {
      p->axis = -1;
      for (int k = 1; k < nf; k++) {
        if (is_dims(&f[k])) {
          ONCE(F_DIMS, k);
          if (read_dims(&f[k], p->dims, &p->rank, op, err, errlen)) return -1;
        } else if (field_is(&f[k], "log")) {
          ONCE(F_LOG, k);
          p->log_softmax = 1;
        } else if (f[k].n > 4 && strncmp(f[k].s, "axis", 4) == 0 &&
                   parse_small_int(&f[k], 4, 1, -BENCH_MAX_RANK, BENCH_MAX_RANK - 1,
                                   &p->axis) == 0) {
          ONCE(F_AXIS, k);
        } else
          return bad_field(&f[k], op, "expected axis<A> (-8 to 7), log or dims", err, errlen);
      }
      if ((seen & F_DIMS) && (p->axis >= p->rank || p->axis < -p->rank))
        return fail(err, errlen, "bad token 'axis%d': the tensor has rank %d", p->axis, p->rank);
      break;
    }
    case BENCH_OP_LNORM:
    case BENCH_OP_RMSNORM: {
      p->norm_dims = 1;
      p->has_gain = 1;
      p->has_bias = p->op == BENCH_OP_LNORM;
      p->eps = DEFAULT_EPS;
      for (int k = 1; k < nf; k++) {
        if (is_dims(&f[k])) {
          ONCE(F_DIMS, k);
          if (read_dims(&f[k], p->dims, &p->rank, op, err, errlen)) return -1;
        } else if (field_is(&f[k], "nogain")) {
          ONCE(F_GAIN, k);
          p->has_gain = 0;
        } else if (field_is(&f[k], "nobias")) {
          ONCE(F_BIAS, k);
          p->has_bias = 0;
        } else if (field_is(&f[k], "bias")) {
          ONCE(F_BIAS, k);
          p->has_bias = 1;
        } else if (f[k].n > 2 && strncmp(f[k].s, "nd", 2) == 0 &&
                   parse_small_int(&f[k], 2, 0, 1, BENCH_MAX_RANK, &p->norm_dims) == 0) {
          ONCE(F_ND, k);
        } else if (f[k].n > 3 && strncmp(f[k].s, "eps", 3) == 0 &&
                   parse_number(&f[k], 3, &p->eps) == 0 && p->eps > 0) {
          ONCE(F_EPS, k);
        } else if (f[k].n >= 4 && strncmp(f[k].s, "dir=", 4) == 0) {
          /* the older trailing form of the direction */
          if (read_dir(f[k].s, f[k].n, 4, dir, err, errlen)) return -1;
        } else
          return bad_field(&f[k], op,
                           "expected dims, nd<D> (1 to 8), nogain, nobias, bias or eps<E> (E > 0)",
                           err, errlen);
      }
      if ((seen & F_DIMS) && p->norm_dims > p->rank)
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
      const int64_t x[4] = {p->mb, p->ic, p->ih ? p->ih : 1, p->iw ? p->iw : 1};
      if (check_elements("the input x", 4, x, err, errlen)) return -1;
      p->eps = DEFAULT_EPS;
      p->momentum = DEFAULT_MOMENTUM;
      for (int k = 2; k < nf; k++) {
        if (f[k].n >= 4 && strncmp(f[k].s, "dir=", 4) == 0) {
          /* the older trailing form of the direction */
          if (read_dir(f[k].s, f[k].n, 4, dir, err, errlen)) return -1;
          continue;
        }
        if (f[k].n > 3 && strncmp(f[k].s, "mom", 3) == 0 &&
            parse_number(&f[k], 3, &p->momentum) == 0 && p->momentum >= 0 && p->momentum <= 1) {
          ONCE(F_MOM, k);
          continue;
        }
        if (f[k].n > 3 && strncmp(f[k].s, "eps", 3) == 0 &&
            parse_number(&f[k], 3, &p->eps) == 0 && p->eps > 0) {
          ONCE(F_EPS, k);
          continue;
        }
        int kind = find_activation(&f[k]);
        if (kind < 0 || activation_params[kind] != 0)
          return bad_field(&f[k], op,
                           "expected a parameterless activation kind (relu, ...), "
                           "mom<M> (0 to 1) or eps<E> (E > 0)",
                           err, errlen);
        ONCE(F_ACT, k);
        p->act_kind = activation_kinds[kind];
      }
      return 0; /* the checks that depend on the direction: check_bnorm */
    }
    case BENCH_OP_BINARY: {
      if (nf != 3) return fail(err, errlen, "binary descriptor is binary:<op>:<dims>+<dims>");
      int bop = find_binary_op(&f[1]);
      if (bop < 0) return bad_field(&f[1], op, "op is add, sub, mul, div, max or min", err, errlen);
      p->binary_op = binary_ops[bop];
      const char *plus = memchr(f[2].s, '+', f[2].n);
      if (!plus) return bad_field(&f[2], op, "expected <dims>+<dims>", err, errlen);
      size_t na = (size_t)(plus - f[2].s);
      if ((p->rank = parse_dims(f[2].s, na, p->dims, f[2].s, f[2].n, op, err, errlen)) < 1 ||
          (p->rank_b = parse_dims(plus + 1, f[2].n - na - 1, p->dims_b, f[2].s, f[2].n, op, err,
                                  errlen)) < 1)
        return -1;
      /* NumPy broadcasting: aligned from the right, equal or 1. */
      int r = p->rank > p->rank_b ? p->rank : p->rank_b;
      int64_t y[BENCH_MAX_RANK];
      for (int k = 0; k < r; k++) {
        int64_t a = k < p->rank ? p->dims[p->rank - 1 - k] : 1;
        int64_t b = k < p->rank_b ? p->dims_b[p->rank_b - 1 - k] : 1;
        if (a != b && a != 1 && b != 1)
          return bad_field(&f[2], op, "shapes do not broadcast", err, errlen);
        y[k] = a > b ? a : b;
      }
      if (elements_of(r, y) < 0)
        return bad_field(&f[2], op, "the broadcast output has too many elements", err, errlen);
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
        if (is_dims(&f[k])) {
          ONCE(F_DIMS, k);
          if (read_dims(&f[k], p->dims, &p->rank, op, err, errlen)) return -1;
        } else if (field_is(&f[k], "keep")) {
          ONCE(F_KEEP, k);
          p->keep_dims = 1;
        } else if (f[k].n > 4 && strncmp(f[k].s, "axes", 4) == 0) {
          ONCE(F_AXES, k);
          /* a comma-separated list of dim indices, each 0..7, no repeats, no
           * empty item (so no trailing comma) */
          size_t q = 4;
          for (;;) {
            const char *comma = memchr(f[k].s + q, ',', f[k].n - q);
            const size_t end = comma ? (size_t)(comma - f[k].s) : f[k].n;
            int64_t a = -1;
            if (read_count(f[k].s + q, end - q, &a) != COUNT_OK || a > 7 ||
                (p->reduce_axes >> a) & 1u)
              return bad_field(&f[k], op, "axes are distinct dims 0..7, comma-separated", err,
                               errlen);
            p->reduce_axes |= ADNN_REDUCE_AXIS(a);
            if (!comma) break;
            q = end + 1;
          }
        } else
          return bad_field(&f[k], op, "expected dims, axes<A>[,<A>...] or keep", err, errlen);
      }
      if (!(seen & F_DIMS) || p->reduce_axes == 0)
        return fail(err, errlen, "reduce descriptor needs dims and axes");
      if (p->reduce_axes >> p->rank)
        return fail(err, errlen, "reduce: an axis is beyond the tensor's rank %d", p->rank);
      return 0;
    }
    case BENCH_OP_XENT: {
      if (nf < 3)
        return fail(err, errlen, "xent descriptor is xent:<mean|sum|none>:<N>x<C>[:ign<I>]");
      int red = -1;
      for (int k = ADNN_LOSS_REDUCTION_MEAN; k <= ADNN_LOSS_REDUCTION_NONE; k++)
        if (field_is(&f[1], adnn_loss_reduction_name((adnn_loss_reduction)k))) red = k;
      if (red < 0) return bad_field(&f[1], op, "reduction is mean, sum or none", err, errlen);
      p->loss_reduction = (adnn_loss_reduction)red;
      p->ignore_index = DEFAULT_IGNORE_INDEX;
      for (int k = 2; k < nf; k++) {
        if (is_dims(&f[k])) {
          ONCE(F_DIMS, k);
          if (read_dims(&f[k], p->dims, &p->rank, op, err, errlen)) return -1;
          if (p->rank != 2) return bad_field(&f[k], op, "dims are <N>x<C>", err, errlen);
        } else if (f[k].n > 3 && strncmp(f[k].s, "ign", 3) == 0 &&
                   parse_signed(&f[k], 3, &p->ignore_index) == 0) {
          ONCE(F_IGN, k);
        } else
          return bad_field(&f[k], op, "expected <N>x<C> or ign<I>", err, errlen);
      }
      if (!(seen & F_DIMS)) return fail(err, errlen, "xent descriptor needs <N>x<C>");
      return 0;
    }
    case BENCH_OP_OPTIM: {
      if (nf < 3)
        return fail(err, errlen, "optim descriptor is optim:<sgd|adam|adamw>:<S0>[x<S1>...]"
                    "[:lr<..>]...");
      int kind = -1;
      for (int k = ADNN_OPTIMIZER_SGD; k <= ADNN_OPTIMIZER_ADAMW; k++)
        if (field_is(&f[1], adnn_optimizer_kind_name((adnn_optimizer_kind)k))) kind = k;
      if (kind < 0) return bad_field(&f[1], op, "kind is sgd, adam or adamw", err, errlen);
      p->opt_kind = (adnn_optimizer_kind)kind;
      const int sgd = p->opt_kind == ADNN_OPTIMIZER_SGD;
      p->lr = DEFAULT_LR;
      p->beta1 = DEFAULT_BETA1;
      p->beta2 = DEFAULT_BETA2;
      p->opt_eps = DEFAULT_OPT_EPS;
      for (int k = 2; k < nf; k++) {
        if (is_dims(&f[k])) {
          ONCE(F_DIMS, k);
          if (count_sizes(&f[k]) > BENCH_OPTIM_MAX_TENSORS) {
            char hint[96];
            snprintf(hint, sizeof hint,
                     "more than %d tensors (adnn-bench's limit, see doc/bench.md)",
                     BENCH_OPTIM_MAX_TENSORS);
            return bad_field(&f[k], op, hint, err, errlen);
          }
          if (read_dims(&f[k], p->dims, &p->rank, op, err, errlen)) return -1;
        } else if (prefixed_number(&f[k], "lr", 0, 0, 0, &p->lr) == 0) {
          ONCE(F_LR, k);
        } else if (prefixed_number(&f[k], "wd", 0, 0, 0, &p->weight_decay) == 0) {
          ONCE(F_WD, k);
        } else if (sgd && prefixed_number(&f[k], "mom", 0, 0, 0, &p->sgd_momentum) == 0) {
          ONCE(F_MOM, k);
        } else if (sgd && prefixed_number(&f[k], "damp", 0, 0, 0, &p->dampening) == 0) {
          ONCE(F_DAMP, k);
        } else if (sgd && field_is(&f[k], "nesterov")) {
          ONCE(F_NESTEROV, k);
          p->nesterov = 1;
        } else if (!sgd && prefixed_number(&f[k], "b1", 0, 1, 1, &p->beta1) == 0) {
          ONCE(F_B1, k);
        } else if (!sgd && prefixed_number(&f[k], "b2", 0, 1, 1, &p->beta2) == 0) {
          ONCE(F_B2, k);
        } else if (!sgd && prefixed_number(&f[k], "eps", 0, 0, 0, &p->opt_eps) == 0 &&
                   p->opt_eps > 0) {
          ONCE(F_EPS, k);
        } else if (field_is(&f[k], "modelf16") || field_is(&f[k], "modelbf16")) {
          /* ADNN_VERBOSE prints master-weight plans so; refused by name
           * rather than read as the F32 step they are not. */
          return bad_field(&f[k], op, "optimizer model copies (F32 master weights, "
                           "model_dtype) are not run by adnn-bench yet: its cases have "
                           "outputs of one dtype (doc/bench.md)", err, errlen);
        } else
          return bad_field(&f[k], op,
                           sgd ? "expected sizes, lr<..>, wd<..>, mom<..>, damp<..> (each >= 0) "
                                 "or nesterov"
                               : "expected sizes, lr<..>, wd<..> (>= 0), b1<..>, b2<..> (0 to "
                                 "below 1) or eps<..> (> 0)",
                           err, errlen);
      }
      if (!(seen & F_DIMS)) return fail(err, errlen, "optim descriptor needs the tensors' sizes");
      if (p->nesterov && (p->sgd_momentum == 0 || p->dampening != 0))
        return fail(err, errlen, "optim: nesterov needs mom<M> > 0 and no dampening");
      return 0;
    }
    case BENCH_OP_LSCALE: {
      if (nf != 3)
        return fail(err, errlen, "lscale descriptor is lscale:<scale|unscale>:<S0>[x<S1>...]");
      int kind = -1;
      for (int k = ADNN_LOSS_SCALE_SCALE; k <= ADNN_LOSS_SCALE_UNSCALE; k++)
        if (field_is(&f[1], adnn_loss_scale_kind_name((adnn_loss_scale_kind)k))) kind = k;
      if (kind < 0) return bad_field(&f[1], op, "kind is scale or unscale", err, errlen);
      p->ls_kind = (adnn_loss_scale_kind)kind;
      if (!is_dims(&f[2])) return bad_field(&f[2], op, "expected the tensors' sizes", err, errlen);
      if (count_sizes(&f[2]) > BENCH_OPTIM_MAX_TENSORS) {
        char hint[96];
        snprintf(hint, sizeof hint, "more than %d tensors (adnn-bench's limit, see doc/bench.md)",
                 BENCH_OPTIM_MAX_TENSORS);
        return bad_field(&f[2], op, hint, err, errlen);
      }
      if (read_dims(&f[2], p->dims, &p->rank, op, err, errlen)) return -1;
      return 0;
    }
    case BENCH_OP_ATTENTION: {
      if (nf < 2)
        return fail(err, errlen, "attention descriptor is attention:b<B>h<H>[hkv<Hkv>]sq<Sq>"
                    "[skv<Skv>]d<D>[dv<Dv>][:causal][:bias<dims>][:kl][:nolse][:bshd][:scale<S>]");
      if (parse_attention_sizes(&f[1], p, err, errlen)) return -1;
      for (int k = 2; k < nf; k++) {
        if (field_is(&f[k], "causal")) {
          ONCE(F_CAUSAL, k);
          p->causal = 1;
        } else if (field_is(&f[k], "kl")) {
          ONCE(F_KL, k);
          p->key_lengths = 1;
        } else if (field_is(&f[k], "nolse")) {
          ONCE(F_NOLSE, k);
          p->no_lse = 1;
        } else if (field_is(&f[k], "bshd")) {
          ONCE(F_BSHD, k);
          p->bshd = 1;
        } else if (prefixed_number(&f[k], "scale", 0, 0, 0, &p->scale) == 0) {
          ONCE(F_SCALE, k);
        } else if (f[k].n > 4 && strncmp(f[k].s, "bias", 4) == 0 && isdigit((unsigned char)f[k].s[4])) {
          ONCE(F_BIAS, k);
          int64_t bd[BENCH_MAX_RANK];
          const int r = parse_dims(f[k].s + 4, f[k].n - 4, bd, f[k].s, f[k].n, op, err, errlen);
          if (r < 0) return -1;
          if (r > 4) return bad_field(&f[k], op, "the bias has rank 1 to 4", err, errlen);
          const int64_t full[4] = {p->att_b, p->att_h, p->att_sq, p->att_skv};
          for (int q = 0; q < r; q++)
            if (bd[q] != 1 && bd[q] != full[4 - r + q])
              return bad_field(&f[k], op, "the bias does not broadcast to [B, H, Sq, Skv] (each "
                               "dim, aligned from the right, is 1 or the full size)", err, errlen);
          p->bias_rank = r;
          for (int q = 0; q < r; q++) p->bias_dims[q] = bd[q];
        } else
          return bad_field(&f[k], op, "expected causal, bias<dims>, kl, nolse, bshd or scale<S> "
                           "(S >= 0)", err, errlen);
      }
      return 0;
    }
    case BENCH_OP_GEMM: {
      if (nf < 2) return fail(err, errlen, "gemm descriptor is gemm:m<M>n<N>k<K>[:ta][:tb]");
      if (parse_mnk(&f[1], p, op, err, errlen)) return -1;
      for (int k = 2; k < nf; k++) {
        if (field_is(&f[k], "ta")) {
          ONCE(F_TA, k);
          p->ta = 1;
        } else if (field_is(&f[k], "tb")) {
          ONCE(F_TB, k);
          p->tb = 1;
        } else
          return bad_field(&f[k], op, "expected ta or tb", err, errlen);
      }
      return 0;
    }
    case BENCH_OP_MATMUL: {
      if (nf < 2) return fail(err, errlen, "matmul descriptor is matmul:m<M>n<N>k<K>[:...]");
      if (parse_mnk(&f[1], p, op, err, errlen)) return -1;
      p->mm_alpha = p->res_scale = 1.0;
      for (int k = 2; k < nf; k++) {
        const field *g = &f[k];
        int kind;
        if (g->n > 5 && strncmp(g->s, "batch", 5) == 0 && isdigit((unsigned char)g->s[5])) {
          ONCE(F_BATCH, k);
          int64_t d[BENCH_MAX_RANK];
          const int r = parse_dims(g->s + 5, g->n - 5, d, g->s, g->n, op, err, errlen);
          if (r < 0) return -1;
          if (r > 2) return bad_field(g, op, "at most 2 batch dims (a of rank 4)", err, errlen);
          p->batch_rank = r;
          for (int q = 0; q < r; q++) p->batch[q] = d[q];
        } else if (field_is(g, "bbatch")) {
          ONCE(F_BBATCH, k);
          p->b_batched = 1;
        } else if (field_is(g, "ta")) {
          ONCE(F_TA, k);
          p->ta = 1;
        } else if (field_is(g, "tb")) {
          ONCE(F_TB, k);
          p->tb = 1;
        } else if (field_is(g, "bias")) {
          ONCE(F_BIAS, k);
          p->has_bias = 1;
        } else if (field_is(g, "res")) {
          ONCE(F_RES, k);
          p->has_residual = 1;
        } else if (field_is(g, "inplace")) {
          ONCE(F_INPLACE, k);
          p->res_inplace = 1;
        } else if (g->n > 5 && strncmp(g->s, "alpha", 5) == 0 &&
                   parse_number(g, 5, &p->mm_alpha) == 0) {
          ONCE(F_MMALPHA, k);
        } else if (g->n > 2 && strncmp(g->s, "rs", 2) == 0 &&
                   parse_number(g, 2, &p->res_scale) == 0) {
          ONCE(F_RS, k);
        } else if ((kind = find_activation(g)) >= 0) {
          ONCE(F_ACT, k);
          p->act_kind = activation_kinds[kind];
        } else if (g->s[0] == 'a' && parse_number(g, 1, &p->alpha) == 0) {
          ONCE(F_ALPHA, k);
        } else if (g->s[0] == 'b' && parse_number(g, 1, &p->beta) == 0) {
          ONCE(F_BETA, k);
        } else
          return bad_field(g, op, "expected batch<B0>[x<B1>], bbatch, ta, tb, alpha<A>, bias, "
                           "res, inplace, rs<S>, an activation kind, a<alpha> or b<beta>",
                           err, errlen);
      }
      if ((seen & (F_ALPHA | F_BETA)) && !(seen & F_ACT))
        return fail(err, errlen, "matmul: a<alpha> and b<beta> need an activation kind");
      /* The activation's parameters not given take the grammar's defaults,
       * whatever the order of the fields. */
      double da, db;
      activation_defaults(p->act_kind, &da, &db);
      if (!(seen & F_ALPHA)) p->alpha = da;
      if (!(seen & F_BETA)) p->beta = db;
      if (p->b_batched && p->batch_rank == 0)
        return fail(err, errlen, "matmul: bbatch needs batch<B0>[x<B1>]");
      if ((p->res_inplace || (seen & F_RS)) && !p->has_residual)
        return fail(err, errlen, "matmul: inplace and rs<S> need res");
      int64_t b = 1;
      for (int q = 0; q < p->batch_rank; q++) b = elements_mul(b, p->batch[q]);
      const int64_t bm = b < 0 ? -1 : elements_mul(b, p->m);
      if (bm < 0 || elements_mul(bm, p->k) < 0 || elements_mul(bm, p->n) < 0 ||
          (p->b_batched && elements_mul(elements_mul(b, p->k), p->n) < 0))
        return bad_field(&f[1], op, "a tensor has too many elements", err, errlen);
      return 0;
    }
  }
#undef ONCE
  if (!(seen & F_DIMS))
    return fail(err, errlen, "%s descriptor '%.*s' has no dims", op, (int)n, text);
  return 0;
}

static const char *const dir_names[BENCH_DIR_COUNT] = {"FWD_D", "FWD_I",  "BWD_D",
                                                        "BWD_W", "BWD_WB", "BWD_DW"};
#define DIR_BIT(d) (1u << BENCH_DIR_##d)

int bench_dir_parse(const char *s, size_t n) {
  for (int d = 0; d < BENCH_DIR_COUNT; d++)
    if (strlen(dir_names[d]) == n && strncmp(dir_names[d], s, n) == 0) return d;
  return -1;
}

const char *bench_dir_name(int dir) {
  return dir >= 0 && dir < BENCH_DIR_COUNT ? dir_names[dir] : "unknown";
}

/* Each op's directions: those its adnn ops run (doc/bench.md). FWD_I is
 * benchdnn's forward inference: the forward op itself wherever the op has
 * no training mode, and batch norm's inference against FWD_D's training. */
unsigned bench_op_dirs(int op) {
  switch (op) {
    case BENCH_OP_CONV:
      return DIR_BIT(FWD_D) | DIR_BIT(FWD_I) | DIR_BIT(BWD_D) | DIR_BIT(BWD_W) | DIR_BIT(BWD_WB);
    case BENCH_OP_POOL:
    case BENCH_OP_ACT:
    case BENCH_OP_SOFTMAX:
    case BENCH_OP_XENT:
    case BENCH_OP_ATTENTION: return DIR_BIT(FWD_D) | DIR_BIT(FWD_I) | DIR_BIT(BWD_D);
    case BENCH_OP_BNORM: return DIR_BIT(FWD_I) | DIR_BIT(FWD_D) | DIR_BIT(BWD_DW);
    case BENCH_OP_LNORM:
    case BENCH_OP_RMSNORM: return DIR_BIT(FWD_D) | DIR_BIT(BWD_DW);
    case BENCH_OP_BINARY:
    case BENCH_OP_REDUCE:
    case BENCH_OP_GEMM:
    case BENCH_OP_OPTIM:
    case BENCH_OP_LSCALE:
    case BENCH_OP_MATMUL:
    case BENCH_OP_REORDER:
    case BENCH_OP_QUANTIZE:
    case BENCH_OP_DEQUANTIZE: return DIR_BIT(FWD_D);
  }
  return 0;
}

int bench_op_default_dir(int op) {
  return op == BENCH_OP_BNORM ? BENCH_DIR_FWD_I : BENCH_DIR_FWD_D;
}

/* "FWD_D, FWD_I or BWD_D" (or "FWD_D only"): the directions of op, for
 * messages. */
static void put_dirs(char *buf, size_t len, int op) {
  const unsigned dirs = bench_op_dirs(op);
  int count = 0, done = 0;
  for (int d = 0; d < BENCH_DIR_COUNT; d++) count += (dirs >> d) & 1u;
  size_t used = 0;
  buf[0] = 0;
  for (int d = 0; d < BENCH_DIR_COUNT && used < len; d++) {
    if (!((dirs >> d) & 1u)) continue;
    const char *sep = done == 0 ? "" : done == count - 1 ? " or " : ", ";
    const int w = snprintf(buf + used, len - used, "%s%s", sep, dir_names[d]);
    if (w > 0) used += (size_t)w;
    done++;
  }
  if (count == 1 && used < len) snprintf(buf + used, len - used, " only");
}

/* p->dir from the descriptor's direction t (checked against p's op), else
 * default_dir where p's op takes it, else the op's default. FWD_I is stored
 * as FWD_D for the ops whose forward op it is. */
static int resolve_dir(bench_problem *p, const dir_token *t, int default_dir, char *err,
                       size_t errlen) {
  const unsigned dirs = bench_op_dirs(p->op);
  int dir = bench_op_default_dir(p->op);
  if (t->dir >= 0) {
    if (!((dirs >> t->dir) & 1u)) {
      char allowed[64];
      put_dirs(allowed, sizeof allowed, p->op);
      return fail(err, errlen, "bad token '%.*s': %s has no %s direction (%s takes %s)", (int)t->n,
                  t->s, op_names[p->op], dir_names[t->dir], op_names[p->op], allowed);
    }
    dir = t->dir;
  } else if (default_dir >= 0 && default_dir < BENCH_DIR_COUNT && ((dirs >> default_dir) & 1u)) {
    dir = default_dir;
  }
  if (dir == BENCH_DIR_FWD_I && bench_op_default_dir(p->op) == BENCH_DIR_FWD_D)
    dir = BENCH_DIR_FWD_D;
  p->dir = dir;
  return 0;
}

/* Batch norm's rules that depend on the direction. */
static int check_bnorm(const bench_problem *p, unsigned seen, char *err, size_t errlen) {
  if (p->dir != BENCH_DIR_FWD_I && p->act_kind != ADNN_ACTIVATION_IDENTITY)
    return fail(err, errlen, "bnorm: dir=%s takes no fused activation (only FWD_I, inference, "
                "does)", dir_names[p->dir]);
  if ((seen & F_MOM) && p->dir != BENCH_DIR_FWD_D)
    return fail(err, errlen, "bnorm: mom<M> needs dir=FWD_D (training)");
  if (p->dir != BENCH_DIR_FWD_I && p->mb * (p->ih ? p->ih : 1) * (p->iw ? p->iw : 1) < 2)
    return fail(err, errlen, "bnorm: dir=%s needs at least 2 elements per channel (mb * ih * iw)",
                dir_names[p->dir]);
  return 0;
}

/* A leading "dir=<DIR>:" or "--dir=<DIR>:" field: consumed from *text when
 * there, its direction in *t (which must have none yet: one direction per
 * descriptor). Returns 0, or -1 with a message. */
static int take_dir(const char **text, size_t *n, dir_token *t, char *err, size_t errlen) {
  const char *s = *text;
  size_t skip = 0;
  if (*n >= 6 && strncmp(s, "--dir=", 6) == 0)
    skip = 6;
  else if (*n >= 4 && strncmp(s, "dir=", 4) == 0)
    skip = 4;
  else
    return 0;
  const char *colon = memchr(s + skip, ':', *n - skip);
  const size_t tn = colon ? (size_t)(colon - s) : *n;
  if (read_dir(s, tn, skip, t, err, errlen)) return -1;
  if (!colon)
    return fail(err, errlen, "bad token '%.*s': a descriptor must follow the direction "
                "(dir=%s:...)", (int)tn, s, dir_names[t->dir]);
  *text = colon + 1;
  *n -= (size_t)(colon + 1 - s);
  return 0;
}

/* A convolution (after its direction and "conv:"), with its direction. */
static int finish_conv(const char *text, size_t n, bench_problem *p, const dir_token *t,
                       int default_dir, char *err, size_t errlen) {
  field beta = {NULL, 0};
  if (parse_conv(text, n, p, &beta, err, errlen) || resolve_dir(p, t, default_dir, err, errlen))
    return -1;
  if (beta.n && p->dir != BENCH_DIR_BWD_D && p->dir != BENCH_DIR_BWD_W &&
      p->dir != BENCH_DIR_BWD_WB)
    return fail(err, errlen, "bad token '%.*s': beta (accumulation into the output) needs a "
                "backward direction (BWD_D, BWD_W or BWD_WB)", (int)beta.n, beta.s);
  return 0;
}

int bench_problem_parse(const char *text, bench_problem *p, char *err, size_t errlen) {
  return bench_problem_parse_dir(text, -1, p, err, errlen);
}

int bench_problem_parse_dir(const char *text, int default_dir, bench_problem *p, char *err,
                            size_t errlen) {
  memset(p, 0, sizeof *p);
  if (err && errlen) err[0] = 0;
  size_t n = strlen(text);
  while (n && isspace((unsigned char)text[n - 1])) n--;
  while (n && isspace((unsigned char)*text)) text++, n--;
  if (n == 0) return fail(err, errlen, "empty problem descriptor");
  if (n > BENCH_INPUT_MAX)
    return fail(err, errlen, "problem descriptor '%.40s...' is %zu characters long, above the "
                "limit %d", text, n, BENCH_INPUT_MAX);
  for (size_t i = 0; i < n; i++)
    if (isspace((unsigned char)text[i]) || !isprint((unsigned char)text[i]))
      return fail(err, errlen, "bad token '%.*s': spaces are not allowed in a descriptor",
                  (int)n, text);
  dir_token dir = {-1, NULL, 0};
  /* Twice, so that a second direction is refused by name. */
  if (take_dir(&text, &n, &dir, err, errlen) || take_dir(&text, &n, &dir, err, errlen)) return -1;
  if (n == 0)
    return fail(err, errlen, "bad token 'dir=%s:': a descriptor must follow the direction",
                dir_names[dir.dir]);
  const char *colon = memchr(text, ':', n);
  size_t head = colon ? (size_t)(colon - text) : n;
  int op = -1;
  for (int i = 0; i < BENCH_OP_COUNT; i++)
    if (strlen(op_names[i]) == head && strncmp(op_names[i], text, head) == 0) op = i;
  if (op >= 0 && !colon) /* a kind name alone, "conv" included */
    return fail(err, errlen, "bad token '%.*s': %s descriptor has no fields (%s:...)", (int)n,
                text, op_names[op], op_names[op]);
  if (op == BENCH_OP_CONV) { /* optional "conv:" prefix; the colon is there */
    text += head + 1;
    n -= head + 1;
    if (take_dir(&text, &n, &dir, err, errlen)) return -1;
    return finish_conv(text, n, p, &dir, default_dir, err, errlen);
  }
  if (op < 0) {
    /* No op prefix: a convolution (its name may contain ':', and its
     * fields follow its geometry after one). A first field with neither
     * digits nor a name is no geometry: an op name misspelt. */
    int geometry = memchr(text, 'n', head) != NULL;
    for (size_t i = 0; i < head; i++) geometry |= isdigit((unsigned char)text[i]) != 0;
    if (colon && !geometry)
      return fail(err, errlen, "bad token '%.*s': unknown op (conv, pool, act, softmax, lnorm, "
                  "rmsnorm, bnorm, binary, reduce, gemm, xent, optim, matmul, attention)",
                  (int)head, text);
    return finish_conv(text, n, p, &dir, default_dir, err, errlen);
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
    if (len >= BENCH_NAME_MAX)
      return fail(err, errlen, "name '%.*s' is too long (at most %d characters)", (int)len, b,
                  BENCH_NAME_MAX - 1);
    memcpy(p->name, b, len);
    p->name[len] = 0;
    n = (size_t)(nm - text);
  }
  if (head + 1 >= n)
    return fail(err, errlen, "bad token '%.*s': %s descriptor has no fields", (int)n, text,
                op_names[op]);
  unsigned seen = 0;
  if (parse_compact(text, n, p, &dir, &seen, err, errlen) ||
      resolve_dir(p, &dir, default_dir, err, errlen))
    return -1;
  if (op == BENCH_OP_BNORM && check_bnorm(p, seen, err, errlen)) return -1;
  return 0;
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

/* Whether a and b are the same double, bit for bit (-0 is not 0). */
static int same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* key, then v in the fewest significant digits that strtod reads back as
 * exactly v (at most 17 for a double). */
static void put_double(sbuf *s, const char *key, double v) {
  char text[40];
  for (int digits = 1; digits <= 17; digits++) {
    snprintf(text, sizeof text, "%.*g", digits, v);
    if (same_double(strtod(text, NULL), v)) break;
  }
  put(s, "%s%s", key, text);
}

/* Whether the parser, given i, k, s, d, the printed begin padding p_arg (-1:
 * not printed) and o, deduces exactly the paddings pb and pe. */
static int end_padding_implied(int64_t i, int64_t k, int64_t s, int64_t d, int64_t p_arg,
                               int64_t o, int64_t pb, int64_t pe) {
  int64_t got_o, got_b, got_e;
  if (conv_dim("h", i, k, s, p_arg, -1, o, d, &got_o, &got_b, &got_e, NULL, 0)) return 0;
  return got_o == o && got_b == pb && got_e == pe;
}

void bench_problem_format(const bench_problem *p, char *buf, size_t len) {
  sbuf s = {buf, len, 0};
  if (len) buf[0] = 0;
  /* One form for every op: the direction first, unless it is the op's
   * default. */
  if (p->dir != bench_op_default_dir(p->op)) put(&s, "dir=%s:", bench_dir_name(p->dir));
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
      /* The end padding only when the parser would not deduce it from what
       * is printed (benchdnn's rule, from oh: it cannot say every padding
       * when the stride is above 1). */
      if (!end_padding_implied(p->ih, p->kh, p->sh, p->dh - 1, (p->pt || p->pl) ? p->pt : -1,
                               p->oh, p->pt, p->pb))
        put(&s, "pb%lld", (long long)p->pb);
      if (!end_padding_implied(p->iw, p->kw, p->sw, p->dw - 1, (p->pt || p->pl) ? p->pl : -1,
                               p->ow, p->pl, p->pr))
        put(&s, "pr%lld", (long long)p->pr);
      /* beta of the backward directions, after the geometry (before the
       * name, which runs to the end) */
      if (!same_double(p->beta, 0.0)) {
        put(&s, ":");
        put_double(&s, "beta", p->beta);
      }
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
    case BENCH_OP_ACT: {
      double alpha, beta;
      activation_defaults(p->act_kind, &alpha, &beta);
      put(&s, "act:%s:", adnn_activation_name(p->act_kind));
      if (!same_double(p->alpha, alpha)) {
        put_double(&s, "a", p->alpha);
        put(&s, ":");
      }
      if (!same_double(p->beta, beta)) {
        put_double(&s, "b", p->beta);
        put(&s, ":");
      }
      put_dims(&s, p->rank, p->dims);
      break;
    }
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
      if (!same_double(p->eps, DEFAULT_EPS)) put_double(&s, ":eps", p->eps);
      break;
    case BENCH_OP_BNORM:
      put(&s, "bnorm:mb%lldic%lld", (long long)p->mb, (long long)p->ic);
      if (p->ih) put(&s, "ih%lld", (long long)p->ih);
      if (p->iw != p->ih) put(&s, "iw%lld", (long long)p->iw);
      if (p->act_kind != ADNN_ACTIVATION_IDENTITY) put(&s, ":%s", adnn_activation_name(p->act_kind));
      if (p->dir == BENCH_DIR_FWD_D && !same_double(p->momentum, DEFAULT_MOMENTUM))
        put_double(&s, ":mom", p->momentum);
      if (!same_double(p->eps, DEFAULT_EPS)) put_double(&s, ":eps", p->eps);
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
    case BENCH_OP_XENT:
      put(&s, "xent:%s:", adnn_loss_reduction_name(p->loss_reduction));
      put_dims(&s, p->rank, p->dims);
      if (p->ignore_index != DEFAULT_IGNORE_INDEX) put(&s, ":ign%lld", (long long)p->ignore_index);
      break;
    case BENCH_OP_LSCALE:
      put(&s, "lscale:%s:", adnn_loss_scale_kind_name(p->ls_kind));
      put_dims(&s, p->rank, p->dims);
      break;
    case BENCH_OP_OPTIM:
      put(&s, "optim:%s:", adnn_optimizer_kind_name(p->opt_kind));
      put_dims(&s, p->rank, p->dims);
      if (!same_double(p->lr, DEFAULT_LR)) put_double(&s, ":lr", p->lr);
      if (!same_double(p->weight_decay, 0.0)) put_double(&s, ":wd", p->weight_decay);
      if (!same_double(p->sgd_momentum, 0.0)) put_double(&s, ":mom", p->sgd_momentum);
      if (!same_double(p->dampening, 0.0)) put_double(&s, ":damp", p->dampening);
      if (p->nesterov) put(&s, ":nesterov");
      if (!same_double(p->beta1, DEFAULT_BETA1)) put_double(&s, ":b1", p->beta1);
      if (!same_double(p->beta2, DEFAULT_BETA2)) put_double(&s, ":b2", p->beta2);
      if (!same_double(p->opt_eps, DEFAULT_OPT_EPS)) put_double(&s, ":eps", p->opt_eps);
      break;
    case BENCH_OP_MATMUL: {
      put(&s, "matmul:m%lldn%lldk%lld", (long long)p->m, (long long)p->n, (long long)p->k);
      if (p->batch_rank > 0) {
        put(&s, ":batch");
        put_dims(&s, p->batch_rank, p->batch);
      }
      if (p->b_batched) put(&s, ":bbatch");
      if (p->ta) put(&s, ":ta");
      if (p->tb) put(&s, ":tb");
      if (!same_double(p->mm_alpha, 1.0)) put_double(&s, ":alpha", p->mm_alpha);
      if (p->has_bias) put(&s, ":bias");
      if (p->has_residual) put(&s, ":res");
      if (p->res_inplace) put(&s, ":inplace");
      if (p->has_residual && !same_double(p->res_scale, 1.0)) put_double(&s, ":rs", p->res_scale);
      if (p->act_kind != ADNN_ACTIVATION_IDENTITY) {
        double alpha, beta;
        activation_defaults(p->act_kind, &alpha, &beta);
        put(&s, ":%s", adnn_activation_name(p->act_kind));
        if (!same_double(p->alpha, alpha)) put_double(&s, ":a", p->alpha);
        if (!same_double(p->beta, beta)) put_double(&s, ":b", p->beta);
      }
      break;
    }
    case BENCH_OP_REORDER:
      put(&s, "reorder:");
      put_dims(&s, p->rank, p->dims);
      if (p->rx_layout || p->ry_layout)
        put(&s, ":%s->%s", p->rx_layout ? "nhwc" : "nchw", p->ry_layout ? "nhwc" : "nchw");
      if (p->rx_dtype != 1 || p->ry_dtype != 1)
        put(&s, ":%s->%s", reorder_dtype_words[p->rx_dtype], reorder_dtype_words[p->ry_dtype]);
      break;
    case BENCH_OP_QUANTIZE:
    case BENCH_OP_DEQUANTIZE:
      /* ADNN_VERBOSE's form: the dtypes always, then the axis or s and z. */
      put(&s, "%s:", op_names[p->op]);
      put_dims(&s, p->rank, p->dims);
      put(&s, ":%s->%s", reorder_dtype_words[p->rx_dtype], reorder_dtype_words[p->ry_dtype]);
      if (p->q_axis >= 0) {
        put(&s, ":axis%d", p->q_axis);
      } else {
        put_double(&s, ":s", p->q_scale);
        put(&s, ":z%lld", (long long)p->q_zero_point);
      }
      break;
    case BENCH_OP_ATTENTION:
      put(&s, "attention:b%lldh%lldhkv%lldsq%lldskv%lldd%llddv%lld", (long long)p->att_b,
          (long long)p->att_h, (long long)p->att_hkv, (long long)p->att_sq, (long long)p->att_skv,
          (long long)p->att_d, (long long)p->att_dv);
      if (p->causal) put(&s, ":causal");
      if (p->bias_rank > 0) {
        put(&s, ":bias");
        put_dims(&s, p->bias_rank, p->bias_dims);
      }
      if (p->key_lengths) put(&s, ":kl");
      if (p->no_lse) put(&s, ":nolse");
      if (p->bshd) put(&s, ":bshd");
      if (!same_double(p->scale, 0.0)) put_double(&s, ":scale", p->scale);
      break;
  }
  /* The parser removes one quote at each end of a name: quote a name that
   * has one there itself. */
  const size_t nl = strlen(p->name);
  if (nl && (p->name[0] == '"' || p->name[nl - 1] == '"'))
    put(&s, "_n\"%s\"", p->name);
  else if (nl)
    put(&s, "_n%s", p->name);
}

static double count_of(int rank, const int64_t *d) {
  double c = 1;
  for (int i = 0; i < rank; i++) c *= (double)d[i];
  return c;
}

/* The sum of the sizes (the optimizer's elements over all its tensors). */
static double count_sum(int rank, const int64_t *d) {
  double c = 0;
  for (int i = 0; i < rank; i++) c += (double)d[i];
  return c;
}

/* The (query, key) pairs attention computes: all Sq * Skv, or with the
 * causal mask (bottom right: query i sees keys j <= i + Skv - Sq) the sum
 * over the queries i >= max(0, Sq - Skv) of i + Skv - Sq + 1. Key lengths
 * depend on the data and are not counted. */
static double attention_pairs(const bench_problem *p) {
  const double sq = (double)p->att_sq, skv = (double)p->att_skv;
  if (!p->causal) return sq * skv;
  const double first = sq > skv ? sq - skv : 0.0, n = sq - first;
  return n * ((first + skv - sq + 1.0) + skv) / 2.0;
}

double bench_problem_flops(const bench_problem *p) {
  if (p->op == BENCH_OP_ATTENTION) {
    /* Forward: S = Q K^T (D) and O = P V (Dv). Backward: S again, dV = P^T
     * dO and dP = dO V^T (Dv), dQ = dS K and dK = dS^T Q (D). */
    const double heads = (double)p->att_b * (double)p->att_h, pairs = attention_pairs(p);
    const double d = (double)p->att_d, dv = (double)p->att_dv;
    return 2.0 * heads * pairs * (p->dir == BENCH_DIR_BWD_D ? 3.0 * d + 2.0 * dv : d + dv);
  }
  if (p->op == BENCH_OP_CONV)
    return 2.0 * (double)p->mb * (double)p->oc * (double)p->oh * (double)p->ow *
           (double)(p->ic / p->g) * (double)p->kh * (double)p->kw;
  if (p->op == BENCH_OP_GEMM) return 2.0 * (double)p->m * (double)p->n * (double)p->k;
  if (p->op == BENCH_OP_MATMUL)
    return 2.0 * count_of(p->batch_rank, p->batch) * (double)p->m * (double)p->n * (double)p->k;
  return 0.0;
}

double bench_problem_bytes(const bench_problem *p, size_t es) {
  double e = (double)es;
  switch (p->op) {
    case BENCH_OP_CONV: {
      /* Every direction reads two of x, w and y (dy) and writes the third
       * (dx, dw), BWD_WB also db; beta != 0 reads the outputs as well. */
      const double xs = (double)p->mb * p->ic * p->ih * p->iw,
                   ws = (double)p->oc * (p->ic / p->g) * p->kh * p->kw,
                   ys = (double)p->mb * p->oc * p->oh * p->ow;
      double out = p->dir == BENCH_DIR_BWD_D ? xs : p->dir == BENCH_DIR_BWD_W ? ws
                   : p->dir == BENCH_DIR_BWD_WB ? ws + (double)p->oc : 0.0;
      return e * (xs + ws + ys + (p->dir == BENCH_DIR_BWD_WB ? (double)p->oc : 0.0) +
                  (p->beta != 0.0 ? out : 0.0));
    }
    case BENCH_OP_POOL: {
      /* Forward: x in, y out; backward: x, y and dy in, dx out. */
      const double xs = (double)p->mb * p->ic * p->ih * p->iw, ys = (double)p->mb * p->ic * p->oh * p->ow;
      return e * (p->dir == BENCH_DIR_BWD_D ? 2.0 * xs + 2.0 * ys : xs + ys);
    }
    case BENCH_OP_BNORM: {
      /* Inference: x and 4 vectors of C in, y out. Training: x, scale and
       * shift in; y, the saved mean and inverse deviation out; the running
       * mean and variance in and out. Backward: x, dy, scale and the saved
       * statistics in; dx, dscale and dshift out. */
      double hw = (p->ih ? (double)p->ih : 1.0) * (p->iw ? (double)p->iw : 1.0);
      const double xs = (double)p->mb * p->ic * hw, c = (double)p->ic;
      if (p->dir == BENCH_DIR_FWD_D) return e * (2.0 * xs + 8.0 * c);
      if (p->dir == BENCH_DIR_BWD_DW) return e * (3.0 * xs + 5.0 * c);
      return e * (2.0 * xs + 4.0 * c);
    }
    case BENCH_OP_ACT:
    case BENCH_OP_SOFTMAX: /* backward: two inputs (x or y, and dy) and dx */
      return e * (p->dir == BENCH_DIR_BWD_D ? 3.0 : 2.0) * count_of(p->rank, p->dims);
    case BENCH_OP_LNORM:
    case BENCH_OP_RMSNORM: {
      /* Forward: x and the gain and bias in, y out. Backward: x, dy and the
       * gain in; dx, dgain and dbias out. */
      double d = count_of(p->norm_dims, p->dims + p->rank - p->norm_dims);
      if (p->dir == BENCH_DIR_BWD_DW)
        return e * (3.0 * count_of(p->rank, p->dims) + (2 * p->has_gain + p->has_bias) * d);
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
    case BENCH_OP_XENT: {
      /* Forward: logits and labels (4-byte) in, the loss out. Backward:
       * logits, labels and dloss in, d logits out. */
      const double n = (double)p->dims[0], x = n * (double)p->dims[1];
      const double loss = p->loss_reduction == ADNN_LOSS_REDUCTION_NONE ? n : 1.0;
      return e * (p->dir == BENCH_DIR_BWD_D ? 2.0 * x + loss : x + loss) + 4.0 * n;
    }
    case BENCH_OP_MATMUL: {
      /* a, b, the bias and the residual in, y out (an in-place residual is
       * read and written). */
      const double bt = count_of(p->batch_rank, p->batch), mn = bt * (double)p->m * p->n;
      return e * (bt * (double)p->m * p->k + (p->b_batched ? bt : 1.0) * (double)p->k * p->n +
                  mn + (p->has_bias ? (double)p->n : 0.0) + (p->has_residual ? mn : 0.0));
    }
    case BENCH_OP_REORDER: {
      /* x read and y written once, each in its own dtype (--dtype does not
       * apply). */
      static const double size_of[8] = {0, 4, 8, 2, 2, 1, 4, 1};
      return count_of(p->rank, p->dims) * (size_of[p->rx_dtype] + size_of[p->ry_dtype]);
    }
    case BENCH_OP_QUANTIZE:
    case BENCH_OP_DEQUANTIZE: {
      /* x read (4 or 1 bytes) and y written (1 or 4) once, plus the F32
       * scales and I32 zero points of a per-channel problem. */
      const double channels = p->q_axis >= 0 ? (double)p->dims[p->q_axis] : 0.0;
      return count_of(p->rank, p->dims) * 5.0 + channels * 8.0;
    }
    case BENCH_OP_ATTENTION: {
      /* Forward: q, k, v, the bias and the key lengths (4-byte) in; o and
       * lse out. Backward: q, k, v, o, do, lse and the bias in; dq, dk and
       * dv out. */
      const double b = (double)p->att_b, h = (double)p->att_h, hkv = (double)p->att_hkv;
      const double q = b * h * (double)p->att_sq * (double)p->att_d;
      const double k = b * hkv * (double)p->att_skv * (double)p->att_d;
      const double v = b * hkv * (double)p->att_skv * (double)p->att_dv;
      const double o = b * h * (double)p->att_sq * (double)p->att_dv;
      const double lse = b * h * (double)p->att_sq;
      const double bias = p->bias_rank ? count_of(p->bias_rank, p->bias_dims) : 0.0;
      const double kl = p->key_lengths ? 4.0 * b : 0.0;
      if (p->dir == BENCH_DIR_BWD_D) return e * (2.0 * (q + k + v) + 2.0 * o + lse + bias) + kl;
      return e * (q + k + v + o + (p->no_lse ? 0.0 : lse) + bias) + kl;
    }
    case BENCH_OP_LSCALE:
      /* every tensor in and out (the scale and found_inf are one element). */
      return e * count_sum(p->rank, p->dims) * 2.0;
    case BENCH_OP_OPTIM: {
      /* the gradient in; the parameters and every state in and out. */
      const int states = p->opt_kind == ADNN_OPTIMIZER_SGD ? (p->sgd_momentum != 0 ? 1 : 0) : 2;
      return e * count_sum(p->rank, p->dims) * (1.0 + 2.0 * (1 + states));
    }
  }
  return 0.0;
}
