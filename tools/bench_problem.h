/*
 * Problem descriptors of adnn-bench: parsing, canonical printing and work
 * counts. It needs libadnn's headers but none of its code (the kinds and
 * their names come from the op manifest, adnn/op_list.h, through the inline
 * name functions of adnn/ops.h), so that the peer drivers in bench/ compile
 * the same parser in without linking adnn. The grammar is in doc/bench.md and
 * adnn-bench(1):
 *
 *   convolution, oneDNN benchdnn's grammar:
 *     [[--]dir=<DIR>:][conv:][[--]dir=<DIR>:][g<G>]mb<N>ic<C>[ih<H>][iw<W>]oc<K>
 *     [oh<P>][ow<Q>][kh<R>][kw<S>][sh<..>][sw<..>][ph<..>][pw<..>][dh<..>][dw<..>]
 *     [pb<..>][pr<..>][_n<name>]
 *     ('_' may separate tokens; dh/dw count EXTRA dilation, 0 = none). DIR is
 *     benchdnn's direction (at most one): FWD_D or FWD_I (the forward op, the
 *     default), BWD_D (backward data), BWD_W (backward weights), BWD_WB
 *     (backward weights and bias); the canonical form writes "dir=<DIR>:"
 *     first for the backward ones.
 *   other ops, colon-separated fields after the op name:
 *     [[--]dir=<DIR>:]pool:<max|avg|avg_exclude>:mb..ic..ih..kh..[sh..][ph..][:ceil]
 *     [[--]dir=<DIR>:]act:<kind>[:a<alpha>][:b<beta>]:<dims>
 *     [[--]dir=<DIR>:]softmax:[axis<A>:][log:]<dims>
 *   where DIR, benchdnn's direction, is FWD_D (the forward op, the default)
 *   or BWD_D (its backward pass: pool2d_backward, activation_backward,
 *   softmax_backward); the canonical form writes "dir=BWD_D:" first.
 *     lnorm:<dims>[:nd<D>][:nogain][:nobias][:eps<E>]
 *     rmsnorm:<dims>[:nd<D>][:nogain][:bias][:eps<E>]
 *     bnorm:mb..ic..ih..[iw..][:<activation kind>]
 *     binary:<add|sub|mul|div|max|min>:<dims>+<dims>
 *     reduce:<sum|mean|max|min>:<dims>:axes<A>[,<A>...][:keep]
 *     gemm:m<M>n<N>k<K>[:ta][:tb]
 *     [[--]dir=<DIR>:]xent:<mean|sum|none>:<N>x<C>[:ign<I>]   (BWD_D: d logits)
 *     optim:<sgd|adam|adamw>:<S0>[x<S1>...][:lr<..>][:wd<..>][:mom<..>][:damp<..>]
 *           [:nesterov][:b1<..>][:b2<..>][:eps<..>]   (one tensor per size)
 *   where <dims> is D0xD1x...; any form may end in _n<name>.
 *   pb<..>/pr<..> (convolution) give the bottom/right padding explicitly.
 *
 * Limits, checked by the parser so that no later computation on a problem
 * overflows: every number is at most BENCH_NUMBER_MAX, and so are the derived
 * output sizes and dilated kernel extents; every tensor of a problem has at
 * most BENCH_ELEMENTS_MAX elements; a descriptor is at most BENCH_INPUT_MAX
 * characters long. The canonical form of any problem the parser accepts fits
 * in BENCH_TEXT_MAX bytes.
 */
#ifndef ADNN_BENCH_PROBLEM_H
#define ADNN_BENCH_PROBLEM_H

#include <stddef.h>
#include <stdint.h>

#include <adnn.h>

enum bench_op {
  BENCH_OP_CONV = 0,
  BENCH_OP_POOL,
  BENCH_OP_ACT,
  BENCH_OP_SOFTMAX,
  BENCH_OP_LNORM,
  BENCH_OP_RMSNORM,
  BENCH_OP_BNORM,
  BENCH_OP_BINARY,
  BENCH_OP_REDUCE,
  BENCH_OP_GEMM,
  BENCH_OP_XENT,  /* softmax cross-entropy (dir=BWD_D: its backward) */
  BENCH_OP_OPTIM, /* the fused optimizer step */
  BENCH_OP_COUNT  /* one past the last */
};

/* Directions (benchdnn's --dir): the forward op, or a backward pass. */
enum bench_dir { BENCH_DIR_FWD = 0, BENCH_DIR_BWD_D, BENCH_DIR_BWD_W, BENCH_DIR_BWD_WB };

#define BENCH_MAX_RANK 8
#define BENCH_NAME_MAX 96
#define BENCH_NUMBER_MAX INT64_C(2147483647)
#define BENCH_ELEMENTS_MAX (INT64_C(1) << 48)
#define BENCH_INPUT_MAX 1024
#define BENCH_TEXT_MAX 512

typedef struct bench_problem {
  int op;                     /* enum bench_op */
  char name[BENCH_NAME_MAX];  /* the _n name, "" when none */
  /* conv, pool, bnorm: image geometry. Dilation is adnn's (1 = none). */
  int64_t g, mb, ic, ih, iw, oc, oh, ow, kh, kw, sh, sw;
  int64_t pt, pb, pl, pr; /* padding top, bottom, left, right */
  int64_t dh, dw;
  int dir; /* enum bench_dir */
  adnn_pool_kind pool_kind;
  int ceil_mode;
  /* act (and bnorm's fused activation) */
  adnn_activation_kind act_kind;
  double alpha, beta;
  /* act, softmax, norms, binary: shapes */
  int rank, rank_b;
  int64_t dims[BENCH_MAX_RANK], dims_b[BENCH_MAX_RANK];
  int axis, log_softmax;
  int norm_dims, has_gain, has_bias;
  double eps;
  adnn_binary_op binary_op;
  /* reduce: the kind, the reduced dims (ADNN_REDUCE_AXIS bits), keep_dims */
  adnn_reduce_kind reduce_kind;
  uint32_t reduce_axes;
  int keep_dims;
  /* gemm */
  int64_t m, n, k;
  int ta, tb;
  /* bnorm, lnorm, rmsnorm: benchdnn's direction (enum bench_norm_dir) and
   * batch-norm training's momentum (default 0.1). */
  int norm_dir;
  double momentum;
  /* xent: the reduction and ignore_index (default -100); dims[0..1] are N
   * and C; dir BWD_D is the backward op (d logits). */
  adnn_loss_reduction loss_reduction;
  int64_t ignore_index;
  /* optim: the kind and the hyperparameters (adnn_optimizer_desc_init's
   * defaults); dims[0..rank-1] are the tensors' sizes. */
  adnn_optimizer_kind opt_kind;
  double lr, weight_decay, sgd_momentum, dampening, beta1, beta2, opt_eps;
  int nesterov;
} bench_problem;

/* The directions of the normalizations (benchdnn's --dir): the forward op
 * (bnorm: inference, FWD_I; lnorm / rmsnorm: FWD_D), batch-norm training
 * (bnorm's dir=FWD_D) and the backward pass (dir=BWD_DW). */
enum bench_norm_dir { BENCH_NORM_FORWARD = 0, BENCH_NORM_TRAINING = 1, BENCH_NORM_BACKWARD = 2 };

/* Parses one descriptor (a NUL-terminated string; surrounding white space is
 * ignored). Returns 0, or -1 with a message naming the bad token (and, for a
 * number out of range, the field and its limit) in err; p is then
 * unspecified. Never reads outside text. */
int bench_problem_parse(const char *text, bench_problem *p, char *err, size_t errlen);

/* Replaces the minibatch of conv, pool and bnorm problems (others unchanged).
 * The result may exceed the limits above: format and parse it again to check
 * (adnn-bench does). */
void bench_problem_set_mb(bench_problem *p, int64_t mb);

/* The canonical descriptor: every field that differs from its default
 * (doubles in the shortest form that reads back bit-exactly), so that
 * bench_problem_parse gives back exactly p, field by field, and formatting
 * that again gives the same text. BENCH_TEXT_MAX bytes always suffice; with
 * less the text is truncated (and still NUL-terminated when len > 0). */
void bench_problem_format(const bench_problem *p, char *buf, size_t len);

/* Floating-point operations of one run (multiply-add = 2) for conv and gemm,
 * 0 for the memory-bound ops. */
double bench_problem_flops(const bench_problem *p);

/* Bytes read and written by one run, for elements of elem_size bytes (inputs
 * once, output once). */
double bench_problem_bytes(const bench_problem *p, size_t elem_size);

/* The direction named s[0..n) (FWD_D, FWD_I, BWD_D, BWD_W, BWD_WB), or -1. */
int bench_dir_parse(const char *s, size_t n);

/* The canonical name of a direction ("FWD_D", "BWD_D", "BWD_W", "BWD_WB"). */
const char *bench_dir_name(int dir);

/* The name of an op ("conv", "pool", ...). */
const char *bench_op_name(int op);

#endif
