#!/bin/sh
# The conformance cases of the kernels that have a copy per instruction-set
# level with level-specific tiles, transposes, reductions and masked tails
# (depthwise conv2d: t/ops/conv2d.c, names starting "dw"; Winograd
# F(4x4, 3x3), whose transforms have a copy per level: the "3x3 wf4" cases,
# which every conv2d algorithm runs on; the direct conv2d kernel: names
# starting "direct"; attention forward
# and backward; matmul's epilogue; softmax, layer / RMS norm and batch norm,
# whose F16/BF16 cases run the F32 code of each level on widened rows or
# blocks: "softmax [", "layer ", "rms ", batchnorm) on the cpu backend at every level below
# the one t/conformance runs at (ADNN_CPU_SIMD=avx2, then base); matmul also
# at ADNN_CPU_SIMD=avx512, which keeps the AVX-512 foundation but not its
# dot-product extensions, so that on a CPU with AVX-512-BF16 or VNNI the
# low-precision matmul runs the widening and int16 paths those replace, and
# so do the integer convolutions (names with " zx ": kernels/cpu/conv2d-int8.c
# on the int8 GEMM blocks of each level). A
# level above what the CPU has is capped to it by the plugin, so the runs are
# harmless there. One TAP line per level; the failing lines of a
# level are printed as diagnostics.
set -u
build=${ADNN_TEST_BUILDDIR:-.}
conf=$build/t/conformance
if [ ! -x "$conf" ]; then
  echo "1..0 # SKIP $conf is not built"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adnn-simd-XXXXXX") || { echo "Bail out! mktemp failed"; exit 1; }
trap 'rm -rf "$tmp"' EXIT INT TERM
echo "1..22"
n=0
failed=0
for filter in "dw " "3x3 wf4" direct attention matmul " zx " "softmax [" "layer " "rms " batchnorm; do
levels="avx2 base"
case $filter in matmul | " zx ") levels="avx512 avx2 base" ;; esac
for level in $levels; do
  n=$((n + 1))
  ADNN_CPU_SIMD=$level ADNN_CONFORMANCE_BACKEND=cpu ADNN_CONFORMANCE_FILTER="$filter" \
    "$conf" >"$tmp/out" 2>&1
  rc=$?
  passed=$(grep '^ok' "$tmp/out" | grep -vc '# SKIP')
  bad=$(grep -c '^not ok' "$tmp/out")
  if [ "$rc" = 0 ] && [ "$bad" = 0 ] && [ "$passed" -gt 0 ]; then
    echo "ok $n - '$filter' conformance at ADNN_CPU_SIMD=$level: $passed passed (skips not counted)"
  else
    echo "not ok $n - '$filter' conformance at ADNN_CPU_SIMD=$level: exit $rc, $bad failed"
    grep '^not ok' "$tmp/out" | head -20 | sed 's/^/# /'
    failed=1
  fi
done
done
exit $failed
