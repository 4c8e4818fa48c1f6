# The CPU kernels: CPU feature detection, the thread pool, the conv2d
# algorithms (im2col + SGEMM for any geometry, 1x1 as a GEMM on the input,
# Winograd F(2x2, 3x3), a direct depthwise kernel) and the kernels of the other
# ops, vectorized for AVX-512, AVX2+FMA and baseline (chosen at plan creation)
# and multi-threaded. The op kernels include themselves once per instruction
# set (see simd.h), so simd.h and simd_end.h are listed as headers. A libtool
# convenience library linked into the CPU plugin.
noinst_LTLIBRARIES += kernels/cpu/libadnn_cpu_kernels.la
kernels_cpu_libadnn_cpu_kernels_la_SOURCES = \
	kernels/cpu/cpu_features.h \
	kernels/cpu/cpu_features.c \
	kernels/cpu/cpu_kernels.h \
	kernels/cpu/cpu_parallel.h \
	kernels/cpu/cpu_parallel.c \
	kernels/cpu/layout.c \
	kernels/cpu/epilogue.c \
	kernels/cpu/conv2d_common.h \
	kernels/cpu/conv2d_im2col_gemm.c \
	kernels/cpu/conv2d_gemm_1x1.c \
	kernels/cpu/conv2d_winograd_f2x3.c \
	kernels/cpu/conv2d_depthwise_direct.c \
	kernels/cpu/simd.h \
	kernels/cpu/simd_end.h \
	kernels/cpu/activation.c \
	kernels/cpu/binary.c \
	kernels/cpu/softmax.c \
	kernels/cpu/batchnorm.c \
	kernels/cpu/norm.c \
	kernels/cpu/pool2d.c
kernels_cpu_libadnn_cpu_kernels_la_CPPFLAGS = $(AM_CPPFLAGS) $(OPENBLAS_CFLAGS)
