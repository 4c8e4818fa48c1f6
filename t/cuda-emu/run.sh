#!/bin/sh
# Runs test programs against the host emulation of the CUDA plugin, by hand
# (make check runs t/cuda-emu.sh, which builds the same emulation):
#
#   sh t/cuda-emu/run.sh BUILD_DIR [TEST...]
#
# TEST: test programs of the build tree (default t/conformance), each run once
# per cuDNN stand-in configuration: ADNN_EMU_CUDNN_ALGOS=IMPLICIT_GEMM, then
# IMPLICIT_PRECOMP_GEMM,WINOGRAD (see cudnn_doubles.c), with the CPU plugin
# beside the emulated "cuda" one. Other environment variables (ADNN_TUNE,
# ADNN_CONFORMANCE_FILTER, ADNN_EMU_CUDNN_BWD_DATA_ALGOS and
# ADNN_EMU_CUDNN_BWD_FILTER_ALGOS for the backward convolutions' stand-in
# algorithms, ...) pass through. build.sh says what is emulated and what is
# not.
set -eu
build=$(cd "${1:?usage: run.sh BUILD_DIR [TEST...]}" && pwd)
shift
tests=${*:-t/conformance}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/adnn-cuda-emu.XXXXXX")
trap 'rm -rf "$work"' EXIT
sh "$here/build.sh" "$build" "$work"
# shellcheck disable=SC2086
make -C "$build" $tests backends/cpu/adnn-cpu.la >/dev/null
status=0
for t in $tests; do
  for algos in IMPLICIT_GEMM IMPLICIT_PRECOMP_GEMM,WINOGRAD; do
    echo "# $t on the emulated cuda plugin, cuDNN stand-in offering $algos"
    env ADNN_EMU_CUDNN_ALGOS="$algos" ADNN_CACHE_DIR="${ADNN_CACHE_DIR:-$work/cache}" \
      ADNN_PLUGIN_PATH="$build/backends/cpu/.libs:$work" "$build/$t" || status=1
  done
done
exit $status
