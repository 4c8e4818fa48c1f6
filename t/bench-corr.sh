#!/bin/sh
# adnn-bench: --mode=corr over the shipped problem sets (bench/inputs/) on every
# ready backend (ResNet-50 and MobileNet-v1 at minibatch 1, the BERT GEMMs, the
# smoke set in F32 and F64, NCHW and NHWC), the exit status of each run; the
# descriptor parser (canonical forms, benchdnn's deductions) and its errors
# (exit status 2 with a message naming the bad token); --json and --csv output.
# Writes TAP by hand. The tuning cache is the temporary ADNN_CACHE_DIR of
# "make check".
set -u
n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

build=${ADNN_TEST_BUILDDIR:-.}
srcdir=${ADNN_TEST_SRCDIR:-.}
tool=$build/tools/adnn-bench
inputs=$srcdir/bench/inputs
if [ ! -x "$tool" ]; then
  echo "1..0 # SKIP $tool is not built"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adnn-bench-XXXXXX") || { echo "Bail out! mktemp failed"; exit 1; }
trap 'rm -rf "$tmp"' EXIT INT TERM
ADNN_CACHE_DIR=${ADNN_CACHE_DIR:-$tmp/cache}
ADNN_LOG=error
export ADNN_CACHE_DIR ADNN_LOG

# ---- parser: canonical forms and benchdnn's deductions ---------------------
# expect DESCRIPTOR CANONICAL: the problem line of a corr run names the
# canonical form (values deduced, defaults dropped).
expect() {
  "$tool" --backend=cpu --mode=corr --csv "$1" >"$tmp/p" 2>"$tmp/perr"
  rc=$?
  got=$(sed -n 2p "$tmp/p" | cut -d, -f2)
  [ $rc = 0 ] && [ "$got" = "$2" ]
  ok $? "parses '$1' as '$2'"
  [ "$got" = "$2" ] && [ $rc = 0 ] || diag "exit $rc, got '$got'" "$(cat "$tmp/perr")"
}
expect mb8ic64ih56oc64kh3ph1 mb8ic64ih56oc64oh56kh3ph1
expect ic3ih9oc4kh3 mb2ic3ih9oc4oh7kh3                        # mb 2 by default, as benchdnn
expect g32mb1ic32ih112oc32kh3ph1sh1_nmobilenet:dw1 g32mb1ic32ih112oc32oh112kh3ph1_nmobilenet:dw1
expect 'mb1_ic3ih224_oc64oh112_kh7sh2ph3_n"resnet:conv1"' mb1ic3ih224oc64oh112kh7sh2ph3_nresnet:conv1
expect mb1ic4ih56oc8oh56kh3 mb1ic4ih56oc8oh56kh3ph1            # ph deduced from oh
expect mb1ic4ih224oc8oh112kh7sh2 mb1ic4ih224oc8oh112kh7sh2ph2  # ph 2, end padding 3 (implied)
expect mb1ic4ih9oc4kh3dh1 mb1ic4ih9oc4oh5kh3dh1                # benchdnn dilation: 0 = none
expect mb1ic4ih9iw7oc4kh3kw1sh2sw1 mb1ic4ih9iw7oc4oh4ow7kh3kw1sh2sw1
expect conv:mb1ic2iw5oc2kw3 mb1ic2ih5oc2oh3kh3
expect pool:max:mb1ic3ih12kh3sh2:ceil pool:max:mb1ic3ih12kh3sh2:ceil
expect act:leaky_relu:a0.2:7x9 act:leaky_relu:a0.2:7x9
expect softmax:4x9 softmax:axis-1:4x9
expect lnorm:4x8:nobias lnorm:4x8:nobias
expect binary:sub:2x1x5+3x1 binary:sub:2x1x5+3x1
expect gemm:m7n5k3:tb_nx gemm:m7n5k3:tb_nx
# benchdnn's directions: one prefix form for every op (the normalizations'
# older trailing field read as an alias), conv's beta
expect dir=BWD_W:mb1ic4ih5oc4kh3:beta1 dir=BWD_W:mb1ic4ih5oc4oh3kh3:beta1
expect --dir=BWD_D:pool:max:mb1ic3ih6kh2sh2 dir=BWD_D:pool:max:mb1ic3ih6kh2sh2
expect lnorm:4x8:dir=BWD_DW dir=BWD_DW:lnorm:4x8
expect dir=BWD_D:attention:b2h4hkv2sq9skv20d8:causal:bias9x20:kl dir=BWD_D:attention:b2h4hkv2sq9skv20d8dv8:causal:bias9x20:kl  # attention backward (corr: dq, dk, dv)
expect bnorm:mb2ic4ih3:dir=FWD_D:mom0.5 dir=FWD_D:bnorm:mb2ic4ih3:mom0.5
expect dir=FWD_I:bnorm:mb2ic4 bnorm:mb2ic4
expect dir=FWD_I:act:relu:5 act:relu:5

# --dir: the problems after it that name no direction, where their op has it
"$tool" --backend=cpu --mode=corr --csv --dir=BWD_D mb1ic4ih5oc4kh3 dir=FWD_D:mb1ic4ih5oc4kh3 \
  act:relu:4 gemm:m2n2k2 lnorm:4x8 --dir=BWD_DW lnorm:4x8 bnorm:mb2ic4 >"$tmp/p" 2>"$tmp/perr"
rc=$?
got=$(sed 1d "$tmp/p" | cut -d, -f2 | tr '\n' ' ')
want="dir=BWD_D:mb1ic4ih5oc4oh3kh3 mb1ic4ih5oc4oh3kh3 dir=BWD_D:act:relu:4 gemm:m2n2k2 lnorm:4x8 \
dir=BWD_DW:lnorm:4x8 dir=BWD_DW:bnorm:mb2ic4 "
[ $rc = 0 ] && [ "$got" = "$want" ]
ok $? "--dir applies to the following problems whose op has the direction and that name none"
[ $rc = 0 ] && [ "$got" = "$want" ] || diag "exit $rc, got '$got'" "$(cat "$tmp/perr")"

# ---- parse and usage errors: exit 2, the bad token named -------------------
bad() {
  "$tool" --backend=cpu --mode=corr "$1" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc = 2 ] && grep -q -- "$2" "$tmp/err"
  ok $? "'$1' is rejected with exit 2 naming '$2'"
  [ $rc = 2 ] && grep -q -- "$2" "$tmp/err" || diag "exit $rc" "$(cat "$tmp/err")"
}
bad mb8ic64ih56oc64kh3zz2 "zz2"
bad mb8ic64ih56kh3 "lacks oc"
bad mb1ic4ih5oc4oh9kh3ph0 "oh9"
bad g3mb1ic4ih5oc4kh3 "g3"
bad mb1id4ic4ih5oc4kh3 "id4"
bad foo:bar "foo"
bad pool:mean:mb1ic3ih5kh2 "mean"
bad act:relu:3xx4 "3xx4"
bad binary:add:3x4+5 "3x4+5"
bad gemm:m4n4 "m4n4"
bad dir=BWD_W:pool:max:mb1ic3ih5kh2 "pool has no BWD_W direction (pool takes FWD_D, FWD_I or BWD_D)"
bad dir=BWD_D:lnorm:4x8 "lnorm takes FWD_D or BWD_DW"
bad dir=BWD_D:gemm:m2n2k2 "gemm takes FWD_D only"
bad dir=BWD_Q:act:relu:3 "the direction is FWD_D, FWD_I, BWD_D, BWD_W, BWD_WB or BWD_DW"
bad mb1ic4ih5oc4kh3:beta1 "beta1': beta (accumulation into the output) needs a backward direction"
bad --dir=BWD "BWD': --dir is FWD_D"
bad --mode=fast "fast"
bad --tune=sometimes "sometimes"
bad --alg=magic "magic"
bad --nonsense "nonsense"
"$tool" --backend=cpu --mode=corr --dir=FWD_D bnorm:mb2ic4:relu >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 2 ] && grep -q "dir=FWD_D takes no fused activation.*(in the direction of --dir=FWD_D)" "$tmp/err"
ok $? "a problem that cannot take --dir's direction is rejected with exit 2, naming --dir"
[ $rc = 2 ] || diag "exit $rc" "$(cat "$tmp/err")"
printf 'mb1ic4ih5oc4kh3\n# a comment\n\nmb1ic4ih5oc4kh3q7\n' >"$tmp/badbatch"
"$tool" --mode=corr --batch="$tmp/badbatch" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 2 ] && grep -q "badbatch:4:.*q7" "$tmp/err"
ok $? "a bad line of a --batch file: exit 2, FILE:LINE and the token, nothing run"
[ -s "$tmp/out" ] && diag "ran something: $(cat "$tmp/out")"

# ---- corr over the shipped sets on every ready backend ---------------------
backends=$(ADNN_BACKEND= "$build/tools/adnn-info" --json 2>/dev/null |
  python3 -c 'import json,sys; print(" ".join(p["name"] for p in json.load(sys.stdin)["plugins"] if p["state"] == "ready"))' 2>/dev/null)
[ -n "$backends" ] || backends=cpu
diag "ready backends: $backends"
for b in $backends; do
  for set in smoke resnet50 mobilenet_v1 bert_gemm; do
    "$tool" --backend="$b" --mode=corr --mb=1 --csv --batch="$inputs/$set" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    rows=$(($(wc -l <"$tmp/out") - 1))
    want=$(sed -e 's/#.*//' -e '/^[ \t]*$/d' "$inputs/$set" | wc -l)
    nok=$(cut -d, -f6 "$tmp/out" | grep -c '^ok$')
    [ $rc = 0 ] && [ "$rows" = "$want" ] && [ "$nok" = "$want" ]
    ok $? "$b: --mode=corr --mb=1 --batch=$set: $nok/$want ok, exit $rc"
    [ $rc = 0 ] || diag "$(grep -v ',ok,' "$tmp/out" | head -5)" "$(head -5 "$tmp/err")"
  done
  for opt in "--dtype=f64" "--layout=nhwc" "--layout=nhwc --dtype=f64"; do
    "$tool" --backend="$b" --mode=corr $opt --csv --batch="$inputs/smoke" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    # a backend may not support F64 for some op: exit 3 and status "unsupported" (a gap, not a failure)
    bad_rows=$(cut -d, -f6 "$tmp/out" | sed 1d | grep -v -c -e '^ok$' -e '^unsupported$')
    { [ $rc = 0 ] || [ $rc = 3 ]; } && [ "$bad_rows" = 0 ]
    ok $? "$b: --mode=corr $opt --batch=smoke (exit $rc)"
    [ "$bad_rows" = 0 ] || diag "$(grep -v -e ',ok,' -e ',unsupported,' "$tmp/out" | head -5)"
  done
  "$tool" --backend="$b" --mode=corr --alg=im2col_gemm mb1ic8ih10oc8kh3ph1 g8mb1ic8ih9oc8kh3 >"$tmp/out" 2>&1
  rc=$?
  [ $rc = 3 ] && grep -q '^.* unsupported .*g8mb1ic8ih9oc8oh7kh3' "$tmp/out" && grep -q 'repro: adnn-bench.*--alg=im2col_gemm' "$tmp/out" ||
    { [ $rc = 0 ] && grep -q 'im2col_gemm' "$tmp/out"; }
  ok $? "$b: --alg forces an algorithm (exit 0, or 3 with the problem reported as unsupported)"
  [ $rc = 0 ] || [ $rc = 3 ] || diag "$(cat "$tmp/out")"
done

# ---- perf mode, output formats ---------------------------------------------
"$tool" --backend=cpu --mode=perf --runs=2 --batch="$inputs/smoke" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 0 ] && [ "$(grep -c 'repro: adnn-bench --backend=cpu --mode=perf' "$tmp/out")" -ge 20 ] &&
  grep -q 'median .* ms (min .*, max .*, 2 runs)' "$tmp/out" && grep -q 'GFLOP/s' "$tmp/out" &&
  grep -q 'GB/s' "$tmp/out" && grep -q 'algorithm ' "$tmp/out"
ok $? "--mode=perf: median, min, max, GFLOP/s or GB/s, algorithm and a repro line per problem"
[ $rc = 0 ] || diag "$(head -20 "$tmp/out" "$tmp/err")"

"$tool" --backend=cpu --mode=perf --runs=2 --json --batch="$inputs/smoke" >"$tmp/json" 2>"$tmp/err"
rc=$?
ok $rc "--json exits 0"
if command -v python3 >/dev/null 2>&1; then
  python3 - "$tmp/json" "$inputs/smoke" >"$tmp/check" 2>&1 <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
want = [l.split("#")[0].strip() for l in open(sys.argv[2])]
want = [w for w in want if w]
assert isinstance(rows, list) and len(rows) == len(want), (len(rows), len(want))
for r in rows:
    for k in ("backend", "problem", "status", "algorithm", "choice_reason", "median_ms",
              "min_ms", "max_ms", "gflops", "gbs", "repro"):
        assert k in r, k
    assert r["status"] == "ok", r
    assert r["min_ms"] <= r["median_ms"] <= r["max_ms"], r
    assert r["repro"].startswith("adnn-bench --backend=cpu --mode=perf"), r["repro"]
print("ok", len(rows))
PY
  rc=$?
  ok $rc "--json is a valid JSON array with a complete object per problem"
  [ $rc = 0 ] || diag "$(cat "$tmp/check")"
else
  skip "python3 is not installed: JSON not validated"
fi

"$tool" --backend=cpu --mode=corr --csv mb1ic4ih5oc4kh3 'act:relu:5' >"$tmp/csv" 2>&1
rc=$?
[ $rc = 0 ] && [ "$(wc -l <"$tmp/csv")" = 3 ] && head -1 "$tmp/csv" | grep -q '^backend,problem,mode,' &&
  [ "$(awk -F, 'NR == 1 { n = NF } NR > 1 && NF != n { bad = 1 } END { print bad + 0 }' "$tmp/csv")" = 0 ]
ok $? "--csv: a header and one row per problem with the same columns"

"$tool" --backend=nosuch mb1ic4ih5oc4kh3 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc != 0 ] && grep -q nosuch "$tmp/err"
ok $? "an unknown backend is an error that names it (exit $rc)"

"$tool" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q 'no problem' "$tmp/err"
ok $? "no problem at all: usage error"

echo "1..$n"
exit $failed
