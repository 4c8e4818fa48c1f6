/*
 * Helpers shared by the CPU kernels of conv2d backward data and backward
 * weights (conv2d_backward_data-<algo>.c, conv2d_backward_weights-<algo>.c):
 * the layout checks of their supports functions, the deterministic bias
 * gradient, and the element-type template they are written in.
 *
 * Every kernel is written once over an element type `T` (float or double)
 * and its BLAS GEMM, and compiled twice: each file includes its own template
 * part twice with CONV_BWD_T set to float and to double (the names get a
 * _f32 or _f64 suffix through CONV_BWD_FN), so that F32 and F64 run the same
 * algorithm with cblas_sgemm and cblas_dgemm.
 *
 * Determinism (ADNN_CPU_IMPL_DETERMINISTIC): every output element is written
 * by exactly one task, and every sum is split into chunks fixed by the
 * problem alone (never by the thread count or by which thread runs a
 * chunk), whose partial results are added in a fixed order. The results are
 * therefore bitwise identical run to run, and also across thread counts as
 * long as OpenBLAS's own GEMM is (it splits M and N, not the K sums, between
 * its threads); doc/numerics.md records what was measured.
 */
#ifndef ADNN_CPU_CONV2D_BACKWARD_H
#define ADNN_CPU_CONV2D_BACKWARD_H

#include "kernels/cpu/conv2d.h"

/** The layout the fast backward kernels need: x and y (so dx/dy, or x/dy)
 *  both packed NCHW or both packed NHWC; filters and the bias vector may
 *  have any strides (they are packed or read through their strides). */
static inline int adnn_cpu_conv2d_bwd_layout(const adnn_plugin_conv2d *g, char *why,
                                             size_t why_size) {
  int layout = adnn_cpu_conv2d_layout(g);
  if (!layout) return adnn_cpu_conv2d_no(why, why_size, "needs x and y both packed NCHW or NHWC");
  return layout;
}

/** Whether the forward geometry is a 1x1, stride 1, unpadded convolution,
 *  whose im2col matrix is the image itself. */
static inline int adnn_cpu_conv2d_bwd_is_1x1(const adnn_plugin_conv2d *g) {
  return g->R == 1 && g->S == 1 && g->stride_h == 1 && g->stride_w == 1 && g->pad_top == 0 &&
         g->pad_bottom == 0 && g->pad_left == 0 && g->pad_right == 0;
}

/** What the GEMM-based backward kernels (im2col_gemm, gemm_1x1) need of the
 *  forward geometry g: the packed layouts above, and every size OpenBLAS
 *  receives within its 32-bit integers. */
static inline int adnn_cpu_conv2d_bwd_gemm_supports(const adnn_plugin_conv2d *g, char *why,
                                                    size_t why_size) {
  if (!adnn_cpu_conv2d_bwd_layout(g, why, why_size)) return 0;
  int64_t crs = g->Cg * g->R * g->S;
  if (!adnn_cpu_conv2d_fits_int(crs) || !adnn_cpu_conv2d_fits_int(g->P * g->Q) ||
      !adnn_cpu_conv2d_fits_int(g->H * g->W) || !adnn_cpu_conv2d_fits_int(g->K) ||
      !adnn_cpu_conv2d_fits_int(g->C))
    return adnn_cpu_conv2d_no(why, why_size, "sizes exceed OpenBLAS's 32-bit integers");
  return 1;
}

/** gemm_1x1's condition: a 1x1, stride 1, unpadded filter, then the GEMM
 *  kernels' own. */
static inline int adnn_cpu_conv2d_bwd_1x1_supports(const adnn_plugin_conv2d *g, char *why,
                                                   size_t why_size) {
  if (!adnn_cpu_conv2d_bwd_is_1x1(g))
    return adnn_cpu_conv2d_no(why, why_size, "needs a 1x1 filter, stride 1, no padding");
  return adnn_cpu_conv2d_bwd_gemm_supports(g, why, why_size);
}

/** The bias gradient's arguments (a task of adnn_cpu_parallel_for over k). */
typedef struct adnn_cpu_conv2d_bwd_bias_job {
  const adnn_plugin_conv2d *g;
  const void *dy;
  void *db;
  double beta;
  int nhwc, f64;
} adnn_cpu_conv2d_bwd_bias_job;

/** db[k] = beta * db[k] + the sum of dy[n, k, p, q] over n, p, q, for k in
 *  [k0, k1): one task per range of k, each sum in double in the fixed order
 *  n, p, q, so the result does not depend on the threads. */
static inline void adnn_cpu_conv2d_bwd_bias_task(void *arg, int64_t k0, int64_t k1, int thread) {
  (void)thread;
  const adnn_cpu_conv2d_bwd_bias_job *j = arg;
  const adnn_plugin_conv2d *g = j->g;
  const int64_t PQ = g->P * g->Q, K = g->K;
  for (int64_t k = k0; k < k1; k++) {
    double acc = 0.0;
    for (int64_t n = 0; n < g->N; n++) {
      if (j->f64) {
        const double *dy = (const double *)j->dy;
        if (j->nhwc)
          for (int64_t i = 0; i < PQ; i++) acc += dy[(n * PQ + i) * K + k];
        else
          for (int64_t i = 0; i < PQ; i++) acc += dy[(n * K + k) * PQ + i];
      } else {
        const float *dy = (const float *)j->dy;
        if (j->nhwc)
          for (int64_t i = 0; i < PQ; i++) acc += dy[(n * PQ + i) * K + k];
        else
          for (int64_t i = 0; i < PQ; i++) acc += dy[(n * K + k) * PQ + i];
      }
    }
    const int64_t off = k * g->bias.strides[0];
    if (j->f64) {
      double *db = (double *)j->db;
      db[off] = j->beta != 0.0 ? j->beta * db[off] + acc : acc;
    } else {
      float *db = (float *)j->db;
      db[off] = (float)(j->beta != 0.0 ? j->beta * (double)db[off] + acc : acc);
    }
  }
}

/** The bias gradient over the pool (a no-op without a forward bias). */
static inline void adnn_cpu_conv2d_bwd_bias(const adnn_plugin_conv2d *g, const void *dy, void *db,
                                            double beta, int nhwc) {
  if (!g->has_bias) return;
  adnn_cpu_conv2d_bwd_bias_job j = {g, dy, db, beta, nhwc, g->x.dtype == ADNN_DTYPE_F64};
  int64_t per_k = g->N * g->P * g->Q;
  adnn_cpu_parallel_for(g->K, per_k >= 65536 ? 1 : 65536 / per_k, adnn_cpu_conv2d_bwd_bias_task,
                        &j);
}

#define CONV_BWD_CAT2_(a, b) a##_##b
#define CONV_BWD_CAT_(a, b) CONV_BWD_CAT2_(a, b)

#endif /* ADNN_CPU_CONV2D_BACKWARD_H */
