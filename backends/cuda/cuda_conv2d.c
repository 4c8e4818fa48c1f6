/*
 * conv2d on the CUDA plugin: cuDNN's legacy convolution API, with our own
 * kernels around it where cuDNN's model differs from adnn's.
 *
 * Layout. cuDNN runs fastest on packed NCHW (filter KCRS) or packed NHWC
 * (filter KRSC). The plan picks that "layout class" from y (else from x) and
 * arranges for cuDNN to see packed tensors of that class:
 *  - x: used as is when packed in the class and the padding is symmetric;
 *    otherwise copied by our pad_pack kernel into the workspace, packed in the
 *    class and, for asymmetric padding, with the padding written out as zeros
 *    (cuDNN then runs with pad 0). cuDNN only takes symmetric padding, so this
 *    is what keeps asymmetric padding exact, never approximated.
 *  - w: used as is when packed KCRS (NCHW class) or KRSC (NHWC class), else
 *    copied into the workspace in the class's filter format.
 *  - y: written directly when packed in the class; otherwise cuDNN writes a
 *    packed temporary and our epilogue kernel stores it into y's strides.
 * Bias and activation: cudnnConvolutionBiasActivationForward for F32 with relu
 * (NaN propagated, as adnn's relu) or identity (which cuDNN runs only with
 * IMPLICIT_PRECOMP_GEMM); anything else runs our bias + activation epilogue
 * kernel once over y after cudnnConvolutionForward.
 *
 * Math: FP32 stays FP32 (CUDNN_FMA_MATH) unless the context allows TF32
 * (ADNN_CONTEXT_ALLOW_TF32: CUDNN_TENSOR_OP_MATH).
 *
 * Algorithm: cudnnGetConvolutionForwardAlgorithm_v7's ranking, first candidate
 * that cuDNN reports usable, whose workspace (cudnnGetConvolutionForwardWorkspaceSize
 * for our descriptors) fits in ADNN_CUDA_WORKSPACE_LIMIT (default 512 MiB), and
 * that belongs to the forced family if the descriptor forces one. With
 * ADNN_CUDA_CONV_FIND=1 the candidates are instead measured at plan creation by
 * cudnnFindConvolutionForwardAlgorithmEx on scratch buffers. All workspace is
 * allocated once, at plan creation.
 *
 * Our direct kernel (kernels/cuda/conv2d_direct.cu) runs the "direct" and
 * "reference" algorithms, and AUTO problems cuDNN cannot run (sizes beyond
 * cuDNN's int range, or no usable algorithm), with a log message.
 *
 * Tuning (core/tuner.c): cuda__plan_candidates lists what plan creation would
 * consider, in cuDNN's heuristic order (the first is what AUTO picks): every
 * algorithm cudnnGetConvolutionForwardAlgorithm_v7 reports usable under the
 * same filters (math type, ADNN_CUDA_WORKSPACE_LIMIT), named "cudnn:<ALGO>",
 * with the plan's whole workspace and cuDNN's determinism flag, then our
 * "direct" kernel (deterministic: one thread per output, fixed loop order).
 * adnn_plugin_op.candidate then forces one of them by name.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_plan.h"

struct cuda_conv2d_plan {
  int use_cudnn;
  int exact; /* direct kernel accumulating in double */
  adnn_cuda_conv2d direct;
  /* cuDNN path */
  cudnnHandle_t handle;
  cudnnTensorDescriptor_t xd, yd, bd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  cudnnActivationDescriptor_t ad;
  cudnnConvolutionFwdAlgo_t algo;
  size_t algo_ws;
  /* Tuning: only_algo >= 0 restricts cuDNN to that algorithm (a candidate
   * named by the tuner); list != NULL makes setup_cudnn list the candidates
   * instead of choosing one (nothing is allocated). */
  int only_algo;
  adnn_plugin_candidate *list;
  int32_t list_max, list_count;
  int nhwc;
  int pack_x; /* pad_pack x into xbuf */
  int64_t xpad[4]; /* explicit padding written by pad_pack: top, bottom, left, right */
  size_t xbuf_off;
  int pack_w;
  adnn_cuda_nd w_nd; /* strided copy of w: [K, CG, R, S], src strides, dst strides */
  size_t wbuf_off;
  int y_tmp;
  size_t ybuf_off;
  int fused;
  int epilogue;
  adnn_cuda_nd epi_nd; /* [N, K, P, Q]: src (cuDNN's y) strides, dst (y) strides */
};

static const char *algo_name(cudnnConvolutionFwdAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "UNKNOWN";
  }
}

/* The cuDNN algorithm of a candidate name "cudnn:<ALGO>"; -1 when none. */
static int algo_from_candidate(const char *name) {
  if (strncmp(name, "cudnn:", 6) != 0) return -1;
  for (int a = 0; a < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; a++)
    if (strcmp(name + 6, algo_name((cudnnConvolutionFwdAlgo_t)a)) == 0) return a;
  return -1;
}

/* The cuDNN algorithms a forced adnn algorithm may map to (bit i: algo i);
 * 0: not a cuDNN family. */
static unsigned forced_family(adnn_conv2d_algorithm a) {
  const unsigned gemm = (1u << CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM) |
                        (1u << CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) |
                        (1u << CUDNN_CONVOLUTION_FWD_ALGO_GEMM);
  switch (a) {
    case ADNN_CONV2D_ALGO_AUTO: return ~0u;
    case ADNN_CONV2D_ALGO_IM2COL_GEMM: return gemm;
    case ADNN_CONV2D_ALGO_GEMM_1X1: return gemm;
    case ADNN_CONV2D_ALGO_WINOGRAD_F2X3:
      return (1u << CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD) |
             (1u << CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED);
    default: return 0;
  }
}

static size_t workspace_limit(void) {
  size_t limit = (size_t)512 << 20;
  const char *v = cuda__host->getenv("ADNN_CUDA_WORKSPACE_LIMIT");
  if (v && *v) {
    char *end = NULL;
    unsigned long long n = strtoull(v, &end, 10);
    if (end && (*end == 'k' || *end == 'K')) n <<= 10;
    else if (end && (*end == 'm' || *end == 'M')) n <<= 20;
    else if (end && (*end == 'g' || *end == 'G')) n <<= 30;
    limit = (size_t)n;
  }
  return limit;
}

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

/* Whether t (4-D) is packed in the dim order perm (slowest first); size-1 dims
 * may have any stride. */
static int packed_in(const adnn_tensor_desc *t, const int perm[4]) {
  int64_t expect = 1;
  for (int i = 3; i >= 0; i--) {
    const int d = perm[i];
    if (t->dims[d] > 1 && t->strides[d] != expect) return 0;
    expect *= t->dims[d];
  }
  return 1;
}

static const int perm_nchw[4] = {0, 1, 2, 3};
static const int perm_nhwc[4] = {0, 2, 3, 1};

static void packed_strides(const int64_t dims[4], int nhwc, int64_t s[4]) {
  const int *perm = nhwc ? perm_nhwc : perm_nchw;
  int64_t expect = 1;
  for (int i = 3; i >= 0; i--) {
    s[perm[i]] = expect;
    expect *= dims[perm[i]];
  }
}

static void direct_params(const adnn_conv2d_desc *d, adnn_cuda_conv2d *k) {
  memset(k, 0, sizeof *k);
  k->N = d->x.dims[0];
  k->C = d->x.dims[1];
  k->H = d->x.dims[2];
  k->W = d->x.dims[3];
  k->K = d->w.dims[0];
  k->CG = d->w.dims[1];
  k->R = d->w.dims[2];
  k->S = d->w.dims[3];
  k->P = d->y.dims[2];
  k->Q = d->y.dims[3];
  k->groups = d->groups;
  k->stride_h = d->stride_h;
  k->stride_w = d->stride_w;
  k->dil_h = d->dilation_h;
  k->dil_w = d->dilation_w;
  k->pad_top = d->pad_top;
  k->pad_left = d->pad_left;
  for (int i = 0; i < 4; i++) {
    k->xs[i] = d->x.strides[i];
    k->ws[i] = d->w.strides[i];
    k->ys[i] = d->y.strides[i];
  }
  k->bias_stride = d->has_bias ? d->bias.strides[0] : 0;
  cuda__memory_order4(&d->y, k->order);
  k->act.kind = (int32_t)d->activation.kind;
  k->act.alpha = d->activation.alpha;
  k->act.beta = d->activation.beta;
}

static void destroy_descriptors(cuda_conv2d_plan *c) {
  if (c->xd) cudnnDestroyTensorDescriptor(c->xd);
  if (c->yd) cudnnDestroyTensorDescriptor(c->yd);
  if (c->bd) cudnnDestroyTensorDescriptor(c->bd);
  if (c->wd) cudnnDestroyFilterDescriptor(c->wd);
  if (c->cd) cudnnDestroyConvolutionDescriptor(c->cd);
  if (c->ad) cudnnDestroyActivationDescriptor(c->ad);
  c->xd = c->yd = c->bd = NULL;
  c->wd = NULL;
  c->cd = NULL;
  c->ad = NULL;
}

/* Inside setup_cudnn: a cuDNN failure of the BAD_PARAM or NOT_SUPPORTED
 * families means cuDNN cannot describe this problem (AUTO then uses the direct
 * kernel); any other is a real failure. */
#define CUDNN_TRY(call, what)                                                        \
  do {                                                                               \
    cudnnStatus_t e_ = (call);                                                       \
    if (e_ != CUDNN_STATUS_SUCCESS) {                                                \
      if ((int)e_ / 1000 == 2 || (int)e_ / 1000 == 3) {                              \
        *unusable = 1;                                                               \
        snprintf(why, why_len, "%s failed: %s (%d)", what, cudnnGetErrorString(e_),  \
                 (int)e_);                                                           \
      }                                                                              \
      return cuda__fail_cudnn(e_, what);                                             \
    }                                                                                \
  } while (0)

/* Result of trying to set up cuDNN: SUCCESS, or a failure status with the
 * message recorded; *unusable = 1 when cuDNN just cannot run this problem (no
 * algorithm, a size out of its range), which AUTO answers with the direct
 * kernel. */
static adnn_status setup_cudnn(adnn_plugin_plan *p, cuda_conv2d_plan *c, int *unusable,
                               char *why, size_t why_len) {
  const adnn_conv2d_desc *d = &p->op.desc.conv2d;
  const int f64 = p->f64;
  const int64_t N = d->x.dims[0], C = d->x.dims[1], H = d->x.dims[2], W = d->x.dims[3];
  const int64_t K = d->w.dims[0], CG = d->w.dims[1], R = d->w.dims[2], S = d->w.dims[3];
  const int64_t P = d->y.dims[2], Q = d->y.dims[3];
  *unusable = 0;

  /* Layout class. */
  const int y_nchw = packed_in(&d->y, perm_nchw), y_nhwc = packed_in(&d->y, perm_nhwc);
  if (y_nhwc && !y_nchw) c->nhwc = 1;
  else if (y_nchw) c->nhwc = 0;
  else c->nhwc = packed_in(&d->x, perm_nhwc) && !packed_in(&d->x, perm_nchw);
  const int *perm = c->nhwc ? perm_nhwc : perm_nchw;
  c->y_tmp = !packed_in(&d->y, perm);

  const int symmetric = d->pad_top == d->pad_bottom && d->pad_left == d->pad_right;
  c->pack_x = !symmetric || !packed_in(&d->x, perm);
  int64_t xh = H, xw = W, pad_h = d->pad_top, pad_w = d->pad_left;
  if (c->pack_x && !symmetric) {
    c->xpad[0] = d->pad_top;
    c->xpad[1] = d->pad_bottom;
    c->xpad[2] = d->pad_left;
    c->xpad[3] = d->pad_right;
    xh = H + d->pad_top + d->pad_bottom;
    xw = W + d->pad_left + d->pad_right;
    pad_h = pad_w = 0;
  }
  c->pack_w = !packed_in(&d->w, perm);

  /* cuDNN's legacy API takes int sizes: every extent and element count must
   * fit (elementwise counts; byte offsets are cuDNN's business). */
  const int64_t vals[] = {N, C, xh, xw, K, CG, R, S, P, Q, d->stride_h, d->stride_w,
                          d->dilation_h, d->dilation_w, pad_h, pad_w, d->groups,
                          N * C * xh * xw, K * CG * R * S, N * K * P * Q};
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
    if (vals[i] > INT_MAX) {
      *unusable = 1;
      snprintf(why, why_len, "a size exceeds cuDNN's int range");
      return ADNN_STATUS_NOT_SUPPORTED;
    }

  adnn_status st = cuda__context_cudnn(p->ctx, &c->handle);
  if (st != ADNN_STATUS_SUCCESS) return st;
  const cudnnDataType_t dt = f64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  const cudnnTensorFormat_t fmt = c->nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;

  CUDNN_TRY(cudnnCreateTensorDescriptor(&c->xd), "cudnnCreateTensorDescriptor");
  CUDNN_TRY(cudnnCreateTensorDescriptor(&c->yd), "cudnnCreateTensorDescriptor");
  CUDNN_TRY(cudnnCreateFilterDescriptor(&c->wd), "cudnnCreateFilterDescriptor");
  CUDNN_TRY(cudnnCreateConvolutionDescriptor(&c->cd), "cudnnCreateConvolutionDescriptor");
  CUDNN_TRY(cudnnSetTensor4dDescriptor(c->xd, fmt, dt, (int)N, (int)C, (int)xh, (int)xw),
            "cudnnSetTensor4dDescriptor(x)");
  CUDNN_TRY(cudnnSetTensor4dDescriptor(c->yd, fmt, dt, (int)N, (int)K, (int)P, (int)Q),
            "cudnnSetTensor4dDescriptor(y)");
  CUDNN_TRY(cudnnSetFilter4dDescriptor(c->wd, dt, fmt, (int)K, (int)CG, (int)R, (int)S),
            "cudnnSetFilter4dDescriptor");
  CUDNN_TRY(cudnnSetConvolution2dDescriptor(c->cd, (int)pad_h, (int)pad_w, (int)d->stride_h,
                                            (int)d->stride_w, (int)d->dilation_h,
                                            (int)d->dilation_w, CUDNN_CROSS_CORRELATION, dt),
            "cudnnSetConvolution2dDescriptor");
  CUDNN_TRY(cudnnSetConvolutionGroupCount(c->cd, (int)d->groups), "cudnnSetConvolutionGroupCount");
  const int tf32 = !f64 && (p->op.flags & ADNN_CONTEXT_ALLOW_TF32);
  const cudnnMathType_t math = f64 ? CUDNN_DEFAULT_MATH : tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
  CUDNN_TRY(cudnnSetConvolutionMathType(c->cd, math), "cudnnSetConvolutionMathType");

  int on, oc, oh, ow;
  CUDNN_TRY(cudnnGetConvolution2dForwardOutputDim(c->cd, c->xd, c->wd, &on, &oc, &oh, &ow),
            "cudnnGetConvolution2dForwardOutputDim");
  if (on != N || oc != K || oh != P || ow != Q) {
    *unusable = 1;
    snprintf(why, why_len, "cuDNN computes a %dx%dx%dx%d output instead of %lldx%lldx%lldx%lld",
             on, oc, oh, ow, (long long)N, (long long)K, (long long)P, (long long)Q);
    return ADNN_STATUS_NOT_SUPPORTED;
  }

  /* Fused epilogue candidates. */
  const int act = (int)d->activation.kind;
  const int can_fuse = !f64 && d->has_bias && !c->y_tmp &&
                       (d->bias.strides[0] == 1 || K == 1) &&
                       (act == ADNN_ACTIVATION_RELU || act == ADNN_ACTIVATION_IDENTITY);

  /* Candidates. */
  const unsigned family =
      c->only_algo >= 0 ? 1u << c->only_algo : forced_family(d->algorithm);
  const size_t limit = workspace_limit();
  int max_count = 0;
  CUDNN_TRY(cudnnGetConvolutionForwardAlgorithmMaxCount(c->handle, &max_count),
            "cudnnGetConvolutionForwardAlgorithmMaxCount");
  if (max_count < 1) max_count = 1;
  if (max_count > 16) max_count = 16;
  cudnnConvolutionFwdAlgoPerf_t perf[16];
  int returned = 0;
  const char *find = cuda__host->getenv("ADNN_CUDA_CONV_FIND");
  int measured = 0;
  if (find && strcmp(find, "1") == 0 && c->list == NULL && c->only_algo < 0) {
    /* Measure: scratch x, w, y and a workspace of the limit, freed after. */
    const size_t es = f64 ? 8 : 4;
    void *sx = NULL, *sw = NULL, *sy = NULL, *sws = NULL;
    size_t sws_bytes = limit;
    cudaError_t e = cudaMalloc(&sx, (size_t)(N * C * xh * xw) * es);
    if (e == cudaSuccess) e = cudaMalloc(&sw, (size_t)(K * CG * R * S) * es);
    if (e == cudaSuccess) e = cudaMalloc(&sy, (size_t)(N * K * P * Q) * es);
    if (e == cudaSuccess && sws_bytes > 0 && cudaMalloc(&sws, sws_bytes) != cudaSuccess) {
      (void)cudaGetLastError();
      sws = NULL;
      sws_bytes = 0;
    }
    if (e == cudaSuccess) {
      cudnnStatus_t fe = cudnnFindConvolutionForwardAlgorithmEx(
          c->handle, c->xd, sx, c->wd, sw, c->cd, c->yd, sy, max_count, &returned, perf, sws,
          sws_bytes);
      if (fe == CUDNN_STATUS_SUCCESS) measured = 1;
      else
        cuda__log(ADNN_LOG_WARN, "cudnnFindConvolutionForwardAlgorithmEx: %s; using the heuristic",
                  cudnnGetErrorString(fe));
    } else {
      (void)cudaGetLastError();
      cuda__log(ADNN_LOG_WARN, "ADNN_CUDA_CONV_FIND: no memory for scratch buffers; using the heuristic");
    }
    cudaFree(sx);
    cudaFree(sw);
    cudaFree(sy);
    cudaFree(sws);
  }
  if (!measured)
    CUDNN_TRY(cudnnGetConvolutionForwardAlgorithm_v7(c->handle, c->xd, c->wd, c->cd, c->yd,
                                                     max_count, &returned, perf),
              "cudnnGetConvolutionForwardAlgorithm_v7");
  /* The plan's workspace beyond the algorithm's (see the layout below). */
  const size_t es = f64 ? 8 : 4;
  size_t extra = 0;
  if (c->pack_x) extra += align256((size_t)(N * C * xh * xw) * es);
  if (c->pack_w) extra += align256((size_t)(K * CG * R * S) * es);
  if (c->y_tmp) extra += align256((size_t)(N * K * P * Q) * es);
  unsigned listed = 0; /* algorithms already listed (bit i: algo i) */
  int chosen = -1;
  for (int i = 0; i < returned && chosen < 0; i++) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    if ((unsigned)perf[i].algo >= 32 || !(family & (1u << perf[i].algo))) continue;
    if (!tf32 && !f64 && perf[i].mathType != CUDNN_FMA_MATH &&
        perf[i].mathType != CUDNN_DEFAULT_MATH)
      continue; /* a tensor-op (TF32) variant the context does not allow */
    /* ALLOW_CONVERSION may down-convert FP32 data to FP16, whose range (65504)
     * is far smaller than TF32's: the TF32 opt-in does not cover it. */
    if (perf[i].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) continue;
    /* With TF32 allowed, run each candidate in the math type cuDNN ranked it
     * with; without, the descriptor stays FMA (DEFAULT could mean TF32 on
     * Ampere and newer). */
    if (tf32 && cudnnSetConvolutionMathType(c->cd, perf[i].mathType) != CUDNN_STATUS_SUCCESS)
      continue;
    size_t ws = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(c->handle, c->xd, c->wd, c->cd, c->yd,
                                                perf[i].algo, &ws) != CUDNN_STATUS_SUCCESS)
      continue;
    if (ws > limit) continue;
    if (c->list != NULL) {
      /* List mode: every usable algorithm once, in cuDNN's order. */
      if (listed & (1u << perf[i].algo)) continue;
      listed |= 1u << perf[i].algo;
      if (c->list_count < c->list_max) {
        adnn_plugin_candidate *e = &c->list[c->list_count];
        memset(e, 0, sizeof *e);
        snprintf(e->name, sizeof e->name, "cudnn:%s", algo_name(perf[i].algo));
        e->workspace_bytes = align256(ws) + extra;
        e->deterministic = perf[i].determinism == CUDNN_DETERMINISTIC;
      }
      c->list_count++;
      continue;
    }
    chosen = i;
    c->algo = perf[i].algo;
    c->algo_ws = ws;
  }
  if (c->list != NULL) return ADNN_STATUS_SUCCESS;
  if (chosen < 0) {
    *unusable = 1;
    snprintf(why, why_len, "cuDNN offers no usable algorithm%s within the workspace limit of %zu bytes",
             family == ~0u ? "" : " of the forced family", limit);
    return ADNN_STATUS_NOT_SUPPORTED;
  }
  c->fused = can_fuse && (act == ADNN_ACTIVATION_RELU ||
                          c->algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
  if (c->fused) {
    CUDNN_TRY(cudnnCreateTensorDescriptor(&c->bd), "cudnnCreateTensorDescriptor(bias)");
    CUDNN_TRY(cudnnSetTensor4dDescriptor(c->bd, fmt, dt, 1, (int)K, 1, 1),
              "cudnnSetTensor4dDescriptor(bias)");
    CUDNN_TRY(cudnnCreateActivationDescriptor(&c->ad), "cudnnCreateActivationDescriptor");
    /* adnn's relu keeps NaN (x < 0 ? 0 : x), so NaN must propagate. */
    CUDNN_TRY(cudnnSetActivationDescriptor(c->ad, act == ADNN_ACTIVATION_RELU
                                                      ? CUDNN_ACTIVATION_RELU
                                                      : CUDNN_ACTIVATION_IDENTITY,
                                           CUDNN_PROPAGATE_NAN, 0.0),
              "cudnnSetActivationDescriptor");
  }
  c->epilogue = !c->fused && (d->has_bias || act != ADNN_ACTIVATION_IDENTITY || c->y_tmp);

  /* Workspace layout: [algorithm][x packed][w packed][y temporary]. */
  size_t off = align256(c->algo_ws);
  if (c->pack_x) {
    c->xbuf_off = off;
    off += align256((size_t)(N * C * xh * xw) * es);
  }
  if (c->pack_w) {
    c->wbuf_off = off;
    off += align256((size_t)(K * CG * R * S) * es);
    const int64_t wdims[4] = {K, CG, R, S};
    int64_t dst[4];
    packed_strides(wdims, c->nhwc, dst); /* KCRS or KRSC, like NCHW / NHWC */
    c->w_nd.rank = 4;
    for (int i = 0; i < 4; i++) {
      c->w_nd.dims[i] = wdims[i];
      c->w_nd.strides[0][i] = d->w.strides[i];
      c->w_nd.strides[1][i] = dst[i];
    }
  }
  int64_t ysrc[4];
  const int64_t ydims[4] = {N, K, P, Q};
  packed_strides(ydims, c->nhwc, ysrc);
  if (c->y_tmp) {
    c->ybuf_off = off;
    off += align256((size_t)(N * K * P * Q) * es);
  }
  if (c->epilogue) {
    c->epi_nd.rank = 4;
    for (int i = 0; i < 4; i++) {
      c->epi_nd.dims[i] = ydims[i];
      c->epi_nd.strides[0][i] = c->y_tmp ? ysrc[i] : d->y.strides[i];
      c->epi_nd.strides[1][i] = d->y.strides[i];
    }
  }
  p->workspace_bytes = off;
  if (off > 0) {
    cudaError_t e = cudaMalloc(&p->workspace, off);
    if (e != cudaSuccess) {
      p->workspace = NULL;
      char what[96];
      snprintf(what, sizeof what, "cudaMalloc of a %zu-byte conv2d workspace", off);
      p->workspace_bytes = 0;
      return cuda__fail_runtime(e, what);
    }
  }
  c->use_cudnn = 1;
  snprintf(p->algorithm, sizeof p->algorithm, "cudnn:%s%s", algo_name(c->algo),
           c->fused ? "+bias_act" : "");
  return ADNN_STATUS_SUCCESS;
}

adnn_status cuda__conv2d_create(adnn_plugin_plan *p) {
  const adnn_conv2d_desc *d = &p->op.desc.conv2d;
  cuda_conv2d_plan *c = calloc(1, sizeof *c);
  if (!c) return cuda__host->fail(ADNN_STATUS_OUT_OF_MEMORY, "cuda: out of host memory");
  p->conv = c;
  c->only_algo = -1;
  direct_params(d, &c->direct);
  const int64_t C = d->x.dims[1], K = d->w.dims[0], R = d->w.dims[2], S = d->w.dims[3];

  /* A candidate named by the tuner (see cuda__plan_candidates) is taken as
   * is: no fallback, so that what was measured is what runs. */
  const char *cand = p->op.candidate;
  if (cand[0] != '\0') {
    if (strcmp(cand, "direct") == 0) {
      snprintf(p->algorithm, sizeof p->algorithm, "direct");
      return ADNN_STATUS_SUCCESS;
    }
    c->only_algo = algo_from_candidate(cand);
    if (c->only_algo < 0)
      return cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                              "adnn_plan_create_conv2d: the cuda backend has no algorithm named "
                              "\"%.64s\"", cand);
    int unusable = 0;
    char why[256] = "";
    adnn_status st = setup_cudnn(p, c, &unusable, why, sizeof why);
    if (st == ADNN_STATUS_SUCCESS || !unusable) return st;
    return cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                            "adnn_plan_create_conv2d: %s cannot run this problem: %s", cand, why);
  }

  switch (d->algorithm) {
    case ADNN_CONV2D_ALGO_REFERENCE:
      c->exact = 1;
      snprintf(p->algorithm, sizeof p->algorithm, "reference");
      return ADNN_STATUS_SUCCESS;
    case ADNN_CONV2D_ALGO_DIRECT:
      snprintf(p->algorithm, sizeof p->algorithm, "direct");
      return ADNN_STATUS_SUCCESS;
    case ADNN_CONV2D_ALGO_DEPTHWISE_DIRECT:
      if (!(d->groups == C && d->groups == K))
        return cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                "adnn_plan_create_conv2d: algorithm depthwise_direct needs groups "
                                "== C == K (here groups %lld, C %lld, K %lld)",
                                (long long)d->groups, (long long)C, (long long)K);
      snprintf(p->algorithm, sizeof p->algorithm, "direct");
      return ADNN_STATUS_SUCCESS;
    case ADNN_CONV2D_ALGO_GEMM_1X1:
      if (!(R == 1 && S == 1 && d->stride_h == 1 && d->stride_w == 1 && d->pad_top == 0 &&
            d->pad_bottom == 0 && d->pad_left == 0 && d->pad_right == 0))
        return cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                "adnn_plan_create_conv2d: algorithm gemm_1x1 needs a 1x1 filter, "
                                "stride 1 and no padding");
      break;
    case ADNN_CONV2D_ALGO_WINOGRAD_F2X3:
      if (!(R == 3 && S == 3 && d->stride_h == 1 && d->stride_w == 1 && d->dilation_h == 1 &&
            d->dilation_w == 1))
        return cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                "adnn_plan_create_conv2d: algorithm winograd_f2x3 needs a 3x3 "
                                "filter, stride 1 and dilation 1");
      break;
    default:
      break;
  }

  int unusable = 0;
  char why[256] = "";
  adnn_status st = setup_cudnn(p, c, &unusable, why, sizeof why);
  if (st == ADNN_STATUS_SUCCESS) return st;
  destroy_descriptors(c);
  if (p->workspace) {
    cudaFree(p->workspace);
    p->workspace = NULL;
  }
  p->workspace_bytes = 0;
  c->use_cudnn = 0;
  if (!unusable) return st; /* a real failure (cuDNN unavailable, out of memory) */
  if (d->algorithm != ADNN_CONV2D_ALGO_AUTO)
    return cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                            "adnn_plan_create_conv2d: algorithm %s cannot run this problem on "
                            "the cuda backend: %s", adnn_plugin_conv2d_algorithm_name(d->algorithm), why);
  cuda__log(ADNN_LOG_INFO, "conv2d: %s; using the direct kernel", why);
  snprintf(p->algorithm, sizeof p->algorithm, "direct");
  return ADNN_STATUS_SUCCESS;
}

adnn_status cuda__conv2d_execute(adnn_plugin_plan *p, const void *const *in, void *out) {
  const adnn_conv2d_desc *d = &p->op.desc.conv2d;
  cuda_conv2d_plan *c = p->conv;
  const adnn_cuda_launch *l = &p->launch;
  const void *bias = d->has_bias ? in[2] : NULL;
  if (!c->use_cudnn)
    return cuda__check_launch(
        adnn_cuda_conv2d_direct(l, p->f64, c->exact, &c->direct, in[0], in[1], bias, out),
        "conv2d_direct");

  char *ws = (char *)p->workspace;
  const void *x = in[0], *w = in[1];
  void *y = c->y_tmp ? (void *)(ws + c->ybuf_off) : out;
  if (c->pack_x) {
    const int64_t dims[4] = {d->x.dims[0], d->x.dims[1], d->x.dims[2], d->x.dims[3]};
    adnn_status st = cuda__check_launch(
        adnn_cuda_pad_pack(l, p->f64, dims, d->x.strides, c->xpad[0], c->xpad[1], c->xpad[2],
                           c->xpad[3], c->nhwc, x, ws + c->xbuf_off),
        "pad_pack");
    if (st != ADNN_STATUS_SUCCESS) return st;
    x = ws + c->xbuf_off;
  }
  if (c->pack_w) {
    const adnn_cuda_act ident = {0, 0.0, 0.0};
    const int64_t n = c->w_nd.dims[0] * c->w_nd.dims[1] * c->w_nd.dims[2] * c->w_nd.dims[3];
    adnn_status st = cuda__check_launch(
        adnn_cuda_bias_activation(l, p->f64, ident, &c->w_nd, n, 0, w, NULL, 0, ws + c->wbuf_off),
        "filter copy");
    if (st != ADNN_STATUS_SUCCESS) return st;
    w = ws + c->wbuf_off;
  }
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const void *one = p->f64 ? (const void *)&one_d : (const void *)&one_f;
  const void *zero = p->f64 ? (const void *)&zero_d : (const void *)&zero_f;
  cudnnStatus_t e;
  if (c->fused)
    e = cudnnConvolutionBiasActivationForward(c->handle, one, c->xd, x, c->wd, w, c->cd, c->algo,
                                              ws, c->algo_ws, zero, c->yd, y, c->bd, bias, c->ad,
                                              c->yd, y);
  else
    e = cudnnConvolutionForward(c->handle, one, c->xd, x, c->wd, w, c->cd, c->algo, ws, c->algo_ws,
                                zero, c->yd, y);
  if (e != CUDNN_STATUS_SUCCESS)
    return cuda__fail_cudnn(e, c->fused ? "cudnnConvolutionBiasActivationForward"
                                        : "cudnnConvolutionForward");
  if (c->epilogue) {
    const int64_t n = d->y.dims[0] * d->y.dims[1] * d->y.dims[2] * d->y.dims[3];
    adnn_cuda_act act = {(int32_t)d->activation.kind, d->activation.alpha, d->activation.beta};
    return cuda__check_launch(
        adnn_cuda_bias_activation(l, p->f64, act, &c->epi_nd, n, 1, y, bias,
                                  d->has_bias ? d->bias.strides[0] : 0, out),
        "conv2d bias+activation");
  }
  return ADNN_STATUS_SUCCESS;
}

void cuda__conv2d_destroy(adnn_plugin_plan *p) {
  if (!p->conv) return;
  destroy_descriptors(p->conv);
  free(p->conv);
  p->conv = NULL;
}

adnn_status cuda__plan_candidates(adnn_plugin_context *ctx, const adnn_plugin_op *op,
                                  adnn_plugin_candidate *out, int32_t max, int32_t *count) {
  *count = 0;
  if (op->kind != ADNN_PLUGIN_OP_CONV2D) return ADNN_STATUS_SUCCESS;
  const adnn_dtype dt = op->desc.conv2d.x.dtype;
  if (dt != ADNN_DTYPE_F32 && dt != ADNN_DTYPE_F64) return ADNN_STATUS_SUCCESS;
  adnn_status st = cuda__context_enter(ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  adnn_plugin_plan *p = calloc(1, sizeof *p);
  cuda_conv2d_plan *c = calloc(1, sizeof *c);
  if (!p || !c) {
    free(p);
    free(c);
    return cuda__host->fail(ADNN_STATUS_OUT_OF_MEMORY, "cuda: out of host memory");
  }
  p->ctx = ctx;
  p->op = *op;
  p->op.candidate[0] = '\0';
  p->f64 = dt == ADNN_DTYPE_F64;
  p->conv = c;
  c->only_algo = -1;
  c->list = out;
  c->list_max = max;
  int unusable = 0;
  char why[256] = "";
  st = setup_cudnn(p, c, &unusable, why, sizeof why);
  int32_t n = c->list_count;
  destroy_descriptors(c);
  free(c);
  free(p);
  if (st != ADNN_STATUS_SUCCESS && !unusable) return st;
  /* cuDNN cannot run it (unusable): "direct" alone, as plan creation does. */
  if (st != ADNN_STATUS_SUCCESS) n = 0;
  if (n < max) {
    memset(&out[n], 0, sizeof out[n]);
    snprintf(out[n].name, sizeof out[n].name, "direct");
    out[n].deterministic = 1;
  }
  *count = n + 1;
  return ADNN_STATUS_SUCCESS;
}
