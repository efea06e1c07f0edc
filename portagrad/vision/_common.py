"""Argument handling shared by the vision package: namespaces, shape checks, host moves."""

from __future__ import annotations

import random
from typing import Any

import array_api_compat
import numpy as np

from .._errors import NamespaceMismatchError, ShapeError, describe
from ..xp import from_numpy, to_numpy

__all__ = ["namespace", "check_bbox", "host", "like", "default_rng", "Draws"]


def namespace(op: str, *arrays: Any) -> Any:
    """The Array API namespace shared by ``arrays`` (``portagrad.ops`` for Variables)."""
    try:
        return array_api_compat.array_namespace(*arrays)
    except TypeError as e:
        kinds = ", ".join(type(a).__name__ for a in arrays)
        raise NamespaceMismatchError(
            f"{op}: expected arrays of one Array API library, got {kinds}. Convert them "
            f"with one library (or portagrad.xp.to_namespace) first."
        ) from e


def check_bbox(op: str, arg: str, bbox: Any, ndim: int = 2) -> None:
    """Raise :class:`ShapeError` unless ``bbox`` has shape ``(..., 4)`` with ``ndim`` axes."""
    shape = getattr(bbox, "shape", None)
    if shape is None or len(shape) != ndim or shape[-1] != 4:
        want = "(R, 4)" if ndim == 2 else f"{ndim}-d array ending in 4"
        raise ShapeError(
            f"{op}({arg}): expected boxes of shape {want} as (y_min, x_min, y_max, x_max), "
            f"got {describe(bbox)}"
        )


def host(array: Any) -> np.ndarray:
    """A NumPy copy (or view) of an array or Variable of any library."""
    arr = getattr(array, "array", None)  # Variables keep their raw array in .array
    if arr is not None and not isinstance(array, np.ndarray):
        array = arr
    if isinstance(array, (list, tuple)):
        return np.asarray(array)
    return to_numpy(array)


def like(host_array: np.ndarray, ref: Any) -> Any:
    """``host_array`` in the library and on the device of ``ref`` (NumPy stays NumPy)."""
    ref = getattr(ref, "array", ref) if not isinstance(ref, np.ndarray) else ref
    if isinstance(ref, np.ndarray):
        return host_array
    return from_numpy(host_array, like=ref)


def default_rng(rng: np.random.Generator | None) -> np.random.Generator:
    """``rng`` or a freshly seeded generator (random transforms draw on the host)."""
    return rng if rng is not None else np.random.default_rng()


class Draws:
    """The random numbers of one random transform, drawn from ``rng`` (a NumPy Generator)
    when one is given, else from the global generators ChainerCV's transforms draw from,
    call for call: Python's ``random`` for offsets, ratios and coin flips, NumPy's global
    generator where ChainerCV calls ``numpy.random``. So after ``random.seed(s)`` and
    ``numpy.random.seed(s)`` a transform gives what ChainerCV's gives after the same seeds.
    """

    def __init__(self, rng: np.random.Generator | None) -> None:
        self.rng = rng

    def randint(self, low: int, high: int) -> int:
        """An int in ``[low, high]``, both ends included (``random.randint``)."""
        if self.rng is None:
            return random.randint(low, high)
        return int(self.rng.integers(low, high + 1))

    def uniform(self, low: float, high: float) -> float:
        """A float between ``low`` and ``high`` (``random.uniform``)."""
        if self.rng is None:
            return random.uniform(low, high)
        return float(self.rng.uniform(low, high))

    def coin(self) -> bool:
        """True or False, each with probability 1/2 (``random.choice([True, False])``)."""
        if self.rng is None:
            return random.choice((True, False))
        return bool(self.rng.integers(2))

    def np_randint(self, high: int) -> int:
        """An int in ``[0, high)`` (``numpy.random.randint``)."""
        if self.rng is None:
            return int(np.random.randint(high))
        return int(self.rng.integers(high))

    def np_uniform(self, low: Any, high: Any, size: Any = None) -> Any:
        """``numpy.random.uniform``'s draws."""
        return (np.random if self.rng is None else self.rng).uniform(low, high, size)

    def np_normal(self, loc: float, scale: float, size: Any = None) -> Any:
        """``numpy.random.normal``'s draws."""
        return (np.random if self.rng is None else self.rng).normal(loc, scale, size)
