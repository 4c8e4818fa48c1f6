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

/* A set of live allocations (pointer -> size), used to catch double frees and
 * frees of foreign pointers. Not thread-safe by itself; the context locks it. */
typedef struct adnn__alloc_set {
  void **keys;     /* NULL = empty slot, ADNN__TOMBSTONE = deleted */
  size_t capacity; /* power of two, or 0 */
  size_t used;     /* live entries plus tombstones */
  size_t live;
} adnn__alloc_set;

extern char adnn__tombstone;
#define ADNN__TOMBSTONE ((void *)&adnn__tombstone)

int adnn__alloc_set_insert(adnn__alloc_set *set, void *ptr); /* 0 on out of memory */
int adnn__alloc_set_remove(adnn__alloc_set *set, void *ptr); /* 0 when absent */
void adnn__alloc_set_free(adnn__alloc_set *set);

struct adnn__plugin_record;

/* The context behind the opaque public handle. */
struct adnn_context {
  struct adnn__plugin_record *plugin;
  const adnn_plugin *table;
  adnn_plugin_context *pctx;
  int device;
  uint32_t flags;
  pthread_mutex_t alloc_lock;
  adnn__alloc_set allocs;
  adnn_tune_options tune; /* from the environment at creation (core/tuner.c) */
  pthread_mutex_t tune_lock; /* one measurement at a time on this context */
};

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

/* Validates ctx; returns SUCCESS or a BAD_PARAM_NULL naming `func`. */
adnn_status adnn__check_context(const char *func, const adnn_context *ctx);

#endif
