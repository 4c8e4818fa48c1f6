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
 *
 * Half and bfloat16 tensors (CUDNN_DATA_HALF / CUDNN_DATA_BFLOAT16) are
 * taken as cuDNN documents its PSEUDO_HALF_CONFIG and PSEUDO_BFLOAT16_CONFIG:
 * x, w and y of the one 16-bit type, the convolution's compute type FLOAT
 * (anything else is NOT_SUPPORTED, so a plan's descriptors are checked), the
 * products and sums in F32 (in cuDNN's order-free sense: here k-ordered),
 * and y rounded once to nearest even (kernels/common/float16.h). For such
 * descriptors the ranking reports the descriptor's math type (tensor-op for
 * the plugin's F16/BF16 plans), as cuDNN ranks its tensor-core kernels.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cudnn.h>

#include "kernels/common/float16.h"

/* Element i of a tensor of cuDNN type dt, widened exactly to double. */
static double emu_load(cudnnDataType_t dt, const void *p, long i) {
  switch (dt) {
    case CUDNN_DATA_DOUBLE: return ((const double *)p)[i];
    case CUDNN_DATA_HALF: return adnn_f16_to_f32(((const uint16_t *)p)[i]);
    case CUDNN_DATA_BFLOAT16: return adnn_bf16_to_f32(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
  }
}

static int emu_is_16bit(cudnnDataType_t dt) {
  return dt == CUDNN_DATA_HALF || dt == CUDNN_DATA_BFLOAT16;
}

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
  (void)handle, (void)y;
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
    cudnnDataType_t dt;
    int d[8];
    cudnnGetTensor4dDescriptor(x, &dt, &d[0], &d[1], &d[2], &d[3], &d[4], &d[5], &d[6], &d[7]);
    if (emu_is_16bit(dt)) cudnnGetConvolutionMathType(c, &perf[i].mathType);
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

/* Whether x, w, y and the compute type form one of cuDNN's documented
 * forward configurations: FLOAT, DOUBLE, PSEUDO_HALF, PSEUDO_BFLOAT16 (and
 * TRUE_HALF, which the plugin does not use). */
static int legal_config(const cudnnTensorDescriptor_t xd, const cudnnFilterDescriptor_t wd,
                        const cudnnConvolutionDescriptor_t cd, const cudnnTensorDescriptor_t yd) {
  cudnnDataType_t xt, yt, wt, ct;
  int d[8], pad[6];
  cudnnTensorFormat_t fmt;
  cudnnConvolutionMode_t mode;
  cudnnGetTensor4dDescriptor(xd, &xt, &d[0], &d[1], &d[2], &d[3], &d[4], &d[5], &d[6], &d[7]);
  cudnnGetTensor4dDescriptor(yd, &yt, &d[0], &d[1], &d[2], &d[3], &d[4], &d[5], &d[6], &d[7]);
  cudnnGetFilter4dDescriptor(wd, &wt, &fmt, &d[0], &d[1], &d[2], &d[3]);
  cudnnGetConvolution2dDescriptor(cd, &pad[0], &pad[1], &pad[2], &pad[3], &pad[4], &pad[5],
                                  &mode, &ct);
  if (xt != yt || xt != wt) return 0;
  if (xt == CUDNN_DATA_HALF) return ct == CUDNN_DATA_FLOAT || ct == CUDNN_DATA_HALF;
  if (xt == CUDNN_DATA_BFLOAT16) return ct == CUDNN_DATA_FLOAT;
  return ct == xt;
}

/* Checks what the plan passes for `algo` and overwrites the workspace. */
static cudnnStatus_t check_call(const cudnnTensorDescriptor_t xd,
                                const cudnnFilterDescriptor_t wd,
                                const cudnnConvolutionDescriptor_t cd,
                                const cudnnTensorDescriptor_t yd,
                                cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes) {
  if (!legal_config(xd, wd, cd, yd)) return CUDNN_STATUS_NOT_SUPPORTED;
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
  const int f64 = dt == CUDNN_DATA_DOUBLE, lowp = emu_is_16bit(dt), kg = k / g;
  for (int in = 0; in < n; in++)
    for (int ik = 0; ik < k; ik++)
      for (int ip = 0; ip < p; ip++)
        for (int iq = 0; iq < q; iq++) {
          double acc = 0;
          float acc32 = 0; /* the 16-bit configurations' F32 accumulator */
          const int grp = ik / kg;
          for (int ic = 0; ic < cg; ic++)
            for (int ir = 0; ir < r; ir++)
              for (int is = 0; is < s; is++) {
                const int hh = ip * u - ph + ir * dh, ww = iq * v - pw + is * dw;
                if (hh < 0 || hh >= h || ww < 0 || ww >= wi) continue;
                const long xo = (long)in * ns + (long)(grp * cg + ic) * cs + (long)hh * hs +
                                (long)ww * ws;
                const long wo = ik * fks + ic * fcs + ir * frs + is * fss;
                if (lowp)
                  acc32 += (float)emu_load(dt, x, xo) * (float)emu_load(dt, w, wo);
                else
                  acc += f64 ? ((const double *)x)[xo] * ((const double *)w)[wo]
                             : (double)((const float *)x)[xo] * ((const float *)w)[wo];
              }
          if (lowp) acc = acc32;
          if (bias) acc += emu_load(dt, bias, ik);
          if (relu && acc < 0) acc = 0;
          const long yo = (long)in * yns + (long)ik * ycs + (long)ip * yhs + (long)iq * yws;
          if (f64)
            ((double *)y)[yo] = acc;
          else if (dt == CUDNN_DATA_HALF)
            ((uint16_t *)y)[yo] = adnn_f64_to_f16(acc);
          else if (dt == CUDNN_DATA_BFLOAT16)
            ((uint16_t *)y)[yo] = adnn_f64_to_bf16(acc);
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
  cudnnStatus_t st = check_call(xd, wd, cd, yd, algo, ws, ws_bytes);
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
  cudnnStatus_t st = check_call(xd, wd, cd, yd, algo, ws, ws_bytes);
  if (st != CUDNN_STATUS_SUCCESS) return st;
  convolve(xd, x, wd, w, cd, yd, y, bias, mode == CUDNN_ACTIVATION_RELU);
  return CUDNN_STATUS_SUCCESS;
}

/* ---- the backward convolutions --------------------------------------------
 *
 * The stand-in offers the backward algorithms named by
 * ADNN_EMU_CUDNN_BWD_DATA_ALGOS and ADNN_EMU_CUDNN_BWD_FILTER_ALGOS (cuDNN's
 * names without the prefix, in ranking order: ALGO_0, ALGO_1, FFT,
 * FFT_TILING, WINOGRAD, WINOGRAD_NONFUSED, and for the filter ALGO_3; default
 * ALGO_1 for both; "none" offers none). As in real cuDNN, ALGO_0 (both directions) and the
 * filter's ALGO_3 are reported non-deterministic, the Winograd algorithms are
 * usable only for 3x3 filters with stride 1 and dilation 1, and the filter's
 * WINOGRAD is never usable (cuDNN does not implement it). Workspaces are
 * 1000 bytes times the algorithm's number plus 500, and are overwritten with
 * NaN before the inputs are read, as in the forward stand-in. Unlike the
 * forward stand-in these honour alpha and beta, reading the output only when
 * beta is not zero (as cuDNN documents), so that the plans' accumulation
 * through cuDNN's beta is checked. */

typedef struct bwd_algo_name {
  const char *name;
  int algo;
} bwd_algo_name;

static const bwd_algo_name bwd_data_names[] = {
    {"ALGO_0", CUDNN_CONVOLUTION_BWD_DATA_ALGO_0},
    {"ALGO_1", CUDNN_CONVOLUTION_BWD_DATA_ALGO_1},
    {"FFT", CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT},
    {"FFT_TILING", CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING},
    {"WINOGRAD", CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD},
    {"WINOGRAD_NONFUSED", CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED},
    {NULL, 0},
};

static const bwd_algo_name bwd_filter_names[] = {
    {"ALGO_0", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0},
    {"ALGO_1", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1},
    {"FFT", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT},
    {"ALGO_3", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3},
    {"WINOGRAD", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD},
    {"WINOGRAD_NONFUSED", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED},
    {"FFT_TILING", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING},
    {NULL, 0},
};

/* The offered backward algorithms of `env` (names from `names`) in ranking
 * order; returns their number. */
static int bwd_offered(const char *env, const bwd_algo_name *names, int out[8]) {
  const char *list = getenv(env);
  if (list == NULL || *list == '\0') list = "ALGO_1";
  int n = 0;
  while (*list && n < 8) {
    size_t len = strcspn(list, ",");
    for (const bwd_algo_name *e = names; e->name != NULL; e++)
      if (strlen(e->name) == len && strncmp(list, e->name, len) == 0) out[n++] = e->algo;
    list += len;
    if (*list == ',') list++;
  }
  return n;
}

static size_t bwd_workspace_of(int algo) { return 1000 * (size_t)algo + 500; }

/* Whether the stand-in can run backward algorithm `algo` (data: 1, filter: 0)
 * on the problem. */
static int bwd_usable(int data, int algo, const cudnnFilterDescriptor_t w,
                      const cudnnConvolutionDescriptor_t c) {
  if (data)
    return (algo != CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD &&
            algo != CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED) ||
           winograd_shape(w, c);
  if (algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD) return 0;
  return algo != CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED || winograd_shape(w, c);
}

static int bwd_deterministic(int data, int algo) {
  if (data) return algo != CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
  return algo != CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0 && algo != CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
}

/* Checks a backward call of `algo` as check_call does the forward ones. */
static cudnnStatus_t bwd_check_call(int data, const cudnnFilterDescriptor_t wd,
                                    const cudnnConvolutionDescriptor_t cd, int algo, void *ws,
                                    size_t ws_bytes) {
  int algos[8];
  const int n = data ? bwd_offered("ADNN_EMU_CUDNN_BWD_DATA_ALGOS", bwd_data_names, algos)
                     : bwd_offered("ADNN_EMU_CUDNN_BWD_FILTER_ALGOS", bwd_filter_names, algos);
  int found = 0;
  for (int i = 0; i < n; i++) found |= algos[i] == algo;
  if (!found || !bwd_usable(data, algo, wd, cd)) return CUDNN_STATUS_NOT_SUPPORTED;
  if (ws_bytes < bwd_workspace_of(algo) || (ws_bytes > 0 && ws == NULL))
    return CUDNN_STATUS_BAD_PARAM;
  if (ws_bytes > 0) memset(ws, 0xff, ws_bytes);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnnHandle_t handle, int *count) {
  (void)handle;
  *count = 8;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnnHandle_t handle,
                                                                 int *count) {
  (void)handle;
  *count = 8;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t dx, const int requested,
    int *returned, cudnnConvolutionBwdDataAlgoPerf_t *perf) {
  (void)handle, (void)dy, (void)dx;
  int algos[8];
  int n = bwd_offered("ADNN_EMU_CUDNN_BWD_DATA_ALGOS", bwd_data_names, algos);
  if (n > requested) n = requested;
  for (int i = 0; i < n; i++) {
    memset(&perf[i], 0, sizeof perf[i]);
    perf[i].algo = (cudnnConvolutionBwdDataAlgo_t)algos[i];
    perf[i].status = bwd_usable(1, algos[i], w, c) ? CUDNN_STATUS_SUCCESS
                                                    : CUDNN_STATUS_NOT_SUPPORTED;
    perf[i].time = (float)(i + 1);
    perf[i].memory = bwd_workspace_of(algos[i]);
    perf[i].determinism = bwd_deterministic(1, algos[i]) ? CUDNN_DETERMINISTIC
                                                          : CUDNN_NON_DETERMINISTIC;
    perf[i].mathType = CUDNN_FMA_MATH;
  }
  *returned = n;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t c, const cudnnFilterDescriptor_t dw, const int requested,
    int *returned, cudnnConvolutionBwdFilterAlgoPerf_t *perf) {
  (void)handle, (void)x, (void)dy;
  int algos[8];
  int n = bwd_offered("ADNN_EMU_CUDNN_BWD_FILTER_ALGOS", bwd_filter_names, algos);
  if (n > requested) n = requested;
  for (int i = 0; i < n; i++) {
    memset(&perf[i], 0, sizeof perf[i]);
    perf[i].algo = (cudnnConvolutionBwdFilterAlgo_t)algos[i];
    perf[i].status = bwd_usable(0, algos[i], dw, c) ? CUDNN_STATUS_SUCCESS
                                                     : CUDNN_STATUS_NOT_SUPPORTED;
    perf[i].time = (float)(i + 1);
    perf[i].memory = bwd_workspace_of(algos[i]);
    perf[i].determinism = bwd_deterministic(0, algos[i]) ? CUDNN_DETERMINISTIC
                                                          : CUDNN_NON_DETERMINISTIC;
    perf[i].mathType = CUDNN_FMA_MATH;
  }
  *returned = n;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t dx,
    cudnnConvolutionBwdDataAlgo_t algo, size_t *size) {
  (void)handle, (void)w, (void)dy, (void)c, (void)dx;
  *size = bwd_workspace_of((int)algo);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t c, const cudnnFilterDescriptor_t dw,
    cudnnConvolutionBwdFilterAlgo_t algo, size_t *size) {
  (void)handle, (void)x, (void)dy, (void)c, (void)dw;
  *size = bwd_workspace_of((int)algo);
  return CUDNN_STATUS_SUCCESS;
}

/* The geometry of a convolution read back from its descriptors: x (or dx)
 * and y (or dy) with their strides, the filter with its format's strides. */
typedef struct emu_geometry {
  int f64;
  int n, c, h, w, ns, cs, hs, ws;     /* x */
  int k, p, q, yns, ycs, yhs, yws;    /* y */
  int cg, r, s;                       /* the filter [k, cg, r, s] */
  long fks, fcs, frs, fss;            /* its strides: KCRS or KRSC */
  int ph, pw, u, v, dh, dw, g;
} emu_geometry;

static void read_geometry(const cudnnTensorDescriptor_t xd, const cudnnFilterDescriptor_t wd,
                          const cudnnConvolutionDescriptor_t cd,
                          const cudnnTensorDescriptor_t yd, emu_geometry *e) {
  cudnnDataType_t dt, fdt, ct;
  cudnnGetTensor4dDescriptor(xd, &dt, &e->n, &e->c, &e->h, &e->w, &e->ns, &e->cs, &e->hs,
                             &e->ws);
  cudnnTensorFormat_t fmt;
  int k;
  cudnnGetFilter4dDescriptor(wd, &fdt, &fmt, &k, &e->cg, &e->r, &e->s);
  int yn;
  cudnnGetTensor4dDescriptor(yd, &dt, &yn, &e->k, &e->p, &e->q, &e->yns, &e->ycs, &e->yhs,
                             &e->yws);
  cudnnConvolutionMode_t mode;
  cudnnGetConvolution2dDescriptor(cd, &e->ph, &e->pw, &e->u, &e->v, &e->dh, &e->dw, &mode, &ct);
  cudnnGetConvolutionGroupCount(cd, &e->g);
  if (fmt == CUDNN_TENSOR_NCHW) {
    e->fss = 1, e->frs = e->s, e->fcs = (long)e->r * e->s, e->fks = (long)e->cg * e->r * e->s;
  } else {
    e->fcs = 1, e->fss = e->cg, e->frs = (long)e->s * e->cg, e->fks = (long)e->r * e->s * e->cg;
  }
  e->f64 = dt == CUDNN_DATA_DOUBLE;
}

static double load(int f64, const void *p, long i) {
  return f64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static double scale_of(int f64, const void *s) {
  return f64 ? *(const double *)s : (double)*(const float *)s;
}

/* out[i] = alpha * acc + beta * out[i], out read only when beta != 0. */
static void store_scaled(int f64, void *out, long i, double acc, double alpha, double beta) {
  double v = alpha * acc;
  if (beta != 0) v += beta * load(f64, out, i);
  if (f64)
    ((double *)out)[i] = v;
  else
    ((float *)out)[i] = (float)v;
}

cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void *alpha,
                                           const cudnnFilterDescriptor_t wd, const void *w,
                                           const cudnnTensorDescriptor_t dyd, const void *dy,
                                           const cudnnConvolutionDescriptor_t cd,
                                           cudnnConvolutionBwdDataAlgo_t algo, void *ws,
                                           size_t ws_bytes, const void *beta,
                                           const cudnnTensorDescriptor_t dxd, void *dx) {
  (void)handle;
  cudnnStatus_t st = bwd_check_call(1, wd, cd, (int)algo, ws, ws_bytes);
  if (st != CUDNN_STATUS_SUCCESS) return st;
  emu_geometry e;
  read_geometry(dxd, wd, cd, dyd, &e);
  const double a = scale_of(e.f64, alpha), b = scale_of(e.f64, beta);
  const int kg = e.k / e.g;
  for (int in = 0; in < e.n; in++)
    for (int ic = 0; ic < e.c; ic++)
      for (int ih = 0; ih < e.h; ih++)
        for (int iw = 0; iw < e.w; iw++) {
          const int grp = ic / e.cg, c_in = ic % e.cg;
          double acc = 0;
          for (int k = grp * kg; k < (grp + 1) * kg; k++)
            for (int r = 0; r < e.r; r++)
              for (int s = 0; s < e.s; s++) {
                const int hh = ih + e.ph - r * e.dh, ww = iw + e.pw - s * e.dw;
                if (hh < 0 || ww < 0 || hh % e.u || ww % e.v) continue;
                const int p = hh / e.u, q = ww / e.v;
                if (p >= e.p || q >= e.q) continue;
                acc += load(e.f64, dy, (long)in * e.yns + (long)k * e.ycs + (long)p * e.yhs +
                                           (long)q * e.yws) *
                       load(e.f64, w, k * e.fks + c_in * e.fcs + r * e.frs + s * e.fss);
              }
          store_scaled(e.f64, dx,
                       (long)in * e.ns + (long)ic * e.cs + (long)ih * e.hs + (long)iw * e.ws, acc,
                       a, b);
        }
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void *alpha,
                                             const cudnnTensorDescriptor_t xd, const void *x,
                                             const cudnnTensorDescriptor_t dyd, const void *dy,
                                             const cudnnConvolutionDescriptor_t cd,
                                             cudnnConvolutionBwdFilterAlgo_t algo, void *ws,
                                             size_t ws_bytes, const void *beta,
                                             const cudnnFilterDescriptor_t dwd, void *dw) {
  (void)handle;
  cudnnStatus_t st = bwd_check_call(0, dwd, cd, (int)algo, ws, ws_bytes);
  if (st != CUDNN_STATUS_SUCCESS) return st;
  emu_geometry e;
  read_geometry(xd, dwd, cd, dyd, &e);
  const double a = scale_of(e.f64, alpha), b = scale_of(e.f64, beta);
  const int kg = e.k / e.g;
  for (int k = 0; k < e.k; k++)
    for (int c = 0; c < e.cg; c++)
      for (int r = 0; r < e.r; r++)
        for (int s = 0; s < e.s; s++) {
          const int ic = (k / kg) * e.cg + c;
          double acc = 0;
          for (int in = 0; in < e.n; in++)
            for (int p = 0; p < e.p; p++)
              for (int q = 0; q < e.q; q++) {
                const int hh = p * e.u - e.ph + r * e.dh, ww = q * e.v - e.pw + s * e.dw;
                if (hh < 0 || hh >= e.h || ww < 0 || ww >= e.w) continue;
                acc += load(e.f64, x, (long)in * e.ns + (long)ic * e.cs + (long)hh * e.hs +
                                          (long)ww * e.ws) *
                       load(e.f64, dy, (long)in * e.yns + (long)k * e.ycs + (long)p * e.yhs +
                                           (long)q * e.yws);
              }
          store_scaled(e.f64, dw, k * e.fks + c * e.fcs + r * e.frs + s * e.fss, acc, a, b);
        }
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnConvolutionBackwardBias(cudnnHandle_t handle, const void *alpha,
                                           const cudnnTensorDescriptor_t dyd, const void *dy,
                                           const void *beta, const cudnnTensorDescriptor_t dbd,
                                           void *db) {
  (void)handle;
  cudnnDataType_t dt, bdt;
  int n, k, p, q, ns, ks, ps, qs;
  cudnnGetTensor4dDescriptor(dyd, &dt, &n, &k, &p, &q, &ns, &ks, &ps, &qs);
  int bn, bk, bh, bw, bns, bks, bhs, bws;
  cudnnGetTensor4dDescriptor(dbd, &bdt, &bn, &bk, &bh, &bw, &bns, &bks, &bhs, &bws);
  if (bn != 1 || bk != k || bh != 1 || bw != 1 || bdt != dt) return CUDNN_STATUS_BAD_PARAM;
  const int f64 = dt == CUDNN_DATA_DOUBLE;
  const double a = scale_of(f64, alpha), b = scale_of(f64, beta);
  for (int ik = 0; ik < k; ik++) {
    double acc = 0;
    for (int in = 0; in < n; in++)
      for (int ip = 0; ip < p; ip++)
        for (int iq = 0; iq < q; iq++)
          acc += load(f64, dy, (long)in * ns + (long)ik * ks + (long)ip * ps + (long)iq * qs);
    store_scaled(f64, db, (long)ik * bks, acc, a, b);
  }
  return CUDNN_STATUS_SUCCESS;
}
