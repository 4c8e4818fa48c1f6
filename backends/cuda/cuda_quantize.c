/*
 * quantize and dequantize on the CUDA plugin: our kernels
 * (kernels/cuda/quantize.cu, "cuda:quantize" and "cuda:dequantize"), one
 * thread per element over the coalesced layout of x and y, any strides, per
 * tensor or per channel. Each element is kernels/common/quantize.h's scalar
 * definition, the function the reference and the CPU kernels run, so the
 * three agree bit for bit (the conformance suite compares them exactly).
 * The per-channel scales and zero points are execute inputs in device
 * memory; like the CPU plugin, the kernel does not validate them (a NaN
 * scale gives the zero point, an out-of-range zero point saturates).
 */
#include "config.h"

#include "backends/cuda/cuda_op.h"

typedef struct quantize_plan {
  /* The problem, read as the op kind's own struct (the two have the same
   * fields, so x, y and count are at the same places in both). */
  union {
    adnn_plugin_quantize q;
    adnn_plugin_dequantize d;
  } p;
  adnn_cuda_elementwise_layout layout; /* strides[0] x, strides[1] y */
} quantize_plan;

static adnn_status quantize_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(quantize_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  quantize_plan *q = plan->impl;
  const adnn_tensor_desc *x, *y;
  if (plan->op->kind == ADNN_PLUGIN_OP_QUANTIZE) {
    adnn_plugin_op_problem(plan->op, &q->p.q, sizeof q->p.q);
    x = &q->p.q.x;
    y = &q->p.q.y;
  } else {
    adnn_plugin_op_problem(plan->op, &q->p.d, sizeof q->p.d);
    x = &q->p.d.x;
    y = &q->p.d.y;
  }
  const int64_t *strides[2] = {x->strides, y->strides};
  q->layout.contiguous = adnn_nd_coalesce(&q->layout.nd, x->rank, x->dims, 2, strides);
  return ADNN_STATUS_SUCCESS;
}

static adnn_status quantize_select(adnn_plugin_plan *plan, int32_t candidate) {
  return adnn_cuda__plan_select_single(plan, candidate, "cuda:quantize");
}

static adnn_status dequantize_select(adnn_plugin_plan *plan, int32_t candidate) {
  return adnn_cuda__plan_select_single(plan, candidate, "cuda:dequantize");
}

/* Inputs {x[, scales, zero_points]} (the last two when p.axis >= 0), output {y}. */
static adnn_status quantize_execute(adnn_plugin_plan *plan, const void *const *in,
                                    void *const *out) {
  const quantize_plan *q = plan->impl;
  const int pc = q->p.q.axis >= 0;
  return adnn_cuda__check_launch(
      adnn_cuda_quantize_launch(&plan->launch, &q->p.q, &q->layout, in[0], pc ? in[1] : NULL,
                                pc ? in[2] : NULL, out[0]),
      "quantize");
}

static adnn_status dequantize_execute(adnn_plugin_plan *plan, const void *const *in,
                                      void *const *out) {
  const quantize_plan *q = plan->impl;
  const int pc = q->p.d.axis >= 0;
  return adnn_cuda__check_launch(
      adnn_cuda_dequantize_launch(&plan->launch, &q->p.d, &q->layout, in[0], pc ? in[1] : NULL,
                                  pc ? in[2] : NULL, out[0]),
      "dequantize");
}

const adnn_cuda__op_impl adnn_cuda__quantize_op = {
    .create = quantize_create,
    .select = quantize_select,
    .execute = quantize_execute,
    .destroy = adnn_cuda__plan_free_impl,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32),
};

const adnn_cuda__op_impl adnn_cuda__dequantize_op = {
    .create = quantize_create,
    .select = dequantize_select,
    .execute = dequantize_execute,
    .destroy = adnn_cuda__plan_free_impl,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_I8) | ADNN_OP_DTYPE(ADNN_DTYPE_U8),
};
