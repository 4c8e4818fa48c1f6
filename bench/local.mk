# Benchmarks, built with the rest and run by hand (see doc/performance.md):
# problem sets for adnn-bench (bench/inputs/, installed), peer comparisons and
# the script that reproduces the CPU performance table.
bench_inputs = bench/inputs/resnet50 bench/inputs/mobilenet_v1 bench/inputs/bert_gemm \
	bench/inputs/smoke bench/inputs/ops_cuda
benchinputsdir = $(pkgdatadir)/bench-inputs
dist_benchinputs_DATA = $(bench_inputs)
dist_noinst_SCRIPTS += bench/run-cpu-perf.sh

noinst_PROGRAMS += bench/gemm-cpu
bench_gemm_cpu_SOURCES = bench/gemm-cpu.c
bench_gemm_cpu_CPPFLAGS = $(AM_CPPFLAGS) $(OPENBLAS_CFLAGS)
bench_gemm_cpu_LDADD = libadnn.la $(OPENBLAS_LIBS)

# The oneDNN comparison driver: built only when configure found oneDNN; never a
# dependency of the library.
if HAVE_DNNL
noinst_PROGRAMS += bench/conv-onednn
endif
bench_conv_onednn_SOURCES = bench/conv-onednn.c tools/bench_problem.c tools/bench_problem.h
bench_conv_onednn_LDADD = $(DNNL_LIBS) -lm

if HAVE_CUDA
noinst_PROGRAMS += bench/gemm-cuda-overhead
endif
# adnn's GEMM against a direct cuBLAS call on the same device.
bench_gemm_cuda_overhead_SOURCES = bench/gemm-cuda-overhead.c
bench_gemm_cuda_overhead_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
bench_gemm_cuda_overhead_LDFLAGS = $(CUDA_LDFLAGS)
bench_gemm_cuda_overhead_LDADD = libadnn.la -lcublas -lcudart_static -lrt -lpthread -ldl -lstdc++
