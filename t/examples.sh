#!/bin/sh
# The programs of examples/ that "make demo" runs: gemm-demo's command line
# (usage on --help, usage and exit status 2 on any bad argument) and the notice
# that cnn-forward's network is untrained. Writes TAP by hand.
n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

build=${ADNN_TEST_BUILDDIR:-.}
gemm=$build/examples/gemm-demo
cnn=$build/examples/cnn-forward
if [ ! -x "$gemm" ] || [ ! -x "$cnn" ]; then
  echo "1..0 # SKIP the examples are not built"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adnn-examples-XXXXXX") || { echo "Bail out! mktemp failed"; exit 1; }
trap 'rm -rf "$tmp"' EXIT

for opt in --help -h; do
  "$gemm" $opt >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc = 0 ] && grep -q '^usage: gemm-demo \[N\] \[BACKEND\]' "$tmp/out" && [ ! -s "$tmp/err" ]
  ok $? "gemm-demo $opt prints the usage on stdout and exits 0 (got $rc)"
  [ $rc = 0 ] || diag "$(cat "$tmp/out" "$tmp/err")"
done

# Each bad command line: usage on stderr, exit status 2, nothing computed.
for args in "--bogus" "0" "16385" "12x" "-5" "99999999999999999999" "" "64 cpu extra"; do
  # shellcheck disable=SC2086 # word splitting of $args is the point
  if [ -z "$args" ]; then "$gemm" "" >"$tmp/out" 2>"$tmp/err"; else "$gemm" $args >"$tmp/out" 2>"$tmp/err"; fi
  rc=$?
  [ $rc = 2 ] && grep -q '^usage: gemm-demo' "$tmp/err" && ! grep -q 'GFLOP/s' "$tmp/out"
  ok $? "gemm-demo '$args': usage on stderr, exit 2 (got $rc)"
  [ $rc = 2 ] || diag "$(cat "$tmp/out" "$tmp/err")"
done

"$gemm" 48 cpu >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 0 ] && grep -q 'SGEMM 48x48x48 on backend cpu' "$tmp/out"
ok $? "gemm-demo 48 cpu runs (exit $rc)"
[ $rc = 0 ] || diag "$(cat "$tmp/out" "$tmp/err")"

"$cnn" cpu >"$tmp/cnn" 2>"$tmp/err"
rc=$?
ok $rc "cnn-forward cpu exits 0 (got $rc)"
grep -q 'pseudo-random (fixed seed, untrained network)' "$tmp/cnn"
rc=$?
ok $rc "cnn-forward says its weights are random and its classes are not predictions"
[ $rc = 0 ] || diag "$(cat "$tmp/cnn" "$tmp/err")"

echo "1..$n"
exit $failed
