/*
 * Declarations shared by the core's translation units. Nothing here is public:
 * every function is hidden by -fvisibility=hidden and named adnn__*.
 */
#ifndef ADNN_CORE_INTERNAL_H
#define ADNN_CORE_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include <adnn.h>
#include <adnn/plugin.h>

#include "core/env.h"

#if defined(__GNUC__)
#define ADNN_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define ADNN_PRINTF(fmt_index, first_arg)
#endif

/* Records `status` and a formatted message as the calling thread's last error
 * and returns `status`. The message should start with the public function's
 * name ("adnn_gemm: ..."). */
adnn_status adnn__fail(adnn_status status, const char *fmt, ...) ADNN_PRINTF(2, 3);
adnn_status adnn__vfail(adnn_status status, const char *fmt, va_list ap) ADNN_PRINTF(2, 0);

/* Emits a log message if `level` is enabled. `source` is "core" or a plugin name. */
void adnn__log(adnn_log_level level, const char *source, const char *fmt, ...) ADNN_PRINTF(3, 4);
void adnn__vlog(adnn_log_level level, const char *source, const char *fmt, va_list ap)
    ADNN_PRINTF(3, 0);
int adnn__log_enabled(adnn_log_level level);
/* The sink's state, set by the public logging API (log_api.c). */
void adnn__log_store_level(int level);
int adnn__log_level(void);
void adnn__log_store_sink(adnn_log_callback callback, void *user_data);

/* Multiplies/adds non-negative 64-bit sizes; returns 0 on overflow. */
static inline int adnn__mul_i64(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}
static inline int adnn__add_i64(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_add_overflow(a, b, out);
}

/* What a region of a context's allocation map is. */
typedef enum adnn__region_kind {
  ADNN__REGION_MALLOC = 0,          /* from adnn_malloc: the context frees it */
  ADNN__REGION_REGISTERED_DEVICE,   /* adnn_memory_register(ADNN_MEMORY_DEVICE) */
  ADNN__REGION_REGISTERED_HOST      /* adnn_memory_register(ADNN_MEMORY_HOST) */
} adnn__region_kind;

typedef struct adnn__region {
  uintptr_t base;
  size_t size; /* > 0 */
  adnn__region_kind kind;
} adnn__region;

/* The memory a context knows (core/alloc_map.c): disjoint regions sorted by
 * base address, so that "which region holds [p, p+n)" is a binary search and
 * double frees are caught. Not thread-safe by itself; the context locks it. */
typedef struct adnn__alloc_map {
  adnn__region *regions;
  size_t count, capacity;
} adnn__alloc_map;

/* Inserts a region. Returns 1, 0 on out of memory, or -1 when it overlaps an
 * existing region (then *clash, if not NULL, receives a copy of that one). */
int adnn__alloc_map_insert(adnn__alloc_map *map, uintptr_t base, size_t size,
                           adnn__region_kind kind, adnn__region *clash);
/* The region whose base is exactly `base`, or NULL. */
const adnn__region *adnn__alloc_map_at(const adnn__alloc_map *map, uintptr_t base);
/* The region containing address p, or NULL. */
const adnn__region *adnn__alloc_map_find(const adnn__alloc_map *map, uintptr_t p);
/* The lowest region that overlaps [p, p+n) (n > 0), or NULL. */
const adnn__region *adnn__alloc_map_overlap(const adnn__alloc_map *map, uintptr_t p, size_t n);
/* Removes the region whose base is exactly `base`; 0 when there is none. */
int adnn__alloc_map_remove(adnn__alloc_map *map, uintptr_t base);
void adnn__alloc_map_free(adnn__alloc_map *map);

struct adnn__plugin_record;
struct adnn_plan;

/* One measured choice of the plan-less GEMM (core/tuner.c, adnn__tune_gemm):
 * the plugin's implementation index for a shape, 0 for its own choice. */
typedef struct adnn__gemm_choice {
  int used;
  adnn_dtype dtype;
  int ta, tb;
  int64_t m, n, k;
  int32_t impl;
} adnn__gemm_choice;

/* How many GEMM shapes a context remembers (a ring: the oldest is dropped;
 * a dropped shape is found again in the performance database). */
#define ADNN__GEMM_CHOICES 64

/* The context behind the opaque public handle. */
struct adnn_context {
  struct adnn__plugin_record *plugin;
  const adnn_plugin *table;
  adnn_plugin_context *pctx;
  int device;
  uint32_t flags;
  /* Guards `allocs`: read-locked by the pointer checks, which may run on many
   * threads at once (a plan executed concurrently), write-locked to change it. */
  pthread_rwlock_t alloc_lock;
  adnn__alloc_map allocs;
  adnn_tune_options tune; /* from the environment at creation (core/tuner.c) */
  /* One measurement at a time on this context; recursive, so that a log
   * callback that calls adnn on this context while the tuner logs does not
   * deadlock. */
  pthread_mutex_t tune_lock;
  /* The plan-less GEMM's choices by shape, guarded by gemm_choice_lock (held
   * only to read or insert, never while measuring). */
  adnn__gemm_choice gemm_choices[ADNN__GEMM_CHOICES];
  unsigned gemm_choice_next;
  pthread_mutex_t gemm_choice_lock;
  /* The live plans created on this context, linked through adnn__plan_link;
   * guarded by the handle registry's lock (core/handles.c). */
  struct adnn_plan *plans;
};

/* ---- The registry of live handles (core/handles.c) ---- */

/* The first member of every plan (core/ops.c owns the rest): the registry
 * links a context's plans through it, so that destroying the context can
 * release them. Guarded by the registry's lock. */
typedef struct adnn__plan_link {
  struct adnn_plan *prev, *next;
  adnn_context *ctx; /* NULL once the context was destroyed: an orphan plan */
} adnn__plan_link;

/* Records a new context / plan as live (the plan is linked into its
 * context's list). 1 on success, 0 on out of memory; adding a plan returns -1
 * when its context is no longer live. */
int adnn__handle_add_context(adnn_context *ctx);
int adnn__handle_add_plan(struct adnn_plan *plan, adnn_context *ctx);

/* Verifies ctx against the registry: SUCCESS, BAD_PARAM_NULL for NULL, or
 * BAD_PARAM_HANDLE with a message naming `func`. Never reads through ctx. */
adnn_status adnn__check_context(const char *func, const adnn_context *ctx);

/* Verifies a plan; on success *ctx receives its context, or NULL when the
 * context was destroyed (an orphan plan; the caller decides what that means). */
adnn_status adnn__check_plan(const char *func, const struct adnn_plan *plan, adnn_context **ctx);

/* Removes ctx from the registry (BAD_PARAM_HANDLE when it is not live) and
 * turns each of its plans into an orphan with adnn__plan_orphan, under the
 * registry's lock so that no adnn_plan_destroy runs meanwhile. */
adnn_status adnn__handle_remove_context(const char *func, adnn_context *ctx);
/* Releases the plugin state of a plan whose context is being destroyed
 * (core/ops.c). */
void adnn__plan_orphan(struct adnn_plan *plan, adnn_context *ctx);

/* Removes a plan from the registry and from its context's list; *ctx receives
 * its context (NULL for an orphan). */
adnn_status adnn__handle_remove_plan(const char *func, struct adnn_plan *plan, adnn_context **ctx);

/* ---- Pointer checks (core/buffer_check.c) ---- */

/* Whether [p, p+bytes) lies in one adnn_malloc allocation or device region
 * of ctx. SUCCESS (also when bytes is 0 or the context's checks are off), or
 * BAD_PARAM_MEMORY with a message naming `func` and `name` and the numbers. */
adnn_status adnn__check_device_range(const char *func, adnn_context *ctx, const char *name,
                                     const void *p, size_t bytes);
/* Whether [p, p+bytes) is host memory as adnn_memcpy sees it: it overlaps no
 * device memory of ctx, or lies in one region registered as host memory. */
adnn_status adnn__check_host_range(const char *func, adnn_context *ctx, const char *name,
                                   const void *p, size_t bytes);

/* Checks a tensor descriptor; messages start with `prefix`. Optional outputs:
 * the span in elements and the element count. */
adnn_status adnn__tensor_check(const char *prefix, const adnn_tensor_desc *d, int64_t *span_elems,
                               int64_t *count);

/* Whether no two elements of the tensor share an offset (a sufficient test:
 * it may refuse exotic interleavings that happen to be disjoint). */
int adnn__tensor_strides_disjoint(const adnn_tensor_desc *d);

/* Reads a caller-filled struct that starts with `size_t struct_size` by the
 * "read up to here" rule (doc/versioning.md): *dst (`size` bytes, this
 * library's layout) holds the defaults; the caller's struct must reach
 * `min_size` (the end of its first released layout), bytes up to
 * min(struct_size, size) are copied, and bytes beyond `size` must be zero (a
 * newer field left at its default). dst's struct_size becomes `size`. `type`
 * and `init` name the struct and its initializer in messages. */
adnn_status adnn__read_struct(const char *func, const char *type, const char *init,
                              const void *src, size_t min_size, size_t size, void *dst);

#endif
