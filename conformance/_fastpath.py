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

__all__ = ["check_fastpath", "fast_path_libraries", "FAST_PATH_HITS"]

# Kernels whose fast path ran during a fastpath check, per namespace.
FAST_PATH_HITS: dict[str, set[str]] = {}


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
