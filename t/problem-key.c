/*
 * The performance database's problem keys (core/problem_key.c, key format 2):
 * the exact text of a forward conv2d key, that the backward directions are
 * keys of their own, that the tuning options which decide which candidates
 * may win (workspace limit, determinism) are part of every key, and that a
 * buffer too small gives no key rather than a truncated one.
 */
#include "config.h"

#include <string.h>

#include "core/tuner.h"
#include "t/tap.h"

static adnn_tensor_desc packed4(int64_t a, int64_t b, int64_t c, int64_t d) {
  adnn_tensor_desc t;
  const int64_t dims[4] = {a, b, c, d};
  adnn_tensor_desc_init(&t, ADNN_DTYPE_F32, 4, dims);
  return t;
}

/* The ResNet-50 3x3 of doc (core/problem_key.c's example). */
static void example(adnn_plugin_conv2d *p) {
  memset(p, 0, sizeof *p);
  p->struct_size = sizeof *p;
  p->x = packed4(1, 64, 56, 56);
  p->w = packed4(64, 64, 3, 3);
  p->y = packed4(1, 64, 56, 56);
  p->N = 1, p->C = 64, p->H = 56, p->W = 56, p->K = 64, p->R = 3, p->S = 3, p->P = 56, p->Q = 56;
  p->groups = 1, p->Cg = 64, p->Kg = 64;
  p->stride_h = p->stride_w = 1;
  p->pad_top = p->pad_bottom = p->pad_left = p->pad_right = 1;
  p->dilation_h = p->dilation_w = 1;
  p->activation.kind = ADNN_ACTIVATION_RELU;
}

static adnn_plugin_op op_of(adnn_plugin_op_kind kind, const void *problem, size_t size) {
  adnn_plugin_op op;
  memset(&op, 0, sizeof op);
  op.struct_size = sizeof op;
  op.kind = kind;
  op.dtype = ADNN_DTYPE_F32;
  op.problem = problem;
  op.problem_size = (uint32_t)size;
  op.workspace_limit = (uint64_t)256 << 20;
  op.deterministic = 0;
  return op;
}

int main(void) {
  char k1[1024], k2[1024], k3[1024], k4[1024];
  adnn_plugin_conv2d fwd;
  example(&fwd);
  adnn_plugin_op op = op_of(ADNN_PLUGIN_OP_CONV2D, &fwd, sizeof fwd);
  size_t n = adnn__problem_key(&op, k1, sizeof k1);
  is_str(k1,
         "conv2d f32 x=1x64x56x56:200704,3136,56,1 w=64x64x3x3:576,9,3,1 "
         "y=1x64x56x56:200704,3136,56,1 s=1,1 p=1,1,1,1 d=1,1 g=1 nobias act=relu "
         "ws=268435456 det=0",
         "the forward key of format 2 (the example of core/problem_key.c)");
  is_int((long long)n, (long long)strlen(k1), "the length returned is the key's");

  /* The tuning options are part of the key. */
  op.deterministic = 1;
  adnn__problem_key(&op, k2, sizeof k2);
  ok(strcmp(k1, k2) != 0 && strstr(k2, " det=1") != NULL,
     "deterministic mode is another key (%s)", strstr(k2, " ws="));
  op.deterministic = 0;
  op.workspace_limit = 1 << 20;
  adnn__problem_key(&op, k2, sizeof k2);
  ok(strcmp(k1, k2) != 0 && strstr(k2, " ws=1048576 det=0") != NULL,
     "another workspace limit is another key (%s)", strstr(k2, " ws="));
  op.workspace_limit = (uint64_t)256 << 20;
  fwd.weights_prepacked = 1;
  adnn__problem_key(&op, k2, sizeof k2);
  fwd.weights_prepacked = 0;
  ok(strcmp(k1, k2) != 0 && strstr(k2, "act=relu prepacked ws=") != NULL,
     "a prepacked conv2d (tuned without the weight reorder) is another key");

  /* Backward directions: keys of their own, differing from each other and
   * from the forward one. */
  adnn_plugin_conv2d_backward_data bd;
  memset(&bd, 0, sizeof bd);
  bd.struct_size = sizeof bd;
  bd.fwd = fwd;
  bd.fwd.activation.kind = ADNN_ACTIVATION_IDENTITY;
  adnn_plugin_conv2d_backward_weights bw;
  memset(&bw, 0, sizeof bw);
  bw.struct_size = sizeof bw;
  bw.fwd = bd.fwd;
  adnn_plugin_op opd = op_of(ADNN_PLUGIN_OP_CONV2D_BACKWARD_DATA, &bd, sizeof bd);
  adnn_plugin_op opw = op_of(ADNN_PLUGIN_OP_CONV2D_BACKWARD_WEIGHTS, &bw, sizeof bw);
  ok(adnn__problem_key(&opd, k3, sizeof k3) > 0 && adnn__problem_key(&opw, k4, sizeof k4) > 0,
     "both backward directions have keys");
  ok(strncmp(k3, "conv2d_bwd_d f32 ", 17) == 0 && strncmp(k4, "conv2d_bwd_w f32 ", 17) == 0,
     "the direction is the key's first word (%.13s, %.13s)", k3, k4);
  ok(strcmp(k1, k3) != 0 && strcmp(k1, k4) != 0 && strcmp(k3, k4) != 0,
     "forward, backward data and backward weights are three keys");
  ok(strstr(k3, " ws=268435456 det=0") != NULL && strstr(k4, " ws=268435456 det=0") != NULL,
     "the backward keys carry the tuning options too");
  opw.deterministic = 1;
  adnn__problem_key(&opw, k2, sizeof k2);
  ok(strcmp(k2, k4) != 0, "a backward key depends on determinism");
  bw.beta = 1.0;
  opw.deterministic = 0;
  adnn__problem_key(&opw, k2, sizeof k2);
  is_str(k2, k4, "beta is not part of the key (it changes no algorithm's applicability)");
  bw.fwd.has_bias = 1;
  const int64_t kd[1] = {64};
  adnn_tensor_desc_init(&bw.fwd.bias, ADNN_DTYPE_F32, 1, kd);
  adnn__problem_key(&opw, k2, sizeof k2);
  ok(strstr(k2, " bias=64:1 ") != NULL && strcmp(k2, k4) != 0,
     "a bias gradient is another backward-weights key");

  /* Too small a buffer: no key at all (never a truncated one). */
  char tiny[40];
  ok(adnn__problem_key(&op, tiny, sizeof tiny) == 0 && tiny[0] == '\0',
     "a buffer too small gives no key");
  char almost[1024];
  ok(adnn__problem_key(&op, almost, strlen(k1)) == 0 && almost[0] == '\0',
     "a buffer one byte short of the terminator gives no key");
  ok(adnn__problem_key(&op, almost, strlen(k1) + 1) == strlen(k1),
     "a buffer of exactly the key's size gives the key");

  /* matmul (tunable since the engine-vs-OpenBLAS candidates): a BERT-style
   * linear layer, then what changes the key and what does not. */
  adnn_plugin_matmul mm;
  memset(&mm, 0, sizeof mm);
  mm.struct_size = sizeof mm;
  {
    const int64_t ad[4] = {1, 1, 128, 768}, mbd[4] = {1, 1, 768, 3072}, yd[4] = {1, 1, 128, 3072},
                  cd[1] = {3072};
    adnn_tensor_desc_init(&mm.a, ADNN_DTYPE_F32, 4, ad);
    adnn_tensor_desc_init(&mm.b, ADNN_DTYPE_F32, 4, mbd);
    adnn_tensor_desc_init(&mm.y, ADNN_DTYPE_F32, 4, yd);
    adnn_tensor_desc_init(&mm.bias, ADNN_DTYPE_F32, 1, cd);
  }
  mm.batch0 = mm.batch1 = 1, mm.M = 128, mm.N = 3072, mm.K = 768;
  mm.alpha = 1.0, mm.residual_scale = 1.0, mm.has_bias = 1;
  mm.activation.kind = ADNN_ACTIVATION_GELU_TANH;
  adnn_plugin_op opm = op_of(ADNN_PLUGIN_OP_MATMUL, &mm, sizeof mm);
  adnn__problem_key(&opm, k2, sizeof k2);
  is_str(k2,
         "matmul f32 a=1x1x128x768:98304,98304,768,1 b=1x1x768x3072:2359296,2359296,3072,1 "
         "y=1x1x128x3072:393216,393216,3072,1 bias=3072:1 noresidual act=gelu_tanh "
         "ws=268435456 det=0",
         "the matmul key");
  mm.alpha = 0.5;
  adnn__problem_key(&opm, k3, sizeof k3);
  mm.has_residual = 1;
  mm.residual = mm.y;
  mm.residual_scale = 0.0;
  adnn__problem_key(&opm, k4, sizeof k4);
  ok(strcmp(k2, k3) == 0 && strcmp(k2, k4) == 0,
     "alpha and a residual scaled by 0 (never read) leave the matmul key as it was");
  mm.residual_scale = 1.0;
  adnn__problem_key(&opm, k3, sizeof k3);
  mm.b.strides[2] = 1, mm.b.strides[3] = 768; /* b transposed */
  adnn__problem_key(&opm, k4, sizeof k4);
  ok(strstr(k3, " residual=1x1x128x3072:") != NULL && strcmp(k2, k3) != 0 && strcmp(k3, k4) != 0,
     "a residual, and a transposed b, are other matmul keys");
  mm.weights_prepacked = 1;
  adnn__problem_key(&opm, k3, sizeof k3);
  mm.weights_prepacked = 0;
  ok(strstr(k3, " prepacked") != NULL && strcmp(k3, k4) != 0,
     "a prepacked matmul (tuned without the weight packing) is another key");

  /* Ops without a key format. */
  adnn_plugin_op act = op_of(ADNN_PLUGIN_OP_ACTIVATION, &fwd, sizeof fwd);
  ok(adnn__problem_key(&act, k2, sizeof k2) == 0 && k2[0] == '\0',
     "an op without a key format has no key");
  return tap_done();
}
