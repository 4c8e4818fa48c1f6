# The CPU conv2d algorithms (issue 4, section 3), each a candidate the plan
# (backends/cpu/cpu_plan.c) picks or is forced to: im2col + SGEMM for any
# geometry, 1x1 as a GEMM on the input, Winograd F(2x2, 3x3), and a direct
# SIMD kernel for depthwise convolutions. Included from backends/cpu/local.mk.
backends_cpu_adnn_cpu_la_SOURCES += \
	kernels/cpu/conv2d_common.h \
	kernels/cpu/conv2d_im2col_gemm.c \
	kernels/cpu/conv2d_gemm_1x1.c \
	kernels/cpu/conv2d_winograd_f2x3.c \
	kernels/cpu/conv2d_depthwise_direct.c
