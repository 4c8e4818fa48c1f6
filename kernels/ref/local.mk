# Reference kernels (kernels/ref/): plain loops in double, the oracle of the
# conformance suite and the last-resort implementation of the CPU plugin. A
# libtool convenience library, linked into the CPU plugin and the tests.
noinst_LTLIBRARIES += kernels/ref/libadnn_ref.la
kernels_ref_libadnn_ref_la_SOURCES = \
	kernels/ref/ref_ops.h \
	kernels/ref/ref_activation.c \
	kernels/ref/ref_conv2d.c \
	kernels/ref/ref_pool2d.c \
	kernels/ref/ref_softmax.c \
	kernels/ref/ref_batchnorm.c \
	kernels/ref/ref_norm.c \
	kernels/ref/ref_binary.c
kernels_ref_libadnn_ref_la_CPPFLAGS = $(AM_CPPFLAGS)
kernels_ref_libadnn_ref_la_LIBADD = -lm
