"""Running the checks under hypothesis, and what a run reports.

:func:`run_check` draws arguments from a record's strategy, runs one check on each draw
and, on failure, returns the shrunk arguments with a copy-pasteable reproduction.
:func:`check_record` runs every check of a record (yours too) and returns a
:class:`Report`.
"""

from __future__ import annotations

import dataclasses
import os
import traceback
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import seed as hypothesis_seed

from portagrad.xp._namespace import namespace_name

from ._backends import HOST, Backend, get_backend, selected_backends
from ._checks import CHECK_FUNCTIONS, CHECKS, NA, PASS, CheckFailure, applies, check_errors
from ._db import OpRecord, get_record
from ._strategies import Strategies

__all__ = ["Outcome", "Report", "run_check", "check_record", "reproduce", "PROFILES",
           "register_profiles", "profile_settings", "profile_checks"]

# Conformance profiles, selected by HYPOTHESIS_PROFILE. ``ci`` is derandomized so a red
# run is red again on rerun, and small: every op x check x namespace runs it.
PROFILES: dict[str, dict[str, Any]] = {
    "dev": {"max_examples": 10},
    "ci": {"max_examples": 5, "derandomize": True},
    "full": {"max_examples": 5, "derandomize": True},
    "thorough": {"max_examples": 200},
}
_COMMON = {
    "deadline": None,
    "database": None,
    "print_blob": False,
    "report_multiple_bugs": False,
    "phases": (Phase.explicit, Phase.generate, Phase.shrink),
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                              HealthCheck.filter_too_much],
}


def register_profiles() -> None:
    """Register ``conformance-dev``, ``conformance-ci`` and ``conformance-thorough``.

    They are separate from the unit tests' ``dev``/``ci``/``thorough`` so that loading
    the conformance suite changes nothing for other tests.
    """
    for name, kw in PROFILES.items():
        settings.register_profile(f"conformance-{name}", **_COMMON, **kw)


# Where a namespace's examples cost more, the profile draws fewer of them on it. JAX
# compiles each eager op for every new shape (tens of milliseconds a shape on one core), so
# in CI it checks each op x check on one example; ``thorough`` (make test-full) and dev
# draw the full count everywhere.
NAMESPACE_PROFILES: dict[str, dict[str, dict[str, Any]]] = {
    "ci": {"jax": {"max_examples": 1}, "torch": {"max_examples": 1}},
}
# The checks the pytest suite generates per namespace under a profile (default: all). On
# JAX in CI: values, first derivatives, device, dtype, errors, fast paths and mutation
# (immutability is JAX's own risk); higher orders, forward mode and the unrecorded rules,
# which build the largest graphs and so compile the most, run in make test-full and in
# ``portagrad conformance``.
NAMESPACE_CHECKS: dict[str, dict[str, tuple[str, ...]]] = {
    "ci": {"jax": ("forward", "order1", "device", "dtype", "errors", "fastpath", "mutation")},
}


def profile_checks(namespace: str, profile: str | None = None) -> tuple[str, ...]:
    """The checks the pytest suite runs on ``namespace`` under the profile."""
    name = profile or os.environ.get("HYPOTHESIS_PROFILE", "dev")
    return NAMESPACE_CHECKS.get(name, {}).get(namespace, CHECKS)


def profile_settings(profile: str | None = None, namespace: str | None = None,
                     **overrides: Any) -> settings:
    """Settings of the conformance profile named by ``profile`` or HYPOTHESIS_PROFILE,
    with the profile's reduction for ``namespace`` (:data:`NAMESPACE_PROFILES`)."""
    name = profile or os.environ.get("HYPOTHESIS_PROFILE", "dev")
    kw = dict(_COMMON)
    kw.update(PROFILES.get(name, PROFILES["dev"]))
    kw.update(NAMESPACE_PROFILES.get(name, {}).get(namespace or "", {}))
    kw.update({k: v for k, v in overrides.items() if v is not None})
    return settings(**kw)


@dataclasses.dataclass
class Outcome:
    """The result of one check of one op on one namespace.

    ``status`` is ``"pass"``, ``"fail"``, ``"n/a"`` (does not apply) or ``"skip"``
    (the record says the namespace does not support the op).
    """

    op: str
    check: str
    namespace: str
    status: str
    examples: int = 0
    message: str = ""
    args: tuple | None = None
    seed: int | None = None
    max_examples: int | None = None

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    def reproduction(self) -> str:
        """A shell command and a Python snippet that rerun this failure."""
        cmd = f"portagrad conformance --namespace {self.namespace} --ops {self.op}"
        if self.seed is not None:
            cmd += f" --seed {self.seed}"
        if self.max_examples is not None:
            cmd += f" --max-examples {self.max_examples}"
        args = "()" if self.args is None else python_literal(self.args)
        return (f"{cmd}\n"
                f"python - <<'EOF'\n"
                f"import numpy as np\n"
                f"from conformance import reproduce\n"
                f"reproduce({self.op!r}, {self.check!r}, {self.namespace!r}, {args})\n"
                f"EOF")

    def describe(self) -> str:
        """The failure message followed by its reproduction."""
        head = f"{self.op} [{self.check}] on {self.namespace}: {self.message}"
        if not self.failed:
            return head
        return f"{head}\nReproduce with:\n{self.reproduction()}"


def python_literal(value: Any) -> str:
    """Python source that rebuilds ``value`` (arrays exactly, via ``tolist``)."""
    if isinstance(value, np.ndarray):
        body = repr(value.tolist())
        if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
            body = body.replace("nan", "float('nan')").replace("inf", "float('inf')")
        return f"np.asarray({body}, dtype={str(value.dtype)!r}).reshape({value.shape!r})"
    if isinstance(value, np.generic):
        return repr(value.item())
    if isinstance(value, tuple):
        inner = ", ".join(python_literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    return repr(value)


def _message(exc: BaseException) -> str:
    if isinstance(exc, CheckFailure):
        return str(exc)
    # The op itself raised: keep the innermost frames, they say where.
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-4))
    return f"raised {type(exc).__name__}: {exc}\n{tb.rstrip()}"


def run_check(record: OpRecord, backend: Backend | str, check: str, *,
              max_examples: int | None = None, seed: int | None = None,
              profile: str | None = None) -> Outcome:
    """Run ``check`` on arguments drawn from ``record``'s strategy.

    ``seed`` fixes hypothesis' random draws (else the profile decides: ``ci`` is
    derandomized). Never raises for a failing op: the :class:`Outcome` says.
    """
    backend = get_backend(backend) if isinstance(backend, str) else backend
    out = Outcome(record.name, check, backend.name, NA, seed=seed, max_examples=max_examples)
    if check not in CHECKS:
        raise ValueError(f"run_check(check): expected one of {CHECKS}, got {check!r}")
    if backend.name in record.skip:
        out.status, out.message = "skip", record.skip[backend.name]
        return out
    if not applies(record, backend, check):
        return out
    if check == "errors":
        try:
            out.status = check_errors(record, backend)
        except Exception as e:  # noqa: BLE001 - reported, not raised
            out.status, out.message = "fail", _message(e)
        return out

    fn = CHECK_FUNCTIONS[check]
    box: dict[str, Any] = {"last": None, "statuses": set(), "n": 0}

    def body(host: tuple) -> None:
        box["last"] = host
        box["n"] += 1
        box["statuses"].add(fn(record, backend, host))

    # Arguments are host arrays whatever the backend: drawing them with the host's array
    # strategies gives every backend the same draws, in float64 even where the device has
    # none, without a per-element write into an immutable (JAX) array.
    strategy = record.args_strategy(Strategies(HOST.xp))
    run = given(strategy)(body)
    if check == "fastpath":
        from ._fastpath import reaching_arguments

        reaching = reaching_arguments(record, namespace_name(backend.xp))
        if reaching is not None:
            run = example(reaching)(run)
    if seed is not None:
        run = hypothesis_seed(seed)(run)
        run = profile_settings(profile, backend.name, max_examples=max_examples,
                               derandomize=False)(run)
    else:
        run = profile_settings(profile, backend.name, max_examples=max_examples)(run)
    try:
        run()
    except Exception as e:  # noqa: BLE001 - hypothesis re-raises the shrunk failure
        out.status, out.message, out.args = "fail", _message(e), box["last"]
    else:
        out.status = PASS if PASS in box["statuses"] else NA
    out.examples = box["n"]
    return out


def reproduce(op: str | OpRecord, check: str, namespace: str, args: tuple) -> str:
    """Run one check once on the given host arguments; raise what it finds.

    Examples
    --------
    >>> import numpy as np
    >>> from conformance import reproduce
    >>> reproduce("tanh", "order2", "numpy", (np.asarray([0.5, -1.0]),))
    'pass'
    """
    record = get_record(op) if isinstance(op, str) else op
    backend = get_backend(namespace)
    if check == "errors":
        return check_errors(record, backend)
    return CHECK_FUNCTIONS[check](record, backend, tuple(args))


@dataclasses.dataclass
class Report:
    """The outcomes of a set of checks; :meth:`raise_for_failures` turns failures into
    one AssertionError with every reproduction."""

    outcomes: list[Outcome]

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.failed]

    @property
    def ok(self) -> bool:
        return not self.failures

    def raise_for_failures(self) -> None:
        if self.failures:
            raise AssertionError("\n\n".join(o.describe() for o in self.failures))

    def table(self) -> str:
        from ._table import format_table

        return format_table(self.outcomes)


def check_record(record: OpRecord, namespaces: Sequence[str] | None = None,
                 checks: Iterable[str] = CHECKS, *, max_examples: int | None = 10,
                 seed: int | None = 0) -> Report:
    """Run ``checks`` of ``record`` on each namespace (default: the selected ones).

    This is how to check your own primitive with the machinery that checks portagrad's.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from conformance import OpRecord, check_record
    >>> rec = OpRecord("softsign", lambda x: x / (1 + pg.ops.abs(x)),
    ...                lambda x: x / (1 + np.abs(x)),
    ...                sample=lambda rng: (rng.uniform(0.1, 2, size=3),))
    >>> check_record(rec, ["numpy"], max_examples=3).ok
    True
    """
    outcomes = []
    for name in selected_backends(namespaces):
        for check in checks:
            outcomes.append(run_check(record, name, check, max_examples=max_examples,
                                      seed=seed))
    return Report(outcomes)
