/*
 * The conformance harness: one table-driven way to run any op of the op
 * manifest (include/adnn/op_list.h) on any backend and to check the result
 * against an oracle of its own. Shared by t/conformance (make check) and
 * adnn-bench --mode=corr, and written only against the public API (<adnn.h>),
 * so that it tests what users call.
 *
 * The pieces:
 *   - harness_op: one record per row of ADNN_OP_LIST, generated in ops.c. It
 *     carries what the manifest says (name, dtypes, flags), the plan
 *     constructor adnn_plan_create_<name> and the op's traits;
 *   - harness_op_traits: what the harness must know about an op, written by
 *     hand in t/ops/<op>.c next to the op's oracle and its cases: the
 *     execute inputs of a descriptor, y, how to set the dtype, the oracle, the
 *     tolerance of doc/numerics.md, the default input data, the variants to
 *     run (conv2d: every algorithm), the cases, the oracle's self-tests and
 *     the bad descriptors;
 *   - harness_buffer: a tensor's values on the host as doubles at their
 *     element offsets, with NaN in the gaps of padded strides;
 *   - harness_case: an op, a descriptor and its buffers; harness_run_case
 *     runs it on a context, harness_oracle computes the expected y and
 *     harness_compare measures the difference.
 *
 * The oracle is independent of the library: it is computed from the public
 * descriptor alone (broadcasting, negative axes and output shapes included),
 * accumulates in long double with compensated sums where they are long, and
 * never calls kernels/ref/ (which is also the CPU plugin's F64 path).
 *
 * Adding an op: see the header of t/conformance.c.
 */
#ifndef ADNN_TEST_HARNESS_H
#define ADNN_TEST_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include <adnn.h>

#include "t/rng.h"

#if defined(__GNUC__)
#define HARNESS_PRINTF_(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define HARNESS_PRINTF_(fmt, args)
#endif

/** The most execute inputs an op may take (batch norm takes 5). */
#define HARNESS_MAX_INPUTS 8
/** The most outputs a case may have (batch-norm training has 5; an Adam
 *  step over HARNESS_MAX_INPUTS tensors 3 * 8: the parameters, m and v). */
#define HARNESS_MAX_OUTPUTS 24

/* ------------------------------------------------------------------------ */
/* Descriptors and ops                                                       */
/* ------------------------------------------------------------------------ */

/** Any op's public descriptor: one member per row of ADNN_OP_LIST, named as
 *  the op (desc.conv2d is an adnn_conv2d_desc). */
typedef union harness_desc {
#define HARNESS_DESC_MEMBER_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags) \
  adnn_##name##_desc name;
  ADNN_OP_LIST(HARNESS_DESC_MEMBER_)
#undef HARNESS_DESC_MEMBER_
} harness_desc;

/** One execute input of a descriptor: its name as doc/ops.md gives it and its
 *  layout (batch norm's and the norms' parameter vectors are packed vectors
 *  that have no descriptor of their own: they get one here). */
typedef struct harness_tensor {
  const char *name;
  adnn_tensor_desc desc;
} harness_tensor;

/** The bounds of doc/numerics.md: rel_l2 bounds ||got - ref||_2 / ||ref||_2
 *  and max_abs bounds max |got - ref| / max(1, max |ref|), both over the
 *  elements where the reference is finite. */
typedef struct harness_tolerance {
  double rel_l2, max_abs;
} harness_tolerance;

typedef struct harness_buffer harness_buffer;
typedef struct harness_case harness_case;
typedef struct harness_report harness_report;
typedef struct harness_suite harness_suite;

/** What the harness knows about one op. Every function gets a descriptor of
 *  this op (the member of harness_desc named after it). */
typedef struct harness_op_traits {
  /** The execute inputs of d in the order adnn_plan_execute takes them;
   *  returns their number (at most HARNESS_MAX_INPUTS). */
  int (*inputs)(const harness_desc *d, harness_tensor *in);
  /** y's layout. */
  adnn_tensor_desc (*output)(const harness_desc *d);
  /** Sets the element type of every tensor of d. */
  void (*set_dtype)(harness_desc *d, adnn_dtype dtype);
  /** The oracle: computes y (values at y's element offsets; other elements
   *  are left alone) from the inputs (in[i] holds input i's values at its
   *  element offsets), in long double, from d alone. Returns 0, or -1 with
   *  the reason in why when d contradicts doc/ops.md (e.g. y's dims are not
   *  the ones the definition gives): the oracle checks the library's shape
   *  rules instead of trusting them. */
  int (*oracle)(const harness_desc *d, const double *const *in, double *y, char *why,
                size_t why_len);
  /** The bounds of doc/numerics.md for d in this dtype. */
  harness_tolerance (*tolerance)(const harness_desc *d, adnn_dtype dtype);
  /** Default input data for any descriptor of the op (adnn-bench's
   *  correctness mode): values the op is well defined and well conditioned
   *  on (variances > 0, divisors away from 0, ...), seeded by r. */
  void (*fill)(const harness_desc *d, harness_buffer *in, int n_in, tap_rng *r);
  /** Variants every conformance case runs in, in order (conv2d: AUTO, then
   *  every algorithm forced): their number (1 when the op has none) and a
   *  function that applies variant v to d and returns its label (NULL for an
   *  op without variants). */
  int variant_count;
  const char *(*set_variant)(harness_desc *d, int v);
  /** Whether `backend` is documented to implement variant v (> 0), so that
   *  it must pass it on at least one case; NULL: no such expectation. */
  int (*variant_expected)(const char *backend, int v);
  /** Submits every conformance case of the op to s (harness_submit). */
  void (*cases)(harness_suite *s);
  /** Checks the oracle on tiny cases whose results were derived by hand. */
  void (*oracle_selftests)(const harness_report *r);
  /** Bad descriptors through the public API on ctx: the statuses and
   *  messages of doc/ops.md's error rules. NULL: none. */
  void (*bad_descriptors)(const harness_report *r, adnn_context *ctx, const char *backend);

  /* Ops with several outputs, or with outputs that are read before they are
   * written. The harness lays a case's outputs out one after the other in
   * one host buffer (c->out, each output starting at a multiple of 16
   * elements, NaN gaps between them) and one device allocation, so that the
   * comparison, the NaN poisoning and the gap checks are those of a single
   * output; adnn_plan_execute_multi receives a pointer into it per output. */

  /** The outputs of d in the order adnn_plan_execute_multi takes them (at
   *  most HARNESS_MAX_OUTPUTS, all of one dtype); returns their number. NULL:
   *  the op has one output, `output`, and runs with adnn_plan_execute. */
  int (*outputs)(const harness_desc *d, harness_tensor *out);
  /** Bit i set when output i is read and updated (running statistics,
   *  optimizer parameters and states, a gradient accumulated with beta):
   *  fill_outputs gives it initial values, which are uploaded instead of the
   *  NaN poison, and such a case runs once (a second run would apply the op
   *  twice). NULL: no output is read. Works for single-output ops too. */
  unsigned (*inout)(const harness_desc *d);
  /** Initial values of the outputs that `inout` marks: out[i] is a buffer of
   *  output i's layout (fill only the marked ones). */
  void (*fill_outputs)(const harness_desc *d, harness_buffer *out, int n_out, tap_rng *r);
  /** The oracle of an op with `outputs`: out[i] holds output i's values at
   *  its element offsets, preset to its initial values when `inout` marks it
   *  and to NaN otherwise; writes every output. Returns as `oracle`. */
  int (*oracle_outputs)(const harness_desc *d, const double *const *in, double *const *out,
                        char *why, size_t why_len);
} harness_op_traits;

/** One op of the manifest. */
typedef struct harness_op {
  const char *name;  /**< "conv2d": the manifest's name */
  int kind;          /**< the manifest's value (the plugin op kind) */
  unsigned dtypes;   /**< ADNN_OP_DTYPE mask */
  unsigned flags;    /**< ADNN_OP_* flags */
  const char *input_names; /**< "x, w[, bias]" as the manifest documents them */
  /** adnn_plan_create_<name> on the descriptor's member of this op. */
  adnn_status (*create)(adnn_context *ctx, const harness_desc *d, adnn_plan **plan);
  const harness_op_traits *traits;
} harness_op;

/* Every op's traits, defined in t/ops/<op>.c. A manifest row without
 * a definition of harness_<name>_traits fails the link of everything that uses
 * the harness. */
#define HARNESS_DECLARE_TRAITS_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags) \
  extern const harness_op_traits harness_##name##_traits;
ADNN_OP_LIST(HARNESS_DECLARE_TRAITS_)
#undef HARNESS_DECLARE_TRAITS_

/** Every op of the manifest, in its order. */
extern const harness_op harness_ops[];
extern const size_t harness_op_count;

/** The op named `name` ("conv2d"), or NULL. */
const harness_op *harness_op_find(const char *name);

/* ------------------------------------------------------------------------ */
/* Tensors and host buffers                                                  */
/* ------------------------------------------------------------------------ */

/** Layouts of the tensors that cases build. */
enum harness_layout {
  HARNESS_PACKED, /**< row-major (NCHW, KCRS) */
  HARNESS_NHWC,   /**< 4-D [N, C, H, W] stored N, H, W, C (filters: KRSC) */
  HARNESS_PADDED  /**< row-major with a gap of 2 elements after every row of
                       every dim, so that gaps exist at every level */
};

/** A descriptor of dims in one of the layouts above. */
adnn_tensor_desc harness_tensor_desc(adnn_dtype dtype, int rank, const int64_t *dims,
                                     enum harness_layout layout);
adnn_tensor_desc harness_tensor_desc4(adnn_dtype dtype, int64_t d0, int64_t d1, int64_t d2,
                                      int64_t d3, enum harness_layout layout);
adnn_tensor_desc harness_vector_desc(adnn_dtype dtype, int64_t n);

/** Elements of t (1 for rank 0), and the elements from its first to one past
 *  its last (the buffer it needs). */
int64_t harness_element_count(const adnn_tensor_desc *t);
int64_t harness_span(const adnn_tensor_desc *t);

/** The element offset of row-major element number `linear` of t. */
int64_t harness_offset(const adnn_tensor_desc *t, int64_t linear);

/** Walks the elements of a tensor in row-major order:
 *    harness_index i; for (harness_index_first(&i, t); i.valid; harness_index_next(&i, t))
 *  with i.idx the multi-index and i.offset the element offset. */
typedef struct harness_index {
  int valid;
  int64_t idx[ADNN_MAX_RANK];
  int64_t offset;
} harness_index;
void harness_index_first(harness_index *i, const adnn_tensor_desc *t);
void harness_index_next(harness_index *i, const adnn_tensor_desc *t);

/** A tensor on the host: its values as doubles at their element offsets
 *  (span of them), NaN at every offset that holds no element (the gaps of
 *  padded strides), and a map of the offsets that hold one. For an F32
 *  tensor the values are F32-representable, so that the oracle sees exactly
 *  what the backend sees. */
struct harness_buffer {
  adnn_tensor_desc desc;
  int64_t span;
  double *v;
  unsigned char *member;
};

/** Allocates b for desc, every value NaN. Returns 0, or -1 when out of
 *  memory (b is then empty). */
int harness_buffer_init(harness_buffer *b, const adnn_tensor_desc *desc);
void harness_buffer_free(harness_buffer *b);

/** v rounded to the dtype: RNE into F32/F16/BF16 (kernels/common/float16.h),
 *  integers half to even and saturated to I8/U8/I32; NaN stays NaN. */
double harness_round(adnn_dtype dtype, double v);

/** Uniform values in [lo, hi) at every element. */
void harness_fill_uniform(harness_buffer *b, tap_rng *r, double lo, double hi);
/** Values of mixed scales at every element: uniform in [-1, 1), 10% of them
 *  x10 and 10% x0.01 (doc/numerics.md's magnitudes). */
void harness_fill_mixed(harness_buffer *b, tap_rng *r);
/** Sets row-major element `linear` to v (rounded to the dtype). */
void harness_set_element(harness_buffer *b, int64_t linear, double v);

/** A stable seed for a case: FNV-1a of its name. */
uint64_t harness_seed(const char *name);

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

/** One op applied to one descriptor and its input values. */
struct harness_case {
  const harness_op *op;
  char name[256];
  adnn_dtype dtype;
  harness_desc desc;
  int n_in;
  harness_buffer in[HARNESS_MAX_INPUTS];
  harness_buffer out;  /**< y's layout (its values are not used), or all the
                            outputs one after the other (see the traits'
                            `outputs`), with the initial values of in-out ones */
  int inplace;         /**< -1, or the input whose buffer y (output 0) is */
  /** The outputs: n_out (0 means one: `out` is y), their layouts, and where
   *  each starts in `out` (in elements). */
  int n_out;
  adnn_tensor_desc out_desc[HARNESS_MAX_OUTPUTS];
  int64_t out_offset[HARNESS_MAX_OUTPUTS];
  unsigned inout; /**< the traits' `inout` bits for the descriptor */
  /** Storage for the forward descriptor that a backward op's descriptor
   *  points to (desc.<op>.forward == &forward.<forward op>), so that the
   *  pointer lives as long as the case; a copy of the case keeps pointing to
   *  the original's. */
  harness_desc forward;
};

/** Starts a case of op in dtype named by the format (" f64" is appended for
 *  F64): everything else zero, no input buffers, not in place. */
void harness_case_init(harness_case *c, const harness_op *op, adnn_dtype dtype, const char *fmt,
                       ...) HARNESS_PRINTF_(4, 5);
/** Once the descriptor is filled: allocates the buffers of its inputs (as the
 *  op's traits list them) and of y (or of every output). Returns 0, or -1
 *  when out of memory or when the outputs are too many or of mixed dtypes. */
int harness_case_alloc(harness_case *c);
/** Fills the inputs with the op's default data, seeded by the case's name,
 *  and the in-out outputs with their initial values. */
void harness_case_fill(harness_case *c);
void harness_case_free(harness_case *c);

/** Runs a case and frees its buffers: the conformance program's job. */
struct harness_suite {
  void (*run)(harness_suite *self, harness_case *c);
};
void harness_submit(harness_suite *s, harness_case *c);

/** The oracle's y for c: out.span values, NaN where y has no element. NULL
 *  when out of memory or when the oracle rejects the descriptor (the reason
 *  is then in why). */
double *harness_oracle(const harness_case *c, char *why, size_t why_len);

/* ------------------------------------------------------------------------ */
/* Running on a backend                                                      */
/* ------------------------------------------------------------------------ */

/** A case's buffers on a context. */
typedef struct harness_device {
  void *in[HARNESS_MAX_INPUTS];
  void *y; /**< the in-place input's buffer, or its own (every output) */
  void *out[HARNESS_MAX_OUTPUTS]; /**< each output's pointer */
} harness_device;

/** Allocates and uploads the inputs; allocates y and fills it with NaN (every
 *  byte 0xFF) or, for in-out outputs, their initial values, unless y is an input. Returns the status; on failure *step
 *  names what failed and what was allocated is freed. */
adnn_status harness_upload(adnn_context *ctx, const harness_case *c, harness_device *dev,
                           const char **step);
/** adnn_plan_execute with the case's inputs and y, or adnn_plan_execute_multi
 *  with every output for an op with several. */
adnn_status harness_execute(adnn_plan *plan, const harness_case *c, const harness_device *dev);
/** Copies y back into y_out (out.span values). */
adnn_status harness_download(adnn_context *ctx, const harness_case *c, const harness_device *dev,
                             double *y_out);
void harness_release(adnn_context *ctx, const harness_case *c, harness_device *dev);

/** The outcome of one case on one context. */
typedef enum harness_outcome {
  HARNESS_RAN,           /**< y is there to compare */
  HARNESS_NOT_SUPPORTED, /**< plan creation said NOT_SUPPORTED: a gap, reason in message */
  HARNESS_FAILED         /**< anything else went wrong: message says what */
} harness_outcome;

typedef struct harness_run {
  harness_outcome outcome;
  adnn_status status;
  char algorithm[128];  /**< adnn_plan_get_algorithm, when a plan was created */
  char message[768];
  double *y;            /**< out.span values when it ran; free() it */
} harness_run;

/** One execution of c's computation on its device buffers. */
typedef adnn_status (*harness_executor)(void *arg, const harness_case *c,
                                        const harness_device *dev);
/** Runs c: upload, poison y with NaN, execute (twice unless in place or
 *  with in-out outputs: a plan is reusable, and a second run must give the
 *  same y), synchronize, download. */
void harness_run_with(adnn_context *ctx, const harness_case *c, harness_executor execute,
                      void *arg, harness_run *r);
/** harness_run_with executing `plan`; r->algorithm names what it ran. */
void harness_run_plan(adnn_context *ctx, adnn_plan *plan, const harness_case *c, harness_run *r);
/** Creates the plan with the op's constructor, then harness_run_plan. */
void harness_run_case(adnn_context *ctx, const harness_case *c, harness_run *r);

/* ------------------------------------------------------------------------ */
/* Comparison                                                                */
/* ------------------------------------------------------------------------ */

typedef struct harness_comparison {
  double rel_l2, max_abs;   /**< max_abs already scaled by max(1, max |ref|) */
  int64_t nonfinite_bad;    /**< NaN / inf where the reference has none, or not the same */
  int64_t gap_bad;          /**< gap elements of y that are no longer NaN */
  int64_t first_bad;        /**< offset of the first bad or the worst element, or -1 */
  double bad_got, bad_want;
} harness_comparison;

/** Compares got with want (span values of the layout of `layout`) over the
 *  elements of layout: relative L2 and max-abs errors over the finite
 *  reference elements, exact agreement on the others; with check_gaps, the
 *  gap offsets of got must still be NaN. */
harness_comparison harness_compare(const double *got, const double *want,
                                   const harness_buffer *layout, int check_gaps);
int harness_within(const harness_comparison *c, harness_tolerance t);
/** One line saying both errors with their limits and the first bad element. */
void harness_describe(const harness_comparison *c, harness_tolerance t, char *buf, size_t len);

/** The bound of a dot product of n terms (conv2d, GEMM): doc/numerics.md's
 *  conv2d row for n <= 576, grown like sqrt(n / 576) beyond (rounding errors
 *  of long sums grow like sqrt(n); doc/bench.md). */
harness_tolerance harness_dot_tolerance(adnn_dtype dtype, int64_t n);
/** t with both bounds multiplied by k. */
harness_tolerance harness_scale_tolerance(harness_tolerance t, double k);
/** The unit roundoff of a floating dtype's storage: 2^-11 for F16, 2^-8 for
 *  BF16, 2^-24 for F32, 2^-53 for F64. */
double harness_unit_roundoff(adnn_dtype dtype);
/** The tolerance of an op whose F16/BF16 form computes in F32 and rounds its
 *  result once to the storage type (doc/numerics.md, "Low precision"): for
 *  F16 and BF16, f32 (the op's F32 tolerance, which bounds the F32 compute
 *  error) plus `roundings` units of roundoff of dtype in both measures (they
 *  are relative to max(1, max |ref|), and one rounding moves y by at most
 *  u |y|); for F32 and F64, `own` unchanged. */
harness_tolerance harness_lowp_tolerance(adnn_dtype dtype, harness_tolerance own,
                                         harness_tolerance f32, double roundings);

/** The oracle of adnn_gemm (not a manifest op: adnn-bench's gemm: problems):
 *  C = op(A) op(B) for packed row-major A (m x k, or k x m stored when
 *  trans_a), B (k x n, or n x k when trans_b) and C (m x n), in long double,
 *  for the rows 0, row_step, 2 row_step, ... of C only (a sample of a big
 *  product); the other rows are left alone. */
void harness_gemm_oracle(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                         const double *a, const double *b, double *c, int64_t row_step);

/* ------------------------------------------------------------------------ */
/* Oracle helpers shared by the ops                                          */
/* ------------------------------------------------------------------------ */

/** f(x) of doc/ops.md's activation table in long double, including its
 *  limits at +-inf and NaN -> NaN (the epilogue of conv2d and batch norm). */
long double harness_activation_oracle(const adnn_activation *a, long double x);

/** dy * f'(x) of doc/ops.md's activation backward table in long double (its
 *  kinks, NaN and infinity rules); t/ops/activation_backward.c. */
long double harness_activation_grad_oracle(const adnn_activation *a, long double x,
                                           long double dy);

/** For the backward ops of pooling, activations and softmax: initializes
 *  d's backward descriptor and points its `forward` at a fresh forward
 *  descriptor (adnn_<op>_desc_init'ed) that lives in the op's file and
 *  outlives the case (t/ops/<op>_backward.c); returns it for filling. */
adnn_pool2d_desc *harness_pool2d_backward_forward(harness_desc *d);
adnn_activation_desc *harness_activation_backward_forward(harness_desc *d);
adnn_softmax_desc *harness_softmax_backward_forward(harness_desc *d);

/** A long sum in long double with compensation: each block of
 *  HARNESS_SUM_BLOCK terms is summed plainly (exact for products of F32
 *  values, which need 48 of long double's 64 significand bits), and the
 *  block sums are added with Kahan's compensated summation, so that the
 *  total's error stays a few units of long double whatever the length.
 *  A non-finite term makes the total what plain IEEE addition gives. */
#define HARNESS_SUM_BLOCK 16
typedef struct harness_sum {
  long double total, compensation, block, plain;
  int in_block;
} harness_sum;

static inline void harness_sum_init(harness_sum *s) {
  s->total = s->compensation = s->block = s->plain = 0.0L;
  s->in_block = 0;
}

static inline void harness_sum_flush_(harness_sum *s) {
  long double y = s->block - s->compensation;
  long double t = s->total + y;
  s->compensation = (t - s->total) - y;
  s->total = t;
  s->plain += s->block;
  s->block = 0.0L;
  s->in_block = 0;
}

static inline void harness_sum_add(harness_sum *s, long double v) {
  s->block += v;
  if (++s->in_block == HARNESS_SUM_BLOCK) harness_sum_flush_(s);
}

static inline long double harness_sum_value(harness_sum *s) {
  harness_sum_flush_(s);
  /* Kahan's correction turns inf - inf into NaN; the plain sum is what IEEE
   * arithmetic gives for non-finite terms. */
  return s->plain - s->plain == 0.0L ? s->total : s->plain;
}

/* ------------------------------------------------------------------------ */
/* Reporting (selftests and bad descriptors)                                 */
/* ------------------------------------------------------------------------ */

/** Where checks go: t/conformance prints TAP lines. */
struct harness_report {
  int (*ok)(void *self, int cond, const char *description);
  void (*diag)(void *self, const char *text);
  void (*skip)(void *self, const char *reason);
  void *self;
};

int harness_ok(const harness_report *r, int cond, const char *fmt, ...) HARNESS_PRINTF_(3, 4);
void harness_diag(const harness_report *r, const char *fmt, ...) HARNESS_PRINTF_(2, 3);
void harness_skip(const harness_report *r, const char *fmt, ...) HARNESS_PRINTF_(2, 3);
/** A status check: on a mismatch both names and adnn_last_error() are
 *  printed. */
int harness_is_status(const harness_report *r, adnn_status got, adnn_status want,
                      const char *fmt, ...) HARNESS_PRINTF_(4, 5);
/** haystack contains needle; both printed otherwise. */
int harness_contains(const harness_report *r, const char *haystack, const char *needle,
                     const char *fmt, ...) HARNESS_PRINTF_(4, 5);
/** got is want within tol * (1 + |want|), NaN where NaN, the same infinity
 *  where infinite (for the oracle's self-tests). */
int harness_close(double got, double want, double tol);

#endif /* ADNN_TEST_HARNESS_H */
