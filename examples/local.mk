# Examples: programs written only against the public API.
noinst_PROGRAMS += examples/gemm-demo examples/cnn-forward
examples_gemm_demo_SOURCES = examples/gemm-demo.c
examples_gemm_demo_LDADD = libadnn.la
examples_cnn_forward_SOURCES = examples/cnn-forward.c
examples_cnn_forward_LDADD = libadnn.la
