# The CPU backend plugin (OpenBLAS and the kernels of kernels/cpu/ and
# kernels/ref/). A libtool module in $(pkglibdir) that exports only
# adnn_plugin_entry and does not link against libadnn.
pkglib_LTLIBRARIES += backends/cpu/adnn-cpu.la
backends_cpu_adnn_cpu_la_SOURCES = \
	backends/cpu/cpu_plugin.h \
	backends/cpu/cpu_plugin.c \
	backends/cpu/cpu_probe.c \
	backends/cpu/cpu_memory.c \
	backends/cpu/cpu_gemm.c \
	backends/cpu/cpu_plan.c
backends_cpu_adnn_cpu_la_CPPFLAGS = $(AM_CPPFLAGS) $(OPENBLAS_CFLAGS)
backends_cpu_adnn_cpu_la_LDFLAGS = -module -avoid-version -shared -no-undefined -Wl,-z,defs \
	-export-symbols-regex '^adnn_plugin_entry$$'
backends_cpu_adnn_cpu_la_LIBADD = kernels/cpu/libadnn_cpu_kernels.la kernels/ref/libadnn_ref.la \
	$(OPENBLAS_LIBS) $(LIBS) -lm
