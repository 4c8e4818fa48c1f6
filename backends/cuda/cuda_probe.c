/*
 * The probe: decides whether this machine can run the CUDA plugin and says why
 * not when it cannot.
 *
 * It asks the driver directly through libcuda.so.1, opened with dlopen, instead
 * of going through the CUDA runtime. Three reasons: the runtime hides the cause
 * of a failure (no driver, a stub library, an old driver all become
 * "insufficient driver"); the driver API answers without creating a device
 * context, which keeps the probe cheap; and a test can put a fake libcuda.so.1
 * first on the loader path and so exercise this very code without a GPU.
 *
 * The runtime (linked statically) is not called here at all, except for
 * cudaRuntimeGetVersion, which only returns a constant.
 */
/* dladdr() and Dl_info are GNU extensions of <dlfcn.h>. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "config.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

#include "cuda_internal.h"

/* The driver functions the probe needs. Their names are the plain ABI names
 * (cuda.h maps cuDeviceTotalMem to cuDeviceTotalMem_v2 with a macro, so the
 * versioned name is looked up explicitly). */
typedef struct cuda_driver_api {
  void *library;
  CUresult (*init)(unsigned int flags);
  CUresult (*driver_get_version)(int *version);
  CUresult (*device_get_count)(int *count);
  CUresult (*device_get)(CUdevice *device, int ordinal);
  CUresult (*device_get_name)(char *name, int len, CUdevice device);
  CUresult (*device_get_attribute)(int *value, CUdevice_attribute attribute, CUdevice device);
  CUresult (*device_total_mem)(size_t *bytes, CUdevice device);
  CUresult (*get_error_name)(CUresult error, const char **name);
} cuda_driver_api;

/* The devices the probe accepted, in adnn's order: usable_ordinals[i] is the
 * CUDA ordinal of "cuda:i". Written once by the probe, under the core's loader
 * lock, and only read afterwards. */
static int usable_ordinals[ADNN_PLUGIN_MAX_DEVICES];
static int usable_count;

int adnn_cuda__device_ordinal(int index) {
  if (index < 0 || index >= usable_count) return -1;
  return usable_ordinals[index];
}

void adnn_cuda__device_identity(int index, char *buf, size_t size) {
  int ordinal = adnn_cuda__device_ordinal(index);
  struct cudaDeviceProp prop;
  if (ordinal < 0 || cudaGetDeviceProperties(&prop, ordinal) != cudaSuccess) {
    (void)cudaGetLastError();
    snprintf(buf, size, "cuda device %d", index);
    return;
  }
  int driver = 0, cb_major = 0, cb_minor = 0, cb_patch = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) (void)cudaGetLastError();
  cublasGetProperty(MAJOR_VERSION, &cb_major);
  cublasGetProperty(MINOR_VERSION, &cb_minor);
  cublasGetProperty(PATCH_LEVEL, &cb_patch);
  int cudnn = (int)cudnnGetVersion();
  prop.name[sizeof prop.name - 1] = '\0';
  snprintf(buf, size, "%s; sm_%d%d; sms=%d; driver=%d; cudnn=%d.%d.%d; cublas=%d.%d.%d",
           prop.name, prop.major, prop.minor, prop.multiProcessorCount, driver, cudnn / 10000,
           (cudnn / 100) % 100, cudnn % 100, cb_major, cb_minor, cb_patch);
}

static const char *driver_error_name(const cuda_driver_api *api, CUresult err) {
  const char *name = NULL;
  if (api->get_error_name && api->get_error_name(err, &name) == CUDA_SUCCESS && name) return name;
  return "unknown CUDA driver error";
}

/* Opens libcuda.so.1 and looks up every function; on failure fills the report. */
static int load_driver(cuda_driver_api *api, adnn_plugin_report *report, int min_driver) {
  memset(api, 0, sizeof *api);
  /* RTLD_LOCAL keeps the driver's symbols out of the global namespace; the
   * static CUDA runtime opens the same library by the same name later and gets
   * this already loaded copy. */
  api->library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!api->library) {
    const char *err = dlerror();
    report->state = ADNN_BACKEND_UNAVAILABLE;
    adnn_plugin_report_reason(report,
                              "no NVIDIA driver: libcuda.so.1 not found (%s); install the NVIDIA "
                              "driver %d or newer to use NVIDIA GPUs",
                              err ? err : "dlopen failed", min_driver);
    return 0;
  }
  struct {
    const char *name;
    void **slot;
  } symbols[] = {
      {"cuInit", (void **)&api->init},
      {"cuDriverGetVersion", (void **)&api->driver_get_version},
      {"cuDeviceGetCount", (void **)&api->device_get_count},
      {"cuDeviceGet", (void **)&api->device_get},
      {"cuDeviceGetName", (void **)&api->device_get_name},
      {"cuDeviceGetAttribute", (void **)&api->device_get_attribute},
      {"cuDeviceTotalMem_v2", (void **)&api->device_total_mem},
      {"cuGetErrorName", (void **)&api->get_error_name},
  };
  for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
    *symbols[i].slot = dlsym(api->library, symbols[i].name);
    if (!*symbols[i].slot) {
      report->state = ADNN_BACKEND_INCOMPATIBLE;
      adnn_plugin_report_reason(report,
                                "the NVIDIA driver library libcuda.so.1 lacks %s, so it is far "
                                "too old for this plugin; install the NVIDIA driver %d or newer",
                                symbols[i].name, min_driver);
      return 0;
    }
  }
  Dl_info info;
  if (dladdr((void *)api->init, &info) && info.dli_fname)
    adnn_plugin_report_property(report, "driver_library", "%s", info.dli_fname);
  return 1;
}

/* Reports the versions of the libraries linked into the plugin and checks them
 * against the build. Returns 0 (and fills the reason) when one is too old. */
static int check_libraries(adnn_plugin_report *report) {
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  char rt[16];
  adnn_cuda__format_cuda_version(runtime, rt, sizeof rt);
  adnn_plugin_report_property(report, "runtime", "CUDA %s (cudart %d, linked statically)", rt,
                              runtime);

  int cublas_major = 0, cublas_minor = 0, cublas_patch = 0;
  cublasGetProperty(MAJOR_VERSION, &cublas_major);
  cublasGetProperty(MINOR_VERSION, &cublas_minor);
  cublasGetProperty(PATCH_LEVEL, &cublas_patch);
  int cublas_found = cublas_major * 10000 + cublas_minor * 100 + cublas_patch;
  adnn_plugin_report_property(report, "cublas", "%d.%d.%d (built with %d.%d.%d)", cublas_major,
                              cublas_minor, cublas_patch, CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR,
                              CUBLAS_VER_PATCH);

  int cudnn_found = (int)cudnnGetVersion();
  adnn_plugin_report_property(report, "cudnn", "%d.%d.%d (built with %d.%d.%d)",
                              cudnn_found / 10000, (cudnn_found / 100) % 100, cudnn_found % 100,
                              CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);

  char why[ADNN_PLUGIN_REASON_LEN];
  if (!adnn_cuda__library_compatible("cuBLAS", CUBLAS_VERSION, cublas_found,
                                     "install the cuBLAS of the CUDA toolkit this plugin was built "
                                     "with or newer (libcublas.so.13)",
                                     why, sizeof why) ||
      !adnn_cuda__library_compatible("cuDNN", CUDNN_VERSION, cudnn_found,
                                     "install that cuDNN 9 release for CUDA 13 or a newer one",
                                     why, sizeof why)) {
    report->state = ADNN_BACKEND_INCOMPATIBLE;
    adnn_plugin_report_reason(report, "%s", why);
    return 0;
  }
  return 1;
}

/* Appends "; " and a formatted sentence to a fixed buffer, truncating quietly. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void append(char *buf, size_t len, const char *fmt, ...) {
  size_t used = strlen(buf);
  if (used + 3 >= len) return;
  if (used > 0) {
    strcpy(buf + used, "; ");
    used += 2;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + used, len - used, fmt, ap);
  va_end(ap);
}

adnn_status adnn_cuda__probe(adnn_plugin_report *report) {
  const int built_major = CUDART_VERSION / 1000;
  const int min_driver = adnn_cuda__min_driver_for_cuda_major(built_major);
  char built[16], text[64];
  adnn_cuda__format_cuda_version(CUDART_VERSION, built, sizeof built);

  usable_count = 0;
  report->score = 0;
  adnn_plugin_report_property(report, "built_for", "CUDA %s", built);
  adnn_plugin_report_property(report, "arch_flags", "%s", ADNN_CUDA_ARCH_FLAGS);
  adnn_plugin_report_property(report, "min_compute_capability", "%d.%d", ADNN_CUDA_MIN_SM / 10,
                              ADNN_CUDA_MIN_SM % 10);

  cuda_driver_api api;
  if (!load_driver(&api, report, min_driver)) return ADNN_STATUS_SUCCESS;

  int driver_version = 0;
  CUresult err = api.driver_get_version(&driver_version);
  if (err == CUDA_ERROR_STUB_LIBRARY) {
    report->state = ADNN_BACKEND_UNAVAILABLE;
    adnn_plugin_report_reason(report,
                              "no NVIDIA driver: the libcuda.so.1 found is the CUDA toolkit's stub "
                              "library (CUDA_ERROR_STUB_LIBRARY), which only serves linking; "
                              "remove the toolkit's stubs directory from LD_LIBRARY_PATH and "
                              "install the NVIDIA driver %d or newer",
                              min_driver);
    return ADNN_STATUS_SUCCESS;
  }
  if (err != CUDA_SUCCESS) {
    report->state = ADNN_BACKEND_UNAVAILABLE;
    adnn_plugin_report_reason(report,
                              "the NVIDIA driver does not work: cuDriverGetVersion failed with "
                              "%s (%d); reinstall the NVIDIA driver %d or newer",
                              driver_error_name(&api, err), (int)err, min_driver);
    return ADNN_STATUS_SUCCESS;
  }
  char driver[16];
  adnn_cuda__format_cuda_version(driver_version, driver, sizeof driver);
  adnn_plugin_report_property(report, "driver", "supports CUDA %s (cuDriverGetVersion %d)", driver,
                              driver_version);

  char why[ADNN_PLUGIN_REASON_LEN];
  if (!adnn_cuda__driver_compatible(driver_version, CUDART_VERSION, why, sizeof why)) {
    report->state = ADNN_BACKEND_INCOMPATIBLE;
    adnn_plugin_report_reason(report, "%s", why);
    return ADNN_STATUS_SUCCESS;
  }

  /* The linked libraries are checked before the devices: they need no GPU, and
   * an incompatible cuBLAS or cuDNN makes every device unusable anyway. */
  if (!check_libraries(report)) return ADNN_STATUS_SUCCESS;

  err = api.init(0);
  if (err == CUDA_ERROR_NO_DEVICE) {
    report->state = ADNN_BACKEND_UNAVAILABLE;
    adnn_plugin_report_reason(report,
                              "the NVIDIA driver (supports CUDA %s) found no GPU (cuInit: "
                              "CUDA_ERROR_NO_DEVICE); check that a GPU is installed and visible "
                              "to this process (CUDA_VISIBLE_DEVICES, container GPU access)",
                              driver);
    return ADNN_STATUS_SUCCESS;
  }
  if (err != CUDA_SUCCESS) {
    report->state = ADNN_BACKEND_UNAVAILABLE;
    adnn_plugin_report_reason(report,
                              "the NVIDIA driver (supports CUDA %s) failed to initialize: cuInit "
                              "returned %s (%d); a driver update without a reboot, a mismatch of "
                              "the kernel module and libcuda.so.1, or missing permissions on "
                              "/dev/nvidia* are the usual causes",
                              driver, driver_error_name(&api, err), (int)err);
    return ADNN_STATUS_SUCCESS;
  }

  int count = 0; /* not written on failure */
  err = api.device_get_count(&count);
  if (err != CUDA_SUCCESS || count <= 0) {
    report->state = ADNN_BACKEND_UNAVAILABLE;
    if (err != CUDA_SUCCESS)
      adnn_plugin_report_reason(report,
                                "the NVIDIA driver (supports CUDA %s) could not count GPUs: "
                                "cuDeviceGetCount returned %s (%d)",
                                driver, driver_error_name(&api, err), (int)err);
    else
      adnn_plugin_report_reason(report,
                                "the NVIDIA driver (supports CUDA %s) reports no GPU; check that "
                                "a GPU is installed and visible to this process "
                                "(CUDA_VISIBLE_DEVICES, container GPU access)",
                                driver);
    return ADNN_STATUS_SUCCESS;
  }

  char skipped[ADNN_PLUGIN_REASON_LEN] = "";
  char first_name[ADNN_PLUGIN_VALUE_LEN] = "";
  int first_major = 0, first_minor = 0;
  for (int ordinal = 0; ordinal < count; ordinal++) {
    CUdevice dev;
    char name[ADNN_PLUGIN_VALUE_LEN] = "";
    int major = 0, minor = 0, sms = 0;
    size_t memory = 0;
    err = api.device_get(&dev, ordinal);
    if (err == CUDA_SUCCESS) err = api.device_get_name(name, (int)sizeof name - 1, dev);
    if (err == CUDA_SUCCESS)
      err = api.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    if (err == CUDA_SUCCESS)
      err = api.device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    if (err == CUDA_SUCCESS)
      err = api.device_get_attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    if (err == CUDA_SUCCESS) err = api.device_total_mem(&memory, dev);
    if (err != CUDA_SUCCESS) {
      append(skipped, sizeof skipped, "CUDA device %d skipped: the driver could not describe it (%s)",
             ordinal, driver_error_name(&api, err));
      continue;
    }
    if (major * 10 + minor < ADNN_CUDA_MIN_SM) {
      append(skipped, sizeof skipped,
             "CUDA device %d (%s, compute capability %d.%d) skipped: this build carries GPU code "
             "for compute capability %d.%d and newer%s",
             ordinal, name, major, minor, ADNN_CUDA_MIN_SM / 10, ADNN_CUDA_MIN_SM % 10,
             major * 10 + minor < 75
                 ? " (CUDA 13 itself supports 7.5 and newer; this GPU needs a CUDA 12 build)"
                 : " (rebuild with its sm_XY in CUDA_ARCH_FLAGS)");
      continue;
    }
    if (usable_count >= ADNN_PLUGIN_MAX_DEVICES) {
      append(skipped, sizeof skipped, "CUDA device %d skipped: adnn lists at most %d devices",
             ordinal, ADNN_PLUGIN_MAX_DEVICES);
      continue;
    }
    adnn_plugin_device *d = adnn_plugin_report_device(report, usable_count, name);
    if (!d) continue;
    usable_ordinals[usable_count++] = ordinal;
    adnn_plugin_device_property(d, "cuda_ordinal", "%d", ordinal);
    adnn_plugin_device_property(d, "compute_capability", "%d.%d", major, minor);
    adnn_plugin_device_property(d, "memory", "%.1f GiB (%zu bytes)",
                                (double)memory / (1024.0 * 1024.0 * 1024.0), memory);
    adnn_plugin_device_property(d, "multiprocessors", "%d", sms);
    adnn_plugin_device_property(d, "driver", "supports CUDA %s", driver);
    if (usable_count == 1) {
      snprintf(first_name, sizeof first_name, "%s", name);
      first_major = major;
      first_minor = minor;
    }
  }
  if (skipped[0]) {
    adnn_plugin_report_property(report, "skipped_devices", "%s", skipped);
    adnn_cuda__log(ADNN_LOG_INFO, "%s", skipped);
  }

  if (usable_count == 0) {
    report->state = ADNN_BACKEND_UNAVAILABLE;
    adnn_plugin_report_reason(report, "no usable NVIDIA GPU: %s", skipped);
    return ADNN_STATUS_SUCCESS;
  }

  report->state = ADNN_BACKEND_READY;
  report->score = 100;
  snprintf(text, sizeof text, "%d device%s", usable_count, usable_count == 1 ? "" : "s");
  adnn_plugin_report_reason(report,
                            "ready: %s (%s%s, compute capability %d.%d); driver supports "
                            "CUDA %s, plugin built for CUDA %s%s%s",
                            text, usable_count > 1 ? "first: " : "", first_name, first_major, first_minor, driver, built,
                            skipped[0] ? "; " : "", skipped);
  return ADNN_STATUS_SUCCESS;
}
