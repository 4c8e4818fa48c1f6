#!/bin/sh
# The Python binding's pytest suite (python/tests), as TAP: one TAP result per
# pytest test, so the suite's counts include them. Runs with $ADNN_PYTHON, else
# the build tree's .venv (the README's set-up installs the package there);
# skips when neither can import adnn (a build without the Python package, such
# as make distcheck's).
py=${ADNN_PYTHON:-$ADNN_TEST_BUILDDIR/.venv/bin/python}
if ! [ -x "$py" ] || ! "$py" -c 'import adnn, numpy, pytest' 2>/dev/null; then
  echo "1..0 # SKIP the adnn Python package is not installed in $py (see doc/python.md)"
  exit 0
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/adnn-pytest-XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
cd "$ADNN_TEST_SRCDIR/python/tests" || exit 1
"$py" -m pytest -q -rA -p no:cacheprovider . >"$out/log" 2>&1
rc=$?
# -rA's summary: one "PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS id[ - reason]" line per test.
awk -v rc="$rc" '
  /^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) / {
    n++; st = $1; $1 = ""; name = substr($0, 2)
    if (st == "PASSED" || st == "XFAIL") line[n] = "ok " n " - " name
    else if (st == "SKIPPED") line[n] = "ok " n " - " name " # SKIP"
    else line[n] = "not ok " n " - " st " " name
  }
  END {
    if (n == 0) { print "1..1"; print "not ok 1 - pytest ran no test (exit " rc ")"; exit }
    print "1.." n; for (i = 1; i <= n; i++) print line[i]
    if (rc != 0 && rc != 5) print "# pytest exit status " rc
  }' "$out/log"
# The full pytest output, for the log.
sed 's/^/# /' "$out/log"
