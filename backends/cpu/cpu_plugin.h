/*
 * Internal declarations of the CPU plugin: the slots of its plugin table
 * (adnn_cpu__*, one file per area: cpu_probe.c, cpu_memory.c, cpu_gemm.c,
 * cpu_plan.c) and the state they share. Its DNN work is all in kernels/cpu/.
 */
#ifndef ADNN_CPU_PLUGIN_H
#define ADNN_CPU_PLUGIN_H

#include <adnn/plugin.h>

#include "kernels/cpu/cpu_kernels.h"

/** The host table handed to adnn_plugin_entry; valid for the process
 *  lifetime. Every environment variable the plugin reads goes through its
 *  getenv, so that the core can override them. */
extern const adnn_plugin_host *adnn_cpu__host;

/** What the kernels may know about the machine (instruction set, threads,
 *  features), filled once by adnn_cpu__init before the first context. */
extern adnn_cpu_env adnn_cpu__env;

/* One CPU context. The CPU backend executes synchronously, so a context holds
 * no queue; it exists for symmetry and for per-context settings. */
struct adnn_plugin_context {
  int device;
};

/** The thread count the plugin uses, and the name of its source
 *  (ADNN_NUM_THREADS, OPENBLAS_NUM_THREADS, OMP_NUM_THREADS or the CPU
 *  affinity mask) in *source when source is not NULL. */
int adnn_cpu__thread_count(const char **source);

/** The probe slot: CPU model, usable ISA extensions, threads, OpenBLAS. */
adnn_status adnn_cpu__probe(adnn_plugin_report *report);
/** The init slot: starts the thread pool, sets OpenBLAS's thread count and
 *  fills adnn_cpu__env. */
adnn_status adnn_cpu__init(void);
/** The device_identity slot: what makes a performance measurement apply. */
void adnn_cpu__device_identity(int device, char *buf, size_t size);

/** The mem_alloc slot: 64-byte aligned host memory. */
adnn_status adnn_cpu__mem_alloc(adnn_plugin_context *ctx, size_t bytes, void **ptr);
/** The mem_free slot. */
adnn_status adnn_cpu__mem_free(adnn_plugin_context *ctx, void *ptr);
/** The mem_copy slot: every kind of copy is a host copy (memmove). */
adnn_status adnn_cpu__mem_copy(adnn_plugin_context *ctx, void *dst, const void *src, size_t bytes,
                               adnn_memcpy_kind kind);
/** The mem_set slot. */
adnn_status adnn_cpu__mem_set(adnn_plugin_context *ctx, void *ptr, int value, size_t bytes);
/** The mem_register slot: any host memory is memory of the CPU backend. */
adnn_status adnn_cpu__mem_register(adnn_plugin_context *ctx, void *ptr, size_t bytes, uint32_t kind);

/** The gemm slot: OpenBLAS's row-major CBLAS, a loop for batches. */
adnn_status adnn_cpu__gemm(adnn_plugin_context *ctx, const adnn_plugin_gemm_args *args);
/* The names of the F32 GEMM implementations adnn_plugin_gemm_args.impl picks
 * (1: "engine", 2: "openblas"); NULL for other dtypes or past the last. */
const char *adnn_cpu__gemm_impl_name(adnn_plugin_context *ctx, adnn_dtype dtype, int32_t impl);

/** The plan_create slot (cpu_plan.c): copies the problem and finds the
 *  implementations of the op's list that support it. */
adnn_status adnn_cpu__plan_create(adnn_plugin_context *ctx, const adnn_plugin_op *op,
                                  adnn_plugin_plan **out);
/** The plan_candidates slot: the plugin's own choice, then the other
 *  implementations that support the problem in list order. */
adnn_status adnn_cpu__plan_candidates(adnn_plugin_plan *plan, adnn_plugin_candidate *out,
                                      int32_t max, int32_t *count);
/** The plan_select slot: reshapes the chosen implementation and allocates
 *  its workspace. */
adnn_status adnn_cpu__plan_select(adnn_plugin_plan *plan, int32_t candidate);
/** The plan_execute slot: runs the selected implementation. */
adnn_status adnn_cpu__plan_execute(adnn_plugin_plan *plan, const void *const *inputs,
                                   void *const *outputs);
/** The plan_destroy slot. */
void adnn_cpu__plan_destroy(adnn_plugin_plan *plan);
/** The plan_packed_weights_bytes slot (ABI 2.4): the selected
 *  implementation's packed weight size, or the weights' span when it has no
 *  packed form (the packed form is then the weights copied as they are). */
adnn_status adnn_cpu__plan_packed_weights_bytes(adnn_plugin_plan *plan, size_t *bytes);
/** The plan_pack_weights slot (ABI 2.4): the implementation's pack_weights,
 *  or a copy of the weights' span. Synchronous. */
adnn_status adnn_cpu__plan_pack_weights(adnn_plugin_plan *plan, const void *w, void *packed);
/** The plan_describe slot: the selected implementation's name and workspace. */
void adnn_cpu__plan_describe(const adnn_plugin_plan *plan, const char **algorithm,
                             size_t *workspace_bytes);

#endif
