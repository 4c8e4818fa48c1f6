#!/bin/sh
# adnn GPU check: build adnn from a release tarball on a machine with an NVIDIA
# GPU, run the whole test suite with the CUDA plugin, measure the overhead of
# the adnn layer on cuBLAS GEMM, and print a summary table last.
#
# Two steps, on two machines (see doc/gpu-check.md):
#
#   tools/gpu-check.sh prepare [CARRY_DIR]
#       On a build machine (Autotools, OpenBLAS installed from Debian packages,
#       a configured build tree): makes CARRY_DIR (default ./gpu-carry) with
#       the `make dist` tarball, this script, and the OpenBLAS files (and the
#       libgfortran/libquadmath they need) copied from this machine's Debian
#       packages. Needs no GPU.
#
#   sh CARRY_DIR/gpu-check.sh run [CARRY_DIR]
#       On the GPU machine (nvcc, a driver, NVIDIA's libraries as a toolkit or
#       as Python packages; no Autotools, no OpenBLAS needed): configures,
#       builds, runs `make check`, adnn-info and the benchmark. Logs go to $OUT
#       when set (else CARRY_DIR/logs). Aims to finish in under 5 minutes.
#
# Environment: BUILD_DIR (an existing configured build tree, for prepare; default
# the current directory), CUDA_HOME (the toolkit, default: where nvcc is, else
# /usr/local/cuda), PYTHON (to find NVIDIA's pip libraries, default python3),
# JOBS (make -j, default the number of CPUs), CUDA_ARCH_FLAGS (passed to
# configure; default sm_90 only, which is what the H200 needs, to save time).
set -eu

mode=${1:-run}
here=$(cd "$(dirname "$0")" && pwd)

log() { printf '%s\n' "gpu-check: $*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------------------
# prepare: on the build machine
# ---------------------------------------------------------------------------
prepare() {
  carry=${1:-gpu-carry}
  build=${BUILD_DIR:-.}
  [ -f "$build/Makefile" ] || die "no configured build tree in $build (set BUILD_DIR)"
  mkdir -p "$carry"
  carry=$(cd "$carry" && pwd)
  log "making the release tarball in $build"
  (cd "$build" && make dist >/dev/null) || die "make dist failed in $build"
  tarball=$(ls -t "$build"/adnn-*.tar.gz | head -n 1)
  cp "$tarball" "$carry/"
  cp "$here/gpu-check.sh" "$carry/gpu-check.sh" 2>/dev/null ||
    cp "$0" "$carry/gpu-check.sh"
  chmod +x "$carry/gpu-check.sh"
  # OpenBLAS from Debian: the library, its headers, and the Fortran runtime it
  # links against (the GPU machine may have none of them). Copied with their
  # paths, as `dpkg -x` would unpack them.
  rm -rf "$carry/openblas"
  mkdir -p "$carry/openblas"
  for pkg in libopenblas0-pthread libopenblas-pthread-dev libgfortran5 libquadmath0; do
    dpkg -L "$pkg" >/dev/null 2>&1 || die "Debian package $pkg is not installed here"
    dpkg -L "$pkg" | while read -r f; do
      case $f in
        */liblapack.*) ;; # not used by adnn; saves 7 MB
        *.so | *.so.* | *.h)
          if [ -f "$f" ] || [ -L "$f" ]; then
            mkdir -p "$carry/openblas$(dirname "$f")"
            cp -P "$f" "$carry/openblas$f"
          fi ;;
      esac
    done
  done
  # Debian's alternatives symlink libopenblas.so.0 lives in the parent
  # directory; the openblas-pthread directory has its own libopenblas.so.0.
  log "carry directory ready: $carry ($(du -sh "$carry" | cut -f1))"
  ls -la "$carry" >&2
}

# ---------------------------------------------------------------------------
# run: on the GPU machine
# ---------------------------------------------------------------------------

# Seconds since the epoch, for step timings.
now() { date +%s; }

# Records one summary row: step, result, seconds, note.
summary_rows=""
row() { summary_rows="$summary_rows$1|$2|$3|$4
"; }

# Runs a step with a time limit, its output in a log file; returns its status.
step() {
  name=$1 limit=$2
  shift 2
  t0=$(now)
  log "step $name (limit ${limit}s): $*"
  set +e
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  rc=$?
  set -e
  step_seconds=$(($(now) - t0))
  return $rc
}

# Finds NVIDIA's Python-package library roots (site-packages/nvidia/*).
nvidia_pip_roots() {
  py=${PYTHON:-python3}
  command -v "$py" >/dev/null 2>&1 || return 0
  "$py" - <<'EOF' 2>/dev/null || true
import glob, os, site, sys
dirs = []
try:
    dirs += site.getsitepackages()
except Exception:
    pass
dirs += [site.getusersitepackages()] + sys.path
seen = set()
for d in dirs:
    for root in sorted(glob.glob(os.path.join(d, "nvidia", "*"))):
        if os.path.isdir(root) and root not in seen:
            seen.add(root)
            print(root)
EOF
}

# Makes a toolkit-shaped directory ($1) whose include/ and lib64/ hold symlinks
# to the toolkit's files first and NVIDIA's pip packages' files second (the
# first file of a name wins, so a library's headers and its .so come from the
# same place), plus the unversioned .so names the linker needs and pip
# packages lack.
stage_cuda_root() {
  root=$1 toolkit=$2
  rm -rf "$root"
  mkdir -p "$root/include" "$root/lib64"
  sources="$toolkit"
  for p in $(nvidia_pip_roots); do sources="$sources $p"; done
  for src in $sources; do
    for inc in "$src/include" "$src/targets/x86_64-linux/include"; do
      [ -d "$inc" ] || continue
      for f in "$inc"/*; do
        [ -e "$root/include/$(basename "$f")" ] || ln -s "$f" "$root/include/"
      done
    done
    for lib in "$src/lib64" "$src/lib" "$src/targets/x86_64-linux/lib"; do
      [ -d "$lib" ] || continue
      for f in "$lib"/*.so* "$lib"/*.a; do
        [ -e "$f" ] || continue
        [ -e "$root/lib64/$(basename "$f")" ] || ln -s "$f" "$root/lib64/"
      done
    done
  done
  # libfoo.so.13 -> also libfoo.so, for -lfoo.
  for f in "$root"/lib64/*.so.*; do
    [ -e "$f" ] || continue
    base=$(basename "$f" | sed 's/\.so\..*$/.so/')
    [ -e "$root/lib64/$base" ] || ln -s "$(readlink "$f")" "$root/lib64/$base"
  done
}

run() {
  carry=${1:-$here}
  carry=$(cd "$carry" && pwd)
  logs=${OUT:-$carry/logs}
  mkdir -p "$logs"
  logs=$(cd "$logs" && pwd)
  start=$(now)
  jobs=${JOBS:-$(nproc 2>/dev/null || echo 4)}
  work=${GPU_CHECK_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/adnn-gpu-check.XXXXXX")}
  log "carry $carry, logs $logs, work $work"

  # --- the machine ---------------------------------------------------------
  {
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "host: $(uname -a)"
    echo "cpus: $jobs"
    command -v nvidia-smi >/dev/null 2>&1 &&
      nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1
    command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi 2>&1 | head -n 15
    echo "nvcc: $(command -v nvcc || echo none)"
    command -v nvcc >/dev/null 2>&1 && nvcc --version | tail -n 2
    echo "gcc: $(gcc --version 2>/dev/null | head -n 1)"
    echo "make: $(make --version 2>/dev/null | head -n 1)"
    echo "libcuda.so.1: $(ldconfig -p 2>/dev/null | grep 'libcuda.so.1 ' | head -n 1)"
    echo "NVIDIA pip packages:"
    nvidia_pip_roots | sed 's/^/  /'
  } >"$logs/machine.log" 2>&1 || true
  gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1 || true)
  row machine ok 0 "${gpu:-no nvidia-smi}"

  command -v make >/dev/null 2>&1 || die "make is missing on this machine"
  command -v gcc >/dev/null 2>&1 || command -v cc >/dev/null 2>&1 || die "no C compiler on this machine"

  # --- CUDA: toolkit plus NVIDIA's pip libraries ---------------------------
  nvcc_path=${NVCC:-$(command -v nvcc || true)}
  [ -n "$nvcc_path" ] || { [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] && nvcc_path=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc; }
  [ -n "$nvcc_path" ] || die "nvcc not found (set NVCC or CUDA_HOME)"
  toolkit=${CUDA_HOME:-$(cd "$(dirname "$(readlink -f "$nvcc_path")")/.." && pwd)}
  stage_cuda_root "$work/cuda-root" "$toolkit"
  { echo "=== staged CUDA root"; ls -la "$work/cuda-root/include" "$work/cuda-root/lib64"; } >>"$logs/machine.log" 2>&1 || true

  # The loader path for everything run below: the staged CUDA libraries (their
  # links keep cuDNN's $ORIGIN lookups inside one directory), the carried
  # OpenBLAS and Fortran runtime, and the driver's usual container location.
  ob=$carry/openblas
  obinc=$ob/usr/include/x86_64-linux-gnu/openblas-pthread
  oblib=$ob/usr/lib/x86_64-linux-gnu/openblas-pthread
  fortran=$ob/usr/lib/x86_64-linux-gnu
  driver_dirs=""
  if ! ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1 '; then
    for d in /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu /usr/lib64; do
      [ -e "$d/libcuda.so.1" ] && driver_dirs="$driver_dirs:$d"
    done
  fi
  LD_LIBRARY_PATH="$work/cuda-root/lib64:$oblib:$fortran$driver_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export LD_LIBRARY_PATH

  # Debian's OpenBLAS 0.3.21 does not know CPUs newer than it and falls back
  # to slow generic kernels; name a kernel family the CPU surely supports.
  if [ -z "${OPENBLAS_CORETYPE:-}" ] && [ -r /proc/cpuinfo ]; then
    if grep -q -m1 'avx512f' /proc/cpuinfo && grep -q -m1 GenuineIntel /proc/cpuinfo; then
      OPENBLAS_CORETYPE=SkylakeX
    elif grep -q -m1 'avx2' /proc/cpuinfo; then
      OPENBLAS_CORETYPE=Haswell
    fi
    [ -n "${OPENBLAS_CORETYPE:-}" ] && export OPENBLAS_CORETYPE
  fi

  # --- configure and build -------------------------------------------------
  tarball=$(ls -t "$carry"/adnn-*.tar.gz 2>/dev/null | head -n 1)
  [ -n "$tarball" ] || die "no adnn-*.tar.gz in $carry (run 'prepare' first)"
  tar -C "$work" -xzf "$tarball"
  src=$(ls -d "$work"/adnn-*/ | head -n 1)
  mkdir -p "$work/build"
  if [ -f "$obinc/cblas.h" ]; then
    OPENBLAS_CFLAGS="-I$obinc"
    OPENBLAS_LIBS="-L$oblib -lopenblas -Wl,-rpath-link,$fortran"
    [ -e "$oblib/libopenblas.so" ] || ln -s libopenblas.so.0 "$oblib/libopenblas.so" 2>/dev/null || true
    export OPENBLAS_CFLAGS OPENBLAS_LIBS
  fi
  arch=${CUDA_ARCH_FLAGS:-"-gencode=arch=compute_90,code=sm_90"}
  if step configure 180 sh -c "cd '$work/build' && '$src/configure' --with-cuda='$work/cuda-root' NVCC='$nvcc_path' CUDA_ARCH_FLAGS='$arch'"; then
    row configure ok "$step_seconds" "$(grep -m1 'CUDA plugin:' "$logs/configure.log" | sed 's/^ *//' | cut -c1-60)"
  else
    row configure FAIL "$step_seconds" "see configure.log / config.log"
    { echo "=== config.log"; cat "$work/build/config.log"; } >>"$logs/configure.log" 2>/dev/null || true
    print_summary
    exit 1
  fi
  if step build 300 make -C "$work/build" -j"$jobs"; then
    row build ok "$step_seconds" "make -j$jobs"
  else
    row build FAIL "$step_seconds" "see build.log"
    print_summary
    exit 1
  fi

  # --- tests -----------------------------------------------------------------
  if step check 300 make -C "$work/build" -j"$jobs" check; then check_result=ok; else check_result=FAIL; fi
  suite=$work/build/test-suite.log
  counts=$(grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' "$logs/check.log" | tr -d '#' | tr -s ' ' | tr '\n' ' ')
  row "make check" "$check_result" "$step_seconds" "$counts"
  # The CUDA tests' own output, whatever the outcome, for the record.
  # The device tool brings back at most 8 files, so the suite's log and the
  # CUDA tests' own TAP output (whatever the outcome) go into check.log.
  { echo "=== test-suite.log"; cat "$suite"; } >>"$logs/check.log" 2>/dev/null || true
  for t in "$work"/build/t/cuda-*.log; do
    [ -f "$t" ] && { echo "=== $(basename "$t")"; cat "$t"; }
  done >>"$logs/check.log" 2>&1 || true
  # The CUDA plugin's tests, and the conformance suite (every op on every
  # ready backend, so on cuda here) whatever its files are called.
  conf_tests=$(cd "$work/build" && ls t/conformance*.log 2>/dev/null | sed 's,^t/,,; s,\.log$,,' | tr '\n' ' ')
  for t in cuda-probe cuda-memory cuda-gemm cuda-plan-nodevice cuda-fake-driver cuda-compat $conf_tests; do
    f=$work/build/t/$t.log
    [ -f "$f" ] || continue
    res=$(sed -n 's/^:global-test-result: //p' "$work/build/t/$t.trs" 2>/dev/null | head -n 1)
    n_ok=$(grep -c '^ok ' "$f" || true)
    n_bad=$(grep -c '^not ok ' "$f" || true)
    skip=$(grep -m1 '^1\.\.0 # SKIP' "$f" | cut -c1-60 || true)
    row "  t/$t" "${res:-?}" - "ok $n_ok, not ok $n_bad ${skip}"
  done

  # --- conv2d backward on the GPU: cuDNN's backward algorithms under the tuner,
  # deterministic mode (ALGO_0 / ALGO_3 excluded and named in the reason), then
  # the plugin's own choices; appended to check.log (the tool's 8-file limit).
  conf=$work/build/t/conformance
  if [ -x "$conf" ]; then
    plugins_bwd="$work/build/backends/cpu/.libs:$work/build/backends/cuda/.libs"
    t0=$(now)
    bwd_res=ok
    for mode in "exhaustive 1" "off 0"; do
      # shellcheck disable=SC2086 # two words: the tuning mode, ADNN_DETERMINISTIC
      set -- $mode
      env ADNN_PLUGIN_PATH="$plugins_bwd" ADNN_CACHE_DIR="$work/bwd-cache" ADNN_LOG=debug \
        ADNN_TUNE=$1 ADNN_TUNE_BUDGET_MS=100 ADNN_DETERMINISTIC=$2 \
        ADNN_CONFORMANCE_FILTER=conv2d_backward ADNN_CONFORMANCE_BACKEND=cuda \
        timeout 120 "$conf" >"$work/bwd-$1.out" 2>"$work/bwd-$1.err" || bwd_res=FAIL
      { echo "=== conv2d backward on cuda, ADNN_TUNE=$1 ADNN_DETERMINISTIC=$2"
        grep -E '^(not ok|# backend cases)' "$work/bwd-$1.out"
        grep -E '^ok .*\[auto\]' "$work/bwd-$1.out" | sed 's/.*\[auto\] (\([^)]*\)).*/auto chose \1/' | sort | uniq -c
        grep 'tuner: chose' "$work/bwd-$1.err" | sed 's/.*tuner: chose //; s/ in [0-9]* ms//' | sort | uniq -c | sort -rn | head -n 8
      } >>"$logs/check.log" 2>&1
    done
    n_bad=$(cat "$work"/bwd-*.out | grep -c '^not ok' || true)
    n_ok=$(cat "$work"/bwd-*.out | grep -c '^ok ' || true)
    algos=$(cat "$work"/bwd-*.out | grep -o '\[auto\] (cudnn:[A-Z_0-9]*' | sed 's/.*(//' | sort -u | tr '\n' ' ')
    row "conv2d backward" "$bwd_res" $(($(now) - t0)) "ok $n_ok, not ok $n_bad; auto: ${algos:-none}"
  fi

  # --- matmul on the GPU: each of the plugin's paths in correctness mode
  # against the harness's oracle (cuBLASLt with its BIAS, RELU_BIAS and
  # GELU_BIAS epilogues and the residual as C, where cuBLASLt's GELU must
  # match our tanh GELU within the tolerance; cublasGemmStridedBatchedEx with
  # our epilogue kernel for the erf GELU and a strided bias; our direct kernel
  # for a layout cuBLAS cannot take is covered by t/conformance), F32 and
  # F64; appended to check.log.
  bench_tool=$work/build/tools/adnn-bench
  if [ -x "$bench_tool" ]; then
    plugins_mm="$work/build/backends/cpu/.libs:$work/build/backends/cuda/.libs"
    t0=$(now)
    mm_res=ok
    for dt in f32 f64; do
      env ADNN_PLUGIN_PATH="$plugins_mm" timeout 120 "$bench_tool" --backend=cuda --mode=corr \
        --dtype=$dt matmul:m257n129k70:tb:bias matmul:m257n129k70:tb:bias:relu \
        matmul:m257n129k70:tb:bias:gelu_tanh matmul:m128n768k768:batch8:tb:bias:gelu_tanh \
        matmul:m257n129k70:tb:bias:res:rs0.5 matmul:m257n129k70:tb:bias:res:inplace:gelu_tanh \
        matmul:m257n129k70:tb:bias:gelu matmul:m33n17k9:batch2x3:bbatch:ta:alpha0.5:silu \
        >"$work/matmul-$dt.out" 2>&1 || mm_res=FAIL
      { echo "=== matmul on cuda, $dt"; cat "$work/matmul-$dt.out"; } >>"$logs/check.log" 2>&1
    done
    n_ok=$(cat "$work"/matmul-*.out | grep -c '^cuda *ok' || true)
    n_all=$(cat "$work"/matmul-*.out | grep -c '^cuda ' || true)
    algos=$(cat "$work"/matmul-*.out | grep -o 'algorithm cuda:[a-z_]*' | sed 's/algorithm //' | sort | uniq -c | tr -s ' ' | tr '\n' ',')
    row "matmul" "$mm_res" $(($(now) - t0)) "ok $n_ok of $n_all; ${algos:-no algorithm}"
  fi

  # --- what adnn sees --------------------------------------------------------
  plugins="$work/build/backends/cpu/.libs:$work/build/backends/cuda/.libs"
  if step adnn-info 60 env ADNN_PLUGIN_PATH="$plugins" "$work/build/tools/adnn-info"; then
    row adnn-info ok "$step_seconds" "$(grep -m1 '^ *cuda ' "$logs/adnn-info.log" | sed 's/^ *//' | cut -c1-70)"
  else
    row adnn-info FAIL "$step_seconds" "see adnn-info.log"
  fi
  { echo "=== adnn-info --json"; env ADNN_PLUGIN_PATH="$plugins" timeout 60 "$work/build/tools/adnn-info" --json 2>/dev/null; } >>"$logs/adnn-info.log" || true

  # --- benchmark ---------------------------------------------------------------
  bench=$work/build/bench/gemm-cuda-overhead
  if [ ! -x "$bench" ]; then
    row bench FAIL 0 "bench/gemm-cuda-overhead was not built (no CUDA plugin?)"
  elif step bench 180 env ADNN_PLUGIN_PATH="$plugins" "$bench" 4096 15; then
    row bench ok "$step_seconds" "SGEMM/DGEMM 4096 and 64, adnn vs cuBLAS"
  elif [ "$rc" -eq 2 ]; then
    # The benchmark's "no usable CUDA device" exit: a dry run without a GPU.
    row bench SKIP "$step_seconds" "$(tail -n 1 "$logs/bench.log" | cut -c1-70)"
  else
    row bench FAIL "$step_seconds" "$(tail -n 1 "$logs/bench.log" 2>/dev/null | cut -c1-60)"
  fi

  # --- attention forward and backward (bench/attention-cuda) -----------------
  # F32 and F64, BHSD and BSHD, causal, GQA / MQA, S up to 16384: the cuda
  # results checked against the CPU plugin's on the smaller cases, every case
  # timed. Its output is appended to bench.log (the device tool brings back at
  # most 8 files).
  att=$work/build/bench/attention-cuda
  if [ ! -x "$att" ]; then
    row attention FAIL 0 "bench/attention-cuda was not built"
  elif step attention 150 env ADNN_PLUGIN_PATH="$plugins" "$att" 5; then
    row attention ok "$step_seconds" "$(grep -c '^RESULT' "$logs/attention.log") rows fwd/bwd, checked vs cpu"
  elif [ "$rc" -eq 2 ]; then
    row attention SKIP "$step_seconds" "$(tail -n 1 "$logs/attention.log" | cut -c1-70)"
  else
    row attention FAIL "$step_seconds" "$(grep -m1 'FAILED\|failed\|^#' "$logs/attention.log" | cut -c1-60)"
  fi
  { echo "=== bench/attention-cuda"; cat "$logs/attention.log"; } >>"$logs/bench.log" 2>/dev/null || true
  rm -f "$logs/attention.log"

  # --- every DNN op on realistic shapes, and PyTorch on the same ones --------
  # One log (ops-bench.log: the device tool brings back at most 8 files).
  if [ ! -x "$work/build/tools/adnn-bench" ]; then
    row ops-bench FAIL 0 "tools/adnn-bench was not built"
  elif step ops-bench 210 env ADNN_PLUGIN_PATH="$plugins" sh "$0" ops-bench "$work/build/tools/adnn-bench" "$src/bench/inputs/ops_cuda" "$work"; then
    row ops-bench ok "$step_seconds" "conv (fwd, bwd data, bwd weights)/pool/act/bn/softmax/layernorm/add via adnn-bench"
  elif [ "$rc" -eq 2 ]; then
    row ops-bench SKIP "$step_seconds" "$(tail -n 1 "$logs/ops-bench.log" | cut -c1-70)"
  else
    row ops-bench FAIL "$step_seconds" "$(grep -m1 'failed' "$logs/ops-bench.log" | cut -c1-60)"
  fi
  torch_ops "$logs/ops-torch.tmp"
  { echo "=== PyTorch on the same shapes"; cat "$logs/ops-torch.tmp"; } >>"$logs/ops-bench.log" 2>/dev/null || true
  rm -f "$logs/ops-torch.tmp"
  if grep -q '^TORCH ' "$logs/ops-bench.log" 2>/dev/null; then
    row torch ok - "$(grep -m1 '^# torch' "$logs/ops-bench.log" | cut -c3-70)"
  else
    row torch SKIP - "$(grep -m1 '^# ' "$logs/ops-bench.log" 2>/dev/null | cut -c3-70)"
  fi

  row total - $(($(now) - start)) "logs in $logs"
  print_summary
  [ "$check_result" = ok ]
}

# ops-bench TOOL PROBLEMS WORK: the ops of bench/inputs/ops_cuda timed by
# adnn-bench on cuda, NCHW and then NHWC for the convolutions (the lines of
# the file without ':'), printed as "RESULT op=<name> ms=<median> gflops=<g>
# gbs=<b> algo=<algorithm>" (name: the problem's name after _n, with the
# layout appended for a convolution) or "RESULT op=<name> failed=..." lines
# for the summary. Exit status 2 when adnn-bench has no usable cuda backend
# (a dry run without a GPU), 1 when a problem failed.
ops_bench() {
  tool=$1 problems=$2 scratch=$3
  set +e
  grep -v -e '^#' -e ':' "$problems" >"$scratch/ops-conv"
  status=0
  # The forward ops in NCHW, the convolutions in NHWC, and the convolutions'
  # backward data and backward weights (benchdnn's --dir) in NCHW.
  for run in nchw:FWD nhwc:FWD nchw:BWD_D nchw:BWD_W; do
    layout=${run%%:*} dir=${run#*:}
    list=$problems suffix=$layout dir_opt=
    [ "$layout" = nhwc ] && list=$scratch/ops-conv
    if [ "$dir" != FWD ]; then
      list=$scratch/ops-conv
      dir_opt=--dir=$dir
      suffix=${layout}_$(echo "$dir" | tr 'A-Z' 'a-z')
    fi
    out=$scratch/ops-$layout-$dir.txt
    # shellcheck disable=SC2086 # dir_opt is empty or one word
    "$tool" --backend=cuda --mode=perf --layout=$layout $dir_opt --warmup=2 --time-ms=300 \
      --batch="$list" >"$out" 2>&1
    rc=$?
    if [ "$rc" -eq 3 ] && grep -q '^adnn-bench: backend cuda' "$out"; then
      echo "ops-bench: no GPU: $(grep -m1 '^adnn-bench: backend cuda' "$out")"
      return 2
    fi
    if [ "$rc" -ne 0 ] && [ -n "$dir_opt" ] && ! grep -q '^cuda' "$out"; then
      # An adnn-bench without --dir: say so once per direction.
      echo "RESULT op=conv_$suffix failed=\"adnn-bench $dir_opt: $(head -n 1 "$out" | tr -d '"' | cut -c1-60)\""
      status=1
      continue
    fi
    [ "$rc" -eq 0 ] || status=1
    awk -v layout=$suffix '
      /^cuda/ { status = $2; i = index($3, "_n"); name = substr($3, i + 2); algo = ""; ms = ""; g = 0; b = 0; msg = "" }
      /^ *algorithm / { algo = $2 }
      /^ *median / { ms = $2; for (k = 3; k <= NF; k++) { if ($k == "GFLOP/s") g = $(k - 1); if ($k == "GB/s") b = $(k - 1) } }
      /^ *(plan creation|[A-Z_]+:)/ { msg = $0; sub(/^ */, "", msg) }
      /^ *repro: / {
        if (name ~ /^conv_/) name = name "_" layout
        if (status == "ok") printf "RESULT op=%s ms=%s gflops=%s gbs=%s algo=%s\n", name, ms, g, b, algo
        else printf "RESULT op=%s failed=\"%s: %s\"\n", name, status, msg
      }' "$out"
  done
  return $status
}

# PyTorch timings of the ops of bench/inputs/ops_cuda (same names, same shapes, FP32
# without TF32, cudnn.benchmark on), when torch with CUDA is importable here.
# Lines "TORCH op=<name> ms=<t>"; "# ..." lines say why not.
torch_ops() {
  out=$1
  py=${PYTHON:-python3}
  if ! command -v "$py" >/dev/null 2>&1; then echo "# no $py: no PyTorch comparison" >"$out"; return 0; fi
  timeout 90 "$py" - >"$out" 2>&1 <<'EOF' || echo "# the PyTorch comparison failed or timed out (exit $?)" >>"$out"
import sys
try:
    import torch
    import torch.nn.functional as F
except Exception as e:
    print("# PyTorch is not importable: %s" % e)
    sys.exit(0)
if not torch.cuda.is_available():
    print("# PyTorch %s sees no CUDA device" % torch.__version__)
    sys.exit(0)
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
dev = torch.device("cuda")
print("# torch %s, cuDNN %s, %s" % (torch.__version__, torch.backends.cudnn.version(),
                                     torch.cuda.get_device_name(0)))
REPEATS, WARM = 5, 2


def timeit(name, fn, iters=10):
    for _ in range(WARM):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(REPEATS):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(iters):
            fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) / iters)
    ts.sort()
    print("TORCH op=%s ms=%.4f" % (name, ts[len(ts) // 2]))
    sys.stdout.flush()


x = torch.full((1 << 28,), 0.0115, device=dev)
y = torch.empty_like(x)
timeit("copy_d2d_1GiB", lambda: y.copy_(x), 3)
del x, y
for nhwc in (0, 1):
    for label, c, h, k, r, s, p in [("stem7x7s2_3to64_224", 3, 224, 64, 7, 2, 3),
                                    ("3x3_64_56", 64, 56, 64, 3, 1, 1),
                                    ("1x1_64to256_56", 64, 56, 256, 1, 1, 0),
                                    ("3x3_128_28", 128, 28, 128, 3, 1, 1),
                                    ("3x3_256_14", 256, 14, 256, 3, 1, 1),
                                    ("3x3_512_7", 512, 7, 512, 3, 1, 1),
                                    ("1x1_2048to512_7", 2048, 7, 512, 1, 1, 0)]:
        x = torch.randn(32, c, h, h, device=dev)
        w = torch.randn(k, c, r, r, device=dev)
        if nhwc:
            x = x.to(memory_format=torch.channels_last)
            w = w.to(memory_format=torch.channels_last)
        timeit("conv_%s_%s" % (label, "nhwc" if nhwc else "nchw"),
               lambda: F.conv2d(x, w, stride=s, padding=p), 5)
        if not nhwc:
            # The backward directions as autograd runs them (cuDNN's
            # BackwardData / BackwardFilter under cudnn.benchmark).
            dy = torch.randn_like(F.conv2d(x, w, stride=s, padding=p))
            timeit("conv_%s_nchw_bwd_d" % label,
                   lambda: torch.nn.grad.conv2d_input(x.shape, w, dy, stride=s, padding=p), 5)
            timeit("conv_%s_nchw_bwd_w" % label,
                   lambda: torch.nn.grad.conv2d_weight(x, w.shape, dy, stride=s, padding=p), 5)
x = torch.randn(32, 64, 112, 112, device=dev)
timeit("maxpool3x3s2_32x64x112", lambda: F.max_pool2d(x, 3, 2, 1))
timeit("relu_32x64x112x112", lambda: F.relu(x))
v = [torch.rand(64, device=dev) + 0.5 for _ in range(4)]
timeit("batchnorm_relu_32x64x112x112",
       lambda: F.relu(F.batch_norm(x, v[2], v[3], v[0], v[1], training=False)))
x = torch.randn(4096, 4096, device=dev)
timeit("softmax_4096x4096", lambda: torch.softmax(x, -1))
x = torch.randn(8192, 4096, device=dev)
g, b = torch.ones(4096, device=dev), torch.zeros(4096, device=dev)
timeit("layernorm_8192x4096", lambda: F.layer_norm(x, (4096,), g, b))
del x
a, b2 = torch.randn(64 << 20, device=dev), torch.randn(64 << 20, device=dev)
y = torch.empty_like(a)
timeit("add_2x256MiB", lambda: torch.add(a, b2, out=y))
del a, b2, y
x = torch.randn(4096, 32000, device=dev)
t = torch.randint(0, 32000, (4096,), device=dev)
timeit("xent_4096x32000", lambda: F.cross_entropy(x, t))
xg = x.clone().requires_grad_()
loss = F.cross_entropy(xg, t)
timeit("xent_backward_4096x32000", lambda: torch.autograd.grad(loss, xg, retain_graph=True))
del x, xg, loss
p = torch.zeros(25557032, device=dev, requires_grad=True)
p.grad = torch.randn_like(p)
opt = torch.optim.AdamW([p], lr=1e-3, foreach=True)
timeit("adamw_25.6M_params", lambda: opt.step())
del p, opt
# Attention: PyTorch's fused scaled_dot_product_attention in FP32.
for s, causal, name in ((2048, True, "b1h12_s2048_d64_causal"), (8192, False, "b1h12_s8192_d64")):
    q, k, v = (torch.rand(1, 12, s, 64, device=dev) * 2 - 1 for _ in range(3))
    timeit("attention_" + name,
           lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), 5)
    if causal:
        qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
        out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=True)
        do = torch.rand_like(out)
        timeit("attention_backward_" + name,
               lambda: torch.autograd.grad(out, (qg, kg, vg), do, retain_graph=True), 5)
EOF
}

print_summary() {
  {
    echo
    echo "==== adnn GPU check summary ($(date -u '+%Y-%m-%d %H:%M UTC')) ===="
    printf '%s' "$summary_rows" | awk -F'|' '{ printf "%-22s %-6s %6s  %s\n", $1, $2, ($3 == "-" ? "" : $3 "s"), $4 }'
    if [ -f "$logs/bench.log" ] && grep -q '^op ' "$logs/bench.log"; then
      echo
      echo "GEMM through adnn vs cuBLAS called directly (median; latency rows per call):"
      sed -n '/^op /,$p' "$logs/bench.log" | sed '/^=== bench\/attention-cuda/,$d'
    fi
    if [ -f "$logs/bench.log" ] && grep -q '^RESULT op=attention_' "$logs/bench.log"; then
      echo
      echo "Attention through adnn on cuda (bench/attention-cuda; median ms; max_rel: vs the CPU plugin):"
      awk '/^RESULT op=attention_/ {
          for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
          if ($0 ~ /failed=/) { print "  " $0; next }
          printf "  %-40s %s %10s ms %8s TFLOP/s  max_rel %-9s %s%s\n", v["op"], v["dir"], v["ms"], v["tflops"], v["max_rel"], v["algo"], ($0 ~ /FAILED/ ? " FAILED" : "")
        }' "$logs/bench.log"
    fi
    if [ -f "$logs/ops-bench.log" ] && grep -q '^RESULT op=' "$logs/ops-bench.log"; then
      echo
      echo "DNN ops through adnn-bench (bench/inputs/ops_cuda), and PyTorch on the same shapes (ratio > 1: adnn slower;"
      echo "\"of copy\": GB/s as a fraction of PyTorch's 1 GiB device-to-device copy, read + write):"
      awk '
        /^TORCH op=/ { split($2, a, "="); split($3, b, "="); torch[a[2]] = b[2]; next }
        /^RESULT op=.*failed=/ { print "  " $0; next }
        /^RESULT op=/ {
          n++
          for (i = 2; i <= NF; i++) { split($i, kv, "="); v[n, kv[1]] = kv[2] }
          name[n] = v[n, "op"]
        }
        END {
          copy = ("copy_d2d_1GiB" in torch && torch["copy_d2d_1GiB"] > 0) ? 2 * 1073741824 / (torch["copy_d2d_1GiB"] * 1e6) : 0
          printf "  %-32s %9s %9s %8s %8s %9s %7s  %s\n", "op", "adnn ms", "GFLOP/s", "GB/s", "of copy", "torch ms", "ratio", "algorithm"
          for (i = 1; i <= n; i++) {
            op = name[i]; t = (op in torch) ? torch[op] : ""
            ratio = (t != "" && t > 0) ? sprintf("%.2f", v[i, "ms"] / t) : "-"
            frac = (copy > 0 && v[i, "gflops"] == 0 && v[i, "gbs"] > 0) ? sprintf("%.0f%%", 100 * v[i, "gbs"] / copy) : ""
            printf "  %-32s %9s %9s %8s %8s %9s %7s  %s\n", op, v[i, "ms"], (v[i, "gflops"] > 0 ? v[i, "gflops"] : ""), (v[i, "gbs"] > 0 ? v[i, "gbs"] : ""), frac, (t != "" ? t : "-"), ratio, v[i, "algo"]
          }
        }' "$logs/ops-bench.log"
      grep -m1 '^# torch\|^# PyTorch\|^# no ' "$logs/ops-bench.log" | sed 's/^# /  PyTorch: /' || true
    fi
  } | tee "$logs/summary.txt"
}

case $mode in
  prepare) shift; prepare "$@" ;;
  run) [ $# -gt 0 ] && shift; run "$@" ;;
  ops-bench) shift; ops_bench "$@" ;;
  *) die "usage: $0 prepare [CARRY_DIR] | run [CARRY_DIR]" ;;
esac
