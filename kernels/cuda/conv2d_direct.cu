/*
 * The direct 2-D convolution (cross-correlation) with fused bias and
 * activation, and the zero-padding copy that lets cuDNN (symmetric padding
 * only) run problems with asymmetric padding.
 *
 * conv2d_direct: one thread per output element y[n, k, p, q], grid-stride over
 * N*K*P*Q in int64; the linear index is decomposed over y's dims in the order
 * of y's strides (order[], fastest last) so writes are coalesced for NCHW and
 * NHWC. It loops over the c of k's group, r and s exactly like
 * kernels/ref/ref_conv2d.c, skipping taps that fall into the zero padding
 * (h or w outside [0, H) x [0, W)), so it is correct for every stride,
 * dilation, padding (also asymmetric: the bottom/right padding only shows as
 * P, Q), group count and tensor strides the core accepts. `exact` accumulates
 * in double (the "reference" algorithm). It is the fallback for problems
 * cuDNN rejects, not a fast path.
 *
 * pad_pack: one thread per element of the padded, packed output (grid-stride,
 * int64); each reads its source element or writes 0 in the padding. Every
 * output element is written exactly once; the source is only read.
 */
#include "kernels/cuda/common.cuh"

namespace adnn_cuda {

template <typename T, typename Acc>
__global__ void conv2d_direct_kernel(adnn_cuda_conv2d p, const T *x, const T *w, const T *bias,
                                     T *y) {
  const int64_t total = p.N * p.K * p.P * p.Q;
  const int64_t dims[4] = {p.N, p.K, p.P, p.Q};
  const int64_t KG = p.K / p.groups;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t idx[4];
    int64_t lin = i;
    for (int k = 3; k >= 0; k--) {
      const int d = p.order[k];
      idx[d] = lin % dims[d];
      lin /= dims[d];
    }
    const int64_t n = idx[0], k = idx[1], op = idx[2], oq = idx[3];
    const int64_t g = k / KG;
    const int64_t h0 = op * p.stride_h - p.pad_top, w0 = oq * p.stride_w - p.pad_left;
    Acc acc = Acc(0);
    const T *xn = x + n * p.xs[0] + g * p.CG * p.xs[1];
    const T *wk = w + k * p.ws[0];
    for (int64_t c = 0; c < p.CG; c++) {
      for (int64_t r = 0; r < p.R; r++) {
        const int64_t h = h0 + r * p.dil_h;
        if (h < 0 || h >= p.H) continue;
        for (int64_t s = 0; s < p.S; s++) {
          const int64_t ww = w0 + s * p.dil_w;
          if (ww < 0 || ww >= p.W) continue;
          acc += (Acc)xn[c * p.xs[1] + h * p.xs[2] + ww * p.xs[3]] *
                 (Acc)wk[c * p.ws[1] + r * p.ws[2] + s * p.ws[3]];
        }
      }
    }
    if (bias) acc += (Acc)bias[k * p.bias_stride];
    y[n * p.ys[0] + k * p.ys[1] + op * p.ys[2] + oq * p.ys[3]] = (T)activate<Acc>(p.act, acc);
  }
}

template <typename T>
__global__ void pad_pack_kernel(int64_t N, int64_t C, int64_t H, int64_t W, int64_t xs0,
                                int64_t xs1, int64_t xs2, int64_t xs3, int64_t pt, int64_t pl,
                                int64_t Hp, int64_t Wp, int nhwc, const T *x, T *out) {
  const int64_t total = N * C * Hp * Wp;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t n, c, h, w, lin = i;
    if (nhwc) {
      c = lin % C; lin /= C;
      w = lin % Wp; lin /= Wp;
      h = lin % Hp; n = lin / Hp;
    } else {
      w = lin % Wp; lin /= Wp;
      h = lin % Hp; lin /= Hp;
      c = lin % C; n = lin / C;
    }
    const int64_t sh = h - pt, sw = w - pl;
    T v = T(0);
    if (sh >= 0 && sh < H && sw >= 0 && sw < W) v = x[n * xs0 + c * xs1 + sh * xs2 + sw * xs3];
    out[i] = v;
  }
}

} // namespace adnn_cuda

using namespace adnn_cuda;

ADNN_CUDA_API cudaError_t adnn_cuda_conv2d_direct(const adnn_cuda_launch *l, int f64, int exact,
                                                  const adnn_cuda_conv2d *p, const void *x,
                                                  const void *w, const void *bias, void *y) {
  const int threads = 128;
  const int64_t total = p->N * p->K * p->P * p->Q;
  if (total <= 0) return cudaSuccess;
  const unsigned grid = grid_for(l, total, threads);
  if (f64)
    conv2d_direct_kernel<double, double><<<grid, threads, 0, l->stream>>>(
        *p, (const double *)x, (const double *)w, (const double *)bias, (double *)y);
  else if (exact)
    conv2d_direct_kernel<float, double><<<grid, threads, 0, l->stream>>>(
        *p, (const float *)x, (const float *)w, (const float *)bias, (float *)y);
  else
    conv2d_direct_kernel<float, float><<<grid, threads, 0, l->stream>>>(
        *p, (const float *)x, (const float *)w, (const float *)bias, (float *)y);
  return cudaGetLastError();
}

ADNN_CUDA_API cudaError_t adnn_cuda_pad_pack(const adnn_cuda_launch *l, int f64,
                                             const int64_t dims[4], const int64_t xs[4],
                                             int64_t pt, int64_t pb, int64_t pl, int64_t pr,
                                             int nhwc, const void *x, void *out) {
  const int threads = 256;
  const int64_t Hp = dims[2] + pt + pb, Wp = dims[3] + pl + pr;
  const int64_t total = dims[0] * dims[1] * Hp * Wp;
  if (total <= 0) return cudaSuccess;
  const unsigned grid = grid_for(l, total, threads);
  if (f64)
    pad_pack_kernel<double><<<grid, threads, 0, l->stream>>>(
        dims[0], dims[1], dims[2], dims[3], xs[0], xs[1], xs[2], xs[3], pt, pl, Hp, Wp, nhwc,
        (const double *)x, (double *)out);
  else
    pad_pack_kernel<float><<<grid, threads, 0, l->stream>>>(
        dims[0], dims[1], dims[2], dims[3], xs[0], xs[1], xs[2], xs[3], pt, pl, Hp, Wp, nhwc,
        (const float *)x, (float *)out);
  return cudaGetLastError();
}
