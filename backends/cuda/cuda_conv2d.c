/*
 * conv2d on the CUDA plugin: cuDNN's legacy convolution API, with our own
 * kernels around it where cuDNN's model differs from adnn's, and our direct
 * kernel where cuDNN cannot help.
 *
 * The plan goes through the ABI's steps once each, so that a tuned plan
 * describes its problem to cuDNN once however many candidates are measured:
 *
 *  create      the layout plan (cuda_conv2d_layout.c: layout class, packing,
 *              explicit padding), then, unless the forced algorithm is one of
 *              our direct kernels, the cuDNN description: descriptors, math
 *              type, the check that cuDNN computes adnn's output size, and
 *              whether bias and activation can be fused. A problem cuDNN
 *              cannot describe (a size beyond its int range, a descriptor it
 *              rejects) is recorded as such, not failed: AUTO then runs the
 *              direct kernel.
 *  candidates  the ranking (made once per plan, on first need):
 *              cudnnGetConvolutionForwardAlgorithm_v7's list, keeping what
 *              cuDNN reports usable, in a math type the context allows, whose
 *              workspace fits op->workspace_limit; each algorithm once, as
 *              "cudnn:<ALGO>" with the plan's whole workspace and cuDNN's
 *              determinism, then our "direct" kernel.
 *  select      the chosen algorithm's workspace layout
 *              [algorithm][x packed][w packed][y temporary], its allocation,
 *              and whether the epilogue is fused; 0 chooses like the
 *              heuristic below.
 *  execute     pad_pack, filter copy, the convolution, the epilogue: only
 *              what the layout plan and the selection call for.
 *
 * Candidate ids are integers: a cuDNN algorithm a is a + 1
 * (CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM is 1), our direct kernel
 * CONV2D_ID_DIRECT and, when forced, the exact direct kernel
 * CONV2D_ID_REFERENCE. Names are what the performance database stores.
 *
 * The plugin's own choice (select 0): the forced algorithm's route (see
 * routes[] below); for AUTO and the cuDNN families, the first ranked
 * algorithm of the family (the first deterministic one when the op asks for
 * determinism and there is one). AUTO falls back to the direct kernel, with a
 * log line, when cuDNN offers nothing; a forced family refuses with the
 * reason.
 *
 * Bias and activation: cudnnConvolutionBiasActivationForward for F32 with
 * relu (NaN propagated, as adnn's relu) or identity (which cuDNN runs only
 * with IMPLICIT_PRECOMP_GEMM), bias of unit stride, and y written directly;
 * anything else runs our epilogue kernel once over y after
 * cudnnConvolutionForward.
 *
 * Math: FP32 stays FP32 (CUDNN_FMA_MATH) unless the context allows TF32
 * (ADNN_CONTEXT_ALLOW_TF32: CUDNN_TENSOR_OP_MATH, and each algorithm runs in
 * the math type cuDNN ranked it with).
 *
 * F16 and BF16 (x, w, bias and y of the one dtype, doc/ops.md "Low
 * precision"): cuDNN's PSEUDO_HALF_CONFIG / PSEUDO_BFLOAT16_CONFIG (16-bit
 * tensors, compute type F32, CUDNN_TENSOR_OP_MATH, each algorithm in the math
 * type cuDNN ranked it with), which rounds y once, for problems without a
 * bias and with the identity. cuDNN would round the convolution to 16 bits
 * before a bias or an activation, so those problems are "widened": x and w
 * are copied exactly into F32 buffers of the workspace, cuDNN runs them in
 * F32 (tensor-op math, exact on values of at most 11 significant bits) into
 * an F32 temporary, and the epilogue adds the bias and the activation in F32
 * and rounds y once. BF16 in cuDNN needs compute capability 8.0: below it
 * every BF16 problem is widened. The packing copies are exact.
 *
 * I8 and U8 inputs (an I8 w, I32 or requantized I8/U8 y, x zero point):
 * our exact kernel of conv2d-int8.cu for AUTO, direct and reference; other
 * forced algorithms refuse. No cuDNN call is made for them.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_conv2d.h"
#include "backends/cuda/cuda_conv2d_cudnn.h"
#include "backends/cuda/cuda_op.h"

/* Candidate ids besides the cuDNN algorithms (1 .. CUDNN_CONVOLUTION_FWD_ALGO_COUNT). */
enum { CONV2D_ID_DIRECT = 100, CONV2D_ID_REFERENCE = 101 };

/* The most entries of cuDNN's ranking the plan keeps. */
enum { CONV2D_MAX_RANKED = 16 };

/* ------------------------------------------------------------------------ */
/* Algorithms: names, cuDNN families, applicability (stated once)            */
/* ------------------------------------------------------------------------ */

static const char *cudnn_algo_name(cudnnConvolutionFwdAlgo_t a) {
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

#define CUDNN_BIT(a) (1u << CUDNN_CONVOLUTION_FWD_ALGO_##a)
#define FAMILY_ANY (~0u)
#define FAMILY_GEMM (CUDNN_BIT(IMPLICIT_GEMM) | CUDNN_BIT(IMPLICIT_PRECOMP_GEMM) | CUDNN_BIT(GEMM))
#define FAMILY_WINOGRAD (CUDNN_BIT(WINOGRAD) | CUDNN_BIT(WINOGRAD_NONFUSED))

/* How each adnn algorithm runs on this plugin. */
typedef struct conv2d_route {
  adnn_conv2d_algorithm algorithm; /* its own index: a missing row reads as AUTO */
  unsigned cudnn_family;           /* bit a: cuDNN algorithm a may run it; 0: our direct kernel */
  int exact;                       /* the direct kernel accumulating in double */
  int (*applies)(const adnn_plugin_conv2d *p, char *why, size_t len); /* NULL: any problem */
} conv2d_route;

static const conv2d_route routes[] = {
    [ADNN_CONV2D_ALGO_AUTO] = {ADNN_CONV2D_ALGO_AUTO, FAMILY_ANY, 0, NULL},
    [ADNN_CONV2D_ALGO_REFERENCE] = {ADNN_CONV2D_ALGO_REFERENCE, 0, 1, NULL},
    [ADNN_CONV2D_ALGO_IM2COL_GEMM] = {ADNN_CONV2D_ALGO_IM2COL_GEMM, FAMILY_GEMM, 0, NULL},
    [ADNN_CONV2D_ALGO_GEMM_1X1] = {ADNN_CONV2D_ALGO_GEMM_1X1, FAMILY_GEMM, 0,
                                   adnn_cuda__conv2d_pointwise_applies},
    [ADNN_CONV2D_ALGO_WINOGRAD_F2X3] = {ADNN_CONV2D_ALGO_WINOGRAD_F2X3, FAMILY_WINOGRAD, 0,
                                        adnn_cuda__conv2d_winograd_applies},
    [ADNN_CONV2D_ALGO_DEPTHWISE_DIRECT] = {ADNN_CONV2D_ALGO_DEPTHWISE_DIRECT, 0, 0,
                                           adnn_cuda__conv2d_depthwise_applies},
    [ADNN_CONV2D_ALGO_DIRECT] = {ADNN_CONV2D_ALGO_DIRECT, 0, 0, NULL},
    [ADNN_CONV2D_ALGO_WINOGRAD_F4X3] = {ADNN_CONV2D_ALGO_WINOGRAD_F4X3, 0, 0,
                                        adnn_cuda__conv2d_winograd_f4x3_applies},
};

/* A new algorithm of ADNN_CONV2D_ALGO_LIST needs a route before this builds. */
#define CONV2D_COUNT_ALGO_(NAME, name, value, def) +1
_Static_assert(sizeof routes / sizeof routes[0] == 0 ADNN_CONV2D_ALGO_LIST(CONV2D_COUNT_ALGO_),
               "every adnn_conv2d_algorithm needs a route in cuda_conv2d.c");
#undef CONV2D_COUNT_ALGO_

/* ------------------------------------------------------------------------ */
/* The plan                                                                  */
/* ------------------------------------------------------------------------ */

/* One usable entry of cuDNN's ranking. */
typedef struct conv2d_ranked {
  cudnnConvolutionFwdAlgo_t algo;
  cudnnMathType_t math; /* the math type cuDNN ranked it with */
  size_t workspace;     /* cudnnGetConvolutionForwardWorkspaceSize for our descriptors */
  int deterministic;
} conv2d_ranked;

typedef enum conv2d_engine { ENGINE_NONE, ENGINE_DIRECT, ENGINE_CUDNN } conv2d_engine;

typedef struct conv2d_plan {
  adnn_plugin_conv2d p;
  const conv2d_route *route;      /* of p.algorithm */
  int int8;                       /* integer inputs: the exact kernel of conv2d-int8.cu */
  adnn_cuda_memory_order y_order; /* the direct kernel's output order */
  adnn_cuda__conv2d_layout layout;

  /* The cuDNN description (create): the shared part, then the fusion's. */
  adnn_cuda__conv2d_cudnn dnn;
  cudnnTensorDescriptor_t bd;
  cudnnActivationDescriptor_t ad;
  int can_fuse; /* bd and ad exist: the fused call may run */

  /* cuDNN's ranking (first candidates or select). */
  int ranked;
  int n_ranked;
  conv2d_ranked ranking[CONV2D_MAX_RANKED];

  /* The selection. */
  conv2d_engine engine;
  int exact;
  cudnnConvolutionFwdAlgo_t algo;
  size_t algo_workspace;
  int fused, epilogue;
  size_t x_offset, w_offset, y_offset; /* of the copies in the workspace */
} conv2d_plan;

/* Checks a cuDNN call of the description or the ranking (see
 * adnn_cuda__conv2d_cudnn_ok). */
static int cudnn_ok(conv2d_plan *c, cudnnStatus_t e, const char *what, adnn_status *st) {
  return adnn_cuda__conv2d_cudnn_ok(&c->dnn, e, what, st);
}

static void destroy_descriptors(conv2d_plan *c) {
  adnn_cuda__conv2d_cudnn_destroy(&c->dnn);
  if (c->bd) cudnnDestroyTensorDescriptor(c->bd);
  if (c->ad) cudnnDestroyActivationDescriptor(c->ad);
  c->bd = NULL;
  c->ad = NULL;
}

/* The fused bias + activation descriptors, when cuDNN's fused call can run
 * the problem: F32, a unit-stride bias of K, relu or identity, and y written
 * directly (whether it runs also depends on the algorithm: identity only with
 * IMPLICIT_PRECOMP_GEMM, decided at select). Returns 0 only on a real
 * failure (*st); when cuDNN refuses only the fused form, the convolution
 * still runs, followed by our epilogue. */
static int describe_fusion(const adnn_plugin_plan *plan, conv2d_plan *c, cudnnTensorFormat_t fmt,
                           cudnnDataType_t dt, adnn_status *st) {
  const adnn_plugin_conv2d *p = &c->p;
  const adnn_activation_kind act = p->activation.kind;
  const int fusable = plan->op->dtype == ADNN_DTYPE_F32 && p->has_bias && !c->layout.y_tmp &&
                      (p->bias.strides[0] == 1 || p->K == 1) &&
                      (act == ADNN_ACTIVATION_RELU || act == ADNN_ACTIVATION_IDENTITY);
  if (!fusable) return 1;
  /* adnn's relu keeps NaN (x < 0 ? 0 : x), so NaN must propagate. */
  const cudnnActivationMode_t mode =
      act == ADNN_ACTIVATION_RELU ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY;
  c->can_fuse =
      cudnn_ok(c, cudnnCreateTensorDescriptor(&c->bd), "cudnnCreateTensorDescriptor(bias)", st) &&
      cudnn_ok(c, cudnnSetTensor4dDescriptor(c->bd, fmt, dt, 1, (int)p->K, 1, 1),
               "cudnnSetTensor4dDescriptor(bias)", st) &&
      cudnn_ok(c, cudnnCreateActivationDescriptor(&c->ad), "cudnnCreateActivationDescriptor", st) &&
      cudnn_ok(c, cudnnSetActivationDescriptor(c->ad, mode, CUDNN_PROPAGATE_NAN, 0.0),
               "cudnnSetActivationDescriptor", st);
  if (*st != ADNN_STATUS_SUCCESS) return 0;
  if (!c->can_fuse) {
    c->dnn.unusable[0] = '\0';
    if (c->bd) cudnnDestroyTensorDescriptor(c->bd);
    if (c->ad) cudnnDestroyActivationDescriptor(c->ad);
    c->bd = NULL;
    c->ad = NULL;
  }
  return 1;
}

/* The cuDNN description of the problem, made once per plan. Returns SUCCESS
 * also when cuDNN cannot take the problem (c->dnn.unusable says why, and the
 * descriptors are released); a failure status only for real failures. */
static adnn_status describe_cudnn(adnn_plugin_plan *plan, conv2d_plan *c) {
  /* A widened F16/BF16 plan (see create) gives cuDNN F32 data. */
  const adnn_dtype dtype = c->layout.widened ? ADNN_DTYPE_F32 : plan->op->dtype;
  const cudnnDataType_t dt = adnn_cuda__conv2d_cudnn_data_type(dtype);
  const cudnnTensorFormat_t fmt = adnn_cuda__conv2d_cudnn_format(&c->layout);
  int ok = 0;
  adnn_status st = adnn_cuda__conv2d_cudnn_describe(plan, &c->p, &c->layout, "y", &c->dnn, &ok);
  if (ok) ok = describe_fusion(plan, c, fmt, dt, &st);
  if (!ok) destroy_descriptors(c);
  return st;
}

/* cuDNN's ranking, made once per plan: the usable entries of
 * cudnnGetConvolutionForwardAlgorithm_v7 in its order. Failures that only
 * mean cuDNN cannot take the problem leave the ranking empty (c->dnn.unusable
 * says why). */
static adnn_status rank_cudnn(adnn_plugin_plan *plan, conv2d_plan *c) {
  if (c->ranked) return ADNN_STATUS_SUCCESS;
  if (!c->dnn.described) {
    c->ranked = 1;
    return ADNN_STATUS_SUCCESS;
  }
  const int f64 = plan->op->dtype == ADNN_DTYPE_F64;
  const uint64_t limit = plan->op->workspace_limit;
  adnn_status st = ADNN_STATUS_SUCCESS;
  int max_count = 0, returned = 0;
  cudnnConvolutionFwdAlgoPerf_t perf[CONV2D_MAX_RANKED];
  int ok = cudnn_ok(c, cudnnGetConvolutionForwardAlgorithmMaxCount(c->dnn.handle, &max_count),
                    "cudnnGetConvolutionForwardAlgorithmMaxCount", &st);
  if (max_count < 1) max_count = 1;
  if (max_count > CONV2D_MAX_RANKED) max_count = CONV2D_MAX_RANKED;
  ok = ok && cudnn_ok(c,
                      cudnnGetConvolutionForwardAlgorithm_v7(c->dnn.handle, c->dnn.xd, c->dnn.wd, c->dnn.cd,
                                                             c->dnn.yd, max_count, &returned, perf),
                      "cudnnGetConvolutionForwardAlgorithm_v7", &st);
  /* A real failure leaves the plan unranked (a later call tries again); a
   * rejection ranks nothing, once. */
  if (st != ADNN_STATUS_SUCCESS) return st;
  c->ranked = 1;
  c->n_ranked = 0;
  if (!ok) return ADNN_STATUS_SUCCESS;
  for (int i = 0; i < returned; i++) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    if ((unsigned)perf[i].algo >= 32) continue; /* beyond the family bit masks */
    if (!c->dnn.tf32 && !c->dnn.lowp && !f64 && perf[i].mathType != CUDNN_FMA_MATH &&
        perf[i].mathType != CUDNN_DEFAULT_MATH)
      continue; /* a tensor-op (TF32) variant the context does not allow */
    /* ALLOW_CONVERSION may down-convert FP32 data to FP16, whose range (65504)
     * is far smaller than TF32's: the TF32 opt-in does not cover it. */
    if (perf[i].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) continue;
    /* With TF32 allowed (or F16/BF16 data), each candidate runs in the math
     * type cuDNN ranked it with, and its workspace is asked for in that math
     * type. */
    if ((c->dnn.tf32 || c->dnn.lowp) &&
        cudnnSetConvolutionMathType(c->dnn.cd, perf[i].mathType) != CUDNN_STATUS_SUCCESS)
      continue;
    size_t ws = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(c->dnn.handle, c->dnn.xd, c->dnn.wd, c->dnn.cd, c->dnn.yd,
                                                perf[i].algo, &ws) != CUDNN_STATUS_SUCCESS)
      continue;
    if (ws > limit) continue;
    conv2d_ranked *r = &c->ranking[c->n_ranked++];
    r->algo = perf[i].algo;
    r->math = perf[i].mathType;
    r->workspace = ws;
    r->deterministic = perf[i].determinism == CUDNN_DETERMINISTIC;
  }
  return ADNN_STATUS_SUCCESS;
}

/* The first ranked entry in `family`; with `deterministic`, the first
 * deterministic one if there is any. NULL when none. */
static const conv2d_ranked *first_ranked(const conv2d_plan *c, unsigned family,
                                         int deterministic) {
  const conv2d_ranked *first = NULL;
  for (int i = 0; i < c->n_ranked; i++) {
    const conv2d_ranked *r = &c->ranking[i];
    if (!(family & (1u << r->algo))) continue;
    if (!deterministic || r->deterministic) return r;
    if (first == NULL) first = r;
  }
  return first;
}

/* Why no cuDNN algorithm of `family` can run the problem. */
static void why_no_cudnn(const adnn_plugin_plan *plan, const conv2d_plan *c, unsigned family,
                         char *why, size_t len) {
  if (c->dnn.unusable[0] != '\0')
    snprintf(why, len, "%s", c->dnn.unusable);
  else
    snprintf(why, len,
             "cuDNN offers no usable algorithm%s within the workspace limit of %llu bytes",
             family == FAMILY_ANY ? "" : " of the forced family",
             (unsigned long long)plan->op->workspace_limit);
}

/* ------------------------------------------------------------------------ */
/* create / candidates / select / execute / destroy                          */
/* ------------------------------------------------------------------------ */

static adnn_status conv2d_create(adnn_plugin_plan *plan) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(conv2d_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  conv2d_plan *c = plan->impl;
  adnn_plugin_op_problem(plan->op, &c->p, sizeof c->p);
  const adnn_conv2d_algorithm algorithm = c->p.algorithm;
  if ((unsigned)algorithm >= sizeof routes / sizeof routes[0] ||
      routes[algorithm].algorithm != algorithm)
    return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                 "adnn_plan_create_conv2d: the cuda backend does not know "
                                 "algorithm %d",
                                 (int)algorithm);
  c->route = &routes[algorithm];
  adnn_cuda__memory_order4(&c->p.y, &c->y_order);
  if (plan->op->dtype == ADNN_DTYPE_I8 || plan->op->dtype == ADNN_DTYPE_U8) {
    /* Integer inputs run our exact kernel (conv2d-int8.cu): cuDNN's INT8
     * convolutions have no u8 x, no x zero point and no per-channel
     * requantization. AUTO, direct and reference all name it. */
    if (algorithm != ADNN_CONV2D_ALGO_AUTO && algorithm != ADNN_CONV2D_ALGO_DIRECT &&
        algorithm != ADNN_CONV2D_ALGO_REFERENCE)
      return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                   "adnn_plan_create_conv2d: algorithm %s does not run %s "
                                   "inputs on the cuda backend (auto, direct and reference do)",
                                   adnn_plugin_conv2d_algorithm_name(algorithm),
                                   adnn_plugin_dtype_name(plan->op->dtype));
    c->int8 = 1;
    c->route = &routes[algorithm == ADNN_CONV2D_ALGO_REFERENCE ? ADNN_CONV2D_ALGO_REFERENCE
                                                                : ADNN_CONV2D_ALGO_DIRECT];
    return ADNN_STATUS_SUCCESS;
  }
  char why[256];
  if (c->route->applies != NULL && !c->route->applies(&c->p, why, sizeof why))
    return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                 "adnn_plan_create_conv2d: algorithm %s %s",
                                 adnn_plugin_conv2d_algorithm_name(algorithm), why);
  const adnn_dtype dtype = plan->op->dtype;
  int widen = 0;
  if (dtype == ADNN_DTYPE_F16 || dtype == ADNN_DTYPE_BF16) {
    /* cuDNN writes an F16/BF16 convolution rounded to the 16-bit type, so a
     * bias or an activation applied after it would round y twice: such a
     * problem runs cuDNN on exact F32 copies of x and w, and the epilogue
     * adds the bias and the activation to the F32 result and rounds once.
     * cuDNN's BF16 convolutions (PSEUDO_BFLOAT16_CONFIG) need compute
     * capability 8.0 or newer: older devices widen every BF16 problem. */
    widen = c->p.has_bias || c->p.activation.kind != ADNN_ACTIVATION_IDENTITY;
    if (!widen && dtype == ADNN_DTYPE_BF16 && c->route->cudnn_family != 0) {
      int major = 0;
      cudaError_t err =
          cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, plan->ctx->ordinal);
      if (err != cudaSuccess)
        return adnn_cuda__fail_runtime(err, "cudaDeviceGetAttribute(ComputeCapabilityMajor)");
      widen = major < 8;
    }
  }
  if (widen)
    adnn_cuda__conv2d_layout_plan_widened(&c->p, &c->layout);
  else
    adnn_cuda__conv2d_layout_plan(&c->p, adnn_cuda__plan_element_size(plan), &c->layout);
  /* Our direct kernels need no cuDNN at all (not even a handle). */
  if (c->route->cudnn_family == 0) return ADNN_STATUS_SUCCESS;
  return describe_cudnn(plan, c);
}

/* Appends a candidate to out (when it fits in max) and counts it. */
static void add_candidate(adnn_plugin_candidate *out, int32_t max, int32_t *count, int32_t id,
                          const char *name, size_t workspace, int deterministic) {
  if (*count < max) {
    adnn_plugin_candidate *e = &out[*count];
    memset(e, 0, sizeof *e);
    e->id = id;
    snprintf(e->name, sizeof e->name, "%s", name);
    e->workspace_bytes = workspace;
    e->deterministic = deterministic;
  }
  (*count)++;
}

static adnn_status conv2d_candidates(adnn_plugin_plan *plan, adnn_plugin_candidate *out,
                                     int32_t max, int32_t *count) {
  conv2d_plan *c = plan->impl;
  *count = 0;
  const conv2d_route *route = c->route;
  /* Our direct kernel: one thread per output, a fixed loop order, so its
   * results are the same run to run. */
  if (route->cudnn_family == 0) {
    add_candidate(out, max, count, route->exact ? CONV2D_ID_REFERENCE : CONV2D_ID_DIRECT,
                  route->exact ? "reference" : "direct", 0, 1);
    return ADNN_STATUS_SUCCESS;
  }
  adnn_status st = rank_cudnn(plan, c);
  if (st != ADNN_STATUS_SUCCESS) return st;
  const size_t extra = c->layout.extra_bytes;
  char name[64];
  if (route->algorithm != ADNN_CONV2D_ALGO_AUTO) {
    /* A forced family: what select(0) would run, alone, or nothing. */
    const conv2d_ranked *r = first_ranked(c, route->cudnn_family, plan->op->deterministic);
    if (r != NULL) {
      snprintf(name, sizeof name, "cudnn:%s", cudnn_algo_name(r->algo));
      add_candidate(out, max, count, (int32_t)r->algo + 1, name,
                    adnn_cuda__align256(r->workspace) + extra, r->deterministic);
    }
    return ADNN_STATUS_SUCCESS;
  }
  /* AUTO: every usable algorithm once, in cuDNN's order (the first is the
   * heuristic's choice), then the direct kernel, which runs anything. */
  unsigned listed = 0;
  for (int i = 0; i < c->n_ranked; i++) {
    const conv2d_ranked *r = &c->ranking[i];
    if (listed & (1u << r->algo)) continue;
    listed |= 1u << r->algo;
    snprintf(name, sizeof name, "cudnn:%s", cudnn_algo_name(r->algo));
    add_candidate(out, max, count, (int32_t)r->algo + 1, name,
                  adnn_cuda__align256(r->workspace) + extra, r->deterministic);
  }
  add_candidate(out, max, count, CONV2D_ID_DIRECT, "direct", 0, 1);
  return ADNN_STATUS_SUCCESS;
}

static void select_direct(adnn_plugin_plan *plan, conv2d_plan *c, int exact) {
  c->engine = ENGINE_DIRECT;
  c->exact = exact;
  snprintf(plan->algorithm, sizeof plan->algorithm, "%s", exact ? "reference" : "direct");
}

/* Selects ranked entry r: the fused call or the epilogue, the workspace layout
 * [algorithm][x packed][w packed][y temporary] and its allocation. */
static adnn_status select_cudnn(adnn_plugin_plan *plan, conv2d_plan *c, const conv2d_ranked *r) {
  const adnn_cuda__conv2d_layout *lay = &c->layout;
  if (c->dnn.tf32 || c->dnn.lowp) {
    cudnnStatus_t e = cudnnSetConvolutionMathType(c->dnn.cd, r->math);
    if (e != CUDNN_STATUS_SUCCESS) return adnn_cuda__fail_cudnn(e, "cudnnSetConvolutionMathType");
  }
  const adnn_activation_kind act = c->p.activation.kind;
  c->engine = ENGINE_CUDNN;
  c->algo = r->algo;
  c->algo_workspace = r->workspace;
  c->fused = c->can_fuse && (act == ADNN_ACTIVATION_RELU ||
                             r->algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
  c->epilogue = !c->fused && (c->p.has_bias || act != ADNN_ACTIVATION_IDENTITY || lay->y_tmp);
  size_t off = adnn_cuda__align256(r->workspace);
  c->x_offset = off;
  off += lay->x_bytes;
  c->w_offset = off;
  off += lay->w_bytes;
  c->y_offset = off;
  off += lay->y_bytes;
  snprintf(plan->algorithm, sizeof plan->algorithm, "cudnn:%s%s", cudnn_algo_name(r->algo),
           c->fused ? "+bias_act" : "");
  return adnn_cuda__plan_workspace(plan, off, "conv2d");
}

static adnn_status conv2d_select(adnn_plugin_plan *plan, int32_t candidate) {
  conv2d_plan *c = plan->impl;
  c->engine = ENGINE_NONE;
  const conv2d_route *route = c->route;
  char why[320];
  if (candidate == CONV2D_ID_DIRECT || candidate == CONV2D_ID_REFERENCE ||
      (candidate == 0 && route->cudnn_family == 0)) {
    select_direct(plan, c, candidate == 0 ? route->exact : candidate == CONV2D_ID_REFERENCE);
    return adnn_cuda__plan_workspace(plan, 0, "conv2d");
  }
  if (candidate < 0 || candidate > CUDNN_CONVOLUTION_FWD_ALGO_COUNT)
    return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                 "adnn_plan_create_conv2d: the cuda backend has no conv2d "
                                 "candidate %d",
                                 (int)candidate);
  adnn_status st = rank_cudnn(plan, c);
  if (st != ADNN_STATUS_SUCCESS) return st;

  if (candidate > 0) {
    /* A candidate the tuner measures is taken as it is: no fallback, so that
     * what was measured is what runs. */
    const cudnnConvolutionFwdAlgo_t algo = (cudnnConvolutionFwdAlgo_t)(candidate - 1);
    const conv2d_ranked *r = first_ranked(c, 1u << algo, 0);
    if (r == NULL) {
      why_no_cudnn(plan, c, 1u << algo, why, sizeof why);
      return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                   "adnn_plan_create_conv2d: cudnn:%s cannot run this problem: %s",
                                   cudnn_algo_name(algo), why);
    }
    return select_cudnn(plan, c, r);
  }

  /* The plugin's own choice. */
  const conv2d_ranked *r = first_ranked(c, route->cudnn_family, plan->op->deterministic);
  if (r != NULL) return select_cudnn(plan, c, r);
  why_no_cudnn(plan, c, route->cudnn_family, why, sizeof why);
  if (route->algorithm != ADNN_CONV2D_ALGO_AUTO)
    return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                 "adnn_plan_create_conv2d: algorithm %s cannot run this problem "
                                 "on the cuda backend: %s",
                                 adnn_plugin_conv2d_algorithm_name(route->algorithm), why);
  adnn_cuda__log(ADNN_LOG_INFO, "conv2d: %s; using the direct kernel", why);
  select_direct(plan, c, 0);
  return adnn_cuda__plan_workspace(plan, 0, "conv2d");
}

static adnn_status conv2d_execute(adnn_plugin_plan *plan, const void *const *in,
                                  void *const *outputs) {
  const conv2d_plan *c = plan->impl;
  const adnn_plugin_conv2d *p = &c->p;
  const adnn_cuda__conv2d_layout *lay = &c->layout;
  const adnn_cuda_launch_config *l = &plan->launch;
  const adnn_dtype dtype = plan->op->dtype;
  const void *bias = p->has_bias ? in[2] : NULL;
  void *out = outputs[0];
  if (c->int8)
    return adnn_cuda__check_launch(
        adnn_cuda_conv2d_int8_launch(l, p, &c->y_order, in[0], in[1], bias,
                                     p->has_requant_scales ? in[2 + p->has_bias] : NULL, out),
        "conv2d_int8");
  if (c->engine == ENGINE_DIRECT)
    return adnn_cuda__check_launch(adnn_cuda_conv2d_direct_launch(l, dtype, c->exact, p,
                                                                  &c->y_order, in[0], in[1], bias,
                                                                  out),
                                   "conv2d_direct");

  char *ws = (char *)plan->workspace;
  const void *x = in[0], *w = in[1];
  void *y = lay->y_tmp ? (void *)(ws + c->y_offset) : out;
  adnn_status st;
  if (lay->widened) {
    /* F16/BF16 through F32 cuDNN: x and w widened exactly into the workspace,
     * cuDNN into the F32 temporary, the epilogue rounding y once. */
    const adnn_activation identity = {ADNN_ACTIVATION_IDENTITY, 0.0, 0.0};
    st = adnn_cuda__check_launch(adnn_cuda_conv2d_pad_widen_launch(l, dtype, &p->x, lay->x_pad,
                                                                   lay->nhwc, x,
                                                                   ws + c->x_offset),
                                 "pad_widen");
    if (st == ADNN_STATUS_SUCCESS)
      st = adnn_cuda__check_launch(
          adnn_cuda_conv2d_epilogue_convert_launch(l, dtype, ADNN_DTYPE_F32, &identity,
                                                   &lay->w_copy, 0, w, NULL, 0, ws + c->w_offset),
          "filter widening");
    if (st != ADNN_STATUS_SUCCESS) return st;
    const float one_w = 1.0f, zero_w = 0.0f;
    cudnnStatus_t e = cudnnConvolutionForward(c->dnn.handle, &one_w, c->dnn.xd, ws + c->x_offset,
                                              c->dnn.wd, ws + c->w_offset, c->dnn.cd, c->algo,
                                              ws, c->algo_workspace, &zero_w, c->dnn.yd, y);
    if (e != CUDNN_STATUS_SUCCESS) return adnn_cuda__fail_cudnn(e, "cudnnConvolutionForward");
    return adnn_cuda__check_launch(
        adnn_cuda_conv2d_epilogue_convert_launch(l, ADNN_DTYPE_F32, dtype, &p->activation,
                                                 &lay->y_store, 1, y, bias,
                                                 p->has_bias ? p->bias.strides[0] : 0, out),
        "conv2d bias+activation");
  }
  if (lay->pack_x) {
    st = adnn_cuda__check_launch(adnn_cuda_conv2d_pad_pack_launch(l, dtype, &p->x, lay->x_pad,
                                                                  lay->nhwc, x, ws + c->x_offset),
                                 "pad_pack");
    if (st != ADNN_STATUS_SUCCESS) return st;
    x = ws + c->x_offset;
  }
  if (lay->pack_w) {
    const adnn_activation identity = {ADNN_ACTIVATION_IDENTITY, 0.0, 0.0};
    st = adnn_cuda__check_launch(adnn_cuda_conv2d_epilogue_launch(l, dtype, &identity,
                                                                  &lay->w_copy, 0, w, NULL, 0,
                                                                  ws + c->w_offset),
                                 "filter copy");
    if (st != ADNN_STATUS_SUCCESS) return st;
    w = ws + c->w_offset;
  }
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const int f64 = dtype == ADNN_DTYPE_F64;
  const void *one = f64 ? (const void *)&one_d : (const void *)&one_f;
  const void *zero = f64 ? (const void *)&zero_d : (const void *)&zero_f;
  cudnnStatus_t e;
  if (c->fused)
    e = cudnnConvolutionBiasActivationForward(c->dnn.handle, one, c->dnn.xd, x, c->dnn.wd, w, c->dnn.cd, c->algo,
                                              ws, c->algo_workspace, zero, c->dnn.yd, y, c->bd, bias,
                                              c->ad, c->dnn.yd, y);
  else
    e = cudnnConvolutionForward(c->dnn.handle, one, c->dnn.xd, x, c->dnn.wd, w, c->dnn.cd, c->algo, ws,
                                c->algo_workspace, zero, c->dnn.yd, y);
  if (e != CUDNN_STATUS_SUCCESS)
    return adnn_cuda__fail_cudnn(e, c->fused ? "cudnnConvolutionBiasActivationForward"
                                             : "cudnnConvolutionForward");
  if (!c->epilogue) return ADNN_STATUS_SUCCESS;
  return adnn_cuda__check_launch(adnn_cuda_conv2d_epilogue_launch(
                                     l, dtype, &p->activation, &lay->y_store, 1, y, bias,
                                     p->has_bias ? p->bias.strides[0] : 0, out),
                                 "conv2d bias+activation");
}

static void conv2d_destroy(adnn_plugin_plan *plan) {
  destroy_descriptors(plan->impl);
  adnn_cuda__plan_free_impl(plan);
}

const adnn_cuda__op_impl adnn_cuda__conv2d_op = {
    .create = conv2d_create,
    .candidates = conv2d_candidates,
    .select = conv2d_select,
    .execute = conv2d_execute,
    .destroy = conv2d_destroy,
    .dtypes = ADNN_OP_DTYPES_CONV2D,
};
