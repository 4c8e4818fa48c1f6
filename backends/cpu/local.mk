# The CPU backend plugin (OpenBLAS + our kernels). A libtool module in
# $(pkglibdir) that exports only adnn_plugin_entry and does not link against
# libadnn. The reference kernels are linked in as the fallback for layouts and
# dtypes the fast kernels do not handle.
pkglib_LTLIBRARIES += backends/cpu/adnn-cpu.la
backends_cpu_adnn_cpu_la_SOURCES = \
	backends/cpu/cpu_plugin.h \
	backends/cpu/cpu_plugin.c \
	backends/cpu/cpu_probe.c \
	backends/cpu/cpu_features.h \
	backends/cpu/cpu_features.c \
	backends/cpu/cpu_memory.c \
	backends/cpu/cpu_gemm.c \
	backends/cpu/cpu_plan.c \
	kernels/cpu/cpu_kernels.h \
	kernels/cpu/cpu_parallel.h \
	kernels/cpu/cpu_parallel.c \
	kernels/cpu/layout.c \
	kernels/cpu/epilogue.c
backends_cpu_adnn_cpu_la_CPPFLAGS = $(AM_CPPFLAGS) $(OPENBLAS_CFLAGS)
backends_cpu_adnn_cpu_la_LDFLAGS = -module -avoid-version -shared -no-undefined -Wl,-z,defs \
	-export-symbols-regex '^adnn_plugin_entry$$'
backends_cpu_adnn_cpu_la_LIBADD = kernels/ref/libadnn_ref.la $(OPENBLAS_LIBS) $(LIBS) -lm

# Kernel sources, one fragment per family.
include kernels/cpu/conv2d.mk
include kernels/cpu/ops.mk
