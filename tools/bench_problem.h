/*
 * Problem descriptors of adnn-bench: parsing, canonical printing and work
 * counts. It needs libadnn's headers but none of its code (the kinds and
 * their names come from the op manifest, adnn/op_list.h, through the inline
 * name functions of adnn/ops.h), so that the peer drivers in bench/ compile
 * the same parser in without linking adnn. The grammar is in doc/bench.md and
 * adnn-bench(1):
 *
 *   every descriptor may start with benchdnn's direction (at most one):
 *     [[--]dir=<DIR>:]<descriptor>
 *   DIR is FWD_D, FWD_I, BWD_D, BWD_W, BWD_WB or BWD_DW, and each op takes
 *   only those its adnn ops can run (bench_op_dirs; any other is refused
 *   with a message naming the allowed ones):
 *     conv                   FWD_D (= FWD_I, the forward op), BWD_D, BWD_W, BWD_WB
 *     pool, act, softmax, xent, attention  FWD_D (= FWD_I, the forward op), BWD_D
 *     bnorm                  FWD_I (inference), FWD_D (training), BWD_DW
 *     lnorm, rmsnorm         FWD_D (the forward op), BWD_DW
 *     binary, reduce, gemm, optim, matmul, reorder, quantize, dequantize
 *                            FWD_D only
 *   The canonical form writes "dir=<DIR>:" first for every direction but the
 *   op's default (bnorm: FWD_I; every other op: FWD_D). For compatibility the
 *   normalizations also take it as a trailing field (lnorm:64x768:dir=BWD_DW).
 *
 *   convolution, oneDNN benchdnn's grammar:
 *     [conv:][[--]dir=<DIR>:][g<G>]mb<N>ic<C>[ih<H>][iw<W>]oc<K>
 *     [oh<P>][ow<Q>][kh<R>][kw<S>][sh<..>][sw<..>][ph<..>][pw<..>][dh<..>][dw<..>]
 *     [pb<..>][pr<..>][:beta<B>][_n<name>]
 *     ('_' may separate tokens; dh/dw count EXTRA dilation, 0 = none; the
 *     direction may also follow "conv:"). beta<B>, backward directions only:
 *     the result is added to B times the output's old values (0, the
 *     default, overwrites it).
 *   other ops, colon-separated fields after the op name:
 *     pool:<max|avg|avg_exclude>:mb..ic..ih..kh..[sh..][ph..][:ceil]
 *     act:<kind>[:a<alpha>][:b<beta>]:<dims>
 *     softmax:[axis<A>:][log:]<dims>
 *     lnorm:<dims>[:nd<D>][:nogain][:nobias][:eps<E>]
 *     rmsnorm:<dims>[:nd<D>][:nogain][:bias][:eps<E>]
 *     bnorm:mb..ic..ih..[iw..][:<activation kind>][:mom<M>][:eps<E>]
 *     binary:<add|sub|mul|div|max|min>:<dims>+<dims>
 *     reduce:<sum|mean|max|min>:<dims>:axes<A>[,<A>...][:keep]
 *     gemm:m<M>n<N>k<K>[:ta][:tb]
 *     xent:<mean|sum|none>:<N>x<C>[:ign<I>]
 *     optim:<sgd|adam|adamw>:<S0>[x<S1>...][:lr<..>][:wd<..>][:mom<..>][:damp<..>]
 *           [:nesterov][:b1<..>][:b2<..>][:eps<..>]   (one tensor per size, at
 *           most BENCH_OPTIM_MAX_TENSORS)
 *     matmul:m<M>n<N>k<K>[:batch<B0>[x<B1>]][:bbatch][:ta][:tb][:alpha<A>][:bias]
 *           [:res[:inplace][:rs<S>]][:<activation kind>[:a<alpha>][:b<beta>]]
 *           (y = act(alpha a b + bias + S r); a [batch, M, K], b [K, N] shared by
 *           the batch unless bbatch; ta/tb: a or b stored transposed, b as
 *           PyTorch's Linear weight [N, K]; inplace: r is y itself)
 *     attention:b<B>h<H>[hkv<Hkv>]sq<Sq>[skv<Skv>]d<D>[dv<Dv>][:causal][:bias<dims>]
 *           [:kl][:nolse][:bshd][:scale<S>]   (b defaults to 1, hkv to h, skv to
 *           sq, dv to d; bias<dims> of rank 1..4 broadcasts to [B, H, Sq, Skv];
 *           kl: per-batch key lengths; nolse: no lse output; bshd: q, k, v, o
 *           in the BSHD layout; scale 0, the default, is 1 / sqrt(D))
 *     reorder:<dims>[:<nchw|nhwc>-><nchw|nhwc>][:<dtype>-><dtype>]
 *           (y = x converted; nchw: packed (any rank), nhwc: 4-D channels last;
 *           dtypes f32, f64, f16, bf16, i8, u8, i32; default nchw->nchw and
 *           f32->f32; the descriptor's dtypes win over --dtype)
 *     lscale:<scale|unscale>:<S0>[x<S1>...]   (loss scaling by 1024, one tensor
 *           per size, at most BENCH_OPTIM_MAX_TENSORS)
 *     quantize:<dims>[:f32-><i8|u8>][:axis<A> | :s<scale>[:z<zp>]]
 *     dequantize:<dims>[:<i8|u8>->f32][:axis<A> | :s<scale>[:z<zp>]]
 *           (y = saturate(rne(x / scale) + zp), or (x - zp) * scale; default
 *           f32->i8 / i8->f32, one scale per tensor, s1, z0; axis<A>: per
 *           channel along A in [0, rank), the scales and zero points being
 *           execute inputs; scale finite > 0 in F32, zp in the 8-bit type's
 *           range; the descriptor's dtypes win over --dtype. This is the form
 *           ADNN_VERBOSE prints for these ops)
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
  BENCH_OP_MATMUL, /* GEMM with a fused epilogue (adnn_plan_create_matmul) */
  BENCH_OP_ATTENTION, /* scaled-dot-product attention (dir=BWD_D: its backward) */
  BENCH_OP_REORDER,   /* dtype and layout conversion (adnn_plan_create_reorder) */
  BENCH_OP_QUANTIZE,  /* F32 to I8/U8 (adnn_plan_create_quantize) */
  BENCH_OP_DEQUANTIZE, /* I8/U8 to F32 (adnn_plan_create_dequantize) */
  BENCH_OP_LSCALE,     /* loss scaling (adnn_plan_create_loss_scale) */
  BENCH_OP_COUNT  /* one past the last */
};

/* Directions (benchdnn's --dir), one per problem (bench_problem.dir). Which
 * an op takes and what each means for it: the grammar above and doc/bench.md.
 * After parsing, FWD_I is stored only for bnorm (inference); the ops whose
 * FWD_I is their forward op store FWD_D. BENCH_DIR_FWD is the older name of
 * FWD_D (the forward op of every op but bnorm). */
enum bench_dir {
  BENCH_DIR_FWD_D = 0, /* forward (bnorm: training) */
  BENCH_DIR_FWD_I,     /* forward inference (bnorm's default) */
  BENCH_DIR_BWD_D,     /* backward data */
  BENCH_DIR_BWD_W,     /* backward weights (conv) */
  BENCH_DIR_BWD_WB,    /* backward weights and bias (conv) */
  BENCH_DIR_BWD_DW,    /* backward data and weights (the normalizations) */
  BENCH_DIR_COUNT,     /* one past the last */
  BENCH_DIR_FWD = BENCH_DIR_FWD_D
};

#define BENCH_MAX_RANK 8
#define BENCH_NAME_MAX 96
#define BENCH_NUMBER_MAX INT64_C(2147483647)
#define BENCH_ELEMENTS_MAX (INT64_C(1) << 48)
#define BENCH_INPUT_MAX 1024
#define BENCH_TEXT_MAX 512
/* The most tensors of an optim problem. Not a limit of adnn (tensor_count is
 * a size_t) but of the conformance harness that adnn-bench runs every problem
 * through, perf mode included (its cases hold the buffers): a case has at
 * most HARNESS_MAX_INPUTS (8) inputs, here the gradients, and marks the
 * outputs it reads in a 32-bit mask (Adam's T parameters and 2T states are
 * all read), so more tensors need a redesign of the harness's cases. */
#define BENCH_OPTIM_MAX_TENSORS 8

typedef struct bench_problem {
  int op;                     /* enum bench_op */
  char name[BENCH_NAME_MAX];  /* the _n name, "" when none */
  /* conv, pool, bnorm: image geometry. Dilation is adnn's (1 = none). */
  int64_t g, mb, ic, ih, iw, oc, oh, ow, kh, kw, sh, sw;
  int64_t pt, pb, pl, pr; /* padding top, bottom, left, right */
  int64_t dh, dw;
  int dir; /* enum bench_dir, of every op (see above) */
  adnn_pool_kind pool_kind;
  int ceil_mode;
  /* act (and bnorm's fused activation): the kind, alpha and beta. beta is
   * also conv's accumulation factor in the backward directions (0: the
   * output is overwritten), the `beta` of their descriptors. */
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
  /* bnorm: batch-norm training's momentum (default 0.1). */
  double momentum;
  /* xent: the reduction and ignore_index (default -100); dims[0..1] are N
   * and C. */
  adnn_loss_reduction loss_reduction;
  int64_t ignore_index;
  /* optim: the kind and the hyperparameters (adnn_optimizer_desc_init's
   * defaults); dims[0..rank-1] are the tensors' sizes (rank at most
   * BENCH_OPTIM_MAX_TENSORS). */
  adnn_optimizer_kind opt_kind;
  adnn_loss_scale_kind ls_kind; /* lscale */
  double lr, weight_decay, sgd_momentum, dampening, beta1, beta2, opt_eps;
  int nesterov;
  /* matmul: m, n, k, ta, tb, has_bias and the activation (act_kind, alpha,
   * beta) above; a's batch dims (batch_rank of them, 0..2, in batch), b
   * with them too (b_batched) or shared [K, N]; the scale of a @ b
   * (mm_alpha, default 1); the residual (has_residual; res_inplace: it is
   * y itself) and its scale (res_scale, default 1). */
  int batch_rank;
  int64_t batch[2];
  int b_batched;
  double mm_alpha;
  int has_residual, res_inplace;
  double res_scale;
  /* attention: the sizes, the options, and the bias's dims as given
   * (bias_rank 0: no bias); scale 0 means 1 / sqrt(d). */
  int64_t att_b, att_h, att_hkv, att_sq, att_skv, att_d, att_dv;
  int causal, key_lengths, no_lse, bshd, bias_rank;
  int64_t bias_dims[4];
  double scale;
  /* reorder: dims in rank/dims above; the layouts (0 nchw = packed, 1 nhwc)
   * and the adnn_dtype values of x and y (quantize and dequantize use the
   * two dtypes too). */
  int rx_layout, ry_layout, rx_dtype, ry_dtype;
  /* quantize, dequantize: dims in rank/dims, the dtypes in rx_dtype and
   * ry_dtype, q_axis -1 (one scale and zero point, q_scale and
   * q_zero_point) or the per-channel axis. */
  int q_axis;
  double q_scale;
  int64_t q_zero_point;
} bench_problem;

/* Parses one descriptor (a NUL-terminated string; surrounding white space is
 * ignored). Returns 0, or -1 with a message naming the bad token (and, for a
 * number out of range, the field and its limit) in err; p is then
 * unspecified. Never reads outside text. */
int bench_problem_parse(const char *text, bench_problem *p, char *err, size_t errlen);

/* bench_problem_parse with a default direction (benchdnn's --dir on the
 * command line; -1: none): a descriptor that names no direction gets
 * default_dir when its op takes that direction (bench_op_dirs), and its op's
 * default otherwise. An explicit direction (dir=FWD_D: included) is kept. */
int bench_problem_parse_dir(const char *text, int default_dir, bench_problem *p, char *err,
                            size_t errlen);

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

/* The direction named s[0..n) (FWD_D, FWD_I, BWD_D, BWD_W, BWD_WB, BWD_DW),
 * or -1. */
int bench_dir_parse(const char *s, size_t n);

/* The name of a direction ("FWD_D", ..., "BWD_DW"; "unknown" for others). */
const char *bench_dir_name(int dir);

/* The directions op takes, as bits (1u << dir); FWD_I is among them for
 * every op but lnorm, rmsnorm and the forward-only ones. 0 for no op. */
unsigned bench_op_dirs(int op);

/* The direction of an op's problems that name none: FWD_I for bnorm
 * (inference), FWD_D for every other op. The canonical form omits it. */
int bench_op_default_dir(int op);

/* The name of an op ("conv", "pool", ...). */
const char *bench_op_name(int op);

#endif
