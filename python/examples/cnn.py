#!/usr/bin/env python3
"""cnn.py: examples/cnn-forward.c's network, driven from Python.

The same small convolutional network as the C example (NCHW, batch 4, 3x64x64):

  conv 3x3 3->16 (pad 1) + batch norm + relu      -> max pool 2x2/2
  conv 3x3 16->32 (pad 1) + bias + relu (fused)   -> max pool 3x3/2 (pad 1)
  conv 1x1 32->64 + bias + relu (fused)
  depthwise conv 3x3 64 (pad 1) + bias + silu (fused)
  global average pool (16x16)                      -> [4, 64]
  classifier: GEMM [4,64] x [64,10] + bias (broadcast add) -> softmax

run through adnn, and the same network written in NumPy (float64, on the same
float32 weights and images) as the reference. One difference in the op used:
the global average pool is adnn.reduce(kind="mean", axes=(2, 3)), which yields
the [4, 64] matrix the GEMM takes directly (the binding has no reshape); the
C example's 16x16 average pool2d computes the same numbers.

The network is NOT trained: its weights and images are pseudo-random numbers
from NumPy's generator with a fixed seed (not the C example's generator, so the
checksums of the two programs differ). The classes it prints are not
predictions; the comparison with NumPy is the point.

It prints the backend, the median time per pass, the error against NumPy, and
exits with status 1 when that error exceeds the tolerance below.

usage: python3 cnn.py [backend]     (default: auto)
"""
import sys
import time

import numpy as np

import adnn

BATCH, CLASSES, RUNS = 4, 10, 7
SEED = 2024

# Tolerance on the class probabilities, measured as doc/numerics.md measures one
# op (rel_l2 = ||y - r|| / ||r||, max_abs = max |y - r| / max(1, max |r|)), against
# the float64 reference. One F32 conv may be off by 1e-5 (rel_l2) and 1e-4
# (max_abs); errors of the network's 11 stages add up at most about linearly, and
# softmax does not amplify them here (the logits are of order 10), so ten times
# the conv bound is a bound for the whole pass that a wrong tap, padding row or
# bias still exceeds by orders of magnitude.
REL_L2, MAX_ABS = 1e-4, 1e-3


def weights(rng):
    """Float32 arrays of cnn-forward.c's shapes and scales (uniform in
    [offset - scale, offset + scale)); batch-norm variances stay positive."""
    def u(shape, scale, offset=0.0):
        return (offset + rng.uniform(-scale, scale, shape)).astype(np.float32)
    return dict(
        x=u((BATCH, 3, 64, 64), 1.0),
        w1=u((16, 3, 3, 3), 0.3),
        bn_scale=u(16, 0.2, 1.0), bn_shift=u(16, 0.1), bn_mean=u(16, 0.1), bn_var=u(16, 0.2, 1.0),
        w2=u((32, 16, 3, 3), 0.1), b2=u(32, 0.1),
        w3=u((64, 32, 1, 1), 0.2), b3=u(64, 0.1),
        w4=u((64, 1, 3, 3), 0.3), b4=u(64, 0.1),
        fc=u((64, CLASSES), 3.0), fcb=u(CLASSES, 0.1))


def forward_adnn(ctx, p):
    """One pass through adnn; returns the probabilities (an adnn.Tensor)."""
    y = adnn.conv2d(ctx, p["x"], p["w1"], padding=1)
    y = adnn.batchnorm(ctx, y, p["bn_scale"], p["bn_shift"], p["bn_mean"], p["bn_var"],
                       activation="relu")
    y = adnn.pool2d(ctx, y, kind="max", kernel=2, stride=2)
    y = adnn.conv2d(ctx, y, p["w2"], p["b2"], padding=1, activation="relu")
    y = adnn.pool2d(ctx, y, kind="max", kernel=3, stride=2, padding=1)
    y = adnn.conv2d(ctx, y, p["w3"], p["b3"], activation="relu")
    y = adnn.conv2d(ctx, y, p["w4"], p["b4"], padding=1, groups=64, activation="silu")
    y = adnn.reduce(ctx, y, kind="mean", axes=(2, 3))
    y = adnn.gemm(ctx, y, p["fc"])
    y = adnn.binary(ctx, y, p["fcb"], op="add")
    return adnn.softmax(ctx, y, axis=1)


# ---- the NumPy reference, in float64 ------------------------------------------------------

def conv2d_np(x, w, b=None, pad=0, groups=1):
    n, c, h, wd = x.shape
    k, cg, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (r, s), axis=(2, 3))  # n,c,oh,ow,r,s
    kg = k // groups
    out = np.concatenate([
        np.einsum("nchwrs,kcrs->nkhw", win[:, g * cg:(g + 1) * cg], w[g * kg:(g + 1) * kg])
        for g in range(groups)], axis=1)
    return out if b is None else out + b[None, :, None, None]


def maxpool_np(x, k, s, pad=0):
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=-np.inf)
    win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(2, 3))[:, :, ::s, ::s]
    return win.max(axis=(4, 5))


def forward_numpy(p):
    q = {name: v.astype(np.float64) for name, v in p.items()}
    relu = lambda v: np.maximum(v, 0.0)  # noqa: E731
    y = conv2d_np(q["x"], q["w1"], pad=1)
    bn = lambda v: v[None, :, None, None]  # noqa: E731
    y = relu((y - bn(q["bn_mean"])) / np.sqrt(bn(q["bn_var"]) + 1e-5) * bn(q["bn_scale"])
             + bn(q["bn_shift"]))
    y = maxpool_np(y, 2, 2)
    y = relu(conv2d_np(y, q["w2"], q["b2"], pad=1))
    y = maxpool_np(y, 3, 2, pad=1)
    y = relu(conv2d_np(y, q["w3"], q["b3"]))
    y = conv2d_np(y, q["w4"], q["b4"], pad=1, groups=64)
    y = y / (1.0 + np.exp(-y))  # silu
    y = y.mean(axis=(2, 3)) @ q["fc"] + q["fcb"]
    e = np.exp(y - y.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def to_numpy(t):
    """A host copy of an adnn tensor: a zero-copy view on the CPU backend; on
    CUDA through PyTorch, which takes the device memory through DLPack."""
    if t.__dlpack_device__()[0] == 1:  # kDLCPU
        return np.array(np.from_dlpack(t))
    import torch
    return torch.from_dlpack(t).cpu().numpy()


def main(argv):
    backend = argv[1] if len(argv) > 1 else "auto"
    params = weights(np.random.default_rng(SEED))
    with adnn.Context(backend) as ctx:
        times = []
        for run in range(RUNS + 1):  # run 0 is the warm-up (plan creation, tuning)
            t0 = time.perf_counter()
            probs_t = forward_adnn(ctx, params)
            ctx.synchronize()
            if run:
                times.append(time.perf_counter() - t0)
        probs = to_numpy(probs_t).astype(np.float64)
        ref = forward_numpy(params)
        cache = ctx.plan_cache_info()
        print(f"adnn {adnn.library_version}: cnn.py on backend {ctx.backend}: batch {BATCH}, "
              f"median {np.median(times) * 1e3:.3f} ms per pass "
              f"({RUNS} passes after a warm-up; plan cache: {cache})")
    print(f"  weights and images are pseudo-random (NumPy, seed {SEED}; untrained network): the\n"
          "  classes below are not predictions, they only show that adnn and NumPy agree")
    for b in range(BATCH):
        c = int(np.argmax(probs[b]))
        print(f"  image {b}: class {c} (p = {probs[b, c]:.4f}; NumPy: class "
              f"{int(np.argmax(ref[b]))}, p = {ref[b].max():.4f})")
    err = np.abs(probs - ref)
    rel_l2 = np.linalg.norm(probs - ref) / np.linalg.norm(ref)
    max_abs = err.max() / max(1.0, np.abs(ref).max())
    max_rel = (err / np.abs(ref)).max()
    ok = bool(rel_l2 <= REL_L2 and max_abs <= MAX_ABS and np.isfinite(probs).all())
    print(f"  vs NumPy (float64): max abs error {err.max():.3g}, max rel error {max_rel:.3g}, "
          f"rel_l2 {rel_l2:.3g} (bound {REL_L2:g}), max_abs {max_abs:.3g} (bound {MAX_ABS:g}): "
          f"{'PASS' if ok else 'FAIL'}")
    if not ok:
        print("cnn.py: adnn's result does not match NumPy's", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
