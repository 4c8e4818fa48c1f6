/* Thread safety: the first adnn call (which loads the plugins) and context
 * creation happen on 8 threads at once; each thread then runs a small GEMM on
 * its own context and checks it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "t/tap.h"

#define THREADS 8
#define N 16

typedef struct job {
  int id;
  adnn_status create_status;
  char backend[32];
  char error[256];
  int gemm_ok;
} job;

static pthread_barrier_t start;

static void *worker(void *arg) {
  job *j = arg;
  pthread_barrier_wait(&start);
  adnn_context *ctx = NULL;
  j->create_status = adnn_context_create("auto", &ctx);
  if (j->create_status != ADNN_STATUS_SUCCESS) {
    snprintf(j->error, sizeof j->error, "%s", adnn_last_error());
    return NULL;
  }
  snprintf(j->backend, sizeof j->backend, "%s", adnn_context_get_backend(ctx));
  /* C = A * B with A, B small integers: exact in double, so compare exactly. */
  double a[N * N], b[N * N], c[N * N], ref[N * N];
  tap_rng rng = tap_rng_seed(100 + (uint64_t)j->id);
  for (int i = 0; i < N * N; i++) {
    a[i] = (double)(int)tap_rng_uniform(&rng, -8, 8);
    b[i] = (double)(int)tap_rng_uniform(&rng, -8, 8);
  }
  for (int r = 0; r < N; r++)
    for (int col = 0; col < N; col++) {
      double s = 0;
      for (int k = 0; k < N; k++) s += a[r * N + k] * b[k * N + col];
      ref[r * N + col] = s;
    }
  void *da = NULL, *db = NULL, *dc = NULL;
  j->gemm_ok = adnn_malloc(ctx, sizeof a, &da) == ADNN_STATUS_SUCCESS &&
               adnn_malloc(ctx, sizeof b, &db) == ADNN_STATUS_SUCCESS &&
               adnn_malloc(ctx, sizeof c, &dc) == ADNN_STATUS_SUCCESS &&
               adnn_memcpy(ctx, da, a, sizeof a, ADNN_MEMCPY_HOST_TO_DEVICE) == 0 &&
               adnn_memcpy(ctx, db, b, sizeof b, ADNN_MEMCPY_HOST_TO_DEVICE) == 0 &&
               adnn_gemm(ctx, ADNN_DTYPE_F64, ADNN_NO_TRANS, ADNN_NO_TRANS, N, N, N, 1.0, da, N,
                         db, N, 0.0, dc, N) == 0 &&
               adnn_memcpy(ctx, c, dc, sizeof c, ADNN_MEMCPY_DEVICE_TO_HOST) == 0 &&
               adnn_context_synchronize(ctx) == 0 && memcmp(c, ref, sizeof c) == 0;
  if (!j->gemm_ok) snprintf(j->error, sizeof j->error, "%s", adnn_last_error());
  adnn_free(ctx, da);
  adnn_free(ctx, db);
  adnn_free(ctx, dc);
  adnn_context_destroy(ctx);
  return NULL;
}

int main(void) {
  job jobs[THREADS];
  pthread_t th[THREADS];
  unsetenv("ADNN_BACKEND"); /* this test is about "auto" */
  pthread_barrier_init(&start, NULL, THREADS);
  for (int i = 0; i < THREADS; i++) {
    memset(&jobs[i], 0, sizeof jobs[i]);
    jobs[i].id = i;
    if (pthread_create(&th[i], NULL, worker, &jobs[i]) != 0) tap_bail("pthread_create failed");
  }
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&start);

  for (int i = 0; i < THREADS; i++) {
    is_status(jobs[i].create_status, ADNN_STATUS_SUCCESS, "thread %d: adnn_context_create(auto)", i);
    if (jobs[i].create_status != ADNN_STATUS_SUCCESS) {
      diag("  %s", jobs[i].error);
      continue;
    }
    is_str(jobs[i].backend, jobs[0].backend, "thread %d: same backend as thread 0", i);
    ok(jobs[i].gemm_ok, "thread %d: GEMM on its own context is exact", i);
    if (!jobs[i].gemm_ok) diag("  %s", jobs[i].error);
  }
  const char *name = NULL;
  adnn_backend_auto_choice(&name, NULL);
  is_str(jobs[0].backend, name, "the threads got the auto choice");
  size_t n1 = 0, n2 = 0;
  adnn_backend_count(&n1);
  adnn_backend_count(&n2);
  ok(n1 >= 1 && n1 == n2, "plugins were loaded once (%zu plugins)", n1);
  return tap_done();
}
