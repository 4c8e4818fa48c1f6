"""conv2d backward data and weights against NumPy, at doc/numerics.md's conv2d
tolerances: the adjoints of the forward reference of test_ops.py, written as
the transposed patch sums; beta accumulation into out=, the (dw, db) pair,
and the errors of the keywords that describe the forward convolution."""
import numpy as np
import pytest

import adnn
from conftest import check_close

TOL = {np.float32: (1e-5, 1e-4), np.float64: (1e-12, 1e-11)}


def data(rng, shape, dt):
    return rng.standard_normal(shape).astype(dt)


def out_size(i, k, stride, pad, dil):
    return (i + 2 * pad - dil * (k - 1) - 1) // stride + 1


def ref_dx(x_shape, w, dy, stride, pad, dil, groups):
    """Every filter tap (i, j) reads a strided patch of the padded x in the
    forward pass; dx adds the transposed product back into that patch."""
    n, c, h, wd = x_shape
    k, cg, r, s = w.shape
    p, q = dy.shape[2], dy.shape[3]
    kg = k // groups
    dy = dy.astype(np.float64)
    w = w.astype(np.float64)
    dxp = np.zeros((n, c, h + 2 * pad, wd + 2 * pad))
    for g in range(groups):
        for i in range(r):
            for j in range(s):
                dxp[:, g * cg:(g + 1) * cg, i * dil:i * dil + stride * (p - 1) + 1:stride,
                    j * dil:j * dil + stride * (q - 1) + 1:stride] += np.einsum(
                        "nkhw,kc->nchw", dy[:, g * kg:(g + 1) * kg], w[g * kg:(g + 1) * kg, :, i, j])
    return dxp[:, :, pad:pad + h, pad:pad + wd]


def ref_dw(x, w_shape, dy, stride, pad, dil, groups):
    k, cg, r, s = w_shape
    p, q = dy.shape[2], dy.shape[3]
    kg = k // groups
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    dy = dy.astype(np.float64)
    dw = np.zeros(w_shape)
    for g in range(groups):
        for i in range(r):
            for j in range(s):
                patch = xp[:, g * cg:(g + 1) * cg, i * dil:i * dil + stride * (p - 1) + 1:stride,
                           j * dil:j * dil + stride * (q - 1) + 1:stride]
                dw[g * kg:(g + 1) * kg, :, i, j] = np.einsum("nchw,nkhw->kc", patch,
                                                             dy[:, g * kg:(g + 1) * kg])
    return dw


GEOMS = [  # (x_shape, k, r, stride, pad, dil, groups)
    ((2, 4, 9, 8), 6, 3, 1, 1, 1, 1),
    ((2, 4, 9, 8), 6, 3, 2, 0, 1, 2),
    ((1, 6, 10, 10), 6, 3, 2, 1, 1, 6),  # depthwise
    ((2, 3, 8, 7), 4, 1, 1, 0, 1, 1),  # 1x1
    ((2, 4, 11, 10), 4, 3, 1, 2, 2, 2),  # dilation
    ((2, 3, 10, 11), 5, 2, 3, 0, 1, 1),  # stride larger than the kernel
]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("geom", GEOMS)
def test_backward_data(ctx, rng, dt, geom):
    xs, k, r, stride, pad, dil, groups = geom
    w = data(rng, (k, xs[1] // groups, r, r), dt)
    p, q = out_size(xs[2], r, stride, pad, dil), out_size(xs[3], r, stride, pad, dil)
    dy = data(rng, (xs[0], k, p, q), dt)
    dx = adnn.conv2d_backward_data(ctx, dy, w, x_shape=xs, stride=stride, padding=pad,
                                   dilation=dil, groups=groups)
    ref = ref_dx(xs, w, dy, stride, pad, dil, groups)
    check_close(dx.numpy(), ref, *TOL[dt])
    # beta = 1 adds to out=.
    init = data(rng, xs, dt)
    out = init.copy()
    got = adnn.conv2d_backward_data(ctx, dy, w, x_shape=xs, stride=stride, padding=pad,
                                    dilation=dil, groups=groups, beta=1.0, out=out)
    check_close(np.asarray(got.numpy()), ref + init.astype(np.float64), *TOL[dt])


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("geom", GEOMS)
def test_backward_weights(ctx, rng, dt, geom):
    xs, k, r, stride, pad, dil, groups = geom
    ws = (k, xs[1] // groups, r, r)
    x = data(rng, xs, dt)
    p, q = out_size(xs[2], r, stride, pad, dil), out_size(xs[3], r, stride, pad, dil)
    dy = data(rng, (xs[0], k, p, q), dt)
    dw = adnn.conv2d_backward_weights(ctx, x, dy, w_shape=ws, stride=stride, padding=pad,
                                      dilation=dil, groups=groups)
    ref = ref_dw(x, ws, dy, stride, pad, dil, groups)
    check_close(dw.numpy(), ref, *TOL[dt])
    dw2, db = adnn.conv2d_backward_weights(ctx, x, dy, w_shape=ws, stride=stride, padding=pad,
                                           dilation=dil, groups=groups, bias=True)
    check_close(dw2.numpy(), ref, *TOL[dt])
    check_close(db.numpy(), dy.astype(np.float64).sum(axis=(0, 2, 3)), *TOL[dt])
    # beta = 1 into an (dw, db) pair.
    iw, ib = data(rng, ws, dt), data(rng, (k,), dt)
    gw, gb = adnn.conv2d_backward_weights(ctx, x, dy, w_shape=ws, stride=stride, padding=pad,
                                          dilation=dil, groups=groups, bias=True, beta=1.0,
                                          out=(iw.copy(), ib.copy()))
    check_close(gw.numpy(), ref + iw.astype(np.float64), *TOL[dt])
    check_close(gb.numpy(), dy.astype(np.float64).sum(axis=(0, 2, 3)) + ib, *TOL[dt])


def test_backward_errors(ctx, rng):
    dy = data(rng, (1, 4, 5, 5), np.float32)
    w = data(rng, (4, 2, 3, 3), np.float32)
    x = data(rng, (1, 2, 7, 7), np.float32)
    with pytest.raises(adnn.ArgumentError, match="x_shape"):
        adnn.conv2d_backward_data(ctx, dy, w)
    with pytest.raises(adnn.ArgumentError, match="w_shape"):
        adnn.conv2d_backward_weights(ctx, x, dy)
    with pytest.raises(adnn.ArgumentError, match="out="):
        adnn.conv2d_backward_data(ctx, dy, w, x_shape=(1, 2, 7, 7), beta=1.0)
    # A forward geometry that does not give dy's shape: the core's message.
    with pytest.raises(adnn.Error, match="desc->forward"):
        adnn.conv2d_backward_data(ctx, dy, w, x_shape=(1, 2, 9, 9))
    with pytest.raises(adnn.Error):
        adnn.conv2d_backward_weights(ctx, x, dy, w_shape=(4, 2, 3, 3), bias=True,
                                     out=(np.zeros((4, 2, 3, 3), np.float32),))
