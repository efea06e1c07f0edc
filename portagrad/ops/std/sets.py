"""Set functions (unique_*, isin). No gradient flows through them; the results are
Variables outside any graph, gathered in the standard's named tuples."""

from __future__ import annotations

from typing import Any, NamedTuple

from ...tape._variable import Variable
from .._core import binary, unwrap, var, wrap
from ._axes import _flag

__all__ = ["unique_all", "unique_counts", "unique_inverse", "unique_values", "isin",
           "UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult"]


class UniqueAllResult(NamedTuple):
    values: Variable
    indices: Variable
    inverse_indices: Variable
    counts: Variable


class UniqueCountsResult(NamedTuple):
    values: Variable
    counts: Variable


class UniqueInverseResult(NamedTuple):
    values: Variable
    inverse_indices: Variable


def _call(name: str, x: Any) -> tuple[Variable, Any]:
    v = var(x, name)
    return v, getattr(v.xp, name)(v.array)


def unique_all(x: Any, /) -> UniqueAllResult:
    """Unique values, first-occurrence indices, inverse indices and counts.

    Parameters
    ----------
    x : Variable or array
        The input array. (flattened).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> r = pg.ops.unique_all(np.array([3.0, 1.0, 3.0]))
    >>> r.values.array, r.counts.array
    (array([1., 3.]), array([1, 2]))
    """
    v = var(x, "unique_all")
    xp = v.xp
    try:
        r = xp.unique_all(v.array)
    except NotImplementedError:
        # (torch) From unique_inverse: a stable sort groups each value's positions in
        # order, and each group starts at the running total of the counts before it.
        values, inverse = xp.unique_inverse(v.array)
        counts = xp.unique_counts(v.array)[1]
        flat = xp.reshape(inverse, (-1,))
        starts = xp.cumulative_sum(counts, include_initial=True)[:-1]
        order = xp.argsort(flat, stable=True)
        r = (values, xp.take(order, starts), inverse, counts)
    return UniqueAllResult(*(wrap(a, xp) for a in r))


def unique_counts(x: Any, /) -> UniqueCountsResult:
    """Unique values and how often each occurs.

    Parameters
    ----------
    x : Variable or array
        The input array. (flattened).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.unique_counts(np.array([2, 2, 5])).counts.array
    array([2, 1])
    """
    v, r = _call("unique_counts", x)
    return UniqueCountsResult(*(wrap(a, v.xp) for a in r))


def unique_inverse(x: Any, /) -> UniqueInverseResult:
    """Unique values and, for each element of ``x``, the index of its value among them.

    Parameters
    ----------
    x : Variable or array
        The input array. (flattened).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.unique_inverse(np.array([2, 2, 5])).inverse_indices.array
    array([0, 0, 1])
    """
    v, r = _call("unique_inverse", x)
    return UniqueInverseResult(*(wrap(a, v.xp) for a in r))


def unique_values(x: Any, /) -> Variable:
    """The unique values of ``x``, sorted.

    Parameters
    ----------
    x : Variable or array
        The input array. (flattened).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.unique_values(np.array([2, 2, 5])).array
    array([2, 5])
    """
    v, r = _call("unique_values", x)
    return wrap(r, v.xp)


def isin(x1: Any, x2: Any, /, *, invert: bool = False) -> Variable:
    """Whether each element of ``x1`` occurs in ``x2`` (a 2025.12 addition).

    Parameters
    ----------
    x1 : Variable, array or Python scalar
        The elements to look up.
    x2 : Variable, array or Python scalar
        The elements to look for.
    invert : bool, optional
        Answer whether each element does not occur instead.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.isin(np.array([1, 4]), np.array([4, 5])).array
    array([False,  True])
    """
    a, b = binary("isin", x1, x2)
    invert = _flag(invert, "isin", "invert")
    ref = a if isinstance(a, Variable) else b
    xp = ref.xp
    fn = getattr(xp, "isin", None)
    ra, rb = unwrap(a), unwrap(b)
    if fn is not None:
        return wrap(fn(ra, rb, invert=invert), xp)
    # Namespaces before 2025.12: compare against every element of x2.
    if not hasattr(ra, "shape"):
        ra = xp.asarray(ra, dtype=ref.array.dtype, device=ref.array.device)
    if not hasattr(rb, "shape"):
        rb = xp.asarray(rb, dtype=ref.array.dtype, device=ref.array.device)
    flat = xp.reshape(rb, (-1,))
    hit = xp.any(xp.expand_dims(ra, axis=-1) == flat, axis=-1)
    return wrap(xp.logical_not(hit) if invert else hit, xp)
