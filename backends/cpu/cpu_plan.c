/*
 * CPU plugin plans: choosing a kernel for a validated op at plan creation,
 * allocating its workspace once, and dispatching at execution.
 *
 * F32 ops run the fast kernels of kernels/cpu/; F64 and layouts the fast
 * kernels do not handle run the reference kernels of kernels/ref/, which are
 * exact (double accumulation) but slow. The conv2d heuristic lives here, as a
 * table of rules; plan_candidates lists it first, with the other algorithms
 * that support the problem, for the core's tuner to measure (the tuner then
 * names its choice in adnn_plugin_op.candidate).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_plugin.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/cpu_parallel.h"
#include "kernels/ref/ref_ops.h"

struct adnn_plugin_plan {
  adnn_plugin_op op;
  int use_reference;
  const adnn_cpu_conv2d_algo *conv;
  adnn_cpu_op_state state;
  void *workspace;
  size_t workspace_bytes;
  char algorithm[64];
};

static const adnn_cpu_conv2d_algo *const conv_algos[] = {
    &adnn_cpu_conv2d_im2col_gemm,
    &adnn_cpu_conv2d_gemm_1x1,
    &adnn_cpu_conv2d_winograd_f2x3,
    &adnn_cpu_conv2d_depthwise_direct,
};

static const adnn_cpu_conv2d_algo *find_conv_algo(adnn_conv2d_algorithm id) {
  for (size_t i = 0; i < sizeof conv_algos / sizeof conv_algos[0]; i++)
    if (conv_algos[i]->id == id) return conv_algos[i];
  return NULL;
}

/* The built-in heuristic: the most specialized algorithm that supports the
 * problem. Depthwise and 1x1 convolutions have one clearly best method.
 * Winograd F(2x2,3x3) does 2.25x fewer multiplications than direct 3x3 but pays
 * for its transforms per tile; measured on the development machine it wins
 * clearly at 56x56 with 64 channels (0.74 vs 1.67 ms) and loses at 14x14 with
 * 256 channels (2.0 vs 1.2 ms), so it is chosen only with enough tiles. The
 * tuner replaces this guess with measurements. */
enum { WINOGRAD_MIN_TILES = 256, WINOGRAD_MIN_CHANNELS = 16 };

static adnn_conv2d_algorithm conv_heuristic(const adnn_conv2d_desc *d) {
  int64_t c = d->x.dims[1], k = d->w.dims[0], r = d->w.dims[2], s = d->w.dims[3];
  int64_t p = d->y.dims[2], q = d->y.dims[3];
  int64_t tiles = d->x.dims[0] * ((p + 1) / 2) * ((q + 1) / 2);
  char why[128];
  if (d->groups == c && d->groups == k && adnn_cpu_conv2d_depthwise_direct.supports(d, why, sizeof why))
    return ADNN_CONV2D_ALGO_DEPTHWISE_DIRECT;
  if (r == 1 && s == 1 && adnn_cpu_conv2d_gemm_1x1.supports(d, why, sizeof why))
    return ADNN_CONV2D_ALGO_GEMM_1X1;
  if (r == 3 && s == 3 && c / d->groups >= WINOGRAD_MIN_CHANNELS &&
      k / d->groups >= WINOGRAD_MIN_CHANNELS && tiles >= WINOGRAD_MIN_TILES &&
      adnn_cpu_conv2d_winograd_f2x3.supports(d, why, sizeof why))
    return ADNN_CONV2D_ALGO_WINOGRAD_F2X3;
  if (adnn_cpu_conv2d_im2col_gemm.supports(d, why, sizeof why)) return ADNN_CONV2D_ALGO_IM2COL_GEMM;
  return ADNN_CONV2D_ALGO_REFERENCE;
}

/* The algorithm a candidate name (adnn_plugin_op.candidate) stands for. */
static int conv_algo_by_name(const char *name, adnn_conv2d_algorithm *out) {
  if (strcmp(name, "reference") == 0) {
    *out = ADNN_CONV2D_ALGO_REFERENCE;
    return 1;
  }
  for (size_t i = 0; i < sizeof conv_algos / sizeof conv_algos[0]; i++)
    if (strcmp(name, adnn_plugin_conv2d_algorithm_name(conv_algos[i]->id)) == 0) {
      *out = conv_algos[i]->id;
      return 1;
    }
  return 0;
}

static adnn_conv2d_algorithm conv_default(const adnn_conv2d_desc *d) {
  return d->x.dtype == ADNN_DTYPE_F32 ? conv_heuristic(d) : ADNN_CONV2D_ALGO_REFERENCE;
}

/* Candidates for the tuner: the heuristic's choice first, then every other
 * fast algorithm whose supports() accepts the problem (in conv_algos order),
 * then "reference", which runs anything but slowly (marked slow so that the
 * tuner does not spend its budget on it).
 *
 * Determinism: every CPU algorithm is reported deterministic. Our kernels
 * split work into fixed chunks whose reductions do not depend on which thread
 * runs them, and OpenBLAS's SGEMM partitions by its thread count; so results
 * are bit-identical run to run for a fixed thread count (ADNN_NUM_THREADS /
 * OpenBLAS's setting) and OpenBLAS core type. A change of either may change
 * the last bits. */
adnn_status adnn_cpu_plan_candidates(adnn_plugin_context *ctx, const adnn_plugin_op *op,
                                     adnn_plugin_candidate *out, int32_t max, int32_t *count) {
  (void)ctx;
  *count = 0;
  if (op->kind != ADNN_PLUGIN_OP_CONV2D) return ADNN_STATUS_SUCCESS;
  const adnn_conv2d_desc *d = &op->desc.conv2d;
  int threads = adnn_cpu_parallel_threads();
  int32_t n = 0;
#define ADD_CANDIDATE(NAME, WS, SLOW)                                   \
  do {                                                                  \
    if (n < max) {                                                      \
      memset(&out[n], 0, sizeof out[n]);                                \
      snprintf(out[n].name, sizeof out[n].name, "%s", (NAME));          \
      out[n].workspace_bytes = (WS);                                    \
      out[n].deterministic = 1;                                         \
      out[n].slow = (SLOW);                                             \
    }                                                                   \
    n++;                                                                \
  } while (0)
  adnn_conv2d_algorithm heur = conv_default(d);
  if (d->x.dtype == ADNN_DTYPE_F32) {
    const adnn_cpu_conv2d_algo *h = find_conv_algo(heur);
    if (h != NULL)
      ADD_CANDIDATE(adnn_plugin_conv2d_algorithm_name(heur), h->workspace_bytes(d, threads), 0);
    for (size_t i = 0; i < sizeof conv_algos / sizeof conv_algos[0]; i++) {
      const adnn_cpu_conv2d_algo *a = conv_algos[i];
      char why[160];
      if (a == h || !a->supports(d, why, sizeof why)) continue;
      ADD_CANDIDATE(adnn_plugin_conv2d_algorithm_name(a->id), a->workspace_bytes(d, threads), 0);
    }
  }
  ADD_CANDIDATE("reference", (size_t)0, 1);
#undef ADD_CANDIDATE
  *count = n;
  return ADNN_STATUS_SUCCESS;
}

static adnn_status plan_conv2d(adnn_plugin_plan *p) {
  const adnn_conv2d_desc *d = &p->op.desc.conv2d;
  adnn_conv2d_algorithm want = d->algorithm;
  if (p->op.candidate[0] != '\0') {
    /* The tuner's choice, by name, replaces the descriptor's AUTO. */
    if (!conv_algo_by_name(p->op.candidate, &want))
      return adnn_cpu_host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                 "adnn_plan_create_conv2d: the cpu backend has no algorithm "
                                 "named \"%.64s\"", p->op.candidate);
  }
  if (want == ADNN_CONV2D_ALGO_AUTO) want = conv_default(d);
  if (want == ADNN_CONV2D_ALGO_REFERENCE) {
    p->use_reference = 1;
    snprintf(p->algorithm, sizeof p->algorithm, "reference");
    return ADNN_STATUS_SUCCESS;
  }
  const adnn_cpu_conv2d_algo *a = find_conv_algo(want);
  if (a == NULL)
    return adnn_cpu_host->fail(ADNN_STATUS_NOT_SUPPORTED,
                               "adnn_plan_create_conv2d: the cpu backend has no %s algorithm",
                               adnn_plugin_conv2d_algorithm_name(want));
  char why[160] = "";
  if (!a->supports(d, why, sizeof why))
    return adnn_cpu_host->fail(ADNN_STATUS_NOT_SUPPORTED,
                               "adnn_plan_create_conv2d: algorithm %s cannot run this problem on "
                               "the cpu backend: %s", adnn_plugin_conv2d_algorithm_name(want), why);
  p->conv = a;
  p->workspace_bytes = a->workspace_bytes(d, adnn_cpu_parallel_threads());
  snprintf(p->algorithm, sizeof p->algorithm, "%s", adnn_plugin_conv2d_algorithm_name(want));
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_cpu_plan_create(adnn_plugin_context *ctx, const adnn_plugin_op *op,
                                   adnn_plugin_plan **out) {
  (void)ctx;
  adnn_plugin_plan *p = calloc(1, sizeof *p);
  if (p == NULL) return adnn_cpu_host->fail(ADNN_STATUS_OUT_OF_MEMORY, "out of host memory");
  p->op = *op;
  adnn_dtype dtype = ADNN_DTYPE_F32;
  adnn_status st = ADNN_STATUS_SUCCESS;
  switch (op->kind) {
    case ADNN_PLUGIN_OP_CONV2D:
      st = plan_conv2d(p);
      break;
    case ADNN_PLUGIN_OP_POOL2D:
      dtype = op->desc.pool2d.x.dtype;
      if (dtype == ADNN_DTYPE_F32) adnn_cpu_pool2d_prepare(&p->op.desc.pool2d, &p->state);
      break;
    case ADNN_PLUGIN_OP_ACTIVATION:
      dtype = op->desc.activation.x.dtype;
      if (dtype == ADNN_DTYPE_F32) adnn_cpu_activation_prepare(&p->op.desc.activation, &p->state);
      break;
    case ADNN_PLUGIN_OP_SOFTMAX:
      dtype = op->desc.softmax.x.dtype;
      if (dtype == ADNN_DTYPE_F32) adnn_cpu_softmax_prepare(&p->op.desc.softmax, &p->state);
      break;
    case ADNN_PLUGIN_OP_BATCHNORM:
      dtype = op->desc.batchnorm.x.dtype;
      if (dtype == ADNN_DTYPE_F32) adnn_cpu_batchnorm_prepare(&p->op.desc.batchnorm, &p->state);
      break;
    case ADNN_PLUGIN_OP_NORM:
      dtype = op->desc.norm.x.dtype;
      if (dtype == ADNN_DTYPE_F32) adnn_cpu_norm_prepare(&p->op.desc.norm, &p->state);
      break;
    case ADNN_PLUGIN_OP_BINARY:
      dtype = op->desc.binary.a.dtype;
      if (dtype == ADNN_DTYPE_F32) adnn_cpu_binary_prepare(&p->op.desc.binary, &p->state);
      break;
    default:
      st = adnn_cpu_host->fail(ADNN_STATUS_NOT_SUPPORTED, "cpu backend: unknown op kind %d",
                               (int)op->kind);
  }
  if (st != ADNN_STATUS_SUCCESS) {
    free(p);
    return st;
  }
  if (op->kind != ADNN_PLUGIN_OP_CONV2D) {
    /* F64 runs the reference kernels: exact, and F64 inference is rare. */
    p->use_reference = dtype != ADNN_DTYPE_F32;
    snprintf(p->algorithm, sizeof p->algorithm, "%s", p->use_reference ? "reference" : "cpu_simd");
  }
  if (p->workspace_bytes > 0) {
    /* Workspace is allocated here, once; execution never allocates. */
    if (posix_memalign(&p->workspace, 64, p->workspace_bytes) != 0) {
      size_t bytes = p->workspace_bytes;
      free(p);
      return adnn_cpu_host->fail(ADNN_STATUS_OUT_OF_MEMORY,
                                 "cannot allocate a %zu-byte workspace for the plan", bytes);
    }
  }
  *out = p;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_cpu_plan_execute(adnn_plugin_plan *p, const void *const *in, void *out) {
  const adnn_plugin_op *op = &p->op;
  switch (op->kind) {
    case ADNN_PLUGIN_OP_CONV2D: {
      const adnn_conv2d_desc *d = &op->desc.conv2d;
      const void *bias = d->has_bias ? in[2] : NULL;
      if (p->use_reference) adnn_ref_conv2d(d, in[0], in[1], bias, out);
      else p->conv->run(d, in[0], in[1], bias, out, p->workspace);
      break;
    }
    case ADNN_PLUGIN_OP_POOL2D:
      if (p->use_reference) adnn_ref_pool2d(&op->desc.pool2d, in[0], out);
      else adnn_cpu_pool2d_f32(&op->desc.pool2d, &p->state, in[0], out);
      break;
    case ADNN_PLUGIN_OP_ACTIVATION:
      if (p->use_reference) adnn_ref_activation(&op->desc.activation, in[0], out);
      else adnn_cpu_activation_f32(&op->desc.activation, &p->state, in[0], out);
      break;
    case ADNN_PLUGIN_OP_SOFTMAX:
      if (p->use_reference) adnn_ref_softmax(&op->desc.softmax, in[0], out);
      else adnn_cpu_softmax_f32(&op->desc.softmax, &p->state, in[0], out);
      break;
    case ADNN_PLUGIN_OP_BATCHNORM:
      if (p->use_reference)
        adnn_ref_batchnorm(&op->desc.batchnorm, in[0], in[1], in[2], in[3], in[4], out);
      else
        adnn_cpu_batchnorm_f32(&op->desc.batchnorm, &p->state, in[0], in[1], in[2], in[3], in[4],
                               out);
      break;
    case ADNN_PLUGIN_OP_NORM: {
      const adnn_norm_desc *d = &op->desc.norm;
      const void *gain = d->has_gain ? in[1] : NULL;
      const void *bias = d->has_bias ? in[1 + d->has_gain] : NULL;
      if (p->use_reference) adnn_ref_norm(d, in[0], gain, bias, out);
      else adnn_cpu_norm_f32(d, &p->state, in[0], gain, bias, out);
      break;
    }
    case ADNN_PLUGIN_OP_BINARY:
      if (p->use_reference) adnn_ref_binary(&op->desc.binary, in[0], in[1], out);
      else adnn_cpu_binary_f32(&op->desc.binary, &p->state, in[0], in[1], out);
      break;
    default:
      return adnn_cpu_host->fail(ADNN_STATUS_INTERNAL_ERROR, "cpu backend: unknown op kind %d",
                                 (int)op->kind);
  }
  return ADNN_STATUS_SUCCESS;
}

void adnn_cpu_plan_destroy(adnn_plugin_plan *p) {
  if (p == NULL) return;
  free(p->workspace);
  free(p);
}

void adnn_cpu_plan_describe(const adnn_plugin_plan *p, const char **algorithm, size_t *workspace) {
  *algorithm = p->algorithm;
  *workspace = p->workspace_bytes;
}
