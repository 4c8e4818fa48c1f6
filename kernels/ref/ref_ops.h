/*
 * Reference kernels: plain loops written for clarity, accumulating in double.
 * They are the oracle of the test suite and the last-resort implementation of
 * any backend (the CPU plugin uses them for layouts its fast kernels do not
 * handle, and for F64). Every function takes a descriptor validated by the core
 * (see adnn_plugin_op in adnn/plugin.h: shapes agree, binary operands already
 * broadcast to y's rank with stride 0, softmax axis non-negative) or the same
 * descriptor as a user filled it (binary operands of lower rank or with size-1
 * dims, a negative softmax axis: both forms are accepted), works for
 * any strides, and supports F32 and F64 (reading and writing the descriptor's
 * dtype). No tricks: each is a direct transcription of the definition in
 * doc/ops.md.
 */
#ifndef ADNN_REF_OPS_H
#define ADNN_REF_OPS_H

#include <stdint.h>

#include <adnn.h>

/* Element access for the two supported dtypes (F32, F64), by element offset. */
static inline double adnn_ref_load(const void *base, adnn_dtype t, int64_t off) {
  return t == ADNN_DTYPE_F64 ? ((const double *)base)[off] : (double)((const float *)base)[off];
}
static inline void adnn_ref_store(void *base, adnn_dtype t, int64_t off, double v) {
  if (t == ADNN_DTYPE_F64)
    ((double *)base)[off] = v;
  else
    ((float *)base)[off] = (float)v;
}

/* The element offset (sum of index * stride) of the linear row-major index
 * `lin` of tensor t (the last dim varies fastest). */
static inline int64_t adnn_ref_offset(const adnn_tensor_desc *t, int64_t lin) {
  int64_t off = 0;
  for (int i = t->rank - 1; i >= 0; i--) {
    off += (lin % t->dims[i]) * t->strides[i];
    lin /= t->dims[i];
  }
  return off;
}

/* The number of elements of t (1 for rank 0). */
static inline int64_t adnn_ref_count(const adnn_tensor_desc *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->dims[i];
  return n;
}

/* The scalar definition of every activation, in double. */
double adnn_ref_activation_apply(const adnn_activation *act, double x);

/* Each kernel below is a direct transcription of doc/ops.md. None allocates
 * memory, so a backend may call them from plan_execute. In-place use (y == x
 * with the same layout) is supported where the op allows it. */
void adnn_ref_conv2d(const adnn_conv2d_desc *d, const void *x, const void *w, const void *bias,
                     void *y);
void adnn_ref_pool2d(const adnn_pool2d_desc *d, const void *x, void *y);
void adnn_ref_activation(const adnn_activation_desc *d, const void *x, void *y);
void adnn_ref_softmax(const adnn_softmax_desc *d, const void *x, void *y);
void adnn_ref_batchnorm(const adnn_batchnorm_desc *d, const void *x, const void *scale,
                        const void *shift, const void *mean, const void *var, void *y);
void adnn_ref_norm(const adnn_norm_desc *d, const void *x, const void *gain, const void *bias,
                   void *y);
void adnn_ref_binary(const adnn_binary_desc *d, const void *a, const void *b, void *y);

#endif
