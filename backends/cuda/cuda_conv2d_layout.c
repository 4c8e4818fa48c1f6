/*
 * The layout plan of a conv2d problem for cuDNN (see cuda_conv2d.h): which
 * layout class cuDNN runs in, which tensors are repacked into the workspace,
 * and the padding cuDNN applies. Pure C over the normalized problem, so that
 * the emulator and tests can check it without a device.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "backends/cuda/cuda_conv2d.h"

static const int perm_nchw[4] = {0, 1, 2, 3};
static const int perm_nhwc[4] = {0, 2, 3, 1};

/* Whether t (4-D) is packed in the dim order perm (slowest first); size-1 dims
 * may have any stride. */
static int packed_in(const adnn_tensor_desc *t, const int perm[4]) {
  int64_t expect = 1;
  for (int i = 3; i >= 0; i--) {
    const int d = perm[i];
    if (t->dims[d] > 1 && t->strides[d] != expect) return 0;
    expect *= t->dims[d];
  }
  return 1;
}

/* The strides of a packed tensor of `dims` in the dim order perm. */
static void packed_strides(const int64_t dims[4], const int perm[4], int64_t s[4]) {
  int64_t expect = 1;
  for (int i = 3; i >= 0; i--) {
    s[perm[i]] = expect;
    expect *= dims[perm[i]];
  }
}

void adnn_cuda__conv2d_layout_plan(const adnn_plugin_conv2d *p, size_t element_size,
                                   adnn_cuda__conv2d_layout *out) {
  memset(out, 0, sizeof *out);
  /* The class follows y, which is written once per output; x decides only
   * when y is packed in neither class. */
  const int y_nchw = packed_in(&p->y, perm_nchw), y_nhwc = packed_in(&p->y, perm_nhwc);
  if (y_nhwc && !y_nchw) out->nhwc = 1;
  else if (y_nchw) out->nhwc = 0;
  else out->nhwc = packed_in(&p->x, perm_nhwc) && !packed_in(&p->x, perm_nchw);
  const int *perm = out->nhwc ? perm_nhwc : perm_nchw;

  const int symmetric = p->pad_top == p->pad_bottom && p->pad_left == p->pad_right;
  out->pack_x = !symmetric || !packed_in(&p->x, perm);
  out->xh = p->H;
  out->xw = p->W;
  out->pad_h = p->pad_top;
  out->pad_w = p->pad_left;
  if (out->pack_x && !symmetric) {
    out->x_pad[0] = p->pad_top;
    out->x_pad[1] = p->pad_bottom;
    out->x_pad[2] = p->pad_left;
    out->x_pad[3] = p->pad_right;
    out->xh = p->H + p->pad_top + p->pad_bottom;
    out->xw = p->W + p->pad_left + p->pad_right;
    out->pad_h = out->pad_w = 0;
  }
  if (out->pack_x)
    out->x_bytes = adnn_cuda__align256((size_t)(p->N * p->C * out->xh * out->xw) * element_size);

  out->pack_w = !packed_in(&p->w, perm);
  if (out->pack_w) {
    /* The filter's class format (KCRS or KRSC) has the same dim orders as
     * NCHW and NHWC. */
    const int64_t wdims[4] = {p->K, p->Cg, p->R, p->S};
    int64_t dst[4];
    packed_strides(wdims, perm, dst);
    out->w_copy.rank = 4;
    for (int i = 0; i < 4; i++) {
      out->w_copy.dims[i] = wdims[i];
      out->w_copy.strides[0][i] = p->w.strides[i];
      out->w_copy.strides[1][i] = dst[i];
    }
    out->w_bytes = adnn_cuda__align256((size_t)(p->K * p->Cg * p->R * p->S) * element_size);
  }

  out->y_tmp = !packed_in(&p->y, perm);
  const int64_t ydims[4] = {p->N, p->K, p->P, p->Q};
  int64_t ypacked[4];
  packed_strides(ydims, perm, ypacked);
  out->y_store.rank = 4;
  for (int i = 0; i < 4; i++) {
    out->y_store.dims[i] = ydims[i];
    out->y_store.strides[0][i] = out->y_tmp ? ypacked[i] : p->y.strides[i];
    out->y_store.strides[1][i] = p->y.strides[i];
  }
  if (out->y_tmp)
    out->y_bytes = adnn_cuda__align256((size_t)(p->N * p->K * p->P * p->Q) * element_size);

  out->extra_bytes = out->x_bytes + out->w_bytes + out->y_bytes;
}

void adnn_cuda__conv2d_layout_plan_widened(const adnn_plugin_conv2d *p,
                                           adnn_cuda__conv2d_layout *out) {
  adnn_cuda__conv2d_layout_plan(p, sizeof(float), out);
  out->widened = 1;
  const int *perm = out->nhwc ? perm_nhwc : perm_nchw;
  if (!out->pack_x) { /* symmetric padding, which cuDNN applies: x_pad stays 0 */
    out->pack_x = 1;
    out->x_bytes = adnn_cuda__align256((size_t)(p->N * p->C * out->xh * out->xw) * sizeof(float));
  }
  if (!out->pack_w) {
    const int64_t wdims[4] = {p->K, p->Cg, p->R, p->S};
    int64_t dst[4];
    packed_strides(wdims, perm, dst);
    out->pack_w = 1;
    out->w_copy.rank = 4;
    for (int i = 0; i < 4; i++) {
      out->w_copy.dims[i] = wdims[i];
      out->w_copy.strides[0][i] = p->w.strides[i];
      out->w_copy.strides[1][i] = dst[i];
    }
    out->w_bytes = adnn_cuda__align256((size_t)(p->K * p->Cg * p->R * p->S) * sizeof(float));
  }
  if (!out->y_tmp) {
    const int64_t ydims[4] = {p->N, p->K, p->P, p->Q};
    int64_t ypacked[4];
    packed_strides(ydims, perm, ypacked);
    out->y_tmp = 1;
    for (int i = 0; i < 4; i++) out->y_store.strides[0][i] = ypacked[i];
    out->y_bytes = adnn_cuda__align256((size_t)(p->N * p->K * p->P * p->Q) * sizeof(float));
  }
  out->extra_bytes = out->x_bytes + out->w_bytes + out->y_bytes;
}

/* The applicability rules of the specialized algorithms, shared by the
 * forward and backward plans (cuda_conv2d.h). */
int adnn_cuda__conv2d_depthwise_applies(const adnn_plugin_conv2d *p, char *why, size_t len) {
  if (p->groups == p->C && p->groups == p->K) return 1;
  snprintf(why, len, "needs groups == C == K (here groups %lld, C %lld, K %lld)",
           (long long)p->groups, (long long)p->C, (long long)p->K);
  return 0;
}

int adnn_cuda__conv2d_pointwise_applies(const adnn_plugin_conv2d *p, char *why, size_t len) {
  if (p->R == 1 && p->S == 1 && p->stride_h == 1 && p->stride_w == 1 && p->pad_top == 0 &&
      p->pad_bottom == 0 && p->pad_left == 0 && p->pad_right == 0)
    return 1;
  snprintf(why, len, "needs a 1x1 filter, stride 1 and no padding");
  return 0;
}

int adnn_cuda__conv2d_winograd_applies(const adnn_plugin_conv2d *p, char *why, size_t len) {
  if (p->R == 3 && p->S == 3 && p->stride_h == 1 && p->stride_w == 1 && p->dilation_h == 1 &&
      p->dilation_w == 1)
    return 1;
  snprintf(why, len, "needs a 3x3 filter, stride 1 and dilation 1");
  return 0;
}

int adnn_cuda__conv2d_winograd_f4x3_applies(const adnn_plugin_conv2d *p, char *why, size_t len) {
  (void)p;
  snprintf(why, len,
           "is not available on the cuda backend (cuDNN does not let a caller choose the "
           "F(4x4, 3x3) tile; use winograd_f2x3 or auto)");
  return 0;
}
