"""adnn.matmul (the GEMM with a fused epilogue) against NumPy in float64, at
doc/numerics.md's matmul bounds (GEMM's, doubled for the epilogue)."""
import math

import numpy as np
import pytest

import adnn
from conftest import check_close

DTYPES = [np.float32, np.float64]


def tol(dt):
    return (2e-5, 2e-4) if dt == np.float32 else (2e-12, 2e-11)


def data(rng, shape, dt):
    return rng.uniform(-1.0, 1.0, shape).astype(dt)


def gelu(v):
    return 0.5 * v * (1.0 + np.vectorize(math.erf)(v / math.sqrt(2.0)))


@pytest.mark.parametrize("dt", DTYPES)
def test_linear_layer_with_torch_weight_layout(ctx, rng, dt):
    # PyTorch's Linear weight W [N, K] (row-major) is b = W.T: a strided view,
    # no copy.
    x, w, bias = data(rng, (2, 7, 9), dt), data(rng, (5, 9), dt), data(rng, (5,), dt)
    y = adnn.matmul(ctx, x, w.T, bias, activation="gelu").numpy()
    ref = gelu(x.astype(np.float64) @ w.T.astype(np.float64) + bias)
    check_close(y, ref, *tol(dt))


@pytest.mark.parametrize("dt", DTYPES)
def test_residual_scaled_and_in_place(ctx, rng, dt):
    a, b = data(rng, (6, 4), dt), data(rng, (4, 3), dt)
    r = data(rng, (6, 3), dt)
    y = adnn.matmul(ctx, a, b, residual=r, alpha=0.5, residual_scale=-2.0).numpy()
    ref = 0.5 * (a.astype(np.float64) @ b) - 2.0 * r.astype(np.float64)
    check_close(y, ref, *tol(dt))
    # out=residual: the residual is read and y written in the same buffer.
    r2 = r.copy()
    adnn.matmul(ctx, a, b, residual=r2, out=r2, activation="relu")
    check_close(r2, np.maximum(a.astype(np.float64) @ b + r, 0.0), *tol(dt))


def test_batched_b_and_broadcast(ctx, rng):
    a = data(rng, (2, 3, 5, 4), np.float32)
    b = data(rng, (3, 4, 6), np.float32)  # rank 3 under rank 4: broadcast from the right
    y = adnn.matmul(ctx, a, b).numpy()
    check_close(y, a.astype(np.float64) @ b.astype(np.float64), *tol(np.float32))


def test_bad_shapes_are_refused(ctx, rng):
    a, b = data(rng, (4, 3), np.float32), data(rng, (4, 5), np.float32)
    with pytest.raises(adnn.Error, match="inner dims"):
        adnn.matmul(ctx, a, b)
    with pytest.raises(adnn.Error, match="bias has 3 elements"):
        adnn.matmul(ctx, a, data(rng, (3, 5), np.float32), data(rng, (3,), np.float32))


def test_f16_inputs_into_f32(ctx, rng):
    # F16 inputs, F32 accumulation and output: within K * 2^-24 * sum|a||b|
    # of the exact product of the rounded inputs (doc/numerics.md).
    a = rng.uniform(-1, 1, (33, 70)).astype(np.float16)
    b = rng.uniform(-1, 1, (70, 19)).astype(np.float16)
    out = np.full((33, 19), np.nan, np.float32)
    adnn.matmul(ctx, a, b, out=out)
    want = a.astype(np.float64) @ b.astype(np.float64)
    bound = 70 * 2.0**-24 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    assert np.all(np.abs(out - want) <= bound + 2.0**-24 * np.abs(want))


def test_s8_inputs_into_i32_exact(ctx, rng):
    a = rng.integers(-128, 128, (17, 45)).astype(np.int8)
    b = rng.integers(-128, 128, (45, 23)).astype(np.int8)
    out = np.full((17, 23), 7777777, np.int32)
    adnn.matmul(ctx, a, b, out=out)
    assert np.array_equal(out, a.astype(np.int64) @ b.astype(np.int64))


def test_u8_s8_requantized_per_channel(ctx, rng):
    a = rng.integers(0, 256, (9, 31)).astype(np.uint8)
    b = rng.integers(-128, 128, (31, 12)).astype(np.int8)
    scales = rng.uniform(0.0005, 0.002, 12).astype(np.float32)
    out = np.zeros((9, 12), np.uint8)
    adnn.matmul(ctx, a, b, requant_scales=scales, y_zero_point=100, out=out)
    acc = a.astype(np.int64) @ b.astype(np.int64)
    want = np.clip(np.rint(acc * scales.astype(np.float64)) + 100, 0, 255)
    assert np.array_equal(out, want.astype(np.uint8))
