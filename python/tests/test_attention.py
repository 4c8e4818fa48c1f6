"""adnn.attention against a float64 NumPy reference of doc/ops.md's definition
(scaled scores, bias, bottom-right causal mask, key lengths, grouped-query
heads, fully masked rows), at doc/numerics.md's attention tolerance."""
import numpy as np
import pytest

import adnn
from conftest import check_close

DTYPES = [np.float32, np.float64]
TOL = {np.float32: (4e-6, 2e-5), np.float64: (1e-12, 1e-11)}


def reference(q, k, v, bias=None, key_lengths=None, scale=0.0, causal=False):
    """o and lse in float64, row by row, from the definition."""
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
    b_, h_, sq, d = q.shape
    hkv, skv, dv = k.shape[1], k.shape[2], v.shape[3]
    group = h_ // hkv
    scale = scale if scale else 1.0 / np.sqrt(d)
    full_bias = None
    if bias is not None:
        full_bias = np.broadcast_to(np.asarray(bias, np.float64), (b_, h_, sq, skv))
    o = np.zeros((b_, h_, sq, dv))
    lse = np.full((b_, h_, sq), -np.inf)
    for b in range(b_):
        limit = skv if key_lengths is None else min(max(int(key_lengths[b]), 0), skv)
        for h in range(h_):
            g = h // group
            for i in range(sq):
                lim = limit
                if causal:
                    lim = min(lim, max(i + skv - sq + 1, 0))
                if lim == 0:
                    continue
                s = scale * (k[b, g, :lim] @ q[b, h, i])
                if full_bias is not None:
                    s = s + full_bias[b, h, i, :lim]
                m = np.max(s)
                if m == -np.inf:
                    continue
                e = np.exp(s - m)
                o[b, h, i] = (e @ v[b, g, :lim]) / e.sum()
                lse[b, h, i] = m + np.log(e.sum())
    return o, lse


def randn(rng, shape, dt):
    return rng.standard_normal(shape).astype(dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("causal", [False, True])
def test_attention_vs_numpy(ctx, rng, dt, causal):
    q = randn(rng, (2, 4, 19, 32), dt)
    k = randn(rng, (2, 2, 27, 32), dt)  # grouped-query: 2 query heads per kv head
    v = randn(rng, (2, 2, 27, 24), dt)  # Dv != D
    o, lse = adnn.attention(ctx, q, k, v, causal=causal)
    ro, rl = reference(q, k, v, causal=causal)
    check_close(o.numpy(), ro, *TOL[dt])
    check_close(lse.numpy(), rl, *TOL[dt])
    assert o.numpy().shape == (2, 4, 19, 24) and lse.numpy().shape == (2, 4, 19)


@pytest.mark.parametrize("dt", DTYPES)
def test_attention_bias_key_lengths_scale(ctx, rng, dt):
    q = randn(rng, (3, 2, 8, 16), dt)
    k = randn(rng, (3, 2, 11, 16), dt)
    v = randn(rng, (3, 2, 11, 16), dt)
    bias = randn(rng, (8, 11), dt)  # one [Sq, Skv] bias for every batch and head
    bias[0, :5] = -np.inf
    key_lengths = np.array([0, 5, 40], dtype=np.int32)  # fully masked, partial, clamped
    o, lse = adnn.attention(ctx, q, k, v, bias=bias, key_lengths=key_lengths, scale=0.3)
    ro, rl = reference(q, k, v, bias=bias, key_lengths=key_lengths, scale=0.3)
    check_close(o.numpy(), ro, *TOL[dt])
    assert np.all(o.numpy()[0] == 0) and np.all(lse.numpy()[0] == -np.inf)
    finite = np.isfinite(rl)
    assert np.array_equal(np.isfinite(lse.numpy()), finite)
    check_close(lse.numpy()[finite], rl[finite], *TOL[dt])


def test_attention_causal_more_queries_than_keys(ctx, rng):
    # Bottom-right alignment: with Sq = 6 > Skv = 4 the first 2 queries see no key.
    q = randn(rng, (1, 1, 6, 8), np.float64)
    k = randn(rng, (1, 1, 4, 8), np.float64)
    v = randn(rng, (1, 1, 4, 8), np.float64)
    o, lse = adnn.attention(ctx, q, k, v, causal=True)
    assert np.all(o.numpy()[0, 0, :2] == 0) and np.all(lse.numpy()[0, 0, :2] == -np.inf)
    ro, _ = reference(q, k, v, causal=True)
    check_close(o.numpy(), ro, *TOL[np.float64])


def test_attention_bshd_view_without_lse(ctx, rng):
    # q, k, v as [B, H, S, D] views of [B, S, H, D] arrays: strides, no copy.
    base = randn(rng, (2, 13, 3, 16), np.float32)
    q = base.transpose(0, 2, 1, 3)
    o = adnn.attention(ctx, q, q, q, lse=False)
    ro, _ = reference(q, q, q)
    check_close(o.numpy(), ro, *TOL[np.float32])


def test_attention_bad_input(ctx, rng):
    q = randn(rng, (1, 3, 4, 8), np.float32)
    k = randn(rng, (1, 2, 4, 8), np.float32)
    with pytest.raises(adnn.Error, match="not a multiple"):
        adnn.attention(ctx, q, k, k)
    with pytest.raises(adnn.Error, match="does not broadcast"):
        adnn.attention(ctx, q, q, q, bias=randn(rng, (5, 4), np.float32))
    with pytest.raises(adnn.Error, match="i32"):
        adnn.attention(ctx, q, q, q, key_lengths=np.ones(1, np.float32))
