/* Tensor descriptors: packed strides, explicit strides, validation, counts,
 * spans, and that nothing is written on failure. */
#include <stdint.h>
#include <string.h>

#include <adnn.h>

#include "t/tap.h"

/* Fills a descriptor with a recognisable pattern, to prove failures leave it. */
static void scribble(adnn_tensor_desc *d) { memset(d, 0xA5, sizeof *d); }
static int untouched(const adnn_tensor_desc *d) {
  const unsigned char *p = (const unsigned char *)d;
  for (size_t i = 0; i < sizeof *d; i++)
    if (p[i] != 0xA5) return 0;
  return 1;
}

static void check_strides(const adnn_tensor_desc *d, const int64_t *expected, int rank,
                          const char *what) {
  int same = 1;
  for (int i = 0; i < rank; i++)
    if (d->strides[i] != expected[i]) {
      diag("  %s: strides[%d] = %lld, expected %lld", what, i, (long long)d->strides[i],
           (long long)expected[i]);
      same = 0;
    }
  ok(same, "%s: strides as expected", what);
}

int main(void) {
  adnn_tensor_desc d;
  int64_t count;
  size_t bytes;

  /* Packed row-major, rank 4 (NCHW 2x3x4x5). */
  int64_t nchw[4] = {2, 3, 4, 5};
  is_status(adnn_tensor_desc_init(&d, ADNN_DTYPE_F32, 4, nchw), ADNN_STATUS_SUCCESS,
            "init 2x3x4x5 f32");
  is_int(d.dtype, ADNN_DTYPE_F32, "dtype stored");
  is_int(d.rank, 4, "rank stored");
  ok(memcmp(d.dims, nchw, sizeof nchw) == 0, "dims stored");
  check_strides(&d, (const int64_t[]){60, 20, 5, 1}, 4, "packed 2x3x4x5");
  is_status(adnn_tensor_desc_validate(&d), ADNN_STATUS_SUCCESS, "validate");
  is_status(adnn_tensor_desc_element_count(&d, &count), ADNN_STATUS_SUCCESS, "element_count");
  is_int(count, 120, "120 elements");
  is_status(adnn_tensor_desc_span_bytes(&d, &bytes), ADNN_STATUS_SUCCESS, "span_bytes");
  is_int(bytes, 480, "span 480 bytes");
  is_int(adnn_tensor_desc_is_packed(&d), 1, "is_packed");
  for (int i = d.rank; i < ADNN_MAX_RANK; i++)
    if (d.dims[i] != 0 || d.strides[i] != 0) {
      ok(0, "unused dims/strides are zero (index %d: %lld/%lld)", i, (long long)d.dims[i],
         (long long)d.strides[i]);
      break;
    } else if (i == ADNN_MAX_RANK - 1) {
      ok(1, "unused dims/strides are zero");
    }

  /* F64 doubles the span. */
  is_status(adnn_tensor_desc_init(&d, ADNN_DTYPE_F64, 4, nchw), ADNN_STATUS_SUCCESS, "init f64");
  adnn_tensor_desc_span_bytes(&d, &bytes);
  is_int(bytes, 960, "f64 span 960 bytes");

  /* Same logical NCHW tensor laid out as NHWC: strides N=H*W*C, C=1, H=W*C, W=C. */
  int64_t nhwc_strides[4] = {60, 1, 15, 3};
  is_status(adnn_tensor_desc_init_strided(&d, ADNN_DTYPE_F32, 4, nchw, nhwc_strides),
            ADNN_STATUS_SUCCESS, "init_strided NCHW dims with NHWC strides");
  check_strides(&d, nhwc_strides, 4, "NHWC strides kept");
  adnn_tensor_desc_element_count(&d, &count);
  is_int(count, 120, "NHWC: 120 elements");
  is_status(adnn_tensor_desc_span_bytes(&d, &bytes), ADNN_STATUS_SUCCESS, "NHWC span");
  is_int(bytes, 480, "NHWC: span 480 bytes (dense, other order)");
  is_int(adnn_tensor_desc_is_packed(&d), 0, "NHWC strides are not packed row-major");

  /* Padded rows: span counts to one past the last element, not dims*strides. */
  int64_t dims2[2] = {3, 4}, padded[2] = {10, 1};
  is_status(adnn_tensor_desc_init_strided(&d, ADNN_DTYPE_F64, 2, dims2, padded),
            ADNN_STATUS_SUCCESS, "3x4 with row stride 10");
  adnn_tensor_desc_span_bytes(&d, &bytes);
  is_int(bytes, (2 * 10 + 3 + 1) * 8, "padded span is (2*10+3+1) elements");
  is_int(adnn_tensor_desc_is_packed(&d), 0, "padded is not packed");

  /* Broadcast (stride 0) is allowed for inputs. */
  int64_t bstr[2] = {0, 1};
  is_status(adnn_tensor_desc_init_strided(&d, ADNN_DTYPE_F32, 2, dims2, bstr),
            ADNN_STATUS_SUCCESS, "stride 0 is allowed");
  adnn_tensor_desc_span_bytes(&d, &bytes);
  is_int(bytes, 16, "broadcast rows span one row");

  /* Rank 0: a scalar. */
  is_status(adnn_tensor_desc_init(&d, ADNN_DTYPE_F64, 0, NULL), ADNN_STATUS_SUCCESS,
            "rank 0 with NULL dims");
  is_int(d.rank, 0, "rank 0 stored");
  adnn_tensor_desc_element_count(&d, &count);
  is_int(count, 1, "rank 0 has 1 element");
  adnn_tensor_desc_span_bytes(&d, &bytes);
  is_int(bytes, 8, "rank 0 f64 spans 8 bytes");
  is_int(adnn_tensor_desc_is_packed(&d), 1, "rank 0 is packed");

  /* Zero dims: empty tensor, span 0. */
  int64_t zero[3] = {2, 0, 3};
  is_status(adnn_tensor_desc_init(&d, ADNN_DTYPE_F32, 3, zero), ADNN_STATUS_SUCCESS,
            "2x0x3 is valid");
  is_status(adnn_tensor_desc_element_count(&d, &count), ADNN_STATUS_SUCCESS, "count of 2x0x3");
  is_int(count, 0, "2x0x3 has 0 elements");
  is_status(adnn_tensor_desc_span_bytes(&d, &bytes), ADNN_STATUS_SUCCESS, "span of 2x0x3");
  is_int(bytes, 0, "2x0x3 spans 0 bytes");
  is_int(adnn_tensor_desc_is_packed(&d), 1,
         "a descriptor made by adnn_tensor_desc_init with a zero dim is packed");
  /* A zero dim next to a huge one is still empty, not an overflow. */
  int64_t zero_big[2] = {0, INT64_MAX / 2};
  is_status(adnn_tensor_desc_init(&d, ADNN_DTYPE_F64, 2, zero_big), ADNN_STATUS_SUCCESS,
            "0 x huge is an empty tensor, not an overflow");
  adnn_tensor_desc_span_bytes(&d, &bytes);
  is_int(bytes, 0, "0 x huge spans 0 bytes");

  /* Rank 8 (max) is fine. */
  int64_t r8[8] = {2, 2, 2, 2, 2, 2, 2, 3};
  is_status(adnn_tensor_desc_init(&d, ADNN_DTYPE_I8, 8, r8), ADNN_STATUS_SUCCESS, "rank 8");
  adnn_tensor_desc_element_count(&d, &count);
  is_int(count, 384, "rank 8: 384 elements");
  is_int(d.strides[0], 192, "rank 8: outer stride 192");

  /* ---- failures leave *desc untouched ---- */
  int64_t neg[2] = {3, -1};
  scribble(&d);
  is_status(adnn_tensor_desc_init(&d, ADNN_DTYPE_F32, 2, neg), ADNN_STATUS_BAD_PARAM,
            "negative dim");
  contains(adnn_last_error(), "dims[1]", "message names dims[1]");
  ok(untouched(&d), "descriptor not written on failure (negative dim)");

  int64_t negs[2] = {4, -1};
  scribble(&d);
  is_status(adnn_tensor_desc_init_strided(&d, ADNN_DTYPE_F32, 2, dims2, negs),
            ADNN_STATUS_BAD_PARAM, "negative stride");
  contains(adnn_last_error(), "strides[1]", "message names strides[1]");
  ok(untouched(&d), "descriptor not written on failure (negative stride)");

  int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  scribble(&d);
  is_status(adnn_tensor_desc_init(&d, ADNN_DTYPE_F32, 9, nine), ADNN_STATUS_BAD_PARAM, "rank 9");
  contains(adnn_last_error(), "rank", "message names rank");
  ok(untouched(&d), "descriptor not written on failure (rank 9)");
  is_status(adnn_tensor_desc_init(&d, ADNN_DTYPE_F32, -1, nine), ADNN_STATUS_BAD_PARAM,
            "rank -1");
  ok(untouched(&d), "descriptor not written on failure (rank -1)");

  scribble(&d);
  is_status(adnn_tensor_desc_init(&d, (adnn_dtype)0, 2, dims2), ADNN_STATUS_BAD_PARAM,
            "dtype 0");
  contains(adnn_last_error(), "dtype", "message names dtype");
  is_status(adnn_tensor_desc_init(&d, (adnn_dtype)42, 2, dims2), ADNN_STATUS_BAD_PARAM,
            "dtype 42");
  ok(untouched(&d), "descriptor not written on failure (unknown dtype)");

  scribble(&d);
  is_status(adnn_tensor_desc_init(&d, ADNN_DTYPE_F32, 2, NULL), ADNN_STATUS_BAD_PARAM_NULL,
            "dims NULL with rank 2");
  contains(adnn_last_error(), "dims", "message names dims");
  is_status(adnn_tensor_desc_init_strided(&d, ADNN_DTYPE_F32, 2, dims2, NULL),
            ADNN_STATUS_BAD_PARAM_NULL, "strides NULL with rank 2");
  contains(adnn_last_error(), "strides", "message names strides");
  ok(untouched(&d), "descriptor not written on failure (NULL arrays)");
  is_status(adnn_tensor_desc_init(NULL, ADNN_DTYPE_F32, 2, dims2), ADNN_STATUS_BAD_PARAM_NULL,
            "desc NULL");
  contains(adnn_last_error(), "desc", "message names desc");

  /* Overflow: element counts and byte spans beyond int64/size_t. */
  int64_t big2[2] = {INT64_MAX / 2, 3};
  scribble(&d);
  is_status(adnn_tensor_desc_init(&d, ADNN_DTYPE_F32, 2, big2), ADNN_STATUS_BAD_PARAM_OVERFLOW,
            "(INT64_MAX/2) x 3 overflows");
  ok(untouched(&d), "descriptor not written on failure (overflow)");
  int64_t big1[1] = {INT64_MAX};
  is_status(adnn_tensor_desc_init(&d, ADNN_DTYPE_F32, 1, big1), ADNN_STATUS_BAD_PARAM_OVERFLOW,
            "INT64_MAX f32 elements overflow the byte size");
  int64_t bytes_over[1] = {INT64_MAX / 4 + 1};
  is_status(adnn_tensor_desc_init(&d, ADNN_DTYPE_F64, 1, bytes_over),
            ADNN_STATUS_BAD_PARAM_OVERFLOW, "INT64_MAX/4+1 f64 elements overflow bytes");
  int64_t fits[1] = {INT64_MAX / 8};
  is_status(adnn_tensor_desc_init(&d, ADNN_DTYPE_F64, 1, fits), ADNN_STATUS_SUCCESS,
            "INT64_MAX/8 f64 elements still fit (a descriptor allocates nothing)");
  ok(untouched(&d) == 0, "and that one was written");
  int64_t sdims[2] = {3, 3}, sbig[2] = {INT64_MAX / 2, 1};
  is_status(adnn_tensor_desc_init_strided(&d, ADNN_DTYPE_F32, 2, sdims, sbig),
            ADNN_STATUS_BAD_PARAM_OVERFLOW, "a huge stride overflows the span");
  contains(adnn_last_error(), "overflow", "message says overflow");

  /* validate / count / span on hand-filled descriptors. */
  adnn_tensor_desc h;
  memset(&h, 0, sizeof h);
  h.dtype = ADNN_DTYPE_F32;
  h.rank = 2;
  h.dims[0] = 4;
  h.dims[1] = 5;
  h.strides[0] = 5;
  h.strides[1] = 1;
  is_status(adnn_tensor_desc_validate(&h), ADNN_STATUS_SUCCESS, "hand-filled 4x5 validates");
  is_int(adnn_tensor_desc_is_packed(&h), 1, "hand-filled 4x5 is packed");
  h.dims[1] = -5;
  is_status(adnn_tensor_desc_validate(&h), ADNN_STATUS_BAD_PARAM, "validate: negative dim");
  is_int(adnn_tensor_desc_is_packed(&h), 0, "is_packed: 0 for an invalid descriptor");
  count = 12345;
  is_status(adnn_tensor_desc_element_count(&h, &count), ADNN_STATUS_BAD_PARAM,
            "element_count of an invalid descriptor");
  is_int(count, 12345, "count not written on failure");
  h.dims[1] = 5;
  h.strides[0] = -5;
  is_status(adnn_tensor_desc_validate(&h), ADNN_STATUS_BAD_PARAM, "validate: negative stride");
  h.strides[0] = 5;
  h.rank = 9;
  is_status(adnn_tensor_desc_validate(&h), ADNN_STATUS_BAD_PARAM, "validate: rank 9");
  is_int(adnn_tensor_desc_is_packed(&h), 0, "is_packed: 0 for rank 9");
  h.rank = 2;
  h.dtype = (adnn_dtype)99;
  is_status(adnn_tensor_desc_validate(&h), ADNN_STATUS_BAD_PARAM, "validate: dtype 99");
  is_int(adnn_tensor_desc_is_packed(&h), 0, "is_packed: 0 for an unknown dtype");
  h.dtype = ADNN_DTYPE_F32;
  h.dims[0] = INT64_MAX;
  h.strides[0] = 5;
  is_status(adnn_tensor_desc_validate(&h), ADNN_STATUS_BAD_PARAM_OVERFLOW,
            "validate: INT64_MAX rows of 5 overflow");
  bytes = 777;
  is_status(adnn_tensor_desc_span_bytes(&h, &bytes), ADNN_STATUS_BAD_PARAM_OVERFLOW,
            "span_bytes: overflow");
  is_int(bytes, 777, "bytes not written on failure");
  /* Elements fit in int64 but bytes do not: packed strides, still invalid. */
  memset(&h, 0, sizeof h);
  h.dtype = ADNN_DTYPE_F64;
  h.rank = 1;
  h.dims[0] = INT64_MAX / 4 + 1;
  h.strides[0] = 1;
  is_status(adnn_tensor_desc_validate(&h), ADNN_STATUS_BAD_PARAM_OVERFLOW,
            "validate: byte size overflow with packed strides");
  is_int(adnn_tensor_desc_is_packed(&h), 0, "is_packed: 0 for a descriptor whose bytes overflow");

  is_status(adnn_tensor_desc_validate(NULL), ADNN_STATUS_BAD_PARAM_NULL, "validate(NULL)");
  is_status(adnn_tensor_desc_element_count(NULL, &count), ADNN_STATUS_BAD_PARAM_NULL,
            "element_count(NULL, &count)");
  is_status(adnn_tensor_desc_init(&d, ADNN_DTYPE_F32, 2, dims2), ADNN_STATUS_SUCCESS, "re-init");
  is_status(adnn_tensor_desc_element_count(&d, NULL), ADNN_STATUS_BAD_PARAM_NULL,
            "element_count(&d, NULL)");
  contains(adnn_last_error(), "count", "message names count");
  is_status(adnn_tensor_desc_span_bytes(&d, NULL), ADNN_STATUS_BAD_PARAM_NULL,
            "span_bytes(&d, NULL)");
  contains(adnn_last_error(), "bytes", "message names bytes");
  is_status(adnn_tensor_desc_span_bytes(NULL, &bytes), ADNN_STATUS_BAD_PARAM_NULL,
            "span_bytes(NULL, &bytes)");
  is_int(adnn_tensor_desc_is_packed(NULL), 0, "is_packed(NULL) is 0");

  /* Every dtype has a size and a name. */
  struct { adnn_dtype t; size_t size; const char *name; } types[] = {
      {ADNN_DTYPE_F32, 4, "f32"}, {ADNN_DTYPE_F64, 8, "f64"}, {ADNN_DTYPE_F16, 2, "f16"},
      {ADNN_DTYPE_BF16, 2, "bf16"}, {ADNN_DTYPE_I8, 1, "i8"}, {ADNN_DTYPE_I32, 4, "i32"}, {ADNN_DTYPE_U8, 1, "u8"}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    is_int(adnn_dtype_size(types[i].t), types[i].size, "adnn_dtype_size(%s)", types[i].name);
    is_str(adnn_dtype_name(types[i].t), types[i].name, "adnn_dtype_name(%d)", (int)types[i].t);
  }
  is_int(adnn_dtype_size((adnn_dtype)0), 0, "adnn_dtype_size(0) is 0");
  is_str(adnn_dtype_name((adnn_dtype)77), "unknown", "adnn_dtype_name(77) is unknown");
  return tap_done();
}
