/*
 * The op functions, driven by the op manifest (ADNN_OP_LIST of
 * <adnn/op_list.h>). Everything op-specific is one binding_<name> table
 * below: its inputs (and where each lives in the descriptor), its keyword
 * parameters (type and field offset), and how its output shape follows from
 * the descriptor. The descriptor type, its *_init(), the plan-create
 * function, the manifest's input list and the registration as a module
 * function are generated from the manifest, and the generated table
 * references binding_<name> for every row: a manifest row without a binding
 * fails to compile. See doc/python.md.
 */
#include "adnn_py.h"

#include <stddef.h>
#include <string.h>

#define MAX_INPUTS 8 /* attention backward: q, k, v, o, do, lse, bias, key_lengths */
#define MAX_PARAMS 16
#define NO_OFFSET ((size_t)-1)

typedef enum { P_INT64, P_INT32, P_BOOL, P_DOUBLE, P_PAIR, P_PAD, P_ACT, P_ENUM, P_AXES,
               P_TENSOR, P_SHAPE4, P_FLOAT } ptype;

typedef struct kind_name {
  const char *name;
  int value;
} kind_name;

typedef struct param_spec {
  const char *name;
  ptype type;
  size_t off;              /* the field in the descriptor */
  const kind_name *kinds;  /* P_ENUM: the accepted names */
} param_spec;

typedef struct input_spec {
  const char *name;
  int optional;
  size_t desc_off; /* its adnn_tensor_desc in the descriptor, or NO_OFFSET */
  size_t flag_off; /* an int32 has_<name> flag set when given, or NO_OFFSET */
  int packed_vector; /* a packed vector whose length check() verifies */
  /* 1: its dtype may differ from x's (the library checks the combination:
   * matmul's F32 bias of F16/BF16 inputs, its per-channel scales); 2: it may
   * differ only when x is an integer tensor (conv2d's I8 w and I32 bias
   * under a U8/I8 x), so a float mismatch stays a DTypeError here. */
  int own_dtype;
} input_spec;

typedef struct op_binding {
  input_spec inputs[MAX_INPUTS];
  param_spec params[MAX_PARAMS];
  size_t y_off; /* the output's adnn_tensor_desc */
  /* 1: out= may have any dtype (reorder converts into it); otherwise it has
   * x's. */
  int out_any_dtype;
  /* The output dims from the filled descriptor; returns the rank or -1. */
  int (*output_dims)(const void *desc, TensorObject *const *in, int64_t *dims);
  /* The expected length of packed-vector input i, or -1 when not one. */
  int64_t (*vector_len)(const void *desc, TensorObject *const *in, int i);
  const char *doc;
  /* Backward ops, whose descriptor only points to a forward descriptor: the
   * inputs, parameters and output above are fields of that FORWARD
   * descriptor (of fwd_size bytes, set up by fwd_init), which is also the
   * plan cache's key, and fwd_create makes the backward plan from it. */
  size_t fwd_size;
  void (*fwd_init)(void *fwd);
  adnn_status (*fwd_create)(adnn_context *ctx, const void *fwd, adnn_plan **plan);
  /* Backward ops: two inputs that must share one layout (they land in one
   * forward tensor, e.g. y and dy), -1 for none; and the input whose layout
   * the output must have (dx has x's), -1 for none. Index 0 means input 0,
   * so an unused pair is written {-1, -1}. */
  int same_layout[2];
  int out_like;
  /* Ops whose descriptor points to another one (the backward convolutions:
   * `forward`): the binding's own storage, of desc_size bytes (0: the
   * descriptor's size), set up by init (NULL: the descriptor's *_init) and
   * turned into a plan by create (NULL: adnn_plan_create_<name>). The
   * storage holds the pointed-to descriptor too, with the pointer left NULL
   * so that the plan cache's key (the storage's bytes) does not depend on
   * where the storage is; create points it there. */
  size_t desc_size;
  void (*init)(void *desc);
  adnn_status (*create)(adnn_context *, const void *, adnn_plan **);
  /* A double in the descriptor (beta) that, when not 0, makes the outputs
   * read before written, so that out= is required; NO_OFFSET (0 here means
   * "none" only together with has_beta). */
  int has_beta;
  size_t beta_off;
  /* A second output (the bias gradient): its tensor descriptor's place and
   * its dims from the filled descriptor (the rank, 0 when the op has none
   * for this descriptor, -1 on error). With one, out= is a pair and the
   * result a tuple. */
  size_t y2_off;
  int (*output2_dims)(const void *desc, TensorObject *const *in, int64_t *dims);
  /* Ops with several outputs or a forward descriptor (the training ops):
   * their own call, given the same (self, args, kwargs) as op_call; inputs
   * and params then only document it (the docstring, the manifest check).
   * `returns` replaces "Tensor" in the docstring; such calls take no out=. */
  PyObject *(*call)(PyObject *self, PyObject *args, PyObject *kwargs);
  const char *returns;
} op_binding;

/* ---- kind names, from the manifest's kind lists ------------------------------------ */

#define KN4_(NAME, name, value, def) {#name, value},
#define KN5_(NAME, name, value, params, def) {#name, value},
static const kind_name activation_kinds[] = {ADNN_ACTIVATION_LIST(KN5_){NULL, 0}};
static const kind_name pool_kinds[] = {ADNN_POOL_LIST(KN4_){NULL, 0}};
static const kind_name norm_kinds[] = {ADNN_NORM_LIST(KN4_){NULL, 0}};
static const kind_name binary_kinds[] = {ADNN_BINARY_LIST(KN4_){NULL, 0}};
static const kind_name reduce_kinds[] = {ADNN_REDUCE_LIST(KN4_){NULL, 0}};
static const kind_name conv2d_algos[] = {ADNN_CONV2D_ALGO_LIST(KN4_){NULL, 0}};
static const kind_name loss_reductions[] = {ADNN_LOSS_REDUCTION_LIST(KN4_){NULL, 0}};
static const kind_name optimizer_kinds[] = {ADNN_OPTIMIZER_LIST(KN4_){NULL, 0}};
static const kind_name loss_scale_kinds[] = {ADNN_LOSS_SCALE_LIST(KN4_){NULL, 0}};

/* ---- output shapes -------------------------------------------------------------------- */

static int same_as_x(const void *desc, TensorObject *const *in, int64_t *dims) {
  memcpy(dims, in[0]->desc.dims, sizeof(int64_t) * (size_t)in[0]->desc.rank);
  return in[0]->desc.rank;
}

static int conv2d_dims(const void *desc, TensorObject *const *in, int64_t *dims) {
  adnn_status st = adnn_conv2d_output_dims(desc, dims);
  if (st != ADNN_STATUS_SUCCESS) return adnn_py_raise(st, "adnn.conv2d"), -1;
  return 4;
}

static int pool2d_dims(const void *desc, TensorObject *const *in, int64_t *dims) {
  adnn_status st = adnn_pool2d_output_dims(desc, dims);
  if (st != ADNN_STATUS_SUCCESS) return adnn_py_raise(st, "adnn.pool2d"), -1;
  return 4;
}

static int binary_dims(const void *desc, TensorObject *const *in, int64_t *dims) {
  const adnn_tensor_desc *a = &in[0]->desc, *b = &in[1]->desc;
  int rank = a->rank > b->rank ? a->rank : b->rank;
  for (int i = 0; i < rank; i++) {
    int ia = a->rank - rank + i, ib = b->rank - rank + i;
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      adnn_py_fail(AdnnArgumentError,
                   "adnn.binary: dims do not broadcast: a's %lld and b's %lld at y dim %d",
                   (long long)da, (long long)db, i);
      return -1;
    }
    dims[i] = da == 1 ? db : da;
  }
  return rank;
}

static int reduce_dims(const void *desc, TensorObject *const *in, int64_t *dims) {
  const adnn_reduce_desc *d = desc;
  int rank = 0;
  for (int i = 0; i < in[0]->desc.rank; i++) {
    int reduced = (d->axes >> i) & 1u;
    if (!reduced) dims[rank++] = in[0]->desc.dims[i];
    else if (d->keep_dims) dims[rank++] = 1;
  }
  return rank;
}

static int64_t batchnorm_len(const void *desc, TensorObject *const *in, int i) {
  return in[0]->desc.rank >= 2 ? in[0]->desc.dims[1] : -1;
}

static int64_t norm_len(const void *desc, TensorObject *const *in, int i) {
  const adnn_norm_desc *d = desc;
  int64_t n = 1;
  for (int k = in[0]->desc.rank - d->norm_dims; k < in[0]->desc.rank; k++)
    if (k >= 0) n *= in[0]->desc.dims[k];
  return n;
}

/* ---- the per-op tables ----------------------------------------------------------------- */

#define OFF(T, f) offsetof(T, f)
#define T_IN(name, T, f) {name, 0, OFF(T, f), NO_OFFSET, 0}

static const op_binding binding_conv2d = {
    .inputs = {T_IN("x", adnn_conv2d_desc, x),
               /* w is I8 and the bias I32 under an I8/U8 x */
               {"w", 0, OFF(adnn_conv2d_desc, w), NO_OFFSET, 0, 2},
               {"bias", 1, OFF(adnn_conv2d_desc, bias), OFF(adnn_conv2d_desc, has_bias), 0, 2},
               {"requant_scales", 1, OFF(adnn_conv2d_desc, requant_scales),
                OFF(adnn_conv2d_desc, has_requant_scales), 0, 1}},
    .params = {{"stride", P_PAIR, OFF(adnn_conv2d_desc, stride_h)},
               {"padding", P_PAD, OFF(adnn_conv2d_desc, pad_top)},
               {"dilation", P_PAIR, OFF(adnn_conv2d_desc, dilation_h)},
               {"groups", P_INT64, OFF(adnn_conv2d_desc, groups)},
               {"activation", P_ACT, OFF(adnn_conv2d_desc, activation)},
               {"algorithm", P_ENUM, OFF(adnn_conv2d_desc, algorithm), conv2d_algos},
               {"x_zero_point", P_INT32, OFF(adnn_conv2d_desc, x_zero_point)},
               {"requant_scale", P_DOUBLE, OFF(adnn_conv2d_desc, requant_scale)},
               {"y_zero_point", P_INT32, OFF(adnn_conv2d_desc, y_zero_point)}},
    /* An I8/U8 x gives an I32 y or a requantized I8/U8 one (out= says
     * which); without out= y has x's dtype. */
    .out_any_dtype = 1,
    .y_off = OFF(adnn_conv2d_desc, y),
    .output_dims = conv2d_dims,
    .doc = "2-D convolution (cross-correlation), x [N,C,H,W], w [K,C/groups,R,S], bias [K]; "
           "i8/u8 x with an i8 w: exact, x_zero_point, i32 bias, out= i32 or i8/u8 requantized "
           "(requant_scale or requant_scales [K], y_zero_point).",
};

static const op_binding binding_pool2d = {
    .inputs = {T_IN("x", adnn_pool2d_desc, x)},
    .params = {{"kind", P_ENUM, OFF(adnn_pool2d_desc, kind), pool_kinds},
               {"kernel", P_PAIR, OFF(adnn_pool2d_desc, kernel_h)},
               {"stride", P_PAIR, OFF(adnn_pool2d_desc, stride_h)},
               {"padding", P_PAD, OFF(adnn_pool2d_desc, pad_top)},
               {"ceil_mode", P_BOOL, OFF(adnn_pool2d_desc, ceil_mode)}},
    .y_off = OFF(adnn_pool2d_desc, y),
    .output_dims = pool2d_dims,
    .doc = "2-D pooling (max, avg_include_pad, avg_exclude_pad), x [N,C,H,W].",
};

static const op_binding binding_activation = {
    .inputs = {T_IN("x", adnn_activation_desc, x)},
    .params = {{"activation", P_ACT, OFF(adnn_activation_desc, activation)}},
    .y_off = OFF(adnn_activation_desc, y),
    .output_dims = same_as_x,
    .doc = "Elementwise activation: a name ('relu') or (name, alpha[, beta]).",
};

static const op_binding binding_softmax = {
    .inputs = {T_IN("x", adnn_softmax_desc, x)},
    .params = {{"axis", P_INT32, OFF(adnn_softmax_desc, axis)},
               {"log", P_BOOL, OFF(adnn_softmax_desc, log)}},
    .y_off = OFF(adnn_softmax_desc, y),
    .output_dims = same_as_x,
    .doc = "Softmax (or log-softmax with log=True) along axis.",
};

static const op_binding binding_batchnorm = {
    .inputs = {T_IN("x", adnn_batchnorm_desc, x),
               {"scale", 0, NO_OFFSET, NO_OFFSET, 1},
               {"shift", 0, NO_OFFSET, NO_OFFSET, 1},
               {"mean", 0, NO_OFFSET, NO_OFFSET, 1},
               {"var", 0, NO_OFFSET, NO_OFFSET, 1}},
    .params = {{"epsilon", P_DOUBLE, OFF(adnn_batchnorm_desc, epsilon)},
               {"activation", P_ACT, OFF(adnn_batchnorm_desc, activation)}},
    .y_off = OFF(adnn_batchnorm_desc, y),
    .output_dims = same_as_x,
    .vector_len = batchnorm_len,
    .doc = "Inference batch normalization over dim 1; scale, shift, mean, var packed [C].",
};

static const op_binding binding_norm = {
    .inputs = {T_IN("x", adnn_norm_desc, x),
               {"gain", 1, NO_OFFSET, OFF(adnn_norm_desc, has_gain), 1},
               {"bias", 1, NO_OFFSET, OFF(adnn_norm_desc, has_bias), 1}},
    .params = {{"kind", P_ENUM, OFF(adnn_norm_desc, kind), norm_kinds},
               {"norm_dims", P_INT32, OFF(adnn_norm_desc, norm_dims)},
               {"epsilon", P_DOUBLE, OFF(adnn_norm_desc, epsilon)}},
    .y_off = OFF(adnn_norm_desc, y),
    .output_dims = same_as_x,
    .vector_len = norm_len,
    .doc = "Layer or RMS normalization over the last norm_dims dims; gain, bias packed [D].",
};

static const op_binding binding_binary = {
    .inputs = {T_IN("a", adnn_binary_desc, a), T_IN("b", adnn_binary_desc, b)},
    .params = {{"op", P_ENUM, OFF(adnn_binary_desc, op), binary_kinds},
               {"alpha", P_DOUBLE, OFF(adnn_binary_desc, alpha)},
               {"beta", P_DOUBLE, OFF(adnn_binary_desc, beta)}},
    .y_off = OFF(adnn_binary_desc, y),
    .output_dims = binary_dims,
    .doc = "y = op(alpha * a, beta * b) with NumPy broadcasting.",
};

static const op_binding binding_reduce = {
    .inputs = {T_IN("x", adnn_reduce_desc, x)},
    .params = {{"kind", P_ENUM, OFF(adnn_reduce_desc, kind), reduce_kinds},
               {"axes", P_AXES, OFF(adnn_reduce_desc, axes)},
               {"keep_dims", P_BOOL, OFF(adnn_reduce_desc, keep_dims)}},
    .y_off = OFF(adnn_reduce_desc, y),
    .output_dims = reduce_dims,
    .doc = "Reduction (sum, mean, max, min) over axes (an int or a tuple).",
};

/* ---- backward ops: forward descriptors and the backward plans made from them ---------- */

static void fwd_init_pool2d(void *d) { adnn_pool2d_desc_init(d); }
static void fwd_init_activation(void *d) { adnn_activation_desc_init(d); }
static void fwd_init_softmax(void *d) { adnn_softmax_desc_init(d); }

static adnn_status fwd_create_pool2d_backward(adnn_context *c, const void *fwd, adnn_plan **p) {
  adnn_pool2d_backward_desc d;
  adnn_pool2d_backward_desc_init(&d);
  d.forward = fwd;
  return adnn_plan_create_pool2d_backward(c, &d, p);
}

static adnn_status fwd_create_activation_backward(adnn_context *c, const void *fwd,
                                                  adnn_plan **p) {
  adnn_activation_backward_desc d;
  adnn_activation_backward_desc_init(&d);
  d.forward = fwd;
  return adnn_plan_create_activation_backward(c, &d, p);
}

static adnn_status fwd_create_softmax_backward(adnn_context *c, const void *fwd, adnn_plan **p) {
  adnn_softmax_backward_desc d;
  adnn_softmax_backward_desc_init(&d);
  d.forward = fwd;
  return adnn_plan_create_softmax_backward(c, &d, p);
}

/* pool2d_backward(ctx, x, y, dy, *, <pool2d's parameters>) -> dx (x's layout). */
static const op_binding binding_pool2d_backward = {
    .inputs = {T_IN("x", adnn_pool2d_desc, x), T_IN("y", adnn_pool2d_desc, y),
               T_IN("dy", adnn_pool2d_desc, y)},
    .params = {{"kind", P_ENUM, OFF(adnn_pool2d_desc, kind), pool_kinds},
               {"kernel", P_PAIR, OFF(adnn_pool2d_desc, kernel_h)},
               {"stride", P_PAIR, OFF(adnn_pool2d_desc, stride_h)},
               {"padding", P_PAD, OFF(adnn_pool2d_desc, pad_top)},
               {"ceil_mode", P_BOOL, OFF(adnn_pool2d_desc, ceil_mode)}},
    .y_off = OFF(adnn_pool2d_desc, x),
    .output_dims = same_as_x,
    .doc = "The gradient of pool2d with respect to x (the parameters are the forward's).",
    .fwd_size = sizeof(adnn_pool2d_desc),
    .fwd_init = fwd_init_pool2d,
    .fwd_create = fwd_create_pool2d_backward,
    .same_layout = {1, 2},
    .out_like = 0,
};

/* activation_backward(ctx, x, dy, *, activation) -> dx = dy * act'(x). */
static const op_binding binding_activation_backward = {
    .inputs = {T_IN("x", adnn_activation_desc, x), T_IN("dy", adnn_activation_desc, y)},
    .params = {{"activation", P_ACT, OFF(adnn_activation_desc, activation)}},
    .y_off = OFF(adnn_activation_desc, x),
    .output_dims = same_as_x,
    .doc = "dx = dy * act'(x), with doc/ops.md's values at the kinks.",
    .fwd_size = sizeof(adnn_activation_desc),
    .fwd_init = fwd_init_activation,
    .fwd_create = fwd_create_activation_backward,
    .same_layout = {-1, -1},
    .out_like = 0,
};

/* softmax_backward(ctx, y, dy, *, axis, log) -> dx. */
static const op_binding binding_softmax_backward = {
    .inputs = {T_IN("y", adnn_softmax_desc, y), T_IN("dy", adnn_softmax_desc, y)},
    .params = {{"axis", P_INT32, OFF(adnn_softmax_desc, axis)},
               {"log", P_BOOL, OFF(adnn_softmax_desc, log)}},
    .y_off = OFF(adnn_softmax_desc, x),
    .output_dims = same_as_x,
    .doc = "The gradient of softmax (log=True: log-softmax) along axis, from y and dy.",
    .fwd_size = sizeof(adnn_softmax_desc),
    .fwd_init = fwd_init_softmax,
    .fwd_create = fwd_create_softmax_backward,
    .same_layout = {0, 1},
    .out_like = -1,
};

static int same_tensor_layout(const adnn_tensor_desc *a, const adnn_tensor_desc *b) {
  if (a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i] || (a->dims[i] > 1 && a->strides[i] != b->strides[i])) return 0;
  return 1;
}
/* The backward convolutions: the backward descriptor and the forward one it
 * points to in one storage. The keywords are the forward convolution's
 * (stride, padding, dilation, groups), and the shape the gradients cannot
 * tell is given as in PyTorch's torch.nn.grad.conv2d_input / conv2d_weight:
 * x_shape for backward data, w_shape for backward weights. */
typedef struct conv2d_bwd_data_storage {
  adnn_conv2d_backward_data_desc bwd;
  adnn_conv2d_desc fwd;
} conv2d_bwd_data_storage;

typedef struct conv2d_bwd_weights_storage {
  adnn_conv2d_backward_weights_desc bwd;
  adnn_conv2d_desc fwd;
} conv2d_bwd_weights_storage;

static void conv2d_bwd_data_init(void *d) {
  conv2d_bwd_data_storage *s = d;
  memset(s, 0, sizeof *s);
  adnn_conv2d_backward_data_desc_init(&s->bwd);
  adnn_conv2d_desc_init(&s->fwd);
}

static void conv2d_bwd_weights_init(void *d) {
  conv2d_bwd_weights_storage *s = d;
  memset(s, 0, sizeof *s);
  adnn_conv2d_backward_weights_desc_init(&s->bwd);
  adnn_conv2d_desc_init(&s->fwd);
}

static adnn_status conv2d_bwd_data_create(adnn_context *c, const void *d, adnn_plan **p) {
  conv2d_bwd_data_storage s = *(const conv2d_bwd_data_storage *)d;
  s.bwd.forward = &s.fwd;
  return adnn_plan_create_conv2d_backward_data(c, &s.bwd, p);
}

static adnn_status conv2d_bwd_weights_create(adnn_context *c, const void *d, adnn_plan **p) {
  conv2d_bwd_weights_storage s = *(const conv2d_bwd_weights_storage *)d;
  s.bwd.forward = &s.fwd;
  return adnn_plan_create_conv2d_backward_weights(c, &s.bwd, p);
}

/* dx has x_shape (required: with a stride above 1 several x sizes give one
 * dy size). */
static int conv2d_bwd_data_dims(const void *desc, TensorObject *const *in, int64_t *dims) {
  const conv2d_bwd_data_storage *s = desc;
  if (s->fwd.x.rank != 4) {
    adnn_py_fail(AdnnArgumentError, "adnn.conv2d_backward_data: x_shape=(N, C, H, W) is "
                                    "required (the forward input's shape)");
    return -1;
  }
  memcpy(dims, s->fwd.x.dims, 4 * sizeof(int64_t));
  return 4;
}

static int conv2d_bwd_weights_dims(const void *desc, TensorObject *const *in, int64_t *dims) {
  conv2d_bwd_weights_storage *s = (conv2d_bwd_weights_storage *)desc;
  if (s->fwd.w.rank != 4) {
    adnn_py_fail(AdnnArgumentError, "adnn.conv2d_backward_weights: w_shape=(K, C/groups, R, S) "
                                    "is required (the filter's shape)");
    return -1;
  }
  memcpy(dims, s->fwd.w.dims, 4 * sizeof(int64_t));
  return 4;
}

/* db: [K] when bias=True (the forward op had a bias); its descriptor is
 * written at y2_off by the caller. */
static int conv2d_bwd_weights_db_dims(const void *desc, TensorObject *const *in, int64_t *dims) {
  const conv2d_bwd_weights_storage *s = desc;
  if (!s->fwd.has_bias) return 0;
  dims[0] = s->fwd.w.dims[0];
  return 1;
}

#define BWD_D_OFF(f) offsetof(conv2d_bwd_data_storage, f)
#define BWD_W_OFF(f) offsetof(conv2d_bwd_weights_storage, f)

static const op_binding binding_conv2d_backward_data = {
    .inputs = {{"dy", 0, BWD_D_OFF(fwd.y), NO_OFFSET, 0}, {"w", 0, BWD_D_OFF(fwd.w), NO_OFFSET, 0}},
    .params = {{"x_shape", P_SHAPE4, BWD_D_OFF(fwd.x)},
               {"stride", P_PAIR, BWD_D_OFF(fwd.stride_h)},
               {"padding", P_PAD, BWD_D_OFF(fwd.pad_top)},
               {"dilation", P_PAIR, BWD_D_OFF(fwd.dilation_h)},
               {"groups", P_INT64, BWD_D_OFF(fwd.groups)},
               {"beta", P_DOUBLE, BWD_D_OFF(bwd.beta)},
               {"algorithm", P_ENUM, BWD_D_OFF(bwd.algorithm), conv2d_algos}},
    .y_off = BWD_D_OFF(fwd.x),
    .output_dims = conv2d_bwd_data_dims,
    .doc = "Gradient of conv2d with respect to x: dx = beta * out + conv2d_backward_data(dy, w);\n"
           "the keywords describe the forward convolution (beta != 0 needs out=).",
    .desc_size = sizeof(conv2d_bwd_data_storage),
    .init = conv2d_bwd_data_init,
    .create = conv2d_bwd_data_create,
    .has_beta = 1,
    .beta_off = BWD_D_OFF(bwd.beta),
};

static const op_binding binding_conv2d_backward_weights = {
    .inputs = {{"x", 0, BWD_W_OFF(fwd.x), NO_OFFSET, 0}, {"dy", 0, BWD_W_OFF(fwd.y), NO_OFFSET, 0}},
    .params = {{"w_shape", P_SHAPE4, BWD_W_OFF(fwd.w)},
               {"stride", P_PAIR, BWD_W_OFF(fwd.stride_h)},
               {"padding", P_PAD, BWD_W_OFF(fwd.pad_top)},
               {"dilation", P_PAIR, BWD_W_OFF(fwd.dilation_h)},
               {"groups", P_INT64, BWD_W_OFF(fwd.groups)},
               {"bias", P_BOOL, BWD_W_OFF(fwd.has_bias)},
               {"beta", P_DOUBLE, BWD_W_OFF(bwd.beta)},
               {"algorithm", P_ENUM, BWD_W_OFF(bwd.algorithm), conv2d_algos}},
    .y_off = BWD_W_OFF(fwd.w),
    .output_dims = conv2d_bwd_weights_dims,
    .doc = "Gradients of conv2d with respect to w (and its bias with bias=True, returned as\n"
           "(dw, db)): beta * out + the gradient; the keywords describe the forward\n"
           "convolution (beta != 0 needs out=, a pair with bias=True).",
    .desc_size = sizeof(conv2d_bwd_weights_storage),
    .init = conv2d_bwd_weights_init,
    .create = conv2d_bwd_weights_create,
    .has_beta = 1,
    .beta_off = BWD_W_OFF(bwd.beta),
    .y2_off = BWD_W_OFF(fwd.bias),
    .output2_dims = conv2d_bwd_weights_db_dims,
    .returns = "Tensor, or (Tensor, Tensor) with bias=True",
};
/* The training ops' bindings (their calls are below the argument helpers). */
static const op_binding binding_batchnorm_training, binding_batchnorm_backward,
    binding_norm_backward;
static const op_binding binding_softmax_cross_entropy, binding_softmax_cross_entropy_backward,
    binding_optimizer, binding_loss_scale;
/* Attention's binding (its call is after the training ops'). */
static const op_binding binding_attention;
/* Attention backward's binding (after attention's). */
static const op_binding binding_attention_backward;

/* reorder: y = x converted to out's dtype and layout (any strides on both
 * sides); without out=, a packed copy in x's dtype. */
static const op_binding binding_reorder = {
    .inputs = {T_IN("x", adnn_reorder_desc, x)},
    .y_off = OFF(adnn_reorder_desc, y),
    .output_dims = same_as_x,
    .out_any_dtype = 1,
    .doc = "Copy x into out= converting its dtype (f32, f64, f16, bf16 pairs; i8, u8, i32 "
           "copies) and its layout (any strides); without out=, a packed copy.",
};

/* quantize / dequantize: per tensor (scale=, zero_point=) or per channel
 * (axis= with the packed scales [F32] and zero_points [I32] vectors); out=
 * chooses y's dtype (quantize: an i8 or u8 tensor; dequantize: f32). */
static int64_t quant_len(const void *desc, TensorObject *const *in, int i) {
  (void)i;
  const adnn_quantize_desc *d = desc; /* dequantize's fields are the same */
  return d->axis >= 0 && d->axis < in[0]->desc.rank ? in[0]->desc.dims[d->axis] : -1;
}

static const op_binding binding_quantize = {
    .inputs = {T_IN("x", adnn_quantize_desc, x),
               {"scales", 1, NO_OFFSET, NO_OFFSET, 1, 1},
               {"zero_points", 1, NO_OFFSET, NO_OFFSET, 1, 1}},
    .params = {{"axis", P_INT32, OFF(adnn_quantize_desc, axis)},
               {"scale", P_FLOAT, OFF(adnn_quantize_desc, scale)},
               {"zero_point", P_INT32, OFF(adnn_quantize_desc, zero_point)}},
    .y_off = OFF(adnn_quantize_desc, y),
    .out_any_dtype = 1,
    .output_dims = same_as_x,
    .vector_len = quant_len,
    .doc = "out (i8/u8) = saturate(round_half_even(x / scale) + zero_point); per channel with "
           "axis= and the scales, zero_points vectors. Pass out= of the integer dtype.",
};

static const op_binding binding_dequantize = {
    .inputs = {T_IN("x", adnn_dequantize_desc, x),
               {"scales", 1, NO_OFFSET, NO_OFFSET, 1, 1},
               {"zero_points", 1, NO_OFFSET, NO_OFFSET, 1, 1}},
    .params = {{"axis", P_INT32, OFF(adnn_dequantize_desc, axis)},
               {"scale", P_FLOAT, OFF(adnn_dequantize_desc, scale)},
               {"zero_point", P_INT32, OFF(adnn_dequantize_desc, zero_point)}},
    .y_off = OFF(adnn_dequantize_desc, y),
    .out_any_dtype = 1,
    .output_dims = same_as_x,
    .vector_len = quant_len,
    .doc = "out (f32) = (x - zero_point) * scale for i8/u8 x; per channel with axis= and the "
           "scales, zero_points vectors. Pass out= of dtype f32.",
};

/* matmul: y = act(alpha * (a @ b) + bias + residual_scale * residual); y has
 * a's batch dims, M and b's N (the core checks every other rule). Passing
 * out=residual adds the residual in place. */
static int matmul_dims(const void *desc, TensorObject *const *in, int64_t *dims) {
  (void)desc;
  const adnn_tensor_desc *a = &in[0]->desc, *b = &in[1]->desc;
  if (a->rank < 2 || b->rank < 2) {
    adnn_py_fail(AdnnArgumentError, "adnn.matmul: a and b need rank 2..4 (have %d and %d)",
                 (int)a->rank, (int)b->rank);
    return -1;
  }
  memcpy(dims, a->dims, sizeof(int64_t) * (size_t)a->rank);
  dims[a->rank - 1] = b->dims[b->rank - 1];
  return a->rank;
}

static const op_binding binding_matmul = {
    .inputs = {T_IN("a", adnn_matmul_desc, a),
               /* b is I8 for U8 a (u8 x s8) */
               {"b", 0, OFF(adnn_matmul_desc, b), NO_OFFSET, 0, 1},
               {"bias", 1, OFF(adnn_matmul_desc, bias), OFF(adnn_matmul_desc, has_bias), 0, 1},
               {"residual", 1, OFF(adnn_matmul_desc, residual),
                OFF(adnn_matmul_desc, has_residual), 0, 1},
               {"requant_scales", 1, OFF(adnn_matmul_desc, requant_scales),
                OFF(adnn_matmul_desc, has_requant_scales), 0, 1}},
    .params = {{"alpha", P_DOUBLE, OFF(adnn_matmul_desc, alpha)},
               {"residual_scale", P_DOUBLE, OFF(adnn_matmul_desc, residual_scale)},
               {"activation", P_ACT, OFF(adnn_matmul_desc, activation)},
               {"requant_scale", P_DOUBLE, OFF(adnn_matmul_desc, requant_scale)},
               {"y_zero_point", P_INT32, OFF(adnn_matmul_desc, y_zero_point)}},
    /* y's dtype may differ from a's (F16/BF16 inputs into F32, INT8 into
     * I32); without out= it is a's (requantized for I8/U8). */
    .out_any_dtype = 1,
    .y_off = OFF(adnn_matmul_desc, y),
    .output_dims = matmul_dims,
    .doc = "GEMM with a fused epilogue: y = act(alpha * (a @ b) + bias + residual_scale * "
           "residual); a [..., M, K], b [..., K, N] (batch dims a's or 1, or rank 2), bias [N]; "
           "out=residual adds the residual in place.",
};

/* ---- generated from the manifest ------------------------------------------------------ */

typedef struct op_entry {
  const char *name;
  const char *manifest_inputs; /* the manifest's inputs column, checked by the tests */
  size_t desc_size;
  void (*init)(void *desc);
  adnn_status (*create)(adnn_context *, const void *, adnn_plan **);
  const op_binding *binding;
} op_entry;

#define GLUE_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags)                      \
  static void init_##name(void *d) { adnn_##name##_desc_init((adnn_##name##_desc *)d); }      \
  static adnn_status create_##name(adnn_context *c, const void *d, adnn_plan **p) {          \
    return adnn_plan_create_##name(c, (const adnn_##name##_desc *)d, p);                      \
  }
ADNN_OP_LIST(GLUE_)
#undef GLUE_

#define ENTRY_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags) \
  {#name, inputs, sizeof(adnn_##name##_desc), init_##name, create_##name, &binding_##name},
static const op_entry op_table[] = {ADNN_OP_LIST(ENTRY_)};
#undef ENTRY_
#define N_OPS ((int)(sizeof op_table / sizeof op_table[0]))

/* ---- argument conversion --------------------------------------------------------------- */

static int as_int64(PyObject *v, int64_t *out, const char *op, const char *name) {
  if (PyBool_Check(v) || !PyLong_Check(v)) {
    adnn_py_fail(AdnnTypeError, "adnn.%s: %s must be an int, got %s", op, name,
                 Py_TYPE(v)->tp_name);
    return -1;
  }
  long long x = PyLong_AsLongLong(v);
  if (x == -1 && PyErr_Occurred()) return -1;
  *out = x;
  return 0;
}

static int ints_of(PyObject *v, int64_t *out, int max, const char *op, const char *name) {
  if (PyLong_Check(v)) return as_int64(v, &out[0], op, name) < 0 ? -1 : 1;
  if (!PyTuple_Check(v) && !PyList_Check(v)) {
    adnn_py_fail(AdnnTypeError, "adnn.%s: %s must be an int or a tuple of ints", op, name);
    return -1;
  }
  Py_ssize_t n = PySequence_Size(v);
  if (n < 1 || n > max) {
    adnn_py_fail(AdnnArgumentError, "adnn.%s: %s has %zd entries, at most %d", op, name, n, max);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *e = PySequence_GetItem(v, i);
    int rc = e ? as_int64(e, &out[i], op, name) : -1;
    Py_XDECREF(e);
    if (rc < 0) return -1;
  }
  return (int)n;
}

static int kind_value(PyObject *v, const kind_name *kinds, int *out, const char *op,
                      const char *name) {
  const char *s = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
  if (s == NULL) {
    PyErr_Clear();
    adnn_py_fail(AdnnTypeError, "adnn.%s: %s must be a str", op, name);
    return -1;
  }
  for (const kind_name *k = kinds; k->name; k++)
    if (strcmp(k->name, s) == 0) return *out = k->value, 0;
  char list[512] = "";
  size_t used = 0;
  for (const kind_name *k = kinds; k->name && used < sizeof list - 40; k++)
    used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", k == kinds ? "" : ", ",
                             k->name);
  adnn_py_fail(AdnnArgumentError, "adnn.%s: unknown %s '%s' (one of: %s)", op, name, s, list);
  return -1;
}

static int set_param(const param_spec *p, char *desc, PyObject *v, int x_rank, const char *op) {
  char *f = desc + p->off;
  int64_t iv[4];
  int n;
  switch (p->type) {
    case P_INT64:
      return as_int64(v, (int64_t *)f, op, p->name);
    case P_INT32:
      if (as_int64(v, iv, op, p->name) < 0) return -1;
      if (iv[0] < INT32_MIN || iv[0] > INT32_MAX) {
        adnn_py_fail(AdnnArgumentError, "adnn.%s: %s is out of range", op, p->name);
        return -1;
      }
      *(int32_t *)f = (int32_t)iv[0];
      return 0;
    case P_BOOL: {
      int b = PyObject_IsTrue(v);
      if (b < 0) return -1;
      *(int32_t *)f = b;
      return 0;
    }
    case P_DOUBLE: {
      double d = PyFloat_AsDouble(v);
      if (d == -1.0 && PyErr_Occurred()) return -1;
      *(double *)f = d;
      return 0;
    }
    case P_FLOAT: { /* a float field (quantize's scale) */
      double d = PyFloat_AsDouble(v);
      if (d == -1.0 && PyErr_Occurred()) return -1;
      *(float *)f = (float)d;
      return 0;
    }
    case P_PAIR: /* an int for both, or (h, w) */
      if ((n = ints_of(v, iv, 2, op, p->name)) < 0) return -1;
      ((int64_t *)f)[0] = iv[0];
      ((int64_t *)f)[1] = n == 2 ? iv[1] : iv[0];
      return 0;
    case P_PAD: { /* an int, (h, w), or (top, bottom, left, right) */
      if ((n = ints_of(v, iv, 4, op, p->name)) < 0) return -1;
      int64_t *pad = (int64_t *)f;
      if (n == 3) {
        adnn_py_fail(AdnnArgumentError, "adnn.%s: padding takes 1, 2 or 4 ints", op);
        return -1;
      }
      if (n == 1) pad[0] = pad[1] = pad[2] = pad[3] = iv[0];
      else if (n == 2) pad[0] = pad[1] = iv[0], pad[2] = pad[3] = iv[1];
      else memcpy(pad, iv, sizeof iv);
      return 0;
    }
    case P_ACT: { /* 'name' or (name, alpha[, beta]) */
      adnn_activation *a = (adnn_activation *)f;
      PyObject *name = v;
      Py_ssize_t len = 0;
      if (PyTuple_Check(v)) {
        len = PyTuple_GET_SIZE(v);
        if (len < 1 || len > 3) {
          adnn_py_fail(AdnnArgumentError, "adnn.%s: activation is a name or (name, alpha[, beta])",
                       op);
          return -1;
        }
        name = PyTuple_GET_ITEM(v, 0);
      }
      int kind;
      if (kind_value(name, activation_kinds, &kind, op, "activation") < 0) return -1;
      a->kind = (adnn_activation_kind)kind;
      for (Py_ssize_t i = 1; i < len; i++) {
        double d = PyFloat_AsDouble(PyTuple_GET_ITEM(v, i));
        if (d == -1.0 && PyErr_Occurred()) return -1;
        if (i == 1) a->alpha = d;
        else a->beta = d;
      }
      return 0;
    }
    case P_ENUM: {
      int kind;
      if (kind_value(v, p->kinds, &kind, op, p->name) < 0) return -1;
      *(int32_t *)f = kind; /* C enums are int-sized on every supported ABI */
      return 0;
    }
    case P_SHAPE4: { /* (d0, d1, d2, d3): the dims of a tensor descriptor */
      if ((n = ints_of(v, iv, 4, op, p->name)) < 0) return -1;
      if (n != 4) {
        adnn_py_fail(AdnnArgumentError, "adnn.%s: %s takes 4 ints", op, p->name);
        return -1;
      }
      adnn_tensor_desc *t = (adnn_tensor_desc *)f;
      t->rank = 4;
      memcpy(t->dims, iv, sizeof iv);
      return 0;
    }
    case P_AXES: { /* an int or a tuple; negative counts from the end */
      int64_t ax[ADNN_MAX_RANK];
      if ((n = ints_of(v, ax, ADNN_MAX_RANK, op, p->name)) < 0) return -1;
      uint32_t mask = 0;
      for (int i = 0; i < n; i++) {
        int64_t a = ax[i] < 0 ? ax[i] + x_rank : ax[i];
        if (a < 0 || a >= x_rank) {
          adnn_py_fail(AdnnArgumentError, "adnn.%s: axis %lld is out of range for rank %d", op,
                       (long long)ax[i], x_rank);
          return -1;
        }
        mask |= 1u << a;
      }
      *(uint32_t *)f = mask;
      return 0;
    }
  }
  return 0;
}

/* ---- training ops with several outputs (batch-norm training and backward,
 * norm backward) ---------------------------------------------------------------------- */

/* The plan-cache key of a backward descriptor: the descriptor with its
 * forward pointer cleared, then the forward descriptor's bytes, so that equal
 * problems give equal keys whatever address the forward descriptor had. The
 * create functions below point `forward` at the key's copy. Every *_desc_init
 * zeroes the whole struct, so padding is zero. */
typedef struct bnt_key {
  adnn_batchnorm_training_desc d;
  adnn_batchnorm_desc f;
} bnt_key;
typedef struct bnb_key {
  adnn_batchnorm_backward_desc d;
  adnn_batchnorm_desc f;
} bnb_key;
typedef struct nb_key {
  adnn_norm_backward_desc d;
  adnn_norm_desc f;
} nb_key;

static adnn_status create_bnt_key(adnn_context *c, const void *key, adnn_plan **p) {
  bnt_key k = *(const bnt_key *)key;
  k.d.forward = &k.f;
  return adnn_plan_create_batchnorm_training(c, &k.d, p);
}
static adnn_status create_bnb_key(adnn_context *c, const void *key, adnn_plan **p) {
  bnb_key k = *(const bnb_key *)key;
  k.d.forward = &k.f;
  return adnn_plan_create_batchnorm_backward(c, &k.d, p);
}
static adnn_status create_nb_key(adnn_context *c, const void *key, adnn_plan **p) {
  nb_key k = *(const nb_key *)key;
  k.d.forward = &k.f;
  return adnn_plan_create_norm_backward(c, &k.d, p);
}

/* Keyword arguments of a training call: each name once, nothing else. */
typedef struct kw_spec {
  const char *name;
  PyObject **slot;
} kw_spec;

static int parse_call(const char *op, PyObject *args, PyObject *kwargs, int n_pos, int n_req,
                      PyObject **pos, const kw_spec *kws, ContextObject **ctx) {
  Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  if (nargs < 1 || !Py_IS_TYPE(PyTuple_GET_ITEM(args, 0), &ContextType)) {
    adnn_py_fail(AdnnTypeError, "adnn.%s: the first argument must be an adnn.Context", op);
    return -1;
  }
  *ctx = (ContextObject *)PyTuple_GET_ITEM(args, 0);
  if (nargs - 1 > n_pos) {
    adnn_py_fail(AdnnTypeError, "adnn.%s: takes at most %d tensors positionally, got %zd", op,
                 n_pos, nargs - 1);
    return -1;
  }
  for (Py_ssize_t i = 1; i < nargs; i++) pos[i - 1] = PyTuple_GET_ITEM(args, i);
  if (kwargs) {
    PyObject *k, *v;
    Py_ssize_t at = 0;
    while (PyDict_Next(kwargs, &at, &k, &v)) {
      const char *s = PyUnicode_AsUTF8(k);
      if (s == NULL) return -1;
      int found = 0;
      for (const kw_spec *w = kws; w->name && !found; w++)
        if (strcmp(s, w->name) == 0) {
          if (*w->slot) {
            adnn_py_fail(AdnnTypeError, "adnn.%s: %s given twice", op, s);
            return -1;
          }
          *w->slot = v;
          found = 1;
        }
      if (!found) {
        adnn_py_fail(AdnnTypeError, "adnn.%s: unexpected keyword '%s'", op, s);
        return -1;
      }
    }
  }
  for (int i = 0; i < n_req; i++)
    if (pos[i] == NULL || pos[i] == Py_None) {
      adnn_py_fail(AdnnTypeError, "adnn.%s: missing tensor argument %d", op, i + 1);
      return -1;
    }
  return 0;
}

/* in[i] as a tensor of x's dtype (in[0] is x); vectors of `len` packed
 * elements when len >= 0. */
static TensorObject *tensor_arg(ContextObject *c, PyObject *obj, int writable, const char *op,
                                const char *name, const TensorObject *x, int64_t len) {
  char what[64];
  snprintf(what, sizeof what, "adnn.%s: %s", op, name);
  TensorObject *t = adnn_py_as_tensor(c, obj, writable, what);
  if (t == NULL) return NULL;
  if (x && t->desc.dtype != x->desc.dtype) {
    adnn_py_fail(AdnnTypeError, "adnn.%s: %s is %s but x is %s (all tensors share one dtype)", op,
                 name, adnn_dtype_name(t->desc.dtype), adnn_dtype_name(x->desc.dtype));
    Py_DECREF(t);
    return NULL;
  }
  if (len >= 0) {
    int64_t n = 0;
    adnn_tensor_desc_element_count(&t->desc, &n);
    if (n != len || !adnn_tensor_desc_is_packed(&t->desc)) {
      adnn_py_fail(AdnnArgumentError,
                   "adnn.%s: %s must be a packed vector of %lld elements (has %lld%s)", op, name,
                   (long long)len, (long long)n,
                   adnn_tensor_desc_is_packed(&t->desc) ? "" : ", not packed");
      Py_DECREF(t);
      return NULL;
    }
  }
  return t;
}

/* A parameter or statistics tensor of x's op (batch norm's scale, shift and
 * statistics, norm's gain, attention's lse): of ADNN_OP_PARAM_DTYPE of x's
 * dtype (float32 for float16 / bfloat16 x, x's own otherwise), and a packed
 * vector of len elements when len >= 0. */
static TensorObject *param_arg(ContextObject *c, PyObject *obj, int writable, const char *op,
                               const char *name, const TensorObject *x, int64_t len) {
  TensorObject *t = tensor_arg(c, obj, writable, op, name, NULL, len);
  if (t == NULL) return NULL;
  const adnn_dtype want = ADNN_OP_PARAM_DTYPE(x->desc.dtype);
  if (t->desc.dtype != want) {
    adnn_py_fail(AdnnTypeError, "adnn.%s: %s is %s but must be %s for %s x (the parameters and "
                 "statistics of float16 / bfloat16 data are float32)", op, name,
                 adnn_dtype_name(t->desc.dtype), adnn_dtype_name(want),
                 adnn_dtype_name(x->desc.dtype));
    Py_DECREF(t);
    return NULL;
  }
  return t;
}

static int double_arg(PyObject *v, double *out) {
  if (v == NULL) return 0;
  double d = PyFloat_AsDouble(v);
  if (d == -1.0 && PyErr_Occurred()) return -1;
  *out = d;
  return 0;
}

/* Creates (or finds) the plan of key and runs it; returns 0 or -1 (raised). */
static int run_multi(ContextObject *c, int op_index, const void *key, size_t key_size,
                     adnn_status (*create)(adnn_context *, const void *, adnn_plan **),
                     const char *op, const void *const *in, size_t n_in, void *const *out,
                     size_t n_out) {
  PyObject *cap = adnn_py_plan_get(c, op_index, key, key_size, create, op);
  if (cap == NULL) return -1;
  adnn_plan *plan = PyCapsule_GetPointer(cap, "adnn_plan");
  adnn_status st;
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(c->lock, WAIT_LOCK);
  st = adnn_plan_execute_multi(plan, in, n_in, out, n_out);
  PyThread_release_lock(c->lock);
  Py_END_ALLOW_THREADS
  Py_DECREF(cap);
  if (st != ADNN_STATUS_SUCCESS) {
    adnn_py_raise(st, op);
    return -1;
  }
  return 0;
}

static int op_index_of(const char *name);

static PyObject *call_batchnorm_training(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  const char *op = "batchnorm_training";
  PyObject *pos[3] = {0}, *rm_obj = NULL, *rv_obj = NULL, *eps_obj = NULL, *mom_obj = NULL;
  const kw_spec kws[] = {{"x", &pos[0]},           {"scale", &pos[1]},
                         {"shift", &pos[2]},       {"running_mean", &rm_obj},
                         {"running_var", &rv_obj}, {"epsilon", &eps_obj},
                         {"momentum", &mom_obj},   {NULL, NULL}};
  ContextObject *c;
  if (parse_call(op, args, kwargs, 3, 3, pos, kws, &c) < 0) return NULL;
  if (!rm_obj || !rv_obj)
    return adnn_py_fail(AdnnTypeError, "adnn.%s: running_mean and running_var are required "
                        "(updated in place)", op);
  bnt_key key;
  memset(&key, 0, sizeof key);
  adnn_batchnorm_training_desc_init(&key.d);
  adnn_batchnorm_desc_init(&key.f);
  if (double_arg(eps_obj, &key.f.epsilon) < 0 || double_arg(mom_obj, &key.d.momentum) < 0)
    return NULL;
  PyObject *result = NULL;
  TensorObject *t[5] = {0}, *o[3] = {0};
  if ((t[0] = tensor_arg(c, pos[0], 0, op, "x", NULL, -1)) == NULL) goto done;
  const int64_t C = t[0]->desc.rank >= 2 ? t[0]->desc.dims[1] : -1;
  if (C < 0) {
    adnn_py_fail(AdnnArgumentError, "adnn.%s: x must have rank 2..8 ([N, C, ...])", op);
    goto done;
  }
  const char *names[5] = {"x", "scale", "shift", "running_mean", "running_var"};
  PyObject *objs[5] = {pos[0], pos[1], pos[2], rm_obj, rv_obj};
  for (int i = 1; i < 5; i++)
    if ((t[i] = param_arg(c, objs[i], i >= 3, op, names[i], t[0], C)) == NULL) goto done;
  if (adnn_py_ctx_check_open(c) < 0) goto done;
  const int64_t vdim[1] = {C};
  o[0] = (TensorObject *)adnn_py_tensor_empty(c, t[0]->desc.dtype, t[0]->desc.rank,
                                               t[0]->desc.dims);
  for (int i = 1; i < 3 && o[i - 1]; i++)
    o[i] = (TensorObject *)adnn_py_tensor_empty(c, ADNN_OP_PARAM_DTYPE(t[0]->desc.dtype), 1,
                                                 vdim);
  if (!o[0] || !o[1] || !o[2]) goto done;
  key.f.x = t[0]->desc;
  key.f.y = o[0]->desc;
  const void *in[3] = {t[0]->data, t[1]->data, t[2]->data};
  void *out[5] = {o[0]->data, o[1]->data, o[2]->data, t[3]->data, t[4]->data};
  if (run_multi(c, op_index_of(op), &key, sizeof key, create_bnt_key, op, in, 3, out, 5) < 0)
    goto done;
  result = PyTuple_Pack(3, (PyObject *)o[0], (PyObject *)o[1], (PyObject *)o[2]);
done:
  for (int i = 0; i < 5; i++) Py_XDECREF(t[i]);
  for (int i = 0; i < 3; i++) Py_XDECREF(o[i]);
  return result;
}

static PyObject *call_batchnorm_backward(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  const char *op = "batchnorm_backward";
  PyObject *pos[5] = {0};
  const kw_spec kws[] = {{"x", &pos[0]},          {"dy", &pos[1]},
                         {"scale", &pos[2]},      {"saved_mean", &pos[3]},
                         {"saved_inv_std", &pos[4]}, {NULL, NULL}};
  ContextObject *c;
  if (parse_call(op, args, kwargs, 5, 5, pos, kws, &c) < 0) return NULL;
  bnb_key key;
  memset(&key, 0, sizeof key);
  adnn_batchnorm_backward_desc_init(&key.d);
  adnn_batchnorm_desc_init(&key.f);
  PyObject *result = NULL;
  TensorObject *t[5] = {0}, *o[3] = {0};
  const char *names[5] = {"x", "dy", "scale", "saved_mean", "saved_inv_std"};
  if ((t[0] = tensor_arg(c, pos[0], 0, op, "x", NULL, -1)) == NULL) goto done;
  const int64_t C = t[0]->desc.rank >= 2 ? t[0]->desc.dims[1] : -1;
  if (C < 0) {
    adnn_py_fail(AdnnArgumentError, "adnn.%s: x must have rank 2..8 ([N, C, ...])", op);
    goto done;
  }
  if ((t[1] = tensor_arg(c, pos[1], 0, op, "dy", t[0], -1)) == NULL) goto done;
  for (int i = 2; i < 5; i++)
    if ((t[i] = param_arg(c, pos[i], 0, op, names[i], t[0], C)) == NULL) goto done;
  if (adnn_py_ctx_check_open(c) < 0) goto done;
  /* dx has x's layout: a packed x gives a packed dx; anything else is
   * described by x's own strides, which a new packed tensor does not have. */
  if (!adnn_tensor_desc_is_packed(&t[0]->desc)) {
    adnn_py_fail(AdnnArgumentError, "adnn.%s: x must be packed (dx is created with x's layout)",
                 op);
    goto done;
  }
  const int64_t vdim[1] = {C};
  o[0] = (TensorObject *)adnn_py_tensor_empty(c, t[0]->desc.dtype, t[0]->desc.rank,
                                               t[0]->desc.dims);
  for (int i = 1; i < 3 && o[i - 1]; i++)
    o[i] = (TensorObject *)adnn_py_tensor_empty(c, ADNN_OP_PARAM_DTYPE(t[0]->desc.dtype), 1,
                                                 vdim);
  if (!o[0] || !o[1] || !o[2]) goto done;
  key.f.x = t[0]->desc;
  key.f.y = t[1]->desc;
  const void *in[5] = {t[0]->data, t[1]->data, t[2]->data, t[3]->data, t[4]->data};
  void *out[3] = {o[0]->data, o[1]->data, o[2]->data};
  if (run_multi(c, op_index_of(op), &key, sizeof key, create_bnb_key, op, in, 5, out, 3) < 0)
    goto done;
  result = PyTuple_Pack(3, (PyObject *)o[0], (PyObject *)o[1], (PyObject *)o[2]);
done:
  for (int i = 0; i < 5; i++) Py_XDECREF(t[i]);
  for (int i = 0; i < 3; i++) Py_XDECREF(o[i]);
  return result;
}

static PyObject *call_norm_backward(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  const char *op = "norm_backward";
  PyObject *pos[3] = {0}, *kind_obj = NULL, *nd_obj = NULL, *eps_obj = NULL, *bias_obj = NULL;
  const kw_spec kws[] = {{"x", &pos[0]},        {"dy", &pos[1]},          {"gain", &pos[2]},
                         {"kind", &kind_obj},    {"norm_dims", &nd_obj},   {"epsilon", &eps_obj},
                         {"has_bias", &bias_obj}, {NULL, NULL}};
  ContextObject *c;
  if (parse_call(op, args, kwargs, 3, 2, pos, kws, &c) < 0) return NULL;
  nb_key key;
  memset(&key, 0, sizeof key);
  adnn_norm_backward_desc_init(&key.d);
  adnn_norm_desc_init(&key.f);
  if (kind_obj) {
    int kind;
    if (kind_value(kind_obj, norm_kinds, &kind, op, "kind") < 0) return NULL;
    key.f.kind = (adnn_norm_kind)kind;
  }
  if (nd_obj) {
    int64_t nd;
    if (as_int64(nd_obj, &nd, op, "norm_dims") < 0) return NULL;
    if (nd < INT32_MIN || nd > INT32_MAX)
      return adnn_py_fail(AdnnArgumentError, "adnn.%s: norm_dims is out of range", op);
    key.f.norm_dims = (int32_t)nd;
  }
  if (double_arg(eps_obj, &key.f.epsilon) < 0) return NULL;
  if (bias_obj) {
    int b = PyObject_IsTrue(bias_obj);
    if (b < 0) return NULL;
    key.f.has_bias = b;
  }
  PyObject *result = NULL;
  TensorObject *t[3] = {0}, *o[3] = {0};
  if ((t[0] = tensor_arg(c, pos[0], 0, op, "x", NULL, -1)) == NULL) goto done;
  if ((t[1] = tensor_arg(c, pos[1], 0, op, "dy", t[0], -1)) == NULL) goto done;
  key.f.x = t[0]->desc;
  key.f.y = t[1]->desc;
  int64_t D = 1;
  for (int k = t[0]->desc.rank - key.f.norm_dims; k < t[0]->desc.rank; k++)
    if (k >= 0) D *= t[0]->desc.dims[k];
  key.f.has_gain = pos[2] != NULL && pos[2] != Py_None;
  if (key.f.has_gain && (t[2] = param_arg(c, pos[2], 0, op, "gain", t[0], D)) == NULL) goto done;
  if (adnn_py_ctx_check_open(c) < 0) goto done;
  if (!adnn_tensor_desc_is_packed(&t[0]->desc)) {
    adnn_py_fail(AdnnArgumentError, "adnn.%s: x must be packed (dx is created with x's layout)",
                 op);
    goto done;
  }
  const int64_t vdim[1] = {D};
  o[0] = (TensorObject *)adnn_py_tensor_empty(c, t[0]->desc.dtype, t[0]->desc.rank,
                                               t[0]->desc.dims);
  if (!o[0]) goto done;
  if (key.f.has_gain &&
      !(o[1] = (TensorObject *)adnn_py_tensor_empty(c, ADNN_OP_PARAM_DTYPE(t[0]->desc.dtype), 1,
                                                  vdim)))
    goto done;
  if (key.f.has_bias &&
      !(o[2] = (TensorObject *)adnn_py_tensor_empty(c, ADNN_OP_PARAM_DTYPE(t[0]->desc.dtype), 1,
                                                  vdim)))
    goto done;
  const void *in[3] = {t[0]->data, t[1]->data, key.f.has_gain ? t[2]->data : NULL};
  void *out[3];
  size_t n_out = 0;
  out[n_out++] = o[0]->data;
  if (o[1]) out[n_out++] = o[1]->data;
  if (o[2]) out[n_out++] = o[2]->data;
  if (run_multi(c, op_index_of(op), &key, sizeof key, create_nb_key, op, in,
                2 + (size_t)key.f.has_gain, out, n_out) < 0)
    goto done;
  result = PyTuple_Pack(3, (PyObject *)o[0], o[1] ? (PyObject *)o[1] : Py_None,
                        o[2] ? (PyObject *)o[2] : Py_None);
done:
  for (int i = 0; i < 3; i++) Py_XDECREF(t[i]), Py_XDECREF(o[i]);
  return result;
}

static const op_binding binding_batchnorm_training = {
    .inputs = {{"x", 0, NO_OFFSET, NO_OFFSET, 0},
               {"scale", 0, NO_OFFSET, NO_OFFSET, 1},
               {"shift", 0, NO_OFFSET, NO_OFFSET, 1}},
    .params = {{"running_mean", P_TENSOR, 0},
               {"running_var", P_TENSOR, 0},
               {"epsilon", P_DOUBLE, 0},
               {"momentum", P_DOUBLE, 0}},
    .doc = "Batch normalization in training mode over dim 1: normalizes with the batch's "
           "statistics, updates running_mean and running_var in place (momentum, unbiased "
           "variance) and returns (y, saved_mean, saved_inv_std).",
    .call = call_batchnorm_training,
    .returns = "(Tensor, Tensor, Tensor)",
};

static const op_binding binding_batchnorm_backward = {
    .inputs = {{"x", 0, NO_OFFSET, NO_OFFSET, 0},
               {"dy", 0, NO_OFFSET, NO_OFFSET, 0},
               {"scale", 0, NO_OFFSET, NO_OFFSET, 1},
               {"saved_mean", 0, NO_OFFSET, NO_OFFSET, 1},
               {"saved_inv_std", 0, NO_OFFSET, NO_OFFSET, 1}},
    .doc = "The gradients of batch-norm training: (dx, dscale, dshift) from x, dy, scale and "
           "the saved statistics of batchnorm_training.",
    .call = call_batchnorm_backward,
    .returns = "(Tensor, Tensor, Tensor)",
};

static const op_binding binding_norm_backward = {
    .inputs = {{"x", 0, NO_OFFSET, NO_OFFSET, 0},
               {"dy", 0, NO_OFFSET, NO_OFFSET, 0},
               {"gain", 1, NO_OFFSET, NO_OFFSET, 1}},
    .params = {{"kind", P_ENUM, 0, norm_kinds},
               {"norm_dims", P_INT32, 0},
               {"epsilon", P_DOUBLE, 0},
               {"has_bias", P_BOOL, 0}},
    .doc = "The gradients of layer / RMS normalization: (dx, dgain or None, dbias or None); "
           "dgain when gain is given, dbias when has_bias.",
    .call = call_norm_backward,
    .returns = "(Tensor, Optional[Tensor], Optional[Tensor])",
};

/* ---- the loss and the optimizer --------------------------------------------------------- */

/* The reduction and ignore_index keywords of the loss calls. */
static int xent_params(const char *op, PyObject *red_obj, PyObject *ign_obj,
                       adnn_softmax_cross_entropy_desc *f) {
  if (red_obj) {
    int red;
    if (kind_value(red_obj, loss_reductions, &red, op, "reduction") < 0) return -1;
    f->reduction = (adnn_loss_reduction)red;
  }
  if (ign_obj && as_int64(ign_obj, &f->ignore_index, op, "ignore_index") < 0) return -1;
  return 0;
}

/* logits [N, C] and labels [N] (int32) as tensors, the loss's descriptor in
 * f (a scalar, or [N] for NONE). */
static int xent_tensors(ContextObject *c, const char *op, PyObject *lo, PyObject *la,
                        TensorObject **logits, TensorObject **labels,
                        adnn_softmax_cross_entropy_desc *f) {
  if ((*logits = tensor_arg(c, lo, 0, op, "logits", NULL, -1)) == NULL) return -1;
  if ((*labels = tensor_arg(c, la, 0, op, "labels", NULL, -1)) == NULL) return -1;
  if ((*logits)->desc.rank != 2) {
    adnn_py_fail(AdnnArgumentError, "adnn.%s: logits must be [N, C] (has rank %d)", op,
                 (int)(*logits)->desc.rank);
    return -1;
  }
  if ((*labels)->desc.dtype != ADNN_DTYPE_I32) {
    adnn_py_fail(AdnnTypeError, "adnn.%s: labels must be int32 class indices (got %s)", op,
                 adnn_dtype_name((*labels)->desc.dtype));
    return -1;
  }
  f->logits = (*logits)->desc;
  f->labels = (*labels)->desc;
  const int64_t n = (*logits)->desc.dims[0];
  adnn_status st = f->reduction == ADNN_LOSS_REDUCTION_NONE
                       ? adnn_tensor_desc_init(&f->loss, (*logits)->desc.dtype, 1, &n)
                       : adnn_tensor_desc_init(&f->loss, (*logits)->desc.dtype, 0, NULL);
  if (st != ADNN_STATUS_SUCCESS) return adnn_py_raise(st, op), -1;
  return 0;
}

static PyObject *call_softmax_cross_entropy(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  const char *op = "softmax_cross_entropy";
  PyObject *pos[2] = {0}, *red_obj = NULL, *ign_obj = NULL;
  const kw_spec kws[] = {{"logits", &pos[0]},
                         {"labels", &pos[1]},
                         {"reduction", &red_obj},
                         {"ignore_index", &ign_obj},
                         {NULL, NULL}};
  ContextObject *c;
  if (parse_call(op, args, kwargs, 2, 2, pos, kws, &c) < 0) return NULL;
  adnn_softmax_cross_entropy_desc d;
  adnn_softmax_cross_entropy_desc_init(&d);
  if (xent_params(op, red_obj, ign_obj, &d) < 0) return NULL;
  PyObject *result = NULL;
  TensorObject *logits = NULL, *labels = NULL, *loss = NULL;
  if (xent_tensors(c, op, pos[0], pos[1], &logits, &labels, &d) < 0) goto done;
  if (adnn_py_ctx_check_open(c) < 0) goto done;
  loss = (TensorObject *)adnn_py_tensor_empty(c, d.loss.dtype, d.loss.rank, d.loss.dims);
  if (!loss) goto done;
  const void *in[2] = {logits->data, labels->data};
  void *out[1] = {loss->data};
  if (run_multi(c, op_index_of(op), &d, sizeof d,
                (adnn_status(*)(adnn_context *, const void *, adnn_plan **))
                    adnn_plan_create_softmax_cross_entropy,
                op, in, 2, out, 1) < 0)
    goto done;
  result = (PyObject *)loss;
  loss = NULL;
done:
  Py_XDECREF(logits);
  Py_XDECREF(labels);
  Py_XDECREF(loss);
  return result;
}

typedef struct xb_key {
  adnn_softmax_cross_entropy_backward_desc d;
  adnn_softmax_cross_entropy_desc f;
} xb_key;

static adnn_status create_xb_key(adnn_context *c, const void *key, adnn_plan **p) {
  xb_key k = *(const xb_key *)key;
  k.d.forward = &k.f;
  return adnn_plan_create_softmax_cross_entropy_backward(c, &k.d, p);
}

static PyObject *call_softmax_cross_entropy_backward(PyObject *self, PyObject *args,
                                                     PyObject *kwargs) {
  (void)self;
  const char *op = "softmax_cross_entropy_backward";
  PyObject *pos[3] = {0}, *red_obj = NULL, *ign_obj = NULL;
  const kw_spec kws[] = {{"logits", &pos[0]},       {"labels", &pos[1]},
                         {"dloss", &pos[2]},        {"reduction", &red_obj},
                         {"ignore_index", &ign_obj}, {NULL, NULL}};
  ContextObject *c;
  if (parse_call(op, args, kwargs, 3, 3, pos, kws, &c) < 0) return NULL;
  xb_key key;
  memset(&key, 0, sizeof key);
  adnn_softmax_cross_entropy_backward_desc_init(&key.d);
  adnn_softmax_cross_entropy_desc_init(&key.f);
  if (xent_params(op, red_obj, ign_obj, &key.f) < 0) return NULL;
  PyObject *result = NULL;
  TensorObject *logits = NULL, *labels = NULL, *dloss = NULL, *dx = NULL;
  if (xent_tensors(c, op, pos[0], pos[1], &logits, &labels, &key.f) < 0) goto done;
  if ((dloss = tensor_arg(c, pos[2], 0, op, "dloss", logits, -1)) == NULL) goto done;
  /* dloss has the loss's layout: its own strides when NONE. */
  if (key.f.reduction == ADNN_LOSS_REDUCTION_NONE) key.f.loss = dloss->desc;
  if (adnn_py_ctx_check_open(c) < 0) goto done;
  if (!adnn_tensor_desc_is_packed(&logits->desc)) {
    adnn_py_fail(AdnnArgumentError,
                 "adnn.%s: logits must be packed (dlogits is created with logits' layout)", op);
    goto done;
  }
  dx = (TensorObject *)adnn_py_tensor_empty(c, logits->desc.dtype, 2, logits->desc.dims);
  if (!dx) goto done;
  const void *in[3] = {logits->data, labels->data, dloss->data};
  void *out[1] = {dx->data};
  if (run_multi(c, op_index_of(op), &key, sizeof key, create_xb_key, op, in, 3, out, 1) < 0)
    goto done;
  result = (PyObject *)dx;
  dx = NULL;
done:
  Py_XDECREF(logits);
  Py_XDECREF(labels);
  Py_XDECREF(dloss);
  Py_XDECREF(dx);
  return result;
}

/* The optimizer's plan-cache key: the descriptor (lr 0, sizes NULL: the
 * learning rate is set at every call) followed by the T sizes. */
static adnn_status create_optimizer_key(adnn_context *c, const void *key, adnn_plan **p) {
  adnn_optimizer_desc d;
  memcpy(&d, key, sizeof d);
  d.sizes = (const int64_t *)((const char *)key + sizeof d);
  return adnn_plan_create_optimizer(c, &d, p);
}

static PyObject *call_optimizer(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  const char *op = "optimizer";
  PyObject *pos[1] = {0}, *params_obj = NULL, *states_obj = NULL, *kind_obj = NULL,
           *lr_obj = NULL, *step_obj = NULL, *wd_obj = NULL, *mom_obj = NULL, *damp_obj = NULL,
           *nest_obj = NULL, *b1_obj = NULL, *b2_obj = NULL, *eps_obj = NULL,
           *copies_obj = NULL;
  const kw_spec kws[] = {{"grads", &pos[0]},     {"params", &params_obj},
                         {"model_copies", &copies_obj},
                         {"states", &states_obj}, {"kind", &kind_obj},
                         {"lr", &lr_obj},         {"step", &step_obj},
                         {"weight_decay", &wd_obj}, {"momentum", &mom_obj},
                         {"dampening", &damp_obj}, {"nesterov", &nest_obj},
                         {"beta1", &b1_obj},      {"beta2", &b2_obj},
                         {"epsilon", &eps_obj},   {NULL, NULL}};
  ContextObject *c;
  if (parse_call(op, args, kwargs, 1, 1, pos, kws, &c) < 0) return NULL;
  if (!params_obj)
    return adnn_py_fail(AdnnTypeError, "adnn.%s: params is required (updated in place)", op);
  adnn_optimizer_desc d;
  adnn_optimizer_desc_init(&d);
  if (kind_obj) {
    int kind;
    if (kind_value(kind_obj, optimizer_kinds, &kind, op, "kind") < 0) return NULL;
    d.kind = (adnn_optimizer_kind)kind;
  }
  double lr = d.lr;
  int64_t step = 1;
  if (double_arg(lr_obj, &lr) < 0 || double_arg(wd_obj, &d.weight_decay) < 0 ||
      double_arg(mom_obj, &d.momentum) < 0 || double_arg(damp_obj, &d.dampening) < 0 ||
      double_arg(b1_obj, &d.beta1) < 0 || double_arg(b2_obj, &d.beta2) < 0 ||
      double_arg(eps_obj, &d.epsilon) < 0)
    return NULL;
  if (step_obj && as_int64(step_obj, &step, op, "step") < 0) return NULL;
  if (nest_obj) {
    int b = PyObject_IsTrue(nest_obj);
    if (b < 0) return NULL;
    d.nesterov = b;
  }
  const int S = d.kind == ADNN_OPTIMIZER_SGD ? (d.momentum != 0.0 ? 1 : 0) : 2;
  PyObject *result = NULL, *grads = NULL, *params = NULL, *states = NULL, *copies = NULL;
  TensorObject **t = NULL; /* params, grads, states, model copies */
  char *key = NULL;
  Py_ssize_t T = 0, n_t = 0;
  grads = PySequence_Fast(pos[0], "adnn.optimizer: grads must be a sequence of tensors");
  params = grads ? PySequence_Fast(params_obj, "adnn.optimizer: params must be a sequence of "
                                               "tensors") : NULL;
  if (!params) goto done;
  T = PySequence_Fast_GET_SIZE(params);
  if (T < 1 || PySequence_Fast_GET_SIZE(grads) != T) {
    adnn_py_fail(AdnnArgumentError, "adnn.%s: %zd params and %zd grads; one gradient per "
                 "parameter tensor, at least one", op, T, PySequence_Fast_GET_SIZE(grads));
    goto done;
  }
  Py_ssize_t n_states = 0;
  if (states_obj && states_obj != Py_None) {
    states = PySequence_Fast(states_obj, "adnn.optimizer: states must be a sequence of tensors");
    if (!states) goto done;
    n_states = PySequence_Fast_GET_SIZE(states);
  }
  if (n_states != S * T) {
    adnn_py_fail(AdnnArgumentError, "adnn.%s: %s needs %zd state tensors (%s), got %zd", op,
                 adnn_optimizer_kind_name(d.kind), S * T,
                 S == 0 ? "none without momentum" : S == 1 ? "buf_0..buf_{T-1}"
                                                           : "m_0..m_{T-1}, v_0..v_{T-1}",
                 n_states);
    goto done;
  }
  /* Master weights: F32 params and states, gradients and model copies of
   * the copies' dtype (F16 or BF16; the library checks it). */
  const int M = copies_obj && copies_obj != Py_None;
  if (M) {
    copies = PySequence_Fast(copies_obj, "adnn.optimizer: model_copies must be a sequence of "
                                         "tensors");
    if (!copies) goto done;
    if (PySequence_Fast_GET_SIZE(copies) != T) {
      adnn_py_fail(AdnnArgumentError, "adnn.%s: %zd params but %zd model_copies; one copy per "
                   "parameter tensor", op, T, PySequence_Fast_GET_SIZE(copies));
      goto done;
    }
  }
  n_t = T * (2 + S + M);
  const size_t key_size = sizeof d + (size_t)T * sizeof(int64_t);
  t = PyMem_Calloc((size_t)n_t, sizeof *t);
  key = PyMem_Calloc(1, key_size);
  if (!t || !key) {
    PyErr_NoMemory();
    goto done;
  }
  int64_t *sizes = (int64_t *)(key + sizeof d);
  for (Py_ssize_t i = 0; i < T; i++) {
    char name[48];
    snprintf(name, sizeof name, "params[%zd]", i);
    if ((t[i] = tensor_arg(c, PySequence_Fast_GET_ITEM(params, i), 1, op, name, i ? t[0] : NULL,
                           -1)) == NULL)
      goto done;
    adnn_tensor_desc_element_count(&t[i]->desc, &sizes[i]);
    if (!adnn_tensor_desc_is_packed(&t[i]->desc)) {
      adnn_py_fail(AdnnArgumentError, "adnn.%s: %s must be packed", op, name);
      goto done;
    }
    if (M) {
      snprintf(name, sizeof name, "model_copies[%zd]", i);
      TensorObject *w = tensor_arg(c, PySequence_Fast_GET_ITEM(copies, i), 1, op, name, NULL,
                                   sizes[i]);
      t[T * (2 + S) + i] = w;
      if (!w) goto done;
      const TensorObject *w0 = t[T * (2 + S)];
      if (w->desc.dtype != w0->desc.dtype) {
        adnn_py_fail(AdnnTypeError, "adnn.%s: %s is %s but model_copies[0] is %s (the copies "
                     "share one dtype)", op, name, adnn_dtype_name(w->desc.dtype),
                     adnn_dtype_name(w0->desc.dtype));
        goto done;
      }
    }
    for (int k = 0; k <= S; k++) {
      PyObject *obj = k == 0 ? PySequence_Fast_GET_ITEM(grads, i)
                             : PySequence_Fast_GET_ITEM(states, (k - 1) * T + i);
      if (k == 0) snprintf(name, sizeof name, "grads[%zd]", i);
      else snprintf(name, sizeof name, "states[%zd]", (k - 1) * T + i);
      /* With model copies the gradients are of the copies' dtype. */
      TensorObject *u = tensor_arg(c, obj, k > 0, op, name, k == 0 && M ? NULL : t[0], sizes[i]);
      t[T * (1 + k) + i] = u;
      if (!u) goto done;
      if (k == 0 && M && u->desc.dtype != t[T * (2 + S)]->desc.dtype) {
        adnn_py_fail(AdnnTypeError, "adnn.%s: %s is %s but the model copies are %s (with "
                     "model_copies the gradients are of the model's dtype)", op, name,
                     adnn_dtype_name(u->desc.dtype),
                     adnn_dtype_name(t[T * (2 + S)]->desc.dtype));
        goto done;
      }
    }
  }
  if (adnn_py_ctx_check_open(c) < 0) goto done;
  d.dtype = t[0]->desc.dtype;
  if (M) d.model_dtype = t[T * (2 + S)]->desc.dtype;
  d.tensor_count = (size_t)T;
  d.sizes = NULL;
  d.lr = 0.0;
  memcpy(key, &d, sizeof d);
  /* The key holds the sizes: the plan cache keeps keys of up to 1 KiB, and a
   * larger set of tensors gets a plan of its own for this call. */
  adnn_plan *plan = NULL;
  PyObject *cap = NULL;
  adnn_status st;
  if (key_size + 1 <= 1024) {
    cap = adnn_py_plan_get(c, op_index_of(op), key, key_size, create_optimizer_key, op);
    if (cap == NULL) goto done;
    plan = PyCapsule_GetPointer(cap, "adnn_plan");
  } else {
    adnn_py_ctx_lock(c);
    st = create_optimizer_key(c->ctx, key, &plan);
    adnn_py_ctx_unlock(c);
    if (st != ADNN_STATUS_SUCCESS) {
      adnn_py_raise(st, op);
      goto done;
    }
  }
  const void **in = PyMem_Calloc((size_t)T, sizeof *in);
  const Py_ssize_t n_out = T * (1 + S + M);
  void **out = PyMem_Calloc((size_t)n_out, sizeof *out);
  if (!in || !out) {
    PyMem_Free(in);
    PyMem_Free(out);
    PyErr_NoMemory();
  } else {
    for (Py_ssize_t i = 0; i < T; i++) in[i] = t[T + i]->data;
    for (Py_ssize_t k = 0; k <= S; k++)
      for (Py_ssize_t i = 0; i < T; i++) out[k * T + i] = t[(k == 0 ? 0 : T * (1 + k)) + i]->data;
    for (Py_ssize_t i = 0; i < T * M; i++) out[(1 + S) * T + i] = t[T * (2 + S) + i]->data;
    /* The step's values and the execution under one hold of the context's
     * lock: the setter is not thread-safe with an execution of the plan. */
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(c->lock, WAIT_LOCK);
    st = adnn_plan_set_optimizer_step(plan, lr, step);
    if (st == ADNN_STATUS_SUCCESS)
      st = adnn_plan_execute_multi(plan, in, (size_t)T, out, (size_t)n_out);
    PyThread_release_lock(c->lock);
    Py_END_ALLOW_THREADS
    PyMem_Free(in);
    PyMem_Free(out);
    if (st != ADNN_STATUS_SUCCESS) adnn_py_raise(st, op);
    else {
      Py_INCREF(Py_None);
      result = Py_None;
    }
  }
  if (cap) {
    Py_DECREF(cap);
  } else {
    adnn_py_ctx_lock(c);
    adnn_plan_destroy(plan);
    adnn_py_ctx_unlock(c);
  }
done:
  for (Py_ssize_t i = 0; t && i < n_t; i++) Py_XDECREF(t[i]);
  PyMem_Free(t);
  PyMem_Free(key);
  Py_XDECREF(grads);
  Py_XDECREF(params);
  Py_XDECREF(states);
  Py_XDECREF(copies);
  return result;
}

static const op_binding binding_softmax_cross_entropy = {
    .inputs = {{"logits", 0, NO_OFFSET, NO_OFFSET, 0}, {"labels", 0, NO_OFFSET, NO_OFFSET, 0}},
    .params = {{"reduction", P_ENUM, 0, loss_reductions}, {"ignore_index", P_INT64, 0}},
    .doc = "Softmax cross-entropy of logits [N, C] with int32 class labels [N]: the loss "
           "(a scalar for 'mean' and 'sum', [N] for 'none'); labels equal to ignore_index "
           "are left out.",
    .call = call_softmax_cross_entropy,
};

static const op_binding binding_softmax_cross_entropy_backward = {
    .inputs = {{"logits", 0, NO_OFFSET, NO_OFFSET, 0},
               {"labels", 0, NO_OFFSET, NO_OFFSET, 0},
               {"dloss", 0, NO_OFFSET, NO_OFFSET, 0}},
    .params = {{"reduction", P_ENUM, 0, loss_reductions}, {"ignore_index", P_INT64, 0}},
    .doc = "The gradient of softmax_cross_entropy with respect to the logits: dlogits [N, C] "
           "from the logits, the labels and dloss (the loss's shape).",
    .call = call_softmax_cross_entropy_backward,
};

/* loss_scale(ctx, scale, *, tensors, found_inf, kind="unscale"): the
 * manifest's input first, as every binding has it; the tensors (one dtype,
 * packed, writable; the manifest's outputs) scaled in place; scale a 1-element
 * float32 tensor (the factor's source, which may live on the device);
 * found_inf a writable 1-element tensor of the tensors' dtype, set to 1 on
 * an infinite or NaN result and otherwise left alone. The plan is cached by
 * the kind, dtype and sizes (keys up to 1 KiB; more tensors get a plan of
 * their own per call). */
static adnn_status create_loss_scale_key(adnn_context *c, const void *key, adnn_plan **p) {
  adnn_loss_scale_desc d;
  memcpy(&d, key, sizeof d);
  d.sizes = (const int64_t *)((const char *)key + sizeof d);
  return adnn_plan_create_loss_scale(c, &d, p);
}

static PyObject *call_loss_scale(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  const char *op = "loss_scale";
  PyObject *pos[1] = {0}, *tensors_obj = NULL, *found_obj = NULL, *kind_obj = NULL;
  const kw_spec kws[] = {{"scale", &pos[0]}, {"tensors", &tensors_obj},
                         {"found_inf", &found_obj}, {"kind", &kind_obj}, {NULL, NULL}};
  ContextObject *c;
  if (parse_call(op, args, kwargs, 1, 1, pos, kws, &c) < 0) return NULL;
  PyObject *scale_obj = pos[0];
  if (!tensors_obj || !found_obj)
    return adnn_py_fail(AdnnTypeError, "adnn.%s: tensors= and found_inf= are required (updated "
                        "in place)", op);
  adnn_loss_scale_desc d;
  adnn_loss_scale_desc_init(&d);
  if (kind_obj) {
    int kind;
    if (kind_value(kind_obj, loss_scale_kinds, &kind, op, "kind") < 0) return NULL;
    d.kind = (adnn_loss_scale_kind)kind;
  }
  PyObject *result = NULL, *seq = NULL;
  TensorObject **t = NULL, *scale = NULL, *found = NULL;
  char *key = NULL;
  Py_ssize_t T = 0;
  seq = PySequence_Fast(tensors_obj, "adnn.loss_scale: tensors must be a sequence of tensors");
  if (!seq) goto done;
  T = PySequence_Fast_GET_SIZE(seq);
  if (T < 1) {
    adnn_py_fail(AdnnArgumentError, "adnn.%s: tensors is empty; at least one is needed", op);
    goto done;
  }
  const size_t key_size = sizeof d + (size_t)T * sizeof(int64_t);
  t = PyMem_Calloc((size_t)T, sizeof *t);
  key = PyMem_Calloc(1, key_size);
  if (!t || !key) {
    PyErr_NoMemory();
    goto done;
  }
  int64_t *sizes = (int64_t *)(key + sizeof d);
  for (Py_ssize_t i = 0; i < T; i++) {
    char name[48];
    snprintf(name, sizeof name, "tensors[%zd]", i);
    if ((t[i] = tensor_arg(c, PySequence_Fast_GET_ITEM(seq, i), 1, op, name, i ? t[0] : NULL,
                           -1)) == NULL)
      goto done;
    adnn_tensor_desc_element_count(&t[i]->desc, &sizes[i]);
    if (!adnn_tensor_desc_is_packed(&t[i]->desc)) {
      adnn_py_fail(AdnnArgumentError, "adnn.%s: %s must be packed", op, name);
      goto done;
    }
  }
  if ((scale = tensor_arg(c, scale_obj, 0, op, "scale", NULL, 1)) == NULL) goto done;
  if (scale->desc.dtype != ADNN_DTYPE_F32) {
    adnn_py_fail(AdnnTypeError, "adnn.%s: scale is %s; it is one float32 element", op,
                 adnn_dtype_name(scale->desc.dtype));
    goto done;
  }
  if ((found = tensor_arg(c, found_obj, 1, op, "found_inf", t[0], 1)) == NULL) goto done;
  if (adnn_py_ctx_check_open(c) < 0) goto done;
  d.dtype = t[0]->desc.dtype;
  d.tensor_count = (size_t)T;
  d.sizes = NULL;
  memcpy(key, &d, sizeof d);
  void **out = PyMem_Calloc((size_t)T + 1, sizeof *out);
  if (!out) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < T; i++) out[i] = t[i]->data;
  out[T] = found->data;
  const void *in[1] = {scale->data};
  adnn_status st;
  if (key_size + 1 <= 1024) {
    if (run_multi(c, op_index_of(op), key, key_size, create_loss_scale_key, op, in, 1, out,
                  (size_t)T + 1) == 0) {
      Py_INCREF(Py_None);
      result = Py_None;
    }
  } else {
    adnn_plan *plan = NULL;
    adnn_py_ctx_lock(c);
    st = create_loss_scale_key(c->ctx, key, &plan);
    adnn_py_ctx_unlock(c);
    if (st == ADNN_STATUS_SUCCESS) {
      Py_BEGIN_ALLOW_THREADS
      PyThread_acquire_lock(c->lock, WAIT_LOCK);
      st = adnn_plan_execute_multi(plan, in, 1, out, (size_t)T + 1);
      PyThread_release_lock(c->lock);
      Py_END_ALLOW_THREADS
      adnn_py_ctx_lock(c);
      adnn_plan_destroy(plan);
      adnn_py_ctx_unlock(c);
    }
    if (st != ADNN_STATUS_SUCCESS) adnn_py_raise(st, op);
    else {
      Py_INCREF(Py_None);
      result = Py_None;
    }
  }
  PyMem_Free(out);
done:
  for (Py_ssize_t i = 0; t && i < T; i++) Py_XDECREF(t[i]);
  PyMem_Free(t);
  PyMem_Free(key);
  Py_XDECREF(seq);
  Py_XDECREF(scale);
  Py_XDECREF(found);
  return result;
}

static const op_binding binding_loss_scale = {
    .inputs = {{"scale", 0, NO_OFFSET, NO_OFFSET, 0}},
    .params = {{"tensors", P_TENSOR, 0}, {"found_inf", P_TENSOR, 0},
               {"kind", P_ENUM, 0, loss_scale_kinds}},
    .doc = "Loss scaling in place over the tensors (one dtype: float32, float64, float16 or "
           "bf16; packed, writable): kind 'scale' multiplies by scale, 'unscale' (the default) "
           "by 1 / scale rounded to float32. scale is one float32 element; found_inf, one "
           "element of the tensors' dtype, becomes 1 when a result is infinite or NaN and is "
           "otherwise left alone (zero it once per iteration).",
    .call = call_loss_scale,
    .returns = "None",
};

/* The manifest's repeated input grad_0..grad_{T-1} is one sequence, grads. */
static const op_binding binding_optimizer = {
    .inputs = {{"grads", 0, NO_OFFSET, NO_OFFSET, 0}},
    .params = {{"params", P_TENSOR, 0},
               {"states", P_TENSOR, 0},
               {"model_copies", P_TENSOR, 0},
               {"kind", P_ENUM, 0, optimizer_kinds},
               {"lr", P_DOUBLE, 0},
               {"step", P_INT64, 0},
               {"weight_decay", P_DOUBLE, 0},
               {"momentum", P_DOUBLE, 0},
               {"dampening", P_DOUBLE, 0},
               {"nesterov", P_BOOL, 0},
               {"beta1", P_DOUBLE, 0},
               {"beta2", P_DOUBLE, 0},
               {"epsilon", P_DOUBLE, 0}},
    .doc = "One fused optimizer step (sgd, adam, adamw; PyTorch's rules) over the tensors of "
           "params (updated in place) with their grads; states (updated in place) are the "
           "momentum buffers (sgd with momentum) or every m then every v (adam, adamw), zeros "
           "at step 1. lr and step (1 at the first step) are this call's. Mixed precision: "
           "model_copies (f16 or bf16, one per param, written) keeps params and states as f32 "
           "master weights; grads are then of the copies' dtype and each copy becomes the "
           "rounding of its updated param.",
    .call = call_optimizer,
    .returns = "None",
};

/* ---- attention -------------------------------------------------------------------------- */

/* attention(ctx, q, k, v, *, bias=None, key_lengths=None, scale=0.0,
 * causal=False, lse=True): q [B, H, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv,
 * Skv, Dv] in any strides; returns (o, lse) or o (packed, new tensors). */
static PyObject *call_attention(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  const char *op = "attention";
  PyObject *pos[3] = {0}, *bias_obj = NULL, *kl_obj = NULL, *scale_obj = NULL,
           *causal_obj = NULL, *lse_obj = NULL;
  const kw_spec kws[] = {{"q", &pos[0]},           {"k", &pos[1]},
                         {"v", &pos[2]},           {"bias", &bias_obj},
                         {"key_lengths", &kl_obj}, {"scale", &scale_obj},
                         {"causal", &causal_obj},  {"lse", &lse_obj},
                         {NULL, NULL}};
  ContextObject *c;
  if (parse_call(op, args, kwargs, 3, 3, pos, kws, &c) < 0) return NULL;
  adnn_attention_desc d;
  memset(&d, 0, sizeof d); /* the plan cache's key: every byte defined */
  adnn_attention_desc_init(&d);
  if (double_arg(scale_obj, &d.scale) < 0) return NULL;
  if (causal_obj) {
    const int b = PyObject_IsTrue(causal_obj);
    if (b < 0) return NULL;
    d.causal = b;
  }
  if (lse_obj) {
    const int b = PyObject_IsTrue(lse_obj);
    if (b < 0) return NULL;
    d.has_lse = b;
  }
  PyObject *result = NULL;
  TensorObject *t[5] = {0}, *o = NULL, *lse = NULL;
  static const char *const names[3] = {"q", "k", "v"};
  for (int i = 0; i < 3; i++) {
    if ((t[i] = tensor_arg(c, pos[i], 0, op, names[i], i ? t[0] : NULL, -1)) == NULL) goto done;
    if (t[i]->desc.rank != 4) {
      adnn_py_fail(AdnnArgumentError, "adnn.%s: %s must have rank 4 (has %d)", op, names[i],
                   (int)t[i]->desc.rank);
      goto done;
    }
  }
  d.q = t[0]->desc;
  d.k = t[1]->desc;
  d.v = t[2]->desc;
  size_t n_in = 3;
  const void *in[5] = {t[0]->data, t[1]->data, t[2]->data, NULL, NULL};
  if (bias_obj && bias_obj != Py_None) {
    if ((t[3] = tensor_arg(c, bias_obj, 0, op, "bias", t[0], -1)) == NULL) goto done;
    d.has_bias = 1;
    d.bias = t[3]->desc;
    in[n_in++] = t[3]->data;
  }
  if (kl_obj && kl_obj != Py_None) {
    if ((t[4] = tensor_arg(c, kl_obj, 0, op, "key_lengths", NULL, -1)) == NULL) goto done;
    d.has_key_lengths = 1;
    d.key_lengths = t[4]->desc;
    in[n_in++] = t[4]->data;
  }
  const int64_t od[4] = {d.q.dims[0], d.q.dims[1], d.q.dims[2], d.v.dims[3]};
  if (adnn_py_ctx_check_open(c) < 0) goto done;
  if ((o = (TensorObject *)adnn_py_tensor_empty(c, d.q.dtype, 4, od)) == NULL) goto done;
  d.o = o->desc;
  if (d.has_lse) {
    if ((lse = (TensorObject *)adnn_py_tensor_empty(c, ADNN_OP_PARAM_DTYPE(d.q.dtype), 3, od)) ==
        NULL)
      goto done;
    d.lse = lse->desc;
  }
  void *out[2] = {o->data, lse ? lse->data : NULL};
  if (run_multi(c, op_index_of(op), &d, sizeof d,
                (adnn_status(*)(adnn_context *, const void *, adnn_plan **))
                    adnn_plan_create_attention,
                op, in, n_in, out, d.has_lse ? 2 : 1) < 0)
    goto done;
  if (lse) {
    result = PyTuple_Pack(2, (PyObject *)o, (PyObject *)lse);
  } else {
    result = (PyObject *)o;
    o = NULL;
  }
done:
  for (int i = 0; i < 5; i++) Py_XDECREF(t[i]);
  Py_XDECREF(o);
  Py_XDECREF(lse);
  return result;
}

static const op_binding binding_attention = {
    .inputs = {{"q", 0, NO_OFFSET, NO_OFFSET, 0},
               {"k", 0, NO_OFFSET, NO_OFFSET, 0},
               {"v", 0, NO_OFFSET, NO_OFFSET, 0},
               {"bias", 1, NO_OFFSET, NO_OFFSET, 0},
               {"key_lengths", 1, NO_OFFSET, NO_OFFSET, 0}},
    .params = {{"scale", P_DOUBLE, 0}, {"causal", P_BOOL, 0}, {"lse", P_BOOL, 0}},
    .doc = "Scaled-dot-product attention: softmax(scale * q k^T + bias, masked) v for q [B, H, "
           "Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv] (H a multiple of Hkv: grouped-query "
           "attention). scale 0 means 1 / sqrt(D); causal aligns to the bottom right (query i "
           "sees keys j <= i + Skv - Sq); bias broadcasts to [B, H, Sq, Skv] (-inf masks); "
           "key_lengths (int32 [B]) masks keys j >= key_lengths[b]. Returns (o, lse) with lse "
           "the row log-sum-exp [B, H, Sq], or o alone with lse=False; fully masked rows give "
           "o = 0 and lse = -inf.",
    .call = call_attention,
    .returns = "(Tensor, Tensor), or Tensor with lse=False",
};

/* ---- attention backward ----------------------------------------------------------------- */

/* The plan-cache key of attention backward: the descriptor with its forward
 * pointer cleared, then the forward descriptor (as bnb_key). */
typedef struct ab_key {
  adnn_attention_backward_desc d;
  adnn_attention_desc f;
} ab_key;

static adnn_status create_ab_key(adnn_context *c, const void *key, adnn_plan **p) {
  ab_key k = *(const ab_key *)key;
  k.d.forward = &k.f;
  return adnn_plan_create_attention_backward(c, &k.d, p);
}

static int same_layout(const adnn_tensor_desc *a, const adnn_tensor_desc *b) {
  if (a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i] || (a->dims[i] > 1 && a->strides[i] != b->strides[i])) return 0;
  return 1;
}

/* attention_backward(ctx, q, k, v, o, do, lse, *, bias=None, key_lengths=None,
 * scale=0.0, causal=False): the forward's tensors and options, o and lse as
 * attention() returned them and do (o's layout); returns (dq, dk, dv) as new
 * packed tensors, so q, k and v must be packed. */
static PyObject *call_attention_backward(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  const char *op = "attention_backward";
  PyObject *pos[6] = {0}, *bias_obj = NULL, *kl_obj = NULL, *scale_obj = NULL,
           *causal_obj = NULL;
  const kw_spec kws[] = {{"q", &pos[0]},           {"k", &pos[1]},         {"v", &pos[2]},
                         {"o", &pos[3]},           {"do", &pos[4]},        {"lse", &pos[5]},
                         {"bias", &bias_obj},      {"key_lengths", &kl_obj},
                         {"scale", &scale_obj},    {"causal", &causal_obj}, {NULL, NULL}};
  ContextObject *c;
  if (parse_call(op, args, kwargs, 6, 6, pos, kws, &c) < 0) return NULL;
  ab_key key;
  memset(&key, 0, sizeof key); /* the plan cache's key: every byte defined */
  adnn_attention_backward_desc_init(&key.d);
  adnn_attention_desc_init(&key.f);
  if (double_arg(scale_obj, &key.f.scale) < 0) return NULL;
  if (causal_obj) {
    const int b = PyObject_IsTrue(causal_obj);
    if (b < 0) return NULL;
    key.f.causal = b;
  }
  PyObject *result = NULL;
  TensorObject *t[8] = {0}, *g[3] = {0};
  static const char *const names[6] = {"q", "k", "v", "o", "do", "lse"};
  for (int i = 0; i < 6; i++)
    if ((t[i] = i == 5 ? param_arg(c, pos[i], 0, op, names[i], t[0], -1)
                       : tensor_arg(c, pos[i], 0, op, names[i], i ? t[0] : NULL, -1)) == NULL)
      goto done;
  for (int i = 0; i < 3; i++)
    if (t[i]->desc.rank != 4 || !adnn_tensor_desc_is_packed(&t[i]->desc)) {
      adnn_py_fail(AdnnArgumentError, "adnn.%s: %s must be a packed tensor of rank 4 (d%s is "
                   "created with its layout)", op, names[i], names[i]);
      goto done;
    }
  if (!same_layout(&t[3]->desc, &t[4]->desc)) {
    adnn_py_fail(AdnnArgumentError, "adnn.%s: do must have o's dims and layout", op);
    goto done;
  }
  key.f.q = t[0]->desc;
  key.f.k = t[1]->desc;
  key.f.v = t[2]->desc;
  key.f.o = t[3]->desc;
  key.f.lse = t[5]->desc;
  size_t n_in = 6;
  const void *in[8] = {t[0]->data, t[1]->data, t[2]->data, t[3]->data, t[4]->data, t[5]->data};
  if (bias_obj && bias_obj != Py_None) {
    if ((t[6] = tensor_arg(c, bias_obj, 0, op, "bias", t[0], -1)) == NULL) goto done;
    key.f.has_bias = 1;
    key.f.bias = t[6]->desc;
    in[n_in++] = t[6]->data;
  }
  if (kl_obj && kl_obj != Py_None) {
    if ((t[7] = tensor_arg(c, kl_obj, 0, op, "key_lengths", NULL, -1)) == NULL) goto done;
    key.f.has_key_lengths = 1;
    key.f.key_lengths = t[7]->desc;
    in[n_in++] = t[7]->data;
  }
  if (adnn_py_ctx_check_open(c) < 0) goto done;
  for (int i = 0; i < 3; i++)
    if ((g[i] = (TensorObject *)adnn_py_tensor_empty(c, t[i]->desc.dtype, 4,
                                                     t[i]->desc.dims)) == NULL)
      goto done;
  void *out[3] = {g[0]->data, g[1]->data, g[2]->data};
  if (run_multi(c, op_index_of(op), &key, sizeof key, create_ab_key, op, in, n_in, out, 3) < 0)
    goto done;
  result = PyTuple_Pack(3, (PyObject *)g[0], (PyObject *)g[1], (PyObject *)g[2]);
done:
  for (int i = 0; i < 8; i++) Py_XDECREF(t[i]);
  for (int i = 0; i < 3; i++) Py_XDECREF(g[i]);
  return result;
}

static const op_binding binding_attention_backward = {
    .inputs = {{"q", 0, NO_OFFSET, NO_OFFSET, 0},
               {"k", 0, NO_OFFSET, NO_OFFSET, 0},
               {"v", 0, NO_OFFSET, NO_OFFSET, 0},
               {"o", 0, NO_OFFSET, NO_OFFSET, 0},
               {"do", 0, NO_OFFSET, NO_OFFSET, 0},
               {"lse", 0, NO_OFFSET, NO_OFFSET, 0},
               {"bias", 1, NO_OFFSET, NO_OFFSET, 0},
               {"key_lengths", 1, NO_OFFSET, NO_OFFSET, 0}},
    .params = {{"scale", P_DOUBLE, 0}, {"causal", P_BOOL, 0}},
    .doc = "The gradients of attention: (dq, dk, dv) from the forward's q, k, v, its o and "
           "lse (attention() with lse=True) and do, the gradient of o; bias, key_lengths, "
           "scale and causal as given to the forward. dk and dv sum over the query heads of "
           "each group; the bias gets no gradient. q, k and v must be packed (the gradients "
           "are new packed tensors of their dims).",
    .call = call_attention_backward,
    .returns = "(Tensor, Tensor, Tensor)",
};

static int op_index_of(const char *name) {
  for (int i = 0; i < N_OPS; i++)
    if (strcmp(op_table[i].name, name) == 0) return i;
  return 0;
}

/* ---- the generic op call -------------------------------------------------------------- */

static PyObject *op_call(PyObject *self, PyObject *args, PyObject *kwargs) {
  const op_entry *e = &op_table[PyLong_AsLong(self)];
  const op_binding *b = e->binding;
  if (b->call) return b->call(self, args, kwargs);
  const char *op = e->name;
  int n_in = 0, n_par = 0;
  while (n_in < MAX_INPUTS && b->inputs[n_in].name) n_in++;
  while (n_par < MAX_PARAMS && b->params[n_par].name) n_par++;

  PyObject *in_obj[MAX_INPUTS] = {0}, *par_obj[MAX_PARAMS] = {0}, *out_obj = NULL;
  Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  if (nargs < 1 || !Py_IS_TYPE(PyTuple_GET_ITEM(args, 0), &ContextType))
    return adnn_py_fail(AdnnTypeError, "adnn.%s: the first argument must be an adnn.Context", op);
  ContextObject *c = (ContextObject *)PyTuple_GET_ITEM(args, 0);
  if (nargs - 1 > n_in)
    return adnn_py_fail(AdnnTypeError, "adnn.%s: takes at most %d tensors positionally, got %zd",
                        op, n_in, nargs - 1);
  for (Py_ssize_t i = 1; i < nargs; i++) in_obj[i - 1] = PyTuple_GET_ITEM(args, i);
  if (kwargs) {
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &k, &v)) {
      const char *s = PyUnicode_AsUTF8(k);
      if (s == NULL) return NULL;
      int found = 0;
      if (strcmp(s, "out") == 0) out_obj = v, found = 1;
      for (int i = 0; !found && i < n_in; i++)
        if (strcmp(s, b->inputs[i].name) == 0) {
          if (in_obj[i]) return adnn_py_fail(AdnnTypeError, "adnn.%s: %s given twice", op, s);
          in_obj[i] = v, found = 1;
        }
      for (int i = 0; !found && i < n_par; i++)
        if (strcmp(s, b->params[i].name) == 0) par_obj[i] = v, found = 1;
      if (!found) return adnn_py_fail(AdnnTypeError, "adnn.%s: unexpected keyword '%s'", op, s);
    }
  }
  if (out_obj == Py_None) out_obj = NULL;

  PyObject *result = NULL, *plan_cap = NULL, *out2_obj = NULL;
  TensorObject *in[MAX_INPUTS] = {0}, *y = NULL, *y2 = NULL;
  _Alignas(16) char desc[1024];
  /* A backward op of pooling, activations or softmax fills its forward
   * descriptor (fwd_init, see op_binding); a backward convolution its own
   * storage (init). */
  if (b->fwd_create)
    b->fwd_init(desc);
  else if (b->init)
    b->init(desc);
  else
    e->init(desc);
  for (int i = 0; i < n_in; i++) {
    const input_spec *s = &b->inputs[i];
    if (in_obj[i] == NULL || in_obj[i] == Py_None) {
      if (!s->optional) {
        adnn_py_fail(AdnnTypeError, "adnn.%s: missing tensor '%s'", op, s->name);
        goto done;
      }
      continue;
    }
    char what[64];
    snprintf(what, sizeof what, "adnn.%s: %s", op, s->name);
    if ((in[i] = adnn_py_as_tensor(c, in_obj[i], 0, what)) == NULL) goto done;
    const adnn_dtype x_dtype = in[0]->desc.dtype;
    const int x_is_int = x_dtype == ADNN_DTYPE_I8 || x_dtype == ADNN_DTYPE_U8 ||
                         x_dtype == ADNN_DTYPE_I32;
    if ((s->own_dtype == 0 || (s->own_dtype == 2 && !x_is_int)) &&
        in[i]->desc.dtype != x_dtype) {
      adnn_py_fail(AdnnTypeError, "adnn.%s: %s is %s but x is %s (all tensors share one dtype)",
                   op, s->name, adnn_dtype_name(in[i]->desc.dtype),
                   adnn_dtype_name(in[0]->desc.dtype));
      goto done;
    }
    if (s->desc_off != NO_OFFSET) memcpy(desc + s->desc_off, &in[i]->desc, sizeof(adnn_tensor_desc));
    if (s->flag_off != NO_OFFSET) *(int32_t *)(desc + s->flag_off) = 1;
  }
  if (adnn_py_ctx_check_open(c) < 0) goto done;
  for (int i = 0; i < n_par; i++)
    if (par_obj[i] && set_param(&b->params[i], desc, par_obj[i], in[0]->desc.rank, op) < 0)
      goto done;
  for (int i = 0; i < n_in; i++) {
    if (in[i] == NULL || !b->inputs[i].packed_vector) continue;
    int64_t want = b->vector_len(desc, in, i), n = 0;
    adnn_tensor_desc_element_count(&in[i]->desc, &n);
    if (want < 0 || n != want || !adnn_tensor_desc_is_packed(&in[i]->desc)) {
      adnn_py_fail(AdnnArgumentError,
                   "adnn.%s: %s must be a packed vector of %lld elements (has %lld%s)", op,
                   b->inputs[i].name, (long long)want, (long long)n,
                   adnn_tensor_desc_is_packed(&in[i]->desc) ? "" : ", not packed");
      goto done;
    }
  }
  if (b->fwd_create && b->same_layout[0] >= 0) {
    const int i0 = b->same_layout[0], i1 = b->same_layout[1];
    if (!same_tensor_layout(&in[i0]->desc, &in[i1]->desc)) {
      adnn_py_fail(AdnnArgumentError, "adnn.%s: %s and %s must have the same shape and strides",
                   op, b->inputs[i0].name, b->inputs[i1].name);
      goto done;
    }
  }
  if (b->has_beta && *(const double *)(desc + b->beta_off) != 0.0 && out_obj == NULL) {
    adnn_py_fail(AdnnArgumentError, "adnn.%s: beta != 0 accumulates into out=, which is missing",
                 op);
    goto done;
  }
  int64_t dims[ADNN_MAX_RANK], dims2[ADNN_MAX_RANK];
  int rank = b->output_dims(desc, in, dims);
  if (rank < 0) goto done;
  const int rank2 = b->output2_dims ? b->output2_dims(desc, in, dims2) : 0;
  if (rank2 < 0) goto done;
  if (rank2 > 0 && out_obj) {
    /* Two outputs: out= is a pair. */
    if (!(PyTuple_Check(out_obj) || PyList_Check(out_obj)) || PySequence_Size(out_obj) != 2) {
      adnn_py_fail(AdnnTypeError, "adnn.%s: out must be a pair of tensors (it has two outputs)",
                   op);
      goto done;
    }
    PyObject *o0 = PySequence_GetItem(out_obj, 0), *o1 = PySequence_GetItem(out_obj, 1);
    char what[64];
    snprintf(what, sizeof what, "adnn.%s: out[1]", op);
    if (o1) y2 = adnn_py_as_tensor(c, o1, 1, what);
    Py_XDECREF(o1);
    out_obj = o0;
    Py_XDECREF(o0); /* the pair keeps it alive for this call */
    if (y2 == NULL) goto done;
    int same = y2->desc.rank == rank2 && y2->desc.dtype == in[0]->desc.dtype;
    for (int i = 0; same && i < rank2; i++) same = y2->desc.dims[i] == dims2[i];
    if (!same) {
      adnn_py_fail(AdnnArgumentError, "adnn.%s: out[1] has the wrong dtype or shape", op);
      goto done;
    }
  } else if (rank2 > 0 &&
             (y2 = (TensorObject *)adnn_py_tensor_empty(c, in[0]->desc.dtype, rank2, dims2)) ==
                 NULL) {
    goto done;
  }
  if (y2) memcpy(desc + b->y2_off, &y2->desc, sizeof(adnn_tensor_desc));
  if (out_obj) {
    char what[64];
    snprintf(what, sizeof what, "adnn.%s: out", op);
    if ((y = adnn_py_as_tensor(c, out_obj, 1, what)) == NULL) goto done;
    int same = y->desc.rank == rank &&
               (b->out_any_dtype || y->desc.dtype == in[0]->desc.dtype);
    for (int i = 0; same && i < rank; i++) same = y->desc.dims[i] == dims[i];
    if (!same) {
      PyObject *want = PyTuple_New(rank);
      for (int i = 0; want && i < rank; i++)
        PyTuple_SET_ITEM(want, i, PyLong_FromLongLong(dims[i]));
      PyObject *got = PyObject_GetAttrString((PyObject *)y, "shape");
      adnn_py_fail(AdnnArgumentError, "adnn.%s: out is %s %R, the result is %s %R", op,
                   adnn_dtype_name(y->desc.dtype), got, adnn_dtype_name(in[0]->desc.dtype), want);
      Py_XDECREF(want);
      Py_XDECREF(got);
      goto done;
    }
  } else if ((y = (TensorObject *)adnn_py_tensor_empty(c, in[0]->desc.dtype, rank, dims)) == NULL) {
    goto done;
  }
  if (b->fwd_create && b->out_like >= 0 && !same_tensor_layout(&y->desc, &in[b->out_like]->desc)) {
    adnn_py_fail(AdnnArgumentError, "adnn.%s: the result must have %s's shape and strides "
                 "(pass out= with them when %s is not packed)", op, b->inputs[b->out_like].name,
                 b->inputs[b->out_like].name);
    goto done;
  }
  memcpy(desc + b->y_off, &y->desc, sizeof(adnn_tensor_desc));

  const size_t key_size = b->fwd_create ? b->fwd_size : b->desc_size ? b->desc_size : e->desc_size;
  plan_cap = adnn_py_plan_get(c, (int)(e - op_table), desc, key_size,
                              b->fwd_create ? b->fwd_create : b->create ? b->create : e->create,
                              op);
  if (plan_cap == NULL) goto done;
  adnn_plan *plan = PyCapsule_GetPointer(plan_cap, "adnn_plan");
  const void *ptrs[MAX_INPUTS];
  size_t n_ptrs = 0;
  for (int i = 0; i < n_in; i++)
    if (in[i]) ptrs[n_ptrs++] = in[i]->data;
  adnn_status st;
  void *ydata = y->data;
  void *outs[2] = {ydata, y2 ? y2->data : NULL};
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(c->lock, WAIT_LOCK);
  if (y2)
    st = adnn_plan_execute_multi(plan, ptrs, n_ptrs, outs, 2);
  else
    st = adnn_plan_execute(plan, ptrs, n_ptrs, ydata);
  PyThread_release_lock(c->lock);
  Py_END_ALLOW_THREADS
  if (st != ADNN_STATUS_SUCCESS) {
    adnn_py_raise(st, op);
    goto done;
  }
  if (y2) {
    result = PyTuple_Pack(2, (PyObject *)y, (PyObject *)y2);
  } else {
    result = (PyObject *)y;
    Py_INCREF(y);
  }
done:
  Py_XDECREF(plan_cap);
  Py_XDECREF(y);
  Py_XDECREF(y2);
  for (int i = 0; i < n_in; i++) Py_XDECREF(in[i]);
  return result;
}

/* ---- gemm (no plan: one call) ----------------------------------------------------------- */

/* A 2-D operand as (rows, cols, ld, transposed): row-major (cols stride 1),
 * or column-major (rows stride 1: a transposed view such as numpy's .T). */
static int matrix_of(TensorObject *t, int64_t *rows, int64_t *cols, int64_t *ld, int *trans,
                     const char *name) {
  if (t->desc.rank != 2) {
    adnn_py_fail(AdnnArgumentError, "adnn.gemm: %s must be 2-D, has rank %d", name, t->desc.rank);
    return -1;
  }
  *rows = t->desc.dims[0];
  *cols = t->desc.dims[1];
  const int64_t *s = t->desc.strides;
  if (s[1] == 1 || *cols <= 1) {
    *ld = s[0] > *cols ? s[0] : (*cols > 0 ? *cols : 1);
    *trans = 0;
  } else if (s[0] == 1 || *rows <= 1) {
    *ld = s[1] > *rows ? s[1] : (*rows > 0 ? *rows : 1);
    *trans = 1;
  } else {
    adnn_py_fail(AdnnArgumentError,
                 "adnn.gemm: %s needs unit stride along one dim (strides %lld, %lld)", name,
                 (long long)s[0], (long long)s[1]);
    return -1;
  }
  return 0;
}

static PyObject *gemm(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  PyObject *a_obj = NULL, *b_obj = NULL, *out_obj = NULL;
  double alpha = 1.0, beta = 0.0;
  int ta = 0, tb = 0;
  if (nargs < 3 || nargs > 3 || !Py_IS_TYPE(args[0], &ContextType))
    return adnn_py_fail(AdnnTypeError, "adnn.gemm(ctx, a, b, *, out=None, alpha=1.0, beta=0.0, "
                                       "trans_a=False, trans_b=False)");
  ContextObject *c = (ContextObject *)args[0];
  a_obj = args[1];
  b_obj = args[2];
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; i < nk; i++) {
    const char *k = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, i));
    PyObject *v = args[nargs + i];
    if (k == NULL) return NULL;
    if (strcmp(k, "out") == 0) out_obj = v == Py_None ? NULL : v;
    else if (strcmp(k, "alpha") == 0 || strcmp(k, "beta") == 0) {
      double d = PyFloat_AsDouble(v);
      if (d == -1.0 && PyErr_Occurred()) return NULL;
      *(k[0] == 'a' ? &alpha : &beta) = d;
    } else if (strcmp(k, "trans_a") == 0 || strcmp(k, "trans_b") == 0) {
      int t = PyObject_IsTrue(v);
      if (t < 0) return NULL;
      *(k[6] == 'a' ? &ta : &tb) = t;
    } else {
      return adnn_py_fail(AdnnTypeError, "adnn.gemm: unexpected keyword '%s'", k);
    }
  }
  PyObject *result = NULL;
  TensorObject *a = NULL, *b = NULL, *y = NULL;
  if ((a = adnn_py_as_tensor(c, a_obj, 0, "adnn.gemm: a")) == NULL) goto done;
  if ((b = adnn_py_as_tensor(c, b_obj, 0, "adnn.gemm: b")) == NULL) goto done;
  if (adnn_py_ctx_check_open(c) < 0) goto done;
  if (a->desc.dtype != b->desc.dtype) {
    adnn_py_fail(AdnnTypeError, "adnn.gemm: a is %s but b is %s", adnn_dtype_name(a->desc.dtype),
                 adnn_dtype_name(b->desc.dtype));
    goto done;
  }
  int64_t ar, ac, lda, br, bc, ldb, cr, cc, ldc;
  int at, bt, ct;
  if (matrix_of(a, &ar, &ac, &lda, &at, "a") < 0 || matrix_of(b, &br, &bc, &ldb, &bt, "b") < 0)
    goto done;
  /* A column-major view is the row-major transpose: fold it into the flag. */
  int64_t m = ta ? ac : ar, k = ta ? ar : ac, kb = tb ? bc : br, n = tb ? br : bc;
  if (at) ta = !ta;
  if (bt) tb = !tb;
  if (k != kb) {
    adnn_py_fail(AdnnArgumentError, "adnn.gemm: op(a) is %lld x %lld but op(b) is %lld x %lld",
                 (long long)m, (long long)k, (long long)kb, (long long)n);
    goto done;
  }
  int64_t dims[2] = {m, n};
  if (out_obj) {
    if ((y = adnn_py_as_tensor(c, out_obj, 1, "adnn.gemm: out")) == NULL) goto done;
    if (matrix_of(y, &cr, &cc, &ldc, &ct, "out") < 0) goto done;
    if (cr != m || cc != n || ct || y->desc.dtype != a->desc.dtype) {
      adnn_py_fail(AdnnArgumentError,
                   "adnn.gemm: out must be a row-major %s %lld x %lld matrix (is %s %lld x %lld%s)",
                   adnn_dtype_name(a->desc.dtype), (long long)m, (long long)n,
                   adnn_dtype_name(y->desc.dtype), (long long)cr, (long long)cc,
                   ct ? ", column-major" : "");
      goto done;
    }
  } else {
    if (beta != 0.0) {
      adnn_py_fail(AdnnArgumentError, "adnn.gemm: beta != 0 reads C: pass out=");
      goto done;
    }
    if ((y = (TensorObject *)adnn_py_tensor_empty(c, a->desc.dtype, 2, dims)) == NULL) goto done;
    ldc = n > 0 ? n : 1;
  }
  adnn_status st;
  adnn_dtype dt = a->desc.dtype;
  const void *ap = a->data, *bp = b->data;
  void *cp = y->data;
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(c->lock, WAIT_LOCK);
  st = adnn_gemm(c->ctx, dt, ta ? ADNN_TRANS : ADNN_NO_TRANS, tb ? ADNN_TRANS : ADNN_NO_TRANS, m,
                 n, k, alpha, ap, lda, bp, ldb, beta, cp, ldc);
  PyThread_release_lock(c->lock);
  Py_END_ALLOW_THREADS
  if (st != ADNN_STATUS_SUCCESS) {
    adnn_py_raise(st, "adnn.gemm");
    goto done;
  }
  result = (PyObject *)y;
  Py_INCREF(y);
done:
  Py_XDECREF(a);
  Py_XDECREF(b);
  Py_XDECREF(y);
  return result;
}

PyMethodDef adnn_py_gemm_def = {
    "gemm", (PyCFunction)(void (*)(void))gemm, METH_FASTCALL | METH_KEYWORDS,
    "gemm(ctx, a, b, *, out=None, alpha=1.0, beta=0.0, trans_a=False, trans_b=False) -> Tensor\n\n"
    "out = alpha * op(a) @ op(b) + beta * out, row-major (a column-major view such as\n"
    "numpy's a.T is taken as it is). Without out=, a new tensor (beta must be 0)."};

/* ---- registration ---------------------------------------------------------------------- */

static const char *param_default(const param_spec *p) {
  switch (p->type) {
    case P_ACT: return "'identity'";
    case P_ENUM: {
      static char buf[MAX_PARAMS * 8][40];
      static int next;
      char *s = buf[next++ % (MAX_PARAMS * 8)];
      snprintf(s, 40, "'%s'", p->kinds[0].name);
      return s;
    }
    default: return "...";
  }
}

static PyMethodDef op_defs[N_OPS + 1];
static char op_docs[N_OPS][1024];

int adnn_py_ops_add(PyObject *module) {
  PyObject *names = PyList_New(0), *manifest = PyDict_New();
  if (names == NULL || manifest == NULL) return -1;
  for (int i = 0; i < N_OPS; i++) {
    const op_entry *e = &op_table[i];
    const op_binding *b = e->binding;
    char *d = op_docs[i];
    size_t u = (size_t)snprintf(d, sizeof op_docs[i], "%s(ctx", e->name);
    for (int k = 0; k < MAX_INPUTS && b->inputs[k].name; k++)
      u += (size_t)snprintf(d + u, sizeof op_docs[i] - u, ", %s%s", b->inputs[k].name,
                            b->inputs[k].optional ? "=None" : "");
    u += (size_t)snprintf(d + u, sizeof op_docs[i] - u, ", *");
    for (int k = 0; k < MAX_PARAMS && b->params[k].name; k++)
      u += (size_t)snprintf(d + u, sizeof op_docs[i] - u, ", %s=%s", b->params[k].name,
                            param_default(&b->params[k]));
    snprintf(d + u, sizeof op_docs[i] - u,
             "%s) -> %s\n\n%s\nManifest inputs: %s. Parameters default to "
             "adnn_%s_desc_init()'s values; see doc/ops.md.",
             b->call ? "" : ", out=None", b->returns ? b->returns : "Tensor", b->doc,
             e->manifest_inputs, e->name);
    op_defs[i] = (PyMethodDef){e->name, (PyCFunction)(void (*)(void))op_call,
                               METH_VARARGS | METH_KEYWORDS, d};
    PyObject *idx = PyLong_FromLong(i);
    PyObject *f = idx ? PyCFunction_NewEx(&op_defs[i], idx, NULL) : NULL;
    Py_XDECREF(idx);
    if (f == NULL || PyModule_AddObject(module, e->name, f) < 0) {
      Py_XDECREF(f);
      return -1;
    }
    PyObject *inputs = PyList_New(0);
    for (int k = 0; inputs && k < MAX_INPUTS && b->inputs[k].name; k++) {
      PyObject *t = Py_BuildValue("(si)", b->inputs[k].name, b->inputs[k].optional);
      if (t == NULL || PyList_Append(inputs, t) < 0) Py_CLEAR(inputs);
      Py_XDECREF(t);
    }
    PyObject *row = inputs ? Py_BuildValue("(sN)", e->manifest_inputs, inputs) : NULL;
    PyObject *nm = PyUnicode_FromString(e->name);
    if (row == NULL || nm == NULL || PyDict_SetItem(manifest, nm, row) < 0 ||
        PyList_Append(names, nm) < 0) {
      Py_XDECREF(row);
      Py_XDECREF(nm);
      return -1;
    }
    Py_DECREF(row);
    Py_DECREF(nm);
  }
  PyObject *tup = PyList_AsTuple(names);
  Py_DECREF(names);
  if (tup == NULL || PyModule_AddObject(module, "OPS", tup) < 0) return -1;
  /* {op: (manifest inputs column, [(binding input, optional), ...])} for the tests. */
  if (PyModule_AddObject(module, "_MANIFEST", manifest) < 0) return -1;
  return 0;
}
