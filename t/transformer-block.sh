#!/bin/sh
# examples/transformer-block on the CPU plugin at small sizes (BERT-base
# widths, a few tokens): the unfused composition matches plain double loops,
# and, once adnn_matmul and adnn_attention exist, the fused layer matches both,
# with and without key lengths (padding). Also its command line: usage on
# --help, exit 2 on a bad argument. Writes TAP by hand.
n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

build=${ADNN_TEST_BUILDDIR:-.}
prog=$build/examples/transformer-block
if [ ! -x "$prog" ]; then
  echo "1..0 # SKIP examples/transformer-block is not built"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adnn-transformer-block-XXXXXX") || { echo "Bail out! mktemp failed"; exit 1; }
trap 'rm -rf "$tmp"' EXIT

"$prog" --help >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 0 ] && grep -q '^usage: transformer-block' "$tmp/out" && [ ! -s "$tmp/err" ]
ok $? "--help prints the usage on stdout and exits 0 (got $rc)"

for args in "--bogus" "--batch 0 --seq 8" "--batch 2" "--seq 8" "--runs x" "--batch 2 --seq" \
    "--backend"; do
  # shellcheck disable=SC2086 # word splitting of $args is the point
  "$prog" $args >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc = 2 ] && grep -q '^usage: transformer-block' "$tmp/err" && ! grep -q 'ms per layer' "$tmp/out"
  ok $? "'$args': usage on stderr, exit 2 (got $rc)"
done

# Small shapes: sequence 0 is also computed with plain double loops (the
# program does it for sequences up to 64 tokens).
for args in "--batch 1 --seq 24" "--batch 3 --seq 16 --key-lengths" "--batch 1 --seq 5"; do
  # shellcheck disable=SC2086
  "$prog" --backend cpu --runs 1 $args >"$tmp/out" 2>"$tmp/err"
  rc=$?
  ok $rc "$args: exits 0 (got $rc)"
  [ $rc = 0 ] || diag "$(cat "$tmp/out" "$tmp/err")"
  grep -q 'check: max |unfused - double reference| = .*: ok$' "$tmp/out"
  ok $? "$args: the unfused composition matches the double reference"
  if grep -q 'fused path unavailable' "$tmp/out"; then
    why=$(sed -n 's/.*fused path unavailable on this backend (\(.*\)): .*/\1/p' "$tmp/out")
    skip "$args: the fused layer matches the unfused one" "$why"
    skip "$args: the fused layer matches the double reference" "$why"
  else
    grep -q 'check: max |fused - unfused| = .*: ok$' "$tmp/out"
    ok $? "$args: the fused layer matches the unfused one"
    grep -q 'check: max |fused - double reference| = .*: ok$' "$tmp/out"
    ok $? "$args: the fused layer matches the double reference"
    grep -q 'fused: .* ms per layer' "$tmp/out"
    ok $? "$args: the fused time is printed"
  fi
  diag "$(cat "$tmp/out")"
done

echo "1..$n"
exit $failed
