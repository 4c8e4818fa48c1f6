# Benchmarks (built with the rest, run by hand; see doc/performance.md).
noinst_PROGRAMS += bench/gemm-cpu
bench_gemm_cpu_SOURCES = bench/gemm-cpu.c
bench_gemm_cpu_CPPFLAGS = $(AM_CPPFLAGS) $(OPENBLAS_CFLAGS)
bench_gemm_cpu_LDADD = libadnn.la $(OPENBLAS_LIBS)
