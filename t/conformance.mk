# The conformance suite of the forward DNN ops (issue 4): every ready backend
# against the reference kernels, with the tolerances of doc/numerics.md.
check_PROGRAMS += t/conformance
TESTS += t/conformance
t_conformance_SOURCES = t/conformance.c t/tap.h
t_conformance_LDADD = libadnn.la kernels/ref/libadnn_ref.la -lm
