"""Neural-network kernels on CuPy (a CUDA device): fast paths equal the pure-standard path,
results and gradients stay on the device, the CuPy random engine resumes exactly."""

from __future__ import annotations

import json

import numpy as np
import pytest

import portagrad as pg
from portagrad.xp import pure_standard, to_numpy

pytestmark = pytest.mark.gpu
cp = pytest.importorskip("cupy")
try:
    _HAS_DEVICE = cp.cuda.runtime.getDeviceCount() > 0
except Exception:  # noqa: BLE001 - no driver
    _HAS_DEVICE = False
if not _HAS_DEVICE:
    pytest.skip("needs a CUDA device", allow_module_level=True)

ops = pg.ops


def _run(fn, *host):
    args = [pg.Variable(cp.asarray(h)) if h.dtype.kind == "f" else cp.asarray(h) for h in host]
    y = fn(*args)
    grads = pg.grad(ops.sum(y * y), [a for a in args if isinstance(a, pg.Variable)])
    return [to_numpy(y.array)] + [to_numpy(g.array) for g in grads]


@pytest.mark.parametrize("name, fn, shapes", [
    ("conv2d", lambda x, w: ops.conv2d(x, w, stride=2, padding=1, groups=2),
     [(2, 4, 7, 7), (6, 2, 3, 3)]),
    ("conv_transpose2d", lambda x, w: ops.conv_transpose2d(x, w, stride=2, padding=1),
     [(2, 3, 4, 4), (3, 2, 3, 3)]),
    ("max_pool2d", lambda x: ops.max_pool2d(x, 3, 2, 1, ceil_mode=True), [(2, 3, 7, 7)]),
    ("avg_pool3d", lambda x: ops.avg_pool3d(x, 2, 1, 1, count_include_pad=False),
     [(2, 2, 4, 4, 4)]),
])
def test_fast_paths_equal_the_pure_standard_path(name, fn, shapes):
    rng = np.random.default_rng(0)
    host = [rng.standard_normal(s) for s in shapes]
    fast = _run(fn, *host)
    with pure_standard():
        slow = _run(fn, *host)
    for f, s in zip(fast, slow):
        np.testing.assert_allclose(f, s, rtol=1e-10, atol=1e-10)


def test_softmax_cross_entropy_fast_path_and_device():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 5))
    t = rng.integers(0, 5, 8)
    fast = _run(lambda a, b: ops.softmax_cross_entropy(a, b), x, t)
    with pure_standard():
        slow = _run(lambda a, b: ops.softmax_cross_entropy(a, b), x, t)
    for f, s in zip(fast, slow):
        np.testing.assert_allclose(f, s, rtol=1e-12)


def test_cupy_generator_draws_on_the_device_and_resumes():
    like = cp.zeros(1, dtype=cp.float32)
    g = pg.random.Generator(3)
    a = g.normal((4, 5), like=like)
    assert isinstance(a, cp.ndarray) and a.dtype == cp.float32
    state = json.loads(json.dumps(g.get_state()))
    b = g.uniform((6,), like=like)
    m = g.bernoulli((7,), 0.5, like=like)
    h = pg.random.Generator(0)
    h.set_state(state)
    cp.testing.assert_array_equal(h.uniform((6,), like=like), b)
    cp.testing.assert_array_equal(h.bernoulli((7,), 0.5, like=like), m)
    y = ops.dropout(pg.Variable(cp.ones(100)), 0.5, train=True, generator=g)
    assert isinstance(y.array, cp.ndarray)
