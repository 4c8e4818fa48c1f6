/*
 * Validation of the normalization training ops (doc/ops.md, "Training"):
 * batch-norm training (forward with batch statistics), batch-norm backward,
 * and layer / RMS norm backward. Each reads the forward descriptor it points
 * to by the struct_size rule, validates it exactly as the forward op's plan
 * creation would (so the same messages name the same fields), embeds the
 * resulting forward problem, and then checks what the training op adds: the
 * activation must be identity, at least two elements per channel, a
 * momentum in [0, 1], and output layouts that give every element its own
 * address. The execute spans of every input and output are recorded for the
 * core's range and overlap checks.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "core/op_validate.h"

/* The forward descriptor of a backward op, read by the struct_size rule into
 * *dst (which receives the *_init defaults first). */
static adnn_status read_forward(const char *func, adnn_plugin_op_kind kind, const void *src,
                                void *dst) {
  return adnn__read_op_desc(func, "desc->forward", kind, src, dst);
}

/* A gradient output laid out like a forward tensor must give every element
 * its own address (a forward input may broadcast with stride 0; its
 * gradient cannot). */
static adnn_status check_gradient_layout(const char *func, const char *name, const char *like,
                                         const adnn_tensor_desc *t) {
  if (!adnn__tensor_strides_disjoint(t))
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "%s: %s has forward %s's layout, whose strides make different elements "
                      "share memory; an output needs distinct addresses", func, name, like);
  return ADNN_STATUS_SUCCESS;
}

static int64_t elements_per_channel(const adnn_tensor_desc *x) {
  int64_t n = x->dims[0];
  for (int i = 2; i < x->rank; i++) n *= x->dims[i];
  return n;
}

/* The checks shared by batch-norm training and backward on the forward
 * descriptor: valid as for adnn_plan_create_batchnorm, identity activation,
 * at least two elements per channel. Fills *fwd and the forward's io. */
static adnn_status batchnorm_forward(const char *func, const adnn_batchnorm_desc *forward,
                                     adnn_batchnorm_desc *d, adnn_plugin_batchnorm *fwd,
                                     adnn__op_io *fio, int64_t *count) {
  adnn_status st = read_forward(func, ADNN_PLUGIN_OP_BATCHNORM, forward, d);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if ((st = adnn__batchnorm_validate(func, d, fwd, fio)) != ADNN_STATUS_SUCCESS) return st;
  if (d->activation.kind != ADNN_ACTIVATION_IDENTITY)
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "%s: the forward descriptor's activation is %s; batch-norm training and "
                      "its backward pass take identity only (run the activation and its "
                      "backward as separate ops)", func, adnn_activation_name(d->activation.kind));
  *count = elements_per_channel(&d->x);
  if (*count < 2)
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "%s: x has %lld element(s) per channel (N times the spatial size); batch "
                      "statistics need at least 2 (the unbiased variance divides by n - 1)",
                      func, (long long)*count);
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn__batchnorm_training_validate(const char *func,
                                              const adnn_batchnorm_training_desc *d,
                                              adnn_plugin_batchnorm_training *p, adnn__op_io *io) {
  adnn_batchnorm_desc fd;
  adnn__op_io fio;
  adnn__op_io_init(&fio);
  fio.dtypes = io->dtypes;
  int64_t count = 0;
  adnn_status st = batchnorm_forward(func, d->forward, &fd, &p->fwd, &fio, &count);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (!(d->momentum >= 0.0 && d->momentum <= 1.0))
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: momentum (%g) must be in [0, 1]", func,
                      d->momentum);
  const size_t vec = fio.input_bytes[1];
  io->dtype = fio.dtype;
  io->n_inputs = 3; /* x, scale, shift */
  io->input_bytes[0] = fio.input_bytes[0];
  io->input_bytes[1] = io->input_bytes[2] = vec;
  io->n_outputs = 5; /* y, saved_mean, saved_inv_std, running_mean, running_var */
  io->output_bytes[0] = fio.output_bytes[0];
  for (int i = 1; i < 5; i++) io->output_bytes[i] = vec;
  io->inplace_inputs = fio.inplace_inputs & 1u; /* y may be exactly x */
  p->fwd.struct_size = (uint32_t)sizeof p->fwd;
  p->momentum = d->momentum;
  p->count = count;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn__batchnorm_backward_validate(const char *func,
                                              const adnn_batchnorm_backward_desc *d,
                                              adnn_plugin_batchnorm_backward *p, adnn__op_io *io) {
  adnn_batchnorm_desc fd;
  adnn__op_io fio;
  adnn__op_io_init(&fio);
  fio.dtypes = io->dtypes;
  int64_t count = 0;
  adnn_status st = batchnorm_forward(func, d->forward, &fd, &p->fwd, &fio, &count);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_gradient_layout(func, "dx", "x", &fd.x)) != ADNN_STATUS_SUCCESS) return st;
  const size_t vec = fio.input_bytes[1];
  io->dtype = fio.dtype;
  io->n_inputs = 5; /* x, dy, scale, saved_mean, saved_inv_std */
  io->input_bytes[0] = fio.input_bytes[0];
  io->input_bytes[1] = fio.output_bytes[0]; /* dy has y's layout */
  for (int i = 2; i < 5; i++) io->input_bytes[i] = vec;
  io->n_outputs = 3; /* dx, dscale, dshift */
  io->output_bytes[0] = fio.input_bytes[0]; /* dx has x's layout */
  io->output_bytes[1] = io->output_bytes[2] = vec;
  io->inplace_inputs = 0;
  p->fwd.struct_size = (uint32_t)sizeof p->fwd;
  p->count = count;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn__norm_backward_validate(const char *func, const adnn_norm_backward_desc *d,
                                         adnn_plugin_norm_backward *p, adnn__op_io *io) {
  adnn_norm_desc fd;
  adnn_status st = read_forward(func, ADNN_PLUGIN_OP_NORM, d->forward, &fd);
  if (st != ADNN_STATUS_SUCCESS) return st;
  adnn__op_io fio;
  adnn__op_io_init(&fio);
  fio.dtypes = io->dtypes;
  if ((st = adnn__norm_validate(func, &fd, &p->fwd, &fio)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_gradient_layout(func, "dx", "x", &fd.x)) != ADNN_STATUS_SUCCESS) return st;
  /* The gain and its gradients are F32 for F16/BF16 data (ADNN_OP_PARAM_DTYPE). */
  const size_t vec = (size_t)p->fwd.D * adnn_dtype_size(ADNN_OP_PARAM_DTYPE(fio.dtype));
  const int has_gain = p->fwd.has_gain, has_bias = p->fwd.has_bias;
  io->dtype = fio.dtype;
  io->n_inputs = 2 + has_gain; /* x, dy[, gain] */
  io->input_bytes[0] = fio.input_bytes[0];
  io->input_bytes[1] = fio.output_bytes[0]; /* dy has y's layout */
  if (has_gain) io->input_bytes[2] = vec;
  io->n_outputs = 1 + has_gain + has_bias; /* dx[, dgain][, dbias] */
  io->output_bytes[0] = fio.input_bytes[0]; /* dx has x's layout */
  for (int i = 1; i < io->n_outputs; i++) io->output_bytes[i] = vec;
  io->inplace_inputs = 0;
  p->fwd.struct_size = (uint32_t)sizeof p->fwd;
  return ADNN_STATUS_SUCCESS;
}
