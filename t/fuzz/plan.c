/*
 * libFuzzer target: the descriptor and plan API on the CPU backend.
 *
 * The first byte picks an op of the manifest (ADNN_OP_LIST in
 * adnn/op_list.h); the following bytes fill that op's descriptor: ranks, dims,
 * strides (packed, padded, reversed or arbitrary), dtypes, enums and the
 * numeric parameters. Sizes are mostly small, so that most descriptors are
 * valid or nearly valid and the validation's deeper branches are reached, and
 * sometimes huge, for the overflow checks. y is derived from the inputs the
 * way the op defines it, then perturbed when the bytes say so.
 * adnn_plan_create_<op> must return a status (never crash); when it succeeds
 * and the tensors are small, the plan is executed once on adnn_malloc
 * buffers of exactly the spans the descriptors need (filled with a byte
 * pattern), so an out-of-bounds access of a kernel shows up under ASan. Every
 * plan and buffer is freed; libFuzzer's leak check catches what is not.
 *
 * The library is compiled into this program and the CPU plugin is a
 * clang-built copy in t/fuzz/plugins/ (see t/local.mk), both instrumented.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "t/tmpdir.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- reading the input ------------------------------------------------------ */

typedef struct reader {
  const uint8_t *p;
  size_t n;
} reader;

static uint8_t byte(reader *r) {
  if (r->n == 0) return 0;
  r->n--;
  return *r->p++;
}

static uint64_t raw64(reader *r) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = (v << 8) | byte(r);
  return v;
}

/* A size or count: mostly 0..7, sometimes any 64-bit value. */
static int64_t size_val(reader *r) {
  uint8_t b = byte(r);
  if (b == 0xff) return (int64_t)raw64(r);
  return b & 7;
}

/* A signed parameter (padding, stride, dilation, axis): mostly -2..5. */
static int64_t param_val(reader *r) {
  uint8_t b = byte(r);
  if (b == 0xff) return (int64_t)raw64(r);
  return (int64_t)(b % 8) - 2;
}

/* v + k without overflow (the bytes may give any value). */
static int64_t shifted(int64_t v, int64_t k) {
  return v > INT64_MAX - k ? v : v + k;
}

static double double_val(reader *r) {
  uint8_t b = byte(r);
  if (b < 0xf0) return (double)(b % 16) / 8.0 - 0.5;
  uint64_t bits = raw64(r);
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

static int32_t enum_val(reader *r, int32_t count) {
  uint8_t b = byte(r);
  if (b == 0xff) return (int32_t)(uint32_t)raw64(r);
  return (int32_t)(b % (unsigned)(count + 1)); /* one past the last: unknown */
}

static adnn_dtype dtype_val(reader *r) {
  uint8_t b = byte(r);
  if (b < 0xf0) return (b & 1) ? ADNN_DTYPE_F64 : ADNN_DTYPE_F32;
  return (adnn_dtype)(b - 0xf0); /* 0 and the non-float dtypes */
}

/* Strides for dims in layout chosen by the bytes. */
static void set_strides(reader *r, adnn_tensor_desc *t) {
  uint8_t layout = byte(r) % 5;
  /* Unsigned: huge dims wrap instead of overflowing; validation refuses them. */
  uint64_t s = 1;
  switch (layout) {
    case 0: /* packed row-major */
    case 1: /* padded: a gap after every dim */
      for (int i = t->rank - 1; i >= 0; i--) {
        t->strides[i] = (int64_t)s;
        s *= (uint64_t)(t->dims[i] > 0 ? t->dims[i] : 1) + (layout == 1);
      }
      break;
    case 2: /* reversed (channels-last-like) */
      for (int i = 0; i < t->rank; i++) {
        t->strides[i] = (int64_t)s;
        s *= (uint64_t)(t->dims[i] > 0 ? t->dims[i] : 1);
      }
      break;
    case 3: /* broadcast-like: some strides 0 (overlapping) */
      for (int i = t->rank - 1; i >= 0; i--) {
        t->strides[i] = (byte(r) & 1) ? 0 : (int64_t)s;
        s *= (uint64_t)(t->dims[i] > 0 ? t->dims[i] : 1);
      }
      break;
    default:
      for (int i = 0; i < t->rank; i++) t->strides[i] = size_val(r);
      break;
  }
}

/* A tensor of rank `rank` (or any rank when the bytes say so). */
static void tensor_val(reader *r, adnn_tensor_desc *t, int rank, adnn_dtype dtype) {
  memset(t, 0, sizeof *t);
  t->dtype = dtype;
  uint8_t b = byte(r);
  t->rank = b == 0xff ? (int32_t)(uint32_t)raw64(r) : (b < 0xe0 ? rank : b % 10);
  int n = t->rank >= 0 && t->rank <= ADNN_MAX_RANK ? t->rank : ADNN_MAX_RANK;
  for (int i = 0; i < n; i++) {
    int64_t d = size_val(r);
    t->dims[i] = d == 0 && (byte(r) & 3) ? 1 : d; /* empty tensors, but not too often */
  }
  int saved = t->rank;
  t->rank = n;
  set_strides(r, t);
  t->rank = saved;
}

/* Packed y of the given dims. */
static void packed(adnn_tensor_desc *t, adnn_dtype dtype, int rank, const int64_t *dims) {
  memset(t, 0, sizeof *t);
  if (adnn_tensor_desc_init(t, dtype, rank, dims) != ADNN_STATUS_SUCCESS) {
    t->dtype = dtype;
    t->rank = rank;
    for (int i = 0; i < rank && i < ADNN_MAX_RANK; i++) t->dims[i] = dims[i];
  }
}

/* Perturbs y when the bytes say so: a dim off by one, or other strides. */
static void perturb(reader *r, adnn_tensor_desc *y) {
  uint8_t b = byte(r);
  if (b < 0xe0 || y->rank <= 0 || y->rank > ADNN_MAX_RANK) return;
  if (b & 1) y->dims[b % y->rank] = shifted(y->dims[b % y->rank], 1);
  else set_strides(r, y);
}

static void activation_val(reader *r, adnn_activation *a) {
  a->kind = (adnn_activation_kind)enum_val(r, 12);
  a->alpha = double_val(r);
  a->beta = double_val(r);
}

/* ---- one op: descriptor, plan, execution -------------------------------------- */

/* The most execute inputs of any op (attention backward has 8). */
#define MAX_INPUTS 8
/* Execute only plans whose buffers stay small, to keep every input fast. */
#define MAX_EXEC_BYTES ((size_t)1 << 20)

typedef struct exec_args {
  size_t n_inputs;
  size_t in_bytes[MAX_INPUTS];
  size_t out_bytes;
  int64_t elements; /* the most elements of any tensor (zero strides: > bytes) */
  /* conv2d and matmul: index + 1 of the weight input, packed with
   * adnn_plan_pack_weights before the execution when the plan takes
   * prepacked weights; 0 for the other ops. */
  int prepacked_input;
} exec_args;

static adnn_context *ctx;

static int64_t max_elements;

static size_t span(const adnn_tensor_desc *t) {
  int64_t count = 0;
  if (adnn_tensor_desc_element_count(t, &count) != ADNN_STATUS_SUCCESS) count = INT64_MAX;
  if (count > max_elements) max_elements = count;
  size_t bytes = 0;
  if (adnn_tensor_desc_span_bytes(t, &bytes) != ADNN_STATUS_SUCCESS) return SIZE_MAX;
  return bytes;
}

static size_t vector_bytes(adnn_dtype dtype, int64_t n) {
  size_t es = adnn_dtype_size(dtype);
  if (n < 0 || es == 0 || (uint64_t)n > SIZE_MAX / es) return SIZE_MAX;
  return (size_t)n * es;
}

/* A conv2d descriptor from the bytes: the forward op's, and the one the
 * backward descriptors point to. */
static void conv2d_desc_val(reader *r, adnn_conv2d_desc *dp) {
  adnn_conv2d_desc d;
  adnn_conv2d_desc_init(&d);
  adnn_dtype dt = dtype_val(r);
  tensor_val(r, &d.x, 4, dt);
  tensor_val(r, &d.w, 4, byte(r) < 0xf0 ? dt : dtype_val(r));
  d.has_bias = byte(r) & 1;
  if (d.has_bias) {
    int64_t k = d.w.dims[0];
    packed(&d.bias, dt, 1, &k);
  }
  d.stride_h = shifted(param_val(r), 3);
  d.stride_w = shifted(param_val(r), 3);
  d.pad_top = param_val(r);
  d.pad_bottom = param_val(r);
  d.pad_left = param_val(r);
  d.pad_right = param_val(r);
  d.dilation_h = shifted(param_val(r), 3);
  d.dilation_w = shifted(param_val(r), 3);
  d.groups = size_val(r);
  activation_val(r, &d.activation);
  d.algorithm = (adnn_conv2d_algorithm)enum_val(r, 7);
  int64_t ydims[4] = {1, 1, 1, 1};
  (void)adnn_conv2d_output_dims(&d, ydims);
  packed(&d.y, dt, 4, ydims);
  perturb(r, &d.y);
  *dp = d;
}

static adnn_status fuzz_conv2d(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_conv2d_desc d;
  conv2d_desc_val(r, &d);
  e->n_inputs = d.has_bias ? 3 : 2;
  e->in_bytes[0] = span(&d.x);
  e->in_bytes[1] = span(&d.w);
  e->in_bytes[2] = span(&d.bias);
  e->out_bytes = span(&d.y);
  /* Read last, so that the corpus's earlier fields keep their meaning: 0, 1
   * (execute packs the weights first) or 2 (refused). */
  d.weights_prepacked = byte(r) % 3;
  e->prepacked_input = 2;
  return adnn_plan_create_conv2d(ctx, &d, plan);
}

/* The backward convolutions: a forward descriptor (sometimes none), beta and
 * an algorithm. Backward weights with a bias has two outputs, which
 * adnn_plan_execute refuses; that refusal is exercised too. */
static adnn_status fuzz_conv2d_backward_data(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_conv2d_desc f;
  conv2d_desc_val(r, &f);
  adnn_conv2d_backward_data_desc d;
  adnn_conv2d_backward_data_desc_init(&d);
  d.forward = byte(r) < 0xf8 ? &f : NULL;
  d.beta = byte(r) & 1 ? 1.0 : 0.0;
  d.algorithm = (adnn_conv2d_algorithm)enum_val(r, 7);
  e->n_inputs = 2;
  e->in_bytes[0] = span(&f.y);
  e->in_bytes[1] = span(&f.w);
  e->out_bytes = span(&f.x);
  return adnn_plan_create_conv2d_backward_data(ctx, &d, plan);
}

static adnn_status fuzz_conv2d_backward_weights(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_conv2d_desc f;
  conv2d_desc_val(r, &f);
  adnn_conv2d_backward_weights_desc d;
  adnn_conv2d_backward_weights_desc_init(&d);
  d.forward = byte(r) < 0xf8 ? &f : NULL;
  d.beta = byte(r) & 1 ? 1.0 : 0.0;
  d.algorithm = (adnn_conv2d_algorithm)enum_val(r, 7);
  e->n_inputs = 2;
  e->in_bytes[0] = span(&f.x);
  e->in_bytes[1] = span(&f.y);
  e->out_bytes = span(&f.w);
  return adnn_plan_create_conv2d_backward_weights(ctx, &d, plan);
}

static adnn_status fuzz_pool2d(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_pool2d_desc d;
  adnn_pool2d_desc_init(&d);
  adnn_dtype dt = dtype_val(r);
  tensor_val(r, &d.x, 4, dt);
  d.kind = (adnn_pool_kind)enum_val(r, 3);
  d.kernel_h = shifted(param_val(r), 2);
  d.kernel_w = shifted(param_val(r), 2);
  d.stride_h = shifted(param_val(r), 2);
  d.stride_w = shifted(param_val(r), 2);
  d.pad_top = param_val(r);
  d.pad_bottom = param_val(r);
  d.pad_left = param_val(r);
  d.pad_right = param_val(r);
  d.ceil_mode = byte(r) & 1;
  int64_t ydims[4] = {1, 1, 1, 1};
  (void)adnn_pool2d_output_dims(&d, ydims);
  packed(&d.y, dt, 4, ydims);
  perturb(r, &d.y);
  e->n_inputs = 1;
  e->in_bytes[0] = span(&d.x);
  e->out_bytes = span(&d.y);
  return adnn_plan_create_pool2d(ctx, &d, plan);
}

/* y of x's dims: packed, or x itself (in place) when the bytes say so. */
static void same_as_x(reader *r, const adnn_tensor_desc *x, adnn_tensor_desc *y) {
  if (byte(r) & 1) *y = *x;
  else packed(y, x->dtype, x->rank >= 0 && x->rank <= ADNN_MAX_RANK ? x->rank : 1, x->dims);
  perturb(r, y);
}

static adnn_status fuzz_activation(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_activation_desc d;
  adnn_activation_desc_init(&d);
  tensor_val(r, &d.x, byte(r) % 5, dtype_val(r));
  activation_val(r, &d.activation);
  same_as_x(r, &d.x, &d.y);
  e->n_inputs = 1;
  e->in_bytes[0] = span(&d.x);
  e->out_bytes = span(&d.y);
  return adnn_plan_create_activation(ctx, &d, plan);
}

static adnn_status fuzz_softmax(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_softmax_desc d;
  adnn_softmax_desc_init(&d);
  tensor_val(r, &d.x, byte(r) % 5, dtype_val(r));
  d.axis = (int32_t)param_val(r);
  d.log = byte(r) & 1;
  same_as_x(r, &d.x, &d.y);
  e->n_inputs = 1;
  e->in_bytes[0] = span(&d.x);
  e->out_bytes = span(&d.y);
  return adnn_plan_create_softmax(ctx, &d, plan);
}

static adnn_status fuzz_batchnorm(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_batchnorm_desc d;
  adnn_batchnorm_desc_init(&d);
  tensor_val(r, &d.x, 2 + byte(r) % 3, dtype_val(r));
  d.epsilon = double_val(r);
  activation_val(r, &d.activation);
  same_as_x(r, &d.x, &d.y);
  e->n_inputs = 5;
  e->in_bytes[0] = span(&d.x);
  for (int i = 1; i < 5; i++) e->in_bytes[i] = vector_bytes(d.x.dtype, d.x.dims[1]);
  e->out_bytes = span(&d.y);
  return adnn_plan_create_batchnorm(ctx, &d, plan);
}

static adnn_status fuzz_norm(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_norm_desc d;
  adnn_norm_desc_init(&d);
  tensor_val(r, &d.x, 1 + byte(r) % 4, dtype_val(r));
  d.kind = (adnn_norm_kind)enum_val(r, 2);
  d.norm_dims = (int32_t)shifted(param_val(r), 2);
  d.epsilon = double_val(r);
  d.has_gain = byte(r) & 1;
  d.has_bias = byte(r) & 1;
  same_as_x(r, &d.x, &d.y);
  int64_t dsize = 1;
  for (int64_t i = (int64_t)d.x.rank - d.norm_dims; i >= 0 && i < d.x.rank && i < ADNN_MAX_RANK;
       i++) {
    if (d.x.dims[i] < 0 || (d.x.dims[i] > 0 && dsize > INT64_MAX / d.x.dims[i])) {
      dsize = -1;
      break;
    }
    dsize *= d.x.dims[i];
  }
  e->n_inputs = 1 + (size_t)(d.has_gain != 0) + (size_t)(d.has_bias != 0);
  e->in_bytes[0] = span(&d.x);
  e->in_bytes[1] = e->in_bytes[2] = vector_bytes(d.x.dtype, dsize);
  e->out_bytes = span(&d.y);
  return adnn_plan_create_norm(ctx, &d, plan);
}

/* The training ops below have several outputs: execute() runs them through
 * adnn_plan_execute, which refuses them with a message, so the fuzzing
 * covers their validation (the forward descriptor they point to included). */
static adnn_status fuzz_batchnorm_training(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_batchnorm_desc f;
  adnn_batchnorm_desc_init(&f);
  tensor_val(r, &f.x, 2 + byte(r) % 3, dtype_val(r));
  f.epsilon = double_val(r);
  if (byte(r) < 0x20) activation_val(r, &f.activation);
  same_as_x(r, &f.x, &f.y);
  adnn_batchnorm_training_desc d;
  adnn_batchnorm_training_desc_init(&d);
  d.forward = byte(r) < 0x08 ? NULL : &f;
  d.momentum = byte(r) < 0x80 ? 0.1 : double_val(r);
  e->n_inputs = 3;
  e->in_bytes[0] = span(&f.x);
  for (int i = 1; i < 3; i++) e->in_bytes[i] = vector_bytes(f.x.dtype, f.x.dims[1]);
  e->out_bytes = span(&f.y);
  return adnn_plan_create_batchnorm_training(ctx, &d, plan);
}

static adnn_status fuzz_batchnorm_backward(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_batchnorm_desc f;
  adnn_batchnorm_desc_init(&f);
  tensor_val(r, &f.x, 2 + byte(r) % 3, dtype_val(r));
  f.epsilon = double_val(r);
  same_as_x(r, &f.x, &f.y);
  adnn_batchnorm_backward_desc d;
  adnn_batchnorm_backward_desc_init(&d);
  d.forward = byte(r) < 0x08 ? NULL : &f;
  e->n_inputs = 5;
  e->in_bytes[0] = span(&f.x);
  e->in_bytes[1] = span(&f.y);
  for (int i = 2; i < 5; i++) e->in_bytes[i] = vector_bytes(f.x.dtype, f.x.dims[1]);
  e->out_bytes = span(&f.x);
  return adnn_plan_create_batchnorm_backward(ctx, &d, plan);
}

static adnn_status fuzz_norm_backward(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_norm_desc f;
  adnn_norm_desc_init(&f);
  tensor_val(r, &f.x, 1 + byte(r) % 4, dtype_val(r));
  f.kind = (adnn_norm_kind)enum_val(r, 2);
  f.norm_dims = (int32_t)shifted(param_val(r), 2);
  f.epsilon = double_val(r);
  f.has_gain = byte(r) & 1;
  f.has_bias = byte(r) & 1;
  same_as_x(r, &f.x, &f.y);
  adnn_norm_backward_desc d;
  adnn_norm_backward_desc_init(&d);
  d.forward = byte(r) < 0x08 ? NULL : &f;
  e->n_inputs = 2;
  e->in_bytes[0] = span(&f.x);
  e->in_bytes[1] = span(&f.y);
  e->out_bytes = span(&f.x);
  return adnn_plan_create_norm_backward(ctx, &d, plan);
}

static adnn_status fuzz_binary(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_binary_desc d;
  adnn_binary_desc_init(&d);
  adnn_dtype dt = dtype_val(r);
  tensor_val(r, &d.a, byte(r) % 5, dt);
  tensor_val(r, &d.b, byte(r) % 5, byte(r) < 0xf0 ? dt : dtype_val(r));
  d.op = (adnn_binary_op)enum_val(r, 6);
  d.alpha = double_val(r);
  d.beta = double_val(r);
  /* The broadcast shape, when the ranks are sane. */
  int ra = d.a.rank, rb = d.b.rank;
  int64_t dims[ADNN_MAX_RANK] = {0};
  int ry = ra > rb ? ra : rb;
  if (ra >= 0 && rb >= 0 && ry <= ADNN_MAX_RANK) {
    for (int i = 0; i < ry; i++) {
      int64_t da = i < ry - ra ? 1 : d.a.dims[i - (ry - ra)];
      int64_t db = i < ry - rb ? 1 : d.b.dims[i - (ry - rb)];
      dims[i] = da == 1 ? db : da;
    }
  } else {
    ry = 1;
  }
  uint8_t alias = byte(r) % 4;
  if (alias == 1) d.y = d.a;
  else if (alias == 2) d.y = d.b;
  else packed(&d.y, dt, ry, dims);
  perturb(r, &d.y);
  e->n_inputs = 2;
  e->in_bytes[0] = span(&d.a);
  e->in_bytes[1] = span(&d.b);
  e->out_bytes = span(&d.y);
  return adnn_plan_create_binary(ctx, &d, plan);
}

static adnn_status fuzz_reduce(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_reduce_desc d;
  adnn_reduce_desc_init(&d);
  tensor_val(r, &d.x, byte(r) % 6, dtype_val(r));
  d.kind = (adnn_reduce_kind)enum_val(r, 4);
  uint8_t b = byte(r);
  d.axes = b == 0xff ? (uint32_t)raw64(r) : b & 0x3f;
  d.keep_dims = byte(r) & 1;
  int64_t dims[ADNN_MAX_RANK] = {0};
  int ry = 0;
  for (int i = 0; i < d.x.rank && i < ADNN_MAX_RANK; i++) {
    if (d.axes & (1u << i)) {
      if (d.keep_dims) dims[ry++] = 1;
    } else {
      dims[ry++] = d.x.dims[i];
    }
  }
  packed(&d.y, d.x.dtype, ry, dims);
  perturb(r, &d.y);
  e->n_inputs = 1;
  e->in_bytes[0] = span(&d.x);
  e->out_bytes = span(&d.y);
  return adnn_plan_create_reduce(ctx, &d, plan);
}

/* The backward passes: a forward descriptor built as above (its plan is
 * not created), the gradients in the forward tensors' layouts. */
static adnn_status fuzz_pool2d_backward(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_pool2d_desc f;
  adnn_pool2d_desc_init(&f);
  adnn_dtype dt = dtype_val(r);
  tensor_val(r, &f.x, 4, dt);
  f.kind = (adnn_pool_kind)enum_val(r, 3);
  f.kernel_h = shifted(param_val(r), 2);
  f.kernel_w = shifted(param_val(r), 2);
  f.stride_h = shifted(param_val(r), 2);
  f.stride_w = shifted(param_val(r), 2);
  f.pad_top = param_val(r);
  f.pad_bottom = param_val(r);
  f.pad_left = param_val(r);
  f.pad_right = param_val(r);
  f.ceil_mode = byte(r) & 1;
  int64_t ydims[4] = {1, 1, 1, 1};
  (void)adnn_pool2d_output_dims(&f, ydims);
  packed(&f.y, dt, 4, ydims);
  perturb(r, &f.y);
  adnn_pool2d_backward_desc d;
  adnn_pool2d_backward_desc_init(&d);
  d.forward = byte(r) == 0xff ? NULL : &f;
  e->n_inputs = 3;
  e->in_bytes[0] = span(&f.x);
  e->in_bytes[1] = e->in_bytes[2] = span(&f.y);
  e->out_bytes = span(&f.x);
  return adnn_plan_create_pool2d_backward(ctx, &d, plan);
}

static adnn_status fuzz_activation_backward(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_activation_desc f;
  adnn_activation_desc_init(&f);
  tensor_val(r, &f.x, byte(r) % 5, dtype_val(r));
  activation_val(r, &f.activation);
  same_as_x(r, &f.x, &f.y);
  adnn_activation_backward_desc d;
  adnn_activation_backward_desc_init(&d);
  d.forward = &f;
  e->n_inputs = 2;
  e->in_bytes[0] = span(&f.x);
  e->in_bytes[1] = span(&f.y);
  e->out_bytes = span(&f.x);
  return adnn_plan_create_activation_backward(ctx, &d, plan);
}

static adnn_status fuzz_softmax_backward(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_softmax_desc f;
  adnn_softmax_desc_init(&f);
  tensor_val(r, &f.x, byte(r) % 5, dtype_val(r));
  f.axis = (int32_t)param_val(r);
  f.log = byte(r) & 1;
  same_as_x(r, &f.x, &f.y);
  adnn_softmax_backward_desc d;
  adnn_softmax_backward_desc_init(&d);
  d.forward = &f;
  e->n_inputs = 2;
  e->in_bytes[0] = e->in_bytes[1] = span(&f.y);
  e->out_bytes = span(&f.x);
  return adnn_plan_create_softmax_backward(ctx, &d, plan);
}

/* logits [N, C], labels [N] (I32, or another dtype when the bytes say so),
 * the loss of the reduction's shape. The byte pattern makes most labels out
 * of range (NaN), some 0 or -1. */
static void xent_desc(reader *r, adnn_softmax_cross_entropy_desc *d, exec_args *e) {
  adnn_softmax_cross_entropy_desc_init(d);
  tensor_val(r, &d->logits, 2, dtype_val(r));
  const int64_t n = d->logits.rank >= 1 && d->logits.rank <= ADNN_MAX_RANK ? d->logits.dims[0] : 1;
  tensor_val(r, &d->labels, 1, byte(r) < 0xf0 ? ADNN_DTYPE_I32 : dtype_val(r));
  if (d->labels.rank == 1 && byte(r) < 0xe0) d->labels.dims[0] = n;
  d->reduction = (adnn_loss_reduction)enum_val(r, 3);
  d->ignore_index = byte(r) < 0xe0 ? -100 : param_val(r);
  if (d->reduction == ADNN_LOSS_REDUCTION_NONE) packed(&d->loss, d->logits.dtype, 1, &n);
  else packed(&d->loss, d->logits.dtype, 0, NULL);
  perturb(r, &d->loss);
  e->in_bytes[0] = span(&d->logits);
  e->in_bytes[1] = span(&d->labels);
  e->out_bytes = span(&d->loss);
}

static adnn_status fuzz_softmax_cross_entropy(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_softmax_cross_entropy_desc d;
  xent_desc(r, &d, e);
  e->n_inputs = 2;
  return adnn_plan_create_softmax_cross_entropy(ctx, &d, plan);
}

static adnn_status fuzz_softmax_cross_entropy_backward(reader *r, adnn_plan **plan,
                                                       exec_args *e) {
  adnn_softmax_cross_entropy_desc f;
  xent_desc(r, &f, e);
  adnn_softmax_cross_entropy_backward_desc d;
  adnn_softmax_cross_entropy_backward_desc_init(&d);
  d.forward = byte(r) < 0xf8 ? &f : NULL;
  /* Too small, never larger than the struct (the caller vouches for the rest). */
  if (byte(r) >= 0xf8) f.struct_size = (size_t)((uint64_t)size_val(r) % (sizeof f + 1));
  /* inputs {logits, labels, dloss (the loss's layout)}, output dlogits. */
  e->in_bytes[2] = e->out_bytes;
  e->out_bytes = e->in_bytes[0];
  e->n_inputs = 3;
  return adnn_plan_create_softmax_cross_entropy_backward(ctx, &d, plan);
}

/* Any number of tensors and hyperparameters; only a step with one input and
 * one output (SGD without momentum on one tensor) is executed, since the
 * runner passes one output. */
static adnn_status fuzz_optimizer(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_optimizer_desc d;
  adnn_optimizer_desc_init(&d);
  d.kind = (adnn_optimizer_kind)enum_val(r, 3);
  d.dtype = dtype_val(r);
  uint8_t b = byte(r);
  d.tensor_count = b == 0xff ? (size_t)raw64(r) : (size_t)(b % 4);
  int64_t sizes[4];
  for (int i = 0; i < 4; i++) sizes[i] = size_val(r);
  d.sizes = byte(r) < 0xf0 && d.tensor_count <= 4 ? sizes : NULL;
  d.lr = double_val(r);
  d.weight_decay = double_val(r);
  d.momentum = byte(r) & 1 ? double_val(r) : 0.0;
  d.dampening = byte(r) & 1 ? double_val(r) : 0.0;
  d.nesterov = byte(r) & 1;
  if (byte(r) & 1) d.beta1 = double_val(r);
  if (byte(r) & 1) d.beta2 = double_val(r);
  if (byte(r) & 1) d.epsilon = double_val(r);
  if ((byte(r) & 7) == 7) d.model_dtype = dtype_val(r);
  const int one = d.tensor_count == 1 && d.sizes != NULL && d.kind == ADNN_OPTIMIZER_SGD &&
                  d.momentum == 0.0 && d.model_dtype == 0;
  e->n_inputs = 1;
  e->in_bytes[0] = one ? vector_bytes(d.dtype, sizes[0]) : SIZE_MAX;
  e->out_bytes = e->in_bytes[0];
  adnn_status st = adnn_plan_create_optimizer(ctx, &d, plan);
  if (st == ADNN_STATUS_SUCCESS && (byte(r) & 1))
    (void)adnn_plan_set_optimizer_step(*plan, double_val(r), param_val(r));
  return st;
}

/* Loss scaling: any kind, dtype, tensor count and sizes. Never executed:
 * its outputs are the tensors and found_inf, at least two, and the runner
 * passes one. */
static adnn_status fuzz_loss_scale(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_loss_scale_desc d;
  adnn_loss_scale_desc_init(&d);
  d.kind = (adnn_loss_scale_kind)enum_val(r, 2);
  d.dtype = dtype_val(r);
  uint8_t b = byte(r);
  d.tensor_count = b == 0xff ? (size_t)raw64(r) : (size_t)(b % 4);
  int64_t sizes[4];
  for (int i = 0; i < 4; i++) sizes[i] = size_val(r);
  d.sizes = byte(r) < 0xf0 && d.tensor_count <= 4 ? sizes : NULL;
  e->n_inputs = 1;
  e->in_bytes[0] = SIZE_MAX;
  e->out_bytes = SIZE_MAX;
  return adnn_plan_create_loss_scale(ctx, &d, plan);
}

/* matmul: a and b of ranks 0..5 (2..4 are valid), y usually a @ b's shape,
 * optional bias and residual (sometimes y itself), random scales and
 * activation. */
static adnn_status fuzz_matmul(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_matmul_desc d;
  adnn_matmul_desc_init(&d);
  adnn_dtype dt = dtype_val(r);
  tensor_val(r, &d.a, byte(r) % 6, dt);
  tensor_val(r, &d.b, byte(r) % 6, byte(r) < 0xf0 ? dt : dtype_val(r));
  int64_t dims[ADNN_MAX_RANK] = {0};
  int ry = d.a.rank;
  if (ry >= 2 && ry <= ADNN_MAX_RANK && d.b.rank >= 1 && d.b.rank <= ADNN_MAX_RANK) {
    for (int i = 0; i < ry; i++) dims[i] = d.a.dims[i];
    dims[ry - 1] = d.b.dims[d.b.rank - 1];
  } else {
    ry = 2;
    dims[0] = dims[1] = 1;
  }
  packed(&d.y, dt, ry, dims);
  perturb(r, &d.y);
  size_t n = 2;
  e->in_bytes[0] = span(&d.a);
  e->in_bytes[1] = span(&d.b);
  if (byte(r) & 1) {
    d.has_bias = 1;
    tensor_val(r, &d.bias, byte(r) % 3, dt);
    e->in_bytes[n++] = span(&d.bias);
  }
  const uint8_t res = byte(r) % 3;
  if (res) {
    d.has_residual = 1;
    if (res == 1) d.residual = d.y;
    else packed(&d.residual, dt, ry, dims);
    d.residual_scale = double_val(r);
    e->in_bytes[n++] = span(&d.residual);
  }
  d.alpha = double_val(r);
  d.activation.kind = (adnn_activation_kind)enum_val(r, 12);
  d.activation.alpha = double_val(r);
  d.activation.beta = double_val(r);
  e->n_inputs = n;
  e->out_bytes = span(&d.y);
  d.weights_prepacked = byte(r) % 3; /* last, as for conv2d */
  e->prepacked_input = 2;
  return adnn_plan_create_matmul(ctx, &d, plan);
}

/* Attention: q, k, v and o of rank 4 from the bytes (mostly consistent
 * sizes), an optional bias of rank 1..4, key lengths (I32 mostly) and lse.
 * The runner passes one output, so only plans without lse execute; the
 * fill pattern makes the key lengths huge (0x3f) or -1 (0xff): both are
 * clamped. */
static adnn_status fuzz_attention(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_attention_desc d;
  adnn_attention_desc_init(&d);
  const adnn_dtype dt = dtype_val(r);
  tensor_val(r, &d.q, 4, dt);
  tensor_val(r, &d.k, 4, byte(r) < 0xf0 ? dt : dtype_val(r));
  const int ok4 = d.q.rank == 4 && d.k.rank == 4;
  if (ok4 && byte(r) < 0xe0) d.k.dims[0] = d.q.dims[0], d.k.dims[3] = d.q.dims[3];
  tensor_val(r, &d.v, 4, dt);
  if (ok4 && d.v.rank == 4 && byte(r) < 0xe0)
    d.v.dims[0] = d.k.dims[0], d.v.dims[1] = d.k.dims[1], d.v.dims[2] = d.k.dims[2];
  if (ok4 && d.v.rank == 4) {
    const int64_t od[4] = {d.q.dims[0], d.q.dims[1], d.q.dims[2], d.v.dims[3]};
    packed(&d.o, dt, 4, od);
    const int64_t ld[3] = {d.q.dims[0], d.q.dims[1], d.q.dims[2]};
    packed(&d.lse, dt, 3, ld);
  } else {
    tensor_val(r, &d.o, 4, dt);
  }
  perturb(r, &d.o);
  d.causal = byte(r) & 1;
  d.has_lse = byte(r) < 0x40;
  d.scale = byte(r) < 0xe0 ? 0.0 : double_val(r);
  e->n_inputs = 3;
  e->in_bytes[0] = span(&d.q);
  e->in_bytes[1] = span(&d.k);
  e->in_bytes[2] = span(&d.v);
  if (byte(r) & 1) {
    d.has_bias = 1;
    tensor_val(r, &d.bias, 1 + byte(r) % 4, dt);
    e->in_bytes[e->n_inputs++] = span(&d.bias);
  }
  if (byte(r) & 1) {
    d.has_key_lengths = 1;
    tensor_val(r, &d.key_lengths, 1, byte(r) < 0xf0 ? ADNN_DTYPE_I32 : dtype_val(r));
    if (d.key_lengths.rank == 1 && ok4 && byte(r) < 0xe0) d.key_lengths.dims[0] = d.q.dims[0];
    e->in_bytes[e->n_inputs++] = span(&d.key_lengths);
  }
  e->out_bytes = span(&d.o);
  return adnn_plan_create_attention(ctx, &d, plan);
}

/* Attention backward: a forward descriptor built from the bytes like
 * fuzz_attention's (mostly with lse, sometimes NULL or without it). The
 * runner's single-output execution of a successful plan is refused (three
 * outputs), which exercises the count check; creation is the target. */
static adnn_status fuzz_attention_backward(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_attention_desc f;
  adnn_attention_desc_init(&f);
  const adnn_dtype dt = dtype_val(r);
  tensor_val(r, &f.q, 4, dt);
  tensor_val(r, &f.k, 4, byte(r) < 0xf0 ? dt : dtype_val(r));
  const int ok4 = f.q.rank == 4 && f.k.rank == 4;
  if (ok4 && byte(r) < 0xe0) f.k.dims[0] = f.q.dims[0], f.k.dims[3] = f.q.dims[3];
  tensor_val(r, &f.v, 4, dt);
  if (ok4 && f.v.rank == 4 && byte(r) < 0xe0)
    f.v.dims[0] = f.k.dims[0], f.v.dims[1] = f.k.dims[1], f.v.dims[2] = f.k.dims[2];
  if (ok4 && f.v.rank == 4) {
    const int64_t od[4] = {f.q.dims[0], f.q.dims[1], f.q.dims[2], f.v.dims[3]};
    packed(&f.o, dt, 4, od);
    const int64_t ld[3] = {f.q.dims[0], f.q.dims[1], f.q.dims[2]};
    packed(&f.lse, dt, 3, ld);
  } else {
    tensor_val(r, &f.o, 4, dt);
  }
  f.causal = byte(r) & 1;
  f.has_lse = byte(r) < 0xf0;
  f.scale = byte(r) < 0xe0 ? 0.0 : double_val(r);
  e->n_inputs = 6;
  e->in_bytes[0] = span(&f.q);
  e->in_bytes[1] = span(&f.k);
  e->in_bytes[2] = span(&f.v);
  e->in_bytes[3] = e->in_bytes[4] = span(&f.o);
  e->in_bytes[5] = span(&f.lse);
  if (byte(r) & 1) {
    f.has_bias = 1;
    tensor_val(r, &f.bias, 1 + byte(r) % 4, dt);
    e->in_bytes[e->n_inputs++] = span(&f.bias);
  }
  if (byte(r) & 1) {
    f.has_key_lengths = 1;
    tensor_val(r, &f.key_lengths, 1, byte(r) < 0xf0 ? ADNN_DTYPE_I32 : dtype_val(r));
    if (f.key_lengths.rank == 1 && ok4 && byte(r) < 0xe0) f.key_lengths.dims[0] = f.q.dims[0];
    e->in_bytes[e->n_inputs++] = span(&f.key_lengths);
  }
  e->out_bytes = span(&f.q);
  adnn_attention_backward_desc d;
  adnn_attention_backward_desc_init(&d);
  d.forward = byte(r) < 0x08 ? NULL : &f;
  return adnn_plan_create_attention_backward(ctx, &d, plan);
}

/* reorder: x of rank 0..8 and any of the seven dtypes (F16 to I32 included,
 * so unsupported pairs are tried), y usually x's dims in a perturbed layout
 * and a dtype of its own. */
static adnn_status fuzz_reorder(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_reorder_desc d;
  adnn_reorder_desc_init(&d);
  tensor_val(r, &d.x, byte(r) % 9, (adnn_dtype)(1 + byte(r) % 8));
  same_as_x(r, &d.x, &d.y);
  d.y.dtype = (adnn_dtype)(1 + byte(r) % 8);
  e->n_inputs = 1;
  e->in_bytes[0] = span(&d.x);
  e->out_bytes = span(&d.y);
  return adnn_plan_create_reorder(ctx, &d, plan);
}

/* quantize / dequantize: x of rank 0..8 and any dtype (so unsupported pairs
 * are tried), y usually x's dims, any axis (out of range too), scale and zero
 * point from the input (NaN, infinity, 0 and out-of-range values among them);
 * per channel the scales and zero points are two more inputs. */
static adnn_status fuzz_quant_common(reader *r, adnn_quantize_desc *d, exec_args *e) {
  tensor_val(r, &d->x, byte(r) % 9, (adnn_dtype)(1 + byte(r) % 8));
  same_as_x(r, &d->x, &d->y);
  d->y.dtype = (adnn_dtype)(1 + byte(r) % 8);
  d->axis = (int32_t)(byte(r) % 11) - 2;
  d->scale = (float)double_val(r);
  d->zero_point = (int32_t)param_val(r);
  e->n_inputs = 1;
  e->in_bytes[0] = span(&d->x);
  if (d->axis >= 0) {
    /* x's rank may be out of range (up to 9 and beyond), so the axis is
     * checked against ADNN_MAX_RANK too before it indexes dims. */
    const int64_t c =
        d->axis < d->x.rank && d->axis < ADNN_MAX_RANK ? d->x.dims[d->axis] : 1;
    e->in_bytes[e->n_inputs++] = (size_t)(c > 0 ? c : 1) * 4;
    e->in_bytes[e->n_inputs++] = (size_t)(c > 0 ? c : 1) * 4;
  }
  e->out_bytes = span(&d->y);
  return ADNN_STATUS_SUCCESS;
}

static adnn_status fuzz_quantize(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_quantize_desc d;
  adnn_quantize_desc_init(&d);
  fuzz_quant_common(r, &d, e);
  return adnn_plan_create_quantize(ctx, &d, plan);
}

static adnn_status fuzz_dequantize(reader *r, adnn_plan **plan, exec_args *e) {
  adnn_quantize_desc q;
  adnn_quantize_desc_init(&q);
  fuzz_quant_common(r, &q, e);
  adnn_dequantize_desc d;
  adnn_dequantize_desc_init(&d);
  d.x = q.x;
  d.y = q.y;
  d.axis = q.axis;
  d.scale = q.scale;
  d.zero_point = q.zero_point;
  return adnn_plan_create_dequantize(ctx, &d, plan);
}

/* One entry per row of the manifest: a row without its fuzz_<name> does not
 * compile. */
typedef adnn_status (*fuzz_fn)(reader *, adnn_plan **, exec_args *);
static const fuzz_fn fuzz_ops[] = {
#define FUZZ_OP_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags) fuzz_##name,
    ADNN_OP_LIST(FUZZ_OP_)
#undef FUZZ_OP_
};
#define N_OPS (sizeof fuzz_ops / sizeof fuzz_ops[0])

/* The byte pattern the buffers are filled with: 0x3f gives floats near 0.75
 * and doubles near 0.5; 0xff gives NaNs. */
static void fill(void *p, size_t bytes, uint8_t pattern) {
  if (p != NULL && bytes > 0) (void)adnn_memset(ctx, p, pattern, bytes);
}

static void execute(adnn_plan *plan, const exec_args *e, uint8_t pattern) {
  /* Zero strides make a tensor of many elements out of few bytes: bound the
   * work too. */
  if (e->elements > (int64_t)(MAX_EXEC_BYTES / 4)) return;
  size_t total = e->out_bytes;
  for (size_t i = 0; i < e->n_inputs; i++) {
    if (e->in_bytes[i] > MAX_EXEC_BYTES) return;
    total += e->in_bytes[i];
  }
  if (e->out_bytes > MAX_EXEC_BYTES || total > 4 * MAX_EXEC_BYTES) return;
  void *in[MAX_INPUTS] = {0};
  void *out = NULL;
  int ok = 1;
  /* A zero-byte tensor still needs a distinct non-NULL pointer: allocate 1. */
  for (size_t i = 0; i < e->n_inputs && ok; i++)
    ok = adnn_malloc(ctx, e->in_bytes[i] ? e->in_bytes[i] : 1, &in[i]) == ADNN_STATUS_SUCCESS;
  if (ok) ok = adnn_malloc(ctx, e->out_bytes ? e->out_bytes : 1, &out) == ADNN_STATUS_SUCCESS;
  if (ok) {
    for (size_t i = 0; i < e->n_inputs; i++) fill(in[i], e->in_bytes[i], pattern);
    fill(out, e->out_bytes, pattern);
    void *packed = NULL, *w = NULL;
    size_t packed_bytes = 0;
    const int wi = e->prepacked_input - 1;
    if (wi >= 0 && (size_t)wi < e->n_inputs &&
        adnn_plan_get_packed_weights_bytes(plan, &packed_bytes) == ADNN_STATUS_SUCCESS &&
        packed_bytes <= MAX_EXEC_BYTES &&
        adnn_malloc(ctx, packed_bytes, &packed) == ADNN_STATUS_SUCCESS) {
      (void)adnn_plan_pack_weights(plan, in[wi], packed, packed_bytes);
      w = in[wi];
      in[wi] = packed;
    }
    (void)adnn_plan_execute(plan, (const void *const *)in, e->n_inputs, out);
    (void)adnn_context_synchronize(ctx);
    if (packed != NULL) {
      in[wi] = w;
      (void)adnn_free(ctx, packed);
    }
  }
  for (size_t i = 0; i < e->n_inputs; i++)
    if (in[i] != NULL) (void)adnn_free(ctx, in[i]);
  if (out != NULL) (void)adnn_free(ctx, out);
}

static char cache_dir[] = "/tmp/adnn-fuzz-cache.XXXXXX";

static void remove_cache(void) { tmpdir_remove(cache_dir); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  /* The instrumented plugin built next to this program, unless the caller
   * chose; and a cache directory of our own, so that tuning never writes to
   * $HOME. */
  setenv("ADNN_PLUGIN_PATH", ADNN_FUZZ_PLUGIN_DIR, 0);
  if (getenv("ADNN_CACHE_DIR") == NULL && mkdtemp(cache_dir) != NULL) {
    setenv("ADNN_CACHE_DIR", cache_dir, 1);
    atexit(remove_cache);
  }
  adnn_status st = adnn_context_create("cpu", &ctx);
  if (st != ADNN_STATUS_SUCCESS) {
    fprintf(stderr, "fuzz-plan: no cpu context (ADNN_PLUGIN_PATH=%s): %s\n",
            getenv("ADNN_PLUGIN_PATH"), adnn_last_error());
    abort();
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  reader r = {data, size};
  size_t op = byte(&r) % N_OPS;
  uint8_t pattern = byte(&r);
  exec_args e;
  memset(&e, 0, sizeof e);
  adnn_plan *plan = NULL;
  max_elements = 0;
  adnn_status st = fuzz_ops[op](&r, &plan, &e);
  e.elements = max_elements;
  if (st == ADNN_STATUS_SUCCESS) {
    if (plan == NULL) {
      fprintf(stderr, "fuzz-plan: op %zu: SUCCESS without a plan\n", op);
      abort();
    }
    execute(plan, &e, pattern);
    adnn_plan_destroy(plan);
  } else if (adnn_last_error() == NULL || adnn_last_error()[0] == '\0') {
    fprintf(stderr, "fuzz-plan: op %zu: %s without a message\n", op, adnn_status_name(st));
    abort();
  }
  return 0;
}
