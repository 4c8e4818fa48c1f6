/* Layout predicates shared by the CPU kernels. */
#include "config.h"

#include "kernels/cpu/cpu_kernels.h"

/* A stride only matters for dims larger than 1. */
static int stride_is(const adnn_tensor_desc *t, int i, int64_t s) {
  return t->dims[i] == 1 || t->strides[i] == s;
}

int adnn_cpu_is_nchw(const adnn_tensor_desc *t) {
  if (t->rank != 4) return 0;
  int64_t w = t->dims[3], h = t->dims[2], c = t->dims[1];
  return stride_is(t, 3, 1) && stride_is(t, 2, w) && stride_is(t, 1, h * w) &&
         stride_is(t, 0, c * h * w);
}

int adnn_cpu_is_nhwc(const adnn_tensor_desc *t) {
  if (t->rank != 4) return 0;
  int64_t w = t->dims[3], h = t->dims[2], c = t->dims[1];
  return stride_is(t, 1, 1) && stride_is(t, 3, c) && stride_is(t, 2, w * c) &&
         stride_is(t, 0, h * w * c);
}
