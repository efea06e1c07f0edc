"""portagrad.autograd against torch.autograd.functional, finite differences and algebra."""

import numpy as np
import pytest

import portagrad as pg
from portagrad.xp import to_numpy

F = pg.ops


def _np(v):
    return to_numpy(v.array)


def f_vec(x):
    # R^3 -> R^2, nonlinear in every input
    return F.stack([F.sum(F.sin(x) * x), x[0] * x[1] ** 2 + F.exp(x[2])])


def f_scalar(x, y):
    return F.sum(F.tanh(x)) * F.sum(y ** 2) + F.sum(x ** 3) * F.sum(y) + x[0] * F.sin(y[1])


def _numeric_jacobian(f, x, eps=1e-6):
    cols = []
    for k in range(x.size):
        d = np.zeros_like(x)
        d.flat[k] = eps
        cols.append((f(x + d) - f(x - d)) / (2 * eps))
    return np.stack(cols, axis=-1)


def _f_vec_np(x):
    return np.array([np.sum(np.sin(x) * x), x[0] * x[1] ** 2 + np.exp(x[2])])


def test_jacobian_vjp_jvp_agree_with_finite_differences(backend):
    x_np = np.array([0.3, -1.2, 0.7])
    J = _numeric_jacobian(_f_vec_np, x_np)
    x = backend.asarray(x_np)
    np.testing.assert_allclose(_np(pg.jacobian(f_vec, x)), J, rtol=1e-7, atol=1e-8)
    u = np.array([0.5, -2.0])
    out, g = pg.vjp(f_vec, x, backend.asarray(u))
    np.testing.assert_allclose(_np(out), _f_vec_np(x_np), rtol=1e-12)
    np.testing.assert_allclose(_np(g), u @ J, rtol=1e-7)
    t = np.array([1.0, 0.25, -3.0])
    out, jv = pg.jvp(f_vec, x, backend.asarray(t))
    np.testing.assert_allclose(_np(jv), J @ t, rtol=1e-7)
    assert out.creator is None and jv.creator is None and g.creator is None


def test_hessian_and_hvp_of_two_inputs(backend, rng):
    x_np, y_np = rng.standard_normal(3), rng.standard_normal(2)
    x, y = backend.asarray(x_np), backend.asarray(y_np)
    H = pg.hessian(f_scalar, (x, y))
    full = np.block([[_np(H[0][0]), _np(H[0][1])], [_np(H[1][0]), _np(H[1][1])]])
    assert full.shape == (5, 5)
    np.testing.assert_allclose(full, full.T, rtol=1e-10, atol=1e-12)

    # Finite differences of the exact gradient.
    def g_flat(z):
        xv, yv = pg.Variable(z[:3]), pg.Variable(z[3:])
        return np.concatenate([g.array for g in pg.grad(f_scalar(xv, yv), [xv, yv])])

    z = np.concatenate([x_np, y_np])
    np.testing.assert_allclose(full, _numeric_jacobian(g_flat, z), rtol=1e-6, atol=1e-7)
    v = (rng.standard_normal(3), rng.standard_normal(2))
    out, hv = pg.hvp(f_scalar, (x, y), (backend.asarray(v[0]), backend.asarray(v[1])))
    np.testing.assert_allclose(np.concatenate([_np(hv[0]), _np(hv[1])]),
                               full @ np.concatenate(v), rtol=1e-9, atol=1e-12)
    _, vh = pg.vhp(f_scalar, (x, y), (backend.asarray(v[0]), backend.asarray(v[1])))
    np.testing.assert_allclose(_np(vh[0]), _np(hv[0]), rtol=1e-12)


def test_results_are_differentiable_with_create_graph():
    # d/dx of (H(x) v) for f = sum(x^4): H v = 12 x^2 v, its gradient along 1 is 24 x v.
    x = pg.Variable(np.array([1.0, -2.0]))
    v = np.array([0.5, 3.0])
    _, hv = pg.hvp(lambda z: F.sum(z ** 4), x, v, create_graph=True)
    np.testing.assert_allclose(hv.array, 12 * x.array ** 2 * v)
    (g,) = pg.grad(F.sum(hv), x)
    np.testing.assert_allclose(g.array, 24 * x.array * v)
    # jvp is linear in v and differentiable in x.
    _, jv = pg.jvp(lambda z: z ** 3, x, np.ones(2), create_graph=True)
    (g,) = pg.grad(F.sum(jv), x)
    np.testing.assert_allclose(g.array, 6 * x.array)


def test_structures_and_unused_inputs():
    a, b = np.array([1.0, 2.0]), np.array([3.0])
    J = pg.jacobian(lambda x, y: (x * y, F.sum(x)), (a, b))
    assert len(J) == 2 and len(J[0]) == 2
    np.testing.assert_allclose(J[0][0].array, np.diag([3.0, 3.0]))
    np.testing.assert_allclose(J[0][1].array, [[1.0], [2.0]])
    np.testing.assert_allclose(J[1][0].array, [1.0, 1.0])
    np.testing.assert_allclose(J[1][1].array, [0.0])
    _, g = pg.vjp(lambda x, y: F.sum(x), (a, b))
    np.testing.assert_allclose(g[1].array, [0.0])
    with pytest.raises(pg.GradientError, match="strict"):
        pg.vjp(lambda x, y: F.sum(x), (a, b), strict=True)
    assert pg.hessian(lambda x: F.sum(x * 2.0), a).array.shape == (2, 2)
    np.testing.assert_array_equal(pg.hessian(lambda x: F.sum(x * 2.0), a).array, 0.0)


def test_bad_arguments_are_named():
    x = np.array([1.0, 2.0])
    with pytest.raises(pg.ShapeError, match=r"vjp\(v\): expected one vector per output"):
        pg.vjp(lambda z: z * 2.0, x)
    with pytest.raises(pg.ShapeError, match=r"jvp\(v\[0\]\): expected shape \(2,\)"):
        pg.jvp(lambda z: z * 2.0, x, np.ones(3))
    with pytest.raises(pg.ShapeError, match=r"hessian: expected func to return a single"):
        pg.hessian(lambda z: z * 2.0, x)
    with pytest.raises(pg.DTypeError, match=r"jacobian\(inputs\[0\]\): expected a floating"):
        pg.jacobian(lambda z: z, np.array([1, 2]))
    with pytest.raises(TypeError, match=r"jacobian: expected func's output to be a Variable"):
        pg.jacobian(lambda z: 3.0, x)


def test_against_torch_functional():
    torch = pytest.importorskip("torch")
    from torch.autograd import functional as TF

    rng = np.random.default_rng(1)
    x_np, v_np = rng.standard_normal(3), rng.standard_normal(3)

    def tf(z):
        return torch.stack([torch.sum(torch.sin(z) * z), z[0] * z[1] ** 2 + torch.exp(z[2])])

    xt, vt = torch.tensor(x_np), torch.tensor(v_np)
    np.testing.assert_allclose(pg.jacobian(f_vec, x_np).array, TF.jacobian(tf, xt).numpy(),
                               rtol=1e-12)
    np.testing.assert_allclose(pg.jvp(f_vec, x_np, v_np)[1].array,
                               TF.jvp(tf, xt, vt)[1].numpy(), rtol=1e-12)

    def ts(z):
        return torch.sum(torch.tanh(z) * z ** 2)

    np.testing.assert_allclose(pg.hessian(lambda z: F.sum(F.tanh(z) * z ** 2), x_np).array,
                               TF.hessian(ts, xt).numpy(), rtol=1e-12)
    np.testing.assert_allclose(pg.hvp(lambda z: F.sum(F.tanh(z) * z ** 2), x_np, v_np)[1].array,
                               TF.hvp(ts, xt, vt)[1].numpy(), rtol=1e-12)
