#!/usr/bin/env python3
"""loss_scale.py: adnn.loss_scale against PyTorch's foreach ops on the CPU.

PyTorch's GradScaler unscales gradients with
torch._amp_foreach_non_finite_check_and_unscale_, which the torch of Debian 12
(1.13) implements for CUDA only. The CPU peers here are therefore what a CPU
loop would write: "torch mul" is torch._foreach_mul_(grads, inv_scale) alone
(the multiply, no check: a lower bound on the work), "torch mul+check" adds
the check, torch.isfinite(g).all() per tensor (a second pass, as eager PyTorch
runs it). adnn's UNSCALE does the multiply and the check in one pass. All run
here on the same tensors (a
ResNet-50-sized gradient set by default: 25.6 M elements in 161 tensors,
float32, bfloat16 or float16), interleaved round by round on one "cpu"
context, so that the machine's noise hits both alike; each row is the median
of ROUNDS rounds and gives the bandwidth of the in-place update (read +
write). Scale 1 keeps the values unchanged from round to round.

adnn's bfloat16 tensors come from torch through DLPack (numpy has no
bfloat16); float32 and float16 are numpy arrays sharing torch's memory.

usage: python3 loss_scale.py [--rounds R] [--dtype f32|f16|bf16 ...] [--markdown]
"""
import argparse
import statistics
import time

import numpy as np
import torch

import adnn

# ResNet-50's parameter tensors (conv weights, batch-norm scale and shift,
# the classifier): the element counts of torchvision's model, largest first.
def resnet50_sizes():
    sizes = [2048 * 1000, 1000]
    cfg = [(64, 256, 3), (128, 512, 4), (256, 1024, 6), (512, 2048, 3)]
    cin = 64
    sizes += [64 * 3 * 7 * 7, 64, 64]
    for width, cout, blocks in cfg:
        for b in range(blocks):
            sizes += [width * cin, width, width, width * width * 9, width, width,
                      cout * width, cout, cout]
            if b == 0:
                sizes += [cout * cin, cout, cout]
            cin = cout
    return sizes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--dtype", nargs="*", default=["f32", "bf16", "f16"])
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(len(__import__("os").sched_getaffinity(0)))
    ctx = adnn.Context("cpu")
    sizes = resnet50_sizes()
    total = sum(sizes)
    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    rows = []
    for name in args.dtype:
        g = torch.Generator().manual_seed(7)
        grads = [torch.rand(n, generator=g, dtype=torch.float32).to(tdt[name]) for n in sizes]
        if name == "bf16":
            views = [adnn.from_dlpack(t, ctx) for t in grads]
        else:
            views = [t.numpy() for t in grads]
        inv = 1.0
        found_a = (adnn.from_dlpack(torch.zeros(1, dtype=tdt[name]), ctx) if name == "bf16"
                   else np.zeros(1, grads[0].numpy().dtype))
        scale = np.ones(1, np.float32)
        t_adnn, t_mul, t_check = [], [], []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            adnn.loss_scale(ctx, scale, tensors=views, found_inf=found_a)
            t1 = time.perf_counter()
            torch._foreach_mul_(grads, inv)
            t2 = time.perf_counter()
            torch._foreach_mul_(grads, inv)
            bad = not all(bool(torch.isfinite(x).all()) for x in grads)
            t3 = time.perf_counter()
            assert not bad
            t_adnn.append(t1 - t0)
            t_mul.append(t2 - t1)
            t_check.append(t3 - t2)
        es = grads[0].element_size()
        a, m, c = (statistics.median(v) for v in (t_adnn, t_mul, t_check))
        rows.append((name, a, m, c, 2 * total * es / a / 1e9))
    if args.markdown:
        print("| dtype | adnn ms (GB/s) | torch mul ms | torch mul+check ms | adnn vs mul | "
              "adnn vs mul+check |")
        print("|---|---|---|---|---|---|")
        for name, a, m, c, ba in rows:
            print(f"| {name} | {a * 1e3:.2f} ({ba:.1f}) | {m * 1e3:.2f} | {c * 1e3:.2f} | "
                  f"{m / a:.2f}x | {c / a:.2f}x |")
    else:
        for name, a, m, c, ba in rows:
            print(f"{name}: {len(sizes)} tensors, {total} elements: adnn {a * 1e3:.2f} ms "
                  f"({ba:.1f} GB/s), torch mul {m * 1e3:.2f} ms, mul+check {c * 1e3:.2f} ms: "
                  f"{m / a:.2f}x, {c / a:.2f}x")


if __name__ == "__main__":
    main()
