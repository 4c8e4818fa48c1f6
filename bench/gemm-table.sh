#!/bin/sh
# The GEMM table of doc/performance.md: adnn's own F32 engine against OpenBLAS
# in the default environment and against OpenBLAS with OPENBLAS_CORETYPE set
# in the benchmark child's environment only (SkylakeX: the right kernels for
# an AVX-512 Xeon; Prescott: the SSE3 kernels a misdetecting OpenBLAS 0.3.21
# falls back to), problem by problem, with the FMA peak measured first.
#
# usage: bench/gemm-table.sh [BUILDDIR] [THREADS] [RUNS]
# Prints a Markdown table: median milliseconds of RUNS calls, GFLOP/s and the
# percentage of the measured FMA peak of THREADS threads. Never sets
# OPENBLAS_CORETYPE anywhere but in the environment of one child command.
set -eu
build=${1:-.}
threads=${2:-2}
runs=${3:-11}
engine="$build/bench/gemm-engine"
peak_prog="$build/bench/fma-peak"
for p in "$engine" "$peak_prog"; do
  [ -x "$p" ] || { echo "gemm-table: $p not built (make bench/gemm-engine bench/fma-peak)" >&2; exit 1; }
done
shapes="256x256x256 512x512x512 1024x1024x1024 2048x2048x2048 4096x4096x4096
1024x768x768 1024x2304x768 1024x3072x768 1024x768x3072"

peak_out=$("$peak_prog" --threads="$threads" --rounds=5 --ms=300)
wall_peak=$(printf '%s\n' "$peak_out" | awk '/^peak_gflops_total:/ {print $2}')
peak1=$(printf '%s\n' "$peak_out" | awk '/^peak_gflops_per_cpu_second:/ {print $2}')
# The percentages use the peak per CPU-second times the thread count: what
# the cores sustain when they run nothing else. On a shared machine the
# wall-clock peak of the same moment is lower and changes from run to run.
peak=$(awk -v p="$peak1" -v t="$threads" 'BEGIN {printf "%.1f", p * t}')
echo "<!-- $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'); $(date -u '+%Y-%m-%d %H:%M UTC'); $threads threads -->"
echo "FMA peak (bench/fma-peak): $peak1 GFLOP/s per CPU-second of one thread, so $peak GFLOP/s for $threads threads (the % peak column); wall clock at the time: $wall_peak GFLOP/s for $threads threads"
echo "Load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$engine" --threads="$threads" --runs=1 256x256x256 | head -1
echo
echo "| shape (m x n x k) | engine ms | GF/s | % peak | OpenBLAS default ms | GF/s | OpenBLAS SkylakeX ms | GF/s | OpenBLAS Prescott ms | GF/s | engine / best OpenBLAS |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for s in $shapes; do
  r=$(OPENBLAS_NUM_THREADS=$threads "$engine" --threads="$threads" --runs="$runs" --peak="$peak" "$s")
  e=$(printf '%s\n' "$r" | awk '$2 == "engine" {print $3, $4, $5}')
  d=$(printf '%s\n' "$r" | awk '$2 == "openblas" {print $3, $4}')
  x=$(env OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=$threads "$engine" --threads="$threads" \
        --runs="$runs" --impl=openblas "$s" | awk '$2 == "openblas" {print $3, $4}')
  p=$(env OPENBLAS_CORETYPE=Prescott OPENBLAS_NUM_THREADS=$threads "$engine" --threads="$threads" \
        --runs="$runs" --impl=openblas "$s" | awk '$2 == "openblas" {print $3, $4}')
  set -- $e $d $x $p
  ratio=$(awk -v e="$1" -v a="$4" -v b="$6" -v c="$8" 'BEGIN {m = a; if (b < m) m = b; if (c < m) m = c; printf "%.2fx", m / e}')
  echo "| $s | $1 | $2 | $3 | $4 | $5 | $6 | $7 | $8 | $9 | $ratio |"
done
