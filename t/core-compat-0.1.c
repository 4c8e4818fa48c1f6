/* A program built against the public headers of adnn 0.1.0 (the frozen copy in
 * t/compat/adnn-0.1/, put first on this test's include path) runs on the
 * current library: every op's descriptor of the 0.1 layout, filled by the 0.1
 * *_init functions, creates a plan whose results match a direct computation
 * here, the 0.1 tuning options are accepted, and the 0.1 function names
 * (kept as aliases) still link. This is the "struct_size means read up to
 * here" promise of doc/versioning.md, tested with a real old layout: when a
 * descriptor grows, this program keeps its old struct_size and must still
 * work. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "t/tap.h"

#if ADNN_VERSION != 100
#error "this test must be compiled against the frozen 0.1.0 headers (t/compat/adnn-0.1)"
#endif

static adnn_context *ctx;

/* Seeded values in [-1, 1) (never all zeros or ones). */
static void fill(float *v, size_t n, unsigned seed) {
  uint32_t s = 0x12345u + seed * 7919u;
  for (size_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    v[i] = (float)((double)(s >> 8) / (double)(1u << 24) * 2.0 - 1.0);
  }
}

static adnn_tensor_desc packed(int rank, const int64_t *dims) {
  adnn_tensor_desc t;
  if (adnn_tensor_desc_init(&t, ADNN_DTYPE_F32, rank, dims) != ADNN_STATUS_SUCCESS)
    tap_bail("adnn_tensor_desc_init failed");
  return t;
}

/* Copies host data in, runs the plan, copies y out; y is poisoned with NaN
 * first so that elements the plan does not write show up. */
static int run(adnn_plan *plan, const float *const *in, const size_t *in_n, size_t n_in, float *y,
               size_t y_n) {
  void *dev[8] = {0}, *ydev = NULL;
  int good = 1;
  for (size_t i = 0; i < n_in && good; i++)
    good = adnn_malloc(ctx, in_n[i] * sizeof(float), &dev[i]) == ADNN_STATUS_SUCCESS &&
           adnn_memcpy(ctx, dev[i], in[i], in_n[i] * sizeof(float), ADNN_MEMCPY_HOST_TO_DEVICE) ==
               ADNN_STATUS_SUCCESS;
  for (size_t i = 0; i < y_n; i++) y[i] = NAN;
  good = good && adnn_malloc(ctx, y_n * sizeof(float), &ydev) == ADNN_STATUS_SUCCESS &&
         adnn_memcpy(ctx, ydev, y, y_n * sizeof(float), ADNN_MEMCPY_HOST_TO_DEVICE) ==
             ADNN_STATUS_SUCCESS;
  good = good && adnn_plan_execute(plan, (const void *const *)dev, n_in, ydev) == ADNN_STATUS_SUCCESS;
  good = good && adnn_memcpy(ctx, y, ydev, y_n * sizeof(float), ADNN_MEMCPY_DEVICE_TO_HOST) ==
                     ADNN_STATUS_SUCCESS;
  if (!good) diag("  %s: %s", adnn_status_name(adnn_last_status()), adnn_last_error());
  for (size_t i = 0; i < n_in; i++) adnn_free(ctx, dev[i]);
  adnn_free(ctx, ydev);
  return good;
}

/* max |got - want| / max(1, |want|) over n elements; NaN anywhere fails. */
static double max_err(const float *got, const double *want, size_t n) {
  double e = 0.0;
  for (size_t i = 0; i < n; i++) {
    if (isnan(got[i])) return INFINITY;
    double d = fabs(got[i] - want[i]) / (fabs(want[i]) > 1.0 ? fabs(want[i]) : 1.0);
    if (d > e) e = d;
  }
  return e;
}

static void check(const char *op, adnn_status st, adnn_plan *plan, const float *const *in,
                  const size_t *in_n, size_t n_in, const double *want, size_t y_n) {
  if (!ok(st == ADNN_STATUS_SUCCESS, "%s: a 0.1 descriptor creates a plan", op)) {
    diag("  %s: %s", adnn_status_name(st), adnn_last_error());
    return;
  }
  float *y = malloc(y_n * sizeof *y);
  if (ok(run(plan, in, in_n, n_in, y, y_n), "%s: the plan runs", op)) {
    double e = max_err(y, want, y_n);
    ok(e < 1e-5, "%s: results match the direct computation (max rel error %.2g)", op, e);
  }
  free(y);
  adnn_plan_destroy(plan);
}

static void test_conv2d(void) {
  /* x [1,3,5,5], w [4,3,3,3], pad 1, stride 1, bias, relu. */
  enum { C = 3, H = 5, W = 5, K = 4, R = 3, S = 3 };
  float x[C * H * W], w[K * C * R * S], b[K];
  fill(x, C * H * W, 1);
  fill(w, K * C * R * S, 2);
  fill(b, K, 3);
  adnn_conv2d_desc d;
  adnn_conv2d_desc_init(&d);
  const int64_t xd[4] = {1, C, H, W}, wd[4] = {K, C, R, S}, yd[4] = {1, K, H, W}, bd[1] = {K};
  d.x = packed(4, xd);
  d.w = packed(4, wd);
  d.y = packed(4, yd);
  d.bias = packed(1, bd);
  d.has_bias = 1;
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
  d.activation.kind = ADNN_ACTIVATION_RELU;
  double want[K * H * W];
  for (int k = 0; k < K; k++)
    for (int p = 0; p < H; p++)
      for (int q = 0; q < W; q++) {
        double acc = b[k];
        for (int c = 0; c < C; c++)
          for (int r = 0; r < R; r++)
            for (int s = 0; s < S; s++) {
              int h = p + r - 1, v = q + s - 1;
              if (h >= 0 && h < H && v >= 0 && v < W)
                acc += (double)x[(c * H + h) * W + v] * w[((k * C + c) * R + r) * S + s];
            }
        want[(k * H + p) * W + q] = acc > 0 ? acc : 0;
      }
  adnn_plan *plan = NULL;
  adnn_status st = adnn_plan_create_conv2d(ctx, &d, &plan);
  const float *in[3] = {x, w, b};
  const size_t n[3] = {C * H * W, K * C * R * S, K};
  check("conv2d", st, plan, in, n, 3, want, K * H * W);
}

static void test_pool2d(void) {
  enum { C = 2, H = 4, W = 6 };
  float x[C * H * W];
  fill(x, C * H * W, 4);
  adnn_pool2d_desc d;
  adnn_pool2d_desc_init(&d);
  const int64_t xd[4] = {1, C, H, W}, yd[4] = {1, C, H / 2, W / 2};
  d.x = packed(4, xd);
  d.y = packed(4, yd);
  d.kind = ADNN_POOL_MAX;
  d.kernel_h = d.kernel_w = 2;
  d.stride_h = d.stride_w = 2;
  double want[C * (H / 2) * (W / 2)];
  for (int c = 0; c < C; c++)
    for (int p = 0; p < H / 2; p++)
      for (int q = 0; q < W / 2; q++) {
        double m = -INFINITY;
        for (int r = 0; r < 2; r++)
          for (int s = 0; s < 2; s++) {
            double v = x[(c * H + 2 * p + r) * W + 2 * q + s];
            if (v > m) m = v;
          }
        want[(c * (H / 2) + p) * (W / 2) + q] = m;
      }
  adnn_plan *plan = NULL;
  adnn_status st = adnn_plan_create_pool2d(ctx, &d, &plan);
  const float *in[1] = {x};
  const size_t n[1] = {C * H * W};
  check("pool2d", st, plan, in, n, 1, want, C * (H / 2) * (W / 2));
}

static void test_activation(void) {
  enum { N = 37 };
  float x[N];
  fill(x, N, 5);
  adnn_activation_desc d;
  adnn_activation_desc_init(&d);
  const int64_t dims[1] = {N};
  d.x = d.y = packed(1, dims);
  d.activation.kind = ADNN_ACTIVATION_SIGMOID;
  double want[N];
  for (int i = 0; i < N; i++) want[i] = 1.0 / (1.0 + exp(-(double)x[i]));
  adnn_plan *plan = NULL;
  adnn_status st = adnn_plan_create_activation(ctx, &d, &plan);
  const float *in[1] = {x};
  const size_t n[1] = {N};
  check("activation", st, plan, in, n, 1, want, N);
}

static void test_softmax(void) {
  enum { R = 3, L = 7 };
  float x[R * L];
  fill(x, R * L, 6);
  adnn_softmax_desc d;
  adnn_softmax_desc_init(&d);
  const int64_t dims[2] = {R, L};
  d.x = d.y = packed(2, dims);
  double want[R * L];
  for (int r = 0; r < R; r++) {
    double m = -INFINITY, sum = 0;
    for (int i = 0; i < L; i++) m = fmax(m, x[r * L + i]);
    for (int i = 0; i < L; i++) sum += exp(x[r * L + i] - m);
    for (int i = 0; i < L; i++) want[r * L + i] = exp(x[r * L + i] - m) / sum;
  }
  adnn_plan *plan = NULL;
  adnn_status st = adnn_plan_create_softmax(ctx, &d, &plan);
  const float *in[1] = {x};
  const size_t n[1] = {R * L};
  check("softmax", st, plan, in, n, 1, want, R * L);
}

static void test_batchnorm(void) {
  enum { N = 2, C = 3, HW = 4 };
  float x[N * C * HW], scale[C], shift[C], mean[C], var[C];
  fill(x, N * C * HW, 7);
  fill(scale, C, 8);
  fill(shift, C, 9);
  fill(mean, C, 10);
  fill(var, C, 11);
  for (int c = 0; c < C; c++) var[c] = fabsf(var[c]) + 0.5f;
  adnn_batchnorm_desc d;
  adnn_batchnorm_desc_init(&d);
  const int64_t dims[3] = {N, C, HW};
  d.x = d.y = packed(3, dims);
  double want[N * C * HW];
  for (int i = 0; i < N * C * HW; i++) {
    int c = (i / HW) % C;
    want[i] = scale[c] * ((double)x[i] - mean[c]) / sqrt((double)var[c] + d.epsilon) + shift[c];
  }
  adnn_plan *plan = NULL;
  adnn_status st = adnn_plan_create_batchnorm(ctx, &d, &plan);
  const float *in[5] = {x, scale, shift, mean, var};
  const size_t n[5] = {N * C * HW, C, C, C, C};
  check("batchnorm", st, plan, in, n, 5, want, N * C * HW);
}

static void test_norm(void) {
  enum { R = 4, D = 9 };
  float x[R * D], gain[D];
  fill(x, R * D, 12);
  fill(gain, D, 13);
  adnn_norm_desc d;
  adnn_norm_desc_init(&d);
  const int64_t dims[2] = {R, D};
  d.x = d.y = packed(2, dims);
  d.has_gain = 1;
  double want[R * D];
  for (int r = 0; r < R; r++) {
    double mu = 0, var = 0;
    for (int i = 0; i < D; i++) mu += x[r * D + i];
    mu /= D;
    for (int i = 0; i < D; i++) var += (x[r * D + i] - mu) * (x[r * D + i] - mu);
    var /= D;
    for (int i = 0; i < D; i++)
      want[r * D + i] = ((double)x[r * D + i] - mu) / sqrt(var + d.epsilon) * gain[i];
  }
  adnn_plan *plan = NULL;
  adnn_status st = adnn_plan_create_norm(ctx, &d, &plan);
  const float *in[2] = {x, gain};
  const size_t n[2] = {R * D, D};
  check("norm", st, plan, in, n, 2, want, R * D);
}

static void test_binary(void) {
  enum { R = 3, L = 5 };
  float a[R * L], b[L];
  fill(a, R * L, 14);
  fill(b, L, 15);
  adnn_binary_desc d;
  adnn_binary_desc_init(&d);
  const int64_t ad[2] = {R, L}, bd[1] = {L};
  d.a = d.y = packed(2, ad);
  d.b = packed(1, bd);
  d.op = ADNN_BINARY_SUB;
  d.alpha = 2.0;
  double want[R * L];
  for (int i = 0; i < R * L; i++) want[i] = 2.0 * a[i] - b[i % L];
  adnn_plan *plan = NULL;
  adnn_status st = adnn_plan_create_binary(ctx, &d, &plan);
  const float *in[2] = {a, b};
  const size_t n[2] = {R * L, L};
  check("binary", st, plan, in, n, 2, want, R * L);
}

int main(void) {
  adnn_status st = adnn_context_create("cpu", &ctx);
  if (st != ADNN_STATUS_SUCCESS) {
    diag("%s", adnn_last_error());
    tap_bail("no cpu context");
  }
  diag("built against the adnn %s headers, running on libadnn %s", ADNN_VERSION_STRING,
       adnn_version_string());

  test_conv2d();
  test_pool2d();
  test_activation();
  test_softmax();
  test_batchnorm();
  test_norm();
  test_binary();

  /* The 0.1 output-shape helpers read the old layout too. */
  adnn_conv2d_desc cd;
  adnn_conv2d_desc_init(&cd);
  const int64_t xd[4] = {2, 3, 9, 8}, wd[4] = {5, 3, 3, 3};
  cd.x = packed(4, xd);
  cd.w = packed(4, wd);
  cd.stride_h = 2;
  int64_t dims[4] = {0};
  is_status(adnn_conv2d_output_dims(&cd, dims), ADNN_STATUS_SUCCESS,
            "adnn_conv2d_output_dims reads a 0.1 descriptor");
  ok(dims[0] == 2 && dims[1] == 5 && dims[2] == 4 && dims[3] == 6,
     "conv2d output dims are [2, 5, 4, 6] (got [%lld, %lld, %lld, %lld])", (long long)dims[0],
     (long long)dims[1], (long long)dims[2], (long long)dims[3]);

  /* The 0.1 tuning options, set and read back. */
  adnn_tune_options o;
  adnn_tune_options_init(&o);
  o.mode = ADNN_TUNE_OFF;
  o.time_budget_ms = 123.0;
  is_status(adnn_context_set_tune_options(ctx, &o), ADNN_STATUS_SUCCESS,
            "0.1 adnn_tune_options are accepted");
  adnn_tune_options back;
  memset(&back, 0, sizeof back);
  back.struct_size = sizeof back;
  is_status(adnn_context_get_tune_options(ctx, &back), ADNN_STATUS_SUCCESS,
            "0.1 adnn_tune_options are filled");
  ok(back.mode == ADNN_TUNE_OFF && back.time_budget_ms == 123.0 &&
         back.struct_size <= sizeof back,
     "the options read back are the ones set (struct_size %zu)", back.struct_size);

  /* The 0.1 names of renamed functions still link and work. */
  ok(strcmp(adnn_context_backend(ctx), "cpu") == 0, "adnn_context_backend (0.1 name) works");
  ok(adnn_context_device(ctx) == 0, "adnn_context_device (0.1 name) works");
  const char *path = NULL;
  is_status(adnn_plugin_search_path(&path, NULL), ADNN_STATUS_SUCCESS,
            "adnn_plugin_search_path (0.1 name) works");
  adnn_activation_desc ad;
  adnn_activation_desc_init(&ad);
  const int64_t n1[1] = {8};
  ad.x = ad.y = packed(1, n1);
  adnn_plan *plan = NULL;
  st = adnn_plan_create_activation(ctx, &ad, &plan);
  if (ok(st == ADNN_STATUS_SUCCESS, "an identity activation plan")) {
    ok(adnn_plan_algorithm(plan)[0] != '\0', "adnn_plan_algorithm (0.1 name) names the algorithm");
    ok(adnn_plan_workspace_bytes(plan) == 0, "adnn_plan_workspace_bytes (0.1 name) works");
    size_t count = 99;
    is_status(adnn_plan_candidate_count(plan, &count), ADNN_STATUS_SUCCESS,
              "adnn_plan_candidate_count (0.1 name) works");
    ok(count == 0, "an untuned plan has no candidates (got %zu)", count);
    ok(adnn_plan_choice_reason(plan)[0] != '\0', "adnn_plan_choice_reason (0.1 name) works");
    adnn_plan_destroy(plan);
  }

  adnn_context_destroy(ctx);
  return tap_done();
}
