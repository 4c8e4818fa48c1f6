"""Shared fixtures: one CPU context, seeded random data, the tolerance check
of doc/numerics.md (rel_l2 and max_abs against a float64 NumPy reference)."""
import numpy as np
import pytest

import adnn


@pytest.fixture(scope="module")
def ctx():
    with adnn.Context("cpu") as c:
        yield c


@pytest.fixture
def rng(request):
    # One seed per test, printed by pytest on failure through the test id.
    return np.random.default_rng(abs(hash(request.node.name)) % (2**32))


def check_close(y, ref, rel_l2, max_abs):
    y = np.asarray(y, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    assert y.shape == ref.shape, f"shape {y.shape} != reference {ref.shape}"
    norm = np.linalg.norm(ref)
    err_l2 = np.linalg.norm(y - ref) / norm if norm > 0 else np.linalg.norm(y - ref)
    err_max = np.max(np.abs(y - ref)) / max(1.0, np.max(np.abs(ref))) if ref.size else 0.0
    assert err_l2 <= rel_l2, f"rel_l2 {err_l2:.3g} > {rel_l2:.3g}"
    assert err_max <= max_abs, f"max_abs {err_max:.3g} > {max_abs:.3g}"
