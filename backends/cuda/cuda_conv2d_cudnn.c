/*
 * conv2d on the CUDA plugin: the cuDNN description shared by the forward and
 * backward plans (see cuda_conv2d_cudnn.h).
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>

#include "backends/cuda/cuda_conv2d_cudnn.h"
#include "backends/cuda/cuda_op.h"

/* A failure in the BAD_PARAM or NOT_SUPPORTED families (cuDNN 9 groups its
 * codes by thousands) means cuDNN cannot take this problem; any other is a
 * real failure (cuDNN unusable, out of memory). */
static int cudnn_rejects(cudnnStatus_t e) {
  return (int)e / 1000 == 2 || (int)e / 1000 == 3;
}

int adnn_cuda__conv2d_cudnn_ok(adnn_cuda__conv2d_cudnn *d, cudnnStatus_t e, const char *what,
                               adnn_status *st) {
  *st = ADNN_STATUS_SUCCESS;
  if (e == CUDNN_STATUS_SUCCESS) return 1;
  if (cudnn_rejects(e))
    snprintf(d->unusable, sizeof d->unusable, "%s failed: %s (%d)", what, cudnnGetErrorString(e),
             (int)e);
  else
    *st = adnn_cuda__fail_cudnn(e, what);
  return 0;
}

void adnn_cuda__conv2d_cudnn_destroy(adnn_cuda__conv2d_cudnn *d) {
  if (d->xd) cudnnDestroyTensorDescriptor(d->xd);
  if (d->yd) cudnnDestroyTensorDescriptor(d->yd);
  if (d->wd) cudnnDestroyFilterDescriptor(d->wd);
  if (d->cd) cudnnDestroyConvolutionDescriptor(d->cd);
  d->xd = d->yd = NULL;
  d->wd = NULL;
  d->cd = NULL;
  d->described = 0;
}

adnn_status adnn_cuda__conv2d_cudnn_describe(adnn_plugin_plan *plan, const adnn_plugin_conv2d *p,
                                             const adnn_cuda__conv2d_layout *lay,
                                             const char *y_name, adnn_cuda__conv2d_cudnn *d,
                                             int *ok) {
  /* A widened F16/BF16 plan gives cuDNN F32 copies of its data. */
  const adnn_dtype op_dtype = plan->op->dtype;
  const adnn_dtype dtype = lay->widened ? ADNN_DTYPE_F32 : op_dtype;
  const int f64 = dtype == ADNN_DTYPE_F64;
  const int lowp = op_dtype == ADNN_DTYPE_F16 || op_dtype == ADNN_DTYPE_BF16;
  *ok = 0;

  /* cuDNN's legacy API takes int sizes: every extent and element count must
   * fit (element counts; byte offsets are cuDNN's business). */
  const int64_t sizes[] = {p->N, p->C, lay->xh, lay->xw, p->K, p->Cg, p->R, p->S, p->P, p->Q,
                           p->stride_h, p->stride_w, p->dilation_h, p->dilation_w, lay->pad_h,
                           lay->pad_w, p->groups, p->N * p->C * lay->xh * lay->xw,
                           p->K * p->Cg * p->R * p->S, p->N * p->K * p->P * p->Q};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    if (sizes[i] > INT_MAX) {
      snprintf(d->unusable, sizeof d->unusable, "a size exceeds cuDNN's int range");
      return ADNN_STATUS_SUCCESS;
    }

  adnn_status st = adnn_cuda__context_cudnn(plan->ctx, &d->handle);
  if (st != ADNN_STATUS_SUCCESS) return st;
  const cudnnDataType_t dt = adnn_cuda__conv2d_cudnn_data_type(dtype);
  const cudnnDataType_t compute = adnn_cuda__conv2d_cudnn_compute_type(dtype);
  const cudnnTensorFormat_t fmt = adnn_cuda__conv2d_cudnn_format(lay);
  char y_what[64];
  snprintf(y_what, sizeof y_what, "cudnnSetTensor4dDescriptor(%s)", y_name);
  d->described = 1;
  st = ADNN_STATUS_SUCCESS;
#define OK_(call, what) adnn_cuda__conv2d_cudnn_ok(d, (call), (what), &st)
  int good = OK_(cudnnCreateTensorDescriptor(&d->xd), "cudnnCreateTensorDescriptor") &&
             OK_(cudnnCreateTensorDescriptor(&d->yd), "cudnnCreateTensorDescriptor") &&
             OK_(cudnnCreateFilterDescriptor(&d->wd), "cudnnCreateFilterDescriptor") &&
             OK_(cudnnCreateConvolutionDescriptor(&d->cd), "cudnnCreateConvolutionDescriptor") &&
             OK_(cudnnSetTensor4dDescriptor(d->xd, fmt, dt, (int)p->N, (int)p->C, (int)lay->xh,
                                            (int)lay->xw),
                 "cudnnSetTensor4dDescriptor(x)") &&
             OK_(cudnnSetTensor4dDescriptor(d->yd, fmt, dt, (int)p->N, (int)p->K, (int)p->P,
                                            (int)p->Q),
                 y_what) &&
             OK_(cudnnSetFilter4dDescriptor(d->wd, dt, fmt, (int)p->K, (int)p->Cg, (int)p->R,
                                            (int)p->S),
                 "cudnnSetFilter4dDescriptor") &&
             OK_(cudnnSetConvolution2dDescriptor(d->cd, (int)lay->pad_h, (int)lay->pad_w,
                                                 (int)p->stride_h, (int)p->stride_w,
                                                 (int)p->dilation_h, (int)p->dilation_w,
                                                 CUDNN_CROSS_CORRELATION, compute),
                 "cudnnSetConvolution2dDescriptor") &&
             OK_(cudnnSetConvolutionGroupCount(d->cd, (int)p->groups),
                 "cudnnSetConvolutionGroupCount");
  /* Without TF32 the descriptor stays FMA: DEFAULT could mean TF32 on Ampere
   * and newer. F64 has no reduced-precision math to exclude. F16/BF16 data
   * take tensor-op math: the products of 16-bit inputs are exact in the F32
   * accumulator, so tensor cores lose nothing against FMA; their widened F32
   * copies have at most 11 significant bits, which TF32 holds exactly, so
   * tensor-op math is exact on them too (the context's TF32 opt-in is about
   * F32 data and does not apply). */
  d->lowp = lowp;
  d->tf32 = !f64 && !lowp && (plan->op->flags & ADNN_CONTEXT_ALLOW_TF32);
  const cudnnMathType_t math = f64 ? CUDNN_DEFAULT_MATH
                               : (d->tf32 || lowp) ? CUDNN_TENSOR_OP_MATH
                                                   : CUDNN_FMA_MATH;
  good = good && OK_(cudnnSetConvolutionMathType(d->cd, math), "cudnnSetConvolutionMathType");
  /* cuDNN must see the forward problem adnn validated: y's (or dy's) dims are
   * the forward output's. */
  int on = 0, oc = 0, oh = 0, ow = 0;
  good = good && OK_(cudnnGetConvolution2dForwardOutputDim(d->cd, d->xd, d->wd, &on, &oc, &oh,
                                                           &ow),
                     "cudnnGetConvolution2dForwardOutputDim");
#undef OK_
  if (good && (on != p->N || oc != p->K || oh != p->P || ow != p->Q)) {
    snprintf(d->unusable, sizeof d->unusable,
             "cuDNN computes a %dx%dx%dx%d output instead of %lldx%lldx%lldx%lld", on, oc, oh, ow,
             (long long)p->N, (long long)p->K, (long long)p->P, (long long)p->Q);
    good = 0;
  }
  *ok = good;
  return st;
}
