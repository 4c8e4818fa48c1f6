#!/bin/sh
# Exported symbols: the dynamic symbols that .libs/libadnn.so defines must be
# exactly those listed in abi/libadnn.symbols ("name@@VERSION", sorted), every
# one versioned ADNN_1.0 (or a later node) and named adnn_*; every function
# the public headers declare with ADNN_API must be exported; and each plugin
# must export exactly one symbol, adnn_plugin_entry. TAP output.
set -u
builddir=${ADNN_TEST_BUILDDIR:?run through make check}
srcdir=${ADNN_TEST_SRCDIR:?run through make check}

n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }

if ! command -v nm >/dev/null 2>&1; then
  echo "1..0 # SKIP nm (binutils) is not installed"
  exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/adnn-abi.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
LC_ALL=C; export LC_ALL

lib=$builddir/.libs/libadnn.so
list=$srcdir/abi/libadnn.symbols
if [ ! -f "$lib" ]; then
  echo "1..0 # SKIP $lib was not built (shared libraries disabled?)"
  exit 0
fi

nm -D --defined-only "$lib" >"$tmp/nm"
ok $? "nm -D --defined-only .libs/libadnn.so"
# Version nodes appear as absolute symbols named after the node (ADNN_1.0).
awk '$2 != "A" { print $3 }' "$tmp/nm" | sort >"$tmp/exported"
awk '$2 == "A" { print $3 }' "$tmp/nm" | sort >"$tmp/nodes"
sort "$list" >"$tmp/listed"

comm -13 "$tmp/listed" "$tmp/exported" >"$tmp/added"
comm -23 "$tmp/listed" "$tmp/exported" >"$tmp/removed"
how="if the change is deliberate, run 'make update-abi-symbols' in the build directory, commit abi/libadnn.symbols, and follow doc/versioning.md (a new symbol goes into a new version node; a removed or changed one needs a SONAME bump)"
test ! -s "$tmp/added"
ok $? "no exported symbol is missing from abi/libadnn.symbols"
if [ -s "$tmp/added" ]; then
  sed 's/^/#   exported but not listed: /' "$tmp/added"
  echo "# $how"
fi
test ! -s "$tmp/removed"
ok $? "every symbol in abi/libadnn.symbols is still exported"
if [ -s "$tmp/removed" ]; then
  sed 's/^/#   listed but no longer exported: /' "$tmp/removed"
  echo "# $how"
fi

bad=$(grep -v '^adnn_[a-z0-9_]*@@ADNN_[0-9][0-9]*\.[0-9][0-9]*$' "$tmp/exported" | head -n 5)
test -z "$bad"
ok $? "every export is named adnn_* and has a default version (name@@ADNN_x.y)${bad:+: $bad}"
bad=$(grep -v '@@ADNN_1\.[01]$' "$tmp/exported" | head -n 5)
test -z "$bad"
ok $? "every export is versioned ADNN_1.0 or ADNN_1.1 (the nodes so far)${bad:+: $bad}"
bad=$(grep -v '^ADNN_[0-9][0-9]*\.[0-9][0-9]*$' "$tmp/nodes" | head -n 5)
test -z "$bad"
ok $? "the only absolute symbols are version nodes${bad:+: $bad}"

# The public headers and the export list agree: every ADNN_API declaration is
# exported and every export is declared (nothing internal leaks).
cat "$srcdir/include/adnn.h" "$srcdir"/include/adnn/*.h 2>/dev/null \
  | grep -o 'ADNN_API[^(;]*(' | sed 's/($//; s/.*[ *]//' | grep '^adnn_' | sort -u >"$tmp/declared"
sed 's/@.*//' "$tmp/exported" | sort -u >"$tmp/names"
undeclared=$(comm -13 "$tmp/declared" "$tmp/names" | tr '\n' ' ')
unexported=$(comm -23 "$tmp/declared" "$tmp/names" | tr '\n' ' ')
test -z "$unexported"
ok $? "every ADNN_API function of the public headers is exported${unexported:+; not exported: $unexported}"
test -z "$undeclared"
ok $? "every export is declared ADNN_API in a public header${undeclared:+; undeclared: $undeclared}"

# Plugins export exactly adnn_plugin_entry.
check_plugin() {
  nm -D --defined-only "$1" | awk '{ print $NF }' >"$tmp/plugin"
  printf 'adnn_plugin_entry\n' | cmp -s - "$tmp/plugin"
  rc=$?
  ok $rc "$2 exports exactly one symbol, adnn_plugin_entry"
  [ $rc -eq 0 ] || sed 's/^/#   exports: /' "$tmp/plugin" | head -n 10
}
cpu=$builddir/backends/cpu/.libs/adnn-cpu.so
if [ -f "$cpu" ]; then check_plugin "$cpu" "adnn-cpu.so"; else ok 1 "adnn-cpu.so was built ($cpu)"; fi
cuda=$builddir/backends/cuda/.libs/adnn-cuda.so
if [ -f "$cuda" ]; then
  check_plugin "$cuda" "adnn-cuda.so"
else
  n=$((n + 1)); echo "ok $n - adnn-cuda.so exports exactly adnn_plugin_entry # SKIP the CUDA plugin is not built"
fi

echo "1..$n"
[ $failed -eq 0 ]
