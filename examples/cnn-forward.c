/*
 * cnn-forward: a small convolutional network's forward pass written only
 * against the public API. It prints the backend, the median time of several
 * passes, a checksum of the class probabilities and the predicted class of each
 * image, so runs on different machines (CPU or GPU) can be compared at a glance.
 *
 * The network is NOT trained: its weights and its input images are
 * pseudo-random numbers from a fixed seed, the same on every machine. The
 * "classes" it prints are therefore meaningless as predictions (with untrained
 * weights every image tends to land on the same class with p near 0.2); they
 * only show that the ops ran and that two backends agree. The output says so.
 *
 * Network (NCHW, batch 4, 3x64x64 input):
 *   conv 3x3 3->16 (pad 1) + batch norm + relu  -> max pool 2x2/2
 *   conv 3x3 16->32 (pad 1) + bias + relu (fused) -> max pool 3x3/2 (pad 1)
 *   conv 1x1 32->64 + bias + relu (fused)
 *   depthwise conv 3x3 64 (pad 1) + bias + silu (fused)
 *   global average pool (16x16) -> [4, 64]
 *   classifier: GEMM [4,64] x [64,10] + bias (broadcast add) -> softmax
 *
 * usage: cnn-forward [backend]     (default: auto)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <adnn.h>

#define BATCH 4
#define CLASSES 10

#define CHECK(call)                                                                      \
  do {                                                                                   \
    adnn_status st_ = (call);                                                            \
    if (st_ != ADNN_STATUS_SUCCESS) {                                                    \
      fprintf(stderr, "cnn-forward: %s failed: %s: %s\n", #call, adnn_status_name(st_),  \
              adnn_last_error());                                                        \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

static adnn_context *ctx;

/* A deterministic pseudo-random sequence so every run and machine agrees. */
static unsigned lcg_state = 2024u;
static float lcg_uniform(float scale) {
  lcg_state = lcg_state * 1664525u + 1013904223u;
  return scale * ((float)((lcg_state >> 8) & 0xffff) / 32768.0f - 1.0f);
}

/* Allocates device memory for n floats filled with deterministic values. */
static float *device_random(size_t n, float scale, float offset) {
  float *host = malloc(n * sizeof *host);
  if (host == NULL) exit(1);
  for (size_t i = 0; i < n; i++) host[i] = offset + lcg_uniform(scale);
  void *dev;
  CHECK(adnn_malloc(ctx, n * sizeof *host, &dev));
  CHECK(adnn_memcpy(ctx, dev, host, n * sizeof *host, ADNN_MEMCPY_HOST_TO_DEVICE));
  free(host);
  return dev;
}

static float *device_buffer(size_t n) {
  void *dev;
  CHECK(adnn_malloc(ctx, n * sizeof(float), &dev));
  return dev;
}

static adnn_tensor_desc tensor4(int64_t n, int64_t c, int64_t h, int64_t w) {
  adnn_tensor_desc t;
  int64_t dims[4] = {n, c, h, w};
  CHECK(adnn_tensor_desc_init(&t, ADNN_DTYPE_F32, 4, dims));
  return t;
}

static adnn_tensor_desc tensor1(int64_t n) {
  adnn_tensor_desc t;
  CHECK(adnn_tensor_desc_init(&t, ADNN_DTYPE_F32, 1, &n));
  return t;
}

static adnn_plan *conv_plan(adnn_tensor_desc x, int64_t k, int64_t r, int64_t pad, int64_t groups,
                            int bias, adnn_activation_kind act, adnn_tensor_desc *y) {
  adnn_conv2d_desc d;
  adnn_conv2d_desc_init(&d);
  d.x = x;
  d.w = tensor4(k, x.dims[1] / groups, r, r);
  d.groups = groups;
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = pad;
  d.has_bias = bias;
  if (bias) d.bias = tensor1(k);
  d.activation.kind = act;
  int64_t dims[4];
  CHECK(adnn_conv2d_output_dims(&d, dims));
  d.y = tensor4(dims[0], dims[1], dims[2], dims[3]);
  *y = d.y;
  adnn_plan *p;
  CHECK(adnn_plan_create_conv2d(ctx, &d, &p));
  return p;
}

static adnn_plan *pool_plan(adnn_tensor_desc x, adnn_pool_kind kind, int64_t k, int64_t s,
                            int64_t pad, adnn_tensor_desc *y) {
  adnn_pool2d_desc d;
  adnn_pool2d_desc_init(&d);
  d.x = x;
  d.kind = kind;
  d.kernel_h = d.kernel_w = k;
  d.stride_h = d.stride_w = s;
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = pad;
  int64_t dims[4];
  CHECK(adnn_pool2d_output_dims(&d, dims));
  d.y = tensor4(dims[0], dims[1], dims[2], dims[3]);
  *y = d.y;
  adnn_plan *p;
  CHECK(adnn_plan_create_pool2d(ctx, &d, &p));
  return p;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  const char *backend = argc > 1 ? argv[1] : "auto";
  CHECK(adnn_context_create(backend, &ctx));

  /* Plans: all shapes, algorithms and workspaces are fixed here, once. */
  adnn_tensor_desc x0 = tensor4(BATCH, 3, 64, 64), t1, t2, t3, t4, t5, t6, t7, t8;
  adnn_plan *conv1 = conv_plan(x0, 16, 3, 1, 1, 0, ADNN_ACTIVATION_IDENTITY, &t1);
  adnn_batchnorm_desc bn;
  adnn_batchnorm_desc_init(&bn);
  bn.x = bn.y = t1;
  bn.activation.kind = ADNN_ACTIVATION_RELU;
  adnn_plan *bn1;
  CHECK(adnn_plan_create_batchnorm(ctx, &bn, &bn1));
  adnn_plan *pool1 = pool_plan(t1, ADNN_POOL_MAX, 2, 2, 0, &t2);
  adnn_plan *conv2 = conv_plan(t2, 32, 3, 1, 1, 1, ADNN_ACTIVATION_RELU, &t3);
  adnn_plan *pool2 = pool_plan(t3, ADNN_POOL_MAX, 3, 2, 1, &t4);
  adnn_plan *conv3 = conv_plan(t4, 64, 1, 0, 1, 1, ADNN_ACTIVATION_RELU, &t5);
  adnn_plan *conv4 = conv_plan(t5, 64, 3, 1, 64, 1, ADNN_ACTIVATION_SILU, &t6);
  adnn_plan *gap = pool_plan(t6, ADNN_POOL_AVG_EXCLUDE_PAD, t6.dims[2], 1, 0, &t7);
  /* The classifier: logits[4,10] = features[4,64] x fc[64,10] (GEMM), then a
   * broadcast add of the bias [10] and a softmax over the classes. */
  int64_t ldims[2] = {BATCH, CLASSES};
  adnn_binary_desc add;
  adnn_binary_desc_init(&add);
  CHECK(adnn_tensor_desc_init(&add.a, ADNN_DTYPE_F32, 2, ldims));
  add.b = tensor1(CLASSES);
  add.y = add.a;
  add.op = ADNN_BINARY_ADD;
  adnn_plan *bias_add;
  CHECK(adnn_plan_create_binary(ctx, &add, &bias_add));
  adnn_softmax_desc sm;
  adnn_softmax_desc_init(&sm);
  sm.x = sm.y = add.a;
  sm.axis = 1;
  adnn_plan *softmax;
  CHECK(adnn_plan_create_softmax(ctx, &sm, &softmax));
  t8 = add.a;

  /* Weights and activations. Batch-norm variances are positive. */
  size_t n0 = (size_t)(BATCH * 3 * 64 * 64);
  float *x = device_random(n0, 1.0f, 0.0f);
  float *w1 = device_random(16 * 3 * 9, 0.3f, 0.0f);
  float *bn_scale = device_random(16, 0.2f, 1.0f), *bn_shift = device_random(16, 0.1f, 0.0f);
  float *bn_mean = device_random(16, 0.1f, 0.0f), *bn_var = device_random(16, 0.2f, 1.0f);
  float *w2 = device_random(32 * 16 * 9, 0.1f, 0.0f), *b2 = device_random(32, 0.1f, 0.0f);
  float *w3 = device_random(64 * 32, 0.2f, 0.0f), *b3 = device_random(64, 0.1f, 0.0f);
  float *w4 = device_random(64 * 9, 0.3f, 0.0f), *b4 = device_random(64, 0.1f, 0.0f);
  float *fc = device_random(64 * CLASSES, 3.0f, 0.0f), *fcb = device_random(CLASSES, 0.1f, 0.0f);
  float *a1 = device_buffer((size_t)(t1.dims[0] * t1.dims[1] * t1.dims[2] * t1.dims[3]));
  float *a2 = device_buffer((size_t)(t2.dims[0] * t2.dims[1] * t2.dims[2] * t2.dims[3]));
  float *a3 = device_buffer((size_t)(t3.dims[0] * t3.dims[1] * t3.dims[2] * t3.dims[3]));
  float *a4 = device_buffer((size_t)(t4.dims[0] * t4.dims[1] * t4.dims[2] * t4.dims[3]));
  float *a5 = device_buffer((size_t)(t5.dims[0] * t5.dims[1] * t5.dims[2] * t5.dims[3]));
  float *a6 = device_buffer((size_t)(t6.dims[0] * t6.dims[1] * t6.dims[2] * t6.dims[3]));
  float *a7 = device_buffer((size_t)(t7.dims[0] * t7.dims[1]));
  float *logits = device_buffer((size_t)(t8.dims[0] * t8.dims[1]));

  enum { RUNS = 7 };
  double times[RUNS + 1];
  for (int run = 0; run <= RUNS; run++) { /* run 0 is the warm-up */
    double t0 = now_seconds();
    CHECK(adnn_plan_execute(conv1, (const void *[]){x, w1}, 2, a1));
    CHECK(adnn_plan_execute(bn1, (const void *[]){a1, bn_scale, bn_shift, bn_mean, bn_var}, 5, a1));
    CHECK(adnn_plan_execute(pool1, (const void *[]){a1}, 1, a2));
    CHECK(adnn_plan_execute(conv2, (const void *[]){a2, w2, b2}, 3, a3));
    CHECK(adnn_plan_execute(pool2, (const void *[]){a3}, 1, a4));
    CHECK(adnn_plan_execute(conv3, (const void *[]){a4, w3, b3}, 3, a5));
    CHECK(adnn_plan_execute(conv4, (const void *[]){a5, w4, b4}, 3, a6));
    CHECK(adnn_plan_execute(gap, (const void *[]){a6}, 1, a7));
    CHECK(adnn_gemm(ctx, ADNN_DTYPE_F32, ADNN_NO_TRANS, ADNN_NO_TRANS, BATCH, CLASSES, 64, 1.0,
                    a7, 64, fc, CLASSES, 0.0, logits, CLASSES));
    CHECK(adnn_plan_execute(bias_add, (const void *[]){logits, fcb}, 2, logits));
    CHECK(adnn_plan_execute(softmax, (const void *[]){logits}, 1, logits));
    CHECK(adnn_context_synchronize(ctx));
    times[run] = now_seconds() - t0;
  }
  qsort(times + 1, RUNS, sizeof times[0], compare_doubles);

  float probs[BATCH * CLASSES];
  CHECK(adnn_memcpy(ctx, probs, logits, sizeof probs, ADNN_MEMCPY_DEVICE_TO_HOST));
  double checksum = 0.0;
  for (int i = 0; i < BATCH * CLASSES; i++) checksum += (double)probs[i] * (double)((i % 7) + 1);
  printf("adnn %s: cnn-forward on backend %s: batch %d, median %.3f ms per pass, checksum %.6f\n",
         adnn_version_string(), adnn_context_get_backend(ctx), BATCH, times[1 + RUNS / 2] * 1e3,
         checksum);
  printf("  weights and images are pseudo-random (fixed seed, untrained network): the classes\n"
         "  below are not predictions, they only let runs on different machines be compared\n");
  printf("  conv algorithms: %s, %s, %s, %s\n", adnn_plan_get_algorithm(conv1),
         adnn_plan_get_algorithm(conv2), adnn_plan_get_algorithm(conv3), adnn_plan_get_algorithm(conv4));
  int bad = 0;
  for (int b = 0; b < BATCH; b++) {
    int best = 0;
    double sum = 0.0;
    for (int c = 0; c < CLASSES; c++) {
      sum += probs[b * CLASSES + c];
      if (probs[b * CLASSES + c] > probs[b * CLASSES + best]) best = c;
    }
    printf("  image %d: class %d (p = %.4f), probabilities sum to %.6f\n", b, best,
           probs[b * CLASSES + best], sum);
    if (!(sum > 0.999 && sum < 1.001)) bad = 1;
  }

  adnn_plan *plans[] = {conv1, bn1, pool1, conv2, pool2, conv3, conv4, gap, bias_add, softmax};
  for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) adnn_plan_destroy(plans[i]);
  /* adnn_context_destroy frees every buffer still allocated on the context. */
  adnn_context_destroy(ctx);
  if (bad) fprintf(stderr, "cnn-forward: probabilities do not sum to 1\n");
  return bad;
}
