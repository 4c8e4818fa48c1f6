#!/bin/sh
# examples/train-cnn runs unchanged on the CUDA plugin: one epoch on the host
# emulation of the plugin (t/cuda-emu/build.sh; no GPU is needed or used),
# chosen only through ADNN_BACKEND=cuda, beside the same epoch on the CPU
# plugin. The emulated run must name backend cuda, and its epoch-1 loss must
# equal the CPU's within 1e-4 relative and its test accuracy within 1 point
# (doc/numerics.md: the two backends' sums run in other orders). One epoch
# only (below the 95 % of ten: --min-accuracy 0): the emulation runs kernels
# as serial host loops (about 0.5 s a step).
# This is not a GPU result (doc/cuda.md says what the emulation cannot
# check). Skips when cuDNN's headers, a compiler or the example is missing.
set -u
src=${ADNN_TEST_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${ADNN_TEST_BUILDDIR:-$(pwd)}
n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }
skip_all() {
  echo "1..0 # SKIP $*"
  exit 0
}

prog=$build/examples/train-cnn
[ -x "$prog" ] || skip_all "examples/train-cnn is not built"
for tool in "${CC:-gcc}" "${CXX:-g++}" "${PERL:-perl}"; do
  command -v "$tool" >/dev/null 2>&1 || skip_all "$tool not found"
done
cuda=${CUDA_HOME:-/usr/local/cuda}
[ -r "$cuda/include/cudnn.h" ] || skip_all "cuDNN headers not found in $cuda/include"
[ -d "$build/backends/cpu/.libs" ] || skip_all "the CPU plugin is not built in $build"

work=$(mktemp -d "${TMPDIR:-/tmp}/adnn-train-cnn-emu-XXXXXX") || skip_all "mktemp failed"
trap 'rm -rf "$work"' EXIT

"$prog" --epochs 1 --min-accuracy 0 cpu >"$work/cpu" 2>"$work/cpu.err"
rc=$?
ok $rc "train-cnn --epochs 1 on cpu (exit $rc)"
[ $rc = 0 ] || diag "$(cat "$work/cpu" "$work/cpu.err")"

if ! sh "$src/t/cuda-emu/build.sh" "$build" "$work/plugin" >"$work/build.log" 2>&1; then
  ok 1 "the emulated CUDA plugin builds"
  diag "$(tail -20 "$work/build.log")"
  echo "1..$n"
  exit 1
fi
ok 0 "the emulated CUDA plugin builds (t/cuda-emu/build.sh)"

ADNN_PLUGIN_PATH="$build/backends/cpu/.libs:$work/plugin"
export ADNN_PLUGIN_PATH
ADNN_BACKEND=cuda ADNN_EMU_CUDNN_ALGOS=IMPLICIT_GEMM "$prog" --epochs 1 --min-accuracy 0 >"$work/cuda" 2>"$work/cuda.err"
rc=$?
ok $rc "train-cnn --epochs 1 with ADNN_BACKEND=cuda on the emulated plugin (exit $rc)"
diag "$(cat "$work/cuda")"
[ $rc = 0 ] || diag "$(cat "$work/cuda.err")"

grep -q '^adnn .*: train-cnn on backend cuda:' "$work/cuda"
ok $? "the emulated run used backend cuda"

loss_cpu=$(awk '/^epoch  1 / { print $4 }' "$work/cpu")
loss_cuda=$(awk '/^epoch  1 / { print $4 }' "$work/cuda")
acc_cpu=$(awk '/^epoch  1 / { sub(/%/, "", $7); print $7 }' "$work/cpu")
acc_cuda=$(awk '/^epoch  1 / { sub(/%/, "", $7); print $7 }' "$work/cuda")
[ -n "$loss_cpu" ] && [ -n "$loss_cuda" ] &&
  awk -v a="$loss_cuda" -v b="$loss_cpu" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-4 * b) }'
ok $? "epoch-1 loss: cuda ${loss_cuda:-?}, cpu ${loss_cpu:-?} (within 1e-4 relative)"
[ -n "$acc_cpu" ] && [ -n "$acc_cuda" ] &&
  awk -v a="$acc_cuda" -v b="$acc_cpu" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1.0) }'
ok $? "epoch-1 test accuracy: cuda ${acc_cuda:-?}%, cpu ${acc_cpu:-?}% (within 1 point)"

echo "1..$n"
exit $failed
