/* Host buffers of the harness: values as doubles at element offsets, NaN in
 * the gaps, and the seeded fills the cases use. */
#include "t/harness/harness.h"

#include "kernels/common/float16.h"

#include <math.h>
#include <stdlib.h>

int harness_buffer_init(harness_buffer *b, const adnn_tensor_desc *desc) {
  b->desc = *desc;
  b->span = harness_span(desc);
  size_t n = b->span > 0 ? (size_t)b->span : 1;
  b->v = malloc(n * sizeof *b->v);
  b->member = calloc(n, 1);
  if (!b->v || !b->member) {
    harness_buffer_free(b);
    return -1;
  }
  for (int64_t i = 0; i < b->span; i++) b->v[i] = NAN;
  harness_index it;
  for (harness_index_first(&it, desc); it.valid; harness_index_next(&it, desc))
    b->member[it.offset] = 1;
  return 0;
}

void harness_buffer_free(harness_buffer *b) {
  free(b->v);
  free(b->member);
  b->v = NULL;
  b->member = NULL;
  b->span = 0;
}

/* The value the tensor can hold: one rounding to nearest even into the
 * floating types; integers round half to even and saturate to the type's
 * range (the harness's integer tensors are labels, quantized data and
 * accumulators). NaN stays NaN (the gaps). */
double harness_round(adnn_dtype dtype, double v) {
  switch (dtype) {
    case ADNN_DTYPE_F32: return (double)(float)v;
    case ADNN_DTYPE_F16: return adnn_f16_to_f64(adnn_f64_to_f16(v));
    case ADNN_DTYPE_BF16: return adnn_bf16_to_f64(adnn_f64_to_bf16(v));
    case ADNN_DTYPE_I8:
    case ADNN_DTYPE_I32: {
      if (v != v) return v;
      const double lo = dtype == ADNN_DTYPE_I8 ? -128.0 : -2147483648.0;
      const double hi = dtype == ADNN_DTYPE_I8 ? 127.0 : 2147483647.0;
      const double r = nearbyint(v);
      return r < lo ? lo : (r > hi ? hi : r);
    }
    case ADNN_DTYPE_U8: {
      if (v != v) return v;
      const double r = nearbyint(v);
      return r < 0.0 ? 0.0 : (r > 255.0 ? 255.0 : r);
    }
    default: return v;
  }
}

/* Both fills visit the offsets in increasing order, so that a layout's data
 * depends only on the seed and the set of element offsets. */
void harness_fill_uniform(harness_buffer *b, tap_rng *r, double lo, double hi) {
  for (int64_t i = 0; i < b->span; i++)
    if (b->member[i]) b->v[i] = harness_round(b->desc.dtype, tap_rng_uniform(r, lo, hi));
}

void harness_fill_mixed(harness_buffer *b, tap_rng *r) {
  for (int64_t i = 0; i < b->span; i++) {
    if (!b->member[i]) continue;
    double u = tap_rng_uniform(r, -1.0, 1.0), k = tap_rng_uniform(r, 0.0, 1.0);
    double scale = k < 0.1 ? 10.0 : (k < 0.2 ? 0.01 : 1.0);
    b->v[i] = harness_round(b->desc.dtype, u * scale);
  }
}

void harness_set_element(harness_buffer *b, int64_t linear, double v) {
  b->v[harness_offset(&b->desc, linear)] = harness_round(b->desc.dtype, v);
}

uint64_t harness_seed(const char *name) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *name; name++) h = (h ^ (unsigned char)*name) * 1099511628211ull;
  return h;
}
