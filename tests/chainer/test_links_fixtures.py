"""``portagrad.chainer.links`` against Chainer 7.8.1 (fixtures written by
``scripts/make_chainer_fixtures_core.py``): built after the same ``numpy.random.seed``,
each link starts from Chainer's very parameters (initializers and the order of their
draws), and gives Chainer's outputs, persistent values, first-order gradients with
respect to its inputs and parameters, and second-order gradients with respect to its
parameters where Chainer computes them."""

from __future__ import annotations

import os

import numpy as np
import pytest
from _link_cases import FLOAT32, LINKS, UNRECORDED

from portagrad import chainer
from portagrad.chainer import functions as F
from portagrad.chainer import links as L

_FIX = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "core", "links.npz"))
_KEYS = set(_FIX.files)
_RECORDED = [(i, case) for i, case in enumerate(LINKS) if f"{case[0]}/out0" in _KEYS]


def _seed(cid: str) -> int:
    return sum((i + 1) * ord(c) for i, c in enumerate(cid))


def _flat(out):
    outs = []
    for o in (out if isinstance(out, (tuple, list)) else (out,)):
        outs.extend(o if isinstance(o, (tuple, list)) else [o])
    return outs


def _tol(dtype):
    return ({"rtol": 1e-5, "atol": 1e-6} if np.dtype(dtype) == np.float32
            else {"rtol": 1e-6, "atol": 1e-9})


@pytest.mark.parametrize("index, case", _RECORDED, ids=[c[0] for _, c in _RECORDED])
def test_link_matches_chainer(index, case):
    lid, build, inputs, call = case
    dtype = np.float32 if lid in FLOAT32 else np.float64
    with chainer.using_config("dtype", dtype):
        np.random.seed(index)
        link = build(L, F)
        rng = np.random.default_rng(_seed(lid))
        xs = [chainer.Variable(a.astype(dtype)) for a in inputs(rng)]
        for path, p in link.namedparams():
            key = f"{lid}/param{path}"
            if key in _KEYS:
                np.testing.assert_array_equal(p.array, _FIX[key], err_msg=key)
            else:
                assert p.array is None, f"{key}: created before the call"
        outs = _flat(call(link, F, *xs))
        for path, p in link.namedparams():
            key = f"{lid}/lazyparam{path}"
            if key in _KEYS:
                np.testing.assert_array_equal(p.array, _FIX[key], err_msg=key)
        k = 0
        while f"{lid}/out{k}" in _KEYS:
            want = _FIX[f"{lid}/out{k}"]
            assert outs[k].array.dtype == want.dtype, (lid, k)
            np.testing.assert_allclose(outs[k].array, want, err_msg=f"{lid} out{k}",
                                       **_tol(want.dtype))
            k += 1
        assert k == len(outs)
        for path, sub in link.namedlinks():
            for name in sorted(sub._persistent):
                key = f"{lid}/persist{path.rstrip('/')}/{name}"
                if key in _KEYS:
                    np.testing.assert_allclose(np.asarray(sub.__dict__[name]), _FIX[key],
                                               err_msg=key, **_tol(dtype))
        total = None
        for o in outs:
            w = rng.uniform(-1, 1, size=o.shape).astype(o.dtype)
            t = F.sum(o * w)
            total = t if total is None else total + t
        names = [n for n, _ in link.namedparams()]
        params = [p for _, p in link.namedparams()]
        gs = chainer.grad([total], xs + params, enable_double_backprop=True)
        for i, g in enumerate(gs[:len(xs)]):
            want = _FIX[f"{lid}/gx{i}"]
            got = np.zeros(want.shape) if g is None else g.array
            np.testing.assert_allclose(got, want, err_msg=f"{lid} gx{i}", **_tol(dtype))
        for n, g in zip(names, gs[len(xs):]):
            key = f"{lid}/gp{n}"
            if key in _KEYS:
                np.testing.assert_allclose(g.array, _FIX[key], err_msg=key, **_tol(dtype))
            else:
                assert g is None or not np.any(g.array), key
        firsts = [g for g in gs if g is not None]
        second = None
        for g in firsts:
            t = F.sum(g * rng.uniform(-1, 1, size=g.shape).astype(dtype))
            second = t if second is None else second + t
        ggs = chainer.grad([second], params)
        if not any(f"{lid}/ggp{n}" in _KEYS for n in names):
            if lid not in _NO_SECOND_ORDER and dtype == np.float64:
                _check_by_differences(index, case, ggs)
            return
        for n, g in zip(names, ggs):
            key = f"{lid}/ggp{n}"
            if key in _KEYS:
                np.testing.assert_allclose(g.array, _FIX[key], err_msg=key, **_tol(dtype))


# Batch renormalization's r and d are constants of its gradient: no second derivative.
_NO_SECOND_ORDER = {"batch_renormalization"}


def _check_by_differences(index, case, ggs):
    """Chainer has no second derivative here: the derivative of our first derivative
    (which matches Chainer's) along a random direction, by central differences."""
    lid, build, inputs, call = case
    probe = _parametrized(index, case)
    dirs = [np.random.default_rng(1).uniform(-1, 1, size=np.shape(a)) for a in probe]
    h = 1e-5
    numeric = (_value(index, case, [a + h * d for a, d in zip(probe, dirs)])
               - _value(index, case, [a - h * d for a, d in zip(probe, dirs)])) / (2 * h)
    analytic = sum(float(np.sum(g.array * d)) for g, d in zip(ggs, dirs) if g is not None)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7, err_msg=lid)


def _parametrized(index, case):
    """The parameters of the case's link at its call (lazy ones drawn by the call)."""
    lid, build, inputs, call = case
    with chainer.using_config("dtype", np.float64):
        np.random.seed(index)
        link = build(L, F)
        rng = np.random.default_rng(_seed(lid))
        call(link, F, *[chainer.Variable(a) for a in inputs(rng)])
        return [np.array(p.array) for _, p in link.namedparams()]


def _value(index, case, values):
    lid, build, inputs, call = case
    with chainer.using_config("dtype", np.float64):
        np.random.seed(index)
        link = build(L, F)
        rng = np.random.default_rng(_seed(lid))
        xs = [chainer.Variable(a) for a in inputs(rng)]
        params = [p for _, p in link.namedparams()]
        for p, v in zip(params, values):
            if p.array is None:
                p.initialize(v.shape)
            p.array[...] = v
        outs = _flat(call(link, F, *xs))
        total = None
        for o in outs:
            t = F.sum(o * rng.uniform(-1, 1, size=o.shape))
            total = t if total is None else total + t
        gs = chainer.grad([total], xs + params, enable_double_backprop=True)
        return float(sum(np.sum(g.array * rng.uniform(-1, 1, size=g.shape))
                         for g in gs if g is not None))


def test_every_link_name_is_present():
    assert len(L.CHAINER_LINKS) == 62
    missing = [n for n in L.CHAINER_LINKS if not hasattr(L, n)]
    assert not missing


def test_every_link_class_has_a_recorded_case_or_a_reason():
    """Each of Chainer's 62 link classes is built by a recorded case here, or is an image
    model with recorded activations (model_outputs.npz, checked in test_links_models.py),
    or is named in ``UNRECORDED`` with the reason (and then has no case)."""
    with np.load(os.path.join(os.path.dirname(__file__), "fixtures", "core",
                              "model_outputs.npz")) as models:
        covered = {k.split("/")[0] for k in models.files}
    for _, (_, build, _, _) in _RECORDED:
        with chainer.using_config("dtype", np.float64):
            link = build(L, F)
        covered.update(n for n in L.CHAINER_LINKS if type(link) is getattr(L, n))
    rest = set(L.CHAINER_LINKS) - covered
    assert rest == set(UNRECORDED), (sorted(rest - set(UNRECORDED)),
                                     sorted(set(UNRECORDED) - rest))
