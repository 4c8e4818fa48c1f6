"""The training and attention ops in float16 through the binding: float16 data with
float32 parameters and statistics (batch norm's scale, shift and saved / running
statistics and their gradients, norm's gain and its gradients, attention's lse). The
contract checked (doc/numerics.md, "Low precision"): each float16 output is the op's
float32 result on the same, already rounded, inputs, rounded once to float16; on the
CPU backend (conftest.py's context) that float32 result is adnn's own float32 plan
(kernels/cpu/lowp_widen.c), so the comparison is exact. bfloat16 has no NumPy type: the C suites cover it (t/cpu-lowp-widen.c and
the conformance harness)."""
import numpy as np
import pytest

import adnn



def half(rng, shape, scale=1.0, shift=0.0):
    return (rng.standard_normal(shape) * scale + shift).astype(np.float16)


def same16(got, want32):
    """got (float16) is want32 (float32) rounded once, bit for bit (the CPU context of
    conftest.py)."""
    got = np.asarray(got)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, np.asarray(want32, dtype=np.float32).astype(np.float16))


def same32(got, want32):
    got = np.asarray(got)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.asarray(want32))


def f32(a):
    return a.astype(np.float32)


def test_batchnorm_training_and_backward_f16(ctx, rng):
    x = half(rng, (3, 5, 7, 9), 1.0, 0.5)
    scale = rng.uniform(0.5, 1.5, 5).astype(np.float32)
    shift = rng.uniform(-1, 1, 5).astype(np.float32)
    rm16, rv16 = np.zeros(5, np.float32), np.ones(5, np.float32)
    rm32, rv32 = rm16.copy(), rv16.copy()
    y, mean, inv = adnn.batchnorm_training(ctx, x, scale, shift, running_mean=rm16,
                                           running_var=rv16, momentum=0.1)
    y32, mean32, inv32 = adnn.batchnorm_training(ctx, f32(x), scale, shift, running_mean=rm32,
                                                 running_var=rv32, momentum=0.1)
    same16(y.numpy(), y32.numpy())
    same32(mean.numpy(), mean32.numpy())
    same32(inv.numpy(), inv32.numpy())
    same32(rm16, rm32)
    same32(rv16, rv32)
    dy = half(rng, x.shape)
    dx, dscale, dshift = adnn.batchnorm_backward(ctx, x, dy, scale, mean.numpy(), inv.numpy())
    dx32, ds32, dsh32 = adnn.batchnorm_backward(ctx, f32(x), f32(dy), scale, mean.numpy(),
                                                inv.numpy())
    same16(dx.numpy(), dx32.numpy())
    same32(dscale.numpy(), ds32.numpy())
    same32(dshift.numpy(), dsh32.numpy())
    with pytest.raises(TypeError):  # a float16 scale with float16 x
        adnn.batchnorm_training(ctx, x, scale.astype(np.float16), shift, running_mean=rm16,
                                running_var=rv16)


@pytest.mark.parametrize("kind,bias", [("layer", True), ("rms", False)])
def test_norm_backward_f16(ctx, rng, kind, bias):
    x = half(rng, (4, 67), 1.0, 2.0)
    dy = half(rng, x.shape)
    g = rng.uniform(0.5, 1.5, 67).astype(np.float32)
    dx, dg, db = adnn.norm_backward(ctx, x, dy, g, kind=kind, has_bias=bias)
    dx32, dg32, db32 = adnn.norm_backward(ctx, f32(x), f32(dy), g, kind=kind, has_bias=bias)
    same16(dx.numpy(), dx32.numpy())
    same32(dg.numpy(), dg32.numpy())
    if bias:
        same32(db.numpy(), db32.numpy())
    with pytest.raises(TypeError):
        adnn.norm_backward(ctx, x, dy, g.astype(np.float16), kind=kind, has_bias=bias)


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_softmax_cross_entropy_f16(ctx, rng, reduction):
    logits = half(rng, (13, 37), 2.0)
    labels = rng.integers(0, 37, 13).astype(np.int32)
    loss = adnn.softmax_cross_entropy(ctx, logits, labels, reduction=reduction)
    loss32 = adnn.softmax_cross_entropy(ctx, f32(logits), labels, reduction=reduction)
    same16(loss.numpy(), loss32.numpy())
    dloss = half(rng, (13,) if reduction == "none" else ())
    dx = adnn.softmax_cross_entropy_backward(ctx, logits, labels, dloss, reduction=reduction)
    dx32 = adnn.softmax_cross_entropy_backward(ctx, f32(logits), labels, f32(dloss),
                                               reduction=reduction)
    same16(dx.numpy(), dx32.numpy())


@pytest.mark.parametrize("causal", [False, True])
def test_attention_and_backward_f16(ctx, rng, causal):
    q, k, v = half(rng, (2, 3, 17, 16)), half(rng, (2, 3, 19, 16)), half(rng, (2, 3, 19, 16))
    o, lse = adnn.attention(ctx, q, k, v, causal=causal)
    o32, lse32 = adnn.attention(ctx, f32(q), f32(k), f32(v), causal=causal)
    same16(o.numpy(), o32.numpy())
    same32(lse.numpy(), lse32.numpy())
    do = half(rng, o.numpy().shape)
    dq, dk, dv = adnn.attention_backward(ctx, q, k, v, o.numpy(), do, lse.numpy(), causal=causal)
    g32 = adnn.attention_backward(ctx, f32(q), f32(k), f32(v), f32(o.numpy()), f32(do),
                                  lse.numpy(), causal=causal)
    for got, want in zip((dq, dk, dv), g32):
        same16(got.numpy(), want.numpy())
    with pytest.raises(TypeError):  # lse is float32 for float16 data
        adnn.attention_backward(ctx, q, k, v, o.numpy(), do, lse.numpy().astype(np.float16))


def test_conv2d_backward_f16(ctx, rng):
    xs, ws = (2, 5, 9, 11), (7, 5, 3, 3)
    x, w, dy = half(rng, xs), half(rng, ws, 0.3), half(rng, (2, 7, 9, 11))
    dx = adnn.conv2d_backward_data(ctx, dy, w, x_shape=xs, stride=1, padding=1)
    dx32 = adnn.conv2d_backward_data(ctx, f32(dy), f32(w), x_shape=xs, stride=1, padding=1)
    same16(dx.numpy(), dx32.numpy())
    dw, db = adnn.conv2d_backward_weights(ctx, x, dy, w_shape=ws, stride=1, padding=1, bias=True)
    dw32, db32 = adnn.conv2d_backward_weights(ctx, f32(x), f32(dy), w_shape=ws, stride=1,
                                              padding=1, bias=True)
    same16(dw.numpy(), dw32.numpy())
    same16(db.numpy(), db32.numpy())
