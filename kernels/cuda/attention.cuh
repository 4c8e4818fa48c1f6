/*
 * What the attention kernels of attention.cu (forward) and
 * attention_backward.cu (backward) share: the tile shapes, the masking rules
 * and the launch sizing. Included after kernels/cuda/common.cuh.
 *
 * Tiles. A block of R x ATT_LANES threads owns R rows (query rows in the
 * forward and dq kernels, key rows in the dk/dv kernel): thread
 * (r, lane) = (tid / ATT_LANES, tid % ATT_LANES) works on its row r, on the
 * streamed tile's columns lane, lane + ATT_LANES, ... and on the head-dim
 * elements lane, lane + ATT_LANES, ..., so the eight lanes of a row are
 * neighbours in one warp and their row reductions are three shuffles. The
 * streamed tiles (keys and values in the forward and dq kernels, queries and
 * output gradients in the dk/dv kernel) hold C rows in shared memory, each
 * padded to DMAX + 1 elements so that lanes reading different rows at the
 * same d hit different banks. DMAX, the head dim the tiles are compiled for,
 * is 64, 128 or 256 (F64: 64 or 128) and bounds both D and Dv; C is the
 * largest multiple of ATT_LANES up to 64 whose tiles fit the static shared
 * memory a block may use (48 KiB, of which we take ATT_SMEM_BYTES). A head
 * dim beyond every DMAX runs the row-per-thread kernels instead (slow, but
 * correct for any D).
 *
 * Masking (doc/ops.md): key j is visible to query i when j < key_lengths[b]
 * (clamped to 0..Skv) and, with causal, j <= i + Skv - Sq. The bias is
 * indexed with its rank-4 strides, 0 on broadcast dims, as the core
 * normalized it.
 *
 * Low precision: the kernels are templated on the storage type S of q, k,
 * v, o, the bias and the gradients; tiles, scores and accumulators are in
 * elem<S>::compute (F32 for F16/BF16, sized as the F32 tiles), 16-bit
 * elements are widened exactly as they are staged and each 16-bit output is
 * rounded once (lowp_elem.cuh). lse and the backward's row sums are in the
 * compute type (F32 for 16-bit data: ADNN_OP_PARAM_DTYPE). The
 * row-per-thread fallbacks accumulate in their outputs, so they run F32 and
 * F64 only: a 16-bit problem whose head dim exceeds 256 is refused at plan
 * creation.
 */
#ifndef ADNN_CUDA_ATTENTION_CUH
#define ADNN_CUDA_ATTENTION_CUH

#include "kernels/cuda/lowp_elem.cuh"

namespace adnn_cuda {

enum { ATT_LANES = 8, ATT_SMEM_BYTES = 47 * 1024, ATT_MAX_C = 64 };

/* Rows per block: 16, or 8 where a row of DMAX elements is 1 KiB or more
 * (F32 at 256, F64 at 128), so that the tiles still fit. */
template <typename T, int DMAX> constexpr int att_rows() {
  return (int)sizeof(T) * DMAX >= 1024 ? 8 : 16;
}

/* Shared elements of the largest kernel of a (T, DMAX): the dk/dv kernel's
 * own K and V rows, the streamed Q and dO tiles, the P and dS tiles and two
 * per-column scalars. The forward and dq kernels need less. */
template <typename T, int DMAX> constexpr int64_t att_smem_elems(int c) {
  return (int64_t)(2 * att_rows<T, DMAX>() + 2 * c) * (DMAX + 1) +
         2 * (int64_t)att_rows<T, DMAX>() * c + 2 * c;
}

template <typename T, int DMAX> constexpr int att_cols() {
  int c = ATT_MAX_C;
  while (c > 0 && att_smem_elems<T, DMAX>(c) * (int64_t)sizeof(T) > ATT_SMEM_BYTES)
    c -= ATT_LANES;
  return c;
}

template <typename T, int DMAX> struct att_cfg {
  static constexpr int R = att_rows<T, DMAX>();
  static constexpr int C = att_cols<T, DMAX>();
  static constexpr int P = DMAX + 1;               /* padded row pitch */
  static constexpr int THREADS = R * ATT_LANES;    /* 128 or 64 */
  static constexpr int PER_COL = C / ATT_LANES;    /* streamed columns per thread */
  static constexpr int PER_D = DMAX / ATT_LANES;   /* head-dim elements per thread */
  static_assert(C >= ATT_LANES, "attention tiles do not fit in shared memory");
};

/* The number of keys visible to batch b: key_lengths[b] (at its stride)
 * clamped to 0..Skv, or Skv without key lengths. */
__device__ __forceinline__ int64_t att_key_end(const adnn_plugin_attention &p,
                                               const int32_t *key_lengths, int64_t b) {
  if (key_lengths == NULL) return p.Skv;
  const int64_t kl = key_lengths[b * p.key_lengths.strides[0]];
  return kl < 0 ? 0 : (kl > p.Skv ? p.Skv : kl);
}

/* Whether query i sees key j (given j < the key end). */
__device__ __forceinline__ bool att_visible(const adnn_plugin_attention &p, int64_t i, int64_t j) {
  return !p.causal || j <= i + (p.Skv - p.Sq);
}

/* The bias of (b, h, i, j), widened to the compute type (0 without one). */
template <typename S>
__device__ __forceinline__ typename elem<S>::compute att_bias(const adnn_plugin_attention &p,
                                                              const S *bias, int64_t b, int64_t h,
                                                              int64_t i, int64_t j) {
  if (bias == NULL) return typename elem<S>::compute(0);
  const int64_t *s = p.bias.strides;
  return widen(bias[b * s[0] + h * s[1] + i * s[2] + j * s[3]]);
}

/* The tiles' element type for DMAX 256 given the storage type S: S itself
 * for F32 and the 16-bit types (F32 tiles), and never F64, whose tiles stop
 * at 128 (the F64 instantiation is never launched). */
template <typename S> struct att_256 {
  typedef S type;
};
template <> struct att_256<double> {
  typedef float type;
};

/* Sum of v over the ATT_LANES lanes of a row (every lane gets it). */
template <typename T> __device__ __forceinline__ T att_row_sum(T v) {
#pragma unroll
  for (int o = ATT_LANES / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/* Maximum over the lanes of a row; NaN never wins a comparison, so it is
 * ignored here and propagates through the exponentials instead. */
template <typename T> __device__ __forceinline__ T att_row_max(T v) {
#pragma unroll
  for (int o = ATT_LANES / 2; o > 0; o >>= 1) {
    const T w = __shfl_xor_sync(0xffffffffu, v, o);
    v = w > v ? w : v;
  }
  return v;
}

__device__ __forceinline__ int64_t att_min(int64_t a, int64_t b) { return a < b ? a : b; }

/* w * x where the weight w (a probability or a dS entry) is nonzero, else 0:
 * a masked pair (w = 0) adds nothing even when the other operand is NaN or
 * infinite (a NaN value at a masked key, as doc/ops.md requires), while a
 * NaN weight still propagates (NaN != 0). */
template <typename T> __device__ __forceinline__ T att_weighted(T w, T x) {
  return w != T(0) ? w * x : T(0);
}

/* The tile head dim for D and Dv: the smallest DMAX the tiles are compiled
 * for that holds both, 0 when none does. */
static inline int att_pick_dmax(adnn_dtype dtype, int64_t D, int64_t Dv) {
  const int64_t need = D > Dv ? D : Dv;
  if (need <= 64) return 64;
  if (need <= 128) return 128;
  if (need <= 256 && dtype != ADNN_DTYPE_F64) return 256;
  return 0;
}

template <typename T> static inline int att_threads_for(int dmax) {
  switch (dmax) {
    case 64: return att_cfg<T, 64>::THREADS;
    case 128: return att_cfg<T, 128>::THREADS;
    default: return att_cfg<float, 256>::THREADS;
  }
}

template <typename T> static inline int att_rows_for(int dmax) {
  switch (dmax) {
    case 64: return att_cfg<T, 64>::R;
    case 128: return att_cfg<T, 128>::R;
    default: return att_cfg<float, 256>::R;
  }
}

/* Threads of the row-per-thread kernels (the large head-dim fallback and
 * the backward's rowsum(dO * O)). */
enum { ATT_ROW_THREADS = 128 };

} // namespace adnn_cuda

#endif /* ADNN_CUDA_ATTENTION_CUH */
