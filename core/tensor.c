/*
 * Tensor descriptors: initialization, validation, element counts and spans.
 * Every size computation is overflow-checked, because a descriptor's span is
 * what later decides how much memory an operation may touch.
 */
#include "config.h"

#include <string.h>

#include "core/internal.h"

/* Checks dtype, rank, dims and strides and computes the span in elements (0 for
 * an empty tensor). `func` starts every message (a function name, or a function
 * and a tensor name such as "adnn_plan_create_conv2d: x"). */
adnn_status adnn__tensor_check(const char *func, const adnn_tensor_desc *d, int64_t *span_elems,
                               int64_t *count) {
  if (d == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: desc is NULL", func);
  if (adnn_dtype_size(d->dtype) == 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: dtype %d is not an adnn_dtype", func,
                      (int)d->dtype);
  if (d->rank < 0 || d->rank > ADNN_MAX_RANK)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: rank %d is outside 0..%d", func, (int)d->rank,
                      ADNN_MAX_RANK);
  int64_t n = 1, last = 0;
  int empty = 0;
  for (int i = 0; i < d->rank; i++) {
    if (d->dims[i] < 0)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: dims[%d] is negative (%lld)", func, i,
                        (long long)d->dims[i]);
    if (d->strides[i] < 0)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: strides[%d] is negative (%lld)", func, i,
                        (long long)d->strides[i]);
    if (d->dims[i] == 0) empty = 1;
  }
  for (int i = 0; i < d->rank; i++) {
    int64_t off;
    if (!adnn__mul_i64(n, d->dims[i], &n))
      return adnn__fail(ADNN_STATUS_BAD_PARAM_OVERFLOW,
                        "%s: the element count overflows at dims[%d] (%lld)", func, i,
                        (long long)d->dims[i]);
    if (!empty) {
      if (!adnn__mul_i64(d->dims[i] - 1, d->strides[i], &off) || !adnn__add_i64(last, off, &last))
        return adnn__fail(ADNN_STATUS_BAD_PARAM_OVERFLOW,
                          "%s: the memory span overflows at dims[%d] (%lld) x strides[%d] (%lld)",
                          func, i, (long long)d->dims[i], i, (long long)d->strides[i]);
    }
  }
  int64_t span = empty ? 0 : last + 1, bytes;
  if (!adnn__mul_i64(span, (int64_t)adnn_dtype_size(d->dtype), &bytes) ||
      (uint64_t)bytes > (uint64_t)SIZE_MAX)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_OVERFLOW,
                      "%s: the tensor's byte size overflows (%lld elements of %s)", func,
                      (long long)span, adnn_dtype_name(d->dtype));
  if (span_elems) *span_elems = span;
  if (count) *count = n;
  return ADNN_STATUS_SUCCESS;
}

static adnn_status init_common(const char *func, adnn_tensor_desc *desc, adnn_dtype dtype,
                               int rank, const int64_t *dims, const int64_t *strides) {
  if (desc == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: desc is NULL", func);
  if (rank < 0 || rank > ADNN_MAX_RANK)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: rank %d is outside 0..%d", func, rank,
                      ADNN_MAX_RANK);
  if (rank > 0 && dims == NULL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: dims is NULL for rank %d", func, rank);
  adnn_tensor_desc d;
  memset(&d, 0, sizeof d);
  d.dtype = dtype;
  d.rank = rank;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0)
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: dims[%d] is negative (%lld)", func, i,
                        (long long)dims[i]);
    d.dims[i] = dims[i];
  }
  if (strides != NULL) {
    for (int i = 0; i < rank; i++) d.strides[i] = strides[i];
  } else {
    /* Packed row-major: the last dim is contiguous. Overflow here is caught by
     * check_desc below through the element count; clamp to avoid UB first. */
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
      d.strides[i] = s;
      int64_t dim = dims[i] > 0 ? dims[i] : 1;
      if (!adnn__mul_i64(s, dim, &s))
        return adnn__fail(ADNN_STATUS_BAD_PARAM_OVERFLOW,
                          "%s: the element count overflows at dims[%d] (%lld)", func, i,
                          (long long)dims[i]);
    }
  }
  adnn_status st = adnn__tensor_check(func, &d, NULL, NULL);
  if (st != ADNN_STATUS_SUCCESS) return st;
  *desc = d;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_tensor_desc_init(adnn_tensor_desc *desc, adnn_dtype dtype, int rank,
                                  const int64_t *dims) {
  return init_common("adnn_tensor_desc_init", desc, dtype, rank, dims, NULL);
}

adnn_status adnn_tensor_desc_init_strided(adnn_tensor_desc *desc, adnn_dtype dtype, int rank,
                                          const int64_t *dims, const int64_t *strides) {
  if (rank > 0 && strides == NULL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL,
                      "adnn_tensor_desc_init_strided: strides is NULL for rank %d", rank);
  return init_common("adnn_tensor_desc_init_strided", desc, dtype, rank, dims, strides);
}

adnn_status adnn_tensor_desc_validate(const adnn_tensor_desc *desc) {
  return adnn__tensor_check("adnn_tensor_desc_validate", desc, NULL, NULL);
}

adnn_status adnn_tensor_desc_element_count(const adnn_tensor_desc *desc, int64_t *count) {
  if (count == NULL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "adnn_tensor_desc_element_count: count is NULL");
  return adnn__tensor_check("adnn_tensor_desc_element_count", desc, NULL, count);
}

adnn_status adnn_tensor_desc_span_bytes(const adnn_tensor_desc *desc, size_t *bytes) {
  if (bytes == NULL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "adnn_tensor_desc_span_bytes: bytes is NULL");
  int64_t span;
  adnn_status st = adnn__tensor_check("adnn_tensor_desc_span_bytes", desc, &span, NULL);
  if (st != ADNN_STATUS_SUCCESS) return st;
  *bytes = (size_t)span * adnn_dtype_size(desc->dtype);
  return ADNN_STATUS_SUCCESS;
}

int adnn__tensor_strides_disjoint(const adnn_tensor_desc *d) {
  /* Sufficient condition: visiting dims by increasing stride, each stride is
   * larger than the furthest offset reachable with the smaller ones. This
   * accepts every packed or padded layout and any permutation of them. */
  int order[ADNN_MAX_RANK], n = 0;
  for (int i = 0; i < d->rank; i++)
    if (d->dims[i] > 1) order[n++] = i;
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && d->strides[order[j]] < d->strides[order[j - 1]]; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  int64_t reach = 0; /* furthest offset reachable so far */
  for (int i = 0; i < n; i++) {
    int64_t s = d->strides[order[i]], ext;
    if (s <= reach) return 0;
    if (!adnn__mul_i64(d->dims[order[i]] - 1, s, &ext) || !adnn__add_i64(reach, ext, &reach))
      return 0;
  }
  return 1;
}

int adnn_tensor_desc_is_packed(const adnn_tensor_desc *desc) {
  if (desc == NULL || desc->rank < 0 || desc->rank > ADNN_MAX_RANK) return 0;
  if (adnn_dtype_size(desc->dtype) == 0) return 0;
  for (int i = 0; i < desc->rank; i++)
    if (desc->dims[i] < 0 || desc->strides[i] < 0) return 0;
  int64_t s = 1;
  int empty = 0;
  for (int i = desc->rank - 1; i >= 0; i--) {
    /* A stride of a size-1 dim never matters for addressing. */
    if (desc->dims[i] != 1 && desc->strides[i] != s) return 0;
    /* The same strides as adnn_tensor_desc_init, which counts a zero dim as 1. */
    if (desc->dims[i] == 0) empty = 1;
    if (!adnn__mul_i64(s, desc->dims[i] > 0 ? desc->dims[i] : 1, &s)) return 0;
  }
  /* Invalid when the byte size overflows (a non-empty packed tensor spans s). */
  int64_t bytes;
  if (!empty && (!adnn__mul_i64(s, (int64_t)adnn_dtype_size(desc->dtype), &bytes) ||
                 (uint64_t)bytes > (uint64_t)SIZE_MAX))
    return 0;
  return 1;
}
