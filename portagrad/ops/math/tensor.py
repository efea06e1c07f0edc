"""Tensor contractions and scatters: ``einsum`` (by matrix products) and ``scatter_add``.

``scatter_add`` places ``b`` by the gradient of indexing (repeated indices add up), so it
is differentiable in ``a`` and ``b`` to every order.
"""

from __future__ import annotations

from typing import Any

from ..._errors import PortagradTypeError, PortagradValueError, ShapeError
from ...tape._variable import Variable
from .._core import var
from ..nn.spatial import spatial_transformer_sampler as spatial_transformer_sampler
from ..std.indexing import getitem
from ..std.linalg.norms import diagonal
from ..std.linalg.products import matmul
from ..std.permutation import moveaxis, permute_dims
from ..std.reduction import sum as _sum
from ..std.reshaping import reshape

__all__ = ["einsum", "scatter_add"]


# -- einsum ---------------------------------------------------------------------------------
def _parse(subscripts: str, ndims: list[int]) -> tuple[list[str], str]:
    spec = subscripts.replace(" ", "")
    ins, arrow, out = spec.partition("->")
    terms = ins.split(",")
    if len(terms) != len(ndims):
        raise PortagradValueError(f"einsum(subscripts): expected {len(ndims)} operand terms, got "
                                  f"{subscripts!r}")
    used = set(spec)
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
    ell = max((nd - len(t.replace("...", "")) for t, nd in zip(terms, ndims) if "..." in t),
              default=0)
    fill = "".join(spare[:ell])
    out_terms = []
    for t, nd in zip(terms, ndims):
        if "..." in t:
            t = t.replace("...", fill[ell - (nd - len(t.replace("...", ""))):])
        if len(t) != nd or not t.isalpha():
            raise PortagradValueError(
                f"einsum(subscripts): term {t!r} does not match an operand of "
                f"{nd} dimension(s)")
        out_terms.append(t)
    if arrow:
        out = out.replace("...", fill)
    else:
        counts: dict[str, int] = {}
        for t in out_terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = fill + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in fill))
    return out_terms, out


def _diagonals(v: Variable, term: str) -> tuple[Variable, str]:
    """Take the diagonal of each letter repeated within one operand."""
    while len(set(term)) < len(term):
        c = next(ch for ch in term if term.count(ch) > 1)
        a = term.index(c)
        b = term.index(c, a + 1)
        v = diagonal(moveaxis(v, (a, b), (-2, -1)))
        term = "".join(ch for i, ch in enumerate(term) if i not in (a, b)) + c
    return v, term


def _contract(a: Variable, ta: str, b: Variable, tb: str, keep: set[str]
              ) -> tuple[Variable, str]:
    """``a`` times ``b`` summed over the letters they share that ``keep`` lacks."""
    sizes = dict(zip(ta, a.array.shape)) | dict(zip(tb, b.array.shape))
    batch = [c for c in ta if c in tb and c in keep]
    inner = [c for c in ta if c in tb and c not in keep]
    fa = [c for c in ta if c not in tb]
    fb = [c for c in tb if c not in ta]

    def prod(cs: list[str]) -> int:
        n = 1
        for c in cs:
            n *= sizes[c]
        return n

    am = reshape(permute_dims(a, tuple(ta.index(c) for c in batch + fa + inner)),
                 (prod(batch), prod(fa), prod(inner)))
    bm = reshape(permute_dims(b, tuple(tb.index(c) for c in batch + inner + fb)),
                 (prod(batch), prod(inner), prod(fb)))
    y = reshape(matmul(am, bm), tuple(sizes[c] for c in batch + fa + fb))
    return y, "".join(batch + fa + fb)


def einsum(*operands: Any) -> Variable:
    """Einstein summation: ``einsum("ij,jk->ik", a, b)``. Repeated letters in one operand
    take its diagonal, ``...`` stands for leading axes, and an omitted output lists the
    letters used once, sorted. Pairs are contracted by matrix products.

    Parameters
    ----------
    *operands : str, then Variables or arrays
        The subscripts (``"ij,jk->ik"``), then one array per comma-separated term.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> a, b = np.arange(6.0).reshape(2, 3), np.ones((3, 2))
    >>> pg.ops.einsum("ij,jk->ik", a, b).array
    array([[ 3.,  3.],
           [12., 12.]])
    >>> float(pg.ops.einsum("ii", np.eye(3)))
    3.0
    """
    if not operands or not isinstance(operands[0], str):
        raise PortagradTypeError("einsum(operands): expected a subscripts string and arrays, got "
                                 f"{type(operands[0]).__name__ if operands else 'nothing'}")
    vs = [var(x, "einsum", f"operands[{i + 1}]") for i, x in enumerate(operands[1:])]
    if not vs:
        raise PortagradTypeError("einsum(operands): expected at least one array")
    terms, out = _parse(operands[0], [v.array.ndim for v in vs])
    sizes: dict[str, int] = {}
    for v, t in zip(vs, terms):
        for c, n in zip(t, v.array.shape):
            if sizes.setdefault(c, n) != n:
                raise ShapeError(f"einsum(operands): expected letter {c!r} to have one size, "
                                 f"got {sizes[c]} and {n}")
    if any(c not in sizes for c in out):
        raise PortagradValueError(f"einsum(subscripts): output letters {out!r} must appear in the "
                                  f"inputs")
    items = [_diagonals(v, t) for v, t in zip(vs, terms)]
    for i, (v, t) in enumerate(items):  # letters used nowhere else are summed out first
        elsewhere = set(out).union(*(set(tt) for j, (_, tt) in enumerate(items) if j != i))
        drop = [k for k, c in enumerate(t) if c not in elsewhere]
        if drop:
            items[i] = (_sum(v, axis=tuple(drop)), "".join(c for c in t if c not in
                                                              [t[k] for k in drop]))
    y, ty = items[0]
    for k in range(1, len(items)):
        later = set(out).union(*(set(t) for _, t in items[k + 1:]))
        y, ty = _contract(y, ty, items[k][0], items[k][1], later)
    extra = tuple(i for i, c in enumerate(ty) if c not in out)
    if extra:
        y = _sum(y, axis=extra)
        ty = "".join(c for c in ty if c in out)
    return permute_dims(y, tuple(ty.index(c) for c in out)) if ty != out else y


# -- scatter_add ----------------------------------------------------------------------------
def scatter_add(a: Any, slices: Any, b: Any) -> Variable:
    """``a`` with ``b`` added at ``a[slices]`` (a new array; repeated indices add up, as
    ``numpy.add.at``). Differentiable in ``a`` and ``b``.

    Parameters
    ----------
    a : Variable or array
        The array added into.
    slices : key
        Where to add: anything :func:`getitem` takes (integer arrays may repeat).
    b : Variable or array
        The values to add; broadcasts to ``a[slices]``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.scatter_add(np.zeros(3), np.array([0, 0, 2]), np.array([1.0, 2.0, 5.0])).array
    array([3., 0., 5.])
    """
    from ...tape import enable_grad, grad

    av = var(a, "scatter_add", "a")
    bv = var(b, "scatter_add", "b")
    xp = av.xp
    z = Variable(xp.zeros(tuple(av.array.shape), dtype=av.array.dtype, device=av.array.device),
                 requires_grad=True)
    with enable_grad():
        picked = getitem(z, slices)
        if tuple(picked.array.shape) != tuple(bv.array.shape):
            bv = bv + picked.detach() * 0.0  # broadcast b as numpy.add.at would
        (placed,) = grad([_sum(picked * bv)], [z], create_graph=bv.requires_grad)
    return av + placed
