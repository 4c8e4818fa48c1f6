# Reference kernels (kernels/ref/<op>.c, one per op of the manifest): plain
# loops accumulating in double, the CPU plugin's "reference" implementation
# (F64, forced, and the slow catch-all of the tuner). A libtool convenience
# library linked into the CPU plugin.
noinst_LTLIBRARIES += kernels/ref/libadnn_ref.la
kernels_ref_libadnn_ref_la_SOURCES = \
	kernels/ref/ref.h \
	kernels/common/float16.h \
	kernels/common/convert.h \
	kernels/common/quantize.h \
	kernels/common/loss_scale.h \
	kernels/ref/activation.c \
	kernels/ref/conv2d.c \
	kernels/ref/conv2d_backward_data.c \
	kernels/ref/conv2d_backward_weights.c \
	kernels/ref/pool2d.c \
	kernels/ref/softmax.c \
	kernels/ref/batchnorm.c \
	kernels/ref/norm.c \
	kernels/ref/binary.c \
	kernels/ref/reduce.c \
	kernels/ref/pool2d_backward.c \
	kernels/ref/activation_backward.c \
	kernels/ref/softmax_backward.c \
	kernels/ref/batchnorm_training.c \
	kernels/ref/batchnorm_backward.c \
	kernels/ref/norm_backward.c \
	kernels/ref/softmax_cross_entropy.c \
	kernels/ref/optimizer.c \
	kernels/ref/loss_scale.c \
	kernels/ref/matmul.c \
	kernels/ref/attention.c \
	kernels/ref/attention_backward.c \
	kernels/ref/reorder.c \
	kernels/ref/quantize.c
kernels_ref_libadnn_ref_la_CPPFLAGS = $(AM_CPPFLAGS)
kernels_ref_libadnn_ref_la_LIBADD = -lm
