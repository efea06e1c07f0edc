"""Incompatible shapes in comparisons, logical, bitwise and other non-differentiable binary
ops raise portagrad's ShapeError naming the op (not the library's broadcast error); softmax,
log_softmax and logsumexp over an empty axis give what PyTorch gives."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import ops


@pytest.mark.parametrize("name", ["equal", "not_equal", "less", "less_equal", "greater",
                                  "greater_equal", "logical_and", "logical_or", "logical_xor",
                                  "floor_divide", "nextafter", "bitwise_and", "zeta"])
def test_incompatible_shapes_raise_shape_error(name):
    a, b = np.ones((2, 3)), np.ones((4, 5))
    if name.startswith(("logical", "bitwise")):
        a, b = a.astype(bool), b.astype(bool)
    with pytest.raises(pg.ShapeError, match=f"{name}: expected broadcastable shapes"):
        getattr(ops, name)(a, b)


def test_clip_bounds_of_incompatible_shape():
    with pytest.raises(pg.ShapeError, match="clip: expected broadcastable shapes"):
        ops.clip(np.ones((2, 3)), np.zeros((4, 5)))
    np.testing.assert_array_equal(ops.clip(np.array([[-1.0, 2.0]]), np.zeros((3, 1)),
                                           1.0).array, np.array([[0.0, 1.0]] * 3))


def test_empty_axis_softmax_and_logsumexp():
    x = pg.nn.Parameter(np.ones((2, 0)))
    assert ops.softmax(x, axis=1).shape == (2, 0)
    assert ops.log_softmax(x, axis=1).shape == (2, 0)
    s = ops.logsumexp(x, axis=1)
    np.testing.assert_array_equal(s.array, [-np.inf, -np.inf])
    for y in (ops.sum(ops.softmax(x, axis=1)), ops.sum(s)):
        (g,) = pg.grad(y, [x])
        assert g.shape == (2, 0)


def test_unstack_of_a_0d_array():
    with pytest.raises(pg.AxisError, match="unstack"):
        ops.unstack(np.array(2.0))


@pytest.mark.parametrize("call", [lambda a: ops.sum(np.ones((2, 3)), axis=a),
                                  lambda a: ops.concat([np.ones(2), np.ones(2)], axis=a),
                                  lambda a: ops.softmax(np.ones((2, 3)), axis=a),
                                  lambda a: ops.expand_dims(np.ones(2), axis=a)])
@pytest.mark.parametrize("axis", [np.ones(2), 1.0, True, "1"])
def test_axis_must_be_an_integer(call, axis):
    with pytest.raises(TypeError, match=r"\(axis\): expected an integer"):
        call(axis)


def test_numpy_integer_axes_are_integers():
    assert ops.sum(np.ones((2, 3)), axis=np.int64(1)).shape == (2,)
