"""Results that skip the graph are still arrays of the input's library, never scalars."""

import numpy as np
import pytest

import portagrad as pg
from portagrad.xp import to_numpy

F = pg.ops

CASES = {
    "accuracy": lambda x: F.accuracy(F.reshape(x, (1, 3)), F.argmax(x, keepdims=True)),
    "argmax": F.argmax, "argmin": F.argmin, "all": F.all, "any": F.any,
    "count_nonzero": F.count_nonzero, "sum": F.sum, "max": F.max, "mean": F.mean,
    "vecdot": lambda x: F.vecdot(x, x), "logsumexp": F.logsumexp,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_zero_d_results_are_arrays(backend, name):
    x = pg.Variable(backend.asarray(np.array([1.0, 2.0, 0.0])), requires_grad=False)
    r = CASES[name](x)
    assert r.shape == () and type(r.array) is type(x.array)
    np.testing.assert_equal(np.ndim(to_numpy(r.array)), 0)


def test_accuracy_is_a_zero_d_array_on_numpy():
    acc = F.accuracy(np.array([[0.1, 0.9], [0.9, 0.1]]), np.array([1, 1]))
    assert type(acc.array) is np.ndarray and acc.array.shape == ()
    assert acc.item() == 0.5


@pytest.mark.parametrize("other", ["0-d", "scalar", "broadcast"])
def test_gradients_of_products_are_arrays(backend, other):
    x = pg.Variable(backend.asarray(np.array(1.5)))
    y = {"0-d": pg.Variable(backend.asarray(np.array(-2.0))), "scalar": 3.0,
         "broadcast": pg.Variable(backend.asarray(np.array([1.0, 2.0, 4.0])))}[other]
    out = F.sum(x * y * x)
    grads = pg.grad(out, [x, y] if isinstance(y, pg.Variable) else [x])
    for g, ref in zip(grads, _product_grads(other)):
        assert type(g.array) is type(x.array)
        np.testing.assert_allclose(to_numpy(g.array), ref)


def _product_grads(other):
    x = 1.5
    y = {"0-d": np.array(-2.0), "scalar": np.array(3.0), "broadcast": np.array([1.0, 2.0, 4.0])}[
        other]
    return [np.sum(2 * x * y), x * x * np.ones_like(y)]
