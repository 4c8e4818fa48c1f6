/*
 * Depthwise conv2d (groups == C == K: one filter per channel) as a direct SIMD
 * kernel: any filter size, stride, dilation and padding, packed NCHW or NHWC,
 * the bias and activation fused into the store.
 *
 * A depthwise convolution does R*S multiply-adds per output and reuses nothing
 * across channels, so a GEMM formulation only adds overhead; the kernel is
 * bound by loads and memory, and the point is to keep every lane busy
 * whatever the image size. Three paths, chosen at plan time (dw_reshape):
 *   - NCHW planes (NCHW problems with at least 56x56 outputs per plane at
 *     stride 1, or at column stride 2 with x within 8 MiB, where
 *     it measured faster, see dw_reshape, and whose padded plane fits the
 *     per-thread buffer, dwp_layout): W in the lanes, one (image, channel)
 *     plane per task, the plane buffered padded and split by column phase
 *     (vector shuffles for stride 2) so that every tap is one unaligned load;
 *     no transposes. See "The NCHW plane kernel"
 *     below. The two paths that follow then serve NHWC and very large planes.
 *   - Channel vectors (every NHWC problem, and NCHW unless it has few channels
 *     and wide rows, dw_nchw_cvec): a vector holds VL consecutive channels of
 *     one pixel (16 AVX-512, 8 AVX2, 4 baseline). Input rows are buffered
 *     padded ([pad_left + W + pad_right][VL], zero padding columns) per work
 *     item (image, channel block, chunk of output rows): NHWC rows by a copy,
 *     NCHW rows by VL x VL register transposes of the VL channel planes, and
 *     NCHW output rows go back through the inverse transpose, so no full copy
 *     of x or y is made. The kernels compute tiles of 8 (AVX-512) or 4 output
 *     pixels, with fixed-width variants for 3x3 and 5x5 at stride 1 and 2
 *     that load each input pixel of a filter row once; see "The
 *     channel-vector path" below and doc/cpu.md.
 *   - NCHW spatial: each vector holds consecutive outputs of one output row.
 *     Columns whose taps all fall inside the image (the interior) are
 *     computed without bounds checks: stride 1 loads directly, stride 2
 *     (AVX-512) loads two vectors and keeps the even lanes, other strides
 *     gather. The border columns take a scalar path with checks. The pool
 *     splits the N*C planes; the activation runs over each output row right
 *     after it is written (adnn_cpu_epilogue_f32), while it is in cache.
 *
 * The channel-vector kernels are written once against simd.h's vector types
 * (the ADNN_SIMD_VECTOR_PART section, instantiated per instruction set by
 * simd_instantiate.h into adnn_f32_conv2d_depthwise_cvec__<isa>); the
 * spatial kernels are hand-written with intrinsics per set
 * (adnn_f32_conv2d_depthwise_direct__<isa>). The plan's reshape step picks the
 * tables of the plugin's level, so execution never dispatches on the
 * instruction set.
 */
#ifdef ADNN_SIMD_VECTOR_PART
/* ---- The channel-vector kernels (one copy per instruction set) ----------
 *
 * A channel block is VL consecutive channels of one image, held pixel-major
 * in the thread's row buffers: pixel w of a buffered row is the vector
 * row + w * VL. Each buffered input row carries its left and right padding as
 * zero pixels, so the kernel below never tests a bound. */

/* a * b + c: one FMA in the AVX2 and AVX-512 regions (gnu11 contracts it). */
SIMD_INLINE VF NAME(dw_fma)(VF a, VF b, VF c) { return a * b + c; }

/* Stores the QT accumulators of a tile through the activation: act >= 0 is
 * a constant kind (the switch folds away), act < 0 the run-time kind
 * -1 - act, dispatched once per tile. */
SIMD_INLINE void NAME(dw_store_k)(const int act, const int QT, const VF *acc, int64_t q,
                                  float *out, int64_t ops, int nvalid,
                                  const NAME(act_params) *pa) {
#pragma GCC unroll 16
  for (int i = 0; i < QT; i++) {
    VF v = NAME(vact)(act, acc[i], pa);
    if (nvalid == VL)
      NAME(vstore)(out + (q + i) * ops, v);
    else
      NAME(vstore_n)(out + (q + i) * ops, v, (size_t)nvalid);
  }
}
SIMD_INLINE void NAME(dw_store)(const int act, const int QT, const VF *acc, int64_t q,
                                float *out, int64_t ops, int nvalid, const NAME(act_params) *pa) {
  if (act >= 0) {
    NAME(dw_store_k)(act, QT, acc, q, out, ops, nvalid, pa);
    return;
  }
  ADNN_ACT_SWITCH(-1 - act, NAME(dw_store_k)(ACT, QT, acc, q, out, ops, nvalid, pa));
}

/* Output pixels [q, q + QT) of one output row of one channel block, for
 * filters of S columns with column stride SW and no dilation (dilation 1):
 * each input pixel of a filter row is loaded once and used by every output
 * and tap it meets, so a 3x3 stride-1 tile of 8 outputs loads 10 vectors per
 * filter row for 24 FMAs. QT, S and SW are constants at every call. */
SIMD_INLINE void NAME(dw_tile_fixed)(int act, const int QT, const int S, const int SW,
                                     const float *const *rows, int64_t R, int64_t ps,
                                     int64_t cofs, const float *wb, VF bias, int64_t q,
                                     float *out, int64_t ops, int nvalid,
                                     const NAME(act_params) *pa) {
  enum { NXMAX = 2 * 16 + 8 };
  VF acc[16];
#pragma GCC unroll 16
  for (int i = 0; i < QT; i++) acc[i] = bias;
  const int NX = (QT - 1) * SW + S;
  for (int64_t r = 0; r < R; r++) {
    const float *xr = rows[r] + (q * SW - cofs) * ps;
    const float *wr = wb + r * S * VL;
    VF xv[NXMAX];
#pragma GCC unroll 40
    for (int j = 0; j < NX; j++) xv[j] = NAME(vload)(xr + j * ps);
#pragma GCC unroll 8
    for (int s = 0; s < S; s++) {
      VF w = NAME(vload)(wr + s * VL);
#pragma GCC unroll 16
      for (int i = 0; i < QT; i++) acc[i] = NAME(dw_fma)(w, xv[i * SW + s], acc[i]);
    }
  }
  NAME(dw_store)(act, QT, acc, q, out, ops, nvalid, pa);
}

/* The same for any filter width, stride and dilation (taps from L1). */
SIMD_INLINE void NAME(dw_tile_any)(int act, const int QT, const float *const *rows, int64_t R,
                                   int64_t ps, int64_t cofs, int64_t S, int64_t sw, int64_t dw,
                                   const float *wb, VF bias, int64_t q, float *out, int64_t ops,
                                   int nvalid, const NAME(act_params) *pa) {
  VF acc[8];
#pragma GCC unroll 8
  for (int i = 0; i < QT; i++) acc[i] = bias;
  for (int64_t r = 0; r < R; r++) {
    const float *xr = rows[r] + (q * sw - cofs) * ps;
    for (int64_t s = 0; s < S; s++) {
      VF w = NAME(vload)(wb + (r * S + s) * VL);
      const float *xs = xr + s * dw * ps;
#pragma GCC unroll 8
      for (int i = 0; i < QT; i++)
        acc[i] = NAME(dw_fma)(w, NAME(vload)(xs + i * sw * ps), acc[i]);
    }
  }
  NAME(dw_store)(act, QT, acc, q, out, ops, nvalid, pa);
}

/* The register tile: 32 vector registers (AVX-512) hold 8 accumulators, the
 * input pixels of a filter row and a tap; 16 (AVX2, SSE2) hold 4. */
#if ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX512
#define DW_QT 8
#else
#define DW_QT 4
#endif

/* A whole output row in tiles of T outputs (T a constant), TILE(T, q)
 * computing outputs [q, q + T). A row of Q >= T outputs ends with a tile
 * that overlaps the one before (its outputs are recomputed and stored
 * again with the same values) instead of a scalar tail, whose single
 * accumulator would make one FMA latency chain; a shorter row takes tiles
 * of T/2, T/4, ... the same way. */
#define DW_ROW_TILES(TILE)                                   \
  do {                                                       \
    const int64_t n_ = q1 - q0;                              \
    if (n_ >= DW_QT) {                                       \
      int64_t q = q0;                                        \
      for (; q + DW_QT <= q1; q += DW_QT) TILE(DW_QT, q);    \
      if (q < q1) TILE(DW_QT, q1 - DW_QT);                   \
    } else if (DW_QT > 4 && n_ >= 4) {                       \
      TILE(4, q0);                                           \
      TILE(4, q1 - 4);                                       \
    } else if (n_ >= 2) {                                    \
      TILE(2, q0);                                           \
      if (n_ > 2) TILE(2, n_ > 4 ? q0 + 2 : q1 - 2);         \
      if (n_ > 4) TILE(2, q1 - 2);                           \
    } else if (n_ == 1) {                                    \
      TILE(1, q0);                                           \
    }                                                        \
  } while (0)

/* One output row with the activation ACT_ (a constant) for every filter
 * shape: the fixed-width kernels for 3x3 and 5x5 at stride 1 and 2 without
 * dilation, the generic one otherwise. */
#define DW_ROW_ACT(ACT_)                                                                      \
  do {                                                                                        \
    switch (shape) {                                                                          \
      case 31:                                                                                \
        DW_ROW_TILES(DW_FIXED_3_1);                                                           \
        break;                                                                                \
      case 32:                                                                                \
        DW_ROW_TILES(DW_FIXED_3_2);                                                           \
        break;                                                                                \
      case 51:                                                                                \
        DW_ROW_TILES(DW_FIXED_5_1);                                                           \
        break;                                                                                \
      case 52:                                                                                \
        DW_ROW_TILES(DW_FIXED_5_2);                                                           \
        break;                                                                                \
      default:                                                                                \
        DW_ROW_TILES(DW_ANY);                                                                 \
    }                                                                                         \
  } while (0)
#define DW_FIXED(T, q, S_, SW_) \
  NAME(dw_tile_fixed)(DW_ACT, T, S_, SW_, rows, R, ps, cofs, wb, bias, q, out, ops, nvalid, &pa)
#define DW_FIXED_3_1(T, q) DW_FIXED(T, q, 3, 1)
#define DW_FIXED_3_2(T, q) DW_FIXED(T, q, 3, 2)
#define DW_FIXED_5_1(T, q) DW_FIXED(T, q, 5, 1)
#define DW_FIXED_5_2(T, q) DW_FIXED(T, q, 5, 2)
#define DW_ANY(T, q) \
  NAME(dw_tile_any)(DW_ACT, T, rows, R, ps, cofs, S, sw, dw, wb, bias, q, out, ops, nvalid, &pa)

/* Output pixels [q0, q1) of one output row of one channel block, from the
 * R filter rows whose input rows lie in the image (the others add nothing):
 * padded input column col of filter row r is the vector at
 * rows[r] + (col - cofs) * ps (a buffered row: ps = VL, cofs = 0; an NHWC row
 * of x itself: ps = C, cofs = pad_left), wb the taps of those filter rows
 * [R][S][VL], biasv the bias (or NULL); output pixel q goes to out + q * ops,
 * its first nvalid lanes when nvalid < VL. The activation is applied in registers before the
 * store: the identity, relu and clamp (relu6) have their own copies of the
 * row; the other activations share one that selects per tile. */
static void NAME(dw_row)(const adnn_activation *act, const float *const *rows, int64_t R,
                         int64_t ps, int64_t cofs, int64_t S, int64_t sw, int64_t dw, int64_t q0,
                         int64_t q1, const float *wb, const float *biasv, float *out, int64_t ops,
                         int nvalid) {
  const NAME(act_params) pa = NAME(act_params_make)(act);
  const VF bias = biasv ? NAME(vload)(biasv) : (VF){0};
#ifdef ADNN_CPU_COMPACT_KERNELS
  /* Sanitizer builds (the fuzz plugin, t/local.mk) compile only the generic
   * row: clang with AddressSanitizer needs more than ten minutes for the
   * fixed-width copies, and fuzzing checks the API, not their speed. */
#define DW_ACT (-1 - (int)act->kind)
  DW_ROW_TILES(DW_ANY);
#undef DW_ACT
#else
  const int shape = dw != 1 ? 0 : (int)(S * 10 + sw);
  switch (act->kind) {
    case ADNN_ACTIVATION_IDENTITY:
#define DW_ACT ADNN_ACTIVATION_IDENTITY
      DW_ROW_ACT();
#undef DW_ACT
      break;
    case ADNN_ACTIVATION_RELU:
#define DW_ACT ADNN_ACTIVATION_RELU
      DW_ROW_ACT();
#undef DW_ACT
      break;
    case ADNN_ACTIVATION_CLAMP:
#define DW_ACT ADNN_ACTIVATION_CLAMP
      DW_ROW_ACT();
#undef DW_ACT
      break;
    default: {
      /* Rarer activations: one generic row, the kind chosen per tile. */
#define DW_ACT (-1 - (int)act->kind)
      DW_ROW_TILES(DW_ANY);
#undef DW_ACT
    }
  }
#endif
}
#undef DW_FIXED
#undef DW_FIXED_3_1
#undef DW_FIXED_3_2
#undef DW_FIXED_5_1
#undef DW_FIXED_5_2
#undef DW_ANY
#undef DW_ROW_ACT
#undef DW_ROW_TILES
#undef DW_QT

/* Two output rows of QT pixels each, for the fixed filter widths: rows0 and
 * rows1 hold the R buffered input rows (or zero rows) of output rows p and
 * p + 1. With 2 * QT independent accumulators the FMA latency is hidden
 * where a row holds too few pixels for one wide tile (7x7 images). */
SIMD_INLINE void NAME(dw_tile2_fixed)(int act, const int QT, const int S, const int SW,
                                      const float *const *rows0, const float *const *rows1,
                                      int64_t R, const float *wb, VF bias, int64_t q,
                                      float *out0, float *out1, int64_t ops, int nvalid,
                                      const NAME(act_params) *pa) {
  enum { NXMAX = 2 * 8 + 8 };
  VF acc0[8], acc1[8];
#pragma GCC unroll 8
  for (int i = 0; i < QT; i++) acc0[i] = acc1[i] = bias;
  const int NX = (QT - 1) * SW + S;
  for (int64_t r = 0; r < R; r++) {
    const float *xa = rows0[r] + q * SW * VL, *xb = rows1[r] + q * SW * VL;
    const float *wr = wb + r * S * VL;
    VF va[NXMAX], vb[NXMAX];
#pragma GCC unroll 24
    for (int j = 0; j < NX; j++) {
      va[j] = NAME(vload)(xa + j * VL);
      vb[j] = NAME(vload)(xb + j * VL);
    }
#pragma GCC unroll 8
    for (int s = 0; s < S; s++) {
      VF w = NAME(vload)(wr + s * VL);
#pragma GCC unroll 8
      for (int i = 0; i < QT; i++) {
        acc0[i] = NAME(dw_fma)(w, va[i * SW + s], acc0[i]);
        acc1[i] = NAME(dw_fma)(w, vb[i * SW + s], acc1[i]);
      }
    }
  }
  NAME(dw_store)(act, QT, acc0, q, out0, ops, nvalid, pa);
  NAME(dw_store)(act, QT, acc1, q, out1, ops, nvalid, pa);
}

/* Output rows p and p + 1 of one channel block from buffered rows (full R
 * rows each, zero rows outside the image), for 3x3 and 5x5 at stride 1 or 2
 * without dilation and the identity, relu or clamp activation; returns 0
 * (nothing done) otherwise, and the caller runs the rows one at a time. */
static int NAME(dw_row2)(const adnn_activation *act, const float *const *rows0,
                         const float *const *rows1, int64_t R, int64_t S, int64_t sw, int64_t dw,
                         int64_t Q, const float *wb, const float *biasv, float *out0,
                         float *out1, int64_t ops, int nvalid) {
#ifdef ADNN_CPU_COMPACT_KERNELS
  /* Sanitizer builds run the rows one at a time (see dw_row). */
  (void)act, (void)rows0, (void)rows1, (void)R, (void)S, (void)sw, (void)dw, (void)Q, (void)wb;
  (void)biasv, (void)out0, (void)out1, (void)ops, (void)nvalid;
  return 0;
#else
  const int shape = dw != 1 ? 0 : (int)(S * 10 + sw);
  if (shape != 31 && shape != 32 && shape != 51 && shape != 52) return 0;
  if (act->kind != ADNN_ACTIVATION_IDENTITY && act->kind != ADNN_ACTIVATION_RELU &&
      act->kind != ADNN_ACTIVATION_CLAMP)
    return 0;
  const NAME(act_params) pa = NAME(act_params_make)(act);
  const VF bias = biasv ? NAME(vload)(biasv) : (VF){0};
  const int64_t q0 = 0, q1 = Q;
#define DW_QT 4
#define DW_ROW_TILES2(TILE)                              \
  do {                                                   \
    const int64_t n_ = q1 - q0;                          \
    if (n_ >= DW_QT) {                                   \
      int64_t q = q0;                                    \
      for (; q + DW_QT <= q1; q += DW_QT) TILE(DW_QT, q); \
      if (q < q1) TILE(DW_QT, q1 - DW_QT);               \
    } else if (n_ >= 2) {                                \
      TILE(2, q0);                                       \
      if (n_ > 2) TILE(2, q1 - 2);                       \
    } else {                                             \
      TILE(1, q0);                                       \
    }                                                    \
  } while (0)
#define DW_T2(T, q, S_, SW_)                                                                \
  NAME(dw_tile2_fixed)(DW_ACT, T, S_, SW_, rows0, rows1, R, wb, bias, q, out0, out1, ops, \
                       nvalid, &pa)
#define DW_T2_3_1(T, q) DW_T2(T, q, 3, 1)
#define DW_T2_3_2(T, q) DW_T2(T, q, 3, 2)
#define DW_T2_5_1(T, q) DW_T2(T, q, 5, 1)
#define DW_T2_5_2(T, q) DW_T2(T, q, 5, 2)
#define DW_ROW2_ACT()                       \
  do {                                      \
    switch (shape) {                        \
      case 31:                              \
        DW_ROW_TILES2(DW_T2_3_1);           \
        break;                              \
      case 32:                              \
        DW_ROW_TILES2(DW_T2_3_2);           \
        break;                              \
      case 51:                              \
        DW_ROW_TILES2(DW_T2_5_1);           \
        break;                              \
      default:                              \
        DW_ROW_TILES2(DW_T2_5_2);           \
    }                                       \
  } while (0)
  switch (act->kind) {
    case ADNN_ACTIVATION_RELU:
#define DW_ACT ADNN_ACTIVATION_RELU
      DW_ROW2_ACT();
#undef DW_ACT
      break;
    case ADNN_ACTIVATION_CLAMP:
#define DW_ACT ADNN_ACTIVATION_CLAMP
      DW_ROW2_ACT();
#undef DW_ACT
      break;
    default:
#define DW_ACT ADNN_ACTIVATION_IDENTITY
      DW_ROW2_ACT();
#undef DW_ACT
  }
#undef DW_ROW2_ACT
#undef DW_T2
#undef DW_T2_3_1
#undef DW_T2_3_2
#undef DW_T2_5_1
#undef DW_T2_5_2
#undef DW_ROW_TILES2
#undef DW_QT
  return 1;
#endif
}

/* Transposes a VL x VL tile in registers: v[i] lane j becomes v[j] lane i. */
SIMD_INLINE void NAME(dw_transpose)(VF *v) {
#if ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX512
  __m512 t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps((__m512)v[i], (__m512)v[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps((__m512)v[i], (__m512)v[i + 1]);
  }
  /* Per 128-bit lane k: u[4g + j] holds column 4k + j of rows 4g..4g+3. */
  for (int g = 0; g < 16; g += 4) {
    u[g] = _mm512_shuffle_ps(t[g], t[g + 2], 0x44);
    u[g + 1] = _mm512_shuffle_ps(t[g], t[g + 2], 0xEE);
    u[g + 2] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0x44);
    u[g + 3] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
  }
  for (int j = 0; j < 4; j++) {
    __m512 a0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);
    __m512 a1 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xDD);
    __m512 b0 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
    __m512 b1 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xDD);
    v[j] = (VF)_mm512_shuffle_f32x4(a0, b0, 0x88);
    v[8 + j] = (VF)_mm512_shuffle_f32x4(a0, b0, 0xDD);
    v[4 + j] = (VF)_mm512_shuffle_f32x4(a1, b1, 0x88);
    v[12 + j] = (VF)_mm512_shuffle_f32x4(a1, b1, 0xDD);
  }
#elif ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX2
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps((__m256)v[i], (__m256)v[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps((__m256)v[i], (__m256)v[i + 1]);
  }
  for (int g = 0; g < 8; g += 4) {
    u[g] = _mm256_shuffle_ps(t[g], t[g + 2], 0x44);
    u[g + 1] = _mm256_shuffle_ps(t[g], t[g + 2], 0xEE);
    u[g + 2] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0x44);
    u[g + 3] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
  }
  for (int j = 0; j < 4; j++) {
    v[j] = (VF)_mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
    v[4 + j] = (VF)_mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
  }
#else
  for (int i = 0; i < VL; i++)
    for (int j = i + 1; j < VL; j++) {
      float a = v[i][j];
      v[i][j] = v[j][i];
      v[j][i] = a;
    }
#endif
}

/* Buffers n <= VL pixels of m <= VL channel rows (planar, row i at
 * src + i * ld) as n pixel vectors at dst + w * VL; lanes >= m are zero. */
static void NAME(dw_pack_planar)(const float *src, int64_t ld, int m, int64_t W, float *dst) {
  VF v[VL];
  for (int64_t w0 = 0; w0 < W; w0 += VL) {
    int n = W - w0 < VL ? (int)(W - w0) : VL;
    for (int i = 0; i < VL; i++)
      v[i] = i >= m ? (VF){0}
             : n == VL ? NAME(vload)(src + i * ld + w0)
                       : NAME(vload_n)(src + i * ld + w0, (size_t)n, 0.0f);
    NAME(dw_transpose)(v);
    for (int j = 0; j < n; j++) NAME(vstore)(dst + (w0 + j) * VL, v[j]);
  }
}

/* Buffers the nh whole rows of W pixels that follow each other in m <= VL
 * channel planes (row i at src + i * ld, nh * W contiguous floats) as padded
 * rows: pixel w of row k goes to dst + k * rf + w * VL. The transposes run
 * over the plane's contiguous floats, not row by row, so a narrow image
 * (W = 7, 14, 28) fills every one of them and loads partially only at the
 * end of the span. */
static void NAME(dw_pack_planar_rows)(const float *src, int64_t ld, int m, int64_t W, int64_t nh,
                                      float *dst, int64_t rf) {
  VF v[VL];
  const int64_t total = W * nh;
  int64_t k = 0, w = 0; /* the row and column of pixel k0 */
  for (int64_t k0 = 0; k0 < total; k0 += VL) {
    int n = total - k0 < VL ? (int)(total - k0) : VL;
    for (int i = 0; i < VL; i++)
      v[i] = i >= m ? (VF){0}
             : n == VL ? NAME(vload)(src + i * ld + k0)
                       : NAME(vload_n)(src + i * ld + k0, (size_t)n, 0.0f);
    NAME(dw_transpose)(v);
    for (int j = 0; j < n; j++) {
      NAME(vstore)(dst + k * rf + w * VL, v[j]);
      if (++w == W) w = 0, k++;
    }
  }
}

/* Stores the first n < VL lanes of v at p. AVX2 uses 128-, 64- and 32-bit
 * stores rather than vmaskmovps, which AMD Zen cores run as a slow
 * microcoded sequence (a narrow image's rows end in such a store). */
SIMD_INLINE void NAME(dw_store_part)(float *p, VF v, int n) {
#if ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX2
  __m128 h = _mm256_castps256_ps128((__m256)v);
  if (n & 4) {
    _mm_storeu_ps(p, h);
    p += 4;
    h = _mm256_extractf128_ps((__m256)v, 1);
  }
  if (n & 2) {
    _mm_storel_pi((__m64 *)(void *)p, h);
    p += 2;
    h = _mm_movehl_ps(h, h);
  }
  if (n & 1) _mm_store_ss(p, h);
#else
  NAME(vstore_n)(p, v, (size_t)n);
#endif
}

/* The inverse: Q pixel vectors at src + q * VL to m planar rows of Q floats
 * (row i at dst + i * ld). Q may span several output rows of y (they are
 * contiguous in each channel plane), so that narrow rows do not each end in
 * a partial transpose and partial stores. */
static void NAME(dw_unpack_planar)(const float *src, int64_t Q, int m, float *dst, int64_t ld) {
  VF v[VL];
  for (int64_t q0 = 0; q0 < Q; q0 += VL) {
    int n = Q - q0 < VL ? (int)(Q - q0) : VL;
    for (int j = 0; j < VL; j++) v[j] = j < n ? NAME(vload)(src + (q0 + j) * VL) : (VF){0};
    NAME(dw_transpose)(v);
    for (int i = 0; i < m; i++) {
      if (n == VL)
        NAME(vstore)(dst + i * ld + q0, v[i]);
      else
        NAME(dw_store_part)(dst + i * ld + q0, v[i], n);
    }
  }
}

/* Buffers W pixels of m <= VL channels (pixel w at src + w * ps) as W pixel
 * vectors; lanes >= m are zero. */
static void NAME(dw_pack_interleaved)(const float *src, int64_t ps, int m, int64_t W,
                                      float *dst) {
  if (m == VL)
    for (int64_t w = 0; w < W; w++) NAME(vstore)(dst + w * VL, NAME(vload)(src + w * ps));
  else
    for (int64_t w = 0; w < W; w++)
      NAME(vstore)(dst + w * VL, NAME(vload_n)(src + w * ps, (size_t)m, 0.0f));
}

/* ---- The NCHW plane kernel (W in the lanes) -------------------------------
 *
 * One (image, channel) plane at a time. The plane is first copied into the
 * thread's buffer with its padding as zeros, split by column phase for a
 * column stride sw > 1 (phase k holds the padded columns k, k + sw, ...), so
 * that every tap of every output vector is one unaligned load of
 * consecutive floats and nothing is tested in the loop: output column q of
 * tap s reads padded column q * sw + s * dw, which is element
 * q + (s * dw) / sw of phase (s * dw) % sw. The copy is one pass over a plane
 * that then sits in L1/L2, where the former path paid two transposes. */

/* RB output rows by CB vectors of outputs from column q: RB * CB independent
 * accumulators, each tap weight broadcast once for all of them. R, S, SW and
 * DW are constants at the specialized calls. */
SIMD_INLINE void NAME(dwp_tile)(const int RB, const int CB, const int64_t R, const int64_t S,
                                const int64_t SW, const int64_t DW, const float *b,
                                int64_t phs, int64_t ors, int64_t drs, const float *wc, float bias,
                                int64_t q, float *yr, int64_t Q) {
  VF acc[4][2];
#pragma GCC unroll 4
  for (int i = 0; i < RB; i++)
#pragma GCC unroll 2
    for (int k = 0; k < CB; k++) acc[i][k] = NAME(vset)(bias);
#pragma GCC unroll 5
  for (int64_t r = 0; r < R; r++) {
#pragma GCC unroll 5
    for (int64_t s = 0; s < S; s++) {
      const VF wv = NAME(vset)(wc[r * S + s]);
      const float *xs = b + ((s * DW) % SW) * phs + r * drs + (s * DW) / SW + q;
#pragma GCC unroll 4
      for (int i = 0; i < RB; i++)
#pragma GCC unroll 2
        for (int k = 0; k < CB; k++)
          acc[i][k] = NAME(dw_fma)(wv, NAME(vload)(xs + i * ors + k * VL), acc[i][k]);
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < RB; i++)
#pragma GCC unroll 2
    for (int k = 0; k < CB; k++) {
      int64_t left = Q - q - k * VL;
      if (left >= VL)
        NAME(vstore)(yr + i * Q + q + k * VL, acc[i][k]);
      else if (left > 0)
        NAME(vstore_n)(yr + i * Q + q + k * VL, acc[i][k], (size_t)left);
    }
}

/* All P output rows of one plane from the buffered input b: blocks of four
 * rows by two vectors (eight accumulators, enough to hide the FMA latency),
 * then single rows and vectors at the edges. */
SIMD_INLINE void NAME(dwp_rows)(const int64_t R, const int64_t S, const int64_t SW,
                                const int64_t DW, const float *b, int64_t phs, int64_t wb,
                                int64_t sh, int64_t dh, const float *wc, float bias, float *yc,
                                int64_t P, int64_t Q) {
  const int64_t ors = sh * wb, drs = dh * wb;
  int64_t p = 0;
  for (; p + 4 <= P; p += 4) {
    const float *bp = b + p * ors;
    float *yr = yc + p * Q;
    int64_t q = 0;
    for (; q + VL < Q; q += 2 * VL)
      NAME(dwp_tile)(4, 2, R, S, SW, DW, bp, phs, ors, drs, wc, bias, q, yr, Q);
    if (q < Q) NAME(dwp_tile)(4, 1, R, S, SW, DW, bp, phs, ors, drs, wc, bias, q, yr, Q);
  }
  for (; p < P; p++) {
    const float *bp = b + p * ors;
    float *yr = yc + p * Q;
    int64_t q = 0;
    for (; q + VL < Q; q += 2 * VL)
      NAME(dwp_tile)(1, 2, R, S, SW, DW, bp, phs, ors, drs, wc, bias, q, yr, Q);
    if (q < Q) NAME(dwp_tile)(1, 1, R, S, SW, DW, bp, phs, ors, drs, wc, bias, q, yr, Q);
  }
}

/* The even and the odd lanes of the 2 * VL floats lo, hi (lo first). */
#if VL == 16
#define DW_EVEN 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#define DW_ODD 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31
#elif VL == 8
#define DW_EVEN 0, 2, 4, 6, 8, 10, 12, 14
#define DW_ODD 1, 3, 5, 7, 9, 11, 13, 15
#else
#define DW_EVEN 0, 2, 4, 6
#define DW_ODD 1, 3, 5, 7
#endif
SIMD_INLINE VF NAME(dw_even)(VF lo, VF hi) {
#if ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX2
  /* One in-lane shuffle and one 64-bit permute (GCC's own lowering of the
   * shuffle below takes four vpermd and blends). */
  __m256 e = _mm256_shuffle_ps((__m256)lo, (__m256)hi, 0x88);
  return (VF)_mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8));
#elif defined(__clang__) || __GNUC__ >= 12
  return __builtin_shufflevector(lo, hi, DW_EVEN);
#else /* no __builtin_shufflevector before GCC 12: pick the lanes one by one */
  VF e;
  for (int l = 0; l < VL; l++) e[l] = l < VL / 2 ? lo[2 * l] : hi[2 * l - VL];
  return e;
#endif
}
SIMD_INLINE VF NAME(dw_odd)(VF lo, VF hi) {
#if ADNN_SIMD_ISA == ADNN_CPU_ISA_AVX2
  __m256 o = _mm256_shuffle_ps((__m256)lo, (__m256)hi, 0xDD);
  return (VF)_mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), 0xD8));
#elif defined(__clang__) || __GNUC__ >= 12
  return __builtin_shufflevector(lo, hi, DW_ODD);
#else
  VF o;
  for (int l = 0; l < VL; l++) o[l] = l < VL / 2 ? lo[2 * l + 1] : hi[2 * l + 1 - VL];
  return o;
#endif
}
#undef DW_EVEN
#undef DW_ODD

/* One plane: buffer the padded input (hb rows of wb floats per phase, the
 * rows above and below the image and the columns outside it zero), then the
 * rows, specialized for 3x3 and 5x5 at strides 1 and 2 without dilation. */
static void NAME(dw_plane)(const float *xc, int64_t H, int64_t W, const float *wc, float bias,
                           int64_t R, int64_t S, int64_t sh, int64_t sw, int64_t dh, int64_t dw,
                           int64_t pt, int64_t pl, int64_t P, int64_t Q, float *b, int64_t hb,
                           int64_t wb, float *yc) {
  const int64_t phs = hb * wb;
  for (int64_t hh = 0; hh < hb; hh++) {
    const int64_t h = hh - pt;
    if (h < 0 || h >= H) {
      for (int64_t k = 0; k < sw; k++)
        memset(b + k * phs + hh * wb, 0, (size_t)wb * sizeof(float));
      continue;
    }
    const float *xr = xc + h * W;
    if (sw == 1) {
      /* wb >= pl + W always (dwp_layout), so the row fits whole. */
      float *br = b + hh * wb;
      memset(br, 0, (size_t)pl * sizeof(float));
      memcpy(br + pl, xr, (size_t)W * sizeof(float));
      memset(br + pl + W, 0, (size_t)(wb - pl - W) * sizeof(float));
    } else if (sw == 2) {
      /* The padded row in the scratch row t, then split into its even and
       * odd columns VL at a time: two loads and two lane shuffles per 2 * VL
       * columns, where a scalar split measured several times slower than
       * the taps themselves. */
      float *t = b + 2 * phs;
      memset(t, 0, (size_t)pl * sizeof(float));
      memcpy(t + pl, xr, (size_t)W * sizeof(float));
      if (pl + W < 2 * wb) memset(t + pl + W, 0, (size_t)(2 * wb - pl - W) * sizeof(float));
      float *be = b + hh * wb, *bo = b + phs + hh * wb;
      for (int64_t i = 0; i < wb; i += VL) {
        const VF lo = NAME(vload)(t + 2 * i), hi = NAME(vload)(t + 2 * i + VL);
        NAME(vstore)(be + i, NAME(dw_even)(lo, hi));
        NAME(vstore)(bo + i, NAME(dw_odd)(lo, hi));
      }
    } else {
      for (int64_t k = 0; k < sw; k++) {
        float *br = b + k * phs + hh * wb;
        for (int64_t i = 0; i < wb; i++) {
          int64_t w = i * sw + k - pl;
          br[i] = w >= 0 && w < W ? xr[w] : 0.0f;
        }
      }
    }
  }
#ifndef ADNN_CPU_COMPACT_KERNELS
  const int shape = dw != 1 ? 0 : (int)(R * 100 + S * 10 + sw);
  switch (shape) {
    case 331:
      NAME(dwp_rows)(3, 3, 1, 1, b, phs, wb, sh, dh, wc, bias, yc, P, Q);
      return;
    case 332:
      NAME(dwp_rows)(3, 3, 2, 1, b, phs, wb, sh, dh, wc, bias, yc, P, Q);
      return;
    case 551:
      NAME(dwp_rows)(5, 5, 1, 1, b, phs, wb, sh, dh, wc, bias, yc, P, Q);
      return;
    case 552:
      NAME(dwp_rows)(5, 5, 2, 1, b, phs, wb, sh, dh, wc, bias, yc, P, Q);
      return;
    default:
      break;
  }
#endif
  NAME(dwp_rows)(R, S, sw, dw, b, phs, wb, sh, dh, wc, bias, yc, P, Q);
}

/* This instruction set's copy. */
static const dwc_fns NAME(adnn_f32_conv2d_depthwise_cvec) = {
    NAME(dw_row),           NAME(dw_row2),          NAME(dw_pack_planar),
    NAME(dw_pack_planar_rows), NAME(dw_unpack_planar), NAME(dw_pack_interleaved),
    NAME(dw_plane),         VL};

#else /* the dispatch part */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "kernels/cpu/conv2d.h"
#include "kernels/cpu/simd.h"

/* One instruction set's channel-vector kernels (the vector part above). */
typedef struct dwc_fns {
  void (*row)(const adnn_activation *act, const float *const *rows, int64_t R, int64_t ps,
              int64_t cofs, int64_t S, int64_t sw, int64_t dw, int64_t q0, int64_t q1,
              const float *wb, const float *biasv, float *out, int64_t ops, int nvalid);
  int (*row2)(const adnn_activation *act, const float *const *rows0, const float *const *rows1,
              int64_t R, int64_t S, int64_t sw, int64_t dw, int64_t Q, const float *wb,
              const float *biasv, float *out0, float *out1, int64_t ops, int nvalid);
  void (*pack_planar)(const float *src, int64_t ld, int m, int64_t W, float *dst);
  void (*pack_planar_rows)(const float *src, int64_t ld, int m, int64_t W, int64_t nh,
                           float *dst, int64_t rf);
  void (*unpack_planar)(const float *src, int64_t Q, int m, float *dst, int64_t ld);
  void (*pack_interleaved)(const float *src, int64_t ps, int m, int64_t W, float *dst);
  /* NCHW: one whole (image, channel) plane through the padded buffer b. */
  void (*plane)(const float *xc, int64_t H, int64_t W, const float *wc, float bias, int64_t R,
                int64_t S, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t pt, int64_t pl,
                int64_t P, int64_t Q, float *b, int64_t hb, int64_t wb, float *yc);
  int vl;
} dwc_fns;

#define ADNN_SIMD_KERNEL "kernels/cpu/conv2d-depthwise_direct.c"
#include "kernels/cpu/simd_instantiate.h"

static const dwc_fns *const dwc_by_isa[ADNN_CPU_ISA_COUNT] =
    ADNN_CPU_ISA_TABLE(adnn_f32_conv2d_depthwise_cvec);

static int dw_supports(const void *problem, const adnn_cpu_env *env, char *why,
                       size_t why_size) {
  (void)env;
  const adnn_plugin_conv2d *g = problem;
  int layout = adnn_cpu_conv2d_common_supports(g, why, why_size);
  if (!layout) return 0;
  if (g->groups != g->C || g->K != g->C)
    return adnn_cpu_conv2d_no(why, why_size, "needs groups == C == K (depthwise, multiplier 1)");
  /* The AVX-512 path indexes with 32-bit lane offsets (gathers). */
  if (g->stride_w > INT32_MAX / 2 / g->W || g->C > INT32_MAX / 2 / 16)
    return adnn_cpu_conv2d_no(why, why_size, "image too wide");
  return 1;
}

struct dw_job;

/* One instruction set's kernels. */
typedef struct dw_fns {
  /* NCHW: the interior columns [qa, qb) of output row p. */
  void (*interior)(const struct dw_job *j, const float *xc, const float *wc, int64_t p, float *yr,
                   float bias);
} dw_fns;

typedef struct dw_state {
  adnn_cpu_act act;
  const dw_fns *fn;
  const dwc_fns *fn2;
  int cvec;       /* the channel-vector path, else the NCHW spatial one */
  int nhwc;       /* layout: NHWC, else NCHW */
  int act_pass;   /* the activation is not the identity: run the epilogue */
  int repack;     /* NCHW: the filters are not packed [C][R][S]; pack them first */
  int64_t qa, qb; /* NCHW: the interior output columns [qa, qb) */
  int64_t tasks, grain;
  /* The channel-vector path (dwc_layout): the ring span, the padded row
   * width, the workspace layout in floats, the pool size it was cut for, the
   * channel blocks and the row chunks. */
  int64_t span, wp, row_floats, off_rows, off_tags, off_ring, off_obuf, off_wb, off_bias;
  int64_t slice_floats, threads, nb, chunk_rows, chunks;
  int w_taps;         /* each channel's R*S taps are contiguous in w */
  int plane;          /* a chunk's padded input is buffered whole, not in the ring */
  int two_rows;       /* plane: output rows go in pairs (row2) */
  int64_t orows;      /* NCHW: output rows buffered before their store to y */
  /* The NCHW plane path (dwp_layout): buffer rows and floats per phase row,
   * floats per thread slice, and where the repacked filters start. */
  int dwp;
  int64_t dwp_hb, dwp_wb, dwp_slice, dwp_off_w;
} dw_state;

typedef struct dw_job {
  const adnn_plugin_conv2d *g;
  const dw_state *s;
  const float *x, *w, *bias;
  float *y;
  int64_t qa, qb; /* NCHW: the interior output columns [qa, qb) */
  float *ws;      /* the channel-vector path's workspace */
} dw_job;

/* ---- NCHW ---------------------------------------------------------------- */

/* One output at column q of a row, with bounds checks (borders, portable). */
static inline float nchw_point(const dw_job *j, const float *xc, const float *wc, int64_t p,
                               int64_t q, float bias) {
  const adnn_plugin_conv2d *g = j->g;
  float acc = bias;
  for (int64_t r = 0; r < g->R; r++) {
    int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
    if (h < 0 || h >= g->H) continue;
    const float *xr = xc + h * g->W;
    for (int64_t s = 0; s < g->S; s++) {
      int64_t w = q * g->stride_w - g->pad_left + s * g->dilation_w;
      if (w >= 0 && w < g->W) acc += wc[r * g->S + s] * xr[w];
    }
  }
  return acc;
}

/* The interior columns [qa, qb) of output row p, portable C. */
static void nchw_interior__base(const dw_job *j, const float *xc, const float *wc, int64_t p,
                                float *yr, float bias) {
  const adnn_plugin_conv2d *g = j->g;
  for (int64_t q = j->qa; q < j->qb; q++) yr[q] = bias;
  for (int64_t r = 0; r < g->R; r++) {
    int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
    if (h < 0 || h >= g->H) continue;
    for (int64_t s = 0; s < g->S; s++) {
      const float *xs = xc + h * g->W - g->pad_left + s * g->dilation_w;
      float wv = wc[r * g->S + s];
      for (int64_t q = j->qa; q < j->qb; q++) yr[q] += wv * xs[q * g->stride_w];
    }
  }
}

#if defined(__x86_64__) || defined(__i386__)
/* AVX2: 8 outputs per vector, two vectors per step for independent FMA chains;
 * strides other than 1 gather. Returns the first column left to the portable
 * code (nchw_interior__avx2 finishes the row). */
__attribute__((target("avx2,fma"))) static int64_t nchw_interior_steps__avx2(const dw_job *j,
                                                                             const float *xc,
                                                                             const float *wc,
                                                                             int64_t p, float *yr,
                                                                             float bias) {
  const adnn_plugin_conv2d *g = j->g;
  int64_t sw = g->stride_w, q = j->qa;
  __m256i idx =
      _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)sw));
  for (; q + 16 <= j->qb; q += 16) {
    __m256 a0 = _mm256_set1_ps(bias), a1 = a0;
    for (int64_t r = 0; r < g->R; r++) {
      int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
      if (h < 0 || h >= g->H) continue;
      const float *xs = xc + h * g->W - g->pad_left + q * sw;
      for (int64_t s = 0; s < g->S; s++, xs += g->dilation_w) {
        __m256 wv = _mm256_broadcast_ss(wc + r * g->S + s);
        if (sw == 1) {
          a0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(xs), a0);
          a1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(xs + 8), a1);
        } else {
          a0 = _mm256_fmadd_ps(wv, _mm256_i32gather_ps(xs, idx, 4), a0);
          a1 = _mm256_fmadd_ps(wv, _mm256_i32gather_ps(xs + 8 * sw, idx, 4), a1);
        }
      }
    }
    _mm256_storeu_ps(yr + q, a0);
    _mm256_storeu_ps(yr + q + 8, a1);
  }
  return q;
}

/* AVX-512: 16 outputs per vector; a strided load of up to 16 lanes (mask m). */
__attribute__((target("avx512f"))) static inline __m512 load_strided_512(const float *xs,
                                                                         int64_t sw, __m512i idx,
                                                                         __m512i even,
                                                                         __mmask16 m) {
  if (sw == 1) return _mm512_maskz_loadu_ps(m, xs);
  if (sw == 2 && m == 0xFFFF) {
    /* 31 consecutive floats hold the 16 even-indexed ones; the 32nd may lie
     * past the end of x, so it is masked off. Partial vectors gather. */
    __m512 lo = _mm512_loadu_ps(xs), hi = _mm512_maskz_loadu_ps((__mmask16)0x7FFF, xs + 16);
    return _mm512_permutex2var_ps(lo, even, hi);
  }
  return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, xs, 4);
}

__attribute__((target("avx512f"))) static void nchw_interior__avx512(const dw_job *j,
                                                                     const float *xc,
                                                                     const float *wc, int64_t p,
                                                                     float *yr, float bias) {
  const adnn_plugin_conv2d *g = j->g;
  int64_t sw = g->stride_w;
  __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m512i idx = _mm512_mullo_epi32(lane, _mm512_set1_epi32((int)sw));
  __m512i even = _mm512_add_epi32(lane, lane);
  /* Steps of up to four vectors (64 outputs) for four independent FMA chains;
   * the last step masks its lanes past qb, so there is no scalar remainder. */
  for (int64_t q = j->qa; q < j->qb; q += 64) {
    __mmask16 m[4];
    for (int i = 0; i < 4; i++) {
      int64_t left = j->qb - q - 16 * i;
      m[i] = left >= 16 ? (__mmask16)0xFFFF : left > 0 ? (__mmask16)((1u << left) - 1) : 0;
    }
    __m512 a0 = _mm512_set1_ps(bias), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t r = 0; r < g->R; r++) {
      int64_t h = p * g->stride_h - g->pad_top + r * g->dilation_h;
      if (h < 0 || h >= g->H) continue;
      const float *xs = xc + h * g->W - g->pad_left + q * sw;
      const float *wr = wc + r * g->S;
      if (sw == 1) {
        for (int64_t s = 0; s < g->S; s++, xs += g->dilation_w) {
          __m512 wv = _mm512_set1_ps(wr[s]);
          a0 = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(m[0], xs), a0);
          a1 = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(m[1], xs + 16), a1);
          a2 = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(m[2], xs + 32), a2);
          a3 = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(m[3], xs + 48), a3);
        }
      } else {
        for (int64_t s = 0; s < g->S; s++, xs += g->dilation_w) {
          __m512 wv = _mm512_set1_ps(wr[s]);
          a0 = _mm512_fmadd_ps(wv, load_strided_512(xs, sw, idx, even, m[0]), a0);
          if (m[1])
            a1 = _mm512_fmadd_ps(wv, load_strided_512(xs + 16 * sw, sw, idx, even, m[1]), a1);
          if (m[2])
            a2 = _mm512_fmadd_ps(wv, load_strided_512(xs + 32 * sw, sw, idx, even, m[2]), a2);
          if (m[3])
            a3 = _mm512_fmadd_ps(wv, load_strided_512(xs + 48 * sw, sw, idx, even, m[3]), a3);
        }
      }
    }
    _mm512_mask_storeu_ps(yr + q, m[0], a0);
    _mm512_mask_storeu_ps(yr + q + 16, m[1], a1);
    _mm512_mask_storeu_ps(yr + q + 32, m[2], a2);
    _mm512_mask_storeu_ps(yr + q + 48, m[3], a3);
  }
}

/* The AVX2 steps, then the columns they leave with the bounds-checked code. */
static void nchw_interior__avx2(const dw_job *j, const float *xc, const float *wc, int64_t p,
                                float *yr, float bias) {
  int64_t q = nchw_interior_steps__avx2(j, xc, wc, p, yr, bias);
  for (; q < j->qb; q++) yr[q] = nchw_point(j, xc, wc, p, q, bias);
}
#endif

static void nchw_task(void *arg, int64_t t0, int64_t t1, int thread) {
  (void)thread;
  const dw_job *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  const dw_state *st = j->s;
  for (int64_t t = t0; t < t1; t++) {
    int64_t c = t % g->C;
    const float *xc = j->x + t * g->H * g->W, *wc = j->w + c * g->R * g->S;
    float *yc = j->y + t * g->P * g->Q;
    float bias = j->bias ? j->bias[c] : 0.0f;
    for (int64_t p = 0; p < g->P; p++) {
      float *yr = yc + p * g->Q;
      for (int64_t q = 0; q < j->qa; q++) yr[q] = nchw_point(j, xc, wc, p, q, bias);
      st->fn->interior(j, xc, wc, p, yr, bias);
      for (int64_t q = j->qb; q < g->Q; q++) yr[q] = nchw_point(j, xc, wc, p, q, bias);
      if (st->act_pass) adnn_cpu_epilogue_f32(&st->act, yr, (size_t)g->Q, 0.0f);
    }
  }
}

/* ---- The NCHW plane path ---------------------------------------------------
 *
 * One task per (image, channel) plane; each pool thread owns a slice of the
 * workspace holding one padded, phase-split copy of a plane (dw_plane). The
 * activation runs over the plane's output right after it is written, while
 * it is in cache. */
static void dwp_task(void *arg, int64_t t0, int64_t t1, int thread) {
  const dw_job *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  const dw_state *s = j->s;
  float *b = j->ws + thread * s->dwp_slice;
  for (int64_t t = t0; t < t1; t++) {
    int64_t c = t % g->C;
    float *yc = j->y + t * g->P * g->Q;
    s->fn2->plane(j->x + t * g->H * g->W, g->H, g->W, j->w + c * g->R * g->S,
                  j->bias ? j->bias[c] : 0.0f, g->R, g->S, g->stride_h, g->stride_w,
                  g->dilation_h, g->dilation_w, g->pad_top, g->pad_left, g->P, g->Q, b, s->dwp_hb,
                  s->dwp_wb, yc);
    if (s->act_pass) adnn_cpu_epilogue_f32(&s->act, yc, (size_t)(g->P * g->Q), 0.0f);
  }
}

/* The plane path's buffer: hb = the input rows the outputs reach (padding
 * included), wb = per phase the columns the last (partial) output vector's
 * loads reach, at least the padded row for stride 1; rounded to 16 floats.
 * Returns 0 when a slice would pass 4 MiB (planes that large take the
 * spatial path, which needs no buffer). */
static int dwp_layout(const adnn_plugin_conv2d *g, dw_state *s, int64_t threads) {
  const int64_t vl = s->fn2->vl, sw = g->stride_w;
  int64_t qr = (g->Q + vl - 1) / vl * vl;
  int64_t wb = (g->S - 1) * g->dilation_w / sw + qr;
  if (sw == 1 && wb < g->pad_left + g->W) wb = g->pad_left + g->W;
  wb = (wb + 15) / 16 * 16;
  int64_t hb = (g->P - 1) * g->stride_h + (g->R - 1) * g->dilation_h + 1;
  if (sw > 16 || wb > (1 << 20) || hb > (1 << 20) || sw * hb * wb > (1 << 20)) return 0;
  s->dwp_hb = hb;
  s->dwp_wb = wb;
  /* Stride 2 also keeps one padded input row (2 * wb floats, or the whole
   * row when the image reaches past the last output's taps) to split. */
  int64_t scratch = sw == 2 ? (2 * wb > g->pad_left + g->W ? 2 * wb : g->pad_left + g->W) : 0;
  s->dwp_slice = (sw * hb * wb + scratch + 15) / 16 * 16;
  s->threads = threads;
  s->dwp_off_w = threads * s->dwp_slice;
  int64_t per_plane = g->P * g->Q * g->R * g->S;
  s->tasks = g->N * g->C;
  s->grain = per_plane >= 8192 ? 1 : 8192 / per_plane;
  return 1;
}

/* ---- The channel-vector path ---------------------------------------------
 *
 * Work items are (image, chunk of output rows, channel block of VL channels)
 * for NHWC, so that the blocks of a pixel row follow each other on a thread
 * while its cache lines are in cache, and (image, channel block, chunk of
 * rows) for NCHW, whose blocks are separate planes; there are chunks only
 * when images and blocks give fewer than 4 items per thread. A thread
 * buffers the item's input rows as padded rows [pad_left + W + pad_right][VL]
 * whose padding columns are zero, so the kernels never test a bound:
 *   - plane: when the chunk's whole padded input (its input rows and the
 *     padding rows, zero) fits in 256 KiB, it is buffered once and every
 *     filter row of every output row is a pointer into it; on AVX-512 rows
 *     of fewer than 8 outputs (AVX2: 16) go in pairs (row2: two rows of 4-pixel tiles
 *     give 8 independent accumulators, as one 8-pixel tile would);
 *   - ring: otherwise a ring of (R - 1) * dilation_h + 1 slots (input row h
 *     in slot h mod span, so that the rows of one output row never collide
 *     and each input row is buffered once per item); filter rows outside the
 *     image are skipped.
 * NHWC rows are copied one vector per pixel (measured faster than reading x
 * in place with separate border code, doc/cpu.md) and the outputs are stored
 * straight into y; NCHW rows are transposed from the VL channel planes (in
 * the plane case all the chunk's rows in one pass over the contiguous plane
 * floats, so rows of 7, 14 or 28 pixels do not each end in a partial
 * transpose) and the output rows go to a row buffer (orows of them, about
 * 1024 pixels) transposed back into the VL planes of y together, for the
 * same reason. The filters are transposed to [R][S][VL] per item. */

/* The workspace (one slice per pool thread) and the work items. */
static void dwc_layout(const adnn_plugin_conv2d *g, dw_state *s, int64_t threads) {
  const int64_t vl = s->fn2->vl;
  const int64_t align = 16; /* floats: 64 bytes */
#define DW_ROUND(v) (((v) + align - 1) / align * align)
  s->nb = (g->C + vl - 1) / vl;
  int64_t items = g->N * s->nb, want = 4 * threads;
  int64_t chunks = items >= want ? 1 : (want + items - 1) / items;
  if (chunks > g->P) chunks = g->P;
  s->chunk_rows = (g->P + chunks - 1) / chunks;
  s->chunks = (g->P + s->chunk_rows - 1) / s->chunk_rows;
  s->tasks = items * s->chunks;
  int64_t per_task = s->chunk_rows * g->Q * g->R * g->S;
  s->grain = per_task >= 2048 ? 1 : 2048 / per_task;
  s->wp = g->pad_left + g->W + g->pad_right;
  s->row_floats = DW_ROUND(s->wp * vl);
  /* A chunk's whole padded input (its rows and the padding rows between
   * them) when that fits in 256 KiB, else the ring. */
  int64_t plane_rows = (s->chunk_rows - 1) * g->stride_h + (g->R - 1) * g->dilation_h + 1;
  s->plane = plane_rows * s->row_floats * (int64_t)sizeof(float) <= 256 * 1024;
  /* Pairs of output rows where a row is too short for the wide tile
   * (AVX-512, Q < 8) and, on AVX2, where rows are narrow (Q < 16): a single
   * row's 4-pixel tile keeps only 4 FMA chains in flight, half what Zen 3's
   * two FMA pipes need, and the pair of tiles measured ~20 % faster on the
   * 14x14 MobileNet layer (AMD EPYC, loaded machine); only for the shapes
   * and activations row2 has kernels for. */
  int act_fast = g->activation.kind == ADNN_ACTIVATION_IDENTITY ||
                 g->activation.kind == ADNN_ACTIVATION_RELU ||
                 g->activation.kind == ADNN_ACTIVATION_CLAMP;
  int shape_fast = g->dilation_w == 1 && (g->S == 3 || g->S == 5) &&
                   (g->stride_w == 1 || g->stride_w == 2);
  s->two_rows = s->plane && vl > 4 && g->Q < (vl == 16 ? 8 : 16) && act_fast && shape_fast;
  s->span = s->plane ? plane_rows : (g->R - 1) * g->dilation_h + 1;
  s->off_rows = 0;                                   /* 2R row pointers */
  s->off_tags = s->off_rows + DW_ROUND(g->R * 4);    /* span int64 tags */
  s->off_ring = s->off_tags + DW_ROUND(s->span * 2); /* span padded rows */
  s->off_obuf = s->off_ring + s->span * s->row_floats; /* NCHW: 2Q pixel vectors */
  /* NCHW output rows wait in obuf until they make up about 1024 pixels (at
   * least 2, for row2's pairs), so a narrow image's rows are transposed back
   * to y together (dw_unpack_planar). */
  s->orows = g->Q % vl == 0 ? 2 : 1024 / g->Q;
  if (s->orows > s->chunk_rows) s->orows = s->chunk_rows;
  if (s->orows < 2) s->orows = 2;
  s->off_wb = s->off_obuf + (s->nhwc ? 0 : DW_ROUND(s->orows * g->Q * vl)); /* taps [R][S][VL] */
  s->off_bias = s->off_wb + DW_ROUND((g->R * g->S + vl) * vl);  /* VL biases */
  s->slice_floats = s->off_bias + DW_ROUND(vl);
  s->threads = threads;
#undef DW_ROUND
  s->w_taps = adnn_cpu_conv2d_stride_is(&g->w, 3, 1) && adnn_cpu_conv2d_stride_is(&g->w, 2, g->S);
}

static void dwc_task(void *arg, int64_t t0, int64_t t1, int thread) {
  const dw_job *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  const dw_state *s = j->s;
  const dwc_fns *fn = s->fn2;
  const int64_t vl = fn->vl, C = g->C, H = g->H, W = g->W, P = g->P, Q = g->Q;
  const int64_t R = g->R, S = g->S, pl = g->pad_left, span = s->span;
  float *slice = j->ws + thread * s->slice_floats;
  const float **rows = (const float **)(void *)(slice + s->off_rows);
  int64_t *tags = (int64_t *)(void *)(slice + s->off_tags);
  float *ring = slice + s->off_ring, *obuf = slice + s->off_obuf;
  float *wb = slice + s->off_wb, *biasb = slice + s->off_bias;
  const int64_t *ws = g->w.strides;
  for (int64_t t = t0; t < t1; t++) {
    int64_t b, n, chunk;
    if (s->nhwc) {
      b = t % s->nb;
      chunk = t / s->nb % s->chunks;
      n = t / s->nb / s->chunks;
    } else {
      chunk = t % s->chunks;
      b = t / s->chunks % s->nb;
      n = t / s->chunks / s->nb;
    }
    int64_t c0 = b * vl;
    int m = (int)(C - c0 < vl ? C - c0 : vl);
    int64_t p0 = chunk * s->chunk_rows, p1 = p0 + s->chunk_rows < P ? p0 + s->chunk_rows : P;
    /* The block's taps as vectors over its channels, zero past m: one
     * transpose when each channel's taps are contiguous. */
    if (s->w_taps) {
      fn->pack_planar(j->w + c0 * ws[0], ws[0], m, R * S, wb);
    } else {
      if (m < vl) memset(wb, 0, (size_t)(R * S * vl) * sizeof(float));
      for (int64_t l = 0; l < m; l++) {
        const float *wc = j->w + (c0 + l) * ws[0];
        float *dst = wb + l;
        for (int64_t r = 0; r < R; r++)
          for (int64_t ss = 0; ss < S; ss++, dst += vl) *dst = wc[r * ws[2] + ss * ws[3]];
      }
    }
    if (j->bias)
      for (int64_t l = 0; l < vl; l++) biasb[l] = l < m ? j->bias[c0 + l] : 0.0f;
    const float *biasv = j->bias ? biasb : NULL;
    int64_t p = p0;
    /* NCHW: output rows [ob_p, pe) wait in obuf (s->orows of them at most)
     * and go to y's planes together, the chunk's last ones at its end. */
    int64_t ob_p = p0;
#define DW_FLUSH(pe)                                                                  \
  do {                                                                              \
    if ((pe) - ob_p + 2 > s->orows || (pe) >= p1) {                                 \
      fn->unpack_planar(obuf, ((pe) - ob_p) * Q, m, j->y + ((n * C + c0) * P + ob_p) * Q, \
                        P * Q);                                                     \
      ob_p = (pe);                                                                  \
    }                                                                               \
  } while (0)
    if (s->plane) {
      /* The chunk's padded input rows [hlo, hlo + span) one after the other,
       * padding rows as zeros: every filter row of every output row is a
       * pointer into it. */
      const int64_t hlo = p0 * g->stride_h - g->pad_top, rf = s->row_floats;
      const int64_t nrows = (p1 - 1 - p0) * g->stride_h + (R - 1) * g->dilation_h + 1;
      for (int64_t k = 0; k < nrows; k++) {
        int64_t h = hlo + k;
        float *dst = ring + k * rf;
        if (h < 0 || h >= H) {
          memset(dst, 0, (size_t)(s->wp * vl) * sizeof(float));
          continue;
        }
        memset(dst, 0, (size_t)(pl * vl) * sizeof(float));
        memset(dst + (pl + W) * vl, 0, (size_t)(g->pad_right * vl) * sizeof(float));
        if (s->nhwc)
          fn->pack_interleaved(j->x + ((n * H + h) * W) * C + c0, C, m, W, dst + pl * vl);
      }
      if (!s->nhwc) {
        /* The rows in the image are contiguous in each plane: one pass of
         * full transposes over them. */
        int64_t hs = hlo < 0 ? 0 : hlo, he = hlo + nrows < H ? hlo + nrows : H;
        if (he > hs)
          fn->pack_planar_rows(j->x + ((n * C + c0) * H + hs) * W, H * W, m, W, he - hs,
                               ring + (hs - hlo) * rf + pl * vl, rf);
      }
      const float **rows1 = rows + R;
      const int64_t step = g->dilation_h * rf;
      for (; p < p1; p++) {
        const float *base = ring + (p * g->stride_h - g->pad_top - hlo) * rf;
        for (int64_t r = 0; r < R; r++) rows[r] = base + r * step;
        if (s->two_rows && p + 1 < p1) {
          for (int64_t r = 0; r < R; r++) rows1[r] = rows[r] + g->stride_h * rf;
          if (s->nhwc) {
            fn->row2(&g->activation, rows, rows1, R, S, g->stride_w, g->dilation_w, Q, wb,
                     biasv, j->y + ((n * P + p) * Q) * C + c0,
                     j->y + ((n * P + p + 1) * Q) * C + c0, C, m);
          } else {
            float *o = obuf + (p - ob_p) * Q * vl;
            fn->row2(&g->activation, rows, rows1, R, S, g->stride_w, g->dilation_w, Q, wb,
                     biasv, o, o + Q * vl, vl, (int)vl);
            DW_FLUSH(p + 2);
          }
          p++;
          continue;
        }
        if (s->nhwc) {
          fn->row(&g->activation, rows, R, vl, 0, S, g->stride_w, g->dilation_w, 0, Q, wb, biasv,
                  j->y + ((n * P + p) * Q) * C + c0, C, m);
        } else {
          fn->row(&g->activation, rows, R, vl, 0, S, g->stride_w, g->dilation_w, 0, Q, wb, biasv,
                  obuf + (p - ob_p) * Q * vl, vl, (int)vl);
          DW_FLUSH(p + 1);
        }
      }
      continue;
    }
    /* The ring: input rows enter as the output rows advance. */
    for (int64_t i = 0; i < span; i++) {
      float *slot = ring + i * s->row_floats;
      tags[i] = -1;
      memset(slot, 0, (size_t)(pl * vl) * sizeof(float));
      memset(slot + (pl + W) * vl, 0, (size_t)(g->pad_right * vl) * sizeof(float));
    }
    for (; p < p1; p++) {
      /* The filter rows [r0, r1) whose input rows are in the image. */
      int64_t hb = p * g->stride_h - g->pad_top, dh = g->dilation_h;
      int64_t r0 = hb >= 0 ? 0 : (-hb + dh - 1) / dh;
      int64_t r1 = hb > H - 1 ? 0 : (H - 1 - hb) / dh + 1;
      if (r1 > R) r1 = R;
      if (r0 > r1) r0 = r1;
      int64_t i = r0 < r1 ? (hb + r0 * dh) % span : 0;
      for (int64_t r = r0; r < r1; r++) {
        int64_t h = hb + r * dh;
        float *slot = ring + i * s->row_floats;
        if (tags[i] != h) {
          if (s->nhwc)
            fn->pack_interleaved(j->x + ((n * H + h) * W) * C + c0, C, m, W, slot + pl * vl);
          else
            fn->pack_planar(j->x + ((n * C + c0) * H + h) * W, H * W, m, W, slot + pl * vl);
        }
        tags[i] = h;
        rows[r - r0] = slot;
        i += dh;
        if (i >= span) i -= span;
      }
      const float *wr = wb + r0 * S * vl;
      if (s->nhwc) {
        fn->row(&g->activation, rows, r1 - r0, vl, 0, S, g->stride_w, g->dilation_w, 0, Q, wr,
                biasv, j->y + ((n * P + p) * Q) * C + c0, C, m);
      } else {
        fn->row(&g->activation, rows, r1 - r0, vl, 0, S, g->stride_w, g->dilation_w, 0, Q, wr,
                biasv, obuf + (p - ob_p) * Q * vl, vl, (int)vl);
        DW_FLUSH(p + 1);
      }
    }
  }
#undef DW_FLUSH
}

static void dwc_run(dw_job *j) {
  const dw_state *s = j->s;
  /* The slices were sized for the pool at plan time; a larger pool now
   * (never expected) runs on the calling thread alone, in slice 0. */
  if (adnn_cpu_parallel_threads() > s->threads)
    dwc_task(j, 0, s->tasks, 0);
  else
    adnn_cpu_parallel_for(s->tasks, s->grain, dwc_task, j);
}

/* ---- The implementation ---------------------------------------------------- */

/* Each instruction set's kernels; without x86 intrinsics, every level runs
 * the portable code. */
#if defined(__x86_64__) || defined(__i386__)
static const dw_fns adnn_f32_conv2d_depthwise_direct__avx512 = {nchw_interior__avx512};
static const dw_fns adnn_f32_conv2d_depthwise_direct__avx2 = {nchw_interior__avx2};
#else
static const dw_fns adnn_f32_conv2d_depthwise_direct__avx512 = {nchw_interior__base};
static const dw_fns adnn_f32_conv2d_depthwise_direct__avx2 = {nchw_interior__base};
#endif
static const dw_fns adnn_f32_conv2d_depthwise_direct__base = {nchw_interior__base};
static const dw_fns *const dw_by_isa[ADNN_CPU_ISA_COUNT] =
    ADNN_CPU_ISA_TABLE(adnn_f32_conv2d_depthwise_direct);

/* Whether the channel-vector path runs an NCHW problem: it pays two
 * transposes per element to fill every lane, which wins once a row of the
 * image no longer fills several vectors (see doc/cpu.md for the
 * measurements). */
static int dw_nchw_cvec(const adnn_plugin_conv2d *g, int vl) {
  return 2 * g->C >= vl || g->Q < 2 * vl;
}

/* The channel-vector path sizes its workspace and work items; the NCHW
 * spatial path finds its interior columns and packs the filters to
 * [C][R][S] when they are not already. */
static void dw_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                       size_t *workspace_bytes) {
  const adnn_plugin_conv2d *g = problem;
  dw_state *s = state;
  adnn_cpu_act_init(&s->act, &g->activation, env->isa);
  s->fn = dw_by_isa[env->isa];
  s->fn2 = dwc_by_isa[env->isa];
  s->nhwc = adnn_cpu_conv2d_layout(g) == ADNN_CPU_CONV_NHWC;
  s->act_pass = g->activation.kind != ADNN_ACTIVATION_IDENTITY;
  s->repack = !adnn_cpu_conv2d_w_is_kcrs(g);
  /* The plane path only where it measured faster than the channel-vector
   * path (AMD Zen3): stride 1 on planes of at least 56x56 outputs (quiet
   * machine, 2 threads, 2026-12-02: dw3 29.3 against 18.0 GFLOP/s; on dw5's
   * 28x28 14.1 against 22.2), and, since its column split is vectorized,
   * column stride 2 on planes of at least 56x56 outputs while x is within
   * 8 MiB (loaded machine, 1 thread, batch 1, 10 alternated rounds of 31
   * runs in each order: dw2, 112 -> 56, 1.37x and 1.41x; dw4, 56 -> 28,
   * 0.94x and 0.96x, so 28x28 planes stay on the channel vectors, as do 14x14
   * and 7x7 ones, 0.63x and 0.51x in a shorter run). At batch 8 (x 25.7 MiB)
   * dw2 measured 0.93x-1.16x, hence the bound on x. */
  const double x_bytes = (double)g->N * (double)g->C * (double)g->H * (double)g->W * 4.0;
  s->dwp = !s->nhwc && g->P * g->Q >= 56 * 56 &&
           ((g->stride_h == 1 && g->stride_w == 1) ||
            (g->stride_w == 2 && x_bytes <= 8.0 * 1024 * 1024));
  s->dwp = s->dwp && dwp_layout(g, s, adnn_cpu_parallel_threads());
  if (s->dwp) {
    s->cvec = 0;
    *workspace_bytes =
        (size_t)(s->dwp_off_w + (s->repack ? g->R * g->S * g->C : 0)) * sizeof(float);
    return;
  }
  s->cvec = s->nhwc || dw_nchw_cvec(g, s->fn2->vl);
  if (s->cvec) {
    dwc_layout(g, s, adnn_cpu_parallel_threads());
    *workspace_bytes = (size_t)(s->threads * s->slice_floats) * sizeof(float);
    return;
  }
  s->repack = !adnn_cpu_conv2d_w_is_kcrs(g);
  /* Interior columns: q*sw - pl >= 0 and q*sw - pl + (S-1)*dw <= W - 1. */
  /* ceil(pad_left / stride_w), without overflow */
  int64_t qa = g->pad_left == 0 ? 0 : (g->pad_left - 1) / g->stride_w + 1;
  int64_t last = g->W - 1 + g->pad_left - (g->S - 1) * g->dilation_w;
  int64_t qb = last < 0 ? 0 : last / g->stride_w + 1;
  if (qa > g->Q) qa = g->Q;
  if (qb > g->Q) qb = g->Q;
  if (qb < qa) qb = qa;
  s->qa = qa;
  s->qb = qb;
  int64_t per_plane = g->P * g->Q * g->R * g->S;
  s->tasks = g->N * g->C;
  s->grain = per_plane >= 8192 ? 1 : 8192 / per_plane;
  *workspace_bytes = s->repack ? (size_t)(g->R * g->S * g->C * (int64_t)sizeof(float)) : 0;
}

/* Inputs {x, w} or {x, w, bias}. */
static void dw_run(const void *problem, const void *state, const void *const *inputs,
                   void *const *outputs, void *workspace) {
  const adnn_plugin_conv2d *g = problem;
  const dw_state *s = state;
  dw_job j = {g,          s,     inputs[0], inputs[1], g->has_bias ? inputs[2] : NULL,
              outputs[0], s->qa, s->qb,     workspace};
  if (s->dwp) {
    if (s->repack) {
      adnn_cpu_conv2d_pack_kcrs(g, inputs[1], j.ws + s->dwp_off_w);
      j.w = j.ws + s->dwp_off_w;
    }
    /* The slices were sized for the pool at plan time (as dwc_run). */
    if (adnn_cpu_parallel_threads() > s->threads)
      dwp_task(&j, 0, s->tasks, 0);
    else
      adnn_cpu_parallel_for(s->tasks, s->grain, dwp_task, &j);
    return;
  }
  if (s->cvec) {
    dwc_run(&j);
    return;
  }
  if (s->repack) {
    adnn_cpu_conv2d_pack_kcrs(g, inputs[1], workspace);
    j.w = workspace;
  }
  adnn_cpu_parallel_for(s->tasks, s->grain, nchw_task, &j);
}

const adnn_cpu_impl adnn_cpu_conv2d_depthwise_direct = {
    .name = "depthwise_direct",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F32),
    .supports = dw_supports,
    .state_size = sizeof(dw_state),
    .reshape = dw_reshape,
    .run = dw_run,
};

#endif /* ADNN_SIMD_VECTOR_PART */
