"""Batch-norm training, batch-norm backward and layer / RMS norm backward against
PyTorch (float64 autograd) at doc/numerics.md's tolerances."""
import numpy as np
import pytest

import adnn
from conftest import check_close

torch = pytest.importorskip("torch")
F = torch.nn.functional

# (rel_l2, max_abs) per dtype, doc/numerics.md's rows of these ops.
TOL = {
    "batchnorm_training": {np.float32: (5e-6, 2e-5), np.float64: (1e-12, 1e-11)},
    "backward": {np.float32: (1e-5, 5e-5), np.float64: (1e-12, 1e-11)},
}
DTYPES = [np.float32, np.float64]


def data(rng, shape, dt, scale=1.0, offset=0.0):
    return (rng.standard_normal(shape) * scale + offset).astype(dt)


def t64(a):
    return torch.tensor(np.asarray(a, dtype=np.float64))


def nhwc_view(x):
    # The same [N, C, H, W] values stored N, H, W, C.
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape,layout", [((4, 3, 5, 6), "nchw"), ((4, 3, 5, 6), "nhwc"),
                                          ((7, 5), "nchw")])
@pytest.mark.parametrize("momentum", [0.0, 0.1])
def test_batchnorm_training_vs_torch(ctx, rng, dt, shape, layout, momentum):
    x = data(rng, shape, dt, 2.0, 0.5)
    if layout == "nhwc":
        x = nhwc_view(x)
    C = shape[1]
    scale, shift = data(rng, (C,), dt), data(rng, (C,), dt)
    rm, rv = data(rng, (C,), dt), (rng.random(C) + 0.5).astype(dt)
    rm_t, rv_t = t64(rm), t64(rv)
    y, mean, inv = adnn.batchnorm_training(ctx, x, scale, shift, running_mean=rm,
                                           running_var=rv, epsilon=1e-3, momentum=momentum)
    ref = F.batch_norm(t64(x), rm_t, rv_t, t64(scale), t64(shift), training=True,
                       momentum=momentum, eps=1e-3)
    rel, mx = TOL["batchnorm_training"][dt]
    check_close(y.numpy(), ref.numpy(), rel, mx)
    xs = t64(x).transpose(0, 1).reshape(C, -1)
    check_close(mean.numpy(), xs.mean(1).numpy(), rel, mx)
    check_close(inv.numpy(), (1 / torch.sqrt(xs.var(1, unbiased=False) + 1e-3)).numpy(), rel, mx)
    # The running statistics were updated in place in the NumPy arrays, with
    # PyTorch's unbiased variance (momentum 0: untouched).
    check_close(rm, rm_t.numpy(), rel, mx)
    check_close(rv, rv_t.numpy(), rel, mx)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape,layout", [((3, 4, 5, 5), "nchw"), ((3, 4, 5, 5), "nhwc"),
                                          ((9, 6), "nchw")])
def test_batchnorm_backward_vs_torch(ctx, rng, dt, shape, layout):
    x = data(rng, shape, dt)
    C = shape[1]
    scale, shift = data(rng, (C,), dt), data(rng, (C,), dt)
    dy = data(rng, shape, dt)
    rm, rv = np.zeros(C, dt), np.ones(C, dt)
    xa = nhwc_view(x) if layout == "nhwc" else x
    _, mean, inv = adnn.batchnorm_training(ctx, xa, scale, shift, running_mean=rm,
                                           running_var=rv, epsilon=1e-5)
    dx, dscale, dshift = adnn.batchnorm_backward(ctx, x, dy, scale, mean.numpy(), inv.numpy())
    xt, wt, bt = (t64(v).requires_grad_() for v in (x, scale, shift))
    F.batch_norm(xt, None, None, wt, bt, training=True, eps=1e-5).backward(t64(dy))
    rel, mx = TOL["backward"][dt]
    check_close(dx.numpy(), xt.grad.numpy(), rel, mx)
    check_close(dscale.numpy(), wt.grad.numpy(), rel, mx)
    check_close(dshift.numpy(), bt.grad.numpy(), rel, mx)


def torch_rms_norm(x, dims, g, b, eps):
    axes = tuple(range(x.dim() - dims, x.dim()))
    y = x * torch.rsqrt((x * x).mean(axes, keepdim=True) + eps)
    if g is not None:
        y = y * g
    if b is not None:
        y = y + b
    return y


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("kind", ["layer", "rms"])
@pytest.mark.parametrize("norm_dims,gain,bias", [(1, True, True), (2, True, False),
                                                 (1, False, True), (1, False, False)])
def test_norm_backward_vs_torch(ctx, rng, dt, kind, norm_dims, gain, bias):
    shape = (3, 4, 7)
    x = data(rng, shape, dt, 1.0, 2.0)
    dy = data(rng, shape, dt)
    nshape = shape[-norm_dims:]
    g = data(rng, nshape, dt) + 1 if gain else None
    b = data(rng, nshape, dt) if bias else None
    dx, dg, db = adnn.norm_backward(ctx, x, dy, None if g is None else g.reshape(-1), kind=kind,
                                    norm_dims=norm_dims, epsilon=1e-5, has_bias=bias)
    xt = t64(x).requires_grad_()
    gt = t64(g).requires_grad_() if gain else None
    bt = t64(b).requires_grad_() if bias else None
    if kind == "layer":
        y = F.layer_norm(xt, nshape, gt, bt, eps=1e-5)
    else:
        y = torch_rms_norm(xt, norm_dims, gt, bt, 1e-5)
    y.backward(t64(dy))
    rel, mx = TOL["backward"][dt]
    check_close(dx.numpy(), xt.grad.numpy(), rel, mx)
    assert (dg is None) == (not gain) and (db is None) == (not bias)
    if gain:
        check_close(dg.numpy(), gt.grad.numpy().reshape(-1), rel, mx)
    if bias:
        check_close(db.numpy(), bt.grad.numpy().reshape(-1), rel, mx)


def test_training_errors(ctx, rng):
    x = data(rng, (2, 3, 4, 4), np.float32)
    v = np.ones(3, np.float32)
    with pytest.raises(TypeError):
        adnn.batchnorm_training(ctx, x, v, v)  # the running statistics are required
    with pytest.raises(adnn.ArgumentError):
        adnn.batchnorm_training(ctx, x, v, np.ones(4, np.float32), running_mean=v.copy(),
                                running_var=v.copy())
    with pytest.raises(adnn.Error):
        adnn.batchnorm_training(ctx, x[:1, :, :1, :1], v, v, running_mean=v.copy(),
                                running_var=v.copy())  # one element per channel
    with pytest.raises(adnn.Error):
        adnn.batchnorm_training(ctx, x, v, v, running_mean=v.copy(), running_var=v.copy(),
                                momentum=2.0)
    with pytest.raises(adnn.ArgumentError):
        adnn.norm_backward(ctx, x, x, np.ones(3, np.float32))  # gain of D = 4 elements
