# Documentation installed in $(docdir). Each API page quotes a program of
# doc/examples/ verbatim; t/doc-examples.sh builds and runs them.
dist_doc_DATA += README.md doc/api.md doc/plugins.md doc/cpu.md doc/cuda.md doc/testing.md \
	doc/ops.md doc/numerics.md doc/performance.md doc/bench.md \
	doc/errors.md doc/context.md doc/memory.md doc/tensors.md doc/gemm.md \
	doc/plans.md doc/backends.md doc/tuning.md doc/versioning.md doc/packaging.md
EXTRA_DIST += doc/gpu-check.md
# ADNN_VERBOSE (core/verbose.c).
dist_doc_DATA += doc/verbose.md
# The training examples: their data set (attribution, license) and data parallelism.
dist_doc_DATA += doc/datasets.md doc/distributed.md
# The training API: backward ops, multi-output execution, the optimizer.
dist_doc_DATA += doc/training.md
# The BERT encoder layer example (examples/transformer-block.c).
dist_doc_DATA += doc/transformer.md
dist_doc_DATA += doc/prepacking.md


# The complete programs the section 3 man pages cite (as doc/examples/NAME.c),
# installed as $(docdir)/examples/NAME.c so that an installed system has them.
docexamplesdir = $(docdir)/examples
dist_docexamples_DATA = doc/examples/errors.c doc/examples/context.c doc/examples/memory.c \
	doc/examples/tensors.c doc/examples/gemm.c doc/examples/plans.c doc/examples/backends.c \
	doc/examples/tuning.c doc/examples/training.c doc/examples/mixed_precision.c
