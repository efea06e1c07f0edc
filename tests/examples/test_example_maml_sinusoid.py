"""The MAML example: its meta-gradient is the exact derivative through the inner update
(first-order MAML's is not), and a shortened run learns to adapt."""

import numpy as np

import portagrad as pg
from portagrad import ops


def _meta_loss_and_grad(ex, params, data, create_graph):
    xs, ys, xq, yq = data
    fast = ex.adapt(params, xs, ys, alpha=0.1, steps=1, create_graph=create_graph)
    loss = ops.mean((ex.forward(fast, xq) - yq) ** 2)
    return float(loss.array), pg.grad(loss, params)


def test_meta_gradient_is_the_derivative_through_the_inner_step(load_example):
    ex = load_example("maml_sinusoid")
    pg.random.seed(0)
    params = [pg.nn.Parameter(p.array.astype(np.float64))
              for p in ex.init_params((1, 8, 8, 1))]
    rng = np.random.default_rng(0)
    amp, phase, x = ex.sample_tasks(rng, 3, 10)
    y = ex.targets(amp, phase, x)
    data = (x[:, :5], y[:, :5], x[:, 5:], y[:, 5:])
    _, second = _meta_loss_and_grad(ex, params, data, True)
    _, first = _meta_loss_and_grad(ex, params, data, False)
    # Central difference of the post-adaptation loss along a random direction.
    d = [rng.standard_normal(p.shape) for p in params]
    h = 1e-6

    def at(s):
        moved = [pg.nn.Parameter(p.array + s * di) for p, di in zip(params, d)]
        return _meta_loss_and_grad(ex, moved, data, False)[0]

    numeric = (at(h) - at(-h)) / (2 * h)
    exact = sum(float(np.sum(g.array * di)) for g, di in zip(second, d))
    approx = sum(float(np.sum(g.array * di)) for g, di in zip(first, d))
    np.testing.assert_allclose(exact, numeric, rtol=1e-5)
    assert abs(approx - numeric) > 1e-3 * abs(numeric)


def test_maml_learns(load_example, backend):
    ex = load_example("maml_sinusoid")
    strict = backend[0] == "array_api_strict"
    n = 60 if strict else 400
    r = ex.run(("second",), iterations=n, backend_name=backend[0], device=backend[1],
               log_every=0)["second"]
    losses = np.array(r["losses"])
    k = n // 5
    # Measured: the query error falls to 0.08 (60 updates) and 0.12 (400) of its start.
    assert losses[-k:].mean() < 0.3 * losses[:k].mean()
    # One step of plain SGD on 10 points lowers the error on the whole curve.
    assert r["mse"][1] < r["mse"][0]
