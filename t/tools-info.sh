#!/bin/sh
# adnn-info: runs the built tool (through libtool's wrapper) and checks its text
# and JSON output. Writes TAP by hand.
n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

build=${ADNN_TEST_BUILDDIR:-.}
tool=$build/tools/adnn-info
if [ ! -x "$tool" ]; then
  echo "1..0 # SKIP $tool is not built"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adnn-info-XXXXXX") || { echo "Bail out! mktemp failed"; exit 1; }
trap 'rm -rf "$tmp"' EXIT

"$tool" >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $rc "adnn-info exits 0 (a backend is ready)"
[ $rc = 0 ] || { diag "exit status $rc"; diag "$(cat "$tmp/out" "$tmp/err")"; }
grep -q '^adnn [0-9]' "$tmp/out"; ok $? "prints the library version"
grep -q 'ADNN_PLUGIN_PATH' "$tmp/out"; ok $? "says the search path came from ADNN_PLUGIN_PATH"
grep -Eq '^ +cpu +ready' "$tmp/out"
rc=$?
ok $rc "lists cpu as ready"
[ $rc = 0 ] || diag "$(cat "$tmp/out")"
grep -q '^auto -> ' "$tmp/out"; ok $? "says what auto picks"

"$tool" --json >"$tmp/json" 2>"$tmp/err"
rc=$?
ok $rc "adnn-info --json exits 0"
if command -v python3 >/dev/null 2>&1; then
  python3 -c 'import json,sys; json.load(sys.stdin)' <"$tmp/json" 2>"$tmp/pyerr"
  rc=$?
  ok $rc "--json output is valid JSON"
  [ $rc = 0 ] || { diag "$(cat "$tmp/pyerr")"; diag "$(cat "$tmp/json")"; }
  python3 - "$tmp/json" >"$tmp/check" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = [p["name"] for p in d["plugins"]]
cpu = [p for p in d["plugins"] if p["name"] == "cpu"]
ready = sorted((p for p in d["plugins"] if p["state"] == "ready"), key=lambda p: -p["score"])
print("names", names)
print("cpu_ready", bool(cpu) and cpu[0]["state"] == "ready")
print("cpu_devices", bool(cpu) and len(cpu[0]["devices"]) == 1)
print("auto", d["auto"]["backend"])
print("expected_auto", ready[0]["name"] if ready else "")
print("version", d["version"])
print("source", d["plugin_path_source"])
PY
  ok $? "--json has plugins, auto, version"
  diag "$(cat "$tmp/check")"
  grep -q "^names .*'cpu'" "$tmp/check"; ok $? "plugins[].name contains cpu"
  grep -q '^cpu_ready True' "$tmp/check"; ok $? "cpu is ready in JSON"
  grep -q '^cpu_devices True' "$tmp/check"; ok $? "cpu has one device in JSON"
  auto=$(sed -n 's/^auto //p' "$tmp/check")
  expected=$(sed -n 's/^expected_auto //p' "$tmp/check")
  [ -n "$auto" ] && [ "$auto" = "$expected" ]; ok $? "auto.backend ($auto) is the best-scored ready plugin ($expected)"
  if grep -q "^names .*'cuda'" "$tmp/check" && [ "$expected" = cuda ]; then
    skip "a ready cuda plugin: auto is not cpu on this machine"
  else
    [ "$auto" = cpu ]; ok $? "auto.backend is cpu without a ready GPU"
  fi
  grep -q '^source ADNN_PLUGIN_PATH' "$tmp/check"; ok $? "plugin_path_source is ADNN_PLUGIN_PATH"
else
  skip "python3 not found: JSON not checked"
fi

# Options and errors.
"$tool" --version >"$tmp/v" 2>&1; ok $? "--version exits 0"
grep -q 'adnn' "$tmp/v"; ok $? "--version prints the version"
"$tool" --help >"$tmp/h" 2>&1; ok $? "--help exits 0"
"$tool" --no-such-option >"$tmp/x" 2>&1
rc=$?
[ $rc = 2 ]; ok $? "an unknown option exits 2 (got $rc)"

# No plugins at all: exit 1 and say so.
mkdir "$tmp/none"
ADNN_PLUGIN_PATH="$tmp/none" "$tool" >"$tmp/o2" 2>&1
rc=$?
[ $rc = 1 ]; ok $? "with an empty plugin directory adnn-info exits 1 (got $rc)"
grep -q 'auto -> none' "$tmp/o2"
rc=$?
ok $rc "and says auto has nothing"
[ $rc = 0 ] || diag "$(cat "$tmp/o2")"

# From the build tree with ADNN_PLUGIN_PATH unset, adnn-info finds this tree's
# plugins by itself (tools/uninstalled.h).
(unset ADNN_PLUGIN_PATH; "$tool" >"$tmp/bt" 2>&1)
rc=$?
ok $rc "with ADNN_PLUGIN_PATH unset, the uninstalled adnn-info exits 0 (got $rc)"
grep -Eq '^ +cpu +ready' "$tmp/bt" && grep -q "this build tree's plugins" "$tmp/bt"
rc=$?
ok $rc "and lists this build tree's cpu plugin as ready, saying where it came from"
[ $rc = 0 ] || diag "$(cat "$tmp/bt")"
# A copy of the executable outside the build tree (as an installed one is) must
# not do that: it uses the compiled-in directory.
real=$build/tools/.libs/adnn-info
[ -x "$real" ] || real=$tool
if head -c 4 "$real" | grep -q 'ELF'; then
  cp "$real" "$tmp/adnn-info-copy"
  (unset ADNN_PLUGIN_PATH; LD_LIBRARY_PATH="$build/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$tmp/adnn-info-copy" >"$tmp/copy" 2>&1)
  if grep -q '^adnn [0-9]' "$tmp/copy"; then
    ! grep -q "build tree" "$tmp/copy" && grep -q 'compiled-in; ADNN_PLUGIN_PATH unset' "$tmp/copy"
    rc=$?
    ok $rc "a copy outside the build tree searches only the compiled-in directory"
    [ $rc = 0 ] || diag "$(cat "$tmp/copy")"
  else
    skip "the copied executable did not run: $(head -n 2 "$tmp/copy")"
  fi
else
  skip "$real is not an ELF executable"
fi

# --backend=NAME: only that backend, and a context on it.
"$tool" --backend=cpu >"$tmp/b1" 2>&1
rc=$?
ok $rc "--backend=cpu exits 0 (got $rc)"
grep -Eq '^ +cpu +ready' "$tmp/b1" && ! grep -Eq '^ +cuda ' "$tmp/b1"
rc=$?
ok $rc "--backend=cpu lists cpu and no other plugin"
grep -q '^context "cpu": created on cpu, device 0' "$tmp/b1"
rc=$?
ok $rc "--backend=cpu reports the context it created"
[ $rc = 0 ] || diag "$(cat "$tmp/b1")"
"$tool" --backend nosuch >"$tmp/b2" 2>&1
rc=$?
[ $rc = 1 ]; ok $? "--backend nosuch exits 1 (got $rc)"
grep -q "no plugin named 'nosuch'" "$tmp/b2" && grep -q '^context "nosuch": cannot be created: ' "$tmp/b2"
rc=$?
ok $rc "and says there is no such plugin and no context"
[ $rc = 0 ] || diag "$(cat "$tmp/b2")"
"$tool" --backend= >"$tmp/b3" 2>&1
rc=$?
[ $rc = 2 ]; ok $? "--backend= (no name) is a usage error, exit 2 (got $rc)"

# ADNN_BACKEND naming a backend that gives no context: auto "chooses" it, but
# adnn-info must not call that a success.
ADNN_BACKEND=nosuch "$tool" >"$tmp/e1" 2>&1
rc=$?
[ $rc = 1 ]; ok $? "ADNN_BACKEND=nosuch: exit 1 (got $rc)"
grep -q '^context "auto": cannot be created: ' "$tmp/e1"
rc=$?
ok $rc "ADNN_BACKEND=nosuch: says the auto context cannot be created"
[ $rc = 0 ] || diag "$(cat "$tmp/e1")"
if grep -Eq '^ +cuda +ready' "$tmp/out"; then
  skip "cuda is ready here: ADNN_BACKEND=cuda gives a context"
else
  ADNN_BACKEND=cuda "$tool" >"$tmp/e2" 2>&1
  rc=$?
  [ $rc = 1 ] && grep -q '^context "auto": cannot be created: ' "$tmp/e2"
  ok $? "ADNN_BACKEND=cuda without a ready cuda plugin: exit 1 and says why (got $rc)"
  [ $rc = 1 ] || diag "$(cat "$tmp/e2")"
  ADNN_BACKEND=cuda "$tool" --json >"$tmp/e3" 2>&1
  rc=$?
  [ $rc = 1 ] && grep -q '"context": {"request": "auto", "created": false' "$tmp/e3"
  ok $? "and --json says created: false (exit $rc)"
fi
grep -q '"context": {"request": "auto", "created": true, "status": "SUCCESS", "backend": "' "$tmp/json"
ok $? "--json reports the auto context as created"

echo "1..$n"
exit $failed
