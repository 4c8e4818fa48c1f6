# The CUDA plugin (cuBLAS, cuDNN and the kernels of kernels/cuda/), built when
# configure finds the CUDA toolkit and cuDNN 9. Sources are distributed either
# way. cudart is linked statically and cuDNN through its sub-libraries, so that
# the plugin loads on machines without NVIDIA software and a missing cuDNN part
# fails dlopen() cleanly (doc/cuda.md).
if HAVE_CUDA
pkglib_LTLIBRARIES += backends/cuda/adnn-cuda.la
endif
backends_cuda_adnn_cuda_la_SOURCES = \
	backends/cuda/cuda_internal.h \
	backends/cuda/cuda_plugin.c \
	backends/cuda/cuda_probe.c \
	backends/cuda/cuda_compat.c \
	backends/cuda/cuda_errors.c \
	backends/cuda/cuda_context.c \
	backends/cuda/cuda_memory.c \
	backends/cuda/cuda_gemm.c \
	backends/cuda/cuda_layout.h \
	backends/cuda/cuda_layout.c \
	backends/cuda/cuda_op.h \
	backends/cuda/cuda_op.c \
	backends/cuda/cuda_plan.h \
	backends/cuda/cuda_plan.c \
	backends/cuda/cuda_conv2d.h \
	backends/cuda/cuda_conv2d_layout.c \
	backends/cuda/cuda_conv2d_cudnn.h \
	backends/cuda/cuda_conv2d_cudnn.c \
	backends/cuda/cuda_conv2d.c \
	backends/cuda/cuda_conv2d_backward.c \
	backends/cuda/cuda_pool2d.c \
	backends/cuda/cuda_activation.c \
	backends/cuda/cuda_softmax.c \
	backends/cuda/cuda_batchnorm.c \
	backends/cuda/cuda_norm.c \
	backends/cuda/cuda_binary.c \
	backends/cuda/cuda_reduce.c \
	backends/cuda/cuda_pool2d_backward.c \
	backends/cuda/cuda_activation_backward.c \
	backends/cuda/cuda_softmax_backward.c \
	backends/cuda/cuda_batchnorm_training.c \
	backends/cuda/cuda_norm_backward.c \
	backends/cuda/cuda_softmax_cross_entropy.c \
	backends/cuda/cuda_matmul.c \
	backends/cuda/cuda_reorder.c \
	backends/cuda/cuda_quantize.c \
	backends/cuda/cuda_optimizer.c \
	backends/cuda/cuda_loss_scale.c
cuda_plugin_defines = -DADNN_CUDA_MIN_SM=$(CUDA_MIN_SM) \
	-DADNN_CUDA_ARCH_FLAGS='"$(CUDA_ARCH_FLAGS)"'
backends_cuda_adnn_cuda_la_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS) $(cuda_plugin_defines)
# Only adnn_plugin_entry is exported: the statically linked CUDA runtime would
# otherwise export every cuda* function and clash with an application's own.
backends_cuda_adnn_cuda_la_LDFLAGS = -module -avoid-version -shared -Wl,-z,defs \
	-export-symbols-regex '^adnn_plugin_entry$$' $(CUDA_LDFLAGS)
backends_cuda_adnn_cuda_la_LIBADD = kernels/cuda/libadnn_cuda_kernels.la $(CUDA_LIBS)
# Attention forward and backward: our flash-style kernels (kernels/cuda/attention*.cu).
backends_cuda_adnn_cuda_la_SOURCES += backends/cuda/cuda_attention.c \
	backends/cuda/cuda_attention_backward.c
