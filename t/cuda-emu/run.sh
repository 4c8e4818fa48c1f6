#!/bin/sh
# Runs t/cuda-ops against a host emulation of the CUDA plugin, on a machine
# without a GPU. A developer check, not part of `make check`.
#
#   sh t/cuda-emu/run.sh BUILD_DIR [TEST...]
#
# TEST: test programs of the build tree to run (default t/cuda-ops), e.g.
# t/conformance, which then runs every case on the emulated "cuda" backend.
#
# BUILD_DIR is a configured build tree with the CUDA plugin (for config.h,
# the cpu plugin and t/cuda-ops, which this script builds there). The script
# compiles, for the host:
#  - the real backends/cuda/cuda_plan.c and cuda_conv2d.c (plan logic, cuDNN
#    descriptor setup, workspace layout, layout classes, padding copies);
#  - every kernels/cuda/*.cu except selftest.cu, after a mechanical rewrite of
#    each `kernel<<<grid, threads, 0, l->stream>>>(args);` launch into a call
#    of emu.h's emulator (barrier-free kernels run serially; the "_rows"
#    kernels run one std::thread per CUDA thread with real barriers);
#  - emu_plugin.c: a plugin table named "cuda" on host memory, and stubs of the
#    few CUDA runtime calls the plan code makes;
#  - cudnn_emu.c: stand-ins for the cuDNN calls that need a device (one
#    algorithm offered: IMPLICIT_GEMM, or IMPLICIT_PRECOMP_GEMM with
#    EMU_PRECOMP=1; the convolution itself computed from the descriptors).
#    Descriptor calls go to the real cuDNN libraries.
# Then it runs t/cuda-ops twice (both algorithms) with ADNN_PLUGIN_PATH naming
# the emulated plugin. What this cannot check: device math functions, memory
# coalescing, real cuDNN behaviour, launch limits, performance.
set -eu
build=$(cd "${1:?usage: run.sh BUILD_DIR [TEST...]}" && pwd)
shift
tests=${*:-t/conformance}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
work=$(mktemp -d "${TMPDIR:-/tmp}/adnn-cuda-emu.XXXXXX")
trap 'rm -rf "$work"' EXIT
inc="-I$src -I$src/include -I$build/include -I$build -I$cuda/include -I$work -I$here"
cxx=${CXX:-g++}
cc=${CC:-gcc}
sed 's|#include <cuda_runtime.h>||' "$src/kernels/cuda/common.cuh" >"$work/common_emu.cuh"
objs=""
for cu in "$src"/kernels/cuda/*.cu; do
  name=$(basename "$cu" .cu)
  [ "$name" = selftest ] && continue
  perl -0pe 's/#include "kernels\/cuda\/common.cuh"/#include "emu.h"\n#include "common_emu.cuh"/;
    s/([A-Za-z_][A-Za-z_0-9]*(<[^<>]*>)?)<<<(.*?), threads, 0, l->stream>>>\((.*?)\);/my ($n,$g,$a)=($1,$3,$4); (($n =~ m|_rows|) ? "emu_launch_par" : "emu_launch") . "($g, threads, [&]{ $n($a); });"/gse' \
    "$cu" >"$work/$name.cpp"
  if grep -q '<<<' "$work/$name.cpp"; then echo "run.sh: a launch in $name.cu was not rewritten" >&2; exit 1; fi
  $cxx -std=c++17 -O1 -g -fPIC $inc -c "$work/$name.cpp" -o "$work/$name.o"
  objs="$objs $work/$name.o"
done
for c in "$src/backends/cuda/cuda_plan.c" "$src/backends/cuda/cuda_conv2d.c" "$here/emu_plugin.c" "$here/cudnn_emu.c"; do
  $cc -O1 -g -fPIC $inc -c "$c" -o "$work/$(basename "$c" .c).o"
  objs="$objs $work/$(basename "$c" .c).o"
done
mkdir -p "$work/plugin"
# shellcheck disable=SC2086
$cxx -shared -Wl,-z,defs -o "$work/plugin/adnn-cuda.so" $objs -L"$cuda/lib64" -L"$cuda/lib" \
  -lcudnn_cnn -lcudnn_ops -lcudnn_graph -lpthread
# shellcheck disable=SC2086
make -C "$build" $tests backends/cpu/adnn-cpu.la >/dev/null
status=0
for t in $tests; do
  for precomp in "" 1; do
    algo=IMPLICIT_GEMM
    [ -n "$precomp" ] && algo=IMPLICIT_PRECOMP_GEMM
    echo "# $t on the emulated cuda plugin, cuDNN stand-in offering $algo"
    env ${precomp:+EMU_PRECOMP=1} ADNN_PLUGIN_PATH="$build/backends/cpu/.libs:$work/plugin" \
      "$build/$t" || status=1
  done
done
exit $status
