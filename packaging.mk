# Packaging: exported-symbol list and ABI baseline, man pages, the API
# documentation's compiled examples, and their tests. See doc/packaging.md and
# doc/versioning.md.

# ---- exported symbols --------------------------------------------------------
# abi/libadnn.symbols lists every dynamic symbol libadnn.so exports, as
# "name@@VERSION", sorted. t/abi-exports.sh compares it with the built library;
# "make update-abi-symbols" rewrites it from the build (a deliberate change that
# goes into the commit together with the new API and doc/versioning.md's table).
TESTS += t/abi-exports.sh
EXTRA_DIST += t/abi-exports.sh abi/libadnn.symbols abi/libadnn.abi

ADNN_NM = nm
update-abi-symbols: libadnn.la
	$(AM_V_GEN)LC_ALL=C $(ADNN_NM) -D --defined-only $(top_builddir)/.libs/libadnn.so \
	  | $(AWK) '$$2 != "A" { print $$3 }' | LC_ALL=C sort > $(srcdir)/abi/libadnn.symbols.tmp \
	  && mv -f $(srcdir)/abi/libadnn.symbols.tmp $(srcdir)/abi/libadnn.symbols \
	  && echo "updated $(srcdir)/abi/libadnn.symbols ($$(wc -l < $(srcdir)/abi/libadnn.symbols) symbols); review 'git diff abi/' and commit it"

# ---- ABI baseline (libabigail) -------------------------------------------------
# abi/libadnn.abi is "abidw" of libadnn.so (built with -g): its functions and
# the types they reach. abidiff is given the public headers (--headers-dir), so
# changes to types that are not defined there (the inside of the opaque
# adnn_context, core structs) are filtered out and only public types count.
# Source locations are needed for that filtering; the baseline stores them
# relative to placeholders so that it does not depend on where it was built.
# "make check-abi" compares the build with it when abigail-tools is installed
# and says it skipped otherwise; it is not part of "make check", so CI needs no
# libabigail.
ADNN_ABIDW_FLAGS = --no-corpus-path --no-comp-dir-path --drop-undefined-syms \
	--headers-dir $(top_srcdir)/include --headers-dir $(top_builddir)/include
ADNN_ABIDIFF_FLAGS = \
	--headers-dir1 $(top_srcdir)/include --headers-dir1 $(top_builddir)/include \
	--headers-dir2 $(top_srcdir)/include --headers-dir2 $(top_builddir)/include
check-abi: libadnn.la
	@if ! command -v abidiff >/dev/null 2>&1; then \
	  echo "check-abi: skipped: abigail-tools not installed (abidiff not found)"; exit 0; \
	fi; \
	$(SED) -e "s|='@ADNN_BUILDDIR@/|='$(abs_top_builddir)/|g" \
	  -e "s|='@ADNN_SRCDIR@/|='$(abs_top_srcdir)/|g" \
	  $(srcdir)/abi/libadnn.abi > abi-baseline.tmp || exit 1; \
	echo "check-abi: abidiff abi/libadnn.abi .libs/libadnn.so"; \
	abidiff $(ADNN_ABIDIFF_FLAGS) abi-baseline.tmp $(top_builddir)/.libs/libadnn.so; \
	rc=$$?; rm -f abi-baseline.tmp; \
	if [ $$rc -eq 0 ]; then echo "check-abi: no ABI change against abi/libadnn.abi"; exit 0; fi; \
	if [ $$rc -ge 128 ] || [ $$(( rc & 3 )) -ne 0 ]; then \
	  echo "check-abi: abidiff itself failed (status $$rc)"; exit 1; \
	fi; \
	if [ $$(( rc & 8 )) -ne 0 ]; then \
	  echo "check-abi: INCOMPATIBLE ABI change against abi/libadnn.abi (abidiff status $$rc)."; \
	  echo "check-abi: undo it, or bump the SONAME as doc/versioning.md says."; exit 1; \
	fi; \
	echo "check-abi: ABI change against abi/libadnn.abi (abidiff status $$rc). A change to a"; \
	echo "check-abi: public struct's layout is incompatible (SONAME bump, doc/versioning.md);"; \
	echo "check-abi: an intended compatible addition: follow doc/versioning.md, then run"; \
	echo "check-abi: 'make update-abi-baseline'."; exit 1
update-abi-baseline: libadnn.la
	@command -v abidw >/dev/null 2>&1 || { echo "update-abi-baseline: abidw not found: install abigail-tools"; exit 1; }
	$(AM_V_GEN)abidw $(ADNN_ABIDW_FLAGS) $(top_builddir)/.libs/libadnn.so \
	  | $(SED) -e "s|='$(abs_top_srcdir)/|='@ADNN_SRCDIR@/|g" \
	    -e "s|='$(abs_top_builddir)/|='@ADNN_BUILDDIR@/|g" > $(srcdir)/abi/libadnn.abi.tmp \
	  && mv -f $(srcdir)/abi/libadnn.abi.tmp $(srcdir)/abi/libadnn.abi \
	  && echo "updated $(srcdir)/abi/libadnn.abi; review 'git diff abi/' and commit it"
CLEANFILES += abi-baseline.tmp
.PHONY: update-abi-symbols check-abi update-abi-baseline

# ---- man pages -------------------------------------------------------------------
# Written directly in man(7) roff; the link pages (.so requests) let "man
# adnn_malloc" find the grouped page.
adnn_man3_groups = man/adnn_context.3 man/adnn_memory.3 man/adnn_gemm.3 \
	man/adnn_tensor.3 man/adnn_plan.3 man/adnn_backend.3 man/adnn_status.3
adnn_man3_links = \
	man/adnn_context_create.3 man/adnn_context_destroy.3 man/adnn_context_backend.3 \
	man/adnn_context_device.3 man/adnn_context_synchronize.3 \
	man/adnn_context_set_flags.3 man/adnn_context_get_flags.3 \
	man/adnn_malloc.3 man/adnn_free.3 man/adnn_memcpy.3 man/adnn_memset.3 \
	man/adnn_gemm_batched.3 \
	man/adnn_tensor_desc_init.3 man/adnn_tensor_desc_init_strided.3 \
	man/adnn_tensor_desc_validate.3 man/adnn_tensor_desc_element_count.3 \
	man/adnn_tensor_desc_span_bytes.3 man/adnn_tensor_desc_is_packed.3 \
	man/adnn_dtype_size.3 man/adnn_dtype_name.3 \
	man/adnn_plan_create_conv2d.3 man/adnn_plan_create_pool2d.3 \
	man/adnn_plan_create_activation.3 man/adnn_plan_create_softmax.3 \
	man/adnn_plan_create_batchnorm.3 man/adnn_plan_create_norm.3 \
	man/adnn_plan_create_binary.3 man/adnn_plan_execute.3 man/adnn_plan_destroy.3 \
	man/adnn_plan_algorithm.3 man/adnn_plan_workspace_bytes.3 \
	man/adnn_conv2d_output_dims.3 man/adnn_pool2d_output_dims.3 \
	man/adnn_conv2d_algorithm_name.3 \
	man/adnn_backend_count.3 man/adnn_backend_get.3 man/adnn_backend_auto_choice.3 \
	man/adnn_plugin_search_path.3 \
	man/adnn_status_name.3 man/adnn_status_string.3 man/adnn_last_error.3 \
	man/adnn_last_status.3 man/adnn_log_set_level.3 man/adnn_log_get_level.3 \
	man/adnn_log_set_callback.3 man/adnn_version.3 man/adnn_version_string.3
dist_man_MANS += man/adnn.7 man/adnn-info.1 $(adnn_man3_groups) $(adnn_man3_links)
TESTS += t/man-pages.sh
EXTRA_DIST += t/man-pages.sh

# ---- API documentation and its compiled examples -------------------------------
# Each page in doc/ quotes its example from doc/examples/ verbatim; make check
# builds the examples, runs them and checks that the quotes are still verbatim
# (t/doc-examples.sh).
dist_doc_DATA += doc/errors.md doc/context.md doc/memory.md doc/tensors.md doc/gemm.md \
	doc/plans.md doc/backends.md doc/tuning.md doc/versioning.md doc/packaging.md
doc_examples = doc/examples/errors doc/examples/context doc/examples/memory \
	doc/examples/tensors doc/examples/gemm doc/examples/plans doc/examples/backends \
	doc/examples/tuning
check_PROGRAMS += $(doc_examples)
doc_examples_errors_LDADD = libadnn.la
doc_examples_context_LDADD = libadnn.la
doc_examples_memory_LDADD = libadnn.la
doc_examples_tensors_LDADD = libadnn.la
doc_examples_gemm_LDADD = libadnn.la
doc_examples_plans_LDADD = libadnn.la
doc_examples_backends_LDADD = libadnn.la
doc_examples_tuning_LDADD = libadnn.la
TESTS += t/doc-examples.sh
EXTRA_DIST += t/doc-examples.sh
