"""The conformance suite can fail: deliberately broken ops are caught with clear messages.

Each broken op is a real primitive (forward + vjp) with one planted defect; the test runs
the same checks the suite runs and asserts which ones fail, and what they say.
"""

from __future__ import annotations

import re

import array_api_strict
import numpy as np
import pytest

import portagrad as pg
from conformance import NON_DIFFERENTIABLE, CheckFailure, OpRecord, check_record, run_check
from conformance._backends import Backend, _strict_xp
from conformance._coverage import missing_records, public_ops
from conformance._db import _RECORDS, all_records
from portagrad.tape import primitive
from portagrad.xp import KERNELS, Kernel


def _sample(rng):
    return (rng.uniform(-1.5, 1.5, size=(3,)),)


def _record(name, fn, ref=np.sin, **kw):
    # Primitives take Variables; the record's function also gets plain arrays.
    return OpRecord(name, lambda x: fn(pg.as_variable(x)), ref, sample=_sample, **kw)


# -- a wrong vjp: d sin = sin (should be cos) -----------------------------------------------
@primitive(elementwise=True)
def meta_bad_sin(xp, x):
    return xp.sin(x)


@meta_bad_sin.defvjp
def _(ctx, gy):
    (x,) = ctx.inputs
    return (gy * pg.ops.sin(x),)


# -- a right vjp with a wrong tangent rule: d sin = -cos -------------------------------------
@primitive(elementwise=True)
def meta_bad_jvp_sin(xp, x):
    return xp.sin(x)


@meta_bad_jvp_sin.defvjp
def _(ctx, gy):
    (x,) = ctx.inputs
    return (gy * pg.ops.cos(x),)


@meta_bad_jvp_sin.defjvp
def _(ctx, t):
    (x,) = ctx.inputs
    return -t * pg.ops.cos(x)


def test_wrong_tangent_rule_fails_the_jvp_check():
    bad = _record("meta_bad_jvp_sin", meta_bad_jvp_sin)
    assert run_check(bad, "numpy", "order1", max_examples=3, seed=0).status == "pass"
    out = run_check(bad, "numpy", "jvp", max_examples=3, seed=0)
    assert out.failed
    assert "<u, J t> (forward) vs <J^T u, t> (reverse)" in out.describe()
    good = _record("meta_sin", pg.ops.sin)
    assert run_check(good, "numpy", "jvp", max_examples=3, seed=0).status == "pass"


def test_wrong_vjp_fails_first_order_with_the_numbers():
    rec = _record("meta_bad_sin", meta_bad_sin)
    assert run_check(rec, "numpy", "forward", max_examples=3, seed=0).status == "pass"
    out = run_check(rec, "numpy", "order1", max_examples=5, seed=0)
    assert out.failed
    assert "meta_bad_sin (order 1): analytic directional derivative" in out.message
    assert "differs from the numerical one" in out.message


# -- right first derivative, wrong second: d/dx 3x^2 taken as 3x (should be 6x) -------------
@primitive(elementwise=True)
def meta_cube(xp, x):
    return x * x * x


@meta_cube.defvjp
def _(ctx, gy):
    (x,) = ctx.inputs
    return (gy * meta_cube_grad(x),)


@primitive(elementwise=True)
def meta_cube_grad(xp, x):
    return 3 * x * x


@meta_cube_grad.defvjp
def _(ctx, gy):
    (x,) = ctx.inputs
    return (gy * 3 * x,)


def test_wrong_second_derivative_only_fails_order_two():
    rec = _record("meta_cube", meta_cube, ref=lambda x: x**3)
    report = check_record(rec, ["numpy", "array_api_strict"], ["forward", "order1", "order2"],
                          max_examples=5)
    status = {(o.namespace, o.check): o.status for o in report.outcomes}
    for ns in ("numpy", "array_api_strict"):
        assert status[ns, "forward"] == "pass"
        assert status[ns, "order1"] == "pass"
        assert status[ns, "order2"] == "fail"
    assert all("meta_cube (order 2)" in o.message for o in report.failures)
    with pytest.raises(AssertionError, match="Reproduce with"):
        report.raise_for_failures()


# -- a gradient that lands on the default device --------------------------------------------
@primitive(saves="outputs", elementwise=True)
def meta_wrong_device_tanh(xp, x):
    return xp.tanh(x)


@meta_wrong_device_tanh.defvjp
def _(ctx, gy):
    (y,) = ctx.outputs
    g = gy * (1 - y * y)
    return (pg.ops.to_device(g, g.xp.__array_namespace_info__().default_device()),)


def test_gradient_on_the_wrong_device_is_caught_on_device1():
    rec = _record("meta_wrong_device_tanh", meta_wrong_device_tanh, ref=np.tanh)
    out = run_check(rec, "array_api_strict", "device", max_examples=3, seed=0)
    assert out.failed
    assert "expected the gradient of argument 0 on its input's device" in out.message
    assert "device1" in out.message and "CPU_DEVICE" in out.message
    # NumPy has one device: nothing to catch there.
    assert run_check(rec, "numpy", "device", max_examples=3, seed=0).status == "pass"


# -- an op that writes into its input -------------------------------------------------------
@primitive(elementwise=True)
def meta_mutating_exp(xp, x):
    y = xp.exp(x)
    x[...] = y
    return y


@meta_mutating_exp.defvjp
def _(ctx, gy):
    (x,) = ctx.inputs
    return (gy * pg.ops.exp(x),)


@pytest.mark.parametrize("namespace", ["numpy", "array_api_strict"])
def test_mutating_its_input_is_caught(namespace):
    rec = _record("meta_mutating_exp", meta_mutating_exp, ref=np.exp)
    out = run_check(rec, namespace, "mutation", max_examples=3, seed=0)
    assert out.failed
    assert "meta_mutating_exp: expected its inputs left untouched" in out.message
    if namespace == "numpy":  # read-only arrays make the write itself fail
        assert "read-only" in out.message
    else:  # the values are compared before and after
        assert "changed by forward or backward" in out.message


# -- a missing record -----------------------------------------------------------------------
def test_missing_record_is_named(monkeypatch):
    monkeypatch.setattr(pg.ops, "meta_unrecorded", lambda x: x, raising=False)
    monkeypatch.setattr(pg.ops, "__all__", [*pg.ops.__all__, "meta_unrecorded"])
    names = public_ops()
    assert "meta_unrecorded" in names
    assert missing_records(names, all_records(), NON_DIFFERENTIABLE) == ["meta_unrecorded"]


def test_public_ops_walks_sub_namespaces():
    names = public_ops()
    sub = [n for n in names if "." in n]
    for n in sub:
        mod, fn = n.split(".")
        assert callable(getattr(getattr(pg.ops, mod), fn))
    assert "tanh" in names and "Variable" not in names


# -- a fast path that disagrees with its pure-standard default ------------------------------
def _double(xp, x):
    return x + x


@primitive()
def meta_doubled(xp, x):
    return KERNELS["meta_double"](xp, x)


@meta_doubled.defvjp
def _(ctx, gy):
    return (gy * 2,)


def test_wrong_fast_path_is_caught(monkeypatch):
    k = Kernel("meta_double", _double)
    k.override("numpy")(lambda xp, x: x * 3)
    monkeypatch.setitem(KERNELS, "meta_double", k)
    rec = _record("meta_doubled", meta_doubled, ref=lambda x: 2 * x)
    out = run_check(rec, "numpy", "fastpath", max_examples=3, seed=0)
    assert out.failed
    assert "expected the numpy fast paths of ['meta_double'] to equal the pure-standard" in (
        out.message)
    # The fast path also breaks the forward (that is how it would be noticed in use).
    assert run_check(rec, "numpy", "forward", max_examples=3, seed=0).failed
    # A namespace without the fast path has nothing to compare.
    assert run_check(rec, "array_api_strict", "fastpath", max_examples=3,
                     seed=0).status == "n/a"


# -- error inputs ---------------------------------------------------------------------------
def test_error_input_that_does_not_raise_fails():
    rec = _record("meta_tanh", pg.ops.tanh, ref=np.tanh,
                  errors=[(lambda rng: (np.ones(3),), pg.ShapeError)])
    out = run_check(rec, "numpy", "errors")
    assert out.failed and "expected ShapeError for arguments [(3,)], got a result" in (
        out.message)


def test_error_of_the_wrong_type_fails():
    rec = _record("meta_tanh", pg.ops.tanh, ref=np.tanh,
                  errors=[(lambda rng: (np.arange(3),), pg.ShapeError)])
    out = run_check(rec, "numpy", "errors")
    assert out.failed and "expected ShapeError, got DTypeError" in out.message


# -- a device without float64: float32 on the device, float64 differences on the host -------
_NO_FLOAT64 = Backend("array_api_strict", "array_api_strict", _strict_xp,
                      lambda: array_api_strict.Device("no_float64"))


def test_device_without_float64_checks_against_the_host():
    assert not _NO_FLOAT64.supports_float64
    good = _record("meta_sin", pg.ops.sin)
    for check in ("forward", "order1", "order2", "order3", "jvp", "device", "dtype",
                  "mutation"):
        out = run_check(good, _NO_FLOAT64, check, max_examples=3, seed=0)
        assert out.status == "pass", out.describe()
    bad = run_check(_record("meta_bad_sin", meta_bad_sin), _NO_FLOAT64, "order1",
                    max_examples=3, seed=0)
    assert bad.failed
    assert "float32 directional derivative on array_api_strict" in bad.message
    assert "central differences on the host" in bad.message


# -- reproductions ---------------------------------------------------------------------------
def test_reproduction_reruns_the_failure():
    rec = _record("meta_bad_sin", meta_bad_sin)
    out = run_check(rec, "numpy", "order1", max_examples=5, seed=0)
    text = out.reproduction()
    assert text.splitlines()[0] == (
        "portagrad conformance --namespace numpy --ops meta_bad_sin --seed 0 --max-examples 5")
    snippet = re.search(r"<<'EOF'\n(.*)\nEOF", text, re.S).group(1)
    monkey = dict(_RECORDS)
    _RECORDS["meta_bad_sin"] = rec
    try:
        with pytest.raises(CheckFailure, match=r"meta_bad_sin \(order 1\)"):
            exec(snippet, {})
    finally:
        _RECORDS.clear()
        _RECORDS.update(monkey)


def test_sample_only_records_run_under_hypothesis():
    seen = []

    def sample(rng):
        seen.append(rng.uniform())
        return (rng.uniform(-1, 1, size=(2,)),)

    rec = OpRecord("meta_sin_sampled", pg.ops.sin, np.sin, sample)
    out = run_check(rec, "numpy", "order1", max_examples=8, seed=0)
    assert out.status == "pass" and out.examples == 8
    assert len(set(seen)) > 1  # different seeds, different arguments


# -- a rule for unrecorded backward that disagrees with the vjp ---------------------------
@primitive(elementwise=True)
def meta_sin_two_rules(xp, x):
    return xp.sin(x)


@meta_sin_two_rules.defvjp
def _(ctx, gy):
    (x,) = ctx.inputs
    return (gy * pg.ops.cos(x),)


@meta_sin_two_rules.defvjp_unrecorded
def _(ctx, gy):
    (x,) = ctx.inputs
    xp = ctx.xp
    return (pg.Variable(gy.array * xp.cos(x.array) * 1.001),)


def test_unrecorded_rule_is_checked_against_the_vjp():
    rec = _record("meta_sin_two_rules", meta_sin_two_rules)
    out = run_check(rec, "numpy", "unrecorded", max_examples=3, seed=0)
    assert out.failed and "the unrecorded rules of ['meta_sin_two_rules']" in out.message
    # Orders 2 and 3 differentiate the vjp, so only the first order sees the wrong rule.
    assert run_check(rec, "numpy", "order1", max_examples=3, seed=0).failed
    assert run_check(rec, "numpy", "order2", max_examples=3, seed=0).status == "pass"
    plain = _record("meta_sin", pg.ops.sin)
    assert run_check(plain, "numpy", "unrecorded", max_examples=3, seed=0).status == "pass"
    prod = OpRecord("meta_product", lambda a, b: pg.as_variable(a) * b,
                    lambda a, b: a * b, sample=lambda rng: (rng.standard_normal(3),
                                                            rng.standard_normal(3)))
    assert run_check(prod, "numpy", "unrecorded", max_examples=3, seed=0).status == "pass"
