/* Single-threaded OpenBLAS regions (blas_threads.h). */
#include "config.h"

#include <pthread.h>

#include <cblas.h>

#include "kernels/cpu/blas_threads.h"

#if defined(HAVE_OPENBLAS_SET_NUM_THREADS) && defined(HAVE_OPENBLAS_GET_NUM_THREADS)
static pthread_mutex_t serial_lock = PTHREAD_MUTEX_INITIALIZER;
static int serial_depth;   /* open regions */
static int saved_threads;  /* OpenBLAS's count when the first region opened */

void adnn_cpu_blas_serial_begin(void) {
  pthread_mutex_lock(&serial_lock);
  if (serial_depth++ == 0) {
    saved_threads = openblas_get_num_threads();
    if (saved_threads > 1) openblas_set_num_threads(1);
  }
  pthread_mutex_unlock(&serial_lock);
}

void adnn_cpu_blas_serial_end(void) {
  pthread_mutex_lock(&serial_lock);
  if (--serial_depth == 0 && saved_threads > 1) openblas_set_num_threads(saved_threads);
  pthread_mutex_unlock(&serial_lock);
}
#else
void adnn_cpu_blas_serial_begin(void) {}
void adnn_cpu_blas_serial_end(void) {}
#endif
