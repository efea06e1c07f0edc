"""The linalg extension: values against NumPy, gradients against finite differences and
closed forms, and the cases the gradients refuse."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import DTypeError, GradientError, ShapeError
from portagrad.gradcheck import check_grads
from portagrad.xp import to_numpy

L = pg.ops.linalg


def _wc(rng, m, n):
    """Singular values 1, 1.7, 2.4...: well conditioned, distinct."""
    q1, _ = np.linalg.qr(rng.standard_normal((m, m)))
    q2, _ = np.linalg.qr(rng.standard_normal((n, n)))
    k = min(m, n)
    s = np.zeros((m, n))
    s[:k, :k] = np.diag(1.0 + 0.7 * np.arange(k))
    return q1 @ s @ q2.T


def _np(v):
    return to_numpy(v.array)


def test_values_match_numpy(backend, rng):
    a = _wc(rng, 3, 3)
    s = a @ a.T + np.eye(3)
    A, S = backend.asarray(a), backend.asarray(s)
    np.testing.assert_allclose(_np(L.inv(A)), np.linalg.inv(a), atol=1e-12)
    np.testing.assert_allclose(_np(L.det(A)), np.linalg.det(a), atol=1e-12)
    sign, logdet = L.slogdet(A)
    np.testing.assert_allclose(_np(sign), np.linalg.slogdet(a)[0])
    np.testing.assert_allclose(_np(logdet), np.linalg.slogdet(a)[1], atol=1e-12)
    np.testing.assert_allclose(_np(L.cholesky(S)), np.linalg.cholesky(s), atol=1e-12)
    np.testing.assert_allclose(_np(L.cholesky(S, upper=True)), np.linalg.cholesky(s).T,
                               atol=1e-12)
    np.testing.assert_allclose(_np(L.eigvalsh(S)), np.linalg.eigvalsh(s), atol=1e-12)
    np.testing.assert_allclose(_np(L.svdvals(A)), np.linalg.svd(a, compute_uv=False),
                               atol=1e-12)
    np.testing.assert_allclose(_np(L.pinv(A[:, :2])), np.linalg.pinv(a[:, :2]), atol=1e-12)
    np.testing.assert_allclose(_np(L.matrix_power(A, 3)), a @ a @ a, atol=1e-12)
    np.testing.assert_allclose(_np(L.matrix_power(A, -2)), np.linalg.inv(a @ a), atol=1e-12)
    np.testing.assert_allclose(_np(L.matrix_power(A, 0)), np.eye(3))
    for ordr in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        np.testing.assert_allclose(_np(L.matrix_norm(A, ord=ordr)),
                                   np.linalg.norm(a, ord=ordr), atol=1e-12)
    for ordr in (2, 1, 3, np.inf, -np.inf, 0, -1):
        np.testing.assert_allclose(_np(L.vector_norm(A, ord=ordr, axis=0)),
                                   np.linalg.norm(a, ord=ordr, axis=0), atol=1e-12)
    np.testing.assert_allclose(_np(L.trace(A, offset=-1)), np.trace(a, offset=-1))
    np.testing.assert_allclose(_np(L.diagonal(A, offset=2)), np.diagonal(a, offset=2))
    assert int(_np(L.matrix_rank(backend.asarray(np.outer([1.0, 2.0], [3.0, 4.0]))))) == 1


def test_solve_broadcasts_and_takes_vectors(backend, rng):
    a = np.stack([_wc(rng, 3, 3), _wc(rng, 3, 3)])
    b = rng.standard_normal((3, 2))
    got = L.solve(backend.asarray(a), backend.asarray(b))
    np.testing.assert_allclose(_np(got), np.linalg.solve(a, np.broadcast_to(b, (2, 3, 2))),
                               atol=1e-12)
    v = rng.standard_normal(3)
    got = L.solve(backend.asarray(a[0]), backend.asarray(v))
    np.testing.assert_allclose(_np(got), np.linalg.solve(a[0], v), atol=1e-12)


def test_gradients_of_closed_forms(rng):
    a = _wc(rng, 3, 3)
    # d log|det A| / dA = inv(A)^T
    A = pg.Variable(a)
    L.slogdet(A).logabsdet.backward()
    np.testing.assert_allclose(A.grad, np.linalg.inv(a).T, atol=1e-12)
    # d tr(A) / dA = I; d ||A||_F^2 / dA = 2A
    A = pg.Variable(a)
    (L.trace(A) + L.matrix_norm(A) ** 2).backward()
    np.testing.assert_allclose(A.grad, np.eye(3) + 2 * a, atol=1e-12)
    # d sum(svdvals) / dA = U Vh (the nuclear norm's gradient)
    A = pg.Variable(a)
    L.matrix_norm(A, ord="nuc").backward()
    u, _, vh = np.linalg.svd(a)
    np.testing.assert_allclose(A.grad, u @ vh, atol=1e-10)
    # d sum(eigvalsh(S)) / dS = I (the trace)
    s = a + a.T
    S = pg.Variable(s)
    pg.ops.sum(L.eigvalsh(S)).backward()
    np.testing.assert_allclose(S.grad, np.eye(3), atol=1e-10)


@pytest.mark.parametrize("name", ["inv", "det", "solve", "cholesky", "qr", "eigh", "svd",
                                  "pinv"])
def test_second_order_on_every_backend(backend, rng, name):
    a = _wc(rng, 3, 3)

    def sym(x):
        return (x + pg.ops.matrix_transpose(x)) * 0.5

    fns = {
        "inv": (L.inv, (a,)),
        "det": (L.det, (a,)),
        "solve": (L.solve, (a, rng.standard_normal((3, 2)))),
        "cholesky": (lambda x: L.cholesky(sym(x)), (a @ a.T + np.eye(3),)),
        "qr": (lambda x: L.qr(x).R, (a[:, :2],)),
        "eigh": (lambda x: L.eigh(sym(x)).eigenvectors ** 2, (a @ a.T,)),
        "svd": (lambda x: L.svd(x, full_matrices=False).U ** 2, (a[:2],)),
        "pinv": (L.pinv, (a[:, :2],)),
    }
    fn, host = fns[name]
    check_grads(fn, tuple(backend.asarray(h) for h in host), order=2, eps=1e-4)


def test_svd_full_matrices_extra_columns_get_no_gradient(rng):
    a = _wc(rng, 2, 4)
    A = pg.Variable(a)
    u, s, vh = L.svd(A)  # vh is 4 x 4; its last two rows are any basis
    assert vh.shape == (4, 4)
    pg.ops.sum(s).backward()
    u_, _, vh_ = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(A.grad, u_ @ vh_, atol=1e-10)


def test_qr_complete_of_a_tall_matrix_has_no_q_gradient(rng):
    A = pg.Variable(_wc(rng, 4, 2))
    q, r = L.qr(A, mode="complete")
    assert q.shape == (4, 4) and r.shape == (4, 2)
    with pytest.raises(GradientError, match="not unique"):
        pg.ops.sum(q).backward()


def test_wide_qr_is_differentiable(rng):
    check_grads(lambda x: tuple(L.qr(x)), (_wc(rng, 2, 4),), order=2, eps=1e-4)


def test_bad_inputs_raise_portagrad_errors():
    with pytest.raises(ShapeError, match=r"linalg.inv\(x\): expected square"):
        L.inv(np.ones((2, 3)))
    with pytest.raises(DTypeError, match=r"linalg.det\(x\): expected a floating-point"):
        L.det(np.eye(2, dtype=np.int64))
    with pytest.raises(GradientError, match=r"linalg.pinv: expected a real floating input"):
        pg.ops.sum(pg.ops.real(L.pinv(pg.Variable(np.eye(2, dtype=np.complex128))))).backward()
    with pytest.raises(ShapeError):
        L.solve(np.eye(2), np.ones(3))
    with pytest.raises(ShapeError):
        L.cross(np.ones(2), np.ones(2))
    with pytest.raises(ShapeError):
        L.outer(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError):
        L.matrix_norm(np.eye(2), ord=3)
    with pytest.raises(TypeError):
        L.matrix_power(np.eye(2), 1.5)


def test_torch_gradients_agree(rng):
    torch = pytest.importorskip("torch")
    a = _wc(rng, 3, 3)
    t = torch.tensor(a, requires_grad=True)
    (torch.linalg.det(t) + torch.linalg.svdvals(t).sum() + torch.linalg.inv(t).sum()
     + torch.linalg.eigvalsh(t @ t.T)[-1]).backward()
    A = pg.Variable(a)
    (L.det(A) + pg.ops.sum(L.svdvals(A)) + pg.ops.sum(L.inv(A))
     + L.eigvalsh(A @ A.mT)[-1]).backward()
    np.testing.assert_allclose(A.grad, t.grad.numpy(), atol=1e-10)


def test_backward_without_create_graph_equals_the_recorded_one(rng):
    """Backward without create_graph takes raw products and sums a variable's gradients in
    place (a transposed one and plain ones here, through the gradient of the gradient): the
    values are those of the recorded ops."""
    a = pg.Variable(rng.standard_normal((6, 4)))
    b = pg.Variable(rng.standard_normal((6, 5)))
    w = pg.Variable(rng.standard_normal((3, 5)))

    def loss():
        return pg.ops.sum(pg.ops.matmul(a.mT, b) ** 2) + pg.ops.sum(
            pg.ops.linear(b.mT.mT, w) ** 3) + pg.ops.sum(pg.ops.matmul(b, b.mT) * 0.5)

    got = pg.grad(loss(), [a, b, w])
    kept = pg.grad(loss(), [a, b, w], create_graph=True)  # recorded products
    for g, r in zip(got, kept):
        np.testing.assert_allclose(g.array, r.array, rtol=1e-12, atol=1e-12)
    vs = [rng.standard_normal(v.shape) for v in (a, b, w)]
    hv = pg.grad(kept, [a, b, w], grad_outputs=vs, retain_graph=True)
    ref = pg.grad(kept, [a, b, w], grad_outputs=vs, create_graph=True)  # recorded again
    for g, r in zip(hv, ref):
        np.testing.assert_allclose(g.array, r.array, rtol=1e-10, atol=1e-12)


def test_accumulate_sums_alike_and_opposite_layouts():
    from portagrad.xp._accumulate import accumulate
    from portagrad.xp._namespace import namespace_of

    xp = namespace_of(np.ones(1))
    c = np.arange(12.0).reshape(3, 4)
    for total, term in ((c.copy(), c.T.copy().T), (c.T.copy().T, c.copy()),
                        (c.copy(), c.copy()), (np.ones(3), np.arange(3.0))):
        expected = total + term
        np.testing.assert_array_equal(accumulate(xp, total, term), expected)
