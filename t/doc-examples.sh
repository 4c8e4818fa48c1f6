#!/bin/sh
# The API documentation's examples (doc/examples/*.c): each one is built by
# make check and run here; an exit status of 77 means "skipped" (an op the
# backend does not implement yet). Each page in doc/ that quotes an example
# after a line "<!-- example: doc/examples/NAME.c -->" must quote it verbatim,
# so the pages cannot drift from the code that is compiled and run. TAP output.
set -u
builddir=${ADNN_TEST_BUILDDIR:?run through make check}
srcdir=${ADNN_TEST_SRCDIR:?run through make check}

n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/adnn-docex.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

examples="errors context memory tensors gemm plans backends tuning training mixed_precision"

for ex in $examples; do
  prog=$builddir/doc/examples/$ex
  if [ ! -x "$prog" ]; then
    ok 1 "doc/examples/$ex was built"
    continue
  fi
  # Examples pick "auto"; pin the CPU backend so the result does not depend on
  # the machine (the GPU runs are covered by the conformance tests).
  env -u ADNN_CONV2D_ALGO ADNN_BACKEND=cpu ADNN_LOG=error "$prog" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  sed 's/^/# /' "$tmp/out" "$tmp/err"
  if [ $rc -eq 77 ]; then
    n=$((n + 1)); echo "ok $n - doc/examples/$ex # SKIP ops not implemented on this backend yet"
  else
    ok $rc "doc/examples/$ex runs and checks its result"
  fi
done

# Every quoted example is verbatim; every example is quoted by some page.
for ex in $examples; do
  src=$srcdir/doc/examples/$ex.c
  pages=$(grep -l "^<!-- example: doc/examples/$ex.c -->\$" "$srcdir"/doc/*.md 2>/dev/null)
  if [ -z "$pages" ]; then
    ok 1 "doc/examples/$ex.c is quoted by a page in doc/"
    continue
  fi
  for page in $pages; do
    awk -v marker="<!-- example: doc/examples/$ex.c -->" '
      $0 == marker { want = 1; next }
      want == 1 && /^```/ { want = 2; next }
      want == 2 && /^```$/ { exit }
      want == 2 { print }
    ' "$page" >"$tmp/quoted"
    if cmp -s "$tmp/quoted" "$src"; then
      ok 0 "doc/$(basename "$page") quotes doc/examples/$ex.c verbatim"
    else
      ok 1 "doc/$(basename "$page") quotes doc/examples/$ex.c verbatim (copy the file into the page's code block)"
      diff -u "$src" "$tmp/quoted" | sed 's/^/# /' | head -n 20
    fi
  done
done

echo "1..$n"
[ $failed -eq 0 ]
