// The CUDA attention kernels (kernels/cuda/attention.cu, attention_backward.cu)
// called directly through their launchers on the host emulation, for what
// t/conformance does not reach through the public API: the one-thread-per-row
// fallback beyond the tiles' head dims (D or Dv > 256, F64 > 128), the F32
// tiles of head dim 256, and grids smaller than the work (every block loops
// over several tiles, as on a GPU whose grid is capped at a few waves).
// t/cuda-emu.sh compiles it against the emulated kernels that
// t/cuda-emu/build.sh left in its object directory and runs it as TAP.
//
// Each case fills q, k, v, dO (and a bias with -inf entries and a fully
// masked row, key lengths of 0, > Skv and in between, at a stride of 2)
// with seeded uniform values, NaN-poisons every output, runs the forward
// and backward launchers, and compares o, lse, dq, dk and dv with a
// long-double evaluation of the definitions (doc/ops.md): |got - want| <=
// tol * (1 + |want|) with tol 2e-5 (F32) or 1e-12 (F64); the kernels sum up
// to a few hundred terms of magnitude ~1 in the element type.
#include <adnn/plugin.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cuda/cuda_kernels.h"

typedef long double LD;

namespace {

struct Case {
  int B, H, Hkv, Sq, Skv, D, Dv, causal, bias, key_lengths, bshd, small_grid;
};

void set4(adnn_tensor_desc *t, adnn_dtype dt, int64_t b, int64_t h, int64_t s, int64_t d,
          int bshd) {
  memset(t, 0, sizeof *t);
  t->dtype = dt;
  t->rank = 4;
  t->dims[0] = b, t->dims[1] = h, t->dims[2] = s, t->dims[3] = d;
  t->strides[3] = 1;
  t->strides[0] = h * s * d;
  t->strides[1] = bshd ? d : s * d;
  t->strides[2] = bshd ? h * d : d;
}

int64_t at(const adnn_tensor_desc &t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return a * t.strides[0] + b * t.strides[1] + c * t.strides[2] + d * t.strides[3];
}

bool close(LD got, LD want, double tol) {
  if (std::isinf(want)) return got == want;
  return std::fabs((double)(got - want)) <= tol * (1.0 + std::fabs((double)want));
}

template <typename T> int run_case(int n, const Case &c, adnn_dtype dt) {
  const double tol = dt == ADNN_DTYPE_F64 ? 1e-12 : 2e-5;
  adnn_plugin_attention p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  p.B = c.B, p.H = c.H, p.Hkv = c.Hkv, p.group = c.H / c.Hkv, p.Sq = c.Sq, p.Skv = c.Skv;
  p.D = c.D, p.Dv = c.Dv, p.scale = 1.0 / std::sqrt((double)c.D), p.causal = c.causal;
  p.has_lse = 1;
  set4(&p.q, dt, c.B, c.H, c.Sq, c.D, c.bshd);
  set4(&p.k, dt, c.B, c.Hkv, c.Skv, c.D, c.bshd);
  set4(&p.v, dt, c.B, c.Hkv, c.Skv, c.Dv, c.bshd);
  set4(&p.o, dt, c.B, c.H, c.Sq, c.Dv, c.bshd);
  p.lse.dtype = dt, p.lse.rank = 3;
  p.lse.dims[0] = c.B, p.lse.dims[1] = c.H, p.lse.dims[2] = c.Sq;
  p.lse.strides[0] = (int64_t)c.H * c.Sq, p.lse.strides[1] = c.Sq, p.lse.strides[2] = 1;
  std::mt19937 rng(1000u + (unsigned)n);
  std::uniform_real_distribution<double> uni(-1, 1);
  auto fill = [&](std::vector<T> &v, size_t count) {
    v.resize(count);
    for (auto &x : v) x = (T)uni(rng);
  };
  std::vector<T> q, k, v, dout, bias;
  fill(q, (size_t)c.B * c.H * c.Sq * c.D);
  fill(k, (size_t)c.B * c.Hkv * c.Skv * c.D);
  fill(v, (size_t)c.B * c.Hkv * c.Skv * c.Dv);
  fill(dout, (size_t)c.B * c.H * c.Sq * c.Dv);
  if (c.bias) {
    // [1, H, Sq, Skv] broadcast over the batch: every 7th entry -inf, and
    // row 0 of head 0 all -inf (a row masked by the bias alone).
    p.has_bias = 1;
    p.bias.dtype = dt, p.bias.rank = 4;
    p.bias.dims[0] = c.B, p.bias.dims[1] = c.H, p.bias.dims[2] = c.Sq, p.bias.dims[3] = c.Skv;
    p.bias.strides[0] = 0, p.bias.strides[1] = (int64_t)c.Sq * c.Skv;
    p.bias.strides[2] = c.Skv, p.bias.strides[3] = 1;
    fill(bias, (size_t)c.H * c.Sq * c.Skv);
    for (size_t i = 0; i < bias.size(); i += 7) bias[i] = -INFINITY;
    for (int j = 0; j < c.Skv; j++) bias[(size_t)j] = -INFINITY;
  }
  std::vector<int32_t> kl((size_t)c.B * 2, -1);
  if (c.key_lengths) {
    p.has_key_lengths = 1;
    p.key_lengths.dtype = ADNN_DTYPE_I32, p.key_lengths.rank = 1;
    p.key_lengths.dims[0] = c.B, p.key_lengths.strides[0] = 2;
    for (int b = 0; b < c.B; b++)
      kl[(size_t)b * 2] = b == 0 ? 0 : b == 1 ? c.Skv + 5 : c.Skv / 2 + 1;
  }
  const adnn_cuda_launch_config l = {nullptr, c.small_grid ? 1 : 132, c.small_grid ? 128 : 2048};
  adnn_cuda_attention_layout s;
  adnn_cuda_attention_layout_init(&l, dt, &p, &s);
  std::vector<T> o((size_t)c.B * c.H * c.Sq * c.Dv, (T)NAN), lse((size_t)c.B * c.H * c.Sq, (T)NAN);
  std::vector<T> dq(q.size(), (T)NAN), dk(k.size(), (T)NAN), dv(v.size(), (T)NAN);
  std::vector<T> rowsum(lse.size(), (T)NAN);
  const void *bias_p = c.bias ? bias.data() : nullptr;
  const int32_t *kl_p = c.key_lengths ? kl.data() : nullptr;
  int bad = 0;
  if (adnn_cuda_attention_launch(&l, dt, &p, &s, q.data(), k.data(), v.data(), bias_p, kl_p,
                                 o.data(), lse.data()) != cudaSuccess ||
      adnn_cuda_attention_backward_launch(&l, dt, &p, &s, q.data(), k.data(), v.data(), o.data(),
                                          dout.data(), lse.data(), bias_p, kl_p, dq.data(),
                                          dk.data(), dv.data(), rowsum.data()) != cudaSuccess) {
    printf("# a launcher failed\n");
    bad++;
  }
  std::vector<LD> wdq(q.size(), 0), wdk(k.size(), 0), wdv(v.size(), 0);
  double worst = 0;
  auto check = [&](const char *what, size_t idx, LD got, LD want) {
    const double e = std::isinf(want) ? 0 : std::fabs((double)(got - want));
    if (!(e <= worst)) worst = e;
    if (!close(got, want, tol) && bad++ < 4)
      printf("# %s[%zu] = %.9Lg, want %.9Lg\n", what, idx, got, want);
  };
  for (int b = 0; b < c.B; b++)
    for (int h = 0; h < c.H; h++) {
      const int g = h / (c.H / c.Hkv);
      const int kend = c.key_lengths ? std::max(0, std::min(c.Skv, (int)kl[(size_t)b * 2])) : c.Skv;
      for (int i = 0; i < c.Sq; i++) {
        std::vector<LD> sc((size_t)c.Skv, -INFINITY);
        LD m = -INFINITY;
        for (int j = 0; j < kend; j++) {
          if (c.causal && j > i + c.Skv - c.Sq) continue;
          LD dot = 0;
          for (int d = 0; d < c.D; d++) dot += (LD)q[at(p.q, b, h, i, d)] * k[at(p.k, b, g, j, d)];
          dot *= p.scale;
          if (c.bias) dot += bias[(size_t)(h * p.bias.strides[1] + i * c.Skv + j)];
          sc[(size_t)j] = dot;
          if (dot > m) m = dot;
        }
        LD sum = 0;
        for (int j = 0; j < c.Skv; j++)
          if (sc[(size_t)j] != -INFINITY) sum += expl(sc[(size_t)j] - m);
        const size_t li = (size_t)(b * p.lse.strides[0] + h * p.lse.strides[1] + i);
        check("lse", li, lse[li], sum == 0 ? -INFINITY : m + logl(sum));
        std::vector<LD> prob((size_t)c.Skv, 0), orow((size_t)c.Dv, 0);
        for (int j = 0; j < c.Skv; j++)
          if (sum != 0 && sc[(size_t)j] != -INFINITY) prob[(size_t)j] = expl(sc[(size_t)j] - m) / sum;
        LD rs = 0;
        for (int d = 0; d < c.Dv; d++) {
          for (int j = 0; j < c.Skv; j++) orow[(size_t)d] += prob[(size_t)j] * v[at(p.v, b, g, j, d)];
          const size_t oi = (size_t)at(p.o, b, h, i, d);
          check("o", oi, o[oi], orow[(size_t)d]);
          rs += orow[(size_t)d] * dout[oi];
        }
        for (int j = 0; j < c.Skv; j++) {
          if (prob[(size_t)j] == 0) continue;
          LD dp = 0;
          for (int d = 0; d < c.Dv; d++) dp += (LD)dout[at(p.o, b, h, i, d)] * v[at(p.v, b, g, j, d)];
          const LD ds = prob[(size_t)j] * (dp - rs) * p.scale;
          for (int d = 0; d < c.D; d++) {
            wdq[(size_t)at(p.q, b, h, i, d)] += ds * k[at(p.k, b, g, j, d)];
            wdk[(size_t)at(p.k, b, g, j, d)] += ds * q[at(p.q, b, h, i, d)];
          }
          for (int d = 0; d < c.Dv; d++)
            wdv[(size_t)at(p.v, b, g, j, d)] += prob[(size_t)j] * dout[at(p.o, b, h, i, d)];
        }
      }
    }
  // Gradients sum up to Sq * group terms: a looser bound, 4x.
  const double gtol = tol * 4;
  for (size_t i = 0; i < dq.size(); i++)
    if (!close(dq[i], wdq[i], gtol) && bad++ < 8) printf("# dq[%zu] = %g, want %Lg\n", i, (double)dq[i], wdq[i]);
  for (size_t i = 0; i < dk.size(); i++)
    if (!close(dk[i], wdk[i], gtol) && bad++ < 8) printf("# dk[%zu] = %g, want %Lg\n", i, (double)dk[i], wdk[i]);
  for (size_t i = 0; i < dv.size(); i++)
    if (!close(dv[i], wdv[i], gtol) && bad++ < 8) printf("# dv[%zu] = %g, want %Lg\n", i, (double)dv[i], wdv[i]);
  printf("%s %d - cuda attention kernels %s B%d H%d/%d Sq%d Skv%d D%d Dv%d%s%s%s%s%s: tiles %s "
         "(worst forward difference %.2g)\n",
         bad ? "not ok" : "ok", n, dt == ADNN_DTYPE_F64 ? "f64" : "f32", c.B, c.H, c.Hkv, c.Sq,
         c.Skv, c.D, c.Dv, c.causal ? " causal" : "", c.bias ? " bias" : "",
         c.key_lengths ? " key_lengths" : "", c.bshd ? " bshd" : "",
         c.small_grid ? " small-grid" : "",
         s.dmax ? (s.dmax == 256 ? "256" : s.dmax == 128 ? "128" : "64") : "none (by row)", worst);
  return bad != 0;
}

} // namespace

int main() {
  const Case cases[] = {
      // the fallback: D > 256, Dv > 256 (F32 and F64), and F64 beyond 128
      {3, 4, 2, 9, 20, 300, 40, 1, 1, 1, 1, 0},
      {3, 4, 2, 30, 20, 40, 264, 0, 1, 1, 0, 0},
      {1, 2, 1, 17, 45, 200, 150, 0, 1, 0, 0, 0},
      // F32 tiles of 256 (F64: the fallback)
      {2, 2, 1, 17, 70, 256, 256, 1, 1, 1, 0, 0},
      // every block loops over several tiles
      {2, 4, 2, 70, 90, 64, 64, 1, 1, 1, 1, 1},
      {2, 3, 3, 33, 100, 128, 96, 0, 0, 1, 0, 1},
  };
  const int n_cases = (int)(sizeof cases / sizeof cases[0]);
  printf("1..%d\n", 2 * n_cases);
  int failed = 0, n = 0;
  for (const Case &c : cases) {
    failed += run_case<float>(++n, c, ADNN_DTYPE_F32);
    failed += run_case<double>(++n, c, ADNN_DTYPE_F64);
  }
  return failed != 0;
}
