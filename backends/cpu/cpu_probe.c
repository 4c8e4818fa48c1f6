/*
 * CPU plugin probe and init: reports the CPU model, the ISA extensions that
 * the CPU and the OS both enable, core and thread counts, and the OpenBLAS
 * build; init sets OpenBLAS's thread count, starts the kernels' thread pool
 * and chooses what the kernels may use (adnn_cpu__env).
 *
 * Threads: ADNN_NUM_THREADS if set (a positive integer, capped at the CPUs
 * of the affinity mask); otherwise, if
 * OPENBLAS_NUM_THREADS or OMP_NUM_THREADS is set, OpenBLAS's own choice is left
 * alone; otherwise every CPU in the process's affinity mask. OpenBLAS's thread
 * count is process-global, so an application that calls OpenBLAS itself shares
 * this setting.
 *
 * Instruction set of the kernels: the most capable one of ADNN_CPU_ISA_LIST
 * that the CPU and the OS both support, capped by ADNN_CPU_SIMD (a name of that list,
 * or "baseline") so that tests and benchmarks can run every variant on one
 * machine.
 *
 * Every variable is read through the host's getenv, which the core may
 * override; the kernels never read the environment.
 */
#include "config.h"

#include <cblas.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backends/cpu/cpu_plugin.h"
#include "kernels/cpu/gemm.h"

#ifndef HAVE_OPENBLAS_GET_CONFIG
static char *openblas_get_config(void) { return (char *)"unknown"; }
#endif
#ifndef HAVE_OPENBLAS_GET_CORENAME
static char *openblas_get_corename(void) { return (char *)"unknown"; }
#endif

adnn_cpu_env adnn_cpu__env = {.isa = ADNN_CPU_ISA_BASE, .threads = 1};

/* Probe and init both ask for the thread count, so each warning about
 * ADNN_NUM_THREADS is printed once per process, not once per call. */
static atomic_int warned_threads_value, warned_threads_cap, warned_simd;

int adnn_cpu__thread_count(const char **source) {
  const char *v = adnn_cpu__host->getenv("ADNN_NUM_THREADS");
  if (v != NULL && *v != '\0') {
    char *end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno == 0 && end != v && *end == '\0' && n > 0) {
      if (source) *source = "ADNN_NUM_THREADS";
      /* More threads than CPUs only makes them wait for each other (1000
       * threads made a conv forward pass about 10x slower). */
      int cpus = adnn_cpu_available_count();
      if (cpus > 0 && n > cpus) {
        if (atomic_exchange(&warned_threads_cap, 1) == 0)
          adnn_cpu__host->log(ADNN_LOG_WARN, "cpu",
                              "ADNN_NUM_THREADS=%ld is more than the %d CPU%s available to this "
                              "process; using %d", n, cpus, cpus == 1 ? "" : "s", cpus);
        return cpus;
      }
      return (int)n;
    }
    if (atomic_exchange(&warned_threads_value, 1) == 0)
      adnn_cpu__host->log(ADNN_LOG_WARN, "cpu",
                          "ignoring ADNN_NUM_THREADS=\"%s\": accepted: a positive integer (at "
                          "most the CPUs available)", v);
  }
#ifdef HAVE_OPENBLAS_GET_NUM_THREADS
  const char *ob = adnn_cpu__host->getenv("OPENBLAS_NUM_THREADS");
  const char *omp = adnn_cpu__host->getenv("OMP_NUM_THREADS");
  if ((ob && *ob) || (omp && *omp)) {
    if (source) *source = ob && *ob ? "OPENBLAS_NUM_THREADS" : "OMP_NUM_THREADS";
    int n = openblas_get_num_threads();
    return n > 0 ? n : 1;
  }
#endif
  if (source) *source = "CPU affinity mask";
  return adnn_cpu_available_count();
}

/* OpenBLAS core names whose kernels use no AVX. An OpenBLAS release older than
 * the CPU falls back to one of these (0.3.21 picks Prescott on Sapphire Rapids
 * and later Xeons), which costs 3-6x in SGEMM. */
static int is_pre_avx_core(const char *core) {
  static const char *const slow[] = {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem",
                                     "Atom", "Katmai", "Coppermine", "Northwood", "Banias",
                                     "Opteron", "Opteron_SSE3", "Barcelona", "Bobcat", NULL};
  for (int i = 0; slow[i]; i++)
    if (strcasecmp(core, slow[i]) == 0) return 1;
  return 0;
}

adnn_status adnn_cpu__probe(adnn_plugin_report *r) {
  const adnn_cpu_features *f = adnn_cpu_features_get();
  char isa[256];
  adnn_cpu_features_describe(f, isa, sizeof isa);
  const char *thread_source = NULL;
  int threads = adnn_cpu__thread_count(&thread_source);
  int cpus = adnn_cpu_available_count();
  const char *config = openblas_get_config();
  const char *core = openblas_get_corename();

  r->state = ADNN_BACKEND_READY;
  r->score = 10; /* the last resort: any accelerator plugin should score higher */
  const char *best = f->avx512f ? "AVX-512" : f->avx2 ? "AVX2" : f->avx ? "AVX" : "SSE";
  adnn_plugin_report_reason(r, "%s, %d CPU%s, %s; OpenBLAS %s (%s kernels), %d thread%s", f->model,
                            cpus, cpus == 1 ? "" : "s", best, ADNN_OPENBLAS_BUILD_VERSION, core,
                            threads, threads == 1 ? "" : "s");
  adnn_plugin_report_property(r, "openblas", "%s", ADNN_OPENBLAS_BUILD_VERSION);
  adnn_plugin_report_property(r, "openblas_config", "%s", config);
  adnn_plugin_report_property(r, "openblas_core", "%s", core);
  const char *coretype = adnn_cpu__host->getenv("OPENBLAS_CORETYPE");
  if (coretype && *coretype) adnn_plugin_report_property(r, "OPENBLAS_CORETYPE", "%s", coretype);
  adnn_plugin_report_property(r, "threads", "%d (from %s)", threads, thread_source);
  if (f->avx2 && is_pre_avx_core(core)) {
    const char *fix = f->avx512f ? "SkylakeX" : "Haswell";
    adnn_plugin_report_property(r, "warning",
                                "OpenBLAS did not recognize this CPU and uses its %s kernels, "
                                "which do not use AVX; start the process with "
                                "OPENBLAS_CORETYPE=%s for several times faster GEMM", core, fix);
    adnn_cpu__host->log(ADNN_LOG_WARN, "cpu",
                        "OpenBLAS %s does not recognize this CPU (%s, family %d model %d) and "
                        "runs its %s kernels without AVX, several times slower than this CPU "
                        "allows; set OPENBLAS_CORETYPE=%s in the environment before starting "
                        "the process", ADNN_OPENBLAS_BUILD_VERSION, f->model, f->family,
                        f->model_number, core, fix);
  }

  adnn_plugin_device *d = adnn_plugin_report_device(r, 0, f->model);
  if (d != NULL) {
    adnn_plugin_device_property(d, "vendor", "%s", f->vendor);
    adnn_plugin_device_property(d, "family_model", "%d/%d", f->family, f->model_number);
    adnn_plugin_device_property(d, "cpus", "%d", cpus);
    adnn_plugin_device_property(d, "isa", "%s", isa);
    if (f->cpu_has_avx512f && !f->avx512f)
      adnn_plugin_device_property(d, "note", "the CPU has AVX-512 but the OS does not save "
                                  "its registers (XCR0), so AVX-512 is not used");
  }
  return ADNN_STATUS_SUCCESS;
}

/* The performance database's view of this machine: results measured with
 * another CPU model, ISA, CPU count, OpenBLAS version or kernel set
 * (OPENBLAS_CORETYPE changes the core name) or thread count do not apply. */
void adnn_cpu__device_identity(int device, char *buf, size_t size) {
  (void)device;
  const adnn_cpu_features *f = adnn_cpu_features_get();
  char isa[256];
  adnn_cpu_features_describe(f, isa, sizeof isa);
  snprintf(buf, size, "%s (%s family %d model %d); %s; cpus=%d; openblas=%s core=%s; threads=%d",
           f->model, f->vendor, f->family, f->model_number, isa, adnn_cpu_available_count(),
           ADNN_OPENBLAS_BUILD_VERSION, openblas_get_corename(), adnn_cpu_parallel_threads());
}

/* The most capable instruction set the CPU and the OS support, capped by
 * ADNN_CPU_SIMD: the value of the list's name of a set ("avx2", "base", or
 * "baseline" as doc/cpu.md spells it) caps at that set. *capped is set when
 * a cap was accepted: the level is then the set's foundation, without the
 * AVX-512 dot-product extensions (VNNI, BF16), so that ADNN_CPU_SIMD=avx512
 * runs the AVX-512 paths those extensions would replace. */
static int kernel_isa(const adnn_cpu_features *f, int *capped) {
  *capped = 0;
  int isa = ADNN_CPU_ISA_BASE, found = 0;
#define ADNN_CPU_BEST_ISA_(NAME, name, usable, arg) \
  if (!found && (usable)) {                         \
    isa = ADNN_CPU_ISA_##NAME;                      \
    found = 1;                                      \
  }
  ADNN_CPU_ISA_LIST(ADNN_CPU_BEST_ISA_, 0)
#undef ADNN_CPU_BEST_ISA_
  const char *cap = adnn_cpu__host->getenv("ADNN_CPU_SIMD");
  if (cap == NULL || *cap == '\0') return isa;
  int cap_isa = -1;
  if (strcmp(cap, "baseline") == 0) cap_isa = ADNN_CPU_ISA_BASE;
#define ADNN_CPU_CAP_ISA_(NAME, name, usable, arg) \
  if (strcmp(cap, #name) == 0) cap_isa = ADNN_CPU_ISA_##NAME;
  ADNN_CPU_ISA_LIST(ADNN_CPU_CAP_ISA_, 0)
#undef ADNN_CPU_CAP_ISA_
  if (cap_isa < 0) {
    /* The accepted names come from the same list as the matching above. */
    char names[128] = "";
#define ADNN_CPU_ISA_NAME_(NAME, name, usable, arg) \
  snprintf(names + strlen(names), sizeof names - strlen(names), "%s, ", #name);
    ADNN_CPU_ISA_LIST(ADNN_CPU_ISA_NAME_, 0)
#undef ADNN_CPU_ISA_NAME_
    if (atomic_exchange(&warned_simd, 1) == 0)
      adnn_cpu__host->log(ADNN_LOG_WARN, "cpu", "ignoring ADNN_CPU_SIMD=\"%s\": accepted: "
                          "%sor baseline", cap, names);
    return isa;
  }
  *capped = 1;
  return cap_isa < isa ? cap_isa : isa;
}

adnn_status adnn_cpu__init(void) {
  const char *source = NULL;
  int threads = adnn_cpu__thread_count(&source);
  /* Our own kernels use the same number of threads as OpenBLAS. The two pools
   * never run at once: a kernel either calls OpenBLAS or runs its own loop. */
  adnn_cpu_parallel_init(threads);
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
  if (strcmp(source, "OPENBLAS_NUM_THREADS") != 0 && strcmp(source, "OMP_NUM_THREADS") != 0)
    openblas_set_num_threads(threads);
  adnn_cpu__host->log(ADNN_LOG_DEBUG, "cpu", "using %d thread%s (from %s)", threads,
                      threads == 1 ? "" : "s", source);
#endif
  /* A cap clears the extensions in a copy that kernels see; the probe's
   * report still describes the CPU (adnn_cpu_features_get). */
  static adnn_cpu_features capped_features;
  int capped;
  adnn_cpu__env.features = adnn_cpu_features_get();
  adnn_cpu__env.isa = kernel_isa(adnn_cpu__env.features, &capped);
  if (capped) {
    capped_features = *adnn_cpu__env.features;
    capped_features.avx512_vnni = 0;
    capped_features.avx512_bf16 = 0;
    adnn_cpu__env.features = &capped_features;
  }
  /* The GEMM dispatcher may give a shape to OpenBLAS only when OpenBLAS
   * runs AVX kernels on this CPU (kernels/cpu/gemm.h). */
  adnn_cpu_sgemm_set_openblas_fast(!is_pre_avx_core(openblas_get_corename()));
  /* The pool may have started fewer threads than asked; per-thread
   * workspace slices follow what it has. */
  adnn_cpu__env.threads = adnn_cpu_parallel_threads();
  return ADNN_STATUS_SUCCESS;
}
