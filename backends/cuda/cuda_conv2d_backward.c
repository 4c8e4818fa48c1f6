/*
 * conv2d backward data (dy, w -> dx) and backward weights (x, dy -> dw, db)
 * on the CUDA plugin: cuDNN's legacy cudnnConvolutionBackwardData /
 * cudnnConvolutionBackwardFilter / cudnnConvolutionBackwardBias, with our own
 * kernels around them where cuDNN's model differs from adnn's, and our direct
 * kernels where cuDNN cannot help. The structure is the forward file's
 * (cuda_conv2d.c); one implementation serves both directions, told apart by
 * the plan's `dir`.
 *
 *  create      the forward layout plan of the embedded forward problem
 *              (cuda_conv2d_layout.c: layout class, packing, explicit
 *              padding), read for the direction (below), then, unless the
 *              forced algorithm is one of our direct kernels, the cuDNN
 *              description: the forward's descriptors, math type and output
 *              size check, plus the bias-gradient descriptor. A problem cuDNN
 *              cannot describe is recorded as such, not failed: AUTO then
 *              runs the direct kernel.
 *  candidates  cudnnGetConvolutionBackwardDataAlgorithm_v7's (or
 *              ...BackwardFilterAlgorithm_v7's) list, keeping what cuDNN
 *              reports usable, in a math type the context allows, whose
 *              workspace fits op->workspace_limit; each algorithm once, as
 *              "cudnn:<ALGO>" (ALGO_0, ALGO_1, FFT, ...) with the plan's whole
 *              workspace and cuDNN's determinism (ALGO_0 of both directions
 *              and the filter's ALGO_3 accumulate with atomics: not
 *              deterministic), then our "direct" kernel. Under
 *              op->deterministic the core's tuner drops the non-deterministic
 *              ones and says so in the choice reason.
 *  select      the workspace layout [algorithm][x][w][dy][db] and its
 *              allocation; 0 chooses like the heuristic below.
 *  execute     the copies in, the cuDNN call(s), the stores out: only what
 *              the layout plan calls for.
 *
 * How the forward layout plan reads backward (class = NCHW or NHWC, the
 * filter KCRS or KRSC with it):
 *  - the x side: backward weights pad_packs x into the workspace exactly as
 *    the forward does (asymmetric padding written out as zeros, cuDNN then
 *    padding 0); backward data computes dx into a packed (and, for
 *    asymmetric padding, padded) temporary of that same shape and stores its
 *    interior into dx.
 *  - the w side: backward data copies w in the class's filter format as the
 *    forward does; backward weights computes dw into such a temporary and
 *    stores it into dw's strides.
 *  - dy: copied into a packed temporary when not packed in the class (the
 *    forward's y temporary, read instead of written).
 *  - db: written directly when of unit stride (or K == 1), else through a
 *    packed temporary.
 * beta: cuDNN's own beta when cuDNN writes the output directly (cuDNN reads
 * the output only for a beta other than 0); with a temporary, cuDNN writes it
 * with beta 0 and the store adds beta times the output (our binary kernel,
 * out = tmp + beta * out), or copies it when beta is 0, so that an output
 * full of NaN is overwritten.
 *
 * Candidate ids: a cuDNN algorithm a of the plan's direction is a + 1,
 * our direct kernel BWD_ID_DIRECT and, when forced, the exact direct kernel
 * BWD_ID_REFERENCE; the names are what the performance database stores (its
 * keys carry the direction).
 *
 * The plugin's own choice (select 0): the forced algorithm's route; for AUTO
 * and the cuDNN families, the first ranked algorithm of the family, the first
 * deterministic one under op->deterministic. AUTO falls back to the direct
 * kernel (deterministic) when cuDNN offers nothing usable, or nothing
 * deterministic when determinism is required, with a log line; a forced
 * family refuses with the reason, and under op->deterministic with only
 * non-deterministic algorithms runs the first one with a warning (it was
 * forced).
 *
 * Math: as the forward: FP32 stays FP32 (CUDNN_FMA_MATH) unless the context
 * allows TF32.
 *
 * F16 and BF16: the plan runs everything above in F32 on widened copies.
 * Its 16-bit inputs (dy and w, or x and dy) are widened exactly into F32
 * buffers of their own strides at the end of the workspace (our reorder
 * kernel, which converts the logical elements only), and so are its outputs
 * when beta != 0; the F32 machinery (cuDNN with tensor-op math, which is
 * exact on products of widened 16-bit values as in the forward, or our
 * direct kernels) computes the F32 outputs, and each is rounded once into
 * the caller's 16-bit tensor. The result is the F32 gradient of the rounded
 * inputs plus one rounding, the bound of doc/numerics.md, as on the CPU
 * (kernels/cpu/lowp_widen.c).
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_conv2d.h"
#include "backends/cuda/cuda_conv2d_cudnn.h"
#include "backends/cuda/cuda_op.h"

/* Candidate ids besides the cuDNN algorithms (1 .. the direction's count). */
enum { BWD_ID_DIRECT = 100, BWD_ID_REFERENCE = 101 };

/* The most entries of cuDNN's ranking the plan keeps. */
enum { BWD_MAX_RANKED = 16 };

typedef enum bwd_dir { DIR_DATA, DIR_WEIGHTS } bwd_dir;

static const char *dir_func(bwd_dir dir) {
  return dir == DIR_DATA ? "adnn_plan_create_conv2d_backward_data"
                         : "adnn_plan_create_conv2d_backward_weights";
}

/* ------------------------------------------------------------------------ */
/* Algorithms: names, cuDNN families, applicability (stated once)            */
/* ------------------------------------------------------------------------ */

static const char *data_algo_name(int a) {
  switch (a) {
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_0: return "ALGO_0";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_1: return "ALGO_1";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "UNKNOWN";
  }
}

static const char *filter_algo_name(int a) {
  switch (a) {
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0: return "ALGO_0";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1: return "ALGO_1";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3: return "ALGO_3";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING: return "FFT_TILING";
    default: return "UNKNOWN";
  }
}

static const char *algo_name(bwd_dir dir, int a) {
  return dir == DIR_DATA ? data_algo_name(a) : filter_algo_name(a);
}

static int algo_count(bwd_dir dir) {
  return dir == DIR_DATA ? CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT
                         : CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
}

#define DATA_BIT(a) (1u << CUDNN_CONVOLUTION_BWD_DATA_ALGO_##a)
#define FILTER_BIT(a) (1u << CUDNN_CONVOLUTION_BWD_FILTER_ALGO_##a)
#define FAMILY_ANY (~0u)

/* How each adnn algorithm runs the backward directions on this plugin. */
typedef struct bwd_route {
  adnn_conv2d_algorithm algorithm; /* its own index: a missing row reads as AUTO */
  unsigned data_family;   /* bit a: cuDNN backward-data algorithm a may run it; 0: ours */
  unsigned filter_family; /* the same for backward filter */
  int exact;              /* our direct kernel accumulating in double */
  int (*applies)(const adnn_plugin_conv2d *p, char *why, size_t len); /* NULL: any problem */
} bwd_route;

static const bwd_route routes[] = {
    [ADNN_CONV2D_ALGO_AUTO] = {ADNN_CONV2D_ALGO_AUTO, FAMILY_ANY, FAMILY_ANY, 0, NULL},
    [ADNN_CONV2D_ALGO_REFERENCE] = {ADNN_CONV2D_ALGO_REFERENCE, 0, 0, 1, NULL},
    /* The GEMM-based algorithms of each direction. */
    [ADNN_CONV2D_ALGO_IM2COL_GEMM] = {ADNN_CONV2D_ALGO_IM2COL_GEMM,
                                      DATA_BIT(0) | DATA_BIT(1),
                                      FILTER_BIT(0) | FILTER_BIT(1) | FILTER_BIT(3), 0, NULL},
    [ADNN_CONV2D_ALGO_GEMM_1X1] = {ADNN_CONV2D_ALGO_GEMM_1X1, DATA_BIT(0) | DATA_BIT(1),
                                   FILTER_BIT(0) | FILTER_BIT(1) | FILTER_BIT(3), 0,
                                   adnn_cuda__conv2d_pointwise_applies},
    [ADNN_CONV2D_ALGO_WINOGRAD_F2X3] = {ADNN_CONV2D_ALGO_WINOGRAD_F2X3,
                                        DATA_BIT(WINOGRAD) | DATA_BIT(WINOGRAD_NONFUSED),
                                        FILTER_BIT(WINOGRAD) | FILTER_BIT(WINOGRAD_NONFUSED), 0,
                                        adnn_cuda__conv2d_winograd_applies},
    [ADNN_CONV2D_ALGO_DEPTHWISE_DIRECT] = {ADNN_CONV2D_ALGO_DEPTHWISE_DIRECT, 0, 0, 0,
                                           adnn_cuda__conv2d_depthwise_applies},
    [ADNN_CONV2D_ALGO_DIRECT] = {ADNN_CONV2D_ALGO_DIRECT, 0, 0, 0, NULL},
    [ADNN_CONV2D_ALGO_WINOGRAD_F4X3] = {ADNN_CONV2D_ALGO_WINOGRAD_F4X3, 0, 0, 0,
                                        adnn_cuda__conv2d_winograd_f4x3_applies},
};

/* A new algorithm of ADNN_CONV2D_ALGO_LIST needs a route before this builds. */
#define BWD_COUNT_ALGO_(NAME, name, value, def) +1
_Static_assert(sizeof routes / sizeof routes[0] == 0 ADNN_CONV2D_ALGO_LIST(BWD_COUNT_ALGO_),
               "every adnn_conv2d_algorithm needs a route in cuda_conv2d_backward.c");
#undef BWD_COUNT_ALGO_

/* ------------------------------------------------------------------------ */
/* The plan                                                                  */
/* ------------------------------------------------------------------------ */

/* One usable entry of cuDNN's ranking. */
typedef struct bwd_ranked {
  int algo;             /* a cudnnConvolutionBwdDataAlgo_t or ...BwdFilterAlgo_t */
  cudnnMathType_t math; /* the math type cuDNN ranked it with */
  size_t workspace;
  int deterministic;
} bwd_ranked;

typedef enum bwd_engine { ENGINE_NONE, ENGINE_DIRECT, ENGINE_CUDNN } bwd_engine;

/* One widening (16-bit tensor -> its F32 copy) or narrowing (back) of a
 * 16-bit plan: the reorder problem of each direction over the tensor's
 * logical elements, and the F32 copy's offset past the F32 plan's
 * workspace. */
typedef struct bwd_lowp_copy {
  adnn_plugin_reorder widen, narrow;
  adnn_cuda_elementwise_layout layout;
  size_t offset;
} bwd_lowp_copy;

typedef struct bwd_plan {
  bwd_dir dir;
  adnn_plugin_conv2d p; /* the forward problem; its tensors are the gradients' layouts */
  /* The dtype everything below runs in: the op's, F32 for a 16-bit plan
   * (lowp), whose p then describes F32 tensors. */
  adnn_dtype dtype;
  size_t esize;
  int lowp;
  int n_in, n_out;
  bwd_lowp_copy lowp_in[2], lowp_out[2]; /* the 16-bit inputs and outputs, in order */
  size_t lowp_bytes;                     /* the F32 copies' bytes */
  size_t inner_workspace;                /* the F32 plan's bytes, where the copies start */
  double beta;
  adnn_conv2d_algorithm algorithm;
  const bwd_route *route;
  unsigned family;                  /* route's family of this direction */
  adnn_cuda_memory_order out_order; /* the direct kernel's output (dx or dw) order */
  adnn_cuda__conv2d_layout layout;  /* the forward layout plan of p */

  /* Stores of outputs computed into temporaries (strides[0] the temporary,
   * strides[1] the output): dx's interior, dw, db. */
  adnn_nd x_store, w_store, b_store;
  size_t x_store_offset; /* elements from the temporary's start to dx's first */
  adnn_nd dy_load;       /* dy into its packed temporary: strides[0] dy, [1] packed */
  int b_tmp;             /* db goes through a temporary */
  size_t b_bytes;

  /* The cuDNN description (create): the shared part, then db's. */
  adnn_cuda__conv2d_cudnn dnn;
  cudnnTensorDescriptor_t bd;

  /* cuDNN's ranking. */
  int ranked;
  int n_ranked;
  bwd_ranked ranking[BWD_MAX_RANKED];

  /* The selection. */
  bwd_engine engine;
  int exact;
  int algo;
  size_t algo_workspace;
  size_t x_offset, w_offset, y_offset, b_offset; /* of the temporaries in the workspace */
} bwd_plan;

/* As the forward's (see adnn_cuda__conv2d_cudnn_ok). */
static int cudnn_ok(bwd_plan *c, cudnnStatus_t e, const char *what, adnn_status *st) {
  return adnn_cuda__conv2d_cudnn_ok(&c->dnn, e, what, st);
}

static void destroy_descriptors(bwd_plan *c) {
  adnn_cuda__conv2d_cudnn_destroy(&c->dnn);
  if (c->bd) cudnnDestroyTensorDescriptor(c->bd);
  c->bd = NULL;
}

/* The packed strides of `dims` in the class's dim order (NCHW or NHWC). */
static void class_strides(int nhwc, const int64_t dims[4], int64_t s[4]) {
  static const int nchw[4] = {0, 1, 2, 3}, nhwc_perm[4] = {0, 2, 3, 1};
  const int *perm = nhwc ? nhwc_perm : nchw;
  int64_t expect = 1;
  for (int i = 3; i >= 0; i--) {
    s[perm[i]] = expect;
    expect *= dims[perm[i]];
  }
}

/* The stores and loads around cuDNN, from the forward layout plan (see the
 * top of the file). A function of the problem alone. */
static void plan_moves(bwd_plan *c, size_t element_size) {
  const adnn_plugin_conv2d *p = &c->p;
  const adnn_cuda__conv2d_layout *lay = &c->layout;
  if (c->dir == DIR_DATA && lay->pack_x) {
    const int64_t tdims[4] = {p->N, p->C, lay->xh, lay->xw};
    int64_t ts[4];
    class_strides(lay->nhwc, tdims, ts);
    c->x_store.rank = 4;
    const int64_t dims[4] = {p->N, p->C, p->H, p->W};
    for (int i = 0; i < 4; i++) {
      c->x_store.dims[i] = dims[i];
      c->x_store.strides[0][i] = ts[i];
      c->x_store.strides[1][i] = p->x.strides[i];
    }
    c->x_store_offset = (size_t)(lay->x_pad[0] * ts[2] + lay->x_pad[2] * ts[3]);
  }
  if (c->dir == DIR_WEIGHTS && lay->pack_w) {
    c->w_store.rank = 4;
    for (int i = 0; i < 4; i++) {
      c->w_store.dims[i] = lay->w_copy.dims[i];
      c->w_store.strides[0][i] = lay->w_copy.strides[1][i];
      c->w_store.strides[1][i] = lay->w_copy.strides[0][i];
    }
  }
  if (lay->y_tmp) {
    c->dy_load.rank = 4;
    for (int i = 0; i < 4; i++) {
      c->dy_load.dims[i] = lay->y_store.dims[i];
      c->dy_load.strides[0][i] = lay->y_store.strides[1][i];
      c->dy_load.strides[1][i] = lay->y_store.strides[0][i];
    }
  }
  c->b_tmp = c->dir == DIR_WEIGHTS && p->has_bias && p->K > 1 && p->bias.strides[0] != 1;
  if (c->b_tmp) {
    c->b_store.rank = 1;
    c->b_store.dims[0] = p->K;
    c->b_store.strides[0][0] = 1;
    c->b_store.strides[1][0] = p->bias.strides[0];
    c->b_bytes = adnn_cuda__align256((size_t)p->K * element_size);
  }
}

/* The cuDNN description of the problem, made once per plan: the forward's
 * descriptors (dx and x are described like x, dy like y, dw like w) and, for
 * a bias gradient, db's. Returns SUCCESS also when cuDNN cannot take the
 * problem (c->dnn.unusable says why); a failure status only for real failures. */
static adnn_status describe_cudnn(adnn_plugin_plan *plan, bwd_plan *c) {
  const adnn_plugin_conv2d *p = &c->p;
  const cudnnDataType_t dt = adnn_cuda__conv2d_cudnn_dtype(c->dtype == ADNN_DTYPE_F64);
  const cudnnTensorFormat_t fmt = adnn_cuda__conv2d_cudnn_format(&c->layout);
  int ok = 0;
  adnn_status st = adnn_cuda__conv2d_cudnn_describe(plan, p, &c->layout, "dy", &c->dnn, &ok);
  if (ok && c->dir == DIR_WEIGHTS && p->has_bias)
    ok = cudnn_ok(c, cudnnCreateTensorDescriptor(&c->bd), "cudnnCreateTensorDescriptor(db)",
                  &st) &&
         cudnn_ok(c, cudnnSetTensor4dDescriptor(c->bd, fmt, dt, 1, (int)p->K, 1, 1),
                  "cudnnSetTensor4dDescriptor(db)", &st);
  if (!ok) destroy_descriptors(c);
  return st;
}

/* cuDNN's ranking of the plan's direction, as a common list. */
static cudnnStatus_t query_ranking(const bwd_plan *c, int max_count, int *returned,
                                   bwd_ranked *out, cudnnStatus_t *status) {
  cudnnStatus_t e;
  if (c->dir == DIR_DATA) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[BWD_MAX_RANKED];
    e = cudnnGetConvolutionBackwardDataAlgorithm_v7(c->dnn.handle, c->dnn.wd, c->dnn.yd, c->dnn.cd, c->dnn.xd,
                                                    max_count, returned, perf);
    for (int i = 0; e == CUDNN_STATUS_SUCCESS && i < *returned; i++) {
      out[i].algo = (int)perf[i].algo;
      out[i].math = perf[i].mathType;
      out[i].deterministic = perf[i].determinism == CUDNN_DETERMINISTIC;
      status[i] = perf[i].status;
    }
  } else {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[BWD_MAX_RANKED];
    e = cudnnGetConvolutionBackwardFilterAlgorithm_v7(c->dnn.handle, c->dnn.xd, c->dnn.yd, c->dnn.cd, c->dnn.wd,
                                                      max_count, returned, perf);
    for (int i = 0; e == CUDNN_STATUS_SUCCESS && i < *returned; i++) {
      out[i].algo = (int)perf[i].algo;
      out[i].math = perf[i].mathType;
      out[i].deterministic = perf[i].determinism == CUDNN_DETERMINISTIC;
      status[i] = perf[i].status;
    }
  }
  return e;
}

static cudnnStatus_t query_workspace(const bwd_plan *c, int algo, size_t *ws) {
  if (c->dir == DIR_DATA)
    return cudnnGetConvolutionBackwardDataWorkspaceSize(c->dnn.handle, c->dnn.wd, c->dnn.yd, c->dnn.cd, c->dnn.xd,
                                                        (cudnnConvolutionBwdDataAlgo_t)algo, ws);
  return cudnnGetConvolutionBackwardFilterWorkspaceSize(c->dnn.handle, c->dnn.xd, c->dnn.yd, c->dnn.cd, c->dnn.wd,
                                                        (cudnnConvolutionBwdFilterAlgo_t)algo,
                                                        ws);
}

/* cuDNN's ranking, made once per plan: the usable entries of the
 * direction's _v7 query in its order, filtered as the forward's. */
static adnn_status rank_cudnn(adnn_plugin_plan *plan, bwd_plan *c) {
  if (c->ranked) return ADNN_STATUS_SUCCESS;
  if (!c->dnn.described) {
    c->ranked = 1;
    return ADNN_STATUS_SUCCESS;
  }
  const int f64 = c->dtype == ADNN_DTYPE_F64;
  const uint64_t limit = plan->op->workspace_limit;
  adnn_status st = ADNN_STATUS_SUCCESS;
  int max_count = 0, returned = 0;
  const char *what_count = c->dir == DIR_DATA ? "cudnnGetConvolutionBackwardDataAlgorithmMaxCount"
                                              : "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount";
  const char *what_rank = c->dir == DIR_DATA ? "cudnnGetConvolutionBackwardDataAlgorithm_v7"
                                             : "cudnnGetConvolutionBackwardFilterAlgorithm_v7";
  int ok = cudnn_ok(c,
                    c->dir == DIR_DATA
                        ? cudnnGetConvolutionBackwardDataAlgorithmMaxCount(c->dnn.handle, &max_count)
                        : cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(c->dnn.handle,
                                                                             &max_count),
                    what_count, &st);
  if (max_count < 1) max_count = 1;
  if (max_count > BWD_MAX_RANKED) max_count = BWD_MAX_RANKED;
  bwd_ranked got[BWD_MAX_RANKED];
  cudnnStatus_t status[BWD_MAX_RANKED];
  ok = ok && cudnn_ok(c, query_ranking(c, max_count, &returned, got, status), what_rank, &st);
  if (st != ADNN_STATUS_SUCCESS) return st;
  c->ranked = 1;
  c->n_ranked = 0;
  if (!ok) return ADNN_STATUS_SUCCESS;
  if (returned > max_count) returned = max_count;
  for (int i = 0; i < returned; i++) {
    if (status[i] != CUDNN_STATUS_SUCCESS) continue;
    if ((unsigned)got[i].algo >= 32) continue; /* beyond the family bit masks */
    /* Tensor-op math: TF32 where the context allows it, and for 16-bit
     * plans (exact on their widened values; see the top of the file). */
    const int tensor_ok = c->dnn.tf32 || c->dnn.lowp;
    if (!tensor_ok && !f64 && got[i].math != CUDNN_FMA_MATH && got[i].math != CUDNN_DEFAULT_MATH)
      continue; /* a tensor-op (TF32) variant the context does not allow */
    if (got[i].math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) continue; /* FP16 down-conversion */
    if (tensor_ok && cudnnSetConvolutionMathType(c->dnn.cd, got[i].math) != CUDNN_STATUS_SUCCESS)
      continue;
    size_t ws = 0;
    if (query_workspace(c, got[i].algo, &ws) != CUDNN_STATUS_SUCCESS) continue;
    if (ws > limit) continue;
    bwd_ranked *r = &c->ranking[c->n_ranked++];
    *r = got[i];
    r->workspace = ws;
  }
  return ADNN_STATUS_SUCCESS;
}

/* The first ranked entry in `family`; with `deterministic`, the first
 * deterministic one, or (strict 0) the first of any kind when there is none.
 * NULL when none. */
static const bwd_ranked *first_ranked(const bwd_plan *c, unsigned family, int deterministic,
                                      int strict) {
  const bwd_ranked *first = NULL;
  for (int i = 0; i < c->n_ranked; i++) {
    const bwd_ranked *r = &c->ranking[i];
    if (!(family & (1u << r->algo))) continue;
    if (!deterministic || r->deterministic) return r;
    if (first == NULL) first = r;
  }
  return strict ? NULL : first;
}

static void why_no_cudnn(const adnn_plugin_plan *plan, const bwd_plan *c, unsigned family,
                         char *why, size_t len) {
  if (c->dnn.unusable[0] != '\0')
    snprintf(why, len, "%s", c->dnn.unusable);
  else
    snprintf(why, len,
             "cuDNN offers no usable %s algorithm%s within the workspace limit of %llu bytes%s",
             c->dir == DIR_DATA ? "backward-data" : "backward-filter",
             family == FAMILY_ANY ? "" : " of the forced family",
             (unsigned long long)plan->op->workspace_limit,
             plan->op->deterministic && first_ranked(c, family, 0, 0) != NULL
                 ? " that is deterministic (ADNN_DETERMINISTIC)"
                 : "");
}

/* ------------------------------------------------------------------------ */
/* create / candidates / select / execute / destroy                          */
/* ------------------------------------------------------------------------ */

/* A 16-bit plan (see the top of the file): its inputs' and outputs' F32
 * copies, each of its tensor's strides and span, and p turned to F32. */
static void plan_lowp(bwd_plan *c) {
  adnn_tensor_desc *in[2], *out[2];
  c->lowp = 1;
  if (c->dir == DIR_DATA) {
    in[0] = &c->p.y, in[1] = &c->p.w, out[0] = &c->p.x;
    c->n_in = 2, c->n_out = 1;
  } else {
    in[0] = &c->p.x, in[1] = &c->p.y, out[0] = &c->p.w, out[1] = &c->p.bias;
    c->n_in = 2, c->n_out = c->p.has_bias ? 2 : 1;
  }
  size_t off = 0;
  for (int k = 0; k < c->n_in + c->n_out; k++) {
    adnn_tensor_desc *t = k < c->n_in ? in[k] : out[k - c->n_in];
    bwd_lowp_copy *cp = k < c->n_in ? &c->lowp_in[k] : &c->lowp_out[k - c->n_in];
    adnn_tensor_desc wide = *t;
    wide.dtype = ADNN_DTYPE_F32;
    int64_t span = 1, count = 1;
    for (int i = 0; i < t->rank; i++) {
      span += (t->dims[i] - 1) * t->strides[i];
      count *= t->dims[i];
    }
    memset(cp, 0, sizeof *cp);
    cp->widen.struct_size = cp->narrow.struct_size = sizeof cp->widen;
    cp->widen.x = *t, cp->widen.y = wide, cp->widen.count = count;
    cp->narrow.x = wide, cp->narrow.y = *t, cp->narrow.count = count;
    const int64_t *strides[2] = {t->strides, t->strides};
    cp->layout.contiguous = adnn_nd_coalesce(&cp->layout.nd, t->rank, t->dims, 2, strides);
    cp->offset = off;
    off += adnn_cuda__align256((size_t)span * sizeof(float));
  }
  c->lowp_bytes = off;
  c->p.x.dtype = c->p.w.dtype = c->p.y.dtype = c->p.bias.dtype = ADNN_DTYPE_F32;
  c->dtype = ADNN_DTYPE_F32;
}

static adnn_status bwd_create(adnn_plugin_plan *plan, bwd_dir dir) {
  adnn_status st = adnn_cuda__plan_new_impl(plan, sizeof(bwd_plan));
  if (st != ADNN_STATUS_SUCCESS) return st;
  bwd_plan *c = plan->impl;
  c->dir = dir;
  if (dir == DIR_DATA) {
    adnn_plugin_conv2d_backward_data prob;
    adnn_plugin_op_problem(plan->op, &prob, sizeof prob);
    c->p = prob.fwd;
    c->beta = prob.beta;
    c->algorithm = prob.algorithm;
  } else {
    adnn_plugin_conv2d_backward_weights prob;
    adnn_plugin_op_problem(plan->op, &prob, sizeof prob);
    c->p = prob.fwd;
    c->beta = prob.beta;
    c->algorithm = prob.algorithm;
  }
  if (dir == DIR_DATA) c->p.has_bias = 0; /* the problem says so; never trust a bias here */
  const adnn_conv2d_algorithm algorithm = c->algorithm;
  if ((unsigned)algorithm >= sizeof routes / sizeof routes[0] ||
      routes[algorithm].algorithm != algorithm)
    return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                 "%s: the cuda backend does not know algorithm %d",
                                 dir_func(dir), (int)algorithm);
  c->route = &routes[algorithm];
  c->family = dir == DIR_DATA ? c->route->data_family : c->route->filter_family;
  char why[256];
  if (c->route->applies != NULL && !c->route->applies(&c->p, why, sizeof why))
    return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED, "%s: algorithm %s %s", dir_func(dir),
                                 adnn_plugin_conv2d_algorithm_name(algorithm), why);
  adnn_cuda__memory_order4(dir == DIR_DATA ? &c->p.x : &c->p.w, &c->out_order);
  c->dtype = plan->op->dtype;
  if (c->dtype == ADNN_DTYPE_F16 || c->dtype == ADNN_DTYPE_BF16) plan_lowp(c);
  const size_t esize = c->esize = c->dtype == ADNN_DTYPE_F64 ? sizeof(double) : sizeof(float);
  adnn_cuda__conv2d_layout_plan(&c->p, esize, &c->layout);
  /* cuDNN describes the F32 copies of a 16-bit plan, with tensor-op math. */
  if (c->lowp) c->layout.widened = 1;
  plan_moves(c, esize);
  if (c->family == 0) return ADNN_STATUS_SUCCESS;
  return describe_cudnn(plan, c);
}

static adnn_status bwd_data_create(adnn_plugin_plan *plan) { return bwd_create(plan, DIR_DATA); }

static adnn_status bwd_weights_create(adnn_plugin_plan *plan) {
  return bwd_create(plan, DIR_WEIGHTS);
}

/* The workspace beyond the algorithm's: the temporaries this direction uses
 * (and a 16-bit plan's F32 copies). */
static size_t extra_bytes(const bwd_plan *c) {
  const adnn_cuda__conv2d_layout *lay = &c->layout;
  return lay->x_bytes + lay->w_bytes + lay->y_bytes + c->b_bytes + c->lowp_bytes;
}

/* The plan's workspace: `bytes` for the F32 plan, then a 16-bit plan's
 * F32 copies. */
static adnn_status bwd_workspace(adnn_plugin_plan *plan, bwd_plan *c, size_t bytes) {
  c->inner_workspace = adnn_cuda__align256(bytes);
  return adnn_cuda__plan_workspace(plan, c->lowp ? c->inner_workspace + c->lowp_bytes : bytes,
                                   "conv2d backward");
}

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

static adnn_status bwd_candidates(adnn_plugin_plan *plan, adnn_plugin_candidate *out, int32_t max,
                                  int32_t *count) {
  bwd_plan *c = plan->impl;
  *count = 0;
  const bwd_route *route = c->route;
  /* Our direct kernels: one thread per output element, each summing in a
   * fixed order, so their results are the same run to run. */
  if (c->family == 0) {
    add_candidate(out, max, count, route->exact ? BWD_ID_REFERENCE : BWD_ID_DIRECT,
                  route->exact ? "reference" : "direct", c->lowp_bytes, 1);
    return ADNN_STATUS_SUCCESS;
  }
  adnn_status st = rank_cudnn(plan, c);
  if (st != ADNN_STATUS_SUCCESS) return st;
  const size_t extra = extra_bytes(c);
  char name[64];
  if (route->algorithm != ADNN_CONV2D_ALGO_AUTO) {
    const bwd_ranked *r = first_ranked(c, c->family, plan->op->deterministic, 0);
    if (r != NULL) {
      snprintf(name, sizeof name, "cudnn:%s", algo_name(c->dir, r->algo));
      add_candidate(out, max, count, (int32_t)r->algo + 1, name,
                    adnn_cuda__align256(r->workspace) + extra, r->deterministic);
    }
    return ADNN_STATUS_SUCCESS;
  }
  unsigned listed = 0;
  for (int i = 0; i < c->n_ranked; i++) {
    const bwd_ranked *r = &c->ranking[i];
    if (listed & (1u << r->algo)) continue;
    listed |= 1u << r->algo;
    snprintf(name, sizeof name, "cudnn:%s", algo_name(c->dir, r->algo));
    add_candidate(out, max, count, (int32_t)r->algo + 1, name,
                  adnn_cuda__align256(r->workspace) + extra, r->deterministic);
  }
  add_candidate(out, max, count, BWD_ID_DIRECT, "direct", c->lowp_bytes, 1);
  return ADNN_STATUS_SUCCESS;
}

static void select_direct(adnn_plugin_plan *plan, bwd_plan *c, int exact) {
  c->engine = ENGINE_DIRECT;
  c->exact = exact;
  snprintf(plan->algorithm, sizeof plan->algorithm, "%s", exact ? "reference" : "direct");
}

/* Selects ranked entry r: the workspace layout [algorithm][x][w][dy][db]
 * (each temporary present only when the direction uses it) and its
 * allocation. */
static adnn_status select_cudnn(adnn_plugin_plan *plan, bwd_plan *c, const bwd_ranked *r) {
  const adnn_cuda__conv2d_layout *lay = &c->layout;
  if (c->dnn.tf32 || c->dnn.lowp) {
    cudnnStatus_t e = cudnnSetConvolutionMathType(c->dnn.cd, r->math);
    if (e != CUDNN_STATUS_SUCCESS) return adnn_cuda__fail_cudnn(e, "cudnnSetConvolutionMathType");
  }
  c->engine = ENGINE_CUDNN;
  c->algo = r->algo;
  c->algo_workspace = r->workspace;
  size_t off = adnn_cuda__align256(r->workspace);
  c->x_offset = off;
  off += lay->x_bytes;
  c->w_offset = off;
  off += lay->w_bytes;
  c->y_offset = off;
  off += lay->y_bytes;
  c->b_offset = off;
  off += c->b_bytes;
  snprintf(plan->algorithm, sizeof plan->algorithm, "cudnn:%s", algo_name(c->dir, r->algo));
  return bwd_workspace(plan, c, off);
}

static adnn_status bwd_select(adnn_plugin_plan *plan, int32_t candidate) {
  bwd_plan *c = plan->impl;
  c->engine = ENGINE_NONE;
  const bwd_route *route = c->route;
  const char *func = dir_func(c->dir);
  char why[320];
  if (candidate == BWD_ID_DIRECT || candidate == BWD_ID_REFERENCE ||
      (candidate == 0 && c->family == 0)) {
    select_direct(plan, c, candidate == 0 ? route->exact : candidate == BWD_ID_REFERENCE);
    return bwd_workspace(plan, c, 0);
  }
  if (candidate < 0 || candidate > algo_count(c->dir))
    return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                 "%s: the cuda backend has no candidate %d", func,
                                 (int)candidate);
  adnn_status st = rank_cudnn(plan, c);
  if (st != ADNN_STATUS_SUCCESS) return st;

  if (candidate > 0) {
    /* A measured candidate runs as it is: no fallback. */
    const int algo = candidate - 1;
    const bwd_ranked *r = first_ranked(c, 1u << algo, 0, 0);
    if (r == NULL) {
      why_no_cudnn(plan, c, 1u << algo, why, sizeof why);
      return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                   "%s: cudnn:%s cannot run this problem: %s", func,
                                   algo_name(c->dir, algo), why);
    }
    return select_cudnn(plan, c, r);
  }

  /* The plugin's own choice. AUTO under determinism takes only a
   * deterministic cuDNN algorithm (else the direct kernel); a forced family
   * runs what it has. */
  const int det = plan->op->deterministic != 0;
  const int is_auto = route->algorithm == ADNN_CONV2D_ALGO_AUTO;
  const bwd_ranked *r = first_ranked(c, c->family, det, is_auto);
  if (r != NULL) {
    if (det && !r->deterministic)
      adnn_cuda__log(ADNN_LOG_WARN,
                     "%s: the forced algorithm %s has only the non-deterministic cudnn:%s here; "
                     "running it although ADNN_DETERMINISTIC is set",
                     func, adnn_plugin_conv2d_algorithm_name(route->algorithm),
                     algo_name(c->dir, r->algo));
    return select_cudnn(plan, c, r);
  }
  why_no_cudnn(plan, c, c->family, why, sizeof why);
  if (!is_auto)
    return adnn_cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                 "%s: algorithm %s cannot run this problem on the cuda backend: "
                                 "%s",
                                 func, adnn_plugin_conv2d_algorithm_name(route->algorithm), why);
  adnn_cuda__log(ADNN_LOG_INFO, "%s: %s; using the direct kernel",
                 c->dir == DIR_DATA ? "conv2d_backward_data" : "conv2d_backward_weights", why);
  select_direct(plan, c, 0);
  return bwd_workspace(plan, c, 0);
}

/* out = src (beta 0) or src + beta * out (beta != 0) over nd (strides[0] src,
 * strides[1] out): how an output computed into a temporary reaches the
 * caller's tensor. */
static adnn_status store_out(const adnn_plugin_plan *plan, const bwd_plan *c, const adnn_nd *nd,
                             const void *src, void *out, const char *what) {
  const adnn_cuda_launch_config *l = &plan->launch;
  const adnn_dtype dtype = c->dtype;
  if (c->beta == 0) {
    const adnn_activation identity = {ADNN_ACTIVATION_IDENTITY, 0.0, 0.0};
    return adnn_cuda__check_launch(
        adnn_cuda_conv2d_epilogue_launch(l, dtype, &identity, nd, 0, src, NULL, 0, out), what);
  }
  adnn_plugin_binary add;
  memset(&add, 0, sizeof add);
  add.struct_size = sizeof add;
  add.op = ADNN_BINARY_ADD;
  add.alpha = 1.0;
  add.beta = c->beta;
  adnn_cuda_elementwise_layout e;
  const int64_t *strides[3] = {nd->strides[0], nd->strides[1], nd->strides[1]};
  e.contiguous = adnn_nd_coalesce(&e.nd, nd->rank, nd->dims, 3, strides);
  return adnn_cuda__check_launch(adnn_cuda_binary_launch(l, dtype, &add, &e, src, out, out),
                                 what);
}

/* dy as cuDNN reads it: packed in the class (copied when it is not). */
static adnn_status load_dy(const adnn_plugin_plan *plan, const bwd_plan *c, const void **dy) {
  if (!c->layout.y_tmp) return ADNN_STATUS_SUCCESS;
  const adnn_activation identity = {ADNN_ACTIVATION_IDENTITY, 0.0, 0.0};
  void *tmp = (char *)plan->workspace + c->y_offset;
  adnn_status st = adnn_cuda__check_launch(
      adnn_cuda_conv2d_epilogue_launch(&plan->launch, c->dtype, &identity, &c->dy_load, 0,
                                       *dy, NULL, 0, tmp),
      "dy copy");
  *dy = tmp;
  return st;
}

static adnn_status execute_data(adnn_plugin_plan *plan, const bwd_plan *c, const void *const *in,
                                void *dx, const void *one, const void *zero,
                                const void *beta) {
  const adnn_cuda__conv2d_layout *lay = &c->layout;
  const adnn_cuda_launch_config *l = &plan->launch;
  const adnn_dtype dtype = c->dtype;
  char *ws = (char *)plan->workspace;
  const void *dy = in[0], *w = in[1];
  adnn_status st = load_dy(plan, c, &dy);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (lay->pack_w) {
    const adnn_activation identity = {ADNN_ACTIVATION_IDENTITY, 0.0, 0.0};
    st = adnn_cuda__check_launch(adnn_cuda_conv2d_epilogue_launch(l, dtype, &identity,
                                                                  &lay->w_copy, 0, w, NULL, 0,
                                                                  ws + c->w_offset),
                                 "filter copy");
    if (st != ADNN_STATUS_SUCCESS) return st;
    w = ws + c->w_offset;
  }
  void *out = lay->pack_x ? (void *)(ws + c->x_offset) : dx;
  cudnnStatus_t e = cudnnConvolutionBackwardData(
      c->dnn.handle, one, c->dnn.wd, w, c->dnn.yd, dy, c->dnn.cd, (cudnnConvolutionBwdDataAlgo_t)c->algo, ws,
      c->algo_workspace, lay->pack_x ? zero : beta, c->dnn.xd, out);
  if (e != CUDNN_STATUS_SUCCESS) return adnn_cuda__fail_cudnn(e, "cudnnConvolutionBackwardData");
  if (!lay->pack_x) return ADNN_STATUS_SUCCESS;
  const size_t esize = c->esize;
  return store_out(plan, c, &c->x_store, (const char *)out + c->x_store_offset * esize, dx,
                   "dx store");
}

static adnn_status execute_weights(adnn_plugin_plan *plan, const bwd_plan *c,
                                   const void *const *in, void *const *outputs, const void *one,
                                   const void *zero, const void *beta) {
  const adnn_plugin_conv2d *p = &c->p;
  const adnn_cuda__conv2d_layout *lay = &c->layout;
  const adnn_cuda_launch_config *l = &plan->launch;
  const adnn_dtype dtype = c->dtype;
  char *ws = (char *)plan->workspace;
  const void *x = in[0], *dy = in[1];
  adnn_status st;
  if (lay->pack_x) {
    st = adnn_cuda__check_launch(adnn_cuda_conv2d_pad_pack_launch(l, dtype, &p->x, lay->x_pad,
                                                                  lay->nhwc, x, ws + c->x_offset),
                                 "pad_pack");
    if (st != ADNN_STATUS_SUCCESS) return st;
    x = ws + c->x_offset;
  }
  st = load_dy(plan, c, &dy);
  if (st != ADNN_STATUS_SUCCESS) return st;
  void *dw = lay->pack_w ? (void *)(ws + c->w_offset) : outputs[0];
  cudnnStatus_t e = cudnnConvolutionBackwardFilter(
      c->dnn.handle, one, c->dnn.xd, x, c->dnn.yd, dy, c->dnn.cd, (cudnnConvolutionBwdFilterAlgo_t)c->algo, ws,
      c->algo_workspace, lay->pack_w ? zero : beta, c->dnn.wd, dw);
  if (e != CUDNN_STATUS_SUCCESS)
    return adnn_cuda__fail_cudnn(e, "cudnnConvolutionBackwardFilter");
  if (lay->pack_w) {
    st = store_out(plan, c, &c->w_store, dw, outputs[0], "dw store");
    if (st != ADNN_STATUS_SUCCESS) return st;
  }
  if (!p->has_bias) return ADNN_STATUS_SUCCESS;
  void *db = c->b_tmp ? (void *)(ws + c->b_offset) : outputs[1];
  e = cudnnConvolutionBackwardBias(c->dnn.handle, one, c->dnn.yd, dy, c->b_tmp ? zero : beta, c->bd, db);
  if (e != CUDNN_STATUS_SUCCESS) return adnn_cuda__fail_cudnn(e, "cudnnConvolutionBackwardBias");
  if (!c->b_tmp) return ADNN_STATUS_SUCCESS;
  return store_out(plan, c, &c->b_store, db, outputs[1], "db store");
}

static adnn_status bwd_run(adnn_plugin_plan *plan, const bwd_plan *c, const void *const *in,
                           void *const *outputs) {
  const adnn_plugin_conv2d *p = &c->p;
  const adnn_cuda_launch_config *l = &plan->launch;
  const adnn_dtype dtype = c->dtype;
  if (c->engine == ENGINE_DIRECT) {
    if (c->dir == DIR_DATA)
      return adnn_cuda__check_launch(
          adnn_cuda_conv2d_backward_data_direct_launch(l, dtype, c->exact, p, c->beta,
                                                       &c->out_order, in[0], in[1], outputs[0]),
          "conv2d_backward_data_direct");
    return adnn_cuda__check_launch(
        adnn_cuda_conv2d_backward_weights_direct_launch(l, dtype, c->exact, p, c->beta,
                                                        &c->out_order, in[0], in[1], outputs[0],
                                                        p->has_bias ? outputs[1] : NULL),
        "conv2d_backward_weights_direct");
  }
  /* cuDNN's scaling factors are host values of the compute type: double for
   * F64 data, float for F32. */
  const int f64 = dtype == ADNN_DTYPE_F64;
  const float one_f = 1.0f, zero_f = 0.0f, beta_f = (float)c->beta;
  const double one_d = 1.0, zero_d = 0.0, beta_d = c->beta;
  const void *one = f64 ? (const void *)&one_d : (const void *)&one_f;
  const void *zero = f64 ? (const void *)&zero_d : (const void *)&zero_f;
  const void *beta = f64 ? (const void *)&beta_d : (const void *)&beta_f;
  if (c->dir == DIR_DATA) return execute_data(plan, c, in, outputs[0], one, zero, beta);
  return execute_weights(plan, c, in, outputs, one, zero, beta);
}

/* A 16-bit plan's run: widen, the F32 run, narrow (see the top of the file). */
static adnn_status bwd_run_lowp(adnn_plugin_plan *plan, const bwd_plan *c, const void *const *in,
                                void *const *outputs) {
  const adnn_cuda_launch_config *l = &plan->launch;
  char *copies = (char *)plan->workspace + c->inner_workspace;
  const void *in32[2];
  void *out32[2];
  adnn_status st = ADNN_STATUS_SUCCESS;
  for (int i = 0; i < c->n_in && st == ADNN_STATUS_SUCCESS; i++) {
    const bwd_lowp_copy *cp = &c->lowp_in[i];
    in32[i] = copies + cp->offset;
    st = adnn_cuda__check_launch(
        adnn_cuda_reorder_launch(l, &cp->widen, &cp->layout, in[i], (void *)in32[i]),
        "conv2d backward: widening an input");
  }
  for (int i = 0; i < c->n_out && st == ADNN_STATUS_SUCCESS; i++) {
    const bwd_lowp_copy *cp = &c->lowp_out[i];
    out32[i] = copies + cp->offset;
    if (c->beta != 0.0) /* the outputs are read: widen them too */
      st = adnn_cuda__check_launch(
          adnn_cuda_reorder_launch(l, &cp->widen, &cp->layout, outputs[i], out32[i]),
          "conv2d backward: widening an output");
  }
  if (st == ADNN_STATUS_SUCCESS) st = bwd_run(plan, c, in32, out32);
  for (int i = 0; i < c->n_out && st == ADNN_STATUS_SUCCESS; i++) {
    const bwd_lowp_copy *cp = &c->lowp_out[i];
    st = adnn_cuda__check_launch(
        adnn_cuda_reorder_launch(l, &cp->narrow, &cp->layout, out32[i], outputs[i]),
        "conv2d backward: rounding an output");
  }
  return st;
}

static adnn_status bwd_execute(adnn_plugin_plan *plan, const void *const *in,
                               void *const *outputs) {
  const bwd_plan *c = plan->impl;
  return c->lowp ? bwd_run_lowp(plan, c, in, outputs) : bwd_run(plan, c, in, outputs);
}

static void bwd_destroy(adnn_plugin_plan *plan) {
  destroy_descriptors(plan->impl);
  adnn_cuda__plan_free_impl(plan);
}

const adnn_cuda__op_impl adnn_cuda__conv2d_backward_data_op = {
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
    .create = bwd_data_create,
    .candidates = bwd_candidates,
    .select = bwd_select,
    .execute = bwd_execute,
    .destroy = bwd_destroy,
};

const adnn_cuda__op_impl adnn_cuda__conv2d_backward_weights_op = {
    .dtypes = ADNN_OP_DTYPES_FLOAT_LOWP,
    .create = bwd_weights_create,
    .candidates = bwd_candidates,
    .select = bwd_select,
    .execute = bwd_execute,
    .destroy = bwd_destroy,
};
