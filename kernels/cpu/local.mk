# The CPU kernels: the kernel interface and each op's ordered implementation
# list (cpu_kernels.h, impl_list.h), CPU feature detection, the thread pool,
# the conv2d algorithms (kernels/cpu/conv2d-<algo>.c), the vectorized kernels
# of the other ops (kernels/cpu/<op>.c) and the reference implementations
# built on kernels/ref/ (reference.c). The vector code of the op kernels is
# compiled once per instruction set by including itself through
# simd_instantiate.h (simd_isa.h says why), so the simd headers are listed as sources. A libtool
# convenience library linked into the CPU plugin.
noinst_LTLIBRARIES += kernels/cpu/libadnn_cpu_kernels.la
kernels_cpu_libadnn_cpu_kernels_la_SOURCES = \
	kernels/cpu/cpu_kernels.h \
	kernels/cpu/impl_list.h \
	kernels/cpu/cpu_features.h \
	kernels/cpu/cpu_features.c \
	kernels/cpu/cpu_parallel.h \
	kernels/cpu/cpu_parallel.c \
	kernels/cpu/layout.c \
	kernels/cpu/simd.h \
	kernels/cpu/simd_isa.h \
	kernels/cpu/simd_instantiate.h \
	kernels/cpu/simd_region.h \
	kernels/cpu/reference.c \
	kernels/cpu/gemm.h \
	kernels/cpu/gemm.c \
	kernels/cpu/gemm_kernel.h \
	kernels/cpu/gemm_kernel-avx512.c \
	kernels/cpu/gemm_kernel-avx2.c \
	kernels/cpu/conv2d.h \
	kernels/cpu/conv2d-depthwise_direct.c \
	kernels/cpu/conv2d-gemm_1x1.c \
	kernels/cpu/conv2d-winograd_f2x3.c \
	kernels/cpu/conv2d-winograd_f4x3.c \
	kernels/cpu/conv2d-im2col_gemm.c \
	kernels/cpu/conv2d-direct.c \
	kernels/cpu/conv2d-lowp.c \
	kernels/cpu/conv2d-int8.c \
	kernels/cpu/conv2d_backward.h \
	kernels/cpu/conv2d_backward_data-gemm.c \
	kernels/cpu/conv2d_backward_data-depthwise_direct.c \
	kernels/cpu/conv2d_backward_weights-gemm.c \
	kernels/cpu/conv2d_backward_weights-depthwise_direct.c \
	kernels/cpu/lowp.h \
	kernels/cpu/lowp.c \
	kernels/cpu/lowp_widen.h \
	kernels/cpu/lowp_widen.c \
	kernels/cpu/activation.c \
	kernels/cpu/binary.c \
	kernels/cpu/reduce.c \
	kernels/cpu/softmax_cross_entropy.c \
	kernels/cpu/optimizer.c \
	kernels/cpu/loss_scale.c \
	kernels/cpu/attention.c \
	kernels/cpu/attention_tile.h \
	kernels/cpu/softmax.c \
	kernels/cpu/batchnorm.c \
	kernels/cpu/norm.c \
	kernels/cpu/pool2d.c \
	kernels/cpu/pool2d_backward.c \
	kernels/cpu/activation_backward.c \
	kernels/cpu/softmax_backward.c \
	kernels/cpu/batchnorm_training.c \
	kernels/cpu/norm_backward.c \
	kernels/cpu/blas_threads.h \
	kernels/cpu/blas_threads.c \
	kernels/cpu/matmul_epilogue.h \
	kernels/cpu/matmul_epilogue.c \
	kernels/cpu/matmul.c \
	kernels/cpu/gemm_lowp.h \
	kernels/cpu/gemm_lowp.c \
	kernels/cpu/matmul_lowp.c \
	kernels/cpu/reorder.c \
	kernels/cpu/quantize.c \
	kernels/cpu/attention_backward.c \
	kernels/cpu/attention_backward_tile.h
kernels_cpu_libadnn_cpu_kernels_la_CPPFLAGS = $(AM_CPPFLAGS) $(OPENBLAS_CFLAGS)
