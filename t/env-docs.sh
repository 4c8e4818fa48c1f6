#!/bin/sh
# The environment variables of core/env.h (ADNN_ENV_LIST, expanded by the C
# preprocessor) against the documentation: README.md's table (first column)
# and adnn(7)'s ENVIRONMENT section (the .TP entries) name exactly the
# variables that are not retired; and every "ADNN_..." name that the core and
# the bundled plugins read is a row of the table. Writes TAP by hand.
set -u
n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

srcdir=${ADNN_TEST_SRCDIR:-.}
cc=${ADNN_TEST_CC:-cc}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adnn-envdocs-XXXXXX") || { echo "Bail out! mktemp failed"; exit 1; }
trap 'rm -rf "$tmp"' EXIT INT TERM

printf '#include "core/env.h"\n#define R(ID, NAME, READER, ACC, DEF, RETIRED, DOC) @ NAME RETIRED\nADNN_ENV_LIST(R)\n' >"$tmp/t.c"
if ! $cc -E -P -I"$srcdir" "$tmp/t.c" >"$tmp/pp" 2>"$tmp/err"; then
  echo "Bail out! cannot preprocess core/env.h: $(cat "$tmp/err")"
  exit 1
fi
tr '@' '\n' <"$tmp/pp" | sed -n 's/^ *"\(ADNN_[A-Z0-9_]*\)" *\([01]\).*/\1 \2/p' >"$tmp/rows"
awk '$2 == 0 { print $1 }' "$tmp/rows" | sort >"$tmp/table"
awk '{ print $1 }' "$tmp/rows" | sort >"$tmp/all"
[ -s "$tmp/table" ]
ok $? "core/env.h lists $(grep -c '' "$tmp/table") current variables"

sed -n 's/^| `\(ADNN_[A-Z0-9_]*\)` |.*/\1/p' "$srcdir/README.md" | sort >"$tmp/readme"
diff "$tmp/table" "$tmp/readme" >"$tmp/d1"
ok $? "README.md's environment table names exactly the variables of core/env.h"
[ -s "$tmp/d1" ] && diag "< core/env.h, > README.md:" "$(cat "$tmp/d1")"

awk '/^\.SH ENVIRONMENT/ { on = 1; next } /^\.SH/ { on = 0 } on && prev == ".TP" && /^\.B ADNN_/ { print $2 } { prev = $0 }' \
  "$srcdir/man/adnn.7" | sort >"$tmp/man"
diff "$tmp/table" "$tmp/man" >"$tmp/d2"
ok $? "adnn(7)'s ENVIRONMENT section names exactly the variables of core/env.h"
[ -s "$tmp/d2" ] && diag "< core/env.h, > man/adnn.7:" "$(cat "$tmp/d2")"

# Names the code reads: getenv("ADNN_..."), the cpu plugin's host->getenv
# calls and the CUDA plugin's retired list.
cat "$srcdir"/core/*.c "$srcdir"/backends/*/*.c | grep -o 'getenv("ADNN_[A-Z0-9_]*")\|{"ADNN_[A-Z0-9_]*",' |
  sed 's/.*"\(ADNN_[A-Z0-9_]*\)".*/\1/' | sort -u >"$tmp/read"
missing=$(comm -23 "$tmp/read" "$tmp/all")
[ -s "$tmp/read" ] && [ -z "$missing" ]
ok $? "every variable the code reads by name is in core/env.h ($(grep -c '' "$tmp/read") names)"
[ -n "$missing" ] && diag "not in core/env.h: $missing"

echo "1..$n"
exit $failed
