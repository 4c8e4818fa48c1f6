/*
 * adnn plugin ABI: the only interface between the core library and a backend.
 *
 * A plugin is a shared object that exports exactly one symbol,
 * ADNN_PLUGIN_ENTRY_SYMBOL ("adnn_plugin_entry"), of type adnn_plugin_entry_fn.
 * The core dlopen()s every "*.so" in the plugin search path with
 * RTLD_NOW | RTLD_LOCAL, calls the entry with its own ABI version and a host
 * table, and gets back a const adnn_plugin table.
 *
 * Rules (append-only, like SQLite's file format):
 *  - Both tables begin with abi_version and struct_size. The major version
 *    (abi_version >> 16) must match exactly; a mismatch is refused with both
 *    numbers in the reason. Minor versions only append fields.
 *  - A slot that is NULL, or lies past struct_size, is "not provided": the core
 *    answers ADNN_STATUS_NOT_SUPPORTED for it. Slots marked REQUIRED must exist.
 *  - Plugins never link against libadnn; everything they need from the core is in
 *    adnn_plugin_host.
 *  - The core validates every argument (NULLs, sizes, overflow, enum values)
 *    before calling a plugin, so plugins may assume well-formed input.
 *  - The core never dlclose()s a plugin that was probed (GPU runtimes do not
 *    survive unloading).
 *
 * Threading: probe and init are called once, under the core's loader lock.
 * Context functions are called for one context from one thread at a time;
 * different contexts may be used concurrently, so plugin globals must be
 * thread-safe after init.
 */
#ifndef ADNN_PLUGIN_H
#define ADNN_PLUGIN_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <adnn.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ADNN_PLUGIN_ABI_MAJOR 1
#define ADNN_PLUGIN_ABI_MINOR 0
#define ADNN_PLUGIN_ABI_VERSION ((uint32_t)((ADNN_PLUGIN_ABI_MAJOR << 16) | ADNN_PLUGIN_ABI_MINOR))
#define ADNN_PLUGIN_ENTRY_SYMBOL "adnn_plugin_entry"

/* ------------------------------------------------------------------------ */
/* What the core gives a plugin                                              */
/* ------------------------------------------------------------------------ */

typedef struct adnn_plugin_host {
  uint32_t abi_version; /**< ADNN_PLUGIN_ABI_VERSION of the core */
  uint32_t struct_size; /**< sizeof(adnn_plugin_host) as the core knows it */
  /** Logs a message under the plugin's name (the core filters by level). */
  void (*log)(adnn_log_level level, const char *source, const char *fmt, ...)
#if defined(__GNUC__)
      __attribute__((format(printf, 3, 4)))
#endif
      ;
  /** Records the failure message for the calling thread's adnn_last_error()
   *  and returns `status`, so a plugin can write `return host->fail(...)`. */
  adnn_status (*fail)(adnn_status status, const char *fmt, ...)
#if defined(__GNUC__)
      __attribute__((format(printf, 2, 3)))
#endif
      ;
  /** Reads an environment variable (the core may override some in tests). */
  const char *(*getenv)(const char *name);
} adnn_plugin_host;

/* ------------------------------------------------------------------------ */
/* What a plugin reports when probed                                         */
/* ------------------------------------------------------------------------ */

#define ADNN_PLUGIN_MAX_PROPERTIES 24
#define ADNN_PLUGIN_MAX_DEVICES 16
#define ADNN_PLUGIN_KEY_LEN 32
#define ADNN_PLUGIN_VALUE_LEN 256
#define ADNN_PLUGIN_REASON_LEN 1024

/** One "key: value" fact in a probe report (fixed buffers, always terminated by
 *  the helpers below). */
typedef struct adnn_plugin_property {
  char key[ADNN_PLUGIN_KEY_LEN];
  char value[ADNN_PLUGIN_VALUE_LEN];
} adnn_plugin_property;

/** A usable device in a probe report: its index (the N of "backend:N"), name
 *  and properties (memory, compute capability, ISA...). */
typedef struct adnn_plugin_device {
  int32_t index;
  char name[ADNN_PLUGIN_VALUE_LEN];
  int32_t property_count;
  adnn_plugin_property properties[ADNN_PLUGIN_MAX_PROPERTIES];
} adnn_plugin_device;

/** Filled by probe. The core zeroes it and sets struct_size before the call. */
typedef struct adnn_plugin_report {
  uint32_t struct_size;
  /** 0 = unusable; otherwise higher is preferred by "auto" (cpu uses 10). */
  int32_t score;
  /** ADNN_BACKEND_READY, _UNAVAILABLE or _INCOMPATIBLE. */
  int32_t state;
  /** One or two sentences: what was found and, when not ready, how to fix it. */
  char reason[ADNN_PLUGIN_REASON_LEN];
  int32_t property_count;
  adnn_plugin_property properties[ADNN_PLUGIN_MAX_PROPERTIES];
  int32_t device_count;
  adnn_plugin_device devices[ADNN_PLUGIN_MAX_DEVICES];
} adnn_plugin_report;

/** Appends a formatted property to a property list; silently drops it when the
 *  list is full (reports are informational). */
static inline void adnn_plugin_property_addv(adnn_plugin_property *props, int32_t *count,
                                             const char *key, const char *fmt, va_list ap) {
  if (*count < 0 || *count >= ADNN_PLUGIN_MAX_PROPERTIES) return;
  adnn_plugin_property *p = &props[*count];
  snprintf(p->key, sizeof p->key, "%s", key);
  vsnprintf(p->value, sizeof p->value, fmt, ap);
  (*count)++;
}

/** Appends a formatted property to a report (dropped when the list is full). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline void adnn_plugin_report_property(adnn_plugin_report *r, const char *key,
                                               const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  adnn_plugin_property_addv(r->properties, &r->property_count, key, fmt, ap);
  va_end(ap);
}

/** Appends a formatted property to a device (dropped when the list is full). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline void adnn_plugin_device_property(adnn_plugin_device *d, const char *key,
                                               const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  adnn_plugin_property_addv(d->properties, &d->property_count, key, fmt, ap);
  va_end(ap);
}

/** Adds a device and returns it, or NULL when the list is full. */
static inline adnn_plugin_device *adnn_plugin_report_device(adnn_plugin_report *r, int index,
                                                            const char *name) {
  if (r->device_count < 0 || r->device_count >= ADNN_PLUGIN_MAX_DEVICES) return NULL;
  adnn_plugin_device *d = &r->devices[r->device_count++];
  memset(d, 0, sizeof *d);
  d->index = index;
  snprintf(d->name, sizeof d->name, "%s", name);
  return d;
}

/** Sets the report's reason (truncated to ADNN_PLUGIN_REASON_LEN). */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline void adnn_plugin_report_reason(adnn_plugin_report *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->reason, sizeof r->reason, fmt, ap);
  va_end(ap);
}

/* Names that plugins need in messages. Plugins never link libadnn, so these
 * are inline here; the core's public adnn_conv2d_algorithm_name() and
 * adnn_dtype_name() return the same strings. */
static inline const char *adnn_plugin_conv2d_algorithm_name(adnn_conv2d_algorithm algo) {
  switch (algo) {
    case ADNN_CONV2D_ALGO_AUTO: return "auto";
    case ADNN_CONV2D_ALGO_REFERENCE: return "reference";
    case ADNN_CONV2D_ALGO_IM2COL_GEMM: return "im2col_gemm";
    case ADNN_CONV2D_ALGO_GEMM_1X1: return "gemm_1x1";
    case ADNN_CONV2D_ALGO_WINOGRAD_F2X3: return "winograd_f2x3";
    case ADNN_CONV2D_ALGO_DEPTHWISE_DIRECT: return "depthwise_direct";
    case ADNN_CONV2D_ALGO_DIRECT: return "direct";
  }
  return "unknown";
}

/** The dtype's name ("f32"), or "unknown"; the same as adnn_dtype_name(). */
static inline const char *adnn_plugin_dtype_name(adnn_dtype dtype) {
  switch (dtype) {
    case ADNN_DTYPE_F32: return "f32";
    case ADNN_DTYPE_F64: return "f64";
    case ADNN_DTYPE_F16: return "f16";
    case ADNN_DTYPE_BF16: return "bf16";
    case ADNN_DTYPE_I8: return "i8";
    case ADNN_DTYPE_I32: return "i32";
  }
  return "unknown";
}

/* ------------------------------------------------------------------------ */
/* Operation arguments                                                       */
/* ------------------------------------------------------------------------ */

/** A (batched) row-major GEMM, already validated by the core: sizes >= 0 and
 *  not all trivial, leading dimensions large enough, spans without overflow,
 *  dtype F32 or F64. A single GEMM has batch 1 and zero strides. */
typedef struct adnn_plugin_gemm_args {
  uint32_t struct_size;
  adnn_dtype dtype;
  adnn_transpose ta, tb;
  int64_t m, n, k;
  double alpha, beta;
  const void *a;
  int64_t lda, stride_a;
  const void *b;
  int64_t ldb, stride_b;
  void *c;
  int64_t ldc, stride_c;
  int64_t batch;
  uint32_t flags; /**< the context's adnn_context_flag bits */
} adnn_plugin_gemm_args;

/** The kind of a DNN operation passed to plan_create. */
typedef enum adnn_plugin_op_kind {
  ADNN_PLUGIN_OP_CONV2D = 1,
  ADNN_PLUGIN_OP_POOL2D = 2,
  ADNN_PLUGIN_OP_ACTIVATION = 3,
  ADNN_PLUGIN_OP_SOFTMAX = 4,
  ADNN_PLUGIN_OP_BATCHNORM = 5,
  ADNN_PLUGIN_OP_NORM = 6,
  ADNN_PLUGIN_OP_BINARY = 7
} adnn_plugin_op_kind;

/** A DNN operation, validated by the core: descriptors are complete copies
 *  (struct_size is this header's), shapes agree, output sizes are checked,
 *  softmax's axis is non-negative, the binary op's a and b have been broadcast
 *  to y's rank (missing leading dims added with size 1 and stride 0, size-1
 *  dims given stride 0), and the conv2d algorithm is the one requested (AUTO
 *  or forced, the environment override already applied). */
typedef struct adnn_plugin_op {
  uint32_t struct_size;
  adnn_plugin_op_kind kind;
  int32_t n_inputs; /**< how many input pointers plan_execute receives */
  uint32_t flags;   /**< the context's adnn_context_flag bits */
  union {
    adnn_conv2d_desc conv2d;
    adnn_pool2d_desc pool2d;
    adnn_activation_desc activation;
    adnn_softmax_desc softmax;
    adnn_batchnorm_desc batchnorm;
    adnn_norm_desc norm;
    adnn_binary_desc binary;
  } desc;
  /** The algorithm to use by name, as listed by plan_candidates (e.g.
   *  "winograd_f2x3", "cudnn:WINOGRAD"); "" lets the plugin choose (its
   *  heuristic, or the algorithm the descriptor forces). Set by the tuner. */
  char candidate[64];
} adnn_plugin_op;

/** The element type of an op (all its tensors share it); 0 for an unknown kind. */
static inline adnn_dtype adnn_plugin_op_dtype(const adnn_plugin_op *op) {
  switch (op->kind) {
    case ADNN_PLUGIN_OP_CONV2D: return op->desc.conv2d.x.dtype;
    case ADNN_PLUGIN_OP_POOL2D: return op->desc.pool2d.x.dtype;
    case ADNN_PLUGIN_OP_ACTIVATION: return op->desc.activation.x.dtype;
    case ADNN_PLUGIN_OP_SOFTMAX: return op->desc.softmax.x.dtype;
    case ADNN_PLUGIN_OP_BATCHNORM: return op->desc.batchnorm.x.dtype;
    case ADNN_PLUGIN_OP_NORM: return op->desc.norm.x.dtype;
    case ADNN_PLUGIN_OP_BINARY: return op->desc.binary.a.dtype;
  }
  return (adnn_dtype)0;
}

/** One algorithm a plugin can run for an op (see plan_candidates). */
typedef struct adnn_plugin_candidate {
  char name[64];          /**< the value for adnn_plugin_op.candidate */
  size_t workspace_bytes; /**< what plan_create would allocate */
  int32_t deterministic;  /**< 1 if bit-identical run to run */
  /** 1 for a catch-all far slower than the others (a reference
   *  implementation): one run of it could use up the whole tuning budget, so
   *  the tuner measures it only in exhaustive mode or when no other candidate
   *  could run. */
  int32_t slow;
} adnn_plugin_candidate;

/** A plugin's plan; each plugin defines the struct. */
typedef struct adnn_plugin_plan adnn_plugin_plan;

/* ------------------------------------------------------------------------ */
/* What a plugin gives the core                                              */
/* ------------------------------------------------------------------------ */

/** A plugin's per-context state; each plugin defines the struct. */
typedef struct adnn_plugin_context adnn_plugin_context;

/** The table a plugin returns from adnn_plugin_entry (see the rules at the top). */
typedef struct adnn_plugin {
  uint32_t abi_version; /**< REQUIRED: ADNN_PLUGIN_ABI_VERSION the plugin was built with */
  uint32_t struct_size; /**< REQUIRED: sizeof(adnn_plugin) the plugin was built with */
  const char *name;     /**< REQUIRED: backend name, [a-z0-9_]+, e.g. "cpu" */
  const char *version;  /**< REQUIRED: the plugin's version string */

  /** REQUIRED. Cheap capability check: fills the report (state, score, reason,
   *  versions, devices). Must not abort when drivers or devices are missing, and
   *  should avoid creating device contexts. Called once per process. */
  adnn_status (*probe)(adnn_plugin_report *report);

  /** Optional. Called once before the first context is created on this plugin
   *  (only if probe said READY). A failure makes context creation fail. */
  adnn_status (*init)(void);

  /** REQUIRED. Creates the state for one device (index < reported devices). */
  adnn_status (*context_create)(int device, adnn_plugin_context **out);
  /** REQUIRED. Destroys it; pending work has been synchronized by the core. */
  void (*context_destroy)(adnn_plugin_context *ctx);
  /** REQUIRED. Waits for all queued work of the context. */
  adnn_status (*synchronize)(adnn_plugin_context *ctx);

  /** REQUIRED. Memory on the context's device; bytes > 0, ptr non-NULL. */
  adnn_status (*mem_alloc)(adnn_plugin_context *ctx, size_t bytes, void **ptr);
  /** REQUIRED. ptr was returned by mem_alloc on this context. */
  adnn_status (*mem_free)(adnn_plugin_context *ctx, void *ptr);
  /** REQUIRED. bytes > 0, pointers non-NULL, kind valid. */
  adnn_status (*mem_copy)(adnn_plugin_context *ctx, void *dst, const void *src, size_t bytes,
                          adnn_memcpy_kind kind);
  /** REQUIRED. bytes > 0, value in 0..255. */
  adnn_status (*mem_set)(adnn_plugin_context *ctx, void *ptr, int value, size_t bytes);

  /** Optional. A (batched) GEMM. */
  adnn_status (*gemm)(adnn_plugin_context *ctx, const adnn_plugin_gemm_args *args);

  /** Optional. Creates a plan for a validated op: choose the algorithm, size and
   *  allocate the workspace. NOT_SUPPORTED (with a message) when this backend
   *  cannot run the op, dtype or forced algorithm. */
  adnn_status (*plan_create)(adnn_plugin_context *ctx, const adnn_plugin_op *op,
                             adnn_plugin_plan **out);
  /** Optional (required with plan_create). inputs has op->n_inputs non-NULL
   *  pointers; output is non-NULL. Must not allocate. */
  adnn_status (*plan_execute)(adnn_plugin_plan *plan, const void *const *inputs, void *output);
  /** Optional (required with plan_create). */
  void (*plan_destroy)(adnn_plugin_plan *plan);
  /** Optional. The algorithm name and the workspace held, for adnn_plan_algorithm. */
  void (*plan_describe)(const adnn_plugin_plan *plan, const char **algorithm,
                        size_t *workspace_bytes);

  /** Optional. Lists the algorithms that can run `op` on this context's device,
   *  the plugin's heuristic choice first. Writes at most `max` entries and the
   *  total number available to *count. Ops with a single algorithm may list
   *  one or leave the slot NULL (then the core never measures them). */
  adnn_status (*plan_candidates)(adnn_plugin_context *ctx, const adnn_plugin_op *op,
                                 adnn_plugin_candidate *out, int32_t max, int32_t *count);
  /** Optional. A stable identity of device `device` for the performance
   *  database: model, ISA or compute capability, core or SM count, and the
   *  versions of the libraries that change results (OpenBLAS; driver, cuDNN,
   *  cuBLAS). One line, no tabs. */
  void (*device_identity)(int device, char *buf, size_t size);

  /* ABI 1.0 ends here. New slots are appended below with a minor bump. */
} adnn_plugin;

/** The one exported symbol. `host_abi_version` is the core's
 *  ADNN_PLUGIN_ABI_VERSION; a plugin may return NULL if it cannot work with it
 *  (the core then reports the plugin as incompatible). */
typedef const adnn_plugin *(*adnn_plugin_entry_fn)(uint32_t host_abi_version,
                                                     const adnn_plugin_host *host);

/** Plugins mark their entry point with this so that it alone is exported. */
#if defined(__GNUC__)
#define ADNN_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define ADNN_PLUGIN_EXPORT
#endif

/** Whether the slot `field` is provided by a plugin table of size struct_size. */
#define ADNN_PLUGIN_HAS(plugin, field)                                                   \
  ((plugin)->struct_size >= offsetof(adnn_plugin, field) + sizeof((plugin)->field) &&   \
   (plugin)->field != NULL)

#ifdef __cplusplus
}
#endif

#endif /* ADNN_PLUGIN_H */
