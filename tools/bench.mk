# adnn-bench (tools/): a benchdnn-style driver that verifies (--mode=corr) and
# times (--mode=perf) any problem on any backend; its problem sets in
# bench/inputs/; the oneDNN comparison driver (built only when configure found
# oneDNN; never a dependency of the library); the script that reproduces the
# CPU performance table. See doc/bench.md.
bin_PROGRAMS += tools/adnn-bench
tools_adnn_bench_SOURCES = tools/adnn-bench.c tools/bench_problem.c tools/bench_problem.h
# The reference kernels are a static convenience library: adnn-bench carries
# its own copy of the oracle for --mode=corr.
tools_adnn_bench_LDADD = libadnn.la kernels/ref/libadnn_ref.la -lm

if HAVE_DNNL
noinst_PROGRAMS += bench/conv-onednn
bench_conv_onednn_SOURCES = bench/conv-onednn.c tools/bench_problem.c tools/bench_problem.h
bench_conv_onednn_LDADD = $(DNNL_LIBS) -lm
endif
EXTRA_DIST += bench/conv-onednn.c

bench_inputs = bench/inputs/resnet50 bench/inputs/mobilenet_v1 bench/inputs/bert_gemm \
	bench/inputs/smoke
benchinputsdir = $(pkgdatadir)/bench-inputs
dist_benchinputs_DATA = $(bench_inputs)
dist_noinst_SCRIPTS += bench/run-cpu-perf.sh

dist_man_MANS += man/adnn-bench.1
dist_doc_DATA += doc/bench.md

TESTS += t/bench-corr.sh
EXTRA_DIST += t/bench-corr.sh
