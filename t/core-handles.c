/*
 * Handles are checked: every public function that takes a context or a plan
 * refuses one that was destroyed (or never created) with
 * ADNN_STATUS_BAD_PARAM_HANDLE and a message naming the function, instead of
 * reading freed memory; the void destroy functions do nothing and log the
 * error; a plan whose context was destroyed is refused with a message saying
 * so and can still be destroyed. Also: concurrent creation, use and
 * destruction of contexts and plans from several threads.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "t/rng.h"
#include "t/tap.h"

static int error_logs;
static char last_log[1024];

static void on_log(adnn_log_level level, const char *source, const char *message, void *user) {
  (void)source;
  (void)user;
  if (level == ADNN_LOG_ERROR) {
    error_logs++;
    snprintf(last_log, sizeof last_log, "%s", message);
  }
}

/* Checks the status, that the message names the function, and `needle`. */
#define REFUSED(call, func, needle)                                                       \
  do {                                                                                    \
    is_status((call), ADNN_STATUS_BAD_PARAM_HANDLE, "%s on a dead handle is refused", func); \
    contains(adnn_last_error(), func ":", "  the message names %s", func);                \
    contains(adnn_last_error(), needle, "  and says \"%s\"", needle);                     \
  } while (0)

static void fill_conv(adnn_conv2d_desc *d) {
  adnn_conv2d_desc_init(d);
  int64_t x[4] = {1, 2, 5, 5}, w[4] = {3, 2, 3, 3}, y[4] = {1, 3, 3, 3};
  adnn_tensor_desc_init(&d->x, ADNN_DTYPE_F32, 4, x);
  adnn_tensor_desc_init(&d->w, ADNN_DTYPE_F32, 4, w);
  adnn_tensor_desc_init(&d->y, ADNN_DTYPE_F32, 4, y);
}

static adnn_plan *make_conv(adnn_context *ctx) {
  adnn_conv2d_desc d;
  fill_conv(&d);
  adnn_plan *plan = NULL;
  is_status(adnn_plan_create_conv2d(ctx, &d, &plan), ADNN_STATUS_SUCCESS, "create a conv2d plan");
  return plan;
}

/* Every function that takes a context, given `dead`. */
static void every_context_function(adnn_context *dead) {
  const char *live = "not a live context";
  void *p = NULL;
  char host[64];
  REFUSED(adnn_malloc(dead, 64, &p), "adnn_malloc", live);
  ok(p == NULL, "  adnn_malloc wrote nothing");
  REFUSED(adnn_free(dead, host), "adnn_free", live);
  REFUSED(adnn_memcpy(dead, host, host + 32, 16, ADNN_MEMCPY_HOST_TO_HOST), "adnn_memcpy", live);
  REFUSED(adnn_memset(dead, host, 0, 16), "adnn_memset", live);
  REFUSED(adnn_memory_register(dead, host, sizeof host, ADNN_MEMORY_DEVICE, 0),
          "adnn_memory_register", live);
  REFUSED(adnn_memory_unregister(dead, host), "adnn_memory_unregister", live);
  REFUSED(adnn_context_synchronize(dead), "adnn_context_synchronize", live);
  REFUSED(adnn_context_set_flags(dead, 0), "adnn_context_set_flags", live);
  adnn_tune_options o;
  adnn_tune_options_init(&o);
  REFUSED(adnn_context_set_tune_options(dead, &o), "adnn_context_set_tune_options", live);
  REFUSED(adnn_context_get_tune_options(dead, &o), "adnn_context_get_tune_options", live);
  REFUSED(adnn_gemm(dead, ADNN_DTYPE_F32, ADNN_NO_TRANS, ADNN_NO_TRANS, 2, 2, 2, 1, host, 2,
                    host + 16, 2, 0, host + 32, 2), "adnn_gemm", live);
  REFUSED(adnn_gemm_batched(dead, ADNN_DTYPE_F32, ADNN_NO_TRANS, ADNN_NO_TRANS, 2, 2, 2, 1, host,
                            2, host + 16, 2, 0, host + 32, 2, 1, 0, 0, 0),
          "adnn_gemm_batched", live);

  /* The getters keep their fallback and record the error. */
  adnn_status before = adnn_last_status();
  (void)before;
  is_str(adnn_context_get_backend(dead), "", "adnn_context_get_backend: \"\"");
  is_status(adnn_last_status(), ADNN_STATUS_BAD_PARAM_HANDLE, "  and records the error");
  contains(adnn_last_error(), "adnn_context_get_backend:", "  naming the function");
  is_str(adnn_context_backend(dead), "", "adnn_context_backend (0.1 alias): \"\"");
  is_int(adnn_context_get_device(dead), -1, "adnn_context_get_device: -1");
  contains(adnn_last_error(), "adnn_context_get_device:", "  records the error");
  is_int(adnn_context_device(dead), -1, "adnn_context_device (0.1 alias): -1");
  is_int(adnn_context_get_flags(dead), 0, "adnn_context_get_flags: 0");
  contains(adnn_last_error(), "adnn_context_get_flags:", "  records the error");

  /* Every plan constructor. */
  adnn_plan *plan = NULL;
  adnn_conv2d_desc conv;
  fill_conv(&conv);
  REFUSED(adnn_plan_create_conv2d(dead, &conv, &plan), "adnn_plan_create_conv2d", live);
  adnn_pool2d_desc pool;
  adnn_pool2d_desc_init(&pool);
  REFUSED(adnn_plan_create_pool2d(dead, &pool, &plan), "adnn_plan_create_pool2d", live);
  adnn_activation_desc act;
  adnn_activation_desc_init(&act);
  REFUSED(adnn_plan_create_activation(dead, &act, &plan), "adnn_plan_create_activation", live);
  adnn_softmax_desc sm;
  adnn_softmax_desc_init(&sm);
  REFUSED(adnn_plan_create_softmax(dead, &sm, &plan), "adnn_plan_create_softmax", live);
  adnn_batchnorm_desc bn;
  adnn_batchnorm_desc_init(&bn);
  REFUSED(adnn_plan_create_batchnorm(dead, &bn, &plan), "adnn_plan_create_batchnorm", live);
  adnn_norm_desc nm;
  adnn_norm_desc_init(&nm);
  REFUSED(adnn_plan_create_norm(dead, &nm, &plan), "adnn_plan_create_norm", live);
  adnn_binary_desc bin;
  adnn_binary_desc_init(&bin);
  REFUSED(adnn_plan_create_binary(dead, &bin, &plan), "adnn_plan_create_binary", live);
  adnn_reduce_desc red;
  adnn_reduce_desc_init(&red);
  REFUSED(adnn_plan_create_reduce(dead, &red, &plan), "adnn_plan_create_reduce", live);
  ok(plan == NULL, "no constructor wrote a plan");
}

/* The candidate queries and the choice reason read the core's own tuning
 * record, which an orphan plan keeps: they still answer. */
static void orphan_queries(adnn_plan *orphan, size_t expected_count) {
  size_t count = 99;
  is_status(adnn_plan_get_candidate_count(orphan, &count), ADNN_STATUS_SUCCESS,
            "an orphan plan still answers adnn_plan_get_candidate_count");
  is_int(count, expected_count, "  with the count it had");
  const adnn_plan_candidate *cand = NULL;
  if (expected_count > 0)
    is_status(adnn_plan_get_candidate(orphan, 0, &cand), ADNN_STATUS_SUCCESS,
              "  and adnn_plan_get_candidate");
  else
    is_status(adnn_plan_get_candidate(orphan, 0, &cand), ADNN_STATUS_BAD_PARAM,
              "  and adnn_plan_get_candidate (no candidate was measured: index 0 is out of range)");
  ok(adnn_plan_get_choice_reason(orphan)[0] != '\0', "  and has its choice reason");
  /* What the plugin knew went with the context. */
  const char *needle = "its context was destroyed";
  is_str(adnn_plan_get_algorithm(orphan), "", "adnn_plan_get_algorithm of an orphan: \"\"");
  contains(adnn_last_error(), needle, "  records why");
  is_int(adnn_plan_get_workspace_bytes(orphan), 0, "adnn_plan_get_workspace_bytes of an orphan: 0");
  contains(adnn_last_error(), needle, "  records why");
  float x[64];
  const void *in[2] = {x, x};
  REFUSED(adnn_plan_execute(orphan, in, 2, x + 32), "adnn_plan_execute", needle);
}

/* Every function that takes a plan, given `dead`. */
static void every_plan_function(adnn_plan *dead, const char *needle) {
  float x[64];
  const void *in[2] = {x, x};
  REFUSED(adnn_plan_execute(dead, in, 2, x + 32), "adnn_plan_execute", needle);
  size_t count = 99;
  const adnn_plan_candidate *cand = NULL;
  REFUSED(adnn_plan_get_candidate_count(dead, &count), "adnn_plan_get_candidate_count", needle);
  REFUSED(adnn_plan_candidate_count(dead, &count), "adnn_plan_candidate_count", needle);
  REFUSED(adnn_plan_get_candidate(dead, 0, &cand), "adnn_plan_get_candidate", needle);
  REFUSED(adnn_plan_candidate_get(dead, 0, &cand), "adnn_plan_candidate_get", needle);
  ok(count == 99 && cand == NULL, "  nothing was written");
  is_str(adnn_plan_get_choice_reason(dead), "", "adnn_plan_get_choice_reason: \"\"");
  contains(adnn_last_error(), "adnn_plan_get_choice_reason:", "  records the error");
  is_str(adnn_plan_choice_reason(dead), "", "adnn_plan_choice_reason: \"\"");
  is_str(adnn_plan_get_algorithm(dead), "", "adnn_plan_get_algorithm: \"\"");
  contains(adnn_last_error(), "adnn_plan_get_algorithm:", "  records the error");
  is_str(adnn_plan_algorithm(dead), "", "adnn_plan_algorithm: \"\"");
  is_int(adnn_plan_get_workspace_bytes(dead), 0, "adnn_plan_get_workspace_bytes: 0");
  contains(adnn_last_error(), "adnn_plan_get_workspace_bytes:", "  records the error");
  is_int(adnn_plan_workspace_bytes(dead), 0, "adnn_plan_workspace_bytes: 0");
}

/* ---- threads: create, use and destroy at once ---- */

typedef struct worker {
  adnn_plan *shared; /* executed by every worker at once */
  const void *in[2];
  void *out;
  int failures;
  unsigned seed;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  tap_rng rng = tap_rng_seed(w->seed);
  for (int round = 0; round < 20; round++) {
    adnn_context *ctx = NULL;
    if (adnn_context_create("cpu", &ctx) != ADNN_STATUS_SUCCESS) {
      w->failures++;
      continue;
    }
    adnn_conv2d_desc d;
    fill_conv(&d);
    adnn_plan *plan = NULL;
    if (adnn_plan_create_conv2d(ctx, &d, &plan) != ADNN_STATUS_SUCCESS) w->failures++;
    if (adnn_plan_execute(w->shared, w->in, 2, w->out) != ADNN_STATUS_SUCCESS) w->failures++;
    /* Half the rounds destroy the context first, leaving an orphan. */
    if (tap_rng_next(&rng) & 1) {
      adnn_context_destroy(ctx);
      if (adnn_plan_execute(plan, w->in, 2, w->out) != ADNN_STATUS_BAD_PARAM_HANDLE) w->failures++;
      adnn_plan_destroy(plan);
    } else {
      adnn_plan_destroy(plan);
      adnn_context_destroy(ctx);
    }
  }
  return NULL;
}

int main(void) {
  adnn_log_set_callback(on_log, NULL);

  /* ---- a context destroyed twice, then used ---- */
  adnn_context *ctx = NULL;
  is_status(adnn_context_create("cpu", &ctx), ADNN_STATUS_SUCCESS, "create a cpu context");
  adnn_plan *orphan = make_conv(ctx);
  adnn_plan *kept = make_conv(ctx);
  size_t count_before = 0;
  adnn_plan_get_candidate_count(kept, &count_before);
  adnn_context_destroy(ctx);
  error_logs = 0;
  adnn_context_destroy(ctx);
  ok(error_logs == 1, "destroying a context twice logs one error (got %d)", error_logs);
  contains(last_log, "adnn_context_destroy:", "  naming the function");
  char addr[32];
  snprintf(addr, sizeof addr, "%p", (void *)ctx);
  contains(last_log, addr, "  and the handle");
  is_status(adnn_last_status(), ADNN_STATUS_BAD_PARAM_HANDLE, "  and records BAD_PARAM_HANDLE");
  contains(adnn_last_error(), "adnn_context_destroy:", "  in adnn_last_error()");
  every_context_function(ctx);

  /* ---- plans of a destroyed context: orphans ---- */
  orphan_queries(kept, count_before);
  float x[64];
  const void *in[2] = {x, x};
  is_status(adnn_plan_execute(orphan, in, 2, x), ADNN_STATUS_BAD_PARAM_HANDLE,
            "executing a plan whose context was destroyed is refused");
  contains(adnn_last_error(), "its context was destroyed", "  saying why");
  contains(adnn_last_error(), "conv2d", "  and naming the op");
  error_logs = 0;
  adnn_plan_destroy(orphan);
  ok(error_logs == 0, "destroying an orphan plan frees it without an error");
  adnn_plan_destroy(kept);

  /* ---- a plan destroyed twice, then used ---- */
  is_status(adnn_context_create("cpu", &ctx), ADNN_STATUS_SUCCESS, "create another context");
  adnn_plan *plan = make_conv(ctx);
  adnn_plan_destroy(plan);
  error_logs = 0;
  adnn_plan_destroy(plan);
  ok(error_logs == 1, "destroying a plan twice logs one error (got %d)", error_logs);
  contains(last_log, "adnn_plan_destroy:", "  naming the function");
  is_status(adnn_last_status(), ADNN_STATUS_BAD_PARAM_HANDLE, "  and records BAD_PARAM_HANDLE");
  every_plan_function(plan, "not a live plan");

  /* ---- foreign handles: never dereferenced ---- */
  int not_a_context = 0;
  REFUSED(adnn_malloc((adnn_context *)&not_a_context, 8, &(void *){NULL}), "adnn_malloc",
          "never returned by adnn_context_create");
  REFUSED(adnn_context_synchronize((adnn_context *)(uintptr_t)0x10), "adnn_context_synchronize",
          "not a live context");
  /* A context is not a plan, and a plan is not a context. */
  adnn_plan *live_plan = make_conv(ctx);
  REFUSED(adnn_plan_execute((adnn_plan *)ctx, in, 2, x), "adnn_plan_execute", "not a live plan");
  REFUSED(adnn_context_synchronize((adnn_context *)live_plan), "adnn_context_synchronize",
          "not a live context");
  error_logs = 0;
  adnn_context_destroy((adnn_context *)live_plan);
  ok(error_logs == 1, "adnn_context_destroy of a plan logs an error and does nothing");
  adnn_plan_destroy((adnn_plan *)ctx);
  is_status(adnn_context_synchronize(ctx), ADNN_STATUS_SUCCESS,
            "adnn_plan_destroy of a context did nothing: the context is still live");
  is_int(adnn_plan_get_candidate_count(live_plan, &count_before), ADNN_STATUS_SUCCESS,
         "and the plan is still live");
  adnn_plan_destroy(live_plan);
  adnn_context_destroy(ctx);

  /* ---- NULL keeps its documented meaning ---- */
  error_logs = 0;
  adnn_context_destroy(NULL);
  adnn_plan_destroy(NULL);
  ok(error_logs == 0, "destroy(NULL) is a silent no-op");
  is_status(adnn_malloc(NULL, 8, &(void *){NULL}), ADNN_STATUS_BAD_PARAM_NULL,
            "adnn_malloc(NULL ctx) is still BAD_PARAM_NULL");
  is_status(adnn_plan_execute(NULL, in, 2, x), ADNN_STATUS_BAD_PARAM_NULL,
            "adnn_plan_execute(NULL) is still BAD_PARAM_NULL");

  /* ---- threads ---- */
  adnn_log_set_callback(NULL, NULL);
  adnn_log_set_level(ADNN_LOG_OFF);
  is_status(adnn_context_create("cpu", &ctx), ADNN_STATUS_SUCCESS, "a context for the threads");
  adnn_plan *shared = make_conv(ctx);
  void *bx = NULL, *bw = NULL, *by = NULL;
  adnn_malloc(ctx, 2 * 25 * sizeof(float), &bx);
  adnn_malloc(ctx, 3 * 2 * 9 * sizeof(float), &bw);
  adnn_malloc(ctx, 3 * 9 * sizeof(float) * 4, &by);
  adnn_memset(ctx, bx, 0, 2 * 25 * sizeof(float));
  adnn_memset(ctx, bw, 0, 3 * 2 * 9 * sizeof(float));
  enum { THREADS = 4 };
  pthread_t tids[THREADS];
  worker ws[THREADS];
  for (int i = 0; i < THREADS; i++) {
    ws[i] = (worker){shared, {bx, bw}, (float *)by + i * 27, 0, 1234u + (unsigned)i};
    pthread_create(&tids[i], NULL, work, &ws[i]);
  }
  int failures = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(tids[i], NULL);
    failures += ws[i].failures;
  }
  is_int(failures, 0, "%d threads created, executed, orphaned and destroyed plans and contexts "
         "concurrently without a failure", THREADS);
  adnn_plan_destroy(shared);
  adnn_context_destroy(ctx);
  return tap_done();
}
