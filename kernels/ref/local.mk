# Reference kernels: plain loops accumulating in double, the CPU plugin's
# implementation of the "reference" algorithm and of what its fast kernels do
# not handle. A libtool convenience library linked into the CPU plugin.
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
