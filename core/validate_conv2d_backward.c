/*
 * Validation of the conv2d backward descriptors (backward data and backward
 * weights; include/adnn/ops.h, "Training"). Both point to a forward conv2d
 * descriptor, which is read by the struct_size rule and checked by the
 * forward op's own validator, so that a backward plan accepts exactly the
 * geometries the forward op accepts and reports a bad forward descriptor with
 * the forward op's messages. The gradients then have the forward tensors'
 * layouts (dx is x, dy is y, dw is w, db is bias), so a mismatch between the
 * forward and the backward shapes cannot be expressed. What is left to check
 * here: the backward descriptor's own fields (beta, algorithm) and that the
 * tensors that become outputs have distinct addresses for distinct elements.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "core/op_validate.h"


/* Reads *forward by the struct_size rule into *fwd and validates it as
 * adnn_plan_create_conv2d would (messages say "desc->forward"), filling the
 * forward problem and its spans. The forward activation, bias input and
 * algorithm are ignored by the backward ops: the problem gets the identity
 * activation and AUTO, so that plugins never see them. */
static adnn_status read_forward(const char *func, const adnn_conv2d_desc *forward,
                                unsigned dtypes, adnn_plugin_conv2d *fp, adnn__op_io *fio) {
  /* First, so that the caller may free *fio whatever happens. */
  adnn__op_io_init(fio);
  if (forward == NULL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: desc->forward is NULL", func);
  adnn_conv2d_desc fwd;
  adnn_status st = adnn__read_op_desc(func, "desc->forward", ADNN_PLUGIN_OP_CONV2D, forward, &fwd);
  if (st != ADNN_STATUS_SUCCESS) return st;
  char fwd_func[128];
  snprintf(fwd_func, sizeof fwd_func, "%s: desc->forward", func);
  fio->dtypes = dtypes;
  memset(fp, 0, sizeof *fp);
  st = adnn__conv2d_validate(fwd_func, &fwd, fp, fio);
  if (st != ADNN_STATUS_SUCCESS) return st;
  fp->struct_size = (uint32_t)sizeof *fp;
  memset(&fp->activation, 0, sizeof fp->activation);
  fp->activation.kind = ADNN_ACTIVATION_IDENTITY;
  fp->algorithm = ADNN_CONV2D_ALGO_AUTO;
  /* A forward descriptor set up for inference may ask for prepacked weights;
   * the backward ops read w (and write dw) in the descriptor's layout. */
  fp->weights_prepacked = 0;
  return ADNN_STATUS_SUCCESS;
}

/* ADNN_CONV2D_ALGO forces an algorithm for backward descriptors that say
 * AUTO too, as for the forward op (adnn_training(3)); a forward-only name
 * (winograd_f2x3) then makes backward plans NOT_SUPPORTED, which says so. */
static adnn_conv2d_algorithm algo_from_env(void) {
  const char *v = adnn__env_get(ADNN_ENV_CONV2D_ALGO);
  if (v == NULL) return ADNN_CONV2D_ALGO_AUTO;
#define CONV2D_BWD_ALGO_BY_NAME_(NAME, name, value, def) \
  if (strcmp(v, #name) == 0) return ADNN_CONV2D_ALGO_##NAME;
  ADNN_CONV2D_ALGO_LIST(CONV2D_BWD_ALGO_BY_NAME_)
#undef CONV2D_BWD_ALGO_BY_NAME_
  adnn__env_warn_ignored(ADNN_ENV_CONV2D_ALGO, v, "not an algorithm name");
  return ADNN_CONV2D_ALGO_AUTO;
}

/* The backward descriptor's own fields, shared by both ops; *algorithm
 * becomes the one the plan must run (AUTO, or forced by the descriptor or
 * ADNN_CONV2D_ALGO). */
static adnn_status check_backward_fields(const char *func, double beta,
                                         adnn_conv2d_algorithm *algorithm, adnn__op_io *io) {
  if (!isfinite(beta))
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: beta (%g) must be finite", func, beta);
  if (strcmp(adnn_conv2d_algorithm_name(*algorithm), "unknown") == 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: algorithm %d is not an adnn_conv2d_algorithm",
                      func, (int)*algorithm);
  if (*algorithm != ADNN_CONV2D_ALGO_AUTO) {
    io->forced = "forced by the descriptor";
  } else {
    *algorithm = algo_from_env();
    if (*algorithm != ADNN_CONV2D_ALGO_AUTO) io->forced = "forced by ADNN_CONV2D_ALGO";
  }
  return ADNN_STATUS_SUCCESS;
}

static adnn_status check_gradient_output(const char *func, const char *name, const char *of,
                                         const adnn_tensor_desc *t) {
  if (!adnn__tensor_strides_disjoint(t))
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "%s: %s (laid out as desc->forward->%s) has strides that make different "
                      "elements share memory; an output needs distinct addresses", func, name, of);
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn__conv2d_backward_data_validate(const char *func,
                                                const adnn_conv2d_backward_data_desc *d,
                                                adnn_plugin_conv2d_backward_data *p,
                                                adnn__op_io *io) {
  adnn__op_io fio;
  adnn_conv2d_algorithm algorithm = d->algorithm;
  adnn_status st = read_forward(func, d->forward, io->dtypes, &p->fwd, &fio);
  if (st == ADNN_STATUS_SUCCESS) st = check_backward_fields(func, d->beta, &algorithm, io);
  if (st == ADNN_STATUS_SUCCESS) st = check_gradient_output(func, "dx", "x", &p->fwd.x);
  if (st != ADNN_STATUS_SUCCESS) {
    adnn__op_io_free(&fio);
    return st;
  }
  /* Backward data has no bias gradient: the forward bias is dropped. */
  p->fwd.has_bias = 0;
  memset(&p->fwd.bias, 0, sizeof p->fwd.bias);
  p->beta = d->beta;
  p->algorithm = algorithm;
  io->dtype = fio.dtype;
  io->n_inputs = 2;
  io->n_outputs = 1;
  io->input_bytes[0] = fio.output_bytes[0]; /* dy: y's layout */
  io->input_bytes[1] = fio.input_bytes[1];  /* w */
  io->output_bytes[0] = fio.input_bytes[0]; /* dx: x's layout */
  io->inplace_inputs = 0;                   /* dx may overlap neither input */
  adnn__op_io_free(&fio);
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn__conv2d_backward_weights_validate(const char *func,
                                                   const adnn_conv2d_backward_weights_desc *d,
                                                   adnn_plugin_conv2d_backward_weights *p,
                                                   adnn__op_io *io) {
  adnn__op_io fio;
  adnn_conv2d_algorithm algorithm = d->algorithm;
  adnn_status st = read_forward(func, d->forward, io->dtypes, &p->fwd, &fio);
  if (st == ADNN_STATUS_SUCCESS) st = check_backward_fields(func, d->beta, &algorithm, io);
  if (st == ADNN_STATUS_SUCCESS) st = check_gradient_output(func, "dw", "w", &p->fwd.w);
  if (st == ADNN_STATUS_SUCCESS && p->fwd.has_bias)
    st = check_gradient_output(func, "db", "bias", &p->fwd.bias);
  if (st != ADNN_STATUS_SUCCESS) {
    adnn__op_io_free(&fio);
    return st;
  }
  p->beta = d->beta;
  p->algorithm = algorithm;
  io->dtype = fio.dtype;
  io->n_inputs = 2;
  io->input_bytes[0] = fio.input_bytes[0];  /* x */
  io->input_bytes[1] = fio.output_bytes[0]; /* dy: y's layout */
  io->output_bytes[0] = fio.input_bytes[1]; /* dw: w's layout */
  io->n_outputs = 1;
  if (p->fwd.has_bias) {
    io->output_bytes[1] = fio.input_bytes[2]; /* db: bias's layout */
    io->n_outputs = 2;
  }
  io->inplace_inputs = 0;
  adnn__op_io_free(&fio);
  return ADNN_STATUS_SUCCESS;
}
