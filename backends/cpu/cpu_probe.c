/*
 * CPU plugin probe and init: reports the CPU model, the ISA extensions that
 * the CPU and the OS both enable, core and thread counts, and the OpenBLAS
 * build; init sets OpenBLAS's thread count.
 *
 * Threads: ADNN_NUM_THREADS if set (a positive integer); otherwise, if
 * OPENBLAS_NUM_THREADS or OMP_NUM_THREADS is set, OpenBLAS's own choice is left
 * alone; otherwise every CPU in the process's affinity mask. OpenBLAS's thread
 * count is process-global, so an application that calls OpenBLAS itself shares
 * this setting.
 */
#include "config.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backends/cpu/cpu_plugin.h"
#include "kernels/cpu/cpu_parallel.h"

#ifndef HAVE_OPENBLAS_GET_CONFIG
static char *openblas_get_config(void) { return (char *)"unknown"; }
#endif
#ifndef HAVE_OPENBLAS_GET_CORENAME
static char *openblas_get_corename(void) { return (char *)"unknown"; }
#endif

int adnn_cpu_thread_count(const char **source) {
  const char *v = getenv("ADNN_NUM_THREADS");
  if (v != NULL && *v != '\0') {
    char *end = NULL;
    long n = strtol(v, &end, 10);
    if (end != v && *end == '\0' && n > 0 && n <= 4096) {
      if (source) *source = "ADNN_NUM_THREADS";
      return (int)n;
    }
    if (adnn_cpu_host)
      adnn_cpu_host->log(ADNN_LOG_WARN, "cpu",
                         "ignoring ADNN_NUM_THREADS=\"%s\": not a positive integer", v);
  }
#ifdef HAVE_OPENBLAS_GET_NUM_THREADS
  const char *ob = getenv("OPENBLAS_NUM_THREADS");
  const char *omp = getenv("OMP_NUM_THREADS");
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

adnn_status adnn_cpu_probe(adnn_plugin_report *r) {
  const adnn_cpu_features *f = adnn_cpu_features_get();
  char isa[256];
  adnn_cpu_features_describe(f, isa, sizeof isa);
  const char *thread_source = NULL;
  int threads = adnn_cpu_thread_count(&thread_source);
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
  const char *coretype = getenv("OPENBLAS_CORETYPE");
  if (coretype && *coretype) adnn_plugin_report_property(r, "OPENBLAS_CORETYPE", "%s", coretype);
  adnn_plugin_report_property(r, "threads", "%d (from %s)", threads, thread_source);
  if (f->avx2 && is_pre_avx_core(core)) {
    const char *fix = f->avx512f ? "SkylakeX" : "Haswell";
    adnn_plugin_report_property(r, "warning",
                                "OpenBLAS did not recognize this CPU and uses its %s kernels, "
                                "which do not use AVX; start the process with "
                                "OPENBLAS_CORETYPE=%s for several times faster GEMM", core, fix);
    adnn_cpu_host->log(ADNN_LOG_WARN, "cpu",
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
void adnn_cpu_device_identity(int device, char *buf, size_t size) {
  (void)device;
  const adnn_cpu_features *f = adnn_cpu_features_get();
  char isa[256];
  adnn_cpu_features_describe(f, isa, sizeof isa);
  snprintf(buf, size, "%s (%s family %d model %d); %s; cpus=%d; openblas=%s core=%s; threads=%d",
           f->model, f->vendor, f->family, f->model_number, isa, adnn_cpu_available_count(),
           ADNN_OPENBLAS_BUILD_VERSION, openblas_get_corename(), adnn_cpu_parallel_threads());
}

adnn_status adnn_cpu_init(void) {
  const char *source = NULL;
  int threads = adnn_cpu_thread_count(&source);
  /* Our own kernels use the same number of threads as OpenBLAS. The two pools
   * never run at once: a kernel either calls OpenBLAS or runs its own loop. */
  adnn_cpu_parallel_init(threads);
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
  if (strcmp(source, "OPENBLAS_NUM_THREADS") != 0 && strcmp(source, "OMP_NUM_THREADS") != 0)
    openblas_set_num_threads(threads);
  adnn_cpu_host->log(ADNN_LOG_DEBUG, "cpu", "using %d thread%s (from %s)", threads,
                     threads == 1 ? "" : "s", source);
#endif
  return ADNN_STATUS_SUCCESS;
}
