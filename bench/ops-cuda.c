/*
 * Every forward DNN op on the "cuda" backend, on realistic shapes, through the
 * public adnn API only.
 *
 *   bench/ops-cuda [REPEATS]      (default 5)
 *
 * Shapes: the 3x3 and 1x1 convolutions of ResNet-50 and its 7x7/2 stem at
 * batch 32 (NCHW and NHWC); a 3x3/2 max-pool (pad 1) on 32x64x112x112;
 * batch norm + relu and relu alone on 32x64x112x112; softmax over (4096, 4096);
 * layer norm over (8192, 4096) with gain and bias; elementwise add of two
 * 256 MiB tensors. All F32, no TF32.
 *
 * First it measures the device-to-device copy bandwidth (adnn_memcpy of 1 GiB,
 * counting the read and the write), so that memory-bound ops can be reported
 * as a fraction of what the device actually moves.
 *
 * Each op: plan created once, 2 warm-up runs, then REPEATS timed batches of
 * `iters` executions followed by one synchronize; the median batch gives the
 * time per execution. Output: one line per op,
 *   RESULT op=<name> ms=<t> gflops=<g> gbs=<b> copy_frac=<f> algo=<a>
 * (gflops only for convolutions, gbs / copy_frac for memory-bound ops, where
 * bytes = one read of each input + one write of the output), then a table.
 * Exit status 0 on success, 2 when there is no usable CUDA device (a dry run
 * on a machine without a GPU), 1 on a failure.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <adnn.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static adnn_context *ctx;
static int repeats = 5;
static double copy_gbs = 0;
static int failures = 0;

typedef struct row {
  char name[64];
  double ms, gflops, gbs;
  char algo[64];
} row;
static row rows[64];
static int n_rows = 0;

static void *dev_alloc(size_t bytes) {
  void *p = NULL;
  if (adnn_malloc(ctx, bytes, &p) != ADNN_STATUS_SUCCESS) {
    fprintf(stderr, "ops-cuda: adnn_malloc(%zu): %s\n", bytes, adnn_last_error());
    return NULL;
  }
  /* 0x3c3c3c3c is about 0.0115f: finite, harmless data for every op. */
  if (adnn_memset(ctx, p, 0x3c, bytes) != ADNN_STATUS_SUCCESS) {
    fprintf(stderr, "ops-cuda: adnn_memset: %s\n", adnn_last_error());
    adnn_free(ctx, p);
    return NULL;
  }
  return p;
}

/* Times a plan: median over `repeats` batches of `iters` executions. */
static double time_plan(adnn_plan *plan, const void *const *in, size_t n_in, void *out, int iters) {
  double t[64];
  for (int i = 0; i < 2; i++)
    if (adnn_plan_execute(plan, in, n_in, out) != ADNN_STATUS_SUCCESS) return -1;
  if (adnn_context_synchronize(ctx) != ADNN_STATUS_SUCCESS) return -1;
  int reps = repeats < 64 ? repeats : 64;
  for (int r = 0; r < reps; r++) {
    double t0 = now_ms();
    for (int i = 0; i < iters; i++)
      if (adnn_plan_execute(plan, in, n_in, out) != ADNN_STATUS_SUCCESS) return -1;
    if (adnn_context_synchronize(ctx) != ADNN_STATUS_SUCCESS) return -1;
    t[r] = (now_ms() - t0) / iters;
  }
  qsort(t, (size_t)reps, sizeof t[0], cmp_double);
  return t[reps / 2];
}

static void record(const char *name, adnn_plan *plan, double ms, double flops, double bytes) {
  row *r = &rows[n_rows < 63 ? n_rows++ : 63];
  snprintf(r->name, sizeof r->name, "%s", name);
  snprintf(r->algo, sizeof r->algo, "%s", plan ? adnn_plan_algorithm(plan) : "");
  r->ms = ms;
  r->gflops = flops > 0 && ms > 0 ? flops / (ms * 1e6) : 0;
  r->gbs = bytes > 0 && ms > 0 ? bytes / (ms * 1e6) : 0;
  printf("RESULT op=%s ms=%.4f gflops=%.1f gbs=%.1f copy_frac=%.3f algo=%s\n", r->name, r->ms,
         r->gflops, r->gbs, copy_gbs > 0 && r->gbs > 0 ? r->gbs / copy_gbs : 0.0, r->algo);
  fflush(stdout);
}

static void fail(const char *name, const char *what) {
  fprintf(stderr, "ops-cuda: %s: %s failed: %s\n", name, what, adnn_last_error());
  printf("RESULT op=%s failed=\"%s: %s\"\n", name, what, adnn_last_error());
  failures++;
}

static void tensor4(adnn_tensor_desc *t, int nhwc, int64_t n, int64_t c, int64_t h, int64_t w) {
  const int64_t dims[4] = {n, c, h, w};
  if (!nhwc) {
    adnn_tensor_desc_init(t, ADNN_DTYPE_F32, 4, dims);
  } else {
    const int64_t s[4] = {h * w * c, 1, w * c, c};
    adnn_tensor_desc_init_strided(t, ADNN_DTYPE_F32, 4, dims, s);
  }
}

static size_t bytes_of(const adnn_tensor_desc *t) {
  size_t b = 0;
  adnn_tensor_desc_span_bytes(t, &b);
  return b;
}

static void bench_conv(const char *name, int nhwc, int64_t n, int64_t c, int64_t h, int64_t k,
                       int64_t r, int64_t stride, int64_t pad) {
  adnn_conv2d_desc d;
  adnn_conv2d_desc_init(&d);
  tensor4(&d.x, nhwc, n, c, h, h);
  tensor4(&d.w, nhwc, k, c, r, r);
  d.stride_h = d.stride_w = stride;
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = pad;
  int64_t yd[4];
  if (adnn_conv2d_output_dims(&d, yd) != ADNN_STATUS_SUCCESS) {
    fail(name, "adnn_conv2d_output_dims");
    return;
  }
  tensor4(&d.y, nhwc, yd[0], yd[1], yd[2], yd[3]);
  void *x = dev_alloc(bytes_of(&d.x)), *w = dev_alloc(bytes_of(&d.w)), *y = dev_alloc(bytes_of(&d.y));
  adnn_plan *plan = NULL;
  if (x && w && y && adnn_plan_create_conv2d(ctx, &d, &plan) == ADNN_STATUS_SUCCESS) {
    const void *in[2] = {x, w};
    double ms = time_plan(plan, in, 2, y, 5);
    double flops = 2.0 * (double)(yd[0] * yd[1] * yd[2] * yd[3]) * (double)(c * r * r);
    if (ms > 0) record(name, plan, ms, flops, 0);
    else fail(name, "execute");
  } else {
    fail(name, "adnn_plan_create_conv2d");
  }
  adnn_plan_destroy(plan);
  adnn_free(ctx, x), adnn_free(ctx, w), adnn_free(ctx, y);
}

static void bench_pool(void) {
  const char *name = "maxpool3x3s2_32x64x112";
  adnn_pool2d_desc d;
  adnn_pool2d_desc_init(&d);
  tensor4(&d.x, 0, 32, 64, 112, 112);
  d.kind = ADNN_POOL_MAX;
  d.kernel_h = d.kernel_w = 3;
  d.stride_h = d.stride_w = 2;
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
  int64_t yd[4];
  adnn_pool2d_output_dims(&d, yd);
  tensor4(&d.y, 0, yd[0], yd[1], yd[2], yd[3]);
  void *x = dev_alloc(bytes_of(&d.x)), *y = dev_alloc(bytes_of(&d.y));
  adnn_plan *plan = NULL;
  if (x && y && adnn_plan_create_pool2d(ctx, &d, &plan) == ADNN_STATUS_SUCCESS) {
    const void *in[1] = {x};
    double ms = time_plan(plan, in, 1, y, 10);
    if (ms > 0) record(name, plan, ms, 0, (double)(bytes_of(&d.x) + bytes_of(&d.y)));
    else fail(name, "execute");
  } else {
    fail(name, "adnn_plan_create_pool2d");
  }
  adnn_plan_destroy(plan);
  adnn_free(ctx, x), adnn_free(ctx, y);
}

static void bench_act_bn(void) {
  adnn_tensor_desc t;
  tensor4(&t, 0, 32, 64, 112, 112);
  const size_t bytes = bytes_of(&t);
  void *x = dev_alloc(bytes), *y = dev_alloc(bytes);
  void *v[4];
  for (int i = 0; i < 4; i++) v[i] = dev_alloc(64 * sizeof(float));
  if (!x || !y || !v[0] || !v[1] || !v[2] || !v[3]) {
    fail("relu/batchnorm", "allocation");
  } else {
    adnn_activation_desc a;
    adnn_activation_desc_init(&a);
    a.x = a.y = t;
    a.activation.kind = ADNN_ACTIVATION_RELU;
    adnn_plan *plan = NULL;
    if (adnn_plan_create_activation(ctx, &a, &plan) == ADNN_STATUS_SUCCESS) {
      const void *in[1] = {x};
      double ms = time_plan(plan, in, 1, y, 10);
      if (ms > 0) record("relu_32x64x112x112", plan, ms, 0, 2.0 * (double)bytes);
      else fail("relu", "execute");
    } else {
      fail("relu", "adnn_plan_create_activation");
    }
    adnn_plan_destroy(plan);
    plan = NULL;
    adnn_batchnorm_desc b;
    adnn_batchnorm_desc_init(&b);
    b.x = b.y = t;
    b.activation.kind = ADNN_ACTIVATION_RELU;
    if (adnn_plan_create_batchnorm(ctx, &b, &plan) == ADNN_STATUS_SUCCESS) {
      const void *in[5] = {x, v[0], v[1], v[2], v[3]};
      double ms = time_plan(plan, in, 5, y, 10);
      if (ms > 0) record("batchnorm_relu_32x64x112x112", plan, ms, 0, 2.0 * (double)bytes);
      else fail("batchnorm", "execute");
    } else {
      fail("batchnorm", "adnn_plan_create_batchnorm");
    }
    adnn_plan_destroy(plan);
  }
  adnn_free(ctx, x), adnn_free(ctx, y);
  for (int i = 0; i < 4; i++) adnn_free(ctx, v[i]);
}

static void bench_softmax(void) {
  const char *name = "softmax_4096x4096";
  const int64_t dims[2] = {4096, 4096};
  adnn_softmax_desc d;
  adnn_softmax_desc_init(&d);
  adnn_tensor_desc_init(&d.x, ADNN_DTYPE_F32, 2, dims);
  d.y = d.x;
  const size_t bytes = bytes_of(&d.x);
  void *x = dev_alloc(bytes), *y = dev_alloc(bytes);
  adnn_plan *plan = NULL;
  if (x && y && adnn_plan_create_softmax(ctx, &d, &plan) == ADNN_STATUS_SUCCESS) {
    const void *in[1] = {x};
    double ms = time_plan(plan, in, 1, y, 10);
    if (ms > 0) record(name, plan, ms, 0, 2.0 * (double)bytes);
    else fail(name, "execute");
  } else {
    fail(name, "adnn_plan_create_softmax");
  }
  adnn_plan_destroy(plan);
  adnn_free(ctx, x), adnn_free(ctx, y);
}

static void bench_layernorm(void) {
  const char *name = "layernorm_8192x4096";
  const int64_t dims[2] = {8192, 4096};
  adnn_norm_desc d;
  adnn_norm_desc_init(&d);
  adnn_tensor_desc_init(&d.x, ADNN_DTYPE_F32, 2, dims);
  d.y = d.x;
  d.kind = ADNN_NORM_LAYER;
  d.has_gain = d.has_bias = 1;
  const size_t bytes = bytes_of(&d.x);
  void *x = dev_alloc(bytes), *y = dev_alloc(bytes);
  void *g = dev_alloc(4096 * sizeof(float)), *b = dev_alloc(4096 * sizeof(float));
  adnn_plan *plan = NULL;
  if (x && y && g && b && adnn_plan_create_norm(ctx, &d, &plan) == ADNN_STATUS_SUCCESS) {
    const void *in[3] = {x, g, b};
    double ms = time_plan(plan, in, 3, y, 10);
    if (ms > 0) record(name, plan, ms, 0, 2.0 * (double)bytes);
    else fail(name, "execute");
  } else {
    fail(name, "adnn_plan_create_norm");
  }
  adnn_plan_destroy(plan);
  adnn_free(ctx, x), adnn_free(ctx, y), adnn_free(ctx, g), adnn_free(ctx, b);
}

static void bench_add(void) {
  const char *name = "add_2x256MiB";
  const int64_t dims[1] = {(int64_t)64 << 20}; /* 64 Mi floats = 256 MiB */
  adnn_binary_desc d;
  adnn_binary_desc_init(&d);
  adnn_tensor_desc_init(&d.a, ADNN_DTYPE_F32, 1, dims);
  d.b = d.y = d.a;
  d.op = ADNN_BINARY_ADD;
  const size_t bytes = bytes_of(&d.a);
  void *a = dev_alloc(bytes), *b = dev_alloc(bytes), *y = dev_alloc(bytes);
  adnn_plan *plan = NULL;
  if (a && b && y && adnn_plan_create_binary(ctx, &d, &plan) == ADNN_STATUS_SUCCESS) {
    const void *in[2] = {a, b};
    double ms = time_plan(plan, in, 2, y, 10);
    if (ms > 0) record(name, plan, ms, 0, 3.0 * (double)bytes);
    else fail(name, "execute");
  } else {
    fail(name, "adnn_plan_create_binary");
  }
  adnn_plan_destroy(plan);
  adnn_free(ctx, a), adnn_free(ctx, b), adnn_free(ctx, y);
}

static void measure_copy(void) {
  const size_t bytes = (size_t)1 << 30;
  void *a = dev_alloc(bytes), *b = dev_alloc(bytes);
  if (a && b) {
    double t[16];
    int reps = repeats < 16 ? repeats : 16, okc = 1;
    adnn_memcpy(ctx, b, a, bytes, ADNN_MEMCPY_DEVICE_TO_DEVICE);
    adnn_context_synchronize(ctx);
    for (int r = 0; r < reps && okc; r++) {
      double t0 = now_ms();
      okc = adnn_memcpy(ctx, b, a, bytes, ADNN_MEMCPY_DEVICE_TO_DEVICE) == ADNN_STATUS_SUCCESS &&
            adnn_context_synchronize(ctx) == ADNN_STATUS_SUCCESS;
      t[r] = now_ms() - t0;
    }
    if (okc) {
      qsort(t, (size_t)reps, sizeof t[0], cmp_double);
      copy_gbs = 2.0 * (double)bytes / (t[reps / 2] * 1e6);
      printf("RESULT op=copy_d2d_1GiB ms=%.4f gbs=%.1f (read + write)\n", t[reps / 2], copy_gbs);
    } else {
      fail("copy", "adnn_memcpy");
    }
  }
  adnn_free(ctx, a), adnn_free(ctx, b);
}

int main(int argc, char **argv) {
  if (argc > 1) repeats = atoi(argv[1]);
  if (repeats < 1) repeats = 1;
  adnn_status st = adnn_context_create("cuda", &ctx);
  if (st != ADNN_STATUS_SUCCESS) {
    printf("ops-cuda: no GPU: no usable CUDA device (%s): %s\n", adnn_status_name(st),
           adnn_last_error());
    return 2;
  }
  measure_copy();

  /* ResNet-50 at batch 32: the stem, then the 1x1 / 3x3 convs of each stage. */
  for (int nhwc = 0; nhwc < 2; nhwc++) {
    char nm[64];
#define CONV(label, c, h, k, r, s, p)                                             \
  do {                                                                            \
    snprintf(nm, sizeof nm, "conv_%s_%s", label, nhwc ? "nhwc" : "nchw");         \
    bench_conv(nm, nhwc, 32, c, h, k, r, s, p);                                   \
  } while (0)
    CONV("stem7x7s2_3to64_224", 3, 224, 64, 7, 2, 3);
    CONV("3x3_64_56", 64, 56, 64, 3, 1, 1);
    CONV("1x1_64to256_56", 64, 56, 256, 1, 1, 0);
    CONV("3x3_128_28", 128, 28, 128, 3, 1, 1);
    CONV("3x3_256_14", 256, 14, 256, 3, 1, 1);
    CONV("3x3_512_7", 512, 7, 512, 3, 1, 1);
    CONV("1x1_2048to512_7", 2048, 7, 512, 1, 1, 0);
#undef CONV
  }
  bench_pool();
  bench_act_bn();
  bench_softmax();
  bench_layernorm();
  bench_add();

  printf("\n%-34s %10s %10s %9s %8s  %s\n", "op", "ms", "GFLOP/s", "GB/s", "of copy", "algorithm");
  for (int i = 0; i < n_rows; i++) {
    const row *r = &rows[i];
    char frac[16] = "";
    if (r->gbs > 0 && copy_gbs > 0) snprintf(frac, sizeof frac, "%.0f%%", 100.0 * r->gbs / copy_gbs);
    printf("%-34s %10.4f %10.1f %9.1f %8s  %s\n", r->name, r->ms, r->gflops, r->gbs, frac, r->algo);
  }
  printf("copy bandwidth (device to device, read + write): %.1f GB/s\n", copy_gbs);
  adnn_context_destroy(ctx);
  return failures ? 1 : 0;
}
