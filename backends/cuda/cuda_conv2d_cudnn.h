/*
 * conv2d on the CUDA plugin: the cuDNN description that the forward plan
 * (cuda_conv2d.c) and the backward plans (cuda_conv2d_backward.c) share. All
 * three directions describe the same forward problem to cuDNN (x, y, w and the
 * convolution; the backward directions read dx like x, dy like y, dw like w),
 * so the descriptors, the math type and the output size check are made here
 * once; each plan adds its own descriptors (the forward's fused bias and
 * activation, the backward weights' bias gradient) in its own file.
 */
#ifndef ADNN_CUDA_CONV2D_CUDNN_H
#define ADNN_CUDA_CONV2D_CUDNN_H

#include <cudnn.h>

#include <adnn/plugin.h>

#include "backends/cuda/cuda_conv2d.h"

/* The shared part of a conv2d plan's cuDNN description. */
typedef struct adnn_cuda__conv2d_cudnn {
  int described;      /* the descriptors below exist */
  char unusable[256]; /* non-empty: why cuDNN cannot run this problem */
  cudnnHandle_t handle;
  cudnnTensorDescriptor_t xd, yd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  int tf32; /* the context allows TF32 for this F32 problem */
  int lowp; /* F16/BF16 data: tensor-op math, F32 compute (see describe) */
} adnn_cuda__conv2d_cudnn;

/* Checks a cuDNN call of a description or a ranking: on success returns 1;
 * when cuDNN rejects the problem (a status of the BAD_PARAM or NOT_SUPPORTED
 * families), records why in d->unusable and returns 0 with *st SUCCESS; on a
 * real failure returns 0 with *st the failure (ADNN_STATUS_* as
 * adnn_cuda__fail_cudnn maps it, with its message). */
int adnn_cuda__conv2d_cudnn_ok(adnn_cuda__conv2d_cudnn *d, cudnnStatus_t e, const char *what,
                               adnn_status *st);

/* The cuDNN data type and tensor format of a plan of dtype `f64` (nonzero:
 * F64, else F32) in the layout class of `lay`. */
static inline cudnnDataType_t adnn_cuda__conv2d_cudnn_dtype(int f64) {
  return f64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
}
/* The cuDNN data type of x, w and y for a forward plan of `dtype` (F16 and
 * BF16 included; the convolution's compute type is
 * adnn_cuda__conv2d_cudnn_compute_type's). */
static inline cudnnDataType_t adnn_cuda__conv2d_cudnn_data_type(adnn_dtype dtype) {
  switch (dtype) {
    case ADNN_DTYPE_F64: return CUDNN_DATA_DOUBLE;
    case ADNN_DTYPE_F16: return CUDNN_DATA_HALF;
    case ADNN_DTYPE_BF16: return CUDNN_DATA_BFLOAT16;
    default: return CUDNN_DATA_FLOAT;
  }
}
/* The convolution descriptor's compute type: DOUBLE for F64, FLOAT
 * otherwise, so that F16 and BF16 run cuDNN's PSEUDO_HALF_CONFIG and
 * PSEUDO_BFLOAT16_CONFIG (16-bit tensors, F32 accumulation). */
static inline cudnnDataType_t adnn_cuda__conv2d_cudnn_compute_type(adnn_dtype dtype) {
  return dtype == ADNN_DTYPE_F64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
}
static inline cudnnTensorFormat_t adnn_cuda__conv2d_cudnn_format(
    const adnn_cuda__conv2d_layout *lay) {
  return lay->nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
}

/* Describes forward problem p, seen through layout plan `lay`, to cuDNN:
 * the int-range check of every size, the context's handle, the x, y, filter
 * and convolution descriptors (y's set call named "cudnnSetTensor4dDescriptor
 * (<y_name>)" in messages), the group count, the math type (FMA for F32
 * unless the plan's op allows TF32; tensor-op math for F16/BF16, whose
 * compute type is F32; a widened layout describes F32 data) and the check
 * that cuDNN computes p's
 * output size. Sets *ok to 1 when all of it succeeded. Otherwise *ok is 0
 * and either d->unusable says why cuDNN cannot take the problem (returns
 * SUCCESS) or the return value is a real failure; in both cases the caller
 * releases what was made with adnn_cuda__conv2d_cudnn_destroy (or its own
 * destroy that calls it). */
adnn_status adnn_cuda__conv2d_cudnn_describe(adnn_plugin_plan *plan, const adnn_plugin_conv2d *p,
                                             const adnn_cuda__conv2d_layout *lay,
                                             const char *y_name, adnn_cuda__conv2d_cudnn *d,
                                             int *ok);

/* Releases the descriptors of d (those made; NULL ones skipped) and marks d
 * not described. The handle belongs to the context and is kept. */
void adnn_cuda__conv2d_cudnn_destroy(adnn_cuda__conv2d_cudnn *d);

#endif /* ADNN_CUDA_CONV2D_CUDNN_H */
