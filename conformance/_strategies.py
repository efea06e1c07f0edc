"""Hypothesis strategies of op arguments, built on the selected namespace's array strategies.

Records describe their inputs with these building blocks; every strategy yields *host*
arguments (NumPy arrays in float64 and Python values), which the checks cast to each
dtype and move to the backend under test. Values are drawn inside an op's smooth domain,
so finite differences with a step of 1e-3 stay meaningful.

Examples
--------
>>> import array_api_strict as xp
>>> from conformance._strategies import Strategies
>>> S = Strategies(xp)
>>> strategy = S.floats(S.shapes(min_dims=1), -1.0, 1.0)
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.array_api import make_strategies_namespace

from portagrad.xp import to_numpy

__all__ = ["Strategies", "SEEDS"]

# A draw of a NumPy seed: how records that only have ``sample(rng)`` run under hypothesis.
SEEDS = st.integers(0, 2**32 - 1)

_NAMESPACES: dict[int, Any] = {}


def _xps(xp: Any) -> Any:
    key = id(xp)
    if key not in _NAMESPACES:
        with warnings.catch_warnings():
            # hypothesis warns about namespaces that are not fully compliant (torch).
            warnings.simplefilter("ignore")
            _NAMESPACES[key] = make_strategies_namespace(xp)
    return _NAMESPACES[key]


def _as_strategy(value: Any) -> st.SearchStrategy:
    return value if isinstance(value, st.SearchStrategy) else st.just(value)


class Strategies:
    """Strategies for shapes, axes, indices, floats and matrices in one namespace.

    Parameters
    ----------
    xp
        The Array API namespace under test; its ``make_strategies_namespace`` draws shapes,
        broadcastable shapes, basic indices and arrays.
    """

    def __init__(self, xp: Any) -> None:
        self.xp = xp
        self.xps = _xps(xp)

    # -- shapes ---------------------------------------------------------------------------
    def shapes(self, min_dims: int = 0, max_dims: int = 3, min_side: int = 1,
               max_side: int = 3) -> st.SearchStrategy[tuple[int, ...]]:
        """Array shapes; ``min_dims=0`` includes 0-d, ``min_side=0`` includes size 0."""
        return self.xps.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                                     max_side=max_side)

    def broadcastable_shapes(self, num_shapes: int = 2, min_dims: int = 0, max_dims: int = 3,
                             min_side: int = 1, max_side: int = 3
                             ) -> st.SearchStrategy[tuple[tuple[int, ...], ...]]:
        """``num_shapes`` mutually broadcastable shapes."""
        return self.xps.mutually_broadcastable_shapes(
            num_shapes, min_dims=min_dims, max_dims=max_dims, min_side=min_side,
            max_side=max_side).map(lambda b: tuple(b.input_shapes))

    def axes(self, ndim: int, *, allow_none: bool = True, allow_tuple: bool = True
             ) -> st.SearchStrategy[Any]:
        """An ``axis`` argument for an array of ``ndim`` dimensions: None, an int (possibly
        negative) or a tuple of distinct axes."""
        options = []
        if allow_none:
            options.append(st.none())
        if ndim > 0:
            options.append(st.integers(-ndim, ndim - 1))
        if allow_tuple:
            options.append(self.xps.valid_tuple_axes(ndim))
        return st.one_of(*options)

    def keepdims(self) -> st.SearchStrategy[bool]:
        return st.booleans()

    # -- indices --------------------------------------------------------------------------
    def basic_indices(self, shape: tuple[int, ...], allow_newaxis: bool = True
                      ) -> st.SearchStrategy[Any]:
        """Index expressions of the standard (ints, slices, ellipsis, None) for ``shape``."""
        return self.xps.indices(shape, allow_newaxis=allow_newaxis, allow_ellipsis=True)

    def integer_indices(self, size: int, min_len: int = 0, max_len: int = 5
                        ) -> st.SearchStrategy[np.ndarray]:
        """A 1-d int64 array of (possibly repeated) positions into an axis of ``size``."""
        if size == 0:
            return st.just(np.zeros(0, dtype=np.int64))
        return st.lists(st.integers(0, size - 1), min_size=min_len, max_size=max_len).map(
            lambda v: np.asarray(v, dtype=np.int64))

    def indices(self, shape: tuple[int, ...]) -> st.SearchStrategy[Any]:
        """Basic indices, an integer array on the first axis, or a boolean mask of the
        leading axis (the advanced forms the standard allows)."""
        options = [self.basic_indices(shape)]
        if shape and shape[0] > 0:
            options.append(self.integer_indices(shape[0], 1).map(lambda a: (a,)))
            options.append(st.lists(st.booleans(), min_size=shape[0], max_size=shape[0]).map(
                lambda m: (np.asarray(m, dtype=bool),)))
        return st.one_of(*options)

    # -- values ---------------------------------------------------------------------------
    def floats(self, shape: Any, lo: float = -2.0, hi: float = 2.0, *, away: bool = False,
               distinct: bool = False) -> st.SearchStrategy[np.ndarray]:
        """Host float64 arrays of ``shape`` (a tuple or a strategy of them).

        Values lie in ``[lo, hi]``; with ``away`` their magnitudes do, with random signs
        (away from a kink or pole at 0); with ``distinct`` they are at least 0.1 apart
        (no ties for max, sort, maximum), spread over ``[lo, hi]`` as far as they fit.
        """
        shapes = _as_strategy(shape)
        if distinct:
            return shapes.flatmap(lambda s: self._distinct(s, lo, hi))
        elements = st.floats(lo, hi, allow_nan=False, allow_infinity=False,
                             allow_subnormal=False)
        if away:
            elements = st.one_of(elements, st.floats(-hi, -lo, allow_subnormal=False))
        dtype = self.xp.float64 if hasattr(self.xp, "float64") else self.xp.float32
        return shapes.flatmap(lambda s: self.xps.arrays(dtype, s, elements=elements)).map(
            lambda a: np.asarray(to_numpy(a), dtype=np.float64))

    def booleans(self, shape: Any) -> st.SearchStrategy[np.ndarray]:
        """Host boolean arrays of ``shape`` (a tuple or a strategy of them)."""
        return _as_strategy(shape).flatmap(
            lambda s: self.xps.arrays(self.xp.bool, s)).map(
            lambda a: np.asarray(to_numpy(a), dtype=bool))

    def _distinct(self, shape: tuple[int, ...], lo: float, hi: float
                  ) -> st.SearchStrategy[np.ndarray]:
        n = math.prod(shape)
        step = max(0.1, (hi - lo) / max(n, 1))

        def build(perm: list[int]) -> np.ndarray:
            return (lo + step * np.asarray(perm, dtype=np.float64)).reshape(shape)

        return st.permutations(list(range(n))).map(build)

    def matrices(self, kind: str = "general", batch: tuple[int, ...] | None = None,
                 min_n: int = 1, max_n: int = 3, m: int | None = None
                 ) -> st.SearchStrategy[np.ndarray]:
        """Host float64 matrices (with optional leading batch dimensions).

        ``kind``: ``"general"`` (entries in [-1, 1], ``m`` columns or square),
        ``"spd"`` (symmetric positive definite, eigenvalues >= 0.5),
        ``"well_conditioned"`` (identity plus a perturbation of norm < 0.5, invertible),
        ``"symmetric"`` (distinct well-separated eigenvalues).
        """
        batches = st.just(batch) if batch is not None else self.shapes(0, 1, 1, 2)

        def build(args: tuple) -> st.SearchStrategy[np.ndarray]:
            b, n = args
            cols = n if m is None else m
            base = self.floats(st.just((*b, n, cols)), -1.0, 1.0)
            if kind == "general":
                return base
            if kind == "spd":
                return base.map(lambda a: a @ np.swapaxes(a, -1, -2) / n + 0.5 * np.eye(n))
            if kind == "well_conditioned":
                return base.map(lambda a: np.eye(n) + 0.45 * a / n)
            if kind == "symmetric":
                def sym(a: np.ndarray) -> np.ndarray:
                    q, _ = np.linalg.qr(a + 2 * np.eye(n))
                    lam = np.arange(1, n + 1, dtype=np.float64)
                    return (q * lam[..., None, :]) @ np.swapaxes(q, -1, -2)
                return base.map(sym)
            raise ValueError(f"matrices(kind): expected general, spd, well_conditioned or "
                             f"symmetric, got {kind!r}")

        return st.tuples(batches, st.integers(min_n, max_n)).flatmap(build)

    def seeded(self, sample: Any) -> st.SearchStrategy[tuple]:
        """Arguments of a record's ``sample(rng)``, drawn from a hypothesis seed."""
        return SEEDS.map(lambda s: tuple(sample(np.random.default_rng(s))))
