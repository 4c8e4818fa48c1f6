/*
 * The version rules of the CUDA plugin (backends/cuda/cuda_compat.c), checked
 * as plain functions: which driver runs a CUDA 13 build, which cuDNN and cuBLAS
 * releases are compatible, and that the refusals name both versions and the fix.
 * Needs no NVIDIA software at run time.
 */
#include <stdio.h>
#include <string.h>

#include "backends/cuda/cuda_internal.h"
#include "t/tap.h"

/* cuda_compat.c only formats; the plugin's host table is not used here. */
const adnn_plugin_host *adnn_cuda__host;

int main(void) {
  char buf[64], why[ADNN_PLUGIN_REASON_LEN];

  adnn_cuda__format_cuda_version(12040, buf, sizeof buf);
  is_str(buf, "12.4", "12040 is CUDA 12.4");
  adnn_cuda__format_cuda_version(13000, buf, sizeof buf);
  is_str(buf, "13.0", "13000 is CUDA 13.0");
  adnn_cuda__format_cuda_version(13020, buf, sizeof buf);
  is_str(buf, "13.2", "13020 is CUDA 13.2");

  is_int(adnn_cuda__min_driver_for_cuda_major(13), 580, "CUDA 13 needs driver 580");
  is_int(adnn_cuda__min_driver_for_cuda_major(12), 525, "CUDA 12 needs driver 525");
  is_int(adnn_cuda__min_driver_for_cuda_major(99), 0, "an unknown major has no known minimum");

  /* Minor-version compatibility: any 13.x driver runs any 13.y build. */
  ok(adnn_cuda__driver_compatible(13000, 13000, why, sizeof why), "13.0 driver, 13.0 build");
  ok(adnn_cuda__driver_compatible(13000, 13020, why, sizeof why), "13.0 driver, 13.2 build (minor-version compatibility)");
  ok(adnn_cuda__driver_compatible(14000, 13000, why, sizeof why), "a newer major driver runs an older build");
  why[0] = '\0';
  ok(!adnn_cuda__driver_compatible(12040, 13000, why, sizeof why), "12.4 driver, 13.0 build: refused");
  contains(why, "supports CUDA 12.4", "the refusal says what the driver supports");
  contains(why, "built for CUDA 13.0", "the refusal says what the plugin was built for");
  contains(why, "580", "the refusal gives the minimum driver");
  ok(!adnn_cuda__driver_compatible(0, 13000, why, sizeof why), "version 0 is refused");

  /* cuDNN 9 and cuBLAS 13: same major, run-time minor >= build minor. */
  ok(adnn_cuda__library_compatible("cuDNN", 91900, 91900, "x", why, sizeof why), "cuDNN 9.19.0 with 9.19.0");
  ok(adnn_cuda__library_compatible("cuDNN", 91900, 91902, "x", why, sizeof why), "cuDNN 9.19.2 runs a 9.19.0 build (patch)");
  ok(adnn_cuda__library_compatible("cuDNN", 91900, 92000, "x", why, sizeof why), "cuDNN 9.20 runs a 9.19 build");
  why[0] = '\0';
  ok(!adnn_cuda__library_compatible("cuDNN", 91900, 91000, "install cuDNN 9.19", why, sizeof why),
     "cuDNN 9.10 does not run a 9.19 build");
  contains(why, "cuDNN 9.10.0 was found", "the refusal names the version found");
  contains(why, "built with cuDNN 9.19.0", "the refusal names the version built with");
  contains(why, "install cuDNN 9.19", "the refusal says what to install");
  ok(!adnn_cuda__library_compatible("cuDNN", 91900, 100000, "x", why, sizeof why), "cuDNN 10 is another major");
  ok(!adnn_cuda__library_compatible("cuBLAS", 130100, 130000, "x", why, sizeof why), "cuBLAS 13.0 does not run a 13.1 build");
  contains(why, "cuBLAS 13.0.0 was found", "the cuBLAS refusal names the version found");
  ok(adnn_cuda__library_compatible("cuBLAS", 130100, 130200, "x", why, sizeof why), "cuBLAS 13.2 runs a 13.1 build");
  return tap_done();
}
