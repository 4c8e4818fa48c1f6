/*
 * The CPU plugin's thread pool (see cpu_parallel.h).
 *
 * Workers sleep on a condition variable between loops. A loop is published as
 * (fn, arg, n, chunk) with a generation counter; every participant, the caller
 * included, takes chunks from a shared atomic counter until none are left, so
 * uneven chunks balance themselves. Only one loop runs on the pool at a time:
 * a second caller (another context on another thread) finds the pool busy and
 * runs its loop alone instead of waiting, which can never deadlock, even when a
 * loop body itself calls parallel_for.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "kernels/cpu/cpu_parallel.h"

#define MAX_THREADS 256

static struct {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  pthread_cond_t done;
  int threads; /* total, caller included */
  /* the current loop */
  unsigned long generation;
  adnn_cpu_task_fn fn;
  void *arg;
  int64_t n, chunk;
  atomic_llong next;     /* next chunk start */
  int active_workers;    /* workers still inside the current loop */
  atomic_int busy;       /* 1 while a loop owns the pool */
} pool = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER,
    .threads = 1,
};

/* How many chunks the calling thread is inside (nested loops run inline).
 * Initial-exec TLS: the plugin is dlopen'd, and glibc allocates a dlopen'd
 * module's ordinary (dynamic) TLS with malloc at a thread's first access,
 * aborting the process when that allocation fails ("cannot allocate memory
 * for thread-local data", seen in t/alloc-fail). An initial-exec variable
 * lives in the static TLS block, which glibc sizes with room for a few such
 * bytes of dlopen'd modules, so reading it never allocates. */
static _Thread_local int in_task __attribute__((tls_model("initial-exec")));

int adnn_cpu_parallel_in_task(void) { return in_task > 0; }

static void run_chunks(adnn_cpu_task_fn fn, void *arg, int64_t n, int64_t chunk, int thread) {
  for (;;) {
    int64_t begin = atomic_fetch_add(&pool.next, chunk);
    if (begin >= n) break;
    int64_t end = begin + chunk < n ? begin + chunk : n;
    in_task++;
    fn(arg, begin, end, thread);
    in_task--;
  }
}

static void *worker_main(void *p) {
  int thread = (int)(intptr_t)p;
  unsigned long seen = 0;
  pthread_mutex_lock(&pool.lock);
  for (;;) {
    while (pool.generation == seen) pthread_cond_wait(&pool.wake, &pool.lock);
    seen = pool.generation;
    adnn_cpu_task_fn fn = pool.fn;
    void *arg = pool.arg;
    int64_t n = pool.n, chunk = pool.chunk;
    pthread_mutex_unlock(&pool.lock);
    run_chunks(fn, arg, n, chunk, thread);
    pthread_mutex_lock(&pool.lock);
    if (--pool.active_workers == 0) pthread_cond_signal(&pool.done);
  }
  return NULL;
}

int adnn_cpu_parallel_init(int threads) {
  if (threads < 1) threads = 1;
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  /* Workers are detached and live for the process, like OpenBLAS's own. */
  int started = 1;
  for (int i = 1; i < threads; i++) {
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int err = pthread_create(&t, &attr, worker_main, (void *)(intptr_t)i);
    pthread_attr_destroy(&attr);
    if (err != 0) break;
    started++;
  }
  pthread_mutex_lock(&pool.lock);
  pool.threads = started;
  pthread_mutex_unlock(&pool.lock);
  return started;
}

int adnn_cpu_parallel_threads(void) { return pool.threads; }

void adnn_cpu_parallel_for(int64_t n, int64_t grain, adnn_cpu_task_fn fn, void *arg) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  int threads = pool.threads;
  int expected = 0;
  if (threads <= 1 || n <= grain || !atomic_compare_exchange_strong(&pool.busy, &expected, 1)) {
    in_task++;
    fn(arg, 0, n, 0);
    in_task--;
    return;
  }
  /* About four chunks per thread balances uneven work without much overhead. */
  int64_t chunk = (n + (int64_t)threads * 4 - 1) / ((int64_t)threads * 4);
  if (chunk < grain) chunk = grain;
  int64_t chunks = (n + chunk - 1) / chunk;
  int workers = threads - 1;
  if (chunks - 1 < workers) workers = (int)(chunks - 1);

  pthread_mutex_lock(&pool.lock);
  pool.fn = fn;
  pool.arg = arg;
  pool.n = n;
  pool.chunk = chunk;
  atomic_store(&pool.next, 0);
  /* Every worker wakes for a new generation; those beyond `workers` simply find
   * no chunk left. All of them must finish before the loop's state is reused. */
  pool.active_workers = threads - 1;
  pool.generation++;
  pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.lock);

  run_chunks(fn, arg, n, chunk, 0);

  pthread_mutex_lock(&pool.lock);
  while (pool.active_workers > 0) pthread_cond_wait(&pool.done, &pool.lock);
  pthread_mutex_unlock(&pool.lock);
  atomic_store(&pool.busy, 0);
  (void)workers;
}
