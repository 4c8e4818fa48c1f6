/*
 * The DLPack ABI, written from the specification's documented layout
 * (https://dmlc.github.io/dlpack/latest/c_api.html): the unversioned
 * DLManagedTensor exchanged through a PyCapsule named "dltensor", renamed
 * "used_dltensor" by the consumer that takes ownership. Only what the binding
 * uses is declared; the layouts must match the specification exactly, since
 * NumPy and PyTorch read and write these structs.
 */
#ifndef ADNN_PY_DLPACK_ABI_H
#define ADNN_PY_DLPACK_ABI_H

#include <stdint.h>

/* Device types (DLDeviceType) the binding recognizes. */
enum {
  ADNN_DL_CPU = 1,
  ADNN_DL_CUDA = 2,
  ADNN_DL_CUDA_HOST = 3 /* pinned host memory: addressable by the CPU */
};

/* Type codes (DLDataTypeCode). */
enum { ADNN_DL_INT = 0, ADNN_DL_UINT = 1, ADNN_DL_FLOAT = 2, ADNN_DL_BFLOAT = 4 };

typedef struct adnn_dl_device {
  int32_t device_type; /* DLDeviceType: an enum, int-sized in the C ABI */
  int32_t device_id;
} adnn_dl_device;

typedef struct adnn_dl_dtype {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} adnn_dl_dtype;

typedef struct adnn_dl_tensor {
  void *data;
  adnn_dl_device device;
  int32_t ndim;
  adnn_dl_dtype dtype;
  int64_t *shape;
  int64_t *strides; /* in elements; NULL means compact row-major */
  uint64_t byte_offset;
} adnn_dl_tensor;

typedef struct adnn_dl_managed_tensor {
  adnn_dl_tensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct adnn_dl_managed_tensor *self);
} adnn_dl_managed_tensor;

#define ADNN_DL_CAPSULE_NAME "dltensor"
#define ADNN_DL_USED_CAPSULE_NAME "used_dltensor"

#endif /* ADNN_PY_DLPACK_ABI_H */
