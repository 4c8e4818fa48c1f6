/*
 * Validation of the attention descriptors (see op_validate.h):
 * adnn_attention_desc (manifest row 21) and adnn_attention_backward_desc
 * (row 22). Each validator checks everything that does not need the device
 * and fills the plugin's normalized problem (adnn/plugin.h): the bias
 * brought to rank 4 [B, H, Sq, Skv] with stride 0 on its broadcast dims, the
 * scale resolved (0 becomes 1 / sqrt(D)), group = H / Hkv, the flags 0 or 1.
 *
 * The backward validator reads the forward descriptor by the struct_size
 * rule and checks it with the forward validator, whose messages it prefixes
 * with "desc->forward:" so that the caller knows which descriptor is wrong;
 * it then requires has_lse (the backward pass needs the row log-sum-exp) and
 * that the gradients, which take q's, k's and v's layouts, can be written.
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "core/op_validate.h"

/* Until manifest row 22 declares it through op_validate.h, the backward
 * validator is declared here (the same prototype, so both may coexist). */
adnn_status adnn__attention_backward_validate(const char *func,
                                              const adnn_attention_backward_desc *d,
                                              adnn_plugin_attention_backward *p,
                                              adnn__op_io *io);

/* Every floating-point tensor of the op has q's dtype. */
static adnn_status check_same_dtype(const char *func, const char *name,
                                    const adnn_tensor_desc *t, adnn_dtype want) {
  if (t->dtype != want)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s has dtype %s but q has %s; q, k, v, o and "
                      "bias share one dtype", func, name, adnn_dtype_name(t->dtype),
                      adnn_dtype_name(want));
  return ADNN_STATUS_SUCCESS;
}

static void format_dims(const adnn_tensor_desc *t, char *buf, size_t size) {
  size_t used = (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < t->rank && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? ", " : "",
                             (long long)t->dims[i]);
  if (used < size) snprintf(buf + used, size - used, "]");
}

/* t must have exactly the dims want[0..rank) ("q's B" etc. named in why). */
static adnn_status check_dims(const char *func, const char *name, const adnn_tensor_desc *t,
                              const int64_t *want, const char *const *what) {
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] != want[i]) {
      char got[160];
      format_dims(t, got, sizeof got);
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s has dims %s but dims[%d] must be %s "
                        "(%lld)", func, name, got, i, what[i], (long long)want[i]);
    }
  return ADNN_STATUS_SUCCESS;
}

/* Right-aligns the bias to [B, H, Sq, Skv]: missing leading dims and dims of
 * 1 get stride 0; any other dim must be the target's. */
static adnn_status broadcast_bias(const char *func, const adnn_tensor_desc *t,
                                  const int64_t target[4], adnn_tensor_desc *out) {
  static const char *const names[4] = {"B", "H", "Sq", "Skv"};
  *out = *t;
  out->rank = 4;
  const int shift = 4 - t->rank;
  for (int i = 0; i < 4; i++) {
    const int src = i - shift;
    const int64_t dim = src >= 0 ? t->dims[src] : 1;
    const int64_t stride = src >= 0 ? t->strides[src] : 0;
    if (dim != target[i] && dim != 1) {
      char got[160];
      format_dims(t, got, sizeof got);
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: bias %s does not broadcast to [B, H, Sq, "
                        "Skv] = [%lld, %lld, %lld, %lld]: its dim for %s is %lld, expected 1 or "
                        "%lld", func, got, (long long)target[0], (long long)target[1],
                        (long long)target[2], (long long)target[3], names[i], (long long)dim,
                        (long long)target[i]);
    }
    out->dims[i] = target[i];
    out->strides[i] = dim == 1 ? 0 : stride;
  }
  for (int i = 4; i < ADNN_MAX_RANK; i++) out->dims[i] = out->strides[i] = 0;
  return ADNN_STATUS_SUCCESS;
}

/* A rank-0 descriptor of the op's dtype, for the problem's absent tensors. */
static adnn_tensor_desc absent(adnn_dtype dt) {
  adnn_tensor_desc t;
  memset(&t, 0, sizeof t);
  t.dtype = dt;
  return t;
}

/* ------------------------------------------------------------------------ */
/* attention: inputs {q, k, v[, bias][, key_lengths]}, outputs {o[, lse]}    */
/* ------------------------------------------------------------------------ */

adnn_status adnn__attention_validate(const char *func, const adnn_attention_desc *d,
                                     adnn_plugin_attention *p, adnn__op_io *io) {
  adnn_status st;
  size_t qb, kb, vb, ob, lb = 0, bb = 0, klb = 0;
  if ((st = adnn__op_tensor_check(func, "q", &d->q, 4, 4, &qb)) != ADNN_STATUS_SUCCESS) return st;
  const adnn_dtype dt = d->q.dtype;
  if ((st = adnn__op_dtype_supported(func, "q dtype", dt, io)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = adnn__op_tensor_check(func, "k", &d->k, 4, 4, &kb)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = adnn__op_tensor_check(func, "v", &d->v, 4, 4, &vb)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = adnn__op_tensor_check(func, "o", &d->o, 4, 4, &ob)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_same_dtype(func, "k", &d->k, dt)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_same_dtype(func, "v", &d->v, dt)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_same_dtype(func, "o", &d->o, dt)) != ADNN_STATUS_SUCCESS) return st;
  const int64_t B = d->q.dims[0], H = d->q.dims[1], Sq = d->q.dims[2], D = d->q.dims[3];
  const int64_t Hkv = d->k.dims[1], Skv = d->k.dims[2], Dv = d->v.dims[3];
  {
    const int64_t kwant[4] = {B, Hkv, Skv, D};
    static const char *const kwhat[4] = {"q's batch size B", "Hkv", "Skv",
                                         "q's head size D (dims[3])"};
    if ((st = check_dims(func, "k", &d->k, kwant, kwhat)) != ADNN_STATUS_SUCCESS) return st;
  }
  if (H % Hkv != 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: q has H = %lld heads, not a multiple of k's "
                      "Hkv = %lld (grouped-query attention shares each key/value head among "
                      "H / Hkv query heads)", func, (long long)H, (long long)Hkv);
  {
    const int64_t vwant[4] = {B, Hkv, Skv, Dv};
    static const char *const vwhat[4] = {"q's batch size B", "k's head count Hkv",
                                         "k's key count Skv", "Dv"};
    if ((st = check_dims(func, "v", &d->v, vwant, vwhat)) != ADNN_STATUS_SUCCESS) return st;
    const int64_t owant[4] = {B, H, Sq, Dv};
    static const char *const owhat[4] = {"q's batch size B", "q's head count H",
                                         "q's query count Sq", "v's head size Dv"};
    if ((st = check_dims(func, "o", &d->o, owant, owhat)) != ADNN_STATUS_SUCCESS) return st;
  }
  if ((st = adnn__op_output_check(func, "o", &d->o)) != ADNN_STATUS_SUCCESS) return st;
  const int has_lse = d->has_lse != 0, has_bias = d->has_bias != 0;
  const int has_kl = d->has_key_lengths != 0;
  if (has_lse) {
    if ((st = adnn__op_tensor_check(func, "lse", &d->lse, 3, 3, &lb)) != ADNN_STATUS_SUCCESS) return st;
    /* The log-sum-exp is a statistic: F32 for F16/BF16 q (ADNN_OP_PARAM_DTYPE). */
    if (d->lse.dtype != ADNN_OP_PARAM_DTYPE(dt))
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: lse has dtype %s but must be %s for q of "
                        "dtype %s (q's dtype, F32 for F16 and BF16 q)", func,
                        adnn_dtype_name(d->lse.dtype), adnn_dtype_name(ADNN_OP_PARAM_DTYPE(dt)),
                        adnn_dtype_name(dt));
    const int64_t lwant[3] = {B, H, Sq};
    static const char *const lwhat[3] = {"q's batch size B", "q's head count H",
                                         "q's query count Sq"};
    if ((st = check_dims(func, "lse", &d->lse, lwant, lwhat)) != ADNN_STATUS_SUCCESS) return st;
    if ((st = adnn__op_output_check(func, "lse", &d->lse)) != ADNN_STATUS_SUCCESS) return st;
  }
  adnn_tensor_desc bias = absent(dt);
  if (has_bias) {
    if ((st = adnn__op_tensor_check(func, "bias", &d->bias, 1, 4, &bb)) != ADNN_STATUS_SUCCESS) return st;
    if ((st = check_same_dtype(func, "bias", &d->bias, dt)) != ADNN_STATUS_SUCCESS) return st;
    const int64_t target[4] = {B, H, Sq, Skv};
    if ((st = broadcast_bias(func, &d->bias, target, &bias)) != ADNN_STATUS_SUCCESS) return st;
  }
  adnn_tensor_desc kl = absent(ADNN_DTYPE_I32);
  if (has_kl) {
    if ((st = adnn__op_tensor_check(func, "key_lengths", &d->key_lengths, 1, 1, &klb)) !=
        ADNN_STATUS_SUCCESS)
      return st;
    if (d->key_lengths.dtype != ADNN_DTYPE_I32)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: key_lengths has dtype %s; key lengths are "
                        "i32 (ADNN_DTYPE_I32)", func, adnn_dtype_name(d->key_lengths.dtype));
    if (d->key_lengths.dims[0] != B)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: key_lengths has %lld elements but q has a "
                        "batch of B = %lld (one length per batch)", func,
                        (long long)d->key_lengths.dims[0], (long long)B);
    kl = d->key_lengths;
  }
  if (!isfinite(d->scale) || d->scale < 0.0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: scale (%g) must be finite and >= 0 (0 means "
                      "1 / sqrt(D))", func, d->scale);
  if (d->q.dtype != ADNN_DTYPE_F64 && d->scale > FLT_MAX)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: scale (%g) is beyond the F32 range (the F32 "
                      "kernels scale in float)", func, d->scale);

  int n_in = 3;
  io->input_bytes[0] = qb;
  io->input_bytes[1] = kb;
  io->input_bytes[2] = vb;
  if (has_bias) io->input_bytes[n_in++] = bb;
  if (has_kl) io->input_bytes[n_in++] = klb;
  io->n_inputs = n_in;
  io->n_outputs = has_lse ? 2 : 1;
  io->output_bytes[0] = ob;
  if (has_lse) io->output_bytes[1] = lb;
  io->inplace_inputs = 0;

  p->q = d->q;
  p->k = d->k;
  p->v = d->v;
  p->o = d->o;
  p->lse = has_lse ? d->lse : absent(ADNN_OP_PARAM_DTYPE(dt));
  p->bias = bias;
  p->key_lengths = kl;
  p->B = B;
  p->H = H;
  p->Hkv = Hkv;
  p->group = H / Hkv;
  p->Sq = Sq;
  p->Skv = Skv;
  p->D = D;
  p->Dv = Dv;
  p->scale = d->scale == 0.0 ? 1.0 / sqrt((double)D) : d->scale;
  p->causal = d->causal != 0;
  p->has_bias = has_bias;
  p->has_key_lengths = has_kl;
  p->has_lse = has_lse;
  return ADNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* attention backward: inputs {q, k, v, o, do, lse[, bias][, key_lengths]},  */
/* outputs {dq, dk, dv}                                                      */
/* ------------------------------------------------------------------------ */

adnn_status adnn__attention_backward_validate(const char *func,
                                              const adnn_attention_backward_desc *d,
                                              adnn_plugin_attention_backward *p,
                                              adnn__op_io *io) {
  if (d->forward == NULL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: desc->forward is NULL", func);
  adnn_attention_desc fwd;
  adnn_status st =
      adnn__read_op_desc(func, "desc->forward", ADNN_PLUGIN_OP_ATTENTION, d->forward, &fwd);
  if (st != ADNN_STATUS_SUCCESS) return st;
  char ffunc[192];
  snprintf(ffunc, sizeof ffunc, "%s: desc->forward", func);
  adnn__op_io fio;
  adnn__op_io_init(&fio);
  fio.dtypes = io->dtypes;
  if ((st = adnn__attention_validate(ffunc, &fwd, &p->fwd, &fio)) != ADNN_STATUS_SUCCESS)
    return st;
  if (!p->fwd.has_lse)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: desc->forward has has_lse = 0; the backward "
                      "pass needs the forward's row log-sum-exp (lse)", func);
  /* dq, dk and dv take q's, k's and v's layouts and are written. */
  if ((st = adnn__op_output_check(func, "dq (desc->forward->q's layout)", &fwd.q)) != ADNN_STATUS_SUCCESS)
    return st;
  if ((st = adnn__op_output_check(func, "dk (desc->forward->k's layout)", &fwd.k)) != ADNN_STATUS_SUCCESS)
    return st;
  if ((st = adnn__op_output_check(func, "dv (desc->forward->v's layout)", &fwd.v)) != ADNN_STATUS_SUCCESS)
    return st;
  p->fwd.struct_size = (uint32_t)sizeof p->fwd;
  io->dtype = fio.dtype;
  /* fio's inputs: q, k, v[, bias][, key_lengths]; outputs: o, lse. */
  int n = 0;
  io->input_bytes[n++] = fio.input_bytes[0];  /* q */
  io->input_bytes[n++] = fio.input_bytes[1];  /* k */
  io->input_bytes[n++] = fio.input_bytes[2];  /* v */
  io->input_bytes[n++] = fio.output_bytes[0]; /* o */
  io->input_bytes[n++] = fio.output_bytes[0]; /* do: o's layout */
  io->input_bytes[n++] = fio.output_bytes[1]; /* lse */
  for (int i = 3; i < fio.n_inputs; i++) io->input_bytes[n++] = fio.input_bytes[i];
  io->n_inputs = n;
  io->n_outputs = 3;
  io->output_bytes[0] = fio.input_bytes[0]; /* dq: q's layout */
  io->output_bytes[1] = fio.input_bytes[1]; /* dk: k's layout */
  io->output_bytes[2] = fio.input_bytes[2]; /* dv: v's layout */
  io->inplace_inputs = 0;
  return ADNN_STATUS_SUCCESS;
}
