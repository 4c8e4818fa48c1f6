# Examples: programs written only against the public API.
noinst_PROGRAMS += examples/gemm-demo
examples_gemm_demo_SOURCES = examples/gemm-demo.c
examples_gemm_demo_LDADD = libadnn.la
