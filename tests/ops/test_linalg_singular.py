"""Singular matrices: inverses, solves and Cholesky factors raise portagrad's LinAlgError
naming the op (not the library's); det is differentiable there (cofactor matrix)."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import ops
from portagrad.gradcheck import check_backward, check_double_backward

SINGULAR = np.array([[2.0, 0.0], [3.0, 0.0]])


def _backends():
    out = [("numpy", np.asarray)]
    try:
        import array_api_strict as xps

        out.append(("array_api_strict", xps.asarray))
    except ImportError:
        pass
    try:
        import torch

        out.append(("torch", torch.asarray))
    except ImportError:
        pass
    return out


@pytest.mark.parametrize("name,conv", _backends())
@pytest.mark.parametrize("op,call", [
    ("linalg.inv", lambda m: ops.linalg.inv(m)),
    ("linalg.solve", lambda m: ops.linalg.solve(m, m[:, :1] * 0 + 1)),
    ("linalg.cholesky", lambda m: ops.linalg.cholesky(m)),
])
def test_singular_input_raises_portagrad_linalg_error(name, conv, op, call):
    with pytest.raises(pg.LinAlgError, match=op.replace(".", r"\.")) as info:
        call(conv(SINGULAR))
    assert isinstance(info.value, ValueError)


def _cofactor(m):
    n = m.shape[0]
    c = np.empty_like(m)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(m, i, axis=0), j, axis=1)
            c[i, j] = (-1) ** (i + j) * (np.linalg.det(minor) if n > 1 else 1.0)
    return c


@pytest.mark.parametrize("m", [SINGULAR, np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]]),
                               np.array([[1.0, 2, 3], [2, 4, 6], [3, 6, 9]]),
                               np.zeros((3, 3)), np.zeros((1, 1))])
def test_det_gradient_at_singular_matrices_is_the_cofactor_matrix(m):
    x = pg.nn.Parameter(m.copy())
    (g,) = pg.grad(ops.linalg.det(x), [x])
    np.testing.assert_allclose(g.array, _cofactor(m), atol=1e-12)


def test_det_second_order_at_singular_matrices():
    # det of 2x2 is ad - bc: its Hessian is constant.
    h = pg.hessian(lambda v: ops.linalg.det(v), SINGULAR).array.reshape(4, 4)
    want = np.zeros((4, 4))
    want[0, 3] = want[3, 0] = 1.0
    want[1, 2] = want[2, 1] = -1.0
    np.testing.assert_allclose(h, want, atol=1e-12)
    rank2 = np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]])
    check_backward(ops.linalg.det, [rank2])
    check_double_backward(ops.linalg.det, [rank2])


def test_batched_det_with_one_singular_matrix():
    ms = np.stack([SINGULAR, np.array([[2.0, 1.0], [1.0, 3.0]])])
    x = pg.nn.Parameter(ms.copy())
    (g,) = pg.grad(ops.sum(ops.linalg.det(x)), [x])
    np.testing.assert_allclose(g.array, np.stack([_cofactor(m) for m in ms]), atol=1e-12)
