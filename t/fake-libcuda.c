/*
 * A FAKE NVIDIA driver library, for tests only (never installed).
 *
 * t/cuda-fake-driver presents this object as libcuda.so.1 (a symlink in a
 * temporary directory put first on LD_LIBRARY_PATH), so that the CUDA plugin's
 * real probe code runs against drivers and GPUs this machine does not have.
 * What it reports comes from the environment:
 *
 *   FAKE_CUDA_DRIVER_VERSION  what cuDriverGetVersion returns (default 13000)
 *   FAKE_CUDA_INIT_ERROR      a CUresult for cuInit to return (default 0)
 *   FAKE_CUDA_DEVICES         the devices, "name:major.minor:sms:GiB" separated
 *                             by ';' (default one "Fake H200:9.0:132:141");
 *                             an empty value means no device
 *
 * It implements only the functions the probe calls. The statically linked CUDA
 * runtime, if a test goes on to create a context, looks up its own entry points
 * (cuGetProcAddress); they are absent here, which the runtime must report as an
 * error rather than crash on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define FAKE_EXPORT __attribute__((visibility("default")))
#define FAKE_MAX_DEVICES 8

typedef struct fake_device {
  char name[128];
  int major, minor, sms;
  double gib;
} fake_device;

static fake_device devices[FAKE_MAX_DEVICES];
static int device_count = -1; /* -1: not parsed yet */
static int initialized;

static int env_int(const char *name, int fallback) {
  const char *v = getenv(name);
  return v && *v ? atoi(v) : fallback;
}

static void parse_devices(void) {
  if (device_count >= 0) return;
  device_count = 0;
  const char *spec = getenv("FAKE_CUDA_DEVICES");
  if (!spec) spec = "Fake H200:9.0:132:141";
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", spec);
  char *save = NULL;
  for (char *item = strtok_r(buf, ";", &save); item && device_count < FAKE_MAX_DEVICES;
       item = strtok_r(NULL, ";", &save)) {
    fake_device *d = &devices[device_count];
    char *colon = strchr(item, ':');
    if (!colon) continue;
    *colon = '\0';
    snprintf(d->name, sizeof d->name, "%s", item);
    if (sscanf(colon + 1, "%d.%d:%d:%lf", &d->major, &d->minor, &d->sms, &d->gib) != 4) continue;
    device_count++;
  }
}

FAKE_EXPORT CUresult cuDriverGetVersion(int *version) {
  if (!version) return CUDA_ERROR_INVALID_VALUE;
  *version = env_int("FAKE_CUDA_DRIVER_VERSION", 13000);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuInit(unsigned int flags) {
  (void)flags;
  int err = env_int("FAKE_CUDA_INIT_ERROR", 0);
  if (err) return (CUresult)err;
  parse_devices();
  if (device_count == 0) return CUDA_ERROR_NO_DEVICE;
  initialized = 1;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetCount(int *count) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  *count = device_count;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (ordinal < 0 || ordinal >= device_count) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice device) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (device < 0 || device >= device_count) return CUDA_ERROR_INVALID_DEVICE;
  snprintf(name, (size_t)len, "%s", devices[device].name);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                                          CUdevice device) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (device < 0 || device >= device_count) return CUDA_ERROR_INVALID_DEVICE;
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = devices[device].major; break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = devices[device].minor; break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = devices[device].sms; break;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice device) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (device < 0 || device >= device_count) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = (size_t)(devices[device].gib * 1024.0 * 1024.0 * 1024.0);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuGetErrorName(CUresult error, const char **name) {
  switch (error) {
  case CUDA_SUCCESS: *name = "CUDA_SUCCESS"; break;
  case CUDA_ERROR_INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; break;
  case CUDA_ERROR_NOT_INITIALIZED: *name = "CUDA_ERROR_NOT_INITIALIZED"; break;
  case CUDA_ERROR_NO_DEVICE: *name = "CUDA_ERROR_NO_DEVICE"; break;
  case CUDA_ERROR_INVALID_DEVICE: *name = "CUDA_ERROR_INVALID_DEVICE"; break;
  case CUDA_ERROR_STUB_LIBRARY: *name = "CUDA_ERROR_STUB_LIBRARY"; break;
  case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: *name = "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"; break;
  default: *name = NULL; return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
