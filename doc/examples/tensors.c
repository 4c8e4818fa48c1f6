/* Tensor descriptors: NCHW and NHWC are two stride patterns of the same dims. */
#include <stdio.h>

#include <adnn.h>

int main(void) {
  const int64_t n = 2, c = 3, h = 4, w = 5;
  int64_t dims[4] = {n, c, h, w};
  adnn_tensor_desc nchw, nhwc;

  /* Packed row-major: strides {c*h*w, h*w, w, 1}. */
  if (adnn_tensor_desc_init(&nchw, ADNN_DTYPE_F32, 4, dims) != ADNN_STATUS_SUCCESS) return 1;

  /* Same logical dims, channels last in memory. */
  int64_t strides[4] = {h * w * c, 1, w * c, c};
  if (adnn_tensor_desc_init_strided(&nhwc, ADNN_DTYPE_F32, 4, dims, strides) !=
      ADNN_STATUS_SUCCESS)
    return 1;

  int64_t count;
  size_t bytes;
  if (adnn_tensor_desc_element_count(&nhwc, &count) != ADNN_STATUS_SUCCESS ||
      adnn_tensor_desc_span_bytes(&nhwc, &bytes) != ADNN_STATUS_SUCCESS)
    return 1;
  printf("%lld elements of %s, %zu bytes; nchw packed: %d, nhwc packed: %d\n",
         (long long)count, adnn_dtype_name(nhwc.dtype), bytes, adnn_tensor_desc_is_packed(&nchw),
         adnn_tensor_desc_is_packed(&nhwc));
  return count == 120 && bytes == 120 * adnn_dtype_size(ADNN_DTYPE_F32) ? 0 : 1;
}
