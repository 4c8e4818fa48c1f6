/* adnn-bench problems as conformance-harness cases (see bench_case.h). This
 * is the grammar's only per-op code: each form becomes its op's public
 * descriptor; everything else goes through the op's traits. */
#include "tools/bench_case.h"

#include <string.h>

/* An optim problem's case has its T gradients as inputs and up to 3 T
 * outputs (Adam's parameters, m and v), every one read (the traits' 32-bit
 * `inout` mask): bench_problem.h's limit must fit the harness's. */
_Static_assert(BENCH_OPTIM_MAX_TENSORS <= HARNESS_MAX_INPUTS &&
                   3 * BENCH_OPTIM_MAX_TENSORS <= HARNESS_MAX_OUTPUTS &&
                   3 * BENCH_OPTIM_MAX_TENSORS <= 32,
               "adnn-bench's optimizer tensors exceed the harness's case");

/* [N, C, H, W] in NCHW or NHWC. */
static adnn_tensor_desc image(int64_t n, int64_t c, int64_t h, int64_t w, int nhwc) {
  return harness_tensor_desc4(ADNN_DTYPE_F32, n, c, h, w, nhwc ? HARNESS_NHWC : HARNESS_PACKED);
}

static adnn_tensor_desc packed(int rank, const int64_t *dims) {
  return harness_tensor_desc(ADNN_DTYPE_F32, rank, dims, HARNESS_PACKED);
}

/* [B, H, S, D] of F32, packed BHSD or BSHD (strides [S*H*D, D, H*D, 1]). */
static adnn_tensor_desc attention_tensor(int64_t b, int64_t h, int64_t s, int64_t d, int bshd) {
  const int64_t dims[4] = {b, h, s, d};
  if (!bshd) return packed(4, dims);
  const int64_t strides[4] = {s * h * d, d, h * d, 1};
  adnn_tensor_desc t;
  adnn_tensor_desc_init_strided(&t, ADNN_DTYPE_F32, 4, dims, strides);
  return t;
}

/* The forward descriptor of a backward or training case (dir=FWD_D or
 * BWD_DW), which the case's descriptor points to: valid until the next
 * bench_case_build, which is as long as adnn-bench uses a case. */
static harness_desc forward;

/* The descriptor of every op but gemm, in F32 (the dtype is set afterwards
 * through the op's traits), and for a backward convolution the forward
 * descriptor it points to in *fwd (bench_case_build points it there again
 * once the case holds it). Returns the op's name. */
static const char *describe(const bench_problem *p, int nhwc, adnn_conv2d_algorithm algorithm,
                            harness_desc *d, harness_desc *fwd) {
  memset(d, 0, sizeof *d);
  memset(fwd, 0, sizeof *fwd);
  switch (p->op) {
    case BENCH_OP_CONV: {
      /* A backward direction: the forward descriptor goes to *fwd (with a
       * bias for BWD_WB, whose db output exists iff the forward op has one),
       * the backward descriptor forces the algorithm. */
      const int bwd = p->dir != BENCH_DIR_FWD_D;
      adnn_conv2d_desc *c = bwd ? &fwd->conv2d : &d->conv2d;
      adnn_conv2d_desc_init(c);
      c->x = image(p->mb, p->ic, p->ih, p->iw, nhwc);
      c->w = image(p->oc, p->ic / p->g, p->kh, p->kw, nhwc);
      c->y = image(p->mb, p->oc, p->oh, p->ow, nhwc);
      c->stride_h = p->sh;
      c->stride_w = p->sw;
      c->pad_top = p->pt;
      c->pad_bottom = p->pb;
      c->pad_left = p->pl;
      c->pad_right = p->pr;
      c->dilation_h = p->dh;
      c->dilation_w = p->dw;
      c->groups = p->g;
      if (!bwd) {
        c->algorithm = algorithm;
        return "conv2d";
      }
      if (p->dir == BENCH_DIR_BWD_D) {
        adnn_conv2d_backward_data_desc_init(&d->conv2d_backward_data);
        d->conv2d_backward_data.forward = c;
        d->conv2d_backward_data.algorithm = algorithm;
        d->conv2d_backward_data.beta = p->beta;
        return "conv2d_backward_data";
      }
      if (p->dir == BENCH_DIR_BWD_WB) {
        c->has_bias = 1;
        c->bias = harness_vector_desc(ADNN_DTYPE_F32, p->oc);
      }
      adnn_conv2d_backward_weights_desc_init(&d->conv2d_backward_weights);
      d->conv2d_backward_weights.forward = c;
      d->conv2d_backward_weights.algorithm = algorithm;
      d->conv2d_backward_weights.beta = p->beta;
      return "conv2d_backward_weights";
    }
    case BENCH_OP_POOL: {
      adnn_pool2d_desc *c = &d->pool2d;
      adnn_pool2d_desc_init(c);
      c->x = image(p->mb, p->ic, p->ih, p->iw, nhwc);
      c->y = image(p->mb, p->ic, p->oh, p->ow, nhwc);
      c->kind = p->pool_kind;
      c->kernel_h = p->kh;
      c->kernel_w = p->kw;
      c->stride_h = p->sh;
      c->stride_w = p->sw;
      c->pad_top = p->pt;
      c->pad_bottom = p->pb;
      c->pad_left = p->pl;
      c->pad_right = p->pr;
      c->ceil_mode = p->ceil_mode;
      return "pool2d";
    }
    case BENCH_OP_REORDER: {
      adnn_reorder_desc *c = &d->reorder;
      adnn_reorder_desc_init(c);
      c->x = harness_tensor_desc((adnn_dtype)p->rx_dtype, p->rank, p->dims,
                                 p->rx_layout ? HARNESS_NHWC : HARNESS_PACKED);
      c->y = harness_tensor_desc((adnn_dtype)p->ry_dtype, p->rank, p->dims,
                                 p->ry_layout ? HARNESS_NHWC : HARNESS_PACKED);
      return "reorder";
    }
    case BENCH_OP_QUANTIZE:
    case BENCH_OP_DEQUANTIZE: {
      /* The two descriptors have the same fields. */
      const int quantize = p->op == BENCH_OP_QUANTIZE;
      adnn_quantize_desc q;
      adnn_quantize_desc_init(&q);
      q.x = harness_tensor_desc((adnn_dtype)p->rx_dtype, p->rank, p->dims, HARNESS_PACKED);
      q.y = harness_tensor_desc((adnn_dtype)p->ry_dtype, p->rank, p->dims, HARNESS_PACKED);
      q.axis = p->q_axis;
      q.scale = p->q_axis >= 0 ? 1.0f : (float)p->q_scale;
      q.zero_point = p->q_axis >= 0 ? 0 : (int32_t)p->q_zero_point;
      if (quantize) {
        d->quantize = q;
        return "quantize";
      }
      adnn_dequantize_desc_init(&d->dequantize);
      d->dequantize.x = q.x;
      d->dequantize.y = q.y;
      d->dequantize.axis = q.axis;
      d->dequantize.scale = q.scale;
      d->dequantize.zero_point = q.zero_point;
      return "dequantize";
    }
    case BENCH_OP_ACT: {
      adnn_activation_desc *c = &d->activation;
      adnn_activation_desc_init(c);
      c->x = c->y = packed(p->rank, p->dims);
      c->activation.kind = p->act_kind;
      c->activation.alpha = p->alpha;
      c->activation.beta = p->beta;
      return "activation";
    }
    case BENCH_OP_SOFTMAX: {
      adnn_softmax_desc *c = &d->softmax;
      adnn_softmax_desc_init(c);
      c->x = c->y = packed(p->rank, p->dims);
      c->axis = p->axis;
      c->log = p->log_softmax;
      return "softmax";
    }
    case BENCH_OP_LNORM:
    case BENCH_OP_RMSNORM: {
      adnn_norm_desc *c = p->dir == BENCH_DIR_BWD_DW ? &forward.norm : &d->norm;
      adnn_norm_desc_init(c);
      c->x = c->y = packed(p->rank, p->dims);
      c->kind = p->op == BENCH_OP_LNORM ? ADNN_NORM_LAYER : ADNN_NORM_RMS;
      c->norm_dims = p->norm_dims;
      c->epsilon = p->eps;
      c->has_gain = p->has_gain;
      c->has_bias = p->has_bias;
      if (p->dir != BENCH_DIR_BWD_DW) return "norm";
      adnn_norm_backward_desc_init(&d->norm_backward);
      d->norm_backward.forward = c;
      return "norm_backward";
    }
    case BENCH_OP_BNORM: {
      /* FWD_I: inference; FWD_D: training; BWD_DW: the backward pass. */
      adnn_batchnorm_desc *c = p->dir == BENCH_DIR_FWD_I ? &d->batchnorm : &forward.batchnorm;
      adnn_batchnorm_desc_init(c);
      const int64_t nc[2] = {p->mb, p->ic};
      c->x = c->y = p->ih ? image(p->mb, p->ic, p->ih, p->iw, nhwc) : packed(2, nc);
      c->epsilon = p->eps;
      c->activation.kind = p->act_kind;
      if (p->dir == BENCH_DIR_FWD_D) {
        adnn_batchnorm_training_desc_init(&d->batchnorm_training);
        d->batchnorm_training.forward = c;
        d->batchnorm_training.momentum = p->momentum;
        return "batchnorm_training";
      }
      if (p->dir == BENCH_DIR_BWD_DW) {
        adnn_batchnorm_backward_desc_init(&d->batchnorm_backward);
        d->batchnorm_backward.forward = c;
        return "batchnorm_backward";
      }
      return "batchnorm";
    }
    case BENCH_OP_BINARY: {
      adnn_binary_desc *c = &d->binary;
      adnn_binary_desc_init(c);
      c->a = packed(p->rank, p->dims);
      c->b = packed(p->rank_b, p->dims_b);
      /* y: the broadcast shape, dims aligned from the right */
      const int r = p->rank > p->rank_b ? p->rank : p->rank_b;
      int64_t yd[BENCH_MAX_RANK];
      for (int k = 0; k < r; k++) {
        const int64_t a = k < p->rank ? p->dims[p->rank - 1 - k] : 1;
        const int64_t b = k < p->rank_b ? p->dims_b[p->rank_b - 1 - k] : 1;
        yd[r - 1 - k] = a > b ? a : b;
      }
      c->y = packed(r, yd);
      c->op = p->binary_op;
      return "binary";
    }
    case BENCH_OP_XENT: {
      /* F32 logits [N, C], int32 labels, the reduction's loss. */
      adnn_softmax_cross_entropy_desc *c =
          p->dir == BENCH_DIR_BWD_D ? &forward.softmax_cross_entropy : &d->softmax_cross_entropy;
      adnn_softmax_cross_entropy_desc_init(c);
      c->logits = packed(2, p->dims);
      c->labels = harness_tensor_desc(ADNN_DTYPE_I32, 1, p->dims, HARNESS_PACKED);
      c->loss = packed(p->loss_reduction == ADNN_LOSS_REDUCTION_NONE ? 1 : 0, p->dims);
      c->reduction = p->loss_reduction;
      c->ignore_index = p->ignore_index;
      if (p->dir != BENCH_DIR_BWD_D) return "softmax_cross_entropy";
      adnn_softmax_cross_entropy_backward_desc_init(&d->softmax_cross_entropy_backward);
      d->softmax_cross_entropy_backward.forward = c;
      return "softmax_cross_entropy_backward";
    }
    case BENCH_OP_ATTENTION: {
      /* q, k, v, o packed BHSD or BSHD, lse [B, H, Sq] packed, the bias of
       * its own dims packed, int32 key lengths [B]. dir=BWD_D: the backward
       * op (manifest row 22), pointing to this forward descriptor (with lse
       * whatever nolse says). */
      adnn_attention_desc *c =
          p->dir == BENCH_DIR_BWD_D ? &forward.attention : &d->attention;
      adnn_attention_desc_init(c);
      const int64_t B = p->att_b, H = p->att_h, Hkv = p->att_hkv, Sq = p->att_sq;
      const int64_t Skv = p->att_skv, D = p->att_d, Dv = p->att_dv;
      c->q = attention_tensor(B, H, Sq, D, p->bshd);
      c->k = attention_tensor(B, Hkv, Skv, D, p->bshd);
      c->v = attention_tensor(B, Hkv, Skv, Dv, p->bshd);
      c->o = attention_tensor(B, H, Sq, Dv, p->bshd);
      const int64_t ld[3] = {B, H, Sq};
      c->lse = packed(3, ld);
      c->has_lse = !p->no_lse || p->dir == BENCH_DIR_BWD_D;
      c->causal = p->causal;
      c->scale = p->scale;
      if (p->bias_rank > 0) {
        c->has_bias = 1;
        c->bias = packed(p->bias_rank, p->bias_dims);
      }
      if (p->key_lengths) {
        c->has_key_lengths = 1;
        c->key_lengths = harness_tensor_desc(ADNN_DTYPE_I32, 1, &B, HARNESS_PACKED);
      }
      if (p->dir != BENCH_DIR_BWD_D) return "attention";
      adnn_attention_backward_desc_init(&d->attention_backward);
      d->attention_backward.forward = c;
      return "attention_backward";
    }
    case BENCH_OP_LSCALE: {
      /* As the optimizer's, the sizes outlive the descriptor; the scale is
       * the harness's default (1024). */
      static int64_t ls_sizes[BENCH_OPTIM_MAX_TENSORS];
      adnn_loss_scale_desc *c = &d->loss_scale;
      adnn_loss_scale_desc_init(c);
      for (int k = 0; k < p->rank; k++) ls_sizes[k] = p->dims[k];
      c->kind = p->ls_kind;
      c->tensor_count = (size_t)p->rank;
      c->sizes = ls_sizes;
      return "loss_scale";
    }
    case BENCH_OP_OPTIM: {
      /* The sizes live with the forward storage: the descriptor points to
       * them while the case runs. */
      static int64_t sizes[BENCH_OPTIM_MAX_TENSORS];
      adnn_optimizer_desc *c = &d->optimizer;
      adnn_optimizer_desc_init(c);
      for (int k = 0; k < p->rank; k++) sizes[k] = p->dims[k];
      c->kind = p->opt_kind;
      c->tensor_count = (size_t)p->rank;
      c->sizes = sizes;
      c->lr = p->lr;
      c->weight_decay = p->weight_decay;
      c->momentum = p->sgd_momentum;
      c->dampening = p->dampening;
      c->nesterov = p->nesterov;
      c->beta1 = p->beta1;
      c->beta2 = p->beta2;
      c->epsilon = p->opt_eps;
      return "optimizer";
    }
    case BENCH_OP_MATMUL: {
      /* a [batch, M, K] (stored [batch, K, M] with ta), b [K, N] or [batch,
       * K, N] (stored [.., N, K] with tb, PyTorch's Linear weight), y and a
       * separate residual packed [batch, M, N], bias [N]. */
      adnn_matmul_desc *c = &d->matmul;
      adnn_matmul_desc_init(c);
      const int r = p->batch_rank + 2;
      int64_t da[4], db[4], dy[4];
      for (int k = 0; k < p->batch_rank; k++) da[k] = db[k] = dy[k] = p->batch[k];
      da[r - 2] = p->ta ? p->k : p->m, da[r - 1] = p->ta ? p->m : p->k;
      const int rb = p->b_batched ? r : 2;
      db[rb - 2] = p->tb ? p->n : p->k, db[rb - 1] = p->tb ? p->k : p->n;
      dy[r - 2] = p->m, dy[r - 1] = p->n;
      c->a = packed(r, da);
      c->b = packed(rb, db);
      /* A stored transpose is the same tensor with its last two dims and
       * strides swapped. */
      if (p->ta) {
        int64_t t = c->a.dims[r - 2];
        c->a.dims[r - 2] = c->a.dims[r - 1], c->a.dims[r - 1] = t;
        t = c->a.strides[r - 2];
        c->a.strides[r - 2] = c->a.strides[r - 1], c->a.strides[r - 1] = t;
      }
      if (p->tb) {
        int64_t t = c->b.dims[rb - 2];
        c->b.dims[rb - 2] = c->b.dims[rb - 1], c->b.dims[rb - 1] = t;
        t = c->b.strides[rb - 2];
        c->b.strides[rb - 2] = c->b.strides[rb - 1], c->b.strides[rb - 1] = t;
      }
      c->y = packed(r, dy);
      c->has_bias = p->has_bias;
      if (p->has_bias) c->bias = packed(1, &p->n);
      c->has_residual = p->has_residual;
      if (p->has_residual) c->residual = c->y;
      c->residual_scale = p->res_scale;
      c->alpha = p->mm_alpha;
      c->activation.kind = p->act_kind;
      c->activation.alpha = p->alpha;
      c->activation.beta = p->beta;
      return "matmul";
    }
    case BENCH_OP_REDUCE: {
      adnn_reduce_desc *c = &d->reduce;
      adnn_reduce_desc_init(c);
      c->x = packed(p->rank, p->dims);
      int64_t yd[BENCH_MAX_RANK];
      int r = 0;
      for (int k = 0; k < p->rank; k++) {
        const int reduced = (p->reduce_axes >> k) & 1u;
        if (!reduced) yd[r++] = p->dims[k];
        else if (p->keep_dims) yd[r++] = 1;
      }
      c->y = packed(r, yd);
      c->kind = p->reduce_kind;
      c->axes = p->reduce_axes;
      c->keep_dims = p->keep_dims;
      return "reduce";
    }
  }
  return NULL;
}

/* A, B and C of a gemm: problem, uniform in [-1, 1). */
static int gemm_case(const bench_problem *p, harness_case *c) {
  const int64_t da[2] = {p->ta ? p->k : p->m, p->ta ? p->m : p->k};
  const int64_t db[2] = {p->tb ? p->n : p->k, p->tb ? p->k : p->n};
  const int64_t dc[2] = {p->m, p->n};
  const adnn_tensor_desc a = harness_tensor_desc(c->dtype, 2, da, HARNESS_PACKED);
  const adnn_tensor_desc b = harness_tensor_desc(c->dtype, 2, db, HARNESS_PACKED);
  const adnn_tensor_desc y = harness_tensor_desc(c->dtype, 2, dc, HARNESS_PACKED);
  c->n_in = 2;
  if (harness_buffer_init(&c->in[0], &a) || harness_buffer_init(&c->in[1], &b) ||
      harness_buffer_init(&c->out, &y)) {
    harness_case_free(c);
    return -1;
  }
  tap_rng r = tap_rng_seed(harness_seed(c->name));
  harness_fill_uniform(&c->in[0], &r, -1.0, 1.0);
  harness_fill_uniform(&c->in[1], &r, -1.0, 1.0);
  return 0;
}

int bench_case_build(const bench_problem *p, const char *text, adnn_dtype dtype, int nhwc,
                     adnn_conv2d_algorithm algorithm, harness_case *c) {
  if (p->op == BENCH_OP_GEMM) {
    harness_case_init(c, NULL, dtype, "%s", text);
    return gemm_case(p, c);
  }
  harness_desc d, fwd;
  const char *name = describe(p, nhwc, algorithm, &d, &fwd);
  /* dir=BWD_D of pooling, activations and softmax: the backward op, whose
   * descriptor points to the forward one, kept in a slot of the harness
   * that outlives the case. (describe gives the backward ops of conv and
   * xent itself; this block used to catch xent too and drop its case.) */
  if (name && p->dir == BENCH_DIR_BWD_D &&
      (p->op == BENCH_OP_POOL || p->op == BENCH_OP_ACT || p->op == BENCH_OP_SOFTMAX)) {
    const harness_desc forward_desc = d;
    memset(&d, 0, sizeof d);
    if (p->op == BENCH_OP_POOL) {
      *harness_pool2d_backward_forward(&d) = forward_desc.pool2d;
      name = "pool2d_backward";
    } else if (p->op == BENCH_OP_ACT) {
      *harness_activation_backward_forward(&d) = forward_desc.activation;
      name = "activation_backward";
    } else if (p->op == BENCH_OP_SOFTMAX) {
      *harness_softmax_backward_forward(&d) = forward_desc.softmax;
      name = "softmax_backward";
    }
  }
  const harness_op *op = name ? harness_op_find(name) : NULL;
  harness_case_init(c, op, dtype, "%s", text);
  if (!op) return -1;
  c->desc = d;
  /* A backward convolution's forward descriptor lives in the case. */
  c->forward = fwd;
  if (strcmp(name, "conv2d_backward_data") == 0)
    c->desc.conv2d_backward_data.forward = &c->forward.conv2d;
  if (strcmp(name, "conv2d_backward_weights") == 0)
    c->desc.conv2d_backward_weights.forward = &c->forward.conv2d;
  /* reorder's, quantize's and dequantize's descriptors name both dtypes
   * themselves. */
  if (p->op == BENCH_OP_REORDER || p->op == BENCH_OP_QUANTIZE || p->op == BENCH_OP_DEQUANTIZE)
    c->dtype = (adnn_dtype)p->rx_dtype;
  else op->traits->set_dtype(&c->desc, dtype);
  if (harness_case_alloc(c) != 0) return -1;
  /* matmul's residual may be y itself: the case then runs in place. */
  if (p->op == BENCH_OP_MATMUL && p->res_inplace) c->inplace = 2 + p->has_bias;
  harness_case_fill(c);
  return 0;
}
