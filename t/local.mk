# The test suite: every test is registered here. TAP programs (one per topic)
# and TAP shell scripts, run through Automake's tap-driver.sh; test-only
# plugins and fakes that are never installed. See doc/testing.md.
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
TEST_EXTENSIONS = .sh
SH_LOG_DRIVER = $(LOG_DRIVER)
SH_LOG_COMPILER = $(SHELL)
AM_TESTS_ENVIRONMENT = \
	ADNN_PLUGIN_PATH='$(abs_top_builddir)/backends/cpu/.libs:$(abs_top_builddir)/backends/cuda/.libs'; \
	export ADNN_PLUGIN_PATH; \
	ADNN_TEST_BUILDDIR='$(abs_top_builddir)'; export ADNN_TEST_BUILDDIR; \
	ADNN_TEST_SRCDIR='$(abs_top_srcdir)'; export ADNN_TEST_SRCDIR; \
	ADNN_TEST_MAKE='$(MAKE)'; export ADNN_TEST_MAKE; \
	ADNN_TEST_CC='$(CC)'; export ADNN_TEST_CC; \
	ADNN_TEST_PKGLIBDIR='$(pkglibdir)'; export ADNN_TEST_PKGLIBDIR; \
	ADNN_TEST_LIBDIR='$(libdir)'; export ADNN_TEST_LIBDIR; \
	ADNN_TEST_PREFIX='$(prefix)'; export ADNN_TEST_PREFIX; \
	ADNN_TEST_BINDIR='$(bindir)'; export ADNN_TEST_BINDIR; \
	ADNN_CACHE_DIR=$${TMPDIR:-/tmp}/adnn-test-cache-$$$$; export ADNN_CACHE_DIR; \
	unset ADNN_BACKEND ADNN_LOG ADNN_NUM_THREADS ADNN_ALLOW_TF32 ADNN_CONV2D_ALGO ADNN_CPU_SIMD \
	  ADNN_TUNE ADNN_TUNE_BUDGET_MS ADNN_TUNE_WORKSPACE_LIMIT ADNN_DETERMINISTIC \
	  ADNN_SYSTEM_PERFDB ADNN_CUDA_WORKSPACE_LIMIT ADNN_CUDA_CONV_FIND ADNN_VERBOSE;

EXTRA_DIST += t/tap.h t/rng.h t/tmpdir.h t/valgrind.supp

# ---- core: status, tensors, contexts, memory, bad input, logging, loader -----
core_tests = t/core-version t/core-status t/core-tensor t/core-context t/core-threads \
	t/core-memory t/core-badinput t/core-log t/core-loader t/core-auto-select \
	t/core-plugin-abi-gate t/core-struct-size t/core-compat-0.1
check_PROGRAMS += $(core_tests)
TESTS += $(core_tests)
t_core_version_SOURCES = t/core-version.c t/tap.h
t_core_version_LDADD = libadnn.la
t_core_status_SOURCES = t/core-status.c t/tap.h
t_core_status_LDADD = libadnn.la
t_core_tensor_SOURCES = t/core-tensor.c t/tap.h
t_core_tensor_LDADD = libadnn.la
t_core_context_SOURCES = t/core-context.c t/tap.h
t_core_context_LDADD = libadnn.la
t_core_threads_SOURCES = t/core-threads.c t/tap.h
t_core_threads_LDADD = libadnn.la
t_core_memory_SOURCES = t/core-memory.c t/tap.h
t_core_memory_LDADD = libadnn.la
t_core_badinput_SOURCES = t/core-badinput.c t/tap.h
t_core_badinput_LDADD = libadnn.la
t_core_log_SOURCES = t/core-log.c t/tap.h
t_core_log_LDADD = libadnn.la
t_core_loader_SOURCES = t/core-loader.c t/tap.h t/tmpdir.h
t_core_loader_LDADD = libadnn.la
# The loader tests dlopen these; make check builds them first.
EXTRA_t_core_loader_DEPENDENCIES = $(test_plugins) backends/cpu/adnn-cpu.la
t_core_auto_select_SOURCES = t/core-auto-select.c t/tap.h t/tmpdir.h
t_core_auto_select_LDADD = libadnn.la
EXTRA_t_core_auto_select_DEPENDENCIES = t/plugins/adnn-hiscore.la backends/cpu/adnn-cpu.la
t_core_plugin_abi_gate_SOURCES = t/core-plugin-abi-gate.c t/tap.h t/tmpdir.h
t_core_plugin_abi_gate_LDADD = libadnn.la
EXTRA_t_core_plugin_abi_gate_DEPENDENCIES = t/plugins/adnn-abi26.la
t_core_struct_size_SOURCES = t/core-struct-size.c t/tap.h
t_core_struct_size_LDADD = libadnn.la
# Built against the frozen headers of adnn 0.1.0 (t/compat/adnn-0.1/ first on
# the include path), run against the current library.
t_core_compat_0_1_SOURCES = t/core-compat-0.1.c t/tap.h
t_core_compat_0_1_CPPFLAGS = -I$(top_srcdir)/t/compat/adnn-0.1 -I$(top_srcdir)
t_core_compat_0_1_LDADD = libadnn.la -lm
compat_0_1_headers = t/compat/adnn-0.1/adnn.h t/compat/adnn-0.1/adnn/ops.h \
	t/compat/adnn-0.1/adnn/plugin.h t/compat/adnn-0.1/adnn/status.h \
	t/compat/adnn-0.1/adnn/tuning.h t/compat/adnn-0.1/adnn/version.h
EXTRA_DIST += t/compat/README $(compat_0_1_headers)

# Test-only plugins for the loader tests: shared objects that are never
# installed (-rpath /nowhere makes libtool build them shared; they land in
# t/plugins/.libs/). They do not link against libadnn, like real plugins.
test_plugins = t/plugins/adnn-abi1.la t/plugins/adnn-badabi.la t/plugins/adnn-noentry.la \
	t/plugins/adnn-nulltable.la t/plugins/adnn-unavail.la t/plugins/adnn-malformed.la \
	t/plugins/adnn-hiscore.la t/plugins/adnn-zeroscore.la t/plugins/adnn-probefail.la \
	t/plugins/adnn-abi26.la
check_LTLIBRARIES += $(test_plugins)
EXTRA_DIST += t/plugins/test-plugin.h
test_plugin_ldflags = -module -avoid-version -shared -rpath /nowhere
# A plugin of the previous plugin ABI, compiled against the 0.1 headers.
t_plugins_adnn_abi1_la_SOURCES = t/plugins/adnn-abi1.c
t_plugins_adnn_abi1_la_CPPFLAGS = -I$(top_srcdir)/t/compat/adnn-0.1
t_plugins_adnn_abi1_la_LDFLAGS = $(test_plugin_ldflags)
t_plugins_adnn_badabi_la_SOURCES = t/plugins/adnn-badabi.c t/plugins/test-plugin.h
t_plugins_adnn_badabi_la_LDFLAGS = $(test_plugin_ldflags)
t_plugins_adnn_noentry_la_SOURCES = t/plugins/adnn-noentry.c
t_plugins_adnn_noentry_la_LDFLAGS = $(test_plugin_ldflags)
t_plugins_adnn_nulltable_la_SOURCES = t/plugins/adnn-nulltable.c t/plugins/test-plugin.h
t_plugins_adnn_nulltable_la_LDFLAGS = $(test_plugin_ldflags)
t_plugins_adnn_unavail_la_SOURCES = t/plugins/adnn-unavail.c t/plugins/test-plugin.h
t_plugins_adnn_unavail_la_LDFLAGS = $(test_plugin_ldflags)
t_plugins_adnn_malformed_la_SOURCES = t/plugins/adnn-malformed.c t/plugins/test-plugin.h
t_plugins_adnn_malformed_la_LDFLAGS = $(test_plugin_ldflags)
t_plugins_adnn_hiscore_la_SOURCES = t/plugins/adnn-hiscore.c t/plugins/test-plugin.h
t_plugins_adnn_hiscore_la_LDFLAGS = $(test_plugin_ldflags)
t_plugins_adnn_zeroscore_la_SOURCES = t/plugins/adnn-zeroscore.c t/plugins/test-plugin.h
t_plugins_adnn_zeroscore_la_LDFLAGS = $(test_plugin_ldflags)
t_plugins_adnn_abi26_la_SOURCES = t/plugins/adnn-abi26.c t/plugins/test-plugin.h
t_plugins_adnn_abi26_la_LDFLAGS = $(test_plugin_ldflags)
t_plugins_adnn_probefail_la_SOURCES = t/plugins/adnn-probefail.c t/plugins/test-plugin.h
t_plugins_adnn_probefail_la_LDFLAGS = $(test_plugin_ldflags)

# ---- cpu backend ----------------------------------------------------------------
check_PROGRAMS += t/cpu-gemm
TESTS += t/cpu-gemm
t_cpu_gemm_SOURCES = t/cpu-gemm.c t/tap.h
t_cpu_gemm_LDADD = libadnn.la -lm
check_PROGRAMS += t/gemm-tune
TESTS += t/gemm-tune
t_gemm_tune_SOURCES = t/gemm-tune.c t/tap.h t/tmpdir.h
t_gemm_tune_LDADD = libadnn.la -lm
# adnn's own F32 GEMM engine (kernels/cpu/gemm.c) compiled into the test and
# called directly: every microkernel this CPU runs, 1 and 2 threads.
check_PROGRAMS += t/cpu-lowp
TESTS += t/cpu-lowp
t_cpu_lowp_SOURCES = t/cpu-lowp.c t/tap.h kernels/cpu/lowp.c kernels/cpu/cpu_features.c
t_cpu_lowp_LDADD = -lm
# The F16/BF16 softmax and norms against the F32 kernel on widened inputs.
check_PROGRAMS += t/cpu-lowp-ops
TESTS += t/cpu-lowp-ops
t_cpu_lowp_ops_SOURCES = t/cpu-lowp-ops.c t/tap.h t/rng.h
t_cpu_lowp_ops_LDADD = libadnn.la -lm

check_PROGRAMS += t/cpu-lowp-widen
TESTS += t/cpu-lowp-widen
t_cpu_lowp_widen_SOURCES = t/cpu-lowp-widen.c t/tap.h t/rng.h
t_cpu_lowp_widen_LDADD = libadnn.la -lm

check_PROGRAMS += t/cpu-sgemm-engine
TESTS += t/cpu-sgemm-engine
t_cpu_sgemm_engine_SOURCES = t/cpu-sgemm-engine.c t/tap.h t/rng.h kernels/cpu/gemm.c \
	kernels/cpu/gemm_kernel-avx512.c kernels/cpu/gemm_kernel-avx2.c kernels/cpu/cpu_parallel.c \
	kernels/cpu/cpu_features.c kernels/cpu/blas_threads.c
t_cpu_sgemm_engine_CPPFLAGS = $(AM_CPPFLAGS) $(OPENBLAS_CFLAGS)
t_cpu_sgemm_engine_LDADD = $(OPENBLAS_LIBS) -lpthread -lm

# ---- tuner and performance database ---------------------------------------------
# t/tune-select checks the pure selection rule with injected timings: it
# compiles core/tuner_select.c itself instead of going through the ABI.
# t/tune-plan tunes real conv2d plans on the cpu backend through the public API.
# t/perfdb compiles core/perfdb.c (with the core's logging and error parts)
# itself, to test the tuner's internal interface and to reset the process
# state between scenarios; it runs tools/adnn-info through ADNN_TEST_BUILDDIR.
check_PROGRAMS += t/tune-select t/tune-plan t/perfdb
TESTS += t/tune-select t/tune-plan t/perfdb
# t/plan-prepack: weight prepacking (adnn_plan_pack_weights) for every conv2d
# algorithm and matmul, against plain-weights plans and an oracle of its own.
check_PROGRAMS += t/plan-prepack
TESTS += t/plan-prepack
t_plan_prepack_SOURCES = t/plan-prepack.c t/tap.h t/rng.h t/tmpdir.h
t_plan_prepack_LDADD = libadnn.la -lm
EXTRA_t_plan_prepack_DEPENDENCIES = backends/cpu/adnn-cpu.la
t_tune_select_SOURCES = t/tune-select.c core/tuner_select.c core/tuner.h t/tap.h
t_tune_select_CPPFLAGS = $(AM_CPPFLAGS)
t_tune_select_LDADD = -lm
t_tune_plan_SOURCES = t/tune-plan.c t/tap.h t/tmpdir.h
t_tune_plan_LDADD = t/harness/libadnn_harness.la libadnn.la -lm
EXTRA_t_tune_plan_DEPENDENCIES = backends/cpu/adnn-cpu.la
t_perfdb_SOURCES = t/perfdb.c t/tap.h t/tmpdir.h core/perfdb.c core/perfdb.h \
	core/log.c core/log_api.c core/error.c core/internal.h core/env.c core/env.h
t_perfdb_CPPFLAGS = $(AM_CPPFLAGS) -DADNN_BUILDING_LIBRARY \
	-DADNN_SYSTEM_PERFDB='"/nonexistent/adnn-test/perfdb.txt"'
t_perfdb_LDADD = -lpthread
EXTRA_t_perfdb_DEPENDENCIES = tools/adnn-info$(EXEEXT)
# t/problem-key checks the performance database's key text (core/problem_key.c
# compiled in: format 2, backward directions, tuning options).
check_PROGRAMS += t/problem-key
TESTS += t/problem-key
t_problem_key_SOURCES = t/problem-key.c core/problem_key.c core/tuner.h t/tap.h
t_problem_key_LDADD = libadnn.la -lm

# ---- DNN ops: the conformance harness and every ready backend --------------------
# The harness (t/harness/): host buffers, cases, comparison, running a case on
# a backend, and one file per op of the manifest (t/ops/<op>.c) with
# the op's traits, its oracle and its cases. Written on the public API only; a
# convenience library built by `make` because adnn-bench (tools/local.mk)
# links it too. Adding an op's cases: one file, and its line here.
harness_op_files = \
	t/ops/conv2d.c \
	t/ops/pool2d.c \
	t/ops/activation.c \
	t/ops/softmax.c \
	t/ops/batchnorm.c \
	t/ops/norm.c \
	t/ops/binary.c \
	t/ops/reduce.c \
	t/ops/conv2d_backward.h \
	t/ops/conv2d_backward_data.c \
	t/ops/conv2d_backward_weights.c \
	t/ops/pool2d_backward.c \
	t/ops/activation_backward.c \
	t/ops/softmax_backward.c \
	t/ops/batchnorm_training.c \
	t/ops/batchnorm_backward.c \
	t/ops/norm_backward.c \
	t/ops/softmax_cross_entropy.c \
	t/ops/matmul.c \
	t/ops/reorder.c \
	t/ops/quantize.c \
	t/ops/optimizer.c \
	t/ops/loss_scale.c \
	t/ops/attention.c \
	t/ops/attention_backward.c
noinst_LTLIBRARIES += t/harness/libadnn_harness.la
t_harness_libadnn_harness_la_SOURCES = t/harness/harness.h t/rng.h t/harness/tensor.c \
	t/harness/buffer.c t/harness/case.c t/harness/compare.c t/harness/device.c \
	t/harness/report.c t/harness/ops.c t/harness/gemm.c $(harness_op_files)
t_harness_libadnn_harness_la_LIBADD = -lm
# Every op on every ready backend against the harness's oracle, with the
# tolerances of doc/numerics.md.
check_PROGRAMS += t/conformance
TESTS += t/conformance
t_conformance_SOURCES = t/conformance.c t/tap.h
t_conformance_LDADD = t/harness/libadnn_harness.la libadnn.la -lm

# ---- CUDA plugin ------------------------------------------------------------------
# Built with the plugin. Tests that need a GPU print "1..0 # SKIP <reason>"
# without one.
cuda_test_defines = -DCUDA_TEST_BUILDDIR='"$(abs_top_builddir)"'
if HAVE_CUDA
# The fake driver: presented to t/cuda-fake-driver as libcuda.so.1 through a
# symlink in a temporary directory. -rpath makes libtool build a shared object
# although it is never installed.
check_LTLIBRARIES += t/cuda-fake-libcuda.la
check_PROGRAMS += t/cuda-probe t/cuda-memory t/cuda-gemm t/cuda-fake-driver t/cuda-compat \
	t/cuda-plan-nodevice
TESTS += t/cuda-compat t/cuda-fake-driver t/cuda-probe t/cuda-memory t/cuda-gemm \
	t/cuda-plan-nodevice t/cuda-emu.sh
endif
t_cuda_fake_libcuda_la_SOURCES = t/fake-libcuda.c
t_cuda_fake_libcuda_la_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
t_cuda_fake_libcuda_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
t_cuda_probe_SOURCES = t/cuda-probe.c t/tap.h
t_cuda_probe_LDADD = libadnn.la
t_cuda_memory_SOURCES = t/cuda-memory.c t/tap.h
t_cuda_memory_LDADD = libadnn.la
t_cuda_gemm_SOURCES = t/cuda-gemm.c t/tap.h
t_cuda_gemm_LDADD = libadnn.la
# The plugin's plan slots called directly (dlopen, own host table; libadnn only
# for the TAP helpers), as far as they run without a device (with a GPU: every
# conv2d candidate selected and executed on one plan).
t_cuda_plan_nodevice_SOURCES = t/cuda-plan-nodevice.c t/tap.h
t_cuda_plan_nodevice_CPPFLAGS = $(AM_CPPFLAGS) $(cuda_test_defines)
t_cuda_plan_nodevice_LDADD = libadnn.la -ldl
EXTRA_t_cuda_plan_nodevice_DEPENDENCIES = backends/cuda/adnn-cuda.la
# Loads the plugin itself (with a small host table of its own) in children that
# see the fake driver first on the loader path; it does not need libadnn.
t_cuda_fake_driver_SOURCES = t/cuda-fake-driver.c t/tap.h
t_cuda_fake_driver_CPPFLAGS = $(AM_CPPFLAGS) $(cuda_test_defines)
EXTRA_t_cuda_fake_driver_DEPENDENCIES = t/cuda-fake-libcuda.la backends/cuda/adnn-cuda.la
# The version rules, compiled straight into the test.
t_cuda_compat_SOURCES = t/cuda-compat.c t/tap.h backends/cuda/cuda_compat.c
t_cuda_compat_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
# Host emulation of the CUDA plugin for machines without a GPU:
# t/cuda-emu.sh builds it (t/cuda-emu/build.sh: the plugin's code and kernels
# compiled for the host, with test doubles for the device-bound calls) in a
# temporary directory and runs t/conformance on it, once per cuDNN stand-in
# and once under the tuner. sh t/cuda-emu/run.sh BUILD_DIR [TEST...] runs
# other test programs on it by hand.
EXTRA_DIST += t/cuda-emu.sh t/cuda-emu/build.sh t/cuda-emu/run.sh t/cuda-emu/emu.h \
	t/cuda-emu/cuda_doubles.c t/cuda-emu/cudnn_doubles.c t/cuda-emu/cublaslt_doubles.c
# The attention kernels through their launchers, compiled and run by t/cuda-emu.sh.
EXTRA_DIST += t/cuda-emu/attention-kernels.cpp
# The F16/BF16 kernels against the CPU bit for bit, compiled and run by t/cuda-emu.sh.
EXTRA_DIST += t/cuda-emu/lowp-bitexact.c

# ---- tools, documentation, packaging ---------------------------------------------
# adnn-info's report; adnn-bench --mode=corr over the shipped problem sets on
# every ready backend; the compiled examples that doc/*.md quote verbatim; the
# man pages; the exported symbols; the staged install (make install into a
# temporary DESTDIR, a program built with only pkg-config from there, run
# against the staged plugins).
TESTS += t/tools-info.sh t/bench-corr.sh t/doc-examples.sh t/man-pages.sh t/abi-exports.sh \
	t/staged-install.sh
# The depthwise conv2d conformance cases at the lower SIMD levels.
TESTS += t/conformance-simd.sh
EXTRA_DIST += t/conformance-simd.sh
dist_check_SCRIPTS = t/tools-info.sh
EXTRA_DIST += t/bench-corr.sh t/doc-examples.sh t/man-pages.sh t/abi-exports.sh \
	t/staged-install.sh
doc_examples = doc/examples/errors doc/examples/context doc/examples/memory \
	doc/examples/tensors doc/examples/gemm doc/examples/plans doc/examples/backends \
	doc/examples/tuning doc/examples/training doc/examples/mixed_precision
check_PROGRAMS += $(doc_examples)
doc_examples_errors_LDADD = libadnn.la
doc_examples_context_LDADD = libadnn.la
doc_examples_memory_LDADD = libadnn.la
doc_examples_tensors_LDADD = libadnn.la
doc_examples_gemm_LDADD = libadnn.la
doc_examples_plans_LDADD = libadnn.la
doc_examples_backends_LDADD = libadnn.la
doc_examples_tuning_LDADD = libadnn.la
doc_examples_training_LDADD = libadnn.la -lm
doc_examples_mixed_precision_LDADD = libadnn.la -lm

# ---- environment variables, verbose mode, plugin file checks ----------------
# t/core-env: each bad value of a variable warns once, naming the accepted
# values; t/env-docs.sh: README.md and adnn(7) list exactly the variables of
# core/env.h; t/core-verbose.sh: ADNN_VERBOSE lines of t/verbose-run (a conv
# and two GEMMs), checked against adnn-bench; t/core-loader-secure: warnings
# about writable or foreign plugin files, unreadable plugins, skipped entries.
env_tests = t/core-env t/core-loader-secure
check_PROGRAMS += $(env_tests) t/verbose-run
TESTS += $(env_tests) t/env-docs.sh t/core-verbose.sh
EXTRA_DIST += t/env-docs.sh t/core-verbose.sh
t_core_env_SOURCES = t/core-env.c t/tap.h
t_core_env_LDADD = libadnn.la
EXTRA_t_core_env_DEPENDENCIES = backends/cpu/adnn-cpu.la
t_core_loader_secure_SOURCES = t/core-loader-secure.c t/tap.h t/tmpdir.h
t_core_loader_secure_LDADD = libadnn.la
EXTRA_t_core_loader_secure_DEPENDENCIES = t/plugins/adnn-unavail.la backends/cpu/adnn-cpu.la
t_verbose_run_SOURCES = t/verbose-run.c t/rng.h
t_verbose_run_LDADD = libadnn.la

# t/perfdb-timing times a lookup and a store on a performance database of 1e6
# entries (doc/performance.md); built by `make`, not a test: run it by hand.
noinst_PROGRAMS += t/perfdb-timing
t_perfdb_timing_SOURCES = t/perfdb-timing.c t/tmpdir.h core/perfdb.c core/perfdb.h \
	core/log.c core/log_api.c core/error.c core/env.c core/env.h core/internal.h
t_perfdb_timing_CPPFLAGS = $(AM_CPPFLAGS) -DADNN_BUILDING_LIBRARY -DADNN_SYSTEM_PERFDB='""'
t_perfdb_timing_LDADD = -lpthread -lm

# ---- adnn-bench's problem parser -------------------------------------------------
# t/bench-roundtrip compiles tools/bench_problem.c itself (it needs adnn's
# headers, none of its code): random problems of every kind print and parse
# back exactly, malformed descriptors are refused with a message.
# t/bench-batch.sh: adnn-bench --batch with bad lines, under valgrind when present.
check_PROGRAMS += t/bench-roundtrip
TESTS += t/bench-roundtrip t/bench-batch.sh
EXTRA_DIST += t/bench-batch.sh
t_bench_roundtrip_SOURCES = t/bench-roundtrip.c t/tap.h t/rng.h tools/bench_problem.c \
	tools/bench_problem.h
t_bench_roundtrip_LDADD = -lm

# ---- examples ------------------------------------------------------------------
# gemm-demo's command line and cnn-forward's notice (t/examples.sh).
TESTS += t/examples.sh
EXTRA_DIST += t/examples.sh
# examples/train-cnn: >= 95 % test accuracy, identical loss curves in two runs
# (t/train-cnn.sh); examples/train-cnn-mpi on 2 ranks matches one process over
# the global batch (t/train-cnn-mpi.sh; skips without MPI); train-cnn runs
# unchanged on the emulated CUDA plugin (t/train-cnn-cuda-emu.sh, one epoch).
TESTS += t/train-cnn.sh t/train-cnn-mpi.sh t/train-cnn-cuda-emu.sh
EXTRA_DIST += t/train-cnn.sh t/train-cnn-mpi.sh t/train-cnn-cuda-emu.sh
AM_TESTS_ENVIRONMENT += ADNN_TEST_MPIRUN='$(MPIRUN)'; export ADNN_TEST_MPIRUN;
# examples/transformer-block at small sizes: unfused vs double loops, fused vs
# both once the transformer ops exist (t/transformer-block.sh).
TESTS += t/transformer-block.sh
EXTRA_DIST += t/transformer-block.sh

# ---- packaging split -----------------------------------------------------------
# Every installed file belongs to exactly one package of doc/packaging.md's split
# (t/packaging-split.sh), which needs the remaining installation directories.
TESTS += t/packaging-split.sh
EXTRA_DIST += t/packaging-split.sh
AM_TESTS_ENVIRONMENT += \
	ADNN_TEST_INCLUDEDIR='$(includedir)'; export ADNN_TEST_INCLUDEDIR; \
	ADNN_TEST_MANDIR='$(mandir)'; export ADNN_TEST_MANDIR; \
	ADNN_TEST_DOCDIR='$(docdir)'; export ADNN_TEST_DOCDIR; \
	ADNN_TEST_PKGDATADIR='$(pkgdatadir)'; export ADNN_TEST_PKGDATADIR;

# ---- safety: handle checks, pointer checks, external memory registration ----
safety_tests = t/core-handles t/core-buffers t/core-register t/core-execute-multi
check_PROGRAMS += $(safety_tests)
TESTS += $(safety_tests)
t_core_handles_SOURCES = t/core-handles.c t/tap.h t/rng.h
t_core_handles_LDADD = libadnn.la
t_core_buffers_SOURCES = t/core-buffers.c t/tap.h t/rng.h
t_core_buffers_LDADD = libadnn.la
t_core_register_SOURCES = t/core-register.c t/tap.h t/rng.h
t_core_register_LDADD = libadnn.la
t_core_execute_multi_SOURCES = t/core-execute-multi.c t/tap.h t/rng.h
t_core_execute_multi_LDADD = libadnn.la

# ---- gradient checks of the backward ops (central differences in F64) ----------
check_PROGRAMS += t/gradcheck-elementwise
TESTS += t/gradcheck-elementwise
t_gradcheck_elementwise_SOURCES = t/gradcheck-elementwise.c t/tap.h t/rng.h
t_gradcheck_elementwise_LDADD = libadnn.la -lm

# ---- training: the loss and the optimizer ------------------------------------------
# Finite-difference gradient check of softmax cross-entropy (F64), and the
# fused optimizer over several steps with a changing learning rate against a
# long-double oracle, on every ready backend.
check_PROGRAMS += t/gradcheck-loss t/optimizer-steps
TESTS += t/gradcheck-loss t/optimizer-steps
t_gradcheck_loss_SOURCES = t/gradcheck-loss.c t/tap.h t/rng.h
t_gradcheck_loss_LDADD = libadnn.la -lm

# Finite-difference gradient check of attention backward (F64) through the
# forward attention plan, on every ready backend.
check_PROGRAMS += t/gradcheck-attention
TESTS += t/gradcheck-attention
t_gradcheck_attention_SOURCES = t/gradcheck-attention.c t/tap.h t/rng.h
t_gradcheck_attention_LDADD = libadnn.la -lm

# The CPU plugin's attention backward kernels against each other below the
# public API: the reference loops and cpu_simd at every instruction set.
check_PROGRAMS += t/cpu-attention-backward
TESTS += t/cpu-attention-backward
t_cpu_attention_backward_SOURCES = t/cpu-attention-backward.c t/tap.h t/rng.h
t_cpu_attention_backward_CPPFLAGS = $(AM_CPPFLAGS) $(OPENBLAS_CFLAGS)
t_cpu_attention_backward_LDADD = kernels/cpu/libadnn_cpu_kernels.la kernels/ref/libadnn_ref.la \
	$(OPENBLAS_LIBS) -lpthread -lm

# The CPU direct and gemm_1x1 conv2d kernels' weight prepacking below the
# public API (the public path is t/plan-prepack's): prepacked and not, bit for
# bit, against a double oracle, at every instruction set.
check_PROGRAMS += t/cpu-conv2d-direct
TESTS += t/cpu-conv2d-direct
t_cpu_conv2d_direct_SOURCES = t/cpu-conv2d-direct.c t/tap.h t/rng.h
t_cpu_conv2d_direct_CPPFLAGS = $(AM_CPPFLAGS) $(OPENBLAS_CFLAGS)
t_cpu_conv2d_direct_LDADD = kernels/cpu/libadnn_cpu_kernels.la kernels/ref/libadnn_ref.la \
	$(OPENBLAS_LIBS) -lpthread -lm

# The CPU plugin's two F16/BF16 matmul implementations (widen_sgemm and
# lowp) below the public API, each against a double oracle with the
# numerics bound, on layouts, epilogues, batches and the OpenBLAS branch that
# the plugin's choice on conformance-sized shapes does not reach.
check_PROGRAMS += t/cpu-matmul-lowp
TESTS += t/cpu-matmul-lowp
t_cpu_matmul_lowp_SOURCES = t/cpu-matmul-lowp.c t/tap.h t/rng.h
t_cpu_matmul_lowp_CPPFLAGS = $(AM_CPPFLAGS) $(OPENBLAS_CFLAGS)
t_cpu_matmul_lowp_LDADD = kernels/cpu/libadnn_cpu_kernels.la kernels/ref/libadnn_ref.la \
	$(OPENBLAS_LIBS) -lpthread -lm

# Every low-precision GEMM path this CPU can run (AVX-512-BF16, VNNI,
# widening, int16 pairs), its block on edge shapes and layouts, exact for
# INT8 and within the F32 accumulation bound for F16/BF16.
check_PROGRAMS += t/cpu-gemm-lowp
TESTS += t/cpu-gemm-lowp
t_cpu_gemm_lowp_SOURCES = t/cpu-gemm-lowp.c t/tap.h t/rng.h
t_cpu_gemm_lowp_CPPFLAGS = $(AM_CPPFLAGS) $(OPENBLAS_CFLAGS)
t_cpu_gemm_lowp_LDADD = kernels/cpu/libadnn_cpu_kernels.la kernels/ref/libadnn_ref.la \
	$(OPENBLAS_LIBS) -lpthread -lm

# The reorder op's conversions bit for bit over every 16-bit pattern and an
# F32/F64 sample, on every ready backend and every CPU instruction set.
check_PROGRAMS += t/convert-exhaustive
TESTS += t/convert-exhaustive
t_convert_exhaustive_SOURCES = t/convert-exhaustive.c t/tap.h
t_convert_exhaustive_LDADD = libadnn.la -lm

t_optimizer_steps_SOURCES = t/optimizer-steps.c t/tap.h t/rng.h
t_optimizer_steps_LDADD = libadnn.la -lm

# ---- sanitizers (./configure --enable-sanitizers) ---------------------------------
# Every program is built with ASan + UBSan (configure adds the flags to CFLAGS
# and LDFLAGS). allocator_may_return_null=1 lets adnn_malloc's 2^60-byte request
# (t/core-memory) reach the library's OUT_OF_MEMORY path, as it does without
# ASan, instead of ASan aborting. Leaks are detected (LeakSanitizer) at the
# exit of every test program; t/lsan.supp lists what is suppressed and why.
# t/staged-install.sh builds its program with ADNN_TEST_SANITIZER_CFLAGS, since
# the staged libadnn needs the ASan runtime loaded first.
EXTRA_DIST += t/lsan.supp
if ADNN_SANITIZERS
AM_TESTS_ENVIRONMENT += \
	ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1:detect_stack_use_after_return=1; \
	export ASAN_OPTIONS; \
	LSAN_OPTIONS=suppressions='$(abs_top_srcdir)/t/lsan.supp':print_suppressions=0; export LSAN_OPTIONS; \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1; export UBSAN_OPTIONS; \
	ADNN_TEST_SANITIZER_CFLAGS='$(ADNN_SANITIZER_FLAGS)'; export ADNN_TEST_SANITIZER_CFLAGS;
endif

# ---- libFuzzer targets (t/fuzz/; doc/testing.md) -----------------------------------
# Built by `make fuzz` (and `make fuzz-smoke`) with clang's -fsanitize=fuzzer
# plus ASan and UBSan, when configure found such a clang (FUZZ_CC). Each target
# compiles the sources it tests itself, instrumented for coverage, instead of
# linking the gcc-built library: fuzz-bench-problem the problem parser,
# fuzz-perfdb the performance database with the core's logging, fuzz-plan the
# whole core, and it loads t/fuzz/plugins/adnn-cpu.so, a clang-built,
# instrumented copy of the CPU plugin (the installed one is never touched).
# `make fuzz-smoke` runs each target FUZZ_SMOKE_SECONDS over its seed corpus
# (t/fuzz/corpus/<target>/, read-only: new inputs go to a temporary directory)
# and fails on any crash, leak, sanitizer report or timeout; a crashing input
# is kept as t/fuzz/crash-<target>-* in the build tree.
fuzz_names = bench-problem perfdb plan
EXTRA_DIST += t/fuzz/bench-problem.c t/fuzz/perfdb.c t/fuzz/plan.c t/fuzz/corpus
FUZZ_SMOKE_SECONDS = 8
FUZZ_CPPFLAGS = $(DEFS) -I$(top_srcdir)/include -I$(top_builddir)/include -I$(top_srcdir) \
	-I$(top_builddir)
fuzz_core_sources = $(filter %.c,$(libadnn_la_SOURCES))
fuzz_cpu_plugin_sources = $(filter %.c,$(backends_cpu_adnn_cpu_la_SOURCES) \
	$(kernels_cpu_libadnn_cpu_kernels_la_SOURCES) $(kernels_ref_libadnn_ref_la_SOURCES))
fuzz_library_defines = -DADNN_BUILDING_LIBRARY -DADNN_PLUGIN_DIR='"/nonexistent/adnn-fuzz"' \
	-DADNN_SYSTEM_PERFDB='"/nonexistent/adnn-fuzz/perfdb.txt"'
CLEANFILES += $(fuzz_names:%=t/fuzz/fuzz-%) t/fuzz/plugins/adnn-cpu.so
clean-local: clean-fuzz
clean-fuzz:
	rm -f t/fuzz/crash-* t/fuzz/leak-* t/fuzz/timeout-* t/fuzz/oom-*
	-rmdir t/fuzz/plugins 2>/dev/null
.PHONY: clean-fuzz fuzz fuzz-smoke
if HAVE_FUZZ
fuzz: $(fuzz_names:%=t/fuzz/fuzz-%) t/fuzz/plugins/adnn-cpu.so
t/fuzz/fuzz-bench-problem: $(top_srcdir)/t/fuzz/bench-problem.c $(top_srcdir)/tools/bench_problem.c \
		$(top_srcdir)/tools/bench_problem.h
	@$(MKDIR_P) t/fuzz
	$(AM_V_CCLD)$(FUZZ_CC) $(ADNN_FUZZ_FLAGS) $(FUZZ_CPPFLAGS) -o $@ \
		$(top_srcdir)/t/fuzz/bench-problem.c $(top_srcdir)/tools/bench_problem.c -lm
t/fuzz/fuzz-perfdb: $(top_srcdir)/t/fuzz/perfdb.c $(top_srcdir)/core/perfdb.c \
		$(top_srcdir)/core/perfdb.h $(top_srcdir)/core/log.c $(top_srcdir)/core/log_api.c \
		$(top_srcdir)/core/error.c $(top_srcdir)/core/env.c $(top_srcdir)/core/env.h
	@$(MKDIR_P) t/fuzz
	$(AM_V_CCLD)$(FUZZ_CC) $(ADNN_FUZZ_FLAGS) $(FUZZ_CPPFLAGS) $(fuzz_library_defines) -o $@ \
		$(top_srcdir)/t/fuzz/perfdb.c $(top_srcdir)/core/perfdb.c $(top_srcdir)/core/log.c \
		$(top_srcdir)/core/log_api.c $(top_srcdir)/core/error.c $(top_srcdir)/core/env.c \
		-lpthread -lm
t/fuzz/fuzz-plan: $(top_srcdir)/t/fuzz/plan.c $(addprefix $(top_srcdir)/,$(libadnn_la_SOURCES))
	@$(MKDIR_P) t/fuzz
	$(AM_V_CCLD)$(FUZZ_CC) $(ADNN_FUZZ_FLAGS) $(FUZZ_CPPFLAGS) $(fuzz_library_defines) \
		-DADNN_FUZZ_PLUGIN_DIR='"$(abs_top_builddir)/t/fuzz/plugins"' -o $@ \
		$(top_srcdir)/t/fuzz/plan.c $(addprefix $(top_srcdir)/,$(fuzz_core_sources)) \
		-ldl -lpthread -lm
# A shared object built with -fsanitize=address takes the sanitizer runtime
# from the program that loads it (clang links the runtime into executables
# only), hence no -z defs here. ADNN_CPU_COMPACT_KERNELS leaves out the
# depthwise kernel's fixed-width copies, which clang with the sanitizers took
# more than ten minutes to compile (the generic copy runs the same problems).
t/fuzz/plugins/adnn-cpu.so: $(addprefix $(top_srcdir)/,$(backends_cpu_adnn_cpu_la_SOURCES) \
		$(kernels_cpu_libadnn_cpu_kernels_la_SOURCES) $(kernels_ref_libadnn_ref_la_SOURCES))
	@$(MKDIR_P) t/fuzz/plugins
	$(AM_V_CCLD)$(FUZZ_CC) $(subst -fsanitize=fuzzer,-fsanitize=fuzzer-no-link,$(ADNN_FUZZ_FLAGS)) \
		-fPIC -shared $(FUZZ_CPPFLAGS) -DADNN_CPU_COMPACT_KERNELS $(OPENBLAS_CFLAGS) -o $@ \
		$(addprefix $(top_srcdir)/,$(fuzz_cpu_plugin_sources)) $(OPENBLAS_LIBS) -lpthread -lm
# allocator_may_return_null=1: a valid descriptor of huge sizes may ask for
# a workspace no machine has; the library answers OUT_OF_MEMORY, as without
# ASan, instead of ASan aborting on the request.
fuzz-smoke: fuzz
	@ASAN_OPTIONS=allocator_may_return_null=1; export ASAN_OPTIONS; \
	failed=""; \
	for name in $(fuzz_names); do \
	  work=`mktemp -d "$${TMPDIR:-/tmp}/adnn-fuzz-$$name.XXXXXX"` || exit 1; \
	  echo "fuzz-smoke: $$name for $(FUZZ_SMOKE_SECONDS) s over $(top_srcdir)/t/fuzz/corpus/$$name"; \
	  if ./t/fuzz/fuzz-$$name -max_total_time=$(FUZZ_SMOKE_SECONDS) -runs=2000000 -timeout=10 \
	       -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix=t/fuzz/crash-$$name- \
	       "$$work" $(top_srcdir)/t/fuzz/corpus/$$name >"$$work.log" 2>&1; then \
	    grep -E '^stat::number_of_executed_units|^Done' "$$work.log" | sed "s/^/  $$name: /"; \
	  else \
	    tail -n 60 "$$work.log"; failed="$$failed $$name"; \
	  fi; \
	  rm -rf "$$work" "$$work.log"; \
	done; \
	if test -n "$$failed"; then echo "fuzz-smoke: FAILED:$$failed (inputs kept as t/fuzz/crash-*)"; exit 1; fi; \
	echo "fuzz-smoke: every target ran clean"
else
fuzz fuzz-smoke:
	@echo "$@: the fuzz targets need clang with libFuzzer (-fsanitize=fuzzer), which configure did not find; on Debian 12: apt-get install clang, then re-run configure (or set FUZZ_CC)"; exit 1
endif

# ---- allocation-failure injection (t/alloc-fail.c; doc/testing.md) -----------------
# The k-th allocation of each public entry point's path fails, for every k, in
# a child process per k. The program defines malloc & co. itself (forwarding
# through dlsym RTLD_NEXT), so -export-dynamic keeps them visible to the
# dlopen'd plugins.
check_PROGRAMS += t/alloc-fail
TESTS += t/alloc-fail
t_alloc_fail_SOURCES = t/alloc-fail.c t/tap.h t/tmpdir.h
t_alloc_fail_LDADD = libadnn.la -ldl
t_alloc_fail_LDFLAGS = -export-dynamic
EXTRA_t_alloc_fail_DEPENDENCIES = backends/cpu/adnn-cpu.la

# ---- the Python binding (python/, doc/python.md) -------------------------------
# t/python.sh runs python/tests with pytest when the package is installed in
# the build tree's .venv (the README's set-up does it), and skips otherwise.
TESTS += t/python.sh
EXTRA_DIST += t/python.sh python/pyproject.toml python/setup.py python/adnn/__init__.py \
	python/adnn/py.typed python/src/adnn_py.h python/src/dlpack_abi.h python/src/module.c \
	python/src/context.c python/src/tensor.c python/src/ops.c python/tests/conftest.py \
	python/tests/test_ops.py python/tests/test_dlpack.py python/tests/test_api.py \
	python/examples/cnn.py python/tests/test_examples.py python/bench/overhead.py \
	python/bench/gemm_c_loop.c python/adnn/__init__.pyi python/tests/test_stubs.py
EXTRA_DIST += python/tests/test_training_loss.py python/tests/test_reorder.py python/bench/loss_scale.py \
	python/tests/test_attention.py python/tests/test_attention_backward.py \
	python/tests/test_backward.py python/tests/test_conv2d_backward.py \
	python/tests/test_conv2d_int8.py python/tests/test_float16.py python/tests/test_matmul.py \
	python/tests/test_quantize.py python/tests/test_training_norm.py

# ---- conv2d backward: gradient checks and determinism ------------------------
# Central differences of the forward plan against backward data and weights in
# F64 on every ready backend (t/gradcheck-conv2d.c documents step and
# tolerance), and bitwise-identical CPU gradients from a fixed seed.
conv2d_backward_tests = t/gradcheck-conv2d t/conv2d-backward-determinism
check_PROGRAMS += $(conv2d_backward_tests)
TESTS += $(conv2d_backward_tests)
t_gradcheck_conv2d_SOURCES = t/gradcheck-conv2d.c t/tap.h t/rng.h
t_gradcheck_conv2d_LDADD = libadnn.la -lm
t_conv2d_backward_determinism_SOURCES = t/conv2d-backward-determinism.c t/tap.h t/rng.h
t_conv2d_backward_determinism_LDADD = libadnn.la

# ---- training: gradient checks of batch-norm training / backward and norm backward ----
# Central differences in F64 on every ready backend (t/gradcheck-norm.c says
# the step and the tolerance), and bitwise-identical F32 CPU gradients twice.
check_PROGRAMS += t/gradcheck-norm
TESTS += t/gradcheck-norm
t_gradcheck_norm_SOURCES = t/gradcheck-norm.c t/tap.h t/rng.h
t_gradcheck_norm_LDADD = libadnn.la -lm
