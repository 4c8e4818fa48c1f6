/*
 * kernels/common/float16.h's F16/BF16 <-> F32/F64 conversions for device
 * code: the same functions (plain C on integers and memcpy, which CUDA
 * device code has), compiled for host and device, so the CUDA kernels give
 * exactly the bits the reference and the CPU kernels give (RNE in one
 * rounding, NaN quiet with its sign, subnormals kept, F16 overflow to
 * infinity), whatever the device's flush-to-zero mode.
 */
#ifndef ADNN_KERNELS_CUDA_FLOAT16_CUH
#define ADNN_KERNELS_CUDA_FLOAT16_CUH

#define ADNN_F16_FN static inline __host__ __device__
#include "kernels/common/float16.h"

#endif /* ADNN_KERNELS_CUDA_FLOAT16_CUH */
