/*
 * Test doubles for the cuDNN calls of the CUDA plugin that need a device
 * (t/cuda-emu/build.sh). Everything else (the descriptor calls) goes to the
 * real cuDNN libraries, so the plugin's descriptors are built and read back by
 * cuDNN itself; the convolution stand-in below computes from those
 * descriptors, which exercises the plan's layout classes, padding copies,
 * filter repacking, workspace layout and epilogues.
 *
 * The algorithms the stand-in "offers" come from ADNN_EMU_CUDNN_ALGOS, a
 * comma-separated list of cuDNN algorithm names in ranking order (default
 * IMPLICIT_GEMM). Like real cuDNN, WINOGRAD and WINOGRAD_NONFUSED are
 * reported unusable except for 3x3 filters with stride 1 and dilation 1, and
 * the fused call takes the identity only with IMPLICIT_PRECOMP_GEMM. Each
 * algorithm asks for a different workspace (1000 bytes times its number), and
 * the stand-in overwrites its whole workspace before reading x and w: a plan
 * whose workspace layout let the algorithm's part overlap the packed copies
 * would compute garbage.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cudnn.h>

/* ---- handles: no device state -------------------------------------------- */

cudnnStatus_t cudnnCreate(cudnnHandle_t *handle) {
  static int token;
  *handle = (cudnnHandle_t)&token;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
  (void)handle;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream) {
  (void)handle, (void)stream;
  return CUDNN_STATUS_SUCCESS;
}

/* ---- the offered algorithms ---------------------------------------------- */

static const struct {
  const char *name;
  cudnnConvolutionFwdAlgo_t algo;
} algo_names[] = {
    {"IMPLICIT_GEMM", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM},
    {"IMPLICIT_PRECOMP_GEMM", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM},
    {"GEMM", CUDNN_CONVOLUTION_FWD_ALGO_GEMM},
    {"DIRECT", CUDNN_CONVOLUTION_FWD_ALGO_DIRECT},
    {"FFT", CUDNN_CONVOLUTION_FWD_ALGO_FFT},
    {"FFT_TILING", CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING},
    {"WINOGRAD", CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD},
    {"WINOGRAD_NONFUSED", CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED},
};

/* The offered algorithms in ranking order; returns their number. */
static int offered(cudnnConvolutionFwdAlgo_t out[8]) {
  const char *list = getenv("ADNN_EMU_CUDNN_ALGOS");
  if (list == NULL || *list == '\0') list = "IMPLICIT_GEMM";
  int n = 0;
  while (*list && n < 8) {
    size_t len = strcspn(list, ",");
    for (size_t i = 0; i < sizeof algo_names / sizeof algo_names[0]; i++)
      if (strlen(algo_names[i].name) == len && strncmp(list, algo_names[i].name, len) == 0)
        out[n++] = algo_names[i].algo;
    list += len;
    if (*list == ',') list++;
  }
  return n;
}

static size_t workspace_of(cudnnConvolutionFwdAlgo_t algo) { return 1000 * (size_t)algo; }

static int is_winograd(cudnnConvolutionFwdAlgo_t a) {
  return a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}

/* Whether the problem is one real cuDNN runs with Winograd: 3x3, stride 1,
 * dilation 1. */
static int winograd_shape(const cudnnFilterDescriptor_t w, const cudnnConvolutionDescriptor_t c) {
  cudnnDataType_t dt;
  cudnnTensorFormat_t fmt;
  int k, cg, r, s, ph, pw, u, v, dh, dw;
  cudnnConvolutionMode_t mode;
  cudnnDataType_t ct;
  if (cudnnGetFilter4dDescriptor(w, &dt, &fmt, &k, &cg, &r, &s) != CUDNN_STATUS_SUCCESS ||
      cudnnGetConvolution2dDescriptor(c, &ph, &pw, &u, &v, &dh, &dw, &mode, &ct) !=
          CUDNN_STATUS_SUCCESS)
    return 0;
  return r == 3 && s == 3 && u == 1 && v == 1 && dh == 1 && dw == 1;
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t handle, int *count) {
  (void)handle;
  *count = 8;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
    const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t y, const int requested,
    int *returned, cudnnConvolutionFwdAlgoPerf_t *perf) {
  (void)handle, (void)x, (void)y;
  cudnnConvolutionFwdAlgo_t algos[8];
  int n = offered(algos);
  if (n > requested) n = requested;
  for (int i = 0; i < n; i++) {
    memset(&perf[i], 0, sizeof perf[i]);
    perf[i].algo = algos[i];
    perf[i].status = is_winograd(algos[i]) && !winograd_shape(w, c) ? CUDNN_STATUS_NOT_SUPPORTED
                                                                     : CUDNN_STATUS_SUCCESS;
    perf[i].time = (float)(i + 1);
    perf[i].memory = workspace_of(algos[i]);
    perf[i].determinism = CUDNN_DETERMINISTIC;
    perf[i].mathType = CUDNN_FMA_MATH;
  }
  *returned = n;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t handle,
                                                      const cudnnTensorDescriptor_t x,
                                                      const cudnnFilterDescriptor_t w,
                                                      const cudnnConvolutionDescriptor_t c,
                                                      const cudnnTensorDescriptor_t y,
                                                      cudnnConvolutionFwdAlgo_t algo,
                                                      size_t *size) {
  (void)handle, (void)x, (void)w, (void)c, (void)y;
  *size = workspace_of(algo);
  return CUDNN_STATUS_SUCCESS;
}

/* ---- the convolution ------------------------------------------------------ */

/* Checks what the plan passes for `algo` and overwrites the workspace. */
static cudnnStatus_t check_call(const cudnnFilterDescriptor_t wd,
                                const cudnnConvolutionDescriptor_t cd,
                                cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes) {
  cudnnConvolutionFwdAlgo_t algos[8];
  int n = offered(algos), found = 0;
  for (int i = 0; i < n; i++) found |= algos[i] == algo;
  if (!found || (is_winograd(algo) && !winograd_shape(wd, cd)))
    return CUDNN_STATUS_NOT_SUPPORTED;
  if (ws_bytes < workspace_of(algo) || (ws_bytes > 0 && ws == NULL)) return CUDNN_STATUS_BAD_PARAM;
  if (ws_bytes > 0) memset(ws, 0xff, ws_bytes); /* NaN in every float and double */
  return CUDNN_STATUS_SUCCESS;
}

/* y = act(conv(x, w) + bias) computed from the descriptors' own layouts. */
static void convolve(const cudnnTensorDescriptor_t xd, const void *x,
                     const cudnnFilterDescriptor_t wd, const void *w,
                     const cudnnConvolutionDescriptor_t cd, const cudnnTensorDescriptor_t yd,
                     void *y, const void *bias, int relu) {
  cudnnDataType_t dt, fdt, ct;
  int n, c, h, wi, ns, cs, hs, ws;
  cudnnGetTensor4dDescriptor(xd, &dt, &n, &c, &h, &wi, &ns, &cs, &hs, &ws);
  cudnnTensorFormat_t fmt;
  int k, cg, r, s;
  cudnnGetFilter4dDescriptor(wd, &fdt, &fmt, &k, &cg, &r, &s);
  int yn, yc, p, q, yns, ycs, yhs, yws;
  cudnnGetTensor4dDescriptor(yd, &dt, &yn, &yc, &p, &q, &yns, &ycs, &yhs, &yws);
  int ph, pw, u, v, dh, dw, g;
  cudnnConvolutionMode_t mode;
  cudnnGetConvolution2dDescriptor(cd, &ph, &pw, &u, &v, &dh, &dw, &mode, &ct);
  cudnnGetConvolutionGroupCount(cd, &g);
  long fks, fcs, frs, fss; /* the filter's strides: KCRS or KRSC */
  if (fmt == CUDNN_TENSOR_NCHW) {
    fss = 1, frs = s, fcs = (long)r * s, fks = (long)cg * r * s;
  } else {
    fcs = 1, fss = cg, frs = (long)s * cg, fks = (long)r * s * cg;
  }
  const int f64 = dt == CUDNN_DATA_DOUBLE, kg = k / g;
  for (int in = 0; in < n; in++)
    for (int ik = 0; ik < k; ik++)
      for (int ip = 0; ip < p; ip++)
        for (int iq = 0; iq < q; iq++) {
          double acc = 0;
          const int grp = ik / kg;
          for (int ic = 0; ic < cg; ic++)
            for (int ir = 0; ir < r; ir++)
              for (int is = 0; is < s; is++) {
                const int hh = ip * u - ph + ir * dh, ww = iq * v - pw + is * dw;
                if (hh < 0 || hh >= h || ww < 0 || ww >= wi) continue;
                const long xo = (long)in * ns + (long)(grp * cg + ic) * cs + (long)hh * hs +
                                (long)ww * ws;
                const long wo = ik * fks + ic * fcs + ir * frs + is * fss;
                acc += f64 ? ((const double *)x)[xo] * ((const double *)w)[wo]
                           : (double)((const float *)x)[xo] * ((const float *)w)[wo];
              }
          if (bias) acc += f64 ? ((const double *)bias)[ik] : ((const float *)bias)[ik];
          if (relu && acc < 0) acc = 0;
          const long yo = (long)in * yns + (long)ik * ycs + (long)ip * yhs + (long)iq * yws;
          if (f64)
            ((double *)y)[yo] = acc;
          else
            ((float *)y)[yo] = (float)acc;
        }
}

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha,
                                      const cudnnTensorDescriptor_t xd, const void *x,
                                      const cudnnFilterDescriptor_t wd, const void *w,
                                      const cudnnConvolutionDescriptor_t cd,
                                      cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes,
                                      const void *beta, const cudnnTensorDescriptor_t yd,
                                      void *y) {
  (void)handle, (void)alpha, (void)beta;
  cudnnStatus_t st = check_call(wd, cd, algo, ws, ws_bytes);
  if (st != CUDNN_STATUS_SUCCESS) return st;
  convolve(xd, x, wd, w, cd, yd, y, NULL, 0);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t handle, const void *alpha1, const cudnnTensorDescriptor_t xd, const void *x,
    const cudnnFilterDescriptor_t wd, const void *w, const cudnnConvolutionDescriptor_t cd,
    cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes, const void *alpha2,
    const cudnnTensorDescriptor_t zd, const void *z, const cudnnTensorDescriptor_t bd,
    const void *bias, const cudnnActivationDescriptor_t ad, const cudnnTensorDescriptor_t yd,
    void *y) {
  (void)handle, (void)alpha1, (void)alpha2, (void)zd, (void)z, (void)bd;
  cudnnActivationMode_t mode;
  cudnnNanPropagation_t nan;
  double coef;
  cudnnGetActivationDescriptor(ad, &mode, &nan, &coef);
  if (mode == CUDNN_ACTIVATION_IDENTITY && algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
    return CUDNN_STATUS_NOT_SUPPORTED;
  cudnnStatus_t st = check_call(wd, cd, algo, ws, ws_bytes);
  if (st != CUDNN_STATUS_SUCCESS) return st;
  convolve(xd, x, wd, w, cd, yd, y, bias, mode == CUDNN_ACTIVATION_RELU);
  return CUDNN_STATUS_SUCCESS;
}
