# The CUDA plugin (cuBLAS, cuDNN and our own kernels), its tests, the test-only
# fake driver and the GPU benchmark. Everything that needs the CUDA toolkit is
# inside "if HAVE_CUDA"; sources are distributed either way, so that a tarball
# made on a machine without CUDA still builds the plugin where CUDA exists.

SUFFIXES += .cu

# nvcc through libtool: libtool's compile mode writes the .lo file. -shared makes
# one PIC pass; -prefer-non-pic stops libtool from adding -fPIC -DPIC, which
# nvcc does not accept, so -fPIC goes to the host compiler by --compiler-options
# (a bare -Xcompiler would be taken by libtool itself). See
# ../shared/research/cuda-facts.md section 5.
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
	backends/cuda/cuda_kernels.h \
	backends/cuda/cuda_plan.h \
	backends/cuda/cuda_plan.c \
	backends/cuda/cuda_conv2d.c \
	kernels/cuda/selftest.cu \
	kernels/cuda/activation.cu \
	kernels/cuda/binary.cu \
	kernels/cuda/pool2d.cu \
	kernels/cuda/softmax.cu \
	kernels/cuda/norm.cu \
	kernels/cuda/conv2d_direct.cu
# The suffix rule has no dependency tracking: the kernels depend on these.
cuda_kernel_headers = $(srcdir)/kernels/cuda/common.cuh $(srcdir)/backends/cuda/cuda_kernels.h
kernels/cuda/activation.lo kernels/cuda/binary.lo kernels/cuda/pool2d.lo \
kernels/cuda/softmax.lo kernels/cuda/norm.lo kernels/cuda/conv2d_direct.lo: $(cuda_kernel_headers)
EXTRA_DIST += kernels/cuda/common.cuh
# Host emulation of the plugin's kernels for machines without a GPU (a
# developer check: sh kernels/cuda/emu/run.sh BUILD_DIR).
EXTRA_DIST += kernels/cuda/emu/run.sh kernels/cuda/emu/emu.h kernels/cuda/emu/emu_plugin.c \
	kernels/cuda/emu/cudnn_emu.c
cuda_plugin_defines = -DADNN_CUDA_MIN_SM=$(CUDA_MIN_SM) \
	-DADNN_CUDA_ARCH_FLAGS='"$(CUDA_ARCH_FLAGS)"'
backends_cuda_adnn_cuda_la_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS) $(cuda_plugin_defines)
# Only adnn_plugin_entry is exported: the statically linked CUDA runtime would
# otherwise export every cuda* function and clash with an application's own.
backends_cuda_adnn_cuda_la_LDFLAGS = -module -avoid-version -shared -Wl,-z,defs \
	-export-symbols-regex '^adnn_plugin_entry$$' $(CUDA_LDFLAGS)
backends_cuda_adnn_cuda_la_LIBADD = $(CUDA_LIBS)

# ---- tests -----------------------------------------------------------------

cuda_test_defines = -DCUDA_TEST_BUILDDIR='"$(abs_top_builddir)"'

if HAVE_CUDA
# The fake driver: presented to t/cuda-fake-driver as libcuda.so.1 through a
# symlink in a temporary directory. -rpath makes libtool build a shared object
# although it is never installed.
check_LTLIBRARIES += t/cuda-fake-libcuda.la
check_PROGRAMS += t/cuda-probe t/cuda-memory t/cuda-gemm t/cuda-fake-driver t/cuda-compat \
	t/cuda-ops t/cuda-plan-nodevice
TESTS += t/cuda-compat t/cuda-fake-driver t/cuda-probe t/cuda-memory t/cuda-gemm t/cuda-ops \
	t/cuda-plan-nodevice
endif
t_cuda_fake_libcuda_la_SOURCES = t/fake-libcuda.c
t_cuda_fake_libcuda_la_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
t_cuda_fake_libcuda_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere

t_cuda_probe_SOURCES = t/cuda-probe.c t/tap.h
t_cuda_probe_LDADD = libadnn.la

t_cuda_memory_SOURCES = t/cuda-memory.c t/tap.h
t_cuda_memory_LDADD = libadnn.la

t_cuda_gemm_SOURCES = t/cuda-gemm.c t/tap.h
t_cuda_gemm_LDADD = libadnn.la

# Every forward DNN op on cuda vs the reference kernels and the cpu plugin.
t_cuda_ops_SOURCES = t/cuda-ops.c t/tap.h
t_cuda_ops_LDADD = libadnn.la kernels/ref/libadnn_ref.la -lm
EXTRA_t_cuda_ops_DEPENDENCIES = backends/cuda/adnn-cuda.la

# The plugin's plan slots called directly (dlopen, own host table; libadnn only
# for the TAP helpers), as far as they run
# without a device.
t_cuda_plan_nodevice_SOURCES = t/cuda-plan-nodevice.c t/tap.h
t_cuda_plan_nodevice_CPPFLAGS = $(AM_CPPFLAGS) $(cuda_test_defines)
t_cuda_plan_nodevice_LDADD = libadnn.la -ldl
EXTRA_t_cuda_plan_nodevice_DEPENDENCIES = backends/cuda/adnn-cuda.la

# Loads the plugin itself (with a small host table of its own) in children that
# see the fake driver first on the loader path; it does not need libadnn.
t_cuda_fake_driver_SOURCES = t/cuda-fake-driver.c t/tap.h
t_cuda_fake_driver_CPPFLAGS = $(AM_CPPFLAGS) $(cuda_test_defines)
EXTRA_t_cuda_fake_driver_DEPENDENCIES = t/cuda-fake-libcuda.la backends/cuda/adnn-cuda.la

# The version rules, compiled straight into the test.
t_cuda_compat_SOURCES = t/cuda-compat.c t/tap.h backends/cuda/cuda_compat.c
t_cuda_compat_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)

# ---- benchmark and GPU check -----------------------------------------------

if HAVE_CUDA
noinst_PROGRAMS += bench/gemm-cuda-overhead bench/ops-cuda
endif
# Every DNN op on realistic shapes, through the public API only (no CUDA
# headers or libraries needed; built only with CUDA because it needs the plugin).
bench_ops_cuda_SOURCES = bench/ops-cuda.c
bench_ops_cuda_LDADD = libadnn.la -lm
EXTRA_bench_ops_cuda_DEPENDENCIES = backends/cuda/adnn-cuda.la
bench_gemm_cuda_overhead_SOURCES = bench/gemm-cuda-overhead.c
bench_gemm_cuda_overhead_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
bench_gemm_cuda_overhead_LDFLAGS = $(CUDA_LDFLAGS)
bench_gemm_cuda_overhead_LDADD = libadnn.la -lcublas -lcudart_static -lrt -lpthread -ldl -lstdc++

dist_noinst_SCRIPTS += tools/gpu-check.sh
dist_doc_DATA += doc/cuda.md
EXTRA_DIST += doc/gpu-check.md
