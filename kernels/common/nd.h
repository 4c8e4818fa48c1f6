/*
 * Coalescing of an n-dimensional iteration space shared by up to three tensors
 * with the same dims (e.g. x and y of an elementwise op, or a, b and y of a
 * broadcast binary op), used by the kernels of every target. Dims of size 1
 * are dropped, and a dim is merged into the next (faster) one when every
 * tensor steps over it by exactly one full run of the next, so packed tensors
 * become one dim and a strided view as few loops as its layout allows. The
 * row-major linear index maps to the same elements before and after.
 *
 * Header-only, plain C that also compiles as C++ (nvcc host code).
 */
#ifndef ADNN_KERNELS_COMMON_ND_H
#define ADNN_KERNELS_COMMON_ND_H

#include <stdint.h>
#include <string.h>

/* The same bound as ADNN_MAX_RANK in <adnn.h>, which CUDA device code does not
 * include; checked where both are visible. */
#define ADNN_ND_MAX_RANK 8
#if defined(ADNN_MAX_RANK) && !defined(__cplusplus)
_Static_assert(ADNN_ND_MAX_RANK == ADNN_MAX_RANK, "ADNN_ND_MAX_RANK must equal ADNN_MAX_RANK");
#endif
#define ADNN_ND_MAX_TENSORS 3

/* An iteration space: rank dims (dims[rank-1] the innermost) and, for each of
 * up to ADNN_ND_MAX_TENSORS tensors, its strides in elements along them. */
typedef struct adnn_nd {
  int32_t rank;
  int64_t dims[ADNN_ND_MAX_RANK];
  int64_t strides[ADNN_ND_MAX_TENSORS][ADNN_ND_MAX_RANK];
} adnn_nd;

/* Coalesces `rank` dims whose strides are given for `count` tensors
 * (strides[t][i]). The result has rank 0 when every dim is 1 (one element).
 * Unused tensor slots get stride 0. Returns 1 when the result is contiguous in
 * every tensor: rank 0, or rank 1 with stride 1 everywhere. */
static inline int adnn_nd_coalesce(adnn_nd *out, int rank, const int64_t *dims, int count,
                                   const int64_t *const *strides) {
  memset(out, 0, sizeof *out);
  int r = 0;
  for (int i = 0; i < rank; i++) {
    if (dims[i] == 1) continue;
    out->dims[r] = dims[i];
    for (int t = 0; t < count; t++) out->strides[t][r] = strides[t][i];
    r++;
  }
  /* Merge from the back: dim i into dim w (the merged run after it) when every
   * tensor steps over dim i by exactly one full run of dim w. */
  int w = r - 1;
  for (int i = r - 2; i >= 0; i--) {
    int merge = 1;
    for (int t = 0; t < count; t++)
      if (out->strides[t][i] != out->strides[t][w] * out->dims[w]) merge = 0;
    if (merge) {
      out->dims[w] *= out->dims[i];
    } else {
      w--;
      out->dims[w] = out->dims[i];
      for (int t = 0; t < count; t++) out->strides[t][w] = out->strides[t][i];
    }
  }
  /* Shift the kept dims [w, r) down to [0, r - w). */
  const int nr = r > 0 ? r - w : 0;
  if (r > 0 && w > 0) {
    for (int i = 0; i < nr; i++) {
      out->dims[i] = out->dims[i + w];
      for (int t = 0; t < count; t++) out->strides[t][i] = out->strides[t][i + w];
    }
    for (int i = nr; i < ADNN_ND_MAX_RANK; i++) {
      out->dims[i] = 0;
      for (int t = 0; t < count; t++) out->strides[t][i] = 0;
    }
  }
  out->rank = nr;
  if (nr == 0) return 1;
  if (nr > 1) return 0;
  for (int t = 0; t < count; t++)
    if (out->strides[t][0] != 1) return 0;
  return 1;
}

/* The number of elements (1 for rank 0). */
static inline int64_t adnn_nd_count(const adnn_nd *nd) {
  int64_t n = 1;
  for (int i = 0; i < nd->rank; i++) n *= nd->dims[i];
  return n;
}

/* The element offsets in each tensor of the row-major linear index `lin`. */
static inline void adnn_nd_offsets(const adnn_nd *nd, int64_t lin, int64_t off[ADNN_ND_MAX_TENSORS]) {
  for (int t = 0; t < ADNN_ND_MAX_TENSORS; t++) off[t] = 0;
  for (int i = nd->rank - 1; i >= 0; i--) {
    const int64_t q = lin / nd->dims[i], idx = lin - q * nd->dims[i];
    lin = q;
    for (int t = 0; t < ADNN_ND_MAX_TENSORS; t++) off[t] += idx * nd->strides[t][i];
  }
}

#endif /* ADNN_KERNELS_COMMON_ND_H */
