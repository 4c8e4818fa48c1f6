/*
 * The tiled attention forward for one element type, included twice by the
 * vector part of kernels/cpu/attention.c in every instruction set's region:
 * with AT_T float, AT_V the set's float vector VF and AT_L = VL lanes, and
 * with AT_T double, AT_V the half-width double vector VDH and AT_L = VL / 2
 * (AT_I: the integer vector of AT_V's lane count and width).
 * AT_SFX names the copy (f32, f64); AT_NAME(f) gives each function its
 * type's and its instruction set's name. No include guard: included once
 * per type per region.
 *
 * See attention.c for the method. The register tiles: S = Q K^T in tiles of
 * AT_MR rows by AT_NR vectors (the AT_MR x AT_NR accumulators stay in
 * registers over the whole reduction over D; Q's elements are broadcast and
 * K^T's packed rows loaded), and O += P V in tiles of AT_MR rows by up to
 * AT_NR vectors of Dv (P's elements broadcast, V's packed rows loaded).
 */
#define AT_NAME3_(f, s) NAME(f##_##s)
#define AT_NAME2_(f, s) AT_NAME3_(f, s)
#define AT_NAME(f) AT_NAME2_(f, AT_SFX)

/* Loads and stores of AT_L elements (any alignment). */
SIMD_INLINE AT_V AT_NAME(at_load)(const AT_T *p) {
  AT_V v;
  memcpy(&v, p, sizeof v);
  return v;
}
SIMD_INLINE void AT_NAME(at_store)(AT_T *p, AT_V v) { memcpy(p, &v, sizeof v); }
/* s in every lane, as one broadcast of lane 0 ((AT_V){0} + s would add 0
 * first, which the compiler may not drop since it turns -0 into +0, and a
 * lane-by-lane fill compiles to one masked insert per lane). */
SIMD_INLINE AT_V AT_NAME(at_set)(AT_T s) {
#if defined(__clang__)
  /* clang has no __builtin_shuffle (the fuzz plugin is built with clang);
   * it turns this fill into one broadcast. */
  AT_V v;
  for (int i = 0; i < AT_L; i++) v[i] = s;
  return v;
#else
  const AT_V v = {s};
  return __builtin_shuffle(v, (AT_I){0});
#endif
}

/* Lane-wise max (the scores are never NaN-checked here: a NaN score makes
 * its exp, and so the row's sum and output, NaN whatever the maximum is). */
SIMD_INLINE AT_V AT_NAME(at_max)(AT_V a, AT_V b) {
  typedef __typeof__(a > b) at_mask;
  const at_mask gt = a > b;
  return (AT_V)((gt & (at_mask)a) | (~gt & (at_mask)b));
}

/* The sum and the maximum of the lanes: the instruction set's reductions
 * on x86 (a fixed order, so results stay reproducible), a tree of
 * log2(AT_L) steps elsewhere. */
#if defined(__x86_64__) || defined(__i386__)
#if ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX512
#if AT_IS_F32
#define AT_HSUM_(v) _mm512_reduce_add_ps((__m512)(v))
#define AT_HMAX_(v) _mm512_reduce_max_ps((__m512)(v))
#else
#define AT_HSUM_(v) _mm512_reduce_add_pd((__m512d)(v))
#define AT_HMAX_(v) _mm512_reduce_max_pd((__m512d)(v))
#endif
#elif ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX2
#if AT_IS_F32
SIMD_INLINE float AT_NAME(at_red4)(__m128 x, int max) {
  x = max ? _mm_max_ps(x, _mm_movehl_ps(x, x)) : _mm_add_ps(x, _mm_movehl_ps(x, x));
  const __m128 y = _mm_shuffle_ps(x, x, 1);
  return _mm_cvtss_f32(max ? _mm_max_ss(x, y) : _mm_add_ss(x, y));
}
#define AT_HSUM_(v)                                                                   \
  AT_NAME(at_red4)(_mm_add_ps(_mm256_castps256_ps128((__m256)(v)),                    \
                              _mm256_extractf128_ps((__m256)(v), 1)), 0)
#define AT_HMAX_(v)                                                                   \
  AT_NAME(at_red4)(_mm_max_ps(_mm256_castps256_ps128((__m256)(v)),                    \
                              _mm256_extractf128_ps((__m256)(v), 1)), 1)
#else
SIMD_INLINE double AT_NAME(at_red2)(__m128d x, int max) {
  const __m128d y = _mm_unpackhi_pd(x, x);
  return _mm_cvtsd_f64(max ? _mm_max_sd(x, y) : _mm_add_sd(x, y));
}
#define AT_HSUM_(v)                                                                   \
  AT_NAME(at_red2)(_mm_add_pd(_mm256_castpd256_pd128((__m256d)(v)),                   \
                              _mm256_extractf128_pd((__m256d)(v), 1)), 0)
#define AT_HMAX_(v)                                                                   \
  AT_NAME(at_red2)(_mm_max_pd(_mm256_castpd256_pd128((__m256d)(v)),                   \
                              _mm256_extractf128_pd((__m256d)(v), 1)), 1)
#endif
#endif
#endif

SIMD_INLINE AT_T AT_NAME(at_hsum)(AT_V v) {
#ifdef AT_HSUM_
  return AT_HSUM_(v);
#else
  AT_T t[AT_L];
  memcpy(t, &v, sizeof t);
#pragma GCC unroll 8
  for (int w = AT_L / 2; w >= 1; w /= 2)
#pragma GCC unroll 16
    for (int e = 0; e < w; e++) t[e] += t[e + w];
  return t[0];
#endif
}
SIMD_INLINE AT_T AT_NAME(at_hmax)(AT_V v) {
#ifdef AT_HMAX_
  return AT_HMAX_(v);
#else
  AT_T t[AT_L];
  memcpy(t, &v, sizeof t);
#pragma GCC unroll 8
  for (int w = AT_L / 2; w >= 1; w /= 2)
#pragma GCC unroll 16
    for (int e = 0; e < w; e++) t[e] = t[e + w] > t[e] ? t[e + w] : t[e];
  return t[0];
#endif
}
#undef AT_HSUM_
#undef AT_HMAX_

/* exp of every lane: the set's vector exp for float (0.9 ulp, 0 below
 * -87.3 and for -inf), libm's exp per lane for double. */
SIMD_INLINE AT_V AT_NAME(at_exp)(AT_V x) {
#if AT_IS_F32
  return NAME(vexp)(x);
#else
  AT_V r;
  for (int e = 0; e < AT_L; e++) r[e] = exp(x[e]);
  return r;
#endif
}

/* S[r][c] = scale * sum_d Qp[r][d] Kt[d][c] for AT_MR rows from r0 and the
 * AT_NR vectors of columns from c0 (Qp rows of D elements, Kt rows of
 * ATT_BK elements, S rows of ATT_BK elements). */
SIMD_INLINE void AT_NAME(at_qk_tile)(const AT_T *Qp, const AT_T *Kt, AT_T *S, int64_t D,
                                     AT_T scale) {
  AT_V acc[AT_MR][AT_NR];
#pragma GCC unroll 8
  for (int r = 0; r < AT_MR; r++)
#pragma GCC unroll 8
    for (int n = 0; n < AT_NR; n++) acc[r][n] = (AT_V){0};
  for (int64_t d = 0; d < D; d++) {
    AT_V kv[AT_NR];
#pragma GCC unroll 8
    for (int n = 0; n < AT_NR; n++) kv[n] = AT_NAME(at_load)(Kt + d * ATT_BK + n * AT_L);
#pragma GCC unroll 8
    for (int r = 0; r < AT_MR; r++) {
      const AT_V a = AT_NAME(at_set)(Qp[r * D + d]);
#pragma GCC unroll 8
      for (int n = 0; n < AT_NR; n++) acc[r][n] += a * kv[n];
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < AT_MR; r++)
#pragma GCC unroll 8
    for (int n = 0; n < AT_NR; n++) AT_NAME(at_store)(S + r * ATT_BK + n * AT_L, acc[r][n] * scale);
}

/* O[r][c] += sum_k P[r][k] Vp[k][c] for AT_MR rows, k < bk, and NV (1 to
 * AT_NR) vectors of columns (O rows of ldo elements, P rows of ATT_BK, Vp
 * rows of ldv). Inlined with NV constant, so that the accumulators are
 * registers. */
SIMD_INLINE void AT_NAME(at_pv_tile)(const AT_T *P, const AT_T *Vp, AT_T *O, int64_t bk,
                                     int64_t ldv, int64_t ldo, const int NV) {
  AT_V acc[AT_MR][AT_NR];
#pragma GCC unroll 8
  for (int r = 0; r < AT_MR; r++)
#pragma GCC unroll 4
    for (int n = 0; n < NV; n++) acc[r][n] = AT_NAME(at_load)(O + r * ldo + n * AT_L);
  for (int64_t k = 0; k < bk; k++) {
    AT_V vv[AT_NR];
#pragma GCC unroll 4
    for (int n = 0; n < NV; n++) vv[n] = AT_NAME(at_load)(Vp + k * ldv + n * AT_L);
#pragma GCC unroll 8
    for (int r = 0; r < AT_MR; r++) {
      const AT_V a = AT_NAME(at_set)(P[r * ATT_BK + k]);
#pragma GCC unroll 4
      for (int n = 0; n < NV; n++) acc[r][n] += a * vv[n];
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < AT_MR; r++)
#pragma GCC unroll 4
    for (int n = 0; n < NV; n++) AT_NAME(at_store)(O + r * ldo + n * AT_L, acc[r][n]);
}

/* The padded sizes of this copy: rows to a multiple of AT_MR, Dv to whole
 * vectors; and the per-thread workspace (see att_ws_layout). */
static void AT_NAME(att_layout)(att_state *s) {
  s->mr = AT_MR;
  s->dvp = (s->Dv + AT_L - 1) / AT_L * AT_L;
  const int64_t bqp = (s->BQ + AT_MR - 1) / AT_MR * AT_MR;
  s->bqp = bqp;
  att_ws_layout(s, sizeof(AT_T));
}

/* One task: the rows [rb * BQ, min(R, (rb + 1) * BQ)) of the (b, g) pair,
 * row r being query i = r / group of head h = g * group + r % group. */
static void AT_NAME(att_task)(const att_state *s, const att_args *a, int64_t task, char *ws) {
  const int64_t rbs = s->row_blocks;
  const int64_t bg = task / rbs, rb = task - bg * rbs;
  const int64_t b = bg / s->Hkv, g = bg - b * s->Hkv;
  const int64_t r0 = rb * s->BQ;
  const int64_t nr = s->R - r0 < s->BQ ? s->R - r0 : s->BQ;
  const int64_t nrp = (nr + AT_MR - 1) / AT_MR * AT_MR;
  const int64_t D = s->D, Dv = s->Dv, dvp = s->dvp;
  AT_T *Qp = (AT_T *)(ws + s->off_q), *Kt0 = (AT_T *)(ws + s->off_k);
  AT_T *Vp0 = (AT_T *)(ws + s->off_v), *S = (AT_T *)(ws + s->off_s);
  int64_t *tag = (int64_t *)(ws + s->off_tag);
  AT_T *O = (AT_T *)(ws + s->off_o);
  double *m = (double *)(ws + s->off_m), *l = (double *)(ws + s->off_l);
  int64_t *lim = (int64_t *)(ws + s->off_lim), *hrow = (int64_t *)(ws + s->off_h);
  const AT_T *q = a->q, *k = a->k, *v = a->v, *bias = a->bias;
  const AT_T scale = (AT_T)s->scale;

  /* Key lengths clamped to 0..Skv bound every row of the batch. */
  int64_t kl = s->Skv;
  if (s->has_kl) {
    const int64_t n = a->key_lengths[b * s->kls];
    kl = n < 0 ? 0 : n < s->Skv ? n : s->Skv;
  }
  /* The rows: their query and head, their key limits (a prefix of the
   * keys: key lengths and the bottom-right causal bound are both upper
   * bounds), packed Q, and the running statistics. */
  int64_t max_lim = 0;
  for (int64_t rr = 0; rr < nrp; rr++) {
    m[rr] = -INFINITY;
    l[rr] = 0.0;
    for (int64_t c = 0; c < dvp; c++) O[rr * dvp + c] = 0;
    if (rr >= nr) {
      lim[rr] = 0;
      hrow[rr] = 0;
      for (int64_t d = 0; d < D; d++) Qp[rr * D + d] = 0;
      continue;
    }
    const int64_t r = r0 + rr, i = r / s->group, h = g * s->group + (r - i * s->group);
    int64_t li = kl;
    if (s->causal) {
      const int64_t c = i + s->Skv - s->Sq + 1;
      if (c < li) li = c < 0 ? 0 : c;
    }
    lim[rr] = li;
    hrow[rr] = h;
    if (li > max_lim) max_lim = li;
    const AT_T *qr = q + b * s->qs[0] + h * s->qs[1] + i * s->qs[2];
    if (s->qs[3] == 1)
      memcpy(Qp + rr * D, qr, (size_t)D * sizeof(AT_T));
    else
      for (int64_t d = 0; d < D; d++) Qp[rr * D + d] = qr[d * s->qs[3]];
  }
  /* The packed K and V blocks of this (b, g) that the thread's slice holds
   * from earlier tasks (with the cache: tag[0] names the pair, tag[1] the
   * number of blocks, always a prefix since every task walks the key blocks
   * from 0); without it one block is packed at a time. */
  if (!s->kv_cache || tag[0] != bg + 1) {
    tag[0] = bg + 1;
    tag[1] = 0;
  }
  const AT_T *kb = k + b * s->ks[0] + g * s->ks[1];
  const AT_T *vb = v + b * s->vs[0] + g * s->vs[1];
  for (int64_t j0 = 0; j0 < max_lim; j0 += ATT_BK) {
    const int64_t bk = max_lim - j0 < ATT_BK ? max_lim - j0 : ATT_BK;
    const int64_t bkc = (bk + AT_NR * AT_L - 1) / (AT_NR * AT_L) * (AT_NR * AT_L);
    const int64_t blk = j0 / ATT_BK;
    AT_T *Kt = s->kv_cache ? Kt0 + blk * D * ATT_BK : Kt0;
    AT_T *Vp = s->kv_cache ? Vp0 + blk * ATT_BK * dvp : Vp0;
    /* Pack K^T [D][ATT_BK] (zero columns past the keys) and V [ATT_BK][dvp]
     * (zero padding columns). A cached block holds every key of the block
     * that exists (up to Skv), so that a later task with a larger limit can
     * use it. */
    if (!s->kv_cache || blk >= tag[1]) {
      const int64_t nk = s->kv_cache ? (s->Skv - j0 < ATT_BK ? s->Skv - j0 : ATT_BK) : bk;
      const int64_t nkc = (nk + AT_NR * AT_L - 1) / (AT_NR * AT_L) * (AT_NR * AT_L);
      for (int64_t jj = 0; jj < nk; jj++) {
        const AT_T *kr = kb + (j0 + jj) * s->ks[2];
        for (int64_t d = 0; d < D; d++) Kt[d * ATT_BK + jj] = kr[d * s->ks[3]];
        const AT_T *vr = vb + (j0 + jj) * s->vs[2];
        if (s->vs[3] == 1)
          memcpy(Vp + jj * dvp, vr, (size_t)Dv * sizeof(AT_T));
        else
          for (int64_t c = 0; c < Dv; c++) Vp[jj * dvp + c] = vr[c * s->vs[3]];
        for (int64_t c = Dv; c < dvp; c++) Vp[jj * dvp + c] = 0;
      }
      if (nk < nkc)
        for (int64_t d = 0; d < D; d++)
          for (int64_t jj = nk; jj < nkc; jj++) Kt[d * ATT_BK + jj] = 0;
      if (s->kv_cache) tag[1] = blk + 1;
    }
    /* S = scale Q K^T over the block's columns. */
    for (int64_t rr = 0; rr < nrp; rr += AT_MR)
      for (int64_t c0 = 0; c0 < bkc; c0 += AT_NR * AT_L)
        AT_NAME(at_qk_tile)(Qp + rr * D, Kt + c0, S + rr * ATT_BK + c0, D, scale);
    /* Per row: bias, masks, the online softmax; S becomes P. */
    for (int64_t rr = 0; rr < nrp; rr++) {
      AT_T *sr = S + rr * ATT_BK;
      const int64_t nv = lim[rr] - j0 < bk ? lim[rr] - j0 : bk;
      if (nv <= 0) {
        for (int64_t jj = 0; jj < bkc; jj++) sr[jj] = 0;
        continue;
      }
      if (s->has_bias) {
        const int64_t r = r0 + rr, i = r / s->group;
        const AT_T *br = bias + b * s->bs[0] + hrow[rr] * s->bs[1] + i * s->bs[2] + j0 * s->bs[3];
        const int64_t bs3 = s->bs[3];
        if (bs3 == 1)
          for (int64_t jj = 0; jj < nv; jj++) sr[jj] += br[jj];
        else
          for (int64_t jj = 0; jj < nv; jj++) sr[jj] += br[jj * bs3];
      }
      for (int64_t jj = nv; jj < bkc; jj++) sr[jj] = -INFINITY;
      AT_V vm = AT_NAME(at_set)(-INFINITY);
      for (int64_t jj = 0; jj < bkc; jj += AT_L) vm = AT_NAME(at_max)(vm, AT_NAME(at_load)(sr + jj));
      const double bm = (double)AT_NAME(at_hmax)(vm);
      const double m_new = bm > m[rr] ? bm : m[rr];
      /* A row with no finite score yet keeps P = exp(-inf - 0) = 0. */
      const double m_use = m_new == -INFINITY ? 0.0 : m_new;
      const AT_V vmu = AT_NAME(at_set)((AT_T)m_use);
      AT_V vsum = (AT_V){0};
      for (int64_t jj = 0; jj < bkc; jj += AT_L) {
        const AT_V p = AT_NAME(at_exp)(AT_NAME(at_load)(sr + jj) - vmu);
        AT_NAME(at_store)(sr + jj, p);
        vsum += p;
      }
      const double rs = (double)AT_NAME(at_hsum)(vsum);
      const double corr = m[rr] == m_use ? 1.0 : exp(m[rr] - m_use);
      l[rr] = l[rr] * corr + rs;
      m[rr] = m_new;
      if (corr != 1.0) {
        const AT_V vc = AT_NAME(at_set)((AT_T)corr);
        AT_T *orow = O + rr * dvp;
        for (int64_t c = 0; c < dvp; c += AT_L)
          AT_NAME(at_store)(orow + c, AT_NAME(at_load)(orow + c) * vc);
      }
    }
    /* O += P V over the keys the group's rows see: a key no row of the
     * group sees is not read, so a NaN or infinity of v there cannot reach
     * them through its weight 0 (only a row of the same group that sees
     * fewer keys than another can still get 0 * NaN). */
    for (int64_t rr = 0; rr < nrp; rr += AT_MR) {
      int64_t kg = 0;
      for (int64_t qr = rr; qr < rr + AT_MR; qr++) {
        const int64_t nv = lim[qr] - j0 < bk ? lim[qr] - j0 : bk;
        if (nv > kg) kg = nv;
      }
      if (kg <= 0) continue;
      int64_t c0 = 0;
      for (; c0 + AT_NR * AT_L <= dvp; c0 += AT_NR * AT_L)
        AT_NAME(at_pv_tile)(S + rr * ATT_BK, Vp + c0, O + rr * dvp + c0, kg, dvp, dvp, AT_NR);
      for (; c0 < dvp; c0 += AT_L)
        AT_NAME(at_pv_tile)(S + rr * ATT_BK, Vp + c0, O + rr * dvp + c0, kg, dvp, dvp, 1);
    }
  }
  /* o = O / l and lse = m + log l; a row without any weight (every key
   * masked) gives o = 0 and lse = -inf. */
  AT_T *o = a->o, *lse = a->lse;
  for (int64_t rr = 0; rr < nr; rr++) {
    const int64_t r = r0 + rr, i = r / s->group, h = hrow[rr];
    AT_T *orow = o + b * s->os[0] + h * s->os[1] + i * s->os[2];
    const int empty = !(l[rr] > 0.0) && !isnan(l[rr]);
    const double inv = empty ? 0.0 : 1.0 / l[rr];
    for (int64_t c = 0; c < Dv; c++)
      orow[c * s->os[3]] = empty ? (AT_T)0 : (AT_T)((double)O[rr * dvp + c] * inv);
    if (s->has_lse)
      lse[b * s->ls[0] + h * s->ls[1] + i * s->ls[2]] =
          empty ? (AT_T)-INFINITY : (AT_T)(m[rr] + log(l[rr]));
  }
}

#undef AT_NAME
#undef AT_NAME2_
#undef AT_NAME3_
