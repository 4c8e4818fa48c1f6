/*
 * conv2d backward data and backward weights on the CUDA plugin: not
 * implemented yet. Plan creation refuses every problem with
 * ADNN_STATUS_NOT_SUPPORTED, so that the plugin links (every manifest row
 * needs its adnn_cuda__<name>_op) and callers get a clear status; the cuDNN
 * implementation (cudnnConvolutionBackwardData / BackwardFilter /
 * BackwardBias) replaces this file.
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

static adnn_status conv2d_backward_create(adnn_plugin_plan *plan) {
  (void)plan;
  return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                               "cuda: conv2d backward is not implemented yet");
}

static adnn_status conv2d_backward_select(adnn_plugin_plan *plan, int32_t candidate) {
  (void)plan;
  (void)candidate;
  return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                               "cuda: conv2d backward is not implemented yet");
}

static adnn_status conv2d_backward_execute(adnn_plugin_plan *plan, const void *const *inputs,
                                           void *const *outputs) {
  (void)plan;
  (void)inputs;
  (void)outputs;
  return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                               "cuda: conv2d backward is not implemented yet");
}

const adnn_cuda__op_impl adnn_cuda__conv2d_backward_data_op = {
    .create = conv2d_backward_create,
    .select = conv2d_backward_select,
    .execute = conv2d_backward_execute,
    .destroy = adnn_cuda__plan_free_impl,
};

const adnn_cuda__op_impl adnn_cuda__conv2d_backward_weights_op = {
    .create = conv2d_backward_create,
    .select = conv2d_backward_select,
    .execute = conv2d_backward_execute,
    .destroy = adnn_cuda__plan_free_impl,
};
