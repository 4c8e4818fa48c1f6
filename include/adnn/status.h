/*
 * adnn status codes: the one table from which the enum, adnn_status_name() and
 * adnn_status_string() are generated.
 *
 * Values are grouped by category (the thousands digit) and are never renumbered:
 * new codes are appended inside their category. Callers that only care about the
 * category can use ADNN_STATUS_CATEGORY(s).
 */
#ifndef ADNN_STATUS_H
#define ADNN_STATUS_H

/* X(NAME, value, description) */
#define ADNN_STATUS_MAP(X)                                                              \
  X(SUCCESS, 0, "success")                                                              \
  X(BAD_PARAM, 1000, "invalid argument")                                                \
  X(BAD_PARAM_NULL, 1001, "a required pointer argument is NULL")                        \
  X(BAD_PARAM_OVERFLOW, 1002, "a size computation overflows")                           \
  X(BAD_PARAM_DOUBLE_FREE, 1003, "pointer not allocated by this context or already freed") \
  X(BAD_PARAM_HANDLE, 1004, "the context or plan handle is not live (destroyed, or never created)") \
  X(BAD_PARAM_MEMORY, 1005, "a pointer is not memory of the context, or its allocation is too small") \
  X(NOT_SUPPORTED, 2000, "operation or parameter combination not supported by this backend") \
  X(BACKEND_UNAVAILABLE, 3000, "the requested backend is not available on this machine") \
  X(BACKEND_INCOMPATIBLE, 3001, "the requested backend is incompatible with the installed driver or libraries") \
  X(OUT_OF_MEMORY, 4000, "host memory allocation failed")                               \
  X(DEVICE_OUT_OF_MEMORY, 4001, "device memory allocation failed")                      \
  X(EXECUTION_FAILED, 5000, "the backend failed to execute the operation")              \
  X(INTERNAL_ERROR, 6000, "internal error in adnn or a plugin")

/** Status returned by every fallible adnn function. 0 is success. */
typedef enum adnn_status {
#define ADNN_STATUS_ENUM_(name, value, text) ADNN_STATUS_##name = value,
  ADNN_STATUS_MAP(ADNN_STATUS_ENUM_)
#undef ADNN_STATUS_ENUM_
  ADNN_STATUS_MAX_ = 0x7fffffff /* keeps the enum int-sized; not a status */
} adnn_status;

/** The category of a status: 0 success, 1 bad parameter, 2 not supported,
 *  3 backend unavailable, 4 out of memory, 5 execution failed, 6 internal. */
#define ADNN_STATUS_CATEGORY(s) ((int)(s) / 1000)

#endif
