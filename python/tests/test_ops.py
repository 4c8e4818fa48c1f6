"""Every bound op against a NumPy implementation, at doc/numerics.md's tolerances."""
import math

import numpy as np
import pytest

import adnn
from conftest import check_close

# (F32 rel_l2, F32 max_abs, F64 rel_l2, F64 max_abs) from doc/numerics.md.
TOL = {
    "conv2d": (1e-5, 1e-4, 1e-12, 1e-11), "pool_max": (0, 0, 0, 0),
    "pool_avg": (1e-6, 1e-6, 1e-14, 1e-14), "activation": (4e-6, 1e-5, 1e-13, 1e-12),
    "softmax": (4e-6, 1e-5, 1e-13, 1e-12), "batchnorm": (2e-6, 1e-5, 1e-13, 1e-12),
    "norm": (1e-5, 5e-5, 1e-12, 1e-11), "binary": (1e-6, 1e-6, 4e-15, 4e-15),
    "reduce_sum": (1e-6, 1e-6, 1e-13, 1e-13), "reduce_max": (0, 0, 0, 0),
    # GEMM is a conv2d-like reduction: held to conv2d's bounds.
    "gemm": (1e-5, 1e-4, 1e-12, 1e-11),
}
DTYPES = [np.float32, np.float64]


def tol(name, dt):
    t = TOL[name]
    return t[:2] if dt == np.float32 else t[2:]


def data(rng, shape, dt, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dt)


def test_manifest_is_bound():
    # Every manifest row has a function whose tensor inputs are the manifest's.
    # A repeated input written name_0..name_{T-1} (the optimizer's gradients)
    # is bound as one sequence argument named names.
    import re
    for op, (manifest, inputs) in adnn._adnn._MANIFEST.items():
        manifest = re.sub(r"(\w+)_0\.\.\1_\{T-1\}", r"\1s", manifest)
        sig = ""
        for name, optional in inputs:
            sig += (f"[, {name}]" if optional else (", " if sig else "") + name)
        assert sig == manifest, f"{op}: binding inputs {sig!r} != manifest {manifest!r}"
        assert callable(getattr(adnn, op))
    assert set(adnn.OPS) == set(adnn._adnn._MANIFEST)


def ref_act(x, kind, alpha=0.0, beta=0.0):
    from math import erf
    f = {
        "identity": lambda v: v, "relu": lambda v: np.maximum(v, 0),
        "leaky_relu": lambda v: np.where(v >= 0, v, alpha * v),
        "elu": lambda v: np.where(v >= 0, v, alpha * np.expm1(np.minimum(v, 0))),
        "clamp": lambda v: np.minimum(np.maximum(v, alpha), beta),
        "sigmoid": lambda v: 1 / (1 + np.exp(-v)), "tanh": np.tanh,
        "gelu": lambda v: v * (1 + np.vectorize(erf)(v / math.sqrt(2))) / 2,
        "gelu_tanh": lambda v: v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3))) / 2,
        "silu": lambda v: v / (1 + np.exp(-v)), "softplus": lambda v: np.logaddexp(0, v),
        "hardswish": lambda v: v * np.clip(v + 3, 0, 6) / 6,
    }
    return f[kind](x.astype(np.float64))


def ref_conv2d(x, w, b, stride, pad, dil, groups):
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    n, c, h, wd = x.shape
    k, cg, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    p = (h + 2 * pad - dil * (r - 1) - 1) // stride + 1
    q = (wd + 2 * pad - dil * (s - 1) - 1) // stride + 1
    y = np.zeros((n, k, p, q))
    kg = k // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(r):
            for j in range(s):
                patch = xs[:, :, i * dil: i * dil + stride * (p - 1) + 1: stride,
                           j * dil: j * dil + stride * (q - 1) + 1: stride]
                y[:, g * kg:(g + 1) * kg] += np.einsum("nchw,kc->nkhw", patch,
                                                       w[g * kg:(g + 1) * kg, :, i, j])
    if b is not None:
        y += b.astype(np.float64)[None, :, None, None]
    return y


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("stride,pad,dil,groups,bias,act", [
    (1, 1, 1, 1, True, "relu"), (2, 0, 1, 1, False, "identity"), (1, 2, 2, 2, True, "tanh"),
    (1, 1, 1, 4, True, "identity")])
def test_conv2d(ctx, rng, dt, stride, pad, dil, groups, bias, act):
    x = data(rng, (2, 4, 9, 8), dt)
    w = data(rng, (8, 4 // groups, 3, 3), dt)
    b = data(rng, (8,), dt) if bias else None
    y = adnn.conv2d(ctx, x, w, b, stride=stride, padding=pad, dilation=dil, groups=groups,
                    activation=act)
    ref = ref_act(ref_conv2d(x, w, b, stride, pad, dil, groups), act)
    check_close(y.numpy(), ref, *tol("conv2d", dt))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("kind", ["max", "avg_include_pad", "avg_exclude_pad"])
def test_pool2d(ctx, rng, dt, kind):
    x = data(rng, (2, 3, 8, 7), dt)
    y = adnn.pool2d(ctx, x, kind=kind, kernel=3, stride=2, padding=1).numpy()
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=np.nan)
    p, q = (8 + 2 - 3) // 2 + 1, (7 + 2 - 3) // 2 + 1
    ref = np.zeros((2, 3, p, q))
    for i in range(p):
        for j in range(q):
            win = xp[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3]
            if kind == "max":
                ref[:, :, i, j] = np.nanmax(win, axis=(2, 3))
            elif kind == "avg_include_pad":
                ref[:, :, i, j] = np.nansum(win, axis=(2, 3)) / 9
            else:
                ref[:, :, i, j] = np.nanmean(win, axis=(2, 3))
    check_close(y, ref, *tol("pool_max" if kind == "max" else "pool_avg", dt))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("act", ["relu", ("leaky_relu", 0.1), ("elu", 0.7), ("clamp", -1, 2),
                                 "sigmoid", "tanh", "gelu", "gelu_tanh", "silu", "softplus",
                                 "hardswish"])
def test_activation(ctx, rng, dt, act):
    x = data(rng, (5, 33), dt, 3.0)
    y = adnn.activation(ctx, x, activation=act).numpy()
    kind, *ab = act if isinstance(act, tuple) else (act,)
    check_close(y, ref_act(x, kind, *ab), *tol("activation", dt))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("axis,log", [(-1, False), (1, True), (0, False)])
def test_softmax(ctx, rng, dt, axis, log):
    x = data(rng, (4, 6, 5), dt, 5.0)
    y = adnn.softmax(ctx, x, axis=axis, log=log).numpy()
    x64 = x.astype(np.float64)
    z = x64 - x64.max(axis=axis, keepdims=True)
    ref = z - np.log(np.exp(z).sum(axis=axis, keepdims=True))
    check_close(y, ref if log else np.exp(ref), *tol("softmax", dt))


@pytest.mark.parametrize("dt", DTYPES)
def test_batchnorm(ctx, rng, dt):
    x = data(rng, (2, 5, 4, 3), dt)
    scale, shift, mean = (data(rng, (5,), dt) for _ in range(3))
    var = (rng.random(5) + 0.5).astype(dt)
    y = adnn.batchnorm(ctx, x, scale, shift, mean, var, epsilon=1e-3, activation="relu").numpy()
    c = lambda v: v.astype(np.float64)[None, :, None, None]
    ref = np.maximum(c(scale) * (x - c(mean)) / np.sqrt(c(var) + 1e-3) + c(shift), 0)
    check_close(y, ref, *tol("batchnorm", dt))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("kind,norm_dims,gain,bias", [
    ("layer", 1, True, True), ("layer", 2, False, True), ("rms", 1, True, False),
    ("rms", 2, False, False)])
def test_norm(ctx, rng, dt, kind, norm_dims, gain, bias):
    x = data(rng, (3, 4, 7), dt) + 4
    d = 7 if norm_dims == 1 else 28
    g = data(rng, (d,), dt) if gain else None
    b = data(rng, (d,), dt) if bias else None
    y = adnn.norm(ctx, x, g, b, kind=kind, norm_dims=norm_dims, epsilon=1e-5).numpy()
    rows = x.astype(np.float64).reshape(-1, d)
    if kind == "layer":
        ref = (rows - rows.mean(1, keepdims=True)) / np.sqrt(rows.var(1, keepdims=True) + 1e-5)
    else:
        ref = rows / np.sqrt((rows**2).mean(1, keepdims=True) + 1e-5)
    if gain:
        ref = ref * g
    if bias:
        ref = ref + b
    check_close(y, ref.reshape(x.shape), *tol("norm", dt))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "max", "min"])
@pytest.mark.parametrize("sa,sb", [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,))])
def test_binary(ctx, rng, dt, op, sa, sb):
    a, b = data(rng, sa, dt), data(rng, sb, dt)
    y = adnn.binary(ctx, a, b, op=op, alpha=0.5, beta=2.0).numpy()
    f = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
         "max": np.maximum, "min": np.minimum}[op]
    check_close(y, f(0.5 * a.astype(np.float64), 2.0 * b.astype(np.float64)), *tol("binary", dt))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("kind", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("axes,keep", [((2, 3), True), (1, False), ((0, 1, 2, 3), False), (-1, True)])
def test_reduce(ctx, rng, dt, kind, axes, keep):
    x = data(rng, (2, 3, 4, 5), dt)
    y = adnn.reduce(ctx, x, kind=kind, axes=axes, keep_dims=keep).numpy()
    f = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}[kind]
    ref = f(x.astype(np.float64), axis=axes, keepdims=keep)
    check_close(y, ref, *tol("reduce_max" if kind in ("max", "min") else "reduce_sum", dt))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_gemm(ctx, rng, dt, ta, tb):
    m, n, k = 7, 5, 9
    a = data(rng, (k, m) if ta else (m, k), dt)
    b = data(rng, (n, k) if tb else (k, n), dt)
    c = data(rng, (m, n), dt)
    out = c.copy()
    y = adnn.gemm(ctx, a, b, out=out, alpha=1.5, beta=0.5, trans_a=ta, trans_b=tb)
    opa = a.T if ta else a
    opb = b.T if tb else b
    ref = 1.5 * opa.astype(np.float64) @ opb.astype(np.float64) + 0.5 * c
    check_close(out, ref, *tol("gemm", dt))  # out= wrote into the NumPy array itself
    check_close(y.numpy(), ref, *tol("gemm", dt))


def test_gemm_column_major_views(ctx, rng):
    a = data(rng, (6, 4), np.float32)
    b = data(rng, (5, 6), np.float32)
    y = adnn.gemm(ctx, a.T, b.T)  # strided transposed views, no copies
    check_close(y.numpy(), a.T.astype(np.float64) @ b.T, *tol("gemm", np.float32))


def test_out_and_strided_inputs(ctx, rng):
    big = data(rng, (6, 10), np.float32)
    x = big[::2, 1:9]  # non-contiguous view
    out = np.full((6, 10), 7.0, np.float32)
    adnn.activation(ctx, x, activation="relu", out=out[1::2, :8])
    check_close(out[1::2, :8], np.maximum(x, 0), 0, 0)
    assert np.all(out[0::2] == 7.0) and np.all(out[:, 8:] == 7.0), "gaps of out were written"


def test_plan_cache_pays_creation_once(ctx, rng):
    x = data(rng, (1, 8, 16, 16), np.float32)
    w = data(rng, (8, 4, 3, 3), np.float32)
    before = ctx.plan_cache_info()
    for _ in range(50):
        adnn.conv2d(ctx, x, w, padding=1, groups=2)
    after = ctx.plan_cache_info()
    assert after["misses"] - before["misses"] == 1, (before, after)
    assert after["hits"] - before["hits"] == 49, (before, after)
    adnn.conv2d(ctx, x, w, padding=2, groups=2)  # another problem: another plan
    assert ctx.plan_cache_info()["misses"] - after["misses"] == 1
