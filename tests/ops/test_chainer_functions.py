"""The Chainer-named functions of ``portagrad.ops`` against Chainer 7.8.1's own answers
(recorded in ``_chainer_expected.py`` by ``make_chainer_expected.py``), values and
gradients, plus checks that need no reference."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from _chainer_cases import CASES
from _chainer_expected import EXPECTED

import portagrad as pg
from portagrad import DTypeError, ShapeError

_CASES = {cid: (name, make) for cid, name, make in CASES}


def _seed(cid: str) -> int:
    return sum((i + 1) * ord(c) for i, c in enumerate(cid))


def _arr(entry):
    dtype, shape, flat = entry
    return np.asarray(flat, dtype=np.float64).reshape(shape), np.dtype(dtype)


def _tol(dtype):
    return {"atol": 1e-5, "rtol": 1e-4} if dtype == np.float32 else {"atol": 1e-9,
                                                                       "rtol": 1e-7}


@pytest.mark.parametrize("cid", sorted(EXPECTED))
def test_matches_chainer(cid):
    name, make = _CASES[cid]
    rng = np.random.default_rng(_seed(cid))
    args, kwargs, diff = make(rng)
    args = list(args)
    leaves = {}
    for i in diff:
        leaves[i] = pg.Variable(np.asarray(args[i]), requires_grad=True)
        args[i] = leaves[i]
    out = getattr(pg.ops, name)(*args, **kwargs)
    outs = []
    for o in (out if isinstance(out, (tuple, list)) else (out,)):
        outs.extend(o if isinstance(o, (tuple, list)) else [o])
    want_outs, want_grads = EXPECTED[cid]
    assert len(outs) == len(want_outs)
    total = None
    for o, w in zip(outs, want_outs):
        a = o.array if isinstance(o, pg.Variable) else o
        want, dtype = _arr(w)
        assert tuple(a.shape) == want.shape, cid
        if dtype.kind == "f":
            assert a.dtype == dtype, (cid, a.dtype, dtype)
            np.testing.assert_allclose(np.asarray(a, dtype=np.float64), want, equal_nan=True,
                                       **_tol(dtype))
        else:
            np.testing.assert_array_equal(np.asarray(a), want)
        if diff and dtype.kind == "f":
            weights = rng.uniform(-1, 1, size=want.shape).astype(dtype)
            finite = np.isfinite(want)
            term = pg.ops.sum(pg.ops.where(finite, o, 0.0) * weights)
            total = term if total is None else total + term
    if diff:
        grads = pg.grad([total], [leaves[i] for i in diff])
        for i, g, w in zip(diff, grads, want_grads):
            want, dtype = _arr(w)
            got = np.zeros(want.shape) if g is None else np.asarray(g.array, np.float64)
            np.testing.assert_allclose(got, want, err_msg=f"{cid}: gradient of argument {i}",
                                       **_tol(dtype))


def test_every_exported_name_has_chainer_signature():
    """Parameter names and defaults as Chainer's (recorded by hand from 7.8.1)."""
    sig = {
        "max_pooling_2d": "(x, ksize, stride=None, pad=0, cover_all=True, "
                          "return_indices=False)",
        "convolution_2d": "(x, W, b=None, stride=1, pad=0, cover_all=False, dilate=1, "
                          "groups=1)",
        "deconvolution_2d": "(x, W, b=None, stride=1, pad=0, outsize=None, dilate=1, "
                            "groups=1)",
        "batch_normalization": "(x, gamma, beta, eps=2e-05, running_mean=None, "
                               "running_var=None, decay=0.9, axis=None)",
        "fixed_batch_normalization": "(x, gamma, beta, mean, var, eps=2e-05, axis=None)",
        "split_axis": "(x, indices_or_sections, axis, force_tuple=True)",
        "select_item": "(x, t)",
        "gaussian_kl_divergence": "(mean, ln_var, reduce='sum')",
        "bernoulli_nll": "(x, y, reduce='sum')",
        "average_pooling_2d": "(x, ksize, stride=None, pad=0)",
        "local_response_normalization": "(x, n=5, k=2, alpha=0.0001, beta=0.75)",
        "embed_id": "(x, W, ignore_label=None)",
        "unpooling_2d": "(x, ksize, stride=None, pad=0, outsize=None, cover_all=True)",
    }
    for name, want in sig.items():
        params = inspect.signature(getattr(pg.ops, name)).parameters.values()
        got = "(" + ", ".join(str(p).split(":")[0].strip() + (
            f"={p.default!r}" if p.default is not inspect.Parameter.empty else "")
            for p in params) + ")"
        assert got == want, name


def test_batch_normalization_updates_running_statistics():
    x = np.array([[0.0, 10.0], [2.0, 20.0], [4.0, 60.0]])
    rm, rv = np.array([1.0, 1.0]), np.array([1.0, 1.0])
    pg.ops.batch_normalization(x, np.ones(2), np.zeros(2), running_mean=rm, running_var=rv,
                               decay=0.5)
    np.testing.assert_allclose(rm, 0.5 + 0.5 * x.mean(axis=0))
    np.testing.assert_allclose(rv, 0.5 + 0.5 * x.var(axis=0, ddof=1))


def test_max_pooling_indices_drive_upsampling():
    x = np.array([[[[1.0, 5.0, 2.0], [4.0, 3.0, 0.0], [7.0, 6.0, 8.0]]]])
    y, idx = pg.ops.max_pooling_2d(x, 2, return_indices=True)
    np.testing.assert_array_equal(y.array, [[[[5.0, 2.0], [7.0, 8.0]]]])
    np.testing.assert_array_equal(idx, [[[[1, 0], [0, 0]]]])
    up = pg.ops.upsampling_2d(y, idx, 2, outsize=(3, 3))
    np.testing.assert_array_equal(up.array, [[[[0.0, 5.0, 2.0], [0.0, 0.0, 0.0],
                                               [7.0, 0.0, 8.0]]]])


def test_pad_modes_match_numpy():
    x = np.arange(12.0).reshape(3, 4)
    for mode in ("edge", "reflect", "symmetric", "wrap"):
        np.testing.assert_array_equal(pg.ops.pad(x, ((2, 1), (3, 2)), mode).array,
                                      np.pad(x, ((2, 1), (3, 2)), mode))


def test_random_functions_are_reproducible_and_shaped():
    g = pg.random.Generator
    x = np.linspace(-2, 2, 12).reshape(3, 4)
    a = pg.ops.rrelu(x, train=True, generator=g(3), return_r=True)
    b = pg.ops.rrelu(x, train=True, generator=g(3))
    np.testing.assert_array_equal(a[0].array, b.array)
    assert np.all((a[1] >= 1 / 8) & (a[1] < 1 / 3))
    np.testing.assert_allclose(a[0].array, np.where(x >= 0, x, x * a[1]))
    y, eps = pg.ops.gaussian(np.zeros(5000), np.full(5000, np.log(4.0)), generator=g(1),
                             return_eps=True)
    np.testing.assert_allclose(y.array, 2 * eps)
    assert abs(float(np.std(y.array)) - 2.0) < 0.1
    s = pg.ops.gumbel_softmax(np.log(np.array([[0.7, 0.2, 0.1]] * 4000)), tau=0.01,
                              generator=g(2))
    freq = (s.array == s.array.max(axis=1, keepdims=True)).mean(axis=0)
    np.testing.assert_allclose(freq, [0.7, 0.2, 0.1], atol=0.03)
    h, n = np.zeros(2000), np.ones(2000)
    z = pg.ops.zoneout(h, n, 0.3, train=True, generator=g(4))
    assert abs(float(1 - z.array.mean()) - 0.3) < 0.04
    np.testing.assert_array_equal(pg.ops.zoneout(h, n, 0.3, train=False).array, n)


@pytest.mark.parametrize("call, error", [
    (lambda: pg.ops.select_item(np.ones((2, 3)), np.array([0.0, 1.0])), DTypeError),
    (lambda: pg.ops.select_item(np.ones((2, 3)), np.array([0, 1, 2])), ShapeError),
    (lambda: pg.ops.split_axis(np.ones((2, 5)), 2, 1), ShapeError),
    (lambda: pg.ops.depth2space(np.ones((1, 3, 2, 2)), 2), ShapeError),
    (lambda: pg.ops.permutate(np.ones(3), np.array([0, 0, 1])), ValueError),
    (lambda: pg.ops.pad(np.ones(3), 1, "median"), ValueError),
    (lambda: pg.ops.convolution_2d(np.ones((1, 2, 4)), np.ones((1, 2, 2, 2))), ShapeError),
    (lambda: pg.ops.max_pooling_2d(np.ones((1, 1, 2, 2)), 3, cover_all=False), ShapeError),
    (lambda: pg.ops.embed_id(np.array([0.5]), np.ones((2, 2))), DTypeError),
    (lambda: pg.ops.batch_normalization(np.ones((2, 3)), np.ones(2), np.ones(2)),
     ShapeError),
    (lambda: pg.ops.bernoulli_nll(np.ones(2), np.ones(2), reduce="mean"), ValueError),
    (lambda: pg.ops.hinge(np.ones((2, 3)), np.array([0, 1]), norm="L3"), ValueError),
    (lambda: pg.ops.unpooling_2d(np.ones((1, 1, 2, 2)), 2, outsize=(9, 9)), ShapeError),
    (lambda: pg.ops.resize_images(np.ones((1, 1, 2, 2)), (3, 3), mode="cubic"), ValueError),
])
def test_bad_input_raises(call, error):
    with pytest.raises(error):
        call()


def test_special_functions_match_scipy_over_wide_ranges():
    sp = pytest.importorskip("scipy.special")
    from portagrad.xp import pure_standard

    x = np.concatenate([np.linspace(0.01, 40, 300), np.linspace(-9.95, -0.05, 200) + 0.013])
    q = np.linspace(0.05, 20, 50)
    s = np.linspace(1.1, 6, 50)
    xe = np.linspace(-25, 60, 500)
    u = np.linspace(-0.9999, 0.9999, 401)
    v = np.concatenate([np.logspace(-300, 0, 150), np.linspace(0.001, 1.999, 301)])
    p = np.concatenate([np.logspace(-300, -1, 100), np.linspace(0.01, 0.999, 100)])
    cases = [(pg.ops.lgamma, (x,), sp.gammaln, 1e-10), (pg.ops.digamma, (x,), sp.digamma, 1e-12),
             (lambda a: pg.ops.polygamma(2, a), (x,), lambda a: sp.polygamma(2, a), 1e-12),
             (pg.ops.zeta, (s, q), sp.zeta, 1e-13), (pg.ops.erfcx, (xe,), sp.erfcx, 1e-13),
             (pg.ops.erfc, (xe,), sp.erfc, 1e-9), (pg.ops.erfinv, (u,), sp.erfinv, 1e-12),
             (pg.ops.erfcinv, (v,), sp.erfcinv, 1e-13), (pg.ops.ndtr, (xe,), sp.ndtr, 1e-11),
             (pg.ops.log_ndtr, (xe,), sp.log_ndtr, 1e-10), (pg.ops.ndtri, (p,), sp.ndtri, 1e-13)]
    with pure_standard():
        for f, args, ref, rtol in cases:
            np.testing.assert_allclose(f(*args).array, ref(*args), rtol=rtol, atol=1e-300)
    edges = pg.ops.erfinv(np.array([-1.0, 1.0, 1.5])).array
    np.testing.assert_array_equal(edges, [-np.inf, np.inf, np.nan])
    np.testing.assert_array_equal(pg.ops.lgamma(np.array([0.0, -2.0])).array, [np.inf, np.inf])


def test_special_function_derivatives_chain():
    x = pg.Variable(np.array([0.7, 2.5, -1.5]), requires_grad=True)
    (g,) = pg.grad([pg.ops.sum(pg.ops.lgamma(x))], [x], create_graph=True)
    np.testing.assert_allclose(g.array, pg.ops.digamma(x.array).array)
    (h,) = pg.grad([pg.ops.sum(g)], [x])
    np.testing.assert_allclose(h.array, pg.ops.polygamma(1, x.array).array)
    q = pg.Variable(np.array([0.5, 3.0]), requires_grad=True)
    (gq,) = pg.grad([pg.ops.sum(pg.ops.zeta(np.array([2.0, 3.5]), q))], [q])
    np.testing.assert_allclose(gq.array, -np.array([2.0, 3.5]) * pg.ops.zeta(
        np.array([3.0, 4.5]), q.array).array)


def test_forget_recomputes_and_keeps_every_order():
    calls = []

    def f(a, b):
        calls.append(1)
        return pg.ops.exp(a) * b, a * b

    xa = np.array([0.3, -0.2])
    xb = np.array([1.5, 2.0])
    a = pg.Variable(xa, requires_grad=True)
    b = pg.Variable(xb, requires_grad=True)
    y1, y2 = pg.ops.forget(f, a, b)
    assert len(calls) == 1 and y1.creator is not None
    loss = pg.ops.sum(y1 * y1) + pg.ops.sum(y2)
    ga, gb = pg.grad([loss], [a, b], create_graph=True)
    assert len(calls) == 2  # backward ran f again
    np.testing.assert_allclose(ga.array, 2 * np.exp(2 * xa) * xb ** 2 + xb)
    np.testing.assert_allclose(gb.array, 2 * np.exp(2 * xa) * xb + xa)
    (gga,) = pg.grad([pg.ops.sum(ga)], [a])
    np.testing.assert_allclose(gga.array, 4 * np.exp(2 * xa) * xb ** 2)
