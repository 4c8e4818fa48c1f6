/* Element type sizes and names. */
#include "config.h"

#include "core/internal.h"

size_t adnn_dtype_size(adnn_dtype dtype) {
  switch (dtype) {
    case ADNN_DTYPE_F32: return 4;
    case ADNN_DTYPE_F64: return 8;
    case ADNN_DTYPE_F16: return 2;
    case ADNN_DTYPE_BF16: return 2;
    case ADNN_DTYPE_I8: return 1;
    case ADNN_DTYPE_I32: return 4;
    case ADNN_DTYPE_U8: return 1;
  }
  return 0;
}

const char *adnn_dtype_name(adnn_dtype dtype) { return adnn_plugin_dtype_name(dtype); }
