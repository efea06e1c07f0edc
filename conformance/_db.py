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
        Draws host (NumPy float64) arguments inside the op's smooth domain from a NumPy
        generator; under hypothesis the generator's seed is drawn. Optional when
        ``strategy`` is given.
    diff
        Positions of the differentiable arguments (default: every floating argument);
        other floating arguments are held constant.
    order
        Highest order of derivative to check.
    dtypes
        Floating dtypes the op supports.
    tol
        (atol, rtol) of the forward comparison per dtype (also of fast path against
        pure-standard path).
    grad_tol
        (atol, rtol) of the first-order check in float64; order ``k`` scales both by
        ``10 ** (k - 1)``.
    errors
        ``(make_args, error_type)`` pairs: arguments drawn by ``make_args(rng)`` must raise
        ``error_type`` (a portagrad error, or a tuple of them).
    strategy
        Optional ``strategy(S) -> SearchStrategy[tuple]`` of host arguments, given a
        :class:`conformance._strategies.Strategies` of the namespace under test; replaces
        ``sample`` for property runs.
    covers
        Further public names this record checks (aliases, in-place variants).
    eps
        Finite-difference step.
    grad_tol_float32
        (atol, rtol) of the first-order check on devices without float64, where float32
        gradients are compared with float64 differences on the host.
    skip
        ``{namespace: reason}``: namespaces the op does not support, with the reason.
    """

    name: str
    fn: Callable[..., Any]
    ref: Callable[..., Any] | None
    sample: Sample | None = None
    diff: tuple[int, ...] | None = None
    order: int = 3
    dtypes: tuple[str, ...] = ("float32", "float64")
    tol: dict[str, tuple[float, float]] = dataclasses.field(
        default_factory=lambda: {"float32": (1e-5, 1e-4), "float64": (1e-10, 1e-8)})
    grad_tol: tuple[float, float] = (1e-5, 1e-4)
    errors: list[tuple[Sample, type]] = dataclasses.field(default_factory=list)
    strategy: Callable[..., Any] | None = None
    covers: tuple[str, ...] = ()
    eps: float = 1e-3
    grad_tol_float32: tuple[float, float] = (2e-3, 2e-2)
    skip: dict[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.sample is None and self.strategy is None:
            raise ValueError(f"OpRecord({self.name!r}): expected sample= or strategy=, got "
                             f"neither")

    def args_strategy(self, strategies: Any) -> Any:
        """The hypothesis strategy of host arguments, in the namespace of ``strategies``."""
        if self.strategy is not None:
            return self.strategy(strategies)
        return strategies.seeded(self.sample)

    def diff_positions(self, host_args: tuple) -> tuple[int, ...]:
        """Positions of the arguments to differentiate for these arguments."""
        if self.diff is not None:
            return tuple(self.diff)
        return tuple(i for i, a in enumerate(host_args)
                     if isinstance(a, np.ndarray) and a.dtype.kind == "f")

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
