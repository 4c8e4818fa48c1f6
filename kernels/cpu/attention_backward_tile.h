/*
 * The element-type-generic vector code of the attention backward kernel
 * (kernels/cpu/attention_backward.c explains the method). Included twice per
 * instruction set region, inside that file's vector part, with AB_F64 0
 * (float, VL lanes) and AB_F64 1 (double, VL / 2 lanes); each copy's names
 * end in _f or _d besides the instruction set's suffix. No include guard on
 * purpose.
 */
#ifndef ADNN_SIMD_VECTOR_PART
#error "included by kernels/cpu/attention_backward.c's vector part only"
#endif

#if AB_F64
#define T double
#define TV NAME(abv_d_t)
#define TI NAME(abi_d_t)
#define TIS int64_t
#define TW (VL / 2)
#define TN(f) NAME(f##_d)
typedef double NAME(abv_d_t) __attribute__((vector_size(VL * 4)));
typedef int64_t NAME(abi_d_t) __attribute__((vector_size(VL * 4)));
#else
#define T float
#define TV NAME(abv_f_t)
#define TI NAME(abi_f_t)
#define TIS int32_t
#define TW VL
#define TN(f) NAME(f##_f)
typedef float NAME(abv_f_t) __attribute__((vector_size(VL * 4)));
typedef int32_t NAME(abi_f_t) __attribute__((vector_size(VL * 4)));
#endif

/* Register blocking of the tile products: MR rows of the result times up to
 * NRV vectors of its columns stay in registers over the whole reduction.
 * AVX-512's 32 registers hold 4 x 4 accumulators; the 16 of AVX2 and SSE
 * hold 4 x 2. */
#define MR 4
#if ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX512
#define NRV 4
#else
#define NRV 2
#endif

SIMD_INLINE TV TN(ld)(const T *p) {
  TV v;
  memcpy(&v, p, sizeof v);
  return v;
}
SIMD_INLINE void TN(st)(T *p, TV v) { memcpy(p, &v, sizeof v); }
/* s in every lane, written lane by lane: the compiler makes it one broadcast
 * (often folded into the FMA's memory operand), where (TV){0} + s would cost
 * a scalar addition first (0 + s is not s for s = -0). */
SIMD_INLINE TV TN(splat)(T s) {
  TV v;
  for (int l = 0; l < TW; l++) v[l] = s;
  return v;
}

/* Lane by lane m ? a : b, for a mask m of a comparison. */
SIMD_INLINE TV TN(sel)(TI m, TV a, TV b) { return (TV)((m & (TI)a) | (~m & (TI)b)); }

#if AB_F64
/* exp(x) in double: n = round(x / ln 2), r = x - n ln 2 with ln 2 in two
 * parts (n * LN2_HI is exact for |n| < 2^11, LN2_HI having 32 significant
 * bits), exp(r) by its Taylor polynomial of degree 13 (truncation below
 * 4e-18 relative for |r| <= ln2 / 2), scaled by 2^n built in the exponent
 * field. Arguments below -708 give 0 instead of subnormals (below 3e-308:
 * far inside every tolerance), like the float version; NaN gives NaN. */
SIMD_INLINE TV TN(vexp)(TV x) {
  const TV magic = TN(splat)(6755399441055744.0); /* 1.5 * 2^52: rounds to an integer */
  const TI tiny = x < -708.0;
  x = TN(sel)(x > 709.0, TN(splat)(709.0), x); /* keeps a NaN */
  x = TN(sel)(x < -708.0, TN(splat)(-708.0), x);
  const TV t = x * 1.4426950408889634 + magic;
  const TV n = t - magic;
  const TI ni = (TI)t - (TI)magic;
  TV r = x - n * 0.693147180369123816490;
  r = r - n * 1.90821492927058770002e-10;
  TV p = TN(splat)(1.0 / 6227020800.0);
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  const TV scale = (TV)((ni + 1023) << 52);
  return TN(sel)(tiny, (TV){0}, p * scale);
}
#else
SIMD_INLINE TV TN(vexp)(TV x) { return NAME(vexp)(x); }
#endif

/* The register block of TN(gemm): C[r][v * TW + l] (+)= sum_k A[r * am +
 * k * ak] * B[k * ldb + v * TW + l] for r < MR, v < nv (a constant after
 * inlining). */
SIMD_INLINE void TN(mk)(const int nv, int64_t K, const T *A, int64_t am, int64_t ak, const T *B,
                        int64_t ldb, T *C, int64_t ldc, int accumulate) {
  TV c[MR][NRV];
#pragma GCC unroll 4
  for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
    for (int v = 0; v < NRV; v++)
      if (v < nv) c[r][v] = accumulate ? TN(ld)(C + r * ldc + v * TW) : (TV){0};
  for (int64_t k = 0; k < K; k++) {
    TV b[NRV];
#pragma GCC unroll 4
    for (int v = 0; v < NRV; v++)
      if (v < nv) b[v] = TN(ld)(B + k * ldb + v * TW);
    const T *a = A + k * ak;
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++) {
      const TV av = TN(splat)(a[r * am]);
#pragma GCC unroll 4
      for (int v = 0; v < NRV; v++)
        if (v < nv) c[r][v] += av * b[v];
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
    for (int v = 0; v < NRV; v++)
      if (v < nv) TN(st)(C + r * ldc + v * TW, c[r][v]);
}

/* C (M x N, row stride ldc) = or += A (M x K, element [m][k] at m * am + k *
 * ak) times B (K x N, row stride ldb). M is a multiple of MR and N of TW;
 * every product of the kernel is one of these, with A read through its
 * strides so that the transposed tiles P^T and dS^T need no copy. */
static void TN(gemm)(int64_t M, int64_t N, int64_t K, const T *A, int64_t am, int64_t ak,
                     const T *B, int64_t ldb, T *C, int64_t ldc, int accumulate) {
  const int64_t nvec = N / TW;
  for (int64_t m = 0; m < M; m += MR) {
    const T *Am = A + m * am;
    T *Cm = C + m * ldc;
    int64_t v0 = 0;
    for (; v0 + NRV <= nvec; v0 += NRV)
      TN(mk)(NRV, K, Am, am, ak, B + v0 * TW, ldb, Cm + v0 * TW, ldc, accumulate);
    switch (nvec - v0) {
      case 1: TN(mk)(1, K, Am, am, ak, B + v0 * TW, ldb, Cm + v0 * TW, ldc, accumulate); break;
#if NRV > 2
      case 2: TN(mk)(2, K, Am, am, ak, B + v0 * TW, ldb, Cm + v0 * TW, ldc, accumulate); break;
      case 3: TN(mk)(3, K, Am, am, ak, B + v0 * TW, ldb, Cm + v0 * TW, ldc, accumulate); break;
#endif
      default: break;
    }
  }
}

/* Copies rows [row0, row0 + n) of head [b, h] of a rank-4 tensor (any
 * strides) into dst as n packed rows of width w padded with zeros to wp,
 * and zeroes rows n..n_pad - 1. */
static void TN(pack_rows)(const T *src, const int64_t *st, int64_t b, int64_t h, int64_t row0,
                          int64_t n, int64_t n_pad, int64_t w, int64_t wp, T *dst) {
  const T *base = src + b * st[0] + h * st[1] + row0 * st[2];
  for (int64_t r = 0; r < n; r++) {
    const T *s = base + r * st[2];
    T *d = dst + r * wp;
    if (st[3] == 1)
      memcpy(d, s, (size_t)w * sizeof(T));
    else
      for (int64_t x = 0; x < w; x++) d[x] = s[x * st[3]];
    for (int64_t x = w; x < wp; x++) d[x] = 0;
  }
  if (n_pad > n) memset(dst + n * wp, 0, (size_t)((n_pad - n) * wp) * sizeof(T));
}

/* Copies rows [row0, row0 + n) of head [b, g] transposed into dst (w rows of
 * n_pad columns, row stride ld), zeroing columns n..n_pad - 1. */
static void TN(pack_cols)(const T *src, const int64_t *st, int64_t b, int64_t g, int64_t row0,
                          int64_t n, int64_t n_pad, int64_t w, int64_t ld, T *dst) {
  const T *base = src + b * st[0] + g * st[1] + row0 * st[2];
  for (int64_t x = 0; x < w; x++) {
    T *d = dst + x * ld;
    const T *s = base + x * st[3];
    for (int64_t r = 0; r < n; r++) d[r] = s[r * st[2]];
    for (int64_t r = n; r < n_pad; r++) d[r] = 0;
  }
}

/* Writes n packed rows (row stride wp, the first w columns) into rows
 * [row0, row0 + n) of head [b, h] of a rank-4 tensor. */
static void TN(unpack_rows)(const T *srcp, int64_t wp, int64_t n, int64_t w, T *dst,
                            const int64_t *st, int64_t b, int64_t h, int64_t row0) {
  T *base = dst + b * st[0] + h * st[1] + row0 * st[2];
  for (int64_t r = 0; r < n; r++) {
    T *d = base + r * st[2];
    const T *s = srcp + r * wp;
    if (st[3] == 1)
      memcpy(d, s, (size_t)w * sizeof(T));
    else
      for (int64_t x = 0; x < w; x++) d[x * st[3]] = s[x];
  }
}

/* One task: batch b, key/value head g, key chunk c (see the file header of
 * attention_backward.c). `ws` is the thread's slice of the workspace. */
static void TN(ab_task)(const ab_state *s, const ab_exec *e, int64_t task, char *ws) {
  const int64_t c = task % s->NC, bg = task / s->NC, g = bg % s->Hkv, b = bg / s->Hkv;
  const int64_t Br = s->Br, Bc = s->Bc, D = s->D, Dv = s->Dv, Dp = s->Dp, Dvp = s->Dvp;
  const int64_t Lc = s->Lc, Sq = s->Sq, Skv = s->Skv;
  T *Kp = (T *)(ws + s->ws_kp), *Kt = (T *)(ws + s->ws_kt), *Vt = (T *)(ws + s->ws_vt);
  T *dKa = (T *)(ws + s->ws_dk), *dVa = (T *)(ws + s->ws_dv);
  T *Qp = (T *)(ws + s->ws_q), *dOp = (T *)(ws + s->ws_do);
  T *St = (T *)(ws + s->ws_s), *dSt = (T *)(ws + s->ws_ds), *dQa = (T *)(ws + s->ws_dq);
  T *lse_r = (T *)(ws + s->ws_lse), *delta_r = (T *)(ws + s->ws_delta);
  int64_t *lim_r = (int64_t *)(ws + s->ws_lim);
  const T *q = e->q, *k = e->k, *v = e->v, *dout = e->dout, *lse = e->lse, *bias = e->bias;
  const T *delta = (const T *)e->delta;
  const T scale = (T)s->scale;
  const T sc = s->has_bias ? (T)1 : scale; /* the factor of the exp pass */

  /* The keys of this chunk that any query of batch b may see. */
  const int64_t klen = ab_key_limit(s, e, b);
  const int64_t k0 = c * Lc, k1 = k0 + Lc < Skv ? k0 + Lc : Skv;
  const int64_t kend = k1 < klen ? k1 : klen;
  const int64_t nk = kend > k0 ? kend - k0 : 0;
  const int64_t nk_pad = (nk + Bc - 1) / Bc * Bc;

  memset(dKa, 0, (size_t)(Lc * Dp) * sizeof(T));
  memset(dVa, 0, (size_t)(Lc * Dvp) * sizeof(T));
  if (nk > 0) {
    TN(pack_rows)(k, s->ks, b, g, k0, nk, nk, D, Dp, Kp);
    TN(pack_cols)(k, s->ks, b, g, k0, nk, nk_pad, D, Lc, Kt);
    TN(pack_cols)(v, s->vs, b, g, k0, nk, nk_pad, Dv, Lc, Vt);
  }
  TI iota;
  for (int l = 0; l < TW; l++) iota[l] = l;

  for (int64_t h = g * s->group; h < (g + 1) * s->group; h++) {
    for (int64_t i0 = 0; i0 < Sq; i0 += Br) {
      const int64_t nr = Sq - i0 < Br ? Sq - i0 : Br;
      const int64_t nr_pad = (nr + MR - 1) / MR * MR;
      /* Each row's visible keys [0, lim), log-sum-exp and D_i. A row whose
       * lse is -inf was fully masked: it sees nothing. */
      int64_t maxlim = 0;
      for (int64_t r = 0; r < nr_pad; r++) {
        int64_t lim = 0;
        T l = 0, dl = 0;
        if (r < nr) {
          const int64_t i = i0 + r;
          l = lse[b * s->lses[0] + h * s->lses[1] + i * s->lses[2]];
          dl = delta[(b * s->H + h) * Sq + i];
          lim = klen;
          if (s->causal && i + Skv - Sq + 1 < lim) lim = i + Skv - Sq + 1;
          if (lim < 0 || l == -(T)INFINITY) lim = 0;
          if (lim == 0) l = 0;
        }
        lim_r[r] = lim;
        lse_r[r] = l;
        delta_r[r] = dl;
        if (lim > maxlim) maxlim = lim;
      }
      const int64_t jend = maxlim < kend ? maxlim : kend;
      memset(dQa, 0, (size_t)(Br * Dp) * sizeof(T));
      if (jend > k0) {
        TN(pack_rows)(q, s->qs, b, h, i0, nr, nr_pad, D, Dp, Qp);
        TN(pack_rows)(dout, s->os, b, h, i0, nr, nr_pad, Dv, Dvp, dOp);
      }
      for (int64_t j0 = k0; j0 < jend; j0 += Bc) {
        const int64_t jl = j0 - k0;
        const int64_t nc = jend - j0 < Bc ? jend - j0 : Bc;
        const int64_t ncv = (nc + s->cu - 1) / s->cu * s->cu;
        /* S = Q K^T (unscaled), then scale and bias. */
        TN(gemm)(nr_pad, ncv, D, Qp, Dp, 1, Kt + jl, Lc, St, Bc, 0);
        if (s->has_bias) {
          for (int64_t r = 0; r < nr; r++) {
            const T *bp = bias + b * s->bs[0] + h * s->bs[1] + (i0 + r) * s->bs[2] + j0 * s->bs[3];
            T *srow = St + r * Bc;
            int64_t x = 0;
            if (s->bs[3] == 1)
              for (; x + TW <= nc; x += TW)
                TN(st)(srow + x, TN(ld)(srow + x) * scale + TN(ld)(bp + x));
            for (; x < nc; x++) srow[x] = srow[x] * scale + bp[x * s->bs[3]];
          }
        }
        /* P = exp(s - lse) where visible, 0 elsewhere (in place of S). */
        for (int64_t r = 0; r < nr_pad; r++) {
          T *srow = St + r * Bc;
          const TV vl = TN(splat)(lse_r[r]);
          const int64_t lim = lim_r[r] - j0 < 0 ? 0 : lim_r[r] - j0 > Bc ? Bc : lim_r[r] - j0;
          const TI vlim = (TI){0} + (TIS)lim;
          for (int64_t x = 0; x < ncv; x += TW) {
            const TV pv = TN(vexp)(TN(ld)(srow + x) * sc - vl);
            const TI m = (iota + (TIS)x) < vlim;
            TN(st)(srow + x, TN(sel)(m, pv, (TV){0}));
          }
        }
        /* dP = dO V^T, then dS = scale * P * (dP - D_i) (in place of dP),
         * selected like P so that a NaN of v at a masked key stays out. */
        TN(gemm)(nr_pad, ncv, Dv, dOp, Dvp, 1, Vt + jl, Lc, dSt, Bc, 0);
        for (int64_t r = 0; r < nr_pad; r++) {
          const T *prow = St + r * Bc;
          T *drow = dSt + r * Bc;
          const TV vd = TN(splat)(delta_r[r]);
          const int64_t lim = lim_r[r] - j0 < 0 ? 0 : lim_r[r] - j0 > Bc ? Bc : lim_r[r] - j0;
          const TI vlim = (TI){0} + (TIS)lim;
          for (int64_t x = 0; x < ncv; x += TW) {
            const TV ds = TN(ld)(prow + x) * scale * (TN(ld)(drow + x) - vd);
            TN(st)(drow + x, TN(sel)((iota + (TIS)x) < vlim, ds, (TV){0}));
          }
        }
        /* dV += P^T dO, dK += dS^T Q, dQ += dS K. */
        TN(gemm)(ncv, Dvp, nr, St, 1, Bc, dOp, Dvp, dVa + jl * Dvp, Dvp, 1);
        TN(gemm)(ncv, Dp, nr, dSt, 1, Bc, Qp, Dp, dKa + jl * Dp, Dp, 1);
        TN(gemm)(nr_pad, Dp, nc, dSt, Bc, 1, Kp + jl * Dp, Dp, dQa, Dp, 1);
      }
      if (s->NC == 1)
        TN(unpack_rows)(dQa, Dp, nr, D, e->dq, s->qs, b, h, i0);
      else
        memcpy((T *)e->partial + ((c * s->B + b) * s->H + h) * Sq * Dp + i0 * Dp, dQa,
               (size_t)(nr * Dp) * sizeof(T));
    }
  }
  if (k1 > k0) {
    TN(unpack_rows)(dKa, Dp, k1 - k0, D, e->dk, s->ks, b, g, k0);
    TN(unpack_rows)(dVa, Dvp, k1 - k0, Dv, e->dv, s->vs, b, g, k0);
  }
}

#undef T
#undef TV
#undef TI
#undef TIS
#undef TW
#undef TN
#undef MR
#undef NRV
#undef AB_F64
