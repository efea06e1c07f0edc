"""Dropout and portagrad.random: seeded generators per library, exact resume."""

from __future__ import annotations

import json

import numpy as np
import pytest

import portagrad as pg
from portagrad.random import Generator
from portagrad.xp import namespace_of, to_numpy

ops = pg.ops


def _np(v):
    return to_numpy(v.array if isinstance(v, pg.Variable) else v)


def test_dropout_scales_kept_elements_and_routes_gradient(backend):
    x = pg.Variable(backend.asarray(np.ones((100, 50))))
    y = ops.dropout(x, 0.3, generator=Generator(0), train=True)
    out = _np(y)
    kept = out != 0
    np.testing.assert_allclose(out[kept], 1 / 0.7)
    assert 0.65 < kept.mean() < 0.75
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), kept / 0.7)
    assert namespace_of(y.array) is namespace_of(x.array)
    assert y.array.device == x.array.device


def test_dropout_reads_the_train_configuration():
    x = np.ones(10)
    assert ops.is_train_mode()
    with ops.set_train_mode(False):
        assert not ops.is_train_mode()
        assert ops.dropout(x, 0.5).array is x
        # An explicit train=True wins over the configuration.
        assert (ops.dropout(x, 0.5, train=True, generator=Generator(1)).array == 0).any()
    assert ops.is_train_mode()

    @ops.set_train_mode(False)
    def evaluate():
        return ops.dropout(x, 0.9)

    assert evaluate().array is x


def test_dropout_same_seed_same_mask_and_bad_ratio():
    x = np.ones(1000)
    a = ops.dropout(x, 0.5, generator=Generator(3)).array
    b = ops.dropout(x, 0.5, generator=Generator(3)).array
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match=r"dropout\(ratio\)"):
        ops.dropout(x, 1.5)
    # Dropping everything gives 0, and no gradient (PyTorch's ratio 1).
    v = pg.Variable(x)
    y = ops.dropout(v, 1.0, train=True)
    y.sum().backward()
    assert not np.any(y.array) and not np.any(v.grad)
    with pytest.raises(pg.DTypeError):
        ops.dropout(np.arange(3), 0.5)


def test_dropout_returns_its_mask_and_takes_one_back(backend):
    x = pg.Variable(backend.asarray(np.arange(1.0, 13.0).reshape(3, 4)))
    y, mask = ops.dropout(x, 0.25, generator=Generator(2), train=True, return_mask=True)
    assert sorted(set(_np(mask).ravel().tolist())) == [0.0, 4 / 3]
    again = ops.dropout(x, 0.9, mask=mask, train=True)  # ratio is not used with a mask
    np.testing.assert_array_equal(_np(again), _np(y))
    again.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), _np(mask))
    # A mask of sizes 1 is broadcast (as a drawn one of noise_shape); another raises.
    rows = ops.dropout(x, mask=backend.asarray(np.array([[0.0], [2.0], [1.0]])), train=True)
    np.testing.assert_array_equal(_np(rows), np.arange(1.0, 13.0).reshape(3, 4)
                                  * np.array([[0.0], [2.0], [1.0]]))
    with pytest.raises(pg.ShapeError, match=r"dropout\(mask\)"):
        ops.dropout(x, mask=backend.asarray(np.ones((4, 3))), train=True)
    same, none = ops.dropout(x, mask=mask, train=False, return_mask=True)
    assert same is x and none is None
    _, ones = ops.dropout(x, 0.0, train=True, return_mask=True)
    np.testing.assert_array_equal(_np(ones), np.ones((3, 4)))


def test_host_drawn_libraries_share_the_stream():
    import array_api_strict as xs

    a = Generator(5).normal((4, 3), like=np.zeros(1))
    b = Generator(5).normal((4, 3), like=xs.asarray([0.0], device=xs.Device("device1")))
    assert b.device == xs.Device("device1")
    np.testing.assert_array_equal(a, to_numpy(b))


@pytest.mark.parametrize("library", ["numpy", "torch"])
def test_state_round_trips_through_json_and_resumes_exactly(library):
    if library == "torch":
        torch = pytest.importorskip("torch")
        like = torch.zeros(1, dtype=torch.float64)
    else:
        like = np.zeros(1)
    g = Generator(11)
    g.uniform((3,), like=like)
    state = json.loads(json.dumps(g.get_state()))
    draws = [g.uniform((5,), like=like), g.normal((2, 2), like=like),
             g.bernoulli((6,), 0.3, like=like), g.permutation(7, like=like),
             g.integers(0, 9, (4,), like=like)]
    h = Generator(999)
    h.set_state(state)
    again = [h.uniform((5,), like=like), h.normal((2, 2), like=like),
             h.bernoulli((6,), 0.3, like=like), h.permutation(7, like=like),
             h.integers(0, 9, (4,), like=like)]
    for a, b in zip(draws, again):
        np.testing.assert_array_equal(to_numpy(a), to_numpy(b))


def test_draw_dtypes_shapes_and_distributions():
    g = Generator(0)
    f32 = np.zeros(1, dtype=np.float32)
    assert g.uniform((2, 3), like=f32).dtype == np.float32
    assert g.normal(4).shape == (4,)
    z = g.normal((20000,), 2.0, 3.0)
    assert abs(z.mean() - 2.0) < 0.1 and abs(z.std() - 3.0) < 0.1
    u = g.uniform((20000,), -2.0, 2.0)
    assert u.min() >= -2.0 and u.max() < 2.0 and abs(u.mean()) < 0.05
    assert sorted(g.permutation(6).tolist()) == list(range(6))
    assert g.permutation(6).dtype == np.int64
    with pytest.raises(ValueError, match=r"bernoulli\(p\)"):
        g.bernoulli(3, 1.5)
    with pytest.raises(pg.ShapeError, match=r"uniform\(shape\)"):
        g.uniform((-1, 2))
    with pytest.raises(TypeError, match=r"Generator\(seed\)"):
        Generator(-3)


def test_module_level_seed_resets_the_default_generator():
    held = pg.random.default_generator()
    pg.random.seed(42)
    a = held.uniform((3,))
    pg.random.seed(42)
    np.testing.assert_array_equal(pg.random.default_generator().uniform((3,)), a)
    assert pg.random.default_generator() is held
    state = pg.random.get_state()
    b = pg.random.default_generator().normal((2,))
    pg.random.set_state(state)
    np.testing.assert_array_equal(pg.random.default_generator().normal((2,)), b)
