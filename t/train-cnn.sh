#!/bin/sh
# examples/train-cnn on the CPU plugin: it trains to at least 95 % test
# accuracy on the fixed split, the loss falls, and a second run prints the
# same loss curve, the same per-epoch accuracies and the same parameter hash
# (bitwise-identical training; both runs share the test's performance
# database, so they make the same algorithm choices). Also its command line:
# usage on --help, exit 2 on a bad argument, exit 1 with a message for a
# missing data file. Writes TAP by hand.
n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

build=${ADNN_TEST_BUILDDIR:-.}
prog=$build/examples/train-cnn
if [ ! -x "$prog" ]; then
  echo "1..0 # SKIP examples/train-cnn is not built"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adnn-train-cnn-XXXXXX") || { echo "Bail out! mktemp failed"; exit 1; }
trap 'rm -rf "$tmp"' EXIT

for run in 1 2; do
  "$prog" cpu >"$tmp/out$run" 2>"$tmp/err$run"
  rc=$?
  ok $rc "train-cnn cpu, run $run, exits 0 (got $rc)"
  [ $rc = 0 ] || diag "$(cat "$tmp/out$run" "$tmp/err$run")"
done
diag "$(cat "$tmp/out1")"

# The final accuracy, from "test accuracy: 97.50% (351 of 360)".
acc=$(sed -n 's/^test accuracy: \([0-9.]*\)% .*/\1/p' "$tmp/out1")
[ -n "$acc" ] && awk -v a="$acc" 'BEGIN { exit !(a >= 95.0) }'
ok $? "test accuracy ${acc:-?}% >= 95%"

# The loss of the last epoch is below half that of the first.
epochs=$(grep -c '^epoch ' "$tmp/out1")
first=$(awk '/^epoch / { print $4; exit }' "$tmp/out1")
last=$(awk '/^epoch / { v = $4 } END { print v }' "$tmp/out1")
[ "$epochs" -ge 2 ] && awk -v f="$first" -v l="$last" 'BEGIN { exit !(l < 0.5 * f) }'
ok $? "the loss falls: epoch 1 ${first:-?}, epoch $epochs ${last:-?}"

# Determinism: the loss curve and the parameter hash, bit for bit.
grep -E '^(epoch |parameters: )' "$tmp/out1" >"$tmp/curve1"
grep -E '^(epoch |parameters: )' "$tmp/out2" >"$tmp/curve2"
[ -s "$tmp/curve1" ] && grep -q '^parameters: fnv1a [0-9a-f]\{16\}$' "$tmp/curve1" &&
  cmp -s "$tmp/curve1" "$tmp/curve2"
rc=$?
ok $rc "two runs print identical loss curves and parameter hashes"
[ $rc = 0 ] || diag "$(diff "$tmp/curve1" "$tmp/curve2")"

grep -q '^time: [0-9.]* ms per training step' "$tmp/out1"
ok $? "train-cnn prints the time per training step"

"$prog" --help >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 0 ] && grep -q '^usage: train-cnn' "$tmp/out" && [ ! -s "$tmp/err" ]
ok $? "train-cnn --help prints the usage on stdout and exits 0 (got $rc)"
for args in "--bogus" "--epochs 0" "--epochs x" "--min-accuracy 101" "--min-accuracy x" "cpu extra"; do
  # shellcheck disable=SC2086 # word splitting of $args is the point
  "$prog" $args >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc = 2 ] && grep -q '^usage: train-cnn' "$tmp/err" && [ ! -s "$tmp/out" ]
  ok $? "train-cnn $args: usage on stderr, exit 2 (got $rc)"
done
"$prog" --data "$tmp/missing.txt" cpu >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -q 'cannot open .*missing.txt' "$tmp/err"
ok $? "train-cnn --data MISSING: exit 1 with a message (got $rc)"
# --min-accuracy is what decides the exit status: above what one epoch reaches, exit 1.
"$prog" --epochs 1 --min-accuracy 100 cpu >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -q 'test accuracy .* is below 100%' "$tmp/err"
ok $? "train-cnn --epochs 1 --min-accuracy 100: exit 1 saying so (got $rc)"
printf '# x\n2\n3 0000\n' >"$tmp/bad.txt"
"$prog" --data "$tmp/bad.txt" cpu >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -q 'bad.txt:3: not an image line' "$tmp/err"
ok $? "train-cnn --data with a short image line: exit 1 naming the line (got $rc)"

echo "1..$n"
exit $failed
