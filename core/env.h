/*
 * The one table of adnn's environment variables: every ADNN_* variable the
 * core or a bundled plugin reads is a row of ADNN_ENV_LIST, with the form of
 * its accepted values, its default and a one-line description. The core reads
 * its variables only through adnn__env_get (so a name cannot be misspelled in
 * one place), and t/env-docs.sh checks that README.md's table and adnn(7)'s
 * ENVIRONMENT section list exactly the rows that are not retired.
 *
 * Plugins never link against the core; they read their rows (reader "cpu",
 * "cuda") through the host table's getenv and validate them themselves, with
 * the same rule: an unknown value is ignored with one warning per process
 * that names the accepted values.
 *
 * X(ID, NAME, READER, ACCEPTED, DEFAULT, RETIRED, DOC)
 */
#ifndef ADNN_CORE_ENV_H
#define ADNN_CORE_ENV_H

#define ADNN_ENV_LIST(X)                                                                        \
  X(PLUGIN_PATH, "ADNN_PLUGIN_PATH", "core", "colon-separated absolute directories",           \
    "the compiled-in plugin directory", 0, "where plugins (*.so) are searched")                 \
  X(BACKEND, "ADNN_BACKEND", "core", "a backend name, optionally :DEVICE (cpu, cuda:1)",       \
    "auto", 0, "replaces a request for \"auto\"")                                              \
  X(LOG, "ADNN_LOG", "core", "off, error, warn, info or debug (also none, 0, warning)", "warn", \
    0, "what the library logs")                                                                \
  X(VERBOSE, "ADNN_VERBOSE", "core", "0, 1 or 2", "0", 0,                                      \
    "1: one CSV line per plan creation on stderr; 2: also one per execution and GEMM")         \
  X(NUM_THREADS, "ADNN_NUM_THREADS", "cpu",                                                    \
    "a positive integer (at most the CPUs available)", "every CPU of the affinity mask", 0,     \
    "threads of the CPU plugin")                                                               \
  X(CPU_SIMD, "ADNN_CPU_SIMD", "cpu", "avx512, avx2, base or baseline", "the best available",  \
    0, "caps the CPU kernels' instruction set")                                                \
  X(ALLOW_TF32, "ADNN_ALLOW_TF32", "core", "0 or 1", "0", 0,                                   \
    "1 sets ADNN_CONTEXT_ALLOW_TF32 on new contexts")                                          \
  X(CONV2D_ALGO, "ADNN_CONV2D_ALGO", "core",                                                   \
    "auto, reference, im2col_gemm, gemm_1x1, winograd_f2x3, depthwise_direct or direct",       \
    "auto", 0, "forces a conv2d algorithm for descriptors that say AUTO")                      \
  X(TUNE, "ADNN_TUNE", "core", "off, default or exhaustive", "default", 0,                     \
    "how plan creation picks an algorithm")                                                    \
  X(TUNE_BUDGET_MS, "ADNN_TUNE_BUDGET_MS", "core", "a number of milliseconds >= 0", "1000", 0, \
    "the tuner's time budget per problem")                                                     \
  X(TUNE_WORKSPACE_LIMIT, "ADNN_TUNE_WORKSPACE_LIMIT", "core",                                 \
    "a byte count: digits, optionally followed by K, M or G", "256M", 0,                       \
    "the largest workspace a chosen algorithm may use")                                        \
  X(DETERMINISTIC, "ADNN_DETERMINISTIC", "core", "0 or 1", "0", 0,                             \
    "1: only run-to-run reproducible algorithms")                                              \
  X(CACHE_DIR, "ADNN_CACHE_DIR", "core", "a directory", "$XDG_CACHE_HOME/adnn or ~/.cache/adnn", \
    0, "directory of the per-user performance database")                                       \
  X(SYSTEM_PERFDB, "ADNN_SYSTEM_PERFDB", "core", "a file path, or empty for none",             \
    "$(pkgdatadir)/perfdb.txt", 0, "the read-only system performance database")                \
  X(CUDA_WORKSPACE_LIMIT, "ADNN_CUDA_WORKSPACE_LIMIT", "cuda", "(retired)", "", 1,             \
    "no longer read; warns once (use ADNN_TUNE_WORKSPACE_LIMIT)")                              \
  X(CUDA_CONV_FIND, "ADNN_CUDA_CONV_FIND", "cuda", "(retired)", "", 1,                         \
    "no longer read; warns once (the core's tuner measures)")

typedef enum adnn__env_id {
#define ADNN_ENV_ID_(ID, NAME, READER, ACCEPTED, DEFAULT, RETIRED, DOC) ADNN_ENV_##ID,
  ADNN_ENV_LIST(ADNN_ENV_ID_)
#undef ADNN_ENV_ID_
  ADNN_ENV_COUNT_
} adnn__env_id;

/* The variable's value, or NULL when it is unset or empty. */
const char *adnn__env_get(adnn__env_id id);

/* The variable's name ("ADNN_LOG"). */
const char *adnn__env_name(adnn__env_id id);

/* Logs, at WARN and at most once per variable per process, that `value` is
 * ignored, naming the accepted values (and `why`, when not NULL). */
void adnn__env_warn_ignored(adnn__env_id id, const char *value, const char *why);

/* A 0/1 switch: 1 for "1", 0 for "0" or unset; any other value warns once
 * and gives `fallback`. */
int adnn__env_flag(adnn__env_id id, int fallback);

#endif
