/*
 * quantize and dequantize on the CUDA plugin: not implemented yet. The
 * entries exist so that the plugin links (every op of the manifest needs
 * one); plan creation refuses both ops with NOT_SUPPORTED, which the core
 * reports and the conformance harness counts as a skip. The kernel, when it
 * is written, is to use kernels/common/quantize.h's definition (__fdiv_rn
 * for the division) to agree with the CPU bit for bit.
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

static adnn_status quantize_create(adnn_plugin_plan *plan) {
  (void)plan;
  return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                               "cuda: quantize and dequantize are not implemented on the cuda "
                               "backend yet");
}

static adnn_status quantize_select(adnn_plugin_plan *plan, int32_t candidate) {
  (void)plan;
  (void)candidate;
  return ADNN_STATUS_NOT_SUPPORTED;
}

static adnn_status quantize_execute(adnn_plugin_plan *plan, const void *const *in,
                                    void *const *out) {
  (void)plan;
  (void)in;
  (void)out;
  return ADNN_STATUS_NOT_SUPPORTED;
}

static void quantize_destroy(adnn_plugin_plan *plan) { (void)plan; }

const adnn_cuda__op_impl adnn_cuda__quantize_op = {
    .create = quantize_create,
    .select = quantize_select,
    .execute = quantize_execute,
    .destroy = quantize_destroy,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32),
};

const adnn_cuda__op_impl adnn_cuda__dequantize_op = {
    .create = quantize_create,
    .select = quantize_select,
    .execute = quantize_execute,
    .destroy = quantize_destroy,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_I8) | ADNN_OP_DTYPE(ADNN_DTYPE_U8),
};
