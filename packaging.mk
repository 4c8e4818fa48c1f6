# Packaging: the exported-symbol list and the ABI baseline (see
# doc/packaging.md and doc/versioning.md). Their tests are registered in
# t/local.mk.

# ---- exported symbols --------------------------------------------------------
# abi/libadnn.symbols lists every dynamic symbol libadnn.so exports, as
# "name@@VERSION", sorted. t/abi-exports.sh compares it with the built library;
# "make update-abi-symbols" rewrites it from the build (a deliberate change that
# goes into the commit together with the new API and doc/versioning.md's table).
EXTRA_DIST += abi/libadnn.symbols abi/libadnn.abi

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
