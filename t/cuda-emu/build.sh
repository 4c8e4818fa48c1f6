#!/bin/sh
# Builds the host emulation of the CUDA plugin: OUT_DIR/adnn-cuda.so, a plugin
# named "cuda" that runs on a machine without a GPU.
#
#   sh t/cuda-emu/build.sh BUILD_DIR OUT_DIR
#
# BUILD_DIR is a configured build tree (for config.h and the generated
# headers). What is compiled, all for the host:
#  - every C file of backends/cuda/ except cuda_probe.c: the real table,
#    contexts, memory, GEMM glue, plans and op files;
#  - every kernels/cuda/*.cu, after a mechanical rewrite of each launch
#    `kernel<<<grid, block, 0, stream>>>(args);` into a call of emu.h's
#    emulator: kernels named *_rows (those that synchronize a block, see
#    kernels/cuda/common.cuh) run one host thread per CUDA thread with real
#    barriers, every other kernel runs its threads one after the other;
#  - cuda_doubles.c: test doubles of the CUDA runtime (host memory, synchronous
#    streams), of cuBLAS's handles and of the probe;
#  - cublaslt_doubles.c: cuBLAS's GEMMs and the cuBLASLt matmul calls,
#    computed on the host as their documentation defines them;
#  - cudnn_doubles.c: test doubles of the cuDNN calls that need a device
#    (the forward and backward convolutions, the bias gradient, their
#    algorithm queries); the descriptor calls go to the real cuDNN libraries.
# What this cannot check: device math functions, memory coalescing, real
# cuDNN behaviour, launch limits, performance.
#
# Environment: CC, CXX (default gcc, g++), CUDA_HOME (default
# /usr/local/cuda), PERL (default perl), JOBS (parallel compilations,
# default 2).
set -eu
build=$(cd "${1:?usage: build.sh BUILD_DIR OUT_DIR}" && pwd)
mkdir -p "${2:?usage: build.sh BUILD_DIR OUT_DIR}"
out=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
cxx=${CXX:-g++}
cc=${CC:-gcc}
perl=${PERL:-perl}
obj="$out/obj"
mkdir -p "$obj"
inc="-I$src -I$src/include -I$build/include -I$build -I$cuda/include -I$obj -I$here"
warn="-Wall -Wextra -Wno-unused-parameter"
# The kernels carry nvcc's #pragma unroll, which the host compiler ignores.
kernel_warn="$warn -Wno-unknown-pragmas"

# The kernels' shared header without the CUDA runtime's device header; emu.h
# stands in for it.
sed 's|#include <cuda_runtime.h>|#include "emu.h"|' "$src/kernels/cuda/common.cuh" \
  >"$obj/common_emu.cuh"

objs=""
pids=""
running=0
# Runs a compilation in the background, at most JOBS at a time.
spawn() {
  if [ "$running" -ge "${JOBS:-2}" ]; then
    first=${pids%% *}
    wait "$first" || failed=1
    pids=${pids#"$first"}
    pids=${pids# }
    running=$((running - 1))
  fi
  "$@" &
  pids="${pids:+$pids }$!"
  running=$((running + 1))
}
failed=0
for cu in "$src"/kernels/cuda/*.cu; do
  name=$(basename "$cu" .cu)
  # shellcheck disable=SC2016 # the $ are Perl's
  "$perl" -0pe '
    s{#include "kernels/cuda/common.cuh"}{#include "common_emu.cuh"};
    s{([A-Za-z_][A-Za-z_0-9]*(?:<[^<>]*>)?)<<<(.*?),\s*(\w+),\s*0,\s*([\w>.-]+)>>>\((.*?)\);}
     {my ($k, $g, $b, $a) = ($1, $2, $3, $5);
      (($k =~ m/_rows\b/) ? "emu_launch_par" : "emu_launch") . "($g, $b, [&]{ $k($a); });"}gse' \
    "$cu" >"$obj/$name.cpp"
  if grep -q '<<<' "$obj/$name.cpp"; then
    echo "build.sh: a launch in kernels/cuda/$name.cu was not rewritten" >&2
    exit 1
  fi
  # shellcheck disable=SC2086
  spawn $cxx -std=c++17 -O1 -g -fPIC $kernel_warn $inc -c "$obj/$name.cpp" -o "$obj/$name.o"
  objs="$objs $obj/$name.o"
done
for c in "$src"/backends/cuda/*.c "$here/cuda_doubles.c" "$here/cudnn_doubles.c" \
  "$here/cublaslt_doubles.c"; do
  name=$(basename "$c" .c)
  [ "$name" = cuda_probe ] && continue
  # shellcheck disable=SC2086
  spawn $cc -std=gnu11 -O1 -g -fPIC $warn -Wshadow $inc -c "$c" -o "$obj/$name.o"
  objs="$objs $obj/$name.o"
done
for pid in $pids; do wait "$pid" || failed=1; done
[ $failed -eq 0 ] || { echo "build.sh: compilation failed" >&2; exit 1; }
# shellcheck disable=SC2086
$cxx -shared -Wl,-z,defs -o "$out/adnn-cuda.so" $objs -L"$cuda/lib64" -L"$cuda/lib" \
  -lcudnn_cnn -lcudnn_ops -lcudnn_graph -lpthread
