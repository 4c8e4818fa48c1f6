#!/bin/sh
# The man pages in man/: each is well formed (.TH, a NAME line "name \- what",
# the sections a page of its kind needs), renders without a single warning
# through "groff -man -ww -z" and through "man -l" (lintian's own check), and
# every function libadnn exports has a page (a grouped page, or a link page
# ".so man3/<group>.3" whose target exists). Checks whose tool is missing are
# skipped. TAP output.
set -u
srcdir=${ADNN_TEST_SRCDIR:?run through make check}

n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/adnn-man.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
# .so requests name "man3/<page>", relative to the current directory, as in an
# installed man tree; give them one that points at the source pages.
mkdir "$tmp/tree" && for s in 1 3 7; do ln -s "$srcdir/man" "$tmp/tree/man$s"; done

have_groff=no; command -v groff >/dev/null 2>&1 && have_groff=yes
have_man=no; command -v man >/dev/null 2>&1 && have_man=yes
man_db=no
[ $have_man = yes ] && man --help 2>&1 | grep -q -e "--warnings" && man_db=yes

for page in "$srcdir"/man/*.1 "$srcdir"/man/*.3 "$srcdir"/man/*.7; do
  [ -f "$page" ] || continue
  name=$(basename "$page")
  sec=${name##*.}
  first=$(sed -n 1p "$page")
  case $first in
    .so\ *)
      target=${first#.so }
      test -f "$tmp/tree/$target"
      ok $? "$name: link page to an existing page ($target)"
      continue ;;
  esac

  # Structure.
  problems=""
  title=$(echo "${name%.*}" | tr 'a-z' 'A-Z' | sed 's/-/\\\\-/g')
  grep -q "^\.TH $title $sec " "$page" || problems="$problems .TH($title $sec)"
  for s in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
    grep -q "^\.SH \"*$s\"*\$" "$page" || problems="$problems .SH($s)"
  done
  if [ "$sec" = 3 ]; then
    for s in "RETURN VALUE" ENVIRONMENT; do
      grep -q "^\.SH \"*$s\"*\$" "$page" || problems="$problems .SH($s)"
    done
  fi
  awk '/^\.SH NAME/ { getline; while ($0 !~ / \\- /) { if (/^\./) exit 1; if (getline <= 0) exit 1 }; exit 0 }' "$page" \
    || problems="$problems NAME-line-without-\\-"
  test -z "$problems"; ok $? "$name: well formed${problems:+ (missing or wrong:$problems)}"

  if [ $have_groff = yes ]; then
    groff -man -ww -z "$page" >/dev/null 2>"$tmp/err"
    test $? -eq 0 && test ! -s "$tmp/err"; ok $? "$name: groff -man -ww -z is silent"
    sed 's/^/# /' "$tmp/err"
  else
    skip "$name: groff -man -ww -z" "groff is not installed"
  fi

  if [ $have_man = yes ]; then
    (cd "$tmp/tree" && MANWIDTH=80 man -l "$page" >/dev/null 2>"$tmp/err")
    test $? -eq 0 && test ! -s "$tmp/err"; ok $? "$name: man -l renders it without messages"
    sed 's/^/# /' "$tmp/err"
    if [ $man_db = yes ]; then
      (cd "$tmp/tree" && LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" >/dev/null 2>"$tmp/err")
      test $? -eq 0 && test ! -s "$tmp/err"; ok $? "$name: man --warnings (lintian's check) is silent"
      sed 's/^/# /' "$tmp/err"
    fi
  else
    skip "$name: man -l" "man is not installed"
  fi
done

# Link pages render through their target as installed.
if [ $have_groff = yes ]; then
  bad=""
  for page in "$srcdir"/man/*.3; do
    case $(sed -n 1p "$page") in
      .so\ *) (cd "$tmp/tree" && groff -man -ww -z "man3/$(basename "$page")" >/dev/null 2>"$tmp/err") && test ! -s "$tmp/err" || bad="$bad $(basename "$page")" ;;
    esac
  done
  test -z "$bad"; ok $? "link pages render through their targets${bad:+: failed:$bad}"
fi

# Every exported function has a page of its name.
missing=""
for sym in $(sed 's/@.*//' "$srcdir/abi/libadnn.symbols"); do
  test -f "$srcdir/man/$sym.3" || missing="$missing $sym"
done
test -z "$missing"; ok $? "every exported function has a man page${missing:+; missing:$missing}"

echo "1..$n"
[ $failed -eq 0 ]
