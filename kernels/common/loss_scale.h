/*
 * The one scalar definition of loss scaling's factor (doc/ops.md "Loss
 * scaling"), shared by the reference, the CPU and the CUDA kernels so that
 * all three multiply by the same F32 number. SCALE multiplies by the scale
 * itself; UNSCALE by 1 / scale computed in double and rounded once to F32,
 * as PyTorch's GradScaler forms its inv_scale. A scale of 0 makes UNSCALE's
 * factor infinite and a NaN scale a NaN factor: the products are then not
 * finite and found_inf is set, which is what a caller wants to hear about a
 * broken scale.
 */
#ifndef ADNN_KERNELS_COMMON_LOSS_SCALE_H
#define ADNN_KERNELS_COMMON_LOSS_SCALE_H

#ifdef __CUDACC__
#define ADNN_LS_FN static inline __host__ __device__
#else
#define ADNN_LS_FN static inline
#endif

/* unscale: 0 (SCALE) or 1 (UNSCALE), adnn_loss_scale_kind's values. */
ADNN_LS_FN float adnn_loss_scale_factor(int unscale, float scale) {
  return unscale ? (float)(1.0 / (double)scale) : scale;
}

#endif
