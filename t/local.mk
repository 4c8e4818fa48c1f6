# Tests: TAP programs, one per topic, run through Automake's tap-driver.sh.
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
	  ADNN_SYSTEM_PERFDB ADNN_CUDA_WORKSPACE_LIMIT ADNN_CUDA_CONV_FIND;

EXTRA_DIST += t/tap.h

# The staged install: make install into a temporary DESTDIR, build a program
# with only pkg-config from there, and run it against the staged plugins.
TESTS += t/staged-install.sh
EXTRA_DIST += t/staged-install.sh

# ---- Foundation tests (core, cpu backend, loader, tools) --------------------
core_tests = t/core-version t/core-status t/core-tensor t/core-context t/core-threads \
	t/core-memory t/core-badinput t/core-log t/core-loader t/core-auto-select
check_PROGRAMS += $(core_tests) t/cpu-gemm
TESTS += $(core_tests) t/cpu-gemm t/tools-info.sh
dist_check_SCRIPTS = t/tools-info.sh
EXTRA_DIST += t/tmpdir.h t/plugins/test-plugin.h

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
t_cpu_gemm_SOURCES = t/cpu-gemm.c t/tap.h
t_cpu_gemm_LDADD = libadnn.la -lm
# The loader tests dlopen these; make check builds them first.
EXTRA_t_core_loader_DEPENDENCIES = $(test_plugins) backends/cpu/adnn-cpu.la
t_core_auto_select_SOURCES = t/core-auto-select.c t/tap.h t/tmpdir.h
t_core_auto_select_LDADD = libadnn.la
EXTRA_t_core_auto_select_DEPENDENCIES = t/plugins/adnn-hiscore.la backends/cpu/adnn-cpu.la

# Test-only plugins for the loader tests: shared objects that are never
# installed (-rpath /nowhere makes libtool build them shared; they land in
# t/plugins/.libs/). They do not link against libadnn, like real plugins.
test_plugins = t/plugins/adnn-badabi.la t/plugins/adnn-noentry.la \
	t/plugins/adnn-nulltable.la t/plugins/adnn-unavail.la t/plugins/adnn-malformed.la \
	t/plugins/adnn-hiscore.la t/plugins/adnn-zeroscore.la t/plugins/adnn-probefail.la
check_LTLIBRARIES += $(test_plugins)
test_plugin_ldflags = -module -avoid-version -shared -rpath /nowhere
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
t_plugins_adnn_probefail_la_SOURCES = t/plugins/adnn-probefail.c t/plugins/test-plugin.h
t_plugins_adnn_probefail_la_LDFLAGS = $(test_plugin_ldflags)
