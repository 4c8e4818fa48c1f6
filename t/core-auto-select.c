/* "auto" picks the ready plugin with the highest score. The test's plugin
 * directory holds the real cpu plugin (score 10) and the test-only "hiscore"
 * plugin (score 50, host memory, no GEMM slot). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <adnn.h>

#include "t/tap.h"
#include "t/tmpdir.h"

int main(void) {
  const char *build = getenv("ADNN_TEST_BUILDDIR");
  if (build == NULL || *build == '\0') return tap_skip_all("ADNN_TEST_BUILDDIR is not set");
  char cpu_so[1024], hi_so[1024], root[1024], to[1100];
  snprintf(cpu_so, sizeof cpu_so, "%s/backends/cpu/.libs/adnn-cpu.so", build);
  snprintf(hi_so, sizeof hi_so, "%s/t/plugins/.libs/adnn-hiscore.so", build);
  if (access(cpu_so, R_OK) != 0 || access(hi_so, R_OK) != 0)
    return tap_skip_all("the cpu or hiscore plugin is not built");
  if (!tmpdir_make(root, sizeof root, "adnn-auto")) tap_bail("cannot create a temp dir");
  int made = 1;
  snprintf(to, sizeof to, "%s/adnn-cpu.so", root);
  if (symlink(cpu_so, to) != 0) made = 0;
  snprintf(to, sizeof to, "%s/adnn-hiscore.so", root);
  if (symlink(hi_so, to) != 0) made = 0;
  ok(made, "plugin directory %s", root);
  setenv("ADNN_PLUGIN_PATH", root, 1);
  unsetenv("ADNN_BACKEND");

  size_t count = 0;
  adnn_backend_count(&count);
  is_int(count, 2, "two plugins found");
  int scores_ok = 0;
  for (size_t i = 0; i < count; i++) {
    const adnn_backend_info *b;
    adnn_backend_get(i, &b);
    diag("%s: state %d score %d: %s", b->name, (int)b->state, b->score, b->reason);
    if (strcmp(b->name, "hiscore") == 0 && b->state == ADNN_BACKEND_READY && b->score == 50)
      scores_ok++;
    if (strcmp(b->name, "cpu") == 0 && b->state == ADNN_BACKEND_READY && b->score > 0 &&
        b->score < 50)
      scores_ok++;
  }
  is_int(scores_ok, 2, "hiscore is ready with 50, cpu ready with less");

  const char *name = NULL, *reason = NULL;
  is_status(adnn_backend_auto_choice(&name, &reason), ADNN_STATUS_SUCCESS, "auto choice");
  is_str(name, "hiscore", "auto prefers the higher score");
  contains(reason, "cpu", "the reason mentions the cpu plugin it passed over");
  contains(reason, "lower score", "as ready but with a lower score");

  adnn_context *ctx = NULL;
  is_status(adnn_context_create(NULL, &ctx), ADNN_STATUS_SUCCESS, "create auto");
  if (ctx) {
    is_str(adnn_context_get_backend(ctx), "hiscore", "auto context runs on hiscore");
    /* Memory works through the plugin's slots. */
    double host[5] = {1.5, -2.25, 3.0, 4.125, -5.5}, back[5] = {0};
    void *d = NULL, *e = NULL;
    is_status(adnn_malloc(ctx, sizeof host, &d), ADNN_STATUS_SUCCESS, "malloc on hiscore");
    is_status(adnn_malloc(ctx, sizeof host, &e), ADNN_STATUS_SUCCESS, "second malloc");
    is_status(adnn_memcpy(ctx, d, host, sizeof host, ADNN_MEMCPY_HOST_TO_DEVICE),
              ADNN_STATUS_SUCCESS, "memcpy H2D");
    is_status(adnn_memcpy(ctx, e, d, sizeof host, ADNN_MEMCPY_DEVICE_TO_DEVICE),
              ADNN_STATUS_SUCCESS, "memcpy D2D");
    is_status(adnn_memcpy(ctx, back, e, sizeof host, ADNN_MEMCPY_DEVICE_TO_HOST),
              ADNN_STATUS_SUCCESS, "memcpy D2H");
    ok(memcmp(host, back, sizeof host) == 0, "round trip is exact");
    /* No GEMM slot: NOT_SUPPORTED, after validation. */
    is_status(adnn_gemm(ctx, ADNN_DTYPE_F64, ADNN_NO_TRANS, ADNN_NO_TRANS, 1, 1, 1, 1.0, d, 1, e,
                        1, 0.0, (double *)d + 2, 1),
              ADNN_STATUS_NOT_SUPPORTED, "gemm on a plugin without the slot");
    contains(adnn_last_error(), "hiscore", "the message names the backend");
    contains(adnn_last_error(), "GEMM", "and the operation");
    is_status(adnn_gemm_batched(ctx, ADNN_DTYPE_F64, ADNN_NO_TRANS, ADNN_NO_TRANS, 1, 1, 1, 1.0,
                                d, 1, e, 1, 0.0, (double *)d + 2, 1, 2, 0, 0, 1),
              ADNN_STATUS_NOT_SUPPORTED, "batched gemm on a plugin without the slot");
    is_status(adnn_gemm(ctx, ADNN_DTYPE_F64, ADNN_NO_TRANS, ADNN_NO_TRANS, 1, 1, 1, 1.0, d, 0, e,
                        1, 0.0, (double *)d + 2, 1),
              ADNN_STATUS_BAD_PARAM, "bad arguments are still BAD_PARAM, not NOT_SUPPORTED");
    is_status(adnn_gemm(ctx, ADNN_DTYPE_F64, ADNN_NO_TRANS, ADNN_NO_TRANS, 0, 1, 1, 1.0, d, 1, e,
                        1, 0.0, (double *)d + 2, 1),
              ADNN_STATUS_SUCCESS, "an empty gemm is a no-op even without the slot");
    ok(memcmp(host, back, sizeof host) == 0 && ((double *)d)[2] == 3.0,
       "nothing was written by the refused calls");
    is_status(adnn_free(ctx, d), ADNN_STATUS_SUCCESS, "free on hiscore");
    is_status(adnn_free(ctx, d), ADNN_STATUS_BAD_PARAM_DOUBLE_FREE, "double free on hiscore");
    adnn_context_destroy(ctx); /* frees e */
  }

  ctx = NULL;
  is_status(adnn_context_create("cpu", &ctx), ADNN_STATUS_SUCCESS, "explicit cpu");
  if (ctx) {
    is_str(adnn_context_get_backend(ctx), "cpu", "explicit cpu runs on cpu");
    double a[2] = {2, 3}, b[2] = {5, 7}, c = -1;
    void *da, *db, *dc;
    adnn_malloc(ctx, sizeof a, &da);
    adnn_malloc(ctx, sizeof b, &db);
    adnn_malloc(ctx, sizeof c, &dc);
    adnn_memcpy(ctx, da, a, sizeof a, ADNN_MEMCPY_HOST_TO_DEVICE);
    adnn_memcpy(ctx, db, b, sizeof b, ADNN_MEMCPY_HOST_TO_DEVICE);
    is_status(adnn_gemm(ctx, ADNN_DTYPE_F64, ADNN_NO_TRANS, ADNN_NO_TRANS, 1, 1, 2, 1.0, da, 2,
                        db, 1, 0.0, dc, 1),
              ADNN_STATUS_SUCCESS, "gemm on cpu");
    adnn_memcpy(ctx, &c, dc, sizeof c, ADNN_MEMCPY_DEVICE_TO_HOST);
    is_int((long long)c, 31, "2*5 + 3*7 = 31");
    adnn_context_destroy(ctx);
  }
  setenv("ADNN_BACKEND", "cpu", 1);
  ctx = NULL;
  is_status(adnn_context_create("auto", &ctx), ADNN_STATUS_SUCCESS, "auto with ADNN_BACKEND=cpu");
  is_str(adnn_context_get_backend(ctx), "cpu", "ADNN_BACKEND=cpu overrides the higher score");
  adnn_context_destroy(ctx);
  unsetenv("ADNN_BACKEND");
  tmpdir_remove(root);
  return tap_done();
}
