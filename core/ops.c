/*
 * The plan lifecycle of every DNN op (create, execute, destroy, queries),
 * generated from the op manifest (ADNN_OP_LIST in adnn/op_list.h): one generic
 * create path applies the struct_size rule to the caller's descriptor, runs
 * the op's validator (op_validate.c), which fills the plugin's normalized
 * problem, and hands the validated op to the tuner, which creates the
 * plugin's plan and selects its algorithm. Nothing here knows a particular op.
 * Descriptors are read by the struct_size rule (struct_size.c): programs
 * built against any earlier header keep working.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/loader.h"
#include "core/op_validate.h"
#include "core/tuner.h"
#include "core/verbose.h"

/* Every op's descriptor and problem, for storage of any of them. */
typedef union op_desc {
#define OP_DESC_MEMBER_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags) \
  adnn_##name##_desc name;
  ADNN_OP_LIST(OP_DESC_MEMBER_)
#undef OP_DESC_MEMBER_
} op_desc;

typedef union op_problem {
#define OP_PROBLEM_MEMBER_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags) \
  adnn_plugin_##name name;
  ADNN_OP_LIST(OP_PROBLEM_MEMBER_)
#undef OP_PROBLEM_MEMBER_
} op_problem;

/* What the lifecycle needs to know about an op, one entry per manifest row. */
typedef struct op_info {
  const char *name;     /* "conv2d" */
  const char *func;     /* "adnn_plan_create_conv2d" */
  const char *inputs;   /* the execute inputs, for messages */
  const char *outputs;  /* the outputs, for messages */
  size_t desc_size;     /* sizeof the descriptor in this library */
  size_t desc_min_size; /* the end of its first released layout */
  size_t problem_size;  /* sizeof the plugin problem in this library */
  unsigned dtypes;      /* ADNN_OP_DTYPE bits */
  unsigned flags;       /* ADNN_OP_* */
  void (*init)(op_desc *d);
  adnn_status (*validate)(const char *func, const op_desc *d, op_problem *p, adnn__op_io *io);
} op_info;

/* Typed adapters between the table's generic signatures and each op's own. */
#define OP_ADAPTERS_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags)             \
  static void init_##name(op_desc *d) { adnn_##name##_desc_init(&d->name); }                \
  static adnn_status validate_##name(const char *func, const op_desc *d, op_problem *p,    \
                                     adnn__op_io *io) {                                     \
    return adnn__##name##_validate(func, &d->name, &p->name, io);                           \
  }
ADNN_OP_LIST(OP_ADAPTERS_)
#undef OP_ADAPTERS_

static const op_info op_table[ADNN_PLUGIN_OP_LIMIT_] = {
#define OP_INFO_(NAME, op, value, v1_end, inputs_, outputs_, dtypes_, flags_)                    \
  [ADNN_PLUGIN_OP_##NAME] = {                                                                      \
      .name = #op,                                                                               \
      .func = "adnn_plan_create_" #op,                                                           \
      .inputs = inputs_,                                                                           \
      .outputs = outputs_,                                                                         \
      .desc_size = sizeof(adnn_##op##_desc),                                                     \
      .desc_min_size = offsetof(adnn_##op##_desc, v1_end) + sizeof(((adnn_##op##_desc *)0)->v1_end), \
      .problem_size = sizeof(adnn_plugin_##op),                                                  \
      .dtypes = dtypes_,                                                                           \
      .flags = flags_,                                                                             \
      .init = init_##op,                                                                         \
      .validate = validate_##op,                                                                 \
  },
    ADNN_OP_LIST(OP_INFO_)
#undef OP_INFO_
};

struct adnn_plan {
  /* First: the handle registry links the context's plans through it and
   * clears its ctx when the context is destroyed (core/handles.c). */
  adnn__plan_link link;
  const adnn_plugin *table; /* the context's plugin; outlives the context */
  const op_info *info;
  adnn_plugin_plan *pplan;
  /* What the plugin was given; the plugin may keep pointers to both. */
  adnn_plugin_op op;
  op_problem problem;
  adnn__op_io io;
  /* How the algorithm was chosen: the candidates and the reason. */
  adnn__tune_record tune;
  /* For ops with many tensors (the optimizer): room to sort every input
   * and output span at execution, so that the overlap check costs
   * O(n log n) rather than O(n^2) and allocates nothing. NULL otherwise. */
  struct exec_span *spans;
  /* A weights_prepacked plan: the span of the weights in the descriptor's
   * layout, which adnn_plan_pack_weights reads (io's span of that input is
   * the packed buffer's). */
  size_t weights_bytes;
};

/* One buffer of an execution, for the sorted overlap check. */
typedef struct exec_span {
  uintptr_t start, end;
  size_t index;
  int output;
} exec_span;

/* Up to this many tensors the pairwise overlap check is cheaper than
 * sorting. */
enum { PAIRWISE_OVERLAP_LIMIT = 32 };

/* ------------------------------------------------------------------------ */
/* Plan creation                                                             */
/* ------------------------------------------------------------------------ */

static adnn_status plan_create(adnn_plugin_op_kind kind, adnn_context *ctx, const void *desc,
                               adnn_plan **out) {
  const op_info *info = &op_table[kind];
  const char *func = info->func;
  adnn_status st = adnn__check_context(func, ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (desc == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: desc is NULL", func);
  if (out == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: plan is NULL", func);

  op_desc d;
  info->init(&d);
  char type[64], init[80];
  snprintf(type, sizeof type, "adnn_%s_desc", info->name);
  snprintf(init, sizeof init, "adnn_%s_desc_init", info->name);
  st = adnn__read_struct(func, type, init, desc, info->desc_min_size, info->desc_size, &d);
  if (st != ADNN_STATUS_SUCCESS) return st;

  const adnn_plugin *t = ctx->table;
  if (!ADNN_PLUGIN_HAS(t, plan_create))
    return adnn__fail(ADNN_STATUS_NOT_SUPPORTED, "%s: backend %s does not implement DNN "
                      "operations", func, t->name);

  adnn_plan *p = calloc(1, sizeof *p);
  if (p == NULL) return adnn__fail(ADNN_STATUS_OUT_OF_MEMORY, "%s: out of host memory", func);
  p->table = ctx->table;
  p->info = info;
  adnn__op_io_init(&p->io);
  p->io.dtypes = info->dtypes;
  st = info->validate(func, &d, &p->problem, &p->io);
  if (st != ADNN_STATUS_SUCCESS) {
    adnn__op_io_free(&p->io);
    free(p);
    return st;
  }
  /* Each problem starts with its uint32_t struct_size. */
  const uint32_t problem_size = (uint32_t)info->problem_size;
  memcpy(&p->problem, &problem_size, sizeof problem_size);

  p->op.struct_size = sizeof p->op;
  p->op.kind = kind;
  p->op.dtype = p->io.dtype;
  p->op.n_inputs = p->io.n_inputs;
  p->op.n_outputs = p->io.n_outputs;
  p->op.flags = ctx->flags;
  p->op.problem = &p->problem;
  p->op.problem_size = problem_size;
  p->op.workspace_limit = ctx->tune.workspace_limit;
  p->op.deterministic = ctx->tune.deterministic != 0;

  /* Problem fields appended after the plugin's header was written. */
  if (p->io.min_plugin_abi > t->abi_version) {
    const uint32_t need = p->io.min_plugin_abi, have = t->abi_version;
    const char *what = p->io.min_plugin_abi_what;
    adnn__op_io_free(&p->io);
    free(p);
    return adnn__fail(ADNN_STATUS_NOT_SUPPORTED, "%s: backend %s was built for plugin ABI "
                      "%u.%u, older than the %u.%u that %s needs; rebuild it against this "
                      "adnn's <adnn/plugin.h>", func, t->name, (unsigned)(have >> 16),
                      (unsigned)(have & 0xffffu), (unsigned)(need >> 16),
                      (unsigned)(need & 0xffffu), what);
  }

  /* A plan fed prepacked weights needs the plugin's packing slots; asked
   * before the tuner, which packs its scratch weights with them. */
  if (p->io.prepacked_input &&
      (!ADNN_PLUGIN_HAS(t, plan_packed_weights_bytes) || !ADNN_PLUGIN_HAS(t, plan_pack_weights))) {
    adnn__op_io_free(&p->io);
    free(p);
    return adnn__fail(ADNN_STATUS_NOT_SUPPORTED, "%s: backend %s cannot prepack weights "
                      "(weights_prepacked = 1 needs plugin ABI 2.4's plan_pack_weights)", func,
                      t->name);
  }

  /* The tuner creates the plugin plan and selects its algorithm (measuring
   * the candidates on scratch buffers when it must). */
  const int tunable = (info->flags & ADNN_OP_TUNABLE) != 0;
  const int verbose = adnn__verbose_level();
  const double t0 = verbose ? adnn__verbose_now_ms() : 0.0;
  st = adnn__tuner_plan_create(ctx, &p->op, p->io.input_bytes, p->io.output_bytes, p->io.forced,
                               tunable, &p->tune, &p->pplan);
  if (st != ADNN_STATUS_SUCCESS) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", adnn_last_error());
    adnn__tune_record_free(&p->tune);
    adnn__op_io_free(&p->io);
    free(p);
    /* Plugins usually name the function already; avoid saying it twice. */
    if (strncmp(msg, func, strlen(func)) == 0) return adnn__fail(st, "%s", msg);
    return adnn__fail(st, "%s: backend %s: %s", func, t->name, msg);
  }
  if (p->io.prepacked_input) {
    /* From now on the weight input is the packed buffer: its span, checked
     * at every execution, is the chosen algorithm's packed size. */
    size_t bytes = 0;
    st = t->plan_packed_weights_bytes(p->pplan, &bytes);
    if (st != ADNN_STATUS_SUCCESS) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", adnn_last_error());
      t->plan_destroy(p->pplan);
      adnn__tune_record_free(&p->tune);
      adnn__op_io_free(&p->io);
      free(p);
      return adnn__fail(st, "%s: backend %s: %s", func, t->name, msg);
    }
    p->weights_bytes = p->io.input_bytes[p->io.prepacked_input - 1];
    p->io.input_bytes[p->io.prepacked_input - 1] = bytes ? bytes : 1;
  }
  const size_t n_tensors = (size_t)p->io.n_inputs + (size_t)p->io.n_outputs;
  if (n_tensors > PAIRWISE_OVERLAP_LIMIT) {
    p->spans = calloc(n_tensors, sizeof *p->spans);
    if (p->spans == NULL) {
      t->plan_destroy(p->pplan);
      adnn__tune_record_free(&p->tune);
      adnn__op_io_free(&p->io);
      free(p);
      return adnn__fail(ADNN_STATUS_OUT_OF_MEMORY, "%s: out of host memory", func);
    }
  }
  const int added = adnn__handle_add_plan(p, ctx);
  if (added != 1) {
    /* A context destroyed meanwhile took its plugin state with it: the
     * plugin plan is left alone rather than destroyed against freed state. */
    if (added == 0) t->plan_destroy(p->pplan);
    adnn__tune_record_free(&p->tune);
    adnn__op_io_free(&p->io);
    free(p->spans);
    free(p);
    if (added < 0)
      return adnn__fail(ADNN_STATUS_BAD_PARAM_HANDLE, "%s: ctx %p was destroyed while the plan "
                        "was being created", func, (void *)ctx);
    return adnn__fail(ADNN_STATUS_OUT_OF_MEMORY, "%s: out of host memory for the handle registry",
                      func);
  }
  if (verbose)
    adnn__verbose_plan_created(ctx, &p->op, adnn_plan_get_algorithm(p), p->tune.reason,
                               adnn__verbose_now_ms() - t0);
  *out = p;
  return ADNN_STATUS_SUCCESS;
}

/* adnn_plan_create_<name>() for every op of the manifest. */
#define OP_CREATE_(NAME, name, value, v1_end, inputs, outputs, dtypes, flags)                \
  adnn_status adnn_plan_create_##name(adnn_context *ctx, const adnn_##name##_desc *desc,     \
                                      adnn_plan **plan) {                                    \
    return plan_create(ADNN_PLUGIN_OP_##NAME, ctx, desc, plan);                              \
  }
ADNN_OP_LIST(OP_CREATE_)
#undef OP_CREATE_

/* ------------------------------------------------------------------------ */
/* Output shapes and names                                                   */
/* ------------------------------------------------------------------------ */

const char *adnn_conv2d_algorithm_name(adnn_conv2d_algorithm algo) {
  return adnn_plugin_conv2d_algorithm_name(algo);
}

adnn_status adnn_conv2d_output_dims(const adnn_conv2d_desc *desc, int64_t dims[4]) {
  const char *func = "adnn_conv2d_output_dims";
  if (desc == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: desc is NULL", func);
  if (dims == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: dims is NULL", func);
  const op_info *info = &op_table[ADNN_PLUGIN_OP_CONV2D];
  op_desc d;
  info->init(&d);
  adnn_status st = adnn__read_struct(func, "adnn_conv2d_desc", "adnn_conv2d_desc_init", desc,
                                     info->desc_min_size, info->desc_size, &d);
  if (st != ADNN_STATUS_SUCCESS) return st;
  return adnn__conv2d_output_dims(func, &d.conv2d, dims);
}

adnn_status adnn_pool2d_output_dims(const adnn_pool2d_desc *desc, int64_t dims[4]) {
  const char *func = "adnn_pool2d_output_dims";
  if (desc == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: desc is NULL", func);
  if (dims == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: dims is NULL", func);
  const op_info *info = &op_table[ADNN_PLUGIN_OP_POOL2D];
  op_desc d;
  info->init(&d);
  adnn_status st = adnn__read_struct(func, "adnn_pool2d_desc", "adnn_pool2d_desc_init", desc,
                                     info->desc_min_size, info->desc_size, &d);
  if (st != ADNN_STATUS_SUCCESS) return st;
  return adnn__pool2d_output_dims(func, &d.pool2d, dims);
}

/* ------------------------------------------------------------------------ */
/* Execution                                                                 */
/* ------------------------------------------------------------------------ */

static int overlaps(const void *a, size_t na, const void *b, size_t nb) {
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return na > 0 && nb > 0 && x < y + nb && y < x + na;
}

static adnn_status orphan(const char *func, const adnn_plan *plan) {
  return adnn__fail(ADNN_STATUS_BAD_PARAM_HANDLE,
                    "%s: plan %p (%s) cannot be used: its context was destroyed; create the plan "
                    "again on a live context (adnn_plan_destroy still frees it)", func,
                    (const void *)plan, plan->info->name);
}

/* Whether output o overlaps another output or an input other than as the
 * op's documented in-place use; the failure names both. */
static adnn_status output_overlaps(const char *func, const adnn_plan *plan,
                                   const void *const *inputs, void *const *outputs, size_t o) {
  const size_t want = (size_t)plan->op.n_inputs, want_out = (size_t)plan->op.n_outputs;
  for (size_t q = 0; q < want_out; q++)
    if (q != o &&
        overlaps(outputs[o], plan->io.output_bytes[o], outputs[q], plan->io.output_bytes[q]))
      return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: outputs[%zu] and outputs[%zu] overlap; "
                        "every output needs memory of its own", func, o < q ? o : q, o < q ? q : o);
  for (size_t i = 0; i < want; i++) {
    if (!overlaps(inputs[i], plan->io.input_bytes[i], outputs[o], plan->io.output_bytes[o]))
      continue;
    if (o == 0 && inputs[i] == outputs[o] && i < 32 && (plan->io.inplace_inputs & (1u << i)))
      continue;
    if (want_out == 1)
      return adnn__fail(ADNN_STATUS_BAD_PARAM,
                        "%s: the output overlaps inputs[%zu]; this op runs in place only when "
                        "the output is exactly that input with the same layout", func, i);
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "%s: outputs[%zu] overlaps inputs[%zu]; only outputs[0] may be exactly "
                      "an input the op documents as allowed in place", func, o, i);
  }
  return ADNN_STATUS_SUCCESS;
}

static int span_cmp(const void *a, const void *b) {
  const exec_span *x = a, *y = b;
  return (x->start > y->start) - (x->start < y->start);
}

/* The checks every execution makes before the plugin runs, for both entry
 * points: counts, NULLs, every pointer inside memory of the plan's context
 * with its tensor's whole span, and no overlaps other than the in-place uses
 * the op allows. */
static adnn_status check_execute(const char *func, adnn_plan *plan, adnn_context *ctx,
                                 const void *const *inputs, size_t n_inputs,
                                 void *const *outputs, size_t n_outputs) {
  const size_t want = (size_t)plan->op.n_inputs, want_out = (size_t)plan->op.n_outputs;
  if (n_inputs != want)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: the %s plan takes %zu input(s) (%s), got %zu",
                      func, plan->info->name, want, plan->info->inputs, n_inputs);
  if (n_outputs != want_out)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: the %s plan has %zu output(s) (%s), got %zu%s",
                      func, plan->info->name, want_out, plan->info->outputs, n_outputs,
                      n_outputs == 1 ? "; run it with adnn_plan_execute_multi" : "");
  if (want > 0 && inputs == NULL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: inputs is NULL", func);
  for (size_t i = 0; i < want; i++)
    if (inputs[i] == NULL)
      return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: inputs[%zu] is NULL", func, i);
  for (size_t o = 0; o < want_out; o++)
    if (outputs[o] == NULL)
      return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, want_out == 1 && n_outputs == 1 &&
                        strcmp(func, "adnn_plan_execute") == 0 ? "%s: output is NULL"
                        : "%s: outputs[%zu] is NULL", func, o);
  /* Checked before the overlap tests, which assume that each span is the
   * buffer's. */
  adnn_status st;
  for (size_t i = 0; i < want; i++) {
    char name[32];
    snprintf(name, sizeof name, "inputs[%zu]", i);
    st = adnn__check_device_range(func, ctx, name, inputs[i], plan->io.input_bytes[i]);
    if (st != ADNN_STATUS_SUCCESS) return st;
  }
  for (size_t o = 0; o < want_out; o++) {
    char name[32];
    if (want_out == 1) snprintf(name, sizeof name, "output");
    else snprintf(name, sizeof name, "outputs[%zu]", o);
    st = adnn__check_device_range(func, ctx, name, outputs[o], plan->io.output_bytes[o]);
    if (st != ADNN_STATUS_SUCCESS) return st;
  }
  if (plan->spans == NULL) {
    for (size_t o = 0; o < want_out; o++) {
      st = output_overlaps(func, plan, inputs, outputs, o);
      if (st != ADNN_STATUS_SUCCESS) return st;
    }
    return ADNN_STATUS_SUCCESS;
  }
  /* Many tensors: sort the spans by start. In that order a span overlaps an
   * earlier one exactly when it starts before the furthest end so far, so
   * an output is checked when it starts before the furthest end of every
   * earlier span, and an input when it starts before the furthest end of
   * the earlier outputs (inputs may share memory with each other). Only then
   * is the tensor compared with the others, which names the culprit and lets
   * the documented in-place use through: a valid call costs O(n log n). */
  exec_span *sp = plan->spans;
  size_t n = 0;
  for (size_t i = 0; i < want; i++)
    if (plan->io.input_bytes[i] > 0)
      sp[n++] = (exec_span){(uintptr_t)inputs[i], (uintptr_t)inputs[i] + plan->io.input_bytes[i],
                            i, 0};
  for (size_t o = 0; o < want_out; o++)
    if (plan->io.output_bytes[o] > 0)
      sp[n++] = (exec_span){(uintptr_t)outputs[o],
                            (uintptr_t)outputs[o] + plan->io.output_bytes[o], o, 1};
  qsort(sp, n, sizeof *sp, span_cmp);
  uintptr_t furthest = 0, furthest_output = 0;
  for (size_t k = 0; k < n; k++) {
    if (sp[k].output && sp[k].start < furthest) {
      st = output_overlaps(func, plan, inputs, outputs, sp[k].index);
      if (st != ADNN_STATUS_SUCCESS) return st;
    } else if (!sp[k].output && sp[k].start < furthest_output) {
      for (size_t o = 0; o < want_out; o++) {
        if (!overlaps((const void *)sp[k].start, sp[k].end - sp[k].start, outputs[o],
                      plan->io.output_bytes[o]))
          continue;
        st = output_overlaps(func, plan, inputs, outputs, o);
        if (st != ADNN_STATUS_SUCCESS) return st;
      }
    }
    if (sp[k].end > furthest) furthest = sp[k].end;
    if (sp[k].output && sp[k].end > furthest_output) furthest_output = sp[k].end;
  }
  return ADNN_STATUS_SUCCESS;
}

static adnn_status execute(const char *func, adnn_plan *plan, const void *const *inputs,
                           size_t n_inputs, void *const *outputs, size_t n_outputs) {
  adnn_context *ctx = NULL;
  adnn_status st = adnn__check_plan(func, plan, &ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (ctx == NULL) return orphan(func, plan);
  st = check_execute(func, plan, ctx, inputs, n_inputs, outputs, n_outputs);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (adnn__verbose_level() >= 2)
    return adnn__verbose_execute(ctx, &plan->op, adnn_plan_get_algorithm(plan), plan->pplan,
                                 inputs, outputs);
  return plan->table->plan_execute(plan->pplan, inputs, outputs);
}

adnn_status adnn_plan_execute(adnn_plan *plan, const void *const *inputs, size_t n_inputs,
                              void *output) {
  void *const outputs[1] = {output};
  return execute("adnn_plan_execute", plan, inputs, n_inputs, outputs, 1);
}

adnn_status adnn_plan_execute_multi(adnn_plan *plan, const void *const *inputs, size_t n_inputs,
                                    void *const *outputs, size_t n_outputs) {
  const char *func = "adnn_plan_execute_multi";
  if (outputs == NULL) {
    /* The handle is checked first, as everywhere, so that a dead plan is
     * reported as such. */
    adnn_context *ctx = NULL;
    adnn_status st = adnn__check_plan(func, plan, &ctx);
    if (st != ADNN_STATUS_SUCCESS) return st;
    return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: outputs is NULL", func);
  }
  return execute(func, plan, inputs, n_inputs, outputs, n_outputs);
}

/* ------------------------------------------------------------------------ */
/* Weight prepacking (doc/prepacking.md)                                     */
/* ------------------------------------------------------------------------ */

int adnn__op_prepacked_input(const adnn_plugin_op *op) {
  if (op->kind == ADNN_PLUGIN_OP_CONV2D)
    return ((const adnn_plugin_conv2d *)op->problem)->weights_prepacked ? 1 : -1;
  if (op->kind == ADNN_PLUGIN_OP_MATMUL)
    return ((const adnn_plugin_matmul *)op->problem)->weights_prepacked ? 1 : -1;
  return -1;
}

/* The checks both prepacking functions make: a live plan on a live
 * context, of an op with weights, created with weights_prepacked = 1. */
static adnn_status check_prepacked(const char *func, const adnn_plan *plan, adnn_context **ctx) {
  adnn_status st = adnn__check_plan(func, plan, ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (*ctx == NULL) return orphan(func, plan);
  if (plan->op.kind != ADNN_PLUGIN_OP_CONV2D && plan->op.kind != ADNN_PLUGIN_OP_MATMUL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: a %s plan has no weights to pack (only conv2d "
                      "and matmul plans do)", func, plan->info->name);
  if (plan->io.prepacked_input == 0)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: the %s plan was created without "
                      "weights_prepacked; set it to 1 in the descriptor to execute with packed "
                      "weights", func, plan->info->name);
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_plan_get_packed_weights_bytes(const adnn_plan *plan, size_t *bytes) {
  const char *func = "adnn_plan_get_packed_weights_bytes";
  adnn_context *ctx = NULL;
  adnn_status st = check_prepacked(func, plan, &ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (bytes == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: bytes is NULL", func);
  *bytes = plan->io.input_bytes[plan->io.prepacked_input - 1];
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn_plan_pack_weights(adnn_plan *plan, const void *w, void *packed,
                                   size_t packed_bytes) {
  const char *func = "adnn_plan_pack_weights";
  adnn_context *ctx = NULL;
  adnn_status st = check_prepacked(func, plan, &ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  const char *wname = plan->op.kind == ADNN_PLUGIN_OP_CONV2D ? "w" : "b";
  if (w == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: w is NULL", func);
  if (packed == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: packed is NULL", func);
  const size_t need = plan->io.input_bytes[plan->io.prepacked_input - 1];
  if (packed_bytes < need)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: packed_bytes is %zu, but this plan's packed "
                      "weights take %zu bytes (adnn_plan_get_packed_weights_bytes)", func,
                      packed_bytes, need);
  /* The weights' span in the descriptor's layout, as the validator computed
   * it for an unpacked plan. */
  const size_t w_bytes = plan->weights_bytes;
  st = adnn__check_device_range(func, ctx, "w", w, w_bytes);
  if (st != ADNN_STATUS_SUCCESS) return st;
  st = adnn__check_device_range(func, ctx, "packed", packed, need);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (overlaps(w, w_bytes, packed, need))
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: w (the plan's %s) and packed overlap; the "
                      "packed weights need memory of their own", func, wname);
  return plan->table->plan_pack_weights(plan->pplan, w, packed);
}

void adnn__plan_orphan(adnn_plan *plan, adnn_context *ctx) {
  (void)ctx;
  plan->table->plan_destroy(plan->pplan);
  plan->pplan = NULL;
}

void adnn_plan_destroy(adnn_plan *plan) {
  if (plan == NULL) return;
  adnn_context *ctx = NULL;
  /* A plan that is not live is left alone; the error is logged and recorded.
   * An orphan's plugin state went with its context: only the shell is left. */
  if (adnn__handle_remove_plan("adnn_plan_destroy", plan, &ctx) != ADNN_STATUS_SUCCESS) {
    adnn__log(ADNN_LOG_ERROR, "core", "%s", adnn_last_error());
    return;
  }
  if (plan->pplan != NULL) plan->table->plan_destroy(plan->pplan);
  adnn__tune_record_free(&plan->tune);
  adnn__op_io_free(&plan->io);
  free(plan->spans);
  free(plan);
}

/* ------------------------------------------------------------------------ */
/* Helpers for the validators and per-op functions (op_validate.h)           */
/* ------------------------------------------------------------------------ */

void adnn__op_io_init(adnn__op_io *io) {
  memset(io, 0, sizeof *io);
  io->input_bytes = io->inline_input_bytes;
  io->output_bytes = io->inline_output_bytes;
}

adnn_status adnn__op_io_reserve(const char *func, adnn__op_io *io, size_t n_inputs,
                                size_t n_outputs) {
  if (n_inputs > ADNN__MAX_OP_INPUTS) {
    size_t *a = calloc(n_inputs, sizeof *a);
    if (a == NULL) return adnn__fail(ADNN_STATUS_OUT_OF_MEMORY, "%s: out of host memory", func);
    if (io->input_bytes != io->inline_input_bytes) free(io->input_bytes);
    io->input_bytes = a;
  }
  if (n_outputs > ADNN__MAX_OP_OUTPUTS) {
    size_t *a = calloc(n_outputs, sizeof *a);
    if (a == NULL) return adnn__fail(ADNN_STATUS_OUT_OF_MEMORY, "%s: out of host memory", func);
    if (io->output_bytes != io->inline_output_bytes) free(io->output_bytes);
    io->output_bytes = a;
  }
  return ADNN_STATUS_SUCCESS;
}

void adnn__op_io_free(adnn__op_io *io) {
  free(io->owned);
  io->owned = NULL;
  if (io->input_bytes != io->inline_input_bytes) free(io->input_bytes);
  if (io->output_bytes != io->inline_output_bytes) free(io->output_bytes);
  io->input_bytes = io->inline_input_bytes;
  io->output_bytes = io->inline_output_bytes;
}

adnn_status adnn__read_op_desc(const char *func, const char *what, adnn_plugin_op_kind kind,
                               const void *src, void *dst) {
  if ((unsigned)kind >= ADNN_PLUGIN_OP_LIMIT_ || op_table[kind].name == NULL)
    return adnn__fail(ADNN_STATUS_INTERNAL_ERROR, "%s: no op of kind %d", func, (int)kind);
  if (src == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: %s is NULL", func, what);
  const op_info *info = &op_table[kind];
  char type[64], init[80];
  snprintf(type, sizeof type, "adnn_%s_desc (%s)", info->name, what);
  snprintf(init, sizeof init, "adnn_%s_desc_init", info->name);
  info->init((op_desc *)dst);
  return adnn__read_struct(func, type, init, src, info->desc_min_size, info->desc_size, dst);
}

adnn_status adnn__plan_problem(const char *func, adnn_plan *plan, adnn_plugin_op_kind *kind,
                               void **problem) {
  adnn_context *ctx = NULL;
  adnn_status st = adnn__check_plan(func, plan, &ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (ctx == NULL) return orphan(func, plan);
  *kind = plan->op.kind;
  *problem = &plan->problem;
  return ADNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                   */
/* ------------------------------------------------------------------------ */

/* Each query has its 0.1 name, kept as an exported alias (doc/versioning.md),
 * and messages name the function the caller used. */
/* The tuning record is the core's own, so the candidate queries and the
 * choice reason still answer for an orphan plan; the algorithm and workspace
 * queries ask the plugin and do not. */
static adnn_status candidate_count(const char *func, const adnn_plan *plan, size_t *count) {
  adnn_context *ctx;
  adnn_status st = adnn__check_plan(func, plan, &ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (count == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: count is NULL", func);
  *count = plan->tune.count;
  return ADNN_STATUS_SUCCESS;
}

static adnn_status candidate_get(const char *func, const adnn_plan *plan, size_t index,
                                 const adnn_plan_candidate **candidate) {
  adnn_context *ctx;
  adnn_status st = adnn__check_plan(func, plan, &ctx);
  if (st != ADNN_STATUS_SUCCESS) return st;
  if (candidate == NULL)
    return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: candidate is NULL", func);
  if (index >= plan->tune.count)
    return adnn__fail(ADNN_STATUS_BAD_PARAM, "%s: index %zu is out of range (the plan has %zu "
                      "candidate%s)", func, index, plan->tune.count,
                      plan->tune.count == 1 ? "" : "s");
  *candidate = &plan->tune.results[index].pub;
  return ADNN_STATUS_SUCCESS;
}

/* Asks the plugin; 0 (nothing written but the defaults) for a plan that is
 * NULL, not live or an orphan, recording the error for the latter two. */
static int describe(const char *func, const adnn_plan *plan, const char **name, size_t *ws) {
  *name = NULL;
  *ws = 0;
  if (plan == NULL) return 0;
  adnn_context *ctx;
  if (adnn__check_plan(func, plan, &ctx) != ADNN_STATUS_SUCCESS) return 0;
  if (ctx == NULL) {
    orphan(func, plan);
    return 0;
  }
  if (ADNN_PLUGIN_HAS(plan->table, plan_describe)) plan->table->plan_describe(plan->pplan, name, ws);
  return 1;
}

adnn_status adnn_plan_get_candidate_count(const adnn_plan *plan, size_t *count) {
  return candidate_count("adnn_plan_get_candidate_count", plan, count);
}

adnn_status adnn_plan_candidate_count(const adnn_plan *plan, size_t *count) {
  return candidate_count("adnn_plan_candidate_count", plan, count);
}

adnn_status adnn_plan_get_candidate(const adnn_plan *plan, size_t index,
                                    const adnn_plan_candidate **candidate) {
  return candidate_get("adnn_plan_get_candidate", plan, index, candidate);
}

adnn_status adnn_plan_candidate_get(const adnn_plan *plan, size_t index,
                                    const adnn_plan_candidate **candidate) {
  return candidate_get("adnn_plan_candidate_get", plan, index, candidate);
}

const char *adnn_plan_get_choice_reason(const adnn_plan *plan) {
  adnn_context *ctx;
  if (plan == NULL || adnn__check_plan("adnn_plan_get_choice_reason", plan, &ctx) !=
                          ADNN_STATUS_SUCCESS)
    return "";
  return plan->tune.reason;
}

const char *adnn_plan_choice_reason(const adnn_plan *plan) {
  return adnn_plan_get_choice_reason(plan);
}

const char *adnn_plan_get_algorithm(const adnn_plan *plan) {
  const char *name;
  size_t ws;
  describe("adnn_plan_get_algorithm", plan, &name, &ws);
  return name ? name : "";
}

const char *adnn_plan_algorithm(const adnn_plan *plan) { return adnn_plan_get_algorithm(plan); }

size_t adnn_plan_get_workspace_bytes(const adnn_plan *plan) {
  const char *name;
  size_t ws;
  describe("adnn_plan_get_workspace_bytes", plan, &name, &ws);
  return ws;
}

size_t adnn_plan_workspace_bytes(const adnn_plan *plan) {
  return adnn_plan_get_workspace_bytes(plan);
}
