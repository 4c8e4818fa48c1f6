#!/bin/sh
# ADNN_VERBOSE on t/verbose-run (one conv2d plan executed three times, two
# GEMMs, on the cpu backend): unset or 0 prints nothing; 1 prints the header
# and one "create" line; 2 adds one "exec" line per execution and per GEMM.
# Every line has the 10 fields of the header, a time that is a number, and
# its problem field is accepted by adnn-bench and describes the problem the
# program ran. Writes TAP by hand.
set -u
n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

build=${ADNN_TEST_BUILDDIR:-.}
run=$build/t/verbose-run
bench=$build/tools/adnn-bench
if [ ! -x "$run" ] || [ ! -x "$bench" ]; then
  echo "1..0 # SKIP t/verbose-run or tools/adnn-bench is not built"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adnn-verbose-XXXXXX") || { echo "Bail out! mktemp failed"; exit 1; }
trap 'rm -rf "$tmp"' EXIT INT TERM
ADNN_CACHE_DIR=${ADNN_CACHE_DIR:-$tmp/cache}
export ADNN_CACHE_DIR

header='adnn_verbose,event,op,problem,dtype,layout,backend,algorithm,reason,ms'
conv='mb2ic3ih9iw7oc4oh5ow3kh3kw3sh2sw2ph1pw1dh0dw1'

# ---- off ------------------------------------------------------------------
for v in unset 0; do
  if [ $v = unset ]; then (unset ADNN_VERBOSE; "$run") >"$tmp/out" 2>"$tmp/err"; rc=$?
  else ADNN_VERBOSE=$v "$run" >"$tmp/out" 2>"$tmp/err"; rc=$?; fi
  [ $rc = 0 ] && [ ! -s "$tmp/err" ]
  ok $? "ADNN_VERBOSE $v: the program succeeds and prints nothing on stderr"
  [ $rc = 0 ] && [ ! -s "$tmp/err" ] || diag "exit $rc" "$(cat "$tmp/out" "$tmp/err")"
done

# ---- 1 and 2 --------------------------------------------------------------
# fields FILE: every line but the header has 10 fields (quoted fields, which
# may hold commas, count as one) and a numeric last field.
fields() {
  sed 1d "$1" | sed 's/"[^"]*"/Q/g' | awk -F, 'NF != 10 || $10 !~ /^[0-9]+\.[0-9]+$/ { bad = 1; print "# bad line: " $0 } END { exit bad }'
}
for v in 1 2; do
  ADNN_VERBOSE=$v "$run" >"$tmp/out" 2>"$tmp/err$v"
  rc=$?
  ok $rc "ADNN_VERBOSE=$v: the program succeeds"
  [ "$(sed -n 1p "$tmp/err$v")" = "$header" ]
  ok $? "ADNN_VERBOSE=$v: the first line is the header"
  [ "$(grep -c '' "$tmp/err$v")" = "$([ $v = 1 ] && echo 2 || echo 7)" ]
  ok $? "ADNN_VERBOSE=$v: $([ $v = 1 ] && echo 2 || echo 7) lines in all"
  c=$(grep -c '^adnn_verbose,create,conv2d,' "$tmp/err$v")
  [ "$c" = 1 ]
  ok $? "ADNN_VERBOSE=$v: one create line for the conv2d plan (got $c)"
  e=$(grep -c '^adnn_verbose,exec,conv2d,' "$tmp/err$v")
  g=$(grep -c '^adnn_verbose,exec,gemm,' "$tmp/err$v")
  if [ $v = 1 ]; then [ "$e" = 0 ] && [ "$g" = 0 ]; else [ "$e" = 3 ] && [ "$g" = 2 ]; fi
  ok $? "ADNN_VERBOSE=$v: $e conv2d and $g gemm exec lines"
  fields "$tmp/err$v"
  ok $? "ADNN_VERBOSE=$v: every line has 10 fields and a time in ms"
  grep -v '^adnn_verbose,' "$tmp/err$v" >/dev/null
  [ $? = 1 ]
  ok $? "ADNN_VERBOSE=$v: every line starts with adnn_verbose,"
  [ $failed = 0 ] || diag "$(cat "$tmp/err$v")"
done

line=$(grep '^adnn_verbose,create,conv2d,' "$tmp/err2")
[ "$(echo "$line" | cut -d, -f4-7)" = "$conv,f32,nchw,cpu" ]
ok $? "the create line names the problem, dtype, layout and backend"
reason=$(echo "$line" | sed 's/"[^"]*"/Q/g' | cut -d, -f9)
[ -n "$reason" ]
ok $? "the create line has a reason ($reason)"

# ---- the problem strings are adnn-bench's ---------------------------------
canon() { "$bench" --backend=cpu --mode=corr --csv "$1" 2>"$tmp/berr" | sed -n 2p | cut -d, -f2; }
printed=$(echo "$line" | cut -d, -f4)
got=$(canon "$printed")
want=$(canon 'mb2ic3ih9iw7oc4kh3sh2ph1dh0dw1')
[ -n "$got" ] && [ "$got" = "$want" ]
ok $? "adnn-bench accepts the conv2d problem '$printed' as the program's conv ('$got' = '$want')"
[ -n "$got" ] || diag "$(cat "$tmp/berr")"
i=0
for want in gemm:m5n6k7 gemm:m5n6k7:ta; do
  i=$((i + 1))
  printed=$(grep '^adnn_verbose,exec,gemm,' "$tmp/err2" | sed -n ${i}p | cut -d, -f4)
  got=$(canon "$printed")
  [ "$printed" = "$want" ] && [ "$got" = "$want" ]
  ok $? "GEMM $i: the problem '$printed' is adnn-bench's '$want' (canonical '$got')"
done

# adnn-bench itself, verbose, prints the same problem for its plan.
ADNN_VERBOSE=1 "$bench" --backend=cpu --mode=corr "$conv" >/dev/null 2>"$tmp/bench"
grep -q "^adnn_verbose,create,conv2d,$conv,f32,nchw,cpu," "$tmp/bench"
ok $? "adnn-bench run on the printed problem prints the same create line fields"
[ $failed = 0 ] || diag "$(cat "$tmp/bench")"

echo "1..$n"
exit $failed
