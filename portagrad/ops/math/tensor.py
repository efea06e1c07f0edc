"""More of Chainer's functions under Chainer's names: ``einsum``, ``scatter_add``,
``forget`` (recompute in backward), ``shift`` and the spatial transformer's grid and
sampler.

``scatter_add`` places ``b`` by the gradient of indexing (repeated indices add up);
``forget`` is a primitive whose backward runs the function again with recording on, so
its derivatives of every order are the function's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._errors import ShapeError
from ...tape import primitive
from ...tape._variable import Variable
from .._core import float_only, var, wrap
from ..std.elementwise import clip
from ..std.indexing import getitem, take_along_axis
from ..std.linalg.products import matmul
from ..std.reduction import sum as _sum
from ..std.shape import concat, expand_dims, permute_dims, reshape

__all__ = ["einsum", "scatter_add", "forget", "shift", "spatial_transformer_grid",
           "spatial_transformer_sampler"]


# -- einsum ---------------------------------------------------------------------------------
def _parse(subscripts: str, ndims: list[int]) -> tuple[list[str], str]:
    spec = subscripts.replace(" ", "")
    ins, arrow, out = spec.partition("->")
    terms = ins.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"einsum(subscripts): expected {len(ndims)} operand terms, got "
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
            raise ValueError(f"einsum(subscripts): term {t!r} does not match an operand of "
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
    from .. import linalg
    from ..std.shape import moveaxis

    while len(set(term)) < len(term):
        c = next(ch for ch in term if term.count(ch) > 1)
        a = term.index(c)
        b = term.index(c, a + 1)
        v = linalg.diagonal(moveaxis(v, (a, b), (-2, -1)))
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
        raise TypeError("einsum(operands): expected a subscripts string and arrays, got "
                        f"{type(operands[0]).__name__ if operands else 'nothing'}")
    vs = [var(x, "einsum", f"operands[{i + 1}]") for i, x in enumerate(operands[1:])]
    if not vs:
        raise TypeError("einsum(operands): expected at least one array")
    terms, out = _parse(operands[0], [v.array.ndim for v in vs])
    sizes: dict[str, int] = {}
    for v, t in zip(vs, terms):
        for c, n in zip(t, v.array.shape):
            if sizes.setdefault(c, n) != n:
                raise ShapeError(f"einsum(operands): expected letter {c!r} to have one size, "
                                 f"got {sizes[c]} and {n}")
    if any(c not in sizes for c in out):
        raise ValueError(f"einsum(subscripts): output letters {out!r} must appear in the "
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


# -- forget ---------------------------------------------------------------------------------
_FORGET: dict[int, Any] = {}


def _forget_primitive(nout: int) -> Any:
    prim = _FORGET.get(nout)
    if prim is not None:
        return prim

    @primitive(f"forget{nout}", saves="inputs", nout=nout)
    def _forget(xp: Any, *arrays: Any, func: Callable[..., Any], ready: tuple) -> Any:
        # ``ready`` holds the outputs forget computed without recording: no second run.
        return ready if nout > 1 else ready[0]

    @_forget.defvjp
    def _(ctx: Any, gy: Any) -> tuple:
        from ...tape import enable_grad, grad

        gys = gy if nout > 1 else (gy,)  # one gradient per output (None where unused)

        inputs = list(ctx.inputs)
        wanted = [i for i, e in enumerate(ctx.edges) if e is not None]
        with enable_grad():
            ys = ctx.params["func"](*inputs)
            ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
            pairs = [(y, g) for y, g in zip(ys, gys) if g is not None and y.requires_grad]
            gs = grad([y for y, _ in pairs], [inputs[i] for i in wanted],
                      [g for _, g in pairs], create_graph=True,
                      allow_unused=True) if pairs else [None] * len(wanted)
        out: list[Any] = [None] * len(inputs)
        for i, g in zip(wanted, gs):
            out[i] = g
        return tuple(out)

    _FORGET[nout] = _forget
    return _forget


def forget(func: Callable[..., Any], *xs: Any) -> Any:
    """``func(*xs)`` without keeping its intermediate results: backward runs ``func``
    again. ``func`` takes and returns Variables (one or a tuple).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = pg.Variable(np.array([1.0, 2.0]), requires_grad=True)
    >>> y = pg.ops.forget(lambda v: pg.ops.exp(v) * v, x)
    >>> pg.ops.sum(y).backward()
    >>> np.allclose(x.grad, np.exp([1.0, 2.0]) * [2.0, 3.0])
    True
    """
    vs = [var(x, "forget", f"xs[{i}]") for i, x in enumerate(xs)]
    if not vs:
        raise TypeError("forget(xs): expected at least one array")
    from ...tape import no_grad

    with no_grad():
        ys = func(*[wrap(v.array, v.xp) for v in vs])
    outs = tuple(ys) if isinstance(ys, (tuple, list)) else (ys,)
    if not all(isinstance(y, Variable) for y in outs):
        raise TypeError(f"forget(func): expected func to return Variables, got "
                        f"{[type(y).__name__ for y in outs]}")
    return _forget_primitive(len(outs))(*vs, func=func, ready=tuple(y.array for y in outs))


# -- shift ----------------------------------------------------------------------------------
def shift(x: Any, ksize: int | tuple[int, int] = 3, dilate: int | tuple[int, int] = 1
          ) -> Variable:
    """Shift channel groups of ``x`` ``(N, C, H, W)`` spatially: ``C`` splits into
    ``kh kw`` groups, each moved by its own offset in the ``ksize`` window (times
    ``dilate``), zero-filled; the centre group stays and comes last, as Chainer orders it.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.shift(np.ones((1, 9, 3, 3)))[0, 0].array
    array([[1., 1., 0.],
           [1., 1., 0.],
           [0., 0., 0.]])
    """
    from ..array.indexing import pad

    op = "shift"
    xv = var(x, op)
    float_only(xv, op)
    if xv.array.ndim != 4:
        raise ShapeError(f"{op}(x): expected (N, C, H, W), got shape {tuple(xv.array.shape)}")
    kh, kw = (ksize, ksize) if isinstance(ksize, int) else tuple(ksize)
    dy, dx = (dilate, dilate) if isinstance(dilate, int) else tuple(dilate)
    n, c, h, w = xv.array.shape
    groups = kh * kw
    if c < groups:
        raise ShapeError(f"{op}(x): expected at least kh * kw = {groups} channels, got {c}")
    py, px = kh // 2 * abs(dy), kw // 2 * abs(dx)
    xpad = pad(xv, ((0, 0), (0, 0), (py, py), (px, px)), "constant")
    size = c // groups
    parts = []
    for i in range(groups):
        g = i
        if g == (groups - 1) // 2:
            g = groups - 1
        elif g == groups - 1:
            g = (groups - 1) // 2
        ky = g // kw - (py // abs(dy) if dy else 0)
        kx = g % kw - (px // abs(dx) if dx else 0)
        hs, ws = py - ky * dy, px - kx * dx
        ce = (i + 1) * size if i < groups - 1 else c
        parts.append(xpad[:, i * size:ce, hs:hs + h, ws:ws + w])
    return concat(parts, axis=1)


# -- spatial transformer --------------------------------------------------------------------
def spatial_transformer_grid(theta: Any, output_shape: tuple[int, int]) -> Variable:
    """Sampling grid ``(B, 2, H, W)`` of affine maps ``theta`` ``(B, 2, 3)``: each output
    position's ``(x, y)`` in [-1, 1] coordinates mapped by ``theta``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> theta = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> pg.ops.spatial_transformer_grid(theta, (2, 3))[0, 0].array
    array([[-1.,  0.,  1.],
           [-1.,  0.,  1.]])
    """
    op = "spatial_transformer_grid"
    tv = var(theta, op, "theta")
    float_only(tv, op, "theta")
    if tv.array.ndim != 3 or tuple(tv.array.shape[1:]) != (2, 3):
        raise ShapeError(f"{op}(theta): expected shape (B, 2, 3), got "
                         f"{tuple(tv.array.shape)}")
    h, w = output_shape
    xp = tv.xp
    dt, dev = tv.array.dtype, tv.array.device
    ys = xp.linspace(-1.0, 1.0, h, dtype=dt, device=dev) if h > 1 else xp.asarray(
        [-1.0], dtype=dt, device=dev)
    xs = xp.linspace(-1.0, 1.0, w, dtype=dt, device=dev) if w > 1 else xp.asarray(
        [-1.0], dtype=dt, device=dev)
    gy, gx = xp.meshgrid(ys, xs, indexing="ij")
    coords = xp.stack([xp.reshape(gx, (-1,)), xp.reshape(gy, (-1,)),
                       xp.ones((h * w,), dtype=dt, device=dev)])
    grid = matmul(tv, wrap(coords, xp))
    return reshape(grid, (tv.array.shape[0], 2, h, w))


def spatial_transformer_sampler(x: Any, grid: Any) -> Variable:
    """Bilinear samples of ``x`` ``(B, C, H, W)`` at ``grid`` ``(B, 2, h, w)`` (``x`` then
    ``y`` in [-1, 1]); outside the image counts as zero. Differentiable in both.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.arange(4.0).reshape(1, 1, 2, 2)
    >>> grid = np.array([[[[0.0]], [[0.0]]]])
    >>> pg.ops.spatial_transformer_sampler(x, grid).array
    array([[[[1.5]]]])
    """
    from ..array.indexing import pad
    from ..std.nondiff import floor

    op = "spatial_transformer_sampler"
    xv = var(x, op)
    gv = var(grid, op, "grid")
    float_only(xv, op)
    if xv.array.ndim != 4 or gv.array.ndim != 4 or gv.array.shape[1] != 2 or (
            gv.array.shape[0] != xv.array.shape[0]):
        raise ShapeError(f"{op}(grid): expected x (B, C, H, W) and grid (B, 2, h, w), got "
                         f"{tuple(xv.array.shape)} and {tuple(gv.array.shape)}")
    xp = xv.xp
    b, c, h, w = xv.array.shape
    oh, ow = gv.array.shape[2:]
    g = reshape(gv, (b, 2, oh * ow))
    u = clip((getitem(g, (slice(None), 0)) + 1.0) * ((w - 1) / 2) + 1.0, 0.0, float(w + 1))
    v = clip((getitem(g, (slice(None), 1)) + 1.0) * ((h - 1) / 2) + 1.0, 0.0, float(h + 1))
    u0 = xp.clip(floor(u).array, 0.0, float(w))
    v0 = xp.clip(floor(v).array, 0.0, float(h))
    flat = reshape(pad(xv, ((0, 0), (0, 0), (1, 1), (1, 1)), "constant"), (b, c, -1))
    out = None
    for dv in (0, 1):
        for du in (0, 1):
            idx = xp.astype((v0 + dv) * (w + 2) + (u0 + du), xp.int64)
            idx = xp.broadcast_to(xp.reshape(idx, (b, 1, -1)), (b, c, oh * ow))
            wu = (u - wrap(u0, xp)) if du else (wrap(u0 + 1.0, xp) - u)
            wv = (v - wrap(v0, xp)) if dv else (wrap(v0 + 1.0, xp) - v)
            term = take_along_axis(flat, idx, axis=2) * expand_dims(wu * wv, axis=1)
            out = term if out is None else out + term
    return reshape(out, (b, c, oh, ow))
