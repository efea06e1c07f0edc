"""Gradients at points where the textbook formula is 0 * inf: x**0 at 0 and atan2 at the
origin give 0 (PyTorch's values), while derivatives that do exist there stay exact."""

from __future__ import annotations

import numpy as np

import portagrad as pg
from portagrad import ops
from portagrad.gradcheck import check_double_backward


def test_power_zero_at_zero():
    x = pg.nn.Parameter(np.array([0.0, 2.0]))
    (g,) = pg.grad(ops.sum(x ** 0.0), [x])
    np.testing.assert_array_equal(g.array, [0.0, 0.0])
    b = pg.nn.Parameter(np.array([0.0, 0.0]))
    ga, gb = pg.grad(ops.sum(ops.pow(x, b)), [x, b])
    np.testing.assert_array_equal(ga.array, [0.0, 0.0])
    # d/db x**b = x**b log x, taken as 0 at x == 0.
    np.testing.assert_allclose(gb.array, [0.0, np.log(2.0)])


def test_array_exponent_zero_keeps_mixed_derivatives():
    # d2/(da db) a**b at b == 0 is 1/a: the zero-exponent rule must not hide it.
    a0, b0 = np.array([1.5, 0.7]), np.array([0.0, 0.0])
    a, b = pg.nn.Parameter(a0.copy()), pg.nn.Parameter(b0.copy())
    (ga,) = pg.grad(ops.sum(ops.pow(a, b)), [a], create_graph=True)
    (gab,) = pg.grad(ops.sum(ga), [b])
    np.testing.assert_allclose(gab.array, 1.0 / a0)
    check_double_backward(ops.pow, [a0, b0])


def test_atan2_at_the_origin():
    y = pg.nn.Parameter(np.array([0.0, 1.0]))
    x = pg.nn.Parameter(np.array([0.0, 1.0]))
    gy, gx = pg.grad(ops.sum(ops.atan2(y, x)), [y, x])
    np.testing.assert_allclose(gy.array, [0.0, 0.5])
    np.testing.assert_allclose(gx.array, [0.0, -0.5])
