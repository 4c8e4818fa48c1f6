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

echo "1..$n"
exit $failed
