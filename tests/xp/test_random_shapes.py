"""The host engine's draws keep the shape asked for, 0-d included."""

from __future__ import annotations

import pytest

import portagrad as pg


@pytest.mark.parametrize("shape", [(), (1,), (2, 3)])
def test_draws_keep_their_shape(backend, shape):
    g = pg.random.Generator(0)
    kw = {"xp": backend.xp, "device": backend.device}
    assert tuple(g.integers(0, 10, shape, **kw).shape) == shape
    assert tuple(g.uniform(shape, **kw).shape) == shape
    assert tuple(g.normal(shape, **kw).shape) == shape
