/*
 * CUDA plugin plans: every forward DNN op of adnn/ops.h on the GPU.
 *
 * At creation (plan_create) a validated op (see adnn_plugin_op) is turned into
 * the launch parameters of one of our kernels (the .cu files of kernels/cuda/): shapes are
 * coalesced, memory orders and launch sizes are derived from the tensors and
 * the device's properties, so that execution only queues kernels on the
 * context's stream and never allocates. conv2d goes through cuDNN, see
 * cuda_conv2d.c.
 *
 * Which op runs where:
 *   conv2d      cuDNN (legacy API, heuristic algorithm choice; fused
 *               bias + relu/identity through cudnnConvolutionBiasActivationForward,
 *               other activations through our epilogue kernel); our direct
 *               kernel for forced "direct"/"reference" and what cuDNN rejects.
 *   pool2d      our kernel (cuDNN has no ceil_mode nor asymmetric padding).
 *   activation  our kernel (cuDNN lacks gelu, silu, softplus, hardswish, leaky relu).
 *   softmax     our kernel (any axis and strides; NaN/inf rules of doc/ops.md).
 *   batchnorm   our kernel (with every fused activation).
 *   norm        our kernel (layer norm, RMS norm).
 *   binary      our kernel (broadcasting).
 * F32 and F64 everywhere.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_plan.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

int cuda__coalesce(int rank, const int64_t *dims, int count, const int64_t *const *strides,
                   adnn_cuda_nd *out) {
  memset(out, 0, sizeof *out);
  /* Keep the dims of size > 1, in order. */
  int r = 0;
  for (int i = 0; i < rank; i++) {
    if (dims[i] == 1) continue;
    out->dims[r] = dims[i];
    for (int t = 0; t < count; t++) out->strides[t][r] = strides[t][i];
    r++;
  }
  /* Merge from the back: dim i into dim i + 1 (now the merged one) when every
   * tensor steps over dim i exactly by one full run of dim i + 1. */
  int w = r - 1;
  for (int i = r - 2; i >= 0; i--) {
    int merge = 1;
    for (int t = 0; t < count; t++)
      if (out->strides[t][i] != out->strides[t][w] * out->dims[w]) merge = 0;
    if (merge) {
      out->dims[w] *= out->dims[i];
    } else {
      w--;
      out->dims[w] = out->dims[i];
      for (int t = 0; t < count; t++) out->strides[t][w] = out->strides[t][i];
    }
  }
  /* Shift the kept dims [w, r) down to [0, r - w). */
  int nr = r > 0 ? r - w : 0;
  if (r > 0 && w > 0) {
    for (int i = 0; i < nr; i++) {
      out->dims[i] = out->dims[i + w];
      for (int t = 0; t < count; t++) out->strides[t][i] = out->strides[t][i + w];
    }
  }
  out->rank = nr;
  if (nr == 0) return 1;
  if (nr > 1) return 0;
  for (int t = 0; t < count; t++)
    if (out->strides[t][0] != 1) return 0;
  return 1;
}

void cuda__memory_order4(const adnn_tensor_desc *t, int32_t order[4]) {
  for (int i = 0; i < 4; i++) order[i] = i;
  /* Insertion sort by stride, descending; size-1 dims count as the slowest
   * (their index is always 0, wherever they are placed). */
  for (int i = 1; i < 4; i++) {
    int32_t v = order[i];
    int64_t sv = t->dims[v] == 1 ? INT64_MAX : t->strides[v];
    int j = i - 1;
    while (j >= 0) {
      int64_t sj = t->dims[order[j]] == 1 ? INT64_MAX : t->strides[order[j]];
      if (sj >= sv) break;
      order[j + 1] = order[j];
      j--;
    }
    order[j + 1] = v;
  }
}

adnn_status cuda__launch_config(adnn_plugin_context *ctx, adnn_cuda_launch *l) {
  int sms = 0, tps = 0;
  cudaError_t err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx->ordinal);
  if (err != cudaSuccess) return cuda__fail_runtime(err, "cudaDeviceGetAttribute(MultiProcessorCount)");
  err = cudaDeviceGetAttribute(&tps, cudaDevAttrMaxThreadsPerMultiProcessor, ctx->ordinal);
  if (err != cudaSuccess)
    return cuda__fail_runtime(err, "cudaDeviceGetAttribute(MaxThreadsPerMultiProcessor)");
  l->stream = ctx->stream;
  l->sm_count = sms > 0 ? sms : 1;
  l->max_threads_per_sm = tps > 0 ? tps : 1024;
  return ADNN_STATUS_SUCCESS;
}

adnn_status cuda__check_launch(cudaError_t err, const char *what) {
  if (err == cudaSuccess) return ADNN_STATUS_SUCCESS;
  char buf[128];
  snprintf(buf, sizeof buf, "launching the %s kernel", what);
  return cuda__fail_runtime(err, buf);
}

static adnn_cuda_act to_act(const adnn_activation *a) {
  adnn_cuda_act r;
  r.kind = (int32_t)a->kind;
  r.alpha = a->alpha;
  r.beta = a->beta;
  return r;
}

static int64_t count_of(const adnn_tensor_desc *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->dims[i];
  return n;
}

/* ------------------------------------------------------------------------ */
/* Per-op preparation                                                        */
/* ------------------------------------------------------------------------ */

static void prepare_activation(adnn_plugin_plan *p) {
  const adnn_activation_desc *d = &p->op.desc.activation;
  const int64_t *s[2] = {d->x.strides, d->y.strides};
  p->packed = cuda__coalesce(d->x.rank, d->x.dims, 2, s, &p->nd);
  p->n = count_of(&d->x);
  snprintf(p->algorithm, sizeof p->algorithm, "cuda:%s", p->packed ? "activation_vec16" : "activation_strided");
}

static void prepare_binary(adnn_plugin_plan *p) {
  const adnn_binary_desc *d = &p->op.desc.binary;
  const int64_t *s[3] = {d->a.strides, d->b.strides, d->y.strides};
  p->packed = cuda__coalesce(d->y.rank, d->y.dims, 3, s, &p->nd);
  p->n = count_of(&d->y);
  snprintf(p->algorithm, sizeof p->algorithm, "cuda:%s", p->packed ? "binary_vec16" : "binary_broadcast");
}

static void prepare_pool2d(adnn_plugin_plan *p) {
  const adnn_pool2d_desc *d = &p->op.desc.pool2d;
  adnn_cuda_pool2d *k = &p->pool;
  memset(k, 0, sizeof *k);
  k->kind = (int32_t)d->kind;
  k->N = d->x.dims[0];
  k->C = d->x.dims[1];
  k->H = d->x.dims[2];
  k->W = d->x.dims[3];
  k->P = d->y.dims[2];
  k->Q = d->y.dims[3];
  k->kernel_h = d->kernel_h;
  k->kernel_w = d->kernel_w;
  k->stride_h = d->stride_h;
  k->stride_w = d->stride_w;
  k->pad_top = d->pad_top;
  k->pad_bottom = d->pad_bottom;
  k->pad_left = d->pad_left;
  k->pad_right = d->pad_right;
  for (int i = 0; i < 4; i++) {
    k->xs[i] = d->x.strides[i];
    k->ys[i] = d->y.strides[i];
  }
  cuda__memory_order4(&d->y, k->order);
  snprintf(p->algorithm, sizeof p->algorithm, "cuda:pool2d_direct");
}

static void prepare_softmax(adnn_plugin_plan *p) {
  const adnn_softmax_desc *d = &p->op.desc.softmax;
  adnn_cuda_softmax *k = &p->softmax;
  memset(k, 0, sizeof *k);
  const int axis = d->axis; /* the core made it non-negative */
  int64_t dims[ADNN_MAX_RANK] = {0}, xs[ADNN_MAX_RANK] = {0}, ys[ADNN_MAX_RANK] = {0};
  int r = 0;
  for (int i = 0; i < d->x.rank; i++) {
    if (i == axis) continue;
    dims[r] = d->x.dims[i];
    xs[r] = d->x.strides[i];
    ys[r] = d->y.strides[i];
    r++;
  }
  const int64_t *s[2] = {xs, ys};
  cuda__coalesce(r, dims, 2, s, &k->rows);
  k->row_count = 1;
  for (int i = 0; i < r; i++) k->row_count *= dims[i];
  k->L = d->x.dims[axis];
  k->xs = d->x.strides[axis];
  k->ys = d->y.strides[axis];
  k->log = d->log;
  /* One block per row when the axis is contiguous (coalesced within a block),
   * or when a thread per row would leave most of the device idle. */
  const int rows_path = k->xs == 1 || k->row_count < (int64_t)p->launch.sm_count * 128;
  k->block_per_row = rows_path;
  snprintf(p->algorithm, sizeof p->algorithm, "cuda:%s",
           rows_path ? "softmax_block_per_row" : "softmax_thread_per_column");
}

static void prepare_norm(adnn_plugin_plan *p) {
  const adnn_norm_desc *d = &p->op.desc.norm;
  adnn_cuda_norm *k = &p->norm;
  memset(k, 0, sizeof *k);
  const int lead = d->x.rank - d->norm_dims;
  const int64_t *sr[2] = {d->x.strides, d->y.strides};
  cuda__coalesce(lead, d->x.dims, 2, sr, &k->rows);
  const int64_t *sc[2] = {d->x.strides + lead, d->y.strides + lead};
  cuda__coalesce(d->norm_dims, d->x.dims + lead, 2, sc, &k->cols);
  if (k->cols.rank == 0) { /* D == 1: one column of stride 0 */
    k->cols.rank = 1;
    k->cols.dims[0] = 1;
  }
  k->row_count = 1;
  for (int i = 0; i < lead; i++) k->row_count *= d->x.dims[i];
  k->D = 1;
  for (int i = lead; i < d->x.rank; i++) k->D *= d->x.dims[i];
  k->rms = d->kind == ADNN_NORM_RMS;
  k->epsilon = d->epsilon;
  snprintf(p->algorithm, sizeof p->algorithm, "cuda:%s", k->rms ? "rmsnorm_block_per_row" : "layernorm_block_per_row_welford");
}

/* Whether t's strides are a dense permutation: sorted by stride, each stride of
 * a dim of size > 1 is the product of the sizes of the faster dims. */
static int dense_permutation(const adnn_tensor_desc *t) {
  int idx[ADNN_MAX_RANK], n = 0;
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] > 1) idx[n++] = i;
  for (int i = 1; i < n; i++) { /* insertion sort by stride, ascending */
    int v = idx[i], j = i - 1;
    while (j >= 0 && t->strides[idx[j]] > t->strides[v]) {
      idx[j + 1] = idx[j];
      j--;
    }
    idx[j + 1] = v;
  }
  int64_t expect = 1;
  for (int i = 0; i < n; i++) {
    if (t->strides[idx[i]] != expect) return 0;
    expect *= t->dims[idx[i]];
  }
  return 1;
}

static void prepare_batchnorm(adnn_plugin_plan *p) {
  const adnn_batchnorm_desc *d = &p->op.desc.batchnorm;
  adnn_cuda_batchnorm *k = &p->bn;
  memset(k, 0, sizeof *k);
  k->n = count_of(&d->x);
  k->C = d->x.dims[1];
  k->epsilon = d->epsilon;
  k->act = to_act(&d->activation);
  int same = 1;
  for (int i = 0; i < d->x.rank; i++)
    if (d->x.dims[i] > 1 && d->x.strides[i] != d->y.strides[i]) same = 0;
  if (same && dense_permutation(&d->x)) {
    k->dense_channel_stride = k->C > 1 ? d->x.strides[1] : 1;
    snprintf(p->algorithm, sizeof p->algorithm, "cuda:batchnorm_dense");
  } else {
    k->nd.rank = d->x.rank;
    for (int i = 0; i < d->x.rank; i++) {
      k->nd.dims[i] = d->x.dims[i];
      k->nd.strides[0][i] = d->x.strides[i];
      k->nd.strides[1][i] = d->y.strides[i];
    }
    snprintf(p->algorithm, sizeof p->algorithm, "cuda:batchnorm_strided");
  }
}

/* ------------------------------------------------------------------------ */
/* Plan slots                                                                */
/* ------------------------------------------------------------------------ */

adnn_status cuda__plan_create(adnn_plugin_context *ctx, const adnn_plugin_op *op,
                              adnn_plugin_plan **out) {
  adnn_dtype dt = adnn_plugin_op_dtype(op);
  if (dt != ADNN_DTYPE_F32 && dt != ADNN_DTYPE_F64)
    return cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                            "cuda: dtype %d is not supported by the DNN ops (f32 and f64 are)",
                            (int)dt);
  adnn_status st = cuda__context_enter(ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  adnn_plugin_plan *p = calloc(1, sizeof *p);
  if (!p) return cuda__host->fail(ADNN_STATUS_OUT_OF_MEMORY, "cuda: out of host memory");
  p->ctx = ctx;
  p->op = *op;
  p->f64 = dt == ADNN_DTYPE_F64;
  st = cuda__launch_config(ctx, &p->launch);
  if (st != ADNN_STATUS_SUCCESS) {
    free(p);
    return st;
  }
  switch (op->kind) {
    case ADNN_PLUGIN_OP_CONV2D: st = cuda__conv2d_create(p); break;
    case ADNN_PLUGIN_OP_POOL2D: prepare_pool2d(p); break;
    case ADNN_PLUGIN_OP_ACTIVATION: prepare_activation(p); break;
    case ADNN_PLUGIN_OP_SOFTMAX: prepare_softmax(p); break;
    case ADNN_PLUGIN_OP_BATCHNORM: prepare_batchnorm(p); break;
    case ADNN_PLUGIN_OP_NORM: prepare_norm(p); break;
    case ADNN_PLUGIN_OP_BINARY: prepare_binary(p); break;
    default:
      st = cuda__host->fail(ADNN_STATUS_NOT_SUPPORTED, "cuda: unknown op kind %d", (int)op->kind);
  }
  if (st != ADNN_STATUS_SUCCESS) {
    cuda__plan_destroy(p);
    return st;
  }
  *out = p;
  return ADNN_STATUS_SUCCESS;
}

adnn_status cuda__plan_execute(adnn_plugin_plan *p, const void *const *in, void *out) {
  adnn_status st = cuda__context_enter(p->ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  const adnn_cuda_launch *l = &p->launch;
  const adnn_plugin_op *op = &p->op;
  switch (op->kind) {
    case ADNN_PLUGIN_OP_CONV2D:
      return cuda__conv2d_execute(p, in, out);
    case ADNN_PLUGIN_OP_POOL2D:
      return cuda__check_launch(adnn_cuda_pool2d_run(l, p->f64, &p->pool, in[0], out), "pool2d");
    case ADNN_PLUGIN_OP_ACTIVATION:
      return cuda__check_launch(adnn_cuda_activation(l, p->f64, to_act(&op->desc.activation.activation),
                                                     &p->nd, p->n, p->packed, in[0], out),
                                "activation");
    case ADNN_PLUGIN_OP_SOFTMAX:
      return cuda__check_launch(adnn_cuda_softmax_run(l, p->f64, &p->softmax, in[0], out), "softmax");
    case ADNN_PLUGIN_OP_BATCHNORM:
      return cuda__check_launch(adnn_cuda_batchnorm_run(l, p->f64, &p->bn, in[0], in[1], in[2],
                                                        in[3], in[4], out),
                                "batchnorm");
    case ADNN_PLUGIN_OP_NORM: {
      const adnn_norm_desc *d = &op->desc.norm;
      const void *gain = d->has_gain ? in[1] : NULL;
      const void *bias = d->has_bias ? in[1 + d->has_gain] : NULL;
      return cuda__check_launch(adnn_cuda_norm_run(l, p->f64, &p->norm, in[0], gain, bias, out), "norm");
    }
    case ADNN_PLUGIN_OP_BINARY: {
      const adnn_binary_desc *d = &op->desc.binary;
      return cuda__check_launch(adnn_cuda_binary(l, p->f64, (int)d->op, d->alpha, d->beta, &p->nd,
                                                 p->n, p->packed, in[0], in[1], out),
                                "binary");
    }
  }
  return cuda__host->fail(ADNN_STATUS_INTERNAL_ERROR, "cuda: unknown op kind %d", (int)op->kind);
}

void cuda__plan_destroy(adnn_plugin_plan *p) {
  if (!p) return;
  if (cudaSetDevice(p->ctx->ordinal) != cudaSuccess) (void)cudaGetLastError();
  if (p->op.kind == ADNN_PLUGIN_OP_CONV2D) cuda__conv2d_destroy(p);
  if (p->workspace) {
    /* The core synchronizes nothing before destroying a plan; cudaFree waits
     * for the device to finish work that may still use the workspace. */
    cudaError_t e = cudaFree(p->workspace);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      cuda__log(ADNN_LOG_WARN, "cudaFree of a plan workspace: %s", cudaGetErrorName(e));
    }
  }
  free(p);
}

void cuda__plan_describe(const adnn_plugin_plan *p, const char **algorithm, size_t *workspace_bytes) {
  *algorithm = p->algorithm;
  *workspace_bytes = p->workspace_bytes;
}
