/* Tensor layouts for the harness's cases, and walking a tensor's elements.
 * Computed here rather than asked of the library, so that the harness does not
 * rely on the code it tests to find the elements it compares. */
#include "t/harness/harness.h"

#include <string.h>

adnn_tensor_desc harness_tensor_desc(adnn_dtype dtype, int rank, const int64_t *dims,
                                     enum harness_layout layout) {
  adnn_tensor_desc t;
  memset(&t, 0, sizeof t);
  t.dtype = dtype;
  t.rank = rank;
  for (int i = 0; i < rank; i++) t.dims[i] = dims[i];
  if (layout == HARNESS_NHWC && rank == 4) {
    /* dims [N, C, H, W] (filters [K, C/g, R, S]), memory N, H, W, C */
    t.strides[1] = 1;
    t.strides[3] = dims[1];
    t.strides[2] = dims[3] * dims[1];
    t.strides[0] = dims[2] * dims[3] * dims[1];
    return t;
  }
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; i--) {
    t.strides[i] = stride;
    stride = stride * dims[i] + (layout == HARNESS_PADDED ? 2 : 0);
  }
  return t;
}

adnn_tensor_desc harness_tensor_desc4(adnn_dtype dtype, int64_t d0, int64_t d1, int64_t d2,
                                      int64_t d3, enum harness_layout layout) {
  const int64_t dims[4] = {d0, d1, d2, d3};
  return harness_tensor_desc(dtype, 4, dims, layout);
}

adnn_tensor_desc harness_vector_desc(adnn_dtype dtype, int64_t n) {
  return harness_tensor_desc(dtype, 1, &n, HARNESS_PACKED);
}

int64_t harness_element_count(const adnn_tensor_desc *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->dims[i];
  return n;
}

int64_t harness_span(const adnn_tensor_desc *t) {
  int64_t last = 0;
  for (int i = 0; i < t->rank; i++) {
    if (t->dims[i] == 0) return 0;
    last += (t->dims[i] - 1) * t->strides[i];
  }
  return last + 1;
}

int64_t harness_offset(const adnn_tensor_desc *t, int64_t linear) {
  int64_t off = 0;
  for (int i = t->rank - 1; i >= 0; i--) {
    off += (linear % t->dims[i]) * t->strides[i];
    linear /= t->dims[i];
  }
  return off;
}

void harness_index_first(harness_index *i, const adnn_tensor_desc *t) {
  memset(i, 0, sizeof *i);
  i->valid = harness_element_count(t) > 0;
}

/* An odometer: the last dim turns fastest, carrying into the ones before. */
void harness_index_next(harness_index *i, const adnn_tensor_desc *t) {
  for (int d = t->rank - 1; d >= 0; d--) {
    i->idx[d]++;
    i->offset += t->strides[d];
    if (i->idx[d] < t->dims[d]) return;
    i->offset -= i->idx[d] * t->strides[d];
    i->idx[d] = 0;
  }
  i->valid = 0; /* wrapped around (or rank 0: its one element is done) */
}
