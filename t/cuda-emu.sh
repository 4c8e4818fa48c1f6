#!/bin/sh
# The CUDA plugin on a machine without a GPU: builds its host emulation
# (t/cuda-emu/build.sh: the real plugin code and every kernel compiled for the
# host, test doubles for the CUDA runtime, cuBLAS's handles, the probe and the
# device-bound cuDNN calls) in a temporary directory, and runs t/conformance
# on it, beside the CPU plugin, as TAP:
#   1. every op, cuDNN stand-in offering IMPLICIT_GEMM, tuning off (the
#      plugin's own choices); activation, binary, pool2d, reduce,
#      quantize and dequantize must skip no case, and softmax, norm,
#      batchnorm and conv2d none for its dtype (their F16/BF16 kernels), and
#      every integer conv2d case runs the int8 kernel; then
#      the conv2d cases on an emulated compute capability 7.5
#      (ADNN_EMU_CUDA_CC; BF16 convolutions widened to F32);
#   2. conv2d, stand-in offering IMPLICIT_PRECOMP_GEMM then WINOGRAD (the
#      fused identity epilogue, the forced Winograd family);
#   3. conv2d under the core's tuner (ADNN_TUNE=exhaustive) with three
#      stand-in algorithms: every candidate of a plan is selected and measured
#      on that one plan; also checks the warnings for the retired
#      ADNN_CUDA_WORKSPACE_LIMIT and ADNN_CUDA_CONV_FIND;
#   4. the workspace limit (ADNN_TUNE_WORKSPACE_LIMIT) bounds the plugin's
#      own choice;
#   5. conv2d backward data and weights under the tuner with several
#      stand-in backward algorithms (ADNN_EMU_CUDNN_BWD_DATA_ALGOS,
#      ADNN_EMU_CUDNN_BWD_FILTER_ALGOS; ALGO_0 and the filter's ALGO_3 are
#      non-deterministic, as in cuDNN) in deterministic mode: every
#      deterministic candidate measured, the non-deterministic ones excluded
#      and named in the choice reason;
#   6. backward, tuning off: the plugin's own choice skips a non-deterministic
#      first algorithm under ADNN_DETERMINISTIC=1, falls back to the direct
#      kernel when cuDNN offers only non-deterministic ones, and respects the
#      workspace limit.
# Run 1 also checks that quantize and dequantize ran every case on the
# plugin's own kernels. Then t/optimizer-steps, which tests every ready
# backend itself, runs with the emulated plugin too, and so do the gradient
# checks (t/gradcheck-*) and the attention kernels' own test
# (t/cuda-emu/attention-kernels.cpp), the F16/BF16 kernels bit for bit
# against the CPU (t/cuda-emu/lowp-bitexact.c), and the reorder op's
# bit-exact conversions (t/convert-exhaustive).
# Each run's checks are renumbered into this script's TAP stream and tagged
# with the run. Skips (1..0 # SKIP) when a tool or t/conformance is missing.
# None of this is a GPU result: see doc/cuda.md for what the emulation does
# not check.
set -u
src=${ADNN_TEST_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${ADNN_TEST_BUILDDIR:-$(pwd)}

skip_all() {
  echo "1..0 # SKIP $*"
  exit 0
}
for tool in "${CC:-gcc}" "${CXX:-g++}" "${PERL:-perl}" awk grep; do
  command -v "$tool" >/dev/null 2>&1 || skip_all "$tool not found"
done
[ -x "$build/t/conformance" ] || skip_all "t/conformance was not built in $build"
cuda=${CUDA_HOME:-/usr/local/cuda}
[ -r "$cuda/include/cudnn.h" ] || skip_all "cuDNN headers not found in $cuda/include"

work=$(mktemp -d "${TMPDIR:-/tmp}/adnn-cuda-emu.XXXXXX") || skip_all "mktemp failed"
trap 'rm -rf "$work"' EXIT
count=0

# TAP helpers for this script's own checks.
check() { # check COND_STATUS DESCRIPTION
  count=$((count + 1))
  if [ "$1" -eq 0 ]; then echo "ok $count - $2"; else echo "not ok $count - $2"; fi
}
diag_file() { sed 's/^/# /' "$1"; }

if ! sh "$src/t/cuda-emu/build.sh" "$build" "$work/plugin" >"$work/build.log" 2>&1; then
  check 1 "the emulated plugin builds"
  diag_file "$work/build.log"
  echo "1..$count"
  exit 0
fi
check 0 "the emulated plugin builds (t/cuda-emu/build.sh)"

plugins="$work/plugin"
[ -d "$build/backends/cpu/.libs" ] && plugins="$build/backends/cpu/.libs:$plugins"

# run LABEL ENV...: runs t/conformance with the emulated plugin and the
# environment ENV, renumbering its checks into this stream.
run() {
  label=$1
  shift
  env ADNN_PLUGIN_PATH="$plugins" ADNN_CACHE_DIR="$work/cache" ADNN_LOG=warn "$@" \
    "${run_prog:-$build/t/conformance}" >"$work/out" 2>"$work/err"
  rc=$?
  awk -v n="$count" -v label="$label" '
    /^(not )?ok / {
      n++
      prefix = ($1 == "not") ? "not ok" : "ok"
      rest = $0
      sub(/^(not )?ok [0-9]+ ?/, "", rest)
      if (rest ~ /^# /) print prefix " " n " " rest " [" label "]"
      else { sub(/^- /, "", rest); print prefix " " n " - [" label "] " rest }
      next
    }
    /^#/ { print; next }
    END { print n > "/dev/stderr" }' "$work/out" 2>"$work/count"
  count=$(cat "$work/count")
  grep -q '^ok\|^not ok' "$work/out" || diag_file "$work/err"
  check "$rc" "[$label] ${run_prog_name:-t/conformance} exits with status 0 (got $rc)"
}

run "stand-in IMPLICIT_GEMM" ADNN_TUNE=off ADNN_EMU_CUDNN_ALGOS=IMPLICIT_GEMM
grep -q '^ok .* cuda conv2d .*\[auto\] (cudnn:IMPLICIT_GEMM' "$work/out"
check $? "[stand-in IMPLICIT_GEMM] conv2d AUTO runs cuDNN's first algorithm"
grep -q '^ok .* cuda conv2d_backward_data .*\[auto\] (cudnn:ALGO_1)' "$work/out" &&
  grep -q '^ok .* cuda conv2d_backward_weights .*\[auto\] (cudnn:ALGO_1)' "$work/out"
check $? "[stand-in IMPLICIT_GEMM] conv2d backward AUTO runs cuDNN's ALGO_1 in both directions"
# activation, binary, pool2d and reduce run every dtype of their manifest
# rows on CUDA kernels, F16 and BF16 included (issue 13): none of their cases
# may be skipped, so a refusal that comes back is caught here.
n=$(grep -cE '^ok .* # SKIP cuda (activation|binary|pool2d|reduce) ' "$work/out")
[ "$n" -eq 0 ]
check $? "[stand-in IMPLICIT_GEMM] no activation, binary, pool2d or reduce case (F16/BF16 included) is skipped on cuda ($n skipped)"

# quantize and dequantize run our kernels on the CUDA plugin: every case ran
# there (none skipped), bit for bit the oracle (the suite compares exactly).
grep -q '^ok .* cuda quantize .*(cuda:quantize)' "$work/out" &&
  grep -q '^ok .* cuda dequantize .*(cuda:dequantize)' "$work/out" &&
  ! grep -Eq '^ok .* # SKIP cuda (de)?quantize ' "$work/out"
check $? "[stand-in IMPLICIT_GEMM] quantize and dequantize run every case on cuda:quantize / cuda:dequantize"

# softmax, layer/RMS norm, batch norm, conv2d and activation backward run
# F16/BF16 on the cuda plugin: none of their cases may skip for the dtype.
n=$(grep -c '^ok .* # SKIP cuda \(softmax\|norm\|batchnorm\|conv2d\|activation_backward\|softmax_backward\|pool2d_backward\) .*dtype b*f16 is not supported' "$work/out")
[ "$n" -eq 0 ]
check $? "[stand-in IMPLICIT_GEMM] no f16/bf16 softmax, norm, batchnorm, conv2d, activation_backward, softmax_backward or pool2d_backward case skips for its dtype on cuda ($n)"

# Integer convolutions (I8/U8 x, I8 w: names with " zx ") run our exact
# kernel of kernels/cuda/conv2d-int8.cu on the cuda plugin: every AUTO case
# ran there, none skipped.
grep -q '^ok .* cuda conv2d .* zx .*\[auto\] (direct)' "$work/out" &&
  ! grep -q '^ok .* # SKIP cuda conv2d .* zx .*\[auto\]' "$work/out"
check $? "[stand-in IMPLICIT_GEMM] every integer conv2d case runs on cuda's int8 kernel under AUTO"

# A device below compute capability 8.0, where cuDNN has no BF16
# convolutions: the plugin runs BF16 conv2d on widened F32 copies, and every
# case still passes.
run "compute capability 7.5" ADNN_TUNE=off ADNN_EMU_CUDA_CC=75 ADNN_CONFORMANCE_FILTER=conv2d \
  ADNN_CONFORMANCE_BACKEND=cuda ADNN_EMU_CUDNN_ALGOS=IMPLICIT_GEMM

run "stand-in IMPLICIT_PRECOMP_GEMM,WINOGRAD" ADNN_TUNE=off ADNN_CONFORMANCE_FILTER=conv2d \
  ADNN_EMU_CUDNN_ALGOS=IMPLICIT_PRECOMP_GEMM,WINOGRAD
grep -q '^ok .* cuda conv2d .*\[auto\] (cudnn:IMPLICIT_PRECOMP_GEMM+bias_act)' "$work/out"
check $? "[stand-in IMPLICIT_PRECOMP_GEMM,WINOGRAD] a fused bias + identity runs"
grep -q '^ok .* cuda conv2d .*\[winograd_f2x3\] (cudnn:WINOGRAD)' "$work/out"
check $? "[stand-in IMPLICIT_PRECOMP_GEMM,WINOGRAD] forced winograd_f2x3 runs cuDNN's WINOGRAD"
# cuDNN does not let a caller choose its Winograd tile, so the CUDA plugin
# refuses a forced F(4x4, 3x3) with a message saying so (never another tile).
grep -q '^ok .* # SKIP cuda conv2d .*\[winograd_f4x3\]: plan creation: NOT_SUPPORTED: .*winograd_f4x3 is not available on the cuda backend' "$work/out" &&
  ! grep -q '^ok .* - cuda conv2d .*\[winograd_f4x3\]' "$work/out"
check $? "[stand-in IMPLICIT_PRECOMP_GEMM,WINOGRAD] forced winograd_f4x3 is NOT_SUPPORTED on cuda, with the reason"

# The tuner: a few 3x3 stride-1 cases (every stand-in algorithm applies). The
# filter also matches backward cases; offering them no cuDNN algorithm leaves
# their plans a single candidate (direct), which is not measured.
run "tuner" ADNN_TUNE=exhaustive ADNN_TUNE_BUDGET_MS=50 ADNN_LOG=debug \
  ADNN_CONFORMANCE_FILTER="3x3 g2" ADNN_CONFORMANCE_BACKEND=cuda \
  ADNN_EMU_CUDNN_ALGOS=IMPLICIT_GEMM,IMPLICIT_PRECOMP_GEMM,WINOGRAD \
  ADNN_EMU_CUDNN_BWD_DATA_ALGOS=none ADNN_EMU_CUDNN_BWD_FILTER_ALGOS=none \
  ADNN_CUDA_WORKSPACE_LIMIT=1M ADNN_CUDA_CONV_FIND=1
for name in cudnn:IMPLICIT_GEMM cudnn:IMPLICIT_PRECOMP_GEMM cudnn:WINOGRAD direct; do
  n=$(grep -c "tuner: $name: .* ms" "$work/err")
  [ "$n" -gt 0 ]
  check $? "[tuner] $name was selected and measured on its plans ($n times)"
done
plans=$(grep -c 'tuner: chose ' "$work/err")
measured=$(grep -c 'tuner: [a-z]*:*[A-Z_]*: .* ms' "$work/err")
[ "$plans" -gt 0 ] && [ "$measured" -ge $((plans * 4)) ]
check $? "[tuner] every tuned plan measured its 4 candidates ($measured measurements, $plans plans)"
for var in ADNN_CUDA_WORKSPACE_LIMIT ADNN_CUDA_CONV_FIND; do
  n=$(grep -c "ignoring $var=" "$work/err")
  [ "$n" -eq 1 ]
  check $? "[tuner] $var: one warning per process ($n)"
done
grep 'ignoring ADNN_CUDA' "$work/err" | sed 's/^/# /'

run "workspace limit" ADNN_TUNE=off ADNN_TUNE_WORKSPACE_LIMIT=500 ADNN_CONFORMANCE_FILTER=1x1 \
  ADNN_CONFORMANCE_BACKEND=cuda ADNN_EMU_CUDNN_ALGOS=IMPLICIT_PRECOMP_GEMM,IMPLICIT_GEMM
! grep -q '\[auto\] (cudnn:IMPLICIT_PRECOMP' "$work/out" &&
  grep -q '\[auto\] (cudnn:IMPLICIT_GEMM)' "$work/out"
check $? "[workspace limit] AUTO skips the algorithm whose 1000-byte workspace exceeds 500"

# conv2d backward under the tuner, deterministic mode: 3x3 stride-1 cases, so
# that the Winograd stand-ins apply.
run "backward tuner" ADNN_TUNE=exhaustive ADNN_TUNE_BUDGET_MS=50 ADNN_LOG=debug \
  ADNN_DETERMINISTIC=1 ADNN_CONFORMANCE_FILTER="conv2d_backward" ADNN_CONFORMANCE_BACKEND=cuda \
  ADNN_EMU_CUDNN_BWD_DATA_ALGOS=ALGO_0,ALGO_1,WINOGRAD_NONFUSED \
  ADNN_EMU_CUDNN_BWD_FILTER_ALGOS=ALGO_0,ALGO_1,ALGO_3,WINOGRAD_NONFUSED
for name in cudnn:ALGO_1 cudnn:WINOGRAD_NONFUSED direct; do
  n=$(grep -c "tuner: $name: .* ms" "$work/err")
  [ "$n" -gt 0 ]
  check $? "[backward tuner] $name was selected and measured ($n times)"
done
n=$(grep -c 'tuner: cudnn:ALGO_[03]: .* ms' "$work/err")
[ "$n" -eq 0 ]
check $? "[backward tuner] the non-deterministic ALGO_0 / ALGO_3 were never measured ($n)"
grep -q 'tuner: chose .*2 non-deterministic candidates excluded (deterministic mode): cudnn:ALGO_0, cudnn:ALGO_3' "$work/err" &&
  grep -q 'tuner: chose .*1 non-deterministic candidate excluded (deterministic mode): cudnn:ALGO_0' "$work/err"
check $? "[backward tuner] the choice reasons name the excluded non-deterministic algorithms"
grep -m2 'tuner: chose .*non-deterministic' "$work/err" | sed 's/^/# /'

run "backward deterministic" ADNN_TUNE=off ADNN_DETERMINISTIC=1 \
  ADNN_CONFORMANCE_FILTER="conv2d_backward" ADNN_CONFORMANCE_BACKEND=cuda \
  ADNN_EMU_CUDNN_BWD_DATA_ALGOS=ALGO_0,ALGO_1 ADNN_EMU_CUDNN_BWD_FILTER_ALGOS=ALGO_0
! grep -q '\[auto\] (cudnn:ALGO_0' "$work/out" &&
  grep -q '^ok .* cuda conv2d_backward_data .*\[auto\] (cudnn:ALGO_1)' "$work/out"
check $? "[backward deterministic] backward data AUTO skips the non-deterministic ALGO_0 for ALGO_1"
grep -q '^ok .* cuda conv2d_backward_weights .*\[auto\] (direct)' "$work/out"
check $? "[backward deterministic] backward weights AUTO with only ALGO_0 offered runs the direct kernel"

run "backward workspace limit" ADNN_TUNE=off ADNN_TUNE_WORKSPACE_LIMIT=1000 \
  ADNN_CONFORMANCE_FILTER=1x1 ADNN_CONFORMANCE_BACKEND=cuda \
  ADNN_EMU_CUDNN_BWD_DATA_ALGOS=ALGO_1,ALGO_0
! grep -q '\[auto\] (cudnn:ALGO_1' "$work/out" &&
  grep -q '^ok .* cuda conv2d_backward_data .*\[auto\] (cudnn:ALGO_0)' "$work/out"
check $? "[backward workspace limit] AUTO skips ALGO_1 (1500-byte workspace) for ALGO_0 (500)"

# The finite-difference gradient checks (t/gradcheck-*) on the emulated plugin:
# each runs on every backend that makes a context, so here on cuda too.
for prog in "$build"/t/gradcheck-*; do
  case $prog in *.o | *.log | *.trs | *.c) continue ;; esac
  [ -f "$prog" ] && [ -x "$prog" ] || continue
  name=t/$(basename "$prog")
  run_prog=$prog
  run_prog_name=$name
  run "$name" ADNN_TUNE=off
  run_prog=
  run_prog_name=
  grep -q '^ok .* - cuda ' "$work/out"
  check $? "[$name] ran gradient checks on the cuda plugin"
done

# The attention kernels called through their launchers
# (t/cuda-emu/attention-kernels.cpp): the head-dim fallback, the F32 tiles of
# head dim 256 and grids smaller than the work, which t/conformance does not
# reach; compiled against the emulated kernels build.sh left in its objects.
obj=$work/plugin/obj
if "${CXX:-g++}" -std=c++17 -O1 -I"$src" -I"$src/include" -I"$build/include" -I"$build" \
  -I"$cuda/include" -I"$obj" -I"$src/t/cuda-emu" "$src/t/cuda-emu/attention-kernels.cpp" \
  "$obj/attention.o" "$obj/attention_backward.o" -o "$work/attention-kernels" -lpthread \
  >"$work/attention-kernels.log" 2>&1; then
  run_prog=$work/attention-kernels
  run_prog_name=t/cuda-emu/attention-kernels
  run t/cuda-emu/attention-kernels
  run_prog=
  run_prog_name=
else
  check 1 "t/cuda-emu/attention-kernels builds"
  diag_file "$work/attention-kernels.log"
fi

# The F16/BF16 kernels of activation, binary, pool2d and reduce against the
# CPU plugin bit for bit, where both compute a correctly rounded result
# (t/cuda-emu/lowp-bitexact.c), compiled against the library.
if "${CC:-gcc}" -std=gnu11 -O1 -I"$src" -I"$src/include" -I"$build/include" -I"$build" \
  "$src/t/cuda-emu/lowp-bitexact.c" -o "$work/lowp-bitexact" -L"$build/.libs" -ladnn \
  -Wl,-rpath,"$build/.libs" >"$work/lowp-bitexact.log" 2>&1; then
  run_prog=$work/lowp-bitexact
  run_prog_name=t/cuda-emu/lowp-bitexact
  run t/cuda-emu/lowp-bitexact ADNN_TUNE=off
  run_prog=
  run_prog_name=
else
  check 1 "t/cuda-emu/lowp-bitexact builds"
  diag_file "$work/lowp-bitexact.log"
fi

# The optimizer over several steps with adnn_plan_set_optimizer_step
# (t/optimizer-steps), which also runs on every backend that makes a context.
if [ -x "$build/t/optimizer-steps" ]; then
  run_prog=$build/t/optimizer-steps
  run_prog_name=t/optimizer-steps
  run t/optimizer-steps ADNN_TUNE=off
  run_prog=
  run_prog_name=
  grep -q '^ok .* - cuda .* match the oracle' "$work/out"
  check $? "[t/optimizer-steps] ran the multi-step optimizer checks on the cuda plugin"
fi

# The reorder op's conversions bit for bit (t/convert-exhaustive): every
# 16-bit pattern, the F32 sample and the F64 ties on the emulated plugin,
# which runs kernels/common/convert.h as its kernel does on a GPU.
if [ -x "$build/t/convert-exhaustive" ]; then
  run_prog=$build/t/convert-exhaustive
  run_prog_name=t/convert-exhaustive
  run t/convert-exhaustive ADNN_CPU_SIMD=avx2
  run_prog=
  run_prog_name=
  grep -q '^ok .* - cuda: f64 ties -> bf16' "$work/out"
  check $? "[t/convert-exhaustive] ran the conversion checks on the cuda plugin"
fi

echo "1..$count"
