/*
 * adnn: deep-learning and linear-algebra primitives behind one stable C ABI.
 *
 * This is the only header an application needs. It declares the stable API:
 * version and status queries, logging, backend enumeration, contexts, memory,
 * tensor descriptors and GEMM. Everything here follows the same rules:
 *
 *  - Every fallible function returns an adnn_status. On failure it also stores a
 *    specific, human-readable message for the calling thread, readable with
 *    adnn_last_error(). The library never aborts, exits or prints, except through
 *    the logging described below.
 *  - Functions that create an object write their out-parameter only on success.
 *    Destroy functions accept NULL.
 *  - Sizes, dimensions, leading dimensions and strides are counted in elements,
 *    not bytes, unless a parameter name says "bytes".
 *  - Matrices are row-major (C order, like NumPy).
 *
 * Thread safety: unless a declaration says otherwise, functions may be called from
 * any thread. A context may be used by one thread at a time; distinct contexts may
 * be used concurrently.
 *
 * Handles are checked: every function that takes a context or a plan looks it up
 * in a process-wide registry of live handles (a read-locked binary search) before
 * using it, and answers ADNN_STATUS_BAD_PARAM_HANDLE for one that was destroyed or
 * never created. A destroyed handle whose address a later create of the same type
 * reuses is indistinguishable from the new one. Device pointers are checked too
 * (see adnn_malloc and ADNN_CONTEXT_UNCHECKED_POINTERS).
 */
#ifndef ADNN_H
#define ADNN_H

#include <stddef.h>
#include <stdint.h>

#include <adnn/status.h>
#include <adnn/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Marks the public, exported functions. Everything else is hidden. */
#if defined(ADNN_BUILDING_LIBRARY) && defined(__GNUC__)
#define ADNN_API __attribute__((visibility("default")))
#else
#define ADNN_API
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                   */
/* ------------------------------------------------------------------------ */

/** The library's version string, e.g. "0.1.0". Never NULL. Thread-safe. */
ADNN_API const char *adnn_version_string(void);

/** The library's version as major * 10000 + minor * 100 + patch (see ADNN_VERSION).
 *  Compare it with ADNN_VERSION to detect a header/library mismatch. Thread-safe. */
ADNN_API unsigned adnn_version(void);

/* ------------------------------------------------------------------------ */
/* Status and errors                                                         */
/* ------------------------------------------------------------------------ */

/** The enumerator's name without prefix, e.g. "BAD_PARAM"; "UNKNOWN_STATUS" for a
 *  value that is not a status. Never NULL. Thread-safe. */
ADNN_API const char *adnn_status_name(adnn_status status);

/** A short generic description of a status ("invalid argument"). Never NULL.
 *  Thread-safe. */
ADNN_API const char *adnn_status_string(adnn_status status);

/** The message of the most recent failed adnn call on the calling thread, naming
 *  the function and the problem, e.g. "adnn_gemm: lda (3) is smaller than the row
 *  length of a (4)". Successful calls leave it unchanged; it is "" before
 *  the first failure. The pointer stays valid until the next adnn call on the same
 *  thread. Never NULL. Thread-safe (the message is thread-local). */
ADNN_API const char *adnn_last_error(void);

/** The status of the most recent failed adnn call on the calling thread
 *  (ADNN_STATUS_SUCCESS before the first failure). Thread-safe. */
ADNN_API adnn_status adnn_last_status(void);

/* ------------------------------------------------------------------------ */
/* Logging                                                                   */
/* ------------------------------------------------------------------------ */

/** Log levels, from quiet to verbose. */
typedef enum adnn_log_level {
  ADNN_LOG_OFF = 0,
  ADNN_LOG_ERROR = 1,
  ADNN_LOG_WARN = 2, /**< the default: problems a user should know about */
  ADNN_LOG_INFO = 3,
  ADNN_LOG_DEBUG = 4
} adnn_log_level;

/** A log sink. `source` is "core" or a plugin name; `message` has no trailing
 *  newline. The callback may be called from any thread, concurrently. */
typedef void (*adnn_log_callback)(adnn_log_level level, const char *source,
                                  const char *message, void *user_data);

/** Sets the most verbose level that is emitted. The initial level comes from the
 *  environment variable ADNN_LOG (off, error, warn, info, debug), else WARN.
 *  Returns ADNN_STATUS_BAD_PARAM for a value outside the enum. Thread-safe. */
ADNN_API adnn_status adnn_log_set_level(adnn_log_level level);

/** The current log level. Thread-safe. */
ADNN_API adnn_log_level adnn_log_get_level(void);

/** Installs a log callback that receives messages instead of stderr; NULL restores
 *  stderr. Always returns ADNN_STATUS_SUCCESS. Thread-safe, but a callback may
 *  still be running on another thread when this returns. */
ADNN_API adnn_status adnn_log_set_callback(adnn_log_callback callback, void *user_data);

/* ------------------------------------------------------------------------ */
/* Data types                                                                */
/* ------------------------------------------------------------------------ */

/** Element types. Values are stable. Not every op supports every type; an
 *  unsupported one gives ADNN_STATUS_NOT_SUPPORTED. */
typedef enum adnn_dtype {
  ADNN_DTYPE_F32 = 1,
  ADNN_DTYPE_F64 = 2,
  ADNN_DTYPE_F16 = 3,
  ADNN_DTYPE_BF16 = 4,
  ADNN_DTYPE_I8 = 5,
  ADNN_DTYPE_I32 = 6,
  ADNN_DTYPE_U8 = 7 /**< since 0.2.0 */
} adnn_dtype;

/** The size in bytes of one element of `dtype`, or 0 for a value that is not a
 *  dtype. Thread-safe. */
ADNN_API size_t adnn_dtype_size(adnn_dtype dtype);

/** The dtype's name ("f32"), or "unknown". Never NULL. Thread-safe. */
ADNN_API const char *adnn_dtype_name(adnn_dtype dtype);

/* ------------------------------------------------------------------------ */
/* Backends and plugins                                                      */
/* ------------------------------------------------------------------------ */

/** The state of a plugin found on the search path. Values are stable. */
typedef enum adnn_backend_state {
  ADNN_BACKEND_READY = 0,        /**< usable: contexts can be created on it */
  ADNN_BACKEND_UNAVAILABLE = 1,  /**< loaded, but this machine cannot run it (no driver, no device) */
  ADNN_BACKEND_INCOMPATIBLE = 2, /**< loaded, but a driver or library version does not fit */
  ADNN_BACKEND_LOAD_FAILED = 3   /**< the file could not be loaded as an adnn plugin */
} adnn_backend_state;

/** The state's token as adnn-info and its --json output print it: "ready",
 *  "unavailable", "incompatible", "load-failed"; "unknown" for a value that is
 *  not an adnn_backend_state. Never NULL. Thread-safe. */
ADNN_API const char *adnn_backend_state_name(adnn_backend_state state);

/** One "key = value" fact about a backend or device ("openblas" = "0.3.21"). */
typedef struct adnn_property {
  const char *key;
  const char *value;
} adnn_property;

/** A device of a backend. Owned by the library; valid until the process exits.
 *  Fields may be appended in later versions (check struct_size). */
typedef struct adnn_device_info {
  size_t struct_size;             /**< sizeof the struct as the library filled it */
  int index;                      /**< the N of "backend:N" */
  const char *name;               /**< e.g. "NVIDIA H200" or the CPU model */
  size_t property_count;          /**< number of entries in properties */
  const adnn_property *properties; /**< memory, compute capability, ISA... */
} adnn_device_info;

/** A plugin found on the search path. Owned by the library; valid until the
 *  process exits. Fields may be appended in later versions (check struct_size). */
typedef struct adnn_backend_info {
  size_t struct_size;       /**< sizeof the struct as the library filled it */
  const char *name;         /**< backend name ("cpu", "cuda"); the file name when it failed to load */
  const char *path;         /**< the plugin file */
  adnn_backend_state state; /**< see adnn_backend_state */
  int score;                /**< probe score; higher is preferred by "auto"; 0 when not ready */
  const char *reason;       /**< why it is in this state, and what to do about it */
  const char *version;      /**< the plugin's own version string ("" when unknown) */
  size_t property_count;    /**< number of entries in properties */
  const adnn_property *properties; /**< versions of the libraries and drivers it uses */
  size_t device_count;      /**< number of usable devices */
  const adnn_device_info *devices;
} adnn_backend_info;

/** Number of plugins found on the search path, whatever their state. The first
 *  call of any backend or context function loads and probes the plugins once per
 *  process. Returns ADNN_STATUS_BAD_PARAM_NULL if count is NULL. Thread-safe. */
ADNN_API adnn_status adnn_backend_count(size_t *count);

/** Information about plugin `index` (0 <= index < adnn_backend_count). The order
 *  is the search order. Returns ADNN_STATUS_BAD_PARAM_NULL if info is NULL,
 *  ADNN_STATUS_BAD_PARAM if index is out of range. Thread-safe. */
ADNN_API adnn_status adnn_backend_get(size_t index, const adnn_backend_info **info);

/** What a context created with backend "auto" (or NULL) would use, and why.
 *  `*name` receives the backend name, `*reason` a sentence explaining the choice,
 *  including why better-scored plugins were passed over; either out-pointer may
 *  be NULL. The strings live until the process exits. Returns
 *  ADNN_STATUS_BACKEND_UNAVAILABLE when no backend is ready (then *name is "" and
 *  *reason says why). Honours ADNN_BACKEND. Thread-safe. */
ADNN_API adnn_status adnn_backend_auto_choice(const char **name, const char **reason);

/** The directories searched for plugins (colon-separated) and where that list
 *  came from ("ADNN_PLUGIN_PATH" or "compiled-in"); either out-pointer may be
 *  NULL. Strings live until the process exits. Always ADNN_STATUS_SUCCESS.
 *  Thread-safe. */
ADNN_API adnn_status adnn_backend_search_path(const char **path, const char **source);

/** The name of adnn_backend_search_path() in adnn 0.1, kept as an alias. */
ADNN_API adnn_status adnn_plugin_search_path(const char **path, const char **source);

/* ------------------------------------------------------------------------ */
/* Contexts                                                                  */
/* ------------------------------------------------------------------------ */

/** A context: one backend, one device, one stream of work. Opaque. */
typedef struct adnn_context adnn_context;

/** Creates a context on a backend.
 *
 *  backend: NULL or "auto" for the best ready backend ("" is refused as
 *  malformed) (the environment variable
 *  ADNN_BACKEND, when set to something other than "auto", replaces an automatic
 *  request and is then treated as explicit); "cpu"; "cuda" (device 0); "cuda:N".
 *  An explicit request never falls back to another backend.
 *
 *  Returns ADNN_STATUS_SUCCESS and writes *out; ADNN_STATUS_BAD_PARAM_NULL if out
 *  is NULL; ADNN_STATUS_BAD_PARAM for a malformed backend string or a device index
 *  out of range; ADNN_STATUS_BACKEND_UNAVAILABLE if no plugin of that name was
 *  found or it cannot run here; ADNN_STATUS_BACKEND_INCOMPATIBLE if it was found
 *  but a driver/library version does not fit; ADNN_STATUS_OUT_OF_MEMORY;
 *  ADNN_STATUS_DEVICE_OUT_OF_MEMORY or ADNN_STATUS_EXECUTION_FAILED when the
 *  backend cannot set up its device state. adnn_last_error() holds the reason.
 *  Thread-safe: may be called from many threads at once. */
ADNN_API adnn_status adnn_context_create(const char *backend, adnn_context **out);

/** Destroys a context: waits for its pending work, frees every allocation
 *  still owned by it, forgets the regions registered with adnn_memory_register
 *  (without freeing them) and releases the backend state of its plans, which
 *  stay as orphans: adnn_plan_execute refuses them ("its context was
 *  destroyed") and adnn_plan_destroy frees them. NULL is a no-op. A context
 *  that is not live (destroyed already, or never created) is left alone: the
 *  error is logged at ADNN_LOG_ERROR and recorded for adnn_last_error() with
 *  ADNN_STATUS_BAD_PARAM_HANDLE. The context must not be in use by another
 *  thread. */
ADNN_API void adnn_context_destroy(adnn_context *ctx);

/** The name of the backend the context runs on ("cpu", "cuda"); "" for NULL or a
 *  context that is not live (which also records ADNN_STATUS_BAD_PARAM_HANDLE
 *  for adnn_last_error()). Thread-safe. */
ADNN_API const char *adnn_context_get_backend(const adnn_context *ctx);

/** The device index within the backend (the N of "cuda:N"); -1 for NULL or a
 *  context that is not live (recording the error, as adnn_context_get_backend). */
ADNN_API int adnn_context_get_device(const adnn_context *ctx);

/** The names of adnn_context_get_backend() and adnn_context_get_device() in
 *  adnn 0.1, kept as aliases. */
ADNN_API const char *adnn_context_backend(const adnn_context *ctx);
ADNN_API int adnn_context_device(const adnn_context *ctx);

/** Waits until all work submitted to the context has finished. Returns
 *  ADNN_STATUS_BAD_PARAM_NULL for a NULL context, ADNN_STATUS_BAD_PARAM_HANDLE
 *  for one that is not live, ADNN_STATUS_EXECUTION_FAILED if queued work failed
 *  (asynchronous errors surface here). */
ADNN_API adnn_status adnn_context_synchronize(adnn_context *ctx);

/** Context flags (bits for adnn_context_set_flags). */
typedef enum adnn_context_flag {
  /** Allow reduced-precision tensor-core math for F32 (TF32 on NVIDIA GPUs).
   *  Off by default so that F32 results match the CPU within the documented
   *  tolerance. The environment variable ADNN_ALLOW_TF32=1 sets it at creation. */
  ADNN_CONTEXT_ALLOW_TF32 = 1u << 0,
  /** Turn off the device-pointer checks of adnn_gemm, adnn_gemm_batched,
   *  adnn_plan_execute, adnn_memcpy and adnn_memset (the handle checks stay).
   *  For programs that measured that the checks cost them too much
   *  (doc/performance.md): a wrong pointer then reads or writes out of bounds. */
  ADNN_CONTEXT_UNCHECKED_POINTERS = 1u << 1
} adnn_context_flag;

/** Replaces the context's flags (an OR of adnn_context_flag). Returns
 *  ADNN_STATUS_BAD_PARAM_NULL for a NULL context, ADNN_STATUS_BAD_PARAM_HANDLE
 *  for one that is not live, ADNN_STATUS_BAD_PARAM for an unknown bit. */
ADNN_API adnn_status adnn_context_set_flags(adnn_context *ctx, uint32_t flags);

/** The context's flags; 0 for NULL or a context that is not live (recording
 *  the error, as adnn_context_get_backend). */
ADNN_API uint32_t adnn_context_get_flags(const adnn_context *ctx);

/* ------------------------------------------------------------------------ */
/* Memory                                                                    */
/* ------------------------------------------------------------------------ */

/** Copy directions. "Device" means memory from adnn_malloc on the context, or a
 *  region registered with adnn_memory_register as ADNN_MEMORY_DEVICE (host
 *  memory on the CPU backend); "host" means any other memory, or a region
 *  registered as ADNN_MEMORY_HOST. */
typedef enum adnn_memcpy_kind {
  ADNN_MEMCPY_HOST_TO_DEVICE = 1,
  ADNN_MEMCPY_DEVICE_TO_HOST = 2,
  ADNN_MEMCPY_DEVICE_TO_DEVICE = 3,
  ADNN_MEMCPY_HOST_TO_HOST = 4
} adnn_memcpy_kind;

/** Allocates `bytes` of device memory (host memory on the CPU backend), aligned
 *  to at least 64 bytes, and writes it to *ptr.
 *
 *  The context records the allocation. Every device pointer later given to
 *  adnn_gemm, adnn_gemm_batched, adnn_plan_execute, adnn_memcpy or adnn_memset
 *  must lie inside one allocation (or registered region) of that context with
 *  enough bytes from there for what the call touches (a tensor's
 *  adnn_tensor_desc_span_bytes, a matrix's span, the copy); pointers inside an
 *  allocation (sub-tensors) are fine. Otherwise the call returns
 *  ADNN_STATUS_BAD_PARAM_MEMORY naming the argument, the bytes needed and the
 *  bytes available. The check is a binary search per pointer per call; the
 *  flag ADNN_CONTEXT_UNCHECKED_POINTERS turns it off.
 *
 *  Returns ADNN_STATUS_BAD_PARAM_NULL (ctx or ptr NULL),
 *  ADNN_STATUS_BAD_PARAM_HANDLE (ctx not live), ADNN_STATUS_BAD_PARAM
 *  (bytes == 0), ADNN_STATUS_BAD_PARAM_OVERFLOW (bytes above INT64_MAX),
 *  ADNN_STATUS_OUT_OF_MEMORY / ADNN_STATUS_DEVICE_OUT_OF_MEMORY. */
ADNN_API adnn_status adnn_malloc(adnn_context *ctx, size_t bytes, void **ptr);

/** Frees memory from adnn_malloc on the same context. NULL ptr is a no-op.
 *  Returns ADNN_STATUS_BAD_PARAM_NULL for a NULL ctx,
 *  ADNN_STATUS_BAD_PARAM_HANDLE for a ctx that is not live,
 *  ADNN_STATUS_BAD_PARAM_MEMORY for a region registered with
 *  adnn_memory_register (use adnn_memory_unregister) and
 *  ADNN_STATUS_BAD_PARAM_DOUBLE_FREE for a pointer this context did not allocate
 *  or already freed (nothing is freed then). */
ADNN_API adnn_status adnn_free(adnn_context *ctx, void *ptr);

/** Copies `bytes` bytes. Copies that involve host memory return when the host
 *  side may be reused (a device-to-host copy waits for the data). bytes == 0 is
 *  a no-op. The ranges must not overlap. The kind is checked against what the
 *  pointers are: a device side must lie in memory of the context with `bytes`
 *  from there, a host side must not be device memory of the context (on the
 *  CPU backend, host memory is plain memory the context does not know).
 *  Returns ADNN_STATUS_BAD_PARAM_NULL (ctx, dst or src NULL with bytes > 0),
 *  ADNN_STATUS_BAD_PARAM_HANDLE (ctx not live), ADNN_STATUS_BAD_PARAM (unknown
 *  kind, overlapping ranges), ADNN_STATUS_BAD_PARAM_OVERFLOW (a range wraps),
 *  ADNN_STATUS_BAD_PARAM_MEMORY (a side is not what the kind says, or too
 *  small), ADNN_STATUS_EXECUTION_FAILED (the device reported an error). */
ADNN_API adnn_status adnn_memcpy(adnn_context *ctx, void *dst, const void *src, size_t bytes,
                                 adnn_memcpy_kind kind);

/** Sets `bytes` bytes of device memory to the byte `value` (0..255).
 *  Returns ADNN_STATUS_BAD_PARAM_NULL, ADNN_STATUS_BAD_PARAM_HANDLE,
 *  ADNN_STATUS_BAD_PARAM (value outside 0..255), ADNN_STATUS_BAD_PARAM_OVERFLOW,
 *  ADNN_STATUS_BAD_PARAM_MEMORY (ptr is not device memory of the context with
 *  `bytes` from there), ADNN_STATUS_EXECUTION_FAILED. bytes == 0 is a no-op. */
ADNN_API adnn_status adnn_memset(adnn_context *ctx, void *ptr, int value, size_t bytes);

/** What registered memory is (adnn_memory_register). Values are stable. */
typedef enum adnn_memory_kind {
  /** Memory the context's operations can use directly: any host memory on the
   *  CPU backend (a NumPy array), device or managed memory of the context's
   *  GPU on the CUDA backend (a PyTorch CUDA tensor). */
  ADNN_MEMORY_DEVICE = 1,
  /** Host memory that serves only as the host side of adnn_memcpy (a pinned
   *  staging buffer, say); operations refuse it. */
  ADNN_MEMORY_HOST = 2
} adnn_memory_kind;

/** Makes `bytes` of memory the application owns, starting at `ptr`, known to
 *  the context, so that the pointer checks accept it without a copy (the
 *  DLPack import of the Python binding uses this). The memory stays the
 *  application's: adnn never frees it, adnn_context_destroy just forgets it,
 *  and it must stay valid until it is unregistered or the context destroyed.
 *  Registration does not pin or map memory. `flags` is reserved and must be 0.
 *
 *  The backend verifies what it can: the CUDA backend asks the CUDA runtime's
 *  pointer attributes that device memory is device or managed memory of the
 *  context's GPU, and that host memory is not device memory.
 *
 *  Returns ADNN_STATUS_SUCCESS; ADNN_STATUS_BAD_PARAM_NULL (ctx or ptr NULL);
 *  ADNN_STATUS_BAD_PARAM_HANDLE (ctx not live); ADNN_STATUS_BAD_PARAM (bytes 0,
 *  unknown kind, flags not 0, the backend says the memory is not of that kind,
 *  or it overlaps an allocation or a registered region of the context);
 *  ADNN_STATUS_BAD_PARAM_OVERFLOW (the range wraps around the address space);
 *  ADNN_STATUS_NOT_SUPPORTED (the backend cannot register memory);
 *  ADNN_STATUS_OUT_OF_MEMORY. */
ADNN_API adnn_status adnn_memory_register(adnn_context *ctx, void *ptr, size_t bytes,
                                          adnn_memory_kind kind, uint32_t flags);

/** Forgets a region registered with adnn_memory_register; `ptr` must be its
 *  base. The memory itself is left alone. Returns ADNN_STATUS_BAD_PARAM_NULL,
 *  ADNN_STATUS_BAD_PARAM_HANDLE, and ADNN_STATUS_BAD_PARAM_MEMORY for a pointer
 *  that is not the base of a registered region (memory from adnn_malloc is
 *  refused: use adnn_free). */
ADNN_API adnn_status adnn_memory_unregister(adnn_context *ctx, void *ptr);

/* ------------------------------------------------------------------------ */
/* Tensor descriptors                                                        */
/* ------------------------------------------------------------------------ */

#define ADNN_MAX_RANK 8

/** Describes the layout of a tensor in memory: element type, rank, dims and
 *  strides in elements. NCHW and NHWC are just different strides. A plain value
 *  type; its layout is frozen. Dims are >= 0; strides are >= 0 (a zero stride
 *  repeats an element, which only inputs may do). */
typedef struct adnn_tensor_desc {
  adnn_dtype dtype;
  int32_t rank; /**< 0..ADNN_MAX_RANK; rank 0 is a scalar */
  int64_t dims[ADNN_MAX_RANK];
  int64_t strides[ADNN_MAX_RANK];
} adnn_tensor_desc;

/** Fills *desc for a packed row-major tensor (the last dim varies fastest).
 *  Returns ADNN_STATUS_BAD_PARAM_NULL (desc NULL, or dims NULL with rank > 0),
 *  ADNN_STATUS_BAD_PARAM (unknown dtype, rank outside 0..8, negative dim),
 *  ADNN_STATUS_BAD_PARAM_OVERFLOW (the byte size does not fit in size_t).
 *  *desc is written only on success. */
ADNN_API adnn_status adnn_tensor_desc_init(adnn_tensor_desc *desc, adnn_dtype dtype, int rank,
                                           const int64_t *dims);

/** Fills *desc with explicit strides (in elements). Same statuses as
 *  adnn_tensor_desc_init, plus ADNN_STATUS_BAD_PARAM for a negative stride. */
ADNN_API adnn_status adnn_tensor_desc_init_strided(adnn_tensor_desc *desc, adnn_dtype dtype,
                                                   int rank, const int64_t *dims,
                                                   const int64_t *strides);

/** Checks a descriptor filled by hand: dtype, rank, non-negative dims and strides,
 *  no overflow of the byte span. Returns ADNN_STATUS_SUCCESS,
 *  ADNN_STATUS_BAD_PARAM_NULL, ADNN_STATUS_BAD_PARAM or
 *  ADNN_STATUS_BAD_PARAM_OVERFLOW. */
ADNN_API adnn_status adnn_tensor_desc_validate(const adnn_tensor_desc *desc);

/** The number of elements (the product of dims; 1 for rank 0). Returns the
 *  statuses of adnn_tensor_desc_validate and ADNN_STATUS_BAD_PARAM_NULL for a
 *  NULL out-pointer. */
ADNN_API adnn_status adnn_tensor_desc_element_count(const adnn_tensor_desc *desc, int64_t *count);

/** The number of bytes from the first element to one past the last one, i.e. the
 *  size of the buffer the tensor needs (0 for an empty tensor). Same statuses as
 *  adnn_tensor_desc_element_count. */
ADNN_API adnn_status adnn_tensor_desc_span_bytes(const adnn_tensor_desc *desc, size_t *bytes);

/** Whether the tensor is packed row-major (strides equal those of
 *  adnn_tensor_desc_init). Returns 0 or 1; 0 for NULL or an invalid descriptor. */
ADNN_API int adnn_tensor_desc_is_packed(const adnn_tensor_desc *desc);

/* ------------------------------------------------------------------------ */
/* GEMM                                                                      */
/* ------------------------------------------------------------------------ */

/** Whether an operand is used as stored or transposed. */
typedef enum adnn_transpose {
  ADNN_NO_TRANS = 0,
  ADNN_TRANS = 1
} adnn_transpose;

/** C = alpha * op(A) * op(B) + beta * C, row-major, on the context's device.
 *
 *  op(A) is m x k: A is stored m x k (ta = ADNN_NO_TRANS, lda >= k) or k x m
 *  (ta = ADNN_TRANS, lda >= m). op(B) is k x n: B is stored k x n (ldb >= n) or
 *  n x k (ldb >= k). C is m x n, ldc >= n. Leading dimensions are in elements
 *  and must be >= 1. dtype is ADNN_DTYPE_F32 or ADNN_DTYPE_F64; alpha and beta
 *  are converted to it. m, n or k may be 0: with m or n 0 nothing happens, with
 *  k 0 C is scaled by beta. When beta is 0, C is not read (NaNs in it vanish).
 *  Pointers are device memory of the context (checked: see adnn_malloc). C
 *  must not overlap A or B.
 *
 *  F32 on the GPU uses full FP32 math unless the context allows TF32.
 *
 *  Returns ADNN_STATUS_SUCCESS; ADNN_STATUS_BAD_PARAM_NULL (ctx or a needed
 *  pointer NULL); ADNN_STATUS_BAD_PARAM_HANDLE (ctx not live);
 *  ADNN_STATUS_BAD_PARAM_MEMORY (a, b or c is not memory of the context, or its
 *  allocation is too small for the matrix's span); ADNN_STATUS_BAD_PARAM
 *  (negative size, leading dimension too small, unknown transpose); ADNN_STATUS_BAD_PARAM_OVERFLOW (a matrix span does
 *  not fit in memory); ADNN_STATUS_NOT_SUPPORTED (dtype, or a size beyond what
 *  the backend's BLAS accepts); ADNN_STATUS_EXECUTION_FAILED. Asynchronous on GPU
 *  backends. */
ADNN_API adnn_status adnn_gemm(adnn_context *ctx, adnn_dtype dtype, adnn_transpose ta,
                               adnn_transpose tb, int64_t m, int64_t n, int64_t k, double alpha,
                               const void *a, int64_t lda, const void *b, int64_t ldb,
                               double beta, void *c, int64_t ldc);

/** `batch` independent GEMMs: matrix i uses a + i*stride_a, b + i*stride_b and
 *  c + i*stride_c (strides in elements). stride_a and stride_b may be 0 (shared
 *  operand); the C matrices must not overlap each other: when batch > 1 either
 *  stride_c is at least the span of one C ((m-1)*ldc + n), or the matrices are
 *  interleaved within a row (stride_c >= n and (batch-1)*stride_c + n <= ldc, as
 *  in an [m, batch, n] tensor). batch 0 is a no-op. Same statuses as adnn_gemm,
 *  plus ADNN_STATUS_BAD_PARAM for a negative batch or stride, or overlapping C
 *  matrices. */
ADNN_API adnn_status adnn_gemm_batched(adnn_context *ctx, adnn_dtype dtype, adnn_transpose ta,
                                       adnn_transpose tb, int64_t m, int64_t n, int64_t k,
                                       double alpha, const void *a, int64_t lda, const void *b,
                                       int64_t ldb, double beta, void *c, int64_t ldc,
                                       int64_t batch, int64_t stride_a, int64_t stride_b,
                                       int64_t stride_c);

#ifdef __cplusplus
}
#endif

/* Forward DNN operations and plans, then algorithm tuning. */
#include <adnn/ops.h>
#include <adnn/tuning.h>

#endif /* ADNN_H */
