# Fast CPU kernels for every op except convolution (issue 4, section 3):
# vectorized (AVX-512 / AVX2+FMA / baseline, chosen at plan creation) and
# multi-threaded. Included from backends/cpu/local.mk. The .c files include
# themselves once per instruction set (see kernels/cpu/simd.h), so simd.h and
# simd_end.h are listed as headers.
backends_cpu_adnn_cpu_la_SOURCES += \
	kernels/cpu/simd.h \
	kernels/cpu/simd_end.h \
	kernels/cpu/activation.c \
	kernels/cpu/binary.c \
	kernels/cpu/softmax.c \
	kernels/cpu/batchnorm.c \
	kernels/cpu/norm.c \
	kernels/cpu/pool2d.c
