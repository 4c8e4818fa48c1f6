#!/bin/sh
# Staged install: "make install DESTDIR=<tmp>", then build a program with only
# "pkg-config --cflags --libs adnn" against the stage and run it with the staged
# plugin directory; then remove the CUDA plugin file and check that the core
# and the CPU plugin still work. TAP output.
set -u
builddir=${ADNN_TEST_BUILDDIR:?run through make check}
srcdir=${ADNN_TEST_SRCDIR:?run through make check}
make_cmd=${ADNN_TEST_MAKE:-make}
cc=${ADNN_TEST_CC:-cc}
# Under ./configure --enable-sanitizers the staged libadnn is instrumented: the
# program must be built with the same sanitizer flags, so that the ASan
# runtime is loaded first (as a user of an instrumented build would do).
sanitizer_cflags=${ADNN_TEST_SANITIZER_CFLAGS:-}
libdir=${ADNN_TEST_LIBDIR:?}
pkglibdir=${ADNN_TEST_PKGLIBDIR:?}
bindir=${ADNN_TEST_BINDIR:?}

n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }

if ! command -v pkg-config >/dev/null 2>&1; then
  echo "1..0 # SKIP pkg-config is not installed"
  exit 0
fi

stage=$(mktemp -d "${TMPDIR:-/tmp}/adnn-stage.XXXXXX") || exit 1
trap 'rm -rf "$stage"' EXIT INT TERM

# Install without the parent make's job server or variables leaking in.
( cd "$builddir" && env -u MAKEFLAGS -u MFLAGS $make_cmd install DESTDIR="$stage/root" ) >"$stage/install.log" 2>&1
rc=$?
ok $rc "make install DESTDIR=<stage>"
[ $rc -eq 0 ] || sed 's/^/# /' "$stage/install.log" | tail -n 20

root=$stage/root
test -f "$root$libdir/libadnn.so.1"; ok $? "libadnn.so.1 is in \$(libdir)"
test -f "$root$pkglibdir/adnn-cpu.so"; ok $? "adnn-cpu.so is in \$(pkglibdir)"
test -f "$root$bindir/adnn-info"; ok $? "adnn-info is in \$(bindir)"
# The example programs the man pages cite (doc/examples/NAME.c) are installed
# in $(docdir)/examples, every one of them.
docdir=${ADNN_TEST_DOCDIR:?}
missing=""
for src in "$srcdir"/doc/examples/*.c; do
  test -f "$root$docdir/examples/${src##*/}" || missing="$missing ${src##*/}"
done
test -z "$missing"; ok $? "every doc/examples/*.c is installed in \$(docdir)/examples${missing:+; missing:$missing}"
# Nothing outside the prefix: every installed path lies under the stage's prefix.
prefix_dir=${ADNN_TEST_PREFIX:?}
outside=$(cd "$root" && find . -type f | sed 's|^\.||' | grep -v "^$prefix_dir/" | head -n 5)
test -z "$outside"; ok $? "nothing installed outside the prefix ($prefix_dir)${outside:+: $outside}"

pcdir="$root$libdir/pkgconfig"
cflags=$(PKG_CONFIG_PATH="$pcdir" PKG_CONFIG_SYSROOT_DIR="$root" pkg-config --cflags adnn)
ok $? "pkg-config --cflags adnn"
libs=$(PKG_CONFIG_PATH="$pcdir" PKG_CONFIG_SYSROOT_DIR="$root" pkg-config --libs adnn)
ok $? "pkg-config --libs adnn"
# shellcheck disable=SC2086
$cc $sanitizer_cflags $cflags -o "$stage/gemm-demo" "$srcdir/examples/gemm-demo.c" $libs >"$stage/cc.log" 2>&1
rc=$?
ok $rc "a program builds with only pkg-config flags ($cflags $libs)${sanitizer_cflags:+ and the sanitizer flags}"
[ $rc -eq 0 ] || sed 's/^/# /' "$stage/cc.log"

run_demo() {
  env LD_LIBRARY_PATH="$root$libdir" ADNN_PLUGIN_PATH="$root$pkglibdir" ADNN_BACKEND=cpu \
    "$stage/gemm-demo" 64 >"$stage/run.log" 2>&1
}
run_demo
rc=$?
ok $rc "the staged program runs a GEMM on the staged CPU plugin"
grep -q "backend cpu" "$stage/run.log"; ok $? "it reports the cpu backend"
sed 's/^/# /' "$stage/run.log"

# The CUDA plugin is an optional package: removing it must change nothing for
# the CPU path.
rm -f "$root$pkglibdir/adnn-cuda.so" "$root$pkglibdir/adnn-cuda.la"
run_demo
ok $? "without the CUDA plugin file the staged program still runs on cpu"
env LD_LIBRARY_PATH="$root$libdir" ADNN_PLUGIN_PATH="$root$pkglibdir" "$root$bindir/adnn-info" >"$stage/info.log" 2>&1
ok $? "adnn-info exits 0 without the CUDA plugin"
grep -q "auto -> cpu" "$stage/info.log"; ok $? "auto chooses cpu without the CUDA plugin"

( cd "$builddir" && env -u MAKEFLAGS -u MFLAGS $make_cmd uninstall DESTDIR="$stage/root" ) >"$stage/uninstall.log" 2>&1
ok $? "make uninstall DESTDIR=<stage>"
left=$(cd "$root" && find . -type f | head -n 5)
test -z "$left"; ok $? "uninstall leaves no files${left:+: $left}"

echo "1..$n"
[ $failed -eq 0 ]
