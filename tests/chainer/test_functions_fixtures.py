"""``portagrad.chainer.functions`` against Chainer 7.8.1's answers (fixtures written by
``scripts/make_chainer_fixtures_core.py``): values, first-order gradients and, where
Chainer can compute them, second-order gradients, called in Chainer's conventions."""

from __future__ import annotations

import os

import numpy as np
import pytest
from _core_cases import CASES, UNRECORDED, get_path, path_key, set_path

from portagrad import chainer
from portagrad.chainer import functions as F

_FIX = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "core", "functions.npz"))
_KEYS = set(_FIX.files)
_RECORDED = sorted({k.split("/")[0] for k in _KEYS})
_BY_ID = {cid: (name, make) for cid, name, make in CASES}

# Chainer's second derivative of these is zero where the mathematics is not (their
# backward is not itself differentiated through the input): checked against finite
# differences of the first derivative instead.
# Batch renormalization's r and d are constants of its gradient (as in the paper and
# Chainer) though they depend on the batch, so its first derivative is not the gradient
# of a function of x and has no second derivative to check numerically; Chainer has
# none either.
_NO_SECOND_ORDER = {"batch_renormalization"}

_CHAINER_SECOND_ORDER_INCOMPLETE = {"local_convolution_2d", "decorrelated_batch_normalization",
                                    "decorrelated_batch_normalization_2d"}


def _seed(cid: str) -> int:
    return sum((i + 1) * ord(c) for i, c in enumerate(cid))


def _tol(dtype) -> dict:
    return ({"rtol": 1e-4, "atol": 1e-5} if np.dtype(dtype) == np.float32
            else {"rtol": 1e-6, "atol": 1e-9})


def _flat(out):
    outs = []
    for o in (out if isinstance(out, (tuple, list)) else (out,)):
        outs.extend(o if isinstance(o, (tuple, list)) else [o])
    return outs


def _weighted_sum(outs, rng):
    total = None
    for o in outs:
        a = o.array if hasattr(o, "array") else np.asarray(o)
        if a.dtype.kind != "f":
            continue
        w = rng.uniform(-1, 1, size=a.shape).astype(a.dtype)
        ok = np.isfinite(a)
        term = F.sum(F.where(ok, o, np.zeros_like(a)) * w)
        total = term if total is None else total + term
    return total


@pytest.mark.parametrize("cid", _RECORDED)
def test_matches_chainer_at_first_and_second_order(cid):
    name, make = _BY_ID[cid]
    rng = np.random.default_rng(_seed(cid))
    args, kwargs, diff = make(rng)
    args = list(args)
    leaves = {}
    for i in diff:
        leaves[i] = chainer.Variable(np.asarray(get_path(args, i)))
        set_path(args, i, leaves[i])
    outs = _flat(getattr(F, name)(*args, **kwargs))
    k = 0
    while f"{cid}/out{k}" in _KEYS:
        want = _FIX[f"{cid}/out{k}"]
        got = outs[k].array if hasattr(outs[k], "array") else np.asarray(outs[k])
        assert tuple(np.shape(got)) == want.shape, (cid, k)
        if want.dtype.kind == "f":
            assert np.asarray(got).dtype == want.dtype, (cid, k, got.dtype, want.dtype)
            np.testing.assert_allclose(got, want, equal_nan=True, err_msg=f"{cid} out{k}",
                                       **_tol(want.dtype))
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{cid} out{k}")
        k += 1
    assert k == len(outs), f"{cid}: {len(outs)} outputs, Chainer gave {k}"
    if not diff or f"{cid}/g{path_key(diff[0])}" not in _KEYS:
        return
    total = _weighted_sum(outs, rng)
    targets = [leaves[i] for i in diff]
    gs = chainer.grad([total], targets, enable_double_backprop=True)
    for i, g in zip(diff, gs):
        want = _FIX[f"{cid}/g{path_key(i)}"]
        got = np.zeros(want.shape) if g is None else g.array
        np.testing.assert_allclose(got, want, err_msg=f"{cid}: gradient of argument {i}",
                                   **_tol(want.dtype))
    if cid in _NO_SECOND_ORDER:
        return
    terms = [F.sum(g * rng.uniform(-1, 1, size=g.shape).astype(g.dtype))
             for g in gs if g is not None]
    second = terms[0]
    for t in terms[1:]:
        second = second + t
    ggs = chainer.grad([second], targets)
    if cid in _CHAINER_SECOND_ORDER_INCOMPLETE or f"{cid}/gg{path_key(diff[0])}" not in _KEYS:
        # Chainer has no (or no complete) second derivative here: our first derivative,
        # which matches Chainer's, differentiated numerically instead.
        _check_by_differences(name, args, kwargs, diff, leaves, rng, second, ggs, cid)
        return
    for i, g in zip(diff, ggs):
        want = _FIX[f"{cid}/gg{path_key(i)}"]
        got = np.zeros(want.shape) if g is None else g.array
        np.testing.assert_allclose(got, want, err_msg=f"{cid}: second derivative, arg {i}",
                                   **_tol(want.dtype))


def test_every_function_name_has_a_recorded_case_or_a_reason():
    """Each of Chainer's 216 names is checked against Chainer here, or is named in
    ``UNRECORDED`` with the reason; a name given a reason has no recorded case (so no
    reason outlives its cause)."""
    assert len(F.SIGNATURES) == 216
    covered = {name for cid, (name, _) in _BY_ID.items() if cid in _RECORDED}
    rest = set(F.SIGNATURES) - covered
    assert rest == set(UNRECORDED), (sorted(rest - set(UNRECORDED)),
                                     sorted(set(UNRECORDED) - rest))


def _check_by_differences(name, args, kwargs, diff, leaves, rng, second, ggs, cid):
    """The directional derivative of the first derivative along a random direction,
    by central differences of the recomputed first derivative, against the second."""
    rng2 = np.random.default_rng(0)
    base = [np.asarray(leaves[i].array, np.float64) for i in diff]
    dirs = [rng2.uniform(-1, 1, size=b.shape) for b in base]
    h = 1e-5

    def first_dot(eps):
        vs = {i: chainer.Variable(b + eps * d) for i, b, d in zip(diff, base, dirs)}
        a = list(args)
        for i in diff:
            set_path(a, i, vs[i])
        outs = _flat(getattr(F, name)(*a, **kwargs))
        r = np.random.default_rng(_seed(cid))
        _BY_ID[cid][1](r)  # the same draws as the case: inputs, then the weights
        total = _weighted_sum(outs, r)
        gs = chainer.grad([total], [vs[i] for i in diff], enable_double_backprop=True)
        terms = [F.sum(g * r.uniform(-1, 1, size=g.shape).astype(g.dtype)) for g in gs
                 if g is not None]
        return float(sum(t.array for t in terms))

    numeric = (first_dot(h) - first_dot(-h)) / (2 * h)
    analytic = sum(float(np.sum(g.array * d)) for g, d in zip(ggs, dirs) if g is not None)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7, err_msg=cid)
