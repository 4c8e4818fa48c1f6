/*
 * The F16/BF16 kernels of the emulated CUDA plugin against the CPU plugin, bit
 * for bit, where both compute the same correctly rounded result: t/cuda-emu.sh
 * compiles this against the library and runs it with both plugins on
 * ADNN_PLUGIN_PATH.
 *
 * doc/ops.md defines the low-precision result as the F32 (or wider) result
 * rounded once. Where that F32 result is exact or correctly rounded whatever
 * the implementation (one IEEE operation; comparisons; a double sum of
 * 16-bit values, which is exact at these sizes), two correct backends give
 * the same bits, so the comparison is exact (t/conformance compares within
 * doc/numerics.md's tolerance, which would not notice a second rounding):
 *   - binary add, sub, mul, div, max, min with alpha = beta = 1 (a scaled add
 *     may be contracted into an FMA by one compiler and not another), equal
 *     shapes and a broadcast, and mul / div scaled;
 *   - activation identity, relu, leaky_relu, clamp (no library function);
 *   - pool2d max and both averages (F64 window sums on both);
 *   - reduce sum, mean, max, min, along the contiguous dim (runs of 256: the
 *     CUDA block-per-output kernel) and across it (the thread-per-output
 *     kernel).
 * Inputs are seeded random finite values; y is poisoned with NaN on both
 * backends and every output must be finite, so an unwritten element fails.
 * Skips when either backend is not ready.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "kernels/common/float16.h"
#include "t/tap.h"

static adnn_context *ctx[2];
static const char *const backend[2] = {"cpu", "cuda"};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double uniform(void) { /* [0, 1) */
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(rng_state >> 11) / 9007199254740992.0;
}

static uint16_t to16(adnn_dtype dt, double v) {
  return dt == ADNN_DTYPE_F16 ? adnn_f64_to_f16(v) : adnn_f64_to_bf16(v);
}
static int is_nan16(adnn_dtype dt, uint16_t h) {
  return dt == ADNN_DTYPE_F16 ? (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu)
                              : (h & 0x7f80u) == 0x7f80u && (h & 0x7fu);
}

enum { MAX_ELEMS = 8192 };
static uint16_t in_a[MAX_ELEMS], in_b[MAX_ELEMS], out[2][MAX_ELEMS];

typedef adnn_status (*plan_fn)(adnn_context *ctx, const void *desc, adnn_plan **plan);

/* Plans desc on backend b with `make`, runs it on the inputs (n_in of them,
 * sizes[i] elements each) and leaves y (ny elements, NaN-poisoned first) in
 * out[b]. Returns 0 and says why on failure. */
static int run_on(int b, plan_fn make, const void *desc, int n_in, const size_t *sizes,
                  size_t ny) {
  const uint16_t *host_in[2] = {in_a, in_b};
  void *dev_in[2] = {NULL, NULL}, *dev_y = NULL;
  adnn_plan *plan = NULL;
  int good = 0;
  memset(out[b], 0xff, ny * 2);
  if (make(ctx[b], desc, &plan) != ADNN_STATUS_SUCCESS) {
    diag("%s: plan: %s", backend[b], adnn_last_error());
    return 0;
  }
  for (int i = 0; i < n_in; i++)
    if (adnn_malloc(ctx[b], sizes[i] * 2, &dev_in[i]) != ADNN_STATUS_SUCCESS ||
        adnn_memcpy(ctx[b], dev_in[i], host_in[i], sizes[i] * 2, ADNN_MEMCPY_HOST_TO_DEVICE))
      goto done;
  if (adnn_malloc(ctx[b], ny * 2, &dev_y) != ADNN_STATUS_SUCCESS ||
      adnn_memcpy(ctx[b], dev_y, out[b], ny * 2, ADNN_MEMCPY_HOST_TO_DEVICE) ||
      adnn_plan_execute(plan, (const void *const *)dev_in, n_in, dev_y) != ADNN_STATUS_SUCCESS ||
      adnn_memcpy(ctx[b], out[b], dev_y, ny * 2, ADNN_MEMCPY_DEVICE_TO_HOST))
    goto done;
  good = 1;
done:
  if (!good) diag("%s: %s", backend[b], adnn_last_error());
  for (int i = 0; i < n_in; i++) adnn_free(ctx[b], dev_in[i]);
  adnn_free(ctx[b], dev_y);
  adnn_plan_destroy(plan);
  return good;
}

/* Runs on both backends and checks y bit for bit, every element finite. */
static void compare(const char *what, adnn_dtype dt, plan_fn make, const void *desc, int n_in,
                    const size_t *sizes, size_t ny) {
  const char *dn = dt == ADNN_DTYPE_F16 ? "f16" : "bf16";
  if (!run_on(0, make, desc, n_in, sizes, ny) || !run_on(1, make, desc, n_in, sizes, ny)) {
    ok(0, "%s %s: runs on cpu and cuda", what, dn);
    return;
  }
  size_t differ = 0, nan = 0, first = ny;
  for (size_t i = 0; i < ny; i++) {
    if (is_nan16(dt, out[0][i]) || is_nan16(dt, out[1][i])) nan++;
    if (out[0][i] != out[1][i]) {
      if (first == ny) first = i;
      differ++;
    }
  }
  if (!ok(differ == 0 && nan == 0, "%s %s: cuda's %zu outputs are the cpu's bit for bit", what,
          dn, ny))
    diag("  %zu differ (first at %zu: cpu 0x%04x, cuda 0x%04x), %zu NaN", differ, first,
         first < ny ? out[0][first] : 0, first < ny ? out[1][first] : 0, nan);
}

static adnn_status make_binary(adnn_context *c, const void *d, adnn_plan **p) {
  return adnn_plan_create_binary(c, d, p);
}
static adnn_status make_activation(adnn_context *c, const void *d, adnn_plan **p) {
  return adnn_plan_create_activation(c, d, p);
}
static adnn_status make_pool2d(adnn_context *c, const void *d, adnn_plan **p) {
  return adnn_plan_create_pool2d(c, d, p);
}
static adnn_status make_reduce(adnn_context *c, const void *d, adnn_plan **p) {
  return adnn_plan_create_reduce(c, d, p);
}

static void binary_cases(adnn_dtype dt) {
  static const char *const names[6] = {"add", "sub", "mul", "div", "max", "min"};
  const int64_t full[2] = {64, 65}, row[1] = {65};
  for (int op = 0; op < 6; op++)
    for (int shape = 0; shape < 3; shape++) {
      /* 0: equal shapes; 1: b [65] broadcast along a's rows; 2: equal shapes
       * scaled (mul and div only: no addition to contract). */
      if (shape == 2 && op != ADNN_BINARY_MUL && op != ADNN_BINARY_DIV) continue;
      adnn_binary_desc d;
      adnn_binary_desc_init(&d);
      d.op = (adnn_binary_op)op;
      adnn_tensor_desc_init(&d.a, dt, 2, full);
      if (shape == 1) adnn_tensor_desc_init(&d.b, dt, 1, row);
      else d.b = d.a;
      d.y = d.a;
      if (shape == 2) d.alpha = 0.3, d.beta = 1.7;
      const size_t sizes[2] = {64 * 65, shape == 1 ? 65 : 64 * 65};
      char what[96];
      snprintf(what, sizeof what, "binary %s%s", names[op],
               shape == 1 ? " [64,65] by [65]" : shape == 2 ? " alpha 0.3 beta 1.7" : "");
      compare(what, dt, make_binary, &d, 2, sizes, 64 * 65);
    }
}

static void activation_cases(adnn_dtype dt) {
  static const struct {
    adnn_activation_kind kind;
    double alpha, beta;
    const char *name;
  } acts[] = {{ADNN_ACTIVATION_IDENTITY, 0, 0, "identity"},
              {ADNN_ACTIVATION_RELU, 0, 0, "relu"},
              {ADNN_ACTIVATION_LEAKY_RELU, 0.1, 0, "leaky_relu(0.1)"},
              {ADNN_ACTIVATION_CLAMP, -1, 2.5, "clamp(-1, 2.5)"}};
  const int64_t dims[1] = {4099}; /* vectors and a scalar tail */
  for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
    adnn_activation_desc d;
    adnn_activation_desc_init(&d);
    adnn_tensor_desc_init(&d.x, dt, 1, dims);
    d.y = d.x;
    d.activation.kind = acts[i].kind;
    d.activation.alpha = acts[i].alpha;
    d.activation.beta = acts[i].beta;
    const size_t sizes[1] = {4099};
    char what[96];
    snprintf(what, sizeof what, "activation %s", acts[i].name);
    compare(what, dt, make_activation, &d, 1, sizes, 4099);
  }
}

static void pool2d_cases(adnn_dtype dt) {
  static const char *const names[3] = {"max", "avg_include_pad", "avg_exclude_pad"};
  for (int kind = 0; kind < 3; kind++) {
    adnn_pool2d_desc d;
    adnn_pool2d_desc_init(&d);
    const int64_t xd[4] = {2, 3, 17, 19};
    int64_t yd[4];
    adnn_tensor_desc_init(&d.x, dt, 4, xd);
    d.kind = (adnn_pool_kind)kind;
    d.kernel_h = d.kernel_w = 3;
    d.stride_h = d.stride_w = 2;
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
    d.ceil_mode = 1;
    if (!ok(adnn_pool2d_output_dims(&d, yd) == ADNN_STATUS_SUCCESS, "pool2d output dims")) return;
    adnn_tensor_desc_init(&d.y, dt, 4, yd);
    const size_t sizes[1] = {2 * 3 * 17 * 19};
    char what[96];
    snprintf(what, sizeof what, "pool2d %s 3x3 s2 p1 ceil", names[kind]);
    compare(what, dt, make_pool2d, &d, 1, sizes, (size_t)(yd[0] * yd[1] * yd[2] * yd[3]));
  }
}

static void reduce_cases(adnn_dtype dt) {
  static const char *const names[4] = {"sum", "mean", "max", "min"};
  const int64_t xd[2] = {16, 256};
  for (int kind = 0; kind < 4; kind++)
    for (int axis = 0; axis < 2; axis++) {
      adnn_reduce_desc d;
      adnn_reduce_desc_init(&d);
      const int64_t yd[1] = {axis ? 16 : 256};
      adnn_tensor_desc_init(&d.x, dt, 2, xd);
      adnn_tensor_desc_init(&d.y, dt, 1, yd);
      d.kind = (adnn_reduce_kind)kind;
      d.axes = 1u << axis;
      const size_t sizes[1] = {16 * 256};
      char what[96];
      snprintf(what, sizeof what, "reduce %s over dim %d of [16,256]", names[kind], axis);
      compare(what, dt, make_reduce, &d, 1, sizes, (size_t)yd[0]);
    }
}

int main(void) {
  for (int b = 0; b < 2; b++)
    if (adnn_context_create(backend[b], &ctx[b]) != ADNN_STATUS_SUCCESS) {
      char why[600];
      snprintf(why, sizeof why, "no %s context: %s", backend[b], adnn_last_error());
      return tap_skip_all(why);
    }
  const adnn_dtype dts[2] = {ADNN_DTYPE_F16, ADNN_DTYPE_BF16};
  for (int t = 0; t < 2; t++) {
    const adnn_dtype dt = dts[t];
    /* Values in [-8, 8): sums and products stay far inside both ranges. */
    for (int i = 0; i < MAX_ELEMS; i++) {
      in_a[i] = to16(dt, (uniform() * 2 - 1) * 8);
      in_b[i] = to16(dt, (uniform() * 2 - 1) * 8);
      if (in_b[i] == 0 || in_b[i] == 0x8000u) in_b[i] = to16(dt, 0.5); /* no division by 0 */
    }
    binary_cases(dt);
    activation_cases(dt);
    pool2d_cases(dt);
    reduce_cases(dt);
  }
  for (int b = 0; b < 2; b++) adnn_context_destroy(ctx[b]);
  return tap_done();
}
