"""Context, info(), exceptions, reference leaks, threads."""
import gc
import json
import os
import subprocess
import sys
import threading
import tracemalloc

import numpy as np
import pytest

import adnn


def test_info_mirrors_adnn_info():
    i = adnn.info()
    assert set(i) == {"version", "plugin_path", "plugin_path_source", "build_tree", "plugins",
                      "auto", "context", "perfdb"}
    assert i["version"] == adnn.library_version
    assert any(p["name"] == "cpu" and p["state"] == "ready" for p in i["plugins"])
    tool = os.path.join(os.environ.get("ADNN_TEST_BUILDDIR", ""), "tools", "adnn-info")
    if os.path.exists(tool):
        j = json.loads(subprocess.run([tool, "--json"], capture_output=True, text=True).stdout)
        assert set(j) == set(i)
        assert [p["name"] for p in j["plugins"]] == [p["name"] for p in i["plugins"]]
        assert j["auto"] == i["auto"]


def test_context_manager():
    with adnn.Context("auto") as c:
        assert c.backend in ("cpu", "cuda") and c.device >= 0
        c.synchronize()
        t = adnn.empty(c, (2, 3))
    assert c.closed
    with pytest.raises(adnn.Error, match="closed"):
        adnn.activation(c, t)
    del t


def test_bad_backend():
    with pytest.raises(adnn.Error) as e:
        adnn.Context("no-such-backend")
    assert e.value.status != 0 and e.value.status_name and str(e.value)


def test_exceptions(ctx, rng):
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    with pytest.raises(adnn.ArgumentError) as e:  # the library's own message
        adnn.conv2d(ctx, x, rng.standard_normal((4, 2, 3, 3)).astype(np.float32))
    assert isinstance(e.value, ValueError) and e.value.status == 1000 and "channels" in str(e.value)
    with pytest.raises(TypeError):
        adnn.conv2d(ctx, x, x.astype(np.float64))  # dtype mismatch
    with pytest.raises(TypeError):
        adnn.activation(ctx, [1.0, 2.0])
    with pytest.raises(TypeError):
        adnn.activation(ctx, x, bogus=1)
    with pytest.raises(TypeError):
        adnn.activation(x)
    with pytest.raises(ValueError, match="unknown activation"):
        adnn.activation(ctx, x, activation="nope")
    with pytest.raises(ValueError):
        adnn.reduce(ctx, x, axes=7)
    with pytest.raises(ValueError, match="packed vector"):
        v = np.ones(3, np.float32)
        adnn.batchnorm(ctx, x, v, v, v, np.ones(4, np.float32))
    with pytest.raises(ValueError, match="out is"):
        adnn.activation(ctx, x, out=np.empty((2, 3), np.float32))
    with pytest.raises(ValueError):
        adnn.gemm(ctx, np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))


def test_no_reference_leaks(ctx, rng):
    a = rng.standard_normal((8, 8)).astype(np.float32)
    w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    x = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
    t = adnn.from_dlpack(a, ctx)
    # Earlier tests may leave tensors of ctx in reference cycles (tracebacks kept by
    # pytest.raises); collect them now, or their collection during the loop below
    # would lower ctx's count and read as a change.
    gc.collect()
    refs = (sys.getrefcount(a), sys.getrefcount(t), sys.getrefcount(ctx))

    def work():
        adnn.gemm(ctx, t, t)
        adnn.gemm(ctx, a, a)
        adnn.conv2d(ctx, x, w, padding=1).numpy()
        np.from_dlpack(adnn.from_dlpack(a, ctx))
        try:
            adnn.activation(ctx, x, activation="nope")
        except ValueError:
            pass

    for _ in range(200):
        work()
    tracemalloc.start()
    snap1 = tracemalloc.take_snapshot()
    for _ in range(2000):
        work()
    snap2 = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in snap2.compare_to(snap1, "filename"))
    assert (sys.getrefcount(a), sys.getrefcount(t), sys.getrefcount(ctx)) == refs
    assert grown < 64 * 1024, f"{grown} bytes grew over 2000 iterations"
    assert len([s for s in ctx.memory_spans() if s[3] == "registered"]) == 1  # t's


def test_threads_share_one_context(ctx):
    # The context lock lets several Python threads call into one context
    # (doc/api.md: one thread at a time per context), with the GIL released.
    errors = []

    def worker(seed):
        r = np.random.default_rng(seed)
        try:
            for _ in range(50):
                a = r.standard_normal((16, 16)).astype(np.float64)
                y = adnn.gemm(ctx, a, a).numpy()
                assert np.allclose(y, a @ a, rtol=1e-12, atol=1e-12)
                z = adnn.activation(ctx, a, activation="relu").numpy()
                assert np.array_equal(z, np.maximum(a, 0))
        except Exception as e:  # reported below with the seed
            errors.append((seed, repr(e)))

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors


def _info_in_subprocess(env):
    # A fresh interpreter: the plugin path is decided at import, once per process.
    code = "import json, adnn; print(json.dumps(adnn.info()))"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.skipif(adnn._adnn._build_plugin_path is None,
                    reason="built against an installed adnn (pkg-config): no build tree")
def test_build_tree_plugins_without_plugin_path():
    # Built with ADNN_BUILD_DIR: with ADNN_PLUGIN_PATH unset, the module uses its
    # build tree's plugin directories, as the uninstalled adnn-info does.
    env = {k: v for k, v in os.environ.items() if k != "ADNN_PLUGIN_PATH"}
    env.pop("ADNN_BACKEND", None)
    i = _info_in_subprocess(env)
    assert i["build_tree"] is True
    assert i["plugin_path"] == adnn._adnn._build_plugin_path, i["plugin_path"]
    cpu = [p for p in i["plugins"] if p["name"] == "cpu"]
    assert cpu and cpu[0]["state"] == "ready", i["plugins"]
    assert i["context"]["created"] is True, i["context"]


def test_plugin_path_set_by_the_user_stands(tmp_path):
    # An explicit ADNN_PLUGIN_PATH (here an empty directory) is never replaced.
    env = dict(os.environ, ADNN_PLUGIN_PATH=str(tmp_path))
    env.pop("ADNN_BACKEND", None)
    i = _info_in_subprocess(env)
    assert i["build_tree"] is False
    assert i["plugin_path"] == str(tmp_path), i["plugin_path"]
    assert i["plugins"] == [], i["plugins"]
    assert i["context"]["created"] is False, i["context"]
