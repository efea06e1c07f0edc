"""pg.nn.functional_call: a module as a function of its parameters and buffers."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg


def _mlp():
    return pg.nn.Sequential(pg.nn.Linear(3, 4), pg.nn.Tanh(), pg.nn.Linear(4, 2))


def test_replaces_and_restores(rng):
    m = _mlp()
    x = rng.standard_normal((5, 3))
    names = [n for n, _ in m.named_parameters()]
    before = {n: p for n, p in m.named_parameters()}
    new = {n: rng.standard_normal(p.shape).astype(p.dtype) for n, p in before.items()}
    out = pg.nn.functional_call(m, new, (x,))
    h = np.tanh(x @ new["0.weight"].T + new["0.bias"])
    np.testing.assert_allclose(out.array, h @ new["2.weight"].T + new["2.bias"], rtol=1e-5)
    assert {n: p for n, p in m.named_parameters()} == before  # the same objects back
    assert [n for n, _ in m.named_parameters()] == names


def test_gradients_flow_to_the_values_passed(rng):
    m = _mlp()
    x = rng.standard_normal((5, 3)).astype(np.float32)
    w = pg.Variable(rng.standard_normal((4, 3)).astype(np.float32))
    loss = pg.ops.sum(pg.nn.functional_call(m, {"0.weight": w}, x))
    loss.backward()
    assert w.grad is not None and m[0].weight.grad is None and m[2].weight.grad is not None


def test_hessian_vector_product_of_a_module(rng):
    m = _mlp()
    x = rng.standard_normal((5, 3)).astype(np.float32)
    names = [n for n, _ in m.named_parameters()]
    params = tuple(p.array for _, p in m.named_parameters())
    v = tuple(rng.standard_normal(p.shape).astype(np.float32) for p in params)

    def loss(*ps):
        return pg.ops.sum(pg.nn.functional_call(m, dict(zip(names, ps)), x) ** 2)

    _, hv = pg.hvp(loss, params, v)
    _, ref = pg.vhp(loss, params, v)
    for a, b in zip(hv, ref):
        np.testing.assert_allclose(a.array, b.array, rtol=1e-4, atol=1e-5)


def test_restored_after_an_error(rng):
    m = _mlp()
    w = m[0].weight
    with pytest.raises(pg.ShapeError):
        pg.nn.functional_call(m, {"0.weight": np.ones((4, 3), np.float32)}, np.ones((2, 7)))
    assert m[0].weight is w


def test_buffers_and_errors():
    bn = pg.nn.BatchNorm1d(2)
    names = dict(bn.named_buffers())
    key = next(n for n in names if "mean" in n)
    mean = np.full(2, 10.0, np.float32)
    bn.eval()
    out = pg.nn.functional_call(bn, {key: mean}, np.full((3, 2), 10.0, np.float32))
    np.testing.assert_allclose(out.array, 0.0, atol=1e-3)
    with pytest.raises(KeyError, match=r"got unknown \['nope'\]"):
        pg.nn.functional_call(bn, {"nope": mean}, np.ones((3, 2)))
    with pytest.raises(KeyError, match="strict=True"):
        pg.nn.functional_call(bn, {key: mean}, np.ones((3, 2)), strict=True)
    with pytest.raises(TypeError, match=r"expected an array \(a buffer\)"):
        pg.nn.functional_call(bn, {key: pg.Variable(mean)}, np.ones((3, 2)))
    with pytest.raises(TypeError, match="expected a portagrad.nn.Module"):
        pg.nn.functional_call(lambda x: x, {}, np.ones(2))
