#!/bin/sh
# The low-precision matmul table of doc/performance.md: each shape in F32,
# BF16, F16 and s8 (u8 is the same kernels), plus BF16 and s8 at
# ADNN_CPU_SIMD=avx512 (the AVX-512 foundation without its VNNI and BF16
# extensions: the widening and int16 paths those replace), all through
# adnn-bench --mode=perf with the tuner off, interleaved shape by shape and
# configuration by configuration for ROUNDS rounds (default 3) so that the
# machine's drift hits every column alike. Prints, per shape, the median over
# the rounds of adnn-bench's median time per configuration and each one's
# speed-up over F32 measured in the same rounds ("n/a": the configuration
# refused the problem, e.g. s8 with a residual or an activation).
#
#   bench/run-lowp-matmul.sh [ROUNDS] [SHAPE...]
#
# Run from the build tree; uses a temporary perf DB and the built CPU plugin.
set -u
rounds=${1:-3}
[ $# -gt 0 ] && shift
shapes=${*:-"matmul:m256n256k256 matmul:m512n512k512 matmul:m1024n1024k1024 \
matmul:m2048n2048k2048 matmul:m4096n4096k4096 matmul:m1024n2304k768:tb:bias \
matmul:m1024n768k768:tb:bias:res:inplace matmul:m1024n3072k768:tb:bias:gelu \
matmul:m1024n768k3072:tb:bias:res:inplace"}
bench=./tools/adnn-bench
[ -x "$bench" ] || { echo "run from the build tree ($bench not found)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adnn-lowp-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
export ADNN_CACHE_DIR="$tmp/cache" ADNN_PLUGIN_PATH="${ADNN_PLUGIN_PATH:-$PWD/backends/cpu/.libs}"
configs="f32: bf16: f16: s8: bf16:avx512 s8:avx512"
echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'); $(nproc) CPUs; $(date -u +%Y-%m-%dT%H:%MZ)"
echo "# ISA: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|f16c|avx512f|avx512bw|avx512vl|avx512_vnni|avx512_bf16|avx512_fp16|avx_vnni|amx_tile)$' | tr '\n' ' ')"
r=1
while [ "$r" -le "$rounds" ]; do
  for s in $shapes; do
    for c in $configs; do
      dt=${c%%:*}
      cap=${c#*:}
      name=$(echo "$s.$c" | tr ':' '_')
      out=$(if [ -n "$cap" ]; then export ADNN_CPU_SIMD=$cap; fi
            "$bench" --backend=cpu --mode=perf --dtype="$dt" --tune=off "$s" 2>&1)
      ms=$(echo "$out" | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' | head -1)
      alg=$(echo "$out" | sed -n 's/.*algorithm \([a-z0-9_]*\).*/\1/p' | head -1)
      echo "${ms:-nan}" >>"$tmp/$name.ms"
      echo "$alg" >"$tmp/$name.alg"
    done
  done
  r=$((r + 1))
done
median() { sort -g "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
printf '%-44s' "shape"
for c in $configs; do printf ' %22s' "$c"; done
echo
for s in $shapes; do
  printf '%-44s' "$s"
  base=$(median "$tmp/$(echo "$s.f32:" | tr ':' '_').ms")
  for c in $configs; do
    name=$(echo "$s.$c" | tr ':' '_')
    m=$(median "$tmp/$name.ms")
    printf ' %22s' "$(awk -v m="$m" -v b="$base" -v a="$(cat "$tmp/$name.alg")" \
      'BEGIN {if (m == "nan") printf "n/a"; else printf "%.2f %.2fx %s", m, b / m, a}')"
  done
  echo
done
