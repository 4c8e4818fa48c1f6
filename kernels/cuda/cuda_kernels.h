/*
 * The launchers of the CUDA plugin's own kernels (the .cu files of kernels/cuda/), callable
 * from C. Every launcher queues its kernel(s) on the given stream and returns
 * cudaGetLastError() after the launch, so a bad configuration or a missing
 * kernel image is reported at once; failures of the running kernel surface at
 * the next synchronization.
 *
 * Shapes reach the kernels as small structs passed by value. All sizes and
 * offsets are int64_t: a tensor of more than 2^31 elements is indexed
 * correctly. Element types: `f64` selects double, else float.
 */
#ifndef ADNN_CUDA_KERNELS_H
#define ADNN_CUDA_KERNELS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ADNN_CUDA_MAX_RANK 8

#if defined(__GNUC__)
#define ADNN_CUDA_HIDDEN __attribute__((visibility("hidden")))
#else
#define ADNN_CUDA_HIDDEN
#endif

/* A shape shared by up to three tensors that differ only in strides (x, y and a
 * third operand). Row-major: dims[rank - 1] varies fastest in the logical
 * (linear) index. rank 0 is one element. */
typedef struct adnn_cuda_nd {
  int32_t rank;
  int64_t dims[ADNN_CUDA_MAX_RANK];
  int64_t strides[3][ADNN_CUDA_MAX_RANK];
} adnn_cuda_nd;

/* An activation (adnn_activation_kind and its parameters). */
typedef struct adnn_cuda_act {
  int32_t kind;
  double alpha, beta;
} adnn_cuda_act;

/* Where and how wide to launch: from the device's properties, read once at plan
 * creation. */
typedef struct adnn_cuda_launch {
  cudaStream_t stream;
  int32_t sm_count;             /* cudaDevAttrMultiProcessorCount */
  int32_t max_threads_per_sm;   /* cudaDevAttrMaxThreadsPerMultiProcessor */
} adnn_cuda_launch;

/* ---- activation.cu ------------------------------------------------------ */

/* y = act(x) over nd (strides[0] x, strides[1] y); n = number of elements.
 * `packed` non-zero: both are contiguous with stride 1 (rank <= 1 after
 * coalescing), which takes the vectorized path when the pointers allow it.
 * y == x is allowed (each element is read and written by the same thread). */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_activation(const adnn_cuda_launch *l, int f64,
                                                  adnn_cuda_act act, const adnn_cuda_nd *nd,
                                                  int64_t n, int packed, const void *x, void *y);

/* y = act(src + bias[c]) over nd (strides[0] src, strides[1] y) where c is the
 * index along dim `channel_dim` and bias (may be NULL) has element stride
 * bias_stride. Used as the conv2d epilogue and as a strided copy. y == src
 * allowed with identical strides. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_bias_activation(const adnn_cuda_launch *l, int f64,
                                                       adnn_cuda_act act, const adnn_cuda_nd *nd,
                                                       int64_t n, int channel_dim,
                                                       const void *src, const void *bias,
                                                       int64_t bias_stride, void *y);

/* ---- binary.cu ---------------------------------------------------------- */

/* y = op(alpha * a, beta * b) over nd (strides[0] a, strides[1] b, strides[2]
 * y; broadcast operands have stride 0). `packed`: all three contiguous with
 * stride 1 and no broadcasting. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_binary(const adnn_cuda_launch *l, int f64, int op,
                                              double alpha, double beta, const adnn_cuda_nd *nd,
                                              int64_t n, int packed, const void *a, const void *b,
                                              void *y);

/* ---- pool2d.cu ---------------------------------------------------------- */

typedef struct adnn_cuda_pool2d {
  int32_t kind; /* adnn_pool_kind */
  int64_t N, C, H, W, P, Q;
  int64_t kernel_h, kernel_w, stride_h, stride_w;
  int64_t pad_top, pad_bottom, pad_left, pad_right;
  int64_t xs[4], ys[4]; /* strides of x and y, in N, C, H/P, W/Q order */
  int32_t order[4];     /* the dims of y from slowest to fastest in memory */
} adnn_cuda_pool2d;

ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_pool2d_run(const adnn_cuda_launch *l, int f64,
                                                  const adnn_cuda_pool2d *p, const void *x,
                                                  void *y);

/* ---- softmax.cu --------------------------------------------------------- */

/* rows: the non-axis dims (strides[0] x, strides[1] y), row_count rows; each
 * row has L elements at stride xs / ys. */
typedef struct adnn_cuda_softmax {
  adnn_cuda_nd rows;
  int64_t row_count, L, xs, ys;
  int32_t log;
  int32_t block_per_row; /* 1: one block per row; 0: one thread per row */
} adnn_cuda_softmax;

ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_softmax_run(const adnn_cuda_launch *l, int f64,
                                                   const adnn_cuda_softmax *s, const void *x,
                                                   void *y);

/* ---- norm.cu ------------------------------------------------------------ */

/* Layer norm / RMS norm: rows over `rows` (strides[0] x, strides[1] y), each of
 * D elements laid out by `cols` (strides[0] x, strides[1] y; cols.dims product
 * is D). gain / bias may be NULL (packed vectors of D). */
typedef struct adnn_cuda_norm {
  adnn_cuda_nd rows, cols;
  int64_t row_count, D;
  int32_t rms;
  double epsilon;
} adnn_cuda_norm;

ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_norm_run(const adnn_cuda_launch *l, int f64,
                                                const adnn_cuda_norm *p, const void *x,
                                                const void *gain, const void *bias, void *y);

/* Batch norm inference: over nd (strides[0] x, strides[1] y), channel index
 * along dim 1 of nd... or, when `dense_channel_stride` > 0, x and y share one
 * dense layout and the channel of physical offset i is
 * (i / dense_channel_stride) % C. */
typedef struct adnn_cuda_batchnorm {
  adnn_cuda_nd nd;
  int64_t n, C, dense_channel_stride;
  double epsilon;
  adnn_cuda_act act;
} adnn_cuda_batchnorm;

ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_batchnorm_run(const adnn_cuda_launch *l, int f64,
                                                     const adnn_cuda_batchnorm *p, const void *x,
                                                     const void *scale, const void *shift,
                                                     const void *mean, const void *var, void *y);

/* ---- conv2d_direct.cu --------------------------------------------------- */

typedef struct adnn_cuda_conv2d {
  int64_t N, C, H, W, K, CG, R, S, P, Q, groups;
  int64_t stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
  int64_t xs[4], ws[4], ys[4], bias_stride;
  int32_t order[4]; /* dims of y from slowest to fastest in memory */
  adnn_cuda_act act;
} adnn_cuda_conv2d;

/* The direct convolution (any shape and strides; bias may be NULL). `exact`
 * accumulates in double (the "reference" algorithm), else in the element type. */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_conv2d_direct(const adnn_cuda_launch *l, int f64,
                                                     int exact, const adnn_cuda_conv2d *p,
                                                     const void *x, const void *w,
                                                     const void *bias, void *y);

/* Copies x ([N, C, H, W] with strides xs) into a packed, zero-padded buffer of
 * [N, C, H + pt + pb, W + pl + pr], NCHW (nhwc == 0) or NHWC (nhwc != 0). */
ADNN_CUDA_HIDDEN cudaError_t adnn_cuda_pad_pack(const adnn_cuda_launch *l, int f64,
                                                const int64_t dims[4], const int64_t xs[4],
                                                int64_t pt, int64_t pb, int64_t pl, int64_t pr,
                                                int nhwc, const void *x, void *out);

#ifdef __cplusplus
}
#endif

#endif /* ADNN_CUDA_KERNELS_H */
