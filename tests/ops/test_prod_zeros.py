"""Derivatives of prod at inputs with zeros, to third order, against their closed forms:
d/dx_i = prod_{k != i} x_k, d2/dx_i dx_j = prod_{k != i, j} x_k (i != j, else 0), and so
on -- a division by x would give 0/0 there."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import portagrad as pg
from portagrad import ops


def _others(x, skip):
    return float(np.prod([v for k, v in enumerate(x) if k not in skip]))


def _closed_form(x, order):
    n = len(x)
    out = np.zeros((n,) * order)
    for idx in itertools.product(range(n), repeat=order):
        if len(set(idx)) == order:
            out[idx] = _others(x, set(idx))
    return out


@pytest.mark.parametrize("x0", [[2.0, 0.0, 3.0, -1.5], [2.0, 0.0, 0.0, 4.0],
                                [0.0, 0.0, 0.0, 5.0], [0.0, 0.0, 0.0, 0.0],
                                [1.5, 2.0, -0.5, 3.0]])
def test_first_to_third_derivatives(x0):
    x0 = np.array(x0)

    def grad(v):
        return pg.grad(ops.prod(v), [v], create_graph=True)[0]

    np.testing.assert_allclose(grad(pg.nn.Parameter(x0)).array, _closed_form(x0, 1))
    np.testing.assert_allclose(pg.jacobian(grad, x0).array, _closed_form(x0, 2), atol=1e-12)
    third = pg.jacobian(lambda v: pg.jacobian(grad, v, create_graph=True), x0).array
    np.testing.assert_allclose(third, _closed_form(x0, 3), atol=1e-12)


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), (1, 2)])
def test_second_order_over_axes_against_finite_differences(axis):
    from portagrad.gradcheck import check_backward, check_double_backward

    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((3, 4, 2))
    x0[1, 2, 0] = x0[0, 1, 1] = x0[0, 3, 1] = 0.0

    def f(v):
        return ops.prod(v, axis=axis)

    check_backward(f, [x0])
    check_double_backward(f, [x0])


@pytest.mark.parametrize("axis", [0, 1])
def test_cumulative_prod_at_zeros(axis):
    from portagrad.gradcheck import check_backward, check_double_backward

    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((3, 4))
    x0[1, 2] = x0[0, 0] = x0[2, 1] = 0.0

    def f(v):
        return ops.cumulative_prod(v, axis=axis)

    check_backward(f, [x0])
    check_double_backward(f, [x0])
    # Closed form of the first derivative on a row with zeros: d/dx_j of sum_i y_i is
    # sum_{i >= j} prod_{k <= i, k != j} x_k.
    x1 = np.array([2.0, 0.0, 3.0, 0.0, 1.5])
    v = pg.nn.Parameter(x1)
    (g,) = pg.grad(ops.sum(ops.cumulative_prod(v)), [v])
    want = [sum(_others(x1[:i + 1], {j}) for i in range(j, 5)) for j in range(5)]
    np.testing.assert_allclose(g.array, want)
