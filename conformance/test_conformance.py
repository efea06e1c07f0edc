"""The conformance checks over every record, on the selected namespaces.

One test per namespace x op x check that applies; a failure prints the shrunk arguments
and a reproduction (shell command and Python snippet).
"""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from conformance import NON_DIFFERENTIABLE, all_records, run_check
from conformance._backends import available, get_backend, selected_backends
from conformance._checks import CHECKS, applies
from conformance._coverage import missing_records, public_ops
from conformance._fastpath import FAST_PATH_HITS, reached_kernels, reaching_arguments
from conformance._runner import profile_checks
from portagrad.xp import KERNELS
from portagrad.xp._namespace import namespace_name

RECORDS = all_records()


def _namespaces(config) -> list:
    out = []
    for name in selected_backends(config.getoption("namespace")):
        marks = [] if available(name) else [pytest.mark.skip(reason=f"{name} not installed")]
        out.append(pytest.param(name, marks=marks, id=name))
    return out


def pytest_generate_tests(metafunc):
    if "namespace" not in metafunc.fixturenames:
        return
    namespaces = _namespaces(metafunc.config)
    if "check" not in metafunc.fixturenames:
        metafunc.parametrize("namespace", namespaces)
        return
    cases = []
    for ns in namespaces:
        (name,) = ns.values
        backend = get_backend(name)
        for record in RECORDS:
            for check in CHECKS:
                if not available(name) or generated(record, backend, check):
                    cases.append(pytest.param(name, record, check, marks=ns.marks,
                                              id=f"{name}-{record.name}-{check}"))
    metafunc.parametrize(("namespace", "record", "check"), cases)


def generated(record, backend, check) -> bool:
    """Whether the suite has a case for ``record`` x ``check`` on ``backend``: the check
    applies, the record supports the namespace (``record.skip`` says why not, and the
    conformance table shows it), and for the fastpath check, some drawn arguments reach
    a fast path of the namespace (then the case starts from them); the profile may run
    fewer checks on a namespace (``conformance._runner.NAMESPACE_CHECKS``)."""
    if backend.name in record.skip or not applies(record, backend, check):
        return False
    if check not in profile_checks(backend.name):
        return False
    if check == "fastpath":
        return reaching_arguments(record, namespace_name(backend.xp)) is not None
    return True


def test_op(namespace, record, check):
    outcome = run_check(record, namespace, check)
    if outcome.status == "fail":
        pytest.fail(outcome.describe(), pytrace=False)
    # Cases are generated only where the check applies (see generated), so a check that
    # finds nothing to check is a failure of the suite, not a skip.
    if outcome.status != "pass":
        pytest.fail(f"{record.name} [{check}] on {namespace}: expected the check to apply "
                    f"to the drawn arguments, got {outcome.status!r} {outcome.message}",
                    pytrace=False)


def test_every_public_op_has_a_record():
    missing = missing_records(public_ops(), RECORDS, NON_DIFFERENTIABLE)
    assert not missing, (
        f"public ops of portagrad.ops without a conformance record: {missing}. Register an "
        f"OpRecord in conformance/records/<family>.py, or add the name to "
        f"conformance.NON_DIFFERENTIABLE if it has no gradient")


def test_every_record_names_a_public_op():
    public = set(public_ops())
    named = {r.name for r in RECORDS} | {c for r in RECORDS for c in r.covers}
    stale = sorted(named - public)
    assert not stale, f"records of names that portagrad.ops does not export: {stale}"


def test_every_fast_path_is_exercised(namespace):
    """Each registered fast path of the namespace runs under some record (and was then
    compared with its pure-standard default by the fastpath check)."""
    backend = get_backend(namespace)
    lib = backend.name
    # portagrad's own kernels (tests may register throwaway ones of their own).
    wanted = {name for name, k in KERNELS.items()
              if lib in k.overrides and k.default.__module__.startswith("portagrad.")}

    def run(records) -> None:
        for record in records:
            outcome = run_check(record, namespace, "fastpath")
            if outcome.status == "fail":
                pytest.fail(outcome.describe(), pytrace=False)

    # The fastpath cases that did not run in this process (deselected, or on another
    # pytest-xdist worker): first, one case for each fast path not seen yet, choosing the
    # record whose probed arguments reach the most of them; then every other record.
    library = namespace_name(backend.xp)
    reach = {r.name: reached_kernels(r, library) for r in RECORDS
             if generated(r, backend, "fastpath")}
    by_name = {r.name: r for r in RECORDS}
    tried: set[str] = set()
    while missing := wanted - FAST_PATH_HITS.get(namespace, set()):
        gain = {name: len(k & missing) for name, k in reach.items() if name not in tried}
        best = max(gain, key=gain.__getitem__, default=None)
        if best is None or not gain[best]:
            break
        tried.add(best)
        run([by_name[best]])
    if wanted - FAST_PATH_HITS.get(namespace, set()):
        run(r for r in RECORDS if r.name not in tried)
    unexercised = sorted(wanted - FAST_PATH_HITS.get(namespace, set()))
    assert not unexercised, (
        f"{lib} fast paths that no record's arguments reach, so none is compared with the "
        f"pure-standard path: {unexercised}")


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
