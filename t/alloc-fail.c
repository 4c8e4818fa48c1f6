/*
 * Allocation-failure injection (SQLite's method): along each public entry
 * point's path, the k-th allocation fails, for k = 1, 2, ... until the path
 * completes without reaching an injected failure. For every k the path must
 * not crash, must return success (a degraded path, e.g. the performance
 * database in memory only) or ADNN_STATUS_OUT_OF_MEMORY with a message, and
 * must not leak.
 *
 * How: this program defines malloc, calloc, realloc, posix_memalign,
 * aligned_alloc, memalign, strdup, strndup and free itself; being in the
 * executable, they take precedence over the C library's for libadnn, its
 * dlopen'd plugins and the C library's own internal calls (fopen,
 * vasprintf). They forward to the next definition (dlsym RTLD_NEXT: the C
 * library's, or ASan's under ./configure --enable-sanitizers). Counting is
 * armed only around the path, and only on the thread that runs it. Calls made
 * directly by OpenBLAS (or its Fortran runtime) are neither counted nor
 * failed, nor are calls with OpenBLAS anywhere on the stack (its constructor's
 * pthread_create): OpenBLAS does not promise to survive an allocation failure
 * (when it cannot start its threads it raises SIGINT), so its failures are
 * out of adnn's control and out of scope (doc/testing.md).
 *
 * Each k runs in a fresh child process, so that paths with process-wide lazy
 * state (the loader's scan, the performance database) start from scratch. A
 * child first warms up what every path shares (one cpu context created and
 * destroyed, which runs the loader), except in the loader scenario, then sets
 * up the scenario's objects unarmed, arms, runs the path, disarms, cleans up,
 * and reports the status, the message and the allocations made during the
 * path that are still live. Leak rule: that count must not exceed the count of
 * an uninjected run (k = 0), which is 0 for paths without process-wide state
 * and the state itself (the loader's table, database entries) otherwise.
 */
/* dladdr and Dl_info are GNU extensions. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <adnn.h>

#include "t/tap.h"
#include "t/tmpdir.h"

/* ---- the allocation shim ----------------------------------------------------- */

typedef void *(*malloc_fn)(size_t);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef void (*free_fn)(void *);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef void *(*aligned_alloc_fn)(size_t, size_t);

static malloc_fn real_malloc;
static calloc_fn real_calloc;
static realloc_fn real_realloc;
static free_fn real_free;
static posix_memalign_fn real_posix_memalign;
static aligned_alloc_fn real_aligned_alloc;

/* Until main() starts, and while dlsym looks the real functions up, a static
 * arena serves every request and free ignores its blocks: before main the
 * dynamic loader and the sanitizer runtimes are still starting (ASan's
 * shadow memory does not exist yet, so nothing here may be instrumented:
 * EARLY below). */
#define EARLY __attribute__((no_sanitize("address", "undefined")))
static _Alignas(64) unsigned char boot_arena[1 << 20];
static size_t boot_used;
static int resolving;
static int main_started;

EARLY static int in_boot_arena(const void *p) {
  return (const unsigned char *)p >= boot_arena &&
         (const unsigned char *)p < boot_arena + sizeof boot_arena;
}

EARLY static void *boot_alloc(size_t n) {
  size_t start = (boot_used + 63) & ~(size_t)63;
  if (start + n > sizeof boot_arena) return NULL;
  boot_used = start + n;
  return boot_arena + start;
}

EARLY static void resolve(void) {
  if (real_free != NULL) return;
  resolving = 1;
  real_malloc = (malloc_fn)dlsym(RTLD_NEXT, "malloc");
  real_calloc = (calloc_fn)dlsym(RTLD_NEXT, "calloc");
  real_realloc = (realloc_fn)dlsym(RTLD_NEXT, "realloc");
  real_posix_memalign = (posix_memalign_fn)dlsym(RTLD_NEXT, "posix_memalign");
  real_aligned_alloc = (aligned_alloc_fn)dlsym(RTLD_NEXT, "aligned_alloc");
  real_free = (free_fn)dlsym(RTLD_NEXT, "free");
  resolving = 0;
}

/* The injection state. `armed` is per thread: only the thread running the
 * path counts. */
static _Thread_local int armed;
static long fail_at;     /* the k-th counted allocation fails; 0: none */
static long counted;     /* counted allocations so far */
static int failure_hit;  /* the k-th allocation was reached */

/* Every live block allocated since main() started (but OpenBLAS's and the
 * dynamic loader's): an open-addressing set (no allocation of its own),
 * guarded by a spin lock since other threads allocate and free too. Blocks
 * allocated while armed are marked `during`; live_count counts those. All
 * of them are scanned for pointers by the leak check. */
#define LIVE_SLOTS (1 << 18)
static void *live_set[LIVE_SLOTS];
static const void *live_caller[LIVE_SLOTS]; /* where each was allocated */
static unsigned char live_during[LIVE_SLOTS];
static size_t live_count;
static volatile int live_lock;
#define TOMBSTONE ((void *)1)

static void lock_live(void) {
  while (__sync_lock_test_and_set(&live_lock, 1)) {
  }
}
static void unlock_live(void) { __sync_lock_release(&live_lock); }

static size_t slot_of(const void *p) { return ((uintptr_t)p >> 4) * 2654435761u % LIVE_SLOTS; }

static void live_add(void *p, const void *caller, int during) {
  lock_live();
  for (size_t i = slot_of(p), n = 0; n < LIVE_SLOTS; i = (i + 1) % LIVE_SLOTS, n++) {
    if (live_set[i] == NULL || live_set[i] == TOMBSTONE) {
      live_set[i] = p;
      live_caller[i] = caller;
      live_during[i] = (unsigned char)during;
      live_count += (size_t)during;
      break;
    }
  }
  unlock_live();
}

static void live_remove(void *p) {
  lock_live();
  for (size_t i = slot_of(p), n = 0; n < LIVE_SLOTS && live_set[i] != NULL;
       i = (i + 1) % LIVE_SLOTS, n++) {
    if (live_set[i] == p) {
      live_set[i] = TOMBSTONE;
      live_count -= live_during[i];
      live_during[i] = 0;
      break;
    }
  }
  unlock_live();
}

/* Who made an allocation, from its return address: 0 adnn or the C
 * library, 1 OpenBLAS or its Fortran runtime, 2 the dynamic loader. */
static int caller_kind(const void *ret) {
  Dl_info info;
  if (ret == NULL || dladdr(ret, &info) == 0 || info.dli_fname == NULL) return 0;
  if (strstr(info.dli_fname, "openblas") != NULL || strstr(info.dli_fname, "gfortran") != NULL)
    return 1;
  if (strstr(info.dli_fname, "/ld-linux") != NULL) return 2;
  return 0;
}

/* Decides for one allocation made at `ret`: 1 = fail it. *track says how to
 * record the block: 0 not at all, 1 as an earlier block, 2 as one made during
 * the path. Not the dynamic loader's, which it
 * keeps in places no scan of ours reaches (thread-local storage of loaded
 * objects hangs off the thread control block) and frees at dlclose; its
 * failures are still injected, since dlopen must fail cleanly. */
static _Thread_local int in_shim; /* backtrace and dladdr may allocate */

static int inject(const void *ret, int *track) {
  *track = 0;
  if (in_shim) return 0;
  if (!armed) {
    in_shim = 1;
    *track = caller_kind(ret) == 0;
    in_shim = 0;
    return 0;
  }
  in_shim = 1;
  int kind = caller_kind(ret);
  /* Also OpenBLAS further up the stack: its constructor creates threads
   * (pthread_create allocates) and raises SIGINT when that fails. */
  void *frames[48];
  int depth = kind != 1 ? backtrace(frames, 48) : 0;
  for (int i = 1; i < depth && kind != 1; i++)
    if (caller_kind(frames[i]) == 1) kind = 1;
  in_shim = 0;
  if (kind == 1) return 0;
  *track = kind == 0 ? 2 : 0;
  counted++;
  if (fail_at > 0 && counted == fail_at) {
    failure_hit = 1;
    return 1;
  }
  return 0;
}

#define CALLER __builtin_return_address(0)
/* The build compiles with -fvisibility=hidden; the shim must be visible. */
#define SHIM __attribute__((visibility("default"))) EARLY

EARLY static void *do_malloc(size_t n, const void *caller) {
  if (!main_started || resolving) return boot_alloc(n);
  if (real_malloc == NULL) resolve();
  int track;
  if (inject(caller, &track)) {
    errno = ENOMEM;
    return NULL;
  }
  void *p = real_malloc(n);
  if (p != NULL && track) live_add(p, caller, track == 2);
  return p;
}

SHIM void *malloc(size_t n) { return do_malloc(n, CALLER); }

SHIM void *calloc(size_t n, size_t size) {
  if (!main_started || resolving) {
    if (size != 0 && n > SIZE_MAX / size) return NULL;
    return boot_alloc(n * size); /* static storage is zeroed, never reused */
  }
  if (real_calloc == NULL) resolve();
  int track;
  if (inject(CALLER, &track)) {
    errno = ENOMEM;
    return NULL;
  }
  void *p = real_calloc(n, size);
  if (p != NULL && track) live_add(p, CALLER, track == 2);
  return p;
}

SHIM void *realloc(void *old, size_t n) {
  if (in_boot_arena(old) || !main_started || resolving) {
    void *p = do_malloc(n, CALLER);
    if (p != NULL && old != NULL) {
      /* The old size is unknown: copy what the arena holds past old. */
      size_t avail = in_boot_arena(old) ? (size_t)(boot_arena + sizeof boot_arena -
                                                   (const unsigned char *)old)
                                        : n;
      memcpy(p, old, n < avail ? n : avail);
    }
    return p;
  }
  if (real_realloc == NULL) resolve();
  int track;
  if (inject(CALLER, &track)) {
    errno = ENOMEM;
    return NULL;
  }
  void *p = real_realloc(old, n);
  if (p != NULL || n == 0) {
    if (old != NULL) live_remove(old); /* a moved earlier block counts as new */
    if (p != NULL && track) live_add(p, CALLER, track == 2);
  }
  return p;
}

SHIM void free(void *p) {
  if (p == NULL || in_boot_arena(p)) return;
  if (real_free == NULL) resolve(); /* a block from before the shim knew it */
  live_remove(p);
  real_free(p);
}

SHIM int posix_memalign(void **out, size_t align, size_t n) {
  if (!main_started || resolving) {
    *out = boot_alloc(n); /* the arena's blocks are 64-byte aligned */
    return *out != NULL && align <= 64 ? 0 : ENOMEM;
  }
  if (real_posix_memalign == NULL) resolve();
  int track;
  if (inject(CALLER, &track)) return ENOMEM;
  int rc = real_posix_memalign(out, align, n);
  if (rc == 0 && track) live_add(*out, CALLER, track == 2);
  return rc;
}

SHIM void *aligned_alloc(size_t align, size_t n) {
  if (!main_started || resolving) return align <= 64 ? boot_alloc(n) : NULL;
  if (real_aligned_alloc == NULL) resolve();
  int track;
  if (inject(CALLER, &track)) {
    errno = ENOMEM;
    return NULL;
  }
  void *p = real_aligned_alloc(align, n);
  if (p != NULL && track) live_add(p, CALLER, track == 2);
  return p;
}

SHIM void *memalign(size_t align, size_t n);
SHIM void *memalign(size_t align, size_t n) { return aligned_alloc(align, n); }

/* strdup and strndup go through our malloc (the C library's call its
 * internal allocator directly, ASan's its own). */
SHIM char *strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = do_malloc(n, CALLER);
  if (p != NULL) memcpy(p, s, n);
  return p;
}

SHIM char *strndup(const char *s, size_t max) {
  size_t n = strnlen(s, max);
  char *p = do_malloc(n + 1, CALLER);
  if (p != NULL) {
    memcpy(p, s, n);
    p[n] = '\0';
  }
  return p;
}

static void arm(long k) {
  fail_at = k;
  counted = 0;
  failure_hit = 0;
  lock_live();
  memset(live_during, 0, sizeof live_during);
  live_count = 0;
  unlock_live();
  armed = 1;
}

static void disarm(void) { armed = 0; }


/* ---- the leak check: which tracked blocks are still reachable ----------------- */

/* Like LeakSanitizer: a block allocated during the path and still live at its
 * end is a leak unless a pointer to it (or into it) is found in the writable
 * data of a loaded object other than this program (the library's globals: the
 * loader's table, the database's entries) or in this thread's thread-local
 * variables of those objects, directly or through other reachable blocks
 * (of any age). The stack is not scanned: the path has returned. */
typedef struct block {
  uintptr_t lo, hi;
  const void *caller;
  int during;
  int marked;
} block;

static block blocks[LIVE_SLOTS];
static size_t n_blocks;
static block *work[LIVE_SLOTS];
static size_t n_work;

static int cmp_block(const void *a, const void *b) {
  uintptr_t x = ((const block *)a)->lo, y = ((const block *)b)->lo;
  return x < y ? -1 : x > y;
}

static void mark_value(uintptr_t v) {
  size_t lo = 0, hi = n_blocks;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (v < blocks[mid].lo) hi = mid;
    else if (v >= blocks[mid].hi) lo = mid + 1;
    else {
      if (!blocks[mid].marked) {
        blocks[mid].marked = 1;
        work[n_work++] = &blocks[mid];
      }
      return;
    }
  }
}

/* Reads other objects' memory word by word, redzones included under ASan. */
__attribute__((no_sanitize("address"))) static void scan_range(uintptr_t lo, uintptr_t hi) {
  lo = (lo + sizeof(uintptr_t) - 1) & ~(uintptr_t)(sizeof(uintptr_t) - 1);
  for (uintptr_t a = lo; a + sizeof(uintptr_t) <= hi; a += sizeof(uintptr_t))
    mark_value(*(const uintptr_t *)a);
}

static int scan_object(struct dl_phdr_info *info, size_t size, void *first) {
  (void)size;
  if (*(int *)first) { /* the first object is this program */
    *(int *)first = 0;
    return 0;
  }
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W))
      scan_range(info->dlpi_addr + ph->p_vaddr, info->dlpi_addr + ph->p_vaddr + ph->p_memsz);
    /* This thread's thread-local variables of the object (the C library
     * keeps dlerror's message there). */
    if (ph->p_type == PT_TLS && info->dlpi_tls_data != NULL)
      scan_range((uintptr_t)info->dlpi_tls_data, (uintptr_t)info->dlpi_tls_data + ph->p_memsz);
  }
  return 0;
}

/* The number of blocks made during the path that nothing reachable points
 * to; `held` (may be NULL) is what the test itself still holds (its context,
 * plan and buffers), a root like the globals. */
static size_t unreachable_blocks(const void *held, size_t held_bytes) {
  n_blocks = 0;
  lock_live();
  for (size_t i = 0; i < LIVE_SLOTS; i++)
    if (live_set[i] != NULL && live_set[i] != TOMBSTONE) {
      uintptr_t p = (uintptr_t)live_set[i];
      size_t n = malloc_usable_size(live_set[i]);
      blocks[n_blocks++] = (block){p, p + (n ? n : 1), live_caller[i], live_during[i], 0};
    }
  unlock_live();
  qsort(blocks, n_blocks, sizeof blocks[0], cmp_block);
  n_work = 0;
  int first = 1;
  dl_iterate_phdr(scan_object, &first);
  /* What the C library and the loader allocated before main() lives in the
   * arena (this program's memory, but not its data). */
  scan_range((uintptr_t)boot_arena, (uintptr_t)(boot_arena + boot_used));
  if (held != NULL) scan_range((uintptr_t)held, (uintptr_t)held + held_bytes);
  while (n_work > 0) {
    block *b = work[--n_work];
    scan_range(b->lo, b->hi);
  }
  size_t leaked = 0;
  for (size_t i = 0; i < n_blocks; i++) {
    if (blocks[i].marked || !blocks[i].during) continue;
    leaked++;
    /* Where it was allocated, on stderr (in the test's log). */
    Dl_info info;
    if (dladdr(blocks[i].caller, &info) != 0 && info.dli_fname != NULL)
      fprintf(stderr, "# unreachable block of %zu bytes allocated from %s (%s+%#lx)\n",
              (size_t)(blocks[i].hi - blocks[i].lo), info.dli_fname,
              info.dli_sname ? info.dli_sname : "?",
              (unsigned long)((uintptr_t)blocks[i].caller -
                              (uintptr_t)(info.dli_saddr ? info.dli_saddr : info.dli_fbase)));
  }
  return leaked;
}

/* ---- the scenarios ------------------------------------------------------------ */

/* What a path leaves for the report. */
typedef struct outcome {
  adnn_status status;
  char message[512];
} outcome;

static void record(outcome *o, adnn_status st) {
  if (o->status != ADNN_STATUS_SUCCESS) return; /* the first failure counts */
  o->status = st;
  if (st != ADNN_STATUS_SUCCESS) {
    const char *m = adnn_last_error();
    snprintf(o->message, sizeof o->message, "%s", m ? m : "");
  }
}

/* One op's small plan: descriptors, and the byte sizes of its buffers. */
typedef struct op_buffers {
  size_t n_inputs;
  size_t in_bytes[5];
  size_t out_bytes;
} op_buffers;

static size_t span_of(const adnn_tensor_desc *t) {
  size_t b = 0;
  (void)adnn_tensor_desc_span_bytes(t, &b);
  return b;
}

static void packed(adnn_tensor_desc *t, int rank, const int64_t *dims) {
  (void)adnn_tensor_desc_init(t, ADNN_DTYPE_F32, rank, dims);
}

#define N_OPS 10
static const char *const op_names[N_OPS] = {"conv2d", "pool2d",   "activation", "softmax",
                                            "batchnorm", "norm", "binary",     "reduce",
                                            "softmax_cross_entropy", "matmul"};

static adnn_status create_op(adnn_context *ctx, int op, adnn_plan **plan, op_buffers *b) {
  memset(b, 0, sizeof *b);
  switch (op) {
    case 0: {
      adnn_conv2d_desc d;
      adnn_conv2d_desc_init(&d);
      packed(&d.x, 4, (int64_t[]){1, 2, 5, 5});
      packed(&d.w, 4, (int64_t[]){3, 2, 3, 3});
      packed(&d.bias, 1, (int64_t[]){3});
      packed(&d.y, 4, (int64_t[]){1, 3, 5, 5});
      d.has_bias = 1;
      d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
      d.activation.kind = ADNN_ACTIVATION_RELU;
      *b = (op_buffers){3, {span_of(&d.x), span_of(&d.w), span_of(&d.bias)}, span_of(&d.y)};
      return adnn_plan_create_conv2d(ctx, &d, plan);
    }
    case 1: {
      adnn_pool2d_desc d;
      adnn_pool2d_desc_init(&d);
      packed(&d.x, 4, (int64_t[]){1, 2, 4, 4});
      packed(&d.y, 4, (int64_t[]){1, 2, 2, 2});
      d.kind = ADNN_POOL_AVG_EXCLUDE_PAD;
      d.kernel_h = d.kernel_w = d.stride_h = d.stride_w = 2;
      *b = (op_buffers){1, {span_of(&d.x)}, span_of(&d.y)};
      return adnn_plan_create_pool2d(ctx, &d, plan);
    }
    case 2: {
      adnn_activation_desc d;
      adnn_activation_desc_init(&d);
      packed(&d.x, 3, (int64_t[]){2, 3, 4});
      d.y = d.x;
      d.activation.kind = ADNN_ACTIVATION_GELU;
      *b = (op_buffers){1, {span_of(&d.x)}, span_of(&d.y)};
      return adnn_plan_create_activation(ctx, &d, plan);
    }
    case 3: {
      adnn_softmax_desc d;
      adnn_softmax_desc_init(&d);
      packed(&d.x, 2, (int64_t[]){2, 5});
      d.y = d.x;
      *b = (op_buffers){1, {span_of(&d.x)}, span_of(&d.y)};
      return adnn_plan_create_softmax(ctx, &d, plan);
    }
    case 4: {
      adnn_batchnorm_desc d;
      adnn_batchnorm_desc_init(&d);
      packed(&d.x, 4, (int64_t[]){1, 3, 2, 2});
      d.y = d.x;
      size_t c = 3 * sizeof(float);
      *b = (op_buffers){5, {span_of(&d.x), c, c, c, c}, span_of(&d.y)};
      return adnn_plan_create_batchnorm(ctx, &d, plan);
    }
    case 5: {
      adnn_norm_desc d;
      adnn_norm_desc_init(&d);
      packed(&d.x, 2, (int64_t[]){2, 6});
      d.y = d.x;
      d.has_gain = d.has_bias = 1;
      size_t v = 6 * sizeof(float);
      *b = (op_buffers){3, {span_of(&d.x), v, v}, span_of(&d.y)};
      return adnn_plan_create_norm(ctx, &d, plan);
    }
    case 6: {
      adnn_binary_desc d;
      adnn_binary_desc_init(&d);
      packed(&d.a, 2, (int64_t[]){2, 3});
      packed(&d.b, 1, (int64_t[]){3});
      packed(&d.y, 2, (int64_t[]){2, 3});
      d.op = ADNN_BINARY_MUL;
      *b = (op_buffers){2, {span_of(&d.a), span_of(&d.b)}, span_of(&d.y)};
      return adnn_plan_create_binary(ctx, &d, plan);
    }
    case 7: {
      adnn_reduce_desc d;
      adnn_reduce_desc_init(&d);
      packed(&d.x, 3, (int64_t[]){2, 3, 4});
      packed(&d.y, 2, (int64_t[]){2, 4});
      d.kind = ADNN_REDUCE_MEAN;
      d.axes = ADNN_REDUCE_AXIS(1);
      *b = (op_buffers){1, {span_of(&d.x)}, span_of(&d.y)};
      return adnn_plan_create_reduce(ctx, &d, plan);
    }
    case 8: {
      adnn_softmax_cross_entropy_desc d;
      adnn_softmax_cross_entropy_desc_init(&d);
      packed(&d.logits, 2, (int64_t[]){3, 5});
      (void)adnn_tensor_desc_init(&d.labels, ADNN_DTYPE_I32, 1, (int64_t[]){3});
      packed(&d.loss, 0, NULL);
      *b = (op_buffers){2, {span_of(&d.logits), span_of(&d.labels)}, span_of(&d.loss)};
      return adnn_plan_create_softmax_cross_entropy(ctx, &d, plan);
    }
    case 9: {
      /* With a bias, a separate residual and an activation: the CPU path's
       * tiles, its epilogue and its single-threaded OpenBLAS region. */
      adnn_matmul_desc d;
      adnn_matmul_desc_init(&d);
      packed(&d.a, 3, (int64_t[]){2, 5, 4});
      packed(&d.b, 2, (int64_t[]){4, 3});
      packed(&d.y, 3, (int64_t[]){2, 5, 3});
      packed(&d.bias, 1, (int64_t[]){3});
      d.residual = d.y;
      d.has_bias = d.has_residual = 1;
      d.activation.kind = ADNN_ACTIVATION_GELU;
      *b = (op_buffers){4, {span_of(&d.a), span_of(&d.b), span_of(&d.bias), span_of(&d.residual)},
                        span_of(&d.y)};
      return adnn_plan_create_matmul(ctx, &d, plan);
    }
    default: {
      /* More tensors than the core's inline spans: its io grows, and the plan
       * copies the sizes (creation only: the step has 12 outputs). */
      static const int64_t sizes[12] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8};
      adnn_optimizer_desc d;
      adnn_optimizer_desc_init(&d);
      d.tensor_count = 12;
      d.sizes = sizes;
      return adnn_plan_create_optimizer(ctx, &d, plan);
    }
  }
}

enum kind { LOADER, CONTEXT, MEMORY, GEMM, CREATE, EXECUTE, PERFDB_STORE, PERFDB_LOAD };

typedef struct scenario {
  enum kind kind;
  int op; /* CREATE, EXECUTE */
  char name[64];
  /* A known failure, owned by another change: reported as TAP TODO (the
   * suite stays green, the log shows every bad k); once fixed, the TODO
   * passes unexpectedly and the driver fails until it is removed here. */
  const char *todo;
} scenario;

/* Device buffers of a scenario, allocated unarmed. */
typedef struct setup {
  adnn_context *ctx;
  adnn_plan *plan;
  op_buffers sizes;
  void *in[5], *out;
} setup;

static void fill(adnn_context *ctx, void *p, size_t bytes, unsigned seed) {
  float host[256];
  for (size_t i = 0; i < 256; i++) host[i] = (float)((i * 37u + seed) % 17u) / 8.0f - 1.0f;
  for (size_t off = 0; off < bytes; off += sizeof host) {
    size_t n = bytes - off < sizeof host ? bytes - off : sizeof host;
    (void)adnn_memcpy(ctx, (char *)p + off, host, n, ADNN_MEMCPY_HOST_TO_DEVICE);
  }
}

static int do_setup(const scenario *s, setup *u) {
  memset(u, 0, sizeof *u);
  if (s->kind == LOADER || s->kind == CONTEXT) return 1;
  if (adnn_context_create("cpu", &u->ctx) != ADNN_STATUS_SUCCESS) return 0;
  if (s->kind == GEMM) {
    u->sizes = (op_buffers){2, {64 * 64 * 4, 64 * 64 * 4}, 64 * 64 * 4};
  } else if (s->kind == EXECUTE) {
    if (create_op(u->ctx, s->op, &u->plan, &u->sizes) != ADNN_STATUS_SUCCESS) return 0;
  } else {
    return 1;
  }
  for (size_t i = 0; i < u->sizes.n_inputs; i++) {
    if (adnn_malloc(u->ctx, u->sizes.in_bytes[i], &u->in[i]) != ADNN_STATUS_SUCCESS) return 0;
    fill(u->ctx, u->in[i], u->sizes.in_bytes[i], (unsigned)i);
  }
  if (adnn_malloc(u->ctx, u->sizes.out_bytes, &u->out) != ADNN_STATUS_SUCCESS) return 0;
  return 1;
}

static void do_cleanup(setup *u) {
  if (u->ctx == NULL) return;
  for (size_t i = 0; i < 5; i++)
    if (u->in[i]) (void)adnn_free(u->ctx, u->in[i]);
  if (u->out) (void)adnn_free(u->ctx, u->out);
  adnn_plan_destroy(u->plan);
  adnn_context_destroy(u->ctx);
}

/* The path under test: only public calls, cleaning up what it creates. */
static void run_path(const scenario *s, setup *u, outcome *o) {
  switch (s->kind) {
    case LOADER: {
      size_t count = 0;
      record(o, adnn_backend_count(&count));
      for (size_t i = 0; i < count; i++) {
        const adnn_backend_info *info = NULL;
        record(o, adnn_backend_get(i, &info));
      }
      const char *name = NULL, *reason = NULL;
      record(o, adnn_backend_auto_choice(&name, &reason));
      break;
    }
    case CONTEXT: {
      adnn_context *ctx = NULL;
      record(o, adnn_context_create("cpu", &ctx));
      adnn_context_destroy(ctx);
      break;
    }
    case MEMORY: {
      void *p = NULL;
      char host[256] = {1};
      adnn_status st = adnn_malloc(u->ctx, sizeof host, &p);
      record(o, st);
      if (st != ADNN_STATUS_SUCCESS) break;
      record(o, adnn_memset(u->ctx, p, 0, sizeof host));
      record(o, adnn_memcpy(u->ctx, p, host, sizeof host, ADNN_MEMCPY_HOST_TO_DEVICE));
      record(o, adnn_memcpy(u->ctx, host, p, sizeof host, ADNN_MEMCPY_DEVICE_TO_HOST));
      record(o, adnn_free(u->ctx, p));
      break;
    }
    case GEMM:
      record(o, adnn_gemm(u->ctx, ADNN_DTYPE_F32, ADNN_NO_TRANS, ADNN_NO_TRANS, 64, 64,
                          64, 1.0, u->in[0], 64, u->in[1], 64, 0.5, u->out, 64));
      record(o, adnn_context_synchronize(u->ctx));
      break;
    case CREATE:
    case PERFDB_STORE:
    case PERFDB_LOAD: {
      adnn_plan *plan = NULL;
      op_buffers b;
      record(o, create_op(u->ctx, s->op, &plan, &b));
      adnn_plan_destroy(plan);
      break;
    }
    case EXECUTE:
      record(o, adnn_plan_execute(u->plan, (const void *const *)u->in, u->sizes.n_inputs, u->out));
      record(o, adnn_context_synchronize(u->ctx));
      break;
  }
}

/* The child's report, written to the pipe. */
typedef struct report {
  int setup_ok;
  int hit;
  long counted;
  size_t live;
  size_t leaked;
  adnn_status status;
  char message[512];
} report;

static char perfdb_template[4096]; /* a database file for PERFDB_LOAD */

static void child(const scenario *s, long k, int fd) {
  report r;
  memset(&r, 0, sizeof r);
  char cache[4096] = "";
  /* Tuning only where the database is the subject; a fresh cache each time. */
  if (s->kind == PERFDB_STORE || s->kind == PERFDB_LOAD) {
    unsetenv("ADNN_TUNE");
    if (tmpdir_make(cache, sizeof cache, "adnn-allocfail")) {
      setenv("ADNN_CACHE_DIR", cache, 1);
      if (s->kind == PERFDB_LOAD) {
        char dst[4200], buf[8192];
        snprintf(dst, sizeof dst, "%s/perfdb.txt", cache);
        FILE *in = fopen(perfdb_template, "rb"), *out = fopen(dst, "wb");
        size_t n;
        while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
        if (in) fclose(in);
        if (out) fclose(out);
      }
    }
  } else {
    setenv("ADNN_TUNE", "off", 1);
  }
  if (s->kind != LOADER) {
    adnn_context *warm = NULL;
    if (adnn_context_create("cpu", &warm) == ADNN_STATUS_SUCCESS) adnn_context_destroy(warm);
  }
  setup u;
  r.setup_ok = do_setup(s, &u);
  if (r.setup_ok) {
    outcome o = {ADNN_STATUS_SUCCESS, ""};
    arm(k);
    run_path(s, &u, &o);
    disarm();
    r.hit = failure_hit;
    r.counted = counted;
    r.live = live_count;
    r.leaked = unreachable_blocks(&u, sizeof u);
    r.status = o.status;
    snprintf(r.message, sizeof r.message, "%s", o.message);
  }
  do_cleanup(&u);
  if (s->kind == PERFDB_STORE && k == 0 && perfdb_template[0] != '\0') {
    /* The uninjected store run leaves the template for PERFDB_LOAD. */
    char src[4200];
    snprintf(src, sizeof src, "%s/perfdb.txt", cache);
    if (rename(src, perfdb_template) != 0) r.setup_ok = 0;
  }
  if (cache[0] != '\0') tmpdir_remove(cache);
  if (write(fd, &r, sizeof r) != (ssize_t)sizeof r) _exit(3);
  _exit(0);
}

/* Runs one k in a child; returns 0 and fills *r, or -1 with why in `why`. */
static int run_child(const scenario *s, long k, report *r, char *why, size_t whylen) {
  int fds[2];
  if (pipe(fds) != 0) {
    snprintf(why, whylen, "pipe: %s", strerror(errno));
    return -1;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    child(s, k, fds[1]);
  }
  close(fds[1]);
  ssize_t got = read(fds[0], r, sizeof *r);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    snprintf(why, whylen, "k=%ld: the child died of signal %d (%s)", k, WTERMSIG(status),
             strsignal(WTERMSIG(status)));
    return -1;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != (ssize_t)sizeof *r) {
    snprintf(why, whylen, "k=%ld: the child exited with status %d before reporting", k,
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return -1;
  }
  return 0;
}

#define MAX_K 20000

static void check_scenario(const scenario *s) {
  char why[1024];
  report base;
  memset(&base, 0, sizeof base);
  int rc = run_child(s, 0, &base, why, sizeof why);
  if (rc == 0 && base.setup_ok && base.leaked > 0) {
    ok(0, "%s: the uninjected run leaks %zu of %zu blocks", s->name, base.leaked, base.live);
    return;
  }
  if (rc != 0 || !base.setup_ok || base.status != ADNN_STATUS_SUCCESS) {
    ok(0, "%s: the uninjected run succeeds (%s%s%s)", s->name,
       rc != 0 ? why : !base.setup_ok ? "setup failed" : adnn_status_name(base.status),
       rc == 0 && base.setup_ok ? ": " : "", rc == 0 && base.setup_ok ? base.message : "");
    return;
  }
  if (base.counted == 0 && (s->kind == LOADER || s->kind == CONTEXT || s->kind == CREATE ||
                            s->kind == PERFDB_STORE || s->kind == PERFDB_LOAD)) {
    ok(0, "%s: the path allocates (the shim saw no allocation: not interposed?)", s->name);
    return;
  }
  int bad = 0;
  long k;
  for (k = 1; k <= MAX_K; k++) {
    report r;
    const char *problem = NULL;
    if (run_child(s, k, &r, why, sizeof why) != 0) problem = why;
    else if (!r.setup_ok) problem = "setup failed";
    if (problem == NULL && !r.hit) break; /* the path completed: every k was tried */
    if (problem == NULL) {
      if (r.status != ADNN_STATUS_SUCCESS && r.status != ADNN_STATUS_OUT_OF_MEMORY) {
        snprintf(why, sizeof why, "k=%ld: status %s, not OUT_OF_MEMORY: %s", k,
                 adnn_status_name(r.status), r.message);
        problem = why;
      } else if (r.status != ADNN_STATUS_SUCCESS && r.message[0] == '\0') {
        snprintf(why, sizeof why, "k=%ld: %s without a message", k, adnn_status_name(r.status));
        problem = why;
      } else if (r.leaked > 0) {
        snprintf(why, sizeof why,
                 "k=%ld: %zu of the %zu blocks the path left allocated are unreachable: a leak "
                 "(status %s%s%s)",
                 k, r.leaked, r.live, adnn_status_name(r.status), r.message[0] ? ": " : "",
                 r.message);
        problem = why;
      }
    }
    if (problem != NULL) {
      if (bad++ < 40) diag("%s: %s", s->name, problem);
    }
  }
  char what[512];
  snprintf(what, sizeof what,
           "%s: each of its %ld allocations failed in turn: no crash, OUT_OF_MEMORY with a "
           "message or success, no leak (%d bad)",
           s->name, base.counted, bad);
  if (s->todo != NULL) {
    /* tap.h has no TODO: count the line without counting a failure. */
    tap_count_++;
    printf("%s %d - %s # TODO %s\n", bad == 0 && k <= MAX_K ? "ok" : "not ok", tap_count_, what,
           s->todo);
    return;
  }
  ok(bad == 0 && k <= MAX_K, "%s", what);
}

int main(void) {
  main_started = 1;
  resolve();
  /* One thread per context keeps the children quick to start. */
  setenv("ADNN_NUM_THREADS", "1", 1);
  /* Only the CPU plugin: dlopen of the CUDA plugin loads cuBLAS and cuDNN,
   * whose thousands of allocations would each cost a child process (tens of
   * minutes in all), and a failure inside NVIDIA's libraries is as far out of
   * scope as one inside OpenBLAS. Keep the ADNN_PLUGIN_PATH entries that hold
   * adnn-cpu.so. */
  const char *path = getenv("ADNN_PLUGIN_PATH");
  if (path != NULL) {
    char kept[8192] = "", entry[4096], probe[4200];
    for (const char *q = path; *q != '\0';) {
      size_t len = strcspn(q, ":");
      if (len > 0 && len < sizeof entry) {
        memcpy(entry, q, len);
        entry[len] = '\0';
        snprintf(probe, sizeof probe, "%s/adnn-cpu.so", entry);
        if (access(probe, R_OK) == 0 && strlen(kept) + len + 2 < sizeof kept) {
          if (kept[0] != '\0') strcat(kept, ":");
          strcat(kept, entry);
        }
      }
      q += len;
      if (*q == ':') q++;
    }
    if (kept[0] != '\0') setenv("ADNN_PLUGIN_PATH", kept, 1);
  }
  /* Under valgrind (make check-valgrind), which checks leaks itself, a
   * thousand forked children each starting OpenBLAS would take far too long. */
  const char *preload = getenv("LD_PRELOAD");
  if (preload != NULL && strstr(preload, "vgpreload") != NULL)
    return tap_skip_all("under valgrind: memcheck checks leaks, and a child per k is too slow");
  /* backtrace loads its unwinder on first use: do that now, unarmed. */
  void *frames[4];
  (void)backtrace(frames, 4);
  /* Self-test: the shim is in place (under valgrind, say, it is not). */
  arm(1);
  void *p = malloc(16);
  disarm();
  if (p != NULL) {
    free(p);
    return tap_skip_all("malloc is not interposed in this process (valgrind?)");
  }
  arm(0);
  p = strdup("x");
  disarm();
  ok(p != NULL && live_count == 1, "the shim tracks a live block (%zu)", live_count);
  ok(unreachable_blocks(NULL, 0) == 1, "a block only this program points to counts as leaked");
  free(p);
  ok(live_count == 0, "and forgets it when freed (%zu)", live_count);

  char dbdir[4096];
  if (!tmpdir_make(dbdir, sizeof dbdir, "adnn-allocfail-db")) tap_bail("no temporary directory");
  if (snprintf(perfdb_template, sizeof perfdb_template, "%s/template.txt", dbdir) >=
      (int)sizeof perfdb_template)
    tap_bail("temporary directory name too long");

  scenario list[4 + 2 * N_OPS + 3];
  size_t n = 0;
  list[n++] = (scenario){LOADER, 0, "backend enumeration (loader init)",
                         "core/loader.c: an allocation failure while scanning drops the plugin "
                         "(BACKEND_UNAVAILABLE 'no backend plugin was found', not "
                         "OUT_OF_MEMORY) and leaks its record when the list cannot grow"};
  list[n++] = (scenario){CONTEXT, 0, "adnn_context_create + destroy", NULL};
  list[n++] = (scenario){MEMORY, 0, "adnn_malloc, memset, memcpy, free", NULL};
  list[n++] = (scenario){GEMM, 0, "adnn_gemm 64x64x64", NULL};
  for (int op = 0; op < N_OPS; op++) {
    scenario c = {CREATE, op, "", NULL}, e = {EXECUTE, op, "", NULL};
    snprintf(c.name, sizeof c.name, "adnn_plan_create_%s + destroy", op_names[op]);
    snprintf(e.name, sizeof e.name, "adnn_plan_execute (%s)", op_names[op]);
    list[n++] = c;
    list[n++] = e;
  }
  list[n++] = (scenario){CREATE, N_OPS, "adnn_plan_create_optimizer (12 tensors) + destroy", NULL};
  /* The store run first: its uninjected run writes the template the load run
   * reads. */
  list[n++] = (scenario){PERFDB_STORE, 0, "tuned conv2d plan, perf DB store", NULL};
  list[n++] = (scenario){PERFDB_LOAD, 0, "tuned conv2d plan, perf DB load", NULL};
  for (size_t i = 0; i < n; i++) check_scenario(&list[i]);
  tmpdir_remove(dbdir);
  return tap_done();
}
