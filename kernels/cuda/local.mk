# Our CUDA kernels, compiled by nvcc into a libtool convenience library that
# the CUDA plugin links. Sources are distributed either way, so that a tarball
# made on a machine without CUDA still builds the plugin where CUDA exists.

SUFFIXES += .cu

# nvcc through libtool: libtool's compile mode writes the .lo file. -shared makes
# one PIC pass; -prefer-non-pic stops libtool from adding -fPIC -DPIC, which
# nvcc does not accept, so -fPIC goes to the host compiler by --compiler-options
# (a bare -Xcompiler would be taken by libtool itself).
CUDA_LTNVCCCOMPILE = $(LIBTOOL) $(AM_V_lt) --tag=CC $(AM_LIBTOOLFLAGS) $(LIBTOOLFLAGS) \
	--mode=compile $(NVCC) $(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) $(CUDA_CPPFLAGS) \
	$(CPPFLAGS) $(CUDA_ARCH_FLAGS) -O3 -std=c++17 $(NVCCFLAGS) -shared -prefer-non-pic \
	--compiler-options=-fPIC,-fvisibility=hidden
AM_V_NVCC = $(am__v_NVCC_@AM_V@)
am__v_NVCC_ = $(am__v_NVCC_@AM_DEFAULT_V@)
am__v_NVCC_0 = @echo "  NVCC    " $@;
am__v_NVCC_1 =

.cu.lo:
	$(AM_V_at)$(MKDIR_P) $(@D)
	$(AM_V_NVCC)$(CUDA_LTNVCCCOMPILE) -c -o $@ $<

if HAVE_CUDA
noinst_LTLIBRARIES += kernels/cuda/libadnn_cuda_kernels.la
endif
kernels_cuda_libadnn_cuda_kernels_la_SOURCES = \
	kernels/cuda/cuda_kernels.h \
	kernels/cuda/common.cuh \
	kernels/common/nd.h \
	kernels/cuda/selftest.cu \
	kernels/cuda/activation.cu \
	kernels/cuda/binary.cu \
	kernels/cuda/pool2d.cu \
	kernels/cuda/softmax.cu \
	kernels/cuda/norm.cu \
	kernels/cuda/batchnorm.cu \
	kernels/cuda/conv2d-direct.cu \
	kernels/cuda/conv2d-int8.cu \
	kernels/cuda/conv2d-pad_pack.cu \
	kernels/cuda/conv2d-epilogue.cu \
	kernels/cuda/reduce.cu \
	kernels/cuda/pool2d_backward.cu \
	kernels/cuda/activation_backward.cu \
	kernels/cuda/softmax_backward.cu \
	kernels/cuda/batchnorm_training.cu \
	kernels/cuda/norm_backward.cu \
	kernels/cuda/softmax_cross_entropy.cu \
	kernels/cuda/optimizer.cu \
	kernels/cuda/loss_scale.cu \
	kernels/cuda/matmul_epilogue.cu \
	kernels/cuda/reorder.cu \
	kernels/cuda/quantize.cu \
	kernels/cuda/float16.cuh
# The suffix rule has no dependency tracking: every kernel depends on these
# headers (and, through them, on the public headers).
cuda_kernel_headers = $(srcdir)/kernels/cuda/common.cuh $(srcdir)/kernels/cuda/cuda_kernels.h \
	$(srcdir)/kernels/common/nd.h $(srcdir)/kernels/common/float16.h \
	$(srcdir)/kernels/common/convert.h $(srcdir)/include/adnn/plugin.h \
	$(srcdir)/include/adnn/op_list.h $(srcdir)/include/adnn/ops.h
cuda_kernel_objects = kernels/cuda/selftest.lo kernels/cuda/activation.lo kernels/cuda/binary.lo \
	kernels/cuda/pool2d.lo kernels/cuda/softmax.lo kernels/cuda/norm.lo \
	kernels/cuda/batchnorm.lo kernels/cuda/conv2d-direct.lo kernels/cuda/conv2d-int8.lo \
	kernels/cuda/conv2d-pad_pack.lo \
	kernels/cuda/conv2d-epilogue.lo kernels/cuda/reduce.lo \
	kernels/cuda/pool2d_backward.lo kernels/cuda/activation_backward.lo \
	kernels/cuda/softmax_backward.lo
cuda_kernel_objects += kernels/cuda/batchnorm_training.lo kernels/cuda/norm_backward.lo
cuda_kernel_objects += kernels/cuda/softmax_cross_entropy.lo kernels/cuda/optimizer.lo \
	kernels/cuda/loss_scale.lo
cuda_kernel_objects += kernels/cuda/matmul_epilogue.lo kernels/cuda/reorder.lo
# quantize's kernels run kernels/common/quantize.h's scalar definition.
cuda_kernel_objects += kernels/cuda/quantize.lo
kernels/cuda/quantize.lo: $(srcdir)/kernels/common/quantize.h
$(cuda_kernel_objects): $(cuda_kernel_headers)
# matmul's low-precision kernels convert through the device copies of
# kernels/common/float16.h.
kernels/cuda/matmul_epilogue.lo: $(srcdir)/kernels/cuda/float16.cuh
# The kernels that template their element type over F32, F64, F16 and BF16
# do it through lowp_elem.cuh (which includes float16.cuh).
kernels_cuda_libadnn_cuda_kernels_la_SOURCES += kernels/cuda/lowp_elem.cuh
kernels/cuda/activation.lo kernels/cuda/binary.lo kernels/cuda/pool2d.lo kernels/cuda/reduce.lo \
	kernels/cuda/softmax.lo kernels/cuda/norm.lo kernels/cuda/batchnorm.lo \
	kernels/cuda/conv2d-direct.lo kernels/cuda/conv2d-epilogue.lo kernels/cuda/conv2d-pad_pack.lo \
	kernels/cuda/activation_backward.lo kernels/cuda/softmax_backward.lo \
	kernels/cuda/pool2d_backward.lo: \
	$(srcdir)/kernels/cuda/lowp_elem.cuh $(srcdir)/kernels/cuda/float16.cuh
# conv2d backward (data, weights): the direct kernels of the CUDA plugin.
kernels_cuda_libadnn_cuda_kernels_la_SOURCES += kernels/cuda/conv2d_backward_data-direct.cu \
	kernels/cuda/conv2d_backward_weights-direct.cu
kernels/cuda/conv2d_backward_data-direct.lo kernels/cuda/conv2d_backward_weights-direct.lo: \
	$(cuda_kernel_headers)
# Attention forward and backward: the flash-style kernels, sharing their tile
# shapes through attention.cuh.
kernels_cuda_libadnn_cuda_kernels_la_SOURCES += kernels/cuda/attention.cuh \
	kernels/cuda/attention.cu kernels/cuda/attention_backward.cu
kernels/cuda/attention.lo kernels/cuda/attention_backward.lo: $(cuda_kernel_headers) \
	$(srcdir)/kernels/cuda/attention.cuh
