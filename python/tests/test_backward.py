"""The backward ops of pooling, activations and softmax against PyTorch's autograd
(when torch is importable; Debian's python3-torch) at doc/numerics.md's tolerances,
and the values at the kinks that doc/ops.md takes from PyTorch, exactly."""
import numpy as np
import pytest

import adnn
from conftest import check_close

torch = pytest.importorskip("torch")
F = torch.nn.functional

# (F32 rel_l2, F32 max_abs, F64 rel_l2, F64 max_abs) from doc/numerics.md.
TOL = {"pool2d_backward": (2e-6, 2e-6, 1e-14, 1e-14),
       "activation_backward": (4e-6, 1e-5, 1e-13, 1e-12),
       "softmax_backward": (4e-6, 1e-5, 1e-13, 1e-12)}
DTYPES = [np.float32, np.float64]


def tol(name, dt):
    t = TOL[name]
    return t[:2] if dt == np.float32 else t[2:]


def torch_grad(fn, x, dy):
    """dL/dx of L = sum(dy * fn(x)), in float64."""
    t = torch.tensor(x.astype(np.float64), requires_grad=True)
    fn(t).backward(torch.tensor(dy.astype(np.float64)))
    return t.grad.numpy()


# adnn activation spec -> the PyTorch function with the same forward.
TORCH_ACT = {
    "identity": lambda t: t, "relu": F.relu,
    ("leaky_relu", 0.1): lambda t: F.leaky_relu(t, 0.1),
    ("elu", 0.7): lambda t: F.elu(t, 0.7),
    ("clamp", 0.0, 6.0): lambda t: F.hardtanh(t, 0.0, 6.0),
    ("clamp", -1.0, 2.0): lambda t: F.hardtanh(t, -1.0, 2.0),
    "sigmoid": torch.sigmoid, "tanh": torch.tanh, "gelu": F.gelu,
    "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"), "silu": F.silu,
    "softplus": F.softplus, "hardswish": F.hardswish,
}


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("act", list(TORCH_ACT), ids=str)
def test_activation_backward_matches_torch(ctx, rng, dt, act):
    x = (rng.standard_normal((6, 37)) * 4).astype(dt)
    dy = rng.standard_normal((6, 37)).astype(dt)
    dx = adnn.activation_backward(ctx, x, dy, activation=act).numpy()
    check_close(dx, torch_grad(TORCH_ACT[act], x, dy), *tol("activation_backward", dt))


@pytest.mark.parametrize("act,points,want", [
    ("relu", [0.0], [0.0]), (("leaky_relu", 0.1), [0.0], [0.1]), (("elu", 0.5), [0.0], [0.5]),
    (("clamp", 0.0, 6.0), [0.0, 6.0], [0.0, 0.0]), ("hardswish", [-3.0, 3.0], [-0.5, 1.5]),
    ("softplus", [20.0, 25.0], [0.9999999979388463, 1.0]), ("tanh", [0.0], [1.0]),
    ("gelu", [0.0], [0.5]), ("silu", [0.0], [0.5])], ids=str)
def test_activation_backward_kinks_are_pytorchs(ctx, act, points, want):
    # The values at the kinks, written down from PyTorch 1.13.1 on this machine; a
    # tensor this short takes PyTorch's scalar path (its vectorized CPU path
    # gives hardswish'(3) = 1 instead: doc/ops.md).
    x = np.array(points, dtype=np.float64)
    dy = np.ones_like(x)
    got = adnn.activation_backward(ctx, x, dy, activation=act).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
    torch_act = TORCH_ACT.get(act) or (lambda t: F.elu(t, 0.5))
    np.testing.assert_allclose(torch_grad(torch_act, x, dy), want, rtol=1e-15, atol=0)


def test_activation_backward_in_place_and_nan(ctx):
    x = np.array([-1.0, 0.0, 2.0, np.nan], dtype=np.float32)
    dy = np.full(4, 3.0, dtype=np.float32)
    adnn.activation_backward(ctx, x, dy, activation="relu", out=dy)  # dx over dy
    assert dy[0] == 0 and dy[1] == 0 and dy[2] == 3 and np.isnan(dy[3])


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("axis,log", [(-1, False), (-1, True), (0, False), (1, True)])
def test_softmax_backward_matches_torch(ctx, rng, dt, axis, log):
    x = (rng.standard_normal((4, 6, 5)) * 3).astype(dt)
    dy = rng.standard_normal((4, 6, 5)).astype(dt)
    y = adnn.softmax(ctx, x, axis=axis, log=log)
    dx = adnn.softmax_backward(ctx, y, dy, axis=axis, log=log).numpy()
    fn = (lambda t: F.log_softmax(t, dim=axis)) if log else (lambda t: F.softmax(t, dim=axis))
    check_close(dx, torch_grad(fn, x, dy), *tol("softmax_backward", dt))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("kind,k,s,p,ceil", [
    ("max", 2, 2, 0, False), ("max", 3, 2, 1, True), ("max", 3, 1, 1, False),
    ("avg_include_pad", 3, 2, 1, True), ("avg_include_pad", 3, 1, 1, False),
    ("avg_exclude_pad", 3, 2, 1, True), ("avg_exclude_pad", 2, 1, 1, False)])
def test_pool2d_backward_matches_torch(ctx, rng, dt, kind, k, s, p, ceil):
    shape = (2, 3, 9, 8)
    # Distinct values, so that max pooling has no ties (whose rule is adnn's own).
    x = (rng.permutation(np.prod(shape)).reshape(shape) * 0.01 - 2).astype(dt)
    y = adnn.pool2d(ctx, x, kind=kind, kernel=k, stride=s, padding=p, ceil_mode=ceil)
    dy = rng.standard_normal(y.shape).astype(dt)
    dx = adnn.pool2d_backward(ctx, x, y, dy, kind=kind, kernel=k, stride=s, padding=p,
                              ceil_mode=ceil).numpy()
    if kind == "max":
        fn = lambda t: F.max_pool2d(t, k, s, p, ceil_mode=ceil)
    else:
        fn = lambda t: F.avg_pool2d(t, k, s, p, ceil_mode=ceil,
                                    count_include_pad=kind == "avg_include_pad")
    check_close(dx, torch_grad(fn, x, dy), *tol("pool2d_backward", dt))


def test_pool2d_backward_ties_go_to_the_first(ctx):
    # One 2x2 window of equal values: dy goes to its first element (row-major).
    x = np.full((1, 1, 2, 2), 5.0)
    y = adnn.pool2d(ctx, x, kind="max", kernel=2, stride=2)
    dx = adnn.pool2d_backward(ctx, x, y, np.array([[[[7.0]]]]), kind="max", kernel=2,
                              stride=2).numpy()
    assert dx.ravel().tolist() == [7.0, 0.0, 0.0, 0.0]


def test_backward_layout_errors(ctx):
    x = np.zeros((4, 6), dtype=np.float32)
    with pytest.raises(adnn.Error):
        # dy of another shape than x (the forward's y)
        adnn.activation_backward(ctx, x, np.zeros((6, 4), dtype=np.float32))
    y = np.zeros((4, 6), dtype=np.float32)
    with pytest.raises(adnn.Error):
        # y and dy must share a layout
        adnn.softmax_backward(ctx, y, np.zeros((4, 6), dtype=np.float32).T.copy().T[:, :5])


@pytest.mark.parametrize("act", ["relu", "gelu", "silu", "tanh", ("clamp", 0.0, 6.0)])
def test_activation_backward_float16(ctx, rng, act):
    """F16 (doc/numerics.md, "Low precision"): x and dy widened exactly, the F32
    derivative, dx rounded once: the F32 bound plus 2^-11, against PyTorch's float64
    gradient on the same, already rounded, inputs."""
    x = (rng.standard_normal((9, 41)) * 3.0).astype(np.float16)
    dy = rng.standard_normal((9, 41)).astype(np.float16)
    dx = adnn.activation_backward(ctx, x, dy, activation=act).numpy()
    assert dx.dtype == np.float16
    r, m = TOL["activation_backward"][:2]
    check_close(dx, torch_grad(TORCH_ACT[act], x, dy), r + 2.0 ** -11, m + 2.0 ** -11)


@pytest.mark.parametrize("axis", [0, 2])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_backward_float16(ctx, rng, axis, log):
    """F16: y and dy widened exactly, the slice's sum in double, dx rounded once: the
    F32 bound plus 2^-11, against the formula in float64 on the same float16 y and dy
    (doc/ops.md, "softmax backward")."""
    x = (rng.standard_normal((4, 6, 37)) * 3).astype(np.float16)
    dy = rng.standard_normal((4, 6, 37)).astype(np.float16)
    y = adnn.softmax(ctx, x, axis=axis, log=log).numpy()
    assert y.dtype == np.float16
    dx = adnn.softmax_backward(ctx, y, dy, axis=axis, log=log).numpy()
    assert dx.dtype == np.float16
    y64, g64 = y.astype(np.float64), dy.astype(np.float64)
    if log:
        want = g64 - np.exp(y64) * g64.sum(axis=axis, keepdims=True)
    else:
        want = y64 * (g64 - (y64 * g64).sum(axis=axis, keepdims=True))
    r, m = TOL["softmax_backward"][:2]
    check_close(dx, want, r + 2.0 ** -11, m + 2.0 ** -11)


@pytest.mark.parametrize("kind,k,s,p,ceil", [
    ("max", 3, 2, 1, True), ("max", 3, 1, 1, False), ("avg_include_pad", 3, 1, 1, False),
    ("avg_exclude_pad", 3, 2, 1, True)])
def test_pool2d_backward_float16(ctx, rng, kind, k, s, p, ceil):
    """F16: x and dy widened exactly, dx accumulated in F32 and rounded once: the F32
    bound plus 2^-11, against PyTorch's float64 gradient on the same float16 inputs."""
    shape = (2, 3, 9, 8)
    # Distinct float16 values (multiples of 2^-4 below 2^5 are exact), so no ties.
    x = (rng.permutation(np.prod(shape)).reshape(shape) * 0.0625 - 13.0).astype(np.float16)
    y = adnn.pool2d(ctx, x, kind=kind, kernel=k, stride=s, padding=p, ceil_mode=ceil)
    dy = rng.standard_normal(y.shape).astype(np.float16)
    dx = adnn.pool2d_backward(ctx, x, y, dy, kind=kind, kernel=k, stride=s, padding=p,
                              ceil_mode=ceil).numpy()
    assert dx.dtype == np.float16
    if kind == "max":
        fn = lambda t: F.max_pool2d(t, k, s, p, ceil_mode=ceil)
    else:
        fn = lambda t: F.avg_pool2d(t, k, s, p, ceil_mode=ceil,
                                    count_include_pad=kind == "avg_include_pad")
    r, m = TOL["pool2d_backward"][:2]
    check_close(dx, torch_grad(fn, x, dy), r + 2.0 ** -11, m + 2.0 ** -11)
