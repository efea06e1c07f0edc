"""Singular matrices: inverses, solves and Cholesky factors raise portagrad's LinAlgError
naming the op (not the library's); det is differentiable there (cofactor matrix)."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import ops
from portagrad.gradcheck import check_backward, check_double_backward, check_grads

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


# Rank 2 (row 3 = row 1 + row 2), but its computed determinant is -1.6e-16, not 0: the
# gradient det(A) inv(A)^T is 0 * inf there, and its derivatives cancel terms of 1e16.
NEAR_SINGULAR = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.9], [1.4, -0.8, -0.2]])


def _det_derivative_tensor(n):
    """T[a, b, c, d, e, f] = d^3 det / dA_ab dA_cd dA_ef for n = 3 (constant: det is a
    cubic), so the gradient is T(A, A)/2, the Hessian T(A)."""
    import itertools

    t = np.zeros((n,) * 6)
    for perm in itertools.permutations(range(n)):
        sign = np.linalg.det(np.eye(n)[list(perm)])
        for rows in itertools.permutations(range(n)):
            t[tuple(i for r in rows for i in (r, perm[r]))] += sign
    return t


def _det_derivatives(m, v, w):
    x = pg.Variable(m.copy(), requires_grad=True)
    (g1,) = pg.grad(ops.linalg.det(x), [x], create_graph=True)
    (g2,) = pg.grad(ops.sum(g1 * v), [x], create_graph=True)
    (g3,) = pg.grad(ops.sum(g2 * w), [x])
    return g1.array, g2.array, g3.array


@pytest.mark.parametrize("m", [NEAR_SINGULAR, np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]])],
                         ids=["near_singular", "singular"])
def test_det_derivatives_of_orders_1_to_3_match_the_polynomial(m):
    t = _det_derivative_tensor(3)
    rng = np.random.default_rng(0)
    v, w = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    g1, g2, g3 = _det_derivatives(m, v, w)
    np.testing.assert_allclose(g1, _cofactor(m), atol=1e-14)
    np.testing.assert_allclose(g1, np.einsum("abcdef,cd,ef->ab", t, m, m) / 2, atol=1e-14)
    np.testing.assert_allclose(g2, np.einsum("abcdef,cd,ef->ab", t, v, m), atol=1e-14)
    np.testing.assert_allclose(g3, np.einsum("abcdef,cd,ef->ab", t, v, w), atol=1e-14)


def test_det_near_singular_matches_finite_differences_to_third_order():
    b = np.zeros((4, 4))
    b[:3, :3] = NEAR_SINGULAR
    b[:, 3] = [0.2, -0.1, 0.4, 0.0]
    b[3] = b[0] + b[1]  # rank 3; computed det about 5e-17
    for m in (NEAR_SINGULAR, b):
        check_grads(ops.linalg.det, [m], order=3)


def test_det_4x4_near_singular_derivatives_match_the_cofactor_expansion():
    # Order 2 and 3 of a rank-deficient 4 x 4 by the same polynomial (minors of minors)
    # computed in NumPy: d/dA of the cofactor matrix along v.
    b = np.zeros((4, 4))
    b[:3, :3] = NEAR_SINGULAR
    b[:, 3] = [0.2, -0.1, 0.4, 0.0]
    b[3] = b[0] + b[1]
    rng = np.random.default_rng(1)
    v, w = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    g1, g2, g3 = _det_derivatives(b, v, w)

    def cof(m):
        return _cofactor(m)

    def directional(f, m, d, h=1e-3):
        # cofactors are cubic in m: a 4-point central difference is exact up to rounding
        return (-f(m + 2 * h * d) + 8 * f(m + h * d) - 8 * f(m - h * d) + f(m - 2 * h * d)) \
            / (12 * h)

    np.testing.assert_allclose(g1, cof(b), atol=1e-13)
    # g2 = d/dA <cof(A), v>: by symmetry of the Hessian, the derivative of cof along v
    np.testing.assert_allclose(g2, directional(cof, b, v), atol=1e-9)
    np.testing.assert_allclose(
        g3, directional(lambda m: directional(cof, m, v), b, w), atol=1e-6)


def test_slogdet_backward_at_a_singular_matrix_names_slogdet():
    x = pg.nn.Parameter(SINGULAR.copy())
    with pytest.raises(pg.LinAlgError, match=r"linalg\.slogdet\(x\)") as info:
        ops.linalg.slogdet(x).logabsdet.backward()
    assert "linalg.inv" not in str(info.value)
