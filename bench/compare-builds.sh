#!/bin/sh
# Compares two builds of adnn on a problem set with adnn-bench, problem by
# problem, alternating the builds and swapping their order every round, so
# that both see the same machine noise:
#
#   bench/compare-builds.sh OLD_BUILDDIR NEW_BUILDDIR [SET] [MB] [ROUNDS]
#
# SET is a file of bench/inputs (default resnet50), MB the minibatch (default
# 1), ROUNDS the number of rounds (default 3). Each build tunes with its own
# temporary ADNN_CACHE_DIR, kept across rounds, so every layer is tuned once.
# Prints a markdown table of the best median per problem and build and the
# geometric mean of new/old. CPU backend, F32, 2 threads unless
# ADNN_NUM_THREADS is set. doc/performance.md records a run.
set -u
old=$(cd "$1" && pwd) || exit 2
new=$(cd "$2" && pwd) || exit 2
srcdir=$(cd "$(dirname "$0")/.." && pwd)
set_file=$srcdir/bench/inputs/${3:-resnet50}
mb=${4:-1}
rounds=${5:-3}
[ -r "$set_file" ] || { echo "compare-builds: no problem set $set_file" >&2; exit 2; }
for b in "$old" "$new"; do
  [ -x "$b/tools/adnn-bench" ] || { echo "compare-builds: $b/tools/adnn-bench is not built" >&2; exit 2; }
done
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/old" "$tmp/new"
problems=$(sed -e 's/#.*//' "$set_file" | awk 'NF { print $1 }')
r=1
while [ "$r" -le "$rounds" ]; do
  order="old new"
  [ $((r % 2)) -eq 0 ] && order="new old"
  for p in $problems; do
    for who in $order; do
      if [ "$who" = old ]; then b=$old; else b=$new; fi
      line=$(ADNN_CACHE_DIR="$tmp/$who" ADNN_NUM_THREADS=${ADNN_NUM_THREADS:-2} \
        ADNN_PLUGIN_PATH="$b/backends/cpu/.libs" "$b/tools/adnn-bench" --backend=cpu \
        --mode=perf --mb="$mb" --runs=9 --warmup=3 --csv "$p" 2>/dev/null | tail -n 1)
      printf '%s,%s\n' "$who" "$line" >> "$tmp/results.csv"
    done
  done
  r=$((r + 1))
done
# adnn-bench's CSV: backend,problem,mode,dtype,layout,status,algorithm,
# choice_reason,create_ms,runs,median_ms,... (the reason may be quoted and hold
# commas, so a CSV parser reads it).
python3 - "$tmp/results.csv" <<'PY'
import csv, math, sys
best = {}
for row in csv.reader(open(sys.argv[1])):
    if len(row) < 12 or row[6] != "ok":
        continue
    who, prob, alg, med = row[0], row[2], row[7], float(row[11])
    if (who, prob) not in best or med < best[(who, prob)][0]:
        best[(who, prob)] = (med, alg)
print("| problem | before ms | algorithm | after ms | algorithm | after/before |")
print("|---|---|---|---|---|---|")
logs = []
for prob in dict.fromkeys(p for (_, p) in best):
    if ("old", prob) in best and ("new", prob) in best:
        (o, oa), (n, na) = best[("old", prob)], best[("new", prob)]
        logs.append(math.log(n / o))
        print(f"| {prob} | {o:.3f} | {oa} | {n:.3f} | {na} | {n / o:.2f} |")
if logs:
    print(f"geomean after/before over {len(logs)} problems: {math.exp(sum(logs) / len(logs)):.3f}")
PY
