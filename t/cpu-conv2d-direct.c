/* The CPU direct conv2d kernel (kernels/cpu/conv2d-direct.c), gemm_1x1 and
 * im2col_gemm (whose NCHW packed forms are the GEMM engine's A panels) below
 * the public API, for what the conformance harness
 * cannot reach: their weight-prepacking slots. No public call sets weights_prepacked yet, so this test plays the
 * plugin: per shape and instruction set it runs the kernel once on the
 * user's filters (weights_prepacked 0, run reorders them itself) and once on
 * the buffer pack_weights wrote (weights_prepacked 1), requires the two
 * outputs to be bit-identical, and checks the first against a double
 * oracle on seeded random data (outputs poisoned with NaN first, so an
 * unwritten element fails). Tolerance: 1e-5 relative to the sum of |terms|
 * (F32 products summed in a different order, at most a few hundred terms). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_kernels.h"
#include "t/rng.h"
#include "t/tap.h"

typedef struct shape {
  int64_t n, c, h, w, k, r, s, sh, sw, pt, pb, pl, pr, dh, dw, g;
  int nhwc, bias;
  int impl; /* the implementation: 0 direct, 1 gemm_1x1, 2 im2col_gemm */
} shape;

static const shape shapes[] = {
    /* n  c   h   w   k  r  s sh sw pt pb pl pr dh dw g nhwc bias impl */
    {2, 3, 17, 19, 20, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 0, 1, 0},
    {1, 12, 9, 11, 18, 3, 3, 1, 2, 1, 0, 2, 1, 1, 2, 3, 1, 1, 0},
    {2, 16, 7, 13, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},
    /* gemm_1x1: one image (the engine splits each GEMM over the threads),
     * Cg above the AVX2 k block (512), tile tasks with groups, and NHWC
     * (no packed form: the copy). */
    {1, 64, 14, 14, 97, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1, 1},
    {1, 1100, 7, 7, 30, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 1},
    {3, 40, 23, 29, 26, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2, 0, 1, 1},
    {2, 16, 9, 9, 20, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1},
    /* im2col_gemm: 3x3 with padding and groups, stride 2 with k above the
     * AVX2 k block (64 * 9 = 576), a 1x1 (x itself is the B operand), and
     * NHWC (no packed form: the copy). */
    {2, 12, 11, 13, 22, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 1, 2},
    {1, 64, 15, 14, 19, 3, 3, 2, 2, 1, 0, 1, 1, 1, 1, 1, 0, 0, 2},
    {1, 24, 6, 7, 33, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1, 2},
    {2, 8, 9, 9, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2},
};

/* A packed 4-d F32 descriptor [d0, d1, d2, d3], NCHW order or NHWC order. */
static adnn_tensor_desc desc4(int64_t d0, int64_t d1, int64_t d2, int64_t d3, int nhwc) {
  adnn_tensor_desc t;
  memset(&t, 0, sizeof t);
  t.dtype = ADNN_DTYPE_F32;
  t.rank = 4;
  t.dims[0] = d0, t.dims[1] = d1, t.dims[2] = d2, t.dims[3] = d3;
  if (nhwc) {
    t.strides[1] = 1, t.strides[3] = d1, t.strides[2] = d1 * d3, t.strides[0] = d1 * d2 * d3;
  } else {
    t.strides[3] = 1, t.strides[2] = d3, t.strides[1] = d2 * d3, t.strides[0] = d1 * d2 * d3;
  }
  return t;
}

static int64_t at(const adnn_tensor_desc *t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return a * t->strides[0] + b * t->strides[1] + c * t->strides[2] + d * t->strides[3];
}

static void *alloc64(size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) tap_bail("out of memory");
  return p;
}

static void check(const shape *sp, size_t index, int threads) {
  adnn_plugin_conv2d g;
  memset(&g, 0, sizeof g);
  g.struct_size = sizeof g;
  g.N = sp->n, g.C = sp->c, g.H = sp->h, g.W = sp->w, g.K = sp->k, g.R = sp->r, g.S = sp->s;
  g.groups = sp->g, g.Cg = sp->c / sp->g, g.Kg = sp->k / sp->g;
  g.stride_h = sp->sh, g.stride_w = sp->sw, g.dilation_h = sp->dh, g.dilation_w = sp->dw;
  g.pad_top = sp->pt, g.pad_bottom = sp->pb, g.pad_left = sp->pl, g.pad_right = sp->pr;
  g.P = (g.H + g.pad_top + g.pad_bottom - g.dilation_h * (g.R - 1) - 1) / g.stride_h + 1;
  g.Q = (g.W + g.pad_left + g.pad_right - g.dilation_w * (g.S - 1) - 1) / g.stride_w + 1;
  g.x = desc4(g.N, g.C, g.H, g.W, sp->nhwc);
  g.w = desc4(g.K, g.Cg, g.R, g.S, sp->nhwc); /* KRSC with NHWC, KCRS with NCHW */
  g.y = desc4(g.N, g.K, g.P, g.Q, sp->nhwc);
  g.has_bias = sp->bias;
  if (sp->bias) {
    g.bias.dtype = ADNN_DTYPE_F32;
    g.bias.rank = 1;
    g.bias.dims[0] = g.K;
    g.bias.strides[0] = 1;
  }
  g.activation.kind = ADNN_ACTIVATION_RELU;
  g.algorithm = sp->impl == 1   ? ADNN_CONV2D_ALGO_GEMM_1X1
                : sp->impl == 2 ? ADNN_CONV2D_ALGO_IM2COL_GEMM
                                : ADNN_CONV2D_ALGO_DIRECT;

  const int64_t nx = g.N * g.C * g.H * g.W, nw = g.K * g.Cg * g.R * g.S, ny = g.N * g.K * g.P * g.Q;
  float *x = alloc64((size_t)nx * 4), *w = alloc64((size_t)nw * 4), *b = alloc64((size_t)g.K * 4);
  float *y0 = alloc64((size_t)ny * 4), *y1 = alloc64((size_t)ny * 4);
  tap_rng rng = tap_rng_seed(0x5eed0000u + index);
  for (int64_t i = 0; i < nx; i++) x[i] = (float)tap_rng_uniform(&rng, -1, 1);
  for (int64_t i = 0; i < nw; i++) w[i] = (float)tap_rng_uniform(&rng, -0.5, 0.5);
  for (int64_t i = 0; i < g.K; i++) b[i] = (float)tap_rng_uniform(&rng, -0.5, 0.5);

  /* The oracle in double, and the sum of |terms| for the tolerance. */
  double *ref = alloc64((size_t)ny * 8), *mag = alloc64((size_t)ny * 8);
  for (int64_t n = 0; n < g.N; n++)
    for (int64_t k = 0; k < g.K; k++)
      for (int64_t p = 0; p < g.P; p++)
        for (int64_t q = 0; q < g.Q; q++) {
          const int64_t gr = k / g.Kg;
          double acc = sp->bias ? b[k] : 0.0, m = fabs(acc);
          for (int64_t c = 0; c < g.Cg; c++)
            for (int64_t r = 0; r < g.R; r++)
              for (int64_t s = 0; s < g.S; s++) {
                const int64_t ih = p * g.stride_h - g.pad_top + r * g.dilation_h;
                const int64_t iw = q * g.stride_w - g.pad_left + s * g.dilation_w;
                if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) continue;
                const double t = (double)x[at(&g.x, n, gr * g.Cg + c, ih, iw)] *
                                 (double)w[at(&g.w, k, c, r, s)];
                acc += t;
                m += fabs(t);
              }
          const int64_t o = at(&g.y, n, k, p, q);
          ref[o] = acc > 0 ? acc : 0.0;
          mag[o] = m;
        }

  static const char *const isa_names[ADNN_CPU_ISA_COUNT] = {"base", "avx2", "avx512"};
  const adnn_cpu_features *feat = adnn_cpu_features_get();
  const adnn_cpu_impl *impl = sp->impl == 1   ? &adnn_cpu_conv2d_gemm_1x1
                              : sp->impl == 2 ? &adnn_cpu_conv2d_im2col_gemm
                                              : &adnn_cpu_conv2d_direct;
  for (int isa = 0; isa < ADNN_CPU_ISA_COUNT; isa++) {
    const int usable = isa == ADNN_CPU_ISA_BASE     ? 1
                       : isa == ADNN_CPU_ISA_AVX2   ? feat->avx2 && feat->fma
                                                    : feat->avx512f;
    char what[120];
    snprintf(what, sizeof what, "shape %zu (%s, %s) %s", index, impl->name,
             sp->nhwc ? "nhwc" : "nchw", isa_names[isa]);
    if (!usable) {
      char why[200];
      snprintf(why, sizeof why, "%s: the CPU lacks the instruction set", what);
      tap_skip(why);
      continue;
    }
    adnn_cpu_env env = {isa, threads, feat};
    char why[128] = "";
    if (!ok(impl->supports(&g, &env, why, sizeof why), "%s: supported (%s)", what, why)) continue;
    unsigned char state0[1024], state1[1024];
    if (!ok(impl->state_size <= sizeof state0, "%s: state fits", what)) continue;
    /* Plan without prepacking: run reorders w into its workspace. */
    memset(state0, 0, sizeof state0);
    size_t ws0 = 0;
    impl->reshape(&g, &env, state0, &ws0);
    void *work0 = alloc64(ws0);
    for (int64_t i = 0; i < ny; i++) y0[i] = NAN;
    const void *in0[3] = {x, w, b};
    void *out0[1] = {y0};
    impl->run(&g, state0, in0, out0, work0);
    /* Plan with prepacking: pack once, run on the packed buffer. */
    adnn_plugin_conv2d gp = g;
    gp.weights_prepacked = 1;
    memset(state1, 0, sizeof state1);
    size_t ws1 = 0;
    impl->reshape(&gp, &env, state1, &ws1);
    /* direct reorders w into its workspace when not prepacked; the GEMM
     * paths' workspaces (pack space, columns) do not depend on it. */
    if (sp->impl)
      ok(ws1 <= ws0, "%s: prepacking does not grow the workspace (%zu <= %zu bytes)", what, ws1,
         ws0);
    else
      ok(ws1 < ws0, "%s: prepacking shrinks the workspace (%zu < %zu bytes)", what, ws1, ws0);
    size_t pbytes = impl->packed_weights_size(&gp, state1);
    /* gemm_1x1 and im2col_gemm have a packed form only in NCHW with an
     * engine microkernel (AVX2, AVX-512); elsewhere they answer 0 and the
     * plugin copies w. */
    const int own_form = !sp->impl || (!sp->nhwc && isa != ADNN_CPU_ISA_BASE);
    if (own_form)
      ok(pbytes >= (size_t)nw * 4, "%s: packed size %zu bytes", what, pbytes);
    else
      ok(pbytes == 0, "%s: no packed form of its own (%zu bytes): the plugin's copy", what,
         pbytes);
    float *packed = alloc64(pbytes ? pbytes : (size_t)nw * 4);
    if (pbytes) {
      memset(packed, 0xff, pbytes); /* NaN everywhere pack_weights does not write */
      impl->pack_weights(&gp, state1, w, packed);
    } else {
      memcpy(packed, w, (size_t)nw * 4);
    }
    void *work1 = alloc64(ws1);
    for (int64_t i = 0; i < ny; i++) y1[i] = NAN;
    const void *in1[3] = {x, packed, b};
    void *out1[1] = {y1};
    impl->run(&gp, state1, in1, out1, work1);

    int64_t bad = -1;
    double worst = 0.0;
    for (int64_t i = 0; i < ny; i++) {
      const double err = fabs((double)y0[i] - ref[i]) / (mag[i] > 1e-30 ? mag[i] : 1e-30);
      if (!(err <= 1e-5)) {
        bad = i;
        break;
      }
      if (err > worst) worst = err;
    }
    if (!ok(bad < 0, "%s: matches the double oracle (worst %.2g of the |terms| sum)", what,
            worst))
      diag("  element %lld: got %.9g, expected %.9g", (long long)bad, (double)y0[bad], ref[bad]);
    ok(memcmp(y0, y1, (size_t)ny * 4) == 0,
       "%s: prepacked weights give bit-identical results", what);
    free(work0), free(work1), free(packed);
  }
  free(x), free(w), free(b), free(y0), free(y1), free(ref), free(mag);
}

int main(void) {
  const int threads = adnn_cpu_parallel_init(2);
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) check(&shapes[i], i, threads);
  return tap_done();
}
