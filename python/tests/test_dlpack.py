"""DLPack and buffer-protocol interop: zero copies, strides, dtypes,
read-only flags, lifetime, registration of imported memory."""
import gc
import sys
import threading

import numpy as np
import pytest

import adnn


def test_numpy_round_trip_no_copy(ctx, rng):
    a = rng.standard_normal((4, 6)).astype(np.float32)
    t = adnn.from_dlpack(a, ctx)
    assert t.data_ptr == a.ctypes.data and not t.owns_memory
    back = np.from_dlpack(t)
    assert back.ctypes.data == a.ctypes.data
    a[1, 2] = 42.0  # NumPy marks arrays it takes from DLPack read-only: write the source
    assert back[1, 2] == 42.0


@pytest.mark.parametrize("dt,name", [(np.float32, "f32"), (np.float64, "f64"),
                                     (np.float16, "f16"), (np.int8, "i8"), (np.int32, "i32")])
def test_dtypes(ctx, rng, dt, name):
    a = (rng.standard_normal((3, 5)) * 10).astype(dt)
    t = adnn.from_dlpack(a, ctx)
    assert t.dtype == name
    assert np.array_equal(np.from_dlpack(t), a)


def test_unsupported_dtype(ctx):
    with pytest.raises(TypeError):
        adnn.from_dlpack(np.zeros(3, np.uint16), ctx)


def test_strided_views(ctx, rng):
    base = rng.standard_normal((8, 9, 10)).astype(np.float32)
    v = base[1::2, :, 3:7].transpose(2, 0, 1)
    t = adnn.from_dlpack(v, ctx)
    assert t.shape == v.shape
    assert t.strides == tuple(s // 4 for s in v.strides)
    assert np.array_equal(np.from_dlpack(t), v)
    y = adnn.activation(ctx, v, activation="relu")  # a strided input to an op
    assert np.array_equal(y.numpy(), np.maximum(v, 0))


def test_negative_strides_refused(ctx):
    with pytest.raises(ValueError, match="negative stride"):
        adnn.from_dlpack(np.arange(6, dtype=np.float32)[::-1], ctx)


def test_zero_size(ctx):
    a = np.zeros((3, 0, 2), np.float32)
    t = adnn.from_dlpack(a, ctx)
    assert t.shape == (3, 0, 2) and t.size == 0
    assert np.from_dlpack(t).shape == (3, 0, 2)
    e = adnn.empty(ctx, (0, 4))
    assert np.from_dlpack(e).shape == (0, 4)


def test_read_only(ctx, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    a.flags.writeable = False
    t = adnn.from_dlpack(a, ctx)  # through the buffer protocol, still zero-copy
    assert t.readonly and t.data_ptr == a.ctypes.data
    y = adnn.activation(ctx, a, activation="relu")  # fine as an input
    assert np.array_equal(y.numpy(), np.maximum(a, 0))
    with pytest.raises(ValueError, match="read-only"):
        adnn.activation(ctx, y, activation="relu", out=a)
    with pytest.raises(BufferError):
        np.from_dlpack(t)  # unversioned DLPack cannot say read-only


def test_lifetime_source_deleted(ctx, rng):
    a = rng.standard_normal(1000).astype(np.float64)
    expect = a.copy()
    t = adnn.from_dlpack(a, ctx)
    ref = sys.getrefcount(a)
    del a
    gc.collect()
    assert np.array_equal(np.from_dlpack(t), expect)  # the producer is kept alive
    assert ref >= 3


def test_export_keeps_tensor_alive(ctx, rng):
    t = adnn.empty(ctx, (5, 5), "f32")
    view = np.from_dlpack(t)
    adnn.binary(ctx, np.ones((5, 5), np.float32), np.ones((5, 5), np.float32), out=t, beta=2.0)
    spans = len(ctx.memory_spans())
    del t
    gc.collect()
    assert len(ctx.memory_spans()) == spans, "the allocation was freed under a live view"
    assert np.all(view == 3.0)
    del view
    gc.collect()
    assert len(ctx.memory_spans()) == spans - 1


def test_overlapping_views_share_one_registration(ctx, rng):
    base = rng.standard_normal(100).astype(np.float32)
    t1 = adnn.from_dlpack(base[10:50], ctx)
    t2 = adnn.from_dlpack(base[30:90], ctx)  # overlaps t1 without fitting in it
    regs = [s for s in ctx.memory_spans() if s[3] == "registered"]
    assert len(regs) == 1 and regs[0][2] == 2, regs
    y = adnn.binary(ctx, t1, t1, op="add")
    z = adnn.binary(ctx, t2, t2, op="add")
    assert np.allclose(y.numpy(), 2 * base[10:50]) and np.allclose(z.numpy(), 2 * base[30:90])
    del t1, t2
    gc.collect()
    assert not [s for s in ctx.memory_spans() if s[3] == "registered"]


def test_other_context_refused(ctx):
    with adnn.Context("cpu") as other:
        t = adnn.empty(other, (2,))
        with pytest.raises(adnn.DeviceError):
            adnn.activation(ctx, t)


def test_device_mismatch_refused(ctx):
    class FakeCuda:
        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, **kw):
            raise AssertionError("must not be consumed")

    with pytest.raises(adnn.DeviceError, match="device"):
        adnn.from_dlpack(FakeCuda(), ctx)


def test_torch_round_trip(ctx):
    torch = pytest.importorskip("torch")
    x = torch.arange(24, dtype=torch.float32).reshape(4, 6)[:, 1:5]
    t = adnn.from_dlpack(x, ctx)
    assert t.data_ptr == x.data_ptr() and t.shape == (4, 4)
    y = adnn.activation(ctx, x - 10, activation="relu")
    ty = torch.from_dlpack(y)
    assert torch.equal(ty, torch.relu(x - 10))
    ty[0, 0] = 99.0
    assert np.from_dlpack(y)[0, 0] == 99.0  # the same memory
    if torch.cuda.is_available() and "cuda" in [p["name"] for p in adnn.info()["plugins"]
                                                 if p["state"] == "ready"]:
        with adnn.Context("cuda") as g:
            xc = x.cuda()
            yc = adnn.activation(g, xc, activation="relu")
            assert torch.equal(torch.from_dlpack(yc).cpu(), torch.relu(x))
