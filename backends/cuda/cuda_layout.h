/*
 * Helpers that every op file of the CUDA plugin uses to prepare and check its
 * kernel launches (cuda_layout.c): the memory order of a 4-D tensor, the
 * launch configuration of a context, and the mapping of a launch status to an
 * adnn status. They depend only on cuda_internal.h and the kernels' header,
 * so that no op file depends on another.
 */
#ifndef ADNN_CUDA_LAYOUT_H
#define ADNN_CUDA_LAYOUT_H

#include "backends/cuda/cuda_internal.h"
#include "kernels/cuda/cuda_kernels.h"

/* The order of the 4 dims of t from the largest stride to the smallest (ties
 * keep the logical order; size-1 dims count as the slowest): the memory order
 * in which kernels number the elements of a 4-D output. */
void adnn_cuda__memory_order4(const adnn_tensor_desc *t, adnn_cuda_memory_order *order);

/* Reads the launch configuration of the context: its stream, and the SM count
 * and threads per SM of its device (which size every grid). */
adnn_status adnn_cuda__launch_config(adnn_plugin_context *ctx, adnn_cuda_launch_config *l);

/* Maps the status of a kernel launch to an adnn status, recording "launching
 * the <what> kernel" and the CUDA error for adnn_last_error() on failure. */
adnn_status adnn_cuda__check_launch(cudaError_t err, const char *what);

#endif /* ADNN_CUDA_LAYOUT_H */
