/*
 * Single-threaded OpenBLAS inside our own pool's tasks.
 *
 * A kernel that spreads GEMM calls over adnn_cpu_parallel_for wants each call
 * to run on the task's thread alone: OpenBLAS's pthread build would otherwise
 * thread every call again, so 2 pool threads would each wake OpenBLAS's
 * threads and the cores would be oversubscribed (doc/cpu.md). Debian's
 * OpenBLAS 0.3.21 has no per-call or per-thread thread count, only the
 * process-wide openblas_set_num_threads, so the region between begin and end
 * sets it to 1 and restores it afterwards. Regions of several threads nest:
 * the first begin saves the count and the last end restores it (under a
 * mutex). OpenBLAS calls made elsewhere in the process while a region is
 * open run single-threaded too; the regions last one execute.
 *
 * Without openblas_set_num_threads (another BLAS) both are no-ops.
 */
#ifndef ADNN_CPU_BLAS_THREADS_H
#define ADNN_CPU_BLAS_THREADS_H

/** Makes OpenBLAS single-threaded until the matching end. */
void adnn_cpu_blas_serial_begin(void);
/** Ends a region of adnn_cpu_blas_serial_begin. */
void adnn_cpu_blas_serial_end(void);

#endif
