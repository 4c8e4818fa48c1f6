#!/bin/sh
# examples/train-cnn-mpi, data-parallel over 2 MPI ranks on this machine
# (doc/distributed.md):
#   1. without batch norm, STEPS steps at global batch 32 on 2 ranks (16 images
#      each, gradients summed by MPI_Allreduce then scaled by 1/2) give the
#      parameters of one process taking the same steps over the whole global
#      batch, within |a - b| <= ABS_TOL + REL_TOL * |b| per parameter: float
#      sums in another order are the only difference (each rank reduces its
#      16 images, then the two sums are added);
#   2. the comparison can fail: one step fewer on the single process is far
#      outside that tolerance;
#   3. with batch norm (per-rank statistics), 2 ranks train to >= 95 % test
#      accuracy.
# Skips when the example was not built (configure found no MPI) or there is no
# launcher. As root, Open MPI needs OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM), set here
# for the launcher only. Writes TAP by hand.
STEPS=20
ABS_TOL=1e-6
REL_TOL=1e-5
n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

build=${ADNN_TEST_BUILDDIR:-.}
prog=$build/examples/train-cnn-mpi
mpirun=${ADNN_TEST_MPIRUN:-mpirun}
if [ ! -x "$prog" ]; then
  echo "1..0 # SKIP examples/train-cnn-mpi is not built (configure found no MPI: apt-get install libopenmpi-dev openmpi-bin)"
  exit 0
fi
if ! command -v "$mpirun" >/dev/null 2>&1; then
  echo "1..0 # SKIP no MPI launcher ($mpirun; apt-get install openmpi-bin)"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adnn-train-cnn-mpi-XXXXXX") || { echo "Bail out! mktemp failed"; exit 1; }
trap 'rm -rf "$tmp"' EXIT

# One thread per rank (the CPU plugin would otherwise start a pool per rank
# on the same cores), --oversubscribe so that 2 ranks start on any machine.
# Under --enable-sanitizers, LeakSanitizer would report what Open MPI keeps
# allocated at exit, which is not adnn's: leaks are not checked here
# (t/train-cnn.sh checks the same network code without MPI).
launch() { # launch RANKS ARGS...
  ranks=$1
  shift
  env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ADNN_NUM_THREADS=1 \
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    "$mpirun" --oversubscribe -np "$ranks" "$prog" "$@"
}

# compare A B: prints the largest difference and the largest ratio of a
# difference to its parameter's tolerance; succeeds when that ratio is <= 1
# and the files list the same parameters in the same order.
compare() {
  awk -v abs="$ABS_TOL" -v rel="$REL_TOL" '
    NR == FNR { name[FNR] = $1; value[FNR] = $2; count = FNR; next }
    {
      if (FNR > count || $1 != name[FNR]) { bad = 1; exit }
      d = value[FNR] - $2; if (d < 0) d = -d
      m = $2 < 0 ? -$2 : $2
      ratio = d / (abs + rel * m)
      if (ratio > worst) { worst = ratio; where = $1 }
      if (d > maxd) maxd = d
      seen = FNR
    }
    END {
      if (bad || seen != count || count == 0) { print "the files list different parameters"; exit 1 }
      printf "max |difference| %.3g, at most %.3g times the tolerance (%s)\n", maxd, worst, where
      exit !(worst <= 1)
    }' "$1" "$2" 2>&1
}

args="--no-batchnorm --steps $STEPS --global-batch 32"
# shellcheck disable=SC2086 # word splitting of $args is the point
launch 2 $args --dump "$tmp/two" cpu >"$tmp/out2" 2>"$tmp/err2"
rc=$?
ok $rc "2 ranks, $STEPS steps without batch norm (exit $rc)"
[ $rc = 0 ] || diag "$(cat "$tmp/out2" "$tmp/err2")"
diag "$(cat "$tmp/out2")"
# shellcheck disable=SC2086
launch 1 $args --dump "$tmp/one" cpu >"$tmp/out1" 2>"$tmp/err1"
rc=$?
ok $rc "1 rank, the same $STEPS steps over the whole global batch (exit $rc)"
[ $rc = 0 ] || diag "$(cat "$tmp/out1" "$tmp/err1")"

result=$(compare "$tmp/two" "$tmp/one")
rc=$?
ok $rc "parameters of 2 ranks match 1 process within $ABS_TOL + $REL_TOL * |p|: $result"
lines=$(cat "$tmp/one" 2>/dev/null | wc -l)
[ "$lines" -gt 5000 ]
ok $? "the dumps hold every parameter ($lines lines)"

launch 1 --no-batchnorm --steps $((STEPS - 1)) --global-batch 32 --dump "$tmp/short" cpu \
  >"$tmp/out3" 2>"$tmp/err3"
rc=$?
result=$(compare "$tmp/two" "$tmp/short")
crc=$?
[ $rc = 0 ] && [ $crc != 0 ]
ok $? "the comparison fails for a run one step shorter: $result"

launch 2 cpu >"$tmp/out4" 2>"$tmp/err4"
rc=$?
acc=$(sed -n 's/^test accuracy: \([0-9.]*\)% .*/\1/p' "$tmp/out4")
[ $rc = 0 ] && [ -n "$acc" ] && awk -v a="$acc" 'BEGIN { exit !(a >= 95.0) }'
ok $? "2 ranks with batch norm train to ${acc:-?}% >= 95% (exit $rc)"
diag "$(cat "$tmp/out4" "$tmp/err4")"

launch 2 --global-batch 33 cpu >"$tmp/out5" 2>"$tmp/err5"
rc=$?
[ $rc != 0 ] && grep -q 'global batch 33 is not a multiple of 2 ranks' "$tmp/err5"
ok $? "a global batch that 2 ranks cannot share is refused (exit $rc)"

echo "1..$n"
exit $failed
