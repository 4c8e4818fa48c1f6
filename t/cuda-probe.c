/*
 * The CUDA plugin as the public API shows it.
 *
 * Without a usable GPU (build machines, CI): the plugin is listed as "cuda",
 * not ready, with a reason (here: libcuda.so.1 missing, and the fix);
 * explicit requests for "cuda" and "cuda:0" fail with that reason; "auto"
 * falls back to the CPU. With a GPU the same test asserts the opposite: ready,
 * devices with their properties, contexts on "cuda" and "cuda:0", and "auto"
 * choosing cuda.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <adnn.h>

#include "t/tap.h"

static const char *property(const adnn_property *props, size_t count, const char *key) {
  for (size_t i = 0; i < count; i++)
    if (strcmp(props[i].key, key) == 0) return props[i].value;
  return NULL;
}

static void show_backend(const adnn_backend_info *info) {
  diag("cuda plugin: %s, state %d, score %d", info->path, (int)info->state, info->score);
  diag("  reason: %s", info->reason);
  for (size_t i = 0; i < info->property_count; i++)
    diag("  %s = %s", info->properties[i].key, info->properties[i].value);
  for (size_t d = 0; d < info->device_count; d++) {
    diag("  device %d: %s", info->devices[d].index, info->devices[d].name);
    for (size_t i = 0; i < info->devices[d].property_count; i++)
      diag("    %s = %s", info->devices[d].properties[i].key, info->devices[d].properties[i].value);
  }
}

int main(void) {
  size_t count = 0;
  is_status(adnn_backend_count(&count), ADNN_STATUS_SUCCESS, "adnn_backend_count");
  const adnn_backend_info *cuda = NULL;
  for (size_t i = 0; i < count; i++) {
    const adnn_backend_info *info = NULL;
    if (adnn_backend_get(i, &info) == ADNN_STATUS_SUCCESS && info && strcmp(info->name, "cuda") == 0)
      cuda = info;
    else if (info && info->state == ADNN_BACKEND_LOAD_FAILED && strstr(info->path, "adnn-cuda"))
      diag("the CUDA plugin failed to load: %s", info->reason);
  }
  if (!ok(cuda != NULL, "the CUDA plugin is listed as \"cuda\"")) return tap_done();
  show_backend(cuda);
  ok(cuda->reason && cuda->reason[0], "it has a reason");
  ok(property(cuda->properties, cuda->property_count, "built_for") != NULL,
     "it says which CUDA version it was built for");

  /* Whether this machine has a driver at all decides what to expect. */
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  adnn_context *ctx = NULL;

  if (cuda->state == ADNN_BACKEND_READY) {
    diag("a usable GPU is present: checking the ready state");
    ok(cuda->score > 10, "a ready cuda scores above cpu (score %d)", cuda->score);
    ok(cuda->device_count >= 1, "at least one device (%zu)", cuda->device_count);
    for (const char *key = "driver\0runtime\0cublas\0cudnn\0"; *key; key += strlen(key) + 1)
      ok(property(cuda->properties, cuda->property_count, key) != NULL, "property %s", key);
    contains(property(cuda->properties, cuda->property_count, "driver"), "supports CUDA",
             "the driver property says which CUDA version it supports");
    if (cuda->device_count >= 1) {
      const adnn_device_info *d = &cuda->devices[0];
      is_int(d->index, 0, "the first device is cuda:0");
      ok(d->name && d->name[0], "it has a name (%s)", d->name);
      for (const char *key = "compute_capability\0memory\0multiprocessors\0"; *key; key += strlen(key) + 1)
        ok(property(d->properties, d->property_count, key) != NULL, "device property %s", key);
    }
    is_status(adnn_context_create("cuda", &ctx), ADNN_STATUS_SUCCESS, "context on \"cuda\"");
    is_str(adnn_context_backend(ctx), "cuda", "it runs on cuda");
    is_int(adnn_context_device(ctx), 0, "on device 0");
    adnn_context_destroy(ctx);
    ctx = NULL;
    is_status(adnn_context_create("cuda:0", &ctx), ADNN_STATUS_SUCCESS, "context on \"cuda:0\"");
    adnn_context_destroy(ctx);
    ctx = NULL;
    is_status(adnn_context_create("auto", &ctx), ADNN_STATUS_SUCCESS, "context on \"auto\"");
    is_str(adnn_context_backend(ctx), "cuda", "auto prefers a ready cuda");
    adnn_context_destroy(ctx);
  } else {
    diag("no usable GPU: checking that the reason is reported");
    ok(cuda->state == ADNN_BACKEND_UNAVAILABLE || cuda->state == ADNN_BACKEND_INCOMPATIBLE,
       "state is UNAVAILABLE or INCOMPATIBLE (%d)", (int)cuda->state);
    is_int(cuda->score, 0, "score 0");
    is_int(cuda->device_count, 0, "no device listed");
    adnn_status expected = cuda->state == ADNN_BACKEND_INCOMPATIBLE ? ADNN_STATUS_BACKEND_INCOMPATIBLE
                                                                   : ADNN_STATUS_BACKEND_UNAVAILABLE;
    if (!driver) {
      is_int(cuda->state, ADNN_BACKEND_UNAVAILABLE, "without libcuda.so.1: UNAVAILABLE");
      contains(cuda->reason, "no NVIDIA driver", "the reason says there is no driver");
      contains(cuda->reason, "libcuda.so.1", "the reason names libcuda.so.1");
      contains(cuda->reason, "580", "the reason names the minimum driver");
    }
    is_status(adnn_context_create("cuda", &ctx), expected, "\"cuda\" is refused");
    ok(ctx == NULL, "no context was written");
    contains(adnn_last_error(), cuda->reason, "adnn_last_error() carries the plugin's reason");
    is_status(adnn_context_create("cuda:0", &ctx), expected, "\"cuda:0\" is refused");
    contains(adnn_last_error(), cuda->reason, "adnn_last_error() carries the plugin's reason");
    is_status(adnn_context_create("auto", &ctx), ADNN_STATUS_SUCCESS, "\"auto\" still works");
    is_str(adnn_context_backend(ctx), "cpu", "\"auto\" falls back to cpu");
    adnn_context_destroy(ctx);
    const char *name = NULL, *why = NULL;
    is_status(adnn_backend_auto_choice(&name, &why), ADNN_STATUS_SUCCESS, "adnn_backend_auto_choice");
    is_str(name, "cpu", "auto choice is cpu");
    diag("auto choice: %s", why ? why : "(null)");
  }
  if (driver) dlclose(driver);
  return tap_done();
}
