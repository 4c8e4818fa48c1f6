# Benchmarks, built with the rest and run by hand (see doc/performance.md):
# problem sets for adnn-bench (bench/inputs/, installed), peer comparisons and
# the script that reproduces the CPU performance table.
bench_inputs = bench/inputs/resnet50 bench/inputs/mobilenet_v1 bench/inputs/bert_gemm \
	bench/inputs/smoke bench/inputs/ops_cuda bench/inputs/gemm_overhead bench/inputs/bert_matmul
benchinputsdir = $(pkgdatadir)/bench-inputs
dist_benchinputs_DATA = $(bench_inputs)
dist_noinst_SCRIPTS += bench/run-cpu-perf.sh bench/compare-builds.sh bench/run-lowp-matmul.sh \
	bench/run-int8-conv.sh

# Peer drivers: they read adnn-bench's problems (tools/bench_problem.c) and
# time another library on them, printing adnn-bench's rows (bench/peer.c), so
# that bench/run-cpu-perf.sh compares adnn with its peers problem by problem.
# They never link libadnn. gemm-openblas: cblas_sgemm called directly (the
# adnn_gemm overhead).
peer_driver_sources = bench/peer.c bench/peer.h tools/bench_problem.c tools/bench_problem.h
noinst_PROGRAMS += bench/gemm-openblas
bench_gemm_openblas_SOURCES = bench/gemm-openblas.c $(peer_driver_sources)
bench_gemm_openblas_CPPFLAGS = $(AM_CPPFLAGS) $(OPENBLAS_CFLAGS)
bench_gemm_openblas_LDADD = $(OPENBLAS_LIBS) -lm

# adnn's own GEMM engine against cblas_sgemm in one process (linked in
# directly, no plugin), and the FMA peak the GEMM table is stated against
# (bench/gemm-table.sh runs both; doc/performance.md).
noinst_PROGRAMS += bench/gemm-engine bench/fma-peak
bench_gemm_engine_SOURCES = bench/gemm-engine.c kernels/cpu/gemm.c kernels/cpu/gemm_kernel-avx512.c \
	kernels/cpu/gemm_kernel-avx2.c kernels/cpu/cpu_parallel.c kernels/cpu/cpu_features.c \
	kernels/cpu/blas_threads.c
bench_gemm_engine_CPPFLAGS = $(AM_CPPFLAGS) $(OPENBLAS_CFLAGS)
bench_gemm_engine_LDADD = $(OPENBLAS_LIBS) -lpthread -lm
bench_fma_peak_SOURCES = bench/fma-peak.c kernels/cpu/cpu_features.c
bench_fma_peak_LDADD = -lpthread
dist_noinst_SCRIPTS += bench/gemm-table.sh

# The oneDNN comparison driver: built only when configure found oneDNN; never a
# dependency of the library.
if HAVE_DNNL
noinst_PROGRAMS += bench/conv-onednn
endif
bench_conv_onednn_SOURCES = bench/conv-onednn.c $(peer_driver_sources)
bench_conv_onednn_LDADD = $(DNNL_LIBS) -lm

if HAVE_CUDA
noinst_PROGRAMS += bench/gemm-cuda-overhead
endif
# adnn's GEMM against a direct cuBLAS call on the same device.
bench_gemm_cuda_overhead_SOURCES = bench/gemm-cuda-overhead.c
bench_gemm_cuda_overhead_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
bench_gemm_cuda_overhead_LDFLAGS = $(CUDA_LDFLAGS)
bench_gemm_cuda_overhead_LDADD = libadnn.la -lcublas -lcudart_static -lrt -lpthread -ldl -lstdc++

# The cost of the pointer checks (checks on vs ADNN_CONTEXT_UNCHECKED_POINTERS):
# doc/performance.md records a run.
noinst_PROGRAMS += bench/check-overhead
bench_check_overhead_SOURCES = bench/check-overhead.c
bench_check_overhead_LDADD = libadnn.la

# Attention forward and backward on the CUDA plugin against the CPU plugin,
# timed (tools/gpu-check.sh runs it; exit 2 without a GPU). Public API only.
noinst_PROGRAMS += bench/attention-cuda
bench_attention_cuda_SOURCES = bench/attention-cuda.c
bench_attention_cuda_LDADD = libadnn.la -lm

# Fused attention (adnn_attention, adnn_attention_backward) against the unfused
# composition through adnn (batched GEMMs, softmax), each problem in a child
# process for its peak memory; bench/run-attention-perf.sh runs it with the
# machine's description and the PyTorch peer when torch imports
# (doc/performance.md, "Attention").
noinst_PROGRAMS += bench/attention-perf
bench_attention_perf_SOURCES = bench/attention-perf.c
bench_attention_perf_LDADD = libadnn.la -lm
dist_noinst_SCRIPTS += bench/run-attention-perf.sh

# The fused attention forward against the unfused composition of adnn's own
# GEMM, binary (causal mask) and softmax ops, in one run (run by hand).
noinst_PROGRAMS += bench/attention-unfused
bench_attention_unfused_SOURCES = bench/attention-unfused.c
bench_attention_unfused_LDADD = libadnn.la -lm
