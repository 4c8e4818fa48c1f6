#!/bin/sh
# Reproduces the CPU performance table of doc/performance.md with one command:
#
#   bench/run-cpu-perf.sh [BUILDDIR]        (default: the current directory)
#
# For each environment (the default one, then OPENBLAS_CORETYPE=SkylakeX, see
# below) it runs, problem by problem and alternating the two so that both see
# the same machine noise:
#   - adnn-bench on the cpu backend: 2 threads, F32, NCHW, --mode=perf,
#     --tune=default with an empty temporary ADNN_CACHE_DIR (so the first plan
#     of each problem is tuned by measurement; its creation time is the tuning
#     cost, reported in the "plan ms" column);
#   - a peer driver on the same problems: bench/conv-onednn (when configure
#     found oneDNN) over the ResNet-50 convolutions at batch 1 and 8, the
#     MobileNet-v1 depthwise layers at batch 1 and 8 and the BERT-base GEMMs;
#     bench/gemm-openblas (cblas_sgemm called directly: the cost of the adnn
#     layer) over bench/inputs/gemm_overhead.
# It prints markdown tables with the geometric means.
#
# Why two environments: Debian 12's OpenBLAS 0.3.21 does not recognize recent
# Xeons and runs its SSE3 "Prescott" kernels (doc/cpu.md); every adnn
# convolution algorithm except depthwise_direct and the Winograd transforms ends
# in an OpenBLAS SGEMM, so the default environment measures that misdetection
# and OPENBLAS_CORETYPE=SkylakeX what adnn does with a correctly configured
# OpenBLAS. The variable is set only on this script's own commands.
#
# The whole sequence is repeated ROUNDS times (default 3) and each tool keeps
# its best median per problem: on a shared 2-CPU machine a process that lands
# next to another busy process loses whole time slices (oneDNN's OpenMP
# barriers then wait ~8 ms per run), and such a transient hits one round.
#
# Environment: RUNS (timed runs per problem, default 9), GEMM_RUNS (timed
# runs of the gemm_overhead set, whose 4096^3 product takes seconds, in the
# first round only; default 5), TIME_MS (alternative to RUNS: milliseconds
# per problem), ENVS (default "default SkylakeX"), SETS (default "resnet50:1
# resnet50:8 mobilenet_v1:1 mobilenet_v1:8 bert_gemm:0 gemm_overhead:0",
# SET:MB[:DIR], DIR a benchdnn direction given to both tools as --dir, e.g.
# resnet50:8:BWD_D resnet50:8:BWD_W for the backward convolutions), THREADS
# (default 2; for adnn, OpenBLAS and oneDNN's OpenMP alike), LAYOUT (adnn's
# activation layout, nchw (default) or nhwc; oneDNN always gets NCHW and
# reorders it to its blocked layout outside the timed loop). The set
# mobilenet_v1_pw is the pointwise (1x1) layers of bench/inputs/mobilenet_v1.
set -u
build=$(cd "${1:-.}" && pwd) || exit 2
srcdir=$(cd "$(dirname "$0")/.." && pwd)
inputs=$srcdir/bench/inputs
bench=$build/tools/adnn-bench
onednn=$build/bench/conv-onednn
openblas=$build/bench/gemm-openblas
[ -x "$bench" ] || { echo "run-cpu-perf: $bench is not built (make in $build)" >&2; exit 2; }
[ -x "$onednn" ] || { echo "run-cpu-perf: $onednn not built (configure did not find oneDNN): adnn only" >&2; onednn=; }
[ -x "$openblas" ] || { echo "run-cpu-perf: $openblas is not built (make in $build)" >&2; exit 2; }

runs=${RUNS:-9}
rounds=${ROUNDS:-3}
gemm_runs=${GEMM_RUNS:-5}
if [ -n "${TIME_MS:-}" ]; then timing="--time-ms=$TIME_MS"; else timing="--runs=$runs"; fi
timing="$timing --warmup=${WARMUP:-3}"
envs=${ENVS:-default SkylakeX}
sets=${SETS:-resnet50:1 resnet50:8 mobilenet_v1:1 mobilenet_v1:8 bert_gemm:0 gemm_overhead:0}

ADNN_PLUGIN_PATH=${ADNN_PLUGIN_PATH:-$build/backends/cpu/.libs}
threads=${THREADS:-2}
ADNN_NUM_THREADS=$threads
OMP_NUM_THREADS=$threads
ADNN_LOG=error
export ADNN_PLUGIN_PATH ADNN_NUM_THREADS OMP_NUM_THREADS ADNN_LOG
unset ADNN_TUNE ADNN_CONV2D_ALGO ADNN_CPU_SIMD ADNN_BACKEND

tmp=$(mktemp -d "${TMPDIR:-/tmp}/adnn-perf.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
raw=$tmp/raw.csv
: >"$raw"

# Problems of a set, one per line (comments removed); the MobileNet set is
# reduced to its depthwise layers.
problems() {
  case $1 in
    mobilenet_v1_pw) file=mobilenet_v1 ;;
    *) file=$1 ;;
  esac
  sed -e 's/#.*//' -e 's/[ \t]*$//' -e '/^$/d' "$inputs/$file" |
    case $1 in
      mobilenet_v1) grep '^g' ;;
      mobilenet_v1_pw) grep ':pw' ;;
      *) cat ;;
    esac
}

# The peer driver of a set: cblas_sgemm for the adnn_gemm overhead, else
# oneDNN (empty when it was not built).
peer_of() {
  if [ "$1" = gemm_overhead ]; then echo "$openblas"; else echo "$onednn"; fi
}

# parse_spec SET:MB[:DIR]: sets set, mb, dir (empty: forward) and setid (the
# set's column in the raw rows: the set, with "@DIR" for a direction).
parse_spec() {
  set=${1%%:*}
  rest=${1#*:}
  mb=${rest%%:*}
  dir=
  case $rest in *:*) dir=${rest#*:} ;; esac
  setid=$set${dir:+@$dir}
}

# run_env LABEL CORETYPE: every set, alternating adnn and its peer per problem.
run_env() {
  label=$1
  cache=$tmp/cache-$label
  mkdir -p "$cache"
  round=0
  while [ $round -lt "$rounds" ]; do
  round=$((round + 1))
  for spec in $sets; do
    parse_spec "$spec"
    mbopt=
    [ "$mb" != 0 ] && mbopt=--mb=$mb
    [ -n "$dir" ] && mbopt="$mbopt --dir=$dir"
    peer=$(peer_of "$set")
    settiming=$timing
    if [ "$set" = gemm_overhead ]; then
      # seconds per 4096^3 product: GEMM_RUNS runs, first round only
      [ "$round" = 1 ] && [ "$gemm_runs" != 0 ] || continue
      settiming="--runs=$gemm_runs --warmup=1"
    fi
    problems "$set" >"$tmp/list"
    while read -r p; do
      if [ "$label" = default ]; then
        ADNN_CACHE_DIR=$cache "$bench" --backend=cpu --mode=perf --tune=default --layout="${LAYOUT:-nchw}" --csv $settiming $mbopt "$p"
      else
        OPENBLAS_CORETYPE=$label ADNN_CACHE_DIR=$cache "$bench" --backend=cpu --mode=perf --tune=default --layout="${LAYOUT:-nchw}" --csv $settiming $mbopt "$p"
      fi </dev/null | sed -n "2s/^/$label,$setid,$mb,adnn,/p" >>"$raw"
      if [ -n "$peer" ]; then
        if [ "$label" = default ]; then
          "$peer" --csv $settiming $mbopt "$p"
        else
          OPENBLAS_CORETYPE=$label "$peer" --csv $settiming $mbopt "$p"
        fi </dev/null | sed -n "2s/^/$label,$setid,$mb,peer,/p" >>"$raw"
      fi
    done <"$tmp/list"
  done
  done
}

host=$(sed -n 's/^model name[ \t]*: //p' /proc/cpuinfo | head -1)
echo "# adnn CPU performance, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "Machine: $host, $(getconf _NPROCESSORS_ONLN) CPUs; $threads thread(s); F32; ${LAYOUT:-nchw} input to adnn, NCHW to oneDNN (which uses its"
echo "preferred blocked layouts, weights reordered once outside the timed loop)."
echo "adnn $("$bench" --version | sed 's/.* //'); $(dpkg-query -W -f '${Package} ${Version}' libopenblas0-pthread 2>/dev/null || echo OpenBLAS);"
echo "$(dpkg-query -W -f '${Package} ${Version}' libdnnl2 2>/dev/null || echo 'oneDNN: not found'). Timing: $timing per problem,"
echo "$rounds rounds; GFLOP/s of the best round's median run; \"ratio of best runs\" compares the"
echo "fastest single runs. Load average at start: $(cut -d' ' -f1-3 /proc/loadavg)."
echo

for e in $envs; do
  run_env "$e"
done

# One markdown table per environment and set, with geometric means.
for e in $envs; do
  if [ "$e" = default ]; then title="default environment"; else title="OPENBLAS_CORETYPE=$e"; fi
  for spec in $sets; do
    parse_spec "$spec"
    if [ "$mb" = 0 ]; then what="$set"; else what="$set, batch $mb"; fi
    case $dir in
      BWD_D) what="$what, backward data (BWD_D)" ;;
      BWD_W) what="$what, backward weights (BWD_W)" ;;
      BWD_WB) what="$what, backward weights and bias (BWD_WB)" ;;
    esac
    [ "$set" = mobilenet_v1 ] && what="MobileNet-v1 depthwise, batch $mb"
    [ "$set" = mobilenet_v1_pw ] && what="MobileNet-v1 pointwise, batch $mb"
    [ "${LAYOUT:-nchw}" = nhwc ] && what="$what, adnn NHWC"
    peer=oneDNN
    if [ "$set" = gemm_overhead ]; then
      what="GEMM: adnn_gemm vs cblas_sgemm called directly (bench/gemm-openblas)"
      peer=cblas_sgemm
    fi
    echo "## $what ($title)"
    echo
    awk -v env="$e" -v set="$setid" -v mb="$mb" -v peer="$peer" '
      # split a CSV line (quoted fields may hold commas and "" escapes) into f[1..]
      function csv(line, f,    i, c, q, n, cur) {
        n = 1; cur = ""; q = 0
        for (i = 1; i <= length(line); i++) {
          c = substr(line, i, 1)
          if (q) {
            if (c == "\"" && substr(line, i + 1, 1) == "\"") { cur = cur c; i++ }
            else if (c == "\"") q = 0
            else cur = cur c
          } else if (c == "\"") q = 1
          else if (c == ",") { f[n++] = cur; cur = "" }
          else cur = cur c
        }
        f[n] = cur
        return n
      }
      {
        csv($0, f)
        if (f[1] != env || f[2] != set || f[3] != mb) next
        key = f[6]
        if (!(key in seen)) { seen[key] = 1; order[++n] = key }
        # GFLOP/s of the median run, and of the best run (min time)
        # over the rounds: the best median and the best run of each tool; the
        # plan time of the first round (the one that tuned)
        g = f[18] + 0; b = (f[16] > 0) ? g * f[15] / f[16] : 0
        if (f[4] == "adnn") {
          if (!(key in ac)) ac[key] = f[13]
          if (!(key in as) || as[key] != "ok") as[key] = f[10]
          if (f[10] == "ok" && g > ag[key]) { ag[key] = g; aa[key] = f[11] }
          if (f[10] == "ok" && b > ab[key]) ab[key] = b
        } else {
          if (!(key in os) || os[key] != "ok") os[key] = f[10]
          if (f[10] == "ok" && g > og[key]) og[key] = g
          if (f[10] == "ok" && b > ob[key]) ob[key] = b
        }
      }
      END {
        print "| problem | adnn GFLOP/s | " peer " GFLOP/s | ratio | ratio of best runs | adnn algorithm | plan ms (tuning) |"
        print "|---|---|---|---|---|---|---|"
        la = lo = lr = lb = 0; na = no = nr = nb = 0; maxc = 0
        for (i = 1; i <= n; i++) {
          k = order[i]
          a = (as[k] == "ok") ? ag[k] + 0 : 0
          o = (os[k] == "ok") ? og[k] + 0 : 0
          r = (a > 0 && o > 0) ? sprintf("%.2f", a / o) : "-"
          if (a > 0) { la += log(a); na++ }
          if (o > 0) { lo += log(o); no++ }
          if (a > 0 && o > 0) { lr += log(a / o); nr++ }
          rb = (a > 0 && o > 0 && ab[k] > 0 && ob[k] > 0) ? sprintf("%.2f", ab[k] / ob[k]) : "-"
          if (rb != "-") { lb += log(ab[k] / ob[k]); nb++ }
          if (ac[k] + 0 > maxc) maxc = ac[k] + 0
          sa = (a > 0) ? sprintf("%.1f", a) : as[k]
          so = (o > 0) ? sprintf("%.1f", o) : ((k in os) ? os[k] : "-")
          sc = (ac[k] != "") ? sprintf("%.0f", ac[k]) : "-"
          printf "| %s | %s | %s | %s | %s | %s | %s |\n", k, sa, so, r, rb, aa[k], sc
        }
        ga = na ? sprintf("%.1f", exp(la / na)) : "-"
        go = no ? sprintf("%.1f", exp(lo / no)) : "-"
        gr = nr ? sprintf("%.2f", exp(lr / nr)) : "-"
        gb = nb ? sprintf("%.2f", exp(lb / nb)) : "-"
        printf "| **geometric mean** | **%s** | **%s** | **%s** | **%s** | | max %.0f |\n", ga, go, gr, gb, maxc
      }' "$raw"
    echo
  done
done
cp "$raw" "${PERF_RAW:-/dev/null}" 2>/dev/null
exit 0
