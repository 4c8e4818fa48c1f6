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

/* The most inputs and outputs any op has. */
enum { ADNN__MAX_OP_INPUTS = 8, ADNN__MAX_OP_OUTPUTS = 4 };

/* What validation learns about an op besides its problem: how it is executed
 * and which memory it touches, for the checks at execution. */
typedef struct adnn__op_io {
  unsigned dtypes;       /* in: the dtypes the op accepts (ADNN_OP_DTYPE bits) */
  adnn_dtype dtype;      /* out: the op's element type */
  int32_t n_inputs;      /* out: input pointers at execution */
  int32_t n_outputs;     /* out: output pointers at execution */
  size_t input_bytes[ADNN__MAX_OP_INPUTS];   /* out: byte spans */
  size_t output_bytes[ADNN__MAX_OP_OUTPUTS]; /* out: byte spans */
  /* out: bit i set when output 0 may be exactly input i (same pointer; the
   * layouts were checked to be identical). */
  unsigned inplace_inputs;
  /* out: NULL, or why the algorithm is fixed ("forced by the descriptor"). */
  const char *forced;
} adnn__op_io;

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
