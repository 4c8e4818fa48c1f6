/*
 * The CPU plugin's two attention backward implementations against each other,
 * below the public API: the conformance suite checks the plugin's own choice
 * (cpu_simd, at the machine's widest instruction set) against its independent
 * long-double oracle, but nothing public can force the reference loops of
 * kernels/ref/ or a narrower instruction set. This program links the kernels
 * directly and, on seeded random problems with their forward o and lse (an
 * independent double-precision forward written here):
 *   - runs the reference kernel and cpu_simd at every instruction set the CPU
 *     supports (baseline, AVX2, AVX-512) with a pool of two threads (which
 *     splits the keys into chunks when there are few (batch, kv head)
 *     pairs), in F32 and F64;
 *   - requires every result within the tolerance of doc/numerics.md's
 *     attention backward row of the reference (relative L2 error 2e-5 F32,
 *     2e-12 F64, over every element of dq, dk and dv), every element
 *     written (outputs poisoned with NaN), and two runs of one plan
 *     bit-identical (the kernel is flagged deterministic).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/ref/ref.h"
#include "t/tap.h"

typedef struct shape {
  int64_t B, H, Hkv, Sq, Skv, D, Dv;
  int causal, bias, lengths, bshd;
} shape;

static const shape shapes[] = {
    /* B H Hkv Sq Skv  D  Dv causal bias lengths bshd */
    {2, 4, 2, 33, 70, 16, 24, 1, 1, 1, 0},
    {1, 4, 1, 3, 300, 32, 40, 1, 0, 0, 1}, /* few pairs: the keys split into chunks */
    {1, 2, 2, 130, 130, 64, 64, 1, 1, 0, 0},
    {2, 6, 3, 50, 20, 80, 64, 1, 0, 1, 1},   /* Sq > Skv: fully masked rows */
    {3, 2, 1, 70, 150, 8, 8, 0, 1, 1, 0},
};

static void desc4(adnn_tensor_desc *t, adnn_dtype dt, int64_t a, int64_t b, int64_t c,
                  int64_t d, int bshd) {
  memset(t, 0, sizeof *t);
  t->dtype = dt;
  t->rank = 4;
  t->dims[0] = a, t->dims[1] = b, t->dims[2] = c, t->dims[3] = d;
  t->strides[3] = 1;
  t->strides[0] = b * c * d;
  t->strides[1] = bshd ? d : c * d;
  t->strides[2] = bshd ? b * d : d;
}

static int64_t at4(const adnn_tensor_desc *t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return a * t->strides[0] + b * t->strides[1] + c * t->strides[2] + d * t->strides[3];
}

/* The forward in double: o and lse of every row (lse = -inf and o = 0 for a
 * fully masked row). The bias is [Sq, Skv] broadcast over B and H. */
static void forward(const adnn_plugin_attention *p, const double *q, const double *k,
                    const double *v, const double *bias, const int32_t *kl, double *o,
                    double *lse) {
  double *s = malloc((size_t)p->Skv * sizeof *s);
  if (!s) tap_bail("out of memory");
  for (int64_t b = 0; b < p->B; b++)
    for (int64_t h = 0; h < p->H; h++)
      for (int64_t i = 0; i < p->Sq; i++) {
        const int64_t g = h / p->group;
        int64_t lim = p->has_key_lengths ? kl[b] : p->Skv;
        lim = lim < 0 ? 0 : lim > p->Skv ? p->Skv : lim;
        double m = -INFINITY;
        for (int64_t j = 0; j < p->Skv; j++) {
          s[j] = -INFINITY;
          if (j < lim && (!p->causal || j <= i + p->Skv - p->Sq)) {
            double dot = 0.0;
            for (int64_t d = 0; d < p->D; d++)
              dot += q[at4(&p->q, b, h, i, d)] * k[at4(&p->k, b, g, j, d)];
            s[j] = p->scale * dot + (p->has_bias ? bias[i * p->Skv + j] : 0.0);
          }
          if (s[j] > m) m = s[j];
        }
        double l = -INFINITY;
        if (m > -INFINITY) {
          double z = 0.0;
          for (int64_t j = 0; j < p->Skv; j++) z += exp(s[j] - m);
          l = m + log(z);
        }
        lse[(b * p->H + h) * p->Sq + i] = l;
        for (int64_t d = 0; d < p->Dv; d++) {
          double acc = 0.0;
          if (l > -INFINITY)
            for (int64_t j = 0; j < p->Skv; j++)
              acc += exp(s[j] - l) * v[at4(&p->v, b, g, j, d)];
          o[at4(&p->o, b, h, i, d)] = acc;
        }
      }
  free(s);
}

static int64_t span(const adnn_tensor_desc *t) {
  int64_t s = 1;
  for (int i = 0; i < t->rank; i++) s += (t->dims[i] - 1) * t->strides[i];
  return s;
}

/* Values of doubles in dtype dt, in a fresh 64-byte-aligned buffer. */
static void *as_dtype(const double *x, int64_t n, adnn_dtype dt) {
  void *r = NULL;
  const size_t es = dt == ADNN_DTYPE_F64 ? 8 : 4;
  if (posix_memalign(&r, 64, (size_t)n * es + 64) != 0) tap_bail("out of memory");
  for (int64_t i = 0; i < n; i++)
    if (dt == ADNN_DTYPE_F64)
      ((double *)r)[i] = x[i];
    else
      ((float *)r)[i] = (float)x[i];
  return r;
}

static double value(const void *p, adnn_dtype dt, int64_t i) {
  return dt == ADNN_DTYPE_F64 ? ((const double *)p)[i] : ((const float *)p)[i];
}

/* ||got - want|| / ||want|| over n elements; 1 when got has a NaN. */
static double rel_l2(const void *got, const void *want, int64_t n, adnn_dtype dt) {
  double num = 0.0, den = 0.0;
  for (int64_t i = 0; i < n; i++) {
    const double a = value(got, dt, i), b = value(want, dt, i);
    if (a != a) return 1.0;
    num += (a - b) * (a - b);
    den += b * b;
  }
  return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

static void check(const shape *sh, size_t index, adnn_dtype dt, int pool_threads) {
  const int f64 = dt == ADNN_DTYPE_F64;
  adnn_plugin_attention_backward pb;
  memset(&pb, 0, sizeof pb);
  pb.struct_size = (uint32_t)sizeof pb;
  adnn_plugin_attention *p = &pb.fwd;
  p->struct_size = (uint32_t)sizeof *p;
  p->B = sh->B, p->H = sh->H, p->Hkv = sh->Hkv, p->group = sh->H / sh->Hkv;
  p->Sq = sh->Sq, p->Skv = sh->Skv, p->D = sh->D, p->Dv = sh->Dv;
  p->scale = 1.0 / sqrt((double)sh->D);
  p->causal = sh->causal, p->has_bias = sh->bias, p->has_key_lengths = sh->lengths;
  p->has_lse = 1;
  desc4(&p->q, dt, sh->B, sh->H, sh->Sq, sh->D, sh->bshd);
  desc4(&p->k, dt, sh->B, sh->Hkv, sh->Skv, sh->D, sh->bshd);
  desc4(&p->v, dt, sh->B, sh->Hkv, sh->Skv, sh->Dv, sh->bshd);
  desc4(&p->o, dt, sh->B, sh->H, sh->Sq, sh->Dv, sh->bshd);
  p->lse.dtype = dt;
  p->lse.rank = 3;
  p->lse.dims[0] = sh->B, p->lse.dims[1] = sh->H, p->lse.dims[2] = sh->Sq;
  p->lse.strides[0] = sh->H * sh->Sq, p->lse.strides[1] = sh->Sq, p->lse.strides[2] = 1;
  if (sh->bias) { /* [Sq, Skv] broadcast over B and H: stride 0 */
    p->bias.dtype = dt;
    p->bias.rank = 4;
    p->bias.dims[0] = sh->B, p->bias.dims[1] = sh->H, p->bias.dims[2] = sh->Sq;
    p->bias.dims[3] = sh->Skv;
    p->bias.strides[2] = sh->Skv, p->bias.strides[3] = 1;
  }
  if (sh->lengths) {
    p->key_lengths.dtype = ADNN_DTYPE_I32;
    p->key_lengths.rank = 1;
    p->key_lengths.dims[0] = sh->B;
    p->key_lengths.strides[0] = 1;
  }
  const int64_t nq = span(&p->q), nk = span(&p->k), nv = span(&p->v), no = span(&p->o);
  const int64_t nl = sh->B * sh->H * sh->Sq, nb = sh->Sq * sh->Skv;
  double *q = malloc((size_t)nq * 8), *k = malloc((size_t)nk * 8), *v = malloc((size_t)nv * 8);
  double *o = malloc((size_t)no * 8), *dout = malloc((size_t)no * 8);
  double *lse = malloc((size_t)nl * 8), *bias = malloc((size_t)nb * 8);
  if (!q || !k || !v || !o || !dout || !lse || !bias) tap_bail("out of memory");
  tap_rng r = tap_rng_seed(0xa77e17ull + index * 131 + (uint64_t)f64);
  /* Values representable in the dtype, so the double forward sees what the
   * kernels see. */
#define FILL(x, n)                                                     \
  for (int64_t i = 0; i < (n); i++) {                                  \
    const double u = tap_rng_uniform(&r, -1.0, 1.0);                   \
    (x)[i] = f64 ? u : (double)(float)u;                               \
  }
  FILL(q, nq);
  FILL(k, nk);
  FILL(v, nv);
  FILL(dout, no);
  FILL(bias, nb);
#undef FILL
  for (int64_t i = 0; i < nb; i += 7) bias[i] = -INFINITY;
  int32_t kl[4] = {(int32_t)sh->Skv - 5, 0, (int32_t)sh->Skv + 4, 1};
  forward(p, q, k, v, bias, kl, o, lse);
  void *Q = as_dtype(q, nq, dt), *K = as_dtype(k, nk, dt), *V = as_dtype(v, nv, dt);
  void *O = as_dtype(o, no, dt), *DO = as_dtype(dout, no, dt), *L = as_dtype(lse, nl, dt);
  void *BI = as_dtype(bias, nb, dt);
  const void *in[8] = {Q, K, V, O, DO, L};
  int n = 6;
  if (sh->bias) in[n++] = BI;
  if (sh->lengths) in[n++] = kl;
  const size_t es = f64 ? 8 : 4;
  const int64_t count[3] = {nq, nk, nv};
  void *ref[3], *got[3], *again[3];
  for (int t = 0; t < 3; t++) {
    if (posix_memalign(&ref[t], 64, (size_t)count[t] * es) != 0 ||
        posix_memalign(&got[t], 64, (size_t)count[t] * es) != 0 ||
        posix_memalign(&again[t], 64, (size_t)count[t] * es) != 0)
      tap_bail("out of memory");
    memset(ref[t], 0xff, (size_t)count[t] * es);
  }
  adnn_ref_attention_backward(&pb, in, ref);
  const char *tname = f64 ? "f64" : "f32";
  const double tol = f64 ? 2e-12 : 2e-5;
  static const char *const isa_names[ADNN_CPU_ISA_COUNT] = {"base", "avx2", "avx512"};
  const adnn_cpu_features *feat = adnn_cpu_features_get();
  for (int isa = 0; isa < ADNN_CPU_ISA_COUNT; isa++) {
    const int usable = isa == ADNN_CPU_ISA_BASE     ? 1
                       : isa == ADNN_CPU_ISA_AVX2   ? feat->avx2 && feat->fma
                                                    : feat->avx512f;
    char what[160];
    snprintf(what, sizeof what, "shape %zu %s %s, %d thread(s)", index, tname, isa_names[isa],
             pool_threads);
    if (!usable) {
      char why[200];
      snprintf(why, sizeof why, "%s: the CPU lacks the instruction set", what);
      tap_skip(why);
      continue;
    }
    adnn_cpu_env env = {isa, pool_threads, feat};
    unsigned char state[1024];
    if (!ok(adnn_cpu_attention_backward_simd.state_size <= sizeof state, "%s: state fits", what))
      continue;
    memset(state, 0, sizeof state);
    size_t ws_bytes = 0;
    adnn_cpu_attention_backward_simd.reshape(&pb, &env, state, &ws_bytes);
    void *ws = NULL;
    if (posix_memalign(&ws, 64, ws_bytes ? ws_bytes : 64) != 0) tap_bail("out of memory");
    for (int t = 0; t < 3; t++) memset(got[t], 0xff, (size_t)count[t] * es);
    adnn_cpu_attention_backward_simd.run(&pb, state, in, got, ws);
    for (int t = 0; t < 3; t++) memset(again[t], 0xff, (size_t)count[t] * es);
    memset(ws, 0x5a, ws_bytes); /* a run must not depend on the workspace's contents */
    adnn_cpu_attention_backward_simd.run(&pb, state, in, again, ws);
    free(ws);
    static const char *const out_names[3] = {"dq", "dk", "dv"};
    for (int t = 0; t < 3; t++) {
      const double e = rel_l2(got[t], ref[t], count[t], dt);
      ok(e <= tol, "%s: cpu_simd %s matches the reference kernel (rel_l2 %.2g, bound %.0e)", what,
         out_names[t], e, tol);
    }
    int same = 1;
    for (int t = 0; t < 3; t++) same &= memcmp(got[t], again[t], (size_t)count[t] * es) == 0;
    ok(same, "%s: two runs are bit-identical", what);
  }
  /* The reference itself against the double forward's consistency: every
   * element written (the poison gone). */
  int written = 1;
  for (int t = 0; t < 3; t++)
    for (int64_t i = 0; i < count[t]; i++) written &= value(ref[t], dt, i) == value(ref[t], dt, i);
  ok(written, "shape %zu %s: the reference writes every element", index, tname);
  for (int t = 0; t < 3; t++) free(ref[t]), free(got[t]), free(again[t]);
  free(Q), free(K), free(V), free(O), free(DO), free(L), free(BI);
  free(q), free(k), free(v), free(o), free(dout), free(lse), free(bias);
}

int main(void) {
  /* The kernel's workspace has one slice per pool thread (env.threads is the
   * pool's size, as in the plugin); with two, shape 1 splits its keys. */
  const int threads = adnn_cpu_parallel_init(2);
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    for (int f64 = 0; f64 <= 1; f64++)
      check(&shapes[i], i, f64 ? ADNN_DTYPE_F64 : ADNN_DTYPE_F32, threads);
  return tap_done();
}
