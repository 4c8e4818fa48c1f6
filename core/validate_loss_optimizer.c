/*
 * Validation of the loss and optimizer descriptors (see op_validate.h):
 * softmax cross-entropy, its backward, and the fused optimizer step. Each
 * validator checks everything that does not need the device and fills the
 * plugin's normalized problem; messages name the public function and the
 * field.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/op_validate.h"


/* ------------------------------------------------------------------------ */
/* softmax cross-entropy                                                     */
/* ------------------------------------------------------------------------ */

adnn_status adnn__softmax_cross_entropy_validate(const char *func,
                                                 const adnn_softmax_cross_entropy_desc *d,
                                                 adnn_plugin_softmax_cross_entropy *p,
                                                 adnn__op_io *io) {
  adnn_status st;
  size_t lb, tb, ob;
  if ((st = adnn__op_tensor_check(func, "logits", &d->logits, 2, 2, &lb)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = adnn__op_dtype_supported(func, "logits dtype", d->logits.dtype, io)) != ADNN_STATUS_SUCCESS) return st;
  const int64_t N = d->logits.dims[0], C = d->logits.dims[1];
  if ((st = adnn__op_tensor_check(func, "labels", &d->labels, 1, 1, &tb)) != ADNN_STATUS_SUCCESS) return st;
  if (d->labels.dtype != ADNN_DTYPE_I32)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: labels has dtype %s; class labels must be i32 "
                      "(ADNN_DTYPE_I32)", func, adnn_dtype_name(d->labels.dtype));
  if (d->labels.dims[0] != N)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: labels has %lld elements but logits has %lld "
                      "rows (dims[0])", func, (long long)d->labels.dims[0], (long long)N);
  if (strcmp(adnn_loss_reduction_name(d->reduction), "unknown") == 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: reduction %d is not an adnn_loss_reduction",
                      func, (int)d->reduction);
  const int none = d->reduction == ADNN_LOSS_REDUCTION_NONE;
  if ((st = adnn__op_tensor_check(func, "loss", &d->loss, none ? 1 : 0, none ? 1 : 0, &ob)) != ADNN_STATUS_SUCCESS) {
    if (d->loss.rank != (none ? 1 : 0))
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: loss has rank %d but reduction %s gives %s",
                        func, (int)d->loss.rank, adnn_loss_reduction_name(d->reduction),
                        none ? "one loss per sample (rank 1, [N])" : "a scalar (rank 0)");
    return st;
  }
  if (none && d->loss.dims[0] != N)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: loss has %lld elements but reduction none "
                      "gives one per sample (%lld)", func, (long long)d->loss.dims[0],
                      (long long)N);
  if (d->loss.dtype != d->logits.dtype)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: loss has dtype %s but logits has %s; the loss "
                      "has the logits' dtype", func, adnn_dtype_name(d->loss.dtype),
                      adnn_dtype_name(d->logits.dtype));
  if ((st = adnn__op_output_check(func, "loss", &d->loss)) != ADNN_STATUS_SUCCESS) return st;
  io->n_inputs = 2;
  io->n_outputs = 1;
  io->input_bytes[0] = lb;
  io->input_bytes[1] = tb;
  io->output_bytes[0] = ob;
  p->logits = d->logits;
  p->labels = d->labels;
  p->loss = d->loss;
  p->N = N;
  p->C = C;
  p->reduction = d->reduction;
  p->ignore_index = d->ignore_index;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn__softmax_cross_entropy_backward_validate(
    const char *func, const adnn_softmax_cross_entropy_backward_desc *d,
    adnn_plugin_softmax_cross_entropy_backward *p, adnn__op_io *io) {
  if (d->forward == NULL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: forward is NULL", func);
  adnn_softmax_cross_entropy_desc fwd;
  adnn_status st = adnn__read_op_desc(func, "desc->forward", ADNN_PLUGIN_OP_SOFTMAX_CROSS_ENTROPY,
                                      d->forward, &fwd);
  if (st != ADNN_STATUS_SUCCESS) return st;
  adnn__op_io fio;
  adnn__op_io_init(&fio);
  fio.dtypes = io->dtypes;
  if ((st = adnn__softmax_cross_entropy_validate(func, &fwd, &p->fwd, &fio)) != ADNN_STATUS_SUCCESS)
    return st;
  /* dlogits has the logits' layout and is written: its strides must not
   * make elements share memory (an input's may). */
  if ((st = adnn__op_output_check(func, "dlogits (forward->logits's layout)", &fwd.logits)) !=
      ADNN_STATUS_SUCCESS)
    return st;
  p->fwd.struct_size = (uint32_t)sizeof p->fwd;
  io->dtype = fio.dtype;
  io->n_inputs = 3;
  io->n_outputs = 1;
  io->input_bytes[0] = fio.input_bytes[0];  /* logits */
  io->input_bytes[1] = fio.input_bytes[1];  /* labels */
  io->input_bytes[2] = fio.output_bytes[0]; /* dloss: the loss's layout */
  io->output_bytes[0] = fio.input_bytes[0]; /* dlogits: the logits' layout */
  return ADNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* optimizer                                                                 */
/* ------------------------------------------------------------------------ */

static adnn_status check_hyper(const char *func, const char *name, double v, double lo,
                               double hi, int hi_open) {
  if (!isfinite(v) || v < lo || (hi_open ? v >= hi : v > hi)) {
    if (hi == INFINITY)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s (%g) must be finite and >= %g", func, name,
                        v, lo);
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: %s (%g) must be in [%g, %g%s", func, name, v, lo,
                      hi, hi_open ? ")" : "]");
  }
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn__optimizer_validate(const char *func, const adnn_optimizer_desc *d,
                                     adnn_plugin_optimizer *p, adnn__op_io *io) {
  adnn_status st;
  if (strcmp(adnn_optimizer_kind_name(d->kind), "unknown") == 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: kind %d is not an adnn_optimizer_kind", func,
                      (int)d->kind);
  if (d->dtype != ADNN_DTYPE_F32 && d->dtype != ADNN_DTYPE_F64) {
    if (adnn_dtype_size(d->dtype) == 0)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: dtype %d is not an adnn_dtype", func,
                        (int)d->dtype);
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: dtype %s is not supported; parameters and "
                      "states are f32 or f64", func, adnn_dtype_name(d->dtype));
  }
  if ((st = adnn__op_dtype_supported(func, "the dtype", d->dtype, io)) != ADNN_STATUS_SUCCESS) return st;
  /* Master weights: F32 parameters and states, F16/BF16 gradients and model
   * copies. 0 is no dtype, so a descriptor of before 0.2.0 (read with the
   * appended field zeroed) asks for none. */
  const adnn_dtype md = d->model_dtype;
  if (md != 0) {
    if (md != ADNN_DTYPE_F16 && md != ADNN_DTYPE_BF16) {
      if (adnn_dtype_size(md) == 0)
        return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: model_dtype %d is not an adnn_dtype (0 "
                          "for no model copies)", func, (int)md);
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: model_dtype %s is not supported; model "
                        "copies of F32 master weights are f16 or bf16 (0 for none)", func,
                        adnn_dtype_name(md));
    }
    if (d->dtype != ADNN_DTYPE_F32)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: model_dtype %s needs dtype f32 (the master "
                        "weights and states), not %s", func, adnn_dtype_name(md),
                        adnn_dtype_name(d->dtype));
  }
  const int copies = md != 0;
  if (d->tensor_count == 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: tensor_count is 0; an optimizer step needs at "
                      "least one parameter tensor", func);
  if (d->sizes == NULL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: sizes is NULL (tensor_count %zu element "
                      "counts are needed)", func, d->tensor_count);
  const int sgd = d->kind == ADNN_OPTIMIZER_SGD;
  if ((st = check_hyper(func, "lr", d->lr, 0.0, INFINITY, 0)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_hyper(func, "weight_decay", d->weight_decay, 0.0, INFINITY, 0)) !=
      ADNN_STATUS_SUCCESS)
    return st;
  if (sgd) {
    if ((st = check_hyper(func, "momentum", d->momentum, 0.0, INFINITY, 0)) != ADNN_STATUS_SUCCESS)
      return st;
    if ((st = check_hyper(func, "dampening", d->dampening, 0.0, INFINITY, 0)) !=
        ADNN_STATUS_SUCCESS)
      return st;
    if (d->nesterov && (d->momentum == 0.0 || d->dampening != 0.0))
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: nesterov needs momentum > 0 and dampening 0 "
                        "(momentum %g, dampening %g)", func, d->momentum, d->dampening);
  } else {
    if ((st = check_hyper(func, "beta1", d->beta1, 0.0, 1.0, 1)) != ADNN_STATUS_SUCCESS) return st;
    if ((st = check_hyper(func, "beta2", d->beta2, 0.0, 1.0, 1)) != ADNN_STATUS_SUCCESS) return st;
    if (!(d->epsilon > 0.0) || !isfinite(d->epsilon))
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: epsilon (%g) must be finite and > 0", func,
                        d->epsilon);
  }
  const size_t T = d->tensor_count;
  const int states = sgd ? (d->momentum != 0.0 ? 1 : 0) : 2;
  /* Inputs and outputs: T gradients; T parameters, T per state and, with
   * master weights, T model copies. */
  const size_t per_tensor = (size_t)(1 + states + copies);
  if (T > (size_t)INT32_MAX / per_tensor)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_OVERFLOW, "%s: tensor_count (%zu) is too large", func,
                      T);
  const size_t es = adnn_dtype_size(d->dtype);
  const size_t ges = copies ? adnn_dtype_size(md) : es; /* gradients and copies */
  st = adnn__op_io_reserve(func, io, T, T * per_tensor);
  if (st != ADNN_STATUS_SUCCESS) return st;
  /* The problem's sizes must outlive the descriptor: the plan owns a copy. */
  int64_t *sizes = calloc(T, sizeof *sizes);
  if (sizes == NULL) return adnn__fail(ADNN_STATUS_OUT_OF_MEMORY, "%s: out of host memory", func);
  io->owned = sizes;
  for (size_t i = 0; i < T; i++) {
    const int64_t n = d->sizes[i];
    if (n < 1)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: sizes[%zu] is %lld; every tensor needs >= 1 "
                        "element", func, i, (long long)n);
    if ((uint64_t)n > (uint64_t)(SIZE_MAX / es) || (uint64_t)n > (uint64_t)(INT64_MAX / 8))
      return adnn__fail(ADNN_STATUS_BAD_PARAM_OVERFLOW, "%s: sizes[%zu] (%lld elements) "
                        "overflows a byte size", func, i, (long long)n);
    sizes[i] = n;
    const size_t bytes = (size_t)n * es;
    io->input_bytes[i] = (size_t)n * ges;
    for (int k = 0; k <= states; k++) io->output_bytes[(size_t)k * T + i] = bytes;
    if (copies) io->output_bytes[(size_t)(1 + states) * T + i] = (size_t)n * ges;
  }
  io->n_inputs = (int32_t)T;
  io->n_outputs = (int32_t)(T * per_tensor);
  p->kind = d->kind;
  p->tensor_count = (int64_t)T;
  p->sizes = sizes;
  p->lr = d->lr;
  p->step = 1;
  p->weight_decay = d->weight_decay;
  p->momentum = sgd ? d->momentum : 0.0;
  p->dampening = sgd ? d->dampening : 0.0;
  p->nesterov = sgd && d->nesterov ? 1 : 0;
  p->beta1 = sgd ? 0.0 : d->beta1;
  p->beta2 = sgd ? 0.0 : d->beta2;
  p->epsilon = sgd ? 0.0 : d->epsilon;
  p->dtype = d->dtype;
  p->model_dtype = md;
  if (copies) {
    io->min_plugin_abi = (2u << 16) | 7u;
    io->min_plugin_abi_what = "model_dtype (F32 master weights with model copies)";
  }
  return ADNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* The optimizer's per-step values                                           */
/* ------------------------------------------------------------------------ */

/* The plugins read lr and step from the plan's problem at every execution
 * (adnn_plugin_optimizer says so), so changing them there is all it takes. */
adnn_status adnn_plan_set_optimizer_step(adnn_plan *plan, double lr, int64_t step) {
  const char *func = "adnn_plan_set_optimizer_step";
  if (plan == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: plan is NULL", func);
  adnn_plugin_op_kind kind;
  void *problem = NULL;
  adnn_status st = adnn__plan_problem(func, plan, &kind, &problem);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (kind != ADNN_PLUGIN_OP_OPTIMIZER)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: the plan is a %s plan, not an optimizer plan "
                      "(adnn_plan_create_optimizer)", func, adnn_plugin_op_name(kind));
  if (!isfinite(lr) || lr < 0.0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: lr (%g) must be finite and >= 0", func, lr);
  if (step < 1)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: step (%lld) must be >= 1 (1 is the first step)",
                      func, (long long)step);
  adnn_plugin_optimizer *p = problem;
  p->lr = lr;
  p->step = step;
  return ADNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* loss scaling                                                              */
/* ------------------------------------------------------------------------ */

adnn_status adnn__loss_scale_validate(const char *func, const adnn_loss_scale_desc *d,
                                      adnn_plugin_loss_scale *p, adnn__op_io *io) {
  if (strcmp(adnn_loss_scale_kind_name(d->kind), "unknown") == 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: kind %d is not an adnn_loss_scale_kind "
                      "(scale or unscale)", func, (int)d->kind);
  if (adnn_dtype_size(d->dtype) == 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: dtype %d is not an adnn_dtype", func,
                      (int)d->dtype);
  if (!(io->dtypes & ADNN_OP_DTYPE(d->dtype)))
    return adnn__fail(ADNN_STATUS_NOT_SUPPORTED, "%s: dtype %s is not supported; the tensors "
                      "are f32, f64, f16 or bf16", func, adnn_dtype_name(d->dtype));
  io->dtype = d->dtype;
  if (d->tensor_count == 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: tensor_count is 0; loss scaling needs at "
                      "least one tensor", func);
  if (d->sizes == NULL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: sizes is NULL (tensor_count %zu element "
                      "counts are needed)", func, d->tensor_count);
  const size_t T = d->tensor_count;
  /* Outputs: the T tensors and found_inf. */
  if (T > (size_t)INT32_MAX - 1)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_OVERFLOW, "%s: tensor_count (%zu) is too large", func,
                      T);
  const size_t es = adnn_dtype_size(d->dtype);
  adnn_status st = adnn__op_io_reserve(func, io, 1, T + 1);
  if (st != ADNN_STATUS_SUCCESS) return st;
  int64_t *sizes = calloc(T, sizeof *sizes);
  if (sizes == NULL) return adnn__fail(ADNN_STATUS_OUT_OF_MEMORY, "%s: out of host memory", func);
  io->owned = sizes;
  for (size_t i = 0; i < T; i++) {
    const int64_t n = d->sizes[i];
    if (n < 1)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: sizes[%zu] is %lld; every tensor needs >= 1 "
                        "element", func, i, (long long)n);
    if ((uint64_t)n > (uint64_t)(SIZE_MAX / es) || (uint64_t)n > (uint64_t)(INT64_MAX / 8))
      return adnn__fail(ADNN_STATUS_BAD_PARAM_OVERFLOW, "%s: sizes[%zu] (%lld elements) "
                        "overflows a byte size", func, i, (long long)n);
    sizes[i] = n;
    io->output_bytes[i] = (size_t)n * es;
  }
  io->output_bytes[T] = es;           /* found_inf */
  io->input_bytes[0] = sizeof(float); /* scale */
  io->n_inputs = 1;
  io->n_outputs = (int32_t)(T + 1);
  p->kind = d->kind;
  p->dtype = d->dtype;
  p->tensor_count = (int64_t)T;
  p->sizes = sizes;
  /* A 2.6 plugin has no loss_scale slot of its own (its op kinds end at 25)
   * and would refuse the kind; the gate makes the message say why. */
  io->min_plugin_abi = (2u << 16) | 7u;
  io->min_plugin_abi_what = "loss_scale (op kind 26)";
  return ADNN_STATUS_SUCCESS;
}
