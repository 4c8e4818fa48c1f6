# Command-line tools, built only on the public API: adnn-info (what adnn sees
# on this machine) and adnn-bench (a benchdnn-style driver that verifies and
# times any problem on any backend; see doc/bench.md); the GPU check script.
bin_PROGRAMS += tools/adnn-info tools/adnn-bench
tools_adnn_info_SOURCES = tools/adnn-info.c tools/uninstalled.c tools/uninstalled.h
tools_adnn_info_LDADD = libadnn.la
# Run from the build tree (./tools/adnn-info), adnn-info finds this tree's
# plugins by itself when ADNN_PLUGIN_PATH is unset (tools/uninstalled.h); an
# installed copy does not, since its executable is not in this directory.
# ADNN_BUILD_PLUGIN_PATH is defined in Makefile.am.
tools_adnn_info_CPPFLAGS = $(AM_CPPFLAGS) \
	-DADNN_TOOLS_BUILD_DIR='"$(abs_top_builddir)/tools"' \
	-DADNN_TOOLS_BUILD_PLUGIN_PATH='"$(ADNN_BUILD_PLUGIN_PATH)"'

tools_adnn_bench_SOURCES = tools/adnn-bench.c tools/bench_problem.c tools/bench_problem.h \
	tools/bench_case.c tools/bench_case.h
# The conformance harness (t/local.mk) is a convenience library: adnn-bench
# carries its oracle, comparison and buffers for --mode=corr.
tools_adnn_bench_LDADD = t/harness/libadnn_harness.la libadnn.la -lm

dist_noinst_SCRIPTS += tools/gpu-check.sh
