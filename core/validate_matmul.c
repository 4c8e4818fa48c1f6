/*
 * Validation of the matmul descriptor (see op_validate.h): the GEMM with a
 * fused epilogue, y = act(alpha * (a @ b) + bias + residual_scale * r). The
 * validator checks every rule of adnn/ops.h's comment and brings a, b, the
 * residual and y to rank 4 [B0, B1, rows, cols] for the plugins (missing
 * leading dims of size 1; b's broadcast batch dims repeated with stride 0),
 * so kernels see batch0 x batch1 GEMMs of M x N x K. Messages name the
 * public function and the field.
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "core/op_validate.h"

static void format_dims(const adnn_tensor_desc *t, char *buf, size_t size) {
  size_t used = (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < t->rank && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? ", " : "",
                             (long long)t->dims[i]);
  if (used < size) snprintf(buf + used, size - used, "]");
}

/* t (rank r, last two dims rows x cols) brought to rank 4 with the batch
 * dims `batch` (a's): t's own batch dims are aligned from the right; a
 * missing or size-1 dim takes batch's size with stride 0. The caller has
 * checked that t's batch dims broadcast. */
static adnn_tensor_desc to_rank4(const adnn_tensor_desc *t, const int64_t batch[2]) {
  adnn_tensor_desc out = *t;
  out.rank = 4;
  const int nb = t->rank - 2;
  for (int i = 0; i < 2; i++) {
    const int src = i - (2 - nb);
    const int64_t dim = src >= 0 ? t->dims[src] : 1;
    out.dims[i] = batch[i];
    out.strides[i] = dim == 1 ? 0 : t->strides[src];
  }
  out.dims[2] = t->dims[t->rank - 2];
  out.dims[3] = t->dims[t->rank - 1];
  out.strides[2] = t->strides[t->rank - 2];
  out.strides[3] = t->strides[t->rank - 1];
  return out;
}

static adnn_status check_same_dtype(const char *func, const char *name, const adnn_tensor_desc *t,
                                    adnn_dtype want) {
  if (t->dtype == want) return ADNN_STATUS_SUCCESS;
  return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s has dtype %s but a has %s; all tensors of "
                    "matmul share one dtype", func, name, adnn_dtype_name(t->dtype),
                    adnn_dtype_name(want));
}

static int is_lowp_float(adnn_dtype t) { return t == ADNN_DTYPE_F16 || t == ADNN_DTYPE_BF16; }
static int is_int8(adnn_dtype t) { return t == ADNN_DTYPE_I8 || t == ADNN_DTYPE_U8; }

/* The matmul dtype rules (adnn/ops.h, doc/ops.md "Matmul dtypes") for the
 * tensors other than a: the dtype `name` must have, given a's dtype `in`
 * and y's dtype `out`; `what` says in words which dtypes are allowed. */
static adnn_status check_rule(const char *func, const char *name, adnn_dtype got, adnn_dtype in,
                              int ok, const char *what) {
  if (ok) return ADNN_STATUS_SUCCESS;
  return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s has dtype %s but a has %s; with %s inputs "
                    "%s", func, name, adnn_dtype_name(got), adnn_dtype_name(in),
                    adnn_dtype_name(in), what);
}

/* The largest K whose I32 sums cannot overflow: |a b| <= 128 * 128 = 2^14
 * for s8 x s8, so K = 2^17 - 1 stays below 2^31; |a b| <= 255 * 128 for
 * u8 x s8, and 2^16 of those stay below 2^31 - 1 (doc/numerics.md). */
static int64_t int8_k_max(adnn_dtype in) {
  return in == ADNN_DTYPE_U8 ? (int64_t)1 << 16 : ((int64_t)1 << 17) - 1;
}

adnn_status adnn__matmul_validate(const char *func, const adnn_matmul_desc *d,
                                  adnn_plugin_matmul *p, adnn__op_io *io) {
  adnn_status st;
  size_t ab, bb, yb, biasb = 0, rb = 0;
  char s1[160], s2[160];
  if ((st = adnn__op_tensor_check(func, "a", &d->a, 2, 4, &ab)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = adnn__op_tensor_check(func, "b", &d->b, 2, 4, &bb)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = adnn__op_tensor_check(func, "y", &d->y, 2, 4, &yb)) != ADNN_STATUS_SUCCESS) return st;
  /* dt: the input dtype (a's), which selects the kernels; yt: y's. */
  const adnn_dtype dt = d->a.dtype, yt = d->y.dtype;
  if (!(io->dtypes & ADNN_OP_DTYPE(dt)))
    return adnn__fail(ADNN_STATUS_NOT_SUPPORTED, "%s: dtype %s of a is not supported (f32, "
                      "f64, f16, bf16, i8 and u8 are)", func, adnn_dtype_name(dt));
  const int lowp = is_lowp_float(dt), integer = is_int8(dt);
  if (lowp)
    st = check_rule(func, "b", d->b.dtype, dt, d->b.dtype == dt, "b has a's dtype");
  else if (integer)
    st = check_rule(func, "b", d->b.dtype, dt, d->b.dtype == ADNN_DTYPE_I8,
                    "b is i8 (s8 x s8 or u8 x s8)");
  else
    st = check_same_dtype(func, "b", &d->b, dt);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (lowp)
    st = check_rule(func, "y", yt, dt, yt == ADNN_DTYPE_F32 || is_lowp_float(yt),
                    "y is f32, f16 or bf16");
  else if (integer)
    st = check_rule(func, "y", yt, dt, yt == ADNN_DTYPE_I32 || is_int8(yt),
                    "y is i32, or i8/u8 requantized");
  else
    st = check_same_dtype(func, "y", &d->y, dt);
  if (st != ADNN_STATUS_SUCCESS) return st;
  /* The bias dtype: the accumulator's (F32 for F16/BF16, I32 for INT8). */
  const adnn_dtype bias_dt = lowp ? ADNN_DTYPE_F32 : integer ? ADNN_DTYPE_I32 : dt;
  io->dtype = dt;
  const int ra = d->a.rank, rbk = d->b.rank;
  const int64_t M = d->a.dims[ra - 2], K = d->a.dims[ra - 1];
  const int64_t Kb = d->b.dims[rbk - 2], N = d->b.dims[rbk - 1];
  if (K != Kb) {
    format_dims(&d->a, s1, sizeof s1);
    format_dims(&d->b, s2, sizeof s2);
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: the inner dims disagree: a %s has K = %lld "
                      "(its last dim) but b %s has K = %lld (its second-to-last dim)", func, s1,
                      (long long)K, s2, (long long)Kb);
  }
  /* b's batch dims, aligned with a's from the right, are a's or 1; b may not
   * have more of them than a (y's batch dims are a's). */
  if (rbk > ra) {
    format_dims(&d->a, s1, sizeof s1);
    format_dims(&d->b, s2, sizeof s2);
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: b %s has more batch dims than a %s; y's batch "
                      "dims are a's, and b's must each be a's or 1", func, s2, s1);
  }
  for (int i = 0; i < rbk - 2; i++) {
    const int64_t db = d->b.dims[i], da = d->a.dims[i + (ra - rbk)];
    if (db != da && db != 1) {
      format_dims(&d->a, s1, sizeof s1);
      format_dims(&d->b, s2, sizeof s2);
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: the batch dims of b %s do not broadcast to "
                        "a's %s: b dims[%d] is %lld, expected 1 or %lld", func, s2, s1, i,
                        (long long)db, (long long)da);
    }
  }
  /* y: [..., M, N] with a's batch dims. */
  int y_ok = d->y.rank == ra && d->y.dims[ra - 2] == M && d->y.dims[ra - 1] == N;
  for (int i = 0; y_ok && i < ra - 2; i++) y_ok = d->y.dims[i] == d->a.dims[i];
  if (!y_ok) {
    adnn_tensor_desc want = d->a;
    want.dims[ra - 1] = N;
    format_dims(&d->y, s1, sizeof s1);
    format_dims(&want, s2, sizeof s2);
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: y has dims %s but a @ b is %s (a's batch dims, "
                      "then M = %lld, N = %lld)", func, s1, s2, (long long)M, (long long)N);
  }
  if (!adnn__tensor_strides_disjoint(&d->y))
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: the strides of y make different elements "
                      "share memory; an output needs distinct addresses", func);
  if (d->has_bias) {
    if ((st = adnn__op_tensor_check(func, "bias", &d->bias, 1, 1, &biasb)) != ADNN_STATUS_SUCCESS) return st;
    if (lowp || integer)
      st = check_rule(func, "bias", d->bias.dtype, dt, d->bias.dtype == bias_dt,
                      lowp ? "bias is f32 (the accumulator's dtype)"
                           : "bias is i32 (added to the I32 accumulator)");
    else
      st = check_same_dtype(func, "bias", &d->bias, dt);
    if (st != ADNN_STATUS_SUCCESS) return st;
    if (d->bias.dims[0] != N)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: bias has %lld elements but y has N = %lld "
                        "columns; bias is [N]", func, (long long)d->bias.dims[0], (long long)N);
  }
  int residual_in_place = 0;
  if (d->has_residual) {
    if ((st = adnn__op_tensor_check(func, "residual", &d->residual, 2, 4, &rb)) != ADNN_STATUS_SUCCESS)
      return st;
    if (integer)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: a residual is not supported with %s "
                        "inputs (y %s); add it after the integer matmul", func,
                        adnn_dtype_name(dt), adnn_dtype_name(yt));
    if (lowp)
      st = check_rule(func, "residual", d->residual.dtype, dt, d->residual.dtype == yt,
                      "the residual has y's dtype");
    else
      st = check_same_dtype(func, "residual", &d->residual, dt);
    if (st != ADNN_STATUS_SUCCESS) return st;
    if (!adnn__same_dims(&d->residual, &d->y)) {
      format_dims(&d->residual, s1, sizeof s1);
      format_dims(&d->y, s2, sizeof s2);
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: residual has dims %s but must have y's %s",
                        func, s1, s2);
    }
    if (!isfinite(d->residual_scale))
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: residual_scale (%g) must be finite", func,
                        d->residual_scale);
    if (yt != ADNN_DTYPE_F64 && fabs(d->residual_scale) > FLT_MAX)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: residual_scale (%g) is beyond the F32 range "
                        "(the F32 kernels scale in float)", func, d->residual_scale);
    /* The residual may be y itself only with y's layout; any other overlap
     * is refused at execution (the in-place bit below names the one allowed
     * sharing). */
    residual_in_place = adnn__same_layout(&d->residual, &d->y);
  }
  if (!isfinite(d->alpha))
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: alpha (%g) must be finite", func, d->alpha);
  if (dt != ADNN_DTYPE_F64 && fabs(d->alpha) > FLT_MAX)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: alpha (%g) is beyond the F32 range (the F32 "
                      "kernels scale in float)", func, d->alpha);
  const adnn_activation *act = &d->activation;
  if (strcmp(adnn_activation_name(act->kind), "unknown") == 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: activation kind %d is not an "
                      "adnn_activation_kind", func, (int)act->kind);
  if (!isfinite(act->alpha) || !isfinite(act->beta))
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: activation alpha (%g) and beta (%g) must be "
                      "finite", func, act->alpha, act->beta);
  if (act->kind == ADNN_ACTIVATION_CLAMP && act->alpha > act->beta)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: activation: clamp lower bound alpha (%g) is "
                      "above the upper bound beta (%g)", func, act->alpha, act->beta);

  /* Integer inputs: the exact I32 product, then the bias and, for an I8/U8
   * y, the requantization; none of the float epilogue. */
  size_t scalesb = 0;
  const int requant = integer && is_int8(yt);
  if (integer) {
    if (d->alpha != 1.0)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: alpha (%g) must be 1 with %s inputs (y %s); "
                        "scale an I8/U8 y with requant_scale", func, d->alpha,
                        adnn_dtype_name(dt), adnn_dtype_name(yt));
    if (act->kind != ADNN_ACTIVATION_IDENTITY)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: activation %s is not supported with %s "
                        "inputs (y %s): only the identity", func,
                        adnn_activation_name(act->kind), adnn_dtype_name(dt),
                        adnn_dtype_name(yt));
    if (K > int8_k_max(dt))
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: K = %lld is above %lld, the largest K whose "
                        "I32 accumulation of %s x i8 products cannot overflow", func,
                        (long long)K, (long long)int8_k_max(dt), adnn_dtype_name(dt));
  }
  if (requant) {
    const int64_t lo = yt == ADNN_DTYPE_I8 ? -128 : 0, hi = yt == ADNN_DTYPE_I8 ? 127 : 255;
    if (d->y_zero_point < lo || d->y_zero_point > hi)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: y_zero_point (%d) is outside y's %s range "
                        "%lld..%lld", func, (int)d->y_zero_point, adnn_dtype_name(yt),
                        (long long)lo, (long long)hi);
    if (d->has_requant_scales) {
      if ((st = adnn__op_tensor_check(func, "requant_scales", &d->requant_scales, 1, 1,
                                      &scalesb)) != ADNN_STATUS_SUCCESS)
        return st;
      if (d->requant_scales.dtype != ADNN_DTYPE_F32)
        return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: requant_scales has dtype %s but a has %s; "
                          "requant_scales is f32", func,
                          adnn_dtype_name(d->requant_scales.dtype), adnn_dtype_name(dt));
      if (d->requant_scales.dims[0] != N)
        return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: requant_scales has %lld elements but y "
                          "has N = %lld columns; requant_scales is [N]", func,
                          (long long)d->requant_scales.dims[0], (long long)N);
    } else if (!(isfinite(d->requant_scale) && d->requant_scale > 0.0)) {
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: requant_scale (%g) must be finite and > 0",
                        func, d->requant_scale);
    }
  } else if (d->has_requant_scales) {
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: has_requant_scales is set but y has dtype %s "
                      "(a %s); requantization needs integer inputs and an i8 or u8 y", func,
                      adnn_dtype_name(yt), adnn_dtype_name(dt));
  }

  const int has_bias = d->has_bias ? 1 : 0, has_residual = d->has_residual ? 1 : 0;
  const int has_scales = requant && d->has_requant_scales ? 1 : 0;
  io->n_inputs = 2 + has_bias + has_residual + has_scales;
  io->n_outputs = 1;
  io->input_bytes[0] = ab;
  io->input_bytes[1] = bb;
  if (has_bias) io->input_bytes[2] = biasb;
  if (has_residual) io->input_bytes[2 + has_bias] = rb;
  if (has_scales) io->input_bytes[2 + has_bias + has_residual] = scalesb;
  io->output_bytes[0] = yb;
  io->inplace_inputs = residual_in_place ? 1u << (2 + has_bias) : 0u;

  int64_t batch[2] = {1, 1};
  for (int i = 0; i < ra - 2; i++) batch[i + (4 - ra)] = d->a.dims[i];
  p->a = to_rank4(&d->a, batch);
  p->b = to_rank4(&d->b, batch);
  p->y = to_rank4(&d->y, batch);
  memset(&p->bias, 0, sizeof p->bias);
  memset(&p->residual, 0, sizeof p->residual);
  p->bias.dtype = bias_dt;
  p->residual.dtype = yt;
  if (has_bias) p->bias = d->bias;
  if (has_residual) p->residual = to_rank4(&d->residual, batch);
  p->batch0 = batch[0];
  p->batch1 = batch[1];
  p->M = M;
  p->N = N;
  p->K = K;
  p->alpha = d->alpha;
  p->residual_scale = has_residual ? d->residual_scale : 1.0; /* unread without a residual */
  p->has_bias = has_bias;
  p->has_residual = has_residual;
  p->activation = *act;
  p->requant_scale = requant && !has_scales ? d->requant_scale : 1.0;
  p->y_zero_point = requant ? d->y_zero_point : 0;
  p->has_requant_scales = has_scales;
  memset(&p->requant_scales, 0, sizeof p->requant_scales);
  p->requant_scales.dtype = ADNN_DTYPE_F32;
  if (has_scales) p->requant_scales = d->requant_scales;
  if (d->weights_prepacked != 0 && d->weights_prepacked != 1)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: weights_prepacked is %d; it must be 0 or 1",
                      func, (int)d->weights_prepacked);
  p->weights_prepacked = d->weights_prepacked;
  if (d->weights_prepacked) io->prepacked_input = 2; /* b, input 1 */
  return ADNN_STATUS_SUCCESS;
}
