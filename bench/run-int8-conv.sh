#!/bin/sh
# The INT8 convolution table of doc/performance.md: each layer of a problem
# file (default bench/inputs/resnet50) at minibatch MB (default 8) through
# adnn-bench --mode=perf in F32 (NHWC, the tuner on) and in u8 (x u8 with zero
# point 128, w s8, y u8 requantized: adnn-bench's integer conv) in NHWC and
# NCHW, and, when bench/conv-onednn was built, oneDNN's forward-inference
# primitive in f32 and u8 (the same zero point and output scale) with its
# preferred layouts. Interleaved layer by layer and configuration by
# configuration for ROUNDS rounds (default 2); prints per layer the median over
# the rounds of each configuration's median time and the ratios u8 / F32
# (adnn's own speed-up; "avx2": both capped at ADNN_CPU_SIMD=avx2, the int16
# path of an AVX2-only CPU) and adnn u8 / oneDNN u8 (> 1: adnn is faster), then
# the sums over the file's distinct layers (each counted once).
#
#   bench/run-int8-conv.sh [ROUNDS] [MB] [FILE]
#
# Run from the build tree; uses a temporary perf DB and the built CPU plugin;
# oneDNN runs with OMP_NUM_THREADS = the plugin's thread count (nproc).
set -u
rounds=${1:-2}
mb=${2:-8}
file=${3:-$(dirname "$0")/inputs/resnet50}
bench=./tools/adnn-bench
onednn=./bench/conv-onednn
[ -x "$bench" ] || { echo "run from the build tree ($bench not found)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adnn-int8-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
export ADNN_CACHE_DIR="$tmp/cache" ADNN_PLUGIN_PATH="${ADNN_PLUGIN_PATH:-$PWD/backends/cpu/.libs}"
# adnn configurations: engine, dtype, layout, and an ADNN_CPU_SIMD cap (avx2:
# the int16 path and the AVX2 F32 kernels an AVX2-only CPU runs).
configs="adnn:f32:nhwc adnn:u8:nhwc adnn:u8:nchw adnn:f32:nhwc:avx2 adnn:u8:nhwc:avx2"
[ -x "$onednn" ] && configs="$configs onednn:f32:any onednn:u8:any"
layers=$(sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$file")
echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'); $(nproc) CPUs; $(date -u +%Y-%m-%dT%H:%MZ); mb $mb"
echo "# ISA: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512_vnni|avx512_bf16|avx_vnni|amx_tile)$' | tr '\n' ' ')"
r=1
while [ "$r" -le "$rounds" ]; do
  i=0
  for l in $layers; do
    i=$((i + 1))
    for c in $configs; do
      who=${c%%:*}; rest=${c#*:}; dt=${rest%%:*}; rest=${rest#*:}; lay=${rest%%:*}
      cap=; case $rest in *:*) cap=${rest#*:} ;; esac
      if [ "$who" = adnn ]; then
        out=$(if [ -n "$cap" ]; then export ADNN_CPU_SIMD=$cap; fi
              "$bench" --backend=cpu --mode=perf --dtype="$dt" --layout="$lay" --mb="$mb" "$l" 2>&1)
        alg=$(echo "$out" | sed -n 's/.*algorithm \([a-z0-9_]*\).*/\1/p' | head -1)
      else
        out=$(OMP_NUM_THREADS=$(nproc) "$onednn" --dtype="$dt" --mb="$mb" "$l" 2>&1)
        alg=$(echo "$out" | sed -n 's/.*implementation \([^,]*\),.*/\1/p' | head -1)
      fi
      ms=$(echo "$out" | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' | head -1)
      echo "${ms:-nan}" >>"$tmp/$i.$c.ms"
      echo "$alg" >"$tmp/$i.$c.alg"
    done
  done
  r=$((r + 1))
done
median() { sort -g "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
printf '%-44s' "layer (ms)"
for c in $configs; do printf ' %14s' "$c"; done
printf ' %9s %9s %9s\n' "u8/f32" "avx2" "vs onednn"
i=0
for l in $layers; do
  i=$((i + 1))
  printf '%-44s' "$(echo "$l" | sed 's/^mb[0-9]*//; s/_n.*:/ /')"
  for c in $configs; do
    m=$(median "$tmp/$i.$c.ms")
    echo "$m" >"$tmp/$i.$c.med"
    printf ' %14s' "$m"
  done
  f=$(cat "$tmp/$i.adnn:f32:nhwc.med"); u=$(cat "$tmp/$i.adnn:u8:nhwc.med")
  f2=$(cat "$tmp/$i.adnn:f32:nhwc:avx2.med"); u2=$(cat "$tmp/$i.adnn:u8:nhwc:avx2.med")
  o=$(cat "$tmp/$i.onednn:u8:any.med" 2>/dev/null || echo nan)
  awk -v f="$f" -v u="$u" -v f2="$f2" -v u2="$u2" -v o="$o" 'BEGIN {printf " %8.2fx %8.2fx", f / u, f2 / u2; if (o == "nan") printf " %9s\n", "n/a"; else printf " %8.2fx\n", o / u}'
done
printf '%-44s' "sum of the distinct layers"
for c in $configs; do
  cat "$tmp"/*."$c".med | awk '{s += $1} END {printf " %14.2f", s}'
done
echo
echo "# algorithms (last round): $(for c in $configs; do printf '%s=%s ' "$c" "$(cat "$tmp"/*."$c".alg | sort | uniq -c | awk '{printf "%s%sx%s", (NR > 1 ? "," : ""), $1, $2}')"; done)"
