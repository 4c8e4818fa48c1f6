# The core library: public API, validation, loader, logging, errors.
lib_LTLIBRARIES += libadnn.la
libadnn_la_SOURCES = \
	core/internal.h \
	core/error.c \
	core/log.c \
	core/version.c \
	core/dtype.c \
	core/tensor.c \
	core/loader.c \
	core/loader.h \
	core/context.c \
	core/memory.c \
	core/gemm.c \
	core/ops.c
libadnn_la_CPPFLAGS = $(AM_CPPFLAGS) -DADNN_BUILDING_LIBRARY \
	-DADNN_PLUGIN_DIR='"$(pkglibdir)"'
libadnn_la_LDFLAGS = -version-info $(ADNN_LT_VERSION) -no-undefined \
	-Wl,--version-script=$(top_srcdir)/core/libadnn.map
libadnn_la_LIBADD = $(LIBS)
EXTRA_libadnn_la_DEPENDENCIES = core/libadnn.map
EXTRA_DIST += core/libadnn.map

# The tuner and the performance database, each with its tests and man pages.
include core/tuner.mk
include core/perfdb.mk
