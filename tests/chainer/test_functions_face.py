"""The face of ``portagrad.chainer.functions``: all 216 of Chainer 7.8.1's names with its
signatures, each a declared adapter of a canonical function of ``portagrad.ops``;
Chainer Variables out; the random functions by their laws; ``sparse_matmul`` against
the dense product."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import portagrad as pg
from portagrad import chainer
from portagrad.chainer import functions as F
from portagrad.ops._adapters import canonical_of, is_adapter
from portagrad.tape import Primitive


def _canonical_set():
    out = set()
    for m in (pg.ops, pg.ops.linalg, pg.ops.fft):
        for n in m.__all__:
            o = getattr(m, n)
            if callable(o) and not inspect.isclass(o) and not is_adapter(o):
                out.add(id(o))
    return out


def test_all_216_names_with_chainers_signatures():
    assert len(F.SIGNATURES) == 216
    for name, sig in F.SIGNATURES.items():
        got = inspect.signature(getattr(F, name))
        bare = got.replace(parameters=[p.replace(annotation=p.empty)
                                       for p in got.parameters.values()],
                           return_annotation=got.empty)
        assert str(bare) == sig, name


@pytest.mark.parametrize("name", sorted(F.SIGNATURES))
def test_each_name_adapts_a_canonical_function(name):
    fn = getattr(F, name)
    assert is_adapter(fn), name
    target = canonical_of(fn)
    assert id(target) in _canonical_set() or isinstance(target, Primitive), (name, target)


def test_written_adapters_call_their_canonical_function():
    for name, fn in F._WRITTEN.items():
        target = fn.__portagrad_adapts__  # what it calls (canonical_of follows the chain)
        tname = getattr(target, "__name__", None) or getattr(target, "name", "")
        assert tname.lstrip("_") in inspect.getsource(inspect.unwrap(fn)), name


def test_chainer_conventions():
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_allclose(F.softmax(x).array.sum(axis=1), np.ones((2, 4)))
    np.testing.assert_allclose(np.exp(F.log_softmax(x).array).sum(axis=1), np.ones((2, 4)))
    assert F.concat([np.ones((2, 1)), np.ones((2, 3))]).shape == (2, 4)
    assert F.sum(np.ones((2, 3)), 1).shape == (2,)
    assert F.squeeze(np.ones((1, 2, 1))).shape == (2,)
    y = F.relu(chainer.Variable(np.ones(2)))
    assert type(y) is chainer.Variable and y.data is y.array
    np.testing.assert_allclose(F.normalize(np.array([[3.0, 4.0]])).array,
                               [[3 / 5.00001, 4 / 5.00001]])
    t = np.array([0, 1, 1], np.int32)
    logits = np.zeros((3, 2))
    w = np.array([1.0, 3.0])
    loss = F.softmax_cross_entropy(logits, t, class_weight=w)
    np.testing.assert_allclose(loss.array, np.log(2) * (1 + 3 + 3) / 3)  # by the count


def test_bad_calls_name_chainers_signature():
    with pytest.raises(pg.PortagradError, match=r"softmax\(x, axis=1\)"):
        F.softmax(np.ones(2), 1, 2)
    with pytest.raises(TypeError, match="train"):
        F.n_step_lstm(1, 0.0, None, None, [], [], [], train=True)


def test_random_functions_follow_their_laws():
    x = np.ones(20000)
    y = F.dropout(x, 0.25).array
    assert abs(float((y == 0).mean()) - 0.25) < 0.02
    np.testing.assert_allclose(np.unique(y), [0.0, 1 / 0.75])
    with chainer.using_config("train", False):
        np.testing.assert_array_equal(F.dropout(x, 0.25).array, x)
        np.testing.assert_array_equal(F.zoneout(np.zeros(5), x[:5], 0.5).array, x[:5])
    z = F.zoneout(np.zeros(20000), x, 0.3).array
    assert abs(float((z == 0).mean()) - 0.3) < 0.02
    p = np.log(np.array([[0.7, 0.2, 0.1]] * 4000))
    s = F.gumbel_softmax(p, tau=0.01).array
    freq = (s == s.max(axis=1, keepdims=True)).mean(axis=0)
    np.testing.assert_allclose(freq, [0.7, 0.2, 0.1], atol=0.03)
    v = chainer.Variable(np.array([0.5, -1.0]))
    (h,) = chainer.grad([F.sum(F.forget(lambda a: a * a, v))], [v])
    np.testing.assert_allclose(h.array, 2 * v.array)


def test_sparse_matmul_is_the_dense_product_with_gradients():
    rng = np.random.default_rng(0)
    dense = np.zeros((3, 4))
    row, col = np.array([0, 2, 2, 1]), np.array([1, 0, 3, 1])
    data = rng.uniform(-1, 1, 4)
    dense[row, col] = data
    b = rng.uniform(-1, 1, (4, 2))
    sp = F.CooMatrix(data, row, col, (3, 4), requires_grad=True)
    bv = chainer.Variable(b)
    y = F.sparse_matmul(sp, bv)
    np.testing.assert_allclose(y.array, dense @ b)
    np.testing.assert_allclose(sp.to_dense(), dense)
    w = rng.uniform(-1, 1, (3, 2))
    gd, gb = chainer.grad([F.sum(y * w)], [sp.data, bv])
    np.testing.assert_allclose(gb.array, dense.T @ w)
    np.testing.assert_allclose(gd.array, (w @ b.T)[row, col])
    yt = F.sparse_matmul(b.T, sp, transb=True)
    np.testing.assert_allclose(yt.array, b.T @ dense.T)
    with pytest.raises(pg.PortagradError, match="exactly one CooMatrix"):
        F.sparse_matmul(b, b)
