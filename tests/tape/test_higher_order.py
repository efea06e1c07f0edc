"""Second-order uses: Hessian-vector products and gradient penalties."""

import numpy as np

import portagrad as pg
from portagrad.xp import from_numpy, to_numpy


def _mlp_loss(params, x, t):
    w1, b1, w2, b2 = params
    h = pg.ops.tanh(x @ w1 + b1)
    y = h @ w2 + b2
    return pg.ops.mean((y - t) ** 2)


def _params(backend, rng):
    shapes = [(4, 8), (8,), (8, 3), (3,)]
    return [pg.Variable(backend.asarray(rng.standard_normal(s) * 0.5)) for s in shapes]


def test_hessian_vector_product_matches_finite_differences(backend, rng):
    params = _params(backend, rng)
    # Data as Variables: array-api-strict arrays do not defer ``array @ Variable``.
    x = pg.Variable(backend.asarray(rng.standard_normal((5, 4))), requires_grad=False)
    t = pg.Variable(backend.asarray(rng.standard_normal((5, 3))), requires_grad=False)
    v = [backend.asarray(rng.standard_normal(p.shape)) for p in params]

    loss = _mlp_loss(params, x, t)
    grads = pg.grad(loss, params, create_graph=True)
    gv = sum((g * vi).sum() for g, vi in zip(grads, v))
    hvp = pg.grad(gv, params)

    eps = 1e-5

    def flat_grad(shift):
        ps = [pg.Variable(p.array + shift * vi) for p, vi in zip(params, v)]
        return [to_numpy(g.array) for g in pg.grad(_mlp_loss(ps, x, t), ps)]

    plus, minus = flat_grad(eps), flat_grad(-eps)
    for h, gp, gm in zip(hvp, plus, minus):
        np.testing.assert_allclose(to_numpy(h.array), (gp - gm) / (2 * eps), rtol=1e-5, atol=1e-7)


def test_gradient_penalty_trains(rng):
    # Minimise loss + |d loss / d x|^2 over w: needs d/dw of a gradient.
    w = pg.Variable(rng.standard_normal((3, 1)))
    x = pg.Variable(rng.standard_normal((16, 3)))
    t = np.sin(x.array.sum(axis=1, keepdims=True))

    def objective():
        y = pg.ops.tanh(x @ w)
        loss = pg.ops.mean((y - t) ** 2)
        (gx,) = pg.grad(loss, x, create_graph=True)
        penalty = (gx * gx).sum()
        return loss + penalty, penalty

    first, first_pen = objective()
    for _ in range(100):
        w.cleargrad()
        total, _ = objective()
        total.backward()
        w.array = w.array - 0.2 * w.grad
    last, last_pen = objective()
    assert float(last) < 0.5 * float(first)
    assert float(last_pen) < float(first_pen)


def test_function_written_against_the_standard_is_differentiated(backend, rng):
    from array_api_compat import array_namespace

    def softplus_norm(x):
        xp = array_namespace(x)
        y = xp.log(1.0 + xp.exp(x))
        return xp.sqrt(xp.sum(y * y, axis=-1)) + xp.mean(xp.tanh(x))

    host = rng.standard_normal((3, 4))
    x = pg.Variable(backend.asarray(host))
    y = softplus_norm(x)
    assert isinstance(y, pg.Variable)
    np.testing.assert_allclose(to_numpy(y.array), host_ns(host), rtol=1e-12)
    pg.gradcheck.check_grads(lambda v: softplus_norm(v), (backend.asarray(host),), order=2)


def host_ns(host):
    import array_api_compat.numpy as xp

    y = xp.log(1.0 + xp.exp(host))
    return xp.sqrt(xp.sum(y * y, axis=-1)) + xp.mean(xp.tanh(host))


def test_results_and_gradients_stay_on_a_non_default_device():
    import array_api_strict as xps

    dev = xps.Device("device1")
    x = pg.Variable(from_numpy(np.array([0.5, 1.0]), xp=xps, device=dev))
    y = (pg.ops.exp(x) * x)[0] + pg.ops.sum(x ** 2)
    assert y.device == dev
    (g,) = pg.grad(y, x, create_graph=True)
    assert g.device == dev
    (gg,) = pg.grad(g.sum(), x)
    assert gg.device == dev
