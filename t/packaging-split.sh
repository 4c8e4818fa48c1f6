#!/bin/sh
# The package split of doc/packaging.md against the real install tree: a
# "make install DESTDIR=<tmp>", then every installed file (and symlink) must be
# claimed by exactly one package of the split, and every pattern of the split
# that is not marked optional must match at least one installed file. The split
# is the machine-readable block after the line "<!-- package-split -->" in
# doc/packaging.md: lines "PACKAGE PATTERN [optional]", where PATTERN is a
# shell pattern over the installed path (its * also matches '/') written with
# the Makefile's directory variables, and the package "-" means "installed but
# deleted by the packager" (the .la files). TAP output.
set -u
builddir=${ADNN_TEST_BUILDDIR:?run through make check}
srcdir=${ADNN_TEST_SRCDIR:?run through make check}
make_cmd=${ADNN_TEST_MAKE:-make}

n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

doc=$srcdir/doc/packaging.md
stage=$(mktemp -d "${TMPDIR:-/tmp}/adnn-split.XXXXXX") || { echo "Bail out! mktemp failed"; exit 1; }
trap 'rm -rf "$stage"' EXIT INT TERM

# The split, with the directory variables replaced by this build's values.
sed -n '/^<!-- package-split -->$/,/^```$/p' "$doc" | sed '1,2d;$d' | grep -v '^#' | grep -v '^ *$' \
  | sed -e "s|\$(libdir)|${ADNN_TEST_LIBDIR:?}|g" -e "s|\$(pkglibdir)|${ADNN_TEST_PKGLIBDIR:?}|g" \
        -e "s|\$(bindir)|${ADNN_TEST_BINDIR:?}|g" -e "s|\$(includedir)|${ADNN_TEST_INCLUDEDIR:?}|g" \
        -e "s|\$(mandir)|${ADNN_TEST_MANDIR:?}|g" -e "s|\$(docdir)|${ADNN_TEST_DOCDIR:?}|g" \
        -e "s|\$(pkgdatadir)|${ADNN_TEST_PKGDATADIR:?}|g" >"$stage/split"
lines=$(wc -l <"$stage/split")
[ "$lines" -ge 5 ] && ! grep -q '\$(' "$stage/split"
ok $? "doc/packaging.md has a package split ($lines patterns, every directory variable known)"
[ "$lines" -ge 5 ] || diag "no block after '<!-- package-split -->' in $doc"
grep '\$(' "$stage/split" | while IFS= read -r l; do diag "unknown variable: $l"; done

( cd "$builddir" && env -u MAKEFLAGS -u MFLAGS $make_cmd install DESTDIR="$stage/root" ) >"$stage/install.log" 2>&1
rc=$?
ok $rc "make install DESTDIR=<stage>"
[ $rc -eq 0 ] || tail -n 20 "$stage/install.log" | sed 's/^/# /'
(cd "$stage/root" && find . \( -type f -o -type l \) | sed 's|^\.||' | LC_ALL=C sort) >"$stage/files"
count=$(wc -l <"$stage/files")
[ "$count" -gt 0 ]; ok $? "the install tree has files ($count)"

# Every file: exactly one package.
unclaimed=0 twice=0
: >"$stage/matched"
while IFS= read -r file; do
  packages=""
  while read -r package pattern flag; do
    # shellcheck disable=SC2254 # the pattern is meant to glob
    case $file in
      $pattern)
        echo "$pattern" >>"$stage/matched"
        case " $packages " in *" $package "*) ;; *) packages="$packages $package" ;; esac ;;
    esac
  done <"$stage/split"
  set -- $packages
  if [ $# -eq 0 ]; then unclaimed=$((unclaimed + 1)); diag "no package claims $file"; fi
  if [ $# -gt 1 ]; then twice=$((twice + 1)); diag "$file is claimed by several packages:$packages"; fi
done <"$stage/files"
[ $unclaimed -eq 0 ]; ok $? "every installed file belongs to a package of the split ($unclaimed do not)"
[ $twice -eq 0 ]; ok $? "no installed file belongs to two packages ($twice do)"

# Every pattern not marked optional claims something, so the split names no
# file that is not installed.
unused=0
while read -r package pattern flag; do
  [ "$flag" = optional ] && continue
  if ! grep -qxF "$pattern" "$stage/matched"; then
    unused=$((unused + 1)); diag "$package: $pattern matches no installed file"
  fi
done <"$stage/split"
[ $unused -eq 0 ]; ok $? "every non-optional pattern of the split matches an installed file ($unused do not)"

# The CUDA plugin's pattern is optional only because a build without CUDA has
# no such file: where it was built, it must be claimed like the rest.
if [ -f "$builddir/backends/cuda/.libs/adnn-cuda.so" ]; then
  grep -q '/adnn-cuda\.so$' "$stage/files" && grep -q 'adnn-cuda\.so' "$stage/matched"
  ok $? "this build has the CUDA plugin, and the split claims it"
else
  n=$((n + 1)); echo "ok $n # SKIP no CUDA plugin in this build"
fi

echo "1..$n"
[ $failed -eq 0 ]
