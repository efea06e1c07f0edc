"""unstack is one op with an output per slice; its gradient stacks the slices' gradients,
with zeros for slices the loss does not use, to every order."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import ops


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gradient_with_unused_slices(axis):
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((3, 4, 2))
    x = pg.nn.Parameter(x0.copy())
    parts = ops.unstack(x, axis=axis)
    assert len(parts) == x0.shape[axis]
    loss = ops.sum(parts[0] * parts[0]) + ops.sum(ops.sin(parts[-1]))
    (g,) = pg.grad(loss, [x], create_graph=True)
    want = np.zeros_like(x0)
    first = np.take(x0, 0, axis=axis)
    last = np.take(x0, x0.shape[axis] - 1, axis=axis)
    idx = [slice(None)] * 3
    idx[axis] = 0
    want[tuple(idx)] = 2 * first
    idx[axis] = -1
    want[tuple(idx)] += np.cos(last)
    np.testing.assert_allclose(g.array, want, rtol=1e-12)
    # Second order: d/dx of sum(g) is 2 on the first slice and -sin on the last.
    (h,) = pg.grad(ops.sum(g), [x])
    want2 = np.zeros_like(x0)
    idx[axis] = 0
    want2[tuple(idx)] = 2.0
    idx[axis] = -1
    want2[tuple(idx)] += -np.sin(last)
    np.testing.assert_allclose(h.array, want2, rtol=1e-12)


def test_single_and_empty_axes():
    (only,) = ops.unstack(np.arange(3.0)[None, :], axis=0)
    np.testing.assert_array_equal(only.array, np.arange(3.0))
    assert ops.unstack(np.zeros((0, 2)), axis=0) == ()
