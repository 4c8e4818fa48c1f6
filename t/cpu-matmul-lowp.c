/* The CPU plugin's two F16/BF16 matmul implementations below the public API
 * (kernels/cpu/matmul_lowp.c): widen_sgemm (a and b widened whole, then the
 * plugin's SGEMM with the epilogue in its store hook or, behind OpenBLAS, as
 * a pass on the pool) and lowp (tiled blocks that widen while packing). The
 * plugin's own choice takes one of them per shape (widen_sgemm only where the
 * SGEMM dispatcher would run OpenBLAS, sides >= 512), so the conformance
 * harness, which runs the plugin's choice on smaller shapes, reaches lowp
 * alone; this test runs both on every case, at every instruction set this
 * CPU has, including the layouts, epilogues, batches and the OpenBLAS branch
 * that only large shapes take.
 *
 * Each result is checked element by element against a double oracle on the
 * same (already 16-bit) inputs with doc/numerics.md's bound for F16/BF16
 * inputs with F32 accumulation:
 *   |y - v| <= L (|alpha| gamma_K(2^-24) sum_k |a||b| + epi) + u_y (|v| + that)
 *              + tiny
 * with L = 1.5 (the activations used here are at most that steep), epi the
 * F32 epilogue's own error (doc/numerics.md: 2^-22 of |alpha s| + |bias| +
 * |rs r| for the roundings of its three additions and alpha's product, plus
 * 1e-5 (1 + |v|), the activation op's F32 bound, under an activation), u_y
 * the unit roundoff of y's dtype and tiny half the smallest F16 subnormal for
 * an F16 y. y is poisoned first (a NaN pattern no conversion produces), so an
 * unwritten element fails; a NaN the oracle expects must be a NaN other than
 * the poison. Data are seeded random values in [-1, 1]. widen_sgemm is run
 * twice and must give the same bits (determinism), and it must refuse what
 * it does not run: integer inputs, an instruction set without the engine,
 * a problem whose F32 copies would exceed its workspace cap. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/float16.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm.h"
#include "kernels/ref/ref.h"
#include "t/rng.h"
#include "t/tap.h"

#define F32 ADNN_DTYPE_F32
#define F16 ADNN_DTYPE_F16
#define BF16 ADNN_DTYPE_BF16

enum store { ROW = 0, TRANS = 1, STRIDED = 2 };

typedef struct mm_case {
  const char *name;
  int64_t b0, b1, M, N, K;
  enum store sa, sb, sy;
  int b_shared;         /* b's batch strides 0 */
  adnn_dtype in, out;   /* a and b's dtype, y's */
  int bias;             /* 0 none, 1 packed, 3 stride 3 */
  int res;              /* 0 none, 1 separate, 2 r is y */
  double alpha, rs;
  adnn_activation_kind act;
  int specials;         /* NaN and infinities in a */
  int openblas;         /* the dispatcher may hand the product to OpenBLAS */
} mm_case;

static const mm_case cases[] = {
    {"plain f16->f16", 1, 1, 67, 45, 300, ROW, ROW, ROW, 0, F16, F16, 0, 0, 1, 1,
     ADNN_ACTIVATION_IDENTITY, 0, 0},
    {"plain bf16->f32 (C is y)", 1, 1, 67, 45, 300, ROW, ROW, ROW, 0, BF16, F32, 0, 0, 1, 1,
     ADNN_ACTIVATION_IDENTITY, 0, 0},
    {"bf16->f32 bias r gelu alpha 0.5 rs -0.75", 1, 1, 67, 45, 300, ROW, ROW, ROW, 0, BF16,
     F32, 1, 1, 0.5, -0.75, ADNN_ACTIVATION_GELU, 0, 0},
    {"f16->f32 r=y relu", 1, 1, 130, 129, 131, ROW, ROW, ROW, 0, F16, F32, 1, 2, 1, 0.5,
     ADNN_ACTIVATION_RELU, 0, 0},
    {"f16->bf16 r=y a^T b^T y^T bias/3", 1, 1, 70, 90, 110, TRANS, TRANS, TRANS, 0, F16, BF16,
     3, 2, 1, 1, ADNN_ACTIVATION_IDENTITY, 0, 0},
    {"bf16->bf16 a^T", 1, 1, 33, 257, 65, TRANS, ROW, ROW, 0, BF16, BF16, 0, 0, 1, 1,
     ADNN_ACTIVATION_IDENTITY, 0, 0},
    {"f16->f16 gathered a, b, y", 1, 1, 41, 23, 37, STRIDED, STRIDED, STRIDED, 0, F16, F16, 1,
     0, 1, 1, ADNN_ACTIVATION_IDENTITY, 0, 0},
    {"bf16->bf16 batch 2x3, b shared, silu", 2, 3, 29, 31, 77, ROW, TRANS, ROW, 1, BF16, BF16,
     1, 1, 1, 1, ADNN_ACTIVATION_SILU, 0, 0},
    {"f16->f32 batch 3x1, b per matrix, b^T", 3, 1, 20, 70, 50, ROW, TRANS, ROW, 0, F16, F32, 0,
     0, 2, 1, ADNN_ACTIVATION_IDENTITY, 0, 0},
    {"f16->f16 alpha 0 with NaN in a (unread)", 1, 1, 9, 13, 11, ROW, ROW, ROW, 0, F16, F16, 1,
     1, 0, 1, ADNN_ACTIVATION_IDENTITY, 1, 0},
    {"bf16->f32 NaN and infinities propagate", 1, 1, 9, 13, 11, ROW, ROW, ROW, 0, BF16, F32, 1,
     0, 1, 1, ADNN_ACTIVATION_IDENTITY, 1, 0},
    {"f16->f16 one row, one column", 1, 1, 1, 1, 200, ROW, TRANS, ROW, 0, F16, F16, 0, 0, 1, 1,
     ADNN_ACTIVATION_IDENTITY, 0, 0},
    {"bf16->bf16 OpenBLAS branch, bias gelu", 1, 1, 520, 512, 512, ROW, TRANS, ROW, 0, BF16,
     BF16, 1, 0, 1, 1, ADNN_ACTIVATION_GELU, 0, 1},
    {"f16->f16 OpenBLAS branch, plain", 1, 1, 512, 515, 512, ROW, ROW, ROW, 0, F16, F16, 0, 0,
     1, 1, ADNN_ACTIVATION_IDENTITY, 0, 1},
    {"bf16->f32 OpenBLAS branch, C is y", 1, 1, 512, 512, 530, TRANS, ROW, ROW, 0, BF16, F32, 0,
     0, 1, 1, ADNN_ACTIVATION_IDENTITY, 0, 1},
};

static size_t dsize(adnn_dtype t) { return t == F32 ? 4 : 2; }

static double unit_roundoff(adnn_dtype t) {
  return t == F16 ? 0x1p-11 : t == BF16 ? 0x1p-8 : 0x1p-24;
}

/* A [b0, b1, R, S] operand stored as `st` (batch strides 0 when shared);
 * *span is the number of elements its buffer needs. */
static adnn_tensor_desc operand(adnn_dtype t, const mm_case *c, int64_t R, int64_t S,
                                enum store st, int shared, int64_t *span) {
  adnn_tensor_desc d;
  memset(&d, 0, sizeof d);
  d.dtype = t;
  d.rank = 4;
  d.dims[0] = c->b0, d.dims[1] = c->b1, d.dims[2] = R, d.dims[3] = S;
  const int64_t per = st == STRIDED ? 4 * R * S : R * S;
  if (st == ROW) d.strides[2] = S, d.strides[3] = 1;
  if (st == TRANS) d.strides[2] = 1, d.strides[3] = R;
  if (st == STRIDED) d.strides[2] = 4 * S, d.strides[3] = 2;
  d.strides[1] = shared ? 0 : per;
  d.strides[0] = shared ? 0 : per * c->b1;
  *span = 1;
  for (int i = 0; i < 4; i++) *span += (d.dims[i] - 1) * d.strides[i];
  return d;
}

static double load(const void *base, adnn_dtype t, int64_t i) {
  if (t == F16) return adnn_f16_to_f64(((const uint16_t *)base)[i]);
  if (t == BF16) return adnn_bf16_to_f64(((const uint16_t *)base)[i]);
  return ((const float *)base)[i];
}

static void store(void *base, adnn_dtype t, int64_t i, double v) {
  if (t == F16)
    ((uint16_t *)base)[i] = adnn_f64_to_f16(v);
  else if (t == BF16)
    ((uint16_t *)base)[i] = adnn_f64_to_bf16(v);
  else
    ((float *)base)[i] = (float)v;
}

/* The poison of y: a signalling-NaN pattern, which the converters (which
 * quiet every NaN) never produce. */
static void poison(void *y, adnn_dtype t, int64_t span) {
  for (int64_t i = 0; i < span; i++) {
    if (t == F32)
      ((uint32_t *)y)[i] = 0x7fa0dead;
    else
      ((uint16_t *)y)[i] = t == F16 ? 0x7d5b : 0x7f81;
  }
}

static int is_poison(const void *y, adnn_dtype t, int64_t i) {
  if (t == F32) return ((const uint32_t *)y)[i] == 0x7fa0dead;
  return ((const uint16_t *)y)[i] == (t == F16 ? 0x7d5b : 0x7f81);
}

static void *alloc64(size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) tap_bail("out of memory");
  return p;
}

typedef struct prepared {
  adnn_plugin_matmul p;
  int64_t span_a, span_b, span_y;
  void *a, *b, *r; /* r: a separate residual, or the initial y for r = y */
  float *bias;
  double *want, *bound; /* per element of y's buffer (span_y) */
  char *member;         /* 1 where the buffer holds an element of y */
} prepared;

static void prepare(const mm_case *c, prepared *q) {
  memset(q, 0, sizeof *q);
  adnn_plugin_matmul *p = &q->p;
  p->struct_size = sizeof *p;
  p->batch0 = c->b0, p->batch1 = c->b1, p->M = c->M, p->N = c->N, p->K = c->K;
  p->a = operand(c->in, c, c->M, c->K, c->sa, 0, &q->span_a);
  p->b = operand(c->in, c, c->K, c->N, c->sb, c->b_shared, &q->span_b);
  p->y = operand(c->out, c, c->M, c->N, c->sy, 0, &q->span_y);
  p->alpha = c->alpha;
  p->residual_scale = c->rs;
  p->activation.kind = c->act;
  p->requant_scale = 1.0;
  tap_rng rng = tap_rng_seed(0x10f0 + (uint64_t)(c - cases));
  q->a = alloc64((size_t)q->span_a * 2);
  q->b = alloc64((size_t)q->span_b * 2);
  for (int64_t i = 0; i < q->span_a; i++) store(q->a, c->in, i, tap_rng_uniform(&rng, -1, 1));
  for (int64_t i = 0; i < q->span_b; i++) store(q->b, c->in, i, tap_rng_uniform(&rng, -1, 1));
  if (c->specials) {
    /* A NaN, +inf and -inf in the first three rows of a. */
    const double sp[3] = {NAN, INFINITY, -INFINITY};
    for (int k = 0; k < 3 && k < c->M; k++) store(q->a, c->in, k * p->a.strides[2] + k % c->K * p->a.strides[3], sp[k]);
  }
  if (c->bias) {
    p->has_bias = 1;
    memset(&p->bias, 0, sizeof p->bias);
    p->bias.dtype = F32;
    p->bias.rank = 1;
    p->bias.dims[0] = c->N;
    p->bias.strides[0] = c->bias;
    q->bias = alloc64((size_t)(c->N * c->bias) * 4);
    for (int64_t i = 0; i < c->N * c->bias; i++) q->bias[i] = (float)tap_rng_uniform(&rng, -1, 1);
  }
  if (c->res) {
    p->has_residual = 1;
    int64_t span_r;
    p->residual = c->res == 2 ? p->y : operand(c->out, c, c->M, c->N, ROW, 0, &span_r);
    if (c->res == 2) span_r = q->span_y;
    q->r = alloc64((size_t)span_r * dsize(c->out));
    for (int64_t i = 0; i < span_r; i++) store(q->r, c->out, i, tap_rng_uniform(&rng, -1, 1));
  }
  /* The oracle, on the inputs as stored. */
  q->want = malloc(sizeof(double) * (size_t)q->span_y);
  q->bound = malloc(sizeof(double) * (size_t)q->span_y);
  q->member = calloc((size_t)q->span_y, 1);
  if (!q->want || !q->bound || !q->member) tap_bail("out of memory");
  const int64_t *sa = p->a.strides, *sb = p->b.strides, *sy = p->y.strides;
  const int64_t *sr = p->residual.strides;
  const double ku = (double)c->K * 0x1p-24, gamma = ku / (1.0 - ku), uy = unit_roundoff(c->out);
  for (int64_t x0 = 0; x0 < c->b0; x0++)
    for (int64_t x1 = 0; x1 < c->b1; x1++)
      for (int64_t i = 0; i < c->M; i++)
        for (int64_t j = 0; j < c->N; j++) {
          double s = 0.0, mag = 0.0;
          if (c->alpha != 0.0)
            for (int64_t k = 0; k < c->K; k++) {
              const double t = load(q->a, c->in, x0 * sa[0] + x1 * sa[1] + i * sa[2] + k * sa[3]) *
                               load(q->b, c->in, x0 * sb[0] + x1 * sb[1] + k * sb[2] + j * sb[3]);
              s += t;
              mag += fabs(t);
            }
          double v = c->alpha * s, terms = fabs(v);
          if (c->bias) v += q->bias[j * c->bias], terms += fabs(q->bias[j * c->bias]);
          if (c->res) {
            const double t =
                c->rs * load(q->r, c->out, x0 * sr[0] + x1 * sr[1] + i * sr[2] + j * sr[3]);
            v += t;
            terms += fabs(t);
          }
          v = adnn_ref_activation_apply(&p->activation, v);
          double epi = 0x1p-22 * terms;
          if (c->act != ADNN_ACTIVATION_IDENTITY) epi += 1e-5 * (1.0 + fabs(v));
          const double acc = 1.5 * (fabs(c->alpha) * gamma * mag + epi);
          const int64_t o = x0 * sy[0] + x1 * sy[1] + i * sy[2] + j * sy[3];
          q->want[o] = v;
          q->member[o] = 1;
          q->bound[o] = acc + uy * (fabs(v) + acc) + (c->out == F16 ? 0x1p-25 : 0.0);
        }
}

static void release(prepared *q) {
  free(q->a);
  free(q->b);
  free(q->r);
  free(q->bias);
  free(q->want);
  free(q->bound);
  free(q->member);
}

/* Runs impl once into a fresh y; returns y (the caller frees it) or NULL when
 * unsupported (reported). */
static void *run_impl(const adnn_cpu_impl *impl, const prepared *q, const mm_case *c,
                      const adnn_cpu_env *env, const char *what) {
  char why[200] = "";
  if (!ok(impl->supports(&q->p, env, why, sizeof why), "%s: supported (%s)", what, why))
    return NULL;
  unsigned char state[512];
  if (!ok(impl->state_size <= sizeof state, "%s: state fits", what)) return NULL;
  memset(state, 0, sizeof state);
  size_t ws = 0;
  impl->reshape(&q->p, env, state, &ws);
  void *work = ws ? alloc64(ws) : NULL;
  void *y = alloc64((size_t)q->span_y * dsize(c->out));
  if (c->res == 2)
    memcpy(y, q->r, (size_t)q->span_y * dsize(c->out));
  else
    poison(y, c->out, q->span_y);
  const void *in[4];
  int n = 0;
  in[n++] = q->a;
  in[n++] = q->b;
  if (c->bias) in[n++] = q->bias;
  if (c->res) in[n++] = c->res == 2 ? y : q->r;
  void *out[1] = {y};
  impl->run(&q->p, state, in, out, work);
  free(work);
  return y;
}

static void check_case(const mm_case *c, const adnn_cpu_env *env, const char *isa_name) {
  prepared q;
  prepare(c, &q);
  const adnn_cpu_impl *impls[2] = {&adnn_cpu_matmul_widen_sgemm, &adnn_cpu_matmul_lowp};
  adnn_cpu_sgemm_set_openblas_fast(c->openblas);
  for (int m = 0; m < 2; m++) {
    char what[200];
    snprintf(what, sizeof what, "%s %s: %s", isa_name, impls[m]->name, c->name);
    void *y = run_impl(impls[m], &q, c, env, what);
    if (!y) continue;
    int64_t bad = 0, first = -1;
    double worst = 0.0;
    for (int64_t i = 0; i < q.span_y; i++) {
      const double want = q.want[i];
      if (!q.member[i]) {
        /* Not an element of y (a gap of a gathered layout): untouched. */
        if (c->res != 2 && !is_poison(y, c->out, i)) bad++, first = first < 0 ? i : first;
        continue;
      }
      const double got = load(y, c->out, i);
      int good;
      if (want != want)
        good = got != got && !is_poison(y, c->out, i);
      else if (isinf(want))
        good = got == want;
      else {
        const double e = fabs(got - want);
        good = e <= q.bound[i];
        if (q.bound[i] > 0 && e / q.bound[i] > worst) worst = e / q.bound[i];
      }
      if (!good) {
        bad++;
        if (first < 0) first = i;
      }
    }
    ok(bad == 0, "%s: %lld of %lld elements off the bound (worst error/bound %.2f%s)", what,
       (long long)bad, (long long)q.span_y, worst, bad ? "" : "");
    if (bad)
      diag("  first at %lld: got %.9g want %.9g bound %.3g", (long long)first,
           load(y, c->out, first), q.want[first], q.bound[first]);
    if (m == 0) {
      /* Determinism: a second run gives the same bits. */
      void *y2 = run_impl(impls[m], &q, c, env, what);
      if (y2) {
        ok(memcmp(y, y2, (size_t)q.span_y * dsize(c->out)) == 0, "%s: a second run is bit-identical",
           what);
        free(y2);
      }
    }
    free(y);
  }
  adnn_cpu_sgemm_set_openblas_fast(0);
  release(&q);
}

/* What widen_sgemm must refuse, with a reason. */
static void check_refusals(const adnn_cpu_env *env, const adnn_cpu_env *base) {
  const adnn_cpu_impl *w = &adnn_cpu_matmul_widen_sgemm;
  prepared q;
  prepare(&cases[0], &q);
  char why[200] = "";
  ok(!w->supports(&q.p, base, why, sizeof why) && why[0],
     "widen_sgemm refuses the baseline instruction set (%s)", why);
  adnn_plugin_matmul p = q.p;
  p.a.dtype = ADNN_DTYPE_I8;
  p.b.dtype = ADNN_DTYPE_I8;
  p.y.dtype = ADNN_DTYPE_I32;
  why[0] = 0;
  ok(!w->supports(&p, env, why, sizeof why) && why[0], "widen_sgemm refuses I8 inputs (%s)", why);
  p = q.p;
  p.M = p.N = p.K = 6000; /* three F32 copies of 144 MB each */
  p.a.strides[2] = p.b.strides[2] = p.y.strides[2] = 6000;
  why[0] = 0;
  ok(!w->supports(&p, env, why, sizeof why) && strstr(why, "workspace"),
     "widen_sgemm refuses a 6000^3 problem whose copies exceed its cap (%s)", why);
  char why2[200] = "";
  ok(adnn_cpu_matmul_lowp.supports(&p, env, why2, sizeof why2),
     "lowp takes that problem instead (%s)", why2);
  release(&q);
}

int main(void) {
  const int threads = adnn_cpu_parallel_init(2);
  const adnn_cpu_features *f = adnn_cpu_features_get();
  static const char *const names[ADNN_CPU_ISA_COUNT] = {"base", "avx2", "avx512"};
  const adnn_cpu_env base = {ADNN_CPU_ISA_BASE, threads, f};
  int ran = 0;
  for (int isa = ADNN_CPU_ISA_AVX2; isa < ADNN_CPU_ISA_COUNT; isa++) {
    const int usable = isa == ADNN_CPU_ISA_AVX2 ? f->avx2 && f->fma && f->f16c : f->avx512f;
    if (!usable) {
      char why[120];
      snprintf(why, sizeof why, "%s: the CPU lacks the instruction set (or F16C)", names[isa]);
      tap_skip(why);
      continue;
    }
    const adnn_cpu_env env = {isa, threads, f};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i], &env, names[isa]);
    if (!ran) check_refusals(&env, &base);
    ran = 1;
  }
  if (!ran) tap_skip("no F16/BF16 matmul path on this CPU (needs AVX2+FMA+F16C)");
  return tap_done();
}
