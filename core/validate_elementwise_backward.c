/*
 * Validation of the backward descriptors of pooling, activations and softmax
 * (adnn_pool2d_backward_desc, adnn_activation_backward_desc,
 * adnn_softmax_backward_desc): one adnn__<name>_validate() per manifest row,
 * as op_validate.h declares.
 *
 * Each backward descriptor points to its forward descriptor. That one is read
 * by the struct_size rule like any descriptor and checked by the forward
 * op's own validator, so a backward plan accepts exactly the problems the
 * forward op accepts, with the same messages, prefixed "desc->forward:" so
 * that the caller knows which descriptor is wrong ("...: desc->forward: x has
 * rank 3"). The gradients have the layouts of the forward tensors they are
 * the gradients of: dx has x's, dy has y's. dx
 * is an output, so x's strides must then give distinct addresses, which the
 * forward op never had to require of its input.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "core/op_validate.h"

/* dx has x's layout: as an output its elements need distinct addresses. */
static adnn_status check_dx(const char *func, const adnn_tensor_desc *x) {
  if (!adnn__tensor_strides_disjoint(x))
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "%s: dx takes forward->x's layout, whose strides make different elements "
                      "share memory; an output needs distinct addresses", func);
  return ADNN_STATUS_SUCCESS;
}

/* The prefix of the forward validator's messages. */
static void forward_func(char *buf, size_t size, const char *func) {
  snprintf(buf, size, "%s: desc->forward", func);
}

/* ------------------------------------------------------------------------ */
/* pool2d backward: inputs {x, y, dy}, output {dx}                           */
/* ------------------------------------------------------------------------ */

adnn_status adnn__pool2d_backward_validate(const char *func, const adnn_pool2d_backward_desc *d,
                                           adnn_plugin_pool2d_backward *p, adnn__op_io *io) {
  adnn_pool2d_desc fwd;
  adnn_status st =
      adnn__read_op_desc(func, "desc->forward", ADNN_PLUGIN_OP_POOL2D, d->forward, &fwd);
  if (st != ADNN_STATUS_SUCCESS) return st;
  char ffunc[160];
  forward_func(ffunc, sizeof ffunc, func);
  adnn__op_io fio;
  adnn__op_io_init(&fio);
  fio.dtypes = io->dtypes;
  if ((st = adnn__pool2d_validate(ffunc, &fwd, &p->fwd, &fio)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dx(func, &fwd.x)) != ADNN_STATUS_SUCCESS) return st;
  p->fwd.struct_size = sizeof p->fwd;
  io->dtype = fio.dtype;
  io->n_inputs = 3;
  io->n_outputs = 1;
  io->input_bytes[0] = fio.input_bytes[0];  /* x */
  io->input_bytes[1] = fio.output_bytes[0]; /* y */
  io->input_bytes[2] = fio.output_bytes[0]; /* dy: y's layout */
  io->output_bytes[0] = fio.input_bytes[0]; /* dx: x's layout */
  /* dx is scattered into (windows overlap), so it may overlap no input. */
  io->inplace_inputs = 0;
  return ADNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* activation backward: inputs {x, dy}, output {dx}                          */
/* ------------------------------------------------------------------------ */

adnn_status adnn__activation_backward_validate(const char *func,
                                               const adnn_activation_backward_desc *d,
                                               adnn_plugin_activation_backward *p,
                                               adnn__op_io *io) {
  adnn_activation_desc fwd;
  adnn_status st =
      adnn__read_op_desc(func, "desc->forward", ADNN_PLUGIN_OP_ACTIVATION, d->forward, &fwd);
  if (st != ADNN_STATUS_SUCCESS) return st;
  char ffunc[160];
  forward_func(ffunc, sizeof ffunc, func);
  adnn__op_io fio;
  adnn__op_io_init(&fio);
  fio.dtypes = io->dtypes;
  if ((st = adnn__activation_validate(ffunc, &fwd, &p->fwd, &fio)) != ADNN_STATUS_SUCCESS)
    return st;
  if ((st = check_dx(func, &fwd.x)) != ADNN_STATUS_SUCCESS) return st;
  p->fwd.struct_size = sizeof p->fwd;
  io->dtype = fio.dtype;
  io->n_inputs = 2;
  io->n_outputs = 1;
  io->input_bytes[0] = fio.input_bytes[0];  /* x */
  io->input_bytes[1] = fio.output_bytes[0]; /* dy: y's layout */
  io->output_bytes[0] = fio.input_bytes[0]; /* dx: x's layout */
  /* Elementwise: dx may be dy itself when x and y (so dx and dy) have one
   * layout; each dy is read before the dx at its place is written. */
  io->inplace_inputs = adnn__same_layout(&fwd.x, &fwd.y) ? 1u << 1 : 0u;
  return ADNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* softmax backward: inputs {y, dy}, output {dx}                             */
/* ------------------------------------------------------------------------ */

adnn_status adnn__softmax_backward_validate(const char *func,
                                            const adnn_softmax_backward_desc *d,
                                            adnn_plugin_softmax_backward *p, adnn__op_io *io) {
  adnn_softmax_desc fwd;
  adnn_status st =
      adnn__read_op_desc(func, "desc->forward", ADNN_PLUGIN_OP_SOFTMAX, d->forward, &fwd);
  if (st != ADNN_STATUS_SUCCESS) return st;
  char ffunc[160];
  forward_func(ffunc, sizeof ffunc, func);
  adnn__op_io fio;
  adnn__op_io_init(&fio);
  fio.dtypes = io->dtypes;
  if ((st = adnn__softmax_validate(ffunc, &fwd, &p->fwd, &fio)) != ADNN_STATUS_SUCCESS) return st;
  if ((st = check_dx(func, &fwd.x)) != ADNN_STATUS_SUCCESS) return st;
  p->fwd.struct_size = sizeof p->fwd;
  io->dtype = fio.dtype;
  io->n_inputs = 2;
  io->n_outputs = 1;
  io->input_bytes[0] = fio.output_bytes[0]; /* y */
  io->input_bytes[1] = fio.output_bytes[0]; /* dy: y's layout */
  io->output_bytes[0] = fio.input_bytes[0]; /* dx: x's layout */
  /* Each slice's dot product sum(y * dy) is formed before its dx is written,
   * and dx at a place is written after dy there is read: dx may be dy. */
  io->inplace_inputs = adnn__same_layout(&fwd.x, &fwd.y) ? 1u << 1 : 0u;
  return ADNN_STATUS_SUCCESS;
}
