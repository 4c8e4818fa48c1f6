"""adnn.conv2d with integer inputs (u8 or s8 x, s8 w; doc/ops.md "conv2d dtypes"):
exact against a NumPy int64 convolution of (x - x_zero_point) and w, then the
I32 bias, relu, and I32 saturation or requantization."""
import numpy as np
import pytest

import adnn
from test_ops import ref_conv2d


def int_conv(x, w, zx, bias, stride, pad, groups):
    # The padding reads x_zero_point, i.e. x - zx is padded with zeros; the
    # float64 convolution of these integers is exact (|sums| < 2^53).
    acc = ref_conv2d(x.astype(np.int64) - zx, w, None, stride, pad, 1, groups)
    if bias is not None:
        acc = acc + bias.astype(np.float64)[None, :, None, None]
    return acc


@pytest.mark.parametrize("xdt,zx", [(np.uint8, 128), (np.int8, -3)])
@pytest.mark.parametrize("stride,pad,groups", [(1, 1, 1), (2, 1, 1), (1, 0, 2)])
def test_into_i32_exact(ctx, rng, xdt, zx, stride, pad, groups):
    info = np.iinfo(xdt)
    x = rng.integers(info.min, info.max + 1, (2, 4, 9, 8)).astype(xdt)
    w = rng.integers(-128, 128, (6, 4 // groups, 3, 3)).astype(np.int8)
    bias = rng.integers(-5000, 5000, 6).astype(np.int32)
    out = np.full((2, 6) + ((9 + 2 * pad - 3) // stride + 1, (8 + 2 * pad - 3) // stride + 1),
                  7777777, np.int32)
    adnn.conv2d(ctx, x, w, bias, stride=stride, padding=pad, groups=groups, x_zero_point=zx,
                out=out)
    want = int_conv(x, w, zx, bias, stride, pad, groups)
    assert np.array_equal(out, want.astype(np.int64))


def test_u8_requantized_per_channel_with_relu(ctx, rng):
    x = rng.integers(0, 256, (1, 8, 7, 7)).astype(np.uint8)
    w = rng.integers(-128, 128, (5, 8, 3, 3)).astype(np.int8)
    bias = rng.integers(-3000, 3000, 5).astype(np.int32)
    scales = rng.uniform(0.0002, 0.001, 5).astype(np.float32)
    out = np.zeros((1, 5, 7, 7), np.uint8)
    adnn.conv2d(ctx, x, w, bias, scales, padding=1, activation="relu", x_zero_point=120,
                y_zero_point=10, out=out)
    acc = np.maximum(int_conv(x, w, 120, bias, 1, 1, 1), 0)
    want = np.clip(np.rint(acc * scales.astype(np.float64)[None, :, None, None]) + 10, 0, 255)
    assert np.array_equal(out, want.astype(np.uint8))


def test_bad_integer_descriptors(ctx, rng):
    x = rng.integers(0, 256, (1, 4, 5, 5)).astype(np.uint8)
    w = rng.integers(-128, 128, (2, 4, 3, 3)).astype(np.int8)
    out = np.zeros((1, 2, 3, 3), np.uint8)
    with pytest.raises(adnn.Error, match="x_zero_point"):
        adnn.conv2d(ctx, x, w, x_zero_point=300, out=out)
    with pytest.raises(adnn.Error, match="identity or relu"):
        adnn.conv2d(ctx, x, w, activation="tanh", requant_scale=0.01, out=out)
    with pytest.raises(adnn.Error, match="w is i8"):
        adnn.conv2d(ctx, x, w.astype(np.uint8), out=out)
