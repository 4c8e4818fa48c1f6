"""python/examples and python/bench: cnn.py runs, agrees with its NumPy reference,
and its check fails when the two disagree; overhead.py runs."""
import importlib.util
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")
CNN = os.path.join(EXAMPLES, "cnn.py")


def test_cnn_example_runs_and_matches_numpy():
    r = subprocess.run([sys.executable, CNN, "cpu"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "cnn.py on backend cpu" in r.stdout and "ms per pass" in r.stdout, r.stdout
    assert "pseudo-random" in r.stdout, r.stdout
    assert ": PASS" in r.stdout, r.stdout
    assert sum(line.startswith("  image ") for line in r.stdout.splitlines()) == 4, r.stdout


def test_cnn_example_fails_on_a_mismatch(capsys):
    # The same program with a reference that is off by 1e-3 in one probability
    # (more than the tolerance): it must say FAIL and return 1.
    spec = importlib.util.spec_from_file_location("cnn_example", CNN)
    cnn = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cnn)
    good = cnn.forward_numpy

    def off(p):
        r = good(p)
        r[2, 3] += 1e-3
        return r

    cnn.forward_numpy = off
    assert cnn.main(["cnn.py", "cpu"]) == 1
    out = capsys.readouterr()
    assert ": FAIL" in out.out and "does not match" in out.err
    cnn.forward_numpy = good
    assert cnn.main(["cnn.py", "cpu"]) == 0


def test_cnn_numpy_reference_pieces():
    # The reference's conv and pool against direct loops on a small case, so the
    # comparison above is against the right network.
    spec = importlib.util.spec_from_file_location("cnn_example", CNN)
    cnn = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cnn)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 4, 5, 5))
    w = rng.standard_normal((4, 2, 3, 3))
    y = cnn.conv2d_np(x, w, pad=1, groups=2)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    for k in range(4):
        g = k // 2
        for i in range(5):
            for j in range(5):
                ref = np.sum(xp[0, 2 * g:2 * g + 2, i:i + 3, j:j + 3] * w[k])
                assert abs(y[0, k, i, j] - ref) < 1e-12, (k, i, j, y[0, k, i, j], ref)
    m = cnn.maxpool_np(x, 3, 2, pad=1)
    assert m.shape == (1, 4, 3, 3)
    assert m[0, 1, 1, 1] == x[0, 1, 1:4, 1:4].max() and m[0, 2, 0, 0] == x[0, 2, 0:2, 0:2].max()


@pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler")
def test_overhead_benchmark_runs():
    # A short run: it compiles the C loop, times every row and states the verdict.
    bench = os.path.join(EXAMPLES, "..", "bench", "overhead.py")
    r = subprocess.run([sys.executable, bench, "--iterations", "200", "--repeats", "3"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = [line.split() for line in r.stdout.splitlines()
            if line.split() and line.split()[0] in ("1x1x1", "4x4x4", "16x16x16")]
    assert len(rows) == 3 and all(len(row) == 9 for row in rows), r.stdout
    assert all(float(v) > 0 for row in rows for v in (row[1], row[2], row[8])), r.stdout
    assert "target < 5 us" in r.stdout, r.stdout
