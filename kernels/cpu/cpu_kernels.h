/*
 * The CPU kernels behind the DNN plans of the CPU plugin: one interface for
 * every implementation of every op, and the helpers the implementations share.
 *
 * An implementation (adnn_cpu_impl) is one way to run one op: a conv2d
 * algorithm (im2col_gemm, winograd_f2x3, ...), an op's vectorized kernels
 * (cpu_simd), or the reference loops (reference). Its life in a plan:
 *
 *   supports(problem, env)      can it run this problem at all (and if not, why)?
 *   preferred(problem, env)     should the plugin's own choice take it?
 *   reshape(problem, env, state, &workspace_bytes)
 *                               everything run needs, computed once when the
 *                               plan selects it: layouts and code paths, the
 *                               instruction set's function tables, coalesced
 *                               loops, tiling and blocking, into `state`
 *                               (state_size bytes, kept in the plan), and the
 *                               workspace it needs;
 *   run(problem, state, inputs, outputs, workspace)
 *                               the computation, without planning or
 *                               allocating.
 *
 * Every problem is the normalized adnn_plugin_<op> struct of adnn/plugin.h,
 * already validated by the core (shapes agree, sizes >= 1, binary operands
 * broadcast to y's rank with stride 0, softmax axis resolved), and inputs and
 * outputs are in the order the op manifest documents. Each op's
 * implementations are listed in impl_list.h in the order of the plugin's
 * preference (see doc/cpu.md).
 *
 * Kernels never read the environment or probe the CPU: what they may use
 * (instruction set, thread count, CPU features) arrives as adnn_cpu_env,
 * which the plugin fills once.
 */
#ifndef ADNN_CPU_KERNELS_H
#define ADNN_CPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <adnn/plugin.h>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_parallel.h"
#include "kernels/cpu/simd_isa.h"

/** What the kernels may know about the machine, chosen once by the plugin. */
typedef struct adnn_cpu_env {
  /** ADNN_CPU_ISA_*: the most capable instruction set that the CPU and the
   *  OS support (CPUID and XCR0), capped by ADNN_CPU_SIMD. */
  int isa;
  /** The thread pool's size (>= 1): the number of per-thread workspace
   *  slices a kernel needs (adnn_cpu_parallel_for's `thread` is below it). */
  int threads;
  /** The CPU's features, for kernels that need more than the level. */
  const adnn_cpu_features *features;
} adnn_cpu_env;

/* Flags of an implementation. */
/** A catch-all far slower than the others (the reference loops): listed last
 *  and marked slow for the tuner. */
#define ADNN_CPU_IMPL_SLOW 0x1u
/** Bit-identical results run to run (for a fixed thread count and OpenBLAS
 *  core type): work is split into fixed chunks whose reductions do not
 *  depend on the thread that runs them. */
#define ADNN_CPU_IMPL_DETERMINISTIC 0x2u

/** One implementation of one op (see the top of this file). */
typedef struct adnn_cpu_impl {
  /** Its stable name: what adnn_plan_algorithm() reports and the performance
   *  database stores; for conv2d the algorithm's name (adnn_conv2d_algorithm_name). */
  const char *name;
  uint32_t flags;  /**< ADNN_CPU_IMPL_* */
  uint32_t dtypes; /**< the dtypes it runs, ADNN_OP_DTYPE bits; the plugin checks them */
  /** 1 when it can run the problem; otherwise 0 with a short reason in why
   *  ("needs a 3x3 filter with stride 1"). NULL: any problem of its dtypes. */
  int (*supports)(const void *problem, const adnn_cpu_env *env, char *why, size_t why_size);
  /** Optional heuristic gate: 1 when the plugin's own choice should take this
   *  implementation for a problem it supports. NULL: always. */
  int (*preferred)(const void *problem, const adnn_cpu_env *env);
  /** The size of its per-plan state (0 for none). */
  size_t state_size;
  /** Fills the state (state_size zeroed bytes; NULL when the size is 0) and
   *  the workspace bytes run needs, for a problem it supports. NULL: no
   *  state and no workspace. */
  void (*reshape)(const void *problem, const adnn_cpu_env *env, void *state,
                  size_t *workspace_bytes);
  /** Runs the op: inputs and outputs in the manifest's order; the workspace is
   *  64-byte aligned and as large as reshape asked (NULL when 0 bytes). */
  void (*run)(const void *problem, const void *state, const void *const *inputs,
              void *const *outputs, void *workspace);
  /** Optional weight prepacking (conv2d's w, matmul's b), for plans whose
   *  problem has weights_prepacked = 1: the bytes of this implementation's
   *  packed weight form for the state reshape filled (0, or NULL slots: it has
   *  no packed form, and the plugin's packed form is then w copied in its
   *  descriptor layout). */
  size_t (*packed_weights_size)(const void *problem, const void *state);
  /** Writes the packed form of w (laid out as the problem's descriptor says)
   *  into `packed` (packed_weights_size bytes, 64-byte aligned). When the
   *  problem has weights_prepacked = 1, run receives that buffer in place of
   *  w, and must not redo the work pack_weights did: this is how an inference
   *  user pays a weight reorder once instead of at every execute. Without the
   *  flag, run reorders w itself (into its workspace) inside the measured time. */
  void (*pack_weights)(const void *problem, const void *state, const void *w, void *packed);
  /** Optional: 1 when this implementation, though it supports the problem, is
   *  a last resort for it because another implementation of the op is made for
   *  that kind of problem and is far faster (a generic convolution algorithm on
   *  a depthwise problem: 4x to 180x slower, measured in doc/tuning.md). The
   *  tuner then treats it as ADNN_CPU_IMPL_SLOW for this problem: measured only
   *  in exhaustive mode or when nothing else ran, so one hopeless warm-up run
   *  does not spend the tuning budget. It can still be forced. NULL: never. */
  int (*slow_for)(const void *problem, const adnn_cpu_env *env);
} adnn_cpu_impl;

/** The name of the implementation a problem forces, or NULL when the plugin
 *  may choose (the forced-algorithm accessor of an op, see impl_list.h). */
typedef const char *(*adnn_cpu_forced_fn)(const void *problem);

/* ---- Activation, shared by the activation op, batch norm and every conv
 * epilogue ---------------------------------------------------------------- */

/** An activation bound to one instruction set's vector code (activation.c),
 *  so that a fused activation computes exactly what the activation op
 *  computes. Filled at reshape by adnn_cpu_act_init; held by value in a
 *  kernel's state. */
typedef struct adnn_cpu_act {
  adnn_activation act;
  /** y[i] = act((x[i] - c) * (a + alo) + b) for i < n; affine = 0 skips the
   *  arithmetic so that -0 and NaN payloads pass a plain activation
   *  untouched. x may equal y. */
  void (*affine)(const adnn_activation *act, const float *x, float *y, size_t n, float c, float a,
                 float alo, float b, int affine);
  /** y[i] = act((x[i] - c[i]) * (a[i] + alo[i]) + b[i]); c, a, alo or b NULL
   *  mean 0, 1, 0 and 0 (alo is used only with a). x may equal y. */
  void (*affine_vec)(const adnn_activation *act, const float *x, float *y, size_t n,
                     const float *c, const float *a, const float *alo, const float *b);
} adnn_cpu_act;

/** Binds `act` to the vector code of instruction set `isa` (ADNN_CPU_ISA_*). */
void adnn_cpu_act_init(adnn_cpu_act *out, const adnn_activation *act, int isa);

/** Fused shift, scale and activation on contiguous floats:
 *  y[i] = act((x[i] - c) * (a + alo) + b). Batch norm passes the mean as c so
 *  that x - mean is formed before scaling (no cancellation between a * x and
 *  a folded shift when the mean is large), and its scale as a float pair
 *  a + alo (the double scale split in two) so the product is as accurate as
 *  in double when FMAs are available. The identity transform (0, 1, 0, 0)
 *  applies the activation alone. */
static inline void adnn_cpu_act_affine_f32(const adnn_cpu_act *e, const float *x, float *y,
                                           size_t n, float c, float a, float alo, float b) {
  const int affine = !(c == 0.0f && a == 1.0f && alo == 0.0f && b == 0.0f);
  e->affine(&e->act, x, y, n, c, a, alo, b, affine);
}

/** The per-element form of adnn_cpu_act_affine_f32 (vectors c, a, alo and
 *  b; NULL means 0, 1, 0 and 0). */
static inline void adnn_cpu_act_affine_vec_f32(const adnn_cpu_act *e, const float *x, float *y,
                                               size_t n, const float *c, const float *a,
                                               const float *alo, const float *b) {
  if (c == NULL && a == NULL && b == NULL)
    e->affine(&e->act, x, y, n, 0.0f, 1.0f, 0.0f, 0.0f, 0);
  else
    e->affine_vec(&e->act, x, y, n, c, a, alo, b);
}

/** The conv epilogue on n contiguous floats in place: v = act(v + bias).
 *  Every conv algorithm runs it on the rows it has just written, while they
 *  are in cache. */
static inline void adnn_cpu_epilogue_f32(const adnn_cpu_act *e, float *v, size_t n, float bias) {
  adnn_cpu_act_affine_f32(e, v, v, n, 0.0f, 1.0f, 0.0f, bias);
}

/** The conv epilogue with a per-element bias (bias[i] for v[i]), for NHWC
 *  rows whose elements are the output channels. */
static inline void adnn_cpu_epilogue_vec_f32(const adnn_cpu_act *e, float *v, size_t n,
                                             const float *bias) {
  adnn_cpu_act_affine_vec_f32(e, v, v, n, NULL, NULL, NULL, bias);
}

/* ---- Layouts --------------------------------------------------------------- */

/** Whether t is packed NCHW ([N,C,H,W] dims, row-major strides); the stride of
 *  a dim of size 1 never matters. */
int adnn_cpu_is_nchw(const adnn_tensor_desc *t);
/** Whether t is packed NHWC (the same dims with strides {H*W*C, 1, W*C, C}). */
int adnn_cpu_is_nhwc(const adnn_tensor_desc *t);

/* ---- The implementations --------------------------------------------------- */

#include "kernels/cpu/impl_list.h"

/* Every op of the manifest needs its list in impl_list.h; without one the
 * build stops here, with "ADNN_CPU_<NAME>_FORCED undeclared" as its first
 * error. */
#define ADNN_CPU_CHECK_LIST_(NAME, name, value, v1_end, in_list, out_list, dtypes, flags) \
  typedef char adnn_cpu_list_check_##name[sizeof((adnn_cpu_forced_fn)(ADNN_CPU_##NAME##_FORCED))];
ADNN_OP_LIST(ADNN_CPU_CHECK_LIST_)
#undef ADNN_CPU_CHECK_LIST_

/* adnn_cpu_<op>_<impl> for every row of every op's list in impl_list.h; the
 * reference implementations are generated in reference.c, the others are in
 * kernels/cpu/<op>[-<algo>].c. */
#define ADNN_CPU_DECLARE_IMPL_(op, impl) extern const adnn_cpu_impl adnn_cpu_##op##_##impl;
#define ADNN_CPU_DECLARE_IMPLS_(NAME, name, value, v1_end, in_list, out_list, dtypes, flags) \
  ADNN_CPU_##NAME##_IMPLS(ADNN_CPU_DECLARE_IMPL_)
ADNN_OP_LIST(ADNN_CPU_DECLARE_IMPLS_)
#undef ADNN_CPU_DECLARE_IMPLS_
#undef ADNN_CPU_DECLARE_IMPL_

#endif
