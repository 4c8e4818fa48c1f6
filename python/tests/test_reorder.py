"""adnn.reorder (dtype and layout conversion) against NumPy: exact results,
since a conversion rounds once (numpy's float32 -> float16 is round to
nearest even with overflow to infinity and subnormals kept, the contract of
doc/numerics.md's "Low precision")."""
import numpy as np
import pytest

import adnn


def mixed(rng, shape):
    v = rng.uniform(-1.0, 1.0, shape)
    v[..., ::3] *= 1e4          # up to the F16 overflow region
    v[..., 1::5] *= 1e-6        # F16 subnormals
    return v


def test_nchw_to_nhwc_f32(ctx, rng):
    x = mixed(rng, (2, 5, 7, 9)).astype(np.float32)
    # NHWC storage seen with NCHW dims: a transposed view of a packed array.
    store = np.full((2, 7, 9, 5), np.nan, np.float32)
    adnn.reorder(ctx, x, out=store.transpose(0, 3, 1, 2))
    assert np.array_equal(store, x.transpose(0, 2, 3, 1))


@pytest.mark.parametrize("src,dst", [(np.float32, np.float16), (np.float64, np.float32),
                                     (np.float16, np.float64), (np.float64, np.float16)])
def test_dtype_conversion(ctx, rng, src, dst):
    x = mixed(rng, (3, 4, 50)).astype(src)
    x.flat[:6] = [0.0, -0.0, np.inf, -np.inf, 65520.0, 65519.0]
    y = np.full(x.shape, 7, dst)
    adnn.reorder(ctx, x, out=y)
    # NumPy narrows float64 -> float16 in one rounding too.
    want = x.astype(dst)
    assert np.array_equal(y.view(np.uint8), want.view(np.uint8))


def test_strided_copy_without_out(ctx, rng):
    x = rng.uniform(-1, 1, (6, 8)).astype(np.float32)[::2, 1::3]
    y = adnn.reorder(ctx, x).numpy()
    assert y.dtype == np.float32 and np.array_equal(y, x)


def test_int8_copy(ctx):
    x = np.arange(-128, 128, dtype=np.int8).reshape(16, 16)
    y = np.zeros((16, 16), np.int8)
    adnn.reorder(ctx, x, out=y.T)
    assert np.array_equal(y.T, x)


def test_refusals(ctx):
    x = np.ones((3, 4), np.float32)
    with pytest.raises(adnn.Error, match="no conversion from f32 to i8"):
        adnn.reorder(ctx, x, out=np.zeros((3, 4), np.int8))
    with pytest.raises(adnn.Error):
        adnn.reorder(ctx, x, out=np.zeros((4, 3), np.float32))
