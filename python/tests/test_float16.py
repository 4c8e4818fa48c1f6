"""The forward ops in float16 (NumPy's IEEE half; bfloat16 has no NumPy type and is
covered by the C conformance suite) against a float64 NumPy reference computed on the
same, already rounded, inputs. doc/numerics.md, "Low precision: F16 and BF16": each op's
F32 bound plus one rounding of the output, 2^-11, in both measures."""
import numpy as np
import pytest

import adnn
from conftest import check_close
from test_ops import ref_act, ref_conv2d

U16 = 2.0 ** -11
# F32 bounds (rel_l2, max_abs) of doc/numerics.md, as test_ops.TOL has them.
F32 = {"conv2d": (1e-5, 1e-4), "pool_avg": (1e-6, 1e-6), "activation": (4e-6, 1e-5),
       "softmax": (4e-6, 1e-5), "binary": (1e-6, 1e-6), "reduce_sum": (1e-6, 1e-6)}


def tol16(name):
    r, m = F32[name]
    return r + U16, m + U16


def half(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float16)


@pytest.mark.parametrize("stride,pad,groups,bias,act", [
    (1, 1, 1, True, "relu"), (2, 3, 1, False, "identity"), (1, 1, 8, True, "silu"),
    (1, 0, 1, True, "identity")])
def test_conv2d_f16(ctx, rng, stride, pad, groups, bias, act):
    r = 7 if pad == 3 else (1 if pad == 0 else 3)
    x = half(rng, (2, 8, 11, 10))
    w = half(rng, (8, 8 // groups, r, r), 0.3)
    b = half(rng, (8,)) if bias else None
    y = adnn.conv2d(ctx, x, w, b, stride=stride, padding=pad, groups=groups, activation=act)
    out = y.numpy()
    assert out.dtype == np.float16
    ref = ref_act(ref_conv2d(x, w, b, stride, pad, 1, groups), act)
    check_close(out, ref, *tol16("conv2d"))


def test_activation_softmax_binary_f16(ctx, rng):
    x = half(rng, (6, 37), 3.0)
    y = adnn.activation(ctx, x, activation="gelu").numpy()
    assert y.dtype == np.float16
    check_close(y, ref_act(x, "gelu"), *tol16("activation"))
    s = adnn.softmax(ctx, x, axis=1, log=False).numpy()
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    check_close(s, e / e.sum(axis=1, keepdims=True), *tol16("softmax"))
    b = half(rng, (6, 37))
    z = adnn.binary(ctx, x, b, op="mul", alpha=1.0, beta=1.0).numpy()
    check_close(z, x64 * b.astype(np.float64), *tol16("binary"))


def test_pool_reduce_f16(ctx, rng):
    x = half(rng, (2, 3, 8, 7))
    y = adnn.pool2d(ctx, x, kind="avg_include_pad", kernel=3, stride=2, padding=1).numpy()
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    p, q = (8 + 2 - 3) // 2 + 1, (7 + 2 - 3) // 2 + 1
    ref = np.zeros((2, 3, p, q))
    for i in range(p):
        for j in range(q):
            ref[:, :, i, j] = xp[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3].sum(axis=(2, 3)) / 9
    check_close(y, ref, *tol16("pool_avg"))
    m = adnn.pool2d(ctx, x, kind="max", kernel=3, stride=2, padding=1).numpy()
    assert m.dtype == np.float16
    r = adnn.reduce(ctx, x, kind="sum", axes=(2, 3), keep_dims=False).numpy()
    check_close(r, x.astype(np.float64).sum(axis=(2, 3)), *tol16("reduce_sum"))
