"""Softmax cross-entropy (forward and backward) and the fused optimizer step
against PyTorch: torch.nn.functional.cross_entropy and its autograd in
float64, and torch.optim.SGD / Adam / AdamW over several steps with a
learning rate that changes every step, at doc/numerics.md's tolerances."""
import numpy as np
import pytest

import adnn
from conftest import check_close

torch = pytest.importorskip("torch")
F = torch.nn.functional

DTYPES = [np.float32, np.float64]
# (rel_l2, max_abs) per dtype, doc/numerics.md's rows.
TOL_XENT = {np.float32: (4e-6, 1e-5), np.float64: (1e-12, 1e-12)}
# After STEPS steps, the float32 parameters against a float64 PyTorch run.
TOL_OPT = {np.float32: (1e-5, 1e-5), np.float64: (1e-12, 1e-12)}
STEPS = 5


def t64(a):
    return torch.tensor(np.asarray(a, dtype=np.float64))


def labels_of(rng, n, c, ignore):
    lab = rng.integers(0, c, n).astype(np.int32)
    lab[1] = ignore  # one ignored sample
    return lab


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 2])
def test_softmax_cross_entropy_vs_torch(ctx, rng, dt, reduction, ignore_index):
    n, c = 9, 13
    logits = (rng.standard_normal((n, c)) * 4).astype(dt)
    labels = labels_of(rng, n, c, ignore_index)
    loss = adnn.softmax_cross_entropy(ctx, logits, labels, reduction=reduction,
                                      ignore_index=ignore_index)
    ref = F.cross_entropy(t64(logits), torch.tensor(labels, dtype=torch.long),
                          reduction=reduction, ignore_index=ignore_index)
    check_close(loss.numpy(), ref.numpy(), *TOL_XENT[dt])
    assert loss.numpy().shape == (() if reduction != "none" else (n,))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_softmax_cross_entropy_backward_vs_torch(ctx, rng, dt, reduction):
    n, c = 7, 11
    logits = (rng.standard_normal((n, c)) * 3).astype(dt)
    labels = labels_of(rng, n, c, -100)
    dloss = (rng.random(n) + 0.5).astype(dt) if reduction == "none" else np.array(0.7, dt)
    dx = adnn.softmax_cross_entropy_backward(ctx, logits, labels, dloss, reduction=reduction)
    xt = t64(logits).requires_grad_()
    F.cross_entropy(xt, torch.tensor(labels, dtype=torch.long),
                    reduction=reduction).backward(t64(dloss))
    check_close(dx.numpy(), xt.grad.numpy(), *TOL_XENT[dt])
    assert np.all(dx.numpy()[1] == 0)  # the ignored sample's row


def torch_optimizer(kind, params, hp):
    if kind == "sgd":
        return torch.optim.SGD(params, lr=hp["lr"], momentum=hp.get("momentum", 0.0),
                               dampening=hp.get("dampening", 0.0),
                               nesterov=hp.get("nesterov", False),
                               weight_decay=hp.get("weight_decay", 0.0))
    cls = torch.optim.Adam if kind == "adam" else torch.optim.AdamW
    return cls(params, lr=hp["lr"], betas=(hp.get("beta1", 0.9), hp.get("beta2", 0.999)),
               eps=hp.get("epsilon", 1e-8), weight_decay=hp.get("weight_decay", 0.0))


CONFIGS = [
    ("sgd", {"lr": 0.1}),
    ("sgd", {"lr": 0.05, "weight_decay": 0.01, "momentum": 0.9, "dampening": 0.1}),
    ("sgd", {"lr": 0.05, "weight_decay": 0.01, "momentum": 0.8, "nesterov": True}),
    ("adam", {"lr": 1e-2, "weight_decay": 0.05}),
    ("adamw", {"lr": 1e-2, "weight_decay": 0.1, "beta1": 0.85, "beta2": 0.99,
               "epsilon": 1e-6}),
]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("kind,hp", CONFIGS)
def test_optimizer_vs_torch(ctx, rng, dt, kind, hp):
    shapes = [(5, 3), (17,), (1,), (4, 4, 4), (2000,)]
    params = [rng.uniform(-1, 1, s).astype(dt) for s in shapes]
    t_params = [t64(p).requires_grad_() for p in params]
    flat = [p.reshape(-1) for p in params]  # views: updated in place
    n_states = 0 if kind == "sgd" and not hp.get("momentum") else (1 if kind == "sgd" else 2)
    states = [np.zeros(p.size, dt) for _ in range(n_states) for p in params]
    opt = torch_optimizer(kind, t_params, hp)
    for step in range(1, STEPS + 1):
        lr = hp["lr"] * (1 + 0.5 * np.sin(1.3 * step))
        grads = [rng.uniform(-1, 1, p.size).astype(dt) for p in params]
        kw = {k: v for k, v in hp.items() if k != "lr"}
        adnn.optimizer(ctx, grads, params=flat, states=states, kind=kind, lr=lr, step=step, **kw)
        for tp, g, s in zip(t_params, grads, shapes):
            tp.grad = t64(g).reshape(s)
        for group in opt.param_groups:
            group["lr"] = lr
        opt.step()
    for p, tp in zip(params, t_params):
        check_close(p, tp.detach().numpy(), *TOL_OPT[dt])


@pytest.mark.parametrize("kind,hp", [CONFIGS[1], CONFIGS[4]])
def test_optimizer_master_weights_float16(ctx, rng, kind, hp):
    """F32 master weights with float16 model copies: float16 gradients, the F32
    step against torch's on the same (widened) gradients within the F32 bound,
    and every copy exactly the float16 rounding (numpy's, to nearest even) of
    its updated master weight; the copies start as NaN so an unwritten one fails."""
    shapes = [(5, 3), (17,), (1,), (3000,)]
    master = [rng.uniform(-1, 1, s).astype(np.float32).reshape(-1) for s in shapes]
    t_params = [t64(p).requires_grad_() for p in master]
    copies = [np.full(p.size, np.nan, np.float16) for p in master]
    n_states = 1 if kind == "sgd" else 2
    states = [np.zeros(p.size, np.float32) for _ in range(n_states) for p in master]
    opt = torch_optimizer(kind, t_params, hp)
    for step in range(1, STEPS + 1):
        lr = hp["lr"] * (1 + 0.5 * np.sin(1.3 * step))
        grads = [rng.uniform(-1, 1, p.size).astype(np.float16) for p in master]
        kw = {k: v for k, v in hp.items() if k != "lr"}
        adnn.optimizer(ctx, grads, params=master, states=states, model_copies=copies,
                       kind=kind, lr=lr, step=step, **kw)
        for tp, g in zip(t_params, grads):
            tp.grad = t64(g.astype(np.float32))
        for group in opt.param_groups:
            group["lr"] = lr
        opt.step()
    for p, tp, w in zip(master, t_params, copies):
        check_close(p, tp.detach().numpy(), *TOL_OPT[np.float32])
        np.testing.assert_array_equal(w, p.astype(np.float16))
    with pytest.raises(TypeError):  # float32 gradients with float16 copies
        adnn.optimizer(ctx, [m.copy() for m in master], params=master, states=states,
                       model_copies=copies, kind=kind, lr=0.1, **kw)
    with pytest.raises(adnn.ArgumentError):  # one copy short
        adnn.optimizer(ctx, grads, params=master, states=states, model_copies=copies[:-1],
                       kind=kind, lr=0.1, **kw)
    with pytest.raises(adnn.Error):  # float64 masters
        adnn.optimizer(ctx, [grads[0]], params=[master[0].astype(np.float64)],
                       states=[np.zeros(master[0].size)] * n_states, model_copies=[copies[0]],
                       kind=kind, lr=0.1, **kw)


def test_optimizer_more_tensors_than_a_key_holds(ctx, rng):
    # 200 tensors: the plan-cache key would exceed 1 KiB, so the call makes a
    # plan of its own; the result is still the SGD step.
    params = [rng.uniform(-1, 1, 3) for _ in range(200)]
    before = [p.copy() for p in params]
    grads = [rng.uniform(-1, 1, 3) for _ in range(200)]
    adnn.optimizer(ctx, grads, params=params, kind="sgd", lr=0.5)
    for p, b, g in zip(params, before, grads):
        np.testing.assert_allclose(p, b - 0.5 * g, rtol=1e-15, atol=1e-15)


def test_loss_and_optimizer_errors(ctx, rng):
    logits = rng.standard_normal((4, 5)).astype(np.float32)
    with pytest.raises(TypeError):
        adnn.softmax_cross_entropy(ctx, logits, np.zeros(4, np.float32))  # labels not int32
    with pytest.raises(adnn.Error):
        adnn.softmax_cross_entropy(ctx, logits, np.zeros(3, np.int32))  # N mismatch
    with pytest.raises(adnn.ArgumentError):
        adnn.softmax_cross_entropy(ctx, logits, np.zeros(4, np.int32), reduction="avg")
    p = np.zeros(3, np.float32)
    g = np.ones(3, np.float32)
    with pytest.raises(adnn.ArgumentError):
        adnn.optimizer(ctx, [g, g], params=[p], lr=0.1)  # two grads, one param
    with pytest.raises(adnn.ArgumentError):
        adnn.optimizer(ctx, [g], params=[p], kind="adam")  # m and v missing
    with pytest.raises(adnn.Error):
        adnn.optimizer(ctx, [g], params=[p], states=[np.zeros(3, np.float32)], momentum=0.0,
                       nesterov=True)
    with pytest.raises(adnn.Error):
        adnn.optimizer(ctx, [g], params=[p], kind="adam", beta1=1.0,
                       states=[np.zeros(3, np.float32), np.zeros(3, np.float32)])
    with pytest.raises(adnn.Error):
        adnn.optimizer(ctx, [g], params=[p], lr=0.1, step=0)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.float16])
def test_loss_scale_unscale_and_overflow(ctx, rng, dt):
    """unscale by 3 (a rounded reciprocal) against numpy in float64 on the same
    factor, rounded as the library rounds (float32 product, then dt); found_inf
    stays 0 without an overflow, becomes 1 with an infinity planted, and a
    scale of 65536 overflows float16 (and only float16)."""
    tensors = [rng.uniform(-1, 1, n).astype(dt) for n in (7, 1, 40000)]
    before = [t.copy() for t in tensors]
    found = np.zeros(1, dt)
    scale = np.array([3.0], np.float32)
    adnn.loss_scale(ctx, scale, tensors=tensors, found_inf=found)
    f = np.float32(1.0 / 3.0)
    for t, b in zip(tensors, before):
        want = b.astype(np.float64) * np.float64(f)
        want = want.astype(np.float32).astype(dt) if dt != np.float64 else want
        np.testing.assert_array_equal(t, want)
    assert found[0] == 0
    tensors[1][0] = np.inf
    adnn.loss_scale(ctx, scale, tensors=tensors, found_inf=found)
    assert found[0] == 1
    found[0] = 0
    big = [rng.uniform(1.0, 2.0, 100).astype(dt)]  # x 65536 > 65504, float16's largest
    adnn.loss_scale(ctx, np.array([65536.0], np.float32), tensors=big, found_inf=found,
                    kind="scale")
    assert found[0] == (1 if dt == np.float16 else 0)
    with pytest.raises(TypeError):  # the scale must be float32
        adnn.loss_scale(ctx, np.array([2.0]), tensors=big, found_inf=found)
    with pytest.raises(TypeError):  # found_inf of another dtype
        adnn.loss_scale(ctx, scale, tensors=big, found_inf=np.zeros(1, np.int32))
    with pytest.raises(adnn.ArgumentError):
        adnn.loss_scale(ctx, scale, tensors=big, found_inf=found, kind="rescale")
    with pytest.raises(adnn.ArgumentError):
        adnn.loss_scale(ctx, scale, tensors=[], found_inf=found)
