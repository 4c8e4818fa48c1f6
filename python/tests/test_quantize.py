"""adnn.quantize / adnn.dequantize against NumPy, exactly: numpy's float32
division is the IEEE F32 quotient and np.rint rounds half to even, the
definition of doc/ops.md."""
import numpy as np
import pytest

import adnn


def np_quantize(x, scale, zp, dtype):
    info = np.iinfo(dtype)
    q = np.rint(np.float32(x) / np.float32(scale))
    q = np.where(np.isnan(q), 0, q)
    return np.clip(q.astype(np.float64) + zp, info.min, info.max).astype(dtype)


@pytest.mark.parametrize("dtype,zp", [(np.int8, -3), (np.uint8, 128)])
def test_quantize_per_tensor(ctx, rng, dtype, zp):
    x = rng.uniform(-60, 60, 1001).astype(np.float32)
    x[:8] = [0.125, 0.375, -0.125, 1e6, -1e6, np.nan, np.inf, -np.inf]
    y = np.full(x.shape, 7, dtype)
    adnn.quantize(ctx, x, scale=0.25, zero_point=zp, out=y)
    assert np.array_equal(y, np_quantize(x, 0.25, zp, dtype))


def test_quantize_per_channel(ctx, rng):
    x = rng.uniform(-10, 10, (2, 5, 7)).astype(np.float32)
    scales = rng.uniform(0.02, 0.2, 5).astype(np.float32)
    zps = rng.integers(-10, 10, 5).astype(np.int32)
    y = np.zeros(x.shape, np.int8)
    adnn.quantize(ctx, x, scales, zps, axis=1, out=y)
    want = np_quantize(x, scales[None, :, None], zps[None, :, None], np.int8)
    assert np.array_equal(y, want)


@pytest.mark.parametrize("dtype,zp", [(np.int8, 5), (np.uint8, 100)])
def test_dequantize(ctx, rng, dtype, zp):
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max + 1, (4, 33)).astype(dtype)
    y = np.full(x.shape, np.nan, np.float32)
    adnn.dequantize(ctx, x, scale=0.1, zero_point=zp, out=y)
    want = (x.astype(np.int32) - zp).astype(np.float32) * np.float32(0.1)
    assert np.array_equal(y, want)


def test_bad_scale(ctx):
    x = np.zeros(4, np.float32)
    with pytest.raises(adnn.Error):
        adnn.quantize(ctx, x, scale=0.0, out=np.zeros(4, np.int8))
