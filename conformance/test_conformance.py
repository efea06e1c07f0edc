"""The conformance checks over every record, on the selected backends."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import portagrad as pg
from conformance import NON_DIFFERENTIABLE, all_records
from conformance._backends import BACKENDS, available, selected_backends
from portagrad.gradcheck import check_grads
from portagrad.xp import to_numpy

RECORDS = all_records()
SEEDS = (0, 1, 2)


def _backends():
    out = []
    for name in selected_backends():
        marks = [] if available(name) else [pytest.mark.skip(reason=f"{name} not installed")]
        out.append(pytest.param(name, marks=marks, id=name))
    return out


def _host(out):
    if isinstance(out, (tuple, list)):
        return [_host(o) for o in out]
    return to_numpy(out.array if isinstance(out, pg.Variable) else out)


def _args(record, backend, seed, dtype="float64"):
    rng = np.random.default_rng(seed)
    host = record.sample(rng)
    cast = tuple(h.astype(dtype) if isinstance(h, np.ndarray) and h.dtype.kind == "f" else h
                 for h in host)
    return host, tuple(BACKENDS[backend].put(h) for h in cast)


@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.name)
def test_forward_matches_reference(record, backend):
    for seed in SEEDS:
        for dtype in record.dtypes:
            host, args = _args(record, backend, seed, dtype)
            got = _host(record.fn(*args))
            want = record.ref(*host)
            atol, rtol = record.tol[dtype]
            if isinstance(want, (tuple, list)):
                assert len(got) == len(want)
                pairs = list(zip(got, want))
            else:
                pairs = [(got, want)]
            for g, w in pairs:
                w = np.asarray(w)
                assert g.shape == w.shape, f"{record.name}: shape {g.shape} != {w.shape}"
                assert str(g.dtype) == dtype or not np.issubdtype(w.dtype, np.floating)
                np.testing.assert_allclose(g, w.astype(g.dtype), atol=atol, rtol=rtol,
                                           err_msg=f"{record.name} seed={seed} {dtype}")


@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.name)
def test_gradients_to_every_order(record, backend):
    for seed in SEEDS:
        _, args = _args(record, backend, seed)
        check_grads(record.fn, args, order=record.order, seed=seed,
                    atol=record.grad_tol[0], rtol=record.grad_tol[1])


@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize("record", [r for r in RECORDS if r.errors], ids=lambda r: r.name)
def test_error_inputs_raise(record, backend):
    rng = np.random.default_rng(0)
    for make, err in record.errors:
        args = tuple(BACKENDS[backend].put(a) if isinstance(a, np.ndarray) else a
                     for a in make(rng))
        with pytest.raises(err) as info:
            record.fn(*args)
        assert isinstance(info.value, pg.PortagradError), (
            f"{record.name}: raised {type(info.value).__name__}, not a portagrad error")


def _public_ops():
    names = []
    for name, obj in vars(pg.ops).items():
        if name.startswith("_") or not callable(obj) or inspect.ismodule(obj):
            continue
        if inspect.isclass(obj):
            continue
        names.append(name)
    return sorted(names)


def test_every_public_op_has_a_record():
    registered = {r.name for r in RECORDS} | {c for r in RECORDS for c in r.covers}
    missing = [n for n in _public_ops() if n not in registered and n not in NON_DIFFERENTIABLE]
    assert not missing, f"ops without a conformance record: {missing}"


_BINARY_PREDICATES = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                      "logical_and", "logical_or", "logical_xor"}
_ARRAY_IN = {"zeros_like", "ones_like", "empty_like", "floor", "ceil", "round", "trunc", "sign",
             "isnan", "isinf", "isfinite", "argmax", "argmin", "argsort", "logical_not"}


@pytest.mark.parametrize("name", sorted((_BINARY_PREDICATES | _ARRAY_IN) & NON_DIFFERENTIABLE))
def test_non_differentiable_ops_record_no_graph(name):
    x = pg.Variable(np.array([0.5, 1.5, -2.0]))
    if name.startswith("logical"):
        x = pg.Variable(np.array([True, False, True]))
    fn = getattr(pg.ops, name)
    out = fn(x, x) if name in _BINARY_PREDICATES else fn(x)
    assert isinstance(out, pg.Variable)
    assert out.creator is None and not out.requires_grad
