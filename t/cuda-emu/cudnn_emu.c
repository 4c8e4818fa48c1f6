/* Host stand-ins for the cuDNN calls that need a device: one algorithm is
 * offered (IMPLICIT_GEMM, or IMPLICIT_PRECOMP_GEMM with EMU_PRECOMP=1) and the
 * convolution is computed on the host from the descriptors' own layouts. */
#include <math.h>
#include <stdlib.h>
#include <cudnn.h>

cudnnStatus_t cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t h, int *n) { (void)h; *n = 8; return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
    const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t y, const int req, int *ret, cudnnConvolutionFwdAlgoPerf_t *perf) {
  (void)h, (void)x, (void)w, (void)c, (void)y, (void)req;
  perf[0].algo = getenv("EMU_PRECOMP") ? CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM : CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  perf[0].status = CUDNN_STATUS_SUCCESS; perf[0].mathType = CUDNN_FMA_MATH; perf[0].memory = 0;
  *ret = 1; return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
    const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t y, cudnnConvolutionFwdAlgo_t a, size_t *s) {
  (void)h, (void)x, (void)w, (void)c, (void)y, (void)a; *s = 1000; return CUDNN_STATUS_SUCCESS; }

static void conv(const cudnnTensorDescriptor_t xd, const void *x, const cudnnFilterDescriptor_t wd, const void *w,
                 const cudnnConvolutionDescriptor_t cd, const cudnnTensorDescriptor_t yd, void *y,
                 const void *bias, int relu) {
  cudnnDataType_t dt; int n, c, h, wi, ns, cs, hs, ws;
  cudnnGetTensor4dDescriptor(xd, &dt, &n, &c, &h, &wi, &ns, &cs, &hs, &ws);
  cudnnTensorFormat_t fmt; int k, cg, r, s; cudnnDataType_t fdt;
  cudnnGetFilter4dDescriptor(wd, &fdt, &fmt, &k, &cg, &r, &s);
  int yn, yc, p, q, yns, ycs, yhs, yws;
  cudnnGetTensor4dDescriptor(yd, &dt, &yn, &yc, &p, &q, &yns, &ycs, &yhs, &yws);
  int ph, pw, u, v, dh, dw, g; cudnnConvolutionMode_t mode; cudnnDataType_t ct;
  cudnnGetConvolution2dDescriptor(cd, &ph, &pw, &u, &v, &dh, &dw, &mode, &ct);
  cudnnGetConvolutionGroupCount(cd, &g);
  long fks, fcs, frs, fss; /* filter strides */
  if (fmt == CUDNN_TENSOR_NCHW) { fss = 1; frs = s; fcs = (long)r * s; fks = (long)cg * r * s; }
  else { fcs = 1; fss = cg; frs = (long)s * cg; fks = (long)r * s * cg; }
  int f64 = dt == CUDNN_DATA_DOUBLE, kg = k / g;
  for (int in = 0; in < n; in++) for (int ik = 0; ik < k; ik++) for (int ip = 0; ip < p; ip++) for (int iq = 0; iq < q; iq++) {
    double acc = 0; int grp = ik / kg;
    for (int ic = 0; ic < cg; ic++) for (int ir = 0; ir < r; ir++) for (int is = 0; is < s; is++) {
      int hh = ip * u - ph + ir * dh, ww = iq * v - pw + is * dw;
      if (hh < 0 || hh >= h || ww < 0 || ww >= wi) continue;
      long xo = (long)in * ns + (long)(grp * cg + ic) * cs + (long)hh * hs + (long)ww * ws;
      long wo = ik * fks + ic * fcs + ir * frs + is * fss;
      acc += f64 ? ((const double *)x)[xo] * ((const double *)w)[wo] : (double)((const float *)x)[xo] * ((const float *)w)[wo];
    }
    if (bias) acc += f64 ? ((const double *)bias)[ik] : ((const float *)bias)[ik];
    if (relu && acc < 0) acc = 0;
    long yo = (long)in * yns + (long)ik * ycs + (long)ip * yhs + (long)iq * yws;
    if (f64) ((double *)y)[yo] = acc; else ((float *)y)[yo] = (float)acc;
  }
}
cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *a, const cudnnTensorDescriptor_t xd, const void *x,
    const cudnnFilterDescriptor_t wd, const void *w, const cudnnConvolutionDescriptor_t cd, cudnnConvolutionFwdAlgo_t algo,
    void *ws, size_t wsb, const void *b, const cudnnTensorDescriptor_t yd, void *y) {
  (void)h, (void)a, (void)algo, (void)ws, (void)wsb, (void)b; conv(xd, x, wd, w, cd, yd, y, NULL, 0); return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnConvolutionBiasActivationForward(cudnnHandle_t h, const void *a1, const cudnnTensorDescriptor_t xd, const void *x,
    const cudnnFilterDescriptor_t wd, const void *w, const cudnnConvolutionDescriptor_t cd, cudnnConvolutionFwdAlgo_t algo,
    void *ws, size_t wsb, const void *a2, const cudnnTensorDescriptor_t zd, const void *z, const cudnnTensorDescriptor_t bd,
    const void *bias, const cudnnActivationDescriptor_t ad, const cudnnTensorDescriptor_t yd, void *y) {
  (void)h, (void)a1, (void)ws, (void)wsb, (void)a2, (void)zd, (void)z, (void)bd;
  cudnnActivationMode_t m; cudnnNanPropagation_t np; double coef;
  cudnnGetActivationDescriptor(ad, &m, &np, &coef);
  if (m == CUDNN_ACTIVATION_IDENTITY && algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) return CUDNN_STATUS_NOT_SUPPORTED;
  conv(xd, x, wd, w, cd, yd, y, bias, m == CUDNN_ACTIVATION_RELU); return CUDNN_STATUS_SUCCESS; }
