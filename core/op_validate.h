/*
 * Validation of the public op descriptors (op_validate.c). For each row of
 * ADNN_OP_LIST there is one adnn__<name>_validate() that checks a descriptor
 * completely (everything that does not need the device) and fills the
 * plugin's normalized problem adnn_plugin_<name>, so that plugins receive only
 * well-formed problems and never recompute their sizes. The generic plan
 * lifecycle (ops.c) calls them through a table generated from the manifest.
 */
#ifndef ADNN_CORE_OP_VALIDATE_H
#define ADNN_CORE_OP_VALIDATE_H

#include <stddef.h>

#include <adnn.h>
#include <adnn/plugin.h>

/* The inputs and outputs whose spans an op's io holds without allocating;
 * an op with more (the optimizer's multi-tensor apply) grows its arrays with
 * adnn__op_io_reserve. */
enum { ADNN__MAX_OP_INPUTS = 8, ADNN__MAX_OP_OUTPUTS = 8 };

/* What validation learns about an op besides its problem: how it is executed
 * and which memory it touches, for the checks at execution. Its span arrays
 * point into the struct itself: set one up with adnn__op_io_init (a
 * validator of a backward op that runs the forward op's validator on a local
 * adnn__op_io must do so), and never copy one by assignment. */
typedef struct adnn__op_io {
  unsigned dtypes;       /* in: the dtypes the op accepts (ADNN_OP_DTYPE bits) */
  adnn_dtype dtype;      /* out: the op's element type */
  int32_t n_inputs;      /* out: input pointers at execution */
  int32_t n_outputs;     /* out: output pointers at execution */
  /* out: byte spans, n_inputs and n_outputs of them. They point to the
   * inline arrays below unless adnn__op_io_reserve made them larger. */
  size_t *input_bytes;
  size_t *output_bytes;
  size_t inline_input_bytes[ADNN__MAX_OP_INPUTS];
  size_t inline_output_bytes[ADNN__MAX_OP_OUTPUTS];
  /* out: bit i set when output 0 may be exactly input i (same pointer; the
   * layouts were checked to be identical). */
  unsigned inplace_inputs;
  /* out: NULL, or why the algorithm is fixed ("forced by the descriptor"). */
  const char *forced;
  /* out: NULL, or heap memory the problem points to (the optimizer's copy of
   * its tensor sizes), freed with the io when the plan is destroyed. */
  void *owned;
  /* out: for a plan whose descriptor has weights_prepacked = 1, the index + 1
   * of the input that is then the packed weight buffer (conv2d's w, matmul's
   * b); 0 for every other plan. The core replaces that input's span by the
   * plugin's packed size once the algorithm is chosen. */
  int32_t prepacked_input;
  /* out: the plugin ABI (ADNN_PLUGIN_ABI_VERSION form) a backend must have
   * been built against to read the problem's fields this plan uses, with
   * `min_plugin_abi_what` naming them; 0 for any 2.x. A plugin built against
   * an older header reads a shorter problem and would run something else, so
   * the core refuses it with NOT_SUPPORTED instead. */
  uint32_t min_plugin_abi;
  const char *min_plugin_abi_what;
} adnn__op_io;

/* The index of the input that is a packed weight buffer in a validated op
 * whose problem has weights_prepacked = 1 (conv2d's w, matmul's b), or -1
 * (every other op, or the flag 0): for the tuner's scratch buffers. */
int adnn__op_prepacked_input(const adnn_plugin_op *op);

/* Points io's span arrays at its inline arrays (zeroed); called by the core
 * before validation. */
void adnn__op_io_init(adnn__op_io *io);
/* Makes room for n_inputs input and n_outputs output spans (zeroed), for an
 * op with more than the inline arrays hold. Returns SUCCESS or OUT_OF_MEMORY
 * (recorded with func's name). */
adnn_status adnn__op_io_reserve(const char *func, adnn__op_io *io, size_t n_inputs,
                                size_t n_outputs);
/* Frees what adnn__op_io_reserve allocated. */
void adnn__op_io_free(adnn__op_io *io);

/* ADNN_STATUS_SUCCESS with io->dtype = dt when dt is one of io->dtypes (the
 * op's manifest mask); otherwise ADNN_STATUS_NOT_SUPPORTED with the message
 * "<func>: <what> <dt> is not supported (<the mask's dtypes> are)", `what`
 * naming the dtype ("dtype", "q dtype"). */
adnn_status adnn__op_dtype_supported(const char *func, const char *what, adnn_dtype dt,
                                     adnn__op_io *io);

/* Checks shared by the validators. adnn__op_tensor_check validates tensor
 * `name` of op function `func` (adnn__tensor_check), its rank in
 * rank_lo..rank_hi and every dim >= 1, and stores its span in bytes in
 * *bytes (when not NULL). adnn__op_output_check refuses an output whose
 * strides make two elements share an address. Both record the failure with
 * adnn__fail, naming func and the tensor. */
adnn_status adnn__op_tensor_check(const char *func, const char *name, const adnn_tensor_desc *t,
                                  int rank_lo, int rank_hi, size_t *bytes);
adnn_status adnn__op_output_check(const char *func, const char *name, const adnn_tensor_desc *t);
/* 1 when a and b have the same rank and dims. */
int adnn__same_dims(const adnn_tensor_desc *a, const adnn_tensor_desc *b);
/* 1 when a and b have the same dims and dtype and the same stride on every
 * dim of more than one element: they address the same elements alike. */
int adnn__same_layout(const adnn_tensor_desc *a, const adnn_tensor_desc *b);

/* Reads the caller's descriptor of op `kind` (a forward descriptor that a
 * backward descriptor points to) by the struct_size rule into dst, which has
 * room for this library's adnn_<name>_desc of that op; messages name func
 * and `what` ("desc->forward"). Returns SUCCESS, BAD_PARAM_NULL (src NULL)
 * or BAD_PARAM (struct_size too small). */
adnn_status adnn__read_op_desc(const char *func, const char *what, adnn_plugin_op_kind kind,
                               const void *src, void *dst);

/* The problem a live plan gave its plugin, and the plan's op kind, for the
 * functions that change a plan's per-execution values between executions
 * (adnn_plan_set_optimizer_step). Returns SUCCESS, BAD_PARAM_NULL or
 * BAD_PARAM_HANDLE (not a live plan, or an orphan). */
struct adnn_plan;
adnn_status adnn__plan_problem(const char *func, struct adnn_plan *plan,
                               adnn_plugin_op_kind *kind, void **problem);

/* One validator per op: `func` names the public function in messages; d is
 * a complete descriptor of the current layout (the caller has applied the
 * struct_size rule). Returns SUCCESS with *p and *io filled, or the failure
 * recorded with adnn__fail. */
#define ADNN__DECLARE_VALIDATE_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags) \
  adnn_status adnn__##name##_validate(const char *func, const adnn_##name##_desc *d,     \
                                      adnn_plugin_##name *p, adnn__op_io *io);
ADNN_OP_LIST(ADNN__DECLARE_VALIDATE_)
#undef ADNN__DECLARE_VALIDATE_

/* The output dims of conv2d and pool2d, shared by the validators and the
 * public adnn_*_output_dims (which apply the struct_size rule first). */
adnn_status adnn__conv2d_output_dims(const char *func, const adnn_conv2d_desc *d, int64_t out[4]);
adnn_status adnn__pool2d_output_dims(const char *func, const adnn_pool2d_desc *d, int64_t out[4]);

#endif
