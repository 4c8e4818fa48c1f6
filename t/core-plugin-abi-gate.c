/* The core refuses a problem that uses fields appended to the plugin ABI
 * after the backend's plugin was built (doc/plugins.md): the test-only
 * "abi26" plugin declares ABI 2.6, so an optimizer with model_dtype (2.7) is
 * NOT_SUPPORTED with a message naming both versions and the field, before
 * the plugin is called; the same optimizer without model_dtype reaches the
 * plugin's plan_create (which refuses it with a message of its own). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <adnn.h>

#include "t/tap.h"
#include "t/tmpdir.h"

int main(void) {
  const char *build = getenv("ADNN_TEST_BUILDDIR");
  if (build == NULL || *build == '\0') return tap_skip_all("ADNN_TEST_BUILDDIR is not set");
  char so[1024], root[1024], to[1100];
  snprintf(so, sizeof so, "%s/t/plugins/.libs/adnn-abi26.so", build);
  if (access(so, R_OK) != 0) return tap_skip_all("the abi26 test plugin is not built");
  if (!tmpdir_make(root, sizeof root, "adnn-abigate")) tap_bail("cannot create a temp dir");
  snprintf(to, sizeof to, "%s/adnn-abi26.so", root);
  ok(symlink(so, to) == 0, "plugin directory %s", root);
  setenv("ADNN_PLUGIN_PATH", root, 1);
  unsetenv("ADNN_BACKEND");

  adnn_context *ctx = NULL;
  const adnn_status made = adnn_context_create("abi26", &ctx);
  is_status(made, ADNN_STATUS_SUCCESS, "a context on the ABI 2.6 test plugin");
  if (made != ADNN_STATUS_SUCCESS) return tap_done();
  const int64_t sizes[2] = {5, 3};
  adnn_optimizer_desc d;
  adnn_optimizer_desc_init(&d);
  d.kind = ADNN_OPTIMIZER_ADAM;
  d.tensor_count = 2;
  d.sizes = sizes;
  d.model_dtype = ADNN_DTYPE_BF16;
  adnn_plan *plan = NULL;
  is_status(adnn_plan_create_optimizer(ctx, &d, &plan), ADNN_STATUS_NOT_SUPPORTED,
            "model_dtype on an ABI 2.6 plugin is NOT_SUPPORTED");
  const char *m = adnn_last_error();
  contains(m, "plugin ABI 2.6, older than the 2.7", "the message gives both ABI versions");
  contains(m, "model_dtype", "the message names the field");
  ok(strstr(m, "plan_create reached") == NULL, "the plugin was not called");
  ok(plan == NULL, "no plan");
  d.model_dtype = 0;
  is_status(adnn_plan_create_optimizer(ctx, &d, &plan), ADNN_STATUS_NOT_SUPPORTED,
            "the F32 optimizer is passed on to the plugin, which refuses it");
  contains(adnn_last_error(), "plan_create reached", "the plugin's own message");
  adnn_context_destroy(ctx);
  tmpdir_remove(root);
  return tap_done();
}
