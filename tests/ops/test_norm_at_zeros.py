"""The Euclidean norm's derivatives where entries are zero (exact, every order) and at
the zero vector (gradient 0, PyTorch's subgradient, not NaN)."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import ops
from portagrad.gradcheck import check_backward, check_double_backward


def _hessian_closed_form(x):
    r = np.linalg.norm(x)
    return np.eye(len(x)) / r - np.outer(x, x) / r ** 3


@pytest.mark.parametrize("x0", [[2.0, 0.0, 3.0, 0.0], [0.0, 0.0, -1.5], [1.0, 2.0, 2.0]])
def test_hessian_with_zero_entries(x0):
    x0 = np.array(x0)
    h = pg.hessian(lambda v: ops.linalg.vector_norm(v), x0).array
    np.testing.assert_allclose(h, _hessian_closed_form(x0), atol=1e-12)


def test_zero_vector_and_zero_rows_have_zero_gradient():
    x = pg.nn.Parameter(np.array([[0.0, 0.0], [3.0, 4.0]]))
    (g,) = pg.grad(ops.sum(ops.linalg.vector_norm(x, axis=1)), [x])
    np.testing.assert_array_equal(g.array, [[0.0, 0.0], [0.6, 0.8]])
    m = pg.nn.Parameter(np.zeros((2, 2)))
    (gm,) = pg.grad(ops.linalg.matrix_norm(m), [m])
    np.testing.assert_array_equal(gm.array, np.zeros((2, 2)))


@pytest.mark.parametrize("keepdims", [False, True])
def test_numerical_second_order_with_zero_entries(keepdims):
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((3, 4))
    x0[0, 1] = x0[2, 0] = x0[2, 3] = 0.0

    def f(v):
        return ops.linalg.vector_norm(v, axis=1, keepdims=keepdims)

    check_backward(f, [x0])
    check_double_backward(f, [x0])


def test_complex_input_keeps_the_composite():
    z = np.array([3.0 + 4.0j, 0.0 + 0.0j])
    assert float(ops.linalg.vector_norm(z).array) == pytest.approx(5.0)


def test_std_of_constant_data_has_zero_gradient():
    x = pg.nn.Parameter(np.array([[2.0, 2.0, 2.0], [1.0, 3.0, 2.0]]))
    (g,) = pg.grad(ops.sum(ops.std(x, axis=1)), [x])
    np.testing.assert_allclose(g.array, [[0.0, 0.0, 0.0], [-0.5 / np.sqrt(2 / 3) / 1.5,
                                                           0.5 / np.sqrt(2 / 3) / 1.5, 0.0]])
    check_double_backward(lambda v: ops.std(v, axis=1, correction=1.0),
                          [np.array([[1.0, 3.0, 2.5], [0.5, -1.0, 4.0]])])
