# The core library: public API, argument validation, the plugin loader,
# contexts, memory, errors and logging, the tuner and the performance database.
lib_LTLIBRARIES += libadnn.la
libadnn_la_SOURCES = \
	core/internal.h \
	core/error.c \
	core/log.c \
	core/log_api.c \
	core/env.h \
	core/env.c \
	core/verbose.h \
	core/verbose.c \
	core/version.c \
	core/dtype.c \
	core/tensor.c \
	core/loader.c \
	core/loader.h \
	core/context.c \
	core/alloc_map.c \
	core/handles.c \
	core/buffer_check.c \
	core/memory.c \
	core/gemm.c \
	core/struct_size.c \
	core/op_validate.h \
	core/op_validate.c \
	core/validate_conv2d_backward.c \
	core/validate_elementwise_backward.c \
	core/validate_norm_training.c \
	core/ops.c \
	core/validate_loss_optimizer.c \
	core/validate_matmul.c \
	core/validate_reorder.c \
	core/validate_quantize.c \
	core/validate_attention.c \
	core/tuner.h \
	core/tuner.c \
	core/tuner_select.c \
	core/problem_key.c \
	core/perfdb.h \
	core/perfdb.c
# The system performance database is read from $(pkgdatadir)/perfdb.txt when a
# distributor installs one; adnn itself installs none (see doc/tuning.md).
libadnn_la_CPPFLAGS = $(AM_CPPFLAGS) -DADNN_BUILDING_LIBRARY \
	-DADNN_PLUGIN_DIR='"$(pkglibdir)"' \
	-DADNN_SYSTEM_PERFDB='"$(pkgdatadir)/perfdb.txt"'
libadnn_la_LDFLAGS = -version-info $(ADNN_LT_VERSION) -no-undefined \
	-Wl,--version-script=$(top_srcdir)/core/libadnn.map
libadnn_la_LIBADD = $(LIBS)
EXTRA_libadnn_la_DEPENDENCIES = core/libadnn.map
EXTRA_DIST += core/libadnn.map
