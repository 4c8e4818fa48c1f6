/* What the conformance traits of conv2d backward data and backward weights
 * (t/ops/conv2d_backward_data.c, t/ops/conv2d_backward_weights.c) share: the
 * geometry table every case of both ops is built from, the construction of
 * the forward descriptor the backward descriptors point to, the algorithm
 * variants, and the oracle's shape check. Included by those two files only;
 * everything is static. */
#ifndef ADNN_T_OPS_CONV2D_BACKWARD_H
#define ADNN_T_OPS_CONV2D_BACKWARD_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "t/harness/harness.h"

/* Layouts of x, w and y (and so of dx, dw and dy). */
enum conv_bwd_layout {
  BWD_NCHW,      /* x, y NCHW; w KCRS */
  BWD_NHWC,      /* x, y NHWC; w KRSC */
  BWD_PADDED,    /* every tensor row-major with gaps */
  BWD_NCHW_KRSC, /* x, y NCHW; w KRSC */
  BWD_NHWC_KCRS, /* x, y NHWC; w KCRS */
  BWD_Y_PITCH    /* x, y NCHW, w KCRS, y's rows 3 elements longer than Q */
};
static const char *const conv_bwd_layout_names[] = {" nchw",      " nhwc",      " padded",
                                                    " nchw krsc", " nhwc kcrs", " y pitch+3"};

typedef struct conv_bwd_spec {
  const char *name;
  int64_t n, c, h, w, k, r, s;
  int64_t sh, sw, pt, pb, pl, pr, dh, dw, g;
  int bias;
  enum conv_bwd_layout layout;
  adnn_dtype dt;
} conv_bwd_spec;

#define BWD_F32 ADNN_DTYPE_F32
#define BWD_F64 ADNN_DTYPE_F64
#define BWD_F16 ADNN_DTYPE_F16
#define BWD_BF16 ADNN_DTYPE_BF16

/* The geometries of doc/ops.md's conv2d in F32 and F64 (a subset in F16 and BF16): 1x1 (the single-GEMM
 * case and its strided and padded forms), 3x3 with and without padding,
 * stride 2, stride equal to and larger than the kernel, asymmetric padding,
 * padding larger than the kernel, dilation, groups, depthwise (with a channel
 * multiplier), rectangular filters, NCHW/NHWC with KCRS/KRSC filters, padded
 * strides, tiny images, and sizes that exercise threading and tiling. */
static const conv_bwd_spec conv_bwd_specs[] = {
    /* name      n  c   h   w   k  r  s  sh sw pt pb pl pr dh dw g  bias layout dt */
    {"1x1",      2, 8,  5,  7,  6, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, BWD_NCHW, BWD_F32},
    {"1x1",      3, 5,  4,  6,  7, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, BWD_NHWC, BWD_F32},
    {"1x1 s2",   1, 4,  7,  7,  3, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, BWD_NCHW, BWD_F32},
    {"1x1 pad",  1, 3,  4,  4,  2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, BWD_NHWC, BWD_F32},
    {"1x1 g2",   2, 6,  5,  5,  4, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2, 0, BWD_NCHW, BWD_F32},
    {"1x1 big",  2, 64, 14, 14, 48, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, BWD_NHWC, BWD_F32},
    {"3x3",      2, 4,  8,  8,  5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, BWD_NCHW, BWD_F32},
    {"3x3",      3, 6,  9,  7,  8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, BWD_NHWC, BWD_F32},
    {"3x3 nopad", 1, 3, 7,  5,  4, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, BWD_NCHW, BWD_F32},
    {"3x3 s2",   3, 4,  9, 10,  6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, BWD_NCHW, BWD_F32},
    {"3x3 s2",   2, 5, 10,  9,  6, 3, 3, 2, 2, 1, 0, 1, 0, 1, 1, 1, 1, BWD_NHWC, BWD_F32},
    {"3x3 s3 asym", 1, 5, 11, 8, 4, 3, 3, 3, 3, 0, 2, 1, 0, 1, 1, 1, 1, BWD_NCHW, BWD_F32},
    {"2x2 s3 (stride > kernel)", 2, 3, 10, 11, 4, 2, 2, 3, 3, 0, 1, 1, 0, 1, 1, 1, 1, BWD_NCHW, BWD_F32},
    {"1x1 s3,2 (stride > kernel)", 1, 4, 8, 7, 5, 1, 1, 3, 2, 0, 0, 0, 0, 1, 1, 1, 0, BWD_NHWC, BWD_F32},
    {"3x3 asym", 1, 4,  8,  9,  4, 3, 3, 1, 1, 0, 1, 2, 0, 1, 1, 1, 1, BWD_NHWC, BWD_F32},
    {"3x3 s1,2", 1, 3,  9,  9,  4, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 1, 0, BWD_NCHW, BWD_F32},
    {"3x3 dil2", 2, 4,  9,  9,  4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 1, BWD_NCHW, BWD_F32},
    {"3x3 dil2 s2 g2", 3, 4, 11, 10, 6, 3, 3, 2, 2, 2, 1, 1, 2, 2, 2, 2, 1, BWD_NHWC, BWD_F32},
    {"3x3 g2",   2, 8,  6,  6,  6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, BWD_NCHW, BWD_F32},
    {"3x3 g2",   3, 8,  7,  6,  4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, BWD_NHWC, BWD_F32},
    {"3x3 g2",   2, 6,  5,  5,  4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, BWD_NCHW_KRSC, BWD_F32},
    {"3x3 asym", 1, 4,  6,  7,  8, 3, 3, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, BWD_NHWC_KCRS, BWD_F32},
    {"dw 3x3",   2, 8,  9,  9,  8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8, 1, BWD_NCHW, BWD_F32},
    {"dw 3x3 s2", 3, 16, 10, 10, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 16, 1, BWD_NHWC, BWD_F32},
    {"dw 3x3 asym", 1, 5, 7, 6, 5, 3, 3, 1, 1, 0, 2, 2, 1, 1, 1, 5, 0, BWD_NHWC, BWD_F32},
    {"dw 5x5",   1, 6,  8,  8,  6, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 6, 1, BWD_NCHW, BWD_F32},
    {"dw 3x3 dil2", 1, 4, 9, 9, 4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 4, 1, BWD_NHWC, BWD_F32},
    {"dw x2",    2, 4,  6,  6,  8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, 1, BWD_NCHW, BWD_F32},
    {"dw big",   2, 32, 20, 20, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32, 1, BWD_NHWC, BWD_F32},
    {"5x5 s2",   3, 3, 11,  9,  5, 5, 5, 2, 2, 2, 1, 2, 1, 1, 1, 1, 0, BWD_NHWC, BWD_F32},
    {"7x7 s2",   2, 3, 17, 17,  8, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, BWD_NCHW, BWD_F32},
    {"1x7",      1, 3,  5,  9,  4, 1, 7, 1, 1, 0, 0, 3, 3, 1, 1, 1, 1, BWD_NCHW, BWD_F32},
    {"3x2 dil2 s2 g2 asym", 2, 4, 11, 10, 6, 3, 2, 2, 2, 0, 2, 1, 0, 2, 2, 2, 1, BWD_NHWC, BWD_F32},
    {"pad>k",    1, 2,  5,  6,  2, 3, 3, 1, 1, 3, 0, 0, 3, 1, 1, 1, 1, BWD_NHWC, BWD_F32},
    {"tiny 1x1 img", 2, 3, 1, 1, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, BWD_NCHW, BWD_F32},
    {"tiny 2x3 img", 3, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, BWD_NHWC, BWD_F32},
    {"3x3 padded", 2, 3, 6, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, BWD_PADDED, BWD_F32},
    {"1x1 padded", 1, 4, 5, 6, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, BWD_PADDED, BWD_F32},
    {"3x3 y pitch", 2, 3, 6, 7, 4, 3, 3, 1, 1, 1, 0, 1, 2, 1, 1, 1, 1, BWD_Y_PITCH, BWD_F32},
    {"3x3 big",  2, 32, 14, 14, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, BWD_NCHW, BWD_F32},
    {"3x3 big",  3, 16, 15, 17, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, BWD_NHWC, BWD_F32},
    {"3x3 s2 big", 4, 16, 16, 16, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, BWD_NCHW, BWD_F32},
    /* F64: the same geometries (the CPU plugin's F64 kernels). */
    {"1x1",      2, 8,  5,  7,  6, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, BWD_NCHW, BWD_F64},
    {"1x1 s2",   1, 4,  7,  7,  3, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0, BWD_NHWC, BWD_F64},
    {"3x3",      1, 3,  6,  6,  4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, BWD_NCHW, BWD_F64},
    {"3x3",      3, 6,  9,  7,  8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, BWD_NHWC, BWD_F64},
    {"3x3 s2",   3, 4,  9, 10,  6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, BWD_NCHW, BWD_F64},
    {"2x2 s3 (stride > kernel)", 2, 3, 10, 11, 4, 2, 2, 3, 3, 0, 1, 1, 0, 1, 1, 1, 1, BWD_NHWC, BWD_F64},
    {"5x5 s2 g2", 3, 4, 9, 8, 6, 5, 5, 2, 2, 2, 1, 1, 2, 1, 1, 2, 1, BWD_NHWC, BWD_F64},
    {"dw 3x3",   1, 6,  7,  7,  6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6, 0, BWD_NCHW, BWD_F64},
    {"dw 3x3 s2", 2, 8, 10, 10, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 8, 1, BWD_NHWC, BWD_F64},
    {"3x3 dil2 s2 g2", 3, 4, 11, 10, 6, 3, 3, 2, 2, 2, 1, 1, 2, 2, 2, 2, 1, BWD_NHWC, BWD_F64},
    {"3x3 g2",   2, 6,  5,  5,  4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, BWD_NCHW_KRSC, BWD_F64},
    {"3x3 asym", 1, 4,  6,  7,  8, 3, 3, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, BWD_NHWC_KCRS, BWD_F64},
    {"3x3 padded", 2, 3, 6, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, BWD_PADDED, BWD_F64},
    {"7x7 s2",   1, 3, 17, 17,  8, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, BWD_NCHW, BWD_F64},
    {"3x3 big",  2, 16, 14, 14, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, BWD_NHWC, BWD_F64},
    /* F16 and BF16 (inputs rounded to the type, F32 accumulation, one
     * rounding of each gradient): the CPU's lowp path on each F32 algorithm,
     * the reference loops, and the CUDA kernels. */
    {"1x1", 2, 8,  5,  7,  6, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, BWD_NCHW, BWD_F16},
    {"3x3", 3, 6,  9,  7,  8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, BWD_NHWC, BWD_F16},
    {"3x3 s2", 3, 4,  9, 10,  6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, BWD_NCHW, BWD_F16},
    {"3x3 g2", 2, 6,  5,  5,  4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, BWD_NCHW_KRSC, BWD_F16},
    {"dw 3x3 s2", 3, 16, 10, 10, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 16, 1, BWD_NHWC, BWD_F16},
    {"3x3 padded", 2, 3, 6, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, BWD_PADDED, BWD_F16},
    {"3x3 y pitch", 2, 3, 6, 7, 4, 3, 3, 1, 1, 1, 0, 1, 2, 1, 1, 1, 1, BWD_Y_PITCH, BWD_F16},
    {"1x1 big", 2, 64, 14, 14, 48, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, BWD_NHWC, BWD_F16},
    {"3x3 big", 2, 32, 14, 14, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, BWD_NCHW, BWD_F16},
    {"1x1", 2, 8,  5,  7,  6, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, BWD_NCHW, BWD_BF16},
    {"3x3", 3, 6,  9,  7,  8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, BWD_NHWC, BWD_BF16},
    {"3x3 s2", 3, 4,  9, 10,  6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, BWD_NCHW, BWD_BF16},
    {"3x3 g2", 2, 6,  5,  5,  4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, BWD_NCHW_KRSC, BWD_BF16},
    {"dw 3x3 s2", 3, 16, 10, 10, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 16, 1, BWD_NHWC, BWD_BF16},
    {"3x3 padded", 2, 3, 6, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, BWD_PADDED, BWD_BF16},
    {"3x3 y pitch", 2, 3, 6, 7, 4, 3, 3, 1, 1, 1, 0, 1, 2, 1, 1, 1, 1, BWD_Y_PITCH, BWD_BF16},
    {"1x1 big", 2, 64, 14, 14, 48, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, BWD_NHWC, BWD_BF16},
    {"3x3 big", 2, 32, 14, 14, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, BWD_NCHW, BWD_BF16},
};
#define CONV_BWD_SPEC_COUNT (sizeof conv_bwd_specs / sizeof conv_bwd_specs[0])

/* The case name of a spec ("3x3 s2 n3 c4 9x10 k6 f3x3 s2,2 p1,1,1,1 d1,1 g1
 * bias nchw"), with " beta1" when accumulating. */
static void conv_bwd_case_name(char *buf, size_t len, const conv_bwd_spec *s, double beta) {
  snprintf(buf, len,
           "%s n%lld c%lld %lldx%lld k%lld f%lldx%lld s%lld,%lld p%lld,%lld,%lld,%lld d%lld,%lld "
           "g%lld%s%s%s",
           s->name, (long long)s->n, (long long)s->c, (long long)s->h, (long long)s->w,
           (long long)s->k, (long long)s->r, (long long)s->s, (long long)s->sh, (long long)s->sw,
           (long long)s->pt, (long long)s->pb, (long long)s->pl, (long long)s->pr,
           (long long)s->dh, (long long)s->dw, (long long)s->g, s->bias ? " bias" : "",
           conv_bwd_layout_names[s->layout], beta != 0.0 ? " beta1" : "");
}

/* Fills f with the forward descriptor of spec s (its bias only when s has
 * one). Returns 0, or -1 when adnn_conv2d_output_dims refuses it. */
static int conv_bwd_forward(const conv_bwd_spec *s, adnn_conv2d_desc *f) {
  const adnn_dtype dt = s->dt;
  adnn_conv2d_desc_init(f);
  const int x_nhwc = s->layout == BWD_NHWC || s->layout == BWD_NHWC_KCRS;
  const int w_krsc = s->layout == BWD_NHWC || s->layout == BWD_NCHW_KRSC;
  const enum harness_layout xl = x_nhwc ? HARNESS_NHWC
                                 : s->layout == BWD_PADDED ? HARNESS_PADDED : HARNESS_PACKED;
  const enum harness_layout wl = w_krsc ? HARNESS_NHWC
                                 : s->layout == BWD_PADDED ? HARNESS_PADDED : HARNESS_PACKED;
  f->x = harness_tensor_desc4(dt, s->n, s->c, s->h, s->w, xl);
  f->w = harness_tensor_desc4(dt, s->k, s->c / s->g, s->r, s->s, wl);
  f->stride_h = s->sh;
  f->stride_w = s->sw;
  f->pad_top = s->pt;
  f->pad_bottom = s->pb;
  f->pad_left = s->pl;
  f->pad_right = s->pr;
  f->dilation_h = s->dh;
  f->dilation_w = s->dw;
  f->groups = s->g;
  int64_t yd[4];
  if (adnn_conv2d_output_dims(f, yd) != ADNN_STATUS_SUCCESS) return -1;
  f->y = harness_tensor_desc4(dt, yd[0], yd[1], yd[2], yd[3], xl);
  if (s->layout == BWD_Y_PITCH) {
    f->y.strides[2] = f->y.dims[3] + 3;
    f->y.strides[1] = f->y.strides[2] * f->y.dims[2];
    f->y.strides[0] = f->y.strides[1] * f->y.dims[1];
  }
  if (s->bias) {
    f->has_bias = 1;
    f->bias = harness_vector_desc(dt, s->k);
    if (s->layout == BWD_PADDED) f->bias.strides[0] = 2; /* a gap after each element */
  }
  return 0;
}

static void conv_bwd_set_forward_dtype(const adnn_conv2d_desc *forward, adnn_dtype dt) {
  /* The forward descriptor lives in the case (harness_case.forward), which
   * the harness owns; the backward descriptor only points to it as const. */
  adnn_conv2d_desc *f = (adnn_conv2d_desc *)(uintptr_t)forward;
  if (f) f->x.dtype = f->w.dtype = f->bias.dtype = f->y.dtype = dt;
}

/* The variants: ADNN_CONV2D_ALGO_LIST in order, AUTO first. */
static const adnn_conv2d_algorithm conv_bwd_algorithms[] = {
#define CONV_BWD_ALGORITHM_(NAME, name, value, def) ADNN_CONV2D_ALGO_##NAME,
    ADNN_CONV2D_ALGO_LIST(CONV_BWD_ALGORITHM_)
#undef CONV_BWD_ALGORITHM_
};
static const char *const conv_bwd_algorithm_names[] = {
#define CONV_BWD_ALGORITHM_NAME_(NAME, name, value, def) #name,
    ADNN_CONV2D_ALGO_LIST(CONV_BWD_ALGORITHM_NAME_)
#undef CONV_BWD_ALGORITHM_NAME_
};
#define CONV_BWD_N_ALGORITHMS ((int)(sizeof conv_bwd_algorithms / sizeof conv_bwd_algorithms[0]))

/* The shape rules of doc/ops.md, checked by the oracle from the forward
 * descriptor alone: groups divide C and K, the filter has C / G channels, y
 * has [N, K, P, Q]. Returns 0, or -1 with the reason. */
static int conv_bwd_check_forward(const adnn_conv2d_desc *d, char *why, size_t why_len) {
  if (d == NULL) {
    snprintf(why, why_len, "no forward descriptor");
    return -1;
  }
  const int64_t N = d->x.dims[0], C = d->x.dims[1], H = d->x.dims[2], W = d->x.dims[3];
  const int64_t K = d->w.dims[0], CG = d->w.dims[1], R = d->w.dims[2], S = d->w.dims[3];
  const int64_t G = d->groups;
  if (G < 1 || C % G != 0 || K % G != 0 || CG != C / G) {
    snprintf(why, why_len, "C %lld, K %lld, groups %lld and filter channels %lld do not fit",
             (long long)C, (long long)K, (long long)G, (long long)CG);
    return -1;
  }
  const int64_t P = (H + d->pad_top + d->pad_bottom - d->dilation_h * (R - 1) - 1) / d->stride_h + 1;
  const int64_t Q = (W + d->pad_left + d->pad_right - d->dilation_w * (S - 1) - 1) / d->stride_w + 1;
  const adnn_tensor_desc *yd = &d->y;
  if (yd->dims[0] != N || yd->dims[1] != K || yd->dims[2] != P || yd->dims[3] != Q) {
    snprintf(why, why_len, "y is [%lld, %lld, %lld, %lld], doc/ops.md gives [%lld, %lld, %lld, "
             "%lld]", (long long)yd->dims[0], (long long)yd->dims[1], (long long)yd->dims[2],
             (long long)yd->dims[3], (long long)N, (long long)K, (long long)P, (long long)Q);
    return -1;
  }
  return 0;
}

/* Initial values of the in-out outputs (beta != 0): uniform in [-1, 1) at
 * every element of the case's output buffer (gaps stay NaN). */
static void conv_bwd_fill_initial(harness_case *c, tap_rng *r) {
  if (!c->inout) return;
  for (int64_t i = 0; i < c->out.span; i++)
    if (c->out.member[i]) c->out.v[i] = harness_round(c->dtype, tap_rng_uniform(r, -1.0, 1.0));
}

#endif
