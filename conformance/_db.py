"""The op database: one :class:`OpRecord` per public differentiable op.

Records live in ``conformance/records/*.py``, one module per family; importing this
package loads all of them.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["OpRecord", "register", "all_records", "get_record", "NON_DIFFERENTIABLE"]

Sample = Callable[[np.random.Generator], tuple]


@dataclasses.dataclass
class OpRecord:
    """What the suite needs to know about one op.

    Attributes
    ----------
    name
        The op's public name (``portagrad.ops.<name>``; dotted for sub-namespaces).
    fn
        The function under test, called with Variables (and constants) positionally.
    ref
        Float64 NumPy reference of the forward, called with NumPy arrays.
    sample
        Draws host (NumPy float64) arguments inside the op's smooth domain.
    diff
        Positions of the differentiable arguments (default: every floating argument).
    order
        Highest order of derivative to check.
    dtypes
        Floating dtypes the op supports.
    tol
        (atol, rtol) of the forward comparison per dtype.
    errors
        ``(make_args, error_type)`` pairs: arguments drawn by ``make_args(rng)`` must raise.
    strategy
        Optional hypothesis strategy factory replacing ``sample`` for property runs.
    """

    name: str
    fn: Callable[..., Any]
    ref: Callable[..., Any] | None
    sample: Sample
    diff: tuple[int, ...] | None = None
    order: int = 3
    dtypes: tuple[str, ...] = ("float32", "float64")
    tol: dict[str, tuple[float, float]] = dataclasses.field(
        default_factory=lambda: {"float32": (1e-5, 1e-4), "float64": (1e-10, 1e-8)})
    grad_tol: tuple[float, float] = (1e-5, 1e-4)
    errors: list[tuple[Sample, type]] = dataclasses.field(default_factory=list)
    strategy: Callable[..., Any] | None = None
    covers: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"OpRecord({self.name!r})"


_RECORDS: dict[str, OpRecord] = {}

# Public names in portagrad.ops with no gradient to check: creation, comparison,
# rounding, tests, searching, and helpers. They are checked to return no graph.
NON_DIFFERENTIABLE: set[str] = {
    "asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like",
    "empty_like", "arange", "linspace", "eye", "equal", "not_equal", "less", "less_equal",
    "greater", "greater_equal", "logical_and", "logical_or", "logical_xor", "logical_not",
    "floor", "ceil", "round", "trunc", "sign", "isnan", "isinf", "isfinite", "argmax",
    "argmin", "argsort", "broadcast_shapes",
}


def register(record: OpRecord) -> OpRecord:
    """Add ``record`` to the database (a name may be registered once)."""
    if record.name in _RECORDS:
        raise ValueError(f"conformance: op {record.name!r} is registered twice")
    _RECORDS[record.name] = record
    return record


def _load() -> None:
    from . import records

    for mod in pkgutil.iter_modules(records.__path__):
        importlib.import_module(f"{records.__name__}.{mod.name}")


def all_records() -> list[OpRecord]:
    """Every registered record, sorted by name."""
    if not _RECORDS:
        _load()
    return [_RECORDS[k] for k in sorted(_RECORDS)]


def get_record(name: str) -> OpRecord:
    """The record of one op."""
    all_records()
    return _RECORDS[name]
