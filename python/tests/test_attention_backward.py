"""Attention backward against PyTorch (float64 autograd of an unfused softmax(q k^T) v) at
doc/numerics.md's tolerances: causal masks with Sq != Skv, grouped-query heads, a broadcast
bias, key lengths, fully masked rows."""
import numpy as np
import pytest

import adnn
from conftest import check_close

torch = pytest.importorskip("torch")

# (rel_l2, max_abs) per dtype: doc/numerics.md's attention backward row for these sizes.
TOL = {np.float32: (2e-5, 2e-4), np.float64: (2e-12, 2e-11)}
DTYPES = [np.float32, np.float64]


def data(rng, shape, dt):
    return rng.uniform(-1.0, 1.0, shape).astype(dt)


def t64(a):
    return torch.tensor(np.asarray(a, dtype=np.float64))


def torch_attention(q, k, v, bias, key_lengths, causal, scale):
    """o of the definition in doc/ops.md, differentiable; fully masked rows give 0."""
    B, H, Sq, D = q.shape
    Hkv, Skv = k.shape[1], k.shape[2]
    group = H // Hkv
    ke = k.repeat_interleave(group, dim=1)
    ve = v.repeat_interleave(group, dim=1)
    s = torch.matmul(q, ke.transpose(-1, -2)) * scale
    if bias is not None:
        s = s + bias
    visible = torch.ones(B, H, Sq, Skv, dtype=torch.bool)
    j = torch.arange(Skv)
    if causal:
        i = torch.arange(Sq).reshape(-1, 1)
        visible &= (j <= i + Skv - Sq)
    if key_lengths is not None:
        lim = torch.tensor(np.clip(key_lengths, 0, Skv)).reshape(B, 1, 1, 1)
        visible &= j < lim
    if bias is not None:
        visible &= torch.isfinite(s)
    # A large negative instead of -inf, and the rows without a visible key
    # zeroed, so that no NaN enters the autograd graph.
    s = torch.where(visible, s, torch.full_like(s, -1e30))
    p = torch.softmax(s, dim=-1) * visible.any(-1, keepdim=True)
    return torch.matmul(p, ve)


CASES = [
    # B, H, Hkv, Sq, Skv, D, Dv, causal, bias shape, key lengths
    (1, 2, 2, 5, 7, 8, 8, False, None, None),
    (2, 4, 2, 9, 33, 16, 12, True, None, None),          # causal Sq < Skv, GQA
    (1, 2, 1, 12, 5, 8, 8, True, None, None),            # causal Sq > Skv: masked rows
    (2, 2, 2, 6, 10, 8, 8, False, (1, 2, 6, 10), [7, 0]),  # bias per head, key length 0
    (2, 3, 1, 4, 70, 32, 32, False, (70,), [70, 33]),    # MQA, bias over the keys
]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("case", CASES)
def test_attention_backward_vs_torch(ctx, rng, dt, case):
    B, H, Hkv, Sq, Skv, D, Dv, causal, bias_shape, lengths = case
    q, k = data(rng, (B, H, Sq, D), dt), data(rng, (B, Hkv, Skv, D), dt)
    v, do = data(rng, (B, Hkv, Skv, Dv), dt), data(rng, (B, H, Sq, Dv), dt)
    bias = data(rng, bias_shape, dt) if bias_shape else None
    kl = np.array(lengths, np.int32) if lengths is not None else None
    o, lse = adnn.attention(ctx, q, k, v, bias=bias, key_lengths=kl, causal=causal)
    dq, dk, dv = adnn.attention_backward(ctx, q, k, v, o.numpy(), do, lse.numpy(), bias=bias,
                                         key_lengths=kl, causal=causal)
    qt, kt, vt = (t64(a).requires_grad_() for a in (q, k, v))
    ot = torch_attention(qt, kt, vt, None if bias is None else t64(bias), lengths, causal,
                         1.0 / np.sqrt(D))
    ot.backward(t64(do))
    rel, mx = TOL[dt]
    check_close(dq.numpy(), qt.grad.numpy(), rel, mx)
    check_close(dk.numpy(), kt.grad.numpy(), rel, mx)
    check_close(dv.numpy(), vt.grad.numpy(), rel, mx)


def test_attention_backward_masked_rows_are_zero(ctx, rng):
    # Causal with Sq = 6 > Skv = 2: queries 0..3 see no key (lse = -inf), so their dq is 0.
    q, k, v = data(rng, (1, 1, 6, 4), np.float64), data(rng, (1, 1, 2, 4), np.float64), \
        data(rng, (1, 1, 2, 4), np.float64)
    o, lse = adnn.attention(ctx, q, k, v, causal=True)
    assert np.all(np.isneginf(lse.numpy()[0, 0, :4]))
    dq, dk, dv = adnn.attention_backward(ctx, q, k, v, o.numpy(), np.ones_like(o.numpy()),
                                         lse.numpy(), causal=True)
    assert np.all(dq.numpy()[0, 0, :4] == 0.0)
    assert np.all(np.isfinite(dk.numpy())) and np.all(np.isfinite(dv.numpy()))


def test_attention_backward_errors(ctx, rng):
    q = data(rng, (1, 2, 3, 4), np.float32)
    k = data(rng, (1, 2, 5, 4), np.float32)
    o, lse = adnn.attention(ctx, q, k, k)
    with pytest.raises(TypeError):
        adnn.attention_backward(ctx, q, k, k, o.numpy(), o.numpy())  # lse missing
    with pytest.raises(adnn.ArgumentError):  # dq would take q's strided layout
        adnn.attention_backward(ctx, q.transpose(0, 2, 1, 3).copy().transpose(0, 2, 1, 3), k, k,
                                o.numpy(), o.numpy(), lse.numpy())
    with pytest.raises(adnn.Error):  # lse of the wrong shape
        adnn.attention_backward(ctx, q, k, k, o.numpy(), o.numpy(), lse.numpy()[:, :1])
