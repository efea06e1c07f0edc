"""Forward-mode differentiation: tangents carried by Variables through every op.

Inside :func:`dual_level`, a Variable can carry a tangent (:func:`make_dual`); each
primitive applied to such Variables gives its outputs the tangent ``J t`` of their
inputs' tangents, computed with portagrad ops (so tangents can be differentiated again,
in either mode). Levels nest: a tangent computed at one level carries the tangents of the
levels outside it, which gives forward-over-forward derivatives, and a backward pass run
inside a level carries tangents too, which gives forward-over-reverse ones (the tangent
of a gradient is a Hessian-vector product).

A primitive's tangent rule is, in order of preference:

* its own ``jvp`` (``Primitive.defjvp``), for the products and the fused kernels;
* for a primitive declared ``linear`` in some arguments (reshape, sum, indexing, FFTs,
  ...): the primitive itself applied to the tangents;
* for a real elementwise primitive: its vjp applied to the tangent, one input at a time
  (an elementwise Jacobian is diagonal, so it is its own transpose);
* otherwise the double-vjp identity on that one primitive: ``J t = d/du <J^T u, t>``,
  its vjp recorded and differentiated once more. Every primitive has a vjp, so every
  primitive has a tangent.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from .._errors import DTypeError, GradientError, ShapeError, describe
from ..xp._dtypes import is_inexact
from ..xp._namespace import is_array, namespace_of
from ._mode import set_levels, state
from ._variable import Variable, _Fresh, _leaf, _new, _snapshot

__all__ = ["dual_level", "make_dual", "unpack_dual", "UnpackedDualTensor", "enter_dual_level",
           "exit_dual_level"]

_levels = itertools.count(1)


class UnpackedDualTensor(NamedTuple):
    """What :func:`unpack_dual` returns: the primal and its tangent (or ``None``)."""

    primal: Any
    tangent: Any


def enter_dual_level() -> int:
    """Open a new (innermost) forward level and return its id; prefer :func:`dual_level`."""
    level = next(_levels)
    set_levels((*state.fwd, level))
    return level


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the innermost forward level (``level``, when given, must be it)."""
    levels = state.fwd
    if not levels:
        raise GradientError("exit_dual_level: expected an open dual level, got none")
    if level is not None and level != levels[-1]:
        raise GradientError(f"exit_dual_level(level): expected the innermost level "
                            f"{levels[-1]}, got {level}")
    set_levels(levels[:-1])


@contextmanager
def dual_level() -> Iterator[int]:
    """A block in which Variables may carry tangents (forward-mode differentiation).

    Tangents made inside the block belong to it: :func:`unpack_dual` finds them there
    and nowhere else. Blocks nest; each level differentiates what the levels inside it
    compute.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> fwAD = pg.autograd.forward_ad
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    ...     y = pg.ops.sin(x) * x
    ...     fwAD.unpack_dual(y).tangent.array  # d/dx (x sin x) = sin x + x cos x
    array([1.38177329, 0.        ])
    """
    level = enter_dual_level()
    try:
        yield level
    finally:
        # Tolerates a block that closed inner levels out of order on an exception.
        set_levels(tuple(lv for lv in state.fwd if lv < level))


def _current_level(level: int | None, op: str) -> int:
    levels = state.fwd
    if level is None:
        if not levels:
            raise GradientError(f"{op}: expected to be called inside a dual_level() block, "
                                f"got no open level")
        return levels[-1]
    if level not in levels:
        raise GradientError(f"{op}(level): expected an open dual level {list(levels)}, got "
                            f"{level!r}")
    return level


def tangents_of(v: Any) -> dict | None:
    """The tangents a Variable carries, by level (``None`` when it carries none)."""
    return getattr(v, "_tangents", None)


def set_tangent(v: Variable, level: int, t: Variable) -> None:
    d = getattr(v, "_tangents", None)
    v._tangents = {level: t} if d is None else {**d, level: t}


def make_dual(tensor: Any, tangent: Any, *, level: int | None = None) -> Variable:
    """``tensor`` carrying ``tangent`` (the direction of differentiation) at a level.

    Parameters
    ----------
    tensor
        An array or a Variable; a Variable stays connected to its graph (gradients flow
        through the result to it).
    tangent
        An array or Variable of the same shape, dtype, library and device.
    level
        The dual level; the innermost open one by default.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> fwAD = pg.autograd.forward_ad
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(np.array(3.0), np.array(1.0))
    ...     float(fwAD.unpack_dual(x ** 2).tangent.array)
    6.0
    """
    lv = _current_level(level, "make_dual")
    if isinstance(tensor, Variable):
        from ._shapes import alias

        primal = alias(tensor) if tensor.requires_grad else _leaf(tensor.array, tensor.xp)
        if tangents_of(tensor):
            primal._tangents = dict(tensor._tangents)
    elif is_array(tensor):
        primal = _leaf(tensor, namespace_of(tensor))
    else:
        raise TypeError(f"make_dual(tensor): expected an array or a Variable, got "
                        f"{describe(tensor)}")
    # A constant tangent is kept as it is now: assigning into the caller's Variable later
    # leaves this dual (and the ops it records) alone.
    t = (tangent if tangent.requires_grad else _snapshot(tangent)) if isinstance(
        tangent, Variable) else (_leaf(tangent, namespace_of(tangent)) if is_array(
            tangent) else None)
    if t is None:
        raise TypeError(f"make_dual(tangent): expected an array or a Variable, got "
                        f"{describe(tangent)}")
    check_tangent(primal, t, "make_dual")
    set_tangent(primal, lv, t)
    return primal


def check_tangent(primal: Variable, t: Variable, op: str) -> None:
    from ..xp import check_same_device, check_same_namespace

    xp = primal.xp
    if not xp.isdtype(primal.dtype, ("real floating", "complex floating")):
        raise DTypeError(f"{op}(tensor): expected a floating-point array, got dtype "
                         f"{primal.dtype}")
    check_same_namespace(op, ("tensor", "tangent"), [xp, t.xp])
    check_same_device(op, ("tensor", "tangent"), [primal.array, t.array], xp)
    if tuple(t.shape) != tuple(primal.shape):
        raise ShapeError(f"{op}(tangent): expected shape {tuple(primal.shape)} (the "
                         f"primal's), got {tuple(t.shape)}")
    if t.dtype != primal.dtype:
        raise DTypeError(f"{op}(tangent): expected dtype {primal.dtype} (the primal's), got "
                         f"{t.dtype}")


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """The primal (a Variable without the level's tangent) and the tangent (or ``None``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> fwAD = pg.autograd.forward_ad
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(np.array([2.0]), np.array([1.0]))
    ...     p, t = fwAD.unpack_dual(pg.ops.exp(x))
    >>> t is not None and bool(abs(t.array[0] - p.array[0]) < 1e-12)
    True
    """
    if not isinstance(tensor, Variable):
        return UnpackedDualTensor(tensor, None)
    levels = state.fwd
    if level is None and not levels:
        return UnpackedDualTensor(tensor, None)
    lv = _current_level(level, "unpack_dual")
    d = tangents_of(tensor)
    t = d.get(lv) if d else None
    if t is None:
        return UnpackedDualTensor(tensor, None)
    primal = tensor.detach() if not tensor.requires_grad else _view(tensor)
    rest = {k: v for k, v in d.items() if k != lv}  # type: ignore[union-attr]
    if rest:
        primal._tangents = rest
    # The caller may assign into what it gets; the dual keeps its own.
    return UnpackedDualTensor(primal, t if t.requires_grad else _snapshot(t))


def _view(v: Variable) -> Variable:
    from ._shapes import alias

    with _without_levels():
        return alias(v)


@contextmanager
def _without_levels() -> Iterator[None]:
    saved = state.fwd
    set_levels(())
    try:
        yield
    finally:
        set_levels(saved)


# -- propagation ----------------------------------------------------------------------------
def propagate(prim: Any, args: tuple, params: dict, out: Any, node: Any) -> None:
    """Give the outputs of one application of ``prim`` the tangents of its inputs.

    Called by the tape for every primitive while a level is open; ``out`` is the output
    Variable (a tuple of them for several outputs), ``node`` the recorded node or ``None``.
    """
    carried = [getattr(a, "_tangents", None) if isinstance(a, Variable) else None
               for a in args]
    if not any(carried):
        return
    levels = state.fwd
    outs = out if prim.nout > 1 else (out,)
    new: list[dict | None] = [None] * len(outs)
    for k, lv in enumerate(levels):
        tans = tuple(d.get(lv) if d else None for d in carried)
        if all(t is None for t in tans):
            continue
        # The rule runs with this level and the ones inside it closed: it differentiates
        # only what the outer levels ask for.
        set_levels(levels[:k])
        try:
            res = _tangent(prim, args, params, outs, tans)
        finally:
            set_levels(levels)
        if prim.nout == 1:
            res = (res,)
        for j, (o, t) in enumerate(zip(outs, res)):
            if t is None or not _is_float(o):
                continue
            if not isinstance(t, Variable):
                t = _leaf(t, o.xp)
            if tuple(t.shape) != tuple(o.shape):
                from ._shapes import broadcast_to

                t = broadcast_to(t, shape=tuple(o.shape))
            if new[j] is None:
                base = getattr(o, "_tangents", None)
                new[j] = dict(base) if base else {}
            new[j][lv] = t  # type: ignore[index]
    for o, d in zip(outs, new):
        if d:
            o._tangents = d
    if node is not None and prim.save_out:
        node.out_tangents = tuple(new)


def _is_float(o: Variable) -> bool:
    return is_inexact(o.xp, o.array.dtype)


def _ctx(prim: Any, args: tuple, params: dict, outs: tuple, needs: tuple) -> Any:
    from ._node import Node, _init_node

    arrays = [a.array if isinstance(a, Variable) else None for a in args]
    xp = next(a.xp for a in args if isinstance(a, Variable))
    edges = tuple(True if n else None for n in needs)
    shapes = tuple(None if a is None else a.shape for a in arrays)
    node = _init_node(_new(Node), prim, edges, 0, params, shapes, xp)
    node.saved_inputs = args
    node.saved_outputs = tuple(o.array for o in outs)
    node.out_refs = [weakref.ref(o) for o in outs]
    if prim.nout > 1:
        node.out_meta = tuple((o.shape, o.dtype, o.device) for o in outs)
    return node


def _tangent(prim: Any, args: tuple, params: dict, outs: tuple, tans: tuple) -> Any:
    rule = prim.jvp
    if rule is not None:
        return rule(_ctx(prim, args, params, outs, tuple(t is not None for t in tans)), *tans)
    if prim.linear is not None:
        return _linear_rule(prim, args, params, tans)
    if prim.vjp is None:
        raise GradientError(f"{prim.name}: no jvp or vjp is defined for this primitive, so "
                            f"forward mode has no tangent for it")
    if prim.elementwise and prim.nout == 1 and _all_real(args, outs):
        res = _diagonal_rule(prim, args, params, outs, tans)
        if res is not NotImplemented:
            return res
    return _double_vjp(prim, args, params, outs, tans)


def _all_real(args: tuple, outs: tuple) -> bool:
    for v in (*args, *outs):
        if isinstance(v, Variable) and v.xp.isdtype(v.array.dtype, "complex floating"):
            return False
    return True


def _linear_rule(prim: Any, args: tuple, params: dict, tans: tuple) -> Any:
    """``prim`` is linear in the arguments at ``prim.linear`` jointly, and its derivative
    in the others is zero: its tangent is ``prim`` applied to the tangents."""
    lin = [i for i in range(len(args)) if i in prim.linear]
    if all(tans[i] is None for i in lin):
        return None if prim.nout == 1 else (None,) * prim.nout
    new = list(args)
    for i in lin:
        t = tans[i]
        if t is None:
            a = args[i]
            if not isinstance(a, Variable):
                continue
            t = _leaf(a.xp.zeros_like(a.array), a.xp)
        new[i] = t
    return prim(*new, **params)


def _diagonal_rule(prim: Any, args: tuple, params: dict, outs: tuple, tans: tuple) -> Any:
    """A real elementwise Jacobian is diagonal, hence its own transpose: the vjp of the
    tangent (broadcast to the output), one input at a time, is the tangent."""
    from ._shapes import broadcast_to

    (out,) = outs
    shape = tuple(out.shape)
    total = None
    for i, t in enumerate(tans):
        if t is None:
            continue
        needs = tuple(j == i for j in range(len(args)))
        if tuple(t.shape) != shape:
            t = broadcast_to(t, shape=shape)
        gs = prim.vjp(_ctx(prim, args, params, outs, needs), t)
        if type(gs) is not tuple and type(gs) is not list:
            gs = (gs,)
        g = gs[i]
        if g is None:
            continue
        if type(g) is _Fresh:
            g.__class__ = Variable  # it becomes a tangent: nothing may sum into it in place
        if tuple(g.shape) != shape:
            return NotImplemented
        total = g if total is None else total + g
    return total


def _double_vjp(prim: Any, args: tuple, params: dict, outs: tuple, tans: tuple) -> Any:
    """``J t = d/du <J^T u, t>``: the primitive's vjp at a zero cotangent ``u``, recorded,
    then differentiated in ``u`` (exact, since ``J^T u`` is linear in ``u``)."""
    from ._engine import grad
    from ._mode import set_grad_enabled
    from ._shapes import inner

    record = state.grad_enabled
    floats = [o for o in outs if _is_float(o)]
    if not floats:
        return None if prim.nout == 1 else (None,) * prim.nout
    with set_grad_enabled(True):
        us = tuple(
            Variable(o.xp.zeros_like(o.array), requires_grad=True) if _is_float(o) else None
            for o in outs)
        ctx = _ctx(prim, args, params, outs, tuple(t is not None for t in tans))
        seed = tuple(
            u if u is not None else _leaf(o.xp.zeros_like(o.array), o.xp)
            for u, o in zip(us, outs))
        gs = prim.vjp(ctx, seed[0] if prim.nout == 1 else seed)
        if type(gs) is not tuple and type(gs) is not list:
            gs = (gs,)
        total = None
        for g, t in zip(gs, tans):
            if g is None or t is None:
                continue
            term = inner(g, t)
            total = term if total is None else total + term
        live = [u for u in us if u is not None]
        if total is None or not total.requires_grad:
            res = [None] * len(live)
        else:
            res = list(grad(total, live, create_graph=record, allow_unused=True))
    it = iter(res)
    out = [None if u is None else next(it) for u in us]
    return out[0] if prim.nout == 1 else tuple(out)
