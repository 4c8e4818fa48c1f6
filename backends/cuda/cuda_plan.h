/*
 * CUDA plugin plans (cuda_plan.c: every op but conv2d; cuda_conv2d.c: conv2d).
 */
#ifndef ADNN_CUDA_PLAN_H
#define ADNN_CUDA_PLAN_H

#include "cuda_internal.h"
#include "kernels/cuda/cuda_kernels.h"

typedef struct cuda_conv2d_plan cuda_conv2d_plan;

struct adnn_plugin_plan {
  adnn_plugin_context *ctx;
  adnn_plugin_op op;
  adnn_cuda_launch launch;
  int f64;
  char algorithm[64];
  void *workspace; /* device memory, allocated at creation */
  size_t workspace_bytes;
  /* per op */
  adnn_cuda_nd nd; /* activation, binary */
  int64_t n;
  int packed;
  adnn_cuda_pool2d pool;
  adnn_cuda_softmax softmax;
  adnn_cuda_norm norm;
  adnn_cuda_batchnorm bn;
  cuda_conv2d_plan *conv;
};

/* Plan slots (cuda_plan.c). */
adnn_status cuda__plan_create(adnn_plugin_context *ctx, const adnn_plugin_op *op,
                              adnn_plugin_plan **out);
adnn_status cuda__plan_execute(adnn_plugin_plan *plan, const void *const *inputs, void *output);
void cuda__plan_destroy(adnn_plugin_plan *plan);
void cuda__plan_describe(const adnn_plugin_plan *plan, const char **algorithm,
                         size_t *workspace_bytes);

/* conv2d (cuda_conv2d.c). create fills p->conv, p->algorithm, p->workspace. */
adnn_status cuda__conv2d_create(adnn_plugin_plan *p);
/* The plan_candidates slot: conv2d's cuDNN algorithms and "direct". */
adnn_status cuda__plan_candidates(adnn_plugin_context *ctx, const adnn_plugin_op *op,
                                  adnn_plugin_candidate *out, int32_t max, int32_t *count);
adnn_status cuda__conv2d_execute(adnn_plugin_plan *p, const void *const *inputs, void *output);
void cuda__conv2d_destroy(adnn_plugin_plan *p);

/* Helpers shared by both files. */

/* Collapses dims of size 1 and merges neighbouring dims that are contiguous
 * with each other in all `count` stride lists (strides[t][i] ==
 * strides[t][i+1] * dims[i+1] for every t); the row-major linear index maps to
 * the same elements before and after. Returns whether the result is one dim of
 * stride 1 in every list (or no dim at all). */
int cuda__coalesce(int rank, const int64_t *dims, int count, const int64_t *const *strides,
                   adnn_cuda_nd *out);

/* The order of the 4 dims of t from the largest stride to the smallest
 * (ties keep the logical order): the memory order of y for the kernels'
 * output-element decomposition. */
void cuda__memory_order4(const adnn_tensor_desc *t, int32_t order[4]);

/* The context's launch configuration (stream, SM count, threads per SM). */
adnn_status cuda__launch_config(adnn_plugin_context *ctx, adnn_cuda_launch *l);

/* Maps a kernel launch status to an adnn status ("launching the <what> kernel"). */
adnn_status cuda__check_launch(cudaError_t err, const char *what);

#endif /* ADNN_CUDA_PLAN_H */
