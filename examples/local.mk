# Examples: programs written only against the public API.
noinst_PROGRAMS += examples/gemm-demo examples/cnn-forward
examples_gemm_demo_SOURCES = examples/gemm-demo.c
examples_gemm_demo_LDADD = libadnn.la
examples_cnn_forward_SOURCES = examples/cnn-forward.c
examples_cnn_forward_LDADD = libadnn.la

# train-cnn: a small CNN trained on the UCI 8x8 digits with the training ops
# (make demo runs it; t/train-cnn.sh checks its accuracy and determinism).
# The data file is read from the source tree, so VPATH builds and distcheck
# find it; tools/digits-convert.py made it once (doc/datasets.md).
digits_cnn_sources = examples/digits-cnn.c examples/digits-cnn.h examples/digits.c \
	examples/digits.h
digits_cnn_cppflags = $(AM_CPPFLAGS) \
	-DDIGITS_DEFAULT_PATH='"$(abs_top_srcdir)/examples/data/digits.txt"'
noinst_PROGRAMS += examples/train-cnn
examples_train_cnn_SOURCES = examples/train-cnn.c $(digits_cnn_sources)
examples_train_cnn_CPPFLAGS = $(digits_cnn_cppflags)
examples_train_cnn_LDADD = libadnn.la -lm
EXTRA_DIST += examples/data/digits.txt tools/digits-convert.py

# train-cnn-mpi: the same network, data-parallel over MPI ranks (built when
# configure finds MPI; t/train-cnn-mpi.sh runs it with 2 ranks).
if HAVE_MPI
noinst_PROGRAMS += examples/train-cnn-mpi
examples_train_cnn_mpi_SOURCES = examples/train-cnn-mpi.c $(digits_cnn_sources)
examples_train_cnn_mpi_CPPFLAGS = $(digits_cnn_cppflags) $(MPI_CFLAGS)
examples_train_cnn_mpi_LDADD = libadnn.la $(MPI_LIBS) -lm
endif

# transformer-block: one BERT-base encoder layer, fused (adnn_matmul +
# adnn_attention) against the unfused composition of the older ops (make demo
# runs it at a small size; t/transformer-block.sh checks it; doc/transformer.md).
noinst_PROGRAMS += examples/transformer-block
examples_transformer_block_SOURCES = examples/transformer-block.c
examples_transformer_block_LDADD = libadnn.la -lm
