/* The training examples' CNN (examples/digits-cnn.h). */
#include "digits-cnn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digits.h"

#define MAX_TENSORS 8
#define C1 16 /* channels after the first conv */
#define C2 32 /* channels after the second conv */
#define IMG 8 /* the images are IMG x IMG */

/* Each parameter tensor starts at a multiple of 16 floats (64 bytes), so that
 * every tensor a kernel sees is as aligned as a fresh allocation's cache line. */
#define TENSOR_ALIGN 16

struct digits_cnn {
  adnn_context *ctx;
  digits_cnn_options o;

  /* Parameter tensors inside the packed buffers. */
  int n_tensors;
  const char *name[MAX_TENSORS];
  int64_t size[MAX_TENSORS];
  size_t offset[MAX_TENSORS];
  size_t total; /* floats in each packed buffer */
  float *params, *grads, *momentum;
  /* Indices into the tensors: conv weights, the per-channel vectors after each
   * hidden conv (bias without batch norm; scale and shift with it; -1 when
   * absent) and the classifier's weights and bias. */
  int w1, s1, b1, w2, s2, b2, w3, b3;

  /* Batch-norm running statistics: mean1, var1, mean2, var2. */
  float *running;
  size_t running_total;

  /* Training activations (batch B) and their gradients. Without batch norm
   * n1 and n2 alias c1 and c2 (the relu reads the conv's output). */
  float *x, *c1, *n1, *r1, *p1, *c2, *n2, *r2, *p2, *logits;
  float *saved1, *saved2; /* saved mean then saved inverse standard deviation */
  float *dlogits, *dp2, *dr2, *dc2, *dp1, *dr1, *dc1;
  int32_t *labels;
  float *dloss, *losses;

  adnn_plan *conv1, *bn1, *relu1, *pool1, *conv2, *bn2, *relu2, *pool2, *conv3, *loss;
  adnn_plan *loss_bwd, *conv3_bwd_w, *conv3_bwd_d, *pool2_bwd, *relu2_bwd, *bn2_bwd,
      *conv2_bwd_w, *conv2_bwd_d, *pool1_bwd, *relu1_bwd, *bn1_bwd, *conv1_bwd_w, *opt;

  /* Inference (batch E): batch norm with the running statistics and the relu fused. */
  float *ex, *e1, *ep1, *e2, *ep2, *elogits;
  adnn_plan *econv1, *ebn1, *epool1, *econv2, *ebn2, *epool2, *econv3;
  float *host_x, *host_logits; /* staging for evaluate */
};

void digits_cnn_check(adnn_status st, const char *call) {
  if (st == ADNN_STATUS_SUCCESS) return;
  fprintf(stderr, "digits-cnn: %s failed: %s: %s\n", call, adnn_status_name(st),
          adnn_last_error());
  exit(1);
}

static void *device_alloc(adnn_context *ctx, size_t bytes) {
  void *p;
  DIGITS_CHECK(adnn_malloc(ctx, bytes, &p));
  DIGITS_CHECK(adnn_memset(ctx, p, 0, bytes));
  return p;
}

static float *device_floats(adnn_context *ctx, size_t n) {
  return device_alloc(ctx, n * sizeof(float));
}

static adnn_tensor_desc tensor(int rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3,
                               adnn_dtype dtype) {
  adnn_tensor_desc t;
  int64_t dims[4] = {d0, d1, d2, d3};
  DIGITS_CHECK(adnn_tensor_desc_init(&t, dtype, rank, dims));
  return t;
}
static adnn_tensor_desc t4(int64_t n, int64_t c, int64_t h, int64_t w) {
  return tensor(4, n, c, h, w, ADNN_DTYPE_F32);
}
static adnn_tensor_desc t1(int64_t n) { return tensor(1, n, 0, 0, 0, ADNN_DTYPE_F32); }

static int add_tensor(digits_cnn *m, const char *name, int64_t size) {
  int i = m->n_tensors++;
  m->name[i] = name;
  m->size[i] = size;
  m->offset[i] = m->total;
  m->total += ((size_t)size + TENSOR_ALIGN - 1) / TENSOR_ALIGN * TENSOR_ALIGN;
  return i;
}

static float *param(const digits_cnn *m, int i) { return m->params + m->offset[i]; }
static float *grad(const digits_cnn *m, int i) { return m->grads + m->offset[i]; }

static adnn_conv2d_desc conv_desc(adnn_tensor_desc x, int64_t k, int64_t r, int64_t pad,
                                  int bias) {
  adnn_conv2d_desc d;
  adnn_conv2d_desc_init(&d);
  d.x = x;
  d.w = t4(k, x.dims[1], r, r);
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = pad;
  d.has_bias = bias;
  if (bias) d.bias = t1(k);
  int64_t dims[4];
  DIGITS_CHECK(adnn_conv2d_output_dims(&d, dims));
  d.y = t4(dims[0], dims[1], dims[2], dims[3]);
  return d;
}

static adnn_pool2d_desc pool_desc(adnn_tensor_desc x) {
  adnn_pool2d_desc d;
  adnn_pool2d_desc_init(&d);
  d.x = x;
  d.kind = ADNN_POOL_MAX;
  d.kernel_h = d.kernel_w = 2;
  d.stride_h = d.stride_w = 2;
  int64_t dims[4];
  DIGITS_CHECK(adnn_pool2d_output_dims(&d, dims));
  d.y = t4(dims[0], dims[1], dims[2], dims[3]);
  return d;
}

static size_t count(adnn_tensor_desc t) {
  size_t n = 1;
  for (int i = 0; i < t.rank; i++) n *= (size_t)t.dims[i];
  return n;
}

/* The plans of one hidden layer in training mode: conv, [batch norm], relu,
 * max pool, and their backward plans (backward data only when asked: the
 * first layer's input gradient is never needed). */
static void hidden_layer(digits_cnn *m, adnn_tensor_desc x, int64_t k, int need_dx,
                         adnn_tensor_desc *out, adnn_tensor_desc *conv_out, adnn_plan **conv,
                         adnn_plan **bn, adnn_plan **relu, adnn_plan **pool, adnn_plan **pool_bwd,
                         adnn_plan **relu_bwd, adnn_plan **bn_bwd, adnn_plan **conv_bwd_w,
                         adnn_plan **conv_bwd_d) {
  adnn_context *ctx = m->ctx;
  adnn_conv2d_desc cd = conv_desc(x, k, 3, 1, !m->o.batchnorm);
  DIGITS_CHECK(adnn_plan_create_conv2d(ctx, &cd, conv));
  *conv_out = cd.y;

  adnn_conv2d_backward_weights_desc bw;
  adnn_conv2d_backward_weights_desc_init(&bw);
  bw.forward = &cd;
  DIGITS_CHECK(adnn_plan_create_conv2d_backward_weights(ctx, &bw, conv_bwd_w));
  *conv_bwd_d = NULL;
  if (need_dx) {
    adnn_conv2d_backward_data_desc bd;
    adnn_conv2d_backward_data_desc_init(&bd);
    bd.forward = &cd;
    DIGITS_CHECK(adnn_plan_create_conv2d_backward_data(ctx, &bd, conv_bwd_d));
  }

  *bn = *bn_bwd = NULL;
  if (m->o.batchnorm) {
    adnn_batchnorm_desc b;
    adnn_batchnorm_desc_init(&b);
    b.x = b.y = cd.y;
    adnn_batchnorm_training_desc bt;
    adnn_batchnorm_training_desc_init(&bt); /* momentum 0.1, as PyTorch */
    bt.forward = &b;
    DIGITS_CHECK(adnn_plan_create_batchnorm_training(ctx, &bt, bn));
    adnn_batchnorm_backward_desc bb;
    adnn_batchnorm_backward_desc_init(&bb);
    bb.forward = &b;
    DIGITS_CHECK(adnn_plan_create_batchnorm_backward(ctx, &bb, bn_bwd));
  }

  adnn_activation_desc a;
  adnn_activation_desc_init(&a);
  a.x = a.y = cd.y;
  a.activation.kind = ADNN_ACTIVATION_RELU;
  DIGITS_CHECK(adnn_plan_create_activation(ctx, &a, relu));
  adnn_activation_backward_desc ab;
  adnn_activation_backward_desc_init(&ab);
  ab.forward = &a;
  DIGITS_CHECK(adnn_plan_create_activation_backward(ctx, &ab, relu_bwd));

  adnn_pool2d_desc pd = pool_desc(cd.y);
  DIGITS_CHECK(adnn_plan_create_pool2d(ctx, &pd, pool));
  adnn_pool2d_backward_desc pb;
  adnn_pool2d_backward_desc_init(&pb);
  pb.forward = &pd;
  DIGITS_CHECK(adnn_plan_create_pool2d_backward(ctx, &pb, pool_bwd));
  *out = pd.y;
}

/* The inference plans of one hidden layer: conv (relu fused when there is no
 * batch norm), batch norm with the running statistics and the relu fused,
 * max pool. */
static void eval_layer(digits_cnn *m, adnn_tensor_desc x, int64_t k, adnn_tensor_desc *out,
                       adnn_tensor_desc *conv_out, adnn_plan **conv, adnn_plan **bn,
                       adnn_plan **pool) {
  adnn_conv2d_desc cd = conv_desc(x, k, 3, 1, !m->o.batchnorm);
  if (!m->o.batchnorm) cd.activation.kind = ADNN_ACTIVATION_RELU;
  DIGITS_CHECK(adnn_plan_create_conv2d(m->ctx, &cd, conv));
  *conv_out = cd.y;
  *bn = NULL;
  if (m->o.batchnorm) {
    adnn_batchnorm_desc b;
    adnn_batchnorm_desc_init(&b);
    b.x = b.y = cd.y;
    b.activation.kind = ADNN_ACTIVATION_RELU;
    DIGITS_CHECK(adnn_plan_create_batchnorm(m->ctx, &b, bn));
  }
  adnn_pool2d_desc pd = pool_desc(cd.y);
  DIGITS_CHECK(adnn_plan_create_pool2d(m->ctx, &pd, pool));
  *out = pd.y;
}

/* Kaiming-uniform weights for layers followed by a relu (bound sqrt(6 /
 * fan_in)), 1 / sqrt(fan_in) for the classifier, zero biases and shifts,
 * unit scales; all from the seeded generator, so every machine starts alike. */
static void init_parameters(digits_cnn *m) {
  float *host = calloc(m->total, sizeof *host);
  if (host == NULL) {
    fprintf(stderr, "digits-cnn: out of memory\n");
    exit(1);
  }
  digits_rng rng = {m->o.seed};
  struct {
    int tensor;
    double bound;
  } weights[] = {{m->w1, sqrt(6.0 / 9.0)},
                 {m->w2, sqrt(6.0 / (C1 * 9.0))},
                 {m->w3, 1.0 / sqrt(C2 * 4.0)}};
  for (size_t i = 0; i < sizeof weights / sizeof weights[0]; i++) {
    float *w = host + m->offset[weights[i].tensor];
    for (int64_t j = 0; j < m->size[weights[i].tensor]; j++)
      w[j] = (float)((2.0 * digits_rng_uniform(&rng) - 1.0) * weights[i].bound);
  }
  int scales[] = {m->s1, m->s2};
  for (int i = 0; i < 2; i++) {
    if (scales[i] < 0) continue;
    for (int64_t j = 0; j < m->size[scales[i]]; j++) host[m->offset[scales[i]] + (size_t)j] = 1.0f;
  }
  DIGITS_CHECK(adnn_memcpy(m->ctx, m->params, host, m->total * sizeof *host,
                           ADNN_MEMCPY_HOST_TO_DEVICE));
  free(host);
  if (m->running_total > 0) { /* running mean 0, running variance 1 */
    float ones[2 * (C1 + C2)];
    for (int i = 0; i < C1; i++) ones[i] = 0.0f, ones[C1 + i] = 1.0f;
    for (int i = 0; i < C2; i++) ones[2 * C1 + i] = 0.0f, ones[2 * C1 + C2 + i] = 1.0f;
    DIGITS_CHECK(adnn_memcpy(m->ctx, m->running, ones, sizeof ones, ADNN_MEMCPY_HOST_TO_DEVICE));
  }
}

digits_cnn *digits_cnn_create(adnn_context *ctx, const digits_cnn_options *o) {
  digits_cnn *m = calloc(1, sizeof *m);
  if (m == NULL) {
    fprintf(stderr, "digits-cnn: out of memory\n");
    exit(1);
  }
  m->ctx = ctx;
  m->o = *o;
  const int64_t B = o->batch, E = o->eval_batch;
  const int bn = o->batchnorm;

  /* Parameter tensors, in the order the optimizer sees them. */
  m->s1 = m->b1 = m->s2 = m->b2 = -1;
  m->w1 = add_tensor(m, "conv1.weight", C1 * 1 * 3 * 3);
  if (bn) {
    m->s1 = add_tensor(m, "bn1.scale", C1);
    m->b1 = add_tensor(m, "bn1.shift", C1);
  } else {
    m->b1 = add_tensor(m, "conv1.bias", C1);
  }
  m->w2 = add_tensor(m, "conv2.weight", C2 * C1 * 3 * 3);
  if (bn) {
    m->s2 = add_tensor(m, "bn2.scale", C2);
    m->b2 = add_tensor(m, "bn2.shift", C2);
  } else {
    m->b2 = add_tensor(m, "conv2.bias", C2);
  }
  m->w3 = add_tensor(m, "fc.weight", DIGITS_CLASSES * C2 * 2 * 2);
  m->b3 = add_tensor(m, "fc.bias", DIGITS_CLASSES);
  m->params = device_floats(ctx, m->total);
  m->grads = device_floats(ctx, m->total);
  m->momentum = device_floats(ctx, m->total);
  m->running_total = bn ? 2 * (C1 + C2) : 0;
  if (bn) m->running = device_floats(ctx, m->running_total);

  /* Training plans. */
  adnn_tensor_desc x = t4(B, 1, IMG, IMG), y1, c1, y2, c2;
  adnn_plan *no_plan; /* the first layer has no backward-data plan */
  hidden_layer(m, x, C1, 0, &y1, &c1, &m->conv1, &m->bn1, &m->relu1, &m->pool1, &m->pool1_bwd,
               &m->relu1_bwd, &m->bn1_bwd, &m->conv1_bwd_w, &no_plan);
  hidden_layer(m, y1, C2, 1, &y2, &c2, &m->conv2, &m->bn2, &m->relu2, &m->pool2, &m->pool2_bwd,
               &m->relu2_bwd, &m->bn2_bwd, &m->conv2_bwd_w, &m->conv2_bwd_d);
  adnn_conv2d_desc fc = conv_desc(y2, DIGITS_CLASSES, 2, 0, 1);
  DIGITS_CHECK(adnn_plan_create_conv2d(ctx, &fc, &m->conv3));
  adnn_conv2d_backward_weights_desc fbw;
  adnn_conv2d_backward_weights_desc_init(&fbw);
  fbw.forward = &fc;
  DIGITS_CHECK(adnn_plan_create_conv2d_backward_weights(ctx, &fbw, &m->conv3_bwd_w));
  adnn_conv2d_backward_data_desc fbd;
  adnn_conv2d_backward_data_desc_init(&fbd);
  fbd.forward = &fc;
  DIGITS_CHECK(adnn_plan_create_conv2d_backward_data(ctx, &fbd, &m->conv3_bwd_d));

  /* The loss reads the classifier's [B, 10, 1, 1] output as [B, 10] logits:
   * the same packed memory. */
  adnn_softmax_cross_entropy_desc ce;
  adnn_softmax_cross_entropy_desc_init(&ce); /* mean reduction */
  ce.logits = tensor(2, B, DIGITS_CLASSES, 0, 0, ADNN_DTYPE_F32);
  ce.labels = tensor(1, B, 0, 0, 0, ADNN_DTYPE_I32);
  ce.loss = tensor(0, 0, 0, 0, 0, ADNN_DTYPE_F32);
  DIGITS_CHECK(adnn_plan_create_softmax_cross_entropy(ctx, &ce, &m->loss));
  adnn_softmax_cross_entropy_backward_desc ceb;
  adnn_softmax_cross_entropy_backward_desc_init(&ceb);
  ceb.forward = &ce;
  DIGITS_CHECK(adnn_plan_create_softmax_cross_entropy_backward(ctx, &ceb, &m->loss_bwd));

  adnn_optimizer_desc od;
  adnn_optimizer_desc_init(&od);
  od.kind = ADNN_OPTIMIZER_SGD;
  od.tensor_count = (size_t)m->n_tensors;
  od.sizes = m->size;
  od.lr = o->lr;
  od.momentum = o->momentum;
  od.weight_decay = o->weight_decay;
  DIGITS_CHECK(adnn_plan_create_optimizer(ctx, &od, &m->opt));

  /* Training buffers. */
  m->x = device_floats(ctx, count(x));
  m->c1 = device_floats(ctx, count(c1));
  m->n1 = bn ? device_floats(ctx, count(c1)) : m->c1;
  m->r1 = device_floats(ctx, count(c1));
  m->p1 = device_floats(ctx, count(y1));
  m->c2 = device_floats(ctx, count(c2));
  m->n2 = bn ? device_floats(ctx, count(c2)) : m->c2;
  m->r2 = device_floats(ctx, count(c2));
  m->p2 = device_floats(ctx, count(y2));
  m->logits = device_floats(ctx, count(fc.y));
  if (bn) {
    m->saved1 = device_floats(ctx, 2 * C1);
    m->saved2 = device_floats(ctx, 2 * C2);
  }
  m->dlogits = device_floats(ctx, count(fc.y));
  m->dp2 = device_floats(ctx, count(y2));
  m->dr2 = device_floats(ctx, count(c2));
  m->dc2 = bn ? device_floats(ctx, count(c2)) : m->dr2;
  m->dp1 = device_floats(ctx, count(y1));
  m->dr1 = device_floats(ctx, count(c1));
  m->dc1 = bn ? device_floats(ctx, count(c1)) : m->dr1;
  m->labels = device_alloc(ctx, (size_t)B * sizeof(int32_t));
  m->dloss = device_floats(ctx, 1);
  const float one = 1.0f; /* d(loss)/d(loss) */
  DIGITS_CHECK(adnn_memcpy(ctx, m->dloss, &one, sizeof one, ADNN_MEMCPY_HOST_TO_DEVICE));
  m->losses = device_floats(ctx, (size_t)(o->steps_per_epoch > 0 ? o->steps_per_epoch : 1));

  /* Inference plans and buffers. */
  adnn_tensor_desc ex = t4(E, 1, IMG, IMG), ey1, ec1, ey2, ec2;
  eval_layer(m, ex, C1, &ey1, &ec1, &m->econv1, &m->ebn1, &m->epool1);
  eval_layer(m, ey1, C2, &ey2, &ec2, &m->econv2, &m->ebn2, &m->epool2);
  adnn_conv2d_desc efc = conv_desc(ey2, DIGITS_CLASSES, 2, 0, 1);
  DIGITS_CHECK(adnn_plan_create_conv2d(ctx, &efc, &m->econv3));
  m->ex = device_floats(ctx, count(ex));
  m->e1 = device_floats(ctx, count(ec1));
  m->ep1 = device_floats(ctx, count(ey1));
  m->e2 = device_floats(ctx, count(ec2));
  m->ep2 = device_floats(ctx, count(ey2));
  m->elogits = device_floats(ctx, count(efc.y));
  m->host_x = malloc(count(ex) * sizeof *m->host_x);
  m->host_logits = malloc(count(efc.y) * sizeof *m->host_logits);
  if (m->host_x == NULL || m->host_logits == NULL) {
    fprintf(stderr, "digits-cnn: out of memory\n");
    exit(1);
  }

  init_parameters(m);
  return m;
}

void digits_cnn_destroy(digits_cnn *m) {
  if (m == NULL) return;
  adnn_plan *plans[] = {m->conv1,     m->bn1,         m->relu1,       m->pool1,     m->conv2,
                        m->bn2,       m->relu2,       m->pool2,       m->conv3,     m->loss,
                        m->loss_bwd,  m->conv3_bwd_w, m->conv3_bwd_d, m->pool2_bwd, m->relu2_bwd,
                        m->bn2_bwd,   m->conv2_bwd_w, m->conv2_bwd_d, m->pool1_bwd, m->relu1_bwd,
                        m->bn1_bwd,   m->conv1_bwd_w, m->opt,         m->econv1,    m->ebn1,
                        m->epool1,    m->econv2,      m->ebn2,        m->epool2,    m->econv3};
  for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) adnn_plan_destroy(plans[i]);
  /* The device buffers go with the context (adnn_context_destroy frees them). */
  free(m->host_x);
  free(m->host_logits);
  free(m);
}

void digits_cnn_set_batch(digits_cnn *m, const float *pixels, const int32_t *labels) {
  size_t b = (size_t)m->o.batch;
  DIGITS_CHECK(adnn_memcpy(m->ctx, m->x, pixels, b * DIGITS_PIXELS * sizeof *pixels,
                           ADNN_MEMCPY_HOST_TO_DEVICE));
  DIGITS_CHECK(adnn_memcpy(m->ctx, m->labels, labels, b * sizeof *labels,
                           ADNN_MEMCPY_HOST_TO_DEVICE));
}

/* Runs a plan with the input and output arrays ins and outs (arrays, not pointers). */
#define RUN_MULTI(plan, ins, outs)                                                            \
  DIGITS_CHECK(adnn_plan_execute_multi((plan), (ins), sizeof(ins) / sizeof((ins)[0]), (outs), \
                                       sizeof(outs) / sizeof((outs)[0])))

/* Runs a single-output plan: out = plan(inputs...). */
static void run1(adnn_plan *plan, const void *const *in, size_t n_in, void *out) {
  DIGITS_CHECK(adnn_plan_execute(plan, in, n_in, out));
}

/* One hidden layer's training forward pass: conv, [batch norm], relu, pool. */
static void forward_layer(digits_cnn *m, adnn_plan *conv, adnn_plan *bn, adnn_plan *relu,
                          adnn_plan *pool, const float *in, int w, int s, int b, float *c,
                          float *n, float *r, float *p, float *saved, int channels,
                          float *running_mean) {
  if (m->o.batchnorm) {
    run1(conv, (const void *[]){in, param(m, w)}, 2, c);
    const void *ins[] = {c, param(m, s), param(m, b)};
    void *outs[] = {n, saved, saved + channels, running_mean, running_mean + channels};
    RUN_MULTI(bn, ins, outs);
  } else {
    run1(conv, (const void *[]){in, param(m, w), param(m, b)}, 3, c);
  }
  run1(relu, (const void *[]){n}, 1, r);
  run1(pool, (const void *[]){r}, 1, p);
}

/* One hidden layer's backward pass from dp (the gradient of its pooled
 * output) to the parameter gradients and, when dx is not NULL, the gradient
 * of its input. */
static void backward_layer(digits_cnn *m, adnn_plan *pool_bwd, adnn_plan *relu_bwd,
                           adnn_plan *bn_bwd, adnn_plan *conv_bwd_w, adnn_plan *conv_bwd_d,
                           const float *in, int w, int s, int b, const float *c, const float *n,
                           const float *r, const float *p, const float *saved, int channels,
                           const float *dp, float *dr, float *dc, float *dx) {
  run1(pool_bwd, (const void *[]){r, p, dp}, 3, dr);
  run1(relu_bwd, (const void *[]){n, dr}, 2, dr); /* in place: dx may be dy */
  if (m->o.batchnorm) {
    const void *ins[] = {c, dr, param(m, s), saved, saved + channels};
    void *outs[] = {dc, grad(m, s), grad(m, b)};
    RUN_MULTI(bn_bwd, ins, outs);
    const void *wins[] = {in, dc};
    void *wouts[] = {grad(m, w)};
    RUN_MULTI(conv_bwd_w, wins, wouts);
  } else {
    const void *wins[] = {in, dc};
    void *wouts[] = {grad(m, w), grad(m, b)};
    RUN_MULTI(conv_bwd_w, wins, wouts);
  }
  if (dx != NULL) run1(conv_bwd_d, (const void *[]){dc, param(m, w)}, 2, dx);
}

void digits_cnn_forward_backward(digits_cnn *m, int slot) {
  float *run_mean1 = m->running, *run_mean2 = m->running ? m->running + 2 * C1 : NULL;
  forward_layer(m, m->conv1, m->bn1, m->relu1, m->pool1, m->x, m->w1, m->s1, m->b1, m->c1, m->n1,
                m->r1, m->p1, m->saved1, C1, run_mean1);
  forward_layer(m, m->conv2, m->bn2, m->relu2, m->pool2, m->p1, m->w2, m->s2, m->b2, m->c2, m->n2,
                m->r2, m->p2, m->saved2, C2, run_mean2);
  run1(m->conv3, (const void *[]){m->p2, param(m, m->w3), param(m, m->b3)}, 3, m->logits);
  run1(m->loss, (const void *[]){m->logits, m->labels}, 2, m->losses + slot);

  run1(m->loss_bwd, (const void *[]){m->logits, m->labels, m->dloss}, 3, m->dlogits);
  const void *fins[] = {m->p2, m->dlogits};
  void *fouts[] = {grad(m, m->w3), grad(m, m->b3)};
  RUN_MULTI(m->conv3_bwd_w, fins, fouts);
  run1(m->conv3_bwd_d, (const void *[]){m->dlogits, param(m, m->w3)}, 2, m->dp2);
  backward_layer(m, m->pool2_bwd, m->relu2_bwd, m->bn2_bwd, m->conv2_bwd_w, m->conv2_bwd_d, m->p1,
                 m->w2, m->s2, m->b2, m->c2, m->n2, m->r2, m->p2, m->saved2, C2, m->dp2, m->dr2,
                 m->dc2, m->dp1);
  backward_layer(m, m->pool1_bwd, m->relu1_bwd, m->bn1_bwd, m->conv1_bwd_w, NULL, m->x, m->w1,
                 m->s1, m->b1, m->c1, m->n1, m->r1, m->p1, m->saved1, C1, m->dp1, m->dr1, m->dc1,
                 NULL);
}

void digits_cnn_step(digits_cnn *m, double lr, int64_t step) {
  const void *ins[MAX_TENSORS];
  void *outs[2 * MAX_TENSORS];
  int t = m->n_tensors;
  for (int i = 0; i < t; i++) {
    ins[i] = grad(m, i);
    outs[i] = param(m, i);
    outs[t + i] = m->momentum + m->offset[i];
  }
  DIGITS_CHECK(adnn_plan_set_optimizer_step(m->opt, lr, step));
  DIGITS_CHECK(adnn_plan_execute_multi(m->opt, ins, (size_t)t, outs,
                                       (size_t)(m->o.momentum > 0.0 ? 2 * t : t)));
}

void digits_cnn_losses(digits_cnn *m, float *host, int n) {
  DIGITS_CHECK(adnn_memcpy(m->ctx, host, m->losses, (size_t)n * sizeof *host,
                           ADNN_MEMCPY_DEVICE_TO_HOST));
}

int digits_cnn_evaluate(digits_cnn *m, const float *pixels, const int32_t *labels, const int *idx,
                        int n) {
  const int E = m->o.eval_batch;
  const size_t image = DIGITS_PIXELS;
  int correct = 0;
  for (int start = 0; start < n; start += E) {
    int b = n - start < E ? n - start : E;
    /* A short last chunk is padded with zero images whose predictions are
     * ignored; batch norm in inference mode treats every image alone. */
    memset(m->host_x, 0, (size_t)E * image * sizeof *m->host_x);
    for (int i = 0; i < b; i++)
      memcpy(m->host_x + (size_t)i * image, pixels + (size_t)idx[start + i] * image,
             image * sizeof *pixels);
    DIGITS_CHECK(adnn_memcpy(m->ctx, m->ex, m->host_x, (size_t)E * image * sizeof *m->host_x,
                             ADNN_MEMCPY_HOST_TO_DEVICE));
    if (m->o.batchnorm) {
      float *rm1 = m->running, *rm2 = m->running + 2 * C1;
      run1(m->econv1, (const void *[]){m->ex, param(m, m->w1)}, 2, m->e1);
      run1(m->ebn1, (const void *[]){m->e1, param(m, m->s1), param(m, m->b1), rm1, rm1 + C1}, 5,
           m->e1);
      run1(m->epool1, (const void *[]){m->e1}, 1, m->ep1);
      run1(m->econv2, (const void *[]){m->ep1, param(m, m->w2)}, 2, m->e2);
      run1(m->ebn2, (const void *[]){m->e2, param(m, m->s2), param(m, m->b2), rm2, rm2 + C2}, 5,
           m->e2);
    } else {
      run1(m->econv1, (const void *[]){m->ex, param(m, m->w1), param(m, m->b1)}, 3, m->e1);
      run1(m->epool1, (const void *[]){m->e1}, 1, m->ep1);
      run1(m->econv2, (const void *[]){m->ep1, param(m, m->w2), param(m, m->b2)}, 3, m->e2);
    }
    run1(m->epool2, (const void *[]){m->e2}, 1, m->ep2);
    run1(m->econv3, (const void *[]){m->ep2, param(m, m->w3), param(m, m->b3)}, 3, m->elogits);
    DIGITS_CHECK(adnn_memcpy(m->ctx, m->host_logits, m->elogits,
                             (size_t)E * DIGITS_CLASSES * sizeof *m->host_logits,
                             ADNN_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < b; i++) {
      const float *l = m->host_logits + (size_t)i * DIGITS_CLASSES;
      int best = 0;
      for (int c = 1; c < DIGITS_CLASSES; c++)
        if (l[c] > l[best]) best = c;
      correct += best == labels[idx[start + i]];
    }
  }
  return correct;
}

float *digits_cnn_gradients(digits_cnn *m) { return m->grads; }
float *digits_cnn_parameters(digits_cnn *m) { return m->params; }
size_t digits_cnn_parameter_floats(const digits_cnn *m) { return m->total; }
float *digits_cnn_running(digits_cnn *m) { return m->running; }
size_t digits_cnn_running_floats(const digits_cnn *m) { return m->running_total; }
int digits_cnn_tensor_count(const digits_cnn *m) { return m->n_tensors; }

const char *digits_cnn_tensor(const digits_cnn *m, int i, size_t *offset, int64_t *size) {
  *offset = m->offset[i];
  *size = m->size[i];
  return m->name[i];
}

void digits_cnn_describe(const digits_cnn *m, char *buf, size_t size) {
  snprintf(buf, size,
           "forward %s, %s, %s; backward data %s, %s; backward weights %s, %s, %s",
           adnn_plan_get_algorithm(m->conv1), adnn_plan_get_algorithm(m->conv2),
           adnn_plan_get_algorithm(m->conv3), adnn_plan_get_algorithm(m->conv2_bwd_d),
           adnn_plan_get_algorithm(m->conv3_bwd_d), adnn_plan_get_algorithm(m->conv1_bwd_w),
           adnn_plan_get_algorithm(m->conv2_bwd_w), adnn_plan_get_algorithm(m->conv3_bwd_w));
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t bytes) {
  const unsigned char *p = data;
  for (size_t i = 0; i < bytes; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

uint64_t digits_cnn_hash(digits_cnn *m) {
  size_t n = m->total + m->running_total;
  float *host = malloc(n * sizeof *host);
  if (host == NULL) {
    fprintf(stderr, "digits-cnn: out of memory\n");
    exit(1);
  }
  DIGITS_CHECK(adnn_memcpy(m->ctx, host, m->params, m->total * sizeof *host,
                           ADNN_MEMCPY_DEVICE_TO_HOST));
  if (m->running_total > 0)
    DIGITS_CHECK(adnn_memcpy(m->ctx, host + m->total, m->running,
                             m->running_total * sizeof *host, ADNN_MEMCPY_DEVICE_TO_HOST));
  uint64_t h = fnv1a(0xcbf29ce484222325ull, host, n * sizeof *host);
  free(host);
  return h;
}
