/*
 * The version rules of the CUDA stack, kept apart from the probe so that they
 * are plain functions of numbers (the unit test t/cuda-compat.c checks them
 * without any NVIDIA software).
 */
#include "config.h"

#include <stdio.h>

#include "cuda_internal.h"

void adnn_cuda__format_cuda_version(int version, char *buf, size_t len) {
  /* CUDA encodes versions as major * 1000 + minor * 10 (12040 is 12.4). */
  snprintf(buf, len, "%d.%d", version / 1000, (version % 1000) / 10);
}

int adnn_cuda__min_driver_for_cuda_major(int major) {
  /* From NVIDIA's minor-version compatibility table: every toolkit of a major
   * release runs on drivers from the first release of that major on. */
  switch (major) {
  case 11: return 450;
  case 12: return 525;
  case 13: return 580;
  default: return 0;
  }
}

int adnn_cuda__driver_compatible(int driver_version, int runtime_version, char *why, size_t len) {
  int runtime_major = runtime_version / 1000;
  /* Minor-version compatibility: a driver for CUDA X.0 or newer runs code built
   * with any CUDA X.y runtime. Below X.0 the runtime refuses to start. */
  if (driver_version >= runtime_major * 1000) return 1;
  char drv[16], rt[16];
  adnn_cuda__format_cuda_version(driver_version, drv, sizeof drv);
  adnn_cuda__format_cuda_version(runtime_version, rt, sizeof rt);
  int min_driver = adnn_cuda__min_driver_for_cuda_major(runtime_major);
  if (min_driver > 0)
    snprintf(why, len,
             "the NVIDIA driver is too old: it supports CUDA %s, but this plugin was built for "
             "CUDA %s, which needs a driver that supports CUDA %d.0 (driver version %d or "
             "newer); upgrade the NVIDIA driver to %d or newer",
             drv, rt, runtime_major, min_driver, min_driver);
  else
    snprintf(why, len,
             "the NVIDIA driver is too old: it supports CUDA %s, but this plugin was built for "
             "CUDA %s, which needs a driver that supports CUDA %d.0 or newer; upgrade the "
             "NVIDIA driver",
             drv, rt, runtime_major);
  return 0;
}

int adnn_cuda__library_compatible(const char *library, int built, int found, const char *advice,
                                  char *why, size_t len) {
  int built_major = built / 10000, built_minor = (built / 100) % 100;
  int found_major = found / 10000, found_minor = (found / 100) % 100;
  /* Within a major release a newer library keeps the interfaces of older ones;
   * an older minor may lack what the build relies on, and a different major
   * guarantees nothing. */
  if (found_major == built_major && found_minor >= built_minor) return 1;
  snprintf(why, len,
           "%s %d.%d.%d was found at run time, but this plugin was built with %s %d.%d.%d and "
           "needs %d.%d or a newer %d.x; %s",
           library, found_major, found_minor, found % 100, library, built_major, built_minor,
           built % 100, built_major, built_minor, built_major, advice);
  return 0;
}
