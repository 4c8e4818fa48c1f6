/*
 * Launch helpers shared by the op files of the CUDA plugin (see cuda_layout.h).
 */
#include "config.h"

#include <stdio.h>

#include "backends/cuda/cuda_layout.h"

void adnn_cuda__memory_order4(const adnn_tensor_desc *t, adnn_cuda_memory_order *order) {
  int32_t *o = order->dims;
  for (int i = 0; i < 4; i++) o[i] = i;
  /* Insertion sort by stride, descending; size-1 dims count as the slowest
   * (their index is always 0, wherever they are placed). */
  for (int i = 1; i < 4; i++) {
    const int32_t v = o[i];
    const int64_t sv = t->dims[v] == 1 ? INT64_MAX : t->strides[v];
    int j = i - 1;
    while (j >= 0) {
      const int64_t sj = t->dims[o[j]] == 1 ? INT64_MAX : t->strides[o[j]];
      if (sj >= sv) break;
      o[j + 1] = o[j];
      j--;
    }
    o[j + 1] = v;
  }
}

adnn_status adnn_cuda__launch_config(adnn_plugin_context *ctx, adnn_cuda_launch_config *l) {
  int sms = 0, tps = 0;
  cudaError_t err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx->ordinal);
  if (err != cudaSuccess)
    return adnn_cuda__fail_runtime(err, "cudaDeviceGetAttribute(MultiProcessorCount)");
  err = cudaDeviceGetAttribute(&tps, cudaDevAttrMaxThreadsPerMultiProcessor, ctx->ordinal);
  if (err != cudaSuccess)
    return adnn_cuda__fail_runtime(err, "cudaDeviceGetAttribute(MaxThreadsPerMultiProcessor)");
  l->stream = ctx->stream;
  /* A device that answers 0 would make every grid empty; one SM and the
   * common 1024 threads per SM keep the launches valid. */
  l->sm_count = sms > 0 ? sms : 1;
  l->max_threads_per_sm = tps > 0 ? tps : 1024;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_cuda__check_launch(cudaError_t err, const char *what) {
  if (err == cudaSuccess) return ADNN_STATUS_SUCCESS;
  char buf[128];
  snprintf(buf, sizeof buf, "launching the %s kernel", what);
  return adnn_cuda__fail_runtime(err, buf);
}
