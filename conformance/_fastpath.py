"""The fast-path check: every registered fast path against the pure-standard default.

The kernels an op reaches are spied on while it runs with fast paths on; when any of them
has a fast path for the namespace, the op runs again under
:func:`portagrad.xp.pure_standard` and outputs and gradients must agree.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from portagrad.xp import KERNELS, Kernel, pure_standard, to_numpy
from portagrad.xp._namespace import namespace_name

from ._backends import Backend
from ._db import OpRecord
from ._gradients import (
    DEFAULT_TOL,
    NA,
    PASS,
    CheckFailure,
    dtypes_for,
    grads,
    prepare,
    raw,
)

__all__ = ["check_fastpath", "fast_path_libraries", "FAST_PATH_HITS", "reaching_arguments",
           "reached_kernels"]

# Kernels whose fast path ran during a fastpath check, per namespace.
FAST_PATH_HITS: dict[str, set[str]] = {}
# Per record: for each library, the first probed host arguments that reach a kernel with a
# fast path of that library.
_REACHING: dict[str, dict[str, tuple]] = {}
# Per record and library: the kernels with a fast path of that library those arguments reach.
_REACHED: dict[str, dict[str, frozenset[str]]] = {}
# Draws the probe tries before it decides a record reaches no fast path of a library.
PROBE_EXAMPLES = 12


def fast_path_libraries() -> set[str]:
    """Libraries with at least one registered fast path."""
    return {lib for k in KERNELS.values() for lib in k.overrides}


@contextlib.contextmanager
def _tracking_kernels(library: str) -> Iterator[set[str]]:
    """Names of the kernels with a ``library`` fast path that run inside the block."""
    hits: set[str] = set()
    original = Kernel.__call__

    def spy(self: Kernel, xp: Any, *args: Any, **kwargs: Any) -> Any:
        if library in self.overrides and namespace_name(xp) == library:
            hits.add(self.name)
        return original(self, xp, *args, **kwargs)

    Kernel.__call__ = spy  # type: ignore[method-assign]
    try:
        yield hits
    finally:
        Kernel.__call__ = original  # type: ignore[method-assign]


@contextlib.contextmanager
def _tracking_any_fast_path() -> Iterator[set[str]]:
    """Names of the kernels with a fast path of any library that run inside the block,
    whatever the namespace of their arrays."""
    hits: set[str] = set()
    original = Kernel.__call__

    def spy(self: Kernel, xp: Any, *args: Any, **kwargs: Any) -> Any:
        if self.overrides:
            hits.add(self.name)
        return original(self, xp, *args, **kwargs)

    Kernel.__call__ = spy  # type: ignore[method-assign]
    try:
        yield hits
    finally:
        Kernel.__call__ = original  # type: ignore[method-assign]


def reaching_arguments(record: OpRecord, library: str) -> tuple | None:
    """Host arguments of ``record`` whose forward and backward reach a kernel with a
    ``library`` fast path, or ``None`` when none of the probe's draws does.

    The probe draws from the record's strategy (derandomized, :data:`PROBE_EXAMPLES`
    draws) and runs the op on the host, where the kernels an op calls are the same as on
    any namespace; the fastpath check then starts from these arguments, so a generated
    fastpath case always compares a fast path with the pure-standard one.
    """
    if record.name not in _REACHING:
        _REACHING[record.name], _REACHED[record.name] = _probe(record)
    return _REACHING[record.name].get(library)


def reached_kernels(record: OpRecord, library: str) -> frozenset[str]:
    """The kernels with a ``library`` fast path that :func:`reaching_arguments`' arguments
    reach on the host (empty when none does)."""
    reaching_arguments(record, library)
    return _REACHED[record.name].get(library, frozenset())


def _probe(record: OpRecord) -> tuple[dict[str, tuple], dict[str, frozenset[str]]]:
    from hypothesis import HealthCheck, Phase, given, settings

    from ._backends import HOST
    from ._strategies import Strategies

    libraries = fast_path_libraries()
    found: dict[str, tuple] = {}
    reached: dict[str, frozenset[str]] = {}
    dtype = "float64" if "float64" in record.dtypes else record.dtypes[-1]

    def body(host: tuple) -> None:
        if set(found) == libraries:
            return
        with _tracking_any_fast_path() as hits:
            try:
                _evaluate(record, HOST, host, dtype)
            except Exception:  # noqa: BLE001 - the checks themselves report the op's errors
                return
        for library in libraries - set(found):
            kernels = frozenset(name for name in hits if library in KERNELS[name].overrides)
            if kernels:
                found[library], reached[library] = host, kernels

    run = given(record.args_strategy(Strategies(HOST.xp)))(body)
    settings(max_examples=PROBE_EXAMPLES, derandomize=True, database=None, deadline=None,
             phases=(Phase.explicit, Phase.generate), print_blob=False,
             suppress_health_check=list(HealthCheck))(run)()
    return found, reached


def _evaluate(record: OpRecord, backend: Backend, host: tuple, dtype: str) -> list:
    args, pos = prepare(record, backend, host, dtype)
    outs, _, g1, _ = grads(record, args, pos, second=False)
    named = [(f"output {i}", o) for i, o in enumerate(outs)]
    named += [(f"gradient of argument {p}", g) for p, g in zip(pos, g1)]
    return [(n, None if v is None else to_numpy(raw(v))) for n, v in named]


def check_fastpath(record: OpRecord, backend: Backend, host: tuple) -> str:
    """Outputs and gradients with the fast paths equal those of the pure-standard path."""
    library = namespace_name(backend.xp)
    if library not in fast_path_libraries():
        return NA
    ran = False
    for dtype in dtypes_for(record, backend):
        with _tracking_kernels(library) as hits:
            fast = _evaluate(record, backend, host, dtype)
        if not hits:
            continue
        ran = True
        FAST_PATH_HITS.setdefault(backend.name, set()).update(hits)
        with pure_standard():
            slow = _evaluate(record, backend, host, dtype)
        atol, rtol = record.tol.get(dtype, DEFAULT_TOL)
        for (what, f), (_, s) in zip(fast, slow):
            if f is None and s is None:
                continue
            same = (f is not None and s is not None and f.shape == s.shape
                    and np.allclose(f, s, atol=atol, rtol=rtol, equal_nan=True))
            if not same:
                raise CheckFailure(
                    f"{record.name} ({dtype}): expected the {library} fast paths of "
                    f"{sorted(hits)} to equal the pure-standard path, got a different "
                    f"{what}: fast {f!r}, pure-standard {s!r}")
    return PASS if ran else NA
