/*
 * Reference kernels: plain loops written for clarity, accumulating in double.
 * They are the CPU plugin's "reference" implementation of every op: the one
 * that runs F64, that a caller can force, and that the tuner keeps as the slow
 * catch-all. The test suite has its own independent oracle, so nothing here is
 * checked against itself.
 *
 * Every op of the manifest (ADNN_OP_LIST in adnn/op_list.h) has one kernel
 * with the same shape of signature, generated below:
 *
 *     void adnn_ref_<name>(const adnn_plugin_<name> *p,
 *                          const void *const *inputs, void *const *outputs);
 *
 * p is the normalized problem the core validated (shapes agree, sizes >= 1,
 * binary operands already broadcast to y's rank with stride 0, softmax axis
 * resolved); inputs and outputs are in the order the manifest documents, an
 * optional input present only when the problem's has_* flag says so. Every
 * kernel works for any strides and for F32 and F64 (reading and writing the
 * tensors' dtype; the low-precision forward ops also F16 and BF16, with
 * batchnorm's and norm's parameter vectors in ADNN_OP_PARAM_DTYPE), allocates nothing, and is a direct transcription of the
 * definition in doc/ops.md. In-place use (y == x with the same layout) works
 * where the op allows it, because each element is read before the y at the
 * same place is written.
 */
#ifndef ADNN_REF_H
#define ADNN_REF_H

#include <stdint.h>

#include <adnn/plugin.h>

#include "kernels/common/float16.h"

/** Loads element `off` (an element offset) of a buffer of dtype t (F32, F64,
 *  F16 or BF16) as a double; the 16-bit types widen exactly
 *  (kernels/common/float16.h). */
static inline double adnn_ref_load(const void *base, adnn_dtype t, int64_t off) {
  switch (t) {
    case ADNN_DTYPE_F64: return ((const double *)base)[off];
    case ADNN_DTYPE_F16: return adnn_f16_to_f64(((const uint16_t *)base)[off]);
    case ADNN_DTYPE_BF16: return adnn_bf16_to_f64(((const uint16_t *)base)[off]);
    default: return (double)((const float *)base)[off];
  }
}

/** Stores v into element `off` of a buffer of dtype t, with one rounding to
 *  nearest even from the double: to float for F32, straight to F16/BF16 for
 *  the 16-bit types (never through float, which would round twice). */
static inline void adnn_ref_store(void *base, adnn_dtype t, int64_t off, double v) {
  switch (t) {
    case ADNN_DTYPE_F64: ((double *)base)[off] = v; break;
    case ADNN_DTYPE_F16: ((uint16_t *)base)[off] = adnn_f64_to_f16(v); break;
    case ADNN_DTYPE_BF16: ((uint16_t *)base)[off] = adnn_f64_to_bf16(v); break;
    default: ((float *)base)[off] = (float)v; break;
  }
}

/** The element offset (sum of index * stride) of the linear row-major index
 *  `lin` of tensor t (the last dim varies fastest). */
static inline int64_t adnn_ref_offset(const adnn_tensor_desc *t, int64_t lin) {
  int64_t off = 0;
  for (int i = t->rank - 1; i >= 0; i--) {
    off += (lin % t->dims[i]) * t->strides[i];
    lin /= t->dims[i];
  }
  return off;
}

/** The number of elements of t (1 for rank 0). */
static inline int64_t adnn_ref_count(const adnn_tensor_desc *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->dims[i];
  return n;
}

/** The scalar definition of every activation, in double, with the NaN and
 *  infinity rules of doc/ops.md. */
double adnn_ref_activation_apply(const adnn_activation *act, double x);

/** dx for one element of activation backward: dy times the activation's
 *  derivative at x, with the kink, NaN and infinity rules of doc/ops.md
 *  ("Activation backward"). */
double adnn_ref_activation_backward_apply(const adnn_activation *act, double x, double dy);

/** adnn_ref_<name>(p, inputs, outputs) for every op of the manifest: runs the
 *  op's definition on the problem p (see the top of this file). */
#define ADNN_REF_DECLARE_(NAME, name, value, v1_end, in_list, out_list, dtypes, flags) \
  void adnn_ref_##name(const adnn_plugin_##name *p, const void *const *inputs,        \
                       void *const *outputs);
ADNN_OP_LIST(ADNN_REF_DECLARE_)
#undef ADNN_REF_DECLARE_

#endif
