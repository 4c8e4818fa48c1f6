/*
 * CPU plugin plans: the plan slots of the plugin ABI for every op, driven by
 * one table generated from the op manifest (ADNN_OP_LIST).
 *
 * Each op's entry is its ordered implementation list (kernels/cpu/impl_list.h):
 * the conv2d algorithms, or an op's vectorized kernels, then the reference
 * loops. The slots below know no op and no implementation by name:
 *   plan_create      copies the normalized problem and asks every
 *                    implementation of the list whether it supports it (and
 *                    the dtype) and whether the plugin's own choice should
 *                    take it; it chooses nothing;
 *   plan_candidates  lists the plugin's own choice first, then every other
 *                    implementation that supports the problem in list order
 *                    (the reference last, marked slow); a candidate's id is
 *                    its list index + 1;
 *   plan_select      takes a candidate, or with 0 the plugin's own choice: the
 *                    implementation the problem forces (conv2d's algorithm),
 *                    else the first one of the list that supports the problem
 *                    and is preferred; it reshapes it (everything run needs,
 *                    into the plan's state) and allocates its 64-byte aligned
 *                    workspace, once per select;
 *   plan_execute     runs it, and allocates nothing.
 *
 * Determinism: every CPU implementation reports itself deterministic. Our
 * kernels split work into fixed chunks whose reductions do not depend on
 * which thread runs them, and OpenBLAS's SGEMM partitions by its thread count;
 * so results are bit-identical run to run for a fixed thread count
 * (ADNN_NUM_THREADS / OpenBLAS's setting) and OpenBLAS core type. A change of
 * either may change the last bits.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_plugin.h"

/* ---- The op table ------------------------------------------------------- */

/* The most implementations one op may list: plans keep one bit per
 * implementation. */
#define MAX_IMPLS 32

/* What the plan slots need to know about one op. */
typedef struct cpu_op {
  const char *name;                   /* "conv2d", for messages */
  size_t problem_size;                /* sizeof(adnn_plugin_<name>) */
  const adnn_cpu_impl *const *impls;  /* in order of preference */
  int32_t count;
  adnn_cpu_forced_fn forced;          /* NULL: the op's problem forces nothing */
} cpu_op;

/* Each op's list, from impl_list.h; an op of the manifest without one is a
 * compile error here. */
#define CPU_IMPL_ADDRESS_(op, impl) &adnn_cpu_##op##_##impl,
#define CPU_IMPL_LIST_(NAME, op, value, v1_end, in_list, out_list, dtypes, flags)            \
  static const adnn_cpu_impl *const op##_impls[] = {ADNN_CPU_##NAME##_IMPLS(CPU_IMPL_ADDRESS_)}; \
  _Static_assert(sizeof op##_impls / sizeof op##_impls[0] <= MAX_IMPLS,                      \
                 "too many implementations of " #op);
ADNN_OP_LIST(CPU_IMPL_LIST_)
#undef CPU_IMPL_LIST_
#undef CPU_IMPL_ADDRESS_

static const cpu_op cpu_ops[ADNN_PLUGIN_OP_LIMIT_] = {
#define CPU_OP_(NAME, op, value, v1_end, in_list, out_list, dtypes, flags)                    \
  [ADNN_PLUGIN_OP_##NAME] = {#op, sizeof(adnn_plugin_##op), op##_impls,                      \
                             (int32_t)(sizeof op##_impls / sizeof op##_impls[0]),            \
                             ADNN_CPU_##NAME##_FORCED},
    ADNN_OP_LIST(CPU_OP_)
#undef CPU_OP_
};

/* Storage for any op's problem. */
typedef union cpu_problem {
#define CPU_PROBLEM_MEMBER_(NAME, op, value, v1_end, in_list, out_list, dtypes, flags) \
  adnn_plugin_##op op;
  ADNN_OP_LIST(CPU_PROBLEM_MEMBER_)
#undef CPU_PROBLEM_MEMBER_
} cpu_problem;

/* ---- Plans -------------------------------------------------------------- */

struct adnn_plugin_plan {
  const cpu_op *op;
  adnn_dtype dtype;
  cpu_problem problem;  /* the plugin's copy, read by every implementation */
  /* The core's op, which outlives the plan: re-read before every run when
   * the core changes the problem between executions (ADNN_CPU_LIVE_PROBLEM). */
  const adnn_plugin_op *core_op;
  int live_problem;
  uint32_t supported;   /* bit i: impls[i] runs the dtype and supports the problem */
  uint32_t preferred;   /* bit i: ... and the plugin's own choice may take it */
  const char *forced;   /* the name of the implementation the problem forces, or NULL */
  int32_t forced_index; /* its index in the list, or -1 */
  /* The selected implementation (NULL until a select succeeds) and what its
   * reshape made. */
  const adnn_cpu_impl *impl;
  void *state;
  void *workspace;
  size_t workspace_bytes;
};

/* "adnn_plan_create_<op>", the public function messages name. */
#define CPU_FUNC "adnn_plan_create_%s"

/* "only F32 is implemented", "only F32 and F64 are implemented": the dtypes
 * of a mask of ADNN_OP_DTYPE bits, in upper case. */
static void dtypes_why(uint32_t mask, char *why, size_t why_size) {
  char names[64] = "";
  size_t used = 0;
  int count = 0, total = 0;
  for (int d = 0; d < 32; d++) total += (int)(mask >> d & 1u);
  for (int d = 0; d < 32 && used < sizeof names; d++) {
    if (!(mask >> d & 1u)) continue;
    const char *sep = count == 0 ? "" : count == total - 1 ? " and " : ", ";
    int w = snprintf(names + used, sizeof names - used, "%s", sep);
    if (w > 0) used += (size_t)w;
    for (const char *c = adnn_plugin_dtype_name((adnn_dtype)d); *c && used + 1 < sizeof names;
         c++)
      names[used++] = (char)(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
    names[used] = '\0';
    count++;
  }
  snprintf(why, why_size, "only %s %s implemented", names, total == 1 ? "is" : "are");
}

/* Whether impls[i] can run the plan's problem; when it cannot, why. */
static int impl_supports(const adnn_plugin_plan *p, int32_t i, char *why, size_t why_size) {
  const adnn_cpu_impl *impl = p->op->impls[i];
  if (!(impl->dtypes & ADNN_OP_DTYPE(p->dtype))) {
    dtypes_why(impl->dtypes, why, why_size);
    return 0;
  }
  if (impl->supports == NULL) return 1;
  return impl->supports(&p->problem, &adnn_cpu__env, why, why_size);
}

adnn_status adnn_cpu__plan_create(adnn_plugin_context *ctx, const adnn_plugin_op *op,
                                  adnn_plugin_plan **out) {
  (void)ctx;
  if ((unsigned)op->kind >= ADNN_PLUGIN_OP_LIMIT_ || cpu_ops[op->kind].impls == NULL)
    return adnn_cpu__host->fail(ADNN_STATUS_NOT_SUPPORTED, "cpu backend: unknown op kind %d",
                                (int)op->kind);
  adnn_plugin_plan *p = calloc(1, sizeof *p);
  if (p == NULL) return adnn_cpu__host->fail(ADNN_STATUS_OUT_OF_MEMORY, "out of host memory");
  p->op = &cpu_ops[op->kind];
  p->dtype = op->dtype;
  adnn_plugin_op_problem(op, &p->problem, p->op->problem_size);
  p->core_op = op;
  p->live_problem = ADNN_CPU_LIVE_PROBLEM(op->kind);
  char why[160] = "";
  for (int32_t i = 0; i < p->op->count; i++) {
    const adnn_cpu_impl *impl = p->op->impls[i];
    if (!impl_supports(p, i, why, sizeof why)) continue;
    p->supported |= 1u << i;
    if (impl->preferred == NULL || impl->preferred(&p->problem, &adnn_cpu__env))
      p->preferred |= 1u << i;
  }
  if (p->supported == 0) {
    const char *name = p->op->name;
    free(p);
    return adnn_cpu__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                CPU_FUNC ": the cpu backend cannot run this problem: %s", name,
                                why);
  }
  p->forced = p->op->forced ? p->op->forced(&p->problem) : NULL;
  p->forced_index = -1;
  for (int32_t i = 0; p->forced && i < p->op->count; i++)
    if (strcmp(p->op->impls[i]->name, p->forced) == 0) p->forced_index = i;
  *out = p;
  return ADNN_STATUS_SUCCESS;
}

/* The plugin's own choice: the forced implementation when it can run the
 * problem, else the first of the list that supports it and is preferred;
 * -1 when there is none (a forced one that cannot run). */
static int32_t own_choice(const adnn_plugin_plan *p) {
  if (p->forced) {
    const int32_t i = p->forced_index;
    return i >= 0 && (p->supported >> i & 1u) ? i : -1;
  }
  for (int32_t i = 0; i < p->op->count; i++)
    if (p->preferred >> i & 1u) return i;
  /* Every list ends with an implementation without a preferred() gate; this
   * keeps the choice defined should one not. */
  for (int32_t i = 0; i < p->op->count; i++)
    if (p->supported >> i & 1u) return i;
  return -1;
}

adnn_status adnn_cpu__plan_candidates(adnn_plugin_plan *p, adnn_plugin_candidate *out,
                                      int32_t max, int32_t *count) {
  const int32_t first = own_choice(p);
  int32_t n = 0;
  for (int32_t k = -1; k < p->op->count; k++) {
    /* k = -1 is the plugin's own choice; then the rest in list order. A
     * forced implementation is listed alone. */
    const int32_t i = k < 0 ? first : k;
    if (i < 0 || (k >= 0 && (i == first || p->forced))) continue;
    if (!(p->supported >> i & 1u)) continue;
    const adnn_cpu_impl *impl = p->op->impls[i];
    if (n < max) {
      size_t ws = 0;
      if (impl->reshape) {
        void *state = impl->state_size ? calloc(1, impl->state_size) : NULL;
        if (impl->state_size && state == NULL)
          return adnn_cpu__host->fail(ADNN_STATUS_OUT_OF_MEMORY, "out of host memory");
        impl->reshape(&p->problem, &adnn_cpu__env, state, &ws);
        free(state);
      }
      memset(&out[n], 0, sizeof out[n]);
      out[n].id = i + 1;
      snprintf(out[n].name, sizeof out[n].name, "%s", impl->name);
      out[n].workspace_bytes = ws;
      out[n].deterministic = (impl->flags & ADNN_CPU_IMPL_DETERMINISTIC) != 0;
      out[n].slow = (impl->flags & ADNN_CPU_IMPL_SLOW) != 0 ||
                    (impl->slow_for != NULL && impl->slow_for(&p->problem, &adnn_cpu__env));
    }
    n++;
  }
  *count = n;
  return ADNN_STATUS_SUCCESS;
}

/* Forgets the selected implementation, its state and its workspace. */
static void unselect(adnn_plugin_plan *p) {
  free(p->state);
  free(p->workspace);
  p->impl = NULL;
  p->state = NULL;
  p->workspace = NULL;
  p->workspace_bytes = 0;
}

adnn_status adnn_cpu__plan_select(adnn_plugin_plan *p, int32_t candidate) {
  unselect(p);
  const char *op = p->op->name;
  char why[160] = "";
  int32_t i;
  if (candidate == 0) {
    i = own_choice(p);
    if (i < 0 && p->forced_index < 0) {
      /* A forced algorithm this backend does not have at all. */
      char names[256] = "";
      size_t used = 0;
      for (int32_t k = 0; k < p->op->count && used < sizeof names; k++)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", k ? ", " : "",
                                 p->op->impls[k]->name);
      return adnn_cpu__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                  CPU_FUNC ": the cpu backend has no %s algorithm (its %s "
                                  "algorithms are %s)", op, p->forced, op, names);
    }
    if (i < 0) {
      impl_supports(p, p->forced_index, why, sizeof why);
      return adnn_cpu__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                  CPU_FUNC ": algorithm %s cannot run this problem on the cpu "
                                  "backend: %s", op, p->forced, why);
    }
  } else {
    i = candidate - 1;
    if (i < 0 || i >= p->op->count)
      return adnn_cpu__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                  CPU_FUNC ": the cpu backend has no candidate %d", op,
                                  (int)candidate);
    if (p->forced && i != p->forced_index)
      return adnn_cpu__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                  CPU_FUNC ": the problem forces algorithm %s, not %s", op,
                                  p->forced, p->op->impls[i]->name);
    if (!(p->supported >> i & 1u)) {
      impl_supports(p, i, why, sizeof why);
      return adnn_cpu__host->fail(ADNN_STATUS_NOT_SUPPORTED,
                                  CPU_FUNC ": algorithm %s cannot run this problem on the cpu "
                                  "backend: %s", op, p->op->impls[i]->name, why);
    }
  }
  const adnn_cpu_impl *impl = p->op->impls[i];
  if (impl->state_size) {
    p->state = calloc(1, impl->state_size);
    if (p->state == NULL)
      return adnn_cpu__host->fail(ADNN_STATUS_OUT_OF_MEMORY, "out of host memory");
  }
  size_t ws = 0;
  if (impl->reshape) impl->reshape(&p->problem, &adnn_cpu__env, p->state, &ws);
  if (ws > 0) {
    /* The workspace is allocated here, once per select; execution never
     * allocates. 64 bytes: a cache line, and an AVX-512 register. */
    if (posix_memalign(&p->workspace, 64, ws) != 0) {
      p->workspace = NULL;
      unselect(p);
      return adnn_cpu__host->fail(ADNN_STATUS_OUT_OF_MEMORY,
                                  "cannot allocate a %zu-byte workspace for the plan", ws);
    }
  }
  p->workspace_bytes = ws;
  p->impl = impl;
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_cpu__plan_execute(adnn_plugin_plan *p, const void *const *inputs,
                                   void *const *outputs) {
  if (p->impl == NULL)
    return adnn_cpu__host->fail(ADNN_STATUS_INTERNAL_ERROR,
                                "cpu backend: the plan has no algorithm selected");
  if (p->live_problem) adnn_plugin_op_problem(p->core_op, &p->problem, p->op->problem_size);
  p->impl->run(&p->problem, p->state, inputs, outputs, p->workspace);
  return ADNN_STATUS_SUCCESS;
}

void adnn_cpu__plan_destroy(adnn_plugin_plan *p) {
  if (p == NULL) return;
  unselect(p);
  free(p);
}

void adnn_cpu__plan_describe(const adnn_plugin_plan *p, const char **algorithm,
                             size_t *workspace_bytes) {
  *algorithm = p->impl ? p->impl->name : NULL;
  *workspace_bytes = p->workspace_bytes;
}

/* ---- Weight prepacking (ABI 2.4, doc/prepacking.md) ----------------------- */

/* The core asks only for plans created with weights_prepacked = 1; this
 * answers a plugin caller that does otherwise. */
static adnn_status fail_not_prepacked(const adnn_plugin_plan *p) {
  return adnn_cpu__host->fail(ADNN_STATUS_BAD_PARAM,
                              "cpu backend: the %s plan does not take prepacked weights",
                              p->op->name);
}

/* An implementation's packed form when it has one (packed_weights_size > 0),
 * else the weights copied as they are, in the descriptor's layout: so every
 * implementation runs a weights_prepacked plan, those without a packed form
 * reading the copy exactly as they read w. */
static size_t impl_packed_bytes(const adnn_plugin_plan *p) {
  if (p->impl->packed_weights_size && p->impl->pack_weights) {
    size_t bytes = p->impl->packed_weights_size(&p->problem, p->state);
    if (bytes > 0) return bytes;
  }
  return 0;
}

adnn_status adnn_cpu__plan_packed_weights_bytes(adnn_plugin_plan *p, size_t *bytes) {
  const adnn_tensor_desc *w = adnn_plugin_prepacked_weights(p->core_op->kind, &p->problem);
  if (w == NULL)
    return fail_not_prepacked(p);
  if (p->impl == NULL)
    return adnn_cpu__host->fail(ADNN_STATUS_INTERNAL_ERROR,
                                "cpu backend: the plan has no algorithm selected");
  const size_t own = impl_packed_bytes(p);
  *bytes = own > 0 ? own : adnn_plugin_tensor_span_bytes(w);
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_cpu__plan_pack_weights(adnn_plugin_plan *p, const void *w, void *packed) {
  const adnn_tensor_desc *wd = adnn_plugin_prepacked_weights(p->core_op->kind, &p->problem);
  if (wd == NULL)
    return fail_not_prepacked(p);
  if (p->impl == NULL)
    return adnn_cpu__host->fail(ADNN_STATUS_INTERNAL_ERROR,
                                "cpu backend: the plan has no algorithm selected");
  if (impl_packed_bytes(p) > 0)
    p->impl->pack_weights(&p->problem, p->state, w, packed);
  else
    memcpy(packed, w, adnn_plugin_tensor_span_bytes(wd));
  return ADNN_STATUS_SUCCESS;
}

