#!/bin/sh
# Reproduces the "Attention" section of doc/performance.md with one command:
#
#   bench/run-attention-perf.sh [BUILDDIR] [attention-perf options...]
#
# (BUILDDIR defaults to the current directory.) It prints the machine (CPU
# model, the instruction-set flags that matter, CPU count, load average), the
# date, then, in the same run:
#   1. bench/attention-perf: fused attention (adnn_attention and
#      adnn_attention_backward) against the unfused composition through adnn
#      (batched GEMM, softmax, batched GEMM; backward with softmax_backward),
#      H = 12, D = 64, B = 1, S in {512, 2048, 8192, 16384}, causal and not,
#      each problem in its own child process (peak RSS from VmHWM); options
#      after BUILDDIR are passed to it (e.g. --sizes 512,2048);
#   2. PyTorch's CPU softmax(q k^T) v as a peer when `python3 -c 'import torch'`
#      works (it says so when it does not), each problem in its own python3
#      process (peak RSS from ru_maxrss);
#   3. examples/transformer-block at 8 x 128 and 1 x 2048 (ms per BERT-base
#      layer, fused and unfused), unless BERT=0.
# Environment: THREADS (default 2, for adnn, OpenBLAS and PyTorch alike),
# CORETYPE (default SkylakeX: OPENBLAS_CORETYPE for this script's commands,
# because Debian 12's OpenBLAS 0.3.21 misdetects this Xeon and runs SSE3
# kernels otherwise (doc/cpu.md), which would slow the unfused path's SGEMMs;
# CORETYPE=default leaves OpenBLAS to detect), BERT (1), TORCH_RUNS (5).
# The machine is shared with other engineers' builds: the script prints the
# load average before and after; rerun when it was high.
set -u
build=$(cd "${1:-.}" && pwd) || exit 2
[ $# -gt 0 ] && shift
perf=$build/bench/attention-perf
block=$build/examples/transformer-block
[ -x "$perf" ] || { echo "run-attention-perf: $perf is not built (make in $build)" >&2; exit 2; }

threads=${THREADS:-2}
ADNN_PLUGIN_PATH=${ADNN_PLUGIN_PATH:-$build/backends/cpu/.libs}
ADNN_NUM_THREADS=$threads
OMP_NUM_THREADS=$threads
OPENBLAS_NUM_THREADS=$threads
ADNN_LOG=error
export ADNN_PLUGIN_PATH ADNN_NUM_THREADS OMP_NUM_THREADS OPENBLAS_NUM_THREADS ADNN_LOG
unset ADNN_TUNE ADNN_CPU_SIMD ADNN_BACKEND
coretype=${CORETYPE:-SkylakeX}
if [ "$coretype" = default ]; then unset OPENBLAS_CORETYPE; else OPENBLAS_CORETYPE=$coretype; export OPENBLAS_CORETYPE; fi

echo "run-attention-perf: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs;" \
  "ISA flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|avx512bw|avx512vl|avx512_bf16|avx512_fp16|amx_tile)$' | tr '\n' ' ')"
echo "threads: $threads; OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-<unset>}; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "The machine is shared with other engineers' builds and tests: expect noise (medians below)."
echo

"$perf" "$@"
echo

# The PyTorch peer: forward only (softmax(scale q k^T + mask) v, the unfused
# composition PyTorch users write), all heads at once up to 1 GiB of scores,
# else one head at a time, as bench/attention-perf does.
if ! torch_err=$(python3 -c 'import torch' 2>&1); then
  echo "PyTorch peer: not run: python3 -c 'import torch' fails on this machine" \
    "($(printf '%s' "$torch_err" | tail -n 1))"
else
  echo "PyTorch peer (torch $(python3 -c 'import torch; print(torch.__version__)'), $threads threads, forward only):"
  echo "| S | mask | torch fwd ms (runs) | peak RSS MiB (ru_maxrss) |"
  echo "|---|---|---|---|"
  for s in 512 2048 8192 16384; do
    for causal in 0 1; do
      python3 - "$s" "$causal" "$threads" "${TORCH_RUNS:-5}" <<'EOF'
import resource, statistics, sys, time
import torch
s, causal, threads, runs = (int(a) for a in sys.argv[1:5])
torch.set_num_threads(threads)
h, d = 12, 64
torch.manual_seed(0)
q, k, v = (torch.rand(1, h, s, d) * 2 - 1 for _ in range(3))
group = h if h * s * s * 4 <= (1 << 30) else 1
mask = torch.full((s, s), float("-inf")).triu(1) if causal else None
def forward():
    outs = []
    for h0 in range(0, h, group):
        sl = slice(h0, h0 + group)
        p = torch.matmul(q[:, sl], k[:, sl].transpose(-1, -2)) * d ** -0.5
        if mask is not None:
            p = p + mask
        outs.append(torch.matmul(torch.softmax(p, dim=-1), v[:, sl]))
    return torch.cat(outs, dim=1)
forward()
times = []
for _ in range(runs):
    t0 = time.perf_counter()
    forward()
    times.append((time.perf_counter() - t0) * 1e3)
    if len(times) >= 3 and sum(times) > 20e3:
        break
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print("| %d | %s | %.1f (%d) | %.0f |" % (s, "causal" if causal else "none",
      statistics.median(times), len(times), rss))
EOF
    done
  done
fi
echo

if [ "${BERT:-1}" != 0 ] && [ -x "$block" ]; then
  echo "BERT-base encoder layer (examples/transformer-block --runs 5):"
  "$block" --backend cpu --runs 5
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
