/* matmul (GEMM with a fused epilogue) in the conformance harness: traits,
 * the oracle (doc/ops.md, "Matmul"), cases, the oracle's self-tests and bad
 * descriptors. The oracle works from the public descriptor alone: its own
 * batch broadcasting (from the right, b of rank 2 shared by every batch),
 * strides as given, sums in long double. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define F32 ADNN_DTYPE_F32
#define F64 ADNN_DTYPE_F64
#define F16 ADNN_DTYPE_F16
#define BF16 ADNN_DTYPE_BF16
#define I8 ADNN_DTYPE_I8
#define U8 ADNN_DTYPE_U8
#define I32 ADNN_DTYPE_I32

static int is_int8(adnn_dtype t) { return t == I8 || t == U8; }
static int is_lowp(adnn_dtype t) { return t == F16 || t == BF16; }

/* ------------------------------------------------------------------------ */
/* Traits                                                                    */
/* ------------------------------------------------------------------------ */

static int mm_inputs(const harness_desc *hd, harness_tensor *in) {
  const adnn_matmul_desc *d = &hd->matmul;
  int n = 0;
  in[n++] = (harness_tensor){"a", d->a};
  in[n++] = (harness_tensor){"b", d->b};
  if (d->has_bias) in[n++] = (harness_tensor){"bias", d->bias};
  if (d->has_residual) in[n++] = (harness_tensor){"residual", d->residual};
  if (d->has_requant_scales && is_int8(d->y.dtype))
    in[n++] = (harness_tensor){"requant_scales", d->requant_scales};
  return n;
}

static adnn_tensor_desc mm_output(const harness_desc *hd) { return hd->matmul.y; }

/* dt is the input dtype (a's); the other tensors follow the matmul rules
 * (adnn/ops.h): F16/BF16 give an F32 bias and a y (and residual) of dt;
 * I8/U8 give an I8 b, an I32 y and an I32 bias. */
static void mm_set_dtype(harness_desc *hd, adnn_dtype dt) {
  adnn_matmul_desc *d = &hd->matmul;
  d->a.dtype = dt;
  d->b.dtype = is_int8(dt) ? I8 : dt;
  d->y.dtype = d->residual.dtype = is_int8(dt) ? I32 : dt;
  d->bias.dtype = is_int8(dt) ? I32 : is_lowp(dt) ? F32 : dt;
  if (is_int8(dt)) d->has_residual = 0;
}

/* The unit roundoff of a float dtype (2^-p for p significand bits). */
static double unit_roundoff(adnn_dtype t) {
  switch (t) {
    case F64: return 0x1p-53;
    case F16: return 0x1p-11;
    case BF16: return 0x1p-8;
    default: return 0x1p-24;
  }
}

/* doc/numerics.md, "Matmul": F32 and F64 as before; F16/BF16 inputs (F32
 * accumulation): |err| <= |alpha| gamma_K(u_f32) sum|a||b| + u_y |y|, with
 * |a|, |b| <= 1 here so sum|a||b| <= K, the accumulated part doubled for
 * the activations (Lipschitz constant at most 1.5), and the relative-l2
 * bound doubled again for outputs of small magnitude; integer inputs:
 * exact. */
static harness_tolerance mm_tolerance(const harness_desc *hd, adnn_dtype dt) {
  const adnn_matmul_desc *d = &hd->matmul;
  const int64_t K = d->a.dims[d->a.rank - 1];
  if (is_int8(dt)) return (harness_tolerance){0.0, 0.0};
  if (is_lowp(dt)) {
    const double u = 0x1p-24, ku = (double)K * u;
    const double gamma = ku < 0.5 ? ku / (1.0 - ku) : 1.0;
    const double acc = 2.0 * fabs(d->alpha) * gamma * (double)K;
    const double bound = acc + unit_roundoff(d->y.dtype) * (1.0 + acc);
    return (harness_tolerance){2.0 * bound, bound};
  }
  return harness_scale_tolerance(harness_dot_tolerance(dt, K), 2.0);
}

static void mm_fill(const harness_desc *hd, harness_buffer *in, int n_in, tap_rng *r) {
  (void)hd;
  for (int i = 0; i < n_in; i++) harness_fill_uniform(&in[i], r, -1.0, 1.0);
}

/* ------------------------------------------------------------------------ */
/* Oracle                                                                    */
/* ------------------------------------------------------------------------ */

static int mm_oracle(const harness_desc *hd, const double *const *in, double *y, char *why,
                     size_t why_len) {
  const adnn_matmul_desc *d = &hd->matmul;
  const adnn_tensor_desc *a = &d->a, *b = &d->b, *yd = &d->y;
  const int ra = a->rank, rb = b->rank;
  if (ra < 2 || ra > 4 || rb < 2 || rb > ra || yd->rank != ra) {
    snprintf(why, why_len, "matmul: ranks a %d, b %d, y %d are not 2..4 with b's <= a's = y's",
             ra, rb, yd->rank);
    return -1;
  }
  const int64_t M = a->dims[ra - 2], K = a->dims[ra - 1], N = b->dims[rb - 1];
  int ok = b->dims[rb - 2] == K && yd->dims[ra - 2] == M && yd->dims[ra - 1] == N;
  for (int i = 0; ok && i < ra - 2; i++) ok = yd->dims[i] == a->dims[i];
  for (int i = 0; ok && i < rb - 2; i++)
    ok = b->dims[i] == 1 || b->dims[i] == a->dims[i + ra - rb];
  if (ok && d->has_bias) ok = d->bias.rank == 1 && d->bias.dims[0] == N;
  if (ok && d->has_residual) {
    ok = d->residual.rank == ra;
    for (int i = 0; ok && i < ra; i++) ok = d->residual.dims[i] == yd->dims[i];
  }
  if (!ok) {
    snprintf(why, why_len, "matmul: the shapes of a, b, bias, residual and y do not agree");
    return -1;
  }
  const int ib = d->has_bias ? 2 : -1, ir = d->has_residual ? 2 + d->has_bias : -1;
  const int integer = is_int8(a->dtype);
  const int requant = integer && is_int8(yd->dtype);
  const int is = requant && d->has_requant_scales ? 2 + d->has_bias + d->has_residual : -1;
  harness_index iy;
  for (harness_index_first(&iy, yd); iy.valid; harness_index_next(&iy, yd)) {
    const int64_t i = iy.idx[ra - 2], j = iy.idx[ra - 1];
    int64_t oa = i * a->strides[ra - 2], ob = j * b->strides[rb - 1];
    for (int t = 0; t < ra - 2; t++) oa += iy.idx[t] * a->strides[t];
    for (int t = 0; t < rb - 2; t++)
      if (b->dims[t] != 1) ob += iy.idx[t + ra - rb] * b->strides[t];
    if (integer) {
      /* Exact: the products of integers below 2^8 summed in long double
       * (64 significant bits) never round. */
      long double acc = 0.0L;
      for (int64_t k = 0; k < K; k++)
        acc += (long double)in[0][oa + k * a->strides[ra - 1]] * in[1][ob + k * b->strides[rb - 2]];
      if (ib >= 0) acc += in[ib][j * d->bias.strides[0]];
      double v;
      if (requant) {
        /* adnn/ops.h: the product in F64 (one rounding), to nearest even,
         * plus the zero point, saturated to y's range. */
        const double scale = is >= 0 ? in[is][j * d->requant_scales.strides[0]] : d->requant_scale;
        const double prod = (double)acc * scale;
        v = nearbyint(prod) + d->y_zero_point;
        const double lo = yd->dtype == I8 ? -128 : 0, hi = yd->dtype == I8 ? 127 : 255;
        v = v < lo ? lo : v > hi ? hi : v;
      } else {
        v = acc < -2147483648.0L ? -2147483648.0 : acc > 2147483647.0L ? 2147483647.0 : (double)acc;
      }
      y[iy.offset] = v;
      continue;
    }
    /* doc/ops.md: a zero alpha or residual_scale leaves its operand unread
     * (BLAS's rule), so NaNs there do not reach y. */
    long double v = 0.0L;
    if (d->alpha != 0.0) {
      harness_sum s;
      harness_sum_init(&s);
      for (int64_t k = 0; k < K; k++)
        harness_sum_add(&s, (long double)in[0][oa + k * a->strides[ra - 1]] *
                                in[1][ob + k * b->strides[rb - 2]]);
      v = (long double)d->alpha * harness_sum_value(&s);
    }
    if (ib >= 0) v += in[ib][j * d->bias.strides[0]];
    if (ir >= 0 && d->residual_scale != 0.0) {
      int64_t orr = 0;
      for (int t = 0; t < ra; t++) orr += iy.idx[t] * d->residual.strides[t];
      v += (long double)d->residual_scale * in[ir][orr];
    }
    y[iy.offset] = (double)harness_activation_oracle(&d->activation, v);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

/* Storage of an operand's last two dims: row-major, transposed (unit stride
 * along the rows, as PyTorch's Linear weight W [N, K] seen as [K, N]), or
 * neither (both strides 2: only the reference runs it). */
enum mm_store { ST_ROW = 0, ST_TRANS = 1, ST_STRIDED = 2 };

typedef struct mm_spec {
  int ra, rb;
  int64_t a[4], b[4]; /* dims */
  enum mm_store sa, sb, sy;
  enum harness_layout layout; /* PACKED or PADDED, for a, b, y and a separate residual */
  int bias;                   /* 0 none, 1 packed, 2 stride 3 */
  int res;                    /* 0 none, 1 separate, 2 in place (r is y) */
  double alpha, rs;
  adnn_activation act;
  int specials; /* NaN and infinities in a (and in a separate residual) */
} mm_spec;

/* An operand of dims (rank r) stored as `st` in `layout`. */
static adnn_tensor_desc operand(adnn_dtype dt, int r, const int64_t *dims, enum mm_store st,
                                enum harness_layout layout) {
  int64_t d[4];
  memcpy(d, dims, sizeof(int64_t) * (size_t)r);
  if (st == ST_STRIDED) d[r - 1] *= 2;
  if (st == ST_TRANS) {
    d[r - 2] = dims[r - 1];
    d[r - 1] = dims[r - 2];
  }
  adnn_tensor_desc t = harness_tensor_desc(dt, r, d, layout);
  if (st == ST_TRANS) {
    const int64_t s = t.strides[r - 2];
    t.dims[r - 2] = dims[r - 2];
    t.dims[r - 1] = dims[r - 1];
    t.strides[r - 2] = t.strides[r - 1];
    t.strides[r - 1] = s;
  } else if (st == ST_STRIDED) {
    t.dims[r - 1] = dims[r - 1];
    t.strides[r - 1] *= 2;
    t.strides[r - 2] *= 2;
  }
  return t;
}

static void put_dims(char *buf, size_t size, const int64_t *dims, int r) {
  snprintf(buf, size, "[");
  for (int i = 0; i < r; i++)
    snprintf(buf + strlen(buf), size - strlen(buf), "%s%lld", i ? "," : "", (long long)dims[i]);
  snprintf(buf + strlen(buf), size - strlen(buf), "]");
}

static const char *store_name(enum mm_store s) {
  return s == ST_TRANS ? "T" : (s == ST_STRIDED ? "S" : "");
}

/* Integer and requantization settings of a low-precision case. */
typedef struct mm_quant {
  int per_channel;   /* requant_scales [N] instead of requant_scale */
  double scale;      /* per tensor, or the base of the per-channel scales */
  int32_t zero_point;
  int fill;          /* 0 random; 1 small (|v| <= 4, for ties); 2 extreme (a, b at their
                        most negative or largest, bias extreme_bias) */
  int32_t extreme_bias;
} mm_quant;

static void mm_case_typed(harness_suite *suite, const mm_spec *s, adnn_dtype dt, adnn_dtype yt,
                          const mm_quant *q);

static void mm_case(harness_suite *suite, const mm_spec *s, adnn_dtype dt) {
  mm_case_typed(suite, s, dt, dt, NULL);
}

/* Seeded integers in [lo, hi] into every element of b (even ones only with
 * `even`). */
static void fill_ints(harness_buffer *b, tap_rng *r, int lo, int hi, int even) {
  for (int64_t i = 0; i < b->span; i++) {
    if (!b->member[i]) continue;
    double v = floor(tap_rng_uniform(r, (double)lo, (double)hi + 1.0));
    if (v > hi) v = hi;
    if (even) v = 2.0 * floor(v / 2.0);
    b->v[i] = v;
  }
}

static void mm_case_typed(harness_suite *suite, const mm_spec *s, adnn_dtype dt, adnn_dtype yt,
                          const mm_quant *q) {
  harness_case c;
  char sa[64], sb[64], act[64] = "";
  put_dims(sa, sizeof sa, s->a, s->ra);
  put_dims(sb, sizeof sb, s->b, s->rb);
  if (s->act.kind != ADNN_ACTIVATION_IDENTITY)
    snprintf(act, sizeof act, " %s(%g,%g)", adnn_activation_name(s->act.kind), s->act.alpha,
             s->act.beta);
  char types[96] = "", quant[96] = "";
  if (dt != yt || is_lowp(dt) || is_int8(dt))
    snprintf(types, sizeof types, " %s->%s", adnn_dtype_name(dt), adnn_dtype_name(yt));
  const int integer = is_int8(dt), requant = integer && is_int8(yt);
  if (q && requant)
    snprintf(quant, sizeof quant, " %s %g zp %d", q->per_channel ? "scales~" : "scale",
             q->scale, (int)q->zero_point);
  if (q && q->fill)
    snprintf(quant + strlen(quant), sizeof quant - strlen(quant), " %s%s",
             q->fill == 1 ? "small" : "extreme", q->fill == 2 && q->extreme_bias ? "+bias" : "");
  for (int poison = 0; poison < (integer ? 2 : 1); poison++) {
    harness_case_init(&c, harness_op_find("matmul"), dt,
                      "a%s%s b%s%s y%s%s%s%s%s alpha %g rs %g%s%s%s%s",
                      sa, store_name(s->sa), sb, store_name(s->sb), store_name(s->sy),
                      s->layout == HARNESS_PADDED ? " padded" : "",
                      s->bias ? (s->bias == 2 ? " bias/3" : " bias") : "",
                      s->res ? (s->res == 2 ? " r=y" : " r") : "", act, s->alpha, s->rs,
                      s->specials ? " nan/inf" : "", types, quant, poison ? " poison0" : "");
    adnn_matmul_desc *d = &c.desc.matmul;
    adnn_matmul_desc_init(d);
    d->a = operand(dt, s->ra, s->a, s->sa, s->layout);
    d->b = operand(integer ? I8 : dt, s->rb, s->b, s->sb, s->layout);
    int64_t yd[4];
    memcpy(yd, s->a, sizeof yd);
    yd[s->ra - 1] = s->b[s->rb - 1];
    d->y = operand(yt, s->ra, yd, s->sy, s->layout);
    const int64_t N = yd[s->ra - 1];
    if (s->bias) {
      d->has_bias = 1;
      d->bias = harness_vector_desc(integer ? I32 : is_lowp(dt) ? F32 : dt, N);
      if (s->bias == 2) d->bias.strides[0] = 3;
    }
    if (s->res) {
      d->has_residual = 1;
      d->residual = s->res == 2 ? d->y : operand(yt, s->ra, yd, ST_ROW, s->layout);
      d->residual_scale = s->rs;
    }
    d->alpha = s->alpha;
    d->activation = s->act;
    if (q && requant) {
      d->requant_scale = q->scale;
      d->y_zero_point = q->zero_point;
      if (q->per_channel) {
        d->has_requant_scales = 1;
        d->requant_scales = harness_vector_desc(F32, N);
      }
    }
    if (harness_case_alloc(&c) != 0) return;
    if (s->res == 2) c.inplace = 2 + d->has_bias;
    tap_rng r = tap_rng_seed(harness_seed(c.name));
    if (integer) {
      /* Integer outputs cannot hold the NaN poison: each integer case runs
       * twice, first on y filled with 0xFF bytes (-1 in I8 and I32, 255 in
       * U8), then ("poison0") on y preset to 0 (an in-out output whose
       * initial values the oracle ignores). An element the kernel leaves
       * unwritten keeps -1/255 in one run and 0 in the other, and no result
       * equals both, so one of the two runs fails. */
      const int umax = dt == U8 ? 255 : 127, umin = dt == U8 ? 0 : -128;
      const int fill = q ? q->fill : 0;
      for (int i = 0; i < c.n_in; i++) {
        const int is_scales = d->has_requant_scales && i == c.n_in - 1;
        if (is_scales) {
          harness_fill_uniform(&c.in[i], &r, 0.25 * q->scale, 2.0 * q->scale);
        } else if (i == 2 && d->has_bias) {
          if (fill == 2)
            for (int64_t e = 0; e < c.in[i].span; e++) c.in[i].v[e] = q->extreme_bias;
          else
            fill_ints(&c.in[i], &r, -1000, 1000, 0);
        } else if (fill == 2) {
          /* a at its largest magnitude (I8: -128; U8: 255), b at -128. */
          for (int64_t e = 0; e < c.in[i].span; e++)
            if (c.in[i].member[e]) c.in[i].v[e] = i == 0 && dt == U8 ? 255 : -128;
        } else if (fill == 1) {
          fill_ints(&c.in[i], &r, i == 0 && dt == U8 ? 0 : -4, 4, 0);
        } else {
          fill_ints(&c.in[i], &r, i == 0 ? umin : -128, i == 0 ? umax : 127, 0);
        }
      }
      if (poison) {
        c.inout = 1u;
        for (int64_t e = 0; e < c.out.span; e++)
          if (c.out.member[e]) c.out.v[e] = 0.0;
      }
      harness_submit(suite, &c);
      continue;
    }
    for (int i = 0; i < c.n_in; i++) harness_fill_uniform(&c.in[i], &r, -1.0, 1.0);
    if (s->specials) {
      const int64_t na = harness_element_count(&d->a);
      for (int64_t i = 0; i < na; i += 7) harness_set_element(&c.in[0], i, NAN);
      for (int64_t i = 3; i < na; i += 11) harness_set_element(&c.in[0], i, INFINITY);
      if (s->res == 1) {
        const int64_t nr = harness_element_count(&d->residual);
        for (int64_t i = 1; i < nr; i += 5) harness_set_element(&c.in[c.n_in - 1], i, NAN);
      }
    }
    harness_submit(suite, &c);
  }
}

static adnn_activation act_of(adnn_activation_kind k) {
  adnn_activation a = {k, 0.0, 0.0};
  if (k == ADNN_ACTIVATION_LEAKY_RELU) a.alpha = 0.1;
  if (k == ADNN_ACTIVATION_ELU) a.alpha = 0.7;
  if (k == ADNN_ACTIVATION_CLAMP) a.alpha = -0.5, a.beta = 0.75;
  return a;
}

#define DIMS(...) {__VA_ARGS__}

static mm_spec spec2(int64_t M, int64_t K, int64_t N) {
  mm_spec s = {.ra = 2, .rb = 2, .a = DIMS(M, K), .b = DIMS(K, N), .alpha = 1, .rs = 1};
  return s;
}

static void mm_lowp_cases(harness_suite *s);

static void mm_cases(harness_suite *s) {
  const adnn_dtype dts[2] = {F32, F64};
  for (int t = 0; t < 2; t++) {
    const adnn_dtype dt = dts[t];
    /* Odd sizes, K = 1 and 1 x 1 x 1. */
    static const int64_t sizes[][3] = {{1, 1, 1}, {7, 1, 33}, {1, 33, 7}, {33, 7, 129},
                                       {129, 33, 7}, {7, 129, 1}, {300, 70, 290}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
      mm_spec p = spec2(sizes[i][0], sizes[i][1], sizes[i][2]);
      mm_case(s, &p, dt);
      p.bias = 1;
      p.res = 1;
      p.act = act_of(ADNN_ACTIVATION_GELU);
      p.alpha = 0.5;
      p.rs = -0.75;
      mm_case(s, &p, dt);
    }
    /* Transposes through strides, in every combination, with the epilogue
     * (the column-major y takes the transposed GEMM on the CPU). */
    for (int st = 0; st < 8; st++) {
      mm_spec p = spec2(33, 20, 17);
      p.sa = st & 1 ? ST_TRANS : ST_ROW;
      p.sb = st & 2 ? ST_TRANS : ST_ROW;
      p.sy = st & 4 ? ST_TRANS : ST_ROW;
      p.bias = 1;
      p.res = st & 1 ? 2 : 1;
      p.rs = 0.5;
      p.act = act_of(ADNN_ACTIVATION_RELU);
      mm_case(s, &p, dt);
    }
    /* Layouts BLAS cannot take (both strides 2) and padded rows. */
    {
      mm_spec p = spec2(9, 11, 13);
      p.sa = ST_STRIDED;
      p.bias = 2;
      mm_case(s, &p, dt);
      p.sa = ST_ROW;
      p.sb = ST_STRIDED;
      p.res = 1;
      mm_case(s, &p, dt);
      p.sb = ST_ROW;
      p.sy = ST_STRIDED;
      p.res = 2;
      mm_case(s, &p, dt);
      p.sy = ST_ROW;
      p.layout = HARNESS_PADDED;
      p.res = 1;
      p.act = act_of(ADNN_ACTIVATION_TANH);
      mm_case(s, &p, dt);
      p.res = 2;
      p.sb = ST_TRANS;
      mm_case(s, &p, dt);
    }
    /* Rank 3 and 4: b of rank 2 (shared weights), b with size-1 batch dims,
     * b of a's batch dims, b of rank 3 under a of rank 4. */
    {
      mm_spec p = {.ra = 3, .rb = 2, .a = DIMS(3, 17, 9), .b = DIMS(9, 10), .alpha = 1, .rs = 1};
      mm_case(s, &p, dt);
      p.bias = 1;
      p.res = 2;
      p.act = act_of(ADNN_ACTIVATION_SILU);
      mm_case(s, &p, dt);
      mm_spec q = {.ra = 3, .rb = 3, .a = DIMS(3, 17, 9), .b = DIMS(3, 9, 10), .alpha = 1,
                   .rs = 1};
      mm_case(s, &q, dt);
      q.b[0] = 1;
      q.sb = ST_TRANS;
      q.res = 1;
      mm_case(s, &q, dt);
      mm_spec r4 = {.ra = 4, .rb = 4, .a = DIMS(2, 3, 7, 5), .b = DIMS(2, 1, 5, 6), .alpha = 2,
                    .rs = 1};
      mm_case(s, &r4, dt);
      r4.b[0] = 1;
      r4.b[1] = 3;
      r4.bias = 1;
      r4.res = 1;
      r4.rs = 3;
      mm_case(s, &r4, dt);
      r4.rb = 3;
      r4.b[0] = 3;
      r4.b[1] = 5;
      r4.b[2] = 6;
      r4.sa = ST_TRANS;
      r4.res = 2;
      mm_case(s, &r4, dt);
      r4.rb = 2;
      r4.b[0] = 5;
      r4.b[1] = 6;
      r4.sy = ST_TRANS;
      r4.layout = HARNESS_PADDED;
      mm_case(s, &r4, dt);
      mm_spec big = {.ra = 3, .rb = 2, .a = DIMS(2, 260, 64), .b = DIMS(64, 270), .alpha = 1,
                     .rs = 1, .bias = 1, .res = 1, .sb = ST_TRANS};
      big.act = act_of(ADNN_ACTIVATION_GELU_TANH);
      mm_case(s, &big, dt);
    }
    /* NaN and infinities: they propagate through the product and the
     * residual; a zero alpha or residual_scale leaves its operand unread. */
    {
      mm_spec p = spec2(9, 13, 11);
      p.bias = 1;
      p.res = 1;
      p.specials = 1;
      mm_case(s, &p, dt);
      p.alpha = 0;
      p.rs = 0;
      mm_case(s, &p, dt);
      p.res = 2;
      p.rs = 0;
      p.alpha = 0.5;
      mm_case(s, &p, dt);
    }
    /* Every activation kind after bias and residual. */
    for (int k = ADNN_ACTIVATION_IDENTITY; k <= ADNN_ACTIVATION_HARDSWISH; k++) {
      mm_spec p = spec2(19, 23, 37);
      p.bias = 1;
      p.res = k % 2 ? 2 : 1;
      p.rs = 0.25;
      p.alpha = 1.5;
      p.act = act_of((adnn_activation_kind)k);
      mm_case(s, &p, dt);
    }
  }
  mm_lowp_cases(s);
}

/* F16/BF16 inputs (F32 accumulation, y in F32, F16 or BF16) and INT8
 * inputs (s8 x s8, u8 x s8; y I32 or requantized I8/U8): odd sizes, K not a
 * multiple of the vector width or of the k pairs, K beyond one k block (256)
 * and tiles beyond one 384 x 256 block, transposes by strides, gathered
 * layouts, batches, and for INT8 per-tensor and per-channel scales, ties,
 * saturation and the largest K whose I32 sums stay exact. */
static void mm_lowp_cases(harness_suite *s) {
  static const int64_t sizes[][3] = {{1, 1, 1}, {7, 1, 33}, {33, 7, 129}, {129, 33, 7},
                                     {200, 517, 150}, {400, 37, 270}};
  const adnn_dtype lowp[2] = {F16, BF16};
  for (int t = 0; t < 2; t++) {
    const adnn_dtype dt = lowp[t];
    const adnn_dtype ys[3] = {F32, dt, dt == F16 ? BF16 : F16};
    for (int yi = 0; yi < 3; yi++) {
      const adnn_dtype yt = ys[yi];
      for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        mm_spec p = spec2(sizes[i][0], sizes[i][1], sizes[i][2]);
        mm_case_typed(s, &p, dt, yt, NULL);
        p.bias = 1;
        p.res = 1;
        p.act = act_of(ADNN_ACTIVATION_GELU);
        p.alpha = 0.5;
        p.rs = -0.75;
        mm_case_typed(s, &p, dt, yt, NULL);
      }
      for (int st = 0; st < 8; st++) {
        mm_spec p = spec2(33, 20, 17);
        p.sa = st & 1 ? ST_TRANS : ST_ROW;
        p.sb = st & 2 ? ST_TRANS : ST_ROW;
        p.sy = st & 4 ? ST_TRANS : ST_ROW;
        p.bias = st & 1 ? 2 : 1;
        p.res = st & 1 ? 2 : 1;
        p.rs = 0.5;
        p.act = act_of(ADNN_ACTIVATION_RELU);
        mm_case_typed(s, &p, dt, yt, NULL);
      }
    }
    {
      mm_spec p = spec2(9, 11, 13);
      p.sa = ST_STRIDED;
      mm_case_typed(s, &p, dt, F32, NULL);
      p.sa = ST_ROW;
      p.sb = ST_STRIDED;
      p.sy = ST_STRIDED;
      mm_case_typed(s, &p, dt, dt, NULL);
      /* NaN and infinities propagate; alpha 0 leaves a and b unread. */
      mm_spec n = spec2(9, 13, 11);
      n.bias = 1;
      n.specials = 1;
      mm_case_typed(s, &n, dt, F32, NULL);
      n.alpha = 0;
      mm_case_typed(s, &n, dt, dt, NULL);
      mm_spec b3 = {.ra = 3, .rb = 2, .a = DIMS(3, 17, 41), .b = DIMS(41, 10), .alpha = 1,
                    .rs = 1, .sb = ST_TRANS, .bias = 1};
      mm_case_typed(s, &b3, dt, dt, NULL);
      mm_spec r4 = {.ra = 4, .rb = 4, .a = DIMS(2, 3, 7, 5), .b = DIMS(2, 1, 5, 6), .alpha = 2,
                    .rs = 1};
      mm_case_typed(s, &r4, dt, F32, NULL);
      mm_spec big = {.ra = 3, .rb = 2, .a = DIMS(2, 260, 64), .b = DIMS(64, 270), .alpha = 1,
                     .rs = 1, .bias = 1, .res = 1, .sb = ST_TRANS};
      big.act = act_of(ADNN_ACTIVATION_SILU);
      mm_case_typed(s, &big, dt, dt, NULL);
    }
  }
  /* INT8: (a, y) pairs; b is I8. */
  static const adnn_dtype ints[6][2] = {{I8, I32}, {U8, I32}, {I8, I8}, {I8, U8}, {U8, U8},
                                        {U8, I8}};
  for (int t = 0; t < 6; t++) {
    const adnn_dtype at = ints[t][0], yt = ints[t][1];
    const int requant = is_int8(yt);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
      mm_spec p = spec2(sizes[i][0], sizes[i][1], sizes[i][2]);
      /* A scale that brings about 2 standard deviations of the sum to 64,
       * so some elements saturate. */
      const double sd = 11000.0 * sqrt((double)sizes[i][1]);
      mm_quant q = {.scale = 32.0 / sd, .zero_point = yt == U8 ? 128 : -5};
      mm_case_typed(s, &p, at, yt, &q);
      p.bias = 1;
      if (requant) q.per_channel = 1;
      mm_case_typed(s, &p, at, yt, &q);
    }
    const mm_quant q0 = {.scale = 32.0 / (11000.0 * sqrt(20.0)), .zero_point = yt == U8 ? 100 : 7,
                         .per_channel = requant};
    for (int st = 0; st < 8; st++) {
      mm_spec p = spec2(33, 20, 17);
      p.sa = st & 1 ? ST_TRANS : ST_ROW;
      p.sb = st & 2 ? ST_TRANS : ST_ROW;
      p.sy = st & 4 ? ST_TRANS : ST_ROW;
      p.bias = st & 1 ? 2 : 1;
      mm_case_typed(s, &p, at, yt, &q0);
    }
    {
      mm_spec p = spec2(9, 11, 13);
      p.sa = ST_STRIDED;
      mm_case_typed(s, &p, at, yt, &q0);
      /* y keeps a packed layout: the harness checks that the gaps of a
       * strided y stay NaN, which an integer y cannot hold (the transposed
       * y above covers non-unit y strides). */
      p.sa = ST_ROW;
      p.sb = ST_STRIDED;
      mm_case_typed(s, &p, at, yt, &q0);
      mm_spec b3 = {.ra = 3, .rb = 2, .a = DIMS(3, 17, 41), .b = DIMS(41, 10), .alpha = 1,
                    .rs = 1, .sb = ST_TRANS, .bias = 1};
      mm_case_typed(s, &b3, at, yt, &q0);
      mm_spec r4 = {.ra = 4, .rb = 4, .a = DIMS(2, 3, 7, 5), .b = DIMS(2, 1, 5, 6), .alpha = 1,
                    .rs = 1};
      mm_case_typed(s, &r4, at, yt, &q0);
    }
    if (requant) {
      /* Ties: small integers and a scale of 1/2 put many products exactly
       * halfway between two integers (round half to even decides). */
      mm_spec p = spec2(17, 3, 19);
      mm_quant tie = {.scale = 0.5, .zero_point = yt == U8 ? 20 : 0, .fill = 1};
      mm_case_typed(s, &p, at, yt, &tie);
      tie.per_channel = 1;
      mm_case_typed(s, &p, at, yt, &tie);
    }
  }
  /* The largest K whose I32 sums stay exact (doc/numerics.md): s8 x s8 with
   * K = 2^17 - 1 and every product (-128)(-128) = 2^14 gives 2^31 - 2^14;
   * a bias of 2^14 - 1 reaches INT32_MAX exactly and one of 2^14 saturates
   * there. u8 x s8 with K = 2^16 and every product 255 (-128) gives
   * -2139095040; a bias of -2^23 reaches INT32_MIN exactly. */
  {
    mm_spec p = spec2(1, ((int64_t)1 << 17) - 1, 2);
    mm_quant q = {.fill = 2};
    mm_case_typed(s, &p, I8, I32, &q);
    p.bias = 1;
    q.extreme_bias = 16383;
    mm_case_typed(s, &p, I8, I32, &q);
    q.extreme_bias = 16384;
    mm_case_typed(s, &p, I8, I32, &q);
    mm_spec u = spec2(2, (int64_t)1 << 16, 1);
    mm_quant qu = {.fill = 2};
    mm_case_typed(s, &u, U8, I32, &qu);
    u.bias = 1;
    qu.extreme_bias = -8388608;
    mm_case_typed(s, &u, U8, I32, &qu);
  }
}

/* ------------------------------------------------------------------------ */
/* Self-tests of the oracle                                                  */
/* ------------------------------------------------------------------------ */

static void mm_oracle_selftests(const harness_report *rep) {
  /* a = [[1, 2], [3, 4]], b = [[5, 6], [7, 8]]: a @ b = [[19, 22], [43, 50]].
   * With alpha 2, bias [1, -1] and r = [[1, 1], [1, 1]] scaled by -3:
   * 2 * 19 + 1 - 3 = 36, 44 - 1 - 3 = 40, 86 + 1 - 3 = 84, 100 - 1 - 3 = 96;
   * clamp(0, 50) gives 36, 40, 50, 50. */
  const adnn_dtype dt = F64;
  const int64_t d2[2] = {2, 2};
  harness_desc hd;
  adnn_matmul_desc *d = &hd.matmul;
  adnn_matmul_desc_init(d);
  d->a = d->b = d->y = d->residual = harness_tensor_desc(dt, 2, d2, HARNESS_PACKED);
  d->bias = harness_vector_desc(dt, 2);
  d->has_bias = d->has_residual = 1;
  d->alpha = 2.0;
  d->residual_scale = -3.0;
  d->activation = (adnn_activation){ADNN_ACTIVATION_CLAMP, 0.0, 50.0};
  const double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, bias[2] = {1, -1}, r[4] = {1, 1, 1, 1};
  const double *in[4] = {a, b, bias, r};
  double y[4];
  char why[256];
  int good = mm_oracle(&hd, in, y, why, sizeof why) == 0;
  harness_ok(rep, good && y[0] == 36 && y[1] == 40 && y[2] == 50 && y[3] == 50,
             "oracle: 2 x 2 with alpha, bias, scaled residual and clamp (got %g %g %g %g)", y[0],
             y[1], y[2], y[3]);
  /* The same b given transposed through its strides ([[5, 7], [6, 8]]
   * stored, dims [2, 2] strides [1, 2]) and a batch of two a's sharing it:
   * the second batch's a = [[0, 1], [1, 0]] gives [[7, 8], [5, 6]]. */
  adnn_matmul_desc_init(d);
  const int64_t d3[3] = {2, 2, 2};
  d->a = d->y = harness_tensor_desc(dt, 3, d3, HARNESS_PACKED);
  d->b = harness_tensor_desc(dt, 2, d2, HARNESS_PACKED);
  d->b.strides[0] = 1;
  d->b.strides[1] = 2;
  const double a2[8] = {1, 2, 3, 4, 0, 1, 1, 0}, bt[4] = {5, 7, 6, 8};
  const double *in2[2] = {a2, bt};
  double y2[8];
  good = mm_oracle(&hd, in2, y2, why, sizeof why) == 0;
  harness_ok(rep, good && y2[0] == 19 && y2[3] == 50 && y2[4] == 7 && y2[5] == 8 && y2[6] == 5 &&
                      y2[7] == 6,
             "oracle: a transposed b shared by a batch of two");
  /* Inner dims that disagree are refused. */
  d->b.dims[0] = 3;
  harness_ok(rep, mm_oracle(&hd, in2, y2, why, sizeof why) != 0,
             "oracle: a [2, 2, 2] @ b [3, 2] is refused");
}

/* ------------------------------------------------------------------------ */
/* Bad descriptors                                                           */
/* ------------------------------------------------------------------------ */

static void expect_bad(const harness_report *rep, adnn_context *ctx, const char *bn,
                       const adnn_matmul_desc *d, adnn_status want, const char *needle,
                       const char *what) {
  adnn_plan *plan = NULL;
  const adnn_status st = adnn_plan_create_matmul(ctx, d, &plan);
  harness_is_status(rep, st, want, "%s matmul: %s", bn, what);
  if (st != ADNN_STATUS_SUCCESS) {
    harness_contains(rep, adnn_last_error(), needle, "%s matmul: %s: the message names it", bn,
                     what);
  } else {
    adnn_plan_destroy(plan);
  }
}

static void mm_bad_descriptors(const harness_report *rep, adnn_context *ctx, const char *bn) {
  const int64_t ad[2] = {4, 3}, bd[2] = {3, 5}, yd[2] = {4, 5};
  adnn_matmul_desc good;
  adnn_matmul_desc_init(&good);
  good.a = harness_tensor_desc(F32, 2, ad, HARNESS_PACKED);
  good.b = harness_tensor_desc(F32, 2, bd, HARNESS_PACKED);
  good.y = harness_tensor_desc(F32, 2, yd, HARNESS_PACKED);
  good.bias = harness_vector_desc(F32, 5);
  good.residual = good.y;
  adnn_matmul_desc d = good;
  adnn_plan *plan = NULL;
  harness_is_status(rep, adnn_plan_create_matmul(ctx, NULL, &plan), ADNN_STATUS_BAD_PARAM_NULL,
                    "%s matmul: NULL descriptor", bn);
  d.b.dims[0] = 4;
  d.b.strides[0] = 5;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "inner dims",
             "a [4, 3] @ b [4, 5] (K disagrees)");
  d = good;
  d.a.rank = 1;
  d.a.dims[0] = 3;
  d.a.strides[0] = 1;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "a has rank 1", "a of rank 1");
  d = good;
  const int64_t a5[5] = {1, 1, 1, 4, 3};
  d.a = harness_tensor_desc(F32, 5, a5, HARNESS_PACKED);
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "a has rank 5", "a of rank 5");
  d = good;
  const int64_t a3[3] = {2, 4, 3}, b3[3] = {3, 3, 5}, y3[3] = {2, 4, 5};
  d.a = harness_tensor_desc(F32, 3, a3, HARNESS_PACKED);
  d.b = harness_tensor_desc(F32, 3, b3, HARNESS_PACKED);
  d.y = harness_tensor_desc(F32, 3, y3, HARNESS_PACKED);
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "batch dims of b",
             "b batch 3 under a batch 2 does not broadcast");
  d.a = good.a;
  d.y = good.y;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "more batch dims",
             "b of rank 3 under a of rank 2");
  d = good;
  d.y.dims[1] = 6;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "y has dims", "y [4, 6] for [4, 5]");
  d = good;
  d.y.strides[0] = 0;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "strides of y",
             "y whose rows share memory (stride 0)");
  d = good;
  d.has_bias = 1;
  d.bias.dims[0] = 4;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "bias has 4 elements", "bias [4] for N = 5");
  d = good;
  d.has_bias = 1;
  d.bias = good.y;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "bias has rank 2", "bias of rank 2");
  d = good;
  d.has_residual = 1;
  d.residual.dims[0] = 3;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "residual has dims",
             "residual [3, 5] for y [4, 5]");
  d = good;
  d.b.dtype = F64;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "b has dtype f64", "b f64 with a f32");
  d = good;
  d.has_bias = 1;
  d.bias.dtype = F64;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "bias has dtype", "bias f64 with a f32");
  d = good;
  d.alpha = NAN;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "alpha", "alpha NaN");
  d = good;
  d.has_residual = 1;
  d.residual_scale = INFINITY;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "residual_scale", "residual_scale inf");
  d = good;
  d.alpha = 1e39;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "beyond the F32 range",
             "F32 alpha above FLT_MAX");
  d = good;
  d.has_residual = 1;
  d.residual_scale = -1e300;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "beyond the F32 range",
             "F32 residual_scale below -FLT_MAX");
  d = good;
  d.activation.kind = (adnn_activation_kind)99;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "activation kind 99",
             "unknown activation");
  d = good;
  d.activation = (adnn_activation){ADNN_ACTIVATION_CLAMP, 1.0, 0.0};
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "clamp", "clamp with alpha > beta");
  d = good;
  d.struct_size = 8;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "struct_size", "struct_size too small");
  d = good;
  d.a.dtype = d.b.dtype = d.y.dtype = ADNN_DTYPE_I32;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_NOT_SUPPORTED, "i32", "dtype i32");
  /* The low-precision dtype rules: each refusal names both dtypes. */
  d = good;
  d.a.dtype = F16;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "b has dtype f32 but a has f16",
             "f16 a with an f32 b");
  d.b.dtype = F16;
  d.y.dtype = I32;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "y has dtype i32 but a has f16",
             "f16 inputs with an i32 y");
  d.y.dtype = BF16;
  d.has_bias = 1;
  d.bias.dtype = F16;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "bias has dtype f16 but a has f16",
             "f16 inputs with an f16 bias (the bias is f32)");
  d.bias.dtype = F32;
  d.has_residual = 1;
  d.residual.dtype = F16;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "residual has dtype f16 but a has f16",
             "a bf16 y with an f16 residual");
  d = good;
  d.a.dtype = I8;
  d.b.dtype = U8;
  d.y.dtype = I32;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "b has dtype u8 but a has i8",
             "s8 x u8 (b must be i8)");
  d.b.dtype = I8;
  d.y.dtype = F32;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "y has dtype f32 but a has i8",
             "i8 inputs with an f32 y");
  d.y.dtype = I32;
  d.has_bias = 1;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "bias has dtype f32 but a has i8",
             "i8 inputs with an f32 bias (the bias is i32)");
  d.bias.dtype = I32;
  d.alpha = 2.0;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "alpha (2) must be 1", "i8 with alpha 2");
  d.alpha = 1.0;
  d.activation = act_of(ADNN_ACTIVATION_RELU);
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "activation relu", "i8 with a relu");
  d.activation = act_of(ADNN_ACTIVATION_IDENTITY);
  d.has_residual = 1;
  d.residual.dtype = I32;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "residual is not supported",
             "i8 with a residual");
  d.has_residual = 0;
  d.has_requant_scales = 1;
  d.requant_scales = harness_vector_desc(F32, 5);
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "has_requant_scales",
             "per-channel scales with an i32 y");
  d.y.dtype = U8;
  d.requant_scales.dims[0] = 4;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "requant_scales has 4 elements",
             "requant_scales [4] for N = 5");
  d.requant_scales = harness_vector_desc(F16, 5);
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "requant_scales has dtype f16",
             "f16 requant_scales");
  d.has_requant_scales = 0;
  d.requant_scale = 0.0;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "requant_scale (0)", "requant_scale 0");
  d.requant_scale = 0.5;
  d.y_zero_point = 256;
  expect_bad(rep, ctx, bn, &d, ADNN_STATUS_BAD_PARAM, "y_zero_point (256)",
             "a u8 y with zero point 256");
  d.y_zero_point = 0;
  {
    const int64_t ak[2] = {1, (int64_t)1 << 17}, bk[2] = {(int64_t)1 << 17, 5}, yk[2] = {1, 5};
    adnn_matmul_desc k = d;
    k.a = harness_tensor_desc(I8, 2, ak, HARNESS_PACKED);
    k.b = harness_tensor_desc(I8, 2, bk, HARNESS_PACKED);
    k.y = harness_tensor_desc(I32, 2, yk, HARNESS_PACKED);
    expect_bad(rep, ctx, bn, &k, ADNN_STATUS_BAD_PARAM, "K = 131072 is above 131071",
               "s8 x s8 with K = 2^17");
  }

  /* At execution: a residual that overlaps y without being exactly y is
   * refused; r == y with y's layout runs in place. */
  d = good;
  d.has_residual = 1;
  if (!harness_is_status(rep, adnn_plan_create_matmul(ctx, &d, &plan), ADNN_STATUS_SUCCESS,
                         "%s matmul: a plan with a residual", bn))
    return;
  float *buf = NULL;
  const size_t bytes = (12 + 15 + 40) * sizeof(float);
  if (adnn_malloc(ctx, bytes, (void **)&buf) == ADNN_STATUS_SUCCESS) {
    (void)adnn_memset(ctx, buf, 0, bytes);
    float *a = buf, *b = buf + 12, *y = buf + 27;
    const void *in_bad[3] = {a, b, y + 1};
    harness_is_status(rep, adnn_plan_execute(plan, in_bad, 3, y), ADNN_STATUS_BAD_PARAM,
                      "%s matmul: a residual overlapping y one element off is refused", bn);
    harness_contains(rep, adnn_last_error(), "overlaps inputs[2]",
                     "%s matmul: the message names the residual (inputs[2])", bn);
    const void *in_ok[3] = {a, b, y};
    harness_is_status(rep, adnn_plan_execute(plan, in_ok, 3, y), ADNN_STATUS_SUCCESS,
                      "%s matmul: the residual exactly y runs in place", bn);
    (void)adnn_context_synchronize(ctx);
    adnn_free(ctx, buf);
  }
  adnn_plan_destroy(plan);
}

const harness_op_traits harness_matmul_traits = {
    .inputs = mm_inputs,
    .output = mm_output,
    .set_dtype = mm_set_dtype,
    .oracle = mm_oracle,
    .tolerance = mm_tolerance,
    .fill = mm_fill,
    .variant_count = 1,
    .cases = mm_cases,
    .oracle_selftests = mm_oracle_selftests,
    .bad_descriptors = mm_bad_descriptors,
};
