/*
 * Validation of the public op descriptors: one adnn__<name>_validate() per
 * row of ADNN_OP_LIST (see op_validate.h). Each checks everything that does
 * not need the device (tensors, ranks, shapes, strides of outputs, dtypes,
 * parameters, enum values, overflow) and fills the plugin's normalized
 * problem, so plugins can assume well-formed input and never recompute the
 * problem's sizes. Messages name the public function and the offending field.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/op_validate.h"

/* ------------------------------------------------------------------------ */
/* Shared checks                                                             */
/* ------------------------------------------------------------------------ */

/* Validates one tensor and optionally its rank; returns its span in bytes. */
adnn_status adnn__op_tensor_check(const char *func, const char *name, const adnn_tensor_desc *t,
                                  int rank_lo, int rank_hi, size_t *bytes) {
  char prefix[128];
  snprintf(prefix, sizeof prefix, "%s: %s", func, name);
  int64_t span;
  adnn_status st = adnn__tensor_check(prefix, t, &span, NULL);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (t->rank < rank_lo || t->rank > rank_hi) {
    if (rank_lo == rank_hi)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s has rank %d, expected %d", func, name,
                        (int)t->rank, rank_lo);
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s has rank %d, expected %d..%d", func, name,
                      (int)t->rank, rank_lo, rank_hi);
  }
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] < 1)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s dims[%d] is %lld; sizes must be >= 1",
                        func, name, i, (long long)t->dims[i]);
  if (bytes) *bytes = (size_t)span * adnn_dtype_size(t->dtype);
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn__op_output_check(const char *func, const char *name, const adnn_tensor_desc *t) {
  if (!adnn__tensor_strides_disjoint(t))
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "%s: the strides of %s make different elements share memory; an output "
                      "needs distinct addresses", func, name);
  return ADNN_STATUS_SUCCESS;
}

/* The names of the dtypes of an ADNN_OP_DTYPE mask, for messages ("f32, f64,
 * f16 and bf16"), into buf (truncated to size). */
static void dtype_mask_names(unsigned mask, char *buf, size_t size) {
  size_t used = 0;
  int n = 0, total = 0;
  buf[0] = '\0';
  for (int d = 0; d < 32; d++)
    if ((mask >> d) & 1u) total++;
  for (int d = 0; d < 32 && used < size; d++) {
    if (!((mask >> d) & 1u)) continue;
    const char *sep = n == 0 ? "" : (n == total - 1 ? " and " : ", ");
    used += (size_t)snprintf(buf + used, size - used, "%s%s", sep, adnn_dtype_name((adnn_dtype)d));
    n++;
  }
}

/* Every tensor of an op shares the first one's dtype (BAD_PARAM otherwise),
 * and that dtype must be one the op accepts (NOT_SUPPORTED otherwise). */
static adnn_status check_dtype(const char *func, const char *name, const adnn_tensor_desc *t,
                               adnn_dtype want, adnn__op_io *io) {
  if (t->dtype != want)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s has dtype %s but x has %s; all tensors of "
                      "an op share one dtype", func, name, adnn_dtype_name(t->dtype),
                      adnn_dtype_name(want));
  return adnn__op_dtype_supported(func, "dtype", want, io);
}

adnn_status adnn__op_dtype_supported(const char *func, const char *what, adnn_dtype dt,
                                     adnn__op_io *io) {
  if ((unsigned)dt >= 32 || !(io->dtypes & ADNN_OP_DTYPE(dt))) {
    char names[128];
    dtype_mask_names(io->dtypes, names, sizeof names);
    return adnn__fail(ADNN_STATUS_NOT_SUPPORTED, "%s: %s %s is not supported (%s are)", func, what,
                      adnn_dtype_name(dt), names);
  }
  io->dtype = dt;
  return ADNN_STATUS_SUCCESS;
}

static void format_dims(const adnn_tensor_desc *t, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  used += (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < t->rank && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
  if (used < size) snprintf(buf + used, size - used, "]");
}

int adnn__same_dims(const adnn_tensor_desc *a, const adnn_tensor_desc *b) {
  if (a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return 0;
  return 1;
}

int adnn__same_layout(const adnn_tensor_desc *a, const adnn_tensor_desc *b) {
  if (!adnn__same_dims(a, b) || a->dtype != b->dtype) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] > 1 && a->strides[i] != b->strides[i]) return 0;
  return 1;
}

static adnn_status check_same_dims(const char *func, const char *name, const adnn_tensor_desc *y,
                                   const adnn_tensor_desc *x) {
  if (adnn__same_dims(y, x)) return ADNN_STATUS_SUCCESS;
  char a[160], b[160];
  format_dims(y, a, sizeof a);
  format_dims(x, b, sizeof b);
  return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s has dims %s but must match x %s", func, name,
                    a, b);
}

static adnn_status check_output_dims(const char *func, const adnn_tensor_desc *y,
                                     const int64_t want[4]) {
  adnn_tensor_desc w;
  memset(&w, 0, sizeof w);
  w.rank = 4;
  for (int i = 0; i < 4; i++) w.dims[i] = want[i];
  if (adnn__same_dims(y, &w)) return ADNN_STATUS_SUCCESS;
  char a[160], b[160];
  format_dims(y, a, sizeof a);
  format_dims(&w, b, sizeof b);
  return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: y has dims %s but the op produces %s", func, a, b);
}

static adnn_status check_activation(const char *func, const adnn_activation *a) {
  if (strcmp(adnn_activation_name(a->kind), "unknown") == 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: activation kind %d is not an "
                      "adnn_activation_kind", func, (int)a->kind);
  if (!isfinite(a->alpha) || !isfinite(a->beta))
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: activation alpha (%g) and beta (%g) must be "
                      "finite", func, a->alpha, a->beta);
  if (a->kind == ADNN_ACTIVATION_CLAMP && a->alpha > a->beta)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: clamp lower bound alpha (%g) is above the "
                      "upper bound beta (%g)", func, a->alpha, a->beta);
  return ADNN_STATUS_SUCCESS;
}

static adnn_status check_epsilon(const char *func, double eps) {
  if (!(eps >= 0.0) || !isfinite(eps))
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: epsilon (%g) must be finite and >= 0", func, eps);
  return ADNN_STATUS_SUCCESS;
}

/* The checks shared by ops whose y has x's dims (activation, softmax, batch
 * norm, norm): both tensors valid with rank >= rank_lo, same dims, a disjoint
 * y, one dtype; records the spans, and allows running in place when y has x's
 * exact layout. */
static adnn_status check_elementwise_io(const char *func, const adnn_tensor_desc *x,
                                        const adnn_tensor_desc *y, int rank_lo, adnn__op_io *io) {
  adnn_status st;
  if ((st = adnn__op_tensor_check(func, "x", x, rank_lo, ADNN_MAX_RANK, &io->input_bytes[0])) != ADNN_STATUS_SUCCESS) return st;
  if ((st = adnn__op_tensor_check(func, "y", y, rank_lo, ADNN_MAX_RANK, &io->output_bytes[0])) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_same_dims(func, "y", y, x)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = adnn__op_output_check(func, "y", y)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "x", x, x->dtype, io)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "y", y, x->dtype, io)) != ADNN_STATUS_SUCCESS) return st;
  if (adnn__same_layout(x, y)) io->inplace_inputs = 1u << 0;
  io->n_outputs = 1;
  return ADNN_STATUS_SUCCESS;
}

static int64_t count_of(const adnn_tensor_desc *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->dims[i];
  return n;
}

/* ------------------------------------------------------------------------ */
/* conv2d                                                                    */
/* ------------------------------------------------------------------------ */

/* Checks x, w and the parameters and computes y's dims; optionally records the
 * byte spans of x and w (so that the validator checks them only once). */
static adnn_status conv2d_params(const char *func, const adnn_conv2d_desc *d, int64_t out[4],
                                 size_t *x_bytes, size_t *w_bytes) {
  adnn_status st;
  if ((st = adnn__op_tensor_check(func, "x", &d->x, 4, 4, x_bytes)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = adnn__op_tensor_check(func, "w", &d->w, 4, 4, w_bytes)) != ADNN_STATUS_SUCCESS) return st;
  int64_t n = d->x.dims[0], c = d->x.dims[1], h = d->x.dims[2], w = d->x.dims[3];
  int64_t k = d->w.dims[0], cg = d->w.dims[1], r = d->w.dims[2], s = d->w.dims[3];
  if (d->groups < 1)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: groups (%lld) must be >= 1", func,
                      (long long)d->groups);
  if (c % d->groups != 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: input channels (%lld) not divisible by groups "
                      "(%lld)", func, (long long)c, (long long)d->groups);
  if (k % d->groups != 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: output channels (%lld, w dims[0]) not divisible "
                      "by groups (%lld)", func, (long long)k, (long long)d->groups);
  if (cg != c / d->groups)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: w has %lld input channels per group (dims[1]) "
                      "but x has %lld channels in %lld group(s), i.e. %lld per group", func,
                      (long long)cg, (long long)c, (long long)d->groups,
                      (long long)(c / d->groups));
  if (d->stride_h < 1 || d->stride_w < 1)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: strides (%lld, %lld) must be >= 1", func,
                      (long long)d->stride_h, (long long)d->stride_w);
  if (d->dilation_h < 1 || d->dilation_w < 1)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: dilations (%lld, %lld) must be >= 1", func,
                      (long long)d->dilation_h, (long long)d->dilation_w);
  if (d->pad_top < 0 || d->pad_bottom < 0 || d->pad_left < 0 || d->pad_right < 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: padding (top %lld, bottom %lld, left %lld, "
                      "right %lld) must be >= 0", func, (long long)d->pad_top,
                      (long long)d->pad_bottom, (long long)d->pad_left, (long long)d->pad_right);
  /* All these are bounded by validated tensor sizes, but the user controls
   * pads and dilation freely: compute in checked arithmetic. */
  int64_t eff_r, eff_s, ph, pw;
  if (!adnn__mul_i64(d->dilation_h, r - 1, &eff_r) || !adnn__mul_i64(d->dilation_w, s - 1, &eff_s) ||
      !adnn__add_i64(h, d->pad_top, &ph) || !adnn__add_i64(ph, d->pad_bottom, &ph) ||
      !adnn__add_i64(w, d->pad_left, &pw) || !adnn__add_i64(pw, d->pad_right, &pw))
    return adnn__fail(ADNN_STATUS_BAD_PARAM_OVERFLOW, "%s: padding or dilation overflows", func);
  int64_t p = ph - eff_r - 1 >= 0 ? (ph - eff_r - 1) / d->stride_h + 1 : 0;
  int64_t q = pw - eff_s - 1 >= 0 ? (pw - eff_s - 1) / d->stride_w + 1 : 0;
  if (p < 1 || q < 1)
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "%s: the output would be empty (%lld x %lld): the dilated filter (%lld x "
                      "%lld) is larger than the padded input (%lld x %lld)", func, (long long)p,
                      (long long)q, (long long)(eff_r + 1), (long long)(eff_s + 1),
                      (long long)ph, (long long)pw);
  out[0] = n;
  out[1] = k;
  out[2] = p;
  out[3] = q;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn__conv2d_output_dims(const char *func, const adnn_conv2d_desc *d, int64_t out[4]) {
  return conv2d_params(func, d, out, NULL, NULL);
}

static int conv2d_is_int8(adnn_dtype t) { return t == ADNN_DTYPE_I8 || t == ADNN_DTYPE_U8; }

/* The range of an I8 or U8 tensor's elements. */
static void int8_range(adnn_dtype t, int64_t *lo, int64_t *hi) {
  *lo = t == ADNN_DTYPE_I8 ? -128 : 0;
  *hi = t == ADNN_DTYPE_I8 ? 127 : 255;
}

/* conv2d with an I8/U8 x (adnn/ops.h, "dtypes"): w is I8 and y I32, I8 or
 * U8; the message names both dtypes and the rule. */
static adnn_status conv2d_int8_dtypes(const char *func, const adnn_conv2d_desc *d) {
  const char *xt = adnn_dtype_name(d->x.dtype);
  if (d->w.dtype != ADNN_DTYPE_I8)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: w has dtype %s but x has %s; with integer "
                      "inputs w is i8 (s8 x s8 or u8 x s8)", func, adnn_dtype_name(d->w.dtype),
                      xt);
  if (d->y.dtype != ADNN_DTYPE_I32 && !conv2d_is_int8(d->y.dtype))
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: y has dtype %s but x has %s; with integer "
                      "inputs y is i32, or i8/u8 requantized", func, adnn_dtype_name(d->y.dtype),
                      xt);
  return ADNN_STATUS_SUCCESS;
}

/* The largest C / groups * R * S of an integer convolution: each product
 * (x - x_zero_point) w has |.| <= 255 * 128, and 2^16 of them stay below
 * 2^31 - 1 (doc/numerics.md), so every I32 sum is exact. */
#define CONV2D_INT8_TERMS_MAX ((int64_t)1 << 16)

/* The parameters of an integer convolution: the activation, the number of
 * terms, the zero points and the requantization (K output channels). */
static adnn_status conv2d_int8_params(const char *func, const adnn_conv2d_desc *d, int64_t K,
                                      int requant) {
  const adnn_activation_kind act = d->activation.kind;
  if (act != ADNN_ACTIVATION_IDENTITY && act != ADNN_ACTIVATION_RELU)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: activation %s with integer inputs; an i8/u8 "
                      "convolution fuses identity or relu only (dequantize and run the "
                      "activation op for others)", func, adnn_activation_name(act));
  const int64_t terms = d->w.dims[1] * d->w.dims[2] * d->w.dims[3];
  if (terms > CONV2D_INT8_TERMS_MAX)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: C / groups * R * S is %lld but an integer "
                      "convolution sums at most %lld products, so that its I32 sums cannot "
                      "overflow", func, (long long)terms, (long long)CONV2D_INT8_TERMS_MAX);
  int64_t lo, hi;
  int8_range(d->x.dtype, &lo, &hi);
  if (d->x_zero_point < lo || d->x_zero_point > hi)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: x_zero_point (%d) is outside x's %s range "
                      "%lld..%lld", func, (int)d->x_zero_point, adnn_dtype_name(d->x.dtype),
                      (long long)lo, (long long)hi);
  if (!requant) {
    if (d->has_requant_scales)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: has_requant_scales is set but y has dtype "
                        "%s; requantization needs an i8 or u8 y", func,
                        adnn_dtype_name(d->y.dtype));
    return ADNN_STATUS_SUCCESS;
  }
  int8_range(d->y.dtype, &lo, &hi);
  if (d->y_zero_point < lo || d->y_zero_point > hi)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: y_zero_point (%d) is outside y's %s range "
                      "%lld..%lld", func, (int)d->y_zero_point, adnn_dtype_name(d->y.dtype),
                      (long long)lo, (long long)hi);
  if (d->has_requant_scales) {
    if (d->requant_scales.dtype != ADNN_DTYPE_F32)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: requant_scales has dtype %s; requant_scales "
                        "is f32", func, adnn_dtype_name(d->requant_scales.dtype));
    if (d->requant_scales.rank != 1 || d->requant_scales.dims[0] != K)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: requant_scales must be [K] with K = %lld "
                        "output channels (rank %d, %lld elements)", func, (long long)K,
                        (int)d->requant_scales.rank,
                        (long long)(d->requant_scales.rank >= 1 ? d->requant_scales.dims[0] : 0));
  } else if (!(isfinite(d->requant_scale) && d->requant_scale > 0.0)) {
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: requant_scale (%g) must be finite and > 0",
                      func, d->requant_scale);
  }
  return ADNN_STATUS_SUCCESS;
}

/* ADNN_CONV2D_ALGO forces an algorithm for descriptors that say AUTO. */
static adnn_conv2d_algorithm conv2d_algo_from_env(void) {
  const char *v = adnn__env_get(ADNN_ENV_CONV2D_ALGO);
  if (v == NULL) return ADNN_CONV2D_ALGO_AUTO;
#define ADNN_CONV2D_ALGO_BY_NAME_(NAME, name, value, def) \
  if (strcmp(v, #name) == 0) return ADNN_CONV2D_ALGO_##NAME;
  ADNN_CONV2D_ALGO_LIST(ADNN_CONV2D_ALGO_BY_NAME_)
#undef ADNN_CONV2D_ALGO_BY_NAME_
  adnn__env_warn_ignored(ADNN_ENV_CONV2D_ALGO, v, "not an algorithm name");
  return ADNN_CONV2D_ALGO_AUTO;
}

adnn_status adnn__conv2d_validate(const char *func, const adnn_conv2d_desc *d,
                                  adnn_plugin_conv2d *p, adnn__op_io *io) {
  int64_t want[4];
  adnn_status st;
  if ((st = conv2d_params(func, d, want, &io->input_bytes[0], &io->input_bytes[1])) != ADNN_STATUS_SUCCESS) return st;
  if ((st = adnn__op_tensor_check(func, "y", &d->y, 4, 4, &io->output_bytes[0])) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_output_dims(func, &d->y, want)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = adnn__op_output_check(func, "y", &d->y)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "x", &d->x, d->x.dtype, io)) != ADNN_STATUS_SUCCESS) return st;
  const int integer = conv2d_is_int8(d->x.dtype);
  if (integer) {
    if ((st = conv2d_int8_dtypes(func, d)) != ADNN_STATUS_SUCCESS) return st;
  } else {
    if ((st = check_dtype(func, "w", &d->w, d->x.dtype, io)) != ADNN_STATUS_SUCCESS) return st;
    if ((st = check_dtype(func, "y", &d->y, d->x.dtype, io)) != ADNN_STATUS_SUCCESS) return st;
  }
  io->n_inputs = 2;
  io->n_outputs = 1;
  if (d->has_bias) {
    if ((st = adnn__op_tensor_check(func, "bias", &d->bias, 1, 1, &io->input_bytes[2])) != ADNN_STATUS_SUCCESS) return st;
    if (d->bias.dims[0] != want[1])
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: bias has %lld elements but there are %lld "
                        "output channels", func, (long long)d->bias.dims[0], (long long)want[1]);
    if (integer && d->bias.dtype != ADNN_DTYPE_I32)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: bias has dtype %s but x has %s; with integer "
                        "inputs the bias is i32 (added to the I32 accumulator)", func,
                        adnn_dtype_name(d->bias.dtype), adnn_dtype_name(d->x.dtype));
    if (!integer && (st = check_dtype(func, "bias", &d->bias, d->x.dtype, io)) != ADNN_STATUS_SUCCESS)
      return st;
    io->n_inputs = 3;
  }
  if ((st = check_activation(func, &d->activation)) != ADNN_STATUS_SUCCESS) return st;
  const int requant = integer && conv2d_is_int8(d->y.dtype);
  if (integer) {
    if ((st = conv2d_int8_params(func, d, want[1], requant)) != ADNN_STATUS_SUCCESS) return st;
    if (requant && d->has_requant_scales) {
      if ((st = adnn__op_tensor_check(func, "requant_scales", &d->requant_scales, 1, 1,
                                      &io->input_bytes[io->n_inputs])) != ADNN_STATUS_SUCCESS)
        return st;
      io->n_inputs++;
    }
  } else if (d->x_zero_point != 0 || d->has_requant_scales) {
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s is set but x has dtype %s; zero points and "
                      "requantization apply to i8/u8 inputs only", func,
                      d->x_zero_point != 0 ? "x_zero_point" : "has_requant_scales",
                      adnn_dtype_name(d->x.dtype));
  }
  if (d->weights_prepacked != 0 && d->weights_prepacked != 1)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: weights_prepacked is %d; it must be 0 or 1",
                      func, (int)d->weights_prepacked);
  if (strcmp(adnn_conv2d_algorithm_name(d->algorithm), "unknown") == 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: algorithm %d is not an adnn_conv2d_algorithm",
                      func, (int)d->algorithm);
  adnn_conv2d_algorithm algorithm = d->algorithm;
  if (algorithm != ADNN_CONV2D_ALGO_AUTO) {
    io->forced = "forced by the descriptor";
  } else {
    algorithm = conv2d_algo_from_env();
    if (algorithm != ADNN_CONV2D_ALGO_AUTO) io->forced = "forced by ADNN_CONV2D_ALGO";
  }

  p->x = d->x;
  p->w = d->w;
  p->y = d->y;
  if (d->has_bias) p->bias = d->bias;
  p->N = d->x.dims[0];
  p->C = d->x.dims[1];
  p->H = d->x.dims[2];
  p->W = d->x.dims[3];
  p->K = d->w.dims[0];
  p->R = d->w.dims[2];
  p->S = d->w.dims[3];
  p->P = want[2];
  p->Q = want[3];
  p->groups = d->groups;
  p->Cg = p->C / d->groups;
  p->Kg = p->K / d->groups;
  p->stride_h = d->stride_h;
  p->stride_w = d->stride_w;
  p->pad_top = d->pad_top;
  p->pad_bottom = d->pad_bottom;
  p->pad_left = d->pad_left;
  p->pad_right = d->pad_right;
  p->dilation_h = d->dilation_h;
  p->dilation_w = d->dilation_w;
  p->has_bias = d->has_bias ? 1 : 0;
  p->activation = d->activation;
  p->algorithm = algorithm;
  p->weights_prepacked = d->weights_prepacked;
  if (d->weights_prepacked) io->prepacked_input = 2; /* w, input 1 */
  /* The integer fields: what the problem's definition reads, zero or 1
   * (requant_scale) otherwise, so that unread values never reach a plugin. */
  const int has_scales = requant && d->has_requant_scales ? 1 : 0;
  p->x_zero_point = integer ? d->x_zero_point : 0;
  p->y_zero_point = requant ? d->y_zero_point : 0;
  p->requant_scale = requant && !has_scales ? d->requant_scale : 1.0;
  p->has_requant_scales = has_scales;
  memset(&p->requant_scales, 0, sizeof p->requant_scales);
  p->requant_scales.dtype = ADNN_DTYPE_F32;
  if (has_scales) p->requant_scales = d->requant_scales;
  return ADNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* pool2d                                                                    */
/* ------------------------------------------------------------------------ */

static adnn_status pool2d_params(const char *func, const adnn_pool2d_desc *d, int64_t out[4],
                                 size_t *x_bytes) {
  adnn_status st;
  if ((st = adnn__op_tensor_check(func, "x", &d->x, 4, 4, x_bytes)) != ADNN_STATUS_SUCCESS) return st;
  if (strcmp(adnn_pool_kind_name(d->kind), "unknown") == 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: kind %d is not an adnn_pool_kind", func,
                      (int)d->kind);
  if (d->kernel_h < 1 || d->kernel_w < 1)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: kernel (%lld x %lld) must be >= 1", func,
                      (long long)d->kernel_h, (long long)d->kernel_w);
  if (d->stride_h < 1 || d->stride_w < 1)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: strides (%lld, %lld) must be >= 1", func,
                      (long long)d->stride_h, (long long)d->stride_w);
  const int64_t pads[4] = {d->pad_top, d->pad_bottom, d->pad_left, d->pad_right};
  const int64_t kern[4] = {d->kernel_h, d->kernel_h, d->kernel_w, d->kernel_w};
  static const char *const names[4] = {"pad_top", "pad_bottom", "pad_left", "pad_right"};
  for (int i = 0; i < 4; i++)
    if (pads[i] < 0 || pads[i] > kern[i] / 2)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s (%lld) must be in 0..kernel/2 (%lld), so "
                        "that every window overlaps the image", func, names[i],
                        (long long)pads[i], (long long)(kern[i] / 2));
  int64_t h = d->x.dims[2], w = d->x.dims[3];
  /* Pads are at most half the kernel, so H + kernel bounds every position the
   * kernels compute (window ends included); checked like conv2d's. */
  int64_t ext;
  if (!adnn__add_i64(h, d->kernel_h, &ext) || !adnn__add_i64(w, d->kernel_w, &ext))
    return adnn__fail(ADNN_STATUS_BAD_PARAM_OVERFLOW, "%s: the kernel (%lld x %lld) plus the "
                      "input size overflows", func, (long long)d->kernel_h,
                      (long long)d->kernel_w);
  int64_t span_h = h + d->pad_top + d->pad_bottom - d->kernel_h;
  int64_t span_w = w + d->pad_left + d->pad_right - d->kernel_w;
  if (span_h < 0 || span_w < 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: the kernel (%lld x %lld) is larger than the "
                      "padded input (%lld x %lld)", func, (long long)d->kernel_h,
                      (long long)d->kernel_w, (long long)(span_h + d->kernel_h),
                      (long long)(span_w + d->kernel_w));
  int64_t p, q;
  if (d->ceil_mode) {
    /* ceil(span / stride), and the drop test (p - 1) * stride >= h + pad as
     * p - 1 > (h + pad - 1) / stride: no overflow even with a huge stride. */
    p = span_h / d->stride_h + (span_h % d->stride_h != 0) + 1;
    q = span_w / d->stride_w + (span_w % d->stride_w != 0) + 1;
    /* A last window that starts in the bottom/right padding is dropped. */
    if (p - 1 > (h + d->pad_top - 1) / d->stride_h) p--;
    if (q - 1 > (w + d->pad_left - 1) / d->stride_w) q--;
  } else {
    p = span_h / d->stride_h + 1;
    q = span_w / d->stride_w + 1;
  }
  out[0] = d->x.dims[0];
  out[1] = d->x.dims[1];
  out[2] = p;
  out[3] = q;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn__pool2d_output_dims(const char *func, const adnn_pool2d_desc *d, int64_t out[4]) {
  return pool2d_params(func, d, out, NULL);
}

adnn_status adnn__pool2d_validate(const char *func, const adnn_pool2d_desc *d,
                                  adnn_plugin_pool2d *p, adnn__op_io *io) {
  int64_t want[4];
  adnn_status st;
  if ((st = pool2d_params(func, d, want, &io->input_bytes[0])) != ADNN_STATUS_SUCCESS) return st;
  if ((st = adnn__op_tensor_check(func, "y", &d->y, 4, 4, &io->output_bytes[0])) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_output_dims(func, &d->y, want)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = adnn__op_output_check(func, "y", &d->y)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "x", &d->x, d->x.dtype, io)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "y", &d->y, d->x.dtype, io)) != ADNN_STATUS_SUCCESS) return st;
  io->n_inputs = 1;
  io->n_outputs = 1;
  p->x = d->x;
  p->y = d->y;
  p->N = want[0];
  p->C = want[1];
  p->H = d->x.dims[2];
  p->W = d->x.dims[3];
  p->P = want[2];
  p->Q = want[3];
  p->kind = d->kind;
  p->ceil_mode = d->ceil_mode ? 1 : 0;
  p->kernel_h = d->kernel_h;
  p->kernel_w = d->kernel_w;
  p->stride_h = d->stride_h;
  p->stride_w = d->stride_w;
  p->pad_top = d->pad_top;
  p->pad_bottom = d->pad_bottom;
  p->pad_left = d->pad_left;
  p->pad_right = d->pad_right;
  return ADNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* activation, softmax, batch norm, layer / RMS norm                         */
/* ------------------------------------------------------------------------ */

adnn_status adnn__activation_validate(const char *func, const adnn_activation_desc *d,
                                      adnn_plugin_activation *p, adnn__op_io *io) {
  adnn_status st;
  if ((st = check_elementwise_io(func, &d->x, &d->y, 0, io)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_activation(func, &d->activation)) != ADNN_STATUS_SUCCESS) return st;
  io->n_inputs = 1;
  p->x = d->x;
  p->y = d->y;
  p->count = count_of(&d->x);
  p->activation = d->activation;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn__softmax_validate(const char *func, const adnn_softmax_desc *d,
                                   adnn_plugin_softmax *p, adnn__op_io *io) {
  adnn_status st;
  if ((st = check_elementwise_io(func, &d->x, &d->y, 1, io)) != ADNN_STATUS_SUCCESS) return st;
  if (d->axis < -d->x.rank || d->axis >= d->x.rank)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: axis %d is out of range for rank %d (use "
                      "-%d..%d)", func, (int)d->axis, (int)d->x.rank, (int)d->x.rank,
                      (int)d->x.rank - 1);
  io->n_inputs = 1;
  p->x = d->x;
  p->y = d->y;
  p->axis = d->axis < 0 ? d->axis + d->x.rank : d->axis;
  p->log = d->log ? 1 : 0;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn__batchnorm_validate(const char *func, const adnn_batchnorm_desc *d,
                                     adnn_plugin_batchnorm *p, adnn__op_io *io) {
  adnn_status st;
  if ((st = check_elementwise_io(func, &d->x, &d->y, 2, io)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_epsilon(func, d->epsilon)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_activation(func, &d->activation)) != ADNN_STATUS_SUCCESS) return st;
  /* The parameter vectors are F32 for F16/BF16 data (ADNN_OP_PARAM_DTYPE). */
  size_t vec = (size_t)d->x.dims[1] * adnn_dtype_size(ADNN_OP_PARAM_DTYPE(d->x.dtype));
  for (int i = 1; i < 5; i++) io->input_bytes[i] = vec;
  io->n_inputs = 5;
  p->x = d->x;
  p->y = d->y;
  p->C = d->x.dims[1];
  p->epsilon = d->epsilon;
  p->activation = d->activation;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn__norm_validate(const char *func, const adnn_norm_desc *d, adnn_plugin_norm *p,
                                adnn__op_io *io) {
  adnn_status st;
  if ((st = check_elementwise_io(func, &d->x, &d->y, 1, io)) != ADNN_STATUS_SUCCESS) return st;
  if (strcmp(adnn_norm_kind_name(d->kind), "unknown") == 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: kind %d is not an adnn_norm_kind", func, (int)d->kind);
  if (d->norm_dims < 1 || d->norm_dims > d->x.rank)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: norm_dims (%d) must be in 1..rank (%d)", func,
                      (int)d->norm_dims, (int)d->x.rank);
  if ((st = check_epsilon(func, d->epsilon)) != ADNN_STATUS_SUCCESS) return st;
  int64_t dsize = 1, rows = 1;
  for (int i = 0; i < d->x.rank; i++) {
    if (i < d->x.rank - d->norm_dims) rows *= d->x.dims[i];
    else dsize *= d->x.dims[i];
  }
  /* The gain and bias are F32 for F16/BF16 data (ADNN_OP_PARAM_DTYPE). */
  size_t vec = (size_t)dsize * adnn_dtype_size(ADNN_OP_PARAM_DTYPE(d->x.dtype));
  const int has_gain = d->has_gain ? 1 : 0, has_bias = d->has_bias ? 1 : 0;
  io->n_inputs = 1 + has_gain + has_bias;
  for (int i = 1; i < io->n_inputs; i++) io->input_bytes[i] = vec;
  p->x = d->x;
  p->y = d->y;
  p->kind = d->kind;
  p->norm_dims = d->norm_dims;
  p->D = dsize;
  p->rows = rows;
  p->epsilon = d->epsilon;
  p->has_gain = has_gain;
  p->has_bias = has_bias;
  return ADNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* reduction over axes                                                       */
/* ------------------------------------------------------------------------ */

adnn_status adnn__reduce_validate(const char *func, const adnn_reduce_desc *d,
                                  adnn_plugin_reduce *p, adnn__op_io *io) {
  adnn_status st;
  if ((st = adnn__op_tensor_check(func, "x", &d->x, 1, ADNN_MAX_RANK, &io->input_bytes[0])) != ADNN_STATUS_SUCCESS) return st;
  if (strcmp(adnn_reduce_kind_name(d->kind), "unknown") == 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: kind %d is not an adnn_reduce_kind", func,
                      (int)d->kind);
  const int rank = d->x.rank;
  if (d->axes == 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: axes is 0; set ADNN_REDUCE_AXIS(i) for each "
                      "dim i of x to reduce", func);
  if (d->axes >> rank)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: axes (0x%x) names a dim beyond x's rank %d",
                      func, (unsigned)d->axes, rank);
  /* The shape y must have, and y seen with x's rank. */
  adnn_tensor_desc want, yk = d->x;
  memset(&want, 0, sizeof want);
  want.dtype = d->x.dtype;
  int64_t count = 1, outputs = 1;
  for (int i = 0; i < rank; i++) {
    const int reduced = (d->axes >> i) & 1u;
    if (reduced) count *= d->x.dims[i];
    else outputs *= d->x.dims[i];
    if (!reduced || d->keep_dims) want.dims[want.rank++] = reduced ? 1 : d->x.dims[i];
  }
  if ((st = adnn__op_tensor_check(func, "y", &d->y, 0, ADNN_MAX_RANK, &io->output_bytes[0])) != ADNN_STATUS_SUCCESS) return st;
  if (!adnn__same_dims(&d->y, &want)) {
    char a[160], b[160];
    format_dims(&d->y, a, sizeof a);
    format_dims(&want, b, sizeof b);
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: y has dims %s but reducing x over axes 0x%x "
                      "%s gives %s", func, a, (unsigned)d->axes,
                      d->keep_dims ? "with keep_dims" : "without keep_dims", b);
  }
  if ((st = adnn__op_output_check(func, "y", &d->y)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "x", &d->x, d->x.dtype, io)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "y", &d->y, d->x.dtype, io)) != ADNN_STATUS_SUCCESS) return st;
  for (int i = 0, j = 0; i < rank; i++) {
    const int reduced = (d->axes >> i) & 1u;
    yk.dims[i] = reduced ? 1 : d->x.dims[i];
    yk.strides[i] = reduced ? 0 : d->y.strides[j];
    if (!reduced || d->keep_dims) j++;
  }
  io->n_inputs = 1;
  io->n_outputs = 1;
  p->x = d->x;
  p->y = d->y;
  p->yk = yk;
  p->kind = d->kind;
  p->axes = d->axes;
  p->keep_dims = d->keep_dims ? 1 : 0;
  p->count = count;
  p->outputs = outputs;
  return ADNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* elementwise binary with broadcasting                                      */
/* ------------------------------------------------------------------------ */

/* Right-aligns `t` to rank `rank` for broadcasting: missing leading dims and
 * size-1 dims get stride 0. Fails if a dim is neither 1 nor y's. */
static adnn_status broadcast_to(const char *func, const char *name, adnn_tensor_desc *t,
                                const adnn_tensor_desc *y) {
  adnn_tensor_desc out = *t;
  int shift = y->rank - t->rank;
  out.rank = y->rank;
  for (int i = 0; i < y->rank; i++) {
    int src = i - shift;
    int64_t dim = src >= 0 ? t->dims[src] : 1;
    int64_t stride = src >= 0 ? t->strides[src] : 0;
    if (dim != y->dims[i] && dim != 1) {
      char a[160], b[160];
      format_dims(t, a, sizeof a);
      format_dims(y, b, sizeof b);
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s %s does not broadcast to y %s: dim %d is "
                        "%lld, expected 1 or %lld", func, name, a, b, i, (long long)dim,
                        (long long)y->dims[i]);
    }
    out.dims[i] = y->dims[i];
    out.strides[i] = dim == 1 ? 0 : stride;
  }
  *t = out;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn__binary_validate(const char *func, const adnn_binary_desc *d,
                                  adnn_plugin_binary *p, adnn__op_io *io) {
  adnn_status st;
  if ((st = adnn__op_tensor_check(func, "a", &d->a, 0, ADNN_MAX_RANK, &io->input_bytes[0])) != ADNN_STATUS_SUCCESS) return st;
  if ((st = adnn__op_tensor_check(func, "b", &d->b, 0, ADNN_MAX_RANK, &io->input_bytes[1])) != ADNN_STATUS_SUCCESS) return st;
  if ((st = adnn__op_tensor_check(func, "y", &d->y, 0, ADNN_MAX_RANK, &io->output_bytes[0])) != ADNN_STATUS_SUCCESS) return st;
  if ((st = adnn__op_output_check(func, "y", &d->y)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "a", &d->a, d->a.dtype, io)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "b", &d->b, d->a.dtype, io)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dtype(func, "y", &d->y, d->a.dtype, io)) != ADNN_STATUS_SUCCESS) return st;
  if (strcmp(adnn_binary_op_name(d->op), "unknown") == 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: op %d is not an adnn_binary_op", func, (int)d->op);
  if (!isfinite(d->alpha) || !isfinite(d->beta))
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: alpha (%g) and beta (%g) must be finite", func,
                      d->alpha, d->beta);
  int rank = d->a.rank > d->b.rank ? d->a.rank : d->b.rank;
  if (d->y.rank != rank)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: y has rank %d but broadcasting a (rank %d) and "
                      "b (rank %d) gives rank %d", func, (int)d->y.rank, (int)d->a.rank,
                      (int)d->b.rank, rank);
  if (adnn__same_layout(&d->a, &d->y)) io->inplace_inputs |= 1u << 0;
  if (adnn__same_layout(&d->b, &d->y)) io->inplace_inputs |= 1u << 1;
  adnn_tensor_desc a = d->a, b = d->b;
  if ((st = broadcast_to(func, "a", &a, &d->y)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = broadcast_to(func, "b", &b, &d->y)) != ADNN_STATUS_SUCCESS) return st;
  /* y must be exactly the broadcast shape: a dim of y > 1 needs a or b to have
   * it (broadcast_to accepted 1 on both sides). */
  for (int i = 0; i < rank; i++) {
    int ia = i - (rank - d->a.rank), ib = i - (rank - d->b.rank);
    int64_t da = ia >= 0 ? d->a.dims[ia] : 1, db = ib >= 0 ? d->b.dims[ib] : 1;
    if (d->y.dims[i] != (da > db ? da : db)) {
      char ya[160];
      format_dims(&d->y, ya, sizeof ya);
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: y %s is not the broadcast shape of a and b: "
                        "dim %d is %lld but a and b have %lld and %lld there", func, ya, i,
                        (long long)d->y.dims[i], (long long)da, (long long)db);
    }
  }
  io->n_inputs = 2;
  io->n_outputs = 1;
  p->a = a;
  p->b = b;
  p->y = d->y;
  p->op = d->op;
  p->alpha = d->alpha;
  p->beta = d->beta;
  return ADNN_STATUS_SUCCESS;
}
