/*
 * conv2d on the CUDA plugin: the pure part of the plan (cuda_conv2d_layout.c),
 * kept apart from the cuDNN part (cuda_conv2d.c) so that it can be checked
 * without a GPU or cuDNN.
 */
#ifndef ADNN_CUDA_CONV2D_H
#define ADNN_CUDA_CONV2D_H

#include <stddef.h>
#include <stdint.h>

#include <adnn/plugin.h>

#include "kernels/common/nd.h"

/* How cuDNN sees a conv2d problem. cuDNN runs fastest on packed NCHW (filter
 * KCRS) or packed NHWC (filter KRSC), and its legacy API takes only symmetric
 * padding, so the plan picks a "layout class" and arranges for cuDNN to see
 * packed tensors of that class:
 *  - x is used as it is when packed in the class with symmetric padding;
 *    otherwise pad_pack copies it into the workspace, packed, and for
 *    asymmetric padding with the padding written out as zeros (cuDNN then
 *    runs with padding 0): asymmetric padding stays exact.
 *  - w is used as it is when packed KCRS (NCHW class) or KRSC (NHWC class),
 *    else copied into the workspace in the class's filter format.
 *  - y is written directly when packed in the class; otherwise cuDNN writes a
 *    packed temporary that the epilogue stores into y's strides.
 * Every buffer size is a multiple of 256 bytes, so that the workspace layout
 * [algorithm][x][w][y] keeps each part as aligned as cudaMalloc's memory. */
typedef struct adnn_cuda__conv2d_layout {
  int nhwc;          /* the layout class: 1 NHWC, 0 NCHW */
  int pack_x;        /* x is copied into the workspace (pad_pack) */
  int64_t x_pad[4];  /* padding pad_pack writes out: top, bottom, left, right */
  int64_t xh, xw;    /* the height and width of the x cuDNN sees */
  int64_t pad_h, pad_w; /* the symmetric padding cuDNN applies */
  int pack_w;        /* w is copied into the workspace in the class's format */
  adnn_nd w_copy;    /* that copy: [K, Cg, R, S], strides[0] w, strides[1] packed */
  int y_tmp;         /* cuDNN writes a packed temporary, not y */
  adnn_nd y_store;   /* the epilogue: [N, K, P, Q], strides[0] where cuDNN wrote
                        (the temporary or y), strides[1] y */
  size_t x_bytes, w_bytes, y_bytes; /* the copies' sizes (0 when not made) */
  size_t extra_bytes; /* their sum: the workspace beyond the algorithm's */
  int widened;       /* F16/BF16 problem run in F32 (adnn_cuda__conv2d_layout_plan_widened) */
} adnn_cuda__conv2d_layout;

/* Plans how cuDNN sees problem p with elements of `element_size` bytes. A
 * function of p alone: no device, no cuDNN. */
void adnn_cuda__conv2d_layout_plan(const adnn_plugin_conv2d *p, size_t element_size,
                                   adnn_cuda__conv2d_layout *out);

/* The layout of an F16/BF16 problem that cuDNN runs in F32 (so that a bias
 * and an activation are added to the F32 convolution and y is rounded once):
 * every tensor is copied, x and w widened exactly into packed F32 buffers of
 * the class, cuDNN writes a packed F32 temporary, and the epilogue rounds it
 * into y's strides. */
void adnn_cuda__conv2d_layout_plan_widened(const adnn_plugin_conv2d *p,
                                           adnn_cuda__conv2d_layout *out);

/* Rounds a byte count up to a multiple of 256. */
static inline size_t adnn_cuda__align256(size_t n) { return (n + 255) & ~(size_t)255; }

/* The applicability rules of the specialized algorithms, for the forward
 * and the backward plans alike: each returns 1 when the forward geometry p
 * fits, else 0 with the reason in why (naming what the algorithm needs). */
int adnn_cuda__conv2d_depthwise_applies(const adnn_plugin_conv2d *p, char *why, size_t len);
int adnn_cuda__conv2d_pointwise_applies(const adnn_plugin_conv2d *p, char *why, size_t len);
int adnn_cuda__conv2d_winograd_applies(const adnn_plugin_conv2d *p, char *why, size_t len);
/* Winograd F(4x4, 3x3) never applies on this plugin: cuDNN chooses the tile
 * size of its Winograd algorithms itself (WINOGRAD_NONFUSED picks among its
 * tile variants per shape and does not document or expose the choice), so no
 * cuDNN algorithm is guaranteed to compute F(4x4, 3x3), and the plugin has no
 * Winograd kernel of its own. Always 0, with that reason. */
int adnn_cuda__conv2d_winograd_f4x3_applies(const adnn_plugin_conv2d *p, char *why, size_t len);

#endif /* ADNN_CUDA_CONV2D_H */
